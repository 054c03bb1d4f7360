/* FBX through Blender in background mode: `blender -b --factory-startup
 * --python-expr SCRIPT -- SRC DST`, SCRIPT being blender/fbx_convert.py
 * (embedded at build time). $TAILBONE_BLENDER names the program, else
 * `blender` on PATH. Blender runs in a cleaned copy of our environment
 * (tb__child_env): a Blender built on the system's Python (Debian's) reads
 * PYTHONPATH / PYTHONHOME and takes its Python prefix from the first
 * pythonX.Y on PATH, so a pyenv or virtualenv Python of the same version
 * ahead on PATH, or a PYTHONPATH with its own numpy, breaks its importers. */
#include "cli/fbx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tb_fbx_convert_py.h" /* generated: tb_fbx_convert_py[] */

extern char **environ;

int tb_cli_is_fbx(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".fbx");
}

/* The Blender program: $TAILBONE_BLENDER, else the first `blender` on PATH. */
static int tb__find_blender(char *buf, size_t size)
{
    const char *env = getenv("TAILBONE_BLENDER");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return access(buf, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(buf, size, "%.*s/blender", (int)len, len ? path : ".");
        if (access(buf, X_OK) == 0)
            return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

/* The last line of the converter's log that says what went wrong. */
static void tb__last_error(const char *log, char *buf, size_t size)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    buf[0] = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        /* Blender prints "Error: what" then "...Error: Error: what", then "Error: script failed" */
        const char *e = strstr(line, "Error: ");
        if (!e || strstr(line, "Draco") || strstr(line, "Traceback") || strstr(line, "script failed"))
            continue;
        while (!strncmp(e, "Error: ", 7))
            e += 7;
        if (!buf[0])
            snprintf(buf, size, "%s", e);
    }
    fclose(f);
}

/* Finds the converter, or prints what to install (naming `name`) and returns 0. */
static int tb__need_blender(char *blender, size_t size, const char *name)
{
    if (!tb__find_blender(blender, size)) {
        fprintf(stderr,
                "tailbone: %s: FBX needs Blender (3.4 or later) as converter, and %s; install it "
                "(Debian: apt install blender) or set TAILBONE_BLENDER to its path [fbx-converter]\n",
                name, getenv("TAILBONE_BLENDER") && *getenv("TAILBONE_BLENDER") ? "$TAILBONE_BLENDER is not a program" : "none is on PATH");
        return 0;
    }
    return 1;
}

/* The system's program folders, put on Blender's PATH ahead of ours. */
static const char tb__system_path[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

static int tb__path_has(const char *list, const char *dir, size_t len)
{
    while (*list) {
        size_t n = strcspn(list, ":");
        if (n == len && !strncmp(list, dir, len))
            return 1;
        list += n + (list[n] == ':');
    }
    return 0;
}

/* Blender's environment: ours without any PYTHON* variable (PYTHONPATH,
 * PYTHONHOME, PYTHONSTARTUP, ...), with PATH = Blender's own folder, the
 * system's program folders, then our PATH's other folders, so that the
 * Python Blender was built with is the first one found. Everything else
 * (HOME, TMPDIR, BLENDER_*, locale) is kept. Built before fork (the child
 * only execs); free with free(*env) then free(env). NULL when out of memory. */
static char **tb__child_env(const char *blender)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    const char *inherited = getenv("PATH");
    if (!inherited)
        inherited = "";
    const char *slash = strrchr(blender, '/');
    size_t own = slash ? (size_t)(slash - blender) : 0;
    size_t cap = 5 + own + 1 + sizeof tb__system_path + strlen(inherited) + 1;
    char **env = malloc((n + 2) * sizeof *env);
    char *path = malloc(cap);
    if (!env || !path) {
        free(env);
        free(path);
        return NULL;
    }
    size_t k = 0;
    env[k++] = path;
    int w = snprintf(path, cap, "PATH=%.*s%s%s", (int)own, blender, own ? ":" : "", tb__system_path);
    size_t used = w > 0 ? (size_t)w : 0;
    for (const char *p = inherited; *p;) {
        size_t len = strcspn(p, ":");
        if (len && !tb__path_has(path + 5, p, len) && used + 1 + len < cap) {
            path[used++] = ':';
            memcpy(path + used, p, len);
            used += len;
            path[used] = 0;
        }
        p += len + (p[len] == ':');
    }
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "PYTHON", 6) && strncmp(*e, "PATH=", 5))
            env[k++] = *e;
    env[k] = NULL;
    return env;
}

