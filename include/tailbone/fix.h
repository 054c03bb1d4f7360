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
 * Steps: (1) tb_appendage_fix on a copy of `in` (tailbone/appendage.h);
 * (2) with libraries, tb_retarget_docs (tailbone/retarget.h); (3) unless
 * no_bake, tb_bake (tailbone/bake.h); (4) every baked clip measured with
 * tb_measure_clip (tailbone/measure.h: tail, body and the tail/body seam).
 *
 * Blend-zone search (docs/fix.md): unless repair.blend_zone pins a zone (or
 * there is nothing to bake), a job whose baked clips tear — tail or seam —
 * and whose chain has smooth weights is run again with zones 0.375 and 0.5;
 * a tail welded into the body that still tears is then run with collar
 * bands 1 and 2 segments (unless repair.collar_band is set); the first that
 * tears nowhere is kept, else the least torn. The tries are in the report.
 *
 * `in` is never modified: each attempt works on its own copy, made by
 * writing and re-reading it (lossless, docs/gltf.md). Reentrant: no global
 * state; separate calls may run on separate threads.
 */
#ifndef TAILBONE_FIX_H
#define TAILBONE_FIX_H

#include <jansson.h>

#include "tailbone/appendage.h"
#include "tailbone/bake.h"
#include "tailbone/common.h"
#include "tailbone/gltf.h"
#include "tailbone/measure.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_fix_desc {
    tb_appendage_desc repair;   /* detection and weights; blend_zone > 0 pins it (no search) */
    tb_bake_desc bake;          /* solver and keys; its `only` is replaced by `only` below */
    int no_bake;                /* 1: repair (and transfer) only */
    tb_doc *const *libraries;   /* clip libraries to transfer first; NULL: none */
    int library_count;
    const char *const *only;    /* NULL-terminated clip names (transfer and bake); NULL: all */
    int foot_contact;           /* transfer with tb_retarget_desc.foot_contact */
    /* Called before each stage ("repair", "transfer clips", "bake", "measure",
     * "blend zone 0.375: again", ...); may be NULL. */
    void (*progress)(void *user, const char *stage);
    void *progress_user;
} tb_fix_desc;

/* SPEC C figures of one baked clip on the result. */
typedef struct tb_fix_stretch {
    int animation;
    char clip[128];
    tb_measure_result result;
} tb_fix_stretch;

/* One try of the blend-zone search. */
typedef struct tb_fix_zone_try {
    float blend_zone;
    int torn_clips;             /* clips whose tail or tail/body seam tears */
    float worst_torn;           /* largest torn fraction (tail or seam) over the clips */
    float collar_band;          /* welded tails: the collar band used (0: none welded) */
} tb_fix_zone_try;

#define TB_FIX_MAX_TRIES 6

typedef struct tb_fix_report {
    tb_appendage_report repair; /* detection, decisions, chains (the kept attempt) */
    json_t *retarget;           /* tb_retarget_docs' report; NULL without libraries */
    int baked;                  /* the bake step ran (not no_bake) */
    tb_bake_report bake;        /* its report (chain_count 0: nothing to bake) */
    int stretch_count;
    tb_fix_stretch *stretch;    /* one per baked clip */
    int zone_try_count;         /* 0: no search happened */
    tb_fix_zone_try zone_tries[TB_FIX_MAX_TRIES];
    float blend_zone;           /* zone of the kept weights (0: no smooth chain) */
    float collar_band;          /* collar band of the kept weights (0: no welded tail) */
    int changed;                /* the output differs from the input */
} tb_fix_report;

/* Runs the job on a copy of `in`; *out receives the result (free with
 * tb_doc_free). On failure *out is NULL and rep holds what was learnt (free
 * it either way). */
tb_result tb_fix_run(tb_doc **out, const tb_doc *in, const tb_fix_desc *desc, tb_fix_report *rep,
                     tb_error *err);

void tb_fix_report_free(tb_fix_report *rep);

/* The report as JSON: the detection report's fields (tb_appendage_report_json)
 * plus "changed", "retarget", "blend_zone_search", "bake" and "stretch" (one
 * row per clip: tail, body and seam figures, tip travel, rotation). */
json_t *tb_fix_report_json(const tb_fix_report *rep);

/* Torn fraction of a stretch row: the tail's, or its seam's when larger. */
float tb_fix_torn(const tb_fix_stretch *s);

#ifdef __cplusplus
}
#endif
#endif
