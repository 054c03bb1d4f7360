/* Reader, writer and accessor decoding: lossless round trips and one test
 * per kind of malformed input (each must fail with its code, a place, and
 * leave no output file). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gltf/doc_json.h"
#include "support.h"
#include "tailbone/gltf.h"
#include "tailbone/model.h"
#include "gltf/doc_internal.h"

/* ---- building test files ---------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t n;
} bytes;

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static bytes make_glb(const char *json, const void *bin, size_t bin_len)
{
    size_t jl = strlen(json), jp = (4 - jl % 4) % 4, bp = (4 - bin_len % 4) % 4;
    size_t total = 12 + 8 + jl + jp + (bin ? 8 + bin_len + bp : 0);
    bytes b = {calloc(1, total), total};
    memcpy(b.p, "glTF", 4);
    put_u32(b.p + 4, 2);
    put_u32(b.p + 8, (uint32_t)total);
    put_u32(b.p + 12, (uint32_t)(jl + jp));
    memcpy(b.p + 16, "JSON", 4);
    memcpy(b.p + 20, json, jl);
    memset(b.p + 20 + jl, ' ', jp);
    if (bin) {
        uint8_t *q = b.p + 20 + jl + jp;
        put_u32(q, (uint32_t)(bin_len + bp));
        memcpy(q + 4, "BIN\0", 4);
        memcpy(q + 8, bin, bin_len);
    }
    return b;
}

/* A small valid skinned triangle pair: 4 vertices, 2 joints.
 * BIN layout: 0 positions (48) | 48 joints u8 (16) | 64 weights f (64) |
 * 128 indices u16 (12) | 140 pad | 144 IBM (128) | 272 times (8) | 280 rot (32) */
static uint8_t g_bin[312];

static void fill_bin(void)
{
    float pos[12] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
    uint8_t joints[16] = {0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    float w[16] = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    uint16_t idx[6] = {0, 1, 2, 0, 2, 3};
    float ibm[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
                     1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1};
    float times[2] = {0, 1};
    float rot[8] = {0, 0, 0, 1, 0, 0, 0.38268343f, 0.92387953f};
    memset(g_bin, 0, sizeof g_bin);
    memcpy(g_bin, pos, 48);
    memcpy(g_bin + 48, joints, 16);
    memcpy(g_bin + 64, w, 64);
    memcpy(g_bin + 128, idx, 12);
    memcpy(g_bin + 144, ibm, 128);
    memcpy(g_bin + 272, times, 8);
    memcpy(g_bin + 280, rot, 32);
}

static const char *k_valid_json =
    "{\"asset\":{\"version\":\"2.0\",\"generator\":\"test\",\"extras\":{\"keep\":[1,2.5,\"x\"]}},"
    "\"extensionsUsed\":[\"EXT_unknown_but_optional\"],"
    "\"scene\":0,\"scenes\":[{\"nodes\":[0,3]}],"
    "\"nodes\":[{\"name\":\"Root\",\"children\":[1],\"extras\":{\"a\":1}},"
    "{\"name\":\"Hips\",\"children\":[2]},"
    "{\"name\":\"Spine\",\"translation\":[0,1,0],\"extensions\":{\"EXT_unknown_but_optional\":{\"z\":true}}},"
    "{\"name\":\"Body\",\"mesh\":0,\"skin\":0}],"
    "\"skins\":[{\"joints\":[1,2],\"inverseBindMatrices\":4}],"
    "\"meshes\":[{\"name\":\"M\",\"primitives\":[{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2},"
    "\"indices\":3}]}],"
    "\"animations\":[{\"name\":\"Bend\",\"samplers\":[{\"input\":5,\"output\":6}],"
    "\"channels\":[{\"sampler\":0,\"target\":{\"node\":2,\"path\":\"rotation\"}}]}],"
    "\"accessors\":["
    "{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]},"
    "{\"bufferView\":1,\"componentType\":5121,\"count\":4,\"type\":\"VEC4\"},"
    "{\"bufferView\":2,\"componentType\":5126,\"count\":4,\"type\":\"VEC4\"},"
    "{\"bufferView\":3,\"componentType\":5123,\"count\":6,\"type\":\"SCALAR\"},"
    "{\"bufferView\":4,\"componentType\":5126,\"count\":2,\"type\":\"MAT4\"},"
    "{\"bufferView\":5,\"componentType\":5126,\"count\":2,\"type\":\"SCALAR\",\"min\":[0],\"max\":[1]},"
    "{\"bufferView\":6,\"componentType\":5126,\"count\":2,\"type\":\"VEC4\"}],"
    "\"bufferViews\":["
    "{\"buffer\":0,\"byteOffset\":0,\"byteLength\":48,\"target\":34962},"
    "{\"buffer\":0,\"byteOffset\":48,\"byteLength\":16,\"target\":34962},"
    "{\"buffer\":0,\"byteOffset\":64,\"byteLength\":64,\"target\":34962},"
    "{\"buffer\":0,\"byteOffset\":128,\"byteLength\":12,\"target\":34963},"
    "{\"buffer\":0,\"byteOffset\":144,\"byteLength\":128},"
    "{\"buffer\":0,\"byteOffset\":272,\"byteLength\":8},"
    "{\"buffer\":0,\"byteOffset\":280,\"byteLength\":32}],"
    "\"buffers\":[{\"byteLength\":312}],"
    "\"unknownTopLevel\":{\"kept\":\"yes\"}}";

/* Returns a copy of the valid JSON with one substring replaced. */
static char *json_with(const char *from, const char *to)
{
    const char *at = strstr(k_valid_json, from);
    assert_non_null(at);
    size_t n = strlen(k_valid_json) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    size_t pre = (size_t)(at - k_valid_json);
    memcpy(s, k_valid_json, pre);
    strcpy(s + pre, to);
    strcat(s, at + strlen(from));
    return s;
}

static tb_result load_bytes(bytes b, tb_error *err, tb_doc **out)
{
    tb_doc *doc = NULL;
    tb_result r = tb_doc_load_memory(&doc, b.p, b.n, "mem.glb", tbt_tmp_dir(), NULL, err);
    if (out)
        *out = doc;
    else
        tb_doc_free(doc);
    return r;
}

/* Every malformed file must fail the same way through the CLI: exit 1, one
 * line on stderr naming the file, and no output file left behind. */
static void expect_cli_refuses(bytes b, const char *name)
{
    const char *in = tbt_tmp_path(name);
    char outname[256];
    snprintf(outname, sizeof outname, "%s.out.glb", name);
    const char *out = tbt_tmp_path(outname);
    assert_int_equal(tbt_write_file(in, b.p, b.n), 0);
    remove(out);
    char *text = NULL;
    int rc = tbt_run_cli(&text, "copy '%s' '%s'", in, out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(text, name));
    /* one line */
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    assert_true(nl[1] == 0);
    assert_false(tbt_file_exists(out));
    free(text);
}

static void expect_failure(bytes b, tb_result code, const char *where_part, const char *name)
{
    tb_error err = {0};
    tb_result r = load_bytes(b, &err, NULL);
    if (r != code)
        print_error("got %s (%s: %s), want %s\n", tb_result_name(r), err.where, err.message, tb_result_name(code));
    assert_int_equal(r, code);
    assert_int_equal(err.code, code);
    assert_true(err.message[0] != 0);
    if (where_part) {
        if (!strstr(err.where, where_part))
            print_error("where '%s' lacks '%s'\n", err.where, where_part);
        assert_non_null(strstr(err.where, where_part));
    }
    expect_cli_refuses(b, name);
}

static void expect_json_failure(const char *from, const char *to, tb_result code, const char *where_part,
                                const char *name)
{
    char *json = json_with(from, to);
    bytes b = make_glb(json, g_bin, sizeof g_bin);
    expect_failure(b, code, where_part, name);
    free(b.p);
    free(json);
}

/* ---- valid input --------------------------------------------------------- */

static void valid_file_loads_and_decodes(void **state)
{
    (void)state;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    tb_error err = {0};
    tb_doc *doc;
    assert_int_equal(load_bytes(b, &err, &doc), TB_OK);
    const tb_gltf *g = tb_doc_gltf(doc);
    assert_int_equal(g->node_count, 4);
    assert_int_equal(g->skin_count, 1);
    assert_int_equal(g->nodes[2].parent, 1);
    assert_float_equal(g->nodes[2].world[13], 1.0f, 1e-6);
    float w[16];
    assert_int_equal(tb_accessor_read_floats(doc, 2, w, 16, &err), TB_OK);
    assert_float_equal(w[4], 0.5f, 0);
    uint32_t j[16];
    assert_int_equal(tb_accessor_read_uints(doc, 1, j, 16, &err), TB_OK);
    assert_int_equal(j[1], 1);
    assert_float_equal(g->animations[0].duration_s, 1.0f, 0);
    tb_model *m;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
    assert_int_equal(m->vertex_count, 4);
    assert_int_equal(m->triangle_count, 2);
    assert_float_equal(m->height, 1.0f, 1e-6);
    assert_int_equal(m->role_joint[TB_ROLE_HIPS], m->joint_of_node[1]);
    tb_model_free(m);
    tb_doc_free(doc);
    free(b.p);
}

static void untouched_glb_round_trip_is_byte_identical_in_meaning(void **state)
{
    (void)state;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    tb_doc *a, *c;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &a), TB_OK);
    uint8_t *out;
    size_t n;
    assert_int_equal(tb_doc_write_memory(a, &out, &n, &err), TB_OK);
    assert_int_equal(tb_doc_load_memory(&c, out, n, "rt.glb", NULL, NULL, &err), TB_OK);
    assert_true(json_equal(tb_doc_json(a), tb_doc_json(c)));
    size_t s1, s2;
    const uint8_t *b1 = tb_doc_bin(a, &s1), *b2 = tb_doc_bin(c, &s2);
    assert_int_equal(s1, s2);
    assert_memory_equal(b1, b2, s1);
    /* the output is a GLB aligned per the spec */
    assert_memory_equal(out, "glTF", 4);
    assert_int_equal(n % 4, 0);
    tb_doc_free(a);
    tb_doc_free(c);
    free(out);
    free(b.p);
}

