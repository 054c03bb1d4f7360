/* Synthetic characters: six procedural clips on the 22 body bones
 * (tailbone/synth.h). Bind rotations are identity, so every local rotation
 * below is expressed in world-aligned axes of the T-pose: +X the
 * character's left, +Y up, +Z forward. Sign reminders:
 *   thigh flexion (leg forward)   Rx(-)     knee flexion      Rx(+)
 *   spine leaning forward         Rx(+)     arms down         Rz(-72) left, Rz(+72) right
 *   a hanging arm swinging back   Rx(+)     elbow flexion     Ry(-) left, Ry(+) right
 *   back flip (head goes back)    Rx(-) on Hips
 * Keys are sampled at 30 fps, LINEAR; looping clips end on their first key. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "synth/synth_internal.h"

#define TBS_FPS 30

typedef struct tbs_pose {
    double e[TBS_JOINT_COUNT][3]; /* degrees about X, Y, Z; q = Ry * Rx * Rz */
    double hips[3];               /* offset from the rest Hips position, metres */
} tbs_pose;

/* Per-seed variation: a few percent on amplitudes, phases for idle. */
typedef struct tbs_vary {
    double leg, arm, bob, sway, breath, ph1, ph2;
} tbs_vary;

typedef struct tbs_gait {
    double period_s, leg, bias, k0, knee, drop, bob, sway, yaw, lean, arm_down, arm, elbow, elbow_swing;
} tbs_gait;

static double tbs__ss(double x)
{
    x = x < 0 ? 0 : x > 1 ? 1 : x;
    return x * x * (3 - 2 * x);
}

static double tbs__rad(double deg)
{
    return deg * TB_PI / 180.0;
}

/* Hips offset that keeps the ankles on their rest height when thighs flex by
 * alpha and knees by 2 alpha (thigh 0.43 m, shin 0.43 m with 2 cm heel back). */
static double tbs__crouch_drop(double alpha_deg)
{
    double a = tbs__rad(alpha_deg);
    return -0.86 + 0.86 * cos(a) - 0.02 * sin(a);
}

static void tbs__arms_down(tbs_pose *p, double down_deg)
{
    p->e[TBS_L_ARM][2] = -down_deg;
    p->e[TBS_R_ARM][2] = down_deg;
}

static void tbs__gait(tbs_pose *p, double t, const tbs_gait *g, const tbs_vary *v)
{
    double ph = 2 * TB_PI * t / g->period_s, s = sin(ph), c = cos(ph);
    double leg = g->leg * v->leg, arm = g->arm * v->arm;
    double thl = -leg * s + g->bias, thr = leg * s + g->bias;
    /* the knee folds most while its leg swings forward under the body */
    double kl = g->k0 + g->knee * pow(0.5 + 0.5 * c, 2), kr = g->k0 + g->knee * pow(0.5 - 0.5 * c, 2);
    p->e[TBS_L_UPLEG][0] = thl;
    p->e[TBS_R_UPLEG][0] = thr;
    p->e[TBS_L_LEG][0] = kl;
    p->e[TBS_R_LEG][0] = kr;
    p->e[TBS_L_FOOT][0] = -0.5 * (thl + kl);
    p->e[TBS_R_FOOT][0] = -0.5 * (thr + kr);
    /* pelvis: highest at mid-stance (both thighs vertical), sways over the
     * stance foot, turns with the forward leg; the spine turns back */
    p->hips[0] = g->sway * v->sway * s;
    p->hips[1] = -g->drop + g->bob * v->bob * 0.5 * (cos(2 * ph) - 1);
    p->e[TBS_HIPS][1] = -g->yaw * s;
    p->e[TBS_HIPS][2] = 0.3 * g->yaw * c;
    for (int j = TBS_SPINE; j <= TBS_SPINE2; j++) {
        p->e[j][1] = g->yaw / 3 * s;
        p->e[j][0] = j == TBS_SPINE2 ? 0 : g->lean / 2;
    }
    p->e[TBS_HEAD][0] = -g->lean * 0.6;
    tbs__arms_down(p, g->arm_down);
    /* arms counter-swing: the left arm goes back as the left leg goes forward */
    p->e[TBS_L_ARM][0] = arm * s;
    p->e[TBS_R_ARM][0] = -arm * s;
    p->e[TBS_L_FOREARM][1] = -(g->elbow + g->elbow_swing * (0.5 - 0.5 * s));
    p->e[TBS_R_FOREARM][1] = g->elbow + g->elbow_swing * (0.5 + 0.5 * s);
}

