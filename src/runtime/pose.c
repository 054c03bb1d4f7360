/* Clip sampling and local-to-world (SPEC C: the pose at each measured
 * instant; SPEC B reads the same world matrices). glTF 2.0 animation rules:
 * LINEAR slerps rotations, STEP holds, CUBICSPLINE is the Hermite form of
 * glTF 2.0 Appendix C. No allocation, no state: everything is in the
 * caller's arrays. */
#include "tailbone/runtime.h"

#include <assert.h>
#include <math.h>
#include <string.h>

static const float tb__identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

/* Clamp that maps NaN to lo, so a bad time can never index with garbage. */
static float tb__clampf(float v, float lo, float hi)
{
    if (!(v >= lo))
        return lo;
    return v > hi ? hi : v;
}

/* Largest k with times[k] <= t, given times[0] <= t (O(log n): clips are
 * sampled at arbitrary instants, so no cursor is kept). Because the next
 * key is then strictly later than t, the interval [k, k+1] always has a
 * positive length, even when several keys share a time. */
static int tb__find_key(const float *times, int n, float t)
{
    int lo = 0, hi = n; /* first key later than t lies in (lo, hi] */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (times[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void tb__sample_channel(const tb_channel *ch, float t, float *out, int comp)
{
    const int n = ch->key_count;
    const int cubic = ch->interp == TB_INTERP_CUBICSPLINE;
    /* CUBICSPLINE stores (in-tangent, value, out-tangent) per key. */
    const int key_stride = cubic ? 3 * comp : comp;
    const int value_off = cubic ? comp : 0;

    t = tb__clampf(t, ch->times[0], ch->times[n - 1]);
    int k = tb__find_key(ch->times, n, t);
    const float *v0 = ch->values + (size_t)k * key_stride + value_off;

    /* Last key (or a single-key channel, or t at the end): hold it. */
    if (k >= n - 1 || ch->interp == TB_INTERP_STEP) {
        memcpy(out, v0, sizeof(float) * (size_t)comp);
    } else {
        const float t0 = ch->times[k], t1 = ch->times[k + 1];
        const float dt = t1 - t0; /* > 0 by tb__find_key */
        const float u = tb__clampf((t - t0) / dt, 0.0f, 1.0f);
        const float *v1 = v0 + key_stride;
        if (cubic) {
            /* glTF 2.0 Appendix C: p(u) = (2u^3-3u^2+1) v_k + dt (u^3-2u^2+u) b_k
             *   + (-2u^3+3u^2) v_k+1 + dt (u^3-u^2) a_k+1, tangents per second
             *   scaled by the key interval. */
            const float *b0 = v0 + comp;      /* out-tangent of key k */
            const float *a1 = v1 - comp;      /* in-tangent of key k+1 */
            const float u2 = u * u, u3 = u2 * u;
            const float h00 = 2 * u3 - 3 * u2 + 1;
            const float h10 = (u3 - 2 * u2 + u) * dt;
            const float h01 = -2 * u3 + 3 * u2;
            const float h11 = (u3 - u2) * dt;
            for (int c = 0; c < comp; c++)
                out[c] = h00 * v0[c] + h10 * b0[c] + h01 * v1[c] + h11 * a1[c];
        } else if (comp == 4) {
            tb_quat_slerp(out, v0, v1, u);
        } else {
            for (int c = 0; c < comp; c++)
                out[c] = v0[c] + (v1[c] - v0[c]) * u;
        }
    }
    if (comp == 4)
        tb_quat_normalize(out); /* STEP/CUBICSPLINE results, off-unit data */
}

void tb_clip_sample(const tb_clip *clip, const tb_skeleton *skel, float t_s,
                    tb_transform *locals)
{
    assert(clip && skel && locals);
    const int joint_count = skel->joint_count;
    if (joint_count > 0) /* memcpy from a NULL rest_local is UB even for 0 */
        memcpy(locals, skel->rest_local, sizeof *locals * (size_t)joint_count);

    /* A clip that states no duration (0) still clamps each channel to its
     * own keys below; for a consistent clip the two clamps agree. */
    const float t = tb__clampf(t_s, 0.0f, clip->duration_s > 0.0f ? clip->duration_s : INFINITY);

    for (int i = 0; i < clip->channel_count; i++) {
        const tb_channel *ch = &clip->channels[i];
        /* The loader validates channels; skipping a stray one here keeps a
         * caller's mistake from writing outside locals. */
        if (ch->joint < 0 || ch->joint >= joint_count || ch->key_count <= 0)
            continue;
        tb_transform *x = &locals[ch->joint];
        switch (ch->path) {
        case TB_PATH_TRANSLATION:
            tb__sample_channel(ch, t, x->t, 3);
            break;
        case TB_PATH_ROTATION:
            tb__sample_channel(ch, t, x->r, 4);
            break;
        case TB_PATH_SCALE:
            tb__sample_channel(ch, t, x->s, 3);
            break;
        }
    }
}

void tb_local_to_world(const tb_skeleton *skel, const tb_transform *locals,
                       const float root_world[16], float (*world)[16])
{
    assert(skel && locals && world);
    const float *root = root_world ? root_world : tb__identity;
    for (int i = 0; i < skel->joint_count; i++) {
        float local[16];
        tb_transform_to_matrix(&locals[i], local);
        int p = skel->parents[i];
        /* Parent-first order (runtime.h) makes one forward pass enough. A
         * parent that breaks it would read an unwritten matrix: a caller
         * mistake, asserted, and treated as a root in release builds. */
        assert(p < i);
        const float *parent = (p >= 0 && p < i) ? world[p] : root;
        tb_mat4_mul(world[i], parent, local);
    }
}
