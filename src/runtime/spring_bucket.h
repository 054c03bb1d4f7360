/* Private pieces of the two batch spring steps (spring_batch.c: the exact
 * one, bit-identical to the scalar reference; spring_fast.c: the
 * approximate one): the blocks of chains that are advanced together in SIMD
 * lanes, and the loop that sorts a batch's chains into them. Not installed;
 * GCC/Clang only (vector extensions). */
#ifndef TB_SPRING_BUCKET_H
#define TB_SPRING_BUCKET_H

#include "runtime/spring_internal.h"

#define TB__MAX_LANES 16 /* the widest block (AVX-512) */
#define TB__LANE_MAX_LINKS 16

#define TB__VI static inline __attribute__((always_inline))

/* A chain waiting for a block: its animator's chain and anchor frames. */
typedef struct tb__entry {
    tb__chain *chain;
    tb__link *links;
    tb__frame prev, cur;
    const float (*world)[16];  /* the item's arrays */
    tb_transform *locals;
    float (*world_out)[16];
} tb__entry;

typedef struct tb__bucket {
    int count, steps;
    float h;
    tb__entry e[TB__MAX_LANES];
} tb__bucket;

#define TB__SET3(dst, k, src)                                                                      \
    do {                                                                                           \
        (dst).x[k] = (src)[0];                                                                     \
        (dst).y[k] = (src)[1];                                                                     \
        (dst).z[k] = (src)[2];                                                                     \
    } while (0)
#define TB__SET4(dst, k, src)                                                                      \
    do {                                                                                           \
        (dst).x[k] = (src)[0];                                                                     \
        (dst).y[k] = (src)[1];                                                                     \
        (dst).z[k] = (src)[2];                                                                     \
        (dst).w[k] = (src)[3];                                                                     \
    } while (0)
#define TB__GET3(src, k, dst)                                                                      \
    do {                                                                                           \
        (dst)[0] = (src).x[k];                                                                     \
        (dst)[1] = (src).y[k];                                                                     \
        (dst)[2] = (src).z[k];                                                                     \
    } while (0)
#define TB__GET4(src, k, dst)                                                                      \
    do {                                                                                           \
        (dst)[0] = (src).x[k];                                                                     \
        (dst)[1] = (src).y[k];                                                                     \
        (dst)[2] = (src).z[k];                                                                     \
        (dst)[3] = (src).w[k];                                                                     \
    } while (0)


/* A block's code: advances b->count chains of n links (b->steps sub-steps
 * of b->h) on a code path (TB__PATH_*), writes their outputs in lanes. */
typedef void (*tb__block_fn)(const tb__bucket *b, int n, int path);

/* The batch driver both steps share: every item's chains that are warm, not
 * teleported, at most TB__LANE_MAX_LINKS links long and without
 * contact_keeps_limit are grouped by link count into blocks of `width` and
 * handed to `block`; the others take the scalar reference path
 * (tb__chain_frame); then the outputs the blocks did not write. With
 * approx (the approximate step) the anchor frames are tb__frame_approx's
 * and the teleport test compares cosines (no acos). */
void tb__batch_drive(const tb_spring_batch_item *items, int count, float dt_s, int width,
                     tb__block_fn block, int path, int approx);

/* approx (the approximate step): anchor frames by tb__frame_approx, and the
 * teleport test without acos (the angle's half-cosine against that of the
 * threshold, the distance squared). */
/* tb__frame_from_matrix to rounding (spring_batch.c): the same refusals
 * (non-finite, degenerate, mirrored), one branch-light quaternion. */
int tb__frame_approx(const float m[16], tb__frame *f);

#endif
