/* Synthetic characters: skeleton table, lofted-tube builder and the weights
 * auto-riggers produce (tailbone/synth.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth/synth_internal.h"


const int tbs_parent[TBS_JOINT_COUNT] = {
    -1, TBS_HIPS, TBS_SPINE, TBS_SPINE1, TBS_SPINE2, TBS_NECK,
    TBS_SPINE2, TBS_L_SHOULDER, TBS_L_ARM, TBS_L_FOREARM,
    TBS_SPINE2, TBS_R_SHOULDER, TBS_R_ARM, TBS_R_FOREARM,
    TBS_HIPS, TBS_L_UPLEG, TBS_L_LEG, TBS_L_FOOT,
    TBS_HIPS, TBS_R_UPLEG, TBS_R_LEG, TBS_R_FOOT,
};

/* A 1.90 m adult: legs 0.43 + 0.43 m, hips at 1.0 m, T-pose arms at 1.5 m.
 * The head joint sits high enough that the skull (top at 1.90 m) stays within
 * 7% H of the head bone's extension (SPEC A1/A2): the plain body has no far
 * skin worth calling an appendage, so it is a clean negative for detection. */
const float tbs_joint_pos[TBS_JOINT_COUNT][3] = {
    {0.00f, 1.00f, 0.00f},  {0.00f, 1.10f, 0.00f},  {0.00f, 1.22f, 0.00f},
    {0.00f, 1.35f, 0.00f},  {0.00f, 1.57f, 0.00f},  {0.00f, 1.71f, 0.01f},
    {0.05f, 1.50f, 0.00f},  {0.19f, 1.50f, 0.00f},  {0.47f, 1.50f, 0.00f},  {0.73f, 1.50f, 0.00f},
    {-0.05f, 1.50f, 0.00f}, {-0.19f, 1.50f, 0.00f}, {-0.47f, 1.50f, 0.00f}, {-0.73f, 1.50f, 0.00f},
    {0.10f, 0.95f, 0.00f},  {0.10f, 0.52f, 0.00f},  {0.10f, 0.09f, -0.02f}, {0.10f, 0.03f, 0.13f},
    {-0.10f, 0.95f, 0.00f}, {-0.10f, 0.52f, 0.00f}, {-0.10f, 0.09f, -0.02f}, {-0.10f, 0.03f, 0.13f},
};

void tbs_bone_segment(int j, float a[3], float b[3])
{
    static const int child[TBS_JOINT_COUNT] = {
        TBS_SPINE, TBS_SPINE1, TBS_SPINE2, TBS_NECK, TBS_HEAD, -1,
        TBS_L_ARM, TBS_L_FOREARM, TBS_L_HAND, -1,
        TBS_R_ARM, TBS_R_FOREARM, TBS_R_HAND, -1,
        TBS_L_LEG, TBS_L_FOOT, TBS_L_TOE, -1,
        TBS_R_LEG, TBS_R_FOOT, TBS_R_TOE, -1,
    };
    memcpy(a, tbs_joint_pos[j], sizeof(float) * 3);
    if (child[j] >= 0) {
        memcpy(b, tbs_joint_pos[child[j]], sizeof(float) * 3);
        return;
    }
    /* terminal joints: half the incoming bone again (SPEC A1) */
    const float *p = tbs_joint_pos[tbs_parent[j]];
    for (int k = 0; k < 3; k++)
        b[k] = a[k] + 0.5f * (a[k] - p[k]);
}

float tbs_segment_distance(const float p[3], const float a[3], const float b[3])
{
    float ab[3], ap[3], dot = 0, len2 = 0;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        dot += ab[k] * ap[k];
        len2 += ab[k] * ab[k];
    }
    float t = len2 > 0 ? dot / len2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float d2 = 0;
    for (int k = 0; k < 3; k++) {
        float e = ap[k] - t * ab[k];
        d2 += e * e;
    }
    return sqrtf(d2);
}

void tbs_rng_seed(tbs_rng *r, uint32_t seed)
{
    r->s = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed * 0xD1B54A32D192ED03ull);
}

float tbs_rng_float(tbs_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) / (float)(1u << 24);
}

/* ---- mesh builder ---------------------------------------------------- */

void tbs_mesh_free(tbs_mesh *m)
{
    free(m->pos);
    free(m->uv);
    free(m->logical);
    free(m->joints);
    free(m->weights);
    free(m->tri);
    free(m->nrm);
    memset(m, 0, sizeof *m);
}

static int tbs__grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t nc = *cap ? *cap : 256;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return 0;
    *p = q;
    *cap = nc;
    return 1;
}

