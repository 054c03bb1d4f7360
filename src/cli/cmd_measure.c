/* tailbone measure — skin stretch during playback (SPEC C), and the SPEC C
 * comparison table (original rig / rigid on Hips / tail chain / body). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "passes/pool_internal.h"
#include "core/base.h"
#include "tailbone/appendage.h"
#include "tailbone/clip.h"
#include "tailbone/humanoid.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"
#include "tailbone/bake.h"
#include "tailbone/spring.h"

/* The chain variant is animated by the spring solver (SPEC B) at a game's
 * frame rate, after one silent pass so the tail starts from its steady
 * motion rather than from rest (SPEC D: a loop from a cold start does not
 * close). */
#define TB__SPRING_RATE_HZ 60.0f
#define TB__SPRING_WARMUP_PASSES 1

typedef struct tb__opts {
    const char *in;
    const char *clip;          /* NULL: every clip */
    int json, compare, loop, instants, spring;
    int jobs;                  /* --all: clips measured at once (0: one per CPU) */
    const char *tail_bones;    /* joint-name substring */
    const char *tail_mask;     /* file of vertex indices */
    const char *dump;          /* --dump-positions */
} tb__opts;

static void tb__help(void)
{
    printf("usage: tailbone measure FILE [--clip NAME | --all] [--compare] [--json]\n"
           "                        [--tail-bones TEXT | --tail-mask FILE] [--instants N] [--loop]\n"
           "                        [--no-spring] [--dump-positions OUT.bin] [-j N]\n\n"
           "Plays each clip and measures skin stretch: for every unique mesh edge,\n"
           "skinned length / bind length at 24 evenly spaced instants (t_k = k*D/23; --loop:\n"
           "k*D/24). Above 1.5 or below 0.67 is torn. Tail edges (both vertices in the tail)\n"
           "are compared with body edges (neither vertex in it), the reference. Also prints\n"
           "the weighted bone distance of the tail and its motion: tip travel and\n"
           "the largest tail-bone rotation. docs/measure.md explains every figure.\n\n"
           "The tail: vertices with >= 50%% of their weight on Tail_* bones, or --tail-bones\n"
           "TEXT (joints whose name contains TEXT, e.g. 'Tail' for an artist's chain), or\n"
           "--tail-mask FILE (whitespace-separated model vertex indices).\n"
           "  --clip NAME        one clip (exact, case-insensitive, or unique substring)\n"
           "  --all              every clip (the default)\n"
           "  -j, --jobs N       clips measured at once, one thread each (default 0: one per\n"
           "                     CPU); the output is the same for any N\n"
           "  --compare          the comparison table: original rig, rigid on Hips,\n"
           "                     tail chain (spring-animated Tail_* bones), body reference\n"
           "  --json             machine-readable output\n"
           "  --instants N       instants per clip (default 24, at most 10000)\n"
           "  --loop             looping clip: do not measure the end pose twice\n"
           "  --no-spring        do not animate Tail_* chains with the spring solver;\n"
           "                     a clip that already keys them (a baked file) always plays as keyed\n"
           "  --dump-positions F write the skinned world positions (needs one --clip): see\n"
           "                     docs/measure.md for the layout (used by the three.js check)\n");
}

/* ---- the tail mask ---------------------------------------------------- */

static uint8_t *tb__read_mask(const char *path, size_t nv)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "tailbone measure: cannot open %s\n", path);
        return NULL;
    }
    uint8_t *mask = calloc(nv + 1, 1);
    long long v;
    int bad = 0;
    while (mask && fscanf(f, "%lld", &v) == 1) {
        if (v < 0 || (size_t)v >= nv)
            bad = 1;
        else
            mask[v] = 1;
    }
    if (!feof(f))
        bad = 1;
    fclose(f);
    if (bad) {
        fprintf(stderr, "tailbone measure: %s: expected vertex indices below %zu\n", path, nv);
        free(mask);
        return NULL;
    }
    return mask;
}

/* Joints whose name contains text (one byte per skeleton joint). */
static uint8_t *tb__joints_named(const tb_model *m, const char *text, int *count)
{
    uint8_t *j = calloc((size_t)m->skel.joint_count + 1, 1);
    *count = 0;
    for (int i = 0; j && i < m->skel.joint_count; i++)
        if (m->skel.names && m->skel.names[i] && strstr(m->skel.names[i], text)) {
            j[i] = 1;
            (*count)++;
        }
    return j;
}

/* ---- the spring hook (SPEC B plugs into SPEC C) ------------------------ */

static void tb__spring_hook(void *user, float t_s, float dt_s, tb_transform *locals, float (*world)[16])
{
    (void)t_s;
    tb_spring_step((tb_spring_animator *)user, dt_s, (const float(*)[16])world, locals, world);
}

