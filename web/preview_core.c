/* What the preview page computes each frame (see preview_core.h). Compiled
 * to WebAssembly for the page and natively for its test reference. */
#include "preview_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/runtime.h"
#include "tailbone/spring.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#define TB_PV_API EMSCRIPTEN_KEEPALIVE
#else
#define TB_PV_API
#endif

/* SPEC C's thresholds and degenerate-edge rule, as tailbone measure. */
#define TB_PV_TORN_ABOVE 1.5f
#define TB_PV_TORN_BELOW 0.67f
#define TB_PV_DEGENERATE_H 1e-6f

typedef struct tb_pv_clip {
    tb_clip clip;
    tb_channel *channels;
    float *times, *values;
} tb_pv_clip;

struct tb_pv {
    int joint_count;
    int *parents;
    char *name_buf;
    const char **names;
    tb_transform *rest;
    float (*bind_world)[16];
    uint8_t *has_ibm;
    tb_skeleton skel;
    int skin_joint_count;
    int *skin_joints;
    float (*ibm)[16];
    int vertex_count, influences;
    float *bind_pos, *bind_nrm, *weights;
    uint16_t *joints;
    uint8_t *mask;
    float height, world_scale;
    /* unique edges: a, b, bind length, group (0 skipped, 1 tail, 2 body, 3 seam) */
    size_t edge_count, tail_edges, body_edges;
    uint32_t *edge_ab;
    float *edge_len;
    uint8_t *edge_group;
    int clip_count;
    tb_pv_clip *clips;
    tb_spring_animator *anim;
    /* per-frame scratch */
    tb_transform *locals;
    float (*world)[16];
    float (*skin_mats)[16];
    float *pos, *nrm, *col, *worst, *tail_buf, *body_buf;
    float stats[TB_PV_STAT_COUNT];
};

static void *tb__dup(const void *src, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p && src && bytes)
        memcpy(p, src, bytes);
    return p;
}

static int tb__cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* p95, p99, min, max, torn count of n samples (reordered). */
static void tb__group_stats(float *v, size_t n, float *p95, float *p99, float *mn, float *mx, float *torn)
{
    if (n == 0) {
        *p95 = *p99 = *mn = *mx = NAN;
        *torn = 0;
        return;
    }
    float lo = v[0], hi = v[0];
    size_t t = 0;
    for (size_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
        t += v[i] > TB_PV_TORN_ABOVE || v[i] < TB_PV_TORN_BELOW;
    }
    *mn = lo;
    *mx = hi;
    *torn = (float)t;
    *p99 = tb_select_kth(v, n, tb_rank_nearest(n, 0.99));
    *p95 = tb_select_kth(v, n, tb_rank_nearest(n, 0.95));
}

