/* Compressed geometry in, plain glTF out: EXT_meshopt_compression and
 * KHR_meshopt_compression bufferViews (libmeshoptimizer) and KHR_draco_mesh_compression primitives (libdraco,
 * through the C++ shim draco_shim.cc). Each decoder is compiled in only when
 * CMake found its library (TB_HAVE_MESHOPT, TB_HAVE_DRACO); without it the
 * loader refuses the extension as before.
 *
 * Runs in the loader after the buffers are merged into doc->bin and before
 * the view is parsed: decoded bytes replace the compressed ones, the
 * extension is removed from the bufferViews/primitives and from
 * extensionsUsed/extensionsRequired, the BIN is repacked so that no
 * compressed byte is written back, and a warning says what was decoded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gltf/decompress_internal.h"

#ifdef TB_HAVE_MESHOPT
#include <meshoptimizer.h>
#endif

#define TB__MESHOPT "EXT_meshopt_compression"
#define TB__KHR_MESHOPT "KHR_meshopt_compression"
#define TB__DRACO "KHR_draco_mesh_compression"

int tb_can_decode(const char *extension)
{
    if (!extension)
        return 0;
#ifdef TB_HAVE_MESHOPT
    if (!strcmp(extension, TB__MESHOPT) || !strcmp(extension, TB__KHR_MESHOPT))
        return 1;
#endif
#ifdef TB_HAVE_DRACO
    if (!strcmp(extension, TB__DRACO))
        return 1;
#endif
    return 0;
}

static json_int_t tb__int(json_t *o, const char *key, json_int_t def)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

/* Removes name from the string array at root[key]; drops an emptied array. */
static void tb__drop_ext_name(json_t *root, const char *key, const char *name)
{
    json_t *arr = json_object_get(root, key);
    if (!json_is_array(arr))
        return;
    for (size_t i = json_array_size(arr); i-- > 0;) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (s && !strcmp(s, name))
            json_array_remove(arr, i);
    }
    if (json_array_size(arr) == 0)
        json_object_del(root, key);
}

static void tb__drop_ext(json_t *obj, const char *name)
{
    json_t *ext = json_object_get(obj, "extensions");
    if (!json_is_object(ext))
        return;
    json_object_del(ext, name);
    if (json_object_size(ext) == 0)
        json_object_del(obj, "extensions");
}

/* [off, off+len) lies inside the BIN */
static int tb__in_bin(const tb_doc *doc, json_int_t off, json_int_t len)
{
    return off >= 0 && len >= 0 && (size_t)off <= doc->bin_size && (size_t)len <= doc->bin_size - (size_t)off;
}

int tb__meshopt_fallback(json_t *buffer)
{
    json_t *ext = json_object_get(buffer, "extensions");
    return tb_can_decode(TB__MESHOPT) && (json_is_true(json_object_get(json_object_get(ext, TB__MESHOPT), "fallback")) ||
                                          json_is_true(json_object_get(json_object_get(ext, TB__KHR_MESHOPT), "fallback")));
}

const char *tb__meshopt_name(json_t *view)
{
    json_t *ext = json_object_get(view, "extensions");
    if (json_is_object(json_object_get(ext, TB__MESHOPT)))
        return TB__MESHOPT;
    if (json_is_object(json_object_get(ext, TB__KHR_MESHOPT)))
        return TB__KHR_MESHOPT;
    return NULL;
}

/* n elements of s bytes decoded from src (src_len bytes) into dst by mode
 * (ATTRIBUTES, TRIANGLES, INDICES), then filter. 0, or -1 (err set). */
