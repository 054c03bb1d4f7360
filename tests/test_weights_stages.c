/* The chain weights' stages (SPEC A9, A10; src/passes/chain.c), each
 * called alone on numbers or models built by hand, the answers worked out
 * on paper. chain.c is compiled into this test (its stages are static);
 * the library's copy of it is then not linked.
 *   weights     a vertex's bones and shares from its place along the chain
 *               (the collar's 50/50, a segment's middle, the ramps about a
 *               joint, Tail_End carrying nothing);
 *   coordinate  the place along the chain: the projection onto the chain's
 *               polyline, searched next to the geodesic's segment only;
 *   quantize    shares to whole numbers summing to the scale exactly;
 *   zone, band  the blend widened for the tail's rings and thickness;
 *   ramp zone   the written weights read back as a zone;
 *   changed     do no harm: a vertex whose weight on some joint name moved;
 *   fade        a band vertex's joints cut to four continuously;
 *   spread      the cut spread over the band's graph (TB__PLAN_BY_STRAIN). */
#include "passes/chain.c"

#include "support.h"

typedef struct share {
    uint16_t j[3];
    float w[3];
    int n;
} share;

/* K 4 bones over L 2 (a segment is 0.5), the parent skin joint 10, Tail_1
 * 20; g in segments */
static share weights_at(float g, float zone)
{
    share s;
    memset(&s, 0, sizeof s);
    s.n = tb__chain_weights(0.5f * g, 2, 4, zone, 10, 20, s.j, s.w);
    float sum = 0;
    for (int i = 0; i < s.n; i++)
        sum += s.w[i];
    assert_float_equal(sum, 1.0f, 1e-6f);
    return s;
}

static void assert_share(share s, int n, uint16_t j0, float w0, uint16_t j1, float w1)
{
    assert_int_equal(s.n, n);
    assert_int_equal(s.j[0], j0);
    assert_float_equal(s.w[0], w0, 1e-6f);
    if (n > 1) {
        assert_int_equal(s.j[1], j1);
        assert_float_equal(s.w[1], w1, 1e-6f);
    }
}

static void weights_collar_middle_ramps_and_the_end(void **state)
{
    (void)state;
    assert_share(weights_at(0, 0.25f), 2, 20, 0.5f, 10, 0.5f);   /* the collar: half Tail_1, half the parent */
    assert_share(weights_at(0.5f, 0.25f), 1, 20, 1, 0, 0);        /* a segment's middle: its bone alone */
    assert_share(weights_at(1.9f, 0.25f), 2, 21, 0.7f, 22, 0.3f); /* 0.1 short of joint 2: 0.5 (1 − 0.1 / 0.25) on Tail_3 */
    assert_share(weights_at(2.1f, 0.25f), 2, 22, 0.7f, 21, 0.3f); /* 0.1 past it */
    assert_share(weights_at(3.9f, 0.25f), 1, 23, 1, 0, 0);        /* Tail_End carries nothing */
    assert_share(weights_at(9.0f, 0.25f), 1, 23, 1, 0, 0);        /* past the end: the last bone */
    assert_share(weights_at(-1.0f, 0.25f), 2, 20, 0.5f, 10, 0.5f); /* before the collar: the collar's */
    /* zone 0.5: linear across whole segments */
    assert_share(weights_at(1.25f, 0.5f), 2, 21, 0.75f, 20, 0.25f);
    assert_share(weights_at(1.5f, 0.5f), 1, 21, 1, 0, 0);
    /* no length: the collar's */
    share s;
    s.n = tb__chain_weights(1.0f, 0, 4, 0.25f, 10, 20, s.j, s.w);
    assert_share(s, 2, 20, 0.5f, 10, 0.5f);
}

