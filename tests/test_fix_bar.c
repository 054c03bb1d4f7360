/* Issue 13's bar on every fixture whose tail is found (issue 12's
 * fixtures: tailbone synth --onto, docs/synth.md): each fixture on the
 * synthetic body baked with its Walk/Sprint/Crouch, on the Xbot with its
 * walk/run, on the Soldier with its Walk/Run and on the RobotExpressive
 * with its Walking/Running, by tb_fix_run with the
 * defaults. The bar (SPEC C's chain row and issue 13): tail p99 <= 1.18,
 * max <= 1.30, nothing torn in the tail or at its seam, no body weight
 * changed, the tail swinging >= 10 degrees, every loop closing within 0.5
 * degrees. A fixture without a chain (no tail, or detection short of it:
 * test_fixtures' known_short) is skipped and counted. Every other one must
 * meet the bar unless it is listed in short_of_bar below with its reason
 * (docs/fix.md has the same list); a listed one that meets it is reported,
 * so the list only shrinks. The rows are printed as the Markdown table of
 * docs/fix.md. Real bodies skip cleanly when ../shared is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "tailbone/fix.h"
#include "tailbone/synth.h"

typedef struct body_spec {
    const char *label;
    const char *corpus; /* NULL: the synthetic plain body */
    const char *only[4];
} body_spec;

static const body_spec bodies[] = {
    {"synth:plain", NULL, {"Walk", "Sprint", "Crouch", NULL}},
    {"Xbot", "clips/Xbot_agree_run_walk.glb", {"walk", "run", NULL}},
    {"Soldier", "clips/threejs_Soldier_rexport.glb", {"Walk", "Run", NULL}},
    {"Robot", "clips/threejs_RobotExpressive.glb", {"Walking", "Running", NULL}},
};

/* body, fixture, reason (docs/fix.md, "Short of the bar") */
static const char *const short_of_bar[][3] = {
    {"synth:plain", "hang_welded_nearest",
     "welded between the thighs: the collar's thigh weights, carried into the band, pull the tail's first rings "
     "apart in Sprint (tail max 1.33)"},
    {"synth:plain", "beside_welded_leg",
     "welded beside the left thigh: the collar's left-thigh weight (0.17 after the collar ring) fades over one "
     "ring in the band (tail max 1.39-1.46)"},
};

static const char *short_reason(const char *body, const char *fixture)
{
    for (size_t i = 0; i < sizeof short_of_bar / sizeof short_of_bar[0]; i++)
        if (!strcmp(short_of_bar[i][0], body) && !strcmp(short_of_bar[i][1], fixture))
            return short_of_bar[i][2];
    return NULL;
}

static void every_found_tail_meets_the_bar_or_is_listed(void **state)
{
    (void)state;
    int rows = 0, met = 0, listed = 0, unlisted = 0, no_chain = 0;
    print_message("| body | fixture | tail p99 / max | torn (tail or seam) | swing | largest bend | fit | bar |\n"
                  "|---|---|---|---|---|---|---|---|\n");
    for (size_t bi = 0; bi < sizeof bodies / sizeof bodies[0]; bi++) {
        tb_error err = {0};
        tb_doc *body = NULL;
        if (!bodies[bi].corpus) {
            assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
        } else {
            const char *path = tbt_corpus_file(bodies[bi].corpus);
            if (!path) {
                print_message("%s: ../shared/corpus/%s absent, skipped\n", bodies[bi].label, bodies[bi].corpus);
                continue;
            }
            assert_int_equal(tb_doc_load(&body, path, NULL, &err), TB_OK);
        }
        for (int fi = 0; fi < tb_synth_fixture_count(); fi++) {
            const char *name = tb_synth_fixture_name(fi);
            if (bodies[bi].corpus && tb_synth_fixture_needs_synth_body(fi))
                continue;
            tb_doc *doc = NULL, *out = NULL;
            if (tb_synth_onto(&doc, body, name, NULL, NULL, &err) != TB_OK)
                fail_msg("%s %s: %s", bodies[bi].label, name, err.message);
            tb_fix_desc d;
            memset(&d, 0, sizeof d);
            d.only = bodies[bi].only;
            tb_fix_report rep;
            if (tb_fix_run(&out, doc, &d, &rep, &err) != TB_OK)
                fail_msg("%s %s: %s", bodies[bi].label, name, err.message);
            int chains = 0;
            for (int i = 0; i < rep.repair.appendage_count; i++)
                chains += rep.repair.appendages[i].decision == TB_DECIDE_CHAIN;
            if (!chains || !rep.stretch_count) {
                no_chain++;
                tb_fix_report_free(&rep);
                tb_doc_free(out);
                tb_doc_free(doc);
                continue;
            }
            float p99 = 0, mx = 0, torn = 0, swing = 1e9f, bend = 0;
            int ok = rep.repair.changed_outside == 0;
            for (int c = 0; c < rep.stretch_count; c++) {
                const tb_measure_result *m = &rep.stretch[c].result;
                float t = tb_fix_torn(&rep.stretch[c]);
                p99 = m->tail.p99 > p99 ? m->tail.p99 : p99;
                mx = m->tail.max > mx ? m->tail.max : mx;
                torn = t > torn ? t : torn;
                for (int k = 0; k < rep.stretch[c].bend_count; k++)
                    bend = rep.stretch[c].bend_rad[k] > bend ? rep.stretch[c].bend_rad[k] : bend;
                ok = ok && m->tail.samples > 0 && m->tail.p99 <= 1.18f && m->tail.max <= 1.30f && m->tail.torn == 0 &&
                     m->seam.torn == 0;
            }
            for (int k = 0; k < rep.bake.clip_count; k++) {
                const tb_bake_clip *bc = &rep.bake.clips[k];
                swing = bc->swing_rad < swing ? bc->swing_rad : swing;
                ok = ok && bc->swing_rad >= 10 * 0.0174533f && (!bc->looping || bc->closure_rad <= 0.5f * 0.0174533f);
            }
            const char *why = short_reason(bodies[bi].label, name);
            rows++;
            met += ok;
            print_message("| %s | %s | %.2f / %.2f | %.2f%% | %.0f° | %.0f° | %s | %s |\n", bodies[bi].label, name, p99,
                          mx, 100 * torn, swing / 0.0174533f, bend / 0.0174533f, rep.solver_fit_kept ? "fit" : "",
                          ok ? "✓" : why ? "✗ listed" : "✗");
            if (ok && why)
                print_message("%s %s: listed as short of the bar but meets it now: take it off the list\n",
                              bodies[bi].label, name);
            if (!ok && why)
                listed++;
            if (!ok && !why) {
                print_message("ERROR: %s %s misses the bar and is not listed\n", bodies[bi].label, name);
                unlisted++;
            }
            tb_fix_report_free(&rep);
            tb_doc_free(out);
            tb_doc_free(doc);
        }
        tb_doc_free(body);
    }
    print_message("%d found tails: %d meet the bar, %d listed short of it, %d not listed; %d fixtures without a "
                  "chain skipped\n",
                  rows, met, listed, unlisted, no_chain);
    assert_int_equal(unlisted, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_found_tail_meets_the_bar_or_is_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
