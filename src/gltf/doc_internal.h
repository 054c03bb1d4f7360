/* Private state of a tb_doc, shared by the loader, writer and accessors. */
#ifndef TB_DOC_INTERNAL_H
#define TB_DOC_INTERNAL_H

#include <stdarg.h>

#include "core/base.h"
#include "gltf/doc_json.h"
#include "tailbone/gltf.h"

typedef struct tb__view {
    size_t offset, length, stride;
} tb__view;

struct tb_doc {
    json_t *root;
    uint8_t *bin;
    size_t bin_size, bin_cap;
    int bin_borrowed; /* bin is another doc's (tb__doc_borrow_bin): never written, never freed here */
    char *name;     /* for messages */
    char *base_dir; /* for external URIs; may be NULL */
    int allow_uri_outside; /* tb_load_desc.allow_uri_outside */
    char **warnings;
    int warning_count, warning_cap;
    int container_warnings; /* warnings from the container, before parsing */
    int skinned_from;       /* warnings[skinned_from ..]: the last tb__doc_parse's
                               check of the skinned meshes (tb__doc_refresh_kept) */

    /* parsed view, rebuilt by tb__doc_parse */
    tb_gltf g;
    tb__view *views;
    tb_gltf_accessor *accessors;
    tb_gltf_node *nodes;
    int *children;
    tb_gltf_skin *skins;
    int *joints;
    tb_gltf_mesh *meshes;
    tb_gltf_primitive *prims;
    tb_gltf_animation *anims;
    tb_gltf_channel *chans;
    tb_gltf_sampler *samps;
};

/* A copy of `from` (same BIN bytes) drops its own BIN and reads from's
 * instead, which must then outlive it or be given back by tb__doc_own_bin:
 * one BIN in memory instead of two while nothing is appended. Returns 1 when
 * it borrowed (the bytes were equal), 0 when it kept its own. */
int tb__doc_borrow_bin(tb_doc *doc, const tb_doc *from);
/* A copy of `from` as writing it to a GLB and loading that would give (its
 * JSON deep-copied, the loader's steps after the buffer merge run again),
 * reading from's BIN (borrowed, as tb__doc_borrow_bin) instead of holding
 * the GLB's bytes and a BIN of its own: no copy of the BIN at all until
 * something is appended. TB_OK with *out NULL when from is not as the
 * loader leaves a document (more than one buffer, a uri, an unpadded BIN):
 * the caller writes and loads it then. */
tb_result tb__doc_clone(tb_doc **out, const tb_doc *from, tb_error *err);
/* Makes a borrowed BIN the doc's own again (a copy); TB_ERR_OOM when it
 * cannot. tb__bin_append does this itself before it appends. */
tb_result tb__doc_own_bin(tb_doc *doc);

/* A state of a document to come back to (fix's solver fit re-bakes the
 * document it detected and transferred once): its JSON and the BIN's bytes
 * from `base` on. Passes only append to the BIN (tb__bin_append), so the
 * bytes below `base` are the same whenever the state is restored. */
typedef struct tb__doc_state {
    json_t *root;
    size_t base, size; /* the BIN was `size` long; tail holds bin[base, size) */
    uint8_t *tail;
} tb__doc_state;
/* Saves doc's JSON (a deep copy) and bin[base, bin_size) (base <= bin_size). */
tb_result tb__doc_state_save(const tb_doc *doc, size_t base, tb__doc_state *st);
/* Puts doc back to the saved state (moving the state's JSON into it: a state
 * is restored once) and re-parses it. */
tb_result tb__doc_state_restore(tb_doc *doc, tb__doc_state *st, tb_error *err);
void tb__doc_state_free(tb__doc_state *st);

/* Appends the warning s (malloc'd), the doc's from then on; freed when the
 * list cannot grow, as tb__warn drops one then. */
void tb__warn_keep(tb_doc *doc, char *s);
void tb__warn(tb_doc *doc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Parses and validates doc->root against doc->bin into the view arrays. */
tb_result tb__doc_parse(tb_doc *doc, tb_error *err);
/* tb_doc_refresh for a document whose nodes, skins and meshes, and the
 * skinned meshes' joint and weight data, are what its last parse saw (the
 * transfer and the bake add clips and accessors only): the view parsed
 * again, but the skinned meshes' joints and weights not read and checked
 * again; that check's warnings kept, last, as a full parse would find
 * them. The same view, warnings and result as tb_doc_refresh under that
 * condition, without the check's reading of every skinned vertex. */
tb_result tb__doc_refresh_kept(tb_doc *doc, tb_error *err);
void tb__doc_clear_view(tb_doc *doc);
size_t tb__component_size(int component_type);
int tb__type_components(const char *type);
/* Appends bytes (16-aligned start) to the BIN; returns offset or SIZE_MAX. */
size_t tb__bin_append(tb_doc *doc, const void *data, size_t size);
/* Where a float accessor's values lie in the BIN when they lie there
 * packed, as tb_accessor_read_floats would copy them (a buffer view, no
 * sparse values, no stride beyond the element); NULL otherwise. Bytes: the
 * place need not be aligned for a float (accessor.c). */
const unsigned char *tb__accessor_packed_floats(const tb_doc *doc, int accessor);

#endif
