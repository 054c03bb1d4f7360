/* Runtime pose, clip sampling and skinning (SPEC C; tailbone/runtime.h).
 * Links the runtime library alone: nothing here may need the offline layer.
 * References are cglm (TRS, products, inverses) or values worked by hand. */
#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cglm/cglm.h>

#include "tailbone/runtime.h"

#define EPS 1e-5f

static tb_transform trs(float tx, float ty, float tz, const float q[4], float sx, float sy,
                        float sz)
{
    tb_transform x = {{tx, ty, tz}, {q[0], q[1], q[2], q[3]}, {sx, sy, sz}};
    return x;
}

static const float Q_ID[4] = {0, 0, 0, 1};

/* Unit quaternion for angle_rad about a unit axis. */
static void quat_axis(float q[4], float angle_rad, float ax, float ay, float az)
{
    float s = sinf(angle_rad * 0.5f);
    q[0] = ax * s;
    q[1] = ay * s;
    q[2] = az * s;
    q[3] = cosf(angle_rad * 0.5f);
}

/* cglm reference: T * R * S, the glTF node matrix. */
static void ref_trs(const tb_transform *x, float out[16])
{
    mat4 t, r, s, tr, m;
    versor q = {x->r[0], x->r[1], x->r[2], x->r[3]};
    glm_quat_normalize(q);
    glm_translate_make(t, (float *)x->t);
    glm_quat_mat4(q, r);
    glm_scale_make(s, (float *)x->s);
    glm_mat4_mul(t, r, tr);
    glm_mat4_mul(tr, s, m);
    memcpy(out, m, sizeof m);
}

static void assert_mat_near(const float *a, const float *b, float eps)
{
    for (int i = 0; i < 16; i++)
        assert_float_equal(a[i], b[i], eps);
}

static void assert_vec3_near(const float *a, float x, float y, float z, float eps)
{
    assert_float_equal(a[0], x, eps);
    assert_float_equal(a[1], y, eps);
    assert_float_equal(a[2], z, eps);
}

/* q and -q are one rotation: compare through |dot|. */
static void assert_same_rotation(const float *q, const float *ref)
{
    float d = q[0] * ref[0] + q[1] * ref[1] + q[2] * ref[2] + q[3] * ref[3];
    assert_float_equal(fabsf(d), 1.0f, 1e-6f);
}

static void assert_unit_quat(const float *q)
{
    assert_float_equal(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1.0f, 1e-6f);
}

/* ---- TRS -> matrix ----------------------------------------------------- */

static void transform_to_matrix_matches_cglm_trs(void **state)
{
    (void)state;
    float q1[4], q2[4];
    float n = sqrtf(1 + 4 + 0.25f);
    quat_axis(q1, 0.7f, 1 / n, 2 / n, -0.5f / n);
    quat_axis(q2, 2.9f, 0, 0, 1);
    tb_transform cases[] = {
        trs(0, 0, 0, Q_ID, 1, 1, 1),
        trs(1, -2, 3, q1, 2, 0.5f, 1.5f),
        trs(-0.25f, 4, 0.1f, q2, 0.01f, 0.01f, 0.01f),
        trs(3, 2, 1, q1, -1, 2, 3),
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float got[16], want[16];
        tb_transform_to_matrix(&cases[i], got);
        ref_trs(&cases[i], want);
        assert_mat_near(got, want, EPS);
    }
}

static void transform_to_matrix_treats_off_unit_quaternion_as_its_rotation(void **state)
{
    (void)state;
    float q[4];
    quat_axis(q, 1.1f, 0, 1, 0);
    tb_transform unit = trs(1, 2, 3, q, 1, 2, 3);
    tb_transform off = unit;
    for (int c = 0; c < 4; c++)
        off.r[c] *= 1.02f; /* an exporter's rounding, exaggerated */
    float a[16], b[16];
    tb_transform_to_matrix(&unit, a);
    tb_transform_to_matrix(&off, b);
    assert_mat_near(a, b, EPS);
}

/* ---- local -> world ---------------------------------------------------- */

/* root at (0,1,0) turned 90 deg about Z; child 1 m along its X, also turned
 * 90 deg and scaled 2; grandchild 1 m along that X. */
static void chain3(int parents[3], tb_transform locals[3])
{
    float qz90[4];
    quat_axis(qz90, GLM_PI_2f, 0, 0, 1);
    parents[0] = -1;
    parents[1] = 0;
    parents[2] = 1;
    locals[0] = trs(0, 1, 0, qz90, 1, 1, 1);
    locals[1] = trs(1, 0, 0, qz90, 2, 2, 2);
    locals[2] = trs(1, 0, 0, Q_ID, 1, 1, 1);
}

