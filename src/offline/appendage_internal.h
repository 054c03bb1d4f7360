/* Private pieces of the appendage pass (SPEC A), shared by appendage.c,
 * geodesic.c and chain.c. Not installed. */
#ifndef TB_APPENDAGE_INTERNAL_H
#define TB_APPENDAGE_INTERNAL_H

#include "tailbone/appendage.h"

/* Undirected mesh graph over welded vertices, CSR (SPEC A3). */
typedef struct tb__graph {
    size_t n;
    uint32_t *off; /* n + 1 */
    uint32_t *adj; /* off[n] neighbours (duplicates allowed) */
} tb__graph;

/* Builds the graph of `tri_count` triangles whose corners are mapped through
 * map[] (model vertex → welded id < n). Degenerate edges are dropped. */
tb_result tb__graph_build(tb__graph *g, size_t n, const uint32_t *tris, size_t tri_count,
                          const uint32_t *map, tb_error *err);
void tb__graph_free(tb__graph *g);

/* SPEC A9: multi-source Dijkstra over edges weighted by length (binary heap,
 * O(E log V)). dist[] must hold 0 at the sources and INFINITY elsewhere;
 * only vertices with allowed[v] != 0 are entered (allowed may be NULL).
 * pos holds 3 floats per welded vertex; `extra` (may be NULL) adds edges
 * (bridges between merged shells), also weighted by length. */
tb_result tb__dijkstra(float *dist, const tb__graph *g, const tb__graph *extra, const float *pos,
                       const uint32_t *sources, size_t source_count, const uint8_t *allowed, tb_error *err);
/* Builds a graph over n vertices from edge_count (a, b) pairs. */
tb_result tb__graph_from_edges(tb__graph *g, size_t n, const uint32_t *edges, size_t edge_count, tb_error *err);

/* A bone segment a→b owned by joint `joint` (SPEC A1). */
typedef struct tb__seg {
    float a[3], ab[3], inv_len2; /* inv_len2 = 0 for a point */
    int joint;
    int extension;               /* a terminal joint's extension, not a bone */
} tb__seg;

float tb__seg_dist(const tb__seg *s, const float p[3]);
/* The least tb__seg_dist over s[0..n) (INFINITY when none is finite) and,
 * in *nearest when not NULL, the first segment at that distance (-1: none).
 * segdist.c */
float tb__seg_nearest(const tb__seg *s, int n, const float p[3], int *nearest);

/* Ascending sorts of unsigned integers, the result qsort gives (sort.c). */
void tb__sort_u64(uint64_t *a, size_t n);
void tb__sort_u32(uint32_t *a, size_t n);

/* Local thickness (medial.c). A context over the welded mesh: outward
 * normals per welded vertex (area weighted, each shell turned outward by its
 * enclosed volume) and a triangle grid. thickness: per vertex, the distance
 * along the inward normal to where the ray leaves the solid the vertex's own
 * shell bounds (other shells ignored), INFINITY past tmax[v] (0: not cast).
 * enclosed: whether point q (a medial point of vertex v) lies inside another
 * shell, counting only shells whose root has count_shell[root] set (all
 * when NULL). wtri: nt welded triangles; shell: welded vertex → its shell's
 * root. The arrays are borrowed for the context's life. */
typedef struct tb__medial tb__medial;
tb_result tb__medial_create(tb__medial **out, const float *pos, size_t nw, const uint32_t *wtri, size_t nt,
                            const uint32_t *shell, tb_error *err);
void tb__medial_free(tb__medial *md);
const float *tb__medial_normals(const tb__medial *md);
void tb__medial_thickness(const tb__medial *md, const float *tmax, float *thick);
int tb__medial_enclosed(const tb__medial *md, size_t v, const float q[3], const uint8_t *count_shell);

#define TB__NO_PIECE 0xffffffffu

/* What the detector knows per appendage beyond the public report, for fix. */
typedef struct tb__app_work {
    size_t rw_count;      /* model vertices to reweight */
    uint32_t *rw_verts;   /* ascending model vertex indices */
    float *rw_g;          /* geodesic coordinate per rw vertex (A9) */
    uint32_t *rw_piece;   /* per rw vertex: its separate piece (a welded shell lying wholly
                             in the appendage), numbered 0..piece_count-1, or
                             TB__NO_PIECE when its shell also holds other skin */
    uint32_t piece_count;
    uint32_t *collar;     /* model vertices, one per welded collar vertex (A4) */
    size_t collar_count;
    int parent_joint;     /* skel joint Tail_1 (or the rigid weight) goes to */
} tb__app_work;

typedef struct tb__detect_work {
    int count;
    tb__app_work *apps;   /* one per report appendage */
} tb__detect_work;

tb_result tb__appendage_detect(tb_appendage_report *out, tb__detect_work *work, const tb_model *m,
                               const tb_appendage_desc *resolved, tb_error *err);
void tb__detect_work_free(tb__detect_work *w);

/* SPEC A9 weighted bone distance over `vertices` with the given joints and
 * weights (tb_model layout); NaN when no listed vertex has weight. */
float tb__bone_distance(const tb_model *m, const uint32_t *vertices, size_t count, float extension_fraction,
                        const uint16_t *joints, const float *weights);

#endif
