/* The bake's per-clip stages (SPEC D "Bake"; src/passes/bake.c), each
 * called alone on a skeleton and clips built by hand: Hips → Spine and
 * Hips → Tail_1, the hips at y = 1, H 1.8. bake.c is compiled into this
 * test (its stages are static); the library's copy of it is then not
 * linked.
 *   loop kind       closed (last pose = first), a cycle whose last key is
 *                   a frame before its start (gap), or not looping; the
 *                   tail's own keys and root motion do not count;
 *   key interval    the source's frame time;
 *   world (needed)  only the joints the step reads are posed;
 *   tail rotations  the spring's, or blended toward the artist's keys. */
#include "passes/bake.c"

#include "support.h"

enum { HIPS, SPINE, TAIL, NJ };
enum { MAXK = 16 };

typedef struct rig {
    tb_model m;
    int parents[NJ];
    const char *names[NJ];
    tb_transform rest[NJ];
    uint8_t is_tail[NJ];
    tb__sim s;
    tb_transform locals[NJ], tmp[NJ];
    float world[NJ][16], tmp_world[NJ][16];
    /* one clip: a rotation channel on each of spine and tail, a translation on the hips */
    tb_channel ch[3];
    float times[MAXK], spine_q[MAXK * 4], tail_q[MAXK * 4], hips_t[MAXK * 3];
    tb_clip clip;
} rig;

static rig *rig_new(void)
{
    rig *g = calloc(1, sizeof *g);
    assert_non_null(g);
    static const char *const names[NJ] = {"Hips", "Spine", "Tail_1"};
    static const int parents[NJ] = {-1, HIPS, HIPS};
    static const float t[NJ][3] = {{0, 1, 0}, {0, 0.2f, 0}, {0, 0, -0.1f}};
    for (int j = 0; j < NJ; j++) {
        g->parents[j] = parents[j];
        g->names[j] = names[j];
        memcpy(g->rest[j].t, t[j], sizeof t[j]);
        g->rest[j].r[3] = 1;
        g->rest[j].s[0] = g->rest[j].s[1] = g->rest[j].s[2] = 1;
    }
    g->is_tail[TAIL] = 1;
    tb_model *m = &g->m;
    m->skel.joint_count = NJ;
    m->skel.parents = g->parents;
    m->skel.names = g->names;
    m->skel.rest_local = g->rest;
    for (int r = 0; r < TB_ROLE_COUNT; r++)
        m->role_joint[r] = -1;
    m->role_joint[TB_ROLE_HIPS] = HIPS;
    m->height = 1.8f;
    g->s.m = m;
    g->s.locals = g->locals;
    g->s.world = g->world;
    g->s.is_tail = g->is_tail;
    return g;
}

static void rot_x(float *q, float deg)
{
    float h = 0.5f * deg * TB_PI_F / 180.0f;
    q[0] = sinf(h), q[1] = 0, q[2] = 0, q[3] = cosf(h);
}

/* keys at 0, step, …: the spine turned spine_deg(k) about X, the tail
 * tail_deg(k), the hips at height 1 + rise(k) */
static void rig_clip(rig *g, int keys, float step, float (*spine_deg)(int, int), float (*tail_deg)(int, int),
                     float (*rise)(int, int))
{
    assert_true(keys <= MAXK);
    for (int k = 0; k < keys; k++) {
        g->times[k] = step * (float)k;
        rot_x(g->spine_q + k * 4, spine_deg(k, keys));
        rot_x(g->tail_q + k * 4, tail_deg(k, keys));
        g->hips_t[k * 3] = 0, g->hips_t[k * 3 + 1] = 1 + rise(k, keys), g->hips_t[k * 3 + 2] = 0.05f * (float)k;
    }
    g->ch[0] = (tb_channel){SPINE, TB_PATH_ROTATION, TB_INTERP_LINEAR, keys, g->times, g->spine_q};
    g->ch[1] = (tb_channel){TAIL, TB_PATH_ROTATION, TB_INTERP_LINEAR, keys, g->times, g->tail_q};
    g->ch[2] = (tb_channel){HIPS, TB_PATH_TRANSLATION, TB_INTERP_LINEAR, keys, g->times, g->hips_t};
    g->clip = (tb_clip){"clip", step * (float)(keys - 1), 3, g->ch};
}

