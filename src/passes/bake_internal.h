/* tb_bake with the caller's work beside it (fix's measuring: its setup
 * while the clips are simulated, each clip as soon as its keys stand). */
#ifndef TB_OFFLINE_BAKE_INTERNAL_H
#define TB_OFFLINE_BAKE_INTERNAL_H

#include "passes/pool_internal.h"
#include "tailbone/bake.h"
#include "tailbone/clip.h"
#include "tailbone/model.h"

/* What tb__bake_beside calls, each with ctx; any may be NULL.
 * - loaded(ctx, m): on the calling thread, as soon as the bake's model of
 *   the document (no normals; tb_model_load_desc's) is loaded, before the
 *   loop that simulates the clips. The model is the caller's from then on:
 *   to free, and to read only until tb__bake_beside returns.
 * - side(ctx, 0, worker): a task of that loop (bake.threads threads)
 *   after the groups', ended before any key is written: it may read the
 *   document, not write it, nor anything else the bake touches.
 * - keyed(ctx, c, clip, group): report clip c's keys stand; clip is the
 *   clip tb_clip_load will read back from the document once they are
 *   written (the same channels, times and values), valid during the call.
 *   Called in the loop by the group of clips that simulated it (group <
 *   min(bake.threads, the document's animation count): one group's calls
 *   never overlap), possibly before side has begun or ended (keyed does
 *   side's work itself, or waits for it, when it needs it) and beside
 *   other groups' simulation and keyed calls, and beside the loop's last
 *   task, which writes every clip's keys into the document once all
 *   stand and side has ended: keyed must not read the document.
 * None runs when the bake ends before that loop (an error, no chain): the
 * caller checks.
 * model, where non-NULL, is the document's model as the bake would load it
 * (tb_model_load_desc, no normals), taken instead of loading one: the
 * bake's from the call on, handed to loaded as its own would be, else freed
 * (fix.c hands on the transfer's, tb__retarget_docs_keep). */
typedef struct tb__bake_hooks {
    void *ctx;
    tb_model *model;
    void (*loaded)(void *ctx, tb_model *m);
    tb__task_fn side;
    void (*keyed)(void *ctx, int clip, const tb_clip *keyed, int group);
} tb__bake_hooks;

/* tb_bake, with the hooks (NULL: none). */
tb_result tb__bake_beside(tb_doc *doc, const tb_bake_desc *desc, tb_bake_report *report, const tb__bake_hooks *hooks,
                          tb_error *err);

#endif
