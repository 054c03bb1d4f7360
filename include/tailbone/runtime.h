/* tailbone/runtime.h — pose, clip sampling and skinning (SPEC C).
 *
 * No I/O, no JSON, no allocation: every array is owned by the caller and
 * sized from counts it already knows. A skeleton is flat arrays in
 * parent-first order (parents[i] < i, roots have -1), like ozz-animation.
 * The offline layer (tailbone/model.h) builds these from a glTF file; a
 * game engine can fill them from its own data.
 *
 * Conventions: glTF 2.0 — metres, +Y up, quaternions (x, y, z, w),
 * column-major 4x4 matrices (m[col*4+row]), radians, seconds.
 */
#ifndef TAILBONE_RUNTIME_H
#define TAILBONE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_transform {
    float t[3]; /* translation */
    float r[4]; /* rotation quaternion (x, y, z, w), unit */
    float s[3]; /* scale */
} tb_transform;

/* Borrowed view of a skeleton; every pointer lives as long as its owner. */
typedef struct tb_skeleton {
    int joint_count;
    const int *parents;            /* joint_count; -1 for a root; parents[i] < i */
    const char *const *names;      /* joint_count; entries may be NULL; may be NULL */
    const tb_transform *rest_local;/* joint_count; the pose stored in the file */
    /* Bind-space world matrix per joint. For a skin joint it is the inverse
     * of its inverse bind matrix (SPEC A: W^0 = IBM^-1); for any other joint
     * (an armature node above the skeleton) the world matrix of rest_local. */
    const float (*bind_world)[16];
    const uint8_t *has_ibm;        /* joint_count; 1 where bind_world came from an IBM; may be NULL */
} tb_skeleton;

typedef enum tb_interp {
    TB_INTERP_LINEAR = 0,
    TB_INTERP_STEP,
    TB_INTERP_CUBICSPLINE
} tb_interp;

typedef enum tb_path {
    TB_PATH_TRANSLATION = 0,
    TB_PATH_ROTATION,
    TB_PATH_SCALE
} tb_path;

/* One animated property of one joint. values holds key_count tuples of 3
 * (translation, scale) or 4 (rotation) floats; for CUBICSPLINE it holds
 * key_count triples (in-tangent, value, out-tangent) as glTF lays them. */
typedef struct tb_channel {
    int joint;          /* index into the skeleton */
    tb_path path;
    tb_interp interp;
    int key_count;
    const float *times;  /* key_count, seconds, non-decreasing */
    const float *values;
} tb_channel;

typedef struct tb_clip {
    const char *name;
    float duration_s;    /* largest key time */
    int channel_count;
    const tb_channel *channels;
} tb_clip;

/* Sample a clip at t_s (clamped to [0, duration]) into locals[joint_count]:
 * every joint starts from skel->rest_local, then each channel overrides its
 * property. LINEAR rotations take the shorter arc (normalised lerp/slerp),
 * STEP holds, CUBICSPLINE uses glTF's Hermite form with dt-scaled tangents. */
void tb_clip_sample(const tb_clip *clip, const tb_skeleton *skel, float t_s,
                    tb_transform *locals);

/* Column-major matrix of a TRS transform. */
void tb_transform_to_matrix(const tb_transform *x, float m[16]);

/* world[i] = world[parent] * matrix(locals[i]); roots use root_world (may be
 * NULL for identity). Parent-first order makes this one forward pass. */
void tb_local_to_world(const tb_skeleton *skel, const tb_transform *locals,
                       const float root_world[16], float (*world)[16]);

/* dst[j] = world[skin_joint_nodes[j]] * inverse_bind[j] for j < count. */
void tb_skin_matrices(float (*dst)[16], const float (*world)[16],
                      const int *skin_joint_nodes, const float (*inverse_bind)[16],
                      size_t count);

/* Linear blend skinning of `count` points. src/dst are strided xyz floats
 * (stride in floats, >= 3); joints/weights hold `influences` entries per
 * vertex (4 per JOINTS_n/WEIGHTS_n set). w==1 for positions, 0 for
 * directions (normals are renormalised). Returns count.
 * Zero weights are skipped without reading their joint, so only joints with a
 * positive weight must be < the number of skin_mats (the loader checks JOINTS
 * against the skin). Positions divide by the weight sum, so weights that do
 * not quite sum to 1 stay an affine blend; a vertex with no positive weight
 * is copied unchanged; a direction that blends to zero length stays zero.
 * Directions use the matrices as is (exact for rotation + uniform scale).
 * dst may be src with the same stride (in place). */
size_t tb_skin_points(float *dst, size_t dst_stride, const float *src,
                      size_t src_stride, size_t count, const uint16_t *joints,
                      const float *weights, int influences,
                      const float (*skin_mats)[16], int is_direction);
/* One coordinate (axis 0, 1 or 2) of one skinned point: the same value,
 * bit for bit, as tb_skin_points(dst, 3, p, 3, 1, ...)[axis] with
 * is_direction 0 (the same operations in the same order, the other rows
 * left out). For searches over many points that read one coordinate (the
 * lowest point of a set of supports). */
float tb_skin_point_axis(const float p[3], const uint16_t *joints, const float *weights,
                         int influences, const float (*skin_mats)[16], int axis);

/* Small math shared by the runtime (and handy to callers). Arguments may
 * alias: dst may be the same array as an input. */

/* dst = a * b (column-major). */
void tb_mat4_mul(float dst[16], const float a[16], const float b[16]);
/* Scales q to unit length; a zero or non-finite q becomes identity. */
void tb_quat_normalize(float q[4]);
/* Spherical interpolation from a (u = 0) to b (u = 1) along the shorter arc
 * (b is negated when a.b < 0); the result is unit length. */
void tb_quat_slerp(float dst[4], const float a[4], const float b[4], float u);

/* Nearest-rank percentile (SPEC C): the 0-based index ceil(q n) - 1 of the
 * value of rank q among n values, clamped to [0, n - 1]; n > 0. */
size_t tb_rank_nearest(size_t n, double q);
/* The k-th smallest of a[0..n) (0-based, k < n), reordering a so that
 * a[0..k) <= a[k] <= a[k+1..n) (introselect: O(n), no allocation). */
float tb_select_kth(float *a, size_t n, size_t k);

#ifdef __cplusplus
}
#endif
#endif
