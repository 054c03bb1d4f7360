/* bench_skin — fixed workloads for the runtime hot paths (SPEC C measures
 * every tail and body edge at 24 instants per clip, so skinning a whole
 * mesh per instant must stay cheap):
 *   - tb_skin_points: 1,000,000 vertices x 4 influences, 64 joints,
 *     positions (w = 1) and normals (w = 0), packed xyz;
 *   - tb_local_to_world on a 67-joint skeleton (Mixamo's 65 + a short tail);
 *   - tb_clip_sample on that skeleton, 3 LINEAR channels per joint, 60 keys.
 * Data come from a fixed LCG, so every run does the same work. Each figure is
 * the best of several repetitions (the least disturbed by the machine).
 * Uses only the runtime API. Usage: bench_skin [repetitions] (default 5). */
#include "tailbone/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    VERTS = 1000000,
    INFL = 4,
    SKIN_JOINTS = 64,
    SKEL_JOINTS = 67,
    KEYS = 60,
    L2W_ITERS = 20000,
    SAMPLE_ITERS = 20000
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Deterministic uniform in [0, 1). */
static float rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) * (1.0f / 16777216.0f);
}

static tb_transform random_transform(uint32_t *s)
{
    tb_transform x;
    for (int c = 0; c < 3; c++)
        x.t[c] = rnd(s) - 0.5f;
    for (int c = 0; c < 4; c++)
        x.r[c] = rnd(s) - 0.5f;
    tb_quat_normalize(x.r);
    x.s[0] = x.s[1] = x.s[2] = 0.9f + 0.2f * rnd(s);
    return x;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "bench_skin: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1)
        reps = 1;
    uint32_t seed = 12345u;
    double checksum = 0;

    /* ---- skinning ---- */
    float(*mats)[16] = xmalloc(sizeof *mats * SKIN_JOINTS);
    for (int j = 0; j < SKIN_JOINTS; j++) {
        tb_transform x = random_transform(&seed);
        tb_transform_to_matrix(&x, mats[j]);
    }
    float *src = xmalloc(sizeof(float) * 3 * VERTS);
    float *nrm = xmalloc(sizeof(float) * 3 * VERTS);
    float *dst = xmalloc(sizeof(float) * 3 * VERTS);
    uint16_t *joints = xmalloc(sizeof(uint16_t) * INFL * VERTS);
    float *weights = xmalloc(sizeof(float) * INFL * VERTS);
    for (size_t v = 0; v < VERTS; v++) {
        for (int c = 0; c < 3; c++) {
            src[v * 3 + c] = 2 * rnd(&seed) - 1;
            nrm[v * 3 + c] = 2 * rnd(&seed) - 1;
        }
        float sum = 0, w[INFL];
        for (int i = 0; i < INFL; i++) {
            joints[v * INFL + i] = (uint16_t)(rnd(&seed) * SKIN_JOINTS);
            w[i] = rnd(&seed);
            sum += w[i];
        }
        for (int i = 0; i < INFL; i++)
            weights[v * INFL + i] = w[i] / sum;
    }
    const float(*cm)[16] = (const float(*)[16])mats;
    double best_pos = 1e30, best_nrm = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        tb_skin_points(dst, 3, src, 3, VERTS, joints, weights, INFL, cm, 0);
        double t1 = now_s();
        checksum += dst[(size_t)r * 7919 % VERTS];
        tb_skin_points(dst, 3, nrm, 3, VERTS, joints, weights, INFL, cm, 1);
        double t2 = now_s();
        checksum += dst[(size_t)r * 104729 % VERTS];
        if (t1 - t0 < best_pos)
            best_pos = t1 - t0;
        if (t2 - t1 < best_nrm)
            best_nrm = t2 - t1;
    }

    /* ---- local to world, clip sampling ---- */
    int parents[SKEL_JOINTS];
    tb_transform rest[SKEL_JOINTS], pose[SKEL_JOINTS];
    for (int i = 0; i < SKEL_JOINTS; i++) {
        /* A branching, parent-first tree a few levels deep. */
        parents[i] = i == 0 ? -1 : (i < 5 ? i - 1 : (int)(rnd(&seed) * (float)i));
        rest[i] = random_transform(&seed);
    }
    tb_skeleton skel = {.joint_count = SKEL_JOINTS, .parents = parents, .rest_local = rest};
    float(*world)[16] = xmalloc(sizeof *world * SKEL_JOINTS);
    float armature[16] = {0.01f, 0, 0, 0, 0, 0.01f, 0, 0, 0, 0, 0.01f, 0, 0, 0, 0, 1};

    float times[KEYS];
    for (int k = 0; k < KEYS; k++)
        times[k] = (float)k / 30.0f;
    float *tvals = xmalloc(sizeof(float) * 3 * KEYS * SKEL_JOINTS);
    float *rvals = xmalloc(sizeof(float) * 4 * KEYS * SKEL_JOINTS);
    float *svals = xmalloc(sizeof(float) * 3 * KEYS * SKEL_JOINTS);
    tb_channel *chans = xmalloc(sizeof *chans * 3 * SKEL_JOINTS);
    for (int j = 0; j < SKEL_JOINTS; j++) {
        for (int k = 0; k < KEYS; k++) {
            tb_transform x = random_transform(&seed);
            memcpy(&tvals[(j * KEYS + k) * 3], x.t, sizeof x.t);
            memcpy(&rvals[(j * KEYS + k) * 4], x.r, sizeof x.r);
            memcpy(&svals[(j * KEYS + k) * 3], x.s, sizeof x.s);
        }
        chans[3 * j + 0] = (tb_channel){j, TB_PATH_TRANSLATION, TB_INTERP_LINEAR, KEYS, times,
                                        &tvals[j * KEYS * 3]};
        chans[3 * j + 1] = (tb_channel){j, TB_PATH_ROTATION, TB_INTERP_LINEAR, KEYS, times,
                                        &rvals[j * KEYS * 4]};
        chans[3 * j + 2] = (tb_channel){j, TB_PATH_SCALE, TB_INTERP_LINEAR, KEYS, times,
                                        &svals[j * KEYS * 3]};
    }
    tb_clip clip = {.name = "bench", .duration_s = times[KEYS - 1],
                    .channel_count = 3 * SKEL_JOINTS, .channels = chans};

    double best_l2w = 1e30, best_sample = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (int it = 0; it < L2W_ITERS; it++) {
            tb_local_to_world(&skel, rest, armature, world);
            checksum += world[SKEL_JOINTS - 1][12 + (it & 1)];
        }
        double t1 = now_s();
        for (int it = 0; it < SAMPLE_ITERS; it++) {
            tb_clip_sample(&clip, &skel, (float)(it % 1000) * 0.00197f, pose);
            checksum += pose[it % SKEL_JOINTS].r[3];
        }
        double t2 = now_s();
        if ((t1 - t0) / L2W_ITERS < best_l2w)
            best_l2w = (t1 - t0) / L2W_ITERS;
        if ((t2 - t1) / SAMPLE_ITERS < best_sample)
            best_sample = (t2 - t1) / SAMPLE_ITERS;
    }

    printf("tb_skin_points   positions  %d verts x %d infl, %d joints: %.2f ns/vertex (%.1f ms)\n",
           VERTS, INFL, SKIN_JOINTS, best_pos * 1e9 / VERTS, best_pos * 1e3);
    printf("tb_skin_points   normals    %d verts x %d infl, %d joints: %.2f ns/vertex (%.1f ms)\n",
           VERTS, INFL, SKIN_JOINTS, best_nrm * 1e9 / VERTS, best_nrm * 1e3);
    printf("tb_local_to_world %d joints: %.3f us/call\n", SKEL_JOINTS, best_l2w * 1e6);
    printf("tb_clip_sample    %d joints x 3 LINEAR channels, %d keys: %.3f us/call\n",
           SKEL_JOINTS, KEYS, best_sample * 1e6);
    printf("(best of %d; checksum %.6g)\n", reps, checksum);

    free(mats);
    free(src);
    free(nrm);
    free(dst);
    free(joints);
    free(weights);
    free(world);
    free(tvals);
    free(rvals);
    free(svals);
    free(chans);
    return 0;
}
