/* Skin stretch during playback (SPEC C) and the figures that go with it:
 * the rigid reference variant (SPEC A8) and the weighted bone distance
 * (SPEC A9). Offline: allocates its scratch once per call, then poses and
 * skins with the runtime (tailbone/runtime.h) at every instant. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>
#if defined(__SSE__) && (defined(__x86_64__) || defined(__i386__))
#include <xmmintrin.h> /* the edge loop's square roots and divisions, four at a time */
#define TB__MC_SSE 1
#endif

#include "passes/appendage_internal.h"
#include "passes/measure_internal.h"
#include "core/base.h"
#include "core/tbmath.h"
#include "passes/stretch_hist.h"
#include "tailbone/measure.h"
#include "tailbone/runtime.h"

/* SPEC C defaults. */
#define TB__INSTANTS 24
#define TB__TORN_ABOVE 1.5f
#define TB__TORN_BELOW 0.67f
#define TB__DEGENERATE_H 1e-6f
/* A vertex belongs to the tail when at least this much of its weight is on
 * tail joints: the collar blend of SPEC A9 (50/50 Hips/Tail_1) is tail. */
#define TB__TAIL_WEIGHT 0.5f
/* SPEC A1: a terminal joint's extension, as a fraction of its incoming bone. */
#define TB__TERMINAL_EXTENSION 0.5f

tb_measure_desc tb_measure_desc_defaults(const tb_measure_desc *d)
{
    tb_measure_desc r;
    if (d)
        r = *d;
    else
        memset(&r, 0, sizeof r);
    if (r.instants == 0)
        r.instants = TB__INSTANTS;
    if (r.torn_above == 0)
        r.torn_above = TB__TORN_ABOVE;
    if (r.torn_below == 0)
        r.torn_below = TB__TORN_BELOW;
    if (r.degenerate_h == 0)
        r.degenerate_h = TB__DEGENERATE_H;
    return r;
}

/* ---- small helpers ---------------------------------------------------- */

static const uint16_t *tb__joints(const tb_model *m, const uint16_t *j)
{
    return j ? j : m->joints;
}

static const float *tb__weights(const tb_model *m, const float *w)
{
    return w ? w : m->weights;
}

float tb_measure_percentile(float *v, size_t n, double q)
{
    return n ? tb_select_kth(v, n, tb_rank_nearest(n, q)) : NAN;
}

/* Skin joint index (into inverse_bind / JOINTS) of skeleton joint j, or -1. */
static int tb__skin_index(const tb_model *m, int j)
{
    for (int k = 0; k < m->skin_joint_count; k++)
        if (m->skin_joints[k] == j)
            return k;
    return -1;
}

/* ---- tail set, variants, bone distance -------------------------------- */

/* is_tail[j] for every skeleton joint: desc's bytes or Tail_* names. Returns
 * how many. */
static int tb__tail_joints(uint8_t *is_tail, const tb_model *m, const uint8_t *given)
{
    int n = 0;
    for (int j = 0; j < m->skel.joint_count; j++) {
        is_tail[j] = given ? (given[j] != 0)
                           : (uint8_t)tb_tail_name_parse(m->skel.names ? m->skel.names[j] : NULL, NULL, NULL);
        n += is_tail[j];
    }
    return n;
}

static size_t tb__mask_from(uint8_t *dst, const tb_model *m, const uint8_t *is_tail, const uint16_t *joints,
                            const float *weights)
{
    const size_t inf = (size_t)m->influences;
    size_t n = 0;
    for (size_t v = 0; v < m->vertex_count; v++) {
        float tail = 0, total = 0;
        for (size_t i = 0; i < inf; i++) {
            float w = weights[v * inf + i];
            if (!(w > 0))
                continue;
            total += w;
            uint16_t k = joints[v * inf + i];
            if (k < m->skin_joint_count && is_tail[m->skin_joints[k]])
                tail += w;
        }
        /* Relative to the total: weights need not sum to exactly 1. */
        dst[v] = total > 0 && tail >= TB__TAIL_WEIGHT * total;
        n += dst[v];
    }
    return n;
}

size_t tb_measure_tail_mask(uint8_t *dst, const tb_model *m, const uint8_t *tail_joints, const uint16_t *joints,
                            const float *weights)
{
    uint8_t *is_tail = malloc((size_t)m->skel.joint_count + 1);
    if (!is_tail) {
        memset(dst, 0, m->vertex_count);
        return 0;
    }
    tb__tail_joints(is_tail, m, tail_joints);
    size_t n = tb__mask_from(dst, m, is_tail, tb__joints(m, joints), tb__weights(m, weights));
    free(is_tail);
    return n;
}

tb_result tb_measure_rigid_weights(uint16_t *joints_dst, float *weights_dst, const tb_model *m, const uint8_t *mask,
                                   int joint, tb_error *err)
{
    int k = joint >= 0 && joint < m->skel.joint_count ? tb__skin_index(m, joint) : -1;
    if (k < 0)
        return tb__fail(err, TB_ERR_ARG, NULL, "joint %d is not a joint of the skin", joint);
    const size_t inf = (size_t)m->influences;
    memcpy(joints_dst, m->joints, m->vertex_count * inf * sizeof *joints_dst);
    memcpy(weights_dst, m->weights, m->vertex_count * inf * sizeof *weights_dst);
    for (size_t v = 0; v < m->vertex_count; v++) {
        if (!mask[v])
            continue;
        /* SPEC A8: weight 1.0 on one bone, every other influence cleared. */
        for (size_t i = 0; i < inf; i++) {
            joints_dst[v * inf + i] = 0;
            weights_dst[v * inf + i] = 0;
        }
        joints_dst[v * inf] = (uint16_t)k;
        weights_dst[v * inf] = 1.0f;
    }
    return TB_OK;
}

static void tb__joint_pos(const tb_model *m, int j, float out[3])
{
    const float *w = m->skel.bind_world[j];
    out[0] = w[12];
    out[1] = w[13];
    out[2] = w[14];
}

float tb_measure_bone_distance(const tb_model *m, const uint8_t *mask, const uint16_t *joints, const float *weights)
{
    uint32_t *list = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *list);
    if (!list)
        return NAN;
    size_t n = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        if (mask[v])
            list[n++] = (uint32_t)v;
    /* one implementation of SPEC A9 for the report and the measurement */
    float d = n ? tb__bone_distance(m, list, n, TB__TERMINAL_EXTENSION, tb__joints(m, joints), tb__weights(m, weights))
                : NAN;
    free(list);
    return d;
}

/* ---- measuring -------------------------------------------------------- */

static int tb__cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts and de-duplicates v[0, n); returns the unique count. */
static size_t tb__sort_unique_u32(uint32_t *v, size_t n)
{
    if (n > 24) {
        qsort(v, n, sizeof *v, tb__cmp_u32); /* a fan's hub: many sides at one vertex */
    } else {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = v[i];
            size_t k = i;
            for (; k > 0 && v[k - 1] > x; k--)
                v[k] = v[k - 1];
            v[k] = x;
        }
    }
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || v[i] != v[u - 1])
            v[u++] = v[i];
    return u;
}

/* Every triangle side bucketed by its lower vertex (a counting sort), each
 * bucket's upper vertices sorted and de-duplicated in place, then written
 * out as lo << 32 | hi: 4 bytes a side and 8 a unique edge at the peak,
 * where sorting the 64-bit sides took 16 a side. */