/* Decodes every accessor of both docs and compares values exactly. */
static void assert_same_accessor_values(tb_doc *a, tb_doc *b)
{
    const tb_gltf *ga = tb_doc_gltf(a), *gb = tb_doc_gltf(b);
    assert_int_equal(ga->accessor_count, gb->accessor_count);
    for (int i = 0; i < ga->accessor_count; i++) {
        size_t n = ga->accessors[i].count * (size_t)ga->accessors[i].components;
        assert_int_equal(n, gb->accessors[i].count * (size_t)gb->accessors[i].components);
        float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
        assert_int_equal(tb_accessor_read_floats(a, i, x, n, NULL), TB_OK);
        assert_int_equal(tb_accessor_read_floats(b, i, y, n, NULL), TB_OK);
        assert_memory_equal(x, y, n * sizeof *x);
        free(x);
        free(y);
    }
}

static void corpus_round_trips_keep_json_and_values(void **state)
{
    (void)state;
    const char *files[] = {"characters/banter_Wolf.glb", "characters/banter_Bone_Demon.glb",
                           "clips/Xbot_agree_run_walk.glb", "clips/threejs_RobotExpressive.glb",
                           "clips/threejs_Soldier_rexport.glb", "reference/khronos_Fox.glb",
                           "reference/quaternius_Fox.glb"};
    tbt_path shared;
    if (!tbt_shared_dir(&shared))
        tbt_skip();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tbt_path in_buf;
        const char *in = tbt_corpus_file(&in_buf, files[i]);
        if (!in)
            continue;
        const char *out = tbt_tmp_path("corpus_rt.glb");
        int rc = tbt_run_cli(NULL, "copy -q '%s' '%s'", in, out);
        assert_int_equal(rc, 0);
        tb_doc *a, *b;
        tb_error err;
        assert_int_equal(tb_doc_load(&a, in, NULL, &err), TB_OK);
        assert_int_equal(tb_doc_load(&b, out, NULL, &err), TB_OK);
        assert_true(json_equal(tb_doc_json(a), tb_doc_json(b)));
        assert_same_accessor_values(a, b);
        tb_doc_free(a);
        tb_doc_free(b);
    }
}

/* .gltf with an external .bin, a data: URI buffer, an external image and
 * interleaved, sparse, normalised and strip data. */
