/* The quaternion and matrix layer of the library, over cglm: quaternions
 * (x, y, z, w), column-major 4x4 matrices as float[16], radians (glTF's
 * conventions, tailbone/common.h). Header-only; part of the ground floor
 * (core/base.h): it includes nothing of ours but the public runtime.h.
 * Destination first, as in the rest of the library's C API (tb__slerp
 * alone writes its last argument).
 *
 * The helpers the spring solver's chain pass calls per link and sub-step
 * (src/runtime/spring.c) are forced inline, as cglm's own are, so that a
 * Debug build stays usable in tests: TB__INLINE below. Where the spring
 * rounds differently from the offline helpers, its own form is here under
 * its own name (tb__v3_normalize beside tb__norm3, tb__qrot_unit beside
 * tb__qrot, tb__q_swing beside tb__swing, tb__q_slerp beside tb__slerp):
 * the baked keys depend on those roundings, so neither replaces the other. */
#ifndef TB_TBMATH_H
#define TB_TBMATH_H

#include <math.h>
#include <string.h>

#include <cglm/cglm.h>

#include "tailbone/runtime.h"

#ifndef TB__INLINE
#define TB__INLINE CGLM_INLINE
#endif

/* d = a * b (apply b first). */
TB__INLINE void tb__qmul(float d[4], const float a[4], const float b[4])
{
    float r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                  a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                  a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                  a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
    memcpy(d, r, sizeof r);
}

TB__INLINE void tb__qconj(float d[4], const float a[4])
{
    d[0] = -a[0], d[1] = -a[1], d[2] = -a[2], d[3] = a[3];
}

static inline void tb__qrot(float d[3], const float q[4], const float v[3])
{
    float p[4] = {v[0], v[1], v[2], 0}, c[4], t[4];
    tb__qconj(c, q);
    tb__qmul(t, q, p);
    tb__qmul(t, t, c);
    d[0] = t[0], d[1] = t[1], d[2] = t[2];
}

/* The distance between two points */
static inline float tb__dist3(const float a[3], const float b[3])
{
    float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

static inline float tb__norm3(float v[3])
{
    float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 1e-20f)
        v[0] /= l, v[1] /= l, v[2] /= l;
    return l;
}

TB__INLINE void tb__cross(float d[3], const float a[3], const float b[3])
{
    float r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    memcpy(d, r, sizeof r);
}