static int tb__meshopt_decode(uint8_t *dst, const unsigned char *src, size_t n, size_t s, size_t src_len,
                              const char *mode, const char *filter, int khr, const char *where, tb_error *err)
{
    int rc = -2;
#ifdef TB_HAVE_MESHOPT
    if (!strcmp(mode, "ATTRIBUTES")) {
        if (s % 4)
            goto bad_stride;
        rc = meshopt_decodeVertexBuffer(dst, n, s, src, src_len);
        if (rc != 0 && khr && src_len > 0 && src[0] == 0xa1) {
            tb__fail(err, TB_ERR_UNSUPPORTED, where, "attribute data in the v1 bitstream (header 0xa1), which "
                     "libmeshoptimizer %d.%d of this build cannot decode (it reads v0, header 0xa0)",
                     MESHOPTIMIZER_VERSION / 100, MESHOPTIMIZER_VERSION % 100 / 10);
            return -1;
        }
    } else if (!strcmp(mode, "TRIANGLES") || !strcmp(mode, "INDICES")) {
        if (s != 2 && s != 4)
            goto bad_stride;
        if (!strcmp(mode, "TRIANGLES")) {
            if (n % 3) {
                tb__fail(err, TB_ERR_INVALID, where, "TRIANGLES count %zu is not a multiple of 3", n);
                return -1;
            }
            rc = meshopt_decodeIndexBuffer(dst, n, s, src, src_len);
        } else {
            rc = meshopt_decodeIndexSequence(dst, n, s, src, src_len);
        }
    } else {
        tb__fail(err, TB_ERR_INVALID, where, "unknown mode %.40s (ATTRIBUTES, TRIANGLES or INDICES)", mode);
        return -1;
    }
    if (rc != 0) {
        tb__fail(err, TB_ERR_INVALID, where, "meshopt %s data does not decode (error %d): corrupt or a newer "
                 "codec version", mode, rc);
        return -1;
    }
    if (!strcmp(filter, "OCTAHEDRAL")) {
        if (s != 4 && s != 8)
            goto bad_filter;
        meshopt_decodeFilterOct(dst, n, s);
    } else if (!strcmp(filter, "QUATERNION")) {
        if (s != 8)
            goto bad_filter;
        meshopt_decodeFilterQuat(dst, n, s);
    } else if (!strcmp(filter, "EXPONENTIAL")) {
        if (s % 4)
            goto bad_filter;
        meshopt_decodeFilterExp(dst, n, s);
    } else if (khr && !strcmp(filter, "COLOR")) {
        tb__fail(err, TB_ERR_UNSUPPORTED, where, "the COLOR filter is not decoded by this tailbone");
        return -1;
    } else if (strcmp(filter, "NONE") != 0) {
        tb__fail(err, TB_ERR_INVALID, where, "unknown filter %.40s", filter);
        return -1;
    }
#endif
    (void)src;
    (void)dst;
    (void)n;
    (void)s;
    (void)src_len;
    (void)mode;
    (void)filter;
    (void)khr;
    (void)where;
    (void)err;
    return rc != 0 ? -1 : 0;
#ifdef TB_HAVE_MESHOPT
bad_stride:
    tb__fail(err, TB_ERR_INVALID, where, "byteStride %zu is not allowed for mode %s", s, mode);
    return -1;
bad_filter:
    tb__fail(err, TB_ERR_INVALID, where, "byteStride %zu is not allowed for filter %s", s, filter);
    return -1;
#endif
}

/* One compressed bufferView v (its extension e): checked against the
 * buffer and decoded into its own bytes. 0, or -1 (err set). */
