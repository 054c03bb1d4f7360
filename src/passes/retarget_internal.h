/* Private: the pure stages of tb_retarget_run (retarget.c), tested on
 * their own (test_retarget). Not installed. */
#ifndef TB_RETARGET_INTERNAL_H
#define TB_RETARGET_INTERNAL_H

#include "tailbone/retarget.h"
#include "tailbone/runtime.h"

/* Frame map: the rotation C taking the source's character frame onto the
 * target's (frames as columns left, up, forward; C = F_dst F_src^T) as a
 * unit quaternion, and its yaw about the target's up in degrees (the
 * report's facing_deg). */
void tb__rt_frame_map(const float src_frame[3][3], const float dst_frame[3][3], float cq[4], float *facing_deg);

/* Short arc: each joint's rotation in loc flipped onto the hemisphere of
 * the same joint's in prev, so LINEAR keys between them take the short arc. */
void tb__rt_short_arc(tb_transform *loc, const tb_transform *prev, int joint_count);

/* The lowest y(t) of each kind whose bit (1 << kind) is in kinds, in one
 * pass over the supports: lows[kind] is what tb_ground_lowest gives for it
 * (the same points in the same order); +inf for a kind not asked or with no
 * point. */
void tb__ground_lows(const tb_ground_supports *s, unsigned kinds, const float (*skin_mats)[16], float lows[3]);
/* The supports a frame's lows need (tb__ground_distinct: each but those
 * with the bind position, joints, weights and kind of the one before them,
 * whose y is its y bit for bit); out holds s->count; returns how many. */
int tb__ground_distinct(const tb_ground_supports *s, int *out);
/* The listed supports (n of them, ascending) laid out for
 * tb__ground_probes_lows: by kind, each kind's in list order, cut into
 * segments (a run of up to 32 with one dominant joint), each segment's
 * points from a multiple of 4 (its last lanes padding), as arrays a field
 * each; a weight not > 0 (or NaN) has joint 0, and inv is 1 / the sum of
 * the positive weights in slot order (tb_skin_point_axis sums them so every
 * frame; none[i] all ones when that sum is not > 0). A segment also keeps
 * what bounds its points' y from below at any pose: the joints its weights
 * name and a sphere holding its bind positions. */
typedef struct tb__ground_seg {
    int at, n;         /* its points: lanes at .. at + n */
    int nj;            /* joints it names (0: no bound kept: more than 8, or a point without weights) */
    uint16_t joints[8];
    float c[3], r;     /* the sphere */
} tb__ground_seg;

typedef struct tb__ground_probes {
    int seg_at[3], seg_n[3]; /* each kind's segments: segs[seg_at[k] .. + seg_n[k]] */
    int cap, influences;
    tb__ground_seg *segs;
    float *x, *y, *z, *inv;
    uint32_t *none;
    uint16_t *joint; /* slot s of lane i: [s * cap + i] */
    float *w;        /* the same */
} tb__ground_probes;
/* 1, or 0 when out of memory (gp then holds nothing to free). */
int tb__ground_probes_make(tb__ground_probes *gp, const tb_ground_supports *s, const int *list, int n);
void tb__ground_probes_free(tb__ground_probes *gp);
/* tb__ground_lows over the supports gp was made of, bit for bit (each
 * kind's low the first lowest in list order), four points at a time, and
 * only in the segments whose bound (less a margin far above rounding) is
 * not above a low already known: the segment of the least bound is skinned
 * first for it. skin_count: the matrices in skin_mats; scratch: room for
 * tb__ground_probes_scratch(gp, skin_count) floats. */
size_t tb__ground_probes_scratch(const tb__ground_probes *gp, int skin_count);
void tb__ground_probes_lows(const tb__ground_probes *gp, unsigned kinds, const float (*skin_mats)[16], int skin_count,
                            float *scratch, float lows[3]);

/* tb_retarget_docs, with the character's model (tb_model_load_desc with
 * no_normals, loaded for its calibration after any repair) handed to the
 * caller in *model instead of freed, where model is non-NULL and the call
 * succeeds (else *model is NULL): the clips it writes change no node, skin,
 * mesh or accessor that model read, so a bake after it may take it for its
 * own load (fix.c). Free it with tb_model_free. */
tb_result tb__retarget_docs_keep(tb_doc *character, tb_doc *const *libs, int lib_count, const tb_retarget_desc *desc,
                                 tb_retarget_report *report, tb_model **model, tb_error *err);

#endif
