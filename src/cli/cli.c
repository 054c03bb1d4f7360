#include <errno.h>
#ifdef __GLIBC__ /* defined by errno.h's <features.h> */
#include <malloc.h>  /* mallopt */
#endif
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli/cli.h"

/* Options every command takes; main() strips them from argv. The library
 * keeps no state; the program may. */
static int tb__allow_uri_outside, tb__in_place;
/* The real stdout once tb_cli_stdout_reserve() moved stdout to stderr; -1 before. */
static int tb__stdout_fd = -1;

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

void tb_cli_tune_allocator(void)
{
#if defined(__GLIBC__) && defined(M_TOP_PAD)
    /* glibc grows a thread's arena one page-rounded request at a time (an
     * mprotect each: ~440 of them while a worker parses the Soldier's
     * library), and the main arena 128 KiB at a time. A job's threads all
     * allocate as they start, so each new heap begins with 8 MiB usable
     * (address space only: a page costs memory once written) and the main
     * arena grows and trims by as much. The user's own
     * GLIBC_TUNABLES=glibc.malloc.top_pad=... wins. */
    const char *t = getenv("GLIBC_TUNABLES");
    if (!t || !strstr(t, "glibc.malloc.top_pad"))
        mallopt(M_TOP_PAD, 8 << 20);
#endif
}

int tb_cli_global_option(const char *arg)
{
    if (!strcmp(arg, "--allow-uri-outside"))
        return tb__allow_uri_outside = 1;
    if (!strcmp(arg, "--in-place"))
        return tb__in_place = 1;
    return 0;
}

int tb_cli_global_args(const char **out)
{
    int n = 0;
    if (tb__allow_uri_outside)
        out[n++] = "--allow-uri-outside";
    if (tb__in_place)
        out[n++] = "--in-place";
    return n;
}

int tb_cli_is_stdio(const char *path)
{
    return path && path[0] == '-' && path[1] == 0;
}

int tb_cli_is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void tb_cli_stdout_reserve(void)
{
    if (tb__stdout_fd >= 0)
        return;
    fflush(stdout);
    tb__stdout_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
    dup2(2, 1); /* reports and tables now go to stderr */
}

/* The GLB goes to the real stdout: never onto a terminal (binary). */
static int tb__save_stdout(const tb_doc *doc)
{
    int fd = tb__stdout_fd >= 0 ? tb__stdout_fd : 1;
    if (isatty(fd)) {
        fprintf(stderr, "tailbone: -: refusing to write a binary GLB to a terminal; redirect stdout [arg]\n");
        return TB_EXIT_FAIL;
    }
    uint8_t *bytes = NULL;
    size_t size = 0, off = 0;
    tb_error err = {0};
    if (tb_doc_write_memory(doc, &bytes, &size, &err) != TB_OK)
        return tb_cli_error("-", &err);
    while (off < size) {
        ssize_t n = write(fd, bytes + off, size - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            fprintf(stderr, "tailbone: -: cannot write to stdout: %s [io]\n", strerror(n < 0 ? errno : EIO));
            free(bytes);
            return TB_EXIT_FAIL;
        }
        off += (size_t)n;
    }
    free(bytes);
    return TB_EXIT_OK;
}

/* The whole of stdin (a pipe or a file), at most the 4 GiB a GLB can hold. */
static tb_doc *tb__load_stdin(const tb_load_desc *d, tb_error *err)
{
    size_t size = 0, cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    tb_doc *doc = NULL;
    for (;;) {
        if (!buf) {
            snprintf(err->message, sizeof err->message, "out of memory reading stdin");
            err->code = TB_ERR_OOM;
            return NULL;
        }
        ssize_t n = read(0, buf + size, cap - size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err->message, sizeof err->message, "cannot read stdin: %s", strerror(errno));
            err->code = TB_ERR_IO;
            free(buf);
            return NULL;
        }
        if (n == 0)
            break;
        size += (size_t)n;
        if (size == cap) {
            if (cap > 0xFFFFFFFFu) {
                snprintf(err->message, sizeof err->message, "stdin holds more than a GLB can (4 GiB)");
                err->code = TB_ERR_BOUNDS;
                free(buf);
                return NULL;
            }
            cap *= 2;
            uint8_t *b = realloc(buf, cap);
            if (!b)
                free(buf);
            buf = b;
        }
    }
    /* no folder: a .gltf on stdin may use data: URIs, not external files */
    tb_doc_load_memory(&doc, buf, size, "-", NULL, d, err);
    free(buf);
    return doc;
}

static tb_save_desc tb__save_desc(void)
{
    tb_save_desc d = {tb__temp_path, sizeof tb__temp_path, &tb__temp_live};
    return d;
}

int tb_cli_save_doc(const tb_doc *doc, const char *path)
{
    if (tb_cli_is_stdio(path))
        return tb__save_stdout(doc);
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
    if (tb_cli_is_stdio(out))
        return TB_EXIT_OK; /* stdout */
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

int tb_cli_error_to(FILE *f, const char *file, const tb_error *err)
{
    if (err->where[0] && strcmp(err->where, file) != 0)
        fprintf(f, "tailbone: %s: %s: %s [%s]\n", file, err->where, err->message, tb_result_name(err->code));
    else
        fprintf(f, "tailbone: %s: %s [%s]\n", file, err->message, tb_result_name(err->code));
    return TB_EXIT_FAIL;
}

int tb_cli_error(const char *file, const tb_error *err)
{
    return tb_cli_error_to(stderr, file, err);
}

int tb_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tailbone %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'tailbone help %s')\n", cmd);
    va_end(ap);
    return TB_EXIT_USAGE;
}

tb_doc *tb_cli_load_silent(const char *path, tb_error *err)
{
    tb_doc *doc = NULL;
    tb_load_desc d = {0};
    d.allow_uri_outside = tb__allow_uri_outside;
    if (tb_cli_is_stdio(path))
        return tb__load_stdin(&d, err);
    return tb_doc_load(&doc, path, &d, err) == TB_OK ? doc : NULL;
}

tb_doc *tb_cli_load_tell(const char *path, tb_doc *doc, const tb_error *err, int quiet)
{
    if (!doc) {
        tb_cli_error(tb_cli_is_stdio(path) ? "-" : path, err);
        return NULL;
    }
    if (!quiet)
        for (int i = 0; i < tb_doc_warning_count(doc); i++)
            fprintf(stderr, "tailbone: %s: warning: %s\n", path, tb_doc_warning(doc, i));
    return doc;
}

tb_doc *tb_cli_load(const char *path, int quiet)
{
    tb_error err = {0};
    tb_doc *doc = tb_cli_load_silent(path, &err);
    return tb_cli_load_tell(path, doc, &err, quiet);
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
