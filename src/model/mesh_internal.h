/* Private: the welded mesh as a graph (geodesic.c) and its local thickness
 * (medial.c), the model-level tools the passes build on (appendage.c,
 * chain.c through appendage_internal.h). Not installed. */
#ifndef TB_MESH_INTERNAL_H
#define TB_MESH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "tailbone/common.h"
#include "tailbone/model.h"

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
/* Its three builds, after create and before any ray: they write apart and
 * read only the arrays above, so they may run on threads at once
 * (appendage.c). orient: the outward normals and each shell's winding;
 * grid: the triangles' grid (on error the context is only fit to free);
 * records: the triangles' records the ray tests load, which
 * tb__medial_records_join then hands to the grid (after both, before any
 * ray). */
void tb__medial_orient(tb__medial *md);
tb_result tb__medial_grid(tb__medial *md, tb_error *err);
tb_result tb__medial_records(tb__medial *md, tb_error *err);
void tb__medial_records_join(tb__medial *md);
void tb__medial_free(tb__medial *md);
/* m's triangles read again from doc (model.c), as tb_model_load read
 * them: after tb__appendage_detect_taking wrote over them. */
tb_result tb__model_triangles_reload(tb_model *m, const tb_doc *doc, tb_error *err);
/* The model of skin `skin` (as tb_model_load_desc with desc.skin = skin + 1
 * and no normals) as far as the repair reads the edited document back
 * (chain.c: the do-no-harm count and the bone distances after): skeleton,
 * positions, joints and weights. No roles (every joint TB_ROLE_NONE, no
 * role_joint) and no triangles (triangle_count 0; each primitive's count
 * kept): the naming and the shape checks were most of a load's cost. */
tb_result tb__model_load_influences(tb_model **out, const tb_doc *doc, int skin, tb_error *err);
/* Frees all but the normals (no ray after it; memory back before what follows). */
void tb__medial_drop_grid(tb__medial *md);
const float *tb__medial_normals(const tb__medial *md);
/* The thickness of vertices [v0, v1) only (into thick[v0 .. v1)): each ray
 * reads the context and writes its own slot, so ranges may run on threads
 * at once (appendage.c) and give what one call over [0, nw) gives. */
void tb__medial_thickness(const tb__medial *md, const float *tmax, float *thick, size_t v0, size_t v1);
/* The ray tests' way, for tests (after tb__medial_grid and
 * tb__medial_records_join; the grid starts with the widest): 0 four lanes in SSE (or scalar), 1 four lanes in AVX,
 * 2 eight lanes in AVX2, each as far as this CPU has it (and, above 0, the
 * grid has triangle records). Returns the way now in use. Every way gives
 * the same bits. */
int tb__medial_way(tb__medial *md, int way);
/* Reads the context only (safe on threads at once). */
int tb__medial_enclosed(const tb__medial *md, size_t v, const float q[3], const uint8_t *count_shell);
/* Prepares tb__medial_enclosed for calls with this count_shell (same
 * pointer, contents unchanged meanwhile): each ray then walks only the
 * cells the counted shells' triangles lie in. The answers are the same. */
tb_result tb__medial_count_shells(tb__medial *md, const uint8_t *count_shell, tb_error *err);

#endif
