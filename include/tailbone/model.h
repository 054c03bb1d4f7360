/* tailbone/model.h — a skin and its geometry decoded into plain arrays.
 *
 *   tb_model *m;
 *   if (tb_model_load(&m, doc, -1, &err) == TB_OK) {   // -1: the main skin
 *       // m->skel is a tb_skeleton for the runtime; m->positions etc. are
 *       // every primitive bound to that skin, concatenated in bind space.
 *       tb_model_free(m);
 *   }
 *
 * The model borrows names from the doc: keep the doc alive (and unedited)
 * while the model is used. Triangle strips and fans are converted to plain
 * triangles; primitives that are not triangles contribute vertices only.
 */
#ifndef TAILBONE_MODEL_H
#define TAILBONE_MODEL_H

#include "tailbone/gltf.h"
#include "tailbone/humanoid.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest skeleton a model accepts (root to deepest joint, in levels): real
 * rigs stay under 100; a deeper one is refused (TB_ERR_UNSUPPORTED). */
#define TB_MAX_SKELETON_DEPTH 1024
/* Most vertices a model decodes (every primitive of every node drawn with
 * the skin, instances counted; triangles up to twice that): larger is
 * refused (TB_ERR_UNSUPPORTED) before anything is allocated. */
#define TB_MAX_MODEL_VERTICES (1 << 24)

typedef struct tb_model_prim {
    int node, mesh, primitive;  /* where it came from */
    size_t vertex_offset, vertex_count;
    size_t triangle_offset, triangle_count;
} tb_model_prim;

typedef struct tb_model {
    int skin;                   /* skin index in the doc */
    /* Skins the model merges: every skin with the same joints and inverse
     * bind matrices as `skin` (exporters such as three.js write one skin
     * per mesh over a shared skeleton), then every skin whose joints are a
     * subset of `skin`'s with the same inverse bind matrices (FBX converters
     * write one skin per mesh with only the bones that mesh uses: a tail
     * modelled as its own mesh comes that way). skins[0] == skin. */
    int skin_count;
    int *skins;
    int **joint_maps;           /* per skins[k]: its joint index → this model's skin joint
                                   index, or NULL when its list is `skin`'s own */
    int *joint_map_counts;      /* per skins[k]: its joint count */
    tb_skeleton skel;           /* joints + their ancestors, parent-first */
    int *node_of_joint;         /* skel joint → doc node */
    int *joint_of_node;         /* doc node → skel joint, or -1 (node_count entries) */
    int skin_joint_count;
    int *skin_joints;           /* skin joint k → skel joint */
    float (*inverse_bind)[16];  /* per skin joint */
    tb_role *roles;             /* per skel joint */
    int role_joint[TB_ROLE_COUNT]; /* skel joint of each role, or -1 */
    tb_role_source *role_source; /* per skel joint: where its role came from (name, VRM map,
                                    shape, override; docs/detection.md "Roles") */
    tb_role *name_roles;        /* per skel joint: what its name (or the VRM map) said, also
                                   where the shape overruled it */
    tb_body_shape body;         /* what the skeleton's shape says (tb_roles_from_shape) */

    size_t vertex_count;
    float *positions;           /* 3 per vertex, bind space */
    float *normals;             /* 3 per vertex (zeros where absent); NULL with
                                   tb_model_desc.no_normals */
    int influences;             /* 4 × the largest set count */
    uint16_t *joints;           /* influences per vertex, skin joint indices */
    float *weights;             /* influences per vertex */
    size_t triangle_count;
    uint32_t *triangles;        /* 3 per triangle, model vertex indices */
    int prim_count;
    tb_model_prim *prims;

    float bbox_min[3], bbox_max[3];
    float height;               /* H: extent of the bind-space vertices along up_axis */
    int up_axis;                /* the bind axis the character stands along (hips → head):
                                   1 (Y) for almost every file; 2 for a Z-up mesh under a
                                   rotated root node; 1 without humanoid roles */
    float armature_scale;       /* uniform scale of the nodes above the skeleton */

    /* owned storage behind skel */
    int *parents_;
    const char **names_;
    tb_transform *rest_;
    float (*bind_world_)[16];
    uint8_t *has_ibm_;
} tb_model;

