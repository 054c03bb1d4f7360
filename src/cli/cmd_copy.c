/* tailbone copy IN OUT — lossless round trip through the reader and writer. */
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"

int tb_cmd_copy(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int quiet = 0;
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {"quiet", no_argument, NULL, 'q'}, {0}};
    tb_cli_args p;
    tb_cli_args_init(&p, "copy", argc, argv, "hq", opts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        if (c == TB_CLI_BAD) {
            return TB_EXIT_USAGE;
        } else if (c == 'h') {
            printf("usage: tailbone copy IN OUT [-q]\n\n"
                   "Reads IN (.glb or .gltf with external/data: buffers) and writes it to OUT as a\n"
                   "GLB, touching nothing: every JSON field and every accessor value is kept.\n"
                   "External buffers and images are merged into the BIN chunk.\n"
                   "  -q, --quiet   do not print the input's warnings\n"
                   "OUT may not be IN (--in-place allows it) nor an existing non-regular file.\n"
                   "IN may be - (stdin: a GLB, or a .gltf whose buffers are data: URIs) and OUT - (stdout).\n");
            return TB_EXIT_OK;
        } else if (c == 'q') {
            quiet = 1;
        } else if (!in) {
            in = p.value;
        } else if (!out) {
            out = p.value;
        } else {
            return tb_cli_usage_error("copy", "too many arguments");
        }
    }
    if (!in || !out)
        return tb_cli_usage_error("copy", "needs IN and OUT");
    if (tb_cli_is_stdio(out))
        tb_cli_stdout_reserve();
    const char *inputs[1] = {in};
    if (tb_cli_check_output(out, inputs, 1) != TB_EXIT_OK)
        return TB_EXIT_FAIL;
    tb_doc *doc = tb_cli_load(in, quiet);
    if (!doc)
        return TB_EXIT_FAIL;
    int rc = tb_cli_save_doc(doc, out);
    tb_doc_free(doc);
    return rc;
}
