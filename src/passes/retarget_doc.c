/* Retargeting on documents: clips read from a doc, bakes written as glTF
 * animations, and the whole-job driver with its JSON report (SPEC D). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base.h"
#include "gltf/doc_internal.h"
#include "passes/pool_internal.h"
#include "passes/report_json.h"
#include "passes/retarget_internal.h"
#include "tailbone/appendage.h"
#include "tailbone/clip.h"
#include "tailbone/retarget.h"

static json_t *tb__sampler(int in, int out)
{
    return json_pack("{s:i, s:i, s:s}", "input", in, "output", out, "interpolation", "LINEAR");
}

static json_t *tb__channel(int sampler, int node, const char *path)
{
    return json_pack("{s:i, s:{s:i, s:s}}", "sampler", sampler, "target", "node", node, "path", path);
}

tb_result tb_retarget_write(tb_doc *doc, const tb_retarget_calib *dst, const tb_retarget_bake *b,
                            tb_error *err)
{
    const tb_skeleton *sk = tb_retarget_calib_skeleton(dst);
    json_t *root = tb_doc_json(doc);
    int n = b->frame_count, nt = b->joint_count;
    if (nt != sk->joint_count)
        return tb__fail(err, TB_ERR_ARG, NULL, "bake has %d joints, the calibration %d", nt, sk->joint_count);
    float *buf = malloc((size_t)n * 4 * sizeof(float));
    if (!buf)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    json_t *samplers = json_array(), *channels = json_array();
    int input = tb_doc_add_accessor(doc, b->times, (size_t)n, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
    int input1 = -1;
    int ok = input >= 0;
    static const char *const paths[3] = {"translation", "rotation", "scale"};
    /* Node indices come from the calibration; it was captured on this doc. */
    for (int j = 0; j < nt && ok; j++) {
        int node = tb_retarget_calib_node(dst, j);
        for (int p = 0; p < 3 && ok; p++) {
            int bit = 1 << p, comps = p == 1 ? 4 : 3;
            int acc = -1, in = input;
            if (b->animated[j] & bit) {
                for (int f = 0; f < n; f++) {
                    const tb_transform *x = &b->locals[(size_t)f * (size_t)nt + (size_t)j];
                    memcpy(buf + (size_t)f * (size_t)comps, p == 0 ? x->t : p == 1 ? x->r : x->s,
                           (size_t)comps * sizeof(float));
                }
                acc = tb_doc_add_accessor(doc, buf, (size_t)n, TB_COMPONENT_FLOAT, p == 1 ? "VEC4" : "VEC3", 0, 0);
            } else if (b->constant[j] & bit) {
                /* bind value where the stored node pose holds something else */
                if (input1 < 0) {
                    float zero = 0;
                    input1 = tb_doc_add_accessor(doc, &zero, 1, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
                    ok = input1 >= 0;
                }
                const tb_transform *x = &sk->rest_local[j];
                acc = tb_doc_add_accessor(doc, p == 0 ? x->t : p == 1 ? x->r : x->s, 1, TB_COMPONENT_FLOAT,
                                          p == 1 ? "VEC4" : "VEC3", 0, 0);
                in = input1;
            } else {
                continue;
            }
            if (acc < 0 || in < 0) {
                ok = 0;
                break;
            }
            int si = (int)json_array_size(samplers);
            json_array_append_new(samplers, tb__sampler(in, acc));
            json_array_append_new(channels, tb__channel(si, node, paths[p]));
        }
    }
    free(buf);
    if (!ok) {
        json_decref(samplers);
        json_decref(channels);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    json_t *anims = json_object_get(root, "animations");
    if (!json_is_array(anims)) {
        anims = json_array();
        json_object_set_new(root, "animations", anims);
    }
    json_t *a = json_object();
    json_object_set_new(a, "name", json_string(b->name));
    json_object_set_new(a, "channels", channels);
    json_object_set_new(a, "samplers", samplers);
    json_array_append_new(anims, a);
    return TB_OK;
}

/* ---- the whole job ------------------------------------------------------ */

/* Name selection as everywhere else (tb_clip_find): exact, case-insensitive,
 * the part after the last '|', or a unique substring ("walk" finds
 * "Armature|Armature|walk_Armature"). */
static int tb__selected(const tb_retarget_desc *d, const tb_doc *lib, int a)
{
    if (!d->only)
        return 1;
    for (int i = 0; i < d->only_count; i++)
        if (tb_clip_find(lib, d->only[i]) == a)
            return 1;
    return 0;
}

static json_t *tb__vec3(const float *v)
{
    return json_pack("[f,f,f]", (double)v[0], (double)v[1], (double)v[2]);
}

static char *tb__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    return c ? memcpy(c, s, n) : NULL;
}

