/* Issue 13's bar on every fixture whose tail is found (issue 12's
 * fixtures: tailbone synth --onto, docs/synth.md): each fixture on the
 * synthetic body baked with its Walk/Sprint/Crouch, on the Xbot with its
 * walk/run, on the Soldier with its Walk/Run and on the RobotExpressive
 * with its Walking/Running, by tb_fix_run with the
 * defaults. The bar (SPEC C's chain row and issue 13): tail p99 <= 1.18,
 * max <= 1.30, nothing torn in the tail or at its seam, no body weight
 * changed, the tail swinging >= 10 degrees, every loop closing within 0.5
 * degrees; and, against the unrepaired file (honest_groups below), the
 * body's own figures exactly the same and nothing torn on any edge the
 * repair touched: where the repaired skin meets the untouched body, and
 * between two repaired vertices (the collar band under half on Tail_*,
 * which SPEC C's groups count nowhere). A fixture without a chain (no tail, or detection short of it:
 * test_fixtures' known_short) is skipped and counted. Every other one must
 * meet the bar unless it is listed in short_of_bar below with its reason
 * (docs/fix.md has the same list); a listed one that meets it is reported,
 * so the list only shrinks. The rows are printed as the Markdown table of
 * docs/fix.md. Real bodies skip cleanly when ../shared is absent. */
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

/* body, fixture, reason (docs/fix.md, "Short of the bar"): none since
 * session 18, when the three welded bands listed here (synth:plain
 * hang_welded_nearest and beside_welded_leg, the Soldier's
 * beside_welded_leg) got their weights fitted to the baked poses
 * (fitband.c). The list only shrinks; a row added back needs its reason. */
static const char *const short_of_bar[][3] = {
    {NULL, NULL, NULL},
};

static const char *short_reason(const char *body, const char *fixture)
{
    for (size_t i = 0; i < sizeof short_of_bar / sizeof short_of_bar[0]; i++)
        if (short_of_bar[i][0] && !strcmp(short_of_bar[i][0], body) && !strcmp(short_of_bar[i][1], fixture))
            return short_of_bar[i][2];
    return NULL;
}

/* What the repair changed, counted honestly (issue 13: "the body's own
 * figures unchanged by the repair"). SPEC C's groups split by the 50% tail
 * weight, so a welded tail's collar ring and the start of its collar band
 * (body skin or tail skin under half on Tail_*) count as body. Here the
 * groups come from the weights instead: a vertex is "repaired" when any of
 * its joint weights (by joint name) differs between the input and the
 * output. Each clip is then measured on both files with that mask as the
 * tail: the body group (neither end repaired) must read exactly the same
 * in both — the repair and the bake touch neither its weights nor its
 * joints' keys — and every other edge has a repaired end and must not
 * tear: the seam group (one end repaired: where the repaired skin meets the
 * untouched body) and the tail group (both ends repaired: SPEC C's tail and
 * the collar band's edges between two vertices both under half on Tail_*,
 * in neither SPEC C group). The input's figures on the same edges are
 * printed, never excused: an edge with a repaired end carries weights the
 * repair chose, and one with neither is the body, checked as the same. */
typedef struct honest_row {
    size_t repaired;       /* vertices whose weights changed */
    float seam_torn, seam_max; /* worst over the clips */
    float seam_in_torn;    /* the same edges in the input, worst over the clips */
    /* the repaired skin's inner edges (both ends repaired): SPEC C's tail
     * group and the edges of the collar band under half on Tail_*, which
     * SPEC C counts nowhere; worst over the clips */
    float inner_torn, inner_max, inner_in_torn;
    size_t torn_samples;   /* torn samples on every edge with a repaired end, summed over the clips */
    int body_same;         /* every clip's body figures identical in input and output */
    float body_p99, body_max;
} honest_row;

static int same_stats(const tb_stretch_stats *a, const tb_stretch_stats *b)
{
    return a->samples == b->samples && a->torn == b->torn && fabsf(a->p99 - b->p99) <= 1e-6f &&
           fabsf(a->max - b->max) <= 1e-6f && fabsf(a->min - b->min) <= 1e-6f;
}

