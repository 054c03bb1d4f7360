/* The approximate batch spring step (SPEC B): tb_spring_step_batch_fast().
 *
 * The same blocks of chains in SIMD lanes as the exact batch step
 * (spring_batch.c: same grouping, same state, same scalar fall-backs for
 * cold starts, teleports, long chains and contact_keeps_limit, same outputs
 * in lanes), running the same sub-step (tb__lanes_pass in spring_lanes.h,
 * written once for both) with the approximate arithmetic that TB__FAST
 * selects there: no trigonometry (slerp is a normalised lerp within 2.6°,
 * a series in cos θ beyond, the coupling's series weights computed once
 * per block and frame), reciprocal square roots with one Newton step
 * instead of square roots and divisions, no renormalisation of products of
 * unit quaternions, link frames kept in the hips frame (Pr A⁻¹: fewer
 * rotations per link; tb__bend in spring_lanes.h), and FMA contraction
 * (this file is built with -ffp-contract=fast). Outside the lanes, the
 * anchor frames come from tb__frame_approx (spring_batch.c: no
 * glm_mat3_quat, cbrtf only as a fall-back) and the teleport test compares cosines (no acosf). Every SPEC
 * B rule is the reference's, branch for branch: test_rt_spring_fast runs
 * every test of test_rt_spring.c through this step, and test_rt_spring.c
 * measures how far it strays from the reference (docs/spring.md, "The
 * approximate batch step").
 *
 * Code paths: on x86-64 the lane code is compiled six times (AVX-512 with
 * 16-chain blocks, and with 8 and 4 for a batch's last, partly filled
 * block; AVX2+FMA with 8, and with 4 for a block of at most 4 chains; the
 * baseline SSE2 build with 8), each
 * under its own target pragma so that the reciprocal square root estimate
 * of that instruction set can be used, and chosen at run time; elsewhere
 * (GCC/Clang vector extensions) one build with 1/sqrt; without vector
 * extensions, a loop over tb_spring_step(). No allocation, no I/O, no
 * global state.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/spring_internal.h"

#if defined(__GNUC__) || defined(__clang__)

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TB__HAVE_X86_PATHS 1
#endif

#include "runtime/spring_bucket.h"

#define TB__FAST 1

/* A crowd's block on one build: its run (tb__crowd_body) and its sync
 * (tb__scatter), under that build's target. */
#define TB__CROWD_FNS(sfx)                                                                         \
    static void tb__crowd_run##sfx(const tb__bucket *b, int n, void *lanes, int gather,            \
                                   int consts)                                                     \
    {                                                                                              \
        tb__crowd_body##sfx(b, n, lanes, gather, consts);                                          \
    }                                                                                              \
    static void tb__crowd_sync##sfx(const tb__bucket *b, int n, const void *lanes)                 \
    {                                                                                              \
        tb__scatter##sfx(b, n, lanes);                                                             \
    }

/* Baseline (SSE2 on x86-64, the compiler's default vectors elsewhere). */
#define TB__SUFFIX(name) name##_f8
#define TB__LANES 8
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX
TB__CROWD_FNS(_f8)

#ifdef TB__HAVE_X86_PATHS
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#define TB__SUFFIX(name) name##_f8x
#define TB__LANES 8
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX
TB__CROWD_FNS(_f8x)
static void tb__fast_avx2(const tb__bucket *b, int n)
{
    tb__block_body_f8x(b, n);
}
/* A block of at most 4 chains on AVX2 (a batch's last, partly filled
 * block, or a small batch): 128-bit registers. On Zen 1, which splits every
 * 256-bit operation in two and where the lane sub-step is bound by
 * throughput, 4 chains in 8 lanes cost what 8 chains do. bench_spring at 80
 * links (blocks of 8, 8 and 4), fast step: 308 -> 285 ns per link per
 * frame (docs/spring.md, "Speed"). */
