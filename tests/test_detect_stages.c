/* Detection's stages before classify (SPEC A; src/passes/appendage.c and
 * detect.c, declared in passes/detect_internal.h), each called alone on a
 * detector state filled by hand: a five-joint skeleton (hips, spine, left
 * thigh, shin, foot; H 1.8, +Y up, facing +Z) and a few welded vertices
 * with the marks the stages before would have left (far, off the bone,
 * shells, edges). What each stage must do:
 *   distance  (A1, A2): far beyond far_fraction H from every bone;
 *   envelope  (A10): skin off the bone and outside its bone's envelope is
 *             far, far grows through the off-bone skin it touches;
 *   pieces    (A3, A4): one piece per far part, its collar, its attachment;
 *   grouping  (A6): pieces in a row join, a gap or a shell round a bone
 *             keeps them apart;
 *   measures  (A5): centroid ratio, elongation, radius. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/detect_internal.h"

enum { HIPS, SPINE, THIGH, SHIN, FOOT, NJ };
enum { MAXV = 512, MAXE = 2048, MAXT = 1024 };

static const float joint_pos[NJ][3] = {
    {0, 1.0f, 0}, {0, 1.3f, 0}, {0.3f, 1.0f, 0}, {0.3f, 0.5f, 0}, {0.3f, 0.05f, 0}};

typedef struct tiny {
    tb_model m;
    int parents[NJ];
    const char *names[NJ];
    float bw[NJ][16];
    tb_role roles[NJ];
    tb__state st;
    size_t nv;
    float pos[MAXV * 3], normal[MAXV * 3];
    uint8_t thin[MAXV], far[MAXV];
    uint32_t shell[MAXV]; /* a shell label per vertex (its root: the first vertex given it) */
    uint32_t edges[MAXE * 2];
    size_t ne;
    uint32_t tris[MAXT * 3]; /* the model's triangles (over the vertices given: the weld is the identity) */
    size_t nt;
    uint8_t has_ibm[NJ];
} tiny;

/* The skeleton and the state's bones: segments hips → spine, thigh → shin,
 * shin → foot (joints 0, 2, 3). */
static tiny *tiny_new(void)
{
    tiny *t = calloc(1, sizeof *t);
    assert_non_null(t);
    static const char *const names[NJ] = {"Hips", "Spine", "LeftUpLeg", "LeftLeg", "LeftFoot"};
    static const int parents[NJ] = {-1, HIPS, HIPS, THIGH, SHIN};
    static const tb_role roles[NJ] = {TB_ROLE_HIPS, TB_ROLE_SPINE, TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG,
                                      TB_ROLE_LEFT_FOOT};
    for (int j = 0; j < NJ; j++) {
        t->parents[j] = parents[j];
        t->names[j] = names[j];
        t->roles[j] = roles[j];
        t->has_ibm[j] = 1;
        for (int k = 0; k < 16; k++)
            t->bw[j][k] = k % 5 == 0 ? 1.0f : 0.0f;
        memcpy(&t->bw[j][12], joint_pos[j], sizeof joint_pos[j]);
    }
    tb_model *m = &t->m;
    m->skel.joint_count = NJ;
    m->skel.parents = t->parents;
    m->skel.names = t->names;
    m->skel.bind_world = (const float(*)[16])t->bw;
    m->skel.has_ibm = t->has_ibm;
    m->roles = t->roles;
    for (int r = 0; r < TB_ROLE_COUNT; r++)
        m->role_joint[r] = -1;
    for (int j = 0; j < NJ; j++)
        m->role_joint[roles[j]] = j;
    m->height = 1.8f;
    for (int k = 0; k < 3; k++) /* the merge's grid starts at the box */
        m->bbox_min[k] = -1, m->bbox_max[k] = 2;
    tb__state *st = &t->st;
    st->m = m;
    st->d = tb_appendage_defaults(NULL);
    st->H = 1.8f;
    st->pelvis = HIPS;
    st->up[1] = 1, st->fwd[2] = 1;
    st->cls = malloc(NJ * sizeof *st->cls);
    st->is_node = malloc(NJ);
    st->segs = malloc(3 * sizeof *st->segs);
    assert_true(st->cls && st->is_node && st->segs);
    static const tb_role_class cls[NJ] = {TB_CLASS_PELVIS, TB_CLASS_SPINE, TB_CLASS_THIGH, TB_CLASS_LOWER_LIMB,
                                          TB_CLASS_LOWER_LIMB};
    memcpy(st->cls, cls, sizeof cls);
    memset(st->is_node, 1, NJ);
    tb__seg_set(&st->segs[0], joint_pos[HIPS], joint_pos[SPINE], HIPS);
    tb__seg_set(&st->segs[1], joint_pos[THIGH], joint_pos[SHIN], THIGH);
    tb__seg_set(&st->segs[2], joint_pos[SHIN], joint_pos[FOOT], SHIN);
    st->nseg = 3;
    assert_true(tb__segsoa_init(&st->segsoa, st->segs, st->nseg));
    return t;
}

static uint32_t vert(tiny *t, float x, float y, float z, uint32_t shell, int thin)
{
    assert_true(t->nv < MAXV);
    uint32_t v = (uint32_t)t->nv++;
    t->pos[v * 3] = x, t->pos[v * 3 + 1] = y, t->pos[v * 3 + 2] = z;
    t->shell[v] = shell == UINT32_MAX ? v : shell;
    t->thin[v] = (uint8_t)thin;
    return v;
}

static void edge(tiny *t, uint32_t a, uint32_t b)
{
    assert_true(t->ne < MAXE);
    t->edges[t->ne * 2] = a, t->edges[t->ne * 2 + 1] = b;
    t->ne++;
}

static uint32_t find(uint32_t *uf, uint32_t x)
{
    while (uf[x] != x)
        x = uf[x];
    return x;
}

/* The welded ids are the vertices given: positions, the graph, the marks,
 * the distance to the bones; far as given (far[]), the far parts joined
 * along far-far edges (roots compressed, as prepare leaves them), each
 * shell's size and far count. */
static void tiny_finish(tiny *t)
{
    tb__state *st = &t->st;
    size_t n = t->nv;
    st->nw = n;
    st->wpos = malloc(n * 3 * sizeof *st->wpos);
    st->mpos = malloc(n * 3 * sizeof *st->mpos);
    st->mrad = calloc(n, sizeof *st->mrad);
    st->wdist = malloc(n * sizeof *st->wdist);
    st->wseg = malloc(n * sizeof *st->wseg);
    st->far = malloc(n);
    st->thin = malloc(n);
    st->shell = malloc(n * sizeof *st->shell);
    st->comp_uf = malloc(n * sizeof *st->comp_uf);
    st->shell_total = calloc(n, sizeof *st->shell_total);
    st->shell_total_pre = calloc(n, sizeof *st->shell_total_pre);
    st->shell_far = calloc(n, sizeof *st->shell_far);
    st->wid = malloc(n * sizeof *st->wid);
    st->model_off = malloc((n + 1) * sizeof *st->model_off);
    st->model_list = malloc(n * sizeof *st->model_list);
    assert_true(st->wpos && st->mpos && st->mrad && st->wdist && st->wseg && st->far && st->thin && st->shell &&
                st->comp_uf && st->shell_total && st->shell_total_pre && st->shell_far && st->wid &&
                st->model_off && st->model_list);
    /* one model vertex per welded id, the model's triangles those given */
    for (size_t w = 0; w <= n; w++)
        st->model_off[w] = (uint32_t)w;
    for (size_t w = 0; w < n; w++)
        st->wid[w] = st->model_list[w] = (uint32_t)w;
    t->m.vertex_count = n;
    t->m.positions = t->pos;
    t->m.triangles = t->tris;
    t->m.triangle_count = t->nt;
    memcpy(st->wpos, t->pos, n * 3 * sizeof *st->wpos);
    memcpy(st->mpos, t->pos, n * 3 * sizeof *st->mpos);
    memcpy(st->far, t->far, n);
    memcpy(st->thin, t->thin, n);
    memcpy(st->shell, t->shell, n * sizeof *st->shell);
    tb_error err;
    assert_int_equal(tb__graph_from_edges(&st->g, n, t->edges, t->ne, &err), TB_OK);
    for (size_t w = 0; w < n; w++) {
        st->wdist[w] = tb__segsoa_nearest(&st->segsoa, st->wpos + w * 3, &st->wseg[w]);
        st->comp_uf[w] = (uint32_t)w;
    }
    for (size_t e = 0; e < t->ne; e++) {
        uint32_t a = t->edges[e * 2], b = t->edges[e * 2 + 1];
        uint32_t ra = find(st->comp_uf, a), rb = find(st->comp_uf, b);
        if (st->far[a] && st->far[b]) /* the least index the root (tb__unite's) */
            st->comp_uf[ra > rb ? ra : rb] = ra > rb ? rb : ra;
    }
    for (size_t w = 0; w < n; w++) {
        st->comp_uf[w] = find(st->comp_uf, (uint32_t)w);
        st->shell_total[st->shell[w]]++;
        st->shell_total_pre[st->shell[w]]++;
        st->shell_far[st->shell[w]] += st->far[w];
    }
}

