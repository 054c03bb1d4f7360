/* Spring-chain solver throughput (SPEC B): nanoseconds per link-step for 1,
 * 100 and 10,000 tail chains of 4 links, on a fixed workload.
 *
 * Each chain hangs from its own hips joint (a skeleton of N hips, each with
 * Tail_1..Tail_4 + Tail_End), so every chain does a full solve. The hips
 * sway and yaw on a fixed deterministic path; 60 fps frames, default
 * parameters (so 4 internal sub-steps of 1/240 s per frame). Reported:
 *   ns per link-frame   — one link advanced by one tb_spring_step() call,
 *                         world matrices of the tail written (world_out);
 *   ns per link-substep — the same divided by the 4 internal sub-steps.
 * The caller's own local-to-world pass is not timed. Uses only the runtime.
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
    clock_gettime(CLOCK_MONOTONIC, &ts);
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

static void run(int chains, int frames)
{
    const int per = 2 + LINKS; /* Hips, Tail_1..4, Tail_End */
    const int n = chains * per;
    int *parents = malloc(sizeof(int) * (size_t)n);
    char (*namebuf)[16] = malloc(16 * (size_t)n);
    const char **names = malloc(sizeof(char *) * (size_t)n);
    tb_transform *rest = malloc(sizeof(tb_transform) * (size_t)n);
    tb_transform *locals = malloc(sizeof(tb_transform) * (size_t)n);
    float (*bind)[16] = malloc(sizeof(float) * 16 * (size_t)n);
    float (*world)[16] = malloc(sizeof(float) * 16 * (size_t)n);
    for (int c = 0; c < chains; c++) {
        int h = c * per;
        for (int k = 0; k < per; k++) {
            int j = h + k;
            ident(&rest[j]);
            names[j] = namebuf[j];
            if (k == 0) {
                parents[j] = -1;
                snprintf(namebuf[j], 16, "Hips");
                rest[j].t[0] = (float)(c % 100) * 2.0f;
                rest[j].t[1] = 1.0f;
                rest[j].t[2] = (float)(c / 100) * 2.0f;
            } else {
                parents[j] = j - 1;
                if (k <= LINKS)
                    snprintf(namebuf[j], 16, "Tail_%d", k);
                else
                    snprintf(namebuf[j], 16, "Tail_End");
                rest[j].t[1] = k == 1 ? -0.05f : -0.16f;
                rest[j].t[2] = k == 1 ? -0.10f : -0.12f;
            }
        }
    }
    world_of(n, parents, rest, bind);
    tb_skeleton skel = {n, parents, names, rest, (const float (*)[16])bind, NULL};
    tb_spring_animator *anim;
    tb_error err;
    if (tb_spring_create(&anim, &skel, NULL, &err) != TB_OK) {
        fprintf(stderr, "bench_spring: %s: %s\n", err.where, err.message);
        exit(1);
    }
    memcpy(locals, rest, sizeof(tb_transform) * (size_t)n);
    const float dt = 1.0f / 60.0f;
    double spent = 0.0;
    for (int f = 0; f < frames; f++) {
        float t = (float)f * dt;
        for (int c = 0; c < chains; c++) {
            tb_transform *h = &locals[c * per];
            float phase = (float)c * 0.37f;
            h->t[0] = rest[c * per].t[0] + 0.25f * sinf(2.0f * t + phase);
            h->t[1] = 1.0f + 0.05f * sinf(4.0f * t);
            float yaw = 0.4f * sinf(1.7f * t + phase);
            h->r[1] = sinf(0.5f * yaw);
            h->r[3] = cosf(0.5f * yaw);
        }
        world_of(n, parents, locals, world);
        double t0 = now_s();
        tb_spring_step(anim, dt, (const float (*)[16])world, locals, world);
        spent += now_s() - t0;
    }
    double link_frames = (double)chains * LINKS * (double)frames;
    printf("bench_spring: %6d chains x %d links, %5d frames: %8.1f ns/link-frame, "
           "%7.1f ns/link-substep, %8.3f ms/frame\n",
           chains, LINKS, frames, 1e9 * spent / link_frames, 1e9 * spent / (link_frames * 4.0),
           1e3 * spent / frames);
    tb_spring_destroy(anim);
    free(parents);
    free(namebuf);
    free(names);
    free(rest);
    free(locals);
    free(bind);
    free(world);
}

int main(void)
{
    run(1, 200000);
    run(100, 3000);
    run(10000, 40);
    return 0;
}
