/* The whole job (tailbone/fix.h): repair → transfer → bake → measure, and the
 * blend-zone search around it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "gltf/doc_internal.h"
#include "passes/pool_internal.h"
#include "passes/report_json.h"
#include "passes/weights_internal.h"
#include "tailbone/humanoid.h"
#include "tailbone/runtime.h"
#include "tailbone/clip.h"
#include "tailbone/fix.h"
#include "tailbone/model.h"
#include "tailbone/retarget.h"
#include "tailbone/tailchain.h"

#define TB__STRAIN_ROW 0.18f /* SPEC C chain row: p99 1.18 */
#define TB__BIND_SHARE 0.75f /* the solver fit's bind limit: this share of the carried bend */

static void tb__progress(const tb_fix_desc *d, const char *stage)
{
    if (d->progress)
        d->progress(d->progress_user, stage);
}

static tb_doc *tb__copy(const tb_doc *in, tb_error *err)
{
    /* the copy reads in's BIN until it appends (new weights, keys): one BIN
     * in memory, not two, while detection runs, and no GLB of it in memory
     * in between; tb_fix_run gives the copy its own before it returns it */
    tb_doc *doc = NULL;
    if (tb__doc_clone(&doc, in, err) != TB_OK)
        return NULL;
    if (doc)
        return doc;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (tb_doc_write_memory(in, &bytes, &size, err) != TB_OK)
        return NULL;
    tb_load_desc ld = {.allow_unsupported = 1}; /* the input was accepted once already */
    tb_result r = tb_doc_load_memory(&doc, bytes, size, tb_doc_name(in), NULL, &ld, err);
    free(bytes);
    if (r == TB_OK)
        tb__doc_borrow_bin(doc, in);
    return r == TB_OK ? doc : NULL;
}

static void tb__report_clear(tb_fix_report *rep)
{
    tb_appendage_report_free(&rep->repair);
    tb_retarget_report_free(rep->retarget);
    free(rep->retarget);
    tb_bake_report_free(&rep->bake);
    free(rep->stretch);
    memset(rep, 0, sizeof *rep);
}

float tb_fix_torn(const tb_fix_stretch *s)
{
    float t = isnan(s->result.tail.torn_frac) ? 0 : s->result.tail.torn_frac;
    float sm = isnan(s->result.seam.torn_frac) ? 0 : s->result.seam.torn_frac;
    return sm > t ? sm : t;
}

/* Largest bend of each tail joint over a clip: the angle of its sampled
 * local rotation from its rest (SPEC B's bend), at 30 samples a second. */
