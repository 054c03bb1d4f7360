/* Parsing the JSON tree into the bounds-checked view (tb_gltf).
 * Structure and bounds are checked here so that every later read is safe;
 * problems other tools tolerate (non-normalised weights, a skin.skeleton
 * that is not a common root) become warnings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>
#if defined(__SSE2__)
#include <emmintrin.h> /* tb__any_nonfinite: four values a step */
#endif

#include "gltf/doc_internal.h"

typedef struct tb__ctx {
    tb_doc *doc;
    tb_error *err;
    char where[192];
} tb__ctx;

#define TB__WHERE(c, ...) snprintf((c)->where, sizeof (c)->where, __VA_ARGS__)
/* c->where formatted as it is reported, not on every element that passes */
#define TB__AT(c, ...) (TB__WHERE(c, __VA_ARGS__), (c)->where)

/* snprintf(dst, cap, "%s%s", a, b) and snprintf(dst, cap, "%s%s%lld", a, b,
 * i), the same bytes (cut at cap - 1 as it cuts): the paths made for every
 * element, error or not (snprintf is ~900 instructions a call). */
static size_t tb__cat_at(char *dst, size_t cap, size_t n, const char *a)
{
    while (*a && n + 1 < cap)
        dst[n++] = *a++;
    return n;
}

static void tb__cat(char *dst, size_t cap, const char *a, const char *b)
{
    size_t n = tb__cat_at(dst, cap, tb__cat_at(dst, cap, 0, a), b);
    if (cap)
        dst[n] = 0;
}

static void tb__cat_index(char *dst, size_t cap, const char *a, const char *b, long long i)
{
    char num[24], *q = num + sizeof num - 1;
    unsigned long long u = i < 0 ? 0ull - (unsigned long long)i : (unsigned long long)i;
    *q = 0;
    do
        *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (i < 0)
        *--q = '-';
    size_t n = tb__cat_at(dst, cap, tb__cat_at(dst, cap, tb__cat_at(dst, cap, 0, a), b), q);
    if (cap)
        dst[n] = 0;
}

static json_t *tb__array(tb__ctx *c, json_t *parent, const char *key, tb_result *r)
{
    json_t *a = json_object_get(parent, key);
    if (a && !json_is_array(a)) {
        TB__WHERE(c, "/%s", key);
        *r = tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "%s must be an array", key);
        return NULL;
    }
    return a;
}

/* Reads an optional integer index field in [0, limit). Returns -1 if absent. */
static int tb__index(tb__ctx *c, json_t *o, const char *key, int limit, const char *path,
                     tb_result *r, int required)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (required && *r == TB_OK) {
            TB__WHERE(c, "%s/%s", path, key);
            *r = tb__fail(c->err, TB_ERR_MISSING_FIELD, c->where, "%s is required", key);
        }
        return -1;
    }
    if (*r != TB_OK)
        return -1;
    if (!json_is_integer(v)) {
        *r = tb__fail(c->err, TB_ERR_JSON_TYPE, TB__AT(c, "%s/%s", path, key), "%s must be an integer index", key);
        return -1;
    }
    json_int_t i = json_integer_value(v);
    if (i < 0 || i >= limit) {
        *r = tb__fail(c->err, TB_ERR_INDEX, TB__AT(c, "%s/%s", path, key), "%s %lld is out of range (%d available)", key,
                      (long long)i, limit);
        return -1;
    }
    return (int)i;
}

static size_t tb__usize(tb__ctx *c, json_t *o, const char *key, size_t def, const char *path,
                        tb_result *r)
{
    json_t *v = json_object_get(o, key);
    if (!v || *r != TB_OK)
        return def;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        TB__WHERE(c, "%s/%s", path, key);
        *r = tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "%s must be a non-negative integer", key);
        return def;
    }
    return (size_t)json_integer_value(v);
}

static int tb__floats(tb__ctx *c, json_t *o, const char *key, float *dst, size_t n,
                      const char *path, tb_result *r)
{
    json_t *v = json_object_get(o, key);
    if (!v || *r != TB_OK)
        return 0;
    if (!json_is_array(v) || json_array_size(v) != n) {
        *r = tb__fail(c->err, TB_ERR_JSON_TYPE, TB__AT(c, "%s/%s", path, key), "%s must be an array of %zu numbers",
                      key, n);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_number(e)) {
            TB__WHERE(c, "%s/%s/%zu", path, key, i);
            *r = tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "must be a number");
            return 0;
        }
        double d = json_number_value(e);
        if (!isfinite((float)d)) {
            TB__WHERE(c, "%s/%s/%zu", path, key, i);
            *r = tb__fail(c->err, TB_ERR_NONFINITE, c->where, "value does not fit a finite float");
            return 0;
        }
        dst[i] = (float)d;
    }
    return 1;
}

void tb__doc_clear_view(tb_doc *doc)
{
    TB__FREE_NULL(doc->views);
    TB__FREE_NULL(doc->accessors);
    TB__FREE_NULL(doc->nodes);
    TB__FREE_NULL(doc->children);
    TB__FREE_NULL(doc->skins);
    TB__FREE_NULL(doc->joints);
    TB__FREE_NULL(doc->meshes);
    TB__FREE_NULL(doc->prims);
    TB__FREE_NULL(doc->anims);
    TB__FREE_NULL(doc->chans);
    TB__FREE_NULL(doc->samps);
    memset(&doc->g, 0, sizeof doc->g);
}

static tb_result tb__parse_views(tb__ctx *c, json_t *root)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    json_t *buffers = tb__array(c, root, "buffers", &r);
    json_t *views = tb__array(c, root, "bufferViews", &r);
    if (r != TB_OK)
        return r;
    int nb = (int)json_array_size(buffers);
    size_t nv = json_array_size(views);
    size_t blen = 0;
    if (nb > 0) {
        /* after loading, buffer 0 is the merged BIN */
        json_t *bl = json_object_get(json_array_get(buffers, 0), "byteLength");
        blen = json_is_integer(bl) ? (size_t)json_integer_value(bl) : 0;
        if (blen > doc->bin_size) {
            return tb__fail(c->err, TB_ERR_TRUNCATED, "/buffers/0/byteLength",
                            "buffer declares %zu bytes but the BIN holds %zu", blen, doc->bin_size);
        }
    }
    doc->views = calloc(nv ? nv : 1, sizeof *doc->views);
    if (!doc->views)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    doc->g.buffer_view_count = (int)nv;
    char path[64];
    for (size_t i = 0; i < nv && r == TB_OK; i++) {
        json_t *v = json_array_get(views, i);
        tb__cat_index(path, sizeof path, "", "/bufferViews/", (long long)i);
        if (!json_is_object(v))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, path, "bufferView must be an object");
        tb__index(c, v, "buffer", nb, path, &r, 1);
        size_t off = tb__usize(c, v, "byteOffset", 0, path, &r);
        size_t len = tb__usize(c, v, "byteLength", 0, path, &r);
        size_t stride = tb__usize(c, v, "byteStride", 0, path, &r);
        if (r != TB_OK)
            break;
        if (!json_object_get(v, "byteLength")) {
            snprintf(c->where, sizeof c->where, "%s/byteLength", path);
            return tb__fail(c->err, TB_ERR_MISSING_FIELD, c->where, "byteLength is required");
        }
        if (off > blen || len > blen - off) {
            snprintf(c->where, sizeof c->where, "%s/byteLength", path);
            return tb__fail(c->err, TB_ERR_BOUNDS, c->where,
                            "bufferView [%zu, %zu) reaches past its buffer (%zu bytes)", off, off + len, blen);
        }
        if (json_object_get(v, "byteStride") && (stride < 4 || stride > 252 || stride % 4)) {
            snprintf(c->where, sizeof c->where, "%s/byteStride", path);
            return tb__fail(c->err, TB_ERR_INVALID, c->where, "byteStride %zu must be 4..252 and a multiple of 4", stride);
        }
        doc->views[i].offset = off;
        doc->views[i].length = len;
        doc->views[i].stride = stride;
    }
    return r;
}

