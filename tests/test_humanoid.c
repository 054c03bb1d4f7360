/* Humanoid roles from joint names, across the layouts riggers produce, and
 * from the skeleton's shape when the names do not say. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/report_json.h"
#include "support.h"
#include "tailbone/appendage.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"
#include "tailbone/synth.h"

static void mixamo_names_with_any_prefix(void **state)
{
    (void)state;
    assert_int_equal(tb_role_from_name("mixamorig:Hips"), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name("mixamorig1:LeftUpLeg"), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_from_name("mixamorigRightForeArm"), TB_ROLE_RIGHT_FOREARM); /* three.js drops ':' */
    assert_int_equal(tb_role_from_name("Armature:mixamorig:Spine2"), TB_ROLE_SPINE2);
    assert_int_equal(tb_role_from_name("LeftToeBase"), TB_ROLE_LEFT_TOE);
    assert_int_equal(tb_role_from_name("Head"), TB_ROLE_HEAD);
}

/* Every role's own name reads back however it is cased and cut up
 * (humanoid.c compares against a table of the names already squashed:
 * one wrong entry there loses a role), and the alias written with a
 * separator ("root_hips") still reads. */
static void every_role_name_reads_back_in_any_case_and_with_separators(void **state)
{
    (void)state;
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        const char *name = tb_role_name((tb_role)r);
        char upper[64], cut[128], loose[140];
        size_t n = 0, k = 0;
        for (const char *c = name; *c && n + 1 < sizeof upper; c++)
            upper[n++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
        upper[n] = 0;
        for (const char *c = name; *c && k + 2 < sizeof cut; c++) { /* "Left_Up_Leg" */
            if (c != name && *c >= 'A' && *c <= 'Z')
                cut[k++] = '_';
            cut[k++] = *c;
        }
        cut[k] = 0;
        snprintf(loose, sizeof loose, "DEF_%s_jnt", cut);
        assert_int_equal(tb_role_from_name(name), r);
        assert_int_equal(tb_role_from_name(upper), r);
        assert_int_equal(tb_role_from_name(cut), r);
        int was_loose = 0;
        assert_int_equal(tb_role_from_name_fuzzy(loose, &was_loose), r);
        assert_true(was_loose);
    }
    assert_int_equal(tb_role_from_name("Root_Hips"), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name("root.hips"), TB_ROLE_HIPS);
}

static void fingers_end_helpers_and_tails_have_no_role(void **state)
{
    (void)state;
    assert_int_equal(tb_role_from_name("mixamorig:LeftHandIndex1"), TB_ROLE_NONE);
    assert_int_equal(tb_role_from_name("mixamorig:HeadTop_End"), TB_ROLE_NONE);
    assert_int_equal(tb_role_from_name("mixamorig:LeftFoot_end"), TB_ROLE_NONE);
    assert_int_equal(tb_role_from_name("Tail_1"), TB_ROLE_NONE);
    assert_int_equal(tb_role_from_name(NULL), TB_ROLE_NONE);
    assert_int_equal(tb_role_from_name(""), TB_ROLE_NONE);
}

static void unreal_names(void **state)
{
    (void)state;
    assert_int_equal(tb_role_from_name("pelvis"), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name("spine_03"), TB_ROLE_SPINE2);
    assert_int_equal(tb_role_from_name("thigh_l"), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_from_name("calf_r"), TB_ROLE_RIGHT_LEG);
    assert_int_equal(tb_role_from_name("upperarm_l"), TB_ROLE_LEFT_ARM);
    assert_int_equal(tb_role_from_name("ball_r"), TB_ROLE_RIGHT_TOE);
}

static void biped_character_creator_and_vrm_names(void **state)
{
    (void)state;
    assert_int_equal(tb_role_from_name("Bip01 Pelvis"), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name("Bip001 L Thigh"), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_from_name("Bip01 R Calf"), TB_ROLE_RIGHT_LEG);
    assert_int_equal(tb_role_from_name("Bip01 L UpperArm"), TB_ROLE_LEFT_ARM);
    assert_int_equal(tb_role_from_name("CC_Base_Hip"), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name("CC_Base_L_Thigh"), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_from_name("CC_Base_R_Forearm"), TB_ROLE_RIGHT_FOREARM);
    assert_int_equal(tb_role_from_name("CC_Base_NeckTwist01"), TB_ROLE_NECK);
    assert_int_equal(tb_role_from_name("J_Bip_C_Hips"), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name("J_Bip_C_UpperChest"), TB_ROLE_SPINE2);
    assert_int_equal(tb_role_from_name("J_Bip_L_UpperLeg"), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_from_name("J_Bip_R_LowerArm"), TB_ROLE_RIGHT_FOREARM);
    assert_int_equal(tb_role_from_name("leftLowerLeg"), TB_ROLE_LEFT_LEG);
}