static void tbs__walk(tbs_pose *p, double t, const tbs_vary *v)
{
    static const tbs_gait g = {1.0, 24, 0, 4, 50, 0.01, 0.03, 0.025, 6, 3, 72, 18, 12, 12};
    tbs__gait(p, t, &g, v);
}

static void tbs__sprint(tbs_pose *p, double t, const tbs_vary *v)
{
    static const tbs_gait g = {0.6, 42, -8, 12, 95, 0.06, 0.06, 0.015, 10, 16, 65, 45, 70, 25};
    tbs__gait(p, t, &g, v);
}

static void tbs__idle(tbs_pose *p, double t, const tbs_vary *v)
{
    double ph = 2 * TB_PI * t / 3.0, s = sin(ph), b = v->breath;
    p->e[TBS_SPINE][0] = 0.5 * b * s;
    p->e[TBS_SPINE1][0] = 0.8 * b * s;
    p->e[TBS_SPINE2][0] = -1.2 * b * s; /* the chest rises as it breathes in */
    p->e[TBS_L_SHOULDER][2] = 1.0 * b * (0.5 - 0.5 * cos(ph));
    p->e[TBS_R_SHOULDER][2] = -1.0 * b * (0.5 - 0.5 * cos(ph));
    tbs__arms_down(p, 74 - 1.0 * b * s);
    p->e[TBS_L_FOREARM][1] = -10;
    p->e[TBS_R_FOREARM][1] = 10;
    p->e[TBS_HEAD][0] = 1.5 * sin(ph + v->ph1);
    p->e[TBS_HEAD][1] = 2.0 * sin(ph + v->ph2);
    p->e[TBS_L_UPLEG][2] = 2;
    p->e[TBS_R_UPLEG][2] = -2;
    p->e[TBS_L_FOOT][2] = -2;
    p->e[TBS_R_FOOT][2] = 2;
    p->hips[0] = 0.008 * sin(ph + v->ph1);
    p->hips[1] = -0.004 + 0.002 * cos(2 * ph);
}

/* Legs folded by crouch depth c in [0, 1] with the feet kept planted. */
static void tbs__crouch_legs(tbs_pose *p, double c)
{
    double a = 62 * c;
    p->hips[1] += tbs__crouch_drop(a);
    p->e[TBS_L_UPLEG][0] += -a;
    p->e[TBS_R_UPLEG][0] += -a;
    p->e[TBS_L_LEG][0] += 2 * a;
    p->e[TBS_R_LEG][0] += 2 * a;
    p->e[TBS_L_FOOT][0] += -a;
    p->e[TBS_R_FOOT][0] += -a;
}

static void tbs__crouch(tbs_pose *p, double t, const tbs_vary *v)
{
    /* down in 0.6 s, hold, up again by 2 s: the pelvis drops ~0.45 m */
    double c = t < 1.0 ? tbs__ss(t / 0.6) : 1 - tbs__ss((t - 1.4) / 0.6);
    tbs__crouch_legs(p, c);
    p->e[TBS_SPINE][0] = 18 * c;
    p->e[TBS_SPINE1][0] = 8 * c;
    p->e[TBS_SPINE2][0] = 4 * c;
    p->e[TBS_NECK][0] = -10 * c;
    p->e[TBS_HEAD][0] = -10 * c;
    tbs__arms_down(p, 72 - 10 * c);
    p->e[TBS_L_ARM][0] = -55 * c * v->arm;
    p->e[TBS_R_ARM][0] = -55 * c * v->arm;
    p->e[TBS_L_FOREARM][1] = -(10 + 25 * c);
    p->e[TBS_R_FOREARM][1] = 10 + 25 * c;
}

