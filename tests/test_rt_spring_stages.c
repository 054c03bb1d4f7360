/* The spring's chain pass (SPEC B; src/runtime/spring.c, tb__chain_pass),
 * stage by stage: each forced-inline stage called alone on one link and
 * the step record (tb__link_step) and sub-step record (tb__pass) filled by
 * hand, its answer worked out on paper. spring.c is compiled into this
 * test (its stages are static, inlined into the pass for speed); the
 * runtime library's copy of it is then not linked.
 *   target     the head, length and rest target from the parent's frame;
 *   integrate  semi-implicit Euler, or the rest target with snap;
 *   rope       back onto the length sphere, the radial velocity dropped;
 *   bend       coupling toward the neighbours, the bend limit;
 *   bind limit within θb of the bind direction;
 *   hip plane  no tip past the plane through the root;
 *   ground     pivoted onto the floor at the bone's own length;
 *   settle     the particle on the direction, contact damping;
 *   rotate     the bone's rotation, the next link's parent frame. */
#include "runtime/spring.c"

#include "support.h"

static void v3_near(const float *a, float x, float y, float z, float tol)
{
    assert_float_equal(a[0], x, tol);
    assert_float_equal(a[1], y, tol);
    assert_float_equal(a[2], z, tol);
}

/* A frame at o, turned by angle_rad about axis (unit), of scale s. */
static tb__frame frame(float ox, float oy, float oz, const float axis[3], float angle_rad, float s)
{
    tb__frame f;
    tb__v3_set(f.o, ox, oy, oz);
    const float h = 0.5f * angle_rad;
    f.r[0] = axis[0] * sinf(h), f.r[1] = axis[1] * sinf(h), f.r[2] = axis[2] * sinf(h), f.r[3] = cosf(h);
    f.s = s;
    return f;
}

static const float Y[3] = {0, 1, 0}, Z[3] = {0, 0, 1};

static void target_is_the_rest_direction_from_the_parents_frame(void **state)
{
    (void)state;
    tb__frame P = frame(1, 2, 3, Y, 0.5f * (float)TB_PI, 2.0f); /* +90° about Y: x → -z */
    tb__link l = {0};
    tb__v3_set(l.t, 0, 1, 0);
    l.lambda = 0.5f;
    tb__v3_set(l.r, 1, 0, 0);
    tb__link_step k;
    tb__link_target(&P, &l, &k);
    v3_near(k.hd, 1, 4, 3, 1e-5f);      /* o + s R t */
    assert_float_equal(k.ell, 1.0f, 1e-6f); /* s λ */
    v3_near(k.rest_w, 0, 0, -1, 1e-5f);  /* R r */
    v3_near(k.T, 1, 4, 2, 1e-5f);       /* hd + ℓ rest_w */
}

static void integrate_velocity_first_then_position(void **state)
{
    (void)state;
    tb__pass ps = {0};
    ps.h = 0.01f;
    tb__v3_set(ps.gravity, 0, -10, 0);
    tb__link l = {0};
    l.omega2 = 100, l.damp = 4;
    tb__link_step k = {0};
    tb__v3_set(k.T, 0, 0, 0);
    tb__v3_set(l.p, 1, 0, 0);
    tb__v3_set(l.v, 0, 0, 2);
    tb__link_integrate(&ps, &l, &k);
    /* v += h (ω²(T − p) − 2ζω v + g); p += h v (the new v) */
    v3_near(l.v, -1.0f, -0.1f, 2.0f - 0.08f, 1e-5f);
    v3_near(l.p, 1.0f - 0.01f, -0.001f, 0.0192f, 1e-6f);
    ps.snap = 1; /* snap: on the target, at rest */
    tb__v3_set(k.T, 3, 4, 5);
    tb__link_integrate(&ps, &l, &k);
    v3_near(l.p, 3, 4, 5, 0);
    v3_near(l.v, 0, 0, 0, 0);
}

