/* tailbone/measure.h — skin stretch during playback (SPEC C), offline layer.
 *
 *   tb_model *m;  tb_clip *clip;                 // model.h, clip.h
 *   tb_measure_desc desc = {0};                  // all-zero: SPEC C defaults
 *   tb_measure_result res;
 *   if (tb_measure_clip(&res, m, clip, &desc, &err) == TB_OK)
 *       printf("tail p99 %.2f, body p99 %.2f\n", res.tail.p99, res.body.p99);
 *
 * What is measured. At `instants` evenly spaced times of the clip (24 by
 * default) the clip is sampled (tb_clip_sample), posed (tb_local_to_world),
 * optionally changed by a pose hook (a secondary-motion solver), and the
 * whole skin is skinned (tb_skin_points). For every unique mesh edge — an
 * unordered pair of model vertex indices that share a triangle; vertices
 * split at UV/normal seams are NOT welded, so a seam edge counts once per
 * copy — the ratio skinned length / bind length is one sample. Edges shorter
 * than 1e-6 H in bind space are skipped. A ratio above 1.5 or below 0.67 is
 * "torn". Edges with both vertices in the tail form the tail group, edges
 * with neither vertex in it the body group (the reference); edges across the
 * collar belong to neither.
 *
 * Units. Bind lengths are in the file's bind space (raw POSITION units; H =
 * tb_model.height is measured there). Skinned positions are world positions
 * of the stored scene, whose nodes may scale the whole bind mesh (a
 * centimetre armature under a 0.01 node re-exported in other units); so
 * each skinned length is divided by `world_scale`, the uniform scale that the
 * stored (rest) pose applies to the bind mesh — the median over skin joints
 * of cbrt|det(W_j · IBM_j)|, 1 for most files. An undeformed edge reads 1.
 *
 * The tail. desc.tail_mask (one byte per model vertex, non-zero = tail)
 * names it for an unrepaired file (the detection pass of SPEC A, or a mask
 * the caller built); otherwise it is the set of vertices with total weight
 * >= 0.5 on tail joints (Tail_*, TailB_* … by tb_tail_name_parse, or
 * desc.tail_joints). Without either the tail group is empty (tail_source =
 * TB_TAIL_NONE) and only the body is measured.
 *
 * Instants. t_k = k·D/(n-1), k = 0 … n-1 (both ends: the first and last
 * poses of a clip are real poses and a non-looping clip ends somewhere
 * else), or t_k = k·D/n with desc.loop (a looping clip's end pose equals its
 * start, so it is not measured twice). A clip of duration 0 is measured n
 * times at t = 0.
 *
 * Percentiles. The samples are not kept: each group streams them into a
 * histogram (bins 1e-4 wide on [0.5, 2.5), 1e-3 below and up to 20, 5e-3
 * up to 128, 512 an octave above; src/passes/stretch_hist.h). Sample and
 * torn counts, min and max are exact; p95/p99 are the nearest rank's value
 * within half a bin (exact when the rank is the first or last of its bin).
 * Below 128 no bin straddles a two-decimal rounding boundary, so p95/p99
 * printed with two decimals read as the exact nearest rank would.
 *
 * Memory. tb_measure_clip allocates its scratch once per call (per edge: its
 * bind length and group; per vertex: skinned positions and the tail mask;
 * 1.2 MB a non-empty group for its histogram) and none in the per-instant
 * loop: O(1) per edge whatever the number of instants. It reads the model
 * and clip only, so clips can be measured on several threads at once; with
 * one tb_measure_prepare (desc.prep) they share the per-edge part and the
 * mask, and each thread's own is the skinned positions (12 bytes a vertex).
 * Results are plain values (no pointers to free).
 */
#ifndef TAILBONE_MEASURE_H
#define TAILBONE_MEASURE_H

#include "tailbone/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called at every posed time, after tb_clip_sample + tb_local_to_world and
 * before skinning: the hook may rewrite locals[] and world[] (joint_count
 * entries each; it must keep world consistent with locals for the joints it
 * changes). t_s is the clip time, dt_s the time since the previous call (0 on
 * the first call). This is where a secondary-motion solver (SPEC B,
 * tailbone/spring.h) plugs in. */
typedef void (*tb_pose_hook)(void *user, float t_s, float dt_s, tb_transform *locals,
                             float (*world)[16]);

