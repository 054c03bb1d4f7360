/* Test fixtures on real bodies (tailbone/synth.h, SPEC A10): a tail and/or
 * clothing added in bind space to a rigged, tail-less humanoid, with a truth
 * file saying which vertices are the tail.
 *
 * Everything is measured on the body itself (tb_model): its height H, its
 * up/forward/left axes, its joints' bind positions, the back surface of the
 * pelvis and the thighs' skin radius, so the same fixture lands in the same
 * place on a 1.8 m Xbot in metres, a 0.22-unit Soldier and the synthetic
 * body. Sizes are fractions of H. Parts are built with the synthetic
 * generator's loft (synth_mesh.c) and appended as new skinned mesh nodes;
 * the body's own nodes, meshes and accessors are left as they were, so body
 * vertex indices in tb_model order are the same before and after. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "synth/synth_internal.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"
#include "tailbone/synth.h"

/* ---- the fixture table -------------------------------------------------- */

typedef enum fx_shape { FX_NO_TAIL = 0, FX_HANG, FX_BESIDE, FX_BACK, FX_CURL, FX_UP, FX_BEAD } fx_shape;
typedef enum fx_kind { FX_SHELL = 0, FX_WELDED, FX_FUR, FX_PIECES, FX_LOWPOLY } fx_kind;
typedef enum fx_weights { FX_W_LEG = 0, FX_W_HIPS, FX_W_SPINE, FX_W_NEAREST } fx_weights;

enum {
    FX_COAT = 1u << 0, FX_VEST = 1u << 1, FX_BELT = 1u << 2, FX_PLATE = 1u << 3, FX_SKIRT = 1u << 4,
    FX_CAPE = 1u << 5, FX_SCABBARD = 1u << 6
};
#define FX_PART_KINDS 7
static const char *const fx__part_name[FX_PART_KINDS] = {"coat", "vest", "belt", "plate", "skirt", "cape", "scabbard"};

typedef struct fx_fixture {
    const char *name, *summary;
    fx_shape shape;
    fx_kind kind;
    fx_weights weights;
    unsigned parts;  /* FX_COAT … */
    float length_h;  /* 0: the shape's own length, else the tail's length / H */
    int rigid_body;  /* the synthetic body only: rebuilt of rigid pieces first */
} fx_fixture;

static const fx_fixture fx__fixtures[] = {
    {"hang_shell_leg", "tail hanging behind/between the thighs, just outside their skin (the SPEC fox case); "
     "separate shell; left thigh + shin", FX_HANG, FX_SHELL, FX_W_LEG, 0, 0, 0},
    {"hang_welded_nearest", "hanging tail welded into the back of the pelvis; nearest-bone weights", FX_HANG,
     FX_WELDED, FX_W_NEAREST, 0, 0, 0},
    {"hang_fur_hips", "hanging tail, skin shell + fur shell (not welded); 100% Hips", FX_HANG, FX_FUR, FX_W_HIPS,
     0, 0, 0},
    {"hang_shell_hips+plate", "hanging tail under a pelvis armour plate (100% Hips)", FX_HANG, FX_SHELL, FX_W_HIPS,
     FX_PLATE, 0, 0},
    {"hang_shell_leg+skirt", "hanging tail inside a skirt", FX_HANG, FX_SHELL, FX_W_LEG, FX_SKIRT, 0, 0},
    {"beside_shell_leg", "tail hanging beside the left thigh, just outside its skin; left thigh + shin", FX_BESIDE,
     FX_SHELL, FX_W_LEG, 0, 0, 0},
    {"beside_welded_leg", "beside-the-thigh tail welded into the pelvis; left thigh + shin", FX_BESIDE, FX_WELDED,
     FX_W_LEG, 0, 0, 0},
    {"back_shell_hips", "tail straight back, slightly down; 100% Hips", FX_BACK, FX_SHELL, FX_W_HIPS, 0, 0, 0},
    {"back_pieces_hips", "tail of 6 separate pieces with gaps, straight back; 100% Hips", FX_BACK, FX_PIECES,
     FX_W_HIPS, 0, 0, 0},
    {"back_pieces_hips+coat", "pieces tail through a coat (weights copied from the body)", FX_BACK, FX_PIECES,
     FX_W_HIPS, FX_COAT, 0, 0},
    {"back_shell_nearest+coat", "straight-back tail through a coat", FX_BACK, FX_SHELL, FX_W_NEAREST, FX_COAT, 0, 0},
    {"back_lowpoly_nearest", "low-poly welded tail: 6-sided rings, 2 per 0.1 H", FX_BACK, FX_LOWPOLY, FX_W_NEAREST, 0,
     0.7f, 0},
    {"curl_fur_hips+belt", "tail curling to the left, fur over skin, under a belt; 100% Hips", FX_CURL, FX_FUR,
     FX_W_HIPS, FX_BELT, 0, 0},
    {"curl_shell_nearest", "tail curling to the left; nearest-bone weights", FX_CURL, FX_SHELL, FX_W_NEAREST, 0, 0, 0},
    {"up_shell_spine", "tail curving up over the back; 100% Spine2", FX_UP, FX_SHELL, FX_W_SPINE, 0, 0, 0},
    {"up_welded_hips+vest", "welded tail curving up over the back of a vest; 100% Hips", FX_UP, FX_WELDED, FX_W_HIPS,
     FX_VEST, 0, 0},
    {"bead_shell_spine", "bead-chain tail leaving the spine at the bottom of the rib cage, hanging behind the "
     "pelvis; 100% on its spine bone", FX_BEAD, FX_SHELL, FX_W_SPINE, 0, 0, 0},
    {"bead_pieces_nearest", "bead chain of separate beads from the rib cage; nearest-bone weights", FX_BEAD,
     FX_PIECES, FX_W_NEAREST, 0, 0, 0},
    {"coat_only", "a coat, no tail: nothing to do", FX_NO_TAIL, 0, 0, FX_COAT, 0, 0},
    {"vest+belt", "a vest and a belt, no tail", FX_NO_TAIL, 0, 0, FX_VEST | FX_BELT, 0, 0},
    {"plate_only", "a pelvis armour plate (100% Hips), no tail", FX_NO_TAIL, 0, 0, FX_PLATE, 0, 0},
    {"skirt_only", "a skirt, no tail", FX_NO_TAIL, 0, 0, FX_SKIRT, 0, 0},
    {"cape_only", "a cape from the shoulders, no tail", FX_NO_TAIL, 0, 0, FX_CAPE, 0, 0},
    {"scabbard_only", "a scabbard across the back (carried: rigid on the spine), no tail", FX_NO_TAIL, 0, 0,
     FX_SCABBARD, 0, 0},
    {"rigid_back_pieces_hips", "synthetic body of rigid pieces + a pieces tail (synth bodies only)", FX_BACK,
     FX_PIECES, FX_W_HIPS, 0, 0, 1},
    {"rigid_hang_shell_leg", "synthetic body of rigid pieces + hanging tail (synth bodies only)", FX_HANG, FX_SHELL,
     FX_W_LEG, 0, 0, 1},
    {"rigid_plate_only", "synthetic body of rigid pieces + a plate, no tail (synth bodies only)", FX_NO_TAIL, 0, 0,
     FX_PLATE, 0, 1},
};
#define FX_COUNT ((int)(sizeof fx__fixtures / sizeof fx__fixtures[0]))

static const char *const fx__shape_name[] = {"none", "hang", "beside", "back", "curl", "up", "bead"};
static const char *const fx__kind_name[] = {"shell", "welded", "fur", "pieces", "lowpoly"};
static const char *const fx__weights_name[] = {"leg", "hips", "spine", "nearest"};

int tb_synth_fixture_count(void) { return FX_COUNT; }

const char *tb_synth_fixture_name(int i) { return i >= 0 && i < FX_COUNT ? fx__fixtures[i].name : NULL; }

const char *tb_synth_fixture_summary(int i) { return i >= 0 && i < FX_COUNT ? fx__fixtures[i].summary : NULL; }

int tb_synth_fixture_find(const char *name)
{
    for (int i = 0; name && i < FX_COUNT; i++)
        if (!strcmp(fx__fixtures[i].name, name))
            return i;
    return -1;
}

int tb_synth_fixture_needs_synth_body(int i) { return i >= 0 && i < FX_COUNT && fx__fixtures[i].rigid_body; }

/* ---- small vector helpers ---------------------------------------------- */

static float fx__dot(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static float fx__len(const float a[3]) { return sqrtf(fx__dot(a, a)); }

static void fx__norm(float a[3])
{
    float l = fx__len(a);
    if (l > 0)
        a[0] /= l, a[1] /= l, a[2] /= l;
}

static float fx__dist(const float a[3], const float b[3])
{
    float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return fx__len(d);
}

static void fx__cross(const float a[3], const float b[3], float o[3])
{
    float r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    memcpy(o, r, sizeof r);
}

/* ---- the body: frame, joints, bone segments, a grid of its vertices ----- */

typedef struct fx_body {
    const tb_model *m;
    float H;
    float U[3], F[3], L[3]; /* up, forward, the character's left */
    float O[3];             /* the hips joint */
    int skin_of_skel_n;
    int *skin_of_skel;      /* skel joint → skin joint index, or -1 */
    float jp[TB_ROLE_COUNT][3];
    int jskin[TB_ROLE_COUNT]; /* skin joint index of each role, -1 */
    int nseg;
    float (*sa)[3], (*sb)[3];
    int *sjoint;            /* skin joint index of each segment */
    /* uniform grid over the vertices: cell c holds order[start[c] .. start[c+1]) */
    float gmin[3], cell;
    int gn[3];
    uint32_t *start, *order;
} fx_body;

static void fx__body_free(fx_body *b)
{
    free(b->skin_of_skel);
    free(b->sa);
    free(b->sb);
    free(b->sjoint);
    free(b->start);
    free(b->order);
}

/* world point from body coordinates: l along left, u along up, f along forward, from the hips */
static void fx__at(const fx_body *b, float l, float u, float f, float out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = b->O[k] + l * b->L[k] + u * b->U[k] + f * b->F[k];
}

static void fx__coords(const fx_body *b, const float p[3], float *l, float *u, float *f)
{
    float d[3] = {p[0] - b->O[0], p[1] - b->O[1], p[2] - b->O[2]};
    *l = fx__dot(d, b->L);
    *u = fx__dot(d, b->U);
    *f = fx__dot(d, b->F);
}

static int fx__cell_of(const fx_body *b, const float p[3], int c[3])
{
    for (int k = 0; k < 3; k++) {
        int i = (int)floorf((p[k] - b->gmin[k]) / b->cell);
        c[k] = i < 0 ? 0 : i >= b->gn[k] ? b->gn[k] - 1 : i;
    }
    return (c[2] * b->gn[1] + c[1]) * b->gn[0] + c[0];
}

static int fx__grid(fx_body *b)
{
    const tb_model *m = b->m;
    b->cell = 0.02f * b->H;
    for (int k = 0; k < 3; k++) {
        b->gmin[k] = m->bbox_min[k];
        float ext = m->bbox_max[k] - m->bbox_min[k];
        int n = (int)(ext / b->cell) + 1;
        if (n > 128) /* keep the grid small on odd files: cells grow instead */
            n = 128;
        b->gn[k] = n;
    }
    float need = 0;
    for (int k = 0; k < 3; k++) {
        float c = (m->bbox_max[k] - m->bbox_min[k]) / (float)b->gn[k] * 1.0001f;
        need = c > need ? c : need;
    }
    b->cell = need > b->cell ? need : b->cell;
    size_t cells = (size_t)b->gn[0] * (size_t)b->gn[1] * (size_t)b->gn[2];
    b->start = calloc(cells + 1, sizeof *b->start);
    b->order = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *b->order);
    uint32_t *key = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *key);
    if (!b->start || !b->order || !key) {
        free(key);
        return 0;
    }
    for (size_t v = 0; v < m->vertex_count; v++) {
        int c[3];
        key[v] = (uint32_t)fx__cell_of(b, m->positions + v * 3, c);
        b->start[key[v] + 1]++;
    }
    for (size_t c = 0; c < cells; c++)
        b->start[c + 1] += b->start[c];
    uint32_t *fill = malloc((cells ? cells : 1) * sizeof *fill);
    if (!fill) {
        free(key);
        return 0;
    }
    memcpy(fill, b->start, cells * sizeof *fill);
    for (size_t v = 0; v < m->vertex_count; v++)
        b->order[fill[key[v]]++] = (uint32_t)v;
    free(fill);
    free(key);
    return 1;
}