static void rope_keeps_the_length_and_the_swing(void **state)
{
    (void)state;
    tb__link l = {0};
    tb__link_step k = {0};
    tb__v3_set(k.hd, 1, 1, 1);
    k.ell = 1;
    tb__v3_set(k.rest_w, 0, -1, 0);
    tb__v3_set(l.p, 3, 1, 1); /* 2 from the head along +x */
    tb__v3_set(l.v, 3, 4, 0);
    tb__link_rope(&l, &k);
    v3_near(k.d, 1, 0, 0, 1e-6f);
    v3_near(l.v, 0, 4, 0, 1e-6f); /* the radial part gone, the swing kept */
    tb__v3_copy(l.p, k.hd);      /* on the head: no direction, the rest one */
    tb__link_rope(&l, &k);
    v3_near(k.d, 0, -1, 0, 0);
}

/* One link hanging straight down (r = -y, A = I) in the identity frame,
 * its particle swung to +x: the swing is 90° about +z. */
static void hanging_link(tb__link *l, tb__link_step *k)
{
    memset(l, 0, sizeof *l);
    memset(k, 0, sizeof *k);
    tb__v3_set(l->r, 0, -1, 0);
    tb__q_identity(l->A);
    tb__q_identity(l->bend_old);
    k->ell = 1;
    tb__v3_set(k->rest_w, 0, -1, 0);
    tb__v3_set(k->d, 1, 0, 0);
}

static void bend_limit_turns_back_to_the_limit(void **state)
{
    (void)state;
    const float zax[3] = {0, 0, 1};
    tb__frame P = frame(0, 0, 0, zax, 0, 1);
    tb__chain c = {0};
    c.cos_half_max = cosf(0.5f * (30.0f * (float)TB_PI / 180.0f)); /* θmax 30° */
    c.sin_half_max = sinf(0.5f * (30.0f * (float)TB_PI / 180.0f));
    tb__pass ps = {0};
    ps.h = 0.01f; /* alpha 0: no coupling */
    tb__link L[1];
    tb__link_step k;
    hanging_link(&L[0], &k);
    tb__v3_set(L[0].v, 0.8660254f, 0.5f, 1.0f); /* pushing on past the limit, and along z */
    tb__link_bend(&c, L, 0, 1, &ps, &P, &L[0], &k);
    v3_near(k.d, 0.5f, -0.8660254f, 0, 1e-5f); /* 30° from straight down, toward +x */
    assert_float_equal(2.0f * acosf(fabsf(k.q[3])), 30.0f * (float)TB_PI / 180.0f, 1e-4f);
    /* τ, the way away from rest, is (cos 30°, sin 30°, 0): none of v along it is left */
    assert_float_equal(L[0].v[0] * 0.8660254f + L[0].v[1] * 0.5f, 0.0f, 1e-5f);
    assert_float_equal(L[0].v[2], 1.0f, 1e-6f);
    /* no limit (cos = -1): the swing as it was */
    c.cos_half_max = -1.0f;
    hanging_link(&L[0], &k);
    tb__link_bend(&c, L, 0, 1, &ps, &P, &L[0], &k);
    v3_near(k.d, 1, 0, 0, 0);
    assert_float_equal(2.0f * acosf(fabsf(k.q[3])), 0.5f * (float)TB_PI, 1e-5f);
}

static void bend_coupling_pulls_toward_the_neighbours(void **state)
{
    (void)state;
    const float zax[3] = {0, 0, 1};
    tb__frame P = frame(0, 0, 0, zax, 0, 1);
    tb__chain c = {0};
    c.cos_half_max = -1.0f;
    tb__pass ps = {0};
    ps.h = 0.01f;
    ps.alpha = 0.5f;
    tb__link L[2];
    tb__link_step k, k1;
    hanging_link(&L[0], &k);
    hanging_link(&L[1], &k1);
    /* the base's neighbours: the hips (I) and link 1 at rest: a 90° swing
     * is taken half way back, to 45° */
    tb__link_bend(&c, L, 0, 2, &ps, &P, &L[0], &k);
    v3_near(k.d, 0.70710678f, -0.70710678f, 0, 1e-5f);
    /* the free tip's one neighbour, bent 90° itself: no pull */
    tb__v3_set(k1.d, 1, 0, 0);
    const float half = 0.70710678f;
    tb__v3_set(L[0].bend_old, 0, 0, half), L[0].bend_old[3] = half;
    tb__link_bend(&c, L, 1, 2, &ps, &P, &L[1], &k1);
    v3_near(k1.d, 1, 0, 0, 1e-5f);
}

