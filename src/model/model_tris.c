/* The model's triangles read again from the document (tb__model_triangles_reload):
 * fix's repair lends them to detection, which writes its welded copy over
 * them (no second copy at detection's peak), and reads them back after. */
#include <stdlib.h>

#include "core/base.h"
#include "model/mesh_internal.h"
#include "tailbone/gltf.h"
#include "tailbone/model.h"

tb_result tb__model_triangles_reload(tb_model *m, const tb_doc *doc, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    size_t total = 0;
    for (int i = 0; i < m->prim_count; i++)
        total += m->prims[i].triangle_count;
    uint32_t *tris = malloc((total ? total : 1) * 3 * sizeof *tris);
    if (!tris)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb_result r = TB_OK;
    for (int i = 0; i < m->prim_count && r == TB_OK; i++) {
        const tb_model_prim *mp = &m->prims[i];
        const tb_gltf_primitive *p = &g->meshes[mp->mesh].primitives[mp->primitive];
        size_t tc = mp->triangle_count, vc = mp->vertex_count;
        if (!tc)
            continue;
        size_t n = p->indices >= 0 ? g->accessors[p->indices].count : vc;
        uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
        if (!idx) {
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
            break;
        }
        if (p->indices >= 0)
            r = tb_accessor_read_uints(doc, p->indices, idx, n, err);
        else
            for (size_t q = 0; q < n; q++)
                idx[q] = (uint32_t)q;
        uint32_t *t = tris + mp->triangle_offset * 3, vo = (uint32_t)mp->vertex_offset;
        for (size_t q = 0; q < tc && r == TB_OK; q++) { /* as tb_model_load's */
            uint32_t a, b, c;
            if (p->mode == TB_MODE_TRIANGLES)
                a = idx[q * 3], b = idx[q * 3 + 1], c = idx[q * 3 + 2];
            else if (p->mode == TB_MODE_TRIANGLE_STRIP)
                a = idx[q], b = idx[q + 1 + (q & 1)], c = idx[q + 2 - (q & 1)];
            else
                a = idx[0], b = idx[q + 1], c = idx[q + 2];
            t[q * 3] = vo + a;
            t[q * 3 + 1] = vo + b;
            t[q * 3 + 2] = vo + c;
        }
        free(idx);
    }
    if (r != TB_OK) {
        free(tris);
        return r;
    }
    free(m->triangles);
    m->triangles = tris;
    m->triangle_count = total;
    return TB_OK;
}
