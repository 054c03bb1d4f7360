/* Existing tail chains (tailbone/tailchain.h): recognised by name and by
 * structure, the pelvis from a chain's root, the runtime driving chains by
 * index, and `fix --bake-existing` on the corpus foxes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gltf/doc_json.h"
#include "support.h"
#include "tailbone/bake.h"
#include "tailbone/clip.h"
#include "tailbone/fix.h"
#include "tailbone/gltf.h"
#include "tailbone/model.h"
#include "tailbone/runtime.h"
#include "tailbone/spring.h"
#include "tailbone/tailchain.h"

static void artist_tail_names_are_read_and_hair_is_not(void **state)
{
    (void)state;
    static const char *const yes[] = {"Tail1", "b_Tail01_012", "Fox_tail_2", "DEF-tail.001", "foxTail2", "tail",
                                      "TAIL_03", "mixamorig:Tail1", "Tail", "tail-base"};
    static const char *const no[] = {"Ponytail", "PonyTail_1", "Pigtail.L", "Cocktail", "Detail_2", "Retail",
                                     "tailcoat", "Hips", "Spine", "Tails", NULL};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!tb_tail_word(yes[i]))
            fail_msg("'%s' should read as a tail bone", yes[i]);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        if (tb_tail_word(no[i]))
            fail_msg("'%s' should not read as a tail bone", no[i] ? no[i] : "(null)");
    }
}

static tb_doc *load_corpus(const char *rel)
{
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, rel);
    if (!path)
        return NULL;
    tb_doc *doc = NULL;
    tb_error err = {0};
    assert_int_equal(tb_doc_load(&doc, path, NULL, &err), TB_OK);
    return doc;
}

static tb_model *model_of(const tb_doc *doc, int names_only)
{
    tb_model *m = NULL;
    tb_error err = {0};
    tb_model_desc md = {0};
    md.names_only = names_only;
    assert_int_equal(tb_model_load_desc(&m, doc, &md, &err), TB_OK);
    return m;
}

static int joint_named(const tb_model *m, const char *name)
{
    for (int j = 0; j < m->skel.joint_count; j++)
        if (m->skel.names[j] && !strcmp(m->skel.names[j], name))
            return j;
    return -1;
}

/* Renames joint j's node. The model borrows names from the doc: look joints
 * up (joint_named) before renaming any. */
static void rename_joint(tb_doc *doc, const tb_model *m, int j, const char *to)
{
    assert_true(j >= 0);
    json_t *n = json_array_get(json_object_get(tb_doc_json(doc), "nodes"), (size_t)m->node_of_joint[j]);
    json_object_set_new(n, "name", json_string(to));
}

static const struct fox {
    const char *file, *first, *last, *anchor;
    int bones;
} foxes[] = {
    {"reference/khronos_Fox.glb", "b_Tail01_012", "b_Tail03_014", "b_Hip_01", 3},
    {"reference/quaternius_Fox.glb", "Tail1", "Tail8", "Back", 8},
};

static void the_foxes_tails_are_found_by_name(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t f = 0; f < 2; f++) {
        tb_doc *doc = load_corpus(foxes[f].file);
        if (!doc)
            continue;
        ran++;
        tb_model *m = model_of(doc, 0);
        tb_tail_chain c[4];
        assert_int_equal(tb_tail_chains_find(m, c, 4), 1);
        assert_int_equal(c[0].source, TB_CHAIN_NAME);
        assert_int_equal(c[0].count, foxes[f].bones);
        assert_string_equal(m->skel.names[c[0].joints[0]], foxes[f].first);
        assert_string_equal(m->skel.names[c[0].joints[c[0].count - 1]], foxes[f].last);
        assert_string_equal(m->skel.names[c[0].anchor], foxes[f].anchor);
        assert_true(c[0].vertices > 20); /* the artist skinned the tail to it */
        tb_model_free(m);
        tb_doc_free(doc);
    }
    if (!ran)
        skip();
}

/* Names removed from the tail bones: the chain is found by its place (it
 * leaves the pelvis backwards on the midline) and its skin. */
