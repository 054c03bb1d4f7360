/* Grounding support points, body clearance, lift smoothing and placement
 * (SPEC D "Grounding in retargeting", "Placement"). The tail is excluded
 * from BOTH the calibration minimum f_body and the per-frame probe c(t). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/base.h"
#include "passes/appendage_internal.h"
#include "passes/retarget_internal.h"
#include "tailbone/retarget.h"


void tb_ground_supports_free(tb_ground_supports *s)
{
    if (!s)
        return;
    free(s->bind_pos);
    free(s->bind_y);
    free(s->joints);
    free(s->weights);
    free(s->vertex);
    free(s->kind);
    memset(s, 0, sizeof *s);
}

/* Per skin joint: 1 when it is a Tail_* bone made by tailbone. */
static uint8_t *tb__tail_joints(const tb_model *m)
{
    uint8_t *t = calloc((size_t)m->skin_joint_count + 1, 1);
    if (!t)
        return NULL;
    for (int k = 0; k < m->skin_joint_count; k++) {
        int c, i;
        const char *name = m->skel.names ? m->skel.names[m->skin_joints[k]] : NULL;
        t[k] = (uint8_t)(name && tb_tail_name_parse(name, &c, &i));
    }
    return t;
}

/* SPEC D: T = skin mostly influenced by tail bones (or the caller's mask). */
static int tb__is_tail(const tb_model *m, size_t v, const uint8_t *tail_joint, const uint8_t *mask)
{
    if (mask && mask[v])
        return 1;
    float tail = 0, all = 0;
    for (int q = 0; q < m->influences; q++) {
        float w = m->weights[v * (size_t)m->influences + (size_t)q];
        if (w <= 0)
            continue;
        all += w;
        if (tail_joint[m->joints[v * (size_t)m->influences + (size_t)q]])
            tail += w;
    }
    return all > 0 && tail > 0.5f * all;
}

/* Skin joint with the largest weight, or -1 for an unweighted vertex. */
static int tb__dominant(const tb_model *m, size_t v)
{
    int best = -1;
    float bw = 0;
    for (int q = 0; q < m->influences; q++) {
        float w = m->weights[v * (size_t)m->influences + (size_t)q];
        if (w > bw) {
            bw = w;
            best = m->joints[v * (size_t)m->influences + (size_t)q];
        }
    }
    return best;
}

/* Role of a joint or of its nearest ancestor with one. */
static tb_role tb__role_up(const tb_model *m, int j)
{
    for (; j >= 0; j = m->skel.parents[j])
        if (m->roles[j] != TB_ROLE_NONE)
            return m->roles[j];
    return TB_ROLE_NONE;
}

/* Per skin joint: tb__role_up of its joint (looked up once, not a vertex
 * at a time); NULL when out of memory. */
static tb_role *tb__skin_roles_up(const tb_model *m)
{
    tb_role *up = malloc(((size_t)m->skin_joint_count + 1) * sizeof *up);
    for (int k = 0; up && k < m->skin_joint_count; k++)
        up[k] = tb__role_up(m, m->skin_joints[k]);
    return up;
}

/* Bind heights that separate the regions of a leg (NAN when unknown). */
typedef struct tb__levels {
    float ankle, knee;
} tb__levels;

/* World position at bind of a bind-space point: M × p. */
static void tb__to_world(float out[3], const float M[16], const float p[3])
{
    float r[3];
    for (int i = 0; i < 3; i++)
        r[i] = M[i] * p[0] + M[4 + i] * p[1] + M[8 + i] * p[2] + M[12 + i];
    memcpy(out, r, sizeof r);
}

static float tb__joint_y(const tb_model *m, const float M[16], int j)
{
    float w[3];
    tb__to_world(w, M, &m->skel.bind_world[j][12]);
    return w[1];
}

static float tb__mean_y(const tb_model *m, const float M[16], tb_role a, tb_role b)
{
    int ja = m->role_joint[a], jb = m->role_joint[b];
    if (ja < 0 && jb < 0)
        return NAN;
    if (ja < 0 || jb < 0)
        return tb__joint_y(m, M, ja >= 0 ? ja : jb);
    return 0.5f * (tb__joint_y(m, M, ja) + tb__joint_y(m, M, jb));
}

