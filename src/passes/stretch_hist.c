/* Streaming histogram of stretch ratios: see stretch_hist.h. */
#include "passes/stretch_hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tb__hist_init(tb__hist *h, float torn_above, float torn_below)
{
    return tb__hist_init_block(h, 1, torn_above, torn_below);
}

int tb__hist_init_block(tb__hist *h, int n, float torn_above, float torn_below)
{
    const size_t bins = (size_t)(n > 0 ? n : 1) * TB__HIST_BINS;
    uint64_t *count = malloc(bins * sizeof *count);
    float *lo = malloc(bins * sizeof *lo), *hi = malloc(bins * sizeof *hi);
    if (!count || !lo || !hi) {
        free(count), free(lo), free(hi);
        for (int k = 0; k < n; k++)
            h[k].count = NULL, h[k].lo = h[k].hi = NULL, h[k].from = h[k].to = 0;
        return 0;
    }
    for (int k = 0; k < n; k++) {
        tb__hist *g = &h[k];
        g->n = g->torn = g->torn_edge = 0;
        g->torn_above = torn_above;
        g->torn_below = torn_below;
        /* a NaN threshold tears nothing: no bin lies past it */
        g->bin_above = torn_above == torn_above ? tb__hist_bin(torn_above) : TB__HIST_BINS;
        g->bin_below = torn_below == torn_below ? tb__hist_bin(torn_below) : TB__HIST_BINS;
        g->count = count + (size_t)k * TB__HIST_BINS;
        g->lo = lo + (size_t)k * TB__HIST_BINS;
        g->hi = hi + (size_t)k * TB__HIST_BINS;
        g->from = tb__hist_bin(TB__HIST_NEAR_LO);
        g->to = tb__hist_bin(TB__HIST_NEAR_HI) + 1;
        for (size_t b = g->from; b < g->to; b++) {
            g->count[b] = 0;
            g->lo[b] = INFINITY;
            g->hi[b] = -INFINITY;
        }
    }
    return 1;
}

/* Bin b made: the bins from the ones made to b zeroed (their lo and hi
 * are set by their first sample). */
static void tb__hist_reach(tb__hist *h, size_t b)
{
    if (b < h->from) {
        memset(h->count + b, 0, (h->from - b) * sizeof *h->count);
        h->from = b;
    } else if (b >= h->to) {
        memset(h->count + h->to, 0, (b + 1 - h->to) * sizeof *h->count);
        h->to = b + 1;
    }
}

void tb__hist_free_block(tb__hist *h)
{
    tb__hist_free(h);
}

void tb__hist_add_n(tb__hist *h, float x, uint32_t k)
{
    if (k == 0)
        return;
    size_t b = tb__hist_bin(x);
    if (b < h->from || b >= h->to)
        tb__hist_reach(h, b);
    if (h->count[b] == 0) { /* NaN's bin keeps its first NaN (tb__hist_rank) */
        h->lo[b] = h->hi[b] = x;
    } else {
        h->lo[b] = x < h->lo[b] ? x : h->lo[b];
        h->hi[b] = x > h->hi[b] ? x : h->hi[b];
    }
    h->count[b] += k;
    if (b == h->bin_above || b == h->bin_below)
        h->torn_edge += (x > h->torn_above || x < h->torn_below) ? k : 0;
}

void tb__hist_add(tb__hist *h, float x)
{
    tb__hist_add_n(h, x, 1);
}

void tb__hist_free(tb__hist *h)
{
    free(h->count);
    free(h->lo);
    free(h->hi);
    h->count = NULL;
    h->lo = h->hi = NULL;
    h->from = h->to = 0;
}

/* Every bin but the last (NaN's) is ordered by value, and a bin's lo and hi
 * are its extremes as the running comparisons would have kept them (the
 * first of equal samples), so the lowest bin in use holds the min and the
 * highest the max. */
