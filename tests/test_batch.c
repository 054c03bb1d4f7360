/* `tailbone fix DIR_OR_FILE… -o OUTDIR` (batch mode, src/cli/batch.c) and
 * "-" for stdin/stdout (fix, copy, retarget, info). Synthetic characters
 * from `tailbone synth`; a broken file beside them. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gltf/doc_json.h"
#include "support.h"
#include "tailbone/gltf.h"

/* the JSON lines of a batch run, by input file name */
typedef struct lines {
    json_t *arr;
} lines;

static json_t *load_lines(const char *path)
{
    json_t *arr = json_array();
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[16384];
    while (fgets(buf, sizeof buf, f)) {
        json_error_t e;
        json_t *j = json_loads(buf, 0, &e);
        if (!j)
            fail_msg("stdout line is not JSON (%s): %s", e.text, buf);
        json_array_append_new(arr, j);
    }
    fclose(f);
    return arr;
}

static json_t *line_for(json_t *arr, const char *suffix)
{
    size_t i;
    json_t *l;
    json_array_foreach(arr, i, l) {
        const char *f = json_string_value(json_object_get(l, "file"));
        size_t n = strlen(f), m = strlen(suffix);
        if (n >= m && !strcmp(f + n - m, suffix))
            return l;
    }
    fail_msg("no JSON line for %s", suffix);
    return NULL;
}

static const char *status_of(json_t *arr, const char *suffix)
{
    return json_string_value(json_object_get(line_for(arr, suffix), "status"));
}

static char *read_text(const char *path)
{
    size_t n = 0;
    uint8_t *b = tbt_read_file(path, &n);
    assert_non_null(b);
    char *s = realloc(b, n + 1);
    s[n] = 0;
    return s;
}

/* in/a.glb (a tail weighted to a leg), in/sub/b.glb (no tail), in/bad.glb
 * (not glTF), in/notes.txt (not a model) */
static const char *make_inputs(const char *name)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s", tbt_tmp_path(name));
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/sub'", dir, dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg -o '%s/a.glb'", dir), 0);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant plain -o '%s/sub/b.glb'", dir), 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/bad.glb", dir);
    assert_int_equal(tbt_write_file(p, "garbage\n", 8), 0);
    snprintf(p, sizeof p, "%s/notes.txt", dir);
    assert_int_equal(tbt_write_file(p, "x\n", 2), 0);
    return dir;
}

/* runs `tailbone ARGS >OUT 2>ERR`, returns the exit status */
static int run_split(const char *out, const char *err, const char *args)
{
    return tbt_run_cli(NULL, "%s >'%s' 2>'%s'; exit $?", args, out, err);
}

