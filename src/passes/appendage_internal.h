/* Private pieces of the appendage pass (SPEC A), shared by appendage.c,
 * chain.c and measure.c. Not installed. The mesh graph and local thickness
 * it builds on are in mesh_internal.h. */
#ifndef TB_APPENDAGE_INTERNAL_H
#define TB_APPENDAGE_INTERNAL_H

#include "tailbone/appendage.h"
#include "model/mesh_internal.h"

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

/* The segments as arrays (a xyz, ab xyz, inv_len2: seven of cap floats),
 * padded to whole blocks of LANES with segments no point is near, so that
 * the distances of a block are computed side by side (segdist.c). */
enum { TB__SEGSOA_LANES = 8 };
typedef struct tb__segsoa {
    int n, cap;
    float *f;
    float *box; /* per block: its segments' box, least corner xyz then greatest (6 of cap / LANES) */
    float big;  /* the largest |a| + |ab| coordinate, for the bound's margin */
} tb__segsoa;
int tb__segsoa_init(tb__segsoa *S, const tb__seg *s, int n); /* 0: out of memory */
void tb__segsoa_free(tb__segsoa *S);
/* tb__seg_nearest(s, n, p, nearest) of the segments S was made from: the
 * same distance and index, bit for bit. */
float tb__segsoa_nearest(const tb__segsoa *S, const float p[3], int *nearest);
/* The first segment of least squared distance to p (-1: none) and, in
 * *t, p's projection on it before clamping (tb__wraps' choice). */
int tb__segsoa_nearest2(const tb__segsoa *S, const float p[3], float *t);
/* !(tb__segsoa_nearest(S, p, NULL) > x), stopping at the first segment
 * within x (hint: a segment to try first, -1: none). */
int tb__segsoa_within(const tb__segsoa *S, const float p[3], float x, int hint);

/* Ascending sorts of unsigned integers, the result qsort gives (sort.c). */
void tb__sort_u64(uint64_t *a, size_t n);
void tb__sort_u32(uint32_t *a, size_t n);
/* Sorts a[0, n) (tb__sort_u32) and drops the repeats; returns how many are left. */
size_t tb__sort_unique_ids(uint32_t *a, size_t n);
/* A record sorted by (key, comp, v): a grid cell's key and a vertex with
 * its component, or any key with a payload (sort.c). */
typedef struct tb__cell_entry {
    uint64_t key;
    uint32_t comp, v;
} tb__cell_entry;
/* Ascending by key, then comp, then v: the order qsort with that three-way
 * comparison gives when no two records are equal (stable radix passes over
 * the bytes that differ). */
void tb__sort_cells(tb__cell_entry *e, size_t n);

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

/* Work of the caller's that reads the model's triangles, run as a task of
 * detection's first loop (beside the weld, on whichever thread is
 * free), before detection writes its welded copy over them. */
typedef struct tb__side_task {
    void (*fn)(void *ctx);
    void *ctx;
} tb__side_task;

tb_result tb__appendage_detect(tb_appendage_report *out, tb__detect_work *work, const tb_model *m,
                               const tb_appendage_desc *resolved, tb_error *err);
/* The same on the caller's own model, whose triangles detection writes its
 * welded copy over (no second copy at its peak) and frees: m has none after
 * it (tb__model_triangles_reload reads them again). side (NULL: none): run
 * while the triangles are still the model's. */
tb_result tb__appendage_detect_taking(tb_appendage_report *out, tb__detect_work *work, tb_model *m,
                                      const tb_appendage_desc *resolved, const tb__side_task *side,
                                      tb_error *err);
void tb__detect_work_free(tb__detect_work *w);

/* SPEC A9 weighted bone distance over `vertices` with the given joints and
 * weights (tb_model layout); NaN when no listed vertex has weight. */
float tb__bone_distance(const tb_model *m, const uint32_t *vertices, size_t count, float extension_fraction,
                        const uint16_t *joints, const float *weights);

#endif