static void honest_groups(honest_row *h, const tb_doc *in, const tb_doc *out, const tb_fix_report *rep)
{
    tb_error err = {0};
    tb_model *mi = NULL, *mo = NULL;
    memset(h, 0, sizeof *h);
    h->body_same = 1;
    assert_int_equal(tb_model_load(&mi, in, -1, &err), TB_OK);
    assert_int_equal(tb_model_load(&mo, out, -1, &err), TB_OK);
    assert_true(mi->vertex_count == mo->vertex_count);
    uint8_t *mask = tbt_repaired_mask(mi, mo, &h->repaired);
    for (int c = 0; c < rep->stretch_count; c++) {
        tb_measure_result r[2];
        tbt_measure_in_out(in, out, mi, mo, rep, c, mask, NULL, r);
        h->body_same = h->body_same && same_stats(&r[0].body, &r[1].body);
        h->body_p99 = r[1].body.p99 > h->body_p99 ? r[1].body.p99 : h->body_p99;
        h->body_max = r[1].body.max > h->body_max ? r[1].body.max : h->body_max;
        if (r[1].seam.samples) {
            h->seam_torn = r[1].seam.torn_frac > h->seam_torn ? r[1].seam.torn_frac : h->seam_torn;
            h->seam_max = r[1].seam.max > h->seam_max ? r[1].seam.max : h->seam_max;
            h->seam_in_torn = r[0].seam.torn_frac > h->seam_in_torn ? r[0].seam.torn_frac : h->seam_in_torn;
        }
        if (r[1].tail.samples) {
            h->inner_torn = r[1].tail.torn_frac > h->inner_torn ? r[1].tail.torn_frac : h->inner_torn;
            h->inner_max = r[1].tail.max > h->inner_max ? r[1].tail.max : h->inner_max;
            h->inner_in_torn = r[0].tail.torn_frac > h->inner_in_torn ? r[0].tail.torn_frac : h->inner_in_torn;
        }
        h->torn_samples += r[1].tail.torn + r[1].seam.torn;
    }
    free(mask);
    tb_model_free(mi);
    tb_model_free(mo);
}

/* What the joint's chain weights carry, worked out here from the report's
 * weights (the chain by its letter): 0 where not sized. */
static float carried_by_weights(const tb_fix_report *rep, const char *joint)
{
    int chain = -1;
    float carried = 0;
    if (!tb_tail_name_parse(joint, &chain, NULL))
        return 0;
    for (int i = 0; i < rep->weight_count; i++) {
        const tb_fix_weights *w = &rep->weights[i];
        if (w->smooth && w->carry_rad > 0 && rep->repair.appendages[w->appendage].chain == chain)
            carried = w->carry_rad;
    }
    return carried;
}

/* The table's last cell: each clip's largest bend per joint (degrees,
 * Tail_1 first; "!" past what the joint's weights carry), then what they
 * carry. Checks the report's carried bends and count against the weights.
 * Returns the joint-clip bends past what the weights carry. */
static int bend_cells(const tb_fix_report *rep, char *cell, size_t n)
{
    size_t at = 0;
    int past = 0;
    float lo = INFINITY, hi = 0;
    cell[0] = 0;
    for (int c = 0; c < rep->stretch_count; c++) {
        const tb_fix_stretch *st = &rep->stretch[c];
        const char *bar = strrchr(st->clip, '|');
        at += (size_t)snprintf(cell + at, at < n ? n - at : 0, "%s%s", c ? "; " : "", bar ? bar + 1 : st->clip);
        int here = 0;
        for (int k = 0; k < st->bend_count; k++) {
            float carried = carried_by_weights(rep, st->bend_joint[k]);
            assert_true(fabsf(st->bend_carried_rad[k] - carried) <= 1e-6f);
            int over = carried > 0 && st->bend_rad[k] > carried;
            here += over;
            lo = carried > 0 && carried < lo ? carried : lo;
            hi = carried > hi ? carried : hi;
            at += (size_t)snprintf(cell + at, at < n ? n - at : 0, " %.0f%s", st->bend_rad[k] / 0.0174533f, over ? "!" : "");
        }
        assert_int_equal(st->bends_past_carried, here);
        past += here;
    }
    if (hi > 0 && hi - lo < 0.00873f)
        at += (size_t)snprintf(cell + at, at < n ? n - at : 0, " (%.0f°)", hi / 0.0174533f);
    else if (hi > 0)
        at += (size_t)snprintf(cell + at, at < n ? n - at : 0, " (%.0f–%.0f°)", lo / 0.0174533f, hi / 0.0174533f);
    else
        at += (size_t)snprintf(cell + at, at < n ? n - at : 0, " (not sized)");
    return past;
}

