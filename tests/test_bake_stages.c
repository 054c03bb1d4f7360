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
 *   tail rotations  the spring's, or blended toward the artist's keys;
 *   keyed clip      the clip each baked clip's hook is handed is the one the
 *                   file reads back once the keys are written. */
#include "passes/bake.c"

#include "rig.h"
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

/* tb__keyed_clip on the hand-built rig: the clip's own channels, then one
 * for the tail bone on the baked times; a key on the far hemisphere from
 * the one before is turned over, as tb__write_keys writes it; with the
 * artist's keys replaced (s.artist), the clip's own tail rotation goes. */
static void keyed_clip_turns_keys_over_and_drops_the_artists(void **state)
{
    (void)state;
    rig *g = rig_new();
    rig_clip(g, 3, 0.5f, cycle, ramp, zero);
    int bones[1] = {TAIL};
    g->s.bones = bones;
    g->s.bone_count = 1;
    tb__run u;
    memset(&u, 0, sizeof u);
    u.s = g->s;
    u.clip = &g->clip;
    float times[3] = {0, 0.5f, 1.25f}, rot[12], turned[4];
    rot_x(rot, 10);
    rot_x(rot + 4, 20);
    for (int i = 0; i < 4; i++)
        rot[4 + i] = -rot[4 + i]; /* the same rotation, on the far side */
    rot_x(rot + 8, 30);
    rot_x(turned, 20);
    tb_clip *k = tb__keyed_clip(&u, times, rot, 3);
    assert_non_null(k);
    assert_int_equal(k->channel_count, 4);
    assert_memory_equal(k->channels, g->ch, 3 * sizeof *g->ch);
    const tb_channel *t = &k->channels[3];
    assert_int_equal(t->joint, TAIL);
    assert_int_equal(t->path, TB_PATH_ROTATION);
    assert_int_equal(t->interp, TB_INTERP_LINEAR);
    assert_int_equal(t->key_count, 3);
    assert_ptr_equal(t->times, times);
    assert_memory_equal(t->values, rot, 4 * sizeof(float));
    assert_memory_equal(t->values + 4, turned, 4 * sizeof(float));
    assert_memory_equal(t->values + 8, rot + 8, 4 * sizeof(float));
    assert_float_equal(k->duration_s, 1.25f, 0); /* the later of the clip's end and the last key */
    free(k);
    float artist[4];
    u.s.artist = artist;
    k = tb__keyed_clip(&u, times, rot, 2);
    assert_non_null(k);
    assert_int_equal(k->channel_count, 3); /* spine, hips, the baked tail */
    assert_int_equal(k->channels[0].joint, SPINE);
    assert_int_equal(k->channels[1].joint, HIPS);
    assert_int_equal(k->channels[2].joint, TAIL);
    assert_float_equal(k->duration_s, 1.0f, 0);
    free(k);
    free(g);
}

/* ---- keyed clip: what tb__bake_hooks.keyed is handed ----------------- */

typedef struct keyed_got {
    tb_model *m;    /* the bake's, handed to loaded */
    tb_clip *clip[16];
    int calls;
} keyed_got;

static void keyed_loaded(void *ctx, tb_model *m)
{
    ((keyed_got *)ctx)->m = m;
}

/* A deep copy of the clip, kept past the call. */
static void keyed_keep(void *ctx, int c, const tb_clip *k, int group)
{
    (void)group;
    keyed_got *got = ctx;
    assert_true(c >= 0 && c < 16);
    assert_null(got->clip[c]);
    tb_clip *copy = calloc(1, sizeof *copy);
    tb_channel *ch = calloc((size_t)k->channel_count + 1, sizeof *ch);
    assert_non_null(copy);
    assert_non_null(ch);
    *copy = *k;
    for (int i = 0; i < k->channel_count; i++) {
        ch[i] = k->channels[i];
        size_t n = (size_t)ch[i].key_count, per = ch[i].interp == TB_INTERP_CUBICSPLINE ? 3 : 1;
        size_t comp = ch[i].path == TB_PATH_ROTATION ? 4 : 3;
        float *t = malloc(n * sizeof *t), *v = malloc(n * per * comp * sizeof *v);
        assert_non_null(t);
        assert_non_null(v);
        memcpy(t, ch[i].times, n * sizeof *t);
        memcpy(v, ch[i].values, n * per * comp * sizeof *v);
        ch[i].times = t;
        ch[i].values = v;
    }
    copy->channels = ch;
    got->clip[c] = copy;
    __atomic_add_fetch(&got->calls, 1, __ATOMIC_RELAXED);
}