/* One clip's figures (tb_retarget_clip_report). 0 when out of memory. */
static int tb__clip_report(tb_retarget_clip_report *o, const tb_retarget_bake *b, const char *lib, int roles)
{
    memset(o, 0, sizeof *o);
    o->name = tb__strdup(b->name);
    o->source = tb__strdup(lib ? lib : "");
    o->duration_s = b->times[b->frame_count - 1];
    o->frame_count = b->frame_count;
    o->roles_matched = roles;
    o->leg_ratio = b->leg_ratio;
    o->facing_deg = b->facing_deg;
    double ferr = 0, ferr_max = 0;
    int fn = 0;
    for (int f = 0; f < b->frame_count; f++)
        if (isfinite(b->foot_min_y[f]) && isfinite(b->source_foot_y[f])) {
            double e = fabs((double)b->foot_min_y[f] - (double)b->source_foot_y[f]);
            ferr += e, fn++;
            if (e > ferr_max)
                ferr_max = e;
        }
    float lmax = 0, lmax_t = 0, rawmax = 0, cmin = INFINITY, fmin = INFINITY, fmax = -INFINITY, tmin = INFINITY;
    for (int f = 0; f < b->frame_count; f++) {
        if (b->lift[f] > lmax)
            lmax = b->lift[f], lmax_t = b->times[f];
        if (b->lift_raw[f] > rawmax)
            rawmax = b->lift_raw[f];
        if (b->clearance[f] < cmin)
            cmin = b->clearance[f];
        if (b->foot_min_y[f] < fmin)
            fmin = b->foot_min_y[f];
        if (b->foot_min_y[f] > fmax)
            fmax = b->foot_min_y[f];
        if (b->tail_min_y[f] < tmin)
            tmin = b->tail_min_y[f];
    }
    o->lift_max = lmax;
    o->lift_max_at_s = lmax_t;
    o->lift_raw_max = rawmax;
    o->clearance_min = isfinite(cmin) ? cmin : NAN;
    o->foot_min_y_low = isfinite(fmin) ? fmin : NAN;
    o->foot_min_y_high = isfinite(fmax) ? fmax : NAN;
    o->foot_vs_source_mean = fn ? ferr / fn : NAN;
    o->foot_vs_source_max = fn ? ferr_max : NAN;
    o->tail_min_y = isfinite(tmin) ? tmin : NAN;
    o->foot_contact_fixes = b->foot_fixes;
    o->foot_contact_raise_max = b->foot_raise_max;
    return o->name && o->source;
}

