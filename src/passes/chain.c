/* The offline pass, repair half (SPEC A8 rigid, A9 chain): new tail joints,
 * inverse bind matrices, skin weights, written into the document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__ /* (stdio.h defines it) */
#include <malloc.h> /* malloc_trim */
#endif

#include <cglm/cglm.h>

#include "passes/appendage_internal.h"
#include "passes/detect_internal.h" /* tb__seg_set */
#include "core/base.h"
#include "core/tbmath.h"
#include "gltf/doc_json.h"
#include "passes/weights_internal.h"
#include "tailbone/measure.h"

#define TB__SLOTS 4 /* influences written per reweighted vertex (set 0) */

/* SPEC A9: weights of a vertex at geodesic g on a chain of K bones of length
 * L. bones[] are skin joint indices; returns the influence count (<= 3).
 * zone: half-width of the blend around a joint in segments; the SPEC's
 * w_prev = clamp(0.5 − 2f, 0, 0.5) is zone 0.25, i.e. 0.5·(1 − f/zone). */
static int tb__chain_weights(float g, float L, int K, float zone, int parent_sk, int first_sk, uint16_t j[3],
                             float w[3])
{
    float s = L > 0 ? (float)K * g / L : 0;
    int k = (int)floorf(s);
    float f = s - (float)k;
    if (k < 0) {
        k = 0;
        f = 0;
    }
    if (k >= K) { /* choice: g >= L clamps into the last segment */
        k = K - 1;
        f = 1;
    }
    float wp = 0.5f * (1 - f / zone), wn = 0.5f * (1 - (1 - f) / zone);
    wp = wp < 0 ? 0 : wp > 0.5f ? 0.5f : wp;
    wn = wn < 0 ? 0 : wn > 0.5f ? 0.5f : wn;
    int self = first_sk + k;
    int prev = k == 0 ? parent_sk : self - 1; /* root segment: prev is Hips (the parent) */
    int n = 0;
    if (k == K - 1) { /* Tail_End carries no weight: the next share stays on Tail_K */
        wn = 0;
    }
    float ws = 1 - wp - wn;
    j[n] = (uint16_t)self, w[n++] = ws;
    if (wp > 0)
        j[n] = (uint16_t)prev, w[n++] = wp;
    if (wn > 0)
        j[n] = (uint16_t)(self + 1), w[n++] = wn;
    return n;
}

/* Coordinate along the chain for the weights (SPEC A9, choice). The
 * geodesic g differs around a ring of the tail by up to its radius, and
 * across separately modelled pieces of a segmented tail by more, so two
 * neighbouring vertices at the same place along the tail could land on
 * different bones and tear the edge between them. The vertex is therefore
 * placed at the arc length of its projection onto the chain polyline
 * J_0…J_K (joint i sits at g = iL/K), searched within one segment of its
 * geodesic segment so a tail curling back near itself cannot jump. The
 * collar ring (g = 0) keeps g = 0: the 50/50 parent/Tail_1 blend. */
static float tb__chain_coordinate(float g, float L, int K, const float (*J)[3], const float *p)
{
    if (!(g > 0) || !(L > 0))
        return g;
    int k0 = (int)floorf((float)K * g / L);
    if (k0 > K - 1)
        k0 = K - 1;
    float best_d = INFINITY, best = g;
    for (int k = k0 - 1; k <= k0 + 1; k++) {
        if (k < 0 || k > K - 1)
            continue;
        const float *a = J[k], *b = J[k + 1];
        float ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
        float l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
        float t = l2 > 0 ? (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / l2 : 0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        float q[3] = {a[0] + t * ab[0] - p[0], a[1] + t * ab[1] - p[1], a[2] + t * ab[2] - p[2]};
        float d = q[0] * q[0] + q[1] * q[1] + q[2] * q[2];
        if (d < best_d) {
            best_d = d;
            best = ((float)k + t) * L / (float)K;
        }
    }
    return best;
}

/* Normalised integer weights whose sum is exactly `scale` (largest remainder). */
static void tb__quantize(const float *w, int n, double scale, uint32_t *q)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += w[i] > 0 ? w[i] : 0;
    if (sum <= 0) {
        for (int i = 0; i < n; i++)
            q[i] = 0;
        return;
    }
    double rem[64];
    long total = 0;
    for (int i = 0; i < n; i++) {
        double x = (w[i] > 0 ? w[i] : 0) / sum * scale;
        q[i] = (uint32_t)floor(x);
        rem[i] = x - floor(x);
        total += (long)q[i];
    }
    while (total < (long)scale) {
        int best = 0;
        for (int i = 1; i < n; i++)
            if (rem[i] > rem[best])
                best = i;
        q[best]++;
        rem[best] = -1;
        total++;
    }
}

/* How many primitive attributes anywhere in the document use `accessor`. */
static int tb__accessor_refs(json_t *root, int accessor)
{
    int n = 0;
    size_t i, k;
    json_t *mesh, *prim;
    json_array_foreach(json_object_get(root, "meshes"), i, mesh) {
        json_array_foreach(json_object_get(mesh, "primitives"), k, prim) {
            const char *key;
            json_t *val;
            json_object_foreach(json_object_get(prim, "attributes"), key, val)
                n += json_is_integer(val) && json_integer_value(val) == accessor;
            json_t *t;
            size_t q;
            json_array_foreach(json_object_get(prim, "targets"), q, t) {
                json_object_foreach(t, key, val) n += json_is_integer(val) && json_integer_value(val) == accessor;
            }
        }
    }
    return n;
}

/* What one chain's weights are computed from, kept after the repair so
 * fix's search can weight the chain again for another blend without
 * detecting, transferring or baking again (weights_internal.h). */
typedef struct tb__chain_plan {
    int app;          /* report index */
    size_t n;
    uint32_t *verts;  /* model vertices reweighted (ascending) */
    float *g;         /* geodesic distance from the collar (SPEC A9's g) */
    float *gc;        /* chain coordinate (tb__chain_coordinate) */
    uint16_t *oj;     /* the vertices' own weights before the repair, TB__SLOTS each */
    float *ow;
    float *gb;        /* NULL, or the collar band's distance: g, or nearer the seam (tb__seam_collar) */
    uint32_t *welded; /* welded collar vertices (the ring where the tail joins the body) */
    size_t nwelded;
    uint16_t *cj;     /* their own (body) weights before the repair, TB__SLOTS each */
    float *cw;
    int K;
    float L;
    int skP, sk0;     /* skin joints: the chain's parent, Tail_1 */
    float ring;       /* spacing of the tail's rings along the chain (bind units) */
    float radius;     /* 75th percentile of the skin's distance from the chain polyline */
    int smooth;       /* smooth weights (not one bone per piece) */
    uint32_t *along;  /* the tail's edges along it, pairs of indices into verts */
    size_t nalong;
    uint32_t *nb;     /* welded: the untouched vertices vertex q meets, nb[nbo[q] … nbo[q + 1]) */
    size_t *nbo;
    uint32_t *cseg;   /* welded: the collar's edges, pairs of indices into welded (tb__collar_segments) */
    size_t ncseg;
    uint32_t *cpt;    /* welded: collar vertices on no collar edge, nor where one ends (indices into welded) */
    size_t ncpt;
    float cseg_mean;  /* the collar edges' mean length */
    uint32_t *own;    /* welded: the tail's own edges, pairs of indices into verts (tb__seam_field) */
    size_t nown;
    float ramp_zone;  /* the written weights' steepest ramp as a zone (tb__chain_ramp_zone) */
} tb__chain_plan;

struct tb__weight_plan {
    int skin;         /* the repaired skin (document index) */
    int auto_zone, auto_band; /* 0: the repair pinned the blend zone / collar band */
    int ring;         /* welded bands: 1, collar rings blended halfway (TB__PLAN_COLLAR_RING, tb__weight_plan_variant); 2, the
                         spine folded into the parent (TB__PLAN_SPINE_FOLDED); 4, the collar's own
                         weights carried over the whole band (TB__PLAN_COLLAR_CARRIED); 8, the band
                         read by strain, the cut spread over it (TB__PLAN_BY_STRAIN) */
    int count;
    tb__chain_plan *c;
};

static void tb__chain_plan_clear(tb__chain_plan *c)
{
    free(c->verts);
    free(c->g);
    free(c->gc);
    free(c->gb);
    free(c->oj);
    free(c->ow);
    free(c->welded);
    free(c->cj);
    free(c->cw);
    free(c->along);
    free(c->nb);
    free(c->nbo);
    free(c->cseg);
    free(c->cpt);
    free(c->own);
    memset(c, 0, sizeof *c);
}

void tb__weight_plan_free(tb__weight_plan *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->count; i++)
        tb__chain_plan_clear(&p->c[i]);
    free(p->c);
    free(p);
}

typedef struct tb__apply {
    tb_doc *doc;
    const tb_model *m;
    json_t *root;
    size_t V;
    uint8_t *changed;
    uint16_t *nj; /* TB__SLOTS per vertex */
    float *nw;    /* TB__SLOTS per vertex */
    int max_joint;
    int skipped;  /* reweighted vertices in primitives without JOINTS_n */
    float blend_zone; /* resolved tb_appendage_desc.blend_zone */
    int smooth_pieces;
    float piece_span_max, rigid_body_min, body_single;
    float collar_band; /* segments; 0: no blend at a welded collar */
    /* subset skins (tb_model.joint_maps): per m->skins entry, our joint index
     * → its index (-1: not in it yet), and the count after appending */
    int **local_of_main;
    int *local_count;
    int main_total;    /* our skin joints, new tail joints included */
    int auto_zone, auto_band; /* blend zone / collar band raised by the tail's geometry */
    const uint64_t *edges;    /* the model's edges (tb_measure_edges) */
    size_t edge_count;
    tb__weight_plan *plan;    /* NULL: the chains' plans are dropped after use */
    uint8_t *collar;          /* NULL or V marks: welded collar vertices reweighted */
} tb__apply;

/* Index of our skin joint `j` in the joint list of m->skins[k]: as is for
 * our own list, mapped for a subset skin, appended to it when absent (the
 * new tail joints, or a joint the new weights use that its mesh did not).
 * -1 when out of memory. */
static int tb__local_joint(tb__apply *A, int k, int j)
{
    const tb_model *m = A->m;
    if (!m->joint_maps[k])
        return j;
    if (!A->local_of_main[k]) {
        A->local_of_main[k] = malloc(((size_t)A->main_total + 1) * sizeof(int));
        if (!A->local_of_main[k])
            return -1;
        for (int i = 0; i < A->main_total; i++)
            A->local_of_main[k][i] = -1;
        for (int i = 0; i < m->joint_map_counts[k]; i++)
            A->local_of_main[k][m->joint_maps[k][i]] = i;
        A->local_count[k] = m->joint_map_counts[k];
    }
    if (A->local_of_main[k][j] < 0)
        A->local_of_main[k][j] = A->local_count[k]++;
    return A->local_of_main[k][j];
}

/* One primitive's joints and weights being written (tb__write_primitive):
 * its attributes' JSON, its vertices in the model, which of the model's
 * skins it uses, and one set's rows (4 a vertex) with their bytes. */
typedef struct tb__prim_write {
    tb__apply *A;
    const tb_gltf *g;
    json_t *attrs;
    size_t vc, vo;
    int sk, cloned;
    uint32_t *jr;
    float *wr;
    uint8_t *bytes;
} tb__prim_write;

/* Rows: set s read, each changed vertex's row replaced by its new weights
 * (set 0; the others emptied), joints in the skin's own list. */
static tb_result tb__prim_rows(tb__prim_write *pw, int s, int ja, int wa, tb_error *err)
{
    tb__apply *A = pw->A;
    tb_result r = tb_accessor_read_uints(A->doc, ja, pw->jr, pw->vc * 4, err);
    if (r == TB_OK)
        r = tb_accessor_read_floats(A->doc, wa, pw->wr, pw->vc * 4, err);
    for (size_t v = 0; r == TB_OK && v < pw->vc; v++) {
        if (!A->changed[pw->vo + v])
            continue;
        for (int q = 0; q < 4; q++) {
            pw->jr[v * 4 + (size_t)q] = 0;
            pw->wr[v * 4 + (size_t)q] = 0;
        }
        if (s == 0)
            for (int q = 0; q < TB__SLOTS; q++) {
                size_t i = (pw->vo + v) * TB__SLOTS + (size_t)q;
                int lj = A->nw[i] > 0 ? tb__local_joint(A, pw->sk, A->nj[i]) : 0;
                if (lj < 0)
                    r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
                pw->jr[v * 4 + (size_t)q] = lj < 0 ? 0 : (uint32_t)lj;
                pw->wr[v * 4 + (size_t)q] = A->nw[i];
            }
    }
    return r;
}

/* The bytes written over accessor `acc` when only this attribute uses it,
 * else into a new accessor the attribute `key` points at. */
static tb_result tb__prim_store(tb__prim_write *pw, const char *key, int acc, int ct, int normalized, int target,
                                tb_error *err)
{
    tb__apply *A = pw->A;
    if (!pw->cloned && tb__accessor_refs(A->root, acc) == 1)
        return tb_doc_replace_accessor_data(A->doc, acc, pw->bytes, ct, err);
    int na = tb_doc_add_accessor(A->doc, pw->bytes, pw->vc, ct, "VEC4", normalized, target);
    if (na < 0)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    json_object_set_new(pw->attrs, key, json_integer(na));
    return TB_OK;
}

/* Joints: the source type kept; u8 grows to u16 past 255 joints. */
static tb_result tb__prim_joints(tb__prim_write *pw, int s, int ja, tb_error *err)
{
    size_t n = pw->vc * 4;
    int jct = pw->g->accessors[ja].component_type;
    uint32_t jmax = 0;
    for (size_t i = 0; i < n; i++)
        if (pw->jr[i] > jmax)
            jmax = pw->jr[i];
    if (jct == TB_COMPONENT_UNSIGNED_BYTE && jmax > 255)
        jct = TB_COMPONENT_UNSIGNED_SHORT;
    if (jct != TB_COMPONENT_UNSIGNED_BYTE)
        jct = TB_COMPONENT_UNSIGNED_SHORT;
    for (size_t i = 0; i < n; i++) {
        if (jct == TB_COMPONENT_UNSIGNED_BYTE)
            pw->bytes[i] = (uint8_t)pw->jr[i];
        else
            ((uint16_t *)(void *)pw->bytes)[i] = (uint16_t)pw->jr[i];
    }
    char key[32];
    snprintf(key, sizeof key, "JOINTS_%d", s);
    return tb__prim_store(pw, key, ja, jct, 0, 34962, err);
}

/* Weights: the same type; normalised integers sum exactly to their max. */
static tb_result tb__prim_weights(tb__prim_write *pw, int s, int wa, tb_error *err)
{
    const uint8_t *changed = pw->A->changed;
    int wct = pw->g->accessors[wa].component_type;
    if (wct == TB_COMPONENT_FLOAT) {
        memcpy(pw->bytes, pw->wr, pw->vc * 4 * sizeof(float));
    } else {
        double scale = wct == TB_COMPONENT_UNSIGNED_BYTE ? 255.0 : 65535.0;
        for (size_t v = 0; v < pw->vc; v++) {
            uint32_t q[4];
            if (changed[pw->vo + v]) {
                tb__quantize(pw->wr + v * 4, 4, scale, q);
            } else {
                for (int k = 0; k < 4; k++) /* exact round trip of the source value */
                    q[k] = (uint32_t)lround((double)pw->wr[v * 4 + (size_t)k] * scale);
            }
            for (int k = 0; k < 4; k++) {
                if (wct == TB_COMPONENT_UNSIGNED_BYTE)
                    pw->bytes[v * 4 + (size_t)k] = (uint8_t)q[k];
                else
                    ((uint16_t *)(void *)pw->bytes)[v * 4 + (size_t)k] = (uint16_t)q[k];
            }
        }
    }
    char key[32];
    snprintf(key, sizeof key, "WEIGHTS_%d", s);
    return tb__prim_store(pw, key, wa, wct, pw->g->accessors[wa].normalized, 34962, err);
}

/* A primitive's reweighted vertices written: per JOINTS_n/WEIGHTS_n set,
 * rows → joints → weights. A primitive without them only counts its
 * reweighted vertices as skipped. */
static tb_result tb__write_primitive(tb__apply *A, const tb_model_prim *mp, int mesh_json, int cloned,
                                     tb_error *err)
{
    tb__prim_write pw = {A, tb_doc_gltf(A->doc), NULL, mp->vertex_count, mp->vertex_offset, 0, cloned, NULL, NULL,
                         NULL};
    const tb_gltf_primitive *p = &pw.g->meshes[mp->mesh].primitives[mp->primitive];
    pw.attrs = json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(A->root, "meshes"), (size_t)mesh_json),
                                       "primitives"),
                       (size_t)mp->primitive),
        "attributes");
    if (p->set_count == 0) {
        for (size_t v = 0; v < pw.vc; v++)
            A->skipped += A->changed[pw.vo + v];
        return TB_OK;
    }
    pw.sk = tb_model_skin_slot(A->m, pw.g->nodes[mp->node].skin); /* which of the model's skins */
    pw.jr = malloc(pw.vc * 4 * sizeof *pw.jr);
    pw.wr = malloc(pw.vc * 4 * sizeof *pw.wr);
    pw.bytes = malloc(pw.vc * 4 * 4 + 4);
    tb_result r = (!pw.jr || !pw.wr || !pw.bytes) ? tb__fail(err, TB_ERR_OOM, NULL, NULL) : TB_OK;
    for (int s = 0; s < p->set_count && r == TB_OK; s++) {
        r = tb__prim_rows(&pw, s, p->joints[s], p->weights[s], err);
        if (r == TB_OK)
            r = tb__prim_joints(&pw, s, p->joints[s], err);
        if (r == TB_OK)
            r = tb__prim_weights(&pw, s, p->weights[s], err);
    }
    free(pw.jr);
    free(pw.wr);
    free(pw.bytes);
    return r;
}

static void tb__set_single(tb__apply *A, size_t v, uint16_t joint)
{
    for (int k = 0; k < TB__SLOTS; k++) {
        A->nj[v * TB__SLOTS + (size_t)k] = k ? 0 : joint;
        A->nw[v * TB__SLOTS + (size_t)k] = k ? 0 : 1;
    }
}

/* A tail welded into the body (choice, beyond the article). SPEC A9 leaves
 * the body's collar with the rigger's weights — often partly on a thigh —
 * while the first ring beyond it goes 50/50 parent/Tail_1: the seam between
 * them tears as soon as a leg or the tail moves (synthetic tail_welded,
 * Sprint: seam p99 2.2, 20% of samples torn). So within a band of
 * collar_band segments from the welded collar, the tail's weights blend from
 * the collar's weights where the vertex meets it (tb__seam_weights) to the chain's,
 * w = (1 − t) w_collar + t w_chain with t = smoothstep(g / band), g the
 * vertex's geodesic distance from the collar (SPEC A9's g): the seam skins
 * alike on both sides and the change is spread over the band. A separate
 * shell has no such seam (its collar is the tail's own root ring, reweighted
 * at g = 0). */
/* A vertex's own weights, the TB__SLOTS largest, normalised. */
static void tb__top_weights(const tb_model *m, size_t v, uint16_t *j, float *w)
{
    int I = m->influences;
    for (int k = 0; k < TB__SLOTS; k++)
        j[k] = 0, w[k] = 0;
    for (int k = 0; k < I; k++) {
        float x = m->weights[v * (size_t)I + (size_t)k];
        uint16_t jx = m->joints[v * (size_t)I + (size_t)k];
        for (int s = 0; s < TB__SLOTS; s++)
            if (x > w[s]) {
                for (int t = TB__SLOTS - 1; t > s; t--)
                    j[t] = j[t - 1], w[t] = w[t - 1];
                j[s] = jx, w[s] = x;
                break;
            }
    }
    float sum = 0;
    for (int k = 0; k < TB__SLOTS; k++)
        sum += w[k];
    for (int k = 0; k < TB__SLOTS; k++)
        w[k] = sum > 0 ? w[k] / sum : 0;
}