static void gltf_with_external_and_data_buffers_merges_losslessly(void **state)
{
    (void)state;
    /* buffer 0 (external): interleaved POSITION+COLOR_0 (u8 normalised), stride 16 */
    uint8_t ext[64];
    memset(ext, 0, sizeof ext);
    float pv[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    for (int v = 0; v < 4; v++) {
        memcpy(ext + v * 16, pv[v], 12);
        uint8_t col[4] = {255, (uint8_t)(v * 60), 0, 128};
        memcpy(ext + v * 16 + 12, col, 4);
    }
    assert_int_equal(tbt_write_file(tbt_tmp_path("ext.bin"), ext, sizeof ext), 0);
    uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0};
    assert_int_equal(tbt_write_file(tbt_tmp_path("tex.png"), png, sizeof png), 0);
    /* buffer 1 (data: URI): strip indices u8 {0,1,2,3} + sparse idx u16 {2} + value float3 {0,2,0} */
    /* bytes: 00 01 02 03 | 02 00 00 00 | 00 00 00 00 00 00 00 40 00 00 00 00 */
    const char *json =
        "{\"asset\":{\"version\":\"2.0\"},\"scenes\":[{\"nodes\":[0]}],\"scene\":0,"
        "\"nodes\":[{\"mesh\":0,\"matrix\":[2,0,0,0,0,2,0,0,0,0,2,0,1,2,3,1]}],"
        "\"meshes\":[{\"primitives\":[{\"mode\":5,\"indices\":2,\"attributes\":{\"POSITION\":0,\"COLOR_0\":1}},"
        "{\"attributes\":{\"POSITION\":3}}]}],"
        "\"images\":[{\"uri\":\"tex.png\"}],"
        "\"accessors\":["
        "{\"bufferView\":0,\"componentType\":5126,\"count\":4,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]},"
        "{\"bufferView\":0,\"byteOffset\":12,\"componentType\":5121,\"normalized\":true,\"count\":4,\"type\":\"VEC4\"},"
        "{\"bufferView\":1,\"componentType\":5121,\"count\":4,\"type\":\"SCALAR\"},"
        "{\"componentType\":5126,\"count\":4,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[0,2,0],"
        "\"sparse\":{\"count\":1,\"indices\":{\"bufferView\":2,\"componentType\":5123},"
        "\"values\":{\"bufferView\":3}}}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteLength\":64,\"byteStride\":16,\"target\":34962},"
        "{\"buffer\":1,\"byteLength\":4,\"target\":34963},"
        "{\"buffer\":1,\"byteOffset\":4,\"byteLength\":2},"
        "{\"buffer\":1,\"byteOffset\":8,\"byteLength\":12}],"
        "\"buffers\":[{\"uri\":\"ext.bin\",\"byteLength\":64},"
        "{\"uri\":\"data:application/octet-stream;base64,AAECAwIAAAAAAAAAAAAAQAAAAAA=\",\"byteLength\":20}]}";
    const char *in = tbt_tmp_path("multi.gltf");
    assert_int_equal(tbt_write_file(in, json, strlen(json)), 0);
    tb_doc *a, *b;
    tb_error err = {0};
    tb_result r = tb_doc_load(&a, in, NULL, &err);
    if (r)
        print_error("%s: %s\n", err.where, err.message);
    assert_int_equal(r, TB_OK);
    /* decoded values */
    float col[16], sp[12];
    assert_int_equal(tb_accessor_read_floats(a, 1, col, 16, &err), TB_OK);
    assert_float_equal(col[0], 1.0f, 0);
    assert_float_equal(col[3], 128 / 255.0f, 1e-7);
    assert_float_equal(col[5], 60 / 255.0f, 1e-7);
    assert_int_equal(tb_accessor_read_floats(a, 3, sp, 12, &err), TB_OK);
    assert_float_equal(sp[7], 2.0f, 0); /* element 2, y from the sparse value */
    assert_float_equal(sp[4], 0.0f, 0);
    const tb_gltf *g = tb_doc_gltf(a);
    assert_true(g->nodes[0].has_matrix);
    assert_float_equal(g->nodes[0].local.s[1], 2.0f, 1e-6);
    assert_float_equal(g->nodes[0].local.t[2], 3.0f, 1e-6);
    /* round trip through the CLI */
    const char *out = tbt_tmp_path("multi.glb");
    assert_int_equal(tbt_run_cli(NULL, "copy '%s' '%s'", in, out), 0);
    assert_int_equal(tb_doc_load(&b, out, NULL, &err), TB_OK);
    assert_same_accessor_values(a, b);
    json_t *ja = tb_doc_json(a), *jb = tb_doc_json(b);
    assert_true(json_equal(json_object_get(ja, "meshes"), json_object_get(jb, "meshes")));
    assert_true(json_equal(json_object_get(ja, "nodes"), json_object_get(jb, "nodes")));
    assert_true(json_equal(json_object_get(ja, "accessors"), json_object_get(jb, "accessors")));
    /* one buffer, the image embedded */
    assert_int_equal(json_array_size(json_object_get(jb, "buffers")), 1);
    json_t *img = json_array_get(json_object_get(jb, "images"), 0);
    assert_null(json_object_get(img, "uri"));
    assert_string_equal(json_string_value(json_object_get(img, "mimeType")), "image/png");
    /* the strip became two triangles in the model view (no skin → via accessor) */
    tb_doc_free(a);
    tb_doc_free(b);
}

static void every_component_type_decodes(void **state)
{
    (void)state;
    /* i8 -1,127 | u8 255 | i16 -32767 | u16 65535 | u32 7 | f 0.25, normalised and not */
    uint8_t bin[32] = {0};
    int8_t i8[2] = {-128, 127};
    memcpy(bin, i8, 2);
    bin[4] = 255;
    int16_t i16 = -32767;
    memcpy(bin + 8, &i16, 2);
    uint16_t u16 = 65535;
    memcpy(bin + 12, &u16, 2);
    uint32_t u32 = 7;
    memcpy(bin + 16, &u32, 4);
    float f = 0.25f;
    memcpy(bin + 20, &f, 4);
    const char *json =
        "{\"asset\":{\"version\":\"2.0\"},\"accessors\":["
        "{\"bufferView\":0,\"componentType\":5120,\"normalized\":true,\"count\":2,\"type\":\"SCALAR\"},"
        "{\"bufferView\":0,\"componentType\":5120,\"count\":2,\"type\":\"SCALAR\"},"
        "{\"bufferView\":0,\"byteOffset\":4,\"componentType\":5121,\"normalized\":true,\"count\":1,\"type\":\"SCALAR\"},"
        "{\"bufferView\":0,\"byteOffset\":8,\"componentType\":5122,\"normalized\":true,\"count\":1,\"type\":\"SCALAR\"},"
        "{\"bufferView\":0,\"byteOffset\":12,\"componentType\":5123,\"normalized\":true,\"count\":1,\"type\":\"SCALAR\"},"
        "{\"bufferView\":0,\"byteOffset\":16,\"componentType\":5125,\"count\":1,\"type\":\"SCALAR\"},"
        "{\"bufferView\":0,\"byteOffset\":20,\"componentType\":5126,\"count\":1,\"type\":\"SCALAR\"}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteLength\":32}],\"buffers\":[{\"byteLength\":32}]}";
    bytes b = make_glb(json, bin, sizeof bin);
    tb_doc *doc;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &doc), TB_OK);
    float v[2];
    tb_accessor_read_floats(doc, 0, v, 2, &err);
    assert_float_equal(v[0], -1.0f, 0); /* -128 clamps to -1 */
    assert_float_equal(v[1], 1.0f, 0);
    tb_accessor_read_floats(doc, 1, v, 2, &err);
    assert_float_equal(v[0], -128.0f, 0);
    tb_accessor_read_floats(doc, 2, v, 1, &err);
    assert_float_equal(v[0], 1.0f, 0);
    tb_accessor_read_floats(doc, 3, v, 1, &err);
    assert_float_equal(v[0], -1.0f, 0);
    tb_accessor_read_floats(doc, 4, v, 1, &err);
    assert_float_equal(v[0], 1.0f, 0);
    uint32_t u;
    tb_accessor_read_uints(doc, 5, &u, 1, &err);
    assert_int_equal(u, 7);
    tb_accessor_read_floats(doc, 6, v, 1, &err);
    assert_float_equal(v[0], 0.25f, 0);
    /* too small a destination is refused, not overrun */
    assert_int_equal(tb_accessor_read_floats(doc, 0, v, 1, &err), TB_ERR_ARG);
    tb_doc_free(doc);
    free(b.p);
}

