/* Order statistics for stretch figures (SPEC C): the nearest-rank percentile
 * of the preview page's runtime and of the offline layer's small selections
 * (world scale, chain radii). `tailbone measure` streams its samples into a
 * histogram instead (src/passes/stretch_hist.c) whose percentiles are these
 * within half a bin. No allocation, no I/O. */
#include <math.h>
#include <stdlib.h>

#include "tailbone/runtime.h"

static int tb__cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Rank of the nearest-rank percentile q among n sorted values. */
size_t tb_rank_nearest(size_t n, double q)
{
    double r = ceil(q * (double)n);
    if (r < 1)
        r = 1;
    if (r > (double)n)
        r = (double)n;
    return (size_t)r - 1;
}

/* The k-th smallest of a[0..n) (0-based), partially reordering a so that
 * a[0..k) <= a[k] <= a[k+1..n): introselect — median-of-three quickselect,
 * falling back to a sort of the remaining range after too many rounds. */
float tb_select_kth(float *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the answer lies in [lo, hi) */
    int budget = 64;
    while (hi - lo > 16 && budget-- > 0) {
        size_t mid = lo + (hi - lo) / 2;
        float x = a[lo], y = a[mid], z = a[hi - 1];
        float pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        /* three-way partition: < pivot | == pivot | > pivot */
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (a[i] < pivot) {
                float t = a[lt];
                a[lt++] = a[i];
                a[i++] = t;
            } else if (a[i] > pivot) {
                float t = a[--gt];
                a[gt] = a[i];
                a[i] = t;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    qsort(a + lo, hi - lo, sizeof *a, tb__cmp_float);
    return a[k];
}
