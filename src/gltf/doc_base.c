/* The glTF document's ground floor: what the loader, the parser, the
 * accessors and the decoders all need of a tb_doc (warnings, the BIN chunk,
 * component sizes), in a file that calls none of them, so that load → parse
 * → accessors → decompress form no import cycle (doc_internal.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gltf/doc_internal.h"

void tb__warn_keep(tb_doc *doc, char *s)
{
    if (!s)
        return;
    if (doc->warning_count == doc->warning_cap) {
        int cap = doc->warning_cap ? doc->warning_cap * 2 : 8;
        char **w = realloc(doc->warnings, (size_t)cap * sizeof *w);
        if (!w) {
            free(s);
            return;
        }
        doc->warnings = w;
        doc->warning_cap = cap;
    }
    doc->warnings[doc->warning_count++] = s;
}

void tb__warn(tb_doc *doc, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tb__warn_keep(doc, strdup(buf));
}

int tb__doc_borrow_bin(tb_doc *doc, const tb_doc *from)
{
    if (doc->bin_borrowed || !doc->bin || doc->bin_size != from->bin_size ||
        memcmp(doc->bin, from->bin, doc->bin_size) != 0)
        return 0;
    free(doc->bin);
    doc->bin = (uint8_t *)(uintptr_t)from->bin; /* read only: tb__bin_append copies it first */
    doc->bin_cap = doc->bin_size;
    doc->bin_borrowed = 1;
    return 1;
}

tb_result tb__doc_own_bin(tb_doc *doc)
{
    if (!doc->bin_borrowed)
        return TB_OK;
    size_t cap = 1024;
    while (cap < doc->bin_size)
        cap *= 2;
    uint8_t *b = malloc(cap);
    if (!b)
        return TB_ERR_OOM;
    memcpy(b, doc->bin, doc->bin_size);
    doc->bin = b;
    doc->bin_cap = cap;
    doc->bin_borrowed = 0;
    return TB_OK;
}

size_t tb__bin_append(tb_doc *doc, const void *data, size_t size)
{
    size_t start = (doc->bin_size + 15u) & ~(size_t)15u;
    size_t need = start + size;
    if (need < start)
        return SIZE_MAX;
    if (doc->bin_borrowed && tb__doc_own_bin(doc) != TB_OK)
        return SIZE_MAX;
    if (need > doc->bin_cap) {
        size_t cap = doc->bin_cap ? doc->bin_cap : 1024;
        while (cap < need)
            cap *= 2;
        uint8_t *b = realloc(doc->bin, cap);
        if (!b)
            return SIZE_MAX;
        doc->bin = b;
        doc->bin_cap = cap;
    }
    memset(doc->bin + doc->bin_size, 0, start - doc->bin_size);
    if (size)
        memcpy(doc->bin + start, data, size);
    doc->bin_size = need;
    return start;
}

size_t tb__component_size(int ct)
{
    switch (ct) {
    case TB_COMPONENT_BYTE:
    case TB_COMPONENT_UNSIGNED_BYTE: return 1;
    case TB_COMPONENT_SHORT:
    case TB_COMPONENT_UNSIGNED_SHORT: return 2;
    case TB_COMPONENT_UNSIGNED_INT:
    case TB_COMPONENT_FLOAT: return 4;
    default: return 0;
    }
}

int tb__type_components(const char *type)
{
    static const struct { const char *n; int c; } t[] = {
        {"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT2", 4}, {"MAT3", 9}, {"MAT4", 16}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (type && !strcmp(type, t[i].n))
            return t[i].c;
    return 0;
}

char *tb__json_text(const json_t *j, int indent)
{
    size_t flags = (indent > 0 ? JSON_INDENT(indent > 31 ? 31 : indent) : JSON_COMPACT) | JSON_REAL_PRECISION(6);
    return j ? json_dumps(j, flags) : NULL;
}
