/* Decoding a skin and its meshes into flat arrays (SPEC A: bind space). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "core/base.h"
#include "gltf/doc_json.h"
#include "core/tbmath.h"
#include "model/mesh_internal.h"
#include "tailbone/model.h"
#include "tailbone/tailchain.h"

void tb_model_free(tb_model *m)
{
    if (!m)
        return;
    free(m->node_of_joint);
    free(m->joint_of_node);
    free(m->skin_joints);
    for (int k = 0; m->joint_maps && k < m->skin_count; k++)
        free(m->joint_maps[k]);
    free(m->joint_maps);
    free(m->joint_map_counts);
    free(m->skins);
    free(m->inverse_bind);
    free(m->roles);
    free(m->role_source);
    free(m->name_roles);
    free(m->positions);
    free(m->normals);
    free(m->joints);
    free(m->weights);
    free(m->triangles);
    free(m->prims);
    free(m->parents_);
    free(m->names_);
    free(m->rest_);
    free(m->bind_world_);
    free(m->has_ibm_);
    free(m);
}

int tb_model_skin_slot(const tb_model *m, int skin)
{
    for (int i = 0; i < m->skin_count; i++)
        if (m->skins[i] == skin)
            return i;
    return -1;
}

int tb_model_uses_skin(const tb_model *m, int skin)
{
    return tb_model_skin_slot(m, skin) >= 0;
}

/* Two skins are one when they list the same joints with the same inverse
 * bind matrices (to 1e-5 of the largest entry). */
static int tb__skins_equal(const tb_doc *doc, int a, int b)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    const tb_gltf_skin *x = &g->skins[a], *y = &g->skins[b];
    if (x->joint_count != y->joint_count || memcmp(x->joints, y->joints, (size_t)x->joint_count * sizeof(int)))
        return 0;
    if (x->inverse_bind_matrices == y->inverse_bind_matrices)
        return 1;
    if (x->inverse_bind_matrices < 0 || y->inverse_bind_matrices < 0)
        return 0;
    size_t n = (size_t)x->joint_count * 16;
    float *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
    int same = p && q && tb_accessor_read_floats(doc, x->inverse_bind_matrices, p, n, NULL) == TB_OK &&
               tb_accessor_read_floats(doc, y->inverse_bind_matrices, q, n, NULL) == TB_OK;
    float scale = 0;
    for (size_t i = 0; same && i < n; i++)
        scale = fmaxf(scale, fabsf(p[i]));
    for (size_t i = 0; same && i < n; i++)
        same = fabsf(p[i] - q[i]) <= 1e-5f * (scale > 0 ? scale : 1);
    free(p);
    free(q);
    return same;
}

int tb_skin_equivalents(const tb_doc *doc, int skin, int *out)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    int n = 0;
    out[n++] = skin;
    for (int s = 0; s < g->skin_count; s++)
        if (s != skin && tb__skins_equal(doc, skin, s))
            out[n++] = s;
    return n;
}

tb_result tb_skin_inverse_binds(const tb_doc *doc, int skin, float (*out)[16], tb_error *err)
{
    const tb_gltf_skin *sk = &tb_doc_gltf(doc)->skins[skin];
    if (sk->inverse_bind_matrices >= 0)
        return tb_accessor_read_floats(doc, sk->inverse_bind_matrices, &out[0][0], (size_t)sk->joint_count * 16, err);
    for (int k = 0; k < sk->joint_count; k++)
        glm_mat4_identity((vec4 *)out[k]);
    return TB_OK;
}

/* When every joint of skin s is a joint of skin `main` with the same inverse
 * bind matrix (to 1e-4 of the largest entry), the map of s's joint indices
 * to main's (malloc'd); else NULL. */
static int *tb__subset_map(const tb_doc *doc, int main, int s)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    const tb_gltf_skin *x = &g->skins[main], *y = &g->skins[s];
    if (y->joint_count == 0 || y->joint_count > x->joint_count)
        return NULL;
    int *map = malloc((size_t)y->joint_count * sizeof *map);
    float(*p)[16] = malloc((size_t)x->joint_count * sizeof *p), (*q)[16] = malloc((size_t)y->joint_count * sizeof *q);
    int ok = map && p && q && tb_skin_inverse_binds(doc, main, p, NULL) == TB_OK &&
             tb_skin_inverse_binds(doc, s, q, NULL) == TB_OK;
    float scale = 0;
    for (int k = 0; ok && k < x->joint_count; k++)
        for (int e = 0; e < 16; e++)
            scale = fmaxf(scale, fabsf(p[k][e]));
    for (int j = 0; ok && j < y->joint_count; j++) {
        int k = 0;
        while (k < x->joint_count && x->joints[k] != y->joints[j])
            k++;
        ok = k < x->joint_count;
        for (int e = 0; ok && e < 16; e++)
            ok = fabsf(p[k][e] - q[j][e]) <= 1e-4f * (scale > 0 ? scale : 1);
        if (ok)
            map[j] = k;
    }
    free(p);
    free(q);
    if (!ok) {
        free(map);
        return NULL;
    }
    return map;
}

/* Equivalence classes of skins (tb__skins_equal) in one pass: class_of[s]
 * is the lowest index of a skin equal to s. Each skin is compared only with
 * the first skin of each class having the same joint list (a hash narrows
 * them), and each skin's matrices are decoded once: 5,000 identical skins
 * cost 5,000 comparisons, not 12.5 million. */
typedef struct tb__skin_key {
    uint64_t hash;
    int skin;
} tb__skin_key;

static int tb__cmp_skin_key(const void *a, const void *b)
{
    const tb__skin_key *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->skin > y->skin) - (x->skin < y->skin);
}