static void local_to_world_chain_gives_known_world_positions(void **state)
{
    (void)state;
    int parents[3];
    tb_transform locals[3];
    chain3(parents, locals);
    tb_skeleton skel = {.joint_count = 3, .parents = parents, .rest_local = locals};
    float world[3][16];
    tb_local_to_world(&skel, locals, NULL, world);
    assert_vec3_near(&world[0][12], 0, 1, 0, EPS);
    assert_vec3_near(&world[1][12], 0, 2, 0, EPS);  /* +X turned to +Y */
    assert_vec3_near(&world[2][12], -2, 2, 0, EPS); /* 180 deg, scale 2 */
    /* The grandchild's X axis: turned 180 deg, inherits scale 2. */
    assert_vec3_near(&world[2][0], -2, 0, 0, EPS);
}

static void local_to_world_applies_root_world_to_every_joint(void **state)
{
    (void)state;
    int parents[3];
    tb_transform locals[3];
    chain3(parents, locals);
    tb_skeleton skel = {.joint_count = 3, .parents = parents, .rest_local = locals};
    /* A centimetre armature above the skeleton (common in FBX-born rigs). */
    float armature[16] = {0.01f, 0, 0, 0, 0, 0.01f, 0, 0, 0, 0, 0.01f, 0, 0, 0, 0, 1};
    float world[3][16];
    tb_local_to_world(&skel, locals, armature, world);
    assert_vec3_near(&world[0][12], 0, 0.01f, 0, EPS);
    assert_vec3_near(&world[1][12], 0, 0.02f, 0, EPS);
    assert_vec3_near(&world[2][12], -0.02f, 0.02f, 0, EPS);
    assert_vec3_near(&world[2][0], -0.02f, 0, 0, EPS);
}

static void local_to_world_two_roots_both_use_root_world(void **state)
{
    (void)state;
    int parents[3] = {-1, 0, -1};
    tb_transform locals[3] = {trs(1, 0, 0, Q_ID, 1, 1, 1), trs(0, 1, 0, Q_ID, 1, 1, 1),
                              trs(0, 0, 5, Q_ID, 1, 1, 1)};
    tb_skeleton skel = {.joint_count = 3, .parents = parents, .rest_local = locals};
    float root[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 10, 0, 0, 1};
    float world[3][16];
    tb_local_to_world(&skel, locals, root, world);
    assert_vec3_near(&world[1][12], 11, 1, 0, EPS);
    assert_vec3_near(&world[2][12], 10, 0, 5, EPS);
}

/* ---- clip sampling ----------------------------------------------------- */

/* One joint at rest (identity, scale 1) and a clip of the given channels. */
typedef struct one_joint {
    int parent;
    tb_transform rest;
    tb_skeleton skel;
} one_joint;

static void one_joint_init(one_joint *o)
{
    o->parent = -1;
    o->rest = trs(0, 0, 0, Q_ID, 1, 1, 1);
    o->skel = (tb_skeleton){.joint_count = 1, .parents = &o->parent, .rest_local = &o->rest};
}

static tb_transform sample1(const one_joint *o, const tb_channel *ch, float duration_s,
                            float t)
{
    tb_clip clip = {.name = "c", .duration_s = duration_s, .channel_count = 1, .channels = ch};
    tb_transform out;
    tb_clip_sample(&clip, &o->skel, t, &out);
    return out;
}

static void sample_linear_translation_interpolates_between_keys(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    float times[] = {0, 2};
    float values[] = {0, 0, 0, 2, 4, -6};
    tb_channel ch = {0, TB_PATH_TRANSLATION, TB_INTERP_LINEAR, 2, times, values};
    tb_transform x = sample1(&o, &ch, 2, 0.5f);
    assert_vec3_near(x.t, 0.5f, 1, -1.5f, EPS);
    x = sample1(&o, &ch, 2, 2);
    assert_vec3_near(x.t, 2, 4, -6, 0);
}

static void sample_linear_rotation_takes_shorter_arc_across_sign_flip(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    float qy90[4];
    quat_axis(qy90, GLM_PI_2f, 0, 1, 0);
    /* Second key stored as -q: the same 90 deg, on the far hemisphere. A
     * plain component lerp would swing 270 deg the other way. */
    float times[] = {0, 1};
    float values[] = {0, 0, 0, 1, -qy90[0], -qy90[1], -qy90[2], -qy90[3]};
    tb_channel ch = {0, TB_PATH_ROTATION, TB_INTERP_LINEAR, 2, times, values};

    float want[4];
    tb_transform x = sample1(&o, &ch, 1, 0.5f);
    quat_axis(want, GLM_PI_4f, 0, 1, 0);
    assert_unit_quat(x.r);
    assert_same_rotation(x.r, want);

    /* Slerp, not nlerp: constant angular speed puts u = 0.25 at 22.5 deg. */
    x = sample1(&o, &ch, 1, 0.25f);
    quat_axis(want, GLM_PI_4f * 0.5f, 0, 1, 0);
    assert_unit_quat(x.r);
    assert_same_rotation(x.r, want);
}

