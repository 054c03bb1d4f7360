#include "preview_model.h"

#include <stdlib.h>
#include <string.h>

#include "tailbone/bake.h"
#include "tailbone/measure.h"

tb_pv *tbt_pv_from_model(const tb_model *m, const uint8_t *mask)
{
    const tb_skeleton *s = &m->skel;
    int nj = s->joint_count;
    size_t nbytes = 0;
    for (int j = 0; j < nj; j++)
        nbytes += strlen(s->names && s->names[j] ? s->names[j] : "") + 1;
    char *names = malloc(nbytes + 1);
    float *rest = malloc((size_t)nj * 10 * sizeof *rest + 1);
    uint8_t *own_mask = calloc(m->vertex_count + 1, 1), *has_ibm = calloc((size_t)nj + 1, 1);
    tb_pv *c = NULL;
    if (names && rest && own_mask && has_ibm) {
        size_t o = 0;
        for (int j = 0; j < nj; j++) {
            const char *n = s->names && s->names[j] ? s->names[j] : "";
            memcpy(names + o, n, strlen(n) + 1);
            o += strlen(n) + 1;
            memcpy(rest + j * 10, s->rest_local[j].t, 3 * sizeof(float));
            memcpy(rest + j * 10 + 3, s->rest_local[j].r, 4 * sizeof(float));
            memcpy(rest + j * 10 + 7, s->rest_local[j].s, 3 * sizeof(float));
            has_ibm[j] = s->has_ibm ? s->has_ibm[j] : 0;
        }
        if (!mask)
            tb_measure_tail_mask(own_mask, m, NULL, NULL, NULL);
        c = tb_pv_new(nj, s->parents, names, rest, (const float *)s->bind_world, has_ibm, m->skin_joint_count,
                      m->skin_joints, (const float *)m->inverse_bind, (int)m->vertex_count, m->positions,
                      m->normals, m->influences, m->joints, m->weights, (int)m->triangle_count, m->triangles,
                      mask ? mask : own_mask, m->height);
    }
    free(names);
    free(rest);
    free(own_mask);
    free(has_ibm);
    return c;
}

static size_t tbt__values(const tb_channel *ch)
{
    return (size_t)ch->key_count * (ch->path == TB_PATH_ROTATION ? 4 : 3) * (ch->interp == TB_INTERP_CUBICSPLINE ? 3 : 1);
}

int tbt_pv_add_clip(tb_pv *c, const tb_clip *clip)
{
    int nc = clip->channel_count;
    size_t nt = 0, nv = 0;
    for (int k = 0; k < nc; k++) {
        nt += (size_t)clip->channels[k].key_count;
        nv += tbt__values(&clip->channels[k]);
    }
    int *meta = malloc(sizeof(int) * 4 * (size_t)(nc + 1));
    float *times = malloc((nt + 1) * sizeof(float)), *vals = malloc((nv + 1) * sizeof(float));
    int idx = -1;
    if (meta && times && vals) {
        int *cj = meta, *cp = meta + nc, *ci = meta + 2 * nc, *ck = meta + 3 * nc;
        size_t ot = 0, ov = 0;
        for (int k = 0; k < nc; k++) {
            const tb_channel *ch = &clip->channels[k];
            cj[k] = ch->joint, cp[k] = (int)ch->path, ci[k] = (int)ch->interp, ck[k] = ch->key_count;
            memcpy(times + ot, ch->times, (size_t)ch->key_count * sizeof(float));
            memcpy(vals + ov, ch->values, tbt__values(ch) * sizeof(float));
            ot += (size_t)ch->key_count;
            ov += tbt__values(ch);
        }
        idx = tb_pv_add_clip(c, clip->duration_s, nc, cj, cp, ci, ck, times, vals);
    }
    free(meta);
    free(times);
    free(vals);
    return idx;
}

int tbt_pv_spring(tb_pv *c, const tb_model *m)
{
    tb_spring_desc sd = tb_bake_spring_desc(m, NULL, NULL, NULL);
    const tb_spring_params *p = &sd.params;
    float f[TB_PV_DESC_FLOATS] = {p->root_hz, p->tip_ratio, p->damping_ratio, p->gravity_mps2, p->carry_rad,
                                  p->rest_curve, p->coupling_per_s, p->bend_limit_rad, p->ground_y_m,
                                  (float)p->ground_off, p->clearance_m, p->contact_damping_per_s, sd.substep_s,
                                  sd.max_dt_s, sd.teleport_m, sd.teleport_rad, sd.bind_up[0], sd.bind_up[1],
                                  sd.bind_up[2], sd.bind_forward[0], sd.bind_forward[1], sd.bind_forward[2]};
    return tb_pv_spring(c, f);
}
