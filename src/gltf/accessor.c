/* Accessor decoding (strided, normalised, sparse) and appending new data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gltf/doc_internal.h"

static double tb__read_component(const uint8_t *p, int ct, int normalized)
{
    switch (ct) {
    case TB_COMPONENT_BYTE: {
        int8_t v;
        memcpy(&v, p, 1);
        return normalized ? fmax(v / 127.0, -1.0) : v;
    }
    case TB_COMPONENT_UNSIGNED_BYTE:
        return normalized ? p[0] / 255.0 : p[0];
    case TB_COMPONENT_SHORT: {
        int16_t v;
        memcpy(&v, p, 2);
        return normalized ? fmax(v / 32767.0, -1.0) : v;
    }
    case TB_COMPONENT_UNSIGNED_SHORT: {
        uint16_t v;
        memcpy(&v, p, 2);
        return normalized ? v / 65535.0 : v;
    }
    case TB_COMPONENT_UNSIGNED_INT: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case TB_COMPONENT_FLOAT: {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    }
    return 0;
}

/* Element size. MAT2/MAT3 columns of 1- or 2-byte components start on
 * 4-byte boundaries (glTF 3.6.2.4): col_rows/col_stride describe that. */
static size_t tb__elem_bytes(const json_t *acc_json, const tb_gltf_accessor *a, int *col_rows,
                             size_t *col_stride)
{
    size_t cs = tb__component_size(a->component_type);
    const char *type = json_string_value(json_object_get(acc_json, "type"));
    *col_rows = 0;
    *col_stride = 0;
    if (type && !strcmp(type, "MAT2") && cs == 1) {
        *col_rows = 2;
        *col_stride = 4;
        return 8;
    }
    if (type && !strcmp(type, "MAT3") && cs < 4) {
        *col_rows = 3;
        *col_stride = cs == 1 ? 4 : 8;
        return *col_stride * 3;
    }
    return cs * (size_t)a->components;
}

typedef void (*tb__sink)(void *dst, size_t i, double v);
static void tb__sink_f(void *dst, size_t i, double v) { ((float *)dst)[i] = (float)v; }
static void tb__sink_u(void *dst, size_t i, double v) { ((uint32_t *)dst)[i] = (uint32_t)v; }

/* count rows of row bytes, stride bytes apart in src, packed into dst: one
 * copy when they are packed already. */
static void tb__copy_rows(void *dst, const uint8_t *src, size_t count, size_t row, size_t stride)
{
    if (stride == row) {
        memcpy(dst, src, count * row);
        return;
    }
    for (size_t e = 0; e < count; e++)
        memcpy((uint8_t *)dst + e * row, src + e * stride, row);
}

/* count elements of nc unsigned components of type ct (byte, short or int),
 * stride bytes apart, widened to uint32 (the component type chosen once,
 * not per value). */
static void tb__widen_uints(uint32_t *out, const uint8_t *base, size_t count, size_t nc, size_t stride, int ct)
{
    if (ct == TB_COMPONENT_UNSIGNED_INT) {
        tb__copy_rows(out, base, count, nc * 4, stride);
    } else if (stride == nc * (ct == TB_COMPONENT_UNSIGNED_SHORT ? 2 : 1)) {
        /* packed (indices, JOINTS_n): one flat loop the compiler widens
         * many values a step */
        const size_t n = count * nc;
        if (ct == TB_COMPONENT_UNSIGNED_SHORT) {
            for (size_t i = 0; i < n; i++) {
                uint16_t x;
                memcpy(&x, base + i * 2, 2);
                out[i] = x;
            }
        } else {
            for (size_t i = 0; i < n; i++)
                out[i] = base[i];
        }
    } else if (ct == TB_COMPONENT_UNSIGNED_SHORT) {
        for (size_t e = 0; e < count; e++)
            for (size_t k = 0; k < nc; k++) {
                uint16_t x;
                memcpy(&x, base + e * stride + k * 2, 2);
                out[e * nc + k] = x;
            }
    } else {
        for (size_t e = 0; e < count; e++)
            for (size_t k = 0; k < nc; k++)
                out[e * nc + k] = base[e * stride + k];
    }
}

