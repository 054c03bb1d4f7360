/* One fixture of test_fix_bar, read per edge (docs/fix.md, session 15).
 *
 * Runs `tb_fix_run` with the defaults on `synth --onto BODY --fixture NAME`
 * (BODY: synth, Xbot, Soldier or Robot, with test_fix_bar's clips), marks
 * the repaired vertices as test_fix_bar does (any joint weight, by name,
 * changed), measures every clip on the input and the output with that mask,
 * and prints per clip the honest groups' torn samples, then (verbose >= 1)
 * every edge with a repaired end that tears in the output — its bind length,
 * its ratio range and torn instants in the output and in the input — and
 * (verbose >= 2) both ends' weights in and out. Environment: VTX=v lists
 * every edge at vertex v instead; BAND=b pins the collar band (segments);
 * ONLY=a,b,... bakes those clips instead; DECOMP=1 splits each torn edge's
 * change by joint (decomp below); DUMP=file writes one instant's skinned
 * positions (dump below).
 *
 * Build (after `make -C build tailbone_offline`), from build/:
 *   gcc -O2 -std=c11 -Wall -Wextra -D_POSIX_C_SOURCE=200809L -DCGLM_ALL_UNALIGNED \
 *     -DTB_SOURCE_DIR=\"$PWD/..\" -DTB_CLI_PATH=\"x\" -I../src -I../tests -I../include \
 *     ../scripts/welded_edges.c ../tests/support.c ../tests/model_cmp.c -o welded_edges \
 *     libtailbone_offline.a -lcmocka libtailbone_runtime.a -ljansson -lm \
 *     -lmeshoptimizer -ldraco -lstdc++
 * Run: TB_SHARED_DIR=/work/shared ./welded_edges Soldier hang_welded_nearest 2 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_cmp.h"
#include "support.h"
#include "tailbone/clip.h"
#include "tailbone/fix.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"
#include "tailbone/synth.h"

#define INSTANTS 24

static void print_weights(const tb_model *m, size_t v)
{
    for (int k = 0; k < m->influences; k++) {
        size_t i = v * (size_t)m->influences + (size_t)k;
        if (m->weights[i] > 0.0005f)
            printf(" %s %.3f", m->skel.names[m->skin_joints[m->joints[i]]], m->weights[i]);
    }
}

static float ratio(const float *pos, size_t V, int k, size_t a, size_t b, float ws, float bl)
{
    const float *x = pos + ((size_t)k * V + a) * 3, *y = pos + ((size_t)k * V + b) * 3;
    float dx = x[0] - y[0], dy = x[1] - y[1], dz = x[2] - y[2];
    return sqrtf(dx * dx + dy * dy + dz * dz) / ws / bl;
}

typedef struct job {
    tb_model *mi, *mo;
    uint8_t *mask;
    uint64_t *edges;
    size_t ne;
    int verbose;
    long vtx;
} job;

/* The torn edges of one clip (positions of input and output). */
static void clip_edges(const job *j, const char *clip, float *const pos[2], float ws)
{
    size_t V = j->mo->vertex_count;
    for (size_t e = 0; e < j->ne; e++) {
        size_t a = j->edges[e] >> 32, b = j->edges[e] & 0xffffffffu;
        if (j->vtx >= 0 ? (a != (size_t)j->vtx && b != (size_t)j->vtx) : (!j->mask[a] && !j->mask[b]))
            continue;
        const float *pa = j->mo->positions + a * 3, *pb = j->mo->positions + b * 3;
        float dx = pa[0] - pb[0], dy = pa[1] - pb[1], dz = pa[2] - pb[2], bl = sqrtf(dx * dx + dy * dy + dz * dz);
        if (bl < 1e-6f * j->mo->height)
            continue;
        int torn[2] = {0, 0};
        float lo[2] = {INFINITY, INFINITY}, hi[2] = {0, 0};
        for (int k = 0; k < INSTANTS; k++)
            for (int s = 0; s < 2; s++) {
                float l = ratio(pos[s], V, k, a, b, ws, bl);
                torn[s] += l > 1.5f || l < 0.67f;
                lo[s] = fminf(lo[s], l), hi[s] = fmaxf(hi[s], l);
            }
        if (!torn[1] && j->vtx < 0)
            continue;
        printf("  %s %zu-%zu (%.4f H) %s: %.2f-%.2f torn %d; input %.2f-%.2f torn %d\n", clip, a, b,
               bl / j->mo->height, j->mask[a] && j->mask[b] ? "repaired/repaired" : j->mask[a] || j->mask[b] ? "repaired/body" : "body",
               lo[1], hi[1], torn[1], lo[0], hi[0], torn[0]);
        for (int s = 0; s < 2 && j->verbose > 1; s++) {
            size_t v = s ? b : a;
            printf("    %zu in:", v);
            print_weights(j->mi, v);
            printf(" | out:");
            print_weights(j->mo, v);
            printf("\n");
        }
    }
}