static void rigify_deform_spine_is_numbered_from_the_hips(void **state)
{
    (void)state;
    assert_int_equal(tb_role_from_name("DEF-spine"), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name("DEF-spine.001"), TB_ROLE_SPINE);
    assert_int_equal(tb_role_from_name("DEF-spine.003"), TB_ROLE_SPINE2);
    assert_int_equal(tb_role_from_name("DEF-spine.006"), TB_ROLE_HEAD);
    assert_int_equal(tb_role_from_name("DEF-thigh.L"), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_from_name("DEF-shin.R"), TB_ROLE_RIGHT_LEG);
    assert_int_equal(tb_role_from_name("DEF-upper_arm.L"), TB_ROLE_LEFT_ARM);
}

static void classes_group_the_roles(void **state)
{
    (void)state;
    assert_int_equal(tb_role_class_of(TB_ROLE_HIPS), TB_CLASS_PELVIS);
    assert_int_equal(tb_role_class_of(TB_ROLE_SPINE1), TB_CLASS_SPINE);
    assert_int_equal(tb_role_class_of(TB_ROLE_RIGHT_UPLEG), TB_CLASS_THIGH);
    assert_int_equal(tb_role_class_of(TB_ROLE_LEFT_FOOT), TB_CLASS_LOWER_LIMB);
    assert_int_equal(tb_role_class_of(TB_ROLE_NECK), TB_CLASS_HEAD);
    assert_int_equal(tb_role_class_of(TB_ROLE_RIGHT_HAND), TB_CLASS_ARM);
    assert_string_equal(tb_role_name(TB_ROLE_LEFT_TOE), "LeftToeBase");
    for (int r = 1; r < TB_ROLE_COUNT; r++) /* every canonical name maps back to its role */
        assert_int_equal(tb_role_from_name(tb_role_name((tb_role)r)), r);
}

static void tail_names_parse_with_chain_letters(void **state)
{
    (void)state;
    int c, i;
    assert_true(tb_tail_name_parse("Tail_3", &c, &i));
    assert_int_equal(c, 0);
    assert_int_equal(i, 3);
    assert_true(tb_tail_name_parse("mixamorig:TailB_2", &c, &i));
    assert_int_equal(c, 1);
    assert_int_equal(i, 2);
    assert_true(tb_tail_name_parse("Tail_End", &c, &i));
    assert_int_equal(i, 0);
    assert_false(tb_tail_name_parse("Ponytail_1", &c, &i));
    assert_false(tb_tail_name_parse("Tail1", &c, &i));
    assert_false(tb_tail_name_parse("Tail_0", &c, &i));
    assert_false(tb_tail_name_parse("Tail_x", &c, &i));
    assert_false(tb_tail_name_parse(NULL, &c, &i));
}


/* ---- loose names --------------------------------------------------------- */

static void loose_names_read_rig_suffixes_sides_and_misspellings(void **state)
{
    (void)state;
    int loose = 0;
    assert_int_equal(tb_role_from_name_fuzzy("Hips_jnt", &loose), TB_ROLE_HIPS);
    assert_true(loose);
    assert_int_equal(tb_role_from_name_fuzzy("RighUpLeg_jnt", NULL), TB_ROLE_RIGHT_UPLEG);
    assert_int_equal(tb_role_from_name_fuzzy("LeftForeArn", NULL), TB_ROLE_LEFT_FOREARM);
    assert_int_equal(tb_role_from_name_fuzzy("RightShouldr", NULL), TB_ROLE_RIGHT_SHOULDER);
    assert_int_equal(tb_role_from_name_fuzzy("spine.003", NULL), TB_ROLE_SPINE2);
    assert_int_equal(tb_role_from_name_fuzzy("ORG-spine.001", NULL), TB_ROLE_SPINE);
    assert_int_equal(tb_role_from_name_fuzzy("thigh.L", NULL), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_from_name_fuzzy("shin.R", NULL), TB_ROLE_RIGHT_LEG);
    assert_int_equal(tb_role_from_name_fuzzy("ORG-thigh.R", NULL), TB_ROLE_RIGHT_UPLEG);
    assert_int_equal(tb_role_from_name_fuzzy("L_Knee", NULL), TB_ROLE_LEFT_LEG);
    assert_int_equal(tb_role_from_name_fuzzy("Left_Hand_bone", NULL), TB_ROLE_LEFT_HAND);
    assert_int_equal(tb_role_from_name_fuzzy("b_Hip_01", NULL), TB_ROLE_HIPS);
    assert_int_equal(tb_role_from_name_fuzzy("b_Spine01_02", NULL), TB_ROLE_SPINE);
    /* exact names keep their reading and are not loose */
    assert_int_equal(tb_role_from_name_fuzzy("mixamorig:Spine1", &loose), TB_ROLE_SPINE1);
    assert_false(loose);
    for (int r = 1; r < TB_ROLE_COUNT; r++) { /* every role with a rig suffix */
        char name[64];
        snprintf(name, sizeof name, "%s_jnt", tb_role_name((tb_role)r));
        assert_int_equal(tb_role_from_name_fuzzy(name, NULL), r);
    }
}