static tb_result tb__read(const tb_doc *doc, int accessor, void *dst, size_t dst_len,
                          tb__sink sink, tb_error *err)
{
    if (!doc || accessor < 0 || accessor >= doc->g.accessor_count)
        return tb__fail(err, TB_ERR_ARG, NULL, "accessor %d out of range", accessor);
    const tb_gltf_accessor *a = &doc->accessors[accessor];
    size_t nvals = a->count * (size_t)a->components;
    if (dst_len < nvals)
        return tb__fail(err, TB_ERR_ARG, NULL, "destination holds %zu values, accessor %d has %zu", dst_len,
                        accessor, nvals);
    json_t *aj = json_array_get(json_object_get(doc->root, "accessors"), (size_t)accessor);
    int col_rows;
    size_t col_stride;
    size_t elem = tb__elem_bytes(aj, a, &col_rows, &col_stride);
    size_t cs = tb__component_size(a->component_type);
    if (a->buffer_view < 0) {
        for (size_t i = 0; i < nvals; i++)
            sink(dst, i, 0.0);
    } else {
        const tb__view *v = &doc->views[a->buffer_view];
        size_t stride = v->stride ? v->stride : elem;
        const uint8_t *base = doc->bin + v->offset + a->byte_offset;
        size_t nc = (size_t)a->components;
        int ct = a->component_type;
        /* the common layouts, values as the general loop below gives them */
        if (!col_rows && sink == tb__sink_f && ct == TB_COMPONENT_FLOAT) {
            tb__copy_rows(dst, base, a->count, nc * sizeof(float), stride);
            nvals = 0;
        } else if (!col_rows && sink == tb__sink_u && !a->normalized &&
                   (ct == TB_COMPONENT_UNSIGNED_BYTE || ct == TB_COMPONENT_UNSIGNED_SHORT ||
                    ct == TB_COMPONENT_UNSIGNED_INT)) {
            tb__widen_uints(dst, base, a->count, nc, stride, ct);
            nvals = 0;
        }
        for (size_t e = 0; nvals && e < a->count; e++) {
            const uint8_t *p = base + e * stride;
            for (int k = 0; k < a->components; k++) {
                size_t off = col_rows ? (size_t)(k / col_rows) * col_stride + (size_t)(k % col_rows) * cs
                                      : (size_t)k * cs;
                sink(dst, e * (size_t)a->components + (size_t)k,
                     tb__read_component(p + off, a->component_type, a->normalized));
            }
        }
    }
    if (a->has_sparse) {
        json_t *sp = json_object_get(aj, "sparse");
        json_t *si = json_object_get(sp, "indices"), *sv = json_object_get(sp, "values");
        size_t scount = (size_t)json_integer_value(json_object_get(sp, "count"));
        int ict = (int)json_integer_value(json_object_get(si, "componentType"));
        const tb__view *iv = &doc->views[json_integer_value(json_object_get(si, "bufferView"))];
        const tb__view *vv = &doc->views[json_integer_value(json_object_get(sv, "bufferView"))];
        const uint8_t *ib = doc->bin + iv->offset + (size_t)json_integer_value(json_object_get(si, "byteOffset"));
        const uint8_t *vb = doc->bin + vv->offset + (size_t)json_integer_value(json_object_get(sv, "byteOffset"));
        for (size_t q = 0; q < scount; q++) {
            uint32_t idx = (uint32_t)tb__read_component(ib + q * tb__component_size(ict), ict, 0);
            if (idx >= a->count)
                return tb__fail(err, TB_ERR_INDEX, NULL, "sparse index out of range");
            for (int k = 0; k < a->components; k++) {
                size_t off = col_rows ? (size_t)(k / col_rows) * col_stride + (size_t)(k % col_rows) * cs
                                      : (size_t)k * cs;
                sink(dst, idx * (size_t)a->components + (size_t)k,
                     tb__read_component(vb + q * elem + off, a->component_type, a->normalized));
            }
        }
    }
    return TB_OK;
}

const unsigned char *tb__accessor_packed_floats(const tb_doc *doc, int accessor)
{
    if (!doc || accessor < 0 || accessor >= doc->g.accessor_count)
        return NULL;
    const tb_gltf_accessor *a = &doc->accessors[accessor];
    if (a->component_type != TB_COMPONENT_FLOAT || a->buffer_view < 0 || a->has_sparse)
        return NULL;
    json_t *aj = json_array_get(json_object_get(doc->root, "accessors"), (size_t)accessor);
    int col_rows;
    size_t col_stride;
    size_t elem = tb__elem_bytes(aj, a, &col_rows, &col_stride);
    const tb__view *v = &doc->views[a->buffer_view];
    if (col_rows || (v->stride && v->stride != elem))
        return NULL;
    return doc->bin + v->offset + a->byte_offset; /* tb__read's base */
}

