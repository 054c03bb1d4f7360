/* The tail spring-chain solver (SPEC B). See include/tailbone/spring.h.
 *
 * Layout of one step, per chain and per internal sub-step, going down the
 * chain from the anchor (every link needs its parent's solved frame):
 *   spring (semi-implicit Euler) → rope → bend coupling → bend limit →
 *   hip plane → ground contact → bone rotation.
 * Every constraint moves the tip on its bone's length sphere and only ever
 * REMOVES velocity (radial, pushing past the limit, against the coupling's
 * shift, through the hip plane, downward in contact): no correction/Δt is
 * ever fed back as velocity (SPEC B mistake 2).
 * Frames are similarity transforms (origin, rotation, uniform scale): the
 * anchor's comes from the caller's world matrix, each bone's from its parent
 * and its solved local rotation. Everything physical happens in world space.
 *
 * Frames of reference used below:
 *   world  — the caller's world space (metres, +Y up): particles, gravity,
 *            ground.
 *   hips   — bind-space axes (X lateral, Y up, Z forward) carried by the
 *            anchor: hips→world is R_anchor * conj(b_a), b_a being the
 *            anchor's bind rotation. The carry axis, the hip plane and the
 *            bend comparisons live here (SPEC B).
 *   parent — the current frame of a link's parent bone (or the anchor).
 */
#ifndef CGLM_ALL_UNALIGNED
#define CGLM_ALL_UNALIGNED /* caller matrices carry no 16-byte alignment */
#endif
#include <cglm/cglm.h>

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/spring.h"
#include "core/base.h"
#include "core/tbmath.h"
#include "runtime/spring_internal.h"

/* SPEC B defaults. */
#define TB__ROOT_HZ 0.9f
#define TB__TIP_RATIO 0.5f
#define TB__ZETA 0.65f
#define TB__GRAVITY 1.0f
#define TB__CARRY_RAD 0.872664626f /* 50° */
#define TB__COUPLING 12.0f
#define TB__BEND_LIMIT_RAD 0.523598776f /* 30° */
#define TB__CLEARANCE 0.025f
#define TB__CONTACT_DAMPING 8.0f
/* Choices beyond the article (documented in spring.h). */
#define TB__SUBSTEP_S (1.0f / 240.0f)
#define TB__MAX_DT_S 0.1f
#define TB__TELEPORT_M 1.0f
#define TB__TELEPORT_RAD 1.047197551f /* 60° */
/* Longest chain accepted (SPEC A9 makes 3..8). */
#define TB__MAX_LINKS 64

/* ---------------------------------------------------------------- errors */

/* tb__fail: core/base.h */

static const char *tb__joint_name(const tb_skeleton *skel, int j, char buf[32])
{
    if (skel->names && skel->names[j])
        return skel->names[j];
    snprintf(buf, 32, "joint %d", j);
    return buf;
}

/* ------------------------------------------------------------------ math */

/* The vector and quaternion helpers: core/tbmath.h. Those the chain pass
 * calls are forced inline (TB__INLINE), as cglm's own are: they run a dozen
 * times per link-step and a Debug build must stay usable in tests. The
 * link stages below are forced inline too. */

static int tb__finite_n(const float *v, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return 0;
    return 1;
}

/* Similarity frame of a matrix: origin, rotation (Gram-Schmidt on the
 * columns), uniform scale (cube root of the determinant). Returns 0 for a
 * non-finite, degenerate or mirrored matrix. */
int tb__frame_from_matrix(const float m[16], tb__frame *f)
{
    if (!tb__finite_n(m, 16))
        return 0;
    float x[3] = {m[0], m[1], m[2]}, y[3] = {m[4], m[5], m[6]}, z[3] = {m[8], m[9], m[10]};
    vec3 yz;
    glm_vec3_cross(y, z, yz);
    float det = tb__dot(x, yz);
    if (!(det > 1e-30f))
        return 0;
    f->s = cbrtf(det);
    tb__v3_set(f->o, m[12], m[13], m[14]);
    tb__v3_normalize(x);
    tb__v3_madd(y, y, -tb__dot(y, x), x);
    if (tb__v3_normalize(y) <= 0.0f)
        return 0;
    glm_vec3_cross(x, y, z);
    tb__q_from_axes(f->r, x, y, z);
    return 1;
}

/* TRS decomposition of an affine matrix without shear. Returns 0 when the
 * matrix is degenerate. */
static int tb__decompose_trs(const float m[16], float t[3], versor q, float sc[3])
{
    if (!tb__finite_n(m, 16))
        return 0;
    float x[3] = {m[0], m[1], m[2]}, y[3] = {m[4], m[5], m[6]}, z[3] = {m[8], m[9], m[10]};
    sc[0] = tb__v3_normalize(x);
    sc[1] = tb__v3_normalize(y);
    sc[2] = tb__v3_normalize(z);
    if (!(sc[0] > 0.0f && sc[1] > 0.0f && sc[2] > 0.0f))
        return 0;
    vec3 c;
    glm_vec3_cross(x, y, c);
    if (tb__dot(c, z) < 0.0f) { /* mirrored: carry the sign on one scale */
        sc[0] = -sc[0];
        x[0] = -x[0];
        x[1] = -x[1];
        x[2] = -x[2];
    }
    /* Re-orthonormalise: bind matrices come from float inverses. */
    tb__v3_madd(y, y, -tb__dot(y, x), x);
    tb__v3_normalize(y);
    glm_vec3_cross(x, y, z);
    tb__q_from_axes(q, x, y, z);
    tb__v3_set(t, m[12], m[13], m[14]);
    return 1;
}

static void tb__mat_load(const float src[16], mat4 d)
{
    memcpy(d, src, sizeof(mat4));
}

/* World point of a local point in a frame. */
TB__INLINE void tb__frame_point(const tb__frame *f, const float local[3], float d[3])
{
    float w[3];
    tb__qrot_unit(w, f->r, local);
    tb__v3_madd(d, f->o, f->s, w);
}

/* ----------------------------------------------------- tail chain names */

/* The one Tail_ name rule (names.c, tailbone/common.h); *prefix_len covers
 * the name up to and including the '_', *index is n >= 1, or 0 for End. */
static int tb__tail_name(const char *name, size_t *prefix_len, int *index)
{
    return tb_tail_name_split(name, prefix_len, NULL, index);
}

static int tb__is_chain_root(const tb_skeleton *skel, int j)
{
    size_t pl;
    int n;
    return skel->names && tb__tail_name(skel->names[j], &pl, &n) && n == 1;
}

/* Child of `parent` named prefix + index (index 0: "End"), or -1. */
static int tb__find_child(const tb_skeleton *skel, int parent, const char *prefix, size_t prefix_len,
                          int index)
{
    for (int c = parent + 1; c < skel->joint_count; c++) {
        if (skel->parents[c] != parent)
            continue;
        size_t pl;
        int n;
        const char *nm = skel->names[c];
        if (tb__tail_name(nm, &pl, &n) && pl == prefix_len && n == index &&
            memcmp(nm, prefix, pl) == 0)
            return c;
    }
    return -1;
}

/* --------------------------------------------------------- bind rest pose */

/* Bind-space world matrix of joint j: bind_world when given, else the world
 * of the stored node pose. */
static void tb__bind_world(const tb_skeleton *skel, int j, mat4 d)
{
    if (skel->bind_world) {
        tb__mat_load(skel->bind_world[j], d);
        return;
    }
    float m[16];
    tb_transform_to_matrix(&skel->rest_local[j], m);
    tb__mat_load(m, d);
    for (int p = skel->parents[j]; p >= 0; p = skel->parents[p]) {
        mat4 pm, r;
        tb_transform_to_matrix(&skel->rest_local[p], m);
        tb__mat_load(m, pm);
        glm_mat4_mul(pm, d, r);
        glm_mat4_copy(r, d);
    }
}

/* Neutral local of joint j (SPEC B "Rest pose from the bind matrices"):
 * L_j^0 = (W_parent^0)^-1 W_j^0 whenever both bind matrices come from IBMs;
 * never the node rotation stored in the file, which may hold an old frame.
 * A helper without an IBM (Tail_End is usually not a skin joint) keeps its
 * own stored local, which is relative to its parent and so does not inherit
 * a rotation baked into that parent. */
