/* Per-joint fit of VRM spring-bone settings to our baked tail motion.
 *
 * A VRM runtime integrates each spring joint once per frame (the
 * VRMC_springBone 1.0 "SpringBone Algorithm"; three-vrm's VRMSpringBoneJoint
 * runs it as modelled here): in world space,
 *   next = cur + (cur − prev)(1 − dragForce) + restDir·stiffness·h
 *          + gravityDir·gravityPower·h,
 * put back at the bone's length from the bone's head, prev = cur, cur = next,
 * and the bone is rotated from its stored node rotation so that it points at
 * next. The joints update in chain order; each uses its parent's pose of
 * this frame. The bone length is measured to the child's position as the
 * frame began (three-vrm updates the child's world matrix only at the child's
 * own turn), which this model reproduces.
 *
 * The fit plays every clip as a loop through both our solver (at the bake
 * rate; the runtime frames see its keys interpolated, as a player shows the
 * baked file) and this model, and minimises, over the last of three loops, per bone tip and axis
 * relative to the anchor: (mean − ours)² + 2 (swing − ours)² + 0.25 × the
 * phase part of the squared distance (each clip's mean, so every clip counts
 * the same) by coordinate search from three starts over five numbers per joint:
 * ln stiffness, dragForce, gravityPower and two tilts of the stored rest
 * rotation across the bone, starting from the analytic mapping and the
 * settled rest (docs/vrm.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "gltf/doc_internal.h"
#include "passes/vrm_fit_internal.h"
#include "tailbone/clip.h"
#include "tailbone/runtime.h"

#define TB__FIT_MAX_CLIPS 8
#define TB__FIT_MAX_CLIP_S 20.0f
#define TB__FIT_MAX_FRAMES 900 /* runtime frames per loop over all clips */
#define TB__FIT_LOOPS 3
#define TB__FIT_MAX_EVALS 2000 /* model runs, all starts */
#define TB__FIT_STARTS 3       /* the search's starts (docs/vrm.md) */
#define TB__FIT_PHASE 0.25     /* weight of the phase term of the cost */
#define TB__FIT_SWING 2.0      /* weight of the swing term of the cost */
#define TB__FIT_MIN_DRAG 0.02f /* dragForce floor: a damped swing, never an undamped one */

typedef struct tb__fit_clip {
    int frames;
    float (*body)[16]; /* frames: the chain's anchor, world */
    float *target;     /* frames × K × 3: bone tips of the baked motion, world */
} tb__fit_clip;

typedef struct tb__fit {
    int K;
    float h;
    float *loc_t, *loc_s, *rest_q; /* K × 3, K × 3, K × 4 */
    float *rest_m;                 /* K × 16: TRS with the rest rotation */
    float *axis;                   /* K × 3: the child's local direction (bone axis) */
    float *rest_dir;               /* K × 3: axis through the rest rotation (parent space) */
    float *child_t;                /* K × 3: the child's local translation */
    float *base_q;                 /* K × 4: the settled rest (before tilting) */
    float *u, *v;                  /* K × 3: two local axes across the bone */
    double swing_w, phase; /* weights of the cost's swing and phase terms */
    int clip_count;
    tb__fit_clip clips[TB__FIT_MAX_CLIPS];
    int evals;
} tb__fit;

static void tb__trs(float m[16], const float *t, const float *r, const float *s)
{
    tb_transform x;
    memcpy(x.t, t, sizeof x.t);
    memcpy(x.r, r, sizeof x.r);
    memcpy(x.s, s, sizeof x.s);
    tb_transform_to_matrix(&x, m);
}

/* o = m · (p, w): a point (w = 1) or a direction (w = 0). */
static void tb__apply(float o[3], const float m[16], const float p[3], float w)
{
    vec3 in = {p[0], p[1], p[2]};
    glm_mat4_mulv3((vec4 *)m, in, w, o);
}

