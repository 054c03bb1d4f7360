/* bench_fix — the whole `tailbone fix` job.
 *
 * Part 1, the job against the I/O floor: the CLI (`tailbone fix IN --clips
 * LIB -o OUT` and `tailbone copy IN OUT`) as child processes, wall and CPU
 * time (median over interleaved rounds of each round's fix / copy) and peak
 * RSS (wait4's ru_maxrss) of each, on
 * the Wolf with the Soldier's 4 clips and on a dense character of ~750k
 * vertices (the synthetic tail_leg, each triangle split into n² by edge
 * subdivision, the nearest corner's weights, its clips removed) with
 * tail_leg's 6 clips; fix runs at each -j of $BENCH_FIX_JOBS (default
 * "1,2"), interleaved with copy. Needs the tailbone binary (argv[2],
 * default ./tailbone beside this program) and ../shared (argv[3]) for the
 * Wolf. $BENCH_FIX_PART1_ONLY skips part 2; $BENCH_FIX_KEEP keeps the
 * dense character; $BENCH_FIX_DENSE_RUNS (default 3) its runs, 0 to skip it;
 * $BENCH_FIX_BASELINE=BIN runs BIN's fix as well, interleaved with ours
 * (before/after in one run).
 *
 * Part 2, the library job (tb_fix_run) by stage on a fixed workload: the synthetic characters tail_leg (746 tail vertices,
 * the SPEC's blend zone tears a stress clip, so the blend-zone search runs
 * three attempts) and tail_hips (two attempts), each with its six clips
 * (Walk, Sprint, Idle, Crouch, HipSweep, BackFlip: 9.3 s of animation), plus
 * tail_leg with the zone pinned (one attempt). Prints the wall time of each
 * stage summed over the attempts, best of 5 runs. Usage: bench_fix [runs]. */
#define _DEFAULT_SOURCE /* wait4 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gltf/doc_json.h"
#include "tailbone/fix.h"
#include "tailbone/gltf.h"
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

/* ---- part 1: the CLI job against copy ---------------------------------- */

typedef struct child_run {
    double wall_s, cpu_s, peak_mib;
} child_run;

/* Runs argv as a child (stdout and stderr to /dev/null); wall time and peak RSS. */
static int run_child(char *const *argv, child_run *out)
{
    fflush(NULL); /* the child's freopen would flush our buffer a second time */
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid)
        return 1;
    out->wall_s = now_s() - t0;
    out->cpu_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
                 1e-6 * (double)ru.ru_stime.tv_usec;
    out->peak_mib = (double)ru.ru_maxrss / 1024.0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench_fix: %s %s failed (status %d)\n", argv[0], argv[1], WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return 1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* copy and fix -j J for every J in `jobs` (comma-separated), interleaved
 * `runs` times. The time against copy is the median over the rounds of
 * each round's fix / copy (a round's runs are seconds apart, so a load
 * that comes and goes on a shared machine moves both), printed with the
 * rounds' range; the same for CPU time (user + system, wait4), which the
 * other processes on the machine move less; peak RSS, the largest of each.
 * With $BENCH_FIX_BASELINE (another tailbone binary, e.g. one built from an
 * earlier commit), its fix runs too, right after ours in every round: a
 * before/after in the same run. */
