/* The public JSON text of the reports (tailbone/appendage.h, fix.h,
 * retarget.h): the same trees the CLI writes (passes/report_json.h), dumped. */
#include <stdlib.h>

#include "passes/report_json.h"

static char *tb__text(json_t *j, int indent)
{
    char *s = tb__json_text(j, indent);
    json_decref(j);
    return s;
}

char *tb_appendage_report_json_text(const tb_appendage_report *rep, int indent)
{
    return tb__text(tb_appendage_report_json(rep), indent);
}

char *tb_fix_report_json_text(const tb_fix_report *rep, int indent)
{
    return tb__text(tb_fix_report_json(rep), indent);
}

char *tb_retarget_report_json_text(const tb_retarget_report *rep, int indent)
{
    return tb__text(tb_retarget_report_json(rep), indent);
}
