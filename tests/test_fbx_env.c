/* The environment `tailbone fix x.fbx` gives Blender (src/cli/fbx.c,
 * docs/blender.md "FBX"). A Blender built on the system's Python reads
 * PYTHONPATH / PYTHONHOME and takes its Python's prefix from the first
 * pythonX.Y on PATH: a pyenv Python of the same version ahead on PATH, or a
 * PYTHONPATH holding another numpy, broke its glTF importer. A stand-in
 * "blender" (a shell script named by TAILBONE_BLENDER) records the
 * environment it was started with and copies its input to its output; the
 * oracle is that record, read line by line here, not the CLI's report.
 * tests/blender/fbx_cli.sh runs the real Blender under the same hostile
 * environment. */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The value of NAME in an `env` listing, or NULL. */
static const char *env_value(const char *listing, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = listing; l && *l;) {
        if (!strncmp(l, name, n) && l[n] == '=')
            return l + n + 1;
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    return NULL;
}

/* The position of folder DIR in PATH (0 = first), or -1. */
static int path_index(const char *path, const char *dir)
{
    size_t len = strlen(dir);
    int i = 0;
    for (const char *p = path; *p; i++) {
        size_t n = strcspn(p, ":\n");
        if (n == len && !strncmp(p, dir, len))
            return i;
        if (p[n] != ':')
            break;
        p += n + 1;
    }
    return -1;
}

/* The stand-in Blender in a fresh folder tmp/DIR (with a bogus numpy in it
 * when asked: PYTHONPATH points there) and an empty fake Python prefix
 * tmp/PY/bin: fills fake (the folder), fakepy and script. */
static void stand_in_blender(const char *dir, const char *py, int numpy, char fake[1024], char fakepy[1024],
                             char script[1100])
{
    char cmd[4200];
    snprintf(fake, 1024, "%s", tbt_tmp_path(dir));
    char pybin[256];
    snprintf(pybin, sizeof pybin, "%s/bin", py);
    snprintf(fakepy, 1024, "%s", tbt_tmp_path(pybin));
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' '%s'%s%s%s", fake, fake, fakepy, numpy ? " '" : "",
             numpy ? fake : "", numpy ? "/numpy'" : "");
    assert_int_equal(system(cmd), 0);
    snprintf(script, 1100, "%s/blender", fake);
    static const char body[] = "#!/bin/sh\n"
                               "env > \"$(dirname \"$0\")/env.$(ls \"$(dirname \"$0\")\" | grep -c '^env\\.')\"\n"
                               "for a; do src=$dst; dst=$a; done\n"
                               "cp \"$src\" \"$dst\"\n";
    assert_int_equal(tbt_write_file(script, body, sizeof body - 1), 0);
    assert_int_equal(chmod(script, 0755), 0);
}

/* Fails when an `env` listing holds a PYTHON* variable; who: what started
 * Blender. */
static void assert_no_python_variable(const char *listing, const char *who)
{
    for (const char *l = listing; l && *l;) {
        if (!strncmp(l, "PYTHON", 6))
            fail_msg("%s started Blender with %.*s", who, (int)strcspn(l, "\n"), l);
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
}

/* A fake Blender, a fake Python prefix ahead on PATH and PYTHON* variables
 * pointing at a bogus numpy: Blender gets none of the PYTHON* variables,
 * PATH with its own folder and the system's before the inherited folders
 * (which are kept, after), every other variable as it was; both ways (FBX
 * in, FBX out) reach the stand-in, so the file goes through. */
static void blender_gets_a_clean_python_environment(void **state)
{
    (void)state;
    char fake[1024], fakepy[1024], cmd[8192], script[1100];
    stand_in_blender("fakeblender", "fakepython", 1, fake, fakepy, script);
    snprintf(cmd, sizeof cmd, "%s/python3.11", fakepy);
    assert_int_equal(tbt_write_file(cmd, "#!/bin/sh\nexit 1\n", 17), 0);
    assert_int_equal(chmod(cmd, 0755), 0);

    const char *in = tbt_tmp_path("fbx_env_in.fbx");
    const char *out = tbt_tmp_path("fbx_env_out.fbx");
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg -o '%s'", tbt_tmp_path("fbx_env_in.glb")), 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && rm -f '%s'", tbt_tmp_path("fbx_env_in.glb"), in, out);
    assert_int_equal(system(cmd), 0);
    const char *inherited = getenv("PATH");
    snprintf(cmd, sizeof cmd,
             "env PYTHONPATH='%s' PYTHONHOME=/nonexistent PYTHONSTARTUP=/nonexistent PYTHONNOUSERSITE= "
             "TB_KEPT=kept PATH='%s:%s' TAILBONE_BLENDER='%s' '%s' fix '%s' -o '%s' --no-bake -q",
             fake, fakepy, inherited ? inherited : "/usr/bin:/bin", script, TB_CLI_PATH, in, out);
    int rc = system(cmd);
    assert_int_equal(rc, 0);
    assert_true(tbt_file_exists(out));

    for (int i = 0; i < 2; i++) { /* env.0: FBX in, env.1: FBX out */
        char rec[1100];
        snprintf(rec, sizeof rec, "%s/env.%d", fake, i);
        size_t n = 0;
        char *listing = (char *)tbt_read_file(rec, &n);
        if (!listing)
            fail_msg("the stand-in Blender was not started %s (no %s)", i ? "for the FBX out" : "for the FBX in", rec);
        listing = realloc(listing, n + 1);
        listing[n] = 0;
        assert_no_python_variable(listing, i ? "the CLI (FBX out)" : "the CLI (FBX in)");
        const char *kept = env_value(listing, "TB_KEPT");
        assert_non_null(kept);
        assert_true(!strncmp(kept, "kept\n", 5));
        const char *path = env_value(listing, "PATH");
        assert_non_null(path);
        int own = path_index(path, fake), usr = path_index(path, "/usr/bin"), py = path_index(path, fakepy);
        if (own != 0 || usr < 0 || py < 0 || py < usr)
            fail_msg("Blender's PATH %.*s: its own folder at %d (want 0), /usr/bin at %d, the inherited fake Python "
                     "at %d (want after /usr/bin)",
                     (int)strcspn(path, "\n"), path, own, usr, py);
        free(listing);
    }
}