/* E: skin the feet's contact handles — dominant bone a foot or toe (or a
 * helper below one), or a shin holding the foot's skin below the ankle (riggers
 * often weight the whole foot to the shin). */
static int tb__is_foot(tb_role r, float y, const tb__levels *lv)
{
    if (r == TB_ROLE_LEFT_FOOT || r == TB_ROLE_LEFT_TOE || r == TB_ROLE_RIGHT_FOOT || r == TB_ROLE_RIGHT_TOE)
        return 1;
    return (r == TB_ROLE_LEFT_LEG || r == TB_ROLE_RIGHT_LEG) && y <= lv->ankle;
}

/* Skin on a torso or head bone that hangs below the knees is no part of the
 * body's support: it is an appendage (tail, long cape) whose own solver
 * handles contact. Counting it would lift the pelvis (SPEC D). */
static int tb__is_hanging(tb_role r, float y, const tb__levels *lv)
{
    tb_role_class c = tb_role_class_of(r);
    return (c == TB_CLASS_PELVIS || c == TB_CLASS_SPINE || c == TB_CLASS_HEAD) && y < lv->knee;
}

/* A candidate: key = its group (dominant skin joint * 4 + tb_support_kind)
 * << 32 | its world height at bind as an ordered key; comp its vertex; v
 * the height's own bits (tb__cand_y), so the sort needs no other array. */
typedef tb__cell_entry tb__cand;

static uint32_t tb__cand_group(const tb__cand *c)
{
    return (uint32_t)(c->key >> 32);
}

static float tb__cand_y(const tb__cand *c)
{
    float y;
    memcpy(&y, &c->v, sizeof y);
    return y;
}

/* The float's bits as an unsigned integer in the order of the values (+0
 * and -0 equal, as the comparison has them); NaN has no place. */
