/* The tail spring-chain solver (SPEC B), tested headless on synthetic rigs.
 *
 * Every rig is built here: an Armature root (scale 1, or 0.01 for a rig
 * authored in centimetres like real files), Hips, a few body joints (legs,
 * spine) and Tail_1 … Tail_K behind and below the hips, optionally with
 * Tail_End and a second tail TailB_*. Bind matrices are the inverses of IBMs
 * computed from the bind pose, as a loader would hand them over. Each frame
 * the test poses the hips, computes world matrices (its own local-to-world,
 * so this file needs nothing but the solver) and steps the animator.
 */
#include "support.h"

#include <cglm/cglm.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/spring.h"
#include "core/tbmath.h" /* tb__quat_angle: precise near zero, unlike 2 acos|a.b| in float */
#include "runtime/spring_internal.h" /* the batch step on a chosen path */

/* test_rt_spring_batch.c includes this file with TBT_STEP_VIA_BATCH: every
 * test below then steps through tb_spring_step_batch() (a batch of one);
 * test_rt_spring_fast.c also defines TBT_STEP_VIA_FAST: through
 * tb_spring_step_batch_fast(). */
#ifdef TBT_STEP_VIA_BATCH
static void tbt_step_via_batch(tb_spring_animator *a, float dt, const float (*world)[16],
                               tb_transform *locals, float (*world_out)[16])
{
    tb_spring_batch_item it = {a, world, locals, world_out};
#ifdef TBT_STEP_VIA_FAST
    tb_spring_step_batch_fast(&it, 1, dt);
#else
    tb_spring_step_batch(&it, 1, dt);
#endif
}
#define tb_spring_step(a, dt, w, l, wo) tbt_step_via_batch(a, dt, w, l, wo)
#endif

#define TBT_MAXJ 40
#define DEG (3.14159265358979f / 180.0f)

/* ------------------------------------------------------------ rig builder */

typedef struct rig_opts {
    int links;              /* K */
    float tail_len_m;       /* total length; default 0.8 */
    int no_end;             /* no Tail_End helper */
    float unit;             /* 1: metres; 0.01: centimetres under an armature */
    float hips_y_m;         /* default 1.0 */
    float dir[3];           /* authored direction of Tail_1 (hips space) */
    float curl_rad;         /* each next segment turns this much about Z (a side curl) */
    float last_orient_rad;  /* bind rotation of the last tail bone about Z */
    float stored_last_rad;  /* rest_local of the last tail bone rotated about X */
    const char *prefix;     /* name prefix, e.g. "mixamorig:" */
    int second_tail;        /* TailB_1..3 + TailB_End */
    int root_offset_zero;   /* Tail_1 at the hips' origin */
} rig_opts;

typedef struct rig {
    int n;
    int parents[TBT_MAXJ];
    char namebuf[TBT_MAXJ][48];
    const char *names[TBT_MAXJ];
    tb_transform rest[TBT_MAXJ];
    float bind[TBT_MAXJ][16];
    uint8_t has_ibm[TBT_MAXJ];
    tb_skeleton skel;
    float unit;
    int armature, hips, lleg, spine, tail[16], ntail, end, tailb[4], endb;
    /* model-space bind pose (metres) */
    float pm[TBT_MAXJ][3];
    versor qm[TBT_MAXJ];
} rig;

static void v3set(float *d, float x, float y, float z)
{
    d[0] = x;
    d[1] = y;
    d[2] = z;
}

static int rig_add(rig *r, const char *name, int parent, const float pm[3], const versor qm,
                   int ibm)
{
    int j = r->n++;
    r->parents[j] = parent;
    snprintf(r->namebuf[j], sizeof r->namebuf[j], "%s", name);
    r->names[j] = r->namebuf[j];
    memcpy(r->pm[j], pm, sizeof(float) * 3);
    memcpy(r->qm[j], qm, sizeof(versor));
    r->has_ibm[j] = (uint8_t)ibm;
    return j;
}

static void quat_axis(versor q, float angle, float x, float y, float z)
{
    vec3 ax = {x, y, z};
    glm_quatv(q, angle, ax);
}

static void trs_matrix(const tb_transform *x, float m[16])
{
    tb_transform_to_matrix(x, m);
}

static void mat_mul(const float a[16], const float b[16], float d[16])
{
    mat4 x, y, z;
    memcpy(x, a, 64);
    memcpy(y, b, 64);
    glm_mat4_mul(x, y, z);
    memcpy(d, z, 64);
}

static void mat_inv(const float a[16], float d[16])
{
    mat4 x, z;
    memcpy(x, a, 64);
    glm_mat4_inv(x, z);
    memcpy(d, z, 64);
}

/* The test's own local-to-world (this file links the solver only). */
static void local_to_world(const rig *r, const tb_transform *locals, float (*world)[16])
{
    for (int j = 0; j < r->n; j++) {
        float m[16];
        trs_matrix(&locals[j], m);
        if (r->parents[j] < 0)
            memcpy(world[j], m, 64);
        else
            mat_mul(world[r->parents[j]], m, world[j]);
    }
}

static void rig_finish(rig *r)
{
    /* Locals of the bind pose from the model-space bind transforms. */
    for (int j = 0; j < r->n; j++) {
        tb_transform *x = &r->rest[j];
        v3set(x->s, 1, 1, 1);
        if (j == r->armature) {
            v3set(x->t, 0, 0, 0);
            glm_quat_identity(x->r);
            v3set(x->s, r->unit, r->unit, r->unit);
            continue;
        }
        int p = r->parents[j];
        if (p == r->armature) {
            for (int k = 0; k < 3; k++)
                x->t[k] = r->pm[j][k] / r->unit;
            memcpy(x->r, r->qm[j], sizeof(versor));
        } else {
            versor qi, rel;
            float d[3] = {r->pm[j][0] - r->pm[p][0], r->pm[j][1] - r->pm[p][1],
                          r->pm[j][2] - r->pm[p][2]};
            glm_quat_inv(r->qm[p], qi);
            glm_quat_rotatev(qi, d, d);
            for (int k = 0; k < 3; k++)
                x->t[k] = d[k] / r->unit;
            glm_quat_mul(qi, r->qm[j], rel);
            glm_quat_normalize(rel);
            memcpy(x->r, rel, sizeof(versor));
        }
    }
    /* bind_world: world of the bind locals below the armature, i.e. mesh
     * (bind) space — centimetres for a 0.01 rig — as IBM^-1 gives it; the
     * armature itself (not a skin joint) gets the world of its local. */
    float w[TBT_MAXJ][16];
    for (int j = 0; j < r->n; j++) {
        float m[16];
        trs_matrix(&r->rest[j], m);
        if (j == r->armature)
            memcpy(w[j], m, 64);
        else if (r->parents[j] == r->armature)
            memcpy(w[j], m, 64); /* bind space excludes the armature */
        else
            mat_mul(w[r->parents[j]], m, w[j]);
    }
    for (int j = 0; j < r->n; j++) {
        if (r->has_ibm[j]) {
            float ibm[16];
            mat_inv(w[j], ibm); /* what the file stores */
            mat_inv(ibm, r->bind[j]);
        } else {
            /* Not a skin joint: world of its stored local (SPEC A), here in
             * the armature's space. */
            float m[16];
            trs_matrix(&r->rest[j], m);
            if (r->parents[j] < 0)
                memcpy(r->bind[j], m, 64);
            else
                mat_mul(r->bind[r->parents[j]], m, r->bind[j]);
        }
    }
    r->skel.joint_count = r->n;
    r->skel.parents = r->parents;
    r->skel.names = r->names;
    r->skel.rest_local = r->rest;
    r->skel.bind_world = (const float (*)[16])r->bind;
    r->skel.has_ibm = r->has_ibm;
}

static void rig_build(rig *r, const rig_opts *o_in)
{
    rig_opts o = *o_in;
    if (!o.links)
        o.links = 4;
    if (o.tail_len_m == 0)
        o.tail_len_m = 0.8f;
    if (o.unit == 0)
        o.unit = 1.0f;
    if (o.hips_y_m == 0)
        o.hips_y_m = 1.0f;
    if (o.dir[0] == 0 && o.dir[1] == 0 && o.dir[2] == 0)
        v3set(o.dir, 0.0f, -0.8f, -0.6f);
    glm_vec3_normalize(o.dir);
    if (!o.prefix)
        o.prefix = "";
    memset(r, 0, sizeof *r);
    r->unit = o.unit;
    versor id;
    glm_quat_identity(id);
    float p[3];
    char nm[48];
    v3set(p, 0, 0, 0);
    r->armature = rig_add(r, "Armature", -1, p, id, 0);
    v3set(p, 0, o.hips_y_m, 0);
    snprintf(nm, sizeof nm, "%sHips", o.prefix);
    r->hips = rig_add(r, nm, r->armature, p, id, 1);
    v3set(p, 0.1f, o.hips_y_m - 0.05f, 0);
    r->lleg = rig_add(r, "LeftUpLeg", r->hips, p, id, 1);
    v3set(p, 0.1f, o.hips_y_m - 0.5f, 0.02f);
    rig_add(r, "LeftLeg", r->lleg, p, id, 1);
    v3set(p, -0.1f, o.hips_y_m - 0.05f, 0);
    int rl = rig_add(r, "RightUpLeg", r->hips, p, id, 1);
    v3set(p, -0.1f, o.hips_y_m - 0.5f, 0.02f);
    rig_add(r, "RightLeg", rl, p, id, 1);
    v3set(p, 0, o.hips_y_m + 0.1f, 0);
    r->spine = rig_add(r, "Spine", r->hips, p, id, 1);

    float seg = o.tail_len_m / (float)o.links;
    if (o.root_offset_zero)
        v3set(p, 0, o.hips_y_m, 0);
    else
        v3set(p, 0, o.hips_y_m - 0.05f, -0.1f);
    int parent = r->hips;
    r->ntail = o.links;
    for (int i = 0; i < o.links; i++) {
        versor q;
        glm_quat_identity(q);
        if (i == o.links - 1 && o.last_orient_rad != 0)
            quat_axis(q, o.last_orient_rad, 0, 0, 1);
        snprintf(nm, sizeof nm, "%sTail_%d", o.prefix, i + 1);
        r->tail[i] = rig_add(r, nm, parent, p, q, 1);
        parent = r->tail[i];
        versor curl;
        float d[3];
        quat_axis(curl, o.curl_rad * (float)i, 0, 0, 1);
        glm_quat_rotatev(curl, o.dir, d);
        for (int k = 0; k < 3; k++)
            p[k] += seg * d[k];
    }
    r->end = -1;
    if (!o.no_end) {
        snprintf(nm, sizeof nm, "%sTail_End", o.prefix);
        r->end = rig_add(r, nm, parent, p, r->qm[parent], 0); /* weightless helper */
    }
    r->endb = -1;
    if (o.second_tail) {
        v3set(p, 0.0f, o.hips_y_m - 0.02f, -0.12f);
        parent = r->hips;
        for (int i = 0; i < 3; i++) {
            snprintf(nm, sizeof nm, "%sTailB_%d", o.prefix, i + 1);
            r->tailb[i] = rig_add(r, nm, parent, p, id, 1);
            parent = r->tailb[i];
            p[1] -= 0.1f;
            p[2] -= 0.1f;
        }
        snprintf(nm, sizeof nm, "%sTailB_End", o.prefix);
        r->endb = rig_add(r, nm, parent, p, id, 0);
    }
    rig_finish(r);
    if (o.stored_last_rad != 0) {
        /* An old animation frame baked into the node (the article's mouse:
         * ≈28° on its last tail joint). bind_world is not affected. */
        versor extra, q;
        quat_axis(extra, o.stored_last_rad, 1, 0, 0);
        tb_transform *x = &r->rest[r->tail[o.links - 1]];
        glm_quat_mul(x->r, extra, q);
        memcpy(x->r, q, sizeof q);
    }
}

/* ---------------------------------------------------------- simulation */

typedef struct sim {
    rig *r;
    tb_spring_animator *a;
    tb_transform locals[TBT_MAXJ];
    float world[TBT_MAXJ][16];
} sim;

static tb_spring_animator *make_anim(const rig *r, const tb_spring_desc *d)
{
    tb_spring_animator *a = NULL;
    tb_error err;
    tb_result res = tb_spring_create(&a, &r->skel, d, &err);
    if (res != TB_OK)
        print_error("create: %s: %s\n", err.where, err.message);
    assert_int_equal(res, TB_OK);
    return a;
}

static void sim_init(sim *s, rig *r, const tb_spring_desc *d)
{
    memset(s, 0, sizeof *s);
    s->r = r;
    s->a = make_anim(r, d);
    memcpy(s->locals, r->rest, sizeof(tb_transform) * (size_t)r->n);
}

/* Poses the hips (model-space metres and rotation), computes the world and
 * steps the solver, world_out = world. */
static void sim_step(sim *s, float dt, const float pos[3], const versor q)
{
    tb_transform *h = &s->locals[s->r->hips];
    for (int k = 0; k < 3; k++)
        h->t[k] = pos[k] / s->r->unit;
    memcpy(h->r, q, sizeof(versor));
    local_to_world(s->r, s->locals, s->world);
    tb_spring_step(s->a, dt, (const float (*)[16])s->world, s->locals, s->world);
}

