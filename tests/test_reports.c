/* The public JSON text of the reports and of the synthetic truth
 * (tb_*_json_text, tb_synth_build's char **truth): the same JSON the CLI
 * writes from the library's trees (passes/report_json.h), and the retarget
 * report's C struct against its JSON. Synthetic characters only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/report_json.h"
#include "synth/synth_json.h"
#include "support.h"
#include "tailbone/fix.h"
#include "tailbone/retarget.h"
#include "tailbone/synth.h"

static json_t *parse(const char *text)
{
    assert_non_null(text);
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("not JSON: %s (line %d)", e.text, e.line);
    return j;
}

/* the truth as text is the tree's text, for a variant and a fixture */
static void synth_truth_text_is_the_tree(void **state)
{
    tb_error err = {0};
    tb_doc *a = NULL, *b = NULL;
    char *text = NULL;
    json_t *tree = NULL;
    assert_int_equal(tb_synth_build(&a, "tail_leg", NULL, &text, &err), TB_OK);
    assert_int_equal(tb_synth_build_json(&b, "tail_leg", NULL, &tree, &err), TB_OK);
    char *want = json_dumps(tree, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    assert_string_equal(text, want);
    json_t *back = parse(text);
    assert_true(json_equal(back, tree));
    assert_non_null(json_object_get(back, "appendages"));
    json_decref(back);
    free(want);
    free(text);
    json_decref(tree);

    tb_doc *c = NULL, *d = NULL;
    text = NULL;
    tree = NULL;
    assert_int_equal(tb_synth_onto(&c, a, "hang_shell_leg", NULL, &text, &err), TB_OK);
    assert_int_equal(tb_synth_onto_json(&d, a, "hang_shell_leg", NULL, &tree, &err), TB_OK);
    want = json_dumps(tree, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    assert_string_equal(text, want);
    free(want);
    free(text);
    json_decref(tree);
    /* no truth asked: none made, the doc still built */
    tb_doc *e = NULL;
    assert_int_equal(tb_synth_build(&e, "cape", NULL, NULL, &err), TB_OK);
    assert_non_null(e);
    /* an unknown variant: the error, and no text */
    text = (char *)"x";
    tb_doc *f = NULL;
    assert_int_equal(tb_synth_build(&f, "no_such_variant", NULL, &text, &err), TB_ERR_ARG);
    assert_null(text);
    assert_null(f);
    tb_doc_free(a), tb_doc_free(b), tb_doc_free(c), tb_doc_free(d), tb_doc_free(e);
}

/* fix's and detection's text: the trees the CLI writes, indent or not */
static void fix_report_text_is_the_tree(void **state)
{
    tb_error err = {0};
    tb_doc *in = NULL, *out = NULL;
    assert_int_equal(tb_synth_build(&in, "tail_leg", NULL, NULL, &err), TB_OK);
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.no_bake = 1;
    tb_fix_report rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(tb_fix_run(&out, in, &d, &rep, &err), TB_OK);
    for (int indent = 0; indent <= 2; indent += 2) {
        json_t *tree = tb_fix_report_json(&rep);
        char *want = json_dumps(tree, (indent ? JSON_INDENT(indent) : JSON_COMPACT) | JSON_REAL_PRECISION(6));
        char *text = tb_fix_report_json_text(&rep, indent);
        assert_string_equal(text, want);
        assert_int_equal(strchr(text, '\n') != NULL, indent > 0);
        json_t *back = parse(text);
        assert_true(json_is_true(json_object_get(back, "changed")));
        assert_true(json_array_size(json_object_get(back, "appendages")) >= 1);
        assert_null(json_object_get(back, "retarget")); /* no libraries */
        json_decref(back);
        free(text), free(want);
        json_decref(tree);

        tree = tb_appendage_report_json(&rep.repair);
        want = json_dumps(tree, (indent ? JSON_INDENT(indent) : JSON_COMPACT) | JSON_REAL_PRECISION(6));
        text = tb_appendage_report_json_text(&rep.repair, indent);
        assert_string_equal(text, want);
        free(text), free(want);
        json_decref(tree);
    }
    tb_fix_report_free(&rep);
    tb_doc_free(in);
    tb_doc_free(out);
}

/* the retarget report: the struct's figures are the JSON's, a figure with
 * no sample is null, and fix carries the same report */
static void retarget_report_struct_and_json(void **state)
{
    tb_error err = {0};
    tb_doc *ch = NULL, *lib = NULL;
    assert_int_equal(tb_synth_build(&ch, "tail_leg", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_build(&lib, "plain", NULL, NULL, &err), TB_OK);
    tb_retarget_desc d;
    memset(&d, 0, sizeof d);
    const char *only[2] = {"Walk", "Idle"};
    d.only = only;
    d.only_count = 2;
    tb_retarget_report rep;
    assert_int_equal(tb_retarget_docs(ch, &lib, 1, &d, &rep, &err), TB_OK);
    assert_int_equal(rep.clip_count, 2);
    assert_true(rep.tail_count >= 1); /* tail_leg's tail, found for the ground's mask */
    assert_true(rep.height > 0 && rep.roles > 0);
    char *text = tb_retarget_report_json_text(&rep, 2);
    json_t *j = parse(text);
    json_t *clips = json_object_get(j, "clips");
    assert_int_equal(json_array_size(clips), 2);
    for (int i = 0; i < rep.clip_count; i++) {
        json_t *c = json_array_get(clips, (size_t)i), *g = json_object_get(c, "grounding");
        assert_string_equal(json_string_value(json_object_get(c, "name")), rep.clips[i].name);
        assert_int_equal(json_integer_value(json_object_get(c, "frames")), rep.clips[i].frame_count);
        assert_true(rep.clips[i].frame_count > 1);
        assert_float_equal(json_real_value(json_object_get(g, "lift_max")), rep.clips[i].lift_max,
                           1e-5 * (1 + fabs(rep.clips[i].lift_max)));
        json_t *fm = json_object_get(g, "foot_min_y_low");
        assert_true(isfinite(rep.clips[i].foot_min_y_low) ? json_is_real(fm) : json_is_null(fm));
    }
    assert_int_equal(json_array_size(json_object_get(j, "detected_tails")), (size_t)rep.tail_count);
    assert_float_equal(json_real_value(json_object_get(json_object_get(j, "placement"), "ground_offset_y")),
                       rep.placement.ground_offset_y, 1e-5);
    json_decref(j);
    free(text);
    /* a figure with no sample is null, not 0 */
    rep.clips[0].clearance_min = NAN;
    j = tb_retarget_report_json(&rep);
    assert_true(json_is_null(json_object_get(json_object_get(json_array_get(json_object_get(j, "clips"), 0),
                                                             "grounding"), "clearance_min")));
    json_decref(j);
    tb_retarget_report_free(&rep);
    assert_int_equal(rep.clip_count, 0);
    tb_retarget_report_free(&rep); /* twice is safe */
    /* a failure leaves a zeroed report */
    const char *none[1] = {"NoSuchClip"};
    d.only = none;
    d.only_count = 1;
    memset(&rep, 0x5a, sizeof rep);
    assert_int_equal(tb_retarget_docs(ch, &lib, 1, &d, &rep, &err), TB_ERR_ARG);
    assert_int_equal(rep.clip_count, 0);
    assert_null(rep.clips);
    tb_doc_free(ch);
    tb_doc_free(lib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(synth_truth_text_is_the_tree),
        cmocka_unit_test(fix_report_text_is_the_tree),
        cmocka_unit_test(retarget_report_struct_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