static void an_unnamed_tail_is_found_by_structure(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t f = 0; f < 2; f++) {
        tb_doc *doc = load_corpus(foxes[f].file);
        if (!doc)
            continue;
        ran++;
        tb_model *m = model_of(doc, 0);
        tb_tail_chain c[4];
        assert_int_equal(tb_tail_chains_find(m, c, 4), 1);
        tb_tail_chain named = c[0];
        for (int i = 0; i < named.count; i++) {
            char nm[32];
            snprintf(nm, sizeof nm, "Bone.%03d", 100 + i);
            rename_joint(doc, m, named.joints[i], nm);
        }
        tb_error err = {0};
        assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
        tb_model *r = model_of(doc, 0);
        int k = tb_tail_chains_find(r, c, 4);
        assert_int_equal(k, 1);
        assert_int_equal(c[0].source, TB_CHAIN_STRUCTURE);
        assert_int_equal(c[0].count, named.count);
        assert_int_equal(c[0].joints[0], named.joints[0]);
        assert_int_equal(c[0].anchor, named.anchor);
        tb_model_free(r);
        tb_model_free(m);
        tb_doc_free(doc);
    }
    if (!ran)
        skip();
}

/* With no hips from names (names only, the pelvis renamed), the tail's
 * root is the pelvis; the structural reading never invents one. */
static void the_pelvis_comes_from_the_tail_root(void **state)
{
    (void)state;
    tb_doc *doc = load_corpus("reference/khronos_Fox.glb");
    if (!doc)
        skip();
    tb_model *m = model_of(doc, 1);
    int hips = joint_named(m, "b_Hip_01"), t1 = joint_named(m, "b_Tail01_012"), t2 = joint_named(m, "b_Tail02_013"),
        t3 = joint_named(m, "b_Tail03_014");
    assert_int_equal(m->role_source[hips], TB_ROLE_SRC_FUZZY);
    rename_joint(doc, m, hips, "b_Root_pivot");
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    tb_model *r = model_of(doc, 1);
    assert_int_equal(r->role_joint[TB_ROLE_HIPS], hips);
    assert_int_equal(r->role_source[hips], TB_ROLE_SRC_TAIL_ROOT);
    tb_model_free(r);
    /* the same file with the tail renamed too: no chain by name, no hips */
    rename_joint(doc, m, t1, "b_x01");
    rename_joint(doc, m, t2, "b_x02");
    rename_joint(doc, m, t3, "b_x03");
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    r = model_of(doc, 1);
    assert_int_equal(r->role_joint[TB_ROLE_HIPS], -1);
    tb_model_free(r);
    tb_model_free(m);
    tb_doc_free(doc);
}

/* The runtime: chains given by index are driven like Tail_* chains; bad
 * indices are refused naming the entry. */