static float tb__dist3(const float *a, const float *b)
{
    float dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

static float tb__det4(const float *m)
{
    /* Laplace expansion on 2x2 minors (column-major; the determinant of the
     * transpose is the same). */
    float s0 = m[0] * m[5] - m[1] * m[4], s1 = m[0] * m[6] - m[2] * m[4];
    float s2 = m[0] * m[7] - m[3] * m[4], s3 = m[1] * m[6] - m[2] * m[5];
    float s4 = m[1] * m[7] - m[3] * m[5], s5 = m[2] * m[7] - m[3] * m[6];
    float c5 = m[10] * m[15] - m[11] * m[14], c4 = m[9] * m[15] - m[11] * m[13];
    float c3 = m[9] * m[14] - m[10] * m[13], c2 = m[8] * m[15] - m[11] * m[12];
    float c1 = m[8] * m[14] - m[10] * m[12], c0 = m[8] * m[13] - m[9] * m[12];
    return s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
}

TB_PV_API void tb_pv_free(tb_pv *c)
{
    if (!c)
        return;
    for (int k = 0; k < c->clip_count; k++) {
        free(c->clips[k].channels);
        free(c->clips[k].times);
        free(c->clips[k].values);
    }
    free(c->clips);
    tb_spring_destroy(c->anim);
    free(c->parents);
    free(c->name_buf);
    free(c->names);
    free(c->rest);
    free(c->bind_world);
    free(c->has_ibm);
    free(c->skin_joints);
    free(c->ibm);
    free(c->bind_pos);
    free(c->bind_nrm);
    free(c->weights);
    free(c->joints);
    free(c->mask);
    free(c->edge_ab);
    free(c->edge_len);
    free(c->edge_group);
    free(c->locals);
    free(c->world);
    free(c->skin_mats);
    free(c->pos);
    free(c->nrm);
    free(c->col);
    free(c->worst);
    free(c->tail_buf);
    free(c->body_buf);
    free(c);
}

/* Unique edges of the triangles, sorted (lo, hi), as measure builds them. */
static int tb__edges(tb_pv *c, int triangle_count, const uint32_t *tris)
{
    size_t n = (size_t)triangle_count * 3, k = 0;
    uint64_t *e = malloc((n + 1) * sizeof *e);
    if (!e)
        return -1;
    for (size_t t = 0; t < (size_t)triangle_count; t++)
        for (int s = 0; s < 3; s++) {
            uint32_t a = tris[t * 3 + s], b = tris[t * 3 + (s + 1) % 3];
            if (a == b)
                continue;
            uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
            e[k++] = (uint64_t)lo << 32 | hi;
        }
    qsort(e, k, sizeof *e, tb__cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || e[i] != e[u - 1])
            e[u++] = e[i];
    c->edge_count = u;
    c->edge_ab = malloc((u + 1) * 2 * sizeof *c->edge_ab);
    c->edge_len = malloc((u + 1) * sizeof *c->edge_len);
    c->edge_group = malloc(u + 1);
    if (!c->edge_ab || !c->edge_len || !c->edge_group) {
        free(e);
        return -1;
    }
    const float min_len = TB_PV_DEGENERATE_H * c->height;
    for (size_t i = 0; i < u; i++) {
        uint32_t a = (uint32_t)(e[i] >> 32), b = (uint32_t)e[i];
        c->edge_ab[i * 2] = a;
        c->edge_ab[i * 2 + 1] = b;
        float len = tb__dist3(c->bind_pos + (size_t)a * 3, c->bind_pos + (size_t)b * 3);
        c->edge_len[i] = len;
        uint8_t g = 0;
        if (len >= min_len && isfinite(len))
            g = (c->mask[a] && c->mask[b]) ? 1 : (!c->mask[a] && !c->mask[b]) ? 2 : 3;
        c->edge_group[i] = g;
        c->tail_edges += g == 1;
        c->body_edges += g == 2;
    }
    free(e);
    return 0;
}

TB_PV_API tb_pv *tb_pv_new(int joint_count, const int *parents, const char *names, const float *rest,
                           const float *bind_world, const uint8_t *has_ibm, int skin_joint_count,
                           const int *skin_joints, const float *ibm, int vertex_count, const float *positions,
                           const float *normals, int influences, const uint16_t *joints, const float *weights,
                           int triangle_count, const uint32_t *triangles, const uint8_t *tail_mask, float height)
{
    if (joint_count <= 0 || skin_joint_count <= 0 || vertex_count < 0 || influences <= 0 || triangle_count < 0)
        return NULL;
    for (int j = 0; j < joint_count; j++)
        if (parents[j] >= j || parents[j] < -1)
            return NULL;
    for (int k = 0; k < skin_joint_count; k++)
        if (skin_joints[k] < 0 || skin_joints[k] >= joint_count)
            return NULL;
    for (size_t t = 0; t < (size_t)triangle_count * 3; t++)
        if (triangles[t] >= (uint32_t)vertex_count)
            return NULL;
    tb_pv *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    size_t nj = (size_t)joint_count, nv = (size_t)vertex_count, ni = nv * (size_t)influences;
    c->joint_count = joint_count;
    c->skin_joint_count = skin_joint_count;
    c->vertex_count = vertex_count;
    c->influences = influences;
    c->height = height;
    size_t name_bytes = 0;
    for (int j = 0; j < joint_count; j++)
        name_bytes += strlen(names + name_bytes) + 1;
    c->parents = tb__dup(parents, nj * sizeof *parents);
    c->name_buf = tb__dup(names, name_bytes);
    c->names = calloc(nj, sizeof *c->names);
    c->rest = malloc(nj * sizeof *c->rest);
    c->bind_world = tb__dup(bind_world, nj * sizeof *c->bind_world);
    c->has_ibm = tb__dup(has_ibm, nj);
    c->skin_joints = tb__dup(skin_joints, (size_t)skin_joint_count * sizeof *skin_joints);
    c->ibm = tb__dup(ibm, (size_t)skin_joint_count * sizeof *c->ibm);
    c->bind_pos = tb__dup(positions, nv * 3 * sizeof(float));
    c->bind_nrm = tb__dup(normals, nv * 3 * sizeof(float));
    c->weights = tb__dup(weights, ni * sizeof(float));
    c->joints = tb__dup(joints, ni * sizeof(uint16_t));
    c->mask = calloc(nv + 1, 1);
    c->locals = malloc(nj * sizeof *c->locals);
    c->world = malloc(nj * sizeof *c->world);
    c->skin_mats = malloc((size_t)skin_joint_count * sizeof *c->skin_mats);
    c->pos = calloc(nv * 3 + 1, sizeof(float));
    c->nrm = calloc(nv * 3 + 1, sizeof(float));
    c->col = calloc(nv * 3 + 1, sizeof(float));
    c->worst = malloc((nv + 1) * sizeof(float));
    if (!c->parents || !c->name_buf || !c->names || !c->rest || !c->bind_world || !c->has_ibm || !c->skin_joints ||
        !c->ibm || !c->bind_pos || !c->bind_nrm || !c->weights || !c->joints || !c->mask || !c->locals ||
        !c->world || !c->skin_mats || !c->pos || !c->nrm || !c->col || !c->worst) {
        tb_pv_free(c);
        return NULL;
    }
    for (size_t i = 0; i < ni; i++)
        if (c->weights[i] > 0 && c->joints[i] >= skin_joint_count) {
            tb_pv_free(c);
            return NULL;
        }
    const char *p = c->name_buf;
    for (int j = 0; j < joint_count; j++) {
        c->names[j] = p;
        p += strlen(p) + 1;
    }
    for (int j = 0; j < joint_count; j++) {
        memcpy(c->rest[j].t, rest + j * 10, 3 * sizeof(float));
        memcpy(c->rest[j].r, rest + j * 10 + 3, 4 * sizeof(float));
        memcpy(c->rest[j].s, rest + j * 10 + 7, 3 * sizeof(float));
    }
    if (tail_mask)
        for (size_t v = 0; v < nv; v++)
            c->mask[v] = tail_mask[v] != 0;
    c->skel.joint_count = joint_count;
    c->skel.parents = c->parents;
    c->skel.names = c->names;
    c->skel.rest_local = c->rest;
    c->skel.bind_world = (const float(*)[16])c->bind_world;
    c->skel.has_ibm = c->has_ibm;
    if (tb__edges(c, triangle_count, triangles) != 0) {
        tb_pv_free(c);
        return NULL;
    }
    c->tail_buf = malloc((c->tail_edges + 1) * sizeof(float));
    c->body_buf = malloc((c->body_edges + 1) * sizeof(float));
    if (!c->tail_buf || !c->body_buf) {
        tb_pv_free(c);
        return NULL;
    }
    /* World scale (measure.h): median over skin joints of cbrt|det(W IBM)|
     * in the stored pose. */
    tb_local_to_world(&c->skel, c->rest, NULL, c->world);
    float *tmp = malloc((size_t)skin_joint_count * sizeof(float));
    size_t n = 0;
    for (int k = 0; tmp && k < skin_joint_count; k++) {
        float s[16];
        tb_mat4_mul(s, c->world[c->skin_joints[k]], c->ibm[k]);
        float d = cbrtf(fabsf(tb__det4(s)));
        if (isfinite(d) && d > 0)
            tmp[n++] = d;
    }
    c->world_scale = n ? tb_select_kth(tmp, n, tb_rank_nearest(n, 0.5)) : 1.0f;
    free(tmp);
    memcpy(c->locals, c->rest, nj * sizeof *c->locals);
    return c;
}

TB_PV_API int tb_pv_add_clip(tb_pv *c, float duration_s, int channel_count, const int *ch_joint,
                             const int *ch_path, const int *ch_interp, const int *ch_keys, const float *times,
                             const float *values)
{
    size_t nt = 0, nvals = 0;
    for (int k = 0; k < channel_count; k++) {
        if (ch_joint[k] < 0 || ch_joint[k] >= c->joint_count || ch_path[k] < 0 || ch_path[k] > 2 ||
            ch_interp[k] < 0 || ch_interp[k] > 2 || ch_keys[k] <= 0)
            return -1;
        nt += (size_t)ch_keys[k];
        nvals += (size_t)ch_keys[k] * (ch_path[k] == 1 ? 4 : 3) * (ch_interp[k] == 2 ? 3 : 1);
    }
    tb_pv_clip *grown = realloc(c->clips, ((size_t)c->clip_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    c->clips = grown;
    tb_pv_clip *pc = &c->clips[c->clip_count];
    memset(pc, 0, sizeof *pc);
    pc->channels = calloc((size_t)channel_count + 1, sizeof *pc->channels);
    pc->times = tb__dup(times, nt * sizeof(float));
    pc->values = tb__dup(values, nvals * sizeof(float));
    if (!pc->channels || !pc->times || !pc->values) {
        free(pc->channels);
        free(pc->times);
        free(pc->values);
        return -1;
    }
    size_t ot = 0, ov = 0;
    for (int k = 0; k < channel_count; k++) {
        tb_channel *ch = &pc->channels[k];
        ch->joint = ch_joint[k];
        ch->path = (tb_path)ch_path[k];
        ch->interp = (tb_interp)ch_interp[k];
        ch->key_count = ch_keys[k];
        ch->times = pc->times + ot;
        ch->values = pc->values + ov;
        ot += (size_t)ch_keys[k];
        ov += (size_t)ch_keys[k] * (ch_path[k] == 1 ? 4 : 3) * (ch_interp[k] == 2 ? 3 : 1);
    }
    pc->clip.duration_s = duration_s;
    pc->clip.channel_count = channel_count;
    pc->clip.channels = pc->channels;
    return c->clip_count++;
}

static void tb__params_from(tb_spring_params *p, const float *f)
{
    p->root_hz = f[0];
    p->tip_ratio = f[1];
    p->damping_ratio = f[2];
    p->gravity_mps2 = f[3];
    p->carry_rad = f[4];
    p->rest_curve = f[5];
    p->coupling_per_s = f[6];
    p->bend_limit_rad = f[7];
    p->ground_y_m = f[8];
    p->ground_off = f[9] != 0;
    p->clearance_m = f[10];
    p->contact_damping_per_s = f[11];
}

TB_PV_API int tb_pv_spring(tb_pv *c, const float *f)
{
    tb_spring_desc d;
    memset(&d, 0, sizeof d);
    tb__params_from(&d.params, f);
    d.substep_s = f[12];
    d.max_dt_s = f[13];
    d.teleport_m = f[14];
    d.teleport_rad = f[15];
    memcpy(d.bind_up, f + 16, 3 * sizeof(float));
    memcpy(d.bind_forward, f + 19, 3 * sizeof(float));
    tb_spring_destroy(c->anim);
    c->anim = NULL;
    if (tb_spring_create(&c->anim, &c->skel, &d, NULL) != TB_OK)
        return -1;
    return tb_spring_chain_count(c->anim);
}

TB_PV_API int tb_pv_set_params(tb_pv *c, const float *f)
{
    if (!c->anim)
        return -1;
    tb_spring_params p;
    memset(&p, 0, sizeof p); /* the fields the page does not pass stay at their defaults */
    tb__params_from(&p, f);
    for (int k = 0; k < tb_spring_chain_count(c->anim); k++)
        if (tb_spring_set_params(c->anim, k, &p, NULL) != TB_OK)
            return -1;
    return 0;
}

TB_PV_API void tb_pv_reset(tb_pv *c)
{
    if (c->anim)
        tb_spring_reset(c->anim);
}

/* Pose and skin, no stretch. */
static void tb__pose(tb_pv *c, int clip, float t_s, int live, float dt_s)
{
    if (clip >= 0 && clip < c->clip_count)
        tb_clip_sample(&c->clips[clip].clip, &c->skel, t_s, c->locals);
    else
        memcpy(c->locals, c->rest, (size_t)c->joint_count * sizeof *c->locals);
    tb_local_to_world(&c->skel, c->locals, NULL, c->world);
    if (live && c->anim)
        tb_spring_step(c->anim, dt_s, (const float(*)[16])c->world, c->locals, c->world);
    tb_skin_matrices(c->skin_mats, (const float(*)[16])c->world, c->skin_joints, (const float(*)[16])c->ibm,
                     (size_t)c->skin_joint_count);
    tb_skin_points(c->pos, 3, c->bind_pos, 3, (size_t)c->vertex_count, c->joints, c->weights, c->influences,
                   (const float(*)[16])c->skin_mats, 0);
}

/* Edge ratios of the current pose into the group buffers (and, when color,
 * the worst ratio per vertex). */
static void tb__ratios(tb_pv *c, float *tail, size_t *nt, float *body, size_t *nb, int color)
{
    const float inv_scale = 1.0f / c->world_scale;
    if (color)
        for (int v = 0; v < c->vertex_count; v++)
            c->worst[v] = 1.0f;
    for (size_t e = 0; e < c->edge_count; e++) {
        uint8_t g = c->edge_group[e];
        if (!g)
            continue;
        uint32_t a = c->edge_ab[e * 2], b = c->edge_ab[e * 2 + 1];
        float r = tb__dist3(c->pos + (size_t)a * 3, c->pos + (size_t)b * 3) * inv_scale / c->edge_len[e];
        if (g == 1)
            tail[(*nt)++] = r;
        else if (g == 2)
            body[(*nb)++] = r;
        if (color) {
            float d = fabsf(logf(r));
            if (d > fabsf(logf(c->worst[a])))
                c->worst[a] = r;
            if (d > fabsf(logf(c->worst[b])))
                c->worst[b] = r;
        }
    }
}

TB_PV_API void tb_pv_color(float r, float rgb[3])
{
    static const float neutral[3] = {0.78f, 0.76f, 0.72f};
    static const float warm[3] = {0.95f, 0.25f, 0.05f}, cold[3] = {0.10f, 0.35f, 0.95f};
    static const float torn_hi[3] = {1.0f, 1.0f, 0.0f}, torn_lo[3] = {0.0f, 1.0f, 1.0f};
    if (!(r == r)) {
        memcpy(rgb, torn_hi, sizeof neutral);
        return;
    }
    if (r > TB_PV_TORN_ABOVE) {
        memcpy(rgb, torn_hi, sizeof neutral);
        return;
    }
    if (r < TB_PV_TORN_BELOW) {
        memcpy(rgb, torn_lo, sizeof neutral);
        return;
    }
    /* 0 at 1.0, 1 at the tear threshold, on a log scale (a ratio and its
     * inverse look alike) */
    float u;
    const float *to;
    if (r >= 1) {
        u = logf(r) / logf(TB_PV_TORN_ABOVE);
        to = warm;
    } else {
        u = logf(r) / logf(TB_PV_TORN_BELOW);
        to = cold;
    }
    u = sqrtf(u < 0 ? 0 : u > 1 ? 1 : u); /* small stretches already show */
    for (int i = 0; i < 3; i++)
        rgb[i] = neutral[i] + (to[i] - neutral[i]) * u;
}

TB_PV_API void tb_pv_frame(tb_pv *c, int clip, float t_s, int live, float dt_s)
{
    tb__pose(c, clip, t_s, live, dt_s);
    tb_skin_points(c->nrm, 3, c->bind_nrm, 3, (size_t)c->vertex_count, c->joints, c->weights, c->influences,
                   (const float(*)[16])c->skin_mats, 1);
    size_t nt = 0, nb = 0;
    tb__ratios(c, c->tail_buf, &nt, c->body_buf, &nb, 1);
    for (int v = 0; v < c->vertex_count; v++)
        tb_pv_color(c->worst[v], c->col + (size_t)v * 3);
    float *s = c->stats;
    tb__group_stats(c->tail_buf, nt, &s[TB_PV_TAIL_P95], &s[TB_PV_TAIL_P99], &s[TB_PV_TAIL_MIN], &s[TB_PV_TAIL_MAX],
                    &s[TB_PV_TAIL_TORN]);
    tb__group_stats(c->body_buf, nb, &s[TB_PV_BODY_P95], &s[TB_PV_BODY_P99], &s[TB_PV_BODY_MIN], &s[TB_PV_BODY_MAX],
                    &s[TB_PV_BODY_TORN]);
    s[TB_PV_TAIL_EDGES] = (float)nt;
    s[TB_PV_BODY_EDGES] = (float)nb;
}

TB_PV_API int tb_pv_clip_stats(tb_pv *c, int clip, int instants, float *out)
{
    int n = instants > 1 ? instants : 24;
    float *tail = malloc((c->tail_edges * (size_t)n + 1) * sizeof(float));
    float *body = malloc((c->body_edges * (size_t)n + 1) * sizeof(float));
    if (!tail || !body) {
        free(tail);
        free(body);
        return -1;
    }
    float dur = clip >= 0 && clip < c->clip_count && c->clips[clip].clip.duration_s > 0
                    ? c->clips[clip].clip.duration_s
                    : 0;
    const float step = dur / (float)(n - 1); /* both ends, as measure without --loop */
    size_t nt = 0, nb = 0;
    for (int k = 0; k < n; k++) {
        tb__pose(c, clip, (float)k * step, 0, 0);
        tb__ratios(c, tail, &nt, body, &nb, 0);
    }
    float *s = out;
    tb__group_stats(tail, nt, &s[TB_PV_TAIL_P95], &s[TB_PV_TAIL_P99], &s[TB_PV_TAIL_MIN], &s[TB_PV_TAIL_MAX],
                    &s[TB_PV_TAIL_TORN]);
    tb__group_stats(body, nb, &s[TB_PV_BODY_P95], &s[TB_PV_BODY_P99], &s[TB_PV_BODY_MIN], &s[TB_PV_BODY_MAX],
                    &s[TB_PV_BODY_TORN]);
    s[TB_PV_TAIL_TORN] = nt ? s[TB_PV_TAIL_TORN] / (float)nt : NAN;
    s[TB_PV_BODY_TORN] = nb ? s[TB_PV_BODY_TORN] / (float)nb : NAN;
    s[TB_PV_TAIL_EDGES] = (float)c->tail_edges;
    s[TB_PV_BODY_EDGES] = (float)c->body_edges;
    free(tail);
    free(body);
    return 0;
}

TB_PV_API int tb_pv_link_count(tb_pv *c)
{
    int n = 0;
    for (int k = 0; c->anim && k < tb_spring_chain_count(c->anim); k++) {
        tb_spring_chain_info info;
        tb_spring_get_chain_info(c->anim, k, &info);
        n += info.link_count;
    }
    return n;
}

TB_PV_API float tb_pv_tail_length(tb_pv *c)
{
    float len = 0;
    for (int k = 0; c->anim && k < tb_spring_chain_count(c->anim); k++) {
        tb_spring_chain_info info;
        tb_spring_get_chain_info(c->anim, k, &info);
        for (int l = 0; l < info.link_count; l++) {
            tb_spring_link_state st;
            tb_spring_get_link_state(c->anim, k, l, &st);
            len += st.length_m;
        }
    }
    return len;
}

TB_PV_API int tb_pv_tips(tb_pv *c, int clip, float fps, int frames, float *out)
{
    if (!c->anim || !(fps > 0) || frames < 1)
        return -1;
    int links = tb_pv_link_count(c);
    float dur = tb_pv_clip_duration(c, clip);
    tb_spring_reset(c->anim);
    for (int f = 0; f < frames; f++) {
        float t = (float)f / fps;
        if (dur > 0)
            t = fmodf(t, dur);
        tb__pose(c, clip, t, 1, 1.0f / fps);
        int i = 0;
        for (int k = 0; k < tb_spring_chain_count(c->anim); k++) {
            tb_spring_chain_info info;
            tb_spring_get_chain_info(c->anim, k, &info);
            for (int l = 0; l < info.link_count; l++, i++) {
                tb_spring_link_state st;
                tb_spring_get_link_state(c->anim, k, l, &st);
                memcpy(out + ((size_t)f * (size_t)links + (size_t)i) * 3, st.tip, 3 * sizeof(float));
            }
        }
    }
    tb_spring_reset(c->anim);
    return links * 3;
}

TB_PV_API float *tb_pv_positions(tb_pv *c) { return c->pos; }
TB_PV_API float *tb_pv_normals(tb_pv *c) { return c->nrm; }
TB_PV_API float *tb_pv_colors(tb_pv *c) { return c->col; }
TB_PV_API float *tb_pv_world(tb_pv *c) { return (float *)c->world; }
TB_PV_API float *tb_pv_stats(tb_pv *c) { return c->stats; }
TB_PV_API float tb_pv_world_scale(tb_pv *c) { return c->world_scale; }
TB_PV_API int tb_pv_vertex_count(tb_pv *c) { return c->vertex_count; }
TB_PV_API int tb_pv_joint_count(tb_pv *c) { return c->joint_count; }
TB_PV_API float tb_pv_clip_duration(tb_pv *c, int clip)
{
    return clip >= 0 && clip < c->clip_count ? c->clips[clip].clip.duration_s : 0;
}