static void keyed_free(tb_clip *c)
{
    for (int i = 0; c && i < c->channel_count; i++) {
        free((void *)c->channels[i].times);
        free((void *)c->channels[i].values);
    }
    if (c)
        free((void *)c->channels);
    free(c);
}

/* Bakes doc on two threads with the hooks; each baked clip's keyed clip is
 * the one tb_clip_load reads back from the written document: the same
 * channels in the same order, the same times and values to the bit.
 * Returns the clips compared. */
static int keyed_matches_the_file(tb_doc *doc, const tb_bake_desc *d)
{
    keyed_got got = {0};
    tb__bake_hooks hooks = {&got, NULL, keyed_loaded, NULL, keyed_keep};
    tb_bake_report rep;
    tb_error err = {0};
    tb_bake_desc bd = *d;
    bd.threads = 2;
    assert_int_equal(tb__bake_beside(doc, &bd, &rep, &hooks, &err), TB_OK);
    assert_non_null(got.m);
    int baked = 0;
    for (int c = 0; c < rep.clip_count; c++) {
        if (rep.clips[c].skipped) {
            assert_null(got.clip[c]);
            continue;
        }
        baked++;
        const tb_clip *k = got.clip[c];
        assert_non_null(k);
        tb_clip *back = NULL;
        assert_int_equal(tb_clip_load(&back, doc, got.m, rep.clips[c].animation, NULL, &err), TB_OK);
        assert_int_equal(k->channel_count, back->channel_count);
        assert_memory_equal(&k->duration_s, &back->duration_s, sizeof(float));
        for (int i = 0; i < k->channel_count; i++) {
            const tb_channel *a = &k->channels[i], *b = &back->channels[i];
            assert_int_equal(a->joint, b->joint);
            assert_int_equal(a->path, b->path);
            assert_int_equal(a->interp, b->interp);
            assert_int_equal(a->key_count, b->key_count);
            size_t n = (size_t)a->key_count, per = a->interp == TB_INTERP_CUBICSPLINE ? 3 : 1;
            size_t comp = a->path == TB_PATH_ROTATION ? 4 : 3;
            assert_memory_equal(a->times, b->times, n * sizeof(float));
            assert_memory_equal(a->values, b->values, n * per * comp * sizeof(float));
        }
        tb_clip_free(back);
        keyed_free(got.clip[c]);
    }
    assert_int_equal(got.calls, baked);
    tb_model_free(got.m);
    tb_bake_report_free(&rep);
    return baked;
}

/* The synthetic tail_hips repaired and baked (the spring's keys on new
 * Tail_* bones); and the Khronos fox's own chain baked with the artist's
 * keys replaced (--bake-existing: its tail rotation channels dropped
 * first), when ../shared is there. */
static void keyed_clip_is_what_the_file_reads_back(void **state)
{
    (void)state;
    tb_doc *doc = tbt_synth_repaired("tail_hips");
    assert_non_null(doc);
    tb_error err = {0};
    tb_bake_desc d;
    memset(&d, 0, sizeof d);
    assert_true(keyed_matches_the_file(doc, &d) >= 2);
    tb_doc_free(doc);
    tbt_path fox_buf;
    const char *fox = tbt_corpus_file(&fox_buf, "reference/khronos_Fox.glb");
    if (!fox) {
        tbt_skip();
        return;
    }
    assert_int_equal(tb_doc_load(&doc, fox, NULL, &err), TB_OK);
    d.existing = 1;
    assert_true(keyed_matches_the_file(doc, &d) >= 2);
    tb_doc_free(doc);
}

/* A model given to the bake (fix hands on the transfer's) is taken for
 * its own: handed to loaded as that very model, and the written document
 * is the one a bake that loads its own writes; an error before the loop
 * (a clip name not in the file) frees it (the sanitizer build sees a
 * leak otherwise). */