#define TB__SUFFIX(name) name##_f4x
#define TB__LANES 4
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX
TB__CROWD_FNS(_f4x)
static void tb__fast_avx2_4(const tb__bucket *b, int n)
{
    tb__block_body_f4x(b, n);
}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(                                                                      \
    __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")
#endif
#define TB__SUFFIX(name) name##_f16
#define TB__LANES 16
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX
TB__CROWD_FNS(_f16)
static void tb__fast_avx512(const tb__bucket *b, int n)
{
    tb__block_body_f16(b, n);
}
/* The last, partly filled block of a batch on AVX-512: the lane width by
 * its count, 8 or 4 chains in 256- or 128-bit registers, with AVX-512's 32
 * of them (the AVX2 build has 16 and spills more). bench_spring at 80 links
 * (a block of 16 and one of 4): 5-6% less time for the fast step than the
 * 4 chains in the AVX2 build's 8 lanes (docs/spring.md, "Speed"). */
#define TB__SUFFIX(name) name##_f8v
#define TB__LANES 8
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX
TB__CROWD_FNS(_f8v)
static void tb__fast_avx512_8(const tb__bucket *b, int n)
{
    tb__block_body_f8v(b, n);
}
#define TB__SUFFIX(name) name##_f4v
#define TB__LANES 4
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX
TB__CROWD_FNS(_f4v)
static void tb__fast_avx512_4(const tb__bucket *b, int n)
{
    tb__block_body_f4v(b, n);
}
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif /* TB__HAVE_X86_PATHS */

/* A build of the lane code: its width, the batch step's block, a crowd's
 * block and its sync. */
typedef struct tb__fast_build {
    int lanes;
    void (*block)(const tb__bucket *b, int n);
    void (*run)(const tb__bucket *b, int n, void *lanes, int gather, int consts);
    void (*sync)(const tb__bucket *b, int n, const void *lanes);
} tb__fast_build;

static void tb__fast_base(const tb__bucket *b, int n)
{
    tb__block_body_f8(b, n);
}

/* The build a block of `count` chains takes on a path. */
static const tb__fast_build *tb__fast_pick(int path, int count)
{
    static const tb__fast_build base = {8, tb__fast_base, tb__crowd_run_f8, tb__crowd_sync_f8};
#ifdef TB__HAVE_X86_PATHS
    static const tb__fast_build builds[] = {
        {16, tb__fast_avx512, tb__crowd_run_f16, tb__crowd_sync_f16},
        {8, tb__fast_avx512_8, tb__crowd_run_f8v, tb__crowd_sync_f8v},
        {4, tb__fast_avx512_4, tb__crowd_run_f4v, tb__crowd_sync_f4v},
        {8, tb__fast_avx2, tb__crowd_run_f8x, tb__crowd_sync_f8x},
        {4, tb__fast_avx2_4, tb__crowd_run_f4x, tb__crowd_sync_f4x},
    };
    if (path == TB__PATH_AVX512)
        return &builds[count > 8 ? 0 : count > 4 ? 1 : 2];
    if (path >= TB__PATH_AVX2)
        return &builds[count > 4 ? 3 : 4];
#else
    (void)count;
#endif
    (void)path;
    return &base;
}

int tb__crowd_lanes(int path, int count)
{
    return tb__fast_pick(path, count)->lanes;
}

static void tb__block_fast(const tb__bucket *b, int n, int path)
{
    tb__fast_pick(path, b->count)->block(b, n);
}

void tb__crowd_block_fast(const tb__bucket *b, int n, void *lanes, int gather, int consts,
                          int path)
{
    tb__fast_pick(path, b->count)->run(b, n, lanes, gather, consts);
}

void tb__crowd_scatter_fast(const tb__bucket *b, int n, const void *lanes, int path)
{
    tb__fast_pick(path, b->count)->sync(b, n, lanes);
}

void tb__spring_step_batch_fast_on(const tb_spring_batch_item *items, int count, float dt_s,
                                   int path)
{
    const int best = tb__spring_batch_best_path();
    if (path > best)
        path = best;
    tb__batch_drive(items, count, dt_s, NULL, path == TB__PATH_AVX512 ? 16 : 8, tb__block_fast, path,
                    1);
}

#else /* no vector extensions: the exact batch step's fall-back (the reference,
       * one animator at a time) */

void tb__spring_step_batch_fast_on(const tb_spring_batch_item *items, int count, float dt_s,
                                   int path)
{
    tb__spring_step_batch_on(items, count, dt_s, path);
}

#endif

void tb_spring_step_batch_fast(const tb_spring_batch_item *items, int count, float dt_s)
{
    tb__spring_step_batch_fast_on(items, count, dt_s, tb__spring_batch_best_path());
}
