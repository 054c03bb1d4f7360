/* Humanoid roles from joint names, across the layouts riggers produce. */
#include "support.h"
#include "tailbone/humanoid.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mixamo_names_with_any_prefix),
        cmocka_unit_test(fingers_end_helpers_and_tails_have_no_role),
        cmocka_unit_test(unreal_names),
        cmocka_unit_test(biped_character_creator_and_vrm_names),
        cmocka_unit_test(rigify_deform_spine_is_numbered_from_the_hips),
        cmocka_unit_test(classes_group_the_roles),
        cmocka_unit_test(tail_names_parse_with_chain_letters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
