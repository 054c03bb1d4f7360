/* tb_bake with one more task in its loop (fix's measuring prepared while
 * the clips are simulated). */
#ifndef TB_OFFLINE_BAKE_INTERNAL_H
#define TB_OFFLINE_BAKE_INTERNAL_H

#include "passes/pool_internal.h"
#include "tailbone/bake.h"
#include "tailbone/model.h"

/* tb_bake, and side(side_ctx, 0, worker) run as the last task of the loop
 * that simulates the clips (bake.threads threads): on the first thread
 * done with its clips, before any key is written, so side may read the
 * document (not write it) and nothing else the bake touches. Not run when
 * the bake ends before that loop (an error, no chain): the caller checks.
 * model, when not NULL, receives the bake's model of the document (no
 * normals; tb_model_load_desc's) as soon as it is loaded, before the loop:
 * the caller's to free, and to read only until tb__bake_beside returns. */
tb_result tb__bake_beside(tb_doc *doc, const tb_bake_desc *desc, tb_bake_report *report, tb__task_fn side,
                          void *side_ctx, tb_model **model, tb_error *err);

#endif