static uint32_t tb__y_key(float y)
{
    float z = y + 0.0f; /* -0 -> +0 */
    uint32_t u;
    memcpy(&u, &z, sizeof u);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

static void tb__cand_set(tb__cand *c, uint32_t group, float y, uint32_t v)
{
    c->key = (uint64_t)group << 32 | tb__y_key(y);
    c->comp = v;
    memcpy(&c->v, &y, sizeof y);
}

/* By group, then height, then vertex: the order of the supports. */
static int tb__cand_cmp(const void *a, const void *b)
{
    const tb__cand *x = a, *y = b;
    uint32_t gx = tb__cand_group(x), gy = tb__cand_group(y);
    float yx = tb__cand_y(x), yy = tb__cand_y(y);
    if (gx != gy)
        return gx < gy ? -1 : 1;
    if (yx != yy)
        return yx < yy ? -1 : 1;
    return x->comp < y->comp ? -1 : x->comp > y->comp;
}

/* The order qsort with tb__cand_cmp gives (no two candidates are equal: the
 * vertex differs), by radix passes (tb__sort_cells: the key orders by group
 * then height, comp is the vertex, so v never decides); qsort itself when a
 * height is NaN (no order). */
static void tb__cand_sort(tb__cand *cand, size_t n)
{
    int nan = 0;
    for (size_t i = 0; i < n; i++)
        nan |= tb__cand_y(&cand[i]) != tb__cand_y(&cand[i]);
    if (nan)
        qsort(cand, n, sizeof *cand, tb__cand_cmp);
    else
        tb__sort_cells(cand, n);
}

static uint32_t tb__hash(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Every skinned vertex as a candidate: its group (dominant bone × kind:
 * tail, hanging, foot or body) and its world height at bind; returns how
 * many, *hanging those taken for the tail as hanging below the knees. */
static size_t tb__gs_candidates(tb__cand *cand, const tb_model *m, const tb_ground_desc *d,
                                const uint8_t *tail_joint, const tb_role *up, const uint8_t *tail_mask,
                                size_t *hanging)
{
    float M[16];
    tb_model_bind_to_world(m, M);
    tb__levels lv = {tb__mean_y(m, M, TB_ROLE_LEFT_FOOT, TB_ROLE_RIGHT_FOOT),
                     tb__mean_y(m, M, TB_ROLE_LEFT_LEG, TB_ROLE_RIGHT_LEG)};
    size_t n = 0;
    *hanging = 0;
    for (size_t v = 0; v < m->vertex_count; v++) {
        int k = tb__dominant(m, v);
        if (k < 0)
            continue;
        float wp[3];
        tb__to_world(wp, M, m->positions + v * 3);
        float y = wp[1];
        uint32_t kind = TB_SUPPORT_BODY;
        if (tb__is_tail(m, v, tail_joint, tail_mask)) {
            kind = TB_SUPPORT_TAIL;
        } else if (!d->keep_hanging && tb__is_hanging(up[k], y, &lv)) {
            kind = TB_SUPPORT_TAIL;
            (*hanging)++;
        } else if (tb__is_foot(up[k], y, &lv)) {
            kind = TB_SUPPORT_FOOT;
        }
        /* world height at bind: the lowest of a group touch the floor first */
        tb__cand_set(&cand[n], (uint32_t)k * 4u + kind, y, (uint32_t)v);
        n++;
    }
    return n;
}

/* Room for cap supports of inf influences; 0 when out of memory. */
static int tb__gs_alloc(tb_ground_supports *out, size_t cap, int inf)
{
    out->influences = inf;
    out->bind_pos = malloc(cap * 3 * sizeof(float));
    out->bind_y = malloc(cap * sizeof(float));
    out->joints = malloc(cap * (size_t)inf * sizeof(uint16_t));
    out->weights = malloc(cap * (size_t)inf * sizeof(float));
    out->vertex = malloc(cap * sizeof(uint32_t));
    out->kind = malloc(cap);
    return out->bind_pos && out->bind_y && out->joints && out->weights && out->vertex && out->kind;
}

/* SPEC D: per group of the sorted candidates, the few lowest (where contact
 * happens) plus strata over its height, one hashed pick a stratum. */
static void tb__gs_sample(tb_ground_supports *out, const tb_model *m, const tb_ground_desc *d, const tb__cand *cand,
                          size_t n)
{
    int inf = out->influences;
    size_t count = 0;
    for (size_t g0 = 0; g0 < n;) {
        size_t g1 = g0;
        while (g1 < n && tb__cand_group(&cand[g1]) == tb__cand_group(&cand[g0]))
            g1++;
        size_t size = g1 - g0;
        size_t low = size < (size_t)d->lowest_per_bone ? size : (size_t)d->lowest_per_bone;
        size_t rest = size - low;
        size_t strata = rest < (size_t)d->sampled_per_bone ? rest : (size_t)d->sampled_per_bone;
        for (size_t s = 0; s < low + strata; s++) {
            size_t idx;
            if (s < low) {
                idx = g0 + s;
            } else {
                size_t k = s - low;
                size_t a = low + rest * k / strata, b = low + rest * (k + 1) / strata;
                uint32_t h = tb__hash(d->seed ^ tb__hash(tb__cand_group(&cand[g0]) * 977u + (uint32_t)k));
                idx = g0 + a + (b > a ? h % (b - a) : 0);
            }
            uint32_t v = cand[idx].comp;
            memcpy(out->bind_pos + count * 3, m->positions + (size_t)v * 3, 3 * sizeof(float));
            out->bind_y[count] = tb__cand_y(&cand[idx]);
            memcpy(out->joints + count * (size_t)inf, m->joints + (size_t)v * (size_t)inf,
                   (size_t)inf * sizeof(uint16_t));
            memcpy(out->weights + count * (size_t)inf, m->weights + (size_t)v * (size_t)inf,
                   (size_t)inf * sizeof(float));
            out->vertex[count] = v;
            out->kind[count] = (uint8_t)(tb__cand_group(&cand[g0]) & 3u);
            count++;
        }
        g0 = g1;
    }
    out->count = (int)count;
}

/* The supports by kind, and SPEC D's calibration: f_body = min over S \ T
 * of bind y (0 when there is none). */
static void tb__gs_calibrate(tb_ground_supports *out)
{
    out->f_body = INFINITY;
    for (int i = 0; i < out->count; i++) {
        if (out->kind[i] == TB_SUPPORT_TAIL) {
            out->tail_count++;
            continue;
        }
        if (out->kind[i] == TB_SUPPORT_FOOT)
            out->foot_count++;
        else
            out->body_count++;
        if (out->bind_y[i] < out->f_body)
            out->f_body = out->bind_y[i];
    }
    if (!isfinite(out->f_body))
        out->f_body = 0;
}

tb_result tb_ground_supports_build(tb_ground_supports *out, const tb_model *m,
                                   const uint8_t *tail_mask, const tb_ground_desc *desc,
                                   tb_error *err)
{
    memset(out, 0, sizeof *out);
    tb_ground_desc d = desc ? *desc : (tb_ground_desc){0};
    if (d.lowest_per_bone < 0 || d.sampled_per_bone < 0)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_ground_desc.lowest_per_bone and sampled_per_bone must be >= 0");
    if (d.lowest_per_bone == 0)
        d.lowest_per_bone = 8;
    if (d.sampled_per_bone == 0)
        d.sampled_per_bone = 24;
    if (d.seed == 0)
        d.seed = 0x7a11b0e5u;
    uint8_t *tail_joint = tb__tail_joints(m);
    tb_role *up = tb__skin_roles_up(m);
    tb__cand *cand = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *cand);
    tb_result r = TB_OK;
    if (!tail_joint || !up || !cand) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    size_t hanging, n = tb__gs_candidates(cand, m, &d, tail_joint, up, tail_mask, &hanging);
    tb__cand_sort(cand, n);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++)
        groups += i == 0 || tb__cand_group(&cand[i]) != tb__cand_group(&cand[i - 1]);
    size_t per = (size_t)d.lowest_per_bone + (size_t)d.sampled_per_bone;
    if (!tb__gs_alloc(out, groups * per + 1, m->influences)) {
        tb_ground_supports_free(out);
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    tb__gs_sample(out, m, &d, cand, n);
    out->hanging_vertex_count = hanging;
    tb__gs_calibrate(out);
done:
    free(cand);
    free(up);
    free(tail_joint);
    return r;
}

/* Support i's y at the frame (tb_skin_point_axis), into lows[kind] when
 * lower and its kind is asked. */
static inline void tb__ground_low(const tb_ground_supports *s, int i, unsigned kinds, const float (*skin_mats)[16],
                                  float lows[3])
{
    const size_t inf = (size_t)s->influences;
    unsigned k = s->kind[i];
    if (k > 2 || !(kinds >> k & 1u))
        return;
    float y = tb_skin_point_axis(s->bind_pos + (size_t)i * 3, s->joints + (size_t)i * inf,
                                 s->weights + (size_t)i * inf, s->influences, skin_mats, 1);
    if (y < lows[k])
        lows[k] = y;
}

void tb__ground_lows(const tb_ground_supports *s, unsigned kinds, const float (*skin_mats)[16], float lows[3])
{
    lows[0] = lows[1] = lows[2] = INFINITY;
    for (int i = 0; i < s->count; i++)
        tb__ground_low(s, i, kinds, skin_mats, lows);
}

void tb__ground_probes_free(tb__ground_probes *gp)
{
    free(gp->segs);
    free(gp->x);
    free(gp->joint);
    free(gp->w);
    memset(gp, 0, sizeof *gp);
}

/* Point i of the list into lane at of gp. */
static void tb__ground_probe_put(tb__ground_probes *gp, const tb_ground_supports *s, int i, int at)
{
    const size_t inf = (size_t)s->influences, cap = (size_t)gp->cap;
    const float *p = s->bind_pos + (size_t)i * 3;
    gp->x[at] = p[0], gp->y[at] = p[1], gp->z[at] = p[2];
    float wsum = 0.0f;
    for (size_t k = 0; k < inf; k++) {
        float w = s->weights[(size_t)i * inf + k];
        gp->w[k * cap + (size_t)at] = w;
        gp->joint[k * cap + (size_t)at] = w > 0.0f ? s->joints[(size_t)i * inf + k] : 0;
        if (w > 0.0f)
            wsum += w;
    }
    gp->none[at] = wsum > 0.0f ? 0 : 0xFFFFFFFFu;
    gp->inv[at] = wsum > 0.0f ? 1.0f / wsum : 0.0f;
}

/* Support i's joint of the largest positive weight (-1: none). */
static int tb__probe_dominant(const tb_ground_supports *s, int i)
{
    const size_t inf = (size_t)s->influences;
    int best = -1;
    float bw = 0;
    for (size_t k = 0; k < inf; k++) {
        float w = s->weights[(size_t)i * inf + k];
        if (w > bw)
            bw = w, best = s->joints[(size_t)i * inf + k];
    }
    return best;
}

/* Segments of kind k over the list (a run of up to 32 with one dominant
 * joint); with segs NULL only counted. Returns the segments; *lanes the
 * lanes they take (each padded to a multiple of 4). */
static int tb__ground_segments(const tb_ground_supports *s, const int *list, int n, unsigned k, tb__ground_seg *segs,
                               int *lanes)
{
    int count = 0, run = 0, dom = -2;
    *lanes = 0;
    for (int i = 0; i < n; i++) {
        if (s->kind[list[i]] != k)
            continue;
        int d = tb__probe_dominant(s, list[i]);
        if (run == 0 || run == 32 || d != dom) {
            if (run)
                *lanes += (run + 3) / 4 * 4;
            if (segs)
                segs[count] = (tb__ground_seg){.at = *lanes};
            count++, run = 0, dom = d;
        }
        if (segs)
            segs[count - 1].n++;
        run++;
    }
    if (run)
        *lanes += (run + 3) / 4 * 4;
    return count;
}

/* A segment's bound: the joints its weights name, its sphere. */
static void tb__ground_seg_bound(tb__ground_seg *sg, const tb__ground_probes *gp)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    sg->nj = 0;
    int ok = 1;
    for (int i = sg->at; i < sg->at + sg->n; i++) {
        const float p[3] = {gp->x[i], gp->y[i], gp->z[i]};
        for (int a = 0; a < 3; a++)
            lo[a] = p[a] < lo[a] ? p[a] : lo[a], hi[a] = p[a] > hi[a] ? p[a] : hi[a];
        ok &= !gp->none[i];
        for (int k = 0; k < gp->influences && ok; k++) {
            const size_t o = (size_t)k * (size_t)gp->cap + (size_t)i;
            if (!(gp->w[o] > 0.0f))
                continue;
            int q = 0;
            while (q < sg->nj && sg->joints[q] != gp->joint[o])
                q++;
            if (q == sg->nj && (ok = sg->nj < 8))
                sg->joints[sg->nj++] = gp->joint[o];
        }
    }
    float r2 = 0;
    for (int a = 0; a < 3; a++)
        sg->c[a] = 0.5f * (lo[a] + hi[a]);
    for (int i = sg->at; i < sg->at + sg->n; i++) {
        float d[3] = {gp->x[i] - sg->c[0], gp->y[i] - sg->c[1], gp->z[i] - sg->c[2]};
        float q = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        r2 = q > r2 ? q : r2;
    }
    sg->r = 1.001f * sqrtf(r2) + 1e-6f;
    if (!ok || !isfinite(sg->r) || !isfinite(sg->c[0] + sg->c[1] + sg->c[2]))
        sg->nj = 0;
}

