/* tailbone/fix.h — the whole job in one call (SPEC A, D, C): find and repair
 * the tail, transfer a clip library, bake the simulated tail into every clip,
 * and measure the result. `tailbone fix` is a thin shell around it.
 *
 *   tb_fix_desc d = {0};                      // SPEC defaults everywhere
 *   tb_doc *out = NULL;
 *   tb_fix_report rep;
 *   tb_error err;
 *   if (tb_fix_run(&out, in, &d, &rep, &err) == TB_OK) {
 *       tb_doc_save(out, "fixed.glb", &err);
 *       tb_doc_free(out);
 *   }
 *   tb_fix_report_free(&rep);                 // also safe after a failure
 *
 * Steps: (1) tb_appendage_fix on a copy of `in` (tailbone/appendage.h),
 * skipped with bake.existing (the skeleton's own tail chains are baked as
 * they are weighted, tailbone/tailchain.h);
 * (2) with libraries, tb_retarget_docs (tailbone/retarget.h); (3) unless
 * no_bake, tb_bake (tailbone/bake.h); (4) every baked clip measured with
 * tb_measure_clip (tailbone/measure.h: tail, body and the tail/body seam).
 * bake.threads clips are baked and measured at once (also each blend-search
 * try's clips); the output and report are the same for any value.
 *
 * Weights (docs/fix.md): the blend zone and, on a welded tail, the collar
 * band are sized from the tail's geometry (ring spacing, radius) unless
 * repair.blend_zone / repair.collar_band pin them. Blend search: unless a
 * zone is pinned (or there is nothing to bake), when a baked clip tears —
 * tail or seam — or its tail goes past SPEC C's chain row (p99 1.18, max
 * 1.30), the smooth chains are weighted again with zones 0.375 and 0.5,
 * then (welded tails) collar bands 1 and 2 segments, each measured on the
 * same baked document with only the weights changed (detection, transfer
 * and bake run once); the first that meets the bar is kept, else the
 * best (fewest clips torn, least torn, fewest clips past the row). The
 * tries are in the report. Solver fit: when that best still tears, the
 * clips are baked once more with the bend limit (and, for a tail curled in
 * its bind pose, the rest curve) fitted to what the weights carry, unless
 * the caller set them or no_solver_fit, then measured and searched again;
 * the better result is kept. Detection and transfer run once: the fit
 * re-bakes the document as it was before the first bake.
 *
 * `in` is never modified: each attempt works on its own copy, made by
 * writing and re-reading it (lossless, docs/gltf.md). Reentrant: no global
 * state; separate calls may run on separate threads.
 */
#ifndef TAILBONE_FIX_H
#define TAILBONE_FIX_H

#include "tailbone/appendage.h"
#include "tailbone/bake.h"
#include "tailbone/common.h"
#include "tailbone/gltf.h"
#include "tailbone/measure.h"
#include "tailbone/retarget.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_fix_desc {
    tb_appendage_desc repair;   /* detection and weights; blend_zone > 0 pins it (no search) */
    tb_bake_desc bake;          /* solver and keys; its `only` is replaced by `only` below */
    int no_bake;                /* 1: repair (and transfer) only */
    tb_doc *const *libraries;   /* clip libraries to transfer first; NULL: none */
    int library_count;
    /* Libraries still loading (may be NULL): when set, called once, just
     * before the transfer (after the repair), and `libraries` is read only
     * after it returns TB_OK — the caller loads them on a thread of its own
     * meanwhile and waits for it there. Any other result ends the job with
     * it (err filled by the callback). Not called when the job ends before
     * the transfer. */
    tb_result (*libraries_ready)(void *user, tb_error *err);
    void *libraries_user;
    const char *const *only;    /* NULL-terminated clip names (transfer and bake); NULL: all */
    int foot_contact;           /* transfer with tb_retarget_desc.foot_contact */
    int rest_curve_given;       /* 1: bake.spring.params.rest_curve is the caller's, even 0
                                   (the solver fit below never changes it) */
    int no_solver_fit;          /* 1: never refit the solver to the weights (below) */
    int no_weight_fit;          /* 1: never fit the band's weights to the baked poses (below) */
    /* Called before each stage ("repair", "transfer clips", "bake", "measure",
     * "blend zone 0.375: again", ...); may be NULL. */
    void (*progress)(void *user, const char *stage);
    void *progress_user;
} tb_fix_desc;

