/* Loading: GLB container or JSON text, buffers and external files.
 * All buffers end up merged into doc->bin (see tailbone/gltf.h). */
/* realpath() */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gltf/decompress_internal.h"
#include "gltf/doc_internal.h"

#define TB__GLB_MAGIC 0x46546C67u /* "glTF" */
#define TB__CHUNK_JSON 0x4E4F534Au
#define TB__CHUNK_BIN 0x004E4942u
/* a GLB holds at most 4 GiB: no external file can be larger */
#define TB__MAX_EXTERNAL ((size_t)0xFFFFFFFFu)

static uint32_t tb__u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Opens path for reading without blocking (a FIFO would hang a plain open)
 * and refuses anything but a regular file: devices, FIFOs and sockets have no
 * size to check and may never end. Returns the fd and the file's size. */
static tb_result tb__open_regular(const char *path, int *fd_out, size_t *size, tb_error *err,
                                  const char *where, const char *what)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return tb__fail(err, errno == ENOENT ? TB_ERR_MISSING_FILE : TB_ERR_IO, where,
                        "cannot open %s %.200s: %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return tb__fail(err, TB_ERR_IO, where, "cannot stat %s %.200s: %s", what, path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return tb__fail(err, TB_ERR_IO, where, "%s %.200s is not a regular file (%s); refusing to read it",
                        what, path,
                        S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                        : S_ISSOCK(st.st_mode) ? "a socket" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)
                        ? "a device" : "not a plain file");
    }
    /* back to blocking reads: a regular file never blocks anyway */
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *fd_out = fd;
    *size = (size_t)st.st_size;
    return TB_OK;
}

/* Reads exactly `want` bytes (never more) from fd into a malloc'd block. */
static tb_result tb__read_fd(int fd, size_t want, uint8_t **out, tb_error *err, const char *where,
                             const char *path)
{
    uint8_t *buf = malloc(want ? want : 1);
    if (!buf)
        return tb__fail(err, TB_ERR_OOM, where, "cannot allocate %zu bytes for %.200s", want, path);
    size_t len = 0;
    while (len < want) {
        ssize_t n = read(fd, buf + len, want - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : 0;
            free(buf);
            if (e)
                return tb__fail(err, TB_ERR_IO, where, "read error on %.200s: %s", path, strerror(e));
            return tb__fail(err, TB_ERR_TRUNCATED, where, "%.200s shrank while being read", path);
        }
        len += (size_t)n;
    }
    *out = buf;
    return TB_OK;
}

/* The input file itself: a regular file, read whole. */
static tb_result tb__read_input(const char *path, uint8_t **out, size_t *size, tb_error *err)
{
    int fd;
    size_t n;
    tb_result r = tb__open_regular(path, &fd, &n, err, path, "input");
    if (r != TB_OK)
        return r;
    r = tb__read_fd(fd, n, out, err, path, path);
    close(fd);
    if (r == TB_OK)
        *size = n;
    return r;
}

/* data:[<mediatype>][;base64],<data> — RFC 4648 base64 (standard alphabet,
 * '=' padding only at the end) or percent-encoded bytes (RFC 2397). */
static int tb__b64(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static int tb__hex(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static tb_result tb__decode_base64(const char *p, size_t n, uint8_t *buf, size_t *len_out,
                                   tb_error *err, const char *where)
{
    uint32_t acc = 0;
    int bits = 0, pad = 0;
    size_t len = 0, symbols = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)p[i];
        if (c == '=') {
            pad++;
            symbols++;
            if (pad > 2)
                return tb__fail(err, TB_ERR_URI, where,
                                "base64 data: URI has more than two '=' at offset %zu", i);
            continue;
        }
        int v = tb__b64(c);
        if (v < 0)
            return tb__fail(err, TB_ERR_URI, where,
                            "invalid base64 character 0x%02X at offset %zu of the data: URI "
                            "(RFC 4648 standard alphabet only)", (unsigned)c, i);
        if (pad)
            return tb__fail(err, TB_ERR_URI, where,
                            "base64 data: URI has data after '=' padding at offset %zu", i);
        symbols++;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[len++] = (uint8_t)(acc >> bits);
        }
    }
    /* a final quantum of 2 or 3 symbols is allowed unpadded; 1 never is;
     * padding must complete the quantum exactly */
    if (symbols % 4 == 1 || (pad && symbols % 4 != 0))
        return tb__fail(err, TB_ERR_URI, where, "base64 data: URI ends in an incomplete quantum");
    if (bits && (acc & ((1u << bits) - 1u)))
        return tb__fail(err, TB_ERR_URI, where, "base64 data: URI has non-zero padding bits");
    *len_out = len;
    return TB_OK;
}

