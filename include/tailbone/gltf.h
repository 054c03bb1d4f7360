/* tailbone/gltf.h — lossless glTF 2.0 documents (offline layer).
 *
 *   tb_doc *doc;
 *   tb_error err;
 *   if (tb_doc_load(&doc, "in.glb", NULL, &err) != TB_OK) { report(err); }
 *   const tb_gltf *g = tb_doc_gltf(doc);          // parsed, bounds-checked view
 *   tb_accessor_read_floats(doc, g->meshes[0].primitives[0].position, ...);
 *   tb_doc_save(doc, "out.glb", &err);           // GLB, temp file + rename
 *   tb_doc_free(doc);
 *
 * The document keeps the whole JSON tree (jansson) so that unknown fields,
 * extensions, extras, names and key order survive a round trip; it decodes
 * only what the passes need. All buffers are merged into one in memory at
 * load (GLB BIN chunk bytes kept as they are; other buffers appended, 16-byte
 * aligned, bufferViews re-pointed) and written as the GLB's BIN chunk.
 * External images are embedded as bufferViews, since the output is a GLB.
 *
 * Ownership: tb_doc_load returns a doc freed by tb_doc_free. tb_doc_gltf
 * returns a borrowed pointer valid until the doc is freed or tb_doc_refresh()
 * is called (after an edit). The JSON tree itself is the library's own
 * (src/gltf/doc_json.h): no public header needs jansson.
 */
#ifndef TAILBONE_GLTF_H
#define TAILBONE_GLTF_H

#include <signal.h>

#include "tailbone/common.h"
#include "tailbone/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TB_COMPONENT_BYTE = 5120,
    TB_COMPONENT_UNSIGNED_BYTE = 5121,
    TB_COMPONENT_SHORT = 5122,
    TB_COMPONENT_UNSIGNED_SHORT = 5123,
    TB_COMPONENT_UNSIGNED_INT = 5125,
    TB_COMPONENT_FLOAT = 5126
};

enum { TB_MODE_POINTS = 0, TB_MODE_LINES, TB_MODE_LINE_LOOP, TB_MODE_LINE_STRIP,
       TB_MODE_TRIANGLES, TB_MODE_TRIANGLE_STRIP, TB_MODE_TRIANGLE_FAN };

#define TB_MAX_SETS 8 /* TEXCOORD_n / COLOR_n / JOINTS_n / WEIGHTS_n sets read */

typedef struct tb_gltf_accessor {
    int buffer_view;       /* -1 when absent (zeros, or sparse only) */
    size_t byte_offset;
    int component_type;    /* TB_COMPONENT_* */
    int normalized;
    size_t count;
    int components;        /* 1 SCALAR … 16 MAT4 */
    int has_sparse;
    int has_minmax;
} tb_gltf_accessor;

typedef struct tb_gltf_node {
    const char *name;      /* NULL when unnamed */
    int parent;            /* -1 for a root */
    int mesh, skin;        /* -1 when absent */
    int child_count;
    const int *children;
    int has_matrix;        /* the file stores `matrix` instead of TRS */
    tb_transform local;    /* decomposed when has_matrix */
    float world[16];       /* of the stored pose */
    int in_scene;          /* reachable from some scene's roots */
} tb_gltf_node;

typedef struct tb_gltf_skin {
    const char *name;
    int joint_count;
    const int *joints;     /* node indices */
    int inverse_bind_matrices; /* accessor or -1 (identity) */
    int skeleton;          /* node or -1 */
} tb_gltf_skin;

typedef struct tb_gltf_primitive {
    int mode;              /* TB_MODE_* */
    int indices;           /* accessor or -1 */
    int position, normal, tangent; /* accessors or -1 */
    int texcoord[TB_MAX_SETS], color[TB_MAX_SETS];
    int joints[TB_MAX_SETS], weights[TB_MAX_SETS];
    int set_count;         /* number of complete JOINTS_n/WEIGHTS_n pairs */
    int material;          /* -1 when absent */
} tb_gltf_primitive;

typedef struct tb_gltf_mesh {
    const char *name;
    int primitive_count;
    const tb_gltf_primitive *primitives;
} tb_gltf_mesh;

typedef struct tb_gltf_sampler {
    int input, output;     /* accessors */
    tb_interp interp;
} tb_gltf_sampler;

typedef enum tb_gltf_path {
    TB_GLTF_PATH_TRANSLATION = 0,
    TB_GLTF_PATH_ROTATION,
    TB_GLTF_PATH_SCALE,
    TB_GLTF_PATH_WEIGHTS,
    TB_GLTF_PATH_OTHER     /* an extension's path, or no target node */
} tb_gltf_path;

typedef struct tb_gltf_channel {
    int sampler;
    int node;              /* -1 when absent (extension-targeted) */
    tb_gltf_path path;
} tb_gltf_channel;

typedef struct tb_gltf_animation {
    const char *name;
    int channel_count, sampler_count;
    const tb_gltf_channel *channels;
    const tb_gltf_sampler *samplers;
    float duration_s;      /* largest input time (from the decoded inputs) */
} tb_gltf_animation;

typedef struct tb_gltf {
    int accessor_count, node_count, skin_count, mesh_count, animation_count;
    int buffer_view_count, scene_count, material_count;
    int scene;             /* default scene or -1 */
    const tb_gltf_accessor *accessors;
    const tb_gltf_node *nodes;
    const tb_gltf_skin *skins;
    const tb_gltf_mesh *meshes;
    const tb_gltf_animation *animations;
} tb_gltf;