static int tb__rest_local(const tb_skeleton *skel, int j, float t[3], versor q, float sc[3])
{
    int p = skel->parents[j];
    int from_ibm = skel->bind_world && p >= 0 &&
                   (!skel->has_ibm || (skel->has_ibm[j] && skel->has_ibm[p]));
    if (!from_ibm && skel->rest_local) {
        const tb_transform *x = &skel->rest_local[j];
        tb__v3_copy(t, x->t);
        tb__q_copy(q, x->r);
        tb__q_normalize(q);
        tb__v3_copy(sc, x->s);
        return tb__finite_n(t, 3) && tb__finite_n(q, 4) && tb__finite_n(sc, 3);
    }
    if (!skel->bind_world || p < 0)
        return 0;
    mat4 wp, wj, inv, l;
    tb__bind_world(skel, p, wp);
    tb__bind_world(skel, j, wj);
    glm_mat4_inv(wp, inv);
    glm_mat4_mul(inv, wj, l);
    return tb__decompose_trs((const float *)l, t, q, sc);
}

/* -------------------------------------------------------------- params */

static float tb__def_or_zero(float x, float def)
{
    if (x == 0.0f)
        return def;
    if (x < 0.0f)
        return TB_SPRING_ZERO;
    return x;
}

static float tb__use(float x)
{
    return x < 0.0f ? 0.0f : x;
}

tb_spring_params tb_spring_params_defaults(const tb_spring_params *p)
{
    tb_spring_params r;
    tb__desc_or_zero(&r, p, sizeof r);
    TB__DEFAULT(r.root_hz, TB__ROOT_HZ);
    TB__DEFAULT(r.tip_ratio, TB__TIP_RATIO);
    r.damping_ratio = tb__def_or_zero(r.damping_ratio, TB__ZETA);
    r.gravity_mps2 = tb__def_or_zero(r.gravity_mps2, TB__GRAVITY);
    r.carry_rad = tb__def_or_zero(r.carry_rad, TB__CARRY_RAD);
    r.coupling_per_s = tb__def_or_zero(r.coupling_per_s, TB__COUPLING);
    TB__DEFAULT(r.bend_limit_rad, TB__BEND_LIMIT_RAD);
    r.clearance_m = tb__def_or_zero(r.clearance_m, TB__CLEARANCE);
    r.contact_damping_per_s = tb__def_or_zero(r.contact_damping_per_s, TB__CONTACT_DAMPING);
    r.ground_off = r.ground_off ? 1 : 0;
    r.contact_keeps_limit = r.contact_keeps_limit ? 1 : 0;
    return r;
}

tb_spring_desc tb_spring_desc_defaults(const tb_spring_desc *d)
{
    tb_spring_desc r;
    tb__desc_or_zero(&r, d, sizeof r);
    r.params = tb_spring_params_defaults(&r.params);
    TB__DEFAULT(r.substep_s, TB__SUBSTEP_S);
    TB__DEFAULT(r.max_dt_s, TB__MAX_DT_S);
    TB__DEFAULT(r.teleport_m, TB__TELEPORT_M);
    TB__DEFAULT(r.teleport_rad, TB__TELEPORT_RAD);
    return r;
}

/* Validates resolved parameters against the sub-step they will run at. */
static tb_result tb__check_params(const tb_spring_params *p, float substep, tb_error *err)
{
    static const struct {
        size_t off;
        const char *name;
    } fields[] = {
        {offsetof(tb_spring_params, root_hz), "tb_spring_params.root_hz"},
        {offsetof(tb_spring_params, tip_ratio), "tb_spring_params.tip_ratio"},
        {offsetof(tb_spring_params, damping_ratio), "tb_spring_params.damping_ratio"},
        {offsetof(tb_spring_params, gravity_mps2), "tb_spring_params.gravity_mps2"},
        {offsetof(tb_spring_params, carry_rad), "tb_spring_params.carry_rad"},
        {offsetof(tb_spring_params, rest_curve), "tb_spring_params.rest_curve"},
        {offsetof(tb_spring_params, coupling_per_s), "tb_spring_params.coupling_per_s"},
        {offsetof(tb_spring_params, bend_limit_rad), "tb_spring_params.bend_limit_rad"},
        {offsetof(tb_spring_params, ground_y_m), "tb_spring_params.ground_y_m"},
        {offsetof(tb_spring_params, clearance_m), "tb_spring_params.clearance_m"},
        {offsetof(tb_spring_params, contact_damping_per_s),
         "tb_spring_params.contact_damping_per_s"},
        {offsetof(tb_spring_params, bind_limit_rad), "tb_spring_params.bind_limit_rad"},
    };
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        float v;
        memcpy(&v, (const char *)p + fields[k].off, sizeof v);
        if (!isfinite(v))
            return tb__fail(err, TB_ERR_ARG, fields[k].name, "must be finite");
    }
    if (!(p->root_hz > 0.0f))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_params.root_hz", "must be > 0");
    if (!(p->tip_ratio > 0.0f))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_params.tip_ratio", "must be > 0");
    if (p->rest_curve < 0.0f || p->rest_curve > 1.0f)
        return tb__fail(err, TB_ERR_ARG, "tb_spring_params.rest_curve", "must be in [0, 1]");
    if (!(p->bend_limit_rad > 0.0f))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_params.bend_limit_rad", "must be > 0");
    if (p->bind_limit_rad < 0.0f)
        return tb__fail(err, TB_ERR_ARG, "tb_spring_params.bind_limit_rad", "must be >= 0 (0: none)");
    /* Semi-implicit Euler is stable for ωh ≤ 1 and 2ζωh ≤ 1 (both with
     * margin); refuse a spring too stiff for the sub-step rather than let
     * it explode later. */
    float wmax = 2.0f * (float)GLM_PI * p->root_hz * (p->tip_ratio > 1.0f ? p->tip_ratio : 1.0f);
    if (wmax * substep > 1.0f)
        return tb__fail(err, TB_ERR_ARG, "tb_spring_params.root_hz",
                        "too stiff for the sub-step: 2*pi*f*substep must be <= 1");
    if (2.0f * tb__use(p->damping_ratio) * wmax * substep > 1.0f)
        return tb__fail(err, TB_ERR_ARG, "tb_spring_params.damping_ratio",
                        "too strong for the sub-step: 2*zeta*omega*substep must be <= 1");
    return TB_OK;
}

static const versor tb__identity_axes = {0.0f, 0.0f, 0.0f, 1.0f};

/* The character's axes (lateral, up, forward) in bind space as a rotation
 * of X, Y, Z; identity for glTF's +Y up, +Z forward (the all-zero desc). */
static void tb__char_axes(const tb_spring_desc *d, versor q)
{
    float up[3], fwd[3], lat[3];
    tb__v3_copy(up, d->bind_up);
    tb__v3_copy(fwd, d->bind_forward);
    if (!(tb__v3_len(up) > 1e-6f))
        tb__v3_set(up, 0.0f, 1.0f, 0.0f);
    tb__v3_normalize(up);
    if (!(tb__v3_len(fwd) > 1e-6f))
        tb__v3_set(fwd, 0.0f, 0.0f, 1.0f);
    float k = tb__dot(fwd, up);
    for (int i = 0; i < 3; i++)
        fwd[i] -= k * up[i];
    if (!(tb__v3_len(fwd) > 1e-6f)) { /* forward along up: keep glTF's */
        tb__q_copy(q, tb__identity_axes);
        return;
    }
    tb__v3_normalize(fwd);
    glm_vec3_cross(up, fwd, lat); /* X = Y × Z */
    tb__q_from_axes(q, lat, up, fwd);
}

static tb_result tb__check_desc(const tb_spring_desc *d, tb_error *err)
{
    if (!tb__finite_n(d->bind_up, 3) || !tb__finite_n(d->bind_forward, 3))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.bind_up", "axes must be finite");
    if (!(d->substep_s > 0.0f) || !isfinite(d->substep_s))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.substep_s", "must be finite and > 0");
    if (!(d->max_dt_s >= d->substep_s) || !isfinite(d->max_dt_s))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.max_dt_s",
                        "must be finite and >= substep_s");
    if (!(d->teleport_m > 0.0f))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.teleport_m", "must be > 0");
    if (!(d->teleport_rad > 0.0f))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.teleport_rad", "must be > 0");
    if ((d->max_dt_s / d->substep_s) > 100000.0f)
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.max_dt_s",
                        "allows more than 100000 sub-steps per frame");
    return tb__check_params(&d->params, d->substep_s, err);
}

/* Builds the spring's rest pose of a chain from its parameters (SPEC B
 * "Carry and the hip plane", "Centred rest arc"): the target direction of
 * segment i in hips space is
 *   u_i = R_x(C (i+1)/N) rot(Q_i(β), c),  Q_i(β) = slerp(I, swing(c, a_i), β),
 * so the carry C is the lift of the WHOLE tail spread over its joints (the
 * article's third mistake lifted every joint by C), and
 *   r_i = rot(A_i^-1, u_i),  A_i including the corrections upstream,
 * so u_i is absolute and the straightening is not added again per joint. */