size_t tb_measure_edges(const tb_model *m, uint64_t **out)
{
    *out = NULL;
    if (m->triangle_count == 0)
        return 0;
    size_t nv = m->vertex_count, nt = m->triangle_count;
    size_t *end = calloc(nv + 1, sizeof *end); /* bucket v is [v ? end[v - 1] : 0, end[v]) */
    if (!end)
        return SIZE_MAX;
    /* a triangle's sides in corner order: 0-1, 1-2, 2-0 */
    for (size_t t = 0; t < nt * 3; t += 3)
        for (size_t s = 0; s < 3; s++) {
            uint32_t a = m->triangles[t + s], b = m->triangles[t + (s == 2 ? 0 : s + 1)];
            /* a degenerate side is no edge; an index past the vertices (a
             * malformed file) none either */
            if (a != b && (a > b ? a : b) < nv)
                end[a < b ? a : b]++;
        }
    size_t c = 0;
    for (size_t v = 0; v < nv; v++) {
        size_t k = end[v];
        end[v] = c; /* the bucket's start, for now: the fill moves it to its end */
        c += k;
    }
    uint32_t *hi = malloc((c + 1) * sizeof *hi);
    if (!hi) {
        free(end);
        return SIZE_MAX;
    }
    for (size_t t = 0; t < nt * 3; t += 3)
        for (size_t s = 0; s < 3; s++) {
            uint32_t a = m->triangles[t + s], b = m->triangles[t + (s == 2 ? 0 : s + 1)];
            if (a != b && (a > b ? a : b) < nv)
                hi[end[a < b ? a : b]++] = a < b ? b : a;
        }
    size_t u = 0;
    for (size_t v = 0, from = 0; v < nv; v++) {
        size_t k = tb__sort_unique_u32(hi + from, end[v] - from);
        for (size_t i = 0; i < k; i++) /* forward: u <= from (a few each: no call) */
            hi[u + i] = hi[from + i];
        from = end[v];
        end[v] = u += k; /* now the end of v's unique edges */
    }
    uint64_t *e = malloc((u + 1) * sizeof *e);
    if (!e) {
        free(hi);
        free(end);
        return SIZE_MAX;
    }
    for (size_t v = 0, i = 0; v < nv; v++)
        for (; i < end[v]; i++)
            e[i] = (uint64_t)v << 32 | hi[i];
    free(hi);
    free(end);
    *out = e;
    return u;
}

/* Rotation part of a world matrix as a unit quaternion (scale removed). */
static void tb__world_rotation(const float w[16], versor q)
{
    mat4 r;
    glm_mat4_identity(r);
    for (int c = 0; c < 3; c++) {
        float len = sqrtf(w[c * 4] * w[c * 4] + w[c * 4 + 1] * w[c * 4 + 1] + w[c * 4 + 2] * w[c * 4 + 2]);
        float inv = len > 0 ? 1.0f / len : 0;
        for (int row = 0; row < 3; row++)
            r[c][row] = w[c * 4 + row] * inv;
    }
    glm_mat4_quat(r, q);
    glm_quat_normalize(q);
}

/* The group's figures from its histogram (passes/stretch_hist.h): the
 * count, torn count, min and max exact; p95 and p99 the nearest ranks'
 * values within half a bin (1e-4 wide near 1). */
static void tb__stats(tb_stretch_stats *s, tb__hist *h, size_t edges)
{
    memset(s, 0, sizeof *s);
    tb__hist_tally(h);
    s->edges = edges;
    s->samples = (size_t)h->n;
    if (h->n == 0) {
        s->p95 = s->p99 = s->min = s->max = s->torn_frac = NAN;
        return;
    }
    s->torn = (size_t)h->torn;
    s->min = h->min; /* tb__hist_min's, from the tally; all NaN: no value (NaN) */
    s->max = h->max;
    s->p99 = tb__hist_rank(h, tb_rank_nearest((size_t)h->n, 0.99));
    s->p95 = tb__hist_rank(h, tb_rank_nearest((size_t)h->n, 0.95));
    s->torn_frac = (float)((double)s->torn / (double)h->n);
}

static tb_result tb__validate(const tb_measure_desc *d, tb_error *err)
{
    if (d->instants < 2)
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.instants", "must be >= 2 (0 means 24)");
    if (d->instants > TB_MEASURE_MAX_INSTANTS) /* time grows as edges x instants */
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.instants", "must be at most %d, not %d",
                        TB_MEASURE_MAX_INSTANTS, d->instants);
    if (!(d->torn_above > 1))
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.torn_above", "must be > 1");
    if (!(d->torn_below > 0 && d->torn_below < 1))
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.torn_below", "must be in (0, 1)");
    if (!(d->degenerate_h > 0))
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.degenerate_h", "must be > 0");
    if (!(d->hook_rate_hz >= 0) || !isfinite(d->hook_rate_hz))
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.hook_rate_hz", "must be >= 0");
    if (d->warmup_passes < 0)
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.warmup_passes", "must be >= 0");
    if ((d->joints == NULL) != (d->weights == NULL))
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.joints", "joints and weights go together");
    return TB_OK;
}

/* What a clip's measure needs before its first instant that does not
 * depend on the clip (tailbone/measure.h): made once for the clips of a job
 * (tb_measure_prepare, read-only while they run, on any thread) or by the
 * call itself. */
struct tb_measure_prep {
    const tb_model *m;
    const uint16_t *joints;
    const float *weights;
    size_t nv, inf;
    int jc;
    const uint64_t *edges; /* the caller's (d.edges) or own_edges: while preparing only */
    size_t ne;
    uint32_t *first;       /* per vertex + 1: its edges to higher vertices are hi[first[v] … first[v + 1]) */
    uint32_t *hi;          /* per edge, in the edges' order by lower vertex: its higher vertex */
    size_t group_edges[3]; /* measured edges: tail, body, seam */
    size_t nruns;          /* runs of skinned vertices in runs */
    float torn_above, torn_below;
    tb_measure_result head; /* every result's fields that are not the clip's */
    uint64_t *own_edges;
    float *bind_len;
    uint8_t *group;      /* per edge: 0 skip, 1 tail, 2 body, 3 seam (one vertex in the tail) */
    uint8_t *mask;
    uint8_t *is_tail_joint;
    uint8_t *motion;     /* per skeleton joint: a tail (motion) bone */
    size_t *runs;        /* start, count pairs of the vertices the edges use (NULL: all) */
    int for_positions;   /* made for a desc with positions_out: no runs, no merging */
    uint32_t *mult;      /* per edge: how many edges of the mesh it stands for (NULL: one each) */
    uint32_t max_mult;   /* the largest mult (1 without): a held pose's count stays in 32 bits */
    uint32_t *lows;      /* the lower vertices that have edges, first indexed by their place
                          * here (tb__prep_alike); NULL: first indexed by vertex */
    size_t nlows;
    float *cpos;         /* merged: the classes the edges use, side by side (tb__alike_compact); */
    uint16_t *cjoints;   /* lows, hi and tip_at are then their places here */
    float *cweights;     /* cinf a class: its weights > 0 in their order, then 0 (tb__alike_slots) */
    size_t cinf;
    size_t nc;
    size_t tip_at;       /* where the tip's skinned position is (tb__prep_alike) */
};

void tb_measure_prep_free(tb_measure_prep *p)
{
    if (!p)
        return;
    free(p->own_edges);
    free(p->first);
    free(p->hi);
    free(p->bind_len);
    free(p->group);
    free(p->mask);
    free(p->is_tail_joint);
    free(p->motion);
    free(p->runs);
    free(p->mult);
    free(p->lows);
    free(p->cpos);
    free(p->cjoints);
    free(p->cweights);
    free(p);
}