/* Measures with the spring solver when the skeleton has Tail_* chains and
 * opts allow; *sprung says whether it did. */
static tb_result tb__measure(tb_measure_result *res, const tb_model *m, const tb_clip *clip, tb_measure_desc d,
                             const tb__opts *o, int *sprung, tb_error *err)
{
    tb_spring_animator *anim = NULL;
    *sprung = 0;
    /* a clip that already keys the tail (a baked file) plays as keyed: what a
     * viewer shows */
    int keyed = 0;
    for (int i = 0; i < clip->channel_count && !keyed; i++) {
        int j = clip->channels[i].joint;
        keyed = j >= 0 && j < m->skel.joint_count && tb_tail_name_parse(m->skel.names[j], NULL, NULL);
    }
    if (o->spring && !keyed) {
        int chains = 0;
        size_t bytes;
        if (tb_spring_memory_size(&m->skel, &bytes, &chains, NULL) == TB_OK && chains > 0) {
            /* the solver as `fix` bakes it: scene units, ground at the soles */
            tb_spring_desc sd = tb_bake_spring_desc(m, NULL, NULL, NULL);
            tb_result r = tb_spring_create(&anim, &m->skel, &sd, err);
            if (r != TB_OK)
                return r;
            d.pose_hook = tb__spring_hook;
            d.hook_user = anim;
            d.hook_rate_hz = TB__SPRING_RATE_HZ;
            d.warmup_passes = TB__SPRING_WARMUP_PASSES;
            *sprung = 1;
        }
    }
    tb_result r = tb_measure_clip(res, m, clip, &d, err);
    tb_spring_destroy(anim);
    return r;
}

/* ---- output ----------------------------------------------------------- */

static json_t *tb__jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *tb__stats_json(const tb_stretch_stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "edges", json_integer((json_int_t)s->edges));
    json_object_set_new(o, "samples", json_integer((json_int_t)s->samples));
    json_object_set_new(o, "p95", tb__jnum(s->p95));
    json_object_set_new(o, "p99", tb__jnum(s->p99));
    json_object_set_new(o, "min", tb__jnum(s->min));
    json_object_set_new(o, "max", tb__jnum(s->max));
    /* torn is a fraction of the samples in every report (as in fix's);
     * torn_samples the count; torn_fraction the old name of torn */
    json_object_set_new(o, "torn", tb__jnum(s->torn_frac));
    json_object_set_new(o, "torn_samples", json_integer((json_int_t)s->torn));
    json_object_set_new(o, "torn_fraction", tb__jnum(s->torn_frac));
    return o;
}

static json_t *tb__result_json(const tb_measure_result *r, int sprung, const char *source)
{
    json_t *o = json_object();
    json_object_set_new(o, "duration_s", json_real(r->duration_s));
    json_object_set_new(o, "instants", json_integer(r->instants));
    json_object_set_new(o, "height", json_real(r->height));
    json_object_set_new(o, "world_scale", json_real(r->world_scale));
    json_object_set_new(o, "spring", json_boolean(sprung));
    json_object_set_new(o, "tail_source", json_string(source));
    json_object_set_new(o, "tail_vertices", json_integer((json_int_t)r->tail_vertices));
    json_object_set_new(o, "tail", tb__stats_json(&r->tail));
    json_object_set_new(o, "body", tb__stats_json(&r->body));
    json_object_set_new(o, "seam", tb__stats_json(&r->seam));
    json_object_set_new(o, "bone_distance", tb__jnum(r->bone_distance));
    json_object_set_new(o, "bone_distance_h", tb__jnum(r->bone_distance / r->height));
    json_object_set_new(o, "tip_vertex", json_integer(r->tip_vertex));
    json_object_set_new(o, "tip_travel", r->tip_vertex >= 0 ? json_real(r->tip_travel) : json_null());
    json_object_set_new(o, "tip_travel_h", r->tip_vertex >= 0 ? json_real(r->tip_travel_h) : json_null());
    json_object_set_new(o, "max_bone_rotation_deg", tb__jnum(r->max_bone_rotation_rad * TB_DEG_PER_RAD));
    json_object_set_new(o, "motion_bones", json_integer(r->motion_bone_count));
    return o;
}

static void tb__row(FILE *f, const char *label, const tb_stretch_stats *s, int torn)
{
    if (s->samples == 0) {
        fprintf(f, "  %-16s %6s %6s %6s %7s %9s\n", label, "-", "-", "-", "-", "0");
        return;
    }
    if (torn)
        fprintf(f, "  %-16s %6.2f %6.2f %6.2f %6.1f%% %9zu\n", label, s->p95, s->p99, s->max, 100.0 * s->torn_frac,
                s->samples);
    else
        fprintf(f, "  %-16s %6.2f %6.2f %6.2f %7s %9zu\n", label, s->p95, s->p99, s->max, "-", s->samples);
}

