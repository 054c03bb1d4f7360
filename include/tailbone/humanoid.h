/* tailbone/humanoid.h — humanoid bone roles from joint names.
 *
 * Recognises Mixamo names with any "mixamorig*:" prefix (and the colon-less
 * "mixamorigHips" that some exporters write), bare names ("Hips",
 * "LeftUpLeg"), and other common layouts: Unreal ("pelvis", "spine_01",
 * "thigh_l"), Blender-style ("upperarm.L"), Rigify deform bones
 * ("DEF-spine" = hips, "DEF-thigh.L"), 3ds Max Biped ("Bip01 L Thigh"),
 * Character Creator ("CC_Base_L_Thigh"), VRM/Unity ("J_Bip_L_UpperLeg",
 * "leftUpperLeg"). Pure functions, no state.
 */
#ifndef TAILBONE_HUMANOID_H
#define TAILBONE_HUMANOID_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_role {
    TB_ROLE_NONE = 0,
    TB_ROLE_HIPS,
    TB_ROLE_SPINE, TB_ROLE_SPINE1, TB_ROLE_SPINE2,
    TB_ROLE_NECK, TB_ROLE_HEAD,
    TB_ROLE_LEFT_SHOULDER, TB_ROLE_LEFT_ARM, TB_ROLE_LEFT_FOREARM, TB_ROLE_LEFT_HAND,
    TB_ROLE_RIGHT_SHOULDER, TB_ROLE_RIGHT_ARM, TB_ROLE_RIGHT_FOREARM, TB_ROLE_RIGHT_HAND,
    TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG, TB_ROLE_LEFT_FOOT, TB_ROLE_LEFT_TOE,
    TB_ROLE_RIGHT_UPLEG, TB_ROLE_RIGHT_LEG, TB_ROLE_RIGHT_FOOT, TB_ROLE_RIGHT_TOE,
    TB_ROLE_COUNT
} tb_role;

/* Body classes the offline pass reasons with (SPEC A). */
typedef enum tb_role_class {
    TB_CLASS_OTHER = 0,
    TB_CLASS_PELVIS,
    TB_CLASS_SPINE,
    TB_CLASS_HEAD,   /* neck and head */
    TB_CLASS_THIGH,
    TB_CLASS_LOWER_LIMB, /* shin, foot, toe */
    TB_CLASS_ARM     /* shoulder to hand */
} tb_role_class;

/* Role of a joint name; TB_ROLE_NONE for fingers, end helpers, tails… */
tb_role tb_role_from_name(const char *name);
/* Canonical Mixamo name without prefix ("Hips", "LeftUpLeg"); "" for NONE. */
const char *tb_role_name(tb_role role);
tb_role_class tb_role_class_of(tb_role role);
const char *tb_role_class_name(tb_role_class c);

/* Tail bones made by tailbone: "Tail_3" → chain 0, index 3; "TailB_2" →
 * chain 1, index 2; "Tail_End" → index 0 (the weightless end). Any prefix
 * before ':' is ignored. Returns 1 when the name is a tail bone. */
int tb_tail_name_parse(const char *name, int *chain, int *index);

#ifdef __cplusplus
}
#endif
#endif