static void appended_accessor_reads_back_and_saves(void **state)
{
    (void)state;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    tb_doc *doc, *back;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &doc), TB_OK);
    uint16_t j[8] = {1, 0, 0, 0, 300, 2, 0, 0};
    int acc = tb_doc_add_accessor(doc, j, 2, TB_COMPONENT_UNSIGNED_SHORT, "VEC4", 0, 34962);
    assert_true(acc >= 0);
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    uint32_t r[8];
    assert_int_equal(tb_accessor_read_uints(doc, acc, r, 8, &err), TB_OK);
    assert_int_equal(r[4], 300);
    const char *out = tbt_tmp_path("appended.glb");
    assert_int_equal(tb_doc_save(doc, out, &err), TB_OK);
    assert_int_equal(tb_doc_load(&back, out, NULL, &err), TB_OK);
    assert_same_accessor_values(doc, back);
    tb_doc_free(back);
    tb_doc_free(doc);
    free(b.p);
}

/* A copy that borrows its original's BIN (tb__doc_borrow_bin, what
 * tb_fix_run's working copy does during detection) reads the same values,
 * copies the BIN before its first append (the original's bytes untouched)
 * and, once it owns it, outlives the original (ASan checks the reads). */
static void borrowed_bin_is_copied_on_append_and_outlives_the_original(void **state)
{
    (void)state;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    tb_doc *orig, *copy;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &orig), TB_OK);
    assert_int_equal(load_bytes(b, &err, &copy), TB_OK);
    size_t n0 = 0;
    const uint8_t *ob = tb_doc_bin(orig, &n0);
    uint8_t *before = malloc(n0 + 1);
    memcpy(before, ob, n0);
    assert_int_equal(tb__doc_borrow_bin(copy, orig), 1);
    assert_ptr_equal(tb_doc_bin(copy, NULL), ob); /* one BIN in memory */
    assert_int_equal(tb__doc_borrow_bin(copy, orig), 0); /* already borrowed */
    assert_same_accessor_values(orig, copy);
    uint16_t j[8] = {1, 0, 0, 0, 300, 2, 0, 0};
    int acc = tb_doc_add_accessor(copy, j, 2, TB_COMPONENT_UNSIGNED_SHORT, "VEC4", 0, 34962);
    assert_true(acc >= 0);
    assert_int_equal(tb_doc_refresh(copy, &err), TB_OK);
    assert_ptr_not_equal(tb_doc_bin(copy, NULL), ob);
    size_t n1 = 0;
    assert_ptr_equal(tb_doc_bin(orig, &n1), ob);
    assert_int_equal(n1, n0);
    assert_memory_equal(ob, before, n0);
    assert_memory_equal(tb_doc_bin(copy, NULL), before, n0);
    tb_doc_free(orig);
    uint32_t r[8];
    assert_int_equal(tb_accessor_read_uints(copy, acc, r, 8, &err), TB_OK);
    assert_int_equal(r[4], 300);
    /* a copy whose bytes differ keeps its own */
    tb_doc *other;
    assert_int_equal(load_bytes(b, &err, &other), TB_OK);
    assert_int_equal(tb__doc_borrow_bin(other, copy), 0);
    /* owning again without an append: the same bytes, its own memory */
    assert_int_equal(load_bytes(b, &err, &orig), TB_OK);
    assert_int_equal(tb__doc_borrow_bin(other, orig), 1);
    assert_int_equal(tb__doc_own_bin(other), TB_OK);
    assert_ptr_not_equal(tb_doc_bin(other, NULL), tb_doc_bin(orig, NULL));
    tb_doc_free(orig);
    assert_memory_equal(tb_doc_bin(other, NULL), before, n0);
    tb_doc_free(other);
    tb_doc_free(copy);
    free(before);
    free(b.p);
}

/* The bytes a document writes: tb_doc_write_memory's, and tb_doc_save's
 * file (written piece by piece from the document) must be the same. */
static bytes written(const tb_doc *doc)
{
    bytes w = {NULL, 0};
    tb_error err;
    assert_int_equal(tb_doc_write_memory(doc, &w.p, &w.n, &err), TB_OK);
    const char *path = tbt_tmp_path("pieces.glb");
    assert_int_equal(tb_doc_save(doc, path, &err), TB_OK);
    size_t n = 0;
    uint8_t *f = tbt_read_file(path, &n);
    assert_non_null(f);
    assert_int_equal(n, w.n);
    assert_memory_equal(f, w.p, n);
    free(f);
    return w;
}

/* tb__doc_clone (tb_fix_run's working copy) is what writing the document
 * and loading the GLB gives, byte for byte, while it reads the original's
 * BIN (one BIN in memory, no GLB in between) until it appends; a document
 * not as the loader leaves one (here an unpadded BIN from a data URI) is
 * left to the caller (*out NULL). */