int tb__ground_probes_make(tb__ground_probes *gp, const tb_ground_supports *s, const int *list, int n)
{
    memset(gp, 0, sizeof *gp);
    int lanes[3], nseg = 0, cap = 0;
    for (unsigned k = 0; k < 3; k++) {
        gp->seg_at[k] = nseg;
        gp->seg_n[k] = tb__ground_segments(s, list, n, k, NULL, &lanes[k]);
        nseg += gp->seg_n[k];
        cap += lanes[k];
    }
    gp->cap = cap;
    gp->influences = s->influences;
    const size_t c = (size_t)cap + 4, inf = (size_t)(s->influences > 0 ? s->influences : 0);
    gp->segs = calloc((size_t)nseg + 1, sizeof *gp->segs);
    gp->x = calloc(6 * c, sizeof(float)); /* x, y, z, inv, none */
    gp->joint = calloc(inf * c + 1, sizeof *gp->joint);
    gp->w = calloc(inf * c + 1, sizeof *gp->w);
    if (!gp->segs || !gp->x || !gp->joint || !gp->w) {
        tb__ground_probes_free(gp);
        return 0;
    }
    gp->y = gp->x + c, gp->z = gp->y + c, gp->inv = gp->z + c;
    gp->none = (uint32_t *)(void *)(gp->inv + c);
    int base = 0;
    for (unsigned k = 0; k < 3; k++) {
        tb__ground_seg *sg = gp->segs + gp->seg_at[k];
        int l;
        tb__ground_segments(s, list, n, k, sg, &l);
        for (int q = 0; q < gp->seg_n[k]; q++)
            sg[q].at += base;
        int q = 0, in = 0;
        for (int i = 0; i < n; i++) {
            if (s->kind[list[i]] != k)
                continue;
            if (in == sg[q].n)
                q++, in = 0;
            tb__ground_probe_put(gp, s, list[i], sg[q].at + in++);
        }
        for (q = 0; q < gp->seg_n[k]; q++)
            tb__ground_seg_bound(&sg[q], gp);
        base += lanes[k];
    }
    return 1;
}

