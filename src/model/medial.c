/* Local thickness of the skin along its inward normal (SPEC A10: "far"
 * measured against the body's own local thickness, not a fixed band).
 *
 * From each welded vertex a ray goes inward (against the outward normal) and
 * stops where it leaves the solid the vertex bounds. Only the vertex's own
 * shell counts: other surfaces it crosses (a joint ball inside an arm, the
 * next rigid piece overlapping this one, the body under a coat) are not its
 * part; re-entries into a concave shell are counted, so the thickness is
 * that of the vertex's own part. Its midpoint is the vertex's
 * medial point: on the axis of the tube the vertex belongs to. Body skin
 * wraps a bone (the bone is inside its cross-section); a tail's skin does
 * not, even where the tail lies beside a thigh, closer to the thigh's bone
 * than any fixed fraction of H.
 *
 * Triangles go into a uniform grid (open-addressing hash of cell keys over
 * an entry list grouped by cell); rays walk it cell by cell (3D DDA), O(V + T) to build,
 * each ray bounded by its own length. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GNUC__) && defined(__SSE__)
#include <xmmintrin.h> /* _mm_movemask_ps: the ray tests' lane mask */
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TB__HAVE_AVX 1 /* the ray tests compiled for AVX too, chosen at run time */
#if defined(__SSE__) && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define TB__HAVE_AVX2 1 /* and for AVX2, eight lanes at a time (tb__ray_tri8) */
#endif
#endif
#endif

#include "model/mesh_internal.h"
#include "core/base.h"

typedef struct tb__run {
    uint32_t shell; /* its triangles' shell (the ray tests filter on it without reading them) */
    uint32_t begin; /* its first entry */
} tb__run;

typedef struct tb__tgrid {
    float lo[3], cell, inv;
    float scale;        /* four mean edges (clamped): the rays' tolerance is 1e-4 of it */
    int dim[3];
    uint64_t *keys;     /* hash slots: cell key + 1, 0 = empty */
    uint32_t *start;    /* per slot: first run (during the build: first entry) */
    uint32_t *count;    /* per slot: runs (during the build: entries) */
    size_t slots;       /* power of two */
    uint32_t *tris;     /* triangle ids grouped by cell */
    tb__run *runs;      /* per cell (in slot order), its entries' runs of one shell, then one
                         * more whose begin is the entries' end: run r's entries are [runs[r].begin,
                         * runs[r + 1].begin). A ray skips a run whose shell does not count, the
                         * runs read in order (a run's place does not wait on the one before's
                         * length, as an entry's run length did) */
    size_t nshell;      /* shells (roots) that have triangles */
    uint32_t *roots;    /* their roots, ascending */
    int (*sbox)[6];     /* per shell: the cells its triangles are entered in, lo xyz then hi xyz */
    int avx;            /* the CPU runs AVX (1: tb__cell_hits_avx) or AVX2 too (2: tb__cell_hits_avx2) */
    float *rec;         /* per triangle, TB__REC floats: corner a, e1 = b - a, e2 = c - a (the
                         * rays' edges, the same float differences), then its corners' ids as
                         * bits: the ray tests load four triangles' records and transpose them
                         * instead of gathering 36 coordinates through 12 corner indices.
                         * NULL above TB__REC_BYTES (the corners are gathered then) */
} tb__tgrid;

/* Floats per triangle record: three rows of four. The records take at most
 * TB__REC_BYTES (349,525 triangles): on the Wolf (5,028 triangles, 241 KB)
 * they cut the rays' time by a sixth; on 1M vertices (2M triangles) they
 * would add 95 MB to the peak for no measurable time. */
enum { TB__REC = 12 };
#define TB__REC_BYTES (16u << 20)

#define TB__GRID_MAX 1024 /* cells per axis: a cell key fits 30 bits */
#define TB__GRID_ENTRIES 64 /* cells a triangle is entered in, on average, at most */
#define TB__CELL_TRIS 64.0 /* triangles' area a cell's face may hold (tb__tgrid_build) */

static uint64_t tb__ckey(int x, int y, int z)
{
    return (uint64_t)(uint32_t)x | ((uint64_t)(uint32_t)y << 10) | ((uint64_t)(uint32_t)z << 20);
}

static size_t tb__hash(uint64_t k, size_t mask)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & mask;
}

/* The slot of cell key `key` in an open-addressing table of key + 1 (0 =
 * empty): where it is, or the empty slot it would take. */
static size_t tb__table_slot(const uint64_t *keys, size_t mask, uint64_t key)
{
    size_t h = tb__hash(key, mask);
    while (keys[h] && keys[h] != key + 1)
        h = (h + 1) & mask;
    return h;
}

/* The slots of the cell keys met last (direct mapped, 64 lines): a mesh's
 * neighbouring triangles, next to each other in its list, share cells, so
 * most of the grid's entries find their slot here instead of through the
 * table (the same slot: only a hit is taken from it). */
enum { TB__MEMO = 64 };
typedef struct tb__slot_memo {
    uint64_t key[TB__MEMO]; /* cell key + 1, 0: none */
    size_t slot[TB__MEMO];
} tb__slot_memo;

static size_t tb__memo_slot(tb__slot_memo *mm, const uint64_t *keys, size_t mask, uint64_t key)
{
    size_t i = (size_t)(key ^ key >> 10 ^ key >> 20) & (TB__MEMO - 1);
    if (mm->key[i] == key + 1)
        return mm->slot[i];
    size_t h = tb__table_slot(keys, mask, key);
    mm->key[i] = key + 1;
    mm->slot[i] = h;
    return h;
}

/* Doubles a table of cell keys and counts (tb__tgrid_count). */
static int tb__table_grow(uint64_t **keys, uint32_t **cnt, size_t *slots)
{
    size_t n = *slots * 2;
    uint64_t *k = calloc(n, sizeof *k);
    uint32_t *c = calloc(n, sizeof *c);
    if (!k || !c) {
        free(k), free(c);
        return 0;
    }
    for (size_t h = 0; h < *slots; h++)
        if ((*keys)[h]) {
            size_t s = tb__table_slot(k, n - 1, (*keys)[h] - 1);
            k[s] = (*keys)[h];
            c[s] = (*cnt)[h];
        }
    free(*keys), free(*cnt);
    *keys = k, *cnt = c, *slots = n;
    return 1;
}

static void tb__tgrid_free(tb__tgrid *g)
{
    free(g->keys);
    free(g->start);
    free(g->count);
    free(g->tris);
    free(g->runs);
    free(g->roots);
    free(g->sbox);
    free(g->rec);
    memset(g, 0, sizeof *g);
}

/* floor(x) clamped to [0, dim), without a call into libm (six per
 * triangle, twice, in the grid's build): the cast truncates, which is floor
 * for the x >= 0 left. As (int)floorf(x) clamped did on x86-64, NaN and x
 * past the int range (the cast's overflow, INT_MIN) give 0. */
static int tb__cell_clamp(float x, int dim)
{
    if (!(x >= 0) || !(x < 2147483648.0f))
        return 0;
    return x >= (float)dim ? dim - 1 : (int)x;
}

/* fminf without the call: a NaN argument gives the other, as fminf does.
 * Without a branch (both tests, then a select of the bits): the walk's
 * crossings take turns at being least, which no predictor learns. */
static float tb__minf(float a, float b)
{
    uint32_t ua, ub, m = 0u - (uint32_t)((b < a) | (a != a));
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    ua = (ub & m) | (ua & ~m);
    memcpy(&a, &ua, sizeof a);
    return a;
}

/* The cells [c0, c1] the bounding box of triangle tv covers (the corners
 * read once, not once per axis: twice per triangle in the grid's build). */
