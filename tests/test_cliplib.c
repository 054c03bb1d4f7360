/* Clip libraries without meshes (`--clips` with a skeleton-only file, a
 * Mixamo "without skin" download): loaded by tb_model_load_skeleton, roles
 * from names or a VRM map, clear errors naming the library. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "gltf/doc_json.h"
#include "passes/retarget_internal.h"
#include "support.h"
#include "tailbone/clip.h"
#include "tailbone/gltf.h"
#include "tailbone/model.h"
#include "tailbone/retarget.h"
#include "tailbone/runtime.h"
#include "tailbone/synth.h"

static tb_doc *synth(const char *variant)
{
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_synth_desc d;
    memset(&d, 0, sizeof d);
    assert_int_equal(tb_synth_build(&doc, variant, &d, NULL, &err), TB_OK);
    return doc;
}

enum { KEEP_SKIN, NO_SKIN };

/* The library as a skeleton-only download: meshes gone (and the skin too). */
static void strip_meshes(tb_doc *doc, int how)
{
    json_t *root = tb_doc_json(doc);
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(root, "nodes"), i, n)
    {
        json_object_del(n, "mesh");
        json_object_del(n, "skin");
    }
    json_object_del(root, "meshes");
    if (how == NO_SKIN)
        json_object_del(root, "skins");
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
}

/* Transfers `Sprint` from lib onto a fresh tail_leg character; returns the
 * character (the clip is its last animation). */
static tb_doc *transfer_only(tb_doc *lib, const char *clip, tb_result expect, tb_error *err)
{
    tb_doc *ch = synth("tail_leg");
    const char *only[] = {clip};
    tb_retarget_desc d;
    memset(&d, 0, sizeof d);
    d.only = clip ? only : NULL;
    d.only_count = clip ? 1 : 0;
    tb_retarget_report rep;
    tb_doc *libs[1] = {lib};
    assert_int_equal(tb_retarget_docs(ch, libs, 1, &d, &rep, err), expect);
    tb_retarget_report_free(&rep);
    return ch;
}

static tb_doc *transfer(tb_doc *lib, tb_result expect, tb_error *err)
{
    return transfer_only(lib, "Sprint", expect, err);
}

static float quat_angle(const float a[4], const float b[4])
{
    double d = fabs((double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2] + (double)a[3] * b[3]);
    return d >= 1 ? 0.0f : (float)(2 * acos(d));
}

/* The same clip from the skinned library and from its skeleton-only copies
 * (skin kept, no skin at all) gives the same joint rotations on the
 * character. */
static void a_library_without_a_mesh_transfers_like_the_skinned_one(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *full = synth("plain");
    tb_doc *ref = transfer(full, TB_OK, &err);
    tb_model *mr = NULL;
    assert_int_equal(tb_model_load(&mr, ref, -1, &err), TB_OK);
    int an = tb_doc_gltf(ref)->animation_count - 1;
    tb_clip *cr = NULL;
    assert_int_equal(tb_clip_load(&cr, ref, mr, an, NULL, &err), TB_OK);
    int n = mr->skel.joint_count;
    tb_transform *la = malloc((size_t)n * sizeof *la), *lb = malloc((size_t)n * sizeof *lb);
    for (int how = KEEP_SKIN; how <= NO_SKIN; how++) {
        tb_doc *lib = synth("plain");
        strip_meshes(lib, how);
        tb_model *lm = NULL;
        assert_int_equal(tb_model_load(&lm, lib, -1, &err), TB_ERR_NO_SKIN); /* as before */
        assert_int_equal(tb_model_load_skeleton(&lm, lib, NULL, &err), TB_OK);
        assert_int_equal(lm->vertex_count, 0);
        assert_int_equal(lm->skin, how == NO_SKIN ? -1 : 0);
        for (int r = 1; r < TB_ROLE_COUNT; r++)
            assert_true(lm->role_joint[r] >= 0);
        assert_true(lm->height > 0);
        tb_model_free(lm);
        tb_doc *out = transfer(lib, TB_OK, &err);
        assert_int_equal(tb_doc_gltf(out)->animation_count - 1, an);
        tb_model *mo = NULL;
        assert_int_equal(tb_model_load(&mo, out, -1, &err), TB_OK);
        tb_clip *co = NULL;
        assert_int_equal(tb_clip_load(&co, out, mo, an, NULL, &err), TB_OK);
        assert_true(fabsf(co->duration_s - cr->duration_s) < 1e-4f);
        float worst = 0;
        for (int k = 0; k < 12; k++) {
            float t = cr->duration_s * (float)k / 11.0f;
            tb_clip_sample(cr, &mr->skel, t, la);
            tb_clip_sample(co, &mo->skel, t, lb);
            for (int r = 1; r < TB_ROLE_COUNT; r++) {
                int j = mr->role_joint[r];
                float a = quat_angle(la[j].r, lb[j].r);
                worst = a > worst ? a : worst;
            }
        }
        if (worst > 0.5f * 3.14159265f / 180.0f)
            fail_msg("skeleton-only library (%s): a role's rotation differs by %.3f deg", how ? "no skin" : "skin kept",
                     (double)(worst * 180 / 3.14159265f));
        tb_clip_free(co);
        tb_model_free(mo);
        tb_doc_free(out);
        tb_doc_free(lib);
    }
    free(la);
    free(lb);
    tb_clip_free(cr);
    tb_model_free(mr);
    tb_doc_free(ref);
    tb_doc_free(full);
}