static void sample_step_holds_previous_key_until_next(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    float times[] = {0, 1, 2};
    float values[] = {0, 0, 0, 10, 0, 0, 20, 0, 0};
    tb_channel ch = {0, TB_PATH_TRANSLATION, TB_INTERP_STEP, 3, times, values};
    assert_float_equal(sample1(&o, &ch, 2, 0.99f).t[0], 0, 0);
    assert_float_equal(sample1(&o, &ch, 2, 1.0f).t[0], 10, 0);
    assert_float_equal(sample1(&o, &ch, 2, 1.5f).t[0], 10, 0);
    assert_float_equal(sample1(&o, &ch, 2, 2.0f).t[0], 20, 0);
}

static void sample_cubicspline_matches_hermite_with_dt_scaled_tangents(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    /* Keys at 1 s and 3 s (dt = 2). Per key: in-tangent, value, out-tangent.
     * The 9s and 7s are tangents that the segment never uses. */
    float times[] = {1, 3};
    float values[] = {9, 9, 9, 0, 0, 0, 1, 0, 0, /* key 0: a0, v0, b0 */
                      0, 0, -2, 1, 2, 0, 7, 7, 7 /* key 1: a1, v1, b1 */};
    tb_channel ch = {0, TB_PATH_TRANSLATION, TB_INTERP_CUBICSPLINE, 2, times, values};

    /* t = 1.5 s -> u = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625,
     * h11 = -0.046875; p = h00 v0 + dt h10 b0 + h01 v1 + dt h11 a1
     *   x = 2*0.140625*1 + 0.15625*1 = 0.4375  (0.296875 without dt)
     *   y = 0.15625*2                = 0.3125
     *   z = 2*-0.046875*-2           = 0.1875  (0.09375 without dt) */
    tb_transform x = sample1(&o, &ch, 3, 1.5f);
    assert_vec3_near(x.t, 0.4375f, 0.3125f, 0.1875f, 1e-6f);
    /* At the keys the curve passes through the values, not the tangents. */
    assert_vec3_near(sample1(&o, &ch, 3, 1).t, 0, 0, 0, 0);
    assert_vec3_near(sample1(&o, &ch, 3, 3).t, 1, 2, 0, 0);
}

static void sample_cubicspline_rotation_is_normalised(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    float q[4];
    quat_axis(q, GLM_PI_2f, 0, 1, 0);
    float times[] = {0, 1};
    float values[] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, /* zero tangents */
                      0, 0, 0, 0, q[0], q[1], q[2], q[3], 0, 0, 0, 0};
    tb_channel ch = {0, TB_PATH_ROTATION, TB_INTERP_CUBICSPLINE, 2, times, values};
    /* Midway with zero tangents: h00 = h01 = 0.5, a 45 deg rotation once
     * the (shorter than unit) blend is normalised. */
    tb_transform x = sample1(&o, &ch, 1, 0.5f);
    float want[4];
    quat_axis(want, GLM_PI_4f, 0, 1, 0);
    assert_unit_quat(x.r);
    assert_same_rotation(x.r, want);
}

static void sample_clamps_before_first_and_after_last_key(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    float times[] = {1, 2};
    float values[] = {5, 0, 0, 7, 0, 0};
    tb_channel ch = {0, TB_PATH_TRANSLATION, TB_INTERP_LINEAR, 2, times, values};
    assert_float_equal(sample1(&o, &ch, 2, -3).t[0], 5, 0);
    assert_float_equal(sample1(&o, &ch, 2, 0.5f).t[0], 5, 0);
    assert_float_equal(sample1(&o, &ch, 2, 10).t[0], 7, 0);
    assert_float_equal(sample1(&o, &ch, 2, NAN).t[0], 5, 0);
    assert_float_equal(sample1(&o, &ch, 0, 10).t[0], 7, 0); /* no duration given */
    /* The same for CUBICSPLINE: the held value, never a tangent. */
    float cvalues[] = {9, 9, 9, 5, 0, 0, 9, 9, 9, 9, 9, 9, 7, 0, 0, 9, 9, 9};
    tb_channel cch = {0, TB_PATH_TRANSLATION, TB_INTERP_CUBICSPLINE, 2, times, cvalues};
    assert_vec3_near(sample1(&o, &cch, 2, 0).t, 5, 0, 0, 0);
    assert_vec3_near(sample1(&o, &cch, 2, 3).t, 7, 0, 0, 0);
}