static void tb__chain_prepare(tb_spring_animator *a, tb__chain *c)
{
    const tb_spring_params *p = &c->params;
    c->zeta = tb__use(p->damping_ratio);
    c->gravity = tb__use(p->gravity_mps2);
    c->coupling = tb__use(p->coupling_per_s);
    /* A limit at or past π is no limit: |w| < -1 never holds. */
    c->cos_half_max = p->bend_limit_rad >= (float)GLM_PI ? -1.0f : cosf(0.5f * p->bend_limit_rad);
    c->sin_half_max = p->bend_limit_rad >= (float)GLM_PI ? 1.0f : sinf(0.5f * p->bend_limit_rad);
    c->ground_on = !p->ground_off;
    c->contact_keeps_limit = p->contact_keeps_limit != 0;
    const int bind_on = p->bind_limit_rad > 0.0f && p->bind_limit_rad < (float)GLM_PI;
    c->cos_bind_max = bind_on ? cosf(p->bind_limit_rad) : -2.0f;
    c->sin_bind_max = bind_on ? sinf(p->bind_limit_rad) : 0.0f;
    c->ground_y = p->ground_y_m;
    c->clearance = tb__use(p->clearance_m);
    c->gamma = tb__use(p->contact_damping_per_s);
    float carry = tb__use(p->carry_rad), beta = p->rest_curve;

    tb__link *L = a->links + c->first_link;
    int n = c->link_count;
    float cdir[3] = {0.0f, L[0].authored[1], L[0].authored[2]};
    if (tb__v3_normalize(cdir) < 1e-6f)
        tb__v3_set(cdir, 0.0f, -1.0f, 0.0f); /* SPEC B: down if it vanishes */
    versor A;
    tb__q_copy(A, c->b_a);
    for (int i = 0; i < n; i++) {
        tb__link *l = &L[i];
        versor sw, Q, lift, tmp;
        tb__q_swing(sw, cdir, l->authored);
        tb__q_scale_angle(Q, sw, beta);
        float u[3], w[3];
        tb__qrot_unit(w, Q, cdir);
        /* +X rotation lifts "down" towards -Z: back and up for a character
         * facing +Z (SPEC conventions). */
        vec3 xaxis = {1.0f, 0.0f, 0.0f};
        glm_quatv(lift, carry * (float)(i + 1) / (float)n, xaxis);
        tb__qrot_unit(u, lift, w);
        tb__q_copy(l->A, A);
        tb__qconj(tmp, A);
        tb__qrot_unit(l->r, tmp, u);
        tb__v3_normalize(l->r);
        tb__q_swing(sw, l->bind_dir, l->r);
        tb__qmul(l->qhat, sw, l->q0);
        tb__q_normalize(l->qhat);
        tb__qmul(tmp, A, l->qhat);
        tb__q_copy(A, tmp);
        tb__q_normalize(A);
        /* SPEC B: f = root at the root segment, root*tip_ratio at the tip. */
        float s = n > 1 ? (float)i / (float)(n - 1) : 0.0f;
        float f = p->root_hz * (1.0f + (p->tip_ratio - 1.0f) * s);
        const float omega = 2.0f * (float)GLM_PI * f;
        l->omega2 = omega * omega;
        l->damp = 2.0f * c->zeta * omega;
    }
}

/* ----------------------------------------------------------- creation */

typedef struct tb__counts {
    int chains, links, affected;
} tb__counts;

static size_t tb__align(size_t x)
{
    return (x + (TB_SPRING_ALIGN - 1)) & ~(size_t)(TB_SPRING_ALIGN - 1);
}

static size_t tb__bytes(const tb__counts *n)
{
    return tb__align(sizeof(tb_spring_animator)) + tb__align(sizeof(tb__chain) * (size_t)n->chains) +
           tb__align(sizeof(tb__link) * (size_t)n->links) +
           tb__align(sizeof(tb__affected) * (size_t)n->affected);
}

/* Is j the root of a chain (by name, or one desc names)? */
static int tb__root_of(const tb_skeleton *skel, const tb_spring_desc *d, int j)
{
    if (!d || !d->chain_joints)
        return tb__is_chain_root(skel, j);
    for (int c = 0, o = 0; c < d->chain_count; o += d->chain_lengths[c++])
        if (d->chain_joints[o] == j)
            return 1;
    return 0;
}

/* Is j a descendant-or-self of a chain root? Walks up: skeletons are shallow. */
static int tb__below_chain(const tb_skeleton *skel, const tb_spring_desc *d, int j)
{
    for (; j >= 0; j = skel->parents[j])
        if (tb__root_of(skel, d, j))
            return 1;
    return 0;
}

/* desc's explicit chains are well formed: indices in range, each joint the
 * child of the one before, at most TB__MAX_LINKS each. */
static tb_result tb__check_explicit(const tb_skeleton *skel, const tb_spring_desc *d, tb_error *err)
{
    if (!d || !d->chain_joints)
        return TB_OK;
    if (d->chain_count < 0 || (d->chain_count > 0 && !d->chain_lengths))
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.chain_lengths", "needed with chain_joints");
    char w[64];
    for (int c = 0, o = 0; c < d->chain_count; o += d->chain_lengths[c++]) {
        int len = d->chain_lengths[c];
        if (len < 1 || len > TB__MAX_LINKS) {
            snprintf(w, sizeof w, "tb_spring_desc.chain_lengths[%d]", c);
            return tb__fail(err, TB_ERR_ARG, w, "must be 1 to 64 bones");
        }
        for (int i = 0; i < len; i++) {
            int j = d->chain_joints[o + i];
            snprintf(w, sizeof w, "tb_spring_desc.chain_joints[%d]", o + i);
            if (j < 0 || j >= skel->joint_count)
                return tb__fail(err, TB_ERR_ARG, w, "joint index out of range");
            if (i > 0 && skel->parents[j] != d->chain_joints[o + i - 1])
                return tb__fail(err, TB_ERR_ARG, w, "not the child of the joint before it");
        }
        int e = d->chain_ends ? d->chain_ends[c] : -1;
        if (e >= 0 && (e >= skel->joint_count || skel->parents[e] != d->chain_joints[o + len - 1])) {
            snprintf(w, sizeof w, "tb_spring_desc.chain_ends[%d]", c);
            return tb__fail(err, TB_ERR_ARG, w, "not a child of the chain's last joint");
        }
    }
    return TB_OK;
}

static tb_result tb__check_skeleton(const tb_skeleton *skel, tb_error *err)
{
    if (!skel)
        return tb__fail(err, TB_ERR_ARG, "skeleton", "must not be NULL");
    if (skel->joint_count < 0 || (skel->joint_count > 0 && !skel->parents))
        return tb__fail(err, TB_ERR_ARG, "tb_skeleton.parents", "missing");
    if (skel->joint_count > 0 && !skel->bind_world && !skel->rest_local)
        return tb__fail(err, TB_ERR_ARG, "tb_skeleton.bind_world",
                        "bind_world or rest_local is needed");
    for (int j = 0; j < skel->joint_count; j++) {
        if (skel->parents[j] < -1 || skel->parents[j] >= j) {
            char w[64];
            snprintf(w, sizeof w, "tb_skeleton.parents[%d]", j);
            return tb__fail(err, TB_ERR_ARG, w, "joints must be parent-first (parents[i] < i)");
        }
    }
    return TB_OK;
}

/* Is joint `up` a bone of a chain (by name, or one desc names)? */
static int tb__in_chain(const tb_skeleton *skel, const tb_spring_desc *d, int up)
{
    if (!d || !d->chain_joints) {
        size_t pl2;
        int idx2;
        return skel->names && tb__tail_name(skel->names[up], &pl2, &idx2);
    }
    int total = 0;
    for (int c = 0; c < d->chain_count; c++)
        total += d->chain_lengths[c];
    for (int i = 0; i < total; i++)
        if (d->chain_joints[i] == up)
            return 1;
    return 0;
}

/* The joints of chain ri (given, at d->chain_joints + off; or walked down
 * the Tail_ names from j, whose prefix is pl long) and its end joint (-1:
 * none). */