static void the_runtime_drives_chains_given_by_index(void **state)
{
    (void)state;
    tb_doc *doc = load_corpus("reference/quaternius_Fox.glb");
    if (!doc)
        skip();
    tb_model *m = model_of(doc, 0);
    tb_tail_chain c[2];
    assert_int_equal(tb_tail_chains_find(m, c, 2), 1);
    int joints[TB_TAIL_CHAIN_MAX_BONES], len[1], ends[1];
    tb_spring_desc d = {0};
    int by_name = -1;
    tb_error err = {0};
    assert_int_equal(tb_spring_memory_size(&m->skel, NULL, &by_name, &err), TB_OK);
    assert_int_equal(by_name, 0); /* "Tail1" is not tailbone's naming */
    tb_tail_chains_spring_desc(c, 1, joints, len, ends, &d);
    int count = 0;
    size_t bytes = 0;
    assert_int_equal(tb_spring_memory_size_desc(&m->skel, &d, &bytes, &count, &err), TB_OK);
    assert_int_equal(count, 1);
    tb_spring_animator *a = NULL;
    assert_int_equal(tb_spring_create(&a, &m->skel, &d, &err), TB_OK);
    tb_spring_chain_info ci;
    tb_spring_get_chain_info(a, 0, &ci);
    assert_int_equal(ci.first_joint, c[0].joints[0]);
    assert_int_equal(ci.anchor_joint, c[0].anchor);
    assert_int_equal(ci.link_count, 8);
    /* swing the anchor: the tail moves, nothing else is written */
    int n = m->skel.joint_count;
    tb_transform *loc = malloc((size_t)n * sizeof *loc), *before = malloc((size_t)n * sizeof *before);
    float(*w)[16] = malloc((size_t)n * sizeof *w);
    float tip0[3] = {0}, moved = 0;
    for (int f = 0; f < 60; f++) {
        memcpy(loc, m->skel.rest_local, (size_t)n * sizeof *loc);
        float ang = 0.6f * sinf((float)f * 0.3f);
        float q[4] = {0, sinf(ang / 2), 0, cosf(ang / 2)};
        memcpy(loc[c[0].anchor].r, q, sizeof q);
        tb_local_to_world(&m->skel, loc, NULL, w);
        memcpy(before, loc, (size_t)n * sizeof *loc);
        tb_spring_step(a, 1.0f / 30, (const float(*)[16])w, loc, w);
        for (int j = 0; j < n; j++) {
            int in_chain = 0;
            for (int i = 0; i < 8; i++)
                in_chain |= c[0].joints[i] == j;
            if (!in_chain)
                assert_memory_equal(&loc[j], &before[j], sizeof loc[j]);
        }
        tb_spring_link_state ls;
        tb_spring_get_link_state(a, 0, 7, &ls);
        if (f == 0)
            memcpy(tip0, ls.tip, sizeof tip0);
        float dd = sqrtf((ls.tip[0] - tip0[0]) * (ls.tip[0] - tip0[0]) + (ls.tip[2] - tip0[2]) * (ls.tip[2] - tip0[2]));
        moved = dd > moved ? dd : moved;
    }
    assert_true(moved > 0.1f * c[0].length);
    tb_spring_destroy(a);
    /* refusals */
    int bad[2] = {c[0].joints[0], c[0].joints[2]}, bl = 2;
    tb_spring_desc bd = {0};
    bd.chain_joints = bad;
    bd.chain_lengths = &bl;
    bd.chain_count = 1;
    assert_int_equal(tb_spring_memory_size_desc(&m->skel, &bd, NULL, NULL, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_spring_desc.chain_joints[1]");
    bad[1] = n + 5;
    assert_int_equal(tb_spring_create(&a, &m->skel, &bd, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_spring_desc.chain_joints[1]");
    free(loc);
    free(before);
    free(w);
    tb_model_free(m);
    tb_doc_free(doc);
}

static float quat_angle(const float a[4], const float b[4])
{
    double d = fabs((double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2] + (double)a[3] * b[3]);
    return d >= 1 ? 0.0f : (float)(2 * acos(d));
}

/* fix --bake-existing on both foxes: the tail swings in the walk, looping
 * clips close, and the body — every other joint's pose in every clip, and
 * every skin weight — is exactly the input's. */
static void bake_existing_swings_the_foxes_tails_and_keeps_the_body(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t f = 0; f < 2; f++) {
        tb_doc *in = load_corpus(foxes[f].file);
        if (!in)
            continue;
        ran++;
        tb_fix_desc fd = {0};
        fd.bake.existing = 1;
        tb_doc *out = NULL;
        tb_fix_report rep;
        tb_error err = {0};
        assert_int_equal(tb_fix_run(&out, in, &fd, &rep, &err), TB_OK);
        assert_int_equal(rep.bake.chain_count, 1);
        assert_int_equal(rep.bake.bone_count, foxes[f].bones);
        int walk = 0;
        for (int c = 0; c < rep.bake.clip_count; c++) {
            const tb_bake_clip *bc = &rep.bake.clips[c];
            assert_false(bc->skipped);
            if (bc->looping)
                assert_true(bc->closure_rad < 0.5f * 3.14159265f / 180.0f);
            if (strstr(bc->name, "Walk")) {
                walk = 1;
                assert_true(bc->looping);
                assert_true(bc->swing_rad > 5.0f * 3.14159265f / 180.0f);
            }
        }
        assert_true(walk);
        /* the body: poses of every non-tail joint and the weights */
        tb_model *a = model_of(in, 0), *b = model_of(out, 0);
        tb_tail_chain tc[2];
        assert_int_equal(tb_tail_chains_find(b, tc, 2), 1);
        assert_int_equal(a->vertex_count, b->vertex_count);
        assert_memory_equal(a->weights, b->weights, a->vertex_count * (size_t)a->influences * sizeof(float));
        assert_memory_equal(a->joints, b->joints, a->vertex_count * (size_t)a->influences * sizeof(uint16_t));
        int n = a->skel.joint_count;
        tb_transform *la = malloc((size_t)n * sizeof *la), *lb = malloc((size_t)n * sizeof *lb);
        float tail_moved = 0;
        for (int an = 0; an < tb_doc_gltf(in)->animation_count; an++) {
            tb_clip *ca = NULL, *cb = NULL;
            assert_int_equal(tb_clip_load(&ca, in, a, an, NULL, &err), TB_OK);
            assert_int_equal(tb_clip_load(&cb, out, b, an, NULL, &err), TB_OK);
            for (int k = 0; k < 24; k++) {
                float t = ca->duration_s * (float)k / 23.0f;
                tb_clip_sample(ca, &a->skel, t, la);
                tb_clip_sample(cb, &b->skel, t, lb);
                for (int j = 0; j < n; j++) {
                    int tail = 0;
                    for (int i = 0; i < tc[0].count; i++)
                        tail |= tc[0].joints[i] == j;
                    if (tail) {
                        float d = quat_angle(la[j].r, lb[j].r);
                        tail_moved = d > tail_moved ? d : tail_moved;
                    } else {
                        assert_memory_equal(&la[j], &lb[j], sizeof la[j]);
                    }
                }
            }
            tb_clip_free(ca);
            tb_clip_free(cb);
        }
        assert_true(tail_moved > 1e-3f); /* the keys are new */
        free(la);
        free(lb);
        tb_model_free(a);
        tb_model_free(b);
        tb_fix_report_free(&rep);
        tb_doc_free(out);
        tb_doc_free(in);
    }
    if (!ran)
        skip();
}

/* --keep-artist-keys 1 keeps the artist's motion: the written keys are the
 * artist's rotations (within float noise). */
static void keeping_all_of_the_artists_keys_reproduces_them(void **state)
{
    (void)state;
    tb_doc *in = load_corpus("reference/khronos_Fox.glb");
    if (!in)
        skip();
    tb_fix_desc fd = {0};
    fd.bake.existing = 1;
    fd.bake.existing_keep = 1;
    tb_doc *out = NULL;
    tb_fix_report rep;
    tb_error err = {0};
    assert_int_equal(tb_fix_run(&out, in, &fd, &rep, &err), TB_OK);
    tb_model *a = model_of(in, 0), *b = model_of(out, 0);
    int n = a->skel.joint_count, j = joint_named(a, "b_Tail02_013");
    tb_transform *la = malloc((size_t)n * sizeof *la), *lb = malloc((size_t)n * sizeof *lb);
    tb_clip *ca = NULL, *cb = NULL;
    int an = tb_clip_find(in, "Walk");
    assert_int_equal(tb_clip_load(&ca, in, a, an, NULL, &err), TB_OK);
    assert_int_equal(tb_clip_load(&cb, out, b, an, NULL, &err), TB_OK);
    for (int k = 0; k < 10; k++) {
        float t = ca->duration_s * (float)k / 9.0f;
        tb_clip_sample(ca, &a->skel, t, la);
        tb_clip_sample(cb, &b->skel, t, lb);
        assert_true(quat_angle(la[j].r, lb[j].r) < 1.0f * 3.14159265f / 180.0f);
    }
    tb_clip_free(ca);
    tb_clip_free(cb);
    free(la);
    free(lb);
    tb_model_free(a);
    tb_model_free(b);
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(in);
}

/* The CLI: info lists the artist's chain; fix --bake-existing writes a file. */
static void the_cli_lists_and_bakes_an_artist_chain(void **state)
{
    (void)state;
    tbt_path path_buf;
    const char *path = tbt_corpus_file(&path_buf, "reference/khronos_Fox.glb");
    if (!path)
        skip();
    char *out = NULL;
    assert_int_equal(tbt_run_cli(&out, "info '%s'", path), 0);
    assert_non_null(strstr(out, "tail chain: b_Tail01_012 … b_Tail03_014 (3 bones) under b_Hip_01; the artist's, by name"));
    free(out);
    const char *o = tbt_tmp_path("fox_existing.glb");
    assert_int_equal(tbt_run_cli(&out, "fix '%s' -o '%s' --bake-existing", path, o), 0);
    assert_non_null(strstr(out, "bake: 1 chain(s), 3 bone(s)"));
    free(out);
    assert_int_equal(tbt_run_cli(&out, "fix '%s' -o '%s' --keep-artist-keys 0.5", path, o), 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(artist_tail_names_are_read_and_hair_is_not),
        cmocka_unit_test(the_foxes_tails_are_found_by_name),
        cmocka_unit_test(an_unnamed_tail_is_found_by_structure),
        cmocka_unit_test(the_pelvis_comes_from_the_tail_root),
        cmocka_unit_test(the_runtime_drives_chains_given_by_index),
        cmocka_unit_test(bake_existing_swings_the_foxes_tails_and_keeps_the_body),
        cmocka_unit_test(keeping_all_of_the_artists_keys_reproduces_them),
        cmocka_unit_test(the_cli_lists_and_bakes_an_artist_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