#define TB_FIX_MAX_BENDS 32

/* SPEC C figures of one baked clip on the result. */
typedef struct tb_fix_stretch {
    int animation;
    char clip[128];
    tb_measure_result result;
    /* Largest bend of each tail joint over the clip (SPEC B's bend at that
     * joint: the angle of the joint's rotation from its rest, sampled at
     * the key rate), Tail_1 … Tail_K of every chain in skeleton order. */
    int bend_count;
    char bend_joint[TB_FIX_MAX_BENDS][32];
    float bend_rad[TB_FIX_MAX_BENDS];
    /* What the joint's chain weights carry (issue 13, "bend where the tail
     * can bend"): its chain's tb_fix_weights.carry_rad, the bend per joint
     * at which the blend's inner side shortens to the chain row; 0 where
     * not sized (one bone per piece, the skeleton's own chains). */
    float bend_carried_rad[TB_FIX_MAX_BENDS];
    int bends_past_carried;     /* joints whose largest bend here is past what they carry */
    /* The honest seam (issue 13): the edges where skin whose weights the
     * repair changed (against the input's, vertex by vertex) meets skin it
     * left alone — SPEC C's 50% groups count a welded tail's collar and the
     * start of its band as body. Measured by the blend search with the kept
     * weights (before they are quantised into the file); samples 0 when the
     * search did not run or found no such edge. */
    tb_stretch_stats repaired_seam;
    /* The same search's inner edges of the repaired skin: both ends
     * changed by the repair — SPEC C's tail and the edges of a welded
     * tail's collar band between two vertices both under half on Tail_*,
     * which SPEC C's groups count nowhere. samples 0 as above. */
    tb_stretch_stats repaired_inner;
} tb_fix_stretch;

/* One try of the blend-zone search. */
typedef struct tb_fix_zone_try {
    float blend_zone;
    int torn_clips;             /* clips whose tail or tail/body seam tears */
    float worst_torn;           /* largest torn fraction (tail or seam) over the clips */
    float collar_band;          /* welded tails: the collar band used (0: none welded) */
    float worst_max;            /* largest tail stretch over the clips */
    float worst_p99;            /* largest tail p99 over the clips */
    int collar_ring;            /* welded tails: the collar ring blended halfway to the chain */
    int spine_folded;           /* welded tails: the band's spine share on the chain's parent */
    int collar_carried;         /* welded tails: the collar's own weights over the whole band, no ring share */
    int by_strain;              /* welded tails: the band read by strain, the cut to four influences spread
                                   over it (docs/fix.md, session 16) */
    int fitted;                 /* the torn band's weights fitted to the baked poses (docs/fix.md, session 18) */
} tb_fix_zone_try;

/* The geometry one chain's blend was sized from (docs/fix.md). */
typedef struct tb_fix_weights {
    int appendage;              /* index in repair.appendages */
    int smooth;                 /* smooth weights (0: one bone per piece) */
    float ring_seg;             /* ring spacing along the chain, in segments */
    float radius_seg;           /* 75th-percentile skin radius, in segments */
    float zone;                 /* blend zone used, segments */
    float carry_rad;            /* bend the blend carries within the chain row: the
                                   inner side shortens by radius·θ over 2·zone segments,
                                   18% at θ = 0.36 zone / radius_seg */
    float sized_zone;           /* the zone sized from the tail's geometry, before the
                                   search (the solver fit's bind limit uses the smaller) */
    float ramp_zone;            /* the kept weights' steepest ramp along the tail, as a
                                   zone (0.5 / slope per segment): below `zone` where a
                                   welded collar's band steepens a joint's ramp; the
                                   solver fit's bind limit uses it too */
} tb_fix_weights;

