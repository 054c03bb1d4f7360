/* tailbone/retarget.h — clip transfer by humanoid roles, grounding that never
 * counts the tail, and tail-aware placement (SPEC D: "Grounding in
 * retargeting", "Stable calibration", "Placement"). Offline layer.
 *
 * One call does the whole job on documents:
 *
 *   tb_retarget_desc d = {0};                 // zero = documented defaults
 *   tb_retarget_report report;
 *   tb_retarget_docs(character, libs, lib_count, &d, &report, &err);
 *   tb_doc_save(character, "out.glb", &err);  // clips appended as animations
 *   char *text = tb_retarget_report_json_text(&report, 2);  // as `tailbone retarget --report`
 *   free(text); tb_retarget_report_free(&report);
 *
 * or step by step, for engines that keep their own skeletons:
 *
 *   tb_retarget_calib *src, *dst;             // captured ONCE from bind poses
 *   tb_retarget_calibrate(&src, source_model, NULL, &d, &err);
 *   tb_retarget_calibrate(&dst, target_model, tail_mask, &d, &err);
 *   tb_retarget_bake *b;
 *   tb_retarget_run(&b, src, &clip, dst, &d, &err);   // any number of times
 *   tb_retarget_write(doc, dst, b, &err); tb_doc_refresh(doc, &err);
 *   tb_retarget_bake_free(b); tb_retarget_calib_free(src); …
 *
 * Method (see docs/retarget.md):
 * - Bones are matched by role (tb_role_from_name: any mixamorig*: prefix,
 *   bare Mixamo names, common other layouts). A role bone's world rotation
 *   relative to its own bind world rotation is carried over in true world
 *   space (armature nodes above each skeleton included), after turning the
 *   source's facing onto the target's (C) and aligning each limb's bind
 *   direction (so a T-pose source drives an A-pose target without bending
 *   its arms by the 30-60 degrees that separate the two bind poses):
 *     R_tgt(t) = C R_src(t) R_src_bind^-1 C^-1 Q_b^-1 R_tgt_bind,
 *   Q_b = shortest rotation from C d_src_bind to d_tgt_bind (d = bone
 *   direction to the child role; Q_b = I for hips, hands, head, toes, or
 *   when desc.raw_delta is set). Converted back to each joint's local
 *   rotation given its parent's new world rotation.
 * - Hips translation: the source hips' world displacement from bind, turned
 *   by C, scaled by target leg length / source leg length, plus the
 *   grounding lift, expressed in the target hips' parent space.
 * - Unmatched bones hold their bind pose recovered from the IBMs,
 *   L^0 = (W_parent^0)^-1 W^0 — never the stored node pose.
 * - Stable calibration: everything is computed on private copies captured
 *   by tb_retarget_calibrate; the model's or any live pose is never read
 *   afterwards nor written.
 *
 * Ownership: _calibrate/_run/_supports_build outputs are freed by the
 * matching _free. A calibration keeps no pointer into the model or doc.
 */
#ifndef TAILBONE_RETARGET_H
#define TAILBONE_RETARGET_H

#include <stddef.h>

#include "tailbone/common.h"
#include "tailbone/gltf.h"
#include "tailbone/model.h"
#include "tailbone/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The same as tb_model_bind_to_world (tailbone/model.h), kept by this name. */
void tb_retarget_bind_to_world(const tb_model *m, float M[16]);

/* ---- grounding (SPEC D) ------------------------------------------------ */

typedef enum tb_support_kind {
    TB_SUPPORT_BODY = 0, /* in S \ (T ∪ E): probes the body's clearance */
    TB_SUPPORT_TAIL = 1, /* T: mostly on Tail_* bones, in the caller's mask, or
                            torso skin hanging below the knees (see keep_hanging) */
    TB_SUPPORT_FOOT = 2  /* E: dominant bone a foot/toe, or a shin's skin below the
                            ankle (the feet's contact solver handles it) */
} tb_support_kind;