static void coordinate_projects_near_the_geodesics_segment(void **state)
{
    (void)state;
    /* a chain of 3 bones, 1 each, curling back: +x, then +y, then −x */
    static const float J[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    const float beside[3] = {0.3f, 0.2f, 0}; /* 0.2 off bone 1, its g a little long */
    assert_float_equal(tb__chain_coordinate(0.45f, 3, 3, J, beside), 0.3f, 1e-6f);
    const float round[3] = {1.2f, 0.6f, 0}; /* outside the bend, on bone 2 */
    assert_float_equal(tb__chain_coordinate(1.4f, 3, 3, J, round), 1.6f, 1e-6f);
    /* near bone 1 in space, but its geodesic on bone 3: bones 2 and 3 only */
    const float across[3] = {0.5f, 0.1f, 0};
    assert_float_equal(tb__chain_coordinate(2.4f, 3, 3, J, across), 1.1f, 1e-6f);
    /* the collar (g = 0) and no length: g as it is */
    assert_float_equal(tb__chain_coordinate(0, 3, 3, J, across), 0, 0);
    assert_float_equal(tb__chain_coordinate(0.7f, 0, 3, J, across), 0.7f, 0);
}

static void quantize_sums_to_the_scale_by_largest_remainder(void **state)
{
    (void)state;
    const float w[3] = {0.5f, 0.25f, 0.25f};
    uint32_t q[3];
    tb__quantize(w, 3, 255, q); /* 127.5, 63.75, 63.75: the two .75 rounded up */
    assert_int_equal(q[0], 127);
    assert_int_equal(q[1], 64);
    assert_int_equal(q[2], 64);
    const float unnormal[3] = {2, -1, 2}; /* negative counts as 0; shares of the sum */
    tb__quantize(unnormal, 3, 255, q);
    assert_int_equal(q[0] + q[1] + q[2], 255);
    assert_int_equal(q[1], 0);
    assert_int_equal(q[0], 128); /* 127.5 each: the first remainder wins the tie */
    assert_int_equal(q[2], 127);
    const float none[2] = {0, -3};
    q[0] = q[1] = 9;
    tb__quantize(none, 2, 65535, q);
    assert_int_equal(q[0], 0);
    assert_int_equal(q[1], 0);
}

static void zone_and_band_widen_for_rings_and_thickness(void **state)
{
    (void)state;
    tb__chain_plan c;
    memset(&c, 0, sizeof c);
    c.K = 4, c.L = 2; /* a segment is 0.5 */
    c.ring = 0.1f, c.radius = 0.05f;
    /* rings 0.1 apart: 1.25 rings 0.25 segment; 0.05 thick: 0.05 · 30° / 0.36 / 0.5 = 0.145 */
    assert_float_equal(tb__zone_for(&c, 0.25f, 1), 0.25f, 1e-6f);
    c.ring = 0.16f; /* 1.25 × 0.16 / 0.5 = 0.4 */
    assert_float_equal(tb__zone_for(&c, 0.25f, 1), 0.4f, 1e-6f);
    c.ring = 0.01f, c.radius = 0.12f; /* 0.12 · 0.5236 / 0.36 / 0.5 = 0.349 */
    assert_float_equal(tb__zone_for(&c, 0.25f, 1), 0.12f * 0.5235988f / 0.36f / 0.5f, 1e-5f);
    c.ring = 1.0f; /* at most half a segment */
    assert_float_equal(tb__zone_for(&c, 0.25f, 1), 0.5f, 0);
    assert_float_equal(tb__zone_for(&c, 0.3f, 0), 0.3f, 0); /* pinned: as given */
    /* band: at least two ring spacings, at most 2 segments, unless pinned */
    c.ring = 0.2f; /* 2 × 0.2 / 0.5 = 0.8 */
    assert_float_equal(tb__band_for(&c, 0.5f, 1), 0.8f, 1e-6f);
    assert_float_equal(tb__band_for(&c, 1.5f, 1), 1.5f, 0);
    c.ring = 1.0f;
    assert_float_equal(tb__band_for(&c, 0.5f, 1), 2.0f, 0);
    assert_float_equal(tb__band_for(&c, 0.5f, 0), 0.5f, 0);
    assert_float_equal(tb__band_for(&c, 0, 1), 0, 0); /* no band asked: none */
}

/* The written weights read as a zone: SPEC A9's ramp of zone z is
 * piecewise linear in the chain coordinate, so its steepest change along
 * the tail reads z exactly; a tail whose edges all run round it (none
 * along) reads 0. */
static void ramp_zone_reads_the_zone_the_weights_were_written_with(void **state)
{
    (void)state;
    enum { N = 81 }; /* a vertex every 0.025 of a chain of 4 segments of 0.5 */
    static uint32_t verts[N], along[2 * (N - 1)];
    static float gc[N];
    static uint16_t nj[N * TB__SLOTS];
    static float nw[N * TB__SLOTS];
    tb__chain_plan c;
    memset(&c, 0, sizeof c);
    c.K = 4, c.L = 2, c.skP = 10, c.sk0 = 20;
    c.n = N, c.verts = verts, c.gc = gc, c.along = along, c.nalong = N - 1;
    tb__apply A;
    memset(&A, 0, sizeof A);
    A.nj = nj, A.nw = nw;
    const float zones[2] = {0.25f, 0.5f};
    for (int z = 0; z < 2; z++) {
        memset(nj, 0, sizeof nj), memset(nw, 0, sizeof nw);
        for (uint32_t i = 0; i < N; i++) {
            verts[i] = i;
            gc[i] = 0.025f * (float)i;
            if (i + 1 < N)
                along[2 * i] = i, along[2 * i + 1] = i + 1;
            tb__chain_weights(gc[i], c.L, c.K, zones[z], c.skP, c.sk0, nj + i * TB__SLOTS, nw + i * TB__SLOTS);
        }
        assert_float_equal(tb__chain_ramp_zone(&A, &c), zones[z], 1e-3f);
    }
    c.nalong = 0;
    assert_float_equal(tb__chain_ramp_zone(&A, &c), 0, 0);
}

/* A model of 4 vertices, 2 influences, over skin joints named `names`. */
typedef struct wm {
    tb_model m;
    const char *names[4];
    int skin_joints[4];
    uint16_t joints[8];
    float weights[8];
} wm;

static void wm_init(wm *x, const char *const *names, int n)
{
    memset(x, 0, sizeof *x);
    for (int i = 0; i < n; i++)
        x->names[i] = names[i], x->skin_joints[i] = i;
    x->m.skel.joint_count = n;
    x->m.skel.names = x->names;
    x->m.skin_joint_count = n;
    x->m.skin_joints = x->skin_joints;
    x->m.vertex_count = 4;
    x->m.influences = 2;
    x->m.joints = x->joints;
    x->m.weights = x->weights;
}

static void set_vertex(wm *x, int v, uint16_t j0, float w0, uint16_t j1, float w1)
{
    x->joints[v * 2] = j0, x->weights[v * 2] = w0;
    x->joints[v * 2 + 1] = j1, x->weights[v * 2 + 1] = w1;
}

static void changed_compares_weights_by_joint_name(void **state)
{
    (void)state;
    static const char *const before[3] = {"Hips", "Spine", "LeftUpLeg"};
    static const char *const after[4] = {"Tail_1", "LeftUpLeg", "Hips", "Spine"}; /* reordered, one added */
    wm *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_true(a && b);
    wm_init(a, before, 3);
    wm_init(b, after, 4);
    set_vertex(a, 0, 0, 1, 0, 0), set_vertex(b, 0, 2, 1, 0, 0);             /* Hips 1 both: the same */
    set_vertex(a, 1, 0, 0.6f, 1, 0.4f), set_vertex(b, 1, 3, 0.4f, 2, 0.6f); /* slots swapped: the same */
    set_vertex(a, 2, 0, 1, 0, 0), set_vertex(b, 2, 0, 0.5f, 2, 0.5f);       /* half moved to Tail_1 */
    set_vertex(a, 3, 2, 1, 0, 0), set_vertex(b, 3, 1, 0.999f, 0, 0.001f);   /* under 1/255: the same */
    uint8_t changed[4], skip[4] = {0, 0, 1, 0};
    tb_error err;
    assert_int_equal(tb__changed_by_name(&a->m, &b->m, NULL, changed, &err), TB_OK);
    assert_int_equal(changed[0], 0);
    assert_int_equal(changed[1], 0);
    assert_int_equal(changed[2], 1);
    assert_int_equal(changed[3], 0);
    assert_int_equal(tb__changed_by_name(&a->m, &b->m, skip, changed, &err), TB_OK);
    assert_int_equal(changed[2], 0); /* skipped: an appendage the pass acted on */
    b->m.vertex_count = 3;
    assert_int_equal(tb__changed_by_name(&a->m, &b->m, NULL, changed, &err), TB_ERR_INVALID);
    free(a), free(b);
}

/* After a repair the joints are appended (every joint of a keeps its slot
 * and name in b): blocks of vertices whose rows are the same bits are
 * passed over whole. A change anywhere in a block is still found, at the
 * right vertex, in the first block, a middle one and the short last one;
 * one under 1/255 is not a change; a skipped vertex is not counted. */
static void changed_after_appended_joints_finds_each_vertex_in_any_block(void **state)
{
    (void)state;
    enum { V = 200, I = 4 };
    static const char *const before[3] = {"Hips", "Spine", "LeftUpLeg"};
    static const char *const after[4] = {"Hips", "Spine", "LeftUpLeg", "Tail_1"};
    int sj[4] = {0, 1, 2, 3};
    uint16_t *ja = calloc(V * I, sizeof *ja), *jb = calloc(V * I, sizeof *jb);
    float *wa = calloc(V * I, sizeof *wa), *wb = calloc(V * I, sizeof *wb);
    uint8_t *changed = malloc(V), *skip = calloc(V, 1);
    assert_true(ja && jb && wa && wb && changed && skip);
    for (size_t v = 0; v < V; v++) {
        ja[v * I] = (uint16_t)(v % 3), wa[v * I] = 0.75f;
        ja[v * I + 1] = (uint16_t)((v + 1) % 3), wa[v * I + 1] = 0.25f;
    }
    memcpy(jb, ja, V * I * sizeof *jb);
    memcpy(wb, wa, V * I * sizeof *wb);
    tb_model a, b;
    memset(&a, 0, sizeof a);
    a.skel.joint_count = 3, a.skel.names = before, a.skin_joint_count = 3, a.skin_joints = sj;
    a.vertex_count = V, a.influences = I, a.joints = ja, a.weights = wa;
    b = a;
    b.skel.joint_count = 4, b.skel.names = after, b.skin_joint_count = 4, b.joints = jb, b.weights = wb;
    tb_error err;
    assert_int_equal(tb__changed_by_name(&a, &b, NULL, changed, &err), TB_OK);
    for (size_t v = 0; v < V; v++)
        assert_int_equal(changed[v], 0);
    const size_t moved[3] = {5, 100, 199}; /* blocks of 64: the first, the second, the last (8 long) */
    for (int i = 0; i < 3; i++) {
        size_t v = moved[i];
        jb[v * I + 2] = 3, wb[v * I + 2] = 0.25f, wb[v * I + 1] = 0; /* a quarter to Tail_1 */
    }
    wb[101 * I] = 0.7505f, wb[101 * I + 1] = 0.2495f; /* under 1/255, beside a change */
    skip[199] = 1;
    assert_int_equal(tb__changed_by_name(&a, &b, skip, changed, &err), TB_OK);
    for (size_t v = 0; v < V; v++)
        assert_int_equal(changed[v], v == 5 || v == 100);
    free(ja), free(jb), free(wa), free(wb), free(changed), free(skip);
}

/* The band's cut to four influences (tb__fade_to_slots, docs/fix.md
 * session 14): the parent skin joint 10, Tail_1 20 (K 2), body joints 1-3.
 * Four joints or fewer are left as they are; five keep at most four, the
 * smallest fading over [m, 2m] of the fifth largest priority (chain joints
 * and the parent at twice their weight), what fades going to the parent;
 * and two vertices either side of a tie between Tail_1 and a thigh come
 * out close, where keeping the four largest would move 0.078 from one
 * joint to the other. */
static void fade(float *w, const uint16_t *j, int n)
{
    tb__chain_plan c;
    memset(&c, 0, sizeof c);
    c.skP = 10, c.sk0 = 20, c.K = 2;
    tb__fade_to_slots(&c, j, w, n);
}

static void fade_cuts_to_four_continuously(void **state)
{
    (void)state;
    const uint16_t j[5] = {20, 10, 1, 2, 3}; /* Tail_1, parent, three body joints */
    float four[4] = {0.2f, 0.5f, 0.2f, 0.1f};
    fade(four, j, 4);
    assert_float_equal(four[0], 0.2f, 1e-7f);
    assert_float_equal(four[3], 0.1f, 1e-7f);
    /* priorities 0.2, 1.0, 0.3, 0.075, 0.15 (x2 for 20 and 10): m is the
     * fifth, 0.075, cut to 0; 0.15 = 2m and the rest stay whole */
    float w[5] = {0.1f, 0.5f, 0.3f, 0.075f, 0.15f};
    fade(w, j, 5);
    int left = 0;
    float sum = 0;
    for (int i = 0; i < 5; i++)
        left += w[i] > 0, sum += w[i];
    assert_true(left <= 4);
    assert_float_equal(sum, 1.125f, 1e-6f); /* nothing lost: it went to the parent */
    assert_float_equal(w[0], 0.1f, 1e-6f);
    assert_float_equal(w[2], 0.3f, 1e-6f);
    assert_float_equal(w[3], 0, 1e-7f);
    /* two vertices either side of a tie: Tail_1 0.039 and thigh 0.079 (p
     * 0.078 and 0.079), then 0.0395 and 0.078 */
    float a[5] = {0.039f, 0.48f, 0.18f, 0.18f, 0.079f}, b[5] = {0.0395f, 0.48f, 0.18f, 0.18f, 0.078f};
    fade(a, j, 5);
    fade(b, j, 5);
    for (int i = 0; i < 5; i++)
        assert_true(fabsf(a[i] - b[i]) < 0.01f);
    assert_true(a[0] == 0 || a[4] < 0.01f); /* at most four */
}

/* The cut spread over the band (tb__cut_spread, docs/fix.md session 16):
 * three band vertices in a row, 0 – 1 – 2, each edge weighing 1, vertex 0
 * meeting the collar by 1. Body joint 1 (0.2 everywhere) is cut at vertex
 * 2 alone; Tail_1 (20) is cut at vertex 0. φ of joint 1 is 1 at the
 * collar, 0 at vertex 2 (its cap) and the mean of its neighbours'
 * between: φ0 = (1 + φ1) / 2, φ1 = (φ0 + 0) / 2, so 2/3 and 1/3; what
 * joint 1 loses goes on the parent (10); Tail_1, a chain joint, keeps the
 * cut's own answer; each vertex's weights still sum as before. */
static void cut_spreads_over_the_band(void **state)
{
    (void)state;
    tb__chain_plan c;
    memset(&c, 0, sizeof c);
    c.skP = 10, c.sk0 = 20, c.K = 2;
    tb__seam_field f;
    memset(&f, 0, sizeof f);
    size_t off[4] = {0, 1, 3, 4}, nxt[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    uint32_t adj[4] = {1, 0, 2, 1}, rep[3] = {0, 1, 2};
    float aw[4] = {1, 1, 1, 1}, wpull[3] = {1, 0, 0};
    uint8_t held[3] = {0, 0, 0};
    f.nb = 3, f.off = off, f.adj = adj, f.aw = aw, f.wpull = wpull, f.held = held, f.rep = rep, f.nxt = nxt;
    tb__band_rows r;
    assert_true(tb__band_rows_alloc(&r, 3));
    const uint16_t j[5] = {10, 1, 2, 3, 20};
    const float w[5] = {0.4f, 0.2f, 0.15f, 0.15f, 0.1f};
    for (size_t b = 0; b < 3; b++) {
        r.cnt[b] = 5;
        memcpy(r.j + b * TB__ROW, j, sizeof j);
        memcpy(r.w0 + b * TB__ROW, w, sizeof w);
        memcpy(r.w1 + b * TB__ROW, w, sizeof w);
    }
    r.w1[2 * TB__ROW + 1] = 0, r.w1[2 * TB__ROW + 0] += 0.2f; /* the cut at vertex 2: joint 1 */
    r.w1[0 * TB__ROW + 4] = 0, r.w1[0 * TB__ROW + 0] += 0.1f; /* at vertex 0: Tail_1 */
    assert_true(tb__cut_setup(NULL, &c, &f, &r));
    assert_int_equal(r.nc, 1); /* joint 1 alone: Tail_1 is the chain's */
    tb__cut_spread(&c, &f, &r);
    assert_float_equal(r.w1[0 * TB__ROW + 1], 0.2f * 2 / 3, 1e-4f);
    assert_float_equal(r.w1[1 * TB__ROW + 1], 0.2f / 3, 1e-4f);
    assert_float_equal(r.w1[2 * TB__ROW + 1], 0, 1e-7f);
    assert_float_equal(r.w1[0 * TB__ROW + 4], 0, 1e-7f);
    assert_float_equal(r.w1[1 * TB__ROW + 4], 0.1f, 1e-7f);
    for (size_t b = 0; b < 3; b++) {
        float sum = 0;
        for (int i = 0; i < 5; i++)
            sum += r.w1[b * TB__ROW + (size_t)i];
        assert_float_equal(sum, 1.0f, 1e-6f);
    }
    assert_float_equal(r.w1[1 * TB__ROW + 0], 0.4f + 0.2f * 2 / 3, 1e-4f);
    tb__band_rows_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(weights_collar_middle_ramps_and_the_end),
        cmocka_unit_test(coordinate_projects_near_the_geodesics_segment),
        cmocka_unit_test(quantize_sums_to_the_scale_by_largest_remainder),
        cmocka_unit_test(zone_and_band_widen_for_rings_and_thickness),
        cmocka_unit_test(ramp_zone_reads_the_zone_the_weights_were_written_with),
        cmocka_unit_test(changed_compares_weights_by_joint_name),
        cmocka_unit_test(changed_after_appended_joints_finds_each_vertex_in_any_block),
        cmocka_unit_test(fade_cuts_to_four_continuously),
        cmocka_unit_test(cut_spreads_over_the_band),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
