/* Fixtures on real bodies (tailbone synth --onto, docs/synth.md, SPEC A10):
 * every fixture on every body is generated, its own invariants checked
 * (valid doc, truth indices in range, the tail where the truth says, the
 * body untouched, reloads), then repaired with tb_appendage_fix and scored
 * against the truth: tail recall (truth tail vertices bound to a Tail_*
 * joint) and precision (Tail_*-dominated vertices that are tail, ties
 * counting), the decision on each clothing part, the chain count, and how
 * many vertices outside the truth tail had their weights changed (a welded
 * tail's collar band, 1.5 root radii round its weld, counted apart).
 *
 * The score is printed as a table and asserted (recall and precision >=
 * 0.98, right decisions, no chain on tail-less fixtures, nothing outside
 * the tail changed) for every fixture but those listed in known_short at
 * the seed in use; TB_FIXTURE_STRICT=1 asserts those too; TB_FIXTURE_SEED=N
 * builds every fixture with seed N (fur irregularity, the rings' wobble)
 * instead of the default (CTest: test_fixtures_seed5). Real bodies skip cleanly when ../shared is absent; the
 * synth:plain ones always run. */
#include "synth/synth_json.h"
#include "support.h"

#include <math.h>
#include <cglm/cglm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/appendage.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"
#include "tailbone/synth.h"

typedef struct body_spec {
    const char *label;
    const char *corpus; /* NULL: the synthetic plain body */
} body_spec;

static const body_spec bodies[] = {
    {"synth:plain", NULL},
    {"Xbot", "clips/Xbot_agree_run_walk.glb"},
    {"Soldier", "clips/threejs_Soldier_rexport.glb"},
    {"Robot", "clips/threejs_RobotExpressive.glb"},
};

static tb_doc *body_doc(const body_spec *b)
{
    tb_doc *doc = NULL;
    tb_error err = {0};
    if (!b->corpus) {
        assert_int_equal(tb_synth_build(&doc, "plain", NULL, NULL, &err), TB_OK);
        return doc;
    }
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, b->corpus);
    if (!path)
        return NULL;
    if (tb_doc_load(&doc, path, NULL, &err) != TB_OK)
        fail_msg("%s: %s", path, err.message);
    /* a body of rigid parts (the robot): the skinned body its fixtures stand on */
    tb_doc *skinned = NULL;
    int parts = 0;
    if (tb_synth_skin_parts(&skinned, doc, &parts, &err) != TB_OK)
        fail_msg("%s: %s", path, err.message);
    tb_doc_free(doc);
    return skinned;
}

static tb_model *model_of(const tb_doc *doc)
{
    tb_model *m = NULL;
    tb_error err = {0};
    if (tb_model_load(&m, doc, -1, &err) != TB_OK)
        fail_msg("model: %s", err.message);
    return m;
}

static int strict(void)
{
    const char *s = getenv("TB_FIXTURE_STRICT");
    return s && *s && strcmp(s, "0");
}