static void loose_names_leave_opaque_and_near_miss_names_alone(void **state)
{
    (void)state;
    static const char *const none[] = {"Bone", "Bone.001", "Bone.002_L.002", "pelvis.L", "LeftEye",
                                       "mixamorig:LeftToe_End", "mixamorig:HeadTop_End", "LeftHandIndex1",
                                       "Tail1", "Palm2.L", "Thumb.L", "Torso", "Abdomen", "Ear1.L",
                                       "FrontUpperLeg.L", "Spine3x", "arm", "", NULL};
    for (int i = 0; none[i]; i++) {
        if (tb_role_from_name_fuzzy(none[i], NULL) != TB_ROLE_NONE)
            fail_msg("'%s' read as %s", none[i], tb_role_name(tb_role_from_name_fuzzy(none[i], NULL)));
    }
    assert_int_equal(tb_role_from_name_fuzzy(NULL, NULL), TB_ROLE_NONE);
    /* digits never bend: Spine1 is not Spine2 */
    assert_int_equal(tb_role_from_name_fuzzy("Spine1_jnt", NULL), TB_ROLE_SPINE1);
    assert_int_equal(tb_role_parse("leftupleg"), TB_ROLE_LEFT_UPLEG);
    assert_int_equal(tb_role_parse("thigh_r"), TB_ROLE_RIGHT_UPLEG);
    assert_int_equal(tb_role_parse("Tail"), TB_ROLE_NONE);
    assert_int_equal(tb_role_mirror(TB_ROLE_LEFT_TOE), TB_ROLE_RIGHT_TOE);
    assert_int_equal(tb_role_mirror(TB_ROLE_RIGHT_SHOULDER), TB_ROLE_LEFT_SHOULDER);
    assert_int_equal(tb_role_mirror(TB_ROLE_NECK), TB_ROLE_NECK);
}

/* ---- roles from the shape: synthetic characters --------------------------- */

static tb_doc *synth(const char *variant)
{
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_synth_desc d;
    memset(&d, 0, sizeof d);
    d.names = TB_SYNTH_NAMES_BARE;
    assert_int_equal(tb_synth_build(&doc, variant, &d, NULL, &err), TB_OK);
    return doc;
}

enum { RENAME_OPAQUE, RENAME_BLENDER, RENAME_MIRROR };

/* Renames every node whose name has a role: "joint_<node>", Blender's
 * default "Bone.<node>", or Left/Right swapped. */
static void rename_joints(tb_doc *doc, int how)
{
    json_t *nodes = json_object_get(tb_doc_json(doc), "nodes");
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        const char *name = json_string_value(json_object_get(n, "name"));
        if (!name || tb_role_from_name(name) == TB_ROLE_NONE)
            continue;
        char buf[128];
        if (how == RENAME_OPAQUE) {
            snprintf(buf, sizeof buf, "joint_%zu", i);
        } else if (how == RENAME_BLENDER) {
            snprintf(buf, sizeof buf, i ? "Bone.%03zu" : "Bone", i);
        } else if (!strncmp(name, "Left", 4)) {
            snprintf(buf, sizeof buf, "Right%s", name + 4);
        } else if (!strncmp(name, "Right", 5)) {
            snprintf(buf, sizeof buf, "Left%s", name + 5);
        } else {
            continue;
        }
        json_object_set_new(n, "name", json_string(buf));
    }
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
}

static tb_model *load_model(const tb_doc *doc)
{
    tb_model *m = NULL;
    tb_error err = {0};
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    return m;
}

/* Roles per doc node (the oracle: the same character with Mixamo names). */
static void roles_by_node(const tb_model *m, tb_role *out, int node_count)
{
    for (int i = 0; i < node_count; i++)
        out[i] = TB_ROLE_NONE;
    for (int j = 0; j < m->skel.joint_count; j++)
        out[m->node_of_joint[j]] = m->roles[j];
}