static int tb__meshopt_view(tb_doc *doc, json_t *v, json_t *e, const char *name, const char *where, tb_error *err)
{
    int khr = !strcmp(name, TB__KHR_MESHOPT);
    if (khr && json_object_get(json_object_get(v, "extensions"), TB__MESHOPT)) {
        tb__fail(err, TB_ERR_INVALID, where, "a bufferView must not use both " TB__MESHOPT " and " TB__KHR_MESHOPT);
        return -1;
    }
    if (!tb_can_decode(name)) {
        tb__fail(err, TB_ERR_UNSUPPORTED, where, "this tailbone was built without libmeshoptimizer");
        return -1;
    }
    json_int_t src_off = tb__int(e, "byteOffset", 0), src_len = tb__int(e, "byteLength", -1);
    json_int_t stride = tb__int(e, "byteStride", -1), count = tb__int(e, "count", -1);
    json_int_t dst_off = tb__int(v, "byteOffset", 0), dst_len = tb__int(v, "byteLength", -1);
    const char *mode = json_string_value(json_object_get(e, "mode"));
    const char *filter = json_string_value(json_object_get(e, "filter"));
    if (!filter)
        filter = "NONE";
    if (tb__int(e, "buffer", -1) != 0 || tb__int(v, "buffer", -1) != 0) {
        tb__fail(err, TB_ERR_INVALID, where, "buffer must name an existing buffer");
        return -1;
    }
    if (!mode || stride < 1 || stride > 256 || count < 0 || src_len < 0 || dst_len < 0) {
        tb__fail(err, TB_ERR_INVALID, where, "needs mode, byteLength, byteStride (1..256) and count");
        return -1;
    }
    if (!tb__in_bin(doc, src_off, src_len)) {
        tb__fail(err, TB_ERR_BOUNDS, where, "compressed bytes %lld..%lld lie outside the buffer (%zu bytes)",
                 (long long)src_off, (long long)(src_off + src_len), doc->bin_size);
        return -1;
    }
    if ((unsigned long long)count > (unsigned long long)dst_len / (unsigned long long)stride ||
        !tb__in_bin(doc, dst_off, dst_len)) {
        tb__fail(err, TB_ERR_BOUNDS, where, "%lld elements of %lld bytes do not fit the bufferView (%lld bytes)",
                 (long long)count, (long long)stride, (long long)dst_len);
        return -1;
    }
    if (src_off < dst_off + count * stride && dst_off < src_off + src_len) {
        tb__fail(err, TB_ERR_INVALID, where, "the compressed bytes overlap the bufferView they decode into");
        return -1;
    }
    return tb__meshopt_decode(doc->bin + dst_off, doc->bin + src_off, (size_t)count, (size_t)stride, (size_t)src_len,
                              mode, filter, khr, where, err);
}

/* EXT_meshopt_compression, and KHR_meshopt_compression (the same JSON; its
 * attribute bitstream may also be the newer v1 format and its filters
 * include COLOR): every bufferView carrying `name` is decoded into its own
 * (fallback) bytes. Returns the number decoded, or -1 (err set). */
static int tb__meshopt(tb_doc *doc, const char *name, tb_error *err)
{
    json_t *views = json_object_get(doc->root, "bufferViews");
    int decoded = 0;
    char where[96];
    for (size_t i = 0; i < json_array_size(views); i++) {
        json_t *v = json_array_get(views, i);
        json_t *e = json_object_get(json_object_get(v, "extensions"), name);
        if (!json_is_object(e))
            continue;
        snprintf(where, sizeof where, "/bufferViews/%zu/extensions/%s", i, name);
        if (tb__meshopt_view(doc, v, e, name, where, err) != 0)
            return -1;
        tb__drop_ext(v, name);
        decoded++;
    }
    json_t *buffers = json_object_get(doc->root, "buffers");
    for (size_t i = 0; i < json_array_size(buffers); i++)
        tb__drop_ext(json_array_get(buffers, i), name);
    return decoded;
}

#ifdef TB_HAVE_DRACO
static int tb__components(const char *type)
{
    return type ? tb__type_components(type) : 0;
}

static double tb__component(const uint8_t *p, int ct)
{
    switch (ct) {
    case TB_COMPONENT_BYTE: return *(const int8_t *)p;
    case TB_COMPONENT_UNSIGNED_BYTE: return *p;
    case TB_COMPONENT_SHORT: { int16_t v; memcpy(&v, p, 2); return v; }
    case TB_COMPONENT_UNSIGNED_SHORT: { uint16_t v; memcpy(&v, p, 2); return v; }
    case TB_COMPONENT_UNSIGNED_INT: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { float v; memcpy(&v, p, 4); return v; }
    }
}