static void clone_is_the_written_and_loaded_document_on_one_bin(void **state)
{
    (void)state;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    tb_doc *orig, *clone, *loaded;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &orig), TB_OK);
    bytes w = written(orig);
    assert_int_equal(tb_doc_load_memory(&loaded, w.p, w.n, "mem.glb", NULL, NULL, &err), TB_OK);
    assert_int_equal(tb__doc_clone(&clone, orig, &err), TB_OK);
    assert_non_null(clone);
    assert_ptr_equal(tb_doc_bin(clone, NULL), tb_doc_bin(orig, NULL));
    assert_same_accessor_values(loaded, clone);
    bytes wc = written(clone), wl = written(loaded);
    assert_int_equal(wc.n, wl.n);
    assert_memory_equal(wc.p, wl.p, wc.n);
    assert_memory_equal(wc.p, w.p, w.n);
    /* an append copies first: the original's bytes stay as they were */
    uint16_t j[4] = {1, 0, 0, 0};
    assert_true(tb_doc_add_accessor(clone, j, 1, TB_COMPONENT_UNSIGNED_SHORT, "VEC4", 0, 34962) >= 0);
    assert_ptr_not_equal(tb_doc_bin(clone, NULL), tb_doc_bin(orig, NULL));
    bytes wo = written(orig);
    assert_memory_equal(wo.p, w.p, w.n);
    tb_doc_free(orig);
    assert_int_equal(tb_doc_refresh(clone, &err), TB_OK);
    /* reads its own copy now (ASan): the loaded document's values */
    for (int i = 0; i < tb_doc_gltf(loaded)->accessor_count; i++) {
        size_t n = tb_doc_gltf(loaded)->accessors[i].count * (size_t)tb_doc_gltf(loaded)->accessors[i].components;
        float *x = malloc(n * sizeof *x + 1), *y = malloc(n * sizeof *y + 1);
        assert_int_equal(tb_accessor_read_floats(loaded, i, x, n, NULL), TB_OK);
        assert_int_equal(tb_accessor_read_floats(clone, i, y, n, NULL), TB_OK);
        assert_memory_equal(x, y, n * sizeof *x);
        free(x), free(y);
    }
    free(wc.p), free(wl.p), free(wo.p), free(w.p);
    tb_doc_free(clone);
    tb_doc_free(loaded);
    free(b.p);
    /* no buffer at all: a clone with no BIN, the same bytes */
    tb_doc *bare = tb_doc_create("test");
    assert_int_equal(tb__doc_clone(&clone, bare, &err), TB_OK);
    assert_non_null(clone);
    assert_null(tb_doc_bin(clone, NULL));
    w = written(bare), wc = written(clone);
    assert_int_equal(wc.n, w.n);
    assert_memory_equal(wc.p, w.p, w.n);
    free(w.p), free(wc.p);
    tb_doc_free(clone);
    tb_doc_free(bare);
    /* a 5-byte buffer from a data URI: an unpadded BIN, left to the caller */
    static const char odd[] = "{\"asset\":{\"version\":\"2.0\"},\"buffers\":[{\"byteLength\":5,"
                              "\"uri\":\"data:application/octet-stream;base64,AQIDBAU=\"}]}";
    bytes t = {(uint8_t *)strdup(odd), strlen(odd)};
    assert_int_equal(load_bytes(t, &err, &orig), TB_OK);
    clone = (tb_doc *)1;
    assert_int_equal(tb__doc_clone(&clone, orig, &err), TB_OK);
    assert_null(clone);
    tb_doc_free(orig);
    free(t.p);
}

static void input_is_never_modified_and_output_replaced_atomically(void **state)
{
    (void)state;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    const char *in = tbt_tmp_path("keep.glb");
    const char *out = tbt_tmp_path("keep.out.glb");
    assert_int_equal(tbt_write_file(in, b.p, b.n), 0);
    assert_int_equal(tbt_write_file(out, "old", 3), 0);
    assert_int_equal(tbt_run_cli(NULL, "copy '%s' '%s'", in, out), 0);
    size_t n;
    uint8_t *again = tbt_read_file(in, &n);
    assert_int_equal(n, b.n);
    assert_memory_equal(again, b.p, n);
    free(again);
    uint8_t *o = tbt_read_file(out, &n);
    assert_memory_equal(o, "glTF", 4);
    free(o);
    free(b.p);
}

static void mesh_without_skin_is_reported(void **state)
{
    (void)state;
    char *json = json_with(",\"skin\":0}]", "}]");
    bytes b = make_glb(json, g_bin, sizeof g_bin);
    tb_doc *doc;
    tb_error err = {0};
    assert_int_equal(load_bytes(b, &err, &doc), TB_OK);
    tb_model *m;
    assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_ERR_NO_SKIN);
    assert_true(err.message[0] != 0);
    tb_doc_free(doc);
    free(b.p);
    free(json);
}

/* ---- malformed input: one test per case --------------------------------- */

static void rejects_empty_file(void **s) { (void)s; bytes b = {(uint8_t *)"", 0}; expect_failure(b, TB_ERR_TRUNCATED, "byte 0", "empty.glb"); }

static void rejects_truncated_glb(void **s)
{
    (void)s;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    b.n /= 2;
    expect_failure(b, TB_ERR_TRUNCATED, "byte 8", "truncated.glb");
    free(b.p);
}

static void rejects_truncated_header(void **s)
{
    (void)s;
    bytes b = {(uint8_t *)"glTF\x02\x00", 6};
    expect_failure(b, TB_ERR_TRUNCATED, "byte 0", "short_header.glb");
}

static void rejects_bad_magic(void **s)
{
    (void)s;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    memcpy(b.p, "GLTF", 4);
    expect_failure(b, TB_ERR_GLB_MAGIC, "byte 0", "bad_magic.glb");
    free(b.p);
}

static void rejects_glb_version_1(void **s)
{
    (void)s;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    put_u32(b.p + 4, 1);
    expect_failure(b, TB_ERR_GLB_VERSION, "byte 4", "version1.glb");
    free(b.p);
}

static void rejects_length_shorter_than_file(void **s)
{
    (void)s;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    put_u32(b.p + 8, (uint32_t)b.n - 4);
    expect_failure(b, TB_ERR_GLB_LENGTH, "byte 8", "length_short.glb");
    free(b.p);
}

static void rejects_chunk_longer_than_file(void **s)
{
    (void)s;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    put_u32(b.p + 12, 1u << 30);
    expect_failure(b, TB_ERR_TRUNCATED, "byte 12", "chunk_long.glb");
    free(b.p);
}

static void rejects_bin_chunk_first(void **s)
{
    (void)s;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    memcpy(b.p + 16, "BIN\0", 4);
    expect_failure(b, TB_ERR_GLB_CHUNK, "byte 12", "bin_first.glb");
    free(b.p);
}

static void rejects_json_syntax_error_with_line_and_column(void **s)
{
    (void)s;
    char *json = json_with("\"scene\":0,", "\"scene\":0,,");
    bytes b = make_glb(json, g_bin, sizeof g_bin);
    expect_failure(b, TB_ERR_JSON_SYNTAX, "line 1 column", "syntax.glb");
    free(b.p);
    free(json);
}