static void tiny_free(tiny *t)
{
    tb__state_free(&t->st);
    free(t);
}

/* ---- distance (A1, A2) ---------------------------------------------------- */

static void distance_marks_far_beyond_the_band(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    float band = t->st.d.far_fraction * t->st.H; /* 0.126 */
    uint32_t on = vert(t, 0.3f + 0.5f * band, 0.75f, 0, UINT32_MAX, 0);   /* beside the thigh, inside the band */
    uint32_t off = vert(t, 0.3f + 1.5f * band, 0.75f, 0, UINT32_MAX, 0);  /* beside it, outside */
    uint32_t back = vert(t, 0, 1.1f, -1.2f * band, UINT32_MAX, 0);        /* behind the spine, outside */
    uint32_t end = vert(t, 0.3f, 0.05f - 0.5f * band, 0, UINT32_MAX, 0); /* past the foot, inside */
    tiny_finish(t);
    memset(t->st.far, 7, t->st.nw); /* written over, not or-ed into */
    tb__prep_distance(&t->st);
    assert_int_equal(t->st.far[on], 0);
    assert_int_equal(t->st.far[off], 1);
    assert_int_equal(t->st.far[back], 1);
    assert_int_equal(t->st.far[end], 0);
    /* the nearest segment and the distance to it */
    assert_int_equal(t->st.wseg[on], 1);
    assert_int_equal(t->st.wseg[back], 0);
    assert_int_equal(t->st.wseg[end], 2);
    assert_float_equal(t->st.wdist[on], 0.5f * band, 1e-6f);
    assert_float_equal(t->st.wdist[back], 1.2f * band, 1e-6f);
    assert_float_equal(t->st.wdist[end], 0.5f * band, 1e-6f);
    tiny_free(t);
}

/* ---- envelope (A10) ------------------------------------------------------- */

/* A ring of `count` vertices round the thigh at height y and radius r,
 * their normals pointing away from the bone: the skin that sets the
 * thigh's envelope. */
static void thigh_ring(tiny *t, int count, float y, float r)
{
    for (int k = 0; k < count; k++) {
        float a = 6.2831853f * ((float)k + 0.5f) / (float)count, c = cosf(a), s = sinf(a);
        uint32_t v = vert(t, 0.3f + r * c, y, r * s, 0, 0);
        t->normal[v * 3] = c, t->normal[v * 3 + 2] = s;
    }
}

typedef struct envelope_case {
    uint32_t out, in, grown, low, thick;
} envelope_case;

/* The thigh's skin at radius 0.06 (16 samples facing away: the envelope is
 * 0.06; far beyond 0.06 × 1.15 + 0.01 H = 0.087); beside it, on its side
 * away from the body: off-bone skin at 0.10 (out), at 0.08 (in), at 0.07
 * touching `out` (grown: past 0.8 of the envelope), at 0.04 touching `out`
 * (low), and skin round a bone (not thin) at 0.10. None is far by A2
 * (0.126). */
static envelope_case envelope_setup(tiny *t, int ring)
{
    envelope_case c;
    thigh_ring(t, ring, 0.75f, 0.06f);
    c.out = vert(t, 0.40f, 0.75f, 0, UINT32_MAX, 1);
    c.in = vert(t, 0.38f, 0.70f, 0, UINT32_MAX, 1);
    c.grown = vert(t, 0.37f, 0.80f, 0, UINT32_MAX, 1);
    c.low = vert(t, 0.34f, 0.78f, 0, UINT32_MAX, 1);
    c.thick = vert(t, 0.40f, 0.60f, 0, UINT32_MAX, 0);
    edge(t, c.out, c.grown);
    edge(t, c.out, c.low);
    tiny_finish(t);
    return c;
}

static void envelope_far_is_off_bone_skin_outside_the_envelope(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    envelope_case c = envelope_setup(t, 16);
    for (size_t w = 0; w < t->st.nw; w++)
        assert_int_equal(t->st.far[w], 0);
    tb_error err;
    assert_int_equal(tb__envelope_far(&t->st, t->normal, &err), TB_OK);
    assert_int_equal(t->st.far[c.out], 1);   /* beside the thigh, outside its envelope */
    assert_int_equal(t->st.far[c.in], 0);    /* inside it (the margin), touching nothing far */
    assert_int_equal(t->st.far[c.grown], 1); /* inside it, but grown from `out` */
    assert_int_equal(t->st.far[c.low], 0);   /* touching `out`, but nearer the bone than 0.8 of it */
    assert_int_equal(t->st.far[c.thick], 0); /* outside, but its section holds a bone */
    for (uint32_t w = 0; w < 16; w++)
        assert_int_equal(t->st.far[w], 0); /* the thigh's own skin */
    tiny_free(t);
}

static void envelope_needs_eight_samples(void **state)
{
    (void)state;
    /* with 7 samples the thigh keeps the A2 band (0.126 × 1.15 + 0.018) */
    tiny *t = tiny_new();
    envelope_case c = envelope_setup(t, 7);
    tb_error err;
    assert_int_equal(tb__envelope_far(&t->st, t->normal, &err), TB_OK);
    assert_int_equal(t->st.far[c.out], 0);
    assert_int_equal(t->st.far[c.grown], 0);
    tiny_free(t);
    /* with 8 it has its own */
    t = tiny_new();
    c = envelope_setup(t, 8);
    assert_int_equal(tb__envelope_far(&t->st, t->normal, &err), TB_OK);
    assert_int_equal(t->st.far[c.out], 1);
    tiny_free(t);
}

static void envelope_only_on_an_upright_humanoid(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    t->m.body.quadruped = 1; /* its body runs on past the last bone */
    envelope_case c = envelope_setup(t, 16);
    tb_error err;
    assert_int_equal(tb__envelope_far(&t->st, t->normal, &err), TB_OK);
    for (size_t w = 0; w < t->st.nw; w++)
        assert_int_equal(t->st.far[w], 0);
    (void)c;
    tiny_free(t);
}

/* ---- pieces (A3, A4) ------------------------------------------------------ */

/* A strip of far skin (shell s, far) from body vertex `root` outward: n
 * vertices from p0 by step, each joined to the one before. */
static uint32_t far_strip(tiny *t, uint32_t root, const float p0[3], const float step[3], int n, uint32_t shell)
{
    uint32_t prev = root, first = UINT32_MAX;
    for (int k = 0; k < n; k++) {
        uint32_t v = vert(t, p0[0] + (float)k * step[0], p0[1] + (float)k * step[1], p0[2] + (float)k * step[2],
                          shell, 1);
        t->far[v] = 1;
        if (first == UINT32_MAX)
            first = v;
        if (prev != UINT32_MAX)
            edge(t, prev, v);
        prev = v;
    }
    return first;
}

static const tb__comp *comp_of(const tb__state *st, uint32_t w)
{
    for (size_t i = 0; i < st->ncomp; i++)
        for (size_t k = 0; k < st->comps[i].nverts; k++)
            if (st->comps[i].verts[k] == w)
                return &st->comps[i];
    fail_msg("welded id %u is in no piece", w);
    return NULL;
}