static void batch_folder_one_bad_file(void **s)
{
    (void)s;
    const char *in = make_inputs("bin1");
    char out[4200], args[9000], lines_path[4200], err_path[4200];
    snprintf(out, sizeof out, "%s.out", in);
    snprintf(lines_path, sizeof lines_path, "%s.jsonl", in);
    snprintf(err_path, sizeof err_path, "%s.err", in);
    snprintf(args, sizeof args, "fix '%s' -o '%s' -j 2", in, out);
    /* a failing file does not stop the others; the exit status says one failed */
    assert_int_equal(run_split(lines_path, err_path, args), 1);
    json_t *arr = load_lines(lines_path);
    assert_int_equal(json_array_size(arr), 3); /* notes.txt is no model */
    json_t *a = line_for(arr, "/a.glb"), *b = line_for(arr, "/sub/b.glb"), *bad = line_for(arr, "/bad.glb");
    assert_string_equal(json_string_value(json_object_get(a, "status")), "ok");
    assert_true(json_is_true(json_object_get(a, "tail")));
    json_t *fig = json_object_get(a, "figures");
    assert_int_equal(json_integer_value(json_object_get(fig, "chains")), 1);
    assert_true(json_integer_value(json_object_get(fig, "clips_baked")) > 0);
    double p99 = json_number_value(json_object_get(fig, "tail_p99"));
    assert_true(p99 >= 1.0 && p99 < 1.5); /* the repaired tail does not tear (SPEC C) */
    assert_true(json_number_value(json_object_get(a, "time_s")) > 0);
    assert_string_equal(json_string_value(json_object_get(b, "status")), "unchanged");
    assert_true(json_is_false(json_object_get(b, "tail")));
    assert_string_equal(json_string_value(json_object_get(bad, "status")), "failed");
    const char *e = json_string_value(json_object_get(bad, "error"));
    assert_non_null(e);
    assert_non_null(strstr(e, "bad.glb"));
    assert_non_null(strstr(e, "not a glTF file"));
    /* outputs mirror the folder; the failed file has none */
    char p[4300];
    snprintf(p, sizeof p, "%s/a.glb", out);
    tb_doc *doc = NULL;
    tb_error er;
    assert_int_equal(tb_doc_load(&doc, p, NULL, &er), TB_OK);
    const tb_gltf *g = tb_doc_gltf(doc);
    int tail = 0;
    for (int i = 0; i < g->node_count; i++)
        tail |= g->nodes[i].name && !strcmp(g->nodes[i].name, "Tail_1");
    assert_true(tail);
    tb_doc_free(doc);
    snprintf(p, sizeof p, "%s/sub/b.glb", out);
    assert_true(tbt_file_exists(p));
    snprintf(p, sizeof p, "%s/bad.glb", out);
    assert_false(tbt_file_exists(p));
    /* progress and the summary table on stderr */
    char *err = read_text(err_path);
    assert_non_null(strstr(err, "[3/3]"));
    assert_non_null(strstr(err, "3 file(s): 1 repaired, 1 unchanged, 0 skipped (up to date), 1 failed"));
    free(err);
    json_decref(arr);

    /* resumable: done files are skipped, the failed one is tried again */
    assert_int_equal(run_split(lines_path, err_path, args), 1);
    arr = load_lines(lines_path);
    assert_string_equal(status_of(arr, "/a.glb"), "skipped");
    assert_string_equal(status_of(arr, "/sub/b.glb"), "skipped");
    assert_string_equal(status_of(arr, "/bad.glb"), "failed");
    json_decref(arr);
    /* an input newer than its output is redone */
    char ap[4300];
    snprintf(ap, sizeof ap, "%s/a.glb", in);
    struct timespec ts[2];
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec += 5;
    ts[1] = ts[0];
    assert_int_equal(utimensat(AT_FDCWD, ap, ts, 0), 0);
    assert_int_equal(run_split(lines_path, err_path, args), 1);
    arr = load_lines(lines_path);
    assert_string_equal(status_of(arr, "/a.glb"), "ok");
    assert_string_equal(status_of(arr, "/sub/b.glb"), "skipped");
    json_decref(arr);
    /* --force redoes everything */
    snprintf(args, sizeof args, "fix '%s' -o '%s' --force", in, out);
    assert_int_equal(run_split(lines_path, err_path, args), 1);
    arr = load_lines(lines_path);
    assert_string_equal(status_of(arr, "/a.glb"), "ok");
    assert_string_equal(status_of(arr, "/sub/b.glb"), "unchanged");
    json_decref(arr);
}

static void batch_all_good_files_exit_zero(void **s)
{
    (void)s;
    const char *in = make_inputs("bin2");
    char out[4200], args[9000], lines_path[4200], err_path[4200];
    snprintf(out, sizeof out, "%s.out", in);
    snprintf(lines_path, sizeof lines_path, "%s.jsonl", in);
    snprintf(err_path, sizeof err_path, "%s.err", in);
    /* files named one by one; the output folder is created */
    snprintf(args, sizeof args, "fix '%s/a.glb' '%s/sub/b.glb' -o '%s' -q", in, in, out);
    assert_int_equal(run_split(lines_path, err_path, args), 0);
    json_t *arr = load_lines(lines_path);
    assert_int_equal(json_array_size(arr), 2);
    assert_string_equal(status_of(arr, "/a.glb"), "ok");
    json_decref(arr);
    char *err = read_text(err_path);
    assert_string_equal(err, ""); /* -q: no progress, no table */
    free(err);
    char p[4300];
    snprintf(p, sizeof p, "%s/b.glb", out); /* a file argument keeps only its name */
    assert_true(tbt_file_exists(p));
    /* one file and -o NEWDIR/ (a name ending in '/'): batch mode, folder created */
    snprintf(args, sizeof args, "fix '%s/a.glb' -o '%s.new/' -q", in, out);
    assert_int_equal(run_split(lines_path, err_path, args), 0);
    snprintf(p, sizeof p, "%s.new/a.glb", out);
    assert_true(tbt_file_exists(p));
    arr = load_lines(lines_path);
    assert_int_equal(json_array_size(arr), 1);
    json_decref(arr);
    /* the outputs inside the input folder are never taken as inputs */
    snprintf(args, sizeof args, "fix '%s/sub' -o '%s/sub/fixed'", in, in);
    assert_int_equal(run_split(lines_path, err_path, args), 0);
    assert_int_equal(run_split(lines_path, err_path, args), 0);
    arr = load_lines(lines_path);
    assert_int_equal(json_array_size(arr), 1);
    assert_string_equal(status_of(arr, "/sub/b.glb"), "skipped");
    json_decref(arr);
}

