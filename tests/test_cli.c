/* The command line itself (src/cli/args.c, main.c): options in both GNU
 * forms, `tailbone help CMD`, and one-line usage errors. Each check runs the
 * built program; the oracle is another form of the same request (bytes of
 * the output, or the --help text), never the program's report of itself. */
#include "support.h"

#include <jansson.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs the CLI with stdout to /dev/null and stderr captured into *err. */
static int run_stderr(char **err, const char *args)
{
    const char *path = tbt_tmp_path("stderr.txt");
    int rc = tbt_run_cli(NULL, "%s >/dev/null 2>'%s'; exit $?", args, path);
    size_t n = 0;
    uint8_t *text = tbt_read_file(path, &n);
    assert_non_null(text);
    *err = realloc(text, n + 1);
    (*err)[n] = 0;
    return rc;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static int same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    uint8_t *x = tbt_read_file(a, &na), *y = tbt_read_file(b, &nb);
    assert_non_null(x);
    assert_non_null(y);
    int same = na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

/* --opt=value, --opt value, -o value and -ovalue are the same request: the
 * same bytes come out; a different seed (so the value was read) differs. */
static void value_forms_are_the_same_request(void **state)
{
    (void)state;
    const char *a = tbt_tmp_path("eq.glb"), *b = tbt_tmp_path("space.glb"), *c = tbt_tmp_path("short.glb"),
               *d = tbt_tmp_path("seed8.glb");
    assert_int_equal(tbt_run_cli(NULL, "synth --variant=tail_leg --seed=7 --units=m --output='%s'", a), 0);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg --seed 7 --units m --output '%s'", b), 0);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg --units=m --seed 7 -o'%s'", c), 0);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg --units=m --seed=8 -o '%s'", d), 0);
    assert_true(same_file(a, b));
    assert_true(same_file(a, c));
    assert_false(same_file(a, d));
    /* the value of --units=m was taken: the file differs from the variant's own units (cm) */
    const char *m = tbt_tmp_path("own_units.glb");
    assert_int_equal(tbt_run_cli(NULL, "synth --variant=tail_leg --seed=7 -o '%s'", m), 0);
    assert_false(same_file(a, m));
    /* a value that starts with '-' is still a value when the option needs one */
    char *err = NULL;
    assert_int_equal(run_stderr(&err, "synth --variant tail_leg --seed -3 -o x.glb"), 2);
    assert_non_null(strstr(err, "--seed needs an integer"));
    free(err);
}

/* The Sprint clip of `fix` on tail_hips, from its --report: warm-up passes
 * and jumps (0 when the report has none). */
static void sprint_warm_up(const char *report, int *passes, int *jumps)
{
    json_error_t je;
    json_t *r = json_load_file(report, 0, &je);
    assert_non_null(r);
    json_t *clips = json_object_get(json_object_get(r, "bake"), "clips"), *c;
    size_t i;
    *passes = -1;
    json_array_foreach(clips, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "clip")), "Sprint"))
            continue;
        *passes = (int)json_integer_value(json_object_get(c, "passes"));
        *jumps = (int)json_integer_value(json_object_get(c, "warmup_jumps"));
    }
    json_decref(r);
    assert_true(*passes > 0);
}

/* --no-warmup-jump is read: on tail_hips' Sprint, whose warm-up jumps by
 * default, the warm-up then plays every pass (more of them, no jump) and
 * the file differs; the same flag twice is the same request. */
static void no_warmup_jump_plays_every_pass(void **state)
{
    (void)state;
    const char *in = tbt_tmp_path("wj_in.glb"), *a = tbt_tmp_path("wj_jump.glb"), *b = tbt_tmp_path("wj_plain.glb"),
               *c = tbt_tmp_path("wj_plain2.glb"), *ra = tbt_tmp_path("wj_jump.json"),
               *rb = tbt_tmp_path("wj_plain.json");
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_hips -o '%s'", in), 0);
    assert_int_equal(tbt_run_cli(NULL, "fix '%s' --only Sprint -q -o '%s' --report '%s'", in, a, ra), 0);
    assert_int_equal(tbt_run_cli(NULL, "fix '%s' --only Sprint -q --no-warmup-jump -o '%s' --report '%s'", in, b, rb), 0);
    assert_int_equal(tbt_run_cli(NULL, "fix '%s' --no-warmup-jump --only=Sprint -q --no-warmup-jump -o'%s'", in, c), 0);
    int pa, ja, pb, jb;
    sprint_warm_up(ra, &pa, &ja);
    sprint_warm_up(rb, &pb, &jb);
    print_message("tail_hips Sprint: %d passes, %d jumps; --no-warmup-jump: %d passes, %d jumps\n", pa, ja, pb, jb);
    assert_true(ja >= 1);
    assert_int_equal(jb, 0);
    assert_true(pb > pa);
    assert_false(same_file(a, b));
    assert_true(same_file(b, c));
}