static void pieces_collars_and_attachment(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    /* body skin: two vertices behind the shin, two behind the thigh's head,
     * one on the spine; shell 0 */
    uint32_t s1 = vert(t, 0.30f, 0.30f, -0.10f, 0, 0), s2 = vert(t, 0.32f, 0.32f, -0.10f, 0, 0);
    uint32_t h1 = vert(t, 0.25f, 1.05f, -0.10f, 0, 0), h2 = vert(t, 0.27f, 1.05f, -0.10f, 0, 0);
    uint32_t b0 = vert(t, 0, 1.2f, -0.05f, 0, 0);
    edge(t, s1, s2), edge(t, h1, h2), edge(t, b0, h1);
    /* a piece hanging from the shin's skin: both of its first two vertices
     * touch s1 and s2 (each collar vertex once) */
    float p0[3] = {0.31f, 0.31f, -0.15f}, st1[3] = {0, 0, -0.05f};
    uint32_t shin_piece = far_strip(t, s1, p0, st1, 4, 0);
    edge(t, shin_piece, s2), edge(t, shin_piece + 1, s2), edge(t, shin_piece + 1, s1);
    /* a piece from the thigh's head: nearer the thigh than the pelvis, so the
     * thigh wins, and a thigh stands for the body (the pelvis) */
    float q0[3] = {0.26f, 1.05f, -0.15f}, st2[3] = {0, -0.02f, -0.05f};
    uint32_t hip_piece = far_strip(t, h2, q0, st2, 3, 0);
    edge(t, hip_piece, h1);
    /* a piece touching no body skin: no collar, no attachment */
    float f0[3] = {-0.3f, 0.8f, -0.3f}, st3[3] = {0.02f, 0, 0};
    uint32_t floating = far_strip(t, UINT32_MAX, f0, st3, 2, (uint32_t)t->nv); /* its own shell */
    /* one far vertex alone: a piece however small */
    uint32_t bead = vert(t, 0.1f, 0.9f, -0.4f, UINT32_MAX, 1);
    t->far[bead] = 1;
    tiny_finish(t);
    tb_error err;
    assert_int_equal(tb__detect_components(&t->st, &err), TB_OK);
    tb__state *st = &t->st;
    assert_int_equal(st->ncomp, 4);
    const tb__comp *a = comp_of(st, shin_piece), *b = comp_of(st, hip_piece), *f = comp_of(st, floating),
                   *one = comp_of(st, bead);
    assert_int_equal(a->nverts, 4);
    for (size_t k = 0; k < 4; k++)
        assert_int_equal(a->verts[k], shin_piece + k); /* ascending */
    assert_int_equal(a->ncollar, 2);
    assert_int_equal(a->collar[0], s1);
    assert_int_equal(a->collar[1], s2);
    assert_int_equal(a->attach, SHIN);
    assert_int_equal(b->nverts, 3);
    assert_int_equal(b->ncollar, 2);
    assert_int_equal(b->collar[0], h1);
    assert_int_equal(b->collar[1], h2);
    assert_int_equal(b->attach, HIPS);
    assert_int_equal(f->nverts, 2);
    assert_int_equal(f->ncollar, 0);
    assert_int_equal(f->attach, -1);
    assert_int_equal(one->nverts, 1);
    /* its box, its shell; each piece its own group until the merge */
    assert_float_equal(a->bmin[2], -0.30f, 1e-6f);
    assert_float_equal(a->bmax[2], -0.15f, 1e-6f);
    assert_float_equal(f->bmax[0], -0.28f, 1e-6f);
    assert_int_equal(a->shell, 0);
    assert_int_equal(f->shell, floating);
    for (size_t i = 0; i < st->ncomp; i++)
        assert_int_equal(st->comps[i].group, (int)i);
    tiny_free(t);
}

/* ---- grouping (A6, A10) --------------------------------------------------- */

/* A detached piece of its own shell, off the bone, far: rings of `around`
 * vertices (radius r, about an axis along dir through c) from t0 to t1 of
 * the axis, `rings` of them, the first sector at angle a0; joined along and
 * around. Returns its first vertex. */
static uint32_t tube(tiny *t, const float c[3], int axis, float t0, float t1, int rings, int around, float r,
                     float a0, float a1)
{
    uint32_t first = (uint32_t)t->nv;
    for (int i = 0; i < rings; i++)
        for (int k = 0; k < around; k++) {
            float a = a0 + (a1 - a0) * ((float)k + 0.5f) / (float)around;
            float p[3] = {c[0], c[1], c[2]}, along = t0 + (t1 - t0) * (float)i / (float)(rings - 1);
            int u = (axis + 1) % 3, w = (axis + 2) % 3;
            p[axis] += along, p[u] += r * cosf(a), p[w] += r * sinf(a);
            uint32_t v = vert(t, p[0], p[1], p[2], first, 1);
            t->far[v] = 1;
            if (k)
                edge(t, v - 1, v);
            if (i)
                edge(t, v - (uint32_t)around, v);
        }
    return first;
}

static int group_of(const tb__state *st, uint32_t w)
{
    for (size_t i = 0; i < st->ncomp; i++)
        for (size_t k = 0; k < st->comps[i].nverts; k++)
            if (st->comps[i].verts[k] == w)
                return st->comps[i].group;
    fail_msg("welded id %u is in no piece", w);
    return -1;
}

/* Pieces, then the merge, on a finished state; whether the two pieces
 * holding a and b are one group. */
static int joined_finished(tiny *t, uint32_t a, uint32_t b)
{
    tb_error err;
    assert_int_equal(tb__detect_components(&t->st, &err), TB_OK);
    assert_int_equal(tb__detect_merge(&t->st, &err), TB_OK);
    assert_int_equal(t->st.ncomp, 2);
    return group_of(&t->st, a) == group_of(&t->st, b);
}

/* Pieces, then the merge; whether the two pieces holding a and b are one group. */
static int joined(tiny *t, uint32_t a, uint32_t b)
{
    tiny_finish(t);
    return joined_finished(t, a, b);
}

/* After tiny_finish: the local thickness the thickness pass would give a
 * tube along Z round (x, y) of radius r (its n vertices from first): the
 * medial point on the axis, the radius r. */
static void medial_z(tiny *t, uint32_t first, uint32_t n, float x, float y, float r)
{
    for (uint32_t v = first; v < first + n; v++) {
        t->st.mpos[v * 3] = x, t->st.mpos[v * 3 + 1] = y, t->st.mpos[v * 3 + 2] = t->pos[v * 3 + 2];
        t->st.mrad[v] = r;
    }
}

/* A tail piece (radius 0.01) and, in line behind it across a short gap, a
 * tube as long of radius t_r (both round in section): one row when alike
 * in thickness too (the rule's 3×), apart when much thinner. */
static int row_with_thickness(float t_r)
{
    tiny *t = tiny_new();
    float c[3] = {0, 1.0f, 0};
    uint32_t a = tube(t, c, 2, -0.15f, -0.25f, 6, 4, 0.01f, 0, 6.2831853f);
    uint32_t b = tube(t, c, 2, -0.28f, -0.38f, 6, 4, t_r, 0, 6.2831853f);
    tiny_finish(t);
    medial_z(t, a, 24, 0, 1.0f, 0.01f);
    medial_z(t, b, 24, 0, 1.0f, t_r);
    int j = joined_finished(t, a, b);
    tiny_free(t);
    return j;
}

static void grouping_row_pieces_are_alike_in_thickness(void **state)
{
    (void)state;
    assert_true(row_with_thickness(0.006f)); /* 1.7× thinner: a tapering tail */
    assert_false(row_with_thickness(0.0025f)); /* 4× thinner */
    /* the rule itself: extents within 3×; half-thicknesses within 3× where
     * both pieces are round in section (flatness < 2); a flat piece's (a
     * plate's thickness, a spiny vertebra's) and an unknown one (0: an open
     * card) not compared */
    assert_true(tb__row_alike(0.1f, 0.05f, 0.01f, 0.004f, 1.0f, 1.2f));
    assert_false(tb__row_alike(0.1f, 0.03f, 0.01f, 0.01f, 1.0f, 1.0f));
    assert_false(tb__row_alike(0.1f, 0.1f, 0.01f, 0.003f, 1.0f, 1.5f));
    assert_true(tb__row_alike(0.1f, 0.1f, 0.01f, 0.003f, 1.0f, 4.5f));
    assert_true(tb__row_alike(0.1f, 0.1f, 0.01f, 0, 1.0f, 1.0f));
    assert_true(tb__row_alike(0.1f, 0.1f, 0, 0, 1.0f, 1.0f));
}

/* Two pieces of a tail behind the hips, along -Z: 0.1 long, 0.02 thick. */
static void two_in_a_row(tiny *t, float gap, uint32_t *a, uint32_t *b)
{
    float c[3] = {0, 1.0f, 0};
    *a = tube(t, c, 2, -0.15f, -0.25f, 6, 4, 0.01f, 0, 6.2831853f);
    *b = tube(t, c, 2, -0.25f - gap, -0.35f - gap, 6, 4, 0.01f, 0, 6.2831853f);
}

static void grouping_joins_pieces_in_a_row(void **state)
{
    (void)state;
    uint32_t a, b;
    tiny *t = tiny_new();
    two_in_a_row(t, 0.03f, &a, &b); /* a gap under a third of their length */
    assert_true(joined(t, a, b));
    tiny_free(t);
}

static void grouping_keeps_a_long_gap_apart(void **state)
{
    (void)state;
    uint32_t a, b;
    tiny *t = tiny_new();
    two_in_a_row(t, 0.15f, &a, &b); /* a gap longer than either */
    assert_false(joined(t, a, b));
    tiny_free(t);
}

static void grouping_keeps_pieces_off_the_line_apart(void **state)
{
    (void)state;
    /* the same two, side by side: the gap runs across them, not along */
    tiny *t = tiny_new();
    float c0[3] = {0, 1.0f, 0}, c1[3] = {0.05f, 1.0f, 0};
    uint32_t a = tube(t, c0, 2, -0.15f, -0.25f, 6, 4, 0.01f, 0, 6.2831853f);
    uint32_t b = tube(t, c1, 2, -0.15f, -0.25f, 6, 4, 0.01f, 0, 6.2831853f);
    assert_false(joined(t, a, b));
    tiny_free(t);
}

