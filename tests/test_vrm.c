/* tb_vrm_springs (src/passes/vrm_spring.c, vrm_fit.c): the tail written as
 * VRMC_springBone joints, their settings fitted per joint to our baked
 * motion. The three-vrm check of the written file is tests/node/vrm.test.mjs;
 * here: the fit runs, brings its model of the runtime nearer our motion,
 * swings the tail about as far as ours,
 * writes settings inside their ranges and unit node rotations, and a file
 * without clips keeps the analytic settings. */
#include <math.h>
#include <string.h>

#include "gltf/doc_json.h"
#include "support.h"
#include "tailbone/appendage.h"
#include "tailbone/synth.h"
#include "tailbone/vrm.h"

static tb_doc *fixed_character(void)
{
    tb_doc *doc = NULL;
    tb_error err;
    tb_synth_desc sd = {0};
    sd.units = TB_SYNTH_UNITS_M;
    assert_int_equal(tb_synth_build(&doc, "tail_leg", &sd, NULL, &err), TB_OK);
    tb_appendage_report ar;
    assert_int_equal(tb_appendage_fix(&ar, doc, NULL, &err), TB_OK);
    tb_appendage_report_free(&ar);
    return doc;
}

static json_t *joints_of(tb_doc *doc)
{
    json_t *sb = json_object_get(json_object_get(tb_doc_json(doc), "extensions"), "VRMC_springBone");
    json_t *springs = json_object_get(sb, "springs");
    assert_int_equal(json_array_size(springs), 1);
    return json_object_get(json_array_get(springs, 0), "joints");
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static void the_fit_brings_the_runtime_nearer_our_motion(void **s)
{
    (void)s;
    tb_doc *doc = fixed_character();
    tb_vrm_report rep;
    tb_error err;
    if (tb_vrm_springs(doc, NULL, 60.0f, &rep, &err) != TB_OK)
        fail_msg("%s: %s", err.where, err.message);
    assert_int_equal(rep.chains, 1);
    assert_true(rep.fit_clips >= 1);
    /* the model of the runtime, analytic start vs fitted, mean tip distance */
    assert_true(rep.fit_tip_before_m > 0 && rep.fit_before_m > 0);
    /* measured (docs/vrm.md): all tips 0.157 -> 0.049 m, last tip 0.247 -> 0.085 m */
    assert_true(rep.fit_after_m < 0.5f * rep.fit_before_m);
    assert_true(rep.fit_tip_after_m < 0.6f * rep.fit_tip_before_m);
    /* and it swings like ours: the last tip's swing 0.234 m against ours 0.238 m */
    assert_true(rep.fit_swing_baked_m > 0);
    assert_true(rep.fit_swing_after_m >= 0.75f * rep.fit_swing_baked_m);
    assert_true(rep.fit_evaluations > 0 && rep.fit_evaluations <= 2100);
    json_t *joints = joints_of(doc), *nodes = json_object_get(tb_doc_json(doc), "nodes");
    size_t n = json_array_size(joints);
    assert_true(n >= 3);
    for (size_t i = 0; i + 1 < n; i++) {
        json_t *j = json_array_get(joints, i);
        assert_true(num(j, "stiffness") > 0);
        assert_true(num(j, "dragForce") >= 0 && num(j, "dragForce") <= 0.95 + 1e-6);
        assert_true(num(j, "gravityPower") >= 0);
        json_t *q = json_object_get(json_array_get(nodes, (size_t)num(j, "node")), "rotation");
        double len = 0;
        for (size_t k = 0; k < 4; k++)
            len += json_number_value(json_array_get(q, k)) * json_number_value(json_array_get(q, k));
        assert_true(fabs(sqrt(len) - 1) < 1e-4);
    }
    /* the last joint is the chain's end: a node and nothing else */
    assert_int_equal(json_object_size(json_array_get(joints, n - 1)), 1);
    tb_doc_free(doc);
}

static void without_clips_the_analytic_settings_stay(void **s)
{
    (void)s;
    tb_doc *doc = fixed_character();
    tb_error err;
    json_object_del(tb_doc_json(doc), "animations");
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    tb_vrm_report rep;
    if (tb_vrm_springs(doc, NULL, 60.0f, &rep, &err) != TB_OK)
        fail_msg("%s: %s", err.where, err.message);
    assert_int_equal(rep.chains, 1);
    assert_int_equal(rep.fit_clips, 0);
    json_t *joints = joints_of(doc);
    for (size_t i = 0; i + 1 < json_array_size(joints); i++) {
        json_t *j = json_array_get(joints, i);
        assert_true(num(j, "gravityPower") == 0); /* gravity stays folded into the rest */
        assert_true(num(j, "stiffness") > 0 && num(j, "dragForce") > 0);
    }
    tb_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_fit_brings_the_runtime_nearer_our_motion),
        cmocka_unit_test(without_clips_the_analytic_settings_stay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
