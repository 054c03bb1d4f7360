/* Compute once, apply many (issue 13, item 2): tb_fix_run detects and
 * transfers once; the blend search re-applies only the weights and the
 * solver fit only the bake (then measures and searches again) on the
 * document as it was before the first bake. These tests hold that to the
 * whole job it replaced (the reference below runs it): when the fit is kept, the written file and every
 * figure of the report equal those of a fresh whole job run with the fitted
 * solver parameters given (what the fit's second job did); when it is not
 * kept, those of a whole job without the fit. And no case runs the job
 * twice (full_reruns 0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "model_cmp.h"
#include "passes/report_json.h"
#include "model/mesh_internal.h"
#include "passes/weights_internal.h"
#include "support.h"
#include "tailbone/fix.h"
#include "tailbone/spring.h"
#include "tailbone/synth.h"

static uint8_t *doc_bytes(const tb_doc *doc, size_t *size)
{
    uint8_t *b = NULL;
    tb_error err;
    assert_int_equal(tb_doc_write_memory(doc, &b, size, &err), TB_OK);
    return b;
}

/* The report as JSON text without the fit's own record (the reference job
 * did not fit: it was given the parameters). */
static char *report_text(const tb_fix_report *rep)
{
    json_t *j = tb_fix_report_json(rep);
    assert_non_null(j);
    json_object_del(j, "solver_fit");
    json_object_del(j, "bakes");
    char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    assert_non_null(s);
    return s;
}

typedef struct fit_case {
    const char *body;    /* NULL: synth:plain; else a corpus file */
    const char *fixture; /* tailbone synth --onto */
    const char *only[8];
    const char *library; /* corpus file whose clips are transferred, or NULL */
} fit_case;

static int count_stage(const char *stage, const char *name)
{
    return !strcmp(stage, name);
}

typedef struct stages {
    int repair, transfer, bake;
} stages;

static void on_stage(void *user, const char *stage)
{
    stages *s = user;
    s->repair += count_stage(stage, "repair");
    s->transfer += count_stage(stage, "transfer clips");
    s->bake += count_stage(stage, "bake");
}

/* Runs one case; returns 1 when it ran (0: corpus absent). *fit_kept and
 * *fit_tried receive what the fit did. */
