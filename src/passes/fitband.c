/* Band weights fitted to the baked poses (fix's last try; docs/fix.md,
 * "Fitted to the poses", session 18).
 *
 * The chain's motion does not depend on the skin weights, so once the
 * clips are baked a vertex's skinned position at each measured instant is
 * linear in its weights: p_v(t) = sum_q w_q S_q(t) x_v, S_q the skin
 * matrix of joint q. The repaired vertices at a torn edge and a few rings
 * around them (never past the weight plan's own vertices: the body's skin
 * stays as rigged) are refitted in turn, Gauss-Seidel: each gets the
 * weights (>= 0, summing to 1, at most four, candidates its own joints and
 * its neighbours') that put it, at every instant of every clip, nearest
 * the points at its bind distance from each neighbour — least squares, each
 * sample counted more the further its edge is from its bind length
 * (1 + 30 d^6, d = |ln ratio| / ln 1.5: a smooth stand-in for the worst
 * edge, since a sample past 1.5 tears whatever the others do). Each new
 * weight set is taken halfway (a full step overshoots where two fitted
 * neighbours pull each other). After each sweep the torn samples of every
 * edge at a fitted vertex are counted; the sweep with fewest (then with the
 * smallest worst stretch) is returned. The caller (fix.c, tb__fit_weights)
 * measures the result as any try of the search is measured, and keeps it
 * only when it tears less. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/tbmath.h"
#include "tailbone/measure.h"
#include "tailbone/runtime.h"
#include "weights_internal.h"

enum {
    TB__FIT_CAND = 24,     /* candidate joints a vertex (its own and its neighbours') */
    TB__FIT_RINGS = 4,     /* rings of plan vertices around the torn edges' ends */
    TB__FIT_SWEEPS = 12,
    TB__FIT_KEEP = 4       /* joints a fitted vertex keeps (JOINTS_0) */
};
#define TB__FIT_GAIN 30.0
#define TB__FIT_POWER 6.0
#define TB__FIT_DAMP 0.5f

typedef struct tb__fit {
    const tb_model *M;
    int n, J, I;
    size_t V;
    float ws;              /* world units per bind unit */
    tb_measure_desc md;    /* what tb_measure_clip measures by default: its instants, torn bounds,
                              degenerate edges (tb_measure_desc_defaults) */
    float (*mats)[16];     /* n × instants × J skin matrices */
    /* the working set: fitted vertices first (nf), then their other neighbours */
    size_t nf, nw;
    size_t *verts;         /* working index → model vertex */
    size_t *at;            /* model vertex → working index + 1 (0: not in the set) */
    size_t *adj_off, *adj; /* fitted vertex f's neighbours (working indices), with */
    float *adj_len;        /* their bind lengths */
    float *pos;            /* n × instants × nw × 3: skinned with the current weights */
} tb__fit;

static void tb__fit_free(tb__fit *f)
{
    free(f->mats);
    free(f->verts);
    free(f->at);
    free(f->adj_off);
    free(f->adj);
    free(f->adj_len);
    free(f->pos);
}

/* Point x skinned wholly to joint q by matrix set `mats` (tb_skin_points'
 * own arithmetic). */
static void tb__rigid(float out[3], const float *x, uint16_t q, const float (*mats)[16])
{
    float one = 1;
    tb_skin_points(out, 3, x, 3, 1, &q, &one, 1, mats, 0);
}

static const float (*tb__mats_at(const tb__fit *f, int c, int t))[16]
{
    return (const float(*)[16])f->mats + ((size_t)c * f->md.instants + (size_t)t) * (size_t)f->J;
}

static float *tb__pos_at(const tb__fit *f, int c, int t, size_t w)
{
    return f->pos + (((size_t)c * f->md.instants + (size_t)t) * f->nw + w) * 3;
}