static int job_vs_copy(const char *label, const char *tailbone, const char *in, const char *lib, const char *jobs,
                       int runs, const char *tmp)
{
    char out[1024], jl[64];
    snprintf(out, sizeof out, "%s/bench_fix_out_%d.glb", tmp, (int)getpid());
    snprintf(jl, sizeof jl, "%s", jobs);
    char *js[8];
    int nj = 0;
    for (char *t = strtok(jl, ","); t && nj < 8; t = strtok(NULL, ","))
        js[nj++] = t;
    const char *base = getenv("BENCH_FIX_BASELINE");
    const char *bins[2] = {tailbone, base && *base ? base : NULL};
    int nb = bins[1] ? 2 : 1;
    char *copy_argv[] = {(char *)tailbone, "copy", (char *)in, out, NULL};
    double tc[16], cc[16], tf[2][8][16], qt[2][8][16], qc[2][8][16], rc = 0, rf[2][8] = {{0}};
    runs = runs > 16 ? 16 : runs;
    for (int r = 0; r < runs; r++) {
        child_run c, f;
        if (run_child(copy_argv, &c))
            return 1;
        tc[r] = c.wall_s;
        cc[r] = c.cpu_s;
        rc = c.peak_mib > rc ? c.peak_mib : rc;
        for (int k = 0; k < nj; k++)
            for (int b = 0; b < nb; b++) {
                char *fix_argv[] = {(char *)bins[b], "fix", (char *)in, "--clips", (char *)lib, "-o", out, "-q", "-j",
                                    js[k], NULL};
                if (run_child(fix_argv, &f))
                    return 1;
                tf[b][k][r] = f.wall_s;
                qt[b][k][r] = f.wall_s / c.wall_s;
                qc[b][k][r] = f.cpu_s / (c.cpu_s > 1e-6 ? c.cpu_s : 1e-6);
                rf[b][k] = f.peak_mib > rf[b][k] ? f.peak_mib : rf[b][k];
            }
    }
    double mc = median(tc, runs), mcc = median(cc, runs);
    printf("%-30s copy %8.1f ms (CPU %.1f ms) %6.1f MiB\n", label, 1e3 * mc, 1e3 * mcc, rc);
    for (int k = 0; k < nj; k++)
        for (int b = 0; b < nb; b++) {
            double mf = median(tf[b][k], runs), q = median(qt[b][k], runs), lo = qt[b][k][0],
                   hi = qt[b][k][runs - 1], cq = median(qc[b][k], runs);
            printf("%-30s %sfix --clips -j %-3s %8.1f ms %6.1f MiB: time %5.2fx copy (rounds %.2f-%.2f; CPU %.2fx), "
                   "peak RSS %4.2fx copy\n",
                   "", b ? "baseline " : "", js[k], 1e3 * mf, rf[b][k], q, lo, hi, cq, rf[b][k] / rc);
        }
    remove(out);
    return 0;
}

typedef struct dense_mesh {
    size_t nv, nt;
    float *pos;
    uint16_t *joints;
    float *weights;
    uint32_t *tris;
} dense_mesh;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static size_t edge_index(const uint64_t *e, size_t ne, uint32_t a, uint32_t b)
{
    uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    const uint64_t *p = bsearch(&key, e, ne, sizeof *e, cmp_u64);
    return (size_t)(p - e);
}

/* Each triangle split into n² by cutting every edge into n; new vertices
 * take the weights of the nearest corner. Shared edges share their points. */