/* Opaque joint names and a VRM 1.0 humanoid map: the roles come from the map. */
static void a_skeleton_only_library_reads_a_vrm_map(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *lib = synth("plain");
    tb_model *named = NULL;
    assert_int_equal(tb_model_load(&named, lib, -1, &err), TB_OK);
    static const char *const vrm[TB_ROLE_COUNT] = {
        "", "hips", "spine", "chest", "upperChest", "neck", "head", "leftShoulder", "leftUpperArm", "leftLowerArm",
        "leftHand", "rightShoulder", "rightUpperArm", "rightLowerArm", "rightHand", "leftUpperLeg", "leftLowerLeg",
        "leftFoot", "leftToes", "rightUpperLeg", "rightLowerLeg", "rightFoot", "rightToes"};
    json_t *bones = json_object();
    for (int r = 1; r < TB_ROLE_COUNT; r++)
        json_object_set_new(bones, vrm[r], json_pack("{s:i}", "node", named->node_of_joint[named->role_joint[r]]));
    json_t *root = tb_doc_json(lib);
    json_object_set_new(root, "extensions",
                        json_pack("{s:{s:s,s:{s:o}}}", "VRMC_vrm", "specVersion", "1.0", "humanoid", "humanBones", bones));
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(root, "nodes"), i, n)
    {
        char nm[32];
        snprintf(nm, sizeof nm, "node_%zu", i);
        json_object_set_new(n, "name", json_string(nm));
    }
    strip_meshes(lib, NO_SKIN);
    tb_model *m = NULL;
    assert_int_equal(tb_model_load_skeleton(&m, lib, NULL, &err), TB_OK);
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        int j = m->role_joint[r];
        assert_true(j >= 0);
        assert_int_equal(m->node_of_joint[j], named->node_of_joint[named->role_joint[r]]);
        assert_int_equal(m->role_source[j], TB_ROLE_SRC_VRM);
    }
    tb_model_free(m);
    tb_doc *out = transfer(lib, TB_OK, &err);
    tb_doc_free(out);
    tb_model_free(named);
    tb_doc_free(lib);
}

/* A library with no clips, and one whose skeleton has no humanoid role:
 * errors that name the library. */
/* A library that is a stick that sways: animated, no body (no humanoid
 * role in common with any character). */
