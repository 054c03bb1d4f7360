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
    uint32_t *surf;     /* per model vertex: its surface before the weld (root over the model's
                           triangles), kept until the far parts are known */
    uint8_t *cut;       /* per welded id: what the tube cut took from a far part (1: far, 3: far
                           and thin), kept until the far parts are known */
} tb__state;

/* appendage.c's stages and helpers that detect.c uses */
double tb__now_ms(void);
void tb__state_free(tb__state *st);
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
void tb__seg_set(tb__seg *s, const float *a, const float *b, int joint);
const float *tb__jpos(const tb_model *m, int j);
float tb__skeleton_dist(const tb__seg *s, int n, const float p[3]);
void tb__eig3(const double c[3][3], double ev[3], double axis[3]);
void tb__copy_name(char *dst, size_t cap, const char *s);
int tb__attach_joint(const tb__state *st, const float p[3]);
int tb__wraps(const tb__state *st, const uint32_t *verts, size_t n);
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

/* Detection's measures stage (SPEC A5, detect.c) on the welded vertices
 * wv[0..nv) of st: the centroid ratio (skeleton distance of the centroid
 * over the radius, the largest distance from it), the elongation (square
 * root of the two largest covariance eigenvalues' ratio) and the radius
 * into ap; axis: the principal axis. */
void tb__detect_measures(tb__state *st, const uint32_t *wv, size_t nv, tb_appendage *ap, double axis[3]);

#endif