static void grouping_never_joins_a_shell_round_a_bone(void **state)
{
    (void)state;
    /* a cuff all round the thigh (12 sectors, 3 rings: it wraps the bone)
     * and, below it on the same line, a patch of a tail alike in size,
     * 0.05 away: in a row by every other test */
    tiny *t = tiny_new();
    float thigh[3] = {0.3f, 0.6f, 0}, below[3] = {0.3f, 0.35f, 0};
    uint32_t cuff = tube(t, thigh, 1, 0, 0.2f, 3, 12, 0.08f, 0, 6.2831853f);
    uint32_t patch = tube(t, below, 1, 0, 0.2f, 6, 3, 0.08f, 2.6f, 3.7f);
    assert_false(joined(t, cuff, patch));
    assert_true(tb__wraps(&t->st, t->st.comps[0].verts, t->st.comps[0].nverts));
    assert_false(tb__wraps(&t->st, t->st.comps[1].verts, t->st.comps[1].nverts));
    tiny_free(t);
}

/* ---- measures (A5) -------------------------------------------------------- */

static void measures_of_a_straight_tube(void **state)
{
    (void)state;
    /* 5 rings of 4 round a line behind the hips, from z -0.1 to -0.5 */
    tiny *t = tiny_new();
    float c[3] = {0, 1.0f, 0};
    tube(t, c, 2, -0.1f, -0.5f, 5, 4, 0.02f, 0, 6.2831853f);
    tiny_finish(t);
    uint32_t wv[20];
    for (uint32_t k = 0; k < 20; k++)
        wv[k] = k;
    tb_appendage ap;
    memset(&ap, 0, sizeof ap);
    double axis[3];
    tb__detect_measures(&t->st, wv, 20, &ap, axis);
    /* radius: the farthest vertex from the centroid (0, 1, -0.3): an end ring */
    float rad = sqrtf(0.2f * 0.2f + 0.02f * 0.02f);
    assert_float_equal(ap.radius, rad, 1e-5f);
    /* elongation: sqrt(var along / var across) = sqrt(0.02 / 0.0002) */
    assert_float_equal(ap.elongation, 10.0f, 1e-3f);
    /* the centroid stands 0.3 from the nearest bone (the hips → spine segment) */
    assert_float_equal(ap.centroid_ratio, 0.3f / rad, 1e-4f);
    assert_float_equal(fabs(axis[2]), 1.0, 1e-6);
    /* over the first ring alone: round, centred 0.1 behind the hips */
    memset(&ap, 0, sizeof ap);
    tb__detect_measures(&t->st, wv, 4, &ap, axis);
    assert_float_equal(ap.radius, 0.02f, 1e-6f);
    assert_float_equal(ap.centroid_ratio, 0.1f / 0.02f, 1e-3f);
    tiny_free(t);
}

/* ---- far by thickness (A10) ----------------------------------------------- */

static void tri(tiny *t, uint32_t a, uint32_t b, uint32_t c)
{
    assert_true(t->nt < MAXT);
    t->tris[t->nt * 3] = a, t->tris[t->nt * 3 + 1] = b, t->tris[t->nt * 3 + 2] = c;
    t->nt++;
    edge(t, a, b), edge(t, b, c), edge(t, c, a);
}

/* A closed tube, its own shell: `rings` rings of `around` vertices (radius
 * r about an axis along `axis` through c, from t0 to t1 of it) and a cap
 * vertex at each end, its triangles wound one way. Nothing marked far or
 * off the bone. Returns its first vertex. */
static uint32_t closed_tube(tiny *t, const float c[3], int axis, float t0, float t1, int rings, int around, float r)
{
    uint32_t first = (uint32_t)t->nv;
    int u = (axis + 1) % 3, w = (axis + 2) % 3;
    for (int i = 0; i < rings; i++)
        for (int k = 0; k < around; k++) {
            float a = 6.2831853f * (float)k / (float)around, p[3] = {c[0], c[1], c[2]};
            p[axis] += t0 + (t1 - t0) * (float)i / (float)(rings - 1);
            p[u] += r * cosf(a), p[w] += r * sinf(a);
            vert(t, p[0], p[1], p[2], first, 0);
        }
    float p0[3] = {c[0], c[1], c[2]}, p1[3] = {c[0], c[1], c[2]};
    p0[axis] += t0, p1[axis] += t1;
    uint32_t c0 = vert(t, p0[0], p0[1], p0[2], first, 0), c1 = vert(t, p1[0], p1[1], p1[2], first, 0);
    for (int i = 0; i + 1 < rings; i++)
        for (int k = 0; k < around; k++) {
            uint32_t A = first + (uint32_t)(i * around + k), B = first + (uint32_t)(i * around + (k + 1) % around);
            uint32_t C = B + (uint32_t)around, D = A + (uint32_t)around;
            tri(t, A, B, C), tri(t, A, C, D);
        }
    uint32_t last = first + (uint32_t)((rings - 1) * around);
    for (int k = 0; k < around; k++) {
        uint32_t k1 = (uint32_t)((k + 1) % around);
        tri(t, c0, first + k1, first + (uint32_t)k);
        tri(t, c1, last + (uint32_t)k, last + k1);
    }
    return first;
}

static void thickness_samples_one_per_shell_and_cell(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    t->st.d.sample_fraction = 0.1f / 1.8f; /* cells of 0.1 from the box's corner (-1, -1, -1) */
    /* shell 0 along x: cells 10 (x 0 .. 0.1), 11, 13 */
    static const float xs[] = {0.01f, 0.03f, 0.08f, 0.12f, 0.15f, 0.35f};
    for (int k = 0; k < 6; k++)
        vert(t, xs[k], 0.55f, 0.55f, 0, 0);
    for (uint32_t k = 0; k < 5; k++)
        edge(t, k, k + 1);
    /* shell 6 in cell 10 too, its own sample; and a vertex alone in cell 10 */
    uint32_t o = vert(t, 0.02f, 0.55f, 0.55f, UINT32_MAX, 0), o2 = vert(t, 0.06f, 0.55f, 0.55f, o, 0);
    edge(t, o, o2);
    uint32_t alone = vert(t, 0.04f, 0.55f, 0.55f, 0, 0);
    tiny_finish(t);
    uint32_t src[16];
    tb_error err;
    assert_int_equal(tb__thickness_samples(&t->st, src, &err), TB_OK);
    /* the first of each (shell, cell) is a sample; vertex 2, in vertex 0's
     * cell, is one hop from vertex 3's sample and two from 0's */
    static const uint32_t want[] = {0, 0, 3, 3, 3, 5};
    for (int k = 0; k < 6; k++)
        assert_int_equal(src[k], want[k]);
    assert_int_equal(src[o], o);
    assert_int_equal(src[o2], o);
    assert_int_equal(src[alone], alone); /* no sample reaches it: its own */
    tiny_free(t);
}

/* A thin closed tube behind the hips (radius 0.02, along -Z from 0.15 to
 * 0.45 behind the spine bone: no bone in its cross-section) and a thick one
 * round the thigh bone (radius 0.08): the distance stage, then thickness. */
static void far_by_thickness_thin_tube_beside_a_thick_one(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    float behind[3] = {0, 1.1f, 0}, thigh[3] = {0.3f, 0, 0};
    uint32_t thin = closed_tube(t, behind, 2, -0.15f, -0.45f, 7, 16, 0.02f);
    size_t nthin = t->nv - thin;
    uint32_t thick = closed_tube(t, thigh, 1, 0.55f, 0.95f, 5, 16, 0.08f);
    size_t nthick = t->nv - thick;
    tiny_finish(t);
    tb__state *st = &t->st;
    free(st->mpos), free(st->mrad), free(st->thin); /* the stage's own */
    st->mpos = NULL, st->mrad = NULL, st->thin = NULL;
    tb__prep_distance(st);
    tb_error err;
    assert_int_equal(tb__far_by_thickness(st, &err), TB_OK);
    for (size_t k = 0; k < nthin; k++)
        assert_int_equal(st->thin[thin + k], 1);
    for (size_t k = 0; k < nthick; k++)
        assert_int_equal(st->thin[thick + k], 0);
    /* a side vertex of the thin tube: its medial point on the axis, half
     * the tube's width deep (a ray across the 16-gon: 2r) */
    uint32_t side = thin + 3 * 16 + 4;
    assert_float_equal(st->mrad[side], 0.02f, 2e-3f);
    assert_float_equal(st->mpos[side * 3], 0, 2e-3f);
    assert_float_equal(st->mpos[side * 3 + 1], 1.1f, 2e-3f);
    assert_float_equal(st->mpos[side * 3 + 2], -0.30f, 1e-5f);
    /* far: the thin tube by the distance (0.15 and more from the spine), the
     * thick one not (inside the band, and its section holds the bone) */
    for (size_t k = 0; k < nthin; k++)
        assert_int_equal(st->far[thin + k], 1);
    for (size_t k = 0; k < nthick; k++)
        assert_int_equal(st->far[thick + k], 0);
    tiny_free(t);
}

/* Skin off the bone by its section but inside a body shell (a strap's
 * closed tube within the thigh's skin, 0.045 from the bone, radius 0.01)
 * is not; nor is skin whose section passes within thin_margin H (0.018)
 * of a bone (a tube of radius 0.02 beside the shin bone, its axis 0.03
 * from it). Their rays were cast: the medial points are where the
 * section says. */
