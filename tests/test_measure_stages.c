/* Measure's prep stages (SPEC C; src/passes/measure.c, tb_measure_prepare
 * and tb_measure_clip), each called alone on a model built by hand: a strip
 * of skin along a tail (Hips → Tail_1 → Tail_2, going back along −Z from
 * y = 1), a vertex doubled at the hips (a zero-length edge) and loose body
 * vertices no edge uses. measure.c is compiled into this test (its stages
 * are static); the library's copy of it is then not linked.
 *   setup    the edges by their lower vertex, the world scale;
 *   tail     the caller's mask, else the Tail_ joints' weights, else none;
 *   groups   tail / body / seam by the mask, zero-length edges skipped;
 *   ends     the tip farthest from the first tail joint, the bones that
 *            carry the tail;
 *   runs     only the vertices the edges use, when under half;
 *   summary  the tip's travel in heights. */
#include "passes/measure.c"

#include "support.h"

enum { NJ = 3, NLINE = 8, DUP = 8, NV = 16 };

typedef struct strip {
    tb_model m;
    int parents[NJ];
    const char *names[NJ];
    tb_transform rest[NJ];
    float bw[NJ][16], ibm[NJ][16];
    int skin_joints[NJ];
    float pos[NV * 3];
    uint16_t joints[NV];
    float weights[NV];
    uint8_t has_ibm[NJ];
    uint64_t edges[NLINE];
    size_t ne;
} strip;

static const float jz[NJ] = {0, -0.3f, -0.5f}; /* Hips, Tail_1, Tail_2 along −Z at y = 1 */

/* Vertex i < 8 at (0, 1, −0.1 i) on Hips (i < 3), Tail_1 (i < 6) or Tail_2;
 * vertex 8 on vertex 0; 9…15 body skin at x = 1; edges i – i+1 and 0 – 8. */
static strip *strip_new(void)
{
    strip *s = calloc(1, sizeof *s);
    assert_non_null(s);
    static const char *const names[NJ] = {"Hips", "Tail_1", "Tail_2"};
    for (int j = 0; j < NJ; j++) {
        s->parents[j] = j - 1;
        s->names[j] = names[j];
        s->skin_joints[j] = j;
        s->has_ibm[j] = 1;
        tb_transform *t = &s->rest[j];
        t->t[2] = j ? jz[j] - jz[j - 1] : 0;
        t->t[1] = j ? 0 : 1;
        t->r[3] = 1;
        t->s[0] = t->s[1] = t->s[2] = 1;
        for (int k = 0; k < 16; k++)
            s->bw[j][k] = s->ibm[j][k] = k % 5 == 0 ? 1.0f : 0.0f;
        s->bw[j][13] = 1, s->bw[j][14] = jz[j];
        s->ibm[j][13] = -1, s->ibm[j][14] = -jz[j];
    }
    for (int v = 0; v < NV; v++) {
        float *p = s->pos + v * 3;
        if (v < NLINE)
            p[1] = 1, p[2] = -0.1f * (float)v;
        else if (v == DUP)
            p[1] = 1;
        else
            p[0] = 1, p[1] = 0.1f * (float)v;
        s->joints[v] = (uint16_t)(v < 3 || v >= NLINE ? 0 : v < 6 ? 1 : 2);
        s->weights[v] = 1;
    }
    s->edges[s->ne++] = (uint64_t)0 << 32 | 1; /* sorted, as tb_measure_edges leaves them */
    s->edges[s->ne++] = (uint64_t)0 << 32 | DUP;
    for (uint64_t i = 1; i + 1 < NLINE; i++)
        s->edges[s->ne++] = i << 32 | (i + 1);
    tb_model *m = &s->m;
    m->skel.joint_count = NJ;
    m->skel.parents = s->parents;
    m->skel.names = s->names;
    m->skel.rest_local = s->rest;
    m->skel.bind_world = (const float(*)[16])s->bw;
    m->skel.has_ibm = s->has_ibm;
    m->skin_joint_count = NJ;
    m->skin_joints = s->skin_joints;
    m->inverse_bind = s->ibm;
    for (int r = 0; r < TB_ROLE_COUNT; r++)
        m->role_joint[r] = -1;
    m->role_joint[TB_ROLE_HIPS] = 0;
    m->vertex_count = NV;
    m->positions = s->pos;
    m->influences = 1;
    m->joints = s->joints;
    m->weights = s->weights;
    m->height = 1.8f;
    return s;
}

