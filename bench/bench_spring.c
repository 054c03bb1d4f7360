/* Spring-chain solver throughput (SPEC B): the scalar reference step
 * (tb_spring_step, one animator at a time) against the two batch steps (the
 * whole crowd in one call): tb_spring_step_batch, bit-identical to the
 * reference, and tb_spring_step_batch_fast, the approximate one, in the
 * same run, at 80, 800 and 8,000 links.
 *
 * A crowd of characters, each a Hips with one tail of 4 links + Tail_End,
 * each its own animator. The hips sway and yaw on a fixed deterministic
 * path; 60 fps frames, default parameters (4 internal sub-steps of 1/240 s
 * per frame). Each frame both steps run on the same input, one after the
 * other, so load on the machine hits all three alike; the cost of reading
 * the clock, measured each frame, is subtracted. Reported: nanoseconds
 * per link per frame (one link advanced through one frame, the tail's locals
 * and world matrices written), each batch step's speed-up over the
 * reference, and the largest difference between its joint positions and
 * the reference's over the run (the exact one: 0). The caller's local-to-world pass is not timed.
 * Uses only the runtime. Argument: a scale for the frame counts (default 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tailbone/runtime.h"
#include "tailbone/spring.h"

#define LINKS 4

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void ident(tb_transform *x)
{
    memset(x, 0, sizeof *x);
    x->r[3] = 1.0f;
    x->s[0] = x->s[1] = x->s[2] = 1.0f;
}

static void mat_mul(const float a[16], const float b[16], float d[16])
{
    for (int c = 0; c < 4; c++)
        for (int r = 0; r < 4; r++) {
            float s = 0.0f;
            for (int k = 0; k < 4; k++)
                s += a[k * 4 + r] * b[c * 4 + k];
            d[c * 4 + r] = s;
        }
}

static void world_of(int n, const int *parents, const tb_transform *locals, float (*w)[16])
{
    for (int j = 0; j < n; j++) {
        float m[16];
        tb_transform_to_matrix(&locals[j], m);
        if (parents[j] < 0)
            memcpy(w[j], m, sizeof m);
        else
            mat_mul(w[parents[j]], m, w[j]);
    }
}

/* A crowd of `chars` characters, each a Hips with one 4-link tail, both
 * steps driven by the same motion in the same run, frame by frame. */