static void far_by_thickness_drops_enclosed_skin_and_keeps_the_margin(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    float thigh[3] = {0.3f, 0, 0}, strap[3] = {0.345f, 0, 0}, shin[3] = {0.33f, 0, 0};
    uint32_t thick = closed_tube(t, thigh, 1, 0.55f, 0.95f, 5, 16, 0.08f);
    uint32_t inner = closed_tube(t, strap, 1, 0.65f, 0.85f, 5, 16, 0.01f);
    uint32_t beside = closed_tube(t, shin, 1, 0.15f, 0.40f, 6, 16, 0.02f);
    size_t n = t->nv;
    tiny_finish(t);
    tb__state *st = &t->st;
    free(st->mpos), free(st->mrad), free(st->thin);
    st->mpos = NULL, st->mrad = NULL, st->thin = NULL;
    tb__prep_distance(st);
    tb_error err;
    assert_int_equal(tb__far_by_thickness(st, &err), TB_OK);
    for (size_t w = thick; w < n; w++)
        assert_int_equal(st->thin[w], 0);
    /* a vertex of each facing +Z: half its tube's width deep, on its axis */
    uint32_t a = inner + 2 * 16, b = beside + 2 * 16;
    assert_float_equal(st->mrad[a], 0.01f, 1e-3f);
    assert_float_equal(st->mpos[a * 3], 0.345f, 1e-3f);
    assert_float_equal(st->mrad[b], 0.02f, 2e-3f);
    assert_float_equal(st->mpos[b * 3], 0.33f, 2e-3f);
    tiny_free(t);
}

/* A grid of cols × rows vertices (4-neighbour edges) from `first`, one
 * shell, at height y; thin where mask[row][col] is '#'. */
static uint32_t thin_grid(tiny *t, float y, int cols, int rows, const char *const *mask)
{
    uint32_t first = (uint32_t)t->nv;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            vert(t, -0.5f + 0.02f * (float)c, y + 0.02f * (float)r, 0.2f, first, mask[r][c] == '#');
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            uint32_t v = first + (uint32_t)(r * cols + c);
            if (c + 1 < cols)
                edge(t, v, v + 1);
            if (r + 1 < rows)
                edge(t, v, v + (uint32_t)cols);
        }
    return first;
}

/* The opening: on a body shell a 3 × 3 patch keeps its core and what
 * touches it over an edge (the plus; its corners touch the core only
 * across a diagonal), a strand one vertex wide goes; on a shell that is not
 * a body's the same marks stay. */
static void thick_open_keeps_a_core_and_its_rim_on_body_shells(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    static const char *const mask[5] = {".......#.", ".###...#.", ".###...#.", ".###...#.", ".......#."};
    uint32_t body = thin_grid(t, 0.5f, 9, 5, mask);
    uint32_t part = thin_grid(t, 1.5f, 9, 5, mask);
    tiny_finish(t);
    tb__state *st = &t->st;
    uint8_t *body_shell = calloc(st->nw, 1);
    assert_non_null(body_shell);
    body_shell[body] = 1;
    tb_error err;
    assert_int_equal(tb__thick_open(st, body_shell, &err), TB_OK);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 9; c++) {
            int in_patch = r >= 1 && r <= 3 && c >= 1 && c <= 3;
            int plus = in_patch && (r == 2 || c == 2);
            assert_int_equal(st->thin[body + (uint32_t)(r * 9 + c)], plus);
            assert_int_equal(st->thin[part + (uint32_t)(r * 9 + c)], mask[r][c] == '#');
        }
    free(body_shell);
    tiny_free(t);
}

/* ---- holes ------------------------------------------------------------------ */

/* Marks ring i (of `around`) of a tube from `first`: far and thin as given. */
static void mark_ring(tiny *t, uint32_t first, int around, int i, int far, int thin)
{
    for (int k = 0; k < around; k++) {
        t->far[first + (uint32_t)(i * around + k)] = (uint8_t)far;
        t->thin[first + (uint32_t)(i * around + k)] = (uint8_t)thin;
    }
}

static void holes_small_patches_in_far_skin_are_far(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    float c[3] = {0, 1.0f, 0}, c2[3] = {0.5f, 1.0f, 0}, c3[3] = {-0.5f, 1.0f, 0}, c4[3] = {0, 1.5f, 0},
          c5[3] = {0.25f, 1.0f, 0}, c6[3] = {-0.25f, 1.0f, 0};
    /* a far tube off the bone, a vertex of its last ring not far: the pole
     * of a tip, whose ray ran along the tail */
    uint32_t a = tube(t, c, 2, -0.2f, -0.5f, 6, 6, 0.02f, 0, 6.2831853f);
    t->far[a + 33] = t->thin[a + 33] = 0;
    /* the same where the far skin round it is not off the bone (the body's
     * own far skin, clothing): no pole, left as it is */
    uint32_t b = tube(t, c2, 2, -0.2f, -0.5f, 6, 6, 0.02f, 0, 6.2831853f);
    for (int i = 0; i < 6; i++)
        mark_ring(t, b, 6, i, 1, 0);
    t->far[b + 33] = 0;
    /* a pole of seven: the tip's last ring and one vertex of the ring before
     * (the patch's least id, its root), the vertex of the last ring next to
     * that one touching no far skin at all */
    uint32_t p = tube(t, c5, 2, -0.2f, -0.5f, 6, 6, 0.02f, 0, 6.2831853f);
    mark_ring(t, p, 6, 5, 0, 0);
    t->far[p + 26] = t->thin[p + 26] = 0;
    /* a pole of two, three of its four edges into far skin reaching off-bone
     * skin (the fourth a scrap of the tip that is not): a hole */
    uint32_t q = tube(t, c6, 2, -0.2f, -0.5f, 6, 6, 0.02f, 0, 6.2831853f);
    t->far[q + 33] = t->thin[q + 33] = t->far[q + 34] = t->thin[q + 34] = 0;
    t->thin[q + 27] = 0;
    /* a patch of 12 (three rings) is no hole */
    uint32_t d = tube(t, c3, 2, -0.2f, -0.5f, 6, 4, 0.02f, 0, 6.2831853f);
    for (int i = 3; i < 6; i++)
        mark_ring(t, d, 4, i, 0, 0);
    /* nor is a small shell of its own (4 vertices, none far) */
    uint32_t e = tube(t, c4, 2, -0.2f, -0.3f, 2, 2, 0.02f, 0, 6.2831853f);
    for (int i = 0; i < 2; i++)
        mark_ring(t, e, 2, i, 0, 0);
    /* a cap of 18 (a tip's last three rings, near: beside a foot, within its
     * limb's envelope), every vertex off the bone but one (the pole, whose
     * ray ran along the tail): a hole of any size; with two on the bone it
     * is not */
    float c7[3] = {0.75f, 1.0f, 0}, c8[3] = {-0.75f, 1.0f, 0};
    uint32_t g = tube(t, c7, 2, -0.2f, -0.5f, 6, 6, 0.02f, 0, 6.2831853f);
    uint32_t h = tube(t, c8, 2, -0.2f, -0.5f, 6, 6, 0.02f, 0, 6.2831853f);
    for (int i = 3; i < 6; i++) {
        mark_ring(t, g, 6, i, 0, 1);
        mark_ring(t, h, 6, i, 0, 1);
    }
    t->thin[g + 35] = t->thin[h + 35] = t->thin[h + 34] = 0;
    tiny_finish(t);
    tb__state *st = &t->st;
    tb_error err;
    assert_int_equal(tb__prep_holes(st, &err), TB_OK);
    for (uint32_t k = 0; k < 36; k++) {
        assert_int_equal(st->far[a + k], 1);
        assert_int_equal(st->thin[a + k], 1); /* off the bone as what surrounds it */
        assert_int_equal(st->far[b + k], k != 33);
        assert_int_equal(st->thin[b + k], 0);
        assert_int_equal(st->far[p + k], 1); /* every vertex of the pole, not only its root */
        assert_int_equal(st->thin[p + k], 1);
        assert_int_equal(st->far[q + k], 1);
        assert_int_equal(st->thin[q + k], k != 27);
    }
    for (uint32_t k = 0; k < 24; k++)
        assert_int_equal(st->far[d + k], k < 12);
    for (uint32_t k = 0; k < 4; k++)
        assert_int_equal(st->far[e + k], 0);
    for (uint32_t k = 0; k < 36; k++) {
        assert_int_equal(st->far[g + k], 1);
        assert_int_equal(st->thin[g + k], 1);
        assert_int_equal(st->far[h + k], k < 18);
    }
    tiny_free(t);
}

/* ---- far parts -------------------------------------------------------------- */

static uint32_t root_of(const tb__state *st, uint32_t w)
{
    return find(st->comp_uf, w);
}

