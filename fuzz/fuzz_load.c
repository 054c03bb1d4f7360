/* libFuzzer target for the untrusted-input parser: any bytes → load; when a
 * load succeeds, decode the model and every accessor, write, and reload. */
#include <stdlib.h>

#include "tailbone/gltf.h"
#include "tailbone/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_doc *doc = NULL;
    tb_error err;
    /* base_dir NULL: external URIs must fail cleanly, never touch files */
    if (tb_doc_load_memory(&doc, data, size, "fuzz", NULL, NULL, &err) != TB_OK)
        return 0;
    const tb_gltf *g = tb_doc_gltf(doc);
    for (int i = 0; i < g->accessor_count; i++) {
        size_t n = g->accessors[i].count * (size_t)g->accessors[i].components;
        if (n > (1u << 22))
            continue;
        float *f = malloc(n * sizeof *f);
        if (f) {
            tb_accessor_read_floats(doc, i, f, n, &err);
            free(f);
        }
    }
    tb_model *m = NULL;
    if (tb_model_load(&m, doc, -1, &err) == TB_OK)
        tb_model_free(m);
    uint8_t *out = NULL;
    size_t out_size = 0;
    if (tb_doc_write_memory(doc, &out, &out_size, &err) == TB_OK) {
        tb_doc *again = NULL;
        if (tb_doc_load_memory(&again, out, out_size, "fuzz-rt", NULL, NULL, &err) != TB_OK)
            abort(); /* what we write must load */
        tb_doc_free(again);
        free(out);
    }
    tb_doc_free(doc);
    return 0;
}