/* An accessor's place in its bufferView: aligned, strided, within it. */
static tb_result tb__accessor_in_view(tb__ctx *c, json_t *a, const tb_gltf_accessor *ac, size_t elem, size_t cs,
                                      const char *path)
{
    tb_doc *doc = c->doc;
    if (ac->buffer_view >= 0) {
        const tb__view *v = &doc->views[ac->buffer_view];
        size_t stride = v->stride ? v->stride : elem;
        if ((v->offset + ac->byte_offset) % cs) {
            snprintf(c->where, sizeof c->where, "%s/byteOffset", path);
            return tb__fail(c->err, TB_ERR_ALIGN, c->where,
                            "data starts at buffer byte %zu, not a multiple of the %zu-byte component",
                            v->offset + ac->byte_offset, cs);
        }
        if (v->stride && v->stride % cs) {
            snprintf(c->where, sizeof c->where, "/bufferViews/%d/byteStride", ac->buffer_view);
            return tb__fail(c->err, TB_ERR_ALIGN, c->where, "byteStride is not a multiple of the component size");
        }
        if (v->stride && v->stride < elem) {
            snprintf(c->where, sizeof c->where, "/bufferViews/%d/byteStride", ac->buffer_view);
            return tb__fail(c->err, TB_ERR_INVALID, c->where, "byteStride %zu is smaller than the element (%zu bytes)", v->stride, elem);
        }
        /* overflow-safe: count <= SIZE_MAX/stride checked first */
        if (ac->byte_offset > v->length || (ac->count - 1) > (v->length - ac->byte_offset) / stride
            || (ac->count - 1) * stride + elem > v->length - ac->byte_offset) {
            snprintf(c->where, sizeof c->where, "%s/count", path);
            return tb__fail(c->err, TB_ERR_BOUNDS, c->where,
                            "%zu elements of %zu bytes from byte %zu reach past bufferView %d (%zu bytes)",
                            ac->count, elem, ac->byte_offset, ac->buffer_view, v->length);
        }
    } else if (json_object_get(a, "byteOffset")) {
        snprintf(c->where, sizeof c->where, "%s/byteOffset", path);
        tb__warn(doc, "%s: byteOffset without bufferView", c->where);
    }
    return TB_OK;
}

/* An accessor's sparse part: its count, indices and values within their
 * bufferViews, aligned, each index an element of the accessor. */
static tb_result tb__accessor_sparse(tb__ctx *c, json_t *sp, tb_gltf_accessor *ac, size_t elem, size_t cs,
                                     const char *path)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    char sp_path[96];
    snprintf(sp_path, sizeof sp_path, "%s/sparse", path);
    if (!json_is_object(sp))
        return tb__fail(c->err, TB_ERR_JSON_TYPE, sp_path, "sparse must be an object");
    ac->has_sparse = 1;
    json_t *sc = json_object_get(sp, "count");
    snprintf(c->where, sizeof c->where, "%s/count", sp_path);
    if (!json_is_integer(sc) || json_integer_value(sc) < 1 || (size_t)json_integer_value(sc) > ac->count)
        return tb__fail(c->err, TB_ERR_INVALID, c->where, "sparse count must be 1..%zu", ac->count);
    size_t scount = (size_t)json_integer_value(sc);
    json_t *si = json_object_get(sp, "indices"), *sv = json_object_get(sp, "values");
    if (!json_is_object(si) || !json_is_object(sv)) {
        snprintf(c->where, sizeof c->where, "%s/%s", sp_path, json_is_object(si) ? "values" : "indices");
        return tb__fail(c->err, TB_ERR_MISSING_FIELD, c->where, "sparse needs indices and values objects");
    }
    char ip[128], vp[128];
    snprintf(ip, sizeof ip, "%s/indices", sp_path);
    snprintf(vp, sizeof vp, "%s/values", sp_path);
    int ibv = tb__index(c, si, "bufferView", doc->g.buffer_view_count, ip, &r, 1);
    size_t ioff = tb__usize(c, si, "byteOffset", 0, ip, &r);
    int vbv = tb__index(c, sv, "bufferView", doc->g.buffer_view_count, vp, &r, 1);
    size_t voff = tb__usize(c, sv, "byteOffset", 0, vp, &r);
    if (r != TB_OK)
        return r;
    json_t *ict = json_object_get(si, "componentType");
    int ic = json_is_integer(ict) ? (int)json_integer_value(ict) : 0;
    if (ic != TB_COMPONENT_UNSIGNED_BYTE && ic != TB_COMPONENT_UNSIGNED_SHORT && ic != TB_COMPONENT_UNSIGNED_INT) {
        snprintf(c->where, sizeof c->where, "%s/componentType", ip);
        return tb__fail(c->err, TB_ERR_INVALID, c->where, "sparse indices must be 5121, 5123 or 5125");
    }
    size_t isz = tb__component_size(ic);
    const tb__view *iv = &doc->views[ibv], *vv = &doc->views[vbv];
    if (ioff > iv->length || scount > (iv->length - ioff) / isz) {
        snprintf(c->where, sizeof c->where, "%s/byteOffset", ip);
        return tb__fail(c->err, TB_ERR_BOUNDS, c->where, "sparse indices reach past bufferView %d", ibv);
    }
    if (voff > vv->length || scount > (vv->length - voff) / elem) {
        snprintf(c->where, sizeof c->where, "%s/byteOffset", vp);
        return tb__fail(c->err, TB_ERR_BOUNDS, c->where, "sparse values reach past bufferView %d", vbv);
    }
    if ((iv->offset + ioff) % isz || (vv->offset + voff) % cs) {
        snprintf(c->where, sizeof c->where, "%s", sp_path);
        return tb__fail(c->err, TB_ERR_ALIGN, c->where, "sparse data is misaligned");
    }
    /* indices must address existing elements */
    const uint8_t *ib = doc->bin + iv->offset + ioff;
    for (size_t k = 0; k < scount; k++) {
        uint32_t idx = isz == 1 ? ib[k] : isz == 2 ? ((const uint16_t *)(const void *)ib)[k]
                                                   : ((const uint32_t *)(const void *)ib)[k];
        if (idx >= ac->count) {
            snprintf(c->where, sizeof c->where, "%s", ip);
            return tb__fail(c->err, TB_ERR_INDEX, c->where,
                            "sparse index %u (entry %zu) is past the accessor's %zu elements", idx, k, ac->count);
        }
    }
    return TB_OK;
}

static tb_result tb__parse_accessors(tb__ctx *c, json_t *root)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    json_t *accs = tb__array(c, root, "accessors", &r);
    if (r != TB_OK)
        return r;
    size_t n = json_array_size(accs);
    doc->accessors = calloc(n ? n : 1, sizeof *doc->accessors);
    if (!doc->accessors)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    doc->g.accessor_count = (int)n;
    char path[64];
    for (size_t i = 0; i < n && r == TB_OK; i++) {
        json_t *a = json_array_get(accs, i);
        tb_gltf_accessor *ac = &doc->accessors[i];
        tb__cat_index(path, sizeof path, "", "/accessors/", (long long)i);
        if (!json_is_object(a))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, path, "accessor must be an object");
        ac->buffer_view = tb__index(c, a, "bufferView", doc->g.buffer_view_count, path, &r, 0);
        ac->byte_offset = tb__usize(c, a, "byteOffset", 0, path, &r);
        if (r != TB_OK)
            break;
        json_t *ct = json_object_get(a, "componentType");
        if (!ct)
            return tb__fail(c->err, TB_ERR_MISSING_FIELD, TB__AT(c, "%s/componentType", path), "componentType is required");
        if (!json_is_integer(ct) || !tb__component_size((int)json_integer_value(ct)))
            return tb__fail(c->err, TB_ERR_INVALID, TB__AT(c, "%s/componentType", path),
                            "componentType must be one of 5120, 5121, 5122, 5123, 5125, 5126");
        ac->component_type = (int)json_integer_value(ct);
        json_t *type = json_object_get(a, "type");
        if (!type)
            return tb__fail(c->err, TB_ERR_MISSING_FIELD, TB__AT(c, "%s/type", path), "type is required");
        ac->components = tb__type_components(json_string_value(type));
        if (!ac->components)
            return tb__fail(c->err, TB_ERR_INVALID, TB__AT(c, "%s/type", path), "type must be SCALAR, VEC2..4 or MAT2..4");
        json_t *cnt = json_object_get(a, "count");
        if (!cnt)
            return tb__fail(c->err, TB_ERR_MISSING_FIELD, TB__AT(c, "%s/count", path), "count is required");
        if (!json_is_integer(cnt) || json_integer_value(cnt) < 1)
            return tb__fail(c->err, TB_ERR_JSON_TYPE, TB__AT(c, "%s/count", path), "count must be an integer >= 1");
        ac->count = (size_t)json_integer_value(cnt);
        json_t *norm = json_object_get(a, "normalized");
        if (norm && !json_is_boolean(norm)) {
            snprintf(c->where, sizeof c->where, "%s/normalized", path);
            return tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "normalized must be a boolean");
        }
        ac->normalized = json_is_true(norm);
        ac->has_minmax = json_object_get(a, "min") && json_object_get(a, "max");
        size_t cs = tb__component_size(ac->component_type);
        const char *tname = json_string_value(type);
        size_t elem;
        if (!strcmp(tname, "MAT2") && cs == 1)
            elem = 8;
        else if (!strcmp(tname, "MAT3") && cs == 1)
            elem = 12;
        else if (!strcmp(tname, "MAT3") && cs == 2)
            elem = 24;
        else
            elem = cs * (size_t)ac->components;
        tb_result rv = tb__accessor_in_view(c, a, ac, elem, cs, path);
        if (rv != TB_OK)
            return rv;
        json_t *sp = json_object_get(a, "sparse");
        if (sp)
            r = tb__accessor_sparse(c, sp, ac, elem, cs, path);
    }
    return r;
}