typedef struct tb_ground_desc {
    int lowest_per_bone;   /* 0 → 8: lowest bind-y vertices kept per dominant bone */
    int sampled_per_bone;  /* 0 → 24: stratified (by height) extra samples per bone */
    uint32_t seed;         /* 0 → 0x7a11b0e5: picks inside each stratum */
    int keep_hanging;      /* 0: skin of a torso/head bone lying below the knees in
                              bind pose (a tail or cape not yet given Tail_* bones)
                              joins T; 1: it counts as body */
} tb_ground_desc;

/* Support points S sampled on the skin in groups by dominant bone. */
typedef struct tb_ground_supports {
    int count;
    int influences;        /* per point, as the model's */
    float *bind_pos;       /* 3 per point, bind space (POSITION, what skinning takes) */
    float *bind_y;         /* 1 per point, world y at bind (M × POSITION) */
    uint16_t *joints;      /* influences per point, skin joint indices */
    float *weights;        /* influences per point */
    uint32_t *vertex;      /* model vertex of each point */
    uint8_t *kind;         /* tb_support_kind per point */
    int body_count, tail_count, foot_count;
    size_t hanging_vertex_count; /* vertices put in T by the hanging rule */
    float f_body;          /* min bind y over S \ T (SPEC D calibration) */
} tb_ground_supports;

/* T is the skin whose weight on Tail_* bones (tb_tail_name_parse) exceeds
 * one half, plus the vertices set in tail_mask (may be NULL; one byte per
 * model vertex), plus hanging torso skin (desc->keep_hanging). Deterministic. */
tb_result tb_ground_supports_build(tb_ground_supports *out, const tb_model *m,
                                   const uint8_t *tail_mask,
                                   const tb_ground_desc *desc, tb_error *err);
void tb_ground_supports_free(tb_ground_supports *s);

/* c(t) = min over S \ (T ∪ E) of y(t) − f_body, with the skin matrices of
 * the frame (tb_skin_matrices). scratch: unused (kept for callers; may be
 * NULL). Returns +inf when S has no body point. No allocation. */
float tb_ground_clearance(const tb_ground_supports *s,
                          const float (*skin_mats)[16], float *scratch);
/* Lowest y(t) over the points of one kind (for reports); scratch unused.
 * Each point's y is tb_skin_point_axis(), the value tb_skin_points gives. */
float tb_ground_lowest(const tb_ground_supports *s, tb_support_kind kind,
                       const float (*skin_mats)[16], float *scratch);

/* Temporal smoothing of L_raw into lift[n] (frames dt_s apart): a dilation
 * with a raised-cosine kernel of half-width smooth_s, so lift >= lift_raw
 * everywhere (never lets the body sink), lift is continuous, and lift is
 * exactly 0 wherever no L_raw > 0 lies within smooth_s. */
void tb_ground_smooth(float *lift, const float *lift_raw, int n, float dt_s,
                      float smooth_s);

/* Placement for viewers (SPEC D "Placement"): the body's level ignores
 * tail-dominated skin; framing still uses the whole character. */
typedef struct tb_placement {
    /* world units, bind pose (M × POSITION, see tb_retarget_bind_to_world) */
    float ground_offset_y; /* add to the model's y to stand the body on y = 0 */
    float body_min_y;      /* lowest y of skin not dominated by the tail */
    float all_min_y;       /* lowest y of all skin (what a naive viewer uses) */
    float frame_min[3], frame_max[3]; /* framing box: the whole character */
    size_t tail_vertex_count; /* skin ignored for the level: T as in tb_ground_supports_build
                                 (Tail_* bones or mask, and hanging torso skin) */
} tb_placement;

tb_result tb_ground_placement(tb_placement *out, const tb_model *m,
                              const uint8_t *tail_mask, tb_error *err);

/* ---- transfer ----------------------------------------------------------- */