static void tb__tri_cells(const tb__tgrid *g, const float *pos, const uint32_t *tv, int c0[3], int c1[3])
{
    const float *p = pos + (size_t)tv[0] * 3, *q = pos + (size_t)tv[1] * 3, *r = pos + (size_t)tv[2] * 3;
    for (int a = 0; a < 3; a++) {
        float mn = p[a] < INFINITY ? p[a] : INFINITY, mx = p[a] > -INFINITY ? p[a] : -INFINITY;
        mn = q[a] < mn ? q[a] : mn, mx = q[a] > mx ? q[a] : mx;
        mn = r[a] < mn ? r[a] : mn, mx = r[a] > mx ? r[a] : mx;
        c0[a] = tb__cell_clamp((mn - g->lo[a]) * g->inv, g->dim[a]);
        c1[a] = tb__cell_clamp((mx - g->lo[a]) * g->inv, g->dim[a]);
    }
}

/* The grid's cell size and the dimensions it gives the box (ext: its
 * extent per axis, in double). */
static void tb__tgrid_set_cell(tb__tgrid *g, float cell, const double ext[3])
{
    g->cell = cell;
    g->inv = 1.0f / cell;
    for (int a = 0; a < 3; a++) {
        double d = ceil(ext[a] * g->inv) + 1;
        g->dim[a] = d > TB__GRID_MAX ? TB__GRID_MAX : (int)d;
    }
}

/* A triangle's cells [c0, c1] as kept in tbox (two 30-bit keys). */
static uint64_t tb__tbox_of(const int c0[3], const int c1[3])
{
    return tb__ckey(c0[0], c0[1], c0[2]) | tb__ckey(c1[0], c1[1], c1[2]) << 30;
}

static void tb__tbox_cells(uint64_t b, int c0[3], int c1[3])
{
    for (int a = 0; a < 3; a++) {
        c0[a] = (int)(b >> (10 * a) & 0x3ff);
        c1[a] = (int)(b >> (30 + 10 * a) & 0x3ff);
    }
}

/* Stage 1 of tb__tgrid_build: the box, the cell size and the grid's
 * dimensions from the mesh's mean edge and triangle area; tbox[t] gets
 * each triangle's box of cells at that size (the count of entries needed
 * it: computed once, not again in the count). Returns 0 when the last
 * size tried was coarsened after its count (tbox then is stale). */
static int tb__tgrid_size(tb__tgrid *g, const float *pos, size_t nw, const uint32_t *tri, size_t nt,
                          uint64_t *tbox)
{
    float hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int a = 0; a < 3; a++)
        g->lo[a] = INFINITY;
    for (size_t v = 0; v < nw; v++)
        for (int a = 0; a < 3; a++) {
            float x = pos[v * 3 + (size_t)a];
            g->lo[a] = x < g->lo[a] ? x : g->lo[a];
            hi[a] = x > hi[a] ? x : hi[a];
        }
    double edge = 0, area = 0;
    for (size_t t = 0; t < nt; t++) {
        const float *a = pos + (size_t)tri[t * 3] * 3, *b = pos + (size_t)tri[t * 3 + 1] * 3,
                    *c = pos + (size_t)tri[t * 3 + 2] * 3;
        edge += sqrt((double)(a[0] - b[0]) * (a[0] - b[0]) + (double)(a[1] - b[1]) * (a[1] - b[1]) +
                     (double)(a[2] - b[2]) * (a[2] - b[2]));
        double e1[3] = {(double)b[0] - a[0], (double)b[1] - a[1], (double)b[2] - a[2]},
               e2[3] = {(double)c[0] - a[0], (double)c[1] - a[1], (double)c[2] - a[2]};
        double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        area += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    }
    /* in double: a box near the float range (±2e38) has no float diagonal */
    double ext[3] = {(double)hi[0] - g->lo[0], (double)hi[1] - g->lo[1], (double)hi[2] - g->lo[2]};
    double diag_d = sqrt(ext[0] * ext[0] + ext[1] * ext[1] + ext[2] * ext[2]);
    float diag = diag_d < FLT_MAX ? (float)diag_d : FLT_MAX;
    if (!(diag > 0))
        diag = 1;
    float cell = nt ? (float)(4.0 * edge / (double)nt) : diag;
    cell = cell < diag / 1000.0f ? diag / 1000.0f : cell > diag / 8.0f ? diag / 8.0f : cell;
    for (int a = 0; a < 3; a++) /* at most TB__GRID_MAX cells along any axis */
        if ((hi[a] - g->lo[a]) / cell > (float)(TB__GRID_MAX - 2))
            cell = (hi[a] - g->lo[a]) / (float)(TB__GRID_MAX - 2);
    /* the scale the rays' tolerance comes from (tb__medial_create) */
    g->scale = cell;
    /* a ray tests the triangles of every cell it crosses: a cell no wider
     * than holds about TB__CELL_TRIS triangles' mean area (four mean edges
     * of long thin triangles, bench_detect's finely ringed tubes at 100k
     * vertices, held ~200 entries a cell). Each hit counts in the one cell
     * whose span along the ray holds it, so the cell size changes what a
     * ray finds only at cells' edges, in the rounding of the walk's spans
     * against a triangle's cells: 16 triangles' area (a third fewer
     * ray instructions at 1M vertices) changed the decisions on ten rigid-piece
     * Robot fixtures, so the size is part of the behaviour. */
    float fill_cell = nt ? (float)sqrt(TB__CELL_TRIS * area / (double)nt) : cell;
    if (fill_cell < cell) {
        cell = fill_cell > cell * 0.25f ? fill_cell : cell * 0.25f;
        for (int a = 0; a < 3; a++)
            if ((hi[a] - g->lo[a]) / cell > (float)(TB__GRID_MAX - 2))
                cell = (hi[a] - g->lo[a]) / (float)(TB__GRID_MAX - 2);
    }
    for (int a = 0; a < 3; a++) /* the same limit, in double where the float extent overflows */
        if (ext[a] / cell > TB__GRID_MAX - 2)
            cell = (float)(ext[a] / (TB__GRID_MAX - 2));
    tb__tgrid_set_cell(g, cell, ext);
    /* a triangle is entered in every cell of its box: a few triangles far
     * larger than the rest would ask for up to 2^30 cells each, so the
     * grid is made coarser until the entries are at most TB__GRID_ENTRIES
     * a triangle (never on a mesh of like-sized triangles: ≈ 1–8 each) */
    double budget = TB__GRID_ENTRIES * (double)nt + 1e6;
    for (int k = 0; k < 64; k++) {
        double entries = 0;
        int c0[3], c1[3];
        for (size_t t = 0; t < nt && entries <= budget; t++) {
            tb__tri_cells(g, pos, tri + t * 3, c0, c1);
            tbox[t] = tb__tbox_of(c0, c1);
            entries += (double)(c1[0] - c0[0] + 1) * (c1[1] - c0[1] + 1) * (c1[2] - c0[2] + 1);
        }
        if (entries <= budget)
            return 1;
        tb__tgrid_set_cell(g, g->cell * 2, ext);
    }
    return 0;
}

/* Stage 2: the shells that have triangles (roots ascending) and per shell
 * an empty box of cells; slot[root] = the shell's index, UINT32_MAX for a
 * vertex that is no such root. A ray that has left a shell's box (its cells
 * only ever move one way per axis) meets none of its triangles again. */
