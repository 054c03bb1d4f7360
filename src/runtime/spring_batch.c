/* The batch spring step (SPEC B): many chains, of one animator or of a
 * crowd of them, advanced together, 16 or 8 chains at a time.
 *
 * Layout. The chains of every animator in the batch are grouped by link
 * count into blocks of 16 (AVX-512) or 8 chains; a block is copied into a
 * structure of arrays on the stack (one vector per quantity per link, one
 * lane per chain), advanced by all of the frame's sub-steps there, and
 * copied back into the animators' own link state. The state is therefore
 * the same as tb_spring_step() keeps: the two steps may be mixed, and
 * get_link_state(), reset() and set_params() see what either wrote. The
 * block then writes its tails' locals and world matrices from the lanes
 * (tb__lanes_outputs); tb__write_outputs_rest does the rest.
 *
 * The sub-step (spring_lanes.h, compiled for 8 and for 16 lanes) is the
 * scalar reference's (tb__chain_pass in spring.c),
 * operation for operation in the same order, with every branch turned into
 * a per-lane select; the rare fall-backs (a swing between opposite
 * directions, a vanishing tangent, a slerp between rotations more than 2.6°
 * apart, which the reference also computes with libm's acos and sin) run
 * only when some lane needs them, and only in those lanes. The compiler
 * does not contract to FMA in ISO C mode, so the batch step's state is the
 * reference's bit for bit: tests/test_rt_spring.c runs both on 10^5
 * sub-steps of random motion and asserts the tips agree within 1e-4 of the
 * tail length (they agree exactly), and test_rt_spring_batch runs every
 * invariant test through the batch step. Bit-identity matters: the solver
 * amplifies any difference (its limits and contacts switch on and off), so
 * polynomial trigonometry (acos to 2e-8, sin to 6e-8) drifted 5.7e-4 of the
 * tail length from the reference over the same run.
 *
 * Cold starts, teleports, chains longer than TB__LANE_MAX_LINKS and chains
 * with contact_keeps_limit or bind_limit_rad (opt-in rules, spring.h) take the
 * scalar reference path. Vector code needs GCC or Clang (vector
 * extensions); on x86-64 an AVX-512 build (16-chain blocks) or an AVX2+FMA
 * build of the block step is chosen at run time when the CPU has it, the
 * baseline build otherwise (no -march flag). Any other
 * compiler gets a loop over tb_spring_step(). No allocation, no I/O, no
 * global state: a batch may run on any thread.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/spring_internal.h"

#if defined(__GNUC__) || defined(__clang__)

#include "runtime/spring_bucket.h"

#define TB__SUFFIX(name) name##_8
#define TB__LANES 8
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX
#define TB__SUFFIX(name) name##_16
#define TB__LANES 16
#include "runtime/spring_lanes.h"
#undef TB__LANES
#undef TB__SUFFIX

static void tb__block_base(const tb__bucket *b, int n)
{
    tb__block_body_8(b, n);
}

#if defined(__x86_64__) || defined(__i386__)
#define TB__HAVE_X86_PATHS 1
__attribute__((target("avx2,fma"))) static void tb__block_avx2(const tb__bucket *b, int n)
{
    tb__block_body_8(b, n);
}

/* AVX-512: 16 chains per block. Its 32 vector registers (and 256-bit ones
 * for a block of at most 8 chains) hold the lane state with few spills. */
#define TB__AVX512 "avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"
__attribute__((target(TB__AVX512))) static void tb__block_avx512_16(const tb__bucket *b, int n)
{
    tb__block_body_16(b, n);
}

__attribute__((target(TB__AVX512))) static void tb__block_avx512_8(const tb__bucket *b, int n)
{
    tb__block_body_8(b, n);
}
#endif

