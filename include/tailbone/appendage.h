/* tailbone/appendage.h — the offline pass: find appendages, report them, give
 * a tail its own bone chain (SPEC A).
 *
 *   tb_appendage_report rep;
 *   tb_error err;
 *   // detect only (SPEC A1–A7): reads the model, changes nothing
 *   if (tb_appendage_detect(&rep, model, NULL, &err) == TB_OK) {
 *       for (int i = 0; i < rep.appendage_count; i++) use(&rep.appendages[i]);
 *       tb_appendage_report_free(&rep);
 *   }
 *   // detect and repair (SPEC A8/A9): edits the document in memory
 *   if (tb_appendage_fix(&rep, doc, NULL, &err) == TB_OK && rep.changed)
 *       tb_doc_save(doc, "out.glb", &err);
 *   tb_appendage_report_free(&rep);
 *
 * Pipeline (docs/detection.md): distance of every bind-space vertex to the
 * bone segments (terminal bones extended) → far vertices (> 7% H) → weld by
 * position across all primitives of the skin → connected components of far
 * vertices on the welded graph → collar ring and attachment joint →
 * centroid-ratio and elongation tests → merge of overlapping shells →
 * classification → for a tail: geodesic from the collar, chain Tail_1…Tail_K
 * + Tail_End, skin weights.
 *
 * Options live in tb_appendage_desc: all-zero means the SPEC defaults, which
 * tb_appendage_defaults() fills in (one place). Several tails get chains
 * Tail_*, TailB_*, TailC_* … in order of their first vertex in the file
 * (letters already used by the skeleton are skipped).
 *
 * Ownership: a report is filled by detect/fix and freed with
 * tb_appendage_report_free (also safe on a zeroed report). Joint names in a
 * report are copies. The model passed to detect is only read.
 */
#ifndef TAILBONE_APPENDAGE_H
#define TAILBONE_APPENDAGE_H

#include "tailbone/common.h"
#include "tailbone/gltf.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_TAIL_MAX_BONES 16 /* hard cap on K (SPEC default range 3..8) */

typedef enum tb_fix_mode {
    TB_FIX_CHAIN = 0, /* SPEC A9: a bone chain (default) */
    TB_FIX_RIGID      /* SPEC A8: every tail vertex 1.0 on Hips (or the attachment bone) */
} tb_fix_mode;

typedef enum tb_appendage_kind {
    TB_KIND_TAIL = 0,  /* long, on the pelvis, or a spine-rooted tail (A7) */
    TB_KIND_CARRIED,   /* long and straight on the spine: scabbard, quiver, strap */
    TB_KIND_WIDE,      /* not long, on the torso: cape, skirt */
    TB_KIND_HEAD,      /* on the neck/head: ears, hair */
    TB_KIND_LIMB,      /* on an arm or a lower limb: sleeves, cuffs */
    TB_KIND_BODY,      /* failed the centroid test: far skin wrapping a bone */
    TB_KIND_OTHER,     /* attached to a joint of no known class */
    TB_KIND_SHORT,     /* long but shorter than tail_length_min: pouch, spike, horn */
    TB_KIND_COUNT
} tb_appendage_kind;

typedef enum tb_appendage_decision {
    TB_DECIDE_UNTOUCHED = 0,
    TB_DECIDE_CHAIN,
    TB_DECIDE_RIGID
} tb_appendage_decision;

