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
 * tb__ground_probes_lows: by kind, each
 * kind's in list order from at[kind] (a multiple of 4, padded to one),
 * as arrays a field each; a weight not > 0 (or NaN) has joint 0, and inv
 * is 1 / the sum of the positive weights in slot order (tb_skin_point_axis
 * sums them so every frame; none[i] all ones when that sum is not > 0). */
typedef struct tb__ground_probes {
    int n[3], at[3], cap, influences;
    float *x, *y, *z, *inv;
    uint32_t *none;
    uint16_t *joint; /* slot s of point i: [s * cap + i] */
    float *w;        /* the same */
} tb__ground_probes;
/* 1, or 0 when out of memory (gp then holds nothing to free). */
int tb__ground_probes_make(tb__ground_probes *gp, const tb_ground_supports *s, const int *list, int n);
void tb__ground_probes_free(tb__ground_probes *gp);
/* tb__ground_lows over the supports gp was made of, bit for bit (each
 * kind's low the first lowest in list order), four points at a time. skin_count: the
 * matrices in skin_mats; rows: room for skin_count + 1 rows of 4 floats
 * (scratch). */
void tb__ground_probes_lows(const tb__ground_probes *gp, unsigned kinds, const float (*skin_mats)[16], int skin_count,
                            float (*rows)[4], float lows[3]);

#endif