/* The y of the four points from at: tb_skin_point_axis's operations, in
 * its order, four lanes at once (a weight not > 0 leaves its lane's sum
 * as it was). */
static void tb__ground_probe4(const tb__ground_probes *gp, int at, const float (*rows)[4], float y[4])
{
    const size_t cap = (size_t)gp->cap;
#if defined(__SSE2__)
    const __m128 x = _mm_loadu_ps(gp->x + at), py = _mm_loadu_ps(gp->y + at), z = _mm_loadu_ps(gp->z + at);
    __m128 acc = _mm_setzero_ps();
    for (int k = 0; k < gp->influences; k++) {
        const size_t o = (size_t)k * cap + (size_t)at;
        const __m128 w = _mm_loadu_ps(gp->w + o), on = _mm_cmpgt_ps(w, _mm_setzero_ps());
        if (!_mm_movemask_ps(on))
            continue;
        const uint16_t *jn = gp->joint + o;
        __m128 r0 = _mm_loadu_ps(rows[jn[0]]), r1 = _mm_loadu_ps(rows[jn[1]]), r2 = _mm_loadu_ps(rows[jn[2]]),
               r3 = _mm_loadu_ps(rows[jn[3]]);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        __m128 v = _mm_add_ps(_mm_add_ps(_mm_add_ps(_mm_mul_ps(r0, x), _mm_mul_ps(r1, py)), _mm_mul_ps(r2, z)), r3);
        __m128 t = _mm_add_ps(acc, _mm_mul_ps(w, v));
        acc = _mm_or_ps(_mm_and_ps(on, t), _mm_andnot_ps(on, acc));
    }
    const __m128 none = _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(const void *)(gp->none + at)));
    __m128 out = _mm_mul_ps(acc, _mm_loadu_ps(gp->inv + at));
    _mm_storeu_ps(y, _mm_or_ps(_mm_and_ps(none, py), _mm_andnot_ps(none, out)));
