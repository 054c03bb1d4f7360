/* libFuzzer target for the whole job on untrusted characters: any bytes →
 * load; when a load succeeds, run tb_fix_run (detect, chain, weights, bake a
 * few keys, measure) and check that what it produced writes and reloads.
 * Seeds: small synthetic characters (scripts/fuzz.sh, `tailbone synth`). */
#include <stdlib.h>
#include <string.h>

#include "tailbone/fix.h"
#include "tailbone/gltf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_doc *in = NULL;
    tb_error err;
    /* base_dir NULL: external URIs fail cleanly, never touch files */
    if (tb_doc_load_memory(&in, data, size, "fuzz", NULL, NULL, &err) != TB_OK)
        return 0;
    tb_fix_desc d;
    memset(&d, 0, sizeof d);
    d.bake.fps = 5; /* few keys: the fuzzer's time goes to inputs, not solving */
    d.bake.max_passes = 3; /* a few warm-up passes and a short settle: the same code, less time */
    d.bake.settle_s = 0.5f;
    d.repair.blend_zone = 0.25f; /* pinned: one pass, no search */
    tb_fix_report rep;
    memset(&rep, 0, sizeof rep);
    tb_doc *out = NULL;
    if (tb_fix_run(&out, in, &d, &rep, &err) == TB_OK && out) {
        uint8_t *bytes = NULL;
        size_t n = 0;
        if (tb_doc_write_memory(out, &bytes, &n, &err) == TB_OK) {
            tb_doc *again = NULL;
            if (tb_doc_load_memory(&again, bytes, n, "fuzz-out", NULL, NULL, &err) != TB_OK)
                abort(); /* what fix writes must load */
            tb_doc_free(again);
            free(bytes);
        }
    }
    tb_fix_report_free(&rep);
    tb_doc_free(out);
    tb_doc_free(in);
    return 0;
}