/* Same, computing only what the solver reads (the anchors' world; no joint
 * hangs below a tail here) and asking for no world_out: the long random run
 * spends its time in the solver, not in this file's matrix code. */
static void sim_place_anchor(sim *s, const float pos[3], const versor q, const float off[3])
{
    const rig *r = s->r;
    tb_transform *h = &s->locals[r->hips];
    for (int k = 0; k < 3; k++)
        h->t[k] = pos[k] / r->unit;
    if (off) /* moved by off (m) */
        for (int k = 0; k < 3; k++)
            h->t[k] += off[k] / r->unit;
    memcpy(h->r, q, sizeof(versor));
    float m[16];
    trs_matrix(&s->locals[r->armature], s->world[r->armature]);
    trs_matrix(h, m);
    mat_mul(s->world[r->armature], m, s->world[r->hips]);
}

static void sim_step_anchor_only(sim *s, float dt, const float pos[3], const versor q)
{
    sim_place_anchor(s, pos, q, NULL);
    tb_spring_step(s->a, dt, (const float (*)[16])s->world, s->locals, NULL);
}

static void link_state(const sim *s, int chain, int link, tb_spring_link_state *st)
{
    tb_spring_get_link_state(s->a, chain, link, st);
}

static float dist3(const float a[3], const float b[3])
{
    float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* The article's harsh test motion: 0.5 m along X in 2/3 s, then back. */
static float sweep_x(float t)
{
    const float leg = 2.0f / 3.0f;
    float ph = fmodf(t, 2.0f * leg);
    return ph < leg ? 0.5f * ph / leg : 0.5f * (2.0f * leg - ph) / leg;
}

static const float *hips_at(float x, float y, float z)
{
    static float p[3];
    v3set(p, x, y, z);
    return p;
}

static float *quat_yaw(versor q, float yaw)
{
    quat_axis(q, yaw, 0, 1, 0);
    return q;
}

/* ======================================================================
 * Validity
 * ====================================================================== */

static void spring_create_rejects_invalid_arguments(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {0};
    rig_build(&r, &o);
    tb_spring_animator *a = NULL;
    tb_error err;
    size_t size;

    assert_int_equal(tb_spring_create(&a, NULL, NULL, &err), TB_ERR_ARG);
    assert_null(a);
    assert_int_equal(tb_spring_memory_size(NULL, &size, NULL, &err), TB_ERR_ARG);

    /* Parents must come first. */
    rig bad = r;
    rig_finish(&bad);
    bad.parents[2] = 5;
    assert_int_equal(tb_spring_create(&a, &bad.skel, NULL, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_skeleton.parents[2]");

    /* Out-of-range parameters name their field. */
    tb_spring_desc d = {0};
    d.params.rest_curve = 2.0f;
    assert_int_equal(tb_spring_create(&a, &r.skel, &d, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_spring_params.rest_curve");
    d.params.rest_curve = NAN;
    assert_int_equal(tb_spring_create(&a, &r.skel, &d, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_spring_params.rest_curve");
    memset(&d, 0, sizeof d);
    d.params.root_hz = 500.0f; /* far too stiff for a 240 Hz sub-step */
    assert_int_equal(tb_spring_create(&a, &r.skel, &d, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_spring_params.root_hz");
    memset(&d, 0, sizeof d);
    d.substep_s = -1.0f;
    assert_int_equal(tb_spring_create(&a, &r.skel, &d, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_spring_desc.substep_s");
    assert_null(a);

    /* Caller memory: alignment and size. */
    int chains = -1;
    assert_int_equal(tb_spring_memory_size(&r.skel, &size, &chains, &err), TB_OK);
    assert_int_equal(chains, 1);
    char *mem = aligned_alloc(TB_SPRING_ALIGN, size + 2 * TB_SPRING_ALIGN);
    assert_int_equal(tb_spring_init(&a, mem + 4, size, &r.skel, NULL, &err), TB_ERR_ARG);
    assert_int_equal(tb_spring_init(&a, mem, size - 1, &r.skel, NULL, &err), TB_ERR_ARG);
    assert_int_equal(tb_spring_init(&a, mem, size, &r.skel, NULL, &err), TB_OK);
    assert_non_null(a);
    free(mem);

    /* A zero-length tail bone is untrusted data: an error naming the joint,
     * from memory_size as well as create. */
    rig z = r;
    rig_finish(&z);
    memcpy(z.bind[z.tail[2]], z.bind[z.tail[1]], 64);
    assert_int_equal(tb_spring_memory_size(&z.skel, &size, NULL, &err), TB_ERR_INVALID);
    assert_string_equal(err.where, "Tail_2");
    assert_int_equal(tb_spring_create(&a, &z.skel, NULL, &err), TB_ERR_INVALID);

    /* One bone, no Tail_End, no incoming segment: no length to infer. */
    rig one;
    rig_opts oo = {.links = 1, .no_end = 1, .root_offset_zero = 1};
    rig_build(&one, &oo);
    assert_int_equal(tb_spring_create(&a, &one.skel, NULL, &err), TB_ERR_INVALID);
    assert_string_equal(err.where, "Tail_1");
}

static void spring_finds_tail_chains_by_name(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 5, .second_tail = 1, .prefix = "mixamorig:"};
    rig_build(&r, &o);
    tb_spring_animator *a = make_anim(&r, NULL);
    assert_int_equal(tb_spring_chain_count(a), 2);
    tb_spring_chain_info ci;
    tb_spring_get_chain_info(a, 0, &ci);
    assert_int_equal(ci.anchor_joint, r.hips);
    assert_int_equal(ci.first_joint, r.tail[0]);
    assert_int_equal(ci.link_count, 5);
    assert_int_equal(ci.end_joint, r.end);
    tb_spring_get_chain_info(a, 1, &ci);
    assert_int_equal(ci.first_joint, r.tailb[0]);
    assert_int_equal(ci.link_count, 3);
    assert_int_equal(ci.end_joint, r.endb);
    tb_spring_destroy(a);

    /* Names that only look like tails are not chains; a skeleton without a
     * tail is valid and step() writes nothing. */
    rig n;
    rig_opts no = {.links = 3};
    rig_build(&n, &no);
    for (int i = 0; i < n.ntail; i++)
        snprintf(n.namebuf[n.tail[i]], 48, "Ponytail_%d", i + 1);
    snprintf(n.namebuf[n.end], 48, "Ponytail_End");
    a = make_anim(&n, NULL);
    assert_int_equal(tb_spring_chain_count(a), 0);
    tb_transform locals[TBT_MAXJ], before[TBT_MAXJ];
    float world[TBT_MAXJ][16], wbefore[TBT_MAXJ][16];
    memcpy(locals, n.rest, sizeof(tb_transform) * (size_t)n.n);
    local_to_world(&n, locals, world);
    memcpy(before, locals, sizeof before);
    memcpy(wbefore, world, sizeof wbefore);
    tb_spring_step(a, 1.0f / 60.0f, (const float (*)[16])world, locals, world);
    assert_memory_equal(before, locals, sizeof(tb_transform) * (size_t)n.n);
    assert_memory_equal(wbefore, world, sizeof(float) * 16 * (size_t)n.n);
    tb_spring_destroy(a);

    /* A chain hanging from another chain is refused, naming it. */
    rig nest;
    rig_opts ns = {.links = 3, .second_tail = 1};
    rig_build(&nest, &ns);
    nest.parents[nest.tailb[0]] = nest.tail[2];
    tb_error err;
    assert_int_equal(tb_spring_create(&a, &nest.skel, NULL, &err), TB_ERR_INVALID);
    assert_string_equal(err.where, "TailB_1");
}

static void spring_default_params_equal_spec_numbers(void **state)
{
    (void)state;
    tb_spring_params p = tb_spring_params_defaults(NULL);
    assert_float_equal(p.root_hz, 0.9f, 1e-7f);
    assert_float_equal(p.tip_ratio, 0.5f, 1e-7f); /* tip at half the root's frequency */
    assert_float_equal(p.damping_ratio, 0.65f, 1e-7f);
    assert_float_equal(p.gravity_mps2, 1.0f, 1e-7f);
    assert_float_equal(p.carry_rad, 50.0f * DEG, 1e-6f);
    assert_float_equal(p.rest_curve, 0.0f, 0.0f);
    assert_float_equal(p.coupling_per_s, 12.0f, 1e-7f);
    assert_float_equal(p.bend_limit_rad, 30.0f * DEG, 1e-6f);
    assert_float_equal(p.ground_y_m, 0.0f, 0.0f);
    assert_int_equal(p.ground_off, 0);
    assert_float_equal(p.clearance_m, 0.025f, 1e-7f);
    assert_float_equal(p.contact_damping_per_s, 8.0f, 1e-7f);
    tb_spring_desc d = tb_spring_desc_defaults(NULL);
    assert_float_equal(d.substep_s, 1.0f / 240.0f, 1e-9f);
    assert_float_equal(d.max_dt_s, 0.1f, 1e-7f);
    assert_float_equal(d.teleport_m, 1.0f, 1e-7f);
    assert_float_equal(d.teleport_rad, 60.0f * DEG, 1e-6f);

    /* Explicit zeros survive resolution, and resolving is idempotent, so a
     * struct read back can be edited and set again. */
    tb_spring_params z = {.gravity_mps2 = TB_SPRING_ZERO, .carry_rad = TB_SPRING_ZERO,
                          .coupling_per_s = TB_SPRING_ZERO};
    tb_spring_params zr = tb_spring_params_defaults(&z);
    assert_true(zr.gravity_mps2 < 0 && zr.carry_rad < 0 && zr.coupling_per_s < 0);
    tb_spring_params zrr = tb_spring_params_defaults(&zr);
    assert_memory_equal(&zr, &zrr, sizeof zr);

    rig r;
    rig_opts o = {0};
    rig_build(&r, &o);
    tb_spring_animator *a = make_anim(&r, NULL);
    tb_spring_params got;
    tb_spring_get_params(a, 0, &got);
    assert_memory_equal(&got, &p, sizeof p);
    tb_spring_destroy(a);
}

/* ======================================================================
 * Motion
 * ====================================================================== */

/* SPEC B mistake 2: a 0.5 m hip move over 2/3 s spun one bone 95° while its
 * neighbours moved 3°. Three such sweeps (at constant speed, so the hips
 * reverse instantly — harsher than any clip), on chains of 1 to 8 links, at
 * 60 fps. In every frame, for every bone's world direction: it turns less
 * than 30°, and at most 20° more than the faster of its neighbours (a whip
 * wave running down a short-linked tail does turn a bone some 15° more than
 * its neighbours for a frame; a spinning bone would turn far more). No bend
 * passes the 30° limit, and the tail really swings (an over-damped plank
 * would pass the other checks). */
static void spring_fast_hip_sweep_moves_no_bone_far_more_than_its_neighbours(void **state)
{
    (void)state;
    for (int K = 1; K <= 8; K++) {
        rig r;
        rig_opts o = {.links = K, .hips_y_m = 1.2f};
        rig_build(&r, &o);
        sim s;
        sim_init(&s, &r, NULL);
        versor id;
        glm_quat_identity(id);
        float prev[8][3], turn[8];
        float max_turn = 0, max_excess = 0, max_bend = 0, tip_min = 1e9f, tip_max = -1e9f;
        const float dt = 1.0f / 60.0f;
        for (int f = 0; f <= 240; f++) {
            sim_step(&s, dt, hips_at(sweep_x(f * dt), 1.2f, 0), id);
            tb_spring_link_state st[8];
            for (int i = 0; i < K; i++) {
                link_state(&s, 0, i, &st[i]);
                float dir[3];
                for (int k = 0; k < 3; k++)
                    dir[k] = (st[i].tip[k] - st[i].head[k]) / st[i].length_m;
                float c = glm_vec3_dot(dir, prev[i]);
                turn[i] = f > 0 ? acosf(fminf(1.0f, c)) : 0.0f;
                memcpy(prev[i], dir, sizeof dir);
                max_turn = fmaxf(max_turn, turn[i]);
                max_bend = fmaxf(max_bend, st[i].bend_rad);
            }
            for (int i = 0; i < K && K > 1; i++) {
                float nb = fmaxf(i > 0 ? turn[i - 1] : 0.0f, i + 1 < K ? turn[i + 1] : 0.0f);
                max_excess = fmaxf(max_excess, turn[i] - nb);
            }
            float tx = st[K - 1].tip[0] - sweep_x(f * dt);
            tip_min = fminf(tip_min, tx);
            tip_max = fmaxf(tip_max, tx);
        }
        print_message("sweep K=%d: max turn/frame %.1f deg, max excess over neighbours %.1f deg, "
                      "max bend %.2f deg, tip swing %.3f m\n",
                      K, max_turn / DEG, max_excess / DEG, max_bend / DEG, tip_max - tip_min);
        assert_true(max_turn < 30.0f * DEG);
        assert_true(max_excess < 20.0f * DEG);
        assert_true(max_bend <= 30.0f * DEG + 1e-3f);
        assert_true(tip_max - tip_min > 0.08f); /* it swings */
        tb_spring_destroy(s.a);
    }
}

/* Mean and largest angular gap between neighbouring bends (as hips-frame
 * quaternions) during a sweep with yaw, on the fox's 4-bone tail. */
static void neighbour_bend_gap(float coupling, float *mean, float *worst)
{
    rig r;
    rig_opts o = {.links = 4, .hips_y_m = 1.2f};
    rig_build(&r, &o);
    tb_spring_desc d = {0};
    d.params.coupling_per_s = coupling;
    sim s;
    sim_init(&s, &r, &d);
    versor q;
    double sum = 0;
    int count = 0;
    *worst = 0;
    const float dt = 1.0f / 60.0f;
    for (int f = 0; f <= 300; f++) {
        float t = f * dt;
        sim_step(&s, dt, hips_at(sweep_x(t), 1.2f, 0.2f * sinf(5.0f * t)),
                 quat_yaw(q, 0.6f * sinf(4.0f * t)));
        for (int i = 0; i + 1 < 4; i++) {
            tb_spring_link_state a, b;
            link_state(&s, 0, i, &a);
            link_state(&s, 0, i + 1, &b);
            float g = tb__quat_angle(a.bend, b.bend);
            sum += g;
            count++;
            *worst = fmaxf(*worst, g);
        }
    }
    tb_spring_destroy(s.a);
    *mean = (float)(sum / count);
}

/* SPEC B: coupling (k = 12 /s) makes neighbouring bends more alike. */
static void spring_coupling_makes_neighbouring_bends_smoother(void **state)
{
    (void)state;
    float on, off, on_max, off_max;
    neighbour_bend_gap(0.0f /* default 12 /s */, &on, &on_max);
    neighbour_bend_gap(TB_SPRING_ZERO, &off, &off_max);
    print_message("neighbour bend gap: coupling on mean %.2f max %.2f deg, off mean %.2f max %.2f deg\n",
                  on / DEG, on_max / DEG, off / DEG, off_max / DEG);
    assert_true(on < 0.75f * off);
    assert_true(on_max < 0.8f * off_max);
}

/* Mirror the hip motion through the character's median plane (x → −x): the
 * tail must mirror too. */
static void spring_mirrored_hip_motion_gives_mirrored_tail(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 5};
    rig_build(&r, &o);
    sim a, b;
    sim_init(&a, &r, NULL);
    sim_init(&b, &r, NULL);
    float worst = 0;
    const float dt = 1.0f / 60.0f;
    for (int f = 0; f < 300; f++) {
        float t = f * dt;
        float x = 0.3f * sinf(2.0f * GLM_PIf * 1.3f * t), yaw = 0.7f * sinf(2.0f * GLM_PIf * 0.9f * t);
        float roll = 0.3f * sinf(2.0f * GLM_PIf * 0.7f * t);
        versor qy, qr, qa, qb;
        quat_axis(qy, yaw, 0, 1, 0);
        quat_axis(qr, roll, 0, 0, 1);
        glm_quat_mul(qy, qr, qa);
        /* Reflection x → −x maps a rotation (x, y, z, w) to (x, −y, −z, w). */
        glm_quat_init(qb, qa[0], -qa[1], -qa[2], qa[3]);
        sim_step(&a, dt, hips_at(x, 1.0f, 0.1f * t), qa);
        sim_step(&b, dt, hips_at(-x, 1.0f, 0.1f * t), qb);
        for (int i = 0; i < 5; i++) {
            tb_spring_link_state sa, sb;
            link_state(&a, 0, i, &sa);
            link_state(&b, 0, i, &sb);
            float m[3] = {-sb.tip[0], sb.tip[1], sb.tip[2]};
            float e = dist3(sa.tip, m);
            if (e > worst)
                worst = e;
        }
    }
    print_message("mirror: worst tip asymmetry %.2e m\n", worst);
    assert_true(worst < 1e-4f);
    tb_spring_destroy(a.a);
    tb_spring_destroy(b.a);
}

/* ======================================================================
 * Rest pose
 * ====================================================================== */

/* The spring's pure rest (β = 1, no carry, no gravity, no ground) must be the
 * bind pose recovered from the IBMs, ignoring a 28° rotation stored on the
 * last joint's node; and the stored rotation must change nothing at all. */
static void spring_rest_pose_comes_from_bind_matrices_not_stored_node_rotation(void **state)
{
    (void)state;
    rig clean, baked;
    rig_opts o = {.links = 4, .unit = 0.01f};
    rig_build(&clean, &o);
    o.stored_last_rad = 28.0f * DEG;
    rig_build(&baked, &o);
    tb_spring_desc d = {0};
    d.params.rest_curve = 1.0f;
    d.params.carry_rad = TB_SPRING_ZERO;
    d.params.gravity_mps2 = TB_SPRING_ZERO;
    d.params.ground_off = 1;
    sim a, b;
    sim_init(&a, &clean, &d);
    sim_init(&b, &baked, &d);
    versor id;
    glm_quat_identity(id);
    sim_step(&a, 1.0f / 60.0f, hips_at(0, 1, 0), id);
    sim_step(&b, 1.0f / 60.0f, hips_at(0, 1, 0), id);
    int last = baked.tail[3];
    float baked_err = tb__quat_angle(baked.rest[last].r, clean.rest[last].r);
    assert_true(baked_err > 27.0f * DEG);
    for (int i = 0; i < 4; i++) {
        int j = clean.tail[i];
        float e = tb__quat_angle(b.locals[j].r, clean.rest[j].r);
        assert_true(e < 0.01f * DEG);
    }
    for (int f = 0; f < 120; f++) {
        float t = f / 60.0f;
        sim_step(&a, 1.0f / 60.0f, hips_at(sweep_x(t), 1, 0), id);
        sim_step(&b, 1.0f / 60.0f, hips_at(sweep_x(t), 1, 0), id);
        for (int i = 0; i < 4; i++)
            assert_memory_equal(&a.locals[clean.tail[i]], &b.locals[clean.tail[i]],
                                sizeof(tb_transform));
    }
    tb_spring_destroy(a.a);
    tb_spring_destroy(b.a);
}

/* No Tail_End, last bone oriented 70° away from its parent: the last
 * segment extends the incoming tangent (in the bone's own frame), so at
 * rest its tip continues the straight line, with the incoming length. */
static void spring_oriented_terminal_bone_without_tail_end_extends_the_tangent(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 3, .no_end = 1, .last_orient_rad = 70.0f * DEG, .unit = 0.01f};
    rig_build(&r, &o);
    tb_spring_desc d = {0};
    d.params.rest_curve = 1.0f;
    d.params.carry_rad = TB_SPRING_ZERO;
    d.params.gravity_mps2 = TB_SPRING_ZERO;
    d.params.ground_off = 1;
    sim s;
    sim_init(&s, &r, &d);
    versor q;
    sim_step(&s, 1.0f / 60.0f, hips_at(0.2f, 1.1f, 0.3f), quat_yaw(q, 0.5f));
    for (int f = 0; f < 30; f++)
        sim_step(&s, 1.0f / 60.0f, hips_at(0.2f, 1.1f, 0.3f), q);
    tb_spring_link_state s1, s2;
    link_state(&s, 0, 1, &s1);
    link_state(&s, 0, 2, &s2);
    float in[3], expect[3];
    for (int k = 0; k < 3; k++)
        in[k] = s2.head[k] - s1.head[k];
    float len = glm_vec3_norm(in);
    for (int k = 0; k < 3; k++)
        expect[k] = s2.head[k] + in[k];
    print_message("terminal tip error %.2e m (segment %.3f m)\n", dist3(s2.tip, expect), len);
    assert_true(dist3(s2.tip, expect) < 1e-4f);
    assert_float_equal(s2.length_m, len, 1e-4f);
    /* And the bone keeps its bind orientation. */
    assert_true(tb__quat_angle(s.locals[r.tail[2]].r, r.rest[r.tail[2]].r) < 0.01f * DEG);
    tb_spring_destroy(s.a);
}

/* Settled, weightless, no ground: world direction of each segment. */
static void settle_quiet(sim *s, float seconds)
{
    versor id;
    glm_quat_identity(id);
    for (int f = 0; f < (int)(seconds * 60); f++)
        sim_step(s, 1.0f / 60.0f, hips_at(0, 1, 0), id);
}

/* SPEC B mistake 3: carry is the lift of the WHOLE tail, spread over its
 * joints. Straight tail hanging down: segment i settles at 50°(i+1)/N from
 * the vertical, back and up, for 4 and for 8 bones alike. */
static void spring_carry_lifts_the_whole_tail_once_for_4_and_8_bones(void **state)
{
    (void)state;
    int counts[2] = {4, 8};
    for (int c = 0; c < 2; c++) {
        int N = counts[c];
        rig r;
        rig_opts o = {.links = N, .dir = {0, -1, 0}, .hips_y_m = 1.2f};
        rig_build(&r, &o);
        tb_spring_desc d = {0};
        d.params.gravity_mps2 = TB_SPRING_ZERO;
        d.params.ground_off = 1;
        sim s;
        sim_init(&s, &r, &d);
        settle_quiet(&s, 1.0f);
        for (int i = 0; i < N; i++) {
            tb_spring_link_state st;
            link_state(&s, 0, i, &st);
            float dir[3];
            for (int k = 0; k < 3; k++)
                dir[k] = (st.tip[k] - st.head[k]) / st.length_m;
            float ang = acosf(-dir[1]);
            float want = 50.0f * DEG * (float)(i + 1) / (float)N;
            assert_float_equal(ang, want, 0.2f * DEG);
            assert_true(i == 0 || dir[2] < 0); /* back, not forward */
            assert_float_equal(dir[0], 0.0f, 1e-5f);
        }
        tb_spring_destroy(s.a);
    }
}

/* Centred rest arc: a tail authored with a sideways curl hangs centred by
 * default (β = 0) and keeps the artist's curl with β = 1. Mesh locals are
 * not the spring's business: only targets change. */
static void spring_centred_rest_arc_removes_an_authored_side_curl(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 5, .curl_rad = 12.0f * DEG, .hips_y_m = 1.3f};
    rig_build(&r, &o);
    float side[2];
    for (int beta = 0; beta < 2; beta++) {
        tb_spring_desc d = {0};
        d.params.rest_curve = (float)beta;
        d.params.ground_off = 1;
        sim s;
        sim_init(&s, &r, &d);
        settle_quiet(&s, 2.0f);
        float worst = 0;
        for (int i = 0; i < 5; i++) {
            tb_spring_link_state st;
            link_state(&s, 0, i, &st);
            worst = fmaxf(worst, fabsf(st.tip[0]));
        }
        side[beta] = worst;
        tb_spring_destroy(s.a);
    }
    print_message("side offset of the tail: centred %.2e m, authored %.3f m\n", side[0], side[1]);
    assert_true(side[0] < 1e-4f);
    assert_true(side[1] > 0.05f);
}

/* ======================================================================
 * Time
 * ====================================================================== */

/* Frame f of a periodic hip motion at 60 fps, `per` frames a period:
 * sideways, vertical and forward sways with a yaw. */
static void periodic_sweep_step(sim *s, int f, int per)
{
    float t = (float)(f % per) / per * 2.0f * GLM_PIf;
    versor q;
    sim_step(s, 1.0f / 60.0f, hips_at(0.25f * sinf(t), 1.0f + 0.05f * sinf(2 * t), 0.1f * cosf(t)),
             quat_yaw(q, 0.4f * sinf(t)));
}

/* A periodic hip motion: after warm-up the tail's state repeats with it, so
 * a baked loop closes (SPEC D relies on it). */
static void spring_loop_closes_after_warm_up(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 6};
    rig_build(&r, &o);
    sim s;
    sim_init(&s, &r, NULL);
    const int per = 60; /* 1 s period at 60 fps */
    float rec[2][60][6][3];
    for (int f = 0; f < per * 14; f++) {
        periodic_sweep_step(&s, f, per);
        int cyc = f / per;
        if (cyc >= 12)
            for (int i = 0; i < 6; i++) {
                tb_spring_link_state st;
                link_state(&s, 0, i, &st);
                memcpy(rec[cyc - 12][f % per][i], st.tip, 12);
            }
    }
    float worst = 0;
    for (int f = 0; f < per; f++)
        for (int i = 0; i < 6; i++)
            worst = fmaxf(worst, dist3(rec[0][f][i], rec[1][f][i]));
    print_message("loop closure: worst tip gap between cycles 13 and 14: %.2e m\n", worst);
    assert_true(worst < 1e-4f);
    tb_spring_destroy(s.a);
}

/* tb_spring_state_get / tb_spring_state_set: the motion saved at one frame
 * of a periodic sweep and put back one period later (the same anchor pose)
 * replays the same frames bit for bit; a vector of NaNs puts every link at
 * rest on its target, and the chain goes on with finite tips. */
static void spring_state_saved_and_put_back_replays_the_same_motion(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 6};
    rig_build(&r, &o);
    sim s;
    sim_init(&s, &r, NULL);
    const int per = 60, n = tb_spring_state_count(s.a);
    assert_int_equal(n, 6 * TB_SPRING_STATE_FLOATS);
    float saved[6 * TB_SPRING_STATE_FLOATS], rec[2][30][6][3];
    versor q;
    for (int f = 0; f <= 2 * per + 30; f++) {
        periodic_sweep_step(&s, f, per);
        if (f == per)
            tb_spring_state_get(s.a, saved);
        if (f == 2 * per)
            tb_spring_state_set(s.a, saved);
        int run = f > 2 * per ? 1 : f > per && f <= per + 30 ? 0 : -1;
        if (run >= 0)
            for (int i = 0; i < 6; i++) {
                tb_spring_link_state st;
                link_state(&s, 0, i, &st);
                memcpy(rec[run][(f - 1) % per][i], st.tip, sizeof st.tip);
            }
    }
    assert_memory_equal(rec[0], rec[1], sizeof rec[0]);
    float nan[6 * TB_SPRING_STATE_FLOATS];
    for (int k = 0; k < n; k++)
        nan[k] = NAN;
    tb_spring_state_set(s.a, nan);
    for (int f = 0; f < 30; f++)
        sim_step(&s, 1.0f / 60.0f, hips_at(0, 1, 0), quat_yaw(q, 0));
    for (int i = 0; i < 6; i++) {
        tb_spring_link_state st;
        link_state(&s, 0, i, &st);
        for (int k = 0; k < 3; k++)
            assert_true(isfinite(st.tip[k]));
        assert_true(fabsf(st.bend[0] * st.bend[0] + st.bend[1] * st.bend[1] + st.bend[2] * st.bend[2] +
                          st.bend[3] * st.bend[3] - 1.0f) < 1e-4f);
    }
    tb_spring_destroy(s.a);
}

/* Tip positions at times k/6 s of a fast sweep with yaw, at `fps`. */
static void record_at_fps(int fps, float out[19][8][3])
{
    rig r;
    rig_opts o = {.links = 8, .hips_y_m = 1.2f};
    rig_build(&r, &o);
    sim s;
    sim_init(&s, &r, NULL);
    versor q;
    const float dt = 1.0f / (float)fps;
    int every = fps / 6;
    for (int f = 0; f <= 3 * fps; f++) {
        double t = (double)f / fps;
        float x = 0.25f * (1.0f - cosf((float)(2.0 * GLM_PI * t / 1.2)));
        sim_step(&s, dt, hips_at(x, 1.2f, 0.1f * sinf((float)(3.0 * t))),
                 quat_yaw(q, 0.5f * sinf((float)(2.5 * t))));
        if (f % every == 0)
            for (int i = 0; i < 8; i++) {
                tb_spring_link_state st;
                link_state(&s, 0, i, &st);
                memcpy(out[f / every][i], st.tip, 12);
            }
    }
    tb_spring_destroy(s.a);
}

/* The bound spring.h states: the same motion at 30, 60 and 144 fps gives
 * tail tips within 1 cm of each other (0.8 m tail, 8 links, hips sweeping
 * 0.5 m and yawing ±29°). */
static void spring_same_motion_at_30_60_144_fps_agrees_within_1cm(void **state)
{
    (void)state;
    static float a[19][8][3], b[19][8][3], c[19][8][3];
    record_at_fps(30, a);
    record_at_fps(60, b);
    record_at_fps(144, c);
    float ab = 0, bc = 0;
    for (int k = 0; k < 19; k++)
        for (int i = 0; i < 8; i++) {
            ab = fmaxf(ab, dist3(a[k][i], b[k][i]));
            bc = fmaxf(bc, dist3(b[k][i], c[k][i]));
        }
    print_message("frame-rate independence: 30 vs 60 fps %.2e m, 60 vs 144 fps %.2e m\n", ab, bc);
    assert_true(ab < 0.01f);
    assert_true(bc < 0.01f);
}

static void spring_teleport_resets_instead_of_whipping(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 4};
    rig_build(&r, &o);
    sim s, fresh;
    sim_init(&s, &r, NULL);
    sim_init(&fresh, &r, NULL);
    versor id, q;
    glm_quat_identity(id);
    for (int f = 0; f < 60; f++)
        sim_step(&s, 1.0f / 60.0f, hips_at(sweep_x(f / 60.0f), 1, 0), id);
    /* 5 m in one frame. */
    sim_step(&s, 1.0f / 60.0f, hips_at(5.0f, 1, 2.0f), quat_yaw(q, 0.3f));
    sim_step(&fresh, 1.0f / 60.0f, hips_at(5.0f, 1, 2.0f), q);
    for (int i = 0; i < 4; i++) {
        tb_spring_link_state a, b;
        link_state(&s, 0, i, &a);
        link_state(&fresh, 0, i, &b);
        assert_true(dist3(a.tip, b.tip) < 1e-5f);
        assert_float_equal(glm_vec3_norm(a.velocity), 0.0f, 0.0f);
    }
    /* 90° in one frame, same place. */
    sim_step(&s, 1.0f / 60.0f, hips_at(5.0f, 1, 2.0f), quat_yaw(q, 0.3f + 90.0f * DEG));
    tb_spring_link_state st;
    link_state(&s, 0, 3, &st);
    assert_float_equal(glm_vec3_norm(st.velocity), 0.0f, 0.0f);
    /* Below the thresholds (0.3 m, 20°) the tail swings instead. */
    sim_step(&s, 1.0f / 60.0f, hips_at(5.3f, 1, 2.0f), quat_yaw(q, 0.3f + 110.0f * DEG));
    link_state(&s, 0, 3, &st);
    assert_true(glm_vec3_norm(st.velocity) > 0.01f);
    /* reset() forgets the motion: the next step is a fresh start. */
    tb_spring_reset(s.a);
    sim_step(&s, 1.0f / 60.0f, hips_at(1.0f, 1, 0), quat_yaw(q, 1.0f));
    tb_spring_reset(fresh.a);
    sim_step(&fresh, 1.0f / 60.0f, hips_at(1.0f, 1, 0), q);
    for (int i = 0; i < 4; i++) {
        tb_spring_link_state a, b;
        link_state(&s, 0, i, &a);
        link_state(&fresh, 0, i, &b);
        assert_memory_equal(&a, &b, sizeof a);
    }
    tb_spring_destroy(s.a);
    tb_spring_destroy(fresh.a);
}

static void spring_huge_dt_is_clamped_and_tiny_dt_holds(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 4};
    rig_build(&r, &o);
    sim a, b;
    sim_init(&a, &r, NULL);
    sim_init(&b, &r, NULL);
    versor id;
    glm_quat_identity(id);
    for (int f = 0; f < 30; f++) {
        sim_step(&a, 1.0f / 60.0f, hips_at(sweep_x(f / 60.0f), 1, 0), id);
        sim_step(&b, 1.0f / 60.0f, hips_at(sweep_x(f / 60.0f), 1, 0), id);
    }
    /* A 1e6 s hitch simulates max_dt (0.1 s): the same as a 0.1 s frame. */
    sim_step(&a, 1e6f, hips_at(0.6f, 1, 0), id);
    sim_step(&b, 0.1f, hips_at(0.6f, 1, 0), id);
    for (int i = 0; i < 4; i++)
        assert_memory_equal(&a.locals[r.tail[i]], &b.locals[r.tail[i]], sizeof(tb_transform));
    /* Zero, tiny, negative and NaN dt hold the tail and its state. */
    tb_spring_link_state before[4], after;
    tb_transform held[4];
    for (int i = 0; i < 4; i++) {
        link_state(&a, 0, i, &before[i]);
        held[i] = a.locals[r.tail[i]];
    }
    float dts[4] = {0.0f, 1e-7f, -1.0f, NAN};
    for (int k = 0; k < 4; k++) {
        sim_step(&a, dts[k], hips_at(0.62f, 1, 0), id);
        for (int i = 0; i < 4; i++) {
            link_state(&a, 0, i, &after);
            assert_memory_equal(&before[i], &after, sizeof after);
            assert_memory_equal(&held[i], &a.locals[r.tail[i]], sizeof(tb_transform));
        }
    }
    /* And the next real frame is fine. */
    sim_step(&a, 1.0f / 60.0f, hips_at(0.62f, 1, 0), id);
    link_state(&a, 0, 3, &after);
    assert_true(isfinite(after.tip[0]) && isfinite(after.velocity[0]));
    /* A non-finite hips matrix (a broken clip) holds the tail, finite. */
    for (int i = 0; i < 4; i++)
        held[i] = a.locals[r.tail[i]];
    sim_step(&a, 1.0f / 60.0f, hips_at(NAN, 1, 0), id);
    for (int i = 0; i < 4; i++)
        assert_memory_equal(&held[i], &a.locals[r.tail[i]], sizeof(tb_transform));
    tb_spring_destroy(a.a);
    tb_spring_destroy(b.a);
}

/* ======================================================================
 * Ground and hip plane
 * ====================================================================== */

typedef struct ground_stats {
    float min_clear;    /* min over tips of tip.y − F */
    float worst_len;    /* worst |tip − head| − ℓ relative */
    float worst_joint;  /* worst gap between a tip and the next head */
    int contacts;
    float max_speed;
} ground_stats;

static void ground_check(const sim *s, int links, float F, ground_stats *g)
{
    tb_spring_link_state prev;
    for (int i = 0; i < links; i++) {
        tb_spring_link_state st;
        link_state(s, 0, i, &st);
        g->min_clear = fminf(g->min_clear, st.tip[1] - F);
        g->worst_len = fmaxf(g->worst_len, fabsf(dist3(st.tip, st.head) - st.length_m) / st.length_m);
        if (i > 0)
            g->worst_joint = fmaxf(g->worst_joint, dist3(prev.tip, st.head));
        g->contacts += st.contact;
        if (st.contact) /* SPEC B: no downward speed piles up while resting */
            assert_true(st.velocity[1] >= 0.0f);
        g->max_speed = fmaxf(g->max_speed, glm_vec3_norm(st.velocity));
        prev = st;
    }
}

/* Crouch until the tail lies on the ground, hold, then rise: the tips never
 * sink below ground + clearance, bones keep their lengths, the tail settles,
 * and it lets go when the hips rise. Tail contact never moves the body: every
 * non-tail local and world matrix is bit-for-bit what the body pose gave. */
static void spring_crouch_settle_and_release_on_the_ground(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 5, .tail_len_m = 0.9f, .unit = 0.01f};
    rig_build(&r, &o);
    sim s;
    sim_init(&s, &r, NULL);
    const float F = 0.025f, dt = 1.0f / 60.0f;
    ground_stats g = {1e9f, 0, 0, 0, 0};
    versor id;
    glm_quat_identity(id);
    int body_changed = 0;
    for (int f = 0; f < 60 * 7; f++) {
        float t = f * dt, y;
        if (t < 1.0f)
            y = 1.0f - 0.6f * t; /* crouch to 0.4 m */
        else if (t < 5.0f)
            y = 0.4f;
        else
            y = fminf(1.3f, 0.4f + 0.9f * (t - 5.0f)); /* rise */
        /* Body pose, and what the solver must leave alone. */
        tb_transform *h = &s.locals[r.hips];
        float wob = t < 1.0f ? 0.05f * sinf(3 * t) : 0.05f * sinf(3.0f); /* still while held */
        v3set(h->t, wob / r.unit, y / r.unit, 0);
        memcpy(h->r, id, sizeof id);
        local_to_world(&r, s.locals, s.world);
        tb_transform lb[TBT_MAXJ];
        float wb[TBT_MAXJ][16];
        memcpy(lb, s.locals, sizeof lb);
        memcpy(wb, s.world, sizeof wb);
        tb_spring_step(s.a, dt, (const float (*)[16])s.world, s.locals, s.world);
        for (int j = 0; j < r.n; j++) {
            int tail = 0;
            for (int i = 0; i < r.ntail; i++)
                tail |= j == r.tail[i];
            if (tail || j == r.end)
                continue;
            body_changed |= memcmp(&lb[j], &s.locals[j], sizeof lb[j]) != 0;
            body_changed |= memcmp(wb[j], s.world[j], 64) != 0;
        }
        ground_check(&s, 5, F, &g);
        if (t > 4.5f && t < 5.0f) { /* settled on the ground */
            for (int i = 0; i < 5; i++) {
                tb_spring_link_state st;
                link_state(&s, 0, i, &st);
                assert_true(glm_vec3_norm(st.velocity) < 0.05f);
            }
        }
        if (t > 4.9f && t < 5.0f) {
            print_message("crouch: %d contacts in the last frame\n", g.contacts);
            assert_true(g.contacts > 0);
        }
        g.contacts = 0;
    }
    /* Released. */
    for (int i = 0; i < 5; i++) {
        tb_spring_link_state st;
        link_state(&s, 0, i, &st);
        assert_int_equal(st.contact, 0);
        assert_true(st.tip[1] > F + 0.1f);
    }
    print_message("crouch: min clearance %.2e m, worst length error %.2e, worst joint gap %.2e m\n",
                  g.min_clear, g.worst_len, g.worst_joint);
    assert_false(body_changed);
    assert_true(g.min_clear > -1e-4f);
    assert_true(g.worst_len < 1e-4f);
    assert_true(g.worst_joint < 1e-4f);
    tb_spring_destroy(s.a);
}

/* A raised ground (a step, a table): the tail rests on it, not through it;
 * with the ground off, the same tail hangs far below. */
static void spring_raised_ground_plane_holds_the_tail(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 4, .tail_len_m = 0.9f, .dir = {0, -1, -0.1f}};
    rig_build(&r, &o);
    float lowest[2];
    for (int on = 0; on < 2; on++) {
        tb_spring_desc d = {0};
        d.params.ground_y_m = 0.5f;
        d.params.ground_off = !on;
        d.params.carry_rad = TB_SPRING_ZERO;
        sim s;
        sim_init(&s, &r, &d);
        ground_stats g = {1e9f, 0, 0, 0, 0};
        versor id;
        glm_quat_identity(id);
        for (int f = 0; f < 240; f++) {
            sim_step(&s, 1.0f / 60.0f, hips_at(0.1f * sinf(f / 20.0f), 1, 0), id);
            ground_check(&s, 4, 0.525f, &g);
        }
        lowest[on] = g.min_clear;
        if (on) {
            assert_true(g.contacts > 0);
            assert_true(g.worst_len < 1e-4f);
        }
        tb_spring_destroy(s.a);
    }
    print_message("raised ground: min clearance on %.2e m, off %.3f m\n", lowest[1], lowest[0]);
    assert_true(lowest[1] > -1e-4f);
    assert_true(lowest[0] < -0.1f);
}

/* contact_keeps_limit (opt-in, not SPEC B): on the raised ground the SPEC's
 * contact folds joints past the 30° bend limit; with the option no joint is
 * ever bent past it (the tail then dips into the clearance instead), and
 * bones keep their lengths. */
static void spring_contact_keeps_the_bend_limit_when_asked(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 4, .tail_len_m = 0.9f, .dir = {0, -1, -0.1f}};
    rig_build(&r, &o);
    float worst[2], lowest[2];
    int contacts[2];
    for (int keep = 0; keep < 2; keep++) {
        tb_spring_desc d = {0};
        d.params.ground_y_m = 0.5f;
        d.params.carry_rad = TB_SPRING_ZERO;
        d.params.contact_keeps_limit = keep;
        sim s;
        sim_init(&s, &r, &d);
        ground_stats g = {1e9f, 0, 0, 0, 0};
        versor id;
        glm_quat_identity(id);
        worst[keep] = 0;
        for (int f = 0; f < 240; f++) {
            sim_step(&s, 1.0f / 60.0f, hips_at(0.1f * sinf(f / 20.0f), 1, 0), id);
            ground_check(&s, 4, 0.525f, &g);
            for (int i = 0; i < 4; i++) {
                tb_spring_link_state st;
                link_state(&s, 0, i, &st);
                worst[keep] = fmaxf(worst[keep], st.bend_rad);
            }
        }
        lowest[keep] = g.min_clear;
        contacts[keep] = g.contacts;
        assert_true(g.worst_len < 1e-4f);
        tb_spring_destroy(s.a);
    }
    print_message("raised ground, largest bend: contact beats the limit %.1f deg, keeps it %.1f deg; min clearance "
                  "%.3f / %.3f m; contacts %d / %d\n",
                  worst[0] * 57.2958f, worst[1] * 57.2958f, lowest[0], lowest[1], contacts[0], contacts[1]);
    assert_true(worst[0] > (30.0f + 1.0f) / 57.2958f); /* the SPEC's contact does fold past it here */
    assert_true(worst[1] <= (30.0f + 0.05f) / 57.2958f);
    assert_true(contacts[1] > 0);
}