/* One clip's scratch (the prep's is shared), in one place so one exit frees it. */
typedef struct tb__scratch {
    tb_transform *locals;
    float (*world)[16];
    float (*skin_mats)[16];
    float (*held_mats)[16]; /* the skinning matrices of the last instant skinned (tb__mc_instant) */
    float *skinned;      /* desc.skinned, or own_skinned */
    float *own_skinned;
    tb__hist hist[3];    /* tail, body, seam: O(1) memory whatever the edges and instants */
    int block_of;        /* the group whose bins start the block of those used (tb__hist_init_block); -1 none */
    versor *rot0;
} tb__scratch;

static void tb__scratch_free(tb__scratch *s)
{
    free(s->locals);
    free(s->world);
    free(s->skin_mats);
    free(s->held_mats);
    free(s->own_skinned);
    if (s->block_of >= 0)
        tb__hist_free_block(&s->hist[s->block_of]);
    free(s->rot0);
}

/* Poses the skeleton at clip time t (sample, local-to-world, hook). */
static void tb__pose(const tb_model *m, const tb_clip *clip, const tb_measure_desc *d, tb__scratch *s, float t,
                     float dt)
{
    tb_clip_sample(clip, &m->skel, t, s->locals);
    tb_local_to_world(&m->skel, s->locals, NULL, s->world);
    if (d->pose_hook)
        d->pose_hook(d->hook_user, t, dt, s->locals, s->world);
}

/* The hook sees the clip between instants at hook_rate_hz: poses times in
 * (t0, t1) without skinning, so t1 is posed by the caller with the returned
 * dt (the last sub-interval). */
static float tb__hook_between(const tb_model *m, const tb_clip *clip, const tb_measure_desc *d, tb__scratch *s,
                              float t0, float t1)
{
    float span = t1 - t0;
    if (!d->pose_hook || d->hook_rate_hz <= 0 || !(span > 0))
        return span > 0 ? span : 0;
    int steps = (int)ceilf(span * d->hook_rate_hz - 1e-4f);
    if (steps < 1)
        steps = 1;
    float dt = span / (float)steps;
    for (int i = 1; i < steps; i++)
        tb__pose(m, clip, d, s, t0 + dt * (float)i, dt);
    return dt;
}

/* ---- the prep: the edges, the tail, the groups, the tail's ends, the runs -- */

/* Edges (the caller's or the model's), the shared scratch, the results'
 * header. */