static void same_detection(const tb_model *a, const tb_model *b)
{
    tb_appendage_report ra, rb;
    tb_error err = {0};
    assert_int_equal(tb_appendage_detect(&ra, a, NULL, &err), TB_OK);
    assert_int_equal(tb_appendage_detect(&rb, b, NULL, &err), TB_OK);
    assert_int_equal(ra.pelvis_joint, rb.pelvis_joint);
    assert_int_equal(ra.appendage_count, rb.appendage_count);
    int chains = 0;
    for (int i = 0; i < ra.appendage_count; i++) {
        const tb_appendage *x = &ra.appendages[i], *y = &rb.appendages[i];
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->decision, y->decision);
        assert_int_equal(x->bone_count, y->bone_count);
        assert_int_equal(x->vertex_count, y->vertex_count);
        chains += x->decision == TB_DECIDE_CHAIN;
        for (int k = 0; k <= x->bone_count; k++)
            for (int c = 0; c < 3; c++)
                assert_float_equal(x->chain_joints[k][c], y->chain_joints[k][c], 1e-5);
    }
    assert_true(chains >= 1);
    /* the detection report says how each role was found, as the model has it */
    assert_int_equal(ra.role_count, rb.role_count);
    for (int i = 0; i < ra.role_count; i++) {
        assert_int_equal(ra.roles[i].role, rb.roles[i].role);
        assert_int_equal(ra.roles[i].source, a->role_source[a->role_joint[ra.roles[i].role]]);
        assert_int_equal(rb.roles[i].source, b->role_source[b->role_joint[rb.roles[i].role]]);
    }
    json_t *j = tb_appendage_report_json(&rb);
    json_t *r0 = json_array_get(json_object_get(j, "roles"), 0);
    assert_string_equal(json_string_value(json_object_get(r0, "source")),
                        tb_role_source_name(rb.roles[0].source));
    json_decref(j);
    tb_appendage_report_free(&ra);
    tb_appendage_report_free(&rb);
}

static void opaque_names_get_the_mixamo_roles_back_from_the_shape(void **state)
{
    (void)state;
    for (int v = 0; v < tb_synth_variant_count(); v++) {
        const char *variant = tb_synth_variant_name(v);
        for (int how = RENAME_OPAQUE; how <= RENAME_BLENDER; how++) {
            tb_doc *named = synth(variant), *opaque = synth(variant);
            rename_joints(opaque, how);
            tb_model *a = load_model(named), *b = load_model(opaque);
            int nn = tb_doc_gltf(named)->node_count;
            tb_role *ra = malloc((size_t)nn * sizeof *ra), *rb = malloc((size_t)nn * sizeof *rb);
            roles_by_node(a, ra, nn);
            roles_by_node(b, rb, nn);
            for (int i = 0; i < nn; i++)
                if (ra[i] != rb[i])
                    fail_msg("%s: node %d is %s by name, %s by shape", variant, i, tb_role_name(ra[i]),
                             tb_role_name(rb[i]));
            for (int j = 0; j < b->skel.joint_count; j++)
                if (b->roles[j])
                    assert_int_equal(b->role_source[j], TB_ROLE_SRC_SHAPE);
            {
                /* and the detection report says "shape" for every role */
                tb_appendage_report rep;
                tb_error e2 = {0};
                assert_int_equal(tb_appendage_detect(&rep, b, NULL, &e2), TB_OK);
                assert_true(rep.role_count >= 20);
                for (int i = 0; i < rep.role_count; i++)
                    assert_int_equal(rep.roles[i].source, TB_ROLE_SRC_SHAPE);
                tb_appendage_report_free(&rep);
            }
            assert_true(b->body.found);
            assert_false(b->body.quadruped);
            assert_float_equal(b->body.up[1], 1.0, 1e-6);          /* +Y up */
            assert_true(b->body.forward[2] > 0.99f);              /* facing +Z */
            assert_float_equal(a->height, b->height, 1e-6);
            if (!strcmp(variant, "tail_leg") || !strcmp(variant, "tail_hips") || !strcmp(variant, "tail_welded"))
                same_detection(a, b);
            free(ra);
            free(rb);
            tb_model_free(a);
            tb_model_free(b);
            tb_doc_free(named);
            tb_doc_free(opaque);
        }
    }
}

static void mirrored_names_yield_to_the_shape_and_say_so(void **state)
{
    (void)state;
    tb_doc *named = synth("tail_leg"), *mirrored = synth("tail_leg");
    rename_joints(mirrored, RENAME_MIRROR);
    tb_model *a = load_model(named), *b = load_model(mirrored);
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        int ja = a->role_joint[r], jb = b->role_joint[r];
        assert_true(ja >= 0);
        assert_int_equal(a->node_of_joint[ja], b->node_of_joint[jb]);
        int sided = tb_role_mirror((tb_role)r) != (tb_role)r;
        assert_int_equal(b->role_source[jb], sided ? TB_ROLE_SRC_SHAPE_OVER_NAME : TB_ROLE_SRC_NAME);
        assert_int_equal(b->name_roles[jb], tb_role_mirror((tb_role)r)); /* what the name said */
    }
    same_detection(a, b);
    tb_model_free(a);
    tb_model_free(b);
    tb_doc_free(named);
    tb_doc_free(mirrored);
}