tb_result tb_skin_classes(const tb_doc *doc, int *class_of, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    int S = g->skin_count;
    tb__skin_key *keys = malloc((size_t)S * sizeof *keys);
    if (!keys)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int s = 0; s < S; s++) {
        uint64_t h = 1469598103934665603ull ^ (uint64_t)g->skins[s].joint_count;
        for (int k = 0; k < g->skins[s].joint_count; k++)
            h = (h ^ (uint64_t)(uint32_t)g->skins[s].joints[k]) * 1099511628211ull;
        keys[s].hash = h;
        keys[s].skin = s;
        class_of[s] = s;
    }
    qsort(keys, (size_t)S, sizeof *keys, tb__cmp_skin_key);
    /* within a run of equal hashes (ascending skin index), compare each skin
     * with the run's class leaders only */
    int *leaders = malloc((size_t)S * sizeof *leaders);
    if (!leaders) {
        free(keys);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (int a = 0, b; a < S; a = b) {
        for (b = a; b < S && keys[b].hash == keys[a].hash; b++) {
        }
        int nl = 0;
        for (int i = a; i < b; i++) {
            int s = keys[i].skin, found = -1;
            for (int l = 0; l < nl && found < 0; l++)
                if (tb__skins_equal(doc, leaders[l], s))
                    found = leaders[l];
            if (found >= 0)
                class_of[s] = found;
            else
                leaders[nl++] = s;
            /* many distinct skins sharing one joint list: stop comparing
             * (each its own class) rather than go quadratic */
            if (nl > 64) {
                for (int k = i + 1; k < b; k++)
                    class_of[keys[k].skin] = keys[k].skin;
                break;
            }
        }
    }
    free(leaders);
    free(keys);
    return TB_OK;
}

static size_t tb__prim_triangles(const tb_gltf *g, const tb_gltf_primitive *p, size_t vcount)
{
    size_t n = p->indices >= 0 ? g->accessors[p->indices].count : vcount;
    switch (p->mode) {
    case TB_MODE_TRIANGLES: return n / 3;
    case TB_MODE_TRIANGLE_STRIP:
    case TB_MODE_TRIANGLE_FAN: return n >= 3 ? n - 2 : 0;
    default: return 0;
    }
}

/* Primitive p's tc triangles (tb__prim_triangles) as model vertex ids (its
 * vertices start at vo) into t: lists, strips (winding kept on odd
 * triangles) and fans. */
static tb_result tb__prim_read_triangles(const tb_doc *doc, const tb_gltf_primitive *p, size_t vc, size_t tc,
                                         uint32_t vo, uint32_t *t, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    size_t n = p->indices >= 0 ? g->accessors[p->indices].count : vc;
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb_result r = TB_OK;
    if (p->indices >= 0)
        r = tb_accessor_read_uints(doc, p->indices, idx, n, err);
    else
        for (size_t q = 0; q < n; q++)
            idx[q] = (uint32_t)q;
    for (size_t q = 0; q < tc && r == TB_OK; q++) {
        uint32_t a, b, c;
        if (p->mode == TB_MODE_TRIANGLES) {
            a = idx[q * 3], b = idx[q * 3 + 1], c = idx[q * 3 + 2];
        } else if (p->mode == TB_MODE_TRIANGLE_STRIP) {
            /* keep winding consistent on odd triangles */
            a = idx[q], b = idx[q + 1 + (q & 1)], c = idx[q + 2 - (q & 1)];
        } else {
            a = idx[0], b = idx[q + 1], c = idx[q + 2];
        }
        t[q * 3] = vo + a;
        t[q * 3 + 1] = vo + b;
        t[q * 3 + 2] = vo + c;
    }
    free(idx);
    return r;
}

/* A skeleton-only file with no skin at all (tb_model_desc.skeleton_only):
 * its joints are every node an animation moves, with their descendants,
 * below the topmost such node's parent. Returns the count written to
 * joints (capacity node_count). */
static int tb__animated_joints(const tb_doc *doc, int *joints)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    int nn = g->node_count, count = 0;
    uint8_t *mark = calloc((size_t)nn + 1, 1);
    if (!mark)
        return 0;
    for (int a = 0; a < g->animation_count; a++)
        for (int c = 0; c < g->animations[a].channel_count; c++) {
            int q = g->animations[a].channels[c].node;
            if (q >= 0 && q < nn && g->nodes[q].mesh < 0)
                mark[q] = 1;
        }
    /* descendants of a moved node move with it (end bones, helpers) */
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int i = 0; i < nn; i++)
            if (!mark[i] && g->nodes[i].parent >= 0 && mark[g->nodes[i].parent] && g->nodes[i].mesh < 0)
                mark[i] = 1, changed = 1;
    }
    for (int i = 0; i < nn; i++)
        if (mark[i])
            joints[count++] = i;
    free(mark);
    return count;
}

static tb_result tb__build_skeleton_from(tb_model *m, const tb_doc *doc, const tb_gltf_skin *sk, tb_error *err);

static tb_result tb__build_skeleton(tb_model *m, const tb_doc *doc, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    if (m->skin >= 0)
        return tb__build_skeleton_from(m, doc, &g->skins[m->skin], err);
    tb_gltf_skin virt;
    memset(&virt, 0, sizeof virt);
    int *vjoints = malloc(((size_t)g->node_count + 1) * sizeof *vjoints);
    if (!vjoints)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    virt.joint_count = tb__animated_joints(doc, vjoints);
    virt.joints = vjoints;
    tb_result r = virt.joint_count ? tb__build_skeleton_from(m, doc, &virt, err)
                                   : tb__fail(err, TB_ERR_NO_SKIN, "/animations",
                                              "no skin, and no animation moves a node: no skeleton");
    free(vjoints);
    return r;
}

/* Read: the joints are every skin joint and the nodes above it, numbered
 * parent first (depth-first from the roots) into m->joint_of_node and
 * m->node_of_joint. Returns their count, or -1 out of memory. */
static int tb__skeleton_order(tb_model *m, const tb_gltf *g, const tb_gltf_skin *sk)
{
    int nn = g->node_count;
    uint8_t *want = NULL;
    want = calloc((size_t)nn, 1);
    m->joint_of_node = malloc((size_t)nn * sizeof *m->joint_of_node);
    if (!want || !m->joint_of_node) {
        free(want);
        return -1;
    }
    for (int k = 0; k < sk->joint_count; k++)
        for (int q = sk->joints[k]; q >= 0 && !want[q]; q = g->nodes[q].parent)
            want[q] = 1;
    int count = 0;
    for (int i = 0; i < nn; i++)
        count += want[i];
    m->node_of_joint = malloc((size_t)count * sizeof *m->node_of_joint);
    int *stack = malloc((size_t)nn * sizeof *stack);
    if (!m->node_of_joint || !stack) {
        free(want);
        free(stack);
        return -1;
    }
    int c = 0;
    for (int i = 0; i < nn; i++) {
        m->joint_of_node[i] = -1;
    }
    for (int i = 0; i < nn; i++) {
        if (!want[i] || g->nodes[i].parent >= 0)
            continue;
        int sp = 0;
        stack[sp++] = i;
        while (sp) {
            int q = stack[--sp];
            m->joint_of_node[q] = c;
            m->node_of_joint[c++] = q;
            for (int j = g->nodes[q].child_count - 1; j >= 0; j--)
                if (want[g->nodes[q].children[j]])
                    stack[sp++] = g->nodes[q].children[j];
        }
    }
    free(stack);
    free(want);
    return count;
}

