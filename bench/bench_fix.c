/* bench_fix — the whole `tailbone fix` job from the library (tb_fix_run) on
 * a fixed workload: the synthetic characters tail_leg (746 tail vertices,
 * the SPEC's blend zone tears a stress clip, so the blend-zone search runs
 * three attempts) and tail_hips (two attempts), each with its six clips
 * (Walk, Sprint, Idle, Crouch, HipSweep, BackFlip: 9.3 s of animation), plus
 * tail_leg with the zone pinned (one attempt). Prints the wall time of each
 * stage summed over the attempts, best of 5 runs. Usage: bench_fix [runs]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tailbone/fix.h"
#include "tailbone/synth.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { S_REPAIR, S_TRANSFER, S_BAKE, S_MEASURE, S_COUNT };

typedef struct timing {
    double t0, stage[S_COUNT];
    int current, attempts;
} timing;

static void on_stage(void *user, const char *stage)
{
    timing *t = user;
    double now = now_s();
    if (t->current >= 0)
        t->stage[t->current] += now - t->t0;
    t->t0 = now;
    t->current = -1;
    if (!strcmp(stage, "repair"))
        t->current = S_REPAIR, t->attempts++;
    else if (!strcmp(stage, "transfer clips"))
        t->current = S_TRANSFER;
    else if (!strcmp(stage, "bake"))
        t->current = S_BAKE;
    else if (!strcmp(stage, "measure"))
        t->current = S_MEASURE;
}

static int run(const char *variant, float zone, int runs)
{
    tb_doc *in;
    tb_error err;
    if (tb_synth_build(&in, variant, NULL, NULL, &err) != TB_OK) {
        fprintf(stderr, "bench_fix: %s: %s\n", variant, err.message);
        return 1;
    }
    timing best = {0};
    double best_total = 1e30;
    size_t vertices = 0;
    for (int r = 0; r < runs; r++) {
        timing t;
        memset(&t, 0, sizeof t);
        t.current = -1;
        tb_fix_desc d;
        memset(&d, 0, sizeof d);
        d.repair.blend_zone = zone;
        d.progress = on_stage;
        d.progress_user = &t;
        tb_doc *out = NULL;
        tb_fix_report rep;
        double start = now_s();
        t.t0 = start;
        tb_result res = tb_fix_run(&out, in, &d, &rep, &err);
        double end = now_s();
        on_stage(&t, "done");
        if (res != TB_OK) {
            fprintf(stderr, "bench_fix: %s: %s\n", variant, err.message);
            tb_fix_report_free(&rep);
            tb_doc_free(in);
            return 1;
        }
        vertices = rep.repair.vertex_count;
        if (end - start < best_total) {
            best_total = end - start;
            best = t;
        }
        tb_fix_report_free(&rep);
        tb_doc_free(out);
    }
    printf("%-16s %-7s %6zu %8d %8.1f %8.1f %8.1f %8.1f %9.1f\n", variant, zone > 0 ? "pinned" : "search", vertices,
           best.attempts, 1e3 * best.stage[S_REPAIR], 1e3 * best.stage[S_BAKE], 1e3 * best.stage[S_MEASURE],
           1e3 * (best_total - best.stage[S_REPAIR] - best.stage[S_BAKE] - best.stage[S_MEASURE]), 1e3 * best_total);
    tb_doc_free(in);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1)
        runs = 1;
    printf("bench_fix: tb_fix_run, 6 clips (9.3 s), best of %d; times in ms, summed over attempts\n", runs);
    printf("%-16s %-7s %6s %8s %8s %8s %8s %8s %9s\n", "character", "zone", "verts", "attempts", "repair", "bake",
           "measure", "copies", "total");
    int rc = 0;
    rc |= run("tail_leg", 0, runs);
    rc |= run("tail_hips", 0, runs);
    rc |= run("tail_leg", 0.25f, runs);
    return rc;
}
