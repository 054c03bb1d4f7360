/* Baking the simulated tail into keyframes (SPEC D "Bake"). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/tbmath.h"
#include "gltf/doc_internal.h"
#include "gltf/doc_json.h"
#include "passes/bake_internal.h"
#include "passes/pool_internal.h"
#include "tailbone/bake.h"
#include "tailbone/clip.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"
#include "tailbone/retarget.h"
#include "tailbone/tailchain.h"


tb_bake_desc tb_bake_desc_defaults(const tb_bake_desc *d)
{
    tb_bake_desc r = d ? *d : (tb_bake_desc){0};
    if (r.fps <= 0)
        r.fps = 30.0f;
    if (r.max_passes <= 0)
        r.max_passes = 24;
    if (r.loop_tolerance_rad <= 0)
        r.loop_tolerance_rad = 0.1f * TB_PI_F / 180.0f;
    if (r.settle_s <= 0)
        r.settle_s = 4.0f;
    return r;
}

tb_spring_desc tb_bake_spring_desc(const tb_model *m, const tb_bake_desc *desc, float *units_out, float *ground_out)
{
    tb_bake_desc d = tb_bake_desc_defaults(desc);
    /* H in world units, by the one world-scale rule (measure's too) */
    float scale = tb_model_world_scale(m);
    float h_world = m->height * (isfinite(scale) ? scale : 1.0f);
    /* A humanoid over 25 units tall is in centimetres, over 2500 in
     * millimetres (glTF says metres; real files do not always). */
    float units = d.world_units_per_m > 0 ? d.world_units_per_m : h_world > 2500 ? 1000.0f : h_world > 25 ? 100.0f : 1.0f;
    tb_spring_desc sd = tb_spring_desc_defaults(&d.spring);
    tb_spring_params *p = &sd.params;
    if (p->gravity_mps2 > 0)
        p->gravity_mps2 *= units;
    if (p->clearance_m > 0)
        p->clearance_m *= units;
    if (isfinite(sd.teleport_m))
        sd.teleport_m *= units;
    int given = 0;
    for (int k = 0; k < 3; k++)
        given |= sd.bind_up[k] != 0 || sd.bind_forward[k] != 0;
    if (!given) /* the caller named no axes: the character's own */
        tb_model_axes(m, sd.bind_up, sd.bind_forward);
    int has_feet = m->role_joint[TB_ROLE_LEFT_FOOT] >= 0 || m->role_joint[TB_ROLE_RIGHT_FOOT] >= 0;
    if (!d.ground_as_given && has_feet && p->ground_y_m == 0 && !p->ground_off) {
        /* SPEC B puts the ground at world y = 0; a humanoid whose soles are
         * elsewhere (origin at the hips) would have its tail pushed up. Only
         * a skeleton with feet says where its soles are. */
        tb_placement pl;
        if (tb_ground_placement(&pl, m, NULL, NULL) == TB_OK && isfinite(pl.body_min_y) &&
            fabsf(pl.body_min_y) > 0.02f * h_world)
            p->ground_y_m = pl.body_min_y;
    }
    if (units_out)
        *units_out = units;
    if (ground_out)
        *ground_out = p->ground_y_m;
    return sd;
}

void tb_bake_report_free(tb_bake_report *report)
{
    if (!report)
        return;
    free(report->clips);
    memset(report, 0, sizeof *report);
}

/* Everything one clip's simulation needs: tb_bake's own (the template: the
 * model, bones, tail flags, need) and one per clip run (tb__run_begin). */
typedef struct tb__sim {
    const tb_model *m;
    tb_spring_animator *anim;
    tb_transform *locals;
    float (*world)[16];
    int bone_count;
    int *bones;      /* skeleton joints keyed (Tail_1..K of every chain) */
    uint8_t *is_tail;
    float keep;      /* existing chains: share of the artist's keyed rotation kept */
    float *artist;   /* 4 per bone: the artist's keyed rotations this frame */
    const uint8_t *need; /* joints whose world matrix the step reads (tb__bake_need) */
    tb_channel *chan;    /* scratch of tb__pose: the clip's channels on those joints */
    int chan_cap;
} tb__sim;

/* tb_local_to_world for the joints in s->need only: the same operations for
 * each of them (a root's parent is the identity, as there), the others'
 * entries left as they were. */
static void tb__world_needed(const tb__sim *s)
{
    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    const tb_skeleton *sk = &s->m->skel;
    for (int i = 0; i < sk->joint_count; i++) {
        if (!s->need[i])
            continue;
        float local[16];
        tb_transform_to_matrix(&s->locals[i], local);
        int p = sk->parents[i];
        tb_mat4_mul(s->world[i], (p >= 0 && p < i) ? s->world[p] : identity, local);
    }
}

/* The clip with only its channels on the joints in s->need, in their order
 * (a later channel on a joint still overrides an earlier one): sampling it
 * gives those joints the locals the whole clip gives, and leaves the others
 * at the rest pose, which nothing the frame reads or writes depends on
 * (tb__bake_need). The clip itself when every joint is needed or the scratch
 * cannot be had. */
static const tb_clip *tb__needed_channels(tb__sim *s, const tb_clip *clip, tb_clip *view)
{
    if (!s->need || clip->channel_count <= 0)
        return clip;
    if (s->chan_cap < clip->channel_count) {
        tb_channel *c = realloc(s->chan, (size_t)clip->channel_count * sizeof *c);
        if (!c)
            return clip;
        s->chan = c;
        s->chan_cap = clip->channel_count;
    }
    const int jc = s->m->skel.joint_count;
    int n = 0;
    for (int i = 0; i < clip->channel_count; i++) {
        const tb_channel *ch = &clip->channels[i];
        if (ch->joint >= 0 && ch->joint < jc && s->need[ch->joint])
            s->chan[n++] = *ch;
    }
    *view = *clip;
    view->channels = s->chan;
    view->channel_count = n;
    return view;
}

static void tb__pose(tb__sim *s, const tb_clip *clip, float t)
{
    tb_clip view;
    tb_clip_sample(tb__needed_channels(s, clip, &view), &s->m->skel, t, s->locals);
    if (s->need)
        tb__world_needed(s);
    else
        tb_local_to_world(&s->m->skel, s->locals, NULL, s->world);
}

/* The joints whose world matrices tb_spring_step reads or writes: each
 * chain's anchor and its ancestors, and the tail from Tail_1 down with all
 * its descendants (spring.h: the anchors' and the tail's descendants'
 * entries). The limbs and the head move nothing the bake writes, so the
 * frame's world pass leaves them out. NULL when out of memory (then every
 * joint is posed). */