typedef struct tb_appendage_desc {
    int skin;                  /* skin index + 1; 0: the skin with the most vertices */
    const char *pelvis_joint;  /* joint name of the pelvis; NULL: the Hips role (SPEC A) */
    tb_fix_mode mode;          /* 0: chain */
    int rigid_wide;            /* 1: bind wide garments rigidly to their bone (A7: only on request) */
    float far_fraction;        /* 0 → 0.07 of H (A2) */
    float thin_margin;         /* 0 → 0.01 of H: a vertex is also far when its local
                                  cross-section (inward ray to where it leaves its solid)
                                  has no bone inside it by this margin (A10, choice) */
    float envelope_margin;     /* 0 → 0.15: such a vertex is far when it also stands this
                                  fraction beyond the body's own radius around its bone
                                  (median of the skin facing away from that bone) */
    float sample_fraction;     /* 0 → 0.0025 of H: thickness rays are cast from one vertex per
                                  shell and grid cell of this size (the others take the
                                  nearest sample's), so dense meshes stay fast */
    float grow_fraction;       /* 0 → 0.8: far regions grow through connected off-bone skin
                                  standing at least this fraction of the envelope off its
                                  bone (a tail's side facing the thigh, A10, choice) */
    float wrap_min_deg;        /* 0 → 270: far skin going further than this around a bone
                                  (coat, belt, plate, limb) is body or clothing: never a
                                  tail, never merged into one (A10, choice) */
    float row_gap;             /* 0 → 1.0: separate off-bone pieces lined up end to end with
                                  gaps up to this fraction of the shorter piece (and
                                  within 3× of each other's size) are one appendage
                                  (vertebrae, beads, scales) */
    float slender_min;         /* 0 → 5: long also when L / (2 × mean section radius) reaches
                                  this (a curled tail's covariance is round) (A10, choice) */
    float leave_min;           /* 0 → 0.25: a tail's tip is at least this × L further from the
                                  trunk than its root; less is worn along the body (A10) */
    float flat_max;            /* 0 → 2.5: never long when the cross-section's principal
                                  axes differ more than this (a cape is a sheet) */
    float row_reach;           /* 0 → 0.08 of H: grid cell for the merge's neighbour search
                                  (the largest gap looked at) */
    float extension_fraction;  /* 0 → 0.5 of the incoming bone (A1) */
    float attach_bias;         /* 0 → 1.5 (A4) */
    float centroid_ratio_min;  /* 0 → 0.40 of the component radius (A5) */
    float elongation_min;      /* 0 → 1.8 (A5) */
    float merge_overlap;       /* unused: kept for source compatibility. SPEC A6's merge by
                                  bounding-box overlap is gone (a coat's box holds a tail's);
                                  A10 merges by tube and row (row_gap, row_reach) */
    float length_percentile;   /* 0 → 0.99 (A9) */
    float segment_fraction;    /* 0 → 0.1: K = round(L / (0.1 H)) (A9) */
    int min_bones, max_bones;  /* 0 → 3, 8 (A9) */
    int smoothing_passes;      /* 0 → 2; negative: none (A9) */
    float blend_zone;          /* 0 → 0.25: half-width of the blend around each joint, in
                                  segments (A9: w_prev = clamp(0.5 − 2f, 0, 0.5) is 0.25);
                                  up to 0.5 blends across the whole segment, which keeps
                                  the inner side of a bent joint on a thick or coarse tail
                                  from collapsing (choice, off by default) */
    int smooth_pieces;         /* 1: smooth chain weights on a segmented tail too (see
                                  piece_span_max); 0: rigid pieces there (choice) */
    float piece_span_max;      /* 0 → 0.5 of L: on a character built from rigid pieces
                                  (body_single_bone >= rigid_body_min), a tail whose skin is
                                  all separate pieces (welded shells), none spanning more
                                  than this along the chain, is bound like the body: each
                                  piece 1.0 on the tail bone holding most of it, so no
                                  piece bends (choice) */
    float rigid_body_min;      /* 0 → 0.9 */
    float collar_band;         /* 0 → 0.5 segment: on a tail welded into the body, the tail's
                                  weights blend from its collar's own weights to the chain's
                                  over this distance, so the seam skins alike on both sides
                                  (choice); negative: no blend (SPEC A9 as written) */
    float weld_epsilon;        /* 0 → 1e-5 of H: positions closer are one vertex (A3) */
    int min_vertices;          /* 0 → 12 welded vertices: smaller appendages are ignored */
    float touch_fraction;      /* 0 → 0.025 of H: grid cells of the bridges the geodesic takes
                                  between the pieces of a merged appendage (A9) */
    float tail_length_min;     /* 0 → 0.15 of H: a shorter long appendage is left alone */
    /* Spine-rooted tail vs carried object (A7, beyond the article): a long
     * appendage on the spine is a tail when at least two of these hold. */
    float tail_taper_max;      /* 0 → 0.7: tip/root cross-section radius below this */
    float tail_bend_min;       /* 0 → 0.08: largest chain deviation from the chord, / L */
    float tail_reach_min;      /* 0 → 0.15: tip beyond the pelvis (below or behind), / H */
    float tail_lateral_max;    /* 0 → 0.05: and its centroid within this of the midline, / H */
    /* Role overrides "Role=Joint" ("Hips=Bone.003", tailbone's --role) for
     * the model tb_appendage_fix loads (tb_model_desc.roles); NULL: none.
     * tb_appendage_detect reads the model it is given. */
    const char *const *roles;
    int role_count;
    int threads;               /* 0 → one per online CPU; 1: none: detection's independent
                                  rays and distances spread over this many threads. The
                                  report is the same for any count */
} tb_appendage_desc;