/* Validate: passes walk from a joint up to the root (the spring finds what
 * hangs below a chain so): bound the depth, which real rigs keep under 100,
 * so a hostile million-deep chain is refused, not walked quadratically. */
static tb_result tb__skeleton_depth(const tb_model *m, int count, tb_error *err)
{
    int *depth = malloc(((size_t)count + 1) * sizeof *depth);
    if (!depth)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    int deepest = 0;
    for (int j = 0; j < count; j++) {
        depth[j] = m->parents_[j] >= 0 ? depth[m->parents_[j]] + 1 : 0;
        deepest = depth[j] > deepest ? depth[j] : deepest;
    }
    free(depth);
    if (deepest >= TB_MAX_SKELETON_DEPTH) {
        char where[64];
        snprintf(where, sizeof where, "/skins/%d/joints", m->skin);
        return tb__fail(err, TB_ERR_UNSUPPORTED, where, "the skeleton is %d levels deep; tailbone handles at most %d",
                        deepest + 1, TB_MAX_SKELETON_DEPTH);
    }
    return TB_OK;
}

/* Build: the per-joint arrays, from the nodes in joint order. */
static tb_result tb__skeleton_joints(tb_model *m, const tb_gltf *g, const tb_gltf_skin *sk, int count, tb_error *err)
{
    m->parents_ = malloc((size_t)count * sizeof *m->parents_);
    m->names_ = malloc((size_t)count * sizeof *m->names_);
    m->rest_ = malloc((size_t)count * sizeof *m->rest_);
    m->bind_world_ = malloc((size_t)count * sizeof *m->bind_world_);
    m->has_ibm_ = calloc((size_t)count, 1);
    m->roles = calloc((size_t)count, sizeof *m->roles);
    m->role_source = calloc((size_t)count, sizeof *m->role_source);
    m->name_roles = calloc((size_t)count, sizeof *m->name_roles);
    m->skin_joint_count = sk->joint_count;
    m->skin_joints = malloc((size_t)sk->joint_count * sizeof *m->skin_joints);
    m->inverse_bind = malloc((size_t)sk->joint_count * sizeof *m->inverse_bind);
    if (!m->parents_ || !m->names_ || !m->rest_ || !m->bind_world_ || !m->has_ibm_ || !m->roles || !m->role_source || !m->name_roles ||
        !m->skin_joints || !m->inverse_bind)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int j = 0; j < count; j++) {
        const tb_gltf_node *nd = &g->nodes[m->node_of_joint[j]];
        m->parents_[j] = nd->parent >= 0 ? m->joint_of_node[nd->parent] : -1;
        m->names_[j] = nd->name;
        m->rest_[j] = nd->local;
        memcpy(m->bind_world_[j], nd->world, sizeof nd->world);
    }
    return TB_OK;
}

/* Build: the skin's joints and their inverse bind matrices (the file's;
 * without a skin, bound in the stored node pose). */
static tb_result tb__skeleton_binds(tb_model *m, const tb_doc *doc, const tb_gltf_skin *sk, tb_error *err)
{
    tb_result r = TB_OK;
    if (m->skin >= 0) {
        r = tb_skin_inverse_binds(doc, m->skin, m->inverse_bind, err);
        if (r != TB_OK)
            return r;
    }
    for (int k = 0; k < sk->joint_count; k++) {
        int j = m->joint_of_node[sk->joints[k]];
        m->skin_joints[k] = j;
        if (m->skin >= 0)
            glm_mat4_inv((vec4 *)m->inverse_bind[k], (vec4 *)m->bind_world_[j]);
        else /* no skin: bound in the stored node pose */
            glm_mat4_inv((vec4 *)m->bind_world_[j], (vec4 *)m->inverse_bind[k]);
        m->has_ibm_[j] = 1;
    }
    return TB_OK;
}

/* The armature scale: the world scale of the topmost bound joint's parent. */
static float tb__armature_scale(const tb_model *m, const tb_gltf *g, int count)
{
    for (int j = 0; j < count; j++) {
        if (m->has_ibm_[j]) {
            int p = g->nodes[m->node_of_joint[j]].parent;
            while (p >= 0 && m->joint_of_node[p] >= 0 && m->has_ibm_[m->joint_of_node[p]])
                p = g->nodes[p].parent;
            if (p >= 0) {
                const float *w = g->nodes[p].world;
                return cbrtf(fabsf(glm_mat4_det((vec4 *)w)));
            }
            break;
        }
    }
    return 1.0f;
}

/* The skeleton of skin sk: order → joints → depth check → binds. */
static tb_result tb__build_skeleton_from(tb_model *m, const tb_doc *doc, const tb_gltf_skin *sk, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    int count = tb__skeleton_order(m, g, sk);
    if (count < 0)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb_result r = tb__skeleton_joints(m, g, sk, count, err);
    if (r == TB_OK)
        r = tb__skeleton_depth(m, count, err);
    if (r == TB_OK)
        r = tb__skeleton_binds(m, doc, sk, err);
    if (r != TB_OK)
        return r;
    for (int q = 0; q < TB_ROLE_COUNT; q++)
        m->role_joint[q] = -1;
    m->skel.joint_count = count;
    m->skel.parents = m->parents_;
    m->skel.names = m->names_;
    m->skel.rest_local = m->rest_;
    m->skel.bind_world = (const float(*)[16])m->bind_world_;
    m->skel.has_ibm = m->has_ibm_;
    m->armature_scale = tb__armature_scale(m, g, count);
    return TB_OK;
}

