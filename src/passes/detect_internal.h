/* The detector's state (SPEC A), shared by appendage.c (its first stages:
 * prepare with the far set, components, merge; the geometry helpers) and
 * detect.c (the run, and per merged group: gather → measures → geodesic →
 * classify → lists). detect.c calls appendage.c, never the reverse. Not
 * installed. */
#ifndef TB_DETECT_INTERNAL_H
#define TB_DETECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "passes/appendage_internal.h"
#include "passes/pool_internal.h"

typedef struct tb__comp {
    uint32_t *verts;  /* welded ids, ascending */
    size_t nverts;
    uint32_t *collar; /* welded ids */
    size_t ncollar;
    int separate;     /* its shell is its own (A9 choice) */
    uint32_t shell;
    int attach;
    float bmin[3], bmax[3];
    int group;        /* merge root (A6) */
} tb__comp;

typedef struct tb__state {
    const tb_model *m;
    uint32_t *spare_tris; /* m->triangles when the caller lends them (tb__appendage_detect_taking:
                             freed after, read again from the document): the thickness rays'
                             welded triangles are written over them instead of into a copy */
    tb_appendage_desc d;
    float H;
    int pelvis;
    tb_role_class *cls;
    tb__seg *segs;
    int nseg;
    tb__segsoa segsoa;  /* segs as arrays (the nearest-segment searches) */
    tb__seg *trunk;     /* the trunk's bones (detect.c's tb__trunk_segs) */
    int ntrunk;
    uint8_t *is_node;
    uint32_t *wid;      /* model vertex → welded id */
    size_t nw;
    float *wpos;        /* 3 per welded id */
    uint8_t *far;       /* per welded id */
    tb__graph g;
    uint32_t *shell;    /* welded id → shell root */
    uint32_t *shell_total, *shell_far; /* per shell root (counts of welded ids: below 2^32) */
    float *warea;       /* per welded id: a third of its triangles' area */
    float *shell_area;  /* per shell root: the shell's area */
    double area_total;  /* the skin's area */
    uint32_t *comp_uf;
    tb__comp *comps;
    size_t ncomp;
    uint32_t *model_off, *model_list; /* welded id → its model vertices (CSR) */
    uint32_t *shell_off, *shell_list; /* shell root → its welded ids (CSR) */
    double *ms;         /* stage times (tb_appendage_report.stage_ms) */
    float up[3], fwd[3];/* the character's axes in bind space (tb_model_axes) */
    float *wdist;       /* per welded id: distance to the skeleton (A1) */
    int *wseg;          /* per welded id: the nearest bone segment (first on ties, -1: none) */
    float *mpos;        /* per welded id: medial point (3), the vertex itself where none */
    float *mrad;        /* per welded id: half the local thickness, 0 where none */
    uint8_t *thin;      /* per welded id: far by thickness (its cross-section holds no bone) */
    uint32_t *shell_total_pre; /* per shell root: welded vertices (before far is known) */
    int32_t *wrap_bin;  /* per welded id: tb__wraps' bone sector, -2 until asked (from the merge on) */
    int8_t *wrap_trunk; /* per welded id: tb__wraps' trunk sector */
    int wrap_frozen;    /* tb__wraps reads wrap_bin but writes it no more (the groups' analyses
                           run at once) */
    uint32_t *surf;     /* per model vertex: its surface before the weld (root over the model's
                           triangles), kept until the far parts are known */
    uint8_t *cut;       /* per welded id: what the tube cut took from a far part (1: far, 3: far
                           and thin), kept until the far parts are known */
    const tb__side_task *side; /* the caller's, beside the weld (tb__appendage_detect_taking) */
    tb__team *team;     /* the run's workers (tb__team_start; NULL: each loop starts its own,
                              tb__parallel_for) */
} tb__state;

/* appendage.c's stages and helpers that detect.c uses */
double tb__now_ms(void);
void tb__state_free(tb__state *st);
/* n tasks on st->team where there is one, else on threads of their own
 * (tb__parallel_for); threads as tb_appendage_desc.threads (0: all CPUs). */
void tb__st_for(const tb__state *st, int threads, int n, tb__task_fn fn, void *ctx);
int tb__joint_by_name(const tb_model *m, const char *name);
tb_result tb__detect_prepare(tb__state *st, tb_error *err);    /* distance, weld, graph, far set */
tb_result tb__detect_components(tb__state *st, tb_error *err); /* the far set's pieces, collars, attachment */
tb_result tb__detect_merge(tb__state *st, tb_error *err);      /* grouping (A6) */
/* Two of prepare's stages, callable alone on a state the caller fills
 * (test_detect_stages builds a few vertices and bones by hand):
 * the distance (A1, A2): per welded id its distance to the segments (segsoa)
 * and nearest segment, far when beyond far_fraction H; reads wpos, nw, d, H.
 * the envelope (A10): thin skin (thin[]) standing outside its bone's envelope
 * (the median distance of the skin facing away from the bone, normal: 3 per
 * welded id; the A2 band where fewer than 8 such) by envelope_margin and
 * thin_margin H is far, and far grows through the thin skin it touches (g)
 * that stands grow_fraction of the envelope off its bone; on an upright
 * humanoid skeleton only (st->m's roles). Reads wpos, wdist, wseg, segs, thin;
 * writes far. */