#else
    for (int l = 0; l < 4; l++) {
        const size_t i = (size_t)at + (size_t)l;
        float acc = 0.0f;
        for (int k = 0; k < gp->influences; k++) {
            const float w = gp->w[(size_t)k * cap + i];
            if (!(w > 0.0f))
                continue;
            const float *r = rows[gp->joint[(size_t)k * cap + i]];
            acc += w * (r[0] * gp->x[i] + r[1] * gp->y[i] + r[2] * gp->z[i] + r[3]);
        }
        y[l] = gp->none[i] ? gp->y[i] : acc * gp->inv[i];
    }
#endif
}

/* The least y a point of segment sg can have at the pose of rows (len:
 * each row's length), less a margin: y is a weighted mean of its joints'
 * row 1 · p + m13, each at least row · c + m13 − r ‖row‖ on the sphere;
 * the margin (10^-3 of the terms' size) is far above the float rounding of
 * either side. -inf where no bound is kept or a term is not finite. */
static float tb__ground_seg_least(const tb__ground_seg *sg, const float (*rows)[4], const float *len)
{
    float b = INFINITY;
    for (int q = 0; q < sg->nj; q++) {
        const float *r = rows[sg->joints[q]], l = len[sg->joints[q]];
        const float size = fabsf(r[3]) + l * (fabsf(sg->c[0]) + fabsf(sg->c[1]) + fabsf(sg->c[2]) + sg->r);
        const float v = r[0] * sg->c[0] + r[1] * sg->c[1] + r[2] * sg->c[2] + r[3] - sg->r * l - 1e-3f * size;
        if (!(v > -INFINITY && v < INFINITY))
            return -INFINITY;
        b = v < b ? v : b;
    }
    return sg->nj ? b : -INFINITY;
}

