/* Private: the synthetic characters' ground truth as a jansson tree (the
 * public tb_synth_build / tb_synth_onto give it as JSON text). Used by the
 * CLI and the tests that read the truth. Not installed. */
#ifndef TB_SYNTH_JSON_H
#define TB_SYNTH_JSON_H

#include "gltf/doc_json.h"
#include "tailbone/synth.h"

/* As tb_synth_build / tb_synth_onto, with *truth (when truth is non-NULL) a
 * new object (json_decref). */
tb_result tb_synth_build_json(tb_doc **out, const char *variant, const tb_synth_desc *desc, json_t **truth,
                              tb_error *err);
tb_result tb_synth_onto_json(tb_doc **out, const tb_doc *body, const char *fixture, const tb_synth_desc *desc,
                             json_t **truth, tb_error *err);

#endif