static tb_result tb__bends(tb_fix_stretch *s, const tb_model *m, const tb_clip *clip, float duration, tb_error *err)
{
    const tb_skeleton *sk = &m->skel;
    int J = sk->joint_count;
    s->bend_count = 0;
    int *which = malloc(((size_t)J + 1) * sizeof *which);
    tb_transform *loc = malloc(((size_t)J + 1) * sizeof *loc);
    if (!which || !loc) {
        free(which);
        free(loc);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (int j = 0; j < J; j++) {
        int c, i;
        which[j] = -1;
        if (sk->names && sk->names[j] && tb_tail_name_parse(sk->names[j], &c, &i) && i > 0 &&
            s->bend_count < TB_FIX_MAX_BENDS) {
            which[j] = s->bend_count;
            snprintf(s->bend_joint[s->bend_count], sizeof s->bend_joint[0], "%s", sk->names[j]);
            s->bend_rad[s->bend_count++] = 0;
        }
    }
    int n = (int)ceilf(duration * 30.0f) + 1;
    for (int f = 0; s->bend_count && f < n; f++) {
        float t = n > 1 ? duration * (float)f / (float)(n - 1) : 0;
        tb_clip_sample(clip, sk, t, loc);
        for (int j = 0; j < J; j++) {
            if (which[j] < 0)
                continue;
            const float *a = sk->rest_local[j].r, *b = loc[j].r;
            double dot = (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2] + (double)a[3] * b[3];
            double d2 = 0, s2 = 0;
            for (int k = 0; k < 4; k++) {
                double dk = (double)b[k] - (dot < 0 ? -1 : 1) * (double)a[k];
                double sk2 = (double)b[k] + (dot < 0 ? -1 : 1) * (double)a[k];
                d2 += dk * dk;
                s2 += sk2 * sk2;
            }
            float ang = (float)(4 * atan2(sqrt(d2), sqrt(s2)));
            if (ang > s->bend_rad[which[j]])
                s->bend_rad[which[j]] = ang;
        }
    }
    free(which);
    free(loc);
    return TB_OK;
}

typedef struct tb__task_result {
    tb_result r;
    tb_error err;
} tb__task_result;

/* One skinned-positions scratch a thread (tb_measure_desc.skinned), for
 * min(threads, n) threads, allocated here on the calling thread: glibc
 * gives each worker thread a heap of its own, which would take fresh pages
 * for its scratch while the caller's heap holds what the job freed.
 * NULL-terminated; NULL when out of memory. */
static float **tb__skin_scratch(int threads, int n, size_t nv)
{
    int t = threads < n ? threads : n;
    t = t > 1 ? t : 1;
    float **b = calloc((size_t)t + 1, sizeof *b);
    for (int i = 0; b && i < t; i++)
        if (!(b[i] = malloc((nv + 1) * 3 * sizeof **b))) {
            while (i-- > 0)
                free(b[i]);
            free(b);
            return NULL;
        }
    return b;
}

static void tb__skin_scratch_free(float **b)
{
    for (int i = 0; b && b[i]; i++)
        free(b[i]);
    free(b);
}

typedef struct tb__measure_job {
    const tb_doc *doc;
    const tb_model *m;
    const uint64_t *edges;
    size_t ne;
    const uint8_t *tail_joints;
    tb_fix_report *rep;
    int *clip_of;           /* task k measures bake.clips[clip_of[k]] into stretch[k] */
    tb__task_result *res;
    const tb_measure_prep *prep; /* the edges' lengths and groups, the tail: one for every clip */
    float **skinned;        /* per worker (tb__skin_scratch) */
} tb__measure_job;

static void tb__measure_task(void *ctx, int k, int worker)
{
    tb__measure_job *job = ctx;
    const tb_bake_clip *bc = &job->rep->bake.clips[job->clip_of[k]];
    tb__task_result *o = &job->res[k];
    tb_clip *clip = NULL;
    o->r = tb_clip_load(&clip, job->doc, job->m, bc->animation, NULL, &o->err);
    if (o->r != TB_OK)
        return;
    tb_measure_desc md;
    memset(&md, 0, sizeof md);
    md.loop = bc->looping;
    md.edges = job->edges;
    md.edge_count = job->ne;
    md.tail_joints = job->tail_joints;
    md.prep = job->prep;
    md.skinned = job->skinned[worker];
    tb_fix_stretch *s = &job->rep->stretch[k];
    o->r = tb_measure_clip(&s->result, job->m, clip, &md, &o->err);
    if (o->r == TB_OK)
        o->r = tb__bends(s, job->m, clip, s->result.duration_s, &o->err);
    if (o->r == TB_OK) {
        s->animation = bc->animation;
        snprintf(s->clip, sizeof s->clip, "%s", bc->name);
    }
    tb_clip_free(clip);
}

/* The model of the skin with the most skinned vertices (tb_model_load's
 * -1), without the normals: nothing in the job reads them. */
static tb_result tb__model_load(tb_model **m, const tb_doc *doc, tb_error *err)
{
    tb_model_desc md;
    memset(&md, 0, sizeof md);
    md.no_normals = 1;
    return tb_model_load_desc(m, doc, &md, err);
}

/* Measuring (and the blend search's weights) read the model's bind
 * positions, joints and weights; once the edge list (tb_measure_edges)
 * stands for the triangles, they are given back: 24 of the model's 60
 * bytes a vertex (no normals) at two triangles a vertex, before the clips'
 * scratch is taken. */
static void tb__model_trim(tb_model *m)
{
    free(m->triangles);
    m->triangles = NULL;
    m->triangle_count = 0;
}

/* Every baked clip measured on the repaired document (SPEC C), `threads`
 * clips at once. */
static tb_result tb__measure(tb_doc *doc, tb_fix_report *rep, int threads, tb_error *err)
{
    tb_model *m = NULL;
    tb_result r = tb__model_load(&m, doc, err);
    if (r != TB_OK)
        return r;
    rep->stretch = calloc((size_t)rep->bake.clip_count + 1, sizeof *rep->stretch);
    uint64_t *edges = NULL;
    size_t ne = tb_measure_edges(m, &edges); /* one edge list for every clip */
    tb__model_trim(m);
    /* the skeleton's own chains (bake.existing): their bones are the tail */
    uint8_t *tail_joints = rep->bake_existing ? calloc((size_t)m->skel.joint_count + 1, 1) : NULL;
    if (tail_joints) {
        tb_tail_chain tc[16];
        int k = tb_tail_chains_find(m, tc, 16);
        for (int c = 0; c < k && c < 16; c++)
            if (tc[c].source != TB_CHAIN_TAILBONE)
                for (int i = 0; i < tc[c].count; i++)
                    tail_joints[tc[c].joints[i]] = 1;
    }
    if (!rep->stretch || ne == SIZE_MAX || (rep->bake_existing && !tail_joints)) {
        free(tail_joints);
        free(edges);
        tb_model_free(m);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    /* every clip in parallel (bake.threads), each into its own slot */
    int n = 0;
    tb__measure_job job = {doc, m, edges, ne, tail_joints, rep, calloc((size_t)rep->bake.clip_count + 1, sizeof(int)),
                           calloc((size_t)rep->bake.clip_count + 1, sizeof(tb__task_result)), NULL, NULL};
    if (!job.clip_of || !job.res) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    } else {
        for (int c = 0; c < rep->bake.clip_count; c++)
            if (!rep->bake.clips[c].skipped)
                job.clip_of[n++] = c;
        tb_measure_desc pd = {.edges = edges, .edge_count = ne, .tail_joints = tail_joints};
        tb_measure_prep *prep = NULL;
        if (n > 0 && (r = tb_measure_prepare(&prep, m, &pd, err)) == TB_OK) {
            free(edges); /* the prep keeps its own, smaller form */
            edges = NULL;
            job.edges = NULL;
            job.prep = prep;
            if (!(job.skinned = tb__skin_scratch(threads, n, m->vertex_count)))
                r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
            else
                tb__parallel_for(n, threads, tb__measure_task, &job);
            tb__skin_scratch_free(job.skinned);
        }
        tb_measure_prep_free(prep);
        for (int k = 0; k < n && r == TB_OK; k++) {
            if (job.res[k].r != TB_OK) {
                *err = job.res[k].err;
                r = job.res[k].r;
            } else {
                rep->stretch_count++;
            }
        }
    }
    free(job.clip_of);
    free(job.res);
    free(edges);
    free(tail_joints);
    tb_model_free(m);
    return r;
}

/* Steps 1-2 of an attempt: a fresh copy of `in`, repaired (the weight plan
 * handed back) and given the library's clips. */
static tb_result tb__prepare(tb_doc **out, const tb_doc *in, const tb_fix_desc *d, const tb_appendage_desc *repair,
                             tb_fix_report *rep, tb__weight_plan **plan, tb_error *err)
{
    *out = NULL;
    tb_doc *doc = tb__copy(in, err);
    if (!doc)
        return err ? err->code : TB_ERR_OOM;
    tb_result r = TB_OK;
    rep->bake_existing = d->bake.existing && !d->no_bake;
    if (rep->bake_existing) {
        /* the skeleton's own tail: nothing to detect or rig, weights kept */
        snprintf(rep->repair.message, sizeof rep->repair.message,
                 "the skeleton's own tail chain(s) driven by the spring; weights unchanged");
        rep->repair.pelvis_joint = -1;
    } else {
        tb__progress(d, "repair");
        r = tb__appendage_fix_plan(&rep->repair, doc, repair, plan, err);
    }
    rep->changed = rep->repair.changed;
    if (r == TB_OK && d->library_count > 0) {
        tb__progress(d, "transfer clips");
        tb_retarget_desc rd;
        memset(&rd, 0, sizeof rd);
        int n = 0;
        while (d->only && d->only[n])
            n++;
        rd.only = d->only;
        rd.only_count = n;
        rd.foot_contact = d->foot_contact;
        if (!(rep->retarget = calloc(1, sizeof *rep->retarget)))
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        else if ((r = tb_retarget_docs(doc, d->libraries, d->library_count, &rd, rep->retarget, err)) != TB_OK)
            free(rep->retarget), rep->retarget = NULL;
        rep->changed = 1;
    }
    if (r != TB_OK) {
        tb_doc_free(doc);
        return r;
    }
    *out = doc;
    return TB_OK;
}

/* Steps 3-4 on a prepared document: the bake with d->bake, every baked
 * clip measured. */
static tb_result tb__bake_measure(tb_doc *doc, const tb_fix_desc *d, tb_fix_report *rep, tb_error *err)
{
    tb_result r = TB_OK;
    if (!d->no_bake) {
        rep->baked = 1;
        rep->bakes++;
        tb__progress(d, "bake");
        tb_bake_desc bd = d->bake;
        bd.only = d->library_count > 0 ? NULL : d->only; /* transferred clips are already filtered */
        r = tb_bake(doc, &bd, &rep->bake, err);
        for (int c = 0; r == TB_OK && c < rep->bake.clip_count; c++)
            rep->changed |= !rep->bake.clips[c].skipped;
        if (r == TB_OK) {
            tb__progress(d, "measure");
            r = tb__measure(doc, rep, d->bake.threads, err);
        }
    }
    rep->blend_zone = 0;
    for (int i = 0; i < rep->repair.appendage_count; i++) {
        const tb_appendage *a = &rep->repair.appendages[i];
        if (a->decision == TB_DECIDE_CHAIN && !a->rigid_pieces && rep->blend_zone == 0) {
            rep->blend_zone = a->blend_zone;
            rep->collar_band = a->welded_collar ? a->collar_band : 0;
        }
    }
    return r;
}

/* One attempt: a fresh copy of `in` through every step. */
static tb_result tb__attempt(tb_doc **out, const tb_doc *in, const tb_fix_desc *d, const tb_appendage_desc *repair,
                             tb_fix_report *rep, tb__weight_plan **plan, tb_error *err)
{
    tb_result r = tb__prepare(out, in, d, repair, rep, plan, err);
    if (r == TB_OK && (r = tb__bake_measure(*out, d, rep, err)) != TB_OK) {
        tb_doc_free(*out);
        *out = NULL;
    }
    return r;
}

/* Deep copies of the repair's and the transfer's reports: the solver fit
 * starts from the state after them (its report owns its own). */
static tb_result tb__repair_copy(tb_appendage_report *dst, const tb_appendage_report *src)
{
    *dst = *src;
    dst->appendages = NULL;
    dst->appendage_count = 0;
    if (!src->appendage_count)
        return TB_OK;
    if (!(dst->appendages = malloc((size_t)src->appendage_count * sizeof *dst->appendages)))
        return TB_ERR_OOM;
    memcpy(dst->appendages, src->appendages, (size_t)src->appendage_count * sizeof *dst->appendages);
    for (int i = 0; i < src->appendage_count; i++)
        dst->appendages[i].vertices = NULL;
    dst->appendage_count = src->appendage_count;
    for (int i = 0; i < src->appendage_count; i++) {
        const tb_appendage *a = &src->appendages[i];
        if (!a->vertices)
            continue;
        size_t bytes = a->vertex_count * sizeof *a->vertices;
        if (!(dst->appendages[i].vertices = malloc(bytes + 1)))
            return TB_ERR_OOM;
        memcpy(dst->appendages[i].vertices, a->vertices, bytes);
    }
    return TB_OK;
}

static char *tb__strdup0(const char *s, int *oom)
{
    char *d = s ? strdup(s) : NULL;
    *oom |= s && !d;
    return d;
}

static tb_retarget_report *tb__retarget_copy(const tb_retarget_report *src, int *oom)
{
    if (!src)
        return NULL;
    tb_retarget_report *d = calloc(1, sizeof *d);
    if (!d) {
        *oom = 1;
        return NULL;
    }
    *d = *src;
    d->tails = NULL, d->tail_count = 0, d->clips = NULL, d->clip_count = 0;
    d->file = tb__strdup0(src->file, oom);
    if (src->tail_count && (d->tails = calloc((size_t)src->tail_count, sizeof *d->tails)))
        for (d->tail_count = 0; d->tail_count < src->tail_count; d->tail_count++) {
            d->tails[d->tail_count] = src->tails[d->tail_count];
            d->tails[d->tail_count].attachment = tb__strdup0(src->tails[d->tail_count].attachment, oom);
        }
    *oom |= src->tail_count && !d->tails;
    if (src->clip_count && (d->clips = calloc((size_t)src->clip_count, sizeof *d->clips)))
        for (d->clip_count = 0; d->clip_count < src->clip_count; d->clip_count++) {
            d->clips[d->clip_count] = src->clips[d->clip_count];
            d->clips[d->clip_count].name = tb__strdup0(src->clips[d->clip_count].name, oom);
            d->clips[d->clip_count].source = tb__strdup0(src->clips[d->clip_count].source, oom);
        }
    *oom |= src->clip_count && !d->clips;
    return d;
}

/* How an attempt's clips meet the bar: tears (tail or seam) first, then
 * the tail past SPEC C's chain row (p99 1.18, max 1.30). */
typedef struct tb__score {
    int torn_clips;
    float worst, sum;     /* torn fractions */
    int over_clips;
    float over_sum;       /* how far past the row, summed */
    float worst_max, worst_p99;
} tb__score;

#define TB__ROW_P99 1.18f
#define TB__ROW_MAX 1.30f

/* honest: the torn share of the clip's honest seam (tb_fix_stretch.repaired_seam), 0 when none */
static void tb__score_add(tb__score *s, const tb_measure_result *r, float honest)
{
    float t = isnan(r->tail.torn_frac) ? 0 : r->tail.torn_frac;
    float sm = isnan(r->seam.torn_frac) ? 0 : r->seam.torn_frac;
    float f = sm > t ? sm : t;
    f = honest > f ? honest : f;
    s->torn_clips += f > 0;
    s->worst = f > s->worst ? f : s->worst;
    s->sum += f;
    if (r->tail.samples && !isnan(r->tail.p99)) {
        float op = r->tail.p99 - TB__ROW_P99, om = r->tail.max - TB__ROW_MAX;
        s->over_clips += op > 0 || om > 0;
        s->over_sum += (op > 0 ? op : 0) + (om > 0 ? om : 0);
        s->worst_max = r->tail.max > s->worst_max ? r->tail.max : s->worst_max;
        s->worst_p99 = r->tail.p99 > s->worst_p99 ? r->tail.p99 : s->worst_p99;
    }
}

/* a strictly better than b: less torn in all, fewer clips torn, fewer
 * clips past the row, less past it (ties keep the earlier, smaller change).
 * The torn share comes first: counting clips first kept Soldier
 * up_welded_hips+vest's collar band 1 (one clip, 4.2% torn) over band 2
 * (two clips, under 0.05% each). */
static int tb__better(const tb__score *a, const tb__score *b)
{
    if (fabsf(a->sum - b->sum) > 1e-6f)
        return a->sum < b->sum;
    if (a->torn_clips != b->torn_clips)
        return a->torn_clips < b->torn_clips;
    if (a->over_clips != b->over_clips)
        return a->over_clips < b->over_clips;
    return a->over_sum < b->over_sum - 1e-4f;
}

static int tb__clean(const tb__score *s)
{
    return !s->torn_clips && !s->over_clips;
}

static void tb__try_record(tb_fix_report *rep, float zone, float band, const tb__score *s)
{
    if (rep->zone_try_count < TB_FIX_MAX_TRIES)
        rep->zone_tries[rep->zone_try_count++] =
            (tb_fix_zone_try){zone, s->torn_clips, s->worst, band, s->worst_max, s->worst_p99, 0};
}

/* One try's measurement of clip c (the blend search, every clip at once). */
typedef struct tb__try_job {
    const tb_model *M;
    const tb_clip *const *clips;
    const int *loops;
    const uint64_t *edges;
    size_t ne;
    const uint16_t *jo;
    const float *wo;
    const uint8_t *mask; /* NULL: SPEC C's groups; else the honest seam's (tb__honest) */
    tb_measure_result *cur;
    tb__task_result *res;
    const tb_measure_prep *prep; /* tb__try_measure's, for every clip */
    float **skinned;             /* its per worker (tb__skin_scratch) */
} tb__try_job;

static void tb__try_task(void *ctx, int c, int worker)
{
    const tb__try_job *j = ctx;
    tb_measure_desc md;
    memset(&md, 0, sizeof md);
    md.loop = j->loops[c];
    md.edges = j->edges;
    md.edge_count = j->ne;
    md.joints = j->jo;
    md.weights = j->wo;
    md.tail_mask = j->mask;
    md.prep = j->prep;
    md.skinned = j->skinned[worker];
    j->res[c].r = tb_measure_clip(&j->cur[c], j->M, j->clips[c], &md, &j->res[c].err);
}

/* Measures every clip of the job (tj->cur, tj->res); the first failure. */
static tb_result tb__try_measure(tb__try_job *tj, int n, int threads, tb_error *err)
{
    tb_measure_desc pd = {.edges = tj->edges, .edge_count = tj->ne, .joints = tj->jo, .weights = tj->wo,
                          .tail_mask = tj->mask};
    tb_measure_prep *prep = NULL;
    tb_result r = n > 0 ? tb_measure_prepare(&prep, tj->M, &pd, err) : TB_OK;
    if (r != TB_OK)
        return r;
    tj->prep = prep;
    if (!(tj->skinned = tb__skin_scratch(threads, n, tj->M->vertex_count)))
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    else
        tb__parallel_for(n, threads, tb__try_task, tj);
    tb__skin_scratch_free(tj->skinned);
    tj->skinned = NULL;
    tj->prep = NULL;
    tb_measure_prep_free(prep);
    if (r != TB_OK)
        return r;
    for (int c = 0; c < n; c++)
        if (tj->res[c].r != TB_OK) {
            *err = tj->res[c].err;
            return tj->res[c].r;
        }
    return TB_OK;
}

/* The honest seam of the weights tj->jo/wo (NULL: M's own), what the bar
 * checks (issue 13): the vertices the plan reweights whose weights differ
 * from their own before the repair are marked (hmask) and each clip is
 * measured with them as the tail group, into hs[c] (its seam). Skipped, hs
 * zeroed, when no edge joins a marked vertex to an unmarked one. */
static tb_result tb__honest(tb__try_job *tj, const tb__weight_plan *plan, uint8_t *hmask, int n, int threads,
                            tb_stretch_stats *hs, tb_error *err)
{
    tb__weight_plan_changed(plan, tj->M, tj->jo, tj->wo, hmask);
    memset(hs, 0, (size_t)n * sizeof *hs);
    size_t across = 0;
    for (size_t e = 0; e < tj->ne && !across; e++)
        across += hmask[tj->edges[e] >> 32] != hmask[tj->edges[e] & 0xffffffffu];
    if (!across)
        return TB_OK;
    tj->mask = hmask;
    tb_result r = tb__try_measure(tj, n, threads, err);
    tj->mask = NULL;
    for (int c = 0; r == TB_OK && c < n; c++)
        hs[c] = tj->cur[c].seam;
    return r;
}

static float tb__torn0(const tb_stretch_stats *s)
{
    return s->samples && !isnan(s->torn_frac) ? s->torn_frac : 0;
}

/* The blend search (fix.h): the smooth chains weighted again for wider
 * zones, then (welded tails) wider collar bands, each measured on the same
 * baked document with only the weights changed; the best is written into
 * *doc and measured again from the file's own (quantised) weights. */
static tb_result tb__search(tb_doc **doc, const tb_doc *in, const tb_fix_desc *d, tb__weight_plan *plan,
                            tb_fix_report *rep, int search_band, tb_error *err)
{
    tb__score first;
    memset(&first, 0, sizeof first);
    for (int c = 0; c < rep->stretch_count; c++)
        tb__score_add(&first, &rep->stretch[c].result, 0);
    /* a welded tail's honest seam is measured before it is called clean */
    if ((tb__clean(&first) && !tb__weight_plan_welded(plan)) || !rep->stretch_count)
        return TB_OK;
    float b0 = d->repair.collar_band > 0 ? d->repair.collar_band : d->repair.collar_band < 0 ? 0 : 0.5f;
    tb_model *M = NULL;
    tb_result r = tb__model_load(&M, *doc, err);
    if (r != TB_OK)
        return r;
    int n = rep->stretch_count;
    size_t VI = M->vertex_count * (size_t)M->influences;
    uint64_t *edges = NULL;
    size_t ne = tb_measure_edges(M, &edges);
    tb__model_trim(M);
    /* A try changes only the chains' weights: only edges touching a
     * reweighted vertex can be tail or seam under any try, so the tries
     * measure those (the body's figures are not scored, and do not change) */
    uint8_t *mark = calloc(M->vertex_count + 1, 1);
    if (mark && ne != SIZE_MAX) {
        tb__weight_plan_mark(plan, mark, M->vertex_count);
        size_t k = 0;
        for (size_t e = 0; e < ne; e++)
            if (mark[edges[e] >> 32] || mark[edges[e] & 0xffffffffu])
                edges[k++] = edges[e];
        ne = k;
        uint64_t *shrunk = realloc(edges, (ne + 1) * sizeof *edges); /* give the rest back */
        if (shrunk)
            edges = shrunk;
    }
    free(mark);
    tb_clip **clips = calloc((size_t)n, sizeof *clips);
    int *loops = calloc((size_t)n, sizeof *loops);
    uint16_t *jo = malloc(VI * sizeof *jo + 1);
    float *wo = malloc(VI * sizeof *wo + 1);
    tb_measure_result *cur = calloc((size_t)n, sizeof *cur);
    tb__task_result *tres = calloc((size_t)n, sizeof *tres);
    uint8_t *hmask = calloc(M->vertex_count + 1, 1);
    tb_stretch_stats *hs = calloc(2 * (size_t)n, sizeof *hs), *best_hs = hs ? hs + n : NULL;
    if (ne == SIZE_MAX || !clips || !loops || !jo || !wo || !cur || !tres || !hmask || !hs)
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int c = 0; r == TB_OK && c < n; c++) {
        r = tb_clip_load(&clips[c], *doc, M, rep->stretch[c].animation, NULL, err);
        for (int k = 0; k < rep->bake.clip_count; k++)
            if (rep->bake.clips[k].animation == rep->stretch[c].animation)
                loops[c] = rep->bake.clips[k].looping;
    }
    tb__try_job tj = {M, (const tb_clip *const *)clips, loops, edges, ne, NULL, NULL, NULL, cur, tres, NULL, NULL};
    if (r == TB_OK) /* the weights as they are: the honest seam too */
        r = tb__honest(&tj, plan, hmask, n, d->bake.threads, best_hs, err);
    if (r == TB_OK) {
        memset(&first, 0, sizeof first);
        for (int c = 0; c < n; c++) {
            rep->stretch[c].repaired_seam = best_hs[c];
            tb__score_add(&first, &rep->stretch[c].result, tb__torn0(&best_hs[c]));
        }
    }
    if (r == TB_OK && !tb__clean(&first)) {
        tb__progress(d, "blend search");
        tb__try_record(rep, rep->blend_zone, rep->collar_band, &first);
    }
    tb__score best = first;
    float best_zone = 0.25f, best_band = b0, best_zu = rep->blend_zone, best_bu = rep->collar_band;
    int best_is_first = 1, best_given = 0;
    float tried[TB_FIX_MAX_TRIES][2] = {{rep->blend_zone, rep->collar_band}};
    int ntried = 1;
    /* wider zones, then the SPEC's own weights (the geometry's raise can
     * cost a welded seam in a stress clip), then wider collar bands */
    static const float zones[] = {0.375f, 0.5f, 0.25f}, bands[] = {1.0f, 2.0f};
    int best_ring = 0;
    /* tries 5 and 6 (welded tails): the collar ring blended halfway to the
     * chain's root, with the widest zone and the first band, then with the
     * best zone and band so far */
    for (int t = 0; r == TB_OK && t < 7 && !tb__clean(&best); t++) {
        int ring = t >= 5;
        float zone = t < 3 ? zones[t] : t == 5 ? 0.5f : best_zone,
              band = t < 3 ? b0 : t < 5 ? bands[t - 3] : t == 5 ? b0 : best_band;
        int given = t == 2 || (t >= 3 && t != 5 && best_given);
        if (t >= 3 && (!search_band || !tb__weight_plan_welded(plan)))
            break;
        if (t == 6 && (best_ring || (!best_given && fabsf(best_zone - 0.5f) < 1e-4f && fabsf(best_band - b0) < 1e-4f)))
            continue;
        float zu = 0, bu = 0;
        tb__weight_plan_collar_ring(plan, ring);
        r = tb__weight_plan_weights(plan, M, zone, band, given, jo, wo, &zu, &bu, err);
        tb__weight_plan_collar_ring(plan, 0);
        if (r != TB_OK)
            break;
        int seen = 0; /* the geometry may already have raised the zone this far */
        for (int i = 0; i < ntried && !ring; i++)
            seen |= fabsf(tried[i][0] - zu) < 1e-4f && fabsf(tried[i][1] - bu) < 1e-4f;
        if (seen)
            continue;
        if (ntried < TB_FIX_MAX_TRIES)
            tried[ntried][0] = zu, tried[ntried][1] = bu, ntried++;
        char stage[64];
        snprintf(stage, sizeof stage, "blend zone %.3g, collar band %.3g: weights only", (double)zu, (double)bu);
        tb__progress(d, stage);
        tb__score sc;
        memset(&sc, 0, sizeof sc);
        tj.jo = jo, tj.wo = wo;
        r = tb__honest(&tj, plan, hmask, n, d->bake.threads, hs, err);
        if (r == TB_OK)
            r = tb__try_measure(&tj, n, d->bake.threads, err);
        if (r != TB_OK)
            break;
        for (int c = 0; c < n; c++)
            tb__score_add(&sc, &cur[c], tb__torn0(&hs[c]));
        tb__try_record(rep, zu, bu, &sc);
        if (ring && rep->zone_try_count)
            rep->zone_tries[rep->zone_try_count - 1].collar_ring = 1;
        if (tb__better(&sc, &best)) {
            best = sc;
            best_zone = zone, best_band = band, best_zu = zu, best_bu = bu;
            best_is_first = 0;
            best_given = given;
            best_ring = ring;
            memcpy(best_hs, hs, (size_t)n * sizeof *hs);
        }
    }
    for (int c = 0; clips && c < n; c++)
        tb_clip_free(clips[c]);
    free(clips);
    free(loops);
    free(jo);
    free(wo);
    free(cur);
    free(tres);
    free(edges);
    free(hmask);
    int *anim = malloc(((size_t)n + 1) * sizeof *anim); /* the kept weights' honest seam, by clip */
    for (int c = 0; anim && c < n; c++)
        anim[c] = rep->stretch[c].animation;
    if (r == TB_OK && !anim)
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r == TB_OK && !best_is_first) {
        tb__weight_plan_collar_ring(plan, best_ring);
        r = tb__weight_plan_write(plan, *doc, M, best_zone, best_band, best_given, &rep->repair, err);
        tb__weight_plan_collar_ring(plan, 0);
        tb_model_free(M); /* not needed past here: the measure below loads its own */
        M = NULL;
        if (r == TB_ERR_UNSUPPORTED) {
            /* a subset skin lacks a joint: the whole job again with the
             * chosen blend pinned */
            tb_appendage_desc repair = d->repair;
            repair.blend_zone = best_zu;
            repair.collar_band = best_bu > 0 ? best_bu : -1;
            tb_fix_report again;
            memset(&again, 0, sizeof again);
            tb_doc *nd = NULL;
            r = tb__attempt(&nd, in, d, &repair, &again, NULL, err);
            if (r == TB_OK) {
                tb_fix_zone_try tries[TB_FIX_MAX_TRIES];
                int nt = rep->zone_try_count, bakes = rep->bakes;
                memcpy(tries, rep->zone_tries, sizeof tries);
                tb__report_clear(rep);
                *rep = again;
                memcpy(rep->zone_tries, tries, sizeof tries);
                rep->zone_try_count = nt;
                rep->full_reruns = 1;
                rep->bakes += bakes;
                tb_doc_free(*doc);
                *doc = nd;
            } else {
                tb__report_clear(&again);
            }
        } else if (r == TB_OK) {
            free(rep->stretch);
            rep->stretch = NULL;
            rep->stretch_count = 0;
            r = tb__measure(*doc, rep, d->bake.threads, err);
            for (int c = 0; r == TB_OK && c < rep->stretch_count; c++)
                for (int k = 0; k < n; k++)
                    if (anim[k] == rep->stretch[c].animation)
                        rep->stretch[c].repaired_seam = best_hs[k];
        }
        rep->blend_zone = best_zu;
        rep->collar_band = best_bu;
    }
    free(anim);
    free(hs);
    tb_model_free(M);
    return r;
}