/* The skin matrices of every instant that tb_measure_clip measures. */
static int tb__fit_poses(tb__fit *f, const tb_clip *const *clips, const int *loops)
{
    const tb_model *M = f->M;
    size_t nj = (size_t)M->skel.joint_count;
    f->mats = malloc((size_t)f->n * f->md.instants * (size_t)f->J * sizeof *f->mats + 1);
    tb_transform *locals = malloc(nj * sizeof *locals + 1);
    float(*world)[16] = malloc(nj * sizeof *world + 1);
    int ok = f->mats && locals && world;
    for (int c = 0; ok && c < f->n; c++) {
        float dur = clips[c]->duration_s > 0 ? clips[c]->duration_s : 0;
        float step = loops[c] ? dur / (float)f->md.instants : dur / (float)(f->md.instants - 1);
        for (int t = 0; t < f->md.instants; t++) {
            tb_clip_sample(clips[c], &M->skel, (float)t * step, locals);
            tb_local_to_world(&M->skel, locals, NULL, world);
            tb_skin_matrices((float(*)[16])tb__mats_at(f, c, t), (const float(*)[16])world, M->skin_joints,
                             (const float(*)[16])M->inverse_bind, (size_t)f->J);
        }
    }
    free(locals);
    free(world);
    return ok;
}

/* Vertex v skinned with jo/wo into every instant's working slot w. */
static void tb__fit_skin(tb__fit *f, size_t w, size_t v, const uint16_t *jo, const float *wo)
{
    for (int c = 0; c < f->n; c++)
        for (int t = 0; t < f->md.instants; t++)
            tb_skin_points(tb__pos_at(f, c, t, w), 3, f->M->positions + v * 3, 3, 1, jo + v * (size_t)f->I,
                           wo + v * (size_t)f->I, f->I, tb__mats_at(f, c, t), 0);
}

/* Torn samples on the edges at the fitted vertices (each edge once);
 * *worst: the largest |ln ratio| among them. */
static size_t tb__fit_torn(const tb__fit *f, float *worst)
{
    size_t torn = 0;
    *worst = 0;
    for (size_t a = 0; a < f->nf; a++)
        for (size_t e = f->adj_off[a]; e < f->adj_off[a + 1]; e++) {
            size_t b = f->adj[e];
            if (b < f->nf && b < a)
                continue; /* counted from b */
            float bl = f->adj_len[e] * f->ws;
            for (int c = 0; c < f->n; c++)
                for (int t = 0; t < f->md.instants; t++) {
                    float l = tb__dist3(tb__pos_at(f, c, t, a), tb__pos_at(f, c, t, b)) / bl, dev = fabsf(logf(l));
                    torn += l > f->md.torn_above || l < f->md.torn_below;
                    *worst = dev > *worst ? dev : *worst;
                }
        }
    return torn;
}

static void tb__simplex_project(float *w, int k)
{
    float u[TB__FIT_CAND], css = 0, theta = 0;
    memcpy(u, w, (size_t)k * sizeof *u);
    for (int a = 1; a < k; a++) /* descending */
        for (int b = a; b > 0 && u[b] > u[b - 1]; b--) {
            float x = u[b];
            u[b] = u[b - 1], u[b - 1] = x;
        }
    for (int a = 0; a < k; a++) {
        css += u[a];
        float t = (css - 1) / (float)(a + 1);
        if (u[a] - t > 0)
            theta = t;
    }
    for (int a = 0; a < k; a++)
        w[a] = w[a] - theta > 0 ? w[a] - theta : 0;
}

/* min ½ w'Gw − h'w over the simplex, from w (projected gradient, step
 * 1 / trace G). */
static void tb__simplex_lsq(const double *G, const double *h, float *w, int k)
{
    double L = 0;
    for (int a = 0; a < k; a++)
        L += G[a * k + a];
    if (!(L > 0))
        return;
    for (int it = 0; it < 2000; it++) {
        float nw[TB__FIT_CAND], d = 0;
        for (int a = 0; a < k; a++) {
            double g = -h[a];
            for (int b = 0; b < k; b++)
                g += G[a * k + b] * w[b];
            nw[a] = (float)(w[a] - g / L);
        }
        tb__simplex_project(nw, k);
        for (int a = 0; a < k; a++) {
            float x = fabsf(nw[a] - w[a]);
            d = x > d ? x : d;
            w[a] = nw[a];
        }
        if (d < 1e-7f)
            break;
    }
}

/* The candidates of fitted vertex a: joints with weight on it or a
 * neighbour, in order of first appearance. */
static int tb__fit_candidates(const tb__fit *f, size_t a, const uint16_t *jo, const float *wo, uint16_t *cand)
{
    int k = 0;
    for (size_t e = f->adj_off[a]; e <= f->adj_off[a + 1]; e++) {
        size_t v = f->verts[e < f->adj_off[a + 1] ? f->adj[e] : a];
        for (int z = 0; z < f->I && k < TB__FIT_CAND; z++) {
            size_t i = v * (size_t)f->I + (size_t)z;
            int dup = 0;
            for (int x = 0; x < k; x++)
                dup |= cand[x] == jo[i];
            if (wo[i] > 0 && !dup && jo[i] < f->J)
                cand[k++] = jo[i];
        }
    }
    return k;
}

