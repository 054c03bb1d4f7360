/* Private: the document's JSON tree (jansson) and JSON text, kept out of the
 * public headers (include/tailbone/ needs no jansson). Used by the library's
 * passes that edit documents, the CLI and the tests. Not installed. */
#ifndef TB_DOC_JSON_H
#define TB_DOC_JSON_H

#include <jansson.h>

#include "tailbone/gltf.h"

/* The document's JSON tree, borrowed: valid until the doc is freed; call
 * tb_doc_refresh after editing it. */
json_t *tb_doc_json(tb_doc *doc);

/* j as JSON text, as the CLI writes reports: indented by `indent` spaces (0:
 * one line), reals to 6 significant digits; free() it. NULL when out of
 * memory. */
char *tb__json_text(const json_t *j, int indent);

#endif