static int tb__tgrid_shells(tb__tgrid *g, size_t nw, const uint32_t *tri, size_t nt, const uint32_t *shell,
                            uint32_t *slot)
{
    for (size_t v = 0; v < nw; v++)
        slot[v] = UINT32_MAX;
    for (size_t t = 0; t < nt; t++)
        slot[shell[tri[t * 3]]] = 0;
    for (size_t v = 0; v < nw; v++)
        if (slot[v] == 0)
            slot[v] = (uint32_t)g->nshell++;
    g->roots = malloc((g->nshell ? g->nshell : 1) * sizeof *g->roots);
    g->sbox = malloc((g->nshell ? g->nshell : 1) * sizeof *g->sbox);
    if (!g->roots || !g->sbox)
        return 0;
    for (size_t v = 0; v < nw; v++)
        if (slot[v] != UINT32_MAX)
            g->roots[slot[v]] = (uint32_t)v;
    for (size_t i = 0; i < g->nshell; i++)
        for (int a = 0; a < 3; a++) {
            g->sbox[i][a] = INT32_MAX;
            g->sbox[i][3 + a] = INT32_MIN;
        }
    return 1;
}

/* Stage 3: the cells' table. Each triangle is entered in the cells of its
 * box: counted per cell (keys + 1 in g->keys, counts in g->count, g->slots a
 * power of two at most half full), its shell's box grown to hold them; its
 * box of cells is kept in tbox[t] for the fill (two 30-bit keys: the box was
 * computed twice, a third of the build's instructions at 1M vertices),
 * computed here only where the size stage's is stale (boxed = 0); the
 * entries in *np. 0 on OOM. */
static int tb__tgrid_count(tb__tgrid *g, const float *pos, const uint32_t *tri, size_t nt, const uint32_t *shell,
                           const uint32_t *slot, uint64_t *tbox, int boxed, size_t *np)
{
    size_t cells = 0;
    tb__slot_memo mm;
    memset(&mm, 0, sizeof mm);
    g->slots = 1024;
    g->keys = calloc(g->slots, sizeof *g->keys);
    g->count = calloc(g->slots, sizeof *g->count);
    if (!g->keys || !g->count)
        return 0;
    *np = 0;
    for (size_t t = 0; t < nt; t++) {
        int c0[3], c1[3];
        if (boxed) {
            tb__tbox_cells(tbox[t], c0, c1);
        } else {
            tb__tri_cells(g, pos, tri + t * 3, c0, c1);
            tbox[t] = tb__tbox_of(c0, c1);
        }
        int *b = g->sbox[slot[shell[tri[t * 3]]]];
        for (int a = 0; a < 3; a++) {
            b[a] = c0[a] < b[a] ? c0[a] : b[a];
            b[3 + a] = c1[a] > b[3 + a] ? c1[a] : b[3 + a];
        }
        for (int x = c0[0]; x <= c1[0]; x++)
            for (int y = c0[1]; y <= c1[1]; y++)
                for (int z = c0[2]; z <= c1[2]; z++) {
                    if (2 * (cells + 1) > g->slots) {
                        if (!tb__table_grow(&g->keys, &g->count, &g->slots))
                            return 0;
                        memset(&mm, 0, sizeof mm); /* the slots moved */
                    }
                    size_t h = tb__memo_slot(&mm, g->keys, g->slots - 1, tb__ckey(x, y, z));
                    cells += !g->keys[h];
                    g->keys[h] = tb__ckey(x, y, z) + 1;
                    g->count[h]++;
                    (*np)++;
                }
    }
    return 1;
}

/* Stage 4: the entries, np of them, grouped by cell (cells in the table's
 * slot order), triangles ascending within a cell, and the cells' runs of one
 * shell (g->start and g->count then index the runs). 0 on OOM. */
static int tb__tgrid_fill(tb__tgrid *g, const uint64_t *tbox, const uint32_t *tri, size_t nt, const uint32_t *shell,
                          size_t np)
{
    uint32_t *tsh = malloc((np ? np : 1) * sizeof *tsh); /* per entry: its shell */
    g->start = malloc(g->slots * sizeof *g->start);
    g->tris = malloc((np ? np : 1) * sizeof *g->tris);
    if (!tsh || !g->start || !g->tris) {
        free(tsh);
        return 0;
    }
    uint32_t at = 0;
    for (size_t h = 0; h < g->slots; h++) {
        g->start[h] = at;
        at += g->count[h];
        g->count[h] = 0; /* the fill's cursor: back to the count at its end */
    }
    size_t mask = g->slots - 1;
    tb__slot_memo mm;
    memset(&mm, 0, sizeof mm);
    for (size_t t = 0; t < nt; t++) {
        int c0[3], c1[3];
        tb__tbox_cells(tbox[t], c0, c1);
        uint32_t sh = shell[tri[t * 3]];
        for (int x = c0[0]; x <= c1[0]; x++)
            for (int y = c0[1]; y <= c1[1]; y++)
                for (int z = c0[2]; z <= c1[2]; z++) {
                    size_t h = tb__memo_slot(&mm, g->keys, mask, tb__ckey(x, y, z));
                    uint32_t e = g->start[h] + g->count[h]++;
                    g->tris[e] = (uint32_t)t;
                    tsh[e] = sh;
                }
    }
    size_t nr = 0; /* the runs: a cell's first entry, or a change of shell, begins one */
    for (size_t h = 0; h < g->slots; h++)
        for (size_t e = g->start[h]; e < (size_t)g->start[h] + g->count[h]; e++)
            nr += e == g->start[h] || tsh[e] != tsh[e - 1];
    g->runs = malloc((nr + 1) * sizeof *g->runs);
    if (!g->runs) {
        free(tsh);
        return 0;
    }
    nr = 0;
    for (size_t h = 0; h < g->slots; h++) {
        uint32_t first = (uint32_t)nr;
        for (size_t e = g->start[h]; e < (size_t)g->start[h] + g->count[h]; e++)
            if (e == g->start[h] || tsh[e] != tsh[e - 1])
                g->runs[nr++] = (tb__run){tsh[e], (uint32_t)e};
        g->start[h] = first;
        g->count[h] = (uint32_t)nr - first;
    }
    g->runs[nr] = (tb__run){0, (uint32_t)np};
    free(tsh);
    return 1;
}

/* Each triangle's record (tb__tgrid.rec, .avx: into *rec_out, *avx_out,
 * which the grid takes in tb__medial_records_join), aligned for vector
 * loads; none above TB__REC_BYTES, nor for the scalar test (it gathers its
 * corners). Reads only the mesh: it may run beside the grid's build. 0 on
 * OOM. */
static int tb__tgrid_records(float **rec_out, int *avx_out, const float *pos, const uint32_t *tri, size_t nt)
{
    *rec_out = NULL;
    *avx_out = 0;
#if !defined(__GNUC__)
    return 1;
#endif
    if (nt > TB__REC_BYTES / (TB__REC * sizeof **rec_out))
        return 1;
#ifdef TB__HAVE_AVX
    *avx_out = __builtin_cpu_supports("avx") ? 1 : 0;
#endif
#ifdef TB__HAVE_AVX2
    *avx_out = *avx_out && __builtin_cpu_supports("avx2") ? 2 : *avx_out;
#endif
    float *rec = *rec_out = aligned_alloc(16, (nt ? nt : 1) * TB__REC * sizeof *rec);
    if (!rec)
        return 0;
    for (size_t t = 0; t < nt; t++) {
        const uint32_t *tv = tri + t * 3;
        const float *a = pos + (size_t)tv[0] * 3, *b = pos + (size_t)tv[1] * 3, *c = pos + (size_t)tv[2] * 3;
        float *r = rec + t * TB__REC;
        r[0] = a[0], r[1] = a[1], r[2] = a[2];
        r[3] = b[0] - a[0], r[4] = b[1] - a[1], r[5] = b[2] - a[2];
        r[6] = c[0] - a[0], r[7] = c[1] - a[1], r[8] = c[2] - a[2];
        memcpy(r + 9, tv, 3 * sizeof *tv);
    }
    return 1;
}

