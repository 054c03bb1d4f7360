/* The small tailed rig several tests build by hand (test_bake, test_oracles):
 * Root → Hips → Tail_1, Tail_2, Tail_3 → Tail_End, the hips at y = 1 and the
 * tail going back (−Z) and a little down, and a strip of skin along the
 * tail (two vertices at each bone's tip, each wholly on that bone). Linked
 * into every test but the runtime's own (test_rt_*). */
#ifndef TBT_RIG_H
#define TBT_RIG_H

#include "gltf/doc_json.h"

/* The rig's bind positions, world = model space: Root, Hips, the tail's
 * four joints. */
extern const float tbt_rig_pos[6][3];

/* A new doc named `name` with the rig's nodes, mesh, skin and scene but no
 * animation and no refresh: the caller adds its clips to tb_doc_json(doc),
 * then calls tb_doc_refresh. with_tail = 0 names the bones Bone_1…,
 * Bone_End (no chain). The hips are node 1. */
tb_doc *tbt_tail_rig(const char *name, int with_tail);

/* The synthetic character `variant` (tb_synth_build, default desc) with
 * its appendages repaired (tb_appendage_fix's defaults): the tail on a
 * Tail_* chain of its own, ready to bake. NULL when either step fails. */
tb_doc *tbt_synth_repaired(const char *variant);

/* Adds count floats as a new accessor of `type` ("SCALAR", "VEC3"…). */
int tbt_add_floats(tb_doc *doc, const float *v, size_t count, const char *type);

#endif