static void bind_limit_keeps_within_its_angle_of_the_bind_direction(void **state)
{
    (void)state;
    const float zax[3] = {0, 0, 1};
    tb__frame P = frame(0, 0, 0, zax, 0, 1);
    tb__chain c = {0};
    c.cos_bind_max = cosf(30.0f * (float)TB_PI / 180.0f);
    c.sin_bind_max = sinf(30.0f * (float)TB_PI / 180.0f);
    tb__link l;
    tb__link_step k;
    hanging_link(&l, &k);
    tb__v3_set(l.bind_dir, 0, -1, 0);
    tb__v3_set(l.v, 1, 0, 0);
    tb__link_bind_limit(&c, &P, &l, &k);
    assert_int_equal(k.bound, 1);
    v3_near(k.d, 0.5f, -0.8660254f, 0, 1e-5f);
    assert_float_equal(l.v[0] * 0.8660254f + l.v[1] * 0.5f, 0.0f, 1e-5f);
    /* within it: untouched */
    tb__v3_set(k.d, 0.25f, -0.9682458f, 0);
    tb__link_bind_limit(&c, &P, &l, &k);
    assert_int_equal(k.bound, 0);
    v3_near(k.d, 0.25f, -0.9682458f, 0, 0);
    /* none asked (cos -2) */
    c.cos_bind_max = -2.0f;
    tb__v3_set(k.d, 1, 0, 0);
    tb__link_bind_limit(&c, &P, &l, &k);
    assert_int_equal(k.bound, 0);
}

static void hip_plane_stops_the_tip_at_the_plane(void **state)
{
    (void)state;
    tb__pass ps = {0};
    tb__v3_set(ps.nf, 0, 0, 1);
    tb__link l = {0};
    tb__link_step k = {0};
    tb__v3_set(k.hd, 0, 0, -0.5f); /* half a length behind the plane */
    k.ell = 1;
    tb__v3_set(k.rest_w, 0, -1, 0);
    tb__v3_set(k.d, 0, 0.6f, 0.8f);
    tb__v3_set(l.v, 1, 0, 2);
    tb__link_hip_plane(&ps, &l, &k);
    assert_int_equal(k.moved, 1);
    assert_float_equal(k.head_off, -0.5f, 1e-6f);
    /* the tip on the plane, in the plane of d and nf, at the bone's length */
    v3_near(k.d, 0, 0.8660254f, 0.5f, 1e-5f);
    v3_near(l.v, 1, 0, 0, 0); /* no velocity through the plane */
    tb__v3_set(k.d, 0, -0.8f, 0.2f); /* within it: d·nf 0.24, under 0.5 */
    tb__v3_normalize(k.d);
    float before[3];
    tb__v3_copy(before, k.d);
    tb__link_hip_plane(&ps, &l, &k);
    assert_int_equal(k.moved, 0);
    v3_near(k.d, before[0], before[1], before[2], 0);
}