/* Runs the converter from src to dst; `name` is the file the user named. */
static int tb__convert(const tb_cli_fbx *f, const char *src, const char *dst, const char *name)
{
    char blender[4096];
    if (!tb__need_blender(blender, sizeof blender, name))
        return TB_EXIT_FAIL;
    char log[4200];
    snprintf(log, sizeof log, "%s/blender.log", f->dir);
    char **env = tb__child_env(blender);
    if (!env) {
        fprintf(stderr, "tailbone: %s: cannot start %s: out of memory [fbx-converter]\n", name, blender);
        return TB_EXIT_FAIL;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "tailbone: %s: cannot start %s: %s [fbx-converter]\n", name, blender, strerror(errno));
        free(env[0]);
        free(env);
        return TB_EXIT_FAIL;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        char *argv[] = {blender, "-b", "--factory-startup", "--python-exit-code", "1", "--python-expr",
                        (char *)tb_fbx_convert_py, "--", (char *)src, (char *)dst, NULL};
        execve(blender, argv, env);
        _exit(127);
    }
    free(env[0]);
    free(env);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    struct stat st;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && stat(dst, &st) == 0 && st.st_size > 0)
        return TB_EXIT_OK;
    char why[1024];
    tb__last_error(log, why, sizeof why);
    fprintf(stderr, "tailbone: %s: Blender could not convert it%s%s (%s %d) [fbx-converter]\n", name, why[0] ? ": " : "",
            why, WIFEXITED(status) ? "its exit status" : "killed by a signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return TB_EXIT_FAIL;
}

int tb_cli_fbx_open(tb_cli_fbx *f, const char *in, const char *out, const char **load_path, const char **save_path)
{
    *load_path = in;
    *save_path = out;
    if (!tb_cli_is_fbx(in) && !tb_cli_is_fbx(out))
        return TB_EXIT_OK;
    char blender[4096]; /* before any work: a missing converter is said at once */
    if (!tb__need_blender(blender, sizeof blender, tb_cli_is_fbx(in) ? in : out))
        return TB_EXIT_FAIL;
    const char *tmp = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/tailbone-fbx-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        fprintf(stderr, "tailbone: %s: cannot make a temporary folder: %s [io]\n", f->dir, strerror(errno));
        f->dir[0] = 0;
        return TB_EXIT_FAIL;
    }
    snprintf(f->in_glb, sizeof f->in_glb, "%s/in.glb", f->dir);
    snprintf(f->out_glb, sizeof f->out_glb, "%s/out.glb", f->dir);
    if (tb_cli_is_fbx(in)) {
        if (access(in, R_OK) != 0) {
            fprintf(stderr, "tailbone: %s: %s [io]\n", in, strerror(errno));
            return TB_EXIT_FAIL;
        }
        int rc = tb__convert(f, in, f->in_glb, in);
        if (rc != TB_EXIT_OK)
            return rc;
        *load_path = f->in_glb;
    }
    if (tb_cli_is_fbx(out))
        *save_path = f->out_glb;
    return TB_EXIT_OK;
}

int tb_cli_fbx_finish(tb_cli_fbx *f, const char *out)
{
    if (!f->dir[0] || !tb_cli_is_fbx(out))
        return TB_EXIT_OK;
    char part[4200];
    snprintf(part, sizeof part, "%s.tailbone-part.fbx", out);
    int rc = tb__convert(f, f->out_glb, part, out);
    if (rc == TB_EXIT_OK && rename(part, out) != 0) {
        fprintf(stderr, "tailbone: %s: %s [io]\n", out, strerror(errno));
        rc = TB_EXIT_FAIL;
    }
    if (rc != TB_EXIT_OK)
        unlink(part);
    return rc;
}

void tb_cli_fbx_close(tb_cli_fbx *f)
{
    if (!f->dir[0])
        return;
    DIR *d = opendir(f->dir);
    struct dirent *e;
    char p[8400];
    while (d && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", f->dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(f->dir);
    f->dir[0] = 0;
}
