/* Clip transfer, tail-free grounding, stable calibration and placement
 * (SPEC D; tailbone/retarget.h). Small characters are built here with the
 * document API so every number is known; corpus files add real rigs. */
#include "gltf/doc_json.h"
#include "passes/retarget_internal.h"
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/clip.h"
#include "tailbone/retarget.h"

/* ---- a small skinned humanoid ------------------------------------------ */

typedef struct jdef {
    const char *name;
    int parent;
    float x, y, z; /* bind world position; every bind rotation is identity */
} jdef;

static const jdef JOINTS[] = {
    {"Hips", -1, 0, 1.00f, 0},          /* 0 */
    {"Spine", 0, 0, 1.15f, 0},          /* 1 */
    {"Spine1", 1, 0, 1.30f, 0},         /* 2 */
    {"Spine2", 2, 0, 1.45f, 0},         /* 3 */
    {"Neck", 3, 0, 1.60f, 0},           /* 4 */
    {"Head", 4, 0, 1.70f, 0},           /* 5 */
    {"LeftShoulder", 3, 0.05f, 1.50f, 0},  /* 6 */
    {"LeftArm", 6, 0.15f, 1.50f, 0},       /* 7 */
    {"LeftForeArm", 7, 0.45f, 1.50f, 0},   /* 8 */
    {"LeftHand", 8, 0.70f, 1.50f, 0},      /* 9 */
    {"RightShoulder", 3, -0.05f, 1.50f, 0},/* 10 */
    {"RightArm", 10, -0.15f, 1.50f, 0},    /* 11 */
    {"RightForeArm", 11, -0.45f, 1.50f, 0},/* 12 */
    {"RightHand", 12, -0.70f, 1.50f, 0},   /* 13 */
    {"LeftUpLeg", 0, 0.10f, 0.95f, 0},     /* 14 */
    {"LeftLeg", 14, 0.10f, 0.50f, 0},      /* 15 */
    {"LeftFoot", 15, 0.10f, 0.08f, 0},     /* 16 */
    {"LeftToeBase", 16, 0.10f, 0.02f, 0.12f}, /* 17 */
    {"RightUpLeg", 0, -0.10f, 0.95f, 0},   /* 18 */
    {"RightLeg", 18, -0.10f, 0.50f, 0},    /* 19 */
    {"RightFoot", 19, -0.10f, 0.08f, 0},   /* 20 */
    {"RightToeBase", 20, -0.10f, 0.02f, 0.12f}, /* 21 */
    {"Tail_1", 0, 0, 0.95f, -0.10f},       /* 22 */
    {"Tail_2", 22, 0, 0.60f, -0.30f},      /* 23 */
    {"Tail_3", 23, 0, 0.25f, -0.45f},      /* 24 */
    {"Tail_End", 24, 0, -0.10f, -0.55f},   /* 25 */
};
#define NJ ((int)(sizeof JOINTS / sizeof JOINTS[0]))
#define FIRST_TAIL 22

enum { WITH_TAIL = 1, RENAME_TAIL = 2, PREFIX = 4, NO_ROLES = 8, ARMATURE_CM = 16, TURN90 = 32, BIG = 64 };

/* BIG: every length of the character (joints, skin) × 1.5, no node scale. */
#define BIG_FACTOR 1.5f

/* TURN90: the whole character (joints, skin, keys) turned +90° about +Y, so
 * it faces +X: (x, y, z) → (z, y, −x). */
static void turn90(float *v)
{
    float x = v[0];
    v[0] = v[2];
    v[2] = -x;
}

typedef struct keyset {
    int joint;
    const char *path;
    int count;
    const float *times, *values;
} keyset;

/* Builds the character. With WITH_TAIL, Tail_* bones carry skin reaching
 * 0.13 below the soles; RENAME_TAIL names them Appendage_* (so only the
 * hanging rule can tell them from the body); PREFIX writes mixamorig:
 * names; NO_ROLES names every joint bone_N; ARMATURE_CM puts the skeleton in
 * centimetres under a 0.01 armature (like Mixamo FBX exports); TURN90 turns
 * it to face +X; BIG makes it 1.5 times as large. */
