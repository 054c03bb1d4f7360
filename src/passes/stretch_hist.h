/* Streaming histogram of stretch ratios (SPEC C figures in bounded memory):
 * the nearest-rank p95/p99 of a group's samples without keeping the samples.
 * Memory is fixed (TB__HIST_BINS bins), whatever the number of edges and
 * instants. Internal to the offline layer; tested by test_measure.
 *
 * Bins. Ratios cluster near 1, so the bins are finest there:
 *   [0, 0.5)    width 1e-3      [0.5, 2.5)  width 1e-4
 *   [2.5, 20)   width 1e-3      [20, 128)   width 5e-3
 *   [128, 2^40) 512 bins an octave (0.14% relative width)
 *   [2^40, inf] one bin;  NaN   one bin (sorted last, as no value)
 * Below 128 every bin edge is a multiple of its width, and every width
 * divides 0.005, so no bin straddles a two-decimal rounding boundary: a
 * value printed with "%.2f" reads the same whichever sample of its bin it
 * is (except a sample exactly on a tie such as 1.125, which is rare).
 * The bin index is floor(x · 1/width) in double, exact for a float x.
 *
 * Exact figures. The count and the torn count are exact: both are read from
 * the bins once the samples are in (tb__hist_tally), the torn count from
 * the bins wholly past a threshold plus a count kept, per sample, only in
 * the two bins that hold a threshold (the bin of x is monotonic in x). The min and
 * the max are read from the bins (tb__hist_min, tb__hist_max: the smallest
 * sample of the lowest bin in use, the largest of the highest, NaN's bin
 * left out), so adding a sample does not compare it with them. Each bin
 * keeps its smallest and largest sample, so a percentile
 * whose rank is the first or the last of its bin (or a bin of equal
 * samples) is exact; otherwise it is the middle of the bin's range, within
 * half a bin width of the exact nearest-rank value. */
#ifndef TB_OFFLINE_STRETCH_HIST_H
#define TB_OFFLINE_STRETCH_HIST_H

#include <stddef.h>
#include <stdint.h>

#define TB__HIST_BINS (500 + 20000 + 17500 + 21600 + 33 * 512 + 2)

typedef struct tb__hist {
    uint64_t n;             /* samples added (tb__hist_tally) */
    uint64_t torn;          /* samples above torn_above or below torn_below (tb__hist_tally) */
    float torn_above, torn_below;
    size_t bin_above, bin_below; /* the bins of the thresholds (none: TB__HIST_BINS) */
    uint64_t torn_edge;     /* torn samples in those two bins */
    float min, max;         /* tb__hist_min and tb__hist_max, as tb__hist_tally left them */
    uint64_t *count;        /* TB__HIST_BINS; zero on [from, to), never touched outside */
    float *lo, *hi;         /* per bin: smallest and largest sample */
    size_t from, to;        /* the bins made so far: those that may hold a sample */
} tb__hist;

/* Allocates the bins (about 1.2 MB of address space) and makes those of
 * [TB__HIST_NEAR_LO, TB__HIST_NEAR_HI) (60 KB written); returns 0 when out
 * of memory. Those start with lo = +inf and hi = -inf, so a sample there
 * needs no first-sample test (tb__hist_add_near). A sample outside them
 * makes the bins between them and its own (count zeroed; lo and hi set by
 * a bin's first sample), so the pages a histogram writes and reads are
 * those of the range its samples span, not all 1.2 MB (each a page fault
 * in a fresh process). */
int tb__hist_init(tb__hist *h, float torn_above, float torn_below);
void tb__hist_free(tb__hist *h);
/* n histograms as tb__hist_init makes them, their bins in one block:
 * histogram k's count, lo and hi are h[0]'s from k * TB__HIST_BINS, so one
 * base pointer and an offset reach a bin of any of them (measure's edge
 * loop). Freed by tb__hist_free_block(h) alone; 0 when out of memory. */
int tb__hist_init_block(tb__hist *h, int n, float torn_above, float torn_below);
void tb__hist_free_block(tb__hist *h);

/* The bin of x. The products are under 2^31: converted through long, one
 * instruction, where size_t's conversion tests against 2^63 first. */