/* The triangle grid: size, shells, cell counts, entries (the stages above;
 * the records apart, tb__medial_records). O(V + T + entries), no sort: a
 * cell's entries are found through the table. */
static tb_result tb__tgrid_build(tb__tgrid *g, const float *pos, size_t nw, const uint32_t *tri, size_t nt,
                                 const uint32_t *shell, tb_error *err)
{
    memset(g, 0, sizeof *g);
    uint32_t *slot = malloc((nw ? nw : 1) * sizeof *slot);
    uint64_t *tbox = malloc((nt ? nt : 1) * sizeof *tbox); /* per triangle: its cells, sized, counted, filled */
    if (!tbox) {
        free(slot);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    int boxed = tb__tgrid_size(g, pos, nw, tri, nt, tbox);
    size_t np = 0;
    int ok = slot && tb__tgrid_shells(g, nw, tri, nt, shell, slot) &&
             tb__tgrid_count(g, pos, tri, nt, shell, slot, tbox, boxed, &np);
    free(slot);
    if (ok && np >= UINT32_MAX) {
        free(tbox);
        tb__tgrid_free(g);
        return tb__fail(err, TB_ERR_INVALID, NULL, "mesh too large for the thickness grid");
    }
    ok = ok && tb__tgrid_fill(g, tbox, tri, nt, shell, np);
    free(tbox);
    if (!ok) {
        tb__tgrid_free(g);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    return TB_OK;
}

static int tb__tgrid_cell(const tb__tgrid *g, int x, int y, int z, uint32_t *start)
{
    uint64_t k = tb__ckey(x, y, z) + 1;
    size_t mask = g->slots - 1;
    for (size_t h = tb__hash(k - 1, mask);; h = (h + 1) & mask) {
        if (!g->keys[h])
            return 0;
        if (g->keys[h] == k) {
            *start = g->start[h];
            return (int)g->count[h];
        }
    }
}

typedef struct tb__hit {
    float t;
    int exit; /* leaves a solid (the triangle faces along the ray) */
} tb__hit;

/* One ray's walk (tb__ray_walk): from o along unit d up to tmax. others =
 * 0: only triangles of shell `own` count, those touching vertex `self` are
 * skipped; others = 1: only the other shells (those with count_shell[root]
 * set, all when NULL). Hits nearer than tmin are none. */
typedef struct tb__ray {
    const tb__tgrid *g;
    const float *pos;
    const uint32_t *tri;
    const uint8_t *tflip;
    const float *o, *d;
    float tmax, tmin;
    uint32_t self, own;
    int others;
    const uint8_t *count_shell;
} tb__ray;

enum { TB__LANES = 4, TB__LANES_MAX = 8 }; /* triangles tested side by side (8: tb__ray_tri8) */

#if defined(__GNUC__)
typedef float tb__v4f __attribute__((vector_size(16)));
typedef int tb__v4i __attribute__((vector_size(16)));

/* Floats [j, j + 4) of the records r0..r3, transposed into x, y, z, w
 * (lane k: record rk's). */
#if defined(__SSE__)
#define TB__ROWS(r0, r1, r2, r3, j, x, y, z, w)                                                         \
    do {                                                                                               \
        __m128 a_ = _mm_load_ps((r0) + (j)), b_ = _mm_load_ps((r1) + (j)), c_ = _mm_load_ps((r2) + (j)), \
               d_ = _mm_load_ps((r3) + (j));                                                           \
        _MM_TRANSPOSE4_PS(a_, b_, c_, d_);                                                             \
        x = (tb__v4f)a_, y = (tb__v4f)b_, z = (tb__v4f)c_, w = (tb__v4f)d_;                            \
    } while (0)
#else
#define TB__ROWS(r0, r1, r2, r3, j, x, y, z, w)                                           \
    do {                                                                                 \
        x = (tb__v4f){(r0)[(j)], (r1)[(j)], (r2)[(j)], (r3)[(j)]};                       \
        y = (tb__v4f){(r0)[(j) + 1], (r1)[(j) + 1], (r2)[(j) + 1], (r3)[(j) + 1]};       \
        z = (tb__v4f){(r0)[(j) + 2], (r1)[(j) + 2], (r2)[(j) + 2], (r3)[(j) + 2]};       \
        w = (tb__v4f){(r0)[(j) + 3], (r1)[(j) + 3], (r2)[(j) + 3], (r3)[(j) + 3]};       \
    } while (0)
#endif
/* Möller–Trumbore over vector lanes, written once for the four lanes
 * (tb__tri4_core) and the eight (tb__ray_tri8), so that both do the same
 * operations in the same order: VF and VI the float and int vectors, B a
 * brace list of one value in every lane. From the corners' rows ax .. e2z,
 * the lanes on the ray's own vertex (mine), R, tcell and tout in scope, it
 * declares det, t (INFINITY on a miss) and in (the lanes hit in the cell). */
#define TB__B4(x) {(x), (x), (x), (x)}
#define TB__MT_LANES(VF, VI, B)                                                                             \
    const float *o = R->o, *d = R->d;                                                                       \
    VF dx = (VF)B(d[0]), dy = (VF)B(d[1]), dz = (VF)B(d[2]);                                               \
    VF pvx = dy * e2z - dz * e2y, pvy = dz * e2x - dx * e2z, pvz = dx * e2y - dy * e2x;                     \
    VF det = e1x * pvx + e1y * pvy + e1z * pvz;                                                             \
    const VF one = (VF)B(1.0f), zero = (VF)B(0.0f), eps = (VF)B(1e-20f);                                   \
    const VI absmask = (VI)B(0x7fffffff);                                                                   \
    VF inv = one / det;                                                                                     \
    VF tvx = (VF)B(o[0]) - ax, tvy = (VF)B(o[1]) - ay, tvz = (VF)B(o[2]) - az;                             \
    VF u = (tvx * pvx + tvy * pvy + tvz * pvz) * inv;                                                       \
    VF qx = tvy * e1z - tvz * e1y, qy = tvz * e1x - tvx * e1z, qz = tvx * e1y - tvy * e1x;                  \
    VF v = (dx * qx + dy * qy + dz * qz) * inv;                                                             \
    VF t = (e2x * qx + e2y * qy + e2z * qz) * inv;                                                          \
    VI miss = ((VF)((VI)det & absmask) < eps) | (u < zero) | (u > one) | (v < zero) | (u + v > one) | mine; \
    const VF inf = (VF)B(INFINITY);                                                                         \
    t = (VF)(((VI)t & ~miss) | ((VI)inf & miss));                                                           \
    VI in = (t > (VF)B(R->tmin)) & (t >= (VF)B(tcell)) & (t < (VF)B(tout)) & (t <= (VF)B(R->tmax))


/* The lanes' test (tb__ray_tri4): corner a, edges e1 = b - a, e2 = c - a of
 * four triangles, lane by lane; `mine`: the lanes to take as misses. th[k]
 * gets lane k's t or INFINITY, det[k] its determinant (the exit's sign);
 * returns the lanes (bit k) whose t lies in (tmin, tmax] and in the cell's
 * span [tcell, tout). The same operations as the scalar test, lane by lane,
 * without its early returns: IEEE single arithmetic in vector registers
 * rounds as it does in scalar ones (no FMA contraction without an FMA
 * target), so each t is the scalar t, bit for bit, and a lane the scalar
 * test gives up on is INFINITY. */
static inline __attribute__((always_inline)) int
tb__tri4_core(const tb__ray *R, tb__v4f ax, tb__v4f ay, tb__v4f az, tb__v4f e1x, tb__v4f e1y, tb__v4f e1z,
              tb__v4f e2x, tb__v4f e2y, tb__v4f e2z, tb__v4i mine, float tcell, float tout, float th[TB__LANES],
              float det4[TB__LANES])
{
    TB__MT_LANES(tb__v4f, tb__v4i, TB__B4);
    memcpy(th, &t, sizeof t);
    memcpy(det4, &det, sizeof det);
#if defined(__SSE__)
    return _mm_movemask_ps((__m128)in); /* the lanes' sign bits, one instruction */
#else
    return (in[0] & 1) | (in[1] & 2) | (in[2] & 4) | (in[3] & 8);
#endif
}

/* tb__ray_tri on the triangles t4[0..4) at once (tb__tri4_core). From the
 * records where the grid has them: a triangle touching the ray's own
 * vertex (its id in the record) is a miss in the lanes; the counting walk's
 * self is UINT32_MAX, no vertex. Without records (rec = 0) the corners are
 * gathered through their indices and tb__cell_hits has left such triangles
 * out. */
static inline __attribute__((always_inline)) int tb__ray_tri4(const tb__ray *R, const uint32_t t4[TB__LANES],
                                                              float tcell, float tout, float th[TB__LANES],
                                                              float det4[TB__LANES], const int rec)
{
    tb__v4f ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z;
    if (rec) { /* the records' rows of four floats, transposed */
        const float *r0 = R->g->rec + (size_t)t4[0] * TB__REC, *r1 = R->g->rec + (size_t)t4[1] * TB__REC,
                    *r2 = R->g->rec + (size_t)t4[2] * TB__REC, *r3 = R->g->rec + (size_t)t4[3] * TB__REC;
        tb__v4f i0, i1, i2;
        TB__ROWS(r0, r1, r2, r3, 0, ax, ay, az, e1x);
        TB__ROWS(r0, r1, r2, r3, 4, e1y, e1z, e2x, e2y);
        TB__ROWS(r0, r1, r2, r3, 8, e2z, i0, i1, i2);
        tb__v4i self = {(int)R->self, (int)R->self, (int)R->self, (int)R->self};
        tb__v4i mine = ((tb__v4i)i0 == self) | ((tb__v4i)i1 == self) | ((tb__v4i)i2 == self);
        return tb__tri4_core(R, ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, mine, tcell, tout, th, det4);
    }
    const float *pos = R->pos;
    const uint32_t *v0 = R->tri + (size_t)t4[0] * 3, *v1 = R->tri + (size_t)t4[1] * 3,
                   *v2 = R->tri + (size_t)t4[2] * 3, *v3 = R->tri + (size_t)t4[3] * 3;
    /* corner c's axis a of the four triangles */
#define TB__GATHER(c, a)                                                                                  \
    ((tb__v4f){pos[(size_t)v0[c] * 3 + (a)], pos[(size_t)v1[c] * 3 + (a)], pos[(size_t)v2[c] * 3 + (a)], \
               pos[(size_t)v3[c] * 3 + (a)]})
    ax = TB__GATHER(0, 0), ay = TB__GATHER(0, 1), az = TB__GATHER(0, 2);
    e1x = TB__GATHER(1, 0) - ax, e1y = TB__GATHER(1, 1) - ay, e1z = TB__GATHER(1, 2) - az;
    e2x = TB__GATHER(2, 0) - ax, e2y = TB__GATHER(2, 1) - ay, e2z = TB__GATHER(2, 2) - az;
#undef TB__GATHER
    const tb__v4i none = {0, 0, 0, 0};
    return tb__tri4_core(R, ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, none, tcell, tout, th, det4);
}

#ifdef TB__HAVE_AVX2
typedef float tb__v8f __attribute__((vector_size(32)));
typedef int tb__v8i __attribute__((vector_size(32)));
#define TB__B8(x) {(x), (x), (x), (x), (x), (x), (x), (x)}

/* Four floats from r (a record's row). */
static inline __attribute__((always_inline)) tb__v4f tb__row4(const float *r)
{
    tb__v4f q;
    memcpy(&q, r, sizeof q);
    return q;
}

/* Floats [j, j + 4) of the records r[0..8), transposed into x, y, z, w
 * (lane k: record r[k]'s): records k and k + 4 side by side in the two
 * halves, each half transposed as TB__ROWS does (in-half unpacks). */
static inline __attribute__((always_inline)) void tb__rows8(const float *const r[8], int j, tb__v8f *x, tb__v8f *y,
                                                            tb__v8f *z, tb__v8f *w)
{
    tb__v8f a = __builtin_shufflevector(tb__row4(r[0] + j), tb__row4(r[4] + j), 0, 1, 2, 3, 4, 5, 6, 7),
            b = __builtin_shufflevector(tb__row4(r[1] + j), tb__row4(r[5] + j), 0, 1, 2, 3, 4, 5, 6, 7),
            c = __builtin_shufflevector(tb__row4(r[2] + j), tb__row4(r[6] + j), 0, 1, 2, 3, 4, 5, 6, 7),
            d = __builtin_shufflevector(tb__row4(r[3] + j), tb__row4(r[7] + j), 0, 1, 2, 3, 4, 5, 6, 7);
    tb__v8f t0 = __builtin_shufflevector(a, b, 0, 8, 1, 9, 4, 12, 5, 13),
            t1 = __builtin_shufflevector(a, b, 2, 10, 3, 11, 6, 14, 7, 15),
            t2 = __builtin_shufflevector(c, d, 0, 8, 1, 9, 4, 12, 5, 13),
            t3 = __builtin_shufflevector(c, d, 2, 10, 3, 11, 6, 14, 7, 15);
    *x = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
    *y = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    *z = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
    *w = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15);
}

/* tb__ray_tri4 from the records on eight triangles t8[0..8) at once (in
 * tb__cell_hits_avx2 only: 256-bit vectors, AVX2 for the integer lanes of
 * the self test). Lane for lane the operations of tb__tri4_core, in its
 * order, each product and sum rounded apart (no FMA target: nothing is
 * contracted), so each lane's t, determinant and mask bit are the four
 * lanes' bit for bit; bit k of the mask is t8[k]'s (test_medial compares
 * the ways on random triangles). */
static inline __attribute__((always_inline)) int tb__ray_tri8(const tb__ray *R, const uint32_t t8[TB__LANES_MAX],
                                                              float tcell, float tout, float th[TB__LANES_MAX],
                                                              float det8[TB__LANES_MAX])
{
    const float *rec = R->g->rec;
    const float *const r[8] = {rec + (size_t)t8[0] * TB__REC, rec + (size_t)t8[1] * TB__REC,
                               rec + (size_t)t8[2] * TB__REC, rec + (size_t)t8[3] * TB__REC,
                               rec + (size_t)t8[4] * TB__REC, rec + (size_t)t8[5] * TB__REC,
                               rec + (size_t)t8[6] * TB__REC, rec + (size_t)t8[7] * TB__REC};
    tb__v8f ax, ay, az, e1x, e1y, e1z, e2x, e2y, e2z, i0, i1, i2;
    tb__rows8(r, 0, &ax, &ay, &az, &e1x);
    tb__rows8(r, 4, &e1y, &e1z, &e2x, &e2y);
    tb__rows8(r, 8, &e2z, &i0, &i1, &i2);
    const tb__v8i self = TB__B8((int)R->self);
    const tb__v8i mine = ((tb__v8i)i0 == self) | ((tb__v8i)i1 == self) | ((tb__v8i)i2 == self);
    TB__MT_LANES(tb__v8f, tb__v8i, TB__B8);
    memcpy(th, &t, sizeof t);
    memcpy(det8, &det, sizeof det);
    /* the lanes' sign bits, a half at a time (the 256-bit movemask would
     * need the AVX target here, in code also built without it) */
    tb__v4i lo = __builtin_shufflevector(in, in, 0, 1, 2, 3), hi = __builtin_shufflevector(in, in, 4, 5, 6, 7);
    return _mm_movemask_ps((__m128)lo) | _mm_movemask_ps((__m128)hi) << 4;
}
#undef TB__B8
#endif
#else
/* Möller–Trumbore, both sides (the reference the lanes above follow).
 * Returns t > 0 or INFINITY; *exit from the winding (after the shell's
 * flip). */
static float tb__ray_tri(const float o[3], const float d[3], const float *a, const float *b, const float *c,
                         int flip, int *exit)
{
    float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    float pv[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
    float det = e1[0] * pv[0] + e1[1] * pv[1] + e1[2] * pv[2];
    if (fabsf(det) < 1e-20f)
        return INFINITY;
    float inv = 1.0f / det;
    float tv[3] = {o[0] - a[0], o[1] - a[1], o[2] - a[2]};
    float u = (tv[0] * pv[0] + tv[1] * pv[1] + tv[2] * pv[2]) * inv;
    if (u < 0 || u > 1)
        return INFINITY;
    float qv[3] = {tv[1] * e1[2] - tv[2] * e1[1], tv[2] * e1[0] - tv[0] * e1[2], tv[0] * e1[1] - tv[1] * e1[0]};
    float v = (d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2]) * inv;
    if (v < 0 || u + v > 1)
        return INFINITY;
    float t = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) * inv;
    /* det = −d · (e1 × e2): positive when the face normal opposes the ray (an
     * entry), negative when it leaves through the face */
    *exit = flip ? det > 0 : det < 0;
    return t;
}