/* One detected appendage (a far component after merging, SPEC A3–A7). */
typedef struct tb_appendage {
    tb_appendage_kind kind;
    tb_appendage_decision decision;
    char reason[320];          /* which tests passed or failed, with values */
    size_t vertex_count;       /* model vertices (every duplicate counted) */
    size_t welded_count;       /* welded vertices */
    size_t shell_count;        /* merged shells (A6) */
    int separate_shell;        /* the tail is its own shell (A9 choice) */
    size_t piece_count;        /* separate pieces (welded shells wholly in the appendage) */
    int pieces_cover;          /* every vertex lies in such a piece */
    float piece_span;          /* longest piece along the chain, / L (chain decisions) */
    int rigid_pieces;          /* fix: each piece bound rigidly to one tail bone */
    float blend_zone;          /* fix, chains with smooth weights: the blend half-width used */
    size_t welded_collar;      /* fix: collar vertices left to the body (a welded tail), whose
                                  weights the tail blends from (collar_band) */
    float collar_band;         /* fix: the band used for that blend, segments */
    size_t reweighted_count;   /* model vertices whose weights were written (fix) */
    int attach_joint;          /* skeleton joint (tb_model.skel) */
    char attach_name[64];
    float attach_point[3];     /* collar centroid J_0 */
    float elongation;          /* sqrt(λ1/λ2) */
    float centroid_ratio;      /* centroid-to-skeleton distance / radius (A5) */
    float standoff_ratio;      /* mean chain-joint-to-skeleton distance / radius (choice) */
    float lateral;             /* |centroid x - pelvis x| / H */
    float radius;              /* largest distance from the centroid */
    float slenderness;         /* L / (2 × mean cross-section radius) (A10) */
    float flatness;            /* median cross-section axis ratio (1 round, large: a sheet) */
    float leave;               /* how far the chain's tip is further from the trunk than its
                                  root, / L (A10) */
    float taper, bend, reach;  /* A7 spine-tail measures (0 when not measured) */
    float length;              /* L: 99th percentile of g (A9) */
    int bone_count;            /* K (0 unless a chain was made) */
    int chain;                 /* chain letter index (0: Tail_, 1: TailB_…) or -1 */
    char chain_parent[64];     /* name of the joint Tail_1 hangs from */
    float chain_joints[TB_TAIL_MAX_BONES + 1][3]; /* J_0..J_K, bind space */
    float distance_before;     /* weighted bone distance (A9), bind-space units */
    float distance_after;      /* after fix; equals before when untouched */
    uint32_t *vertices;        /* vertex_count model vertex indices, ascending */
} tb_appendage;