/* bind_limit_rad (opt-in, not SPEC B): SPEC B's limit bounds each joint's
 * bend from the spring's rest target, which the carry (50° over 4 joints)
 * puts 12.5° off the straight bind chain, so under hard hip sweeps a joint
 * bends further than the limit from its bind pose — what the skin was
 * weighted for. With bind_limit_rad = 15° no bone turns further than that
 * from its bind direction (straight bind chain: the angle between
 * neighbouring links, and for the root the hips' bind direction), the tail
 * still swings, and bones keep their lengths. (Sideways and vertical
 * sweeps: like SPEC B's limit, the bind limit comes before the hip plane,
 * which may turn a bone further; a yawing sweep does, by 0.8° here.) */
static void spring_bind_limit_bounds_the_bend_from_the_bind_pose(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 4, .tail_len_m = 0.9f, .dir = {0, -1, -0.1f}};
    rig_build(&r, &o);
    float worst[2], swing[2];
    for (int on = 0; on < 2; on++) {
        tb_spring_desc d = {0};
        d.params.ground_off = 1;
        d.params.bind_limit_rad = on ? 15.0f / 57.2958f : 0.0f;
        sim s;
        sim_init(&s, &r, &d);
        const float dt = 1.0f / 60.0f;
        float bind[3] = {0, -1, -0.1f}, first_tip[3] = {0};
        glm_vec3_normalize(bind);
        worst[on] = swing[on] = 0;
        float worst_len = 0;
        for (int f = 0; f < 300; f++) {
            float t = f * dt;
            versor q;
            quat_axis(q, 0.0f, 0, 1, 0);
            sim_step(&s, dt, hips_at(0.4f * sinf(6 * t), 1 + 0.15f * sinf(9 * t), 0), q);
            float prev[3];
            glm_quat_rotatev(q, bind, prev);
            for (int i = 0; i < 4; i++) {
                tb_spring_link_state st;
                link_state(&s, 0, i, &st);
                float dir[3] = {st.tip[0] - st.head[0], st.tip[1] - st.head[1], st.tip[2] - st.head[2]};
                float len = glm_vec3_norm(dir);
                worst_len = fmaxf(worst_len, fabsf(len - st.length_m));
                glm_vec3_normalize(dir);
                float c = glm_vec3_dot(prev, dir);
                float ang = acosf(c > 1 ? 1 : c < -1 ? -1 : c);
                if (f > 0)
                    worst[on] = fmaxf(worst[on], ang);
                glm_vec3_copy(dir, prev);
                if (i == 3) {
                    if (f == 0)
                        glm_vec3_copy(st.tip, first_tip);
                    else
                        swing[on] = fmaxf(swing[on], dist3(st.tip, first_tip));
                }
            }
        }
        assert_true(worst_len < 1e-4f);
        tb_spring_destroy(s.a);
    }
    print_message("hip sweeps, largest bend from the bind pose: SPEC B %.1f deg, bind limit 15 deg: %.1f deg; "
                  "tip travel %.2f / %.2f m\n",
                  worst[0] * 57.2958f, worst[1] * 57.2958f, swing[0], swing[1]);
    assert_true(worst[0] > 20.0f / 57.2958f); /* the SPEC's limit alone lets it past 15° */
    assert_true(worst[1] <= 15.05f / 57.2958f);
    assert_true(swing[1] > 0.2f); /* the tail still swings */
}