static size_t tbs__vertex(tbs_mesh *m, const float p[3], float u, float v, uint32_t logical)
{
    if (m->failed)
        return 0;
    if (m->n + 1 > m->cap) {
        size_t c = m->cap, need = m->n + 1;
        size_t nc = c ? c * 2 : 1024;
        while (nc < need)
            nc *= 2;
        float *pos = realloc(m->pos, nc * 3 * sizeof(float));
        if (pos)
            m->pos = pos;
        float *uv = realloc(m->uv, nc * 2 * sizeof(float));
        if (uv)
            m->uv = uv;
        uint32_t *lg = realloc(m->logical, nc * sizeof(uint32_t));
        if (lg)
            m->logical = lg;
        uint8_t *j = realloc(m->joints, nc * 4);
        if (j)
            m->joints = j;
        float *w = realloc(m->weights, nc * 4 * sizeof(float));
        if (w)
            m->weights = w;
        if (!pos || !uv || !lg || !j || !w) {
            m->failed = 1;
            return 0;
        }
        m->cap = nc;
    }
    size_t i = m->n++;
    memcpy(m->pos + i * 3, p, sizeof(float) * 3);
    m->uv[i * 2] = u;
    m->uv[i * 2 + 1] = v;
    m->logical[i] = logical;
    memset(m->joints + i * 4, 0, 4);
    memset(m->weights + i * 4, 0, sizeof(float) * 4);
    return i;
}

static void tbs__tri(tbs_mesh *m, size_t a, size_t b, size_t c)
{
    if (m->failed)
        return;
    if (!tbs__grow((void **)&m->tri, &m->tcap, (m->nt + 1) * 3, sizeof(uint32_t))) {
        m->failed = 1;
        return;
    }
    m->tri[m->nt * 3] = (uint32_t)a;
    m->tri[m->nt * 3 + 1] = (uint32_t)b;
    m->tri[m->nt * 3 + 2] = (uint32_t)c;
    m->nt++;
}

size_t tbs_mesh_vertex(tbs_mesh *m, const float p[3], float u, float v, uint32_t logical)
{
    return tbs__vertex(m, p, u, v, logical);
}

void tbs_mesh_tri(tbs_mesh *m, size_t a, size_t b, size_t c)
{
    tbs__tri(m, a, b, c);
}

static void tbs__ring_point(const tbs_ring *r, int k, int segs, float out[3])
{
    /* cos/sin in double so the seam copy (k == segs) lands exactly on k == 0 */
    double th = 2.0 * TB_PI * (double)(k % segs) / (double)segs;
    float c = (float)cos(th), s = (float)sin(th);
    for (int q = 0; q < 3; q++)
        out[q] = r->c[q] + r->ra * c * r->a[q] + (r->rb * s + r->bow * c * c) * r->b[q];
}

/* The emitted vertex of ring row i, column k, of a loft whose rows of
 * segs + 1 start at ring0 (the names of the functions below). */
#define TBS_E(i, k) (ring0 + (size_t)(i) * (size_t)(segs + 1) + (size_t)(k))

/* One end of an open loft (end 0: the first ring; 1: the last, ri) closed
 * by cap: a pole (at pole, else the ring's centre) or a flat disc. */
static void tbs__tube_cap(tbs_mesh *m, const tbs_ring *r, int ri, int segs, int end, tbs_cap cap, const float *pole,
                          size_t ring0)
{
    float centre[3];
    memcpy(centre, pole && cap == TBS_CAP_POLE ? pole : r->c, sizeof centre);
    if (cap == TBS_CAP_POLE) {
        /* one logical pole, split per segment for the UVs like any UV sphere */
        uint32_t lp = (uint32_t)m->nl++;
        size_t p0 = m->n;
        for (int k = 0; k < segs; k++)
            tbs__vertex(m, centre, ((float)k + 0.5f) / (float)segs, end ? 1.0f : 0.0f, lp);
        for (int k = 0; k < segs; k++) {
            if (end)
                tbs__tri(m, TBS_E(ri, k), TBS_E(ri, k + 1), p0 + (size_t)k);
            else
                tbs__tri(m, p0 + (size_t)k, TBS_E(0, k + 1), TBS_E(0, k));
        }
    } else if (cap == TBS_CAP_FLAT) {
        /* hard edge: the rim is duplicated with logical ids of its own */
        size_t lrim = m->nl;
        m->nl += (size_t)segs + 1;
        size_t rim = m->n;
        for (int k = 0; k < segs; k++) {
            float p[3];
            tbs__ring_point(r, k, segs, p);
            double th = 2.0 * TB_PI * k / segs;
            tbs__vertex(m, p, 0.5f + 0.5f * (float)cos(th), 0.5f + 0.5f * (float)sin(th),
                        (uint32_t)(lrim + (size_t)k));
        }
        size_t c = tbs__vertex(m, centre, 0.5f, 0.5f, (uint32_t)(lrim + (size_t)segs));
        for (int k = 0; k < segs; k++) {
            size_t a = rim + (size_t)k, b = rim + (size_t)((k + 1) % segs);
            if (end)
                tbs__tri(m, a, b, c);
            else
                tbs__tri(m, c, b, a);
        }
    }
}