static float tb__hist_min_from(const tb__hist *h, size_t from)
{
    const size_t end = h->to < TB__HIST_BINS - 1 ? h->to : TB__HIST_BINS - 1; /* not NaN's bin */
    for (size_t b = from > h->from ? from : h->from; b < end; b++)
        if (h->count[b])
            return h->lo[b];
    return NAN;
}

static float tb__hist_max_below(const tb__hist *h, size_t to)
{
    for (size_t b = to < h->to ? to : h->to; b-- > h->from;)
        if (h->count[b])
            return h->hi[b];
    return NAN;
}

float tb__hist_min(const tb__hist *h)
{
    return tb__hist_min_from(h, 0);
}

float tb__hist_max(const tb__hist *h)
{
    return tb__hist_max_below(h, TB__HIST_BINS - 1);
}

/* A bin past a threshold's bin holds only samples past the threshold (the
 * bin is monotonic in x; NaN's bin, the last, tears nothing); the
 * thresholds' own bins counted their torn samples one by one. */
static uint64_t tb__hist_sum(const tb__hist *h, size_t from, size_t to)
{
    uint64_t n = 0;
    for (size_t b = from > h->from ? from : h->from; b < to && b < h->to; b++)
        n += h->count[b];
    return n;
}

void tb__hist_tally(tb__hist *h)
{
    const size_t above = h->bin_above, below = h->bin_below, nan_bin = TB__HIST_BINS - 1;
    h->n = h->torn = 0;
    h->min = h->max = NAN;
    if (!h->count)
        return;
    uint64_t torn = h->torn_edge;
    if (above < nan_bin && below < nan_bin && below <= above) {
        /* the usual thresholds (below under above): [0, below) and
         * (above, NaN's bin) tear; the thresholds' own bins counted */
        uint64_t lo = tb__hist_sum(h, 0, below), hi = tb__hist_sum(h, above + 1, nan_bin);
        h->n = lo + tb__hist_sum(h, below, above + 1) + hi + tb__hist_sum(h, nan_bin, nan_bin + 1);
        h->torn = torn + lo + hi;
        /* min and max: the ranges the sums found empty are not looked at */
        h->min = tb__hist_min_from(h, lo ? 0 : below);
        h->max = tb__hist_max_below(h, hi ? nan_bin : above + 1);
        return;
    }
    uint64_t n = 0;
    for (size_t b = h->from; b < h->to; b++) {
        uint64_t c = h->count[b];
        n += c;
        if (b != above && b != below && b < nan_bin && ((above < nan_bin && b > above) || (below < nan_bin && b < below)))
            torn += c;
    }
    h->n = n;
    h->torn = torn;
    h->min = tb__hist_min(h);
    h->max = tb__hist_max(h);
}

float tb__hist_rank(const tb__hist *h, uint64_t k)
{
    if (k >= h->n)
        return NAN;
    uint64_t before = 0;
    for (size_t b = h->from; b < h->to; b++) {
        uint64_t c = h->count[b];
        if (k >= before + c) {
            before += c;
            continue;
        }
        /* rank k lies in bin b: its first and last ranks are exact */
        if (k == before)
            return h->lo[b];
        if (k == before + c - 1)
            return h->hi[b];
        return (float)(0.5 * ((double)h->lo[b] + (double)h->hi[b]));
    }
    return NAN; /* not reached: the counts sum to n */
}

double tb__hist_bin_width(float x)
{
    if (!(x == x) || x >= 1099511627776.0f)
        return INFINITY;
    if (x < 0.5f)
        return 1e-3;
    if (x < 2.5f)
        return 1e-4;
    if (x < 20.0f)
        return 1e-3;
    if (x < 128.0f)
        return 5e-3;
    int e;
    frexpf(x, &e); /* x = f · 2^e, f in [0.5, 1): the octave [2^(e-1), 2^e) */
    return ldexp(1.0, e - 1 - 9);
}
