/* Seeds for fuzz_fix: tiny rigged characters with a tail (a few hundred
 * vertices, one short clip, a few kB each), so that the fuzzer runs
 * thousands of whole fix jobs a minute instead of a few hundred on the
 * 460 kB `tailbone synth` characters. Each seed is checked to exercise the
 * whole job (a tail found, a chain made, keys baked): if detection ever
 * stops seeing these tails, the fuzzer would only test the loader, so this
 * program fails instead.
 *   usage: fuzz_seeds DIR      (writes DIR/tiny_*.glb)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gltf/doc_json.h"
#include "tailbone/fix.h"
#include "tailbone/gltf.h"

enum { HIPS, SPINE, SPINE1, SPINE2, NECK, HEAD, LSH, LARM, LFORE, LHAND, RSH, RARM, RFORE, RHAND,
       LUP, LLEG, LFOOT, LTOE, RUP, RLEG, RFOOT, RTOE, NJ };
static const char *const names[NJ] = {"Hips", "Spine", "Spine1", "Spine2", "Neck", "Head",
                                      "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
                                      "RightShoulder", "RightArm", "RightForeArm", "RightHand",
                                      "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
                                      "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"};
static const int parent[NJ] = {-1, HIPS, SPINE, SPINE1, SPINE2, NECK, SPINE2, LSH, LARM, LFORE,
                               SPINE2, RSH, RARM, RFORE, HIPS, LUP, LLEG, LFOOT, HIPS, RUP, RLEG, RFOOT};
static const float jpos[NJ][3] = {
    {0, 1.00f, 0},     {0, 1.10f, 0},     {0, 1.22f, 0},     {0, 1.34f, 0},     {0, 1.50f, 0},
    {0, 1.60f, 0},     {0.05f, 1.45f, 0}, {0.18f, 1.45f, 0}, {0.45f, 1.45f, 0}, {0.70f, 1.45f, 0},
    {-0.05f, 1.45f, 0}, {-0.18f, 1.45f, 0}, {-0.45f, 1.45f, 0}, {-0.70f, 1.45f, 0},
    {0.10f, 0.95f, 0}, {0.10f, 0.52f, 0}, {0.10f, 0.08f, 0}, {0.10f, 0.02f, 0.12f},
    {-0.10f, 0.95f, 0}, {-0.10f, 0.52f, 0}, {-0.10f, 0.08f, 0}, {-0.10f, 0.02f, 0.12f}};

#define SEGS 6
#define MAXV 1024
#define MAXT 2048

typedef struct mesh {
    float p[MAXV][3];
    uint8_t j[MAXV][4];
    float w[MAXV][4];
    uint16_t idx[MAXT * 3];
    int nv, nt;
} mesh;

/* A capped tube through `n` ring centres c with radii r (6 vertices round). */
static void tube(mesh *m, const float (*c)[3], const float *r, int n)
{
    int first = m->nv;
    for (int i = 0; i < n; i++) {
        const float *a = c[i > 0 ? i - 1 : 0], *b = c[i + 1 < n ? i + 1 : n - 1];
        float d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float dl = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int k = 0; k < 3; k++)
            d[k] /= dl;
        /* u: perpendicular to d, v = d x u */
        float h[3] = {fabsf(d[0]) < 0.9f ? 1.0f : 0.0f, fabsf(d[0]) < 0.9f ? 0.0f : 1.0f, 0};
        float dot = h[0] * d[0] + h[1] * d[1];
        float u[3] = {h[0] - dot * d[0], h[1] - dot * d[1], h[2] - dot * d[2]};
        float ul = sqrtf(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        for (int k = 0; k < 3; k++)
            u[k] /= ul;
        float v[3] = {d[1] * u[2] - d[2] * u[1], d[2] * u[0] - d[0] * u[2], d[0] * u[1] - d[1] * u[0]};
        for (int s = 0; s < SEGS; s++) {
            float t = 6.2831853f * (float)s / SEGS;
            for (int k = 0; k < 3; k++)
                m->p[m->nv][k] = c[i][k] + r[i] * (cosf(t) * u[k] + sinf(t) * v[k]);
            m->nv++;
        }
    }
    for (int i = 0; i + 1 < n; i++)
        for (int s = 0; s < SEGS; s++) {
            int a = first + i * SEGS + s, b = first + i * SEGS + (s + 1) % SEGS;
            uint16_t q[6] = {(uint16_t)a, (uint16_t)b, (uint16_t)(b + SEGS), (uint16_t)a, (uint16_t)(b + SEGS),
                             (uint16_t)(a + SEGS)};
            memcpy(m->idx + 3 * m->nt, q, sizeof q);
            m->nt += 2;
        }
    for (int e = 0; e < 2; e++) { /* caps: a fan to the end ring's centre */
        int ring = e ? n - 1 : 0, centre = m->nv;
        memcpy(m->p[m->nv++], c[ring], sizeof c[ring]);
        for (int s = 0; s < SEGS; s++) {
            int a = first + ring * SEGS + s, b = first + ring * SEGS + (s + 1) % SEGS;
            uint16_t q[3] = {(uint16_t)centre, (uint16_t)(e ? a : b), (uint16_t)(e ? b : a)};
            memcpy(m->idx + 3 * m->nt, q, sizeof q);
            m->nt++;
        }
    }
}

