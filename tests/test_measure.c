/* Skin stretch during playback (SPEC C; tailbone/measure.h, tailbone/clip.h).
 * A hand-built skinned strip gives analytic ratios; the corpus clip files,
 * when ../shared is present, check real rigs. */
#include "synth/synth_json.h"
#include "support.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/measure_internal.h"
#include "passes/stretch_hist.h"
#include "tailbone/clip.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"
#include "tailbone/synth.h"

/* The strip, in the XY plane (bind space, H = 1):
 *
 *     C(0,1) ---- D(1,1)      C, D on Tail_1 (head at the origin)
 *       |      /    |
 *     A(0,0) ---- B(1,0)      A, B on Hips   (at (0,-1), unanimated)
 *
 * Triangles ABD, ADC. The clip rotates Tail_1 about +Z from 0 to THETA over
 * 1 s (LINEAR, so the angle is exactly THETA·t). Every edge but BD keeps its
 * length (AC, AD: both ends on circles about the origin; AB, CD: rigid); BD
 * reads sqrt(3 - 2 cos θ + 2 sin θ). */
#define THETA 1.5707963267948966f /* 90° */
enum { A = 0, B = 1, C = 2, D = 3 };

static float bd_ratio(float theta)
{
    return sqrtf(3.0f - 2.0f * cosf(theta) + 2.0f * sinf(theta));
}

/* Builds the strip with the document API. Nodes: 0 Hips, 1 Tail_1, 2 the mesh
 * node, 3 a prop (animated, outside the skeleton). The animation also
 * animates the mesh node and the prop: both channels must be ignored. */
