/* tailbone/synth.h — synthetic rigged humanoids with known ground truth.
 *
 *   tb_doc *doc;
 *   char *truth;                                  // JSON text
 *   tb_synth_desc d = {0};                        // all-zero: defaults
 *   if (tb_synth_build(&doc, "tail_leg", &d, &truth, &err) == TB_OK) {
 *       tb_doc_save(doc, "fox.glb", &err);
 *       tb_file_save("fox.json", truth, strlen(truth), &err);
 *       free(truth);
 *       tb_doc_free(doc);
 *   }
 *
 * Every variant is a ~1.9 m humanoid (feet at y = 0, facing +Z, +Y up, the
 * character's left at +X) in a T-pose, skinned to the 22 Mixamo body bones,
 * with the weights an auto-rigger would give it: the body smoothly on its
 * nearest bones (tail_segmented: in rigid pieces, one bone per vertex), the appendage (tail, cape, skirt, scabbard, ears, hair)
 * weighted wrongly in the ways real files show (SPEC 0). Six clips ride on
 * the skeleton: Walk, Sprint, Idle, Crouch, HipSweep, BackFlip.
 * docs/synth.md describes each variant and the truth JSON.
 *
 * Output is a pure function of (variant, desc): the same seed gives
 * byte-identical GLB and truth. Nothing is global; the calls are
 * thread-safe.
 *
 * Ownership: tb_synth_build returns a doc freed by tb_doc_free and, when
 * truth is non-NULL, the truth as JSON text (as `tailbone synth --truth`
 * writes it: one-space indent, keys in order), released with free(). Variant
 * names are static strings.
 */
#ifndef TAILBONE_SYNTH_H
#define TAILBONE_SYNTH_H

#include <stdint.h>

#include "tailbone/common.h"
#include "tailbone/gltf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_synth_units {
    TB_SYNTH_UNITS_DEFAULT = 0, /* the variant's own choice */
    TB_SYNTH_UNITS_M,           /* positions in metres, armature unscaled */
    TB_SYNTH_UNITS_CM           /* positions and joints in cm under an armature scaled 0.01 (Mixamo/FBX) */
} tb_synth_units;

typedef enum tb_synth_names {
    TB_SYNTH_NAMES_DEFAULT = 0, /* the variant's own choice */
    TB_SYNTH_NAMES_MIXAMO,      /* "mixamorig:Hips" */
    TB_SYNTH_NAMES_BARE         /* "Hips" */
} tb_synth_names;

typedef struct tb_synth_desc {
    uint32_t seed;        /* 0 == TB_SYNTH_DEFAULT_SEED; varies clip amplitudes and fur, never the truth's sizes */
    tb_synth_units units; /* 0 == the variant's */
    tb_synth_names names; /* 0 == the variant's */
    int vary;             /* tb_synth_onto only: nonzero, the seed also draws the tail's proportions
                           * (radius, length, skin gap, pieces and their gaps, fur width; docs/synth.md) */
} tb_synth_desc;

#define TB_SYNTH_DEFAULT_SEED 1u

/* Number of variants, and their names in a stable order ("plain",
 * "tail_leg", …); NULL when i is out of range. */
int tb_synth_variant_count(void);
const char *tb_synth_variant_name(int i);
/* One-line description of variant i; NULL when out of range. */
const char *tb_synth_variant_summary(int i);
/* Index of a variant by name, or -1. */
int tb_synth_variant_find(const char *name);

/* Builds a variant. desc may be NULL (all defaults). On success *out is a
 * validated document (tb_doc_refresh passed) and, if truth is non-NULL,
 * *truth the ground truth (docs/synth.md). Fails with TB_ERR_ARG for an
 * unknown variant or an out-of-range desc field, TB_ERR_OOM on allocation
 * failure. */
tb_result tb_synth_build(tb_doc **out, const char *variant, const tb_synth_desc *desc,
                         char **truth, tb_error *err);

/* ---- fixtures on other bodies (docs/synth.md "Fixtures on real bodies") ----
 *
 *   tb_doc *body, *doc; char *truth;
 *   tb_doc_load(&body, "Xbot.glb", NULL, &err);
 *   tb_synth_onto(&doc, body, "hang_shell_leg", NULL, &truth, &err);
 *
 * Adds a tail and/or clothing to a rigged, tail-less humanoid in its bind
 * space (sizes are fractions of its height H, placed from its own joints and
 * skin) as new skinned mesh nodes appended after everything else, so the
 * body's vertices keep their tb_model indices (those of
 * tb_synth_skin_parts' body when it is built of rigid parts). `body` is only read. On
 * success *out is a new validated doc (tb_doc_free) and *truth, when truth
 * is non-NULL, the ground truth as JSON text (free()). desc->seed varies the fur's
 * irregularity only; units and names are ignored. Fails with TB_ERR_ARG for
 * an unknown fixture (or a rigid-body fixture on a body that is not the
 * synthetic one), TB_ERR_NO_SKIN / TB_ERR_NO_HIPS when the body has no skin
 * or lacks hips, legs or a spine, TB_ERR_INVALID when a part cannot be laid
 * on this body (the message says why). */
int tb_synth_fixture_count(void);
const char *tb_synth_fixture_name(int i);
const char *tb_synth_fixture_summary(int i);
int tb_synth_fixture_find(const char *name);
/* 1 when fixture i works only on the synthetic body (it rebuilds it in rigid pieces). */
int tb_synth_fixture_needs_synth_body(int i);
tb_result tb_synth_onto(tb_doc **out, const tb_doc *body, const char *fixture, const tb_synth_desc *desc,
                        char **truth, tb_error *err);

/* A body built of rigid parts — meshes parented to bone nodes instead of
 * skinned, like three.js's RobotExpressive — made into the skinned body an
 * auto-rigger's export of it would be: each part 100% on the joint it hangs
 * from (skin 0), its vertices moved into the bind space so it stands where
 * it stood, on a new root node (the bone node keeps its place, without the
 * mesh). tb_synth_onto does this itself; this is the body its fixtures'
 * truth counts vertices of. *parts (may be NULL): the parts skinned; 0 and
 * an unchanged copy when there are none. `body` is only read. */
tb_result tb_synth_skin_parts(tb_doc **out, const tb_doc *body, int *parts, tb_error *err);

#ifdef __cplusplus
}
#endif
#endif