#define TB__COLLAR_SHARE 0.5f

/* Vertex v's new influences: the TB__SLOTS largest of the cnt (joint,
 * weight) pairs in jj/ww (sorted in place), normalised to sum 1. */
static void tb__store_largest(tb__apply *A, size_t v, uint16_t *jj, float *ww, int cnt)
{
    for (int i = 0; i < cnt; i++) /* largest first */
        for (int k = i + 1; k < cnt; k++)
            if (ww[k] > ww[i]) {
                float tw = ww[i];
                uint16_t tj = jj[i];
                ww[i] = ww[k], jj[i] = jj[k];
                ww[k] = tw, jj[k] = tj;
            }
    if (cnt > TB__SLOTS)
        cnt = TB__SLOTS;
    float sum = 0;
    for (int i = 0; i < cnt; i++)
        sum += ww[i];
    for (int k = 0; k < TB__SLOTS; k++) {
        A->nj[v * TB__SLOTS + (size_t)k] = k < cnt ? jj[k] : 0;
        A->nw[v * TB__SLOTS + (size_t)k] = k < cnt && sum > 0 ? ww[k] / sum : 0;
    }
}

/* The welded collar itself (choice, issue 13): left with the body's
 * weights, the ring where the tail joins the body follows a thigh while the
 * tail's first ring follows the chain, and the edges between them carry the
 * whole difference (synthetic hang_welded_nearest, Crouch: 4.0% of seam
 * samples torn). So the collar ring goes TB__COLLAR_SHARE (halfway) from its
 * own weights to the chain's at its root (SPEC A9 at g = 0: parent and
 * Tail_1, half each), w = ½ w_own + ½ w_root, and the tail's band blends on
 * from there: the step is split between the seam and the band. Only the
 * collar ring changes; the body beyond it keeps its weights exactly. */
static void tb__blend_collar_ring(tb__apply *A, const tb__chain_plan *c)
{
    for (size_t q = 0; q < c->nwelded; q++) {
        size_t v = c->welded[q];
        uint16_t jj[TB__SLOTS + 2];
        float ww[TB__SLOTS + 2];
        int cnt = 0;
        for (int k = 0; k < TB__SLOTS; k++)
            if (c->cw[q * TB__SLOTS + (size_t)k] > 0)
                jj[cnt] = c->cj[q * TB__SLOTS + (size_t)k], ww[cnt++] = (1 - TB__COLLAR_SHARE) * c->cw[q * TB__SLOTS + (size_t)k];
        const int root[2] = {c->skP, c->sk0};
        for (int r = 0; r < 2; r++) {
            int i = 0;
            while (i < cnt && jj[i] != (uint16_t)root[r])
                i++;
            if (i == cnt)
                jj[cnt] = (uint16_t)root[r], ww[cnt++] = 0;
            ww[i] += 0.5f * TB__COLLAR_SHARE;
        }
        tb__store_largest(A, v, jj, ww, cnt);
        A->changed[v] = 1;
        if (A->collar)
            A->collar[v] = 1;
    }
}

/* Adds f × (cj, cw) (cn influences) into the (joint, weight) pairs jj/ww
 * (*cnt of at most cap; a joint beyond cap is dropped: more joints than any
 * collar holds, the smallest go). */
static void tb__add_weights(uint16_t *jj, float *ww, int *cnt, int cap, const uint16_t *cj, const float *cw, int cn,
                            float f)
{
    for (int s = 0; s < cn; s++) {
        if (!(cw[s] > 0) || !(f > 0))
            continue;
        int i = 0;
        while (i < *cnt && jj[i] != cj[s])
            i++;
        if (i == *cnt) {
            if (*cnt == cap)
                continue;
            jj[(*cnt)++] = cj[s], ww[i] = 0;
        }
        ww[i] += f * cw[s];
    }
}

static size_t tb__plan_index(const tb__chain_plan *c, uint32_t v);

/* Weight of joint j in a vertex's TB__SLOTS influences. */
static float tb__slot_weight(const uint16_t *jj, const float *ww, uint16_t j)
{
    float w = 0;
    for (int k = 0; k < TB__SLOTS; k++)
        w += jj[k] == j && ww[k] > 0 ? ww[k] : 0;
    return w;
}

/* Vertex u's weights as the band sees them: the new ones where changed
 * (the collar ring), else its own largest. */
static void tb__current_weights(const tb__apply *A, size_t u, uint16_t *uj, float *uw)
{
    if (A->changed[u]) {
        memcpy(uj, A->nj + u * TB__SLOTS, TB__SLOTS * sizeof *uj);
        memcpy(uw, A->nw + u * TB__SLOTS, TB__SLOTS * sizeof *uw);
    } else {
        tb__top_weights(A->m, u, uj, uw);
    }
}

/* Whether weights (oj, ow) lie, joint by joint, between those of the
 * untouched vertices nb[0 … cnt) (a joint a vertex lacks weighs 0 there). */
static int tb__weights_between(const tb__apply *A, const uint16_t *oj, const float *ow, const uint32_t *nb, size_t cnt)
{
    cnt = cnt < 64 ? cnt : 64;
    uint16_t js[TB__SLOTS * 65];
    int nj = 0;
    for (size_t i = 0; i <= cnt && i <= 64; i++) { /* the joints of own and (up to 64) neighbours */
        uint16_t uj[TB__SLOTS];
        float uw[TB__SLOTS];
        if (i < cnt)
            tb__current_weights(A, nb[i], uj, uw);
        for (int k = 0; k < TB__SLOTS; k++) {
            uint16_t j = i < cnt ? uj[k] : oj[k];
            float w = i < cnt ? uw[k] : ow[k];
            int seen = 0;
            for (int s = 0; s < nj; s++)
                seen |= js[s] == j;
            if (w > 0 && !seen)
                js[nj++] = j;
        }
    }
    for (int s = 0; s < nj; s++) {
        float o = tb__slot_weight(oj, ow, js[s]), lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < cnt; i++) {
            uint16_t uj[TB__SLOTS];
            float uw[TB__SLOTS];
            tb__current_weights(A, nb[i], uj, uw);
            float w = tb__slot_weight(uj, uw, js[s]);
            lo = w < lo ? w : lo;
            hi = w > hi ? w : hi;
        }
        if (o < lo || o > hi)
            return 0;
    }
    return 1;
}

/* Whether vertex v's new weights reach the chain (any Tail_k). */
static int tb__reaches_chain(const tb__apply *A, const tb__chain_plan *c, size_t v)
{
    for (int k = 0; k < TB__SLOTS; k++) {
        uint16_t j = A->nj[v * TB__SLOTS + (size_t)k];
        if (A->nw[v * TB__SLOTS + (size_t)k] > 0 && j >= c->sk0 && j < c->sk0 + c->K)
            return 1;
    }
    return 0;
}

/* The untouched neighbours of c's vertices (not in the tail): nb[off[q] …
 * off[q + 1]) for vertex q (off has c->n + 2 entries, zeroed); NULL when
 * out of memory. */
static uint32_t *tb__untouched_neighbours(const tb__apply *A, const tb__chain_plan *c, size_t *off)
{
    size_t V = A->m->vertex_count;
    uint32_t *nb = NULL;
    for (int pass = 0; pass < 2; pass++) { /* count, then fill */
        for (size_t e = 0; e < A->edge_count; e++) {
            uint32_t a = (uint32_t)(A->edges[e] >> 32), b = (uint32_t)(A->edges[e] & 0xffffffffu);
            size_t qa = a < V ? tb__plan_index(c, a) : 0, qb = b < V ? tb__plan_index(c, b) : 0;
            if (a >= V || b >= V || (qa == SIZE_MAX) == (qb == SIZE_MAX))
                continue;
            size_t q = qa != SIZE_MAX ? qa : qb;
            if (pass)
                nb[off[q + 1]++] = qa != SIZE_MAX ? b : a;
            else
                off[q + 2]++;
        }
        if (pass)
            break;
        for (size_t q = 0; q < c->n; q++)
            off[q + 2] += off[q + 1];
        if (!(nb = malloc((off[c->n + 1] + 1) * sizeof *nb)))
            break;
    }
    return nb;
}

/* Vertex q's copies in the tail (within 1e-5 H, as tb__collar_copies):
 * into cp (at most cap, q first); 0 when one of them reaches the chain. */
static size_t tb__band_copies(const tb__apply *A, const tb__chain_plan *c, size_t q, size_t *cp, size_t cap)
{
    const tb_model *m = A->m;
    float eps = 1e-5f * (m->height > 0 ? m->height : 1);
    const float *p = m->positions + (size_t)c->verts[q] * 3;
    size_t n = 0;
    cp[n++] = q;
    for (size_t r = 0; r < c->n; r++) {
        const float *o = m->positions + (size_t)c->verts[r] * 3;
        if (r == q || fabsf(o[0] - p[0]) > eps || fabsf(o[1] - p[1]) > eps || fabsf(o[2] - p[2]) > eps)
            continue;
        if (n == cap || tb__reaches_chain(A, c, c->verts[r]))
            return 0;
        cp[n++] = r;
    }
    return n;
}

/* Do no harm at the seam (choice, issue 13). Near the collar the chain's
 * share t w_chain can be too small to stay among a vertex's TB__SLOTS
 * largest influences: the blend then only trades its own (body) weights
 * for a mix of the collar's and the ring's, moving it without making it
 * follow the tail. On the synthetic back_lowpoly_nearest the tail's root
 * ring copies body vertices the welded collar does not list (t 0.03): the
 * blend moved them by 0.003 (Hips 0.464 → 0.462), so their edges to the
 * body counted as the repair's seam and carried the body's own stretch
 * (4390–4391: 1.71 in the input's Crouch, 1.70 in the output's, torn at
 * the same 12 instants). So a vertex of the band that the chain does not
 * reach and that shares edges with untouched skin keeps its own weights
 * when they already lie, joint by joint, between those of the untouched
 * vertices it meets: the input's seam is then as continuous as the blend
 * would make it, and skins exactly as before. A point of the surface split
 * into copies (the tail's root ring on the body's vertices) is one point:
 * the untouched vertices its copies meet are pooled, and the copies keep
 * their own weights together or not at all (else the surface opens
 * between them). Where its own weights lie outside (a tail weighted to the
 * nearest bone, its root ring on a thigh: the synthetic
 * hang_welded_nearest tore its seam 10.5% when every unreached vertex kept
 * its own), the blend stands. The untouched neighbours are the plan's
 * (tb__aa_collar), so every try of the blend search sees the same. */
static void tb__unreached_keep_own(tb__apply *A, const tb__chain_plan *c)
{
    const size_t *off = c->nbo;
    const uint32_t *nb = c->nb;
    uint32_t pool[64];
    size_t cp[8];
    for (size_t q = 0; nb && off && c->oj && q < c->n; q++) {
        if (off[q + 1] == off[q] || tb__reaches_chain(A, c, c->verts[q]))
            continue;
        size_t ncp = tb__band_copies(A, c, q, cp, 8), np = 0, keep = ncp > 0;
        for (size_t i = 0; i < ncp; i++)
            for (size_t k = off[cp[i]]; k < off[cp[i] + 1] && np < 64; k++)
                pool[np++] = nb[k];
        for (size_t i = 0; i < ncp && keep; i++)
            keep = tb__weights_between(A, c->oj + cp[i] * TB__SLOTS, c->ow + cp[i] * TB__SLOTS, pool, np);
        for (size_t i = 0; i < ncp && keep; i++) {
            size_t v = c->verts[cp[i]];
            memcpy(A->nj + v * TB__SLOTS, c->oj + cp[i] * TB__SLOTS, TB__SLOTS * sizeof *A->nj);
            memcpy(A->nw + v * TB__SLOTS, c->ow + cp[i] * TB__SLOTS, TB__SLOTS * sizeof *A->nw);
        }
    }
}

/* The ring's common weights kept to the chain's lineage (choice, issue
 * 13): of the weld ring's mean (rj, rw; rn joints), only the chain's parent
 * and its ancestors, renormalised; returns how many are left (the mean as
 * it was when none is). The band carries this share, (1 − t) t, far into
 * the tail, and a tail hangs from its parent: a limb's share belongs at
 * the seam, where the collar's own weights carry it and fade as (1 − t)².
 * With the limb in the mean, a tail welded beside a thigh carried
 * LeftUpLeg 0.09–0.20 two segments down, onto Tail_2 skin (band 2), and
 * the thigh flexing in Crouch folded it there: edges along the tail read
 * 0.61–0.66 at 11–15 of 24 instants — 0.63 still with every joint held
 * within 1–5° of its bind pose, so the weights, not the solver (synthetic
 * beside_welded_leg). */
static int tb__ring_lineage(const tb_model *m, int skP, uint16_t *rj, float *rw, int rn)
{
    int par = skP >= 0 && skP < m->skin_joint_count ? m->skin_joints[skP] : -1, kept = 0;
    float sum = 0;
    for (int k = 0; k < rn; k++) {
        int sj = rj[k] < m->skin_joint_count ? m->skin_joints[rj[k]] : -2, lineage = 0;
        for (int a = par; a >= 0; a = m->skel.parents[a])
            lineage |= a == sj;
        if (lineage && rw[k] > 0)
            rj[kept] = rj[k], rw[kept++] = rw[k], sum += rw[k];
    }
    if (!kept || !(sum > 0))
        return rn;
    for (int k = 0; k < kept; k++)
        rw[k] /= sum;
    return kept;
}

/* Collar vertex k's weights as the band sees them: as the collar ring
 * left them where it was reweighted (tb__blend_collar_ring), else its own. */
static void tb__collar_weights(const tb__apply *A, const tb__chain_plan *c, size_t k, const uint16_t **cj,
                               const float **cw)
{
    size_t v = c->welded[k];
    *cj = A->changed[v] ? A->nj + v * TB__SLOTS : c->cj + k * TB__SLOTS;
    *cw = A->changed[v] ? A->nw + v * TB__SLOTS : c->cw + k * TB__SLOTS;
}

/* Distance from p to collar edge i (i < c->ncseg) or collar vertex
 * i - c->ncseg, and *s the nearest point's place along the edge (0 at its
 * first end). */
static float tb__seam_distance(const tb_model *m, const tb__chain_plan *c, size_t i, const float *p, float *s)
{
    size_t ka = i < c->ncseg ? c->cseg[2 * i] : c->cpt[i - c->ncseg], kb = i < c->ncseg ? c->cseg[2 * i + 1] : ka;
    const float *a = m->positions + (size_t)c->welded[ka] * 3, *b = m->positions + (size_t)c->welded[kb] * 3;
    tb__seg g;
    tb__seg_set(&g, a, b, 0);
    float x = ((p[0] - a[0]) * g.ab[0] + (p[1] - a[1]) * g.ab[1] + (p[2] - a[2]) * g.ab[2]) * g.inv_len2;
    *s = x < 0 ? 0 : x > 1 ? 1 : x;
    return tb__seg_dist(&g, p);
}

/* Kernel over collar edge i: the integrals over the part of the edge
 * within sqrt(lim) of p of 1/d² (*i0) and of 1/d² times the place along
 * the edge (0 … 1, *i1), d the distance from p. */
static void tb__segment_kernel(const tb_model *m, const tb__chain_plan *c, size_t i, const float *p, double lim,
                               double *i0, double *i1)
{
    const float *a = m->positions + (size_t)c->welded[c->cseg[2 * i]] * 3;
    const float *b = m->positions + (size_t)c->welded[c->cseg[2 * i + 1]] * 3;
    double ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
    double L = sqrt(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]);
    *i0 = *i1 = 0;
    if (!(L > 0))
        return;
    double xp = (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / L;
    double h2 = ap[0] * ap[0] + ap[1] * ap[1] + ap[2] * ap[2] - xp * xp, r2 = lim - (h2 > 0 ? h2 : 0);
    h2 = h2 > 1e-30 ? h2 : 1e-30;
    double h = sqrt(h2), x0 = -xp, x1 = L - xp, r = r2 > 0 ? sqrt(r2) : 0;
    x0 = x0 > -r ? x0 : -r;
    x1 = x1 < r ? x1 : r;
    if (!(x1 > x0))
        return;
    /* ∫ dx / (h² + x²) and ∫ x dx / (h² + x²) over [x0, x1] */
    double j0 = x0 * x1 > 0 ? atan((x1 - x0) * h / (h2 + x0 * x1)) / h : (atan(x1 / h) - atan(x0 / h)) / h;
    double j1 = 0.5 * log((h2 + x1 * x1) / (h2 + x0 * x0));
    *i0 = j0;
    *i1 = (xp * j0 + j1) / L;
}

/* The collar's weights around p, away from it (tb__seam_weights): the
 * collar's weights, interpolated along its edges, averaged over the
 * stretch of the collar within twice the nearest distance `best` by 1 / d²
 * (a lone collar vertex as a stretch of the edges' mean length). */
static void tb__seam_kernel_weights(const tb__apply *A, const tb__chain_plan *c, const float *p, float best,
                                    uint16_t *jj, float *ww, int *cnt, int cap, float f)
{
    const tb_model *m = A->m;
    double lim = 4 * (double)best * (double)best, omega = 0, i0, i1;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < c->ncseg + c->ncpt; i++) {
            size_t ka, kb;
            if (i < c->ncseg) {
                tb__segment_kernel(m, c, i, p, lim, &i0, &i1);
                ka = c->cseg[2 * i], kb = c->cseg[2 * i + 1];
            } else {
                ka = kb = c->cpt[i - c->ncseg];
                float d = tb__dist3(p, m->positions + (size_t)c->welded[ka] * 3);
                i0 = (double)d * d <= lim ? (double)c->cseg_mean / ((double)d * d) : 0;
                i1 = 0;
            }
            if (!pass) {
                omega += i0;
                continue;
            }
            if (!(omega > 0) || !(i0 > 0))
                continue;
            const uint16_t *cj;
            const float *cw;
            tb__collar_weights(A, c, ka, &cj, &cw);
            tb__add_weights(jj, ww, cnt, cap, cj, cw, TB__SLOTS, f * (float)((i0 - i1) / omega));
            tb__collar_weights(A, c, kb, &cj, &cw);
            tb__add_weights(jj, ww, cnt, cap, cj, cw, TB__SLOTS, f * (float)(i1 / omega));
        }
    }
}

/* The collar's weights where a tail vertex at p meets it (choice, issue
 * 13), f times, added into the (joint, weight) pairs jj/ww. The collar is
 * read as a curve: its edges (the body's edges between collar vertices,
 * copies of one stretch counted once), the weights interpolated along each
 * edge; its weights near p are their mean over the stretch of that curve
 * within twice the nearest distance, by 1 / d² (tb__seam_kernel_weights);
 * a vertex on the curve takes the weights there (copies of one point:
 * their mean). Not the nearest collar vertex alone: a tail root ring
 * coarser than the collar (a low-poly tail) shares edges with several, and
 * copying one of them tore the edge to the next (back_lowpoly_nearest:
 * LeftUpLeg 0.142 beside 0.283, 2.38 in Crouch). Before, the collar
 * vertices themselves within twice the nearest one's distance were summed
 * by 1 / d², so a point of the collar split into copies, or a stretch with
 * dense vertices, counted many times: on the Soldier's hang_welded_nearest
 * weld-ring vertex 7445 (Hips 0.77, LeftUpLeg 0.16, RightUpLeg 0.07) was one
 * of eleven around the tail vertex one edge away (three copies of one point
 * among them), which carried LeftUpLeg 0.02, and that edge tore in Run at 7
 * of 24 instants (1.63; now 0.045, 1.49, none). The nearest point of the
 * curve alone (no mean) tore the tails welded beside a thigh: the weights
 * round the tail's root ring jump where the nearest point does (docs/fix.md,
 * session 13). */