/* The geometry each chain's blend was sized from, for the report. */
static void tb__weights_report(tb_fix_report *rep, const tb__weight_plan *plan)
{
    rep->weight_count = 0;
    for (int i = 0; i < tb__weight_plan_count(plan) && rep->weight_count < TB_FIX_MAX_CHAINS; i++) {
        tb_fix_weights *w = &rep->weights[rep->weight_count];
        tb__weight_plan_geometry(plan, i, &w->appendage, &w->ring_seg, &w->radius_seg, &w->smooth);
        if (w->appendage < 0 || w->appendage >= rep->repair.appendage_count)
            continue;
        w->zone = w->smooth ? rep->repair.appendages[w->appendage].blend_zone : 0;
        w->carry_rad = w->smooth && w->radius_seg > 0 ? 2 * w->zone * TB__STRAIN_ROW / w->radius_seg : 0;
        w->sized_zone = w->smooth ? tb__weight_plan_sized_zone(plan, i) : 0;
        w->ramp_zone = w->smooth ? tb__weight_plan_ramp_zone(plan, i) : 0;
        rep->weight_count++;
    }
}

/* The solver fitted to what the weights carry (issue 13, "bend where the
 * tail can bend"): the bend limit becomes, for the weakest chain, the bend
 * its blend carries within the chain row less that joint's share of the
 * carry (the carry bends the skin from its bind pose too), never below
 * 10°, when that is below the current limit; and when the bind pose turns
 * more per joint than the blend carries, the authored curve is kept
 * (restCurve 1) instead of straightening it into the centred arc. Returns
 * 0 when nothing would change. */