/* The skinned mesh nodes the model decodes: per node 1 or 0. glTF ignores
 * a skinned node's own transform, so nodes drawing one mesh with one skin
 * (instancing) draw the same vertices: only the first is decoded, never a
 * copy per instance. NULL on allocation failure. */
static uint8_t *tb__skinned_nodes_once(const tb_model *m, const tb_gltf *g)
{
    uint8_t *take = calloc((size_t)g->node_count + 1, 1);
    int *skin_of_mesh = malloc(((size_t)g->mesh_count + 1) * sizeof *skin_of_mesh);
    if (!take || !skin_of_mesh) {
        free(take);
        free(skin_of_mesh);
        return NULL;
    }
    for (int i = 0; i < g->mesh_count; i++)
        skin_of_mesh[i] = -1;
    for (int i = 0; i < g->node_count; i++) {
        const tb_gltf_node *nd = &g->nodes[i];
        if (!tb_model_uses_skin(m, nd->skin) || nd->mesh < 0 || skin_of_mesh[nd->mesh] == nd->skin)
            continue;
        take[i] = 1;
        if (skin_of_mesh[nd->mesh] < 0)
            skin_of_mesh[nd->mesh] = nd->skin;
    }
    free(skin_of_mesh);
    return take;
}

/* Read: what the decoded nodes draw. */
typedef struct tb__geometry_size {
    size_t vertices, triangles;
    int prims, sets; /* sets: the most JOINTS_n/WEIGHTS_n sets of any primitive (at least 1) */
} tb__geometry_size;

static tb__geometry_size tb__geometry_count(const tb_gltf *g, const uint8_t *take)
{
    tb__geometry_size n = {0, 0, 0, 1};
    for (int i = 0; i < g->node_count; i++) {
        const tb_gltf_node *nd = &g->nodes[i];
        if (!take[i])
            continue;
        const tb_gltf_mesh *me = &g->meshes[nd->mesh];
        for (int k = 0; k < me->primitive_count; k++) {
            const tb_gltf_primitive *p = &me->primitives[k];
            if (p->position < 0)
                continue;
            size_t vc = g->accessors[p->position].count;
            n.vertices += vc;
            n.triangles += tb__prim_triangles(g, p, vc);
            n.prims++;
            if (p->set_count > n.sets)
                n.sets = p->set_count;
        }
    }
    return n;
}

/* Validate: something to decode, and not more than tailbone handles. */
static tb_result tb__geometry_check(const tb_model *m, const tb__geometry_size *n, tb_error *err)
{
    if (n->vertices == 0) {
        char where[32];
        snprintf(where, sizeof where, "/skins/%d", m->skin);
        return tb__fail(err, TB_ERR_NO_SKIN, where, "no mesh with positions is bound to this skin");
    }
    if (n->vertices > TB_MAX_MODEL_VERTICES || n->triangles > 2 * (size_t)TB_MAX_MODEL_VERTICES) {
        /* instancing multiplies: a small file drawing one mesh from
         * thousands of skinned nodes would decode into gigabytes */
        char where[32];
        snprintf(where, sizeof where, "/skins/%d", m->skin);
        return tb__fail(err, TB_ERR_UNSUPPORTED, where,
                        "the skin draws %zu vertices and %zu triangles in %d primitives (instances counted); "
                        "tailbone handles at most %d vertices",
                        n->vertices, n->triangles, n->prims, TB_MAX_MODEL_VERTICES);
    }
    return TB_OK;
}

/* Where the next primitive goes, and the scratch its joints and weights
 * are read through (4 per vertex of the largest). */
typedef struct tb__geometry_cursor {
    size_t vo, to;
    int pi;
    int no_triangles; /* counted (each primitive's count kept), not read */
    uint32_t *tmpj;
    float *tmpw;
} tb__geometry_cursor;

/* Build: one weight set of a primitive of vc vertices at vertex offset vo,
 * its joints mapped into the model's skin (a subset skin through its map;
 * a zero weight or a joint outside the skin left empty). */
static tb_result tb__geometry_weights(tb_model *m, const tb_doc *doc, const tb_gltf_primitive *p, int s, int slot,
                                      size_t vc, const tb__geometry_cursor *cur, tb_error *err)
{
    const int *map = m->joint_maps[slot];
    int map_count = m->joint_map_counts[slot];
    tb_result r = tb_accessor_read_uints(doc, p->joints[s], cur->tmpj, vc * 4, err);
    if (r == TB_OK)
        r = tb_accessor_read_floats(doc, p->weights[s], cur->tmpw, vc * 4, err);
    if (r != TB_OK)
        return r;
    /* a subset skin: its indices into ours first */
    for (size_t q = 0; map && q < vc * 4; q++)
        cur->tmpj[q] = cur->tmpj[q] < (uint32_t)map_count ? (uint32_t)map[cur->tmpj[q]] : UINT32_MAX;
    /* every slot written (the arrays start zeroed: an empty one is written
     * zero, the bits it had), no branch: the loop runs in vector lanes */
    const size_t I = (size_t)m->influences;
    const uint32_t jc = (uint32_t)m->skin_joint_count;
    for (size_t v = 0; v < vc; v++) {
        uint16_t *dj = m->joints + (cur->vo + v) * I + (size_t)s * 4;
        float *dw = m->weights + (cur->vo + v) * I + (size_t)s * 4;
        for (size_t q = 0; q < 4; q++) {
            float w = cur->tmpw[v * 4 + q];
            uint32_t j = cur->tmpj[v * 4 + q];
            int take = (w > 0) & (j < jc);
            dj[q] = take ? (uint16_t)j : 0;
            dw[q] = take ? w : 0.0f;
        }
    }
    return TB_OK;
}

/* Build: primitive k of node i's mesh — positions, normals, weights,
 * triangles — at the cursor, which moves past it. */