/* world holds the node's local matrix until this runs, parent first (no
 * second 64-byte matrix per node: 10^6 nodes are 64 MB less). */
static void tb__compose_world(tb_gltf_node *nodes, int i)
{
    tb_gltf_node *n = &nodes[i];
    if (n->parent >= 0) {
        mat4 local;
        memcpy(local, n->world, sizeof local);
        glm_mat4_mul((vec4 *)nodes[n->parent].world, local, (vec4 *)n->world);
    }
}

/* A node's local transform: its matrix (decomposed), or its TRS (the
 * rotation checked); nd->world holds the local matrix until
 * tb__compose_world. */
static tb_result tb__parse_node_local(tb__ctx *c, json_t *o, tb_gltf_node *nd, const char *path)
{
    tb_result r = TB_OK;
    nd->local.r[3] = 1;
    nd->local.s[0] = nd->local.s[1] = nd->local.s[2] = 1;
    float m[16];
    if (tb__floats(c, o, "matrix", m, 16, path, &r)) {
        nd->has_matrix = 1;
        memcpy(nd->world, m, sizeof m); /* the local matrix until tb__compose_world */
        vec4 t;
        mat4 rot;
        vec3 s;
        glm_decompose((vec4 *)m, t, rot, s);
        versor q;
        glm_mat4_quat(rot, q);
        memcpy(nd->local.t, t, 3 * sizeof(float));
        memcpy(nd->local.r, q, 4 * sizeof(float));
        memcpy(nd->local.s, s, 3 * sizeof(float));
        return r;
    }
    tb__floats(c, o, "translation", nd->local.t, 3, path, &r);
    tb__floats(c, o, "rotation", nd->local.r, 4, path, &r);
    tb__floats(c, o, "scale", nd->local.s, 3, path, &r);
    if (r != TB_OK)
        return r;
    float len = sqrtf(nd->local.r[0] * nd->local.r[0] + nd->local.r[1] * nd->local.r[1] +
                      nd->local.r[2] * nd->local.r[2] + nd->local.r[3] * nd->local.r[3]);
    if (len < 1e-6f) {
        snprintf(c->where, sizeof c->where, "%s/rotation", path);
        return tb__fail(c->err, TB_ERR_INVALID, c->where, "rotation quaternion has zero length");
    }
    if (fabsf(len - 1) > 1e-3f)
        tb__warn(c->doc, "%s/rotation: quaternion not unit (length %.4f)", path, len);
    tb_transform_to_matrix(&nd->local, nd->world); /* local until tb__compose_world */
    return TB_OK;
}

/* Node i's children: indices in range, each child with one parent; they
 * take the next places of doc->children from *used. */
static tb_result tb__parse_node_children(tb__ctx *c, json_t *o, int i, int n, const char *path, size_t *used)
{
    tb_doc *doc = c->doc;
    tb_gltf_node *nd = &doc->nodes[i];
    json_t *ch = json_object_get(o, "children");
    if (!ch)
        return TB_OK;
    tb__cat(c->where, sizeof c->where, path, "/children");
    if (!json_is_array(ch))
        return tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "children must be an array");
    nd->children = doc->children + *used;
    for (size_t k = 0; k < json_array_size(ch); k++) {
        json_t *e = json_array_get(ch, k);
        if (!json_is_integer(e))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, TB__AT(c, "%s/children/%zu", path, k),
                            "child must be an integer index");
        json_int_t ci = json_integer_value(e);
        if (ci < 0 || ci >= n)
            return tb__fail(c->err, TB_ERR_INDEX, TB__AT(c, "%s/children/%zu", path, k),
                            "child %lld is out of range (%d nodes)", (long long)ci, n);
        if (ci == i || doc->nodes[ci].parent >= 0)
            return tb__fail(c->err, TB_ERR_HIERARCHY, TB__AT(c, "%s/children/%zu", path, k),
                            "node %lld has more than one parent (the node graph must be a forest)", (long long)ci);
        doc->nodes[ci].parent = i;
        doc->children[(*used)++] = (int)ci;
        nd->child_count++;
    }
    return TB_OK;
}

/* Forest check and world matrices: visit from roots, iteratively. */
static tb_result tb__node_forest(tb__ctx *c)
{
    tb_doc *doc = c->doc;
    int n = doc->g.node_count;
    int *stack = malloc((size_t)(n ? n : 1) * sizeof *stack);
    int *seen = calloc((size_t)(n ? n : 1), sizeof *seen);
    if (!stack || !seen) {
        free(stack);
        free(seen);
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    }
    int visited = 0;
    for (int i = 0; i < n; i++) {
        if (doc->nodes[i].parent >= 0)
            continue;
        int sp = 0;
        stack[sp++] = i;
        while (sp) {
            int k = stack[--sp];
            seen[k] = 1;
            visited++;
            tb__compose_world(doc->nodes, k);
            for (int j = 0; j < doc->nodes[k].child_count; j++)
                stack[sp++] = doc->nodes[k].children[j];
        }
    }
    int bad = 0;
    if (visited != n)
        while (bad < n && seen[bad])
            bad++;
    free(stack);
    free(seen);
    if (visited != n) {
        snprintf(c->where, sizeof c->where, "/nodes/%d", bad);
        return tb__fail(c->err, TB_ERR_HIERARCHY, c->where, "node is part of a cycle");
    }
    return TB_OK;
}

/* Scenes: the default scene, and which nodes are in a scene (all when
 * there is none). */