static tb_result tb__prep_setup(tb_measure_prep *p, const tb_measure_desc *d, tb_error *err)
{
    const tb_model *m = p->m;
    if (d->edges) { /* the caller's, from tb_measure_edges: shared across clips */
        p->ne = d->edge_count;
        p->edges = d->edges;
    } else {
        p->ne = tb_measure_edges(m, &p->own_edges);
        if (p->ne == SIZE_MAX)
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        p->edges = p->own_edges;
    }
    if (p->ne >= UINT32_MAX)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    p->first = calloc(p->nv + 2, sizeof *p->first);
    p->hi = malloc((p->ne + 1) * sizeof *p->hi);
    p->bind_len = malloc((p->ne + 1) * sizeof *p->bind_len);
    p->group = malloc(p->ne + 1);
    p->mask = malloc(p->nv + 1);
    p->is_tail_joint = malloc((size_t)p->jc + 1);
    p->motion = calloc((size_t)p->jc + 1, 1);
    if (!p->first || !p->hi || !p->bind_len || !p->group || !p->mask || !p->is_tail_joint || !p->motion)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* the edges by lower vertex (a stable counting sort: the order of
     * tb_measure_edges' sorted list), 4 bytes an edge and a vertex */
    for (size_t e = 0; e < p->ne; e++)
        p->first[(p->edges[e] >> 32) + 1]++;
    for (size_t v = 0; v < p->nv; v++)
        p->first[v + 1] += p->first[v];
    for (size_t e = 0; e < p->ne; e++)
        p->hi[p->first[p->edges[e] >> 32]++] = (uint32_t)p->edges[e];
    for (size_t v = p->nv; v > 0; v--)
        p->first[v] = p->first[v - 1];
    p->first[0] = 0;
    tb_measure_result *out = &p->head;
    out->height = m->height;
    out->world_scale = tb_model_world_scale(m); /* the one rule (tailbone/model.h) */
    if (!isfinite(out->world_scale))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    return TB_OK;
}

/* ---- the tail (see measure.h): the caller's mask, its joints', or none ---- */

static void tb__prep_tail(tb_measure_prep *p, const tb_measure_desc *d)
{
    const tb_model *m = p->m;
    tb_measure_result *out = &p->head;
    const size_t nv = p->nv;
    int tail_joint_count = tb__tail_joints(p->is_tail_joint, m, d->tail_joints);
    if (d->tail_mask) {
        memcpy(p->mask, d->tail_mask, nv);
        for (size_t v = 0; v < nv; v++)
            out->tail_vertices += p->mask[v] = d->tail_mask[v] != 0;
        out->tail_source = TB_TAIL_FROM_MASK;
    } else if (tail_joint_count > 0) {
        out->tail_vertices = tb__mask_from(p->mask, m, p->is_tail_joint, p->joints, p->weights);
        out->tail_source = TB_TAIL_FROM_JOINTS;
    } else {
        memset(p->mask, 0, nv);
        out->tail_source = TB_TAIL_NONE;
    }
}

/* ---- groups and bind lengths; degenerate edges are skipped (group 0) ------ */

static void tb__prep_groups(tb_measure_prep *p, const tb_measure_desc *d)
{
    const tb_model *m = p->m;
    const float min_len = d->degenerate_h * m->height;
    size_t *count = p->group_edges;
    for (size_t a = 0; a < p->nv; a++)
        for (size_t e = p->first[a]; e < p->first[a + 1]; e++) {
            size_t b = p->hi[e];
            float len = tb__dist3(m->positions + a * 3, m->positions + b * 3);
            p->bind_len[e] = len;
            uint8_t g = 0;
            if (len >= min_len && isfinite(len))
                g = (p->mask[a] && p->mask[b]) ? 1 : (!p->mask[a] && !p->mask[b]) ? 2 : 3;
            p->group[e] = g;
            count[0] += g == 1;
            count[1] += g == 2;
            count[2] += g == 3;
        }
}

/* ---- the tail's root and tip (bind space), the bones whose rotation is
 * reported ------------------------------------------------------------------ */

/* The tail's root: its first joint, else the collar ring where tail edges
 * meet body edges (a mask only), else its vertex nearest the hips (a
 * separate shell). */
static void tb__prep_root(const tb_measure_prep *p, float root[3])
{
    const tb_model *m = p->m;
    root[0] = root[1] = root[2] = 0;
    for (int k = 0; k < p->jc; k++)
        if (p->is_tail_joint[k] && (m->skel.parents[k] < 0 || !p->is_tail_joint[m->skel.parents[k]])) {
            tb__joint_pos(m, k, root);
            return;
        }
    double acc[3] = {0, 0, 0};
    size_t cnt = 0;
    for (size_t e = 0; e < p->ne; e++) {
        uint32_t a = (uint32_t)(p->edges[e] >> 32), b = (uint32_t)p->edges[e];
        if (p->mask[a] != p->mask[b]) {
            uint32_t t = p->mask[a] ? a : b;
            for (int c = 0; c < 3; c++)
                acc[c] += m->positions[(size_t)t * 3 + (size_t)c];
            cnt++;
        }
    }
    if (cnt) {
        for (int c = 0; c < 3; c++)
            root[c] = (float)(acc[c] / (double)cnt);
        return;
    }
    int hips = m->role_joint[TB_ROLE_HIPS] >= 0 ? m->role_joint[TB_ROLE_HIPS] : 0;
    float hp[3], best = INFINITY;
    tb__joint_pos(m, hips, hp);
    for (size_t v = 0; v < p->nv; v++)
        if (p->mask[v]) {
            float dd = tb__dist3(m->positions + v * 3, hp);
            if (dd < best) {
                best = dd;
                memcpy(root, m->positions + v * 3, 3 * sizeof *root);
            }
        }
}

static void tb__prep_ends(tb_measure_prep *p)
{
    const tb_model *m = p->m;
    tb_measure_result *out = &p->head;
    const size_t nv = p->nv, inf = p->inf;
    out->tip_vertex = -1;
    out->bone_distance = NAN;
    out->max_bone_rotation_rad = NAN;
    if (out->tail_vertices <= 0)
        return;
    float root[3];
    tb__prep_root(p, root);
    float far = -1;
    for (size_t v = 0; v < nv; v++)
        if (p->mask[v]) {
            float dd = tb__dist3(m->positions + v * 3, root);
            if (dd > far) {
                far = dd;
                out->tip_vertex = (int)v;
            }
        }
    out->bone_distance = tb_measure_bone_distance(m, p->mask, p->joints, p->weights);
    /* The bones that actually carry the tail (its dominant influences):
     * the Tail_* bones on a repaired rig, Hips in the rigid variant, the
     * leg on a wrongly weighted one, so every variant reports the
     * rotation of what moves its tail. */
    for (size_t v = 0; v < nv; v++) {
        if (!p->mask[v])
            continue;
        float best = 0;
        int bj = -1;
        for (size_t i = 0; i < inf; i++)
            if (p->weights[v * inf + i] > best && p->joints[v * inf + i] < m->skin_joint_count) {
                best = p->weights[v * inf + i];
                bj = m->skin_joints[p->joints[v * inf + i]];
            }
        if (bj >= 0)
            p->motion[bj] = 1;
    }
    for (int k = 0; k < p->jc; k++)
        out->motion_bone_count += p->motion[k];
}

/* ---- alike vertices: a mesh with flat shading or UV seams repeats each
 * point once per face or island around it. Vertices with the same bind
 * position, joints, weights and tail mask skin to the same point at every
 * instant, bit for bit (tb_skin_points reads nothing else), so their edges
 * have the same stretch: one of them (the first of its class) is skinned,
 * and each edge between classes is measured once, counted as many times as
 * the mesh has it (mult). The histograms receive the same samples in
 * another order, which changes none of their figures (counts, min and max
 * by value, a bin's lo and hi; stretch_hist.h). Only when it pays: under
 * three classes in four vertices (the Wolf: 2,838 points, 13,338 vertices).
 * ------------------------------------------------------------------------ */

static int tb__alike(const tb_measure_prep *p, size_t a, size_t b)
{
    const float *pos = p->m->positions;
    const size_t inf = p->inf;
    return p->mask[a] == p->mask[b] && !memcmp(pos + a * 3, pos + b * 3, 3 * sizeof *pos) &&
           !memcmp(p->joints + a * inf, p->joints + b * inf, inf * sizeof *p->joints) &&
           !memcmp(p->weights + a * inf, p->weights + b * inf, inf * sizeof *p->weights);
}

static uint32_t tb__vertex_hash(const tb_measure_prep *p, size_t v)
{
    const size_t inf = p->inf;
    uint32_t h = 0x811c9dc5u, w;
    for (int c = 0; c < 3; c++) {
        memcpy(&w, p->m->positions + v * 3 + (size_t)c, sizeof w);
        h = (h ^ w) * 0x9e3779b1u;
    }
    for (size_t i = 0; i < inf; i++) {
        memcpy(&w, p->weights + v * inf + i, sizeof w);
        h = (h ^ w ^ (uint32_t)p->joints[v * inf + i] << 7) * 0x9e3779b1u;
    }
    h ^= p->mask[v];
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    return h ^ h >> 12;
}

/* The class of every vertex (its first vertex) in rep; 0 when there are too
 * few alike vertices to pay, or no memory (then nothing is merged). */
static int tb__alike_classes(const tb_measure_prep *p, uint32_t **rep_out)
{
    const size_t nv = p->nv;
    *rep_out = NULL;
    size_t cap = 16;
    while (cap < nv + nv / 4 + 1)
        cap <<= 1;
    uint32_t *slot = calloc(cap, sizeof *slot); /* vertex + 1 of each class; 0 empty */
    uint32_t *rep = slot ? malloc((nv + 1) * sizeof *rep) : NULL;
    if (!rep) {
        free(slot);
        return 0;
    }
    size_t classes = 0;
    for (size_t v = 0; v < nv; v++) {
        size_t h = tb__vertex_hash(p, v) & (cap - 1);
        while (slot[h] && !tb__alike(p, slot[h] - 1, v))
            h = (h + 1) & (cap - 1);
        if (!slot[h])
            slot[h] = (uint32_t)v + 1, classes++;
        rep[v] = slot[h] - 1;
    }
    free(slot);
    if (classes * 4 >= nv * 3) { /* too few alike to pay */
        free(rep);
        rep = NULL;
    }
    *rep_out = rep;
    return rep != NULL;
}

/* The measured edges between classes, by lower class vertex: each once,
 * with its count. 0 (nothing changed) when out of memory or when two edges
 * of one pair of classes differ in group or bind length (they cannot:
 * both follow from the classes). */
static int tb__alike_edges(tb_measure_prep *p, const uint32_t *rep)
{
    const size_t nv = p->nv;
    uint32_t *first = calloc(nv + 2, sizeof *first);
    size_t n = 0;
    for (size_t a = 0; first && a < nv; a++)
        for (size_t e = p->first[a]; e < p->first[a + 1]; e++)
            if (p->group[e]) {
                uint32_t ra = rep[a], rb = rep[p->hi[e]];
                first[(ra < rb ? ra : rb) + 1]++;
                n++;
            }
    uint64_t *key = first ? malloc((n + 1) * sizeof *key) : NULL; /* higher class << 32 | edge */
    uint32_t *hi = key ? malloc((n + 1) * sizeof *hi) : NULL, *mult = hi ? malloc((n + 1) * sizeof *mult) : NULL;
    float *len = mult ? malloc((n + 1) * sizeof *len) : NULL;
    uint8_t *group = len ? malloc(n + 1) : NULL;
    int ok = group != NULL;
    if (ok) {
        for (size_t v = 0; v < nv; v++)
            first[v + 1] += first[v];
        for (size_t a = 0; a < nv; a++) /* first[lo] moves to its bucket's end */
            for (size_t e = p->first[a]; e < p->first[a + 1]; e++)
                if (p->group[e]) {
                    uint32_t ra = rep[a], rb = rep[p->hi[e]];
                    key[first[ra < rb ? ra : rb]++] = (uint64_t)(ra < rb ? rb : ra) << 32 | e;
                }
        size_t u = 0;
        for (size_t v = 0, from = 0; v < nv && ok; v++) {
            size_t to = first[v];
            tb__sort_u64(key + from, to - from);
            for (size_t i = from; i < to; i++) {
                uint32_t h = (uint32_t)(key[i] >> 32), e = (uint32_t)key[i];
                if (h == v) {
                    ok = 0; /* an edge within a class: no length, never measured */
                } else if (i > from && h == hi[u - 1]) {
                    ok = group[u - 1] == p->group[e] && !memcmp(&len[u - 1], &p->bind_len[e], sizeof *len);
                    mult[u - 1]++;
                } else {
                    hi[u] = h, group[u] = p->group[e], len[u] = p->bind_len[e], mult[u] = 1, u++;
                }
            }
            from = to;
            first[v] = (uint32_t)u; /* now the end of v's merged edges */
        }
        for (size_t v = nv; v > 0; v--)
            first[v] = first[v - 1];
        first[0] = 0;
    }
    free(key);
    /* most vertices are no class's first, so have no edges: first indexed
     * by the vertices that have (the loops skip the others) */
    size_t nl = 0;
    for (size_t v = 0; ok && v < nv; v++)
        nl += first[v + 1] > first[v];
    uint32_t *lows = ok ? malloc((nl + 1) * sizeof *lows) : NULL;
    uint32_t *listed = lows ? malloc((nl + 2) * sizeof *listed) : NULL;
    if (listed) {
        size_t k = 0;
        for (size_t v = 0; v < nv; v++)
            if (first[v + 1] > first[v])
                lows[k] = (uint32_t)v, listed[k++] = first[v];
        listed[k] = first[nv];
        free(first);
        first = listed;
        p->lows = lows, p->nlows = nl;
    } else {
        free(lows);
    }
    if (!ok) {
        free(first), free(hi), free(mult), free(len), free(group);
        return 0;
    }
    free(p->first), free(p->hi), free(p->group), free(p->bind_len);
    p->first = first, p->hi = hi, p->group = group, p->bind_len = len, p->mult = mult;
    for (size_t e = 0; e < first[p->lows ? p->nlows : nv]; e++)
        p->max_mult = mult[e] > p->max_mult ? mult[e] : p->max_mult;
    return 1;
}

/* The compact classes' influences cut to the most weights > 0 any class
 * has, each class's in their order (0 after them): tb_skin_points skips a
 * weight not > 0 and adds the others in slot order, so each point is the
 * same bit for bit, with fewer slots to look at (the Wolf: one a class of
 * four). */
static void tb__alike_slots(tb_measure_prep *p)
{
    const size_t inf = p->cinf, nc = p->nc;
    size_t most = 0;
    for (size_t k = 0; k < nc; k++) {
        size_t on = 0;
        for (size_t i = 0; i < inf; i++)
            on += p->cweights[k * inf + i] > 0.0f;
        most = on > most ? on : most;
    }
    if (most == 0 || most >= inf || inf > 64)
        return;
    for (size_t k = 0; k < nc; k++) { /* in place: a class's new slots never pass its old ones */
        uint16_t jn[64];
        float w[64];
        size_t on = 0;
        for (size_t i = 0; i < inf && i < 64; i++)
            if (p->cweights[k * inf + i] > 0.0f)
                jn[on] = p->cjoints[k * inf + i], w[on++] = p->cweights[k * inf + i];
        for (size_t i = 0; i < most; i++) {
            p->cjoints[k * most + i] = i < on ? jn[i] : 0;
            p->cweights[k * most + i] = i < on ? w[i] : 0.0f;
        }
    }
    p->cinf = most;
}

/* The classes the merged edges (and the tip) use, numbered in vertex
 * order, their bind positions, joints and weights side by side: a frame
 * skins them in one call into the first places of its skinned array (the
 * same inputs, so the same points bit for bit), and the edges and the tip
 * name those places. Nothing changes when memory is short. */
static void tb__alike_compact(tb_measure_prep *p)
{
    const size_t nv = p->nv, inf = p->inf;
    uint32_t *at = calloc(nv + 1, sizeof *at); /* vertex -> place + 1; 0: unused */
    if (!at)
        return;
    for (size_t i = 0; i < p->nlows; i++)
        at[p->lows[i]] = 1;
    for (size_t e = 0; e < p->first[p->nlows]; e++)
        at[p->hi[e]] = 1;
    if (p->head.tip_vertex >= 0)
        at[p->tip_at] = 1;
    size_t nc = 0;
    for (size_t v = 0; v < nv; v++)
        if (at[v])
            at[v] = (uint32_t)++nc;
    float *cpos = malloc((nc + 1) * 3 * sizeof *cpos), *cw = malloc((nc + 1) * inf * sizeof *cw);
    uint16_t *cj = malloc((nc + 1) * inf * sizeof *cj);
    if (!cpos || !cw || !cj) {
        free(cpos), free(cw), free(cj), free(at);
        return;
    }
    for (size_t v = 0; v < nv; v++)
        if (at[v]) {
            size_t k = at[v] - 1;
            memcpy(cpos + k * 3, p->m->positions + v * 3, 3 * sizeof *cpos);
            memcpy(cj + k * inf, p->joints + v * inf, inf * sizeof *cj);
            memcpy(cw + k * inf, p->weights + v * inf, inf * sizeof *cw);
        }
    for (size_t i = 0; i < p->nlows; i++)
        p->lows[i] = at[p->lows[i]] - 1;
    for (size_t e = 0; e < p->first[p->nlows]; e++)
        p->hi[e] = at[p->hi[e]] - 1;
    if (p->head.tip_vertex >= 0)
        p->tip_at = at[p->tip_at] - 1;
    p->cpos = cpos, p->cjoints = cj, p->cweights = cw, p->nc = nc, p->cinf = inf;
    tb__alike_slots(p);
    free(at);
}

static void tb__prep_alike(tb_measure_prep *p)
{
    int tip = p->head.tip_vertex;
    p->tip_at = tip >= 0 ? (size_t)tip : 0;
    uint32_t *rep = NULL;
    if (p->for_positions || p->nv < 2 || p->nv >= UINT32_MAX || !tb__alike_classes(p, &rep))
        return;
    if (tb__alike_edges(p, rep)) {
        if (tip >= 0)
            p->tip_at = rep[tip];
        if (p->lows)
            tb__alike_compact(p);
    }
    free(rep);
}

/* ---- runs: only the vertices some measured edge (or the tip) uses are
 * skinned, in runs of consecutive indices, when that is under half of them
 * (the blend search's tries measure the edges near the tail) --------------- */

static tb_result tb__prep_runs(tb_measure_prep *p, tb_error *err)
{
    const size_t nv = p->nv;
    if (p->for_positions || nv == 0 || p->cpos) /* merged and side by side: one run */
        return TB_OK;
    uint8_t *used = calloc(nv, 1);
    if (!used)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    size_t count = 0;
    for (size_t i = 0, nl = p->lows ? p->nlows : nv; i < nl; i++)
        for (size_t e = p->first[i], a = p->lows ? p->lows[i] : i; e < p->first[i + 1]; e++)
            if (p->group[e]) {
                size_t b = p->hi[e];
                count += !used[a] + !used[b];
                used[a] = used[b] = 1;
            }
    size_t tip = p->tip_at;
    if (p->head.tip_vertex >= 0 && !used[tip])
        used[tip] = 1, count++;
    tb_result r = TB_OK;
    if (count < nv / 2) {
        size_t cap = 0, nruns = 0;
        for (size_t v = 0; v < nv; v++)
            cap += used[v] && (v == 0 || !used[v - 1]);
        p->runs = malloc((cap + 1) * 2 * sizeof *p->runs);
        if (!p->runs) {
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        } else {
            for (size_t v = 0; v < nv; v++)
                if (used[v]) {
                    if (v == 0 || !used[v - 1])
                        p->runs[2 * nruns++] = v, p->runs[2 * nruns - 1] = 0;
                    p->runs[2 * nruns - 1]++;
                }
        }
        p->nruns = nruns;
    }
    free(used);
    return r;
}

/* setup → tail → groups → ends → alike → runs */
tb_result tb_measure_prepare(tb_measure_prep **out, const tb_model *m, const tb_measure_desc *desc_in, tb_error *err)
{
    *out = NULL;
    tb_measure_desc d = tb_measure_desc_defaults(desc_in);
    tb_result r = tb__validate(&d, err);
    if (r != TB_OK)
        return r;
    tb_measure_prep *p = calloc(1, sizeof *p);
    if (!p)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    p->m = m;
    p->joints = tb__joints(m, d.joints);
    p->weights = tb__weights(m, d.weights);
    p->nv = m->vertex_count;
    p->inf = (size_t)m->influences;
    p->jc = m->skel.joint_count;
    p->torn_above = d.torn_above;
    p->torn_below = d.torn_below;
    p->for_positions = d.positions_out != NULL;
    p->max_mult = 1;
    r = tb__prep_setup(p, &d, err);
    if (r == TB_OK) {
        tb__prep_tail(p, &d);
        tb__prep_groups(p, &d);
        tb__prep_ends(p);
        tb__prep_alike(p);
        r = tb__prep_runs(p, err);
    }
    /* the list itself is not kept (the caller's may be freed) */
    free(p->own_edges);
    p->own_edges = NULL;
    p->edges = NULL;
    if (r != TB_OK) {
        tb_measure_prep_free(p);
        return r;
    }
    *out = p;
    return TB_OK;
}

/* One call of tb_measure_clip: what it was given, the prep, its scratch,
 * and what one instant hands the next. */
typedef struct tb__mc_job {
    tb_measure_result *out;
    const tb_measure_prep *p;
    const tb_model *m;
    const tb_clip *clip;
    tb_measure_desc d;
    int n;
    float inv_scale;       /* bind units per world unit */
    float step;            /* clip seconds between instants */
    float prev_tip[3];     /* per instant: the tip's travel and the motion bones' rotation */
    double travel;
    float max_rot;
    int dedupe;            /* 0: every instant skinned and walked (tb__measure_clip_each) */
    uint32_t held;         /* instants whose stretch is s.skinned's, not yet walked */
    tb__scratch s;
} tb__mc_job;

/* The clip's own scratch and histograms; the result's header from the prep. */
static tb_result tb__mc_setup(tb__mc_job *j, tb_error *err)
{
    const tb_measure_prep *p = j->p;
    tb__scratch *s = &j->s;
    const size_t jc = (size_t)p->jc;
    s->block_of = -1;
    s->locals = malloc((jc + 1) * sizeof *s->locals);
    s->world = malloc((jc + 1) * sizeof *s->world);
    s->skin_mats = malloc(((size_t)j->m->skin_joint_count + 1) * sizeof *s->skin_mats);
    s->held_mats = malloc(((size_t)j->m->skin_joint_count + 1) * sizeof *s->held_mats);
    s->skinned = j->d.skinned ? j->d.skinned : (s->own_skinned = malloc((p->nv + 1) * 3 * sizeof *s->skinned));
    s->rot0 = malloc((jc + 1) * sizeof *s->rot0);
    if (!s->locals || !s->world || !s->skin_mats || !s->held_mats || !s->skinned || !s->rot0)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* the groups with edges: their histograms' bins in one block */
    tb__hist used[3];
    int n = 0;
    for (int g = 0; g < 3; g++)
        n += p->group_edges[g] != 0;
    if (n > 0 && !tb__hist_init_block(used, n, p->torn_above, p->torn_below))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int g = 0, k = 0; g < 3; g++)
        if (p->group_edges[g]) {
            s->hist[g] = used[k++];
            if (s->block_of < 0)
                s->block_of = g;
        }
    *j->out = p->head;
    j->out->duration_s = j->clip->duration_s;
    j->out->instants = j->n;
    j->inv_scale = 1.0f / j->out->world_scale;
    return TB_OK;
}

