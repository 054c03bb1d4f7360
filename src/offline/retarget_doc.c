/* Retargeting on documents: clips read from a doc, bakes written as glTF
 * animations, and the whole-job driver with its JSON report (SPEC D). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "runtime/base.h"
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

static json_t *tb__clip_report(const tb_retarget_bake *b, const char *lib, int roles)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(b->name));
    json_object_set_new(o, "source", json_string(lib ? lib : ""));
    json_object_set_new(o, "duration_s", json_real(b->times[b->frame_count - 1]));
    json_object_set_new(o, "frames", json_integer(b->frame_count));
    json_object_set_new(o, "roles_matched", json_integer(roles));
    json_object_set_new(o, "leg_ratio", json_real(b->leg_ratio));
    json_object_set_new(o, "facing_deg", json_real(b->facing_deg));
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
    json_t *gr = json_object();
    json_object_set_new(gr, "lift_max", json_real(lmax));
    json_object_set_new(gr, "lift_max_at_s", json_real(lmax_t));
    json_object_set_new(gr, "lift_raw_max", json_real(rawmax));
    json_object_set_new(gr, "clearance_min", isfinite(cmin) ? json_real(cmin) : json_null());
    json_object_set_new(gr, "foot_min_y_low", isfinite(fmin) ? json_real(fmin) : json_null());
    json_object_set_new(gr, "foot_min_y_high", isfinite(fmax) ? json_real(fmax) : json_null());
    json_object_set_new(gr, "foot_vs_source_mean", fn ? json_real(ferr / fn) : json_null());
    json_object_set_new(gr, "foot_vs_source_max", fn ? json_real(ferr_max) : json_null());
    json_object_set_new(gr, "tail_min_y", isfinite(tmin) ? json_real(tmin) : json_null());
    json_object_set_new(gr, "foot_contact_fixes", json_integer(b->foot_fixes));
    json_object_set_new(gr, "foot_contact_raise_max", json_real(b->foot_raise_max));
    json_object_set_new(o, "grounding", gr);
    return o;
}

static int tb__matched_roles(const tb_retarget_calib *a, const tb_retarget_calib *b)
{
    int n = 0;
    for (int r = 1; r < TB_ROLE_COUNT; r++)
        n += tb_retarget_calib_role_joint(a, (tb_role)r) >= 0 && tb_retarget_calib_role_joint(b, (tb_role)r) >= 0;
    return n;
}

tb_result tb_retarget_docs(tb_doc *character, tb_doc *const *libs, int lib_count, const tb_retarget_desc *desc,
                           json_t **report, tb_error *err)
{
    if (report)
        *report = NULL;
    tb_retarget_desc d = desc ? *desc : (tb_retarget_desc){0};
    if (!character || (lib_count > 0 && !libs) || lib_count < 0)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_retarget_docs: a character and its libraries are required");
    /* every requested name must exist somewhere, before any work */
    for (int i = 0; d.only && i < d.only_count; i++) {
        int found = 0;
        for (int l = 0; l < lib_count && !found; l++) {
            const tb_gltf *g = tb_doc_gltf(libs[l]);
            found = g->animation_count > 0 && tb_clip_find(libs[l], d.only[i]) >= 0;
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
                            d.only[i], have[0] ? have : "no clips");
        }
    }
    /* a library with no clip is a mistake, not an empty success */
    for (int l = 0; l < lib_count; l++)
        if (tb_doc_gltf(libs[l])->animation_count == 0)
            return tb__fail(err, TB_ERR_INVALID, tb_doc_name(libs[l]), "the clip library has no clips (animations)");
    tb_model *tm = NULL;
    tb_result r = tb_model_load(&tm, character, -1, err);
    if (r != TB_OK)
        return r;
    /* Bounded work: the keys every selected clip adds to the character
     * (frames x joints, a rotation, translation and scale each), estimated
     * before any is made. */
    {
        double fps = d.fps > 0 ? d.fps : 30, bytes = 0;
        int count = 0;
        for (int l = 0; l < lib_count; l++) {
            const tb_gltf *g = tb_doc_gltf(libs[l]);
            for (int a = 0; a < g->animation_count; a++) {
                if (!tb__selected(&d, libs[l], a))
                    continue;
                double dur = g->animations[a].duration_s;
                dur = dur > 0 && dur <= TB_MAX_CLIP_S ? dur : 0; /* longer ones are refused by name below */
                bytes += (ceil(dur * fps) + 1) * (double)tm->skel.joint_count * 40.0;
                count++;
            }
        }
        if (bytes > TB_RETARGET_MAX_BYTES) {
            int joints = tm->skel.joint_count;
            tb_model_free(tm);
            return tb__fail(err, TB_ERR_UNSUPPORTED, "--clips",
                            "transferring %d clip(s) onto %d joints would add about %.0f MiB of keys; tailbone "
                            "transfers at most %.0f MiB at once: pick clips with --only",
                            count, joints, bytes / 1048576.0, TB_RETARGET_MAX_BYTES / 1048576.0);
        }
    }
    /* SPEC D: T = skin mostly on tail bones. A character that has not been
     * through the tail pass has none: find its tails (SPEC A) for the mask. */
    uint8_t *mask = NULL;
    json_t *detected = json_array();
    int has_tail_bones = 0;
    for (int j = 0; j < tm->skel.joint_count; j++) {
        int c, i;
        has_tail_bones |= tm->skel.names[j] && tb_tail_name_parse(tm->skel.names[j], &c, &i);
    }
    if (!d.no_detect && !has_tail_bones) {
        tb_appendage_report ar = {0};
        tb_error derr = {0};
        if (tb_appendage_detect(&ar, tm, NULL, &derr) == TB_OK) {
            for (int a = 0; a < ar.appendage_count; a++) {
                const tb_appendage *ap = &ar.appendages[a];
                if (ap->kind != TB_KIND_TAIL)
                    continue;
                if (!mask && !(mask = calloc(tm->vertex_count + 1, 1))) {
                    r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
                    break;
                }
                for (size_t k = 0; k < ap->vertex_count; k++)
                    if (ap->vertices[k] < tm->vertex_count)
                        mask[ap->vertices[k]] = 1;
                json_array_append_new(detected, json_pack("{s:s, s:I, s:f}", "attachment", ap->attach_name,
                                                          "vertices", (json_int_t)ap->vertex_count, "length",
                                                          (double)ap->length));
            }
        }
        tb_appendage_report_free(&ar);
    }
    tb_retarget_calib *dst = NULL;
    if (r == TB_OK)
        r = tb_retarget_calibrate(&dst, tm, mask, &d, err);
    tb_placement place;
    if (r == TB_OK)
        r = tb_ground_placement(&place, tm, mask, err);
    free(mask);
    float height = tm->height;
    tb_model_free(tm); /* the calibration holds all it needs: the doc may now change */
    if (r != TB_OK) {
        tb_retarget_calib_free(dst);
        json_decref(detected);
        return r;
    }
    json_t *rep = json_object(), *clips = json_array();
    json_object_set_new(rep, "detected_tails", detected);
    {
        const tb_ground_supports *s = tb_retarget_calib_supports(dst);
        json_t *ch = json_object();
        json_object_set_new(ch, "file", json_string(tb_doc_name(character)));
        json_object_set_new(ch, "height", json_real(height));
        json_object_set_new(ch, "roles", json_integer(tb_retarget_calib_role_count(dst)));
        json_object_set_new(ch, "leg_length", json_real(tb_retarget_calib_leg_length(dst)));
        json_object_set_new(ch, "supports", json_pack("{s:i, s:i, s:i, s:f, s:I}", "body", s->body_count, "tail",
                                                      s->tail_count, "foot", s->foot_count, "f_body",
                                                      (double)s->f_body, "hanging_vertices",
                                                      (json_int_t)s->hanging_vertex_count));
        json_object_set_new(rep, "character", ch);
        json_t *pl = json_object();
        json_object_set_new(pl, "ground_offset_y", json_real(place.ground_offset_y));
        json_object_set_new(pl, "body_min_y", json_real(place.body_min_y));
        json_object_set_new(pl, "all_min_y", json_real(place.all_min_y));
        json_object_set_new(pl, "tail_vertices", json_integer((json_int_t)place.tail_vertex_count));
        json_object_set_new(pl, "frame_min", tb__vec3(place.frame_min));
        json_object_set_new(pl, "frame_max", tb__vec3(place.frame_max));
        json_object_set_new(rep, "placement", pl);
    }
    for (int l = 0; l < lib_count && r == TB_OK; l++) {
        const tb_gltf *g = tb_doc_gltf(libs[l]);
        int any = 0;
        for (int a = 0; a < g->animation_count; a++)
            any |= tb__selected(&d, libs[l], a);
        if (!any)
            continue;
        tb_model *sm = NULL;
        tb_retarget_calib *src = NULL;
        r = tb_model_load_skeleton(&sm, libs[l], NULL, err); /* a library may have no mesh */
        if (r == TB_OK)
            r = tb_retarget_calibrate(&src, sm, NULL, &d, err);
        if (r == TB_OK && tb__matched_roles(src, dst) == 0)
            r = tb__fail(err, TB_ERR_NO_HIPS, tb_doc_name(libs[l]), "no humanoid role in common with the character");
        for (int a = 0; a < g->animation_count && r == TB_OK; a++) {
            if (!tb__selected(&d, libs[l], a))
                continue;
            tb_clip *clip = NULL;
            tb_retarget_bake *b = NULL;
            r = tb_clip_load(&clip, libs[l], sm, a, NULL, err);
            if (r == TB_OK)
                r = tb_retarget_run(&b, src, clip, dst, &d, err);
            if (r == TB_OK)
                r = tb_retarget_write(character, dst, b, err);
            if (r == TB_OK)
                json_array_append_new(clips, tb__clip_report(b, tb_doc_name(libs[l]), tb__matched_roles(src, dst)));
            tb_retarget_bake_free(b);
            tb_clip_free(clip);
        }
        tb_retarget_calib_free(src);
        tb_model_free(sm);
        if (r != TB_OK && err && strncmp(err->where, tb_doc_name(libs[l]), strlen(tb_doc_name(libs[l])))) {
            /* the library's fault: name it, then the place inside it */
            char inner[sizeof err->where];
            snprintf(inner, sizeof inner, "%s", err->where);
            snprintf(err->where, sizeof err->where, "%.120s%s%.64s", tb_doc_name(libs[l]), inner[0] ? ": " : "",
                     inner);
        }
    }
    tb_retarget_calib_free(dst);
    json_object_set_new(rep, "clips", clips);
    if (r == TB_OK)
        r = tb_doc_refresh(character, err);
    if (r != TB_OK || !report)
        json_decref(rep);
    else
        *report = rep;
    return r;
}