static tb_doc *make_strip(void)
{
    tb_doc *doc = tb_doc_create("test_measure");
    assert_non_null(doc);
    const float pos[4 * 3] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
    const uint16_t idx[6] = {A, B, D, A, D, C};
    const uint16_t jnt[4 * 4] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    const float wgt[4 * 4] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    /* IBM = inverse of the joint's bind world: Hips at (0,-1,0), Tail_1 at 0. */
    const float ibm[2 * 16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1,
                               1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const float times[2] = {0, 1};
    const float s = sinf(THETA / 2), c = cosf(THETA / 2);
    const float rot[2 * 4] = {0, 0, 0, 1, 0, 0, s, c};
    const float tr[2 * 3] = {0, 0, 0, 5, 0, 0};
    int a_pos = tb_doc_add_accessor(doc, pos, 4, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
    int a_idx = tb_doc_add_accessor(doc, idx, 6, TB_COMPONENT_UNSIGNED_SHORT, "SCALAR", 0, 34963);
    int a_jnt = tb_doc_add_accessor(doc, jnt, 4, TB_COMPONENT_UNSIGNED_SHORT, "VEC4", 0, 34962);
    int a_wgt = tb_doc_add_accessor(doc, wgt, 4, TB_COMPONENT_FLOAT, "VEC4", 0, 34962);
    int a_ibm = tb_doc_add_accessor(doc, ibm, 2, TB_COMPONENT_FLOAT, "MAT4", 0, 0);
    int a_t = tb_doc_add_accessor(doc, times, 2, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
    int a_r = tb_doc_add_accessor(doc, rot, 2, TB_COMPONENT_FLOAT, "VEC4", 0, 0);
    int a_tr = tb_doc_add_accessor(doc, tr, 2, TB_COMPONENT_FLOAT, "VEC3", 0, 0);
    assert_true(a_pos >= 0 && a_idx >= 0 && a_jnt >= 0 && a_wgt >= 0 && a_ibm >= 0 && a_t >= 0 && a_r >= 0 &&
                a_tr >= 0);
    json_t *root = tb_doc_json(doc);
    json_error_t je;
    json_t *rest = json_pack_ex(
        &je, 0,
        "{s:i, s:[{s:[i,i]}],"
        " s:[{s:s, s:[f,f,f], s:[i]}, {s:s, s:[f,f,f]}, {s:s, s:i, s:i}, {s:s, s:[f,f,f]}],"
        " s:[{s:s, s:[{s:{s:i, s:i, s:i}, s:i, s:i}]}],"
        " s:[{s:s, s:[i,i], s:i}],"
        " s:[{s:s, s:[{s:i, s:i}, {s:i, s:i}, {s:i, s:i}],"
        "      s:[{s:i, s:{s:i, s:s}}, {s:i, s:{s:i, s:s}}, {s:i, s:{s:i, s:s}}]}]}",
        "scene", 0, "scenes", "nodes", 0, 2, /* prop 3 is a child of the mesh node */
        "nodes", "name", "Hips", "translation", 0.0, -1.0, 0.0, "children", 1, "name", "Tail_1", "translation",
        0.0, 1.0, 0.0, "name", "Strip", "mesh", 0, "skin", 0, "name", "Prop", "translation", 0.0, 0.0, 0.0,
        "meshes", "name", "strip", "primitives", "attributes", "POSITION", a_pos, "JOINTS_0", a_jnt, "WEIGHTS_0",
        a_wgt, "indices", a_idx, "mode", 4, "skins", "name", "skin", "joints", 0, 1, "inverseBindMatrices", a_ibm,
        "animations", "name", "Bend", "samplers", "input", a_t, "output", a_r, "input", a_t, "output", a_tr,
        "input", a_t, "output", a_tr, "channels", "sampler", 0, "target", "node", 1, "path", "rotation",
        "sampler", 1, "target", "node", 2, "path", "translation", "sampler", 2, "target", "node", 3, "path",
        "translation");
    if (!rest)
        fail_msg("json_pack: %s", je.text);
    json_object_set_new(json_array_get(json_object_get(rest, "nodes"), 2), "children", json_pack("[i]", 3));
    json_object_update(root, rest);
    json_decref(rest);
    tb_error err;
    if (tb_doc_refresh(doc, &err) != TB_OK)
        fail_msg("refresh: %s: %s", err.where, err.message);
    return doc;
}

typedef struct strip {
    tb_doc *doc;
    tb_model *m;
    tb_clip *clip;
    tb_clip_info info;
} strip;

static strip strip_load(void)
{
    strip s;
    tb_error err;
    s.doc = make_strip();
    assert_int_equal(tb_model_load(&s.m, s.doc, -1, &err), TB_OK);
    assert_int_equal(tb_clip_load(&s.clip, s.doc, s.m, 0, &s.info, &err), TB_OK);
    return s;
}

static void strip_free(strip *s)
{
    tb_clip_free(s->clip);
    tb_model_free(s->m);
    tb_doc_free(s->doc);
}

/* ---- desc ------------------------------------------------------------- */

static void zero_desc_means_spec_defaults(void **state)
{
    (void)state;
    tb_measure_desc d = tb_measure_desc_defaults(NULL);
    assert_int_equal(d.instants, 24);
    assert_float_equal(d.torn_above, 1.5f, 0);
    assert_float_equal(d.torn_below, 0.67f, 0);
    assert_float_equal(d.degenerate_h, 1e-6f, 0);
    assert_int_equal(d.loop, 0);
    assert_null(d.pose_hook);
    tb_measure_desc again = tb_measure_desc_defaults(&d);
    assert_memory_equal(&d, &again, sizeof d);
}

static void invalid_desc_is_refused_with_the_field_named(void **state)
{
    (void)state;
    strip s = strip_load();
    tb_measure_result r;
    tb_error err;
    tb_measure_desc d = {0};
    d.instants = 1;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_measure_desc.instants");
    d.instants = 0;
    d.torn_below = 1.2f;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_measure_desc.torn_below");
    d.torn_below = 0;
    d.weights = s.m->weights; /* joints missing */
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_ERR_ARG);
    strip_free(&s);
}

/* ---- clip adapter ----------------------------------------------------- */

static void clip_adapter_maps_channels_to_skeleton_joints(void **state)
{
    (void)state;
    strip s = strip_load();
    /* Hips, Tail_1 are the skeleton; the mesh node and the prop are not. */
    assert_int_equal(s.m->skel.joint_count, 2);
    assert_int_equal(s.info.kept_channels, 1);
    assert_int_equal(s.info.ignored_channels, 2);
    assert_int_equal(s.clip->channel_count, 1);
    const tb_channel *ch = &s.clip->channels[0];
    assert_int_equal(ch->joint, s.m->joint_of_node[1]);
    assert_string_equal(s.m->skel.names[ch->joint], "Tail_1");
    assert_int_equal(ch->path, TB_PATH_ROTATION);
    assert_int_equal(ch->interp, TB_INTERP_LINEAR);
    assert_int_equal(ch->key_count, 2);
    assert_float_equal(ch->times[1], 1.0f, 0);
    assert_float_equal(ch->values[6], sinf(THETA / 2), 1e-7f);
    assert_float_equal(s.clip->duration_s, 1.0f, 0);
    assert_string_equal(s.clip->name, "Bend");
    /* sampling through the adapter gives the keyed rotation */
    tb_transform locals[2];
    tb_clip_sample(s.clip, &s.m->skel, 1.0f, locals);
    assert_float_equal(locals[ch->joint].r[2], sinf(THETA / 2), 1e-6f);
    strip_free(&s);
}

/* The adapter keeps every TRS path on a joint: translation, rotation and
 * scale (clip-drops-scale-channels). The strip's animation gets a Hips
 * translation and a Tail_1 scale beside its Tail_1 rotation. */
static void clip_adapter_keeps_translation_rotation_and_scale_channels(void **state)
{
    (void)state;
    tb_doc *doc = make_strip();
    const float times[2] = {0, 1};
    const float scl[2 * 3] = {1, 1, 1, 2, 3, 4};
    const float tr[2 * 3] = {0, -1, 0, 0.5f, -1, 0};
    int a_t = tb_doc_add_accessor(doc, times, 2, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
    int a_s = tb_doc_add_accessor(doc, scl, 2, TB_COMPONENT_FLOAT, "VEC3", 0, 0);
    int a_tr = tb_doc_add_accessor(doc, tr, 2, TB_COMPONENT_FLOAT, "VEC3", 0, 0);
    assert_true(a_t >= 0 && a_s >= 0 && a_tr >= 0);
    json_t *anim = json_array_get(json_object_get(tb_doc_json(doc), "animations"), 0);
    json_t *samplers = json_object_get(anim, "samplers"), *channels = json_object_get(anim, "channels");
    int s_s = (int)json_array_size(samplers);
    json_array_append_new(samplers, json_pack("{s:i, s:i}", "input", a_t, "output", a_s));
    json_array_append_new(samplers, json_pack("{s:i, s:i}", "input", a_t, "output", a_tr));
    json_array_append_new(channels, json_pack("{s:i, s:{s:i, s:s}}", "sampler", s_s, "target", "node", 1, "path",
                                              "scale"));
    json_array_append_new(channels, json_pack("{s:i, s:{s:i, s:s}}", "sampler", s_s + 1, "target", "node", 0,
                                              "path", "translation"));
    tb_error err;
    if (tb_doc_refresh(doc, &err) != TB_OK)
        fail_msg("refresh: %s: %s", err.where, err.message);
    tb_model *m;
    tb_clip *clip;
    tb_clip_info info;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    assert_int_equal(tb_clip_load(&clip, doc, m, 0, &info, &err), TB_OK);
    assert_int_equal(info.kept_channels, 3);
    assert_int_equal(info.ignored_channels, 2); /* the mesh node's and the prop's */
    assert_int_equal(clip->channel_count, 3);
    int tail = m->joint_of_node[1], hips = m->joint_of_node[0];
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < clip->channel_count; i++) {
        const tb_channel *ch = &clip->channels[i];
        assert_true(ch->path >= TB_PATH_TRANSLATION && ch->path <= TB_PATH_SCALE);
        seen[ch->path]++;
        assert_int_equal(ch->joint, ch->path == TB_PATH_TRANSLATION ? hips : tail);
    }
    assert_int_equal(seen[TB_PATH_TRANSLATION], 1);
    assert_int_equal(seen[TB_PATH_ROTATION], 1);
    assert_int_equal(seen[TB_PATH_SCALE], 1);
    /* sampled half way: the scale and the travel are interpolated */
    tb_transform locals[2];
    tb_clip_sample(clip, &m->skel, 0.5f, locals);
    assert_float_equal(locals[tail].s[0], 1.5f, 1e-6f);
    assert_float_equal(locals[tail].s[1], 2.0f, 1e-6f);
    assert_float_equal(locals[tail].s[2], 2.5f, 1e-6f);
    assert_float_equal(locals[hips].t[0], 0.25f, 1e-6f);
    assert_float_equal(locals[hips].t[1], -1.0f, 1e-6f);
    tb_clip_free(clip);
    tb_model_free(m);
    tb_doc_free(doc);
}

static void clip_adapter_rejects_out_of_range_animation(void **state)
{
    (void)state;
    strip s = strip_load();
    tb_clip *c = (tb_clip *)1;
    tb_error err;
    assert_int_equal(tb_clip_load(&c, s.doc, s.m, 1, NULL, &err), TB_ERR_ARG);
    assert_null(c);
    strip_free(&s);
}

static void clip_find_matches_exact_then_case_then_unique_substring(void **state)
{
    (void)state;
    strip s = strip_load();
    assert_int_equal(tb_clip_find(s.doc, "Bend"), 0);
    assert_int_equal(tb_clip_find(s.doc, "bend"), 0);
    assert_int_equal(tb_clip_find(s.doc, "EN"), 0);
    assert_int_equal(tb_clip_find(s.doc, "Walk"), -1);
    strip_free(&s);
}

/* ---- stretch ---------------------------------------------------------- */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void rotated_bone_stretches_known_edges_to_analytic_ratios(void **state)
{
    (void)state;
    strip s = strip_load();
    /* Tail = {B, D}: the only tail edge is BD, the only body edge AC. */
    uint8_t mask[4] = {0, 1, 0, 1};
    tb_measure_desc d = {0};
    d.tail_mask = mask;
    tb_measure_result r;
    tb_error err;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    assert_int_equal(r.tail_source, TB_TAIL_FROM_MASK);
    assert_int_equal(r.tail_vertices, 2);
    assert_int_equal(r.instants, 24);
    assert_int_equal(r.tail.edges, 1);
    assert_int_equal(r.body.edges, 1);
    assert_int_equal(r.tail.samples, 24);
    assert_int_equal(r.body.samples, 24);
    assert_float_equal(r.world_scale, 1.0f, 1e-6f);
    /* expected: BD at θ_k = THETA·k/23 */
    float want[24];
    size_t torn = 0;
    for (int k = 0; k < 24; k++) {
        want[k] = bd_ratio(THETA * (float)k / 23.0f);
        torn += want[k] > 1.5f || want[k] < 0.67f;
    }
    qsort(want, 24, sizeof *want, cmp_float);
    assert_float_equal(r.tail.min, want[0], 1e-5f);
    assert_float_equal(r.tail.max, want[23], 1e-5f);
    assert_float_equal(r.tail.max, sqrtf(5.0f), 1e-5f);
    assert_float_equal(r.tail.p95, want[22], 1e-5f); /* rank ceil(0.95·24) = 23 */
    assert_float_equal(r.tail.p99, want[23], 1e-5f); /* rank ceil(0.99·24) = 24 */
    assert_true(torn > 0 && torn < 24);
    assert_int_equal(r.tail.torn, torn);
    assert_float_equal(r.tail.torn_frac, (float)torn / 24.0f, 1e-6f);
    /* AC never changes length */
    assert_float_equal(r.body.max, 1.0f, 1e-5f);
    assert_float_equal(r.body.min, 1.0f, 1e-5f);
    assert_int_equal(r.body.torn, 0);
    strip_free(&s);
}

static void torn_thresholds_are_strict_and_configurable(void **state)
{
    (void)state;
    strip s = strip_load();
    uint8_t mask[4] = {0, 1, 0, 1};
    tb_measure_desc d = {0};
    d.tail_mask = mask;
    d.torn_above = 2.0f;
    tb_measure_result r;
    tb_error err;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    size_t torn = 0;
    for (int k = 0; k < 24; k++)
        torn += bd_ratio(THETA * (float)k / 23.0f) > 2.0f;
    assert_int_equal(r.tail.torn, torn);
    /* Strict: a sample exactly at the threshold is not torn. The largest
     * tail sample as the threshold leaves nothing above it, one below it
     * counts that sample (measure-torn-inclusive). */
    d.torn_above = 0;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    const float top = r.tail.max;
    assert_true(top > 1.5f);
    d.torn_above = top;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    assert_int_equal(r.tail.torn, 0);
    d.torn_above = nextafterf(top, 0.0f);
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    assert_true(r.tail.torn >= 1);
    /* A ratio exactly 1 is never torn, even with the lower bound close below. */
    d.torn_above = 0;
    d.torn_below = 0.999f;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    assert_int_equal(r.body.torn, 0);
    strip_free(&s);
    /* Strict at both thresholds, in the histogram that counts them: a ratio
     * exactly 1.5 or 0.67 is not torn, the next float past either is. */
    tb__hist h;
    assert_true(tb__hist_init(&h, 1.5f, 0.67f));
    tb__hist_add(&h, 1.5f);
    tb__hist_add(&h, 0.67f);
    tb__hist_tally(&h);
    assert_int_equal(h.torn, 0);
    tb__hist_add(&h, nextafterf(1.5f, 2.0f));
    tb__hist_add(&h, nextafterf(0.67f, 0.0f));
    tb__hist_tally(&h);
    assert_int_equal(h.torn, 2);
    tb__hist_free(&h);
    /* the same through the edge loop's fast path, thresholds inside its
     * range [0.8, 1.3) (measure-torn-inclusive) */
    assert_true(tb__hist_init(&h, 1.2f, 0.9f));
    tb__hist_near f;
    tb__hist_near_begin(&f, &h);
    tb__hist_add_near(&f, 1.2f, 3);
    tb__hist_add_near(&f, 0.9f, 2);
    tb__hist_near_end(&f);
    tb__hist_tally(&h);
    assert_int_equal(h.torn, 0);
    tb__hist_near_begin(&f, &h);
    tb__hist_add_near(&f, nextafterf(1.2f, 2.0f), 3);
    tb__hist_add_near(&f, nextafterf(0.9f, 0.0f), 2);
    tb__hist_near_end(&f);
    tb__hist_tally(&h);
    assert_int_equal(h.torn, 5);
    tb__hist_free(&h);
}

static void instants_are_24_evenly_spaced_including_both_ends(void **state)
{
    (void)state;
    strip s = strip_load();
    float pos[24 * 4 * 3];
    for (int loop = 0; loop < 2; loop++) {
        tb_measure_desc d = {0};
        d.positions_out = pos;
        d.loop = loop;
        tb_measure_result r;
        tb_error err;
        assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
        for (int k = 0; k < 24; k++) {
            float th = THETA * (float)k / (loop ? 24.0f : 23.0f);
            /* D = (1,1) rotated about the origin by θ */
            const float *p = pos + ((size_t)k * 4 + D) * 3;
            assert_float_equal(p[0], cosf(th) - sinf(th), 1e-5f);
            assert_float_equal(p[1], sinf(th) + cosf(th), 1e-5f);
            assert_float_equal(p[2], 0.0f, 1e-6f);
            /* A stays put (Hips does not move) */
            assert_float_equal(pos[((size_t)k * 4 + A) * 3 + 1], 0.0f, 1e-6f);
        }
    }
    strip_free(&s);
}

static void rigid_variant_reads_exactly_one(void **state)
{
    (void)state;
    strip s = strip_load();
    /* SPEC A8: the tail (C, D by its Tail_1 weights) 100% on Hips. */
    uint8_t mask[4];
    assert_int_equal(tb_measure_tail_mask(mask, s.m, NULL, NULL, NULL), 2);
    uint16_t j[16];
    float w[16];
    tb_error err;
    int hips = s.m->role_joint[TB_ROLE_HIPS];
    assert_true(hips >= 0);
    assert_int_equal(tb_measure_rigid_weights(j, w, s.m, mask, hips, &err), TB_OK);
    assert_float_equal(w[C * 4], 1.0f, 0);
    assert_float_equal(w[C * 4 + 1], 0.0f, 0);
    tb_measure_desc d = {0};
    d.joints = j;
    d.weights = w;
    d.tail_mask = mask;
    tb_measure_result r;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    assert_int_equal(r.tail.samples, 24);
    assert_float_equal(r.tail.p95, 1.0f, 1e-6f);
    assert_float_equal(r.tail.p99, 1.0f, 1e-6f);
    assert_float_equal(r.tail.max, 1.0f, 1e-6f);
    assert_int_equal(r.tail.torn, 0);
    /* the plank does not move: Hips is not animated */
    assert_float_equal(r.tip_travel, 0.0f, 1e-6f);
    assert_float_equal(r.max_bone_rotation_rad, 0.0f, 1e-6f);
    /* the rigid variant needs a joint of the skin */
    assert_int_equal(tb_measure_rigid_weights(j, w, s.m, mask, 7, &err), TB_ERR_ARG);
    strip_free(&s);
}

static void tail_from_tail_bones_gives_bone_distance_and_motion(void **state)
{
    (void)state;
    strip s = strip_load();
    tb_measure_result r;
    tb_error err;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, NULL, &err), TB_OK);
    assert_int_equal(r.tail_source, TB_TAIL_FROM_JOINTS);
    assert_int_equal(r.tail_vertices, 2);
    /* tail edge CD is carried rigidly by Tail_1; body edge AB by Hips */
    assert_int_equal(r.tail.edges, 1);
    assert_float_equal(r.tail.max, 1.0f, 1e-5f);
    assert_float_equal(r.body.max, 1.0f, 1e-5f);
    /* SPEC A9: Tail_1 is terminal: segment (0,0)→(0,0.5) (50% of the
     * Hips→Tail_1 bone); C is 0.5 from it, D sqrt(1.25). */
    assert_float_equal(r.bone_distance, (0.5f + sqrtf(1.25f)) / 2.0f, 1e-6f);
    /* Tip: D, the tail vertex farthest from Tail_1's head; its path is 23
     * chords of a circle of radius sqrt(2) over THETA. */
    assert_int_equal(r.tip_vertex, D);
    float chord = 2.0f * sqrtf(2.0f) * sinf(THETA / 46.0f);
    assert_float_equal(r.tip_travel, 23.0f * chord, 1e-5f);
    assert_float_equal(r.tip_travel_h, 23.0f * chord, 1e-5f); /* H = 1 */
    assert_int_equal(r.motion_bone_count, 1);
    assert_float_equal(r.max_bone_rotation_rad, THETA, 1e-4f);
    strip_free(&s);
}