static tb_result tb__parse_scenes(tb__ctx *c, json_t *root)
{
    tb_doc *doc = c->doc;
    int n = doc->g.node_count;
    tb_result r = TB_OK;
    char path[64];
    json_t *scenes = tb__array(c, root, "scenes", &r);
    if (r != TB_OK)
        return r;
    int ns = (int)json_array_size(scenes);
    doc->g.scene_count = ns;
    doc->g.scene = -1;
    if (json_object_get(root, "scene"))
        doc->g.scene = tb__index(c, root, "scene", ns, "", &r, 0);
    if (r != TB_OK)
        return r;
    for (int s = 0; s < ns; s++) {
        json_t *sc = json_array_get(scenes, (size_t)s);
        snprintf(path, sizeof path, "/scenes/%d", s);
        if (!json_is_object(sc))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, path, "scene must be an object");
        json_t *sn = json_object_get(sc, "nodes");
        if (!sn)
            continue;
        snprintf(c->where, sizeof c->where, "%s/nodes", path);
        if (!json_is_array(sn))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "scene nodes must be an array");
        for (size_t k = 0; k < json_array_size(sn); k++) {
            json_t *e = json_array_get(sn, k);
            snprintf(c->where, sizeof c->where, "%s/nodes/%zu", path, k);
            if (!json_is_integer(e))
                return tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "scene node must be an integer index");
            json_int_t ni = json_integer_value(e);
            if (ni < 0 || ni >= n)
                return tb__fail(c->err, TB_ERR_INDEX, c->where, "node %lld is out of range (%d nodes)", (long long)ni, n);
            if (doc->nodes[ni].parent >= 0)
                tb__warn(doc, "%s: scene node %lld is not a root node", c->where, (long long)ni);
            /* mark the subtree */
            int sp = 0;
            int *st = malloc((size_t)n * sizeof *st);
            if (!st)
                return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
            st[sp++] = (int)ni;
            while (sp) {
                int q = st[--sp];
                if (doc->nodes[q].in_scene)
                    continue;
                doc->nodes[q].in_scene = 1;
                for (int j = 0; j < doc->nodes[q].child_count; j++)
                    st[sp++] = doc->nodes[q].children[j];
            }
            free(st);
        }
    }
    if (ns == 0)
        for (int i = 0; i < n; i++)
            doc->nodes[i].in_scene = 1;
    return TB_OK;
}

/* Nodes: each one's name, mesh, skin, local transform and children, then
 * the forest check and world matrices, then the scenes. */
static tb_result tb__parse_nodes(tb__ctx *c, json_t *root, int mesh_count, int skin_count)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    json_t *nodes = tb__array(c, root, "nodes", &r);
    if (r != TB_OK)
        return r;
    int n = (int)json_array_size(nodes);
    doc->g.node_count = n;
    doc->nodes = calloc(n ? (size_t)n : 1, sizeof *doc->nodes);
    size_t total_children = 0;
    for (int i = 0; i < n; i++) {
        json_t *ch = json_object_get(json_array_get(nodes, (size_t)i), "children");
        total_children += json_is_array(ch) ? json_array_size(ch) : 0;
    }
    doc->children = calloc(total_children ? total_children : 1, sizeof *doc->children);
    if (!doc->nodes || !doc->children)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    for (int i = 0; i < n; i++)
        doc->nodes[i].parent = -1;
    size_t used = 0;
    char path[64];
    for (int i = 0; i < n && r == TB_OK; i++) {
        json_t *o = json_array_get(nodes, (size_t)i);
        tb_gltf_node *nd = &doc->nodes[i];
        tb__cat_index(path, sizeof path, "", "/nodes/", i);
        if (!json_is_object(o))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, path, "node must be an object");
        json_t *name = json_object_get(o, "name");
        nd->name = json_is_string(name) ? json_string_value(name) : NULL;
        nd->mesh = tb__index(c, o, "mesh", mesh_count, path, &r, 0);
        nd->skin = tb__index(c, o, "skin", skin_count, path, &r, 0);
        if (r == TB_OK)
            r = tb__parse_node_local(c, o, nd, path);
        if (r == TB_OK)
            r = tb__parse_node_children(c, o, i, n, path, &used);
    }
    if (r == TB_OK)
        r = tb__node_forest(c);
    if (r == TB_OK)
        r = tb__parse_scenes(c, root);
    return r;
}

/* Whether some value has all exponent bits set (infinite or NaN): four at a
 * time in SSE2 lanes where there are (every x86-64), then one by one. */
static int tb__any_nonfinite(const void *values, size_t n)
{
    const unsigned char *v = values; /* 4 bytes a value, maybe unaligned */
    size_t i = 0;
    uint32_t any = 0;
#if defined(__SSE2__)
    const __m128i expo = _mm_set1_epi32(0x7f800000);
    __m128i acc = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4) {
        __m128i u = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(v + 4 * i)), expo);
        acc = _mm_or_si128(acc, _mm_cmpeq_epi32(u, expo));
    }
    any = _mm_movemask_epi8(acc) != 0;
#endif
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, v + 4 * i, sizeof u);
        any |= (u & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
    }
    return any != 0;
}

/* Checks that a float accessor holds only finite values. */
static tb_result tb__check_finite(tb__ctx *c, int acc, const char *what)
{
    const tb_gltf_accessor *ac = &c->doc->accessors[acc];
    if (ac->component_type != TB_COMPONENT_FLOAT)
        return TB_OK;
    size_t n = ac->count * (size_t)ac->components;
    /* packed in the BIN: checked where it lies, copied only to name the
     * element when there is one */
    const unsigned char *packed = tb__accessor_packed_floats(c->doc, acc);
    if (packed && !tb__any_nonfinite(packed, n))
        return TB_OK;
    float *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    tb_result r = tb_accessor_read_floats(c->doc, acc, tmp, n, c->err);
    /* the element is looked for only when there is one */
    int any = r == TB_OK && tb__any_nonfinite(tmp, n);
    for (size_t i = 0; r == TB_OK && any && i < n; i++) {
        if (!isfinite(tmp[i])) {
            snprintf(c->where, sizeof c->where, "/accessors/%d", acc);
            r = tb__fail(c->err, TB_ERR_NONFINITE, c->where, "%s element %zu component %zu is %s", what,
                         i / (size_t)ac->components, i % (size_t)ac->components, isnan(tmp[i]) ? "NaN" : "infinite");
        }
    }
    free(tmp);
    return r;
}

/* Three ints per node, all -1: tb__parse_skins' stamps. */
static int *tb__node_marks(int node_count)
{
    int *m = malloc((size_t)(node_count ? node_count : 1) * 3 * sizeof *m);
    if (m)
        memset(m, 0xff, (size_t)(node_count ? node_count : 1) * 3 * sizeof *m);
    return m;
}

/* Skin i's joints: node indices in a scene, none listed twice (a short
 * list by pairs, a long one by the stamps of *mk); they take the next
 * places of doc->joints from *used. */
static tb_result tb__skin_joints(tb__ctx *c, json_t *joints, tb_gltf_skin *sk, int i, const char *path, int **mk,
                                 size_t *used)
{
    tb_doc *doc = c->doc;
    for (int k = 0; k < sk->joint_count; k++) {
        json_t *e = json_array_get(joints, (size_t)k);
        if (!json_is_integer(e))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, TB__AT(c, "%s/joints/%d", path, k), "joint must be an integer index");
        json_int_t ji = json_integer_value(e);
        if (ji < 0 || ji >= doc->g.node_count)
            return tb__fail(c->err, TB_ERR_INDEX, TB__AT(c, "%s/joints/%d", path, k),
                            "joint node %lld is out of range (%d nodes)", (long long)ji, doc->g.node_count);
        if (!doc->nodes[ji].in_scene)
            return tb__fail(c->err, TB_ERR_HIERARCHY, TB__AT(c, "%s/joints/%d", path, k),
                            "joint node %lld (%s) is not in any scene",
                            (long long)ji, doc->nodes[ji].name ? doc->nodes[ji].name : "unnamed");
        /* glTF: joints are unique (two matrices for one node make
         * no sense); O(1) per joint with a stamp per node */
        for (int q = 0; q < k; q++) {
            if (k > 64)
                break; /* long lists: checked below by stamps */
            if (sk->joints[q] == (int)ji)
                return tb__fail(c->err, TB_ERR_INVALID, TB__AT(c, "%s/joints/%d", path, k),
                                "joint node %lld is listed twice (also at %d)",
                                (long long)ji, q);
        }
        doc->joints[(*used)++] = (int)ji;
    }
    if (sk->joint_count > 64) {
        /* one stamp per node for every skin (never a per-skin pass
         * over all nodes: 5,000 skins on 10^6 nodes stay linear) */
        if (!*mk && !(*mk = tb__node_marks(doc->g.node_count)))
            return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
        for (int k = 0; k < sk->joint_count; k++) {
            int q = sk->joints[k];
            if ((*mk)[3 * q] == i) {
                snprintf(c->where, sizeof c->where, "%s/joints/%d", path, k);
                int first = (*mk)[3 * q + 1];
                return tb__fail(c->err, TB_ERR_INVALID, c->where, "joint node %d is listed twice (also at %d)", q,
                                first);
            }
            (*mk)[3 * q] = i, (*mk)[3 * q + 1] = k;
        }
    }
    return TB_OK;
}