/* Draco is lossy (quantized): min/max are those of the decoded values. */
static void tb__set_minmax(json_t *acc, const uint8_t *data, size_t count, size_t stride, int ct, int comps)
{
    if (!json_object_get(acc, "min") && !json_object_get(acc, "max"))
        return;
    json_t *mn = json_array(), *mx = json_array();
    size_t cs = tb__component_size(ct);
    for (int k = 0; k < comps; k++) {
        double lo = 0, hi = 0;
        for (size_t i = 0; i < count; i++) {
            double v = tb__component(data + i * stride + (size_t)k * cs, ct);
            if (i == 0 || v < lo)
                lo = v;
            if (i == 0 || v > hi)
                hi = v;
        }
        json_array_append_new(mn, ct == TB_COMPONENT_FLOAT ? json_real(lo) : json_integer((json_int_t)lo));
        json_array_append_new(mx, ct == TB_COMPONENT_FLOAT ? json_real(hi) : json_integer((json_int_t)hi));
    }
    json_object_set_new(acc, "min", mn);
    json_object_set_new(acc, "max", mx);
}

/* One Draco attribute (its id in the mesh) decoded into a new bufferView,
 * accessor ai pointed at it (min/max those of the decoded values). */
static tb_result tb__draco_attribute_view(tb_doc *doc, tb__draco_mesh *mesh, json_t *id, json_int_t ai, json_t *acc,
                                          size_t points, unsigned char *used, const char *w, tb_error *err)
{
    char msg[256];
    if (!json_is_integer(id) || ai < 0 || !json_is_object(acc))
        return tb__fail(err, TB_ERR_INVALID, w, "names no attribute of the primitive");
    if (used[ai])
        return tb__fail(err, TB_ERR_UNSUPPORTED, w, "accessor %lld is shared by two Draco primitives", (long long)ai);
    int ct = (int)tb__int(acc, "componentType", 0);
    int comps = tb__components(json_string_value(json_object_get(acc, "type")));
    size_t cs = tb__component_size(ct);
    if (!comps || !cs)
        return tb__fail(err, TB_ERR_INVALID, w, "accessor %lld has no valid type and componentType", (long long)ai);
    if ((size_t)tb__int(acc, "count", -1) != points)
        return tb__fail(err, TB_ERR_INVALID, w, "accessor %lld says %lld elements; the Draco mesh has %zu points",
                        (long long)ai, (long long)tb__int(acc, "count", -1), points);
    size_t elem = (size_t)comps * cs, stride = (elem + 3) & ~(size_t)3; /* vertex attributes: 4-aligned */
    uint8_t *data = calloc(points ? points : 1, stride);
    if (!data)
        return tb__fail(err, TB_ERR_OOM, w, NULL);
    if (!tb__draco_attribute(mesh, (int)json_integer_value(id), ct, comps, stride, data, msg, sizeof msg)) {
        free(data);
        return tb__fail(err, TB_ERR_INVALID, w, "%s", msg);
    }
    tb__set_minmax(acc, data, points, stride, ct, comps);
    int nv = tb_doc_add_buffer_view(doc, data, points * stride, stride != elem ? stride : 0, 34962);
    free(data);
    if (nv < 0)
        return tb__fail(err, TB_ERR_OOM, w, NULL);
    json_object_set_new(acc, "bufferView", json_integer(nv));
    json_object_del(acc, "byteOffset");
    used[ai] = 1;
    return TB_OK;
}

/* The Draco mesh's indices decoded into a new bufferView, index accessor
 * ii pointed at it. */