static tb_doc *build_char(int flags, const keyset *keys, int key_count, const char *clip_name)
{
    tb_doc *doc = tb_doc_create("test_retarget");
    json_t *root = tb_doc_json(doc);
    float unit = (flags & ARMATURE_CM) ? 100.0f : 1.0f;
    const float g = (flags & BIG) ? BIG_FACTOR : 1.0f;
    json_t *nodes = json_array();
    for (int j = 0; j < NJ; j++) {
        char name[64];
        if (flags & NO_ROLES)
            snprintf(name, sizeof name, "bone_%d", j);
        else if ((flags & RENAME_TAIL) && j >= FIRST_TAIL)
            snprintf(name, sizeof name, "Appendage_%d", j - FIRST_TAIL + 1);
        else
            snprintf(name, sizeof name, "%s%s", (flags & PREFIX) ? "mixamorig:" : "", JOINTS[j].name);
        const jdef *p = JOINTS[j].parent >= 0 ? &JOINTS[JOINTS[j].parent] : NULL;
        float t[3] = {g * (JOINTS[j].x - (p ? p->x : 0)), g * (JOINTS[j].y - (p ? p->y : 0)),
                      g * (JOINTS[j].z - (p ? p->z : 0))};
        if (flags & TURN90)
            turn90(t);
        json_t *n = json_pack("{s:s, s:[f,f,f]}", "name", name, "translation", t[0] * unit, t[1] * unit, t[2] * unit);
        json_t *ch = json_array();
        for (int k = 0; k < NJ; k++)
            if (JOINTS[k].parent == j)
                json_array_append_new(ch, json_integer(k));
        if (json_array_size(ch))
            json_object_set_new(n, "children", ch);
        else
            json_decref(ch);
        json_array_append_new(nodes, n);
    }
    /* skin: IBM = inverse of the bind world (armature scale included) */
    float ibm[NJ][16];
    float s = (flags & ARMATURE_CM) ? 0.01f : 1.0f;
    for (int j = 0; j < NJ; j++) {
        memset(ibm[j], 0, sizeof ibm[j]);
        for (int i = 0; i < 3; i++)
            ibm[j][i * 5] = 1.0f / s;
        ibm[j][15] = 1;
        ibm[j][12] = -g * JOINTS[j].x / s, ibm[j][13] = -g * JOINTS[j].y / s, ibm[j][14] = -g * JOINTS[j].z / s;
        if (flags & TURN90)
            turn90(&ibm[j][12]);
    }
    int ibm_acc = tb_doc_add_accessor(doc, ibm, NJ, TB_COMPONENT_FLOAT, "MAT4", 0, 0);
    /* skin points: a small box around each bone, all weight on that bone */
    float pos[4096][3];
    uint16_t jw[4096][4];
    float ww[4096][4];
    int nv = 0;
    for (int j = 0; j < NJ; j++) {
        if (j >= FIRST_TAIL && !(flags & WITH_TAIL))
            continue;
        if (!strcmp(JOINTS[j].name, "Tail_End"))
            continue;
        int c = -1;
        for (int k = 0; k < NJ; k++)
            if (JOINTS[k].parent == j && c < 0)
                c = k;
        const jdef *a = &JOINTS[j];
        float b[3] = {a->x, a->y, a->z};
        if (!strcmp(a->name, "Hips"))
            c = 1;
        if (c >= 0 && strcmp(a->name, "Spine2") != 0)
            b[0] = JOINTS[c].x, b[1] = JOINTS[c].y, b[2] = JOINTS[c].z;
        if (strstr(a->name, "Hand"))
            b[0] += a->x > 0 ? 0.15f : -0.15f;
        if (!strcmp(a->name, "Head"))
            b[1] += 0.2f;
        if (strstr(a->name, "ToeBase"))
            b[2] += 0.08f, b[1] = 0.02f;
        float r = j >= FIRST_TAIL ? 0.03f : 0.06f;
        for (int k = 0; k <= 4; k++) {
            float u = k / 4.0f;
            float cx = a->x + u * (b[0] - a->x), cy = a->y + u * (b[1] - a->y), cz = a->z + u * (b[2] - a->z);
            static const float off[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 0, 1}, {0, 0, -1}, {0, 1, 0}, {0, -1, 0}};
            for (int o = 0; o < 6; o++) {
                float y = cy + r * off[o][1];
                if (strstr(a->name, "Foot") || strstr(a->name, "ToeBase"))
                    y = o == 5 ? 0.0f : y; /* soles at y = 0 */
                pos[nv][0] = cx + r * off[o][0];
                pos[nv][1] = y;
                pos[nv][2] = cz + r * off[o][2];
                jw[nv][0] = (uint16_t)j, jw[nv][1] = jw[nv][2] = jw[nv][3] = 0;
                ww[nv][0] = 1, ww[nv][1] = ww[nv][2] = ww[nv][3] = 0;
                for (int i = 0; i < 3; i++)
                    pos[nv][i] *= g;
                if (flags & TURN90)
                    turn90(pos[nv]);
                nv++;
            }
        }
    }
    int pa = tb_doc_add_accessor(doc, pos, (size_t)nv, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
    int ja = tb_doc_add_accessor(doc, jw, (size_t)nv, TB_COMPONENT_UNSIGNED_SHORT, "VEC4", 0, 34962);
    int wa = tb_doc_add_accessor(doc, ww, (size_t)nv, TB_COMPONENT_FLOAT, "VEC4", 0, 34962);
    json_array_append_new(nodes, json_pack("{s:s, s:i, s:i}", "name", "Body", "mesh", 0, "skin", 0));
    json_t *arm = json_pack("{s:s, s:[i,i]}", "name", "Armature", "children", 0, NJ);
    if (flags & ARMATURE_CM)
        json_object_set_new(arm, "scale", json_pack("[f,f,f]", 0.01, 0.01, 0.01));
    json_array_append_new(nodes, arm);
    json_object_set_new(root, "nodes", nodes);
    json_t *joints = json_array();
    for (int j = 0; j < NJ; j++)
        json_array_append_new(joints, json_integer(j));
    json_object_set_new(root, "skins", json_pack("[{s:o, s:i}]", "joints", joints, "inverseBindMatrices", ibm_acc));
    json_object_set_new(root, "meshes",
                        json_pack("[{s:[{s:{s:i, s:i, s:i}, s:i}]}]", "primitives", "attributes", "POSITION", pa,
                                  "JOINTS_0", ja, "WEIGHTS_0", wa, "mode", 0));
    json_object_set_new(root, "scenes", json_pack("[{s:[i]}]", "nodes", NJ + 1));
    json_object_set_new(root, "scene", json_integer(0));
    if (key_count) {
        json_t *samplers = json_array(), *channels = json_array();
        for (int k = 0; k < key_count; k++) {
            int rot = !strcmp(keys[k].path, "rotation");
            float vals[64 * 4];
            int comps = rot ? 4 : 3;
            for (int i = 0; i < keys[k].count * comps; i++)
                vals[i] = keys[k].values[i] * (!rot ? unit : 1.0f);
            if (flags & TURN90) /* positions turn; rotations are conjugated: their axes turn */
                for (int i = 0; i < keys[k].count; i++)
                    turn90(vals + i * comps);
            int in = tb_doc_add_accessor(doc, keys[k].times, (size_t)keys[k].count, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
            int out = tb_doc_add_accessor(doc, vals, (size_t)keys[k].count, TB_COMPONENT_FLOAT, rot ? "VEC4" : "VEC3",
                                          0, 0);
            json_array_append_new(samplers, json_pack("{s:i, s:i}", "input", in, "output", out));
            json_array_append_new(channels, json_pack("{s:i, s:{s:i, s:s}}", "sampler", k, "target", "node",
                                                      keys[k].joint, "path", keys[k].path));
        }
        json_object_set_new(root, "animations", json_pack("[{s:s, s:o, s:o}]", "name", clip_name, "samplers",
                                                          samplers, "channels", channels));
    }
    tb_error err = {0};
    tb_result r = tb_doc_refresh(doc, &err);
    if (r != TB_OK)
        fprintf(stderr, "build_char: %s %s\n", err.where, err.message);
    assert_int_equal(r, TB_OK);
    return doc;
}

static void qx(float *q, float deg)
{
    float a = deg * 3.14159265f / 360.0f;
    q[0] = sinf(a), q[1] = 0, q[2] = 0, q[3] = cosf(a);
}

/* Crouch: the hips drop 0.45 m while thighs swing forward and shins back. */
static tb_doc *build_crouch_source(int flags)
{
    static float t[5] = {0, 0.25f, 0.5f, 0.75f, 1.0f};
    static float hips_t[15] = {0, 0, 0, 0, -0.2f, 0, 0, -0.45f, 0.05f, 0, -0.2f, 0, 0, 0, 0};
    static float thigh[20], shin[20], foot[20];
    float a[5] = {0, -35, -75, -35, 0};
    for (int i = 0; i < 5; i++) {
        qx(thigh + i * 4, a[i]);
        qx(shin + i * 4, -2 * a[i]);
        qx(foot + i * 4, a[i]);
    }
    /* Hips' translation channel holds its local translation (bind + offset) */
    static float ht[15];
    for (int i = 0; i < 5; i++)
        ht[i * 3] = 0, ht[i * 3 + 1] = 1.0f + hips_t[i * 3 + 1], ht[i * 3 + 2] = hips_t[i * 3 + 2];
    keyset k[7] = {{0, "translation", 5, t, ht},  {14, "rotation", 5, t, thigh}, {18, "rotation", 5, t, thigh},
                   {15, "rotation", 5, t, shin},  {19, "rotation", 5, t, shin},  {16, "rotation", 5, t, foot},
                   {20, "rotation", 5, t, foot}};
    return build_char(flags, k, 7, "Crouch");
}

/* Back flip: a full turn about the lateral axis while the hips rise. */
static tb_doc *build_flip_source(int flags)
{
    static float t[9], ht[27], hr[36];
    for (int i = 0; i < 9; i++) {
        t[i] = i * 0.25f;
        float u = i / 8.0f;
        ht[i * 3] = 0, ht[i * 3 + 1] = 1.0f + 0.6f * sinf(3.14159265f * u) - 0.3f * sinf(3.14159265f * u * 2) * (u < 0.5f);
        ht[i * 3 + 2] = 0;
        qx(hr + i * 4, -360.0f * u);
    }
    keyset k[2] = {{0, "translation", 9, t, ht}, {0, "rotation", 9, t, hr}};
    return build_char(flags, k, 2, "BackFlip");
}

typedef struct rig {
    tb_doc *doc;
    tb_model *m;
    tb_retarget_calib *cal;
} rig;

static rig load_rig(tb_doc *doc, const tb_retarget_desc *d)
{
    rig r = {doc, NULL, NULL};
    tb_error err = {0};
    assert_int_equal(tb_model_load(&r.m, doc, -1, &err), TB_OK);
    assert_int_equal(tb_retarget_calibrate(&r.cal, r.m, NULL, d, &err), TB_OK);
    return r;
}

static void free_rig(rig *r)
{
    tb_retarget_calib_free(r->cal);
    tb_model_free(r->m);
    tb_doc_free(r->doc);
}

static tb_retarget_bake *transfer(const rig *src, const rig *dst, const tb_retarget_desc *d)
{
    tb_clip *clip = NULL;
    tb_error err = {0};
    assert_int_equal(tb_clip_load(&clip, src->doc, src->m, 0, NULL, &err), TB_OK);
    tb_retarget_bake *b = NULL;
    assert_int_equal(tb_retarget_run(&b, src->cal, clip, dst->cal, d, &err), TB_OK);
    tb_clip_free(clip);
    return b;
}

static int hips_of(const rig *r)
{
    return tb_retarget_calib_role_joint(r->cal, TB_ROLE_HIPS);
}

/* ---- tests -------------------------------------------------------------- */

static void calibrateRejectsSkeletonWithoutHips(void **state)
{
    (void)state;
    tb_doc *doc = build_char(NO_ROLES, NULL, 0, NULL);
    tb_model *m = NULL;
    tb_retarget_calib *c = NULL;
    tb_error err = {0};
    /* names only: the shape would find the body (test_humanoid) */
    tb_model_desc md = {0, NULL, 0, 1, 0};
    assert_int_equal(tb_model_load_desc(&m, doc, &md, &err), TB_OK);
    assert_int_equal(tb_retarget_calibrate(&c, m, NULL, NULL, &err), TB_ERR_NO_HIPS);
    assert_null(c);
    assert_string_equal(err.where, "/skins/0");
    tb_model_free(m);
    tb_doc_free(doc);
}

static void rolesMatchAcrossPrefixesAndUnits(void **state)
{
    (void)state;
    rig src = load_rig(build_crouch_source(PREFIX | ARMATURE_CM), NULL);
    rig dst = load_rig(build_char(WITH_TAIL, NULL, 0, NULL), NULL);
    assert_int_equal(tb_retarget_calib_role_count(src.cal), 22);
    assert_int_equal(tb_retarget_calib_role_count(dst.cal), 22);
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        assert_true(tb_retarget_calib_role_joint(src.cal, (tb_role)r) >= 0);
        assert_true(tb_retarget_calib_role_joint(dst.cal, (tb_role)r) >= 0);
    }
    /* same proportions in world units: the leg ratio is 1 despite cm + 0.01 */
    assert_float_equal(tb_retarget_calib_leg_length(src.cal), tb_retarget_calib_leg_length(dst.cal), 1e-4);
    tb_retarget_bake *b = transfer(&src, &dst, NULL);
    assert_float_equal(b->leg_ratio, 1.0f, 1e-4);
    assert_float_equal(b->facing_deg, 0.0f, 1e-3);
    /* identical skeletons: the target's hips follow the source's exactly */
    const tb_transform *mid = b->locals + (size_t)(b->frame_count / 2) * (size_t)b->joint_count;
    assert_float_equal(mid[hips_of(&dst)].t[1], 0.55f, 1e-3);
    tb_retarget_bake_free(b);
    free_rig(&src);
    free_rig(&dst);
}