/* Skin i's inverse bind matrices: float MAT4, one a joint at least,
 * finite; a zero or singular one is warned of. */
static tb_result tb__skin_ibm(tb__ctx *c, const tb_gltf_skin *sk, int i)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    const tb_gltf_accessor *ac = &doc->accessors[sk->inverse_bind_matrices];
    snprintf(c->where, sizeof c->where, "/accessors/%d", sk->inverse_bind_matrices);
    if (ac->components != 16 || ac->component_type != TB_COMPONENT_FLOAT)
        return tb__fail(c->err, TB_ERR_INVALID, c->where, "inverse bind matrices must be float MAT4");
    if (ac->count < (size_t)sk->joint_count)
        return tb__fail(c->err, TB_ERR_INVALID, c->where, "%zu inverse bind matrices for %d joints", ac->count, sk->joint_count);
    r = tb__check_finite(c, sk->inverse_bind_matrices, "inverse bind matrix");
    /* a zero or singular matrix collapses every vertex on its joint */
    float *mats = r == TB_OK ? malloc((size_t)sk->joint_count * 16 * sizeof *mats) : NULL;
    if (mats && tb_accessor_read_floats(doc, sk->inverse_bind_matrices, mats, (size_t)sk->joint_count * 16,
                                        NULL) == TB_OK) {
        int bad = 0, first = -1;
        for (int k = 0; k < sk->joint_count; k++) {
            const float *a = mats + 16 * k;
            double det = (double)a[0] * ((double)a[5] * a[10] - (double)a[9] * a[6]) -
                         (double)a[4] * ((double)a[1] * a[10] - (double)a[9] * a[2]) +
                         (double)a[8] * ((double)a[1] * a[6] - (double)a[5] * a[2]);
            if (!(fabs(det) > 1e-18)) {
                bad++;
                first = first < 0 ? k : first;
            }
        }
        if (bad)
            tb__warn(doc, "/accessors/%d: %d of %d inverse bind matrices of skin %d are zero or singular "
                          "(first: joint %d); vertices on those joints collapse",
                     sk->inverse_bind_matrices, bad, sk->joint_count, i, first);
    }
    free(mats);
    return r;
}

/* The skin's skeleton: glTF wants it a common root of the joints; a
 * warning where it is not. */
static tb_result tb__skin_skeleton(tb__ctx *c, const tb_gltf_skin *sk, const char *path, int **mk)
{
    tb_doc *doc = c->doc;
    /* glTF: skeleton must be a common root of the joints. Accept,
     * warn. Each node's answer for this skeleton is kept (2 *
     * skeleton + 1: reaches it, 2 * skeleton: does not), so every
     * node is walked once per skeleton, not once per joint below
     * it: linear on a 10^5-deep skin, and skins sharing a skeleton
     * reuse the answers. */
    if (!*mk && !(*mk = tb__node_marks(doc->g.node_count)))
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    const int yes = 2 * sk->skeleton + 1, no = 2 * sk->skeleton;
    int all = 1;
    for (int k = 0; k < sk->joint_count && all; k++) {
        int q = sk->joints[k];
        while (q >= 0 && q != sk->skeleton && (*mk)[3 * q + 2] != yes && (*mk)[3 * q + 2] != no)
            q = doc->nodes[q].parent;
        int reaches = q >= 0 && (q == sk->skeleton || (*mk)[3 * q + 2] == yes);
        for (int p = sk->joints[k]; p != q; p = doc->nodes[p].parent)
            (*mk)[3 * p + 2] = reaches ? yes : no;
        all = reaches;
    }
    if (!all)
        tb__warn(doc, "%s/skeleton: node %d is not an ancestor of every joint", path, sk->skeleton);
    return TB_OK;
}

static tb_result tb__parse_skins_with(tb__ctx *c, json_t *root, int **mk)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    json_t *skins = tb__array(c, root, "skins", &r);
    if (r != TB_OK)
        return r;
    int n = (int)json_array_size(skins);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        json_t *j = json_object_get(json_array_get(skins, (size_t)i), "joints");
        total += json_is_array(j) ? json_array_size(j) : 0;
    }
    doc->skins = calloc(n ? (size_t)n : 1, sizeof *doc->skins);
    doc->joints = calloc(total ? total : 1, sizeof *doc->joints);
    if (!doc->skins || !doc->joints)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    doc->g.skin_count = n;
    size_t used = 0;
    char path[64];
    for (int i = 0; i < n && r == TB_OK; i++) {
        json_t *o = json_array_get(skins, (size_t)i);
        tb_gltf_skin *sk = &doc->skins[i];
        tb__cat_index(path, sizeof path, "", "/skins/", i);
        if (!json_is_object(o))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, path, "skin must be an object");
        json_t *name = json_object_get(o, "name");
        sk->name = json_is_string(name) ? json_string_value(name) : NULL;
        json_t *joints = json_object_get(o, "joints");
        tb__cat(c->where, sizeof c->where, path, "/joints");
        if (!joints)
            return tb__fail(c->err, TB_ERR_MISSING_FIELD, c->where, "joints is required");
        if (!json_is_array(joints) || json_array_size(joints) == 0)
            return tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "joints must be a non-empty array");
        sk->joints = doc->joints + used;
        sk->joint_count = (int)json_array_size(joints);
        r = tb__skin_joints(c, joints, sk, i, path, mk, &used);
        if (r != TB_OK)
            return r;
        sk->inverse_bind_matrices = tb__index(c, o, "inverseBindMatrices", doc->g.accessor_count, path, &r, 0);
        sk->skeleton = tb__index(c, o, "skeleton", doc->g.node_count, path, &r, 0);
        if (r != TB_OK)
            break;
        if (sk->inverse_bind_matrices >= 0)
            r = tb__skin_ibm(c, sk, i);
        if (sk->skeleton >= 0 && r == TB_OK)
            r = tb__skin_skeleton(c, sk, path, mk);
    }
    return r;
}

/* *mk: per node, the skin stamp, joint position and skeleton answer of
 * tb__parse_skins_with (tb__node_marks), made when first needed. */
static tb_result tb__parse_skins(tb__ctx *c, json_t *root)
{
    int *mk = NULL;
    tb_result r = tb__parse_skins_with(c, root, &mk);
    free(mk);
    return r;
}

static const tb_gltf_accessor *tb__acc(tb__ctx *c, int i) { return &c->doc->accessors[i]; }

/* A primitive's attributes: each an accessor, all of one count (*vcount);
 * POSITION, NORMAL, TANGENT and the sets noted in p. */
static tb_result tb__prim_attributes(tb__ctx *c, json_t *attrs, tb_gltf_primitive *p, const char *ap, size_t *vcount)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    const char *key;
    json_t *val;
    int first = 1;
    json_object_foreach(attrs, key, val) {
        int ai = tb__index(c, attrs, key, doc->g.accessor_count, ap, &r, 1);
        if (r != TB_OK)
            break;
        size_t cnt = tb__acc(c, ai)->count;
        if (first)
            *vcount = cnt;
        else if (cnt != *vcount) {
            snprintf(c->where, sizeof c->where, "%s/%s", ap, key);
            return tb__fail(c->err, TB_ERR_INVALID, c->where,
                            "attribute has %zu elements but the primitive's others have %zu", cnt, *vcount);
        }
        first = 0;
        int set = -1;
        if (!strcmp(key, "POSITION"))
            p->position = ai;
        else if (!strcmp(key, "NORMAL"))
            p->normal = ai;
        else if (!strcmp(key, "TANGENT"))
            p->tangent = ai;
        else if (sscanf(key, "TEXCOORD_%d", &set) == 1 && set >= 0 && set < TB_MAX_SETS)
            p->texcoord[set] = ai;
        else if (sscanf(key, "COLOR_%d", &set) == 1 && set >= 0 && set < TB_MAX_SETS)
            p->color[set] = ai;
        else if (sscanf(key, "JOINTS_%d", &set) == 1 && set >= 0 && set < TB_MAX_SETS)
            p->joints[set] = ai;
        else if (sscanf(key, "WEIGHTS_%d", &set) == 1 && set >= 0 && set < TB_MAX_SETS)
            p->weights[set] = ai;
    }
    return r;
}