/* Options of tb_model_load_desc; all-zero is the default. */
typedef struct tb_model_desc {
    int skin;                  /* skin index + 1; 0: the skin with the most skinned vertices */
    const char *const *roles;  /* role_count "Role=Joint" overrides ("Hips=Bone.003"); NULL: none */
    int role_count;
    int names_only;            /* 1: roles from names and a VRM map only, no shape (tests) */
    int no_normals;            /* 1: normals left NULL (only a preview reads them: 12 bytes a
                                  vertex that detection, weights and measure never touch) */
} tb_model_desc;

/* skin = -1 picks the skin (with its equivalent skins) that has the most
 * skinned vertices. Fails with TB_ERR_NO_SKIN when the file has no skinned
 * mesh. */
tb_result tb_model_load(tb_model **out, const tb_doc *doc, int skin, tb_error *err);
/* The same with options. Roles: joint names (any known layout, then loose
 * readings), a VRM humanoid map over them, the skeleton's shape to check
 * them or, where names give no hips, to find them; desc->roles last. Fails
 * with TB_ERR_ARG naming "tb_model_desc.roles[i]" for an unknown role or
 * joint. */
tb_result tb_model_load_desc(tb_model **out, const tb_doc *doc, const tb_model_desc *desc, tb_error *err);
/* The same, accepting a file with no skinned mesh (a clip library, a Mixamo
 * "without skin" download): the skin with most joints, or with no skin at
 * all every node a clip moves (and what hangs below them), bound in the
 * stored node pose (m->skin -1, m->skin_count 0). The model then has no
 * vertices; its box and H are the joints'. A file with a skinned mesh loads
 * as with tb_model_load_desc. */
tb_result tb_model_load_skeleton(tb_model **out, const tb_doc *doc, const tb_model_desc *desc, tb_error *err);
void tb_model_free(tb_model *m);
/* 1 when doc skin `skin` is one of the skins the model merges. */
int tb_model_uses_skin(const tb_model *m, int skin);
/* Its index k in m->skins (and joint_maps), or -1. */
int tb_model_skin_slot(const tb_model *m, int skin);
/* The inverse bind matrices of doc skin `skin`, one per joint (identities
 * when the skin has none). */
tb_result tb_skin_inverse_binds(const tb_doc *doc, int skin, float (*out)[16], tb_error *err);
/* Skins equivalent to `skin` (same joints, same inverse bind matrices),
 * written to out (capacity doc skin count), `skin` first; returns the count. */
int tb_skin_equivalents(const tb_doc *doc, int skin, int *out);
/* All skins' classes at once (near-linear in the skin count): class_of[s]
 * (capacity doc skin count) is the lowest index of a skin equivalent to s. */
tb_result tb_skin_classes(const tb_doc *doc, int *class_of, tb_error *err);

/* The character's up and forward directions in bind space, unit vectors:
 * up from the hips to the highest spine/neck/head joint, forward = left × up
 * with left from the right thigh (or shoulder, or arm) to the left one. A
 * model authored facing −Z (the three.js Soldier) gets its own. Returns 0 and
 * glTF's convention (+Y up, +Z forward) when those roles are missing, and for
 * a quadruped (m->body.quadruped: hips → head runs along its body; the
 * shape's own up and forward are in m->body). */
int tb_model_axes(const tb_model *m, float up[3], float forward[3]);

/* Mesh bind space → world at bind, M. glTF lets inverse bind matrices either
 * include the nodes above the skeleton (Blender, three.js exports: M = I,
 * raw POSITIONs are world) or not (FBX-style centimetre rigs under a 0.01
 * armature: M = the world matrix of those nodes). Decided on the root skin
 * joint: the hypothesis whose implied local transform matches the stored
 * node's scale, rotation and translation best. Used by retargeting,
 * grounding and the bake (tb_retarget_bind_to_world is the same). */
void tb_model_bind_to_world(const tb_model *m, float M[16]);

/* The one world-scale rule: world units per bind unit, the uniform scale the
 * stored pose applies to the bind mesh: the median over skin joints of
 * cbrt|det(W_j IBM_j)| with W the rest pose's world matrices. 1 when no
 * joint gives one; NAN when out of memory. The bake's unit guess (H in
 * world units) and measure's lengths (world_scale) both use it. */
float tb_model_world_scale(const tb_model *m);

#ifdef __cplusplus
}
#endif
#endif
