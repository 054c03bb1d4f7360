/* The public synth calls (tailbone/synth.h): the truth as JSON text, from
 * the tree the generator builds (synth/synth_json.h). */
#include <stdlib.h>

#include "core/base.h"
#include "synth/synth_json.h"

/* *truth: the tree's text, as `tailbone synth --truth` writes it */
static tb_result tb__truth_text(tb_result r, json_t *tree, char **truth, tb_doc **out, tb_error *err)
{
    if (r == TB_OK && truth && !(*truth = json_dumps(tree, JSON_INDENT(1) | JSON_PRESERVE_ORDER))) {
        if (out) {
            tb_doc_free(*out);
            *out = NULL;
        }
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    json_decref(tree);
    return r;
}

tb_result tb_synth_build(tb_doc **out, const char *variant, const tb_synth_desc *desc, char **truth,
                         tb_error *err)
{
    json_t *tree = NULL;
    if (truth)
        *truth = NULL;
    tb_result r = tb_synth_build_json(out, variant, desc, truth ? &tree : NULL, err);
    return tb__truth_text(r, tree, truth, out, err);
}

tb_result tb_synth_onto(tb_doc **out, const tb_doc *body, const char *fixture, const tb_synth_desc *desc,
                        char **truth, tb_error *err)
{
    json_t *tree = NULL;
    if (truth)
        *truth = NULL;
    tb_result r = tb_synth_onto_json(out, body, fixture, desc, truth ? &tree : NULL, err);
    return tb__truth_text(r, tree, truth, out, err);
}