static float seg_dist(const float *p, const float *a, const float *b)
{
    float ab[3], ap[3], t = 0, l = 0;
    for (int k = 0; k < 3; k++)
        ab[k] = b[k] - a[k], ap[k] = p[k] - a[k], t += ab[k] * ap[k], l += ab[k] * ab[k];
    t = l > 0 ? fminf(fmaxf(t / l, 0), 1) : 0;
    float d = 0;
    for (int k = 0; k < 3; k++)
        d += (ap[k] - t * ab[k]) * (ap[k] - t * ab[k]);
    return sqrtf(d);
}

/* Each vertex from `from` on: the two nearest bone segments (a bone runs
 * from its joint to its first child; leaves a short way on), inverse 4th
 * power; or all on `only` when only >= 0 (a rigger's wrong weights). */
static void weigh(mesh *m, int from, int only)
{
    for (int i = from; i < m->nv; i++) {
        int best[2] = {0, 0};
        float bd[2] = {1e9f, 1e9f};
        for (int j = 0; j < NJ; j++) {
            int child = -1;
            for (int c = j + 1; c < NJ && child < 0; c++)
                if (parent[c] == j)
                    child = c;
            float end[3];
            for (int k = 0; k < 3; k++)
                end[k] = child >= 0 ? jpos[child][k] : jpos[j][k] + 0.05f * (jpos[j][k] - jpos[parent[j]][k]);
            float d = seg_dist(m->p[i], jpos[j], end);
            if (d < bd[0])
                bd[1] = bd[0], best[1] = best[0], bd[0] = d, best[0] = j;
            else if (d < bd[1])
                bd[1] = d, best[1] = j;
        }
        float w0 = 1 / powf(bd[0] + 1e-3f, 4), w1 = 1 / powf(bd[1] + 1e-3f, 4);
        if (only >= 0)
            best[0] = only, w0 = 1, w1 = 0;
        m->j[i][0] = (uint8_t)best[0], m->j[i][1] = (uint8_t)best[1], m->j[i][2] = m->j[i][3] = 0;
        m->w[i][0] = w0 / (w0 + w1), m->w[i][1] = 1 - m->w[i][0], m->w[i][2] = m->w[i][3] = 0;
    }
}

static void limb(mesh *m, const float *a, const float *b, float r0, float r1, int n)
{
    float c[16][3], r[16];
    for (int i = 0; i < n; i++) {
        float t = (float)i / (float)(n - 1);
        for (int k = 0; k < 3; k++)
            c[i][k] = a[k] + t * (b[k] - a[k]);
        r[i] = r0 + t * (r1 - r0);
    }
    tube(m, (const float(*)[3])c, r, n);
}

/* One seed: `unit` 1 (metres) or 100 (cm under an armature scaled 0.01),
 * Mixamo-prefixed names or bare, the tail weighted to its nearest bones or
 * all to `tail_bone`, the tail in the body's primitive or its own. */
