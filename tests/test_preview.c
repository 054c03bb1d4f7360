/* What the preview page computes (web/preview_core.c), run natively: the
 * page's clip figures are tailbone measure's, a bind pose reads 1.0 and grey,
 * the colour scale marks tears, the live spring runs and its parameters
 * change it, and bad input is refused. The same file runs in the browser as
 * WebAssembly (tests/node/preview.test.mjs compares the two). */
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/stretch_hist.h"
#include "preview_model.h"
#include "tailbone/fix.h"
#include "tailbone/measure.h"
#include "tailbone/synth.h"

typedef struct fox {
    tb_doc *doc;
    tb_model *m;
    tb_pv *pv;
    tb_clip *clips[2];
    int idx[2];
} fox;

/* The synthetic leg-weighted fox repaired by fix (blend zone pinned: no
 * search), as the page gets it. */
static void fox_load(fox *f)
{
    memset(f, 0, sizeof *f);
    tb_error err = {0};
    tb_doc *broken = NULL;
    assert_int_equal(tb_synth_build(&broken, "tail_leg", NULL, NULL, &err), TB_OK);
    tb_fix_desc fd;
    memset(&fd, 0, sizeof fd);
    fd.repair.blend_zone = 0.5f;
    tb_fix_report rep;
    memset(&rep, 0, sizeof rep);
    assert_int_equal(tb_fix_run(&f->doc, broken, &fd, &rep, &err), TB_OK);
    tb_fix_report_free(&rep);
    tb_doc_free(broken);
    assert_int_equal(tb_model_load(&f->m, f->doc, -1, &err), TB_OK);
    f->pv = tbt_pv_from_model(f->m, NULL);
    assert_non_null(f->pv);
    const char *names[2] = {"Walk", "Sprint"};
    for (int k = 0; k < 2; k++) {
        int a = tb_clip_find(f->doc, names[k]);
        assert_true(a >= 0);
        assert_int_equal(tb_clip_load(&f->clips[k], f->doc, f->m, a, NULL, &err), TB_OK);
        f->idx[k] = tbt_pv_add_clip(f->pv, f->clips[k]);
        assert_int_equal(f->idx[k], k);
    }
    assert_true(tbt_pv_spring(f->pv, f->m) >= 1);
}

static void fox_free(fox *f)
{
    for (int k = 0; k < 2; k++)
        tb_clip_free(f->clips[k]);
    tb_pv_free(f->pv);
    tb_model_free(f->m);
    tb_doc_free(f->doc);
}

static void clip_figures_equal_tailbone_measure(void **state)
{
    (void)state;
    fox f;
    fox_load(&f);
    for (int k = 0; k < 2; k++) {
        tb_measure_result r;
        tb_measure_desc d;
        memset(&d, 0, sizeof d);
        tb_error err = {0};
        assert_int_equal(tb_measure_clip(&r, f.m, f.clips[k], &d, &err), TB_OK);
        float s[TB_PV_STAT_COUNT];
        assert_int_equal(tb_pv_clip_stats(f.pv, f.idx[k], 24, s), 0);
        assert_true(r.tail.edges > 0 && r.body.edges > 0);
        assert_int_equal((size_t)s[TB_PV_TAIL_EDGES], r.tail.edges);
        assert_int_equal((size_t)s[TB_PV_BODY_EDGES], r.body.edges);
        /* the same samples, so the same order statistics: min and max
         * exactly; p95/p99 the page selects exactly, measure reads from its
         * histogram (tailbone/measure.h, "Percentiles"): the same bin,
         * within half its width, the same two decimals */
        const float page[4] = {s[TB_PV_TAIL_P95], s[TB_PV_TAIL_P99], s[TB_PV_BODY_P95], s[TB_PV_BODY_P99]};
        const float meas[4] = {r.tail.p95, r.tail.p99, r.body.p95, r.body.p99};
        for (int i = 0; i < 4; i++) {
            assert_int_equal(tb__hist_bin(meas[i]), tb__hist_bin(page[i]));
            assert_true(fabs((double)meas[i] - page[i]) <= 0.5 * tb__hist_bin_width(page[i]));
            char a[32], b[32];
            snprintf(a, sizeof a, "%.2f", (double)page[i]);
            snprintf(b, sizeof b, "%.2f", (double)meas[i]);
            assert_string_equal(a, b);
        }
        assert_float_equal(s[TB_PV_TAIL_MAX], r.tail.max, 1e-5);
        assert_float_equal(s[TB_PV_TAIL_MIN], r.tail.min, 1e-5);
        assert_float_equal(s[TB_PV_BODY_MAX], r.body.max, 1e-5);
        assert_float_equal(s[TB_PV_TAIL_TORN], r.tail.torn_frac, 1e-6);
        assert_float_equal(s[TB_PV_BODY_TORN], r.body.torn_frac, 1e-6);
        assert_float_equal(tb_pv_world_scale(f.pv), r.world_scale, 1e-7);
    }
    fox_free(&f);
}