static tb_result tb__spring_chain_joints(const tb_skeleton *skel, const tb_spring_desc *d, int ri, int off, int j,
                                  size_t pl, const char *nm, int *joints, int *count, int *end, tb_error *err)
{
    if (d && d->chain_joints) {
        *count = d->chain_lengths[ri];
        memcpy(joints, d->chain_joints + off, (size_t)*count * sizeof *joints);
        *end = d->chain_ends ? d->chain_ends[ri] : -1;
        return TB_OK;
    }
    int cur = j, k = 0;
    while (cur >= 0) {
        if (k == TB__MAX_LINKS)
            return tb__fail(err, TB_ERR_INVALID, nm, "tail chain longer than 64 bones");
        joints[k++] = cur;
        cur = tb__find_child(skel, cur, skel->names[j], pl, k + 1);
    }
    *end = tb__find_child(skel, joints[k - 1], skel->names[j], pl, 0);
    *count = k;
    return TB_OK;
}

/* The chain's anchor rotation in the hips frame (the character's axes,
 * lateral, up, forward, as X, Y, Z) and its end joint's rest. */
static tb_result tb__chain_anchor_frame(const tb_skeleton *skel, tb__chain *c, const versor axes, tb_error *err)
{
    char nb[32];
    mat4 wa;
    float t[3], sc[3];
    tb__bind_world(skel, c->anchor, wa);
    if (!tb__decompose_trs((const float *)wa, t, c->b_a, sc))
        return tb__fail(err, TB_ERR_INVALID, tb__joint_name(skel, c->anchor, nb), "degenerate bind matrix");
    versor fq, b;
    tb__qconj(fq, axes);
    tb__qmul(b, fq, c->b_a);
    tb__q_copy(c->b_a, b);
    tb__q_normalize(c->b_a);
    if (c->end_joint >= 0 && !tb__rest_local(skel, c->end_joint, c->end_t, c->end_q, c->end_sc))
        return tb__fail(err, TB_ERR_INVALID, tb__joint_name(skel, c->end_joint, nb), "degenerate bind matrix");
    return TB_OK;
}

/* Each link's rest (offset, rotation, scale), its length and direction,
 * and its authored direction in hips space. */
static tb_result tb__links_bind(const tb_skeleton *skel, const tb__chain *c, tb__link *links, const int *joints,
                                tb_error *err)
{
    char nb[32];
    int count = c->link_count, end = c->end_joint;
    for (int i = 0; i < count; i++) {
        tb__link *l = &links[i];
        memset(l, 0, sizeof *l);
        l->joint = joints[i];
        if (!tb__rest_local(skel, joints[i], l->t, l->q0, l->sc))
            return tb__fail(err, TB_ERR_INVALID, tb__joint_name(skel, joints[i], nb), "degenerate bind matrix");
        l->sigma = (fabsf(l->sc[0]) + fabsf(l->sc[1]) + fabsf(l->sc[2])) / 3.0f;
    }
    versor B; /* bind rotation of the link's parent relative to the anchor */
    tb__q_identity(B);
    for (int i = 0; i < count; i++) {
        tb__link *l = &links[i];
        float e[3];
        if (i + 1 < count) {
            tb__v3_copy(e, links[i + 1].t);
        } else if (end >= 0) {
            tb__v3_copy(e, c->end_t);
        } else {
            /* SPEC B: no Tail_End — extend the incoming tangent
             * expressed in the last bone's OWN frame (the segment from
             * its parent, rotated by q0^-1 and unscaled), not the
             * parent-frame vector copied as is. */
            versor qi;
            tb__qconj(qi, l->q0);
            tb__qrot_unit(e, qi, l->t);
            for (int k = 0; k < 3; k++)
                e[k] /= l->sigma > 0.0f ? l->sigma : 1.0f;
        }
        float len = tb__v3_len(e);
        if (!(len > 1e-6f) || !(l->sigma > 1e-6f))
            return tb__fail(err, TB_ERR_INVALID, tb__joint_name(skel, l->joint, nb),
                            end < 0 && i + 1 == count ? "cannot infer the last bone's length: no Tail_End "
                                                        "and no incoming segment"
                                                      : "zero-length tail bone");
        l->lambda = l->sigma * len;
        for (int k = 0; k < 3; k++)
            l->e_hat[k] = e[k] / len;
        tb__qrot_unit(l->bind_dir, l->q0, l->e_hat);
        tb__v3_normalize(l->bind_dir);
        /* a_i: the authored direction in hips space (bind-space axes). */
        versor H, tmp;
        tb__qmul(H, c->b_a, B);
        tb__qrot_unit(l->authored, H, l->bind_dir);
        tb__v3_normalize(l->authored);
        tb__qmul(tmp, B, l->q0);
        tb__q_copy(B, tmp);
    }
    return TB_OK;
}

/* The joints below a chain that its pose moves (counted; filled when a). */
static void tb__discover_affected(const tb_skeleton *skel, const tb_spring_desc *d, tb_spring_animator *a,
                                  tb__counts *n)
{
    for (int j = 0; j < skel->joint_count; j++) {
        if (!tb__below_chain(skel, d, j))
            continue;
        if (a) {
            tb__affected *x = &a->affected[n->affected];
            x->joint = j;
            x->parent = skel->parents[j];
            x->parent_affected = x->parent >= 0 && tb__below_chain(skel, d, x->parent);
            x->chain = -1;
            for (int ci = 0; ci < n->chains && x->chain < 0; ci++) {
                const tb__chain *c = &a->chains[ci];
                if (c->end_joint == j)
                    x->chain = ci;
                for (int i = 0; i < c->link_count; i++)
                    if (a->links[c->first_link + i].joint == j)
                        x->chain = ci;
            }
        }
        n->affected++;
    }
}

/* Which chains the batch step may write in lanes (spring_batch.c). */
static void tb__discover_lanes(const tb_skeleton *skel, const tb_spring_desc *d, tb_spring_animator *a,
                               const tb__counts *n)
{
    for (int ci = 0; ci < n->chains; ci++) {
        tb__chain *c = &a->chains[ci];
        const int last = a->links[c->first_link + c->link_count - 1].joint;
        c->lane_out_ok = !tb__below_chain(skel, d, c->anchor) &&
                         (c->end_joint < 0 || skel->parents[c->end_joint] == last);
    }
    a->lane_out_all = 1;
    for (int ci = 0; ci < n->chains; ci++)
        a->lane_out_all &= a->chains[ci].lane_out_ok;
    for (int k = 0; k < n->affected; k++)
        a->lane_out_all &= a->affected[k].chain >= 0;
    a->lanes_all = 0;
}

/* Finds the chains (Tail_1 roots, or d's explicit ones), their links and
 * the joints below them. With a == NULL only counts (in n); otherwise fills
 * a's arrays (their sizes come from a previous counting pass). */
static tb_result tb__discover(const tb_skeleton *skel, const tb_spring_desc *d, tb_spring_animator *a,
                              tb__counts *n, const versor axes, tb_error *err)
{
    tb__chain scratch_chain;
    tb__link scratch_links[TB__MAX_LINKS];
    memset(n, 0, sizeof *n);
    int explicit_chains = d && d->chain_joints;
    if (!skel->names && !explicit_chains)
        return TB_OK;
    tb_result er = tb__check_explicit(skel, d, err);
    if (er != TB_OK)
        return er;
    int roots = explicit_chains ? d->chain_count : skel->joint_count;
    for (int ri = 0, off = 0; ri < roots; off += explicit_chains ? d->chain_lengths[ri] : 0, ri++) {
        size_t pl = 0;
        int idx;
        int j = explicit_chains ? d->chain_joints[off] : ri;
        if (!explicit_chains && (!tb__tail_name(skel->names[j], &pl, &idx) || idx != 1))
            continue;
        char nmb[32];
        const char *nm = tb__joint_name(skel, j, nmb);
        int anchor = skel->parents[j];
        if (anchor < 0)
            return tb__fail(err, TB_ERR_INVALID, nm, "a tail chain needs a parent joint (Hips)");
        /* A chain hanging from another chain would need that chain's solved
         * sub-step frames as its anchor; refuse it rather than lag a step. */
        for (int up = anchor; up >= 0; up = skel->parents[up]) {
            if (tb__in_chain(skel, d, up))
                return tb__fail(err, TB_ERR_INVALID, nm, "tail chain anchored on another tail chain");
        }
        int joints[TB__MAX_LINKS];
        int count = 0, end = -1;
        if ((er = tb__spring_chain_joints(skel, d, ri, off, j, pl, nm, joints, &count, &end, err)) != TB_OK)
            return er;

        /* Counting builds the chain in scratch too, so that
         * tb_spring_memory_size() reports the same errors as init. */
        tb__chain *c = a ? &a->chains[n->chains] : &scratch_chain;
        tb__link *links = a ? &a->links[n->links] : scratch_links;
        memset(c, 0, sizeof *c);
        c->anchor = anchor;
        c->first_joint = j;
        c->end_joint = end;
        c->first_link = n->links;
        c->link_count = count;
        if ((er = tb__chain_anchor_frame(skel, c, axes, err)) != TB_OK ||
            (er = tb__links_bind(skel, c, links, joints, err)) != TB_OK)
            return er;
        n->chains++;
        n->links += count;
    }
    tb__discover_affected(skel, d, a, n);
    if (a)
        tb__discover_lanes(skel, d, a, n);
    return TB_OK;
}