static void file_without_tail_bones_or_mask_measures_body_only(void **state)
{
    (void)state;
    strip s = strip_load();
    uint8_t none[2] = {0, 0}; /* no joint is a tail joint */
    tb_measure_desc d = {0};
    d.tail_joints = none;
    tb_measure_result r;
    tb_error err;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    assert_int_equal(r.tail_source, TB_TAIL_NONE);
    assert_int_equal(r.tail.samples, 0);
    assert_true(isnan(r.tail.p99));
    assert_int_equal(r.tip_vertex, -1);
    assert_true(isnan(r.bone_distance));
    /* every edge is body: 5 edges (AB, BD, DA, DC, CA) */
    assert_int_equal(r.body.edges, 5);
    assert_float_equal(r.body.max, sqrtf(5.0f), 1e-5f);
    strip_free(&s);
}

/* ---- pose hook -------------------------------------------------------- */

typedef struct hook_log {
    int calls;
    float first_dt, last_t, sum_dt;
    int tail_joint;
} hook_log;

/* Undoes the clip's bend: a "solver" that holds Tail_1 at rest. */
static void hold_tail(void *user, float t_s, float dt_s, tb_transform *locals, float (*world)[16])
{
    hook_log *h = user;
    if (h->calls == 0)
        h->first_dt = dt_s;
    h->calls++;
    h->last_t = t_s;
    h->sum_dt += dt_s;
    tb_transform *x = &locals[h->tail_joint];
    x->r[0] = x->r[1] = x->r[2] = 0;
    x->r[3] = 1;
    tb_transform_to_matrix(x, world[h->tail_joint]); /* parent Hips: (0,-1,0) then +(0,1,0) */
    world[h->tail_joint][13] = 0;
}

static void pose_hook_changes_the_measured_pose(void **state)
{
    (void)state;
    strip s = strip_load();
    uint8_t mask[4] = {0, 1, 0, 1};
    hook_log h = {0};
    h.tail_joint = s.m->joint_of_node[1];
    tb_measure_desc d = {0};
    d.tail_mask = mask;
    d.pose_hook = hold_tail;
    d.hook_user = &h;
    tb_measure_result r;
    tb_error err;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    assert_int_equal(h.calls, 24);
    assert_float_equal(h.first_dt, 0.0f, 0);
    assert_float_equal(h.sum_dt, 1.0f, 1e-5f);
    assert_float_equal(r.tail.max, 1.0f, 1e-5f); /* the bend was undone */
    strip_free(&s);
}

static void pose_hook_runs_at_its_rate_and_warms_up(void **state)
{
    (void)state;
    strip s = strip_load();
    hook_log h = {0};
    h.tail_joint = s.m->joint_of_node[1];
    tb_measure_desc d = {0};
    d.pose_hook = hold_tail;
    d.hook_user = &h;
    d.hook_rate_hz = 230.0f; /* 23 intervals of 1/23 s: 10 steps each */
    d.warmup_passes = 2;
    tb_measure_result r;
    tb_error err;
    assert_int_equal(tb_measure_clip(&r, s.m, s.clip, &d, &err), TB_OK);
    /* warm-up: 1 + 2 × (230 + the jump back to 0); measure: 230 more */
    assert_int_equal(h.calls, 1 + 2 * 231 + 230);
    assert_float_equal(h.sum_dt, 2.0f * (1.0f + 1.0f / 23.0f) + 1.0f, 1e-3f);
    assert_float_equal(h.last_t, 1.0f, 1e-6f);
    strip_free(&s);
}

/* ---- percentiles ------------------------------------------------------ */

static void percentile_is_nearest_rank_on_a_known_distribution(void **state)
{
    (void)state;
    float v[100];
    uint32_t seed = 12345;
    for (int i = 0; i < 100; i++)
        v[i] = (float)(i + 1);
    for (int i = 99; i > 0; i--) { /* deterministic shuffle */
        seed = seed * 1664525u + 1013904223u;
        int j = (int)(seed % (uint32_t)(i + 1));
        float t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    assert_float_equal(tb_measure_percentile(v, 100, 0.95), 95.0f, 0);
    assert_float_equal(tb_measure_percentile(v, 100, 0.99), 99.0f, 0);
    assert_float_equal(tb_measure_percentile(v, 100, 1.0), 100.0f, 0);
    assert_float_equal(tb_measure_percentile(v, 100, 0.0), 1.0f, 0);
    assert_float_equal(tb_measure_percentile(v, 100, 0.5), 50.0f, 0);
    /* a rank between two values is rounded up (nearest rank: ceil(q n)) */
    assert_float_equal(tb_measure_percentile(v, 100, 0.955), 96.0f, 0);
    assert_true(isnan(tb_measure_percentile(v, 0, 0.5)));
    float one = 3.0f;
    assert_float_equal(tb_measure_percentile(&one, 1, 0.99), 3.0f, 0);
}

static void percentile_agrees_with_sorting_on_random_data_with_ties(void **state)
{
    (void)state;
    enum { N = 5001 };
    static float v[N], sorted[N];
    uint32_t seed = 7;
    for (int trial = 0; trial < 20; trial++) {
        for (int i = 0; i < N; i++) {
            seed = seed * 1664525u + 1013904223u;
            v[i] = (float)((seed >> 8) % (trial + 2)) * 0.25f; /* many ties */
            if (trial >= 16) /* orders that defeat a naive pivot: sorted, reversed, organ pipe, saw */
                v[i] = trial == 16 ? (float)i : trial == 17 ? (float)(N - i) : trial == 18 ? (float)(i < N / 2 ? i : N - i)
                                                                                          : (float)(i % 97);
            sorted[i] = v[i];
        }
        qsort(sorted, N, sizeof *sorted, cmp_float);
        const double qs[] = {0, 0.01, 0.5, 0.95, 0.99, 1};
        for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
            size_t rank = (size_t)ceil(qs[q] * N);
            rank = rank < 1 ? 1 : rank;
            assert_float_equal(tb_measure_percentile(v, N, qs[q]), sorted[rank - 1], 0);
        }
    }
}

/* The min and the max read from the bins leave NaN out, reach the
 * infinite bin, and are NaN when no sample has a value. */
static void histogram_min_and_max_skip_nan(void **state)
{
    (void)state;
    tb__hist h;
    assert_true(tb__hist_init(&h, 1.5f, 0.67f));
    assert_true(isnan(tb__hist_min(&h)) && isnan(tb__hist_max(&h)));
    tb__hist_add(&h, NAN);
    assert_true(isnan(tb__hist_min(&h)) && isnan(tb__hist_max(&h)));
    tb__hist_tally(&h);
    assert_true(isnan(h.min) && isnan(h.max));
    tb__hist_add(&h, 1.25f);
    tb__hist_add(&h, NAN);
    assert_float_equal(tb__hist_min(&h), 1.25f, 0);
    assert_float_equal(tb__hist_max(&h), 1.25f, 0);
    tb__hist_tally(&h); /* the tally's min and max are the same */
    assert_float_equal(h.min, 1.25f, 0);
    assert_float_equal(h.max, 1.25f, 0);
    tb__hist_add(&h, 0.0f);
    tb__hist_add(&h, INFINITY);
    assert_float_equal(tb__hist_min(&h), 0.0f, 0);
    assert_true(isinf(tb__hist_max(&h)));
    tb__hist_tally(&h);
    assert_float_equal(h.min, 0.0f, 0);
    assert_true(isinf(h.max));
    tb__hist_free(&h);
}

/* A histogram writes only the bins its samples span (the near bins at
 * init, then from them to each sample's), so its memory is not zeroed as
 * a whole: made over memory that held other data (blocks of its own sizes
 * filled and freed first, which the allocator hands back), it still counts
 * samples from every bin range, the NaN's and the infinite bin exactly. */