/* Most keys tb_retarget_docs adds in one call (estimated from the selected
 * clips' durations, the key rate and the character's joints, 40 bytes a
 * joint a frame) before it refuses with TB_ERR_UNSUPPORTED at "--clips". */
#define TB_RETARGET_MAX_BYTES (128.0 * 1048576.0)

typedef struct tb_retarget_desc {
    float fps;             /* 0 → 30: keys are resampled at this rate, plus the last
                              key at the clip's end (LINEAR) */
    int no_ground;         /* 0: grounding pass on (SPEC D); 1: off */
    float smooth_s;        /* 0 → 0.1: half-width of the lift smoothing kernel, s */
    int raw_delta;         /* 0: align bind limb directions (Q_b); 1: pure world delta */
    tb_ground_desc ground; /* support sampling (zero = defaults) */
    const char *const *only; /* clip names to transfer (NULL = all); exact, or the
                                part after the last '|', case-insensitive */
    int only_count;
    int foot_contact;      /* 1: a leg whose foot skin dips below the floor gets a two-bone
                              IK raising its ankle (limb reconciliation; the limbs then
                              differ from the source's by the IK's turn). 0 (default):
                              rotations as transferred */
    int no_detect;         /* tb_retarget_docs: 0: a character without Tail_* bones has
                              its tails found by tb_appendage_detect (SPEC A) and their
                              skin put in T; 1: don't */
    int threads;           /* tb_retarget_docs: the character's calibration and each
                              library's, then a library's clips, this many at once (0, 1:
                              one after the other); the same result for any value */
} tb_retarget_desc;

/* Calibration of one skeleton, captured from its bind pose (IBMs) once. */
typedef struct tb_retarget_calib tb_retarget_calib;

/* Fails with TB_ERR_NO_HIPS when no joint has the Hips role. tail_mask as in
 * tb_ground_supports_build (one byte per model vertex; may be NULL). Reads
 * m->skel.rest_local only for the nodes above the skin (armature). */
tb_result tb_retarget_calibrate(tb_retarget_calib **out, const tb_model *m,
                                const uint8_t *tail_mask,
                                const tb_retarget_desc *desc, tb_error *err);
void tb_retarget_calib_free(tb_retarget_calib *c);
/* Facts of a calibration, for reports. */
int tb_retarget_calib_role_count(const tb_retarget_calib *c);
float tb_retarget_calib_leg_length(const tb_retarget_calib *c);
const tb_ground_supports *tb_retarget_calib_supports(const tb_retarget_calib *c);
/* Doc node of a private-skeleton joint; joint of a role, or -1. */
int tb_retarget_calib_node(const tb_retarget_calib *c, int joint);
int tb_retarget_calib_role_joint(const tb_retarget_calib *c, tb_role role);
/* The private skeleton (bind locals from IBMs as rest). Borrowed from c. */
const tb_skeleton *tb_retarget_calib_skeleton(const tb_retarget_calib *c);

enum { TB_RETARGET_T = 1, TB_RETARGET_R = 2, TB_RETARGET_S = 4 };

/* A transferred clip: target locals at every key. */
typedef struct tb_retarget_bake {
    char *name;
    int frame_count, joint_count;
    float *times;          /* frame_count, seconds */
    tb_transform *locals;  /* frame_count × joint_count (target private skeleton order) */
    uint8_t *animated;     /* joint_count: TB_RETARGET_* paths to write as tracks */
    uint8_t *constant;     /* joint_count: paths whose stored node value differs from
                              bind; written as one-key tracks holding the bind value */
    float *lift;           /* frame_count: grounding lift added to the hips, target units */
    float *lift_raw;       /* frame_count: L_raw(t) = max(0, a(t) − c(t)) */
    float *clearance;      /* frame_count: c(t) before the lift */
    float *allowance;      /* frame_count: a(t), in target units */
    float *foot_min_y;     /* frame_count: lowest foot support y after the lift */
    float *tail_min_y;     /* frame_count: lowest tail support y (inf if none) */
    float *source_foot_y;  /* frame_count: the source's lowest foot support, relative to
                              its f_body, scaled by leg_ratio, plus the target's f_body
                              (what foot_min_y should follow; inf if no foot) */
    float leg_ratio;       /* target leg length / source leg length */
    float facing_deg;      /* yaw of C, degrees */
    int foot_fixes;        /* leg-frames whose foot was raised out of the floor (IK) */
    float foot_raise_max;  /* largest such raise, target units */
} tb_retarget_bake;