/* The most instants a clip is measured at: the time grows as edges ×
 * instants (the memory does not), so more is refused (TB_ERR_ARG), never
 * attempted. */
#define TB_MEASURE_MAX_INSTANTS 10000

/* What tb_measure_clip works out before a clip's first instant that is not
 * the clip's (tb_measure_prepare). */
typedef struct tb_measure_prep tb_measure_prep;

typedef struct tb_measure_desc {
    int instants;              /* 0 → 24 (SPEC C); 2 … TB_MEASURE_MAX_INSTANTS otherwise */
    int loop;                  /* 0: t_k = k·D/(n-1); 1: t_k = k·D/n (looping clip) */
    float torn_above;          /* 0 → 1.5: ratio above this is torn */
    float torn_below;          /* 0 → 0.67: ratio below this is torn */
    float degenerate_h;        /* 0 → 1e-6: edges with bind length < this × H are skipped */
    const uint8_t *tail_mask;  /* NULL → from tail joints' weights; else vertex_count bytes */
    const uint8_t *tail_joints;/* NULL → Tail_* names; else one byte per skeleton joint */
    /* Skinning weights to measure instead of the model's (a variant such as
     * the rigid one, tb_measure_rigid_weights): vertex_count × m->influences
     * entries each, same layout as tb_model.joints/weights. NULL → model's. */
    const uint16_t *joints;
    const float *weights;
    /* The model's unique edges from tb_measure_edges (sorted lo << 32 | hi),
     * to share one list across clips and variants; NULL → computed here. */
    const uint64_t *edges;
    size_t edge_count;
    tb_pose_hook pose_hook;    /* NULL → none */
    void *hook_user;
    float hook_rate_hz;        /* 0 → the hook runs at the instants only; > 0: also at
                                  this rate in between (a solver's frame rate) */
    int warmup_passes;         /* 0 → none: plays the clip this many times into the
                                  hook before measuring (a spring's start transient) */
    /* NULL, or instants × vertex_count × 3 floats receiving the skinned WORLD
     * positions (not divided by world_scale), instant-major, vertices in
     * model order (tb_model: primitives of the skin in node order). */
    float *positions_out;
    /* NULL, or tb_measure_prepare's for this model and a desc equal to this
     * one but for instants, loop, the pose hook's fields and positions_out
     * (which the prep must have been made with to be given here): the clips
     * of one job then share it (read-only: from any number of threads)
     * instead of each working it out again into its own copy. */
    const tb_measure_prep *prep;
    /* NULL, or vertex_count × 3 floats of scratch for the skinned positions
     * (overwritten): a caller measuring clips on several threads allocates
     * one a thread, once, on its own thread (glibc gives each thread its own
     * heap, which does not reuse what the caller's has freed). */
    float *skinned;
} tb_measure_desc;

typedef struct tb_stretch_stats {
    size_t edges;      /* unique non-degenerate edges of the group */
    size_t samples;    /* edges × instants */
    size_t torn;       /* samples above torn_above or below torn_below */
    float p95, p99;    /* nearest-rank percentiles of the ratio, within half a histogram
                          bin (1e-4 near 1; see "Percentiles"); NaN when no sample */
    float min, max;
    float torn_frac;   /* torn / samples (0 … 1); NaN when no sample */
} tb_stretch_stats;

typedef enum tb_tail_source {
    TB_TAIL_NONE = 0,   /* no tail joints and no mask: body only */
    TB_TAIL_FROM_JOINTS,/* weights on Tail_* (or desc.tail_joints) */
    TB_TAIL_FROM_MASK   /* desc.tail_mask */
} tb_tail_source;