/* Nearest body vertex to p within rmax (ties: the lower index), or -1. */
static long fx__nearest(const fx_body *b, const float p[3], float rmax)
{
    int lo[3], hi[3];
    float a[3], z[3];
    for (int k = 0; k < 3; k++)
        a[k] = p[k] - rmax, z[k] = p[k] + rmax;
    fx__cell_of(b, a, lo);
    fx__cell_of(b, z, hi);
    long best = -1;
    float bd = rmax * rmax;
    for (int cz = lo[2]; cz <= hi[2]; cz++)
        for (int cy = lo[1]; cy <= hi[1]; cy++)
            for (int cx = lo[0]; cx <= hi[0]; cx++) {
                size_t c = ((size_t)cz * (size_t)b->gn[1] + (size_t)cy) * (size_t)b->gn[0] + (size_t)cx;
                for (uint32_t i = b->start[c]; i < b->start[c + 1]; i++) {
                    uint32_t v = b->order[i];
                    const float *q = b->m->positions + (size_t)v * 3;
                    float d[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
                    float d2 = fx__dot(d, d);
                    if (d2 < bd || (d2 == bd && best >= 0 && (long)v < best)) {
                        bd = d2;
                        best = (long)v;
                    }
                }
            }
    return best;
}

static tb_result fx__body_init(fx_body *b, const tb_model *m, tb_error *err)
{
    memset(b, 0, sizeof *b);
    b->m = m;
    b->H = m->height;
    static const tb_role need[] = {TB_ROLE_HIPS, TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG, TB_ROLE_RIGHT_UPLEG,
                                   TB_ROLE_RIGHT_LEG, TB_ROLE_LEFT_FOOT, TB_ROLE_RIGHT_FOOT};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (m->role_joint[need[i]] < 0)
            return tb__fail(err, TB_ERR_NO_HIPS, NULL, "the body has no %s joint: fixtures need hips and legs",
                            tb_role_name(need[i]));
    if (m->role_joint[TB_ROLE_SPINE] < 0 && m->role_joint[TB_ROLE_SPINE1] < 0 && m->role_joint[TB_ROLE_SPINE2] < 0)
        return tb__fail(err, TB_ERR_NO_HIPS, NULL, "the body has no spine joint: fixtures need one");
    if (m->skin_joint_count > 255)
        return tb__fail(err, TB_ERR_UNSUPPORTED, NULL, "fixtures write 8-bit joints: the skin has %d joints",
                        m->skin_joint_count);
    tb_model_axes(m, b->U, b->F);
    fx__cross(b->U, b->F, b->L);
    fx__norm(b->L);
    int n = m->skel.joint_count;
    b->skin_of_skel_n = n;
    b->skin_of_skel = malloc((size_t)n * sizeof *b->skin_of_skel);
    b->sa = malloc((size_t)TB_ROLE_COUNT * sizeof *b->sa);
    b->sb = malloc((size_t)TB_ROLE_COUNT * sizeof *b->sb);
    b->sjoint = malloc((size_t)TB_ROLE_COUNT * sizeof *b->sjoint);
    if (!b->skin_of_skel || !b->sa || !b->sb || !b->sjoint || !fx__grid(b))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int j = 0; j < n; j++)
        b->skin_of_skel[j] = -1;
    for (int k = 0; k < m->skin_joint_count; k++)
        if (b->skin_of_skel[m->skin_joints[k]] < 0)
            b->skin_of_skel[m->skin_joints[k]] = k;
    {
        /* a fixture dresses and welds onto skinned skin round the hips (a
         * robot whose skin is only its hands is rigid parts, not a body) */
        /* the hips, or a joint above them (a robot's pelvis part may hang
         * from the body bone the hips hang from) */
        size_t on_hips = 0;
        for (int j = m->role_joint[TB_ROLE_HIPS]; j >= 0 && !on_hips; j = m->skel.parents[j]) {
            int hk = b->skin_of_skel[j];
            for (size_t v = 0; hk >= 0 && v < m->vertex_count; v++)
                for (int q = 0; q < m->influences; q++)
                    on_hips += m->joints[v * (size_t)m->influences + (size_t)q] == hk &&
                               m->weights[v * (size_t)m->influences + (size_t)q] > 0;
        }
        if (!on_hips)
            return tb__fail(err, TB_ERR_NO_HIPS, NULL,
                            "no skinned vertex is weighted to the hips (%s): fixtures need a skinned body",
                            m->skel.names[m->role_joint[TB_ROLE_HIPS]]);
    }
    for (int r = 0; r < TB_ROLE_COUNT; r++) {
        int j = m->role_joint[r];
        b->jskin[r] = j >= 0 ? b->skin_of_skel[j] : -1;
        if (j >= 0)
            memcpy(b->jp[r], &m->skel.bind_world[j][12], 3 * sizeof(float));
    }
    memcpy(b->O, b->jp[TB_ROLE_HIPS], sizeof b->O);
    /* bone segments of the roles (SPEC A1): to the child role, else half the incoming bone again */
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        int j = m->role_joint[r];
        if (j < 0 || b->jskin[r] < 0)
            continue;
        int child = -1;
        for (int c = 1; c < TB_ROLE_COUNT && child < 0; c++) {
            int cj = m->role_joint[c];
            if (cj >= 0 && m->skel.parents[cj] == j)
                child = c;
        }
        /* a spine joint's main child is the next spine/neck joint, not a shoulder */
        if (r == TB_ROLE_HIPS || (r >= TB_ROLE_SPINE && r <= TB_ROLE_NECK))
            for (int c = r + 1; c <= TB_ROLE_HEAD; c++)
                if (m->role_joint[c] >= 0) {
                    child = c;
                    break;
                }
        memcpy(b->sa[b->nseg], b->jp[r], sizeof(float) * 3);
        if (child > 0) {
            memcpy(b->sb[b->nseg], b->jp[child], sizeof(float) * 3);
        } else {
            int pj = m->skel.parents[j];
            const float *pp = pj >= 0 ? &m->skel.bind_world[pj][12] : b->jp[r];
            for (int k = 0; k < 3; k++)
                b->sb[b->nseg][k] = b->jp[r][k] + 0.5f * (b->jp[r][k] - pp[k]);
        }
        b->sjoint[b->nseg++] = b->jskin[r];
    }
    return TB_OK;
}