static int tb__ray_tri4(const tb__ray *R, const uint32_t t4[TB__LANES], float tcell, float tout,
                        float th[TB__LANES], float det4[TB__LANES], int rec)
{
    (void)rec; /* no records without the lanes */
    int in = 0;
    for (int k = 0; k < TB__LANES; k++) {
        const uint32_t *tv = R->tri + (size_t)t4[k] * 3;
        int ex = 0;
        th[k] = tb__ray_tri(R->o, R->d, R->pos + (size_t)tv[0] * 3, R->pos + (size_t)tv[1] * 3,
                            R->pos + (size_t)tv[2] * 3, 0, &ex);
        det4[k] = ex ? -1.0f : 1.0f; /* the sign is all the exit needs */
        in |= (th[k] > R->tmin && th[k] >= tcell && th[k] < tout && th[k] <= R->tmax) << k;
    }
    return in;
}
#endif

/* The first n of the triangles t4 tested (tb__ray_tri4, or with lanes = 8
 * tb__ray_tri8; the rest of the lanes copies of the first); each hit in the
 * cell's span [tcell, tout) and within (tmin, tmax] appended to hits, in
 * t4's order. Returns nh. */
static inline __attribute__((always_inline)) int tb__cell_test_in(const tb__ray *R, const uint32_t *t4, int n,
                                                                  float tcell, float tout, tb__hit *hits, int nh,
                                                                  int hcap, const int rec, const int lanes)
{
    float th[TB__LANES_MAX], det[TB__LANES_MAX];
    int in;
#ifdef TB__HAVE_AVX2
    if (lanes == 8)
        in = tb__ray_tri8(R, t4, tcell, tout, th, det);
    else
#endif
        in = tb__ray_tri4(R, t4, tcell, tout, th, det, rec);
    (void)lanes;
    /* a hit counts in the cell it lies in (a triangle spans cells) */
    in &= (1 << n) - 1;
    for (int k = 0; in; k++, in >>= 1)
        if ((in & 1) && nh < hcap) {
            hits[nh].t = th[k];
            /* det = −d · (e1 × e2): positive when the face normal opposes
             * the ray (an entry), negative when it leaves through the face */
            hits[nh++].exit = R->tflip[t4[k]] ? det[k] > 0 : det[k] < 0;
        }
    return nh;
}