static int check_case(const fit_case *c, int *fit_tried, int *fit_kept)
{
    tb_error err = {0};
    tb_doc *body = NULL, *lib = NULL;
    if (!c->body) {
        assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    } else {
        tbt_path path_buf;
        const char *path = tbt_corpus_file(&path_buf, c->body);
        if (!path)
            return 0;
        assert_int_equal(tb_doc_load(&body, path, NULL, &err), TB_OK);
    }
    if (c->library) {
        tbt_path path_buf;
        const char *path = tbt_corpus_file(&path_buf, c->library);
        if (!path) {
            tb_doc_free(body);
            return 0;
        }
        assert_int_equal(tb_doc_load(&lib, path, NULL, &err), TB_OK);
    }
    tb_doc *in = NULL;
    assert_int_equal(tb_synth_onto(&in, body, c->fixture, NULL, NULL, &err), TB_OK);
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.only = c->only;
    if (lib) {
        d.libraries = &lib;
        d.library_count = 1;
    }
    stages st = {0};
    d.progress = on_stage;
    d.progress_user = &st;
    tb_doc *out = NULL;
    tb_fix_report rep;
    if (tb_fix_run(&out, in, &d, &rep, &err) != TB_OK)
        fail_msg("%s: %s", c->fixture, err.message);
    /* detection and transfer once, whatever the fit did; a bake more for it */
    assert_int_equal(rep.full_reruns, 0);
    assert_int_equal(st.repair, 1);
    assert_int_equal(st.transfer, lib ? 1 : 0);
    assert_int_equal(st.bake, 1 + rep.solver_fit_tried);
    assert_int_equal(rep.bakes, st.bake);
    *fit_tried = rep.solver_fit_tried;
    *fit_kept = rep.solver_fit_kept;

    /* the reference: a whole job from a fresh copy, given what the fit chose */
    tb_fix_desc r = d;
    r.progress = NULL;
    r.no_solver_fit = 1;
    if (rep.solver_fit_kept) {
        tb_spring_params *p = &r.bake.spring.params;
        if (rep.fit_bend_limit_rad > 0)
            p->bend_limit_rad = rep.fit_bend_limit_rad;
        if (rep.fit_rest_curve >= 0)
            p->rest_curve = rep.fit_rest_curve, r.rest_curve_given = 1;
        if (rep.fit_carry_rad >= 0)
            p->carry_rad = rep.fit_carry_rad > 0 ? rep.fit_carry_rad : TB_SPRING_ZERO;
        if (rep.fit_bind_limit_rad > 0)
            p->bind_limit_rad = rep.fit_bind_limit_rad;
        p->contact_keeps_limit = 1; /* the fit always sets it */
    }
    tb_doc *ref = NULL;
    tb_fix_report rr;
    if (tb_fix_run(&ref, in, &r, &rr, &err) != TB_OK)
        fail_msg("%s (reference): %s", c->fixture, err.message);
    size_t n0, n1;
    uint8_t *b0 = doc_bytes(out, &n0), *b1 = doc_bytes(ref, &n1);
    char *j0 = report_text(&rep), *j1 = report_text(&rr);
    print_message("%s %s: fit %s, %zu bytes, %s, report %s\n", c->body ? c->body : "synth:plain", c->fixture,
                  rep.solver_fit_tried ? (rep.solver_fit_kept ? "kept" : "tried, not kept") : "not tried", n0,
                  n0 == n1 && !memcmp(b0, b1, n0) ? "the same bytes as the whole job" : "DIFFERENT from the whole job",
                  strcmp(j0, j1) ? "DIFFERENT" : "the same");
    assert_int_equal(n0, n1);
    assert_memory_equal(b0, b1, n0);
    if (strcmp(j0, j1)) { /* where they part, for the log */
        size_t k = 0;
        while (j0[k] && j0[k] == j1[k])
            k++;
        size_t from = k > 120 ? k - 120 : 0;
        print_message("first difference at %zu:\n  once:  %.240s\n  whole: %.240s\n", k, j0 + from, j1 + from);
    }
    assert_string_equal(j0, j1);
    free(b0);
    free(b1);
    free(j0);
    free(j1);
    tb_fix_report_free(&rep);
    tb_fix_report_free(&rr);
    tb_doc_free(out);
    tb_doc_free(ref);
    tb_doc_free(in);
    tb_doc_free(body);
    tb_doc_free(lib);
    return 1;
}