/* o: world point p relative to the origin of anchor matrix P (world axes):
 * the body's travel taken out, its turning kept (a tail that stays put in
 * the world while the hips turn under it does not swing to the eye). */
static void tb__to_body(float o[3], const float P[16], const float p[3])
{
    float d[3] = {p[0] - P[12], p[1] - P[13], p[2] - P[14]};
    memcpy(o, d, sizeof d);
}

/* The chain's bone tips (K × 3) for rotations q under anchor matrix P. */
static void tb__chain_tips(const tb__fit *F, const float P[16], const float *q, float *tips)
{
    float M[16], L[16];
    memcpy(M, P, sizeof M);
    for (int i = 0; i < F->K; i++) {
        tb__trs(L, F->loc_t + 3 * i, q + 4 * i, F->loc_s + 3 * i);
        tb_mat4_mul(M, M, L);
        tb__apply(tips + 3 * i, M, F->child_t + 3 * i, 1);
    }
}

/* The rest rotations for the tilts in jt: base ⊗ rotation(tilt0·u + tilt1·v). */
static void tb__set_rest(tb__fit *F, const tb__vrm_joint *jt)
{
    for (int i = 0; i < F->K; i++) {
        vec3 w;
        versor r;
        for (int k = 0; k < 3; k++)
            w[k] = jt[i].tilt[0] * F->u[3 * i + k] + jt[i].tilt[1] * F->v[3 * i + k];
        float a = glm_vec3_norm(w);
        if (a > 0)
            glm_quatv(r, a, w);
        else
            glm_quat_identity(r);
        glm_quat_mul(F->base_q + 4 * i, r, F->rest_q + 4 * i);
        tb_quat_normalize(F->rest_q + 4 * i);
        tb__trs(F->rest_m + 16 * i, F->loc_t + 3 * i, F->rest_q + 4 * i, F->loc_s + 3 * i);
        tb__apply(F->rest_dir + 3 * i, F->rest_m + 16 * i, F->axis + 3 * i, 0);
    }
}

/* One link i of the runtime model (a VRM spring joint) for one frame: its
 * tail point moved by inertia (1 − drag), stiffness towards the rest
 * direction and gravity, kept at its length (stale: the tips at the frame's
 * start); q[i] turned to point at it; Pc (the parent's world matrix) on to
 * the link's. */
static void tb__sim_link(const tb__fit *F, const tb__vrm_joint *jt, int i, float *q, float *cu, float *pv,
                         const float *stale, float Pc[16])
{
    float head[3], ax[3], nx[3], M[16], L[16];
    tb__trs(L, F->loc_t + 3 * i, q + 4 * i, F->loc_s + 3 * i);
    tb_mat4_mul(M, Pc, L);
    head[0] = M[12], head[1] = M[13], head[2] = M[14];
    float dl[3] = {stale[0] - head[0], stale[1] - head[1], stale[2] - head[2]};
    float len = sqrtf(dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2]);
    tb__apply(ax, Pc, F->rest_dir + 3 * i, 0);
    glm_vec3_normalize(ax);
    float keep = 1.0f - jt[i].drag, sh = jt[i].stiffness * F->h, gh = jt[i].gravity * F->h;
    for (int k = 0; k < 3; k++)
        nx[k] = cu[k] + (cu[k] - pv[k]) * keep + ax[k] * sh;
    nx[1] -= gh;
    float d[3] = {nx[0] - head[0], nx[1] - head[1], nx[2] - head[2]};
    float n = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (n > 0)
        for (int k = 0; k < 3; k++)
            nx[k] = head[k] + d[k] * len / n;
    memcpy(pv, cu, 3 * sizeof *cu);
    memcpy(cu, nx, 3 * sizeof *cu);
    /* the rotation from the rest that points the bone at next */
    float R[16];
    vec3 v;
    versor dq;
    tb_mat4_mul(R, Pc, F->rest_m + 16 * i);
    glm_mat4_inv((vec4 *)R, (vec4 *)R);
    tb__apply(v, R, nx, 1);
    glm_vec3_normalize(v);
    glm_quat_from_vecs(F->axis + 3 * i, v, dq);
    glm_quat_mul(F->rest_q + 4 * i, dq, q + 4 * i);
    tb__trs(L, F->loc_t + 3 * i, q + 4 * i, F->loc_s + 3 * i);
    tb_mat4_mul(Pc, Pc, L);
}

