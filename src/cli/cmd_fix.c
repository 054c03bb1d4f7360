/* tailbone fix IN -o OUT — give a tail its own bone chain (SPEC A8/A9). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tailbone/appendage.h"

int tb_cmd_fix(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *report = NULL;
    int as_json = 0, quiet = 0;
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    for (int i = 1; i < argc; i++) {
        int o;
        if (tb_cli_is(argv[i], "-h", "--help")) {
            printf("usage: tailbone fix IN -o OUT [--mode chain|rigid] [--report FILE.json] [--rigid-wide]\n"
                   "                    [--pelvis NAME] [--skin N] [--json] [-q]\n\n"
                   "Finds the appendages (as `tailbone detect`) and repairs them (SPEC A8/A9):\n"
                   "a tail on the pelvis, or a tail rooted on the spine, gets a bone chain Tail_1..Tail_K\n"
                   "+ Tail_End (a second tail TailB_*, ...) and skin weights along it; a carried object\n"
                   "on the spine is bound rigidly to its bone; capes, skirts, ears and hair are left as\n"
                   "rigged. Everything else in the file is kept. IN is never modified.\n"
                   "When nothing needs changing (no tail, or the tail already has its Tail_* chain),\n"
                   "OUT is still written, as a lossless copy identical to `tailbone copy IN OUT`.\n"
                   "  -o, --output OUT    the repaired GLB (required)\n"
                   "  --mode chain|rigid  chain (default) or rigid: tail vertices 1.0 on Hips (A8)\n"
                   "  --report FILE.json  write the report as JSON\n"
                   "  --rigid-wide        bind capes and skirts rigidly to their bone (never a default)\n"
                   "  --pelvis NAME       the pelvis joint when no Hips role is recognised\n"
                   "  --skin N            the skin to repair (default: the one with most vertices)\n"
                   "  --json              print the report as JSON instead of the table\n"
                   "  -q, --quiet         print only errors\n");
            return TB_EXIT_OK;
        } else if (tb_cli_is(argv[i], "-o", "--output") || !strcmp(argv[i], "--report") ||
                   !strcmp(argv[i], "--mode")) {
            if (i + 1 >= argc)
                return tb_cli_usage_error("fix", "%s needs a value", argv[i]);
            const char *v = argv[++i];
            if (!strcmp(argv[i - 1], "--report")) {
                report = v;
            } else if (!strcmp(argv[i - 1], "--mode")) {
                if (!strcmp(v, "chain"))
                    d.mode = TB_FIX_CHAIN;
                else if (!strcmp(v, "rigid"))
                    d.mode = TB_FIX_RIGID;
                else
                    return tb_cli_usage_error("fix", "--mode is chain or rigid, not '%s'", v);
            } else {
                out = v;
            }
        } else if (!strcmp(argv[i], "--json")) {
            as_json = 1;
        } else if (tb_cli_is(argv[i], "-q", "--quiet")) {
            quiet = 1;
        } else if ((o = tb_cli_appendage_options("fix", argc, argv, &i, &d)) >= 0) {
            if (o)
                return o;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return tb_cli_usage_error("fix", "unknown option '%s'", argv[i]);
        } else if (!in) {
            in = argv[i];
        } else {
            return tb_cli_usage_error("fix", "too many arguments");
        }
    }
    if (!in || !out)
        return tb_cli_usage_error("fix", "needs IN and -o OUT");
    tb_doc *doc = tb_cli_load(in, 1);
    if (!doc)
        return TB_EXIT_FAIL;
    tb_error err = {0};
    tb_appendage_report rep;
    int rc = TB_EXIT_OK;
    if (tb_appendage_fix(&rep, doc, &d, &err) != TB_OK) {
        tb_doc_free(doc);
        return tb_cli_error(in, &err);
    }
    json_t *j = tb_appendage_report_json(&rep);
    json_object_set_new(j, "file", json_string(in));
    json_object_set_new(j, "output", json_string(out));
    if (report && json_dump_file(j, report, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) != 0) {
        fprintf(stderr, "tailbone: %s: cannot write the report\n", report);
        rc = TB_EXIT_FAIL;
    }
    if (rc == TB_EXIT_OK && tb_doc_save(doc, out, &err) != TB_OK)
        rc = tb_cli_error(out, &err);
    if (rc == TB_EXIT_OK && !quiet) {
        if (as_json) {
            char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            puts(s);
            free(s);
        } else {
            printf("file: %s\n", in);
            tb_cli_print_appendages(stdout, &rep, rep.changed);
            printf("%s; wrote %s\n", rep.message, out);
        }
    }
    json_decref(j);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
    return rc;
}