static void supportsSplitTailFeetAndBody(void **state)
{
    (void)state;
    rig r = load_rig(build_char(WITH_TAIL, NULL, 0, NULL), NULL);
    const tb_ground_supports *s = tb_retarget_calib_supports(r.cal);
    assert_true(s->tail_count > 0);
    assert_true(s->foot_count > 0);
    assert_true(s->body_count > 0);
    /* f_body excludes the tail hanging 0.13 below the soles */
    assert_float_equal(s->f_body, 0.0f, 1e-6);
    for (int i = 0; i < s->count; i++)
        if (s->kind[i] == TB_SUPPORT_TAIL)
            assert_true(s->bind_y[i] < 1.0f);
    /* placement: the body's level ignores the tail; framing keeps it */
    tb_placement p;
    tb_error err = {0};
    assert_int_equal(tb_ground_placement(&p, r.m, NULL, &err), TB_OK);
    assert_float_equal(p.body_min_y, 0.0f, 1e-6);
    assert_float_equal(p.ground_offset_y, 0.0f, 1e-6);
    assert_true(p.all_min_y < -0.12f);
    assert_true(p.frame_min[1] < -0.12f);
    assert_true(p.tail_vertex_count > 0);
    /* sampling is deterministic */
    tb_ground_supports a, b;
    assert_int_equal(tb_ground_supports_build(&a, r.m, NULL, NULL, &err), TB_OK);
    assert_int_equal(tb_ground_supports_build(&b, r.m, NULL, NULL, &err), TB_OK);
    assert_int_equal(a.count, b.count);
    assert_memory_equal(a.vertex, b.vertex, (size_t)a.count * sizeof *a.vertex);
    tb_ground_supports_free(&a);
    tb_ground_supports_free(&b);
    free_rig(&r);
}

static void smoothingNeverLowersTheLift(void **state)
{
    (void)state;
    float raw[40] = {0}, lift[40];
    raw[20] = 0.1f;
    raw[21] = 0.05f;
    tb_ground_smooth(lift, raw, 40, 1.0f / 30, 0.1f);
    for (int i = 0; i < 40; i++)
        assert_true(lift[i] >= raw[i]);
    assert_float_equal(lift[0], 0, 0);
    assert_float_equal(lift[39], 0, 0);
    assert_true(lift[18] > 0 && lift[18] < 0.1f);
    float zero[10] = {0}, out[10];
    tb_ground_smooth(out, zero, 10, 1.0f / 30, 0.1f);
    for (int i = 0; i < 10; i++)
        assert_float_equal(out[i], 0, 0);
}

