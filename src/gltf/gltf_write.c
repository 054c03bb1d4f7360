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

tb_result tb_doc_write_memory(const tb_doc *doc, uint8_t **out, size_t *size, tb_error *err)
{
    /* JSON_REAL_PRECISION 17 (the default) round-trips every double exactly. */
    char *json = json_dumps(doc->root, JSON_COMPACT);
    if (!json)
        return tb__fail(err, TB_ERR_OOM, NULL, "cannot serialise the JSON");
    size_t jlen = strlen(json), jpad = (4 - jlen % 4) % 4;
    json_t *buffers = json_object_get(doc->root, "buffers");
    int has_bin = json_array_size(buffers) > 0;
    size_t blen = has_bin ? doc->bin_size : 0, bpad = (4 - blen % 4) % 4;
    size_t total = 12 + 8 + jlen + jpad + (has_bin ? 8 + blen + bpad : 0);
    if (total > 0xFFFFFFFFu) {
        free(json);
        return tb__fail(err, TB_ERR_INVALID, NULL, "output exceeds the GLB 4 GiB limit");
    }
    uint8_t *buf = malloc(total);
    if (!buf) {
        free(json);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    memcpy(buf, "glTF", 4);
    tb__put_u32(buf + 4, 2);
    tb__put_u32(buf + 8, (uint32_t)total);
    tb__put_u32(buf + 12, (uint32_t)(jlen + jpad));
    memcpy(buf + 16, "JSON", 4);
    memcpy(buf + 20, json, jlen);
    memset(buf + 20 + jlen, ' ', jpad);
    free(json);
    if (has_bin) {
        uint8_t *b = buf + 20 + jlen + jpad;
        tb__put_u32(b, (uint32_t)(blen + bpad));
        memcpy(b + 4, "BIN\0", 4);
        if (blen)
            memcpy(b + 8, doc->bin, blen);
        memset(b + 8 + blen, 0, bpad);
    }
    *out = buf;
    *size = total;
    return TB_OK;
}

tb_result tb_file_save_ex(const char *path, const void *data, size_t size, const tb_save_desc *desc,
                          tb_error *err)
{
    if (!path || (!data && size))
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_file_save: path and data are required");
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
    size_t w = fwrite(data, 1, size, f);
    int bad = w != size;
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

tb_result tb_file_save(const char *path, const void *data, size_t size, tb_error *err)
{
    return tb_file_save_ex(path, data, size, NULL, err);
}

tb_result tb_doc_save_ex(const tb_doc *doc, const char *path, const tb_save_desc *desc, tb_error *err)
{
    uint8_t *data;
    size_t size;
    tb_result r = tb_doc_write_memory(doc, &data, &size, err);
    if (r != TB_OK)
        return r;
    r = tb_file_save_ex(path, data, size, desc, err);
    free(data);
    return r;
}

tb_result tb_doc_save(const tb_doc *doc, const char *path, tb_error *err)
{
    return tb_doc_save_ex(doc, path, NULL, err);
}