/* ---- warm-up: whole passes through the clip for the hook only. Returns the
 * dt of the first posed time: 0 unless warmed up, -1 when the warm-up's last
 * step already posed it. ----------------------------------------------------- */

static float tb__mc_warmup(tb__mc_job *j)
{
    const tb_measure_desc *d = &j->d;
    const int n = j->n;
    const float step = j->step;
    if (!d->pose_hook || d->warmup_passes <= 0)
        return 0;
    float t_prev = 0;
    tb__pose(j->m, j->clip, d, &j->s, 0, 0);
    for (int pass = 0; pass < d->warmup_passes; pass++) {
        for (int k = 1; k <= (d->loop ? n : n - 1); k++) {
            float t = (float)k * step;
            float dt = tb__hook_between(j->m, j->clip, d, &j->s, t_prev, t);
            /* The end of a looping pass is the start of the next one. */
            tb__pose(j->m, j->clip, d, &j->s, d->loop && k == n ? 0 : t, dt);
            t_prev = t;
        }
        if (!d->loop) {
            /* A non-looping clip jumps back to its start: one step. */
            tb__pose(j->m, j->clip, d, &j->s, 0, step > 0 ? step : 0);
        }
        t_prev = 0;
    }
    return -1;
}

/* ---- one instant: pose, skin, stretch, the tip's travel, the rotations ---- */

