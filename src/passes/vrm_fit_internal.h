/* Fitting VRM spring-bone joint settings to our baked tail motion
 * (vrm_fit.c, used by tb_vrm_springs). Offline layer. */
#ifndef TB_VRM_FIT_INTERNAL_H
#define TB_VRM_FIT_INTERNAL_H

#include "gltf/doc_json.h"
#include "tailbone/bake.h"
#include "tailbone/gltf.h"
#include "tailbone/model.h"
#include "tailbone/spring.h"

/* One VRMC_springBone joint's settings (gravityDir is (0, -1, 0)). */
typedef struct tb__vrm_joint {
    float stiffness, drag, gravity;
    float tilt[2]; /* the rest rotation turned by these angles (radians) about two
                      axes across the bone; 0 on entry */
} tb__vrm_joint;

typedef struct tb__vrm_fit_report {
    int clips;          /* clips the fit used */
    int frames;         /* runtime frames compared (one loop per clip) */
    int evaluations;    /* simulations of the runtime run */
    float before_m;     /* mean distance of the chain's bone tips, runtime vs baked,
                           with the analytic settings (metres) */
    float after_m;      /* the same with the fitted settings */
    float tip_before_m; /* the same for the last tip only */
    float tip_after_m;
    float swing_before_m; /* the last tip's swing: the RMS distance from its mean
                             over the loop, clips' mean; analytic settings */
    float swing_after_m;  /* the same, fitted settings */
    float swing_baked_m;  /* the same for our baked motion */
} tb__vrm_fit_report;

/* Fits chain `chain` of animator a (built from m with bake desc bd): joint[K]
 * holds the analytic settings on entry and the fitted ones on return.
 * rest_q: K quaternions, the node rotations for Tail_1..Tail_K (what the
 * runtime pulls towards): the settled rest on entry, tilted by the fit on
 * return. h: the runtime's frame time. Every clip of doc
 * (at most 8, each at most 20 s) is played as a loop by both: our solver at
 * the bake rate with its keys interpolated (what a player shows of the baked
 * file), and a model of the VRMC_springBone update (the spec's algorithm as
 * three-vrm runs it) at h. A chain without an end joint or a document
 * without clips keeps the analytic settings (rep->clips 0). units: world
 * units per metre. */
tb_result tb__vrm_fit(const tb_doc *doc, const tb_model *m, tb_spring_animator *a, const tb_bake_desc *bd,
                      int chain, float *rest_q, float h, float units, tb__vrm_joint *joint,
                      tb__vrm_fit_report *rep, tb_error *err);

#endif