static void sample_single_key_channel_holds_that_key(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    float times[] = {0.5f};
    float values[] = {3, 4, 5};
    float cvalues[] = {9, 9, 9, 3, 4, 5, 9, 9, 9};
    tb_interp modes[] = {TB_INTERP_LINEAR, TB_INTERP_STEP, TB_INTERP_CUBICSPLINE};
    for (int m = 0; m < 3; m++) {
        tb_channel ch = {0, TB_PATH_SCALE, modes[m], 1, times,
                         modes[m] == TB_INTERP_CUBICSPLINE ? cvalues : values};
        assert_vec3_near(sample1(&o, &ch, 0.5f, 0).s, 3, 4, 5, 0);
        assert_vec3_near(sample1(&o, &ch, 0.5f, 0.5f).s, 3, 4, 5, 0);
        assert_vec3_near(sample1(&o, &ch, 0.5f, 9).s, 3, 4, 5, 0);
    }
}

static void sample_equal_key_times_do_not_divide_by_zero(void **state)
{
    (void)state;
    one_joint o;
    one_joint_init(&o);
    /* A jump authored as two keys at 1 s: before it 0 -> 10, after 20 -> 30. */
    float times[] = {0, 1, 1, 2};
    float values[] = {0, 0, 0, 10, 0, 0, 20, 0, 0, 30, 0, 0};
    tb_interp modes[] = {TB_INTERP_LINEAR, TB_INTERP_CUBICSPLINE};
    float cvalues[36] = {0};
    for (int k = 0; k < 4; k++)
        cvalues[k * 9 + 3] = values[k * 3];
    for (int m = 0; m < 2; m++) {
        tb_channel ch = {0, TB_PATH_TRANSLATION, modes[m], 4, times,
                         modes[m] == TB_INTERP_LINEAR ? values : cvalues};
        float at1 = sample1(&o, &ch, 2, 1).t[0];
        assert_true(isfinite(at1));
        assert_float_equal(at1, 20, 0); /* the later key wins at the jump */
        assert_float_equal(sample1(&o, &ch, 2, 0.5f).t[0], 5, EPS);
        assert_float_equal(sample1(&o, &ch, 2, 1.5f).t[0], 25, EPS);
    }
    /* Every key at one instant, rotation: finite and unit, last key held. */
    float qt[] = {1, 1};
    float qv[] = {0, 0, 0, 1, 0, 1, 0, 0};
    tb_channel rch = {0, TB_PATH_ROTATION, TB_INTERP_LINEAR, 2, qt, qv};
    for (float t = 0; t <= 2; t += 0.5f) {
        tb_transform x = sample1(&o, &rch, 1, t);
        assert_unit_quat(x.r);
        assert_same_rotation(x.r, qv + 4);
    }
}

static void sample_keeps_rest_pose_for_joints_without_channels(void **state)
{
    (void)state;
    float q[4];
    quat_axis(q, 0.4f, 1, 0, 0);
    int parents[3] = {-1, 0, 1};
    tb_transform rest[3] = {trs(0, 1, 0, q, 1, 1, 1), trs(0.1f, 0.2f, 0.3f, q, 2, 2, 2),
                            trs(4, 5, 6, Q_ID, 0.5f, 1, 1)};
    tb_skeleton skel = {.joint_count = 3, .parents = parents, .rest_local = rest};
    float times[] = {0, 1};
    float values[] = {0, 0, 0, 1, 0, 0, 1, 0};
    tb_channel ch = {1, TB_PATH_ROTATION, TB_INTERP_LINEAR, 2, times, values};
    tb_clip clip = {.name = "c", .duration_s = 1, .channel_count = 1, .channels = &ch};
    tb_transform out[3];
    memset(out, 0xAB, sizeof out);
    tb_clip_sample(&clip, &skel, 1, out);
    assert_memory_equal(&out[0], &rest[0], sizeof rest[0]);
    assert_memory_equal(&out[2], &rest[2], sizeof rest[2]);
    /* The animated joint keeps its rest translation and scale. */
    assert_memory_equal(out[1].t, rest[1].t, sizeof rest[1].t);
    assert_memory_equal(out[1].s, rest[1].s, sizeof rest[1].s);
    assert_same_rotation(out[1].r, values + 4);

    /* No channels at all: the rest pose, bit for bit. */
    tb_clip empty = {.name = "e", .duration_s = 0, .channel_count = 0, .channels = NULL};
    tb_clip_sample(&empty, &skel, 0.3f, out);
    assert_memory_equal(out, rest, sizeof rest);
}

/* ---- skinning ---------------------------------------------------------- */