/* Plays the runtime model over every clip; returns the summed squared tip
 * distance of the last loop; dist/tip (may be NULL) get summed distances. */
static double tb__simulate(tb__fit *F, const tb__vrm_joint *jt, double *dist, double *tip, double *swing,
                           double *swing_baked)
{
    const int K = F->K;
    float q[64], cur[48], prev[48], stale[48], tips[48];
    double cost = 0, dsum = 0, tsum = 0, wsum = 0, wbsum = 0;
    /* per tip and axis over the recorded loop: Σx, Σx², Σy, Σy², Σxy (x model, y baked) */
    double mom[48][5];
    F->evals++;
    tb__set_rest(F, jt);
    for (int c = 0; c < F->clip_count; c++) {
        const tb__fit_clip *cl = &F->clips[c];
        double clip_cost = 0;
        memset(mom, 0, sizeof mom);
        memcpy(q, F->rest_q, (size_t)K * 4 * sizeof *q);
        tb__chain_tips(F, cl->body[0], q, cur);
        memcpy(prev, cur, (size_t)K * 3 * sizeof *cur);
        for (int loop = 0; loop < TB__FIT_LOOPS; loop++) {
            for (int f = 0; f < cl->frames; f++) {
                const float *P = cl->body[f];
                tb__chain_tips(F, P, q, stale);
                float Pc[16];
                memcpy(Pc, P, sizeof Pc);
                for (int i = 0; i < K; i++)
                    tb__sim_link(F, jt, i, q, cur + 3 * i, prev + 3 * i, stale + 3 * i, Pc);
                if (loop == TB__FIT_LOOPS - 1) {
                    tb__chain_tips(F, P, q, tips);
                    const float *tg = cl->target + (size_t)f * (size_t)K * 3;
                    for (int i = 0; i < K; i++) {
                        double dx = tips[3 * i] - tg[3 * i], dy = tips[3 * i + 1] - tg[3 * i + 1],
                               dz = tips[3 * i + 2] - tg[3 * i + 2];
                        double d2 = dx * dx + dy * dy + dz * dz;
                        /* the statistics relative to the anchor: the tail's swing, not the body's travel */
                        float xl[3], yl[3];
                        tb__to_body(xl, P, tips + 3 * i);
                        tb__to_body(yl, P, tg + 3 * i);
                        for (int k = 0; k < 3; k++) {
                            double xm = xl[k], yb = yl[k], *mo = mom[3 * i + k];
                            mo[0] += xm, mo[1] += xm * xm, mo[2] += yb, mo[3] += yb * yb, mo[4] += xm * yb;
                        }
                        dsum += sqrt(d2);
                        if (i == K - 1)
                            tsum += sqrt(d2);
                    }
                }
            }
        }
        /* per tip and axis: the mean squared distance (x − y)² over the loop is
         * (μx − μy)² + (σx − σy)² + 2(σx σy − cov): where, how far it swings,
         * and the phase. The last term alone prefers a still tail to a swing
         * out of phase, so it counts by TB__FIT_PHASE only, and the swing by
         * TB__FIT_SWING (docs/vrm.md). */
        const double nf = cl->frames;
        double sw = 0, swb = 0;
        for (int j = 0; j < 3 * K; j++) {
            const double *mo = mom[j];
            double mx = mo[0] / nf, my = mo[2] / nf;
            double vx = fmax(mo[1] / nf - mx * mx, 0), vy = fmax(mo[3] / nf - my * my, 0), cxy = mo[4] / nf - mx * my;
            double sx = sqrt(vx), sy = sqrt(vy);
            clip_cost += (mx - my) * (mx - my) + F->swing_w * (sx - sy) * (sx - sy) + F->phase * 2 * (sx * sy - cxy);
            if (j >= 3 * (K - 1))
                sw += vx, swb += vy;
        }
        wsum += sqrt(sw), wbsum += sqrt(swb);
        cost += clip_cost; /* every clip counts the same */
    }
    if (dist)
        *dist = dsum;
    if (tip)
        *tip = tsum;
    if (swing)
        *swing = wsum / F->clip_count;
    if (swing_baked)
        *swing_baked = wbsum / F->clip_count;
    return cost;
}