static void tb__header(FILE *f)
{
    fprintf(f, "  %-16s %6s %6s %6s %7s %9s\n", "", "p95", "p99", "max", "torn", "samples");
}

static void tb__motion_text(FILE *f, const tb_measure_result *r, const char *source)
{
    if (r->tip_vertex < 0)
        return;
    fprintf(f, "  weighted bone distance %.4g (%.1f%% of H) over %zu tail vertices (%s)\n", r->bone_distance,
           100.0 * r->bone_distance / r->height, r->tail_vertices, source);
    fprintf(f, "  tail motion: tip travel %.4g (%.1f%% of H), largest tail-bone rotation %.1f deg\n", r->tip_travel,
           100.0 * r->tip_travel_h, r->max_bone_rotation_rad * TB_DEG_PER_RAD);
}

/* ---- one clip --------------------------------------------------------- */

typedef struct tb__ctx {
    const tb__opts *o;
    tb_doc *doc;
    tb_model *m;
    const uint8_t *mask;        /* NULL: from tail joints */
    const uint8_t *tail_joints; /* NULL: Tail_* names */
    json_t *out;                /* --json: array of clips */
    int detected;               /* mask came from tb_appendage_detect */
    /* --compare on an unrepaired file: the same file repaired by the fix
     * pass (SPEC A9), built once on first use. */
    int fixed_tried;
    tb_doc *fixed_doc;
    tb_model *fixed_m;
    uint64_t *edges;            /* the mesh's edges, once for every clip and variant */
    size_t edge_count;
} tb__ctx;

/* One clip's output: its text (or JSON object) and its error lines, kept
 * until every clip has run and then written in clip order, so the output
 * does not depend on how many clips run at once. */
typedef struct tb__slot {
    FILE *out, *err;
    char *out_buf, *err_buf;
    size_t out_len, err_len;
    json_t *json;
    int rc;
} tb__slot;

size_t tb_cli_detect_tail_mask(const tb_model *m, uint8_t *mask)
{
    tb_appendage_report rep;
    memset(&rep, 0, sizeof rep);
    size_t count = 0;
    if (tb_appendage_detect(&rep, m, NULL, NULL) == TB_OK)
        for (int i = 0; i < rep.appendage_count; i++) {
            const tb_appendage *a = &rep.appendages[i];
            if (a->kind != TB_KIND_TAIL)
                continue;
            for (size_t k = 0; k < a->vertex_count; k++)
                if (a->vertices[k] < m->vertex_count && !mask[a->vertices[k]]) {
                    mask[a->vertices[k]] = 1;
                    count++;
                }
        }
    tb_appendage_report_free(&rep);
    return count;
}

/* The detected tail (tb_cli_detect_tail_mask) as a new mask, or NULL when
 * there is none. */
static uint8_t *tb__detect_mask(const tb_model *m, size_t *count)
{
    uint8_t *mask = calloc(m->vertex_count + 1, 1);
    *count = mask ? tb_cli_detect_tail_mask(m, mask) : 0;
    if (*count == 0) {
        free(mask);
        return NULL;
    }
    return mask;
}

/* The chain variant of an unrepaired file: load it again and run the fix
 * pass in memory. Vertex order is unchanged by the fix (it rewrites weights
 * and appends nodes), which is checked. */
static const tb_model *tb__fixed_model(tb__ctx *c)
{
    if (c->fixed_tried)
        return c->fixed_m;
    c->fixed_tried = 1;
    tb_error err = {0};
    tb_appendage_report rep;
    memset(&rep, 0, sizeof rep);
    if (tb_doc_load(&c->fixed_doc, c->o->in, NULL, &err) != TB_OK)
        return NULL;
    if (tb_appendage_fix(&rep, c->fixed_doc, NULL, &err) != TB_OK || !rep.changed ||
        tb_model_load(&c->fixed_m, c->fixed_doc, c->m->skin, &err) != TB_OK ||
        c->fixed_m->vertex_count != c->m->vertex_count) {
        tb_model_free(c->fixed_m);
        c->fixed_m = NULL;
    }
    tb_appendage_report_free(&rep);
    return c->fixed_m;
}

/* Where the tail's vertices came from, in words. */
static const char *tb__source(const tb__ctx *c, const tb_measure_result *r)
{
    if (r->tail_source == TB_TAIL_NONE)
        return "none";
    if (c->detected)
        return "detected";
    if (c->tail_joints)
        return "weights on --tail-bones joints";
    if (c->o->tail_mask)
        return "--tail-mask";
    return "weights on Tail_* bones";
}