static int subdivide(dense_mesh *d, const dense_mesh *s, int n)
{
    uint64_t *e = malloc(s->nt * 3 * sizeof *e);
    if (!e)
        return 1;
    size_t ne = 0;
    for (size_t t = 0; t < s->nt * 3; t++) {
        uint32_t a = s->tris[t], b = s->tris[t - t % 3 + (t % 3 + 1) % 3];
        e[ne++] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    }
    qsort(e, ne, sizeof *e, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < ne; i++)
        if (!u || e[i] != e[u - 1])
            e[u++] = e[i];
    ne = u;
    size_t inner = (size_t)(n - 1) * (size_t)(n - 2) / 2;
    d->nv = s->nv + ne * (size_t)(n - 1) + s->nt * inner;
    d->nt = s->nt * (size_t)n * (size_t)n;
    d->pos = malloc(d->nv * 3 * sizeof *d->pos);
    d->joints = malloc(d->nv * 4 * sizeof *d->joints);
    d->weights = malloc(d->nv * 4 * sizeof *d->weights);
    d->tris = malloc(d->nt * 3 * sizeof *d->tris);
    uint32_t *id = malloc((size_t)(n + 1) * (size_t)(n + 1) * sizeof *id);
    if (!d->pos || !d->joints || !d->weights || !d->tris || !id) {
        free(e);
        free(id);
        return 1;
    }
    memcpy(d->pos, s->pos, s->nv * 3 * sizeof *d->pos);
    memcpy(d->joints, s->joints, s->nv * 4 * sizeof *d->joints);
    memcpy(d->weights, s->weights, s->nv * 4 * sizeof *d->weights);
    size_t at = s->nv;
    /* edge points: edge k's point m (1..n-1) from lo toward hi */
    for (size_t k = 0; k < ne; k++) {
        uint32_t lo = (uint32_t)(e[k] >> 32), hi = (uint32_t)e[k];
        for (int m = 1; m < n; m++, at++) {
            float f = (float)m / (float)n;
            for (int c = 0; c < 3; c++)
                d->pos[at * 3 + (size_t)c] = s->pos[lo * 3 + (size_t)c] * (1 - f) + s->pos[hi * 3 + (size_t)c] * f;
            uint32_t near = f < 0.5f ? lo : hi;
            memcpy(d->joints + at * 4, s->joints + (size_t)near * 4, 4 * sizeof *d->joints);
            memcpy(d->weights + at * 4, s->weights + (size_t)near * 4, 4 * sizeof *d->weights);
        }
    }
    size_t edge_base = s->nv, tri_out = 0;
#define ID(i, j) id[(size_t)(i) * (size_t)(n + 1) + (size_t)(j)]
    for (size_t t = 0; t < s->nt; t++) {
        const uint32_t *c = s->tris + t * 3; /* A, B, C: P(i, j) = A + i/n (B - A) + j/n (C - A) */
        for (int i = 0; i <= n; i++)
            for (int j = 0; i + j <= n; j++) {
                uint32_t v;
                if (i == 0 && j == 0)
                    v = c[0];
                else if (i == n)
                    v = c[1];
                else if (j == n)
                    v = c[2];
                else if (j == 0 || i == 0 || i + j == n) {
                    uint32_t p = j == 0 ? c[0] : i == 0 ? c[0] : c[1], q = j == 0 ? c[1] : c[2];
                    int m = j == 0 ? i : j; /* steps from p toward q */
                    size_t k = edge_index(e, ne, p, q);
                    int from_lo = p < q ? m : n - m;
                    v = (uint32_t)(edge_base + k * (size_t)(n - 1) + (size_t)(from_lo - 1));
                } else {
                    v = (uint32_t)at++;
                    float fa = 1 - (float)(i + j) / (float)n, fb = (float)i / (float)n, fc = (float)j / (float)n;
                    for (int k = 0; k < 3; k++)
                        d->pos[(size_t)v * 3 + (size_t)k] = fa * s->pos[c[0] * 3 + (size_t)k] +
                                                            fb * s->pos[c[1] * 3 + (size_t)k] +
                                                            fc * s->pos[c[2] * 3 + (size_t)k];
                    uint32_t near = fa >= fb && fa >= fc ? c[0] : fb >= fc ? c[1] : c[2];
                    memcpy(d->joints + (size_t)v * 4, s->joints + (size_t)near * 4, 4 * sizeof *d->joints);
                    memcpy(d->weights + (size_t)v * 4, s->weights + (size_t)near * 4, 4 * sizeof *d->weights);
                }
                ID(i, j) = v;
            }
        for (int i = 0; i < n; i++)
            for (int j = 0; i + j < n; j++) {
                uint32_t *o = d->tris + tri_out * 3;
                o[0] = ID(i, j), o[1] = ID(i + 1, j), o[2] = ID(i, j + 1);
                tri_out++;
                if (i + j < n - 1) {
                    o = d->tris + tri_out * 3;
                    o[0] = ID(i + 1, j), o[1] = ID(i + 1, j + 1), o[2] = ID(i, j + 1);
                    tri_out++;
                }
            }
    }
#undef ID
    free(e);
    free(id);
    return at == d->nv && tri_out == d->nt ? 0 : 1;
}

static void dense_free(dense_mesh *m)
{
    free(m->pos);
    free(m->joints);
    free(m->weights);
    free(m->tris);
}

