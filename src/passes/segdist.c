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

/* Each block's box: its segments' ends (a and a + ab, NaN left out), and
 * the largest |coordinate| of a plus ab over all (tb__segsoa_reach). */
static void tb__segsoa_boxes(tb__segsoa *S, const tb__seg *s)
{
    int nb = S->cap / TB__SEGSOA_LANES, nb4 = (nb + 3) / 4 * 4;
    S->big = 0;
    for (int b = 0; b < nb4; b++) { /* padding: boxes no point is in */
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int i = b * TB__SEGSOA_LANES; i < (b + 1) * TB__SEGSOA_LANES && i < S->n; i++)
            for (int c = 0; c < 3; c++) {
                float e = s[i].a[c] + s[i].ab[c];
                lo[c] = fminf(lo[c], fminf(s[i].a[c], e));
                hi[c] = fmaxf(hi[c], fmaxf(s[i].a[c], e));
                S->big = fmaxf(S->big, fabsf(s[i].a[c]) + fabsf(s[i].ab[c]));
            }
        for (int c = 0; c < 3; c++) {
            S->box[(size_t)c * (size_t)nb4 + (size_t)b] = lo[c];
            S->box[(size_t)(3 + c) * (size_t)nb4 + (size_t)b] = hi[c];
        }
    }
}

int tb__segsoa_init(tb__segsoa *S, const tb__seg *s, int n)
{
    int cap = (n + TB__SEGSOA_LANES - 1) / TB__SEGSOA_LANES * TB__SEGSOA_LANES;
    S->n = n;
    S->cap = cap;
    S->f = malloc((size_t)(cap ? cap : 1) * 7 * sizeof *S->f);
    S->box = malloc((size_t)(cap / TB__SEGSOA_LANES + 4) * 6 * sizeof *S->box);
    if (!S->f || !S->box) {
        tb__segsoa_free(S);
        return 0;
    }
    for (int i = 0; i < cap; i++) {
        /* padding: a NaN distance, never below the best */
        const tb__seg *g = i < n ? &s[i] : NULL;
        for (int a = 0; a < 3; a++) {
            S->f[(size_t)a * (size_t)cap + (size_t)i] = g ? g->a[a] : NAN;
            S->f[(size_t)(3 + a) * (size_t)cap + (size_t)i] = g ? g->ab[a] : 0;
        }
        S->f[(size_t)6 * (size_t)cap + (size_t)i] = g ? g->inv_len2 : 0;
    }
    tb__segsoa_boxes(S, s);
    return 1;
}

void tb__segsoa_free(tb__segsoa *S)
{
    free(S->f);
    free(S->box);
    S->f = NULL;
    S->box = NULL;
    S->n = S->cap = 0;
}

/* Squared distance (the same operations as tb__seg_nearest's, lane by lane,
 * four lanes at a time where the compiler has vector types) and the
 * unclamped projection t of p on segments [base, base + LANES). Returns
 * whether any lane's squared distance is below thr (or at it: or_equal): a
 * block where none is holds no segment the searches below would take
 * (their threshold only goes down), so they skip it without looking at its
 * lanes. */
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

static inline int tb__segsoa_block(const tb__segsoa *S, int base, const float p[3], float thr, int or_equal, float *d2,
                                   float *tp)
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
        below |= or_equal ? r <= vthr : r < vthr;
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
        below |= or_equal ? d2[k] <= thr : d2[k] < thr;
    }
    return below;
#endif
}

/* The squared distance from p to block b's box (rounded: see reach). */
static float tb__segsoa_box_d2(const tb__segsoa *S, int b, const float p[3])
{
    size_t nb4 = (size_t)(S->cap / TB__SEGSOA_LANES + 3) / 4 * 4;
    float d2 = 0;
    for (int c = 0; c < 3; c++) {
        float lo = S->box[(size_t)c * nb4 + (size_t)b] - p[c], hi = p[c] - S->box[(size_t)(3 + c) * nb4 + (size_t)b];
        float d = lo > hi ? lo : hi;
        d = d > 0 ? d : 0;
        d2 += d * d;
    }
    return d2;
}