static tb_result tb__decode_data_uri(const char *uri, uint8_t **out, size_t *size,
                                     tb_error *err, const char *where)
{
    const char *comma = strchr(uri, ',');
    if (!comma)
        return tb__fail(err, TB_ERR_URI, where, "data: URI has no ','");
    int is_b64 = comma - uri >= 7 && strncmp(comma - 7, ";base64", 7) == 0;
    const char *p = comma + 1;
    size_t n = strlen(p);
    uint8_t *buf = malloc(n + 1);
    if (!buf)
        return tb__fail(err, TB_ERR_OOM, where, NULL);
    size_t len = 0;
    if (is_b64) {
        tb_result r = tb__decode_base64(p, n, buf, &len, err, where);
        if (r != TB_OK) {
            free(buf);
            return r;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '%') {
                int hi = i + 2 < n + 1 ? tb__hex((unsigned char)p[i + 1]) : -1;
                int lo = hi >= 0 ? tb__hex((unsigned char)p[i + 2]) : -1;
                if (lo < 0) {
                    free(buf);
                    return tb__fail(err, TB_ERR_URI, where,
                                    "'%%' not followed by two hex digits at offset %zu of the data: URI", i);
                }
                buf[len++] = (uint8_t)(hi << 4 | lo);
                i += 2;
            } else {
                buf[len++] = (uint8_t)p[i];
            }
        }
    }
    *out = buf;
    *size = len;
    return TB_OK;
}

/* 1 when a relative path never climbs above its start ("a/../b" stays,
 * "a/../../b" does not), read by its names alone. */
static int tb__stays_inside(const char *rel)
{
    int depth = 0;
    for (const char *p = rel; *p;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0)
                return 0;
        } else if (n && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p += n + (e != NULL);
    }
    return 1;
}

/* Relative URI → path beside the file, %XX decoded (RFC 3986). %00 is
 * refused: it would cut the path short. */
