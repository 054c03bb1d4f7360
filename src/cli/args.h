/* Option parsing shared by every command (args.c): getopt_long underneath,
 * so `--opt=value`, `--opt value`, `-o value`, `-ovalue` and `--` all work,
 * with one-line usage errors. A command lists its options once, in a
 * `struct option` table; nothing else keeps a list of them.
 *
 *   tb_cli_args p;
 *   tb_cli_args_init(&p, "fix", argc, argv, "ho:q", tb__options);
 *   for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;)
 *       switch (c) { case TB_CLI_BAD: return TB_EXIT_USAGE; case TB_CLI_OPERAND: … p.value …; case 'o': … }
 *
 * argv is never reordered: argv[p.first .. p.next-1] are the words of the
 * item just returned (batch mode passes them on as given). The parser uses
 * getopt's process-wide state (optind): the program is single-threaded
 * while it parses; the library has no part in it. */
#ifndef TB_CLI_ARGS_H
#define TB_CLI_ARGS_H

#include <getopt.h>
#include <stdio.h>

enum {
    TB_CLI_END = -1,    /* no more words */
    TB_CLI_BAD = -2,    /* a usage error, already printed (one line): exit TB_EXIT_USAGE */
    TB_CLI_OPERAND = 1, /* a word that is not an option: p.value */
    TB_CLI_LONG = 256   /* first key of long-only options */
};

typedef struct tb_cli_args {
    const char *cmd;
    int argc;
    char **argv;
    char letters[64];
    const struct option *longopts;
    const char *value; /* the option's value, or the operand */
    const char *name;  /* the long option's name (no dashes), NULL for a letter */
    int first, next;   /* argv span of the item returned */
    int started, done;
} tb_cli_args;

/* letters: getopt's short options ("o:q"); longopts ends with a zero row. */
void tb_cli_args_init(tb_cli_args *p, const char *cmd, int argc, char **argv, const char *letters,
                      const struct option *longopts);
/* The next option's key (a letter or a longopts val), TB_CLI_OPERAND,
 * TB_CLI_END, or TB_CLI_BAD after printing why. */
int tb_cli_args_next(tb_cli_args *p);
/* The option just returned as the user would recognise it ("--fps", "-o"). */
const char *tb_cli_args_option(const tb_cli_args *p, char *buf, size_t size);

#endif
