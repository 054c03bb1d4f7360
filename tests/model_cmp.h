/* Comparing two models' skin weights by joint name (test_fix_bar,
 * test_fix_corpus_body): a repair adds joints, so indices differ between
 * input and output. Linked into every test but the runtime's own. */
#ifndef TBT_MODEL_CMP_H
#define TBT_MODEL_CMP_H

#include <stddef.h>

#include "tailbone/model.h"

/* The weight of vertex v on the joint named `name` (0 when none). */
float tbt_weight_by_name(const tb_model *m, size_t v, const char *name);

/* 1 when some joint's weight on v differs (by more than 1e-6) between a
 * and b, either side's joints compared by name. */
int tbt_weights_differ(const tb_model *a, const tb_model *b, size_t v);

#endif