static inline size_t tb__hist_bin(float x)
{
    if (x >= 0.5f && x < 2.5f)
        return 500 + (size_t)(long)((double)x * 1e4) - 5000;
    if (x < 0.5f)
        return x > 0 ? (size_t)(long)((double)x * 1e3) : 0;
    if (x < 20.0f)
        return 20500 + (size_t)(long)((double)x * 1e3) - 2500;
    if (x < 128.0f)
        return 38000 + (size_t)(long)((double)x * 200) - 4000;
    if (x < 1099511627776.0f) { /* 2^40: 512 bins an octave from the float's bits */
        union { float f; uint32_t u; } b = {x};
        uint32_t e = ((b.u >> 23) & 0xffu) - 127u, m = (b.u >> 14) & 511u;
        return 59600 + (size_t)(e - 7u) * 512 + m;
    }
    return x == x ? TB__HIST_BINS - 2 : TB__HIST_BINS - 1; /* huge or inf; NaN */
}

/* Adds one sample (n and torn are counted by tb__hist_tally). */
void tb__hist_add(tb__hist *h, float x);
/* Adds k equal samples x: what k calls of tb__hist_add(h, x) leave. */
void tb__hist_add_n(tb__hist *h, float x, uint32_t k);

/* The fast path of an edge loop (measure.c): a histogram's bins and
 * thresholds in a local copy, so the stores to the bins cannot be taken by
 * the compiler to change them; begin, add every sample, end. */
typedef struct tb__hist_near {
    tb__hist *h;
    uint64_t *count;
    float *lo, *hi;
    size_t bin_above, bin_below;
    float torn_above, torn_below;
    uint64_t torn_edge;
} tb__hist_near;

static inline void tb__hist_near_begin(tb__hist_near *f, tb__hist *h)
{
    *f = (tb__hist_near){.h = h, .count = h->count, .lo = h->lo, .hi = h->hi, .bin_above = h->bin_above,
                         .bin_below = h->bin_below, .torn_above = h->torn_above, .torn_below = h->torn_below};
}

/* The range of tb__hist_add_near's own path, inside [0.5, 2.5): nearly
 * every stretch ratio, and only 5,000 bins whose lo and hi are written at
 * init (40 KB a histogram mapped). */
#define TB__HIST_NEAR_LO 0.8f
#define TB__HIST_NEAR_HI 1.3f

/* tb__hist_add_n: k samples x in [TB__HIST_NEAR_LO, TB__HIST_NEAR_HI)
 * into their bin here, with the same bin, count, extremes and torn count; any
 * other through tb__hist_add. */
static inline void tb__hist_add_near(tb__hist_near *f, float x, uint32_t k)
{
    if (x >= TB__HIST_NEAR_LO && x < TB__HIST_NEAR_HI) {
        size_t b = 500 + (size_t)(long)((double)x * 1e4) - 5000; /* tb__hist_bin's */
        f->count[b] += k;
        f->lo[b] = x < f->lo[b] ? x : f->lo[b]; /* the bin's first sample: x < +inf */
        f->hi[b] = x > f->hi[b] ? x : f->hi[b];
        if (b == f->bin_above || b == f->bin_below)
            f->torn_edge += (x > f->torn_above || x < f->torn_below) ? k : 0;
        return;
    }
    tb__hist_add_n(f->h, x, k);
}

static inline void tb__hist_near_end(tb__hist_near *f)
{
    f->h->torn_edge += f->torn_edge;
    f->torn_edge = 0;
}

/* Sets n, torn, min and max from the bins (one pass over them): call once
 * every sample is in, before tb__hist_rank (a histogram never initialised,
 * all zero: none). */
void tb__hist_tally(tb__hist *h);

/* The smallest and the largest non-NaN sample, exact (the lowest and the
 * highest bins in use keep them); NaN when every sample is NaN or none was
 * added. */
float tb__hist_min(const tb__hist *h);
float tb__hist_max(const tb__hist *h);

/* Value of 0-based rank k (k < h->n) in ascending order, as described above. */
float tb__hist_rank(const tb__hist *h, uint64_t k);

/* The upper edge of x's bin minus its lower edge: how far tb__hist_rank may
 * be from the exact value of a rank in that bin (at most half of it). */
double tb__hist_bin_width(float x);

#endif