/* a figure, or null when it has no sample */
static json_t *tb__real(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *tb_retarget_report_json(const tb_retarget_report *rep)
{
    json_t *j = json_object(), *detected = json_array(), *clips = json_array();
    for (int i = 0; i < rep->tail_count; i++) {
        const tb_retarget_tail_found *t = &rep->tails[i];
        json_array_append_new(detected, json_pack("{s:s, s:I, s:f}", "attachment", t->attachment, "vertices",
                                                  (json_int_t)t->vertex_count, "length", (double)t->length));
    }
    json_object_set_new(j, "detected_tails", detected);
    json_t *ch = json_object();
    json_object_set_new(ch, "file", json_string(rep->file ? rep->file : ""));
    json_object_set_new(ch, "height", json_real(rep->height));
    json_object_set_new(ch, "roles", json_integer(rep->roles));
    json_object_set_new(ch, "leg_length", json_real(rep->leg_length));
    json_object_set_new(ch, "supports", json_pack("{s:i, s:i, s:i, s:f, s:I}", "body", rep->supports_body, "tail",
                                                  rep->supports_tail, "foot", rep->supports_foot, "f_body",
                                                  (double)rep->supports_f_body, "hanging_vertices",
                                                  (json_int_t)rep->supports_hanging_vertices));
    json_object_set_new(j, "character", ch);
    const tb_placement *place = &rep->placement;
    json_t *pl = json_object();
    json_object_set_new(pl, "ground_offset_y", json_real(place->ground_offset_y));
    json_object_set_new(pl, "body_min_y", json_real(place->body_min_y));
    json_object_set_new(pl, "all_min_y", json_real(place->all_min_y));
    json_object_set_new(pl, "tail_vertices", json_integer((json_int_t)place->tail_vertex_count));
    json_object_set_new(pl, "frame_min", tb__vec3(place->frame_min));
    json_object_set_new(pl, "frame_max", tb__vec3(place->frame_max));
    json_object_set_new(j, "placement", pl);
    for (int c = 0; c < rep->clip_count; c++) {
        const tb_retarget_clip_report *b = &rep->clips[c];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(b->name));
        json_object_set_new(o, "source", json_string(b->source));
        json_object_set_new(o, "duration_s", json_real(b->duration_s));
        json_object_set_new(o, "frames", json_integer(b->frame_count));
        json_object_set_new(o, "roles_matched", json_integer(b->roles_matched));
        json_object_set_new(o, "leg_ratio", json_real(b->leg_ratio));
        json_object_set_new(o, "facing_deg", json_real(b->facing_deg));
        json_t *gr = json_object();
        json_object_set_new(gr, "lift_max", json_real(b->lift_max));
        json_object_set_new(gr, "lift_max_at_s", json_real(b->lift_max_at_s));
        json_object_set_new(gr, "lift_raw_max", json_real(b->lift_raw_max));
        json_object_set_new(gr, "clearance_min", tb__real(b->clearance_min));
        json_object_set_new(gr, "foot_min_y_low", tb__real(b->foot_min_y_low));
        json_object_set_new(gr, "foot_min_y_high", tb__real(b->foot_min_y_high));
        json_object_set_new(gr, "foot_vs_source_mean", tb__real(b->foot_vs_source_mean));
        json_object_set_new(gr, "foot_vs_source_max", tb__real(b->foot_vs_source_max));
        json_object_set_new(gr, "tail_min_y", tb__real(b->tail_min_y));
        json_object_set_new(gr, "foot_contact_fixes", json_integer(b->foot_contact_fixes));
        json_object_set_new(gr, "foot_contact_raise_max", json_real(b->foot_contact_raise_max));
        json_object_set_new(o, "grounding", gr);
        json_array_append_new(clips, o);
    }
    json_object_set_new(j, "clips", clips);
    return j;
}

void tb_retarget_report_free(tb_retarget_report *rep)
{
    if (!rep)
        return;
    for (int i = 0; i < rep->tail_count; i++)
        free(rep->tails[i].attachment);
    for (int c = 0; c < rep->clip_count; c++)
        free(rep->clips[c].name), free(rep->clips[c].source);
    free(rep->tails);
    free(rep->clips);
    free(rep->file);
    memset(rep, 0, sizeof *rep);
}

static int tb__matched_roles(const tb_retarget_calib *a, const tb_retarget_calib *b)
{
    int n = 0;
    for (int r = 1; r < TB_ROLE_COUNT; r++)
        n += tb_retarget_calib_role_joint(a, (tb_role)r) >= 0 && tb_retarget_calib_role_joint(b, (tb_role)r) >= 0;
    return n;
}

