/* Shared pieces of the tailbone command-line tool. */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <stdio.h>

#include <jansson.h>

#include "gltf/doc_json.h"
#include "passes/report_json.h"
#include "synth/synth_json.h"
#include "tailbone/common.h"
#include "tailbone/gltf.h"

/* Exit codes: 0 success, 1 the input/work failed, 2 usage error. */
enum { TB_EXIT_OK = 0, TB_EXIT_FAIL = 1, TB_EXIT_USAGE = 2 };

/* Prints "tailbone: FILE: WHERE: message (name)" on stderr; returns TB_EXIT_FAIL. */
int tb_cli_error(const char *file, const tb_error *err);
/* The same line to f (a clip's buffered error stream). */
int tb_cli_error_to(FILE *f, const char *file, const tb_error *err);
/* Prints one line, "tailbone CMD: message (see 'tailbone help CMD')"; returns TB_EXIT_USAGE. */
int tb_cli_usage_error(const char *cmd, const char *fmt, ...);
/* Loads a document, printing the error and its warnings (unless quiet). */
tb_doc *tb_cli_load(const char *path, int quiet);
/* tb_cli_load in two halves, for a load on another thread: the load alone,
 * printing nothing (NULL and *err on failure; reads only what the options
 * set before, so any thread may call it), then, on the main thread, what
 * tb_cli_load would have printed for it (doc NULL: the error). The second
 * returns doc. */
tb_doc *tb_cli_load_silent(const char *path, tb_error *err);
tb_doc *tb_cli_load_tell(const char *path, tb_doc *doc, const tb_error *err, int quiet);
/* A clip name for a table column of `width` characters: the part after the
 * last '|' (Blender's "Armature|" prefixes) when there is one, shortened
 * with a trailing '~' when still too long. Returns buf. */
const char *tb_cli_clip_label(const char *name, char *buf, size_t size, int width);
/* Writes j as JSON text (json_dumps flags) through a temporary file renamed
 * over path; on failure prints one line naming path and returns
 * TB_EXIT_FAIL. */
int tb_cli_save_json(const char *path, const json_t *j, size_t flags);
/* --allow-uri-outside and --in-place, taken by every command (main.c):
 * returns 1 and records it when arg is one of them. */
int tb_cli_global_option(const char *arg);
/* Installs SIGINT/SIGTERM/SIGHUP/SIGXFSZ handlers that remove the temporary
 * file of a save in progress, then die of the signal. */
void tb_cli_install_signals(void);
/* The allocator's settings for a process that runs one job and exits
 * (glibc: each heap grows 8 MiB at a time; elsewhere nothing). */
void tb_cli_tune_allocator(void);
/* Saves through a temporary file the signal handlers know about; on failure
 * prints one line naming path and returns TB_EXIT_FAIL. */
int tb_cli_save_doc(const tb_doc *doc, const char *path);
int tb_cli_save_file(const char *path, const void *data, size_t size);
/* Before any work: refuses (one line, TB_EXIT_FAIL) an output that exists
 * and is not a regular file, or that is one of the inputs (same device and
 * inode; inputs[0], the main input, is allowed with --in-place). */
int tb_cli_check_output(const char *out, const char *const *inputs, int input_count);
/* Writes the global options in effect (as given on the command line) into
 * out (room for 2); returns how many: for a child run of the same program. */
int tb_cli_global_args(const char **out);
/* "-" as a file name: stdin for an input, stdout for an output (cli.c).
 * Before any other output, a command writing a file to stdout calls
 * tb_cli_stdout_reserve(): stdout then goes to stderr (reports, tables),
 * and tb_cli_save_doc(doc, "-") writes to the real stdout. */
int tb_cli_is_stdio(const char *path);
void tb_cli_stdout_reserve(void);
/* 1 if path names an existing directory. */
int tb_cli_is_dir(const char *path);

/* fix in batch mode (batch.c): several inputs or folders, -o OUTDIR. mark[i]
 * says what argv[i] is to the batch: an input, an option for every file's
 * fix (passed as given), or one the batch itself takes (-o, -j, --force…). */
enum { TB_CLI_ARG_PASS = 0, TB_CLI_ARG_INPUT, TB_CLI_ARG_BATCH };
int tb_cli_fix_batch(int argc, char **argv, const unsigned char *mark, const char *outdir, int jobs, int force,
                     int quiet);

/* 1 if argv[i] equals a or b. */
int tb_cli_is(const char *arg, const char *a, const char *b);
/* Detection without repair: marks in mask[vertex_count] the vertices of
 * every appendage classified as a tail (what `measure` and `preview` use
 * on an unrepaired file); returns how many it marked. (cmd_measure.c) */
struct tb_model;
size_t tb_cli_detect_tail_mask(const struct tb_model *m, uint8_t *mask);

int tb_cmd_info(int argc, char **argv);
int tb_cmd_copy(int argc, char **argv);
int tb_cmd_synth(int argc, char **argv);
int tb_cmd_detect(int argc, char **argv);
int tb_cmd_fix(int argc, char **argv);
int tb_cmd_retarget(int argc, char **argv);
int tb_cmd_measure(int argc, char **argv);
int tb_cmd_preview(int argc, char **argv);

/* The preview page (cmd_preview.c): original and/or repaired (either may be
 * NULL); `command` the fix command line the page adds spring options to;
 * bake (may be NULL: SPEC defaults) the options the repaired file was baked
 * with. Prints one line and returns TB_EXIT_FAIL on failure (or when built
 * without the page). */
struct tb_bake_desc;
/* TB_EXIT_OK when this program carries the page; else prints one line
 * naming out and what the build lacked, and returns TB_EXIT_FAIL. */
int tb_cli_preview_check(const char *out);
int tb_cli_write_preview(const char *out, const char *original, const char *repaired, const char *command,
                         const struct tb_bake_desc *bake);

/* Shared by detect and fix (cmd_detect.c). */
struct tb_appendage_report;
struct tb_appendage_desc;
void tb_cli_print_appendages(FILE *f, const struct tb_appendage_report *rep, int after);
/* --pelvis/--role/--skin/--rigid-wide: the rows of a command's option table
 * (args.h) and their keys; tb_cli_appendage_option takes one: -1 not ours,
 * 0 taken, else a usage exit code. --role needs d->roles pointing at an
 * array of TB_CLI_MAX_ROLES strings. */
#define TB_CLI_MAX_ROLES 64
enum { TB_CLI_OPT_PELVIS = 0x1000, TB_CLI_OPT_ROLE, TB_CLI_OPT_SKIN, TB_CLI_OPT_RIGID_WIDE };
#define TB_CLI_APPENDAGE_OPTIONS                                                                                     \
    {"pelvis", required_argument, NULL, TB_CLI_OPT_PELVIS}, {"role", required_argument, NULL, TB_CLI_OPT_ROLE},      \
        {"skin", required_argument, NULL, TB_CLI_OPT_SKIN}, {"rigid-wide", no_argument, NULL, TB_CLI_OPT_RIGID_WIDE}
int tb_cli_appendage_option(const char *cmd, int key, const char *value, struct tb_appendage_desc *d);

#endif
