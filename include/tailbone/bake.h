/* tailbone/bake.h — bake the simulated tail into every clip (SPEC D).
 *
 *   tb_bake_desc desc = {0};                 // 30 fps, SPEC solver defaults
 *   tb_bake_report rep;
 *   if (tb_bake(doc, &desc, &rep, &err) == TB_OK) { ... tb_bake_report_free(&rep); }
 *
 * For each selected clip of a document whose skeleton has Tail_* chains, the
 * spring solver (tailbone/spring.h) is run over the clip and the tail bones'
 * rotations are sampled as ordinary keyframes, merged into that animation as
 * new samplers and channels; its other channels are untouched. Before
 * recording, the tail is warmed up silently: a looping clip is played until
 * the tail's state at the loop start repeats within desc.loop_tolerance_rad
 * (at most desc.max_passes passes; the tip settles last) — pass after pass,
 * or every n passes (2..4: a chain the ground or its limits switch between
 * branches, whose seam is then spread over the loop's keys; see
 * tb_bake_clip.period) — a non-looping clip first settles on its first
 * frame. Where the loop-start state converges geometrically from pass to
 * pass, the warm-up jumps to where that sequence ends and plays on from
 * there (tb_bake_clip.warmup_jumps; off with desc.no_warmup_jump). Clips
 * that already carry keys on the tail bones are left alone (reported as
 * "already baked"), except with desc.existing (the skeleton's own chains,
 * below).
 *
 * The doc is edited in place (tb_doc_refresh is called); on failure it may be
 * partly edited — work on a copy you can drop. Offline layer: allocates.
 */
#ifndef TAILBONE_BAKE_H
#define TAILBONE_BAKE_H

#include "tailbone/gltf.h"
#include "tailbone/model.h"
#include "tailbone/spring.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_loop_mode {
    TB_LOOP_AUTO = 0, /* a clip whose last pose equals its first loops */
    TB_LOOP_ALWAYS,
    TB_LOOP_NEVER
} tb_loop_mode;

typedef struct tb_bake_desc {
    float fps;                 /* 0 → 30: key rate */
    int max_passes;            /* 0 → 24: warm-up passes over a looping clip */
    float loop_tolerance_rad;  /* 0 → 0.1° (0.001745): loop-start state repeat */
    float settle_s;            /* 0 → 4 s: longest settle on a non-looping clip's first frame */
    tb_loop_mode loop;         /* default auto */
    const char *const *only;   /* NULL, or NULL-terminated clip names to bake */
    tb_spring_desc spring;     /* solver parameters; all-zero = SPEC defaults */
    float world_units_per_m;   /* 0 → from the character's world height: 100 when it is
                                  over 25 units tall (a centimetre scene), 1000 over 2500
                                  (millimetres), else 1. The solver's lengths (gravity,
                                  clearance, teleport distance) are scaled by it so the tail
                                  moves the same in any unit */
    int ground_as_given;       /* 0: when spring.params.ground_y_m is 0, the ground is on and
                                  the skeleton has feet, the ground is put at the soles: the
                                  lowest skin not dominated by the tail in the bind pose
                                  (world units), if that is more than 2% of H away from
                                  y = 0 (a model whose origin is at its hips); 1: use
                                  spring.params as given */
    /* The skeleton's own tail chains (tailbone/tailchain.h: an artist's Tail1…,
     * b_Tail01…, found by name or structure) instead of Tail_* chains; the
     * artist's weights stay. Their rest pose is the artist's: carry and
     * rest_curve left 0 in spring.params mean no carry and the authored
     * curve (β = 1) here. Clips with keys on those bones are baked too. */
    int existing;
    /* existing: 0 replaces the artist's rotation keys on the chain bones by
     * the spring's (the default); in (0, 1] each written key is
     * slerp(spring, artist, existing_keep): the artist's motion kept in
     * that share. Either way the old rotation channels of those bones are
     * removed (their samplers and accessors stay, unused). */
    float existing_keep;
    /* Clips simulated at once, each on its own thread and solver (0 or 1:
     * one at a time, in the calling thread). The keys are written in clip
     * order afterwards, so the document is byte-identical for any value.
     * tb_fix_run measures its clips with the same number of threads. */
    int threads;
    /* 1: the warm-up plays pass after pass only (SPEC D's plain iteration).
     * 0 (the default): after three passes whose loop-start states approach
     * one state geometrically (each step ρ times the last, 0 < ρ <= 0.95,
     * within a third of the step), the solver's state is put where that
     * sequence ends (Aitken's Δ²: x + d ρ / (1 − ρ)) and the passes go on
     * from there; the loop closes by the same test either way, on passes
     * played after the jump. Fewer passes (the Wolf's Idle under the
     * Soldier's clips: 18 → 9) and a closer loop. */
    int no_warmup_jump;
} tb_bake_desc;

typedef struct tb_bake_clip {
    char name[128];
    int animation;             /* index in the doc */
    int skipped;               /* 1: not baked (see reason) */
    char reason[96];
    int looping;
    int wraps;                 /* looping, and the clip stops one frame before its start:
                                  the player wraps from the last key to the first */
    int passes;                /* warm-up passes (looping) or settle frames (not) */
    int warmup_jumps;          /* looping: times the warm-up put the state where its passes
                                  were heading (SPEC D; bake.c tb__run_jump) */
    int period;                /* looping: the warm-up's loop-start state repeated every
                                  `period` passes (1; 2..4: a cycle of several passes,
                                  its seam spread, below); 0: it never repeated */
    float seam_spread_rad;     /* period > 1: the seam between the cycle's branches (the
                                  largest angle of any tail bone), spread over the loop's
                                  keys so the last key (or the wrapped state) is the first;
                                  0: none spread */
    int keys;                  /* keys written per tail bone */
    float duration_s;
    float closure_rad;         /* largest angle of any tail bone between its first key and
                                  its last key (or, when wraps, its state after the wrap) */
    float swing_rad;           /* largest angle of any tail bone from its first key */
} tb_bake_clip;

typedef struct tb_bake_report {
    int chain_count;           /* tail chains found */
    float world_units_per_m;   /* the scene unit used (see tb_bake_desc) */
    float ground_y_m;          /* world height of the ground plane the solver used */
    int bone_count;            /* keyed bones over all chains */
    int clip_count;
    tb_bake_clip *clips;
} tb_bake_report;

tb_bake_desc tb_bake_desc_defaults(const tb_bake_desc *d);

/* The solver description bake uses for a model: d->spring with its lengths
 * in the scene's units and the ground at the soles (both as documented in
 * tb_bake_desc). Also what `tailbone measure` animates its chain row with.
 * units/ground_y (may be NULL) receive the values chosen. */
tb_spring_desc tb_bake_spring_desc(const tb_model *m, const tb_bake_desc *d, float *units, float *ground_y);
/* Errors: TB_ERR_NO_SKIN, TB_ERR_ARG (a name in desc->only matches no clip),
 * whatever loading the model/clips or the solver reports. A file with no
 * Tail_* chain is not an error: report.chain_count is 0 and nothing changes. */
tb_result tb_bake(tb_doc *doc, const tb_bake_desc *desc, tb_bake_report *report, tb_error *err);
void tb_bake_report_free(tb_bake_report *report);

#ifdef __cplusplus
}
#endif
#endif
