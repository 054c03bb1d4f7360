/* Mesh graph (SPEC A3) and geodesic distance from the collar (SPEC A9). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/mesh_internal.h"
#include "core/base.h"

void tb__graph_free(tb__graph *g)
{
    free(g->off);
    free(g->adj);
    memset(g, 0, sizeof *g);
}

tb_result tb__graph_build(tb__graph *g, size_t n, const uint32_t *tris, size_t tri_count,
                          const uint32_t *map, tb_error *err)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->off = calloc(n + 1, sizeof *g->off);
    if (!g->off)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* counting pass, then fill: two directed entries per triangle edge
     * (each corner mapped once per pass, not once per edge it is on) */
    for (size_t t = 0; t < tri_count; t++) {
        uint32_t c[3] = {map[tris[t * 3]], map[tris[t * 3 + 1]], map[tris[t * 3 + 2]]};
        for (int e = 0; e < 3; e++) {
            uint32_t a = c[e], b = c[e == 2 ? 0 : e + 1];
            if (a != b) {
                g->off[a + 1]++;
                g->off[b + 1]++;
            }
        }
    }
    for (size_t v = 0; v < n; v++)
        g->off[v + 1] += g->off[v];
    g->adj = malloc((g->off[n] ? g->off[n] : 1) * sizeof *g->adj);
    uint32_t *fill = malloc((n ? n : 1) * sizeof *fill);
    if (!g->adj || !fill) {
        free(fill);
        tb__graph_free(g);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    memcpy(fill, g->off, n * sizeof *fill);
    for (size_t t = 0; t < tri_count; t++) {
        uint32_t c[3] = {map[tris[t * 3]], map[tris[t * 3 + 1]], map[tris[t * 3 + 2]]};
        for (int e = 0; e < 3; e++) {
            uint32_t a = c[e], b = c[e == 2 ? 0 : e + 1];
            if (a != b) {
                g->adj[fill[a]++] = b;
                g->adj[fill[b]++] = a;
            }
        }
    }
    free(fill);
    return TB_OK;
}

tb_result tb__graph_from_edges(tb__graph *g, size_t n, const uint32_t *edges, size_t edge_count, tb_error *err)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->off = calloc(n + 1, sizeof *g->off);
    g->adj = malloc((edge_count * 2 + 1) * sizeof *g->adj);
    uint32_t *fill = malloc((n + 1) * sizeof *fill);
    if (!g->off || !g->adj || !fill) {
        free(fill);
        tb__graph_free(g);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (size_t e = 0; e < edge_count; e++) {
        g->off[edges[e * 2] + 1]++;
        g->off[edges[e * 2 + 1] + 1]++;
    }
    for (size_t v = 0; v < n; v++)
        g->off[v + 1] += g->off[v];
    memcpy(fill, g->off, n * sizeof *fill);
    for (size_t e = 0; e < edge_count; e++) {
        uint32_t a = edges[e * 2], b = edges[e * 2 + 1];
        g->adj[fill[a]++] = b;
        g->adj[fill[b]++] = a;
    }
    free(fill);
    return TB_OK;
}

/* A heap entry: the distance's bits as an unsigned key in the high word
 * (a float >= 0 orders as its bits do; negatives are mapped below, reversed),
 * the vertex in the low one. One integer compare orders by distance, ties
 * by vertex index: the order (and so the output) is deterministic, and the
 * order the float-and-index compare gave. */
static uint64_t tb__heap_key(float d, uint32_t v)
{
    uint32_t u;
    memcpy(&u, &d, sizeof u);
    u = u & 0x80000000u ? ~u : u | 0x80000000u;
    return (uint64_t)u << 32 | v;
}

static float tb__heap_dist(uint64_t k)
{
    uint32_t u = (uint32_t)(k >> 32);
    u = u & 0x80000000u ? u & 0x7fffffffu : ~u;
    float d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* The heap is 4-ary (children of k: 4k + 1 .. 4k + 4): half the levels of
 * a binary one, the four children in one or two cache lines. Keys are
 * unique (a vertex is pushed again only at a strictly smaller distance), so
 * any heap pops the same sequence: the output does not depend on its shape. */
static void tb__heap_push(uint64_t *h, size_t *n, uint64_t it)
{
    size_t k = (*n)++;
    while (k && it < h[(k - 1) / 4]) {
        h[k] = h[(k - 1) / 4];
        k = (k - 1) / 4;
    }
    h[k] = it;
}

/* Takes the smallest entry out (n > 0). Bottom-up: the hole left at the
 * root goes down the smallest children to a leaf, where the last entry goes
 * in and rises (it belongs near the bottom). */
static uint64_t tb__heap_pop(uint64_t *h, size_t *n)
{
    uint64_t top = h[0], last = h[--*n];
    size_t k = 0, m = *n;
    for (size_t c = 1; c < m; c = 4 * k + 1) {
        size_t b = c;
        if (c + 3 < m) { /* all four */
            size_t b0 = h[c + 1] < h[c] ? c + 1 : c, b1 = h[c + 3] < h[c + 2] ? c + 3 : c + 2;
            b = h[b1] < h[b0] ? b1 : b0;
        } else {
            for (size_t x = c + 1; x < m; x++)
                b = h[x] < h[b] ? x : b;
        }
        h[k] = h[b];
        k = b;
    }
    while (k && last < h[(k - 1) / 4]) {
        h[k] = h[(k - 1) / 4];
        k = (k - 1) / 4;
    }
    if (m)
        h[k] = last;
    return top;
}

tb_result tb__dijkstra(float *dist, const tb__graph *g, const tb__graph *extra, const float *pos,
                       const uint32_t *sources, size_t source_count, const uint8_t *allowed, tb_error *err)
{
    size_t cap = source_count + 64, n = 0;
    uint64_t *h = malloc(cap * sizeof *h);
    if (!h)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t i = 0; i < source_count; i++)
        tb__heap_push(h, &n, tb__heap_key(dist[sources[i]], sources[i]));
    while (n) {
        uint64_t top = tb__heap_pop(h, &n);
        uint32_t v = (uint32_t)top;
        float d = tb__heap_dist(top);
        if (d > dist[v])
            continue; /* stale entry (lazy deletion) */
        const float *p = pos + (size_t)v * 3;
        for (int pass = 0; pass < 2; pass++) { /* the mesh's edges, then the extra ones */
            const tb__graph *gr = pass ? extra : g;
            for (uint32_t e = gr ? gr->off[v] : 0; gr && e < gr->off[v + 1]; e++) {
                uint32_t w = gr->adj[e];
                /* every neighbour's length, then one test: a neighbour at d
                 * or nearer (those behind the front) cannot improve (d + a
                 * length >= d), and deciding that apart costs a branch the
                 * processor guesses wrong about half the time */
                const float *q = pos + (size_t)w * 3;
                float dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
                float nd = d + sqrtf(dx * dx + dy * dy + dz * dz);
                if (!((nd < dist[w]) & (!allowed || allowed[w])))
                    continue;
                dist[w] = nd;
                if (n == cap) {
                    cap *= 2;
                    uint64_t *nh = realloc(h, cap * sizeof *nh);
                    if (!nh) {
                        free(h);
                        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
                    }
                    h = nh;
                }
                tb__heap_push(h, &n, tb__heap_key(nd, w));
            }
        }
    }
    free(h);
    return TB_OK;
}