static void tb__seam_weights(const tb__apply *A, const tb__chain_plan *c, const float *p, uint16_t *jj, float *ww,
                             int *cnt, int cap, float f)
{
    const tb_model *m = A->m;
    size_t n = c->ncseg + c->ncpt, hits = 0;
    float best = INFINITY, eps = 1e-5f * (m->height > 0 ? m->height : 1), s;
    for (size_t i = 0; i < n; i++) {
        float d = tb__seam_distance(m, c, i, p, &s);
        best = d < best ? d : best;
    }
    if (best > eps) {
        tb__seam_kernel_weights(A, c, p, best, jj, ww, cnt, cap, f);
        return;
    }
    for (size_t i = 0; i < n; i++)
        hits += tb__seam_distance(m, c, i, p, &s) <= best + eps;
    for (size_t i = 0; i < n && hits; i++) {
        if (!(tb__seam_distance(m, c, i, p, &s) <= best + eps))
            continue;
        size_t ka = i < c->ncseg ? c->cseg[2 * i] : c->cpt[i - c->ncseg], kb = i < c->ncseg ? c->cseg[2 * i + 1] : ka;
        const uint16_t *cj;
        const float *cw;
        tb__collar_weights(A, c, ka, &cj, &cw);
        tb__add_weights(jj, ww, cnt, cap, cj, cw, TB__SLOTS, f * (1 - s) / (float)hits);
        tb__collar_weights(A, c, kb, &cj, &cw);
        tb__add_weights(jj, ww, cnt, cap, cj, cw, TB__SLOTS, f * s / (float)hits);
    }
}

/* The band's seam weights relaxed along the tail (choice, issue 13). Each
 * band vertex read the collar's weights where it meets the collar
 * (tb__seam_weights) and the band carried them, fading as (1 − t)², into
 * the tail. A body collar is coarser than a tail's root ring and its
 * weights alternate round it (the Soldier's: Hips 0.77 / LeftUpLeg 0.23
 * beside Hips 0.79 / Spine 0.21, 0.03 H apart), so the root ring, read
 * vertex by vertex, took that step over edges a third as long: on the
 * Soldier's beside_welded_leg LeftUpLeg 0.29, 0.16, 0.09 on three
 * neighbouring root-ring vertices 0.011 H apart, torn at up to 2.2 in Run.
 * So the seam weights S of the band's vertices are the harmonic extension
 * of the collar's into the band: each the mean of its neighbours' over the
 * tail's own edges, by 1 / length, the untouched body vertices it meets
 * (the collar) counted TB__SEAM_PULL times and held; a vertex on the
 * collar curve held at the weights there; copies of one point one unknown
 * (their edges pooled: else the surface opens between them). Gauss–Seidel
 * until no weight moves by 1e-6, at most TB__SEAM_SWEEPS sweeps. The step
 * round the collar is then spread over the band as it is along it, and the
 * seam still meets the collar's weights where the collar pulls.
 * TB__SEAM_PULL 4 is calibrated on the welded fixtures (docs/fix.md,
 * session 14: at 1 the root ring drifts from the collar; 2 and 4 take both
 * up_welded_hips+vest to the bar, 3 and 8 leave the Soldier's one sample
 * or three short; 4 tears least in all). */
#define TB__SEAM_JOINTS 32
#define TB__SEAM_PULL 4.0f
#define TB__SEAM_SWEEPS 500

typedef struct tb__seam_field {
    int J;
    uint16_t joint[TB__SEAM_JOINTS];
    size_t nb;      /* band vertices */
    long *at;       /* c->n entries: vertex q's index in the band, -1 outside it */
    size_t *q;      /* nb: their plan indices */
    float *S;       /* nb × TB__SEAM_JOINTS: the seam weights */
    float *pull;    /* nb × TB__SEAM_JOINTS: the collar's pull, Σ TB__SEAM_PULL w_u / |e| */
    float *wpull;   /* nb: Σ TB__SEAM_PULL / |e| */
    uint8_t *held;  /* nb: on the collar curve */
    size_t *off;    /* nb + 2: the band's own edges (CSR) */
    uint32_t *adj;
    float *aw;      /* 1 / |e| */
    uint32_t *rep;  /* nb: the first band vertex at the same point (the group's root) */
    size_t *nxt;    /* nb: the next vertex of b's group after b, SIZE_MAX at its end */
} tb__seam_field;

static void tb__sf_free(tb__seam_field *f)
{
    free(f->at), free(f->q), free(f->S), free(f->pull), free(f->wpull), free(f->held);
    free(f->off), free(f->adj), free(f->aw), free(f->rep), free(f->nxt);
    memset(f, 0, sizeof *f);
}

/* Column of joint j in the field (added when `add`); -1 when absent or full. */
static int tb__sf_joint(tb__seam_field *f, uint16_t j, int add)
{
    for (int i = 0; i < f->J; i++)
        if (f->joint[i] == j)
            return i;
    if (!add || f->J == TB__SEAM_JOINTS)
        return -1;
    f->joint[f->J] = j;
    return f->J++;
}

static void tb__sf_scatter(tb__seam_field *f, float *row, const uint16_t *jj, const float *ww, int cnt, float scale)
{
    for (int i = 0; i < cnt; i++) {
        int k = ww[i] > 0 ? tb__sf_joint(f, jj[i], 1) : -1;
        if (k >= 0)
            row[k] += scale * ww[i];
    }
}

/* The band's vertices (gb or g under `band`), their seam weights as read
 * from the collar, which of them lie on the collar curve, the collar's
 * pull on each. */
static tb_result tb__sf_setup(const tb__apply *A, const tb__chain_plan *c, float band, int strain, tb__seam_field *f)
{
    const tb_model *m = A->m;
    f->at = malloc((c->n + 1) * sizeof *f->at);
    f->q = malloc((c->n + 1) * sizeof *f->q);
    if (!f->at || !f->q)
        return TB_ERR_OOM;
    for (size_t q = 0; q < c->n; q++) {
        int in = (c->gb ? c->gb[q] : c->g[q]) < band;
        f->at[q] = in ? (long)f->nb : -1;
        if (in)
            f->q[f->nb++] = q;
    }
    size_t R = f->nb * TB__SEAM_JOINTS + 1;
    f->S = calloc(R, sizeof *f->S);
    f->pull = calloc(R, sizeof *f->pull);
    f->wpull = calloc(f->nb + 1, sizeof *f->wpull);
    f->held = calloc(f->nb + 1, 1);
    if (!f->S || !f->pull || !f->wpull || !f->held)
        return TB_ERR_OOM;
    float eps = 1e-5f * (m->height > 0 ? m->height : 1), s;
    for (size_t b = 0; b < f->nb; b++) {
        size_t q = f->q[b];
        const float *p = m->positions + (size_t)c->verts[q] * 3;
        uint16_t jj[TB__SLOTS + 32];
        float ww[TB__SLOTS + 32], best = INFINITY;
        int cnt = 0;
        tb__seam_weights(A, c, p, jj, ww, &cnt, TB__SLOTS + 32, 1);
        tb__sf_scatter(f, f->S + b * TB__SEAM_JOINTS, jj, ww, cnt, 1);
        for (size_t i = 0; i < c->ncseg + c->ncpt; i++) {
            float d = tb__seam_distance(m, c, i, p, &s);
            best = d < best ? d : best;
        }
        f->held[b] = best <= eps;
        for (size_t k = c->nbo && c->nb ? c->nbo[q] : 0; c->nbo && c->nb && k < c->nbo[q + 1]; k++) {
            float len = tb__dist3(m->positions + (size_t)c->nb[k] * 3, p);
            uint16_t uj[TB__SLOTS];
            float uw[TB__SLOTS];
            if (!(len > 0))
                continue;
            /* by strain (tb__blend_welded_collar): a stretch reads Δw / |e| */
            float pull = strain ? TB__SEAM_PULL * c->cseg_mean / (len * len) : TB__SEAM_PULL / len;
            if (strain == 2) /* every edge alike (TB__PLAN_BY_STRAIN, tb__cut_spread) */
                pull = c->cseg_mean / (len * len);
            tb__current_weights(A, c->nb[k], uj, uw);
            tb__sf_scatter(f, f->pull + b * TB__SEAM_JOINTS, uj, uw, TB__SLOTS, pull);
            f->wpull[b] += pull;
        }
    }
    return TB_OK;
}

/* The band's own edges (c->own with both ends in the band), as CSR, each
 * by 1 / |e|, or by strain (strain 2: ℓ / |e|², ℓ the collar's mean edge;
 * TB__PLAN_BY_STRAIN). */
static tb_result tb__sf_graph(const tb_model *m, const tb__chain_plan *c, int strain, tb__seam_field *f)
{
    f->off = calloc(f->nb + 2, sizeof *f->off);
    if (!f->off)
        return TB_ERR_OOM;
    for (size_t e = 0; e < c->nown; e++) {
        long a = f->at[c->own[2 * e]], b = f->at[c->own[2 * e + 1]];
        if (a >= 0 && b >= 0)
            f->off[a + 2]++, f->off[b + 2]++;
    }
    for (size_t b = 0; b < f->nb; b++)
        f->off[b + 2] += f->off[b + 1];
    f->adj = malloc((f->off[f->nb + 1] + 1) * sizeof *f->adj);
    f->aw = malloc((f->off[f->nb + 1] + 1) * sizeof *f->aw);
    if (!f->adj || !f->aw)
        return TB_ERR_OOM;
    for (size_t e = 0; e < c->nown; e++) {
        long a = f->at[c->own[2 * e]], b = f->at[c->own[2 * e + 1]];
        if (a < 0 || b < 0)
            continue;
        float len = tb__dist3(m->positions + (size_t)c->verts[c->own[2 * e]] * 3,
                              m->positions + (size_t)c->verts[c->own[2 * e + 1]] * 3);
        float w = !(len > 0) ? 0 : strain == 2 ? c->cseg_mean / (len * len) : 1 / len;
        f->adj[f->off[a + 1]] = (uint32_t)b, f->aw[f->off[a + 1]++] = w;
        f->adj[f->off[b + 1]] = (uint32_t)a, f->aw[f->off[b + 1]++] = w;
    }
    return TB_OK;
}

typedef struct tb__sf_key {
    float x;
    uint32_t b;
} tb__sf_key;

static int tb__sf_key_cmp(const void *x, const void *y)
{
    const tb__sf_key *a = x, *b = y;
    return a->x < b->x ? -1 : a->x > b->x ? 1 : (a->b > b->b) - (a->b < b->b);
}

/* rep[b]: the first band vertex at b's point (within 1e-5 H, as
 * tb__collar_copies), b itself when none. */
static tb_result tb__sf_copies(const tb_model *m, const tb__chain_plan *c, tb__seam_field *f)
{
    float eps = 1e-5f * (m->height > 0 ? m->height : 1);
    tb__sf_key *k = malloc((f->nb + 1) * sizeof *k);
    f->rep = malloc((f->nb + 1) * sizeof *f->rep);
    if (!k || !f->rep) {
        free(k);
        return TB_ERR_OOM;
    }
    for (size_t b = 0; b < f->nb; b++) {
        k[b].x = m->positions[(size_t)c->verts[f->q[b]] * 3];
        k[b].b = (uint32_t)b;
        f->rep[b] = (uint32_t)b;
    }
    qsort(k, f->nb, sizeof *k, tb__sf_key_cmp);
    for (size_t i = 0; i < f->nb; i++)
        for (size_t j = i + 1; j < f->nb && k[j].x - k[i].x <= eps; j++) {
            const float *p = m->positions + (size_t)c->verts[f->q[k[i].b]] * 3;
            const float *o = m->positions + (size_t)c->verts[f->q[k[j].b]] * 3;
            if (!(fabsf(o[1] - p[1]) <= eps && fabsf(o[2] - p[2]) <= eps))
                continue;
            tb__unite(f->rep, k[i].b, k[j].b); /* the smaller root is the group's */
        }
    for (size_t b = 0; b < f->nb; b++) /* each to its group's root */
        f->rep[b] = tb__find(f->rep, (uint32_t)b);
    free(k);
    f->nxt = malloc((f->nb + 1) * sizeof *f->nxt);
    if (!f->nxt)
        return TB_ERR_OOM;
    for (size_t b = 0; b < f->nb; b++)
        f->nxt[b] = SIZE_MAX;
    for (size_t b = f->nb; b-- > 0;) /* the root first, then the rest in order */
        if (f->rep[b] != b)
            f->nxt[b] = f->nxt[f->rep[b]], f->nxt[f->rep[b]] = b;
    for (size_t b = 0; b < f->nb; b++) { /* a group with a held member is held at its weights */
        size_t r = f->rep[b];
        if (!f->held[b] || f->held[r] == 2)
            continue;
        for (size_t g = r; g != SIZE_MAX; g = f->nxt[g]) {
            memcpy(f->S + g * TB__SEAM_JOINTS, f->S + b * TB__SEAM_JOINTS, TB__SEAM_JOINTS * sizeof *f->S);
            f->held[g] = 1;
        }
        f->held[r] = 2;
    }
    return TB_OK;
}

/* One Gauss–Seidel sweep over the groups of copies (a vertex alone is a
 * group of one): each group not held takes the mean of its members'
 * neighbours' weights and of the collar's pull on them, all members alike;
 * returns the largest change. */
static float tb__sf_sweep(tb__seam_field *f)
{
    float change = 0;
    int J = f->J;
    for (size_t r = 0; r < f->nb; r++) {
        float acc[TB__SEAM_JOINTS] = {0}, ws = 0;
        if (f->rep[r] != r || f->held[r])
            continue;
        for (size_t b = r; b != SIZE_MAX; b = f->nxt[b]) {
            ws += f->wpull[b];
            for (int k = 0; k < J; k++)
                acc[k] += f->pull[b * TB__SEAM_JOINTS + (size_t)k];
            for (size_t e = f->off[b]; e < f->off[b + 1]; e++) {
                ws += f->aw[e];
                for (int k = 0; k < J; k++)
                    acc[k] += f->aw[e] * f->S[(size_t)f->adj[e] * TB__SEAM_JOINTS + (size_t)k];
            }
        }
        if (!(ws > 0))
            continue;
        for (int k = 0; k < J; k++) {
            float x = acc[k] / ws, d = fabsf(x - f->S[r * TB__SEAM_JOINTS + (size_t)k]);
            change = d > change ? d : change;
            for (size_t b = r; b != SIZE_MAX; b = f->nxt[b])
                f->S[b * TB__SEAM_JOINTS + (size_t)k] = x;
        }
    }
    return change;
}

/* The field for c's band of `band` (bind units), the collar pulling by
 * strain when `strain` (1), the band's own edges too (2); TB_ERR_OOM leaves
 * f empty. */
static tb_result tb__seam_field_make(const tb__apply *A, const tb__chain_plan *c, float band, int strain,
                                     tb__seam_field *f)
{
    memset(f, 0, sizeof *f);
    tb_result r = tb__sf_setup(A, c, band, strain, f);
    if (r == TB_OK)
        r = tb__sf_graph(A->m, c, strain, f);
    if (r == TB_OK)
        r = tb__sf_copies(A->m, c, f);
    for (int it = 0; r == TB_OK && it < TB__SEAM_SWEEPS; it++)
        if (!(tb__sf_sweep(f) > 1e-6f))
            break;
    if (r != TB_OK)
        tb__sf_free(f);
    return r;
}

/* The band's influences cut to TB__SLOTS continuously (choice, issue 13).
 * Near the collar a band vertex blends more joints than it keeps (Hips,
 * Spine, both thighs, Tail_1), and keeping the TB__SLOTS largest drops
 * Tail_1 at one end of an edge and a thigh at the other: on the synthetic
 * hang_welded_nearest 4413-4426 (0.0087 H) held Tail_1 0.16 + RightUpLeg
 * 0.13 against Tail_1 0.27 + LeftUpLeg 0.09 and stretched to 2.26 in
 * Crouch. So the smallest joints fade instead: with m the
 * (TB__SLOTS + 1)-th largest priority p (a joint's weight, a chain joint's
 * or the chain's parent's TB__CHAIN_PRIORITY times it: the tail's own
 * joints give way last), each joint's p becomes 0 at or below m, 2 (p − m)
 * up to 2m and p above — continuous in the weights, unchanged where a
 * vertex has no more than TB__SLOTS, at most TB__SLOTS left. What fades
 * goes to the chain's parent (the body's shared part; renormalised when the
 * parent has none). TB__CHAIN_PRIORITY 2 measured against 1 and 4
 * (docs/fix.md, session 14). */
#define TB__CHAIN_PRIORITY 2.0f

static void tb__fade_to_slots(const tb__chain_plan *c, const uint16_t *jj, float *ww, int cnt)
{
    float pr[TB__SLOTS + 32], top[TB__SLOTS + 1] = {0}, lost = 0;
    if (cnt <= TB__SLOTS)
        return;
    for (int i = 0; i < cnt; i++) {
        int chain = jj[i] == (uint16_t)c->skP || (jj[i] >= c->sk0 && jj[i] < c->sk0 + c->K);
        float x = pr[i] = ww[i] > 0 ? ww[i] * (chain ? TB__CHAIN_PRIORITY : 1) : 0;
        for (int s = 0; s <= TB__SLOTS; s++) /* the TB__SLOTS + 1 largest, in order */
            if (x > top[s]) {
                float y = top[s];
                top[s] = x;
                x = y;
            }
    }
    float m = top[TB__SLOTS];
    for (int i = 0; i < cnt && m > 0; i++) {
        float q = pr[i] <= m ? 0 : pr[i] < 2 * m ? 2 * (pr[i] - m) : pr[i];
        float w = pr[i] > 0 ? ww[i] * (q / pr[i]) : 0;
        lost += ww[i] - w;
        ww[i] = w;
    }
    for (int i = 0; i < cnt; i++)
        if (jj[i] == (uint16_t)c->skP && ww[i] > 0) {
            ww[i] += lost;
            break;
        }
}

/* The band on three body joints (choice, issue 13, session 15; a try of
 * fix's search, TB__PLAN_SPINE_FOLDED). A welded collar carries four
 * body joints (the pelvis, the spine above it, both thighs), so Tail_1 can
 * enter only where the cut (tb__fade_to_slots) drops one, and where it
 * drops a thigh over a short edge the skin tears. Here the spine's share
 * (TB_CLASS_SPINE) goes to the chain's parent over the whole band: the
 * thighs, which flex the collar most in locomotion, stay; a spine's step
 * at the seam is what this try trades for it, and the search keeps it only
 * where it measures better. With it the collar pulls the band by strain
 * (tb__sf_setup: TB__SEAM_PULL ℓ / |e|², ℓ the collar's mean edge, so an
 * edge of mean length pulls as before): a root-ring vertex between two body
 * vertices that disagree (the Soldier's 7459, between 7445 and 7446 whose
 * own edge tears) splits the difference by the edges' lengths. */