/* Every name --only asks for is a clip of some library, before any work. */
static tb_result tb__rd_only_exist(const tb_retarget_desc *d, tb_doc *const *libs, int lib_count, tb_error *err)
{
    for (int i = 0; d->only && i < d->only_count; i++) {
        int found = 0;
        for (int l = 0; l < lib_count && !found; l++) {
            const tb_gltf *g = tb_doc_gltf(libs[l]);
            found = g->animation_count > 0 && tb_clip_find(libs[l], d->only[i]) >= 0;
        }
        if (!found) {
            char have[200] = "";
            for (int l = 0; l < lib_count; l++) {
                const tb_gltf *g = tb_doc_gltf(libs[l]);
                for (int a = 0; a < g->animation_count; a++) {
                    size_t len = strlen(have);
                    snprintf(have + len, sizeof have - len, "%s%s", len ? ", " : "",
                             g->animations[a].name ? g->animations[a].name : "(unnamed)");
                }
            }
            return tb__fail(err, TB_ERR_ARG, "--only", "no clip named '%s' in the libraries (they have: %s)",
                            d->only[i], have[0] ? have : "no clips");
        }
    }
    /* a library with no clip is a mistake, not an empty success */
    for (int l = 0; l < lib_count; l++)
        if (tb_doc_gltf(libs[l])->animation_count == 0)
            return tb__fail(err, TB_ERR_INVALID, tb_doc_name(libs[l]), "the clip library has no clips (animations)");
    return TB_OK;
}

/* Bounded work: the keys every selected clip adds to the character
 * (frames x joints, a rotation, translation and scale each), estimated
 * before any is made. */
static tb_result tb__rd_budget(const tb_retarget_desc *d, tb_doc *const *libs, int lib_count, const tb_model *tm,
                               tb_error *err)
{
    double fps = d->fps > 0 ? d->fps : 30, bytes = 0;
    int count = 0;
    for (int l = 0; l < lib_count; l++) {
        const tb_gltf *g = tb_doc_gltf(libs[l]);
        for (int a = 0; a < g->animation_count; a++) {
            if (!tb__selected(d, libs[l], a))
                continue;
            double dur = g->animations[a].duration_s;
            dur = dur > 0 && dur <= TB_MAX_CLIP_S ? dur : 0; /* longer ones are refused by name below */
            bytes += (ceil(dur * fps) + 1) * (double)tm->skel.joint_count * 40.0;
            count++;
        }
    }
    if (bytes > TB_RETARGET_MAX_BYTES)
        return tb__fail(err, TB_ERR_UNSUPPORTED, "--clips",
                        "transferring %d clip(s) onto %d joints would add about %.0f MiB of keys; tailbone "
                        "transfers at most %.0f MiB at once: pick clips with --only",
                        count, tm->skel.joint_count, bytes / 1048576.0, TB_RETARGET_MAX_BYTES / 1048576.0);
    return TB_OK;
}

/* SPEC D: T = skin mostly on tail bones. A character that has not been
 * through the tail pass has none: find its tails (SPEC A) for the mask
 * (*mask, NULL when none) and the report's list. */
static tb_result tb__rd_tail_mask(const tb_model *tm, const tb_retarget_desc *d, uint8_t **mask,
                                  tb_retarget_report *rep, tb_error *err)
{
    tb_result r = TB_OK;
    int has_tail_bones = 0;
    for (int j = 0; j < tm->skel.joint_count; j++) {
        int c, i;
        has_tail_bones |= tm->skel.names[j] && tb_tail_name_parse(tm->skel.names[j], &c, &i);
    }
    if (!d->no_detect && !has_tail_bones) {
        tb_appendage_report ar = {0};
        tb_error derr = {0};
        if (tb_appendage_detect(&ar, tm, NULL, &derr) == TB_OK) {
            for (int a = 0; a < ar.appendage_count; a++) {
                const tb_appendage *ap = &ar.appendages[a];
                if (ap->kind != TB_KIND_TAIL)
                    continue;
                if (!*mask && !(*mask = calloc(tm->vertex_count + 1, 1))) {
                    r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
                    break;
                }
                for (size_t k = 0; k < ap->vertex_count; k++)
                    if (ap->vertices[k] < tm->vertex_count)
                        (*mask)[ap->vertices[k]] = 1;
                tb_retarget_tail_found *tails = realloc(rep->tails, (size_t)(rep->tail_count + 1) * sizeof *tails);
                if (!tails) {
                    r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
                    break;
                }
                rep->tails = tails;
                tb_retarget_tail_found *found = &rep->tails[rep->tail_count++];
                found->vertex_count = ap->vertex_count;
                found->length = ap->length;
                if (!(found->attachment = tb__strdup(ap->attach_name))) {
                    r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
                    break;
                }
            }
        }
        tb_appendage_report_free(&ar);
    }
    return r;
}

