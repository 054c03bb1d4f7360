/* Skin weights compared by joint name (model_cmp.h). */
#include "model_cmp.h"

#include <math.h>
#include <string.h>

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
