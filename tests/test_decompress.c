/* Compressed input at load (src/gltf/decompress.c): meshopt data made here
 * with libmeshoptimizer's encoder decodes to the original values; damaged or
 * out-of-range compressed data fails in one error naming the bufferView;
 * undecodable Draco bytes name the primitive. KHR_meshopt_compression with
 * the v0 bitstream decodes the same; v1 attribute data is refused in one
 * line when the library cannot read it. Without a decoder the
 * extension is refused as before. The real-file check against
 * gltf-transform is tests/node/compressed.test.mjs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "tailbone/gltf.h"

#ifdef TB_HAVE_MESHOPT
#include <meshoptimizer.h>
#endif

#define N_VERT 120
#define N_TRI 100

typedef struct glb {
    uint8_t *p;
    size_t n;
} glb;

static glb make_glb(const char *json, const uint8_t *bin, size_t bin_len)
{
    size_t jl = strlen(json), jp = (jl + 3) & ~(size_t)3, bp = (bin_len + 3) & ~(size_t)3;
    glb g;
    g.n = 12 + 8 + jp + (bin_len ? 8 + bp : 0);
    g.p = calloc(1, g.n);
    uint32_t h[3] = {0x46546C67u, 2, (uint32_t)g.n};
    memcpy(g.p, h, 12);
    uint32_t c0[2] = {(uint32_t)jp, 0x4E4F534Au};
    memcpy(g.p + 12, c0, 8);
    memset(g.p + 20, ' ', jp);
    memcpy(g.p + 20, json, jl);
    if (bin_len) {
        uint32_t c1[2] = {(uint32_t)bp, 0x004E4942u};
        memcpy(g.p + 20 + jp, c1, 8);
        memcpy(g.p + 28 + jp, bin, bin_len);
    }
    return g;
}

#ifdef TB_HAVE_MESHOPT
static float g_pos[N_VERT * 3];
static unsigned g_idx[N_TRI * 3];

/* A GLB whose positions and indices are meshopt-compressed in buffer 0,
 * decoded into fallback buffer 1 (no data, as gltf-transform writes it).
 * `edit` may change the JSON text (printf pattern with the numbers). */
static glb meshopt_glb(int cut_vertex_bytes, long src_offset_add, int count_add)
{
    for (int i = 0; i < N_VERT; i++) {
        g_pos[i * 3 + 0] = (float)(i % 10) * 0.1f;
        g_pos[i * 3 + 1] = (float)(i / 10) * 0.1f;
        g_pos[i * 3 + 2] = (float)((i * 7) % 5) * 0.01f;
    }
    for (int t = 0; t < N_TRI; t++) {
        g_idx[t * 3 + 0] = (unsigned)(t % N_VERT);
        g_idx[t * 3 + 1] = (unsigned)((t + 1) % N_VERT);
        g_idx[t * 3 + 2] = (unsigned)((t + 11) % N_VERT);
    }
    size_t vb = meshopt_encodeVertexBufferBound(N_VERT, 12), ib = meshopt_encodeIndexBufferBound(N_TRI * 3, N_VERT);
    uint8_t *bin = calloc(1, vb + ib + 16);
    size_t vn = meshopt_encodeVertexBuffer(bin, vb, g_pos, N_VERT, 12);
    size_t io = (vn + 3) & ~(size_t)3;
    size_t in = meshopt_encodeIndexBuffer(bin + io, ib, g_idx, N_TRI * 3);
    assert_true(vn > 0 && in > 0);
    size_t fb_idx = N_VERT * 12, fb_len = fb_idx + N_TRI * 3 * 2;
    char json[4096];
    snprintf(json, sizeof json,
             "{\"asset\":{\"version\":\"2.0\"},"
             "\"extensionsUsed\":[\"EXT_meshopt_compression\"],\"extensionsRequired\":[\"EXT_meshopt_compression\"],"
             "\"scene\":0,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0}],"
             "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1}]}],"
             "\"accessors\":[{\"bufferView\":0,\"componentType\":5126,\"count\":%d,\"type\":\"VEC3\","
             "\"min\":[0,0,0],\"max\":[0.9,1.1,0.04]},"
             "{\"bufferView\":1,\"componentType\":5123,\"count\":%d,\"type\":\"SCALAR\"}],"
             "\"bufferViews\":["
             "{\"buffer\":1,\"byteLength\":%zu,\"byteStride\":12,\"target\":34962,\"extensions\":{"
             "\"EXT_meshopt_compression\":{\"buffer\":0,\"byteOffset\":%ld,\"byteLength\":%zu,\"byteStride\":12,"
             "\"count\":%d,\"mode\":\"ATTRIBUTES\"}}},"
             "{\"buffer\":1,\"byteOffset\":%zu,\"byteLength\":%d,\"target\":34963,\"extensions\":{"
             "\"EXT_meshopt_compression\":{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,\"byteStride\":2,"
             "\"count\":%d,\"mode\":\"TRIANGLES\"}}}],"
             "\"buffers\":[{\"byteLength\":%zu},{\"byteLength\":%zu,"
             "\"extensions\":{\"EXT_meshopt_compression\":{\"fallback\":true}}}]}",
             N_VERT, N_TRI * 3, (size_t)N_VERT * 12, src_offset_add, vn - (size_t)cut_vertex_bytes,
             N_VERT + count_add, fb_idx, N_TRI * 3 * 2, io, in, N_TRI * 3, io + in, fb_len);
    glb g = make_glb(json, bin, io + in);
    free(bin);
    return g;
}