tb_result tb_spring_memory_size(const tb_skeleton *skel, size_t *size, int *chain_count,
                                tb_error *err)
{
    return tb_spring_memory_size_desc(skel, NULL, size, chain_count, err);
}

tb_result tb_spring_memory_size_desc(const tb_skeleton *skel, const tb_spring_desc *desc,
                                     size_t *size, int *chain_count, tb_error *err)
{
    tb__counts n;
    tb_result r = tb__check_skeleton(skel, err);
    if (r == TB_OK)
        r = tb__discover(skel, desc, NULL, &n, tb__identity_axes, err);
    if (r != TB_OK)
        return r;
    if (size)
        *size = tb__bytes(&n);
    if (chain_count)
        *chain_count = n.chains;
    return TB_OK;
}

static void tb__link_rest_state(tb__link *l)
{
    tb__q_copy(l->q, l->qhat);
    tb__q_identity(l->bend);
    tb__q_identity(l->bend_old);
    memset(l->v, 0, sizeof l->v);
    l->contact = 0;
}

tb_result tb_spring_init(tb_spring_animator **out, void *memory, size_t size,
                         const tb_skeleton *skel, const tb_spring_desc *desc, tb_error *err)
{
    if (!out)
        return tb__fail(err, TB_ERR_ARG, "out", "must not be NULL");
    *out = NULL;
    if (!memory || ((uintptr_t)memory & (TB_SPRING_ALIGN - 1)))
        return tb__fail(err, TB_ERR_ARG, "memory", "must be non-NULL and aligned to TB_SPRING_ALIGN");
    tb_spring_desc d = tb_spring_desc_defaults(desc);
    tb_result r = tb__check_desc(&d, err);
    if (r == TB_OK)
        r = tb__check_skeleton(skel, err);
    tb__counts n;
    if (r == TB_OK)
        r = tb__discover(skel, &d, NULL, &n, tb__identity_axes, err);
    if (r != TB_OK)
        return r;
    if (size < tb__bytes(&n))
        return tb__fail(err, TB_ERR_ARG, "size", "smaller than tb_spring_memory_size()");

    memset(memory, 0, tb__bytes(&n));
    char *m = memory;
    tb_spring_animator *a = (tb_spring_animator *)m;
    m += tb__align(sizeof *a);
    a->chains = (tb__chain *)m;
    m += tb__align(sizeof(tb__chain) * (size_t)n.chains);
    a->links = (tb__link *)m;
    m += tb__align(sizeof(tb__link) * (size_t)n.links);
    a->affected = (tb__affected *)m;
    a->chain_count = n.chains;
    a->link_count = n.links;
    a->affected_count = n.affected;
    a->substep = d.substep_s;
    a->max_dt = d.max_dt_s;
    a->teleport_m = d.teleport_m;
    a->teleport_rad = d.teleport_rad;
    tb__counts filled;
    versor axes;
    tb__char_axes(&d, axes);
    r = tb__discover(skel, &d, a, &filled, axes, err);
    if (r != TB_OK)
        return r;
    for (int c = 0; c < a->chain_count; c++) {
        tb__chain *ch = &a->chains[c];
        ch->params = d.params;
        tb__chain_prepare(a, ch);
        for (int i = 0; i < ch->link_count; i++)
            tb__link_rest_state(&a->links[ch->first_link + i]);
    }
    *out = a;
    return TB_OK;
}

static void *tb__malloc(size_t size, void *user)
{
    (void)user;
    /* One block holds everything; its sections are 16-byte aligned within
     * it, so the block must be too. */
    return aligned_alloc(TB_SPRING_ALIGN, tb__align(size));
}

static void tb__free(void *ptr, void *user)
{
    (void)user;
    free(ptr);
}

tb_result tb_spring_create(tb_spring_animator **out, const tb_skeleton *skel,
                           const tb_spring_desc *desc, tb_error *err)
{
    if (!out)
        return tb__fail(err, TB_ERR_ARG, "out", "must not be NULL");
    *out = NULL;
    size_t size;
    tb_result r = tb_spring_memory_size_desc(skel, desc, &size, NULL, err);
    if (r != TB_OK)
        return r;
    void *(*alloc_fn)(size_t, void *) = tb__malloc;
    void (*free_fn)(void *, void *) = tb__free;
    void *user = NULL;
    if (desc && desc->alloc_fn) {
        if (!desc->free_fn)
            return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.free_fn", "needed with alloc_fn");
        alloc_fn = desc->alloc_fn;
        free_fn = desc->free_fn;
        user = desc->user;
    }
    void *mem = alloc_fn(size, user);
    if (!mem)
        return tb__fail(err, TB_ERR_OOM, "tb_spring_create", "cannot allocate the animator");
    if ((uintptr_t)mem & (TB_SPRING_ALIGN - 1)) {
        free_fn(mem, user);
        return tb__fail(err, TB_ERR_ARG, "tb_spring_desc.alloc_fn",
                        "must return memory aligned to TB_SPRING_ALIGN");
    }
    r = tb_spring_init(out, mem, size, skel, desc, err);
    if (r != TB_OK) {
        free_fn(mem, user);
        return r;
    }
    (*out)->free_fn = free_fn;
    (*out)->user = user;
    return TB_OK;
}

void tb_spring_destroy(tb_spring_animator *anim)
{
    if (!anim)
        return;
    assert(anim->free_fn && "tb_spring_destroy: animator was made by tb_spring_init");
    if (anim->free_fn)
        anim->free_fn(anim, anim->user);
}

/* ----------------------------------------------------------- the solver */

/* Unit horizontal part of v, or 0 when it vanishes. */
static int tb__horizontal(const float v[3], float d[3])
{
    tb__v3_set(d, v[0], 0.0f, v[2]);
    return tb__v3_normalize(d) > 1e-6f;
}

/* contact_keeps_limit (not SPEC B, opt-in): a contact direction d more
 * than θmax from the rest direction is turned back onto the limit along the
 * great circle from the rest direction, slerp(rest, d, θmax/θ); the bend of
 * the joint is then the one the limit allows, as the bend limit itself
 * computes it (the angle between the rest and the solved direction). */
static void tb__contact_limit(const tb__chain *c, const float rest_w[3], float d[3])
{
    if (c->cos_half_max <= -1.0f)
        return;
    const float cos_max = c->cos_half_max * c->cos_half_max - c->sin_half_max * c->sin_half_max;
    float cd = tb__dot(rest_w, d);
    if (!(cd < cos_max))
        return;
    cd = cd < -1.0f ? -1.0f : cd;
    const float th = acosf(cd), tmax = 2.0f * acosf(c->cos_half_max);
    const float st = sinf(th);
    if (!(st > 1e-6f))
        return; /* opposite the rest direction: no arc to follow */
    const float a = sinf(th - tmax) / st, b = sinf(tmax) / st;
    for (int k = 0; k < 3; k++)
        d[k] = a * rest_w[k] + b * d[k];
    tb__v3_normalize(d);
}

/* One sub-step of one chain, link by link, in stages (tb__chain_pass):
 * target → integrate → rope → bend (coupling and bend limit) → bind limit
 * → hip plane → ground → settle → rotate. What one link's stages hand each
 * other: */
typedef struct tb__link_step {
    float hd[3];     /* the head: the bone's start in the parent's current frame */
    float rest_w[3]; /* the rest direction, world (unit) */
    float T[3];      /* the rest target */
    float d[3];      /* the direction being solved (unit) */
    float dl[3];     /* d in the parent's frame */
    float ell;       /* the bone's current length */
    versor pinv;     /* the parent's rotation, inverted */
    versor s, q;     /* the swing turning r to d; the bend, seen from the hips frame */
    float head_off, mmax; /* the head's offset along the hip plane's normal; the largest d·nf allowed */
    int moved, bound;     /* the plane or the ground turned the bone; the bind limit did */
} tb__link_step;

