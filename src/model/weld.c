/* SPEC A3: weld vertices by position (hash grid, O(n)). Exporters split a
 * vertex at every UV seam and normal break; connectivity must ignore that. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/appendage.h"

static uint64_t tb__cell_hash(int64_t x, int64_t y, int64_t z)
{
    uint64_t h = (uint64_t)x * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)y * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    h ^= (uint64_t)z * 0x165667B19E3779F9ull + (h << 6) + (h >> 2);
    return h ^ (h >> 29);
}

/* floor(x * inv) clamped to +-4e18, without a call into libm (six per
 * vertex): the cast truncates, one less below zero where it rounded up. NaN
 * gives INT64_MIN, as the cast of floor's NaN did on x86-64. */
static int64_t tb__cell(float x, float inv)
{
    double y = (double)x * inv;
    if (y != y)
        return INT64_MIN;
    if (y >= 4e18)
        return (int64_t)4e18;
    if (y <= -4e18)
        return (int64_t)-4e18;
    int64_t c = (int64_t)y;
    return (double)c > y ? c - 1 : c;
}

/* An earlier vertex at exactly p's position (the same bits, finite), or
 * UINT32_MAX, and then v is entered as the first at it (dup: open
 * addressing of vertex ids, mask + 1 slots, at most half full). Split
 * vertices repeat their position exactly: such a vertex welds as its first
 * copy did (the representatives within epsilon of it now are that copy's,
 * and those entered since, of higher index than the copy's choice). */
static uint32_t tb__weld_copy(uint32_t *dup, size_t mask, const float *positions, size_t stride, size_t v)
{
    const float *p = positions + v * stride;
    if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
        return UINT32_MAX; /* a NaN welds to nothing, not even its copies */
    uint32_t b[3];
    memcpy(b, p, sizeof b);
    size_t h = tb__cell_hash(b[0], b[1], b[2]) & mask;
    for (; dup[h] != UINT32_MAX; h = (h + 1) & mask)
        if (memcmp(positions + (size_t)dup[h] * stride, p, sizeof b) == 0)
            return dup[h];
    dup[h] = (uint32_t)v;
    return UINT32_MAX;
}

/* The copies' table: a trial over the first TB__COPY_TRIAL vertices in a
 * small table, then one of `cap` slots only where at least one in eight
 * was a copy (a mesh without seams allocates no big table, whose pages
 * would fault on every call). Any subset of entries gives the same welds. */
enum { TB__COPY_TRIAL = 4096, TB__COPY_SLOTS = 16384 };
typedef struct tb__copies {
    uint32_t *slot; /* NULL: none (no memory, or few copies) */
    size_t mask, probes, hits;
} tb__copies;

static void tb__copies_init(tb__copies *C, size_t slots)
{
    C->probes = C->hits = 0;
    C->mask = slots - 1;
    C->slot = malloc(slots * sizeof *C->slot);
    if (C->slot)
        memset(C->slot, 0xff, slots * sizeof *C->slot);
}

/* tb__weld_copy through the table, after the trial where it ends. */
static uint32_t tb__copies_find(tb__copies *C, const float *positions, size_t stride, size_t v, size_t cap)
{
    if (v == TB__COPY_TRIAL && C->slot && C->mask + 1 < cap) {
        free(C->slot);
        C->slot = NULL;
        if (C->hits * 8 >= C->probes)
            tb__copies_init(C, cap); /* empty: the trial's copies are found the long way */
    }
    if (!C->slot)
        return UINT32_MAX;
    C->probes++;
    uint32_t u = tb__weld_copy(C->slot, C->mask, positions, stride, v);
    C->hits += u != UINT32_MAX;
    return u;
}

size_t tb_weld_positions(uint32_t *remap, const float *positions, size_t count, size_t stride,
                         float epsilon)
{
    if (count == 0)
        return 0;
    if (!(epsilon > 0))
        epsilon = 1e-7f;
    size_t cap = 16;
    while (cap < count * 2)
        cap <<= 1;
    /* Only group representatives are inserted, so chains stay short. */
    uint32_t *head = malloc(cap * sizeof *head);
    uint32_t *next = malloc(count * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        for (size_t v = 0; v < count; v++)
            remap[v] = (uint32_t)v; /* no memory: weld nothing */
        return count;
    }
    for (size_t i = 0; i < cap; i++)
        head[i] = UINT32_MAX;
    tb__copies copies;
    tb__copies_init(&copies, cap < TB__COPY_SLOTS ? cap : TB__COPY_SLOTS);
    /* cells of 32 epsilon: a point searches only the cells its epsilon-ball
     * overlaps (one in 83% of points, never more than eight; with cells of
     * 4 epsilon it was 3.4 on average, each a random probe of the table).
     * Which points weld does not depend on the cell: every representative
     * within epsilon lies in a searched cell, and the test is the distance */
    double inv = 1.0 / (32.0 * (double)epsilon);
    float e2 = epsilon * epsilon;
    size_t groups = 0;
    for (size_t v = 0; v < count; v++) {
        uint32_t copy = tb__copies_find(&copies, positions, stride, v, cap);
        if (copy != UINT32_MAX) {
            remap[v] = remap[copy];
            continue;
        }
        const float *p = positions + v * stride;
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = tb__cell(p[a] - epsilon, inv);
            hi[a] = tb__cell(p[a] + epsilon, inv);
        }
        uint32_t best = UINT32_MAX;
        for (int64_t cx = lo[0]; cx <= hi[0]; cx++)
            for (int64_t cy = lo[1]; cy <= hi[1]; cy++)
                for (int64_t cz = lo[2]; cz <= hi[2]; cz++) {
                    uint64_t h = tb__cell_hash(cx, cy, cz) & (cap - 1);
                    for (uint32_t q = head[h]; q != UINT32_MAX; q = next[q]) {
                        const float *o = positions + (size_t)q * stride;
                        float ex = o[0] - p[0], ey = o[1] - p[1], ez = o[2] - p[2];
                        if (ex * ex + ey * ey + ez * ez <= e2 && q < best)
                            best = q;
                    }
                }
        if (best != UINT32_MAX) {
            remap[v] = best;
        } else {
            remap[v] = (uint32_t)v;
            /* p's own cell: the one its epsilon-ball spans where that is one
             * (the cell is monotone in x, and p - epsilon <= p <= p + epsilon) */
            int64_t c[3];
            for (int a = 0; a < 3; a++)
                c[a] = lo[a] == hi[a] ? lo[a] : tb__cell(p[a], inv);
            uint64_t h = tb__cell_hash(c[0], c[1], c[2]) & (cap - 1);
            next[v] = head[h];
            head[h] = (uint32_t)v;
            groups++;
        }
    }
    free(head);
    free(next);
    free(copies.slot);
    return groups;
}