static int tb__solver_fit(const tb_fix_desc *d, const tb_doc *in, const tb_fix_report *rep, tb_bake_desc *fb)
{
    tb_spring_params *sp = &fb->spring.params;
    float carry = sp->carry_rad > 0 ? sp->carry_rad : sp->carry_rad < 0 ? 0 : 50 * (float)TB_RAD_PER_DEG;
    float limit = sp->bend_limit_rad > 0 ? sp->bend_limit_rad : 30 * (float)TB_RAD_PER_DEG;
    float fit_limit = INFINITY, min_carry = INFINITY, min_sized = INFINITY, max_turn = 0;
    int max_k = 0;
    /* the character's axes: the centred arc (SPEC B) is built in them */
    float up[3], fwd[3], lat[3] = {0, 0, 0};
    tb_model *m = NULL;
    tb_error e2 = {0};
    int have_axes = tb__model_load(&m, in, &e2) == TB_OK && tb_model_axes(m, up, fwd);
    if (have_axes) {
        lat[0] = up[1] * fwd[2] - up[2] * fwd[1];
        lat[1] = up[2] * fwd[0] - up[0] * fwd[2];
        lat[2] = up[0] * fwd[1] - up[1] * fwd[0];
        float n = sqrtf(lat[0] * lat[0] + lat[1] * lat[1] + lat[2] * lat[2]);
        for (int i = 0; i < 3; i++)
            lat[i] = n > 0 ? lat[i] / n : 0;
    }
    for (int i = 0; i < rep->weight_count; i++) {
        const tb_fix_weights *w = &rep->weights[i];
        if (!w->smooth || !(w->carry_rad > 0))
            continue;
        const tb_appendage *a = &rep->repair.appendages[w->appendage];
        int K = a->bone_count;
        if (K < 1)
            continue;
        max_k = K > max_k ? K : max_k;
        float l = w->carry_rad - carry / (float)K, lo = 10 * (float)TB_RAD_PER_DEG;
        l = l < lo ? lo : l;
        fit_limit = l < fit_limit ? l : fit_limit;
        min_carry = w->carry_rad < min_carry ? w->carry_rad : min_carry;
        /* the fit's own search may keep a narrower zone than this bake's */
        float zs = w->sized_zone > 0 && w->sized_zone < w->zone ? w->sized_zone : w->zone;
        zs = w->ramp_zone > 0 && w->ramp_zone < zs ? w->ramp_zone : zs; /* a steeper ramp carries less */
        float cs = 2 * zs * TB__STRAIN_ROW / w->radius_seg;
        min_sized = cs < min_sized ? cs : min_sized;
        /* The centred arc turns the root segment into the midplane
         * (c = its direction less its lateral part): the root joint then
         * bends by the segment's lateral angle from its bind pose before the
         * spring moves at all. A tail hanging beside a leg (the Robot's
         * hang_shell_leg: its first segment 54 deg sideways) took that whole
         * bend at its root and tore there in every clip alike. */
        if (have_axes) {
            const float *p0 = a->chain_joints[0], *p1 = a->chain_joints[1];
            float u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
            float nu = sqrtf(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
            if (nu > 0) {
                float s = fabsf(u[0] * lat[0] + u[1] * lat[1] + u[2] * lat[2]) / nu;
                float t = asinf(s > 1 ? 1 : s);
                max_turn = t > max_turn ? t : max_turn;
            }
        }
        for (int k = 1; k < K; k++) {
            const float *p0 = a->chain_joints[k - 1], *p1 = a->chain_joints[k], *p2 = a->chain_joints[k + 1];
            float u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]}, v[3] = {p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]};
            float nu = sqrtf(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), nv = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            if (!(nu > 0) || !(nv > 0))
                continue;
            float c = (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) / (nu * nv);
            float t = acosf(c > 1 ? 1 : c < -1 ? -1 : c);
            max_turn = t > max_turn ? t : max_turn;
        }
    }
    /* What the clips measured: the limit bounds a joint's bend from the
     * spring's rest target, which itself lies off the bind pose (the carry,
     * the centred rest arc), so a joint's bend from the bind pose — what the
     * skin sees — reaches the limit plus that offset. Lower the limit by how
     * far the largest measured bend went past what the weights carry. */
    float excess = 0;
    for (int c = 0; c < rep->stretch_count && min_carry < INFINITY; c++)
        for (int k = 0; k < rep->stretch[c].bend_count; k++) {
            float e = rep->stretch[c].bend_rad[k] - min_carry;
            excess = e > excess ? e : excess;
        }
    float leftover = 0; /* what the limit cannot take above its floor */
    if (excess > 0) {
        float l = limit - excess, lo = 10 * (float)TB_RAD_PER_DEG;
        leftover = l < lo ? lo - l : 0;
        l = l < lo ? lo : l;
        fit_limit = l < fit_limit ? l : fit_limit;
    }
    /* ground contact beats the limit in SPEC B; here it never folds a joint
     * past it (spring.h, contact_keeps_limit) */
    sp->contact_keeps_limit = 1;
    int changed = 0;
    /* The limit above bounds the bend from the rest target; what the skin
     * sees is the bend from the bind pose, which the carry and the centred
     * arc shift by up to a joint's whole rest offset (hang_shell_leg's
     * joint 2: 26 deg). So the bend from the bind pose is bounded too
     * (spring.h, bind_limit_rad), by TB__BIND_SHARE of the carried bend:
     * every joint at the full carried bend at once still tore
     * hang_shell_leg's Crouch (0.1-0.3% at 28-31 deg), 3/4 of it (24 deg)
     * did not (docs/fix.md). */
    if (!(d->bake.spring.params.bind_limit_rad > 0) && min_sized < INFINITY) {
        float b = TB__BIND_SHARE * min_sized, lo = 10 * (float)TB_RAD_PER_DEG;
        sp->bind_limit_rad = b < lo ? lo : b;
        changed = 1;
    }
    if (!(d->bake.spring.params.bend_limit_rad > 0) && fit_limit < limit - 1e-4f) {
        sp->bend_limit_rad = fit_limit;
        changed = 1;
    }
    if (!d->rest_curve_given && !(sp->rest_curve > 0) && max_turn > min_carry) {
        sp->rest_curve = 1;
        changed = 1;
    }
    /* The carry bends every joint by C/K from its bind pose before the
     * spring moves at all: what the limit (at its floor) cannot take off
     * the excess comes off the carry, K joints' worth, when the user gave
     * none (up_shell_spine: the tail curls over the back in its bind pose,
     * and lifting it a further 50° is what took it past the row). */
    float c2 = carry;
    if (leftover > 0 && max_k > 0)
        c2 = carry - (float)max_k * leftover;
    /* With the authored curve kept, the carry turns segment i of K by a
     * further C (i+1)/K about the lateral axis, back and up: a tail already
     * standing up in its bind pose (up_shell_spine: its last segments are
     * vertical) is folded over the back by it. So no segment's authored
     * elevation (above the backward horizontal) plus its share of the carry
     * may pass the vertical. */
    if (sp->rest_curve >= 1 && have_axes) {
        for (int i = 0; i < rep->weight_count; i++) {
            const tb_fix_weights *w = &rep->weights[i];
            const tb_appendage *a = &rep->repair.appendages[w->appendage];
            if (!w->smooth || a->bone_count < 1)
                continue;
            for (int k = 0; k < a->bone_count; k++) {
                const float *p0 = a->chain_joints[k], *p1 = a->chain_joints[k + 1];
                float v[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
                float y = v[0] * up[0] + v[1] * up[1] + v[2] * up[2];
                float b = -(v[0] * fwd[0] + v[1] * fwd[1] + v[2] * fwd[2]);
                float room = 1.5707963f - atan2f(y, b); /* to the vertical */
                float cap = room > 0 ? room * (float)a->bone_count / (float)(k + 1) : 0;
                c2 = cap < c2 ? cap : c2;
            }
        }
    }
    tb_model_free(m);
    if (!(d->bake.spring.params.carry_rad != 0) && carry > 0 && c2 < carry - 1e-4f) {
        sp->carry_rad = c2 > 1e-4f ? c2 : TB_SPRING_ZERO;
        changed = 1;
    }
    return changed;
}