/* The squared box distance at or past which no segment of a block has a
 * computed squared distance below thr (INFINITY: none to give). A lane's d
 * is p minus a point of its segment up to a few roundings of coordinates
 * no larger than |p| + |a| + |ab| (under 1e-6 of that); the reach adds
 * 1e-5 of it and 1e-5 of the distance, and the box distance is within a
 * few roundings of its own. */
static float tb__segsoa_reach(const tb__segsoa *S, float thr, float pbig)
{
    float r = sqrtf(thr) * (1 + 1e-5f) + 1e-5f * (S->big + pbig);
    r = r * r * (1 + 1e-5f);
    return r < INFINITY ? r : INFINITY;
}

enum { TB__SEGSOA_KEEP = 64 }; /* blocks whose box distance is kept per search */

/* Every block's box distance (the first KEEP of them into d2b) and the
 * block to search first: the one whose box is nearest p. */
static int tb__segsoa_first(const tb__segsoa *S, const float p[3], float *d2b)
{
    int first = 0, nb = S->cap / TB__SEGSOA_LANES, ahead = 0; /* ahead: d2b holds them all already */
    float least = INFINITY;
#if defined(__GNUC__)
    /* four boxes at a time (the same operations as tb__segsoa_box_d2's)
     * where they all fit in d2b */
    size_t nb4 = (size_t)(nb + 3) / 4 * 4;
    const tb__v4f zero = {0, 0, 0, 0};
    ahead = nb4 <= TB__SEGSOA_KEEP;
    for (int b = 0; ahead && b < nb; b += 4) {
        tb__v4f d2 = zero;
        for (int c = 0; c < 3; c++) {
            const tb__v4f pc = {p[c], p[c], p[c], p[c]};
            tb__v4f lo = tb__load4(S->box + (size_t)c * nb4 + (size_t)b) - pc,
                    hi = pc - tb__load4(S->box + (size_t)(3 + c) * nb4 + (size_t)b);
            tb__v4f d = (tb__v4f)(((tb__v4i)lo & (lo > hi)) | ((tb__v4i)hi & ~(lo > hi)));
            d = (tb__v4f)((tb__v4i)d & (d > zero));
            d2 += d * d;
        }
        memcpy(d2b + b, &d2, sizeof d2);
    }
#endif
    for (int b = 0; b < nb; b++) {
        float l = ahead ? d2b[b] : tb__segsoa_box_d2(S, b, p);
        if (b < TB__SEGSOA_KEEP)
            d2b[b] = l;
        if (l < least)
            least = l, first = b;
    }
    return first;
}

/* Whether block b (not the first) can be left: its box is past reach. */
static int tb__segsoa_past(const tb__segsoa *S, int b, const float p[3], const float *d2b, float reach)
{
    return reach < INFINITY && (b < TB__SEGSOA_KEEP ? d2b[b] : tb__segsoa_box_d2(S, b, p)) >= reach;
}

static float tb__absmax3(const float p[3])
{
    float x = fabsf(p[0]), y = fabsf(p[1]), z = fabsf(p[2]);
    x = y > x ? y : x;
    return z > x ? z : x; /* NaN: whatever, its lanes never win */
}

/* Visit q of a search (q = -1 first, then 0, 1, ...): the first segment of
 * the block to compute, or -1 to go on (the first block again, or one whose
 * box is past reach). */
static inline int tb__segsoa_visit(const tb__segsoa *S, int q, int first, const float p[3], const float *d2b,
                                   float reach)
{
    int b = q < 0 ? first : q;
    if (b >= S->cap / TB__SEGSOA_LANES || (q >= 0 && (b == first || tb__segsoa_past(S, b, p, d2b, reach))))
        return -1;
    return b * TB__SEGSOA_LANES;
}

/* Both searches below take the least (distance, index) over the segments,
 * which is what an in-order scan that keeps the first of equal distances
 * finds; so they may look at the blocks in any order: the block nearest p
 * first (its best sets the threshold), then the others in order, each
 * skipped when its box is past the threshold's reach. */