static void every_found_tail_meets_the_bar_or_is_listed(void **state)
{
    (void)state;
    int rows = 0, met = 0, listed = 0, unlisted = 0, no_chain = 0;
    int past_rows = 0, past_met = 0, past_joints = 0, bends = 0;
    float past_worst = 0, past_worst_carry = 0;
    char past_where[160] = "";
    print_message("| body | fixture | tail p99 / max | torn (tail or seam) | swing | largest bend | fit | repaired vertices | "
                  "repaired/body edges: torn / max (input torn) | repaired/repaired edges: torn / max (input torn) | "
                  "torn samples, every repaired edge | body vs input | bar | largest bend per joint per clip (the weights carry) |\n"
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t bi = 0; bi < sizeof bodies / sizeof bodies[0]; bi++) {
        tb_error err = {0};
        tb_doc *body = NULL;
        if (!bodies[bi].corpus) {
            assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
        } else {
            tbt_path path_buf;
            const char *path = tbt_corpus_file(&path_buf, bodies[bi].corpus);
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
            char bend_cell[1024];
            int past = bend_cells(&rep, bend_cell, sizeof bend_cell);
            for (int c = 0; c < rep.stretch_count; c++) {
                const tb_fix_stretch *st = &rep.stretch[c];
                bends += st->bend_count;
                for (int k = 0; k < st->bend_count; k++)
                    if (st->bend_carried_rad[k] > 0 && st->bend_rad[k] - st->bend_carried_rad[k] > past_worst - past_worst_carry) {
                        past_worst = st->bend_rad[k], past_worst_carry = st->bend_carried_rad[k];
                        snprintf(past_where, sizeof past_where, "%s %s %s %s", bodies[bi].label, name, st->clip, st->bend_joint[k]);
                    }
            }
            honest_row h;
            honest_groups(&h, doc, out, &rep);
            ok = ok && h.body_same && h.seam_torn == 0 && h.inner_torn == 0;
            const char *why = short_reason(bodies[bi].label, name);
            rows++;
            met += ok;
            past_joints += past;
            past_rows += past > 0;
            past_met += past > 0 && ok;
            print_message("| %s | %s | %.2f / %.2f | %.2f%% | %.0f° | %.0f° | %s | %zu | %.2f%% / %.2f (%.2f%%) | "
                          "%.2f%% / %.2f (%.2f%%) | %zu | %s | %s | %s |\n",
                          bodies[bi].label, name, p99, mx, 100 * torn, swing / 0.0174533f, bend / 0.0174533f,
                          rep.solver_fit_kept ? "fit" : "", h.repaired, 100 * h.seam_torn, h.seam_max,
                          100 * h.seam_in_torn, 100 * h.inner_torn, h.inner_max, 100 * h.inner_in_torn, h.torn_samples,
                          h.body_same ? "same" : "CHANGED", ok ? "✓" : why ? "✗ listed" : "✗", bend_cell);
            if (!h.body_same)
                print_message("ERROR: %s %s: the body's own figures differ from the unrepaired file's\n",
                              bodies[bi].label, name);
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
    print_message("bends past what the weights carry: %d of %d joint-clip bends, in %d of %d rows (%d of them meet "
                  "the bar); the furthest %.0f° against %.0f° (%s)\n",
                  past_joints, bends, past_rows, rows, past_met, past_worst / 0.0174533f, past_worst_carry / 0.0174533f,
                  past_where);
    assert_int_equal(unlisted, 0);
}


static int has_tail_weight(const tb_model *m, size_t v)
{
    for (int k = 0; k < m->influences; k++) {
        size_t i = v * (size_t)m->influences + (size_t)k;
        const char *n = m->skel.names[m->skin_joints[m->joints[i]]];
        if (m->weights[i] > 0 && n && !strncmp(n, "Tail_", 5))
            return 1;
    }
    return 0;
}

/* Whether vertex v's input weights lie, joint by joint (by name), between
 * those of the unrepaired vertices it shares an edge with (none: 0). */
static int between_untouched(const tb_model *mi, const uint8_t *mask, const uint64_t *edges, size_t ne, size_t v)
{
    size_t nb[64], n = 0;
    for (size_t e = 0; e < ne && n < 64; e++) {
        size_t a = edges[e] >> 32, b = edges[e] & 0xffffffffu, u = a == v ? b : a;
        if ((a == v || b == v) && !mask[u])
            nb[n++] = u;
    }
    for (size_t i = 0; i <= n; i++) { /* the joints of v, then of each neighbour */
        size_t w = i < n ? nb[i] : v;
        for (int k = 0; k < mi->influences; k++) {
            size_t x = w * (size_t)mi->influences + (size_t)k;
            const char *name = mi->skel.names[mi->skin_joints[mi->joints[x]]];
            if (!(mi->weights[x] > 0) || !name)
                continue;
            float o = tbt_weight_by_name(mi, v, name), lo = INFINITY, hi = -INFINITY;
            for (size_t j = 0; j < n; j++) {
                float wx = tbt_weight_by_name(mi, nb[j], name);
                lo = wx < lo ? wx : lo;
                hi = wx > hi ? wx : hi;
            }
            if (o < lo || o > hi)
                return 0;
        }
    }
    return n > 0;
}

/* Whether vertices a and b of m carry the same weights (by joint name). */
static int same_weights(const tb_model *m, size_t a, size_t b)
{
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < m->influences; k++) {
            size_t x = (side ? b : a) * (size_t)m->influences + (size_t)k;
            const char *name = m->skel.names[m->skin_joints[m->joints[x]]];
            if (m->weights[x] > 0 && (!name || fabsf(tbt_weight_by_name(m, a, name) - tbt_weight_by_name(m, b, name)) > 1e-6f))
                return 0;
        }
    return 1;
}

/* The synthetic body with `fixture`, fixed with the blend zone and collar
 * band pinned, no solver fit and the spring's parameters sp (NULL: the
 * defaults), only Crouch baked; the fixture's document, the output and the
 * report. */
static void fix_synth_crouch(const char *fixture, float zone, float band, const tb_spring_params *sp, tb_doc **doc,
                             tb_doc **out, tb_fix_report *rep)
{
    tb_error err = {0};
    tb_doc *body = NULL;
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_onto(doc, body, fixture, NULL, NULL, &err), TB_OK);
    static const char *const only[] = {"Crouch", NULL};
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.only = only;
    d.no_solver_fit = 1;
    d.repair.blend_zone = zone;
    d.repair.collar_band = band;
    if (sp)
        d.bake.spring.params = *sp;
    if (tb_fix_run(out, *doc, &d, rep, &err) != TB_OK)
        fail_msg("%s %s", fixture, err.message);
    tb_doc_free(body);
}

