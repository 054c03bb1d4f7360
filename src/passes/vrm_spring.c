/* The tail as VRM spring bones (tailbone/vrm.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "passes/vrm_fit_internal.h"
#include "tailbone/model.h"
#include "tailbone/runtime.h"
#include "tailbone/spring.h"
#include "tailbone/vrm.h"

#define TB__PI 3.14159265358979323846f

int tb_vrm_version(tb_doc *doc)
{
    json_t *ext = json_object_get(tb_doc_json(doc), "extensions");
    if (json_object_get(ext, "VRMC_vrm"))
        return 1;
    if (json_object_get(ext, "VRM"))
        return 0;
    return -1;
}

static void tb__use_extension(json_t *root, const char *name)
{
    json_t *used = json_object_get(root, "extensionsUsed");
    if (!json_is_array(used)) {
        used = json_array();
        json_object_set_new(root, "extensionsUsed", used);
    }
    size_t i;
    json_t *e;
    json_array_foreach(used, i, e) if (json_is_string(e) && !strcmp(json_string_value(e), name)) return;
    json_array_append_new(used, json_string(name));
}

static json_t *tb__obj(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);
    if (!json_is_object(o)) {
        o = json_object();
        json_object_set_new(parent, key, o);
    }
    return o;
}

static json_t *tb__arr(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);
    if (!json_is_array(o)) {
        o = json_array();
        json_object_set_new(parent, key, o);
    }
    return o;
}

static double tb__r6(double x)
{
    return round(x * 1e6) / 1e6;
}

tb_result tb_vrm_springs(tb_doc *doc, const tb_bake_desc *desc, float hz, tb_vrm_report *rep, tb_error *err)
{
    memset(rep, 0, sizeof *rep);
    const float h = 1.0f / (hz > 0 ? hz : 60.0f);
    rep->hz = 1.0f / h;
    int version = tb_vrm_version(doc);
    rep->version = version == 0 ? 0 : 1;
    tb_model *m = NULL;
    tb_result r = tb_model_load(&m, doc, -1, err);
    if (r != TB_OK)
        return r;
    tb_bake_desc bd = tb_bake_desc_defaults(desc);
    float units = 1;
    tb_spring_desc sd = tb_bake_spring_desc(m, &bd, &units, NULL);
    tb_spring_animator *a = NULL;
    r = tb_spring_create(&a, &m->skel, &sd, err);
    if (r != TB_OK) {
        tb_model_free(m);
        return r;
    }
    int n = m->skel.joint_count;
    tb_transform *loc = malloc((size_t)n * sizeof *loc);
    float(*w)[16] = malloc((size_t)n * sizeof *w);
    if (!loc || !w) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    /* the rest pose: the stored node pose (what a VRM runtime starts from),
     * one step from a reset chain */
    memcpy(loc, m->skel.rest_local, (size_t)n * sizeof *loc);
    tb_spring_reset(a);
    /* settle under gravity: 4 s standing still. VRM runtimes pull towards
     * the node pose, so the settled pose (gravity against the spring, the
     * coupling, the limits) is written as the rest and gravityPower is 0 */
    for (int f = 0; f < 240; f++) {
        tb_local_to_world(&m->skel, loc, NULL, w);
        tb_spring_step(a, 1.0f / 60.0f, (const float(*)[16])w, loc, w);
    }
    json_t *root = tb_doc_json(doc);
    json_t *nodes = json_object_get(root, "nodes");
    json_t *ext = tb__obj(root, "extensions");
    json_t *springs = NULL, *groups = NULL;
    if (rep->version == 1) {
        json_t *sb = tb__obj(ext, "VRMC_springBone");
        if (!json_object_get(sb, "specVersion"))
            json_object_set_new(sb, "specVersion", json_string("1.0"));
        springs = tb__arr(sb, "springs");
        tb__use_extension(root, "VRMC_springBone");
    } else {
        json_t *sa = tb__obj(tb__obj(ext, "VRM"), "secondaryAnimation");
        groups = tb__arr(sa, "boneGroups");
        tb__arr(sa, "colliderGroups");
    }
    for (int c = 0; c < tb_spring_chain_count(a); c++) {
        tb_spring_chain_info ci;
        tb_spring_get_chain_info(a, c, &ci);
        tb_spring_params p;
        tb_spring_get_params(a, c, &p);
        float zeta = p.damping_ratio > 0 ? p.damping_ratio : 0;
        float clearance = p.clearance_m > 0 ? p.clearance_m : 0;
        int K = ci.link_count;
        tb__vrm_joint *jt = calloc((size_t)(K > 0 ? K : 1), sizeof *jt);
        float *rest_q = calloc((size_t)(K > 0 ? K : 1) * 4, sizeof *rest_q);
        if (!jt || !rest_q) {
            free(jt);
            free(rest_q);
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
            goto done;
        }
        /* the analytic mapping (docs/vrm.md), the fit's start */
        for (int i = 0; i < K; i++) {
            tb_spring_link_state ls;
            tb_spring_get_link_state(a, c, i, &ls);
            float s = K > 1 ? (float)i / (float)(K - 1) : 0;
            float f = p.root_hz * (1 + (p.tip_ratio - 1) * s), om = 2 * TB__PI * f;
            jt[i].stiffness = om * om * ls.length_m * h;
            jt[i].drag = (float)(1.0 - exp(-2.0 * zeta * om * h));
            jt[i].gravity = 0;
            memcpy(rest_q + 4 * i, loc[ls.joint].r, 4 * sizeof(float));
        }
        tb__vrm_fit_report fr;
        memset(&fr, 0, sizeof fr);
        {
            r = tb__vrm_fit(doc, m, a, &bd, c, rest_q, h, units, jt, &fr, err);
            if (r != TB_OK) {
                free(jt);
                free(rest_q);
                goto done;
            }
            if (fr.clips) {
                rep->fit_clips += fr.clips;
                rep->fit_evaluations += fr.evaluations;
                rep->fit_before_m = fmaxf(rep->fit_before_m, fr.before_m);
                rep->fit_after_m = fmaxf(rep->fit_after_m, fr.after_m);
                rep->fit_tip_before_m = fmaxf(rep->fit_tip_before_m, fr.tip_before_m);
                rep->fit_tip_after_m = fmaxf(rep->fit_tip_after_m, fr.tip_after_m);
                /* the chain that swings least against ours counts */
                if (rep->fit_clips == fr.clips ||
                    fr.swing_after_m * rep->fit_swing_baked_m < rep->fit_swing_after_m * fr.swing_baked_m) {
                    rep->fit_swing_before_m = fr.swing_before_m;
                    rep->fit_swing_after_m = fr.swing_after_m;
                    rep->fit_swing_baked_m = fr.swing_baked_m;
                }
            }
        }
        json_t *joints = json_array();
        double mean_s = 0, mean_d = 0, mean_g = 0;
        for (int i = 0; i < K; i++) {
            tb_spring_link_state ls;
            tb_spring_get_link_state(a, c, i, &ls);
            mean_s += jt[i].stiffness / K;
            mean_d += jt[i].drag / K;
            mean_g += jt[i].gravity / K;
            int node = m->node_of_joint[ls.joint];
            json_t *nd = json_array_get(nodes, (size_t)node);
            const float *q = rest_q + 4 * i;
            json_object_set_new(nd, "rotation", json_pack("[f,f,f,f]", (double)q[0], (double)q[1], (double)q[2], (double)q[3]));
            json_array_append_new(joints, json_pack("{s:i,s:f,s:f,s:f,s:[f,f,f],s:f}", "node", node, "hitRadius",
                                                    tb__r6(clearance), "stiffness", tb__r6(jt[i].stiffness),
                                                    "gravityPower", tb__r6(jt[i].gravity), "gravityDir", 0.0, -1.0,
                                                    0.0, "dragForce", tb__r6(jt[i].drag)));
            rep->joints++;
        }
        free(jt);
        free(rest_q);
        if (ci.end_joint >= 0)
            json_array_append_new(joints, json_pack("{s:i}", "node", m->node_of_joint[ci.end_joint]));
        tb_spring_link_state first;
        tb_spring_get_link_state(a, c, 0, &first);
        const char *nm = m->skel.names[first.joint] ? m->skel.names[first.joint] : "tail";
        if (springs) {
            json_array_append_new(springs, json_pack("{s:s,s:o}", "name", nm, "joints", joints));
        } else {
            json_decref(joints);
            json_array_append_new(groups,
                                  json_pack("{s:s,s:f,s:f,s:{s:f,s:f,s:f},s:f,s:i,s:f,s:[i],s:[]}", "comment", nm,
                                            "stiffiness", tb__r6(mean_s), "gravityPower", tb__r6(mean_g),
                                            "gravityDir", "x", 0.0, "y", -1.0, "z", 0.0, "dragForce", tb__r6(mean_d),
                                            "center", -1, "hitRadius", tb__r6(clearance), "bones",
                                            m->node_of_joint[first.joint], "colliderGroups"));
        }
        rep->chains++;
    }
    r = tb_doc_refresh(doc, err);
done:
    free(loc);
    free(w);
    tb_spring_destroy(a);
    tb_model_free(m);
    return r;
}