/* The one scan of both: the least (key, index), key the distance
 * (by_dist, for tb__segsoa_nearest: its threshold on squared distances
 * carries a margin, as the distances are compared after the root) or the
 * squared distance (tb__segsoa_nearest2, which also keeps the nearest
 * point's parameter). by_dist is a constant at each call, and the scan
 * inlined into both: two loops, each as it was written before. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int tb__segsoa_scan(const tb__segsoa *S, const float p[3], int by_dist, float *best_out, float *t_out)
{
    float best = INFINITY, thr = INFINITY, bt = 0, reach = INFINITY, pbig = tb__absmax3(p);
    float d2[TB__SEGSOA_LANES], tp[TB__SEGSOA_LANES], d2b[TB__SEGSOA_KEEP];
    int bi = -1, nb = S->cap / TB__SEGSOA_LANES, first = tb__segsoa_first(S, p, d2b);
    for (int q = -1; q < nb; q++) {
        int base = tb__segsoa_visit(S, q, first, p, d2b, reach);
        if (base < 0)
            continue;
        /* by squared distance a tie with a lower index than the best so far
         * wins: <= best */
        if (!tb__segsoa_block(S, base, p, thr, !by_dist, d2, tp))
            continue;
        for (int k = 0; k < TB__SEGSOA_LANES; k++) {
            if (by_dist && !(d2[k] < thr))
                continue;
            float key = by_dist ? sqrtf(d2[k]) : d2[k]; /* as in tb__seg_nearest, the first index on a tie */
            if (key < best || (key == best && base + k < bi)) {
                best = key, bi = base + k, bt = tp[k];
                thr = !by_dist ? best : best > 1e-18f ? best * best * 1.000001f : INFINITY;
                reach = tb__segsoa_reach(S, thr, pbig); /* past it: d2 > thr */
            }
        }
    }
    *best_out = best;
    *t_out = bt;
    return bi;
}

float tb__segsoa_nearest(const tb__segsoa *S, const float p[3], int *nearest)
{
    float best, t;
    int bi = tb__segsoa_scan(S, p, 1, &best, &t);
    if (nearest)
        *nearest = bi;
    return best;
}

int tb__segsoa_nearest2(const tb__segsoa *S, const float p[3], float *t_out)
{
    float best;
    return tb__segsoa_scan(S, p, 0, &best, t_out);
}

/* Whether !(tb__segsoa_nearest(S, p) > x): some segment's distance, as
 * that search computes it, is at most x (x NaN or infinite: 1, as the
 * comparison gives). The search stops at the first such segment, hint's
 * block first (a segment likely near p; -1: none), and skips the blocks
 * whose box is past the reach of x: what it says does not depend on the
 * order it looks in. */
int tb__segsoa_within(const tb__segsoa *S, const float p[3], float x, int hint)
{
    if (!(x < INFINITY))
        return 1;
    /* d2 at or past thr has a root above x (tb__segsoa_scan's margin) */
    float thr = x > 1e-18f ? x * x * 1.000001f : INFINITY, reach = tb__segsoa_reach(S, thr, tb__absmax3(p));
    float d2[TB__SEGSOA_LANES], tp[TB__SEGSOA_LANES];
    int nb = S->cap / TB__SEGSOA_LANES, first = hint >= 0 && hint < S->n ? hint / TB__SEGSOA_LANES : -1;
    for (int q = -1; q < nb; q++) {
        int b = q < 0 ? first : q;
        if (b < 0 || (q >= 0 && b == first) || (reach < INFINITY && tb__segsoa_box_d2(S, b, p) >= reach))
            continue;
        if (!tb__segsoa_block(S, b * TB__SEGSOA_LANES, p, thr, 0, d2, tp))
            continue;
        for (int k = 0; k < TB__SEGSOA_LANES; k++)
            if (d2[k] < thr && sqrtf(d2[k]) <= x)
                return 1;
    }
    return 0;
}
