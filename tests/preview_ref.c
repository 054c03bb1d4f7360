/* preview_ref FILE CLIP FPS FRAMES [P0 … P11]
 *
 * The C runtime's answer for tests/node/preview.test.mjs: loads a repaired
 * file with the offline layer (not through the page's data), builds the same
 * web/preview_core.c object natively with the spring description `tailbone
 * fix` bakes with (tb_bake_spring_desc), optionally sets the 12 solver
 * parameters (tb_spring_params order, scene units, as the page passes them),
 * plays the live spring over FRAMES frames of CLIP at FPS from rest and prints
 * {"links", "length", "tips": [x, y, z, …]} as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/bake.h"
#include "tailbone/clip.h"
#include "tailbone/gltf.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"
#include "../web/preview_core.h"

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 17) {
        fprintf(stderr, "usage: preview_ref FILE CLIP FPS FRAMES [12 spring parameters]\n");
        return 2;
    }
    tb_error err = {0};
    tb_doc *doc = NULL;
    tb_model *m = NULL;
    if (tb_doc_load(&doc, argv[1], NULL, &err) != TB_OK || tb_model_load(&m, doc, -1, &err) != TB_OK) {
        fprintf(stderr, "preview_ref: %s: %s: %s\n", argv[1], err.where, err.message);
        return 1;
    }
    const tb_skeleton *s = &m->skel;
    int nj = s->joint_count;
    size_t nbytes = 0;
    for (int j = 0; j < nj; j++)
        nbytes += strlen(s->names && s->names[j] ? s->names[j] : "") + 1;
    char *names = malloc(nbytes + 1);
    float *rest = malloc((size_t)nj * 10 * sizeof *rest);
    uint8_t *mask = calloc(m->vertex_count + 1, 1);
    size_t o = 0;
    for (int j = 0; j < nj; j++) {
        const char *n = s->names && s->names[j] ? s->names[j] : "";
        memcpy(names + o, n, strlen(n) + 1);
        o += strlen(n) + 1;
        memcpy(rest + j * 10, s->rest_local[j].t, 3 * sizeof(float));
        memcpy(rest + j * 10 + 3, s->rest_local[j].r, 4 * sizeof(float));
        memcpy(rest + j * 10 + 7, s->rest_local[j].s, 3 * sizeof(float));
    }
    tb_measure_tail_mask(mask, m, NULL, NULL, NULL);
    uint8_t *has_ibm = calloc((size_t)nj, 1);
    for (int j = 0; s->has_ibm && j < nj; j++)
        has_ibm[j] = s->has_ibm[j];
    tb_pv *c = tb_pv_new(nj, s->parents, names, rest, (const float *)s->bind_world, has_ibm, m->skin_joint_count,
                         m->skin_joints, (const float *)m->inverse_bind, (int)m->vertex_count, m->positions,
                         m->normals, m->influences, m->joints, m->weights, (int)m->triangle_count, m->triangles,
                         mask, m->height);
    int a = tb_clip_find(doc, argv[2]);
    tb_clip *clip = NULL;
    if (!c || a < 0 || tb_clip_load(&clip, doc, m, a, NULL, &err) != TB_OK) {
        fprintf(stderr, "preview_ref: %s: cannot build the preview object or clip '%s'\n", argv[1], argv[2]);
        return 1;
    }
    /* the clip as flat arrays, as the page receives it */
    int nc = clip->channel_count;
    int *cj = malloc(sizeof(int) * (size_t)(nc + 1)), *cp = malloc(sizeof(int) * (size_t)(nc + 1));
    int *ci = malloc(sizeof(int) * (size_t)(nc + 1)), *ck = malloc(sizeof(int) * (size_t)(nc + 1));
    size_t nt = 0, nvals = 0;
    for (int k = 0; k < nc; k++) {
        const tb_channel *ch = &clip->channels[k];
        nt += (size_t)ch->key_count;
        nvals += (size_t)ch->key_count * (ch->path == TB_PATH_ROTATION ? 4 : 3) * (ch->interp == TB_INTERP_CUBICSPLINE ? 3 : 1);
    }
    float *times = malloc((nt + 1) * sizeof(float)), *vals = malloc((nvals + 1) * sizeof(float));
    size_t ot = 0, ov = 0;
    for (int k = 0; k < nc; k++) {
        const tb_channel *ch = &clip->channels[k];
        size_t w = (size_t)ch->key_count * (ch->path == TB_PATH_ROTATION ? 4 : 3) * (ch->interp == TB_INTERP_CUBICSPLINE ? 3 : 1);
        cj[k] = ch->joint, cp[k] = (int)ch->path, ci[k] = (int)ch->interp, ck[k] = ch->key_count;
        memcpy(times + ot, ch->times, (size_t)ch->key_count * sizeof(float));
        memcpy(vals + ov, ch->values, w * sizeof(float));
        ot += (size_t)ch->key_count;
        ov += w;
    }
    int ic = tb_pv_add_clip(c, clip->duration_s, nc, cj, cp, ci, ck, times, vals);
    tb_spring_desc sd = tb_bake_spring_desc(m, NULL, NULL, NULL);
    const tb_spring_params *p = &sd.params;
    float f[TB_PV_DESC_FLOATS] = {p->root_hz, p->tip_ratio, p->damping_ratio, p->gravity_mps2, p->carry_rad,
                                  p->rest_curve, p->coupling_per_s, p->bend_limit_rad, p->ground_y_m,
                                  (float)p->ground_off, p->clearance_m, p->contact_damping_per_s, sd.substep_s,
                                  sd.max_dt_s, sd.teleport_m, sd.teleport_rad, sd.bind_up[0], sd.bind_up[1],
                                  sd.bind_up[2], sd.bind_forward[0], sd.bind_forward[1], sd.bind_forward[2]};
    if (ic < 0 || tb_pv_spring(c, f) <= 0) {
        fprintf(stderr, "preview_ref: %s: no tail chain to simulate\n", argv[1]);
        return 1;
    }
    if (argc == 17) {
        float q[12];
        for (int k = 0; k < 12; k++)
            q[k] = strtof(argv[5 + k], NULL);
        if (tb_pv_set_params(c, q) != 0) {
            fprintf(stderr, "preview_ref: the solver refused the parameters\n");
            return 1;
        }
    }
    float fps = strtof(argv[3], NULL);
    int frames = atoi(argv[4]);
    int links = tb_pv_link_count(c);
    float *tips = malloc((size_t)links * 3 * (size_t)(frames > 0 ? frames : 1) * sizeof(float));
    if (tb_pv_tips(c, ic, fps, frames, tips) < 0) {
        fprintf(stderr, "preview_ref: bad fps or frame count\n");
        return 2;
    }
    printf("{\"links\": %d, \"length\": %.9g, \"tips\": [", links, tb_pv_tail_length(c));
    for (size_t i = 0; i < (size_t)links * 3 * (size_t)frames; i++)
        printf("%s%.9g", i ? "," : "", tips[i]);
    printf("]}\n");
    free(tips), free(times), free(vals), free(cj), free(cp), free(ci), free(ck);
    free(names), free(rest), free(mask), free(has_ibm);
    tb_clip_free(clip);
    tb_pv_free(c);
    tb_model_free(m);
    tb_doc_free(doc);
    return 0;
}