/* Transfers one clip sampled on src's private skeleton (clip joints index
 * src's skeleton, i.e. the source model's skel order, as tb_clip_load
 * (tailbone/clip.h) builds them) onto dst. Reads
 * nothing but the calibrations and the clip. */
tb_result tb_retarget_run(tb_retarget_bake **out, const tb_retarget_calib *src,
                          const tb_clip *clip, const tb_retarget_calib *dst,
                          const tb_retarget_desc *desc, tb_error *err);
void tb_retarget_bake_free(tb_retarget_bake *b);

/* Appends the bake as a glTF animation (LINEAR; name kept) to doc, whose
 * nodes dst was calibrated from. Call tb_doc_refresh afterwards. */
tb_result tb_retarget_write(tb_doc *doc, const tb_retarget_calib *dst,
                            const tb_retarget_bake *b, tb_error *err);

/* What tb_retarget_docs did (docs/retarget.md, "Report"): world units,
 * seconds, degrees as in the JSON. A figure with no sample (no finite
 * value) is NAN, and null in the JSON. */
typedef struct tb_retarget_tail_found {
    char *attachment;           /* the joint the detected tail hangs from */
    size_t vertex_count;
    float length;
} tb_retarget_tail_found;

typedef struct tb_retarget_clip_report {
    char *name, *source;        /* the clip and its library's name */
    float duration_s;
    int frame_count, roles_matched;
    float leg_ratio, facing_deg;
    /* grounding: the lift that kept the body out of the floor, its clearance,
     * the feet's lowest y and how far they are from the source's */
    float lift_max, lift_max_at_s, lift_raw_max, clearance_min;
    float foot_min_y_low, foot_min_y_high;
    double foot_vs_source_mean, foot_vs_source_max;
    float tail_min_y;
    int foot_contact_fixes;
    float foot_contact_raise_max;
} tb_retarget_clip_report;

typedef struct tb_retarget_report {
    int tail_count;             /* tails detected for the ground's mask (none when the rig has Tail_ bones) */
    tb_retarget_tail_found *tails;
    char *file;                 /* the character's name (tb_doc_name) */
    float height;
    int roles;
    float leg_length;
    int supports_body, supports_tail, supports_foot;
    float supports_f_body;
    size_t supports_hanging_vertices;
    tb_placement placement;
    int clip_count;
    tb_retarget_clip_report *clips;
} tb_retarget_report;

void tb_retarget_report_free(tb_retarget_report *rep);
/* The report as JSON text ({"detected_tails", "character", "placement",
 * "clips"}), indented by `indent` spaces (0: one line); free() it. NULL when
 * out of memory. */
char *tb_retarget_report_json_text(const tb_retarget_report *rep, int indent);

/* The whole job: every clip of every lib (filtered by desc->only) onto the
 * character's main skin, appended to its animations, doc refreshed. *report
 * (may be NULL) receives what was done: placement, per-clip lift and foot
 * statistics (tb_retarget_report_free; zeroed on failure). A name in
 * desc->only that no lib has fails with TB_ERR_ARG. */
tb_result tb_retarget_docs(tb_doc *character, tb_doc *const *libs, int lib_count,
                           const tb_retarget_desc *desc, tb_retarget_report *report,
                           tb_error *err);

#ifdef __cplusplus
}
#endif
#endif
