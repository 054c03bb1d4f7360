/* tailbone/tailchain.h — tail chains a skeleton already has.
 *
 * Artists' rigs often carry their own tail bones: Quaternius animals
 * (Tail1…Tail8), the Khronos Fox (b_Tail01_012…b_Tail03_014), Blender rigs
 * (tail.001, DEF-tail_02, Fox_tail_3). tb_tail_chains_find recognises them
 *   - by name: a joint whose name holds the word "tail" (Tail1, b_Tail01,
 *     *_tail_*, foxTail2; not Ponytail, Pigtail, Cocktail), followed down
 *     through children whose names hold it too; tailbone's own Tail_1…
 *     chains are reported too (source TB_CHAIN_TAILBONE);
 *   - by structure: an unnamed run of joints with one child each that leaves
 *     the pelvis or a spine joint backwards, near the midline, with no role
 *     (no leg, arm or spine), and whose skin (vertices weighted mostly to
 *     it) lies behind its root.
 * The chain's parent is its anchor; on a skeleton where names and shape
 * find no hips, the anchor of a name-recognised chain leaving the skeleton
 * is taken as the pelvis (tb_model_load does it: role source "tail-root").
 *
 * tb_tail_chains_spring_desc fills a tb_spring_desc's explicit chains
 * (tailbone/spring.h) so the runtime drives them; tb_bake with
 * desc.existing does the same offline (`tailbone fix --bake-existing`).
 * The artist's weights are never changed. Offline layer; no state.
 */
#ifndef TAILBONE_TAILCHAIN_H
#define TAILBONE_TAILCHAIN_H

#include "tailbone/model.h"
#include "tailbone/spring.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_TAIL_CHAIN_MAX_BONES 64

typedef enum tb_tail_chain_source {
    TB_CHAIN_TAILBONE = 1, /* Tail_1 … (tb_tail_name_parse): made by tailbone */
    TB_CHAIN_NAME,         /* the artist's names say tail */
    TB_CHAIN_STRUCTURE     /* found by its place and its skin */
} tb_tail_chain_source;

typedef struct tb_tail_chain {
    tb_tail_chain_source source;
    int anchor;            /* skel joint the chain hangs from (pelvis or a spine joint) */
    int count;             /* bones in joints[] */
    int joints[TB_TAIL_CHAIN_MAX_BONES];
    int end_joint;         /* weightless leaf helper after the last bone, or -1 */
    float length;          /* bind-space length, anchor to the last bone's tip */
    size_t vertices;       /* skinned vertices whose largest weight is on the chain */
} tb_tail_chain;

/* "tailbone", "name", "structure". */
const char *tb_tail_chain_source_name(tb_tail_chain_source s);

/* 1 when the name holds the word "tail" as an artist writes it (see above). */
int tb_tail_word(const char *name);

/* Fills out[cap]; returns the number of chains found (may exceed cap: only
 * cap are written). tailbone's chains first, then named, then structural. */
int tb_tail_chains_find(const tb_model *m, tb_tail_chain *out, int cap);

/* A joint that can serve as the pelvis when no role says so: the anchor of
 * the first name-recognised artist chain, or -1. */
int tb_tail_chains_pelvis(const tb_model *m);

/* The character's up and forward in bind space for driving `c`: the model's
 * own (tb_model_axes) for a biped; otherwise up along the model's up axis
 * and forward opposite to the chain's horizontal direction (a tail points
 * backwards). */
void tb_tail_chain_axes(const tb_model *m, const tb_tail_chain *c, float up[3], float forward[3]);

/* Points d's explicit chains at the given chains (joints/lengths/ends are
 * caller storage of at least count * TB_TAIL_CHAIN_MAX_BONES, count, count
 * entries). */
void tb_tail_chains_spring_desc(const tb_tail_chain *chains, int count, int *joints, int *lengths,
                                int *ends, tb_spring_desc *d);

#ifdef __cplusplus
}
#endif
#endif