/* Safety net for hand-made frames: a closed part must enclose positive
 * volume, i.e. its triangles (from tri0 on) wind counter-clockwise seen
 * from outside; flipped when they do not. */
static void tbs__outward(tbs_mesh *m, size_t tri0)
{
    double vol = 0;
    for (size_t t = tri0; t < m->nt; t++) {
        const float *p = m->pos + m->tri[t * 3] * 3, *q = m->pos + m->tri[t * 3 + 1] * 3,
                    *r = m->pos + m->tri[t * 3 + 2] * 3;
        vol += (double)p[0] * ((double)q[1] * r[2] - (double)q[2] * r[1]) -
               (double)p[1] * ((double)q[0] * r[2] - (double)q[2] * r[0]) +
               (double)p[2] * ((double)q[0] * r[1] - (double)q[1] * r[0]);
    }
    if (vol < 0)
        for (size_t t = tri0; t < m->nt; t++) {
            uint32_t s = m->tri[t * 3 + 1];
            m->tri[t * 3 + 1] = m->tri[t * 3 + 2];
            m->tri[t * 3 + 2] = s;
        }
}

size_t tbs_tube(tbs_mesh *m, const tbs_ring *rings, int count, int segs, tbs_cap cap0,
                const float pole0[3], tbs_cap cap1, const float pole1[3], int loop)
{
    size_t first = m->n, tri0 = m->nt;
    int rows = loop ? count + 1 : count; /* a looped loft repeats ring 0 as a v seam */
    /* v runs along the loft by the arc length of the k = 0 line */
    double *vv = malloc((size_t)(rows + 1) * sizeof(double));
    if (!vv) {
        m->failed = 1;
        return first;
    }
    vv[0] = 0;
    for (int i = 1; i < rows; i++) {
        float p[3], q[3];
        tbs__ring_point(&rings[(i - 1) % count], 0, segs, p);
        tbs__ring_point(&rings[i % count], 0, segs, q);
        vv[i] = vv[i - 1] + sqrt((double)((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) +
                                          (p[2] - q[2]) * (p[2] - q[2])));
    }
    double total = vv[rows - 1] > 0 ? vv[rows - 1] : 1;
    size_t lbase = m->nl;
    m->nl += (size_t)count * (size_t)segs;
    /* rows of segs + 1 emitted vertices; the last column is the u seam */
    size_t ring0 = m->n;
    for (int i = 0; i < rows; i++) {
        for (int k = 0; k <= segs; k++) {
            float p[3];
            tbs__ring_point(&rings[i % count], k, segs, p);
            uint32_t lg = (uint32_t)(lbase + (size_t)(i % count) * (size_t)segs + (size_t)(k % segs));
            tbs__vertex(m, p, (float)k / (float)segs, (float)(vv[i] / total), lg);
        }
    }
    free(vv);
    for (int i = 0; i + 1 < rows; i++)
        for (int k = 0; k < segs; k++) {
            tbs__tri(m, TBS_E(i, k), TBS_E(i, k + 1), TBS_E(i + 1, k + 1));
            tbs__tri(m, TBS_E(i, k), TBS_E(i + 1, k + 1), TBS_E(i + 1, k));
        }
    if (!loop) {
        tbs__tube_cap(m, &rings[0], 0, segs, 0, cap0, pole0, ring0);
        tbs__tube_cap(m, &rings[count - 1], count - 1, segs, 1, cap1, pole1, ring0);
    }
    if (m->failed)
        return first;
    tbs__outward(m, tri0);
    return first;
}
#undef TBS_E

