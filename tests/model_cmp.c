/* Skin weights compared by joint name (model_cmp.h). */
#include "model_cmp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"
#include "tailbone/clip.h"

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