static void tb__score_report(const tb_fix_report *rep, tb__score *s)
{
    memset(s, 0, sizeof *s);
    for (int c = 0; c < rep->stretch_count; c++)
        tb__score_add(s, &rep->stretch[c].result, tb__torn0(&rep->stretch[c].repaired_seam));
}

tb_result tb_fix_run(tb_doc **out, const tb_doc *in, const tb_fix_desc *desc, tb_fix_report *rep, tb_error *err)
{
    if (rep)
        memset(rep, 0, sizeof *rep);
    if (out)
        *out = NULL;
    if (!out || !in || !rep)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_fix_run needs an output, an input and a report");
    tb_fix_desc d;
    if (desc)
        d = *desc;
    else
        memset(&d, 0, sizeof d);
    /* Detection and transfer run once; the blend search re-applies only the
     * weights, the solver fit only the bake (and the search after it). The
     * user's own zone is never searched, nor a band given with it. */
    int search_zone = !(d.repair.blend_zone > 0) && !d.no_bake;
    int search_band = search_zone && d.repair.collar_band == 0;
    int may_fit = search_zone && !d.no_solver_fit && !d.bake.existing;
    tb__weight_plan *plan = NULL;
    tb_doc *doc = NULL;
    /* what the solver fit starts from: the document before its first bake
     * (JSON and BIN length: the bake and the weights only append), and the
     * repair's and transfer's reports as they were then */
    tb__doc_state pre;
    memset(&pre, 0, sizeof pre);
    tb_appendage_report pre_repair;
    memset(&pre_repair, 0, sizeof pre_repair);
    tb_retarget_report *pre_retarget = NULL;
    int pre_changed = 0, have_pre = 0;
    float *pre_ramp = NULL; /* the plan's ramps as detection wrote the weights */
    tb_result r = tb__prepare(&doc, in, &d, &d.repair, rep, &plan, err);
    if (r == TB_OK && may_fit && plan && tb__weight_plan_smooth(plan)) {
        int oom = tb__doc_state_save(doc, doc->bin_size, &pre) != TB_OK;
        oom |= tb__repair_copy(&pre_repair, &rep->repair) != TB_OK;
        pre_retarget = tb__retarget_copy(rep->retarget, &oom);
        pre_changed = rep->changed;
        pre_ramp = malloc(((size_t)tb__weight_plan_count(plan) + 1) * sizeof *pre_ramp);
        oom |= !pre_ramp;
        for (int i = 0; pre_ramp && i < tb__weight_plan_count(plan); i++)
            pre_ramp[i] = tb__weight_plan_ramp_zone(plan, i);
        have_pre = !oom;
        if (oom)
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    if (r == TB_OK && (r = tb__bake_measure(doc, &d, rep, err)) != TB_OK) {
        tb_doc_free(doc);
        doc = NULL;
    }
    if (r == TB_OK && search_zone && plan && rep->baked && tb__weight_plan_smooth(plan))
        r = tb__search(&doc, in, &d, plan, rep, search_band, err);
    if (r == TB_OK)
        tb__weights_report(rep, plan);
    tb__score best;
    tb__score_report(rep, &best);
    tb_fix_desc fd = d;
    rep->fit_rest_curve = -1;
    rep->fit_carry_rad = -1;
    if (r == TB_OK && may_fit && rep->baked && (best.torn_clips || best.over_clips) &&
        tb__solver_fit(&d, in, rep, &fd.bake)) {
        /* the solver fitted to the weights: its bake differs, so the bake,
         * the measure and the blend search again, on the document as it
         * was before the first bake (detection and transfer kept) */
        tb__progress(&d, "solver fitted to the weights: bake again");
        tb_fix_report fit;
        memset(&fit, 0, sizeof fit);
        tb_doc *fdoc = NULL;
        tb__doc_state first; /* the first result, while the fit is baked */
        memset(&first, 0, sizeof first);
        int in_place = have_pre && !rep->full_reruns;
        tb_result fr = TB_OK;
        if (in_place) {
            if (tb__doc_state_save(doc, pre.base, &first) != TB_OK)
                fr = tb__fail(err, TB_ERR_OOM, NULL, NULL);
            fit.repair = pre_repair;
            memset(&pre_repair, 0, sizeof pre_repair);
            fit.retarget = pre_retarget;
            pre_retarget = NULL;
            fit.changed = pre_changed;
            fit.bake_existing = rep->bake_existing;
            for (int i = 0; i < tb__weight_plan_count(plan); i++)
                tb__weight_plan_set_ramp_zone(plan, i, pre_ramp[i]);
            if (fr == TB_OK && (fr = tb__doc_state_restore(doc, &pre, err)) == TB_OK) {
                fdoc = doc;
                doc = NULL;
                fr = tb__bake_measure(fdoc, &fd, &fit, err);
            }
        } else {
            /* the first search redid the whole job (a subset skin lacked a
             * joint): so does the fit, from a fresh copy */
            tb__weight_plan_free(plan);
            plan = NULL;
            fr = tb__attempt(&fdoc, in, &fd, &d.repair, &fit, &plan, err);
            rep->full_reruns++;
        }
        if (fr == TB_OK && plan && tb__weight_plan_smooth(plan))
            fr = tb__search(&fdoc, in, &fd, plan, &fit, search_band, err);
        if (fr == TB_OK)
            tb__weights_report(&fit, plan);
        if (fr == TB_OK) {
            tb__score sc;
            tb__score_report(&fit, &sc);
            if (tb__better(&sc, &best)) {
                tb_doc_free(doc);
                doc = fdoc;
                fdoc = NULL;
                int reruns = rep->full_reruns, bakes = rep->bakes;
                tb__report_clear(rep);
                *rep = fit;
                memset(&fit, 0, sizeof fit);
                rep->full_reruns += reruns;
                rep->bakes += bakes;
                rep->solver_fit_kept = 1;
            } else {
                rep->bakes += fit.bakes;
            }
            if (!doc) {
                /* the first result back in place */
                fr = tb__doc_state_restore(fdoc, &first, err);
                doc = fdoc;
                fdoc = NULL;
            }
        }
        tb__doc_state_free(&first);
        tb_doc_free(fdoc);
        tb__report_clear(&fit);
        r = fr; /* on failure, the common cleanup below frees doc and returns it */
        if (r == TB_OK) {
            float lim = fd.bake.spring.params.bend_limit_rad != d.bake.spring.params.bend_limit_rad
                            ? fd.bake.spring.params.bend_limit_rad
                            : 0;
            float rc = fd.bake.spring.params.rest_curve != d.bake.spring.params.rest_curve
                           ? fd.bake.spring.params.rest_curve
                           : -1;
            rep->solver_fit_tried = 1;
            rep->fit_bend_limit_rad = lim;
            rep->fit_rest_curve = rc;
            rep->fit_carry_rad = fd.bake.spring.params.carry_rad != d.bake.spring.params.carry_rad
                                     ? (fd.bake.spring.params.carry_rad > 0 ? fd.bake.spring.params.carry_rad : 0)
                                     : -1;
            rep->fit_bind_limit_rad = fd.bake.spring.params.bind_limit_rad != d.bake.spring.params.bind_limit_rad
                                          ? fd.bake.spring.params.bind_limit_rad
                                          : 0;
        }
    }
    tb__weight_plan_free(plan);
    tb__doc_state_free(&pre);
    free(pre_ramp);
    tb_appendage_report_free(&pre_repair);
    tb_retarget_report_free(pre_retarget);
    free(pre_retarget);
    if (r == TB_OK && tb__doc_own_bin(doc) != TB_OK) /* the caller may free `in` first */
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r != TB_OK) {
        tb_doc_free(doc);
        return r;
    }
    *out = doc;
    return TB_OK;
}