static int tb__write_dump(const char *path, const tb_model *m, const tb_measure_desc *d, const float *pos,
                          float duration)
{
    /* Layout (docs/measure.md): "TBPOS1\0\0", u32 instants, u32 vertices,
     * u32 prims, per prim u32 node, mesh, primitive, vertex_offset,
     * vertex_count; f32 times[instants]; f32 xyz[instants][vertices]. */
    size_t n_pos = (size_t)d->instants * m->vertex_count * 3;
    size_t size = 8 + 12 + (size_t)m->prim_count * 20 + (size_t)d->instants * 4 + n_pos * 4;
    uint8_t *buf = malloc(size), *at = buf;
    if (!buf) {
        fprintf(stderr, "tailbone: %s: out of memory [oom]\n", path);
        return TB_EXIT_FAIL;
    }
    uint32_t head[3] = {(uint32_t)d->instants, (uint32_t)m->vertex_count, (uint32_t)m->prim_count};
    memcpy(at, "TBPOS1\0\0", 8), at += 8;
    memcpy(at, head, sizeof head), at += sizeof head;
    for (int p = 0; p < m->prim_count; p++) {
        const tb_model_prim *mp = &m->prims[p];
        uint32_t row[5] = {(uint32_t)mp->node, (uint32_t)mp->mesh, (uint32_t)mp->primitive,
                           (uint32_t)mp->vertex_offset, (uint32_t)mp->vertex_count};
        memcpy(at, row, sizeof row), at += sizeof row;
    }
    float step = d->loop ? duration / (float)d->instants : duration / (float)(d->instants - 1);
    for (int k = 0; k < d->instants; k++) {
        float t = (float)k * step;
        memcpy(at, &t, sizeof t), at += sizeof t;
    }
    memcpy(at, pos, n_pos * sizeof(float));
    int rc = tb_cli_save_file(path, buf, size);
    free(buf);
    return rc;
}

static int tb__plain(tb__ctx *c, tb__slot *sl, int anim, const tb_clip *clip, tb_measure_desc d)
{
    float *pos = NULL;
    if (c->o->dump) {
        pos = malloc((size_t)d.instants * c->m->vertex_count * 3 * sizeof *pos + 1);
        if (!pos)
            return TB_EXIT_FAIL;
        d.positions_out = pos;
    }
    tb_measure_result r;
    tb_error err = {0};
    int sprung = 0;
    if (tb__measure(&r, c->m, clip, d, c->o, &sprung, &err) != TB_OK) {
        free(pos);
        return tb_cli_error_to(sl->err, c->o->in, &err);
    }
    int rc = TB_EXIT_OK;
    if (pos) {
        rc = tb__write_dump(c->o->dump, c->m, &d, pos, clip->duration_s);
        free(pos);
    }
    const char *name = clip->name ? clip->name : "(unnamed)";
    if (c->o->json) {
        json_t *o = tb__result_json(&r, sprung, tb__source(c, &r));
        json_object_set_new(o, "clip", json_string(name));
        json_object_set_new(o, "animation", json_integer(anim));
        sl->json = o;
        return rc;
    }
    FILE *f = sl->out;
    fprintf(f, "clip %s: %.3f s, %d instants, H %.4g, world scale %.4g%s\n", name, r.duration_s, r.instants,
            r.height, r.world_scale, sprung ? ", tail animated by the spring solver" : "");
    tb__header(f);
    if (r.tail_source == TB_TAIL_NONE)
        fprintf(f, "  %-16s no tail bones; run detection (or pass --tail-bones / --tail-mask)\n", "tail");
    else
        tb__row(f, "tail", &r.tail, 1);
    if (r.seam.edges)
        tb__row(f, "tail/body seam", &r.seam, 1);
    tb__row(f, "body", &r.body, 1);
    tb__motion_text(f, &r, tb__source(c, &r));
    return rc;
}

/* The rows of a SPEC C comparison: the original weights (or the chain as
 * keyed), rigid on Hips (SPEC A8), the chain animated by the spring. */
typedef struct tb__cmp_rows {
    tb_measure_result orig, rigid, chain;
    int has_tail_joints, have_rigid, have_chain;
    int hips; /* the rigid row's joint */
} tb__cmp_rows;

/* The chain row: the file's own chain when it has Tail_* bones, else SPEC
 * C's third row, the same file after the fix pass (SPEC A9), its chain
 * animated by the spring (SPEC B), same tail vertices. */