/* Pelvis height with and without tail geometry on the same clip, and the
 * lift the tail would have caused if counted (SPEC D). */
static void check_tail_never_lifts(tb_doc *(*make)(int), const char *what)
{
    rig src = load_rig(make(0), NULL);
    rig with = load_rig(build_char(WITH_TAIL, NULL, 0, NULL), NULL);
    rig without = load_rig(build_char(0, NULL, 0, NULL), NULL);
    tb_retarget_bake *bw = transfer(&src, &with, NULL), *bo = transfer(&src, &without, NULL);
    assert_int_equal(bw->frame_count, bo->frame_count);
    int hw = hips_of(&with), ho = hips_of(&without);
    float lowest_tail = INFINITY, max_lift = 0;
    for (int f = 0; f < bw->frame_count; f++) {
        const tb_transform *a = &bw->locals[(size_t)f * (size_t)bw->joint_count + (size_t)hw];
        const tb_transform *b = &bo->locals[(size_t)f * (size_t)bo->joint_count + (size_t)ho];
        assert_memory_equal(a->t, b->t, sizeof a->t); /* pelvis identical */
        assert_memory_equal(a->r, b->r, sizeof a->r);
        assert_float_equal(bw->lift[f] - bo->lift[f], 0.0f, 0.0f); /* tail-caused lift is 0 */
        if (bw->tail_min_y[f] < lowest_tail)
            lowest_tail = bw->tail_min_y[f];
        if (bw->lift[f] > max_lift)
            max_lift = bw->lift[f];
    }
    /* the clip really puts the tail below the floor and the body above it */
    assert_true(lowest_tail < -0.1f);
    assert_float_equal(max_lift, 0.0f, 0.0f);
    print_message("%s: tail lowest %.3f m, pelvis lift 0 with and without tail\n", what, lowest_tail);

    /* The same tail counted as body (unrecognised names, hanging rule off)
     * would lift the pelvis: the check above is not vacuous. */
    tb_retarget_desc keep = {0};
    keep.ground.keep_hanging = 1;
    rig counted = load_rig(build_char(WITH_TAIL | RENAME_TAIL, NULL, 0, NULL), &keep);
    tb_retarget_bake *bc = transfer(&src, &counted, &keep);
    float counted_max = 0;
    for (int f = 0; f < bc->frame_count; f++)
        if (bc->lift[f] > counted_max)
            counted_max = bc->lift[f];
    print_message("%s: a counted tail would lift the pelvis by %.3f m\n", what, counted_max);
    tb_retarget_bake_free(bc);
    free_rig(&counted);
    /* Unrecognised tail names but the hanging rule on: no lift either. */
    rig hanging = load_rig(build_char(WITH_TAIL | RENAME_TAIL, NULL, 0, NULL), NULL);
    tb_retarget_bake *bh = transfer(&src, &hanging, NULL);
    for (int f = 0; f < bh->frame_count; f++)
        assert_float_equal(bh->lift[f], 0.0f, 0.0f);
    tb_retarget_bake_free(bh);
    free_rig(&hanging);
    if (make == build_crouch_source) /* the rigid tail drops with the hips: 0.45 m */
        assert_float_equal(counted_max, 0.45f, 0.01f);

    tb_retarget_bake_free(bw);
    tb_retarget_bake_free(bo);
    free_rig(&src);
    free_rig(&with);
    free_rig(&without);
}

static void crouchPelvisIdenticalWithAndWithoutTail(void **state)
{
    (void)state;
    check_tail_never_lifts(build_crouch_source, "Crouch");
}

static void backFlipTailCausesNoPelvisLift(void **state)
{
    (void)state;
    check_tail_never_lifts(build_flip_source, "BackFlip");
}

/* a(t): a target only following a source that sinks itself is not lifted;
 * --no-ground leaves every lift at 0. */
static void sourceAllowanceLetsBodyFollowBelowFloor(void **state)
{
    (void)state;
    static float t[3] = {0, 0.5f, 1}, ht[9] = {0, 1, 0, 0, 0.3f, 0, 0, 1, 0};
    keyset k[1] = {{0, "translation", 3, t, ht}}; /* hips sink 0.7 m, legs straight */
    rig src = load_rig(build_char(0, k, 1, "Sink"), NULL);
    rig dst = load_rig(build_char(WITH_TAIL, NULL, 0, NULL), NULL);
    tb_retarget_bake *b = transfer(&src, &dst, NULL);
    int mid = b->frame_count / 2;
    /* the source sinks too (a(t) < 0): the target only matches it */
    assert_true(b->allowance[mid] < -0.5f);
    assert_float_equal(b->lift[mid], 0.0f, 1e-6);
    tb_retarget_bake_free(b);
    tb_retarget_desc off = {0};
    off.no_ground = 1;
    b = transfer(&src, &dst, &off);
    for (int f = 0; f < b->frame_count; f++)
        assert_float_equal(b->lift[f], 0.0f, 0.0f);
    tb_retarget_bake_free(b);
    free_rig(&src);
    free_rig(&dst);
}

/* SPEC D "Stable calibration": move and rotate the target's hips (stored
 * node pose and live pose) between transfers: tracks equal a clean run's,
 * and the live pose is never written. */
static void calibrationIgnoresLiveHipsPose(void **state)
{
    (void)state;
    rig src = load_rig(build_crouch_source(PREFIX), NULL);
    rig clean = load_rig(build_char(WITH_TAIL, NULL, 0, NULL), NULL);
    tb_retarget_bake *b0 = transfer(&src, &clean, NULL);

    /* 1. the live pose of the calibrated model changes between transfers */
    tb_transform *live = (tb_transform *)clean.m->skel.rest_local;
    int h = clean.m->role_joint[TB_ROLE_HIPS];
    live[h].t[0] += 0.7f;
    live[h].t[1] -= 0.3f;
    live[h].r[0] = 0.3826834f, live[h].r[3] = 0.9238795f;
    tb_transform snapshot[NJ + 1];
    memcpy(snapshot, live, (size_t)clean.m->skel.joint_count * sizeof *live);
    tb_retarget_bake *b1 = transfer(&src, &clean, NULL);
    assert_memory_equal(snapshot, live, (size_t)clean.m->skel.joint_count * sizeof *live); /* never written */
    assert_int_equal(b0->frame_count, b1->frame_count);
    assert_memory_equal(b0->locals, b1->locals, (size_t)b0->frame_count * (size_t)b0->joint_count * sizeof(tb_transform));

    /* 2. the stored node TRS in the document moves, and we recalibrate */
    tb_doc *moved = build_char(WITH_TAIL, NULL, 0, NULL);
    json_t *hips = json_array_get(json_object_get(tb_doc_json(moved), "nodes"), 0);
    json_object_set_new(hips, "translation", json_pack("[f,f,f]", 0.5, 1.4, -0.2));
    json_object_set_new(hips, "rotation", json_pack("[f,f,f,f]", 0.0, 0.7071068, 0.0, 0.7071068));
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(moved, &err), TB_OK);
    rig mv = load_rig(moved, NULL);
    tb_retarget_bake *b2 = transfer(&src, &mv, NULL);
    assert_memory_equal(b0->locals, b2->locals, (size_t)b0->frame_count * (size_t)b0->joint_count * sizeof(tb_transform));
    assert_memory_equal(b0->lift, b2->lift, (size_t)b0->frame_count * sizeof(float));

    tb_retarget_bake_free(b0);
    tb_retarget_bake_free(b1);
    tb_retarget_bake_free(b2);
    free_rig(&mv);
    free_rig(&src);
    free_rig(&clean);
}

