/* Baking the spring tail into keyframes (SPEC D). A small hand-built rig:
 * Root → Hips → Tail_1 → Tail_2 → Tail_3 → Tail_End, a strip of skin on the
 * tail, a looping sway clip on the hips and a non-looping one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/report_json.h"
#include "model_cmp.h"
#include "rig.h"
#include "support.h"
#include "tailbone/appendage.h"
#include "tailbone/bake.h"
#include "tailbone/clip.h"
#include "tailbone/fix.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"
#include "tailbone/synth.h"

#define PI_F 3.14159265f

/* Builds the rig (tests/rig.h) and its two clips. with_tail = 0 names the
 * bones Bone_1… (no chain). */
static tb_doc *build_rig(int with_tail)
{
    tb_doc *doc = tbt_tail_rig("test_bake", with_tail);
    json_t *root = tb_doc_json(doc);
    /* clips: Sway loops (hips ±0.25 m sideways over 1 s), Hop does not */
    float times[31], sway[31][3], hop[31][3];
    for (int k = 0; k <= 30; k++) {
        times[k] = (float)k / 30.0f;
        sway[k][0] = 0.25f * sinf(2 * PI_F * times[k]);
        sway[k][1] = 1;
        sway[k][2] = 0;
        hop[k][0] = 0;
        hop[k][1] = 1 + 0.4f * sinf(PI_F * times[k]) + 0.3f * times[k];
        hop[k][2] = 0.5f * times[k];
    }
    int ti = tbt_add_floats(doc, times, 31, "SCALAR");
    int so = tbt_add_floats(doc, &sway[0][0], 31, "VEC3");
    int ho = tbt_add_floats(doc, &hop[0][0], 31, "VEC3");
    json_object_set_new(root, "animations",
                        json_pack("[{s:s,s:[{s:i,s:i}],s:[{s:i,s:{s:i,s:s}}]},{s:s,s:[{s:i,s:i}],s:[{s:i,s:{s:i,s:s}}]}]",
                                  "name", "Sway", "samplers", "input", ti, "output", so, "channels", "sampler", 0,
                                  "target", "node", 1, "path", "translation", "name", "Hop", "samplers", "input", ti,
                                  "output", ho, "channels", "sampler", 0, "target", "node", 1, "path", "translation"));
    tb_error err;
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    return doc;
}

static const tb_bake_clip *clip_named(const tb_bake_report *r, const char *name)
{
    for (int i = 0; i < r->clip_count; i++)
        if (!strcmp(r->clips[i].name, name))
            return &r->clips[i];
    return NULL;
}