static tb_result tb__external_path(const tb_doc *doc, const char *uri, char *path,
                                   size_t cap, tb_error *err, const char *where)
{
    if (strstr(uri, "://") || !strncmp(uri, "file:", 5))
        return tb__fail(err, TB_ERR_URI, where, "URI scheme not supported: %.80s", uri);
    if (!doc->base_dir)
        return tb__fail(err, TB_ERR_MISSING_FILE, where,
                        "external file %.120s cannot be resolved (no base directory)", uri);
    char dec[4096];
    size_t j = 0;
    for (size_t i = 0; uri[i]; i++) {
        if (j + 1 >= sizeof dec)
            return tb__fail(err, TB_ERR_URI, where, "URI longer than %zu bytes", sizeof dec - 1);
        if (uri[i] == '%') {
            int hi = tb__hex((unsigned char)uri[i + 1]);
            int lo = hi >= 0 ? tb__hex((unsigned char)uri[i + 2]) : -1;
            if (lo < 0)
                return tb__fail(err, TB_ERR_URI, where, "'%%' not followed by two hex digits in %.80s", uri);
            if (hi == 0 && lo == 0)
                return tb__fail(err, TB_ERR_URI, where, "URI contains %%00 (a NUL byte): %.80s", uri);
            dec[j++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            dec[j++] = uri[i];
        }
    }
    dec[j] = 0;
    if (!j)
        return tb__fail(err, TB_ERR_URI, where, "empty URI");
    if (dec[0] == '/') {
        if (!doc->allow_uri_outside)
            return tb__fail(err, TB_ERR_URI, where,
                            "absolute path %.120s refused: external files must lie in the input's folder "
                            "(--allow-uri-outside to permit)", uri);
        snprintf(path, cap, "%s", dec);
    } else if ((size_t)snprintf(path, cap, "%s/%s", doc->base_dir, dec) >= cap) {
        return tb__fail(err, TB_ERR_URI, where, "URI too long: %.80s", uri);
    }
    if (doc->allow_uri_outside)
        return TB_OK;
    /* Containment: after resolving "..", "." and symlinks, the file must lie
     * inside the input's folder. Nothing about a file outside is revealed. */
    char *base = realpath(doc->base_dir, NULL);
    char *real = realpath(path, NULL);
    tb_result r = TB_OK;
    if (!base) {
        r = tb__fail(err, TB_ERR_IO, where, "cannot resolve the input's folder: %s", strerror(errno));
    } else if (!real) {
        /* absent: say so only if the name itself stays inside */
        r = !tb__stays_inside(dec) ? tb__fail(err, TB_ERR_URI, where,
                               "%.120s refused: external files must lie in the input's folder "
                               "(--allow-uri-outside to permit)", uri)
                    : tb__fail(err, TB_ERR_MISSING_FILE, where, "external file not found: %.200s", uri);
    } else {
        size_t bl = strlen(base);
        int inside = !strncmp(real, base, bl) && (real[bl] == '/' || (bl == 1 && base[0] == '/'));
        if (!inside)
            r = tb__fail(err, TB_ERR_URI, where,
                         "%.120s refused: it resolves outside the input's folder "
                         "(--allow-uri-outside to permit)", uri);
        else
            snprintf(path, cap, "%s", real);
    }
    free(base);
    free(real);
    return r;
}

/* Reads the file a URI names: a regular file, checked against `declared`
 * (a buffer's byteLength; 0 for an image) before any byte is read, and
 * never more than that. */
static tb_result tb__load_uri(const tb_doc *doc, const char *uri, size_t declared, uint8_t **out,
                              size_t *size, tb_error *err, const char *where)
{
    if (strncmp(uri, "data:", 5) == 0)
        return tb__decode_data_uri(uri, out, size, err, where);
    char path[4608];
    tb_result r = tb__external_path(doc, uri, path, sizeof path, err, where);
    if (r != TB_OK)
        return r;
    int fd;
    size_t n;
    r = tb__open_regular(path, &fd, &n, err, where, "external file");
    if (r == TB_ERR_MISSING_FILE && err)
        snprintf(err->message, sizeof err->message, "external file not found: %.200s", uri);
    if (r != TB_OK)
        return r;
    if (declared && n < declared) {
        close(fd);
        return tb__fail(err, TB_ERR_BOUNDS, where, "external file %.120s is shorter than the buffer's byteLength %zu",
                        uri, declared);
    }
    if (!declared && n > TB__MAX_EXTERNAL) {
        close(fd);
        return tb__fail(err, TB_ERR_BOUNDS, where, "external file %.120s is larger than a GLB can hold (4 GiB)", uri);
    }
    size_t want = declared ? declared : n;
    r = tb__read_fd(fd, want, out, err, where, uri);
    close(fd);
    if (r == TB_OK)
        *size = want;
    return r;
}

static json_int_t tb__geti(json_t *o, const char *key, json_int_t def)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

/* One buffer's bytes, as tb__merge_buffers reads them. */
typedef struct tb__buffer_bytes {
    size_t len;         /* its byteLength */
    const uint8_t *src; /* its bytes, src_size of them (at least len) */
    size_t src_size;
    uint8_t *owned;     /* src when read or made here: the caller frees it */
    int has_uri;
    int changed;        /* read from elsewhere than the GLB's BIN chunk */
} tb__buffer_bytes;

/* Read and validate buffer i: its byteLength, then its bytes — the GLB BIN
 * chunk, the file or data: URI it names, or (EXT_meshopt_compression's
 * fallback buffer) zeroes the decoder fills. */
static tb_result tb__buffer_read(tb_doc *doc, json_t *b, size_t i, const uint8_t *glb_bin, size_t glb_bin_size,
                                 int is_glb, tb__buffer_bytes *bb, tb_error *err)
{
    char where[64];
    snprintf(where, sizeof where, "/buffers/%zu", i);
    if (!json_is_object(b))
        return tb__fail(err, TB_ERR_JSON_TYPE, where, "buffer must be an object");
    json_t *bl = json_object_get(b, "byteLength");
    snprintf(where, sizeof where, "/buffers/%zu/byteLength", i);
    if (!bl)
        return tb__fail(err, TB_ERR_MISSING_FIELD, where, "buffer has no byteLength");
    if (!json_is_integer(bl) || json_integer_value(bl) < 1)
        return tb__fail(err, TB_ERR_JSON_TYPE, where, "byteLength must be an integer >= 1");
    size_t len = (size_t)json_integer_value(bl);
    json_t *uri = json_object_get(b, "uri");
    bb->len = len;
    bb->has_uri = uri != NULL;
    if (!uri && tb__meshopt_fallback(b)) {
        /* EXT_meshopt_compression: zeroed bytes the decoder fills */
        if (!(bb->owned = calloc(len, 1)))
            return tb__fail(err, TB_ERR_OOM, where, NULL);
        bb->src = bb->owned;
        bb->src_size = len;
        bb->changed = 1;
    } else if (!uri) {
        snprintf(where, sizeof where, "/buffers/%zu", i);
        if (!(is_glb && i == 0))
            return tb__fail(err, TB_ERR_MISSING_FIELD, where, "buffer has no uri and is not the GLB BIN chunk");
        if (!glb_bin)
            return tb__fail(err, TB_ERR_TRUNCATED, where, "buffer 0 refers to the BIN chunk but the GLB has none");
        bb->src = glb_bin;
        bb->src_size = glb_bin_size;
    } else {
        snprintf(where, sizeof where, "/buffers/%zu/uri", i);
        if (!json_is_string(uri))
            return tb__fail(err, TB_ERR_JSON_TYPE, where, "uri must be a string");
        tb_result r = tb__load_uri(doc, json_string_value(uri), len, &bb->owned, &bb->src_size, err, where);
        if (r != TB_OK)
            return r;
        bb->src = bb->owned;
        bb->changed = 1;
    }
    if (bb->src_size < len) {
        snprintf(where, sizeof where, "/buffers/%zu/byteLength", i);
        return tb__fail(err, uri ? TB_ERR_BOUNDS : TB_ERR_TRUNCATED, where,
                        "buffer declares %zu bytes but its data holds %zu", len, bb->src_size);
    }
    return TB_OK;
}

/* Re-points every bufferView (and a meshopt view's compressed bytes, which
 * live in another buffer) at buffer 0, buffer k now starting at base[k]. */
static void tb__repoint_views(tb_doc *doc, const size_t *base, size_t n)
{
    json_t *views = json_object_get(doc->root, "bufferViews");
    size_t nv = json_is_array(views) ? json_array_size(views) : 0;
    for (size_t k = 0; k < nv; k++) {
        json_t *v = json_array_get(views, k);
        if (!json_is_object(v))
            continue; /* the parser reports it */
        json_int_t bi = tb__geti(v, "buffer", -1);
        if (bi < 0 || (size_t)bi >= n)
            continue; /* the parser reports it */
        json_int_t off = tb__geti(v, "byteOffset", 0);
        if (bi != 0 || base[bi] != 0) {
            json_object_set_new(v, "buffer", json_integer(0));
            json_object_set_new(v, "byteOffset", json_integer(off + (json_int_t)base[bi]));
        }
        /* EXT/KHR_meshopt_compression's compressed bytes live in another buffer */
        const char *mname = tb__meshopt_name(v);
        json_t *mo = mname ? json_object_get(json_object_get(v, "extensions"), mname) : NULL;
        json_int_t mb = tb__geti(mo, "buffer", -1);
        if (mb >= 0 && (size_t)mb < n) {
            json_object_set_new(mo, "buffer", json_integer(0));
            json_object_set_new(mo, "byteOffset", json_integer(tb__geti(mo, "byteOffset", 0) + (json_int_t)base[mb]));
        }
    }
}

/* Merges every buffer into doc->bin. `glb_bin` is the BIN chunk (may be
 * NULL): read each buffer → append it → when any came from elsewhere,
 * re-point the views and collapse the list to one buffer. */
static tb_result tb__merge_buffers(tb_doc *doc, const uint8_t *glb_bin, size_t glb_bin_size,
                                   int is_glb, tb_error *err)
{
    json_t *buffers = json_object_get(doc->root, "buffers");
    if (!buffers)
        return TB_OK;
    if (!json_is_array(buffers))
        return tb__fail(err, TB_ERR_JSON_TYPE, "/buffers", "buffers must be an array");
    size_t n = json_array_size(buffers);
    size_t *base = calloc(n ? n : 1, sizeof *base);
    if (!base)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    int changed = 0;
    tb_result r = TB_OK;
    for (size_t i = 0; i < n && r == TB_OK; i++) {
        tb__buffer_bytes bb;
        memset(&bb, 0, sizeof bb);
        r = tb__buffer_read(doc, json_array_get(buffers, i), i, glb_bin, glb_bin_size, is_glb, &bb, err);
        changed |= bb.changed;
        if (r != TB_OK) {
            free(bb.owned);
            break;
        }
        int bin_chunk = i == 0 && !bb.has_uri; /* kept as it is (padding included) */
        base[i] = tb__bin_append(doc, bb.src, bin_chunk ? bb.src_size : bb.len);
        if (!bin_chunk && base[i] == SIZE_MAX)
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        free(bb.owned);
        if (i > 0)
            changed = 1;
    }
    if (r == TB_OK && changed) {
        tb__repoint_views(doc, base, n);
        json_t *b0 = json_deep_copy(json_array_get(buffers, 0));
        json_object_del(b0, "uri");
        json_object_set_new(b0, "byteLength", json_integer((json_int_t)doc->bin_size));
        json_t *nb = json_array();
        json_array_append_new(nb, b0);
        json_object_set_new(doc->root, "buffers", nb);
    }
    free(base);
    return r;
}

static const char *tb__mime_for(const char *uri, const uint8_t *data, size_t size)
{
    if (size >= 8 && memcmp(data, "\x89PNG", 4) == 0)
        return "image/png";
    if (size >= 3 && data[0] == 0xFF && data[1] == 0xD8)
        return "image/jpeg";
    if (size >= 12 && memcmp(data, "RIFF", 4) == 0 && memcmp(data + 8, "WEBP", 4) == 0)
        return "image/webp";
    if (size >= 12 && memcmp(data, "\xABKTX 20", 7) == 0)
        return "image/ktx2";
    const char *dot = strrchr(uri, '.');
    if (dot && (!strcmp(dot, ".jpg") || !strcmp(dot, ".jpeg")))
        return "image/jpeg";
    return "image/png";
}

/* A GLB cannot carry relative files: embed external images as bufferViews. */
static tb_result tb__embed_images(tb_doc *doc, tb_error *err)
{
    json_t *images = json_object_get(doc->root, "images");
    if (!json_is_array(images))
        return TB_OK;
    char where[64];
    for (size_t i = 0; i < json_array_size(images); i++) {
        json_t *im = json_array_get(images, i);
        json_t *uri = json_object_get(im, "uri");
        if (!json_is_string(uri) || strncmp(json_string_value(uri), "data:", 5) == 0)
            continue;
        snprintf(where, sizeof where, "/images/%zu/uri", i);
        uint8_t *data = NULL;
        size_t size = 0;
        tb_result r = tb__load_uri(doc, json_string_value(uri), 0, &data, &size, err, where);
        if (r != TB_OK)
            return r;
        const char *mime = tb__mime_for(json_string_value(uri), data, size);
        int view = tb_doc_add_buffer_view(doc, data, size, 0, 0);
        free(data);
        if (view < 0)
            return tb__fail(err, TB_ERR_OOM, where, NULL);
        json_object_del(im, "uri");
        json_object_set_new(im, "bufferView", json_integer(view));
        if (!json_object_get(im, "mimeType"))
            json_object_set_new(im, "mimeType", json_string(mime));
    }
    return TB_OK;
}

static const char *const tb__refused_ext[] = {
    "KHR_draco_mesh_compression", "EXT_meshopt_compression", "KHR_meshopt_compression", NULL};
/* Required extensions that do not change how we decode geometry/animation. */
static const char *const tb__known_ext[] = {
    "KHR_mesh_quantization", "KHR_texture_transform", "KHR_texture_basisu",
    "KHR_materials_unlit", "KHR_materials_emissive_strength", "KHR_materials_ior",
    "KHR_materials_specular", "KHR_materials_transmission", "KHR_materials_volume",
    "KHR_materials_clearcoat", "KHR_materials_sheen", "KHR_materials_iridescence",
    "KHR_materials_anisotropy", "KHR_materials_dispersion", "KHR_materials_pbrSpecularGlossiness",
    "KHR_materials_variants", "KHR_lights_punctual", "KHR_texture_webp", "EXT_texture_webp",
    "EXT_texture_avif", "KHR_xmp_json_ld", NULL};

static int tb__in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

static tb_result tb__check_extensions(tb_doc *doc, const tb_load_desc *desc, tb_error *err)
{
    json_t *req = json_object_get(doc->root, "extensionsRequired");
    if (!req)
        return TB_OK;
    if (!json_is_array(req))
        return tb__fail(err, TB_ERR_JSON_TYPE, "/extensionsRequired", "must be an array of strings");
    char where[64];
    for (size_t i = 0; i < json_array_size(req); i++) {
        json_t *e = json_array_get(req, i);
        snprintf(where, sizeof where, "/extensionsRequired/%zu", i);
        if (!json_is_string(e))
            return tb__fail(err, TB_ERR_JSON_TYPE, where, "extension name must be a string");
        const char *name = json_string_value(e);
        if (desc && desc->allow_unsupported)
            continue;
        if (tb_can_decode(name))
            continue; /* decoded after the buffers are merged (decompress.c) */
        if (tb__in_list(name, tb__refused_ext))
            return tb__fail(err, TB_ERR_UNSUPPORTED, where,
                            "%s: compressed data cannot be decoded by this tailbone (built without its "
                            "library); decompress it first", name);
        if (!tb__in_list(name, tb__known_ext))
            return tb__fail(err, TB_ERR_UNSUPPORTED, where,
                            "required extension %s is unknown to tailbone; refusing rather than "
                            "risk damaging data", name);
    }
    return TB_OK;
}

static tb_result tb__parse_json(tb_doc *doc, const uint8_t *text, size_t len, size_t file_offset,
                                tb_error *err)
{
    json_error_t je;
    doc->root = json_loadb((const char *)text, len, JSON_ALLOW_NUL, &je);
    if (!doc->root) {
        char where[96];
        snprintf(where, sizeof where, "line %d column %d (byte %zu)", je.line, je.column,
                 file_offset + (size_t)(je.position > 0 ? je.position : 0));
        return tb__fail(err, TB_ERR_JSON_SYNTAX, where, "JSON syntax error: %s", je.text);
    }
    if (!json_is_object(doc->root))
        return tb__fail(err, TB_ERR_JSON_TYPE, "/", "the glTF JSON must be an object");
    json_t *asset = json_object_get(doc->root, "asset");
    if (!asset)
        return tb__fail(err, TB_ERR_MISSING_FIELD, "/asset", "asset is missing");
    if (!json_is_object(asset))
        return tb__fail(err, TB_ERR_JSON_TYPE, "/asset", "asset must be an object");
    json_t *ver = json_object_get(asset, "version");
    if (!ver)
        return tb__fail(err, TB_ERR_MISSING_FIELD, "/asset/version", "asset.version is missing");
    if (!json_is_string(ver))
        return tb__fail(err, TB_ERR_JSON_TYPE, "/asset/version", "asset.version must be a string");
    if (strncmp(json_string_value(ver), "2.", 2) != 0)
        return tb__fail(err, TB_ERR_UNSUPPORTED, "/asset/version",
                        "glTF version %.16s is not supported (2.x only)", json_string_value(ver));
    return TB_OK;
}

static tb_result tb__load_glb(tb_doc *doc, const uint8_t *d, size_t size, tb_error *err,
                              const uint8_t **bin, size_t *bin_size)
{
    char where[64];
    if (size < 12)
        return tb__fail(err, TB_ERR_TRUNCATED, "byte 0", "file ends inside the 12-byte GLB header (%zu bytes)", size);
    uint32_t version = tb__u32(d + 4), length = tb__u32(d + 8);
    if (version != 2)
        return tb__fail(err, TB_ERR_GLB_VERSION, "byte 4", "GLB version %u (only 2 is supported)", version);
    if (length > size)
        return tb__fail(err, TB_ERR_TRUNCATED, "byte 8",
                        "header says %u bytes but the file has %zu", length, size);
    if (length < size)
        return tb__fail(err, TB_ERR_GLB_LENGTH, "byte 8",
                        "header says %u bytes but the file has %zu", length, size);
    size_t off = 12;
    int chunk = 0;
    *bin = NULL;
    *bin_size = 0;
    while (off < length) {
        snprintf(where, sizeof where, "byte %zu", off);
        if (length - off < 8)
            return tb__fail(err, TB_ERR_TRUNCATED, where, "file ends inside chunk %d's header", chunk);
        uint32_t clen = tb__u32(d + off), ctype = tb__u32(d + off + 4);
        if ((size_t)clen > length - off - 8)
            return tb__fail(err, TB_ERR_TRUNCATED, where,
                            "chunk %d declares %u bytes but only %zu remain", chunk, clen, length - off - 8);
        const uint8_t *cdata = d + off + 8;
        if (chunk == 0) {
            if (ctype != TB__CHUNK_JSON)
                return tb__fail(err, TB_ERR_GLB_CHUNK, where, "first chunk must be JSON (type 0x%08X)", ctype);
            if (clen == 0)
                return tb__fail(err, TB_ERR_GLB_LENGTH, where, "JSON chunk is empty");
            tb_result r = tb__parse_json(doc, cdata, clen, off + 8, err);
            if (r != TB_OK)
                return r;
        } else if (ctype == TB__CHUNK_BIN) {
            if (chunk != 1)
                return tb__fail(err, TB_ERR_GLB_CHUNK, where, "BIN chunk must directly follow the JSON chunk");
            *bin = cdata;
            *bin_size = clen;
        } else if (ctype == TB__CHUNK_JSON) {
            return tb__fail(err, TB_ERR_GLB_CHUNK, where, "second JSON chunk");
        } else {
            tb__warn(doc, "%s: unknown GLB chunk type 0x%08X ignored (dropped on write)", where, ctype);
        }
        if (clen % 4)
            tb__warn(doc, "%s: chunk length %u is not a multiple of 4", where, clen);
        off += 8 + (size_t)clen;
        chunk++;
    }
    if (chunk == 0)
        return tb__fail(err, TB_ERR_TRUNCATED, "byte 12", "GLB has no JSON chunk");
    return TB_OK;
}

static char *tb__dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, path, n);
        s[n] = 0;
    }
    return s;
}