typedef struct tb_appendage_report {
    int skin;                  /* skin index used */
    float height;              /* H */
    int pelvis_joint;          /* skeleton joint, or -1 */
    char pelvis_name[64];
    size_t vertex_count, welded_count, far_count;
    size_t ignored_islands;    /* far islands under min_vertices */
    float body_single_bone;    /* fraction of the skin outside the appendages weighted
                                  wholly (>= 0.99) to one joint: near 1 on characters built
                                  from rigid pieces (segmented tails, choice) */
    int existing_chains;       /* Tail_* chains already in the skeleton */
    int role_count;            /* humanoid roles the detection worked with */
    struct {
        tb_role role;
        char joint[64];
        tb_role_source source; /* how the role was found: name, VRM map, shape, override */
    } roles[TB_ROLE_COUNT];
    int changed;               /* fix: the document was edited */
    size_t changed_outside;    /* fix: vertices outside every acted-on appendage whose
                                  influences changed (read back from the edited document;
                                  0 on a correct pass: the body is never touched, A10) */
    size_t collar_changed;     /* fix: welded collar vertices (the ring where a welded tail
                                  joins the body) reweighted halfway to the chain's root,
                                  counted apart from changed_outside (docs/fix.md) */
    char message[256];         /* fix: one-line summary (e.g. "nothing to change") */
    int appendage_count;
    tb_appendage *appendages;
    /* wall time per stage of detection, ms (not in the JSON: reports stay
     * deterministic): distance field, weld, graph + shells, components,
     * merge, analysis (tests, geodesic, chain joints, distances), thickness
     * (rays, envelope, A10) */
    double stage_ms[7];
} tb_appendage_report;

/* Names of the stage_ms entries ("distance", "weld", …); NULL past the end. */
const char *tb_appendage_stage_name(int i);

/* The desc with every zero field replaced by its SPEC default; desc may be NULL. */
tb_appendage_desc tb_appendage_defaults(const tb_appendage_desc *desc);

/* SPEC A1–A7 on a loaded model; fills *out (free with tb_appendage_report_free).
 * Fails with TB_ERR_NO_HIPS when no pelvis is known (name it in desc). */
tb_result tb_appendage_detect(tb_appendage_report *out, const tb_model *m,
                              const tb_appendage_desc *desc, tb_error *err);

/* Detects on the doc's skin and applies the decisions (A8/A9): appends tail
 * nodes, extends the skin and its inverse bind matrices, rewrites JOINTS_n /
 * WEIGHTS_n of the primitives whose vertices change, refreshes the doc and
 * measures the weighted bone distance after. out->changed says whether the
 * doc was edited; when 0 the doc is untouched. On error the doc may be
 * partly edited: discard it. */
tb_result tb_appendage_fix(tb_appendage_report *out, tb_doc *doc,
                           const tb_appendage_desc *desc, tb_error *err);

void tb_appendage_report_free(tb_appendage_report *rep);

/* The report as JSON text ({"skin":…, "appendages":[…]}, as `tailbone detect
 * --json` prints it), indented by `indent` spaces (0: one line); free() it.
 * NULL when out of memory. */
char *tb_appendage_report_json_text(const tb_appendage_report *rep, int indent);

const char *tb_appendage_kind_name(tb_appendage_kind k);
const char *tb_appendage_decision_name(tb_appendage_decision d);

/* Weighted bone distance (SPEC A9): for each listed vertex
 * Σ_i w_i · dist(p, segments of bone i), averaged over the vertices. Bone
 * i's segments run from its joint to each child joint; a childless joint
 * gets a segment extending its incoming bone by extension_fraction (0 → 0.5). */
float tb_weighted_bone_distance(const tb_model *m, const uint32_t *vertices,
                                size_t count, float extension_fraction);

/* SPEC A3: welds positions closer than epsilon (hash grid, O(n)). remap[v]
 * gets the smallest index of v's welded group (so remap[v] <= v); returns the
 * number of groups. positions are strided floats (stride >= 3). */
size_t tb_weld_positions(uint32_t *remap, const float *positions, size_t count,
                         size_t stride, float epsilon);

#ifdef __cplusplus
}
#endif
#endif