typedef struct tb_doc tb_doc;

/* 1 when this build decodes the compression extension named (by its glTF
 * name): "KHR_draco_mesh_compression" needs libdraco at build time,
 * "EXT_meshopt_compression" and "KHR_meshopt_compression" libmeshoptimizer
 * (KHR: its v0 bitstream; v1 attribute data and the COLOR filter are refused
 * with Debian's libmeshoptimizer 0.18). A loaded document then holds
 * the decoded data and no longer names the extension (docs/gltf.md). */
int tb_can_decode(const char *extension);

typedef struct tb_load_desc {
    int allow_unsupported; /* 0: refuse undecodable compression and unknown required extensions */
    int allow_uri_outside; /* 0: an external uri must name a regular file inside
                              the input's folder (after "..", symlinks);
                              1: absolute paths and escapes allowed too (still
                              regular files only, still size-checked) */
} tb_load_desc;

/* Loads a .glb or .gltf (sniffed from content, not the name). External
 * buffers and images are resolved beside the file. desc may be NULL. */
tb_result tb_doc_load(tb_doc **out, const char *path, const tb_load_desc *desc,
                      tb_error *err);
/* Same from memory. `name` is used in messages; base_dir resolves relative
 * URIs (NULL: external files are an error). */
tb_result tb_doc_load_memory(tb_doc **out, const void *data, size_t size,
                             const char *name, const char *base_dir,
                             const tb_load_desc *desc, tb_error *err);
/* A new empty document ({"asset":{"version":"2.0","generator":…}}). */
tb_doc *tb_doc_create(const char *generator);
void tb_doc_free(tb_doc *doc);

/* Serialises as GLB into a malloc'd block (free() it). */
tb_result tb_doc_write_memory(const tb_doc *doc, uint8_t **out, size_t *size,
                              tb_error *err);
/* Writes a GLB to path.tmp-XXXXXX and renames it over path: a failure leaves
 * no partial output. An existing path that is not a regular file (a
 * device, FIFO, directory) is refused, never replaced. The bytes are
 * tb_doc_write_memory's, written piece by piece (the BIN straight from the
 * document: no copy of the file in memory). */
tb_result tb_doc_save(const tb_doc *doc, const char *path, tb_error *err);
/* Writes size bytes to path the same way: a temporary file beside it, synced
 * and renamed over it (reports, dumps). */
tb_result tb_file_save(const char *path, const void *data, size_t size, tb_error *err);

/* For a program that removes the temporary file when a signal ends it: the
 * library keeps no state of its own, so the caller lends the storage. All
 * zero: the plain save. */
typedef struct tb_save_desc {
    /* When set, the temporary file's name is built here (mkstemp fills it
     * in place), so a signal handler can unlink(temp_path). Needs
     * temp_path_size >= strlen(path) + 16. */
    char *temp_path;
    size_t temp_path_size;
    /* When set: 1 while the temporary file may exist, 0 once it is renamed
     * or removed (a handler unlinks temp_path only while it is 1). */
    volatile sig_atomic_t *temp_live;
} tb_save_desc;
tb_result tb_file_save_ex(const char *path, const void *data, size_t size, const tb_save_desc *desc,
                          tb_error *err);
tb_result tb_doc_save_ex(const tb_doc *doc, const char *path, const tb_save_desc *desc, tb_error *err);

const tb_gltf *tb_doc_gltf(const tb_doc *doc);
const char *tb_doc_name(const tb_doc *doc);
/* Warnings the loader accepted (e.g. non-normalised weights), one per line. */
int tb_doc_warning_count(const tb_doc *doc);
const char *tb_doc_warning(const tb_doc *doc, int i);
/* Re-parses the view after edits of the JSON tree; validates like a load. */
tb_result tb_doc_refresh(tb_doc *doc, tb_error *err);

/* Accessor decoding: count*components values, `normalized` applied,
 * sparse substitution applied. dst_len is the capacity in values. */
tb_result tb_accessor_read_floats(const tb_doc *doc, int accessor, float *dst,
                                  size_t dst_len, tb_error *err);
tb_result tb_accessor_read_uints(const tb_doc *doc, int accessor, uint32_t *dst,
                                 size_t dst_len, tb_error *err);

/* Appends data to the BIN buffer as a new bufferView (+ accessor) and
 * returns its index, or -1 on allocation failure. `type` is "SCALAR",
 * "VEC3"…; min/max are computed for every accessor (glTF requires them on
 * POSITION and on animation inputs). target: 0, 34962 or 34963. */
int tb_doc_add_buffer_view(tb_doc *doc, const void *data, size_t size,
                           size_t byte_stride, int target);
int tb_doc_add_accessor(tb_doc *doc, const void *data, size_t count,
                        int component_type, const char *type, int normalized,
                        int target);
/* Makes an existing accessor point at new data of the same shape (a new
 * bufferView; the old bytes stay in the buffer). Drops sparse. */
tb_result tb_doc_replace_accessor_data(tb_doc *doc, int accessor,
                                       const void *data, int component_type,
                                       tb_error *err);

/* Raw access to the merged BIN buffer (borrowed). */
const uint8_t *tb_doc_bin(const tb_doc *doc, size_t *size);

#ifdef __cplusplus
}
#endif
#endif