/* The report's head: the character, its calibration's roles, leg length
 * and supports, its placement. */
static tb_result tb__rd_report_head(tb_retarget_report *rep, const tb_doc *character, const tb_retarget_calib *dst,
                                    const tb_placement *place, float height, tb_error *err)
{
    const tb_ground_supports *s = tb_retarget_calib_supports(dst);
    rep->file = tb__strdup(tb_doc_name(character));
    rep->height = height;
    rep->roles = tb_retarget_calib_role_count(dst);
    rep->leg_length = tb_retarget_calib_leg_length(dst);
    rep->supports_body = s->body_count;
    rep->supports_tail = s->tail_count;
    rep->supports_foot = s->foot_count;
    rep->supports_f_body = s->f_body;
    rep->supports_hanging_vertices = s->hanging_vertex_count;
    rep->placement = *place;
    if (!rep->file)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    return TB_OK;
}

/* One library's side, made before any clip is written (it reads the
 * library only): its skeleton and calibration, or the error they ended
 * with. */
typedef struct tb__rd_src {
    tb_doc *lib;
    const tb_retarget_desc *d;
    int any;                /* a clip of it is selected */
    tb_model *sm;
    tb_retarget_calib *src;
    tb_result r;
    tb_error err;
} tb__rd_src;

static void tb__rd_src_make(tb__rd_src *s)
{
    const tb_gltf *g = tb_doc_gltf(s->lib);
    for (int a = 0; a < g->animation_count; a++)
        s->any |= tb__selected(s->d, s->lib, a);
    if (!s->any)
        return;
    const tb_model_desc md = {.no_normals = 1}; /* nothing here reads them */
    s->r = tb_model_load_skeleton(&s->sm, s->lib, &md, &s->err); /* a library may have no mesh */
    if (s->r == TB_OK)
        s->r = tb_retarget_calibrate(&s->src, s->sm, NULL, s->d, &s->err);
}

static void tb__rd_src_free(tb__rd_src *s)
{
    tb_retarget_calib_free(s->src);
    tb_model_free(s->sm);
}

/* The character's side: its model, the budget, its tail's skin (SPEC D:
 * T), its calibration and placement; the model given back before any
 * clip is written. */
typedef struct tb__rd_dst {
    tb_doc *character;
    tb_doc *const *libs;
    int lib_count;
    const tb_retarget_desc *d;
    tb_retarget_report rep;
    tb_retarget_calib *dst;
    tb_placement place;
    float height;
    tb_model **keep;        /* non-NULL: the model handed on, not freed (tb__retarget_docs_keep) */
    tb_result r;
    tb_error err;
} tb__rd_dst;

