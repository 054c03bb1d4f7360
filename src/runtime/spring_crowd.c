/* A crowd of spring animators (SPEC B): tb_spring_step_batch_fast()'s
 * blocks, fixed once, with their lanes kept between frames.
 *
 * The batch steps copy each block's chains from the animators' links into
 * SIMD lanes and back every call (spring_lanes.h, tb__gather and
 * tb__scatter: three 16-word transposes in and two out per link, and each
 * link's rest vectors turned into the hips frame again). A crowd forms the
 * same blocks once, at init, in caller memory: each block keeps its lanes
 * (TB__LANE_LINK_VECS vectors per link) and the animators' links are
 * written only when the crowd syncs. A frame in lanes reads the anchors,
 * runs the block's sub-steps and writes the outputs (tb__crowd_body); the
 * results are tb_spring_step_batch_fast()'s bit for bit, since the lanes,
 * the blocks' widths and the arithmetic are the same. Frames the lanes do
 * not take (cold starts, teleports, insane anchors, held poses, animators
 * of one block cutting the frame differently, an opt-in rule switched on
 * since init) run the whole crowd through tb_spring_step_batch_fast() after
 * a sync. No allocation, no I/O, no global state.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "core/base.h"
#include "runtime/spring_internal.h"

#if defined(__GNUC__) || defined(__clang__)

#include "runtime/spring_bucket.h"

#define TB__CROWD_ALIGN 64

typedef struct tb__crowd_block {
    tb__bucket b; /* chains fixed at init; frames and arrays each step */
    int n;        /* links per chain */
    int item[TB__MAX_LANES];
    tb__lane_ids ids[TB__MAX_LANES]; /* the outputs' rows */
    float consts_h; /* the sub-step the lanes' chain constants are for */
    void *lanes;    /* n tb__lane_link and a tb__lane_chain of the block's build */
} tb__crowd_block;

/* The bytes of a block's lanes, n links, at most TB__MAX_LANES wide. */
#define TB__CROWD_LANE_BYTES(n)                                                                    \
    (((size_t)(n) * TB__LANE_LINK_VECS + TB__LANE_CHAIN_VECS) * 4 * TB__MAX_LANES)

struct tb_spring_crowd {
    int count, path, block_count, other_count;
    int gathered; /* the lanes hold the state (else the links do) */
    tb_spring_animator **anims;
    int *others; /* animators stepped by tb_spring_step_batch_fast */
    tb_spring_batch_item *scratch;
    tb__crowd_block *blocks;
};

static size_t tb__up(size_t x)
{
    return (x + TB__CROWD_ALIGN - 1) & ~(size_t)(TB__CROWD_ALIGN - 1);
}

/* Every chain of a can go in lanes (the batch driver's rule, less what
 * changes from frame to frame). */
static int tb__crowd_fits(const tb_spring_animator *a)
{
    if (!a->lane_out_all || a->chain_count < 1)
        return 0;
    for (int ci = 0; ci < a->chain_count; ci++) {
        const tb__chain *c = &a->chains[ci];
        if (c->link_count > TB__LANE_MAX_LINKS || c->contact_keeps_limit ||
            c->cos_bind_max > -1.5f)
            return 0;
    }
    return 1;
}

/* The blocks, as tb__batch_drive fills its buckets: chains in order, by
 * link count, a block closed when `width` chains are in. With cr NULL only
 * counts: *blocks, *others and the lanes' bytes (returned). With cr, fills
 * its blocks (lanes from *cursor on). */
static size_t tb__crowd_plan(tb_spring_animator *const *anims, int count, int path,
                             tb_spring_crowd *cr, char **cursor, int *blocks, int *others)
{
    const int width = path == TB__PATH_AVX512 ? 16 : 8;
    int open[TB__LANE_MAX_LINKS + 1], fill[TB__LANE_MAX_LINKS + 1];
    for (int n = 0; n <= TB__LANE_MAX_LINKS; n++)
        open[n] = -1;
    size_t bytes = 0;
    *blocks = *others = 0;
    for (int it = 0; it < count; it++) {
        tb_spring_animator *a = anims[it];
        if (!tb__crowd_fits(a)) {
            if (cr)
                cr->others[*others] = it;
            ++*others;
            continue;
        }
        for (int ci = 0; ci < a->chain_count; ci++) {
            const int n = a->chains[ci].link_count;
            const size_t lane_bytes = tb__up(TB__CROWD_LANE_BYTES(n));
            if (open[n] < 0) {
                open[n] = (*blocks)++;
                fill[n] = 0;
                bytes += lane_bytes;
                if (cr) {
                    tb__crowd_block *k = &cr->blocks[open[n]];
                    k->b.count = 0;
                    k->n = n;
                    k->consts_h = -1.0f;
                    k->lanes = *cursor;
                    /* written now: its pages are mapped at init, not in the
                     * first frames (bench_spring's 8,000 links, 31 frames:
                     * 35% of the crowd's time in them otherwise) */
                    memset(k->lanes, 0, lane_bytes);
                    *cursor += lane_bytes;
                }
            }
            if (cr) {
                tb__crowd_block *k = &cr->blocks[open[n]];
                tb__entry *e = &k->b.e[fill[n]];
                memset(e, 0, sizeof *e);
                e->chain = &a->chains[ci];
                e->links = a->links + a->chains[ci].first_link;
                tb__lane_ids *ids = &k->ids[fill[n]];
                for (int i = 0; i < n; i++)
                    ids->joint[i] = e->links[i].joint;
                ids->anchor = e->chain->anchor;
                ids->end_joint = e->chain->end_joint;
                e->ids = ids;
                k->item[fill[n]] = it;
                k->b.count = fill[n] + 1;
            }
            if (++fill[n] == width)
                open[n] = -1;
        }
    }
    return bytes;
}