/* Our solver over one clip as bake runs it (warm-up passes from rest, then
 * one recorded loop at the bake rate), and the runtime frames of one loop:
 * the anchor's world matrix and the chain's tips with the keys interpolated. */
static tb_result tb__record(tb__fit *F, const tb_doc *doc, const tb_model *m, tb_spring_animator *a,
                            const tb_bake_desc *bd, const int *joints, int anchor, int anim, int budget,
                            tb_error *err)
{
    tb_clip *clip = NULL;
    tb_result r = tb_clip_load(&clip, doc, m, anim, NULL, err);
    if (r != TB_OK)
        return r;
    const float D = clip->duration_s;
    int frames = (int)lroundf(D / F->h);
    if (!(D > 0) || D > TB__FIT_MAX_CLIP_S || frames < 2 || frames > budget) {
        tb_clip_free(clip);
        return TB_OK;
    }
    const int K = F->K, n = m->skel.joint_count;
    const float dt = 1.0f / bd->fps;
    int steps = (int)ceilf(D * bd->fps - 1e-4f), keys = steps + 1;
    tb__fit_clip *cl = &F->clips[F->clip_count];
    tb_transform *loc = malloc((size_t)n * sizeof *loc);
    float(*w)[16] = malloc((size_t)n * sizeof *w);
    float *times = malloc((size_t)keys * sizeof *times);
    float *rot = malloc((size_t)keys * (size_t)K * 4 * sizeof *rot);
    float *start = malloc((size_t)K * 4 * sizeof *start);
    cl->body = malloc((size_t)frames * sizeof *cl->body);
    cl->target = malloc((size_t)frames * (size_t)K * 3 * sizeof *cl->target);
    if (!loc || !w || !times || !rot || !start || !cl->body || !cl->target) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        free(cl->body);
        free(cl->target);
        goto done;
    }
    for (int k = 0; k < keys; k++)
        times[k] = k == steps ? D : (float)k * dt;
    tb_spring_reset(a);
#define TB__STEP(t, d)                                                                                               \
    do {                                                                                                             \
        tb_clip_sample(clip, &m->skel, (t), loc);                                                                    \
        tb_local_to_world(&m->skel, loc, NULL, w);                                                                   \
        tb_spring_step(a, (d), (const float(*)[16])w, loc, w);                                                       \
    } while (0)
    TB__STEP(0.0f, dt);
    for (int p = 0; p < bd->max_passes; p++) {
        for (int i = 0; i < K; i++)
            memcpy(start + 4 * i, loc[joints[i]].r, 4 * sizeof(float));
        for (int k = 1; k < keys; k++)
            TB__STEP(times[k], times[k] - times[k - 1]);
        float worst = 0;
        for (int i = 0; i < K; i++) {
            float d = 0;
            for (int c = 0; c < 4; c++)
                d += start[4 * i + c] * loc[joints[i]].r[c];
            float ang = 2.0f * acosf(fminf(1.0f, fabsf(d)));
            worst = fmaxf(worst, ang);
        }
        if (worst < bd->loop_tolerance_rad)
            break;
    }
    for (int i = 0; i < K; i++)
        memcpy(rot + 4 * i, loc[joints[i]].r, 4 * sizeof(float));
    for (int k = 1; k < keys; k++) {
        TB__STEP(times[k], times[k] - times[k - 1]);
        for (int i = 0; i < K; i++)
            memcpy(rot + ((size_t)k * (size_t)K + (size_t)i) * 4, loc[joints[i]].r, 4 * sizeof(float));
    }