tb_result tb_accessor_read_floats(const tb_doc *doc, int accessor, float *dst, size_t dst_len,
                                  tb_error *err)
{
    return tb__read(doc, accessor, dst, dst_len, tb__sink_f, err);
}

tb_result tb_accessor_read_uints(const tb_doc *doc, int accessor, uint32_t *dst, size_t dst_len,
                                 tb_error *err)
{
    return tb__read(doc, accessor, dst, dst_len, tb__sink_u, err);
}

static json_t *tb__ensure_array(json_t *root, const char *key)
{
    json_t *a = json_object_get(root, key);
    if (!json_is_array(a)) {
        a = json_array();
        json_object_set_new(root, key, a);
    }
    return a;
}

int tb_doc_add_buffer_view(tb_doc *doc, const void *data, size_t size, size_t byte_stride, int target)
{
    size_t off = tb__bin_append(doc, data, size);
    if (off == SIZE_MAX)
        return -1;
    json_t *buffers = tb__ensure_array(doc->root, "buffers");
    if (json_array_size(buffers) == 0)
        json_array_append_new(buffers, json_object());
    json_object_set_new(json_array_get(buffers, 0), "byteLength", json_integer((json_int_t)doc->bin_size));
    json_t *views = tb__ensure_array(doc->root, "bufferViews");
    json_t *v = json_object();
    json_object_set_new(v, "buffer", json_integer(0));
    if (off)
        json_object_set_new(v, "byteOffset", json_integer((json_int_t)off));
    json_object_set_new(v, "byteLength", json_integer((json_int_t)size));
    if (byte_stride)
        json_object_set_new(v, "byteStride", json_integer((json_int_t)byte_stride));
    if (target)
        json_object_set_new(v, "target", json_integer(target));
    json_array_append_new(views, v);
    return (int)json_array_size(views) - 1;
}

/* Each component's least and greatest value over count elements of comps
 * (at most 4) components, in one pass: per component the first value, then
 * each later one that compares below (above) it, as doubles (a NaN first
 * stays; a NaN later is never taken). Stored in the component's own units
 * (normalized or not). */
/* Per component, the least and greatest value, compared in the
 * component's own type (the same order as in double, which holds every
 * value of these types exactly; a NaN is never taken after the first
 * element, as before): the running bounds stay in registers and the loop
 * runs in vector lanes. */
#define TB__MINMAX(T)                                                                                  \
    do {                                                                                               \
        const uint8_t *b = data;                                                                       \
        T lo[4], hi[4];                                                                                \
        for (int k = 0; k < comps; k++) {                                                              \
            memcpy(&lo[k], b + (size_t)k * sizeof(T), sizeof(T));                                      \
            hi[k] = lo[k];                                                                             \
        }                                                                                              \
        for (size_t i = 1; i < count; i++)                                                             \
            for (int k = 0; k < comps; k++) {                                                          \
                T x;                                                                                   \
                memcpy(&x, b + (i * (size_t)comps + (size_t)k) * sizeof x, sizeof x);                  \
                lo[k] = x < lo[k] ? x : lo[k];                                                         \
                hi[k] = x > hi[k] ? x : hi[k];                                                         \
            }                                                                                          \
        for (int k = 0; k < comps; k++)                                                                \
            mn[k] = (double)lo[k], mx[k] = (double)hi[k];                                              \
    } while (0)

static void tb__minmax(const void *data, size_t count, int ct, int comps, double *mn, double *mx)
{
    switch (ct) {
    case TB_COMPONENT_BYTE: TB__MINMAX(int8_t); break;
    case TB_COMPONENT_UNSIGNED_BYTE: TB__MINMAX(uint8_t); break;
    case TB_COMPONENT_SHORT: TB__MINMAX(int16_t); break;
    case TB_COMPONENT_UNSIGNED_SHORT: TB__MINMAX(uint16_t); break;
    case TB_COMPONENT_UNSIGNED_INT: TB__MINMAX(uint32_t); break;
    case TB_COMPONENT_FLOAT: TB__MINMAX(float); break;
    default:
        for (int k = 0; k < comps; k++)
            mn[k] = mx[k] = 0;
    }
}
#undef TB__MINMAX

static json_t *tb__minmax_json(const double *v, int ct, int comps)
{
    json_t *arr = json_array();
    for (int k = 0; k < comps; k++)
        json_array_append_new(arr, ct == TB_COMPONENT_FLOAT ? json_real((double)(float)v[k])
                                                            : json_integer((json_int_t)v[k]));
    return arr;
}

