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

/* A fake Blender, a fake Python prefix ahead on PATH and PYTHON* variables
 * pointing at a bogus numpy: Blender gets none of the PYTHON* variables,
 * PATH with its own folder and the system's before the inherited folders
 * (which are kept, after), every other variable as it was; both ways (FBX
 * in, FBX out) reach the stand-in, so the file goes through. */
static void blender_gets_a_clean_python_environment(void **state)
{
    (void)state;
    char fake[1024], fakepy[1024], cmd[8192];
    snprintf(fake, sizeof fake, "%s", tbt_tmp_path("fakeblender"));
    snprintf(fakepy, sizeof fakepy, "%s", tbt_tmp_path("fakepython/bin"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' '%s' '%s/numpy'", fake, fake, fakepy, fake);
    assert_int_equal(system(cmd), 0);
    char script[1100];
    snprintf(script, sizeof script, "%s/blender", fake);
    static const char body[] = "#!/bin/sh\n"
                               "env > \"$(dirname \"$0\")/env.$(ls \"$(dirname \"$0\")\" | grep -c '^env\\.')\"\n"
                               "for a; do src=$dst; dst=$a; done\n"
                               "cp \"$src\" \"$dst\"\n";
    assert_int_equal(tbt_write_file(script, body, sizeof body - 1), 0);
    assert_int_equal(chmod(script, 0755), 0);
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
        for (const char *l = listing; l && *l;) {
            if (!strncmp(l, "PYTHON", 6))
                fail_msg("Blender was started with %.*s", (int)strcspn(l, "\n"), l);
            l = strchr(l, '\n');
            l = l ? l + 1 : NULL;
        }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(blender_gets_a_clean_python_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