static tb_doc *stick_library(void)
{
    tb_doc *lib = synth("plain");
    json_t *root = tb_doc_json(lib);
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(root, "nodes"), i, n)
    {
        char nm[32];
        snprintf(nm, sizeof nm, "n%zu", i);
        json_object_set_new(n, "name", json_string(nm));
    }
    strip_meshes(lib, NO_SKIN);
    /* keep one channel per clip: the rotation of a leaf node (a finger or
     * a toe): one bone moves, no body */
    json_t *a, *nodes = json_object_get(root, "nodes");
    json_array_foreach(json_object_get(root, "animations"), i, a)
    {
        json_t *ch = json_object_get(a, "channels"), *keep = NULL;
        size_t k;
        json_t *c;
        json_array_foreach(ch, k, c)
        {
            json_t *tg = json_object_get(c, "target");
            json_t *nd = json_array_get(nodes, (size_t)json_integer_value(json_object_get(tg, "node")));
            if (!keep && !strcmp(json_string_value(json_object_get(tg, "path")), "rotation") &&
                json_array_size(json_object_get(nd, "children")) == 0)
                keep = json_incref(c);
        }
        assert_non_null(keep);
        json_array_clear(ch);
        json_array_append_new(ch, keep);
    }
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(lib, &err), TB_OK);
    return lib;
}

static void errors_name_the_library(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *lib = synth("plain");
    strip_meshes(lib, KEEP_SKIN);
    json_object_del(tb_doc_json(lib), "animations");
    assert_int_equal(tb_doc_refresh(lib, &err), TB_OK);
    tb_doc *out = transfer_only(lib, NULL, TB_ERR_INVALID, &err);
    tb_doc_free(out);
    assert_string_equal(err.where, tb_doc_name(lib));
    assert_non_null(strstr(err.message, "no clips"));
    tb_doc_free(lib);

    /* a stick that sways: animated, no body */
    lib = stick_library();
    out = transfer(lib, TB_ERR_NO_HIPS, &err);
    tb_doc_free(out);
    size_t ln = strlen(tb_doc_name(lib));
    assert_memory_equal(err.where, tb_doc_name(lib), ln);
    tb_doc_free(lib);
}

/* tb_retarget_desc.threads: the sides and the clips made at once, written
 * in order: the same document bytes and report for any count, and a
 * failure is the one met one step after the other (the first library in
 * the list that fails). */
static void the_transfer_is_the_same_on_any_number_of_threads(void **state)
{
    (void)state;
    tb_doc *libs[3] = {synth("plain"), synth("plain"), stick_library()};
    strip_meshes(libs[1], NO_SKIN);
    uint8_t *bytes[2] = {NULL, NULL};
    size_t size[2] = {0, 0};
    char where[2][sizeof ((tb_error *)0)->where], message[2][sizeof ((tb_error *)0)->message];
    int clips[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        tb_error err = {0};
        tb_retarget_desc d;
        memset(&d, 0, sizeof d);
        d.threads = k ? 3 : 1;
        tb_doc *ch = synth("tail_leg");
        tb_retarget_report rep;
        assert_int_equal(tb_retarget_docs(ch, libs, 2, &d, &rep, &err), TB_OK);
        clips[k] = rep.clip_count;
        assert_true(rep.clip_count >= 4);
        tb_retarget_report_free(&rep);
        assert_int_equal(tb_doc_write_memory(ch, &bytes[k], &size[k], &err), TB_OK);
        tb_doc_free(ch);
        /* the stick last: both good libraries' clips run, then its error */
        ch = synth("tail_leg");
        assert_int_equal(tb_retarget_docs(ch, libs, 3, &d, &rep, &err), TB_ERR_NO_HIPS);
        snprintf(where[k], sizeof where[k], "%s", err.where);
        snprintf(message[k], sizeof message[k], "%s", err.message);
        tb_doc_free(ch);
    }
    assert_int_equal(clips[0], clips[1]);
    assert_int_equal(size[0], size[1]);
    assert_memory_equal(bytes[0], bytes[1], size[0]);
    assert_string_equal(where[0], where[1]);
    assert_string_equal(message[0], message[1]);
    assert_memory_equal(where[1], tb_doc_name(libs[2]), strlen(tb_doc_name(libs[2])));
    for (int k = 0; k < 3; k++)
        tb_doc_free(libs[k]);
    free(bytes[0]);
    free(bytes[1]);
}