static void solver_fit_rebakes_in_place_and_writes_what_a_whole_job_writes(void **state)
{
    (void)state;
    static const fit_case cases[] = {
        /* curled in its bind pose: the fit is kept (restCurve 1, carry 0) */
        {NULL, "curl_shell_nearest", {"Walk", "Sprint", "Crouch", NULL}, NULL},
        /* a welded tail curled up over the back: the fit is kept. The
         * welded low-poly back_lowpoly_nearest was this case until its band
         * vertices the chain does not reach kept their own weights
         * (docs/fix.md, "Do no harm at the seam"): its search now meets the
         * bar without a fit */
        {NULL, "up_welded_hips+vest", {"Walk", "Sprint", "Crouch", NULL}, NULL},
        /* the fit tried and not kept (the first result is put back): a
         * welded tail beside a thigh, Walk and Crouch. beside_welded_leg
         * with all six clips, then back_lowpoly_nearest, then the Soldier's
         * hang_welded_nearest (Walk, Run), then its beside_welded_leg (Run)
         * were this case until the weights, or the search's choice, tore
         * less (docs/fix.md session 15, second pass: the search scores torn
         * samples, and the collar-carried try) */
        {NULL, "beside_welded_leg", {"Walk", "Crouch", NULL}, NULL},
        /* a tail welded into a real body: the fit is tried and kept */
        {"clips/threejs_Soldier_rexport.glb", "beside_welded_leg", {"Run", NULL}, NULL},
        /* welded: the fit's own search runs the collar band and ring tries */
        {NULL, "hang_welded_nearest", {"Walk", "Sprint", "Crouch", "HipSweep", NULL}, NULL},
        /* clips transferred from a library first: transfer once too */
        {NULL, "hang_shell_leg", {"walk", "run", NULL}, "clips/Xbot_agree_run_walk.glb"},
        /* a real body's own clips */
        {"clips/Xbot_agree_run_walk.glb", "up_shell_spine", {"walk", "run", NULL}, NULL},
    };
    int tried = 0, kept = 0, ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int t = 0, k = 0;
        if (!check_case(&cases[i], &t, &k))
            continue;
        ran++;
        tried += t;
        kept += k;
    }
    if (ran < (int)(sizeof cases / sizeof cases[0]))
        print_message("../shared/corpus absent: %d of %zu cases ran\n", ran, sizeof cases / sizeof cases[0]);
    /* the synthetic cases alone try the fit, keep it twice and leave it
     * once (beside_welded_leg, Walk and Crouch) */
    assert_true(tried >= 3 && kept >= 2);
    assert_true(kept < tried);
}

/* Fitted to the poses (docs/fix.md, session 18): a welded tail beside a
 * thigh (synth:plain beside_welded_leg, test_fix_bar's clips) tears in
 * Crouch whatever the search and the solver fit try; the band's weights
 * fitted to the baked poses tear nowhere. The fit is the last try: every
 * try before it tore, it did not, and it was kept; it wrote at most four
 * joints a vertex summing to one, and the report says on how many
 * vertices (test_fix_bar holds the body's own figures to the input's). */
static void weights_fitted_to_the_poses_when_every_try_tears(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *body = NULL, *in = NULL, *out = NULL;
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_onto(&in, body, "beside_welded_leg", NULL, NULL, &err), TB_OK);
    const char *only[] = {"Walk", "Sprint", "Crouch", NULL};
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.only = only;
    tb_fix_report rep;
    assert_int_equal(tb_fix_run(&out, in, &d, &rep, &err), TB_OK);
    assert_true(rep.zone_try_count >= 2);
    const tb_fix_zone_try *last = &rep.zone_tries[rep.zone_try_count - 1];
    assert_true(last->fitted);
    assert_int_equal(last->torn_clips, 0);
    for (int i = 0; i + 1 < rep.zone_try_count; i++) {
        assert_false(rep.zone_tries[i].fitted);
        assert_true(rep.zone_tries[i].torn_clips > 0);
    }
    assert_true(rep.weights_fitted > 0);
    json_t *j = tb_fix_report_json(&rep);
    assert_int_equal(json_integer_value(json_object_get(j, "weights_fitted_vertices")), (json_int_t)rep.weights_fitted);
    json_decref(j);

    tb_model *mi = NULL, *mo = NULL;
    assert_int_equal(tb_model_load(&mi, in, -1, &err), TB_OK);
    assert_int_equal(tb_model_load(&mo, out, -1, &err), TB_OK);
    size_t changed = 0;
    uint8_t *mask = tbt_repaired_mask(mi, mo, &changed);
    /* every vertex the repair changed keeps one to four joints summing to
     * one (as written: quantised) */
    for (size_t v = 0; v < mo->vertex_count; v++) {
        if (!mask[v])
            continue;
        int nz = 0;
        float sum = 0;
        for (int k = 0; k < mo->influences; k++) {
            float w = mo->weights[v * (size_t)mo->influences + (size_t)k];
            nz += w > 0;
            sum += w;
        }
        assert_true(nz >= 1 && nz <= 4);
        assert_true(fabsf(sum - 1) < 0.02f);
    }
    assert_true(changed >= rep.weights_fitted);
    free(mask);
    tb_model_free(mi);
    tb_model_free(mo);
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(in);
    tb_doc_free(body);
}