/* What every link of one sub-step shares. */
typedef struct tb__pass {
    float h;            /* sub-step length (0 with snap) */
    int snap;           /* every particle on its rest target, at rest */
    float alpha;        /* SPEC B bend coupling: 1 − exp(−kΔt) */
    float contact_keep; /* the velocity kept in contact, e^(−γΔt) */
    float floor_y;      /* SPEC B: F = g0 + ρ */
    float gravity[3];
    float nf[3];        /* the hip plane's forward normal */
    float root[3];      /* the tail root, a point of the hip plane */
} tb__pass;

/* target: the head, the length and the rest target from the parent's
 * CURRENT solved frame (SPEC B). */
TB__INLINE void tb__link_target(const tb__frame *P, const tb__link *l, tb__link_step *k)
{
    tb__frame_point(P, l->t, k->hd);
    k->ell = P->s * l->lambda;
    tb__qrot_unit(k->rest_w, P->r, l->r); /* unit: a unit vector turned */
    tb__v3_madd(k->T, k->hd, k->ell, k->rest_w);
}

/* integrate: SPEC B: p̈ = ω²(T − p) − 2ζω ṗ + g, semi-implicit Euler
 * (velocity first, then position with the new velocity), in physical units
 * so the stiffness does not depend on the frame rate (mistake 1). */
TB__INLINE void tb__link_integrate(const tb__pass *ps, tb__link *l, const tb__link_step *k)
{
    if (ps->snap) {
        tb__v3_copy(l->p, k->T);
        tb__v3_set(l->v, 0.0f, 0.0f, 0.0f);
        return;
    }
    for (int c = 0; c < 3; c++) {
        const float acc = l->omega2 * (k->T[c] - l->p[c]) - l->damp * l->v[c] + ps->gravity[c];
        l->v[c] += ps->h * acc;
        l->p[c] += ps->h * l->v[c];
    }
}

/* rope: back onto the length sphere; drop only the radial velocity,
 * keeping the swing. The correction is never fed back as velocity
 * (correction/Δt spun one bone 95° in the article: mistake 2). */
TB__INLINE void tb__link_rope(tb__link *l, tb__link_step *k)
{
    for (int c = 0; c < 3; c++)
        k->d[c] = l->p[c] - k->hd[c];
    if (!(tb__v3_normalize(k->d) > 1e-9f * (k->ell > 1.0f ? k->ell : 1.0f)))
        tb__v3_copy(k->d, k->rest_w);
    tb__v3_madd(l->v, l->v, -tb__dot(l->v, k->d), k->d);
}

/* bend: coupling and bend limit, compared in the hips frame (SPEC B):
 * q_i = A_i swing(r_i, d̃_i) A_i^-1, a change of frame only. */
TB__INLINE void tb__link_bend(const tb__chain *c, const tb__link *L, int i, int n, const tb__pass *ps,
                              const tb__frame *P, tb__link *l, tb__link_step *k)
{
    versor tmp;
    tb__qconj(k->pinv, P->r);
    tb__qrot_unit(k->dl, k->pinv, k->d);
    tb__v3_normalize(k->dl);
    tb__q_swing(k->s, l->r, k->dl);
    tb__q_conjugate_by(k->q, l->A, k->s);
    float *q = k->q;
    int changed = 0, limited = 0;
    if (ps->alpha > 0.0f) {
        /* Neighbour target from the previous sub-step's snapshot, never
         * half-updated values. The base leans on the hips (identity);
         * the free tip has one neighbour; one link skips coupling. */
        versor bar, id;
        tb__q_identity(id);
        if (i == 0)
            tb__q_midpoint(bar, id, L[1].bend_old);
        else if (i == n - 1)
            tb__q_copy(bar, L[n - 2].bend_old);
        else
            tb__q_midpoint(bar, L[i - 1].bend_old, L[i + 1].bend_old);
        tb__q_slerp(tmp, q, bar, ps->alpha);
        tb__q_copy(q, tmp);
        changed = 1;
    }
    /* SPEC B bend limit: θ = 2 acos(|w|) > θmax, i.e. |w| < cos(θmax/2);
     * then q_limited = slerp(I, q*, θmax/θ): the same axis turned by
     * θmax, i.e. (axis sin(θmax/2), cos(θmax/2)) on the short arc. */
    if (fabsf(q[3]) < c->cos_half_max) {
        const float sg = q[3] < 0.0f ? -1.0f : 1.0f;
        float ax[3] = {sg * q[0], sg * q[1], sg * q[2]};
        if (tb__v3_normalize(ax) > 0.0f) {
            for (int a = 0; a < 3; a++)
                q[a] = ax[a] * c->sin_half_max;
            q[3] = c->cos_half_max;
            changed = limited = 1;
        }
    }
    const float h = ps->h;
    float *d = k->d;
    if (changed) {
        float before[3], shift[3];
        tb__v3_copy(before, d);
        versor ainv;
        tb__qconj(ainv, l->A);
        tb__q_conjugate_by(k->s, ainv, q); /* back to the parent frame */
        tb__qrot_unit(k->dl, k->s, l->r);
        tb__qrot_unit(d, P->r, k->dl);
        tb__v3_normalize(d);
        /* (choice) The coupling moves the tip without touching its
         * velocity, so a velocity that keeps pushing back against it
         * would be rebuilt and cancelled every sub-step: a tail at rest
         * would carry a phantom velocity (0.3 m/s measured on a resting
         * tip) that feeds the damping term and is released as a snap
         * when the neighbours change. Remove the part of the velocity
         * that opposes the shift, at most the shift's own rate |δ|/h.
         * Only ever removed, never added: unlike correction/Δt (mistake
         * 2) it cannot inject energy. */
        for (int a = 0; a < 3; a++)
            shift[a] = k->ell * (d[a] - before[a]);
        const float slen = tb__v3_normalize(shift);
        if (slen > 0.0f && h > 0.0f) {
            const float back = -tb__dot(l->v, shift);
            if (back > 0.0f)
                tb__v3_madd(l->v, l->v, fminf(back, slen / h), shift);
        }
    }
    if (limited) {
        /* Velocity that keeps pushing past the limit is removed, so it
         * cannot store up and snap back (SPEC B). τ: on the sphere, the
         * direction that increases the angle to the rest direction. */
        float tau[3];
        tb__v3_madd(tau, k->rest_w, -tb__dot(k->rest_w, d), d);
        for (int a = 0; a < 3; a++)
            tau[a] = -tau[a];
        if (tb__v3_normalize(tau) > 1e-6f) {
            float vt = tb__dot(l->v, tau);
            if (vt > 0.0f)
                tb__v3_madd(l->v, l->v, -vt, tau);
        }
    }
}

/* bind limit (bind_limit_rad, not SPEC B, opt-in): the direction is kept
 * within θb of the bone's bind direction in its parent's current frame —
 * the bend the skin sees — by turning it back along the great circle from
 * the bind direction, slerp(bind, d, θb/θ); velocity that keeps pushing
 * past is removed like the bend limit's. The bend q is then recomputed
 * from the final direction (tb__link_rotate, as for the plane). */
TB__INLINE void tb__link_bind_limit(const tb__chain *c, const tb__frame *P, tb__link *l, tb__link_step *k)
{
    k->bound = 0;
    if (!(c->cos_bind_max > -1.5f))
        return;
    float *d = k->d;
    float bw[3];
    tb__qrot_unit(bw, P->r, l->bind_dir);
    tb__v3_normalize(bw);
    float cb = tb__dot(bw, d);
    if (!(cb < c->cos_bind_max))
        return;
    cb = cb < -1.0f ? -1.0f : cb;
    const float th = acosf(cb), st = sinf(th);
    if (!(st > 1e-6f))
        return;
    const float ka = (sinf(th) * c->cos_bind_max - cb * c->sin_bind_max) / st; /* sin(θ−θb)/sin θ */
    const float kb = c->sin_bind_max / st;
    for (int a = 0; a < 3; a++)
        d[a] = ka * bw[a] + kb * d[a];
    tb__v3_normalize(d);
    float tau[3];
    tb__v3_madd(tau, bw, -tb__dot(bw, d), d);
    for (int a = 0; a < 3; a++)
        tau[a] = -tau[a];
    if (tb__v3_normalize(tau) > 1e-6f) {
        const float vt = tb__dot(l->v, tau);
        if (vt > 0.0f)
            tb__v3_madd(l->v, l->v, -vt, tau);
    }
    k->bound = 1;
}

/* hip plane: no particle crosses the forward-facing plane through the tail
 * root (SPEC B) — the tail never swings between the legs. The head is
 * behind it (by induction), so rotate the bone on its length sphere until
 * the tip is on the plane at most. */