/* Do no harm at the seam (docs/fix.md, chain.c tb__unreached_keep_own): a
 * vertex of a welded tail's collar band that the chain does not reach (no
 * Tail_* weight among its four) and whose own weights already lie between
 * those of the body skin it meets keeps them. On the synthetic
 * back_lowpoly_nearest (zone 0.25, band 0.5, Crouch) the blend moved such
 * vertices by 0.003 and their edges to the body, torn by the body's own
 * stretch (1.71 in the input, 1.70 in the output), read as the repair's:
 * 5.3% of the honest seam torn. Now none; every changed vertex without a
 * Tail_* weight had own weights outside its untouched neighbours' range,
 * and no two copies of one point of the surface weighted alike in the
 * input are weighted apart (the surface would open between them). */
static void a_band_vertex_the_chain_cannot_reach_keeps_its_own_weights(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *doc = NULL, *out = NULL;
    tb_fix_report rep;
    fix_synth_crouch("back_lowpoly_nearest", 0.25f, 0.5f, NULL, &doc, &out, &rep);
    honest_row h;
    honest_groups(&h, doc, out, &rep);
    tb_model *mi = NULL, *mo = NULL;
    assert_int_equal(tb_model_load(&mi, doc, -1, &err), TB_OK);
    assert_int_equal(tb_model_load(&mo, out, -1, &err), TB_OK);
    size_t repaired = 0, unreached = 0, copies = 0;
    uint8_t *mask = tbt_repaired_mask(mi, mo, &repaired);
    uint64_t *edges = NULL;
    size_t ne = tb_measure_edges(mi, &edges);
    float eps = 1e-5f * mi->height;
    for (size_t v = 0; v < mi->vertex_count; v++) {
        if (mask[v] && !has_tail_weight(mo, v)) {
            unreached++;
            if (between_untouched(mi, mask, edges, ne, v))
                fail_msg("vertex %zu: reweighted without reaching the chain, its own weights between the body's", v);
        }
        for (size_t u = v + 1; u < mi->vertex_count; u++) {
            const float *p = mi->positions + v * 3, *o = mi->positions + u * 3;
            if ((!mask[v] && !mask[u]) || fabsf(p[0] - o[0]) > eps || fabsf(p[1] - o[1]) > eps || fabsf(p[2] - o[2]) > eps ||
                !same_weights(mi, v, u))
                continue;
            copies++;
            if (!same_weights(mo, v, u))
                fail_msg("copies %zu and %zu of one point, weighted alike in the input, apart in the output", v, u);
        }
    }
    print_message("back_lowpoly_nearest, Crouch: %zu vertices repaired, %zu of them without a Tail_* weight, %zu "
                  "copies checked; honest seam torn %.2f%%, max %.2f; body %s\n",
                  repaired, unreached, copies, 100 * h.seam_torn, h.seam_max, h.body_same ? "same" : "CHANGED");
    assert_true(h.body_same);
    assert_true(h.seam_torn == 0);
    assert_true(copies > 0);
    free(edges);
    free(mask);
    tb_model_free(mi);
    tb_model_free(mo);
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(doc);
}