static uint8_t *tb__bake_need(const tb__sim *s, int chains)
{
    const tb_skeleton *sk = &s->m->skel;
    int n = sk->joint_count;
    uint8_t *need = calloc((size_t)(n > 0 ? n : 1), 1);
    if (!need)
        return NULL;
    for (int c = 0; c < chains; c++) {
        tb_spring_chain_info ci;
        tb_spring_get_chain_info(s->anim, c, &ci);
        if (ci.first_joint >= 0 && ci.first_joint < n)
            need[ci.first_joint] = 1;
    }
    for (int j = 0; j < n; j++) /* the tails' subtrees (parent-first order) */
        if (sk->parents[j] >= 0 && sk->parents[j] < j && need[sk->parents[j]])
            need[j] = 1;
    for (int c = 0; c < chains; c++) {
        tb_spring_chain_info ci;
        tb_spring_get_chain_info(s->anim, c, &ci);
        if (ci.anchor_joint >= 0 && ci.anchor_joint < n)
            need[ci.anchor_joint] = 1;
    }
    for (int j = n - 1; j >= 0; j--) /* and every ancestor of those */
        if (need[j] && sk->parents[j] >= 0 && sk->parents[j] < j)
            need[sk->parents[j]] = 1;
    return need;
}

static void tb__tail_rotations(const tb__sim *s, float *dst)
{
    for (int b = 0; b < s->bone_count; b++) {
        if (s->keep > 0)
            tb__slerp(s->locals[s->bones[b]].r, s->artist + b * 4, s->keep, dst + b * 4);
        else
            memcpy(dst + b * 4, s->locals[s->bones[b]].r, 4 * sizeof(float));
    }
}

/* Existing chains: the artist's rotation channels on the chain bones go
 * (the written keys replace or blend them); samplers stay, unused. */
static void tb__drop_tail_rotations(tb_doc *doc, const tb__sim *s, int a)
{
    json_t *anim = json_array_get(json_object_get(tb_doc_json(doc), "animations"), (size_t)a);
    json_t *channels = json_object_get(anim, "channels");
    for (size_t c = json_array_size(channels); c-- > 0;) {
        json_t *tg = json_object_get(json_array_get(channels, c), "target");
        json_t *node = json_object_get(tg, "node");
        const char *path = json_string_value(json_object_get(tg, "path"));
        if (!json_is_integer(node) || !path || strcmp(path, "rotation"))
            continue;
        json_int_t nd = json_integer_value(node);
        if (nd < 0 || nd >= tb_doc_gltf(doc)->node_count)
            continue;
        int j = s->m->joint_of_node[nd];
        if (j >= 0 && s->is_tail[j])
            json_array_remove(channels, c);
    }
}

static float tb__max_angle(const tb__sim *s, const float *a, const float *b)
{
    float worst = 0;
    for (int k = 0; k < s->bone_count; k++) {
        float ang = tb__quat_angle(a + k * 4, b + k * 4);
        if (ang > worst)
            worst = ang;
    }
    return worst;
}

/* Largest rotation between two poses over the body (tail bones excluded). */
static float tb__pose_angle(const tb__sim *s, const tb_transform *a, const tb_transform *b)
{
    float worst = 0;
    for (int j = 0; j < s->m->skel.joint_count; j++) {
        if (s->is_tail[j])
            continue;
        float ang = tb__quat_angle(a[j].r, b[j].r);
        if (ang > worst)
            worst = ang;
    }
    return worst;
}

/* Key interval of the clip's first channel (the source's frame time). */
static float tb__key_interval(const tb_clip *clip)
{
    for (int c = 0; c < clip->channel_count; c++) {
        const tb_channel *ch = &clip->channels[c];
        if (ch->key_count >= 2)
            return (ch->times[ch->key_count - 1] - ch->times[0]) / (float)(ch->key_count - 1);
    }
    return 0;
}

/* Does the clip loop, and how? TB__CLOSED: its last pose equals its first
 * (rotations within 2°, hips height within 2% of H; horizontal travel is
 * root motion and allowed). TB__GAP: the last key is one frame before the
 * loop start, as many exporters write cycles — the pose difference between
 * the end and the start is no more than one and a half frames of the
 * clip's own motion there. *gap_s receives that frame time. */
enum { TB__NOT_LOOPING = 0, TB__CLOSED, TB__GAP };
static int tb__loop_kind(tb__sim *s, const tb_clip *clip, tb_transform *tmp, float (*tmp_world)[16],
                         float *gap_s)
{
    const float D = clip->duration_s, deg = TB_PI_F / 180.0f;
    *gap_s = 0;
    if (D <= 0)
        return TB__NOT_LOOPING;
    int hips = s->m->role_joint[TB_ROLE_HIPS];
    tb_clip_sample(clip, &s->m->skel, 0, tmp);
    tb_clip_sample(clip, &s->m->skel, D, s->locals);
    if (hips >= 0) {
        tb_local_to_world(&s->m->skel, tmp, NULL, tmp_world);
        tb_local_to_world(&s->m->skel, s->locals, NULL, s->world);
        if (fabsf(tmp_world[hips][13] - s->world[hips][13]) > 0.02f * s->m->height)
            return TB__NOT_LOOPING;
    }
    float seam = tb__pose_angle(s, tmp, s->locals);
    if (seam <= 2.0f * deg)
        return TB__CLOSED;
    float step = tb__key_interval(clip);
    if (step <= 0 || step >= 0.25f * D)
        return TB__NOT_LOOPING;
    /* motion over one frame at each end of the clip */
    tb_clip_sample(clip, &s->m->skel, D - step, tmp);
    float end_motion = tb__pose_angle(s, tmp, s->locals);
    tb_clip_sample(clip, &s->m->skel, 0, tmp);
    tb_clip_sample(clip, &s->m->skel, step, s->locals);
    float start_motion = tb__pose_angle(s, tmp, s->locals);
    float frame = end_motion > start_motion ? end_motion : start_motion;
    if (seam <= 2.0f * deg + 1.5f * frame) {
        *gap_s = step;
        return TB__GAP;
    }
    return TB__NOT_LOOPING;
}

static int tb__clip_has_tail_keys(const tb_doc *doc, const tb__sim *s, int a)
{
    const tb_gltf_animation *an = &tb_doc_gltf(doc)->animations[a];
    for (int c = 0; c < an->channel_count; c++) {
        int node = an->channels[c].node;
        if (node < 0)
            continue;
        int j = s->m->joint_of_node[node];
        if (j >= 0 && s->is_tail[j])
            return 1;
    }
    return 0;
}