/* POSITION a finite VEC3; the skin sets (JOINTS_n with WEIGHTS_n, counted
 * in p->set_count) of the types glTF allows, the weights finite. */
static tb_result tb__prim_position_and_sets(tb__ctx *c, tb_gltf_primitive *p, const char *ap)
{
    tb_result r = TB_OK;
    if (p->position >= 0) {
        const tb_gltf_accessor *a = tb__acc(c, p->position);
        if (a->components != 3) {
            snprintf(c->where, sizeof c->where, "%s/POSITION", ap);
            return tb__fail(c->err, TB_ERR_INVALID, c->where, "POSITION must be VEC3");
        }
        r = tb__check_finite(c, p->position, "POSITION");
    }
    while (p->set_count < TB_MAX_SETS && p->joints[p->set_count] >= 0 && p->weights[p->set_count] >= 0)
        p->set_count++;
    for (int s = 0; s < p->set_count && r == TB_OK; s++) {
        const tb_gltf_accessor *ja = tb__acc(c, p->joints[s]), *wa = tb__acc(c, p->weights[s]);
        if (ja->components != 4 || (ja->component_type != TB_COMPONENT_UNSIGNED_BYTE &&
                                    ja->component_type != TB_COMPONENT_UNSIGNED_SHORT)) {
            snprintf(c->where, sizeof c->where, "%s/JOINTS_%d", ap, s);
            return tb__fail(c->err, TB_ERR_INVALID, c->where, "JOINTS_%d must be VEC4 of unsigned byte/short", s);
        }
        if (wa->components != 4 || !(wa->component_type == TB_COMPONENT_FLOAT ||
                                     ((wa->component_type == TB_COMPONENT_UNSIGNED_BYTE ||
                                       wa->component_type == TB_COMPONENT_UNSIGNED_SHORT) && wa->normalized))) {
            snprintf(c->where, sizeof c->where, "%s/WEIGHTS_%d", ap, s);
            return tb__fail(c->err, TB_ERR_INVALID, c->where,
                            "WEIGHTS_%d must be VEC4 of float or normalized unsigned byte/short", s);
        }
        r = tb__check_finite(c, p->weights[s], "WEIGHTS");
    }
    return r;
}

/* A primitive's indices: SCALAR unsigned, each below vcount. */
static tb_result tb__prim_indices(tb__ctx *c, const tb_gltf_primitive *p, const char *pp, size_t vcount)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    if (p->indices < 0)
        return TB_OK;
    const tb_gltf_accessor *ia = tb__acc(c, p->indices);
    tb__cat(c->where, sizeof c->where, pp, "/indices");
    if (ia->components != 1 || (ia->component_type != TB_COMPONENT_UNSIGNED_BYTE &&
                                ia->component_type != TB_COMPONENT_UNSIGNED_SHORT &&
                                ia->component_type != TB_COMPONENT_UNSIGNED_INT))
        return tb__fail(c->err, TB_ERR_INVALID, c->where, "indices must be SCALAR unsigned byte/short/int");
    uint32_t *idx = malloc(ia->count * sizeof *idx);
    if (!idx)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    r = tb_accessor_read_uints(doc, p->indices, idx, ia->count, c->err);
    for (size_t q = 0; r == TB_OK && q < ia->count; q++) {
        if (idx[q] >= vcount) {
            snprintf(c->where, sizeof c->where, "/accessors/%d", p->indices);
            r = tb__fail(c->err, TB_ERR_INDEX, c->where,
                         "index %u (element %zu) is past the primitive's %zu vertices", idx[q], q, vcount);
        }
    }
    free(idx);
    return r;
}

/* One primitive at pp: its accessors, material and mode, attributes, skin
 * sets and indices. */
static tb_result tb__parse_primitive(tb__ctx *c, json_t *po, tb_gltf_primitive *p, const char *pp)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    p->position = p->normal = p->tangent = -1;
    for (int s = 0; s < TB_MAX_SETS; s++)
        p->texcoord[s] = p->color[s] = p->joints[s] = p->weights[s] = -1;
    p->indices = tb__index(c, po, "indices", doc->g.accessor_count, pp, &r, 0);
    p->material = tb__index(c, po, "material", doc->g.material_count, pp, &r, 0);
    json_t *mode = json_object_get(po, "mode");
    p->mode = TB_MODE_TRIANGLES;
    if (mode) {
        snprintf(c->where, sizeof c->where, "%s/mode", pp);
        if (!json_is_integer(mode) || json_integer_value(mode) < 0 || json_integer_value(mode) > 6)
            return tb__fail(c->err, TB_ERR_INVALID, c->where, "mode must be 0..6");
        p->mode = (int)json_integer_value(mode);
    }
    json_t *attrs = json_object_get(po, "attributes");
    tb__cat(c->where, sizeof c->where, pp, "/attributes");
    if (!attrs)
        return tb__fail(c->err, TB_ERR_MISSING_FIELD, c->where, "attributes is required");
    if (!json_is_object(attrs))
        return tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "attributes must be an object");
    char ap[160];
    tb__cat(ap, sizeof ap, pp, "/attributes");
    size_t vcount = 0;
    if (r == TB_OK) /* else the first attribute's look-up would stop there */
        r = tb__prim_attributes(c, attrs, p, ap, &vcount);
    if (r == TB_OK)
        r = tb__prim_position_and_sets(c, p, ap);
    if (r == TB_OK)
        r = tb__prim_indices(c, p, pp, vcount);
    return r;
}

static tb_result tb__parse_meshes(tb__ctx *c, json_t *root)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    json_t *meshes = tb__array(c, root, "meshes", &r);
    if (r != TB_OK)
        return r;
    int n = (int)json_array_size(meshes);
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        json_t *p = json_object_get(json_array_get(meshes, (size_t)i), "primitives");
        total += json_is_array(p) ? json_array_size(p) : 0;
    }
    doc->meshes = calloc(n ? (size_t)n : 1, sizeof *doc->meshes);
    doc->prims = calloc(total ? total : 1, sizeof *doc->prims);
    if (!doc->meshes || !doc->prims)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    doc->g.mesh_count = n;
    size_t used = 0;
    char path[96];
    for (int i = 0; i < n && r == TB_OK; i++) {
        json_t *o = json_array_get(meshes, (size_t)i);
        tb_gltf_mesh *m = &doc->meshes[i];
        tb__cat_index(path, sizeof path, "", "/meshes/", i);
        if (!json_is_object(o))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, path, "mesh must be an object");
        json_t *name = json_object_get(o, "name");
        m->name = json_is_string(name) ? json_string_value(name) : NULL;
        json_t *prims = json_object_get(o, "primitives");
        tb__cat(c->where, sizeof c->where, path, "/primitives");
        if (!prims)
            return tb__fail(c->err, TB_ERR_MISSING_FIELD, c->where, "primitives is required");
        if (!json_is_array(prims) || json_array_size(prims) == 0)
            return tb__fail(c->err, TB_ERR_JSON_TYPE, c->where, "primitives must be a non-empty array");
        m->primitives = doc->prims + used;
        m->primitive_count = (int)json_array_size(prims);
        for (int k = 0; k < m->primitive_count && r == TB_OK; k++) {
            tb_gltf_primitive *p = &doc->prims[used++];
            json_t *po = json_array_get(prims, (size_t)k);
            char pp[128];
            tb__cat_index(pp, sizeof pp, path, "/primitives/", k);
            if (!json_is_object(po))
                return tb__fail(c->err, TB_ERR_JSON_TYPE, pp, "primitive must be an object");
            r = tb__parse_primitive(c, po, p, pp);
        }
    }
    return r;
}

/* One sampler at sp: input and output accessors, interpolation, key
 * times finite (an->duration_s their latest), output finite. */