/* Two models of one document field by field: the same skin, joints,
 * names, roles, rest and bind poses, vertices, influences and triangles. */
static void models_equal(const tb_model *a, const tb_model *b)
{
    assert_int_equal(a->skin, b->skin);
    assert_int_equal(a->skin_count, b->skin_count);
    assert_memory_equal(a->skins, b->skins, (size_t)a->skin_count * sizeof *a->skins);
    const tb_skeleton *x = &a->skel, *y = &b->skel;
    int n = x->joint_count;
    assert_int_equal(n, y->joint_count);
    assert_memory_equal(x->parents, y->parents, (size_t)n * sizeof *x->parents);
    for (int j = 0; j < n; j++) {
        assert_true((x->names[j] == NULL) == (y->names[j] == NULL));
        if (x->names[j])
            assert_string_equal(x->names[j], y->names[j]);
    }
    assert_memory_equal(x->rest_local, y->rest_local, (size_t)n * sizeof *x->rest_local);
    assert_memory_equal(x->bind_world, y->bind_world, (size_t)n * sizeof *x->bind_world);
    assert_memory_equal(a->roles, b->roles, (size_t)n * sizeof *a->roles);
    assert_memory_equal(a->role_joint, b->role_joint, sizeof a->role_joint);
    assert_memory_equal(a->node_of_joint, b->node_of_joint, (size_t)n * sizeof *a->node_of_joint);
    assert_int_equal(a->skin_joint_count, b->skin_joint_count);
    assert_memory_equal(a->skin_joints, b->skin_joints, (size_t)a->skin_joint_count * sizeof *a->skin_joints);
    assert_memory_equal(a->inverse_bind, b->inverse_bind, (size_t)a->skin_joint_count * sizeof *a->inverse_bind);
    assert_int_equal(a->vertex_count, b->vertex_count);
    assert_true(a->vertex_count > 0);
    assert_memory_equal(a->positions, b->positions, a->vertex_count * 3 * sizeof *a->positions);
    assert_null(a->normals);
    assert_null(b->normals);
    assert_int_equal(a->influences, b->influences);
    assert_memory_equal(a->joints, b->joints, a->vertex_count * (size_t)a->influences * sizeof *a->joints);
    assert_memory_equal(a->weights, b->weights, a->vertex_count * (size_t)a->influences * sizeof *a->weights);
    assert_int_equal(a->triangle_count, b->triangle_count);
    assert_memory_equal(a->triangles, b->triangles, a->triangle_count * 3 * sizeof *a->triangles);
    assert_int_equal(a->prim_count, b->prim_count);
    assert_memory_equal(a->prims, b->prims, (size_t)a->prim_count * sizeof *a->prims);
    assert_memory_equal(a->bbox_min, b->bbox_min, sizeof a->bbox_min);
    assert_memory_equal(a->bbox_max, b->bbox_max, sizeof a->bbox_max);
    assert_memory_equal(&a->height, &b->height, sizeof a->height);
    assert_int_equal(a->up_axis, b->up_axis);
    assert_memory_equal(&a->armature_scale, &b->armature_scale, sizeof a->armature_scale);
}

/* The character's model the transfer hands on (fix gives it to the bake
 * instead of loading one) is the model a load after the transfer gives,
 * on one thread or three; the document it leaves is the one
 * tb_retarget_docs leaves; on a failure nothing is handed on. */