void tb__prep_distance(tb__state *st);
tb_result tb__envelope_far(tb__state *st, const float *normal, tb_error *err);
/* Prepare's later stages, in their order (appendage.c), each callable alone
 * on a state the caller fills (test_detect_stages):
 * the samples: src[w] the welded id w takes its thickness from, one per
 * shell and grid cell of sample_fraction H (the cell's first vertex; cells
 * from m->bbox_min), the others the nearest sample in hops over g (the
 * first reached; isolated vertices their own). Reads wpos, shell, g.
 * far by thickness (A10): the rays from the samples over m's triangles
 * (through wid): per welded id its medial point (mpos) and half thickness
 * (mrad), off the bone (thin) where no bone passes through its
 * cross-section, less skin enclosed by a body shell (mostly round bones)
 * and thin strands on one; then tb__envelope_far. Reads wdist, shell,
 * shell_total_pre, g, segs; allocates mpos, mrad, thin.
 * its opening (the last step before the envelope): on a body shell
 * (body_shell[shell root] != 0) a thin vertex stays thin only when it or a
 * neighbour over g is a core (thin, every neighbour thin); elsewhere thin
 * is kept. Reads g, shell; writes thin.
 * holes: a patch of fewer than min_vertices non-far vertices (joined by
 * non-far edges) more than half of whose edges into far skin reach thin
 * skin (a tip's pole) is far and thin, every vertex of it; a patch in far
 * skin round a bone, or a whole shell (no edge into far skin), is not.
 * Reads g, far, thin.
 * far parts: comp_uf joins far skin along far-far edges, but on a body
 * shell thin and not-thin far skin apart; a part under min_vertices joins
 * the far part it touches; far vertices' roots compressed. comp_uf: each
 * vertex itself on entry.
 * tube cut: a far part (4 min_vertices or more, short of its shell) that
 * is a tube from its tip and opens out over the skin it leaves is cut
 * there: the rest is not far, not thin, its own part (comp_uf). Reads
 * wpos, g, shell, shell_total_pre.
 * own surfaces: a far part welded into a larger shell that holds surfaces
 * of its own (surf: per model vertex its surface's root, freed here; wid,
 * model_off, model_list) for half of it gives back its skin on no surface
 * of its own and the weld ring; comp_uf after: each far vertex's part
 * labelled by its first far vertex, the rest themselves. */
tb_result tb__thickness_samples(const tb__state *st, uint32_t *src, tb_error *err);
tb_result tb__far_by_thickness(tb__state *st, tb_error *err);
tb_result tb__thick_open(tb__state *st, const uint8_t *body_shell, tb_error *err);
tb_result tb__prep_holes(tb__state *st, tb_error *err);
tb_result tb__prep_far_parts(tb__state *st, tb_error *err);
tb_result tb__tube_cut(tb__state *st, tb_error *err);
tb_result tb__own_surfaces(tb__state *st, tb_error *err);
void tb__seg_set(tb__seg *s, const float *a, const float *b, int joint);
const float *tb__jpos(const tb_model *m, int j);
float tb__skeleton_dist(const tb__seg *s, int n, const float p[3]);
void tb__eig3(const double c[3][3], double ev[3], double axis[3]);
void tb__copy_name(char *dst, size_t cap, const char *s);
/* The k-th smallest of a[0..n) (k < n), a reordered: a[k] after an
 * ascending qsort (by selection where no NaN or negative zero makes the
 * sort's order its own; appendage.c). */
float tb__kth_float(float *a, size_t n, size_t k);
int tb__attach_joint(const tb__state *st, const float p[3]);
int tb__wraps(const tb__state *st, const uint32_t *verts, size_t n);
/* the row rule's "alike in size" (extents, typical half-thicknesses, flatnesses): 1 alike */
int tb__row_alike(float extent_a, float extent_b, float rad_a, float rad_b, float flat_a, float flat_b);
tb_result tb__bridges(const tb__state *st, const uint32_t *wv, const uint32_t *piece, size_t nv, tb__graph *out,
                      tb_error *err);
int tb__chain_joints(const tb__state *st, const uint32_t *wv, size_t n, const float *g, float L, int K,
                     const float j0[3], float (*J)[3], float *radius, float *flatness);