/* Names match as everywhere (tb_clip_find): exact, case-insensitive, after
 * the last '|', or a unique substring. */
static int tb__selected(const tb_bake_desc *d, const tb_doc *doc, int a)
{
    if (!d->only)
        return 1;
    for (const char *const *p = d->only; *p; p++)
        if (tb_clip_find(doc, *p) == a)
            return 1;
    return 0;
}

/* Bone b's keys as the file holds them: its rotation at each key, each
 * kept on the same hemisphere as the one before (LINEAR slerps then never
 * take the long way round); q holds keys * 4 floats. */
static void tb__bone_keys(const tb__sim *s, const float *rot, int keys, int b, float *q)
{
    for (int k = 0; k < keys; k++) {
        memcpy(q + k * 4, rot + ((size_t)k * (size_t)s->bone_count + (size_t)b) * 4, 4 * sizeof(float));
        if (k > 0) {
            const float *p = q + (k - 1) * 4;
            float *c = q + k * 4;
            if (p[0] * c[0] + p[1] * c[1] + p[2] * c[2] + p[3] * c[3] < 0)
                for (int i = 0; i < 4; i++)
                    c[i] = -c[i];
        }
    }
}

/* Appends the keys as one sampler input and a rotation channel per bone. */
static tb_result tb__write_keys(tb_doc *doc, const tb__sim *s, int a, const float *times, int keys,
                                const float *rot, tb_error *err)
{
    int in = tb_doc_add_accessor(doc, times, (size_t)keys, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
    if (in < 0)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    json_t *anim = json_array_get(json_object_get(tb_doc_json(doc), "animations"), (size_t)a);
    json_t *samplers = json_object_get(anim, "samplers"), *channels = json_object_get(anim, "channels");
    float *q = malloc((size_t)keys * 4 * sizeof *q);
    if (!q)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int b = 0; b < s->bone_count; b++) {
        tb__bone_keys(s, rot, keys, b, q);
        int out = tb_doc_add_accessor(doc, q, (size_t)keys, TB_COMPONENT_FLOAT, "VEC4", 0, 0);
        if (out < 0) {
            free(q);
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        }
        json_array_append_new(samplers, json_pack("{s:i,s:i,s:s}", "input", in, "output", out,
                                                  "interpolation", "LINEAR"));
        int node = s->m->node_of_joint[s->bones[b]];
        json_array_append_new(channels,
                              json_pack("{s:i,s:{s:i,s:s}}", "sampler", (int)json_array_size(samplers) - 1,
                                        "target", "node", node, "path", "rotation"));
    }
    free(q);
    return TB_OK;
}

/* A loop whose warm-up settled onto a cycle of several passes ends where
 * the cycle's next branch starts, not where it began: played on repeat it
 * would jump by the branches' difference at the seam. That difference is
 * spread over the loop instead, each bone's key at time t turned by
 * slerp(I, last⁻¹ first, t / span) in its own frame, so the last key (or
 * the wrapped state `wrapped`, at t = span, which is turned too) is the
 * first; key 0 is untouched. Returns the seam spread (the largest angle
 * over the bones). */
static float tb__spread_seam(const tb__sim *s, float *rot, const float *times, int keys, float *wrapped, float span)
{
    size_t stride = (size_t)s->bone_count * 4;
    float *last = wrapped ? wrapped : rot + (size_t)(keys - 1) * stride;
    float seam = tb__max_angle(s, rot, last);
    static const float identity[4] = {0, 0, 0, 1};
    for (int b = 0; b < s->bone_count; b++) {
        float inv[4], delta[4], part[4];
        tb__qconj(inv, last + b * 4);
        tb__qmul(delta, inv, rot + b * 4);
        for (int k = 1; k <= keys; k++) {
            if (k == keys && !wrapped)
                break;
            float *q = k == keys ? wrapped + b * 4 : rot + (size_t)k * stride + b * 4;
            tb__slerp(identity, delta, k == keys ? 1.0f : times[k] / span, part);
            tb__qmul(q, q, part);
            tb_quat_normalize(q);
        }
    }
    return seam;
}

/* Longest cycle the warm-up recognises: the loop-start state repeating
 * every n passes, n <= this. */
enum { TB__MAX_PERIOD = 4 };

/* One clip's bake (SPEC D) as a sequence of frames, so that the clips of a
 * group are stepped together (tb__bake_group: one batch step a frame, the
 * clips in lanes). Each clip has its own solver and scratch; tb__run_want
 * names the next frame (time, step), tb__run_after reads the tail after it.
 * The phases, in order:
 * - FIRST: the warm-up starts from rest at the first frame;
 * - WARM (a looping clip): whole passes, frames 1 .. keys - 1 and the wrap
 *   step `wrap` of a clip that stops a frame before its start, until the
 *   state at the loop start repeats within d->loop_tolerance_rad, at most
 *   d->max_passes. A chain that the ground or its limits switch between
 *   branches may never repeat pass after pass, yet settle onto a cycle of n
 *   passes (the synthetic hang_fur_hips in Crouch: its tip, on the ground
 *   past the bend limit, alternates between two loops 0.58 deg apart,
 *   exactly, from the 7th pass on): the passes stop when the state repeats
 *   that of n passes before (2 <= n <= TB__MAX_PERIOD; the cold start never
 *   counts). `prev` holds TB__MAX_PERIOD + 1 states: pass p's goes to
 *   p % (TB__MAX_PERIOD + 1); rep->period receives n (1: the state repeats
 *   every pass; 0: it never repeated);
 * - SETTLE (any other clip): the first frame again until the tail stops
 *   moving, at most d->settle_s;
 * - RECORD: the keys, frames 1 .. keys - 1;
 * - GAP (a clip that stops a frame before its start): the wrap back to the
 *   first frame, its state in `cur`. */
enum { TB__R_FIRST, TB__R_WARM, TB__R_SETTLE, TB__R_RECORD, TB__R_GAP, TB__R_DONE };

typedef struct tb__run {
    tb__sim s;                  /* its own solver and scratch */
    tb_transform *tmp;          /* tb__loop_kind's scratch */
    float (*tmp_world)[16];
    tb_clip *clip;
    tb_bake_clip *rep;
    int kind, keys, phase;
    int p, k, limit;            /* pass (or settle frame), key, settle frames */
    float dt, gap, wrap;        /* frame step; the GAP wrap step; WARM's (0: none) */
    float *times, *rot, *prev, *cur;
    float *xs;                  /* the solver's state at the last 3 pass ends (tb__run_jump) */
    int xn, xcount;             /* states kept since the start or the last jump; floats in one */
} tb__run;