TB__INLINE float tb__dot(const float a[3], const float b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Unit quaternion of a rotation matrix given as 3 orthonormal columns. */
static inline void tb__quat_from_cols(float q[4], const float x[3], const float y[3], const float z[3])
{
    float m00 = x[0], m10 = x[1], m20 = x[2], m01 = y[0], m11 = y[1], m21 = y[2], m02 = z[0], m12 = z[1],
          m22 = z[2];
    float tr = m00 + m11 + m22;
    if (tr > 0) {
        float s = sqrtf(tr + 1.0f) * 2;
        q[3] = 0.25f * s, q[0] = (m21 - m12) / s, q[1] = (m02 - m20) / s, q[2] = (m10 - m01) / s;
    } else if (m00 > m11 && m00 > m22) {
        float s = sqrtf(1.0f + m00 - m11 - m22) * 2;
        q[3] = (m21 - m12) / s, q[0] = 0.25f * s, q[1] = (m01 + m10) / s, q[2] = (m02 + m20) / s;
    } else if (m11 > m22) {
        float s = sqrtf(1.0f + m11 - m00 - m22) * 2;
        q[3] = (m02 - m20) / s, q[0] = (m01 + m10) / s, q[1] = 0.25f * s, q[2] = (m12 + m21) / s;
    } else {
        float s = sqrtf(1.0f + m22 - m00 - m11) * 2;
        q[3] = (m10 - m01) / s, q[0] = (m02 + m20) / s, q[1] = (m12 + m21) / s, q[2] = 0.25f * s;
    }
    tb_quat_normalize(q);
}

/* Rotation of a (uniformly scaled) world matrix. */
static inline void tb__mat_rot(float q[4], const float m[16])
{
    float x[3] = {m[0], m[1], m[2]}, y[3] = {m[4], m[5], m[6]}, z[3];
    tb__norm3(x);
    tb__norm3(y);
    tb__cross(z, x, y); /* re-orthogonalise; ignores shear and mirroring */
    tb__norm3(z);
    tb__cross(y, z, x);
    tb__quat_from_cols(q, x, y, z);
}

static inline void tb__decompose(tb_transform *t, const float m[16])
{
    t->t[0] = m[12], t->t[1] = m[13], t->t[2] = m[14];
    for (int c = 0; c < 3; c++)
        t->s[c] = sqrtf(m[c * 4] * m[c * 4] + m[c * 4 + 1] * m[c * 4 + 1] + m[c * 4 + 2] * m[c * 4 + 2]);
    tb__mat_rot(t->r, m);
}

/* Shortest rotation taking unit a to unit b. */
static inline void tb__swing(float q[4], const float a[3], const float b[3])
{
    float d = tb__dot(a, b), c[3];
    tb__cross(c, a, b);
    if (d < -0.999999f) {
        float ax[3] = {1, 0, 0};
        if (fabsf(a[0]) > 0.9f)
            ax[0] = 0, ax[1] = 1;
        tb__cross(c, a, ax);
        tb__norm3(c);
        q[0] = c[0], q[1] = c[1], q[2] = c[2], q[3] = 0;
        return;
    }
    q[0] = c[0], q[1] = c[1], q[2] = c[2], q[3] = 1 + d;
    tb_quat_normalize(q);
}

static inline void tb__mat_inv(float d[16], const float m[16])
{
    mat4 a, r;
    memcpy(a, m, sizeof a);
    glm_mat4_inv(a, r);
    memcpy(d, r, sizeof r);
}

static inline void tb__mat_point(float d[3], const float m[16], const float p[3])
{
    float r[3];
    for (int i = 0; i < 3; i++)
        r[i] = m[i] * p[0] + m[4 + i] * p[1] + m[8 + i] * p[2] + m[12 + i];
    memcpy(d, r, sizeof r);
}

/* Angle of the rotation between two unit quaternions, precise near zero
 * (4 atan2(|a − b|, |a + b|) with b on a's hemisphere; 2 acos(|a·b|) in
 * float cannot tell 0 from 0.04°). */
static inline float tb__quat_angle(const float a[4], const float b[4])
{
    double dot = 0, dm = 0, dp = 0;
    for (int i = 0; i < 4; i++)
        dot += (double)a[i] * b[i];
    double s = dot < 0 ? -1 : 1;
    for (int i = 0; i < 4; i++) {
        double m = a[i] - s * b[i], p = a[i] + s * b[i];
        dm += m * m;
        dp += p * p;
    }
    return (float)(4.0 * atan2(sqrt(dm), sqrt(dp)));
}

/* Shortest-path slerp of unit quaternions a → b by t, into out,
 * renormalised; a normalised lerp where they are within ≈1.8° (a·b ≥
 * 0.9995). Not cglm's glm_quat_slerp: its near-parallel branch lerps
 * towards b without first taking b onto a's hemisphere, and does not
 * renormalise. */
static inline void tb__slerp(const float a[4], const float b[4], float t, float out[4])
{
    float d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3], bs[4];
    float sg = d < 0 ? -1.0f : 1.0f;
    d *= sg;
    for (int i = 0; i < 4; i++)
        bs[i] = sg * b[i];
    float wa = 1 - t, wb = t;
    if (d < 0.9995f) {
        float th = acosf(d), st = sinf(th);
        wa = sinf((1 - t) * th) / st;
        wb = sinf(t * th) / st;
    }
    float n = 0;
    for (int i = 0; i < 4; i++) {
        out[i] = wa * a[i] + wb * bs[i];
        n += out[i] * out[i];
    }
    n = sqrtf(n);
    for (int i = 0; i < 4; i++)
        out[i] /= n;
}

/* ---- the spring's own forms (src/runtime/spring.c's chain pass) --------- */

TB__INLINE void tb__v3_set(float d[3], float x, float y, float z)
{
    d[0] = x;
    d[1] = y;
    d[2] = z;
}

TB__INLINE void tb__v3_copy(float d[3], const float a[3])
{
    d[0] = a[0];
    d[1] = a[1];
    d[2] = a[2];
}

TB__INLINE float tb__v3_len(const float a[3])
{
    return sqrtf(tb__dot(a, a));
}

/* d = a + s b */
TB__INLINE void tb__v3_madd(float d[3], const float a[3], float s, const float b[3])
{
    d[0] = a[0] + s * b[0];
    d[1] = a[1] + s * b[1];
    d[2] = a[2] + s * b[2];
}

/* Normalises in place; returns the old length (0 leaves v alone). One
 * division, three multiplies (tb__norm3 divides three times). */
TB__INLINE float tb__v3_normalize(float v[3])
{
    const float l = sqrtf(tb__dot(v, v));
    if (l > 0.0f) {
        const float inv = 1.0f / l;
        v[0] *= inv;
        v[1] *= inv;
        v[2] *= inv;
    }
    return l;
}

TB__INLINE void tb__q_identity(float q[4])
{
    q[0] = q[1] = q[2] = 0.0f;
    q[3] = 1.0f;
}

TB__INLINE void tb__q_copy(float d[4], const float a[4])
{
    d[0] = a[0];
    d[1] = a[1];
    d[2] = a[2];
    d[3] = a[3];
}

/* d = q v q^-1 for a unit q: v + w t + u × t with t = 2 u × v (tb__qrot
 * takes two products, and rounds otherwise). */
