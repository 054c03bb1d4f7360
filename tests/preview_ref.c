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

#include "preview_model.h"
#include "tailbone/gltf.h"

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
    tb_pv *c = tbt_pv_from_model(m, NULL);
    int a = tb_clip_find(doc, argv[2]);
    tb_clip *clip = NULL;
    if (!c || a < 0 || tb_clip_load(&clip, doc, m, a, NULL, &err) != TB_OK) {
        fprintf(stderr, "preview_ref: %s: cannot build the preview object or clip '%s'\n", argv[1], argv[2]);
        return 1;
    }
    int ic = tbt_pv_add_clip(c, clip);
    if (ic < 0 || tbt_pv_spring(c, m) <= 0) {
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
    if (!tips || tb_pv_tips(c, ic, fps, frames, tips) < 0) {
        fprintf(stderr, "preview_ref: bad fps or frame count\n");
        return 2;
    }
    printf("{\"links\": %d, \"length\": %.9g, \"tips\": [", links, tb_pv_tail_length(c));
    for (size_t i = 0; i < (size_t)links * 3 * (size_t)frames; i++)
        printf("%s%.9g", i ? "," : "", tips[i]);
    printf("]}\n");
    free(tips);
    tb_clip_free(clip);
    tb_pv_free(c);
    tb_model_free(m);
    tb_doc_free(doc);
    return 0;
}