static void misspelt_rig_suffixed_names_are_read_loosely(void **state)
{
    (void)state;
    tb_doc *named = synth("tail_leg"), *doc = synth("tail_leg");
    json_t *nodes = json_object_get(tb_doc_json(doc), "nodes");
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        const char *name = json_string_value(json_object_get(n, "name"));
        if (!name || tb_role_from_name(name) == TB_ROLE_NONE)
            continue;
        char buf[128];
        snprintf(buf, sizeof buf, "%s_jnt", !strcmp(name, "RightUpLeg") ? "RighUpLeg" : name);
        json_object_set_new(n, "name", json_string(buf));
    }
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    tb_model *a = load_model(named), *b = load_model(doc);
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        assert_int_equal(a->node_of_joint[a->role_joint[r]], b->node_of_joint[b->role_joint[r]]);
        assert_int_equal(b->role_source[b->role_joint[r]], TB_ROLE_SRC_FUZZY);
    }
    tb_model_free(a);
    tb_model_free(b);
    tb_doc_free(named);
    tb_doc_free(doc);
}


static void a_rigify_metarig_is_read_with_its_spine_numbered_from_the_hips(void **state)
{
    (void)state;
    static const char *const rigify[TB_ROLE_COUNT] = {
        "", "spine", "spine.001", "spine.002", "spine.003", "spine.004", "spine.006",
        "shoulder.L", "upper_arm.L", "forearm.L", "hand.L", "shoulder.R", "upper_arm.R", "forearm.R", "hand.R",
        "thigh.L", "shin.L", "foot.L", "toe.L", "thigh.R", "shin.R", "foot.R", "toe.R"};
    tb_doc *named = synth("tail_hips"), *doc = synth("tail_hips");
    json_t *nodes = json_object_get(tb_doc_json(doc), "nodes");
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        tb_role r = tb_role_from_name(json_string_value(json_object_get(n, "name")));
        if (r)
            json_object_set_new(n, "name", json_string(rigify[r]));
    }
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    tb_model *a = load_model(named), *b = load_model(doc);
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        assert_true(b->role_joint[r] >= 0);
        assert_int_equal(a->node_of_joint[a->role_joint[r]], b->node_of_joint[b->role_joint[r]]);
    }
    same_detection(a, b);
    tb_model_free(a);
    tb_model_free(b);
    tb_doc_free(named);
    tb_doc_free(doc);
}

static void a_vrm_map_gives_roles_and_overrides_come_last(void **state)
{
    (void)state;
    tb_doc *named = synth("plain"), *doc = synth("plain");
    tb_model *a = load_model(named);
    rename_joints(doc, RENAME_OPAQUE);
    /* VRM 0.x humanBones for the hips and the left thigh only */
    json_t *bones = json_array();
    json_array_append_new(bones, json_pack("{s:s,s:i}", "bone", "hips", "node", a->node_of_joint[a->role_joint[TB_ROLE_HIPS]]));
    json_array_append_new(bones, json_pack("{s:s,s:i}", "bone", "leftUpperLeg", "node",
                                           a->node_of_joint[a->role_joint[TB_ROLE_LEFT_UPLEG]]));
    json_object_set_new(tb_doc_json(doc), "extensions",
                        json_pack("{s:{s:{s:o}}}", "VRM", "humanoid", "humanBones", bones));
    tb_error err = {0};
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    tb_model *b = load_model(doc);
    assert_int_equal(b->role_source[b->role_joint[TB_ROLE_HIPS]], TB_ROLE_SRC_VRM);
    assert_int_equal(b->role_source[b->role_joint[TB_ROLE_LEFT_UPLEG]], TB_ROLE_SRC_VRM);
    assert_int_equal(b->node_of_joint[b->role_joint[TB_ROLE_HIPS]], a->node_of_joint[a->role_joint[TB_ROLE_HIPS]]);
    tb_model_free(b);
    /* overrides: by role name, any case; the role moves to the named joint */
    char spine_name[64], over[96];
    snprintf(spine_name, sizeof spine_name, "joint_%d", a->node_of_joint[a->role_joint[TB_ROLE_SPINE1]]);
    snprintf(over, sizeof over, "spine2=%s", spine_name);
    const char *roles[] = {over};
    tb_model_desc md = {0, roles, 1, 0, 0};
    assert_int_equal(tb_model_load_desc(&b, doc, &md, &err), TB_OK);
    int j = b->role_joint[TB_ROLE_SPINE2];
    assert_string_equal(b->skel.names[j], spine_name);
    assert_int_equal(b->role_source[j], TB_ROLE_SRC_OVERRIDE);
    assert_int_equal(b->roles[j], TB_ROLE_SPINE2);
    tb_model_free(b);
    const char *bad_role[] = {"Tail=joint_1"}, *bad_joint[] = {"Hips=nope"}, *bad_form[] = {"Hips"};
    const char *const *bad[] = {bad_role, bad_joint, bad_form};
    for (int k = 0; k < 3; k++) {
        tb_model_desc bd = {0, bad[k], 1, 0, 0};
        b = (tb_model *)1;
        assert_int_equal(tb_model_load_desc(&b, doc, &bd, &err), TB_ERR_ARG);
        assert_null(b);
        assert_string_equal(err.where, "tb_model_desc.roles[0]");
    }
    tb_model_free(a);
    tb_doc_free(named);
    tb_doc_free(doc);
}