enum { TO_SETUP, TO_TAIL, TO_GROUPS, TO_ENDS, TO_ALIKE };

/* A prep as tb_measure_prepare makes it: setup, then the stages up to
 * `upto` (tail, groups, ends, alike), each called alone. */
static tb_measure_prep *prep_to(const strip *s, tb_measure_desc *d, int upto)
{
    *d = tb_measure_desc_defaults(d);
    d->edges = s->edges;
    d->edge_count = s->ne;
    tb_measure_prep *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->m = &s->m;
    p->joints = s->m.joints;
    p->weights = s->m.weights;
    p->nv = NV;
    p->inf = 1;
    p->jc = NJ;
    p->torn_above = d->torn_above;
    p->torn_below = d->torn_below;
    tb_error err;
    assert_int_equal(tb__prep_setup(p, d, &err), TB_OK);
    if (upto >= TO_TAIL)
        tb__prep_tail(p, d);
    if (upto >= TO_GROUPS)
        tb__prep_groups(p, d);
    if (upto >= TO_ENDS)
        tb__prep_ends(p);
    if (upto >= TO_ALIKE) /* where the tip is skinned; alike vertices merged when most are (none here) */
        tb__prep_alike(p);
    return p;
}

static void setup_files_the_edges_by_their_lower_vertex(void **state)
{
    (void)state;
    strip *s = strip_new();
    tb_measure_desc d;
    memset(&d, 0, sizeof d);
    tb_measure_prep *p = prep_to(s, &d, TO_SETUP);
    assert_int_equal(p->ne, 8);
    assert_int_equal(p->first[0], 0);
    assert_int_equal(p->first[1], 2); /* vertex 0's two: to 1 and to 8 */
    assert_int_equal(p->hi[0], 1);
    assert_int_equal(p->hi[1], DUP);
    for (uint32_t v = 1; v + 1 < NLINE; v++) {
        assert_int_equal(p->first[v + 1] - p->first[v], 1);
        assert_int_equal(p->hi[p->first[v]], v + 1);
    }
    for (uint32_t v = NLINE - 1; v < NV; v++) /* none from the tip or the loose skin */
        assert_int_equal(p->first[v + 1], p->first[v]);
    assert_float_equal(p->head.world_scale, 1.0f, 1e-6f);
    assert_float_equal(p->head.height, 1.8f, 0);
    tb_measure_prep_free(p);
    free(s);
}

static void tail_from_the_mask_the_joints_or_none(void **state)
{
    (void)state;
    strip *s = strip_new();
    tb_measure_desc d;
    memset(&d, 0, sizeof d);
    tb_measure_prep *p = prep_to(s, &d, TO_TAIL); /* Tail_1, Tail_2 by name: vertices 3…7 */
    assert_int_equal(p->head.tail_source, TB_TAIL_FROM_JOINTS);
    assert_int_equal(p->head.tail_vertices, 5);
    for (int v = 0; v < NV; v++)
        assert_int_equal(p->mask[v], v >= 3 && v < NLINE);
    tb_measure_prep_free(p);

    /* the share on tail bones counts, not the sum: a vertex whose one
     * weight, 0.5, is on Tail_1 is tail */
    s->joints[2] = 1, s->weights[2] = 0.5f;
    memset(&d, 0, sizeof d);
    p = prep_to(s, &d, TO_TAIL);
    assert_int_equal(p->mask[2], 1);
    tb_measure_prep_free(p);
    s->joints[2] = 0, s->weights[2] = 1;

    uint8_t mask[NV] = {0};
    mask[6] = mask[7] = 2; /* any non-zero byte */
    memset(&d, 0, sizeof d);
    d.tail_mask = mask;
    p = prep_to(s, &d, TO_TAIL);
    assert_int_equal(p->head.tail_source, TB_TAIL_FROM_MASK);
    assert_int_equal(p->head.tail_vertices, 2);
    assert_int_equal(p->mask[6], 1);
    assert_int_equal(p->mask[5], 0);
    tb_measure_prep_free(p);

    s->names[1] = "Spine", s->names[2] = "Neck"; /* no Tail_ joints */
    memset(&d, 0, sizeof d);
    p = prep_to(s, &d, TO_TAIL);
    assert_int_equal(p->head.tail_source, TB_TAIL_NONE);
    assert_int_equal(p->head.tail_vertices, 0);
    tb_measure_prep_free(p);
    free(s);
}