static void far_parts_split_off_bone_skin_on_a_body_shell(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    float c[3] = {0, 1.0f, 0}, c2[3] = {0.5f, 1.0f, 0};
    /* a body shell (18 of 72 off the bone): rings 0-2 and 10-11 body skin,
     * ring 3 far round a bone (a scrap of 6), rings 4-6 far off the bone,
     * rings 7-9 far round a bone */
    uint32_t b = tube(t, c, 2, -0.1f, -0.65f, 12, 6, 0.02f, 0, 6.2831853f);
    for (int i = 0; i < 12; i++)
        mark_ring(t, b, 6, i, i >= 3 && i <= 9, i >= 4 && i <= 6);
    /* a shell mostly off the bone: its far skin one part */
    uint32_t o = tube(t, c2, 2, -0.1f, -0.4f, 4, 6, 0.02f, 0, 6.2831853f);
    for (int i = 0; i < 4; i++)
        mark_ring(t, o, 6, i, 1, i < 2);
    tiny_finish(t);
    tb__state *st = &t->st;
    for (size_t w = 0; w < st->nw; w++)
        st->comp_uf[w] = (uint32_t)w; /* as prepare leaves it */
    tb_error err;
    assert_int_equal(tb__prep_far_parts(st, &err), TB_OK);
    uint32_t off_bone = root_of(st, b + 24), round_bone = root_of(st, b + 42);
    assert_true(off_bone != round_bone);
    for (uint32_t k = 0; k < 18; k++) {
        assert_int_equal(root_of(st, b + 24 + k), off_bone);
        assert_int_equal(root_of(st, b + 42 + k), round_bone);
    }
    for (uint32_t k = 0; k < 6; k++) /* the scrap goes with the part it touches */
        assert_int_equal(root_of(st, b + 18 + k), off_bone);
    for (uint32_t k = 0; k < 24; k++)
        assert_int_equal(root_of(st, o + k), root_of(st, o));
    for (size_t w = 0; w < st->nw; w++) /* far roots compressed; the body its own */
        assert_int_equal(st->comp_uf[w], st->far[w] ? root_of(st, (uint32_t)w) : w);
    tiny_free(t);
}

/* ---- tube cut ---------------------------------------------------------------- */

/* Welded ids from..to-1: far and thin as given, in part `label` (UINT32_MAX:
 * each its own). */
static void assert_marks(const tb__state *st, uint32_t from, uint32_t to, int far, int thin, uint32_t label)
{
    for (uint32_t w = from; w < to; w++) {
        assert_int_equal(st->far[w], far);
        assert_int_equal(st->thin[w], thin);
        assert_int_equal(st->comp_uf[w], label == UINT32_MAX ? w : label);
    }
}

/* A tube of 8 round an axis behind the hips along -Z (radius 0.02, rings
 * 0.02 apart from its tip vertex at z -0.42 to z -0.20), all far and off
 * the bone, then at z -0.20 `flare` annuli of 8 (radius 0.04, 0.06, ...)
 * far and off the bone, then two annuli of body skin (without a flare, two
 * more rings of the tube), one shell; the state finished. Returns
 * the tip; *ring0 the first ring. */
static uint32_t tube_into(tiny *t, int flare, uint32_t *ring0)
{
    enum { AROUND = 8, RINGS = 11 };
    uint32_t tip = vert(t, 0, 1.0f, -0.42f, UINT32_MAX, 1);
    t->far[tip] = 1;
    *ring0 = (uint32_t)t->nv;
    int annuli = flare + 2;
    for (int i = 0; i < RINGS + annuli; i++)
        for (int k = 0; k < AROUND; k++) {
            float a = 6.2831853f * (float)k / (float)AROUND;
            int open = flare && i >= RINGS; /* without a flare, the body goes on as the tube */
            float r = open ? 0.02f + 0.02f * (float)(i - RINGS + 1) : 0.02f;
            float z = open ? -0.20f : -0.40f + 0.02f * (float)i;
            int body = i >= RINGS + flare;
            uint32_t v = vert(t, r * cosf(a), 1.0f + r * sinf(a), z, tip, !body);
            t->far[v] = (uint8_t)!body;
            if (k)
                edge(t, v - 1, v);
            if (k == AROUND - 1)
                edge(t, v, v + 1 - AROUND);
            edge(t, i ? v - AROUND : tip, v);
        }
    tiny_finish(t);
    return tip;
}

static void tube_cut_where_a_tube_opens_into_a_body(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    uint32_t ring0;
    uint32_t tip = tube_into(t, 6, &ring0);
    tb__state *st = &t->st;
    tb_error err;
    assert_int_equal(tb__tube_cut(st, &err), TB_OK);
    /* the tube to two rings before it meets the flare: far, one part rooted
     * at the tip */
    assert_marks(st, tip, tip + 1, 1, 1, tip);
    assert_marks(st, ring0, ring0 + 9 * 8, 1, 1, tip);
    /* the flare from radius 0.06 out: the body the tube leaves (not far,
     * not off the bone, each its own) */
    assert_marks(st, ring0 + 12 * 8, ring0 + 17 * 8, 0, 0, UINT32_MAX);
    tiny_free(t);
}

static void tube_cut_leaves_a_tube_that_never_opens(void **state)
{
    (void)state;
    /* the same tube welded straight into body skin of its own radius */
    tiny *t = tiny_new();
    uint32_t ring0;
    uint32_t tip = tube_into(t, 0, &ring0);
    tb__state *st = &t->st;
    uint8_t far_before[MAXV];
    memcpy(far_before, st->far, st->nw);
    tb_error err;
    assert_int_equal(tb__tube_cut(st, &err), TB_OK);
    assert_memory_equal(st->far, far_before, st->nw);
    for (uint32_t v = ring0; v < ring0 + 11 * 8; v++)
        assert_int_equal(find(st->comp_uf, v), find(st->comp_uf, tip));
    tiny_free(t);
}

/* ---- own surfaces ----------------------------------------------------------- */

/* A tube of rings of 6 behind the hips, one shell: `body` rings of body
 * skin, then far skin off the bone: two rings of the body's (buttock skin
 * round a root), the weld ring, four rings of tail. With `apart`, the tail
 * was modelled apart: its rings and a second model vertex at each vertex of
 * the weld ring are a surface of their own (the weld ring's first model
 * vertices the body's surface); without, the model is one surface. The
 * far skin is one part (comp_uf), the tube cut run over it. Returns the
 * weld ring's first vertex. */
static uint32_t welded_tail(tiny *t, int body, int apart)
{
    float c[3] = {0, 1.0f, 0};
    int rings = body + 7;
    uint32_t first = tube(t, c, 2, -0.05f, -0.05f - 0.03f * (float)rings, rings, 6, 0.02f, 0, 6.2831853f);
    for (int i = 0; i < body; i++)
        mark_ring(t, first, 6, i, 0, 0);
    tiny_finish(t);
    tb__state *st = &t->st;
    uint32_t ring = first + (uint32_t)(body + 2) * 6, tail = ring + 6;
    size_t nw = st->nw, V = nw + (apart ? 6 : 0);
    free(st->wid), free(st->model_off), free(st->model_list);
    st->wid = malloc(V * sizeof *st->wid);
    st->model_off = malloc((nw + 1) * sizeof *st->model_off);
    st->model_list = malloc(V * sizeof *st->model_list);
    st->surf = malloc(V * sizeof *st->surf);
    assert_true(st->wid && st->model_off && st->model_list && st->surf);
    size_t q = 0;
    for (uint32_t w = 0; w < nw; w++) {
        st->model_off[w] = (uint32_t)q;
        st->model_list[q++] = w;
        if (apart && w >= ring && w < tail)
            st->model_list[q++] = (uint32_t)nw + (w - ring);
    }
    st->model_off[nw] = (uint32_t)q;
    for (uint32_t v = 0; v < V; v++) {
        st->wid[v] = v < nw ? v : ring + (v - (uint32_t)nw);
        st->surf[v] = apart && (v >= tail) ? tail : 0; /* each surface's root its first vertex */
    }
    t->m.vertex_count = V;
    /* the tube cut first, as prepare runs them: the part (42 vertices, under
     * 4 min_vertices) is left as it is */
    tb_error err;
    assert_int_equal(tb__tube_cut(st, &err), TB_OK);
    return ring;
}

static void own_surfaces_give_back_the_body_skin_round_a_welded_tail(void **state)
{
    (void)state;
    tiny *t = tiny_new();
    uint32_t ring = welded_tail(t, 4, 1), tail = ring + 6;
    tb__state *st = &t->st;
    tb_error err;
    assert_int_equal(tb__own_surfaces(st, &err), TB_OK);
    assert_null(st->surf);
    /* the buttock skin (on no surface of the tail's own) and the weld ring
     * go back to the body; the tail's own rings stay, one part labelled by
     * its first vertex */
    assert_marks(st, 0, tail, 0, 0, UINT32_MAX);
    assert_marks(st, tail, (uint32_t)st->nw, 1, 1, tail);
    tiny_free(t);
}