/* The generator's own promises, independent of detection. */
static void check_invariants(const char *what, const tb_doc *body, tb_doc *doc, const json_t *truth, int rebuilt)
{
    tb_model *mb = model_of(body), *m = model_of(doc);
    size_t nb = (size_t)json_integer_value(json_object_get(truth, "body_vertex_count"));
    if ((!rebuilt && nb != mb->vertex_count) || (size_t)json_integer_value(json_object_get(truth, "vertex_count")) != m->vertex_count)
        fail_msg("%s: truth vertex counts %zu/%zu, model %zu/%zu", what, nb,
                 (size_t)json_integer_value(json_object_get(truth, "vertex_count")), mb->vertex_count,
                 m->vertex_count);
    /* the body keeps its vertices, positions and weights, in the same order
     * (rigid-body fixtures rebuild the synthetic body first) */
    if (rebuilt) {
        tb_model_free(mb);
        mb = NULL;
    } else if (m->influences != mb->influences)
        fail_msg("%s: influences %d became %d", what, mb->influences, m->influences);
    if (mb && (memcmp(m->positions, mb->positions, nb * 3 * sizeof(float)) ||
        memcmp(m->weights, mb->weights, nb * (size_t)mb->influences * sizeof(float)) ||
        memcmp(m->joints, mb->joints, nb * (size_t)mb->influences * sizeof(uint16_t))))
        fail_msg("%s: the body's vertices changed", what);
    float H = (float)json_real_value(json_object_get(truth, "height"));
    if (!(H > 0) || fabsf(H - m->height) > 0.05f * m->height)
        fail_msg("%s: truth height %g, model %g", what, H, m->height);
    json_t *apps = json_object_get(truth, "appendages"), *a;
    size_t k;
    int tails = 0;
    json_array_foreach(apps, k, a) {
        json_t *verts = json_object_get(a, "vertices"), *x;
        size_t q, n = json_array_size(verts);
        if (n == 0)
            fail_msg("%s: appendage %zu has no vertices", what, k);
        json_array_foreach(verts, q, x) {
            json_int_t v = json_integer_value(x);
            if (v < (json_int_t)nb || v >= (json_int_t)m->vertex_count)
                fail_msg("%s: truth vertex %lld outside the fixture's vertices", what, (long long)v);
        }
        if (strcmp(json_string_value(json_object_get(a, "class")), "tail"))
            continue;
        tails++;
        /* the tail is where the truth says: every vertex near its centre line */
        json_t *cl = json_object_get(a, "centerline");
        float r0 = (float)json_real_value(json_object_get(a, "radius_root"));
        float len = (float)json_real_value(json_object_get(a, "length"));
        if (!(len >= 0.4f * H && len <= 0.9f * H))
            fail_msg("%s: tail length %.3f H outside 0.4..0.9 H", what, len / H);
        json_array_foreach(verts, q, x) {
            const float *p = m->positions + (size_t)json_integer_value(x) * 3;
            float best = INFINITY;
            size_t c;
            json_t *cp;
            json_array_foreach(cl, c, cp) {
                float d = 0;
                for (int i = 0; i < 3; i++) {
                    float e = p[i] - (float)json_real_value(json_array_get(cp, (size_t)i));
                    d += e * e;
                }
                best = d < best ? d : best;
            }
            if (sqrtf(best) > 1.6f * r0 + 0.03f * H)
                fail_msg("%s: tail vertex %lld is %.3f H from the truth's centre line", what,
                         (long long)json_integer_value(x), sqrtf(best) / H);
        }
    }
    assert_int_equal(tails, json_is_true(json_object_get(truth, "tail")) ? 1 : 0);
    /* reloads as it was */
    uint8_t *bytes = NULL;
    size_t size = 0;
    tb_error err = {0};
    assert_int_equal(tb_doc_write_memory(doc, &bytes, &size, &err), TB_OK);
    tb_doc *back = NULL;
    assert_int_equal(tb_doc_load_memory(&back, bytes, size, what, NULL, NULL, &err), TB_OK);
    tb_model *mr = model_of(back);
    assert_int_equal(mr->vertex_count, m->vertex_count);
    assert_memory_equal(mr->positions, m->positions, m->vertex_count * 3 * sizeof(float));
    tb_model_free(mr);
    tb_doc_free(back);
    free(bytes);
    tb_model_free(m);
    tb_model_free(mb);
}

/* largest weight of vertex v on a Tail_* joint (ties count as tail) */
static int tail_dominated(const tb_model *m, const uint8_t *is_tail_joint, size_t v)
{
    float wt = 0, wo = 0;
    for (int k = 0; k < m->influences; k++) {
        float w = m->weights[v * (size_t)m->influences + (size_t)k];
        uint16_t j = m->joints[v * (size_t)m->influences + (size_t)k];
        if (!(w > 0))
            continue;
        if (is_tail_joint[j])
            wt = w > wt ? w : wt;
        else
            wo = w > wo ? w : wo;
    }
    /* a 50/50 collar quantised to 128/127 of 255 is still a tie */
    return wt > 0 && wt >= wo - 1.5f / 255.0f;
}

/* vertex v carries Tail_* weight (more than quantisation noise) */
static int tail_bound(const tb_model *m, const uint8_t *is_tail_joint, size_t v)
{
    float wt = 0;
    for (int k = 0; k < m->influences; k++) {
        float w = m->weights[v * (size_t)m->influences + (size_t)k];
        if (w > 0 && is_tail_joint[m->joints[v * (size_t)m->influences + (size_t)k]])
            wt += w;
    }
    return wt > 1.5f / 255.0f;
}

typedef struct score {
    double recall, precision;
    int chains, expected_chains;
    int decisions_right, decisions;
    char decision[96];
    size_t changed_outside;
    size_t collar_changed; /* in a welded tail's collar band: allowed, shown */
} score;