int tb_doc_add_accessor(tb_doc *doc, const void *data, size_t count, int component_type,
                        const char *type, int normalized, int target)
{
    int comps = tb__type_components(type);
    size_t cs = tb__component_size(component_type);
    if (!comps || !cs || !count || (comps == 9 && cs < 4) || (comps == 4 && !strcmp(type, "MAT2") && cs == 1))
        return -1; /* padded small matrices: not produced by tailbone */
    size_t elem = cs * (size_t)comps;
    float *exact = NULL;
    if (comps == 16 && component_type == TB_COMPONENT_FLOAT) {
        /* MAT4 accessors are inverse bind matrices: a general 4x4 inverse
         * leaves their last row at 1.0000001 or -1e-9, which the Khronos
         * validator rejects (ACCESSOR_INVALID_IBM); an affine matrix's last
         * row is exactly 0 0 0 1, so write it so. */
        if (!(exact = malloc(count * elem)))
            return -1;
        memcpy(exact, data, count * elem);
        for (size_t i = 0; i < count; i++) {
            float *m = exact + 16 * i;
            if (fabsf(m[3]) < 1e-3f && fabsf(m[7]) < 1e-3f && fabsf(m[11]) < 1e-3f && fabsf(m[15] - 1) < 1e-3f)
                m[3] = m[7] = m[11] = 0, m[15] = 1;
        }
        data = exact;
    }
    /* vertex attributes need 4-byte aligned strides */
    size_t stride = (target == 34962 && elem % 4) ? (elem + 3) & ~(size_t)3 : 0;
    int view;
    if (stride) {
        uint8_t *tmp = calloc(count, stride);
        if (!tmp)
            return -1;
        for (size_t i = 0; i < count; i++)
            memcpy(tmp + i * stride, (const uint8_t *)data + i * elem, elem);
        view = tb_doc_add_buffer_view(doc, tmp, count * stride, stride, target);
        free(tmp);
    } else {
        view = tb_doc_add_buffer_view(doc, data, count * elem, 0, target);
    }
    if (view < 0) {
        free(exact);
        return -1;
    }
    json_t *a = json_object();
    json_object_set_new(a, "bufferView", json_integer(view));
    json_object_set_new(a, "componentType", json_integer(component_type));
    if (normalized)
        json_object_set_new(a, "normalized", json_true());
    json_object_set_new(a, "count", json_integer((json_int_t)count));
    json_object_set_new(a, "type", json_string(type));
    if (comps <= 4 && strcmp(type, "MAT2")) {
        double mn[4], mx[4];
        tb__minmax(data, count, component_type, comps, mn, mx);
        json_object_set_new(a, "min", tb__minmax_json(mn, component_type, comps));
        json_object_set_new(a, "max", tb__minmax_json(mx, component_type, comps));
    }
    free(exact);
    json_t *accs = tb__ensure_array(doc->root, "accessors");
    json_array_append_new(accs, a);
    return (int)json_array_size(accs) - 1;
}

tb_result tb_doc_replace_accessor_data(tb_doc *doc, int accessor, const void *data, int component_type,
                                       tb_error *err)
{
    json_t *accs = json_object_get(doc->root, "accessors");
    json_t *a = json_array_get(accs, (size_t)accessor);
    if (!a)
        return tb__fail(err, TB_ERR_ARG, NULL, "accessor %d out of range", accessor);
    const char *type = json_string_value(json_object_get(a, "type"));
    size_t count = (size_t)json_integer_value(json_object_get(a, "count"));
    int normalized = json_is_true(json_object_get(a, "normalized"));
    int target = 0;
    json_t *bvj = json_object_get(a, "bufferView");
    if (json_is_integer(bvj)) {
        json_t *v = json_array_get(json_object_get(doc->root, "bufferViews"), (size_t)json_integer_value(bvj));
        target = (int)json_integer_value(json_object_get(v, "target"));
    }
    int fresh = tb_doc_add_accessor(doc, data, count, component_type, type, normalized, target);
    if (fresh < 0)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* Move the new definition into place, keeping name/extras/extensions. */
    json_t *nj = json_array_get(accs, (size_t)fresh);
    const char *keys[] = {"bufferView", "byteOffset", "componentType", "normalized", "count", "type",
                          "min", "max", "sparse"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        json_object_del(a, keys[k]);
    const char *key;
    json_t *val;
    json_object_foreach(nj, key, val) json_object_set(a, key, val);
    json_array_remove(accs, (size_t)fresh);
    return TB_OK;
}