static void tb__block_exact(const tb__bucket *b, int n, int path)
{
#ifdef TB__HAVE_X86_PATHS
    if (path == TB__PATH_AVX512 && b->count > 8)
        tb__block_avx512_16(b, n);
    else if (path == TB__PATH_AVX512)
        tb__block_avx512_8(b, n);
    else if (path == TB__PATH_AVX2)
        tb__block_avx2(b, n);
    else
        tb__block_base(b, n);
#else
    (void)path;
    tb__block_base(b, n);
#endif
}

static void tb__flush(tb__bucket *b, int n, tb__block_fn block, int path)
{
    if (b->count == 0)
        return;
    block(b, n, path);
    b->count = 0;
}

/* The best path this CPU runs. */
static int tb__cpu_path(void)
{
#ifdef TB__HAVE_X86_PATHS
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return TB__PATH_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return TB__PATH_AVX2;
#endif
    return TB__PATH_BASE;
}

int tb_spring_batch_vector_width(void)
{
    return tb__cpu_path() == TB__PATH_AVX512 ? 16 : 8;
}

const char *tb_spring_batch_path(void)
{
    static const char *const names[] = {"vector", "avx2", "avx512"};
    return names[tb__cpu_path()];
}

int tb__spring_batch_best_path(void)
{
    return tb__cpu_path();
}

void tb_spring_step_batch(const tb_spring_batch_item *items, int count, float dt_s)
{
    tb__spring_step_batch_on(items, count, dt_s, tb__cpu_path());
}

void tb__spring_step_batch_on(const tb_spring_batch_item *items, int count, float dt_s,
                              int path)
{
    const int best = tb__cpu_path();
    if (path > best)
        path = best;
    tb__batch_drive(items, count, dt_s, NULL, path == TB__PATH_AVX512 ? 16 : 8, tb__block_exact,
                    path, 0);
}

void tb_spring_step_batch_each(const tb_spring_batch_item *items, int count, const float *dt_s)
{
    assert(count == 0 || dt_s);
    const int path = tb__cpu_path();
    tb__batch_drive(items, count, 0.0f, dt_s, path == TB__PATH_AVX512 ? 16 : 8, tb__block_exact,
                    path, 0);
}

int tb__frame_approx(const float m[16], tb__frame *f)
{
    /* not finite: every exponent bit set (an integer test, which the
     * compiler vectorises, instead of a serial sum of x * 0) */
    uint32_t w[16];
    memcpy(w, m, sizeof w);
    uint32_t inf = 0;
    for (int k = 0; k < 16; k++)
        inf |= (uint32_t)((w[k] & 0x7f800000u) == 0x7f800000u);
    if (inf)
        return 0;
    float x[3] = {m[0], m[1], m[2]}, y[3] = {m[4], m[5], m[6]}, z[3] = {m[8], m[9], m[10]};
    const float det = x[0] * (y[1] * z[2] - y[2] * z[1]) + x[1] * (y[2] * z[0] - y[0] * z[2]) +
                      x[2] * (y[0] * z[1] - y[1] * z[0]);
    if (!(det > 1e-30f))
        return 0;
    f->o[0] = m[12];
    f->o[1] = m[13];
    f->o[2] = m[14];
    const float lx = sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), ix = 1.0f / lx;
    /* cbrt(det): two Newton steps from the first column's length, which is
     * the root itself for a similarity; cbrtf where that start is poor. */
    float s = lx;
    s = (s + s + det / (s * s)) * (1.0f / 3.0f);
    s = (s + s + det / (s * s)) * (1.0f / 3.0f);
    f->s = fabsf(s * s * s - det) <= 1e-6f * det ? s : cbrtf(det);
    for (int k = 0; k < 3; k++)
        x[k] *= ix;
    const float yx = y[0] * x[0] + y[1] * x[1] + y[2] * x[2];
    for (int k = 0; k < 3; k++)
        y[k] -= yx * x[k];
    const float y2 = y[0] * y[0] + y[1] * y[1] + y[2] * y[2];
    if (!(y2 > 0.0f))
        return 0;
    const float iy = 1.0f / sqrtf(y2);
    for (int k = 0; k < 3; k++)
        y[k] *= iy;
    z[0] = x[1] * y[2] - x[2] * y[1];
    z[1] = x[2] * y[0] - x[0] * y[2];
    z[2] = x[0] * y[1] - x[1] * y[0];
    /* Rotation with columns x, y, z to a quaternion (Shepperd: the largest
     * of 4w², 4x², 4y², 4z² under the root), then unit. */
    const float tr = x[0] + y[1] + z[2];
    float q[4];
    if (tr > 0.0f) {
        q[3] = 1.0f + tr;
        q[0] = y[2] - z[1];
        q[1] = z[0] - x[2];
        q[2] = x[1] - y[0];
    } else if (x[0] >= y[1] && x[0] >= z[2]) {
        q[0] = 1.0f + x[0] - y[1] - z[2];
        q[1] = x[1] + y[0];
        q[2] = z[0] + x[2];
        q[3] = y[2] - z[1];
    } else if (y[1] >= z[2]) {
        q[1] = 1.0f + y[1] - x[0] - z[2];
        q[0] = x[1] + y[0];
        q[2] = y[2] + z[1];
        q[3] = z[0] - x[2];
    } else {
        q[2] = 1.0f + z[2] - x[0] - y[1];
        q[0] = z[0] + x[2];
        q[1] = y[2] + z[1];
        q[3] = x[1] - y[0];
    }
    const float iq = 1.0f / sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++)
        f->r[k] = q[k] * iq;
    return 1;
}