/* The line NAME=... of an `env` listing, without its newline, or "" (static). */
static const char *env_line(const char *listing, const char *name)
{
    static char buf[8192];
    const char *v = env_value(listing, name);
    snprintf(buf, sizeof buf, "%.*s", v ? (int)strcspn(v, "\n") : 0, v ? v : "");
    return buf;
}

static char *read_listing(const char *path)
{
    size_t n = 0;
    char *listing = (char *)tbt_read_file(path, &n);
    if (!listing)
        fail_msg("the stand-in Blender was not started (no %s)", path);
    listing = realloc(listing, n + 1);
    listing[n] = 0;
    return listing;
}

/* scripts/blender_env.sh, which runs Blender for scripts/fbx_converters.sh
 * and the Blender tests (tests/blender), gives it what the CLI gives it: under the same
 * hostile environment (PYTHON* variables, a fake Python prefix first on
 * PATH, an empty and a repeated PATH entry), the stand-in started by the
 * script sees no PYTHON* variable, the other variables kept, and exactly the
 * PATH the stand-in started by `tailbone fix x.fbx` saw. */
static void converter_script_gives_blender_the_clis_environment(void **state)
{
    (void)state;
    char fake[1024], fakepy[1024], cmd[8192], script[1100];
    stand_in_blender("fakeblender_script", "fakepython_script", 0, fake, fakepy, script);

    char in[1024], glb[1024], out[1024], copy[1024];
    snprintf(in, sizeof in, "%s", tbt_tmp_path("fbx_env_script_in.fbx"));
    snprintf(glb, sizeof glb, "%s", tbt_tmp_path("fbx_env_script_in.glb"));
    snprintf(out, sizeof out, "%s", tbt_tmp_path("fbx_env_script_out.fbx"));
    snprintf(copy, sizeof copy, "%s", tbt_tmp_path("fbx_env_script_copy.fbx"));
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg -o '%s'", glb), 0);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && rm -f '%s' '%s'", glb, in, out, copy);
    assert_int_equal(system(cmd), 0);
    const char *inherited = getenv("PATH");
    char hostile[4096];
    snprintf(hostile, sizeof hostile,
             "env PYTHONPATH='%s' PYTHONHOME=/nonexistent PYTHONSTARTUP=/nonexistent PYTHONNOUSERSITE= "
             "TB_KEPT=kept PATH='%s::/usr/bin:%s:%s'",
             fake, fakepy, fakepy, inherited ? inherited : "/usr/bin:/bin");
    /* env.0 and env.1: the CLI (FBX in, FBX out); env.2: the script */
    snprintf(cmd, sizeof cmd, "%s TAILBONE_BLENDER='%s' '%s' fix '%s' -o '%s' --no-bake -q", hostile, script,
             TB_CLI_PATH, in, out);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s '%s/scripts/blender_env.sh' '%s' -b --factory-startup -- '%s' '%s'", hostile,
             TB_SOURCE_DIR, script, in, copy);
    assert_int_equal(system(cmd), 0);
    assert_true(tbt_file_exists(copy));

    char rec[1100];
    snprintf(rec, sizeof rec, "%s/env.0", fake);
    char *cli = read_listing(rec);
    snprintf(rec, sizeof rec, "%s/env.2", fake);
    char *sh = read_listing(rec);
    assert_no_python_variable(sh, "blender_env.sh");
    assert_string_equal(env_line(sh, "TB_KEPT"), "kept");
    char want[8192];
    snprintf(want, sizeof want, "%s", env_line(cli, "PATH"));
    assert_true(want[0] != 0);
    if (strcmp(env_line(sh, "PATH"), want))
        fail_msg("blender_env.sh gave Blender PATH=%s\nthe CLI gave it      PATH=%s", env_line(sh, "PATH"), want);
    free(cli);
    free(sh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blender_gets_a_clean_python_environment),
        cmocka_unit_test(converter_script_gives_blender_the_clis_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