void tb_fix_report_free(tb_fix_report *rep)
{
    if (rep)
        tb__report_clear(rep);
}

static json_t *tb__num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *tb__stats_row(const tb_stretch_stats *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "p95", tb__num(st->p95));
    json_object_set_new(o, "p99", tb__num(st->p99));
    json_object_set_new(o, "max", tb__num(st->max));
    json_object_set_new(o, "torn", json_real(isnan(st->torn_frac) ? 0.0 : (double)st->torn_frac));
    json_object_set_new(o, "samples", json_integer((json_int_t)st->samples));
    return o;
}

static json_t *tb__bake_json(const tb_bake_report *b)
{
    json_t *clips = json_array();
    for (int c = 0; c < b->clip_count; c++) {
        const tb_bake_clip *bc = &b->clips[c];
        json_t *o = json_pack("{s:s,s:i,s:b}", "clip", bc->name, "animation", bc->animation, "baked", !bc->skipped);
        if (bc->skipped) {
            json_object_set_new(o, "reason", json_string(bc->reason));
        } else {
            json_t *facts = json_pack("{s:b,s:b,s:i,s:i,s:f,s:f,s:f}", "looping", bc->looping, "wraps", bc->wraps,
                                      "passes", bc->passes, "keys", bc->keys, "duration_s", (double)bc->duration_s,
                                      "loop_closure_deg", bc->closure_rad * TB_DEG_PER_RAD, "swing_deg",
                                      bc->swing_rad * TB_DEG_PER_RAD);
            json_object_update(o, facts);
            json_decref(facts);
        }
        json_array_append_new(clips, o);
    }
    return json_pack("{s:i,s:i,s:f,s:f,s:o}", "chains", b->chain_count, "bones", b->bone_count, "ground_y",
                     (double)b->ground_y_m, "units_per_metre", (double)b->world_units_per_m, "clips", clips);
}

