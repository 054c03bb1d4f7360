/* The nearest bone segment to a point (SPEC A1), exactly as taking the
 * minimum of tb__seg_dist over the segments in order would find it (same
 * distance, same first index on ties), with a square root only where a
 * segment can beat the best so far. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/appendage_internal.h"

float tb__seg_nearest(const tb__seg *s, int n, const float p[3], int *nearest)
{
    float best = INFINITY, thr = INFINITY;
    int bi = -1;
    for (int i = 0; i < n; i++) {
        const tb__seg *g = &s[i];
        float ap[3] = {p[0] - g->a[0], p[1] - g->a[1], p[2] - g->a[2]};
        float t = (ap[0] * g->ab[0] + ap[1] * g->ab[1] + ap[2] * g->ab[2]) * g->inv_len2;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        float d[3] = {ap[0] - t * g->ab[0], ap[1] - t * g->ab[1], ap[2] - t * g->ab[2]};
        float d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        /* sqrtf is correctly rounded and monotone: sqrtf(d2) < best needs
         * d2 < best² (exactly), and thr is above best² whatever the rounding */
        if (d2 < thr) {
            float dist = sqrtf(d2);
            if (dist < best) {
                best = dist;
                bi = i;
                /* (tiny distances square into subnormals: no threshold) */
                thr = best > 1e-18f ? best * best * 1.000001f : INFINITY;
            }
        }
    }
    if (nearest)
        *nearest = bi;
    return best;
}

/* ---- the same over the segments as arrays (tb__segsoa) ------------------- */

int tb__segsoa_init(tb__segsoa *S, const tb__seg *s, int n)
{
    int cap = (n + TB__SEGSOA_LANES - 1) / TB__SEGSOA_LANES * TB__SEGSOA_LANES;
    S->n = n;
    S->cap = cap;
    S->f = malloc((size_t)(cap ? cap : 1) * 7 * sizeof *S->f);
    if (!S->f)
        return 0;
    for (int i = 0; i < cap; i++) {
        /* padding: a NaN distance, never below the best */
        const tb__seg *g = i < n ? &s[i] : NULL;
        for (int a = 0; a < 3; a++) {
            S->f[(size_t)a * (size_t)cap + (size_t)i] = g ? g->a[a] : NAN;
            S->f[(size_t)(3 + a) * (size_t)cap + (size_t)i] = g ? g->ab[a] : 0;
        }
        S->f[(size_t)6 * (size_t)cap + (size_t)i] = g ? g->inv_len2 : 0;
    }
    return 1;
}

void tb__segsoa_free(tb__segsoa *S)
{
    free(S->f);
    S->f = NULL;
    S->n = S->cap = 0;
}

/* Squared distance (the same operations as tb__seg_nearest's, lane by lane,
 * four lanes at a time where the compiler has vector types) and the
 * unclamped projection t of p on segments [base, base + LANES). Returns
 * whether any lane's squared distance is below thr: a block where none is
 * holds no segment the searches below would take (their threshold only
 * goes down), so they skip it without looking at its lanes. */
#if defined(__GNUC__)
typedef float tb__v4f __attribute__((vector_size(16)));
typedef int tb__v4i __attribute__((vector_size(16)));

static tb__v4f tb__load4(const float *x)
{
    tb__v4f v;
    memcpy(&v, x, sizeof v);
    return v;
}
#endif

static int tb__segsoa_block(const tb__segsoa *S, int base, const float p[3], float thr, float *d2, float *tp)
{
    size_t cap = (size_t)S->cap;
    const float *ax = S->f + base, *ay = ax + cap, *az = ay + cap, *bx = az + cap, *by = bx + cap,
                *bz = by + cap, *il = bz + cap;
#if defined(__GNUC__)
    const tb__v4f zero = {0, 0, 0, 0}, one = {1, 1, 1, 1};
    const tb__v4f px = {p[0], p[0], p[0], p[0]}, py = {p[1], p[1], p[1], p[1]}, pz = {p[2], p[2], p[2], p[2]};
    const tb__v4f vthr = {thr, thr, thr, thr};
    tb__v4i below = {0, 0, 0, 0};
    for (int k = 0; k < TB__SEGSOA_LANES; k += 4) {
        tb__v4f vbx = tb__load4(bx + k), vby = tb__load4(by + k), vbz = tb__load4(bz + k);
        tb__v4f apx = px - tb__load4(ax + k), apy = py - tb__load4(ay + k), apz = pz - tb__load4(az + k);
        tb__v4f t = (apx * vbx + apy * vby + apz * vbz) * tb__load4(il + k);
        memcpy(tp + k, &t, sizeof t);
        /* t < 0 ? 0 : t > 1 ? 1 : t, NaN and -0 kept as they are */
        tb__v4i lt = t < zero;
        t = (tb__v4f)((tb__v4i)t & ~lt);
        tb__v4i gt = t > one;
        t = (tb__v4f)(((tb__v4i)t & ~gt) | ((tb__v4i)one & gt));
        tb__v4f dx = apx - t * vbx, dy = apy - t * vby, dz = apz - t * vbz;
        tb__v4f r = dx * dx + dy * dy + dz * dz;
        memcpy(d2 + k, &r, sizeof r);
        below |= r < vthr;
    }
    return (below[0] | below[1] | below[2] | below[3]) != 0;
#else
    int below = 0;
    for (int k = 0; k < TB__SEGSOA_LANES; k++) {
        float apx = p[0] - ax[k], apy = p[1] - ay[k], apz = p[2] - az[k];
        float t = (apx * bx[k] + apy * by[k] + apz * bz[k]) * il[k];
        tp[k] = t;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        float dx = apx - t * bx[k], dy = apy - t * by[k], dz = apz - t * bz[k];
        d2[k] = dx * dx + dy * dy + dz * dz;
        below |= d2[k] < thr;
    }
    return below;
#endif
}

float tb__segsoa_nearest(const tb__segsoa *S, const float p[3], int *nearest)
{
    float best = INFINITY, thr = INFINITY;
    int bi = -1;
    float d2[TB__SEGSOA_LANES], tp[TB__SEGSOA_LANES];
    for (int base = 0; base < S->cap; base += TB__SEGSOA_LANES) {
        if (!tb__segsoa_block(S, base, p, thr, d2, tp))
            continue;
        for (int k = 0; k < TB__SEGSOA_LANES; k++)
            if (d2[k] < thr) { /* as in tb__seg_nearest */
                float dist = sqrtf(d2[k]);
                if (dist < best) {
                    best = dist;
                    bi = base + k;
                    thr = best > 1e-18f ? best * best * 1.000001f : INFINITY;
                }
            }
    }
    if (nearest)
        *nearest = bi;
    return best;
}

int tb__segsoa_nearest2(const tb__segsoa *S, const float p[3], float *t_out)
{
    float best = INFINITY, bt = 0;
    int bi = -1;
    float d2[TB__SEGSOA_LANES], tp[TB__SEGSOA_LANES];
    for (int base = 0; base < S->cap; base += TB__SEGSOA_LANES) {
        if (!tb__segsoa_block(S, base, p, best, d2, tp))
            continue;
        for (int k = 0; k < TB__SEGSOA_LANES; k++)
            if (d2[k] < best)
                best = d2[k], bi = base + k, bt = tp[k];
    }
    *t_out = bt;
    return bi;
}

