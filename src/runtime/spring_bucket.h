/* Private pieces of the two batch spring steps (spring_batch.c: the exact
 * one, bit-identical to the scalar reference; spring_fast.c: the
 * approximate one): the blocks of chains that are advanced together in SIMD
 * lanes, and the loop that sorts a batch's chains into them. Not installed;
 * GCC/Clang only (vector extensions). */
#ifndef TB_SPRING_BUCKET_H
#define TB_SPRING_BUCKET_H

#include "runtime/spring_internal.h"

#include <stddef.h>

#define TB__MAX_LANES 16 /* the widest block (AVX-512) */

/* A block moves each link's fields in and out of lanes as runs of 16
 * consecutive 32-bit words of the tb__link (spring_lanes.h, tb__rows_in /
 * tb__rows_out): in, from t (t, q0, sc, sigma, lambda), from r (r, A, qhat,
 * omega2, damp, p) and from v (v, q, bend, bend_old); out, from p (p, v,
 * q, bend) and from bend (bend, bend_old, head, target, length, contact).
 * The word offsets, and the layout they rely on: */
#define TB__W(f) (offsetof(tb__link, f) / sizeof(float))
#define TB__RUN_T ((int)TB__W(t))
#define TB__RUN_R ((int)TB__W(r))
#define TB__RUN_V ((int)TB__W(v))
#define TB__RUN_P ((int)TB__W(p))
#define TB__RUN_BEND ((int)TB__W(bend))
_Static_assert(sizeof(float) == 4 && sizeof(int) == 4 && sizeof(versor) == 16,
               "tb__link runs: 32-bit words");
_Static_assert(TB__W(q0) == TB__W(t) + 3 && TB__W(sc) == TB__W(q0) + 4 &&
                   TB__W(sigma) == TB__W(sc) + 3 && TB__W(lambda) == TB__W(sigma) + 1,
               "tb__link runs: t … lambda consecutive");
_Static_assert(TB__W(A) == TB__W(r) + 3 && TB__W(qhat) == TB__W(A) + 4 &&
                   TB__W(omega2) == TB__W(qhat) + 4 && TB__W(damp) == TB__W(omega2) + 1 &&
                   TB__W(p) == TB__W(damp) + 1 && TB__W(v) == TB__W(p) + 3 &&
                   TB__W(q) == TB__W(v) + 3 && TB__W(bend) == TB__W(q) + 4 &&
                   TB__W(bend_old) == TB__W(bend) + 4 && TB__W(head) == TB__W(bend_old) + 4 &&
                   TB__W(target) == TB__W(head) + 3 && TB__W(length) == TB__W(target) + 3 &&
                   TB__W(contact) == TB__W(length) + 1,
               "tb__link runs: r … contact consecutive");
_Static_assert(TB__W(t) + 16 <= sizeof(tb__link) / 4 && TB__W(bend) + 16 <= sizeof(tb__link) / 4,
               "tb__link runs: inside the struct");
#define TB__LANE_MAX_LINKS 16
/* The vectors of the approximate step's tb__lane_link (spring_lanes.h
 * checks it): a crowd's lanes take TB__LANE_LINK_VECS * 4 * lanes bytes
 * per link. */
#define TB__LANE_LINK_VECS 46
/* The same for a tb__lane_chain (a crowd keeps one per block). */
#define TB__LANE_CHAIN_VECS 61

#define TB__VI static inline __attribute__((always_inline))

/* A chain waiting for a block: its animator's chain and anchor frames. */
typedef struct tb__entry {
    tb__chain *chain;
    tb__link *links;
    tb__frame prev, cur;
    float h;                   /* the chain's sub-step length this frame */
    const float (*world)[16];  /* the item's arrays */
    tb_transform *locals;
    float (*world_out)[16];
    const struct tb__lane_ids *ids; /* a crowd's copy of the chain's joints, or NULL */
} tb__entry;

/* The joints a crowd's block writes, copied from its chain at init (the
 * outputs then read no tb__chain or tb__link). */
typedef struct tb__lane_ids {
    int anchor, end_joint;
    int joint[TB__LANE_MAX_LINKS];
} tb__lane_ids;

/* Link i's joint, the end joint, the anchor; whether the block writes the
 * chain's outputs (every chain of a crowd does). */
#define TB__JOINT(e, i) ((e)->ids ? (e)->ids->joint[i] : (e)->links[i].joint)
#define TB__END(e) ((e)->ids ? (e)->ids->end_joint : (e)->chain->end_joint)
#define TB__ANCHOR(e) ((e)->ids ? (e)->ids->anchor : (e)->chain->anchor)
#define TB__OUT_OK(e) ((e)->ids || (e)->chain->lane_out_ok)

typedef struct tb__bucket {
    int count, steps;
    float h; /* a crowd's: its entries' h, all alike */
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


/* A block's code: advances b->count chains of n links (b->steps sub-steps,
 * each entry's of its own length e->h) on a code path (TB__PATH_*), writes their outputs in lanes. */
typedef void (*tb__block_fn)(const tb__bucket *b, int n, int path);

/* The batch driver both steps share: every item's chains that are warm, not
 * teleported, at most TB__LANE_MAX_LINKS links long and without
 * contact_keeps_limit are grouped by link count into blocks of `width` and
 * handed to `block`; the others take the scalar reference path
 * (tb__chain_frame); then the outputs the blocks did not write. Every item
 * steps by dt_s, or by each[it] when `each` is given (a block's chains then
 * share their sub-step count, not their length). With
 * approx (the approximate step) the anchor frames are tb__frame_approx's
 * and the teleport test compares cosines (no acos). */
void tb__batch_drive(const tb_spring_batch_item *items, int count, float dt_s, const float *each,
                     int width, tb__block_fn block, int path, int approx);

/* approx (the approximate step): anchor frames by tb__frame_approx, and the
 * teleport test without acos (the angle's half-cosine against that of the
 * threshold, the distance squared). */
/* tb__frame_from_matrix to rounding (spring_batch.c): the same refusals
 * (non-finite, degenerate, mirrored), one branch-light quaternion. */
int tb__frame_approx(const float m[16], tb__frame *f);


/* The approximate step's lanes for a crowd (spring_fast.c): the lanes of a
 * block of `count` chains on a path (16, 8 or 4); a block's frame in its
 * kept lanes (n tb__lane_link, then its tb__lane_chain: the links gathered
 * first when `gather`, the chains' constants computed first when
 * `consts`), outputs written; its lanes back into the links. */
int tb__crowd_lanes(int path, int count);
void tb__crowd_block_fast(const tb__bucket *b, int n, void *lanes, int gather, int consts,
                          int path);
void tb__crowd_scatter_fast(const tb__bucket *b, int n, const void *lanes, int path);

/* A batch frame of dt_s (>= TB__MIN_DT_S) for animator a, as
 * tb_spring_step() cuts it: the sub-steps, and their length in *h. */
int tb__frame_steps(const tb_spring_animator *a, float dt_s, float *h);
/* The half-angle cosine of a's teleport angle (tb__jumped_approx), kept in
 * tp_cos while a's angle is *tp_rad (a crowd shares it: one cosf). */
float tb__teleport_cos(const tb_spring_animator *a, float *tp_rad, float tp_cos);
/* The approximate teleport test (both batch drivers): the anchor moved
 * farther than teleport_m, or turned by more than the angle whose half has
 * cosine tp_cos (no acos). */
int tb__jumped_approx(const tb_spring_animator *a, const tb__frame *from, const tb__frame *to,
                      float tp_cos);

#endif