static void skin_matrices_multiply_world_by_inverse_bind(void **state)
{
    (void)state;
    float q[4];
    quat_axis(q, 0.9f, 0, 0, 1);
    tb_transform a = trs(1, 2, 3, q, 1, 2, 1), b = trs(-1, 0, 4, Q_ID, 3, 3, 3);
    float world[3][16], ibm[2][16], got[2][16];
    tb_transform_to_matrix(&a, world[0]);
    memset(world[1], 0, sizeof world[1]); /* a node the skin does not use */
    tb_transform_to_matrix(&b, world[2]);
    tb_transform_to_matrix(&b, ibm[0]);
    tb_transform_to_matrix(&a, ibm[1]);
    int nodes[2] = {2, 0};
    tb_skin_matrices(got, (const float (*)[16])world, nodes, (const float (*)[16])ibm, 2);
    for (int j = 0; j < 2; j++) {
        mat4 w, i, want;
        memcpy(w, world[nodes[j]], sizeof w);
        memcpy(i, ibm[j], sizeof i);
        glm_mat4_mul(w, i, want);
        assert_mat_near(got[j], (float *)want, EPS);
    }
}

static void skin_point_with_two_influences_is_weighted_blend(void **state)
{
    (void)state;
    float q[4];
    quat_axis(q, GLM_PI_2f, 0, 0, 1);
    tb_transform x0 = trs(1, 0, 0, Q_ID, 1, 1, 1), x1 = trs(0, 0, 3, q, 1, 1, 1);
    float mats[2][16];
    tb_transform_to_matrix(&x0, mats[0]);
    tb_transform_to_matrix(&x1, mats[1]);
    float src[3] = {1, 2, 3}, dst[3];
    /* Four slots, two used; the padding names a joint far past the skin,
     * which must never be looked up (ASan would see it). */
    uint16_t joints[4] = {0, 1, 60000, 60000};
    float weights[4] = {0.25f, 0.75f, 0, 0};
    assert_int_equal(tb_skin_points(dst, 3, src, 3, 1, joints, weights, 4,
                                    (const float (*)[16])mats, 0),
                     1);
    vec3 p0, p1;
    mat4 m0, m1;
    memcpy(m0, mats[0], sizeof m0);
    memcpy(m1, mats[1], sizeof m1);
    glm_mat4_mulv3(m0, src, 1, p0);
    glm_mat4_mulv3(m1, src, 1, p1);
    assert_vec3_near(dst, 0.25f * p0[0] + 0.75f * p1[0], 0.25f * p0[1] + 0.75f * p1[1],
                     0.25f * p0[2] + 0.75f * p1[2], EPS);
}

