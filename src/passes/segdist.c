/* The nearest bone segment to a point (SPEC A1), exactly as taking the
 * minimum of tb__seg_dist over the segments in order would find it (same
 * distance, same first index on ties), with a square root only where a
 * segment can beat the best so far. */
#include <math.h>

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