static void bake_adds_rotation_keys_on_every_tail_bone(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(1);
    json_t *before = json_deep_copy(json_object_get(tb_doc_json(doc), "animations"));
    tb_bake_report rep;
    tb_error err = {0};
    tb_result r = tb_bake(doc, NULL, &rep, &err);
    if (r)
        print_error("%s %s\n", err.where, err.message);
    assert_int_equal(r, TB_OK);
    assert_int_equal(rep.chain_count, 1);
    assert_int_equal(rep.bone_count, 3);
    json_t *after = json_object_get(tb_doc_json(doc), "animations");
    for (size_t a = 0; a < 2; a++) {
        json_t *ch = json_object_get(json_array_get(after, a), "channels");
        assert_int_equal(json_array_size(ch), 4); /* hips + 3 tail bones */
        /* the original channel and sampler are untouched and still first */
        assert_true(json_equal(json_array_get(ch, 0),
                               json_array_get(json_object_get(json_array_get(before, a), "channels"), 0)));
        for (size_t c = 1; c < 4; c++) {
            json_t *tg = json_object_get(json_array_get(ch, c), "target");
            assert_string_equal(json_string_value(json_object_get(tg, "path")), "rotation");
            assert_int_equal(json_integer_value(json_object_get(tg, "node")), (json_int_t)(c + 1));
        }
    }
    const tb_bake_clip *sway = clip_named(&rep, "Sway");
    assert_non_null(sway);
    assert_true(sway->looping);
    assert_int_equal(sway->keys, 31);
    json_decref(before);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

static void looping_clip_closes_after_warm_up_and_swings(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(1);
    tb_bake_report rep;
    tb_error err;
    assert_int_equal(tb_bake(doc, NULL, &rep, &err), TB_OK);
    const tb_bake_clip *sway = clip_named(&rep, "Sway");
    /* SPEC D: a loop baked from a cold start does not close; warmed up it must */
    assert_true(sway->passes >= 2);
    assert_true(sway->closure_rad < 0.5f * PI_F / 180.0f);
    /* a real swing, not a plank */
    assert_true(sway->swing_rad > 5.0f * PI_F / 180.0f);
    const tb_bake_clip *hop = clip_named(&rep, "Hop");
    assert_false(hop->looping);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

/* Keys come at the requested rate, and the last lands on the clip's end even
 * when the rate does not divide its duration (1 s at 7.5 keys a second: keys
 * at k / 7.5 s, then 1 s): a player must not see the tail's keys run past the
 * clip. */
static void last_key_lands_on_the_clip_end_at_any_key_rate(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(1);
    tb_bake_desc d;
    memset(&d, 0, sizeof d);
    d.fps = 7.5f;
    tb_bake_report rep;
    tb_error err = {0};
    assert_int_equal(tb_bake(doc, &d, &rep, &err), TB_OK);
    json_t *root = tb_doc_json(doc), *anims = json_object_get(root, "animations"), *anim;
    size_t a;
    int checked = 0;
    json_array_foreach(anims, a, anim) {
        json_t *ch = json_object_get(anim, "channels"), *c;
        size_t k;
        json_array_foreach(ch, k, c) {
            if (k == 0)
                continue; /* the clip's own hips channel: 0..1 s */
            json_t *smp = json_array_get(json_object_get(anim, "samplers"),
                                         (size_t)json_integer_value(json_object_get(c, "sampler")));
            json_t *acc = json_array_get(json_object_get(root, "accessors"),
                                         (size_t)json_integer_value(json_object_get(smp, "input")));
            assert_int_equal(json_integer_value(json_object_get(acc, "count")), 9); /* 0, 1/7.5, …, 1 */
            double mx = json_real_value(json_array_get(json_object_get(acc, "max"), 0));
            assert_true(fabs(mx - 1.0) < 1e-6);
            /* and every other key at the requested rate: k / 7.5 s */
            float t[9];
            assert_int_equal(tb_accessor_read_floats(doc, (int)json_integer_value(json_object_get(smp, "input")), t, 9,
                                                     &err),
                             TB_OK);
            for (int q = 0; q < 8; q++)
                assert_true(fabsf(t[q] - (float)q / 7.5f) < 1e-6f);
            assert_true(fabsf(t[8] - 1.0f) < 1e-6f);
            checked++;
        }
    }
    assert_int_equal(checked, 6); /* 3 tail bones in each of the 2 clips */
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

/* A lightly damped tail (ζ 0.1) rings for many loops: the warm-up must run
 * as many passes as it takes for the loop to close (SPEC D), not a fixed one. */
static void a_lightly_damped_loop_is_warmed_until_it_closes(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(1);
    tb_bake_desc d;
    memset(&d, 0, sizeof d);
    d.spring.params.damping_ratio = 0.1f;
    tb_bake_report rep;
    tb_error err = {0};
    assert_int_equal(tb_bake(doc, &d, &rep, &err), TB_OK);
    const tb_bake_clip *sway = clip_named(&rep, "Sway");
    assert_non_null(sway);
    print_message("zeta 0.1: %d passes, period %d, %d jumps, closure %.3f deg\n", sway->passes, sway->period,
                  sway->warmup_jumps, sway->closure_rad * 180.0f / PI_F);
    assert_true(sway->passes >= 3);
    /* ringing from pass to pass is a transient, not a cycle of passes */
    assert_int_equal(sway->period, 1);
    assert_true(sway->seam_spread_rad == 0);
    assert_true(sway->closure_rad < 0.5f * PI_F / 180.0f);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

static void cold_start_would_not_close(void **state)
{
    (void)state;
    /* the same clip with one pass: the closure error is clearly larger */
    tb_doc *doc = build_rig(1);
    tb_bake_desc d = {0};
    d.max_passes = 1;
    d.loop_tolerance_rad = 1e-9f;
    tb_bake_report rep;
    tb_error err;
    assert_int_equal(tb_bake(doc, &d, &rep, &err), TB_OK);
    float cold = clip_named(&rep, "Sway")->closure_rad;
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
    doc = build_rig(1);
    assert_int_equal(tb_bake(doc, NULL, &rep, &err), TB_OK);
    float warm = clip_named(&rep, "Sway")->closure_rad;
    assert_true(warm < cold);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

/* The saved bake reloads and its keys turn the tail away from rest. That the
 * keys equal the simulation is test_oracles'
 * baked_keys_equal_a_fresh_simulation_{closed,gap}_loop. */
static void baked_file_reloads_with_tail_keys_away_from_rest(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(1);
    tb_bake_report rep;
    tb_error err;
    assert_int_equal(tb_bake(doc, NULL, &rep, &err), TB_OK);
    /* the saved file reloads and its clips sample the tail away from rest */
    const char *path = tbt_tmp_path("baked.glb");
    assert_int_equal(tb_doc_save(doc, path, &err), TB_OK);
    tb_doc *back;
    assert_int_equal(tb_doc_load(&back, path, NULL, &err), TB_OK);
    tb_model *m;
    assert_int_equal(tb_model_load(&m, back, -1, &err), TB_OK);
    tb_clip *clip;
    assert_int_equal(tb_clip_load(&clip, back, m, tb_clip_find(back, "Sway"), NULL, &err), TB_OK);
    tb_transform *loc = malloc((size_t)m->skel.joint_count * sizeof *loc);
    float max_w = 1;
    for (int k = 0; k < 10; k++) {
        tb_clip_sample(clip, &m->skel, 0.1f * (float)k, loc);
        int t1 = m->joint_of_node[2];
        if (fabsf(loc[t1].r[3]) < max_w)
            max_w = fabsf(loc[t1].r[3]);
    }
    assert_true(max_w < cosf(2.0f * PI_F / 180.0f)); /* Tail_1 turned > 4° at some key */
    free(loc);
    tb_clip_free(clip);
    tb_model_free(m);
    tb_doc_free(back);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

static void baking_twice_changes_nothing(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(1);
    tb_bake_report rep;
    tb_error err;
    assert_int_equal(tb_bake(doc, NULL, &rep, &err), TB_OK);
    tb_bake_report_free(&rep);
    json_t *once = json_deep_copy(tb_doc_json(doc));
    assert_int_equal(tb_bake(doc, NULL, &rep, &err), TB_OK);
    assert_true(json_equal(once, tb_doc_json(doc)));
    assert_true(clip_named(&rep, "Sway")->skipped);
    json_decref(once);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

static void rig_without_tail_is_left_alone(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(0);
    json_t *before = json_deep_copy(tb_doc_json(doc));
    tb_bake_report rep;
    tb_error err;
    assert_int_equal(tb_bake(doc, NULL, &rep, &err), TB_OK);
    assert_int_equal(rep.chain_count, 0);
    assert_true(json_equal(before, tb_doc_json(doc)));
    json_decref(before);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

static void only_selects_clips_and_rejects_unknown_names(void **state)
{
    (void)state;
    tb_doc *doc = build_rig(1);
    const char *only[] = {"Hop", NULL};
    tb_bake_desc d = {0};
    d.only = only;
    tb_bake_report rep;
    tb_error err;
    assert_int_equal(tb_bake(doc, &d, &rep, &err), TB_OK);
    assert_int_equal(rep.clip_count, 1);
    json_t *sway = json_array_get(json_object_get(tb_doc_json(doc), "animations"), 0);
    assert_int_equal(json_array_size(json_object_get(sway, "channels")), 1);
    tb_bake_report_free(&rep);
    const char *bad[] = {"Nope", NULL};
    d.only = bad;
    assert_int_equal(tb_bake(doc, &d, &rep, &err), TB_ERR_ARG);
    assert_non_null(strstr(err.message, "Nope"));
    tb_doc_free(doc);
}

/* Re-expresses a metre-unit synthetic character: every length × k (a
 * scene authored in centimetres with no armature scale, for k = 100), then
 * the whole character moved down by dy in world (a model whose origin is at
 * its hips). POSITIONs, node and clip translations, and the inverse bind
 * matrices (translation × k, then IBM · T(0, dy, 0)) change together, so
 * the rest pose still equals the bind pose. */
static void transform_scene(tb_doc *doc, float k, float dy)
{
    tb_error err;
    const tb_gltf *g = tb_doc_gltf(doc);
    int acc_count = g->accessor_count, ibm = g->skins[0].inverse_bind_matrices;
    uint8_t *edit = calloc((size_t)acc_count, 1); /* 1 POSITION, 2 IBM, 3 clip translation */
    for (int i = 0; i < g->mesh_count; i++)
        for (int q = 0; q < g->meshes[i].primitive_count; q++)
            edit[g->meshes[i].primitives[q].position] = 1;
    edit[ibm] = 2;
    for (int a = 0; a < g->animation_count && k != 1; a++)
        for (int c = 0; c < g->animations[a].channel_count; c++)
            if (g->animations[a].channels[c].path == TB_GLTF_PATH_TRANSLATION)
                edit[g->animations[a].samplers[g->animations[a].channels[c].sampler].output] = 3;
    for (int a = 0; a < acc_count; a++) {
        if (!edit[a])
            continue;
        size_t n = tb_doc_gltf(doc)->accessors[a].count * (size_t)tb_doc_gltf(doc)->accessors[a].components;
        float *v = malloc(n * sizeof *v);
        assert_int_equal(tb_accessor_read_floats(doc, a, v, n, &err), TB_OK);
        if (edit[a] == 2) {
            for (size_t m = 0; m < n / 16; m++)
                for (int r = 0; r < 3; r++) {
                    v[m * 16 + 12 + (size_t)r] *= k;
                    v[m * 16 + 12 + (size_t)r] += dy * v[m * 16 + 4 + (size_t)r];
                }
        } else {
            for (size_t q = 0; q < n; q++)
                v[q] = v[q] * k - (edit[a] == 1 && q % 3 == 1 ? dy : 0);
        }
        assert_int_equal(tb_doc_replace_accessor_data(doc, a, v, TB_COMPONENT_FLOAT, &err), TB_OK);
        free(v);
        assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    }
    free(edit);
    json_t *root = tb_doc_json(doc), *nodes = json_object_get(root, "nodes");
    size_t i;
    json_t *nd;
    json_array_foreach(nodes, i, nd) {
        json_t *t = json_object_get(nd, "translation");
        if (t)
            json_object_set_new(nd, "translation", json_pack("[f,f,f]", k * json_number_value(json_array_get(t, 0)),
                                                             k * json_number_value(json_array_get(t, 1)),
                                                             k * json_number_value(json_array_get(t, 2))));
    }
    json_array_foreach(json_object_get(json_array_get(json_object_get(root, "scenes"), 0), "nodes"), i, nd) {
        json_t *node = json_array_get(nodes, (size_t)json_integer_value(nd));
        json_t *t = json_object_get(node, "translation");
        json_object_set_new(node, "translation",
                            json_pack("[f,f,f]", t ? json_number_value(json_array_get(t, 0)) : 0.0,
                                      (t ? json_number_value(json_array_get(t, 1)) : 0.0) - dy,
                                      t ? json_number_value(json_array_get(t, 2)) : 0.0));
    }
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
}

/* Baked tail rotation keys of one clip, in channel order. */
static void quat_mul(float d[4], const float a[4], const float b[4])
{
    float r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1], a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                  a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3], a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
    memcpy(d, r, sizeof r);
}

/* Angle between two unit quaternions, precise near zero. */
static float quat_angle(const float *a, const float *b)
{
    double dot = 0, dm = 0, dp = 0;
    for (int i = 0; i < 4; i++)
        dot += (double)a[i] * b[i];
    double sg = dot < 0 ? -1 : 1;
    for (int i = 0; i < 4; i++) {
        dm += (a[i] - sg * b[i]) * (a[i] - sg * b[i]);
        dp += (a[i] + sg * b[i]) * (a[i] + sg * b[i]);
    }
    return (float)(4 * atan2(sqrt(dm), sqrt(dp)));
}

static float *tail_keys(tb_doc *doc, const char *clip, size_t *count)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    int a = tb_clip_find(doc, clip);
    const tb_gltf_animation *an = &g->animations[a];
    size_t total = 0;
    for (int c = 0; c < an->channel_count; c++)
        if (an->channels[c].path == TB_GLTF_PATH_ROTATION && g->nodes[an->channels[c].node].name &&
            strstr(g->nodes[an->channels[c].node].name, "Tail_"))
            total += g->accessors[an->samplers[an->channels[c].sampler].output].count * 4;
    float *out = malloc(total * sizeof *out);
    size_t at = 0;
    for (int c = 0; c < an->channel_count; c++)
        if (an->channels[c].path == TB_GLTF_PATH_ROTATION && g->nodes[an->channels[c].node].name &&
            strstr(g->nodes[an->channels[c].node].name, "Tail_")) {
            int o = an->samplers[an->channels[c].sampler].output;
            size_t n = g->accessors[o].count * 4;
            assert_int_equal(tb_accessor_read_floats(doc, o, out + at, n, NULL), TB_OK);
            at += n;
        }
    *count = total;
    return out;
}

/* SPEC D's warm-up iterates until the loop closes. The synthetic tail_hips
 * in Sprint (0.63 s) drifts toward its loop slowly, the loop-start state a
 * near-constant ratio closer each pass (the plain iteration: 14 passes to
 * the default 0.1°): the warm-up then jumps to where that sequence ends
 * (tb_bake_desc.no_warmup_jump off, the default). It must take fewer passes
 * than the plain iteration, close the loop by the same test, and record
 * the loop itself at least as well: its keys no further from the loop the
 * plain iteration reaches when run to 1e-6 rad than the plain iteration's
 * at the default tolerance. */
static void a_slow_warm_up_jumps_to_its_loop(void **state)
{
    (void)state;
    enum { JUMP, PLAIN, TRUE_LOOP };
    tb_bake_report rep[3];
    float *keys[3];
    size_t count[3];
    const char *only[] = {"Sprint", NULL};
    for (int run = 0; run < 3; run++) {
        tb_doc *doc = tbt_synth_repaired("tail_hips");
        assert_non_null(doc);
        tb_error err = {0};
        tb_bake_desc d;
        memset(&d, 0, sizeof d);
        d.only = only;
        d.no_warmup_jump = run != JUMP;
        if (run == TRUE_LOOP) {
            d.loop_tolerance_rad = 1e-6f;
            d.max_passes = 400;
        }
        assert_int_equal(tb_bake(doc, &d, &rep[run], &err), TB_OK);
        keys[run] = tail_keys(doc, "Sprint", &count[run]);
        assert_true(count[run] > 0);
        tb_doc_free(doc);
    }
    const tb_bake_clip *jump = clip_named(&rep[JUMP], "Sprint"), *plain = clip_named(&rep[PLAIN], "Sprint"),
                       *loop = clip_named(&rep[TRUE_LOOP], "Sprint");
    assert_int_equal(count[JUMP], count[TRUE_LOOP]);
    assert_int_equal(count[PLAIN], count[TRUE_LOOP]);
    float off[2] = {0, 0};
    for (int run = JUMP; run <= PLAIN; run++)
        for (size_t k = 0; k < count[run]; k += 4) {
            float ang = quat_angle(keys[run] + k, keys[TRUE_LOOP] + k);
            off[run] = ang > off[run] ? ang : off[run];
        }
    const float deg = 180.0f / PI_F;
    print_message("tail_hips Sprint: plain %d passes, closure %.4f deg, keys off the loop by %.4f deg; jumping %d "
                  "passes (%d jumps), closure %.4f deg, off by %.4f deg (the loop: %d passes)\n",
                  plain->passes, plain->closure_rad * deg, off[PLAIN] * deg, jump->passes, jump->warmup_jumps,
                  jump->closure_rad * deg, off[JUMP] * deg, loop->passes);
    assert_int_equal(plain->warmup_jumps, 0);
    assert_true(loop->passes > plain->passes && loop->passes < 400);
    assert_true(jump->warmup_jumps >= 1);
    assert_true(jump->passes < plain->passes);
    assert_int_equal(jump->period, 1);
    assert_true(jump->closure_rad <= plain->closure_rad);
    assert_true(off[JUMP] <= off[PLAIN]);
    for (int run = 0; run < 3; run++) {
        free(keys[run]);
        tb_bake_report_free(&rep[run]);
    }
}

/* What a scene change must not change: tail_hips (metres) baked on Walk as
 * built and after `change`. Returns the largest angle between the two
 * bakes' tail keys, each key of the changed bake first mapped by `map`
 * (NULL: as is); reports the bake's scene unit, H and tail size of both. */
typedef struct bake_facts {
    float units, height;
    size_t tail_vertices;
} bake_facts;

static float walk_keys_differ(void (*change)(tb_doc *), void (*map)(const float *q, float *out), bake_facts facts[2])
{
    tb_doc *doc[2];
    tb_error err;
    tb_synth_desc sd = {0};
    sd.units = TB_SYNTH_UNITS_M;
    const char *only[] = {"Walk", NULL};
    tb_bake_desc bd = {0};
    bd.only = only;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tb_synth_build(&doc[i], "tail_hips", &sd, NULL, &err), TB_OK);
        if (i)
            change(doc[i]);
        tb_model *m;
        assert_int_equal(tb_model_load(&m, doc[i], -1, &err), TB_OK);
        facts[i].height = m->height;
        tb_model_free(m);
        tb_appendage_report ar;
        assert_int_equal(tb_appendage_fix(&ar, doc[i], NULL, &err), TB_OK);
        facts[i].tail_vertices = 0;
        for (int k = 0; k < ar.appendage_count; k++)
            if (ar.appendages[k].decision == TB_DECIDE_CHAIN)
                facts[i].tail_vertices = ar.appendages[k].vertex_count;
        tb_appendage_report_free(&ar);
        tb_bake_report rep;
        assert_int_equal(tb_bake(doc[i], &bd, &rep, &err), TB_OK);
        facts[i].units = rep.world_units_per_m;
        tb_bake_report_free(&rep);
    }
    size_t n0, n1;
    float *k0 = tail_keys(doc[0], "Walk", &n0), *k1 = tail_keys(doc[1], "Walk", &n1);
    assert_int_equal(n0, n1);
    assert_true(n0 > 0);
    float worst = 0, swing = 0;
    const float id[4] = {0, 0, 0, 1};
    for (size_t q = 0; q < n0; q += 4) {
        float a = quat_angle(id, k0 + q);
        swing = a > swing ? a : swing;
        float e[4];
        if (map)
            map(k0 + q, e);
        else
            memcpy(e, k0 + q, sizeof e);
        float ang = quat_angle(e, k1 + q);
        worst = ang > worst ? ang : worst;
    }
    free(k0);
    free(k1);
    tb_doc_free(doc[0]);
    tb_doc_free(doc[1]);
    assert_true(swing > 10 * PI_F / 180); /* the tail does move: equal keys mean something */
    return worst;
}

static void to_centimetres(tb_doc *doc)
{
    transform_scene(doc, 100, 0);
}

static void tail_moves_the_same_in_a_centimetre_scene(void **state)
{
    (void)state;
    bake_facts f[2];
    float worst = walk_keys_differ(to_centimetres, NULL, f);
    assert_float_equal(f[0].units, 1.0f, 0);
    assert_float_equal(f[1].units, 100.0f, 0);
    print_message("largest tail key difference metres vs centimetres: %.4f deg\n", worst * 180 / PI_F);
    assert_true(worst < 0.5f * PI_F / 180);
}

static void ground_goes_to_the_soles_of_a_model_standing_below_the_origin(void **state)
{
    (void)state;
    tb_doc *doc;
    tb_error err;
    tb_synth_desc sd = {0};
    sd.units = TB_SYNTH_UNITS_M;
    /* a character standing on y = 0: the SPEC ground */
    assert_int_equal(tb_synth_build(&doc, "tail_hips", &sd, NULL, &err), TB_OK);
    tb_appendage_report ar;
    assert_int_equal(tb_appendage_fix(&ar, doc, NULL, &err), TB_OK);
    tb_appendage_report_free(&ar);
    const char *only[] = {"Idle", NULL};
    tb_bake_desc bd = {0};
    bd.only = only;
    tb_bake_report rep;
    assert_int_equal(tb_bake(doc, &bd, &rep, &err), TB_OK);
    assert_float_equal(rep.ground_y_m, 0.0f, 0);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
    /* the same character with its origin at the hips: soles at y = -0.9 */
    assert_int_equal(tb_synth_build(&doc, "tail_hips", &sd, NULL, &err), TB_OK);
    transform_scene(doc, 1, 0.9f);
    assert_int_equal(tb_appendage_fix(&ar, doc, NULL, &err), TB_OK);
    tb_appendage_report_free(&ar);
    assert_int_equal(tb_bake(doc, &bd, &rep, &err), TB_OK);
    assert_float_equal(rep.ground_y_m, -0.9f, 0.02f);
    tb_bake_report_free(&rep);
    /* an explicit ground is kept */
    tb_doc_free(doc);
    assert_int_equal(tb_synth_build(&doc, "tail_hips", &sd, NULL, &err), TB_OK);
    transform_scene(doc, 1, 0.9f);
    assert_int_equal(tb_appendage_fix(&ar, doc, NULL, &err), TB_OK);
    tb_appendage_report_free(&ar);
    bd.ground_as_given = 1;
    assert_int_equal(tb_bake(doc, &bd, &rep, &err), TB_OK);
    assert_float_equal(rep.ground_y_m, 0.0f, 0);
    tb_bake_report_free(&rep);
    tb_doc_free(doc);
}

static void count_stage(void *user, const char *stage)
{
    (void)stage;
    ++*(int *)user;
}

static uint8_t *doc_bytes(const tb_doc *doc, size_t *size)
{
    uint8_t *b = NULL;
    tb_error err;
    assert_int_equal(tb_doc_write_memory(doc, &b, size, &err), TB_OK);
    return b;
}

/* The whole job from the library (tailbone/fix.h), as `tailbone fix` runs
 * it: the input is untouched, every clip is baked and measured, and the
 * blend-zone search starts at the SPEC's zone unless a zone is pinned. */
static void fix_run_is_the_whole_job_and_leaves_its_input_alone(void **state)
{
    (void)state;
    tb_doc *in;
    tb_error err;
    assert_int_equal(tb_synth_build(&in, "tail_leg", NULL, NULL, &err), TB_OK);
    size_t n0, n1;
    uint8_t *b0 = doc_bytes(in, &n0);
    tb_doc *out = NULL;
    tb_fix_report rep;
    int stages = 0;
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.progress = count_stage;
    d.progress_user = &stages;
    assert_int_equal(tb_fix_run(&out, in, &d, &rep, &err), TB_OK);
    uint8_t *b1 = doc_bytes(in, &n1);
    assert_true(n0 == n1 && !memcmp(b0, b1, n0));
    assert_non_null(out);
    assert_true(rep.changed && rep.baked);
    assert_int_equal(rep.stretch_count, 6);
    assert_int_equal(rep.bake.clip_count, 6);
    assert_true(stages >= 4);
    /* the first zone (the SPEC's, raised by the tail's geometry: never
     * below it) tears a stress clip of this character: the search ran,
     * re-weighting the baked file only (no second detection or bake) */
    assert_true(rep.zone_try_count >= 2);
    assert_true(rep.zone_tries[0].blend_zone >= 0.25f - 1e-6f);
    assert_true(rep.zone_tries[0].torn_clips > 0);
    assert_int_equal(rep.full_reruns, 0);
    assert_int_equal(rep.weight_count, 1);
    assert_true(rep.weights[0].smooth && rep.weights[0].ring_seg > 0 && rep.weights[0].radius_seg > 0);
    for (int c = 0; c < rep.stretch_count; c++) /* largest bend per joint: K = 4 joints, some bend */
        assert_true(rep.stretch[c].bend_count == 4 && rep.stretch[c].bend_rad[3] > 0);
    float kept = rep.zone_tries[rep.zone_try_count - 1].blend_zone;
    assert_float_equal(rep.blend_zone, kept, 1e-6f);
    int torn = 0;
    for (int c = 0; c < rep.stretch_count; c++)
        torn += tb_fix_torn(&rep.stretch[c]) > 0;
    assert_int_equal(torn, rep.zone_tries[rep.zone_try_count - 1].torn_clips);
    json_t *j = tb_fix_report_json(&rep);
    assert_int_equal(json_array_size(json_object_get(j, "stretch")), 6);
    assert_int_equal(json_array_size(json_object_get(j, "blend_zone_search")), (size_t)rep.zone_try_count);
    json_decref(j);
    tb_fix_report_free(&rep);
    tb_doc_free(out);

    /* a pinned zone: one attempt, no search */
    d.repair.blend_zone = 0.25f;
    assert_int_equal(tb_fix_run(&out, in, &d, &rep, &err), TB_OK);
    assert_int_equal(rep.zone_try_count, 0);
    assert_float_equal(rep.blend_zone, 0.25f, 1e-6f);
    /* the largest bend per joint per clip (issue 13 item 4), read back from
     * the written keys: the angle of each Tail_k key from the node's rest
     * rotation, 2 acos |q . r| in double, largest over the keys */
    const tb_gltf *g = tb_doc_gltf(out);
    int checked = 0;
    for (int c = 0; c < rep.stretch_count; c++) {
        const tb_gltf_animation *an = &g->animations[rep.stretch[c].animation];
        for (int k = 0; k < rep.stretch[c].bend_count; k++) {
            double key_max = -1;
            for (int ch = 0; ch < an->channel_count; ch++) {
                const tb_gltf_channel *cc = &an->channels[ch];
                if (cc->path != TB_GLTF_PATH_ROTATION || cc->node < 0 || !g->nodes[cc->node].name ||
                    strcmp(g->nodes[cc->node].name, rep.stretch[c].bend_joint[k]))
                    continue;
                int acc = an->samplers[cc->sampler].output;
                size_t nq = g->accessors[acc].count;
                float *q = malloc(nq * 4 * sizeof *q);
                assert_non_null(q);
                assert_int_equal(tb_accessor_read_floats(out, acc, q, nq * 4, &err), TB_OK);
                const float *r = g->nodes[cc->node].local.r;
                for (size_t i = 0; i < nq; i++) {
                    double dot = fabs((double)q[4 * i] * r[0] + (double)q[4 * i + 1] * r[1] +
                                      (double)q[4 * i + 2] * r[2] + (double)q[4 * i + 3] * r[3]);
                    double ang = 2 * acos(dot > 1 ? 1 : dot);
                    key_max = ang > key_max ? ang : key_max;
                }
                free(q);
            }
            assert_true(key_max >= 0); /* every reported joint is keyed */
            assert_float_equal(rep.stretch[c].bend_rad[k], key_max, 0.5 * 0.0174533);
            checked++;
        }
    }
    assert_int_equal(checked, rep.stretch_count * 4);
    tb_fix_report_free(&rep);
    tb_doc_free(out);

    /* no tail: nothing changes, nothing is baked */
    tb_doc *plain;
    assert_int_equal(tb_synth_build(&plain, "plain", NULL, NULL, &err), TB_OK);
    memset(&d, 0, sizeof d);
    assert_int_equal(tb_fix_run(&out, plain, &d, &rep, &err), TB_OK);
    assert_false(rep.changed);
    assert_int_equal(rep.bake.chain_count, 0);
    assert_int_equal(rep.stretch_count, 0);
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(plain);

    assert_int_equal(tb_fix_run(&out, NULL, &d, &rep, &err), TB_ERR_ARG);
    assert_null(out);
    tb_fix_report_free(&rep);
    free(b0);
    free(b1);
    tb_doc_free(in);
}

/* The whole scene turned half a turn about +Y in bind space: every position,
 * normal, inverse bind matrix, node TRS and key. The character then faces
 * -Z, as the three.js Soldier is authored. */
static void turn_scene(tb_doc *doc)
{
    tb_error err;
    const tb_gltf *g = tb_doc_gltf(doc);
    int acc_count = g->accessor_count;
    uint8_t *edit = calloc((size_t)acc_count, 1); /* 1 vec3, 2 IBM, 4 quaternion */
    for (int i = 0; i < g->mesh_count; i++)
        for (int q = 0; q < g->meshes[i].primitive_count; q++) {
            edit[g->meshes[i].primitives[q].position] = 1;
            if (g->meshes[i].primitives[q].normal >= 0)
                edit[g->meshes[i].primitives[q].normal] = 1;
        }
    edit[g->skins[0].inverse_bind_matrices] = 2;
    for (int a = 0; a < g->animation_count; a++)
        for (int c = 0; c < g->animations[a].channel_count; c++) {
            int out = g->animations[a].samplers[g->animations[a].channels[c].sampler].output;
            if (g->animations[a].channels[c].path == TB_GLTF_PATH_TRANSLATION)
                edit[out] = 1;
            else if (g->animations[a].channels[c].path == TB_GLTF_PATH_ROTATION)
                edit[out] = 4;
        }
    for (int a = 0; a < acc_count; a++) {
        if (!edit[a])
            continue;
        size_t n = tb_doc_gltf(doc)->accessors[a].count * (size_t)tb_doc_gltf(doc)->accessors[a].components;
        float *v = malloc(n * sizeof *v);
        assert_int_equal(tb_accessor_read_floats(doc, a, v, n, &err), TB_OK);
        static const float s4[4] = {-1, 1, -1, 1};
        if (edit[a] == 2) /* R M R, R = diag(-1, 1, -1, 1) */
            for (size_t m = 0; m < n; m++)
                v[m] *= s4[m % 4] * s4[(m % 16) / 4];
        else
            for (size_t q = 0; q < n; q++)
                v[q] *= edit[a] == 1 ? s4[q % 3] : s4[q % 4]; /* (x, y, z) and quaternion (x, y, z, w) */
        assert_int_equal(tb_doc_replace_accessor_data(doc, a, v, TB_COMPONENT_FLOAT, &err), TB_OK);
        free(v);
        assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    }
    free(edit);
    size_t i;
    json_t *nd;
    json_array_foreach(json_object_get(tb_doc_json(doc), "nodes"), i, nd) {
        json_t *t = json_object_get(nd, "translation"), *r = json_object_get(nd, "rotation");
        if (t)
            json_object_set_new(nd, "translation", json_pack("[f,f,f]", -json_number_value(json_array_get(t, 0)),
                                                             json_number_value(json_array_get(t, 1)),
                                                             -json_number_value(json_array_get(t, 2))));
        if (r)
            json_object_set_new(nd, "rotation", json_pack("[f,f,f,f]", -json_number_value(json_array_get(r, 0)),
                                                          json_number_value(json_array_get(r, 1)),
                                                          -json_number_value(json_array_get(r, 2)),
                                                          json_number_value(json_array_get(r, 3))));
    }
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
}

/* A character authored facing -Z: the spring's "back" and "forward" come
 * from its joints, so its tail moves as the same character's facing +Z,
 * turned (each key q becomes R q R^-1 for R half a turn about +Y). */
static void half_turn_key(const float *q, float *out)
{
    out[0] = -q[0], out[1] = q[1], out[2] = -q[2], out[3] = q[3];
}

static void tail_moves_the_same_when_the_character_faces_minus_z(void **state)
{
    (void)state;
    bake_facts f[2];
    float worst = walk_keys_differ(turn_scene, half_turn_key, f);
    print_message("facing -Z vs +Z: largest tail key difference %.4f deg\n", worst * 180 / PI_F);
    assert_true(f[1].tail_vertices == f[0].tail_vertices && f[0].tail_vertices > 0);
    assert_true(worst < 0.5f * PI_F / 180);
}

/* The character's bind data turned to stand along +Z (a quarter turn about
 * +X) under a new root node that turns it back, as Sketchfab's conversions
 * and some FBX exports store a Z-up mesh. World poses are unchanged. */
static void stand_on_z(tb_doc *doc)
{
    tb_error err;
    const tb_gltf *g = tb_doc_gltf(doc);
    const float h = 0.70710678f, qr[4] = {h, 0, 0, h}; /* R: (x, y, z) -> (x, -z, y) */
    json_t *root = tb_doc_json(doc), *nodes = json_object_get(root, "nodes");
    json_t *scene = json_array_get(json_object_get(root, "scenes"), 0), *roots = json_object_get(scene, "nodes");
    uint8_t *is_root = calloc((size_t)g->node_count + 1, 1);
    size_t i;
    json_t *x;
    json_array_foreach(roots, i, x) is_root[json_integer_value(x)] = 1;
    uint8_t *edit = calloc((size_t)g->accessor_count, 1); /* 1 vec3, 2 IBM, 3 root translation keys, 4 root rotation keys */
    for (int m = 0; m < g->mesh_count; m++)
        for (int q = 0; q < g->meshes[m].primitive_count; q++) {
            edit[g->meshes[m].primitives[q].position] = 1;
            if (g->meshes[m].primitives[q].normal >= 0)
                edit[g->meshes[m].primitives[q].normal] = 1;
        }
    edit[g->skins[0].inverse_bind_matrices] = 2;
    for (int a = 0; a < g->animation_count; a++)
        for (int c = 0; c < g->animations[a].channel_count; c++) {
            const tb_gltf_channel *ch = &g->animations[a].channels[c];
            if (!is_root[ch->node])
                continue;
            int out = g->animations[a].samplers[ch->sampler].output;
            if (ch->path == TB_GLTF_PATH_TRANSLATION)
                edit[out] = 3;
            else if (ch->path == TB_GLTF_PATH_ROTATION)
                edit[out] = 4;
        }
    for (int a = 0; a < tb_doc_gltf(doc)->accessor_count; a++) {
        if (!edit[a])
            continue;
        size_t n = tb_doc_gltf(doc)->accessors[a].count * (size_t)tb_doc_gltf(doc)->accessors[a].components;
        float *v = malloc(n * sizeof *v);
        assert_int_equal(tb_accessor_read_floats(doc, a, v, n, &err), TB_OK);
        if (edit[a] == 1 || edit[a] == 3) {
            for (size_t k = 0; k < n; k += 3) {
                float y = v[k + 1], z = v[k + 2];
                v[k + 1] = -z, v[k + 2] = y;
            }
        } else if (edit[a] == 4) {
            for (size_t k = 0; k < n; k += 4) {
                float q[4];
                for (int c = 0; c < 4; c++)
                    q[c] = v[k + (size_t)c];
                quat_mul(v + k, qr, q);
            }
        } else { /* IBM' = IBM R^-1: columns 1 and 2 of the 3x3 part */
            for (size_t k = 0; k < n; k += 16)
                for (int r = 0; r < 4; r++) {
                    float c1 = v[k + 4 + (size_t)r], c2 = v[k + 8 + (size_t)r];
                    v[k + 4 + (size_t)r] = -c2, v[k + 8 + (size_t)r] = c1;
                }
        }
        assert_int_equal(tb_doc_replace_accessor_data(doc, a, v, TB_COMPONENT_FLOAT, &err), TB_OK);
        free(v);
        assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
        root = tb_doc_json(doc);
        nodes = json_object_get(root, "nodes");
    }
    json_array_foreach(json_object_get(json_array_get(json_object_get(root, "scenes"), 0), "nodes"), i, x) {
        json_t *nd = json_array_get(nodes, (size_t)json_integer_value(x));
        json_t *t = json_object_get(nd, "translation"), *r = json_object_get(nd, "rotation");
        float q0[4] = {0, 0, 0, 1}, q1[4];
        if (r)
            for (int c = 0; c < 4; c++)
                q0[c] = (float)json_number_value(json_array_get(r, (size_t)c));
        quat_mul(q1, qr, q0);
        json_object_set_new(nd, "rotation", json_pack("[f,f,f,f]", q1[0], q1[1], q1[2], q1[3]));
        if (t)
            json_object_set_new(nd, "translation", json_pack("[f,f,f]", json_number_value(json_array_get(t, 0)),
                                                             -json_number_value(json_array_get(t, 2)),
                                                             json_number_value(json_array_get(t, 1))));
    }
    json_t *top = json_pack("{s:s,s:[f,f,f,f],s:O}", "name", "ZUpRoot", "rotation", -h, 0.0, 0.0, h, "children",
                            json_object_get(json_array_get(json_object_get(root, "scenes"), 0), "nodes"));
    json_array_append_new(nodes, top);
    json_object_set_new(json_array_get(json_object_get(root, "scenes"), 0), "nodes",
                        json_pack("[i]", (int)json_array_size(nodes) - 1));
    free(edit);
    free(is_root);
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
}

/* A character stored Z-up under a rotated root: the same height, the same
 * tail found and the same tail baked as when it is stored Y-up. */
static void tail_moves_the_same_when_the_mesh_is_stored_z_up(void **state)
{
    (void)state;
    bake_facts f[2];
    float worst = walk_keys_differ(stand_on_z, NULL, f);
    print_message("Z-up vs Y-up storage: H %.4f vs %.4f, tail vertices %zu vs %zu, largest tail key difference "
                  "%.4f deg\n",
                  f[1].height, f[0].height, f[1].tail_vertices, f[0].tail_vertices, worst * 180 / PI_F);
    assert_float_equal(f[1].height, f[0].height, 1e-4f);
    assert_true(f[0].tail_vertices > 0);
    assert_int_equal(f[1].tail_vertices, f[0].tail_vertices);
    assert_true(worst < 0.5f * PI_F / 180);
}

/* The character's axes come from the first left/right joint pair that is
 * really apart: with both thigh joints at one point (as some rigs place
 * them) the shoulders say which way a model turned to face -Z looks. */
static void axes_fall_back_to_the_shoulders_when_the_thighs_coincide(void **state)
{
    (void)state;
    tb_doc *doc;
    tb_error err;
    tb_synth_desc sd = {0};
    sd.units = TB_SYNTH_UNITS_M;
    assert_int_equal(tb_synth_build(&doc, "tail_hips", &sd, NULL, &err), TB_OK);
    turn_scene(doc);
    tb_model *m;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    int l = -1, r = -1;
    for (int k = 0; k < m->skin_joint_count; k++) {
        if (m->skin_joints[k] == m->role_joint[TB_ROLE_LEFT_UPLEG])
            l = k;
        if (m->skin_joints[k] == m->role_joint[TB_ROLE_RIGHT_UPLEG])
            r = k;
    }
    assert_true(l >= 0 && r >= 0);
    const tb_gltf_skin *sk = &tb_doc_gltf(doc)->skins[m->skin];
    float(*ibm)[16] = malloc((size_t)sk->joint_count * sizeof *ibm);
    assert_int_equal(tb_skin_inverse_binds(doc, m->skin, ibm, &err), TB_OK);
    memcpy(ibm[r], ibm[l], sizeof ibm[r]); /* the right thigh joint where the left one is */
    assert_int_equal(tb_doc_replace_accessor_data(doc, sk->inverse_bind_matrices, ibm, TB_COMPONENT_FLOAT, &err),
                     TB_OK);
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    free(ibm);
    tb_model_free(m);
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    float up[3], fwd[3];
    assert_true(tb_model_axes(m, up, fwd));
    print_message("coincident thighs, facing -Z: up (%.2f %.2f %.2f), forward (%.2f %.2f %.2f)\n", up[0], up[1], up[2],
                  fwd[0], fwd[1], fwd[2]);
    assert_true(up[1] > 0.99f);
    assert_true(fwd[2] < -0.99f);
    tb_model_free(m);
    tb_doc_free(doc);
}


/* Issue 13's bar on a representative subset of the fixtures (the full
 * matrix, every fixture whose detection is right on the three bodies, is
 * measured in docs/fix.md, with the fixtures that miss the bar and why; it
 * takes minutes): tails added to real bodies
 * and to the synthetic one, baked with the body's own clips (the Xbot's
 * walk and run, the synthetic Walk, Sprint and Crouch), measured by
 * tb_fix_run: tail p99 <= 1.18, max <= 1.30, nothing torn in the tail or at
 * its seam, the body's weights untouched, the tail swinging >= 10 degrees
 * and every loop closing within 0.5 degrees. */
static void fixture_tails_meet_the_chain_row(void **state)
{
    (void)state;
    static const struct {
        const char *body, *fixture, *only[4];
    } cases[] = {
        {NULL, "back_shell_hips", {"Walk", "Sprint", "Crouch", NULL}},
        {NULL, "back_shell_nearest+coat", {"Walk", "Sprint", "Crouch", NULL}},
        {NULL, "bead_shell_spine", {"Walk", "Sprint", "Crouch", NULL}},
        /* curled 200 degrees in its bind pose: only with the solver fitted */
        {NULL, "curl_shell_nearest", {"Walk", "Sprint", "Crouch", NULL}},
        {"clips/Xbot_agree_run_walk.glb", "hang_shell_leg", {"walk", "run", NULL}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_error err = {0};
        tb_doc *body = NULL;
        if (!cases[i].body) {
            assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
        } else {
            tbt_path path_buf;
            const char *path = tbt_corpus_file(&path_buf, cases[i].body);
            if (!path) {
                print_message("%s: ../shared/corpus absent, skipped\n", cases[i].body);
                continue;
            }
            assert_int_equal(tb_doc_load(&body, path, NULL, &err), TB_OK);
        }
        tb_doc *doc = NULL, *out = NULL;
        assert_int_equal(tb_synth_onto(&doc, body, cases[i].fixture, NULL, NULL, &err), TB_OK);
        tb_fix_desc d;
        memset(&d, 0, sizeof d);
        d.only = cases[i].only;
        tb_fix_report rep;
        if (tb_fix_run(&out, doc, &d, &rep, &err) != TB_OK)
            fail_msg("%s: %s", cases[i].fixture, err.message);
        /* one whole job: the solver fit re-bakes it, detection and transfer
         * are not redone (test_fix_once) */
        assert_int_equal(rep.full_reruns, 0);
        assert_int_equal(rep.repair.changed_outside, 0);
        if (!strcmp(cases[i].fixture, "curl_shell_nearest"))
            assert_true(rep.solver_fit_tried && rep.solver_fit_kept && rep.fit_rest_curve == 1.0f &&
                        rep.fit_bend_limit_rad > 0 && rep.fit_bend_limit_rad < 30 * 0.0174533f);
        assert_true(rep.stretch_count >= 2);
        for (int c = 0; c < rep.stretch_count; c++) {
            const tb_measure_result *m = &rep.stretch[c].result;
            const tb_bake_clip *bc = NULL;
            for (int k = 0; k < rep.bake.clip_count; k++)
                if (rep.bake.clips[k].animation == rep.stretch[c].animation)
                    bc = &rep.bake.clips[k];
            assert_non_null(bc);
            float bend = 0;
            for (int k = 0; k < rep.stretch[c].bend_count; k++)
                bend = rep.stretch[c].bend_rad[k] > bend ? rep.stretch[c].bend_rad[k] : bend;
            print_message("%-14s %-24s %-8s tail p99 %.3f max %.3f torn %zu, seam torn %zu, swing %.1f, closure %.2f, "
                          "largest bend %.0f deg, zone %.3g\n",
                          cases[i].body ? "Xbot" : "synth:plain", cases[i].fixture, rep.stretch[c].clip, m->tail.p99,
                          m->tail.max, m->tail.torn, m->seam.torn, bc->swing_rad / 0.0174533, bc->closure_rad / 0.0174533,
                          bend / 0.0174533, rep.blend_zone);
            assert_true(m->tail.samples > 0);
            assert_true(m->tail.p99 <= 1.18f && m->tail.max <= 1.30f);
            assert_int_equal(m->tail.torn, 0);
            assert_int_equal(m->seam.torn, 0);
            assert_true(bc->swing_rad >= 10 * 0.0174533f);
            assert_true(!bc->looping || bc->closure_rad <= 0.5f * 0.0174533f);
        }
        tb_fix_report_free(&rep);
        tb_doc_free(out);
        tb_doc_free(doc);
        tb_doc_free(body);
    }
}


/* What the weights carry, read from the weights themselves (issue 13):
 * each chain's kept weights give ramp_zone, 0.5 / the steepest change of a
 * chain bone's weight per segment along the tail. SPEC A9's linear ramps
 * read their own zone; a welded collar's band reaching joint 1 (2 segments)
 * scales the chain's weights by its smoothstep and reads steeper; and the
 * solver fit bounds the bend from the bind pose by the steeper one (the
 * Xbot's up_welded_hips+vest, where the nominal zone's bound folded joint 1
 * to 0.67). */
static float fixture_ramp(tb_fix_report *rep, const char *body_file, const char *fixture, const char *const *only,
                          float zone, float band)
{
    tb_error err = {0};
    tb_doc *body = NULL, *doc = NULL, *out = NULL;
    if (!body_file) {
        assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    } else {
        tbt_path path_buf;
        const char *path = tbt_corpus_file(&path_buf, body_file);
        if (!path)
            return -1;
        assert_int_equal(tb_doc_load(&body, path, NULL, &err), TB_OK);
    }
    assert_int_equal(tb_synth_onto(&doc, body, fixture, NULL, NULL, &err), TB_OK);
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.only = only;
    d.repair.blend_zone = zone;
    d.repair.collar_band = band;
    if (tb_fix_run(&out, doc, &d, rep, &err) != TB_OK)
        fail_msg("%s: %s", fixture, err.message);
    assert_true(rep->weight_count >= 1 && rep->weights[0].smooth);
    float r = rep->weights[0].ramp_zone;
    print_message("%s: zone %.3f, ramp read as zone %.3f\n", fixture, rep->weights[0].zone, r);
    tb_doc_free(out);
    tb_doc_free(doc);
    tb_doc_free(body);
    return r;
}

static void solver_fit_bounds_the_bend_by_the_steepest_ramp(void **state)
{
    (void)state;
    static const char *const walk[] = {"Walk", NULL};
    tb_fix_report rep;
    /* a shell tail, SPEC A9 ramps only: the ramp reads the zone */
    float r = fixture_ramp(&rep, NULL, "hang_shell_leg", walk, 0.4f, 0);
    assert_float_equal(r, rep.weights[0].zone, 0.02f * rep.weights[0].zone);
    tb_fix_report_free(&rep);
    /* welded, the collar band pinned at 2 segments: steeper than the zone */
    r = fixture_ramp(&rep, NULL, "hang_welded_nearest", walk, 0.5f, 2.0f);
    assert_true(r > 0 && r < 0.9f * rep.weights[0].zone);
    tb_fix_report_free(&rep);
    /* the search keeps band 2 on the Xbot's up-curled welded tail; the fit's
     * bind limit is the steeper ramp's, below the nominal zone's */
    static const char *const xbot[] = {"walk", "run", NULL};
    r = fixture_ramp(&rep, "clips/Xbot_agree_run_walk.glb", "up_welded_hips+vest", xbot, 0, 0);
    if (r < 0) {
        print_message("Xbot: ../shared/corpus absent, skipped\n");
        return;
    }
    const tb_fix_weights *w = &rep.weights[0];
    float nominal = 0.75f * 2 * w->zone * 0.18f / w->radius_seg;
    print_message("fit kept %d, bind limit %.1f deg (nominal zone's %.1f deg)\n", rep.solver_fit_kept,
                  rep.fit_bind_limit_rad / 0.0174533f, nominal / 0.0174533f);
    assert_true(rep.solver_fit_kept && r < w->zone);
    assert_true(rep.fit_bind_limit_rad > 0 && rep.fit_bind_limit_rad < nominal - 0.0174533f);
    for (int c = 0; c < rep.stretch_count; c++) {
        assert_int_equal(rep.stretch[c].result.tail.torn, 0);
        assert_int_equal(rep.stretch[c].result.seam.torn, 0);
    }
    tb_fix_report_free(&rep);
}

/* K from the mesh (issue 13): no more bones than the rings can follow. The
 * low-poly tail (6-sided rings every 0.05 H, 0.7 H long: 14 ring spacings)
 * is asked for segments clearly below and clearly above the rule's line of
 * two rings a segment, and once on it:
 * - 0.05 H (segment_fraction 0.05: K = 14, one ring per segment): fewer,
 *   longer bones, two rings or more each, joints still along the tail;
 * - 0.15 H (three rings per segment): the SPEC's K, not capped;
 * - 0.10 H, the SPEC's default: exactly two rings per segment, the rule's
 *   own line. Whether the measured spacing (a percentile of the tail's edges
 *   along g, which moves by a few per cent with which ring the weld gives
 *   the tail) falls a hair above or below it decides between K and K − 1;
 *   both are right, so only that is asserted (the cap takes at most one
 *   bone, and every segment keeps two rings within the measuring slack). */
static void low_poly_tail_gets_no_more_bones_than_its_rings_follow(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *body = NULL;
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    static const float segments[] = {0.10f, 0.05f, 0.15f};
    for (int pass = 0; pass < 3; pass++) {
        tb_doc *doc = NULL;
        assert_int_equal(tb_synth_onto(&doc, body, "back_lowpoly_nearest", NULL, NULL, &err), TB_OK);
        tb_appendage_desc d;
        memset(&d, 0, sizeof d);
        if (pass) { /* pass 0: the defaults, the SPEC's 0.1 H */
            d.segment_fraction = segments[pass];
            d.max_bones = 16;
        }
        tb_appendage_report rep;
        assert_int_equal(tb_appendage_fix(&rep, doc, &d, &err), TB_OK);
        const tb_appendage *a = NULL;
        for (int i = 0; i < rep.appendage_count; i++)
            if (rep.appendages[i].decision == TB_DECIDE_CHAIN)
                a = &rep.appendages[i];
        assert_non_null(a);
        float H = rep.height, ring = 0.05f * H; /* the fixture's ring spacing */
        int capped = strstr(a->reason, "rings can follow") != NULL;
        int spec_k = (int)lroundf(a->length / (segments[pass] * H)); /* SPEC A9's K, within 3..16 here */
        print_message("segment %.2f H: K = %d, L = %.2f H, %.1f rings per segment%s\n", (double)segments[pass],
                      a->bone_count, (double)(a->length / H), (double)(a->length / (float)a->bone_count / ring),
                      capped ? " (capped by the rings)" : "");
        /* two rings per segment, within a ring's measuring slack */
        assert_true(a->length / (float)a->bone_count >= 1.8f * ring);
        if (pass == 1) {
            assert_true(capped);
            assert_true(a->bone_count >= 2 && a->bone_count < 14);
            /* the joints still run along the tail: each next one farther from the root */
            for (int k = 1; k <= a->bone_count; k++) {
                float d0 = 0, d1 = 0;
                for (int x = 0; x < 3; x++) {
                    float e0 = a->chain_joints[k - 1][x] - a->chain_joints[0][x];
                    float e1 = a->chain_joints[k][x] - a->chain_joints[0][x];
                    d0 += e0 * e0, d1 += e1 * e1;
                }
                assert_true(d1 > d0);
            }
        } else if (pass == 2) {
            assert_false(capped);
            assert_int_equal(a->bone_count, spec_k);
        } else {
            assert_true(a->bone_count == spec_k || (capped && a->bone_count == spec_k - 1));
        }
        tb_appendage_report_free(&rep);
        tb_doc_free(doc);
    }
    tb_doc_free(body);
}

/* -j over clips (tailbone/bake.h `threads`, tb_fix_run's measure and blend
 * search): the synthetic tail_leg (6 clips, the blend search runs three
 * attempts) fixed on 1 and on 4 threads gives the same output bytes and the
 * same report. */
/* fix IN (with `extra` options) on 1 and on 4 threads: the same output bytes
 * and report; and the output is not the input (clips were baked). */
static void same_bytes_on_one_thread_and_on_four(const char *in, const char *extra)
{
    char out[4096], rep[4096], *text = NULL;
    snprintf(out, sizeof out, "%s", tbt_tmp_path("jobs_out.glb"));
    snprintf(rep, sizeof rep, "%s", tbt_tmp_path("jobs_report.json")); /* names OUT: the same for both */
    uint8_t *got[2][2];
    size_t size[2][2];
    for (int run = 0; run < 2; run++) {
        assert_int_equal(tbt_run_cli(&text, "fix '%s' -o '%s' -j %d --report '%s' %s", in, out, run ? 4 : 1, rep, extra),
                         0);
        free(text);
        got[run][0] = tbt_read_file(out, &size[run][0]);
        got[run][1] = tbt_read_file(rep, &size[run][1]);
        assert_non_null(got[run][0]);
        assert_non_null(got[run][1]);
    }
    for (int f = 0; f < 2; f++) {
        assert_true(size[0][f] > 1000);
        assert_int_equal(size[0][f], size[1][f]);
        assert_memory_equal(got[0][f], got[1][f], size[0][f]);
    }
    size_t ni = 0;
    uint8_t *di = tbt_read_file(in, &ni);
    assert_true(ni != size[0][0] || memcmp(di, got[0][0], ni) != 0);
    free(di);
    for (int run = 0; run < 2; run++)
        for (int f = 0; f < 2; f++)
            free(got[run][f]);
}

/* -j over clips (tailbone/bake.h `threads`, tb_fix_run's measure and blend
 * search): the synthetic tail_leg (6 clips, the blend search runs three
 * attempts) fixed on 1 and on 4 threads gives the same output bytes and the
 * same report; so does the Khronos fox's own chain baked with the artist's
 * keys blended in (--bake-existing: each thread's solver from the chains). */
static void fix_is_the_same_bytes_on_one_thread_and_on_four(void **state)
{
    (void)state;
    const char *in = tbt_tmp_path("jobs_in.glb");
    char *text = NULL;
    assert_int_equal(tbt_run_cli(&text, "synth --variant tail_leg -o '%s'", in), 0);
    free(text);
    same_bytes_on_one_thread_and_on_four(in, "");
    tbt_path fox_buf;
    const char *fox = tbt_corpus_file(&fox_buf, "reference/khronos_Fox.glb");
    if (!fox) {
        tbt_skip();
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", fox);
    same_bytes_on_one_thread_and_on_four(path, "--bake-existing --keep-artist-keys 0.3");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bake_adds_rotation_keys_on_every_tail_bone),
        cmocka_unit_test(looping_clip_closes_after_warm_up_and_swings),
        cmocka_unit_test(last_key_lands_on_the_clip_end_at_any_key_rate),
        cmocka_unit_test(a_lightly_damped_loop_is_warmed_until_it_closes),
        cmocka_unit_test(a_slow_warm_up_jumps_to_its_loop),
        cmocka_unit_test(cold_start_would_not_close),
        cmocka_unit_test(baked_file_reloads_with_tail_keys_away_from_rest),
        cmocka_unit_test(baking_twice_changes_nothing),
        cmocka_unit_test(rig_without_tail_is_left_alone),
        cmocka_unit_test(fix_run_is_the_whole_job_and_leaves_its_input_alone),
        cmocka_unit_test(fixture_tails_meet_the_chain_row),
        cmocka_unit_test(low_poly_tail_gets_no_more_bones_than_its_rings_follow),
        cmocka_unit_test(solver_fit_bounds_the_bend_by_the_steepest_ramp),
        cmocka_unit_test(only_selects_clips_and_rejects_unknown_names),
        cmocka_unit_test(ground_goes_to_the_soles_of_a_model_standing_below_the_origin),
        cmocka_unit_test(tail_moves_the_same_in_a_centimetre_scene),
        cmocka_unit_test(tail_moves_the_same_when_the_character_faces_minus_z),
        cmocka_unit_test(tail_moves_the_same_when_the_mesh_is_stored_z_up),
        cmocka_unit_test(axes_fall_back_to_the_shoulders_when_the_thighs_coincide),
        cmocka_unit_test(fix_is_the_same_bytes_on_one_thread_and_on_four),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