static void score_fixture(const char *what, tb_doc *doc, const json_t *truth, score *s)
{
    memset(s, 0, sizeof *s);
    tb_model *before = model_of(doc);
    size_t V = before->vertex_count;
    uint8_t *truth_tail = calloc(V, 1), *dom = calloc(V, 1);
    json_t *apps = json_object_get(truth, "appendages"), *a;
    size_t k;
    size_t n_truth = 0;
    uint8_t *may_change = calloc(V, 1); /* parts the truth wants rebound (a scabbard: rigid) */
    uint8_t *collar = calloc(V, 1);
    json_array_foreach(apps, k, a) {
        json_t *x;
        size_t q;
        const char *dec = json_string_value(json_object_get(a, "decision"));
        if (dec && !strcmp(dec, "rigid"))
            json_array_foreach(json_object_get(a, "vertices"), q, x) may_change[json_integer_value(x)] = 1;
        if (strcmp(json_string_value(json_object_get(a, "class")), "tail"))
            continue;
        json_array_foreach(json_object_get(a, "vertices"), q, x) {
            truth_tail[json_integer_value(x)] = 1;
            n_truth++;
        }
        /* a welded tail's collar band (the "documented collar
         * band", docs/detection.md): the body skin within 1.5 root radii of
         * the weld ring's centre, where the tail's first segment blends into
         * the body. Weights may change there; everywhere else they may not.
         * It is not tail: precision still counts it against the detection. */
        if (json_is_true(json_object_get(a, "welded"))) {
            const json_t *root = json_object_get(a, "root");
            float c[3], rr = 1.5f * (float)json_real_value(json_object_get(a, "radius_root"));
            for (int ax = 0; ax < 3; ax++)
                c[ax] = (float)json_real_value(json_array_get(root, (size_t)ax));
            for (size_t v = 0; v < V; v++) {
                const float *p = before->positions + v * 3;
                float dx = p[0] - c[0], dy = p[1] - c[1], dz = p[2] - c[2];
                if (dx * dx + dy * dy + dz * dz <= rr * rr)
                    collar[v] = 1;
            }
        }
    }
    tb_appendage_report rep;
    tb_error err = {0};
    if (tb_appendage_fix(&rep, doc, NULL, &err) != TB_OK)
        fail_msg("%s: fix failed: %s", what, err.message);
    /* the report's own do-no-harm count: nothing outside what it acted on */
    if (rep.changed && rep.changed_outside != 0)
        fail_msg("%s: fix reports %zu vertices changed outside its appendages", what, rep.changed_outside);
    tb_model *after = model_of(doc);
    assert_int_equal(after->vertex_count, V);
    uint8_t *is_tail = calloc((size_t)after->skin_joint_count + 1, 1);
    for (int j = 0; j < after->skin_joint_count; j++) {
        int c, i;
        is_tail[j] = (uint8_t)tb_tail_name_parse(after->skel.names[after->skin_joints[j]], &c, &i);
    }
    /* the definitions: recall = truth tail vertices bound to Tail_*
     * (carrying Tail_* weight: a welded tail's first segment blends from
     * its collar's weights, SPEC A10's documented collar band); precision =
     * Tail_*-dominated vertices that are tail */
    size_t hit = 0, n_dom = 0, dom_hit = 0;
    for (size_t v = 0; v < V; v++) {
        dom[v] = (uint8_t)tail_dominated(after, is_tail, v);
        n_dom += dom[v];
        dom_hit += dom[v] && truth_tail[v];
        hit += truth_tail[v] && tail_bound(after, is_tail, v);
        if (truth_tail[v] || may_change[v])
            continue;
        /* weights outside the truth tail: compare as (joint, weight) sets */
        int changed = 0;
        for (int q = 0; q < before->influences && !changed; q++) {
            float wb = before->weights[v * (size_t)before->influences + (size_t)q];
            if (!(wb > 0))
                continue;
            uint16_t jb = before->joints[v * (size_t)before->influences + (size_t)q];
            float wa = 0;
            for (int r = 0; r < after->influences; r++)
                if (after->joints[v * (size_t)after->influences + (size_t)r] == jb)
                    wa += after->weights[v * (size_t)after->influences + (size_t)r];
            changed = fabsf(wa - wb) > 1e-5f;
        }
        for (int r = 0; r < after->influences && !changed; r++) /* a new joint appeared */
            changed = after->weights[v * (size_t)after->influences + (size_t)r] > 1e-5f &&
                      is_tail[after->joints[v * (size_t)after->influences + (size_t)r]];
        if (collar[v])
            s->collar_changed += (size_t)changed;
        else
            s->changed_outside += (size_t)changed;
    }
    s->recall = n_truth ? (double)hit / (double)n_truth : 1.0;
    s->precision = n_dom ? (double)dom_hit / (double)n_dom : (n_truth ? 0.0 : 1.0);
    for (int i = 0; i < rep.appendage_count; i++)
        s->chains += rep.appendages[i].decision == TB_DECIDE_CHAIN;
    s->expected_chains = (int)json_integer_value(json_object_get(truth, "expected_chains"));
    /* decisions: the detected appendage holding most of each truth part */
    uint8_t *mark = calloc(V, 1);
    size_t dl = 0;
    json_array_foreach(apps, k, a) {
        const char *cls = json_string_value(json_object_get(a, "class"));
        const char *want = json_string_value(json_object_get(a, "decision"));
        memset(mark, 0, V);
        json_t *x;
        size_t q;
        json_array_foreach(json_object_get(a, "vertices"), q, x) mark[json_integer_value(x)] = 1;
        int best = -1;
        size_t best_in = 0;
        for (int i = 0; i < rep.appendage_count; i++) {
            size_t in = 0;
            for (size_t z = 0; z < rep.appendages[i].vertex_count; z++)
                in += mark[rep.appendages[i].vertices[z]];
            if (in > best_in)
                best_in = in, best = i;
        }
        /* not found = left alone */
        const char *got = best >= 0 ? tb_appendage_decision_name(rep.appendages[best].decision) : "untouched";
        int right = !strcmp(got, want);
        s->decisions++;
        s->decisions_right += right;
        int w = snprintf(s->decision + dl, sizeof s->decision - dl, "%s%s:%s%s", dl ? " " : "", cls, got,
                         right ? "" : "(!)");
        if (w > 0 && (size_t)w < sizeof s->decision - dl)
            dl += (size_t)w;
    }
    free(mark);
    free(is_tail);
    free(truth_tail);
    free(may_change);
    free(collar);
    free(dom);
    tb_appendage_report_free(&rep);
    tb_model_free(after);
    tb_model_free(before);
}