static int same_triangle(const uint32_t *a, const unsigned *b)
{
    for (int r = 0; r < 3; r++)
        if (a[r] == b[0] && a[(r + 1) % 3] == b[1] && a[(r + 2) % 3] == b[2])
            return 1;
    return 0;
}
#endif

static void meshopt_decodes_to_the_encoded_values(void **s)
{
    (void)s;
#ifndef TB_HAVE_MESHOPT
    skip();
#else
    assert_true(tb_can_decode("EXT_meshopt_compression"));
    glb g = meshopt_glb(0, 0, 0);
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_result r = tb_doc_load_memory(&doc, g.p, g.n, "m.glb", NULL, NULL, &err);
    if (r != TB_OK)
        fail_msg("%s: %s", err.where, err.message);
    float pos[N_VERT * 3];
    uint32_t idx[N_TRI * 3];
    assert_int_equal(tb_accessor_read_floats(doc, 0, pos, N_VERT * 3, &err), TB_OK);
    assert_int_equal(tb_accessor_read_uints(doc, 1, idx, N_TRI * 3, &err), TB_OK);
    assert_memory_equal(pos, g_pos, sizeof pos); /* the vertex codec is lossless */
    for (int t = 0; t < N_TRI; t++) /* the index codec keeps triangles, maybe rotated */
        assert_true(same_triangle(idx + t * 3, g_idx + t * 3));
    /* the note, and a written file that names no compression and carries no
     * compressed byte: the BIN is the two decoded views */
    assert_true(tb_doc_warning_count(doc) >= 1);
    assert_non_null(strstr(tb_doc_warning(doc, tb_doc_warning_count(doc) - 1),
                           "decoded EXT_meshopt_compression (2 bufferView(s))"));
    uint8_t *out = NULL;
    size_t n = 0;
    assert_int_equal(tb_doc_write_memory(doc, &out, &n, &err), TB_OK);
    uint32_t jlen;
    memcpy(&jlen, out + 12, 4);
    char *json = strndup((const char *)out + 20, jlen);
    assert_null(strstr(json, "meshopt"));
    size_t bin_size = 0;
    tb_doc_bin(doc, &bin_size);
    assert_int_equal(bin_size, ((N_VERT * 12 + 15) & ~15) + N_TRI * 3 * 2);
    free(json);
    /* it reads back as a plain file */
    tb_doc *back = NULL;
    assert_int_equal(tb_doc_load_memory(&back, out, n, "back.glb", NULL, NULL, &err), TB_OK);
    float pos2[N_VERT * 3];
    assert_int_equal(tb_accessor_read_floats(back, 0, pos2, N_VERT * 3, &err), TB_OK);
    assert_memory_equal(pos2, g_pos, sizeof pos2);
    tb_doc_free(back);
    free(out);
    tb_doc_free(doc);
    free(g.p);
#endif
}