static float zero(int k, int n)
{
    (void)k, (void)n;
    return 0;
}
/* a swing there and back, the last key the first pose */
static float there_and_back(int k, int n)
{
    return 30.0f * sinf(TB_PI_F * (float)k / (float)(n - 1));
}
/* a cycle of n keys whose next key would be the first (k = n) */
static float cycle(int k, int n)
{
    return 20.0f * sinf(2 * TB_PI_F * (float)k / (float)n);
}
static float ramp(int k, int n)
{
    (void)n;
    return 10.0f * (float)k;
}
/* the tail ending 70° from where it began */
static float tail_turned_at_end(int k, int n)
{
    return k == n - 1 ? 70.0f : 0.0f;
}
static float rise_at_end(int k, int n)
{
    return k == n - 1 ? 0.1f : 0; /* 0.1 of 1.8: over 2% of H */
}

static int loop_kind(rig *g, float *gap)
{
    return tb__loop_kind(&g->s, &g->clip, g->tmp, g->tmp_world, gap);
}

static void loop_kind_closed_gap_or_not(void **state)
{
    (void)state;
    rig *g = rig_new();
    float gap = -1;
    /* the last pose the first: closed, whatever the tail does and however
     * far the hips travel forward (root motion) */
    rig_clip(g, 9, 0.125f, there_and_back, tail_turned_at_end, zero);
    assert_int_equal(loop_kind(g, &gap), TB__CLOSED);
    assert_float_equal(gap, 0, 0);
    /* a cycle of 10 keys a tenth of a second apart, the 11th left out: a gap of one frame */
    rig_clip(g, 10, 0.1f, cycle, zero, zero);
    assert_int_equal(loop_kind(g, &gap), TB__GAP);
    assert_float_equal(gap, 0.1f, 1e-6f);
    /* ending 90° from where it began, 10° a frame: not a loop */
    rig_clip(g, 10, 0.1f, ramp, zero, zero);
    assert_int_equal(loop_kind(g, &gap), TB__NOT_LOOPING);
    assert_float_equal(gap, 0, 0);
    /* the last pose the first but the hips risen: not a loop */
    rig_clip(g, 9, 0.125f, there_and_back, zero, rise_at_end);
    assert_int_equal(loop_kind(g, &gap), TB__NOT_LOOPING);
    /* the same without hips (no role): the height is not read */
    g->m.role_joint[TB_ROLE_HIPS] = -1;
    assert_int_equal(loop_kind(g, &gap), TB__CLOSED);
    free(g);
}

static void key_interval_is_the_first_keyed_channels(void **state)
{
    (void)state;
    rig *g = rig_new();
    rig_clip(g, 10, 0.1f, cycle, zero, zero);
    assert_float_equal(tb__key_interval(&g->clip), 0.1f, 1e-6f);
    g->ch[0].key_count = 1; /* one key says nothing: the next channel's */
    g->ch[1].key_count = 4; /* 0 … 0.3 */
    assert_float_equal(tb__key_interval(&g->clip), 0.1f, 1e-6f);
    g->ch[1].times = g->hips_t; /* times 0, 1, 0.9: the first and the last, (0.9 − 0) / 2 */
    g->ch[1].key_count = 3;
    g->hips_t[2] = 0.9f;
    assert_float_equal(tb__key_interval(&g->clip), 0.45f, 1e-6f);
    g->clip.channel_count = 1; /* none with two keys */
    assert_float_equal(tb__key_interval(&g->clip), 0, 0);
    free(g);
}

static void world_needed_poses_only_what_the_step_reads(void **state)
{
    (void)state;
    rig *g = rig_new();
    uint8_t need[NJ] = {1, 0, 1};
    g->s.need = need;
    for (int j = 0; j < NJ; j++) {
        g->locals[j] = g->rest[j];
        for (int k = 0; k < 16; k++)
            g->world[j][k] = -7; /* left as it was where not needed */
    }
    rot_x(g->locals[HIPS].r, 90); /* the tail hangs off the turned hips: −Z → +Y */
    tb__world_needed(&g->s);
    assert_float_equal(g->world[HIPS][13], 1.0f, 1e-6f);
    assert_float_equal(g->world[TAIL][12], 0.0f, 1e-6f);
    assert_float_equal(g->world[TAIL][13], 1.1f, 1e-6f);
    assert_float_equal(g->world[TAIL][14], 0.0f, 1e-6f);
    for (int k = 0; k < 16; k++)
        assert_float_equal(g->world[SPINE][k], -7, 0);
    free(g);
}

static void tail_rotations_the_springs_or_blended_toward_the_artists(void **state)
{
    (void)state;
    rig *g = rig_new();
    int bones[1] = {TAIL};
    float artist[4], dst[4];
    g->s.bones = bones;
    g->s.bone_count = 1;
    g->s.artist = artist;
    rot_x(g->locals[TAIL].r, 0);   /* the spring's */
    rot_x(artist, 80);             /* the artist's key */
    tb__tail_rotations(&g->s, dst); /* keep 0: the spring's */
    assert_float_equal(dst[0], 0, 0);
    assert_float_equal(dst[3], 1, 0);
    g->s.keep = 0.25f; /* a quarter of the way to the artist's: 20° */
    tb__tail_rotations(&g->s, dst);
    assert_float_equal(2 * atan2f(dst[0], dst[3]), 20.0f * TB_PI_F / 180.0f, 1e-5f);
    free(g);
}