static void groups_tail_body_seam_and_skip_zero_lengths(void **state)
{
    (void)state;
    strip *s = strip_new();
    tb_measure_desc d;
    memset(&d, 0, sizeof d);
    tb_measure_prep *p = prep_to(s, &d, TO_GROUPS);
    /* 0-1, 1-2 body; 2-3 seam; 3-4 … 6-7 tail; 0-8 zero length */
    assert_int_equal(p->group_edges[0], 4);
    assert_int_equal(p->group_edges[1], 2);
    assert_int_equal(p->group_edges[2], 1);
    assert_int_equal(p->group[0], 2); /* 0-1 */
    assert_int_equal(p->group[1], 0); /* 0-8 */
    assert_int_equal(p->group[p->first[2]], 3);
    assert_int_equal(p->group[p->first[5]], 1);
    for (size_t e = 0; e < p->ne; e++)
        assert_float_equal(p->bind_len[e], e == 1 ? 0.0f : 0.1f, 1e-6f);
    tb_measure_prep_free(p);
    free(s);
}

static void ends_the_tip_and_the_bones_that_carry_the_tail(void **state)
{
    (void)state;
    strip *s = strip_new();
    tb_measure_desc d;
    memset(&d, 0, sizeof d);
    tb_measure_prep *p = prep_to(s, &d, TO_ENDS);
    assert_int_equal(p->head.tip_vertex, 7); /* 0.4 from Tail_1 at z −0.3 */
    assert_int_equal(p->head.motion_bone_count, 2);
    assert_int_equal(p->motion[0], 0);
    assert_int_equal(p->motion[1], 1);
    assert_int_equal(p->motion[2], 1);
    tb_measure_prep_free(p);

    /* the same tail rigid on the hips (a mask, no Tail_ joints): the hips
     * carry it; the root is where the mask meets the body (vertex 3), so
     * the tip is still vertex 7 */
    s->names[1] = "Spine", s->names[2] = "Neck";
    for (int v = 3; v < NLINE; v++)
        s->joints[v] = 0;
    uint8_t mask[NV] = {0};
    for (int v = 3; v < NLINE; v++)
        mask[v] = 1;
    memset(&d, 0, sizeof d);
    d.tail_mask = mask;
    p = prep_to(s, &d, TO_ENDS);
    assert_int_equal(p->head.tip_vertex, 7);
    assert_int_equal(p->head.motion_bone_count, 1);
    assert_int_equal(p->motion[0], 1);
    tb_measure_prep_free(p);

    memset(&d, 0, sizeof d); /* no tail: no tip, no bones */
    p = prep_to(s, &d, TO_ENDS);
    assert_int_equal(p->head.tip_vertex, -1);
    assert_int_equal(p->head.motion_bone_count, 0);
    assert_true(isnan(p->head.bone_distance));
    tb_measure_prep_free(p);
    free(s);
}