/* The next frame's clip time and step. */
static void tb__run_want(const tb__run *u, float *t, float *dt)
{
    *t = 0;
    *dt = u->dt;
    if ((u->phase == TB__R_WARM || u->phase == TB__R_RECORD) && u->k < u->keys) {
        *t = u->times[u->k];
        *dt = u->times[u->k] - u->times[u->k - 1];
    } else if (u->phase == TB__R_WARM) {
        *dt = u->wrap;
    } else if (u->phase == TB__R_GAP) {
        *dt = u->gap;
    }
}

static void tb__run_record(tb__run *u)
{
    tb__tail_rotations(&u->s, u->rot);
    u->phase = TB__R_RECORD;
    u->k = 1;
}

/* The warm-up's jump. From one pass to the next the loop-start state x of
 * a looping clip moves toward the loop's own state x* (the fixed point of
 * a pass), late in the warm-up geometrically: x_{p+1} - x* ≈ ρ (x_p - x*),
 * the slowest mode of the chain left (the Wolf's tail under the Soldier's
 * Idle: ρ ≈ 0.88 a 2 s pass, the coupling's slow drift). When the last
 * three pass ends show it — two steps d0 = x_{p-1} - x_{p-2}, d1 = x_p -
 * x_{p-1}, d1 ≈ ρ d0 within a third of |d1| (|d1 - ρ d0|² <= |d1|² / 10),
 * ρ = d0·d1 / |d0|² in (0, 0.95] — the state is
 * put where that sequence ends, x_p + d1 ρ / (1 - ρ) (Aitken's Δ²), and the
 * passes go on from there: the loop-start test (tb__run_pass_end) still
 * decides when the loop closes, on passes simulated after the jump (the
 * first one after it compares with a state before it, so it takes two):
 * no jump, then, when this pass's change of the tail's rotations times ρ
 * is already under the tolerance (the next pass closes the loop as it
 * is). The sums run in double over the state in the solver's order, so
 * the jump is the same at any thread count. Returns 1 when it jumped. */
static int tb__run_jump(tb__run *u, float change, float tolerance)
{
    tb_spring_animator *a = u->s.anim;
    const int n = u->xcount;
    if (!n || !u->xs)
        return 0;
    float *x0 = u->xs, *x1 = u->xs + n, *x2 = u->xs + 2 * (size_t)n;
    memmove(x0, x1, 2 * (size_t)n * sizeof *x0); /* x2 the newest */
    tb_spring_state_get(a, x2);
    if (++u->xn < 3)
        return 0;
    double d00 = 0, d01 = 0, d11 = 0;
    for (int k = 0; k < n; k++) {
        const double e0 = (double)x1[k] - x0[k], e1 = (double)x2[k] - x1[k];
        d00 += e0 * e0;
        d01 += e0 * e1;
        d11 += e1 * e1;
    }
    if (!(d00 > 0) || !(d11 > 0))
        return 0;
    const double rho = d01 / d00;
    const double off = d11 - 2 * rho * d01 + rho * rho * d00; /* |d1 - ρ d0|² */
    if (!(rho > 0 && rho <= 0.95 && off <= 0.1 * d11))
        return 0;
    if (rho * change < tolerance)
        return 0; /* the next pass closes the loop as it is; after a jump, two passes would */
    const double g = rho / (1 - rho);
    for (int k = 0; k < n; k++)
        x0[k] = (float)(x2[k] + g * ((double)x2[k] - x1[k]));
    tb_spring_state_set(a, x0);
    u->xn = 0;
    u->rep->warmup_jumps++;
    return 1;
}

/* The end of warm-up pass u->p: the loop-start state against the last
 * passes'; on to the record when it repeats or the passes run out. */
static void tb__run_pass_end(tb__run *u, const tb_bake_desc *d)
{
    tb__sim *s = &u->s;
    size_t pose = (size_t)s->bone_count * 4;
    const int p = u->p;
    tb__tail_rotations(s, u->cur);
    float change = 0; /* since the last pass end: the jump's test reads it too */
    for (int n = 1; n <= TB__MAX_PERIOD && (n == 1 || p - n >= 1); n++) {
        const float a = tb__max_angle(s, u->prev + (size_t)((p - n) % (TB__MAX_PERIOD + 1)) * pose, u->cur);
        if (n == 1)
            change = a;
        if (a < d->loop_tolerance_rad) {
            u->rep->period = n;
            break;
        }
    }
    if (u->rep->period || p >= d->max_passes) {
        u->rep->passes = p;
        tb__run_record(u);
        return;
    }
    memcpy(u->prev + (size_t)(p % (TB__MAX_PERIOD + 1)) * pose, u->cur, pose * sizeof *u->cur);
    tb__run_jump(u, change, d->loop_tolerance_rad);
    u->p = p + 1;
    u->k = 1;
}

/* After a frame: the tail read where the phase needs it, then on through
 * the phases until the next frame (or the end). */
static void tb__run_after(tb__run *u, const tb_bake_desc *d)
{
    tb__sim *s = &u->s;
    switch (u->phase) {
    case TB__R_FIRST:
        tb__tail_rotations(s, u->prev);
        u->p = u->k = 1;
        u->rep->period = 0;
        u->phase = u->kind != TB__NOT_LOOPING ? TB__R_WARM : TB__R_SETTLE;
        u->limit = (int)ceilf(d->settle_s * d->fps);
        if (u->phase == TB__R_SETTLE && u->limit < 1) {
            u->rep->passes = u->limit;
            tb__run_record(u);
        }
        break;
    case TB__R_WARM:
        u->k++;
        break;
    case TB__R_SETTLE: {
        tb__tail_rotations(s, u->cur);
        float change = tb__max_angle(s, u->prev, u->cur);
        memcpy(u->prev, u->cur, (size_t)s->bone_count * 4 * sizeof *u->cur);
        if (change < 0.01f * TB_PI_F / 180.0f || u->p >= u->limit) {
            u->rep->passes = u->p;
            tb__run_record(u);
        } else {
            u->p++;
        }
        break;
    }
    case TB__R_RECORD:
        tb__tail_rotations(s, u->rot + (size_t)u->k * (size_t)s->bone_count * 4);
        u->k++;
        break;
    case TB__R_GAP:
        tb__tail_rotations(s, u->cur);
        u->phase = TB__R_DONE;
        return;
    default:
        return;
    }
    for (;;) {
        if (u->phase == TB__R_WARM && u->k >= u->keys + (u->wrap > 0)) {
            tb__run_pass_end(u, d);
            continue;
        }
        if (u->phase == TB__R_RECORD && u->k >= u->keys)
            u->phase = u->kind == TB__GAP ? TB__R_GAP : TB__R_DONE;
        return;
    }
}

