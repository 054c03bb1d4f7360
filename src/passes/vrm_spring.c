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

/* One run of tb_vrm_springs: the model and its spring, the settled rest
 * pose, and where the chains are written (springs: VRM 1; groups: VRM 0). */
typedef struct tb__vs_job {
    tb_doc *doc;
    tb_vrm_report *rep;
    tb_model *m;
    tb_spring_animator *a;
    tb_bake_desc bd;
    float h, units;             /* the VRM runtime's step, the bake's unit */
    tb_transform *loc;          /* the settled local pose */
    float (*w)[16];             /* scratch world matrices */
    json_t *nodes, *springs, *groups;
} tb__vs_job;

/* The rest pose: the stored node pose (what a VRM runtime starts from),
 * one step from a reset chain, settled under gravity: 4 s standing still.
 * VRM runtimes pull towards the node pose, so the settled pose (gravity
 * against the spring, the coupling, the limits) is written as the rest and
 * gravityPower is 0. */
static void tb__vs_settle(tb__vs_job *J)
{
    const tb_model *m = J->m;
    memcpy(J->loc, m->skel.rest_local, (size_t)m->skel.joint_count * sizeof *J->loc);
    tb_spring_reset(J->a);
    for (int f = 0; f < 240; f++) {
        tb_local_to_world(&m->skel, J->loc, NULL, J->w);
        tb_spring_step(J->a, 1.0f / 60.0f, (const float(*)[16])J->w, J->loc, J->w);
    }
}

/* The extension's containers: VRMC_springBone's springs, or VRM 0's
 * secondaryAnimation bone groups. */
static void tb__vs_containers(tb__vs_job *J)
{
    json_t *root = tb_doc_json(J->doc);
    json_t *ext = tb__obj(root, "extensions");
    J->nodes = json_object_get(root, "nodes");
    J->springs = J->groups = NULL;
    if (J->rep->version == 1) {
        json_t *sb = tb__obj(ext, "VRMC_springBone");
        if (!json_object_get(sb, "specVersion"))
            json_object_set_new(sb, "specVersion", json_string("1.0"));
        J->springs = tb__arr(sb, "springs");
        tb__use_extension(root, "VRMC_springBone");
    } else {
        json_t *sa = tb__obj(tb__obj(ext, "VRM"), "secondaryAnimation");
        J->groups = tb__arr(sa, "boneGroups");
        tb__arr(sa, "colliderGroups");
    }
}

/* The analytic mapping (docs/vrm.md), the fit's start: per joint of chain
 * c its stiffness and drag, and its settled rotation. */
static void tb__vs_start(const tb__vs_job *J, int c, const tb_spring_params *p, int K, tb__vrm_joint *jt,
                         float *rest_q)
{
    float zeta = p->damping_ratio > 0 ? p->damping_ratio : 0, h = J->h;
    for (int i = 0; i < K; i++) {
        tb_spring_link_state ls;
        tb_spring_get_link_state(J->a, c, i, &ls);
        float s = K > 1 ? (float)i / (float)(K - 1) : 0;
        float f = p->root_hz * (1 + (p->tip_ratio - 1) * s), om = 2 * TB_PI_F * f;
        jt[i].stiffness = om * om * ls.length_m * h;
        jt[i].drag = (float)(1.0 - exp(-2.0 * zeta * om * h));
        jt[i].gravity = 0;
        memcpy(rest_q + 4 * i, J->loc[ls.joint].r, 4 * sizeof(float));
    }
}

/* One chain's fit into the report: the largest errors, and the swing of
 * the chain that swings least against ours. */
static void tb__vs_report_fit(tb_vrm_report *rep, const tb__vrm_fit_report *fr)
{
    if (!fr->clips)
        return;
    rep->fit_clips += fr->clips;
    rep->fit_evaluations += fr->evaluations;
    rep->fit_before_m = fmaxf(rep->fit_before_m, fr->before_m);
    rep->fit_after_m = fmaxf(rep->fit_after_m, fr->after_m);
    rep->fit_tip_before_m = fmaxf(rep->fit_tip_before_m, fr->tip_before_m);
    rep->fit_tip_after_m = fmaxf(rep->fit_tip_after_m, fr->tip_after_m);
    if (rep->fit_clips == fr->clips ||
        fr->swing_after_m * rep->fit_swing_baked_m < rep->fit_swing_after_m * fr->swing_baked_m) {
        rep->fit_swing_before_m = fr->swing_before_m;
        rep->fit_swing_after_m = fr->swing_after_m;
        rep->fit_swing_baked_m = fr->swing_baked_m;
    }
}

/* Chain c written: each joint's node rotation (the settled rest) and its
 * spring joint, then the spring (VRM 1) or bone group (VRM 0, the means). */
