/* TRS transforms to matrices (SPEC conventions: column-major, quat xyzw). */
#include "tailbone/runtime.h"

void tb_transform_to_matrix(const tb_transform *x, float m[16])
{
    float qx = x->r[0], qy = x->r[1], qz = x->r[2], qw = x->r[3];
    float xx = qx * qx, yy = qy * qy, zz = qz * qz;
    float xy = qx * qy, xz = qx * qz, yz = qy * qz;
    float wx = qw * qx, wy = qw * qy, wz = qw * qz;
    m[0] = (1 - 2 * (yy + zz)) * x->s[0];
    m[1] = (2 * (xy + wz)) * x->s[0];
    m[2] = (2 * (xz - wy)) * x->s[0];
    m[3] = 0;
    m[4] = (2 * (xy - wz)) * x->s[1];
    m[5] = (1 - 2 * (xx + zz)) * x->s[1];
    m[6] = (2 * (yz + wx)) * x->s[1];
    m[7] = 0;
    m[8] = (2 * (xz + wy)) * x->s[2];
    m[9] = (2 * (yz - wx)) * x->s[2];
    m[10] = (1 - 2 * (xx + yy)) * x->s[2];
    m[11] = 0;
    m[12] = x->t[0];
    m[13] = x->t[1];
    m[14] = x->t[2];
    m[15] = 1;
}
