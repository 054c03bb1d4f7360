/* The preview page's frame, natively: what web/preview_core.c does per frame
 * in the browser (clip sampling, live spring, skinning of positions and
 * normals, stretch of every edge with percentiles, colours), on a fixed
 * workload: the synthetic leg-weighted fox repaired by fix (blend zone
 * pinned), Walk at 60 fps, 300 frames, best of 5. The browser's figure (the
 * same C as WebAssembly) is tbPreview.benchmark() in the page
 * (docs/preview.md). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tailbone/fix.h"
#include "tailbone/synth.h"
#include "../tests/preview_model.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void)
{
    tb_error err = {0};
    tb_doc *broken = NULL, *doc = NULL;
    tb_model *m = NULL;
    tb_clip *clip = NULL;
    tb_fix_desc fd;
    memset(&fd, 0, sizeof fd);
    fd.repair.blend_zone = 0.5f;
    tb_fix_report rep;
    memset(&rep, 0, sizeof rep);
    if (tb_synth_build(&broken, "tail_leg", NULL, NULL, &err) != TB_OK || tb_fix_run(&doc, broken, &fd, &rep, &err) != TB_OK ||
        tb_model_load(&m, doc, -1, &err) != TB_OK ||
        tb_clip_load(&clip, doc, m, tb_clip_find(doc, "Walk"), NULL, &err) != TB_OK) {
        fprintf(stderr, "bench_preview: %s: %s\n", err.where, err.message);
        return 1;
    }
    tb_pv *c = tbt_pv_from_model(m, NULL);
    int ci = c ? tbt_pv_add_clip(c, clip) : -1;
    if (ci < 0 || tbt_pv_spring(c, m) <= 0) {
        fprintf(stderr, "bench_preview: cannot build the preview object\n");
        return 1;
    }
    for (int live = 1; live >= 0; live--) {
        double best = 1e30;
        for (int run = 0; run < 5; run++) {
            tb_pv_reset(c);
            double t0 = now_s();
            for (int k = 0; k < 300; k++)
                tb_pv_frame(c, ci, (float)k / 60.0f, live, 1.0f / 60.0f);
            double ms = (now_s() - t0) / 300 * 1e3;
            best = ms < best ? ms : best;
        }
        printf("bench_preview: %zu vertices, %s: %.3f ms per frame (best of 5 x 300)\n", m->vertex_count,
               live ? "live spring" : "baked keys", best);
    }
    tb_pv_free(c);
    tb_clip_free(clip);
    tb_model_free(m);
    tb_fix_report_free(&rep);
    tb_doc_free(doc);
    tb_doc_free(broken);
    return 0;
}
