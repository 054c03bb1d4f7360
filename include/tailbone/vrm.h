/* tailbone/vrm.h — the tail as VRM spring bones.
 *
 * tb_vrm_springs writes every Tail_* chain of a document as VRM spring
 * bones, so a VRM runtime (three-vrm, UniVRM) animates the tail live
 * instead of playing baked keys:
 *   - VRM 1.0 (a VRMC_vrm extension, or no VRM extension at all): one
 *     VRMC_springBone spring per chain, one joint per bone plus its end
 *     (existing springs, colliders and every other extension are kept);
 *   - VRM 0.x (a "VRM" extension): one secondaryAnimation boneGroup per
 *     chain (one setting for the group: the chain's mean).
 * SPEC B's parameters give each joint's starting settings (docs/vrm.md,
 * "Mapping"), for a runtime stepping at `hz` (0 → 60 Hz; VRM springs are
 * frame-rate dependent):
 *   stiffness_i    = ω_i² · L_i · h       (ω_i from root_hz … root_hz·tip_ratio)
 *   dragForce_i    = 1 − exp(−2 ζ ω_i h)
 *   gravityPower   = 0, gravityDir (0, −1, 0)
 *   hitRadius      = the clearance (only colliders use it; none are written)
 * then stiffness, dragForce and gravityPower are fitted per joint so that a
 * model of the runtime's update follows our baked motion over the
 * document's clips (docs/vrm.md, "Fit"). The tail bones' node rotations are
 * set to the spring's rest pose settled under gravity, which VRM runtimes
 * pull towards. The bind (inverse bind matrices) is unchanged. Offline
 * layer.
 */
#ifndef TAILBONE_VRM_H
#define TAILBONE_VRM_H

#include "tailbone/bake.h"
#include "tailbone/gltf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1: VRM 1.0 (VRMC_vrm), 0: VRM 0.x ("VRM"), -1: not a VRM file. */
int tb_vrm_version(tb_doc *doc);

typedef struct tb_vrm_report {
    int chains;       /* springs (1.0) or bone groups (0.x) written */
    int joints;       /* bones driven */
    int version;      /* 1 or 0 */
    float hz;         /* the runtime rate the mapping assumes */
    /* The per-joint fit (docs/vrm.md, "Fit"): clips used over all chains (0:
     * no clip, the analytic settings are written), and the mean distance of
     * the bone tips (all tips; the last tip) between a model of the runtime
     * and our baked motion over the last of three loops of every clip, in
     * metres, with the analytic settings (before) and the fitted ones
     * (after); the worst chain. */
    int fit_clips;
    float fit_before_m, fit_after_m;
    float fit_tip_before_m, fit_tip_after_m;
    /* The last tip's swing (its RMS distance from its mean over the loop,
     * clips' mean, metres) in the model of the runtime with the analytic
     * (before) and fitted (after) settings, and in our baked motion. */
    float fit_swing_before_m, fit_swing_after_m, fit_swing_baked_m;
    int fit_evaluations; /* model runs, all chains */
} tb_vrm_report;

/* desc: the solver parameters as for tb_bake (NULL: SPEC defaults); hz the
 * runtime rate (0 → 60). Edits doc (tb_doc_refresh is called). A document
 * without Tail_* chains is not an error: report->chains is 0. */
tb_result tb_vrm_springs(tb_doc *doc, const tb_bake_desc *desc, float hz, tb_vrm_report *report, tb_error *err);

#ifdef __cplusplus
}
#endif
#endif