static tb_result tb__geometry_primitive(tb_model *m, const tb_doc *doc, int i, int k, tb__geometry_cursor *cur,
                                        tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    const tb_gltf_node *nd = &g->nodes[i];
    const tb_gltf_primitive *p = &g->meshes[nd->mesh].primitives[k];
    if (p->position < 0)
        return TB_OK;
    size_t vc = g->accessors[p->position].count, vo = cur->vo;
    int slot = tb_model_skin_slot(m, nd->skin);
    tb_model_prim *mp = &m->prims[cur->pi++];
    mp->node = i;
    mp->mesh = nd->mesh;
    mp->primitive = k;
    mp->vertex_offset = vo;
    mp->vertex_count = vc;
    mp->triangle_offset = cur->to;
    tb_result r = tb_accessor_read_floats(doc, p->position, m->positions + vo * 3, vc * 3, err);
    if (r == TB_OK && m->normals && p->normal >= 0 && g->accessors[p->normal].components == 3)
        r = tb_accessor_read_floats(doc, p->normal, m->normals + vo * 3, vc * 3, err);
    for (int s = 0; s < p->set_count && r == TB_OK; s++)
        r = tb__geometry_weights(m, doc, p, s, slot, vc, cur, err);
    /* triangles */
    size_t tc = tb__prim_triangles(g, p, vc);
    mp->triangle_count = tc;
    if (tc && r == TB_OK && !cur->no_triangles)
        r = tb__prim_read_triangles(doc, p, vc, tc, (uint32_t)vo, m->triangles + cur->to * 3, err);
    cur->vo += vc;
    cur->to += tc;
    return r;
}

/* The bounding box of the positions, and the height along Y. */
static void tb__geometry_bounds(tb_model *m)
{
    for (int a = 0; a < 3; a++) {
        m->bbox_min[a] = m->positions[a];
        m->bbox_max[a] = m->positions[a];
    }
    for (size_t v = 0; v < m->vertex_count; v++)
        for (int a = 0; a < 3; a++) {
            float x = m->positions[v * 3 + (size_t)a];
            if (x < m->bbox_min[a])
                m->bbox_min[a] = x;
            if (x > m->bbox_max[a])
                m->bbox_max[a] = x;
        }
    m->height = m->bbox_max[1] - m->bbox_min[1];
}

/* The meshes the skin draws: count → check → allocate → read each
 * primitive → bounds. */
static tb_result tb__load_geometry(tb_model *m, const tb_doc *doc, int no_normals, int no_triangles, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    uint8_t *take = tb__skinned_nodes_once(m, g);
    if (!take)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb__geometry_size n = tb__geometry_count(g, take);
    tb_result r = tb__geometry_check(m, &n, err);
    if (r != TB_OK) {
        free(take);
        return r;
    }
    size_t vcount = n.vertices, tcount = n.triangles;
    m->influences = 4 * n.sets;
    m->vertex_count = vcount;
    m->triangle_count = no_triangles ? 0 : tcount;
    m->prim_count = n.prims;
    m->positions = malloc(vcount * 3 * sizeof(float));
    m->normals = no_normals ? NULL : calloc(vcount * 3, sizeof(float));
    m->joints = calloc(vcount * (size_t)m->influences, sizeof(uint16_t));
    m->weights = calloc(vcount * (size_t)m->influences, sizeof(float));
    m->triangles = malloc((tcount && !no_triangles ? tcount : 1) * 3 * sizeof(uint32_t));
    m->prims = calloc((size_t)n.prims, sizeof *m->prims);
    tb__geometry_cursor cur = {0, 0, 0, no_triangles, malloc(vcount * 4 * sizeof(uint32_t)),
                               malloc(vcount * 4 * sizeof(float))};
    if (!m->positions || (!no_normals && !m->normals) || !m->joints || !m->weights || !m->triangles || !m->prims ||
        !cur.tmpj || !cur.tmpw)
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int i = 0; i < g->node_count && r == TB_OK; i++) {
        if (!take[i])
            continue;
        const tb_gltf_mesh *me = &g->meshes[g->nodes[i].mesh];
        for (int k = 0; k < me->primitive_count && r == TB_OK; k++)
            r = tb__geometry_primitive(m, doc, i, k, &cur, err);
    }
    free(take);
    free(cur.tmpj);
    free(cur.tmpw);
    if (r == TB_OK)
        tb__geometry_bounds(m);
    return r;
}

/* H is the character's height: the extent of the bind-space vertices along
 * the bind axis a humanoid stands along (hips → head, tb_model_axes). That
 * is Y for almost every file; a Z-up mesh under a rotated root node
 * (Sketchfab's conversions, some FBX exports) stands along Z in bind space.
 * A quadruped (or a skeleton without humanoid roles) keeps the Y extent. */
static void tb__vertical_extent(tb_model *m)
{
    float up[3], fwd[3];
    int axis = 1;
    if (tb_model_axes(m, up, fwd))
        for (int a = 0; a < 3; a++)
            if (fabsf(up[a]) > fabsf(up[axis]) * 1.5f)
                axis = a;
    m->up_axis = axis;
    m->height = m->bbox_max[axis] - m->bbox_min[axis];
}


/* ---- roles (docs/detection.md, "Roles") -------------------------------- */

/* The file's VRM humanoid map, if any: VRM 0.x
 * (extensions.VRM.humanoid.humanBones[{bone, node}]) or VRM 1.0
 * (extensions.VRMC_vrm.humanoid.humanBones{bone: {node}}). VRM's bone names
 * ("leftUpperLeg", "chest") are names tb_role_from_name knows. */
static void tb__vrm_roles(const tb_model *m, const tb_doc *doc, tb_role *roles)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    json_t *ext = json_object_get(tb_doc_json((tb_doc *)doc), "extensions");
    json_t *v0 = json_object_get(json_object_get(json_object_get(ext, "VRM"), "humanoid"), "humanBones");
    json_t *v1 = json_object_get(json_object_get(json_object_get(ext, "VRMC_vrm"), "humanoid"), "humanBones");
    size_t i;
    json_t *e;
    const char *key;
    json_array_foreach(v0, i, e)
    {
        json_t *node = json_object_get(e, "node");
        const char *bone = json_string_value(json_object_get(e, "bone"));
        json_int_t nd = json_is_integer(node) ? json_integer_value(node) : -1;
        if (bone && nd >= 0 && nd < g->node_count && m->joint_of_node[nd] >= 0)
            roles[m->joint_of_node[nd]] = tb_role_from_name(bone);
    }
    json_object_foreach(v1, key, e)
    {
        json_t *node = json_object_get(e, "node");
        json_int_t nd = json_is_integer(node) ? json_integer_value(node) : -1;
        if (nd >= 0 && nd < g->node_count && m->joint_of_node[nd] >= 0)
            roles[m->joint_of_node[nd]] = tb_role_from_name(key);
    }
}