static void tb__fold_spine(const tb_model *m, const tb__chain_plan *c, const uint16_t *jj, float *ww, int cnt)
{
    float moved = 0;
    int at = -1;
    for (int i = 0; i < cnt; i++) {
        int sj = jj[i] < m->skin_joint_count ? m->skin_joints[jj[i]] : -1;
        if (sj >= 0 && tb_role_class_of(m->roles[sj]) == TB_CLASS_SPINE)
            moved += ww[i], ww[i] = 0;
        if (jj[i] == (uint16_t)c->skP)
            at = i;
    }
    if (at >= 0)
        ww[at] += moved;
}

/* The cut spread over the band (choice, issue 13, session 16; a try of
 * fix's search, TB__PLAN_BY_STRAIN). The cut (tb__fade_to_slots) decides
 * vertex by vertex which joint leaves, so a body joint kept at 0.085 on one
 * end of a 0.011 H root-ring edge is gone at the other (synthetic
 * hang_welded_nearest, RightUpLeg; 2.00 in Crouch). Here every body joint
 * the cut takes somewhere keeps a share φ of its weight at each band
 * vertex: at most what the cut left it (so no vertex holds more than
 * TB__SLOTS), 1 at the skin the cut does not reach (the collar, the tail
 * past the band, the collar curve), and elsewhere the mean of its
 * neighbours' over the seam field's graph (its edges and the collar's pull
 * weighed as the field's): the joint fades out over the band's surface
 * instead of over one edge. What fades goes to the chain's parent, as the
 * cut's own. The chain's joints are cut as before (a Tail_1 held back near
 * the collar would steepen the chain's ramp past the band). Copies of one
 * point are one unknown, as in the field. */
#define TB__ROW (TB__SLOTS + 32)

typedef struct tb__band_rows {
    int *cnt;    /* sf.nb: pairs per band vertex (the field's order) */
    uint16_t *j; /* sf.nb × TB__ROW */
    float *w0;   /* before the cut */
    float *w1;   /* after it */
    int nc;      /* the body joints the cut takes somewhere */
    uint16_t cut[TB__SEAM_JOINTS];
    float *phi, *cap, *fixed; /* sf.nb × nc, sf.nb × nc, sf.nb */
} tb__band_rows;

static void tb__band_rows_free(tb__band_rows *r)
{
    free(r->cnt), free(r->j), free(r->w0), free(r->w1), free(r->phi), free(r->cap), free(r->fixed);
    memset(r, 0, sizeof *r);
}

static int tb__band_rows_alloc(tb__band_rows *r, size_t nb)
{
    memset(r, 0, sizeof *r);
    r->cnt = calloc(nb + 1, sizeof *r->cnt);
    r->j = malloc((nb + 1) * TB__ROW * sizeof *r->j);
    r->w0 = malloc((nb + 1) * TB__ROW * sizeof *r->w0);
    r->w1 = malloc((nb + 1) * TB__ROW * sizeof *r->w1);
    if (r->cnt && r->j && r->w0 && r->w1)
        return 1;
    tb__band_rows_free(r);
    return 0;
}

/* The joints cut somewhere, each one's cap (w1 / w0) per band vertex, and
 * the pull of the skin the cut does not reach (φ = 1) on each. */
static int tb__cut_setup(const tb_model *m, const tb__chain_plan *c, const tb__seam_field *f, tb__band_rows *r)
{
    for (size_t b = 0; b < f->nb; b++)
        for (int i = 0; i < r->cnt[b]; i++) {
            size_t s = b * TB__ROW + (size_t)i;
            uint16_t j = r->j[s];
            int k = 0;
            if (!(r->w1[s] < r->w0[s]) || j == (uint16_t)c->skP || (j >= c->sk0 && j < c->sk0 + c->K))
                continue;
            while (k < r->nc && r->cut[k] != j)
                k++;
            if (k == r->nc && r->nc < TB__SEAM_JOINTS)
                r->cut[r->nc++] = j;
        }
    size_t N = f->nb * (size_t)r->nc + 1;
    r->phi = malloc(N * sizeof *r->phi), r->cap = malloc(N * sizeof *r->cap);
    r->fixed = calloc(f->nb + 1, sizeof *r->fixed);
    if (!r->nc || !r->phi || !r->cap || !r->fixed)
        return 0;
    for (size_t b = 0; b < f->nb; b++) {
        r->fixed[b] = f->wpull[b];
        for (int k = 0; k < r->nc; k++) {
            float x = 1;
            for (int i = 0; i < r->cnt[b]; i++) {
                size_t s = b * TB__ROW + (size_t)i;
                if (r->j[s] == r->cut[k] && r->w0[s] > 0)
                    x = r->w1[s] / r->w0[s];
            }
            r->phi[b * (size_t)r->nc + (size_t)k] = r->cap[b * (size_t)r->nc + (size_t)k] = x;
        }
    }
    for (size_t e = 0; e < c->nown; e++) { /* the tail's own edges leaving the band */
        long a = f->at[c->own[2 * e]], o = f->at[c->own[2 * e + 1]];
        if ((a >= 0) == (o >= 0))
            continue;
        float len = tb__dist3(m->positions + (size_t)c->verts[c->own[2 * e]] * 3,
                              m->positions + (size_t)c->verts[c->own[2 * e + 1]] * 3);
        r->fixed[a >= 0 ? a : o] += len > 0 ? c->cseg_mean / (len * len) : 0;
    }
    return 1;
}

/* One Gauss–Seidel sweep of φ over the field's groups of copies; returns
 * the largest change. */
static float tb__cut_sweep(const tb__seam_field *f, tb__band_rows *r)
{
    float change = 0;
    int nc = r->nc;
    for (size_t g = 0; g < f->nb; g++) {
        float acc[TB__SEAM_JOINTS], cap[TB__SEAM_JOINTS], ws = 0;
        if (f->rep[g] != g || f->held[g])
            continue;
        for (int k = 0; k < nc; k++)
            acc[k] = 0, cap[k] = 1;
        for (size_t b = g; b != SIZE_MAX; b = f->nxt[b]) {
            ws += r->fixed[b];
            for (int k = 0; k < nc; k++) {
                acc[k] += r->fixed[b];
                cap[k] = fminf(cap[k], r->cap[b * (size_t)nc + (size_t)k]);
            }
            for (size_t e = f->off[b]; e < f->off[b + 1]; e++) {
                ws += f->aw[e];
                for (int k = 0; k < nc; k++)
                    acc[k] += f->aw[e] * r->phi[(size_t)f->adj[e] * (size_t)nc + (size_t)k];
            }
        }
        for (int k = 0; k < nc && ws > 0; k++) {
            float x = fminf(cap[k], acc[k] / ws);
            change = fmaxf(change, fabsf(x - r->phi[g * (size_t)nc + (size_t)k]));
            for (size_t b = g; b != SIZE_MAX; b = f->nxt[b])
                r->phi[b * (size_t)nc + (size_t)k] = x;
        }
    }
    return change;
}

/* rows' w1: each cut body joint at w0 φ, what it loses on the parent. */
static void tb__cut_spread(const tb__chain_plan *c, const tb__seam_field *f, tb__band_rows *r)
{
    for (int it = 0; it < TB__SEAM_SWEEPS; it++)
        if (!(tb__cut_sweep(f, r) > 1e-6f))
            break;
    for (size_t b = 0; b < f->nb; b++) {
        float lost = 0;
        int at = -1;
        for (int i = 0; i < r->cnt[b]; i++) {
            size_t s = b * TB__ROW + (size_t)i;
            for (int k = 0; k < r->nc; k++)
                if (r->j[s] == r->cut[k]) {
                    float w = r->w0[s] * r->phi[b * (size_t)r->nc + (size_t)k];
                    lost += r->w1[s] - w;
                    r->w1[s] = w;
                }
            if (r->j[s] == (uint16_t)c->skP && r->w1[s] > 0)
                at = i;
        }
        if (at >= 0)
            r->w1[b * TB__ROW + (size_t)at] += lost;
    }
}

static void tb__blend_welded_collar(tb__apply *A, const tb__chain_plan *c, float band_seg, int ring)
{
    const tb_model *m = A->m;
    size_t n = c->nwelded;
    if (!n || !(band_seg > 0) || c->K <= 0)
        return;
    if (ring & 1)
        tb__blend_collar_ring(A, c);
    float band = band_seg * c->L / (float)c->K;
    /* The ring's common weights (choice, issue 13): the mean of the welded
     * collar's, as the ring above left them. The collar's share 1 − t of a
     * band vertex goes from the weights where it meets the collar (at g = 0)
     * to this mean (by t again): across the root a tail's left and right
     * sides meet the left and right thighs, and carrying each side's thigh
     * up the whole band bent Tail_1 skin against itself (synthetic
     * hang_welded_nearest, Sprint: tail max 1.32). The thigh-specific part
     * now fades as (1 − t)², the body's shared part as (1 − t); that shared
     * part is the mean's share on the chain's parent and its ancestors
     * (tb__ring_lineage). */
    uint16_t rj[TB__SLOTS + 32];
    float rw[TB__SLOTS + 32];
    int rn = 0;
    for (size_t k = 0; k < n; k++) {
        const uint16_t *cj;
        const float *cw;
        tb__collar_weights(A, c, k, &cj, &cw);
        tb__add_weights(rj, rw, &rn, TB__SLOTS + 32, cj, cw, TB__SLOTS, 1 / (float)n);
    }
    rn = tb__ring_lineage(m, c->skP, rj, rw, rn);
    tb__seam_field sf; /* out of memory: each vertex reads the collar alone */
    int relaxed = tb__seam_field_make(A, c, band, ring & 8 ? 2 : (ring & 2) != 0, &sf) == TB_OK;
    tb__band_rows rows; /* the cut spread over the band (ring & 8); out of memory: as given */
    int spread = relaxed && (ring & 8) && tb__band_rows_alloc(&rows, sf.nb);
    for (size_t q = 0; q < c->n; q++) {
        /* along the surface: a tail curling back past its root is not blended */
        float g = c->gb ? c->gb[q] : c->g[q];
        if (!(g < band))
            continue;
        size_t v = c->verts[q];
        float t = g / band;
        t = t * t * (3 - 2 * t);
        /* joint → weight: the chain's share t, then the collar's 1 − t;
         * keep the TB__SLOTS largest */
        uint16_t jj[TB__SLOTS + 32];
        float ww[TB__SLOTS + 32];
        int cnt = 0;
        for (int k = 0; k < TB__SLOTS; k++) {
            uint16_t j = A->nj[v * TB__SLOTS + (size_t)k];
            float w = A->nw[v * TB__SLOTS + (size_t)k];
            if (w > 0)
                jj[cnt] = j, ww[cnt++] = t * w;
        }
        /* the collar's own share: (1 − t)², or the whole 1 − t when carried
         * (ring & 4, a try of fix's search, TB__PLAN_COLLAR_CARRIED):
         * beside a thigh the collar's own weights are mostly the thigh's, and
         * the ring's lineage share moves the band off it while the thigh
         * flexes (synthetic beside_welded_leg, Crouch; docs/fix.md session
         * 15, second pass); the search keeps it only where it tears less */
        float own = ring & 4 ? 1 - t : (1 - t) * (1 - t);
        if (relaxed && sf.at[q] >= 0)
            for (int k = 0; k < sf.J; k++)
                tb__add_weights(jj, ww, &cnt, TB__SLOTS + 32, &sf.joint[k],
                                sf.S + (size_t)sf.at[q] * TB__SEAM_JOINTS + (size_t)k, 1, own);
        else
            tb__seam_weights(A, c, m->positions + v * 3, jj, ww, &cnt, TB__SLOTS + 32, own);
        if (!(ring & 4))
            tb__add_weights(jj, ww, &cnt, TB__SLOTS + 32, rj, rw, rn, (1 - t) * t);
        if (ring & 2)
            tb__fold_spine(m, c, jj, ww, cnt);
        size_t b = spread && sf.at[q] >= 0 ? (size_t)sf.at[q] : SIZE_MAX;
        if (b != SIZE_MAX) {
            rows.cnt[b] = cnt;
            memcpy(rows.j + b * TB__ROW, jj, (size_t)cnt * sizeof *jj);
            memcpy(rows.w0 + b * TB__ROW, ww, (size_t)cnt * sizeof *ww);
        }
        tb__fade_to_slots(c, jj, ww, cnt);
        if (b != SIZE_MAX)
            memcpy(rows.w1 + b * TB__ROW, ww, (size_t)cnt * sizeof *ww);
        tb__store_largest(A, v, jj, ww, cnt);
    }
    if (spread && tb__cut_setup(m, c, &sf, &rows)) {
        tb__cut_spread(c, &sf, &rows);
        for (size_t b = 0; b < sf.nb; b++)
            tb__store_largest(A, c->verts[sf.q[b]], rows.j + b * TB__ROW, rows.w1 + b * TB__ROW, rows.cnt[b]);
    }
    if (spread)
        tb__band_rows_free(&rows);
    if (relaxed)
        tb__sf_free(&sf);
    tb__unreached_keep_own(A, c);
}

/* Segmented tails (choice, beyond the article). Some characters are built
 * from rigid pieces, every vertex on one bone, and their tail is a row of
 * separate pieces too (vertebrae, rings, tufts: welded shells that touch
 * nothing else). Smooth chain weights bend each piece like rubber; the
 * rigger's own style — and what keeps every piece undeformed — is one bone
 * per piece. When every vertex of the tail lies in such a piece and no piece
 * spans more than piece_span_max of the chain, each piece is bound 1.0 to
 * the bone holding most of its smooth weight (its joints still swing it).
 * A tail with one continuous shell, or welded into the body, keeps the
 * smooth weights. Fills a->piece_span; sets a->rigid_pieces. */
static tb_result tb__bind_pieces(tb__apply *A, tb_appendage *a, const tb__app_work *aw, const float *gcs, int skP,
                                 int sk0, tb_error *err)
{
    size_t P = aw->piece_count;
    a->piece_span = 0;
    a->rigid_pieces = 0;
    if (!a->pieces_cover || P < 1 || !(a->length > 0))
        return TB_OK;
    int K = a->bone_count, nb = K + 1; /* slot 0: the parent, 1..K: Tail_1..Tail_K */
    float *lo = malloc(P * sizeof *lo), *hi = malloc(P * sizeof *hi);
    double *mass = calloc(P * (size_t)nb, sizeof *mass);
    tb_result r = TB_OK;
    if (!lo || !hi || !mass) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    for (size_t p = 0; p < P; p++)
        lo[p] = INFINITY, hi[p] = -INFINITY;
    for (size_t q = 0; q < aw->rw_count; q++) {
        size_t p = aw->rw_piece[q], v = aw->rw_verts[q];
        lo[p] = gcs[q] < lo[p] ? gcs[q] : lo[p];
        hi[p] = gcs[q] > hi[p] ? gcs[q] : hi[p];
        for (int k = 0; k < TB__SLOTS; k++) {
            int j = A->nj[v * TB__SLOTS + (size_t)k];
            int slot = j == skP ? 0 : j - sk0 + 1;
            if (slot >= 0 && slot < nb)
                mass[p * (size_t)nb + (size_t)slot] += A->nw[v * TB__SLOTS + (size_t)k];
        }
    }
    float span = 0;
    for (size_t p = 0; p < P; p++)
        span = hi[p] - lo[p] > span ? hi[p] - lo[p] : span;
    a->piece_span = span / a->length;
    size_t used = strlen(a->reason);
    if (P < 2) {
        /* one continuous shell: the smooth chain weights */
    } else if (!A->smooth_pieces && a->piece_span <= A->piece_span_max && A->body_single >= A->rigid_body_min) {
        a->rigid_pieces = 1;
        snprintf(a->reason + used, sizeof a->reason - used,
                 "; segmented: %zu separate pieces, longest %.2f L <= %.2f, body %.0f%% on one bone each: "
                 "one bone per piece",
                 P, (double)a->piece_span, (double)A->piece_span_max, 100.0 * (double)A->body_single);
        for (size_t q = 0; q < aw->rw_count; q++) {
            size_t p = aw->rw_piece[q], v = aw->rw_verts[q];
            int best = 0;
            for (int b = 1; b < nb; b++)
                if (mass[p * (size_t)nb + (size_t)b] > mass[p * (size_t)nb + (size_t)best])
                    best = b;
            tb__set_single(A, v, (uint16_t)(best == 0 ? skP : sk0 + best - 1));
        }
    } else {
        snprintf(a->reason + used, sizeof a->reason - used,
                 "; %zu separate pieces, longest %.2f L, body %.0f%% on one bone each%s: smooth weights", P,
                 (double)a->piece_span, 100.0 * (double)A->body_single,
                 A->smooth_pieces ? " (--smooth-pieces)" : "");
    }
done:
    free(lo);
    free(hi);
    free(mass);
    return r;
}

/* Where each model vertex lies in verts (ascending, n of them): its index
 * + 1, 0 for a vertex not in it (the first of equal entries, as a
 * lower-bound search finds it); *span = verts[n - 1] + 1 entries. One
 * look-up an edge end instead of a binary search. NULL: none (n = 0) or out
 * of memory. */
static uint32_t *tb__vert_slots(const uint32_t *verts, size_t n, size_t *span)
{
    *span = n ? (size_t)verts[n - 1] + 1 : 0;
    uint32_t *at = n ? calloc(*span, sizeof *at) : NULL;
    for (size_t q = n; at && q-- > 0;)
        at[verts[q]] = (uint32_t)(q + 1);
    return at;
}

/* Edge e's ends (lo << 32 | hi) in verts through slot (tb__vert_slots):
 * 1 with their indices in *ia, *ib when both are there. */
static int tb__edge_ends(const uint32_t *slot, size_t span, uint64_t e, size_t *ia, size_t *ib)
{
    uint32_t a = (uint32_t)(e >> 32), b = (uint32_t)(e & 0xffffffffu);
    if (a >= span || b >= span || !slot[a] || !slot[b])
        return 0;
    *ia = slot[a] - 1;
    *ib = slot[b] - 1;
    return 1;
}

/* The 75th percentile of |x[a] − x[b]| over the mesh edges with both ends
 * among verts (ascending model vertices, x per vert; b's place not before
 * a's): along a tube, the spacing of its rings (an edge round a ring barely
 * moves along it, one along the tail or across a quad moves one ring
 * spacing: two edges in three on a triangulated tube). 0 when no edge. */
static float tb__edge_spread(const uint32_t *verts, const float *x, size_t n, const uint64_t *edges, size_t ne)
{
    size_t cap = 0, cnt = 0, span, ia, ib;
    float *dg = NULL;
    uint32_t *slot = tb__vert_slots(verts, n, &span);
    for (size_t e = 0; slot && e < ne; e++) {
        if (!tb__edge_ends(slot, span, edges[e], &ia, &ib) || ib < ia || !isfinite(x[ia]) || !isfinite(x[ib]))
            continue;
        if (cnt == cap) {
            cap = cap ? cap * 2 : 1024;
            float *nd = realloc(dg, cap * sizeof *nd);
            if (!nd)
                break;
            dg = nd;
        }
        dg[cnt++] = fabsf(x[ia] - x[ib]);
    }
    float r = dg && cnt ? tb_measure_percentile(dg, cnt, 0.75) : 0;
    free(dg);
    free(slot);
    return r;
}

/* The tail's geometry its blend is sized from (choice, issue 13). ring:
 * how far apart the tail's rings lie along the chain, the 75th percentile
 * of |change of chain coordinate| over the tail's own edges (an edge round
 * a ring barely moves along the chain, one along the tail or across a quad
 * moves one ring spacing: on a triangulated tube two edges in three do).
 * radius: the 75th percentile of the skin's distance from the joint
 * polyline J_0..J_K (the thick part near the root counts most). */