/* Segment sg's points' y, in order, into y (up to its lanes rounded to 4). */
static void tb__ground_seg_eval(const tb__ground_probes *gp, const tb__ground_seg *sg, const float (*rows)[4], float *y)
{
    for (int i = 0; i < sg->n; i += 4)
        tb__ground_probe4(gp, sg->at + i, rows, y + i);
}

size_t tb__ground_probes_scratch(const tb__ground_probes *gp, int skin_count)
{
    return (size_t)(skin_count + 1) * 5 + (size_t)(gp->seg_n[0] + gp->seg_n[1] + gp->seg_n[2]) + 4;
}

void tb__ground_probes_lows(const tb__ground_probes *gp, unsigned kinds, const float (*skin_mats)[16], int skin_count,
                            float *scratch, float lows[3])
{
    /* row 1 of each matrix: the y of M p is m[1] x + m[5] y + m[9] z + m[13] */
    float(*rows)[4] = (float(*)[4])(void *)scratch, *len = scratch + (size_t)(skin_count + 1) * 4;
    float *least = len + skin_count + 1;
    for (int j = 0; j < skin_count; j++) {
        rows[j][0] = skin_mats[j][1], rows[j][1] = skin_mats[j][5];
        rows[j][2] = skin_mats[j][9], rows[j][3] = skin_mats[j][13];
        len[j] = sqrtf(rows[j][0] * rows[j][0] + rows[j][1] * rows[j][1] + rows[j][2] * rows[j][2]);
    }
    if (skin_count == 0)
        rows[0][0] = rows[0][1] = rows[0][2] = rows[0][3] = len[0] = 0;
    for (int k = 0; k < 3; k++) {
        lows[k] = INFINITY;
        if (!(kinds >> k & 1u))
            continue;
        const tb__ground_seg *segs = gp->segs + gp->seg_at[k];
        const int ns = gp->seg_n[k];
        /* a low known before the walk: the least bound's segment's */
        int seed = -1;
        float known = INFINITY, ys[36], y[36];
        for (int q = 0; q < ns; q++) {
            least[q] = tb__ground_seg_least(&segs[q], (const float(*)[4])rows, len);
            if (seed < 0 || least[q] < least[seed])
                seed = q;
        }
        if (seed >= 0) {
            tb__ground_seg_eval(gp, &segs[seed], (const float(*)[4])rows, ys);
            for (int l = 0; l < segs[seed].n; l++)
                known = ys[l] < known ? ys[l] : known;
        }
        /* the walk in list order: a segment whose least y is above a known
         * low holds no point at or below the kind's low, so no tie either */
        for (int q = 0; q < ns; q++) {
            const tb__ground_seg *sg = &segs[q];
            const float *v = ys;
            if (q != seed) {
                if (least[q] > known)
                    continue;
                tb__ground_seg_eval(gp, sg, (const float(*)[4])rows, y);
                v = y;
            }
            for (int l = 0; l < sg->n; l++) /* in list order: the same low, a tie's zero sign too */
                lows[k] = v[l] < lows[k] ? v[l] : lows[k];
            known = lows[k] < known ? lows[k] : known;
        }
    }
}

/* The candidates are sorted by group and height, so the copies of a point
 * that a flat-shaded or seamed mesh repeats are taken side by side. */
