/* Retargeting's set-up stages (SPEC D; src/passes/retarget.c,
 * tb_retarget_run), each called alone on calibrations filled by hand: a
 * hips, a thigh and a shin (the thigh's bind direction the stage turns),
 * and a prop joint with no role. The pure stages (frame map, short arc)
 * are tested in test_retarget through retarget_internal.h; retarget.c is
 * compiled into this test for the others (static), and the library's copy
 * of it is then not linked.
 *   setup     the desc's defaults, the frame count, the clip's joints checked;
 *   match     each target joint's source joint by role, a limb's bind
 *             direction turned onto the source's (unless raw_delta);
 *   channels  rotations for the matched joints, the hips' translation,
 *             constant tracks where the stored pose differs from bind. */
#include "passes/retarget.c"

#include "support.h"

enum { HIPS, THIGH, SHIN, PROP, NJ };

typedef struct cal {
    tb_retarget_calib c;
    tb_role roles[NJ];
    uint8_t has_ibm[NJ];
    tb_transform bind_local[NJ], stored_local[NJ];
    float bind_world[NJ][16];
    float bind_rot[NJ][4];
} cal;

/* The hips at y = 1, the thigh beside them, the shin from the thigh along
 * `leg` (unit), the prop on the hips; every bind rotation the identity. */
static void cal_init(cal *k, const float leg[3])
{
    memset(k, 0, sizeof *k);
    static const tb_role roles[NJ] = {TB_ROLE_HIPS, TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG, TB_ROLE_NONE};
    const float pos[NJ][3] = {{0, 1, 0}, {0.1f, 1, 0}, {0.1f + 0.5f * leg[0], 1 + 0.5f * leg[1], 0.5f * leg[2]},
                              {0, 1.2f, -0.2f}};
    tb_retarget_calib *c = &k->c;
    *c = (tb_retarget_calib){.joint_count = NJ, .roles = k->roles, .has_ibm = k->has_ibm, .bind_local = k->bind_local,
                             .stored_local = k->stored_local, .bind_world = k->bind_world, .bind_rot = k->bind_rot,
                             .up_axis = 1, .leg_length = 1};
    for (int r = 0; r < TB_ROLE_COUNT; r++)
        c->role_joint[r] = -1;
    for (int j = 0; j < NJ; j++) {
        k->roles[j] = roles[j];
        if (roles[j] != TB_ROLE_NONE)
            c->role_joint[roles[j]] = j;
        k->has_ibm[j] = 1;
        for (int e = 0; e < 16; e++)
            k->bind_world[j][e] = e % 5 == 0 ? 1.0f : 0.0f;
        memcpy(&k->bind_world[j][12], pos[j], sizeof pos[j]);
        k->bind_rot[j][3] = 1;
        tb_transform *b = &k->bind_local[j];
        b->r[3] = 1;
        b->s[0] = b->s[1] = b->s[2] = 1;
        k->stored_local[j] = *b;
    }
}

static const float down[3] = {0, -1, 0}, back[3] = {0, 0, -1};

static tb__rt_job job_of(cal *src, cal *dst, const tb_clip *clip)
{
    tb__rt_job j;
    tb_error err;
    assert_int_equal(tb__rt_setup(&j, &src->c, clip, &dst->c, NULL, &err), TB_OK);
    tb__q_identity(j.cq);
    return j;
}

static void setup_counts_frames_and_checks_the_clip(void **state)
{
    (void)state;
    cal *src = malloc(sizeof *src), *dst = malloc(sizeof *dst);
    assert_true(src && dst);
    cal_init(src, down), cal_init(dst, down);
    tb_channel ch = {SHIN, TB_PATH_ROTATION, TB_INTERP_LINEAR, 0, NULL, NULL};
    tb_clip clip = {"walk", 1.0f, 1, &ch};
    tb__rt_job j;
    tb_error err;
    assert_int_equal(tb__rt_setup(&j, &src->c, &clip, &dst->c, NULL, &err), TB_OK);
    assert_float_equal(j.d.fps, 30, 0); /* 0: 30 fps, a smoothing of 0.1 s */
    assert_float_equal(j.d.smooth_s, 0.1f, 0);
    assert_int_equal(j.frames, 31); /* both ends */
    assert_int_equal(j.b->frame_count, 31);
    assert_string_equal(j.b->name, "walk");
    tb__rt_free(&j);
    tb_retarget_desc d = {0};
    d.fps = 10;
    clip.duration_s = 0.01f; /* shorter than a frame: still its two ends */
    assert_int_equal(tb__rt_setup(&j, &src->c, &clip, &dst->c, &d, &err), TB_OK);
    assert_int_equal(j.frames, 2);
    tb__rt_free(&j);
    clip.duration_s = 0; /* a pose: one frame */
    assert_int_equal(tb__rt_setup(&j, &src->c, &clip, &dst->c, &d, &err), TB_OK);
    assert_int_equal(j.frames, 1);
    tb__rt_free(&j);
    d.fps = -1;
    assert_int_equal(tb__rt_setup(&j, &src->c, &clip, &dst->c, &d, &err), TB_ERR_ARG);
    tb__rt_free(&j);
    ch.joint = NJ; /* outside the source's skeleton */
    assert_int_equal(tb__rt_setup(&j, &src->c, &clip, &dst->c, NULL, &err), TB_ERR_ARG);
    tb__rt_free(&j);
    free(src), free(dst);
}