/* The hips back up and pitch forward hard: the tail is pushed forwards, but
 * no particle crosses the forward-facing plane through the tail root. */
static void spring_no_particle_crosses_the_hip_plane(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 6, .hips_y_m = 1.2f, .dir = {0, -1, -0.15f}};
    rig_build(&r, &o);
    tb_spring_desc d = {0};
    d.params.carry_rad = TB_SPRING_ZERO;
    d.params.bend_limit_rad = 3.0f; /* let it swing wide */
    sim s;
    sim_init(&s, &r, &d);
    float worst = -1e9f;
    const float dt = 1.0f / 60.0f;
    for (int f = 0; f < 240; f++) {
        float t = f * dt;
        versor q;
        quat_axis(q, 0.5f * sinf(3 * t), 1, 0, 0);
        sim_step(&s, dt, hips_at(0, 1.2f, -0.5f * sinf(4 * t)), q);
        /* plane through the root, normal = the hips' forward axis */
        tb_spring_link_state root;
        link_state(&s, 0, 0, &root);
        float n[3] = {0, 0, 1};
        glm_quat_rotatev(q, n, n);
        for (int i = 0; i < 6; i++) {
            tb_spring_link_state st;
            link_state(&s, 0, i, &st);
            float off[3] = {st.tip[0] - root.head[0], st.tip[1] - root.head[1],
                            st.tip[2] - root.head[2]};
            worst = fmaxf(worst, glm_vec3_dot(off, n));
        }
    }
    print_message("hip plane: worst signed distance in front %.2e m\n", worst);
    assert_true(worst < 1e-4f);
    assert_true(worst > -1e-2f); /* it was pressed against the plane */
    tb_spring_destroy(s.a);
}