static tb_result tb__compare_chain(tb__ctx *c, int anim, const tb_clip *clip, tb_measure_desc d, tb__cmp_rows *R,
                                   tb_error *err)
{
    int sprung = 0;
    if (R->has_tail_joints && c->o->spring) {
        if (tb__measure(&R->chain, c->m, clip, d, c->o, &sprung, err) != TB_OK)
            return TB_ERR_INVALID;
        R->have_chain = sprung;
    } else if (c->o->spring) {
        const tb_model *fm = c->fixed_m; /* built before the clips run (tb__fixed_model) */
        tb_clip *fclip = NULL;
        if (fm && tb_clip_load(&fclip, c->fixed_doc, fm, anim, NULL, err) == TB_OK) {
            if (tb__measure(&R->chain, fm, fclip, d, c->o, &sprung, err) == TB_OK)
                R->have_chain = sprung;
            tb_clip_free(fclip);
        }
    }
    return TB_OK;
}

/* The rigid row: the tail's vertices all on Hips (SPEC A8); a rig without
 * a recognised Hips (a quadruped) uses the parent of the tail's first
 * bone. No row when there is neither. */
static int tb__compare_rigid(tb__ctx *c, tb__slot *sl, const tb_clip *clip, tb_measure_desc d,
                             const tb__opts *no_spring, const uint8_t *mask, tb__cmp_rows *R)
{
    const tb_model *m = c->m;
    tb_error err = {0};
    int hips = m->role_joint[TB_ROLE_HIPS], sprung = 0, rc = TB_EXIT_OK;
    if (hips < 0 && c->tail_joints)
        for (int j = 0; j < m->skel.joint_count && hips < 0; j++)
            if (c->tail_joints[j] && m->skel.parents[j] >= 0 && !c->tail_joints[m->skel.parents[j]])
                hips = m->skel.parents[j];
    R->hips = hips;
    size_t nw = m->vertex_count * (size_t)m->influences + 1;
    uint16_t *rj = malloc(nw * sizeof *rj);
    float *rw = malloc(nw * sizeof *rw);
    if (rj && rw && hips >= 0 && tb_measure_rigid_weights(rj, rw, m, mask, hips, &err) == TB_OK) {
        d.joints = rj;
        d.weights = rw;
        if (tb__measure(&R->rigid, m, clip, d, no_spring, &sprung, &err) != TB_OK)
            rc = tb_cli_error_to(sl->err, c->o->in, &err);
        else
            R->have_rigid = 1;
    }
    free(rj);
    free(rw);
    return rc;
}

static void tb__compare_json(tb__ctx *c, tb__slot *sl, int anim, const char *name, const tb__cmp_rows *R)
{
    json_t *o = json_object();
    json_object_set_new(o, "clip", json_string(name));
    json_object_set_new(o, "animation", json_integer(anim));
    json_object_set_new(o, R->has_tail_joints ? "chain_as_keyed" : "original",
                        tb__result_json(&R->orig, 0, tb__source(c, &R->orig)));
    json_object_set_new(o, "rigid", R->have_rigid ? tb__result_json(&R->rigid, 0, tb__source(c, &R->orig)) : json_null());
    json_object_set_new(o, "chain", R->have_chain ? tb__result_json(&R->chain, 1, tb__source(c, &R->orig)) : json_null());
    json_object_set_new(o, "body", tb__stats_json(&R->orig.body));
    sl->json = o;
}

static void tb__compare_text(tb__ctx *c, tb__slot *sl, const char *name, const tb__cmp_rows *R)
{
    const tb_model *m = c->m;
    const tb_measure_result *orig = &R->orig;
    const char *orig_label = R->has_tail_joints ? "chain as keyed" : "original rig";
    FILE *f = sl->out;
    fprintf(f, "clip %s: %.3f s, %d instants, %zu tail vertices (%s), H %.4g\n", name, orig->duration_s,
            orig->instants, orig->tail_vertices, tb__source(c, orig), orig->height);
    tb__header(f);
    tb__row(f, orig_label, &orig->tail, 1);
    if (R->have_rigid)
        tb__row(f, R->hips == m->role_joint[TB_ROLE_HIPS] ? "rigid on Hips" : "rigid on parent", &R->rigid.tail, 1);
    else
        fprintf(f, "  %-16s (no Hips joint)\n", "rigid on Hips");
    if (R->have_chain) {
        tb__row(f, "tail chain", &R->chain.tail, 1);
        if (R->chain.seam.edges)
            tb__row(f, "  seam to body", &R->chain.seam, 1);
    } else if (!c->o->spring)
        fprintf(f, "  %-16s (spring solver disabled)\n", "tail chain");
    else
        fprintf(f, "  %-16s (the fix pass made no chain for this file)\n", "tail chain");
    tb__row(f, "body, reference", &orig->body, 0);
    fprintf(f, "  %-16s %10s %10s %10s\n", "", "bone dist", "tip travel", "rotation");
    const tb_measure_result *rows[3] = {orig, R->have_rigid ? &R->rigid : NULL, R->have_chain ? &R->chain : NULL};
    const char *labels[3] = {orig_label, "rigid", "tail chain"};
    for (int i = 0; i < 3; i++) {
        if (!rows[i])
            continue;
        fprintf(f, "  %-16s %9.1f%% %9.1f%% %8.1f deg\n", labels[i], 100.0 * rows[i]->bone_distance / rows[i]->height,
                100.0 * rows[i]->tip_travel_h, rows[i]->max_bone_rotation_rad * TB_DEG_PER_RAD);
    }
    fprintf(f, "  (bone distance and tip travel as %% of H)\n");
}

