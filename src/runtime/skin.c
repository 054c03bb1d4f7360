/* Skin matrices and linear blend skinning (SPEC C: skinned edge lengths at
 * each measured instant; glTF 2.0 skins: jointMatrix = world * IBM).
 * Passes are shaped (dst, src, count, stride) and never allocate. */
#include "tailbone/runtime.h"

#include <assert.h>
#include <math.h>

void tb_skin_matrices(float (*dst)[16], const float (*world)[16],
                      const int *skin_joint_nodes, const float (*inverse_bind)[16],
                      size_t count)
{
    assert(count == 0 || (dst && world && skin_joint_nodes && inverse_bind));
    for (size_t j = 0; j < count; j++)
        tb_mat4_mul(dst[j], world[skin_joint_nodes[j]], inverse_bind[j]);
}

/* The loop of tb_skin_points; inlined with n_inf a constant (4, the common
 * JOINTS_0 set) the influence loop unrolls, the same operations in the same
 * order. */
static inline __attribute__((always_inline)) void tb__skin_loop(float *dst, size_t dst_stride, const float *src,
                                                                size_t src_stride, size_t count, const uint16_t *joints,
                                                                const float *weights, size_t n_inf,
                                                                const float (*skin_mats)[16], int is_direction)
{
    for (size_t v = 0; v < count; v++) {
        const uint16_t *jv = joints + v * n_inf;
        const float *wv = weights + v * n_inf;
        /* Read the whole source point before writing: dst may equal src. */
        const float *p = src + v * src_stride;
        const float x = p[0], y = p[1], z = p[2];
        const float pw = is_direction ? 0.0f : 1.0f;
        /* sum_i w_i (M_i p): transforming per influence costs the same as
         * blending matrices and saves the final product; four lanes (the
         * fourth unused) let the compiler use one SIMD register. */
        float acc[4] = {0, 0, 0, 0};
        float wsum = 0.0f;
        for (size_t i = 0; i < n_inf; i++) {
            const float w = wv[i];
            /* Zero weights pad JOINTS_n sets and may name any joint (even one
             * past the skin), so they are never looked up. Negative or NaN
             * weights are invalid glTF; skipping them keeps NaN out. */
            if (!(w > 0.0f))
                continue;
            const float *m = skin_mats[jv[i]];
            for (int r = 0; r < 4; r++)
                acc[r] += w * (m[r] * x + m[4 + r] * y + m[8 + r] * z + m[12 + r] * pw);
            wsum += w;
        }

        float *o = dst + v * dst_stride;
        if (!(wsum > 0.0f)) {
            /* No influence at all (invalid glTF): leave the point where it
             * is rather than collapse it to the origin. */
            o[0] = x;
            o[1] = y;
            o[2] = z;
            continue;
        }
        float ox = acc[0], oy = acc[1], oz = acc[2];
        if (!is_direction) {
            /* Weights that do not sum to 1 (exporter rounding) would scale
             * the point about the origin; dividing by the sum keeps the
             * blend affine. */
            const float inv = 1.0f / wsum;
            ox *= inv;
            oy *= inv;
            oz *= inv;
        } else {
            /* Directions ignore translation (pw = 0) and are renormalised;
             * a blend that cancels to zero stays zero, never 0/0. */
            const float len2 = ox * ox + oy * oy + oz * oz;
            if (len2 > 0.0f) {
                const float inv = 1.0f / sqrtf(len2);
                ox *= inv;
                oy *= inv;
                oz *= inv;
            }
        }
        o[0] = ox;
        o[1] = oy;
        o[2] = oz;
    }
}

size_t tb_skin_points(float *dst, size_t dst_stride, const float *src,
                      size_t src_stride, size_t count, const uint16_t *joints,
                      const float *weights, int influences,
                      const float (*skin_mats)[16], int is_direction)
{
    if (count == 0)
        return 0;
    assert(dst && src && skin_mats);
    assert(dst_stride >= 3 && src_stride >= 3);
    assert(influences >= 0 && (influences == 0 || (joints && weights)));
    const size_t n_inf = influences > 0 ? (size_t)influences : 0;
    if (n_inf == 4)
        tb__skin_loop(dst, dst_stride, src, src_stride, count, joints, weights, 4, skin_mats, is_direction);
    else if (n_inf == 1) /* rigid: measure's classes cut to their one weight (the same operations) */
        tb__skin_loop(dst, dst_stride, src, src_stride, count, joints, weights, 1, skin_mats, is_direction);
    else
        tb__skin_loop(dst, dst_stride, src, src_stride, count, joints, weights, n_inf, skin_mats, is_direction);
    return count;
}

float tb_skin_point_axis(const float p[3], const uint16_t *joints, const float *weights,
                         int influences, const float (*skin_mats)[16], int axis)
{
    assert(p && skin_mats && axis >= 0 && axis < 3);
    assert(influences >= 0 && (influences == 0 || (joints && weights)));
    const float x = p[0], y = p[1], z = p[2];
    float acc = 0.0f, wsum = 0.0f;
    for (int i = 0; i < influences; i++) {
        const float w = weights[i];
        if (!(w > 0.0f)) /* as tb_skin_points: padding, invalid or NaN */
            continue;
        const float *m = skin_mats[joints[i]];
        /* tb_skin_points' row `axis`, with pw = 1 */
        acc += w * (m[axis] * x + m[4 + axis] * y + m[8 + axis] * z + m[12 + axis] * 1.0f);
        wsum += w;
    }
    if (!(wsum > 0.0f))
        return p[axis];
    const float inv = 1.0f / wsum;
    return acc * inv;
}