/* A joint table with joints dropped (their children re-parented to the
 * nearest kept ancestor), positions only: no skin. */
static void reduced_skeletons_keep_the_roles_they_still_have(void **state)
{
    (void)state;
    tb_doc *doc = synth("plain");
    tb_model *m = load_model(doc);
    int n = m->skel.joint_count;
    static const tb_role drops[][6] = {
        {TB_ROLE_LEFT_FOOT, TB_ROLE_LEFT_TOE, TB_ROLE_RIGHT_FOOT, TB_ROLE_RIGHT_TOE, 0, 0}, /* no feet */
        {TB_ROLE_NECK, 0, 0, 0, 0, 0},                                                      /* no neck */
        {TB_ROLE_LEFT_HAND, TB_ROLE_RIGHT_HAND, 0, 0, 0, 0},                                /* no hands */
        {TB_ROLE_SPINE1, TB_ROLE_NECK, TB_ROLE_LEFT_TOE, TB_ROLE_RIGHT_TOE, 0, 0},          /* short spine */
        {0, 0, 0, 0, 0, 0},
    };
    int *keep = malloc((size_t)n * sizeof *keep), *parents = malloc((size_t)n * sizeof *parents);
    int *map = malloc((size_t)n * sizeof *map);
    float(*pos)[3] = malloc((size_t)n * sizeof *pos);
    tb_role *roles = malloc((size_t)n * sizeof *roles);
    for (size_t d = 0; d < sizeof drops / sizeof drops[0]; d++) {
        int k = 0;
        for (int j = 0; j < n; j++) {
            keep[j] = m->skel.has_ibm[j];
            for (int q = 0; q < 6; q++)
                if (drops[d][q] && m->roles[j] == drops[d][q])
                    keep[j] = 0;
            map[j] = -1;
            if (!keep[j])
                continue;
            int p = m->skel.parents[j];
            while (p >= 0 && !keep[p])
                p = m->skel.parents[p];
            map[j] = k;
            parents[k] = p >= 0 ? map[p] : -1;
            memcpy(pos[k], &m->skel.bind_world[j][12], sizeof pos[k]);
            k++;
        }
        tb_shape_skeleton sk = {k, parents, (const float(*)[3])pos, NULL, NULL, NULL};
        tb_body_shape body;
        assert_true(tb_roles_from_shape(roles, &body, &sk) > 0);
        assert_true(body.found);
        for (int j = 0; j < n; j++) {
            if (!keep[j])
                continue;
            tb_role want = m->roles[j];
            if (drops[d][0] == TB_ROLE_SPINE1 && want == TB_ROLE_SPINE2)
                want = TB_ROLE_SPINE1; /* two spine joints: Spine, Spine1 */
            if (roles[map[j]] != want)
                fail_msg("case %zu: %s came back as %s", d, tb_role_name(m->roles[j]), tb_role_name(roles[map[j]]));
        }
    }
    free(keep);
    free(parents);
    free(map);
    free(pos);
    free(roles);
    tb_model_free(m);
    tb_doc_free(doc);
}