/* The normal equations of fitted vertex a over every neighbour, instant
 * and clip (G: k × k, h: k). */
static void tb__fit_system(const tb__fit *f, size_t a, const uint16_t *cand, int k, double *G, double *h)
{
    const float *x = f->M->positions + f->verts[a] * 3;
    memset(G, 0, (size_t)k * (size_t)k * sizeof *G);
    memset(h, 0, (size_t)k * sizeof *h);
    for (int c = 0; c < f->n; c++)
        for (int t = 0; t < f->md.instants; t++) {
            const float(*mats)[16] = tb__mats_at(f, c, t);
            float P[TB__FIT_CAND][3];
            for (int q = 0; q < k; q++)
                tb__rigid(P[q], x, cand[q], mats);
            const float *pa = tb__pos_at(f, c, t, a);
            for (size_t e = f->adj_off[a]; e < f->adj_off[a + 1]; e++) {
                const float *pb = tb__pos_at(f, c, t, f->adj[e]);
                float bl = f->adj_len[e] * f->ws, d[3] = {pa[0] - pb[0], pa[1] - pb[1], pa[2] - pb[2]};
                float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                if (!(len > 1e-12f))
                    continue;
                double dev = fabs(log((double)len / bl)) / log((double)f->md.torn_above);
                double wt = (1.0 + TB__FIT_GAIN * pow(dev, TB__FIT_POWER)) / ((double)bl * bl);
                float tgt[3]; /* the point at bind distance from b, along the edge as it is */
                for (int i = 0; i < 3; i++)
                    tgt[i] = pb[i] + d[i] * (bl / len);
                for (int q = 0; q < k; q++) {
                    h[q] += wt * ((double)P[q][0] * tgt[0] + (double)P[q][1] * tgt[1] + (double)P[q][2] * tgt[2]);
                    for (int r = 0; r <= q; r++) {
                        double g = wt * ((double)P[q][0] * P[r][0] + (double)P[q][1] * P[r][1] + (double)P[q][2] * P[r][2]);
                        G[q * k + r] += g;
                        if (r != q)
                            G[r * k + q] += g;
                    }
                }
            }
        }
}

/* Fitted vertex a's new weights: the fit on every candidate, the largest
 * four fitted again alone, taken halfway from its current ones, then
 * written into jo/wo (the first slots; the others zero). */
static void tb__fit_vertex(tb__fit *f, size_t a, uint16_t *jo, float *wo)
{
    uint16_t cand[TB__FIT_CAND];
    int k = tb__fit_candidates(f, a, jo, wo, cand);
    if (k < 1 || f->adj_off[a + 1] == f->adj_off[a])
        return;
    double G[TB__FIT_CAND * TB__FIT_CAND], h[TB__FIT_CAND];
    tb__fit_system(f, a, cand, k, G, h);
    size_t v = f->verts[a], I = (size_t)f->I;
    float w[TB__FIT_CAND] = {0}, old[TB__FIT_CAND] = {0};
    for (size_t z = 0; z < I; z++)
        for (int q = 0; q < k; q++)
            if (wo[v * I + z] > 0 && jo[v * I + z] == cand[q])
                old[q] += wo[v * I + z];
    memcpy(w, old, sizeof w);
    tb__simplex_project(w, k);
    tb__simplex_lsq(G, h, w, k);
    int idx[TB__FIT_CAND], m = 0;
    for (int pick = 0; pick < TB__FIT_KEEP; pick++) { /* the largest four, in candidate order */
        int best = -1;
        for (int q = 0; q < k; q++) {
            int taken = 0;
            for (int x = 0; x < m; x++)
                taken |= idx[x] == q;
            if (!taken && w[q] > 1e-6f && (best < 0 || w[q] > w[best]))
                best = q;
        }
        if (best >= 0)
            idx[m++] = best;
    }
    if (m == 0)
        return;
    if (m < k) {
        double G2[TB__FIT_KEEP * TB__FIT_KEEP], h2[TB__FIT_KEEP];
        float w2[TB__FIT_KEEP];
        for (int q = 0; q < m; q++) {
            h2[q] = h[idx[q]], w2[q] = w[idx[q]];
            for (int r = 0; r < m; r++)
                G2[q * m + r] = G[idx[q] * k + idx[r]];
        }
        tb__simplex_project(w2, m);
        tb__simplex_lsq(G2, h2, w2, m);
        memset(w, 0, sizeof w);
        for (int q = 0; q < m; q++)
            w[idx[q]] = w2[q];
    }
    float sum = 0;
    int nz = 0;
    for (int q = 0; q < k; q++) {
        w[q] = old[q] + TB__FIT_DAMP * (w[q] - old[q]);
        w[q] = w[q] < 1e-4f ? 0 : w[q];
        sum += w[q];
        nz += w[q] > 0;
    }
    while (nz > TB__FIT_KEEP) { /* the halfway mix may hold a fifth: the smallest goes */
        int small = -1;
        for (int q = 0; q < k; q++)
            if (w[q] > 0 && (small < 0 || w[q] < w[small]))
                small = q;
        sum -= w[small], w[small] = 0, nz--;
    }
    if (!(sum > 0))
        return;
    size_t z = 0;
    for (size_t s = 0; s < I; s++)
        jo[v * I + s] = 0, wo[v * I + s] = 0;
    for (int q = 0; q < k && z < I; q++)
        if (w[q] > 0)
            jo[v * I + z] = cand[q], wo[v * I + z] = w[q] / sum, z++;
    tb__fit_skin(f, a, v, jo, wo);
}