/* tb__dist3's operations; its square root without the errno check of
 * sqrtf (the sum is never negative; a NaN stays NaN), which costs a
 * compare and a branch a sample in the edge loop. */
static inline float tb__edge_dist(const float a[3], const float b[3])
{
    float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    float d2 = dx * dx + dy * dy + dz * dz;
#if defined(__SSE__) && (defined(__x86_64__) || defined(__i386__))
    return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(d2)));
#else
    return sqrtf(d2);
#endif
}

/* The edge loop's place and what it hands back: where it stopped, the
 * samples outside [TB__HIST_NEAR_LO, TB__HIST_NEAR_HI) it kept for
 * tb__hist_add_n (TB__MC_SLOW or more: it stops at the end of the batch
 * that reached it), and the near bins' torn counts. */
#define TB__MC_SLOW 256
#define TB__MC_BATCH 64

typedef struct tb__mc_walk {
    size_t i, e;      /* the next edge: e of the i-th lower vertex */
    size_t slow;      /* samples in x, k, g */
    float x[TB__MC_SLOW + TB__MC_BATCH];
    uint32_t k[TB__MC_SLOW + TB__MC_BATCH];
    uint8_t g[TB__MC_SLOW + TB__MC_BATCH];
    uint64_t torn[4]; /* by group (1..3) */
} tb__mc_walk;

/* x[t] = |pos[a[t]] - pos[b[t]]| * inv_scale / len[t] for t < n, each with
 * tb__edge_dist's operations then the product and the quotient, rounded as
 * one edge at a time would: four at once where SSE is (a square root and a
 * division per edge were the loop's bound: one divider, one a few cycles). */
static void tb__mc_ratios(const float *restrict pos, const uint32_t *restrict a, const uint32_t *restrict b,
                          const float *restrict len, size_t n, float inv_scale, float *restrict x)
{
    size_t t = 0;
#ifdef TB__MC_SSE
    const __m128 s = _mm_set1_ps(inv_scale);
    for (; t + 4 <= n; t += 4) {
        const float *p0 = pos + (size_t)a[t] * 3, *p1 = pos + (size_t)a[t + 1] * 3;
        const float *p2 = pos + (size_t)a[t + 2] * 3, *p3 = pos + (size_t)a[t + 3] * 3;
        const float *q0 = pos + (size_t)b[t] * 3, *q1 = pos + (size_t)b[t + 1] * 3;
        const float *q2 = pos + (size_t)b[t + 2] * 3, *q3 = pos + (size_t)b[t + 3] * 3;
        __m128 dx = _mm_sub_ps(_mm_setr_ps(p0[0], p1[0], p2[0], p3[0]), _mm_setr_ps(q0[0], q1[0], q2[0], q3[0]));
        __m128 dy = _mm_sub_ps(_mm_setr_ps(p0[1], p1[1], p2[1], p3[1]), _mm_setr_ps(q0[1], q1[1], q2[1], q3[1]));
        __m128 dz = _mm_sub_ps(_mm_setr_ps(p0[2], p1[2], p2[2], p3[2]), _mm_setr_ps(q0[2], q1[2], q2[2], q3[2]));
        __m128 d2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy)), _mm_mul_ps(dz, dz));
        _mm_storeu_ps(x + t, _mm_div_ps(_mm_mul_ps(_mm_sqrt_ps(d2), s), _mm_loadu_ps(len + t)));
    }