/* What classification (SPEC A7, A10) reads of one appendage: its measures,
 * nothing of the mesh. Lengths are in bind units, H the character's height. */
typedef struct tb__app_measures {
    float H;
    tb_role_class cls;       /* the attachment joint's class */
    int attach;              /* the attachment joint (A4) */
    char attach_name[64];
    int pelvis;              /* the pelvis joint */
    int trunk_joint;         /* the trunk joint nearest the attachment point, -1: none */
    char trunk_name[64];
    int separate_shell, shell_count;
    size_t vertex_count;     /* welded vertices */
    size_t thin_count;       /* of them, far by thickness (A10) */
    double far_area, area_total; /* the appendage's far skin area, the skin's */
    int wraps;               /* more than wrap_min_deg around a bone (A10); 0 when not asked (far_area wins) */
    float elongation, slenderness, flatness, length, leave, lateral;
    float centroid_ratio, standoff_ratio;
    float rod_extent, rod_bow, rod_section; /* tb__rod, or 0, 1, INFINITY when not a long separate shell */
    float taper, bend, reach;                /* the spine-rooted tail signs (A7) */
    int K;                   /* chain bones at the segment length */
} tb__app_measures;

/* Classification's answer: what the report and fix take from it. */
typedef struct tb__app_class {
    tb_appendage_kind kind;
    tb_appendage_decision decision;
    int parent_joint;        /* the joint Tail_1 or the rigid weight goes to, -1: none */
    int attach_joint;        /* the attachment, moved to the trunk for a carried rod */
    int spine_signs;         /* 1: taper, bend and reach were read (and are reported) */
    int bone_count;          /* K for a chain, else 0 */
    char reason[320];        /* which tests passed or failed, with values */
} tb__app_class;

/* SPEC A7/A10 classification: a pure function of the measures and the
 * (resolved) desc (detect.c; test_detect_classify holds it to tables). */
void tb__classify(const tb__app_measures *ms, const tb_appendage_desc *d, tb__app_class *out);

/* One merged group as detect.c's stages work it (tb__analyse fills it in
 * order: gather → measures → geodesic → classify → lists). */
typedef struct tb__an_job {
    tb__state *st;
    tb_appendage *ap;
    tb__app_work *aw;
    int group;
    float *g;          /* per welded id: geodesic coordinate */
    uint8_t *allowed;  /* per welded id: scratch marks */
    uint32_t *wv;      /* the group's welded vertices */
    uint32_t *piece;   /* per wv: its component */
    uint32_t *wc;      /* the collar (or the root of a floating group) */
    uint32_t *src;     /* the geodesic's sources */
    size_t nv, nc, ns;
    int floating;      /* no piece touches the body */
    int root_moved;    /* a floating root moved from its patch nearest the trunk to an end */
    float near;        /* a floating group: its patch's distance to the trunk */
    double cen[3], axis[3], rad;
    float cf[3];
    int K;
    float radius[TB_TAIL_MAX_BONES + 1], flat;
    tb__graph bridges; /* between the group's pieces (several shells), once made (bridged): the caller frees */
    int bridged;
} tb__an_job;

/* Three of a group's stages (detect.c), callable alone on a job the caller
 * sets up (test_detect_stages):
 * gather: from st, group, g and allowed (per welded id, INFINITY and 0,
 * left so): the group's pieces (wv, piece), its collar (wc, each vertex
 * once) or, for a group of detached shells (taken whole with their band) or
 * one touching no body, the root nearest the trunk; ap's shell count,
 * welded count, attachment point and joint. Allocates wv, wc, src, piece
 * (and the bridges of a group of several shells, kept for the walk: free
 * them with tb__graph_free).
 * geodesic (A9): the sources (the collar, a separate shell's band: ns), the
 * walk g from them over wv (sorted), the length (length_percentile of g),
 * K, the chain joints, slenderness, flatness and leave into ap and j.
 * lists: the model vertices of wv (and of a separate shell's band among
 * the sources marked allowed 1), sorted, into ap->vertices and aw (rw_*,
 * their g, their pieces, the collar's model vertices); the bone distance. */
tb_result tb__an_gather(tb__an_job *j, tb_error *err);
tb_result tb__an_geodesic(tb__an_job *j, tb_error *err);
tb_result tb__an_lists(tb__an_job *j, tb_error *err);

/* Detection's measures stage (SPEC A5, detect.c) on the welded vertices
 * wv[0..nv) of st: the centroid ratio (skeleton distance of the centroid
 * over the radius, the largest distance from it), the elongation (square
 * root of the two largest covariance eigenvalues' ratio) and the radius
 * into ap; axis: the principal axis. */
void tb__detect_measures(tb__state *st, const uint32_t *wv, size_t nv, tb_appendage *ap, double axis[3]);

#endif