static tb_doc *character(double unit, int prefixed, int tail_bone, int tail_prim)
{
    mesh *ms[2] = {calloc(1, sizeof(mesh)), calloc(1, sizeof(mesh))};
    if (!ms[0] || !ms[1]) {
        fprintf(stderr, "fuzz_seeds: out of memory\n");
        exit(1);
    }
    mesh *body = ms[0], *tail = ms[1];
    limb(body, (float[]){0, 0.88f, 0}, (float[]){0, 1.52f, 0}, 0.15f, 0.13f, 8); /* torso */
    limb(body, (float[]){0, 1.52f, 0}, (float[]){0, 1.82f, 0}, 0.08f, 0.06f, 4); /* neck, head */
    for (int s = -1; s <= 1; s += 2) {
        limb(body, (float[]){0.1f * s, 0.97f, 0}, (float[]){0.1f * s, 0.05f, 0}, 0.075f, 0.045f, 10);
        limb(body, (float[]){0.12f * s, 1.45f, 0}, (float[]){0.78f * s, 1.45f, 0}, 0.05f, 0.03f, 8);
    }
    weigh(body, 0, -1);
    mesh *t = tail_prim ? tail : body;
    int from = t->nv;
    float c[8][3], r[8];
    for (int i = 0; i < 8; i++) { /* from the lower back, out and down */
        float u = (float)i / 7.0f;
        c[i][0] = 0.02f * u, c[i][1] = 0.93f - 0.55f * u * u, c[i][2] = -0.12f - 0.35f * u;
        r[i] = 0.05f - 0.04f * u;
    }
    tube(t, (const float(*)[3])c, r, 8);
    weigh(t, from, tail_bone);

    tb_doc *doc = tb_doc_create("tailbone fuzz seeds");
    json_t *root = tb_doc_json(doc);
    json_t *prims = json_array();
    for (int i = 0; i < 1 + tail_prim; i++) {
        mesh *m = ms[i];
        float p[MAXV][3];
        for (int v = 0; v < m->nv; v++)
            for (int k = 0; k < 3; k++)
                p[v][k] = (float)(m->p[v][k] * unit);
        int a_p = tb_doc_add_accessor(doc, p, (size_t)m->nv, TB_COMPONENT_FLOAT, "VEC3", 0, 34962);
        int a_j = tb_doc_add_accessor(doc, m->j, (size_t)m->nv, TB_COMPONENT_UNSIGNED_BYTE, "VEC4", 0, 34962);
        int a_w = tb_doc_add_accessor(doc, m->w, (size_t)m->nv, TB_COMPONENT_FLOAT, "VEC4", 0, 34962);
        int a_i = tb_doc_add_accessor(doc, m->idx, (size_t)m->nt * 3, TB_COMPONENT_UNSIGNED_SHORT, "SCALAR", 0, 34963);
        json_array_append_new(prims, json_pack("{s:{s:i,s:i,s:i},s:i}", "attributes", "POSITION", a_p, "JOINTS_0", a_j,
                                               "WEIGHTS_0", a_w, "indices", a_i));
    }
    free(ms[0]);
    free(ms[1]);
    json_object_set_new(root, "meshes", json_pack("[{s:s,s:o}]", "name", "Body", "primitives", prims));
    json_t *nodes = json_array();
    json_array_append_new(nodes, json_pack("{s:s,s:i,s:i}", "name", "Body", "mesh", 0, "skin", 0));
    json_t *arm = json_pack("{s:s,s:[i]}", "name", "Armature", "children", 2);
    if (unit != 1)
        json_object_set_new(arm, "scale", json_pack("[f,f,f]", 1 / unit, 1 / unit, 1 / unit));
    json_array_append_new(nodes, arm);
    float ibm[NJ][16];
    json_t *joints = json_array();
    for (int j = 0; j < NJ; j++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", prefixed ? "mixamorig:" : "", names[j]);
        double l[3];
        for (int k = 0; k < 3; k++)
            l[k] = (jpos[j][k] - (parent[j] >= 0 ? jpos[parent[j]][k] : 0)) * unit;
        json_t *nd = json_pack("{s:s,s:[f,f,f]}", "name", name, "translation", l[0], l[1], l[2]);
        json_t *ch = json_array();
        for (int c2 = j + 1; c2 < NJ; c2++)
            if (parent[c2] == j)
                json_array_append_new(ch, json_integer(2 + c2));
        if (json_array_size(ch))
            json_object_set_new(nd, "children", ch);
        else
            json_decref(ch);
        json_array_append_new(nodes, nd);
        json_array_append_new(joints, json_integer(2 + j));
        memset(ibm[j], 0, sizeof ibm[j]);
        ibm[j][0] = ibm[j][5] = ibm[j][10] = ibm[j][15] = 1;
        for (int k = 0; k < 3; k++)
            ibm[j][12 + k] = (float)(-jpos[j][k] * unit);
    }
    json_object_set_new(root, "nodes", nodes);
    json_object_set_new(root, "scenes", json_pack("[{s:[i,i]}]", "nodes", 0, 1));
    json_object_set_new(root, "scene", json_integer(0));
    int a_ibm = tb_doc_add_accessor(doc, ibm, NJ, TB_COMPONENT_FLOAT, "MAT4", 0, 0);
    json_object_set_new(root, "skins", json_pack("[{s:i,s:o}]", "inverseBindMatrices", a_ibm, "joints", joints));
    /* Walk: 0.5 s, 5 keys; the thighs swing ±25° about X, the hips bob */
    float times[5] = {0, 0.125f, 0.25f, 0.375f, 0.5f}, lq[5][4], rq[5][4], hp[5][3];
    for (int i = 0; i < 5; i++) {
        float a = 0.436f * sinf(6.2831853f * times[i] / 0.5f) / 2;
        lq[i][0] = sinf(a), lq[i][1] = lq[i][2] = 0, lq[i][3] = cosf(a);
        rq[i][0] = -sinf(a), rq[i][1] = rq[i][2] = 0, rq[i][3] = cosf(a);
        hp[i][0] = 0, hp[i][1] = (float)((1.0 + 0.03 * cos(12.566371 * times[i] / 0.5)) * unit), hp[i][2] = 0;
    }
    int a_t = tb_doc_add_accessor(doc, times, 5, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
    int a_l = tb_doc_add_accessor(doc, lq, 5, TB_COMPONENT_FLOAT, "VEC4", 0, 0);
    int a_r = tb_doc_add_accessor(doc, rq, 5, TB_COMPONENT_FLOAT, "VEC4", 0, 0);
    int a_h = tb_doc_add_accessor(doc, hp, 5, TB_COMPONENT_FLOAT, "VEC3", 0, 0);
    json_object_set_new(root, "animations",
                        json_pack("[{s:s,s:[{s:i,s:i},{s:i,s:i},{s:i,s:i}],s:[{s:i,s:{s:i,s:s}},{s:i,s:{s:i,s:s}},"
                                  "{s:i,s:{s:i,s:s}}]}]",
                                  "name", "Walk", "samplers", "input", a_t, "output", a_l, "input", a_t, "output",
                                  a_r, "input", a_t, "output", a_h, "channels", "sampler", 0, "target", "node",
                                  2 + LUP, "path", "rotation", "sampler", 1, "target", "node", 2 + RUP, "path",
                                  "rotation", "sampler", 2, "target", "node", 2 + HIPS, "path", "translation"));
    tb_error err;
    if (tb_doc_refresh(doc, &err) != TB_OK) {
        fprintf(stderr, "fuzz_seeds: %s\n", err.message);
        exit(1);
    }
    return doc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_seeds DIR\n");
        return 2;
    }
    struct {
        const char *name;
        double unit;
        int prefixed, tail_bone, tail_prim;
    } seeds[] = {{"tiny_m", 1, 1, -1, 0}, {"tiny_cm_hips", 100, 0, HIPS, 1}, {"tiny_leg", 1, 0, LLEG, 1}};
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
        tb_doc *doc = character(seeds[i].unit, seeds[i].prefixed, seeds[i].tail_bone, seeds[i].tail_prim);
        /* the same job as fuzz_fix, which must reach the bake */
        tb_fix_desc d;
        memset(&d, 0, sizeof d);
        d.bake.fps = 5;
        d.bake.max_passes = 3;
        d.bake.settle_s = 0.5f;
        d.repair.blend_zone = 0.25f;
        tb_fix_report rep;
        memset(&rep, 0, sizeof rep);
        tb_doc *out = NULL;
        tb_error err;
        tb_result r = tb_fix_run(&out, doc, &d, &rep, &err);
        int chains = r == TB_OK ? rep.bake.chain_count : 0;
        tb_fix_report_free(&rep);
        tb_doc_free(out);
        if (r != TB_OK || chains < 1) {
            fprintf(stderr, "fuzz_seeds: %s: fix %s (%d chains baked): the seed no longer exercises the job\n",
                    seeds[i].name, r == TB_OK ? "ran" : err.message, chains);
            return 1;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.glb", argv[1], seeds[i].name);
        if (tb_doc_save(doc, path, &err) != TB_OK) {
            fprintf(stderr, "fuzz_seeds: %s\n", err.message);
            return 1;
        }
        tb_doc_free(doc);
    }
    return 0;
}
