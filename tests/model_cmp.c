/* Skin weights compared by joint name (model_cmp.h). */
#include "model_cmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "gltf/doc_json.h"
#include "tailbone/clip.h"
#include "tailbone/gltf.h"

float tbt_weight_by_name(const tb_model *m, size_t v, const char *name)
{
    float w = 0;
    for (int k = 0; k < m->influences; k++) {
        size_t i = v * (size_t)m->influences + (size_t)k;
        const char *n = m->skel.names[m->skin_joints[m->joints[i]]];
        if (m->weights[i] > 0 && n && !strcmp(n, name))
            w += m->weights[i];
    }
    return w;
}

int tbt_weights_differ(const tb_model *a, const tb_model *b, size_t v)
{
    for (int side = 0; side < 2; side++) {
        const tb_model *m = side ? b : a, *o = side ? a : b;
        for (int k = 0; k < m->influences; k++) {
            size_t i = v * (size_t)m->influences + (size_t)k;
            const char *n = m->skel.names[m->skin_joints[m->joints[i]]];
            if (m->weights[i] > 0 &&
                (!n || fabsf(tbt_weight_by_name(m, v, n) - tbt_weight_by_name(o, v, n)) > 1e-6f))
                return 1;
        }
    }
    return 0;
}

uint8_t *tbt_repaired_mask(const tb_model *mi, const tb_model *mo, size_t *count)
{
    uint8_t *mask = calloc(mi->vertex_count + 1, 1);
    assert_non_null(mask);
    *count = 0;
    for (size_t v = 0; v < mi->vertex_count; v++)
        *count += mask[v] = (uint8_t)tbt_weights_differ(mi, mo, v);
    return mask;
}

void tbt_measure_in_out(const tb_doc *in, const tb_doc *out, const tb_model *mi, const tb_model *mo,
                        const tb_fix_report *rep, int c, const uint8_t *mask, float *const pos[2],
                        tb_measure_result r[2])
{
    int anim = rep->stretch[c].animation, loop = 0;
    for (int k = 0; k < rep->bake.clip_count; k++)
        if (rep->bake.clips[k].animation == anim)
            loop = rep->bake.clips[k].looping;
    tb_error err = {0};
    for (int side = 0; side < 2; side++) {
        tb_clip *clip = NULL;
        assert_int_equal(tb_clip_load(&clip, side ? out : in, side ? mo : mi, anim, NULL, &err), TB_OK);
        tb_measure_desc md;
        memset(&md, 0, sizeof md);
        md.loop = loop;
        md.tail_mask = mask;
        md.positions_out = pos ? pos[side] : NULL;
        assert_int_equal(tb_measure_clip(&r[side], side ? mo : mi, clip, &md, &err), TB_OK);
        tb_clip_free(clip);
    }
}

void tbt_give_own_subset_skin(tb_doc *doc, const char *node_name, int keep_first)
{
    tb_error err = {0};
    const tb_gltf *g = tb_doc_gltf(doc);
    int node = -1;
    for (int i = 0; i < g->node_count; i++)
        if (g->nodes[i].name && !strcmp(g->nodes[i].name, node_name) && g->nodes[i].mesh >= 0)
            node = i;
    assert_true(node >= 0);
    const tb_gltf_skin *sk = &g->skins[g->nodes[node].skin];
    const tb_gltf_primitive *p = &g->meshes[g->nodes[node].mesh].primitives[0];
    size_t vc = g->accessors[p->position].count;
    uint32_t *j = malloc(vc * 4 * sizeof *j);
    float *w = malloc(vc * 4 * sizeof *w);
    assert_int_equal(tb_accessor_read_uints(doc, p->joints[0], j, vc * 4, &err), TB_OK);
    assert_int_equal(tb_accessor_read_floats(doc, p->weights[0], w, vc * 4, &err), TB_OK);
    int *local = malloc((size_t)sk->joint_count * sizeof *local);
    for (int k = 0; k < sk->joint_count; k++)
        local[k] = k || !keep_first ? -1 : 0; /* the root joint, as exporters keep it */
    for (size_t i = 0; i < vc * 4; i++)
        if (w[i] > 0)
            local[j[i]] = 0;
    float *all = malloc((size_t)sk->joint_count * 16 * sizeof *all);
    float *mats = malloc((size_t)sk->joint_count * 16 * sizeof *mats);
    assert_int_equal(tb_accessor_read_floats(doc, sk->inverse_bind_matrices, all, (size_t)sk->joint_count * 16, &err),
                     TB_OK);
    json_t *joints = json_array();
    int n = 0;
    for (int k = sk->joint_count - 1; k >= 0; k--)
        if (local[k] >= 0) {
            local[k] = n;
            memcpy(mats + (size_t)n * 16, all + (size_t)k * 16, 16 * sizeof *mats);
            json_array_append_new(joints, json_integer(sk->joints[k]));
            n++;
        }
    assert_true(n > 1 && n <= sk->joint_count);
    int jct = g->accessors[p->joints[0]].component_type;
    uint8_t *bytes = malloc(vc * 4 * sizeof(uint16_t));
    for (size_t i = 0; i < vc * 4; i++) {
        uint32_t l = w[i] > 0 ? (uint32_t)local[j[i]] : 0;
        if (jct == TB_COMPONENT_UNSIGNED_BYTE)
            bytes[i] = (uint8_t)l;
        else
            ((uint16_t *)(void *)bytes)[i] = (uint16_t)l;
    }
    assert_int_equal(tb_doc_replace_accessor_data(doc, p->joints[0], bytes, jct, &err), TB_OK);
    int acc = tb_doc_add_accessor(doc, mats, (size_t)n, TB_COMPONENT_FLOAT, "MAT4", 0, 0);
    assert_true(acc >= 0);
    json_t *root = tb_doc_json(doc), *skins = json_object_get(root, "skins");
    json_array_append_new(skins, json_pack("{s:s,s:o,s:i}", "name", "own", "joints", joints, "inverseBindMatrices", acc));
    json_object_set_new(json_array_get(json_object_get(root, "nodes"), (size_t)node), "skin",
                        json_integer((json_int_t)json_array_size(skins) - 1));
    assert_int_equal(tb_doc_refresh(doc, &err), TB_OK);
    free(j);
    free(w);
    free(local);
    free(all);
    free(mats);
    free(bytes);
}

int tbt_fix_report_says(const tb_fix_report *rep, const char *const *needles)
{
    char *text = tb_fix_report_json_text(rep, 0);
    int all = text != NULL;
    for (const char *const *n = needles; all && *n; n++)
        all = strstr(text, *n) != NULL;
    free(text);
    return all;
}
