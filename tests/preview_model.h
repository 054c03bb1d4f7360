/* Builds web/preview_core.c's object from a model and clip loaded by the
 * offline layer, the way the page builds it from `tailbone preview`'s data
 * (tests/preview_ref.c, tests/test_preview.c). */
#ifndef TBT_PREVIEW_MODEL_H
#define TBT_PREVIEW_MODEL_H

#include "tailbone/clip.h"
#include "tailbone/model.h"
#include "../web/preview_core.h"

/* mask: one byte per vertex, or NULL for the Tail_* weights (as measure). */
tb_pv *tbt_pv_from_model(const tb_model *m, const uint8_t *mask);
/* Returns the clip's index in c, or -1. */
int tbt_pv_add_clip(tb_pv *c, const tb_clip *clip);
/* The spring description `fix` bakes with (tb_bake_spring_desc). */
int tbt_pv_spring(tb_pv *c, const tb_model *m);

#endif