static void ground_pivots_onto_the_floor_at_full_length(void **state)
{
    (void)state;
    tb__chain c = {0};
    c.ground_on = 1;
    tb__pass ps = {0};
    ps.floor_y = 0.1f;
    tb__v3_set(ps.nf, 0, 0, 1);
    tb__link l = {0};
    tb__link_step k = {0};
    tb__v3_set(k.hd, 0, 0.6f, 0);
    k.ell = 1;
    k.mmax = 1; /* the plane far ahead */
    tb__v3_set(k.rest_w, 0, -1, 0);
    tb__v3_set(k.d, 0.6f, -0.8f, 0); /* the tip at y -0.2, under the floor */
    tb__link_ground(&c, &ps, &l, &k);
    assert_int_equal(l.contact, 1);
    assert_int_equal(k.moved, 1);
    v3_near(k.d, 0.8660254f, -0.5f, 0, 1e-5f); /* the tip at 0.1, heading on along +x */
    c.ground_on = 0;
    tb__v3_set(k.d, 0.6f, -0.8f, 0);
    tb__link_ground(&c, &ps, &l, &k);
    assert_int_equal(l.contact, 0);
    v3_near(k.d, 0.6f, -0.8f, 0, 0);
}

static void settle_puts_the_particle_on_the_direction(void **state)
{
    (void)state;
    tb__pass ps = {0};
    ps.contact_keep = 0.5f;
    tb__link l = {0};
    tb__link_step k = {0};
    tb__v3_set(k.hd, 1, 2, 3);
    k.ell = 2;
    tb__v3_set(k.d, 1, 0, 0);
    tb__v3_set(l.v, 5, -2, 4);
    l.contact = 0;
    tb__link_settle(&ps, &l, &k);
    v3_near(l.p, 3, 2, 3, 0);
    v3_near(l.v, 0, -2, 4, 0); /* tangent */
    tb__v3_set(l.v, 5, -2, 4);
    l.contact = 1; /* no downward speed; damped */
    tb__link_settle(&ps, &l, &k);
    v3_near(l.v, 0, 0, 2, 0);
}

static void rotate_writes_the_bone_and_hands_on_the_frame(void **state)
{
    (void)state;
    tb__frame P = frame(0, 0, 0, Z, 0, 1.5f);
    tb__link l;
    tb__link_step k;
    hanging_link(&l, &k);
    tb__q_identity(l.qhat);
    l.sigma = 2;
    tb__v3_set(k.hd, 0, 1, 0);
    tb__v3_set(k.T, 0, 0, 0);
    tb__q_identity(k.pinv);
    /* moved by the ground: the swing is built again from d (−y to +x: 90° about +z) */
    tb__q_identity(k.s);
    k.moved = 1;
    tb__link_rotate(&P, &l, &k);
    assert_float_equal(l.q[2], 0.70710678f, 1e-5f);
    assert_float_equal(l.q[3], 0.70710678f, 1e-5f);
    assert_float_equal(l.bend[2], 0.70710678f, 1e-5f); /* A = I: the bend is the swing */
    v3_near(l.head, 0, 1, 0, 0);
    assert_float_equal(l.length, 1.0f, 0);
    v3_near(P.o, 0, 1, 0, 0); /* the child's frame: at the head, turned, scaled */
    assert_float_equal(P.r[2], 0.70710678f, 1e-5f);
    assert_float_equal(P.s, 3.0f, 0);
    /* not moved: s as the bend left it */
    hanging_link(&l, &k);
    tb__q_identity(l.qhat);
    l.sigma = 1;
    tb__q_identity(k.s);
    tb__q_identity(k.q);
    P = frame(0, 0, 0, Z, 0, 1);
    tb__link_rotate(&P, &l, &k);
    assert_float_equal(l.q[3], 1.0f, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(target_is_the_rest_direction_from_the_parents_frame),
        cmocka_unit_test(integrate_velocity_first_then_position),
        cmocka_unit_test(rope_keeps_the_length_and_the_swing),
        cmocka_unit_test(bend_limit_turns_back_to_the_limit),
        cmocka_unit_test(bend_coupling_pulls_toward_the_neighbours),
        cmocka_unit_test(bind_limit_keeps_within_its_angle_of_the_bind_direction),
        cmocka_unit_test(hip_plane_stops_the_tip_at_the_plane),
        cmocka_unit_test(ground_pivots_onto_the_floor_at_full_length),
        cmocka_unit_test(settle_puts_the_particle_on_the_direction),
        cmocka_unit_test(rotate_writes_the_bone_and_hands_on_the_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
