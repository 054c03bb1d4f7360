/* The small tailed rig of tests/rig.h. */
#include <string.h>

#include "rig.h"
#include "tailbone/appendage.h"
#include "tailbone/synth.h"

const float tbt_rig_pos[6][3] = {{0, 0, 0},      {0, 1, 0},       {0, 0.98f, -0.1f},
                                 {0, 0.95f, -0.3f}, {0, 0.9f, -0.5f}, {0, 0.85f, -0.7f}};

int tbt_add_floats(tb_doc *doc, const float *v, size_t count, const char *type)
{
    return tb_doc_add_accessor(doc, v, count, TB_COMPONENT_FLOAT, type, 0, 0);
}

tb_doc *tbt_tail_rig(const char *name, int with_tail)
{
    tb_doc *doc = tb_doc_create(name);
    json_t *root = tb_doc_json(doc);
    const char *names[6] = {"Root", "Hips", "Tail_1", "Tail_2", "Tail_3", "Tail_End"};
    const char *plain[6] = {"Root", "Hips", "Bone_1", "Bone_2", "Bone_3", "Bone_End"};
    const float(*pos)[3] = tbt_rig_pos;
    json_t *nodes = json_array();
    for (int i = 0; i < 6; i++) {
        float t[3] = {pos[i][0] - (i ? pos[i - 1][0] : 0), pos[i][1] - (i ? pos[i - 1][1] : 0),
                      pos[i][2] - (i ? pos[i - 1][2] : 0)};
        json_t *n = json_pack("{s:s,s:[f,f,f]}", "name", with_tail ? names[i] : plain[i], "translation", t[0], t[1], t[2]);
        if (i < 5)
            json_object_set_new(n, "children", json_pack("[i]", i + 1));
        json_array_append_new(nodes, n);
    }
    /* skin: joints Hips, bones 1..3, end */
    float ibm[5][16];
    for (int j = 0; j < 5; j++) {
        memset(ibm[j], 0, sizeof ibm[j]);
        ibm[j][0] = ibm[j][5] = ibm[j][10] = ibm[j][15] = 1;
        for (int c = 0; c < 3; c++)
            ibm[j][12 + c] = -pos[j + 1][c];
    }
    int ibm_acc = tbt_add_floats(doc, &ibm[0][0], 5, "MAT4");
    /* a strip along the tail: 2 vertices per bone tip, weights on the bones */
    float verts[8][3];
    uint8_t joints[8][4] = {{0}};
    float weights[8][4] = {{0}};
    for (int k = 0; k < 4; k++)
        for (int side = 0; side < 2; side++) {
            int v = k * 2 + side;
            verts[v][0] = side ? 0.03f : -0.03f;
            verts[v][1] = pos[k + 1][1];
            verts[v][2] = pos[k + 1][2];
            joints[v][0] = (uint8_t)k;
            weights[v][0] = 1;
        }
    uint16_t idx[18] = {0, 1, 2, 1, 3, 2, 2, 3, 4, 3, 5, 4, 4, 5, 6, 5, 7, 6};
    int p = tbt_add_floats(doc, &verts[0][0], 8, "VEC3");
    int jt = tb_doc_add_accessor(doc, joints, 8, TB_COMPONENT_UNSIGNED_BYTE, "VEC4", 0, 0);
    int wt = tbt_add_floats(doc, &weights[0][0], 8, "VEC4");
    int ix = tb_doc_add_accessor(doc, idx, 18, TB_COMPONENT_UNSIGNED_SHORT, "SCALAR", 0, 0);
    json_array_append_new(nodes, json_pack("{s:s,s:i,s:i}", "name", "Skin", "mesh", 0, "skin", 0));
    json_object_set_new(root, "nodes", nodes);
    json_object_set_new(root, "meshes", json_pack("[{s:[{s:{s:i,s:i,s:i},s:i}]}]", "primitives", "attributes",
                                                  "POSITION", p, "JOINTS_0", jt, "WEIGHTS_0", wt, "indices", ix));
    json_object_set_new(root, "skins", json_pack("[{s:[i,i,i,i,i],s:i}]", "joints", 1, 2, 3, 4, 5,
                                                 "inverseBindMatrices", ibm_acc));
    json_object_set_new(root, "scenes", json_pack("[{s:[i,i]}]", "nodes", 0, 6));
    json_object_set_new(root, "scene", json_integer(0));
    return doc;
}

tb_doc *tbt_synth_repaired(const char *variant)
{
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_synth_desc sd = {0};
    if (tb_synth_build(&doc, variant, &sd, NULL, &err) != TB_OK)
        return NULL;
    tb_appendage_report ar;
    tb_result r = tb_appendage_fix(&ar, doc, NULL, &err);
    tb_appendage_report_free(&ar);
    if (r != TB_OK) {
        tb_doc_free(doc);
        return NULL;
    }
    return doc;
}