/* The synthetic `variant` with every skinned primitive subdivided to about
 * `target` vertices in all, its animations removed, saved to path. */
static int write_dense(const char *variant, size_t target, const char *path, size_t *vertices)
{
    tb_doc *doc;
    tb_error err;
    if (tb_synth_build(&doc, variant, NULL, NULL, &err) != TB_OK)
        return 1;
    const tb_gltf *g = tb_doc_gltf(doc);
    size_t total = 0;
    for (int mi = 0; mi < g->mesh_count; mi++)
        for (int pi = 0; pi < g->meshes[mi].primitive_count; pi++) {
            const tb_gltf_primitive *p = &g->meshes[mi].primitives[pi];
            if (p->position >= 0)
                total += g->accessors[p->position].count;
        }
    int n = (int)ceil(sqrt((double)target / (double)(total ? total : 1)));
    n = n < 1 ? 1 : n;
    json_t *meshes = json_object_get(tb_doc_json(doc), "meshes");
    *vertices = 0;
    int rc = 0;
    for (int mi = 0; mi < g->mesh_count && !rc; mi++)
        for (int pi = 0; pi < g->meshes[mi].primitive_count && !rc; pi++) {
            const tb_gltf_primitive *p = &g->meshes[mi].primitives[pi];
            if (p->position < 0 || p->set_count != 1 || p->indices < 0)
                continue;
            dense_mesh s = {0}, d = {0};
            s.nv = g->accessors[p->position].count;
            s.nt = g->accessors[p->indices].count / 3;
            s.pos = malloc(s.nv * 3 * sizeof *s.pos);
            s.weights = malloc(s.nv * 4 * sizeof *s.weights);
            s.joints = malloc(s.nv * 4 * sizeof *s.joints);
            s.tris = malloc(s.nt * 3 * sizeof *s.tris);
            uint32_t *ju = malloc(s.nv * 4 * sizeof *ju);
            rc = !s.pos || !s.weights || !s.joints || !s.tris || !ju ||
                 tb_accessor_read_floats(doc, p->position, s.pos, s.nv * 3, &err) != TB_OK ||
                 tb_accessor_read_floats(doc, p->weights[0], s.weights, s.nv * 4, &err) != TB_OK ||
                 tb_accessor_read_uints(doc, p->joints[0], ju, s.nv * 4, &err) != TB_OK ||
                 tb_accessor_read_uints(doc, p->indices, s.tris, s.nt * 3, &err) != TB_OK;
            for (size_t i = 0; !rc && i < s.nv * 4; i++)
                s.joints[i] = (uint16_t)ju[i];
            free(ju);
            if (!rc)
                rc = subdivide(&d, &s, n);
            if (!rc) {
                json_t *prim = json_array_get(json_object_get(json_array_get(meshes, (size_t)mi), "primitives"), (size_t)pi);
                json_t *attr = json_object();
                json_object_set_new(attr, "POSITION", json_integer(tb_doc_add_accessor(doc, d.pos, d.nv, TB_COMPONENT_FLOAT, "VEC3", 0, 34962)));
                json_object_set_new(attr, "JOINTS_0", json_integer(tb_doc_add_accessor(doc, d.joints, d.nv, TB_COMPONENT_UNSIGNED_SHORT, "VEC4", 0, 34962)));
                json_object_set_new(attr, "WEIGHTS_0", json_integer(tb_doc_add_accessor(doc, d.weights, d.nv, TB_COMPONENT_FLOAT, "VEC4", 0, 34962)));
                json_object_set_new(prim, "attributes", attr); /* normals and UVs dropped */
                json_object_set_new(prim, "indices", json_integer(tb_doc_add_accessor(doc, d.tris, d.nt * 3, TB_COMPONENT_UNSIGNED_INT, "SCALAR", 0, 34963)));
                *vertices += d.nv;
            }
            dense_free(&s);
            dense_free(&d);
        }
    json_object_del(tb_doc_json(doc), "animations");
    if (!rc && (tb_doc_refresh(doc, &err) != TB_OK || tb_doc_save(doc, path, &err) != TB_OK))
        rc = 1;
    if (rc)
        fprintf(stderr, "bench_fix: dense %s: %s\n", variant, err.message);
    tb_doc_free(doc);
    return rc;
}

