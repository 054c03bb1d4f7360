/* bench_offline — the offline repair (detect + chain + weights, i.e.
 * tb_appendage_fix, what `fix --no-bake` runs before writing) on the Wolf
 * and on synthetic bodies of about 10k, 100k and 1M vertices, with the time
 * per vertex, to show how it scales. The synthetic body is bench_detect's
 * (subdivided tubes: torso, two legs and a tail weighted to the left shin),
 * packed into a GLB in memory. Each figure is the best of a few runs, the
 * document reloaded before each (the repair edits it); CPU time of the
 * process (every thread's: detection spreads its rays over the cores) and
 * the wall time of that run. Usage: bench_offline [shared-dir] [only] (default ../shared: the
 * Wolf is corpus/characters/banter_Wolf.glb there; skipped when absent).
 * `only` (wolf, 10k, 100k or 1m) runs that case alone, once: the run to
 * count instructions of (valgrind --tool=callgrind, docs/detection.md);
 * `bench_offline SHARED wolf N [T]` the best of N runs of it (wall time to
 * compare builds by, runs interleaved), on T threads (default 0: one per
 * online CPU; 1: the caller alone). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tailbone/appendage.h"
#include "tailbone/gltf.h"

#include "bench_body.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Appends n bytes (n a multiple of 4) to the binary chunk. */
static size_t put(uint8_t *bin, size_t at, const void *p, size_t n)
{
    memcpy(bin + at, p, n);
    return at + n;
}

/* The synthetic body of about `target` vertices as a GLB in memory. */
static uint8_t *synth_glb(size_t target, size_t *glb_size, size_t *vertices)
{
    size_t seg = target >= 100000 ? 256 : 64, cols = seg + 1;
    size_t rings_total = target / cols;
    size_t rt = rings_total * 4 / 10, rl = rings_total / 5, rtail = rings_total - rt - 2 * rl;
    mesh m = {0};
    m.cap_v = rings_total * cols;
    m.cap_t = rings_total * seg * 2;
    m.pos = malloc(m.cap_v * 3 * sizeof *m.pos);
    m.joints = calloc(m.cap_v * 4, sizeof *m.joints);
    m.weights = calloc(m.cap_v * 4, sizeof *m.weights);
    m.tris = malloc(m.cap_t * 3 * sizeof *m.tris);
    if (!m.pos || !m.joints || !m.weights || !m.tris)
        exit(1);
    const float torso_a[3] = {0, 0.9f, 0}, torso_b[3] = {0, 1.8f, 0};
    const float ll_a[3] = {0.1f, 0.95f, 0}, ll_b[3] = {0.1f, 0.0f, 0};
    const float rl_a[3] = {-0.1f, 0.95f, 0}, rl_b[3] = {-0.1f, 0.0f, 0};
    const float tail_a[3] = {0, 1.0f, -0.08f}, tail_b[3] = {0, 0.55f, -0.8f};
    tube(&m, torso_a, torso_b, 0.11f, 0.09f, rt, seg, -1);
    tube(&m, ll_a, ll_b, 0.07f, 0.05f, rl, seg, J_LLEG);
    tube(&m, rl_a, rl_b, 0.07f, 0.05f, rl, seg, J_RLEG);
    tube(&m, tail_a, tail_b, 0.06f, 0.015f, rtail, seg, J_LLEG);
    float mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t v = 0; v < m.nv; v++)
        for (int c = 0; c < 3; c++) {
            mn[c] = fminf(mn[c], m.pos[v * 3 + (size_t)c]);
            mx[c] = fmaxf(mx[c], m.pos[v * 3 + (size_t)c]);
        }
    const size_t bp = m.nv * 12, bj = m.nv * 8, bw = m.nv * 16, bi = m.nt * 12, bm = J_N * 64;
    const size_t bin_len = bp + bj + bw + bi + bm;
    uint8_t *bin = malloc(bin_len);
    size_t at = put(bin, 0, m.pos, bp);
    at = put(bin, at, m.joints, bj);
    at = put(bin, at, m.weights, bw);
    at = put(bin, at, m.tris, bi);
    for (int j = 0; j < J_N; j++) { /* IBM: the inverse of a translation */
        float ibm[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -jpos[j][0], -jpos[j][1], -jpos[j][2], 1};
        at = put(bin, at, ibm, 64);
    }
    size_t cap = 16384, len = 0;
    char *js = malloc(cap);
#define J(...) (len += (size_t)snprintf(js + len, cap - len, __VA_ARGS__))
    J("{\"asset\":{\"version\":\"2.0\"},\"scene\":0,\"scenes\":[{\"nodes\":[0,%d]}],\"nodes\":[", J_N);
    for (int j = 0; j < J_N; j++) {
        int p = parents[j];
        float t[3] = {jpos[j][0] - (p >= 0 ? jpos[p][0] : 0), jpos[j][1] - (p >= 0 ? jpos[p][1] : 0),
                      jpos[j][2] - (p >= 0 ? jpos[p][2] : 0)};
        J("%s{\"name\":\"%s\",\"translation\":[%.6g,%.6g,%.6g]", j ? "," : "", names[j], t[0], t[1], t[2]);
        int first = 1;
        for (int c = 0; c < J_N; c++)
            if (parents[c] == j) {
                J("%s%d", first ? ",\"children\":[" : ",", c);
                first = 0;
            }
        J("%s}", first ? "" : "]");
    }
    J(",{\"name\":\"Body\",\"mesh\":0,\"skin\":0}],\"skins\":[{\"inverseBindMatrices\":4,\"joints\":[");
    for (int j = 0; j < J_N; j++)
        J("%s%d", j ? "," : "", j);
    J("]}],\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2},"
      "\"indices\":3}]}],\"buffers\":[{\"byteLength\":%zu}],\"bufferViews\":["
      "{\"buffer\":0,\"byteOffset\":0,\"byteLength\":%zu},{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
      "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu},"
      "{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu}],\"accessors\":["
      "{\"bufferView\":0,\"componentType\":5126,\"count\":%zu,\"type\":\"VEC3\","
      "\"min\":[%.9g,%.9g,%.9g],\"max\":[%.9g,%.9g,%.9g]},"
      "{\"bufferView\":1,\"componentType\":5123,\"count\":%zu,\"type\":\"VEC4\"},"
      "{\"bufferView\":2,\"componentType\":5126,\"count\":%zu,\"type\":\"VEC4\"},"
      "{\"bufferView\":3,\"componentType\":5125,\"count\":%zu,\"type\":\"SCALAR\"},"
      "{\"bufferView\":4,\"componentType\":5126,\"count\":%d,\"type\":\"MAT4\"}]}",
      bin_len, bp, bp, bj, bp + bj, bw, bp + bj + bw, bi, bp + bj + bw + bi, bm, m.nv, mn[0], mn[1], mn[2], mx[0],
      mx[1], mx[2], m.nv, m.nv, m.nt * 3, J_N);
