/* Private: a tail chain's weights kept as a plan after the repair, so fix's
 * search over blends re-applies only the weights (no detection, transfer or
 * bake again). Made by chain.c, used by fix.c. Not installed. */
#ifndef TB_WEIGHTS_INTERNAL_H
#define TB_WEIGHTS_INTERNAL_H

#include "tailbone/appendage.h"
#include "tailbone/model.h"

typedef struct tb__weight_plan tb__weight_plan;

/* tb_appendage_fix, also handing back the plan of its chains' weights
 * (*plan NULL when no chain was made; free with tb__weight_plan_free). */
tb_result tb__appendage_fix_plan(tb_appendage_report *out, tb_doc *doc, const tb_appendage_desc *desc,
                                 tb__weight_plan **plan, tb_error *err);
void tb__weight_plan_free(tb__weight_plan *p);

/* Chains with smooth weights (a blend to choose); of them, welded ones. */
int tb__weight_plan_smooth(const tb__weight_plan *p);
int tb__weight_plan_welded(const tb__weight_plan *p);

/* The tail geometry the weights were chosen from, for chain i (< count):
 * report index, ring spacing and 75th-percentile radius in segments. */
int tb__weight_plan_count(const tb__weight_plan *p);
void tb__weight_plan_geometry(const tb__weight_plan *p, int i, int *app, float *ring_seg, float *radius_seg,
                              int *smooth);
/* Chain i's blend zone as sized from its geometry (SPEC A9's 0.25 raised,
 * tb__zone_for; as given when the repair pinned it). */
float tb__weight_plan_sized_zone(const tb__weight_plan *p, int i);
/* Chain i's written weights (the repair's, or the last tb__weight_plan_write)
 * read as a zone: 0.5 / the steepest change of a chain bone's weight per
 * segment along the tail (chain.c, tb__chain_ramp_zone); 0 when unknown. */
float tb__weight_plan_ramp_zone(const tb__weight_plan *p, int i);
/* Sets it back (the fit re-bakes the document as detection left it: the
 * ramps of the weights written then, not of the search's last try). */
void tb__weight_plan_set_ramp_zone(tb__weight_plan *p, int i, float z);

/* The repair's do-no-harm comparison (SPEC A10; chain.c): changed[v] = 1
 * for each vertex v not skipped (skip NULL or skip[v] == 0) whose weight
 * on some joint name (joints are told apart by name across the two
 * skeletons; a joint without one is left out) differs by more than 1/255
 * between models a and b, else 0. Fails when the vertex counts differ. */
tb_result tb__changed_by_name(const tb_model *a, const tb_model *b, const uint8_t *skip, uint8_t *changed,
                              tb_error *err);

/* mark[v] = 1 for every vertex the plan may reweight (v < V): the chains'
 * and their welded collar rings. */
void tb__weight_plan_mark(const tb__weight_plan *p, uint8_t *mark, size_t V);

/* mask[v] (v < M's vertex_count) for each vertex the plan may reweight: 1
 * when its weights in joints/weights (M's layout; NULL: M's own) differ
 * from its own before the repair, else 0 — the honest seam is where a
 * marked vertex meets an unmarked one (issue 13). Other entries untouched. */
void tb__weight_plan_changed(const tb__weight_plan *p, const tb_model *M, const uint16_t *joints,
                             const float *weights, uint8_t *mask);

/* Variants of a welded band's weights, the weights below computed with
 * the bits given set (0: none, as after the repair; fix's search tries them
 * when the seam still tears, docs/fix.md):
 * - TB__PLAN_COLLAR_RING: each welded tail's collar ring (the body skin
 *   where the tail joins it) also moves halfway to the chain's root weights
 *   (SPEC A9 leaves the collar to the body);
 * - TB__PLAN_SPINE_FOLDED: each welded band's spine share goes on the
 *   chain's parent, the band pulled toward the collar by strain (chain.c,
 *   tb__fold_spine);
 * - TB__PLAN_COLLAR_CARRIED: each welded band carries its collar weights
 *   (the relaxed seam field) over the whole band, fading as 1 − t, without
 *   the weld ring's shared part (chain.c, tb__blend_welded_collar);
 * - TB__PLAN_BY_STRAIN: each welded band's seam field weighs every edge by
 *   strain (ℓ / |e|²), and the body joints the cut to four influences takes
 *   fade out over the band's graph instead of at one edge (chain.c,
 *   tb__cut_spread). */
enum { TB__PLAN_COLLAR_RING = 1, TB__PLAN_SPINE_FOLDED = 2, TB__PLAN_COLLAR_CARRIED = 4, TB__PLAN_BY_STRAIN = 8 };
void tb__weight_plan_variant(tb__weight_plan *p, int bits);

/* Joints/weights in M's layout (vertex_count × M->influences; M loaded from
 * the repaired document): M's own, with every smooth chain's vertices
 * weighted for blend zone `zone` and collar band `band` (segments; the
 * tail's geometry raises them unless the repair pinned them). *zone_used and
 * *band_used (may be NULL) receive the first smooth chain's. as_given: no
 * raise (the SPEC's weights as written, one of the search's tries). Fails with
 * TB_ERR_ARG when M is not the repaired skin. */
tb_result tb__weight_plan_weights(const tb__weight_plan *p, const tb_model *M, float zone, float band, int as_given,
                                  uint16_t *joints, float *weights, float *zone_used, float *band_used,
                                  tb_error *err);

/* Writes those weights into `doc` (M loaded from it) and refreshes it;
 * rep's chains get the zone and band used. A subset skin (one mesh's, with
 * only the joints it uses) that lacks a joint the weights need gains it and
 * its inverse bind matrix, as in the repair. */
tb_result tb__weight_plan_write(const tb__weight_plan *p, tb_doc *doc, const tb_model *M, float zone, float band,
                                int as_given, tb_appendage_report *rep, tb_error *err);

/* Writes joints/weights (M's layout, at most four nonzero a vertex; M
 * loaded from doc) into doc for every vertex the plan may reweight whose
 * weights there differ from M's own, and refreshes it: weights that no plan
 * variant gives (fitband.c's), written as tb__weight_plan_write writes. */
tb_result tb__weight_plan_write_given(const tb__weight_plan *p, tb_doc *doc, const tb_model *M,
                                      const uint16_t *joints, const float *weights, tb_error *err);

/* Band weights fitted to the baked poses (fitband.c; docs/fix.md, "Fitted
 * to the poses"): the vertices of `allowed` (V bytes) at an edge of
 * `edges` (tb_measure_edges' form; every edge at an allowed vertex) torn
 * at one of the n clips' measured instants (loops[c]: the clip's
 * tb_measure_desc.loop), and four rings of allowed vertices around them,
 * refitted in jo/wo (M's layout, in place) to keep their edges at their
 * bind length over the clips; the sweep that tears least, or jo/wo as
 * given when none tears less. *fitted: the vertices refitted (0: none). */
tb_result tb__fit_band(const tb_model *M, const tb_clip *const *clips, const int *loops, int n, const uint64_t *edges,
                       size_t ne, const uint8_t *allowed, uint16_t *jo, float *wo, size_t *fitted, tb_error *err);

#endif