#undef TB__STEP
    /* the runtime's frames of one loop: f·h, wrapped like a looping player */
    for (int f = 0; f < frames; f++) {
        float t = fmodf((float)f * F->h, D);
        int k = (int)floorf(t / dt);
        if (k > keys - 2)
            k = keys - 2;
        if (k < 0)
            k = 0;
        float span = times[k + 1] - times[k], u = span > 0 ? (t - times[k]) / span : 0;
        u = u < 0 ? 0 : u > 1 ? 1 : u;
        tb_clip_sample(clip, &m->skel, t, loc);
        for (int i = 0; i < K; i++)
            tb_quat_slerp(loc[joints[i]].r, rot + ((size_t)k * (size_t)K + (size_t)i) * 4,
                          rot + ((size_t)(k + 1) * (size_t)K + (size_t)i) * 4, u);
        tb_local_to_world(&m->skel, loc, NULL, w);
        memcpy(cl->body[f], w[anchor], sizeof cl->body[f]);
        for (int i = 0; i < K; i++) {
            int child = i + 1 < K ? joints[i + 1] : joints[K];
            memcpy(cl->target + ((size_t)f * (size_t)K + (size_t)i) * 3, w[child] + 12, 3 * sizeof(float));
        }
    }
    cl->frames = frames;
    F->clip_count++;
done:
    free(loc);
    free(w);
    free(times);
    free(rot);
    free(start);
    tb_clip_free(clip);
    return r;
}

#define TB__NP 5 /* parameters per joint */
static void tb__clamp(float *x, int p)
{
    switch (p % TB__NP) {
    case 0: *x = fminf(fmaxf(*x, -12.0f), 8.0f); break; /* ln stiffness */
    case 1: *x = fminf(fmaxf(*x, TB__FIT_MIN_DRAG), 0.95f); break; /* dragForce */
    case 2: *x = fmaxf(*x, 0.0f); break;                /* gravityPower */
    default: *x = fminf(fmaxf(*x, -0.6f), 0.6f); break; /* rest tilts, radians */
    }
}

static void tb__unpack(const float *x, int K, tb__vrm_joint *jt)
{
    for (int i = 0; i < K; i++) {
        jt[i].stiffness = expf(x[TB__NP * i]);
        jt[i].drag = x[TB__NP * i + 1];
        jt[i].gravity = x[TB__NP * i + 2];
        jt[i].tilt[0] = x[TB__NP * i + 3];
        jt[i].tilt[1] = x[TB__NP * i + 4];
    }
}

/* The fit's buffers and each joint's rest: offset, scale, the analytic
 * rotation, the child's offset, the bone axis and two axes square to it
 * (u: the local axis least along the bone, made perpendicular; v = ax × u). */