#undef J
    while (len % 4)
        js[len++] = ' ';
    *glb_size = 12 + 8 + len + 8 + bin_len;
    uint8_t *glb = malloc(*glb_size);
    uint32_t h[5] = {0x46546C67u, 2u, (uint32_t)*glb_size, (uint32_t)len, 0x4E4F534Au};
    memcpy(glb, h, 20);
    memcpy(glb + 20, js, len);
    uint32_t h2[2] = {(uint32_t)bin_len, 0x004E4942u};
    memcpy(glb + 20 + len, h2, 8);
    memcpy(glb + 28 + len, bin, bin_len);
    *vertices = m.nv;
    free(js);
    free(bin);
    free(m.pos);
    free(m.joints);
    free(m.weights);
    free(m.tris);
    return glb;
}

/* Best of `runs` repairs of a document loaded from memory or a file. */
static void bench(const char *label, const uint8_t *glb, size_t size, const char *path, size_t vertices, int runs,
                  int threads)
{
    tb_appendage_desc d = tb_appendage_defaults(NULL);
    d.threads = threads;
    double best = INFINITY, best_wall = INFINITY;
    int chains = -1;
    for (int r = 0; r < runs; r++) {
        tb_doc *doc = NULL;
        tb_error err = {0};
        tb_result res = glb ? tb_doc_load_memory(&doc, glb, size, label, NULL, NULL, &err) : tb_doc_load(&doc, path, NULL, &err);
        if (res != TB_OK) {
            fprintf(stderr, "bench_offline: %s: %s: %s\n", label, err.where, err.message);
            exit(1);
        }
        tb_appendage_report rep;
        double w0 = wall_ms(), t0 = now_ms();
        res = tb_appendage_fix(&rep, doc, &d, &err);
        double t1 = now_ms(), w1 = wall_ms();
        if (res != TB_OK) {
            fprintf(stderr, "bench_offline: %s: repair failed: %s\n", label, err.message);
            exit(1);
        }
        if (!vertices)
            vertices = rep.vertex_count;
        chains = 0;
        for (int i = 0; i < rep.appendage_count; i++)
            chains += rep.appendages[i].decision == TB_DECIDE_CHAIN;
        tb_appendage_report_free(&rep);
        tb_doc_free(doc);
        if (t1 - t0 < best)
            best = t1 - t0;
        if (w1 - w0 < best_wall)
            best_wall = w1 - w0;
    }
    printf("bench_offline: %-22s %9zu vertices: detect+chain+weights %9.1f ms CPU, %6.0f ns/vertex, "
           "%9.1f ms wall (%d chain(s), best of %d)\n",
           label, vertices, best, 1e6 * best / (double)vertices, best_wall, chains, runs);
}

int main(int argc, char **argv)
{
    const char *shared = argc > 1 ? argv[1] : "../shared";
    const char *only = argc > 2 ? argv[2] : NULL;
    int reps = argc > 3 ? atoi(argv[3]) : 1;
    reps = reps < 1 ? 1 : reps;
    int threads = argc > 4 ? atoi(argv[4]) : 0;
    const char *names[4] = {"wolf", "10k", "100k", "1m"};
    int pick = -1;
    for (int i = 0; only && i < 4; i++)
        if (strcmp(only, names[i]) == 0)
            pick = i;
    if (only && pick < 0) {
        fprintf(stderr, "usage: bench_offline [shared-dir] [wolf|10k|100k|1m [runs [threads]]]\n");
        return 2;
    }
    char wolf[1024];
    snprintf(wolf, sizeof wolf, "%s/corpus/characters/banter_Wolf.glb", shared);
    FILE *f = only && pick != 0 ? NULL : fopen(wolf, "rb");
    if (f) {
        fclose(f);
        bench("Wolf", NULL, 0, wolf, 0, only ? reps : 5, threads);
    } else if (!only || pick == 0) {
        printf("bench_offline: %s not found, Wolf skipped\n", wolf);
    }
    const size_t sizes[3] = {10000, 100000, 1000000};
    const int runs[3] = {5, 3, 1};
    for (int i = 0; i < 3; i++) {
        if (only && pick != i + 1)
            continue;
        size_t size, nv;
        uint8_t *glb = synth_glb(sizes[i], &size, &nv);
        char label[32];
        snprintf(label, sizeof label, "synthetic %zuk", sizes[i] / 1000);
        bench(label, glb, size, NULL, nv, only ? reps : runs[i], threads);
        free(glb);
    }
    return 0;
}