static void histogram_made_over_used_memory_counts_exactly(void **state)
{
    (void)state;
    for (int round = 0; round < 2; round++) { /* the first frees may raise the allocator's mmap threshold */
        void *used[3] = {malloc(TB__HIST_BINS * sizeof(uint64_t)), malloc(TB__HIST_BINS * sizeof(float)),
                         malloc(TB__HIST_BINS * sizeof(float))};
        for (int i = 0; i < 3; i++) {
            assert_non_null(used[i]);
            memset(used[i], 0x5b, i == 0 ? TB__HIST_BINS * sizeof(uint64_t) : TB__HIST_BINS * sizeof(float));
        }
        for (int i = 3; i-- > 0;)
            free(used[i]);
    }
    const float xs[] = {1.0f, 0.0f, 1e-3f, 0.3f, 0.6f, 2.4f, 7.5f, 50.0f, 300.0f, 1e9f, 1e13f, INFINITY, NAN, 1.0f};
    const size_t n = sizeof xs / sizeof xs[0];
    tb__hist h;
    assert_true(tb__hist_init(&h, 1.5f, 0.67f));
    size_t torn = 0;
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        tb__hist_add(&h, xs[i]);
        torn += xs[i] > 1.5f || xs[i] < 0.67f;
        if (xs[i] == xs[i]) {
            lo = xs[i] < lo ? xs[i] : lo;
            hi = xs[i] > hi ? xs[i] : hi;
        }
    }
    tb__hist_tally(&h);
    assert_int_equal(h.n, n);
    assert_int_equal(h.torn, torn);
    assert_float_equal(h.min, lo, 0);
    assert_true(isinf(h.max) && hi == h.max);
    /* every rank is its sample's (one sample a bin, but the two 1s) */
    float sorted[sizeof xs / sizeof xs[0]];
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (xs[i] == xs[i])
            sorted[m++] = xs[i];
    assert_int_equal(m, n - 1); /* NaN ranks last */
    qsort(sorted, m, sizeof *sorted, cmp_float);
    for (size_t k = 0; k < m; k++)
        assert_float_equal(tb__hist_rank(&h, k), sorted[k], 0);
    assert_true(isnan(tb__hist_rank(&h, n - 1)));
    tb__hist_free(&h);
}

/* The streaming histogram measure keeps (passes/stretch_hist.h) against
 * the exact nearest rank of the same samples, sorted: every percentile lies
 * in the exact value's bin, within half its width, so below 128 it prints the
 * same with "%.2f"; the count, the torn count, the min and the max are exact.
 * Random stretch-like data: a spread about 1, a heavy tail reaching every
 * bin range (up to 1e13, past the last octave), exact 1s, ties. */
static void histogram_percentile_matches_the_exact_rank_within_its_bin(void **state)
{
    (void)state;
    enum { N = 40000 };
    float *v = malloc(N * sizeof *v), *sorted = malloc(N * sizeof *sorted);
    assert_non_null(v);
    assert_non_null(sorted);
    uint32_t seed = 99;
    const double qs[] = {0, 0.001, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1};
    int checked_fine = 0, checked_log = 0;
    for (int trial = 0; trial < 24; trial++) {
        size_t n = trial < 4 ? (size_t)1 + (size_t)trial * 7 : (size_t)N - (size_t)trial * 997;
        double spread = 0.002 * (trial + 1), heavy = 0.002 * trial;
        tb__hist h;
        assert_true(tb__hist_init(&h, 1.5f, 0.67f));
        size_t torn = 0;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            double u1 = ((seed >> 8) + 0.5) / 16777216.0;
            seed = seed * 1664525u + 1013904223u;
            double u2 = ((seed >> 8) + 0.5) / 16777216.0;
            double g = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2); /* normal */
            float x = (float)(1 + spread * g);
            if (u2 < heavy) /* a tearing edge: log-uniform over 1e-3 .. 1e13 */
                x = (float)pow(10.0, -3 + 16 * u1);
            else if (u1 < 0.1)
                x = 1.0f; /* an undeformed edge */
            else if (trial % 3 == 0)
                x = (float)(floor(x * 64) / 64); /* ties */
            v[i] = sorted[i] = x;
            torn += x > 1.5f || x < 0.67f;
            tb__hist_add(&h, x);
        }
        qsort(sorted, n, sizeof *sorted, cmp_float);
        tb__hist_tally(&h);
        assert_int_equal(h.n, n);
        assert_int_equal(h.torn, torn);
        assert_float_equal(tb__hist_min(&h), sorted[0], 0);
        assert_float_equal(tb__hist_max(&h), sorted[n - 1], 0);
        assert_float_equal(h.min, sorted[0], 0);
        assert_float_equal(h.max, sorted[n - 1], 0);
        for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
            size_t k = tb_rank_nearest(n, qs[q]);
            float exact = sorted[k], got = tb__hist_rank(&h, k);
            assert_int_equal(tb__hist_bin(got), tb__hist_bin(exact));
            double w = tb__hist_bin_width(exact);
            if (fabs((double)got - exact) > 0.5 * w)
                fail_msg("trial %d q %g: histogram %.9g, exact %.9g, bin width %g", trial, qs[q], (double)got,
                         (double)exact, w);
            if (k == 0 || k == n - 1)
                assert_float_equal(got, exact, 0); /* the min and the max: exact */
            if (exact < 128) {
                char a[32], b[32];
                snprintf(a, sizeof a, "%.2f", (double)got);
                snprintf(b, sizeof b, "%.2f", (double)exact);
                assert_string_equal(a, b);
                checked_fine++;
            } else {
                checked_log++;
            }
        }
        /* the first and the last rank of a bin are its exact extremes (the
         * first 40 bin changes: each look-up scans the bins) */
        for (size_t k = 1, changes = 0; k < n && changes < 40; k++)
            if (tb__hist_bin(sorted[k]) != tb__hist_bin(sorted[k - 1])) {
                changes++;
                assert_float_equal(tb__hist_rank(&h, k), sorted[k], 0);
                assert_float_equal(tb__hist_rank(&h, k - 1), sorted[k - 1], 0);
            }
        tb__hist_free(&h);
    }
    assert_true(checked_fine > 100);
    assert_true(checked_log > 5); /* the heavy tail reached the octave bins */
    free(v);
    free(sorted);
}

/* ---- CLI -------------------------------------------------------------- */

static void cli_measures_a_file_and_dumps_positions(void **state)
{
    (void)state;
    tb_doc *doc = make_strip();
    tb_error err;
    const char *in = tbt_tmp_path("strip.glb");
    char inpath[4096];
    snprintf(inpath, sizeof inpath, "%s", in);
    assert_int_equal(tb_doc_save(doc, inpath, &err), TB_OK);
    tb_doc_free(doc);
    char *out = NULL;
    assert_int_equal(tbt_run_cli(&out, "measure '%s' --json", inpath), 0);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *c0 = json_array_get(json_object_get(j, "clips"), 0);
    assert_string_equal(json_string_value(json_object_get(c0, "clip")), "Bend");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(c0, "tail"), "samples")), 24);
    json_decref(j);
    free(out);
    /* text table: tail and body rows */
    assert_int_equal(tbt_run_cli(&out, "measure '%s' --clip bend", inpath), 0);
    assert_non_null(strstr(out, "tail "));
    assert_non_null(strstr(out, "body "));
    free(out);
    /* compare: rigid on Hips reads 1.00 */
    assert_int_equal(tbt_run_cli(&out, "measure '%s' --compare --no-spring --json", inpath), 0);
    j = json_loads(out, 0, NULL);
    assert_non_null(j);
    json_t *rigid = json_object_get(json_object_get(json_array_get(json_object_get(j, "clips"), 0), "rigid"), "tail");
    assert_float_equal(json_real_value(json_object_get(rigid, "max")), 1.0, 1e-6);
    /* torn is a fraction in every report; the count is torn_samples */
    assert_true(json_is_number(json_object_get(rigid, "torn")));
    assert_float_equal(json_number_value(json_object_get(rigid, "torn")), 0.0, 0);
    assert_int_equal(json_integer_value(json_object_get(rigid, "torn_samples")), 0);
    json_decref(j);
    free(out);
    assert_int_equal(tbt_run_cli(&out, "measure '%s' --compare --no-spring", inpath), 0);
    assert_non_null(strstr(out, "rigid on Hips"));
    assert_non_null(strstr(out, "body, reference"));
    free(out);
    /* dump: header + prims + times + 24 × 4 × 3 floats */
    char dump[4096];
    snprintf(dump, sizeof dump, "%s", tbt_tmp_path("strip.bin"));
    assert_int_equal(tbt_run_cli(&out, "measure '%s' --clip Bend --dump-positions '%s'", inpath, dump), 0);
    free(out);
    size_t size;
    uint8_t *bin = tbt_read_file(dump, &size);
    assert_non_null(bin);
    assert_int_equal(size, 8 + 12 + 20 + 24 * 4 + 24 * 4 * 12);
    assert_memory_equal(bin, "TBPOS1\0\0", 8);
    free(bin);
    /* usage errors exit 2 */
    assert_int_equal(tbt_run_cli(&out, "measure"), 2);
    free(out);
    assert_int_equal(tbt_run_cli(&out, "measure '%s' --dump-positions x.bin", inpath), 2);
    free(out);
    assert_int_equal(tbt_run_cli(&out, "measure '%s' --clip NoSuchClip", inpath), 1);
    free(out);
}

/* measure --all -j N (clips on N threads) writes what one thread writes, and
 * that is each clip's own `--clip NAME` report in clip order (blank lines
 * between in text): text and JSON, plain and --compare (whose third row is
 * the file repaired in memory, built once for every clip), on the synthetic
 * tail_leg (6 clips, no Tail_* bones: the tail is detected). */