static float *tb__fit_setup(tb__fit *F, const tb_model *m, const int *joints, const float *rest_q)
{
    const int K = F->K;
    float *buf = calloc((size_t)K * (3 + 3 + 4 + 16 + 3 + 3 + 3 + 4 + 3 + 3), sizeof *buf);
    if (!buf)
        return NULL;
    F->loc_t = buf;
    F->loc_s = F->loc_t + 3 * K;
    F->rest_q = F->loc_s + 3 * K;
    F->rest_m = F->rest_q + 4 * K;
    F->axis = F->rest_m + 16 * K;
    F->rest_dir = F->axis + 3 * K;
    F->child_t = F->rest_dir + 3 * K;
    F->base_q = F->child_t + 3 * K;
    F->u = F->base_q + 4 * K;
    F->v = F->u + 3 * K;
    for (int i = 0; i < K; i++) {
        const tb_transform *x = &m->skel.rest_local[joints[i]];
        memcpy(F->loc_t + 3 * i, x->t, 3 * sizeof(float));
        memcpy(F->loc_s + 3 * i, x->s, 3 * sizeof(float));
        memcpy(F->base_q + 4 * i, rest_q + 4 * i, 4 * sizeof(float));
        memcpy(F->child_t + 3 * i, m->skel.rest_local[joints[i + 1]].t, 3 * sizeof(float));
        float *ax = F->axis + 3 * i, *u = F->u + 3 * i, *v = F->v + 3 * i;
        memcpy(ax, F->child_t + 3 * i, 3 * sizeof(float));
        glm_vec3_normalize(ax);
        int k0 = fabsf(ax[0]) < fabsf(ax[1]) ? (fabsf(ax[0]) < fabsf(ax[2]) ? 0 : 2) : (fabsf(ax[1]) < fabsf(ax[2]) ? 1 : 2);
        float e[3] = {0, 0, 0};
        e[k0] = 1;
        for (int k = 0; k < 3; k++)
            u[k] = e[k] - ax[k0] * ax[k];
        glm_vec3_normalize(u);
        glm_vec3_cross(ax, u, v);
    }
    return buf;
}

/* One start of the search: from joint (its stiffness × s_scale, drag ×
 * d_scale), coordinate steps that grow on a gain and shrink slowly, until
 * every step is below its floor or the evaluations reach cap. Leaves the
 * parameters in x; returns their cost. */
static double tb__fit_descend(tb__fit *F, const tb__vrm_joint *joint, float s_scale, float d_scale, float smean,
                              int cap, float *x)
{
    const int K = F->K, P = TB__NP * K;
    float step[TB__NP * 16], lo[TB__NP * 16];
    tb__vrm_joint jt[16];
    for (int i = 0; i < K; i++) {
        float *xi = x + TB__NP * i, *st = step + TB__NP * i, *l = lo + TB__NP * i;
        xi[0] = logf(fmaxf(joint[i].stiffness * s_scale, 1e-5f));
        xi[1] = joint[i].drag * d_scale;
        xi[2] = joint[i].gravity;
        xi[3] = joint[i].tilt[0];
        xi[4] = joint[i].tilt[1];
        st[0] = 0.5f, l[0] = 0.01f;
        st[1] = 0.1f, l[1] = 0.002f;
        st[2] = 0.5f * smean, l[2] = 0.002f * smean;
        st[3] = st[4] = 0.1f, l[3] = l[4] = 0.002f;
    }
    for (int p = 0; p < P; p++)
        tb__clamp(&x[p], p);
    tb__unpack(x, K, jt);
    double best = tb__simulate(F, jt, NULL, NULL, NULL, NULL);
    int moving = 1;
    while (moving && F->evals < cap) {
        moving = 0;
        for (int p = 0; p < P && F->evals < cap; p++) {
            if (step[p] < lo[p])
                continue;
            moving = 1;
            int better = 0;
            for (int sg = 1; sg >= -1 && !better; sg -= 2) {
                float keep = x[p];
                x[p] += (float)sg * step[p];
                tb__clamp(&x[p], p);
                if (x[p] != keep) {
                    tb__unpack(x, K, jt);
                    double c = tb__simulate(F, jt, NULL, NULL, NULL, NULL);
                    if (c < best) {
                        best = c;
                        better = 1;
                    }
                }
                if (!better)
                    x[p] = keep;
            }
            step[p] *= better ? 1.5f : 0.75f; /* a slow shrink: the cost is rugged (see docs/vrm.md) */
        }
    }
    return best;
}

/* The search over the recorded clips: the analytic start; its drag ×0.3;
 * its stiffness ×4 and drag ×0.3 (the search is local and the cost rugged:
 * the best end wins). The report's before and after; joint and rest_q get
 * the best. */