/* Every vertex skinned wholly to skin joint q at the clip's instants (oj, ow:
 * the caller's scratch of V * influences). */
static float *rigid_positions(tb_model *mo, const tb_clip *clip, int loop, int q, uint16_t *oj, float *ow)
{
    size_t V = mo->vertex_count;
    int I = mo->influences;
    float *P = malloc(INSTANTS * V * 3 * sizeof(float));
    for (size_t v = 0; v < V; v++)
        for (int z = 0; z < I; z++)
            oj[v * (size_t)I + (size_t)z] = (uint16_t)q, ow[v * (size_t)I + (size_t)z] = z ? 0 : 1;
    tb_measure_desc md;
    memset(&md, 0, sizeof md);
    md.loop = loop, md.joints = oj, md.weights = ow, md.positions_out = P;
    tb_measure_result r;
    tb_error err = {0};
    tb_measure_clip(&r, mo, clip, &md, &err);
    return P;
}

/* DECOMP=1: each torn edge with a repaired end, at its worst instant, its
 * length change split by joint: with P_j(x) the point skinned wholly to j,
 * d_j = P_j − P_parent, the edge's change from the parent's rigid motion is
 * Σ_j w_j(a) d_j(a) − w_j(b) d_j(b); printed per joint along the edge, as a
 * share of the bind length (the linear part of the ratio's change). */
static void decomp(const job *j, const tb_doc *out, const tb_fix_report *rep, int c, const float *pos, float ws)
{
    tb_model *mo = j->mo;
    size_t V = mo->vertex_count;
    int I = mo->influences, J = mo->skin_joint_count, loop = 0, anim = rep->stretch[c].animation;
    for (int k = 0; k < rep->bake.clip_count; k++)
        if (rep->bake.clips[k].animation == anim)
            loop = rep->bake.clips[k].looping;
    float **P = calloc((size_t)J, sizeof *P);
    uint16_t *oj = calloc(V * (size_t)I, sizeof *oj);
    float *ow = calloc(V * (size_t)I, sizeof *ow);
    tb_error err = {0};
    tb_clip *clip = NULL;
    tb_clip_load(&clip, out, mo, anim, NULL, &err);
    int parent = -1;
    for (int q = 0; q < J; q++)
        if (strstr(mo->skel.names[mo->skin_joints[q]], "Hips"))
            parent = q;
    for (size_t e = 0; e < j->ne; e++) {
        size_t a = j->edges[e] >> 32, b = j->edges[e] & 0xffffffffu;
        if (!j->mask[a] && !j->mask[b])
            continue;
        const float *pa = mo->positions + a * 3, *pb = mo->positions + b * 3;
        float bl = sqrtf((pa[0] - pb[0]) * (pa[0] - pb[0]) + (pa[1] - pb[1]) * (pa[1] - pb[1]) + (pa[2] - pb[2]) * (pa[2] - pb[2]));
        if (bl < 1e-6f * mo->height)
            continue;
        int worst = -1;
        float dev = 0;
        for (int k = 0; k < INSTANTS; k++) {
            float l = ratio(pos, V, k, a, b, ws, bl);
            if ((l > 1.5f || l < 0.67f) && fabsf(logf(l)) > dev)
                dev = fabsf(logf(l)), worst = k;
        }
        if (worst < 0)
            continue;
        printf("    decomp %zu-%zu instant %d ratio %.2f:", a, b, worst, ratio(pos, V, worst, a, b, ws, bl));
        size_t ends[2] = {a, b};
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < I; k++) {
                int q = mo->joints[ends[s] * (size_t)I + (size_t)k];
                if (mo->weights[ends[s] * (size_t)I + (size_t)k] > 0 && !P[q])
                    P[q] = rigid_positions(mo, clip, loop, q, oj, ow);
            }
        if (parent >= 0 && !P[parent])
            P[parent] = rigid_positions(mo, clip, loop, parent, oj, ow);
        const float *H = P[parent] + (size_t)worst * V * 3;
        float eh[3], n = 0;
        for (int x = 0; x < 3; x++)
            eh[x] = H[a * 3 + (size_t)x] - H[b * 3 + (size_t)x], n += eh[x] * eh[x];
        n = sqrtf(n);
        for (int q = 0; q < J; q++) {
            float wa = 0, wb = 0;
            for (int k = 0; k < I; k++) {
                wa += mo->joints[a * (size_t)I + (size_t)k] == q ? mo->weights[a * (size_t)I + (size_t)k] : 0;
                wb += mo->joints[b * (size_t)I + (size_t)k] == q ? mo->weights[b * (size_t)I + (size_t)k] : 0;
            }
            if (q == parent || (wa <= 0 && wb <= 0))
                continue;
            const float *Q = P[q] + (size_t)worst * V * 3;
            float t = 0;
            for (int x = 0; x < 3; x++)
                t += (wa * (Q[a * 3 + (size_t)x] - H[a * 3 + (size_t)x]) - wb * (Q[b * 3 + (size_t)x] - H[b * 3 + (size_t)x])) *
                     eh[x] / n;
            const char *nm = mo->skel.names[mo->skin_joints[q]];
            printf(" %s %.3f/%.3f %+.2f", strncmp(nm, "mixamorig:", 10) ? nm : nm + 10, wa, wb, t / ws / bl);
        }
        printf("\n");
    }
    for (int q = 0; q < J; q++)
        free(P[q]);
    free(P), free(oj), free(ow);
    tb_clip_free(clip);
}