/* tb__cell_test_in compiled once per way of loading the lanes (a branch per
 * call, not one inside the lanes' code) */
static int tb__cell_test_rec(const tb__ray *R, const uint32_t t4[TB__LANES], int n, float tcell, float tout,
                             tb__hit *hits, int nh, int hcap)
{
    return tb__cell_test_in(R, t4, n, tcell, tout, hits, nh, hcap, 1, TB__LANES);
}

static int tb__cell_test_gather(const tb__ray *R, const uint32_t t4[TB__LANES], int n, float tcell, float tout,
                                tb__hit *hits, int nh, int hcap)
{
    return tb__cell_test_in(R, t4, n, tcell, tout, hits, nh, hcap, 0, TB__LANES);
}

/* The ways of testing (tb__cell_test), chosen once per cell */
enum { TB__TEST_GATHER, TB__TEST_REC, TB__TEST_AVX, TB__TEST_AVX2 };

static inline __attribute__((always_inline)) int tb__cell_test(const tb__ray *R, const uint32_t *t4, int n,
                                                               float tcell, float tout, tb__hit *hits, int nh,
                                                               int hcap, int way)
{
    if (way == TB__TEST_AVX2) /* in tb__cell_hits_avx2: eight lanes inline, compiled for AVX2 */
        return tb__cell_test_in(R, t4, n, tcell, tout, hits, nh, hcap, 1, TB__LANES_MAX);
    if (way == TB__TEST_AVX) /* in tb__cell_hits_avx: the lanes' code inline, compiled for AVX */
        return tb__cell_test_in(R, t4, n, tcell, tout, hits, nh, hcap, 1, TB__LANES);
    return way == TB__TEST_REC ? tb__cell_test_rec(R, t4, n, tcell, tout, hits, nh, hcap)
                               : tb__cell_test_gather(R, t4, n, tcell, tout, hits, nh, hcap);
}

/* The hits in one cell's runs [s, s + n), the cell's span along the ray
 * [tcell, tout), sorted by t (stably: as glibc's merge sort was). A run's
 * shell is read first (without its triangles), then, without records, the
 * corners for the self test; the triangles left are tested TB__LANES at a
 * time (avx = 2: TB__LANES_MAX), in entry order: the hits, each lane's
 * own, come in the same order at either width. */
static inline __attribute__((always_inline)) int tb__cell_hits_in(const tb__ray *R, uint32_t s, int n, float tcell,
                                                                  float tout, tb__hit *hits, int hcap, const int avx)
{
    const tb__tgrid *g = R->g;
    const uint32_t *tris = g->tris, own = R->own;
    const tb__run *run = g->runs;
    const uint8_t *count = R->others ? R->count_shell : NULL;
    const int others = R->others, self_test = !others && !g->rec; /* the records' lanes test it */
    const int way = avx == 2 ? TB__TEST_AVX2 : avx ? TB__TEST_AVX : g->rec ? TB__TEST_REC : TB__TEST_GATHER;
    const int L = avx == 2 ? TB__LANES_MAX : TB__LANES;
    uint32_t t4[TB__LANES_MAX];
    int nc = 0, nh = 0;
    for (uint32_t r = s; r < s + (uint32_t)n; r++) { /* a run of one shell (within the cell) at a time */
        uint32_t ts = run[r].shell, at = run[r].begin, end = run[r + 1].begin;
        if ((ts == own) == others || (count && !count[ts]))
            continue;
        if (!nc && !self_test) /* whole fours (eights) straight from the entries, in their order */
            for (; at + (uint32_t)L <= end; at += (uint32_t)L)
                nh = tb__cell_test(R, tris + at, L, tcell, tout, hits, nh, hcap, way);
        for (; at < end; at++) {
            const uint32_t t = tris[at], *tv = R->tri + (size_t)t * 3;
            if (self_test && (tv[0] == R->self || tv[1] == R->self || tv[2] == R->self))
                continue; /* touches the ray's own vertex */
            t4[nc++] = t;
            if (nc == L) {
                nh = tb__cell_test(R, t4, nc, tcell, tout, hits, nh, hcap, way);
                nc = 0;
            }
        }
    }
    if (nc) { /* eight lanes: four do when four hold the rest */
        const int l = way == TB__TEST_AVX2 && nc <= TB__LANES ? TB__LANES : L;
        for (int k = nc; k < l; k++) /* the spare lanes test the first again */
            t4[k] = t4[0];
        nh = tb__cell_test(R, t4, nc, tcell, tout, hits, nh, hcap, l < L ? TB__TEST_AVX : way);
    }
    for (int i = 1; i < nh; i++) { /* a cell holds few hits */
        tb__hit x = hits[i];
        int j = i;
        for (; j > 0 && hits[j - 1].t > x.t; j--)
            hits[j] = hits[j - 1];
        hits[j] = x;
    }
    return nh;
}