static void measure_all_is_the_same_on_one_thread_and_on_four(void **state)
{
    (void)state;
    char in[4096];
    snprintf(in, sizeof in, "%s", tbt_tmp_path("jobs_tail_leg.glb"));
    char *out = NULL;
    assert_int_equal(tbt_run_cli(&out, "synth --variant tail_leg -o '%s'", in), 0);
    free(out);
    static const char *const clips[] = {"Walk", "Sprint", "Idle", "Crouch", "HipSweep", "BackFlip"};
    static const char *const modes[] = {"", "--json", "--compare", "--compare --json"};
    for (int m = 0; m < 4; m++) {
        char *one = NULL, *four = NULL, *dflt = NULL;
        assert_int_equal(tbt_run_cli(&one, "measure '%s' %s --all -j 1", in, modes[m]), 0);
        assert_int_equal(tbt_run_cli(&four, "measure '%s' %s -j 4", in, modes[m]), 0);
        assert_int_equal(tbt_run_cli(&dflt, "measure '%s' %s --jobs=0", in, modes[m]), 0);
        assert_string_equal(one, four);
        assert_string_equal(one, dflt);
        if (strstr(modes[m], "--json")) {
            json_t *j = json_loads(four, 0, NULL), *cl = json_object_get(j, "clips");
            assert_non_null(j);
            assert_int_equal(json_array_size(cl), 6);
            for (size_t c = 0; c < 6; c++) {
                char *single = NULL;
                assert_int_equal(tbt_run_cli(&single, "measure '%s' %s --clip %s", in, modes[m], clips[c]), 0);
                json_t *s = json_loads(single, 0, NULL);
                assert_non_null(s);
                assert_string_equal(json_string_value(json_object_get(json_array_get(cl, c), "clip")), clips[c]);
                assert_true(json_equal(json_array_get(cl, c), json_array_get(json_object_get(s, "clips"), 0)));
                json_decref(s);
                free(single);
            }
            json_decref(j);
        } else {
            size_t at = 0;
            for (int c = 0; c < 6; c++) {
                char *single = NULL;
                assert_int_equal(tbt_run_cli(&single, "measure '%s' %s --clip %s", in, modes[m], clips[c]), 0);
                size_t n = strlen(single);
                if (c > 0) {
                    assert_int_equal(four[at], '\n');
                    at++;
                }
                assert_true(n > 100 && strncmp(four + at, single, n) == 0);
                at += n;
                free(single);
            }
            assert_int_equal(four[at], 0);
        }
        free(one);
        free(four);
        free(dflt);
    }
    assert_int_equal(tbt_run_cli(&out, "measure '%s' -j -1", in), 2);
    free(out);
}

/* ---- corpus ----------------------------------------------------------- */

/* An exact recount of a clip's body stretch (SPEC C), written here from the
 * definition and sharing none of measure.c's code, in two halves. The skin:
 * this file's own linear blend skinning in double (Σ w_i · W_j · IBM_j · p /
 * Σ w_i, W from the runtime's tb_clip_sample + tb_local_to_world, checked
 * against three.js by node_measure) at the instants k·D/23, against the
 * tool's skinned positions; the world scale (median over skin joints of
 * cbrt|det(W_j · IBM_j)| in the stored pose), against the tool's. The
 * figures: from the tool's positions and scale, in double, the edges every
 * unique pair of a triangle's vertices (found by a plain sort), degenerate
 * edges (bind length < 1e-6 H) left out, every sample kept and sorted:
 * nearest rank ⌈q·n⌉, strict torn thresholds — so the figures are checked to
 * the tool's float rounding (oracle_bounds), not to the two skins' distance. */
typedef struct oracle_stats {
    size_t edges, samples, torn;
    double p95, p99, min, max, world_scale, skin_err_h;
    /* what the tool may print, derived per sample (oracle_bounds) */
    size_t torn_sure, torn_possible;
    double p95_lo, p95_hi, p99_lo, p99_hi, min_lo, min_hi, max_lo, max_hi;
} oracle_stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_u64_asc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* column-major 4x4: r = a · b */
static void mat4_mul_d(double r[16], const float a[16], const float b[16])
{
    for (int c = 0; c < 4; c++)
        for (int row = 0; row < 4; row++) {
            double v = 0;
            for (int k = 0; k < 4; k++)
                v += (double)a[k * 4 + row] * (double)b[c * 4 + k];
            r[c * 4 + row] = v;
        }
}

static double det3_d(const double m[16])
{
    return m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) +
           m[8] * (m[1] * m[6] - m[5] * m[2]);
}

/* Half the width of the stretch histogram's bin that holds v (its layout as
 * docs/measure.md "Memory" states it; figures here stay below 128). */
static double hist_half_bin(double v)
{
    assert_true(v >= 0 && v < 128);
    return 0.5 * (v >= 0.5 && v < 2.5 ? 1e-4 : v < 20 ? 1e-3 : 5e-3);
}

/* Where the tool's figures may lie, derived per sample. The recount's
 * samples are the tool's own skinned positions (positions_out, checked
 * against this file's skin apart) over the tool's world scale, in double: each
 * is what the tool's sample would be in exact arithmetic. The tool computes it
 * in float — three differences, three squares, two sums, a square root, the
 * scale's inverse, the bind length from the same float positions (as many
 * again), a product, a division — so its sample differs from the recount's by
 * less than 16 roundings, 16·u·r (u = 2⁻²⁴). An order statistic (p95, p99,
 * min, max) of the tool's samples lies between the same statistic of the
 * lower ends r − 16·u·r and of the upper ends (its percentiles half a
 * histogram bin further: docs/measure.md "Memory"), and its torn count
 * between the samples surely torn and those possibly torn. */
static void oracle_bounds(oracle_stats *o, const double *samples)
{
    const size_t n = o->samples;
    const double rel = 16.0 * (FLT_EPSILON / 2); /* FLT_EPSILON / 2 = u: one rounding */
    double *lo = malloc(n * sizeof *lo), *hi = malloc(n * sizeof *hi);
    assert_true(lo && hi);
    for (size_t i = 0; i < n; i++) {
        double r = samples[i];
        double d = r * rel;
        lo[i] = r - d;
        hi[i] = r + d;
        o->torn_sure += lo[i] > 1.5 || hi[i] < 0.67;
        o->torn_possible += hi[i] > 1.5 || lo[i] < 0.67;
    }
    qsort(lo, n, sizeof *lo, cmp_double);
    qsort(hi, n, sizeof *hi, cmp_double);
    size_t r95 = (size_t)ceil(0.95 * (double)n) - 1, r99 = (size_t)ceil(0.99 * (double)n) - 1;
    /* the tool's sample lies in [lo, hi]; its bin is one of those the two ends fall in or between */
    double h95 = fmax(hist_half_bin(lo[r95]), hist_half_bin(hi[r95]));
    double h99 = fmax(hist_half_bin(lo[r99]), hist_half_bin(hi[r99]));
    o->p95_lo = lo[r95] - h95;
    o->p95_hi = hi[r95] + h95;
    o->p99_lo = lo[r99] - h99;
    o->p99_hi = hi[r99] + h99;
    o->min_lo = lo[0];
    o->min_hi = hi[0];
    o->max_lo = lo[n - 1];
    o->max_hi = hi[n - 1];
    free(lo);
    free(hi);
}

/* positions: the tool's skinned world positions (tb_measure_desc.positions_out),
 * compared with this skin (skin_err_h) and measured over tool_scale, the world
 * scale the tool divided by (compared with this one by the caller). */
static void body_stretch_oracle(oracle_stats *o, const tb_model *m, const tb_clip *clip, const float *positions,
                                double tool_scale)
{
    memset(o, 0, sizeof *o);
    const size_t nv = m->vertex_count, inf = (size_t)m->influences;
    const int jc = m->skel.joint_count, sj = m->skin_joint_count;
    tb_transform *locals = malloc((size_t)jc * sizeof *locals);
    float(*world)[16] = malloc((size_t)jc * sizeof *world);
    double(*mats)[16] = malloc((size_t)sj * sizeof *mats);
    double *scales = malloc((size_t)sj * sizeof *scales);
    assert_true(locals && world && mats && scales);
    /* world scale, stored pose */
    tb_local_to_world(&m->skel, m->skel.rest_local, NULL, world);
    size_t ns = 0;
    for (int k = 0; k < sj; k++) {
        mat4_mul_d(mats[k], world[m->skin_joints[k]], m->inverse_bind[k]);
        double x = cbrt(fabs(det3_d(mats[k])));
        if (isfinite(x) && x > 0)
            scales[ns++] = x;
    }
    assert_true(ns > 0);
    qsort(scales, ns, sizeof *scales, cmp_double);
    o->world_scale = ns % 2 ? scales[ns / 2] : 0.5 * (scales[ns / 2 - 1] + scales[ns / 2]);
    /* edges */
    uint64_t *e = malloc(m->triangle_count * 3 * sizeof *e);
    assert_non_null(e);
    size_t ne = 0;
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = m->triangles[t * 3 + (size_t)k], b = m->triangles[t * 3 + (size_t)(k + 1) % 3];
            if (a != b)
                e[ne++] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
        }
    qsort(e, ne, sizeof *e, cmp_u64_asc);
    size_t u = 0;
    for (size_t i = 0; i < ne; i++) {
        if (u && e[i] == e[u - 1])
            continue;
        uint32_t a = (uint32_t)(e[i] >> 32), b = (uint32_t)e[i];
        double d2 = 0;
        for (int c = 0; c < 3; c++) {
            double x = (double)m->positions[a * 3 + c] - (double)m->positions[b * 3 + c];
            d2 += x * x;
        }
        if (sqrt(d2) < 1e-6 * (double)m->height)
            continue;
        e[u++] = e[i];
    }
    ne = u;
    double *bind = malloc(ne * sizeof *bind), *skinned = malloc(nv * 3 * sizeof *skinned);
    double *samples = malloc(ne * 24 * sizeof *samples);
    assert_true(bind && skinned && samples);
    for (size_t i = 0; i < ne; i++) {
        uint32_t a = (uint32_t)(e[i] >> 32), b = (uint32_t)e[i];
        double d2 = 0;
        for (int c = 0; c < 3; c++) {
            double x = (double)m->positions[a * 3 + c] - (double)m->positions[b * 3 + c];
            d2 += x * x;
        }
        bind[i] = sqrt(d2);
    }
    size_t n = 0;
    double eps_abs = 0; /* the largest coordinate difference of the two skins */
    for (int k = 0; k < 24; k++) {
        float t = (float)((double)clip->duration_s * k / 23.0);
        tb_clip_sample(clip, &m->skel, t, locals);
        tb_local_to_world(&m->skel, locals, NULL, world);
        for (int j = 0; j < sj; j++)
            mat4_mul_d(mats[j], world[m->skin_joints[j]], m->inverse_bind[j]);
        for (size_t v = 0; v < nv; v++) {
            const float *p = m->positions + v * 3;
            double acc[3] = {0, 0, 0}, wsum = 0;
            for (size_t i = 0; i < inf; i++) {
                double w = m->weights[v * inf + i];
                if (w == 0)
                    continue;
                const double *M = mats[m->joints[v * inf + i]];
                for (int r = 0; r < 3; r++)
                    acc[r] += w * (M[r] * p[0] + M[4 + r] * p[1] + M[8 + r] * p[2] + M[12 + r]);
                wsum += w;
            }
            for (int r = 0; r < 3; r++) {
                skinned[v * 3 + r] = wsum > 0 ? acc[r] / wsum : 0;
                double d = fabs(skinned[v * 3 + r] - (double)positions[((size_t)k * nv + v) * 3 + (size_t)r]);
                eps_abs = d > eps_abs ? d : eps_abs;
            }
        }
        const float *tool = positions + (size_t)k * nv * 3;
        for (size_t i = 0; i < ne; i++) {
            uint32_t a = (uint32_t)(e[i] >> 32), b = (uint32_t)e[i];
            double d2 = 0;
            for (int c = 0; c < 3; c++) {
                double x = (double)tool[a * 3 + c] - (double)tool[b * 3 + c];
                d2 += x * x;
            }
            double r = sqrt(d2) / tool_scale / bind[i];
            samples[n++] = r;
            o->torn += r > 1.5 || r < 0.67;
        }
    }
    o->skin_err_h = eps_abs / ((double)m->height * o->world_scale);
    o->edges = ne;
    o->samples = n;
    oracle_bounds(o, samples);
    qsort(samples, n, sizeof *samples, cmp_double);
    o->min = samples[0];
    o->max = samples[n - 1];
    o->p95 = samples[(size_t)ceil(0.95 * (double)n) - 1];
    o->p99 = samples[(size_t)ceil(0.99 * (double)n) - 1];
    free(samples);
    free(skinned);
    free(bind);
    free(e);
    free(scales);
    free(mats);
    free(world);
    free(locals);
}