/* Whether the skeleton has joints named as a tail chain (Tail_*). */
static int tb__has_tail_joints(const tb_model *m)
{
    int has = 0;
    for (int j = 0; j < m->skel.joint_count; j++)
        has |= tb_tail_name_parse(m->skel.names ? m->skel.names[j] : NULL, NULL, NULL);
    return has;
}

/* SPEC C comparison: the tail mask → the original row → the chain row →
 * the rigid row → JSON or the table. */
static int tb__compare(tb__ctx *c, tb__slot *sl, int anim, const tb_clip *clip, tb_measure_desc d)
{
    const tb_model *m = c->m;
    const char *name = clip->name ? clip->name : "(unnamed)";
    tb_error err = {0};
    uint8_t *mask = malloc(m->vertex_count + 1);
    if (!mask)
        return TB_EXIT_FAIL;
    size_t tail_n = c->mask ? m->vertex_count : tb_measure_tail_mask(mask, m, c->tail_joints, NULL, NULL);
    if (c->mask)
        memcpy(mask, c->mask, m->vertex_count);
    tb__cmp_rows R;
    memset(&R, 0, sizeof R);
    R.has_tail_joints = tb__has_tail_joints(m);
    if (!c->mask && tail_n == 0) {
        free(mask);
        fprintf(sl->err, "tailbone measure: %s: no tail to compare (no Tail_* bones; pass --tail-bones or "
                        "--tail-mask)\n", c->o->in);
        return TB_EXIT_FAIL;
    }
    /* The same vertex set in every row, so the rows compare like with like. */
    d.tail_mask = mask;
    int sprung = 0, rc = TB_EXIT_OK;
    tb__opts no_spring = *c->o;
    no_spring.spring = 0;
    if (tb__measure(&R.orig, m, clip, d, &no_spring, &sprung, &err) != TB_OK ||
        tb__compare_chain(c, anim, clip, d, &R, &err) != TB_OK) {
        free(mask);
        return tb_cli_error_to(sl->err, c->o->in, &err);
    }
    rc = tb__compare_rigid(c, sl, clip, d, &no_spring, mask, &R);
    free(mask);
    if (rc != TB_EXIT_OK)
        return rc;
    if (c->o->json)
        tb__compare_json(c, sl, anim, name, &R);
    else
        tb__compare_text(c, sl, name, &R);
    return TB_EXIT_OK;
}

static int tb__one_clip(tb__ctx *c, tb__slot *sl, int anim)
{
    tb_clip *clip = NULL;
    tb_error err = {0};
    if (tb_clip_load(&clip, c->doc, c->m, anim, NULL, &err) != TB_OK)
        return tb_cli_error_to(sl->err, c->o->in, &err);
    tb_measure_desc d = {0};
    d.instants = c->o->instants;
    d.loop = c->o->loop;
    d.tail_mask = c->mask;
    d.tail_joints = c->tail_joints;
    d.edges = c->edges; /* the repaired variant has the same triangles */
    d.edge_count = c->edge_count;
    d = tb_measure_desc_defaults(&d); /* the dump is sized from d.instants */
    int rc = c->o->compare ? tb__compare(c, sl, anim, clip, d) : tb__plain(c, sl, anim, clip, d);
    tb_clip_free(clip);
    return rc;
}

/* --all: clip `task` into its own slot, on whichever thread runs it. */
typedef struct tb__all_job {
    tb__ctx *c;
    tb__slot *slots;
} tb__all_job;

static void tb__all_task(void *ctx, int task, int worker)
{
    (void)worker;
    tb__all_job *job = ctx;
    tb__slot *sl = &job->slots[task];
    sl->out = open_memstream(&sl->out_buf, &sl->out_len);
    sl->err = open_memstream(&sl->err_buf, &sl->err_len);
    if (!sl->out || !sl->err) {
        sl->rc = TB_EXIT_FAIL;
        return;
    }
    sl->rc = tb__one_clip(job->c, sl, task);
    fclose(sl->out);
    fclose(sl->err);
    sl->out = sl->err = NULL;
}