#ifdef TB_HAVE_MESHOPT
static void expect_meshopt_failure(int cut, long add, int count_add, tb_result code, const char *where,
                                   const char *text)
{
    glb g = meshopt_glb(cut, add, count_add);
    tb_doc *doc = NULL;
    tb_error err = {0};
    assert_int_equal(tb_doc_load_memory(&doc, g.p, g.n, "m.glb", NULL, NULL, &err), code);
    assert_null(doc);
    assert_string_equal(err.where, where);
    if (!strstr(err.message, text))
        fail_msg("message '%s' lacks '%s'", err.message, text);
    free(g.p);
}
#endif

static void meshopt_damaged_data_is_one_clear_error(void **s)
{
    (void)s;
#ifndef TB_HAVE_MESHOPT
    skip();
#else
    const char *w = "/bufferViews/0/extensions/EXT_meshopt_compression";
    /* compressed bytes cut short: the decoder refuses them */
    expect_meshopt_failure(20, 0, 0, TB_ERR_INVALID, w, "does not decode");
    /* compressed bytes pointed past the end of the buffer */
    expect_meshopt_failure(0, 1 << 20, 0, TB_ERR_BOUNDS, w, "outside the buffer");
    /* more elements than the bufferView holds */
    expect_meshopt_failure(0, 0, 5, TB_ERR_BOUNDS, w, "do not fit the bufferView");
#endif
}

#ifdef TB_HAVE_MESHOPT
/* The same GLB under KHR_meshopt_compression: the names have the same
 * length, so the JSON chunk is edited in place. first_byte (if not 0)
 * replaces the vertex stream's header byte. */
static glb khr_glb(uint8_t first_byte)
{
    glb g = meshopt_glb(0, 0, 0);
    uint32_t jl;
    memcpy(&jl, g.p + 12, 4);
    const char *from = "EXT_meshopt_compression", *to = "KHR_meshopt_compression";
    size_t fl = strlen(from);
    for (size_t i = 20; i + fl <= 20 + (size_t)jl; i++)
        if (!memcmp(g.p + i, from, fl))
            memcpy(g.p + i, to, fl);
    assert_true(g.p[28 + jl] == 0xa0); /* the v0 attribute header libmeshoptimizer 0.18 writes */
    if (first_byte)
        g.p[28 + jl] = first_byte;
    return g;
}
#endif

static void khr_meshopt_decodes_the_v0_bitstream(void **s)
{
    (void)s;
#ifndef TB_HAVE_MESHOPT
    skip();
#else
    assert_true(tb_can_decode("KHR_meshopt_compression"));
    glb g = khr_glb(0);
    tb_doc *doc = NULL;
    tb_error err = {0};
    if (tb_doc_load_memory(&doc, g.p, g.n, "k.glb", NULL, NULL, &err) != TB_OK)
        fail_msg("%s: %s", err.where, err.message);
    float pos[N_VERT * 3];
    uint32_t idx[N_TRI * 3];
    assert_int_equal(tb_accessor_read_floats(doc, 0, pos, N_VERT * 3, &err), TB_OK);
    assert_int_equal(tb_accessor_read_uints(doc, 1, idx, N_TRI * 3, &err), TB_OK);
    assert_memory_equal(pos, g_pos, sizeof pos);
    for (int t = 0; t < N_TRI; t++)
        assert_true(same_triangle(idx + t * 3, g_idx + t * 3));
    assert_non_null(strstr(tb_doc_warning(doc, tb_doc_warning_count(doc) - 1),
                           "decoded KHR_meshopt_compression (2 bufferView(s))"));
    uint8_t *out = NULL;
    size_t n = 0;
    assert_int_equal(tb_doc_write_memory(doc, &out, &n, &err), TB_OK);
    uint32_t jlen;
    memcpy(&jlen, out + 12, 4);
    char *json = strndup((const char *)out + 20, jlen);
    assert_null(strstr(json, "meshopt"));
    free(json);
    free(out);
    tb_doc_free(doc);
    free(g.p);
#endif
}