static tb_result tb__parse_sampler(tb__ctx *c, json_t *so, tb_gltf_sampler *s, const char *sp, tb_gltf_animation *an)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    s->input = tb__index(c, so, "input", doc->g.accessor_count, sp, &r, 1);
    s->output = tb__index(c, so, "output", doc->g.accessor_count, sp, &r, 1);
    if (r != TB_OK)
        return r;
    json_t *it = json_object_get(so, "interpolation");
    const char *is = json_is_string(it) ? json_string_value(it) : "LINEAR";
    if (!strcmp(is, "LINEAR"))
        s->interp = TB_INTERP_LINEAR;
    else if (!strcmp(is, "STEP"))
        s->interp = TB_INTERP_STEP;
    else if (!strcmp(is, "CUBICSPLINE"))
        s->interp = TB_INTERP_CUBICSPLINE;
    else
        return tb__fail(c->err, TB_ERR_INVALID, TB__AT(c, "%s/interpolation", sp),
                        "interpolation must be LINEAR, STEP or CUBICSPLINE");
    const tb_gltf_accessor *in = tb__acc(c, s->input), *out = tb__acc(c, s->output);
    if (in->components != 1 || in->component_type != TB_COMPONENT_FLOAT)
        return tb__fail(c->err, TB_ERR_INVALID, TB__AT(c, "/accessors/%d", s->input),
                        "animation input must be SCALAR float");
    size_t per = s->interp == TB_INTERP_CUBICSPLINE ? 3 : 1;
    if (out->count < in->count * per || out->count % (in->count * per)) {
        snprintf(c->where, sizeof c->where, "%s/output", sp);
        return tb__fail(c->err, TB_ERR_INVALID, c->where,
                        "output has %zu elements for %zu keys", out->count, in->count);
    }
    float *t = malloc(in->count * sizeof *t);
    if (!t)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    r = tb_accessor_read_floats(doc, s->input, t, in->count, c->err);
    for (size_t q = 0; r == TB_OK && q < in->count; q++) {
        if (!isfinite(t[q])) {
            snprintf(c->where, sizeof c->where, "/accessors/%d", s->input);
            r = tb__fail(c->err, TB_ERR_NONFINITE, c->where, "key time %zu is not finite", q);
        } else if (q && t[q] < t[q - 1]) {
            tb__warn(doc, "/accessors/%d: key times decrease at element %zu", s->input, q);
        }
        if (r == TB_OK && t[q] > an->duration_s)
            an->duration_s = t[q];
    }
    free(t);
    if (r == TB_OK)
        r = tb__check_finite(c, s->output, "animation output");
    return r;
}

/* One channel at cp: its sampler, target node and path, the sampler's
 * output type for the path. */
static tb_result tb__parse_channel(tb__ctx *c, json_t *co, tb_gltf_channel *cc, const char *cp,
                                   const tb_gltf_animation *an)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    cc->sampler = tb__index(c, co, "sampler", an->sampler_count, cp, &r, 1);
    json_t *tg = json_object_get(co, "target");
    if (r == TB_OK && !json_is_object(tg))
        return tb__fail(c->err, tg ? TB_ERR_JSON_TYPE : TB_ERR_MISSING_FIELD, TB__AT(c, "%s/target", cp),
                        "target must be an object");
    char tp[128];
    tb__cat(tp, sizeof tp, cp, "/target");
    cc->node = tb__index(c, tg, "node", doc->g.node_count, tp, &r, 0);
    if (r != TB_OK)
        return r;
    json_t *pa = json_object_get(tg, "path");
    const char *ps = json_string_value(pa);
    cc->path = TB_GLTF_PATH_OTHER;
    if (ps && !strcmp(ps, "translation"))
        cc->path = TB_GLTF_PATH_TRANSLATION;
    else if (ps && !strcmp(ps, "rotation"))
        cc->path = TB_GLTF_PATH_ROTATION;
    else if (ps && !strcmp(ps, "scale"))
        cc->path = TB_GLTF_PATH_SCALE;
    else if (ps && !strcmp(ps, "weights"))
        cc->path = TB_GLTF_PATH_WEIGHTS;
    else if (!ps) {
        snprintf(c->where, sizeof c->where, "%s/target/path", cp);
        return tb__fail(c->err, TB_ERR_MISSING_FIELD, c->where, "path is required");
    }
    if (cc->path <= TB_GLTF_PATH_SCALE) {
        const tb_gltf_accessor *out = tb__acc(c, an->samplers[cc->sampler].output);
        int want = cc->path == TB_GLTF_PATH_ROTATION ? 4 : 3;
        if (out->components != want) {
            snprintf(c->where, sizeof c->where, "/accessors/%d", an->samplers[cc->sampler].output);
            return tb__fail(c->err, TB_ERR_INVALID, c->where, "%s output must be VEC%d", ps, want);
        }
    }
    return r;
}

static tb_result tb__parse_animations(tb__ctx *c, json_t *root)
{
    tb_doc *doc = c->doc;
    tb_result r = TB_OK;
    json_t *anims = tb__array(c, root, "animations", &r);
    if (r != TB_OK)
        return r;
    int n = (int)json_array_size(anims);
    size_t tc = 0, ts = 0;
    for (int i = 0; i < n; i++) {
        json_t *a = json_array_get(anims, (size_t)i);
        json_t *ch = json_object_get(a, "channels"), *sa = json_object_get(a, "samplers");
        tc += json_is_array(ch) ? json_array_size(ch) : 0;
        ts += json_is_array(sa) ? json_array_size(sa) : 0;
    }
    doc->anims = calloc(n ? (size_t)n : 1, sizeof *doc->anims);
    doc->chans = calloc(tc ? tc : 1, sizeof *doc->chans);
    doc->samps = calloc(ts ? ts : 1, sizeof *doc->samps);
    if (!doc->anims || !doc->chans || !doc->samps)
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    doc->g.animation_count = n;
    size_t uc = 0, us = 0;
    char path[64];
    for (int i = 0; i < n && r == TB_OK; i++) {
        json_t *a = json_array_get(anims, (size_t)i);
        tb_gltf_animation *an = &doc->anims[i];
        tb__cat_index(path, sizeof path, "", "/animations/", i);
        if (!json_is_object(a))
            return tb__fail(c->err, TB_ERR_JSON_TYPE, path, "animation must be an object");
        json_t *name = json_object_get(a, "name");
        an->name = json_is_string(name) ? json_string_value(name) : NULL;
        json_t *sa = json_object_get(a, "samplers"), *ch = json_object_get(a, "channels");
        if (!json_is_array(sa) || !json_is_array(ch)) {
            snprintf(c->where, sizeof c->where, "%s/%s", path, json_is_array(sa) ? "channels" : "samplers");
            return tb__fail(c->err, json_object_get(a, json_is_array(sa) ? "channels" : "samplers") ? TB_ERR_JSON_TYPE : TB_ERR_MISSING_FIELD,
                            c->where, "must be an array");
        }
        an->samplers = doc->samps + us;
        an->sampler_count = (int)json_array_size(sa);
        an->channels = doc->chans + uc;
        an->channel_count = (int)json_array_size(ch);
        for (int k = 0; k < an->sampler_count && r == TB_OK; k++) {
            tb_gltf_sampler *s = &doc->samps[us++];
            json_t *so = json_array_get(sa, (size_t)k);
            char sp[96];
            tb__cat_index(sp, sizeof sp, path, "/samplers/", k);
            if (!json_is_object(so))
                return tb__fail(c->err, TB_ERR_JSON_TYPE, sp, "sampler must be an object");
            r = tb__parse_sampler(c, so, s, sp, an);
        }
        for (int k = 0; k < an->channel_count && r == TB_OK; k++) {
            tb_gltf_channel *cc = &doc->chans[uc++];
            json_t *co = json_array_get(ch, (size_t)k);
            char cp[96];
            tb__cat_index(cp, sizeof cp, path, "/channels/", k);
            if (!json_is_object(co))
                return tb__fail(c->err, TB_ERR_JSON_TYPE, cp, "channel must be an object");
            r = tb__parse_channel(c, co, cc, cp, an);
        }
    }
    return r;
}