/* Every clip, `threads` at once, written in clip order up to the first
 * that fails (what one thread would have written). */
static int tb__all_clips(tb__ctx *c, int n, int threads)
{
    tb__slot *slots = calloc((size_t)n + 1, sizeof *slots);
    if (!slots) {
        fprintf(stderr, "tailbone: %s: out of memory [oom]\n", c->o->in);
        return TB_EXIT_FAIL;
    }
    tb__all_job job = {c, slots};
    tb__parallel_for(n, threads, tb__all_task, &job);
    int rc = TB_EXIT_OK;
    for (int a = 0; a < n; a++) {
        tb__slot *sl = &slots[a];
        if (rc == TB_EXIT_OK) {
            if (a > 0 && !c->o->json)
                printf("\n");
            if (sl->out_buf)
                fwrite(sl->out_buf, 1, sl->out_len, stdout);
            if (sl->err_buf)
                fwrite(sl->err_buf, 1, sl->err_len, stderr);
            if (!sl->out_buf || !sl->err_buf)
                fprintf(stderr, "tailbone: %s: out of memory [oom]\n", c->o->in);
            if (sl->json) {
                json_array_append_new(c->out, sl->json);
                sl->json = NULL;
            }
            rc = sl->rc;
        }
        json_decref(sl->json);
        free(sl->out_buf);
        free(sl->err_buf);
    }
    free(slots);
    return rc;
}

/* measure's command line into *out; -1 to go on, else the exit status. */
static int tb__measure_args(int argc, char **argv, tb__opts *out)
{
    tb__opts o = {0};
    o.spring = 1;
    enum { JSON = TB_CLI_LONG, ALL, COMPARE, LOOP, NO_SPRING, CLIP, TAIL_BONES, TAIL_MASK, DUMP, INSTANTS };
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"json", no_argument, NULL, JSON},
                                         {"all", no_argument, NULL, ALL},
                                         {"compare", no_argument, NULL, COMPARE},
                                         {"loop", no_argument, NULL, LOOP},
                                         {"no-spring", no_argument, NULL, NO_SPRING},
                                         {"clip", required_argument, NULL, CLIP},
                                         {"tail-bones", required_argument, NULL, TAIL_BONES},
                                         {"tail-mask", required_argument, NULL, TAIL_MASK},
                                         {"dump-positions", required_argument, NULL, DUMP},
                                         {"instants", required_argument, NULL, INSTANTS},
                                         {0}};
    tb_cli_args p;
    tb_cli_args_init(&p, "measure", argc, argv, "hj:", opts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        const char *v = p.value;
        if (c == TB_CLI_BAD) {
            return TB_EXIT_USAGE;
        } else if (c == 'h') {
            tb__help();
            return TB_EXIT_OK;
        } else if (c == 'j') {
            char *end;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 0 || n > 4096)
                return tb_cli_usage_error("measure", "-j must be an integer from 0 to 4096, not '%s'", v);
            o.jobs = (int)n;
        } else if (c == JSON) {
            o.json = 1;
        } else if (c == ALL) {
            o.clip = NULL;
        } else if (c == COMPARE) {
            o.compare = 1;
        } else if (c == LOOP) {
            o.loop = 1;
        } else if (c == NO_SPRING) {
            o.spring = 0;
        } else if (c == CLIP) {
            o.clip = v;
        } else if (c == TAIL_BONES) {
            o.tail_bones = v;
        } else if (c == TAIL_MASK) {
            o.tail_mask = v;
        } else if (c == DUMP) {
            o.dump = v;
        } else if (c == INSTANTS) {
            char *end;
            long n = strtol(v, &end, 10);
            /* each instant skins every vertex (and --dump-positions keeps
             * them all): bounded so the work stays proportional */
            if (!*v || *end || n < 2 || n > TB_MEASURE_MAX_INSTANTS)
                return tb_cli_usage_error("measure", "--instants must be an integer from 2 to %d, not '%s'",
                                          TB_MEASURE_MAX_INSTANTS, v);
            o.instants = (int)n;
        } else if (!o.in) {
            o.in = v;
        } else {
            return tb_cli_usage_error("measure", "too many arguments");
        }
    }
    if (!o.in)
        return tb_cli_usage_error("measure", "needs a FILE");
    if (o.dump && !o.clip)
        return tb_cli_usage_error("measure", "--dump-positions needs --clip NAME");
    if (o.dump && o.compare)
        return tb_cli_usage_error("measure", "--dump-positions and --compare do not combine");
    if (o.tail_bones && o.tail_mask)
        return tb_cli_usage_error("measure", "--tail-bones and --tail-mask do not combine");
    *out = o;
    return -1;
}