/* A corpus humanoid without a tail: tb_measure_clip's skin against this
 * file's (within 1e-5 H), its world scale against this one's (1e-5
 * relative), its edges and samples exact, and its figures within the bounds
 * oracle_bounds derives per sample from float rounding (p95/p99 half a
 * histogram bin wider). */
static void measure_corpus_clip(const char *rel, const char *clip_name)
{
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, rel);
    if (!path)
        tbt_skip();
    tb_doc *doc;
    tb_model *m;
    tb_clip *clip;
    tb_error err;
    assert_int_equal(tb_doc_load(&doc, path, NULL, &err), TB_OK);
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    int a = tb_clip_find(doc, clip_name);
    assert_true(a >= 0);
    assert_int_equal(tb_clip_load(&clip, doc, m, a, NULL, &err), TB_OK);
    tb_measure_desc d = {0};
    d.positions_out = malloc((size_t)24 * m->vertex_count * 3 * sizeof(float));
    assert_non_null(d.positions_out);
    tb_measure_result r;
    assert_int_equal(tb_measure_clip(&r, m, clip, &d, &err), TB_OK);
    /* a humanoid without Tail_* bones: body only */
    assert_int_equal(r.tail_source, TB_TAIL_NONE);
    assert_int_equal(r.tail.samples, 0);
    oracle_stats o;
    body_stretch_oracle(&o, m, clip, d.positions_out, (double)r.world_scale);
    print_message("%s %s: %zu edges, world scale %.6g (tool %.6g), skin %.2e H apart; "
                  "p95 %.5f / %.5f, p99 %.5f / %.5f, min %.7f / %.7f, max %.7f / %.7f, torn %zu / %zu "
                  "(%zu near a threshold) (tool / recount)\n",
                  rel, clip_name, o.edges, o.world_scale, (double)r.world_scale, o.skin_err_h, (double)r.body.p95,
                  o.p95, (double)r.body.p99, o.p99, (double)r.body.min, o.min, (double)r.body.max, o.max,
                  r.body.torn, o.torn, o.torn_possible - o.torn_sure);
    print_message("derived bounds: p95 [%.6f, %.6f], p99 [%.6f, %.6f], min [%.7f, %.7f], max [%.7f, %.7f], "
                  "torn [%zu, %zu]\n",
                  o.p95_lo, o.p95_hi, o.p99_lo, o.p99_hi, o.min_lo, o.min_hi, o.max_lo, o.max_hi, o.torn_sure,
                  o.torn_possible);
    /* the clip deforms the skin: the comparison is not of 24 bind poses */
    assert_true(o.max > 1.01 && o.min < 0.99);
    assert_true(o.skin_err_h < 1e-5);
    assert_true(fabs((double)r.world_scale - o.world_scale) <= 1e-5 * o.world_scale);
    assert_int_equal(r.body.edges, o.edges);
    assert_int_equal(r.body.samples, o.samples);
    assert_true(o.p95_lo <= (double)r.body.p95 && (double)r.body.p95 <= o.p95_hi);
    assert_true(o.p99_lo <= (double)r.body.p99 && (double)r.body.p99 <= o.p99_hi);
    assert_true(o.min_lo <= (double)r.body.min && (double)r.body.min <= o.min_hi);
    assert_true(o.max_lo <= (double)r.body.max && (double)r.body.max <= o.max_hi);
    assert_true(o.torn_sure <= r.body.torn && r.body.torn <= o.torn_possible);
    assert_true(fabs((double)r.body.torn_frac - (double)r.body.torn / (double)r.body.samples) < 1e-6);
    free(d.positions_out);
    tb_clip_free(clip);
    tb_model_free(m);
    tb_doc_free(doc);
}

static void corpus_xbot_walk_body_stretch_equals_an_exact_recount(void **state)
{
    (void)state;
    measure_corpus_clip("clips/Xbot_agree_run_walk.glb", "walk");
}

static void corpus_soldier_walk_body_stretch_equals_an_exact_recount(void **state)
{
    (void)state;
    measure_corpus_clip("clips/threejs_Soldier_rexport.glb", "Walk");
}

/* ---- synthetic characters (tailbone/synth.h) ------------------------- */

/* The truth's tail vertices as a mask. */
static size_t truth_mask(uint8_t *mask, json_t *truth, size_t nv)
{
    memset(mask, 0, nv);
    size_t n = 0, i;
    json_t *app, *v;
    json_array_foreach(json_object_get(truth, "appendages"), i, app) {
        if (strcmp(json_string_value(json_object_get(app, "kind")), "tail") != 0)
            continue;
        size_t k;
        json_array_foreach(json_object_get(app, "vertices"), k, v) {
            json_int_t x = json_integer_value(v);
            if (x >= 0 && (size_t)x < nv && !mask[x]) {
                mask[x] = 1;
                n++;
            }
        }
    }
    return n;
}

/* The synthetic tail_leg, its model and its tail's vertices (the truth's). */
static uint8_t *tail_leg_with_mask(tb_doc **doc, json_t **truth, tb_model **m)
{
    tb_error err;
    assert_int_equal(tb_synth_build_json(doc, "tail_leg", NULL, truth, &err), TB_OK);
    assert_int_equal(tb_model_load(m, *doc, -1, &err), TB_OK);
    uint8_t *mask = malloc((*m)->vertex_count);
    assert_non_null(mask);
    assert_true(truth_mask(mask, *truth, (*m)->vertex_count) > 100);
    return mask;
}

static void synthetic_leg_weighted_tail_tears_on_walk_and_rigid_reads_one(void **state)
{
    (void)state;
    tb_doc *doc;
    json_t *truth;
    tb_error err;
    tb_model *m;
    tb_clip *clip;
    uint8_t *mask = tail_leg_with_mask(&doc, &truth, &m);
    int a = tb_clip_find(doc, "Walk");
    assert_true(a >= 0);
    assert_int_equal(tb_clip_load(&clip, doc, m, a, NULL, &err), TB_OK);
    tb_measure_desc d = {0};
    d.tail_mask = mask;
    tb_measure_result orig, rigid;
    assert_int_equal(tb_measure_clip(&orig, m, clip, &d, &err), TB_OK);
    /* SPEC 0/C: a tail weighted to the shin and thighs tears during Walk,
     * well beyond the body's own deformation */
    assert_true(orig.tail.torn > 0);
    assert_true(orig.tail.p99 > orig.body.p99);
    assert_true(orig.body.p99 >= 1.0f && orig.body.p99 < 1.5f);
    /* SPEC A8: the rigid variant reads 1.00 / 1.00 / 1.00 / 0% */
    size_t nw = m->vertex_count * (size_t)m->influences;
    uint16_t *j = malloc(nw * sizeof *j);
    float *w = malloc(nw * sizeof *w);
    assert_int_equal(tb_measure_rigid_weights(j, w, m, mask, m->role_joint[TB_ROLE_HIPS], &err), TB_OK);
    d.joints = j;
    d.weights = w;
    assert_int_equal(tb_measure_clip(&rigid, m, clip, &d, &err), TB_OK);
    assert_float_equal(rigid.tail.p95, 1.0f, 1e-4f);
    assert_float_equal(rigid.tail.p99, 1.0f, 1e-4f);
    assert_float_equal(rigid.tail.max, 1.0f, 1e-4f);
    assert_int_equal(rigid.tail.torn, 0);
    /* the plank turns with Hips, which turns less than the leg did */
    assert_true(rigid.max_bone_rotation_rad < orig.max_bone_rotation_rad);
    free(j);
    free(w);
    free(mask);
    tb_clip_free(clip);
    tb_model_free(m);
    json_decref(truth);
    tb_doc_free(doc);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* tb_measure_edges (bucketed by the lower vertex) gives the set a plain sort gives: strictly
 * ascending unique pairs lo < hi of the triangles' sides. */
static void edges_are_the_unique_sorted_triangle_sides(void **state)
{
    (void)state;
    tb_doc *doc;
    tb_error err;
    assert_int_equal(tb_synth_build(&doc, "tail_fur", NULL, NULL, &err), TB_OK);
    tb_model *m;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    uint64_t *e = NULL;
    size_t n = tb_measure_edges(m, &e);
    assert_true(n > 1000 && n != SIZE_MAX);
    uint64_t *want = malloc(m->triangle_count * 3 * sizeof *want);
    size_t c = 0;
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = m->triangles[t * 3 + (size_t)k], b = m->triangles[t * 3 + (size_t)(k + 1) % 3];
            if (a != b)
                want[c++] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
        }
    qsort(want, c, sizeof *want, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < c; i++)
        if (!u || want[i] != want[u - 1])
            want[u++] = want[i];
    assert_int_equal(n, u);
    assert_memory_equal(e, want, n * sizeof *e);
    for (size_t i = 1; i < n; i++)
        assert_true(e[i - 1] < e[i] && (uint32_t)(e[i] >> 32) < (uint32_t)e[i]);
    free(want);
    free(e);
    tb_model_free(m);
    tb_doc_free(doc);
}