static void identity_pose_reproduces_bind_positions(void **state)
{
    (void)state;
    /* A rotated, scaled chain: IBMs are float inverses, so close, not exact. */
    int parents[3];
    tb_transform rest[3];
    chain3(parents, rest);
    float bind[3][16], ibm[3][16];
    tb_skeleton skel = {.joint_count = 3, .parents = parents, .rest_local = rest,
                        .bind_world = (const float (*)[16])bind};
    tb_local_to_world(&skel, rest, NULL, bind);
    for (int j = 0; j < 3; j++) {
        mat4 b, inv;
        memcpy(b, bind[j], sizeof b);
        glm_mat4_inv(b, inv);
        memcpy(ibm[j], inv, sizeof inv);
    }
    tb_clip none = {.name = "none", .duration_s = 1, .channel_count = 0, .channels = NULL};
    tb_transform pose[3];
    float world[3][16], skin[3][16];
    tb_clip_sample(&none, &skel, 0.5f, pose);
    tb_local_to_world(&skel, pose, NULL, world);
    assert_memory_equal(world, bind, sizeof world); /* world = bind_world */
    int nodes[3] = {0, 1, 2};
    tb_skin_matrices(skin, (const float (*)[16])world, nodes, (const float (*)[16])ibm, 3);
    static const float I[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    for (int j = 0; j < 3; j++)
        assert_mat_near(skin[j], I, EPS);
    float src[6] = {0.3f, 1.7f, -0.2f, -2, 2, 0.5f}, dst[6];
    uint16_t joints[8] = {0, 1, 2, 0, 2, 1, 0, 0};
    float weights[8] = {0.5f, 0.3f, 0.2f, 0, 0.6f, 0.4f, 0, 0};
    tb_skin_points(dst, 3, src, 3, 2, joints, weights, 4, (const float (*)[16])skin, 0);
    for (int i = 0; i < 6; i++)
        assert_float_equal(dst[i], src[i], EPS);

    /* Translations and power-of-two scales invert exactly: bit-exact. */
    tb_transform t0 = trs(1, 2, 3, Q_ID, 0.5f, 0.5f, 0.5f);
    tb_transform t1 = trs(-0.5f, 0.25f, 4, Q_ID, 0.5f, 0.5f, 0.5f);
    tb_transform i0 = trs(-2, -4, -6, Q_ID, 2, 2, 2);   /* (S T)^-1 */
    tb_transform i1 = trs(1, -0.5f, -8, Q_ID, 2, 2, 2);
    float w2[2][16], ib2[2][16], s2[2][16];
    tb_transform_to_matrix(&t0, w2[0]);
    tb_transform_to_matrix(&t1, w2[1]);
    tb_transform_to_matrix(&i0, ib2[0]);
    tb_transform_to_matrix(&i1, ib2[1]);
    tb_skin_matrices(s2, (const float (*)[16])w2, nodes, (const float (*)[16])ib2, 2);
    assert_memory_equal(s2[0], I, sizeof I);
    assert_memory_equal(s2[1], I, sizeof I);
    uint16_t j2[8] = {0, 1, 0, 0, 1, 0, 0, 0};
    float wt2[8] = {0.5f, 0.5f, 0, 0, 0.75f, 0.25f, 0, 0};
    tb_skin_points(dst, 3, src, 3, 2, j2, wt2, 4, (const float (*)[16])s2, 0);
    assert_memory_equal(dst, src, sizeof src);
}

/* tb_skin_point_axis is each coordinate of tb_skin_points, bit for bit
 * (the ground search reads one coordinate a point through it): random
 * matrices and points, 1 to 8 influences, with padding, negative, NaN and
 * all-zero weights mixed in. */
static void skin_point_axis_is_the_points_coordinate_bit_for_bit(void **state)
{
    (void)state;
    float mats[6][16];
    unsigned seed = 12345u;
#define RND() ((float)((seed = seed * 1103515245u + 12345u) >> 8 & 0xffff) / 32768.0f - 1.0f)
    for (int j = 0; j < 6; j++)
        for (int k = 0; k < 16; k++)
            mats[j][k] = k == 15 ? 1.0f : (k % 4 == 3 ? 0.0f : 3.0f * RND());
    for (int inf = 1; inf <= 8; inf++) {
        for (int n = 0; n < 200; n++) {
            float p[3] = {10.0f * RND(), 10.0f * RND(), 10.0f * RND()}, w[8], dst[3];
            uint16_t jt[8];
            for (int i = 0; i < inf; i++) {
                jt[i] = (uint16_t)((seed >> 20) % 6u);
                float u = RND();
                w[i] = u < -0.8f ? 0.0f : u < -0.7f ? -u : fabsf(u); /* some padding, some negative */
                (void)RND();
            }
            if (n % 50 == 7)
                w[0] = NAN;
            if (n % 50 == 9)
                for (int i = 0; i < inf; i++)
                    w[i] = 0; /* no influence: the point stays */
            tb_skin_points(dst, 3, p, 3, 1, jt, w, inf, (const float (*)[16])mats, 0);
            for (int a = 0; a < 3; a++) {
                float v = tb_skin_point_axis(p, jt, w, inf, (const float (*)[16])mats, a);
                assert_memory_equal(&v, &dst[a], sizeof v);
            }
        }
    }
#undef RND
}

static void skin_directions_ignore_translation_and_are_renormalised(void **state)
{
    (void)state;
    float q[4];
    quat_axis(q, GLM_PI_2f, 1, 0, 0);
    /* Uniform scale 3 and a big translation: a normal must come out unit
     * length and unmoved by the translation. */
    tb_transform x = trs(5, 5, 5, q, 3, 3, 3);
    float mats[1][16];
    tb_transform_to_matrix(&x, mats[0]);
    float src[6] = {0, 0, 2, 0, 0, 0}, dst[6];
    uint16_t joints[8] = {0};
    float weights[8] = {1, 0, 0, 0, 1, 0, 0, 0};
    tb_skin_points(dst, 3, src, 3, 2, joints, weights, 4, (const float (*)[16])mats, 1);
    assert_vec3_near(dst, 0, -1, 0, EPS); /* +Z turned 90 deg about X */
    /* A zero direction stays zero: no 0/0. */
    assert_vec3_near(dst + 3, 0, 0, 0, 0);

    /* Two influences that cancel exactly: zero, still finite. */
    tb_transform flip = trs(0, 0, 0, Q_ID, -1, -1, -1), id = trs(0, 0, 0, Q_ID, 1, 1, 1);
    float m2[2][16];
    tb_transform_to_matrix(&id, m2[0]);
    tb_transform_to_matrix(&flip, m2[1]);
    uint16_t j2[4] = {0, 1, 0, 0};
    float w2[4] = {0.5f, 0.5f, 0, 0};
    float n[3] = {0, 1, 0}, out[3];
    tb_skin_points(out, 3, n, 3, 1, j2, w2, 4, (const float (*)[16])m2, 1);
    for (int i = 0; i < 3; i++)
        assert_true(isfinite(out[i]));
    assert_vec3_near(out, 0, 0, 0, 0);
}

static void skin_eight_influences_blend_all_eight(void **state)
{
    (void)state;
    float mats[8][16];
    for (int j = 0; j < 8; j++) {
        tb_transform x = trs((float)(j + 1), (float)(2 * j), 0, Q_ID, 1, 1, 1);
        tb_transform_to_matrix(&x, mats[j]);
    }
    /* Two vertices so the per-vertex step of 8 is exercised too. */
    uint16_t joints[16];
    float weights[16];
    for (int i = 0; i < 8; i++) {
        joints[i] = (uint16_t)i;
        weights[i] = (float)(i + 1) / 36.0f;   /* 1..8, sum 36 */
        joints[8 + i] = (uint16_t)(7 - i);
        weights[8 + i] = i == 3 ? 1.0f : 0.0f; /* only joint 4 */
    }
    float src[6] = {1, 1, 1, 0, 0, 0}, dst[6];
    tb_skin_points(dst, 3, src, 3, 2, joints, weights, 8, (const float (*)[16])mats, 0);
    double ex = 0, ey = 0;
    for (int j = 0; j < 8; j++) {
        ex += (j + 1) / 36.0 * (j + 1);
        ey += (j + 1) / 36.0 * (2 * j);
    }
    assert_vec3_near(dst, 1 + (float)ex, 1 + (float)ey, 1, EPS);
    assert_vec3_near(dst + 3, 5, 8, 0, 0);
}

static void skin_weights_not_summing_to_one_stay_affine(void **state)
{
    (void)state;
    tb_transform x = trs(10, 0, 0, Q_ID, 1, 1, 1);
    float mats[1][16];
    tb_transform_to_matrix(&x, mats[0]);
    uint16_t joints[8] = {0};
    float weights[8] = {0.5f, 0.49f, 0, 0, 0, 0, 0, 0}; /* 2nd vertex: none */
    float src[6] = {1, 2, 3, 4, 5, 6}, dst[6];
    tb_skin_points(dst, 3, src, 3, 2, joints, weights, 4, (const float (*)[16])mats, 0);
    assert_vec3_near(dst, 11, 2, 3, EPS);   /* not 0.99 * 11 */
    assert_vec3_near(dst + 3, 4, 5, 6, 0);  /* no influence: left where it was */
}

static void skin_strided_streams_stay_inside_their_arrays(void **state)
{
    (void)state;
    enum { N = 3, SRC_STRIDE = 8, DST_STRIDE = 5 };
    float q[4];
    quat_axis(q, 0.6f, 0, 1, 0);
    tb_transform x0 = trs(0, 1, 0, q, 1, 1, 1), x1 = trs(2, 0, 0, Q_ID, 2, 2, 2);
    float mats[2][16];
    tb_transform_to_matrix(&x0, mats[0]);
    tb_transform_to_matrix(&x1, mats[1]);
    /* Interleaved position(3) normal(3) uv(2), allocated to the last byte
     * read, so ASan flags any over-read past the last vertex. */
    float *src = malloc(sizeof(float) * ((N - 1) * SRC_STRIDE + 6));
    float *pos = malloc(sizeof(float) * ((N - 1) * DST_STRIDE + 3));
    float *nrm = malloc(sizeof(float) * ((N - 1) * DST_STRIDE + 3));
    uint16_t *joints = malloc(sizeof(uint16_t) * N * 4);
    float *weights = malloc(sizeof(float) * N * 4);
    assert_non_null(src);
    assert_non_null(pos);
    assert_non_null(nrm);
    assert_non_null(joints);
    assert_non_null(weights);
    for (int v = 0; v < N; v++) {
        float *p = src + v * SRC_STRIDE;
        p[0] = (float)v;
        p[1] = 1;
        p[2] = -(float)v;
        p[3] = 0;
        p[4] = 0;
        p[5] = 1;
        if (v < N - 1) {
            p[6] = 0.5f;
            p[7] = 0.5f;
        }
        for (int i = 0; i < 4; i++) {
            joints[v * 4 + i] = (uint16_t)(i & 1);
            weights[v * 4 + i] = i < 2 ? 0.5f : 0.0f;
        }
    }
    for (int i = 0; i < (N - 1) * DST_STRIDE + 3; i++)
        pos[i] = nrm[i] = -99.0f; /* the gaps between outputs must survive */
    const float(*m)[16] = (const float (*)[16])mats;
    assert_int_equal(tb_skin_points(pos, DST_STRIDE, src, SRC_STRIDE, N, joints, weights, 4, m, 0), N);
    assert_int_equal(tb_skin_points(nrm, DST_STRIDE, src + 3, SRC_STRIDE, N, joints, weights, 4, m, 1), N);
    for (int v = 0; v < N; v++) {
        float want[3], a[3], b[3], in[3] = {(float)v, 1, -(float)v};
        mat4 m0, m1;
        memcpy(m0, mats[0], sizeof m0);
        memcpy(m1, mats[1], sizeof m1);
        glm_mat4_mulv3(m0, in, 1, a);
        glm_mat4_mulv3(m1, in, 1, b);
        for (int c = 0; c < 3; c++)
            want[c] = 0.5f * a[c] + 0.5f * b[c];
        assert_vec3_near(pos + v * DST_STRIDE, want[0], want[1], want[2], EPS);
        float n[3] = {0.5f * sinf(0.6f), 0, 0.5f * cosf(0.6f) + 0.5f * 2};
        float len = sqrtf(n[0] * n[0] + n[2] * n[2]);
        assert_vec3_near(nrm + v * DST_STRIDE, n[0] / len, 0, n[2] / len, EPS);
        if (v < N - 1) {
            assert_float_equal(pos[v * DST_STRIDE + 3], -99.0f, 0);
            assert_float_equal(pos[v * DST_STRIDE + 4], -99.0f, 0);
        }
    }
    free(src);
    free(pos);
    free(nrm);
    free(joints);
    free(weights);
}

static void skin_in_place_equals_out_of_place(void **state)
{
    (void)state;
    float q[4];
    quat_axis(q, 1.3f, 0, 0, 1);
    tb_transform x0 = trs(0.5f, 0, 2, q, 1, 1, 1), x1 = trs(0, -1, 0, Q_ID, 1.5f, 1.5f, 1.5f);
    float mats[2][16];
    tb_transform_to_matrix(&x0, mats[0]);
    tb_transform_to_matrix(&x1, mats[1]);
    float buf[8] = {1, 2, 3, 7, 4, 5, 6, 7}, out[8];
    uint16_t joints[8] = {0, 1, 0, 0, 1, 0, 0, 0};
    float weights[8] = {0.3f, 0.7f, 0, 0, 0.6f, 0.4f, 0, 0};
    const float(*m)[16] = (const float (*)[16])mats;
    tb_skin_points(out, 4, buf, 4, 2, joints, weights, 4, m, 0);
    tb_skin_points(buf, 4, buf, 4, 2, joints, weights, 4, m, 0);
    for (int v = 0; v < 2; v++)
        assert_memory_equal(buf + 4 * v, out + 4 * v, 3 * sizeof(float));
    assert_float_equal(buf[3], 7, 0);
}

static void skin_zero_count_touches_nothing(void **state)
{
    (void)state;
    assert_int_equal(tb_skin_points(NULL, 3, NULL, 3, 0, NULL, NULL, 4, NULL, 0), 0);
    tb_skin_matrices(NULL, NULL, NULL, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(transform_to_matrix_matches_cglm_trs),
        cmocka_unit_test(transform_to_matrix_treats_off_unit_quaternion_as_its_rotation),
        cmocka_unit_test(local_to_world_chain_gives_known_world_positions),
        cmocka_unit_test(local_to_world_applies_root_world_to_every_joint),
        cmocka_unit_test(local_to_world_two_roots_both_use_root_world),
        cmocka_unit_test(sample_linear_translation_interpolates_between_keys),
        cmocka_unit_test(sample_linear_rotation_takes_shorter_arc_across_sign_flip),
        cmocka_unit_test(sample_step_holds_previous_key_until_next),
        cmocka_unit_test(sample_cubicspline_matches_hermite_with_dt_scaled_tangents),
        cmocka_unit_test(sample_cubicspline_rotation_is_normalised),
        cmocka_unit_test(sample_clamps_before_first_and_after_last_key),
        cmocka_unit_test(sample_single_key_channel_holds_that_key),
        cmocka_unit_test(sample_equal_key_times_do_not_divide_by_zero),
        cmocka_unit_test(sample_keeps_rest_pose_for_joints_without_channels),
        cmocka_unit_test(skin_matrices_multiply_world_by_inverse_bind),
        cmocka_unit_test(skin_point_with_two_influences_is_weighted_blend),
        cmocka_unit_test(identity_pose_reproduces_bind_positions),
        cmocka_unit_test(skin_directions_ignore_translation_and_are_renormalised),
        cmocka_unit_test(skin_eight_influences_blend_all_eight),
        cmocka_unit_test(skin_weights_not_summing_to_one_stay_affine),
        cmocka_unit_test(skin_strided_streams_stay_inside_their_arrays),
        cmocka_unit_test(skin_in_place_equals_out_of_place),
        cmocka_unit_test(skin_zero_count_touches_nothing),
        cmocka_unit_test(skin_point_axis_is_the_points_coordinate_bit_for_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
