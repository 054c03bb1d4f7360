/* The offline pass (tailbone/appendage.h, SPEC A): appendages are found
 * geometrically, tails get a chain, everything else is left alone, and
 * fix is idempotent. Corpus tests skip when ../shared is absent. */
#include "synth/synth_json.h"
#include "model_cmp.h"
#include "support.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/appendage.h"
#include "tailbone/fix.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"
#include "tailbone/synth.h"

static tb_doc *load(const char *path)
{
    tb_doc *doc = NULL;
    tb_error err = {0};
    if (tb_doc_load(&doc, path, NULL, &err) != TB_OK)
        fail_msg("%s: %s %s", path, err.where, err.message);
    return doc;
}

static tb_model *model_of(const tb_doc *doc)
{
    tb_model *m = NULL;
    tb_error err = {0};
    if (tb_model_load(&m, doc, -1, &err) != TB_OK)
        fail_msg("model: %s", err.message);
    return m;
}

static int count_decision(const tb_appendage_report *r, tb_appendage_decision d)
{
    int n = 0;
    for (int i = 0; i < r->appendage_count; i++)
        n += r->appendages[i].decision == d;
    return n;
}

static const tb_appendage *the_tail(const tb_appendage_report *r)
{
    const tb_appendage *t = NULL;
    for (int i = 0; i < r->appendage_count; i++)
        if (r->appendages[i].decision == TB_DECIDE_CHAIN) {
            assert_null(t); /* exactly one */
            t = &r->appendages[i];
        }
    assert_non_null(t);
    return t;
}

/* Fixes `doc` in memory, saves it, reloads it and checks SPEC A9's promises:
 * valid output, distance down >= 2.5x on every tail, every other vertex's
 * weights unchanged, a second fix changes nothing. Returns the report. */
static void fix_and_check(tb_doc *doc, const tb_appendage_desc *desc, const char *name, tb_appendage_report *rep)
{
    tb_error err = {0};
    tb_model *before = model_of(doc);
    size_t V = before->vertex_count;
    int inf = before->influences;
    float *w0 = malloc(V * (size_t)inf * sizeof *w0);
    uint16_t *j0 = malloc(V * (size_t)inf * sizeof *j0);
    memcpy(w0, before->weights, V * (size_t)inf * sizeof *w0);
    memcpy(j0, before->joints, V * (size_t)inf * sizeof *j0);
    tb_model_free(before);

    assert_int_equal(tb_appendage_fix(rep, doc, desc, &err), TB_OK);
    assert_true(rep->changed);
    const char *path = tbt_tmp_path(name);
    assert_int_equal(tb_doc_save(doc, path, &err), TB_OK);
    tb_doc *back = load(path);
    tb_model *after = model_of(back);
    assert_int_equal(after->vertex_count, V);
    uint8_t *touched = calloc(V, 1);
    for (int i = 0; i < rep->appendage_count; i++) {
        const tb_appendage *a = &rep->appendages[i];
        if (a->decision == TB_DECIDE_UNTOUCHED)
            continue;
        for (size_t k = 0; k < a->vertex_count; k++)
            touched[a->vertices[k]] = 1;
        if (a->decision == TB_DECIDE_CHAIN) {
            float d = tb_weighted_bone_distance(after, a->vertices, a->vertex_count, 0);
            assert_float_equal(d, a->distance_after, 1e-4 * rep->height);
            if (!(a->distance_before >= 2.5f * d))
                fail_msg("%s: weighted bone distance %.4g -> %.4g, less than 2.5x", name, a->distance_before, d);
        }
    }
    /* every vertex outside the repaired appendages keeps its weights */
    int ainf = after->influences;
    for (size_t v = 0; v < V; v++) {
        if (touched[v])
            continue;
        for (int k = 0; k < inf; k++) {
            float wa = k < ainf ? after->weights[v * (size_t)ainf + (size_t)k] : 0;
            uint16_t ja = k < ainf ? after->joints[v * (size_t)ainf + (size_t)k] : 0;
            if (fabsf(wa - w0[v * (size_t)inf + (size_t)k]) > 1e-6f ||
                (wa > 0 && ja != j0[v * (size_t)inf + (size_t)k]))
                fail_msg("%s: vertex %zu outside the tail changed its weights", name, v);
        }
    }
    /* running fix again changes nothing */
    tb_appendage_report again;
    assert_int_equal(tb_appendage_fix(&again, back, desc, &err), TB_OK);
    assert_false(again.changed);
    assert_true(again.existing_chains >= count_decision(rep, TB_DECIDE_CHAIN));
    assert_non_null(strstr(again.message, "nothing to change"));
    tb_appendage_report_free(&again);
    free(touched);
    free(w0);
    free(j0);
    tb_model_free(after);
    tb_doc_free(back);
}

/* ---- pure behaviour ------------------------------------------------------ */

static void defaults_fill_the_spec_numbers(void **state)
{
    (void)state;
    tb_appendage_desc d = tb_appendage_defaults(NULL);
    assert_float_equal(d.far_fraction, 0.07f, 1e-7);
    assert_float_equal(d.extension_fraction, 0.5f, 1e-7);
    assert_float_equal(d.attach_bias, 1.5f, 1e-7);
    assert_float_equal(d.centroid_ratio_min, 0.40f, 1e-7);
    assert_float_equal(d.elongation_min, 1.8f, 1e-7);
    assert_float_equal(d.merge_overlap, 0.5f, 1e-7);
    assert_float_equal(d.length_percentile, 0.99f, 1e-7);
    assert_float_equal(d.segment_fraction, 0.1f, 1e-7);
    assert_int_equal(d.min_bones, 3);
    assert_int_equal(d.max_bones, 8);
    assert_int_equal(d.smoothing_passes, 2);
    tb_appendage_desc mine = {0};
    mine.far_fraction = 0.1f;
    mine.smoothing_passes = -1;
    d = tb_appendage_defaults(&mine);
    assert_float_equal(d.far_fraction, 0.1f, 1e-7);
    assert_int_equal(d.smoothing_passes, 0);
}

static void weld_joins_coincident_positions_only(void **state)
{
    (void)state;
    const float p[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1e-7f, 2, 0, 0, 0, 0, 0.5f};
    uint32_t remap[6];
    assert_int_equal(tb_weld_positions(remap, p, 6, 3, 1e-5f), 4);
    assert_int_equal(remap[0], 0);
    assert_int_equal(remap[1], 1);
    assert_int_equal(remap[2], 0);
    assert_int_equal(remap[3], 1);
    assert_int_equal(remap[4], 4);
    assert_int_equal(remap[5], 5);
}