void tbs_mesh_finish(tbs_mesh *m)
{
    if (m->failed)
        return;
    double *acc = calloc(m->nl ? m->nl * 3 : 3, sizeof(double));
    m->nrm = malloc((m->n ? m->n : 1) * 3 * sizeof(float));
    if (!acc || !m->nrm) {
        free(acc);
        m->failed = 1;
        return;
    }
    for (size_t t = 0; t < m->nt; t++) {
        const float *p = m->pos + m->tri[t * 3] * 3, *q = m->pos + m->tri[t * 3 + 1] * 3,
                    *r = m->pos + m->tri[t * 3 + 2] * 3;
        double e1[3], e2[3];
        for (int k = 0; k < 3; k++) {
            e1[k] = (double)q[k] - p[k];
            e2[k] = (double)r[k] - p[k];
        }
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int c = 0; c < 3; c++) {
            double *a = acc + (size_t)m->logical[m->tri[t * 3 + (size_t)c]] * 3;
            a[0] += n[0];
            a[1] += n[1];
            a[2] += n[2];
        }
    }
    for (size_t i = 0; i < m->n; i++) {
        const double *a = acc + (size_t)m->logical[i] * 3;
        double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        float *o = m->nrm + i * 3;
        if (len > 1e-12) {
            o[0] = (float)(a[0] / len);
            o[1] = (float)(a[1] / len);
            o[2] = (float)(a[2] / len);
        } else {
            o[0] = 0, o[1] = 1, o[2] = 0;
        }
    }
    free(acc);
}

static void tbs__normalize(float v[3])
{
    float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0)
        v[0] /= l, v[1] /= l, v[2] /= l;
}