static void tb__chain_geometry(tb__chain_plan *c, const tb_model *m, const uint64_t *edges, size_t ne,
                               const float (*J)[3])
{
    c->ring = 0;
    c->radius = 0;
    if (c->n == 0)
        return;
    float *d = malloc((c->n + 1) * sizeof *d);
    if (d) {
        for (size_t q = 0; q < c->n; q++) {
            const float *p = m->positions + (size_t)c->verts[q] * 3;
            float best = INFINITY;
            for (int k = 0; k < c->K; k++) {
                const float *a = J[k], *b = J[k + 1];
                float ab[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, ap[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
                float l2 = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
                float t = l2 > 0 ? (ap[0] * ab[0] + ap[1] * ab[1] + ap[2] * ab[2]) / l2 : 0;
                t = t < 0 ? 0 : t > 1 ? 1 : t;
                float e[3] = {ap[0] - t * ab[0], ap[1] - t * ab[1], ap[2] - t * ab[2]};
                float dd = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
                best = dd < best ? dd : best;
            }
            d[q] = sqrtf(best);
        }
        c->radius = tb_measure_percentile(d, c->n, 0.75);
        free(d);
    }
    c->ring = tb__edge_spread(c->verts, c->gc, c->n, edges, ne);
}

/* Every copy of the welded collar (choice, issue 13). Detection lists one
 * model vertex per welded collar position, but a position can hold several:
 * the body's vertex and the welded tail's own root ring (a tail modelled as
 * a separate primitive whose root vertices lie on the body's), or a body
 * vertex split at a UV or normal seam. Moving one copy and not the others
 * (the collar ring halfway, tb__blend_collar_ring) opens the surface
 * between vertices that share a position — a crack no edge measures, since
 * the copies share no triangle — and tears the copy's own edges (synthetic
 * beside_welded_leg, Sprint: the tail's root ring to its next ring 2.0, in
 * the body group). So the copies at each collar position (within the weld
 * distance, 1e-5 H) not already reweighted are appended to c->welded, each
 * with its own weights; c->nwelded counts them all. O(V * positions). */
static tb_result tb__collar_copies(tb__chain_plan *c, const tb_model *m, const uint8_t *changed)
{
    size_t n0 = c->nwelded, cap = n0 + 1;
    if (!n0)
        return TB_OK;
    float eps = 1e-5f * (m->height > 0 ? m->height : 1), e2 = eps * eps;
    for (size_t v = 0; v < m->vertex_count; v++) {
        if (changed[v])
            continue;
        const float *p = m->positions + v * 3;
        for (size_t k = 0; k < n0; k++) {
            size_t w = c->welded[k];
            const float *q = m->positions + w * 3;
            float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
            if (w == v || !(dx * dx + dy * dy + dz * dz <= e2))
                continue;
            if (c->nwelded + 1 >= cap) {
                size_t nc = cap * 2 > c->nwelded + 2 ? cap * 2 : c->nwelded + 2;
                uint32_t *nw = realloc(c->welded, nc * sizeof *nw);
                if (!nw)
                    return TB_ERR_OOM;
                c->welded = nw;
                cap = nc;
            }
            c->welded[c->nwelded++] = (uint32_t)v;
            break;
        }
    }
    return TB_OK;
}

/* Index of model vertex v in c->verts (ascending), SIZE_MAX when absent. */
static size_t tb__plan_index(const tb__chain_plan *c, uint32_t v)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->verts[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->n && c->verts[lo] == v ? lo : SIZE_MAX;
}

/* Dijkstra over the tail's own edges (CSR off/adj of indices into c->verts)
 * from the distances already in d (INFINITY elsewhere). */
static tb_result tb__seam_dijkstra(const tb__chain_plan *c, const tb_model *m, const size_t *off, const uint32_t *adj,
                                   float *d)
{
    size_t cap = c->n + 1, hn = 0;
    struct hent {
        float d;
        uint32_t i;
    } *h = malloc(cap * sizeof *h);
    if (!h)
        return TB_ERR_OOM;
    for (size_t q = 0; q < c->n; q++) { /* the seeds */
        if (isfinite(d[q])) {
            size_t i = hn++;
            while (i > 0 && h[(i - 1) / 2].d > d[q]) {
                h[i] = h[(i - 1) / 2];
                i = (i - 1) / 2;
            }
            h[i] = (struct hent){d[q], (uint32_t)q};
        }
    }
    while (hn > 0) {
        struct hent top = h[0], last = h[--hn];
        size_t i = 0;
        for (;;) { /* sift the last entry down from the root */
            size_t k = 2 * i + 1;
            if (k >= hn)
                break;
            if (k + 1 < hn && h[k + 1].d < h[k].d)
                k++;
            if (!(h[k].d < last.d))
                break;
            h[i] = h[k];
            i = k;
        }
        if (hn > 0)
            h[i] = last;
        if (top.d > d[top.i])
            continue; /* stale */
        const float *p = m->positions + (size_t)c->verts[top.i] * 3;
        for (size_t e = off[top.i]; e < off[top.i + 1]; e++) {
            uint32_t o = adj[e];
            float nd = top.d + tb__dist3(p, m->positions + (size_t)c->verts[o] * 3);
            if (!(nd < d[o]))
                continue;
            d[o] = nd;
            if (hn == cap) {
                cap *= 2;
                struct hent *nh = realloc(h, cap * sizeof *nh);
                if (!nh) {
                    free(h);
                    return TB_ERR_OOM;
                }
                h = nh;
            }
            size_t j = hn++;
            while (j > 0 && h[(j - 1) / 2].d > nd) {
                h[j] = h[(j - 1) / 2];
                j = (j - 1) / 2;
            }
            h[j] = (struct hent){nd, o};
        }
    }
    free(h);
    return TB_OK;
}

/* Where the tail meets untouched skin (choice, issue 13). The collar band
 * blends from the welded collar that detection found, over the geodesic g
 * from it. When the tail's vertex set also shares edges with untouched body
 * skin elsewhere — a root ring welded onto body vertices that detection took
 * into the tail (the Xbot's back_lowpoly_nearest), or a weld ring only partly
 * inside it (the Soldier's welded tails: a tail vertex one edge from a weld
 * ring vertex left to the body sat at g = 1 segment, Tail_1 0.30 and Tail_2
 * 0.18 beside Hips 0.77, and that edge tore at 24 of 24 instants) — the
 * weights there went from the chain's to the body's in one edge. So every
 * untouched vertex sharing an edge with the tail is a collar vertex too (the
 * band blends from its own weights), and the band's distance is the nearer
 * of g and the distance along the tail's edges to such a vertex. A tail whose
 * only untouched neighbours are its detected collar is weighted as before.
 * Adds to c->welded (before tb__collar_copies); sets c->gb when any were
 * added. */
static tb_result tb__seam_collar(tb__chain_plan *c, const tb__apply *A, const tb_model *m)
{
    const uint64_t *edges = A->edges;
    size_t ne = A->edge_count, V = m->vertex_count, added = 0;
    uint8_t *in = calloc(V + 1, 1); /* 1: in the tail, 2: its detected collar, 3: added */
    size_t *off = calloc(c->n + 2, sizeof *off);
    float *d = malloc((c->n + 1) * sizeof *d);
    uint32_t *adj = NULL;
    tb_result r = in && off && d ? TB_OK : TB_ERR_OOM;
    for (size_t q = 0; r == TB_OK && q < c->n; q++)
        in[c->verts[q]] = 1, d[q] = INFINITY;
    for (size_t k = 0; r == TB_OK && k < c->nwelded; k++)
        in[c->welded[k]] = 2;
    for (size_t e = 0; r == TB_OK && e < ne; e++) {
        uint32_t a = (uint32_t)(edges[e] >> 32), b = (uint32_t)(edges[e] & 0xffffffffu);
        if (a >= V || b >= V || (in[a] == 1) == (in[b] == 1))
            continue;
        uint32_t t = in[a] == 1 ? a : b, u = in[a] == 1 ? b : a;
        /* 2: the detected collar (g measures from it); reweighted: not body */
        if (in[u] == 2 || (in[u] == 0 && A->changed[u]))
            continue;
        if (in[u] == 0) { /* 3: added here */
            uint32_t *nw = realloc(c->welded, (c->nwelded + 2) * sizeof *nw);
            if (!nw) {
                r = TB_ERR_OOM;
                break;
            }
            c->welded = nw;
            c->welded[c->nwelded++] = u;
            in[u] = 3;
            added++;
        }
        size_t qi = tb__plan_index(c, t);
        float len = tb__dist3(m->positions + (size_t)t * 3, m->positions + (size_t)u * 3);
        if (qi != SIZE_MAX && len < d[qi])
            d[qi] = len;
    }
    if (r == TB_OK && added) {
        for (size_t e = 0; e < ne; e++) { /* the tail's own edges, both ways */
            uint32_t a = (uint32_t)(edges[e] >> 32), b = (uint32_t)(edges[e] & 0xffffffffu);
            if (a < V && b < V && in[a] == 1 && in[b] == 1)
                off[tb__plan_index(c, a) + 1]++, off[tb__plan_index(c, b) + 1]++;
        }
        for (size_t q = 0; q < c->n; q++)
            off[q + 1] += off[q];
        adj = malloc((off[c->n] + 1) * sizeof *adj);
        size_t *fill = malloc((c->n + 1) * sizeof *fill);
        r = adj && fill ? TB_OK : TB_ERR_OOM;
        if (r == TB_OK) {
            memcpy(fill, off, c->n * sizeof *fill);
            for (size_t e = 0; e < ne; e++) {
                uint32_t a = (uint32_t)(edges[e] >> 32), b = (uint32_t)(edges[e] & 0xffffffffu);
                if (a >= V || b >= V || in[a] != 1 || in[b] != 1)
                    continue;
                size_t ia = tb__plan_index(c, a), ib = tb__plan_index(c, b);
                adj[fill[ia]++] = (uint32_t)ib;
                adj[fill[ib]++] = (uint32_t)ia;
            }
            r = tb__seam_dijkstra(c, m, off, adj, d);
        }
        free(fill);
        for (size_t q = 0; r == TB_OK && q < c->n; q++)
            d[q] = d[q] < c->g[q] ? d[q] : c->g[q];
        if (r == TB_OK) {
            c->gb = d;
            d = NULL;
        }
    }
    free(in);
    free(off);
    free(adj);
    free(d);
    return r;
}

/* K from the mesh (choice, issue 13): no more bones than the rings can
 * follow. A segment needs two rings, one inside each half of its blend; a
 * tail with fewer (a low-poly tail, rings far apart for its length) gets
 * fewer, longer bones — at least 2 — placed as SPEC A9 places joints
 * (centroid of the skin within half a segment of i·L/K, empty stations
 * interpolated, two smoothing passes). Ring spacing here is measured on the
 * geodesic g (the chain coordinate needs the joints). */
static void tb__fit_bones_to_rings(tb_appendage *a, const tb__app_work *aw, const tb_model *m, const uint64_t *edges,
                                   size_t ne)
{
    int K = a->bone_count;
    float L = a->length;
    if (K <= 2 || !(L > 0))
        return;
    float ring = tb__edge_spread(aw->rw_verts, aw->rw_g, aw->rw_count, edges, ne);
    if (!(ring > 0))
        return;
    float fit = floorf(L / (2 * ring));
    int K2 = fit < 2 ? 2 : fit >= (float)K ? K : (int)fit;
    if (K2 >= K)
        return;
    float seg = L / (float)K2;
    double acc[TB_TAIL_MAX_BONES + 1][4];
    memset(acc, 0, sizeof acc);
    for (size_t q = 0; q < aw->rw_count; q++) {
        float g = aw->rw_g[q];
        if (!isfinite(g))
            continue;
        int i = (int)floorf(g / seg + 0.5f);
        if (i < 1 || i > K2 || fabsf(g - (float)i * seg) > seg / 2)
            continue;
        const float *p = m->positions + (size_t)aw->rw_verts[q] * 3;
        acc[i][0] += p[0], acc[i][1] += p[1], acc[i][2] += p[2], acc[i][3] += 1;
    }
    float J[TB_TAIL_MAX_BONES + 1][3];
    int have[TB_TAIL_MAX_BONES + 1] = {1};
    memcpy(J[0], a->chain_joints[0], sizeof J[0]);
    for (int i = 1; i <= K2; i++)
        if (acc[i][3] > 0) {
            for (int x = 0; x < 3; x++)
                J[i][x] = (float)(acc[i][x] / acc[i][3]);
            have[i] = 1;
        }
    for (int i = 1; i <= K2; i++) {
        if (have[i])
            continue;
        int lo = i - 1, hi = i + 1;
        while (hi <= K2 && !have[hi])
            hi++;
        for (int x = 0; x < 3; x++)
            J[i][x] = hi <= K2 ? J[lo][x] + (J[hi][x] - J[lo][x]) / (float)(hi - lo) : J[lo][x];
        have[i] = 1;
    }
    for (int pass = 0; pass < 2; pass++) {
        float P[TB_TAIL_MAX_BONES + 1][3];
        memcpy(P, J, sizeof P);
        for (int i = 1; i < K2; i++)
            for (int x = 0; x < 3; x++)
                J[i][x] = 0.5f * P[i][x] + 0.25f * (P[i - 1][x] + P[i + 1][x]);
    }
    memset(a->chain_joints, 0, sizeof a->chain_joints);
    memcpy(a->chain_joints, J, (size_t)(K2 + 1) * sizeof J[0]);
    a->bone_count = K2;
    size_t used = strlen(a->reason);
    snprintf(a->reason + used, sizeof a->reason - used,
             "; %d bones, not %d: its rings lie %.2f L apart, and a segment needs two (no more bones than the "
             "rings can follow)",
             K2, K, (double)(ring / L));
}

#define TB__BEND_LIMIT_RAD 0.5235988f /* SPEC B's bend limit, 30 degrees */
#define TB__CHAIN_STRAIN 0.18f        /* SPEC C's chain row: p99 1.18 */

/* The blend zone (half-width around a joint, segments) for a chain: the
 * requested one, raised by the tail's geometry unless pinned (issue 13):
 * - rings: at least 1.25 ring spacings either side of a joint, so a ring
 *   sits inside each ramp (a low-poly tail with two rings per segment has
 *   none inside the SPEC's quarter segment: its joints crease);
 * - thickness: a joint bent by θ shortens its inner side by about r·θ over
 *   the blend's 2h, so h >= r·θ / (2·0.18) keeps the inner side within the
 *   chain row's 18% at SPEC B's bend limit (30°).
 * At most 0.5 (linear across whole segments). */
static float tb__zone_for(const tb__chain_plan *c, float zone, int autoz)
{
    float seg = c->K > 0 ? c->L / (float)c->K : 0;
    if (!autoz || !(seg > 0))
        return zone;
    float z = zone, zr = 1.25f * c->ring / seg, zt = c->radius * TB__BEND_LIMIT_RAD / (2 * TB__CHAIN_STRAIN) / seg;
    z = zr > z ? zr : z;
    z = zt > z ? zt : z;
    return z > 0.5f ? 0.5f : z;
}

/* The collar band (segments) on a welded tail: the requested one, at least
 * two ring spacings unless pinned (a band shorter than a ring holds no
 * vertex, and the seam goes from the body's weights to the chain's in one
 * edge), at most 2 segments. */
static float tb__band_for(const tb__chain_plan *c, float band, int autob)
{
    float seg = c->K > 0 ? c->L / (float)c->K : 0;
    if (!autob || !(band > 0) || !(seg > 0))
        return band;
    float b = 2 * c->ring / seg;
    b = b > band ? b : band;
    return b > 2 ? 2 : b;
}

/* How steep the chain's weights actually are (choice, issue 13): the
 * steepest change of a chain bone's weight (the parent's or a Tail_k's)
 * along the tail, over the tail's own edges that run along it (chain
 * coordinates at least half a ring spacing apart: an edge round a ring
 * says nothing about a ramp along the tail), per segment, read as the zone
 * of the plain ramp with that slope, 0.5 / slope (segments). SPEC A9's
 * ramp of zone z reads exactly z (its weights are piecewise linear in the
 * chain coordinate); the welded collar's band blends over the geodesic g
 * and scales the chain's weights by its smoothstep, so where it reaches a
 * joint's ramp it makes it steeper (on the Xbot's up_welded_hips+vest,
 * zone 0.44 and band 2 segments: Tail_2 0.41 -> 0.78 over one ring at
 * joint 1, a ramp of zone 0.31) and the joint carries less bend than the
 * zone says. The solver fit bounds the bend from the bind pose by what the
 * steepest ramp carries (fix.c, tb__solver_fit). 0 when no edge runs
 * along the tail. */
static float tb__chain_ramp_zone(const tb__apply *A, const tb__chain_plan *c)
{
    float seg = c->K > 0 ? c->L / (float)c->K : 0;
    float slope = 0;
    for (size_t e = 0; seg > 0 && e < c->nalong; e++) {
        size_t ia = c->along[2 * e], ib = c->along[2 * e + 1], a = c->verts[ia], b = c->verts[ib];
        float dg = fabsf(c->gc[ia] - c->gc[ib]);
        for (int bone = -1; bone < c->K; bone++) { /* -1: the parent */
            uint16_t j = (uint16_t)(bone < 0 ? c->skP : c->sk0 + bone);
            float wa = 0, wb = 0;
            for (int k = 0; k < TB__SLOTS; k++) {
                if (A->nj[a * TB__SLOTS + (size_t)k] == j)
                    wa += A->nw[a * TB__SLOTS + (size_t)k];
                if (A->nj[b * TB__SLOTS + (size_t)k] == j)
                    wb += A->nw[b * TB__SLOTS + (size_t)k];
            }
            float sl = fabsf(wa - wb) * seg / dg;
            slope = sl > slope ? sl : slope;
        }
    }
    return slope > 0 ? 0.5f / slope : 0;
}

/* The tail's own edges that run along it (tb__chain_ramp_zone): both ends
 * among c->verts, chain coordinates at least half a ring spacing apart;
 * kept as pairs of indices into c->verts. */
static tb_result tb__chain_along_edges(tb__chain_plan *c, const uint64_t *edges, size_t ne)
{
    size_t cap = 0, span = 0, at[2];
    c->nalong = 0;
    uint32_t *slot = c->ring > 0 ? tb__vert_slots(c->verts, c->n, &span) : NULL;
    if (c->ring > 0 && c->n && !slot)
        return TB_ERR_OOM;
    for (size_t e = 0; slot && e < ne; e++) {
        if (!tb__edge_ends(slot, span, edges[e], &at[0], &at[1]) ||
            !(fabsf(c->gc[at[0]] - c->gc[at[1]]) >= 0.5f * c->ring))
            continue;
        if (c->nalong == cap) {
            cap = cap ? cap * 2 : 256;
            uint32_t *na = realloc(c->along, 2 * cap * sizeof *na);
            if (!na) {
                free(slot);
                return TB_ERR_OOM;
            }
            c->along = na;
        }
        c->along[2 * c->nalong] = (uint32_t)at[0];
        c->along[2 * c->nalong + 1] = (uint32_t)at[1];
        c->nalong++;
    }
    free(slot);
    return TB_OK;
}

/* SPEC A9 weights of a chain's vertices for blend zone `zone`, then the
 * welded collar's blend over `band` (0: none). */
static void tb__chain_plan_fill(tb__apply *A, const tb__chain_plan *c, float zone, float band, int ring)
{
    for (size_t q = 0; q < c->n; q++) {
        size_t v = c->verts[q];
        uint16_t jj[TB__SLOTS] = {0}; /* tb__chain_weights writes at most 3 */
        float ww[TB__SLOTS] = {0};
        int n = tb__chain_weights(c->gc[q], c->L, c->K, zone, c->skP, c->sk0, jj, ww);
        A->changed[v] = 1;
        for (int k = 0; k < TB__SLOTS; k++) {
            A->nj[v * TB__SLOTS + (size_t)k] = k < n ? jj[k] : 0;
            A->nw[v * TB__SLOTS + (size_t)k] = k < n ? ww[k] : 0;
        }
    }
    tb__blend_welded_collar(A, c, band, ring);
}

/* One tb__apply_all: the document's arrays it appends to and the skin's
 * inverse bind matrices, old and new. */
typedef struct tb__aa_job {
    tb__apply *A;
    const tb_model *m;
    json_t *nodes, *skin, *skin_joints;
    int *sk_of;          /* skeleton joint → our skin joint, -1: none */
    float (*ibm)[16];    /* the skin's inverse bind matrices, the new joints' after */
    size_t ibm_cap, ibm_n;
    int used[26];        /* chain letters taken (Tail_, TailB_, …) */
} tb__aa_job;

/* ---- plan: the skin joint of every joint, the matrices, the free letters - */

static tb_result tb__aa_setup(tb__aa_job *j, tb_error *err)
{
    const tb_model *m = j->m;
    json_t *root = j->A->root;
    j->nodes = json_object_get(root, "nodes");
    j->skin = json_array_get(json_object_get(root, "skins"), (size_t)m->skin);
    j->skin_joints = json_object_get(j->skin, "joints");
    int J = m->skel.joint_count;
    j->sk_of = malloc(((size_t)J + 1) * sizeof *j->sk_of);
    j->ibm_cap = (size_t)m->skin_joint_count + 64, j->ibm_n = (size_t)m->skin_joint_count;
    j->ibm = malloc(j->ibm_cap * sizeof *j->ibm);
    if (!j->sk_of || !j->ibm)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    memcpy(j->ibm, m->inverse_bind, j->ibm_n * sizeof *j->ibm);
    for (int i = 0; i < J; i++)
        j->sk_of[i] = -1;
    for (int k = m->skin_joint_count - 1; k >= 0; k--)
        j->sk_of[m->skin_joints[k]] = k;
    for (int i = 0; i < J; i++) {
        int c, n;
        if (tb_tail_name_parse(m->skel.names[i], &c, &n))
            j->used[c] = 1;
    }
    return TB_OK;
}

/* ---- joints: Tail_1…Tail_K and Tail_End under the parent, their matrices - */

static tb_result tb__aa_joints(tb__aa_job *j, const tb_appendage *a, int P, int letter, tb_error *err)
{
    const tb_model *m = j->m;
    int K = a->bone_count;
    int n0 = (int)json_array_size(j->nodes);
    if (j->ibm_n + (size_t)K + 1 > j->ibm_cap) {
        j->ibm_cap = j->ibm_n + (size_t)K + 65;
        float(*ni)[16] = realloc(j->ibm, j->ibm_cap * sizeof *j->ibm);
        if (!ni)
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        j->ibm = ni;
    }
    /* Every tail joint shares the parent's bind rotation and scale (the
     * armature's too): W_i = W_P with its origin moved to J_i. */
    float WP[16], prevW[16];
    memcpy(WP, m->skel.bind_world[P], sizeof WP);
    memcpy(prevW, WP, sizeof prevW);
    for (int i = 0; i <= K; i++) {
        float Wi[16], inv[16], local[16];
        memcpy(Wi, WP, sizeof Wi);
        Wi[12] = a->chain_joints[i][0], Wi[13] = a->chain_joints[i][1], Wi[14] = a->chain_joints[i][2];
        glm_mat4_inv((vec4 *)prevW, (vec4 *)inv);
        tb_mat4_mul(local, inv, Wi); /* pure translation in the parent's frame */
        glm_mat4_inv((vec4 *)Wi, (vec4 *)j->ibm[j->ibm_n++]);
        char name[32];
        tb_tail_name_format(name, sizeof name, letter, i < K ? i + 1 : 0);
        json_t *nd = json_object();
        json_object_set_new(nd, "name", json_string(name));
        json_t *t = json_array();
        for (int c = 0; c < 3; c++)
            json_array_append_new(t, json_real((double)local[12 + c]));
        json_object_set_new(nd, "translation", t);
        if (i < K) {
            json_t *ch = json_array();
            json_array_append_new(ch, json_integer(n0 + i + 1));
            json_object_set_new(nd, "children", ch);
        }
        json_array_append_new(j->nodes, nd);
        json_array_append_new(j->skin_joints, json_integer(n0 + i));
        memcpy(prevW, Wi, sizeof prevW);
    }
    json_t *pn = json_array_get(j->nodes, (size_t)m->node_of_joint[P]);
    json_t *pch = json_object_get(pn, "children");
    if (!json_is_array(pch)) {
        pch = json_array();
        json_object_set_new(pn, "children", pch);
    }
    json_array_append_new(pch, json_integer(n0));
    return TB_OK;
}

/* ---- weights: SPEC A9 along the chain, the pieces, the welded collar ----- */

/* The chain's plan (what its weights are computed from): its vertices,
 * their geodesic and chain coordinates, their own weights before the
 * repair (for the honest seam, tb__weight_plan_changed), the tail's
 * geometry and its edges along it. */
static tb_result tb__aa_chain_plan(tb__aa_job *j, int ai, const tb_appendage *a, const tb__app_work *aw, int skP,
                                   int sk0, tb__chain_plan *c, tb_error *err)
{
    tb__apply *A = j->A;
    const tb_model *m = j->m;
    memset(c, 0, sizeof *c);
    c->app = ai;
    c->n = aw->rw_count;
    c->K = a->bone_count;
    c->L = a->length;
    c->skP = skP;
    c->sk0 = sk0;
    c->verts = malloc((c->n + 1) * sizeof *c->verts);
    c->g = malloc((c->n + 1) * sizeof *c->g);
    c->gc = malloc((c->n + 1) * sizeof *c->gc);
    c->welded = malloc((aw->collar_count + 1) * sizeof *c->welded);
    c->oj = malloc((c->n * TB__SLOTS + 1) * sizeof *c->oj);
    c->ow = malloc((c->n * TB__SLOTS + 1) * sizeof *c->ow);
    if (!c->verts || !c->g || !c->gc || !c->welded || !c->oj || !c->ow)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    memcpy(c->verts, aw->rw_verts, c->n * sizeof *c->verts);
    memcpy(c->g, aw->rw_g, c->n * sizeof *c->g);
    for (size_t q = 0; q < c->n; q++)
        tb__top_weights(m, c->verts[q], c->oj + q * TB__SLOTS, c->ow + q * TB__SLOTS);
    for (size_t q = 0; q < c->n; q++)
        c->gc[q] = tb__chain_coordinate(c->g[q], c->L, c->K, (const float(*)[3])a->chain_joints,
                                        m->positions + (size_t)c->verts[q] * 3);
    tb__chain_geometry(c, m, A->edges, A->edge_count, (const float(*)[3])a->chain_joints);
    if (tb__chain_along_edges(c, A->edges, A->edge_count) != TB_OK)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    return TB_OK;
}

/* A welded tail's collar: the untouched vertices it meets (tb__seam_collar,
 * tb__collar_copies) with their own (body) weights, and the band blending
 * from them to the chain's. */
static int tb__same_point(const float *a, const float *b, float eps)
{
    return fabsf(a[0] - b[0]) <= eps && fabsf(a[1] - b[1]) <= eps && fabsf(a[2] - b[2]) <= eps;
}

/* Whether collar edge (ka, kb) lies where one of the first `upto` kept lies
 * (copies of one stretch of the seam). */
static int tb__segment_seen(const tb__chain_plan *c, const tb_model *m, uint32_t ka, uint32_t kb, size_t upto,
                            float eps)
{
    const float *a = m->positions + (size_t)c->welded[ka] * 3, *b = m->positions + (size_t)c->welded[kb] * 3;
    for (size_t i = 0; i < upto; i++) {
        const float *x = m->positions + (size_t)c->welded[c->cseg[2 * i]] * 3;
        const float *y = m->positions + (size_t)c->welded[c->cseg[2 * i + 1]] * 3;
        if ((tb__same_point(a, x, eps) && tb__same_point(b, y, eps)) ||
            (tb__same_point(a, y, eps) && tb__same_point(b, x, eps)))
            return 1;
    }
    return 0;
}

/* The collar as a curve (tb__seam_weights): the model's edges with
 * both ends among c->welded, as pairs of indices into it, one per stretch
 * of the surface (copies dropped); the collar vertices where no such edge
 * lies, one per point, as c->cpt; the edges' mean length. */
static tb_result tb__collar_segments(tb__chain_plan *c, const tb__apply *A)
{
    const tb_model *m = A->m;
    size_t V = m->vertex_count, cap = 0;
    float eps = 1e-5f * (m->height > 0 ? m->height : 1), sum = 0;
    uint32_t *at = malloc((V + 1) * sizeof *at);
    c->cpt = malloc((c->nwelded + 1) * sizeof *c->cpt);
    if (!at || !c->cpt) {
        free(at);
        return TB_ERR_OOM;
    }
    for (size_t v = 0; v < V; v++)
        at[v] = UINT32_MAX;
    for (size_t k = c->nwelded; k-- > 0;)
        at[c->welded[k]] = (uint32_t)k;
    c->ncseg = c->ncpt = 0;
    for (size_t e = 0; e < A->edge_count; e++) {
        uint32_t a = (uint32_t)(A->edges[e] >> 32), b = (uint32_t)(A->edges[e] & 0xffffffffu);
        if (a >= V || b >= V || at[a] == UINT32_MAX || at[b] == UINT32_MAX ||
            tb__segment_seen(c, m, at[a], at[b], c->ncseg, eps))
            continue;
        if (c->ncseg == cap) {
            cap = cap ? cap * 2 : 64;
            uint32_t *ns = realloc(c->cseg, 2 * cap * sizeof *ns);
            if (!ns) {
                free(at);
                return TB_ERR_OOM;
            }
            c->cseg = ns;
        }
        c->cseg[2 * c->ncseg] = at[a];
        c->cseg[2 * c->ncseg + 1] = at[b];
        sum += tb__dist3(m->positions + (size_t)a * 3, m->positions + (size_t)b * 3);
        c->ncseg++;
    }
    c->cseg_mean = c->ncseg ? sum / (float)c->ncseg : 0;
    for (size_t k = 0; k < c->nwelded; k++) {
        const float *p = m->positions + (size_t)c->welded[k] * 3;
        int on = 0;
        for (size_t i = 0; i < 2 * c->ncseg && !on; i++)
            on = tb__same_point(p, m->positions + (size_t)c->welded[c->cseg[i]] * 3, eps);
        for (size_t i = 0; i < c->ncpt && !on; i++)
            on = tb__same_point(p, m->positions + (size_t)c->welded[c->cpt[i]] * 3, eps);
        if (!on)
            c->cpt[c->ncpt++] = (uint32_t)k;
    }
    free(at);
    return TB_OK;
}

/* The tail's own edges (both ends among c->verts), kept in the plan as
 * pairs of indices into c->verts: the band's seam weights relax over them
 * on every try of the search (tb__seam_field), which has no edge list. */
static tb_result tb__own_edges(tb__chain_plan *c, const tb__apply *A)
{
    for (int pass = 0; pass < 2; pass++) { /* count, then fill */
        size_t k = 0;
        for (size_t e = 0; e < A->edge_count; e++) {
            uint32_t a = (uint32_t)(A->edges[e] >> 32), b = (uint32_t)(A->edges[e] & 0xffffffffu);
            size_t qa = a < A->V ? tb__plan_index(c, a) : SIZE_MAX, qb = b < A->V ? tb__plan_index(c, b) : SIZE_MAX;
            if (qa == SIZE_MAX || qb == SIZE_MAX)
                continue;
            if (pass)
                c->own[2 * k] = (uint32_t)qa, c->own[2 * k + 1] = (uint32_t)qb;
            k++;
        }
        if (!pass && !(c->own = malloc((2 * k + 1) * sizeof *c->own)))
            return TB_ERR_OOM;
        c->nown = k;
    }
    return TB_OK;
}

static tb_result tb__aa_collar(tb__aa_job *j, tb_appendage *a, const tb__app_work *aw, tb__chain_plan *c,
                               tb_error *err)
{
    tb__apply *A = j->A;
    const tb_model *m = j->m;
    for (size_t k = 0; k < aw->collar_count; k++)
        if (!A->changed[aw->collar[k]])
            c->welded[c->nwelded++] = aw->collar[k];
    if (c->nwelded && tb__seam_collar(c, A, m) != TB_OK)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    size_t positions = c->nwelded;
    if (tb__collar_copies(c, m, A->changed) != TB_OK || tb__collar_segments(c, A) != TB_OK)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    c->cj = calloc(c->nwelded * TB__SLOTS + 1, sizeof *c->cj);
    c->cw = calloc(c->nwelded * TB__SLOTS + 1, sizeof *c->cw);
    c->nbo = c->nwelded ? calloc(c->n + 2, sizeof *c->nbo) : NULL;
    if (c->nbo && !(c->nb = tb__untouched_neighbours(A, c, c->nbo)))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (!c->cj || !c->cw || (c->nwelded && !c->nbo) || (c->nwelded && tb__own_edges(c, A) != TB_OK))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t q = 0; q < c->nwelded; q++) /* the body's own, largest TB__SLOTS */
        tb__top_weights(m, c->welded[q], c->cj + q * TB__SLOTS, c->cw + q * TB__SLOTS);
    float band = tb__band_for(c, A->collar_band, A->auto_band);
    a->welded_collar = positions;
    a->collar_band = c->nwelded ? band : 0;
    if (c->nwelded && band > 0) {
        size_t used = strlen(a->reason);
        snprintf(a->reason + used, sizeof a->reason - used,
                 "; welded into the body: weights blend from those of its %zu collar vertices to the "
                 "chain's over the collar band",
                 positions);
        tb__blend_welded_collar(A, c, band, 0);
    }
    return TB_OK;
}

/* SPEC A9's weights of one chain: plan → the weights for the zone sized
 * from the tail (tb__zone_for) → rigid pieces (tb__bind_pieces) → a welded
 * collar's band; the plan kept when fix asked for it. */
static tb_result tb__aa_weights(tb__aa_job *j, int ai, tb_appendage *a, const tb__app_work *aw, int skP, int sk0,
                                tb_error *err)
{
    tb__apply *A = j->A;
    tb__chain_plan c;
    tb_result r = tb__aa_chain_plan(j, ai, a, aw, skP, sk0, &c, err);
    if (r != TB_OK) {
        tb__chain_plan_clear(&c);
        return r;
    }
    float zone = tb__zone_for(&c, A->blend_zone, A->auto_zone);
    tb__chain_plan_fill(A, &c, zone, 0, 0);
    a->blend_zone = zone;
    r = tb__bind_pieces(A, a, aw, c.gc, skP, sk0, err);
    c.smooth = !a->rigid_pieces;
    a->welded_collar = 0;
    a->collar_band = 0;
    if (r == TB_OK && c.smooth) {
        float seg = a->length / (float)c.K;
        size_t used = strlen(a->reason);
        snprintf(a->reason + used, sizeof a->reason - used,
                 "; blend sized from the tail: rings every %.2f segment, radius %.2f segment%s",
                 seg > 0 ? (double)(c.ring / seg) : 0.0, seg > 0 ? (double)(c.radius / seg) : 0.0,
                 A->auto_zone ? "" : " (zone pinned)");
        if ((r = tb__aa_collar(j, a, aw, &c, err)) != TB_OK) {
            tb__chain_plan_clear(&c);
            return r;
        }
    }
    c.ramp_zone = r == TB_OK && c.smooth ? tb__chain_ramp_zone(A, &c) : 0;
    if (r == TB_OK && A->plan) {
        tb__chain_plan *nc = realloc(A->plan->c, ((size_t)A->plan->count + 1) * sizeof *nc);
        if (!nc) {
            tb__chain_plan_clear(&c);
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        }
        A->plan->c = nc;
        nc[A->plan->count++] = c;
    } else {
        tb__chain_plan_clear(&c);
    }
    a->reweighted_count = aw->rw_count;
    return r;
}

/* One appendage's decision: rigid (SPEC A8) or a chain (SPEC A9: a letter,
 * the bones fitted to the rings, the joints, the weights). */
static tb_result tb__aa_appendage(tb__aa_job *j, int ai, tb_appendage *a, const tb__app_work *aw, tb_error *err)
{
    tb__apply *A = j->A;
    const tb_model *m = j->m;
    if (a->decision == TB_DECIDE_UNTOUCHED)
        return TB_OK;
    int P = aw->parent_joint;
    int skP = P >= 0 ? j->sk_of[P] : -1;
    if (skP < 0) {
        a->decision = TB_DECIDE_UNTOUCHED;
        snprintf(a->reason + strlen(a->reason), sizeof a->reason - strlen(a->reason),
                 "; not applied: %s is not a skin joint", a->chain_parent);
        return TB_OK;
    }
    if (a->decision == TB_DECIDE_RIGID) { /* SPEC A8 */
        for (size_t q = 0; q < aw->rw_count; q++) {
            size_t v = aw->rw_verts[q];
            A->changed[v] = 1;
            tb__set_single(A, v, (uint16_t)skP);
        }
        a->reweighted_count = aw->rw_count;
        return TB_OK;
    }
    /* SPEC A9: the chain */
    int letter = 0;
    while (letter < 26 && j->used[letter])
        letter++;
    if (letter == 26) {
        a->decision = TB_DECIDE_UNTOUCHED;
        return TB_OK;
    }
    j->used[letter] = 1;
    a->chain = letter;
    tb__fit_bones_to_rings(a, aw, m, A->edges, A->edge_count);
    int sk0 = (int)j->ibm_n;
    tb_result r = tb__aa_joints(j, a, P, letter, err);
    if (r != TB_OK)
        return r;
    return tb__aa_weights(j, ai, a, aw, skP, sk0, err);
}

/* ---- write: the primitives whose vertices changed; each (mesh, primitive)
 * once ----------------------------------------------------------------------- */

static tb_result tb__aa_primitives(tb__aa_job *j, tb_result r, tb_error *err)
{
    tb__apply *A = j->A;
    const tb_model *m = j->m;
    const tb_gltf *g = tb_doc_gltf(A->doc);
    int nmesh = g->mesh_count;
    int *mesh_json = malloc(((size_t)nmesh + 1) * sizeof *mesh_json);
    uint8_t *done = calloc((size_t)m->prim_count + 1, 1);
    if (r == TB_OK && (!mesh_json || !done))
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int i = 0; mesh_json && i < nmesh; i++)
        mesh_json[i] = -2; /* not decided */
    for (int pi = 0; r == TB_OK && pi < m->prim_count; pi++) {
        const tb_model_prim *mp = &m->prims[pi];
        int any = 0;
        for (size_t v = 0; v < mp->vertex_count && !any; v++)
            any = A->changed[mp->vertex_offset + v];
        if (!any)
            continue;
        int dup = 0;
        for (int q = 0; q < pi; q++)
            dup |= done[q] && m->prims[q].mesh == mp->mesh && m->prims[q].primitive == mp->primitive;
        if (dup)
            continue;
        done[pi] = 1;
        if (mesh_json[mp->mesh] == -2) {
            /* A mesh also drawn by a node with another skin (or none) is cloned
             * for our skin's nodes, so the other instance keeps its weights. */
            int shared = 0;
            for (int n = 0; n < g->node_count; n++)
                shared |= g->nodes[n].mesh == mp->mesh && !tb_model_uses_skin(m, g->nodes[n].skin);
            mesh_json[mp->mesh] = mp->mesh;
            if (shared) {
                json_t *meshes = json_object_get(A->root, "meshes");
                json_t *copy = json_deep_copy(json_array_get(meshes, (size_t)mp->mesh));
                json_array_append_new(meshes, copy);
                int idx = (int)json_array_size(meshes) - 1;
                for (int n = 0; n < g->node_count; n++)
                    if (g->nodes[n].mesh == mp->mesh && tb_model_uses_skin(m, g->nodes[n].skin))
                        json_object_set_new(json_array_get(j->nodes, (size_t)n), "mesh", json_integer(idx));
                mesh_json[mp->mesh] = -1 - idx; /* negative: cloned */
            }
        }
        int mj = mesh_json[mp->mesh];
        r = tb__write_primitive(A, mp, mj >= 0 ? mj : -1 - mj, mj < 0, err);
    }
    free(mesh_json);
    free(done);
    return r;
}