static tb_doc *tb__doc_new(const char *name, const char *base_dir)
{
    tb_doc *doc = calloc(1, sizeof *doc);
    if (!doc)
        return NULL;
    doc->skinned_from = -1; /* no parse yet: tb__doc_refresh_kept parses in full */
    doc->name = strdup(name ? name : "<memory>");
    doc->base_dir = base_dir ? strdup(base_dir) : NULL;
    if (!doc->name || (base_dir && !doc->base_dir)) {
        tb_doc_free(doc);
        return NULL;
    }
    return doc;
}

/* The loader's last steps, once the buffers are one BIN (r: how the steps
 * before went): decompress (Draco, meshopt: when built with their
 * libraries), embed the images, parse; the document goes to *out, or is
 * freed on the first error. glb_bin: the file was a GLB with a BIN chunk. */
static tb_result tb__doc_finish(tb_doc **out, tb_doc *doc, tb_result r, int glb_bin, tb_error *err)
{
    if (r == TB_OK)
        r = tb__decompress(doc, err);
    if (r == TB_OK && glb_bin && !json_object_get(doc->root, "buffers"))
        tb__warn(doc, "GLB has a BIN chunk that no buffer uses (dropped on write)");
    if (r == TB_OK)
        r = tb__embed_images(doc, err);
    doc->container_warnings = doc->warning_count;
    if (r == TB_OK)
        r = tb__doc_parse(doc, err);
    if (r != TB_OK) {
        tb_doc_free(doc);
        return r;
    }
    *out = doc;
    return TB_OK;
}