/* The working set: the plan's vertices at an edge torn with jo/wo, grown
 * TB__FIT_RINGS rings inside the plan's vertices, then their neighbours. */
static int tb__fit_select(tb__fit *f, const uint64_t *edges, size_t ne, const uint8_t *allowed, const uint16_t *jo,
                          const float *wo)
{
    const tb_model *M = f->M;
    size_t V = f->V;
    uint8_t *sel = calloc(V + 1, 1);
    size_t *deg = calloc(V + 2, sizeof *deg), *nb = malloc(2 * ne * sizeof *nb + 1);
    float *skinned = malloc(V * 3 * sizeof *skinned + 1);
    f->at = calloc(V + 1, sizeof *f->at);
    if (!sel || !deg || !nb || !skinned || !f->at) {
        free(sel), free(deg), free(nb), free(skinned);
        return 0;
    }
    for (size_t e = 0; e < ne; e++)
        deg[(edges[e] >> 32) + 2]++, deg[(edges[e] & 0xffffffffu) + 2]++;
    for (size_t v = 0; v < V; v++)
        deg[v + 2] += deg[v + 1];
    for (size_t e = 0; e < ne; e++) { /* deg[v + 1]: the next free slot of v, then v's end */
        size_t a = edges[e] >> 32, b = edges[e] & 0xffffffffu;
        nb[deg[a + 1]++] = b, nb[deg[b + 1]++] = a;
    }
    /* the ends of edges torn at some instant, inside the plan */
    for (int c = 0; c < f->n; c++)
        for (int t = 0; t < f->md.instants; t++) {
            tb_skin_points(skinned, 3, M->positions, 3, V, jo, wo, f->I, tb__mats_at(f, c, t), 0);
            for (size_t e = 0; e < ne; e++) {
                size_t a = edges[e] >> 32, b = edges[e] & 0xffffffffu;
                float bl = tb__dist3(M->positions + a * 3, M->positions + b * 3);
                if (bl < f->md.degenerate_h * M->height || (!allowed[a] && !allowed[b]))
                    continue;
                float l = tb__dist3(skinned + a * 3, skinned + b * 3) / (bl * f->ws);
                if (l > f->md.torn_above || l < f->md.torn_below)
                    sel[a] |= allowed[a], sel[b] |= allowed[b];
            }
        }
    free(skinned);
    for (int ring = 0; ring < TB__FIT_RINGS; ring++) {
        for (size_t v = 0; v < V; v++)
            if (sel[v] == 1)
                for (size_t q = deg[v]; q < deg[v + 1]; q++)
                    if (allowed[nb[q]] && !sel[nb[q]])
                        sel[nb[q]] = 2;
        for (size_t v = 0; v < V; v++)
            sel[v] = sel[v] ? 1 : 0;
    }
    size_t nf = 0, nw = 0;
    for (size_t v = 0; v < V; v++)
        if (sel[v])
            f->at[v] = ++nf;
    nw = nf;
    for (size_t v = 0; v < V; v++)
        for (size_t q = deg[v]; sel[v] && q < deg[v + 1]; q++)
            if (!f->at[nb[q]])
                f->at[nb[q]] = ++nw;
    f->nf = nf, f->nw = nw;
    f->verts = malloc(nw * sizeof *f->verts + 1);
    f->adj_off = calloc(nf + 1, sizeof *f->adj_off);
    size_t na = 0;
    for (size_t v = 0; v < V; v++)
        na += sel[v] ? deg[v + 1] - deg[v] : 0;
    f->adj = malloc(na * sizeof *f->adj + 1);
    f->adj_len = malloc(na * sizeof *f->adj_len + 1);
    f->pos = malloc((size_t)f->n * f->md.instants * nw * 3 * sizeof *f->pos + 1);
    int ok = f->verts && f->adj_off && f->adj && f->adj_len && f->pos;
    for (size_t v = 0; ok && v < V; v++)
        if (f->at[v])
            f->verts[f->at[v] - 1] = v;
    na = 0;
    for (size_t a = 0; ok && a < nf; a++) {
        size_t v = f->verts[a];
        f->adj_off[a] = na;
        for (size_t q = deg[v]; q < deg[v + 1]; q++) {
            float bl = tb__dist3(M->positions + v * 3, M->positions + nb[q] * 3);
            if (bl < f->md.degenerate_h * M->height)
                continue;
            f->adj[na] = f->at[nb[q]] - 1;
            f->adj_len[na++] = bl;
        }
    }
    if (ok)
        f->adj_off[nf] = na;
    for (size_t w = 0; ok && w < nw; w++)
        tb__fit_skin(f, w, f->verts[w], jo, wo);
    free(sel), free(deg), free(nb);
    return ok;
}