/* The written animation, reloaded and sampled, reproduces the bake. */
static void writtenAnimationRoundTrips(void **state)
{
    (void)state;
    rig src = load_rig(build_crouch_source(PREFIX | ARMATURE_CM), NULL);
    rig dst = load_rig(build_char(WITH_TAIL, NULL, 0, NULL), NULL);
    tb_retarget_bake *b = transfer(&src, &dst, NULL);
    tb_error err = {0};
    assert_int_equal(tb_retarget_write(dst.doc, dst.cal, b, &err), TB_OK);
    tb_model_free(dst.m);
    dst.m = NULL;
    assert_int_equal(tb_doc_refresh(dst.doc, &err), TB_OK);
    const char *path = tbt_tmp_path("roundtrip.glb");
    assert_int_equal(tb_doc_save(dst.doc, path, &err), TB_OK);
    tb_doc *re = NULL;
    assert_int_equal(tb_doc_load(&re, path, NULL, &err), TB_OK);
    const tb_gltf *g = tb_doc_gltf(re);
    assert_int_equal(g->animation_count, 1);
    assert_string_equal(g->animations[0].name, "Crouch");
    tb_model *m = NULL;
    tb_clip *clip = NULL;
    assert_int_equal(tb_model_load(&m, re, -1, &err), TB_OK);
    assert_int_equal(tb_clip_load(&clip, re, m, 0, NULL, &err), TB_OK);
    tb_transform loc[NJ + 1];
    for (int f = 0; f < b->frame_count; f++) {
        tb_clip_sample(clip, &m->skel, b->times[f], loc);
        for (int j = 0; j < m->skel.joint_count; j++) {
            const tb_transform *x = &b->locals[(size_t)f * (size_t)b->joint_count + (size_t)j];
            for (int i = 0; i < 3; i++)
                assert_float_equal(loc[j].t[i], x->t[i], 1e-5);
            float d = fabsf(loc[j].r[0] * x->r[0] + loc[j].r[1] * x->r[1] + loc[j].r[2] * x->r[2] + loc[j].r[3] * x->r[3]);
            assert_float_equal(d, 1.0f, 1e-5);
        }
    }
    tb_clip_free(clip);
    tb_model_free(m);
    tb_doc_free(re);
    tb_retarget_bake_free(b);
    free_rig(&src);
    free_rig(&dst);
}

/* ---- corpus: real rigs --------------------------------------------------- */