static void rejects_wrong_json_type(void **s)
{
    (void)s;
    expect_json_failure("\"count\":6,", "\"count\":\"6\",", TB_ERR_JSON_TYPE, "/accessors/3/count", "type.glb");
}

static void rejects_missing_asset(void **s)
{
    (void)s;
    expect_json_failure("\"asset\":{\"version\":\"2.0\",", "\"assetX\":{\"version\":\"2.0\",", TB_ERR_MISSING_FIELD,
                        "/asset", "no_asset.glb");
}

static void rejects_accessor_view_index_out_of_range(void **s)
{
    (void)s;
    expect_json_failure("{\"bufferView\":3,", "{\"bufferView\":30,", TB_ERR_INDEX, "/accessors/3/bufferView",
                        "acc_index.glb");
}

static void rejects_accessor_past_its_view(void **s)
{
    (void)s;
    expect_json_failure("\"componentType\":5126,\"count\":4,\"type\":\"VEC3\"",
                        "\"componentType\":5126,\"count\":5,\"type\":\"VEC3\"", TB_ERR_BOUNDS, "/accessors/0/count",
                        "acc_bounds.glb");
}

static void rejects_view_past_its_buffer(void **s)
{
    (void)s;
    expect_json_failure("\"byteOffset\":280,\"byteLength\":32", "\"byteOffset\":280,\"byteLength\":320", TB_ERR_BOUNDS,
                        "/bufferViews/6/byteLength", "view_bounds.glb");
}

static void rejects_buffer_longer_than_bin_chunk(void **s)
{
    (void)s;
    expect_json_failure("\"buffers\":[{\"byteLength\":312}]", "\"buffers\":[{\"byteLength\":4000}]",
                        TB_ERR_TRUNCATED, "/buffers/0/byteLength", "bin_short.glb");
}

static void rejects_misaligned_component_data(void **s)
{
    (void)s;
    expect_json_failure("{\"bufferView\":2,\"componentType\":5126", "{\"bufferView\":2,\"byteOffset\":2,\"componentType\":5126",
                        TB_ERR_ALIGN, "/accessors/2/byteOffset", "align.glb");
}

static void rejects_nan_position(void **s)
{
    (void)s;
    float nan = NAN;
    memcpy(g_bin + 4, &nan, 4);
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    fill_bin();
    expect_failure(b, TB_ERR_NONFINITE, "/accessors/0", "nan_pos.glb");
    free(b.p);
}

static void rejects_infinite_inverse_bind_matrix(void **s)
{
    (void)s;
    float inf = INFINITY;
    memcpy(g_bin + 144 + 4 * 5, &inf, 4);
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    fill_bin();
    expect_failure(b, TB_ERR_NONFINITE, "/accessors/4", "inf_ibm.glb");
    free(b.p);
}

static void rejects_missing_external_file(void **s)
{
    (void)s;
    expect_json_failure("\"buffers\":[{\"byteLength\":312}]", "\"buffers\":[{\"byteLength\":312},{\"uri\":\"nowhere.bin\",\"byteLength\":4}]",
                        TB_ERR_MISSING_FILE, "/buffers/1/uri", "missing_ext.glb");
}

static void rejects_skin_joint_outside_scene(void **s)
{
    (void)s;
    expect_json_failure("\"scenes\":[{\"nodes\":[0,3]}]", "\"scenes\":[{\"nodes\":[3]}]", TB_ERR_HIERARCHY,
                        "/skins/0/joints/0", "joint_scene.glb");
}

static void rejects_node_cycle(void **s)
{
    (void)s;
    /* Root lets go of Hips; Spine takes Hips as its child: Hips → Spine → Hips */
    expect_json_failure("{\"name\":\"Root\",\"children\":[1],\"extras\":{\"a\":1}},{\"name\":\"Hips\",\"children\":[2]},{\"name\":\"Spine\",",
                        "{\"name\":\"Root\",\"extras\":{\"a\":1}},{\"name\":\"Hips\",\"children\":[2]},{\"name\":\"Spine\",\"children\":[1],",
                        TB_ERR_HIERARCHY, "/nodes/1", "cycle.glb");
}

static void rejects_node_with_two_parents(void **s)
{
    (void)s;
    expect_json_failure("{\"name\":\"Spine\",", "{\"name\":\"Spine\",\"children\":[1],", TB_ERR_HIERARCHY,
                        "/nodes/2/children/0", "two_parents.glb");
}

static void rejects_child_out_of_range(void **s)
{
    (void)s;
    expect_json_failure("{\"name\":\"Hips\",\"children\":[2]}", "{\"name\":\"Hips\",\"children\":[99]}", TB_ERR_INDEX,
                        "/nodes/1/children/0", "child_range.glb");
}

static void rejects_vertex_index_past_vertex_count(void **s)
{
    (void)s;
    uint16_t bad = 9;
    memcpy(g_bin + 128 + 4, &bad, 2);
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    fill_bin();
    expect_failure(b, TB_ERR_INDEX, "/accessors/3", "vertex_index.glb");
    free(b.p);
}

static void rejects_joint_index_past_skin(void **s)
{
    (void)s;
    g_bin[48 + 1] = 7; /* vertex 0, influence 1 → joint 7 of 2 (weight 0 there: make it count) */
    float w[4] = {0.5f, 0.5f, 0, 0};
    memcpy(g_bin + 64, w, 16);
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    fill_bin();
    expect_failure(b, TB_ERR_INDEX, "/accessors/1", "joint_index.glb");
    free(b.p);
}

static void rejects_draco_compression(void **s)
{
    (void)s;
    if (tb_can_decode("KHR_draco_mesh_compression"))
        skip(); /* built with libdraco: tests/test_decompress.c */
    expect_json_failure("\"extensionsUsed\":[\"EXT_unknown_but_optional\"],",
                        "\"extensionsUsed\":[\"KHR_draco_mesh_compression\"],\"extensionsRequired\":[\"KHR_draco_mesh_compression\"],",
                        TB_ERR_UNSUPPORTED, "/extensionsRequired/0", "draco.glb");
}

static void rejects_unknown_required_extension(void **s)
{
    (void)s;
    expect_json_failure("\"extensionsUsed\":[\"EXT_unknown_but_optional\"],",
                        "\"extensionsUsed\":[\"EXT_who_knows\"],\"extensionsRequired\":[\"EXT_who_knows\"],",
                        TB_ERR_UNSUPPORTED, "/extensionsRequired/0", "unknown_ext.glb");
}

static void rejects_bad_base64_data_uri(void **s)
{
    (void)s;
    expect_json_failure("\"buffers\":[{\"byteLength\":312}]",
                        "\"buffers\":[{\"byteLength\":312},{\"uri\":\"data:application/octet-stream;base64,AA*A\",\"byteLength\":3}]",
                        TB_ERR_URI, "/buffers/1/uri", "base64.glb");
}