static void the_kept_model_is_what_a_load_after_the_transfer_gives(void **state)
{
    (void)state;
    tb_doc *libs[2] = {synth("plain"), stick_library()};
    for (int threads = 1; threads <= 3; threads += 2) {
        tb_error err = {0};
        tb_retarget_desc d;
        memset(&d, 0, sizeof d);
        d.threads = threads;
        tb_doc *ch = synth("tail_leg"), *ref = synth("tail_leg");
        tb_retarget_report rep;
        tb_model *kept = NULL;
        assert_int_equal(tb__retarget_docs_keep(ch, libs, 1, &d, &rep, &kept, &err), TB_OK);
        assert_true(rep.clip_count >= 2);
        tb_retarget_report_free(&rep);
        assert_non_null(kept);
        assert_int_equal(tb_retarget_docs(ref, libs, 1, &d, NULL, &err), TB_OK);
        uint8_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        assert_int_equal(tb_doc_write_memory(ch, &a, &na, &err), TB_OK);
        assert_int_equal(tb_doc_write_memory(ref, &b, &nb, &err), TB_OK);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na);
        free(a);
        free(b);
        const tb_model_desc md = {.no_normals = 1};
        tb_model *fresh = NULL;
        assert_int_equal(tb_model_load_desc(&fresh, ch, &md, &err), TB_OK);
        models_equal(kept, fresh);
        tb_model_free(fresh);
        tb_model_free(kept);
        tb_doc_free(ref);
        tb_doc_free(ch);
        /* a library that fails: an error, no model */
        ch = synth("tail_leg");
        kept = (tb_model *)&err; /* overwritten */
        assert_int_equal(tb__retarget_docs_keep(ch, libs, 2, &d, NULL, &kept, &err), TB_ERR_NO_HIPS);
        assert_null(kept);
        tb_doc_free(ch);
    }
    tb_doc_free(libs[0]);
    tb_doc_free(libs[1]);
}

/* The CLI: `retarget --clips` with a skeleton-only file on disk, and its
 * errors naming that file first (an absolute path too). */
static void the_cli_takes_a_skeleton_only_library(void **state)
{
    (void)state;
    tb_error err = {0};
    tb_doc *lib = synth("plain");
    strip_meshes(lib, NO_SKIN);
    const char *lp = tbt_tmp_path("skeleton_only.glb"), *cp = tbt_tmp_path("character.glb"),
               *op = tbt_tmp_path("out.glb"), *np = tbt_tmp_path("no_clips.glb");
    char lpath[512], cpath[512], opath[512], npath[512];
    snprintf(lpath, sizeof lpath, "%s", lp);
    snprintf(cpath, sizeof cpath, "%s", cp);
    snprintf(opath, sizeof opath, "%s", op);
    snprintf(npath, sizeof npath, "%s", np);
    assert_int_equal(tb_doc_save(lib, lpath, &err), TB_OK);
    json_object_del(tb_doc_json(lib), "animations");
    assert_int_equal(tb_doc_refresh(lib, &err), TB_OK);
    assert_int_equal(tb_doc_save(lib, npath, &err), TB_OK);
    tb_doc_free(lib);
    tb_doc *ch = synth("tail_leg");
    assert_int_equal(tb_doc_save(ch, cpath, &err), TB_OK);
    tb_doc_free(ch);
    char *out = NULL;
    assert_int_equal(tbt_run_cli(&out, "retarget '%s' --clips '%s' --only Sprint -o '%s'", cpath, lpath, opath), 0);
    assert_non_null(strstr(out, "Sprint"));
    assert_non_null(strstr(out, "n/a")); /* no source feet to compare with */
    free(out);
    assert_int_equal(tbt_run_cli(&out, "retarget '%s' --clips '%s' -o '%s'", cpath, npath, opath), 1);
    char want[600];
    snprintf(want, sizeof want, "tailbone: %s: the clip library has no clips", npath);
    assert_non_null(strstr(out, want));
    free(out);
    assert_int_equal(tbt_run_cli(&out, "fix '%s' --clips '%s' -o '%s'", cpath, npath, opath), 1);
    assert_non_null(strstr(out, want));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_library_without_a_mesh_transfers_like_the_skinned_one),
        cmocka_unit_test(a_skeleton_only_library_reads_a_vrm_map),
        cmocka_unit_test(errors_name_the_library),
        cmocka_unit_test(the_transfer_is_the_same_on_any_number_of_threads),
        cmocka_unit_test(the_kept_model_is_what_a_load_after_the_transfer_gives),
        cmocka_unit_test(the_cli_takes_a_skeleton_only_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