/* Rigify's metarig names its hips bare "spine" (then "spine.001"…): with a
 * "spine.001" child, a bare "spine" is the hips. */
static int tb__rigify_hips(const tb_model *m, int j)
{
    const char *n = m->names_[j];
    if (!n)
        return 0;
    const char *c = strrchr(n, ':');
    n = c ? c + 1 : n;
    if (!strncmp(n, "ORG-", 4))
        n += 4;
    if (strcmp(n, "spine") != 0)
        return 0;
    for (int k = j + 1; k < m->skel.joint_count; k++) {
        const char *q = m->names_[k];
        if (m->parents_[k] == j && q && strstr(q, "spine.001"))
            return 1;
    }
    return 0;
}

/* Each joint's skin: weight sum and weighted centroid, per skeleton joint. */
static tb_result tb__skin_mass(const tb_model *m, float *mass, float (*centroid)[3], tb_error *err)
{
    (void)err;
    int n = m->skel.joint_count;
    for (int j = 0; j < n; j++)
        mass[j] = 0, centroid[j][0] = centroid[j][1] = centroid[j][2] = 0;
    for (size_t v = 0; v < m->vertex_count; v++)
        for (int q = 0; q < m->influences; q++) {
            size_t k = v * (size_t)m->influences + (size_t)q;
            float w = m->weights[k];
            if (!(w > 0))
                continue;
            int j = m->skin_joints[m->joints[k]];
            mass[j] += w;
            for (int a = 0; a < 3; a++)
                centroid[j][a] += w * m->positions[v * 3 + (size_t)a];
        }
    for (int j = 0; j < n; j++)
        if (mass[j] > 0)
            for (int a = 0; a < 3; a++)
                centroid[j][a] /= mass[j];
    return TB_OK;
}

/* desc->roles: "Role=Joint" entries, applied last. */
static tb_result tb__apply_overrides(tb_model *m, const tb_model_desc *desc, tb_error *err)
{
    for (int i = 0; desc && desc->roles && i < desc->role_count; i++) {
        const char *e = desc->roles[i];
        const char *eq = e ? strchr(e, '=') : NULL;
        char where[48], role_s[64];
        snprintf(where, sizeof where, "tb_model_desc.roles[%d]", i);
        if (!eq || eq == e || !eq[1] || (size_t)(eq - e) >= sizeof role_s)
            return tb__fail(err, TB_ERR_ARG, where, "'%s' is not ROLE=JOINT", e ? e : "(null)");
        memcpy(role_s, e, (size_t)(eq - e));
        role_s[eq - e] = 0;
        tb_role r = tb_role_parse(role_s);
        if (!r)
            return tb__fail(err, TB_ERR_ARG, where, "unknown role '%s' (Hips, Spine, LeftUpLeg, … as in tailbone info)",
                            role_s);
        int j = -1;
        for (int k = 0; k < m->skel.joint_count && j < 0; k++)
            if (m->names_[k] && !strcmp(m->names_[k], eq + 1))
                j = k;
        if (j < 0)
            return tb__fail(err, TB_ERR_ARG, where, "no joint named '%s'", eq + 1);
        for (int k = 0; k < m->skel.joint_count; k++)
            if (m->roles[k] == r) {
                m->roles[k] = TB_ROLE_NONE;
                m->role_source[k] = TB_ROLE_SRC_NONE;
            }
        m->roles[j] = r;
        m->role_source[j] = TB_ROLE_SRC_OVERRIDE;
    }
    return TB_OK;
}

/* Names (exact, then loose), a VRM map over them, the shape to check or
 * replace them, the caller's overrides last. */
static tb_result tb__assign_roles(tb_model *m, const tb_doc *doc, const tb_model_desc *desc, tb_error *err)
{
    int n = m->skel.joint_count;
    tb_role_source *nsrc = calloc((size_t)n, sizeof *nsrc);
    tb_role *vrm = calloc((size_t)n, sizeof *vrm), *shape = calloc((size_t)n, sizeof *shape);
    float *mass = malloc((size_t)n * sizeof *mass);
    float(*centroid)[3] = malloc((size_t)n * sizeof *centroid);
    float(*pos)[3] = malloc((size_t)n * sizeof *pos);
    tb_result r = TB_OK;
    if (!nsrc || !vrm || !shape || !mass || !centroid || !pos) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    for (int j = 0; j < n; j++) {
        int loose = 0;
        tb_role role = tb__rigify_hips(m, j) ? TB_ROLE_HIPS : tb_role_from_name_fuzzy(m->names_[j], &loose);
        m->name_roles[j] = role;
        nsrc[j] = role ? (loose || tb__rigify_hips(m, j) ? TB_ROLE_SRC_FUZZY : TB_ROLE_SRC_NAME) : TB_ROLE_SRC_NONE;
    }
    tb__vrm_roles(m, doc, vrm);
    for (int j = 0; j < n; j++)
        if (vrm[j]) {
            for (int k = 0; k < n; k++) /* the map's joint wins the role */
                if (m->name_roles[k] == vrm[j] && nsrc[k] != TB_ROLE_SRC_VRM)
                    m->name_roles[k] = TB_ROLE_NONE, nsrc[k] = TB_ROLE_SRC_NONE;
            m->name_roles[j] = vrm[j];
            nsrc[j] = TB_ROLE_SRC_VRM;
        }
    if (!(desc && desc->names_only)) {
        tb__skin_mass(m, mass, centroid, err);
        for (int j = 0; j < n; j++)
            memcpy(pos[j], &m->bind_world_[j][12], sizeof pos[j]);
        tb_shape_skeleton sk = {n, m->parents_, (const float(*)[3])pos, m->has_ibm_, mass,
                                (const float(*)[3])centroid};
        tb_roles_from_shape(shape, &m->body, &sk);
    }
    tb_roles_resolve(m->roles, m->role_source, n, m->name_roles, nsrc, shape, &m->body);
    r = tb__apply_overrides(m, desc, err);
    if (r == TB_OK)
        tb_roles_fill_spine(m->roles, m->role_source, n, m->parents_);
    for (int q = 0; q < TB_ROLE_COUNT; q++)
        m->role_joint[q] = -1;
    for (int j = 0; j < n && r == TB_OK; j++)
        if (m->roles[j] && m->role_joint[m->roles[j]] < 0)
            m->role_joint[m->roles[j]] = j;
    if (r == TB_OK && m->role_joint[TB_ROLE_HIPS] < 0) {
        /* a creature no name or shape reads: its own tail chain's root */
        int j = tb_tail_chains_pelvis(m);
        if (j >= 0 && !m->roles[j]) {
            m->roles[j] = TB_ROLE_HIPS;
            m->role_source[j] = TB_ROLE_SRC_TAIL_ROOT;
            m->role_joint[TB_ROLE_HIPS] = j;
        }
    }
done:
    free(nsrc);
    free(vrm);
    free(shape);
    free(mass);
    free(centroid);
    free(pos);
    return r;
}