size_t tb__crowd_memory_size_on(tb_spring_animator *const *anims, int count, int path)
{
    if (!anims || count < 0)
        return 0;
    for (int it = 0; it < count; it++)
        if (!anims[it])
            return 0;
    int blocks, others;
    const size_t lanes = tb__crowd_plan(anims, count, path, NULL, NULL, &blocks, &others);
    return TB__CROWD_ALIGN + tb__up(sizeof(tb_spring_crowd)) +
           tb__up(sizeof(tb_spring_animator *) * (size_t)count) +
           tb__up(sizeof(int) * (size_t)others) +
           tb__up(sizeof(tb_spring_batch_item) * (size_t)others) +
           tb__up(sizeof(tb__crowd_block) * (size_t)blocks) + lanes;
}

size_t tb_spring_crowd_memory_size(tb_spring_animator *const *anims, int count)
{
    return tb__crowd_memory_size_on(anims, count, tb__spring_batch_best_path());
}

tb_result tb__crowd_init_on(tb_spring_crowd **out, void *memory, size_t size,
                            tb_spring_animator *const *anims, int count, int path, tb_error *err)
{
    if (!out || !memory || !anims || count < 0)
        return tb__fail(err, TB_ERR_ARG, "tb_spring_crowd_init",
                        "out, memory and anims must not be NULL, count not negative");
    for (int it = 0; it < count; it++)
        if (!anims[it])
            return tb__fail(err, TB_ERR_ARG, "anims", "animator %d is NULL", it);
    if (path > tb__spring_batch_best_path())
        path = tb__spring_batch_best_path();
    if (size < tb__crowd_memory_size_on(anims, count, path))
        return tb__fail(err, TB_ERR_ARG, "size", "smaller than tb_spring_crowd_memory_size");
    char *p = (char *)(((uintptr_t)memory + TB__CROWD_ALIGN - 1) &
                       ~(uintptr_t)(TB__CROWD_ALIGN - 1));
    int blocks, others;
    tb__crowd_plan(anims, count, path, NULL, NULL, &blocks, &others);
    tb_spring_crowd *cr = (tb_spring_crowd *)p;
    p += tb__up(sizeof *cr);
    cr->anims = (tb_spring_animator **)p;
    p += tb__up(sizeof(tb_spring_animator *) * (size_t)count);
    cr->others = (int *)p;
    p += tb__up(sizeof(int) * (size_t)others);
    cr->scratch = (tb_spring_batch_item *)p;
    p += tb__up(sizeof(tb_spring_batch_item) * (size_t)others);
    cr->blocks = (tb__crowd_block *)p;
    p += tb__up(sizeof(tb__crowd_block) * (size_t)blocks);
    for (int it = 0; it < count; it++)
        cr->anims[it] = anims[it];
    tb__crowd_plan(anims, count, path, cr, &p, &cr->block_count, &cr->other_count);
    cr->count = count;
    cr->path = path;
    cr->gathered = 0;
    *out = cr;
    return TB_OK;
}

tb_result tb_spring_crowd_init(tb_spring_crowd **out, void *memory, size_t size,
                               tb_spring_animator *const *anims, int count, tb_error *err)
{
    return tb__crowd_init_on(out, memory, size, anims, count, tb__spring_batch_best_path(), err);
}

/* This frame can run in lanes: every block's chains warm, their anchors sane
 * frames that did not jump, no opt-in rule switched on, one cut of dt_s per
 * block. Fills each block's entries (anchor now, the item's arrays) and
 * sub-steps. While the lanes hold the state, the entries hold the anchors'
 * last frames and the chains are not read (their flags change only by calls
 * that need a sync first). */