tb_result tb_doc_load_memory(tb_doc **out, const void *data, size_t size, const char *name,
                             const char *base_dir, const tb_load_desc *desc, tb_error *err)
{
    if (!out || (!data && size))
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_doc_load_memory: out and data are required");
    *out = NULL;
    tb_doc *doc = tb__doc_new(name, base_dir);
    if (!doc)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    doc->allow_uri_outside = desc && desc->allow_uri_outside;
    const uint8_t *d = data;
    tb_result r;
    const uint8_t *bin = NULL;
    size_t bin_size = 0;
    int is_glb = 0;
    size_t i = 0;
    if (size >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF)
        i = 3; /* UTF-8 BOM before JSON text */
    while (i < size && (d[i] == ' ' || d[i] == '\n' || d[i] == '\r' || d[i] == '\t'))
        i++;
    if (size >= 4 && tb__u32(d) == TB__GLB_MAGIC) {
        is_glb = 1;
        r = tb__load_glb(doc, d, size, err, &bin, &bin_size);
    } else if (size < 4 && size > 0 && memcmp(d, "glTF", size) == 0) {
        r = tb__fail(err, TB_ERR_TRUNCATED, "byte 0", "file ends inside the GLB magic");
    } else if (size == 0) {
        r = tb__fail(err, TB_ERR_TRUNCATED, "byte 0", "file is empty");
    } else if (i < size && d[i] == '{') {
        r = tb__parse_json(doc, d, size, 0, err);
    } else {
        r = tb__fail(err, TB_ERR_GLB_MAGIC, "byte 0",
                     "not a glTF file: no GLB magic \"glTF\" and no JSON object");
    }
    if (r == TB_OK)
        r = tb__check_extensions(doc, desc, err);
    if (r == TB_OK)
        r = tb__merge_buffers(doc, bin, bin_size, is_glb, err);
    return tb__doc_finish(out, doc, r, is_glb && bin, err);
}