int tb__frame_steps(const tb_spring_animator *a, float dt_s, float *h)
{
    const float dt = dt_s > a->max_dt ? a->max_dt : dt_s;
    int steps = (int)ceilf(dt / a->substep - 1e-4f);
    if (steps < 1)
        steps = 1;
    *h = dt / (float)steps;
    return steps;
}

float tb__teleport_cos(const tb_spring_animator *a, float *tp_rad, float tp_cos)
{
    if (a->teleport_rad == *tp_rad)
        return tp_cos;
    *tp_rad = a->teleport_rad;
    /* 2 acos(c) > rad  <=>  c < cos(rad / 2) while rad / 2 <= pi */
    return *tp_rad < 6.2831853f ? cosf(0.5f * *tp_rad) : -2.0f;
}

int tb__jumped_approx(const tb_spring_animator *a, const tb__frame *from, const tb__frame *to,
                      float tp_cos)
{
    const float dx = to->o[0] - from->o[0], dy = to->o[1] - from->o[1],
                dz = to->o[2] - from->o[2];
    const float cq = fabsf(from->r[0] * to->r[0] + from->r[1] * to->r[1] +
                           from->r[2] * to->r[2] + from->r[3] * to->r[3]);
    return dx * dx + dy * dy + dz * dz > a->teleport_m * a->teleport_m || cq < tp_cos;
}