static tb_result tb__draco_index_view(tb_doc *doc, tb__draco_mesh *mesh, json_int_t ii, json_t *iacc, size_t points,
                                      unsigned char *used, const char *w, tb_error *err)
{
    char msg[256];
    tb_result r = TB_OK;
    int ct = (int)tb__int(iacc, "componentType", 0);
    size_t cs = tb__component_size(ct), n = tb__draco_index_count(mesh);
    if (used[ii])
        return tb__fail(err, TB_ERR_UNSUPPORTED, w, "accessor %lld is shared by two Draco primitives", (long long)ii);
    if (ct != TB_COMPONENT_UNSIGNED_BYTE && ct != TB_COMPONENT_UNSIGNED_SHORT && ct != TB_COMPONENT_UNSIGNED_INT)
        return tb__fail(err, TB_ERR_INVALID, w, "index accessor %lld has componentType %d", (long long)ii, ct);
    if ((size_t)tb__int(iacc, "count", -1) != n)
        return tb__fail(err, TB_ERR_INVALID, w, "accessor %lld says %lld indices; the Draco mesh has %zu",
                        (long long)ii, (long long)tb__int(iacc, "count", -1), n);
    uint8_t *data = malloc(n ? n * cs : 1);
    if (!data || !tb__draco_indices(mesh, ct, data, points, msg, sizeof msg)) {
        r = data ? tb__fail(err, TB_ERR_INVALID, w, "%s", msg) : tb__fail(err, TB_ERR_OOM, w, NULL);
    } else {
        int nv = tb_doc_add_buffer_view(doc, data, n * cs, 0, 34963);
        if (nv < 0) {
            r = tb__fail(err, TB_ERR_OOM, w, NULL);
        } else {
            json_object_set_new(iacc, "bufferView", json_integer(nv));
            json_object_del(iacc, "byteOffset");
            used[ii] = 1;
        }
    }
    free(data);
    return r;
}

/* One primitive's KHR_draco_mesh_compression: its attributes and indices
 * decoded into new bufferViews, its accessors pointed at them. */
static tb_result tb__draco_primitive(tb_doc *doc, json_t *prim, json_t *e, const char *where, unsigned char *used,
                                     size_t accessor_count, tb_error *err)
{
    json_t *accessors = json_object_get(doc->root, "accessors");
    json_t *views = json_object_get(doc->root, "bufferViews");
    json_int_t bv = tb__int(e, "bufferView", -1);
    json_t *view = json_array_get(views, (size_t)bv);
    char w[160];
    if (bv < 0 || !json_is_object(view) || tb__int(view, "buffer", -1) != 0)
        return tb__fail(err, TB_ERR_INVALID, where, "bufferView must name an existing bufferView of an existing buffer");
    json_int_t off = tb__int(view, "byteOffset", 0), len = tb__int(view, "byteLength", -1);
    if (!tb__in_bin(doc, off, len))
        return tb__fail(err, TB_ERR_BOUNDS, where, "bufferView %lld lies outside the buffer", (long long)bv);
    json_t *attrs = json_object_get(prim, "attributes"), *dattrs = json_object_get(e, "attributes");
    if (!json_is_object(attrs) || !json_is_object(dattrs))
        return tb__fail(err, TB_ERR_INVALID, where, "the primitive and its extension need attributes");
    /* a primitive that still has its uncompressed data: use that */
    int fallback = 1;
    const char *name;
    json_t *id;
    json_object_foreach(dattrs, name, id) {
        json_t *acc = json_array_get(accessors, (size_t)tb__int(attrs, name, -1));
        fallback &= json_object_get(acc, "bufferView") != NULL;
    }
    if (fallback)
        return TB_OK;
    char msg[256];
    tb__draco_mesh *mesh = tb__draco_decode(doc->bin + off, (size_t)len, msg, sizeof msg);
    if (!mesh)
        return tb__fail(err, TB_ERR_INVALID, where, "Draco data does not decode: %s", msg);
    tb_result r = TB_OK;
    size_t points = tb__draco_point_count(mesh);
    json_object_foreach(dattrs, name, id) {
        snprintf(w, sizeof w, "%s/attributes/%s", where, name);
        json_int_t ai = tb__int(attrs, name, -1);
        r = tb__draco_attribute_view(doc, mesh, id, ai, json_array_get(accessors, (size_t)ai), points, used, w, err);
        if (r != TB_OK)
            break;
    }
    json_int_t ii = tb__int(prim, "indices", -1);
    if (r == TB_OK && ii >= 0 && (size_t)ii < accessor_count) {
        snprintf(w, sizeof w, "%s (indices)", where);
        r = tb__draco_index_view(doc, mesh, ii, json_array_get(accessors, (size_t)ii), points, used, w, err);
    }
    tb__draco_free(mesh);
    return r;
}
#endif