tb_result tb__doc_clone(tb_doc **out, const tb_doc *from, tb_error *err)
{
    *out = NULL;
    /* a loaded document holds one buffer, the BIN (merged), with no uri */
    json_t *buffers = json_object_get(from->root, "buffers");
    size_t nb = json_array_size(buffers);
    json_t *b0 = nb == 1 ? json_array_get(buffers, 0) : NULL;
    if (nb > 1 || (b0 && (json_object_get(b0, "uri") || tb__meshopt_fallback(b0))) || (b0 && !from->bin) ||
        from->bin_size % 4 != 0)
        return TB_OK; /* not as loaded: *out NULL, the caller writes and loads it */
    tb_doc *doc = tb__doc_new(from->name, NULL);
    if (!doc || !(doc->root = json_deep_copy(from->root))) {
        tb_doc_free(doc);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    if (b0) {
        doc->bin = (uint8_t *)(uintptr_t)from->bin; /* read only: tb__bin_append copies it first */
        doc->bin_size = doc->bin_cap = from->bin_size;
        doc->bin_borrowed = 1;
    }
    /* the loader's steps after the buffers are merged, as tb_doc_load_memory
     * takes them on from's GLB (allow_unsupported: from was accepted once) */
    tb_load_desc ld = {.allow_unsupported = 1};
    tb_result r = tb__check_extensions(doc, &ld, err);
    return tb__doc_finish(out, doc, r, 0, err);
}

tb_result tb_doc_load(tb_doc **out, const char *path, const tb_load_desc *desc, tb_error *err)
{
    if (!out || !path)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_doc_load: out and path are required");
    *out = NULL;
    uint8_t *data = NULL;
    size_t size = 0;
    tb_result r = tb__read_input(path, &data, &size, err);
    if (r != TB_OK)
        return r;
    char *dir = tb__dirname(path);
    r = tb_doc_load_memory(out, data, size, path, dir, desc, err);
    free(dir);
    free(data);
    return r;
}

tb_doc *tb_doc_create(const char *generator)
{
    tb_doc *doc = tb__doc_new("<new>", NULL);
    if (!doc)
        return NULL;
    doc->root = json_pack("{s:{s:s,s:s}}", "asset", "version", "2.0", "generator",
                          generator ? generator : "tailbone");
    if (!doc->root || tb__doc_parse(doc, NULL) != TB_OK) {
        tb_doc_free(doc);
        return NULL;
    }
    return doc;
}

void tb_doc_free(tb_doc *doc)
{
    if (!doc)
        return;
    tb__doc_clear_view(doc);
    json_decref(doc->root);
    if (!doc->bin_borrowed)
        free(doc->bin);
    free(doc->name);
    free(doc->base_dir);
    for (int i = 0; i < doc->warning_count; i++)
        free(doc->warnings[i]);
    free(doc->warnings);
    free(doc);
}

/* ---- a state to come back to (doc_internal.h) ---- */

tb_result tb__doc_state_save(const tb_doc *doc, size_t base, tb__doc_state *st)
{
    memset(st, 0, sizeof *st);
    if (base > doc->bin_size)
        return TB_ERR_ARG;
    st->base = base;
    st->size = doc->bin_size;
    st->root = json_deep_copy(doc->root);
    st->tail = malloc(st->size - base + 1);
    if (!st->root || !st->tail) {
        tb__doc_state_free(st);
        return TB_ERR_OOM;
    }
    if (st->size > base)
        memcpy(st->tail, doc->bin + base, st->size - base);
    return TB_OK;
}

tb_result tb__doc_state_restore(tb_doc *doc, tb__doc_state *st, tb_error *err)
{
    if (!st->root || st->base > doc->bin_size)
        return tb__fail(err, TB_ERR_ARG, NULL, "no document state to restore");
    if (st->size > st->base) {
        if (doc->bin_borrowed && tb__doc_own_bin(doc) != TB_OK)
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        if (st->size > doc->bin_cap) {
            uint8_t *b = realloc(doc->bin, st->size);
            if (!b)
                return tb__fail(err, TB_ERR_OOM, NULL, NULL);
            doc->bin = b;
            doc->bin_cap = st->size;
        }
        memcpy(doc->bin + st->base, st->tail, st->size - st->base);
    }
    doc->bin_size = st->size;
    json_decref(doc->root);
    doc->root = st->root;
    st->root = NULL;
    tb__doc_state_free(st);
    return tb_doc_refresh(doc, err);
}

void tb__doc_state_free(tb__doc_state *st)
{
    if (!st)
        return;
    json_decref(st->root);
    free(st->tail);
    memset(st, 0, sizeof *st);
}

const tb_gltf *tb_doc_gltf(const tb_doc *doc) { return &doc->g; }
json_t *tb_doc_json(tb_doc *doc) { return doc->root; }
const char *tb_doc_name(const tb_doc *doc) { return doc->name; }
int tb_doc_warning_count(const tb_doc *doc) { return doc->warning_count; }
const char *tb_doc_warning(const tb_doc *doc, int i)
{
    return (i >= 0 && i < doc->warning_count) ? doc->warnings[i] : NULL;
}
const uint8_t *tb_doc_bin(const tb_doc *doc, size_t *size)
{
    if (size)
        *size = doc->bin_size;
    return doc->bin;
}