/* A baked file plays as keyed: on a clip that already keys the Tail_* bones
 * the command does not run the spring over them, so the default and
 * --no-spring measure the same thing (the spring's own result on an
 * unbaked copy differs, or the check would be empty). */
static void cli_measures_a_baked_clip_as_keyed(void **state)
{
    (void)state;
    tb_doc *doc;
    tb_error err;
    assert_int_equal(tb_synth_build(&doc, "tail_hips", NULL, NULL, &err), TB_OK);
    char raw[4096], baked[4096];
    snprintf(raw, sizeof raw, "%s", tbt_tmp_path("keyed_raw.glb"));
    snprintf(baked, sizeof baked, "%s", tbt_tmp_path("keyed_baked.glb"));
    assert_int_equal(tb_doc_save(doc, raw, &err), TB_OK);
    tb_doc_free(doc);
    assert_int_equal(tbt_run_cli(NULL, "fix '%s' -o '%s' --only Walk -q", raw, baked), 0);
    double p99[3];
    const char *args[3] = {"", "--no-spring", ""};
    for (int i = 0; i < 3; i++) {
        char *out = NULL;
        char chained[4096];
        snprintf(chained, sizeof chained, "%s", tbt_tmp_path("keyed_chain_only.glb"));
        if (i == 2) /* the same chain without the baked keys: the spring runs */
            assert_int_equal(tbt_run_cli(NULL, "fix '%s' -o '%s' --no-bake -q", raw, chained), 0);
        assert_int_equal(tbt_run_cli(&out, "measure '%s' --clip Walk --json %s", i == 2 ? chained : baked, args[i]), 0);
        json_error_t je;
        json_t *j = json_loads(out, 0, &je);
        assert_non_null(j);
        json_t *row = json_array_get(json_object_get(j, "clips"), 0);
        assert_non_null(row);
        p99[i] = json_real_value(json_object_get(json_object_get(row, "tail"), "p99"));
        if (i < 2)
            assert_false(json_is_true(json_object_get(row, "spring")));
        else
            assert_true(json_is_true(json_object_get(row, "spring")));
        json_decref(j);
        free(out);
    }
    print_message("baked Walk tail p99: default %.6f, --no-spring %.6f; spring on the unbaked chain %.6f\n", p99[0],
                  p99[1], p99[2]);
    assert_float_equal(p99[0], p99[1], 0);
    assert_true(p99[2] != p99[0]);
}

/* tb_measure_prepare: clips measured with one prep (desc.prep) give the
 * same result as each working it out, with all three groups present (the
 * leg-weighted tail's mask less every third vertex: tail, body and seam
 * edges), on the whole edge list and on the edges near the tail only (runs
 * of skinned vertices, the blend search's case), with the edges it was
 * made from freed; a prep is refused for
 * another model, or when positions are asked of one made without them. */
static void a_shared_prep_gives_the_same_result(void **state)
{
    (void)state;
    tb_doc *doc;
    json_t *truth;
    tb_error err;
    assert_int_equal(tb_synth_build_json(&doc, "tail_leg", NULL, &truth, &err), TB_OK);
    tb_model *m, *m2;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    assert_int_equal(tb_model_load(&m2, doc, -1, &err), TB_OK);
    uint8_t *mask = malloc(m->vertex_count);
    assert_non_null(mask);
    assert_true(truth_mask(mask, truth, m->vertex_count) > 100);
    for (size_t v = 0; v < m->vertex_count; v += 3)
        mask[v] = 0;
    uint64_t *edges = NULL;
    size_t ne = tb_measure_edges(m, &edges), near = 0;
    assert_true(ne != SIZE_MAX && ne > 1000);
    uint64_t *tail_edges = malloc(ne * sizeof *tail_edges);
    assert_non_null(tail_edges);
    for (size_t e = 0; e < ne; e++)
        if (mask[edges[e] >> 32] || mask[edges[e] & 0xffffffffu])
            tail_edges[near++] = edges[e];
    assert_true(near > 100 && near < ne / 4);
    const char *names[] = {"Walk", "Idle"};
    for (int subset = 0; subset < 2; subset++) {
        tb_measure_desc d = {0};
        d.tail_mask = mask;
        d.edges = subset ? tail_edges : edges;
        d.edge_count = subset ? near : ne;
        tb_measure_prep *prep;
        /* the prep keeps no pointer to the edges it was given */
        uint64_t *given = malloc(d.edge_count * sizeof *given);
        assert_non_null(given);
        memcpy(given, d.edges, d.edge_count * sizeof *given);
        const uint64_t *listed = d.edges;
        d.edges = given;
        assert_int_equal(tb_measure_prepare(&prep, m, &d, &err), TB_OK);
        memset(given, 0xff, d.edge_count * sizeof *given);
        free(given);
        d.edges = listed;
        for (int c = 0; c < 2; c++) {
            tb_clip *clip;
            assert_int_equal(tb_clip_load(&clip, doc, m, tb_clip_find(doc, names[c]), NULL, &err), TB_OK);
            tb_measure_result own, shared;
            d.prep = NULL;
            d.loop = c;
            assert_int_equal(tb_measure_clip(&own, m, clip, &d, &err), TB_OK);
            assert_true(own.tail.samples > 0 && own.seam.samples > 0 && (subset || own.body.samples > 0));
            d.prep = prep;
            assert_int_equal(tb_measure_clip(&shared, m, clip, &d, &err), TB_OK);
            assert_memory_equal(&own, &shared, sizeof own);
            assert_int_equal(tb_measure_clip(&shared, m2, clip, &d, &err), TB_ERR_ARG);
            float pos[1];
            d.positions_out = pos;
            assert_int_equal(tb_measure_clip(&shared, m, clip, &d, &err), TB_ERR_ARG);
            d.positions_out = NULL;
            tb_clip_free(clip);
        }
        tb_measure_prep_free(prep);
    }
    free(tail_edges);
    free(edges);
    free(mask);
    json_decref(truth);
    tb_model_free(m);
    tb_model_free(m2);
    tb_doc_free(doc);
}

/* Makes m flat-shaded, as low-poly characters are exported: vertex 3t + c
 * becomes corner c of triangle t (each point repeated once per triangle
 * around it); returns the mask of the new vertices (mask0's). */
static uint8_t *flatten(tb_model *m, const uint8_t *mask0)
{
    const size_t nt = m->triangle_count, nv = nt * 3, inf = (size_t)m->influences;
    float *pos = malloc(nv * 3 * sizeof *pos), *w = malloc(nv * inf * sizeof *w);
    uint16_t *jt = malloc(nv * inf * sizeof *jt);
    uint32_t *tri = malloc(nv * sizeof *tri);
    uint8_t *mask = malloc(nv);
    assert_true(pos && w && jt && tri && mask);
    for (size_t i = 0; i < nv; i++) {
        uint32_t v = m->triangles[i];
        memcpy(pos + i * 3, m->positions + (size_t)v * 3, 3 * sizeof *pos);
        memcpy(w + i * inf, m->weights + (size_t)v * inf, inf * sizeof *w);
        memcpy(jt + i * inf, m->joints + (size_t)v * inf, inf * sizeof *jt);
        mask[i] = mask0[v];
        tri[i] = (uint32_t)i;
    }
    free(m->positions), free(m->weights), free(m->joints), free(m->triangles);
    m->positions = pos, m->weights = w, m->joints = jt, m->triangles = tri;
    m->vertex_count = nv;
    return mask;
}

/* A flat-shaded mesh (every triangle its own three vertices, as low-poly
 * characters are exported) repeats each point once per triangle around it:
 * measure merges the alike vertices (same position, joints, weights and tail
 * mask) and measures each edge between them once, counted as often as the
 * mesh has it. Its figures are those of measuring every edge of every
 * vertex, which a desc with positions_out does (it merges nothing): every
 * field of the result, the tip's travel included, bit for bit. */
static void alike_vertices_merged_give_the_figures_of_every_vertex(void **state)
{
    (void)state;
    tb_doc *doc;
    json_t *truth;
    tb_error err;
    tb_model *m;
    uint8_t *mask0 = tail_leg_with_mask(&doc, &truth, &m);
    for (size_t v = 0; v < m->vertex_count; v += 3) /* seams inside the tail */
        mask0[v] = 0;
    uint8_t *mask = flatten(m, mask0);
    const size_t nv = m->vertex_count;
    float *out = malloc((size_t)24 * nv * 3 * sizeof *out);
    assert_non_null(out);
    const char *names[] = {"Walk", "Crouch"};
    for (int c = 0; c < 2; c++) {
        tb_clip *clip;
        assert_int_equal(tb_clip_load(&clip, doc, m, tb_clip_find(doc, names[c]), NULL, &err), TB_OK);
        tb_measure_desc d = {0};
        d.tail_mask = mask;
        d.loop = c == 0;
        tb_measure_result merged, every;
        assert_int_equal(tb_measure_clip(&merged, m, clip, &d, &err), TB_OK);
        d.positions_out = out;
        assert_int_equal(tb_measure_clip(&every, m, clip, &d, &err), TB_OK);
        assert_true(merged.tail.samples > 0 && merged.seam.samples > 0 && merged.body.samples > 0);
        assert_true(merged.tip_vertex >= 0 && merged.tip_travel > 0);
        assert_memory_equal(&merged, &every, sizeof merged);
        tb_clip_free(clip);
    }
    free(out);
    free(mask);
    free(mask0);
    json_decref(truth);
    tb_model_free(m);
    tb_doc_free(doc);
}

/* ---- held poses: an instant whose skinning matrices are bit for bit the
 * last skinned instant's is counted on that instant's walk ---------------- */

/* src with its channels' keys squeezed into [a·D, b·D] of its duration D
 * (the values are src's): the instants before a·D all hold the pose of the
 * first key and those after b·D the last's, bit for bit (tb_clip_sample
 * clamps to a channel's keys). step: LINEAR channels read as STEP and
 * their key times cut down to fifths of D (five poses held for a fifth of
 * the clip each). single: one key a channel (its first) and no
 * duration, as a T-pose clip: every instant the same pose. */
typedef struct held_clip {
    tb_clip clip;
    tb_channel *ch;
    float *times;
} held_clip;