static void weld_is_linear_on_a_big_grid(void **state)
{
    (void)state;
    size_t n = 400000;
    float *p = malloc(n * 2 * 3 * sizeof *p);
    for (size_t i = 0; i < n; i++) /* every point twice */
        for (int c = 0; c < 2; c++) {
            p[(i * 2 + (size_t)c) * 3] = (float)(i % 100) * 0.01f;
            p[(i * 2 + (size_t)c) * 3 + 1] = (float)(i / 100 % 100) * 0.01f;
            p[(i * 2 + (size_t)c) * 3 + 2] = (float)(i / 10000) * 0.01f;
        }
    uint32_t *remap = malloc(n * 2 * sizeof *remap);
    assert_int_equal(tb_weld_positions(remap, p, n * 2, 3, 1e-4f), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(remap[i * 2 + 1], i * 2);
    free(p);
    free(remap);
}

/* ---- synthetic characters (ground truth from tailbone/synth.h) -------------- */

static void every_synthetic_variant_matches_its_truth(void **state)
{
    (void)state;
    for (int vi = 0; vi < tb_synth_variant_count(); vi++) {
        const char *name = tb_synth_variant_name(vi);
        tb_doc *doc = NULL;
        json_t *truth = NULL;
        tb_error err = {0};
        assert_int_equal(tb_synth_build_json(&doc, name, NULL, &truth, &err), TB_OK);
        tb_model *m = model_of(doc);
        tb_appendage_report rep;
        assert_int_equal(tb_appendage_detect(&rep, m, NULL, &err), TB_OK);
        json_t *apps = json_object_get(truth, "appendages");
        size_t k;
        json_t *a;
        int expected_actions = 0;
        uint8_t *mark = calloc(m->vertex_count, 1);
        json_array_foreach(apps, k, a) {
            const char *cls = json_string_value(json_object_get(a, "class"));
            json_t *verts = json_object_get(a, "vertices");
            size_t n = json_array_size(verts), q;
            json_t *x;
            memset(mark, 0, m->vertex_count);
            json_array_foreach(verts, q, x) mark[json_integer_value(x)] = 1;
            /* the detected appendage holding most of the truth's vertices */
            int best = -1;
            size_t best_in = 0;
            for (int i = 0; i < rep.appendage_count; i++) {
                size_t in = 0;
                for (size_t z = 0; z < rep.appendages[i].vertex_count; z++)
                    in += mark[rep.appendages[i].vertices[z]];
                if (in > best_in) {
                    best_in = in;
                    best = i;
                }
            }
            if (best < 0)
                fail_msg("%s: %s not found", name, json_string_value(json_object_get(a, "name")));
            const tb_appendage *d = &rep.appendages[best];
            const char *got = tb_appendage_decision_name(d->decision);
            if (strcmp(got, cls))
                fail_msg("%s: %s is %s, truth says %s (%s)", name, json_string_value(json_object_get(a, "name")), got,
                         cls, d->reason);
            if (!strcmp(cls, "chain")) {
                /* a welded tail's collar band (the tube next to its weld
                 * ring, docs/synth.md) is scored neither way */
                size_t in_band = 0;
                json_t *bandv = json_object_get(a, "collar_band");
                if (bandv) {
                    memset(mark, 0, m->vertex_count);
                    json_array_foreach(bandv, q, x) mark[json_integer_value(x)] = 1;
                    for (size_t z = 0; z < d->vertex_count; z++)
                        in_band += mark[d->vertices[z]];
                }
                double recall = (double)best_in / (double)n,
                       precision = (double)best_in / (double)(d->vertex_count - in_band);
                if (recall < 0.98 || precision < 0.98)
                    fail_msg("%s: tail recall %.3f precision %.3f", name, recall, precision);
                expected_actions++;
            } else if (!strcmp(cls, "rigid")) {
                expected_actions++;
            }
        }
        free(mark);
        /* nothing else is acted on */
        assert_int_equal(count_decision(&rep, TB_DECIDE_CHAIN) + count_decision(&rep, TB_DECIDE_RIGID),
                         expected_actions);
        tb_appendage_report_free(&rep);
        tb_model_free(m);
        if (expected_actions) {
            char file[96];
            snprintf(file, sizeof file, "synth_%s.fixed.glb", name);
            fix_and_check(doc, NULL, file, &rep);
            tb_appendage_report_free(&rep);
        }
        json_decref(truth);
        tb_doc_free(doc);
    }
}

/* Capes, skirts, ears, hair and tail-less bodies: fix writes OUT as the
 * lossless copy `tailbone copy` makes (the documented choice). */
static void untouched_variants_are_written_as_a_plain_copy(void **state)
{
    (void)state;
    const char *names[] = {"plain", "cape", "skirt", "ears", "hair"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        tb_doc *doc = NULL;
        tb_error err = {0};
        assert_int_equal(tb_synth_build(&doc, names[i], NULL, NULL, &err), TB_OK);
        char in[96], fixed[96], copy[96];
        snprintf(in, sizeof in, "%s.glb", names[i]);
        snprintf(fixed, sizeof fixed, "%s.fix.glb", names[i]);
        snprintf(copy, sizeof copy, "%s.copy.glb", names[i]);
        char pin[4096], pfix[4096], pcopy[4096];
        snprintf(pin, sizeof pin, "%s", tbt_tmp_path(in));
        snprintf(pfix, sizeof pfix, "%s", tbt_tmp_path(fixed));
        snprintf(pcopy, sizeof pcopy, "%s", tbt_tmp_path(copy));
        assert_int_equal(tb_doc_save(doc, pin, &err), TB_OK);
        tb_doc_free(doc);
        char *out = NULL;
        assert_int_equal(tbt_run_cli(&out, "fix '%s' -o '%s'", pin, pfix), 0);
        assert_non_null(strstr(out, "nothing to change"));
        free(out);
        assert_int_equal(tbt_run_cli(NULL, "copy '%s' '%s'", pin, pcopy), 0);
        size_t na, nb;
        uint8_t *a = tbt_read_file(pfix, &na), *b = tbt_read_file(pcopy, &nb);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na);
        free(a);
        free(b);
    }
}