static void bind_pose_reads_one_and_grey(void **state)
{
    (void)state;
    fox f;
    fox_load(&f);
    tb_pv_frame(f.pv, -1, 0, 0, 0); /* no clip: the stored pose = bind pose here */
    const float *s = tb_pv_stats(f.pv);
    assert_float_equal(s[TB_PV_TAIL_P99], 1.0f, 1e-4);
    assert_float_equal(s[TB_PV_TAIL_MAX], 1.0f, 1e-4);
    assert_float_equal(s[TB_PV_BODY_MAX], 1.0f, 1e-4);
    assert_float_equal(s[TB_PV_TAIL_TORN], 0, 0);
    float grey[3];
    tb_pv_color(1.0f, grey);
    const float *col = tb_pv_colors(f.pv);
    float worst = 0;
    for (int v = 0; v < tb_pv_vertex_count(f.pv); v++)
        for (int i = 0; i < 3; i++)
            worst = fmaxf(worst, fabsf(col[v * 3 + i] - grey[i]));
    assert_true(worst < 0.05f);
    /* a walking pose stretches the body somewhere: colours leave grey */
    tb_pv_frame(f.pv, f.idx[0], 0.25f, 0, 0);
    worst = 0;
    for (int v = 0; v < tb_pv_vertex_count(f.pv); v++)
        for (int i = 0; i < 3; i++)
            worst = fmaxf(worst, fabsf(col[v * 3 + i] - grey[i]));
    assert_true(worst > 0.2f);
    fox_free(&f);
}

static void colour_scale_marks_tears(void **state)
{
    (void)state;
    float grey[3], c[3];
    tb_pv_color(1.0f, grey);
    assert_true(fabsf(grey[0] - grey[2]) < 0.1f); /* neutral */
    tb_pv_color(1.51f, c); /* torn, stretched: bright yellow */
    assert_true(c[0] == 1 && c[1] == 1 && c[2] == 0);
    tb_pv_color(0.66f, c); /* torn, compressed: bright cyan */
    assert_true(c[0] == 0 && c[1] == 1 && c[2] == 1);
    tb_pv_color(1.3f, c); /* stretched: warm */
    assert_true(c[0] > c[2] + 0.3f);
    tb_pv_color(0.8f, c); /* compressed: cold */
    assert_true(c[2] > c[0] + 0.3f);
    float prev = grey[0]; /* redder the more it stretches */
    for (float r = 1.05f; r <= 1.5f; r += 0.05f) {
        tb_pv_color(r, c);
        assert_true(c[0] >= prev - 1e-6f);
        prev = c[0];
    }
}

