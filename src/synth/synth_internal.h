/* Private pieces of the synthetic character generator (tailbone/synth.h):
 * the skeleton table, a lofted-tube mesh builder, weights and clips. All
 * geometry is built in metres; the assembler scales to the file's units. */
#ifndef TB_SYNTH_INTERNAL_H
#define TB_SYNTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/base.h"
#include "synth/synth_json.h"

#include "tailbone/gltf.h"

/* The 22 body joints, parent-first; joint j has role j + 1 (tb_role). */
enum {
    TBS_HIPS, TBS_SPINE, TBS_SPINE1, TBS_SPINE2, TBS_NECK, TBS_HEAD,
    TBS_L_SHOULDER, TBS_L_ARM, TBS_L_FOREARM, TBS_L_HAND,
    TBS_R_SHOULDER, TBS_R_ARM, TBS_R_FOREARM, TBS_R_HAND,
    TBS_L_UPLEG, TBS_L_LEG, TBS_L_FOOT, TBS_L_TOE,
    TBS_R_UPLEG, TBS_R_LEG, TBS_R_FOOT, TBS_R_TOE,
    TBS_JOINT_COUNT
};

extern const int tbs_parent[TBS_JOINT_COUNT];
/* Bind-pose world position of each joint, metres (T-pose, identity rotations). */
extern const float tbs_joint_pos[TBS_JOINT_COUNT][3];
/* Bone segment of each joint for distances: from the joint to its main child,
 * or a short extension for terminal joints (SPEC A1). */
void tbs_bone_segment(int j, float a[3], float b[3]);
/* Distance from p to segment ab. */
float tbs_segment_distance(const float p[3], const float a[3], const float b[3]);

/* Small deterministic PRNG (splitmix64): no rand(), no global state. */
typedef struct tbs_rng {
    uint64_t s;
} tbs_rng;
void tbs_rng_seed(tbs_rng *r, uint32_t seed);
float tbs_rng_float(tbs_rng *r); /* [0, 1) */

/* One ring of a loft: centre, two unit axes spanning the cross-section
 * (a x b points along increasing ring index) and the ellipse semi-axes. */
typedef struct tbs_ring {
    float c[3], a[3], b[3];
    float ra, rb;
    float bow; /* moves the ends of the a axis along +b by bow cos^2: a sheet wrapping round a body */
} tbs_ring;

typedef enum tbs_cap {
    TBS_CAP_NONE = 0, /* only with a looped loft */
    TBS_CAP_POLE,     /* rounded: a fan to a pole point, smooth normals */
    TBS_CAP_FLAT      /* a hard-edged disc: its own vertices, a normal break */
} tbs_cap;

/* A primitive under construction. Emitted vertices are what the file holds
 * (split at UV seams and hard edges); each refers to a logical vertex that
 * smooth normals are accumulated on, so seams do not show in the shading. */
typedef struct tbs_mesh {
    size_t n, cap;         /* emitted vertices */
    float *pos, *uv;       /* 3 and 2 per vertex */
    uint32_t *logical;     /* per vertex */
    uint8_t *joints;       /* 4 per vertex */
    float *weights;        /* 4 per vertex */
    size_t nl, lcap;       /* logical vertices */
    size_t nt, tcap;       /* triangles */
    uint32_t *tri;         /* 3 per triangle, emitted indices */
    float *nrm;            /* 3 per vertex, filled by tbs_mesh_finish */
    int failed;            /* an allocation failed */
} tbs_mesh;

void tbs_mesh_free(tbs_mesh *m);
/* One emitted vertex (zero weights) and one triangle, for parts built
 * outside the loft (synth_onto.c copies body triangles). The caller keeps
 * m->nl above every logical id it uses. */
size_t tbs_mesh_vertex(tbs_mesh *m, const float p[3], float u, float v, uint32_t logical);
void tbs_mesh_tri(tbs_mesh *m, size_t a, size_t b, size_t c);
/* Lofts rings[0..count) with `segs` vertices round (+1 seam copy). Caps at
 * either end unless `loop` (then the last ring joins the first). Pole points
 * may be NULL for flat caps (the ring centre is used). Returns the first
 * emitted vertex index; the part ends at m->n. */
size_t tbs_tube(tbs_mesh *m, const tbs_ring *rings, int count, int segs, tbs_cap cap0,
                const float pole0[3], tbs_cap cap1, const float pole1[3], int loop);
/* A body of rigid pieces, as low-poly characters are skinned: each
 * triangle of [v0, v1) goes wholly to the joint with the most weight over
 * its corners, and a vertex shared by triangles of different joints is
 * split into one copy per joint (same position and logical vertex), each
 * weighted 1.0. */
void tbs_mesh_rigidify(tbs_mesh *m, size_t v0, size_t v1);
/* Smooth normals over logical vertices (area-weighted), written per vertex. */
void tbs_mesh_finish(tbs_mesh *m);
/* Fills ring frames along a polyline of centres by parallel transport,
 * starting from `a0` (made perpendicular to the first tangent). */
void tbs_frames(tbs_ring *rings, int count, const float a0[3]);

/* Weights of vertices [v0, v1): auto-rigger style, nearest bones among the
 * joints whose bit is set in mask (2–4 influences, normalised). */
void tbs_weight_nearest(tbs_mesh *m, size_t v0, size_t v1, uint32_t mask);
/* All weight on one joint. */
void tbs_weight_rigid(tbs_mesh *m, size_t v0, size_t v1, int joint);
/* The seed fox: the left shin, the rest split between both thighs, each side
 * of the tail leaning to its own thigh (tearing at the seam). */
void tbs_weight_fox(tbs_mesh *m, size_t v0, size_t v1);

/* Appends the six clips to root["animations"]. joint_node[j] is the node of
 * joint j; unit converts metres to the file's units (1 or 100). */
int tbs_add_clips(tb_doc *doc, const int *joint_node, float unit, uint32_t seed);

#define TBS_BIT(j) (1u << (j))

/* A body of rigid parts (meshes parented to bone nodes, not skinned) made
 * skinned: each part 100% on the joint it hangs from (skin 0), moved into
 * the bind space so it stands where it stood, on a new root node (synth_rigid.c).
 * *converted: the number of parts; 0 leaves the doc as it was. */
tb_result tbs_skin_rigid_parts(tb_doc *doc, int *converted, tb_error *err);

#endif
