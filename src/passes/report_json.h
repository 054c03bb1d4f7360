/* Private: the reports as jansson trees, which the public *_json_text
 * serialisers dump (include/tailbone/ needs no jansson). The CLI builds on
 * these to add its own fields; the library and the CLI write the same JSON.
 * Not installed. */
#ifndef TB_REPORT_JSON_H
#define TB_REPORT_JSON_H

#include "gltf/doc_json.h"
#include "tailbone/appendage.h"
#include "tailbone/fix.h"
#include "tailbone/retarget.h"

/* Each returns a new object (json_decref) or NULL when out of memory. */
json_t *tb_appendage_report_json(const tb_appendage_report *rep);
json_t *tb_retarget_report_json(const tb_retarget_report *rep);
json_t *tb_fix_report_json(const tb_fix_report *rep);

#endif
