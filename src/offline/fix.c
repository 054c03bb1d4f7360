/* The whole job (tailbone/fix.h): repair → transfer → bake → measure, and the
 * blend-zone search around it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offline/doc_internal.h"
#include "tailbone/clip.h"
#include "tailbone/fix.h"
#include "tailbone/model.h"
#include "tailbone/retarget.h"

#define TB__DEG (3.14159265358979 / 180.0)

static void tb__progress(const tb_fix_desc *d, const char *stage)
{
    if (d->progress)
        d->progress(d->progress_user, stage);
}

static tb_doc *tb__copy(const tb_doc *in, tb_error *err)
{
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (tb_doc_write_memory(in, &bytes, &size, err) != TB_OK)
        return NULL;
    tb_doc *doc = NULL;
    tb_load_desc ld = {.allow_unsupported = 1}; /* the input was accepted once already */
    tb_result r = tb_doc_load_memory(&doc, bytes, size, tb_doc_name(in), NULL, &ld, err);
    free(bytes);
    return r == TB_OK ? doc : NULL;
}

static void tb__report_clear(tb_fix_report *rep)
{
    tb_appendage_report_free(&rep->repair);
    json_decref(rep->retarget);
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

/* Every baked clip measured on the repaired document (SPEC C). */
static tb_result tb__measure(tb_doc *doc, tb_fix_report *rep, tb_error *err)
{
    tb_model *m = NULL;
    tb_result r = tb_model_load(&m, doc, -1, err);
    if (r != TB_OK)
        return r;
    rep->stretch = calloc((size_t)rep->bake.clip_count + 1, sizeof *rep->stretch);
    uint64_t *edges = NULL;
    size_t ne = tb_measure_edges(m, &edges); /* one edge list for every clip */
    if (!rep->stretch || ne == SIZE_MAX) {
        free(edges);
        tb_model_free(m);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (int c = 0; c < rep->bake.clip_count && r == TB_OK; c++) {
        const tb_bake_clip *bc = &rep->bake.clips[c];
        if (bc->skipped)
            continue;
        tb_clip *clip = NULL;
        r = tb_clip_load(&clip, doc, m, bc->animation, NULL, err);
        if (r != TB_OK)
            break;
        tb_measure_desc md;
        memset(&md, 0, sizeof md);
        md.loop = bc->looping;
        md.edges = edges;
        md.edge_count = ne;
        tb_fix_stretch *s = &rep->stretch[rep->stretch_count];
        r = tb_measure_clip(&s->result, m, clip, &md, err);
        if (r == TB_OK) {
            s->animation = bc->animation;
            snprintf(s->clip, sizeof s->clip, "%s", bc->name);
            rep->stretch_count++;
        }
        tb_clip_free(clip);
    }
    free(edges);
    tb_model_free(m);
    return r;
}

/* One attempt: a fresh copy of `in` through every step. */
static tb_result tb__attempt(tb_doc **out, const tb_doc *in, const tb_fix_desc *d, const tb_appendage_desc *repair,
                             tb_fix_report *rep, tb_error *err)
{
    *out = NULL;
    tb_doc *doc = tb__copy(in, err);
    if (!doc)
        return err ? err->code : TB_ERR_OOM;
    tb__progress(d, "repair");
    tb_result r = tb_appendage_fix(&rep->repair, doc, repair, err);
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
        r = tb_retarget_docs(doc, d->libraries, d->library_count, &rd, &rep->retarget, err);
        rep->changed = 1;
    }
    if (r == TB_OK && !d->no_bake) {
        rep->baked = 1;
        tb__progress(d, "bake");
        tb_bake_desc bd = d->bake;
        bd.only = d->library_count > 0 ? NULL : d->only; /* transferred clips are already filtered */
        r = tb_bake(doc, &bd, &rep->bake, err);
        for (int c = 0; r == TB_OK && c < rep->bake.clip_count; c++)
            rep->changed |= !rep->bake.clips[c].skipped;
        if (r == TB_OK) {
            tb__progress(d, "measure");
            r = tb__measure(doc, rep, err);
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
    if (r != TB_OK) {
        tb_doc_free(doc);
        return r;
    }
    *out = doc;
    return TB_OK;
}

/* Tail or seam tearing of an attempt: clips that tear, the worst torn
 * fraction, and the sum over clips. */
static void tb__tearing(const tb_fix_report *r, int *clips, float *worst, float *sum)
{
    *clips = 0;
    *worst = *sum = 0;
    for (int c = 0; c < r->stretch_count; c++) {
        float f = tb_fix_torn(&r->stretch[c]);
        *clips += f > 0;
        *worst = f > *worst ? f : *worst;
        *sum += f;
    }
}

static size_t tb__welded_collar(const tb_fix_report *r)
{
    size_t n = 0;
    for (int i = 0; i < r->repair.appendage_count; i++)
        if (r->repair.appendages[i].decision == TB_DECIDE_CHAIN && !r->repair.appendages[i].rigid_pieces)
            n += r->repair.appendages[i].welded_collar;
    return n;
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
    /* The tries: the SPEC's blend zone, then wider zones, then — for a tail
     * welded into the body that still tears — wider collar bands with the
     * best zone. The user's own zone or band is never searched. */
    static const float zones[] = {0.25f, 0.375f, 0.5f}, bands[] = {1.0f, 2.0f};
    int search_zone = !(d.repair.blend_zone > 0) && !d.no_bake;
    int search_band = search_zone && d.repair.collar_band == 0;
    tb_doc *best = NULL;
    float best_worst = INFINITY, best_sum = INFINITY, best_zone = 0;
    int best_clips = 0;
    tb_fix_zone_try tries[TB_FIX_MAX_TRIES];
    int ntries = 0, searching = 0;
    for (int t = 0; t < 5; t++) {
        tb_appendage_desc repair = d.repair;
        if (t < 3) {
            if (t > 0 && !search_zone)
                break;
            if (search_zone)
                repair.blend_zone = zones[t];
        } else {
            if (!search_band || !searching || !tb__welded_collar(rep) || !(best_worst > 0))
                break;
            repair.blend_zone = best_zone;
            repair.collar_band = bands[t - 3];
        }
        if (t > 0) {
            char stage[64];
            if (t < 3)
                snprintf(stage, sizeof stage, "blend zone %.3g: again", (double)zones[t]);
            else
                snprintf(stage, sizeof stage, "collar band %.3g: again", (double)bands[t - 3]);
            tb__progress(&d, stage);
        }
        tb_fix_report cur;
        memset(&cur, 0, sizeof cur);
        tb_doc *doc = NULL;
        tb_result r = tb__attempt(&doc, in, &d, &repair, &cur, err);
        if (r != TB_OK) {
            tb_doc_free(best);
            tb__report_clear(rep);
            *rep = cur;
            return r;
        }
        int torn_clips;
        float worst, sum;
        tb__tearing(&cur, &torn_clips, &worst, &sum);
        int smooth = cur.blend_zone > 0;
        if (search_zone && smooth && (torn_clips || ntries) && ntries < TB_FIX_MAX_TRIES) {
            searching = 1;
            tries[ntries++] = (tb_fix_zone_try){cur.blend_zone, torn_clips, worst, cur.collar_band};
        }
        /* keep the best so far: fewest clips torn, then least torn in all;
         * ties keep the earlier, smaller change */
        if (t == 0 || torn_clips < best_clips || (torn_clips == best_clips && sum < best_sum)) {
            best_worst = worst;
            best_sum = sum;
            best_clips = torn_clips;
            best_zone = repair.blend_zone;
            tb_doc_free(best);
            tb__report_clear(rep);
            best = doc;
            *rep = cur;
        } else {
            tb_doc_free(doc);
            tb__report_clear(&cur);
        }
        if (!torn_clips || !smooth)
            break; /* no tear, or nothing the weights' blend changes */
    }
    memcpy(rep->zone_tries, tries, sizeof tries);
    rep->zone_try_count = ntries;
    *out = best;
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
                                      "loop_closure_deg", bc->closure_rad / TB__DEG, "swing_deg",
                                      bc->swing_rad / TB__DEG);
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
    if (rep->retarget)
        json_object_set(j, "retarget", rep->retarget);
    if (rep->zone_try_count) {
        json_t *z = json_array();
        for (int i = 0; i < rep->zone_try_count; i++)
        {
            json_t *o = json_pack("{s:f,s:i,s:f}", "blend_zone", (double)rep->zone_tries[i].blend_zone, "torn_clips",
                                  rep->zone_tries[i].torn_clips, "worst_torn", (double)rep->zone_tries[i].worst_torn);
            if (rep->zone_tries[i].collar_band > 0)
                json_object_set_new(o, "collar_band", json_real(rep->zone_tries[i].collar_band));
            json_array_append_new(z, o);
        }
        json_object_set_new(j, "blend_zone_search", z);
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
            json_object_set_new(row, "max_tail_rotation_deg", tb__num(r->max_bone_rotation_rad / TB__DEG));
            json_object_set_new(row, "bone_distance_h", tb__num(r->bone_distance / r->height));
            if (r->seam.edges)
                json_object_set_new(row, "seam", tb__stats_row(&r->seam));
            json_array_append_new(rows, row);
        }
        json_object_set_new(j, "stretch", rows);
    }
    return j;
}