/* Visits the integer members named "bufferView" anywhere under node (the
 * core schema's accessors, sparse parts and images, and extensions) that
 * index one of n views: counts them in refs[] when map is NULL, else sets
 * each to map[its index]. */
static void tb__view_refs(json_t *node, size_t *refs, const json_int_t *map, size_t n)
{
    if (json_is_object(node)) {
        const char *key;
        json_t *v;
        json_object_foreach(node, key, v) {
            if (!strcmp(key, "bufferView") && json_is_integer(v)) {
                json_int_t i = json_integer_value(v);
                if (i >= 0 && (size_t)i < n) {
                    if (map)
                        json_integer_set(v, map[i]);
                    else
                        refs[i]++;
                }
            } else {
                tb__view_refs(v, refs, map, n);
            }
        }
    } else if (json_is_array(node)) {
        for (size_t i = 0; i < json_array_size(node); i++)
            tb__view_refs(json_array_get(node, i), refs, map, n);
    }
}

/* Removes the bufferViews marked in drop[] that nothing references any more
 * (the Draco bitstreams once decoded) and renumbers the references to the
 * others; their bytes then go with the repack. */
static tb_result tb__drop_views(tb_doc *doc, const unsigned char *drop, tb_error *err)
{
    json_t *views = json_object_get(doc->root, "bufferViews");
    size_t n = json_array_size(views);
    size_t *refs = calloc(n + 1, sizeof *refs);
    json_int_t *map = calloc(n + 1, sizeof *map);
    if (!refs || !map) {
        free(refs);
        free(map);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    tb__view_refs(doc->root, refs, NULL, n);
    json_int_t next = 0;
    int dropped = 0;
    for (size_t i = 0; i < n; i++) {
        if (drop[i] && !refs[i]) {
            map[i] = -1;
            dropped = 1;
        } else {
            map[i] = next++;
        }
    }
    if (dropped) {
        for (size_t i = n; i-- > 0;)
            if (map[i] < 0)
                json_array_remove(views, i);
        tb__view_refs(doc->root, NULL, map, n);
    }
    free(refs);
    free(map);
    return TB_OK;
}

/* KHR_draco_mesh_compression on every primitive. Returns the number decoded
 * or -1 (err set). */
static int tb__draco(tb_doc *doc, tb_error *err)
{
    json_t *meshes = json_object_get(doc->root, "meshes");
    size_t na = json_array_size(json_object_get(doc->root, "accessors"));
    size_t nv = json_array_size(json_object_get(doc->root, "bufferViews"));
    unsigned char *used = calloc(na + 1, 1), *bitstream = calloc(nv + 1, 1);
    int decoded = 0;
    char where[128];
    if (!used || !bitstream) {
        free(used);
        free(bitstream);
        tb__fail(err, TB_ERR_OOM, NULL, NULL);
        return -1;
    }
    for (size_t m = 0; m < json_array_size(meshes); m++) {
        json_t *prims = json_object_get(json_array_get(meshes, m), "primitives");
        for (size_t p = 0; p < json_array_size(prims); p++) {
            json_t *prim = json_array_get(prims, p);
            json_t *e = json_object_get(json_object_get(prim, "extensions"), TB__DRACO);
            if (!json_is_object(e))
                continue;
            snprintf(where, sizeof where, "/meshes/%zu/primitives/%zu/extensions/" TB__DRACO, m, p);
#ifdef TB_HAVE_DRACO
            if (tb__draco_primitive(doc, prim, e, where, used, na, err) != TB_OK) {
                free(used);
                free(bitstream);
                return -1;
            }
#else
            free(used);
            free(bitstream);
            tb__fail(err, TB_ERR_UNSUPPORTED, where, "this tailbone was built without libdraco");
            return -1;
#endif
            json_int_t bv = tb__int(e, "bufferView", -1);
            if (bv >= 0 && (size_t)bv < nv)
                bitstream[bv] = 1;
            tb__drop_ext(prim, TB__DRACO);
            decoded++;
        }
    }
    free(used);
    if (decoded && tb__drop_views(doc, bitstream, err) != TB_OK)
        decoded = -1;
    free(bitstream);
    return decoded;
}

/* Rewrites the BIN as the bufferViews' bytes one after the other (16-byte
 * aligned), so bytes no bufferView uses any more (compressed data) are not
 * written. */
static tb_result tb__repack(tb_doc *doc, tb_error *err)
{
    json_t *views = json_object_get(doc->root, "bufferViews");
    size_t n = json_array_size(views), size = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(views, i);
        json_int_t off = tb__int(v, "byteOffset", 0), len = tb__int(v, "byteLength", -1);
        if (tb__int(v, "buffer", -1) != 0 || !tb__in_bin(doc, off, len))
            return TB_OK; /* leave it to the parser, which says where */
        size = ((size + 15) & ~(size_t)15) + (size_t)len;
    }
    uint8_t *bin = malloc(size ? size : 1);
    if (!bin)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(views, i);
        size_t off = (size_t)tb__int(v, "byteOffset", 0), len = (size_t)tb__int(v, "byteLength", 0);
        size_t start = (at + 15) & ~(size_t)15;
        memset(bin + at, 0, start - at);
        memcpy(bin + start, doc->bin + off, len);
        at = start + len;
        if (start)
            json_object_set_new(v, "byteOffset", json_integer((json_int_t)start));
        else
            json_object_del(v, "byteOffset");
    }
    free(doc->bin);
    doc->bin = bin;
    doc->bin_size = doc->bin_cap = at;
    json_t *b0 = json_array_get(json_object_get(doc->root, "buffers"), 0);
    if (json_is_object(b0)) {
        if (at)
            json_object_set_new(b0, "byteLength", json_integer((json_int_t)at));
        else
            json_object_set_new(b0, "byteLength", json_integer(1)); /* byteLength >= 1 */
    }
    return TB_OK;
}