tb_result tb__fit_band(const tb_model *M, const tb_clip *const *clips, const int *loops, int n, const uint64_t *edges,
                       size_t ne, const uint8_t *allowed, uint16_t *jo, float *wo, size_t *fitted, tb_error *err)
{
    *fitted = 0;
    if (!M || n < 1 || !clips || !loops || !allowed || !jo || !wo || M->influences < TB__FIT_KEEP)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb__fit_band: a model, its baked clips and weights are required");
    tb__fit f;
    memset(&f, 0, sizeof f);
    f.M = M, f.n = n, f.J = M->skin_joint_count, f.I = M->influences, f.V = M->vertex_count;
    f.ws = tb_model_world_scale(M);
    f.md = tb_measure_desc_defaults(NULL);
    if (!(f.ws > 0))
        return TB_OK;
    if (!tb__fit_poses(&f, clips, loops) || !tb__fit_select(&f, edges, ne, allowed, jo, wo)) {
        tb__fit_free(&f);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    float worst = 0;
    size_t I = (size_t)f.I, best = tb__fit_torn(&f, &worst);
    uint16_t *bj = malloc(f.nf * I * sizeof *bj + 1);
    float *bw = malloc(f.nf * I * sizeof *bw + 1);
    if (!bj || !bw) {
        free(bj), free(bw);
        tb__fit_free(&f);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (size_t a = 0; a < f.nf; a++) { /* the weights to beat: as given */
        memcpy(bj + a * I, jo + f.verts[a] * I, I * sizeof *bj);
        memcpy(bw + a * I, wo + f.verts[a] * I, I * sizeof *bw);
    }
    int kept = 0;
    for (int sweep = 0; sweep < TB__FIT_SWEEPS && best + worst > 0; sweep++) {
        for (size_t a = 0; a < f.nf; a++)
            tb__fit_vertex(&f, a, jo, wo);
        float w = 0;
        size_t torn = tb__fit_torn(&f, &w);
        if (torn < best || (torn == best && w < worst)) { /* fewer torn, then a smaller worst */
            best = torn, worst = w, kept = 1;
            for (size_t a = 0; a < f.nf; a++) {
                memcpy(bj + a * I, jo + f.verts[a] * I, I * sizeof *bj);
                memcpy(bw + a * I, wo + f.verts[a] * I, I * sizeof *bw);
            }
        }
    }
    for (size_t a = 0; a < f.nf; a++) { /* the best sweep's (or the given weights) */
        memcpy(jo + f.verts[a] * I, bj + a * I, I * sizeof *bj);
        memcpy(wo + f.verts[a] * I, bw + a * I, I * sizeof *bw);
    }
    *fitted = kept ? f.nf : 0;
    free(bj), free(bw);
    tb__fit_free(&f);
    return TB_OK;
}
