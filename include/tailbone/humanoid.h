/* tailbone/humanoid.h — humanoid bone roles from joint names and from the
 * skeleton's shape.
 *
 * Recognises Mixamo names with any "mixamorig*:" prefix (and the colon-less
 * "mixamorigHips" that some exporters write), bare names ("Hips",
 * "LeftUpLeg"), and other common layouts: Unreal ("pelvis", "spine_01",
 * "thigh_l"), Blender-style ("upperarm.L"), Rigify deform bones
 * ("DEF-spine" = hips, "DEF-thigh.L"), 3ds Max Biped ("Bip01 L Thigh"),
 * Character Creator ("CC_Base_L_Thigh"), VRM/Unity ("J_Bip_L_UpperLeg",
 * "leftUpperLeg"). Pure functions, no state.
 *
 * When names fail, tb_role_from_name_fuzzy reads suffix/prefix schemes
 * ("Hips_jnt", "thigh.L", "L_Thigh", "DEF-"/"ORG-") and close misspellings
 * ("RighUpLeg"), and tb_roles_from_shape finds the body in the bind pose:
 * the pelvis where two symmetric legs go down and the spine goes up, the
 * arms where a symmetric pair leaves the upper spine, left/right from the
 * character's own axes (glTF: left is +X when facing +Z with +Y up).
 * tb_roles_resolve weighs names against the shape (docs/detection.md,
 * "Roles"). tb_model_load does all of it (tailbone/model.h).
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

/* Where a joint's role came from. */
typedef enum tb_role_source {
    TB_ROLE_SRC_NONE = 0,
    TB_ROLE_SRC_NAME,            /* its name, in a known layout (tb_role_from_name) */
    TB_ROLE_SRC_FUZZY,           /* its name read loosely (tb_role_from_name_fuzzy) */
    TB_ROLE_SRC_VRM,             /* the file's VRM humanoid map */
    TB_ROLE_SRC_SHAPE,           /* the skeleton's shape; no name said otherwise */
    TB_ROLE_SRC_SHAPE_OVER_NAME, /* the shape, overruling its name (e.g. left/right swapped) */
    TB_ROLE_SRC_OVERRIDE,        /* the caller (--role ROLE=JOINT) */
    TB_ROLE_SRC_TAIL_ROOT        /* Hips only: no name or shape found it; the parent of the
                                    skeleton's own tail chain (tailbone/tailchain.h) */
} tb_role_source;

/* "name", "fuzzy-name", "vrm", "shape", "shape-over-name", "override", "tail-root"; "" for NONE. */
const char *tb_role_source_name(tb_role_source s);

/* A role by its canonical name ("LeftUpLeg", any case) or any name
 * tb_role_from_name knows ("thigh_l"); TB_ROLE_NONE when unknown. */
tb_role tb_role_parse(const char *s);

/* The same role on the other side (LeftArm <-> RightArm); unsided roles map
 * to themselves. */
tb_role tb_role_mirror(tb_role r);

/* tb_role_from_name, then looser readings: rig suffixes ("_jnt", "_bone"),
 * prefixes ("DEF-", "ORG-", "b_"), side marks anywhere ("L_", ".L", "_r",
 * "Left"), trailing export indices ("b_Hip_01"), and misspellings within
 * edit distance 1 (5–7 letters) or 2 (8 or more) of one known name, digits
 * equal. *loose is set to 1 when only a loose reading matched (may be NULL).
 * Blender's default "Bone.001" and other opaque names stay TB_ROLE_NONE. */
tb_role tb_role_from_name_fuzzy(const char *name, int *loose);

/* A skeleton as the shape reasoning sees it. Arrays of joint_count. */
typedef struct tb_shape_skeleton {
    int joint_count;
    const int *parents;              /* parents[j] < j, or -1 for a root */
    const float (*positions)[3];     /* bind-space joint positions */
    const unsigned char *usable;     /* 1: a joint to reason with (a skin joint); NULL: all */
    const float *skin_mass;          /* sum of the vertex weights on each joint; NULL: unknown */
    const float (*skin_centroid)[3]; /* weighted centroid of those vertices; NULL: unknown */
} tb_shape_skeleton;

/* What tb_roles_from_shape found. */
typedef struct tb_body_shape {
    int found;                 /* a pelvis with two legs and a spine was found */
    int pelvis;                /* joint, or -1 */
    int quadruped;             /* the spine carries a second pair of legs */
    float up[3];               /* unit: pelvis towards the head end (one bind axis) */
    float forward[3];          /* unit, square to up; left = up x forward */
    float forward_confidence;  /* size of the evidence for forward's sign (toes, feet,
                                  a quadruped's head), / height; 0: glTF's convention */
} tb_body_shape;

/* Roles from the bind pose alone (names unused): fills roles[joint_count]
 * (TB_ROLE_NONE where nothing fits) and *body; returns the number of joints
 * given a role (0 when no body was found). Quadrupeds: hind legs are legs,
 * front legs arms. O(joints) per candidate up axis (six). */
int tb_roles_from_shape(tb_role *roles, tb_body_shape *body, const tb_shape_skeleton *sk);

/* Names against shape, per joint (arrays of n): name_roles/name_src are what
 * names (and a VRM map) said, shape_roles what tb_roles_from_shape said.
 * Names that give the hips stand, except that the shape swaps left and right
 * when it sees the names mirrored (with a sure forward); names that give no
 * hips yield to the shape where it found a body, and keep the joints it left.
 * Writes roles and src; returns the number of joints the shape overruled. */
int tb_roles_resolve(tb_role *roles, tb_role_source *src, int n, const tb_role *name_roles,
                     const tb_role_source *name_src, const tb_role *shape_roles, const tb_body_shape *body);

/* Spine roles from structure, when no joint has one: the joints strictly
 * between the Hips and the Neck (else the Head, else the joint both
 * shoulders or arms hang from) on the parent path become Spine, Spine1 and
 * (three or more) Spine2 (a robot's "Abdomen", "Torso"), with source
 * TB_ROLE_SRC_SHAPE. parents: n entries, -1 for a root. Returns the number
 * of joints given a role. */
int tb_roles_fill_spine(tb_role *roles, tb_role_source *src, int n, const int *parents);

/* tb_tail_name_parse, the one rule for Tail_* names: tailbone/common.h. */

#ifdef __cplusplus
}
#endif
#endif