static float angle_deg(const float a[3], const float b[3])
{
    float la = sqrtf(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), lb = sqrtf(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    float c = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (la * lb);
    c = c > 1 ? 1 : c < -1 ? -1 : c;
    return acosf(c) * 57.29578f;
}

/* Facing of a model from its own geometry, not from anything retarget
 * reports: forward = (left thigh − right thigh) × up, horizontal, in the
 * bind pose (+Y up; the stored pose may be posed, as the Bone Demon's is).
 * Returns atan2(forward.x, forward.z). */
static float geometric_heading(const tb_model *m)
{
    const float(*w)[16] = m->skel.bind_world;
    int l = m->role_joint[TB_ROLE_LEFT_UPLEG], r = m->role_joint[TB_ROLE_RIGHT_UPLEG];
    assert_true(l >= 0 && r >= 0);
    float left[3] = {w[l][12] - w[r][12], 0, w[l][14] - w[r][14]};
    /* forward = left × (0,1,0) = (−left.z, 0, left.x) */
    return atan2f(-left[2], left[0]);
}

/* Target yaw relative to the source about +Y, from the two skeletons. */
static float geometric_yaw(const tb_model *ms, const tb_model *mt)
{
    float y = geometric_heading(mt) - geometric_heading(ms);
    while (y > 3.14159265f)
        y -= 2 * 3.14159265f;
    while (y < -3.14159265f)
        y += 2 * 3.14159265f;
    return y;
}

static const tb_role LIMBS[][2] = {
    {TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG},   {TB_ROLE_LEFT_LEG, TB_ROLE_LEFT_FOOT},
    {TB_ROLE_RIGHT_UPLEG, TB_ROLE_RIGHT_LEG}, {TB_ROLE_RIGHT_LEG, TB_ROLE_RIGHT_FOOT},
    {TB_ROLE_LEFT_ARM, TB_ROLE_LEFT_FOREARM}, {TB_ROLE_LEFT_FOREARM, TB_ROLE_LEFT_HAND},
    {TB_ROLE_RIGHT_ARM, TB_ROLE_RIGHT_FOREARM}, {TB_ROLE_RIGHT_FOREARM, TB_ROLE_RIGHT_HAND},
};

/* Angle between the source's world limb direction turned by yaw about +Y
 * and the target's. */
static float limb_error_deg(const tb_model *ms, float (*ws)[16], const tb_model *mt, float (*wt)[16], size_t p, float yaw)
{
    float cy = cosf(yaw), sy = sinf(yaw);
    int sa = ms->role_joint[LIMBS[p][0]], sb = ms->role_joint[LIMBS[p][1]];
    int ta = mt->role_joint[LIMBS[p][0]], tb = mt->role_joint[LIMBS[p][1]];
    float ds[3] = {ws[sb][12] - ws[sa][12], ws[sb][13] - ws[sa][13], ws[sb][14] - ws[sa][14]};
    float dsr[3] = {cy * ds[0] + sy * ds[2], ds[1], -sy * ds[0] + cy * ds[2]}; /* yaw about +Y */
    float dt[3] = {wt[tb][12] - wt[ta][12], wt[tb][13] - wt[ta][13], wt[tb][14] - wt[ta][14]};
    return angle_deg(dsr, dt);
}

/* Sample the source with tb_clip_sample + tb_local_to_world and the written
 * target the same way; compare world limb directions (source turned by the
 * yaw between the two skeletons' own geometry, never by the facing_deg the
 * tool reports). */
static void limb_agreement(const char *lib_rel, const char *char_rel, const char *clip_name)
{
    tbt_path lib_buf, char_buf;
    const char *lib_path = tbt_corpus_file(&lib_buf, lib_rel);
    const char *char_path = tbt_corpus_file(&char_buf, char_rel);
    if (!lib_path || !char_path)
        tbt_skip();
    tb_doc *lib = NULL, *ch = NULL;
    tb_error err = {0};
    assert_int_equal(tb_doc_load(&lib, lib_path, NULL, &err), TB_OK);
    assert_int_equal(tb_doc_load(&ch, char_path, NULL, &err), TB_OK);
    tb_retarget_desc d = {0};
    d.no_detect = 1; /* limb directions do not depend on tail detection (SPEC A) */
    const char *only[1] = {clip_name};
    d.only = only;
    d.only_count = 1;
    tb_retarget_report rep;
    assert_int_equal(tb_retarget_docs(ch, &lib, 1, &d, &rep, &err), TB_OK);
    assert_int_equal(rep.clip_count, 1);
    double reported = rep.clips[0].facing_deg;
    tb_retarget_report_free(&rep);
    int anim = tb_clip_find(lib, clip_name);
    assert_true(anim >= 0);
    tb_model *ms = NULL, *mt = NULL;
    tb_clip *cs = NULL, *ct = NULL;
    assert_int_equal(tb_model_load(&ms, lib, -1, &err), TB_OK);
    assert_int_equal(tb_model_load(&mt, ch, -1, &err), TB_OK);
    assert_int_equal(tb_clip_load(&cs, lib, ms, anim, NULL, &err), TB_OK);
    assert_int_equal(tb_clip_load(&ct, ch, mt, tb_doc_gltf(ch)->animation_count - 1, NULL, &err), TB_OK);
    int ns = ms->skel.joint_count, nt = mt->skel.joint_count;
    tb_transform *ls = malloc((size_t)ns * sizeof *ls), *lt = malloc((size_t)nt * sizeof *lt);
    float(*ws)[16] = malloc((size_t)ns * sizeof *ws), (*wt)[16] = malloc((size_t)nt * sizeof *wt);
    float yaw = geometric_yaw(ms, mt);
    double sum = 0;
    float worst = 0;
    int n = 0;
    for (int f = 0; f <= 24; f++) {
        float t = ct->duration_s * (float)f / 24.0f;
        tb_clip_sample(cs, &ms->skel, t, ls);
        tb_local_to_world(&ms->skel, ls, NULL, ws);
        tb_clip_sample(ct, &mt->skel, t, lt);
        tb_local_to_world(&mt->skel, lt, NULL, wt);
        for (size_t p = 0; p < sizeof LIMBS / sizeof LIMBS[0]; p++) {
            float a = limb_error_deg(ms, ws, mt, wt, p, yaw);
            sum += a;
            n++;
            if (a > worst)
                worst = a;
        }
    }
    print_message("%s %s -> %s: limb direction vs source: mean %.2f deg, max %.2f deg (yaw from the skeletons "
                  "%.1f, reported facing %.1f)\n",
                  lib_rel, clip_name, char_rel, sum / n, worst, yaw * 57.29578f, reported);
    assert_true(sum / n < 2.0);
    assert_true(worst < 10.0f);
    free(ls);
    free(lt);
    free(ws);
    free(wt);
    tb_clip_free(cs);
    tb_clip_free(ct);
    tb_model_free(ms);
    tb_model_free(mt);
    tb_doc_free(lib);
    tb_doc_free(ch);
}

/* Self-contained: a crouch with an uneven rhythm (so playing it backwards
 * differs) onto a character turned to face +X. The limbs must follow the
 * source turned by the yaw between the skeletons' geometry (+90°), frame by
 * frame at the same times. */
static void turnedCharacterLimbsFollowTheSourceTurnedByTheSkeletons(void **state)
{
    (void)state;
    static float t[5] = {0, 0.2f, 0.45f, 0.8f, 1.0f};
    static float ht[15] = {0, 1.0f, 0, 0, 0.85f, 0.02f, 0, 0.6f, 0.05f, 0, 0.8f, 0, 0, 0.95f, 0};
    static float thigh[20], shin[20], arm[20];
    float a[5] = {0, -20, -75, -50, -10};
    for (int i = 0; i < 5; i++) {
        qx(thigh + i * 4, a[i]);
        qx(shin + i * 4, -1.6f * a[i]);
        qx(arm + i * 4, 0.8f * a[i]);
    }
    keyset k[7] = {{0, "translation", 5, t, ht}, {14, "rotation", 5, t, thigh}, {18, "rotation", 5, t, thigh},
                   {15, "rotation", 5, t, shin},  {19, "rotation", 5, t, shin},  {7, "rotation", 5, t, arm},
                   {11, "rotation", 5, t, arm}};
    rig src = load_rig(build_char(0, k, 7, "Crouch"), NULL);
    rig dst = load_rig(build_char(WITH_TAIL | TURN90, NULL, 0, NULL), NULL);
    float yaw = geometric_yaw(src.m, dst.m);
    assert_float_equal(yaw, 3.14159265f / 2, 1e-4); /* the construction's own turn */
    tb_retarget_desc d = {0};
    d.no_ground = 1;
    tb_retarget_bake *b = transfer(&src, &dst, &d);
    tb_clip *cs = NULL;
    tb_error err = {0};
    assert_int_equal(tb_clip_load(&cs, src.doc, src.m, 0, NULL, &err), TB_OK);
    int ns = src.m->skel.joint_count, nt = dst.m->skel.joint_count;
    tb_transform *ls = malloc((size_t)ns * sizeof *ls);
    float(*ws)[16] = malloc((size_t)ns * sizeof *ws), (*wt)[16] = malloc((size_t)nt * sizeof *wt);
    float worst = 0;
    for (int f = 0; f < b->frame_count; f++) {
        tb_clip_sample(cs, &src.m->skel, b->times[f], ls);
        tb_local_to_world(&src.m->skel, ls, NULL, ws);
        tb_local_to_world(&dst.m->skel, b->locals + (size_t)f * (size_t)b->joint_count, NULL, wt);
        for (size_t p = 0; p < sizeof LIMBS / sizeof LIMBS[0]; p++) {
            float e = limb_error_deg(src.m, ws, dst.m, wt, p, yaw);
            worst = e > worst ? e : worst;
        }
    }
    print_message("turned target: worst limb direction error %.3f deg over %d frames (reported facing %.1f)\n", worst,
                  b->frame_count, b->facing_deg);
    assert_true(worst < 1.0f); /* same proportions: the directions carry over exactly */
    free(ls);
    free(ws);
    free(wt);
    tb_clip_free(cs);
    tb_retarget_bake_free(b);
    free_rig(&src);
    free_rig(&dst);
}

/* Leg length from a model's own bind skeleton: thigh + shin, both sides. */
static float geometric_leg_length(const tb_model *m)
{
    const float(*w)[16] = m->skel.bind_world;
    const tb_role legs[2][3] = {{TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG, TB_ROLE_LEFT_FOOT},
                                {TB_ROLE_RIGHT_UPLEG, TB_ROLE_RIGHT_LEG, TB_ROLE_RIGHT_FOOT}};
    float sum = 0;
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 2; i++) {
            int a = m->role_joint[legs[s][i]], b = m->role_joint[legs[s][i + 1]];
            assert_true(a >= 0 && b >= 0);
            float dx = w[b][12] - w[a][12], dy = w[b][13] - w[a][13], dz = w[b][14] - w[a][14];
            sum += sqrtf(dx * dx + dy * dy + dz * dz);
        }
    return 0.5f * sum;
}