static void tbs__hip_sweep(tbs_pose *p, double t, const tbs_vary *v)
{
    /* SPEC B: 0.5 m sideways in 2/3 s and back — harder than any real clip */
    const double half = 2.0 / 3.0;
    double x = t < half ? tbs__ss(t / half) : 1 - tbs__ss((t - half) / half);
    p->hips[0] = 0.5 * x;
    tbs__arms_down(p, 72);
    (void)v;
}

static void tbs__back_flip(tbs_pose *p, double t, const tbs_vary *v)
{
    double c = 0, armx = 0, tuck = 0, flip = 0, lift = 0, back = 0;
    if (t < 0.35) { /* wind up: crouch, arms back */
        double u = tbs__ss(t / 0.35);
        c = 0.65 * u;
        armx = 35 * u;
    } else if (t < 0.55) { /* take-off: extend, arms overhead */
        double u = tbs__ss((t - 0.35) / 0.2);
        c = 0.65 * (1 - u);
        armx = 35 - 195 * u;
        lift = 0.05 * u;
    } else if (t < 1.45) { /* airborne: a full turn backwards, tucked */
        double f = (t - 0.55) / 0.9;
        lift = 0.05 * (1 - f) + 0.9 * 4 * f * (1 - f);
        flip = -360 * tbs__ss(f);
        tuck = pow(sin(TB_PI * f), 2);
        armx = -160 + 110 * tuck;
        back = -0.25 * f;
    } else { /* landing: absorb, then stand */
        double u = (t - 1.45) / 0.45;
        c = 0.55 * sin(TB_PI * (u > 1 ? 1 : u));
        armx = -160 * (1 - tbs__ss(u)) - 40 * c;
        back = -0.25;
    }
    tbs__crouch_legs(p, c);
    p->hips[1] += lift;
    p->hips[2] = back;
    p->e[TBS_HIPS][0] = flip;
    p->e[TBS_L_UPLEG][0] += -100 * tuck;
    p->e[TBS_R_UPLEG][0] += -100 * tuck;
    p->e[TBS_L_LEG][0] += 120 * tuck;
    p->e[TBS_R_LEG][0] += 120 * tuck;
    p->e[TBS_SPINE][0] = 20 * c + 10 * tuck;
    p->e[TBS_HEAD][0] = -15 * c - 20 * (flip < -10 && flip > -300);
    tbs__arms_down(p, 72);
    p->e[TBS_L_ARM][0] = armx * v->arm;
    p->e[TBS_R_ARM][0] = armx * v->arm;
    p->e[TBS_L_FOREARM][1] = -15;
    p->e[TBS_R_FOREARM][1] = 15;
}

typedef struct tbs_clip_def {
    const char *name;
    double duration_s;
    void (*pose)(tbs_pose *p, double t, const tbs_vary *v);
} tbs_clip_def;

static const tbs_clip_def tbs__clips[] = {
    {"Walk", 1.0, tbs__walk},         {"Sprint", 0.6, tbs__sprint},
    {"Idle", 3.0, tbs__idle},         {"Crouch", 2.0, tbs__crouch},
    {"HipSweep", 4.0 / 3.0, tbs__hip_sweep}, {"BackFlip", 1.9, tbs__back_flip},
};

static void tbs__quat(const double e[3], double q[4])
{
    /* q = Ry * Rx * Rz: Z first (e.g. lower the arm), then X (swing), then Y */
    double hx = tbs__rad(e[0]) / 2, hy = tbs__rad(e[1]) / 2, hz = tbs__rad(e[2]) / 2;
    double qx[4] = {sin(hx), 0, 0, cos(hx)}, qy[4] = {0, sin(hy), 0, cos(hy)}, qz[4] = {0, 0, sin(hz), cos(hz)};
    double t[4];
#define TBS_QMUL(o, a, b)                                                                                              \
    do {                                                                                                               \
        o[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];                                                  \
        o[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];                                                  \
        o[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];                                                  \
        o[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];                                                  \
    } while (0)
    TBS_QMUL(t, qx, qz);
    TBS_QMUL(q, qy, t);
#undef TBS_QMUL
    double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++)
        q[k] /= l;
}

