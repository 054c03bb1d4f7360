/* A repair's input against its output (test_fix_bar,
 * test_fix_corpus_body): skin weights compared by joint name (a repair adds
 * joints, so indices differ between input and output), and a clip measured
 * on both. Linked into every test but the runtime's own. */
#ifndef TBT_MODEL_CMP_H
#define TBT_MODEL_CMP_H

#include <stddef.h>

#include <stdint.h>

#include "tailbone/fix.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"

/* The weight of vertex v on the joint named `name` (0 when none). */
float tbt_weight_by_name(const tb_model *m, size_t v, const char *name);

/* 1 when some joint's weight on v differs (by more than 1e-6) between a
 * and b, either side's joints compared by name. */
int tbt_weights_differ(const tb_model *a, const tb_model *b, size_t v);

/* Per vertex of mi: 1 where tbt_weights_differ (calloc'd, one spare byte;
 * the caller frees); *count: how many. */
uint8_t *tbt_repaired_mask(const tb_model *mi, const tb_model *mo, size_t *count);

/* The clip of rep's stretch entry c (looping as the bake baked it) measured
 * on the input (r[0]: in, mi) and the output (r[1]: out, mo), mask as the
 * tail mask; pos, when not NULL, the two sides' positions_out buffers. */
void tbt_measure_in_out(const tb_doc *in, const tb_doc *out, const tb_model *mi, const tb_model *mo,
                        const tb_fix_report *rep, int c, const uint8_t *mask, float *const pos[2],
                        tb_measure_result r[2]);

/* Gives the mesh node named `node_name` a skin of its own that lists only
 * the joints its vertices use and the skin's first (FBX converters write
 * one skin per mesh so), in reversed order (an order of its own), with
 * those joints' inverse bind matrices; keep_first: the skin's first joint
 * too, used or not (some exporters keep the root). */
void tbt_give_own_subset_skin(tb_doc *doc, const char *node_name, int keep_first);

/* Whether `tailbone fix --report`'s JSON of rep (one line,
 * tb_fix_report_json_text) contains every one of the NULL-terminated
 * needles. */
int tbt_fix_report_says(const tb_fix_report *rep, const char *const *needles);

#endif