static void khr_meshopt_v1_data_is_refused_clearly(void **s)
{
    (void)s;
#ifndef TB_HAVE_MESHOPT
    skip();
#else
    glb g = khr_glb(0xa1);
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_result r = tb_doc_load_memory(&doc, g.p, g.n, "k.glb", NULL, NULL, &err);
    free(g.p);
#if MESHOPTIMIZER_VERSION < 230
    /* a v1 header on v0 data: this library cannot read v1 and says so */
    assert_int_equal(r, TB_ERR_UNSUPPORTED);
    assert_null(doc);
    assert_string_equal(err.where, "/bufferViews/0/extensions/KHR_meshopt_compression");
    if (!strstr(err.message, "v1 bitstream (header 0xa1)"))
        fail_msg("message '%s'", err.message);
#else
    /* a library that reads v1 decodes it or finds the data damaged */
    assert_true(r == TB_OK || r == TB_ERR_INVALID);
    tb_doc_free(doc);
#endif
#endif
}

static void draco_garbage_names_the_primitive(void **s)
{
    (void)s;
    uint8_t bin[64];
    for (int i = 0; i < 64; i++)
        bin[i] = (uint8_t)(i * 37 + 11);
    const char *json =
        "{\"asset\":{\"version\":\"2.0\"},"
        "\"extensionsUsed\":[\"KHR_draco_mesh_compression\"],\"extensionsRequired\":[\"KHR_draco_mesh_compression\"],"
        "\"scene\":0,\"scenes\":[{\"nodes\":[0]}],\"nodes\":[{\"mesh\":0}],"
        "\"meshes\":[{\"primitives\":[{\"attributes\":{\"POSITION\":0},\"indices\":1,\"extensions\":{"
        "\"KHR_draco_mesh_compression\":{\"bufferView\":0,\"attributes\":{\"POSITION\":0}}}}]}],"
        "\"accessors\":[{\"componentType\":5126,\"count\":3,\"type\":\"VEC3\",\"min\":[0,0,0],\"max\":[1,1,0]},"
        "{\"componentType\":5123,\"count\":3,\"type\":\"SCALAR\"}],"
        "\"bufferViews\":[{\"buffer\":0,\"byteLength\":64}],\"buffers\":[{\"byteLength\":64}]}";
    glb g = make_glb(json, bin, sizeof bin);
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_result r = tb_doc_load_memory(&doc, g.p, g.n, "d.glb", NULL, NULL, &err);
    assert_null(doc);
    if (tb_can_decode("KHR_draco_mesh_compression")) {
        assert_int_equal(r, TB_ERR_INVALID);
        assert_string_equal(err.where, "/meshes/0/primitives/0/extensions/KHR_draco_mesh_compression");
        assert_non_null(strstr(err.message, "Draco data does not decode"));
    } else {
        /* built without libdraco: the refusal stays */
        assert_int_equal(r, TB_ERR_UNSUPPORTED);
        assert_string_equal(err.where, "/extensionsRequired/0");
    }
    free(g.p);
}

static void without_a_decoder_the_refusal_stays(void **s)
{
    (void)s;
    if (tb_can_decode("EXT_meshopt_compression"))
        skip();
    const char *json = "{\"asset\":{\"version\":\"2.0\"},\"extensionsUsed\":[\"EXT_meshopt_compression\"],"
                       "\"extensionsRequired\":[\"EXT_meshopt_compression\"]}";
    glb g = make_glb(json, NULL, 0);
    tb_doc *doc = NULL;
    tb_error err = {0};
    assert_int_equal(tb_doc_load_memory(&doc, g.p, g.n, "m.glb", NULL, NULL, &err), TB_ERR_UNSUPPORTED);
    assert_string_equal(err.where, "/extensionsRequired/0");
    free(g.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(meshopt_decodes_to_the_encoded_values),
        cmocka_unit_test(meshopt_damaged_data_is_one_clear_error),
        cmocka_unit_test(khr_meshopt_decodes_the_v0_bitstream),
        cmocka_unit_test(khr_meshopt_v1_data_is_refused_clearly),
        cmocka_unit_test(draco_garbage_names_the_primitive),
        cmocka_unit_test(without_a_decoder_the_refusal_stays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
