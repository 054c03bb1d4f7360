/* bench_body.h — the synthetic body bench_detect and bench_offline share:
 * a 12-joint Mixamo-named skeleton and subdivided tubes (torso, legs, a
 * tail), each with a duplicated UV-seam column so welding has work. */
#ifndef TB_BENCH_BODY_H
#define TB_BENCH_BODY_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

enum { J_HIPS, J_SPINE, J_SPINE1, J_SPINE2, J_NECK, J_HEAD, J_LUPLEG, J_LLEG, J_LFOOT, J_RUPLEG, J_RLEG, J_RFOOT, J_N };

static const char *const names[J_N] = {"Hips", "Spine", "Spine1", "Spine2", "Neck", "Head",
                                       "LeftUpLeg", "LeftLeg", "LeftFoot", "RightUpLeg", "RightLeg", "RightFoot"};
static const int parents[J_N] = {-1, J_HIPS, J_SPINE, J_SPINE1, J_SPINE2, J_NECK, J_HIPS, J_LUPLEG, J_LLEG,
                                 J_HIPS, J_RUPLEG, J_RLEG};
static const float jpos[J_N][3] = {{0, 1.0f, 0},     {0, 1.15f, 0},    {0, 1.3f, 0},   {0, 1.45f, 0},
                                   {0, 1.6f, 0},     {0, 1.7f, 0},     {0.1f, 0.95f, 0}, {0.1f, 0.5f, 0},
                                   {0.1f, 0.08f, 0}, {-0.1f, 0.95f, 0}, {-0.1f, 0.5f, 0}, {-0.1f, 0.08f, 0}};

typedef struct mesh {
    size_t nv, nt, cap_v, cap_t;
    float *pos;
    uint16_t *joints;
    float *weights;
    uint32_t *tris;
} mesh;

/* A tube along a polyline from a to b, radius r0→r1, `rings` × `seg`
 * vertices plus a seam column (duplicates of column 0); every vertex gets
 * 100% on `joint` (or the nearest of the spine joints when joint < 0). */
static void tube(mesh *m, const float a[3], const float b[3], float r0, float r1, size_t rings, size_t seg, int joint)
{
    float ax[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float len = sqrtf(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    for (int c = 0; c < 3; c++)
        ax[c] /= len;
    float up[3] = {fabsf(ax[1]) < 0.9f ? 0.0f : 1.0f, fabsf(ax[1]) < 0.9f ? 1.0f : 0.0f, 0};
    float u[3] = {ax[1] * up[2] - ax[2] * up[1], ax[2] * up[0] - ax[0] * up[2], ax[0] * up[1] - ax[1] * up[0]};
    float ul = sqrtf(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    for (int c = 0; c < 3; c++)
        u[c] /= ul;
    float w[3] = {ax[1] * u[2] - ax[2] * u[1], ax[2] * u[0] - ax[0] * u[2], ax[0] * u[1] - ax[1] * u[0]};
    size_t base = m->nv, cols = seg + 1;
    for (size_t i = 0; i < rings; i++) {
        float t = (float)i / (float)(rings - 1), r = r0 + (r1 - r0) * t;
        for (size_t k = 0; k < cols; k++) {
            float ang = 2 * 3.14159265f * (float)(k % seg) / (float)seg;
            float *p = m->pos + m->nv * 3;
            for (int c = 0; c < 3; c++)
                p[c] = a[c] + ax[c] * len * t + r * (cosf(ang) * u[c] + sinf(ang) * w[c]);
            int j = joint;
            if (j < 0) { /* nearest spine joint */
                j = J_HIPS;
                for (int q = J_SPINE; q <= J_HEAD; q++)
                    if (fabsf(p[1] - jpos[q][1]) < fabsf(p[1] - jpos[j][1]))
                        j = q;
            }
            m->joints[m->nv * 4] = (uint16_t)j;
            m->weights[m->nv * 4] = 1;
            m->nv++;
        }
    }
    for (size_t i = 0; i + 1 < rings; i++)
        for (size_t k = 0; k < seg; k++) {
            uint32_t v00 = (uint32_t)(base + i * cols + k), v01 = v00 + 1;
            uint32_t v10 = (uint32_t)(v00 + cols), v11 = v10 + 1;
            uint32_t *t = m->tris + m->nt * 3;
            t[0] = v00, t[1] = v10, t[2] = v11, t[3] = v00, t[4] = v11, t[5] = v01;
            m->nt += 2;
        }
}

#endif