json_t *tb_fix_report_json(const tb_fix_report *rep)
{
    json_t *j = tb_appendage_report_json(&rep->repair);
    json_object_set_new(j, "changed", json_boolean(rep->changed));
    if (rep->repair.collar_changed)
        json_object_set_new(j, "collar_changed", json_integer((json_int_t)rep->repair.collar_changed));
    if (rep->retarget)
        json_object_set_new(j, "retarget", tb_retarget_report_json(rep->retarget));
    if (rep->zone_try_count) {
        json_t *z = json_array();
        for (int i = 0; i < rep->zone_try_count; i++)
        {
            json_t *o = json_pack("{s:f,s:i,s:f}", "blend_zone", (double)rep->zone_tries[i].blend_zone, "torn_clips",
                                  rep->zone_tries[i].torn_clips, "worst_torn", (double)rep->zone_tries[i].worst_torn);
            if (rep->zone_tries[i].collar_band > 0)
                json_object_set_new(o, "collar_band", json_real(rep->zone_tries[i].collar_band));
            if (rep->zone_tries[i].collar_ring)
                json_object_set_new(o, "collar_ring", json_true());
            json_object_set_new(o, "worst_tail_max", tb__num(rep->zone_tries[i].worst_max));
            json_object_set_new(o, "worst_tail_p99", tb__num(rep->zone_tries[i].worst_p99));
            json_array_append_new(z, o);
        }
        json_object_set_new(j, "blend_zone_search", z);
    }
    if (rep->weight_count) {
        json_t *w = json_array();
        for (int i = 0; i < rep->weight_count; i++) {
            const tb_fix_weights *x = &rep->weights[i];
            json_t *o = json_pack("{s:i,s:b}", "appendage", x->appendage, "smooth", x->smooth);
            json_object_set_new(o, "ring_spacing_segments", tb__num(x->ring_seg));
            json_object_set_new(o, "radius_segments", tb__num(x->radius_seg));
            if (x->smooth) {
                json_object_set_new(o, "blend_zone", tb__num(x->zone));
                json_object_set_new(o, "carried_bend_deg", tb__num(x->carry_rad * TB_DEG_PER_RAD));
                if (x->ramp_zone > 0)
                    json_object_set_new(o, "ramp_zone", tb__num(x->ramp_zone));
            }
            json_array_append_new(w, o);
        }
        json_object_set_new(j, "weights", w);
        json_object_set_new(j, "full_reruns", json_integer(rep->full_reruns));
        json_object_set_new(j, "bakes", json_integer(rep->bakes));
        if (rep->solver_fit_tried) {
            json_t *f = json_pack("{s:b}", "kept", rep->solver_fit_kept);
            if (rep->fit_bend_limit_rad > 0)
                json_object_set_new(f, "bend_limit_deg", tb__num(rep->fit_bend_limit_rad * TB_DEG_PER_RAD));
            if (rep->fit_rest_curve >= 0)
                json_object_set_new(f, "rest_curve", tb__num(rep->fit_rest_curve));
            if (rep->fit_carry_rad >= 0)
                json_object_set_new(f, "carry_deg", tb__num(rep->fit_carry_rad * TB_DEG_PER_RAD));
            if (rep->fit_bind_limit_rad > 0)
                json_object_set_new(f, "bind_limit_deg", tb__num(rep->fit_bind_limit_rad * TB_DEG_PER_RAD));
            json_object_set_new(j, "solver_fit", f);
        }
    }
    if (rep->baked) {
        json_object_set_new(j, "bake", tb__bake_json(&rep->bake));
        json_t *rows = json_array();
        for (int c = 0; c < rep->stretch_count; c++) {
            const tb_fix_stretch *s = &rep->stretch[c];
            const tb_measure_result *r = &s->result;
            json_t *row = json_object();
            json_object_set_new(row, "clip", json_string(s->clip));
            json_object_set_new(row, "tail", tb__stats_row(&r->tail));
            json_object_set_new(row, "body", tb__stats_row(&r->body));
            json_object_set_new(row, "tip_travel_h", tb__num(r->tip_travel_h));
            json_object_set_new(row, "max_tail_rotation_deg", tb__num(r->max_bone_rotation_rad * TB_DEG_PER_RAD));
            json_object_set_new(row, "bone_distance_h", tb__num(r->bone_distance / r->height));
            if (r->seam.edges)
                json_object_set_new(row, "seam", tb__stats_row(&r->seam));
            if (s->repaired_seam.samples) /* the honest seam, measured by the blend search */
                json_object_set_new(row, "repaired_seam", tb__stats_row(&s->repaired_seam));
            json_t *bends = json_object();
            for (int k = 0; k < s->bend_count; k++)
                json_object_set_new(bends, s->bend_joint[k], tb__num(s->bend_rad[k] * TB_DEG_PER_RAD));
            json_object_set_new(row, "max_bend_deg", bends);
            json_array_append_new(rows, row);
        }
        json_object_set_new(j, "stretch", rows);
    }
    return j;
}