static void tb__rd_dst_make(tb__rd_dst *t)
{
    tb_model *tm = NULL;
    const tb_model_desc md = {.no_normals = 1}; /* the skin with most skinned vertices; no normals read here */
    t->r = tb_model_load_desc(&tm, t->character, &md, &t->err);
    if (t->r != TB_OK)
        return;
    t->r = tb__rd_budget(t->d, t->libs, t->lib_count, tm, &t->err);
    uint8_t *mask = NULL; /* SPEC D: T, the tail's skin */
    if (t->r == TB_OK)
        t->r = tb__rd_tail_mask(tm, t->d, &mask, &t->rep, &t->err);
    if (t->r == TB_OK)
        t->r = tb_retarget_calibrate(&t->dst, tm, mask, t->d, &t->err);
    if (t->r == TB_OK)
        t->r = tb_ground_placement(&t->place, tm, mask, &t->err);
    free(mask);
    t->height = tm->height;
    if (t->keep && t->r == TB_OK)
        *t->keep = tm; /* the caller's: the clips change no node, skin or mesh it read */
    else
        tb_model_free(tm); /* the calibration holds all it needs: the doc may now change */
}

/* The sides made at once, `threads` at a time: task 0 the character's,
 * task 1 + l library l's. They read what they are given only. */
typedef struct tb__rd_sides {
    tb__rd_dst *dst;
    tb__rd_src *src;
} tb__rd_sides;

static void tb__rd_side_task(void *ctx, int k, int worker)
{
    (void)worker;
    tb__rd_sides *s = ctx;
    if (k == 0)
        tb__rd_dst_make(s->dst);
    else
        tb__rd_src_make(&s->src[k - 1]);
}

/* One selected clip of a library, transferred (not yet written): the
 * clips of a library at once, then written in their order. */
typedef struct tb__rd_clips {
    tb__rd_src *s;
    const tb_retarget_calib *dst;
    const int *anim;        /* the selected clips' animation indices */
    tb_clip **clip;
    tb_retarget_bake **bake;
    tb_result *r;
    tb_error *err;
} tb__rd_clips;

static void tb__rd_clip_task(void *ctx, int k, int worker)
{
    (void)worker;
    tb__rd_clips *c = ctx;
    c->r[k] = tb_clip_load(&c->clip[k], c->s->lib, c->s->sm, c->anim[k], NULL, &c->err[k]);
    if (c->r[k] == TB_OK)
        c->r[k] = tb_retarget_run(&c->bake[k], c->s->src, c->clip[k], c->dst, c->s->d, &c->err[k]);
}

/* One library's selected clips onto the character (dst), each with its
 * report row, from its side made before (s); a failure names the library,
 * then the place inside it. The clips are transferred `threads` at once
 * and written in their order; the first failure in that order is the one
 * reported, as one clip after the other would. */
static tb_result tb__rd_library(tb_doc *character, tb__rd_src *s, const tb_retarget_calib *dst, int threads,
                                tb_retarget_report *rep, tb_error *err)
{
    tb_doc *lib = s->lib;
    const tb_retarget_desc *d = s->d;
    tb_result r = s->r;
    if (!s->any)
        return TB_OK;
    if (r != TB_OK && err)
        *err = s->err;
    if (r == TB_OK && tb__matched_roles(s->src, dst) == 0)
        r = tb__fail(err, TB_ERR_NO_HIPS, tb_doc_name(lib), "no humanoid role in common with the character");
    const tb_gltf *g = tb_doc_gltf(lib);
    int n = 0, ac = g->animation_count;
    tb__rd_clips c = {s, dst, NULL, NULL, NULL, NULL, NULL};
    if (r == TB_OK) {
        int *anim = calloc((size_t)ac + 1, sizeof *anim);
        c.anim = anim;
        c.clip = calloc((size_t)ac + 1, sizeof *c.clip);
        c.bake = calloc((size_t)ac + 1, sizeof *c.bake);
        c.r = calloc((size_t)ac + 1, sizeof *c.r);
        c.err = calloc((size_t)ac + 1, sizeof *c.err);
        if (!anim || !c.clip || !c.bake || !c.r || !c.err)
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        for (int a = 0; a < ac && r == TB_OK; a++)
            if (tb__selected(d, lib, a))
                anim[n++] = a;
    }
    if (r == TB_OK)
        tb__parallel_for(n, threads, tb__rd_clip_task, &c);
    for (int k = 0; k < n && r == TB_OK; k++) {
        r = c.r[k];
        if (r != TB_OK && err)
            *err = c.err[k];
        if (r == TB_OK)
            r = tb_retarget_write(character, dst, c.bake[k], err);
        if (r == TB_OK) {
            tb_retarget_clip_report *clips = realloc(rep->clips, (size_t)(rep->clip_count + 1) * sizeof *clips);
            if (clips)
                rep->clips = clips;
            if (!clips || !tb__clip_report(&rep->clips[rep->clip_count++], c.bake[k], tb_doc_name(lib),
                                           tb__matched_roles(s->src, dst)))
                r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        }
    }
    for (int k = 0; k < n; k++) {
        tb_retarget_bake_free(c.bake[k]);
        tb_clip_free(c.clip[k]);
    }
    free((int *)c.anim);
    free(c.clip);
    free(c.bake);
    free(c.r);
    free(c.err);
    if (r != TB_OK && err && strncmp(err->where, tb_doc_name(lib), strlen(tb_doc_name(lib)))) {
        /* the library's fault: name it, then the place inside it */
        char inner[sizeof err->where];
        snprintf(inner, sizeof inner, "%s", err->where);
        snprintf(err->where, sizeof err->where, "%.120s%s%.64s", tb_doc_name(lib), inner[0] ? ": " : "",
                 inner);
    }
    return r;
}