static void tb__fit_search(tb__fit *F, float *rest_q, float units, tb__vrm_joint *joint, tb__vrm_fit_report *rep)
{
    const int K = F->K;
    int frames = 0;
    for (int c = 0; c < F->clip_count; c++)
        frames += F->clips[c].frames;
    float x[TB__NP * 16], bx[TB__NP * 16];
    float smean = 0;
    for (int i = 0; i < K; i++)
        smean += joint[i].stiffness / (float)K;
    tb__vrm_joint jt[16];
    double dist, tip, sw, swb;
    tb__simulate(F, joint, &dist, &tip, &sw, &swb);
    rep->swing_before_m = (float)(sw / units);
    rep->swing_baked_m = (float)(swb / units);
    rep->before_m = (float)(dist / ((double)frames * K) / units);
    rep->tip_before_m = (float)(tip / frames / units);
    const int S = TB__FIT_STARTS;
    static const float s_scale[TB__FIT_STARTS] = {1, 1, 4}, d_scale[TB__FIT_STARTS] = {1, 0.3f, 0.3f};
    double gbest = HUGE_VAL;
    for (int st0 = 0; st0 < S; st0++) {
        const int cap = TB__FIT_MAX_EVALS * (st0 + 1) / S;
        double best = tb__fit_descend(F, joint, s_scale[st0], d_scale[st0], smean, cap, x);
        if (best < gbest) {
            gbest = best;
            memcpy(bx, x, sizeof x);
        }
    }
    memcpy(x, bx, sizeof x);
    tb__unpack(x, K, jt);
    tb__simulate(F, jt, &dist, &tip, &sw, NULL);
    rep->swing_after_m = (float)(sw / units);
    rep->after_m = (float)(dist / ((double)frames * K) / units);
    rep->tip_after_m = (float)(tip / frames / units);
    rep->clips = F->clip_count;
    rep->frames = frames;
    rep->evaluations = F->evals;
    memcpy(joint, jt, (size_t)K * sizeof *jt);
    tb__set_rest(F, jt);
    memcpy(rest_q, F->rest_q, (size_t)K * 4 * sizeof *rest_q);
}

tb_result tb__vrm_fit(const tb_doc *doc, const tb_model *m, tb_spring_animator *a, const tb_bake_desc *bd,
                      int chain, float *rest_q, float h, float units, tb__vrm_joint *joint,
                      tb__vrm_fit_report *rep, tb_error *err)
{
    memset(rep, 0, sizeof *rep);
    tb_spring_chain_info ci;
    tb_spring_get_chain_info(a, chain, &ci);
    const int K = ci.link_count;
    if (ci.end_joint < 0 || K < 1 || K > 16 || ci.anchor_joint < 0)
        return TB_OK;
    tb__fit F = {.K = K, .h = h, .swing_w = TB__FIT_SWING, .phase = TB__FIT_PHASE};
    int joints[17];
    for (int i = 0; i < K; i++) {
        tb_spring_link_state ls;
        tb_spring_get_link_state(a, chain, i, &ls);
        joints[i] = ls.joint;
    }
    joints[K] = ci.end_joint;
    float *buf = tb__fit_setup(&F, m, joints, rest_q);
    if (!buf)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb_result r = TB_OK;
    int budget = TB__FIT_MAX_FRAMES;
    size_t na = json_array_size(json_object_get(tb_doc_json((tb_doc *)doc), "animations"));
    for (size_t an = 0; an < na && F.clip_count < TB__FIT_MAX_CLIPS && r == TB_OK; an++) {
        int before = F.clip_count;
        r = tb__record(&F, doc, m, a, bd, joints, ci.anchor_joint, (int)an, budget, err);
        if (F.clip_count > before)
            budget -= F.clips[before].frames;
    }
    if (r == TB_OK && F.clip_count)
        tb__fit_search(&F, rest_q, units, joint, rep);
    for (int c = 0; c < F.clip_count; c++) {
        free(F.clips[c].body);
        free(F.clips[c].target);
    }
    free(buf);
    return r;
}
