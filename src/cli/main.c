/* tailbone — command-line entry point. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

typedef struct tb_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} tb_command;

static const tb_command tb__commands[] = {
    {"info", tb_cmd_info, "describe a rigged file: skins, roles, tails, meshes, clips, height"},
    {"measure", tb_cmd_measure, "play clips and measure skin stretch of tail and body"},
    {"retarget", tb_cmd_retarget, "put clips from other files on a character by humanoid roles"},
    {"detect", tb_cmd_detect, "find appendages (tail, cape, ears, scabbard) and report them"},
    {"fix", tb_cmd_fix, "give a tail its own bone chain and skin weights, and bake it into the clips"},
    {"preview", tb_cmd_preview, "write an HTML page that plays original and repaired side by side, stretch painted"},
    {"synth", tb_cmd_synth, "write a synthetic rigged humanoid (tail, cape, ears…) and its ground truth"},
    {"copy", tb_cmd_copy, "read and write a file untouched (lossless GLB round trip)"},
};

static void tb__usage(FILE *f)
{
    fprintf(f, "usage: tailbone COMMAND [options]\n\n"
               "Gives auto-rigged characters real tails.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof tb__commands / sizeof tb__commands[0]; i++)
        fprintf(f, "  %-10s %s\n", tb__commands[i].name, tb__commands[i].summary);
    fprintf(f, "\nRun 'tailbone help COMMAND' (or 'tailbone COMMAND --help') for a command's options.\n"
               "Exit status: 0 success, 1 bad input or failed work, 2 usage error.\n\n"
               "Every command also takes:\n"
               "  --allow-uri-outside   let a .gltf's external uri name a file outside its folder\n"
               "                        (absolute paths, ..); by default refused (docs/gltf.md)\n"
               "  --in-place            let -o OUT be the input file itself (refused by default)\n");
}

int main(int argc, char **argv)
{
    /* options every command takes, up to "--" (after it, every word is an
     * operand: a file may be called --in-place) */
    int kept = 1, operands = 0;
    for (int i = 1; i < argc; i++) {
        operands |= !strcmp(argv[i], "--");
        if (operands || !tb_cli_global_option(argv[i]))
            argv[kept++] = argv[i];
    }
    argc = kept;
    argv[argc] = NULL;
    tb_cli_install_signals();
    tb_cli_tune_allocator();
    if (argc < 2) {
        tb__usage(stderr);
        return TB_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help") && argc > 2) { /* tailbone help CMD = tailbone CMD --help */
        for (size_t i = 0; i < sizeof tb__commands / sizeof tb__commands[0]; i++)
            if (!strcmp(argv[2], tb__commands[i].name)) {
                char *args[] = {argv[2], "--help", NULL};
                return tb__commands[i].run(2, args);
            }
        fprintf(stderr, "tailbone: help: unknown command '%s' (see 'tailbone help')\n", argv[2]);
        return TB_EXIT_USAGE;
    }
    if (tb_cli_is(argv[1], "-h", "--help") || !strcmp(argv[1], "help")) {
        tb__usage(stdout);
        return TB_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        int draco = tb_can_decode("KHR_draco_mesh_compression"), meshopt = tb_can_decode("EXT_meshopt_compression");
        printf("tailbone 0.1.0\ncompressed glTF decoders:%s%s%s\n", draco ? " draco" : "", meshopt ? " meshopt" : "",
               draco || meshopt ? "" : " none");
        return TB_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof tb__commands / sizeof tb__commands[0]; i++)
        if (!strcmp(argv[1], tb__commands[i].name))
            return tb__commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tailbone: unknown command '%s' (see 'tailbone help')\n", argv[1]);
    return TB_EXIT_USAGE;
}