tb_result tb_retarget_docs(tb_doc *character, tb_doc *const *libs, int lib_count, const tb_retarget_desc *desc,
                           tb_retarget_report *report, tb_error *err)
{
    return tb__retarget_docs_keep(character, libs, lib_count, desc, report, NULL, err);
}

tb_result tb__retarget_docs_keep(tb_doc *character, tb_doc *const *libs, int lib_count, const tb_retarget_desc *desc,
                                 tb_retarget_report *report, tb_model **model, tb_error *err)
{
    if (model)
        *model = NULL;
    if (report)
        memset(report, 0, sizeof *report);
    tb_retarget_desc d = desc ? *desc : (tb_retarget_desc){0};
    if (!character || (lib_count > 0 && !libs) || lib_count < 0)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_retarget_docs: a character and its libraries are required");
    tb_result r = tb__rd_only_exist(&d, libs, lib_count, err);
    if (r != TB_OK)
        return r;
    /* the character's side and every library's at once (they read only
     * their own document), then each library's clips written in order; a
     * failure is the first one a run one step after the other meets */
    int threads = d.threads > 1 ? d.threads : 1;
    tb__rd_dst t;
    memset(&t, 0, sizeof t);
    t.character = character;
    t.libs = libs;
    t.lib_count = lib_count;
    t.d = &d;
    t.keep = model;
    tb__rd_src *src = calloc((size_t)lib_count + 1, sizeof *src);
    if (!src)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int l = 0; l < lib_count; l++)
        src[l] = (tb__rd_src){libs[l], &d, 0, NULL, NULL, TB_OK, {0}};
    tb__rd_sides sides = {&t, src};
    tb__parallel_for(lib_count + 1, threads, tb__rd_side_task, &sides);
    tb_retarget_report rep = t.rep;
    r = t.r;
    if (r != TB_OK && err)
        *err = t.err;
    if (r == TB_OK)
        r = tb__rd_report_head(&rep, character, t.dst, &t.place, t.height, err);
    for (int l = 0; l < lib_count && r == TB_OK; l++)
        r = tb__rd_library(character, &src[l], t.dst, threads, &rep, err);
    for (int l = 0; l < lib_count; l++)
        tb__rd_src_free(&src[l]);
    free(src);
    tb_retarget_calib_free(t.dst);
    if (r == TB_OK) /* clips added, the skinned meshes as they were */
        r = tb__doc_refresh_kept(character, err);
    if (r != TB_OK || !report)
        tb_retarget_report_free(&rep);
    else
        *report = rep;
    if (r != TB_OK && model) {
        tb_model_free(*model);
        *model = NULL;
    }
    return r;
}
