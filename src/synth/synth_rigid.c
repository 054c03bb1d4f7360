/* A body built of rigid parts (tailbone synth --onto): meshes parented to
 * bone nodes instead of skinned, as in three.js's RobotExpressive. To put a
 * fixture on such a body, each part becomes what an auto-rigger's export of
 * it would be: a skinned mesh, every vertex 100% on the joint the part hangs
 * from, its vertices moved into the skin's bind space so that it stands
 * exactly where it stood. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "core/base.h"
#include "synth/synth_internal.h"

/* The skin joint index a part at node n hangs from: its nearest ancestor
 * (or itself) that is a joint of skin s; -1 when none. */
static int tbs__hanging_joint(const tb_gltf *g, int s, int n)
{
    const tb_gltf_skin *sk = &g->skins[s];
    for (int a = n, guard = 0; a >= 0 && guard <= g->node_count; a = g->nodes[a].parent, guard++)
        for (int k = 0; k < sk->joint_count; k++)
            if (sk->joints[k] == a)
                return k;
    return -1;
}

/* Reads a VEC3 accessor, applies m (as points, or as directions: unit ones
 * renormalised, morph deltas not), and appends the result as a new
 * accessor; -1 on failure. */
enum { TBS_POINT, TBS_UNIT, TBS_DELTA };
static int tbs__moved(tb_doc *doc, int acc, mat4 m, int kind, tb_error *err)
{
    size_t n = tb_doc_gltf(doc)->accessors[acc].count;
    float *v = malloc((n ? n : 1) * 3 * sizeof *v);
    if (!v || tb_accessor_read_floats(doc, acc, v, n * 3, err) != TB_OK) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        vec3 q;
        glm_mat4_mulv3(m, v + i * 3, kind == TBS_POINT ? 1.0f : 0.0f, q);
        if (kind == TBS_UNIT)
            glm_vec3_normalize(q);
        memcpy(v + i * 3, q, sizeof q);
    }
    int r = tb_doc_add_accessor(doc, v, n, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
    free(v);
    return r;
}

/* Morph targets: deltas turn with the part (no translation). */
static tb_result tbs__part_targets(tb_doc *doc, json_t *pj, mat4 m, mat4 nm, tb_error *err)
{
    tb_result r = TB_OK;
    json_t *tg = json_object_get(pj, "targets"), *tj;
    size_t ti;
    json_array_foreach(tg, ti, tj) {
        const char *keys[] = {"POSITION", "NORMAL"};
        for (int kk = 0; kk < 2 && r == TB_OK; kk++) {
            json_t *acc = json_object_get(tj, keys[kk]);
            if (!json_is_integer(acc))
                continue;
            int na = tbs__moved(doc, (int)json_integer_value(acc), kk ? nm : m, TBS_DELTA, err);
            if (na < 0)
                r = err && err->code != TB_OK ? err->code : tb__fail(err, TB_ERR_OOM, NULL, NULL);
            else
                json_object_set_new(tj, keys[kk], json_integer(na));
        }
        json_object_del(tj, "TANGENT");
    }
    return r;
}

/* One primitive of a part (pr, its JSON pj in the mesh's copy): positions
 * and normals moved into bind space by m and nm, every vertex 100% on skin
 * joint k (of nj). */