static void runs_of_the_vertices_the_edges_use(void **state)
{
    (void)state;
    strip *s = strip_new();
    tb_measure_desc d;
    memset(&d, 0, sizeof d);
    tb_measure_prep *p = prep_to(s, &d, TO_ALIKE);
    tb_error err;
    assert_int_equal(tb__prep_runs(p, &err), TB_OK);
    /* 0…7 used (the zero-length edge is not measured: 8 is not): 8 of 16,
     * not under half: every vertex is skinned */
    assert_null(p->runs);
    tb_measure_prep_free(p);

    /* the edges 1-2 and 5-6, and the tip 7: runs 1…2 and 5…7 */
    s->ne = 0;
    s->edges[s->ne++] = (uint64_t)1 << 32 | 2;
    s->edges[s->ne++] = (uint64_t)5 << 32 | 6;
    memset(&d, 0, sizeof d);
    p = prep_to(s, &d, TO_ALIKE);
    assert_int_equal(tb__prep_runs(p, &err), TB_OK);
    assert_non_null(p->runs);
    assert_int_equal(p->nruns, 2);
    assert_int_equal(p->runs[0], 1);
    assert_int_equal(p->runs[1], 2);
    assert_int_equal(p->runs[2], 5);
    assert_int_equal(p->runs[3], 3);
    tb_measure_prep_free(p);

    /* made for positions_out: every vertex, always */
    memset(&d, 0, sizeof d);
    p = prep_to(s, &d, TO_ALIKE);
    p->for_positions = 1;
    assert_int_equal(tb__prep_runs(p, &err), TB_OK);
    assert_null(p->runs);
    tb_measure_prep_free(p);
    free(s);
}

static void summary_travel_in_heights_and_no_rotation_without_bones(void **state)
{
    (void)state;
    strip *s = strip_new();
    tb_measure_desc d;
    memset(&d, 0, sizeof d);
    tb_measure_prep *p = prep_to(s, &d, TO_SETUP);
    tb_measure_result out;
    memset(&out, 0, sizeof out);
    out.tip_vertex = 7;
    out.world_scale = 2.0f;
    out.max_bone_rotation_rad = NAN;
    tb__mc_job j;
    memset(&j, 0, sizeof j);
    j.out = &out;
    j.p = p;
    j.m = &s->m;
    j.travel = 0.9;
    j.max_rot = 0.5f;
    /* the groups' bins in one block, as the setup stage makes them (freed
     * with the scratch) */
    assert_true(tb__hist_init_block(j.s.hist, 3, p->torn_above, p->torn_below));
    j.s.block_of = 0;
    tb__hist_add(&j.s.hist[0], 1.0f);
    tb__hist_add(&j.s.hist[0], 2.0f); /* torn: over 1.5 */
    tb__mc_summary(&j);
    assert_float_equal(out.tip_travel, 0.9f, 1e-6f);
    assert_float_equal(out.tip_travel_h, 0.25f, 1e-6f); /* 0.9 / (2 × 1.8) */
    assert_true(isnan(out.max_bone_rotation_rad));      /* no bone carries it */
    assert_int_equal(out.tail.samples, 2);
    assert_int_equal(out.tail.torn, 1);
    assert_float_equal(out.tail.torn_frac, 0.5f, 0);
    assert_int_equal(out.body.samples, 0);
    assert_true(isnan(out.body.torn_frac));
    tb__scratch_free(&j.s);
    tb_measure_prep_free(p);
    free(s);
}

/* The edge loop (tb__mc_stretch) on a hand-made edge list: 300 lower
 * vertices with 0 to 6 edges each (a batch of measured edges ends inside a
 * vertex's edges), a quarter of them unmeasured, in the three groups, their
 * ratios near 1, past the near bins both ways (more than the loop's list
 * holds, so it stops and goes on), torn, and NaN; with and without edge
 * counts (mult). Every group's bins are those that adding each measured
 * edge's ratio (tb__edge_dist's, over the scale and the bind length) one
 * at a time in edge order gives: count, lo and hi, bit for bit. */