/* The hips' travel is the source's, scaled by the target's leg length over
 * the source's (both from the skeletons' geometry here): a character 1.5
 * times as large strides 1.5 times as far (retarget-leg-ratio-inverted). */
static void hipsTravelScalesByTheTargetsLegLengthOverTheSources(void **state)
{
    (void)state;
    static float t[4] = {0, 0.3f, 0.7f, 1.0f};
    static float ht[12] = {0, 1.0f, 0, 0.05f, 0.97f, 0.25f, 0.12f, 1.02f, 0.55f, 0.1f, 1.0f, 0.8f};
    keyset k[1] = {{0, "translation", 4, t, ht}};
    rig src = load_rig(build_char(0, k, 1, "Stride"), NULL);
    rig dst = load_rig(build_char(WITH_TAIL | BIG, NULL, 0, NULL), NULL);
    const float ratio = geometric_leg_length(dst.m) / geometric_leg_length(src.m);
    assert_float_equal(ratio, BIG_FACTOR, 1e-4); /* the construction's own scale */
    tb_retarget_desc d = {0};
    d.no_ground = 1; /* the travel alone: no lift added */
    tb_retarget_bake *b = transfer(&src, &dst, &d);
    tb_clip *cs = NULL;
    tb_error err = {0};
    assert_int_equal(tb_clip_load(&cs, src.doc, src.m, 0, NULL, &err), TB_OK);
    int ns = src.m->skel.joint_count, nt = dst.m->skel.joint_count;
    tb_transform *ls = malloc((size_t)ns * sizeof *ls);
    float(*ws)[16] = malloc((size_t)ns * sizeof *ws), (*wt)[16] = malloc((size_t)nt * sizeof *wt);
    const int hs = src.m->role_joint[TB_ROLE_HIPS], htg = dst.m->role_joint[TB_ROLE_HIPS];
    const float(*bs)[16] = src.m->skel.bind_world, (*bt)[16] = dst.m->skel.bind_world;
    float worst = 0, farthest = 0;
    for (int f = 0; f < b->frame_count; f++) {
        tb_clip_sample(cs, &src.m->skel, b->times[f], ls);
        tb_local_to_world(&src.m->skel, ls, NULL, ws);
        tb_local_to_world(&dst.m->skel, b->locals + (size_t)f * (size_t)b->joint_count, NULL, wt);
        for (int i = 0; i < 3; i++) {
            float want = ratio * (ws[hs][12 + i] - bs[hs][12 + i]), got = wt[htg][12 + i] - bt[htg][12 + i];
            worst = fmaxf(worst, fabsf(got - want));
            farthest = fmaxf(farthest, fabsf(want));
        }
    }
    print_message("hips travel: up to %.3f m on the target, off the source's x %.2f by at most %.2g m\n", farthest,
                  ratio, worst);
    assert_true(farthest > 1.0f); /* 0.8 m forward on the source */
    assert_true(worst < 1e-3f);
    free(ls);
    free(ws);
    free(wt);
    tb_clip_free(cs);
    tb_retarget_bake_free(b);
    free_rig(&src);
    free_rig(&dst);
}

static void xbotWalkLimbsAgreeOnWolf(void **state)
{
    (void)state;
    limb_agreement("clips/Xbot_agree_run_walk.glb", "characters/banter_Wolf.glb", "walk_Armature");
}

static void soldierRunLimbsAgreeOnBoneDemon(void **state)
{
    (void)state;
    limb_agreement("clips/threejs_Soldier_rexport.glb", "characters/banter_Bone_Demon.glb", "Run");
}

/* Limb reconciliation (opt-in): a foot whose skin dips below the floor is
 * raised by a leg IK. On the Wolf the transferred Xbot walk and run dip
 * ~10 cm (longer feet than the source's); with foot_contact the lowest foot
 * skin stays within a centimetre of the floor. */
static void footContactKeepsTheWolfsFeetOutOfTheFloor(void **state)
{
    (void)state;
    tbt_path lib_buf, char_buf;
    const char *lib_path = tbt_corpus_file(&lib_buf, "clips/Xbot_agree_run_walk.glb");
    const char *char_path = tbt_corpus_file(&char_buf, "characters/banter_Wolf.glb");
    if (!lib_path || !char_path)
        tbt_skip();
    double low[2];
    int fixes[2];
    for (int on = 0; on < 2; on++) {
        tb_doc *lib = NULL, *ch = NULL;
        tb_error err = {0};
        assert_int_equal(tb_doc_load(&lib, lib_path, NULL, &err), TB_OK);
        assert_int_equal(tb_doc_load(&ch, char_path, NULL, &err), TB_OK);
        tb_retarget_desc d = {0};
        d.foot_contact = on;
        const char *only[2] = {"walk", "run"};
        d.only = only;
        d.only_count = 2;
        tb_retarget_report rep;
        assert_int_equal(tb_retarget_docs(ch, &lib, 1, &d, &rep, &err), TB_OK);
        assert_int_equal(rep.clip_count, 2);
        low[on] = INFINITY;
        fixes[on] = 0;
        for (int i = 0; i < rep.clip_count; i++) {
            double y = rep.clips[i].foot_min_y_low;
            assert_true(isfinite(y)); /* the Wolf has feet */
            low[on] = y < low[on] ? y : low[on];
            fixes[on] += rep.clips[i].foot_contact_fixes;
        }
        tb_retarget_report_free(&rep);
        tb_doc_free(lib);
        tb_doc_free(ch);
    }
    print_message("Wolf, Xbot walk+run: lowest foot skin %.3f m as transferred, %.3f m with foot contact "
                  "(%d leg-frames raised)\n",
                  low[0], low[1], fixes[1]);
    assert_true(low[0] < -0.05);
    assert_int_equal(fixes[0], 0);
    assert_true(fixes[1] > 0);
    assert_true(low[1] > -0.01);
}

/* ---- CLI ------------------------------------------------------------------ */