/* The blend search writes its kept weights into the repaired document.
 * A skin of one mesh that lists only the joints that mesh uses (FBX
 * converters) may lack one the new weights need: the welded tail's collar
 * ring try moves the body's collar vertices halfway to the chain's root
 * (Tail_1), which the body's own skin never listed. Writing them appends the
 * joint to that skin with its inverse bind matrix (the job was once redone
 * from a fresh copy for it): the file then holds the try's weights, joint by
 * joint name, and the model still merges the mesh's skin. */
static void weights_written_again_extend_a_subset_skin(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *body = NULL, *a = NULL;
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_onto(&a, body, "hang_welded_nearest", NULL, NULL, &err), TB_OK);
    tbt_give_own_subset_skin(a, "Body", 1);
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    d.skin = 1; /* the whole skin, the tail's: the body's merges into it */
    tb_appendage_report rep;
    tb__weight_plan *plan = NULL;
    assert_int_equal(tb__appendage_fix_plan(&rep, a, &d, &plan, &err), TB_OK);
    assert_non_null(plan);
    assert_true(tb__weight_plan_welded(plan));
    tb_model *m0 = NULL;
    assert_int_equal(tb_model_load(&m0, a, 0, &err), TB_OK);
    assert_int_equal(m0->skin_count, 2);
    int subset = m0->skins[1], before = tb_doc_gltf(a)->skins[subset].joint_count;
    size_t VI = m0->vertex_count * (size_t)m0->influences;
    uint16_t *jo = malloc(VI * sizeof *jo);
    float *wo = malloc(VI * sizeof *wo);
    float zone = rep.appendages[0].blend_zone;
    tb__weight_plan_variant(plan, TB__PLAN_COLLAR_RING);
    assert_int_equal(tb__weight_plan_weights(plan, m0, zone, 0.5f, 0, jo, wo, NULL, NULL, &err), TB_OK);
    if (tb__weight_plan_write(plan, a, m0, zone, 0.5f, 0, &rep, &err) != TB_OK)
        fail_msg("writing the collar ring's weights: %s", err.message);
    int after = tb_doc_gltf(a)->skins[subset].joint_count;
    tb_model *m1 = NULL;
    assert_int_equal(tb_model_load(&m1, a, 0, &err), TB_OK);
    assert_int_equal(m1->skin_count, 2); /* the same matrices: still merged */
    assert_int_equal(m1->vertex_count, m0->vertex_count);
    double worst = 0;
    size_t ring = 0, I = (size_t)m0->influences;
    for (size_t v = 0; v < m0->vertex_count; v++) {
        int moved = 0;
        for (size_t k = 0; k < I; k++) { /* every joint of the try's row, by name, against the file's */
            if (!(wo[v * I + k] > 0))
                continue;
            const char *name = m0->skel.names[m0->skin_joints[jo[v * I + k]]];
            double want = 0;
            for (size_t q = 0; q < I; q++)
                want += jo[v * I + q] == jo[v * I + k] ? wo[v * I + q] : 0;
            double diff = fabs(tbt_weight_by_name(m1, v, name) - want);
            worst = diff > worst ? diff : worst;
            moved |= !strcmp(name, "Tail_1") && tbt_weight_by_name(m0, v, name) == 0;
        }
        double total = 0; /* and nothing else in the file's */
        for (size_t k = 0; k < (size_t)m1->influences; k++)
            total += m1->weights[v * (size_t)m1->influences + k];
        double sum = 0;
        for (size_t k = 0; k < I; k++)
            sum += wo[v * I + k] > 0 ? wo[v * I + k] : 0;
        worst = fabs(total - sum) > worst ? fabs(total - sum) : worst;
        ring += (size_t)moved;
    }
    print_message("the body's own skin: %d joints after the repair, %d after writing the collar ring (%zu body vertices "
                  "gained Tail_1); largest weight difference from the try's %.2g\n",
                  before, after, ring, worst);
    assert_true(ring > 0);
    assert_true(after > before);
    assert_true(worst < 1e-4);
    free(jo);
    free(wo);
    tb_model_free(m0);
    tb_model_free(m1);
    tb__weight_plan_free(plan);
    tb_appendage_report_free(&rep);
    tb_doc_free(a);
    tb_doc_free(body);
}