/* The band's shared body part is the chain's lineage (docs/fix.md, chain.c
 * tb__ring_lineage): a tail welded beside the left thigh (synthetic
 * beside_welded_leg, zone 0.25, collar band 2 segments, the solver as the
 * fit leaves it on the bar's run, Crouch) carries only the seam's own
 * fading thigh share past joint 1, and the thigh flexing does not fold the
 * tail. Before, the weld ring's mean put LeftUpLeg 0.09-0.20 on Tail_2 skin
 * and Crouch compressed edges along it to 0.61-0.66 (77 tail samples
 * torn). */
static void a_welded_tail_carries_no_limb_past_its_root(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *doc = NULL, *out = NULL;
    tb_spring_params sp; /* the solver as the fit left it on the bar's run */
    memset(&sp, 0, sizeof sp);
    sp.bend_limit_rad = 20.4f * 0.0174533f;
    sp.bind_limit_rad = 10 * 0.0174533f;
    sp.contact_keeps_limit = 1;
    tb_fix_report rep;
    fix_synth_crouch("beside_welded_leg", 0.25f, 2.0f, &sp, &doc, &out, &rep);
    tb_model *mo = NULL;
    assert_int_equal(tb_model_load(&mo, out, -1, &err), TB_OK);
    size_t past = 0;
    float limb = 0;
    for (size_t v = 0; v < mo->vertex_count; v++) {
        float tail_past = 0;
        for (int k = 2; k <= 9; k++) {
            char name[16];
            snprintf(name, sizeof name, "Tail_%d", k);
            tail_past += tbt_weight_by_name(mo, v, name);
        }
        if (tail_past < 0.5f)
            continue;
        past++;
        float w = tbt_weight_by_name(mo, v, "mixamorig:LeftUpLeg");
        limb = w > limb ? w : limb;
    }
    assert_true(rep.stretch_count == 1);
    const tb_measure_result *m = &rep.stretch[0].result;
    print_message("beside_welded_leg, Crouch: %zu vertices mostly on Tail_2 and beyond, LeftUpLeg up to %.3f; tail "
                  "min %.2f, max %.2f, %zu torn\n",
                  past, limb, m->tail.min, m->tail.max, m->tail.torn);
    assert_true(past > 0);
    assert_true(m->tail.torn == 0 && m->seam.torn == 0 && m->tail.min >= 0.67f);
    tb_model_free(mo);
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(doc);
}

/* The band reads the collar as a field relaxed along the tail (docs/fix.md,
 * session 14; chain.c tb__seam_field): a welded tail's root ring no longer
 * copies, vertex by vertex, the step between the collar's differently
 * weighted vertices. On the synthetic up_welded_hips+vest, fixed with the
 * defaults and baked with Crouch, the repaired skin tore 34 samples before
 * (root-ring edges 4401-4402 and 4408-4409, 0.011 H, up to 2.07); now none,
 * at the seam or inside, and the body reads as the input's. */