static void own_surfaces_leave_a_part_with_none_of_its_own(void **state)
{
    (void)state;
    /* the same tail sculpted in one surface with a larger body: nothing of
     * it is its own surface, so all of it stays far, labelled by its first
     * far vertex */
    tiny *t = tiny_new();
    uint32_t ring = welded_tail(t, 10, 0), first_far = ring - 12;
    tb__state *st = &t->st;
    tb_error err;
    assert_int_equal(tb__own_surfaces(st, &err), TB_OK);
    for (uint32_t w = 0; w < st->nw; w++) {
        assert_int_equal(st->far[w], w >= first_far);
        assert_int_equal(st->comp_uf[w], w >= first_far ? first_far : w);
    }
    tiny_free(t);
}

/* ---- a merged group's stages: gather, geodesic, lists ------------------------ */

/* What the group's stages read beyond the pieces: each shell's vertices
 * (CSR), their areas (none: no shell is half the skin), the trunk's bone
 * (hips → spine). */
static void group_ready(tiny *t)
{
    tb__state *st = &t->st;
    size_t n = st->nw;
    st->shell_off = calloc(n + 1, sizeof *st->shell_off);
    st->shell_list = malloc(n * sizeof *st->shell_list);
    st->shell_area = calloc(n, sizeof *st->shell_area);
    st->trunk = malloc(sizeof *st->trunk);
    assert_true(st->shell_off && st->shell_list && st->shell_area && st->trunk);
    for (size_t w = 0; w < n; w++)
        st->shell_off[st->shell[w] + 1]++;
    for (size_t s = 0; s < n; s++)
        st->shell_off[s + 1] += st->shell_off[s];
    uint32_t *fill = calloc(n, sizeof *fill);
    assert_non_null(fill);
    for (size_t w = 0; w < n; w++)
        st->shell_list[st->shell_off[st->shell[w]] + fill[st->shell[w]]++] = (uint32_t)w;
    free(fill);
    tb__seg_set(&st->trunk[0], joint_pos[HIPS], joint_pos[SPINE], HIPS);
    st->ntrunk = 1;
}

typedef struct group_job {
    tb__an_job j;
    tb_appendage ap;
    tb__app_work aw;
    float *g;
    uint8_t *allowed;
} group_job;

/* Pieces (each its own group), then a job on group 0 with its scratch. */
static group_job *group_job_new(tiny *t)
{
    tb_error err;
    tiny_finish(t);
    group_ready(t);
    assert_int_equal(tb__detect_components(&t->st, &err), TB_OK);
    assert_int_equal(t->st.ncomp, 1);
    group_job *G = calloc(1, sizeof *G);
    assert_non_null(G);
    G->g = malloc(t->st.nw * sizeof *G->g);
    G->allowed = calloc(t->st.nw, 1);
    assert_true(G->g && G->allowed);
    for (size_t w = 0; w < t->st.nw; w++)
        G->g[w] = INFINITY;
    G->ap.chain = -1;
    G->aw.parent_joint = -1;
    G->j.st = &t->st;
    G->j.ap = &G->ap;
    G->j.aw = &G->aw;
    G->j.group = 0;
    G->j.g = G->g;
    G->j.allowed = G->allowed;
    return G;
}

static void group_job_free(group_job *G)
{
    free(G->j.wv), free(G->j.wc), free(G->j.src), free(G->j.piece);
    tb__graph_free(&G->j.bridges);
    free(G->ap.vertices);
    free(G->aw.rw_verts), free(G->aw.rw_g), free(G->aw.rw_piece), free(G->aw.collar);
    free(G->g), free(G->allowed);
    free(G);
}

/* A tail of its own shell behind the hips along -Z (rings of 6, radius
 * 0.02, 0.04 apart from z -0.02 to -0.50): its first three rings inside the
 * A2 band (not far), the rest far. */
static uint32_t own_shell_tail(tiny *t)
{
    float c[3] = {0, 1.0f, 0};
    uint32_t first = tube(t, c, 2, -0.02f, -0.50f, 13, 6, 0.02f, 0, 6.2831853f);
    for (int i = 0; i < 3; i++)
        mark_ring(t, first, 6, i, 0, 1);
    return first;
}

/* A cuff round the spine bone (2 rings of 12, radius 0.05; not far) and a
 * tube of rings of 6 (radius 0.02, 0.04 apart, 12 rings from t0 along
 * `axis` through c), its first ring not far, the rest far; one shell,
 * the cuff's first vertex joined to the tube's. Returns the tube's first
 * vertex. */
static uint32_t tube_on_a_cuff(tiny *t, const float c[3], int axis, float t0, float step)
{
    float spine[3] = {0, 1.1f, 0};
    uint32_t cuff = tube(t, spine, 1, 0, 0.04f, 2, 12, 0.05f, 0, 6.2831853f);
    mark_ring(t, cuff, 12, 0, 0, 0);
    mark_ring(t, cuff, 12, 1, 0, 0);
    uint32_t first = tube(t, c, axis, t0, t0 + 11 * step, 12, 6, 0.02f, 0, 6.2831853f);
    mark_ring(t, first, 6, 0, 0, 1);
    for (size_t v = first; v < t->nv; v++)
        t->shell[v] = cuff;
    edge(t, cuff, first);
    return first;
}

/* The job gathered and walked. */
static group_job *walked(group_job *G)
{
    tb_error err;
    assert_int_equal(tb__an_gather(&G->j, &err), TB_OK);
    assert_int_equal(tb__an_geodesic(&G->j, &err), TB_OK);
    return G;
}

/* A job on tube_on_a_cuff's tube, gathered and walked. */
static group_job *cuff_tube_walked(tiny *t, const float c[3], int axis, float t0, float step)
{
    tube_on_a_cuff(t, c, axis, t0, step);
    return walked(group_job_new(t));
}

static void gather_takes_a_detached_shell_whole(void **state)
{
    (void)state;
    /* a tail built as its own shell, its root sunk into the body's band:
     * all of it, band too; its root where it is nearest the trunk (the
     * band's vertices within 0.03 H of the nearest: its first two rings) */
    tiny *t = tiny_new();
    uint32_t first = own_shell_tail(t);
    group_job *G = group_job_new(t);
    tb_error err;
    assert_int_equal(tb__an_gather(&G->j, &err), TB_OK);
    assert_int_equal(G->j.nv, 78);
    assert_int_equal(G->ap.welded_count, 78);
    assert_int_equal(G->ap.shell_count, 1);
    assert_int_equal(G->j.floating, 1);
    assert_int_equal(G->j.nc, 12);
    for (size_t k = 0; k < G->j.nc; k++)
        assert_true(G->j.wc[k] >= first && G->j.wc[k] < first + 12);
    assert_float_equal(G->ap.attach_point[2], -0.04f, 1e-5f);
    assert_int_equal(G->ap.attach_joint, HIPS);
    for (size_t w = 0; w < t->st.nw; w++)
        assert_int_equal(G->allowed[w], 0); /* scratch left as found */
    group_job_free(G);
    tiny_free(t);
}

static void gather_keeps_a_shell_round_a_bone_out(void **state)
{
    (void)state;
    /* the same tail, its shell's band a cuff round the spine: a body part,
     * smaller than the tail, but going round a bone: only the far skin,
     * hanging from its collar (the tail's first ring) */
    tiny *t = tiny_new();
    float c[3] = {0, 1.0f, 0};
    uint32_t first = tube_on_a_cuff(t, c, 2, -0.06f, -0.04f);
    group_job *G = group_job_new(t);
    tb_error err;
    assert_int_equal(tb__an_gather(&G->j, &err), TB_OK);
    assert_int_equal(G->j.nv, 66);
    for (size_t k = 0; k < G->j.nv; k++)
        assert_int_equal(t->st.far[G->j.wv[k]], 1);
    assert_int_equal(G->j.floating, 0);
    assert_int_equal(G->j.nc, 6);
    for (size_t k = 0; k < 6; k++)
        assert_int_equal(G->j.wc[k], first + k);
    assert_float_equal(G->ap.attach_point[2], -0.06f, 1e-5f);
    assert_int_equal(G->ap.attach_joint, HIPS);
    group_job_free(G);
    tiny_free(t);
}