/* Fixtures the segmentation does not yet get right (issue #12's note and
 * docs/detection.md say why, case by case), each at the fixture seed it
 * falls short at (0: at every seed). Every other fixture must meet the bar
 * at every seed: a regression fails the suite. A listed fixture that
 * starts passing at its seed is reported, so the list only shrinks;
 * TB_FIXTURE_STRICT=1 asserts every fixture. The sentinel keeps the list
 * valid C when nothing is short. */
typedef struct short_fixture {
    const char *body, *fixture;
    uint32_t seed; /* 0: every seed */
    int vary;      /* 1: only with TB_FIXTURE_VARY=1 (the seed draws the tail's proportions) */
} short_fixture;

static const short_fixture known_short[] = {
    /* varied proportions (TB_FIXTURE_VARY=1; CTest runs seeds 3, 4, 10),
     * docs/detection.md "Varied proportions": */
    /* a thin tail (radius 0.65x) hung 0.005 H off the Soldier's trousers,
     * whose pouch pokes into it: mid-tail skin reads on-bone, the collar
     * reaches mid-tail, L halves and the sections read flat (a sheet) */
    {"Soldier", "hang_welded_nearest", 10, 1},
    /* a long, thin (0.65x) tail beside the robot's leg as a shell: found whole,
     * but its length reads 0.0127 of 0.0216 and its sections flat (a
     * sheet); not traced further */
    {"Robot", "beside_shell_leg", 10, 1},
    /* a flat 16-vertex piece of the Soldier's gear joins the first tail
     * piece (24 vertices changed outside) */
    {"Soldier", "back_pieces_hips", 3, 1},
    {"Soldier", "back_pieces_hips", 10, 1},
    /* a wide fur (1.4x) over the robot's hanging tail: untouched */
    {"Robot", "hang_fur_hips", 4, 1},
    {NULL, NULL, 0, 0},
};