static void tb__vs_write_chain(tb__vs_job *J, int c, const tb_spring_chain_info *ci, float clearance, int K,
                               const tb__vrm_joint *jt, const float *rest_q)
{
    const tb_model *m = J->m;
    json_t *joints = json_array();
    double mean_s = 0, mean_d = 0, mean_g = 0;
    for (int i = 0; i < K; i++) {
        tb_spring_link_state ls;
        tb_spring_get_link_state(J->a, c, i, &ls);
        mean_s += jt[i].stiffness / K;
        mean_d += jt[i].drag / K;
        mean_g += jt[i].gravity / K;
        int node = m->node_of_joint[ls.joint];
        json_t *nd = json_array_get(J->nodes, (size_t)node);
        const float *q = rest_q + 4 * i;
        json_object_set_new(nd, "rotation", json_pack("[f,f,f,f]", (double)q[0], (double)q[1], (double)q[2], (double)q[3]));
        json_array_append_new(joints, json_pack("{s:i,s:f,s:f,s:f,s:[f,f,f],s:f}", "node", node, "hitRadius",
                                                tb__r6(clearance), "stiffness", tb__r6(jt[i].stiffness),
                                                "gravityPower", tb__r6(jt[i].gravity), "gravityDir", 0.0, -1.0,
                                                0.0, "dragForce", tb__r6(jt[i].drag)));
        J->rep->joints++;
    }
    if (ci->end_joint >= 0)
        json_array_append_new(joints, json_pack("{s:i}", "node", m->node_of_joint[ci->end_joint]));
    tb_spring_link_state first;
    tb_spring_get_link_state(J->a, c, 0, &first);
    const char *nm = m->skel.names[first.joint] ? m->skel.names[first.joint] : "tail";
    if (J->springs) {
        json_array_append_new(J->springs, json_pack("{s:s,s:o}", "name", nm, "joints", joints));
    } else {
        json_decref(joints);
        json_array_append_new(J->groups,
                              json_pack("{s:s,s:f,s:f,s:{s:f,s:f,s:f},s:f,s:i,s:f,s:[i],s:[]}", "comment", nm,
                                        "stiffiness", tb__r6(mean_s), "gravityPower", tb__r6(mean_g), "gravityDir",
                                        "x", 0.0, "y", -1.0, "z", 0.0, "dragForce", tb__r6(mean_d), "center", -1,
                                        "hitRadius", tb__r6(clearance), "bones", m->node_of_joint[first.joint],
                                        "colliderGroups"));
    }
}

/* Chain c: the analytic start → the fit against the baked spring → written. */
static tb_result tb__vs_chain(tb__vs_job *J, int c, tb_error *err)
{
    tb_spring_chain_info ci;
    tb_spring_get_chain_info(J->a, c, &ci);
    tb_spring_params p;
    tb_spring_get_params(J->a, c, &p);
    float clearance = p.clearance_m > 0 ? p.clearance_m : 0;
    int K = ci.link_count;
    tb__vrm_joint *jt = calloc((size_t)(K > 0 ? K : 1), sizeof *jt);
    float *rest_q = calloc((size_t)(K > 0 ? K : 1) * 4, sizeof *rest_q);
    tb_result r = TB_OK;
    if (!jt || !rest_q) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    tb__vs_start(J, c, &p, K, jt, rest_q);
    tb__vrm_fit_report fr;
    memset(&fr, 0, sizeof fr);
    r = tb__vrm_fit(J->doc, J->m, J->a, &J->bd, c, rest_q, J->h, J->units, jt, &fr, err);
    if (r != TB_OK)
        goto done;
    tb__vs_report_fit(J->rep, &fr);
    tb__vs_write_chain(J, c, &ci, clearance, K, jt, rest_q);
    J->rep->chains++;
done:
    free(jt);
    free(rest_q);
    return r;
}

tb_result tb_vrm_springs(tb_doc *doc, const tb_bake_desc *desc, float hz, tb_vrm_report *rep, tb_error *err)
{
    memset(rep, 0, sizeof *rep);
    tb__vs_job J;
    memset(&J, 0, sizeof J);
    J.doc = doc;
    J.rep = rep;
    J.h = 1.0f / (hz > 0 ? hz : 60.0f);
    rep->hz = 1.0f / J.h;
    int version = tb_vrm_version(doc);
    rep->version = version == 0 ? 0 : 1;
    tb_result r = tb_model_load(&J.m, doc, -1, err);
    if (r != TB_OK)
        return r;
    J.bd = tb_bake_desc_defaults(desc);
    J.units = 1;
    tb_spring_desc sd = tb_bake_spring_desc(J.m, &J.bd, &J.units, NULL);
    r = tb_spring_create(&J.a, &J.m->skel, &sd, err);
    if (r != TB_OK) {
        tb_model_free(J.m);
        return r;
    }
    int n = J.m->skel.joint_count;
    J.loc = malloc((size_t)n * sizeof *J.loc);
    J.w = malloc((size_t)n * sizeof *J.w);
    if (!J.loc || !J.w) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    tb__vs_settle(&J);
    tb__vs_containers(&J);
    for (int c = 0; c < tb_spring_chain_count(J.a); c++)
        if ((r = tb__vs_chain(&J, c, err)) != TB_OK)
            goto done;
    r = tb_doc_refresh(doc, err);
done:
    free(J.loc);
    free(J.w);
    tb_spring_destroy(J.a);
    tb_model_free(J.m);
    return r;
}
