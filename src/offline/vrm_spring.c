/* The tail as VRM spring bones (tailbone/vrm.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "offline/doc_internal.h"
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
    tb_spring_desc sd = tb_bake_spring_desc(m, &bd, NULL, NULL);
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
        json_t *joints = json_array();
        double mean_s = 0, mean_d = 0;
        for (int i = 0; i < ci.link_count; i++) {
            tb_spring_link_state ls;
            tb_spring_get_link_state(a, c, i, &ls);
            float s = ci.link_count > 1 ? (float)i / (float)(ci.link_count - 1) : 0;
            float f = p.root_hz * (1 + (p.tip_ratio - 1) * s), om = 2 * TB__PI * f;
            double stiff = (double)om * om * ls.length_m * h, drag = 1.0 - exp(-2.0 * zeta * om * h);
            mean_s += stiff / ci.link_count;
            mean_d += drag / ci.link_count;
            int node = m->node_of_joint[ls.joint];
            json_t *nd = json_array_get(nodes, (size_t)node);
            const float *q = loc[ls.joint].r;
            json_object_set_new(nd, "rotation", json_pack("[f,f,f,f]", (double)q[0], (double)q[1], (double)q[2], (double)q[3]));
            json_array_append_new(joints, json_pack("{s:i,s:f,s:f,s:f,s:[f,f,f],s:f}", "node", node, "hitRadius",
                                                    tb__r6(clearance), "stiffness", tb__r6(stiff), "gravityPower",
                                                    0.0, "gravityDir", 0.0, -1.0, 0.0, "dragForce", tb__r6(drag)));
            rep->joints++;
        }
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
                                            "stiffiness", tb__r6(mean_s), "gravityPower", 0.0,
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