static void run(int chars, int frames)
{
    const int per = 2 + LINKS; /* Hips, Tail_1..4, Tail_End */
    int parents[2 + LINKS];
    char namebuf[2 + LINKS][16];
    const char *names[2 + LINKS];
    tb_transform rest[2 + LINKS];
    float bind[2 + LINKS][16];
    for (int k = 0; k < per; k++) {
        ident(&rest[k]);
        names[k] = namebuf[k];
        if (k == 0) {
            parents[k] = -1;
            snprintf(namebuf[k], 16, "Hips");
            rest[k].t[1] = 1.0f;
        } else {
            parents[k] = k - 1;
            if (k <= LINKS)
                snprintf(namebuf[k], 16, "Tail_%d", k);
            else
                snprintf(namebuf[k], 16, "Tail_End");
            rest[k].t[1] = k == 1 ? -0.05f : -0.16f;
            rest[k].t[2] = k == 1 ? -0.10f : -0.12f;
        }
    }
    world_of(per, parents, rest, bind);
    tb_skeleton skel = {per, parents, names, rest, (const float (*)[16])bind, NULL};
    const size_t nj = (size_t)chars * (size_t)per;
    tb_spring_animator **ref = malloc(sizeof *ref * (size_t)chars);
    tb_spring_animator **bat = malloc(sizeof *bat * (size_t)chars);
    tb_spring_animator **fst = malloc(sizeof *fst * (size_t)chars);
    tb_spring_animator **crw = malloc(sizeof *crw * (size_t)chars);
    tb_spring_batch_item *citems = malloc(sizeof *citems * (size_t)chars);
    tb_transform *loc_crw = malloc(sizeof(tb_transform) * nj);
    float (*out_crw)[16] = malloc(sizeof(float) * 16 * nj);
    tb_spring_batch_item *items = malloc(sizeof *items * (size_t)chars);
    tb_spring_batch_item *fitems = malloc(sizeof *fitems * (size_t)chars);
    tb_transform *loc_fst = malloc(sizeof(tb_transform) * nj);
    float (*out_fst)[16] = malloc(sizeof(float) * 16 * nj);
    tb_transform *loc_ref = malloc(sizeof(tb_transform) * nj);
    tb_transform *loc_bat = malloc(sizeof(tb_transform) * nj);
    float (*world)[16] = malloc(sizeof(float) * 16 * nj);
    float (*out_ref)[16] = malloc(sizeof(float) * 16 * nj);
    float (*out_bat)[16] = malloc(sizeof(float) * 16 * nj);
    tb_error err;
    for (int c = 0; c < chars; c++) {
        if (tb_spring_create(&ref[c], &skel, NULL, &err) != TB_OK ||
            tb_spring_create(&bat[c], &skel, NULL, &err) != TB_OK ||
            tb_spring_create(&fst[c], &skel, NULL, &err) != TB_OK ||
            tb_spring_create(&crw[c], &skel, NULL, &err) != TB_OK) {
            fprintf(stderr, "bench_spring: %s: %s\n", err.where, err.message);
            exit(1);
        }
        memcpy(&loc_ref[c * per], rest, sizeof rest);
        memcpy(&loc_bat[c * per], rest, sizeof rest);
        memcpy(&loc_fst[c * per], rest, sizeof rest);
        memcpy(&loc_crw[c * per], rest, sizeof rest);
        citems[c].anim = crw[c];
        citems[c].world = (const float (*)[16])world[c * per];
        citems[c].locals = &loc_crw[c * per];
        citems[c].world_out = &out_crw[c * per];
        fitems[c].anim = fst[c];
        fitems[c].world = (const float (*)[16])world[c * per];
        fitems[c].locals = &loc_fst[c * per];
        fitems[c].world_out = &out_fst[c * per];
        items[c].anim = bat[c];
        items[c].world = (const float (*)[16])world[c * per];
        items[c].locals = &loc_bat[c * per];
        items[c].world_out = &out_bat[c * per];
    }
    /* The crowd: the fast step's blocks with their lanes kept between frames. */
    const size_t crowd_size = tb_spring_crowd_memory_size(crw, chars);
    void *crowd_mem = aligned_alloc(64, (crowd_size + 63) / 64 * 64);
    tb_spring_crowd *crowd;
    if (!crowd_mem || tb_spring_crowd_init(&crowd, crowd_mem, crowd_size, crw, chars, &err) != TB_OK) {
        fprintf(stderr, "bench_spring: crowd: %s\n", err.message);
        exit(1);
    }
    const float dt = 1.0f / 60.0f;
    double t_ref = 0.0, t_bat = 0.0, t_fst = 0.0, t_crw = 0.0, t_clock = 0.0, max_diff = 0.0,
           max_fdiff = 0.0, max_cdiff = 0.0;
    for (int f = 0; f < frames; f++) {
        float t = (float)f * dt;
        for (int c = 0; c < chars; c++) {
            tb_transform *h = &loc_ref[c * per];
            float phase = (float)c * 0.37f;
            h->t[0] = (float)(c % 100) * 2.0f + 0.25f * sinf(2.0f * t + phase);
            h->t[1] = 1.0f + 0.05f * sinf(4.0f * t);
            h->t[2] = (float)(c / 100) * 2.0f;
            float yaw = 0.4f * sinf(1.7f * t + phase);
            h->r[1] = sinf(0.5f * yaw);
            h->r[3] = cosf(0.5f * yaw);
            loc_bat[c * per] = *h;
            loc_fst[c * per] = *h;
            loc_crw[c * per] = *h;
            world_of(per, parents, &loc_ref[c * per], &world[c * per]);
        }
        memcpy(out_ref, world, sizeof(float) * 16 * nj);
        memcpy(out_bat, world, sizeof(float) * 16 * nj);
        memcpy(out_fst, world, sizeof(float) * 16 * nj);
        memcpy(out_crw, world, sizeof(float) * 16 * nj);
        /* Reading thread CPU time is a system call here, about 1.5 us of
         * CPU time from one reading to the next (13% of the fast step's
         * frame at 80 links): an empty interval, measured each frame in the
         * same conditions, is subtracted from each step's interval. */
        double e0 = now_s();
        double t0 = now_s();
        t_clock += t0 - e0;
        for (int c = 0; c < chars; c++)
            tb_spring_step(ref[c], dt, (const float (*)[16])world[c * per], &loc_ref[c * per],
                           &out_ref[c * per]);
        double t1 = now_s();
        tb_spring_step_batch(items, chars, dt);
        double t2 = now_s(), t3, t4;
        /* the fast step and the crowd take turns at going first: each
         * finds the caches as the other left them on half of the frames */
        if (f & 1) {
            tb_spring_step_batch_fast(fitems, chars, dt);
            t3 = now_s();
            tb_spring_crowd_step(crowd, citems, chars, dt);
            t4 = now_s();
            t_fst += t3 - t2;
            t_crw += t4 - t3;
        } else {
            tb_spring_crowd_step(crowd, citems, chars, dt);
            t3 = now_s();
            tb_spring_step_batch_fast(fitems, chars, dt);
            t4 = now_s();
            t_crw += t3 - t2;
            t_fst += t4 - t3;
        }
        t_ref += t1 - t0;
        t_bat += t2 - t1;
        for (size_t j = 0; j < nj; j++)
            for (int k = 12; k < 15; k++) {
                double d = fabs((double)out_ref[j][k] - (double)out_bat[j][k]);
                if (d > max_diff)
                    max_diff = d;
                d = fabs((double)out_ref[j][k] - (double)out_fst[j][k]);
                if (d > max_fdiff)
                    max_fdiff = d;
                d = fabs((double)out_fst[j][k] - (double)out_crw[j][k]);
                if (d > max_cdiff)
                    max_cdiff = d;
            }
        if (getenv("TB_BENCH_TRACE") && f < 400 && f % 10 == 0)
            printf("frame %d: %.3e\n", f, max_diff);
    }
    t_ref -= t_clock;
    t_bat -= t_clock;
    t_fst -= t_clock;
    t_crw -= t_clock;
    const double link_frames = (double)chars * LINKS * (double)frames;
    const double ns_ref = 1e9 * t_ref / link_frames, ns_bat = 1e9 * t_bat / link_frames;
    const double ns_fst = 1e9 * t_fst / link_frames, ns_crw = 1e9 * t_crw / link_frames;
    printf("bench_spring: %5d links (%4d characters x %d), %5d frames, ns per link per 60 fps "
           "frame: scalar %6.1f, batch %6.1f (%4.1fx, joints within %.1e m), fast %5.1f "
           "(%4.1fx, joints within %.1e m), crowd %5.1f (%4.1fx, joints within %.1e m of "
           "fast); clock %.2f us per frame subtracted\n",
           chars * LINKS, chars, LINKS, frames, ns_ref, ns_bat, ns_ref / ns_bat, max_diff, ns_fst,
           ns_ref / ns_fst, max_fdiff, ns_crw, ns_ref / ns_crw, max_cdiff,
           1e6 * t_clock / frames);
    free(crowd_mem);
    for (int c = 0; c < chars; c++) {
        tb_spring_destroy(ref[c]);
        tb_spring_destroy(bat[c]);
        tb_spring_destroy(fst[c]);
        tb_spring_destroy(crw[c]);
    }
    free(fst);
    free(crw);
    free(citems);
    free(loc_crw);
    free(out_crw);
    free(fitems);
    free(loc_fst);
    free(out_fst);
    free(ref);
    free(bat);
    free(items);
    free(loc_ref);
    free(loc_bat);
    free(world);
    free(out_ref);
    free(out_bat);
}

int main(int argc, char **argv)
{
    /* A scale argument shortens the runs (e.g. 0.1 for a smoke run). */
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(scale > 0.0))
        scale = 1.0;
    printf("bench_spring: batch path %s, %d chains per vector\n", tb_spring_batch_path(),
           tb_spring_batch_vector_width());
    run(20, (int)(3000 * scale) + 1);
    run(200, (int)(600 * scale) + 1);
    run(2000, (int)(60 * scale) + 1);
    return 0;
}