static void no_body_no_roles(void **state)
{
    (void)state;
    /* a straight chain of five joints: no legs, no pelvis */
    int parents[5] = {-1, 0, 1, 2, 3};
    float pos[5][3] = {{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {0, 4, 0}};
    tb_role roles[5];
    tb_body_shape body;
    tb_shape_skeleton sk = {5, parents, (const float(*)[3])pos, NULL, NULL, NULL};
    assert_int_equal(tb_roles_from_shape(roles, &body, &sk), 0);
    assert_false(body.found);
    assert_int_equal(body.pelvis, -1);
    for (int j = 0; j < 5; j++)
        assert_int_equal(roles[j], TB_ROLE_NONE);
}

/* ---- real files ------------------------------------------------------------ */

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

/* tb_roles_fill_spine: the path from the hips to the neck (or the head, or
 * where the shoulders fork) becomes the spine, only when no joint has a
 * spine role and only over joints with no role of their own */
static void spine_roles_come_from_structure_when_names_give_none(void **state)
{
    (void)state;
    /* 0 root, 1 Hips, 2 a, 3 b, 4 c, 5 Neck, 6 Head, 7 LShoulder, 8 RShoulder, 9 thigh */
    const int parents[] = {-1, 0, 1, 2, 3, 4, 5, 4, 4, 1};
    tb_role roles[10], base[10] = {0, TB_ROLE_HIPS, 0, 0, 0, TB_ROLE_NECK, TB_ROLE_HEAD, TB_ROLE_LEFT_SHOULDER,
                                   TB_ROLE_RIGHT_SHOULDER, TB_ROLE_LEFT_UPLEG};
    tb_role_source src[10];
    memcpy(roles, base, sizeof roles);
    memset(src, 0, sizeof src);
    assert_int_equal(tb_roles_fill_spine(roles, src, 10, parents), 3);
    assert_int_equal(roles[2], TB_ROLE_SPINE);
    assert_int_equal(roles[3], TB_ROLE_SPINE1);
    assert_int_equal(roles[4], TB_ROLE_SPINE2);
    assert_int_equal(src[3], TB_ROLE_SRC_SHAPE);
    assert_int_equal(roles[9], TB_ROLE_LEFT_UPLEG);
    /* no neck, no head: the joint the shoulders hang from is the top */
    memcpy(roles, base, sizeof roles);
    roles[5] = roles[6] = TB_ROLE_NONE;
    assert_int_equal(tb_roles_fill_spine(roles, src, 10, parents), 3);
    assert_int_equal(roles[4], TB_ROLE_SPINE2);
    /* a named spine joint anywhere: nothing is filled */
    memcpy(roles, base, sizeof roles);
    roles[3] = TB_ROLE_SPINE1;
    assert_int_equal(tb_roles_fill_spine(roles, src, 10, parents), 0);
    assert_int_equal(roles[2], TB_ROLE_NONE);
    /* a joint with a role of its own on the path: not a spine */
    memcpy(roles, base, sizeof roles);
    roles[3] = TB_ROLE_LEFT_ARM;
    assert_int_equal(tb_roles_fill_spine(roles, src, 10, parents), 0);
    /* no hips: nothing */
    memcpy(roles, base, sizeof roles);
    roles[1] = TB_ROLE_NONE;
    assert_int_equal(tb_roles_fill_spine(roles, src, 10, parents), 0);
}

static void corpus_humanoids_keep_exactly_their_name_roles(void **state)
{
    (void)state;
    static const char *const files[] = {"clips/Xbot_agree_run_walk.glb", "clips/threejs_Soldier_rexport.glb",
                                        "clips/threejs_RobotExpressive.glb", "characters/banter_Wolf.glb",
                                        "characters/banter_Bone_Demon.glb"};
    int ran = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        tb_doc *doc = load_corpus(files[f]);
        if (!doc)
            continue;
        ran++;
        tb_model *m = load_model(doc);
        int count = 0;
        for (int j = 0; j < m->skel.joint_count; j++) {
            /* the oracle: the exact-name reading, joint by joint */
            tb_role want = tb_role_from_name(m->skel.names[j]);
            if (!want && m->role_source[j] == TB_ROLE_SRC_SHAPE) {
                /* the spine from structure (tb_roles_fill_spine), only where
                 * the names give none: the robot's Abdomen and Torso */
                assert_non_null(strstr(files[f], "Robot"));
                assert_true((!strcmp(m->skel.names[j], "Abdomen") && m->roles[j] == TB_ROLE_SPINE) ||
                            (!strcmp(m->skel.names[j], "Torso") && m->roles[j] == TB_ROLE_SPINE1));
                continue;
            }
            if (m->roles[j] != want)
                fail_msg("%s: %s is %s, its name says %s", files[f], m->skel.names[j], tb_role_name(m->roles[j]),
                         tb_role_name(want));
            if (want) {
                assert_int_equal(m->role_source[j], TB_ROLE_SRC_NAME);
                count++;
            }
        }
        assert_int_equal(count, strstr(files[f], "Robot") ? 15 : 22);
        tb_model_free(m);
        tb_doc_free(doc);
    }
    if (!ran)
        tbt_skip();
}