static void rigid_mode_puts_the_tail_on_hips(void **state)
{
    (void)state;
    tb_doc *doc = NULL;
    tb_error err = {0};
    assert_int_equal(tb_synth_build(&doc, "tail_leg", NULL, NULL, &err), TB_OK);
    tb_appendage_desc d = {0};
    d.mode = TB_FIX_RIGID;
    tb_appendage_report rep;
    assert_int_equal(tb_appendage_fix(&rep, doc, &d, &err), TB_OK);
    assert_true(rep.changed);
    assert_int_equal(count_decision(&rep, TB_DECIDE_RIGID), 1);
    tb_model *m = model_of(doc);
    int hips = m->role_joint[TB_ROLE_HIPS];
    for (int i = 0; i < rep.appendage_count; i++) {
        const tb_appendage *a = &rep.appendages[i];
        if (a->decision != TB_DECIDE_RIGID)
            continue;
        for (size_t k = 0; k < a->vertex_count; k++) {
            size_t v = a->vertices[k];
            assert_float_equal(m->weights[v * (size_t)m->influences], 1.0f, 1e-6);
            assert_int_equal(m->skin_joints[m->joints[v * (size_t)m->influences]], hips);
        }
    }
    assert_int_equal(m->skin_joint_count, tb_doc_gltf(doc)->skins[m->skin].joint_count); /* no new joints */
    tb_model_free(m);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

/* The chain's bind pose is consistent in a centimetre armature (scale 0.01
 * above the skeleton): at rest every new joint's skin matrix is its
 * parent's, so the tail does not move when the file is only re-saved. */
static void chain_rest_pose_skins_to_bind_in_a_cm_armature(void **state)
{
    (void)state;
    tb_doc *doc = NULL;
    tb_error err = {0};
    assert_int_equal(tb_synth_build(&doc, "tail_hips", NULL, NULL, &err), TB_OK);
    tb_appendage_report rep;
    assert_int_equal(tb_appendage_fix(&rep, doc, NULL, &err), TB_OK);
    tb_model *m = model_of(doc);
    assert_float_equal(m->armature_scale, 0.01f, 1e-5);
    float(*world)[16] = malloc((size_t)m->skel.joint_count * sizeof *world);
    tb_local_to_world(&m->skel, m->skel.rest_local, NULL, world);
    /* rest skin matrices of the tail joints equal Hips' */
    int hips = m->role_joint[TB_ROLE_HIPS], khips = -1;
    for (int k = 0; k < m->skin_joint_count; k++)
        if (m->skin_joints[k] == hips)
            khips = k;
    float ref[16];
    tb_mat4_mul(ref, world[hips], m->inverse_bind[khips]);
    int tails = 0;
    for (int k = 0; k < m->skin_joint_count; k++) {
        int j = m->skin_joints[k], c, idx;
        if (!tb_tail_name_parse(m->skel.names[j], &c, &idx))
            continue;
        tails++;
        assert_int_equal(c, 0);
        float sm[16];
        tb_mat4_mul(sm, world[j], m->inverse_bind[k]);
        for (int e = 0; e < 16; e++)
            assert_float_equal(sm[e], ref[e], 1e-3 * (fabsf(ref[e]) + 1));
        /* pure translation: identity rotation, unit scale */
        assert_float_equal(m->skel.rest_local[j].r[3], 1.0f, 1e-6);
        assert_float_equal(m->skel.rest_local[j].s[0], 1.0f, 1e-6);
    }
    assert_int_equal(tails, the_tail(&rep)->bone_count + 1);
    free(world);
    tb_model_free(m);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

/* ---- real files ---------------------------------------------------------- */

static void wolf_tail_on_hips_is_found_and_chained(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "characters/banter_Wolf.glb");
    if (!path)
        tbt_skip();
    tb_doc *doc = load(path);
    tb_appendage_report rep;
    fix_and_check(doc, NULL, "wolf.fixed.glb", &rep);
    const tb_appendage *t = the_tail(&rep);
    assert_true(t->vertex_count >= 550 && t->vertex_count <= 750);
    /* the tail is six separate pieces, none touching the body's band; its
     * first piece meets the back at 1.18 m, above Spine (1.12) and nearer it
     * than 1.5 x its distance to Hips (1.02): the chain hangs from Spine */
    assert_string_equal(t->attach_name, "Spine");
    assert_string_equal(t->chain_parent, "Spine");
    assert_true(t->elongation >= 1.8f);
    assert_true(t->bone_count >= 3 && t->bone_count <= 8);
    assert_int_equal(count_decision(&rep, TB_DECIDE_RIGID), 0);
    printf("wolf: %zu tail vertices, L %.3f, K %d, distance %.3f -> %.3f\n", t->vertex_count, t->length,
           t->bone_count, t->distance_before, t->distance_after);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

/* The report of model m with detection on `threads` threads, as JSON text. */
static char *report_on_threads(const tb_model *m, int threads)
{
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    d.threads = threads;
    tb_appendage_report rep;
    tb_error err = {0};
    if (tb_appendage_detect(&rep, m, &d, &err) != TB_OK)
        fail_msg("detect on %d thread(s): %s", threads, err.message);
    char *text = tb_appendage_report_json_text(&rep, 0);
    tb_appendage_report_free(&rep);
    assert_non_null(text);
    return text;
}

/* Detection spreads its rays, distances and first stages over threads
 * (tb_appendage_desc.threads): the report is the same bytes on one, two and
 * three threads, on every synthetic variant (about 5k welded vertices: the
 * rays and distances split) and on the Wolf and the Bone Demon (13k and
 * more: the stage pairs too) where ../shared is. */
static void detection_is_the_same_on_any_thread_count(void **state)
{
    (void)state;
    int n = tb_synth_variant_count();
    const char *corpus[2] = {"characters/banter_Wolf.glb", "characters/banter_Bone_Demon.glb"};
    for (int i = 0; i < n + 2; i++) {
        tb_doc *doc = NULL;
        tb_error err = {0};
        if (i < n) {
            assert_int_equal(tb_synth_build(&doc, tb_synth_variant_name(i), NULL, NULL, &err), TB_OK);
        } else {
            tbt_path path_buf;
            const char *path = tbt_corpus_file(&path_buf, corpus[i - n]);
            if (!path)
                continue;
            doc = load(path);
        }
        tb_model *m = model_of(doc);
        char *one = report_on_threads(m, 1);
        for (int t = 2; t <= 3; t++) {
            char *more = report_on_threads(m, t);
            if (strcmp(one, more) != 0)
                fail_msg("%s: the report on %d threads differs from one thread's",
                         i < n ? tb_synth_variant_name(i) : corpus[i - n], t);
            free(more);
        }
        free(one);
        tb_model_free(m);
        tb_doc_free(doc);
    }
}

static void bone_demon_tail_is_found_and_chained(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "characters/banter_Bone_Demon.glb");
    if (!path)
        tbt_skip();
    tb_doc *doc = load(path);
    tb_model *m = model_of(doc);
    int spine2 = m->role_joint[TB_ROLE_SPINE2];
    assert_true(spine2 >= 0);
    tb_appendage_report rep;
    fix_and_check(doc, NULL, "demon.fixed.glb", &rep);
    const tb_appendage *t = the_tail(&rep);
    assert_true(t->vertex_count >= 1000 && t->vertex_count <= 1300);
    /* its source weights: all on Spine2 (the rigger's choice the repair
     * undoes), read from the unrepaired model */
    for (size_t i = 0; i < t->vertex_count; i++) {
        size_t v = t->vertices[i];
        float on = 0;
        for (int k = 0; k < m->influences; k++)
            if (m->skin_joints[m->joints[v * (size_t)m->influences + (size_t)k]] == spine2)
                on += m->weights[v * (size_t)m->influences + (size_t)k];
        if (on < 0.99f)
            fail_msg("demon tail vertex %zu has %.3f of its weight on Spine2", v, on);
    }
    tb_model_free(m);
    /* its tip on the ground */
    float tip_y = t->chain_joints[t->bone_count][1];
    assert_true(tip_y < 0.15f * rep.height);
    printf("demon: %zu tail vertices on %s, L %.3f, K %d, distance %.3f -> %.3f\n", t->vertex_count,
           t->chain_parent, t->length, t->bone_count, t->distance_before, t->distance_after);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

static void tailless_characters_get_no_chain(void **state)
{
    (void)state;
    const char *files[] = {"clips/threejs_Soldier_rexport.glb", "clips/Xbot_agree_run_walk.glb"};
    int ran = 0;
    for (size_t i = 0; i < 2; i++) {
        tbt_path path_buf;
        const char *path = tbt_corpus_file(&path_buf, files[i]);
        if (!path)
            continue;
        ran++;
        tb_doc *doc = load(path);
        tb_appendage_report rep;
        tb_error err = {0};
        assert_int_equal(tb_appendage_fix(&rep, doc, NULL, &err), TB_OK);
        assert_false(rep.changed);
        assert_int_equal(count_decision(&rep, TB_DECIDE_CHAIN), 0);
        assert_int_equal(count_decision(&rep, TB_DECIDE_RIGID), 0);
        tb_appendage_report_free(&rep);
        tb_doc_free(doc);
    }
    if (!ran)
        tbt_skip();
}

/* Moves every weight of joints named Tail<N> onto `to` (SPEC A's Fox
 * experiment: an auto-rigger without a tail bone). */
static void strip_tail_weights_matching(tb_doc *doc, const char *prefix, const char *to);

/* The artist's Tail1..Tail8 weights onto `to`. */
static void strip_tail_weights(tb_doc *doc, const char *to)
{
    strip_tail_weights_matching(doc, NULL, to);
}

/* Weights of joints named prefix* (NULL: "Tail" + a digit) onto `to`. */
static void strip_tail_weights_matching(tb_doc *doc, const char *prefix, const char *to)
{
    tb_model *m = model_of(doc);
    const tb_gltf *g = tb_doc_gltf(doc);
    int target = -1;
    uint8_t *is_tail = calloc((size_t)m->skin_joint_count, 1);
    for (int k = 0; k < m->skin_joint_count; k++) {
        const char *n = m->skel.names[m->skin_joints[k]];
        if (n && !strcmp(n, to))
            target = k;
        if (n && (prefix ? !strncmp(n, prefix, strlen(prefix))
                         : !strncmp(n, "Tail", 4) && n[4] >= '1' && n[4] <= '9'))
            is_tail[k] = 1;
    }
    assert_true(target >= 0);
    tb_error err = {0};
    for (int p = 0; p < m->prim_count; p++) {
        const tb_gltf_primitive *pr = &g->meshes[m->prims[p].mesh].primitives[m->prims[p].primitive];
        size_t vc = m->prims[p].vertex_count;
        uint32_t *j = malloc(vc * 4 * sizeof *j);
        float *w = malloc(vc * 4 * sizeof *w);
        assert_int_equal(tb_accessor_read_uints(doc, pr->joints[0], j, vc * 4, &err), TB_OK);
        assert_int_equal(tb_accessor_read_floats(doc, pr->weights[0], w, vc * 4, &err), TB_OK);
        for (size_t v = 0; v < vc; v++) {
            float moved = 0;
            int slot = -1;
            for (int q = 0; q < 4; q++) {
                if (w[v * 4 + (size_t)q] > 0 && is_tail[j[v * 4 + (size_t)q]]) {
                    moved += w[v * 4 + (size_t)q];
                    w[v * 4 + (size_t)q] = 0;
                    j[v * 4 + (size_t)q] = 0;
                }
                if (w[v * 4 + (size_t)q] > 0 && j[v * 4 + (size_t)q] == (uint32_t)target)
                    slot = q;
            }
            if (moved > 0) {
                for (int q = 0; q < 4 && slot < 0; q++)
                    if (w[v * 4 + (size_t)q] == 0)
                        slot = q;
                j[v * 4 + (size_t)slot] = (uint32_t)target;
                w[v * 4 + (size_t)slot] += moved;
            }
        }
        int jct = g->accessors[pr->joints[0]].component_type;
        uint16_t *j16 = malloc(vc * 4 * sizeof *j16);
        uint8_t *j8 = malloc(vc * 4);
        for (size_t i = 0; i < vc * 4; i++) {
            j16[i] = (uint16_t)j[i];
            j8[i] = (uint8_t)j[i];
        }
        assert_int_equal(g->accessors[pr->weights[0]].component_type, TB_COMPONENT_FLOAT);
        assert_int_equal(tb_doc_replace_accessor_data(doc, pr->joints[0],
                                                      jct == TB_COMPONENT_UNSIGNED_BYTE ? (void *)j8 : (void *)j16,
                                                      jct, &err),
                         TB_OK);
        assert_int_equal(tb_doc_replace_accessor_data(doc, pr->weights[0], w, TB_COMPONENT_FLOAT, &err), TB_OK);
        free(j);
        free(w);
        free(j16);
        free(j8);
    }
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    free(is_tail);
    tb_model_free(m);
}

static float seg_dist(const float *p, const float *a, const float *b)
{
    float ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    float l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    float t = l2 > 0 ? (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / l2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float d[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* The quaternius Fox has an artist's tail chain Tail1..Tail8 under Back.
 * Strip its weights onto Back, rebuild with the pass (the pelvis named by
 * the caller: no Mixamo names), and compare the joints with the artist's. */
static void fox_rebuilt_chain_follows_the_artists(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "reference/quaternius_Fox.glb");
    if (!path)
        tbt_skip();
    tb_doc *doc = load(path);
    /* unnamed layout: the pelvis comes from the skeleton's shape (the hip
     * end of the spine, where the hind legs leave it), no --pelvis needed */
    {
        tb_model *m = model_of(doc);
        tb_appendage_report rep;
        tb_error err = {0};
        assert_int_equal(tb_appendage_detect(&rep, m, NULL, &err), TB_OK);
        assert_string_equal(rep.pelvis_name, "Back");
        tb_appendage_report_free(&rep);
        tb_model_free(m);
    }
    strip_tail_weights(doc, "Back");
    tb_model *m = model_of(doc);
    /* the artist's chain, in bind space, with Tail8 extended by half its bone */
    float art[10][3];
    int na = 0;
    for (int i = 1; i <= 8; i++) {
        char name[16];
        snprintf(name, sizeof name, "Tail%d", i);
        for (int j = 0; j < m->skel.joint_count; j++)
            if (m->skel.names[j] && !strcmp(m->skel.names[j], name))
                memcpy(art[na++], &m->skel.bind_world[j][12], sizeof art[0]);
    }
    assert_int_equal(na, 8);
    for (int c = 0; c < 3; c++)
        art[8][c] = art[7][c] + 0.5f * (art[7][c] - art[6][c]);
    na = 9;
    float art_len = 0;
    for (int i = 1; i < na; i++)
        art_len += sqrtf((art[i][0] - art[i - 1][0]) * (art[i][0] - art[i - 1][0]) +
                         (art[i][1] - art[i - 1][1]) * (art[i][1] - art[i - 1][1]) +
                         (art[i][2] - art[i - 1][2]) * (art[i][2] - art[i - 1][2]));
    tb_model_free(m);
    tb_appendage_desc d = {0};
    d.pelvis_joint = "Back";
    tb_appendage_report rep;
    fix_and_check(doc, &d, "fox.fixed.glb", &rep);
    const tb_appendage *t = the_tail(&rep);
    assert_string_equal(t->chain_parent, "Back");
    double sum = 0;
    for (int i = 0; i <= t->bone_count; i++) {
        float best = INFINITY;
        for (int s = 1; s < na; s++) {
            float dd = seg_dist(t->chain_joints[i], art[s - 1], art[s]);
            best = dd < best ? dd : best;
        }
        sum += best;
    }
    double mean = sum / (t->bone_count + 1);
    printf("fox: %zu tail vertices, L %.4f (artist chain %.4f), K %d, mean joint distance %.4f = %.3f of L; "
           "distance %.4f -> %.4f\n",
           t->vertex_count, t->length, art_len, t->bone_count, mean, mean / t->length, t->distance_before,
           t->distance_after);
    assert_true(mean / t->length < 0.08); /* measured 0.034 */
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

/* ---- CLI ---------------------------------------------------------------------- */

static void cli_detect_and_fix_report_and_refuse_bad_usage(void **state)
{
    (void)state;
    tb_doc *doc = NULL;
    tb_error err = {0};
    assert_int_equal(tb_synth_build(&doc, "tail_back", NULL, NULL, &err), TB_OK);
    char in[4096], out[4096], rep[4096];
    snprintf(in, sizeof in, "%s", tbt_tmp_path("cli_tail_back.glb"));
    snprintf(out, sizeof out, "%s", tbt_tmp_path("cli_tail_back.fixed.glb"));
    snprintf(rep, sizeof rep, "%s", tbt_tmp_path("cli_tail_back.report.json"));
    assert_int_equal(tb_doc_save(doc, in, &err), TB_OK);
    tb_doc_free(doc);
    size_t n0;
    uint8_t *before = tbt_read_file(in, &n0);

    char *text = NULL;
    assert_int_equal(tbt_run_cli(&text, "detect '%s' --json", in), 0);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    json_t *apps = json_object_get(j, "appendages");
    int chains = 0;
    size_t i;
    json_t *a;
    json_array_foreach(apps, i, a) {
        if (!strcmp(json_string_value(json_object_get(a, "decision")), "chain")) {
            chains++;
            assert_string_equal(json_string_value(json_object_get(a, "kind")), "tail");
            assert_non_null(json_object_get(a, "reason"));
            assert_true(json_is_number(json_object_get(a, "elongation")));
            assert_true(json_is_number(json_object_get(a, "centroid_ratio")));
            assert_true(json_is_number(json_object_get(a, "taper")));
            assert_true(json_integer_value(json_object_get(a, "bones")) >= 3);
        }
    }
    assert_int_equal(chains, 1);
    json_decref(j);
    free(text);

    assert_int_equal(tbt_run_cli(&text, "fix '%s' -o '%s' --report '%s'", in, out, rep), 0);
    assert_non_null(strstr(text, "tail"));
    free(text);
    json_t *r = json_load_file(rep, 0, &je);
    assert_non_null(r);
    assert_true(json_is_true(json_object_get(r, "changed")));
    json_decref(r);
    /* the input is never modified */
    size_t n1;
    uint8_t *after = tbt_read_file(in, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);

    /* a report that cannot be written: one line naming it, exit 1, and neither
     * the report nor the repaired file (nor a temporary) left behind */
    char out2[4096], bad[4096];
    snprintf(out2, sizeof out2, "%s", tbt_tmp_path("cli_tail_back.unwritten.glb"));
    snprintf(bad, sizeof bad, "%s/no-such-dir/r.json", tbt_tmp_dir());
    assert_int_equal(tbt_run_cli(&text, "fix '%s' -o '%s' --report '%s' -q", in, out2, bad), 1);
    assert_non_null(strstr(text, bad));
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 1);
    free(text);
    assert_false(tbt_file_exists(out2));
    assert_false(tbt_file_exists(bad));
    DIR *dir = opendir(tbt_tmp_dir());
    assert_non_null(dir);
    for (struct dirent *e = readdir(dir); e; e = readdir(dir))
        if (strstr(e->d_name, ".tmp-"))
            fail_msg("temporary file left behind: %s", e->d_name);
    closedir(dir);

    assert_int_equal(tbt_run_cli(NULL, "fix '%s'", in), 2);
    assert_int_equal(tbt_run_cli(NULL, "fix '%s' -o '%s' --mode sideways", in, out), 2);
    assert_int_equal(tbt_run_cli(NULL, "detect"), 2);
    assert_int_equal(tbt_run_cli(NULL, "detect '%s' --bogus", in), 2);
    assert_int_equal(tbt_run_cli(NULL, "detect /nonexistent.glb"), 1);
    assert_int_equal(tbt_run_cli(NULL, "fix --help"), 0);
}

/* three.js and other exporters write one skin per mesh over one skeleton:
 * the fur shell of tail_fur gets its own copy of the skin here. */
static void one_skin_per_mesh_is_one_skeleton(void **state)
{
    (void)state;
    tb_doc *doc;
    tb_error err;
    tb_appendage_report one, two;
    assert_int_equal(tb_synth_build(&doc, "tail_fur", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_appendage_fix(&one, doc, NULL, &err), TB_OK);
    tb_doc_free(doc);

    assert_int_equal(tb_synth_build(&doc, "tail_fur", NULL, NULL, &err), TB_OK);
    json_t *root = tb_doc_json(doc);
    json_t *skins = json_object_get(root, "skins");
    json_array_append_new(skins, json_deep_copy(json_array_get(skins, 0)));
    json_t *nodes = json_object_get(root, "nodes");
    int moved = 0;
    size_t i;
    json_t *nd;
    json_array_foreach(nodes, i, nd) {
        if (json_object_get(nd, "skin") && json_object_get(nd, "mesh") && moved++ == 1)
            json_object_set_new(nd, "skin", json_integer(1)); /* the second skinned mesh node */
    }
    assert_true(moved >= 2);
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    tb_model *m;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    assert_int_equal(m->skin_count, 2);
    tb_model_free(m);
    assert_int_equal(tb_appendage_fix(&two, doc, NULL, &err), TB_OK);
    /* the same tail, with both shells, and the same repair */
    int ta = -1, tb = -1;
    for (int k = 0; k < one.appendage_count; k++)
        if (one.appendages[k].decision == TB_DECIDE_CHAIN)
            ta = k;
    for (int k = 0; k < two.appendage_count; k++)
        if (two.appendages[k].decision == TB_DECIDE_CHAIN)
            tb = k;
    assert_true(ta >= 0 && tb >= 0);
    assert_int_equal(one.appendages[ta].vertex_count, two.appendages[tb].vertex_count);
    assert_int_equal(one.appendages[ta].bone_count, two.appendages[tb].bone_count);
    assert_float_equal(one.appendages[ta].distance_after, two.appendages[tb].distance_after, 1e-4);
    /* both skins carry the new joints and the same inverse bind matrices */
    skins = json_object_get(tb_doc_json(doc), "skins");
    assert_true(json_equal(json_object_get(json_array_get(skins, 0), "joints"),
                           json_object_get(json_array_get(skins, 1), "joints")));
    assert_true(json_equal(json_object_get(json_array_get(skins, 0), "inverseBindMatrices"),
                           json_object_get(json_array_get(skins, 1), "inverseBindMatrices")));
    const char *out = tbt_tmp_path("two_skins.glb");
    assert_int_equal(tb_doc_save(doc, out, &err), TB_OK);
    tb_doc *back;
    assert_int_equal(tb_doc_load(&back, out, NULL, &err), TB_OK);
    tb_doc_free(back);
    tb_appendage_report_free(&one);
    tb_appendage_report_free(&two);
    tb_doc_free(doc);
}

/* Tail vertices carried by one tail bone alone (weight > 0.99). */
static size_t single_bone_tail_vertices(tb_doc *doc)
{
    tb_model *m;
    tb_error err;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    size_t n = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        for (int k = 0; k < m->influences; k++) {
            int j = m->skin_joints[m->joints[v * (size_t)m->influences + (size_t)k]];
            if (m->weights[v * (size_t)m->influences + (size_t)k] > 0.99f && tb_tail_name_parse(m->skel.names[j], NULL, NULL))
                n++;
        }
    tb_model_free(m);
    return n;
}

static void wider_blend_zone_blends_across_the_whole_segment(void **state)
{
    (void)state;
    tb_doc *doc;
    tb_error err;
    tb_appendage_report rep;
    /* SPEC A9: one bone alone over the middle half of each segment */
    assert_int_equal(tb_synth_build(&doc, "tail_leg", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_appendage_fix(&rep, doc, NULL, &err), TB_OK);
    size_t spec = single_bone_tail_vertices(doc);
    float spec_after = rep.appendages[rep.appendage_count - 1].distance_after;
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
    /* blend_zone 0.5: only the exact middle of a segment is on one bone, and
     * the tip half of the last segment (Tail_End carries no weight) */
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    d.blend_zone = 0.5f;
    assert_int_equal(tb_synth_build(&doc, "tail_leg", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_appendage_fix(&rep, doc, &d, &err), TB_OK);
    size_t wide = single_bone_tail_vertices(doc);
    print_message("single-bone tail vertices: SPEC zone %zu, wide zone %zu\n", spec, wide);
    assert_true(spec > 100);
    assert_true(wide * 2 < spec);
    /* the tail still follows its bones as closely */
    float wide_after = rep.appendages[rep.appendage_count - 1].distance_after;
    assert_true(wide_after < 1.5f * spec_after);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

/* Joint of every tail-shell vertex of the fixed doc when it has one
 * influence (>= 0.999), else -1; counts vertices with several influences. */
static void tail_piece_binding(tb_doc *doc, const tb_appendage *t, int *distinct_bones, size_t *multi,
                               int *triangles_split)
{
    tb_model *m = model_of(doc);
    int J = m->skel.joint_count;
    int *seen = calloc((size_t)J + 1, sizeof *seen);
    int *bone_of = malloc(m->vertex_count * sizeof *bone_of);
    uint8_t *in_tail = calloc(m->vertex_count, 1);
    for (size_t k = 0; k < t->vertex_count; k++)
        in_tail[t->vertices[k]] = 1;
    *distinct_bones = 0;
    *multi = 0;
    *triangles_split = 0;
    for (size_t v = 0; v < m->vertex_count; v++) {
        bone_of[v] = -1;
        if (!in_tail[v])
            continue;
        int n = 0, j = -1;
        for (int k = 0; k < m->influences; k++) {
            float w = m->weights[v * (size_t)m->influences + (size_t)k];
            if (w > 0.001f) {
                n++;
                if (w >= 0.999f)
                    j = m->skin_joints[m->joints[v * (size_t)m->influences + (size_t)k]];
            }
        }
        if (n > 1 || j < 0) {
            (*multi)++;
            continue;
        }
        bone_of[v] = j;
        if (!seen[j] && tb_tail_name_parse(m->skel.names[j], NULL, NULL))
            (*distinct_bones)++;
        seen[j] = 1;
    }
    for (size_t q = 0; q < m->triangle_count; q++) {
        const uint32_t *c = m->triangles + q * 3;
        if (in_tail[c[0]] && in_tail[c[1]] && in_tail[c[2]] &&
            (bone_of[c[0]] != bone_of[c[1]] || bone_of[c[1]] != bone_of[c[2]]))
            (*triangles_split)++;
    }
    free(seen);
    free(bone_of);
    free(in_tail);
    tb_model_free(m);
}

/* A low-poly character built from rigid pieces, its tail a row of separate
 * pieces: one bone per piece (every piece keeps its shape and follows its
 * bone), unless the tail has a long piece, the body is smoothly skinned, or
 * the user asks for smooth weights. */
static void segmented_tail_gets_one_bone_per_piece(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *doc;
    tb_appendage_report rep;
    assert_int_equal(tb_synth_build(&doc, "tail_segmented", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_appendage_fix(&rep, doc, NULL, &err), TB_OK);
    const tb_appendage *t = the_tail(&rep);
    assert_true(rep.body_single_bone > 0.999f);
    assert_int_equal(t->piece_count, 8);
    assert_true(t->pieces_cover);
    assert_true(t->rigid_pieces);
    assert_true(t->piece_span > 0.05f && t->piece_span < 0.3f);
    int bones, split;
    size_t multi;
    tail_piece_binding(doc, t, &bones, &multi, &split);
    print_message("segmented: %zu pieces, longest %.2f L, %d tail bones used, K %d\n", t->piece_count,
                  (double)t->piece_span, bones, t->bone_count);
    assert_int_equal(multi, 0);
    assert_int_equal(split, 0);
    assert_true(bones >= t->bone_count - 1); /* the pieces spread along the chain */
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);

    /* smooth weights on request, or when a piece is longer than allowed, or
     * when the body is not rigid pieces */
    tb_appendage_desc d[3];
    memset(d, 0, sizeof d);
    d[0].smooth_pieces = 1;
    d[1].piece_span_max = 0.05f;
    d[2].rigid_body_min = 1.5f;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tb_synth_build(&doc, "tail_segmented", NULL, NULL, &err), TB_OK);
        assert_int_equal(tb_appendage_fix(&rep, doc, &d[i], &err), TB_OK);
        t = the_tail(&rep);
        assert_false(t->rigid_pieces);
        tail_piece_binding(doc, t, &bones, &multi, &split);
        assert_true(multi > 100);
        tb_appendage_report_free(&rep);
        tb_doc_free(doc);
    }
    /* a smoothly skinned body; a tail of one shell; fur over skin (two whole-length shells) */
    const char *smooth[] = {"tail_leg", "tail_fur"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tb_synth_build(&doc, smooth[i], NULL, NULL, &err), TB_OK);
        assert_int_equal(tb_appendage_fix(&rep, doc, NULL, &err), TB_OK);
        t = the_tail(&rep);
        assert_true(rep.body_single_bone < 0.9f);
        assert_false(t->rigid_pieces);
        print_message("%s: %zu piece(s), cover %d, longest %.2f L, body %.2f single-bone\n", smooth[i], t->piece_count,
                      t->pieces_cover, (double)t->piece_span, (double)rep.body_single_bone);
        tb_appendage_report_free(&rep);
        tb_doc_free(doc);
    }
}

/* A very low-poly quadruped whose trunk is thicker than 7% of its height all
 * round: its far skin is most of the mesh. Once its tail bones' weights are
 * put on the hips, nothing may rebind the trunk to a chain. */
static void far_skin_that_is_most_of_the_body_is_never_rebound(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "reference/khronos_Fox.glb");
    if (!path)
        tbt_skip();
    tb_doc *doc = load(path);
    strip_tail_weights_matching(doc, "b_Tail", "b_Hip_01");
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    d.pelvis_joint = "b_Hip_01";
    tb_appendage_report rep;
    tb_error err = {0};
    assert_int_equal(tb_appendage_fix(&rep, doc, &d, &err), TB_OK);
    assert_false(rep.changed);
    assert_int_equal(count_decision(&rep, TB_DECIDE_CHAIN) + count_decision(&rep, TB_DECIDE_RIGID), 0);
    int big = 0;
    for (int i = 0; i < rep.appendage_count; i++)
        if (rep.appendages[i].vertex_count * 2 > rep.vertex_count) {
            assert_int_equal(rep.appendages[i].kind, TB_KIND_BODY);
            big++;
        }
    assert_int_equal(big, 1);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

/* A tail welded into the body: the collar keeps the body's weights (SPEC
 * A9) and the tail's first half segment blends from them to the chain's;
 * with collar_band < 0 the SPEC's weights as written. A separate shell has
 * no welded collar. */
static void welded_tail_blends_from_its_collar(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        tb_error err = {0};
        tb_doc *doc;
        tb_appendage_desc d;
        memset(&d, 0, sizeof d);
        if (variant == 1)
            d.collar_band = -1;
        assert_int_equal(tb_synth_build(&doc, variant == 2 ? "tail_leg" : "tail_welded", NULL, NULL, &err), TB_OK);
        tb_appendage_report rep;
        assert_int_equal(tb_appendage_fix(&rep, doc, &d, &err), TB_OK);
        const tb_appendage *t = the_tail(&rep);
        tb_model *m = model_of(doc);
        float seg = t->length / (float)t->bone_count;
        size_t blended = 0, blended_far = 0;
        for (size_t k = 0; k < t->vertex_count; k++) {
            size_t v = t->vertices[k];
            int other = 0;
            for (int q = 0; q < m->influences; q++) {
                float w = m->weights[v * (size_t)m->influences + (size_t)q];
                int j = m->skin_joints[m->joints[v * (size_t)m->influences + (size_t)q]];
                other |= w > 0 && j != m->role_joint[TB_ROLE_HIPS] && !tb_tail_name_parse(m->skel.names[j], NULL, NULL);
            }
            const float *p = m->positions + v * 3;
            float dx = p[0] - t->chain_joints[0][0], dy = p[1] - t->chain_joints[0][1], dz = p[2] - t->chain_joints[0][2];
            blended += other;
            blended_far += other && sqrtf(dx * dx + dy * dy + dz * dz) > 1.5f * seg;
        }
        print_message("%s collar_band %g: %zu welded collar vertices, %zu tail vertices with body weights (%zu beyond "
                      "1.5 segments of J_0)\n",
                      variant == 2 ? "tail_leg" : "tail_welded", (double)d.collar_band, t->welded_collar, blended,
                      blended_far);
        if (variant == 0) {
            assert_true(t->welded_collar >= 8);
            assert_true(blended >= 16);
            assert_int_equal(blended_far, 0);
        } else if (variant == 1) {
            assert_true(t->welded_collar >= 8);
            assert_int_equal(blended, 0);
        } else {
            assert_int_equal(t->welded_collar, 0);
            assert_int_equal(blended, 0);
        }
        tb_model_free(m);
        tb_appendage_report_free(&rep);
        tb_doc_free(doc);
    }
}

/* A real welded tail: the Quaternius fox is one surface, so once its tail
 * weights are put on its back bone the repaired tail meets the body at a
 * welded collar. The SPEC's weights as written tear that seam badly; the
 * whole job (tb_fix_run) blends the collar and searches zone and band, and
 * keeps weights whose tail and SPEC C seam tear nowhere on Walk and Gallop,
 * and that tear less than its first try with the repaired skin counted
 * (docs/fix.md, session 13b: it kept zone 0.25, band 0.5, 2.4% of the
 * repaired/body edges torn, over its first try, zone 0.5, band 0.73, 3.3%;
 * a band past 0.5 was kept when it did not score the band's inner edges.
 * Since session 15's score (torn samples over every repaired edge first)
 * it keeps zone 0.25, band 2: 1.0% against the first try's 3.4%). */
static void welded_fox_seam_stops_tearing_with_the_collar_band_search(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "reference/quaternius_Fox.glb");
    if (!path)
        tbt_skip();
    tb_doc *doc = load(path);
    strip_tail_weights(doc, "Back");
    const char *only[] = {"Walk", "Gallop", NULL};
    float seam_worst[2];
    for (int pass = 0; pass < 2; pass++) {
        tb_fix_desc d;
        memset(&d, 0, sizeof d);
        d.repair.pelvis_joint = "Back";
        d.only = only;
        if (pass == 0)
            d.repair.collar_band = -1; /* SPEC A9 as written: no blend at the collar */
        tb_doc *out = NULL;
        tb_fix_report rep;
        tb_error err = {0};
        assert_int_equal(tb_fix_run(&out, doc, &d, &rep, &err), TB_OK);
        assert_int_equal(rep.stretch_count, 2);
        seam_worst[pass] = 0;
        float tail_worst = 0;
        for (int c = 0; c < rep.stretch_count; c++) {
            float sm = rep.stretch[c].result.seam.torn_frac, tl = rep.stretch[c].result.tail.torn_frac;
            assert_true(rep.stretch[c].result.seam.edges > 0); /* welded: there is a seam */
            seam_worst[pass] = sm > seam_worst[pass] ? sm : seam_worst[pass];
            tail_worst = tl > tail_worst ? tl : tail_worst;
        }
        print_message("welded fox, %s: collar band %.2g, zone %.3g, worst seam torn %.1f%%, tail %.1f%%\n",
                      pass ? "search" : "no collar blend", (double)rep.collar_band, (double)rep.blend_zone,
                      100.0 * seam_worst[pass], 100.0 * tail_worst);
        if (pass == 1) {
            /* the search ran, and what it kept tears less than the weights
             * first written (its first try), the repaired skin counted */
            float kept = 0;
            for (int c = 0; c < rep.stretch_count; c++) {
                const tb_fix_stretch *s = &rep.stretch[c];
                float f[3] = {tb_fix_torn(s), s->repaired_seam.samples ? s->repaired_seam.torn_frac : 0,
                              s->repaired_inner.samples ? s->repaired_inner.torn_frac : 0};
                for (int k = 0; k < 3; k++)
                    kept = f[k] > kept ? f[k] : kept;
            }
            print_message("welded fox, search: %d tries, the first %.1f%% torn (repaired skin counted), the kept %.1f%%\n",
                          rep.zone_try_count, 100.0 * (rep.zone_try_count ? rep.zone_tries[0].worst_torn : 0),
                          100.0 * kept);
            assert_true(rep.zone_try_count > 1);
            assert_true(kept < rep.zone_tries[0].worst_torn);
            assert_float_equal(seam_worst[1], 0, 0);
            assert_float_equal(tail_worst, 0, 0);
        }
        tb_fix_report_free(&rep);
        tb_doc_free(out);
    }
    assert_true(seam_worst[0] > 0.02f); /* tears: 4.9% of seam edges since the tube end trim */
    tb_doc_free(doc);
}

/* Per model vertex, weight per joint node name (for comparing files whose
 * skins list the joints differently). */
static double weight_on(const tb_model *m, size_t v, const char *name)
{
    double s = 0;
    for (int k = 0; k < m->influences; k++) {
        float w = m->weights[v * (size_t)m->influences + (size_t)k];
        const char *n = m->skel.names[m->skin_joints[m->joints[v * (size_t)m->influences + (size_t)k]]];
        if (w > 0 && n && !strcmp(n, name))
            s += w;
    }
    return s;
}

/* The fur of tail_fur in a skin of its own with only the joints it uses:
 * it is still part of the character, found with the skin shell, and gets
 * the same chain weights as when it shares the body's skin; its skin gains
 * the tail joints (with their inverse bind matrices); a second fix changes
 * nothing. */
static void tail_in_its_own_subset_skin_is_repaired_like_the_rest(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *a, *b;
    assert_int_equal(tb_synth_build(&a, "tail_fur", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_synth_build(&b, "tail_fur", NULL, NULL, &err), TB_OK);
    int whole = tb_doc_gltf(b)->skins[0].joint_count;
    tbt_give_own_subset_skin(b, "TailFur", 1);
    int subset = tb_doc_gltf(b)->skin_count - 1, before = tb_doc_gltf(b)->skins[subset].joint_count;
    assert_true(before > 2 && before < whole); /* a subset of the body's joints */
    tb_model *mb = model_of(b);
    assert_int_equal(mb->skin_count, 2);
    assert_non_null(mb->joint_maps[1]);
    tb_model_free(mb);
    tb_appendage_report ra, rb;
    assert_int_equal(tb_appendage_fix(&ra, a, NULL, &err), TB_OK);
    fix_and_check(b, NULL, "own_skin.fixed.glb", &rb);
    const tb_appendage *ta = the_tail(&ra), *tb = the_tail(&rb);
    assert_int_equal(ta->vertex_count, tb->vertex_count);
    assert_int_equal(ta->bone_count, tb->bone_count);
    tb_doc *back = load(tbt_tmp_path("own_skin.fixed.glb"));
    const tb_gltf *g = tb_doc_gltf(back);
    assert_true(g->skins[subset].joint_count > before);
    assert_true(g->accessors[g->skins[subset].inverse_bind_matrices].count >= (size_t)g->skins[subset].joint_count);
    tb_model *m1 = model_of(a), *m2 = model_of(back);
    assert_int_equal(m1->vertex_count, m2->vertex_count);
    double worst = 0;
    for (size_t k = 0; k < ta->vertex_count; k++) {
        size_t v = ta->vertices[k];
        for (int q = 0; q < m1->influences; q++) {
            const char *n = m1->skel.names[m1->skin_joints[m1->joints[v * (size_t)m1->influences + (size_t)q]]];
            if (!(m1->weights[v * (size_t)m1->influences + (size_t)q] > 0) || !n)
                continue;
            double d = fabs(weight_on(m1, v, n) - weight_on(m2, v, n));
            worst = d > worst ? d : worst;
        }
    }
    print_message("own-skin fur: %zu tail vertices, subset skin %d -> %d joints, largest weight difference %.2g\n",
                  tb->vertex_count, before, g->skins[subset].joint_count, worst);
    assert_true(worst < 1e-3);
    tb_model_free(m1);
    tb_model_free(m2);
    tb_doc_free(back);
    tb_appendage_report_free(&ra);
    tb_appendage_report_free(&rb);
    tb_doc_free(a);
    tb_doc_free(b);
}

/* A tail that already has the rigger's own bones (weighted, not named
 * Tail_*) is left alone, and the message says why. */
static void riggers_own_tail_bones_are_named_in_the_message(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "reference/quaternius_Fox.glb");
    if (!path)
        tbt_skip();
    tb_doc *doc = load(path);
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    d.pelvis_joint = "Back";
    tb_appendage_report rep;
    tb_error err = {0};
    assert_int_equal(tb_appendage_fix(&rep, doc, &d, &err), TB_OK);
    assert_false(rep.changed);
    print_message("%s\n", rep.message);
    assert_non_null(strstr(rep.message, "rigger's own bones (Tail"));
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
}

/* A part that is little more than its weld ring (docs/detection.md, the
 * own-surface stage): the quaternius Fox's ears are a low-poly cone welded
 * onto the head by its base, 13 welded vertices of their own surfaces, 10 of
 * them the ring. Giving the ring back to the head would leave 3 tips, under
 * an appendage's size, and the untouched head part would leave the report;
 * it stays, untouched, with the ears' own skin (the head skin round them
 * on no surface of theirs still goes). */
static void ears_welded_on_by_their_base_stay_a_reported_part(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "reference/quaternius_Fox.glb");
    if (!path)
        tbt_skip();
    tb_doc *doc = load(path);
    tb_model *m = model_of(doc);
    tb_appendage_report rep;
    tb_error err = {0};
    assert_int_equal(tb_appendage_detect(&rep, m, NULL, &err), TB_OK);
    int heads = 0;
    for (int i = 0; i < rep.appendage_count; i++)
        if (rep.appendages[i].kind == TB_KIND_HEAD) {
            print_message("fox head part: %zu vertices, %s\n", rep.appendages[i].vertex_count,
                          rep.appendages[i].reason);
            assert_int_equal(rep.appendages[i].decision, TB_DECIDE_UNTOUCHED);
            assert_true(rep.appendages[i].welded_count >= 12);
            heads++;
        }
    assert_int_equal(heads, 1);
    tb_appendage_report_free(&rep);
    tb_model_free(m);
    tb_doc_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_fill_the_spec_numbers),
        cmocka_unit_test(wider_blend_zone_blends_across_the_whole_segment),
        cmocka_unit_test(segmented_tail_gets_one_bone_per_piece),
        cmocka_unit_test(welded_tail_blends_from_its_collar),
        cmocka_unit_test(welded_fox_seam_stops_tearing_with_the_collar_band_search),
        cmocka_unit_test(far_skin_that_is_most_of_the_body_is_never_rebound),
        cmocka_unit_test(one_skin_per_mesh_is_one_skeleton),
        cmocka_unit_test(tail_in_its_own_subset_skin_is_repaired_like_the_rest),
        cmocka_unit_test(weld_joins_coincident_positions_only),
        cmocka_unit_test(weld_is_linear_on_a_big_grid),
        cmocka_unit_test(every_synthetic_variant_matches_its_truth),
        cmocka_unit_test(untouched_variants_are_written_as_a_plain_copy),
        cmocka_unit_test(rigid_mode_puts_the_tail_on_hips),
        cmocka_unit_test(chain_rest_pose_skins_to_bind_in_a_cm_armature),
        cmocka_unit_test(wolf_tail_on_hips_is_found_and_chained),
        cmocka_unit_test(bone_demon_tail_is_found_and_chained),
        cmocka_unit_test(tailless_characters_get_no_chain),
        cmocka_unit_test(fox_rebuilt_chain_follows_the_artists),
        cmocka_unit_test(riggers_own_tail_bones_are_named_in_the_message),
        cmocka_unit_test(ears_welded_on_by_their_base_stay_a_reported_part),
        cmocka_unit_test(cli_detect_and_fix_report_and_refuse_bad_usage),
        cmocka_unit_test(detection_is_the_same_on_any_thread_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
