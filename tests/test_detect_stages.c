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
enum { MAXV = 512, MAXE = 2048 };

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
        for (int k = 0; k < 16; k++)
            t->bw[j][k] = k % 5 == 0 ? 1.0f : 0.0f;
        memcpy(&t->bw[j][12], joint_pos[j], sizeof joint_pos[j]);
    }
    tb_model *m = &t->m;
    m->skel.joint_count = NJ;
    m->skel.parents = t->parents;
    m->skel.names = t->names;
    m->skel.bind_world = (const float(*)[16])t->bw;
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
    st->shell_far = calloc(n, sizeof *st->shell_far);
    assert_true(st->wpos && st->mpos && st->mrad && st->wdist && st->wseg && st->far && st->thin && st->shell &&
                st->comp_uf && st->shell_total && st->shell_far);
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
        if (st->far[a] && st->far[b])
            st->comp_uf[find(st->comp_uf, a)] = find(st->comp_uf, b);
    }
    for (size_t w = 0; w < n; w++) {
        st->comp_uf[w] = find(st->comp_uf, (uint32_t)w);
        st->shell_total[st->shell[w]]++;
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

/* Pieces, then the merge; whether the two pieces holding a and b are one group. */
static int joined(tiny *t, uint32_t a, uint32_t b)
{
    tiny_finish(t);
    tb_error err;
    assert_int_equal(tb__detect_components(&t->st, &err), TB_OK);
    assert_int_equal(tb__detect_merge(&t->st, &err), TB_OK);
    assert_int_equal(t->st.ncomp, 2);
    return group_of(&t->st, a) == group_of(&t->st, b);
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
        cmocka_unit_test(measures_of_a_straight_tube),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
