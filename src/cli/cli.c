#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* Options every command takes; main() strips them from argv. The library
 * keeps no state; the program may. */
static int tb__allow_uri_outside, tb__in_place;

/* The temporary file of the save in progress, for the signal handler: the
 * library builds its name in this buffer (tb_save_desc). */
static char tb__temp_path[4352];
static volatile sig_atomic_t tb__temp_live;

static void tb__on_signal(int sig)
{
    if (tb__temp_live)
        unlink(tb__temp_path); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void tb_cli_install_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tb__on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* a signal the parent ignores (nohup) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

int tb_cli_global_option(const char *arg)
{
    if (!strcmp(arg, "--allow-uri-outside"))
        return tb__allow_uri_outside = 1;
    if (!strcmp(arg, "--in-place"))
        return tb__in_place = 1;
    return 0;
}

static tb_save_desc tb__save_desc(void)
{
    tb_save_desc d = {tb__temp_path, sizeof tb__temp_path, &tb__temp_live};
    return d;
}

int tb_cli_save_doc(const tb_doc *doc, const char *path)
{
    tb_error err = {0};
    tb_save_desc d = tb__save_desc();
    return tb_doc_save_ex(doc, path, &d, &err) == TB_OK ? TB_EXIT_OK : tb_cli_error(path, &err);
}

int tb_cli_save_file(const char *path, const void *data, size_t size)
{
    tb_error err = {0};
    tb_save_desc d = tb__save_desc();
    return tb_file_save_ex(path, data, size, &d, &err) == TB_OK ? TB_EXIT_OK : tb_cli_error(path, &err);
}

int tb_cli_check_output(const char *out, const char *const *inputs, int input_count)
{
    struct stat so, si;
    if (stat(out, &so) != 0)
        return TB_EXIT_OK; /* absent (or unreachable: the save says why) */
    if (!S_ISREG(so.st_mode)) {
        fprintf(stderr, "tailbone: %s: exists and is not a regular file; refusing to replace it [io]\n", out);
        return TB_EXIT_FAIL;
    }
    for (int i = 0; i < input_count; i++) {
        if (!inputs[i] || stat(inputs[i], &si) != 0 || si.st_dev != so.st_dev || si.st_ino != so.st_ino)
            continue;
        if (i == 0 && tb__in_place)
            continue; /* --in-place: the main input only */
        fprintf(stderr, "tailbone: %s: is the input %s; refusing to overwrite it%s [arg]\n", out, inputs[i],
                i == 0 ? " (--in-place to allow)" : "");
        return TB_EXIT_FAIL;
    }
    return TB_EXIT_OK;
}

int tb_cli_error(const char *file, const tb_error *err)
{
    if (err->where[0] && strcmp(err->where, file) != 0)
        fprintf(stderr, "tailbone: %s: %s: %s [%s]\n", file, err->where, err->message, tb_result_name(err->code));
    else
        fprintf(stderr, "tailbone: %s: %s [%s]\n", file, err->message, tb_result_name(err->code));
    return TB_EXIT_FAIL;
}

int tb_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tailbone %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'tailbone %s --help')\n", cmd);
    va_end(ap);
    return TB_EXIT_USAGE;
}

tb_doc *tb_cli_load(const char *path, int quiet)
{
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_load_desc d = {0};
    d.allow_uri_outside = tb__allow_uri_outside;
    if (tb_doc_load(&doc, path, &d, &err) != TB_OK) {
        tb_cli_error(path, &err);
        return NULL;
    }
    if (!quiet)
        for (int i = 0; i < tb_doc_warning_count(doc); i++)
            fprintf(stderr, "tailbone: %s: warning: %s\n", path, tb_doc_warning(doc, i));
    return doc;
}

int tb_cli_is(const char *arg, const char *a, const char *b)
{
    return (a && !strcmp(arg, a)) || (b && !strcmp(arg, b));
}

const char *tb_cli_clip_label(const char *name, char *buf, size_t size, int width)
{
    if (!size)
        return buf;
    if (!name || !name[0])
        name = "(unnamed)";
    const char *bar = strrchr(name, '|');
    if (bar && bar[1])
        name = bar + 1;
    size_t n = strlen(name), w = width > 1 ? (size_t)width : 1;
    if (w >= size)
        w = size - 1;
    if (n <= w) {
        memcpy(buf, name, n + 1);
    } else {
        memcpy(buf, name, w - 1);
        buf[w - 1] = '~';
        buf[w] = 0;
    }
    return buf;
}

int tb_cli_save_json(const char *path, const json_t *j, size_t flags)
{
    char *text = json_dumps(j, flags);
    if (!text) {
        fprintf(stderr, "tailbone: %s: out of memory [oom]\n", path);
        return TB_EXIT_FAIL;
    }
    int rc = tb_cli_save_file(path, text, strlen(text));
    free(text);
    return rc;
}