static int part1(const char *tailbone, const char *shared, const char *jobs, int runs)
{
    if (access(tailbone, X_OK) != 0) {
        printf("bench_fix: %s not found: the CLI job against copy skipped\n", tailbone);
        return 0;
    }
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char wolf[1024], soldier[1024], lib[1024], dense[1024];
    snprintf(wolf, sizeof wolf, "%s/corpus/characters/banter_Wolf.glb", shared);
    snprintf(soldier, sizeof soldier, "%s/corpus/clips/threejs_Soldier_rexport.glb", shared);
    snprintf(lib, sizeof lib, "%s/bench_fix_lib_%d.glb", tmp, (int)getpid());
    snprintf(dense, sizeof dense, "%s/bench_fix_dense_%d.glb", tmp, (int)getpid());
    printf("bench_fix: the CLI job against `tailbone copy` (child processes, %d interleaved rounds: time, the "
           "median of each round's fix / copy; peak RSS, largest)\n", runs);
    int rc = 0;
    if (access(wolf, R_OK) == 0 && access(soldier, R_OK) == 0)
        rc |= job_vs_copy("Wolf + Soldier's 4 clips", tailbone, wolf, soldier, jobs, runs, tmp);
    else
        printf("bench_fix: %s or %s not found, Wolf skipped\n", wolf, soldier);
    int dense_runs = getenv("BENCH_FIX_DENSE_RUNS") ? atoi(getenv("BENCH_FIX_DENSE_RUNS")) : 3;
    if (dense_runs <= 0)
        return rc;
    tb_doc *l;
    tb_error err;
    size_t nv = 0;
    if (tb_synth_build(&l, "tail_leg", NULL, NULL, &err) != TB_OK || tb_doc_save(l, lib, &err) != TB_OK)
        return 1;
    tb_doc_free(l);
    if (write_dense("tail_leg", 750000, dense, &nv))
        return 1;
    char label[64];
    snprintf(label, sizeof label, "dense tail_leg %zuk + 6 clips", nv / 1000);
    rc |= job_vs_copy(label, tailbone, dense, lib, jobs, dense_runs < runs ? dense_runs : runs, tmp);
    if (getenv("BENCH_FIX_KEEP")) /* keep the dense character and the library for a profile */
        printf("bench_fix: kept %s and %s\n", dense, lib);
    else
        remove(dense), remove(lib);
    return rc;
}

/* ---- part 2 ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1)
        runs = 1;
    char self_dir[1024] = ".", tb_default[1100];
    const char *slash = strrchr(argv[0], '/');
    if (slash)
        snprintf(self_dir, sizeof self_dir, "%.*s", (int)(slash - argv[0]), argv[0]);
    snprintf(tb_default, sizeof tb_default, "%s/tailbone", self_dir);
    const char *tailbone = argc > 2 ? argv[2] : tb_default, *shared = argc > 3 ? argv[3] : "../shared";
    const char *jobs = getenv("BENCH_FIX_JOBS") ? getenv("BENCH_FIX_JOBS") : "1,2"; /* -j values, interleaved */
    int rc = part1(tailbone, shared, jobs, runs);
    if (getenv("BENCH_FIX_PART1_ONLY"))
        return rc;
    printf("bench_fix: tb_fix_run, 6 clips (9.3 s), best of %d; times in ms, summed over attempts\n", runs);
    printf("%-16s %-7s %6s %8s %8s %8s %8s %8s %9s\n", "character", "zone", "verts", "attempts", "repair", "bake",
           "measure", "copies", "total");
    rc |= run("tail_leg", 0, runs);
    rc |= run("tail_hips", 0, runs);
    rc |= run("tail_leg", 0.25f, runs);
    return rc;
}