/* Subset skins (tb_model.joint_maps) whose vertices now use joints they did
 * not list (A->local_of_main, filled by tb__write_primitive): those joints
 * appended to them, in local order, with their matrices: the skin's own
 * kept exactly, then `ibm` (per joint of our skin, whose document joints
 * are `main_joints`) for those it gains. */
static tb_result tb__subset_skins_extend(tb__apply *A, json_t *main_joints, const float (*ibm)[16], tb_error *err)
{
    const tb_model *m = A->m;
    tb_result r = TB_OK;
    for (int k = 1; r == TB_OK && A->local_of_main && k < m->skin_count; k++) {
        if (!A->local_of_main[k] || A->local_count[k] == m->joint_map_counts[k])
            continue;
        json_t *other = json_array_get(json_object_get(A->root, "skins"), (size_t)m->skins[k]);
        json_t *oj = json_object_get(other, "joints");
        int n = A->local_count[k], n0 = m->joint_map_counts[k];
        float(*mats)[16] = malloc((size_t)n * sizeof *mats);
        if (!mats)
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        if ((r = tb_skin_inverse_binds(A->doc, m->skins[k], mats, err)) != TB_OK) {
            free(mats);
            return r;
        }
        for (int i = 0; i < A->main_total; i++) {
            int l = A->local_of_main[k][i];
            if (l >= n0)
                memcpy(mats[l], ibm[i], sizeof mats[l]);
        }
        json_t *added = json_array(); /* in local order */
        for (int l = n0; l < n; l++)
            for (int i = 0; i < A->main_total; i++)
                if (A->local_of_main[k][i] == l)
                    json_array_append(added, json_array_get(main_joints, (size_t)i));
        json_array_extend(oj, added);
        json_decref(added);
        int acc = tb_doc_add_accessor(A->doc, mats, (size_t)n, TB_COMPONENT_FLOAT, "MAT4", 0, 0);
        free(mats);
        if (acc < 0)
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        else
            json_object_set_new(other, "inverseBindMatrices", json_integer(acc));
    }
    return r;
}