static float fx__seg_dist(const float p[3], const float a[3], const float bb[3], float *t_out)
{
    float ab[3] = {bb[0] - a[0], bb[1] - a[1], bb[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    float l2 = fx__dot(ab, ab), t = l2 > 0 ? fx__dot(ap, ab) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    if (t_out)
        *t_out = t;
    float e[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
    return fx__len(e);
}

/* Distance from p to the nearest role bone segment. */
static float fx__skeleton_distance(const fx_body *b, const float p[3])
{
    float best = INFINITY;
    for (int s = 0; s < b->nseg; s++) {
        float d = fx__seg_dist(p, b->sa[s], b->sb[s], NULL);
        best = d < best ? d : best;
    }
    return best;
}

/* The most backward body point (smallest f) in a box round (l0, u0). */
static float fx__back_f(const fx_body *b, float l0, float u0, float half)
{
    for (int tries = 0; tries < 4; tries++, half *= 2) {
        float best = INFINITY;
        for (size_t v = 0; v < b->m->vertex_count; v++) {
            float l, u, f;
            fx__coords(b, b->m->positions + v * 3, &l, &u, &f);
            if (fabsf(l - l0) < half && fabsf(u - u0) < half && f < best)
                best = f;
        }
        if (best < INFINITY)
            return best;
    }
    return -0.1f * b->H;
}

/* Skin radius of a limb round its bone a→c at parameter t, measured in
 * direction dir (unit, across the bone): the largest distance from the bone
 * axis of the vertices within a thin slice and a narrow cone round dir. */
static float fx__skin_radius(const fx_body *b, const float a[3], const float c[3], float t, const float dir[3])
{
    float ab[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float len = fx__len(ab), best = 0;
    if (len <= 0)
        return 0.04f * b->H;
    for (size_t v = 0; v < b->m->vertex_count; v++) {
        const float *p = b->m->positions + v * 3;
        float ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
        float tv = fx__dot(ap, ab) / (len * len);
        if (fabsf(tv - t) * len > 0.015f * b->H)
            continue;
        float r[3] = {ap[0] - tv * ab[0], ap[1] - tv * ab[1], ap[2] - tv * ab[2]};
        float rl = fx__len(r);
        if (rl > 0.15f * b->H || fx__dot(r, dir) < 0.94f * rl)
            continue;
        best = rl > best ? rl : best;
    }
    return best > 0 ? best : 0.04f * b->H;
}

/* ---- centre lines ------------------------------------------------------ */

#define FX_MAX_CP 64
#define FX_MAX_CL 512

typedef struct fx_line {
    int n;
    float p[FX_MAX_CL][3];
    float s[FX_MAX_CL]; /* arc length from the root */
} fx_line;

/* Smooths control points (Chaikin, ends kept) and resamples them every `step`. */
static void fx__line_build(fx_line *out, const float (*cp)[3], int ncp, float step)
{
    float (*cur)[3] = malloc(sizeof(float[3]) * FX_MAX_CP * 16), (*nxt)[3] = malloc(sizeof(float[3]) * FX_MAX_CP * 16);
    out->n = 0;
    if (!cur || !nxt) {
        free(cur);
        free(nxt);
        return;
    }
    int n = ncp;
    memcpy(cur, cp, sizeof(float[3]) * (size_t)ncp);
    for (int it = 0; it < 3 && n * 2 < FX_MAX_CP * 16; it++) {
        int m = 0;
        memcpy(nxt[m++], cur[0], sizeof(float[3]));
        for (int i = 0; i + 1 < n; i++) {
            float q[3], r[3];
            for (int k = 0; k < 3; k++) {
                q[k] = 0.75f * cur[i][k] + 0.25f * cur[i + 1][k];
                r[k] = 0.25f * cur[i][k] + 0.75f * cur[i + 1][k];
            }
            if (i > 0)
                memcpy(nxt[m++], q, sizeof q);
            if (i + 2 < n)
                memcpy(nxt[m++], r, sizeof r);
        }
        memcpy(nxt[m++], cur[n - 1], sizeof(float[3]));
        float (*t)[3] = cur;
        cur = nxt;
        nxt = t;
        n = m;
    }
    /* resample by arc length */
    double total = 0;
    for (int i = 0; i + 1 < n; i++)
        total += fx__dist(cur[i], cur[i + 1]);
    int count = (int)ceil(total / step) + 1;
    if (count < 2)
        count = 2;
    if (count > FX_MAX_CL)
        count = FX_MAX_CL;
    double seg = total / (count - 1), acc = 0;
    int i = 0;
    for (int k = 0; k < count; k++) {
        double want = seg * k;
        while (i + 1 < n - 1 && acc + fx__dist(cur[i], cur[i + 1]) < want) {
            acc += fx__dist(cur[i], cur[i + 1]);
            i++;
        }
        double l = fx__dist(cur[i], cur[i + 1]);
        double t = l > 0 ? (want - acc) / l : 0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        for (int c = 0; c < 3; c++)
            out->p[k][c] = (float)(cur[i][c] + t * (cur[i + 1][c] - cur[i][c]));
        out->s[k] = (float)want;
    }
    out->n = count;
    free(cur);
    free(nxt);
}

static void fx__tangent(const fx_line *ln, int i, float t[3])
{
    int a = i > 0 ? i - 1 : 0, b = i + 1 < ln->n ? i + 1 : ln->n - 1;
    for (int k = 0; k < 3; k++)
        t[k] = ln->p[b][k] - ln->p[a][k];
    fx__norm(t);
}

/* ---- the build ----------------------------------------------------------- */

typedef struct fx_part {
    const char *name;       /* node and mesh name */
    const char *cls;        /* truth class: tail, coat, … */
    const char *decision;   /* chain, untouched, rigid */
    tbs_mesh mesh[2];       /* one or two primitives (fur) */
    int nmesh;
    size_t weld_ring_n;     /* the first weld_ring_n vertices of mesh[0] are body positions */
    int shells;
    float root[3];
    float length;
    int attach_role;
    int node;               /* node index in the output */
} fx_part;

typedef struct fx_build {
    const fx_fixture *fx;
    fx_body b;
    tbs_rng rng;
    fx_part parts[8];
    int nparts;
    fx_line line;           /* the tail's centre line */
    float tail_r0;
    float near_thigh[2];    /* hang/beside: centre-line distance to the thigh bone, min/max over its length */
    /* the tail's proportions: fixed unless desc->vary, then drawn from the seed (fx__vary) */
    int varied;
    float r_scale;          /* × the root radius (0.022 H) */
    float len_scale;        /* × the shape's length */
    float gap_scale;        /* hang/beside: × the skin gap (0.008 H) */
    float piece_gap;        /* pieces: gap / piece length (0.35) */
    int pieces;             /* pieces: how many (6, beads 8) */
    float fur_scale;        /* fur: the fur shell's width / the skin's (1.35) */
    float skin_gap;         /* smallest (tail surface − thigh skin) gap measured, H units */
} fx_build;

/* top-4 weights of body vertex v, normalised, into a tbs vertex */
static void fx__copy_weights(const fx_body *b, size_t v, uint8_t j[4], float w[4])
{
    const tb_model *m = b->m;
    int inf = m->influences;
    memset(j, 0, 4);
    memset(w, 0, 4 * sizeof(float));
    for (int k = 0; k < inf; k++) {
        float x = m->weights[v * (size_t)inf + (size_t)k];
        uint16_t jj = m->joints[v * (size_t)inf + (size_t)k];
        if (!(x > 0))
            continue;
        int dup = -1;
        for (int q = 0; q < 4; q++)
            if (w[q] > 0 && j[q] == jj)
                dup = q;
        if (dup >= 0) {
            w[dup] += x;
            continue;
        }
        int slot = -1;
        for (int q = 0; q < 4; q++)
            if (slot < 0 || w[q] < w[slot])
                slot = q;
        if (x > w[slot]) {
            w[slot] = x;
            j[slot] = (uint8_t)jj;
        }
    }
    float s = w[0] + w[1] + w[2] + w[3];
    if (s <= 0) {
        j[0] = (uint8_t)b->jskin[TB_ROLE_HIPS];
        w[0] = 1;
        return;
    }
    for (int q = 0; q < 4; q++)
        w[q] /= s;
    for (int q = 0; q < 4; q++)
        if (w[q] == 0)
            j[q] = 0;
}

static void fx__set_weights(tbs_mesh *me, size_t v, const int *joints, const float *w, int n)
{
    float s = 0;
    for (int i = 0; i < n && i < 4; i++)
        s += w[i];
    memset(me->joints + v * 4, 0, 4);
    memset(me->weights + v * 4, 0, 4 * sizeof(float));
    for (int i = 0; i < n && i < 4; i++) {
        me->joints[v * 4 + (size_t)i] = (uint8_t)joints[i];
        me->weights[v * 4 + (size_t)i] = s > 0 ? w[i] / s : (i == 0);
    }
}

/* Nearest-bone weights (auto-rigger): inverse 4th power of the distance to
 * the role bones, 4 largest, below 3% dropped. */
static void fx__weight_nearest(const fx_body *b, tbs_mesh *me, size_t v)
{
    const float *p = me->pos + v * 3;
    int jj[4] = {0, 0, 0, 0};
    float ww[4] = {0, 0, 0, 0};
    for (int s = 0; s < b->nseg; s++) {
        float d = fx__seg_dist(p, b->sa[s], b->sb[s], NULL) + 0.01f * b->H;
        float x = 1.0f / (d * d * d * d);
        int dup = -1;
        for (int q = 0; q < 4; q++)
            if (ww[q] > 0 && jj[q] == b->sjoint[s])
                dup = q;
        if (dup >= 0) {
            ww[dup] = x > ww[dup] ? x : ww[dup];
            continue;
        }
        int slot = 0;
        for (int q = 1; q < 4; q++)
            if (ww[q] < ww[slot])
                slot = q;
        if (x > ww[slot])
            ww[slot] = x, jj[slot] = b->sjoint[s];
    }
    float sum = ww[0] + ww[1] + ww[2] + ww[3];
    int n = 0, oj[4];
    float ow[4];
    for (int q = 0; q < 4; q++)
        if (ww[q] / sum >= 0.03f)
            oj[n] = jj[q], ow[n++] = ww[q];
    fx__set_weights(me, v, oj, ow, n);
}

static int fx__spine_role(const fx_body *b)
{
    static const tb_role order[] = {TB_ROLE_SPINE2, TB_ROLE_SPINE1, TB_ROLE_SPINE};
    for (int i = 0; i < 3; i++)
        if (b->jskin[order[i]] >= 0)
            return order[i];
    return TB_ROLE_HIPS;
}

/* Weights of the tail's vertices [v0, me->n) as riggers give them (SPEC 0). */
static void fx__weigh_tail(const fx_build *bd, tbs_mesh *me, size_t v0, int spine_role)
{
    const fx_body *b = &bd->b;
    const fx_line *ln = &bd->line;
    float L = ln->s[ln->n - 1];
    for (size_t v = v0; v < me->n; v++) {
        switch (bd->fx->weights) {
        case FX_W_HIPS: {
            int j = b->jskin[TB_ROLE_HIPS];
            float w = 1;
            fx__set_weights(me, v, &j, &w, 1);
            break;
        }
        case FX_W_SPINE: {
            int j = b->jskin[spine_role];
            float w = 1;
            fx__set_weights(me, v, &j, &w, 1);
            break;
        }
        case FX_W_NEAREST:
            fx__weight_nearest(b, me, v);
            break;
        case FX_W_LEG: {
            /* arc position from the nearest centre-line sample */
            float best = INFINITY, s = 0;
            for (int i = 0; i < ln->n; i++) {
                float d = fx__dist(me->pos + v * 3, ln->p[i]);
                if (d < best)
                    best = d, s = ln->s[i];
            }
            float x = L > 0 ? s / L : 0;
            int j[3] = {b->jskin[TB_ROLE_LEFT_UPLEG], b->jskin[TB_ROLE_LEFT_LEG], b->jskin[TB_ROLE_RIGHT_UPLEG]};
            float shin = 0.15f + 0.5f * x, right = 0.1f;
            float w[3] = {1 - shin - right, shin, right};
            fx__set_weights(me, v, j, w, 3);
            break;
        }
        }
    }
}

static float fx__tail_radius(const fx_build *bd, float s)
{
    float L = bd->line.s[bd->line.n - 1], x = L > 0 ? s / L : 0;
    float r = bd->tail_r0 * (1.0f - 0.7f * x);
    if (bd->fx->shape == FX_BEAD) /* beads: ~9 bulges along the chain */
        r *= 0.7f + 0.3f * fabsf(cosf((float)TB_PI * 9.0f * x));
    return r;
}

/* The centre line of each shape, in body coordinates, from the body's
 * measured surfaces. Returns the attachment role. */
/* The centre line's points beside the left leg (hang, beside): out of
 * the pelvis, then along the thigh and shin just outside the skin; notes
 * the distances to the thigh bone and the skin gap. Returns the count. */
static int fx__cp_leg(fx_build *bd, float cp[][3], int n, float u_root, float f_back)
{
    fx_body *b = &bd->b;
    const float H = b->H;
    /* out of the pelvis, then along the left thigh and shin, just
     * outside the skin: behind-and-medial (hang) or behind-and-outside
     * (beside) the bone */
    int side_out = bd->fx->shape == FX_BESIDE;
    fx__at(b, side_out ? 0.05f * H : 0.01f * H, u_root - 0.03f * H, f_back - 0.05f * H, cp[n++]);
    float dir[3];
    for (int k = 0; k < 3; k++)
        dir[k] = side_out ? -0.45f * b->F[k] + 0.89f * b->L[k] : -0.8f * b->F[k] - 0.6f * b->L[k];
    const float *bones[2][2] = {{b->jp[TB_ROLE_LEFT_UPLEG], b->jp[TB_ROLE_LEFT_LEG]},
                                {b->jp[TB_ROLE_LEFT_LEG], b->jp[TB_ROLE_LEFT_FOOT]}};
    float gap = 0.008f * H * bd->gap_scale, dmin = INFINITY, dmax = 0, smin = INFINITY;
    float r0 = bd->tail_r0, target = 0.45f * H * bd->len_scale, walked = fx__dist(cp[0], cp[1]);
    for (int seg = 0; seg < 2; seg++)
        for (int i = seg ? 1 : 2; i <= 6 && walked < target; i++) {
            float t = (float)i / 6.0f, ax[3], d[3];
            for (int k = 0; k < 3; k++)
                ax[k] = bones[seg][0][k] + t * (bones[seg][1][k] - bones[seg][0][k]);
            /* dir made perpendicular to the bone */
            float bone[3] = {bones[seg][1][0] - bones[seg][0][0], bones[seg][1][1] - bones[seg][0][1],
                             bones[seg][1][2] - bones[seg][0][2]};
            fx__norm(bone);
            float dd = fx__dot(dir, bone);
            for (int k = 0; k < 3; k++)
                d[k] = dir[k] - dd * bone[k];
            fx__norm(d);
            float R = fx__skin_radius(b, bones[seg][0], bones[seg][1], t, d);
            /* the tail's own radius where it will be (taper by the walked share) */
            float x = walked / target, rr = r0 * (1.0f - 0.7f * (x > 1 ? 1 : x));
            float off = R + gap + rr;
            for (int k = 0; k < 3; k++)
                cp[n][k] = ax[k] + off * d[k];
            walked += fx__dist(cp[n - 1], cp[n]);
            n++;
            if (!seg) {
                dmin = off < dmin ? off : dmin;
                dmax = off > dmax ? off : dmax;
                smin = gap < smin ? gap : smin;
            }
        }
    bd->near_thigh[0] = dmin / H;
    bd->near_thigh[1] = dmax / H;
    bd->skin_gap = smin / H;
    return n;
}

/* The centre line's points of a free tail (back, curl, up, bead) after the
 * root. Returns the count. */
static int fx__cp_free(fx_build *bd, float cp[][3], int n, float l_root, float u_root, float f_back)
{
    fx_body *b = &bd->b;
    const float H = b->H;
    float length_h = bd->fx->length_h;
    switch (bd->fx->shape) {
    case FX_BACK: {
        float L = (length_h > 0 ? length_h : 0.5f) * H * bd->len_scale;
        for (int i = 1; i <= 4; i++) {
            float x = L * (float)i / 4.0f;
            fx__at(b, l_root, u_root - 0.34f * x, f_back - 0.94f * x, cp[n++]);
        }
        break;
    }
    case FX_CURL: {
        /* back 0.1 H, then a horizontal arc of radius 0.12 H turning 200°
         * round to the character's left, drooping slowly */
        float L = (length_h > 0 ? length_h : 0.75f) * H * bd->len_scale;
        fx__at(b, l_root, u_root - 0.02f * H, f_back - 0.1f * H, cp[n++]);
        float R = 0.12f * H, arc = L - 0.1f * H;
        float cl = l_root + R, cf = f_back - 0.1f * H;
        for (int i = 1; i <= 10; i++) {
            float th = (arc / R) * (float)i / 10.0f;
            if (th > 3.5f)
                th = 3.5f;
            fx__at(b, cl - R * cosf(th), u_root - 0.02f * H - 0.1f * H * (float)i / 10.0f, cf - R * sinf(th),
                   cp[n++]);
        }
        break;
    }
    case FX_UP: {
        /* back, round and up behind the back, clear of it */
        float top_u = 0.32f * H * bd->len_scale;
        float fb = INFINITY;
        for (int i = 0; i <= 8; i++) {
            float f = fx__back_f(b, 0, u_root + top_u * (float)i / 8.0f, 0.03f * H);
            fb = f < fb ? f : fb;
        }
        float fu = fb - 0.07f * H;
        fx__at(b, l_root, u_root - 0.03f * H, f_back - 0.08f * H, cp[n++]);
        fx__at(b, l_root, u_root + 0.02f * H, fu - 0.04f * H, cp[n++]);
        fx__at(b, l_root, u_root + 0.12f * H, fu, cp[n++]);
        fx__at(b, l_root, u_root + top_u, fu + 0.01f * H, cp[n++]);
        break;
    }
    case FX_BEAD: {
        /* leaves the back horizontally, then hangs behind the pelvis with a
         * clearance of 0.05 H and down to 0.12 H above the feet */
        float fb = INFINITY;
        for (int i = 0; i <= 6; i++) {
            float f = fx__back_f(b, 0, u_root - (u_root + 0.15f * H) * (float)i / 6.0f, 0.03f * H);
            fb = f < fb ? f : fb;
        }
        float fh = fb - 0.05f * H;
        float lf, uf, ff;
        fx__coords(b, b->jp[TB_ROLE_LEFT_FOOT], &lf, &uf, &ff);
        float u_end = uf + 0.12f * H;
        fx__at(b, 0, u_root - 0.01f * H, fh + 0.01f * H, cp[n++]);
        fx__at(b, 0, u_root - 0.10f * H, fh, cp[n++]);
        fx__at(b, 0, 0.5f * (u_root + u_end), fh - 0.01f * H, cp[n++]);
        fx__at(b, 0, u_end, fh - 0.05f * H, cp[n++]);
        break;
    }
    default:
        break;
    }
    return n;
}

/* The tail's proportions: the fixed ones, or (vary) drawn from their own
 * stream of the seed, so that a seed's plain fixtures keep their bytes.
 * Ranges: what riggers' tails span and the fixture checks (length 0.4–0.9 H)
 * allow; a bead tail's length is set by the body (to 0.12 H above the feet). */
static void fx__vary(fx_build *bd, uint32_t seed, int vary)
{
    bd->varied = vary != 0;
    bd->r_scale = bd->len_scale = bd->gap_scale = 1.0f;
    bd->piece_gap = 0.35f;
    bd->pieces = bd->fx->shape == FX_BEAD ? 8 : 6;
    bd->fur_scale = 1.35f;
    if (!vary)
        return;
    tbs_rng r;
    tbs_rng_seed(&r, seed * 2654435761u + 0x7a11u);
    float u[6];
    for (int i = 0; i < 6; i++)
        u[i] = tbs_rng_float(&r);
    bd->r_scale = 0.6f + 0.9f * u[0];     /* 0.6–1.5 */
    float lo = 0.85f, hi = 1.2f;          /* back 0.43–0.6 H, curl 0.64–0.9 H */
    if (bd->fx->shape == FX_HANG || bd->fx->shape == FX_BESIDE)
        lo = 1.0f, hi = 1.35f;            /* down the shin: 0.45–0.61 H */
    else if (bd->fx->shape == FX_CURL)
        hi = 1.15f;
    else if (bd->fx->shape == FX_UP)
        lo = 1.0f, hi = 1.3f;             /* top 0.32–0.42 H above the hips */
    else if (bd->fx->kind == FX_LOWPOLY)
        lo = 0.8f, hi = 1.1f;             /* 0.56–0.77 H */
    bd->len_scale = lo + (hi - lo) * u[1];
    bd->gap_scale = 0.25f + 2.75f * u[2]; /* skin gap 0.002–0.024 H */
    bd->piece_gap = 0.15f + 0.45f * u[3]; /* 15–60% of a piece */
    bd->pieces = (bd->fx->shape == FX_BEAD ? 6 : 4) + (int)(5.0f * u[4]);
    bd->fur_scale = 1.2f + 0.4f * u[5];
}

static int fx__centre_line(fx_build *bd, int welded)
{
    fx_body *b = &bd->b;
    const float H = b->H;
    float cp[FX_MAX_CP][3];
    int n = 0;
    int attach = TB_ROLE_HIPS;
    float step = bd->fx->kind == FX_LOWPOLY ? 0.05f * H : 0.02f * H;
    /* the root: the back surface of the pelvis a little above the hips joint */
    float u_root = 0.02f * H, l_root = 0;
    if (bd->fx->shape == FX_BEAD) {
        /* bottom of the rib cage: the Spine1 joint (else halfway to Spine2) */
        attach = b->jskin[TB_ROLE_SPINE1] >= 0 ? TB_ROLE_SPINE1 : fx__spine_role(b);
        float l, u, f;
        fx__coords(b, b->jp[attach], &l, &u, &f);
        u_root = u;
    }
    if (bd->fx->shape == FX_BESIDE)
        l_root = 0.03f * H;
    float f_back = fx__back_f(b, l_root, u_root, 0.02f * H);
    /* a shell's root is sunk into the body by half its radius; a welded
     * tail starts on the surface */
    float sink = welded ? 0 : 0.5f * bd->tail_r0;
    fx__at(b, l_root, u_root, f_back + sink, cp[n++]);
    bd->near_thigh[0] = bd->near_thigh[1] = 0;
    bd->skin_gap = 0;
    switch (bd->fx->shape) {
    case FX_HANG:
    case FX_BESIDE:
        n = fx__cp_leg(bd, cp, n, u_root, f_back);
        break;
    default:
        n = fx__cp_free(bd, cp, n, l_root, u_root, f_back);
        break;
    }
    fx__line_build(&bd->line, (const float(*)[3])cp, n, step);
    return attach;
}

/* A tube along the centre line from arc s0 to s1 (the whole tail, or one
 * piece): rings every line sample, radius scale `scale`, pole caps. */
static size_t fx__tube(fx_build *bd, tbs_mesh *me, float s0, float s1, int segs, float scale, float noise,
                       int open_root)
{
    const fx_line *ln = &bd->line;
    tbs_ring rings[FX_MAX_CL + 2];
    int n = 0;
    for (int i = 0; i < ln->n; i++) {
        if (ln->s[i] < s0 - 1e-6f || ln->s[i] > s1 + 1e-6f)
            continue;
        memcpy(rings[n].c, ln->p[i], sizeof rings[n].c);
        float r = fx__tail_radius(bd, ln->s[i]) * scale;
        if (noise > 0)
            r *= 1.0f + noise * (tbs_rng_float(&bd->rng) - 0.5f);
        rings[n].ra = rings[n].rb = r;
        rings[n].bow = 0;
        n++;
    }
    if (n < 2)
        return me->n;
    float t0[3], a0[3];
    fx__tangent(ln, 0, t0);
    fx__cross(t0, bd->b.L, a0);
    if (fx__len(a0) < 1e-3f)
        fx__cross(t0, bd->b.U, a0);
    fx__norm(a0);
    tbs_frames(rings, n, a0);
    float pole0[3], pole1[3], ta[3], tz[3];
    for (int k = 0; k < 3; k++) {
        ta[k] = rings[1].c[k] - rings[0].c[k];
        tz[k] = rings[n - 1].c[k] - rings[n - 2].c[k];
    }
    fx__norm(ta);
    fx__norm(tz);
    for (int k = 0; k < 3; k++) {
        pole0[k] = rings[0].c[k] - ta[k] * rings[0].ra * 0.8f;
        pole1[k] = rings[n - 1].c[k] + tz[k] * rings[n - 1].ra * 0.8f;
    }
    return tbs_tube(me, rings, n, segs, open_root ? TBS_CAP_NONE : TBS_CAP_POLE, pole0, TBS_CAP_POLE, pole1, 0);
}

/* Welds ring 0 of the tube at first (segs + 1 vertices, the last the seam
 * copy) onto distinct body vertices round the root, taking their weights. */
static int fx__weld_ring(fx_build *bd, tbs_mesh *me, size_t first, int segs)
{
    const fx_body *b = &bd->b;
    const tb_model *m = b->m;
    long used[64];
    int nused = 0;
    for (int k = 0; k < segs; k++) {
        size_t v = first + (size_t)k;
        const float *want = me->pos + v * 3;
        /* nearest body vertex not yet taken (by position): search outward */
        long best = -1;
        for (float r = 0.01f * b->H; r <= 0.08f * b->H && best < 0; r *= 2) {
            int lo[3], hi[3];
            float a[3], z[3];
            for (int c = 0; c < 3; c++)
                a[c] = want[c] - r, z[c] = want[c] + r;
            fx__cell_of(b, a, lo);
            fx__cell_of(b, z, hi);
            float bdist = r * r;
            for (int cz = lo[2]; cz <= hi[2]; cz++)
                for (int cy = lo[1]; cy <= hi[1]; cy++)
                    for (int cx = lo[0]; cx <= hi[0]; cx++) {
                        size_t c = ((size_t)cz * (size_t)b->gn[1] + (size_t)cy) * (size_t)b->gn[0] + (size_t)cx;
                        for (uint32_t i = b->start[c]; i < b->start[c + 1]; i++) {
                            uint32_t q = b->order[i];
                            const float *p = m->positions + (size_t)q * 3;
                            int taken = 0;
                            for (int u = 0; u < nused && !taken; u++)
                                taken = !memcmp(m->positions + (size_t)used[u] * 3, p, 3 * sizeof(float));
                            if (taken)
                                continue;
                            float d[3] = {p[0] - want[0], p[1] - want[1], p[2] - want[2]};
                            float d2 = fx__dot(d, d);
                            if (d2 < bdist || (d2 == bdist && best >= 0 && (long)q < best))
                                bdist = d2, best = (long)q;
                        }
                    }
        }
        if (best < 0)
            return 0;
        used[nused++] = best;
        memcpy(me->pos + v * 3, m->positions + (size_t)best * 3, 3 * sizeof(float));
        fx__copy_weights(b, (size_t)best, me->joints + v * 4, me->weights + v * 4);
    }
    size_t seam = first + (size_t)segs;
    memcpy(me->pos + seam * 3, me->pos + first * 3, 3 * sizeof(float));
    memcpy(me->joints + seam * 4, me->joints + first * 4, 4);
    memcpy(me->weights + seam * 4, me->weights + first * 4, 4 * sizeof(float));
    return 1;
}

static tb_result fx__tail(fx_build *bd, tb_error *err)
{
    const fx_fixture *fx = bd->fx;
    fx_body *b = &bd->b;
    fx_part *p = &bd->parts[bd->nparts++];
    memset(p, 0, sizeof *p);
    p->name = "TailMesh";
    p->cls = "tail";
    p->decision = "chain";
    int welded = fx->kind == FX_WELDED || fx->kind == FX_LOWPOLY;
    bd->tail_r0 = (fx->kind == FX_LOWPOLY ? 0.025f : 0.022f) * b->H;
    if (fx->shape == FX_BEAD)
        bd->tail_r0 = 0.02f * b->H;
    bd->tail_r0 *= bd->r_scale;
    p->attach_role = fx__centre_line(bd, welded);
    const fx_line *ln = &bd->line;
    if (ln->n < 3)
        return tb__fail(err, TB_ERR_INVALID, NULL, "fixture %s: could not lay the tail's centre line", fx->name);
    float L = ln->s[ln->n - 1];
    memcpy(p->root, ln->p[0], sizeof p->root);
    p->length = L;
    int spine_role = fx->shape == FX_BEAD ? p->attach_role : fx__spine_role(b);
    tbs_mesh *me = &p->mesh[0];
    p->nmesh = 1;
    p->shells = 1;
    if (fx->kind == FX_PIECES) {
        /* 6 pieces (beads: 8), gaps 35% of a piece, unless varied */
        int np = bd->pieces;
        float gapf = bd->piece_gap, seg = L / ((float)np + gapf * (float)(np - 1));
        /* varied: no more pieces than hold 3 rings each (the line's samples);
         * the fixed fixtures keep their pieces (and bytes) */
        while (bd->varied && np > 3 && seg < 3.0f * ln->s[1]) {
            np--;
            seg = L / ((float)np + gapf * (float)(np - 1));
        }
        bd->pieces = np;
        for (int i = 0; i < np; i++) {
            float s0 = (float)i * seg * (1 + gapf), s1 = s0 + seg;
            if (i == np - 1)
                s1 = L;
            size_t v0 = me->n;
            /* pieces need at least 3 rings: a finer sampling inside each */
            fx__tube(bd, me, s0, s1, 12, 1.0f, 0, 0);
            if (me->n == v0)
                return tb__fail(err, TB_ERR_INVALID, NULL, "fixture %s: piece %d too short", fx->name, i);
        }
        p->shells = np;
    } else {
        int segs = fx->kind == FX_LOWPOLY ? 6 : welded ? 12 : 16;
        size_t first = fx__tube(bd, me, 0, L, segs, 1.0f, 0.02f, welded);
        if (welded) {
            if (!fx__weld_ring(bd, me, first, segs))
                return tb__fail(err, TB_ERR_INVALID, NULL, "fixture %s: no body vertices round the root to weld to",
                                fx->name);
            p->weld_ring_n = (size_t)segs + 1;
        }
    }
    fx__weigh_tail(bd, me, p->weld_ring_n, spine_role);
    if (fx->kind == FX_FUR) {
        tbs_mesh *fur = &p->mesh[1];
        p->nmesh = 2;
        p->shells = 2;
        fx__tube(bd, fur, 0, L, 16, bd->fur_scale, 0.15f, 0);
        fx__weigh_tail(bd, fur, 0, spine_role);
    }
    return TB_OK;
}

/* ---- clothing ------------------------------------------------------------ */

/* The body vertices a garment covers: between u_lo and u_top, not on an
 * arm, the head or an unknown bone (by the dominant joint's class). */
static void fx__garment_torso(const fx_body *b, float u_lo, float u_top, uint8_t *in)
{
    const tb_model *m = b->m;
    for (size_t v = 0; v < m->vertex_count; v++) {
        float l, u, f;
        fx__coords(b, m->positions + v * 3, &l, &u, &f);
        if (u < u_lo || u > u_top)
            continue;
        /* not the arms: dominant joint's class */
        int inf = m->influences, dom = 0;
        for (int k = 1; k < inf; k++)
            if (m->weights[v * (size_t)inf + (size_t)k] > m->weights[v * (size_t)inf + (size_t)dom])
                dom = k;
        int sj = m->skin_joints[m->joints[v * (size_t)inf + (size_t)dom]];
        tb_role_class c = tb_role_class_of(m->roles[sj]);
        if (c == TB_CLASS_ARM || c == TB_CLASS_HEAD || c == TB_CLASS_OTHER)
            continue;
        in[v] = 1;
    }
}

/* Body vertex pp offset by 0.015 H away from the nearest torso/thigh bone. */
static void fx__garment_offset(const fx_body *b, const float *pp, float q[3])
{
    static const tb_role bones[] = {TB_ROLE_HIPS, TB_ROLE_SPINE, TB_ROLE_SPINE1, TB_ROLE_SPINE2,
                                    TB_ROLE_LEFT_UPLEG, TB_ROLE_RIGHT_UPLEG};
    float bd2 = INFINITY, dir[3] = {0, 0, 0};
    for (size_t r = 0; r < sizeof bones / sizeof bones[0]; r++) {
        for (int s = 0; s < b->nseg; s++) {
            if (b->sjoint[s] != b->jskin[bones[r]])
                continue;
            float tt, d = fx__seg_dist(pp, b->sa[s], b->sb[s], &tt);
            if (d < bd2) {
                bd2 = d;
                for (int k = 0; k < 3; k++)
                    dir[k] = pp[k] - (b->sa[s][k] + tt * (b->sb[s][k] - b->sa[s][k]));
            }
        }
    }
    fx__norm(dir);
    for (int k = 0; k < 3; k++)
        q[k] = pp[k] + 0.015f * b->H * dir[k];
}

/* The covered triangles of body primitive pr copied into me, each body
 * vertex once (map), offset, with its body vertex's weights. */
static void fx__garment_copy(const fx_body *b, const tb_model_prim *pr, const uint8_t *in, uint32_t *map,
                             tbs_mesh *me)
{
    const tb_model *m = b->m;
    for (size_t v = 0; v < m->vertex_count; v++)
        map[v] = UINT32_MAX;
    for (size_t t = pr->triangle_offset; t < pr->triangle_offset + pr->triangle_count; t++) {
        const uint32_t *tri = m->triangles + t * 3;
        if (!in[tri[0]] || !in[tri[1]] || !in[tri[2]])
            continue;
        size_t nv[3];
        for (int c = 0; c < 3; c++) {
            uint32_t v = tri[c];
            if (map[v] == UINT32_MAX) {
                float q[3];
                fx__garment_offset(b, m->positions + (size_t)v * 3, q);
                size_t nvx = tbs_mesh_vertex(me, q, 0, 0, (uint32_t)me->n);
                me->nl = me->n;
                if (me->failed)
                    break;
                fx__copy_weights(b, v, me->joints + nvx * 4, me->weights + nvx * 4);
                map[v] = (uint32_t)nvx;
            }
            nv[c] = map[v];
        }
        tbs_mesh_tri(me, nv[0], nv[1], nv[2]);
    }
}

/* An offset copy of the body's torso (coat: down to mid-thigh) from the body
 * primitive holding most of it; each vertex keeps its body vertex's weights
 * (what a rigger's weight transfer gives). */
static tb_result fx__garment(fx_build *bd, fx_part *p, int coat, tb_error *err)
{
    const fx_body *b = &bd->b;
    const tb_model *m = b->m;
    const float H = b->H;
    float u_lo = coat ? -0.22f * H : -0.05f * H;
    float u_top = 0.0f;
    {
        float l, u, f;
        int top = b->jskin[TB_ROLE_SPINE2] >= 0 ? TB_ROLE_SPINE2 : fx__spine_role(b);
        fx__coords(b, b->jp[top], &l, &u, &f);
        u_top = u + 0.02f * H;
    }
    uint8_t *in = calloc(m->vertex_count, 1);
    uint32_t *map = malloc(m->vertex_count * sizeof *map);
    if (!in || !map) {
        free(in);
        free(map);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    fx__garment_torso(b, u_lo, u_top, in);
    int best = -1;
    size_t best_n = 0;
    for (int q = 0; q < m->prim_count; q++) {
        size_t c = 0;
        for (size_t v = m->prims[q].vertex_offset; v < m->prims[q].vertex_offset + m->prims[q].vertex_count; v++)
            c += in[v];
        if (c > best_n)
            best_n = c, best = q;
    }
    tbs_mesh *me = &p->mesh[0];
    p->nmesh = 1;
    p->shells = 1;
    if (best >= 0)
        fx__garment_copy(b, &m->prims[best], in, map, me);
    free(in);
    free(map);
    if (me->failed)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (me->nt == 0)
        return tb__fail(err, TB_ERR_INVALID, NULL, "fixture %s: no torso triangles to dress", bd->fx->name);
    return TB_OK;
}

/* Outward horizontal radius of the body round the up axis through the hips
 * at height u, in direction e (unit, horizontal). */
static float fx__girth(const fx_body *b, float u0, const float e[3])
{
    float best = 0;
    for (size_t v = 0; v < b->m->vertex_count; v++) {
        float l, u, f;
        fx__coords(b, b->m->positions + v * 3, &l, &u, &f);
        if (fabsf(u - u0) > 0.02f * b->H)
            continue;
        float h[3];
        for (int k = 0; k < 3; k++)
            h[k] = l * b->L[k] + f * b->F[k];
        float r = fx__len(h);
        if (r <= 0 || fx__dot(h, e) < 0.97f * r || r > 0.3f * b->H)
            continue;
        best = r > best ? r : best;
    }
    return best > 0 ? best : 0.1f * b->H;
}

/* A loop of rings round the waist: a belt (short section) or a skirt (a tilted
 * section from the waist to a wider hem). */
static void fx__band(fx_build *bd, tbs_mesh *me, float u_top, float drop, float flare, float thick)
{
    const fx_body *b = &bd->b;
    const int N = 40;
    tbs_ring rings[40];
    for (int i = 0; i < N; i++) {
        float th = 2.0f * (float)TB_PI * (float)i / (float)N, e[3];
        for (int k = 0; k < 3; k++)
            e[k] = cosf(th) * b->F[k] + sinf(th) * b->L[k];
        float R = fx__girth(b, u_top, e) + 0.012f * b->H;
        float top[3], hem[3];
        float Rh = drop > 0 ? fx__girth(b, u_top - drop, e) * flare + 0.02f * b->H : R;
        if (Rh < R)
            Rh = R;
        for (int k = 0; k < 3; k++) {
            top[k] = b->O[k] + u_top * b->U[k] + R * e[k];
            hem[k] = b->O[k] + (u_top - (drop > 0 ? drop : 0.04f * b->H)) * b->U[k] + Rh * e[k];
        }
        tbs_ring *r = &rings[i];
        float a[3];
        for (int k = 0; k < 3; k++) {
            r->c[k] = 0.5f * (top[k] + hem[k]);
            a[k] = top[k] - hem[k];
        }
        float half = 0.5f * fx__len(a);
        fx__norm(a);
        float bb[3], de = fx__dot(e, a);
        for (int k = 0; k < 3; k++)
            bb[k] = e[k] - de * a[k];
        fx__norm(bb);
        memcpy(r->a, a, sizeof a);
        memcpy(r->b, bb, sizeof bb);
        r->ra = half;
        r->rb = thick;
        r->bow = 0;
    }
    tbs_tube(me, rings, N, 8, TBS_CAP_NONE, NULL, TBS_CAP_NONE, NULL, 1);
}

/* A slab swept sideways behind the body: plate (behind the pelvis) or cape
 * (from the shoulders down). */
static void fx__slab(fx_build *bd, tbs_mesh *me, float u_top, float u_bot, float half_w, float clear, float thick,
                     float bow, int segs)
{
    const fx_body *b = &bd->b;
    const int N = 11;
    tbs_ring rings[11];
    float fb = INFINITY;
    for (int i = 0; i <= 6; i++) {
        float f = fx__back_f(b, 0, u_bot + (u_top - u_bot) * (float)i / 6.0f, 0.03f * b->H);
        fb = f < fb ? f : fb;
    }
    for (int i = 0; i < N; i++) {
        float l = half_w - 2 * half_w * (float)i / (float)(N - 1);
        float f = INFINITY;
        for (int q = 0; q <= 4; q++) {
            float x = fx__back_f(b, l, u_bot + (u_top - u_bot) * (float)q / 4.0f, 0.03f * b->H);
            f = x < f ? x : f;
        }
        /* the curve follows the body across, never nearer than `clear` */
        f -= clear;
        tbs_ring *r = &rings[i];
        fx__at(b, l, 0.5f * (u_top + u_bot), f, r->c);
        memcpy(r->a, b->U, sizeof r->a);
        for (int k = 0; k < 3; k++)
            r->b[k] = b->F[k];
        r->ra = 0.5f * (u_top - u_bot);
        r->rb = thick;
        r->bow = bow;
    }
    (void)fb;
    tbs_tube(me, rings, N, segs, TBS_CAP_FLAT, NULL, TBS_CAP_FLAT, NULL, 0);
}

/* A scabbard: straight, constant section, diagonally across the back,
 * each vertex on its nearest bone; its root where it crosses the spine. */
static tb_result fx__scabbard(fx_build *bd, fx_part *p, float u_sp2, size_t v0, tb_error *err)
{
    fx_body *b = &bd->b;
    const float H = b->H;
    tbs_mesh *me = &p->mesh[0];
    float fb = INFINITY;
    for (int i = 0; i <= 6; i++) {
        float x = fx__back_f(b, 0, -0.05f * H + (u_sp2 + 0.15f * H) * (float)i / 6.0f, 0.05f * H);
        fb = x < fb ? x : fb;
    }
    tbs_ring rings[24];
    float a[3], z[3];
    fx__at(b, 0.11f * H, -0.06f * H, fb - 0.035f * H, a);
    fx__at(b, -0.13f * H, u_sp2 + 0.1f * H, fb - 0.035f * H, z);
    for (int i = 0; i < 24; i++) {
        float t = (float)i / 23.0f;
        for (int k = 0; k < 3; k++)
            rings[i].c[k] = a[k] + t * (z[k] - a[k]);
        rings[i].ra = 0.018f * H;
        rings[i].rb = 0.012f * H;
        rings[i].bow = 0;
    }
    float d[3] = {z[0] - a[0], z[1] - a[1], z[2] - a[2]}, a0[3];
    fx__cross(d, b->F, a0);
    fx__norm(a0);
    tbs_frames(rings, 24, a0);
    tbs_tube(me, rings, 24, 12, TBS_CAP_FLAT, NULL, TBS_CAP_FLAT, NULL, 0);
    for (size_t v = v0; v < me->n; v++)
        fx__weight_nearest(b, me, v);
    p->attach_role = fx__spine_role(b);
    /* where it crosses the spine */
    float t = 0.11f / 0.24f;
    for (int k = 0; k < 3; k++)
        p->root[k] = a[k] + t * (z[k] - a[k]);
    p->length = fx__dist(a, z);
    return me->failed ? tb__fail(err, TB_ERR_OOM, NULL, NULL) : TB_OK;
}

/* Clothing's weights from vertex v0 on: a plate all on the hips; the rest
 * the nearest body vertex's (within 0.3 H), else the nearest bone. */
static void fx__clothing_weights(const fx_body *b, tbs_mesh *me, size_t v0, int plate)
{
    for (size_t v = v0; v < me->n; v++) {
        if (plate) {
            int j = b->jskin[TB_ROLE_HIPS];
            float w = 1;
            fx__set_weights(me, v, &j, &w, 1);
        } else {
            long q = fx__nearest(b, me->pos + v * 3, 0.3f * b->H);
            if (q >= 0)
                fx__copy_weights(b, (size_t)q, me->joints + v * 4, me->weights + v * 4);
            else
                fx__weight_nearest(b, me, v);
        }
    }
}

static tb_result fx__clothing(fx_build *bd, unsigned which, tb_error *err)
{
    fx_body *b = &bd->b;
    const float H = b->H;
    fx_part *p = &bd->parts[bd->nparts++];
    memset(p, 0, sizeof *p);
    static const char *const node_name[FX_PART_KINDS] = {"Coat", "Vest", "Belt", "Plate", "Skirt", "Cape",
                                                         "Scabbard"};
    int idx = 0;
    while (!(which & (1u << idx)))
        idx++;
    p->name = node_name[idx];
    p->cls = fx__part_name[idx];
    p->decision = which == FX_SCABBARD ? "rigid" : "untouched";
    p->attach_role = TB_ROLE_HIPS;
    p->nmesh = 1;
    p->shells = 1;
    tbs_mesh *me = &p->mesh[0];
    float l, u_sp2, f;
    fx__coords(b, b->jp[b->jskin[TB_ROLE_SPINE2] >= 0 ? TB_ROLE_SPINE2 : fx__spine_role(b)], &l, &u_sp2, &f);
    size_t v0 = me->n;
    switch (which) {
    case FX_COAT:
    case FX_VEST: {
        tb_result r = fx__garment(bd, p, which == FX_COAT, err);
        if (r != TB_OK)
            return r;
        p->attach_role = fx__spine_role(b);
        fx__at(b, 0, 0, 0, p->root);
        return TB_OK;
    }
    case FX_BELT:
        fx__band(bd, me, 0.03f * H, 0, 1, 0.006f * H);
        fx__at(b, 0, 0.03f * H, 0, p->root);
        break;
    case FX_SKIRT:
        fx__band(bd, me, 0.04f * H, 0.22f * H, 1.3f, 0.005f * H);
        fx__at(b, 0, 0.04f * H, 0, p->root);
        break;
    case FX_PLATE:
        fx__slab(bd, me, 0.09f * H, -0.03f * H, 0.09f * H, 0.02f * H, 0.008f * H, 0.0f, 16);
        fx__at(b, 0, 0.03f * H, 0, p->root);
        break;
    case FX_CAPE:
        fx__slab(bd, me, u_sp2 + 0.07f * H, -0.25f * H, 0.14f * H, 0.03f * H, 0.004f * H, 0.0f, 40);
        p->attach_role = fx__spine_role(b);
        fx__at(b, 0, u_sp2 + 0.07f * H, 0, p->root);
        break;
    case FX_SCABBARD:
        return fx__scabbard(bd, p, u_sp2, v0, err);
    default:
        break;
    }
    if (me->failed)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    fx__clothing_weights(b, me, v0, which == FX_PLATE);
    return TB_OK;
}

/* ---- the rigid synthetic body -------------------------------------------- */

/* Rebuilds primitive 0 of mesh 0 (the synthetic body) in rigid pieces, each
 * triangle on the joint with most of its weight (tbs_mesh_rigidify). */
static tb_result fx__rigidify_synth(tb_doc *doc, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    if (g->mesh_count < 1 || g->meshes[0].primitive_count < 1)
        return tb__fail(err, TB_ERR_ARG, NULL, "rigid fixtures need the synthetic body");
    const tb_gltf_primitive *pr = &g->meshes[0].primitives[0];
    if (pr->position < 0 || pr->normal < 0 || pr->texcoord[0] < 0 || pr->indices < 0 || pr->set_count < 1)
        return tb__fail(err, TB_ERR_ARG, NULL, "rigid fixtures need the synthetic body");
    size_t n = g->accessors[pr->position].count, ni = g->accessors[pr->indices].count;
    tbs_mesh me = {0};
    float *pos = malloc(n * 3 * sizeof(float)), *uv = malloc(n * 2 * sizeof(float)),
          *w = malloc(n * 4 * sizeof(float));
    uint32_t *j = malloc(n * 4 * sizeof(uint32_t)), *idx = malloc(ni * sizeof(uint32_t));
    tb_result r = TB_OK;
    if (!pos || !uv || !w || !j || !idx)
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r == TB_OK)
        r = tb_accessor_read_floats(doc, pr->position, pos, n * 3, err);
    if (r == TB_OK)
        r = tb_accessor_read_floats(doc, pr->texcoord[0], uv, n * 2, err);
    if (r == TB_OK)
        r = tb_accessor_read_floats(doc, pr->weights[0], w, n * 4, err);
    if (r == TB_OK)
        r = tb_accessor_read_uints(doc, pr->joints[0], j, n * 4, err);
    if (r == TB_OK)
        r = tb_accessor_read_uints(doc, pr->indices, idx, ni, err);
    if (r == TB_OK) {
        /* logical vertices by position (the loft's seams share them) */
        for (size_t v = 0; v < n; v++) {
            uint32_t lg = (uint32_t)v;
            size_t q = tbs_mesh_vertex(&me, pos + v * 3, uv[v * 2], uv[v * 2 + 1], lg);
            for (int k = 0; k < 4; k++) {
                me.joints[q * 4 + (size_t)k] = (uint8_t)j[v * 4 + (size_t)k];
                me.weights[q * 4 + (size_t)k] = w[v * 4 + (size_t)k];
            }
        }
        me.nl = n;
        for (size_t t = 0; t + 2 < ni; t += 3)
            tbs_mesh_tri(&me, idx[t], idx[t + 1], idx[t + 2]);
        tbs_mesh_rigidify(&me, 0, me.n);
        tbs_mesh_finish(&me);
        if (me.failed || me.n > 65535) {
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        } else {
            uint16_t *i16 = malloc(me.nt * 3 * sizeof *i16);
            if (!i16) {
                r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
            } else {
                for (size_t t = 0; t < me.nt * 3; t++)
                    i16[t] = (uint16_t)me.tri[t];
                int a_p = tb_doc_add_accessor(doc, me.pos, me.n, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
                int a_n = tb_doc_add_accessor(doc, me.nrm, me.n, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
                int a_t = tb_doc_add_accessor(doc, me.uv, me.n, TB_COMPONENT_FLOAT, "VEC2", 0, 34962);
                int a_j = tb_doc_add_accessor(doc, me.joints, me.n, TB_COMPONENT_UNSIGNED_BYTE, "VEC4", 0, 34962);
                int a_w = tb_doc_add_accessor(doc, me.weights, me.n, TB_COMPONENT_FLOAT, "VEC4", 0, 34962);
                int a_i = tb_doc_add_accessor(doc, i16, me.nt * 3, TB_COMPONENT_UNSIGNED_SHORT, "SCALAR", 0, 34963);
                free(i16);
                if (a_p < 0 || a_n < 0 || a_t < 0 || a_j < 0 || a_w < 0 || a_i < 0) {
                    r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
                } else {
                    json_t *pj = json_array_get(json_object_get(json_array_get(
                                                    json_object_get(tb_doc_json(doc), "meshes"), 0), "primitives"), 0);
                    json_t *at = json_object_get(pj, "attributes");
                    json_object_set_new(at, "POSITION", json_integer(a_p));
                    json_object_set_new(at, "NORMAL", json_integer(a_n));
                    json_object_set_new(at, "TEXCOORD_0", json_integer(a_t));
                    json_object_set_new(at, "JOINTS_0", json_integer(a_j));
                    json_object_set_new(at, "WEIGHTS_0", json_integer(a_w));
                    json_object_set_new(pj, "indices", json_integer(a_i));
                    r = tb_doc_refresh(doc, err);
                }
            }
        }
    }
    tbs_mesh_free(&me);
    free(pos);
    free(uv);
    free(w);
    free(j);
    free(idx);
    return r;
}

/* ---- output ---------------------------------------------------------------- */

static json_t *fx__material(const char *name, float r, float g, float b)
{
    return json_pack("{s:s,s:{s:[f,f,f,f],s:f,s:f},s:b}", "name", name, "pbrMetallicRoughness", "baseColorFactor",
                     (double)r, (double)g, (double)b, 1.0, "metallicFactor", 0.0, "roughnessFactor", 0.8,
                     "doubleSided", 1);
}

static json_t *fx__primitive(tb_doc *doc, const tbs_mesh *me, int material)
{
    int big = me->n > 65535;
    void *idx = malloc(me->nt * 3 * (big ? 4 : 2));
    if (!idx)
        return NULL;
    for (size_t i = 0; i < me->nt * 3; i++) {
        if (big)
            ((uint32_t *)idx)[i] = me->tri[i];
        else
            ((uint16_t *)idx)[i] = (uint16_t)me->tri[i];
    }
    int a_pos = tb_doc_add_accessor(doc, me->pos, me->n, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
    int a_nrm = tb_doc_add_accessor(doc, me->nrm, me->n, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
    int a_j = tb_doc_add_accessor(doc, me->joints, me->n, TB_COMPONENT_UNSIGNED_BYTE, "VEC4", 0, 34962);
    int a_w = tb_doc_add_accessor(doc, me->weights, me->n, TB_COMPONENT_FLOAT, "VEC4", 0, 34962);
    int a_i = tb_doc_add_accessor(doc, idx, me->nt * 3, big ? TB_COMPONENT_UNSIGNED_INT : TB_COMPONENT_UNSIGNED_SHORT,
                                  "SCALAR", 0, 34963);
    free(idx);
    if (a_pos < 0 || a_nrm < 0 || a_j < 0 || a_w < 0 || a_i < 0)
        return NULL;
    return json_pack("{s:{s:i,s:i,s:i,s:i},s:i,s:i,s:i}", "attributes", "POSITION", a_pos, "NORMAL", a_nrm,
                     "JOINTS_0", a_j, "WEIGHTS_0", a_w, "indices", a_i, "material", material, "mode",
                     TB_MODE_TRIANGLES);
}

static json_t *fx__vec(const float *v, double q)
{
    json_t *a = json_array();
    for (int k = 0; k < 3; k++)
        json_array_append_new(a, json_real(round((double)v[k] * q) / q));
    return a;
}

static json_t *fx__num(double x, double q) { return json_real(round(x * q) / q); }

/* The fixture's parts into the body's glTF: per part a material per
 * mesh, a mesh, a node on the body's skin in the scene. */
static tb_result fx__write_parts(fx_build *bd, tb_doc *doc, tb_error *err)
{
    const fx_body *b = &bd->b;
    json_t *root = tb_doc_json(doc);
    json_t *mats = json_object_get(root, "materials");
    if (!mats) {
        mats = json_array();
        json_object_set_new(root, "materials", mats);
    }
    json_t *meshes = json_object_get(root, "meshes"), *nodes = json_object_get(root, "nodes");
    if (!meshes || !nodes)
        return tb__fail(err, TB_ERR_INVALID, NULL, "the body has no meshes or nodes");
    const tb_gltf *g = tb_doc_gltf(doc);
    int scene = g->scene >= 0 ? g->scene : 0;
    json_t *scenes = json_object_get(root, "scenes");
    json_t *sc = json_array_get(scenes, (size_t)scene);
    if (!sc)
        return tb__fail(err, TB_ERR_INVALID, NULL, "the body has no scene");
    json_t *sc_nodes = json_object_get(sc, "nodes");
    if (!sc_nodes) {
        sc_nodes = json_array();
        json_object_set_new(sc, "nodes", sc_nodes);
    }
    for (int i = 0; i < bd->nparts; i++) {
        fx_part *p = &bd->parts[i];
        int tail = !strcmp(p->cls, "tail");
        json_t *prims = json_array();
        for (int q = 0; q < p->nmesh; q++) {
            tbs_mesh_finish(&p->mesh[q]);
            if (p->mesh[q].failed) {
                json_decref(prims);
                return tb__fail(err, TB_ERR_OOM, NULL, NULL);
            }
            char mname[48];
            snprintf(mname, sizeof mname, "%s%s", p->name, q ? "Fur" : "");
            json_array_append_new(mats, tail ? fx__material(mname, 0.85f, 0.45f, 0.2f)
                                             : fx__material(mname, 0.2f, 0.25f, 0.5f));
            json_t *pj = fx__primitive(doc, &p->mesh[q], (int)json_array_size(mats) - 1);
            if (!pj) {
                json_decref(prims);
                return tb__fail(err, TB_ERR_OOM, NULL, NULL);
            }
            json_array_append_new(prims, pj);
        }
        json_array_append_new(meshes, json_pack("{s:s,s:o}", "name", p->name, "primitives", prims));
        p->node = (int)json_array_size(nodes);
        json_array_append_new(nodes, json_pack("{s:s,s:i,s:i}", "name", p->name, "mesh",
                                               (int)json_array_size(meshes) - 1, "skin", b->m->skin));
        json_array_append_new(sc_nodes, json_integer(p->node));
    }
    return TB_OK;
}

/* One part's truth on the output model om: class, decision, attachment,
 * root, a tail's shape, length and centre line, its vertices per primitive
 * and in model order (a weld ring apart). */
static json_t *fx__truth_part(const fx_build *bd, const fx_part *p, const tb_model *om, double q)
{
    const fx_body *b = &bd->b;
    const fx_fixture *fx = bd->fx;
    int tail = !strcmp(p->cls, "tail");
    json_t *a = json_object();
    json_object_set_new(a, "name", json_string(tail ? "tail" : p->cls));
    json_object_set_new(a, "class", json_string(p->cls));
    json_object_set_new(a, "decision", json_string(p->decision));
    if (tail) {
        json_object_set_new(a, "shape", json_string(fx__shape_name[fx->shape]));
        json_object_set_new(a, "mesh_kind", json_string(fx__kind_name[fx->kind]));
        json_object_set_new(a, "weights", json_string(fx__weights_name[fx->weights]));
    }
    json_object_set_new(a, "attachment", json_string(tb_role_name((tb_role)p->attach_role)));
    int aj = b->m->role_joint[p->attach_role];
    json_object_set_new(a, "attachment_node", json_string(aj >= 0 && b->m->skel.names[aj] ? b->m->skel.names[aj] : ""));
    json_object_set_new(a, "root", fx__vec(p->root, q));
    if (tail || p->length > 0)
        json_object_set_new(a, "length", fx__num(p->length, q));
    if (tail) {
        json_object_set_new(a, "length_h", fx__num(p->length / b->H, 1e4));
        json_object_set_new(a, "welded", json_boolean(p->weld_ring_n > 0));
        json_object_set_new(a, "radius_root", fx__num(bd->tail_r0, q));
        if (bd->varied)
            json_object_set_new(a, "varied",
                                json_pack("{s:o,s:o,s:o,s:o,s:i,s:o}", "radius_scale", fx__num(bd->r_scale, 1e4),
                                          "length_scale", fx__num(bd->len_scale, 1e4), "gap_scale",
                                          fx__num(bd->gap_scale, 1e4), "piece_gap", fx__num(bd->piece_gap, 1e4),
                                          "pieces", bd->pieces, "fur_scale", fx__num(bd->fur_scale, 1e4)));
        json_t *cl = json_array();
        for (int k = 0; k < bd->line.n; k += 2)
            json_array_append_new(cl, fx__vec(bd->line.p[k], q));
        json_object_set_new(a, "centerline", cl);
        if (fx->shape == FX_HANG || fx->shape == FX_BESIDE) {
            json_object_set_new(a, "thigh_bone_distance_h",
                                json_pack("[o,o]", fx__num(bd->near_thigh[0], 1e4), fx__num(bd->near_thigh[1], 1e4)));
            json_object_set_new(a, "thigh_skin_gap_h", fx__num(bd->skin_gap, 1e4));
        }
    }
    json_object_set_new(a, "shells", json_integer(p->shells));
    /* per primitive, then flat in model order */
    json_t *pp = json_array(), *flat = json_array(), *ring = json_array();
    size_t total = 0, near = 0;
    for (int k = 0; k < om->prim_count; k++) {
        if (om->prims[k].node != p->node)
            continue;
        json_t *ix = json_array();
        size_t skip = om->prims[k].primitive == 0 ? p->weld_ring_n : 0;
        for (size_t v = 0; v < om->prims[k].vertex_count; v++) {
            size_t mv = om->prims[k].vertex_offset + v;
            if (v < skip) {
                json_array_append_new(ring, json_integer((json_int_t)mv));
                continue;
            }
            json_array_append_new(ix, json_integer((json_int_t)v));
            json_array_append_new(flat, json_integer((json_int_t)mv));
            total++;
            near += fx__skeleton_distance(b, om->positions + mv * 3) <= 0.07f * b->H;
        }
        json_array_append_new(pp, json_pack("{s:i,s:i,s:i,s:o}", "node", p->node, "mesh", om->prims[k].mesh,
                                            "primitive", om->prims[k].primitive, "indices", ix));
    }
    json_object_set_new(a, "vertex_count", json_integer((json_int_t)total));
    json_object_set_new(a, "within_7pct_h", fx__num(total ? (double)near / (double)total : 0, 1e4));
    json_object_set_new(a, "primitives", pp);
    json_object_set_new(a, "vertices", flat);
    if (p->weld_ring_n)
        json_object_set_new(a, "weld_ring", ring);
    else
        json_decref(ring);
    return a;
}

static tb_result fx__write(fx_build *bd, tb_doc *doc, const char *body_name, uint32_t seed, json_t **truth,
                           tb_error *err)
{
    const fx_body *b = &bd->b;
    tb_result r = fx__write_parts(bd, doc, err);
    if (r != TB_OK)
        return r;
    r = tb_doc_refresh(doc, err);
    if (r != TB_OK || !truth)
        return r;
    /* the truth, with indices in tb_model order on the output */
    tb_model *om = NULL;
    r = tb_model_load(&om, doc, b->m->skin, err);
    if (r != TB_OK)
        return r;
    const double q = 1e6;
    json_t *t = json_object();
    const fx_fixture *fx = bd->fx;
    json_object_set_new(t, "fixture", json_string(fx->name));
    json_object_set_new(t, "summary", json_string(fx->summary));
    json_object_set_new(t, "body", json_string(body_name ? body_name : ""));
    json_object_set_new(t, "seed", json_integer(seed));
    json_object_set_new(t, "height", fx__num(b->H, q));
    json_object_set_new(t, "up", fx__vec(b->U, q));
    json_object_set_new(t, "forward", fx__vec(b->F, q));
    json_object_set_new(t, "left", fx__vec(b->L, q));
    json_object_set_new(t, "shape", json_string(fx__shape_name[fx->shape]));
    json_object_set_new(t, "tail", json_boolean(fx->shape != FX_NO_TAIL));
    json_object_set_new(t, "expected_chains", json_integer(fx->shape != FX_NO_TAIL));
    json_object_set_new(t, "body_vertex_count", json_integer((json_int_t)b->m->vertex_count));
    json_object_set_new(t, "vertex_count", json_integer((json_int_t)om->vertex_count));
    json_object_set_new(t, "vertex_indexing",
                        json_string("'vertices' index tb_model order: every primitive of every mesh node bound to "
                                    "the skin (or an equivalent one), in node order then primitive order; the body's "
                                    "vertices come first and keep their indices, the fixture's nodes are appended. "
                                    "'primitives[].indices' index the vertices of that primitive in the file."));
    json_t *prl = json_array();
    for (int i = 0; i < om->prim_count; i++)
        json_array_append_new(prl, json_pack("{s:i,s:i,s:i,s:I,s:I}", "node", om->prims[i].node, "mesh",
                                             om->prims[i].mesh, "primitive", om->prims[i].primitive, "vertex_offset",
                                             (json_int_t)om->prims[i].vertex_offset, "vertex_count",
                                             (json_int_t)om->prims[i].vertex_count));
    json_object_set_new(t, "primitives", prl);
    json_t *apps = json_array();
    for (int i = 0; i < bd->nparts; i++)
        json_array_append_new(apps, fx__truth_part(bd, &bd->parts[i], om, q));
    json_object_set_new(t, "appendages", apps);
    tb_model_free(om);
    *truth = t;
    return TB_OK;
}

/* A private copy of the body: written and re-read (lossless). */
static tb_result fx__copy(tb_doc **out, const tb_doc *body, tb_error *err)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    tb_result r = tb_doc_write_memory(body, &bytes, &size, err);
    if (r != TB_OK)
        return r;
    r = tb_doc_load_memory(out, bytes, size, tb_doc_name(body), NULL, NULL, err);
    free(bytes);
    return r;
}

tb_result tb_synth_skin_parts(tb_doc **out, const tb_doc *body, int *parts, tb_error *err)
{
    int n = 0;
    if (parts)
        *parts = 0;
    if (!out || !body)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_synth_skin_parts: out and body must not be NULL");
    *out = NULL;
    tb_doc *doc = NULL;
    tb_result r = fx__copy(&doc, body, err);
    if (r == TB_OK)
        r = tbs_skin_rigid_parts(doc, &n, err);
    if (r != TB_OK) {
        tb_doc_free(doc);
        return r;
    }
    if (parts)
        *parts = n;
    *out = doc;
    return TB_OK;
}

tb_result tb_synth_onto_json(tb_doc **out, const tb_doc *body, const char *fixture, const tb_synth_desc *desc,
                             json_t **truth, tb_error *err)
{
    if (out)
        *out = NULL;
    if (truth)
        *truth = NULL;
    if (!out || !body)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_synth_onto: out and body must not be NULL");
    int fi = tb_synth_fixture_find(fixture);
    if (fi < 0)
        return tb__fail(err, TB_ERR_ARG, NULL, "unknown fixture '%s' (tailbone synth --fixtures)",
                        fixture ? fixture : "(null)");
    const fx_fixture *fx = &fx__fixtures[fi];
    uint32_t seed = desc && desc->seed ? desc->seed : TB_SYNTH_DEFAULT_SEED;
    tb_doc *doc = NULL;
    tb_result r = fx__copy(&doc, body, err);
    if (r != TB_OK)
        return r;
    if (fx->rigid_body) {
        json_t *gen = json_object_get(json_object_get(tb_doc_json(doc), "asset"), "generator");
        if (!json_is_string(gen) || strcmp(json_string_value(gen), "tailbone synth")) {
            tb_doc_free(doc);
            return tb__fail(err, TB_ERR_ARG, NULL,
                            "fixture %s rebuilds the synthetic body in rigid pieces: use --onto synth:plain",
                            fx->name);
        }
        r = fx__rigidify_synth(doc, err);
        if (r != TB_OK) {
            tb_doc_free(doc);
            return r;
        }
    }
    int parts = 0;
    if (!fx->rigid_body) /* a robot of rigid parts: skinned first, as a rigger's export */
        r = tbs_skin_rigid_parts(doc, &parts, err);
    tb_model *m = NULL;
    if (r == TB_OK)
        r = tb_model_load(&m, doc, -1, err);
    if (r != TB_OK) {
        tb_doc_free(doc);
        return r;
    }
    fx_build *bd = calloc(1, sizeof *bd);
    if (!bd) {
        tb_model_free(m);
        tb_doc_free(doc);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    bd->fx = fx;
    tbs_rng_seed(&bd->rng, seed);
    fx__vary(bd, seed, desc ? desc->vary : 0);
    r = fx__body_init(&bd->b, m, err);
    if (r == TB_OK && fx->shape != FX_NO_TAIL)
        r = fx__tail(bd, err);
    for (int k = 0; k < FX_PART_KINDS && r == TB_OK; k++)
        if (fx->parts & (1u << k))
            r = fx__clothing(bd, 1u << k, err);
    for (int i = 0; i < bd->nparts && r == TB_OK; i++)
        for (int q = 0; q < bd->parts[i].nmesh; q++)
            if (bd->parts[i].mesh[q].failed)
                r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r == TB_OK)
        r = fx__write(bd, doc, tb_doc_name(body), seed, truth, err);
    for (int i = 0; i < bd->nparts; i++)
        for (int q = 0; q < 2; q++)
            tbs_mesh_free(&bd->parts[i].mesh[q]);
    fx__body_free(&bd->b);
    free(bd);
    tb_model_free(m);
    if (r != TB_OK) {
        tb_doc_free(doc);
        return r;
    }
    *out = doc;
    return TB_OK;
}
