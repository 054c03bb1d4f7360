/* The repair leaves the body as it was, on the real characters (issue 20:
 * the corpus body-stretch checks compared with the input's own figures).
 *
 * The Wolf and the Bone Demon get the Xbot's walk and run (tb_retarget_docs,
 * as `fix --clips` transfers them), written and read back: that file, as
 * `tailbone retarget` writes it, is the input of tb_fix_run. Every vertex whose weights differ between input and output
 * (read back by joint name, so the output's new Tail_* joints and their
 * indices do not matter) is what the repair touched; every other vertex is
 * the body. For every baked clip, the body's stretch (SPEC C: edges with
 * neither end touched) measured on the input and on the output, with the
 * same mask and the same instants, must be the same figures exactly: samples,
 * torn count, p95, p99, min and max; and since both bodies are rigid pieces
 * (their stretch reads 1.00 whatever the pose), the body's skinned positions
 * at the 24 instants must be the input's too (within 1e-6 H). The repair may
 * change only what it repaired; a bake that moved a body joint, or a weight change leaking
 * onto body skin, shows here as different figures or a touched vertex far
 * from the tail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_cmp.h"
#include "support.h"
#include "tailbone/clip.h"
#include "tailbone/fix.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"
#include "tailbone/retarget.h"

static void body_is_the_inputs(const char *character)
{
    tb_error err = {0};
    tb_doc *in = NULL, *lib = NULL, *out = NULL;
    tbt_path char_buf, lib_buf;
    const char *char_path = tbt_corpus_file(&char_buf, character);
    const char *lib_path = tbt_corpus_file(&lib_buf, "clips/Xbot_agree_run_walk.glb");
    if (!char_path || !lib_path)
        tbt_skip();
    assert_int_equal(tb_doc_load(&in, char_path, NULL, &err), TB_OK);
    assert_int_equal(tb_doc_load(&lib, lib_path, NULL, &err), TB_OK);
    static const char *const only[] = {"walk", "run", NULL};
    tb_retarget_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.only = only;
    rd.only_count = 2;
    tb_doc *libs[1] = {lib};
    if (tb_retarget_docs(in, libs, 1, &rd, NULL, &err) != TB_OK)
        fail_msg("%s: transfer: %s", character, err.message);
    /* written and read back, as `tailbone retarget` then `tailbone fix` do */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", tbt_tmp_path(strstr(character, "Wolf") ? "body_wolf.glb" : "body_demon.glb"));
    assert_int_equal(tb_doc_save(in, tmp, &err), TB_OK);
    tb_doc_free(in);
    assert_int_equal(tb_doc_load(&in, tmp, NULL, &err), TB_OK);
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    tb_fix_report rep;
    if (tb_fix_run(&out, in, &d, &rep, &err) != TB_OK)
        fail_msg("%s: fix: %s", character, err.message);
    int chains = 0;
    for (int i = 0; i < rep.repair.appendage_count; i++)
        chains += rep.repair.appendages[i].decision == TB_DECIDE_CHAIN;
    print_message("%s: %d chains of %d appendages (%s), %d clips baked, %d measured\n", character, chains, rep.repair.appendage_count, rep.repair.message, rep.bake.clip_count, rep.stretch_count);
    assert_true(rep.stretch_count >= 2);

    tb_model *mi = NULL, *mo = NULL;
    assert_int_equal(tb_model_load(&mi, in, -1, &err), TB_OK);
    assert_int_equal(tb_model_load(&mo, out, -1, &err), TB_OK);
    assert_int_equal(mi->vertex_count, mo->vertex_count);
    size_t repaired = 0;
    uint8_t *mask = tbt_repaired_mask(mi, mo, &repaired);
    /* the tail was repaired, and it is not most of the character */
    assert_true(repaired > 0 && repaired < mi->vertex_count / 2);

    for (int c = 0; c < rep.stretch_count; c++) {
        tb_measure_result r[2];
        const size_t nv = mi->vertex_count;
        float *pos[2];
        for (int side = 0; side < 2; side++) {
            pos[side] = malloc((size_t)24 * nv * 3 * sizeof(float));
            assert_non_null(pos[side]);
        }
        tbt_measure_in_out(in, out, mi, mo, &rep, c, mask, pos, r);
        const tb_stretch_stats *a = &r[0].body, *b = &r[1].body;
        /* body positions: the output's against the input's, and how far the
         * clip moves them (the comparison must not be of two still poses) */
        const double hw = (double)mi->height * (double)r[0].world_scale;
        double apart = 0, moved = 0;
        for (int k = 0; k < 24; k++)
            for (size_t v = 0; v < nv; v++) {
                if (mask[v])
                    continue;
                for (int x = 0; x < 3; x++) {
                    size_t i = ((size_t)k * nv + v) * 3 + (size_t)x;
                    double dd = fabs((double)pos[1][i] - (double)pos[0][i]) / hw;
                    double mv = fabs((double)pos[0][i] - (double)pos[0][v * 3 + (size_t)x]) / hw;
                    apart = dd > apart ? dd : apart;
                    moved = mv > moved ? mv : moved;
                }
            }
        print_message("%s %s: %zu vertices repaired; body %zu samples, p99 %.4f / %.4f, max %.4f / %.4f, "
                      "torn %zu / %zu (input / output); body positions %.1e H apart, the clip moves them %.3f H\n",
                      character, rep.stretch[c].clip, repaired, b->samples, (double)a->p99, (double)b->p99,
                      (double)a->max, (double)b->max, a->torn, b->torn, apart, moved);
        assert_true(a->samples > 1000);
        assert_true(moved > 0.05);
        assert_true(apart <= 1e-6);
        free(pos[0]);
        free(pos[1]);
        assert_int_equal(a->edges, b->edges);
        assert_int_equal(a->samples, b->samples);
        assert_int_equal(a->torn, b->torn);
        assert_float_equal(a->p95, b->p95, 1e-6f);
        assert_float_equal(a->p99, b->p99, 1e-6f);
        assert_float_equal(a->min, b->min, 1e-6f);
        assert_float_equal(a->max, b->max, 1e-6f);
    }
    free(mask);
    tb_model_free(mi);
    tb_model_free(mo);
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(lib);
    tb_doc_free(in);
}

static void wolf_repair_leaves_the_bodys_stretch_as_the_inputs(void **state)
{
    (void)state;
    body_is_the_inputs("characters/banter_Wolf.glb");
}

static void bone_demon_repair_leaves_the_bodys_stretch_as_the_inputs(void **state)
{
    (void)state;
    body_is_the_inputs("characters/banter_Bone_Demon.glb");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wolf_repair_leaves_the_bodys_stretch_as_the_inputs),
        cmocka_unit_test(bone_demon_repair_leaves_the_bodys_stretch_as_the_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