static void a_given_model_is_taken_for_the_bakes_own(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_bake_desc d;
    memset(&d, 0, sizeof d);
    d.threads = 2;
    uint8_t *bytes[2] = {NULL, NULL};
    size_t size[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        tb_doc *doc = tbt_synth_repaired("tail_hips");
        assert_non_null(doc);
        const tb_model_desc md = {.no_normals = 1};
        tb_model *given = NULL;
        if (k)
            assert_int_equal(tb_model_load_desc(&given, doc, &md, &err), TB_OK);
        keyed_got got = {0};
        tb__bake_hooks hooks = {&got, given, keyed_loaded, NULL, keyed_keep};
        tb_bake_report rep;
        assert_int_equal(tb__bake_beside(doc, &d, &rep, &hooks, &err), TB_OK);
        assert_non_null(got.m);
        if (k)
            assert_ptr_equal(got.m, given);
        assert_true(got.calls >= 2);
        for (int c = 0; c < rep.clip_count; c++)
            keyed_free(got.clip[c]);
        tb_model_free(got.m);
        tb_bake_report_free(&rep);
        assert_int_equal(tb_doc_write_memory(doc, &bytes[k], &size[k], &err), TB_OK);
        tb_doc_free(doc);
    }
    assert_int_equal(size[0], size[1]);
    assert_memory_equal(bytes[0], bytes[1], size[0]);
    free(bytes[0]);
    free(bytes[1]);
    tb_doc *doc = tbt_synth_repaired("tail_hips");
    const tb_model_desc md = {.no_normals = 1};
    tb_model *given = NULL;
    assert_int_equal(tb_model_load_desc(&given, doc, &md, &err), TB_OK);
    const char *only[] = {"no such clip", NULL};
    d.only = only;
    keyed_got got = {0};
    tb__bake_hooks hooks = {&got, given, keyed_loaded, NULL, keyed_keep};
    tb_bake_report rep;
    assert_int_equal(tb__bake_beside(doc, &d, &rep, &hooks, &err), TB_ERR_ARG);
    assert_null(got.m);
    tb_doc_free(doc);
}

/* Hooks whose keyed calls and side task take their time (fix measures in
 * keyed): the loop's last task writes the keys beside the last of them. */
typedef struct slow_hooks {
    int keyed_ms, side_ms;
    int calls, side_calls;
    const tb_doc *doc;   /* side reads its first clip's channel count... */
    int side_channels;   /* ...into this, after its sleep */
} slow_hooks;

static void slow_sleep(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0)
        ;
}

static void slow_keyed(void *ctx, int c, const tb_clip *k, int group)
{
    (void)c, (void)k, (void)group;
    slow_hooks *h = ctx;
    slow_sleep(h->keyed_ms);
    __atomic_add_fetch(&h->calls, 1, __ATOMIC_RELAXED);
}

static void slow_side(void *ctx, int task, int worker)
{
    (void)task, (void)worker;
    slow_hooks *h = ctx;
    slow_sleep(h->side_ms);
    if (h->doc)
        h->side_channels = tb_doc_gltf(h->doc)->animations[0].channel_count;
    __atomic_add_fetch(&h->side_calls, 1, __ATOMIC_RELAXED);
}

/* The bytes of doc after the bake, which must succeed. */
static uint8_t *bake_bytes(tb_doc *doc, int threads, slow_hooks *h, size_t *size)
{
    tb_error err = {0};
    tb_bake_desc d;
    memset(&d, 0, sizeof d);
    d.threads = threads;
    tb__bake_hooks hooks = {h, NULL, NULL, slow_side, slow_keyed};
    tb_bake_report rep;
    const int before = tb_doc_gltf(doc)->animations[0].channel_count;
    if (h)
        h->doc = doc;
    assert_int_equal(tb__bake_beside(doc, &d, &rep, h ? &hooks : NULL, &err), TB_OK);
    /* the keys were not written before side ended: it saw the clip as
     * it was */
    assert_true(tb_doc_gltf(doc)->animations[0].channel_count > before);
    if (h)
        assert_int_equal(h->side_channels, before);
    int baked = 0;
    for (int c = 0; c < rep.clip_count; c++)
        baked += !rep.clips[c].skipped;
    assert_true(baked >= 2);
    if (h) {
        assert_int_equal(h->calls, baked);
        assert_int_equal(h->side_calls, 1);
    }
    tb_bake_report_free(&rep);
    uint8_t *bytes = NULL;
    assert_int_equal(tb_doc_write_memory(doc, &bytes, size, &err), TB_OK);
    return bytes;
}