static void batch_usage_errors(void **s)
{
    (void)s;
    const char *in = make_inputs("bin3");
    char *out = NULL;
    /* two inputs with one output name */
    char other[4200];
    snprintf(other, sizeof other, "%s/sub/a.glb", in);
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp '%s/a.glb' '%s'", in, other);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tbt_run_cli(&out, "fix '%s/a.glb' '%s' -o '%s.o'", in, other, in), 2);
    assert_non_null(strstr(out, "would both be written to"));
    free(out);
    /* several inputs need a folder for -o */
    assert_int_equal(tbt_run_cli(&out, "fix '%s/a.glb' '%s/sub/b.glb' -o '%s/bad.glb'", in, in, in), 2);
    assert_non_null(strstr(out, "-o names a folder"));
    free(out);
    /* no --report and no stdout in batch mode */
    assert_int_equal(tbt_run_cli(&out, "fix '%s' -o '%s.o' --report r.json", in, in), 2);
    free(out);
    /* a folder without models */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/empty'", in);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tbt_run_cli(&out, "fix '%s/empty' -o '%s.o'", in, in), 1);
    assert_non_null(strstr(out, "no .glb, .gltf or .vrm file"));
    free(out);
}

static int same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    uint8_t *x = tbt_read_file(a, &na), *y = tbt_read_file(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

static void stdin_and_stdout(void **s)
{
    (void)s;
    const char *in = make_inputs("stdio");
    char a[4200], f1[4200], f2[4200], f3[4200], err_path[4200];
    snprintf(a, sizeof a, "%s/a.glb", in);
    snprintf(f1, sizeof f1, "%s/copy_file.glb", in);
    snprintf(f2, sizeof f2, "%s/copy_pipe.glb", in);
    snprintf(f3, sizeof f3, "%s/copy_out.glb", in);
    snprintf(err_path, sizeof err_path, "%s/err.txt", in);
    /* copy: file to file, pipe to pipe, file to stdout: the same bytes */
    assert_int_equal(tbt_run_cli(NULL, "copy -q '%s' '%s'", a, f1), 0);
    assert_int_equal(tbt_run_cli(NULL, "copy -q - - <'%s' >'%s'", a, f2), 0);
    assert_int_equal(tbt_run_cli(NULL, "copy -q '%s' - >'%s'", a, f3), 0);
    assert_true(same_file(f1, f2));
    assert_true(same_file(f1, f3));
    /* fix to stdout: the GLB alone on stdout, the report on stderr; the same
     * file as fix to a file */
    char fx1[4200], fx2[4200];
    snprintf(fx1, sizeof fx1, "%s/fix_file.glb", in);
    snprintf(fx2, sizeof fx2, "%s/fix_out.glb", in);
    assert_int_equal(tbt_run_cli(NULL, "fix '%s' -o '%s' -q", a, fx1), 0);
    assert_int_equal(tbt_run_cli(NULL, "fix - -o - <'%s' >'%s' 2>'%s'; exit $?", a, fx2, err_path), 0);
    assert_true(same_file(fx1, fx2));
    char *err = read_text(err_path);
    assert_non_null(strstr(err, "wrote -")); /* the report went to stderr */
    free(err);
    /* info from stdin names the same skin as from the file */
    char *o1 = NULL, *o2 = NULL;
    assert_int_equal(tbt_run_cli(&o1, "info --json '%s'", a), 0);
    assert_int_equal(tbt_run_cli(&o2, "info --json - <'%s'", a), 0);
    json_t *j1 = json_loads(o1, 0, NULL), *j2 = json_loads(o2, 0, NULL);
    assert_non_null(j1);
    assert_non_null(j2);
    assert_true(json_equal(json_object_get(j1, "skins"), json_object_get(j2, "skins")));
    json_decref(j1);
    json_decref(j2);
    free(o1);
    free(o2);
    /* retarget: character on stdin, result on stdout */
    char r1[4200], r2[4200];
    snprintf(r1, sizeof r1, "%s/rt_file.glb", in);
    snprintf(r2, sizeof r2, "%s/rt_out.glb", in);
    assert_int_equal(tbt_run_cli(NULL, "retarget '%s/sub/b.glb' --clips '%s' -o '%s' -q", in, a, r1), 0);
    assert_int_equal(tbt_run_cli(NULL, "retarget - --clips '%s' -o - -q <'%s/sub/b.glb' >'%s'", a, in, r2), 0);
    assert_true(same_file(r1, r2));
    /* a bad file on stdin: one line naming "-" */
    char *out = NULL;
    assert_int_equal(tbt_run_cli(&out, "copy - '%s/x.glb' <'%s/bad.glb'", in, in), 1);
    assert_non_null(strstr(out, "tailbone: -: byte 0: not a glTF file"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batch_folder_one_bad_file),
        cmocka_unit_test(batch_all_good_files_exit_zero),
        cmocka_unit_test(batch_usage_errors),
        cmocka_unit_test(stdin_and_stdout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