/* Which part is the tail: --tail-mask's file, --tail-bones' joints, the
 * Tail_ chain, or (an unrepaired file) the one detection finds; *mask and
 * *tail_joints are the caller's to free. */
static int tb__measure_tail(tb__ctx *c, uint8_t **mask, uint8_t **tail_joints)
{
    const tb__opts *o = c->o;
    const tb_model *m = c->m;
    int rc = TB_EXIT_OK;
    if (o->tail_mask) {
        *mask = tb__read_mask(o->tail_mask, m->vertex_count);
        if (!*mask)
            rc = TB_EXIT_FAIL;
        c->mask = *mask;
    } else if (o->tail_bones) {
        int n = 0;
        *tail_joints = tb__joints_named(m, o->tail_bones, &n);
        if (n == 0) {
            fprintf(stderr, "tailbone measure: %s: no joint name contains '%s'\n", o->in, o->tail_bones);
            rc = TB_EXIT_FAIL;
        }
        c->tail_joints = *tail_joints;
    } else if (!tb__has_tail_joints(m)) {
        /* An unrepaired file: find its tail as the fix pass would. */
        size_t n = 0;
        *mask = tb__detect_mask(m, &n);
        c->mask = *mask;
        c->detected = *mask != NULL;
    }
    return rc;
}

/* --json: the file, its vertex count and the clips' rows, printed on
 * success; c->out is used up. */
static void tb__measure_print(tb__ctx *c, int rc)
{
    if (c->out) {
        if (rc == TB_EXIT_OK) {
            json_t *root = json_object();
            json_object_set_new(root, "file", json_string(c->o->in));
            json_object_set_new(root, "vertices", json_integer((json_int_t)c->m->vertex_count));
            json_object_set_new(root, "clips", c->out);
            char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            if (s)
                puts(s);
            free(s);
            json_decref(root);
        } else {
            json_decref(c->out);
        }
    }
}

int tb_cmd_measure(int argc, char **argv)
{
    tb__opts o = {0};
    int exit_now = tb__measure_args(argc, argv, &o);
    if (exit_now >= 0)
        return exit_now;
    tb_doc *doc = tb_cli_load(o.in, 1);
    if (!doc)
        return TB_EXIT_FAIL;
    tb_model *m = NULL;
    tb_error err = {0};
    if (tb_model_load(&m, doc, -1, &err) != TB_OK) {
        tb_doc_free(doc);
        return tb_cli_error(o.in, &err);
    }
    tb__ctx c = {.o = &o, .doc = doc, .m = m};
    c.edge_count = tb_measure_edges(m, &c.edges);
    if (c.edge_count == SIZE_MAX) {
        tb_model_free(m);
        tb_doc_free(doc);
        fprintf(stderr, "tailbone: %s: out of memory\n", o.in);
        return TB_EXIT_FAIL;
    }
    uint8_t *mask = NULL, *tail_joints = NULL;
    int rc = tb__measure_tail(&c, &mask, &tail_joints);
    const tb_gltf *g = tb_doc_gltf(doc);
    if (rc == TB_EXIT_OK && o.json) {
        c.out = json_array();
        json_decref(json_object()); /* jansson's hash seed, set here before any thread makes an object */
    }
    int one = -1; /* --clip NAME: its animation */
    if (rc == TB_EXIT_OK && o.clip) {
        one = tb_clip_find(doc, o.clip);
        if (one < 0) {
            fprintf(stderr, "tailbone measure: %s: no clip named '%s' (or several match)\n", o.in, o.clip);
            rc = TB_EXIT_FAIL;
        }
    }
    /* --compare on an unrepaired file: its repaired variant (SPEC A9), once
     * for every clip, before they run */
    if (rc == TB_EXIT_OK && o.compare && o.spring && g->animation_count > 0) {
        if (!tb__has_tail_joints(m))
            tb__fixed_model(&c);
    }
    if (rc == TB_EXIT_OK && o.clip) {
        tb__slot sl = {.out = stdout, .err = stderr};
        rc = tb__one_clip(&c, &sl, one);
        if (sl.json)
            json_array_append_new(c.out, sl.json);
    } else if (rc == TB_EXIT_OK) {
        if (g->animation_count == 0 && !o.json)
            printf("%s: no clips to play\n", o.in);
        rc = tb__all_clips(&c, g->animation_count, o.jobs > 0 ? o.jobs : tb__cpu_count());
    }
    tb__measure_print(&c, rc);
    free(mask);
    free(tail_joints);
    free(c.edges);
    tb_model_free(c.fixed_m);
    tb_doc_free(c.fixed_doc);
    tb_model_free(m);
    tb_doc_free(doc);
    return rc;
}