static int tb__crowd_ready(tb_spring_crowd *cr, const tb_spring_batch_item *items, float dt_s)
{
    if (!(dt_s >= TB__MIN_DT_S))
        return 0;
    float tp_rad = -1.0f, tp_cos = -2.0f;
    for (int bi = 0; bi < cr->block_count; bi++) {
        tb__crowd_block *k = &cr->blocks[bi];
        tb__bucket *b = &k->b;
        for (int j = 0; j < b->count; j++) {
            const tb_spring_batch_item *x = &items[k->item[j]];
            const tb_spring_animator *a = x->anim;
            tb__entry *e = &b->e[j];
            const tb__chain *c = e->chain;
            float h;
            const int steps = tb__frame_steps(a, dt_s, &h);
            if (j == 0) {
                b->steps = steps;
                b->h = h;
            } else if (steps != b->steps || h != b->h)
                return 0;
            e->h = h;
            tp_cos = tb__teleport_cos(a, &tp_rad, tp_cos);
            if (!cr->gathered) {
                if (!c->warm || c->contact_keeps_limit || c->cos_bind_max > -1.5f)
                    return 0;
                e->prev = c->prev;
            }
            if (!tb__frame_approx(x->world[e->ids->anchor], &e->cur) ||
                tb__jumped_approx(a, &e->prev, &e->cur, tp_cos))
                return 0;
            e->world = x->world;
            e->locals = x->locals;
            e->world_out = x->world_out;
        }
    }
    return 1;
}

static void tb__crowd_prefetch(const tb_spring_crowd *cr, const tb__crowd_block *k)
{
    const char *l = k->lanes;
    const size_t bytes = ((size_t)k->n * TB__LANE_LINK_VECS + TB__LANE_CHAIN_VECS) * 4 *
                         (size_t)tb__crowd_lanes(cr->path, k->b.count);
    for (size_t o = 0; o < bytes; o += 64)
        __builtin_prefetch(l + o, 1);
}

void tb_spring_crowd_step(tb_spring_crowd *cr, const tb_spring_batch_item *items, int count,
                          float dt_s)
{
    assert(cr && count == cr->count && (count == 0 || items));
    for (int it = 0; it < count; it++)
        assert(items[it].anim == cr->anims[it]);
    (void)count;
    if (!tb__crowd_ready(cr, items, dt_s)) {
        tb_spring_crowd_sync(cr);
        tb__spring_step_batch_fast_on(items, cr->count, dt_s, cr->path);
        return;
    }
    for (int bi = 0; bi < cr->block_count && bi < 2; bi++)
        tb__crowd_prefetch(cr, &cr->blocks[bi]);
    for (int bi = 0; bi < cr->block_count; bi++) {
        tb__crowd_block *k = &cr->blocks[bi];
        if (bi + 2 < cr->block_count) /* two blocks on: its lanes load meanwhile */
            tb__crowd_prefetch(cr, &cr->blocks[bi + 2]);
        const int consts = !cr->gathered || k->b.h != k->consts_h;
        tb__crowd_block_fast(&k->b, k->n, k->lanes, !cr->gathered, consts, cr->path);
        k->consts_h = k->b.h;
        for (int j = 0; j < k->b.count; j++)
            k->b.e[j].prev = k->b.e[j].cur;
    }
    cr->gathered = 1;
    if (cr->other_count > 0) {
        for (int o = 0; o < cr->other_count; o++)
            cr->scratch[o] = items[cr->others[o]];
        tb__spring_step_batch_fast_on(cr->scratch, cr->other_count, dt_s, cr->path);
    }
}

void tb_spring_crowd_sync(tb_spring_crowd *cr)
{
    assert(cr);
    if (!cr->gathered)
        return;
    for (int bi = 0; bi < cr->block_count; bi++) {
        const tb__crowd_block *k = &cr->blocks[bi];
        tb__crowd_scatter_fast(&k->b, k->n, k->lanes, cr->path);
        for (int j = 0; j < k->b.count; j++)
            k->b.e[j].chain->prev = k->b.e[j].prev;
    }
    cr->gathered = 0;
}

#else /* no vector extensions: a loop over tb_spring_step_batch_fast's */

struct tb_spring_crowd {
    int count;
};

size_t tb__crowd_memory_size_on(tb_spring_animator *const *anims, int count, int path)
{
    (void)anims;
    (void)count;
    (void)path;
    return sizeof(tb_spring_crowd);
}

size_t tb_spring_crowd_memory_size(tb_spring_animator *const *anims, int count)
{
    return tb__crowd_memory_size_on(anims, count, 0);
}

tb_result tb__crowd_init_on(tb_spring_crowd **out, void *memory, size_t size,
                            tb_spring_animator *const *anims, int count, int path, tb_error *err)
{
    (void)path;
    if (!out || !memory || !anims || count < 0 || size < sizeof(tb_spring_crowd))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_crowd_init", "bad argument");
    tb_spring_crowd *cr = memory;
    cr->count = count;
    *out = cr;
    return TB_OK;
}

tb_result tb_spring_crowd_init(tb_spring_crowd **out, void *memory, size_t size,
                               tb_spring_animator *const *anims, int count, tb_error *err)
{
    return tb__crowd_init_on(out, memory, size, anims, count, 0, err);
}

void tb_spring_crowd_step(tb_spring_crowd *cr, const tb_spring_batch_item *items, int count,
                          float dt_s)
{
    (void)cr;
    tb_spring_step_batch_fast(items, count, dt_s);
}

void tb_spring_crowd_sync(tb_spring_crowd *cr)
{
    (void)cr;
}

#endif