typedef struct tb_measure_result {
    float duration_s;
    int instants;
    float height;               /* H, bind units */
    float world_scale;          /* world units per bind unit in the stored pose */
    tb_tail_source tail_source;
    size_t tail_vertices;
    tb_stretch_stats tail, body;
    /* Edges with exactly one vertex in the tail: where the tail meets the
     * body's skin on a tail welded into the body (beyond SPEC C, which
     * measures neither; empty for a tail that is its own shell). */
    tb_stretch_stats seam;
    /* SPEC A9: per tail vertex sum_i w_i · distance(p, bone segment of its
     * joint i) in bind space, averaged over the tail; bind units; NaN when
     * there is no tail. */
    float bone_distance;
    /* Tail motion (SPEC C: "measure motion too"). The tip is the tail vertex
     * farthest, in bind space, from the tail root (the head of the first
     * tail joint; for a mask, the centroid of tail vertices sharing an edge
     * with the body, or the tail vertex nearest the hips when the tail is a
     * separate shell). tip_travel is the length of the tip's path through
     * the instants, in world units; tip_travel_h the same / (world_scale·H). */
    int tip_vertex;             /* -1 when no tail */
    float tip_travel, tip_travel_h;
    /* Largest angle between a tail bone's world orientation at t_k and at
     * t_0 over all k and all tail bones. Tail bones: the joints that are the
     * dominant influence of some tail vertex — the Tail_* bones on a repaired
     * rig, Hips in the rigid variant, a leg on a wrongly weighted rig — so
     * each variant reports the rotation of what actually carries its tail.
     * NaN when there is no tail. */
    float max_bone_rotation_rad;
    int motion_bone_count;
} tb_measure_result;

/* Resolved copy with every zero replaced by its default (d may be NULL). */
tb_measure_desc tb_measure_desc_defaults(const tb_measure_desc *d);

/* Measures one clip. Validates desc first: TB_ERR_ARG with err->where naming
 * the field ("tb_measure_desc.instants") for a bad value. TB_ERR_OOM. */
tb_result tb_measure_clip(tb_measure_result *out, const tb_model *m, const tb_clip *clip,
                          const tb_measure_desc *desc, tb_error *err);

/* The part of a measure that does not depend on the clip, for the clips of
 * one job to share (desc.prep): the edges (9 bytes
 * an edge and 4 a vertex: the edges by lower vertex, their bind lengths
 * and groups), the tail mask, its tip and motion bones, the vertices to
 * skin. Holds pointers to m and to desc's joints and weights, which must
 * outlive it; desc's edges and mask are copied (the caller may free them).
 * Validates desc as tb_measure_clip does. */
tb_result tb_measure_prepare(tb_measure_prep **out, const tb_model *m, const tb_measure_desc *desc,
                             tb_error *err);
void tb_measure_prep_free(tb_measure_prep *p);

/* dst[v] = 1 for every vertex whose total weight on tail joints is >= 0.5
 * (tail_joints: one byte per skeleton joint, NULL → Tail_* names; joints /
 * weights NULL → the model's). Returns the number of tail vertices. */
size_t tb_measure_tail_mask(uint8_t *dst, const tb_model *m, const uint8_t *tail_joints,
                            const uint16_t *joints, const float *weights);

/* SPEC A8 variant: copies the model's joints/weights into the destination
 * arrays (vertex_count × m->influences each) and puts every masked vertex
 * 100% on skeleton joint `joint` (Hips for the rigid reference). Fails with
 * TB_ERR_ARG when `joint` is not a joint of the skin. */
tb_result tb_measure_rigid_weights(uint16_t *joints_dst, float *weights_dst, const tb_model *m,
                                   const uint8_t *mask, int joint, tb_error *err);

/* SPEC A9 weighted bone distance averaged over the masked vertices (bind
 * units; NaN when the mask is empty). Bone segment of joint j: from j to each
 * child (the nearest counts); a terminal joint gets an extension of 50% of
 * its incoming bone (SPEC A1); a lone root is a point. O(n · influences). */
float tb_measure_bone_distance(const tb_model *m, const uint8_t *mask, const uint16_t *joints,
                               const float *weights);

/* The model's unique edges: every unordered pair of vertex indices sharing
 * a triangle, as (lo << 32 | hi), sorted ascending (bucketed by lo, O(n);
 * 4 bytes a triangle side and 8 an edge at the peak).
 * Returns the count and sets *out (malloc'd; free() it; NULL when there is
 * no triangle), or SIZE_MAX when out of memory. */
size_t tb_measure_edges(const tb_model *m, uint64_t **out);

/* Nearest-rank percentile (q in [0, 1]): the value of rank ceil(q·n) in
 * ascending order (q = 0 gives the minimum). Reorders v partially (O(n)
 * expected); NaN when n == 0. */
float tb_measure_percentile(float *v, size_t n, double q);

#ifdef __cplusplus
}
#endif
#endif