static void geodesic_of_a_tail_leaving_the_body(void **state)
{
    (void)state;
    static const float jz[3] = {-0.205f, -0.34625f, -0.48f}; /* the chain joints' z (below) */
    /* the tail on the cuff: walked from its collar ring along straight
     * edges, ring i of the far rings is 0.04 i away; the length (the 99th
     * percentile of 66) is the last ring's, 0.44; K = 0.44 / 0.18 rounds to
     * 2, at least 3 */
    tiny *t = tiny_new();
    group_job *G = cuff_tube_walked(t, (const float[3]){0, 1.0f, 0}, 2, -0.06f, -0.04f);
    assert_int_equal(G->j.ns, 6); /* the collar: the shell is the body's (it goes round a bone) */
    assert_int_equal(G->ap.separate_shell, 0);
    for (size_t k = 1; k < G->j.nv; k++)
        assert_true(G->j.wv[k - 1] < G->j.wv[k]);
    for (size_t k = 0; k < G->j.nv; k++) {
        uint32_t w = G->j.wv[k];
        float ring = (float)((w - G->j.wc[0]) / 6);
        assert_float_equal(G->g[w], 0.04f * ring, 1e-5f);
    }
    assert_float_equal(G->ap.length, 0.44f, 1e-5f);
    assert_int_equal(G->j.K, 3);
    /* the joints: on the axis, at the centroids of the rings within L / 2K
     * of i L / K (walks 0.08-0.20, 0.24-0.36, 0.40-0.44: z -0.20, -0.36,
     * -0.48; J_0 the collar's, -0.06), the inner ones smoothed twice
     * (J_i = J_i / 2 + (J_i-1 + J_i+1) / 4: -0.205, -0.35; -0.205, -0.34625) */
    for (int i = 1; i <= 3; i++) {
        assert_float_equal(G->ap.chain_joints[i][0], 0, 1e-5f);
        assert_float_equal(G->ap.chain_joints[i][1], 1.0f, 1e-5f);
        assert_float_equal(G->ap.chain_joints[i][2], jz[i - 1], 1e-5f);
    }
    /* slenderness: L over twice the stations' mean radius (the mean distance
     * of their skin from the joint: 0.04577, 0.04577, 0.02828) */
    float r13 = 0.5f * (sqrtf(0.0004f + 0.0036f) + sqrtf(0.0008f)), r3 = sqrtf(0.0008f);
    assert_float_equal(G->ap.slenderness, 0.44f / (2 * (2 * r13 + r3) / 3), 1e-3f);
    /* leave: from the collar (0.06 from the trunk's bone) to the tip joint
     * (0.48), over L */
    assert_float_equal(G->ap.leave, (0.48f - 0.06f) / 0.44f, 1e-3f);
    group_job_free(G);
    tiny_free(t);
}

static void geodesic_of_a_strap_along_the_body(void **state)
{
    (void)state;
    /* a tube of the same shape standing 0.15 behind the spine bone, along
     * it (from y 1.02 up by 0.025): as far from the trunk at its tip as at
     * its root, it leaves it by little */
    tiny *t = tiny_new();
    group_job *G = cuff_tube_walked(t, (const float[3]){0, 0, -0.15f}, 1, 1.02f, 0.025f);
    assert_float_equal(G->ap.length, 0.275f, 1e-5f);
    assert_true(fabsf(G->ap.leave) < 0.2f);
    group_job_free(G);
    tiny_free(t);
}

static void lists_the_model_vertices_of_a_welded_tail(void **state)
{
    (void)state;
    /* the tail on the cuff, each welded vertex two model vertices (w and
     * w + nw: a seam): both listed, ascending, with their vertex's walk;
     * the collar one model vertex per welded one; its shell holds the body
     * too, so no piece of its own */
    tiny *t = tiny_new();
    group_job *G = cuff_tube_walked(t, (const float[3]){0, 1.0f, 0}, 2, -0.06f, -0.04f);
    tb__state *st = &t->st;
    size_t nw = st->nw;
    free(st->wid), free(st->model_list);
    st->wid = malloc(2 * nw * sizeof *st->wid);
    st->model_list = malloc(2 * nw * sizeof *st->model_list);
    assert_true(st->wid && st->model_list);
    for (uint32_t w = 0; w < nw; w++) {
        st->model_off[w] = 2 * w;
        st->model_list[2 * w] = w, st->model_list[2 * w + 1] = w + (uint32_t)nw;
        st->wid[w] = st->wid[w + nw] = w;
    }
    st->model_off[nw] = (uint32_t)(2 * nw);
    t->m.vertex_count = 2 * nw; /* (gather and the walk read no model vertex) */
    tb_error err;
    assert_int_equal(tb__an_lists(&G->j, &err), TB_OK);
    assert_int_equal(G->ap.vertex_count, 132);
    assert_int_equal(G->aw.rw_count, 132);
    for (size_t k = 0; k < 132; k++) {
        uint32_t v = G->ap.vertices[k];
        assert_int_equal(v, k < 66 ? G->j.wv[k] : G->j.wv[k - 66] + nw);
        assert_int_equal(G->aw.rw_verts[k], v);
        assert_float_equal(G->aw.rw_g[k], G->g[st->wid[v]], 0);
        assert_int_equal(G->aw.rw_piece[k], TB__NO_PIECE);
    }
    assert_int_equal(G->aw.collar_count, 6);
    for (size_t k = 0; k < 6; k++)
        assert_int_equal(G->aw.collar[k], G->j.wc[k]);
    assert_int_equal(G->ap.piece_count, 0);
    assert_int_equal(G->ap.pieces_cover, 0);
    group_job_free(G);
    tiny_free(t);
}

static void lists_a_detached_shell_as_one_piece(void **state)
{
    (void)state;
    /* the tail of its own shell: all 78 vertices, band too, one piece that
     * covers it; the band at the root walks 0 */
    tiny *t = tiny_new();
    uint32_t first = own_shell_tail(t);
    group_job *G = walked(group_job_new(t));
    tb_error err;
    assert_int_equal(tb__an_lists(&G->j, &err), TB_OK);
    assert_int_equal(G->ap.vertex_count, 78);
    for (size_t k = 0; k < 78; k++) {
        assert_int_equal(G->ap.vertices[k], first + k);
        assert_int_equal(G->aw.rw_piece[k], 0);
    }
    assert_float_equal(G->aw.rw_g[0], 0, 0);
    assert_int_equal(G->ap.piece_count, 1);
    assert_int_equal(G->ap.pieces_cover, 1);
    assert_int_equal(G->aw.collar_count, 12);
    group_job_free(G);
    tiny_free(t);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* tb__kth_float (the envelope's median, a shell's median half-thickness,
 * A9's length percentile) gives a[k] of the ascending qsort it replaced, bit
 * for bit: on random arrays with many repeats, infinities, and (where the
 * sort decides the order) NaN and negative zeros. */
static void kth_float_is_the_sorted_kth(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    float a[97], b[97];
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)(round % 97);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            uint32_t r = seed >> 8;
            a[i] = (float)(r % (round % 3 == 0 ? 7u : 100000u)) * 0.25f; /* repeats, or nearly none */
            if (round % 5 == 1 && r % 11 == 0)
                a[i] = INFINITY;
            if (round % 7 == 3 && r % 13 == 0)
                a[i] = r % 2 ? NAN : -0.0f;
        }
        for (size_t k = 0; k < n; k++) {
            memcpy(b, a, n * sizeof *a);
            float want;
            {
                float c[97];
                memcpy(c, a, n * sizeof *a);
                qsort(c, n, sizeof *c, cmp_float);
                want = c[k];
            }
            float got = tb__kth_float(b, n, k);
            assert_memory_equal(&got, &want, sizeof got);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(distance_marks_far_beyond_the_band),
        cmocka_unit_test(envelope_far_is_off_bone_skin_outside_the_envelope),
        cmocka_unit_test(envelope_needs_eight_samples),
        cmocka_unit_test(envelope_only_on_an_upright_humanoid),
        cmocka_unit_test(pieces_collars_and_attachment),
        cmocka_unit_test(grouping_joins_pieces_in_a_row),
        cmocka_unit_test(grouping_keeps_a_long_gap_apart),
        cmocka_unit_test(grouping_keeps_pieces_off_the_line_apart),
        cmocka_unit_test(grouping_never_joins_a_shell_round_a_bone),
        cmocka_unit_test(grouping_row_pieces_are_alike_in_thickness),
        cmocka_unit_test(measures_of_a_straight_tube),
        cmocka_unit_test(thickness_samples_one_per_shell_and_cell),
        cmocka_unit_test(far_by_thickness_thin_tube_beside_a_thick_one),
        cmocka_unit_test(far_by_thickness_drops_enclosed_skin_and_keeps_the_margin),
        cmocka_unit_test(thick_open_keeps_a_core_and_its_rim_on_body_shells),
        cmocka_unit_test(holes_small_patches_in_far_skin_are_far),
        cmocka_unit_test(far_parts_split_off_bone_skin_on_a_body_shell),
        cmocka_unit_test(tube_cut_where_a_tube_opens_into_a_body),
        cmocka_unit_test(tube_cut_leaves_a_tube_that_never_opens),
        cmocka_unit_test(own_surfaces_give_back_the_body_skin_round_a_welded_tail),
        cmocka_unit_test(own_surfaces_leave_a_part_with_none_of_its_own),
        cmocka_unit_test(gather_takes_a_detached_shell_whole),
        cmocka_unit_test(gather_keeps_a_shell_round_a_bone_out),
        cmocka_unit_test(geodesic_of_a_tail_leaving_the_body),
        cmocka_unit_test(geodesic_of_a_strap_along_the_body),
        cmocka_unit_test(lists_the_model_vertices_of_a_welded_tail),
        cmocka_unit_test(lists_a_detached_shell_as_one_piece),
        cmocka_unit_test(kth_float_is_the_sorted_kth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