static void cliRetargetsAndReports(void **state)
{
    (void)state;
    const char *src = tbt_tmp_path("cli_src.glb"), *dst = tbt_tmp_path("cli_dst.glb");
    char s[4096], d[4096];
    snprintf(s, sizeof s, "%s", src);
    snprintf(d, sizeof d, "%s", dst);
    tb_doc *a = build_crouch_source(PREFIX), *b = build_char(WITH_TAIL, NULL, 0, NULL);
    tb_error err = {0};
    assert_int_equal(tb_doc_save(a, s, &err), TB_OK);
    assert_int_equal(tb_doc_save(b, d, &err), TB_OK);
    tb_doc_free(a);
    tb_doc_free(b);
    char out[4096], rep[4096];
    snprintf(out, sizeof out, "%s", tbt_tmp_path("cli_out.glb"));
    snprintf(rep, sizeof rep, "%s", tbt_tmp_path("cli_report.json"));
    char *text = NULL;
    int rc = tbt_run_cli(&text, "retarget '%s' --clips '%s' --only crouch -o '%s' --report '%s'", d, s, out, rep);
    if (rc != 0)
        print_message("%s\n", text);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(text, "placement"));
    free(text);
    json_error_t je;
    json_t *r = json_load_file(rep, 0, &je);
    assert_non_null(r);
    json_t *pl = json_object_get(r, "placement");
    assert_float_equal(json_real_value(json_object_get(pl, "ground_offset_y")), 0.0, 1e-6);
    assert_true(json_real_value(json_object_get(pl, "all_min_y")) < -0.12);
    assert_int_equal(json_array_size(json_object_get(r, "clips")), 1);
    json_decref(r);
    tb_doc *o = NULL;
    assert_int_equal(tb_doc_load(&o, out, NULL, &err), TB_OK);
    assert_int_equal(tb_doc_gltf(o)->animation_count, 1);
    tb_doc_free(o);

    /* missing clip name: exit 1, the names on offer listed */
    rc = tbt_run_cli(&text, "retarget '%s' --clips '%s' --only Nope -o '%s'", d, s, out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(text, "Nope"));
    assert_non_null(strstr(text, "Crouch"));
    free(text);
    /* usage errors: exit 2 */
    rc = tbt_run_cli(&text, "retarget '%s' -o '%s'", d, out);
    assert_int_equal(rc, 2);
    free(text);
    rc = tbt_run_cli(&text, "retarget '%s' --clips '%s'", d, s);
    assert_int_equal(rc, 2);
    free(text);
    /* a character whose joint names say nothing (bone_N): its roles come
     * from its shape, so the clips transfer all the same */
    tb_doc *bones = build_char(NO_ROLES, NULL, 0, NULL);
    char nr[4096];
    snprintf(nr, sizeof nr, "%s", tbt_tmp_path("cli_noroles.glb"));
    assert_int_equal(tb_doc_save(bones, nr, &err), TB_OK);
    tb_doc_free(bones);
    rc = tbt_run_cli(&text, "retarget '%s' --clips '%s' -o '%s'", nr, s, out);
    assert_int_equal(rc, 0);
    free(text);
}

/* ---- the pure stages of tb_retarget_run (passes/retarget_internal.h) ---- */

static void rotate(float d[3], const float q[4], const float v[3])
{
    /* d = q v q^-1, written out (not the library's helper) */
    float tx = 2 * (q[1] * v[2] - q[2] * v[1]), ty = 2 * (q[2] * v[0] - q[0] * v[2]), tz = 2 * (q[0] * v[1] - q[1] * v[0]);
    d[0] = v[0] + q[3] * tx + (q[1] * tz - q[2] * ty);
    d[1] = v[1] + q[3] * ty + (q[2] * tx - q[0] * tz);
    d[2] = v[2] + q[3] * tz + (q[0] * ty - q[1] * tx);
}

/* C takes each column of the source frame onto the target's; the yaw is the
 * turn about the target's up from the source's forward to the target's. */
static void stageFrameMapTurnsSourceFrameOntoTarget(void **state)
{
    (void)state;
    const float src[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    /* the target faces +X: the source turned +90° about Y; then facing -Z; then the same */
    const float dst[3][3][3] = {{{0, 0, -1}, {0, 1, 0}, {1, 0, 0}},
                                {{-1, 0, 0}, {0, 1, 0}, {0, 0, -1}},
                                {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    const float yaw[3] = {90, 180, 0};
    for (int c = 0; c < 3; c++) {
        float cq[4], facing = NAN;
        tb__rt_frame_map(src, dst[c], cq, &facing);
        assert_float_equal(cq[0] * cq[0] + cq[1] * cq[1] + cq[2] * cq[2] + cq[3] * cq[3], 1, 1e-5);
        for (int k = 0; k < 3; k++) {
            float r[3];
            rotate(r, cq, src[k]);
            for (int i = 0; i < 3; i++)
                assert_float_equal(r[i], dst[c][k][i], 1e-5);
        }
        assert_float_equal(fabsf(facing), yaw[c], 1e-3); /* 180 may read as -180 */
        if (c == 0)
            assert_true(facing > 0);
    }
}

/* Every rotation ends on the previous frame's hemisphere, and one already
 * there is left as it is. */
static void stageShortArcKeepsTheHemisphere(void **state)
{
    (void)state;
    tb_transform prev[3], loc[3];
    memset(prev, 0, sizeof prev);
    memset(loc, 0, sizeof loc);
    const float p[3][4] = {{0, 0, 0, 1}, {0, 0.6f, 0, 0.8f}, {0.8f, 0, 0, 0.6f}};
    const float l[3][4] = {{0, 0, 0, -1}, {0, 0.8f, 0, 0.6f}, {-0.6f, 0, 0, -0.8f}};
    for (int j = 0; j < 3; j++)
        memcpy(prev[j].r, p[j], sizeof p[j]), memcpy(loc[j].r, l[j], sizeof l[j]);
    tb__rt_short_arc(loc, prev, 3);
    for (int j = 0; j < 3; j++) {
        float dot = 0;
        for (int i = 0; i < 4; i++)
            dot += loc[j].r[i] * prev[j].r[i];
        assert_true(dot >= 0);
    }
    assert_float_equal(loc[0].r[3], 1, 0);    /* flipped */
    assert_float_equal(loc[1].r[1], 0.8f, 0); /* already on it: kept */
    assert_float_equal(loc[1].r[3], 0.6f, 0);
    assert_float_equal(loc[2].r[0], 0.6f, 0); /* flipped */
    assert_float_equal(loc[2].r[3], 0.8f, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calibrateRejectsSkeletonWithoutHips),
        cmocka_unit_test(stageFrameMapTurnsSourceFrameOntoTarget),
        cmocka_unit_test(stageShortArcKeepsTheHemisphere),
        cmocka_unit_test(rolesMatchAcrossPrefixesAndUnits),
        cmocka_unit_test(supportsSplitTailFeetAndBody),
        cmocka_unit_test(smoothingNeverLowersTheLift),
        cmocka_unit_test(crouchPelvisIdenticalWithAndWithoutTail),
        cmocka_unit_test(backFlipTailCausesNoPelvisLift),
        cmocka_unit_test(sourceAllowanceLetsBodyFollowBelowFloor),
        cmocka_unit_test(calibrationIgnoresLiveHipsPose),
        cmocka_unit_test(writtenAnimationRoundTrips),
        cmocka_unit_test(turnedCharacterLimbsFollowTheSourceTurnedByTheSkeletons),
        cmocka_unit_test(hipsTravelScalesByTheTargetsLegLengthOverTheSources),
        cmocka_unit_test(xbotWalkLimbsAgreeOnWolf),
        cmocka_unit_test(soldierRunLimbsAgreeOnBoneDemon),
        cmocka_unit_test(footContactKeepsTheWolfsFeetOutOfTheFloor),
        cmocka_unit_test(cliRetargetsAndReports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