static held_clip held_from(const tb_clip *src, float a, float b, int step, int single)
{
    held_clip h;
    size_t keys = 0;
    for (int i = 0; i < src->channel_count; i++)
        keys += (size_t)src->channels[i].key_count;
    h.ch = malloc(((size_t)src->channel_count + 1) * sizeof *h.ch);
    h.times = malloc((keys + 1) * sizeof *h.times);
    assert_true(h.ch && h.times);
    const float dur = src->duration_s;
    size_t at = 0;
    for (int i = 0; i < src->channel_count; i++) {
        tb_channel c = src->channels[i];
        if (single && c.key_count > 1)
            c.key_count = 1;
        for (int k = 0; k < c.key_count; k++)
            h.times[at + (size_t)k] = single ? 0.0f
                                      : step ? floorf(c.times[k] / dur * 5.0f) * dur / 5.0f
                                             : a * dur + c.times[k] * (b - a);
        c.times = h.times + at;
        at += (size_t)c.key_count;
        assert_true(!step || c.interp != TB_INTERP_CUBICSPLINE);
        if (step)
            c.interp = TB_INTERP_STEP;
        h.ch[i] = c;
    }
    h.clip = *src;
    h.clip.channels = h.ch;
    h.clip.duration_s = single ? 0.0f : dur;
    return h;
}

/* A stateful hook: every third call moves one joint's world position. */
typedef struct nudge {
    int calls, joint;
} nudge;

static void nudge_every_third(void *user, float t_s, float dt_s, tb_transform *locals, float (*world)[16])
{
    nudge *h = user;
    (void)t_s, (void)dt_s, (void)locals;
    if (++h->calls % 3 == 0)
        world[h->joint][12] += 0.01f * (float)(h->calls % 7);
}

/* How many instants of positions (n × nv × 3) repeat the one before, bit for bit. */
static int repeated_instants(const float *pos, int n, size_t nv)
{
    int r = 0;
    for (int k = 1; k < n; k++)
        r += !memcmp(pos + (size_t)k * nv * 3, pos + (size_t)(k - 1) * nv * 3, nv * 3 * sizeof *pos);
    return r;
}

/* tb_measure_clip against tb__measure_clip_each (every instant skinned and
 * walked) on d: every field of the result, the positions and the hook's
 * calls the same. Returns the instants that held the pose before them. */
static int held_measure_is_every_instants(const tb_model *m, const tb_clip *clip, tb_measure_desc d, nudge *hook,
                                          float *pos_once, float *pos_each)
{
    tb_measure_result once, each;
    tb_error err;
    const size_t size = (size_t)24 * m->vertex_count * 3 * sizeof(float);
    if (hook)
        hook->calls = 0;
    if (pos_once) {
        memset(pos_once, 0xa5, size);
        d.positions_out = pos_once;
    }
    assert_int_equal(tb_measure_clip(&once, m, clip, &d, &err), TB_OK);
    int calls = hook ? hook->calls : 0;
    if (hook)
        hook->calls = 0;
    if (pos_each) {
        memset(pos_each, 0x5a, size);
        d.positions_out = pos_each;
    }
    assert_int_equal(tb__measure_clip_each(&each, m, clip, &d, &err), TB_OK);
    assert_true(once.tail.samples > 0 && once.seam.samples > 0);
    assert_int_equal(once.tail.samples, 24 * once.tail.edges);
    assert_memory_equal(&once, &each, sizeof once);
    if (hook)
        assert_int_equal(calls, hook->calls);
    if (!pos_once)
        return -1;
    assert_memory_equal(pos_once, pos_each, size);
    return repeated_instants(pos_each, 24, m->vertex_count);
}

/* A clip that holds still (a one-key T-pose, held frames at its ends, STEP
 * keys) skins and walks each held pose once, its samples counted once per
 * instant that holds it: the same figures, bit for bit, as walking every
 * instant, on every path of the measure (the whole mesh, the edges near the
 * tail in runs, positions_out, alike vertices merged, a stateful pose hook
 * with its rate and warm-up), and a still clip's are those of 24 instants of
 * one pose: no travel, no rotation, every edge 24 samples. */
static void held_poses_give_the_figures_of_every_instant(void **state)
{
    (void)state;
    tb_doc *doc;
    json_t *truth;
    tb_error err;
    tb_model *m;
    uint8_t *mask0 = tail_leg_with_mask(&doc, &truth, &m);
    for (size_t v = 0; v < m->vertex_count; v += 3) /* all three groups */
        mask0[v] = 0;
    tb_clip *walk;
    assert_int_equal(tb_clip_load(&walk, doc, m, tb_clip_find(doc, "Walk"), NULL, &err), TB_OK);
    held_clip held[4] = {held_from(walk, 0.3f, 0.7f, 0, 0), held_from(walk, 0.25f, 0.75f, 0, 0),
                         held_from(walk, 0.0f, 1.0f, 1, 0), held_from(walk, 0, 0, 0, 1)};
    const int loops[4] = {0, 1, 0, 0};
    nudge hook = {0};
    for (size_t v = 0; v < m->vertex_count && !hook.joint; v++)
        if (mask0[v])
            hook.joint = m->skin_joints[m->joints[v * (size_t)m->influences]];
    for (int flat = 0; flat < 2; flat++) {
        uint8_t *mask = flat ? flatten(m, mask0) : mask0;
        const size_t nv = m->vertex_count;
        float *pos_once = malloc((size_t)24 * nv * 3 * sizeof *pos_once);
        float *pos_each = malloc((size_t)24 * nv * 3 * sizeof *pos_each);
        assert_true(pos_once && pos_each);
        uint64_t *edges = NULL, *near = NULL;
        size_t ne = tb_measure_edges(m, &edges), nn = 0;
        near = malloc(ne * sizeof *near);
        assert_non_null(near);
        for (size_t e = 0; e < ne; e++)
            if (mask[edges[e] >> 32] || mask[edges[e] & 0xffffffffu])
                near[nn++] = edges[e];
        for (int c = 0; c < 4; c++) {
            const tb_clip *clip = &held[c].clip;
            tb_measure_desc d = {0};
            d.tail_mask = mask;
            d.loop = loops[c];
            /* the held instants, counted on the positions of every instant */
            int repeats = held_measure_is_every_instants(m, clip, d, NULL, pos_once, pos_each);
            const int least[4] = {12, 11, 18, 23};
            assert_true(repeats >= least[c]);
            assert_true(repeats < 23 || c == 3);
            held_measure_is_every_instants(m, clip, d, NULL, NULL, NULL); /* merged when flat */
            d.edges = near, d.edge_count = nn; /* runs: the edges near the tail */
            held_measure_is_every_instants(m, clip, d, NULL, NULL, NULL);
            d.edges = NULL, d.edge_count = 0;
            d.pose_hook = nudge_every_third, d.hook_user = &hook;
            d.hook_rate_hz = 40.0f, d.warmup_passes = 1;
            held_measure_is_every_instants(m, clip, d, &hook, NULL, NULL);
            held_measure_is_every_instants(m, clip, d, &hook, pos_once, pos_each);
            if (c == 3) {
                tb_measure_result r;
                d.pose_hook = NULL, d.hook_user = NULL;
                assert_int_equal(tb_measure_clip(&r, m, clip, &d, &err), TB_OK);
                assert_true(r.tip_vertex >= 0);
                assert_true(r.tip_travel == 0.0f && r.max_bone_rotation_rad == 0.0f);
                assert_true(r.body.edges > 0 && r.body.samples == 24 * r.body.edges);
                assert_true(r.seam.samples == 24 * r.seam.edges);
            }
        }
        free(near);
        free(edges);
        free(pos_once);
        free(pos_each);
        if (flat)
            free(mask);
    }
    for (int c = 0; c < 4; c++)
        free(held[c].ch), free(held[c].times);
    tb_clip_free(walk);
    free(mask0);
    json_decref(truth);
    tb_model_free(m);
    tb_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cli_measures_a_baked_clip_as_keyed),
        cmocka_unit_test(edges_are_the_unique_sorted_triangle_sides),
        cmocka_unit_test(zero_desc_means_spec_defaults),
        cmocka_unit_test(invalid_desc_is_refused_with_the_field_named),
        cmocka_unit_test(clip_adapter_maps_channels_to_skeleton_joints),
        cmocka_unit_test(clip_adapter_keeps_translation_rotation_and_scale_channels),
        cmocka_unit_test(clip_adapter_rejects_out_of_range_animation),
        cmocka_unit_test(clip_find_matches_exact_then_case_then_unique_substring),
        cmocka_unit_test(rotated_bone_stretches_known_edges_to_analytic_ratios),
        cmocka_unit_test(torn_thresholds_are_strict_and_configurable),
        cmocka_unit_test(instants_are_24_evenly_spaced_including_both_ends),
        cmocka_unit_test(rigid_variant_reads_exactly_one),
        cmocka_unit_test(tail_from_tail_bones_gives_bone_distance_and_motion),
        cmocka_unit_test(file_without_tail_bones_or_mask_measures_body_only),
        cmocka_unit_test(pose_hook_changes_the_measured_pose),
        cmocka_unit_test(pose_hook_runs_at_its_rate_and_warms_up),
        cmocka_unit_test(percentile_is_nearest_rank_on_a_known_distribution),
        cmocka_unit_test(percentile_agrees_with_sorting_on_random_data_with_ties),
        cmocka_unit_test(histogram_percentile_matches_the_exact_rank_within_its_bin),
        cmocka_unit_test(histogram_min_and_max_skip_nan),
        cmocka_unit_test(histogram_made_over_used_memory_counts_exactly),
        cmocka_unit_test(cli_measures_a_file_and_dumps_positions),
        cmocka_unit_test(corpus_xbot_walk_body_stretch_equals_an_exact_recount),
        cmocka_unit_test(corpus_soldier_walk_body_stretch_equals_an_exact_recount),
        cmocka_unit_test(synthetic_leg_weighted_tail_tears_on_walk_and_rigid_reads_one),
        cmocka_unit_test(measure_all_is_the_same_on_one_thread_and_on_four),
        cmocka_unit_test(a_shared_prep_gives_the_same_result),
        cmocka_unit_test(alike_vertices_merged_give_the_figures_of_every_vertex),
        cmocka_unit_test(held_poses_give_the_figures_of_every_instant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