TB__INLINE void tb__qrot_unit(float d[3], const float q[4], const float v[3])
{
    const float tx = 2.0f * (q[1] * v[2] - q[2] * v[1]);
    const float ty = 2.0f * (q[2] * v[0] - q[0] * v[2]);
    const float tz = 2.0f * (q[0] * v[1] - q[1] * v[0]);
    const float x = v[0] + q[3] * tx + (q[1] * tz - q[2] * ty);
    const float y = v[1] + q[3] * ty + (q[2] * tx - q[0] * tz);
    const float z = v[2] + q[3] * tz + (q[0] * ty - q[1] * tx);
    d[0] = x;
    d[1] = y;
    d[2] = z;
}

/* Unit, or the identity where the length is 0 or NaN (tb_quat_normalize
 * also turns an infinite one into the identity). */
TB__INLINE void tb__q_normalize(float q[4])
{
    const float l = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (l > 0.0f) {
        const float inv = 1.0f / l;
        q[0] *= inv;
        q[1] *= inv;
        q[2] *= inv;
        q[3] *= inv;
    } else {
        tb__q_identity(q);
    }
}

/* swing(a, b): shortest rotation taking unit a to unit b (SPEC B); for
 * opposite vectors half a turn about cglm's orthogonal of a (tb__swing
 * turns about a × X or a × Y). */
TB__INLINE void tb__q_swing(float d[4], const float a[3], const float b[3])
{
    const float c = tb__dot(a, b);
    if (c < -1.0f + 1e-6f) { /* opposite: half a turn about any perpendicular */
        vec3 x, ax;
        tb__v3_copy(x, a);
        glm_vec3_ortho(x, ax);
        tb__v3_normalize(ax);
        d[0] = ax[0];
        d[1] = ax[1];
        d[2] = ax[2];
        d[3] = 0.0f;
        return;
    }
    d[0] = a[1] * b[2] - a[2] * b[1];
    d[1] = a[2] * b[0] - a[0] * b[2];
    d[2] = a[0] * b[1] - a[1] * b[0];
    d[3] = 1.0f + c;
    tb__q_normalize(d);
}

/* Rotation angle of a unit quaternion: θ = 2 acos(clamp(|w|, 0, 1)) (SPEC B). */
static inline float tb__q_angle(const float q[4])
{
    float w = fabsf(q[3]);
    return 2.0f * acosf(w > 1.0f ? 1.0f : w);
}

/* Shortest-path slerp a → b by t into d: the sign of b flipped first, a
 * normalised lerp above a·b = 0.9995, renormalised by tb__q_normalize
 * (tb__slerp lerps from 0.9995 on and divides by the length). */
static inline void tb__q_slerp(float d[4], const float a[4], const float b[4], float t)
{
    float bb[4];
    float c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    float s = 1.0f;
    if (c < 0.0f) {
        c = -c;
        s = -1.0f;
    }
    for (int k = 0; k < 4; k++)
        bb[k] = s * b[k];
    float wa, wb;
    if (c > 0.9995f) {
        wa = 1.0f - t;
        wb = t;
    } else {
        float th = acosf(c), sn = sinf(th);
        wa = sinf((1.0f - t) * th) / sn;
        wb = sinf(t * th) / sn;
    }
    for (int k = 0; k < 4; k++)
        d[k] = wa * a[k] + wb * bb[k];
    tb__q_normalize(d);
}

/* tb__q_slerp(d, a, b, 1/2) exactly, and cheaply: the normalised sum of a
 * and the nearer sign of b bisects the arc. */
TB__INLINE void tb__q_midpoint(float d[4], const float a[4], const float b[4])
{
    const float sg = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]) < 0.0f ? -1.0f : 1.0f;
    for (int k = 0; k < 4; k++)
        d[k] = a[k] + sg * b[k];
    tb__q_normalize(d);
}

/* slerp(I, q, t): same axis, t times the (shortest) angle. */
static inline void tb__q_scale_angle(float d[4], const float q[4], float t)
{
    float id[4];
    tb__q_identity(id);
    tb__q_slerp(d, id, q, t);
}

/* Conjugation a q a^-1: the same rotation seen from another frame. */
TB__INLINE void tb__q_conjugate_by(float d[4], const float a[4], const float q[4])
{
    float ai[4], tmp[4];
    tb__qconj(ai, a);
    tb__qmul(tmp, a, q);
    tb__qmul(d, tmp, ai);
}

/* Unit quaternion of the rotation whose columns are x, y, z (cglm's
 * glm_mat3_quat, then tb__q_normalize; tb__quat_from_cols rounds
 * otherwise). */
static inline void tb__q_from_axes(float q[4], const float x[3], const float y[3], const float z[3])
{
    mat3 m;
    tb__v3_copy(m[0], x);
    tb__v3_copy(m[1], y);
    tb__v3_copy(m[2], z);
    glm_mat3_quat(m, q);
    tb__q_normalize(q);
}

#endif