TB__INLINE void tb__link_hip_plane(const tb__pass *ps, tb__link *l, tb__link_step *k)
{
    const float *nf = ps->nf;
    float *d = k->d;
    float off[3];
    for (int a = 0; a < 3; a++)
        off[a] = k->hd[a] - ps->root[a];
    k->head_off = tb__dot(off, nf);  /* ≤ 0 */
    k->mmax = -k->head_off / k->ell;    /* largest allowed d·nf */
    const float mmax = k->mmax;
    float dn = tb__dot(d, nf);
    k->moved = 0;
    if (mmax < 1.0f && dn > mmax) {
        float tt[3];
        tb__v3_madd(tt, d, -dn, nf);
        if (!(tb__v3_normalize(tt) > 1e-6f)) {
            tb__v3_madd(tt, k->rest_w, -tb__dot(k->rest_w, nf), nf);
            if (!(tb__v3_normalize(tt) > 1e-6f)) {
                vec3 nv;
                tb__v3_copy(nv, nf);
                glm_vec3_ortho(nv, tt);
                tb__v3_normalize(tt);
            }
        }
        float m = mmax < -1.0f ? -1.0f : mmax;
        float k2 = sqrtf(fmaxf(0.0f, 1.0f - m * m));
        for (int a = 0; a < 3; a++)
            d[a] = m * nf[a] + k2 * tt[a];
        k->moved = 1;
        float vn = tb__dot(l->v, nf);
        if (vn > 0.0f)
            tb__v3_madd(l->v, l->v, -vn, nf);
    }
}

/* ground: pivot the segment to where its length sphere meets the plane F
 * (SPEC B) — clamping the height alone would shorten the bone, clamping
 * then restoring the length can put it back under. Contact beats the bend
 * limit; it never moves a head, so it can never lift the body. */
TB__INLINE void tb__link_ground(const tb__chain *c, const tb__pass *ps, tb__link *l, tb__link_step *k)
{
    const float *nf = ps->nf, *hd = k->hd;
    const float ell = k->ell, mmax = k->mmax;
    float *d = k->d;
    l->contact = 0;
    if (!(c->ground_on && hd[1] + ell * d[1] < ps->floor_y))
        return;
    float u = (ps->floor_y - hd[1]) / ell;
    u = u > 1.0f ? 1.0f : (u < -1.0f ? -1.0f : u); /* never stretch */
    float t[3];
    if (!tb__horizontal(d, t) && !tb__horizontal(k->rest_w, t)) {
        float back[3] = {-nf[0], -nf[1], -nf[2]};
        if (!tb__horizontal(back, t))
            tb__v3_set(t, 0.0f, 0.0f, -1.0f);
    }
    const float rad = sqrtf(fmaxf(0.0f, 1.0f - u * u));
    /* The hip plane keeps the allowed part of the contact circle:
     * head_off + ℓ(rad t·nf + u nf_y) ≤ 0. */
    float nh[3] = {nf[0], 0.0f, nf[2]};
    const float nhl = tb__v3_normalize(nh);
    if (rad > 1e-6f && nhl > 1e-6f) {
        const float bound = (mmax - u * nf[1]) / (rad * nhl); /* max t·nh */
        const float tn = tb__dot(t, nh);
        if (tn > bound) {
            const float kk = bound < -1.0f ? -1.0f : bound;
            float perp[3];
            tb__v3_madd(perp, t, -tn, nh);
            if (!(tb__v3_normalize(perp) > 1e-6f))
                tb__v3_set(perp, -nh[2], 0.0f, nh[0]);
            const float kp = sqrtf(fmaxf(0.0f, 1.0f - kk * kk));
            for (int a = 0; a < 3; a++)
                t[a] = kk * nh[a] + kp * perp[a];
        }
    }
    tb__v3_set(d, rad * t[0], u, rad * t[2]);
    if (c->contact_keeps_limit)
        tb__contact_limit(c, k->rest_w, d);
    l->contact = 1;
    k->moved = 1;
}

/* settle: the particle at the solved direction; the velocity kept tangent
 * there, and in contact damped (SPEC B: v' = e^(−γΔt)(v_x, max(0, v_y), v_z)
 * after the other velocity projections: gravity cannot pile up downward
 * speed). */
TB__INLINE void tb__link_settle(const tb__pass *ps, tb__link *l, const tb__link_step *k)
{
    tb__v3_madd(l->p, k->hd, k->ell, k->d);
    tb__v3_madd(l->v, l->v, -tb__dot(l->v, k->d), k->d);
    if (l->contact) {
        if (l->v[1] < 0.0f)
            l->v[1] = 0.0f;
        for (int a = 0; a < 3; a++)
            l->v[a] *= ps->contact_keep;
    }
}

/* rotate: the bone rotation, the swing turning the rest direction r_i to
 * the direction of the particle (SPEC B), applied to the rest local, in the
 * parent's current frame. The same swing, seen from the hips frame, is the
 * bend the next sub-step's coupling reads. Building the child's frame from
 * this (rather than from a swing off the bind direction) keeps the frames
 * the targets are expressed in free of any twist the bind pose would add:
 * at rest the chain is exactly its rest arc. Unless the plane, the ground or
 * the bind limit moved the tip, s and q already hold that swing and that
 * bend. Then P becomes the child's parent frame. */
TB__INLINE void tb__link_rotate(tb__frame *P, tb__link *l, tb__link_step *k)
{
    if (k->moved || k->bound) {
        tb__qrot_unit(k->dl, k->pinv, k->d);
        tb__v3_normalize(k->dl);
        tb__q_swing(k->s, l->r, k->dl);
        tb__q_conjugate_by(k->q, l->A, k->s);
    }
    tb__qmul(l->q, k->s, l->qhat);
    tb__q_normalize(l->q);
    tb__q_copy(l->bend, k->q);
    tb__v3_copy(l->head, k->hd);
    tb__v3_copy(l->target, k->T);
    l->length = k->ell;

    versor tmp;
    tb__v3_copy(P->o, k->hd);
    tb__qmul(tmp, P->r, l->q);
    tb__q_copy(P->r, tmp);
    tb__q_normalize(P->r);
    P->s *= l->sigma;
}

/* One sub-step of one chain with the anchor at `anchor`. h: sub-step length
 * (0 with snap). snap: put every particle on its rest target, at rest. */
void tb__chain_pass(tb_spring_animator *a, tb__chain *c, const tb__frame *anchor, float h,
                           int snap)
{
    tb__link *L = a->links + c->first_link;
    const int n = c->link_count;
    tb__pass ps;
    ps.h = h;
    ps.snap = snap;
    /* SPEC B bend coupling: α = 1 − exp(−kΔt), time-based so sub-steps of
     * any length couple at the same rate. */
    ps.alpha = (snap || n < 2) ? 0.0f : 1.0f - expf(-c->coupling * h);
    ps.contact_keep = expf(-c->gamma * h);
    ps.floor_y = c->ground_y + c->clearance;
    tb__v3_set(ps.gravity, 0.0f, -c->gravity, 0.0f);

    /* Hips frame → world, and the hip plane's forward normal. */
    versor hips, tmp;
    tb__qconj(tmp, c->b_a);
    tb__qmul(hips, anchor->r, tmp);
    const float fwd_h[3] = {0.0f, 0.0f, 1.0f};
    tb__qrot_unit(ps.nf, hips, fwd_h);

    tb__frame P = *anchor; /* the current link's parent frame */
    tb__frame_point(&P, L[0].t, ps.root);

    for (int i = 0; i < n; i++) {
        tb__link *l = &L[i];
        tb__link_step k;
        tb__link_target(&P, l, &k);
        tb__link_integrate(&ps, l, &k);
        tb__link_rope(l, &k);
        tb__link_bend(c, L, i, n, &ps, &P, l, &k);
        tb__link_bind_limit(c, &P, l, &k);
        tb__link_hip_plane(&ps, l, &k);
        tb__link_ground(c, &ps, l, &k);
        tb__link_settle(&ps, l, &k);
        tb__link_rotate(&P, l, &k);
    }
    for (int i = 0; i < n; i++)
        tb__q_copy(L[i].bend_old, L[i].bend);
}

static void tb__frame_lerp(const tb__frame *a, const tb__frame *b, float t, tb__frame *d)
{
    for (int k = 0; k < 3; k++)
        d->o[k] = a->o[k] + t * (b->o[k] - a->o[k]);
    d->s = a->s + t * (b->s - a->s);
    tb__q_slerp(d->r, a->r, b->r, t);
}