#endif
    for (; t < n; t++)
        x[t] = tb__edge_dist(pos + (size_t)a[t] * 3, pos + (size_t)b[t] * 3) * inv_scale / len[t];
}

/* From w's place on: each measured edge's ratio, into its group's bins on
 * the block (tb__hist_add_near's steps: one base pointer and the group's
 * offset, the thresholds the same in every group) or, outside the near
 * range, into w's list; returns when the list is full or the edges end.
 * The edges go in batches of TB__MC_BATCH measured ones, their ratios
 * computed together (tb__mc_ratios), then binned one by one in order.
 * with_mult and torn_near are constants where tb__mc_walk_run calls it:
 * the edges' counts (1 each without), and whether a threshold's bin lies
 * in the near range (the defaults' 0.67 and 1.5 do not: no test a sample);
 * each sample counts times times that (the instants of a held pose,
 * tb__mc_instant: times separate walks would add the same samples), a
 * constant 1 but on a held pose's walk.
 * No call inside but tb__mc_ratios, once a batch: the compiler keeps the
 * loop's pointers in registers. */
#if defined(__GNUC__)
#define TB__MC_INLINE static inline __attribute__((always_inline))
#define TB__MC_NOINLINE __attribute__((noinline))
#else
#define TB__MC_INLINE static inline
#define TB__MC_NOINLINE
#endif
TB__MC_INLINE void tb__mc_walk_body(const tb__mc_job *j, tb__mc_walk *w, const int with_mult, const int torn_near,
                                     const uint32_t times)
{
    const tb_measure_prep *p = j->p;
    const tb__scratch *sc = &j->s;
    const uint32_t *restrict first = p->first, *restrict hi = p->hi;
    const uint8_t *restrict group = p->group;
    const float *restrict bind_len = p->bind_len, *restrict pos = sc->skinned;
    const uint32_t *restrict mult = p->mult;
    const float inv_scale = j->inv_scale;
    const uint32_t *restrict lows = p->lows;
    const size_t nl = lows ? p->nlows : p->nv;
    const tb__hist *h0 = &sc->hist[sc->block_of];
    uint64_t *const count = h0->count;
    float *const bin_lo = h0->lo, *const bin_hi = h0->hi;
    const size_t bin_above = h0->bin_above, bin_below = h0->bin_below;
    const float torn_above = h0->torn_above, torn_below = h0->torn_below;
    size_t off[4] = {0, 0, 0, 0};
    for (int g = 0; g < 3; g++)
        off[g + 1] = sc->hist[g].count ? (size_t)(sc->hist[g].count - count) : 0;
    uint64_t torn[4] = {0, 0, 0, 0};
    size_t i = w->i, e = w->e, slow = w->slow;
    uint32_t va[TB__MC_BATCH], vb[TB__MC_BATCH], ve[TB__MC_BATCH];
    float len[TB__MC_BATCH], xs[TB__MC_BATCH];
    while (i < nl) {
        /* the next measured edges, in order, their ratios at once */
        size_t n = 0;
        for (; i < nl && n < TB__MC_BATCH; i++) {
            const uint32_t v = lows ? lows[i] : (uint32_t)i;
            const size_t end = first[i + 1];
            if (e < first[i])
                e = first[i];
            for (; e < end && n < TB__MC_BATCH; e++)
                if (group[e]) {
                    va[n] = v, vb[n] = hi[e], ve[n] = (uint32_t)e, len[n] = bind_len[e];
                    n++;
                }
            if (e < end)
                break; /* the batch is full inside i's edges */
        }
        tb__mc_ratios(pos, va, vb, len, n, inv_scale, xs);
        for (size_t t = 0; t < n; t++) {
            const uint32_t eb = ve[t];
            const unsigned g = group[eb];
            const float x = xs[t];
            const uint32_t k = with_mult ? mult[eb] * times : times;
            if (x >= TB__HIST_NEAR_LO && x < TB__HIST_NEAR_HI) {
                const size_t b = 500 + (size_t)(long)((double)x * 1e4) - 5000; /* tb__hist_bin's */
                const size_t at = off[g] + b;
                count[at] += k;
                bin_lo[at] = x < bin_lo[at] ? x : bin_lo[at]; /* the bin's first sample: x < +inf */
                bin_hi[at] = x > bin_hi[at] ? x : bin_hi[at];
                if (torn_near && (b == bin_above || b == bin_below))
                    torn[g] += (x > torn_above || x < torn_below) ? k : 0;
            } else {
                w->x[slow] = x, w->k[slow] = k, w->g[slow] = (uint8_t)g;
                slow++;
            }
        }
        if (slow >= TB__MC_SLOW)
            break;
    }
    w->i = i, w->e = e, w->slow = slow;
    for (int g = 1; g < 4; g++)
        w->torn[g] += torn[g];
}

TB__MC_NOINLINE static void tb__mc_walk_run(const tb__mc_job *j, tb__mc_walk *w, uint32_t times)
{
    const tb__hist *h0 = &j->s.hist[j->s.block_of];
    const size_t near_lo = 500 + (size_t)(long)((double)TB__HIST_NEAR_LO * 1e4) - 5000;
    const size_t near_hi = 500 + (size_t)(long)((double)TB__HIST_NEAR_HI * 1e4) - 5000;
    const int torn_near = (h0->bin_above >= near_lo && h0->bin_above <= near_hi) ||
                          (h0->bin_below >= near_lo && h0->bin_below <= near_hi);
    if (times != 1) /* a held pose (rare): the thresholds' test whatever their bins */
        j->p->mult ? tb__mc_walk_body(j, w, 1, 1, times) : tb__mc_walk_body(j, w, 0, 1, times);
    else if (j->p->mult)
        torn_near ? tb__mc_walk_body(j, w, 1, 1, 1) : tb__mc_walk_body(j, w, 1, 0, 1);
    else
        torn_near ? tb__mc_walk_body(j, w, 0, 1, 1) : tb__mc_walk_body(j, w, 0, 0, 1);
}

/* Every measured edge's stretch at this instant (its length over its bind
 * length, in world units) into its group's histogram, times times (the
 * instants that hold this pose: what walking each of them adds, as the
 * histograms' figures do not depend on the order of their samples). A sample outside the
 * near range reaches its histogram after the near ones before it: each
 * bin still gets its samples in their order but for that (the near bins'
 * lo and hi are a min and a max over non-NaN samples, the same in any
 * order; NaN only ever goes the slow way, in order). */
static void tb__mc_stretch(tb__mc_job *j, uint32_t times)
{
    tb__scratch *sc = &j->s;
    if (sc->block_of < 0 || times == 0)
        return; /* no measured edge, or no instant */
    tb__mc_walk w;
    w.i = w.e = w.slow = 0;
    memset(w.torn, 0, sizeof w.torn);
    const size_t nl = j->p->lows ? j->p->nlows : j->p->nv;
    do {
        tb__mc_walk_run(j, &w, times);
        for (size_t s = 0; s < w.slow; s++)
            tb__hist_add_n(&sc->hist[w.g[s] - 1], w.x[s], w.k[s]);
        w.slow = 0;
    } while (w.i < nl);
    for (int g = 0; g < 3; g++)
        sc->hist[g].torn_edge += w.torn[g + 1];
}