static void stretch_bins_every_measured_edge_in_order(void **state)
{
    (void)state;
    enum { LOWS = 300, MAXE = LOWS * 6, POS = LOWS + MAXE };
    uint32_t *first = calloc(LOWS + 1, sizeof *first), *hi = malloc(MAXE * sizeof *hi);
    uint32_t *mult = malloc(MAXE * sizeof *mult);
    uint8_t *group = malloc(MAXE);
    float *len = malloc(MAXE * sizeof *len), *pos = malloc(POS * 3 * sizeof *pos);
    assert_true(first && hi && mult && group && len && pos);
    uint32_t seed = 7;
#define NEXT() (seed = seed * 1664525u + 1013904223u, (seed >> 8) / 16777216.0f)
    for (int v = 0; v < POS * 3; v++)
        pos[v] = NEXT() * 2 - 1;
    size_t ne = 0;
    for (int v = 0; v < LOWS; v++) {
        first[v] = (uint32_t)ne;
        int k = (int)(NEXT() * 7);
        for (int t = 0; t < k; t++, ne++) {
            hi[ne] = (uint32_t)(LOWS + ne);
            float u = NEXT();
            group[ne] = u < 0.25f ? 0 : (uint8_t)(1 + (int)(NEXT() * 3));
            mult[ne] = 1 + (uint32_t)(NEXT() * 3);
            float d = tb__edge_dist(pos + v * 3, pos + hi[ne] * 3);
            /* the bind length sets the ratio: near 1, past the near bins either way, torn */
            float want = u < 0.5f ? 1.0f + (NEXT() - 0.5f) * 0.3f : u < 0.75f ? 1.4f + NEXT() * 3 : 0.2f + NEXT() * 0.5f;
            len[ne] = d / want;
        }
    }
    first[LOWS] = (uint32_t)ne;
    len[5] = 0.0f; /* a NaN or infinite ratio goes the slow way too */
    pos[(LOWS + 9) * 3] = NAN;
#undef NEXT
    for (int with_mult = 0; with_mult < 2; with_mult++) {
        tb_measure_prep p;
        memset(&p, 0, sizeof p);
        p.first = first, p.hi = hi, p.group = group, p.bind_len = len, p.nv = LOWS;
        p.mult = with_mult ? mult : NULL;
        p.max_mult = with_mult ? 3 : 1;
        p.torn_above = 1.5f, p.torn_below = 0.67f;
        tb__mc_job j;
        memset(&j, 0, sizeof j);
        j.p = &p;
        j.s.skinned = pos;
        j.inv_scale = 1.0f / 1.25f;
        assert_true(tb__hist_init_block(j.s.hist, 3, p.torn_above, p.torn_below));
        j.s.block_of = 0;
        tb__hist want[3];
        assert_true(tb__hist_init_block(want, 3, p.torn_above, p.torn_below));
        size_t slow = 0;
        for (int v = 0; v < LOWS; v++)
            for (uint32_t e = first[v]; e < first[v + 1]; e++) {
                if (!group[e])
                    continue;
                float x = tb__edge_dist(pos + v * 3, pos + hi[e] * 3) * j.inv_scale / len[e];
                tb__hist_add_n(&want[group[e] - 1], x, with_mult ? mult[e] : 1);
                slow += !(x >= TB__HIST_NEAR_LO && x < TB__HIST_NEAR_HI);
            }
        assert_true(slow > TB__MC_SLOW + TB__MC_BATCH); /* the list fills: the loop stops and goes on */
        tb__mc_stretch(&j, 1);
        for (int g = 0; g < 3; g++) {
            tb__hist *a = &j.s.hist[g], *b = &want[g];
            tb__hist_tally(a);
            tb__hist_tally(b);
            assert_true(a->n > 0);
            assert_int_equal(a->n, b->n);
            assert_int_equal(a->torn, b->torn);
            assert_int_equal(a->from, b->from);
            assert_int_equal(a->to, b->to);
            for (size_t bin = a->from; bin < a->to; bin++) {
                assert_int_equal(a->count[bin], b->count[bin]);
                if (a->count[bin]) {
                    assert_memory_equal(&a->lo[bin], &b->lo[bin], sizeof(float));
                    assert_memory_equal(&a->hi[bin], &b->hi[bin], sizeof(float));
                }
            }
        }
        tb__hist_free_block(want);
        tb__hist_free_block(j.s.hist);
    }
    free(first), free(hi), free(mult), free(group), free(len), free(pos);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(setup_files_the_edges_by_their_lower_vertex),
        cmocka_unit_test(tail_from_the_mask_the_joints_or_none),
        cmocka_unit_test(groups_tail_body_seam_and_skip_zero_lengths),
        cmocka_unit_test(ends_the_tip_and_the_bones_that_carry_the_tail),
        cmocka_unit_test(runs_of_the_vertices_the_edges_use),
        cmocka_unit_test(summary_travel_in_heights_and_no_rotation_without_bones),
        cmocka_unit_test(stretch_bins_every_measured_edge_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
