/* Compressed geometry (decompress.c) and the Draco shim (draco_shim.cc). */
#ifndef TB_DECOMPRESS_INTERNAL_H
#define TB_DECOMPRESS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef __cplusplus
#include "gltf/doc_internal.h"
/* After the buffers are merged, before the view is parsed: decodes every
 * EXT_meshopt_compression bufferView and KHR_draco_mesh_compression
 * primitive this build can decode, drops the extensions, repacks the BIN and
 * adds a warning saying what was decoded. */
tb_result tb__decompress(tb_doc *doc, tb_error *err);
/* 1 when buffer is an EXT_meshopt_compression fallback buffer (no data of
 * its own) and this build decodes meshopt: the loader gives it zeroed bytes
 * that the decoder fills. */
int tb__meshopt_fallback(json_t *buffer);
/* "EXT_meshopt_compression" or "KHR_meshopt_compression" when bufferView
 * view carries it, else NULL. */
const char *tb__meshopt_name(json_t *view);
#endif

/* The Draco shim: C++ inside, C outside; no state between calls. Each
 * function returns NULL/0 on failure with a message in msg. */
typedef struct tb__draco_mesh tb__draco_mesh;
tb__draco_mesh *tb__draco_decode(const uint8_t *data, size_t size, char *msg, size_t msg_size);
size_t tb__draco_point_count(const tb__draco_mesh *m);
size_t tb__draco_index_count(const tb__draco_mesh *m);
/* The attribute with Draco unique id `id`, as `comps` components of glTF
 * componentType `ct` per point, each point `stride` bytes apart. */
int tb__draco_attribute(const tb__draco_mesh *m, int id, int ct, int comps, size_t stride, void *dst, char *msg,
                        size_t msg_size);
/* The triangle indices as glTF componentType ct (5121, 5123, 5125); each
 * checked below point_count and to fit the type. */
int tb__draco_indices(const tb__draco_mesh *m, int ct, void *dst, size_t point_count, char *msg, size_t msg_size);
void tb__draco_free(tb__draco_mesh *m);

#ifdef __cplusplus
}
#endif
#endif