static void tbs__cross(const float a[3], const float b[3], float o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

void tbs_frames(tbs_ring *rings, int count, const float a0[3])
{
    float a[3] = {a0[0], a0[1], a0[2]};
    for (int i = 0; i < count; i++) {
        const float *p = rings[i > 0 ? i - 1 : 0].c, *q = rings[i + 1 < count ? i + 1 : count - 1].c;
        float t[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
        tbs__normalize(t);
        /* parallel transport: drop the tangent part of the previous axis */
        float d = a[0] * t[0] + a[1] * t[1] + a[2] * t[2];
        for (int k = 0; k < 3; k++)
            a[k] -= d * t[k];
        tbs__normalize(a);
        float b[3];
        tbs__cross(t, a, b); /* a x b = t */
        memcpy(rings[i].a, a, sizeof a);
        memcpy(rings[i].b, b, sizeof b);
    }
}

void tbs_mesh_rigidify(tbs_mesh *m, size_t v0, size_t v1)
{
    if (m->failed || v1 <= v0)
        return;
    size_t n0 = m->n;
    size_t ncap = n0 * 2;
    int32_t *bone = malloc(ncap * sizeof *bone);  /* the joint of each vertex, -1: unset */
    uint32_t *next = malloc(ncap * sizeof *next); /* its next copy, UINT32_MAX: none */
    if (!bone || !next) {
        free(bone);
        free(next);
        m->failed = 1;
        return;
    }
    for (size_t v = 0; v < n0; v++)
        bone[v] = -1, next[v] = UINT32_MAX;
    /* every triangle's joint from the smooth weights, before any is changed */
    uint8_t *tb = malloc(m->nt + 1);
    if (!tb) {
        free(bone);
        free(next);
        m->failed = 1;
        return;
    }
    for (size_t t = 0; t < m->nt; t++) {
        const uint32_t *c = m->tri + t * 3;
        float mass[TBS_JOINT_COUNT] = {0};
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 4; i++)
                mass[m->joints[c[k] * 4 + i]] += m->weights[c[k] * 4 + i];
        int b = 0;
        for (int j = 1; j < TBS_JOINT_COUNT; j++)
            if (mass[j] > mass[b])
                b = j;
        tb[t] = (uint8_t)b;
    }
    for (size_t t = 0; t < m->nt && !m->failed; t++) {
        uint32_t *c = m->tri + t * 3;
        if (c[0] < v0 || c[0] >= v1 || c[1] < v0 || c[1] >= v1 || c[2] < v0 || c[2] >= v1)
            continue;
        int b = tb[t];
        for (int k = 0; k < 3; k++) {
            uint32_t v = c[k], last = v;
            while (v != UINT32_MAX && bone[v] != -1 && bone[v] != b)
                last = v, v = next[v];
            if (v == UINT32_MAX) { /* a new copy of the original vertex */
                float p[3], uv[2];
                memcpy(p, m->pos + (size_t)c[k] * 3, sizeof p);
                memcpy(uv, m->uv + (size_t)c[k] * 2, sizeof uv);
                v = (uint32_t)tbs__vertex(m, p, uv[0], uv[1], m->logical[c[k]]);
                if (m->failed)
                    break;
                if (v >= ncap) {
                    size_t nc = ncap * 2;
                    int32_t *nb = realloc(bone, nc * sizeof *bone);
                    if (nb)
                        bone = nb;
                    uint32_t *nn = realloc(next, nc * sizeof *nn);
                    if (nn)
                        next = nn;
                    if (!nb || !nn) {
                        m->failed = 1;
                        break;
                    }
                    ncap = nc;
                }
                bone[v] = -1, next[v] = UINT32_MAX;
                next[last] = v;
            }
            if (bone[v] == -1) {
                bone[v] = b;
                memset(m->joints + (size_t)v * 4, 0, 4);
                memset(m->weights + (size_t)v * 4, 0, 4 * sizeof(float));
                m->joints[(size_t)v * 4] = (uint8_t)b;
                m->weights[(size_t)v * 4] = 1;
            }
            c[k] = v;
        }
    }
    free(tb);
    free(bone);
    free(next);
}

/* ---- weights ----------------------------------------------------------- */

/* Keeps the 4 largest, drops tiny ones and normalises so the sum is exactly
 * 1 in float (the last weight takes the rounding) — glTF validators check. */
static void tbs__store(tbs_mesh *m, size_t v, const float *w_all)
{
    int idx[4] = {0, 0, 0, 0};
    float w[4] = {0, 0, 0, 0};
    for (int j = 0; j < TBS_JOINT_COUNT; j++) {
        float x = w_all[j];
        if (x <= 0)
            continue;
        for (int s = 0; s < 4; s++)
            if (x > w[s]) {
                for (int q = 3; q > s; q--)
                    w[q] = w[q - 1], idx[q] = idx[q - 1];
                w[s] = x, idx[s] = j;
                break;
            }
    }
    float sum = 0;
    for (int s = 0; s < 4; s++)
        sum += w[s];
    int n = 0;
    for (int s = 0; s < 4; s++)
        if (w[s] / sum >= 0.03f)
            n = s + 1;
    sum = 0;
    for (int s = 0; s < n; s++)
        sum += w[s];
    float acc = 0;
    for (int s = 0; s < 4; s++) {
        uint8_t *jo = m->joints + v * 4;
        float *wo = m->weights + v * 4;
        if (s < n) {
            /* quantised to 1/1024 so the float sum is exact */
            float q = s + 1 < n ? floorf(w[s] / sum * 1024.0f + 0.5f) / 1024.0f : 1.0f - acc;
            jo[s] = (uint8_t)idx[s];
            wo[s] = q;
            acc += q;
        } else {
            jo[s] = 0;
            wo[s] = 0;
        }
    }
}

void tbs_weight_nearest(tbs_mesh *m, size_t v0, size_t v1, uint32_t mask)
{
    if (m->failed)
        return;
    float seg[TBS_JOINT_COUNT][2][3];
    for (int j = 0; j < TBS_JOINT_COUNT; j++)
        tbs_bone_segment(j, seg[j][0], seg[j][1]);
    for (size_t v = v0; v < v1; v++) {
        float w[TBS_JOINT_COUNT] = {0};
        for (int j = 0; j < TBS_JOINT_COUNT; j++) {
            if (!(mask & TBS_BIT(j)))
                continue;
            float d = tbs_segment_distance(m->pos + v * 3, seg[j][0], seg[j][1]) + 0.02f;
            /* inverse 4th power: a smooth hand-over between neighbouring
             * bones, but far bones fade out quickly, as heat-diffusion and
             * learned weights do */
            w[j] = 1.0f / (d * d * d * d);
        }
        tbs__store(m, v, w);
    }
}

void tbs_weight_rigid(tbs_mesh *m, size_t v0, size_t v1, int joint)
{
    if (m->failed)
        return;
    for (size_t v = v0; v < v1; v++) {
        float w[TBS_JOINT_COUNT] = {0};
        w[joint] = 1;
        tbs__store(m, v, w);
    }
}

void tbs_weight_fox(tbs_mesh *m, size_t v0, size_t v1)
{
    if (m->failed)
        return;
    for (size_t v = v0; v < v1; v++) {
        float w[TBS_JOINT_COUNT] = {0};
        float along = m->uv[v * 2 + 1]; /* 0 at the root, 1 at the tip */
        float shin = 0.45f + 0.35f * along;
        float rest = 1.0f - shin;
        /* each half of the tail leans to the thigh on its side: the two
         * halves tear apart along the centre line during a walk (SPEC 0) */
        int left = m->pos[v * 3] >= 0.0f;
        w[TBS_L_LEG] = shin;
        w[TBS_L_UPLEG] = rest * (left ? 0.7f : 0.3f);
        w[TBS_R_UPLEG] = rest * (left ? 0.3f : 0.7f);
        tbs__store(m, v, w);
    }
}
