#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

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
    if (tb_doc_load(&doc, path, NULL, &err) != TB_OK) {
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
    tb_error err = {0};
    tb_result r = tb_file_save(path, text, strlen(text), &err);
    free(text);
    return r == TB_OK ? TB_EXIT_OK : tb_cli_error(path, &err);
}