static void rejects_missing_primitive_attributes(void **s)
{
    (void)s;
    expect_json_failure("{\"attributes\":{\"POSITION\":0,\"JOINTS_0\":1,\"WEIGHTS_0\":2},", "{\"attrs\":{},",
                        TB_ERR_MISSING_FIELD, "/meshes/0/primitives/0/attributes", "no_attrs.glb");
}

static void rejects_sampler_input_out_of_range(void **s)
{
    (void)s;
    expect_json_failure("{\"input\":5,", "{\"input\":55,", TB_ERR_INDEX, "/animations/0/samplers/0/input",
                        "sampler.glb");
}

static void rejects_non_finite_key_time(void **s)
{
    (void)s;
    float nan = NAN;
    memcpy(g_bin + 276, &nan, 4);
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    fill_bin();
    expect_failure(b, TB_ERR_NONFINITE, "/accessors/5", "nan_time.glb");
    free(b.p);
}

static void rejects_not_a_gltf_at_all(void **s)
{
    (void)s;
    static const char zip[] = "PK\x03\x04 this is a zip";
    bytes b = {(uint8_t *)zip, sizeof zip - 1};
    expect_failure(b, TB_ERR_GLB_MAGIC, "byte 0", "zip.glb");
}

static void rejects_inverse_bind_count_too_small(void **s)
{
    (void)s;
    expect_json_failure("\"componentType\":5126,\"count\":2,\"type\":\"MAT4\"",
                        "\"componentType\":5126,\"count\":1,\"type\":\"MAT4\"", TB_ERR_INVALID, "/accessors/4",
                        "ibm_count.glb");
}

/* The parsed view and the warnings as text, every field, floats exact. */
static char *view_text(const tb_doc *doc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    const tb_gltf *g = tb_doc_gltf(doc);
    fprintf(f, "%d %d %d %d %d %d %d %d %d\n", g->accessor_count, g->node_count, g->skin_count, g->mesh_count,
            g->animation_count, g->buffer_view_count, g->scene_count, g->material_count, g->scene);
    for (int i = 0; i < g->accessor_count; i++) {
        const tb_gltf_accessor *a = &g->accessors[i];
        fprintf(f, "a %d %zu %d %d %zu %d %d %d\n", a->buffer_view, a->byte_offset, a->component_type, a->normalized,
                a->count, a->components, a->has_sparse, a->has_minmax);
    }
    for (int i = 0; i < g->node_count; i++) {
        const tb_gltf_node *n = &g->nodes[i];
        fprintf(f, "n %s %d %d %d %d %d %d:", n->name ? n->name : "-", n->parent, n->mesh, n->skin, n->child_count,
                n->has_matrix, n->in_scene);
        for (int k = 0; k < n->child_count; k++)
            fprintf(f, " %d", n->children[k]);
        for (int k = 0; k < 3; k++)
            fprintf(f, " %a %a", (double)n->local.t[k], (double)n->local.s[k]);
        for (int k = 0; k < 4; k++)
            fprintf(f, " %a", (double)n->local.r[k]);
        for (int k = 0; k < 16; k++)
            fprintf(f, " %a", (double)n->world[k]);
        fputc('\n', f);
    }
    for (int i = 0; i < g->skin_count; i++) {
        const tb_gltf_skin *k = &g->skins[i];
        fprintf(f, "s %s %d %d %d:", k->name ? k->name : "-", k->joint_count, k->inverse_bind_matrices, k->skeleton);
        for (int j = 0; j < k->joint_count; j++)
            fprintf(f, " %d", k->joints[j]);
        fputc('\n', f);
    }
    for (int i = 0; i < g->mesh_count; i++) {
        const tb_gltf_mesh *m = &g->meshes[i];
        fprintf(f, "m %s %d\n", m->name ? m->name : "-", m->primitive_count);
        for (int k = 0; k < m->primitive_count; k++) {
            const tb_gltf_primitive *p = &m->primitives[k];
            fprintf(f, "p %d %d %d %d %d %d %d", p->mode, p->indices, p->position, p->normal, p->tangent, p->set_count,
                    p->material);
            for (int t = 0; t < TB_MAX_SETS; t++)
                fprintf(f, " %d %d %d %d", p->texcoord[t], p->color[t], p->joints[t], p->weights[t]);
            fputc('\n', f);
        }
    }
    for (int i = 0; i < g->animation_count; i++) {
        const tb_gltf_animation *an = &g->animations[i];
        fprintf(f, "an %s %d %d %a\n", an->name ? an->name : "-", an->channel_count, an->sampler_count,
                (double)an->duration_s);
        for (int k = 0; k < an->channel_count; k++)
            fprintf(f, "c %d %d %d\n", an->channels[k].sampler, an->channels[k].node, (int)an->channels[k].path);
        for (int k = 0; k < an->sampler_count; k++)
            fprintf(f, "q %d %d %d\n", an->samplers[k].input, an->samplers[k].output, (int)an->samplers[k].interp);
    }
    for (int i = 0; i < tb_doc_warning_count(doc); i++)
        fprintf(f, "w %s\n", tb_doc_warning(doc, i));
    fclose(f);
    return text;
}

/* tb__doc_refresh_kept (the transfer's and the bake's refresh: clips and
 * accessors added, the skinned meshes unchanged) gives the view and the
 * warnings a full refresh gives: a node's warning, then an added clip's,
 * then the skinned meshes' kept (once, last); a clip added makes the view
 * differ from the one before. */