static void foxes_find_their_pelvis_without_help(void **state)
{
    (void)state;
    static const struct {
        const char *file, *pelvis;
    } foxes[] = {{"reference/khronos_Fox.glb", "b_Hip_01"}, {"reference/quaternius_Fox.glb", "Back"}};
    int ran = 0;
    for (size_t f = 0; f < 2; f++) {
        tb_doc *doc = load_corpus(foxes[f].file);
        if (!doc)
            continue;
        ran++;
        tb_model *m = load_model(doc);
        assert_true(m->body.found);
        assert_true(m->body.quadruped);
        assert_string_equal(m->skel.names[m->body.pelvis], foxes[f].pelvis);
        assert_string_equal(m->skel.names[m->role_joint[TB_ROLE_HIPS]], foxes[f].pelvis);
        tb_appendage_report rep;
        tb_error err = {0};
        assert_int_equal(tb_appendage_detect(&rep, m, NULL, &err), TB_OK);
        assert_string_equal(rep.pelvis_name, foxes[f].pelvis);
        tb_appendage_report_free(&rep);
        /* the hind legs leave the pelvis; the front legs are arms */
        int lu = m->role_joint[TB_ROLE_LEFT_UPLEG], la = m->role_joint[TB_ROLE_LEFT_ARM];
        if (lu >= 0) {
            int p = m->skel.parents[lu];
            while (p >= 0 && p != m->body.pelvis && !m->roles[p])
                p = m->skel.parents[p];
            assert_int_equal(p, m->body.pelvis);
        }
        assert_true(la >= 0);
        /* left is the character's left: +X of its own frame */
        float left[3] = {m->body.up[1] * m->body.forward[2] - m->body.up[2] * m->body.forward[1],
                         m->body.up[2] * m->body.forward[0] - m->body.up[0] * m->body.forward[2],
                         m->body.up[0] * m->body.forward[1] - m->body.up[1] * m->body.forward[0]};
        const float *pl = &m->skel.bind_world[la][12], *pp = &m->skel.bind_world[m->body.pelvis][12];
        float d = 0;
        for (int k = 0; k < 3; k++)
            d += (pl[k] - pp[k]) * left[k];
        assert_true(d > 0);
        tb_model_free(m);
        tb_doc_free(doc);
    }
    if (!ran)
        tbt_skip();
}

static void cli_reports_where_roles_came_from_and_takes_role_overrides(void **state)
{
    (void)state;
    tb_doc *doc = synth("tail_leg");
    rename_joints(doc, RENAME_BLENDER);
    tb_error err = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s", tbt_tmp_path("blender_names.glb"));
    assert_int_equal(tb_doc_save(doc, path, &err), TB_OK);
    tb_doc_free(doc);
    char *text = NULL;
    assert_int_equal(tbt_run_cli(&text, "info '%s' --json", path), 0);
    assert_non_null(strstr(text, "\"role_sources\""));
    assert_non_null(strstr(text, "\"Hips\": \"shape\""));
    free(text);
    assert_int_equal(tbt_run_cli(&text, "info '%s'", path), 0);
    assert_non_null(strstr(text, "roles from: shape 22"));
    free(text);
    /* detect needs no --pelvis; --role moves a role, bad ones are usage errors */
    assert_int_equal(tbt_run_cli(&text, "detect '%s'", path), 0);
    assert_non_null(strstr(text, "chain"));
    free(text);
    assert_int_equal(tbt_run_cli(&text, "info '%s' --json --role Spine2=Bone.002", path), 0);
    assert_non_null(strstr(text, "\"Spine2\": \"override\""));
    free(text);
    assert_int_equal(tbt_run_cli(&text, "detect '%s' --role Hips=Bone.999", path), 1);
    assert_non_null(strstr(text, "Bone.999"));
    free(text);
    assert_int_equal(tbt_run_cli(&text, "detect '%s' --role Hips", path), 2);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mixamo_names_with_any_prefix),
        cmocka_unit_test(every_role_name_reads_back_in_any_case_and_with_separators),
        cmocka_unit_test(fingers_end_helpers_and_tails_have_no_role),
        cmocka_unit_test(unreal_names),
        cmocka_unit_test(biped_character_creator_and_vrm_names),
        cmocka_unit_test(rigify_deform_spine_is_numbered_from_the_hips),
        cmocka_unit_test(classes_group_the_roles),
        cmocka_unit_test(tail_names_parse_with_chain_letters),
        cmocka_unit_test(loose_names_read_rig_suffixes_sides_and_misspellings),
        cmocka_unit_test(loose_names_leave_opaque_and_near_miss_names_alone),
        cmocka_unit_test(opaque_names_get_the_mixamo_roles_back_from_the_shape),
        cmocka_unit_test(mirrored_names_yield_to_the_shape_and_say_so),
        cmocka_unit_test(misspelt_rig_suffixed_names_are_read_loosely),
        cmocka_unit_test(a_rigify_metarig_is_read_with_its_spine_numbered_from_the_hips),
        cmocka_unit_test(a_vrm_map_gives_roles_and_overrides_come_last),
        cmocka_unit_test(reduced_skeletons_keep_the_roles_they_still_have),
        cmocka_unit_test(no_body_no_roles),
        cmocka_unit_test(spine_roles_come_from_structure_when_names_give_none),
        cmocka_unit_test(corpus_humanoids_keep_exactly_their_name_roles),
        cmocka_unit_test(foxes_find_their_pelvis_without_help),
        cmocka_unit_test(cli_reports_where_roles_came_from_and_takes_role_overrides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