/* ---- write: the skin's joints and matrices, and those of the skins that
 * share the skeleton ------------------------------------------------------- */

static tb_result tb__aa_skins(tb__aa_job *j, tb_result r, tb_error *err)
{
    tb__apply *A = j->A;
    const tb_model *m = j->m;
    json_t *root = A->root;
    if (r == TB_OK && j->ibm_n > (size_t)m->skin_joint_count) {
        int acc = tb_doc_add_accessor(A->doc, j->ibm, j->ibm_n, TB_COMPONENT_FLOAT, "MAT4", 0, 0);
        if (acc < 0)
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        else
            json_object_set_new(j->skin, "inverseBindMatrices", json_integer(acc));
        /* skins that share this skeleton (one per mesh, as three.js writes
         * them) get the same joints and inverse bind matrices */
        json_t *skins = json_object_get(root, "skins");
        for (int k = 1; r == TB_OK && k < m->skin_count; k++) {
            if (m->joint_maps[k])
                continue; /* a subset skin: below */
            json_t *other = json_array_get(skins, (size_t)m->skins[k]);
            json_object_set_new(other, "joints", json_deep_copy(j->skin_joints));
            json_object_set_new(other, "inverseBindMatrices", json_integer(acc));
        }
    }
    if (r == TB_OK)
        r = tb__subset_skins_extend(A, j->skin_joints, (const float(*)[16])j->ibm, err);
    return r;
}

/* Applies the decisions of `rep` to the document (no refresh): setup → per
 * appendage (rigid, or a chain: joints → weights) → primitives → skins. */
static tb_result tb__apply_all(tb__apply *A, tb_appendage_report *rep, const tb__detect_work *work,
                               tb_error *err)
{
    const tb_model *m = A->m;
    tb__aa_job j;
    memset(&j, 0, sizeof j);
    j.A = A;
    j.m = m;
    tb_result r = tb__aa_setup(&j, err);
    if (r != TB_OK) {
        free(j.sk_of);
        free(j.ibm);
        return r;
    }
    for (int ai = 0; ai < rep->appendage_count && r == TB_OK; ai++)
        r = tb__aa_appendage(&j, ai, &rep->appendages[ai], &work->apps[ai], err);
    A->main_total = (int)j.ibm_n;
    A->local_of_main = calloc((size_t)m->skin_count + 1, sizeof *A->local_of_main);
    A->local_count = calloc((size_t)m->skin_count + 1, sizeof *A->local_count);
    if (r == TB_OK && (!A->local_of_main || !A->local_count))
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    r = tb__aa_primitives(&j, r, err);
    r = tb__aa_skins(&j, r, err);
    if (A->local_of_main)
        for (int k = 0; k < m->skin_count; k++)
            free(A->local_of_main[k]);
    free(A->local_of_main);
    free(A->local_count);
    A->local_of_main = NULL;
    A->local_count = NULL;
    free(j.sk_of);
    free(j.ibm);
    return r;
}

/* The skin joint holding all of vertex v's weight, or -1 when it has
 * none or shares it. */
static int tb__single_joint(const tb_model *m, size_t v)
{
    double top = 0, total = 0;
    int tj = -1;
    for (int k = 0; k < m->influences; k++) {
        float w = m->weights[v * (size_t)m->influences + (size_t)k];
        if (!(w > 0))
            continue;
        total += w;
        if (w > top)
            top = w, tj = m->joints[v * (size_t)m->influences + (size_t)k];
    }
    return total > 0 && top >= total * (1 - 1e-6) ? tj : -1;
}

/* 1 when every vertex of a rigid decision already has all its weight on
 * the target bone: applying it would change nothing. A carried object
 * (scabbard, quiver) only has to move rigidly: when all of it already
 * follows one bone, whichever, the rigger's choice stands (SPEC A10: the
 * body is never touched on a guess). */
static int tb__rigid_is_noop(const tb_model *m, const tb__app_work *aw, int carried)
{
    if (aw->parent_joint < 0)
        return 1;
    if (carried) {
        /* each separate piece already on one bone: the rigger built it from
         * rigid pieces (an armour plate on the arm, another on the
         * shoulder): it moves rigidly piece by piece as it is */
        uint32_t np = aw->piece_count;
        int *bone = np ? malloc(np * sizeof *bone) : NULL;
        int pieces_rigid = bone != NULL;
        for (uint32_t i = 0; bone && i < np; i++)
            bone[i] = -1;
        for (size_t q = 0; pieces_rigid && q < aw->rw_count; q++) {
            size_t v = aw->rw_verts[q];
            uint32_t pc = aw->rw_piece[q];
            int tj = tb__single_joint(m, v);
            if (pc == TB__NO_PIECE || tj < 0 || (bone[pc] >= 0 && bone[pc] != tj))
                pieces_rigid = 0;
            else
                bone[pc] = tj;
        }
        free(bone);
        if (pieces_rigid)
            return 1;
        int one = -1;
        for (size_t q = 0; q < aw->rw_count; q++) {
            size_t v = aw->rw_verts[q];
            int tj = tb__single_joint(m, v);
            if (tj < 0 || (one >= 0 && tj != one))
                return 0;
            one = tj;
        }
        return 1;
    }
    for (size_t q = 0; q < aw->rw_count; q++) {
        size_t v = aw->rw_verts[q];
        double on = 0, total = 0;
        for (int k = 0; k < m->influences; k++) {
            float w = m->weights[v * (size_t)m->influences + (size_t)k];
            uint16_t j = m->joints[v * (size_t)m->influences + (size_t)k];
            if (!(w > 0))
                continue;
            total += w;
            if (j < m->skin_joint_count && m->skin_joints[j] == aw->parent_joint)
                on += w;
        }
        if (total <= 0 || on < total * (1 - 1e-6))
            return 0;
    }
    return 1;
}

/* A skin joint's name, for the do-no-harm count: its name and where it is
 * (side 0: the model before the edit, 1: after; its skin slot). */
typedef struct tb__named_slot {
    const char *name;
    int at; /* side * (the before model's skin joint count) + slot */
} tb__named_slot;

static int tb__named_slot_cmp(const void *x, const void *y)
{
    const tb__named_slot *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->at > b->at) - (a->at < b->at);
}

/* Per skin slot of a (first) and of b (after them): a number that two
 * slots share exactly when their joints' names are equal, -1 for a joint
 * without a name (one sort of the names, not a name compare per
 * influence). NULL when out of memory. */
static int *tb__name_ids(const tb_model *a, const tb_model *b)
{
    int na = a->skin_joint_count, n = na + b->skin_joint_count, count = 0;
    int *id = malloc(((size_t)n + 1) * sizeof *id);
    tb__named_slot *e = malloc(((size_t)n + 1) * sizeof *e);
    if (!id || !e) {
        free(id);
        free(e);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        const tb_model *x = i < na ? a : b;
        const char *name = x->skel.names[x->skin_joints[i < na ? i : i - na]];
        id[i] = -1;
        if (name)
            e[count++] = (tb__named_slot){name, i};
    }
    qsort(e, (size_t)count, sizeof *e, tb__named_slot_cmp);
    for (int i = 0, run = -1; i < count; i++) {
        run += !i || strcmp(e[i - 1].name, e[i].name) != 0;
        id[e[i].at] = run;
    }
    free(e);
    return id;
}

/* The weight vertex v of x puts on the joints of name number `name`
 * (ids: x's slots' numbers, tb__name_ids), summed in influence order. */
static float tb__weight_on(const tb_model *x, const int *ids, size_t v, int name)
{
    float w = 0;
    for (int k = 0; k < x->influences; k++) {
        float y = x->weights[v * (size_t)x->influences + (size_t)k];
        uint16_t j = x->joints[v * (size_t)x->influences + (size_t)k];
        if (y > 0 && j < x->skin_joint_count && ids[j] == name)
            w += y;
    }
    return w;
}

/* 1 when vertex v has the same influences in a and b slot by slot (the
 * same weight, bit for bit, on joints of the same name): then every name's
 * sums below are the same additions. 0 does not mean changed. */
static int tb__same_influences(const tb_model *a, const tb_model *b, const int *ia, const int *ib, size_t v)
{
    if (a->influences != b->influences)
        return 0;
    const size_t n = (size_t)a->influences, at = v * n;
    for (size_t k = 0; k < n; k++) {
        float wa = a->weights[at + k], wb = b->weights[at + k];
        uint16_t ja = a->joints[at + k], jb = b->joints[at + k];
        if (memcmp(&wa, &wb, sizeof wa) != 0)
            return 0;
        if (wa > 0 && (ja >= a->skin_joint_count || jb >= b->skin_joint_count || ia[ja] != ib[jb]))
            return 0;
    }
    return 1;
}

/* Whether vertex v's weight on some joint name differs by more than
 * 1/255 between a and b (ids: tb__name_ids(a, b)). */
static int tb__vertex_changed(const tb_model *a, const tb_model *b, const int *ids, size_t v)
{
    const int *ia = ids, *ib = ids + a->skin_joint_count;
    if (tb__same_influences(a, b, ia, ib, v))
        return 0;
    for (int side = 0; side < 2; side++) {
        const tb_model *x = side ? b : a;
        const int *ix = side ? ib : ia;
        for (int k = 0; k < x->influences; k++) {
            uint16_t sj = x->joints[v * (size_t)x->influences + (size_t)k];
            if (!(x->weights[v * (size_t)x->influences + (size_t)k] > 0) || sj >= x->skin_joint_count || ix[sj] < 0)
                continue;
            if (fabsf(tb__weight_on(a, ia, v, ix[sj]) - tb__weight_on(b, ib, v, ix[sj])) > 1.0f / 255.0f)
                return 1;
        }
    }
    return 0;
}

tb_result tb__changed_by_name(const tb_model *a, const tb_model *b, const uint8_t *skip, uint8_t *changed,
                              tb_error *err)
{
    if (a->vertex_count != b->vertex_count)
        return tb__fail(err, TB_ERR_INVALID, NULL, "the edit changed the vertex count");
    /* joint names identify joints across the two skeletons (the edit
     * appends joints, never renames): every joint either model puts
     * weight on must carry the same weight in both */
    int *ids = tb__name_ids(a, b);
    if (!ids)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* A repair appends joints: every joint of a has its own slot and name
     * in b. Then a run of vertices whose rows are the same bits in both is
     * unchanged (a model's weighted slots name joints of its skin, so
     * tb__same_influences would say so vertex by vertex): one memcmp per
     * block; a block that differs anywhere goes vertex by vertex. */
    int nsame = 0;
    while (nsame < a->skin_joint_count && nsame < b->skin_joint_count &&
           ids[nsame] == ids[a->skin_joint_count + nsame])
        nsame++;
    const size_t n = (size_t)a->influences, V = a->vertex_count;
    const int blocks = a->influences == b->influences && nsame == a->skin_joint_count;
    enum { BLOCK = 64 };
    for (size_t v0 = 0; v0 < V; v0 += BLOCK) {
        size_t v1 = v0 + BLOCK < V ? v0 + BLOCK : V;
        if (blocks && !memcmp(a->weights + v0 * n, b->weights + v0 * n, (v1 - v0) * n * sizeof *a->weights) &&
            !memcmp(a->joints + v0 * n, b->joints + v0 * n, (v1 - v0) * n * sizeof *a->joints)) {
            memset(changed + v0, 0, v1 - v0);
            continue;
        }
        for (size_t v = v0; v < v1; v++)
            changed[v] = !(skip && skip[v]) && tb__vertex_changed(a, b, ids, v);
    }
    free(ids);
    return TB_OK;
}

/* Do no harm (SPEC A10): the vertices whose influences changed — compared
 * by skeleton joint between the model read before the edit and the one
 * decoded from the edited document, not from what the pass says it wrote —
 * that lie outside every appendage it acted on. A welded tail's collar
 * ring, blended halfway to the chain (tb__blend_collar_ring), is counted
 * apart (collar_changed), so on a correct pass this is 0. */