static tb_result tbs__part_primitive(tb_doc *doc, const tb_gltf_primitive *pr, json_t *pj, int k, int nj, mat4 m,
                                     mat4 nm, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    json_t *at = json_object_get(pj, "attributes");
    size_t cnt = pr->position >= 0 ? g->accessors[pr->position].count : 0;
    uint8_t *jw = calloc(cnt ? cnt : 1, 4 * sizeof(uint8_t) + 4 * sizeof(float));
    if (!jw || pr->position < 0) {
        free(jw);
        return pr->position < 0 ? tb__fail(err, TB_ERR_INVALID, NULL, "a rigid part has no POSITION")
                                : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    uint8_t *jj = jw;
    float *ww = (float *)(jw + cnt * 4);
    for (size_t v = 0; v < cnt; v++)
        jj[v * 4] = (uint8_t)k, ww[v * 4] = 1.0f;
    int ap = tbs__moved(doc, pr->position, m, TBS_POINT, err);
    int an = pr->normal >= 0 ? tbs__moved(doc, pr->normal, nm, TBS_UNIT, err) : -2;
    int aj = nj <= 256 ? tb_doc_add_accessor(doc, jj, cnt, TB_COMPONENT_UNSIGNED_BYTE, "VEC4", 0, 34962) : -1;
    int aw = tb_doc_add_accessor(doc, ww, cnt, TB_COMPONENT_FLOAT, "VEC4", 0, 34962);
    free(jw);
    if (ap < 0 || an == -1 || aj < 0 || aw < 0)
        return err && err->code != TB_OK ? err->code : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    json_object_set_new(at, "POSITION", json_integer(ap));
    if (an >= 0)
        json_object_set_new(at, "NORMAL", json_integer(an));
    json_object_del(at, "TANGENT"); /* not carried over: recomputed by clients */
    json_object_set_new(at, "JOINTS_0", json_integer(aj));
    json_object_set_new(at, "WEIGHTS_0", json_integer(aw));
    return tbs__part_targets(doc, pj, m, nm, err);
}

/* The skinned part (mesh, appended) is a new root node of the scene; the
 * bone node n keeps its place in the hierarchy, without the mesh; its
 * morph-weight channels follow the mesh to the new node. */
static void tbs__part_node(json_t *root, json_t *scene, int n, int s, json_t *mesh)
{
    json_t *nodes = json_object_get(root, "nodes"), *meshes = json_object_get(root, "meshes");
    json_array_append_new(meshes, mesh);
    json_t *old = json_array_get(nodes, (size_t)n);
    json_t *nn = json_pack("{s:i,s:i}", "mesh", (int)json_array_size(meshes) - 1, "skin", s);
    const char *moved[] = {"name", "weights"};
    for (int q = 0; q < 2; q++)
        if (json_object_get(old, moved[q]))
            json_object_set(nn, moved[q], json_object_get(old, moved[q]));
    json_object_del(old, "mesh");
    json_object_del(old, "weights");
    json_t *an, *ch;
    size_t ai, ci;
    json_array_foreach(json_object_get(root, "animations"), ai, an) {
        json_array_foreach(json_object_get(an, "channels"), ci, ch) {
            json_t *tgt = json_object_get(ch, "target");
            if (json_integer_value(json_object_get(tgt, "node")) == n && json_is_string(json_object_get(tgt, "path")) &&
                !strcmp(json_string_value(json_object_get(tgt, "path")), "weights"))
                json_object_set_new(tgt, "node", json_integer((json_int_t)json_array_size(nodes)));
        }
    }
    json_array_append_new(nodes, nn);
    json_t *roots = json_object_get(scene, "nodes");
    if (!roots) {
        roots = json_array();
        json_object_set_new(scene, "nodes", roots);
    }
    json_array_append_new(roots, json_integer((json_int_t)json_array_size(nodes) - 1));
}

/* Part node n, hanging from skin joint k: its mesh copied with every
 * primitive skinned in bind space, then its node. */
static tb_result tbs__skin_part(tb_doc *doc, json_t *scene, int s, int n, int k, const float *ibm, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc); /* accessors appended by earlier parts: refreshed view */
    json_t *root = tb_doc_json(doc);
    int mi = g->nodes[n].mesh;
    /* bind space: world = G_joint · IBM_joint · p' at rest, so
     * p' = (G_joint · IBM_joint)⁻¹ · G_part · p */
    mat4 gj, inv, m;
    glm_mat4_mul((vec4 *)g->nodes[g->skins[s].joints[k]].world, (vec4 *)(ibm + k * 16), gj);
    glm_mat4_inv(gj, inv);
    glm_mat4_mul(inv, (vec4 *)g->nodes[n].world, m);
    mat4 nm; /* normals: inverse transpose of the linear part */
    glm_mat4_inv(m, nm);
    glm_mat4_transpose(nm);
    json_t *mesh = json_deep_copy(json_array_get(json_object_get(root, "meshes"), (size_t)mi));
    json_t *prims = json_object_get(mesh, "primitives");
    tb_result r = TB_OK;
    for (size_t q = 0; r == TB_OK && q < json_array_size(prims); q++)
        r = tbs__part_primitive(doc, &g->meshes[mi].primitives[q], json_array_get(prims, q), k,
                                g->skins[s].joint_count, m, nm, err);
    if (r != TB_OK) {
        json_decref(mesh);
        return r;
    }
    tbs__part_node(root, scene, n, s, mesh);
    return TB_OK;
}

tb_result tbs_skin_rigid_parts(tb_doc *doc, int *converted, tb_error *err)
{
    *converted = 0;
    const tb_gltf *g = tb_doc_gltf(doc);
    if (g->skin_count < 1)
        return TB_OK;
    const int s = 0;
    const int nj = g->skins[s].joint_count;
    float *ibm = malloc((size_t)nj * 16 * sizeof *ibm);
    int *todo = malloc((size_t)(g->node_count ? g->node_count : 1) * sizeof *todo);
    if (!ibm || !todo) {
        free(ibm);
        free(todo);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    tb_result r = TB_OK;
    if (g->skins[s].inverse_bind_matrices >= 0) {
        r = tb_accessor_read_floats(doc, g->skins[s].inverse_bind_matrices, ibm, (size_t)nj * 16, err);
    } else {
        for (int k = 0; k < nj; k++)
            glm_mat4_identity((vec4 *)(ibm + k * 16));
    }
    /* the parts: meshes without a skin, in a scene, hanging from a joint */
    int nt = 0;
    for (int n = 0; r == TB_OK && n < g->node_count; n++)
        if (g->nodes[n].mesh >= 0 && g->nodes[n].skin < 0 && g->nodes[n].in_scene &&
            tbs__hanging_joint(g, s, n) >= 0)
            todo[nt++] = n;
    json_t *root = tb_doc_json(doc);
    json_t *scene = json_array_get(json_object_get(root, "scenes"), g->scene >= 0 ? (size_t)g->scene : 0);
    for (int t = 0; r == TB_OK && t < nt; t++) {
        g = tb_doc_gltf(doc);
        r = tbs__skin_part(doc, scene, s, todo[t], tbs__hanging_joint(g, s, todo[t]), ibm, err);
        if (r == TB_OK)
            ++*converted;
    }
    free(ibm);
    free(todo);
    if (r == TB_OK && *converted)
        r = tb_doc_refresh(doc, err);
    return r;
}