int tbs_add_clips(tb_doc *doc, const int *joint_node, float unit, uint32_t seed)
{
    tbs_rng rng;
    tbs_rng_seed(&rng, seed ^ 0xC11Bu);
    tbs_vary v;
    v.leg = 1 + 0.08 * (tbs_rng_float(&rng) - 0.5);
    v.arm = 1 + 0.10 * (tbs_rng_float(&rng) - 0.5);
    v.bob = 1 + 0.10 * (tbs_rng_float(&rng) - 0.5);
    v.sway = 1 + 0.10 * (tbs_rng_float(&rng) - 0.5);
    v.breath = 1 + 0.20 * (tbs_rng_float(&rng) - 0.5);
    v.ph1 = 2 * TB_PI * tbs_rng_float(&rng);
    v.ph2 = 2 * TB_PI * tbs_rng_float(&rng);

    json_t *anims = json_array();
    int ok = anims != NULL;
    for (size_t ci = 0; ok && ci < sizeof tbs__clips / sizeof tbs__clips[0]; ci++) {
        const tbs_clip_def *cd = &tbs__clips[ci];
        int frames = (int)lround(cd->duration_s * TBS_FPS), n = frames + 1;
        float *times = malloc((size_t)n * sizeof(float));
        float *rot = malloc((size_t)n * TBS_JOINT_COUNT * 4 * sizeof(float)); /* [joint][key][4] */
        float *tr = malloc((size_t)n * 3 * sizeof(float));
        if (!times || !rot || !tr) {
            free(times), free(rot), free(tr);
            ok = 0;
            break;
        }
        for (int k = 0; k < n; k++) {
            /* the last key sits exactly on the duration */
            double t = k == frames ? cd->duration_s : (double)k / TBS_FPS;
            times[k] = (float)t;
            tbs_pose p;
            memset(&p, 0, sizeof p);
            cd->pose(&p, t, &v);
            for (int j = 0; j < TBS_JOINT_COUNT; j++) {
                double q[4];
                tbs__quat(p.e[j], q);
                float *o = rot + ((size_t)j * (size_t)n + (size_t)k) * 4;
                /* keep each track on one hemisphere so LINEAR never takes the long way */
                if (k > 0) {
                    const float *pr = o - 4;
                    if (pr[0] * q[0] + pr[1] * q[1] + pr[2] * q[2] + pr[3] * q[3] < 0)
                        for (int c = 0; c < 4; c++)
                            q[c] = -q[c];
                }
                for (int c = 0; c < 4; c++)
                    o[c] = (float)q[c];
            }
            for (int c = 0; c < 3; c++)
                tr[k * 3 + c] = (float)((tbs_joint_pos[TBS_HIPS][c] + p.hips[c]) * unit);
        }
        json_t *anim = json_object(), *chans = json_array(), *samps = json_array();
        int input = tb_doc_add_accessor(doc, times, (size_t)n, TB_COMPONENT_FLOAT, "SCALAR", 0, 0);
        ok = input >= 0;
        for (int j = 0; ok && j <= TBS_JOINT_COUNT; j++) {
            /* j == TBS_JOINT_COUNT: the Hips translation track */
            int is_t = j == TBS_JOINT_COUNT;
            int out = is_t ? tb_doc_add_accessor(doc, tr, (size_t)n, TB_COMPONENT_FLOAT, "VEC3", 0, 0)
                           : tb_doc_add_accessor(doc, rot + (size_t)j * (size_t)n * 4, (size_t)n,
                                                 TB_COMPONENT_FLOAT, "VEC4", 0, 0);
            ok = out >= 0;
            json_array_append_new(samps, json_pack("{s:i,s:s,s:i}", "input", input, "interpolation", "LINEAR",
                                                   "output", out));
            json_array_append_new(chans, json_pack("{s:i,s:{s:i,s:s}}", "sampler", (int)json_array_size(samps) - 1,
                                                   "target", "node", joint_node[is_t ? TBS_HIPS : j], "path",
                                                   is_t ? "translation" : "rotation"));
        }
        json_object_set_new(anim, "name", json_string(cd->name));
        json_object_set_new(anim, "channels", chans);
        json_object_set_new(anim, "samplers", samps);
        json_array_append_new(anims, anim);
        free(times), free(rot), free(tr);
    }
    if (ok)
        json_object_set_new(tb_doc_json(doc), "animations", anims);
    else
        json_decref(anims);
    return ok;
}