static void kept_refresh_is_a_full_refresh_over_unchanged_meshes(void **s)
{
    (void)s;
    float w[4] = {0.7f, 0, 0, 0};
    memcpy(g_bin + 64, w, 16);
    char *json = json_with("{\"name\":\"Spine\",", "{\"name\":\"Spine\",\"rotation\":[0,0,0,2],");
    bytes b = make_glb(json, g_bin, sizeof g_bin);
    free(json);
    fill_bin();
    tb_doc *doc;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &doc), TB_OK);
    free(b.p);
    char *loaded = view_text(doc);
    assert_int_equal(tb__doc_refresh_kept(doc, &err), TB_OK);
    char *again = view_text(doc);
    assert_string_equal(again, loaded);
    assert_int_equal(tb_doc_warning_count(doc), 2); /* the node's, the weights' */
    /* a clip added as the transfer adds one, keys on node 0's rotation, its
     * times decreasing (a warning of the clips' parse) */
    const float times[2] = {0.5f, 0}, rot[8] = {0, 0, 0, 1, 0, 0.5f, 0, 0.8660254f};
    int in = tb_doc_add_accessor(doc, times, 2, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
    int out = tb_doc_add_accessor(doc, rot, 2, TB_COMPONENT_FLOAT, "VEC4", 0, 0);
    assert_true(in >= 0 && out >= 0);
    json_t *anims = json_object_get(tb_doc_json(doc), "animations");
    json_array_append_new(anims, json_pack("{s:s,s:[{s:i,s:i}],s:[{s:i,s:{s:i,s:s}}]}", "name", "Added", "samplers",
                                           "input", in, "output", out, "channels", "sampler", 0, "target", "node", 0,
                                           "path", "rotation"));
    assert_int_equal(tb__doc_refresh_kept(doc, &err), TB_OK);
    char *kept = view_text(doc);
    assert_string_not_equal(kept, loaded);
    assert_int_equal(tb_doc_gltf(doc)->animation_count, 2);
    assert_int_equal(tb_doc_warning_count(doc), 3);
    assert_non_null(strstr(tb_doc_warning(doc, 0), "not unit"));
    assert_non_null(strstr(tb_doc_warning(doc, 1), "key times decrease"));
    assert_non_null(strstr(tb_doc_warning(doc, 2), "do not sum to 1"));
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    char *full = view_text(doc);
    assert_string_equal(kept, full);
    /* and once more after either: the same (each keeps the check's only) */
    assert_int_equal(tb__doc_refresh_kept(doc, &err), TB_OK);
    char *twice = view_text(doc);
    assert_string_equal(twice, full);
    free(loaded);
    free(again);
    free(kept);
    free(full);
    free(twice);
    tb_doc_free(doc);
}

/* A document whose last parse failed the skinned meshes' check (a
 * negative weight written into it): a kept refresh checks again and fails
 * as a full one does, it does not keep a check that failed. */
static void kept_refresh_after_a_failed_check_checks_again(void **s)
{
    (void)s;
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    tb_doc *doc;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &doc), TB_OK);
    free(b.p);
    const int weights = tb_doc_gltf(doc)->meshes[0].primitives[0].weights[0];
    float w[16] = {1, 0, 0, 0, -0.5f, 1.5f, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    assert_int_equal(tb_doc_replace_accessor_data(doc, weights, w, TB_COMPONENT_FLOAT, &err), TB_OK);
    assert_int_equal(tb_doc_refresh(doc, &err), TB_ERR_INVALID);
    assert_non_null(strstr(err.message, "negative weight"));
    memset(&err, 0, sizeof err);
    assert_int_equal(tb__doc_refresh_kept(doc, &err), TB_ERR_INVALID);
    assert_non_null(strstr(err.message, "negative weight"));
    tb_doc_free(doc);
}

static void warns_but_accepts_unnormalised_weights(void **s)
{
    (void)s;
    float w[4] = {0.7f, 0, 0, 0};
    memcpy(g_bin + 64, w, 16);
    bytes b = make_glb(k_valid_json, g_bin, sizeof g_bin);
    fill_bin();
    tb_doc *doc;
    tb_error err;
    assert_int_equal(load_bytes(b, &err, &doc), TB_OK);
    assert_int_equal(tb_doc_warning_count(doc), 1);
    assert_non_null(strstr(tb_doc_warning(doc, 0), "do not sum to 1"));
    /* re-parsing after an edit reports it once, not twice */
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    assert_int_equal(tb_doc_warning_count(doc), 1);
    tb_doc_free(doc);
    free(b.p);
}

static int setup(void **s)
{
    (void)s;
    fill_bin();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_file_loads_and_decodes),
        cmocka_unit_test(untouched_glb_round_trip_is_byte_identical_in_meaning),
        cmocka_unit_test(corpus_round_trips_keep_json_and_values),
        cmocka_unit_test(gltf_with_external_and_data_buffers_merges_losslessly),
        cmocka_unit_test(every_component_type_decodes),
        cmocka_unit_test(appended_accessor_reads_back_and_saves),
        cmocka_unit_test(borrowed_bin_is_copied_on_append_and_outlives_the_original),
        cmocka_unit_test(clone_is_the_written_and_loaded_document_on_one_bin),
        cmocka_unit_test(input_is_never_modified_and_output_replaced_atomically),
        cmocka_unit_test(mesh_without_skin_is_reported),
        cmocka_unit_test(warns_but_accepts_unnormalised_weights),
        cmocka_unit_test(rejects_empty_file),
        cmocka_unit_test(rejects_truncated_glb),
        cmocka_unit_test(rejects_truncated_header),
        cmocka_unit_test(rejects_bad_magic),
        cmocka_unit_test(rejects_not_a_gltf_at_all),
        cmocka_unit_test(rejects_glb_version_1),
        cmocka_unit_test(rejects_length_shorter_than_file),
        cmocka_unit_test(rejects_chunk_longer_than_file),
        cmocka_unit_test(rejects_bin_chunk_first),
        cmocka_unit_test(rejects_json_syntax_error_with_line_and_column),
        cmocka_unit_test(rejects_wrong_json_type),
        cmocka_unit_test(rejects_missing_asset),
        cmocka_unit_test(rejects_accessor_view_index_out_of_range),
        cmocka_unit_test(rejects_accessor_past_its_view),
        cmocka_unit_test(rejects_view_past_its_buffer),
        cmocka_unit_test(rejects_buffer_longer_than_bin_chunk),
        cmocka_unit_test(rejects_misaligned_component_data),
        cmocka_unit_test(rejects_nan_position),
        cmocka_unit_test(rejects_infinite_inverse_bind_matrix),
        cmocka_unit_test(rejects_non_finite_key_time),
        cmocka_unit_test(rejects_missing_external_file),
        cmocka_unit_test(rejects_skin_joint_outside_scene),
        cmocka_unit_test(rejects_node_cycle),
        cmocka_unit_test(rejects_node_with_two_parents),
        cmocka_unit_test(rejects_child_out_of_range),
        cmocka_unit_test(rejects_vertex_index_past_vertex_count),
        cmocka_unit_test(rejects_joint_index_past_skin),
        cmocka_unit_test(rejects_inverse_bind_count_too_small),
        cmocka_unit_test(rejects_draco_compression),
        cmocka_unit_test(rejects_unknown_required_extension),
        cmocka_unit_test(rejects_bad_base64_data_uri),
        cmocka_unit_test(rejects_missing_primitive_attributes),
        cmocka_unit_test(rejects_sampler_input_out_of_range),
        cmocka_unit_test(kept_refresh_is_a_full_refresh_over_unchanged_meshes),
        cmocka_unit_test(kept_refresh_after_a_failed_check_checks_again),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