int tb__teleported(const tb_spring_animator *a, const tb__frame *from, const tb__frame *to)
{
    float dd[3];
    for (int k = 0; k < 3; k++)
        dd[k] = to->o[k] - from->o[k];
    float c = fabsf(from->r[0] * to->r[0] + from->r[1] * to->r[1] + from->r[2] * to->r[2] +
                    from->r[3] * to->r[3]);
    float ang = 2.0f * acosf(c > 1.0f ? 1.0f : c);
    return tb__v3_len(dd) > a->teleport_m || ang > a->teleport_rad;
}

/* skip: leave out the chains the batch step wrote in lanes (lane_out). */
TB__INLINE void tb__outputs(const tb_spring_animator *a, const float (*world)[16],
                            tb_transform *locals, float (*world_out)[16], int skip)
{
    for (int ci = 0; ci < a->chain_count; ci++) {
        const tb__chain *c = &a->chains[ci];
        if (skip && c->lane_out)
            continue;
        for (int i = 0; i < c->link_count; i++) {
            const tb__link *l = &a->links[c->first_link + i];
            tb_transform *x = &locals[l->joint];
            tb__v3_copy(x->t, l->t);
            tb__q_copy(x->r, l->q);
            tb__v3_copy(x->s, l->sc);
        }
        if (c->end_joint >= 0) {
            tb_transform *x = &locals[c->end_joint];
            tb__v3_copy(x->t, c->end_t);
            tb__q_copy(x->r, c->end_q);
            tb__v3_copy(x->s, c->end_sc);
        }
    }
    if (!world_out)
        return;
    /* Parent-first order: one forward pass over the joints below the tails.
     * A parent outside that set is read from the caller's world. */
    for (int k = 0; k < a->affected_count; k++) {
        const tb__affected *x = &a->affected[k];
        if (skip && x->chain >= 0 && a->chains[x->chain].lane_out)
            continue;
        mat4 pm, lm, r;
        float m[16];
        if (x->parent < 0)
            glm_mat4_identity(pm);
        else
            tb__mat_load(x->parent_affected ? world_out[x->parent] : world[x->parent], pm);
        tb_transform_to_matrix(&locals[x->joint], m);
        tb__mat_load(m, lm);
        glm_mat4_mul(pm, lm, r);
        memcpy(world_out[x->joint], r, sizeof(float) * 16);
    }
}

void tb__write_outputs(const tb_spring_animator *a, const float (*world)[16],
                       tb_transform *locals, float (*world_out)[16])
{
    tb__outputs(a, world, locals, world_out, 0);
}

void tb__write_outputs_rest(tb_spring_animator *a, const float (*world)[16],
                            tb_transform *locals, float (*world_out)[16])
{
    if (!a->lanes_all)
        tb__outputs(a, world, locals, world_out, 1);
}

void tb__chain_frame(tb_spring_animator *a, tb__chain *c, const tb__frame *cur, int steps,
                     float h)
{
    if (!c->warm || tb__teleported(a, &c->prev, cur)) {
        /* Cold start or teleport: rest pose, no whip. */
        tb__chain_pass(a, c, cur, 0.0f, 1);
        c->warm = 1;
    } else {
        /* Fixed sub-steps, the anchor moving between the two frames. */
        for (int k = 1; k <= steps; k++) {
            tb__frame f;
            if (k == steps)
                f = *cur;
            else
                tb__frame_lerp(&c->prev, cur, (float)k / (float)steps, &f);
            tb__chain_pass(a, c, &f, h, 0);
        }
    }
    c->prev = *cur;
}

void tb_spring_step(tb_spring_animator *a, float dt_s, const float (*world)[16],
                    tb_transform *locals, float (*world_out)[16])
{
    assert(a && world && locals);
    /* Tiny, zero, negative or NaN dt: hold the pose and leave the state
     * alone, so the next real step sees the whole motion. */
    if (!(dt_s >= TB__MIN_DT_S)) {
        tb__write_outputs(a, world, locals, world_out);
        return;
    }
    if (dt_s > a->max_dt)
        dt_s = a->max_dt; /* a hitch simulates at most max_dt */
    int steps = (int)ceilf(dt_s / a->substep - 1e-4f);
    if (steps < 1)
        steps = 1;
    const float h = dt_s / (float)steps;

    for (int ci = 0; ci < a->chain_count; ci++) {
        tb__chain *c = &a->chains[ci];
        tb__frame cur;
        if (!tb__frame_from_matrix(world[c->anchor], &cur)) {
            c->warm = 0; /* hold; restart from rest once the anchor is sane */
            continue;
        }
        tb__chain_frame(a, c, &cur, steps, h);
    }
    tb__write_outputs(a, world, locals, world_out);
}

void tb_spring_reset(tb_spring_animator *a)
{
    assert(a);
    for (int ci = 0; ci < a->chain_count; ci++) {
        tb__chain *c = &a->chains[ci];
        c->warm = 0;
        for (int i = 0; i < c->link_count; i++)
            tb__link_rest_state(&a->links[c->first_link + i]);
    }
}

tb_result tb_spring_set_params(tb_spring_animator *a, int chain, const tb_spring_params *p,
                               tb_error *err)
{
    if (!a)
        return tb__fail(err, TB_ERR_ARG, "anim", "must not be NULL");
    if (chain < 0 || chain >= a->chain_count)
        return tb__fail(err, TB_ERR_ARG, "chain", "out of range");
    tb_spring_params r = tb_spring_params_defaults(p);
    tb_result res = tb__check_params(&r, a->substep, err);
    if (res != TB_OK)
        return res;
    a->chains[chain].params = r;
    tb__chain_prepare(a, &a->chains[chain]);
    return TB_OK;
}

void tb_spring_get_params(const tb_spring_animator *a, int chain, tb_spring_params *out)
{
    assert(a && out && chain >= 0 && chain < a->chain_count);
    *out = a->chains[chain].params;
}

int tb_spring_chain_count(const tb_spring_animator *a)
{
    return a ? a->chain_count : 0;
}

void tb_spring_get_chain_info(const tb_spring_animator *a, int chain, tb_spring_chain_info *out)
{
    assert(a && out && chain >= 0 && chain < a->chain_count);
    const tb__chain *c = &a->chains[chain];
    out->anchor_joint = c->anchor;
    out->first_joint = c->first_joint;
    out->end_joint = c->end_joint;
    out->link_count = c->link_count;
}

void tb_spring_get_link_state(const tb_spring_animator *a, int chain, int link,
                          tb_spring_link_state *out)
{
    assert(a && out && chain >= 0 && chain < a->chain_count);
    const tb__chain *c = &a->chains[chain];
    assert(link >= 0 && link < c->link_count);
    const tb__link *l = &a->links[c->first_link + link];
    out->joint = l->joint;
    tb__v3_copy(out->head, l->head);
    tb__v3_copy(out->tip, l->p);
    tb__v3_copy(out->velocity, l->v);
    tb__v3_copy(out->target, l->target);
    out->length_m = l->length;
    tb__q_copy(out->bend, l->bend);
    out->bend_rad = tb__q_angle(l->bend);
    out->contact = l->contact;
}

int tb_spring_state_count(const tb_spring_animator *a)
{
    return a ? a->link_count * TB_SPRING_STATE_FLOATS : 0;
}

void tb_spring_state_get(const tb_spring_animator *a, float *out)
{
    assert(a && (out || !a->link_count));
    for (int i = 0; i < a->link_count; i++, out += TB_SPRING_STATE_FLOATS) {
        const tb__link *l = &a->links[i];
        tb__v3_copy(out, l->p);
        tb__v3_copy(out + 3, l->v);
        tb__q_copy(out + 6, l->bend_old);
    }
}

void tb_spring_state_set(tb_spring_animator *a, const float *in)
{
    assert(a && (in || !a->link_count));
    for (int i = 0; i < a->link_count; i++, in += TB_SPRING_STATE_FLOATS) {
        tb__link *l = &a->links[i];
        if (tb__finite_n(in, 6)) {
            tb__v3_copy(l->p, in);
            tb__v3_copy(l->v, in + 3);
        } else {
            tb__v3_copy(l->p, l->target);
            memset(l->v, 0, sizeof l->v);
        }
        if (tb__finite_n(in + 6, 4)) {
            tb__q_copy(l->bend_old, in + 6);
            tb__q_normalize(l->bend_old); /* the identity when it vanishes */
        } else {
            tb__q_identity(l->bend_old);
        }
        tb__q_copy(l->bend, l->bend_old);
    }
}