void tb__batch_drive(const tb_spring_batch_item *items, int count, float dt_s, const float *each,
                     int width, tb__block_fn block, int path, int approx)
{
    assert(count == 0 || items);
    if (!each && !(dt_s >= TB__MIN_DT_S)) {
        for (int it = 0; it < count; it++)
            tb__write_outputs(items[it].anim, items[it].world, items[it].locals,
                              items[it].world_out);
        return;
    }
    /* approx: the teleport threshold's half-angle cosine, kept while the
     * animators share it (a crowd): one cosf per distinct threshold. */
    float tp_rad = -1.0f, tp_cos = -2.0f;
    tb__bucket buckets[TB__LANE_MAX_LINKS];
    for (int k = 0; k < TB__LANE_MAX_LINKS; k++)
        buckets[k].count = 0;
    for (int it = 0; it < count; it++) {
        tb_spring_animator *a = items[it].anim;
        const float (*world)[16] = items[it].world;
        assert(a && world && items[it].locals);
        a->lanes_all = 0;
        if (each && !(each[it] >= TB__MIN_DT_S)) {
            /* held, state untouched (tb_spring_step's rule): every output
             * is written below */
            for (int ci = 0; ci < a->chain_count; ci++)
                a->chains[ci].lane_out = 0;
            continue;
        }
        float h;
        const int steps = tb__frame_steps(a, each ? each[it] : dt_s, &h);
        if (approx)
            tp_cos = tb__teleport_cos(a, &tp_rad, tp_cos);
        int lanes = 0; /* chains sent to a block that writes their outputs */
        for (int ci = 0; ci < a->chain_count; ci++) {
            tb__chain *c = &a->chains[ci];
            c->lane_out = 0;
            tb__frame cur;
            if (!(approx ? tb__frame_approx(world[c->anchor], &cur)
                         : tb__frame_from_matrix(world[c->anchor], &cur))) {
                c->warm = 0;
                continue;
            }
            const int n = c->link_count;
            int jump;
            if (!c->warm)
                jump = 1;
            else if (approx)
                jump = tb__jumped_approx(a, &c->prev, &cur, tp_cos);
            else
                jump = tb__teleported(a, &c->prev, &cur);
            if (jump || n > TB__LANE_MAX_LINKS || c->contact_keeps_limit ||
                c->cos_bind_max > -1.5f) {
                tb__chain_frame(a, c, &cur, steps, h);
                continue;
            }
            tb__bucket *b = &buckets[n - 1];
            if (b->count > 0 && b->steps != steps)
                tb__flush(b, n, block, path); /* h may differ lane by lane */
            /* The block runs when its last chain arrives: start loading
             * this chain's links now, so that the block finds them in
             * cache (a crowd's animators are far apart in memory; the
             * block prefetches the output rows once it has the links). */
            {
                const char *lp = (const char *)(a->links + c->first_link);
                for (size_t o = 0; o < sizeof(tb__link) * (size_t)n; o += 64)
                    __builtin_prefetch(lp + o, 1);
            }
            lanes += c->lane_out_ok;
            tb__entry *e = &b->e[b->count++];
            e->chain = c;
            e->links = a->links + c->first_link;
            e->prev = c->prev;
            e->cur = cur;
            e->h = h;
            e->world = world;
            e->locals = items[it].locals;
            e->world_out = items[it].world_out;
            e->ids = NULL;
            b->steps = steps;
            c->prev = cur;
            if (b->count == width)
                tb__flush(b, n, block, path);
        }
        a->lanes_all = a->lane_out_all && lanes == a->chain_count;
    }
    for (int k = 0; k < TB__LANE_MAX_LINKS; k++)
        tb__flush(&buckets[k], k + 1, block, path);
    for (int it = 0; it < count; it++)
        tb__write_outputs_rest(items[it].anim, items[it].world, items[it].locals,
                               items[it].world_out);
}

#else /* no vector extensions: the reference, one animator at a time */

int tb_spring_batch_vector_width(void)
{
    return 1;
}

const char *tb_spring_batch_path(void)
{
    return "scalar";
}

void tb_spring_step_batch(const tb_spring_batch_item *items, int count, float dt_s)
{
    tb__spring_step_batch_on(items, count, dt_s, 0);
}

int tb__spring_batch_best_path(void)
{
    return TB__PATH_BASE;
}

void tb__spring_step_batch_on(const tb_spring_batch_item *items, int count, float dt_s,
                              int path)
{
    (void)path;
    for (int it = 0; it < count; it++)
        tb_spring_step(items[it].anim, dt_s, items[it].world, items[it].locals,
                       items[it].world_out);
}

void tb_spring_step_batch_each(const tb_spring_batch_item *items, int count, const float *dt_s)
{
    for (int it = 0; it < count; it++)
        tb_spring_step(items[it].anim, dt_s[it], items[it].world, items[it].locals,
                       items[it].world_out);
}

#endif
