/* Writing: always GLB (JSON chunk padded with spaces, BIN with zeros). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gltf/doc_internal.h"

static void tb__put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* A GLB as its pieces: the 28 bytes of headers, the JSON text and its
 * padding, the BIN's 8-byte header, the BIN and its padding. */
typedef struct tb__glb_parts {
    char *json; /* json_dumps's; free() it */
    size_t jlen, jpad, blen, bpad, total;
    int has_bin;
    uint8_t head[20], bin_head[8];
} tb__glb_parts;

static tb_result tb__glb_parts_make(const tb_doc *doc, tb__glb_parts *p, tb_error *err)
{
    memset(p, 0, sizeof *p);
    /* JSON_REAL_PRECISION 17 (the default) round-trips every double exactly. */
    p->json = json_dumps(doc->root, JSON_COMPACT);
    if (!p->json)
        return tb__fail(err, TB_ERR_OOM, NULL, "cannot serialise the JSON");
    p->jlen = strlen(p->json);
    p->jpad = (4 - p->jlen % 4) % 4;
    json_t *buffers = json_object_get(doc->root, "buffers");
    p->has_bin = json_array_size(buffers) > 0;
    p->blen = p->has_bin ? doc->bin_size : 0;
    p->bpad = (4 - p->blen % 4) % 4;
    p->total = 12 + 8 + p->jlen + p->jpad + (p->has_bin ? 8 + p->blen + p->bpad : 0);
    if (p->total > 0xFFFFFFFFu) {
        free(p->json);
        p->json = NULL;
        return tb__fail(err, TB_ERR_INVALID, NULL, "output exceeds the GLB 4 GiB limit");
    }
    memcpy(p->head, "glTF", 4);
    tb__put_u32(p->head + 4, 2);
    tb__put_u32(p->head + 8, (uint32_t)p->total);
    tb__put_u32(p->head + 12, (uint32_t)(p->jlen + p->jpad));
    memcpy(p->head + 16, "JSON", 4);
    tb__put_u32(p->bin_head, (uint32_t)(p->blen + p->bpad));
    memcpy(p->bin_head + 4, "BIN\0", 4);
    return TB_OK;
}

tb_result tb_doc_write_memory(const tb_doc *doc, uint8_t **out, size_t *size, tb_error *err)
{
    tb__glb_parts p;
    tb_result r = tb__glb_parts_make(doc, &p, err);
    if (r != TB_OK)
        return r;
    uint8_t *buf = malloc(p.total);
    if (!buf) {
        free(p.json);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    memcpy(buf, p.head, 20);
    memcpy(buf + 20, p.json, p.jlen);
    memset(buf + 20 + p.jlen, ' ', p.jpad);
    free(p.json);
    if (p.has_bin) {
        uint8_t *b = buf + 20 + p.jlen + p.jpad;
        memcpy(b, p.bin_head, 8);
        if (p.blen)
            memcpy(b + 8, doc->bin, p.blen);
        memset(b + 8 + p.blen, 0, p.bpad);
    }
    *out = buf;
    *size = p.total;
    return TB_OK;
}

/* What tb__save_pieces writes: `count` pieces of bytes, one after another. */
typedef struct tb__piece {
    const void *data;
    size_t size;
} tb__piece;

static tb_result tb__save_pieces(const char *path, const tb__piece *pieces, int count, const tb_save_desc *desc,
                                 tb_error *err)
{
    /* rename() would replace a device, FIFO or directory entry with a
     * regular file (as root, -o /dev/null): refuse anything but a file */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return tb__fail(err, TB_ERR_IO, path, "%s exists and is not a regular file; refusing to replace it", path);
    size_t plen = strlen(path);
    char own[4096];
    char *tmp = own;
    size_t cap = plen + 16;
    if (desc && desc->temp_path) {
        if (desc->temp_path_size < cap)
            return tb__fail(err, TB_ERR_ARG, path, "tb_save_desc.temp_path_size must be >= strlen(path) + 16");
        tmp = desc->temp_path;
    } else if (cap > sizeof own && !(tmp = malloc(cap))) {
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    tb_result r = TB_OK;
    snprintf(tmp, cap, "%s.tmp-XXXXXX", path);
    /* live before mkstemp fills the name in place: a handler that unlinks a
     * name not yet created fails harmlessly */
    if (desc && desc->temp_live)
        *desc->temp_live = 1;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        r = tb__fail(err, TB_ERR_IO, path, "cannot create a temporary file next to %s: %s", path, strerror(errno));
        goto done;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(tmp);
        r = tb__fail(err, TB_ERR_IO, path, "cannot write %s: %s", path, strerror(errno));
        goto done;
    }
    int bad = 0;
    for (int i = 0; i < count && !bad; i++)
        bad = pieces[i].size && fwrite(pieces[i].data, 1, pieces[i].size, f) != pieces[i].size;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
    bad |= fclose(f) != 0;
    if (bad) {
        unlink(tmp);
        r = tb__fail(err, TB_ERR_IO, path, "cannot write %s: %s", path, strerror(errno));
        goto done;
    }
    chmod(tmp, 0644);
    if (rename(tmp, path) != 0) {
        unlink(tmp);
        r = tb__fail(err, TB_ERR_IO, path, "cannot rename the temporary file to %s: %s", path, strerror(errno));
    }
done:
    if (desc && desc->temp_live)
        *desc->temp_live = 0;
    if (tmp != own && !(desc && tmp == desc->temp_path))
        free(tmp);
    return r;
}

tb_result tb_file_save_ex(const char *path, const void *data, size_t size, const tb_save_desc *desc,
                          tb_error *err)
{
    if (!path || (!data && size))
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_file_save: path and data are required");
    tb__piece one = {data, size};
    return tb__save_pieces(path, &one, 1, desc, err);
}

tb_result tb_file_save(const char *path, const void *data, size_t size, tb_error *err)
{
    return tb_file_save_ex(path, data, size, NULL, err);
}

/* The GLB written from its pieces, the BIN straight from the document:
 * no copy of the file in memory (tb_doc_write_memory's bytes, the same). */
tb_result tb_doc_save_ex(const tb_doc *doc, const char *path, const tb_save_desc *desc, tb_error *err)
{
    if (!doc || !path)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_doc_save: a document and a path are required");
    tb__glb_parts p;
    tb_result r = tb__glb_parts_make(doc, &p, err);
    if (r != TB_OK)
        return r;
    static const uint8_t zeros[4] = {0}, spaces[4] = {' ', ' ', ' ', ' '};
    tb__piece pieces[] = {{p.head, 20},        {p.json, p.jlen},    {spaces, p.jpad},
                          {p.bin_head, p.has_bin ? 8 : 0}, {doc->bin, p.blen}, {zeros, p.bpad}};
    r = tb__save_pieces(path, pieces, (int)(sizeof pieces / sizeof pieces[0]), desc, err);
    free(p.json);
    return r;
}

tb_result tb_doc_save(const tb_doc *doc, const char *path, tb_error *err)
{
    return tb_doc_save_ex(doc, path, NULL, err);
}