static int tb__cell_hits(const tb__ray *R, uint32_t s, int n, float tcell, float tout, tb__hit *hits, int hcap)
{
    return tb__cell_hits_in(R, s, n, tcell, tout, hits, hcap, 0);
}

#ifdef TB__HAVE_AVX
/* The same cell compiled for AVX (the grid's avx: records, and a CPU that
 * has it), the lanes' test inline: the same operations on the same four
 * lanes (AVX has no FMA: nothing is contracted), in three-operand
 * instructions that need no register copies, and no call per four
 * triangles (each saved and restored the vector registers). */
__attribute__((target("avx"))) static int tb__cell_hits_avx(const tb__ray *R, uint32_t s, int n, float tcell,
                                                            float tout, tb__hit *hits, int hcap)
{
    return tb__cell_hits_in(R, s, n, tcell, tout, hits, hcap, 1);
}
#endif

#ifdef TB__HAVE_AVX2
/* The same cell eight triangles at a time (tb__ray_tri8; the grid's avx =
 * 2: records, and a CPU with AVX2), compiled for AVX2 (no FMA: nothing is
 * contracted). */
__attribute__((target("avx2"))) static int tb__cell_hits_avx2(const tb__ray *R, uint32_t s, int n, float tcell,
                                                              float tout, tb__hit *hits, int hcap)
{
    return tb__cell_hits_in(R, s, n, tcell, tout, hits, hcap, 2);
}
#endif

/* Whether a ray in cell c, stepping step[a] along axis a, has left the
 * cell box b (lo xyz, hi xyz) along a for good. */
static int tb__left_box(const int *b, const int c[3], const int step[3], int a)
{
    return step[a] > 0 ? c[a] > b[3 + a] : step[a] < 0 ? c[a] < b[a] : c[a] < b[a] || c[a] > b[3 + a];
}

/* The walk's start: the cell holding o, the step, the first crossing and
 * the crossings' spacing along each axis. */
static void tb__ray_start(const tb__tgrid *g, const float o[3], const float d[3], int c[3], int step[3],
                          float tnext[3], float tdelta[3])
{
    for (int a = 0; a < 3; a++) {
        float x = (o[a] - g->lo[a]) * g->inv;
        c[a] = tb__cell_clamp(x, g->dim[a]);
        if (d[a] > 0) {
            step[a] = 1;
            tnext[a] = ((float)(c[a] + 1) - x) * g->cell / d[a];
            tdelta[a] = g->cell / d[a];
        } else if (d[a] < 0) {
            step[a] = -1;
            tnext[a] = (x - (float)c[a]) * g->cell / -d[a];
            tdelta[a] = g->cell / -d[a];
        } else {
            step[a] = 0;
            tnext[a] = INFINITY;
            tdelta[a] = INFINITY;
        }
    }
}

/* Walks ray R cell by cell (3D DDA). others = 0: the distance where the ray
 * leaves the solid it starts in (depth 1) is returned, or INFINITY. others
 * = 1: the walk goes to the end, and *inside gets exits − entries: how many
 * of the counted shells enclose o. box (NULL: none): the cells holding
 * every triangle that can count; the walk skips cells outside it and stops
 * once it has left it, which changes nothing it finds (those cells hold no
 * triangle it would test). */
static float tb__ray_walk(const tb__ray *R, int *inside, const int *box, tb__hit *hits, int hcap)
{
    const tb__tgrid *g = R->g;
    int c[3], step[3];
    float tnext[3], tdelta[3];
    tb__ray_start(g, R->o, R->d, c, step, tnext, tdelta);
    for (int a = 0; box && a < 3; a++)
        if (tb__left_box(box, c, step, a))
            return INFINITY;
    int depth = 1;
    float tcell = 0;
    for (int guard = 0; guard < 100000; guard++) {
        float tout = tb__minf(tnext[0], tb__minf(tnext[1], tnext[2]));
        uint32_t s = 0;
        int n = 0;
        if (!box || (c[0] >= box[0] && c[0] <= box[3] && c[1] >= box[1] && c[1] <= box[4] && c[2] >= box[2] &&
                     c[2] <= box[5]))
            n = tb__tgrid_cell(g, c[0], c[1], c[2], &s);
#if defined(TB__HAVE_AVX2)
        int nh = !n ? 0
                 : g->avx == 2 ? tb__cell_hits_avx2(R, s, n, tcell, tout, hits, hcap)
                 : g->avx ? tb__cell_hits_avx(R, s, n, tcell, tout, hits, hcap)
                          : tb__cell_hits(R, s, n, tcell, tout, hits, hcap);
#elif defined(TB__HAVE_AVX)
        int nh = !n ? 0 : g->avx ? tb__cell_hits_avx(R, s, n, tcell, tout, hits, hcap)
                                 : tb__cell_hits(R, s, n, tcell, tout, hits, hcap);
#else
        int nh = n ? tb__cell_hits(R, s, n, tcell, tout, hits, hcap) : 0;
#endif
        for (int i = 0; i < nh; i++) {
            depth += hits[i].exit ? -1 : 1;
            if (depth == 0 && !R->others)
                return hits[i].t;
        }
        if (R->others)
            *inside = 1 - depth;
        if (tout > R->tmax)
            return INFINITY;
        /* the axis crossed first (x before y before z on a tie), without a branch */
        int first = (tnext[0] <= tnext[1]) & (tnext[0] <= tnext[2]), ax = (1 - first) * (2 - (tnext[1] <= tnext[2]));
        c[ax] += step[ax];
        if (c[ax] < 0 || c[ax] >= g->dim[ax] || (box && tb__left_box(box, c, step, ax)))
            return INFINITY;
        tcell = tout;
        tnext[ax] += tdelta[ax];
    }
    return INFINITY;
}

struct tb__medial {
    const float *pos;
    const uint32_t *tri, *shell;
    size_t nw, nt;
    double *vol;        /* per shell root: its signed volume (tb__medial_orient's scratch) */
    float *normal;      /* 3 per welded vertex, outward */
    uint8_t *tflip;     /* per triangle: its shell is wound inside out */
    tb__tgrid g;
    float *rec;         /* the records until tb__medial_records_join gives them to g */
    int avx;
    float tmin;
    const uint8_t *count_for; /* the count_shell the boxes below were made for (tb__medial_count_shells) */
    int (*pre)[6], (*suf)[6]; /* nshell + 1 each: the box of the counted shells before / from a slot */
};

void tb__medial_free(tb__medial *md)
{
    if (!md)
        return;
    tb__tgrid_free(&md->g);
    free(md->rec);
    free(md->pre);
    free(md->suf);
    free(md->normal);
    free(md->tflip);
    free(md->vol);
    free(md);
}

void tb__medial_drop_grid(tb__medial *md)
{
    tb__tgrid_free(&md->g);
    free(md->rec);
    md->rec = NULL;
    free(md->pre);
    free(md->suf);
    free(md->tflip);
    md->pre = md->suf = NULL;
    md->tflip = NULL;
    md->count_for = NULL;
}

