/* Clip transfer by humanoid roles on calibrated private skeletons
 * (SPEC D "Grounding in retargeting", "Stable calibration"; method in
 * include/tailbone/retarget.h and docs/retarget.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "core/base.h"
#include "core/tbmath.h"
#include "passes/retarget_internal.h"
#include "tailbone/retarget.h"

/* Quaternion and matrix helpers: core/tbmath.h. tb_retarget_bind_to_world
 * is the model's (tb_model_bind_to_world, model.c). */

void tb_retarget_bind_to_world(const tb_model *m, float M[16])
{
    tb_model_bind_to_world(m, M);
}

/* ---- calibration (SPEC D "Stable calibration") ------------------------- */

struct tb_retarget_calib {
    int joint_count;
    int *parents;
    tb_role *roles;
    char **names;
    int role_joint[TB_ROLE_COUNT];
    int *node_of_joint;
    uint8_t *has_ibm;
    tb_transform *bind_local;   /* L^0 from IBMs: the private skeleton's rest */
    tb_transform *stored_local; /* the node pose at calibration (decides one-key tracks) */
    float (*bind_world)[16];
    float (*bind_rot)[4];       /* unit world rotation at bind */
    int skin_joint_count;
    int *skin_joints;
    float (*inverse_bind)[16];
    float frame[3][3];          /* character frame: left, up, forward (world) */
    int up_axis;                /* world axis of up (1 = +Y normally) */
    float leg_length;
    int role_count;
    tb_ground_supports sup;
    int *probe, probes;         /* the supports a frame's lows skin (tb__ground_distinct) */
    tb__ground_probes gp;       /* those, laid out for tb__ground_probes_lows */
    tb_skeleton skel;
};

void tb_retarget_calib_free(tb_retarget_calib *c)
{
    if (!c)
        return;
    if (c->names)
        for (int j = 0; j < c->joint_count; j++)
            free(c->names[j]);
    free(c->names);
    free(c->parents);
    free(c->roles);
    free(c->node_of_joint);
    free(c->has_ibm);
    free(c->bind_local);
    free(c->stored_local);
    free(c->bind_world);
    free(c->bind_rot);
    free(c->skin_joints);
    free(c->inverse_bind);
    tb_ground_supports_free(&c->sup);
    free(c->probe);
    tb__ground_probes_free(&c->gp);
    free(c);
}

int tb_retarget_calib_role_count(const tb_retarget_calib *c) { return c->role_count; }
float tb_retarget_calib_leg_length(const tb_retarget_calib *c) { return c->leg_length; }
const tb_ground_supports *tb_retarget_calib_supports(const tb_retarget_calib *c) { return &c->sup; }
const tb_skeleton *tb_retarget_calib_skeleton(const tb_retarget_calib *c) { return &c->skel; }
int tb_retarget_calib_node(const tb_retarget_calib *c, int joint) { return c->node_of_joint[joint]; }
int tb_retarget_calib_role_joint(const tb_retarget_calib *c, tb_role role)
{
    return role > TB_ROLE_NONE && role < TB_ROLE_COUNT ? c->role_joint[role] : -1;
}

static const float *tb__role_pos(const tb_retarget_calib *c, tb_role r)
{
    int j = c->role_joint[r];
    return j >= 0 ? &c->bind_world[j][12] : NULL;
}

/* Character frame from the bind skeleton: up = the world axis nearest the
 * hips→head direction (SPEC conventions: +Y), left = the hips' lateral axis
 * (right thigh → left thigh, else right arm → left arm) made horizontal,
 * forward = left × up (a character facing +Z has its left on +X). */
static void tb__frame(tb_retarget_calib *c)
{
    const float *hips = tb__role_pos(c, TB_ROLE_HIPS);
    const float *top = tb__role_pos(c, TB_ROLE_HEAD);
    if (!top)
        top = tb__role_pos(c, TB_ROLE_NECK);
    if (!top)
        top = tb__role_pos(c, TB_ROLE_SPINE2);
    float u[3] = {0, 1, 0};
    if (top) {
        float v[3] = {top[0] - hips[0], top[1] - hips[1], top[2] - hips[2]};
        int a = 0;
        for (int i = 1; i < 3; i++)
            if (fabsf(v[i]) > fabsf(v[a]))
                a = i;
        if (tb__norm3(v) > 0) {
            u[0] = u[1] = u[2] = 0;
            u[a] = v[a] < 0 ? -1.0f : 1.0f;
        }
    }
    c->up_axis = u[1] != 0 ? 1 : u[0] != 0 ? 0 : 2;
    float l[3] = {1, 0, 0};
    const float *lp = tb__role_pos(c, TB_ROLE_LEFT_UPLEG), *rp = tb__role_pos(c, TB_ROLE_RIGHT_UPLEG);
    if (!lp || !rp)
        lp = tb__role_pos(c, TB_ROLE_LEFT_ARM), rp = tb__role_pos(c, TB_ROLE_RIGHT_ARM);
    if (lp && rp) {
        float v[3] = {lp[0] - rp[0], lp[1] - rp[1], lp[2] - rp[2]};
        float k = tb__dot(v, u);
        for (int i = 0; i < 3; i++)
            v[i] -= k * u[i];
        if (tb__norm3(v) > 1e-12f)
            memcpy(l, v, sizeof l);
    }
    if (fabsf(tb__dot(l, u)) > 0.9f) { /* degenerate: pick any horizontal */
        float alt[3] = {0, 0, 1};
        memcpy(l, alt, sizeof l);
    }
    float f[3];
    tb__cross(f, l, u);
    tb__norm3(f);
    tb__cross(l, u, f);
    memcpy(c->frame[0], l, sizeof l);
    memcpy(c->frame[1], u, sizeof u);
    memcpy(c->frame[2], f, sizeof f);
}