static tb_result tb__check_skinned_prim(tb__ctx *c, const tb_gltf_node *nd, int k, const tb_gltf_primitive *p,
                                        int jc);

/* Skinned nodes: joint indices must address the skin; weights should sum to
 * 1 and never all be zero. Each (JOINTS_0, WEIGHTS_0, joint count) is
 * checked once: 20,000 primitives or 5,000 instances sharing one set of
 * accessors cost one decode, not 20,000. */
static tb_result tb__check_skinned(tb__ctx *c)
{
    tb_doc *doc = c->doc;
    int na = doc->g.accessor_count;
    int *seen_w = malloc(((size_t)na + 1) * sizeof *seen_w), *seen_jc = malloc(((size_t)na + 1) * sizeof *seen_jc);
    if (!seen_w || !seen_jc) {
        free(seen_w);
        free(seen_jc);
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    }
    for (int a = 0; a < na; a++)
        seen_w[a] = seen_jc[a] = -1;
    tb_result rr = TB_OK;
    for (int i = 0; i < doc->g.node_count && rr == TB_OK; i++) {
        const tb_gltf_node *nd = &doc->nodes[i];
        if (nd->mesh < 0)
            continue;
        const tb_gltf_mesh *m = &doc->meshes[nd->mesh];
        for (int k = 0; k < m->primitive_count && rr == TB_OK; k++) {
            const tb_gltf_primitive *p = &m->primitives[k];
            if (nd->skin < 0 || p->set_count == 0)
                continue;
            int jc = doc->skins[nd->skin].joint_count;
            int done = 1;
            for (int s = 0; s < p->set_count; s++)
                done &= seen_w[p->joints[s]] == p->weights[s] && seen_jc[p->joints[s]] == jc;
            if (done)
                continue;
            for (int s = 0; s < p->set_count; s++)
                seen_w[p->joints[s]] = p->weights[s], seen_jc[p->joints[s]] = jc;
            rr = tb__check_skinned_prim(c, nd, k, p, jc);
        }
    }
    free(seen_w);
    free(seen_jc);
    return rr;
}

static tb_result tb__check_skinned_prim(tb__ctx *c, const tb_gltf_node *nd, int k, const tb_gltf_primitive *p, int jc)
{
    tb_doc *doc = c->doc;
    size_t vc = doc->accessors[p->joints[0]].count;
    uint32_t *j = malloc(vc * 4 * sizeof *j);
    float *w = malloc(vc * 4 * sizeof *w);
    float *sum = calloc(vc, sizeof *sum);
    if (!j || !w || !sum) {
        free(j);
        free(w);
        free(sum);
        return tb__fail(c->err, TB_ERR_OOM, NULL, NULL);
    }
    tb_result r = TB_OK;
    for (int s = 0; s < p->set_count && r == TB_OK; s++) {
        r = tb_accessor_read_uints(doc, p->joints[s], j, vc * 4, c->err);
        if (r == TB_OK)
            r = tb_accessor_read_floats(doc, p->weights[s], w, vc * 4, c->err);
        if (r != TB_OK)
            break;
        /* the common case first: no weight negative, no joint past the
         * skin (one pass without branches), then the sums in the order the
         * checking loop adds them; no exit inside either loop, so the
         * compiler runs them in vector lanes */
        int bad = 0;
        for (size_t q = 0; q < vc * 4; q++)
            bad |= (w[q] < 0) | ((w[q] > 0) & (j[q] >= (uint32_t)jc));
        if (!bad) {
            for (size_t v = 0; v < vc; v++)
                sum[v] = sum[v] + w[4 * v] + w[4 * v + 1] + w[4 * v + 2] + w[4 * v + 3];
            continue;
        }
        for (size_t q = 0; r == TB_OK && q < vc * 4; q++) {
            if (w[q] < 0) {
                snprintf(c->where, sizeof c->where, "/accessors/%d", p->weights[s]);
                r = tb__fail(c->err, TB_ERR_INVALID, c->where, "negative weight at vertex %zu", q / 4);
            } else if (w[q] > 0 && j[q] >= (uint32_t)jc) {
                snprintf(c->where, sizeof c->where, "/accessors/%d", p->joints[s]);
                r = tb__fail(c->err, TB_ERR_INDEX, c->where,
                             "vertex %zu uses joint %u but skin %d has %d joints", q / 4, j[q], nd->skin, jc);
            }
            sum[q / 4] += w[q];
        }
    }
    size_t off = 0, zero = 0;
    if (r == TB_OK)
        for (size_t q = 0; q < vc; q++) {
            off += fabsf(sum[q] - 1.0f) > 2e-3f;
            zero += sum[q] == 0;
        }
    if (r == TB_OK && zero)
        tb__warn(doc, "/meshes/%d/primitives/%d: %zu of %zu vertices have all-zero weights (no joint moves "
                      "them: they stay at the origin or vanish when skinned)",
                 nd->mesh, k, zero, vc);
    if (r == TB_OK && off > zero)
        tb__warn(doc, "/meshes/%d/primitives/%d: %zu of %zu vertices have weights that do not sum to 1",
                 nd->mesh, k, off - zero, vc);
    free(j);
    free(w);
    free(sum);
    return r;
}

static tb_result tb__doc_parse_with(tb_doc *doc, int check_skinned, tb_error *err)
{
    tb__doc_clear_view(doc);
    /* a re-parse (tb_doc_refresh) re-finds the view's warnings: keep one copy */
    while (doc->warning_count > doc->container_warnings)
        free(doc->warnings[--doc->warning_count]);
    tb__ctx c = {doc, err, {0}};
    json_t *root = doc->root;
    tb_result r = TB_OK;
    json_t *mats = tb__array(&c, root, "materials", &r);
    doc->g.material_count = (int)json_array_size(mats);
    json_t *meshes = tb__array(&c, root, "meshes", &r), *skins = tb__array(&c, root, "skins", &r);
    if (r == TB_OK)
        r = tb__parse_views(&c, root);
    if (r == TB_OK)
        r = tb__parse_accessors(&c, root);
    if (r == TB_OK)
        r = tb__parse_nodes(&c, root, (int)json_array_size(meshes), (int)json_array_size(skins));
    if (r == TB_OK)
        r = tb__parse_skins(&c, root);
    if (r == TB_OK)
        r = tb__parse_meshes(&c, root);
    if (r == TB_OK)
        r = tb__parse_animations(&c, root);
    /* where the check's warnings begin; -1 when it did not run, or failed:
     * a kept refresh then parses in full */
    doc->skinned_from = r == TB_OK ? doc->warning_count : -1;
    if (r == TB_OK && check_skinned && (r = tb__check_skinned(&c)) != TB_OK)
        doc->skinned_from = -1;
    doc->g.accessors = doc->accessors;
    doc->g.nodes = doc->nodes;
    doc->g.skins = doc->skins;
    doc->g.meshes = doc->meshes;
    doc->g.animations = doc->anims;
    return r;
}

tb_result tb__doc_parse(tb_doc *doc, tb_error *err)
{
    return tb__doc_parse_with(doc, 1, err);
}

tb_result tb_doc_refresh(tb_doc *doc, tb_error *err)
{
    return tb__doc_parse(doc, err);
}

tb_result tb__doc_refresh_kept(tb_doc *doc, tb_error *err)
{
    const int from = doc->skinned_from, n = doc->warning_count - from;
    if (from < doc->container_warnings || n < 0)
        return tb__doc_parse(doc, err);
    char **kept = n ? malloc((size_t)n * sizeof *kept) : NULL;
    if (n && !kept)
        return tb__doc_parse(doc, err);
    if (n)
        memcpy(kept, doc->warnings + from, (size_t)n * sizeof *kept);
    doc->warning_count = from; /* the check's, taken out of the list the parse clears */
    tb_result r = tb__doc_parse_with(doc, 0, err);
    for (int i = 0; i < n; i++) { /* put back after the parse's own (the check comes last) */
        if (r == TB_OK)
            tb__warn_keep(doc, kept[i]);
        else
            free(kept[i]);
    }
    free(kept);
    return r;
}