/* Hips pushed far below the ground (a bad clip, a pit): u = (F − h_y)/ℓ > 1
 * is clamped, so each bone points straight up — it is never stretched to
 * reach the plane and never lifts anything. */
static void spring_head_deep_below_ground_points_up_without_stretching(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 3, .tail_len_m = 0.6f};
    rig_build(&r, &o);
    sim s;
    sim_init(&s, &r, NULL);
    versor id;
    glm_quat_identity(id);
    for (int f = 0; f < 30; f++)
        sim_step(&s, 1.0f / 60.0f, hips_at(0, -1.0f, 0), id);
    for (int i = 0; i < 3; i++) {
        tb_spring_link_state st;
        link_state(&s, 0, i, &st);
        assert_float_equal(dist3(st.tip, st.head), st.length_m, 1e-5f);
        assert_float_equal((st.tip[1] - st.head[1]) / st.length_m, 1.0f, 1e-4f);
        assert_int_equal(st.contact, 1);
    }
    assert_float_equal(s.world[r.hips][13], -1.0f, 0.0f); /* the body stays put */
    tb_spring_destroy(s.a);
}

/* ======================================================================
 * Robustness
 * ====================================================================== */

/* The sanitizer build (-O0, ASan+UBSan) pays ~3 µs per link update, so it
 * runs a tenth of the random walk: it is there to check memory and UB, the
 * plain build checks the numbers over the full 10^7. */
#if defined(__SANITIZE_ADDRESS__)
#define TBT_RANDOM_LINK_STEPS 1000000LL
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TBT_RANDOM_LINK_STEPS 1000000LL
#endif
#endif
#ifndef TBT_RANDOM_LINK_STEPS
#define TBT_RANDOM_LINK_STEPS 10000000LL
#endif
/* Likewise the batch-vs-reference run: 10^5 sub-steps per chain in the plain
 * build, 10^4 under the sanitizers. */
#if TBT_RANDOM_LINK_STEPS < 10000000LL
#define TBT_BATCH_SUBSTEPS 10000LL
#else
#define TBT_BATCH_SUBSTEPS 100000LL
#endif

static uint32_t rng_state = 12345u;
static float rnd(void) /* [0, 1) */
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f;
}

/* A random frame time: hitches (1e6 s), zero, negative and NaN frames (and,
 * with tiny, 1e-7 s frames), else 4 to 64 ms. */
static float random_dt(int tiny)
{
    float u = rnd();
    if (u < 0.002f)
        return 1e6f;
    if (u < 0.004f)
        return 0.0f;
    if (tiny) {
        if (u < 0.006f)
            return 1e-7f;
        if (u < 0.007f)
            return -0.5f;
        if (u < 0.008f)
            return NAN;
    } else {
        if (u < 0.005f)
            return -0.5f;
        if (u < 0.006f)
            return NAN;
    }
    return 0.004f + 0.06f * rnd();
}

/* One character's random hip motion: up to 4 m/s and 8 rad/s of yaw, the
 * hips between y_min and 1.5 m, a teleport of 3 m one frame in a thousand. */
typedef struct walk {
    float pos[3], vel[3], yaw, yaw_v;
} walk;

static void walk_step(walk *w, float h, float y_min, versor q)
{
    for (int k = 0; k < 3; k++) {
        w->vel[k] += (rnd() - 0.5f) * 40.0f * h - 0.5f * w->vel[k] * h;
        w->vel[k] = fmaxf(-4.0f, fminf(4.0f, w->vel[k]));
        w->pos[k] += w->vel[k] * h;
    }
    w->pos[1] = fmaxf(y_min, fminf(1.5f, w->pos[1]));
    w->pos[2] = fmaxf(-5.0f, fminf(5.0f, w->pos[2]));
    w->yaw_v += (rnd() - 0.5f) * 60.0f * h;
    w->yaw_v = fmaxf(-8.0f, fminf(8.0f, w->yaw_v));
    w->yaw += w->yaw_v * h;
    if (rnd() < 0.001f) /* teleport, back and forth */
        w->pos[0] += w->pos[0] > 0.0f ? -3.0f : 3.0f;
    versor qy, qp;
    quat_axis(qy, w->yaw, 0, 1, 0);
    quat_axis(qp, 0.6f * sinf(w->yaw * 0.7f), 1, 0, 0);
    glm_quat_mul(qy, qp, q);
}

/* 10^7 link-steps (one link advanced by one internal sub-step, the unit of
 * solver work) of random hip motion with
 * random frame times, including hitches, zero, tiny, negative and NaN dt
 * and teleports: everything stays finite, bones keep their lengths, the
 * tips stay above the ground and the speed stays bounded. */
