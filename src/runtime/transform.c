/* TRS transforms, 4x4 products and quaternion interpolation (SPEC C and the
 * conventions at the top of SPEC: column-major m[col*4+row], quat xyzw).
 * Shared by pose.c, skin.c and the spring solver; no state, no allocation. */
#include "tailbone/runtime.h"

#include <math.h>
#include <string.h>

#include <cglm/cglm.h>

void tb_transform_to_matrix(const tb_transform *x, float m[16])
{
    float qx = x->r[0], qy = x->r[1], qz = x->r[2], qw = x->r[3];
    /* 2/|q|^2 instead of 2: a quaternion stored slightly off unit length (an
     * exporter's rounding) still yields a pure rotation, never a shear.
     * A zero quaternion has no rotation to give; treat it as identity. */
    float n2 = qx * qx + qy * qy + qz * qz + qw * qw;
    float k = n2 > 0.0f ? 2.0f / n2 : 0.0f;
    float xx = k * qx * qx, yy = k * qy * qy, zz = k * qz * qz;
    float xy = k * qx * qy, xz = k * qx * qz, yz = k * qy * qz;
    float wx = k * qw * qx, wy = k * qw * qy, wz = k * qw * qz;
    m[0] = (1 - (yy + zz)) * x->s[0];
    m[1] = (xy + wz) * x->s[0];
    m[2] = (xz - wy) * x->s[0];
    m[3] = 0;
    m[4] = (xy - wz) * x->s[1];
    m[5] = (1 - (xx + zz)) * x->s[1];
    m[6] = (yz + wx) * x->s[1];
    m[7] = 0;
    m[8] = (xz + wy) * x->s[2];
    m[9] = (yz - wx) * x->s[2];
    m[10] = (1 - (xx + yy)) * x->s[2];
    m[11] = 0;
    m[12] = x->t[0];
    m[13] = x->t[1];
    m[14] = x->t[2];
    m[15] = 1;
}

void tb_mat4_mul(float dst[16], const float a[16], const float b[16])
{
    /* cglm's SSE/AVX path uses aligned loads, while a caller's float[16]
     * is only float-aligned: go through aligned locals. The copies also make
     * dst == a or dst == b safe. */
    mat4 ma, mb, mo;
    memcpy(ma, a, sizeof ma);
    memcpy(mb, b, sizeof mb);
    glm_mat4_mul(ma, mb, mo);
    memcpy(dst, mo, sizeof mo);
}

void tb_quat_normalize(float q[4])
{
    float n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (n2 > 0.0f && isfinite(n2)) {
        float inv = 1.0f / sqrtf(n2);
        q[0] *= inv;
        q[1] *= inv;
        q[2] *= inv;
        q[3] *= inv;
    } else {
        /* Nothing to normalise (zero or non-finite data): identity is the
         * only rotation that cannot tear a mesh. */
        q[0] = q[1] = q[2] = 0.0f;
        q[3] = 1.0f;
    }
}

void tb_quat_slerp(float dst[4], const float a[4], const float b[4], float u)
{
    /* q and -q are the same rotation; flipping b onto a's hemisphere makes
     * the blend take the shorter arc (SPEC C: LINEAR rotations). cglm's
     * glm_quat_slerp falls back to an unflipped lerp near +-1, which can
     * pass through zero for opposite-sign keys, so it is not used here. */
    float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
    float c = a[0] * b0 + a[1] * b1 + a[2] * b2 + a[3] * b3;
    if (c < 0.0f) {
        c = -c;
        b0 = -b0;
        b1 = -b1;
        b2 = -b2;
        b3 = -b3;
    }
    float wa, wb;
    if (c > 0.9995f) {
        /* Nearly parallel: sin(theta) ~ 0, normalised lerp is exact enough. */
        wa = 1.0f - u;
        wb = u;
    } else {
        float theta = acosf(c);
        float inv_sin = 1.0f / sinf(theta);
        wa = sinf((1.0f - u) * theta) * inv_sin;
        wb = sinf(u * theta) * inv_sin;
    }
    float r[4] = {wa * a[0] + wb * b0, wa * a[1] + wb * b1, wa * a[2] + wb * b2,
                  wa * a[3] + wb * b3};
    tb_quat_normalize(r);
    memcpy(dst, r, sizeof r);
}
