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
    /* counting pass, then fill: two directed entries per triangle edge */
    for (size_t t = 0; t < tri_count; t++)
        for (int e = 0; e < 3; e++) {
            uint32_t a = map[tris[t * 3 + (size_t)e]], b = map[tris[t * 3 + (size_t)(e + 1) % 3]];
            if (a != b) {
                g->off[a + 1]++;
                g->off[b + 1]++;
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
    for (size_t t = 0; t < tri_count; t++)
        for (int e = 0; e < 3; e++) {
            uint32_t a = map[tris[t * 3 + (size_t)e]], b = map[tris[t * 3 + (size_t)(e + 1) % 3]];
            if (a != b) {
                g->adj[fill[a]++] = b;
                g->adj[fill[b]++] = a;
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

typedef struct tb__heap_item {
    float d;
    uint32_t v;
} tb__heap_item;

/* Ties broken by vertex index: the order (and so the output) is deterministic. */
static int tb__less(tb__heap_item a, tb__heap_item b)
{
    return a.d < b.d || (a.d == b.d && a.v < b.v);
}

tb_result tb__dijkstra(float *dist, const tb__graph *g, const tb__graph *extra, const float *pos,
                       const uint32_t *sources, size_t source_count, const uint8_t *allowed, tb_error *err)
{
    size_t cap = source_count + 64, n = 0;
    tb__heap_item *h = malloc(cap * sizeof *h);
    if (!h)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t i = 0; i < source_count; i++) {
        /* push (sift up) */
        tb__heap_item it = {dist[sources[i]], sources[i]};
        size_t k = n++;
        while (k && tb__less(it, h[(k - 1) / 2])) {
            h[k] = h[(k - 1) / 2];
            k = (k - 1) / 2;
        }
        h[k] = it;
    }
    while (n) {
        tb__heap_item top = h[0];
        tb__heap_item last = h[--n];
        size_t k = 0;
        for (;;) { /* sift down */
            size_t c = 2 * k + 1;
            if (c >= n)
                break;
            if (c + 1 < n && tb__less(h[c + 1], h[c]))
                c++;
            if (!tb__less(h[c], last))
                break;
            h[k] = h[c];
            k = c;
        }
        if (n)
            h[k] = last;
        if (top.d > dist[top.v])
            continue; /* stale entry (lazy deletion) */
        const float *p = pos + (size_t)top.v * 3;
        uint32_t n_main = g->off[top.v + 1] - g->off[top.v];
        uint32_t n_extra = extra ? extra->off[top.v + 1] - extra->off[top.v] : 0;
        for (uint32_t e = 0; e < n_main + n_extra; e++) {
            uint32_t w = e < n_main ? g->adj[g->off[top.v] + e] : extra->adj[extra->off[top.v] + e - n_main];
            if (allowed && !allowed[w])
                continue;
            const float *q = pos + (size_t)w * 3;
            float dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
            float nd = top.d + sqrtf(dx * dx + dy * dy + dz * dz);
            if (nd < dist[w]) {
                dist[w] = nd;
                if (n == cap) {
                    cap *= 2;
                    tb__heap_item *nh = realloc(h, cap * sizeof *h);
                    if (!nh) {
                        free(h);
                        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
                    }
                    h = nh;
                }
                tb__heap_item it = {nd, w};
                size_t j = n++;
                while (j && tb__less(it, h[(j - 1) / 2])) {
                    h[j] = h[(j - 1) / 2];
                    j = (j - 1) / 2;
                }
                h[j] = it;
            }
        }
    }
    free(h);
    return TB_OK;
}