/* DUMP=file (with DUMPCLIP=name, DUMPK=instant, default 8): the skinned
 * positions of input and output at that instant (world units), the
 * triangles and the repaired mask, as JSON, for a throw-away picture
 * (scripts/skinned_picture.py). */
static void dump(const job *j, const char *clip, float *const pos[2])
{
    const char *path = getenv("DUMP"), *want = getenv("DUMPCLIP");
    int k = getenv("DUMPK") ? atoi(getenv("DUMPK")) : 8;
    if (!path || (want && strcmp(want, clip)) || k < 0 || k >= INSTANTS)
        return;
    size_t V = j->mo->vertex_count;
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "{\"clip\":\"%s\",\"instant\":%d,\"height\":%g,\"pos\":[", clip, k, j->mo->height);
    for (int s = 0; s < 2; s++) {
        fprintf(f, "%s[", s ? "," : "");
        for (size_t v = 0; v < V * 3; v++)
            fprintf(f, "%s%.5g", v ? "," : "", pos[s][(size_t)k * V * 3 + v]);
        fprintf(f, "]");
    }
    fprintf(f, "],\"bind\":[");
    for (size_t v = 0; v < V * 3; v++)
        fprintf(f, "%s%.5g", v ? "," : "", j->mo->positions[v]);
    fprintf(f, "],\"tri\":[");
    for (size_t t = 0; t < j->mo->triangle_count * 3; t++)
        fprintf(f, "%s%u", t ? "," : "", j->mo->triangles[t]);
    fprintf(f, "],\"mask\":[");
    for (size_t v = 0; v < V; v++)
        fprintf(f, "%s%d", v ? "," : "", j->mask[v]);
    fprintf(f, "]}\n");
    fclose(f);
}