const float *tb__medial_normals(const tb__medial *md)
{
    return md->normal;
}

tb_result tb__medial_create(tb__medial **out, const float *pos, size_t nw, const uint32_t *wtri, size_t nt,
                            const uint32_t *shell, tb_error *err)
{
    *out = NULL;
    tb__medial *md = calloc(1, sizeof *md);
    if (md) {
        md->vol = calloc(nw ? nw : 1, sizeof *md->vol);
        md->normal = calloc((nw ? nw : 1) * 3, sizeof *md->normal);
        md->tflip = malloc(nt ? nt : 1);
    }
    if (!md || !md->vol || !md->normal || !md->tflip) {
        tb__medial_free(md);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    md->pos = pos, md->tri = wtri, md->shell = shell, md->nw = nw, md->nt = nt;
    *out = md;
    return TB_OK;
}

void tb__medial_orient(tb__medial *md)
{
    const float *pos = md->pos;
    const uint32_t *wtri = md->tri, *shell = md->shell;
    double *vol = md->vol;
    /* area-weighted normals from the winding, each shell turned outward by the
     * sign of its enclosed volume (a file wound inside out still works) */
    float *normal = md->normal;
    for (size_t t = 0; t < md->nt; t++) {
        const float *a = pos + (size_t)wtri[t * 3] * 3, *b = pos + (size_t)wtri[t * 3 + 1] * 3,
                    *c = pos + (size_t)wtri[t * 3 + 2] * 3;
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; k++) { /* the same sums in the same order, the index once per corner */
            float *nv = normal + (size_t)wtri[t * 3 + (size_t)k] * 3;
            nv[0] += n[0], nv[1] += n[1], nv[2] += n[2];
        }
        /* signed volume about the shell's root vertex (translation-free) */
        const float *r = pos + (size_t)shell[wtri[t * 3]] * 3;
        double pa[3] = {a[0] - r[0], a[1] - r[1], a[2] - r[2]}, pb[3] = {b[0] - r[0], b[1] - r[1], b[2] - r[2]},
               pc[3] = {c[0] - r[0], c[1] - r[1], c[2] - r[2]};
        vol[shell[wtri[t * 3]]] += pa[0] * (pb[1] * pc[2] - pb[2] * pc[1]) + pa[1] * (pb[2] * pc[0] - pb[0] * pc[2]) +
                                   pa[2] * (pb[0] * pc[1] - pb[1] * pc[0]);
    }
    for (size_t t = 0; t < md->nt; t++)
        md->tflip[t] = vol[shell[wtri[t * 3]]] < 0;
    for (size_t v = 0; v < md->nw; v++) {
        float *n = normal + v * 3, s = vol[shell[v]] < 0 ? -1.0f : 1.0f;
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int x = 0; x < 3; x++)
            n[x] = l > 0 ? s * n[x] / l : 0;
    }
    free(md->vol);
    md->vol = NULL;
}

tb_result tb__medial_grid(tb__medial *md, tb_error *err)
{
    tb_result r = tb__tgrid_build(&md->g, md->pos, md->nw, md->tri, md->nt, md->shell, err);
    if (r != TB_OK)
        return r;
    md->tmin = md->g.scale * 1e-4f;
    return TB_OK;
}

tb_result tb__medial_records(tb__medial *md, tb_error *err)
{
    if (!tb__tgrid_records(&md->rec, &md->avx, md->pos, md->tri, md->nt))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    return TB_OK;
}

void tb__medial_records_join(tb__medial *md)
{
    md->g.rec = md->rec;
    md->g.avx = md->avx;
    md->rec = NULL;
}

enum { TB__HCAP = 256 };

/* The grid slot of shell root `root`, or -1 when it has no triangle. */
static long tb__shell_slot(const tb__tgrid *g, uint32_t root)
{
    size_t lo = 0, hi = g->nshell;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->roots[mid] < root)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->nshell && g->roots[lo] == root ? (long)lo : -1;
}

static void tb__box_union(int *out, const int *a, const int *b)
{
    for (int k = 0; k < 3; k++) {
        out[k] = a[k] < b[k] ? a[k] : b[k];
        out[3 + k] = a[3 + k] > b[3 + k] ? a[3 + k] : b[3 + k];
    }
}

static const int tb__empty_box[6] = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MIN, INT32_MIN, INT32_MIN};

void tb__medial_thickness(const tb__medial *md, const float *tmax, float *thick, size_t v0, size_t v1)
{
    tb__hit hits[TB__HCAP];
    for (size_t v = v0; v < v1 && v < md->nw; v++) {
        thick[v] = INFINITY;
        const float *n = md->normal + v * 3;
        if (!(tmax[v] > 0) || (n[0] == 0 && n[1] == 0 && n[2] == 0))
            continue;
        float d[3] = {-n[0], -n[1], -n[2]};
        long k = tb__shell_slot(&md->g, md->shell[v]); /* only its own shell's triangles count */
        tb__ray R = {&md->g, md->pos, md->tri, md->tflip, md->pos + v * 3, d, tmax[v], md->tmin,
                     (uint32_t)v, md->shell[v], 0, NULL};
        thick[v] = tb__ray_walk(&R, NULL, k >= 0 ? md->g.sbox[k] : tb__empty_box, hits, TB__HCAP);
    }
}

int tb__medial_way(tb__medial *md, int way)
{
    int most = 0; /* the widest this CPU and grid run */
#ifdef TB__HAVE_AVX
    most = md->g.rec && __builtin_cpu_supports("avx") ? 1 : 0;
#endif
#ifdef TB__HAVE_AVX2
    most = most && __builtin_cpu_supports("avx2") ? 2 : most;
#endif
    md->g.avx = way < 0 ? 0 : way < most ? way : most;
    return md->g.avx;
}

tb_result tb__medial_count_shells(tb__medial *md, const uint8_t *count_shell, tb_error *err)
{
    size_t n = md->g.nshell;
    free(md->pre);
    free(md->suf);
    md->count_for = NULL;
    md->pre = malloc((n + 1) * sizeof *md->pre);
    md->suf = malloc((n + 1) * sizeof *md->suf);
    if (!md->pre || !md->suf)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    memcpy(md->pre[0], tb__empty_box, sizeof tb__empty_box);
    memcpy(md->suf[n], tb__empty_box, sizeof tb__empty_box);
    for (size_t i = 0; i < n; i++)
        tb__box_union(md->pre[i + 1], md->pre[i],
                      !count_shell || count_shell[md->g.roots[i]] ? md->g.sbox[i] : tb__empty_box);
    for (size_t i = n; i-- > 0;)
        tb__box_union(md->suf[i], md->suf[i + 1],
                      !count_shell || count_shell[md->g.roots[i]] ? md->g.sbox[i] : tb__empty_box);
    md->count_for = count_shell;
    return TB_OK;
}

int tb__medial_enclosed(const tb__medial *md, size_t v, const float q[3], const uint8_t *count_shell)
{
    tb__hit hits[TB__HCAP];
    int inside = 0, box[6];
    const int *bp = NULL;
    if (md->pre && md->count_for == count_shell) { /* the counted shells but its own */
        long k = tb__shell_slot(&md->g, md->shell[v]);
        size_t n = md->g.nshell;
        if (k >= 0)
            tb__box_union(box, md->pre[k], md->suf[k + 1]);
        else
            memcpy(box, md->pre[n], sizeof box);
        bp = box;
    }
    tb__ray R = {&md->g, md->pos, md->tri, md->tflip, q, md->normal + v * 3, INFINITY, md->tmin,
                 UINT32_MAX, md->shell[v], 1, count_shell};
    tb__ray_walk(&R, &inside, bp, hits, TB__HCAP);
    return inside > 0;
}