/* One clip's keys, simulated; written to the doc afterwards, in clip order. */
typedef struct tb__baked {
    float *times, *rot;
    int keys;
    tb_result r;
    tb_error err;
} tb__baked;

/* Clip a's run: its solver and scratch (from the template s0), the clip,
 * its loop kind, the key times; the solver at rest, about to take the first
 * frame. Reads the doc only, so the groups run in parallel. */
static tb_result tb__run_begin(tb__run *u, const tb__sim *s0, const tb_spring_desc *sd, const tb_doc *doc,
                               const tb_bake_desc *d, int a, tb_error *err)
{
    const int n = s0->m->skel.joint_count;
    tb__sim *s = &u->s;
    *s = *s0;
    s->anim = NULL;
    s->chan = NULL;
    s->chan_cap = 0;
    s->locals = malloc((size_t)n * sizeof *s->locals);
    s->world = malloc((size_t)n * sizeof *s->world);
    s->artist = s0->artist ? malloc((size_t)n * 4 * sizeof *s->artist) : NULL;
    u->tmp = malloc((size_t)n * sizeof *u->tmp);
    u->tmp_world = malloc((size_t)n * sizeof *u->tmp_world);
    if (!s->locals || !s->world || (s0->artist && !s->artist) || !u->tmp || !u->tmp_world)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb_result r = tb_spring_create(&s->anim, &s->m->skel, sd, err);
    if (r == TB_OK)
        r = tb_clip_load(&u->clip, doc, s->m, a, NULL, err);
    if (r != TB_OK)
        return r;
    const float D = u->clip->duration_s;
    u->rep->duration_s = D;
    u->kind = tb__loop_kind(s, u->clip, u->tmp, u->tmp_world, &u->gap);
    if (d->loop == TB_LOOP_NEVER)
        u->kind = TB__NOT_LOOPING;
    else if (d->loop == TB_LOOP_ALWAYS && u->kind == TB__NOT_LOOPING && D > 0)
        u->kind = TB__CLOSED;
    u->rep->looping = u->kind != TB__NOT_LOOPING;
    u->rep->wraps = u->kind == TB__GAP;
    u->wrap = u->kind == TB__GAP ? u->gap : 0;
    u->dt = 1.0f / d->fps;
    int frames = D > 0 ? (int)ceilf(D * d->fps - 1e-4f) : 0; /* steps from 0 to D */
    u->keys = frames + 1;
    u->times = malloc((size_t)u->keys * sizeof *u->times);
    u->rot = malloc((size_t)u->keys * (size_t)s->bone_count * 4 * sizeof *u->rot);
    u->prev = malloc((TB__MAX_PERIOD + 1) * (size_t)s->bone_count * 4 * sizeof *u->prev); /* the warm-up's past */
    u->cur = malloc((size_t)s->bone_count * 4 * sizeof *u->cur);
    u->xcount = u->kind != TB__NOT_LOOPING && !d->no_warmup_jump ? tb_spring_state_count(s->anim) : 0;
    u->xs = u->xcount ? malloc(3 * (size_t)u->xcount * sizeof *u->xs) : NULL;
    if (!u->times || !u->rot || !u->prev || !u->cur || (u->xcount && !u->xs))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int k = 0; k < u->keys; k++)
        u->times[k] = k == frames ? D : (float)k * u->dt;
    tb_spring_reset(s->anim);
    u->phase = TB__R_FIRST;
    return TB_OK;
}

/* The recorded keys: a cycle's seam spread, closure and swing reported,
 * the keys handed to out. */
static void tb__run_finish(tb__run *u, tb__baked *out)
{
    const tb__sim *s = &u->s;
    tb_bake_clip *rep = u->rep;
    const int keys = u->keys, gapped = u->kind == TB__GAP;
    const size_t stride = (size_t)s->bone_count * 4;
    rep->keys = keys;
    if (rep->looping && rep->period > 1) /* a cycle of several passes: its seam spread over the loop */
        rep->seam_spread_rad = tb__spread_seam(s, u->rot, u->times, keys, gapped ? u->cur : NULL,
                                              rep->duration_s + (gapped ? u->gap : 0));
    if (gapped)
        rep->closure_rad = tb__max_angle(s, u->rot, u->cur);
    else
        rep->closure_rad = tb__max_angle(s, u->rot, u->rot + (size_t)(keys - 1) * stride);
    rep->swing_rad = 0;
    for (int k = 1; k < keys; k++) {
        float ang = tb__max_angle(s, u->rot, u->rot + (size_t)k * stride);
        if (ang > rep->swing_rad)
            rep->swing_rad = ang;
    }
    out->times = u->times;
    out->rot = u->rot;
    out->keys = keys;
    u->times = u->rot = NULL;
}

static void tb__run_free(tb__run *u)
{
    tb_spring_destroy(u->s.anim);
    free(u->s.locals);
    free(u->s.world);
    free(u->s.artist);
    free(u->s.chan);
    free(u->tmp);
    free(u->tmp_world);
    tb_clip_free(u->clip);
    free(u->times);
    free(u->rot);
    free(u->prev);
    free(u->xs);
    free(u->cur);
}

/* The clip as tb_clip_load reads it back once u's keys are written
 * (tb__bake_all: tb__drop_tail_rotations, then tb__write_keys): the run's
 * clip without the tail bones' rotation channels when the artist's are
 * replaced, then a LINEAR rotation channel for each keyed bone, in order,
 * on the baked times, with the values the file holds (tb__bone_keys). Its
 * other channels and times are u's clip's and times's; NULL when out of
 * memory. */
static tb_clip *tb__keyed_clip(const tb__run *u, const float *times, const float *rot, int keys)
{
    const tb__sim *s = &u->s;
    const tb_clip *c = u->clip;
    const size_t head = (sizeof(tb_clip) + 15u) & ~(size_t)15u;
    const size_t chans = ((size_t)(c->channel_count + s->bone_count) * sizeof(tb_channel) + 15u) & ~(size_t)15u;
    uint8_t *block = malloc(head + chans + (size_t)s->bone_count * (size_t)keys * 4 * sizeof(float));
    if (!block)
        return NULL;
    tb_clip *out = (tb_clip *)block;
    tb_channel *ch = (tb_channel *)(block + head);
    float *values = (float *)(block + head + chans);
    int n = 0;
    for (int i = 0; i < c->channel_count; i++)
        if (!(s->artist && c->channels[i].path == TB_PATH_ROTATION && s->is_tail[c->channels[i].joint]))
            ch[n++] = c->channels[i];
    for (int b = 0; b < s->bone_count; b++) {
        float *q = values + (size_t)b * (size_t)keys * 4;
        tb__bone_keys(s, rot, keys, b, q);
        ch[n++] = (tb_channel){s->bones[b], TB_PATH_ROTATION, TB_INTERP_LINEAR, keys, times, q};
    }
    out->name = c->name;
    out->duration_s = keys > 0 && times[keys - 1] > c->duration_s ? times[keys - 1] : c->duration_s;
    out->channel_count = n;
    out->channels = ch;
    return out;
}