/* No vertices (a skeleton-only file): the box of the joints' bind positions. */
static void tb__joint_bbox(tb_model *m)
{
    for (int a = 0; a < 3; a++)
        m->bbox_min[a] = INFINITY, m->bbox_max[a] = -INFINITY;
    for (int j = 0; j < m->skel.joint_count; j++)
        for (int a = 0; a < 3; a++) {
            float v = m->bind_world_[j][12 + a];
            m->bbox_min[a] = v < m->bbox_min[a] ? v : m->bbox_min[a];
            m->bbox_max[a] = v > m->bbox_max[a] ? v : m->bbox_max[a];
        }
    for (int a = 0; a < 3 && m->skel.joint_count == 0; a++)
        m->bbox_min[a] = m->bbox_max[a] = 0;
    m->influences = 4;
}

/* The end of a load: on success the vertical extent and *out, else the
 * model freed. */
static tb_result tb__model_done(tb_model **out, tb_model *m, tb_result r)
{
    if (r != TB_OK) {
        tb_model_free(m);
        return r;
    }
    tb__vertical_extent(m);
    *out = m;
    return TB_OK;
}

/* A skeleton-only file with no skin at all: the nodes its clips move. */
static tb_result tb__load_skeleton_only(tb_model **out, const tb_doc *doc, const tb_model_desc *desc, tb_error *err)
{
    tb_model *m = calloc(1, sizeof *m);
    if (!m)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    m->skin = -1;
    m->skins = malloc(sizeof *m->skins);
    m->joint_maps = calloc(1, sizeof *m->joint_maps);
    m->joint_map_counts = calloc(1, sizeof *m->joint_map_counts);
    tb_result r = m->skins && m->joint_maps && m->joint_map_counts ? TB_OK : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r == TB_OK) {
        m->skins[0] = -1;
        m->skin_count = 0;
        r = tb__build_skeleton(m, doc, err);
    }
    if (r == TB_OK) {
        tb__joint_bbox(m);
        r = tb__assign_roles(m, doc, desc, err);
    }
    return tb__model_done(out, m, r);
}

tb_result tb_model_load(tb_model **out, const tb_doc *doc, int skin, tb_error *err)
{
    tb_model_desc d;
    memset(&d, 0, sizeof d);
    d.skin = skin < 0 ? 0 : skin + 1;
    return tb_model_load_desc(out, doc, &d, err);
}

/* What tb__load decodes beyond the skeleton: everything (0), the skeleton
 * alone where a file has no mesh (TB__LOAD_SKELETON), or no roles and no
 * triangles (TB__LOAD_INFLUENCES, tb__model_load_influences). */
enum { TB__LOAD_SKELETON = 1, TB__LOAD_INFLUENCES = 2 };

static tb_result tb__load(tb_model **out, const tb_doc *doc, const tb_model_desc *desc, int mode, tb_error *err);

tb_result tb_model_load_desc(tb_model **out, const tb_doc *doc, const tb_model_desc *desc, tb_error *err)
{
    return tb__load(out, doc, desc, 0, err);
}

tb_result tb_model_load_skeleton(tb_model **out, const tb_doc *doc, const tb_model_desc *desc, tb_error *err)
{
    return tb__load(out, doc, desc, TB__LOAD_SKELETON, err);
}

tb_result tb__model_load_influences(tb_model **out, const tb_doc *doc, int skin, tb_error *err)
{
    tb_model_desc d = {skin + 1, NULL, 0, 0, 1};
    return tb__load(out, doc, &d, TB__LOAD_INFLUENCES, err);
}