/* v turned by unit quaternion q */
static void turn(float d[3], const float q[4], const float v[3])
{
    tb__qrot(d, q, v);
}

static void match_by_role_and_turn_a_limb_onto_the_source(void **state)
{
    (void)state;
    cal *src = malloc(sizeof *src), *dst = malloc(sizeof *dst);
    assert_true(src && dst);
    cal_init(src, down); /* the source's thigh straight down */
    cal_init(dst, back); /* the target's going back (a digitigrade's) */
    tb_clip clip = {"c", 1.0f, 0, NULL};
    tb__rt_job j = job_of(src, dst, &clip);
    tb__rt_match(&j);
    assert_int_equal(j.match[HIPS], HIPS);
    assert_int_equal(j.match[THIGH], THIGH);
    assert_int_equal(j.match[SHIN], SHIN);
    assert_int_equal(j.match[PROP], -1);
    /* the thigh's base turns the source's bind direction (down) onto the
     * target's (back): base⁻¹ = swing(down → back), R_bind the identity */
    float q[4], d[3];
    tb__qconj(q, j.base[THIGH]);
    turn(d, q, down);
    assert_float_equal(d[0], 0, 1e-6f);
    assert_float_equal(d[1], 0, 1e-6f);
    assert_float_equal(d[2], -1, 1e-6f);
    /* the hips (no limb) and the shin (its child, the foot, missing) keep their bind rotation */
    for (int e = 0; e < 4; e++) {
        assert_float_equal(j.base[HIPS][e], e == 3, 0);
        assert_float_equal(j.base[SHIN][e], e == 3, 0);
    }
    tb__rt_free(&j);
    /* raw_delta: no turn */
    tb_retarget_desc rd = {0};
    rd.raw_delta = 1;
    tb_error err;
    assert_int_equal(tb__rt_setup(&j, &src->c, &clip, &dst->c, &rd, &err), TB_OK);
    tb__q_identity(j.cq);
    tb__rt_match(&j);
    assert_int_equal(j.match[THIGH], THIGH);
    assert_float_equal(j.base[THIGH][3], 1, 0);
    tb__rt_free(&j);
    /* a source without a thigh: the target's is not matched */
    src->c.role_joint[TB_ROLE_LEFT_UPLEG] = -1;
    j = job_of(src, dst, &clip);
    tb__rt_match(&j);
    assert_int_equal(j.match[THIGH], -1);
    tb__rt_free(&j);
    free(src), free(dst);
}

static void channels_rotations_hips_and_constant_tracks(void **state)
{
    (void)state;
    cal *src = malloc(sizeof *src), *dst = malloc(sizeof *dst);
    assert_true(src && dst);
    cal_init(src, down), cal_init(dst, down);
    dst->stored_local[PROP].t[0] = 0.05f;   /* the prop stored away from bind: a constant translation */
    dst->stored_local[PROP].s[1] = 2;       /* and scale */
    dst->stored_local[THIGH].t[2] = 0.05f;  /* the thigh too, but it is animated in rotation only */
    dst->stored_local[HIPS].t[1] = 0.3f;    /* the hips' translation is animated anyway */
    tb_clip clip = {"c", 1.0f, 0, NULL};
    tb__rt_job j = job_of(src, dst, &clip);
    tb__rt_match(&j);
    tb__rt_channels(&j);
    const tb_retarget_bake *b = j.b;
    assert_int_equal(b->animated[HIPS], TB_RETARGET_T | TB_RETARGET_R);
    assert_int_equal(b->constant[HIPS], 0);
    assert_int_equal(b->animated[THIGH], TB_RETARGET_R);
    assert_int_equal(b->constant[THIGH], TB_RETARGET_T);
    assert_int_equal(b->animated[SHIN], TB_RETARGET_R);
    assert_int_equal(b->constant[SHIN], 0);
    assert_int_equal(b->animated[PROP], 0);
    assert_int_equal(b->constant[PROP], TB_RETARGET_T | TB_RETARGET_S);
    tb__rt_free(&j);
    /* a joint with no inverse bind matrix (an armature node): no constant track */
    dst->has_ibm[PROP] = 0;
    j = job_of(src, dst, &clip);
    tb__rt_match(&j);
    tb__rt_channels(&j);
    assert_int_equal(j.b->constant[PROP], 0);
    tb__rt_free(&j);
    free(src), free(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(setup_counts_frames_and_checks_the_clip),
        cmocka_unit_test(match_by_role_and_turn_a_limb_onto_the_source),
        cmocka_unit_test(channels_rotations_hips_and_constant_tracks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