/* The instants held since the last skinning, walked as one (in pieces when
 * an edge's count times them would pass 32 bits). */
static void tb__mc_flush(tb__mc_job *j)
{
    const uint32_t most = UINT32_MAX / j->p->max_mult; /* max_mult >= 1 */
    while (j->held > 0) {
        uint32_t times = j->held < most ? j->held : most;
        tb__mc_stretch(j, times);
        j->held -= times;
    }
}

/* Instant k: posed (the hook called) as ever; skinned and walked only when
 * its skinning matrices differ from the last skinned instant's, bit for bit
 * (every skin joint's). An instant that holds the pose (a one-key clip, a
 * held frame) would skin every point to the same bits (tb_skin_points reads
 * the matrices and the prep's bind data only) and so give every edge the
 * same sample: it is counted on the held walk instead (tb__mc_flush, before
 * the next skinning or after the last instant). The tip's travel, the
 * rotations and positions_out are still taken at every instant, in order,
 * from its own world matrices and the held positions. With a pose hook too:
 * the hook runs at every pose whatever is skipped, and what is skipped
 * reads the matrices it left, never its state. */
static void tb__mc_instant(tb__mc_job *j, int k, float first_dt)
{
    const tb_model *m = j->m;
    const tb_measure_prep *p = j->p;
    tb__scratch *s = &j->s;
    const size_t nv = p->nv, inf = p->inf;
    float t = (float)k * j->step;
    if (k == 0) {
        if (first_dt < 0) {
            /* already posed at t = 0 by the warm-up's last step */
        } else {
            tb__pose(m, j->clip, &j->d, s, 0, 0);
        }
    } else {
        float dt = tb__hook_between(m, j->clip, &j->d, s, (float)(k - 1) * j->step, t);
        tb__pose(m, j->clip, &j->d, s, t, dt);
    }
    tb_skin_matrices(s->skin_mats, (const float(*)[16])s->world, m->skin_joints,
                     (const float(*)[16])m->inverse_bind, (size_t)m->skin_joint_count);
    const size_t mats = (size_t)m->skin_joint_count * sizeof *s->skin_mats;
    if (!(j->dedupe && j->held > 0 && !memcmp(s->skin_mats, s->held_mats, mats))) {
        tb__mc_flush(j); /* the held instants' walk, on their positions */
        if (p->cpos) {
            tb_skin_points(s->skinned, 3, p->cpos, 3, p->nc, p->cjoints, p->cweights, (int)p->cinf,
                           (const float(*)[16])s->skin_mats, 0);
        } else if (p->runs) {
            for (size_t r = 0; r < p->nruns; r++) {
                size_t v0 = p->runs[2 * r];
                tb_skin_points(s->skinned + v0 * 3, 3, m->positions + v0 * 3, 3, p->runs[2 * r + 1],
                               p->joints + v0 * inf, p->weights + v0 * inf, m->influences,
                               (const float(*)[16])s->skin_mats, 0);
            }
        } else {
            tb_skin_points(s->skinned, 3, m->positions, 3, nv, p->joints, p->weights, m->influences,
                           (const float(*)[16])s->skin_mats, 0);
        }
        float(*t_mats)[16] = s->held_mats; /* this instant's matrices are now the held ones */
        s->held_mats = s->skin_mats;
        s->skin_mats = t_mats;
    }
    j->held++;
    if (!j->dedupe)
        tb__mc_flush(j);
    if (j->d.positions_out)
        memcpy(j->d.positions_out + (size_t)k * nv * 3, s->skinned, nv * 3 * sizeof(float));
    int tipv = j->out->tip_vertex;
    if (tipv >= 0) {
        const float *tip = s->skinned + p->tip_at * 3; /* tipv's, or an alike vertex's */
        if (k > 0)
            j->travel += tb__dist3(tip, j->prev_tip);
        memcpy(j->prev_tip, tip, sizeof j->prev_tip);
    }
    for (int b = 0; b < p->jc; b++) {
        if (!p->motion[b])
            continue;
        versor q;
        tb__world_rotation(s->world[b], q);
        if (k == 0) {
            glm_quat_copy(q, s->rot0[b]);
        } else {
            float a = tb__quat_angle(q, s->rot0[b]);
            if (a > j->max_rot)
                j->max_rot = a;
        }
    }
}

/* ---- summary: travel, rotation, the three groups' figures ------------------ */

static void tb__mc_summary(tb__mc_job *j)
{
    tb_measure_result *out = j->out;
    if (out->tip_vertex >= 0) {
        out->tip_travel = (float)j->travel;
        out->tip_travel_h = (float)(j->travel / ((double)out->world_scale * (double)j->m->height));
    }
    if (out->motion_bone_count > 0)
        out->max_bone_rotation_rad = j->max_rot;
    tb__stats(&out->tail, &j->s.hist[0], j->p->group_edges[0]);
    tb__stats(&out->body, &j->s.hist[1], j->p->group_edges[1]);
    tb__stats(&out->seam, &j->s.hist[2], j->p->group_edges[2]);
}

/* prep (the caller's, or made here) → setup → warm-up → per instant (a held
 * pose walked once) → summary */
static tb_result tb__measure_clip_with(tb_measure_result *out, const tb_model *m, const tb_clip *clip,
                                       const tb_measure_desc *desc_in, int dedupe, tb_error *err)
{
    memset(out, 0, sizeof *out);
    tb__mc_job j;
    memset(&j, 0, sizeof j);
    j.dedupe = dedupe;
    j.d = tb_measure_desc_defaults(desc_in);
    tb_result r = tb__validate(&j.d, err);
    if (r != TB_OK)
        return r;
    tb_measure_prep *own = NULL;
    if (j.d.prep && j.d.prep->m != m)
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.prep", "was made for another model");
    if (j.d.prep && j.d.positions_out && !j.d.prep->for_positions)
        return tb__fail(err, TB_ERR_ARG, "tb_measure_desc.prep", "was made without positions_out");
    if (!j.d.prep && (r = tb_measure_prepare(&own, m, &j.d, err)) != TB_OK)
        return r;
    j.p = j.d.prep ? j.d.prep : own;
    j.out = out;
    j.m = m;
    j.clip = clip;
    j.n = j.d.instants;
    r = tb__mc_setup(&j, err);
    if (r == TB_OK) {
        const float dur = clip->duration_s > 0 ? clip->duration_s : 0;
        j.step = j.d.loop ? dur / (float)j.n : dur / (float)(j.n - 1);
        float first_dt = tb__mc_warmup(&j);
        for (int k = 0; k < j.n; k++)
            tb__mc_instant(&j, k, first_dt);
        tb__mc_flush(&j);
        tb__mc_summary(&j);
    }
    tb__scratch_free(&j.s);
    tb_measure_prep_free(own);
    return r;
}

tb_result tb_measure_clip(tb_measure_result *out, const tb_model *m, const tb_clip *clip,
                          const tb_measure_desc *desc_in, tb_error *err)
{
    return tb__measure_clip_with(out, m, clip, desc_in, 1, err);
}

tb_result tb__measure_clip_each(tb_measure_result *out, const tb_model *m, const tb_clip *clip,
                                const tb_measure_desc *desc_in, tb_error *err)
{
    return tb__measure_clip_with(out, m, clip, desc_in, 0, err);
}