static tb_result tb__load(tb_model **out, const tb_doc *doc, const tb_model_desc *desc, int mode, tb_error *err)
{
    int skeleton_only = mode & TB__LOAD_SKELETON;
    int skin = desc ? desc->skin - 1 : -1;
    *out = NULL;
    const tb_gltf *g = tb_doc_gltf(doc);
    int no_mesh = 0;
    if (g->skin_count == 0 && !skeleton_only)
        return tb__fail(err, TB_ERR_NO_SKIN, "/skins", "the file has no skin (no rigged mesh)");
    if (g->skin_count == 0)
        return tb__load_skeleton_only(out, doc, desc, err);
    int S = g->skin_count;
    int *cls = malloc((size_t)S * sizeof *cls), *class_of = malloc((size_t)S * sizeof *class_of);
    size_t *verts = calloc((size_t)S, sizeof *verts);
    uint8_t *in_model = calloc((size_t)S, 1);
    tb_result r = cls && class_of && verts && in_model ? tb_skin_classes(doc, class_of, err)
                                                       : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r == TB_OK && skin < 0) {
        /* skinned vertices per class, one pass over the nodes */
        for (int i = 0; i < g->node_count; i++) {
            const tb_gltf_node *nd = &g->nodes[i];
            if (nd->skin < 0 || nd->mesh < 0)
                continue;
            const tb_gltf_mesh *me = &g->meshes[nd->mesh];
            for (int k = 0; k < me->primitive_count; k++)
                if (me->primitives[k].position >= 0 && me->primitives[k].set_count > 0)
                    verts[class_of[nd->skin]] += g->accessors[me->primitives[k].position].count;
        }
        size_t best = 0;
        skin = 0;
        for (int s = 0; s < S; s++) {
            if (verts[class_of[s]] > best) {
                best = verts[class_of[s]];
                skin = s;
            }
        }
        if (best == 0 && skeleton_only) {
            /* a clip library without a mesh: the skin with most joints */
            no_mesh = 1;
            for (int s = 0; s < S; s++)
                if (g->skins[s].joint_count > g->skins[skin].joint_count)
                    skin = s;
        } else if (best == 0) {
            r = tb__fail(err, TB_ERR_NO_SKIN, "/nodes", "no mesh node uses a skin with JOINTS_0/WEIGHTS_0");
        }
    } else if (r == TB_OK && skin >= S) {
        r = tb__fail(err, TB_ERR_ARG, NULL, "skin %d out of range", skin);
    }
    tb_model *m = r == TB_OK ? calloc(1, sizeof *m) : NULL;
    if (!m) {
        free(cls);
        free(class_of);
        free(verts);
        free(in_model);
        return r != TB_OK ? r : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    free(verts);
    m->skin = skin;
    m->skins = cls;
    /* the chosen skin first, then the others of its class */
    m->skins[0] = skin;
    m->skin_count = 1;
    in_model[skin] = 1;
    for (int s = 0; s < S; s++)
        if (s != skin && class_of[s] == class_of[skin]) {
            m->skins[m->skin_count++] = s;
            in_model[s] = 1;
        }
    free(class_of);
    m->joint_maps = calloc((size_t)S, sizeof *m->joint_maps);
    m->joint_map_counts = calloc((size_t)S, sizeof *m->joint_map_counts);
    if (!m->joint_maps || !m->joint_map_counts) {
        free(in_model);
        tb_model_free(m);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (int k = 0; k < m->skin_count; k++)
        m->joint_map_counts[k] = g->skins[m->skins[k]].joint_count;
    for (int s = 0; s < S; s++) {
        if (in_model[s])
            continue;
        int *map = tb__subset_map(doc, skin, s);
        if (!map)
            continue;
        m->joint_maps[m->skin_count] = map;
        m->joint_map_counts[m->skin_count] = g->skins[s].joint_count;
        m->skins[m->skin_count++] = s;
    }
    free(in_model);
    r = tb__build_skeleton(m, doc, err);
    if (r == TB_OK && !no_mesh)
        r = tb__load_geometry(m, doc, desc && desc->no_normals, mode & TB__LOAD_INFLUENCES, err);
    else if (r == TB_OK)
        tb__joint_bbox(m);
    if (r == TB_OK && !(mode & TB__LOAD_INFLUENCES))
        r = tb__assign_roles(m, doc, desc, err);
    return tb__model_done(out, m, r);
}

/* ---- bind space → world -------------------------------------------------- */

static float tb__fit(const float l[16], const tb_transform *stored)
{
    tb_transform x;
    tb__decompose(&x, l);
    float e = 0;
    for (int i = 0; i < 3; i++) {
        float a = x.s[i] > 1e-20f ? x.s[i] : 1e-20f, b = fabsf(stored->s[i]) > 1e-20f ? fabsf(stored->s[i]) : 1e-20f;
        e += fabsf(logf(a / b));
    }
    float d = fabsf(x.r[0] * stored->r[0] + x.r[1] * stored->r[1] + x.r[2] * stored->r[2] + x.r[3] * stored->r[3]);
    e += 2 * acosf(d > 1 ? 1 : d) / 3.14159265f;
    float dt[3] = {x.t[0] - stored->t[0], x.t[1] - stored->t[1], x.t[2] - stored->t[2]};
    float tl[3] = {x.t[0], x.t[1], x.t[2]}, ts[3] = {stored->t[0], stored->t[1], stored->t[2]};
    e += tb__norm3(dt) / (tb__norm3(tl) + tb__norm3(ts) + 1e-12f);
    return e;
}

void tb_model_bind_to_world(const tb_model *m, float M[16])
{
    static const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    memcpy(M, id, sizeof id);
    const tb_skeleton *sk = &m->skel;
    int r = -1;
    for (int j = 0; j < sk->joint_count && r < 0; j++)
        if ((!sk->has_ibm || sk->has_ibm[j]) && (sk->parents[j] < 0 || (sk->has_ibm && !sk->has_ibm[sk->parents[j]])))
            r = j;
    if (r < 0 || sk->parents[r] < 0)
        return;
    const float *above = sk->bind_world[sk->parents[r]];
    float diff = 0;
    for (int i = 0; i < 16; i++)
        diff += fabsf(above[i] - id[i]);
    if (diff < 1e-6f)
        return;
    /* hypothesis a: IBMs include the nodes above (M = I) */
    float inv[16], la[16], lb[16];
    tb__mat_inv(inv, above);
    tb_mat4_mul(la, inv, sk->bind_world[r]);
    /* hypothesis b: they do not (M = above): the implied local is IBM^-1 itself */
    memcpy(lb, sk->bind_world[r], sizeof lb);
    if (tb__fit(lb, &sk->rest_local[r]) < tb__fit(la, &sk->rest_local[r]))
        memcpy(M, above, 16 * sizeof(float));
}

/* m's triangles read again from doc, as tb_model_load read them: fix's
 * repair lends them to detection, which writes its welded copy over them
 * (no second copy at detection's peak), and reads them back after. */
tb_result tb__model_triangles_reload(tb_model *m, const tb_doc *doc, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    size_t total = 0;
    for (int i = 0; i < m->prim_count; i++)
        total += m->prims[i].triangle_count;
    uint32_t *tris = malloc((total ? total : 1) * 3 * sizeof *tris);
    if (!tris)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb_result r = TB_OK;
    for (int i = 0; i < m->prim_count && r == TB_OK; i++) {
        const tb_model_prim *mp = &m->prims[i];
        if (mp->triangle_count)
            r = tb__prim_read_triangles(doc, &g->meshes[mp->mesh].primitives[mp->primitive], mp->vertex_count,
                                        mp->triangle_count, (uint32_t)mp->vertex_offset,
                                        tris + mp->triangle_offset * 3, err);
    }
    if (r != TB_OK) {
        free(tris);
        return r;
    }
    free(m->triangles);
    m->triangles = tris;
    m->triangle_count = total;
    return TB_OK;
}