static void live_spring_runs_and_parameters_change_it(void **state)
{
    (void)state;
    fox f;
    fox_load(&f);
    int links = tb_pv_link_count(f.pv), n = 120;
    assert_true(links >= 2);
    float *a = malloc(sizeof(float) * 3 * (size_t)links * (size_t)n), *b = malloc(sizeof(float) * 3 * (size_t)links * (size_t)n);
    assert_int_equal(tb_pv_tips(f.pv, f.idx[0], 60, n, a), links * 3);
    float len = tb_pv_tail_length(f.pv);
    assert_true(len > 0);
    float p[12] = {2.0f, 0.5f, 0.3f, 6.0f, 0.8727f, 0, 12, 0.5236f, 0, 1, 0.025f, 8};
    assert_int_equal(tb_pv_set_params(f.pv, p), 0);
    assert_int_equal(tb_pv_tips(f.pv, f.idx[0], 60, n, b), links * 3);
    float change = 0;
    for (int i = 0; i < 3 * links * n; i++) {
        assert_true(isfinite(a[i]) && isfinite(b[i]));
        change = fmaxf(change, fabsf(a[i] - b[i]));
    }
    assert_true(change > 0.05f * len);
    /* live frames: the tail moves with the spring and stays whole */
    tb_pv_reset(f.pv);
    for (int k = 0; k < 30; k++)
        tb_pv_frame(f.pv, f.idx[1], (float)k / 60.0f, 1, 1.0f / 60.0f);
    const float *s = tb_pv_stats(f.pv);
    assert_true(isfinite(s[TB_PV_TAIL_MAX]) && s[TB_PV_TAIL_MAX] < 3.0f);
    /* a refused value is reported */
    p[5] = 2.0f; /* rest_curve out of [0, 1] */
    assert_int_equal(tb_pv_set_params(f.pv, p), -1);
    free(a);
    free(b);
    fox_free(&f);
}

static void bad_input_is_refused(void **state)
{
    (void)state;
    /* two joints, one triangle over three vertices */
    int parents[2] = {-1, 0}, bad_parents[2] = {-1, 1};
    const char names[] = "Hips\0Tail_1\0";
    float rest[20] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 1, 1, 1, 1};
    float id[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1};
    uint8_t has_ibm[2] = {1, 1};
    int skin[2] = {0, 1};
    float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0}, nrm[9] = {0};
    uint16_t joints[12] = {0};
    float weights[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    uint32_t tri[3] = {0, 1, 2}, bad_tri[3] = {0, 1, 3};
    tb_pv *c = tb_pv_new(2, parents, names, rest, id, has_ibm, 2, skin, id, 3, pos, nrm, 4, joints, weights, 1, tri,
                         NULL, 1.0f);
    assert_non_null(c);
    assert_null(tb_pv_new(2, bad_parents, names, rest, id, has_ibm, 2, skin, id, 3, pos, nrm, 4, joints, weights, 1,
                          tri, NULL, 1.0f));
    assert_null(tb_pv_new(2, parents, names, rest, id, has_ibm, 2, skin, id, 3, pos, nrm, 4, joints, weights, 1,
                          bad_tri, NULL, 1.0f));
    uint16_t bad_joints[12] = {5};
    assert_null(tb_pv_new(2, parents, names, rest, id, has_ibm, 2, skin, id, 3, pos, nrm, 4, bad_joints, weights, 1,
                          tri, NULL, 1.0f));
    int cj = 7, cp = 1, ci = 0, ck = 1;
    float t = 0, q[4] = {0, 0, 0, 1};
    assert_int_equal(tb_pv_add_clip(c, 0, 1, &cj, &cp, &ci, &ck, &t, q), -1); /* joint 7 of 2 */
    cj = 1;
    assert_int_equal(tb_pv_add_clip(c, 0, 1, &cj, &cp, &ci, &ck, &t, q), 0);
    tb_pv_frame(c, 0, 0, 0, 0); /* one triangle, all on joint 0, bind pose */
    assert_float_equal(tb_pv_stats(c)[TB_PV_BODY_MAX], 1.0f, 1e-6);
    tb_pv_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clip_figures_equal_tailbone_measure),
        cmocka_unit_test(bind_pose_reads_one_and_grey),
        cmocka_unit_test(colour_scale_marks_tears),
        cmocka_unit_test(live_spring_runs_and_parameters_change_it),
        cmocka_unit_test(bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