int tb__ground_distinct(const tb_ground_supports *s, int *out)
{
    const size_t inf = (size_t)s->influences;
    int n = 0;
    for (int i = 0; i < s->count; i++) {
        const size_t a = (size_t)i - 1, b = (size_t)i;
        if (i > 0 && s->kind[i - 1] == s->kind[i] &&
            !memcmp(s->bind_pos + a * 3, s->bind_pos + b * 3, 3 * sizeof *s->bind_pos) &&
            !memcmp(s->joints + a * inf, s->joints + b * inf, inf * sizeof *s->joints) &&
            !memcmp(s->weights + a * inf, s->weights + b * inf, inf * sizeof *s->weights))
            continue;
        out[n++] = i;
    }
    return n;
}

float tb_ground_lowest(const tb_ground_supports *s, tb_support_kind kind,
                       const float (*skin_mats)[16], float *scratch)
{
    (void)scratch; /* no scratch needed */
    float lows[3];
    if ((unsigned)kind > 2)
        return INFINITY;
    tb__ground_lows(s, 1u << kind, skin_mats, lows);
    return lows[kind];
}

float tb_ground_clearance(const tb_ground_supports *s, const float (*skin_mats)[16], float *scratch)
{
    /* SPEC D per frame: c(t) = min over S \ (T ∪ E) of y(t) − f_body */
    return tb_ground_lowest(s, TB_SUPPORT_BODY, skin_mats, scratch) - s->f_body;
}

void tb_ground_smooth(float *lift, const float *lift_raw, int n, float dt_s, float smooth_s)
{
    int w = (dt_s > 0 && smooth_s > 0) ? (int)ceilf(smooth_s / dt_s) : 0;
    for (int i = 0; i < n; i++) {
        float best = 0;
        int a = i - w < 0 ? 0 : i - w, b = i + w >= n ? n - 1 : i + w;
        for (int j = a; j <= b; j++) {
            if (lift_raw[j] <= 0)
                continue;
            float x = w ? fabsf((float)(i - j)) * dt_s / smooth_s : 0;
            float k = x >= 1 ? 0 : 0.5f * (1 + cosf(TB_PI_F * x));
            if (lift_raw[j] * k > best)
                best = lift_raw[j] * k;
        }
        lift[i] = best;
    }
}

tb_result tb_ground_placement(tb_placement *out, const tb_model *m, const uint8_t *tail_mask,
                              tb_error *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *tail_joint = tb__tail_joints(m);
    tb_role *up = tb__skin_roles_up(m);
    if (!tail_joint || !up) {
        free(tail_joint);
        free(up);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    float M[16];
    tb_model_bind_to_world(m, M);
    tb__levels lv = {tb__mean_y(m, M, TB_ROLE_LEFT_FOOT, TB_ROLE_RIGHT_FOOT),
                     tb__mean_y(m, M, TB_ROLE_LEFT_LEG, TB_ROLE_RIGHT_LEG)};
    float body = INFINITY, all = INFINITY;
    for (int a = 0; a < 3; a++)
        out->frame_min[a] = INFINITY, out->frame_max[a] = -INFINITY;
    for (size_t v = 0; v < m->vertex_count; v++) {
        float wp[3];
        tb__to_world(wp, M, m->positions + v * 3);
        float y = wp[1];
        for (int a = 0; a < 3; a++) {
            if (wp[a] < out->frame_min[a])
                out->frame_min[a] = wp[a];
            if (wp[a] > out->frame_max[a])
                out->frame_max[a] = wp[a];
        }
        if (y < all)
            all = y;
        int k = tb__dominant(m, v);
        if (tb__is_tail(m, v, tail_joint, tail_mask) || (k >= 0 && tb__is_hanging(up[k], y, &lv))) {
            out->tail_vertex_count++;
            continue;
        }
        if (y < body)
            body = y;
    }
    free(tail_joint);
    free(up);
    if (!isfinite(body))
        body = isfinite(all) ? all : 0;
    out->body_min_y = body;
    out->all_min_y = isfinite(all) ? all : 0;
    out->ground_offset_y = -body;
    if (!m->vertex_count)
        memset(out->frame_min, 0, sizeof out->frame_min), memset(out->frame_max, 0, sizeof out->frame_max);
    return TB_OK;
}
