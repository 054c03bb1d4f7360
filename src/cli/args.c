/* Command-line options of every command through getopt_long (args.h). */
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"

void tb_cli_args_init(tb_cli_args *p, const char *cmd, int argc, char **argv, const char *letters,
                      const struct option *longopts)
{
    memset(p, 0, sizeof *p);
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    /* '-': operands come back in order as TB_CLI_OPERAND (argv is never
     * permuted, so argv indices stay meaningful); ':': a missing value is
     * told apart from an unknown option */
    snprintf(p->letters, sizeof p->letters, "-:%s", letters ? letters : "");
    p->longopts = longopts;
    p->first = p->next = 1;
}

/* The option as written (up to '='), for messages. */
static void tb__written(const tb_cli_args *p, char *buf, size_t size)
{
    const char *w = p->first < p->argc ? p->argv[p->first] : "";
    size_t n = strcspn(w, "=");
    if (n >= size)
        n = size - 1;
    memcpy(buf, w, n);
    buf[n] = 0;
}

int tb_cli_args_next(tb_cli_args *p)
{
    if (!p->started) {
        optind = 0; /* glibc: start over (a command may parse after another) */
        opterr = 0; /* our messages, one line each */
        p->started = 1;
    }
    p->value = NULL;
    p->name = NULL;
    if (p->done) { /* after "--": every remaining word is an operand */
        p->first = p->next;
        if (p->next >= p->argc)
            return TB_CLI_END;
        p->value = p->argv[p->next++];
        return TB_CLI_OPERAND;
    }
    p->first = optind ? optind : 1;
    int index = -1;
    int c = getopt_long(p->argc, p->argv, p->letters, p->longopts, &index);
    p->next = optind;
    char written[64];
    tb__written(p, written, sizeof written);
    if (c == -1) { /* "--" or the end */
        p->done = 1;
        p->first = p->next = optind;
        if (p->next >= p->argc)
            return TB_CLI_END;
        p->value = p->argv[p->next++];
        return TB_CLI_OPERAND;
    }
    if (c == 1) {
        p->value = optarg;
        return TB_CLI_OPERAND;
    }
    if (c == '?') {
        if (optopt && strncmp(written, "--", 2))
            tb_cli_usage_error(p->cmd, "unknown option '-%c'", optopt);
        else if (optopt)
            tb_cli_usage_error(p->cmd, "option '%s' takes no value", written);
        else
            tb_cli_usage_error(p->cmd, "unknown option '%s'", written);
        return TB_CLI_BAD;
    }
    if (c == ':') {
        if (strncmp(written, "--", 2))
            tb_cli_usage_error(p->cmd, "option '-%c' needs a value", optopt);
        else
            tb_cli_usage_error(p->cmd, "option '%s' needs a value", written);
        return TB_CLI_BAD;
    }
    if (index >= 0) {
        /* getopt_long takes any unambiguous prefix; we take whole names
         * only, so adding an option never breaks a script's abbreviation */
        if (strcmp(written + 2, p->longopts[index].name)) {
            tb_cli_usage_error(p->cmd, "unknown option '%s' (did you mean '--%s'?)", written,
                               p->longopts[index].name);
            return TB_CLI_BAD;
        }
        p->name = p->longopts[index].name;
    }
    p->value = optarg;
    return c;
}

const char *tb_cli_args_option(const tb_cli_args *p, char *buf, size_t size)
{
    if (p->name)
        snprintf(buf, size, "--%s", p->name);
    else
        tb__written(p, buf, size);
    return buf;
}