/* The warm-up's jump (tb__run_jump) on loop-start states put by hand into
 * a solver for this rig (one link, TB_SPRING_STATE_FLOATS floats): after
 * three pass ends x* + e, x* + rho e, x* + rho^2 e it puts the state on x*;
 * it never jumps on ringing (rho < 0), on two modes of like size that do
 * not share one ratio (the steps' off-line part 0.61 of the last, where a
 * third is allowed), on rho above 0.95, when the next pass would close the
 * loop as it is (rho times the last change under the tolerance), and
 * never before three pass ends. */
static void warm_up_jump_lands_where_a_geometric_sequence_ends(void **state)
{
    (void)state;
    rig *g = rig_new();
    tb_spring_animator *a = NULL;
    tb_error err;
    assert_int_equal(tb_spring_create(&a, &g->m.skel, NULL, &err), TB_OK);
    const int n = tb_spring_state_count(a);
    assert_int_equal(n, TB_SPRING_STATE_FLOATS);
    float star[TB_SPRING_STATE_FLOATS] = {0.1f, 0.9f, -0.2f, 0.3f, -0.1f, 0.05f, 0, 0, 0.1f, 0.99498744f};
    float e[TB_SPRING_STATE_FLOATS] = {0.02f, -0.01f, 0.03f, 0.2f, 0.1f, -0.05f, 0, 0, 0, 0};
    float f[TB_SPRING_STATE_FLOATS] = {0.0f, 0.03f, -0.01f, -0.1f, 0.2f, 0.1f, 0, 0, 0, 0}; /* not along e */
    static const struct {
        const char *what;
        float rho, rho2; /* e's ratio; f's (0: no second mode) */
        float change;    /* the last pass's change of the tail's rotations (tolerance 0.1) */
        int jumps;
    } cases[] = {
        {"one mode, rho 0.8", 0.8f, 0, 1.0f, 1},
        {"one mode, rho 0.3", 0.3f, 0, 1.0f, 1},
        {"ringing, rho -0.8", -0.8f, 0, 1.0f, 0},
        {"one mode, rho 0.97 (too slow to trust)", 0.97f, 0, 1.0f, 0},
        {"two modes of like size, rho 0.8 and 0.1", 0.8f, 0.1f, 1.0f, 0},
        {"one mode, rho 0.8, the next pass closes as it is (0.8 x 0.12 < 0.1)", 0.8f, 0, 0.12f, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tb_bake_clip rep;
        memset(&rep, 0, sizeof rep);
        tb__run u;
        memset(&u, 0, sizeof u);
        u.s.anim = a;
        u.rep = &rep;
        u.xcount = n;
        u.xs = malloc(3 * (size_t)n * sizeof *u.xs);
        assert_non_null(u.xs);
        float x[TB_SPRING_STATE_FLOATS], got[TB_SPRING_STATE_FLOATS];
        int jumped = 0;
        for (int p = 0; p < 3; p++) {
            const float ke = powf(cases[c].rho, (float)p), kf = cases[c].rho2 ? powf(cases[c].rho2, (float)p) : 0;
            for (int k = 0; k < n; k++)
                x[k] = star[k] + ke * e[k] + kf * f[k];
            tb_spring_state_set(a, x);
            jumped = tb__run_jump(&u, cases[c].change, 0.1f);
            if (p < 2)
                assert_int_equal(jumped, 0);
        }
        tb_spring_state_get(a, got);
        float far = 0;
        for (int k = 0; k < n; k++)
            far = fmaxf(far, fabsf(got[k] - (cases[c].jumps ? star[k] : x[k])));
        print_message("%s: jumped %d, %.2e from %s\n", cases[c].what, jumped, far,
                      cases[c].jumps ? "x*" : "the last state");
        assert_int_equal(jumped, cases[c].jumps);
        assert_int_equal(rep.warmup_jumps, cases[c].jumps);
        assert_true(far < 1e-5f);
        free(u.xs);
    }
    tb_spring_destroy(a);
    free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_kind_closed_gap_or_not),
        cmocka_unit_test(key_interval_is_the_first_keyed_channels),
        cmocka_unit_test(world_needed_poses_only_what_the_step_reads),
        cmocka_unit_test(tail_rotations_the_springs_or_blended_toward_the_artists),
        cmocka_unit_test(warm_up_jump_lands_where_a_geometric_sequence_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