static const char *body_clips(const char *label, const char **only)
{
    const char *corpus = NULL;
    if (!strcmp(label, "synth"))
        only[0] = "Walk", only[1] = "Sprint", only[2] = "Crouch";
    else if (!strcmp(label, "Soldier"))
        corpus = "clips/threejs_Soldier_rexport.glb", only[0] = "Walk", only[1] = "Run";
    else if (!strcmp(label, "Xbot"))
        corpus = "clips/Xbot_agree_run_walk.glb", only[0] = "walk", only[1] = "run";
    else
        corpus = "clips/threejs_RobotExpressive.glb", only[0] = "Walking", only[1] = "Running";
    return corpus;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return fprintf(stderr, "usage: welded_edges BODY FIXTURE [verbose]\n"), 2;
    const char *only[4] = {0}, *corpus = body_clips(argv[1], only);
    tb_error err = {0};
    tb_doc *body = NULL, *doc = NULL, *out = NULL;
    tbt_path pb;
    if (corpus ? tb_doc_load(&body, tbt_corpus_file(&pb, corpus), NULL, &err) : tb_synth_build(&body, "plain", NULL, NULL, &err))
        return printf("body: %s\n", err.message), 1;
    if (tb_synth_onto(&doc, body, argv[2], NULL, NULL, &err) != TB_OK)
        return printf("onto: %s\n", err.message), 1;
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    char list[256] = "";
    const char *given[8] = {0};
    if (getenv("ONLY")) { /* a comma-separated list of clips instead */
        snprintf(list, sizeof list, "%s", getenv("ONLY"));
        int k = 0;
        for (char *tok = strtok(list, ","); tok && k < 7; tok = strtok(NULL, ","))
            given[k++] = tok;
    }
    d.only = getenv("ONLY") ? given : only;
    d.repair.collar_band = getenv("BAND") ? (float)atof(getenv("BAND")) : 0;
    tb_fix_report rep;
    if (tb_fix_run(&out, doc, &d, &rep, &err) != TB_OK)
        return printf("fix: %s\n", err.message), 1;
    job j = {0};
    j.verbose = argc > 3 ? atoi(argv[3]) : 0;
    j.vtx = getenv("VTX") ? atol(getenv("VTX")) : -1;
    size_t nrep = 0, total = 0;
    tb_model_load(&j.mi, doc, -1, &err);
    tb_model_load(&j.mo, out, -1, &err);
    j.mask = tbt_repaired_mask(j.mi, j.mo, &nrep);
    j.ne = tb_measure_edges(j.mo, &j.edges);
    size_t V = j.mo->vertex_count;
    float p99 = 0, mx = 0;
    for (int c = 0; c < rep.stretch_count; c++) {
        tb_measure_result r[2];
        float *pos[2] = {malloc(INSTANTS * V * 3 * sizeof(float)), malloc(INSTANTS * V * 3 * sizeof(float))};
        tbt_measure_in_out(doc, out, j.mi, j.mo, &rep, c, j.mask, pos, r);
        const tb_measure_result *m = &rep.stretch[c].result;
        p99 = fmaxf(p99, m->tail.p99), mx = fmaxf(mx, m->tail.max);
        total += r[1].tail.torn + r[1].seam.torn;
        printf("clip %s: SPEC tail p99 %.3f max %.3f torn %zu, seam torn %zu | repaired/repaired torn %zu max %.2f, "
               "repaired/body torn %zu max %.2f (input %zu, %zu) | body %s\n",
               rep.stretch[c].clip, m->tail.p99, m->tail.max, m->tail.torn, m->seam.torn, r[1].tail.torn, r[1].tail.max,
               r[1].seam.torn, r[1].seam.max, r[0].tail.torn, r[0].seam.torn,
               r[0].body.torn == r[1].body.torn && r[0].body.max == r[1].body.max ? "same" : "CHANGED");
        if (j.verbose || j.vtx >= 0)
            clip_edges(&j, rep.stretch[c].clip, pos, r[1].world_scale);
        dump(&j, rep.stretch[c].clip, pos);
        if (getenv("DECOMP"))
            decomp(&j, out, &rep, c, pos[1], r[1].world_scale);
        free(pos[0]), free(pos[1]);
    }
    printf("ROW %s %s: tail p99 %.3f max %.3f | %zu repaired | torn samples, every repaired edge: %zu | zone %.3f band "
           "%.3f fit tried %d kept %d\n",
           argv[1], argv[2], p99, mx, nrep, total, rep.blend_zone, rep.collar_band, rep.solver_fit_tried, rep.solver_fit_kept);
    for (int i = 0; i < rep.zone_try_count; i++) {
        const tb_fix_zone_try *z = &rep.zone_tries[i];
        printf("try %d: zone %.3f band %.3f%s%s%s%s: torn in %d clip(s), worst %.2f%%, tail max %.2f\n", i,
               z->blend_zone, z->collar_band, z->collar_ring ? ", collar ring" : "",
               z->spine_folded ? ", spine folded" : "", z->collar_carried ? ", collar carried" : "",
               z->by_strain ? ", by strain" : "", z->torn_clips,
               100 * z->worst_torn, z->worst_max);
    }
    free(j.mask), free(j.edges);
    tb_model_free(j.mi), tb_model_free(j.mo);
    tb_fix_report_free(&rep);
    tb_doc_free(out), tb_doc_free(doc), tb_doc_free(body);
    return 0;
}