/* TB_FIXTURE_SEED, or 0: the default seed */
static uint32_t fixture_seed(void)
{
    const char *s = getenv("TB_FIXTURE_SEED");
    return s ? (uint32_t)strtoul(s, NULL, 10) : 0;
}

/* TB_FIXTURE_VARY=1: the seed also draws the tails' proportions (synth --vary) */
static int fixture_vary(void)
{
    const char *s = getenv("TB_FIXTURE_VARY");
    return s && *s && strcmp(s, "0");
}

static int is_known_short(const char *body, const char *fixture)
{
    uint32_t seed = fixture_seed() ? fixture_seed() : TB_SYNTH_DEFAULT_SEED;
    for (size_t i = 0; known_short[i].body; i++)
        if (!strcmp(known_short[i].body, body) && !strcmp(known_short[i].fixture, fixture) &&
            (!known_short[i].seed || known_short[i].seed == seed) && known_short[i].vary == fixture_vary())
            return 1;
    return 0;
}

static void every_fixture_on_every_body_is_scored(void **state)
{
    (void)state;
    int rows = 0, failing = 0, regressions = 0;
    print_message("%-14s %-28s %7s %9s %6s %7s %6s  %s\n", "body", "fixture", "recall", "precision", "chains",
                  "changed", "collar", "decisions");
    for (size_t bi = 0; bi < sizeof bodies / sizeof bodies[0]; bi++) {
        tb_doc *body = body_doc(&bodies[bi]);
        if (!body) {
            print_message("%-14s skipped: ../shared/corpus/%s absent\n", bodies[bi].label, bodies[bi].corpus);
            continue;
        }
        for (int fi = 0; fi < tb_synth_fixture_count(); fi++) {
            const char *name = tb_synth_fixture_name(fi);
            if (bodies[bi].corpus && tb_synth_fixture_needs_synth_body(fi))
                continue;
            char what[128];
            snprintf(what, sizeof what, "%s %s", bodies[bi].label, name);
            tb_doc *doc = NULL;
            json_t *truth = NULL;
            tb_error err = {0};
            tb_synth_desc sd = {.seed = fixture_seed(), .vary = fixture_vary()};
            if (tb_synth_onto_json(&doc, body, name, &sd, &truth, &err) != TB_OK)
                fail_msg("%s: %s", what, err.message);
            check_invariants(what, body, doc, truth, tb_synth_fixture_needs_synth_body(fi));
            score s;
            score_fixture(what, doc, truth, &s);
            int ok = s.recall >= 0.98 && s.precision >= 0.98 && s.decisions_right == s.decisions &&
                     s.chains == s.expected_chains && s.changed_outside == 0;
            failing += !ok;
            rows++;
            print_message("%-14s %-28s %7.3f %9.3f %3d/%-2d %7zu %6zu  %s%s\n", bodies[bi].label, name, s.recall,
                          s.precision, s.chains, s.expected_chains, s.changed_outside, s.collar_changed, s.decision,
                          ok ? "" : "  FAIL");
            int known = is_known_short(bodies[bi].label, name);
            if (ok && known)
                print_message("%s: listed as short of the bar but meets it now: take it off the list\n", what);
            if (!ok && (strict() || !known)) {
                print_message("ERROR: %s: recall %.3f precision %.3f chains %d/%d changed outside %zu decisions %s\n",
                              what, s.recall, s.precision, s.chains, s.expected_chains, s.changed_outside,
                              s.decision);
                regressions++;
            }
            json_decref(truth);
            tb_doc_free(doc);
        }
        tb_doc_free(body);
    }
    print_message("%d fixtures, %d short of SPEC A10, %d of them not listed (TB_FIXTURE_STRICT=1: all count)\n",
                  rows, failing, regressions);
    assert_int_equal(regressions, 0);
}

static void same_seed_same_bytes_and_truth(void **state)
{
    (void)state;
    tb_doc *body = NULL;
    tb_error err = {0};
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    const char *names[] = {"hang_fur_hips", "curl_fur_hips+belt", "coat_only"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        uint8_t *b[2];
        size_t n[2];
        char *t[2];
        for (int r = 0; r < 2; r++) {
            tb_doc *doc = NULL;
            json_t *truth = NULL;
            tb_synth_desc d = {.seed = 7};
            assert_int_equal(tb_synth_onto_json(&doc, body, names[i], &d, &truth, &err), TB_OK);
            assert_int_equal(tb_doc_write_memory(doc, &b[r], &n[r], &err), TB_OK);
            t[r] = json_dumps(truth, JSON_SORT_KEYS);
            json_decref(truth);
            tb_doc_free(doc);
        }
        assert_int_equal(n[0], n[1]);
        assert_memory_equal(b[0], b[1], n[0]);
        assert_string_equal(t[0], t[1]);
        for (int r = 0; r < 2; r++) {
            free(b[r]);
            free(t[r]);
        }
    }
    tb_doc_free(body);
}