static void spring_survives_1e7_link_steps_of_random_motion(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 8, .second_tail = 1, .unit = 0.01f, .hips_y_m = 1.0f};
    rig_build(&r, &o);
    sim s;
    sim_init(&s, &r, NULL);
    const int links = 8 + 3;
    walk w = {.pos = {0, 1.1f, 0}};
    long long link_steps = 0;
    float max_speed = 0, worst_len = 0, min_y = 1e9f;
    long frames = 0;
    while (link_steps < TBT_RANDOM_LINK_STEPS) {
        float dt = random_dt(1);
        float h = isfinite(dt) && dt > 0 ? fminf(dt, 0.1f) : 0.0f;
        versor q;
        walk_step(&w, h, 0.95f, q);
        sim_step_anchor_only(&s, dt, w.pos, q);
        frames++;
        if (h >= 1e-6f)
            link_steps += (long long)links * (long long)ceilf(h * 240.0f - 1e-4f);
        for (int c = 0; c < 2; c++) {
            int n = c ? 3 : 8;
            for (int i = 0; i < n; i++) {
                tb_spring_link_state st;
                link_state(&s, c, i, &st);
                for (int k = 0; k < 3; k++)
                    assert_true(isfinite(st.tip[k]) && isfinite(st.velocity[k]));
                max_speed = fmaxf(max_speed, glm_vec3_norm(st.velocity));
                worst_len = fmaxf(worst_len, fabsf(dist3(st.tip, st.head) - st.length_m) / st.length_m);
                min_y = fminf(min_y, st.tip[1]);
            }
        }
        for (int i = 0; i < r.ntail; i++) {
            const float *qq = s.locals[r.tail[i]].r;
            float n2 = qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3];
            assert_true(fabsf(n2 - 1.0f) < 1e-4f);
        }
    }
    print_message("random motion: %ld frames, %lld link-steps, max speed %.2f m/s, "
                  "worst length error %.2e, lowest tip %.3f m\n",
                  frames, link_steps, max_speed, worst_len, min_y);
    assert_true(max_speed < 10.0f); /* the hips move at up to 4 m/s */
    assert_true(worst_len < 1e-3f);
    assert_true(min_y > 0.025f - 1e-3f);
    tb_spring_destroy(s.a);
}

#ifndef TBT_STEP_VIA_BATCH /* test_rt_spring_batch.c: this one runs both steps itself */
/* Character c of a run of a batch step against the reference: both sims,
 * the batch's item (world_out in place, as an application passes it) and
 * the character's walk. */
static void batch_pair_init(rig *r, int c, sim *ref, sim *bat, tb_spring_batch_item *item,
                            walk *w)
{
    sim_init(ref, r, NULL);
    sim_init(bat, r, NULL);
    *item = (tb_spring_batch_item){bat->a, (const float (*)[16])bat->world, bat->locals,
                                   bat->world};
    *w = (walk){.pos = {0.3f * (float)c, 1.1f, 0.0f}};
}

/* The largest tip gap between character c's two sims over its tails'
 * lengths (len: the 8-bone and the 3-bone tail); counts the reference's
 * link-frames in contact and at the bend limit. */
static float batch_pair_gap(const sim *ref, const sim *bat, const float len[2], long *contacts,
                            long *limited)
{
    float worst = 0.0f;
    for (int ch = 0; ch < 2; ch++)
        for (int i = 0; i < (ch ? 3 : 8); i++) {
            tb_spring_link_state a, b;
            tb_spring_get_link_state(ref->a, ch, i, &a);
            tb_spring_get_link_state(bat->a, ch, i, &b);
            worst = fmaxf(worst, dist3(a.tip, b.tip) / len[ch]);
            *contacts += a.contact;
            *limited += a.bend_rad > 0.5235f;
        }
    return worst;
}

/* The batch step against the scalar reference: three characters (an 8-bone
 * tail and a 3-bone second tail each; nine on the AVX-512 path, so that its
 * 16-chain blocks run) on their own random hip motion, with
 * hitches, zero/negative/NaN frames, teleports and the tails dragging on the
 * ground, stepped one by one with tb_spring_step() and together with
 * tb_spring_step_batch(), for 10^5 sub-steps of every chain (10^4 under the
 * sanitizers): every tip of every frame agrees within 1e-4 of its tail's
 * length. */
#define TBT_BATCH_CHARS 9 /* at most */
static const char *const path_names[] = {"baseline", "avx2", "avx512"};
/* each: every character steps by its own dt through
 * tb_spring_step_batch_each() (the CPU's best path): the second by the
 * first's plus one last bit (the same sub-steps, lanes of different
 * lengths: the bake's clips), the others by their own random dt. */
static void batch_against_reference(int path, int each)
{
    const int chars = path == TB__PATH_AVX512 ? 9 : 3;
    rig r;
    rig_opts o = {.links = 8, .second_tail = 1, .unit = 0.01f, .hips_y_m = 1.0f};
    rig_build(&r, &o);
    sim ref[TBT_BATCH_CHARS], bat[TBT_BATCH_CHARS];
    tb_spring_batch_item items[TBT_BATCH_CHARS];
    walk w[TBT_BATCH_CHARS];
    for (int c = 0; c < chars; c++)
        batch_pair_init(&r, c, &ref[c], &bat[c], &items[c], &w[c]);
    const float len[2] = {0.8f, 0.3f * sqrtf(2.0f)}; /* the two tails' lengths (m) */
    rng_state = 4242u;
    long long substeps = 0;
    long frames = 0;
    float worst = 0.0f; /* largest tip gap over the tail's length */
    long contacts = 0, limited = 0, out_diff = 0;
    while (substeps < TBT_BATCH_SUBSTEPS) {
        float dt = random_dt(0), dts[TBT_BATCH_CHARS];
        float h = isfinite(dt) && dt > 0 ? fminf(dt, 0.1f) : 0.0f;
        for (int c = 0; c < chars; c++)
            dts[c] = !each || c == 0 ? dt : c == 1 ? nextafterf(dt, INFINITY) : random_dt(0);
        for (int c = 0; c < chars; c++) {
            versor q;
            const float hc = isfinite(dts[c]) && dts[c] > 0 ? fminf(dts[c], 0.1f) : 0.0f;
            walk_step(&w[c], hc, 0.55f, q); /* low: the tail drags */
            /* The same anchor for both copies; the reference steps now
             * (parenthesised: never the batch redirect), the batch below. */
            sim_place_anchor(&ref[c], w[c].pos, q, NULL);
            sim_place_anchor(&bat[c], w[c].pos, q, NULL);
            (tb_spring_step)(ref[c].a, dts[c], (const float (*)[16])ref[c].world, ref[c].locals,
                             ref[c].world);
        }
        if (each)
            tb_spring_step_batch_each(items, chars, dts);
        else
            tb__spring_step_batch_on(items, chars, dt, path);
        frames++;
        if (h >= 1e-6f)
            substeps += (long long)ceilf(h * 240.0f - 1e-4f);
        for (int c = 0; c < chars; c++)
            for (int j = 0; j < r.n; j++) { /* the outputs, bit for bit */
                out_diff += memcmp(ref[c].world[j], bat[c].world[j], sizeof(float) * 16) != 0;
                out_diff += memcmp(&ref[c].locals[j], &bat[c].locals[j], sizeof(tb_transform)) != 0;
            }
        for (int c = 0; c < chars; c++)
            worst = fmaxf(worst, batch_pair_gap(&ref[c], &bat[c], len, &contacts, &limited));
    }
    print_message("batch%s vs reference: %ld frames, %lld sub-steps per chain, %s path, "
                  "%ld link-frames in contact, %ld at the bend limit, worst tip gap %.2e of "
                  "the tail length, %ld joint outputs (locals, world matrices) differ\n",
                  each ? " (a dt each)" : "", frames, substeps, path_names[path], contacts,
                  limited, worst, out_diff);
    assert_true(contacts > 0 && limited > 0); /* both constraints were exercised */
    assert_true(worst < 1e-4f);
    assert_int_equal(out_diff, 0); /* the batch's outputs are the reference's */
    for (int c = 0; c < chars; c++) {
        tb_spring_destroy(ref[c].a);
        tb_spring_destroy(bat[c].a);
    }
}

/* The approximate batch step (tb_spring_step_batch_fast) against the
 * scalar reference on the same random motion as above (4 m/s, 8 rad/s,
 * hitches, bad dt, teleports, the tails dragging on the ground and pressed
 * against the bend limit), 10^5 sub-steps of every chain (10^4 under the
 * sanitizers), measured three ways (worst tip gap over the tail length):
 *
 *  - step: frames of one sub-step; before each, the approximate animators
 *    take the reference's state (links and chains, copied), and a third copy
 *    of the reference steps with its input moved 1e-6 m: the conditioning
 *    of that step. Asserted: every tip within 1e-4 of the tail length of
 *    the reference's, or, where the reference itself moves a tip more than
 *    5e-5 of the tail for that micrometre (a segment standing on end in
 *    ground contact, whose horizontal direction is undefined; SPEC B), within
 *    twice that, in all but at most one link-step in 10^6, and all within
 *    1e-3. Measured (AMD EPYC, GCC 12): baseline 8.4e-6, AVX2 2.4e-5 (no
 *    link-step above 1e-4); AVX-512 6.2e-4 at one link-step of 9.9 million
 *    (a tip next to a segment lying in ground contact, where the
 *    micrometre probe moved it less: not understood, the one exception);
 *  - frame: the same with the random frame times (up to 24 sub-steps):
 *    printed, and bounded by 1e-3 (measured 4.7e-5 to 1.2e-4, the reference
 *    2.5e-5 to 5.6e-5 for 1e-6 m);
 *  - free run: no resynchronisation. Printed next to the reference's own
 *    drift for 1e-6 m of input: this motion is chaotic (a pendulum of 8
 *    links half the time at its limit), so any change of rounding grows over
 *    thousands of frames; 1e-4 of the tail over 10^5 sub-steps is not
 *    reachable by any step that is not bit-identical (the reference against
 *    itself: 1.2e-4 to 4.6e-4). Asserted: within 5% of the tail, and within
 *    100× the reference's own drift (measured 7e-4 to 2.3e-3, 5 to 6×). */
typedef struct fast_gap {
    float worst;      /* largest tip gap / tail length */
    float excess;     /* largest gap beyond max(1e-4, 2 × the conditioning) */
    long over;        /* link-steps with a gap above 1e-4 */
    long beyond;      /* link-steps with a gap beyond the allowance */
    long link_steps;
    float contacts, limited; /* share of link-frames in contact, at the limit */
} fast_gap;

static fast_gap fast_against_reference(int path, int free_run, int substep_frames, float nudge)
{
    const int chars = path == TB__PATH_AVX512 ? 9 : 3;
    rig r;
    rig_opts o = {.links = 8, .second_tail = 1, .unit = 0.01f, .hips_y_m = 1.0f};
    rig_build(&r, &o);
    /* ref: the reference; fst: the approximate step (or, with nudge, the
     * reference with its input moved); cnd: the reference moved 1e-6 m
     * from the same state (conditioning, resynchronised runs only). */
    static sim ref[TBT_BATCH_CHARS], fst[TBT_BATCH_CHARS], cnd[TBT_BATCH_CHARS];
    tb_spring_batch_item items[TBT_BATCH_CHARS];
    walk w[TBT_BATCH_CHARS];
    for (int c = 0; c < chars; c++) {
        batch_pair_init(&r, c, &ref[c], &fst[c], &items[c], &w[c]);
        sim_init(&cnd[c], &r, NULL);
    }
    const float len[2] = {0.8f, 0.3f * sqrtf(2.0f)};
    rng_state = 4242u;
    long long substeps = 0;
    fast_gap g = {0};
    long contacts = 0, limited = 0, link_frames = 0, frame_no = 0;
    const float moved[3] = {nudge, 0.0f, 0.0f}, diagonal[3] = {0.57735f * 1e-6f, 0.57735f * 1e-6f,
                                                              0.57735f * 1e-6f}; /* 1e-6 m */
    while (substeps < TBT_BATCH_SUBSTEPS) {
        float dt = random_dt(0);
        if (substep_frames && isfinite(dt) && dt > 0.0f)
            dt = 1.0f / 240.0f;
        float h = isfinite(dt) && dt > 0 ? fminf(dt, 0.1f) : 0.0f;
        for (int c = 0; c < chars; c++) {
            versor q;
            walk_step(&w[c], h, 0.55f, q);
            sim *all[3] = {&ref[c], &fst[c], &cnd[c]};
            sim_place_anchor(&ref[c], w[c].pos, q, NULL);
            sim_place_anchor(&fst[c], w[c].pos, q, nudge != 0.0f ? moved : NULL);
            sim_place_anchor(&cnd[c], w[c].pos, q, diagonal);
            if (!free_run) /* the same state before the frame */
                for (int b = 1; b < 3; b++) {
                    tb_spring_animator *ra = ref[c].a, *xa = all[b]->a;
                    memcpy(xa->links, ra->links, sizeof(tb__link) * (size_t)ra->link_count);
                    memcpy(xa->chains, ra->chains, sizeof(tb__chain) * (size_t)ra->chain_count);
                }
            (tb_spring_step)(ref[c].a, dt, (const float (*)[16])ref[c].world, ref[c].locals,
                             ref[c].world);
            if (nudge != 0.0f)
                (tb_spring_step)(fst[c].a, dt, (const float (*)[16])fst[c].world,
                                 fst[c].locals, fst[c].world);
            if (!free_run)
                (tb_spring_step)(cnd[c].a, dt, (const float (*)[16])cnd[c].world,
                                 cnd[c].locals, cnd[c].world);
        }
        /* On AVX-512, every other frame as two batches of 6 and 3
         * characters: blocks of 6 and 3 chains, which take the 8- and 4-lane
         * builds (a batch's last, partly filled block), the other frames
         * one block of 9 (16 lanes). */
        if (nudge == 0.0f && path == TB__PATH_AVX512 && (frame_no & 1)) {
            tb__spring_step_batch_fast_on(items, 6, dt, path);
            tb__spring_step_batch_fast_on(items + 6, chars - 6, dt, path);
        } else if (nudge == 0.0f)
            tb__spring_step_batch_fast_on(items, chars, dt, path);
        frame_no++;
        if (h >= 1e-6f)
            substeps += (long long)ceilf(h * 240.0f - 1e-4f);
        for (int c = 0; c < chars; c++)
            for (int ch = 0; ch < 2; ch++)
                for (int i = 0; i < (ch ? 3 : 8); i++) {
                    tb_spring_link_state a, b, k;
                    tb_spring_get_link_state(ref[c].a, ch, i, &a);
                    tb_spring_get_link_state(fst[c].a, ch, i, &b);
                    const float gap = dist3(a.tip, b.tip) / len[ch];
                    g.worst = fmaxf(g.worst, gap);
                    g.over += gap > 1e-4f;
                    if (!free_run) {
                        tb_spring_get_link_state(cnd[c].a, ch, i, &k);
                        const float cond = dist3(a.tip, k.tip) / len[ch];
                        const float allowed = cond > 5e-5f ? fmaxf(1e-4f, 2.0f * cond) : 1e-4f;
                        g.excess = fmaxf(g.excess, gap - allowed);
                        g.beyond += gap > allowed;
                    }
                    contacts += a.contact;
                    limited += a.bend_rad > 0.5235f;
                    link_frames++;
                }
    }
    g.link_steps = link_frames;
    g.contacts = (float)contacts / (float)link_frames;
    g.limited = (float)limited / (float)link_frames;
    for (int c = 0; c < chars; c++) {
        tb_spring_destroy(ref[c].a);
        tb_spring_destroy(fst[c].a);
        tb_spring_destroy(cnd[c].a);
    }
    return g;
}