static void a_welded_band_spreads_the_collars_step(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *body = NULL, *doc = NULL, *out = NULL;
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_onto(&doc, body, "up_welded_hips+vest", NULL, NULL, &err), TB_OK);
    static const char *const only[] = {"Crouch", NULL};
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.only = only;
    tb_fix_report rep;
    assert_int_equal(tb_fix_run(&out, doc, &d, &rep, &err), TB_OK);
    honest_row h;
    honest_groups(&h, doc, out, &rep);
    print_message("up_welded_hips+vest, Crouch: %zu vertices repaired; repaired/body torn %.2f%% (max %.2f), "
                  "repaired/repaired torn %.2f%% (max %.2f), %zu torn samples; body %s\n",
                  h.repaired, 100 * h.seam_torn, h.seam_max, 100 * h.inner_torn, h.inner_max, h.torn_samples,
                  h.body_same ? "same" : "CHANGED");
    assert_true(h.body_same);
    assert_true(h.repaired > 0 && h.inner_max > 0);
    assert_true(h.torn_samples == 0);
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(doc);
    tb_doc_free(body);
}

/* Bend where the tail can bend (issue 13 item 4): the report gives each
 * clip's largest bend per joint against what the joint's chain weights
 * carry, and counts the joints bent past it. On the synthetic body with
 * hang_fur_hips and the defaults (the solver fit not asked for), Crouch
 * bends a joint past it (session 13's K 5: the tip on the ground, 61 deg
 * against 30, contact beating the bend limit; K 4 since session 14: Tail_2
 * 35 deg, the bend limit counted from the rest target, not the bind pose)
 * and Walk none. */
static void a_bend_past_what_the_weights_carry_is_reported(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *body = NULL, *doc = NULL, *out = NULL;
    assert_int_equal(tb_synth_build(&body, "plain", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_onto(&doc, body, "hang_fur_hips", NULL, NULL, &err), TB_OK);
    /* Crouch folds the hanging tail past what its weights carry (its tip
     * on the ground; since session 14's holes fix, K 4, the second joint
     * too, ground or not); Walk swings it within */
    static const char *const only[] = {"Walk", "Crouch", NULL};
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.only = only;
    d.no_solver_fit = 1;
    tb_fix_report rep;
    assert_int_equal(tb_fix_run(&out, doc, &d, &rep, &err), TB_OK);
    assert_int_equal(rep.stretch_count, 2);
    char cell[512];
    bend_cells(&rep, cell, sizeof cell);
    print_message("hang_fur_hips: %s\n", cell);
    for (int c = 0; c < (int)rep.stretch_count; c++) {
        const tb_fix_stretch *st = &rep.stretch[c];
        int K = st->bend_count; /* one bend per chain joint */
        assert_true(K >= 3 && K <= 8);
        char tip[16];
        snprintf(tip, sizeof tip, "Tail_%d", K);
        assert_string_equal(st->bend_joint[K - 1], tip);
        /* the report's count is the joints bent past what they carry */
        int over = 0;
        for (int k = 0; k < K; k++) {
            assert_true(st->bend_carried_rad[k] > 0);
            over += st->bend_rad[k] > st->bend_carried_rad[k];
        }
        assert_int_equal(st->bends_past_carried, over);
        if (!strcmp(st->clip, "Crouch"))
            assert_true(over >= 1);
        else
            assert_int_equal(over, 0);
    }
    static const char *const says[] = {"\"bends_past_carried\":", "\"carried_bend_deg\":{\"Tail_1\":", NULL};
    assert_true(tbt_fix_report_says(&rep, says));
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(doc);
    tb_doc_free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_band_vertex_the_chain_cannot_reach_keeps_its_own_weights),
        cmocka_unit_test(a_welded_tail_carries_no_limb_past_its_root),
        cmocka_unit_test(a_welded_band_spreads_the_collars_step),
        cmocka_unit_test(a_bend_past_what_the_weights_carry_is_reported),
        cmocka_unit_test(every_found_tail_meets_the_bar_or_is_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