/* vary: the seed draws the tail's proportions, recorded in the truth and
 * true of the geometry; the same seed gives the same bytes, another seed
 * other proportions, and without vary the proportions are the fixed ones */
static double tail_field(json_t *truth, const char *key, const char *sub)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(truth, "appendages"), i, a)
        if (!strcmp(json_string_value(json_object_get(a, "class")), "tail")) {
            json_t *x = json_object_get(a, key);
            if (sub)
                x = json_object_get(x, sub);
            return x ? json_number_value(x) : -1;
        }
    return -1;
}

static void vary_draws_tail_proportions_from_the_seed(void **state)
{
    (void)state;
    tb_doc *body = NULL;
    tb_error err = {0};
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    double H = 0, r[3], s[3], pieces[3];
    uint32_t seeds[3] = {3, 3, 4};
    uint8_t *bytes[2];
    size_t n[2];
    for (int k = 0; k < 3; k++) {
        tb_doc *doc = NULL;
        json_t *truth = NULL;
        tb_synth_desc d = {.seed = seeds[k], .vary = 1};
        assert_int_equal(tb_synth_onto_json(&doc, body, "back_pieces_hips", &d, &truth, &err), TB_OK);
        H = json_number_value(json_object_get(truth, "height"));
        r[k] = tail_field(truth, "radius_root", NULL);
        s[k] = tail_field(truth, "varied", "radius_scale");
        pieces[k] = tail_field(truth, "varied", "pieces");
        /* the recorded proportions are the built ones */
        assert_true(fabs(r[k] - 0.022 * H * s[k]) < 1e-3 * H);
        assert_true(tail_field(truth, "shells", NULL) == pieces[k]);
        if (k < 2)
            assert_int_equal(tb_doc_write_memory(doc, &bytes[k], &n[k], &err), TB_OK);
        json_decref(truth);
        tb_doc_free(doc);
    }
    assert_int_equal(n[0], n[1]);
    assert_memory_equal(bytes[0], bytes[1], n[0]);
    free(bytes[0]);
    free(bytes[1]);
    assert_true(r[2] != r[0]);
    /* without vary: the fixed proportions, none recorded */
    tb_doc *doc = NULL;
    json_t *truth = NULL;
    tb_synth_desc d = {.seed = 3};
    assert_int_equal(tb_synth_onto_json(&doc, body, "back_pieces_hips", &d, &truth, &err), TB_OK);
    assert_true(fabs(tail_field(truth, "radius_root", NULL) - 0.022 * H) < 1e-4 * H);
    assert_true(tail_field(truth, "varied", "radius_scale") < 0);
    assert_true(tail_field(truth, "shells", NULL) == 6);
    json_decref(truth);
    tb_doc_free(doc);
    tb_doc_free(body);
}

static void bad_fixtures_and_bodies_are_refused(void **state)
{
    (void)state;
    tb_doc *body = NULL, *doc = NULL;
    tb_error err = {0};
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_onto(&doc, body, "no_such_fixture", NULL, NULL, &err), TB_ERR_ARG);
    assert_null(doc);
    assert_int_equal(tb_synth_onto(&doc, NULL, "coat_only", NULL, NULL, &err), TB_ERR_ARG);
    tb_doc_free(body);
    /* rigid-body fixtures are for the synthetic body only */
    tbt_path xbot_buf;
    const char *xbot = tbt_corpus_file(&xbot_buf, "clips/Xbot_agree_run_walk.glb");
    if (xbot) {
        assert_int_equal(tb_doc_load(&body, xbot, NULL, &err), TB_OK);
        assert_int_equal(tb_synth_onto(&doc, body, "rigid_plate_only", NULL, NULL, &err), TB_ERR_ARG);
        tb_doc_free(body);
    }
}

/* World position of vertex i of accessor acc under node matrix w. */
static void world_of(const float *pos, size_t i, const float *w, float out[3])
{
    glm_mat4_mulv3((vec4 *)w, (float *)pos + i * 3, 1.0f, out);
}