/* After "--" every word is an operand, even one that starts with '-'. */
static void double_dash_ends_the_options(void **state)
{
    (void)state;
    char *err = NULL;
    assert_int_equal(run_stderr(&err, "info -- --no-such-file.glb"), 1);
    assert_non_null(strstr(err, "--no-such-file.glb"));
    assert_null(strstr(err, "unknown option"));
    free(err);
    /* a word after "--" is a file even when it reads as a global option */
    err = NULL;
    assert_int_equal(run_stderr(&err, "info -- --in-place"), 1);
    assert_non_null(strstr(err, "--in-place"));
    free(err);
}

/* A SPEC section the user does not have: "SPEC …", or a section number
 * such as "(A8)" or "A1–A7" (a letter A–E and digits, standing alone). */
static const char *spec_cite(const char *text)
{
    if (strstr(text, "SPEC "))
        return strstr(text, "SPEC ");
    for (const char *p = text; *p; p++) {
        if (*p < 'A' || *p > 'E' || p[1] < '0' || p[1] > '9')
            continue;
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-'))
            continue;
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9')
            q++;
        if (!isalnum((unsigned char)*q) && *q != '_' && !(*q == '.' && isalnum((unsigned char)q[1])))
            return p;
    }
    return NULL;
}

/* `tailbone help CMD` prints exactly `tailbone CMD --help`, for every command
 * that `tailbone --help` lists; the help texts cite no SPEC section. */
static void help_cmd_is_cmd_help(void **state)
{
    (void)state;
    char *top = NULL;
    assert_int_equal(tbt_run_cli(&top, "help"), 0);
    const char *p = strstr(top, "commands:\n");
    assert_non_null(p);
    p += strlen("commands:\n");
    int n = 0;
    while (*p == ' ') {
        char name[32];
        assert_int_equal(sscanf(p, " %31s", name), 1);
        char *h1 = NULL, *h2 = NULL;
        assert_int_equal(tbt_run_cli(&h1, "help %s", name), 0);
        assert_int_equal(tbt_run_cli(&h2, "%s --help", name), 0);
        assert_string_equal(h1, h2);
        assert_non_null(strstr(h1, "usage: tailbone"));
        if (spec_cite(h1))
            fail_msg("tailbone help %s cites a SPEC section: %.40s", name, spec_cite(h1));
        free(h1);
        free(h2);
        n++;
        p = strchr(p, '\n') + 1;
    }
    assert_true(n >= 8);
    assert_null(spec_cite(top));
    assert_non_null(spec_cite("rigid on Hips (A8)"));
    assert_non_null(spec_cite("detection (SPEC A1-A7)"));
    assert_non_null(spec_cite("as in A1–A7."));
    assert_null(spec_cite("Tail_1..Tail_K, -j N, B.glb, 0.5 m, 4 GiB"));
    free(top);
    char *err = NULL;
    assert_int_equal(run_stderr(&err, "help no-such-command"), 2);
    assert_int_equal(count_lines(err), 1);
    free(err);
}

/* Usage errors: one line on stderr naming the option and the command, exit 2. */
static void usage_errors_are_one_line(void **state)
{
    (void)state;
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"fix a.glb -o b.glb --bogus", "unknown option '--bogus'"},
        {"fix a.glb -o b.glb -Z", "unknown option '-Z'"},
        {"fix a.glb -o b.glb --blend 0.3", "unknown option '--blend'"}, /* no abbreviations */
        {"fix a.glb -o b.glb --json=yes", "'--json' takes no value"},
        {"fix a.glb --output", "'--output' needs a value"},
        {"fix a.glb -o", "'-o' needs a value"},
        {"fix a.glb -o b.glb --blend-zone=2", "--blend-zone needs a number"},
        {"measure a.glb --instants=1", "--instants must be"},
        {"retarget a.glb --clips=b.glb -o c.glb --fps=abc", "--fps needs a number"},
        {"detect a.glb --role=Hips", "--role needs ROLE=JOINT"},
        {"info a.glb --nope", "unknown option '--nope'"},
        {"copy a.glb b.glb --quiet=1", "'--quiet' takes no value"},
        {"preview a.glb -x", "unknown option '-x'"},
        {"synth --list --verbose=2", "'--verbose' takes no value"},
        {"no-such-command", "unknown command"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *err = NULL;
        int rc = run_stderr(&err, cases[i].args);
        if (rc != 2 || count_lines(err) != 1 || !strstr(err, cases[i].says))
            fail_msg("'tailbone %s': exit %d, stderr '%s' (wanted one line with \"%s\", exit 2)", cases[i].args, rc,
                     err, cases[i].says);
        free(err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(value_forms_are_the_same_request),
        cmocka_unit_test(double_dash_ends_the_options),
        cmocka_unit_test(no_warmup_jump_plays_every_pass),
        cmocka_unit_test(help_cmd_is_cmd_help),
        cmocka_unit_test(usage_errors_are_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