/* ---- every clip: simulated in parallel groups, written in order -------- */

typedef struct tb__bake_job {
    tb_doc *doc;           /* read by the loop's tasks; written by its last (tb__bake_write) */
    const tb_bake_desc *d;
    const tb_spring_desc *sd;
    tb_bake_report *report;
    const tb__sim *s0;     /* the template of every run's tb__sim */
    const int *active;     /* the report's clips that are baked, group by group */
    int active_count, groups;
    const int *first;      /* group g: active[first[g] .. first[g + 1]) */
    tb__baked *out;        /* one per clip of the report */
    const tb__bake_hooks *hooks; /* tb__bake_beside's; NULL: none */
    /* the write task's wait (tb__bake_write): every active clip's keys
     * stand (simulated counts them), and the side task has ended */
    pthread_mutex_t lock;
    pthread_cond_t ready;
    int simulated, side_done;
    tb_result r;           /* the write task's */
    tb_error err;
} tb__bake_job;

/* One more active clip whose out (keys, or error) is final. */
static void tb__clip_ended(tb__bake_job *job)
{
    pthread_mutex_lock(&job->lock);
    if (++job->simulated == job->active_count)
        pthread_cond_broadcast(&job->ready);
    pthread_mutex_unlock(&job->lock);
}

/* One frame of every run of a group that has one to take: each posed, then
 * all stepped at once (tb_spring_step_batch_each: every clip's chains in
 * lanes, each its own step; bit for bit tb_spring_step's, so the keys do not
 * depend on the grouping). Returns the runs stepped. */
static int tb__group_frame(tb__run *runs, int n, tb_spring_batch_item *items, float *dts, int *who)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        tb__run *u = &runs[i];
        if (u->phase == TB__R_DONE)
            continue;
        tb__sim *s = &u->s;
        float t;
        tb__run_want(u, &t, &dts[m]);
        tb__pose(s, u->clip, t);
        if (s->keep > 0)
            for (int b = 0; b < s->bone_count; b++)
                memcpy(s->artist + b * 4, s->locals[s->bones[b]].r, 4 * sizeof(float));
        items[m] = (tb_spring_batch_item){s->anim, (const float(*)[16])s->world, s->locals, s->world};
        who[m++] = i;
    }
    if (m == 1) /* one clip left: the scalar step is the cheaper */
        tb_spring_step(items[0].anim, dts[0], items[0].world, items[0].locals, items[0].world_out);
    else if (m > 1)
        tb_spring_step_batch_each(items, m, dts);
    return m;
}

/* Run u (the report's clip c) has taken its last frame: its keys to o
 * (from here on the write task may write them), and to the hooks' keyed
 * as the clip the file will hold. */
static void tb__run_done(tb__bake_job *job, tb__run *u, int c, int g)
{
    tb__baked *o = &job->out[c];
    tb__run_finish(u, o);
    tb_clip *keyed = NULL;
    if (job->hooks && job->hooks->keyed && !(keyed = tb__keyed_clip(u, o->times, o->rot, o->keys)))
        o->r = tb__fail(&o->err, TB_ERR_OOM, NULL, NULL);
    tb__clip_ended(job);
    if (keyed) {
        job->hooks->keyed(job->hooks->ctx, c, keyed, g);
        free(keyed);
    }
}

/* Group g: the active clips g, g + groups, ..., simulated together frame
 * by frame, each done (tb__run_done) on its last. */
static void tb__bake_group(void *ctx, int g, int w)
{
    (void)w;
    tb__bake_job *job = ctx;
    int n = job->first[g + 1] - job->first[g];
    const int *mine = job->active + job->first[g];
    tb__run *runs = calloc((size_t)n, sizeof *runs);
    tb_spring_batch_item *items = malloc((size_t)n * sizeof *items);
    float *dts = malloc((size_t)n * sizeof *dts);
    int *who = malloc((size_t)n * sizeof *who);
    for (int i = 0; i < n; i++) {
        int c = mine[i];
        tb__baked *o = &job->out[c];
        if (!runs || !items || !dts || !who) {
            o->r = tb__fail(&o->err, TB_ERR_OOM, NULL, NULL);
            continue;
        }
        runs[i].rep = &job->report->clips[c];
        o->r = tb__run_begin(&runs[i], job->s0, job->sd, job->doc, job->d, runs[i].rep->animation, &o->err);
        if (o->r != TB_OK)
            runs[i].phase = TB__R_DONE;
    }
    for (int i = 0; i < n; i++) /* the clips that will not run: ended now */
        if (!runs || !items || !dts || !who || runs[i].phase == TB__R_DONE)
            tb__clip_ended(job);
    if (runs && items && dts && who) {
        int m;
        while ((m = tb__group_frame(runs, n, items, dts, who)) > 0)
            for (int j = 0; j < m; j++) {
                tb__run_after(&runs[who[j]], job->d);
                if (runs[who[j]].phase == TB__R_DONE)
                    tb__run_done(job, &runs[who[j]], mine[who[j]], g);
            }
        for (int i = 0; i < n; i++)
            tb__run_free(&runs[i]);
    }
    free(runs);
    free(items);
    free(dts);
    free(who);
}

/* The write task: once every clip's keys stand and the side task has
 * ended, the keys written in clip order (the first clip's error in that
 * order stops it, as one clip after the other would), then the document's
 * view refreshed. Beside it the last clips' keyed calls may still run
 * (fix measures them there): they read what they were given, not the
 * document. */
static void tb__bake_write(tb__bake_job *job)
{
    pthread_mutex_lock(&job->lock);
    while (job->simulated < job->active_count || !job->side_done)
        pthread_cond_wait(&job->ready, &job->lock);
    pthread_mutex_unlock(&job->lock);
    tb_doc *doc = job->doc;
    const tb_bake_report *report = job->report;
    tb_result r = TB_OK;
    for (int c = 0; c < report->clip_count && r == TB_OK; c++) {
        tb__baked *o = &job->out[c];
        if (report->clips[c].skipped)
            continue;
        if (o->r != TB_OK) {
            job->err = o->err;
            r = o->r;
            break;
        }
        if (job->s0->artist)
            tb__drop_tail_rotations(doc, job->s0, report->clips[c].animation);
        r = tb__write_keys(doc, job->s0, report->clips[c].animation, o->times, o->keys, o->rot, &job->err);
    }
    if (r == TB_OK) /* keys and clips added, the skinned meshes as they were */
        r = tb__doc_refresh_kept(doc, &job->err);
    job->r = r;
}