/* A body of rigid parts (RobotExpressive: meshes parented to bone nodes,
 * only the hands skinned) is skinned part by part: every part 100% on the
 * joint it hangs from, and standing where it stood — each vertex, skinned
 * at rest (joint world · inverse bind), lands on the part's vertex through
 * the part node's world matrix in the original file. A skinned body (the
 * Xbot) comes back with no part to skin. */
static void rigid_parts_are_skinned_where_they_stood(void **state)
{
    (void)state;
    tb_error err = {0};
    tbt_path xbot_buf;
    const char *xbot = tbt_corpus_file(&xbot_buf, "clips/Xbot_agree_run_walk.glb");
    if (xbot) {
        tb_doc *body = NULL, *out = NULL;
        int parts = -1;
        assert_int_equal(tb_doc_load(&body, xbot, NULL, &err), TB_OK);
        assert_int_equal(tb_synth_skin_parts(&out, body, &parts, &err), TB_OK);
        assert_int_equal(parts, 0);
        assert_int_equal(tb_doc_gltf(out)->mesh_count, tb_doc_gltf(body)->mesh_count);
        tb_doc_free(out);
        tb_doc_free(body);
    }
    tbt_path robot_buf;
    const char *robot = tbt_corpus_file(&robot_buf, "clips/threejs_RobotExpressive.glb");
    if (!robot)
        return;
    tb_doc *body = NULL, *out = NULL;
    int parts = 0;
    assert_int_equal(tb_doc_load(&body, robot, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_skin_parts(&out, body, &parts, &err), TB_OK);
    const tb_gltf *g0 = tb_doc_gltf(body), *g1 = tb_doc_gltf(out);
    /* every unskinned mesh node under the skeleton: Torso, Head, arms, legs, feet */
    int expect = 0;
    for (int n = 0; n < g0->node_count; n++)
        expect += g0->nodes[n].mesh >= 0 && g0->nodes[n].skin < 0;
    assert_int_equal(parts, expect);
    assert_true(parts >= 10);
    const tb_gltf_skin *sk = &g1->skins[0];
    float *ibm = malloc((size_t)sk->joint_count * 16 * sizeof *ibm);
    assert_non_null(ibm);
    assert_int_equal(tb_accessor_read_floats(out, sk->inverse_bind_matrices, ibm, (size_t)sk->joint_count * 16, &err),
                     TB_OK);
    int checked = 0;
    for (int n = 0; n < g0->node_count; n++) {
        if (g0->nodes[n].mesh < 0 || g0->nodes[n].skin >= 0)
            continue;
        /* its skinned copy: the new node of the same name with a skin */
        int c = -1;
        for (int q = g0->node_count; q < g1->node_count && c < 0; q++)
            if (g1->nodes[q].skin == 0 && g1->nodes[q].mesh >= 0 && g1->nodes[q].name && g0->nodes[n].name &&
                !strcmp(g1->nodes[q].name, g0->nodes[n].name))
                c = q;
        assert_true(c >= 0);
        assert_int_equal(g1->nodes[n].mesh, -1); /* the bone node keeps its place, without the mesh */
        const tb_gltf_primitive *p0 = &g0->meshes[g0->nodes[n].mesh].primitives[0],
                                *p1 = &g1->meshes[g1->nodes[c].mesh].primitives[0];
        size_t nv = g0->accessors[p0->position].count;
        assert_int_equal(g1->accessors[p1->position].count, nv);
        float *a = malloc(nv * 3 * sizeof *a), *b = malloc(nv * 3 * sizeof *b), *w = malloc(nv * 4 * sizeof *w);
        uint32_t *j = malloc(nv * 4 * sizeof *j);
        assert_true(a && b && w && j);
        assert_int_equal(tb_accessor_read_floats(body, p0->position, a, nv * 3, &err), TB_OK);
        assert_int_equal(tb_accessor_read_floats(out, p1->position, b, nv * 3, &err), TB_OK);
        assert_int_equal(tb_accessor_read_floats(out, p1->weights[0], w, nv * 4, &err), TB_OK);
        assert_int_equal(tb_accessor_read_uints(out, p1->joints[0], j, nv * 4, &err), TB_OK);
        /* the joint it hangs from: its nearest ancestor in the skin */
        int hang = -1;
        for (int an = g0->nodes[n].parent; an >= 0 && hang < 0; an = g0->nodes[an].parent)
            for (int k = 0; k < sk->joint_count; k++)
                if (sk->joints[k] == an)
                    hang = k;
        assert_true(hang >= 0);
        mat4 skin;
        glm_mat4_mul((vec4 *)g1->nodes[sk->joints[hang]].world, (vec4 *)(ibm + hang * 16), skin);
        float worst = 0, scale = 0;
        for (size_t v = 0; v < nv; v++) {
            assert_int_equal(j[v * 4], (uint32_t)hang);
            assert_true(w[v * 4] == 1.0f && w[v * 4 + 1] == 0 && w[v * 4 + 2] == 0 && w[v * 4 + 3] == 0);
            float p[3], q[3];
            world_of(a, v, g0->nodes[n].world, p);
            world_of(b, v, (float *)skin, q);
            float dd = sqrtf((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
            worst = dd > worst ? dd : worst;
            float l = sqrtf(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
            scale = l > scale ? l : scale;
        }
        assert_true(worst <= 1e-5f * scale);
        checked++;
        free(a);
        free(b);
        free(w);
        free(j);
    }
    assert_int_equal(checked, parts);
    free(ibm);
    /* and the fixtures stand on it: the robot's hips now carry skin */
    tb_doc *doc = NULL;
    assert_int_equal(tb_synth_onto(&doc, body, "hang_shell_leg", NULL, NULL, &err), TB_OK);
    tb_doc_free(doc);
    tb_doc_free(out);
    tb_doc_free(body);
}

static void cli_synth_onto(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(tbt_run_cli(&out, "synth --help"), 0);
    assert_non_null(strstr(out, "--onto"));
    free(out);
    assert_int_equal(tbt_run_cli(&out, "synth --fixtures"), 0);
    assert_non_null(strstr(out, "hang_shell_leg\n"));
    free(out);
    assert_int_equal(tbt_run_cli(&out, "synth --fixtures -v"), 0);
    assert_non_null(strstr(out, "coat_only"));
    free(out);
    const char *glb = tbt_tmp_path("cli_fixture.glb"), *json = tbt_tmp_path("cli_fixture.json");
    assert_int_equal(tbt_run_cli(&out, "synth --onto synth:plain --fixture back_pieces_hips+coat -o '%s' --truth '%s'",
                                 glb, json),
                     0);
    free(out);
    assert_true(tbt_file_exists(glb) && tbt_file_exists(json));
    /* bad fixture name: usage error, exit 2 */
    assert_int_equal(tbt_run_cli(&out, "synth --onto synth:plain --fixture nope -o '%s'", glb), 2);
    assert_non_null(strstr(out, "nope"));
    free(out);
    assert_int_equal(tbt_run_cli(&out, "synth --onto synth:plain -o '%s'", glb), 2);
    free(out);
    /* missing body: exit 1, one line naming the file */
    const char *missing = tbt_tmp_path("no_such_body.glb");
    assert_int_equal(tbt_run_cli(&out, "synth --onto '%s' --fixture coat_only -o '%s'", missing, glb), 1);
    assert_non_null(strstr(out, "no_such_body.glb"));
    char *nl = strchr(out, '\n');
    assert_true(nl && nl[1] == '\0');
    free(out);
    /* the body is an input: never overwritten, nor the output by the truth */
    size_t n0 = 0, n1 = 0;
    uint8_t *before = tbt_read_file(glb, &n0);
    assert_non_null(before);
    assert_int_equal(tbt_run_cli(&out, "synth --onto '%s' --fixture coat_only -o '%s'", glb, glb), 1);
    assert_non_null(strstr(out, "refusing to overwrite"));
    free(out);
    assert_int_equal(tbt_run_cli(&out, "synth --onto synth:plain --fixture coat_only -o '%s' --truth '%s'", json, json),
                     2);
    assert_non_null(strstr(out, "same file"));
    free(out);
    uint8_t *after = tbt_read_file(glb, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_fixtures_and_bodies_are_refused),
        cmocka_unit_test(rigid_parts_are_skinned_where_they_stood),
        cmocka_unit_test(same_seed_same_bytes_and_truth),
        cmocka_unit_test(vary_draws_tail_proportions_from_the_seed),
        cmocka_unit_test(cli_synth_onto),
        cmocka_unit_test(every_fixture_on_every_body_is_scored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