/* The repair's do-no-harm count (SPEC A10) reads the edited document back
 * (tb__model_load_influences) and compares weights by joint name: on a real
 * repair nothing outside the appendages differs; a weight moved to another
 * joint at one untouched vertex is seen there and nowhere else, while the
 * same influences in another slot order, or a change under 1/255, are not. */
static void do_no_harm_sees_a_moved_weight_and_nothing_else(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *body = NULL, *a = NULL;
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_onto(&a, body, "hang_shell_leg", NULL, NULL, &err), TB_OK);
    tb_model *m0 = NULL, *m1 = NULL;
    assert_int_equal(tb_model_load(&m0, a, 0, &err), TB_OK);
    tb_appendage_report rep;
    assert_int_equal(tb_appendage_fix(&rep, a, NULL, &err), TB_OK);
    assert_true(rep.changed);
    assert_int_equal(tb__model_load_influences(&m1, a, m0->skin, &err), TB_OK);
    assert_true(m1->skel.joint_count > m0->skel.joint_count); /* the chain's joints */
    size_t V = m0->vertex_count, I = (size_t)m1->influences;
    uint8_t *skip = calloc(V, 1), *changed = malloc(V);
    for (int i = 0; i < rep.appendage_count; i++)
        if (rep.appendages[i].decision != TB_DECIDE_UNTOUCHED)
            for (size_t k = 0; k < rep.appendages[i].vertex_count; k++)
                skip[rep.appendages[i].vertices[k]] = 1;
    /* two untouched vertices with two joints each */
    size_t v = V, u = V;
    for (size_t x = 0; x < V && u == V; x++)
        if (!skip[x] && m1->weights[x * I] > 0.1f && m1->weights[x * I + 1] > 0.1f)
            *(v == V ? &v : &u) = x;
    assert_true(u < V);
    size_t n = 0;
    assert_int_equal(tb__changed_by_name(m0, m1, skip, changed, &err), TB_OK);
    for (size_t x = 0; x < V; x++)
        n += changed[x];
    assert_int_equal(n, 0);
    assert_int_equal(rep.changed_outside, 0);
    m1->weights[v * I] -= 0.01f; /* to the other joint */
    m1->weights[v * I + 1] += 0.01f;
    uint16_t j = m1->joints[u * I]; /* the same influences, slots swapped */
    float w = m1->weights[u * I];
    m1->joints[u * I] = m1->joints[u * I + 1], m1->weights[u * I] = m1->weights[u * I + 1];
    m1->joints[u * I + 1] = j, m1->weights[u * I + 1] = w;
    m1->weights[skip[0] ? V - 1 : 0] += 0.5f / 255.0f; /* under the tolerance */
    assert_int_equal(tb__changed_by_name(m0, m1, skip, changed, &err), TB_OK);
    n = 0;
    for (size_t x = 0; x < V; x++)
        n += changed[x];
    assert_int_equal(n, 1);
    assert_int_equal(changed[v], 1);
    free(skip);
    free(changed);
    tb_model_free(m0);
    tb_model_free(m1);
    tb_appendage_report_free(&rep);
    tb_doc_free(a);
    tb_doc_free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(weights_written_again_extend_a_subset_skin),
        cmocka_unit_test(do_no_harm_sees_a_moved_weight_and_nothing_else),
        cmocka_unit_test(solver_fit_rebakes_in_place_and_writes_what_a_whole_job_writes),
        cmocka_unit_test(weights_fitted_to_the_poses_when_every_try_tears),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