/* The keys are written by the loop's last task once every clip's stand
 * and the side task has ended, beside the last keyed calls: whatever those
 * and side take, on two threads or three, the document is the bytes of a
 * bake on one thread without hooks. */
static void keys_written_beside_the_last_keyed_calls_are_the_same_bytes(void **state)
{
    (void)state;
    tb_doc *doc = tbt_synth_repaired("tail_hips");
    assert_non_null(doc);
    size_t ref_size = 0;
    uint8_t *ref = bake_bytes(doc, 1, NULL, &ref_size);
    tb_doc_free(doc);
    const int cases[][3] = {{2, 20, 0}, {3, 0, 40}, {2, 10, 30}, {1, 5, 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        slow_hooks h = {cases[k][1], cases[k][2], 0, 0, NULL, 0};
        doc = tbt_synth_repaired("tail_hips");
        size_t size = 0;
        uint8_t *bytes = bake_bytes(doc, cases[k][0], &h, &size);
        assert_int_equal(size, ref_size);
        assert_memory_equal(bytes, ref, size);
        free(bytes);
        tb_doc_free(doc);
    }
    free(ref);
}

/* A clip that cannot be read (a key past TB_MAX_CLIP_S) ends the bake with
 * the first such error in clip order, the same on one thread and on three,
 * after every clip's run has ended (no thread left waiting). */
static void a_clip_that_fails_ends_the_bake_with_the_first_error(void **state)
{
    (void)state;
    char where[2][sizeof ((tb_error *)0)->where], message[2][sizeof ((tb_error *)0)->message];
    tb_result got[2];
    for (int k = 0; k < 2; k++) {
        tb_doc *doc = tbt_synth_repaired("tail_hips");
        assert_non_null(doc);
        tb_error err = {0};
        const tb_gltf *g = tb_doc_gltf(doc);
        assert_true(g->animation_count >= 3);
        int in = g->animations[1].samplers[0].input;
        size_t n = g->accessors[in].count;
        float *t = malloc(n * sizeof *t);
        assert_non_null(t);
        assert_int_equal(tb_accessor_read_floats(doc, in, t, n, &err), TB_OK);
        t[n - 1] = 2 * TB_MAX_CLIP_S;
        assert_int_equal(tb_doc_replace_accessor_data(doc, in, t, TB_COMPONENT_FLOAT, &err), TB_OK);
        free(t);
        assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
        tb_bake_desc d;
        memset(&d, 0, sizeof d);
        d.threads = k ? 3 : 1;
        slow_hooks h = {5, 0, 0, 0, NULL, 0};
        tb__bake_hooks hooks = {&h, NULL, NULL, slow_side, slow_keyed};
        tb_bake_report rep;
        got[k] = tb__bake_beside(doc, &d, &rep, &hooks, &err);
        assert_int_not_equal(got[k], TB_OK);
        snprintf(where[k], sizeof where[k], "%s", err.where);
        snprintf(message[k], sizeof message[k], "%s", err.message);
        assert_int_equal(h.side_calls, 1);
        tb_bake_report_free(&rep);
        tb_doc_free(doc);
    }
    assert_int_equal(got[0], got[1]);
    assert_string_equal(where[0], where[1]);
    assert_string_equal(message[0], message[1]);
    assert_non_null(strstr(message[0], "longer than"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loop_kind_closed_gap_or_not),
        cmocka_unit_test(key_interval_is_the_first_keyed_channels),
        cmocka_unit_test(world_needed_poses_only_what_the_step_reads),
        cmocka_unit_test(tail_rotations_the_springs_or_blended_toward_the_artists),
        cmocka_unit_test(warm_up_jump_lands_where_a_geometric_sequence_ends),
        cmocka_unit_test(keyed_clip_turns_keys_over_and_drops_the_artists),
        cmocka_unit_test(keyed_clip_is_what_the_file_reads_back),
        cmocka_unit_test(a_given_model_is_taken_for_the_bakes_own),
        cmocka_unit_test(keys_written_beside_the_last_keyed_calls_are_the_same_bytes),
        cmocka_unit_test(a_clip_that_fails_ends_the_bake_with_the_first_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