/* Task t of the bake's loop: the groups, then the hooks' side task
 * (tb__bake_beside), then the write task (tb__bake_write), the last: it
 * is claimed only by a thread whose earlier tasks have ended, and waits
 * for the others'. */
static void tb__bake_task(void *ctx, int t, int w)
{
    tb__bake_job *job = ctx;
    const int side = job->hooks && job->hooks->side;
    if (t < job->groups) {
        tb__bake_group(job, t, w);
    } else if (t == job->groups && side) {
        job->hooks->side(job->hooks->ctx, 0, w);
        pthread_mutex_lock(&job->lock);
        job->side_done = 1;
        pthread_cond_broadcast(&job->ready);
        pthread_mutex_unlock(&job->lock);
    } else {
        tb__bake_write(job);
    }
}

/* The baked clips (active) spread over `groups` groups, longest first,
 * each to the group with the least duration so far (the lowest on a tie):
 * a long clip alone, not beside another one of the same group's share
 * (Idle, 2 s, and TPose beside Run and Walk; its warm-up takes as long as
 * the others'). active is rearranged group by group, first[g] where group g
 * starts (first[groups] = n), the groups with the most clips first: the
 * calling thread takes group 0 as a rule, and the first clip measured,
 * which makes fix's measuring setup and its scratch, is the shortest one,
 * most often in that group, so they come from the calling thread's heap
 * (tb__skin_scratch in fix.c). Which group runs a clip changes no byte:
 * each clip's steps are tb_spring_step's (tb__group_frame). */
static void tb__bake_spread(const tb_doc *doc, const tb_bake_report *report, int *active, int n, int groups,
                            int *first, int *scratch)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    float load[64] = {0};
    int *of = scratch; /* of[i]: active[i]'s group */
    for (int i = 0; i < n; i++)
        of[i] = -1;
    for (int k = 0; k < n; k++) {
        int best = -1; /* the longest unplaced clip (the first on a tie) */
        float bd = -1;
        for (int i = 0; i < n; i++) {
            float d = g->animations[report->clips[active[i]].animation].duration_s;
            if (of[i] < 0 && (best < 0 || d > bd))
                bd = d, best = i;
        }
        bd = bd > 0 ? bd : 0; /* NaN or none: the least */
        int to = 0;
        for (int q = 1; q < groups; q++)
            if (load[q] < load[to])
                to = q;
        of[best] = to;
        load[to] += bd + 0.1f; /* a short clip's settle frames still cost */
    }
    int count[64] = {0}, order[64];
    for (int i = 0; i < n; i++)
        count[of[i]]++;
    for (int q = 0; q < groups; q++) { /* by clip count, most first (the lowest on a tie) */
        int at = q;
        while (at > 0 && count[order[at - 1]] < count[q]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = q;
    }
    int *sorted = scratch + n, m = 0;
    for (int k = 0; k < groups; k++) {
        first[k] = m;
        for (int i = 0; i < n; i++)
            if (of[i] == order[k])
                sorted[m++] = active[i];
    }
    first[groups] = m;
    memcpy(active, sorted, (size_t)n * sizeof *active);
}

/* Every clip simulated, d.threads groups of them in parallel (tb__bake_spread),
 * then the keys written in clip order: the same bytes whatever the number of
 * threads. */
static tb_result tb__bake_all(tb_doc *doc, const tb__sim *s, const tb_spring_desc *sd, const tb_bake_desc *d,
                              tb_bake_report *report, const tb__bake_hooks *hooks, tb_error *err)
{
    int n = report->clip_count, threads = d->threads > 0 ? d->threads : 1;
    tb__bake_job job = {.doc = doc, .d = d, .sd = sd, .report = report, .s0 = s, .hooks = hooks,
                        .side_done = !(hooks && hooks->side)};
    pthread_mutex_init(&job.lock, NULL);
    pthread_cond_init(&job.ready, NULL);
    int *active = calloc((size_t)n + 1, sizeof *active), first[65];
    int *scratch = calloc((size_t)n * 2 + 1, sizeof *scratch);
    job.out = calloc((size_t)n + 1, sizeof *job.out);
    tb_result r = TB_OK;
    if (!active || !scratch || !job.out) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    for (int c = 0; c < n; c++)
        if (!report->clips[c].skipped)
            active[job.active_count++] = c;
    job.active = active;
    job.groups = threads < job.active_count ? threads : job.active_count;
    job.groups = job.groups < 64 ? job.groups : 64;
    tb__bake_spread(doc, report, active, job.active_count, job.groups, first, scratch);
    job.first = first;
    int tasks = job.groups + (hooks && hooks->side) + 1; /* the last: tb__bake_write */
    tb__parallel_for(tasks, threads < tasks ? threads : tasks, tb__bake_task, &job);
    r = job.r;
    if (r != TB_OK && err)
        *err = job.err;
done:
    for (int c = 0; job.out && c < n; c++) {
        free(job.out[c].times);
        free(job.out[c].rot);
    }
    free(active);
    free(scratch);
    free(job.out);
    pthread_cond_destroy(&job.ready);
    pthread_mutex_destroy(&job.lock);
    return r;
}

/* The skeleton's own chains (d.existing), driven by index: their joints,
 * lengths and ends, which the spring desc points into until the bake ends
 * (each clip run of tb__bake_all creates its solver from it). */
typedef struct tb__existing {
    tb_tail_chain *ex;
    int *joints, *len, *end, count;
} tb__existing;

static void tb__existing_free(tb__existing *e)
{
    free(e->ex);
    free(e->joints);
    free(e->len);
    free(e->end);
}

/* Stage 1 with d.existing: the chains found on the skeleton (not tailbone's
 * own) as the solver's, the artist's keys blended by existing_keep. */