static tb_result tb__count_changed_outside(tb_appendage_report *out, const tb_model *a, const tb_model *b,
                                           const uint8_t *collar, tb_error *err)
{
    out->changed_outside = 0;
    out->collar_changed = 0;
    uint8_t *in = calloc(a->vertex_count + 1, 1), *changed = malloc(a->vertex_count + 1);
    if (!in || !changed) {
        free(in);
        free(changed);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (int i = 0; i < out->appendage_count; i++)
        if (out->appendages[i].decision != TB_DECIDE_UNTOUCHED)
            for (size_t k = 0; k < out->appendages[i].vertex_count; k++)
                in[out->appendages[i].vertices[k]] = 1;
    tb_result r = tb__changed_by_name(a, b, in, changed, err);
    for (size_t v = 0; v < a->vertex_count && r == TB_OK; v++) {
        if (collar && collar[v])
            out->collar_changed += changed[v];
        else
            out->changed_outside += changed[v];
    }
    free(in);
    free(changed);
    return r;
}

/* A weighted joint whose name says tail ("tail", "Tail1", "DEF-tail.001",
 * "b_Tail01") but not a Tail_* chain of ours: a rigger's own tail bones.
 * Returns the skeleton joint, or -1. */
static int tb__artist_tail_joint(const tb_model *m)
{
    uint8_t *weighted = calloc((size_t)m->skin_joint_count + 1, 1);
    if (!weighted)
        return -1;
    for (size_t i = 0; i < m->vertex_count * (size_t)m->influences; i++)
        if (m->weights[i] > 0.1f && m->joints[i] < m->skin_joint_count)
            weighted[m->joints[i]] = 1;
    int found = -1;
    for (int k = 0; k < m->skin_joint_count && found < 0; k++) {
        int j = m->skin_joints[k];
        const char *n = m->skel.names[j];
        if (!weighted[k] || !n || tb_tail_name_parse(n, NULL, NULL))
            continue;
        for (const char *c = n; *c && found < 0; c++)
            if ((c[0] | 32) == 't' && (c[1] | 32) == 'a' && (c[2] | 32) == 'i' && (c[3] | 32) == 'l')
                found = j;
    }
    free(weighted);
    return found;
}

tb_result tb_appendage_fix(tb_appendage_report *out, tb_doc *doc, const tb_appendage_desc *desc, tb_error *err)
{
    return tb__appendage_fix_plan(out, doc, desc, NULL, err);
}

/* Below this many model vertices the repair keeps detection's freed memory
 * (tb__repair_detect). */
enum { TB__TRIM_MIN_VERTICES = 200000 };

/* The model's edge list (tb_measure_edges), made as detection's side task
 * or after it; made: 0 until it is. */
typedef struct tb__edge_list {
    const tb_model *m;
    uint64_t *edges;
    size_t count; /* SIZE_MAX: out of memory */
    int made;
} tb__edge_list;

static void tb__edge_list_make(void *ctx)
{
    tb__edge_list *E = ctx;
    E->count = tb_measure_edges(E->m, &E->edges);
    E->made = 1;
}

/* Detect: the model (the caller's role overrides reach it; no normals: none
 * read) and detection's work, then the triangles for the edge list (*E,
 * whose edges the caller frees). */
static tb_result tb__repair_detect(tb_appendage_report *out, tb_doc *doc, const tb_appendage_desc *d, tb_model **m,
                                tb__detect_work *work, tb__edge_list *E, tb_error *err)
{
    memset(E, 0, sizeof *E);
    tb_model_desc md = {d->skin > 0 ? d->skin : 0, d->roles, d->role_count, 0, 1};
    tb_result r = tb_model_load_desc(m, doc, &md, err);
    if (r != TB_OK)
        return r;
    /* its welded copy written over m's triangles; the edge list made first,
     * beside its first stages, on a mesh below TB__TRIM_MIN_VERTICES (on a
     * larger one it would add to detection's peak: read after, below) */
    int early = (*m)->vertex_count < TB__TRIM_MIN_VERTICES;
    E->m = *m;
    tb__side_task side = {tb__edge_list_make, E};
    r = tb__appendage_detect_taking(out, work, *m, d, early ? &side : NULL, err);
#ifdef __GLIBC__
    /* detection's state is freed, but glibc keeps much of it resident (its
     * threshold for fresh pages rises to the largest block freed): given
     * back before the triangles and the edge list come on top (772k: 146 ->
     * 84 MiB here, the job's peak back to detection's). Not on a small
     * mesh: there it is a few MiB, and taking the pages back costs more than
     * keeping them (a page fault each; the Wolf, 13k vertices: 22 -> 13 ms
     * of a repair, docs/fix.md "The Wolf's time") */
    if ((*m)->vertex_count >= TB__TRIM_MIN_VERTICES)
        malloc_trim(0);
#endif
    if (r == TB_OK && !E->made)
        r = tb__model_triangles_reload(*m, doc, err); /* for the edge list (tb_measure_edges) */
    if (r != TB_OK) {
        tb_model_free(*m);
        *m = NULL;
    }
    return r;
}

/* Decide: a rigid binding already in place is left untouched; returns how
 * many appendages change. */
static int tb__repair_actions(tb_appendage_report *out, const tb_model *m, const tb__detect_work *work)
{
    int actions = 0;
    for (int i = 0; i < out->appendage_count; i++) {
        tb_appendage *a = &out->appendages[i];
        if (a->decision == TB_DECIDE_RIGID && tb__rigid_is_noop(m, &work->apps[i], a->kind == TB_KIND_CARRIED)) {
            /* already 1.0 on its bone (a second run, or the rigger did it) */
            a->decision = TB_DECIDE_UNTOUCHED;
            snprintf(a->reason + strlen(a->reason), sizeof a->reason - strlen(a->reason),
                     "; already bound rigidly");
        }
        actions += a->decision != TB_DECIDE_UNTOUCHED;
    }
    return actions;
}

/* Nothing to change: why, into out->message. */
static void tb__repair_nothing(tb_appendage_report *out, const tb_model *m)
{
    int artist;
    if (out->existing_chains)
        snprintf(out->message, sizeof out->message,
                 "nothing to change: the skeleton already has %d Tail_* chain(s) and no unrigged appendage "
                 "needs one",
                 out->existing_chains);
    else if ((artist = tb__artist_tail_joint(m)) >= 0)
        snprintf(out->message, sizeof out->message,
                 "nothing to change: the tail already has the rigger's own bones (%s, not named Tail_*: "
                 "tailbone neither rebuilds nor animates them)",
                 m->skel.names[artist]);
    else
        snprintf(out->message, sizeof out->message, "nothing to change: no tail (%d appendage(s) left as rigged)",
                 out->appendage_count);
}

/* Apply's setup: the document, the model, the desc's choices (a zone or
 * band the caller gave is kept as given; the defaults are raised where the
 * tail's geometry needs more, tb__zone_for), the buffers and the edge list
 * (E's: made beside detection, or here from m's triangles), the plan when
 * asked for. */
static tb_result tb__repair_apply_setup(tb__apply *A, tb_doc *doc, const tb_model *m, const tb_appendage_desc *d,
                                     const tb_appendage_desc *desc, float body_single, int want_plan,
                                     tb__edge_list *E, tb_error *err)
{
    memset(A, 0, sizeof *A);
    A->doc = doc;
    A->m = m;
    A->blend_zone = d->blend_zone;
    A->smooth_pieces = d->smooth_pieces;
    A->piece_span_max = d->piece_span_max;
    A->rigid_body_min = d->rigid_body_min;
    A->collar_band = d->collar_band;
    A->auto_zone = !(desc && desc->blend_zone > 0);
    A->auto_band = !(desc && desc->collar_band != 0);
    A->body_single = body_single;
    A->root = tb_doc_json(doc);
    A->V = m->vertex_count;
    A->changed = calloc(A->V + 1, 1);
    A->collar = calloc(A->V + 1, 1);
    A->nj = calloc(A->V * TB__SLOTS + 1, sizeof *A->nj);
    A->nw = calloc(A->V * TB__SLOTS + 1, sizeof *A->nw);
    if (!E->made)
        tb__edge_list_make(E);
    A->edge_count = E->count;
    A->edges = E->edges;
    if (want_plan) {
        A->plan = calloc(1, sizeof *A->plan);
        if (A->plan) {
            A->plan->skin = m->skin;
            A->plan->auto_zone = A->auto_zone;
            A->plan->auto_band = A->auto_band;
        }
    }
    if (!A->changed || !A->collar || !A->nj || !A->nw || A->edge_count == SIZE_MAX || (want_plan && !A->plan))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    return TB_OK;
}

/* Report: each changed appendage's bone distance after, and the message. */
static void tb__repair_summary(tb_appendage_report *out, const tb_model *m, const tb_appendage_desc *d, int skipped)
{
    out->changed = 1;
    int chains = 0, rigid = 0;
    for (int i = 0; i < out->appendage_count; i++) {
        tb_appendage *a = &out->appendages[i];
        chains += a->decision == TB_DECIDE_CHAIN;
        rigid += a->decision == TB_DECIDE_RIGID;
        if (a->decision != TB_DECIDE_UNTOUCHED)
            a->distance_after = tb_weighted_bone_distance(m, a->vertices, a->vertex_count, d->extension_fraction);
    }
    snprintf(out->message, sizeof out->message, "%d tail chain(s) added, %d appendage(s) bound rigidly%s", chains,
             rigid, skipped ? "; some vertices had no JOINTS_0 and kept no weights" : "");
}

/* The repair (weights_internal.h): detect → decide → apply (setup, every
 * appendage, the document refreshed) → check (the weights changed outside
 * the appendages counted against the model before) → report. */
tb_result tb__appendage_fix_plan(tb_appendage_report *out, tb_doc *doc, const tb_appendage_desc *desc,
                                 tb__weight_plan **plan, tb_error *err)
{
    if (plan)
        *plan = NULL;
    if (!out || !doc) {
        if (out)
            memset(out, 0, sizeof *out);
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_appendage_fix needs a report and a document");
    }
    memset(out, 0, sizeof *out);
    tb_appendage_desc d = tb_appendage_defaults(desc);
    tb_model *m = NULL;
    tb__detect_work work;
    tb__edge_list E;
    tb_result r = tb__repair_detect(out, doc, &d, &m, &work, &E, err);
    if (r != TB_OK) {
        free(E.edges);
        return r;
    }
    if (!tb__repair_actions(out, m, &work)) {
        tb__repair_nothing(out, m);
        tb__detect_work_free(&work);
        tb_model_free(m);
        free(E.edges);
        return TB_OK;
    }
    tb__apply A;
    E.m = m;
    r = tb__repair_apply_setup(&A, doc, m, &d, desc, out->body_single_bone, plan != NULL, &E, err);
    if (r == TB_OK)
        r = tb__apply_all(&A, out, &work, err);
    free(E.edges);
    int skin = m->skin;
    /* kept for the do-no-harm count below: every vertex's influences by
     * skeleton joint before the edit */
    tb_model *before = m;
    m = NULL;
    free(A.changed);
    free(A.nj);
    free(A.nw);
    tb__detect_work_free(&work);
    if (r == TB_OK)
        r = tb_doc_refresh(doc, err);
    if (r == TB_OK)
        r = tb__model_load_influences(&m, doc, skin, err); /* no roles: neither reads them */
    if (r == TB_OK)
        r = tb__count_changed_outside(out, before, m, A.collar, err);
    free(A.collar);
    tb_model_free(before);
    if (r != TB_OK) {
        tb__weight_plan_free(A.plan);
        tb_model_free(m);
        tb_appendage_report_free(out);
        return r;
    }
    if (plan && A.plan && A.plan->count)
        *plan = A.plan;
    else
        tb__weight_plan_free(A.plan);
    tb__repair_summary(out, m, &d, A.skipped);
    tb_model_free(m);
    return TB_OK;
}

void tb__weight_plan_mark(const tb__weight_plan *p, uint8_t *mark, size_t V)
{
    for (int i = 0; p && i < p->count; i++) {
        for (size_t q = 0; q < p->c[i].n; q++)
            if (p->c[i].verts[q] < V)
                mark[p->c[i].verts[q]] = 1;
        for (size_t q = 0; q < p->c[i].nwelded; q++) /* the collar ring, when blended */
            if (p->c[i].welded[q] < V)
                mark[p->c[i].welded[q]] = 1;
    }
}

/* 1 when two sets of influences (na pairs ja/wa, nb pairs jb/wb) differ,
 * joint by joint. */
static int tb__differs(const uint16_t *ja, const float *wa, int na, const uint16_t *jb, const float *wb, int nb)
{
    for (int side = 0; side < 2; side++) {
        for (int k = 0; k < (side ? nb : na); k++) {
            uint16_t j = side ? jb[k] : ja[k];
            float a = 0, b = 0;
            for (int i = 0; i < na; i++)
                a += ja[i] == j ? wa[i] : 0;
            for (int i = 0; i < nb; i++)
                b += jb[i] == j ? wb[i] : 0;
            if (fabsf(a - b) > 1e-5f)
                return 1;
        }
    }
    return 0;
}

/* The chain's vertices against their own weights before the repair; the
 * welded collar (left to the body by the repair, so M's own are the
 * input's) against M's. */
void tb__weight_plan_changed(const tb__weight_plan *p, const tb_model *M, const uint16_t *joints,
                             const float *weights, uint8_t *mask)
{
    size_t V = M->vertex_count, I = (size_t)M->influences;
    if (!joints || !weights)
        joints = M->joints, weights = M->weights;
    for (int i = 0; p && i < p->count; i++) {
        const tb__chain_plan *c = &p->c[i];
        for (size_t q = 0; c->oj && q < c->n; q++) {
            size_t v = c->verts[q];
            if (v < V)
                mask[v] = (uint8_t)tb__differs(joints + v * I, weights + v * I, (int)I, c->oj + q * TB__SLOTS,
                                               c->ow + q * TB__SLOTS, TB__SLOTS);
        }
        for (size_t q = 0; q < c->nwelded; q++) {
            size_t v = c->welded[q];
            if (v < V)
                mask[v] = (uint8_t)tb__differs(joints + v * I, weights + v * I, (int)I, M->joints + v * I,
                                               M->weights + v * I, (int)I);
        }
    }
}

void tb__weight_plan_variant(tb__weight_plan *p, int bits)
{
    if (p)
        p->ring = bits & (TB__PLAN_COLLAR_RING | TB__PLAN_SPINE_FOLDED | TB__PLAN_COLLAR_CARRIED | TB__PLAN_BY_STRAIN);
}

int tb__weight_plan_count(const tb__weight_plan *p)
{
    return p ? p->count : 0;
}

int tb__weight_plan_smooth(const tb__weight_plan *p)
{
    int n = 0;
    for (int i = 0; p && i < p->count; i++)
        n += p->c[i].smooth;
    return n;
}

int tb__weight_plan_welded(const tb__weight_plan *p)
{
    int n = 0;
    for (int i = 0; p && i < p->count; i++)
        n += p->c[i].smooth && p->c[i].nwelded > 0;
    return n;
}

void tb__weight_plan_geometry(const tb__weight_plan *p, int i, int *app, float *ring_seg, float *radius_seg,
                              int *smooth)
{
    const tb__chain_plan *c = &p->c[i];
    float seg = c->K > 0 ? c->L / (float)c->K : 0;
    *app = c->app;
    *ring_seg = seg > 0 ? c->ring / seg : 0;
    *radius_seg = seg > 0 ? c->radius / seg : 0;
    *smooth = c->smooth;
}

float tb__weight_plan_sized_zone(const tb__weight_plan *p, int i)
{
    return tb__zone_for(&p->c[i], 0.25f, p->auto_zone);
}

float tb__weight_plan_ramp_zone(const tb__weight_plan *p, int i)
{
    return p->c[i].ramp_zone;
}

void tb__weight_plan_set_ramp_zone(tb__weight_plan *p, int i, float z)
{
    p->c[i].ramp_zone = z;
}

/* The smooth chains' weights for (zone, band) into A->nj/nw/changed. */
static void tb__plan_fill_all(tb__apply *A, const tb__weight_plan *p, float zone, float band, int as_given,
                              float *zone_used, float *band_used)
{
    int first = 1;
    for (int i = 0; i < p->count; i++) {
        const tb__chain_plan *c = &p->c[i];
        if (!c->smooth)
            continue;
        float z = tb__zone_for(c, zone, p->auto_zone && !as_given),
              b = tb__band_for(c, band, p->auto_band && !as_given);
        tb__chain_plan_fill(A, c, z, c->nwelded ? b : 0, p->ring);
        if (first) {
            if (zone_used)
                *zone_used = z;
            if (band_used)
                *band_used = c->nwelded ? b : 0;
            first = 0;
        }
    }
}

tb_result tb__weight_plan_weights(const tb__weight_plan *p, const tb_model *M, float zone, float band, int as_given,
                                  uint16_t *joints, float *weights, float *zone_used, float *band_used,
                                  tb_error *err)
{
    if (!p || !M || M->skin != p->skin || M->influences < TB__SLOTS)
        return tb__fail(err, TB_ERR_ARG, NULL, "the weight plan belongs to another skin");
    tb__apply A;
    memset(&A, 0, sizeof A);
    A.m = M;
    A.V = M->vertex_count;
    A.changed = calloc(A.V + 1, 1);
    A.nj = calloc(A.V * TB__SLOTS + 1, sizeof *A.nj);
    A.nw = calloc(A.V * TB__SLOTS + 1, sizeof *A.nw);
    tb_result r = TB_OK;
    if (!A.changed || !A.nj || !A.nw) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    } else {
        for (int i = 0; i < p->count; i++)
            for (size_t q = 0; q < p->c[i].n; q++)
                if (p->c[i].verts[q] >= A.V)
                    r = tb__fail(err, TB_ERR_ARG, NULL, "the weight plan belongs to another model");
    }
    if (r == TB_OK) {
        tb__plan_fill_all(&A, p, zone, band, as_given, zone_used, band_used);
        size_t I = (size_t)M->influences;
        memcpy(joints, M->joints, A.V * I * sizeof *joints);
        memcpy(weights, M->weights, A.V * I * sizeof *weights);
        for (size_t v = 0; v < A.V; v++) {
            if (!A.changed[v])
                continue;
            for (size_t k = 0; k < I; k++) {
                joints[v * I + k] = k < TB__SLOTS ? A.nj[v * TB__SLOTS + k] : 0;
                weights[v * I + k] = k < TB__SLOTS ? A.nw[v * TB__SLOTS + k] : 0;
            }
        }
    }
    free(A.changed);
    free(A.nj);
    free(A.nw);
    return r;
}

/* A's reweighted vertices (changed, nj, nw) written into its document:
 * every primitive of the model that holds one (once per glTF primitive),
 * a subset skin that lacks a joint the weights need extended with it, as
 * in the repair (the joint's matrix: our skin's, as the repair wrote it),
 * then the document refreshed. */
static tb_result tb__apply_commit(tb__apply *A, tb_error *err)
{
    const tb_model *M = A->m;
    A->local_of_main = calloc((size_t)M->skin_count + 1, sizeof *A->local_of_main);
    A->local_count = calloc((size_t)M->skin_count + 1, sizeof *A->local_count);
    uint8_t *done = calloc((size_t)M->prim_count + 1, 1);
    tb_result r = A->local_of_main && A->local_count && done ? TB_OK : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int pi = 0; r == TB_OK && pi < M->prim_count; pi++) {
        const tb_model_prim *mp = &M->prims[pi];
        int any = 0;
        for (size_t v = 0; v < mp->vertex_count && !any; v++)
            any = A->changed[mp->vertex_offset + v];
        int dup = 0;
        for (int q = 0; q < pi; q++)
            dup |= done[q] && M->prims[q].mesh == mp->mesh && M->prims[q].primitive == mp->primitive;
        if (!any || dup)
            continue;
        done[pi] = 1;
        r = tb__write_primitive(A, mp, mp->mesh, 0, err);
    }
    json_t *main_joints = json_object_get(json_array_get(json_object_get(A->root, "skins"), (size_t)M->skin), "joints");
    if (r == TB_OK)
        r = tb__subset_skins_extend(A, main_joints, (const float(*)[16])M->inverse_bind, err);
    for (int k = 0; A->local_of_main && k < M->skin_count; k++)
        free(A->local_of_main[k]);
    free(A->local_of_main);
    free(A->local_count);
    A->local_of_main = NULL;
    A->local_count = NULL;
    free(done);
    if (r == TB_OK)
        r = tb_doc_refresh(A->doc, err);
    return r;
}

/* A set up to write reweighted vertices into doc (M loaded from it): no
 * vertex changed yet (changed, nj, nw allocated and zeroed). */
static tb_result tb__apply_for_write(tb__apply *A, tb_doc *doc, const tb_model *M, tb_error *err)
{
    memset(A, 0, sizeof *A);
    A->doc = doc;
    A->m = M;
    A->root = tb_doc_json(doc);
    A->V = M->vertex_count;
    A->main_total = M->skin_joint_count;
    A->changed = calloc(A->V + 1, 1);
    A->nj = calloc(A->V * TB__SLOTS + 1, sizeof *A->nj);
    A->nw = calloc(A->V * TB__SLOTS + 1, sizeof *A->nw);
    return A->changed && A->nj && A->nw ? TB_OK : tb__fail(err, TB_ERR_OOM, NULL, NULL);
}

tb_result tb__weight_plan_write_given(const tb__weight_plan *p, tb_doc *doc, const tb_model *M,
                                      const uint16_t *joints, const float *weights, tb_error *err)
{
    if (!p || !M || !doc || M->skin != p->skin || M->influences < TB__SLOTS)
        return tb__fail(err, TB_ERR_ARG, NULL, "the weight plan belongs to another skin");
    tb__apply A;
    tb_result r = tb__apply_for_write(&A, doc, M, err);
    size_t I = (size_t)M->influences, n = 0;
    if (r == TB_OK)
        tb__weight_plan_mark(p, A.changed, A.V);
    for (size_t v = 0; r == TB_OK && v < A.V; v++) {
        if (!A.changed[v])
            continue;
        A.changed[v] = (uint8_t)tb__differs(joints + v * I, weights + v * I, (int)I, M->joints + v * I,
                                            M->weights + v * I, (int)I);
        for (size_t k = 0, z = 0; A.changed[v] && k < I && z < TB__SLOTS; k++)
            if (weights[v * I + k] > 0)
                A.nj[v * TB__SLOTS + z] = joints[v * I + k], A.nw[v * TB__SLOTS + z++] = weights[v * I + k];
        n += A.changed[v];
    }
    if (r == TB_OK && n)
        r = tb__apply_commit(&A, err);
    free(A.changed);
    free(A.nj);
    free(A.nw);
    return r;
}

tb_result tb__weight_plan_write(const tb__weight_plan *p, tb_doc *doc, const tb_model *M, float zone, float band,
                                int as_given, tb_appendage_report *rep, tb_error *err)
{
    if (!p || !M || !doc || M->skin != p->skin)
        return tb__fail(err, TB_ERR_ARG, NULL, "the weight plan belongs to another skin");
    tb__apply A;
    tb_result r = tb__apply_for_write(&A, doc, M, err);
    float zu = 0, bu = 0;
    A.collar = calloc(A.V + 1, 1);
    if (r == TB_OK && !A.collar)
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r == TB_OK)
        tb__plan_fill_all(&A, p, zone, band, as_given, &zu, &bu);
    for (int i = 0; r == TB_OK && i < p->count; i++) /* what the written weights carry */
        p->c[i].ramp_zone = p->c[i].smooth ? tb__chain_ramp_zone(&A, &p->c[i]) : 0;
    if (r == TB_OK && rep) {
        rep->collar_changed = 0;
        for (size_t v = 0; v < A.V; v++)
            rep->collar_changed += A.collar[v];
    }
    free(A.collar);
    if (r == TB_OK)
        r = tb__apply_commit(&A, err);
    free(A.changed);
    free(A.nj);
    free(A.nw);
    for (int i = 0; r == TB_OK && rep && i < p->count; i++) {
        const tb__chain_plan *c = &p->c[i];
        if (!c->smooth || c->app >= rep->appendage_count)
            continue;
        rep->appendages[c->app].blend_zone = tb__zone_for(c, zone, p->auto_zone && !as_given);
        rep->appendages[c->app].collar_band = c->nwelded ? tb__band_for(c, band, p->auto_band && !as_given) : 0;
    }
    return r;
}