static void spring_fast_batch_step_stays_within_1e4_of_the_tail_of_the_reference(void **state)
{
    (void)state;
    for (int path = TB__PATH_BASE; path <= tb__spring_batch_best_path(); path++) {
        const fast_gap step = fast_against_reference(path, 0, 1, 0.0f);
        const fast_gap step_self = fast_against_reference(path, 0, 1, 1e-6f);
        const fast_gap frame = fast_against_reference(path, 0, 0, 0.0f);
        const fast_gap frame_self = fast_against_reference(path, 0, 0, 1e-6f);
        const fast_gap drift = fast_against_reference(path, 1, 0, 0.0f);
        const fast_gap self = fast_against_reference(path, 1, 0, 1e-6f);
        print_message("fast vs reference, %s path, %lld sub-steps per chain (%.0f%% of "
                      "link-frames in contact, %.0f%% at the bend limit), worst tip gap over "
                      "the tail length [the reference with its input moved 1e-6 m]: one "
                      "sub-step from the same state %.2e [%.2e], %ld of %ld link-steps above "
                      "1e-4, %ld beyond the allowance (by %.2e at most); one frame (up to 24 sub-steps) "
                      "%.2e [%.2e]; free run %.2e [%.2e]\n",
                      path_names[path], (long long)TBT_BATCH_SUBSTEPS, 100.0 * step.contacts,
                      100.0 * step.limited, step.worst, step_self.worst, step.over, step.link_steps,
                      step.beyond, step.excess,
                      frame.worst, frame_self.worst, drift.worst, self.worst);
        assert_true(step.contacts > 0.0f && step.limited > 0.0f); /* both exercised */
        /* every link-step within the allowance but at most one in 10^6 (one
         * on the AVX-512 path, see above), and every one within 1e-3 */
        assert_true(step.beyond * 1000000L <= step.link_steps);
        assert_true(step.worst < 1e-3f);
        assert_true(frame.worst < 1e-3f);
        assert_true(drift.worst < 0.05f);
        assert_true(drift.worst < 100.0f * self.worst);
    }
}

/* The approximate step's blocks by their width: batches of 6 characters
 * (blocks of 6 chains, the 8-lane builds) and of 3 (the 4-lane builds on
 * the AVX2 and AVX-512 paths; 8 lanes on the baseline) on every path the
 * CPU has, from the reference's state before each 1/240 s frame: every tip
 * within 1e-4 of its tail's length after the sub-step. The random-motion
 * test above gives each path one batch size (3 characters; 9 and 6 + 3 on
 * AVX-512), so on an AVX2 machine it would leave the 8-lane build alone. */
static void spring_fast_batch_blocks_of_every_width_agree_with_the_reference(void **state)
{
    (void)state;
    enum { CH = 6 };
    rig r;
    rig_opts o = {.links = 8, .second_tail = 1, .unit = 0.01f, .hips_y_m = 1.0f};
    rig_build(&r, &o);
    const float len[2] = {0.8f, 0.3f * sqrtf(2.0f)}, dt = 1.0f / 240.0f;
    for (int path = TB__PATH_BASE; path <= tb__spring_batch_best_path(); path++) {
        static sim ref[CH], fst[CH];
        tb_spring_batch_item items[CH];
        walk w[CH];
        for (int c = 0; c < CH; c++)
            batch_pair_init(&r, c, &ref[c], &fst[c], &items[c], &w[c]);
        rng_state = 777u;
        float worst = 0.0f;
        long contacts = 0, limited = 0;
        for (int f = 0; f < 4000; f++) {
            for (int c = 0; c < CH; c++) {
                versor q;
                walk_step(&w[c], dt, 0.55f, q);
                sim_place_anchor(&ref[c], w[c].pos, q, NULL);
                sim_place_anchor(&fst[c], w[c].pos, q, NULL);
                tb_spring_animator *ra = ref[c].a, *xa = fst[c].a;
                memcpy(xa->links, ra->links, sizeof(tb__link) * (size_t)ra->link_count);
                memcpy(xa->chains, ra->chains, sizeof(tb__chain) * (size_t)ra->chain_count);
                (tb_spring_step)(ra, dt, (const float (*)[16])ref[c].world, ref[c].locals,
                                 ref[c].world);
            }
            if (f & 1)
                tb__spring_step_batch_fast_on(items, CH, dt, path);
            else {
                tb__spring_step_batch_fast_on(items, 3, dt, path);
                tb__spring_step_batch_fast_on(items + 3, CH - 3, dt, path);
            }
            for (int c = 0; c < CH; c++)
                worst = fmaxf(worst, batch_pair_gap(&ref[c], &fst[c], len, &contacts, &limited));
        }
        for (int c = 0; c < CH; c++) {
            tb_spring_destroy(ref[c].a);
            tb_spring_destroy(fst[c].a);
        }
        print_message("fast vs reference by block width, %s path: worst tip gap %.2e of the "
                      "tail, %ld link-steps in contact, %ld at the bend limit\n",
                      path_names[path], worst, contacts, limited);
        assert_true(contacts > 0 && limited > 0); /* both exercised */
        assert_true(worst < 1e-4f);
    }
}

/* The crowd (tb_spring_crowd_*): tb_spring_step_batch_fast()'s blocks with
 * their lanes kept between frames, bit for bit the batch step's. 18
 * characters (an 8-link and a 3-link tail each), the last with
 * contact_keeps_limit (stepped outside the lanes): the other 17 in blocks
 * of 16 and 1 chain on AVX-512, 8, 8 and 1 on the others, so that the
 * partly filled blocks' builds run too; on the random motion above (hitches, held
 * frames, NaN frames, teleports, ground contact, the bend limit) for 10^5
 * sub-steps of every chain (10^4 under the sanitizers), on every path: the
 * locals and world matrices written each frame equal the batch step's, and
 * every 97th frame the crowd syncs and every link state equals the batch
 * step's (then one animator is reset: both start again from rest). */
static void spring_crowd_steps_as_the_fast_batch_step_bit_for_bit(void **state)
{
    (void)state;
    enum { CH = 18 };
    rig r;
    rig_opts o = {.links = 8, .second_tail = 1, .unit = 0.01f, .hips_y_m = 1.0f};
    rig_build(&r, &o);
    for (int path = TB__PATH_BASE; path <= tb__spring_batch_best_path(); path++) {
        static sim fst[CH], crw[CH];
        tb_spring_batch_item fi[CH], ci[CH];
        tb_spring_animator *anims[CH];
        walk w[CH];
        for (int c = 0; c < CH; c++) {
            batch_pair_init(&r, c, &fst[c], &crw[c], &ci[c], &w[c]);
            fi[c] = (tb_spring_batch_item){fst[c].a, (const float (*)[16])fst[c].world,
                                           fst[c].locals, fst[c].world};
            anims[c] = crw[c].a;
        }
        tb_spring_params p;
        tb_spring_get_params(fst[CH - 1].a, 0, &p);
        p.contact_keeps_limit = 1;
        assert_int_equal(tb_spring_set_params(fst[CH - 1].a, 0, &p, NULL), TB_OK);
        assert_int_equal(tb_spring_set_params(crw[CH - 1].a, 0, &p, NULL), TB_OK);
        const size_t size = tb__crowd_memory_size_on(anims, CH, path);
        assert_true(size > 0);
        void *mem = aligned_alloc(64, (size + 63) / 64 * 64);
        tb_spring_crowd *crowd = NULL;
        assert_int_equal(tb__crowd_init_on(&crowd, mem, size, anims, CH, path, NULL), TB_OK);
        assert_int_equal(tb__crowd_init_on(&crowd, mem, size - 1, anims, CH, path, NULL),
                         TB_ERR_ARG);
        assert_int_equal(tb__crowd_init_on(&crowd, mem, size, anims, CH, path, NULL), TB_OK);
        rng_state = 999u;
        long long substeps = 0;
        long frames = 0, syncs = 0, differ = 0;
        while (substeps < TBT_BATCH_SUBSTEPS) {
            const float dt = random_dt(0);
            const float h = isfinite(dt) && dt > 0 ? fminf(dt, 0.1f) : 0.0f;
            for (int c = 0; c < CH; c++) {
                versor q;
                walk_step(&w[c], h, 0.55f, q);
                sim_place_anchor(&fst[c], w[c].pos, q, NULL);
                sim_place_anchor(&crw[c], w[c].pos, q, NULL);
            }
            tb__spring_step_batch_fast_on(fi, CH, dt, path);
            tb_spring_crowd_step(crowd, ci, CH, dt);
            if (h >= 1e-6f)
                substeps += (long long)ceilf(h * 240.0f - 1e-4f);
            for (int c = 0; c < CH; c++)
                differ += memcmp(fst[c].locals, crw[c].locals, sizeof fst[c].locals) != 0 ||
                          memcmp(fst[c].world, crw[c].world, sizeof fst[c].world) != 0;
            if (++frames % 97 == 0) {
                tb_spring_crowd_sync(crowd);
                syncs++;
                for (int c = 0; c < CH; c++)
                    for (int ch = 0; ch < 2; ch++)
                        for (int i = 0; i < (ch ? 3 : 8); i++) {
                            tb_spring_link_state a, b;
                            tb_spring_get_link_state(fst[c].a, ch, i, &a);
                            tb_spring_get_link_state(crw[c].a, ch, i, &b);
                            differ += memcmp(&a, &b, sizeof a) != 0;
                        }
                const int c = (int)(frames / 97) % CH;
                tb_spring_reset(fst[c].a);
                tb_spring_reset(crw[c].a);
            }
        }
        print_message("crowd vs fast batch step, %s path: %ld frames, %lld sub-steps per chain, "
                      "%ld syncs, %ld differing outputs or link states\n",
                      path_names[path], frames, substeps, syncs, differ);
        assert_int_equal(differ, 0);
        free(mem);
        for (int c = 0; c < CH; c++) {
            tb_spring_destroy(fst[c].a);
            tb_spring_destroy(crw[c].a);
        }
    }
}

static void spring_batch_step_agrees_with_scalar_reference_on_random_motion(void **state)
{
    (void)state;
    /* the compiler's baseline vectors, then each wider path this CPU runs */
    for (int path = TB__PATH_BASE; path <= tb__spring_batch_best_path(); path++)
        batch_against_reference(path, 0);
    batch_against_reference(tb__spring_batch_best_path(), 1);
}
#endif

/* ======================================================================
 * Parameters, read-out, memory
 * ====================================================================== */

