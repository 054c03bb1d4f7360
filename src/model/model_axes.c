/* The character's frame: up and forward in bind space (tb_model_axes) and
 * world units per bind unit (tb_model_world_scale), tailbone/model.h. On
 * their own, below the model's loader (model.c, the height H), the tail
 * chains (tailchain.c), the bake and measure, which each ask for them. */
#include <math.h>
#include <stdlib.h>

#include <cglm/cglm.h>

#include "tailbone/model.h"
#include "tailbone/runtime.h"

static float tb__len3(const float v[3])
{
    return sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* The character's up and forward in bind space from its joints: up from the
 * hips to the highest spine/neck/head joint, left from the right thigh (or
 * shoulder) to the left one, forward = left × up. A model authored facing −Z
 * (the three.js Soldier) gets its own axes. */
int tb_model_axes(const tb_model *m, float up[3], float fwd[3])
{
    /* a quadruped: hips → head runs along the body, not up; it keeps glTF's
     * convention as it did before it had roles (its own axes: m->body) */
    if (m->body.found && m->body.quadruped && m->body.pelvis == m->role_joint[TB_ROLE_HIPS]) {
        up[0] = 0, up[1] = 1, up[2] = 0;
        fwd[0] = 0, fwd[1] = 0, fwd[2] = 1;
        return 0;
    }
    static const tb_role tops[] = {TB_ROLE_HEAD, TB_ROLE_NECK, TB_ROLE_SPINE2, TB_ROLE_SPINE1, TB_ROLE_SPINE};
    static const tb_role sides[][2] = {{TB_ROLE_LEFT_UPLEG, TB_ROLE_RIGHT_UPLEG},
                                       {TB_ROLE_LEFT_SHOULDER, TB_ROLE_RIGHT_SHOULDER},
                                       {TB_ROLE_LEFT_ARM, TB_ROLE_RIGHT_ARM}};
    up[0] = 0, up[1] = 1, up[2] = 0;
    fwd[0] = 0, fwd[1] = 0, fwd[2] = 1;
    int hips = m->role_joint[TB_ROLE_HIPS], top = -1;
    for (size_t i = 0; i < sizeof tops / sizeof tops[0] && top < 0; i++)
        top = m->role_joint[tops[i]];
    if (hips < 0 || top < 0)
        return 0;
    const float *h = &m->skel.bind_world[hips][12], *t = &m->skel.bind_world[top][12];
    float u[3] = {t[0] - h[0], t[1] - h[1], t[2] - h[2]}, lu = tb__len3(u);
    if (!(lu > 0) || !isfinite(lu))
        return 0;
    /* the first left/right pair that is really apart, square to up */
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        int l = m->role_joint[sides[i][0]], r = m->role_joint[sides[i][1]];
        if (l < 0 || r < 0)
            continue;
        const float *lp = &m->skel.bind_world[l][12], *rp = &m->skel.bind_world[r][12];
        float lat[3] = {lp[0] - rp[0], lp[1] - rp[1], lp[2] - rp[2]};
        float f[3] = {lat[1] * u[2] - lat[2] * u[1], lat[2] * u[0] - lat[0] * u[2], lat[0] * u[1] - lat[1] * u[0]};
        float lf = tb__len3(f);
        if (!(lf > 0.05f * lu * tb__len3(lat)) || !(tb__len3(lat) > 1e-3f * lu) || !isfinite(lf))
            continue;
        for (int k = 0; k < 3; k++)
            up[k] = u[k] / lu, fwd[k] = f[k] / lf;
        return 1;
    }
    return 0;
}

float tb_model_world_scale(const tb_model *m)
{
    float(*world)[16] = malloc(((size_t)m->skel.joint_count + 1) * sizeof *world);
    float *d = malloc(((size_t)m->skin_joint_count + 1) * sizeof *d);
    float s = NAN;
    if (world && d) {
        tb_local_to_world(&m->skel, m->skel.rest_local, NULL, world);
        size_t n = 0;
        for (int k = 0; k < m->skin_joint_count; k++) {
            mat4 w;
            tb_mat4_mul((float *)w, world[m->skin_joints[k]], m->inverse_bind[k]);
            float x = cbrtf(fabsf(glm_mat4_det(w)));
            if (isfinite(x) && x > 0)
                d[n++] = x;
        }
        s = n ? tb_select_kth(d, n, tb_rank_nearest(n, 0.5)) : 1.0f;
    }
    free(world);
    free(d);
    return s;
}