#define TB_FIX_MAX_CHAINS 8

#define TB_FIX_MAX_TRIES 14

typedef struct tb_fix_report {
    tb_appendage_report repair; /* detection, decisions, chains (the kept attempt) */
    tb_retarget_report *retarget; /* tb_retarget_docs' report; NULL without libraries */
    int baked;                  /* the bake step ran (not no_bake) */
    tb_bake_report bake;        /* its report (chain_count 0: nothing to bake) */
    int stretch_count;
    tb_fix_stretch *stretch;    /* one per baked clip */
    int zone_try_count;         /* 0: no search happened */
    tb_fix_zone_try zone_tries[TB_FIX_MAX_TRIES];
    float blend_zone;           /* zone of the kept weights (0: no smooth chain) */
    float collar_band;          /* collar band of the kept weights (0: no welded tail) */
    int changed;                /* the output differs from the input */
    int weight_count;           /* chains below (at most TB_FIX_MAX_CHAINS) */
    tb_fix_weights weights[TB_FIX_MAX_CHAINS];
    int full_reruns;            /* attempts that redid repair, transfer and bake from a
                                   fresh copy: always 0 (the kept weights are written in
                                   place, a subset skin gaining the joints they need; the
                                   solver fit re-bakes without one) */
    /* Solver fit (docs/fix.md): when the best weights still tear, the job
     * is baked once more with the bend limit lowered to what the weights
     * carry (less each joint's share of the carry) and, where the bind pose
     * curls more per joint than that, the authored curve kept (restCurve
     * 1), and each joint's bend from its bind pose bounded (bind limit,
     * spring.h bind_limit_rad); the better of the two is kept. */
    int solver_fit_tried, solver_fit_kept;
    float fit_bend_limit_rad;   /* the limit tried (0: unchanged) */
    float fit_rest_curve;       /* the rest curve tried (-1: unchanged) */
    float fit_carry_rad;        /* the carry tried (-1: unchanged; 0: none) */
    float fit_bind_limit_rad;   /* the bend limit from the bind pose tried (0: none) */
    int bake_existing;          /* bake.existing: no repair; the skeleton's own chains baked */
    int bakes;                  /* times the clips were baked: 1, 2 when the solver fit was
                                   tried (each on the document repaired and transferred once) */
    /* Fitted to the poses (docs/fix.md, session 18): when what the search
     * and the solver fit kept still tears on the repaired skin, the band's
     * weights are fitted to the baked poses (a last try, zone_tries'
     * `fitted`); the vertices refitted when that try was kept, else 0. */
    size_t weights_fitted;
} tb_fix_report;

/* Runs the job on a copy of `in`; *out receives the result (free with
 * tb_doc_free). On failure *out is NULL and rep holds what was learnt (free
 * it either way). */
tb_result tb_fix_run(tb_doc **out, const tb_doc *in, const tb_fix_desc *desc, tb_fix_report *rep,
                     tb_error *err);

void tb_fix_report_free(tb_fix_report *rep);

/* The report as JSON text, as `tailbone fix --report` writes it: the
 * detection report's fields (tb_appendage_report_json_text) plus "changed",
 * "retarget", "blend_zone_search", "bake" and "stretch" (one row per clip:
 * tail, body and seam figures, tip travel, rotation), indented by `indent`
 * spaces (0: one line); free() it. NULL when out of memory. */
char *tb_fix_report_json_text(const tb_fix_report *rep, int indent);

/* Torn fraction of a stretch row: the tail's, or its seam's when larger. */
float tb_fix_torn(const tb_fix_stretch *s);

#ifdef __cplusplus
}
#endif
#endif