tb_result tb__decompress(tb_doc *doc, tb_error *err)
{
    int meshopt = tb__meshopt(doc, TB__MESHOPT, err);
    if (meshopt < 0)
        return err ? err->code : TB_ERR_INVALID;
    int khr_meshopt = tb__meshopt(doc, TB__KHR_MESHOPT, err);
    if (khr_meshopt < 0)
        return err ? err->code : TB_ERR_INVALID;
    int draco = tb__draco(doc, err);
    if (draco < 0)
        return err ? err->code : TB_ERR_INVALID;
    /* a decodable extension is no longer used once decoded (or when nothing used it) */
    static const char *const names[] = {TB__MESHOPT, TB__KHR_MESHOPT, TB__DRACO};
    for (int k = 0; k < 3; k++)
        if (tb_can_decode(names[k])) {
            tb__drop_ext_name(doc->root, "extensionsUsed", names[k]);
            tb__drop_ext_name(doc->root, "extensionsRequired", names[k]);
        }
    if (!meshopt && !khr_meshopt && !draco)
        return TB_OK;
    if (meshopt)
        tb__warn(doc, "decoded " TB__MESHOPT " (%d bufferView(s)); the output is written uncompressed", meshopt);
    if (khr_meshopt)
        tb__warn(doc, "decoded " TB__KHR_MESHOPT " (%d bufferView(s)); the output is written uncompressed",
                 khr_meshopt);
    if (draco)
        tb__warn(doc, "decoded " TB__DRACO " (%d primitive(s)); the output is written uncompressed", draco);
    return tb__repack(doc, err);
}