static tb_result tb__bake_existing(tb__existing *e, tb__sim *s, const tb_bake_desc *d, tb_spring_desc *sd,
                                   tb_error *err)
{
    const tb_model *m = s->m;
    int cap = 16;
    e->ex = malloc((size_t)cap * sizeof *e->ex);
    e->joints = malloc((size_t)cap * TB_TAIL_CHAIN_MAX_BONES * sizeof *e->joints);
    e->len = malloc((size_t)cap * sizeof *e->len);
    e->end = malloc((size_t)cap * sizeof *e->end);
    s->artist = malloc((size_t)m->skel.joint_count * 4 * sizeof *s->artist);
    if (!e->ex || !e->joints || !e->len || !e->end || !s->artist)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    int all = tb_tail_chains_find(m, e->ex, cap);
    for (int c = 0; c < all && c < cap; c++)
        if (e->ex[c].source != TB_CHAIN_TAILBONE)
            e->ex[e->count++] = e->ex[c];
    tb_tail_chains_spring_desc(e->ex, e->count, e->joints, e->len, e->end, sd);
    s->keep = d->existing_keep > 0 ? (d->existing_keep < 1 ? d->existing_keep : 1) : 0;
    int axes_given = 0;
    for (int k = 0; k < 3; k++)
        axes_given |= d->spring.bind_up[k] != 0 || d->spring.bind_forward[k] != 0;
    if (!axes_given && e->count)
        tb_tail_chain_axes(m, &e->ex[0], sd->bind_up, sd->bind_forward);
    if (d->spring.params.carry_rad == 0)
        sd->params.carry_rad = TB_SPRING_ZERO; /* the artist's pose is the rest pose */
    if (d->spring.params.rest_curve == 0)
        sd->params.rest_curve = 1;
    return TB_OK;
}

/* Stage 2: the bones whose rotations are keyed (every link of every chain,
 * in chain order) and the tail joints (those, the chains' ends and, unless
 * d.existing, every Tail_* joint), whose existing keys a clip may have. */
static void tb__bake_bones(tb__sim *s, const tb_bake_desc *d, int chains)
{
    const tb_model *m = s->m;
    for (int j = 0; j < m->skel.joint_count; j++)
        s->is_tail[j] = (uint8_t)(!d->existing && tb_tail_name_parse(m->skel.names[j], NULL, NULL));
    for (int c = 0; c < chains; c++) {
        tb_spring_chain_info ci;
        tb_spring_get_chain_info(s->anim, c, &ci);
        for (int l = 0; l < ci.link_count; l++) {
            tb_spring_link_state ls;
            tb_spring_get_link_state(s->anim, c, l, &ls);
            s->bones[s->bone_count++] = ls.joint;
            s->is_tail[ls.joint] = 1;
        }
        if (ci.end_joint >= 0)
            s->is_tail[ci.end_joint] = 1;
    }
}

/* Stage 3: the report's clips, the selected ones in document order; a clip
 * that already keys the tail is skipped (unless d.existing). The doc's
 * animation count is read before the bake appends to it. */
static void tb__bake_select(const tb_doc *doc, const tb__sim *s, const tb_bake_desc *d, tb_bake_report *report)
{
    int animation_count = tb_doc_gltf(doc)->animation_count;
    for (int a = 0; a < animation_count; a++) {
        const tb_gltf_animation *an = &tb_doc_gltf(doc)->animations[a];
        tb_bake_clip *rc = &report->clips[report->clip_count];
        snprintf(rc->name, sizeof rc->name, "%s", an->name ? an->name : "");
        rc->animation = a;
        if (!tb__selected(d, doc, a))
            continue;
        report->clip_count++;
        if (!d->existing && tb__clip_has_tail_keys(doc, s, a)) {
            rc->skipped = 1;
            snprintf(rc->reason, sizeof rc->reason, "already has keys on the tail bones");
        }
    }
}

/* model → solver (stage 1: existing chains) → bones (2) → clips (3) →
 * every clip simulated, then written in clip order (tb__bake_all) */
tb_result tb_bake(tb_doc *doc, const tb_bake_desc *desc, tb_bake_report *report, tb_error *err)
{
    return tb__bake_beside(doc, desc, report, NULL, err);
}

tb_result tb__bake_beside(tb_doc *doc, const tb_bake_desc *desc, tb_bake_report *report, const tb__bake_hooks *hooks,
                          tb_error *err)
{
    tb_bake_desc d = tb_bake_desc_defaults(desc);
    memset(report, 0, sizeof *report);
    const tb_gltf *g = tb_doc_gltf(doc);
    tb_model *m = hooks ? hooks->model : NULL;
    if (d.only) {
        for (const char *const *p = d.only; *p; p++) {
            if (tb_clip_find(doc, *p) < 0) {
                tb_model_free(m);
                return tb__fail(err, TB_ERR_ARG, "/animations", "no clip named '%s'", *p);
            }
        }
    }
    tb_result r = TB_OK;
    if (!m) {
        tb_model_desc md = {0};
        md.no_normals = 1; /* the bake reads the skeleton, the bind pose's extent and the soles */
        r = tb_model_load_desc(&m, doc, &md, err);
        if (r != TB_OK)
            return r;
    }
    const int given = hooks && hooks->loaded;
    if (given)
        hooks->loaded(hooks->ctx, m); /* the caller's from here on (read only until the keys are written) */
    tb__sim s = {m, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, NULL, NULL, 0};
    uint8_t *need = NULL;
    float units = 1, ground = 0;
    tb_spring_desc sd = tb_bake_spring_desc(m, &d, &units, &ground);
    report->world_units_per_m = units;
    report->ground_y_m = ground;
    tb__existing ex = {NULL, NULL, NULL, NULL, 0};
    if (d.existing)
        r = tb__bake_existing(&ex, &s, &d, &sd, err);
    if (r == TB_OK)
        r = tb_spring_create(&s.anim, &m->skel, &sd, err);
    int n = m->skel.joint_count;
    if (r != TB_OK)
        goto done;
    int chains = tb_spring_chain_count(s.anim);
    report->chain_count = chains;
    s.bones = malloc((size_t)n * sizeof *s.bones);
    s.is_tail = calloc((size_t)n, 1);
    report->clips = calloc((size_t)(g->animation_count ? g->animation_count : 1), sizeof *report->clips);
    if (!s.bones || !s.is_tail || !report->clips) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    tb__bake_bones(&s, &d, chains);
    report->bone_count = s.bone_count;
    if (chains == 0)
        goto done;
    tb__bake_select(doc, &s, &d, report);
    need = tb__bake_need(&s, chains);
    s.need = need;
    /* Simulate every clip (in parallel groups: d.threads), then write the
     * keys in clip order: the same bytes whatever the number of threads. */
    r = tb__bake_all(doc, &s, &sd, &d, report, hooks, err); /* the keys written, the view refreshed */
done:
    tb__existing_free(&ex);
    free(s.bones);
    free(s.is_tail);
    free(s.artist);
    free(need);
    tb_spring_destroy(s.anim);
    if (!given)
        tb_model_free(m);
    return r;
}