static float tb__leg(const tb_retarget_calib *c, tb_role up, tb_role knee, tb_role foot)
{
    const float *a = tb__role_pos(c, up), *b = tb__role_pos(c, knee), *f = tb__role_pos(c, foot);
    return a && b && f ? tb__dist3(a, b) + tb__dist3(b, f) : 0;
}

/* SPEC B/D: rest from the bind matrices, L^0 = (W_parent^0)^-1 W^0 —
 * never the stored node pose (it may hold an old frame). Nodes above the
 * skin have no IBM: their stored pose is their bind pose. */
static void tb__bind_locals(tb_retarget_calib *c)
{
    for (int j = 0; j < c->joint_count; j++) {
        if (!c->has_ibm[j]) {
            c->bind_local[j] = c->stored_local[j];
        } else if (c->parents[j] < 0) {
            tb__decompose(&c->bind_local[j], c->bind_world[j]);
        } else {
            float inv[16], l[16];
            tb__mat_inv(inv, c->bind_world[c->parents[j]]);
            tb_mat4_mul(l, inv, c->bind_world[j]);
            tb__decompose(&c->bind_local[j], l);
        }
        tb__mat_rot(c->bind_rot[j], c->bind_world[j]);
    }
}

tb_result tb_retarget_calibrate(tb_retarget_calib **out, const tb_model *m, const uint8_t *tail_mask,
                                const tb_retarget_desc *desc, tb_error *err)
{
    *out = NULL;
    if (!m)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_retarget_calibrate: model is NULL");
    char where[32];
    if (m->skin >= 0)
        snprintf(where, sizeof where, "/skins/%d", m->skin);
    else /* a skeleton-only file without a skin (tb_model_load_skeleton) */
        snprintf(where, sizeof where, "/nodes");
    if (m->role_joint[TB_ROLE_HIPS] < 0)
        return tb__fail(err, TB_ERR_NO_HIPS, where,
                        "no joint of this skin has a humanoid hips name (Hips, mixamorig:Hips, pelvis…): "
                        "clips cannot be transferred by role");
    tb_retarget_calib *c = calloc(1, sizeof *c);
    if (!c)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    int n = m->skel.joint_count;
    float bind_to_world[16];
    tb_retarget_bind_to_world(m, bind_to_world);
    c->joint_count = n;
    c->parents = malloc((size_t)n * sizeof *c->parents);
    c->roles = malloc((size_t)n * sizeof *c->roles);
    c->names = calloc((size_t)n, sizeof *c->names);
    c->node_of_joint = malloc((size_t)n * sizeof *c->node_of_joint);
    c->has_ibm = calloc((size_t)n, 1);
    c->bind_local = malloc((size_t)n * sizeof *c->bind_local);
    c->stored_local = malloc((size_t)n * sizeof *c->stored_local);
    c->bind_world = malloc((size_t)n * sizeof *c->bind_world);
    c->bind_rot = malloc((size_t)n * sizeof *c->bind_rot);
    c->skin_joint_count = m->skin_joint_count;
    c->skin_joints = malloc(((size_t)m->skin_joint_count + 1) * sizeof *c->skin_joints);
    c->inverse_bind = malloc(((size_t)m->skin_joint_count + 1) * sizeof *c->inverse_bind);
    if (!c->parents || !c->roles || !c->names || !c->node_of_joint || !c->has_ibm || !c->bind_local ||
        !c->stored_local || !c->bind_world || !c->bind_rot || !c->skin_joints || !c->inverse_bind) {
        tb_retarget_calib_free(c);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (int j = 0; j < n; j++) {
        c->parents[j] = m->skel.parents[j];
        c->roles[j] = m->roles[j];
        const char *nm = m->skel.names ? m->skel.names[j] : NULL;
        if (nm && !(c->names[j] = strdup(nm))) {
            tb_retarget_calib_free(c);
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        }
        c->node_of_joint[j] = m->node_of_joint[j];
        c->has_ibm[j] = m->skel.has_ibm ? m->skel.has_ibm[j] : 1;
        c->stored_local[j] = m->skel.rest_local[j];
        /* true world at bind: M × IBM^-1 for skin joints */
        if (c->has_ibm[j])
            tb_mat4_mul(c->bind_world[j], bind_to_world, m->skel.bind_world[j]);
        else
            memcpy(c->bind_world[j], m->skel.bind_world[j], sizeof c->bind_world[j]);
    }
    memcpy(c->role_joint, m->role_joint, sizeof c->role_joint);
    for (int r = 1; r < TB_ROLE_COUNT; r++)
        c->role_count += c->role_joint[r] >= 0;
    memcpy(c->skin_joints, m->skin_joints, (size_t)m->skin_joint_count * sizeof *c->skin_joints);
    memcpy(c->inverse_bind, m->inverse_bind, (size_t)m->skin_joint_count * sizeof *c->inverse_bind);
    tb__bind_locals(c);
    tb_result r = tb_ground_supports_build(&c->sup, m, tail_mask, desc ? &desc->ground : NULL, err);
    if (r == TB_OK && !(c->probe = malloc(((size_t)c->sup.count + 1) * sizeof *c->probe)))
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (r != TB_OK) {
        tb_retarget_calib_free(c);
        return r;
    }
    c->probes = tb__ground_distinct(&c->sup, c->probe);
    if (!tb__ground_probes_make(&c->gp, &c->sup, c->probe, c->probes)) {
        tb_retarget_calib_free(c);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    tb__frame(c);
    float legs = tb__leg(c, TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG, TB_ROLE_LEFT_FOOT);
    float legs_r = tb__leg(c, TB_ROLE_RIGHT_UPLEG, TB_ROLE_RIGHT_LEG, TB_ROLE_RIGHT_FOOT);
    c->leg_length = legs > 0 && legs_r > 0 ? 0.5f * (legs + legs_r) : legs > 0 ? legs : legs_r;
    if (!(c->leg_length > 0)) /* no legs: hips height above the lowest skin */
        c->leg_length = c->bind_world[c->role_joint[TB_ROLE_HIPS]][12 + c->up_axis] - c->sup.f_body;
    if (!(c->leg_length > 0))
        c->leg_length = m->height > 0 ? 0.5f * m->height : 1.0f;
    c->skel.joint_count = n;
    c->skel.parents = c->parents;
    c->skel.names = (const char *const *)c->names;
    c->skel.rest_local = c->bind_local;
    c->skel.bind_world = (const float(*)[16])c->bind_world;
    c->skel.has_ibm = c->has_ibm;
    *out = c;
    return TB_OK;
}

/* ---- transfer ----------------------------------------------------------- */

void tb_retarget_bake_free(tb_retarget_bake *b)
{
    if (!b)
        return;
    free(b->name);
    free(b->times);
    free(b->locals);
    free(b->animated);
    free(b->constant);
    free(b->lift);
    free(b->lift_raw);
    free(b->clearance);
    free(b->allowance);
    free(b->foot_min_y);
    free(b->tail_min_y);
    free(b->source_foot_y);
    free(b);
}

/* Limbs whose bind direction is aligned (Q_b): role → child role. Spine,
 * neck and hips keep the character's own posture; feet too: a foot bone's
 * angle to its own sole is a property of the rig (a flat-footed bind stays
 * flat under the pure delta, while aligning heel→toe bones would tip a
 * foot whose bone points down more or less than the source's into the
 * floor). */
static tb_role tb__limb_child(tb_role r)
{
    switch (r) {
    case TB_ROLE_LEFT_SHOULDER: return TB_ROLE_LEFT_ARM;
    case TB_ROLE_LEFT_ARM: return TB_ROLE_LEFT_FOREARM;
    case TB_ROLE_LEFT_FOREARM: return TB_ROLE_LEFT_HAND;
    case TB_ROLE_RIGHT_SHOULDER: return TB_ROLE_RIGHT_ARM;
    case TB_ROLE_RIGHT_ARM: return TB_ROLE_RIGHT_FOREARM;
    case TB_ROLE_RIGHT_FOREARM: return TB_ROLE_RIGHT_HAND;
    case TB_ROLE_LEFT_UPLEG: return TB_ROLE_LEFT_LEG;
    case TB_ROLE_LEFT_LEG: return TB_ROLE_LEFT_FOOT;
    case TB_ROLE_RIGHT_UPLEG: return TB_ROLE_RIGHT_LEG;
    case TB_ROLE_RIGHT_LEG: return TB_ROLE_RIGHT_FOOT;
    default: return TB_ROLE_NONE;
    }
}

static int tb__differs(const tb_transform *a, const tb_transform *b, int path, float len)
{
    if (path == TB_RETARGET_T) {
        float d[3] = {a->t[0] - b->t[0], a->t[1] - b->t[1], a->t[2] - b->t[2]};
        return tb__norm3(d) > 1e-4f * (len > 0 ? len : 1);
    }
    if (path == TB_RETARGET_R) {
        float d = fabsf(a->r[0] * b->r[0] + a->r[1] * b->r[1] + a->r[2] * b->r[2] + a->r[3] * b->r[3]);
        return d < 0.9999995f; /* about 0.1 degree */
    }
    for (int i = 0; i < 3; i++)
        if (fabsf(a->s[i] - b->s[i]) > 1e-4f * fabsf(b->s[i]))
            return 1;
    return 0;
}

static void tb__world_pass(const tb_retarget_calib *c, const tb_transform *locals, float (*world)[16])
{
    tb_local_to_world(&c->skel, locals, NULL, world);
}

/* ---- limb reconciliation: feet kept out of the floor ------------------ */

/* The legs of a target, and which leg each foot support point is on. */
typedef struct tb__legs {
    int count;                 /* legs with a thigh → shin → foot chain */
    int ok[2];                 /* leg s has that chain */
    int upper[2], knee[2], foot[2];
    int8_t *leg_of_point;      /* per support point: 0, 1, or -1 */
} tb__legs;

static tb_result tb__legs_init(tb__legs *L, const tb_retarget_calib *c)
{
    memset(L, 0, sizeof *L);
    static const tb_role roles[2][3] = {{TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG, TB_ROLE_LEFT_FOOT},
                                        {TB_ROLE_RIGHT_UPLEG, TB_ROLE_RIGHT_LEG, TB_ROLE_RIGHT_FOOT}};
    int *ok = L->ok;
    for (int s = 0; s < 2; s++) {
        L->upper[s] = c->role_joint[roles[s][0]];
        L->knee[s] = c->role_joint[roles[s][1]];
        L->foot[s] = c->role_joint[roles[s][2]];
        ok[s] = L->upper[s] >= 0 && L->knee[s] >= 0 && L->foot[s] >= 0 && c->parents[L->knee[s]] == L->upper[s] &&
                c->parents[L->foot[s]] == L->knee[s];
        L->count += ok[s];
    }
    L->leg_of_point = malloc((size_t)c->sup.count + 1);
    if (!L->leg_of_point)
        return TB_ERR_OOM;
    for (int i = 0; i < c->sup.count; i++) {
        L->leg_of_point[i] = -1;
        if (c->sup.kind[i] != TB_SUPPORT_FOOT)
            continue;
        int best = -1;
        float bw = 0;
        for (int k = 0; k < c->sup.influences; k++) {
            float w = c->sup.weights[(size_t)i * (size_t)c->sup.influences + (size_t)k];
            if (w > bw)
                bw = w, best = c->sup.joints[(size_t)i * (size_t)c->sup.influences + (size_t)k];
        }
        for (int j = best >= 0 ? c->skin_joints[best] : -1; j >= 0 && L->leg_of_point[i] < 0; j = c->parents[j])
            for (int s = 0; s < 2; s++)
                if (ok[s] && j == L->upper[s])
                    L->leg_of_point[i] = (int8_t)s;
    }
    return TB_OK;
}

/* Lowest foot support point of each leg (world `up` coordinate) in the pose
 * `loc`; leaves that pose's world and skin matrices in world and skin. */
static void tb__leg_lows(const tb_retarget_calib *c, const tb__legs *L, const tb_transform *loc, float (*world)[16],
                         float (*skin)[16], int up, float low[2])
{
    tb__world_pass(c, loc, world);
    tb_skin_matrices(skin, (const float(*)[16])world, c->skin_joints, (const float(*)[16])c->inverse_bind,
                     (size_t)c->skin_joint_count);
    low[0] = low[1] = INFINITY;
    for (int i = 0; i < c->sup.count; i++) {
        int s = L->leg_of_point[i];
        if (s < 0)
            continue;
        float u = tb_skin_point_axis(c->sup.bind_pos + (size_t)i * 3, c->sup.joints + (size_t)i * (size_t)c->sup.influences,
                                     c->sup.weights + (size_t)i * (size_t)c->sup.influences, c->sup.influences,
                                     (const float(*)[16])skin, up);
        low[s] = u < low[s] ? u : low[s];
    }
}

/* Turns leg s so its ankle rises by `raise` along `up` (two-bone IK in the
 * current bend plane, foot orientation kept). 0 when it cannot. */
static int tb__raise_ankle(const tb_retarget_calib *dst, const tb__legs *L, tb_transform *loc, float (*world)[16],
                           int s, float raise, int up)
{
    int U = L->upper[s], K = L->knee[s], F = L->foot[s];
    float pU[3] = {world[U][12], world[U][13], world[U][14]}, pK[3] = {world[K][12], world[K][13], world[K][14]},
          pF[3] = {world[F][12], world[F][13], world[F][14]};
    float uk[3] = {pK[0] - pU[0], pK[1] - pU[1], pK[2] - pU[2]}, kf[3] = {pF[0] - pK[0], pF[1] - pK[1], pF[2] - pK[2]};
    float a = tb__norm3(uk), bl = tb__norm3(kf);
    float t[3] = {pF[0] - pU[0], pF[1] - pU[1], pF[2] - pU[2]};
    t[up] += raise;
    float c = tb__norm3(t);
    float cmax = 0.9995f * (a + bl), cmin = fabsf(a - bl) * 1.0005f + 1e-6f;
    if (!(a > 0) || !(bl > 0) || !(c > 0))
        return 0;
    c = c > cmax ? cmax : c < cmin ? cmin : c;
    /* the bend plane: the knee's offset from the hip → ankle line */
    float kp[3] = {pK[0] - pU[0], pK[1] - pU[1], pK[2] - pU[2]}, proj = tb__dot(kp, t);
    for (int k = 0; k < 3; k++)
        kp[k] -= proj * t[k];
    if (tb__norm3(kp) < 1e-3f * a) { /* straight leg: bend the knee forward */
        memcpy(kp, dst->frame[2], sizeof kp);
        proj = tb__dot(kp, t);
        for (int k = 0; k < 3; k++)
            kp[k] -= proj * t[k];
        if (tb__norm3(kp) < 1e-6f)
            return 0;
    }
    float cosA = (a * a + c * c - bl * bl) / (2 * a * c);
    cosA = cosA > 1 ? 1 : cosA < -1 ? -1 : cosA;
    float sinA = sqrtf(1 - cosA * cosA);
    float nk[3], nf[3], d0[3], d1[3];
    for (int k = 0; k < 3; k++) {
        nk[k] = pU[k] + a * (cosA * t[k] + sinA * kp[k]);
        nf[k] = pU[k] + c * t[k];
    }
    float qP[4] = {0, 0, 0, 1}, qU[4], qK[4], qF[4], dU[4], dK[4], tmp[4], inv[4];
    if (dst->parents[U] >= 0)
        tb__mat_rot(qP, world[dst->parents[U]]);
    tb__mat_rot(qU, world[U]);
    tb__mat_rot(qK, world[K]);
    tb__mat_rot(qF, world[F]);
    for (int k = 0; k < 3; k++)
        d0[k] = nk[k] - pU[k];
    tb__norm3(d0);
    tb__swing(dU, uk, d0); /* thigh: hip → new knee */
    tb__qrot(d1, dU, kf);
    for (int k = 0; k < 3; k++)
        d0[k] = nf[k] - nk[k];
    tb__norm3(d0);
    tb__swing(dK, d1, d0); /* shin: new knee → new ankle */
    float nU[4], nK[4];
    tb__qmul(nU, dU, qU);
    tb__qmul(tmp, dU, qK);
    tb__qmul(nK, dK, tmp);
    tb_quat_normalize(nU);
    tb_quat_normalize(nK);
    tb__qconj(inv, qP);
    tb__qmul(loc[U].r, inv, nU);
    tb__qconj(inv, nU);
    tb__qmul(loc[K].r, inv, nK);
    tb__qconj(inv, nK);
    tb__qmul(loc[F].r, inv, qF); /* the foot keeps its world orientation */
    tb_quat_normalize(loc[U].r);
    tb_quat_normalize(loc[K].r);
    tb_quat_normalize(loc[F].r);
    return 1;
}

/* SPEC D "limb reconciliation" (choice): the lift keeps the body's skin out
 * of the floor; a foot can still dip where the target's foot is longer, or
 * flatter, than the source's. A leg whose foot skin goes below the floor
 * (the body's calibrated ground, or lower where the source's own foot goes
 * lower) gets a two-bone IK that raises its ankle by the difference: the
 * thigh and shin turn in their current bend plane, the foot keeps its world
 * orientation. Rotations only; the hips do not move. */
static void tb__foot_contact(const tb_retarget_calib *dst, const tb__legs *L, tb_transform *loc, tb_retarget_bake *b,
                             int f, float (*world)[16], float (*skin)[16], float *scratch, int up)
{
    float floor_y = dst->sup.f_body;
    if (isfinite(b->source_foot_y[f]) && b->source_foot_y[f] < floor_y)
        floor_y = b->source_foot_y[f];
    const float tol = 0.002f * dst->leg_length;
    float low[2]; /* the lowest foot skin of each leg in the pose as it stands */
    tb__leg_lows(dst, L, loc, world, skin, up, low);
    int moved = 0;
    for (int s = 0; s < 2; s++) {
        if (!L->ok[s])
            continue;
        int U = L->upper[s], K = L->knee[s], F = L->foot[s];
        /* a few rounds: skin weighted to the shin does not rise 1:1 with the ankle */
        float total = 0;
        for (int round = 0; round < 3; round++) {
            if (!isfinite(low[s]) || !(low[s] < floor_y - tol))
                break;
            tb_transform keep[3] = {loc[U], loc[K], loc[F]};
            if (!tb__raise_ankle(dst, L, loc, world, s, floor_y - low[s], up))
                break;
            float after[2];
            tb__leg_lows(dst, L, loc, world, skin, up, after);
            if (!(after[s] > low[s] + 0.1f * tol)) { /* no better: undo, stop */
                loc[U] = keep[0], loc[K] = keep[1], loc[F] = keep[2];
                tb__world_pass(dst, loc, world); /* world back to the pose (the next leg's IK reads it) */
                break;
            }
            total += after[s] - low[s];
            low[0] = after[0], low[1] = after[1];
            moved = 1;
        }
        if (total > 0) {
            b->foot_fixes++;
            b->foot_raise_max = total > b->foot_raise_max ? total : b->foot_raise_max;
        }
    }
    if (moved) {
        tb__world_pass(dst, loc, world);
        tb_skin_matrices(skin, (const float(*)[16])world, dst->skin_joints, (const float(*)[16])dst->inverse_bind,
                         (size_t)dst->skin_joint_count);
        b->foot_min_y[f] = tb_ground_lowest(&dst->sup, TB_SUPPORT_FOOT, (const float(*)[16])skin, scratch);
    }
}

/* ---- tb_retarget_run as named stages ---------------------------------
 *
 * setup (the bake and the scratch of one run, tb__rt_job) → frame map (C:
 * the source's character frame onto the target's) → joint match (the source
 * joint and base rotation of each target joint) → channels (what the bake
 * writes per joint) → per frame: pose (the target's pose and the grounding
 * probes) → lift (smoothed) → per frame: place (lift, foot contact, short
 * arc). The pure stages are declared in passes/retarget_internal.h and
 * tested on their own (test_retarget). */

void tb__rt_frame_map(const float src_frame[3][3], const float dst_frame[3][3], float cq[4], float *facing_deg)
{
    float cm[3][3]; /* columns: C = F_dst F_src^T */
    for (int col = 0; col < 3; col++)
        for (int row = 0; row < 3; row++) {
            float s = 0;
            for (int k = 0; k < 3; k++)
                s += dst_frame[k][row] * src_frame[k][col];
            cm[col][row] = s;
        }
    tb__quat_from_cols(cq, cm[0], cm[1], cm[2]);
    /* yaw of C about the target's up, for reports */
    const float *fs = src_frame[2], *ft = dst_frame[2];
    float cr[3];
    tb__cross(cr, fs, ft);
    *facing_deg = atan2f(tb__dot(cr, dst_frame[1]), tb__dot(fs, ft)) * (float)TB_DEG_PER_RAD;
}

void tb__rt_short_arc(tb_transform *loc, const tb_transform *prev, int joint_count)
{
    for (int j = 0; j < joint_count; j++) {
        const float *q0 = prev[j].r;
        float *q1 = loc[j].r;
        if (q0[0] * q1[0] + q0[1] * q1[1] + q0[2] * q1[2] + q0[3] * q1[3] < 0)
            q1[0] = -q1[0], q1[1] = -q1[1], q1[2] = -q1[2], q1[3] = -q1[3];
    }
}

/* One run: its inputs, the bake it fills and its scratch. */
typedef struct tb__rt_job {
    const tb_retarget_calib *src, *dst;
    const tb_clip *clip;
    tb_retarget_desc d;
    float dur;
    int frames, ns, nt, sh, th, up;
    tb_retarget_bake *b;
    tb_transform *src_local;
    float (*src_world)[16], (*tgt_world)[16], (*wq)[4], (*skin)[16], *scratch;
    float *rows;        /* tb__ground_probes_lows' scratch */
    float (*hips_parent)[16], (*hips_pos)[3];
    float cq[4], cqi[4];
    int *match;         /* per target joint: its source joint, or -1 */
    float (*base)[4];   /* per target joint: Q_b^-1 R_tgt_bind */
} tb__rt_job;

static void tb__rt_free(tb__rt_job *j)
{
    free(j->src_local);
    free(j->src_world);
    free(j->tgt_world);
    free(j->wq);
    free(j->skin);
    free(j->scratch);
    free(j->rows);
    free(j->hips_parent);
    free(j->hips_pos);
    free(j->match);
    free(j->base);
    tb_retarget_bake_free(j->b);
}

/* Setup: the desc's defaults, the frame count, the bake and the scratch. */
static tb_result tb__rt_setup(tb__rt_job *j, const tb_retarget_calib *src, const tb_clip *clip,
                              const tb_retarget_calib *dst, const tb_retarget_desc *desc, tb_error *err)
{
    memset(j, 0, sizeof *j);
    j->d = desc ? *desc : (tb_retarget_desc){0};
    if (!src || !dst || !clip)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_retarget_run: source, clip and target are required");
    if (j->d.fps < 0 || j->d.smooth_s < 0)
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_retarget_desc.fps and smooth_s must be >= 0");
    if (j->d.fps == 0)
        j->d.fps = 30;
    if (j->d.smooth_s == 0)
        j->d.smooth_s = 0.1f;
    for (int i = 0; i < clip->channel_count; i++)
        if (clip->channels[i].joint < 0 || clip->channels[i].joint >= src->joint_count)
            return tb__fail(err, TB_ERR_ARG, NULL, "clip channel %d targets joint %d, outside the source skeleton", i,
                            clip->channels[i].joint);
    j->src = src, j->dst = dst, j->clip = clip;
    j->dur = clip->duration_s > 0 ? clip->duration_s : 0;
    int frames = 1 + (int)ceilf(j->dur * j->d.fps - 1e-3f);
    if (frames < 1)
        frames = 1;
    if (j->dur > 0 && frames < 2)
        frames = 2;
    j->frames = frames;
    int ns = j->ns = src->joint_count, nt = j->nt = dst->joint_count;
    j->sh = src->role_joint[TB_ROLE_HIPS], j->th = dst->role_joint[TB_ROLE_HIPS];
    j->up = dst->up_axis;

    tb_retarget_bake *b = j->b = calloc(1, sizeof *b);
    if (!b)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    b->name = strdup(clip->name ? clip->name : "clip");
    b->frame_count = frames;
    b->joint_count = nt;
    b->times = malloc((size_t)frames * sizeof(float));
    b->locals = malloc((size_t)frames * (size_t)nt * sizeof(tb_transform));
    b->animated = calloc((size_t)nt, 1);
    b->constant = calloc((size_t)nt, 1);
    b->lift = calloc((size_t)frames, sizeof(float));
    b->lift_raw = calloc((size_t)frames, sizeof(float));
    b->clearance = calloc((size_t)frames, sizeof(float));
    b->allowance = calloc((size_t)frames, sizeof(float));
    b->foot_min_y = calloc((size_t)frames, sizeof(float));
    b->tail_min_y = calloc((size_t)frames, sizeof(float));
    b->source_foot_y = calloc((size_t)frames, sizeof(float));
    j->src_local = malloc((size_t)ns * sizeof *j->src_local);
    j->src_world = malloc((size_t)ns * sizeof *j->src_world);
    j->tgt_world = malloc((size_t)nt * sizeof *j->tgt_world);
    j->wq = malloc((size_t)nt * sizeof *j->wq);
    int nmax_skin = src->skin_joint_count > dst->skin_joint_count ? src->skin_joint_count : dst->skin_joint_count;
    j->skin = malloc(((size_t)nmax_skin + 1) * sizeof *j->skin);
    size_t gs = tb__ground_probes_scratch(&src->gp, nmax_skin), gd = tb__ground_probes_scratch(&dst->gp, nmax_skin);
    j->rows = malloc((gs > gd ? gs : gd) * sizeof *j->rows);
    int nsup = src->sup.count > dst->sup.count ? src->sup.count : dst->sup.count;
    j->scratch = malloc(((size_t)nsup + 1) * 3 * sizeof(float));
    j->hips_parent = malloc((size_t)frames * sizeof *j->hips_parent);
    j->hips_pos = malloc((size_t)frames * sizeof *j->hips_pos);
    j->match = malloc((size_t)nt * sizeof *j->match);
    j->base = malloc((size_t)nt * sizeof *j->base);
    if (!b->name || !b->times || !b->locals || !b->animated || !b->constant || !b->lift || !b->lift_raw ||
        !b->clearance || !b->allowance || !b->foot_min_y || !b->tail_min_y || !b->source_foot_y || !j->src_local ||
        !j->src_world || !j->tgt_world || !j->wq || !j->skin || !j->rows || !j->scratch || !j->hips_parent ||
        !j->hips_pos || !j->match || !j->base)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    return TB_OK;
}

/* Joint match: per target joint, the matched source joint and Q_b^-1
 * R_tgt_bind (limbs turned so the bind directions agree, unless raw_delta). */
static void tb__rt_match(tb__rt_job *j)
{
    const tb_retarget_calib *src = j->src, *dst = j->dst;
    for (int t = 0; t < j->nt; t++) {
        j->match[t] = -1;
        memcpy(j->base[t], dst->bind_rot[t], sizeof j->base[t]);
        tb_role r = dst->roles[t];
        if (r == TB_ROLE_NONE || dst->role_joint[r] != t || src->role_joint[r] < 0)
            continue;
        j->match[t] = src->role_joint[r];
        tb_role child = tb__limb_child(r);
        if (j->d.raw_delta || child == TB_ROLE_NONE || dst->role_joint[child] < 0 || src->role_joint[child] < 0)
            continue;
        const float *sa = &src->bind_world[src->role_joint[r]][12], *sb = &src->bind_world[src->role_joint[child]][12];
        const float *ta = &dst->bind_world[t][12], *tb = &dst->bind_world[dst->role_joint[child]][12];
        float ds[3] = {sb[0] - sa[0], sb[1] - sa[1], sb[2] - sa[2]}, dt[3] = {tb[0] - ta[0], tb[1] - ta[1], tb[2] - ta[2]};
        if (tb__norm3(ds) <= 0 || tb__norm3(dt) <= 0)
            continue;
        float cds[3], q[4], qi[4];
        tb__qrot(cds, j->cq, ds);
        tb__swing(q, cds, dt);
        tb__qconj(qi, q);
        tb__qmul(j->base[t], qi, dst->bind_rot[t]);
        tb_quat_normalize(j->base[t]);
    }
}

/* Channels: what the bake writes per joint (rotations of matched joints,
 * the hips' translation, stored poses that differ from bind). */
static void tb__rt_channels(tb__rt_job *j)
{
    const tb_retarget_calib *dst = j->dst;
    tb_retarget_bake *b = j->b;
    int th = j->th;
    for (int t = 0; t < j->nt; t++) {
        if (j->match[t] >= 0)
            b->animated[t] |= TB_RETARGET_R;
        if (!dst->has_ibm[t])
            continue;
        float len = dst->leg_length;
        for (int p = TB_RETARGET_T; p <= TB_RETARGET_S; p <<= 1)
            if (!(b->animated[t] & p) && !(t == th && p == TB_RETARGET_T) &&
                tb__differs(&dst->stored_local[t], &dst->bind_local[t], p, len))
                b->constant[t] |= (uint8_t)p;
    }
    b->animated[th] |= TB_RETARGET_T | TB_RETARGET_R;
    b->constant[th] &= (uint8_t)~(TB_RETARGET_T | TB_RETARGET_R);
}

/* Pose of frame f: the source sampled, its rotations carried onto the
 * target, the hips displaced by the legs' ratio; then SPEC D's grounding
 * probes on the target (before the lift) and on the source (its allowance). */
static void tb__rt_pose(tb__rt_job *j, int f)
{
    const tb_retarget_calib *src = j->src, *dst = j->dst;
    tb_retarget_bake *b = j->b;
    int nt = j->nt, sh = j->sh, th = j->th;
    const float *src_hips0 = &src->bind_world[sh][12], *dst_hips0 = &dst->bind_world[th][12];
    float(*src_world)[16] = j->src_world, (*tgt_world)[16] = j->tgt_world, (*wq)[4] = j->wq;
    float(*skin)[16] = j->skin;
    float t = f == j->frames - 1 ? j->dur : (float)f / j->d.fps;
    if (t > j->dur)
        t = j->dur;
    b->times[f] = t;
    /* source pose in true world space (armature nodes included) */
    tb_clip_sample(j->clip, &src->skel, t, j->src_local);
    tb__world_pass(src, j->src_local, src_world);
    tb_transform *loc = b->locals + (size_t)f * (size_t)nt;
    for (int k = 0; k < nt; k++) {
        int p = dst->parents[k];
        static const float qid[4] = {0, 0, 0, 1};
        const float *rp = p >= 0 ? wq[p] : qid;
        loc[k] = dst->bind_local[k];
        if (j->match[k] >= 0) {
            /* Δ_w = R_src(t) R_src_bind^-1, turned into the target's frame */
            float rs[4], inv[4], delta[4], rt[4], rpi[4];
            tb__mat_rot(rs, src_world[j->match[k]]);
            tb__qconj(inv, src->bind_rot[j->match[k]]);
            tb__qmul(delta, rs, inv);
            tb__qmul(delta, j->cq, delta);
            tb__qmul(delta, delta, j->cqi);
            tb__qmul(rt, delta, j->base[k]);
            tb_quat_normalize(rt);
            memcpy(wq[k], rt, sizeof rt);
            tb__qconj(rpi, rp);
            tb__qmul(loc[k].r, rpi, rt);
            tb_quat_normalize(loc[k].r);
        } else {
            tb__qmul(wq[k], rp, loc[k].r);
            tb_quat_normalize(wq[k]);
        }
        if (k == th) {
            /* hips: source displacement from bind, world, scaled by legs */
            float disp[3] = {src_world[sh][12] - src_hips0[0], src_world[sh][13] - src_hips0[1],
                             src_world[sh][14] - src_hips0[2]};
            float cd[3];
            tb__qrot(cd, j->cq, disp);
            for (int a = 0; a < 3; a++)
                j->hips_pos[f][a] = dst_hips0[a] + b->leg_ratio * cd[a];
            static const float id16[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
            memcpy(j->hips_parent[f], p >= 0 ? tgt_world[p] : id16, sizeof j->hips_parent[f]);
            float pinv[16];
            tb__mat_inv(pinv, j->hips_parent[f]);
            tb__mat_point(loc[k].t, pinv, j->hips_pos[f]);
        }
        float ml[16];
        tb_transform_to_matrix(&loc[k], ml);
        if (p >= 0)
            tb_mat4_mul(tgt_world[k], tgt_world[p], ml);
        else
            memcpy(tgt_world[k], ml, sizeof ml);
    }
    /* SPEC D grounding probes on the target (before the lift) ... */
    tb_skin_matrices(skin, (const float(*)[16])tgt_world, dst->skin_joints,
                     (const float(*)[16])dst->inverse_bind, (size_t)dst->skin_joint_count);
    /* (tb_ground_clearance and tb_ground_lowest of each kind, in one pass) */
    float lows[3];
    tb__ground_probes_lows(&dst->gp, 1u << TB_SUPPORT_BODY | 1u << TB_SUPPORT_FOOT | 1u << TB_SUPPORT_TAIL,
                           (const float(*)[16])skin, dst->skin_joint_count, j->rows, lows);
    b->clearance[f] = lows[TB_SUPPORT_BODY] - dst->sup.f_body;
    b->foot_min_y[f] = lows[TB_SUPPORT_FOOT];
    b->tail_min_y[f] = lows[TB_SUPPORT_TAIL];
    /* ... and the same quantity on the source: its allowance a(t) <= 0 */
    tb_skin_matrices(skin, (const float(*)[16])src_world, src->skin_joints,
                     (const float(*)[16])src->inverse_bind, (size_t)src->skin_joint_count);
    tb__ground_probes_lows(&src->gp, 1u << TB_SUPPORT_BODY | 1u << TB_SUPPORT_FOOT, (const float(*)[16])skin,
                           src->skin_joint_count, j->rows, lows);
    float cs = lows[TB_SUPPORT_BODY] - src->sup.f_body;
    b->allowance[f] = isfinite(cs) && cs < 0 ? cs * b->leg_ratio : 0;
    b->source_foot_y[f] = (lows[TB_SUPPORT_FOOT] - src->sup.f_body) * b->leg_ratio + dst->sup.f_body;
    /* L_raw(t) = max(0, a(t) − c(t)) */
    float lr = isfinite(b->clearance[f]) ? b->allowance[f] - b->clearance[f] : 0;
    b->lift_raw[f] = j->d.no_ground || !(lr > 0) ? 0 : lr;
}

/* Place frame f: the smoothed lift on the hips, the feet out of the floor
 * (foot_contact), rotations on the previous frame's hemisphere. */
static void tb__rt_place(tb__rt_job *j, const tb__legs *legs, int f)
{
    tb_retarget_bake *b = j->b;
    int nt = j->nt, th = j->th;
    tb_transform *loc = b->locals + (size_t)f * (size_t)nt;
    if (b->lift[f] > 0) {
        float pos[3] = {j->hips_pos[f][0], j->hips_pos[f][1], j->hips_pos[f][2]}, pinv[16];
        pos[j->up] += b->lift[f];
        tb__mat_inv(pinv, j->hips_parent[f]);
        tb__mat_point(loc[th].t, pinv, pos);
    }
    b->foot_min_y[f] += b->lift[f];
    b->tail_min_y[f] += b->lift[f];
    if (j->d.foot_contact && !j->d.no_ground && legs->count)
        tb__foot_contact(j->dst, legs, loc, b, f, j->tgt_world, j->skin, j->scratch, j->up);
    /* keep rotations on one hemisphere so LINEAR keys take the short arc */
    if (f > 0)
        tb__rt_short_arc(loc, b->locals + (size_t)(f - 1) * (size_t)nt, nt);
}

tb_result tb_retarget_run(tb_retarget_bake **out, const tb_retarget_calib *src, const tb_clip *clip,
                          const tb_retarget_calib *dst, const tb_retarget_desc *desc, tb_error *err)
{
    *out = NULL;
    tb__rt_job j;
    tb_result res = tb__rt_setup(&j, src, clip, dst, desc, err);
    if (res != TB_OK) {
        tb__rt_free(&j);
        return res;
    }
    tb__rt_frame_map(src->frame, dst->frame, j.cq, &j.b->facing_deg);
    tb__qconj(j.cqi, j.cq);
    j.b->leg_ratio = dst->leg_length / src->leg_length;
    tb__rt_match(&j);
    tb__rt_channels(&j);
    for (int f = 0; f < j.frames; f++)
        tb__rt_pose(&j, f);
    tb_ground_smooth(j.b->lift, j.b->lift_raw, j.frames, 1.0f / j.d.fps, j.d.smooth_s);
    tb__legs legs;
    if (tb__legs_init(&legs, dst) != TB_OK) {
        tb__rt_free(&j);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (int f = 0; f < j.frames; f++)
        tb__rt_place(&j, &legs, f);
    free(legs.leg_of_point);
    *out = j.b;
    j.b = NULL;
    tb__rt_free(&j);
    return TB_OK;
}