static void spring_per_chain_params_change_at_runtime(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 4, .second_tail = 1, .hips_y_m = 1.2f};
    rig_build(&r, &o);
    sim s, ctl;
    sim_init(&s, &r, NULL);
    sim_init(&ctl, &r, NULL);
    settle_quiet(&s, 1.0f);
    settle_quiet(&ctl, 1.0f);
    tb_spring_link_state before, after, other, other_ctl;
    link_state(&s, 1, 2, &before);
    tb_spring_params p;
    tb_spring_get_params(s.a, 1, &p);
    p.carry_rad = TB_SPRING_ZERO; /* drop the second tail's carry */
    assert_int_equal(tb_spring_set_params(s.a, 1, &p, NULL), TB_OK);
    tb_spring_get_params(s.a, 1, &p);
    assert_true(p.carry_rad < 0);
    settle_quiet(&s, 3.0f);
    settle_quiet(&ctl, 3.0f);
    link_state(&s, 1, 2, &after);
    print_message("TailB tip height: carry 50 deg %.3f m, carry 0 %.3f m\n", before.tip[1],
                  after.tip[1]);
    assert_true(after.tip[1] < before.tip[1] - 0.05f);
    /* The other chain is exactly as in an untouched animator. */
    for (int i = 0; i < 4; i++) {
        link_state(&s, 0, i, &other);
        link_state(&ctl, 0, i, &other_ctl);
        assert_memory_equal(&other, &other_ctl, sizeof other);
    }
    /* Bad values are refused and leave the chain as it was. */
    tb_error err;
    p.bend_limit_rad = -1.0f;
    assert_int_equal(tb_spring_set_params(s.a, 1, &p, &err), TB_ERR_ARG);
    assert_string_equal(err.where, "tb_spring_params.bend_limit_rad");
    assert_int_equal(tb_spring_set_params(s.a, 2, &p, &err), TB_ERR_ARG);
    tb_spring_destroy(s.a);
    tb_spring_destroy(ctl.a);
}

/* One link has no neighbour: coupling on or off changes nothing. */
/* SPEC B dynamics of one link against the damped oscillator they define:
 * no gravity, carry or coupling; the hips step 2 cm sideways after the tail
 * has settled, so the particle starts 2 cm from its target T and returns as
 * e(t) = e0 e^(−ζωt) (cos ω_d t + ζ/√(1−ζ²) sin ω_d t), ω = 2π·0.9 Hz,
 * ζ = 0.65, ω_d = ω√(1−ζ²). Analytically the error first crosses zero at
 * t0 = (π − atan(√(1−ζ²)/ζ)) / ω_d = 0.530 s and overshoots by
 * e^(−ζπ/√(1−ζ²)) = 6.8%. Stepped at 240 Hz (measured 2026-11-30: 0.529 s,
 * 6.6%); tolerances ±5% on t0 and 5–8.5% on the overshoot (the link's length
 * constraint and sub-steps are not in the analytic model). */
static void spring_step_response_has_the_spec_frequency_and_damping(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 1};
    rig_build(&r, &o);
    tb_spring_desc d = {0};
    d.params.gravity_mps2 = TB_SPRING_ZERO;
    d.params.carry_rad = TB_SPRING_ZERO;
    d.params.coupling_per_s = TB_SPRING_ZERO;
    sim a;
    sim_init(&a, &r, &d);
    versor q;
    glm_quat_identity(q);
    const float dt = 1.0f / 240.0f, step = 0.02f;
    for (int f = 0; f < 240 * 3; f++)
        sim_step(&a, dt, hips_at(0, 1, 0), q);
    float e0 = 0, t0 = -1, overshoot = 0;
    for (int f = 1; f <= 240 * 3; f++) {
        sim_step(&a, dt, hips_at(step, 1, 0), q);
        tb_spring_link_state st;
        link_state(&a, 0, 0, &st);
        float e = st.tip[0] - st.target[0];
        if (f == 1)
            e0 = e;
        if (t0 < 0 && e * e0 < 0)
            t0 = (float)f * dt;
        if (t0 > 0 && -e / e0 > overshoot)
            overshoot = -e / e0;
    }
    float zeta = 0.65f, w = 2 * (float)GLM_PI * 0.9f, wd = w * sqrtf(1 - zeta * zeta);
    float t0_expected = ((float)GLM_PI - atanf(sqrtf(1 - zeta * zeta) / zeta)) / wd;
    print_message("one link, 2 cm step: e0 %.4f m, zero crossing %.3f s (analytic %.3f), overshoot %.1f%% (analytic "
                  "%.1f%%)\n",
                  e0, t0, t0_expected, 100 * overshoot, 100 * expf(-zeta * (float)GLM_PI / sqrtf(1 - zeta * zeta)));
    assert_true(e0 < -0.015f); /* the particle lags the step */
    assert_true(t0 > 0.95f * t0_expected && t0 < 1.05f * t0_expected);
    assert_true(overshoot > 0.05f && overshoot < 0.085f);
    tb_spring_destroy(a.a);
}

static void spring_one_link_tail_skips_coupling(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 1};
    rig_build(&r, &o);
    tb_spring_desc d = {0};
    sim a, b;
    sim_init(&a, &r, &d);
    d.params.coupling_per_s = TB_SPRING_ZERO;
    sim_init(&b, &r, &d);
    versor q;
    for (int f = 0; f < 200; f++) {
        float t = f / 60.0f;
        sim_step(&a, 1.0f / 60.0f, hips_at(sweep_x(t), 1, 0), quat_yaw(q, sinf(3 * t)));
        sim_step(&b, 1.0f / 60.0f, hips_at(sweep_x(t), 1, 0), q);
        assert_memory_equal(&a.locals[r.tail[0]], &b.locals[r.tail[0]], sizeof(tb_transform));
    }
    tb_spring_link_state st;
    link_state(&a, 0, 0, &st);
    assert_true(st.bend_rad > 1.0f * DEG); /* it did move */
    tb_spring_destroy(a.a);
    tb_spring_destroy(b.a);
}

/* Same motion on a centimetre rig under a 0.01 armature and on a metre rig:
 * the physical parameters are in world units, so the tails agree. */
static void spring_centimetre_rig_under_armature_scale_matches_metre_rig(void **state)
{
    (void)state;
    rig m, cm;
    rig_opts o = {.links = 4};
    rig_build(&m, &o);
    o.unit = 0.01f;
    rig_build(&cm, &o);
    sim a, b;
    sim_init(&a, &m, NULL);
    sim_init(&b, &cm, NULL);
    float worst = 0;
    versor q;
    for (int f = 0; f < 180; f++) {
        float t = f / 60.0f;
        sim_step(&a, 1.0f / 60.0f, hips_at(sweep_x(t), 0.6f, 0), quat_yaw(q, sinf(2 * t)));
        sim_step(&b, 1.0f / 60.0f, hips_at(sweep_x(t), 0.6f, 0), q);
        for (int i = 0; i < 4; i++) {
            tb_spring_link_state sa, sb;
            link_state(&a, 0, i, &sa);
            link_state(&b, 0, i, &sb);
            worst = fmaxf(worst, dist3(sa.tip, sb.tip));
        }
    }
    print_message("metre vs centimetre rig: worst tip gap %.2e m\n", worst);
    assert_true(worst < 1e-4f);
    tb_spring_destroy(a.a);
    tb_spring_destroy(b.a);
}

/* world_out is what a local-to-world pass over the written locals gives, and
 * the tail joints sit on the particles. */
static void spring_world_out_matches_written_locals(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 4, .unit = 0.01f};
    rig_build(&r, &o);
    sim s;
    sim_init(&s, &r, NULL);
    versor q;
    for (int f = 0; f < 40; f++)
        sim_step(&s, 1.0f / 60.0f, hips_at(sweep_x(f / 60.0f), 1, 0), quat_yaw(q, f / 30.0f));
    float w[TBT_MAXJ][16];
    local_to_world(&r, s.locals, w);
    for (int j = 0; j < r.n; j++)
        for (int k = 0; k < 16; k++)
            assert_float_equal(w[j][k], s.world[j][k], 1e-4f);
    for (int i = 0; i < 4; i++) {
        tb_spring_link_state st;
        link_state(&s, 0, i, &st);
        int child = i + 1 < 4 ? r.tail[i + 1] : r.end;
        assert_true(dist3(&s.world[r.tail[i]][12], st.head) < 1e-5f);
        assert_true(dist3(&s.world[child][12], st.tip) < 1e-5f);
    }
    tb_spring_destroy(s.a);
}

static size_t alloc_calls, free_calls;
static void *count_alloc(size_t size, void *user)
{
    (void)user;
    alloc_calls++;
    return aligned_alloc(TB_SPRING_ALIGN, (size + 15) & ~(size_t)15);
}
static void count_free(void *p, void *user)
{
    (void)user;
    free_calls++;
    free(p);
}

/* Creation is the only allocation: create calls the allocator once, step
 * and reset never; an animator built in caller memory stays inside it. */
static void spring_step_allocates_nothing_and_stays_in_its_memory(void **state)
{
    (void)state;
    rig r;
    rig_opts o = {.links = 6, .second_tail = 1};
    rig_build(&r, &o);
    tb_spring_desc d = {0};
    d.alloc_fn = count_alloc;
    d.free_fn = count_free;
    sim s;
    sim_init(&s, &r, &d);
    assert_int_equal(alloc_calls, 1);
    versor id;
    glm_quat_identity(id);
    for (int f = 0; f < 300; f++) {
        sim_step(&s, 1.0f / 60.0f, hips_at(sweep_x(f / 60.0f), 1, 0), id);
        if (f == 150)
            tb_spring_reset(s.a);
    }
    assert_int_equal(alloc_calls, 1);
    assert_int_equal(free_calls, 0);
    tb_spring_destroy(s.a);
    assert_int_equal(free_calls, 1);

    /* Caller memory with guard bytes after the block. */
    size_t size;
    assert_int_equal(tb_spring_memory_size(&r.skel, &size, NULL, NULL), TB_OK);
    unsigned char *mem = aligned_alloc(TB_SPRING_ALIGN, size + 64);
    memset(mem + size, 0xA5, 64);
    tb_spring_animator *a;
    assert_int_equal(tb_spring_init(&a, mem, size, &r.skel, NULL, NULL), TB_OK);
    tb_transform locals[TBT_MAXJ];
    float world[TBT_MAXJ][16];
    memcpy(locals, r.rest, sizeof(tb_transform) * (size_t)r.n);
    for (int f = 0; f < 300; f++) {
        locals[r.hips].t[0] = sweep_x(f / 60.0f);
        local_to_world(&r, locals, world);
        tb_spring_step(a, 1.0f / 60.0f, (const float (*)[16])world, locals, NULL);
    }
    for (int k = 0; k < 64; k++)
        assert_int_equal(mem[size + k], 0xA5);
    free(mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spring_create_rejects_invalid_arguments),
        cmocka_unit_test(spring_finds_tail_chains_by_name),
        cmocka_unit_test(spring_default_params_equal_spec_numbers),
        cmocka_unit_test(spring_fast_hip_sweep_moves_no_bone_far_more_than_its_neighbours),
        cmocka_unit_test(spring_coupling_makes_neighbouring_bends_smoother),
        cmocka_unit_test(spring_mirrored_hip_motion_gives_mirrored_tail),
        cmocka_unit_test(spring_rest_pose_comes_from_bind_matrices_not_stored_node_rotation),
        cmocka_unit_test(spring_oriented_terminal_bone_without_tail_end_extends_the_tangent),
        cmocka_unit_test(spring_carry_lifts_the_whole_tail_once_for_4_and_8_bones),
        cmocka_unit_test(spring_centred_rest_arc_removes_an_authored_side_curl),
        cmocka_unit_test(spring_loop_closes_after_warm_up),
        cmocka_unit_test(spring_state_saved_and_put_back_replays_the_same_motion),
        cmocka_unit_test(spring_same_motion_at_30_60_144_fps_agrees_within_1cm),
        cmocka_unit_test(spring_teleport_resets_instead_of_whipping),
        cmocka_unit_test(spring_huge_dt_is_clamped_and_tiny_dt_holds),
        cmocka_unit_test(spring_crouch_settle_and_release_on_the_ground),
        cmocka_unit_test(spring_raised_ground_plane_holds_the_tail),
        cmocka_unit_test(spring_contact_keeps_the_bend_limit_when_asked),
        cmocka_unit_test(spring_bind_limit_bounds_the_bend_from_the_bind_pose),
        cmocka_unit_test(spring_no_particle_crosses_the_hip_plane),
        cmocka_unit_test(spring_head_deep_below_ground_points_up_without_stretching),
        cmocka_unit_test(spring_survives_1e7_link_steps_of_random_motion),
#ifndef TBT_STEP_VIA_BATCH /* it runs both steps itself */
        cmocka_unit_test(spring_batch_step_agrees_with_scalar_reference_on_random_motion),
        cmocka_unit_test(spring_fast_batch_step_stays_within_1e4_of_the_tail_of_the_reference),
        cmocka_unit_test(spring_fast_batch_blocks_of_every_width_agree_with_the_reference),
        cmocka_unit_test(spring_crowd_steps_as_the_fast_batch_step_bit_for_bit),
#endif
        cmocka_unit_test(spring_per_chain_params_change_at_runtime),
        cmocka_unit_test(spring_step_response_has_the_spec_frequency_and_damping),
        cmocka_unit_test(spring_one_link_tail_skips_coupling),
        cmocka_unit_test(spring_centimetre_rig_under_armature_scale_matches_metre_rig),
        cmocka_unit_test(spring_world_out_matches_written_locals),
        cmocka_unit_test(spring_step_allocates_nothing_and_stays_in_its_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
