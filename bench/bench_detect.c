/* bench_detect — the offline pass on a fixed 1M-vertex workload (SPEC A,
 * STYLE 6: no quadratic step). A synthetic body built in memory from
 * subdivided tubes: torso, two legs and a tapering tail weighted to the left
 * shin, every tube with a duplicated UV-seam column so welding has work.
 * Prints the time of each detection stage. Usage: bench_detect [vertices]. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tailbone/appendage.h"

#include "bench_body.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    size_t target = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
    size_t seg = 256, cols = seg + 1;
    size_t rings_total = target / cols;
    /* torso 40%, legs 20% each, tail 20% of the rings */
    size_t rt = rings_total * 4 / 10, rl = rings_total / 5, rtail = rings_total - rt - 2 * rl;
    mesh m = {0};
    m.cap_v = rings_total * cols;
    m.cap_t = rings_total * seg * 2;
    m.pos = malloc(m.cap_v * 3 * sizeof *m.pos);
    m.joints = calloc(m.cap_v * 4, sizeof *m.joints);
    m.weights = calloc(m.cap_v * 4, sizeof *m.weights);
    m.tris = malloc(m.cap_t * 3 * sizeof *m.tris);
    if (!m.pos || !m.joints || !m.weights || !m.tris)
        return 1;
    const float torso_a[3] = {0, 0.9f, 0}, torso_b[3] = {0, 1.8f, 0};
    const float ll_a[3] = {0.1f, 0.95f, 0}, ll_b[3] = {0.1f, 0.0f, 0};
    const float rl_a[3] = {-0.1f, 0.95f, 0}, rl_b[3] = {-0.1f, 0.0f, 0};
    const float tail_a[3] = {0, 1.0f, -0.08f}, tail_b[3] = {0, 0.55f, -0.8f};
    tube(&m, torso_a, torso_b, 0.11f, 0.09f, rt, seg, -1);
    tube(&m, ll_a, ll_b, 0.07f, 0.05f, rl, seg, J_LLEG);
    tube(&m, rl_a, rl_b, 0.07f, 0.05f, rl, seg, J_RLEG);
    tube(&m, tail_a, tail_b, 0.06f, 0.015f, rtail, seg, J_LLEG); /* the article's wrong weights */

    tb_model model;
    memset(&model, 0, sizeof model);
    float bind[J_N][16];
    tb_transform rest[J_N];
    uint8_t has_ibm[J_N];
    int skin_joints[J_N];
    tb_role roles[J_N];
    for (int j = 0; j < J_N; j++) {
        memset(bind[j], 0, sizeof bind[j]);
        bind[j][0] = bind[j][5] = bind[j][10] = bind[j][15] = 1;
        bind[j][12] = jpos[j][0], bind[j][13] = jpos[j][1], bind[j][14] = jpos[j][2];
        memset(&rest[j], 0, sizeof rest[j]);
        rest[j].r[3] = 1;
        rest[j].s[0] = rest[j].s[1] = rest[j].s[2] = 1;
        has_ibm[j] = 1;
        skin_joints[j] = j;
        roles[j] = tb_role_from_name(names[j]);
    }
    model.skel.joint_count = J_N;
    model.skel.parents = parents;
    model.skel.names = names;
    model.skel.rest_local = rest;
    model.skel.bind_world = (const float(*)[16])bind;
    model.skel.has_ibm = has_ibm;
    model.skin_joint_count = J_N;
    model.skin_joints = skin_joints;
    model.roles = roles;
    for (int r = 0; r < TB_ROLE_COUNT; r++)
        model.role_joint[r] = -1;
    for (int j = 0; j < J_N; j++)
        if (roles[j])
            model.role_joint[roles[j]] = j;
    model.vertex_count = m.nv;
    model.positions = m.pos;
    model.influences = 4;
    model.joints = m.joints;
    model.weights = m.weights;
    model.triangle_count = m.nt;
    model.triangles = m.tris;
    for (int c = 0; c < 3; c++) {
        model.bbox_min[c] = INFINITY;
        model.bbox_max[c] = -INFINITY;
    }
    for (size_t v = 0; v < m.nv; v++)
        for (int c = 0; c < 3; c++) {
            model.bbox_min[c] = fminf(model.bbox_min[c], m.pos[v * 3 + (size_t)c]);
            model.bbox_max[c] = fmaxf(model.bbox_max[c], m.pos[v * 3 + (size_t)c]);
        }
    model.height = model.bbox_max[1] - model.bbox_min[1];
    model.armature_scale = 1;

    printf("bench_detect: %zu vertices, %zu triangles, %d joints, H %.3f\n", m.nv, m.nt, J_N, model.height);
    tb_appendage_report rep;
    tb_error err = {0};
    double t0 = now_ms();
    if (tb_appendage_detect(&rep, &model, NULL, &err) != TB_OK) {
        fprintf(stderr, "detect failed: %s\n", err.message);
        return 1;
    }
    double t1 = now_ms();
    for (int s = 0; tb_appendage_stage_name(s); s++)
        printf("  %-11s %9.1f ms\n", tb_appendage_stage_name(s), rep.stage_ms[s]);
    printf("  %-11s %9.1f ms\n", "total", t1 - t0);
    printf("  %zu welded vertices, %zu far, %d appendage(s)\n", rep.welded_count, rep.far_count,
           rep.appendage_count);
    int ok = 0;
    for (int i = 0; i < rep.appendage_count; i++) {
        const tb_appendage *a = &rep.appendages[i];
        printf("  #%d %s/%s: %zu vertices on %s, elongation %.2f, L %.3f, K %d, weighted bone distance %.3f\n", i,
               tb_appendage_kind_name(a->kind), tb_appendage_decision_name(a->decision), a->vertex_count,
               a->attach_name, a->elongation, a->length, a->bone_count, a->distance_before);
        ok |= a->decision == TB_DECIDE_CHAIN;
    }
    tb_appendage_report_free(&rep);
    free(m.pos);
    free(m.joints);
    free(m.weights);
    free(m.tris);
    return ok ? 0 : 1;
}
