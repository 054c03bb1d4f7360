/* The lane code of the two batch spring steps, written once for TB__LANES
 * lanes and for both steps, included once per vector width: spring_batch.c
 * (the exact step) and spring_fast.c (the approximate one, TB__FAST defined)
 * define TB__LANES (4, 8 or 16) and TB__SUFFIX(name) before each inclusion;
 * every name below gets that suffix. One sub-step (tb__lanes_pass), one
 * block body and one output pass serve both steps; only the arithmetic
 * operations the sub-step names TB__M_* differ. Not a public header; no
 * include guard on purpose. */

#define tb__vf TB__SUFFIX(tb__vf)
#define tb__vi TB__SUFFIX(tb__vi)
#define tb__v3v TB__SUFFIX(tb__v3v)
#define tb__qv TB__SUFFIX(tb__qv)
#define tb__vs TB__SUFFIX(tb__vs)
#define tb__vsel TB__SUFFIX(tb__vsel)
#define tb__v3sel TB__SUFFIX(tb__v3sel)
#define tb__qsel TB__SUFFIX(tb__qsel)
#define tb__any TB__SUFFIX(tb__any)
#define tb__vsqrt TB__SUFFIX(tb__vsqrt)
#define tb__vmin TB__SUFFIX(tb__vmin)
#define tb__vmax TB__SUFFIX(tb__vmax)
#define tb__vabs TB__SUFFIX(tb__vabs)
#define tb__dot TB__SUFFIX(tb__dot)
#define tb__madd TB__SUFFIX(tb__madd)
#define tb__v3scale TB__SUFFIX(tb__v3scale)
#define tb__v3norm TB__SUFFIX(tb__v3norm)
#define tb__qmul TB__SUFFIX(tb__qmul)
#define tb__qconj TB__SUFFIX(tb__qconj)
#define tb__qrot TB__SUFFIX(tb__qrot)
#define tb__qnorm TB__SUFFIX(tb__qnorm)
#define tb__ortho TB__SUFFIX(tb__ortho)
#define tb__swing TB__SUFFIX(tb__swing)
#define tb__slerp TB__SUFFIX(tb__slerp)
#define tb__midpoint TB__SUFFIX(tb__midpoint)
#define tb__lane_link TB__SUFFIX(tb__lane_link)
#define tb__lane_chain TB__SUFFIX(tb__lane_chain)
#define tb__lanes_pass TB__SUFFIX(tb__lanes_pass)
#define tb__block_body TB__SUFFIX(tb__block_body)
#define tb__crowd_body TB__SUFFIX(tb__crowd_body)
#define tb__chain_frames TB__SUFFIX(tb__chain_frames)
#define tb__chain_consts TB__SUFFIX(tb__chain_consts)
#define tb__gather TB__SUFFIX(tb__gather)
#define tb__prefetch_outputs TB__SUFFIX(tb__prefetch_outputs)
#define tb__substeps TB__SUFFIX(tb__substeps)
#define tb__scatter TB__SUFFIX(tb__scatter)
#define tb__lanes_outputs TB__SUFFIX(tb__lanes_outputs)
#define tb__vrsqrt TB__SUFFIX(tb__vrsqrt)
#define tb__fnorm TB__SUFFIX(tb__fnorm)
#define tb__flen TB__SUFFIX(tb__flen)
#define tb__fsqrt TB__SUFFIX(tb__fsqrt)
#define tb__fswing TB__SUFFIX(tb__fswing)
#define tb__fslerp TB__SUFFIX(tb__fslerp)
#define tb__slerp_series TB__SUFFIX(tb__slerp_series)
#define tb__fslerp_k TB__SUFFIX(tb__fslerp_k)
#define tb__fmid TB__SUFFIX(tb__fmid)
#define tb__fconj TB__SUFFIX(tb__fconj)
#define tb__transpose TB__SUFFIX(tb__transpose)
#define tb__rows_in TB__SUFFIX(tb__rows_in)
#define tb__rows_out TB__SUFFIX(tb__rows_out)
#define tb__bend TB__SUFFIX(tb__bend)
#define tb__bdir TB__SUFFIX(tb__bdir)

typedef float tb__vf __attribute__((vector_size(4 * TB__LANES)));
typedef int32_t tb__vi __attribute__((vector_size(4 * TB__LANES)));

typedef struct tb__v3v {
    tb__vf x, y, z;
} tb__v3v;

typedef struct tb__qv {
    tb__vf x, y, z, w;
} tb__qv;

TB__VI tb__vf tb__vs(float x)
{
    tb__vf r;
    for (int k = 0; k < TB__LANES; k++)
        r[k] = x;
    return r;
}

/* a where m (all ones), b where not (all zeros): one blend instruction
 * where the target has one (AVX-512: on the compare's mask register;
 * AVX, SSE4.1: on the mask's sign bits), the bitwise select elsewhere. */
TB__VI tb__vf tb__vsel(tb__vi m, tb__vf a, tb__vf b)
{
#if TB__LANES == 16 && defined(__AVX512DQ__)
    return (tb__vf)_mm512_mask_blend_ps(_mm512_movepi32_mask((__m512i)m), (__m512)b, (__m512)a);
#elif TB__LANES == 8 && defined(__AVX512DQ__) && defined(__AVX512VL__)
    return (tb__vf)_mm256_mask_blend_ps(_mm256_movepi32_mask((__m256i)m), (__m256)b, (__m256)a);
#elif TB__LANES == 4 && defined(__AVX512DQ__) && defined(__AVX512VL__)
    return (tb__vf)_mm_mask_blend_ps(_mm_movepi32_mask((__m128i)m), (__m128)b, (__m128)a);
#elif TB__LANES == 8 && defined(__AVX__)
    return (tb__vf)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)m);
#elif TB__LANES == 4 && defined(__SSE4_1__)
    return (tb__vf)_mm_blendv_ps((__m128)b, (__m128)a, (__m128)m);
#else
    return (tb__vf)(((tb__vi)a & m) | ((tb__vi)b & ~m));
#endif
}

TB__VI tb__v3v tb__v3sel(tb__vi m, tb__v3v a, tb__v3v b)
{
    return (tb__v3v){tb__vsel(m, a.x, b.x), tb__vsel(m, a.y, b.y), tb__vsel(m, a.z, b.z)};
}

TB__VI tb__qv tb__qsel(tb__vi m, tb__qv a, tb__qv b)
{
    return (tb__qv){tb__vsel(m, a.x, b.x), tb__vsel(m, a.y, b.y), tb__vsel(m, a.z, b.z),
                    tb__vsel(m, a.w, b.w)};
}

TB__VI int tb__any(tb__vi m)
{
#if TB__LANES == 16 && defined(__AVX512F__)
    return _mm512_test_epi32_mask((__m512i)m, (__m512i)m) != 0; /* vptestmd */
#elif TB__LANES == 8 && defined(__AVX__)
    return !_mm256_testz_si256((__m256i)m, (__m256i)m); /* vptest */
#elif TB__LANES == 4 && defined(__SSE4_1__)
    return !_mm_testz_si128((__m128i)m, (__m128i)m);
#else
    int32_t r = 0;
    for (int k = 0; k < TB__LANES; k++)
        r |= m[k];
    return r != 0;
#endif
}

TB__VI tb__vf tb__vsqrt(tb__vf a)
{
    tb__vf r;
    for (int k = 0; k < TB__LANES; k++)
        r[k] = __builtin_sqrtf(a[k]);
    return r;
}

TB__VI tb__vf tb__vmin(tb__vf a, tb__vf b)
{
    return tb__vsel(a < b, a, b);
}

TB__VI tb__vf tb__vmax(tb__vf a, tb__vf b)
{
    return tb__vsel(a > b, a, b);
}

TB__VI tb__vf tb__vabs(tb__vf a)
{
    tb__vi m;
    for (int k = 0; k < TB__LANES; k++)
        m[k] = 0x7fffffff;
    return (tb__vf)((tb__vi)a & m);
}

TB__VI tb__vf tb__dot(tb__v3v a, tb__v3v b)
{
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

/* d = a + s b */
TB__VI tb__v3v tb__madd(tb__v3v a, tb__vf s, tb__v3v b)
{
    return (tb__v3v){a.x + s * b.x, a.y + s * b.y, a.z + s * b.z};
}

TB__VI tb__v3v tb__v3scale(tb__v3v a, tb__vf s)
{
    return (tb__v3v){a.x * s, a.y * s, a.z * s};
}

/* Normalises where the length is > 0 (else leaves the lane alone), returns
 * the old length: tb__v3_normalize per lane. */
TB__VI tb__vf tb__v3norm(tb__v3v *v)
{
    const tb__vf l = tb__vsqrt(tb__dot(*v, *v));
    const tb__vi pos = l > tb__vs(0.0f);
    const tb__vf inv = tb__vs(1.0f) / tb__vsel(pos, l, tb__vs(1.0f));
    v->x *= inv;
    v->y *= inv;
    v->z *= inv;
    return l;
}

TB__VI tb__qv tb__qmul(tb__qv a, tb__qv b)
{
    return (tb__qv){a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                    a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                    a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                    a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}

TB__VI tb__qv tb__qconj(tb__qv a)
{
    return (tb__qv){-a.x, -a.y, -a.z, a.w};
}

TB__VI tb__v3v tb__qrot(tb__qv q, tb__v3v v)
{
    const tb__vf two = tb__vs(2.0f);
    const tb__vf tx = two * (q.y * v.z - q.z * v.y);
    const tb__vf ty = two * (q.z * v.x - q.x * v.z);
    const tb__vf tz = two * (q.x * v.y - q.y * v.x);
    return (tb__v3v){v.x + q.w * tx + (q.y * tz - q.z * ty), v.y + q.w * ty + (q.z * tx - q.x * tz),
                     v.z + q.w * tz + (q.x * ty - q.y * tx)};
}

/* Unit, or the identity where the length is 0 (tb__q_normalize). */
TB__VI tb__qv tb__qnorm(tb__qv q)
{
    const tb__vf l = tb__vsqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
    const tb__vi pos = l > tb__vs(0.0f);
    const tb__vf inv = tb__vs(1.0f) / tb__vsel(pos, l, tb__vs(1.0f));
    const tb__vf z = tb__vs(0.0f);
    return (tb__qv){tb__vsel(pos, q.x * inv, z), tb__vsel(pos, q.y * inv, z),
                    tb__vsel(pos, q.z * inv, z), tb__vsel(pos, q.w * inv, tb__vs(1.0f))};
}

/* glm_vec3_ortho per lane: (-y, x - f z, f y), f = frac(|x| + 1/2). */
TB__VI tb__v3v tb__ortho(tb__v3v v)
{
    const tb__vf y = tb__vabs(v.x) + tb__vs(0.5f);
    const tb__vf f = y - __builtin_convertvector(__builtin_convertvector(y, tb__vi), tb__vf);
    return (tb__v3v){-v.y, v.x - f * v.z, f * v.y};
}

/* swing(a, b) per lane (tbmath.h's tb__q_swing): shortest rotation taking unit a to unit b. */
TB__VI tb__qv tb__swing(tb__v3v a, tb__v3v b)
{
    const tb__vf c = tb__dot(a, b);
    tb__qv d = tb__qnorm((tb__qv){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z,
                                  a.x * b.y - a.y * b.x, tb__vs(1.0f) + c});
    const tb__vi opp = c < tb__vs(-1.0f + 1e-6f);
    if (tb__any(opp)) {
        tb__v3v ax = tb__ortho(a);
        tb__v3norm(&ax);
        d = tb__qsel(opp, (tb__qv){ax.x, ax.y, ax.z, tb__vs(0.0f)}, d);
    }
    return d;
}

/* Shortest-path slerp(a, b, t) per lane, t the same in every lane, as
 * tb__q_slerp (core/tbmath.h) computes it: the weights of a normalised lerp where the two are
 * within 2.6° (dot above 0.9995), which is where the solver spends its
 * time; libm's acos and sin only in the lanes beyond that, so the result is
 * the reference's bit for bit. */
TB__VI tb__qv tb__slerp(const tb__qv *pa, const tb__qv *pb, const tb__vf *pt)
{
    const tb__qv a = *pa, b = *pb;
    const tb__vf t = *pt;
    tb__vf c = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    const tb__vi neg = c < tb__vs(0.0f);
    const tb__vf sg = tb__vsel(neg, tb__vs(-1.0f), tb__vs(1.0f));
    c = tb__vabs(c);
    tb__vf wa = tb__vs(1.0f) - t, wb = t * sg;
    const tb__vi far = c <= tb__vs(0.9995f);
    if (tb__any(far)) {
        for (int k = 0; k < TB__LANES; k++) {
            if (!far[k])
                continue;
            const float th = acosf(c[k]), sn = sinf(th);
            wa[k] = sinf((1.0f - t[k]) * th) / sn;
            wb[k] = sinf(t[k] * th) / sn * sg[k];
        }
    }
    return tb__qnorm((tb__qv){wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z,
                              wa * a.w + wb * b.w});
}

/* slerp(a, b, 1/2): the normalised sum with the nearer sign (tb__q_midpoint). */
TB__VI tb__qv tb__midpoint(tb__qv a, tb__qv b)
{
    const tb__vf c = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    const tb__vf sg = tb__vsel(c < tb__vs(0.0f), tb__vs(-1.0f), tb__vs(1.0f));
    return tb__qnorm((tb__qv){a.x + sg * b.x, a.y + sg * b.y, a.z + sg * b.z, a.w + sg * b.w});
}


/* Rows against lanes: TB__LANES rows of 16 32-bit words (one row per lane,
 * e.g. a tb__link's run of fields or a world matrix) against 16 vectors
 * (word j of every row), by an in-register transpose: log2(TB__LANES)
 * rounds of full-width interleaves (v[2i], v[2i+1] = the low and high
 * halves of v[i] and v[i + TB__LANES/2] interleaved) instead of one scalar
 * load or store per word and lane. */
#ifndef TB__SHUF
#if defined(__clang__)
#define TB__SHUF(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define TB__SHUF(a, b, ...) __builtin_shuffle(a, b, (tb__vi){__VA_ARGS__})
#endif
#if defined(__clang__)
#define TB__UNROLL _Pragma("unroll")
#else
#define TB__UNROLL _Pragma("GCC unroll 16")
#endif
#endif

TB__VI void tb__transpose(tb__vf *v)
{
    for (int round = 1; round < TB__LANES; round *= 2) {
        tb__vf t[TB__LANES];
        TB__UNROLL
        for (int i = 0; i < TB__LANES / 2; i++) {
            const tb__vf a = v[i], b = v[i + TB__LANES / 2];
#if TB__LANES == 16
            t[2 * i] = TB__SHUF(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            t[2 * i + 1] =
                TB__SHUF(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
#elif TB__LANES == 8
            t[2 * i] = TB__SHUF(a, b, 0, 8, 1, 9, 2, 10, 3, 11);
            t[2 * i + 1] = TB__SHUF(a, b, 4, 12, 5, 13, 6, 14, 7, 15);
#else
            t[2 * i] = TB__SHUF(a, b, 0, 4, 1, 5);
            t[2 * i + 1] = TB__SHUF(a, b, 2, 6, 3, 7);
#endif
        }
        TB__UNROLL
        for (int i = 0; i < TB__LANES; i++)
            v[i] = t[i];
    }
}

/* out[j][k] = rows[k][j], j < 16, k < TB__LANES. */
TB__VI void tb__rows_in(const float *const *rows, tb__vf *out)
{
    for (int h = 0; h < 16; h += TB__LANES) {
        tb__vf v[TB__LANES];
        TB__UNROLL
        for (int k = 0; k < TB__LANES; k++)
            memcpy(&v[k], rows[k] + h, sizeof v[k]);
        tb__transpose(v);
        TB__UNROLL
        for (int j = 0; j < TB__LANES; j++)
            out[h + j] = v[j];
    }
}

/* rows[k][j] = in[j][k], j < 16, for every k < TB__LANES whose rows[k] is
 * not NULL. */
TB__VI void tb__rows_out(const tb__vf *in, float *const *rows)
{
    for (int h = 0; h < 16; h += TB__LANES) {
        tb__vf v[TB__LANES];
        TB__UNROLL
        for (int j = 0; j < TB__LANES; j++)
            v[j] = in[h + j];
        tb__transpose(v);
        TB__UNROLL
        for (int k = 0; k < TB__LANES; k++)
            if (rows[k])
                memcpy(rows[k] + h, &v[k], sizeof v[k]);
    }
}

/* One link of every chain of a block, in lanes. */
typedef struct tb__lane_link {
    /* Constants (tb__link). */
    tb__v3v t, sc;
    tb__qv A, qhat;
    tb__vf lambda, sigma, omega2, damp;
#ifdef TB__FAST
    /* The approximate step's link frames (tb__bend): t and r turned by A
     * into the hips frame, once, when the links are gathered. */
    tb__v3v At, Ar;
#else
    tb__v3v r;
#endif
    /* State. bend_old: the bend each link's coupling reads (the last
     * sub-step's; the walk writes a link's new bend there once every
     * link's coupling target has been taken from the old ones). */
    tb__v3v p, v;
    tb__qv q, bend_old;
    tb__v3v head, target;
    tb__vf length;
    tb__vi contact;
} tb__lane_link;

/* A block's chains, in lanes: the anchor at the previous and this frame
 * and the chain's constants for this frame's sub-step length. */
typedef struct tb__lane_chain {
    tb__v3v o0, o1;
    tb__qv r0, r1;
    tb__vf s0, s1;
    tb__qv ba_conj;
    tb__vf h; /* each chain's sub-step length (a batch's items may differ) */
    tb__vf alpha, keep, floor_y, gravity, cos_half, sin_half;
    tb__vi ground_on, coupled;
    /* The approximate step: the coupling slerp's weights as polynomials in
     * cos θ − 1 (tb__slerp_series of 1 − alpha and of alpha). */
    tb__vf wa[11], wb[11];
    /* The end joint's local (the identity where the chain has none). */
    tb__v3v end_t, end_sc;
    tb__qv end_q;
} tb__lane_chain;

#ifdef TB__FAST
/* ------------------------------------------------------------------------
 * The approximate step (spring_fast.c): the same sub-step with the same
 * branches, cheaper arithmetic. No trigonometry: slerp is a normalised lerp
 * within 2.6° (as in the reference) and a series in cos θ beyond; no square
 * root or division where a reciprocal square root with one Newton step does
 * (the hardware estimate on x86, 1/sqrt elsewhere); no renormalisation of
 * products of unit quaternions; A q A⁻¹ as a rotation of q's vector part.
 * spring_fast.c is built with FMA contraction. */

/* 1/sqrt(x) for x > 0: the hardware estimate refined by one Newton step
 * (relative error about 1e-7 after it), or 1/sqrt where there is none. */
TB__VI tb__vf tb__vrsqrt(tb__vf x)
{
#if TB__LANES == 16 && defined(__AVX512F__)
    const tb__vf y = (tb__vf)_mm512_rsqrt14_ps((__m512)x);
#elif TB__LANES == 8 && defined(__AVX__)
    const tb__vf y = (tb__vf)_mm256_rsqrt_ps((__m256)x);
#elif TB__LANES == 4 && defined(__SSE__) && (defined(__x86_64__) || defined(__i386__))
    const tb__vf y = (tb__vf)_mm_rsqrt_ps((__m128)x);
#elif defined(__SSE__) && (defined(__x86_64__) || defined(__i386__))
    tb__vf y;
    for (int k = 0; k < TB__LANES; k += 4) {
        __m128 e = _mm_rsqrt_ps(_mm_set_ps(x[k + 3], x[k + 2], x[k + 1], x[k]));
        float f[4];
        _mm_storeu_ps(f, e);
        for (int j = 0; j < 4; j++)
            y[k + j] = f[j];
    }
#endif
#if (TB__LANES == 16 && defined(__AVX512F__)) || (TB__LANES == 8 && defined(__AVX__)) ||                         \
    (defined(__SSE__) && (defined(__x86_64__) || defined(__i386__)))
    return y * (tb__vs(1.5f) - tb__vs(0.5f) * x * y * y);
#else
    return tb__vs(1.0f) / tb__vsqrt(x);
#endif
}

/* sqrt(max(x, 0)) as x/sqrt(x); 0 at 0. */
TB__VI tb__vf tb__fsqrt(tb__vf x)
{
    const tb__vi pos = x > tb__vs(1e-30f);
    return tb__vsel(pos, x * tb__vrsqrt(tb__vsel(pos, x, tb__vs(1.0f))), tb__vs(0.0f));
}

/* Normalises where the squared length is > 0 (else leaves the lane alone);
 * returns the squared length. */
TB__VI tb__vf tb__fnorm(tb__v3v *v)
{
    const tb__vf l2 = tb__dot(*v, *v);
    const tb__vi pos = l2 > tb__vs(1e-36f);
    const tb__vf inv = tb__vsel(pos, tb__vrsqrt(tb__vsel(pos, l2, tb__vs(1.0f))), tb__vs(1.0f));
    v->x *= inv;
    v->y *= inv;
    v->z *= inv;
    return l2;
}

/* |v| (0 where |v|² is at most 1e-30), v made unit where tb__fnorm
 * makes it: tb__fsqrt of tb__fnorm's squared length, with fnorm's
 * reciprocal root reused (the same estimate of the same value, so the
 * same bits) instead of a second estimate and Newton step. */
TB__VI tb__vf tb__flen(tb__v3v *v)
{
    const tb__vf l2 = tb__dot(*v, *v);
    const tb__vi pos = l2 > tb__vs(1e-36f);
    const tb__vf y = tb__vrsqrt(tb__vsel(pos, l2, tb__vs(1.0f)));
    const tb__vf inv = tb__vsel(pos, y, tb__vs(1.0f));
    v->x *= inv;
    v->y *= inv;
    v->z *= inv;
    return tb__vsel(l2 > tb__vs(1e-30f), l2 * y, tb__vs(0.0f));
}

/* a q a⁻¹ for a unit a: q's vector part turned by a, w kept. */
TB__VI tb__qv tb__fconj(tb__qv a, tb__qv q)
{
    const tb__v3v u = tb__qrot(a, (tb__v3v){q.x, q.y, q.z});
    return (tb__qv){u.x, u.y, u.z, q.w};
}

/* swing(a, b) for unit a, b: (a × b, 1 + a·b) / sqrt(2 (1 + a·b)); half a
 * turn about a perpendicular where they are opposite. */
TB__VI tb__qv tb__fswing(tb__v3v a, tb__v3v b)
{
    const tb__vf c = tb__dot(a, b);
    const tb__vi opp = c < tb__vs(-1.0f + 1e-6f);
    const tb__vf w = tb__vs(1.0f) + c;
    const tb__vf k = tb__vrsqrt(tb__vsel(opp, tb__vs(1.0f), w + w));
    tb__qv d = {(a.y * b.z - a.z * b.y) * k, (a.z * b.x - a.x * b.z) * k,
                (a.x * b.y - a.y * b.x) * k, w * k};
    if (tb__any(opp)) {
        tb__v3v ax = tb__ortho(a);
        tb__fnorm(&ax);
        d = tb__qsel(opp, (tb__qv){ax.x, ax.y, ax.z, tb__vs(0.0f)}, d);
    }
    return d;
}

/* Shortest-path slerp(a, b, t) for unit a, b without trigonometry: the
 * normalised lerp where they are within 2.6° (dot above 0.9995, as the
 * reference); beyond, the weights sin(uθ)/sin θ (u = 1 − t and t) from
 * their series in x = cos θ − 1 (Eberly, "A fast and accurate algorithm for
 * computing SLERP", 2011): b_0 = u, b_i = b_{i−1} (u² − i²) / (i (2i + 1)),
 * sum b_i x^i. Ten terms: relative weight error below 1e-7 for θ < 40°
 * (bends 80° apart), about 1e-4 at the worst case θ = 90°. */
TB__VI void tb__slerp_series(tb__vf u, tb__vf *b)
{
    const tb__vf u2 = u * u;
    b[0] = u;
    for (int i = 1; i <= 10; i++)
        b[i] = b[i - 1] * (u2 - tb__vs((float)(i * i))) * tb__vs(1.0f / (float)(i * (2 * i + 1)));
}

/* slerp(a, b, t) with t's series weights wa (of 1 − t) and wb (of t) from
 * tb__slerp_series: a polynomial of degree 10 in x each, by Estrin's scheme
 * (a short dependency chain: this is on the sub-step's critical path). */
TB__VI tb__qv tb__fslerp_k(tb__qv a, tb__qv b, const tb__vf *wa_k, const tb__vf *wb_k)
{
    tb__vf c = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    const tb__vf sg = tb__vsel(c < tb__vs(0.0f), tb__vs(-1.0f), tb__vs(1.0f));
    c = tb__vabs(c);
    const tb__vi far = c <= tb__vs(0.9995f);
    tb__vf wa = wa_k[0], wb = wb_k[0];
    if (tb__any(far)) { /* the series only when some lane needs it */
        const tb__vf x = c - tb__vs(1.0f), x2 = x * x, x4 = x2 * x2, x8 = x4 * x4;
#define TB__ESTRIN(k)                                                                              \
    (((k)[0] + (k)[1] * x) + ((k)[2] + (k)[3] * x) * x2 +                                          \
     (((k)[4] + (k)[5] * x) + ((k)[6] + (k)[7] * x) * x2) * x4 +                                   \
     (((k)[8] + (k)[9] * x) + (k)[10] * x2) * x8)
        wa = tb__vsel(far, TB__ESTRIN(wa_k), wa);
        wb = tb__vsel(far, TB__ESTRIN(wb_k), wb);
#undef TB__ESTRIN
    }
    wb *= sg;
    const tb__qv d = {wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z,
                      wa * a.w + wb * b.w};
    const tb__vf k = tb__vrsqrt(d.x * d.x + d.y * d.y + d.z * d.z + d.w * d.w);
    return (tb__qv){d.x * k, d.y * k, d.z * k, d.w * k};
}

/* slerp(a, b, t) for any t (the anchor between two frames): the series
 * only when some lane is past 2.6°. */
TB__VI tb__qv tb__fslerp(tb__qv a, tb__qv b, tb__vf t)
{
    tb__vf wa[11], wb[11];
    const tb__vf c = tb__vabs(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
    if (tb__any(c <= tb__vs(0.9995f))) {
        tb__slerp_series(tb__vs(1.0f) - t, wa);
        tb__slerp_series(t, wb);
    } else {
        for (int i = 1; i <= 10; i++) /* not used: every lane takes */
            wa[i] = wb[i] = tb__vs(0.0f); /* the normalised lerp's weights */
        wa[0] = tb__vs(1.0f) - t;
        wb[0] = t;
    }
    return tb__fslerp_k(a, b, wa, wb);
}

/* slerp(a, b, 1/2): the normalised sum with the nearer sign. */
TB__VI tb__qv tb__fmid(tb__qv a, tb__qv b)
{
    const tb__vf c = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    const tb__vf sg = tb__vsel(c < tb__vs(0.0f), tb__vs(-1.0f), tb__vs(1.0f));
    tb__qv d = {a.x + sg * b.x, a.y + sg * b.y, a.z + sg * b.z, a.w + sg * b.w};
    const tb__vf n2 = d.x * d.x + d.y * d.y + d.z * d.z + d.w * d.w;
    const tb__vi pos = n2 > tb__vs(1e-30f);
    const tb__vf k = tb__vrsqrt(tb__vsel(pos, n2, tb__vs(1.0f)));
    const tb__vf z = tb__vs(0.0f);
    return (tb__qv){tb__vsel(pos, d.x * k, z), tb__vsel(pos, d.y * k, z),
                    tb__vsel(pos, d.z * k, z), tb__vsel(pos, d.w * k, tb__vs(1.0f))};
}

#endif /* TB__FAST */

/* ------------------------------------------------------------------------
 * One sub-step of a block, written once for both batch steps: the scalar
 * reference's tb__chain_pass (snap = 0) in lanes, same order, same
 * branches (each a per-lane select), anchor frame (Fo, Fr, Fs), sub-step
 * length C->h (per lane: a batch's items may step by different dt). The arithmetic that differs between the two steps goes
 * through the TB__M_* operations: the exact step's (spring_batch.c) are
 * the reference's own (square roots, divisions, libm's acos/sin past 2.6°,
 * renormalised products), so its state is the reference's bit for bit;
 * the approximate step's (spring_fast.c, TB__FAST) are the ones above.
 * Values that do not change during a sub-step (the hip-plane normal's
 * horizontal part, the coupling's neighbour targets from the last
 * sub-step's snapshot) are computed before the walk down the chain in
 * both: the same values, off the serial path. */
#ifdef TB__FAST
/* v unit where |v| > thr (else left alone): the mask of those lanes. */
#define TB__M_UNIT_GT(v, thr) (tb__fnorm(v) > (thr) * (thr))
#define TB__M_TINY tb__vs(1e-18f) /* |v| > 0, as fnorm sees it */
#define TB__M_NORM(v) ((void)tb__fnorm(v))
#define TB__M_LEN(v) tb__flen(v)             /* |v|, v made unit */
#define TB__M_SQRT0(x) tb__fsqrt(x)          /* sqrt(max(x, 0)) */
#define TB__M_DIV(x, y, inv_y) ((x) * (inv_y))
#define TB__M_MID(a, b) tb__fmid(a, b)
#define TB__M_COUPLE(q, bar, C) tb__fslerp_k(q, bar, (C)->wa, (C)->wb)
#else
#define TB__M_UNIT_GT(v, thr) (tb__v3norm(v) > (thr))
#define TB__M_TINY tb__vs(0.0f)
#define TB__M_NORM(v) ((void)tb__v3norm(v))
#define TB__M_LEN(v) tb__v3norm(v)
#define TB__M_SQRT0(x) tb__vsqrt(tb__vmax(tb__vs(0.0f), x))
#define TB__M_DIV(x, y, inv_y) ((x) / (y))
#define TB__M_MID(a, b) tb__midpoint(a, b)
#define TB__M_COUPLE(q, bar, C) tb__slerp(&(q), &(bar), &(C)->alpha)
#endif

/* The frame F each link hangs from, its bend q (hips frame) from its
 * direction d (world), and d back from q. The exact step keeps the
 * reference's: F = Pr, the parent's world rotation; the swing s of the
 * rest direction r onto Pr⁻¹ d, q = A s A⁻¹ (s is kept: the link's local
 * rotation is s qhat); d = Pr A⁻¹ q A r. The approximate step keeps
 * F = Pr A⁻¹ instead, the hips frame turned by the bends above the link:
 * since A_{i+1} = A_i qhat_i (tb__chain_prepare), it starts at the hips'
 * frame and advances by each bend (F q), and a link's rest vectors turn by
 * it once A has turned them (At = A t, Ar = A r, per frame): q is the
 * swing of Ar onto F⁻¹ d, d = F q Ar; two rotations and a product fewer
 * per link, and the local rotation A⁻¹ q A qhat only at the last sub-step. */
#ifdef TB__FAST
#define TB__M_T(l) ((l)->At)
#define TB__M_R(l) ((l)->Ar)
TB__VI tb__qv tb__bend(tb__qv F, const tb__lane_link *l, tb__v3v d, tb__qv *s)
{
    const tb__qv q = tb__fswing(l->Ar, tb__qrot(tb__qconj(F), d));
    *s = q; /* not used */
    return q;
}

TB__VI tb__v3v tb__bdir(tb__qv F, const tb__lane_link *l, tb__qv q, tb__qv *s)
{
    *s = q; /* not used */
    return tb__qrot(F, tb__qrot(q, l->Ar));
}
#else
#define TB__M_T(l) ((l)->t)
#define TB__M_R(l) ((l)->r)
TB__VI tb__qv tb__bend(tb__qv F, const tb__lane_link *l, tb__v3v d, tb__qv *s)
{
    tb__v3v dl = tb__qrot(tb__qconj(F), d);
    tb__v3norm(&dl);
    *s = tb__swing(l->r, dl);
    return tb__qmul(tb__qmul(l->A, *s), tb__qconj(l->A));
}

TB__VI tb__v3v tb__bdir(tb__qv F, const tb__lane_link *l, tb__qv q, tb__qv *s)
{
    *s = tb__qmul(tb__qmul(tb__qconj(l->A), q), l->A);
    tb__v3v d = tb__qrot(F, tb__qrot(*s, l->r));
    tb__v3norm(&d);
    return d;
}
#endif

TB__VI void tb__lanes_pass(tb__lane_link *L, int n, const tb__lane_chain *C, tb__v3v Fo,
                           tb__qv Fr, tb__vf Fs, int last)
{
    const tb__vf zero = tb__vs(0.0f), one = tb__vs(1.0f), h = C->h;
    const tb__vf inv_h = one / h;
    (void)inv_h;
    const tb__qv hips = tb__qmul(Fr, C->ba_conj);
    const tb__v3v nf = tb__qrot(hips, (tb__v3v){zero, zero, one});
    tb__v3v nh = {nf.x, zero, nf.z};
    const tb__vf nhl = TB__M_LEN(&nh);
    tb__v3v Po = Fo;
#ifdef TB__FAST
    tb__qv F = hips; /* A_0 = b_a */
#else
    tb__qv F = Fr;
#endif
    tb__vf Ps = Fs;
    const tb__v3v root = tb__madd(Po, Ps, tb__qrot(F, TB__M_T(&L[0])));
    const tb__vf floor_y = C->floor_y;
    tb__qv bar[TB__LANE_MAX_LINKS];
    const int coupled = n >= 2 && tb__any(C->coupled);
    if (coupled)
        for (int i = 0; i < n; i++) {
            if (i == 0)
                bar[i] = TB__M_MID(((tb__qv){zero, zero, zero, one}), L[1].bend_old);
            else if (i == n - 1)
                bar[i] = L[n - 2].bend_old;
            else
                bar[i] = TB__M_MID(L[i - 1].bend_old, L[i + 1].bend_old);
        }

    for (int i = 0; i < n; i++) {
        tb__lane_link *l = &L[i];
        const tb__v3v hd = tb__madd(Po, Ps, tb__qrot(F, TB__M_T(l)));
        const tb__vf ell = Ps * l->lambda;
        const tb__vf inv_ell = one / ell;
        (void)inv_ell;
        const tb__v3v rest_w = tb__qrot(F, TB__M_R(l));
        const tb__v3v T = tb__madd(hd, ell, rest_w);

        /* Spring, semi-implicit Euler. */
        tb__v3v v = l->v, p = l->p;
        v.x += h * (l->omega2 * (T.x - p.x) - l->damp * v.x);
        v.y += h * (l->omega2 * (T.y - p.y) - l->damp * v.y - C->gravity);
        v.z += h * (l->omega2 * (T.z - p.z) - l->damp * v.z);
        p.x += h * v.x;
        p.y += h * v.y;
        p.z += h * v.z;

        /* Rope. */
        tb__v3v d = {p.x - hd.x, p.y - hd.y, p.z - hd.z};
        const tb__vi long_enough = TB__M_UNIT_GT(&d, tb__vs(1e-9f) * tb__vmax(ell, one));
        d = tb__v3sel(long_enough, d, rest_w);
        v = tb__madd(v, -tb__dot(v, d), d);

        /* Bend coupling and limit in the hips frame. */
        tb__qv s;
        tb__qv q = tb__bend(F, l, d, &s);
        tb__vi changed = C->coupled;
        if (coupled)
            q = tb__qsel(changed, TB__M_COUPLE(q, bar[i], C), q);
        else
            changed = (tb__vi){0};
        tb__vi limited = tb__vabs(q.w) < C->cos_half;
        if (tb__any(limited)) {
            const tb__vf sg = tb__vsel(q.w < zero, tb__vs(-1.0f), one);
            tb__v3v ax = {sg * q.x, sg * q.y, sg * q.z};
            limited &= TB__M_UNIT_GT(&ax, TB__M_TINY);
            const tb__qv ql = {ax.x * C->sin_half, ax.y * C->sin_half, ax.z * C->sin_half,
                               C->cos_half};
            q = tb__qsel(limited, ql, q);
            changed |= limited;
        }
        if (tb__any(changed)) {
            const tb__v3v before = d;
            tb__qv s2;
            const tb__v3v d2 = tb__bdir(F, l, q, &s2);
            tb__v3v shift = tb__v3scale((tb__v3v){d2.x - before.x, d2.y - before.y,
                                                  d2.z - before.z},
                                        ell);
            const tb__vf slen = TB__M_LEN(&shift);
            const tb__vf back = -tb__dot(v, shift);
            const tb__vi push = (slen > zero) & (h > zero) & (back > zero) & changed;
            v = tb__v3sel(push, tb__madd(v, tb__vmin(back, TB__M_DIV(slen, h, inv_h)), shift), v);
            d = tb__v3sel(changed, d2, d);
            s = tb__qsel(changed, s2, s);
        }
        if (tb__any(limited)) {
            tb__v3v tau = tb__madd(rest_w, -tb__dot(rest_w, d), d);
            tau = (tb__v3v){-tau.x, -tau.y, -tau.z};
            const tb__vi ok = TB__M_UNIT_GT(&tau, tb__vs(1e-6f));
            const tb__vf vt = tb__dot(v, tau);
            v = tb__v3sel(limited & ok & (vt > zero), tb__madd(v, -vt, tau), v);
        }

        /* Hip plane. */
        const tb__v3v off = {hd.x - root.x, hd.y - root.y, hd.z - root.z};
        const tb__vf head_off = tb__dot(off, nf);
        const tb__vf mmax = TB__M_DIV(-head_off, ell, inv_ell);
        const tb__vf dn = tb__dot(d, nf);
        const tb__vi plane = (mmax < one) & (dn > mmax);
        tb__vi moved = plane;
        if (tb__any(plane)) {
            tb__v3v tt = tb__madd(d, -dn, nf);
            const tb__vi bad = ~TB__M_UNIT_GT(&tt, tb__vs(1e-6f)) & plane;
            if (tb__any(bad)) {
                tb__v3v t2 = tb__madd(rest_w, -tb__dot(rest_w, nf), nf);
                const tb__vi bad2 = ~TB__M_UNIT_GT(&t2, tb__vs(1e-6f));
                tb__v3v t3 = tb__ortho(nf);
                TB__M_NORM(&t3);
                tt = tb__v3sel(bad, tb__v3sel(bad2, t3, t2), tt);
            }
            const tb__vf m = tb__vmax(mmax, tb__vs(-1.0f));
            const tb__vf k2 = TB__M_SQRT0(one - m * m);
            d = tb__v3sel(plane, tb__madd(tb__v3scale(nf, m), k2, tt), d);
            const tb__vf vn = tb__dot(v, nf);
            v = tb__v3sel(plane & (vn > zero), tb__madd(v, -vn, nf), v);
        }

        /* Ground contact. */
        const tb__vi contact = C->ground_on & (hd.y + ell * d.y < floor_y);
        if (tb__any(contact)) {
            tb__vf u = TB__M_DIV(floor_y - hd.y, ell, inv_ell);
            u = tb__vmin(tb__vmax(u, tb__vs(-1.0f)), one);
            /* unit horizontal parts: of d, else of the rest direction, else
             * of the backward normal, else -Z */
            tb__v3v t = {d.x, zero, d.z};
            const tb__vi ok1 = TB__M_UNIT_GT(&t, tb__vs(1e-6f));
            if (tb__any(~ok1 & contact)) {
                tb__v3v t2 = {rest_w.x, zero, rest_w.z};
                const tb__vi ok2 = TB__M_UNIT_GT(&t2, tb__vs(1e-6f));
                tb__v3v t3 = {-nf.x, zero, -nf.z};
                const tb__vi ok3 = TB__M_UNIT_GT(&t3, tb__vs(1e-6f));
                const tb__v3v t4 = {zero, zero, tb__vs(-1.0f)};
                t = tb__v3sel(ok1, t, tb__v3sel(ok2, t2, tb__v3sel(ok3, t3, t4)));
            }
            const tb__vf rad = TB__M_SQRT0(one - u * u);
            const tb__vi room = (rad > tb__vs(1e-6f)) & (nhl > tb__vs(1e-6f));
            /* bound is read only where room */
            const tb__vf bound = (mmax - u * nf.y) / tb__vsel(room, rad * nhl, one);
            const tb__vf tn = tb__dot(t, nh);
            const tb__vi clip = room & (tn > bound) & contact;
            if (tb__any(clip)) {
                const tb__vf kk = tb__vmax(bound, tb__vs(-1.0f));
                tb__v3v perp = tb__madd(t, -tn, nh);
                const tb__vi pok = TB__M_UNIT_GT(&perp, tb__vs(1e-6f));
                perp = tb__v3sel(pok, perp, (tb__v3v){-nh.z, zero, nh.x});
                const tb__vf kp = TB__M_SQRT0(one - kk * kk);
                t = tb__v3sel(clip, tb__madd(tb__v3scale(nh, kk), kp, perp), t);
            }
            d = tb__v3sel(contact, (tb__v3v){rad * t.x, u, rad * t.z}, d);
            moved |= contact;
        }

        p = tb__madd(hd, ell, d);
        v = tb__madd(v, -tb__dot(v, d), d);
        {
            const tb__vf keep = tb__vsel(contact, C->keep, one);
            v.y = tb__vsel(contact & (v.y < zero), zero, v.y);
            v.x *= keep;
            v.y *= keep;
            v.z *= keep;
        }

        if (tb__any(moved)) {
            tb__qv sm;
            const tb__qv qm = tb__bend(F, l, d, &sm);
            s = tb__qsel(moved, sm, s);
            q = tb__qsel(moved, qm, q);
        }
#ifdef TB__FAST
        if (last) /* the local rotation s qhat = A⁻¹ q A qhat */
            l->q = tb__qmul(tb__fconj(tb__qconj(l->A), q), l->qhat);
#else
        const tb__qv lq = tb__qnorm(tb__qmul(s, l->qhat));
        l->q = lq;
#endif
        l->bend_old = q; /* the targets (bar) are taken: tb__lanes_pass's head */
        if (last) { /* read only after the frame's last sub-step */
            l->head = hd;
            l->target = T;
            l->length = ell;
            l->contact = contact;
        }
        l->p = p;
        l->v = v;

        Po = hd;
#ifdef TB__FAST
        F = tb__qmul(F, q);
#else
        F = tb__qnorm(tb__qmul(F, lq));
#endif
        Ps = Ps * l->sigma;
    }
}

#undef TB__M_UNIT_GT
#undef TB__M_TINY
#undef TB__M_NORM
#undef TB__M_LEN
#undef TB__M_SQRT0
#undef TB__M_DIV
#undef TB__M_MID
#undef TB__M_COUPLE
#undef TB__M_T
#undef TB__M_R


/* The block's tail locals and world matrices, as tb__write_outputs (spring.c)
 * computes them (tb_transform_to_matrix, then cglm's parent * local with its
 * sums in the same order), for the chains whose outputs may go in lanes
 * (lane_out_ok); their lane_out tells tb__write_outputs_rest to skip them. */
TB__VI void tb__lanes_outputs(const tb__bucket *b, int n, const tb__lane_link *L,
                              const tb__lane_chain *C)
{
    tb__vf P[16], M[16], W[16];
    {
        const float *rows[TB__LANES];
        for (int k = 0; k < TB__LANES; k++) {
            const tb__entry *e = &b->e[k < b->count ? k : 0];
            rows[k] = e->world[TB__ANCHOR(e)];
        }
        tb__rows_in(rows, P);
    }
    const tb__vf zero = tb__vs(0.0f), one = tb__vs(1.0f);
    for (int i = 0; i <= n; i++) {
        tb__qv q;
        tb__v3v t, sc;
        if (i < n) {
            q = L[i].q;
            t = L[i].t;
            sc = L[i].sc;
        } else {
            q = C->end_q;
            t = C->end_t;
            sc = C->end_sc;
        }
        const tb__vf n2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
        const tb__vi pos = n2 > zero;
        const tb__vf kq = tb__vsel(pos, tb__vs(2.0f) / tb__vsel(pos, n2, one), zero);
        const tb__vf xx = kq * q.x * q.x, yy = kq * q.y * q.y, zz = kq * q.z * q.z;
        const tb__vf xy = kq * q.x * q.y, xz = kq * q.x * q.z, yz = kq * q.y * q.z;
        const tb__vf wx = kq * q.w * q.x, wy = kq * q.w * q.y, wz = kq * q.w * q.z;
        M[0] = (one - (yy + zz)) * sc.x;
        M[1] = (xy + wz) * sc.x;
        M[2] = (xz - wy) * sc.x;
        M[3] = zero;
        M[4] = (xy - wz) * sc.y;
        M[5] = (one - (xx + zz)) * sc.y;
        M[6] = (yz + wx) * sc.y;
        M[7] = zero;
        M[8] = (xz + wy) * sc.z;
        M[9] = (yz - wx) * sc.z;
        M[10] = (one - (xx + yy)) * sc.z;
        M[11] = zero;
        M[12] = t.x;
        M[13] = t.y;
        M[14] = t.z;
        M[15] = one;
        for (int c = 0; c < 4; c++)
            for (int r = 0; r < 4; r++)
                W[c * 4 + r] = P[r] * M[c * 4] + P[4 + r] * M[c * 4 + 1] +
                               P[8 + r] * M[c * 4 + 2] + P[12 + r] * M[c * 4 + 3];
        float *rows[TB__LANES];
        for (int k = 0; k < TB__LANES; k++) {
            rows[k] = NULL;
            if (k >= b->count)
                continue;
            const tb__entry *e = &b->e[k];
            if (!TB__OUT_OK(e))
                continue;
            int joint;
            tb_transform *x;
            if (i < n) { /* from the lanes: a crowd leaves the links alone */
                joint = TB__JOINT(e, i);
                x = &e->locals[joint];
                x->t[0] = L[i].t.x[k];
                x->t[1] = L[i].t.y[k];
                x->t[2] = L[i].t.z[k];
                x->r[0] = L[i].q.x[k];
                x->r[1] = L[i].q.y[k];
                x->r[2] = L[i].q.z[k];
                x->r[3] = L[i].q.w[k];
                x->s[0] = L[i].sc.x[k];
                x->s[1] = L[i].sc.y[k];
                x->s[2] = L[i].sc.z[k];
            } else {
                joint = TB__END(e);
                if (joint < 0)
                    continue;
                x = &e->locals[joint];
                x->t[0] = C->end_t.x[k];
                x->t[1] = C->end_t.y[k];
                x->t[2] = C->end_t.z[k];
                x->r[0] = C->end_q.x[k];
                x->r[1] = C->end_q.y[k];
                x->r[2] = C->end_q.z[k];
                x->r[3] = C->end_q.w[k];
                x->s[0] = C->end_sc.x[k];
                x->s[1] = C->end_sc.y[k];
                x->s[2] = C->end_sc.z[k];
            }
            if (e->world_out)
                rows[k] = e->world_out[joint];
        }
        tb__rows_out(W, rows);
        for (int j = 0; j < 16; j++)
            P[j] = W[j];
    }
    for (int k = 0; k < b->count; k++)
        if (!b->e[k].ids && b->e[k].chain->lane_out_ok)
            b->e[k].chain->lane_out = 1;
}

/* A block's anchor frames, at the previous frame and this one, in lanes.
 * Unused lanes repeat lane 0. */
TB__VI void tb__chain_frames(const tb__bucket *b, tb__lane_chain *C)
{
    for (int k = 0; k < TB__LANES; k++) {
        const tb__entry *e = &b->e[k < b->count ? k : 0];
        TB__SET3(C->o0, k, e->prev.o);
        TB__SET3(C->o1, k, e->cur.o);
        TB__SET4(C->r0, k, e->prev.r);
        TB__SET4(C->r1, k, e->cur.r);
        C->s0[k] = e->prev.s;
        C->s1[k] = e->cur.s;
    }
}

/* A block's chains' constants for sub-steps of their entries' h (rates,
 * limits, the end joint's local), in lanes. Unused lanes repeat lane 0. */
TB__VI void tb__chain_consts(const tb__bucket *b, int n, tb__lane_chain *C)
{
    float rate_k = 0.0f, rate_g = 0.0f, rate_h = 0.0f;
    static const float id_t[3] = {0.0f, 0.0f, 0.0f}, id_s[3] = {1.0f, 1.0f, 1.0f},
                       id_q[4] = {0.0f, 0.0f, 0.0f, 1.0f};
    for (int k = 0; k < TB__LANES; k++) {
        const tb__entry *e = &b->e[k < b->count ? k : 0];
        const tb__chain *c = e->chain;
        const float h = e->h;
        const float ba[4] = {-c->b_a[0], -c->b_a[1], -c->b_a[2], c->b_a[3]};
        TB__SET4(C->ba_conj, k, ba);
        C->h[k] = h;
        /* The same rates and sub-step as the lane before (a crowd shares
         * them): the same exponentials, without calling expf again. */
        if (k > 0 && c->coupling == rate_k && c->gamma == rate_g && h == rate_h) {
            C->alpha[k] = C->alpha[k - 1];
            C->keep[k] = C->keep[k - 1];
        } else {
            C->alpha[k] = n < 2 ? 0.0f : 1.0f - expf(-c->coupling * h);
            C->keep[k] = expf(-c->gamma * h);
        }
        rate_k = c->coupling;
        rate_g = c->gamma;
        rate_h = h;
        C->coupled[k] = C->alpha[k] > 0.0f ? -1 : 0;
        C->floor_y[k] = c->ground_y + c->clearance;
        C->gravity[k] = c->gravity;
        C->cos_half[k] = c->cos_half_max;
        C->sin_half[k] = c->sin_half_max;
        C->ground_on[k] = c->ground_on ? -1 : 0;
        const int has = c->end_joint >= 0;
        TB__SET3(C->end_t, k, has ? c->end_t : id_t);
        TB__SET4(C->end_q, k, has ? c->end_q : id_q);
        TB__SET3(C->end_sc, k, has ? c->end_sc : id_s);
    }
#ifdef TB__FAST
    tb__slerp_series(tb__vs(1.0f) - C->alpha, C->wa);
    tb__slerp_series(C->alpha, C->wb);
#endif
}

/* The links' fields into lanes, three runs of 16 words per link (the runs'
 * layout: TB__RUN_* in spring_bucket.h). Unused lanes repeat lane 0. */
TB__VI void tb__gather(const tb__bucket *b, int n, tb__lane_link *L)
{
    for (int i = 0; i < n; i++) {
        const float *rows[TB__LANES];
        tb__vf w[16];
        tb__lane_link *x = &L[i];
        for (int k = 0; k < TB__LANES; k++)
            rows[k] = (const float *)&b->e[k < b->count ? k : 0].links[i] + TB__RUN_T;
        tb__rows_in(rows, w); /* t, q0, sc, sigma, lambda, ... */
        x->t = (tb__v3v){w[0], w[1], w[2]};
        x->sc = (tb__v3v){w[7], w[8], w[9]};
        x->sigma = w[10];
        x->lambda = w[11];
        for (int k = 0; k < TB__LANES; k++)
            rows[k] += TB__RUN_R - TB__RUN_T;
        tb__rows_in(rows, w); /* r, A, qhat, omega2, damp, p */
        const tb__v3v r = {w[0], w[1], w[2]};
        x->A = (tb__qv){w[3], w[4], w[5], w[6]};
        x->qhat = (tb__qv){w[7], w[8], w[9], w[10]};
        x->omega2 = w[11];
        x->damp = w[12];
        x->p = (tb__v3v){w[13], w[14], w[15]};
        for (int k = 0; k < TB__LANES; k++)
            rows[k] += TB__RUN_V - TB__RUN_R;
        tb__rows_in(rows, w); /* v, q, bend, bend_old, ... */
        x->v = (tb__v3v){w[0], w[1], w[2]};
        x->q = (tb__qv){w[3], w[4], w[5], w[6]};
        x->bend_old = (tb__qv){w[11], w[12], w[13], w[14]}; /* the walk overwrites bend */
#ifdef TB__FAST
        x->At = tb__qrot(x->A, x->t);
        x->Ar = tb__qrot(x->A, r);
#else
        x->r = r;
#endif
    }
}

/* The output rows the block writes (locals and world matrices of the links
 * and end joints): they load while the sub-steps run. */
TB__VI void tb__prefetch_outputs(const tb__bucket *b, int n)
{
    for (int k = 0; k < b->count; k++) {
        const tb__entry *e = &b->e[k];
        if (!TB__OUT_OK(e))
            continue;
        for (int i = 0; i <= n; i++) {
            const int j = i < n ? TB__JOINT(e, i) : TB__END(e);
            if (j < 0)
                continue;
            __builtin_prefetch(&e->locals[j], 1);
            if (e->world_out)
                __builtin_prefetch(e->world_out[j], 1);
        }
    }
}

/* The frame's sub-steps, the anchor moving from C's o0, r0, s0 to o1, r1, s1. */
TB__VI void tb__substeps(const tb__bucket *b, int n, tb__lane_link *L, const tb__lane_chain *C)
{
    for (int s = 1; s <= b->steps; s++) {
        if (s == b->steps)
            tb__lanes_pass(L, n, C, C->o1, C->r1, C->s1, 1);
        else {
            const float tf = (float)s / (float)b->steps;
            const tb__vf t = tb__vs(tf);
            const tb__v3v o = {C->o0.x + t * (C->o1.x - C->o0.x),
                               C->o0.y + t * (C->o1.y - C->o0.y),
                               C->o0.z + t * (C->o1.z - C->o0.z)};
            const tb__vf sc = C->s0 + t * (C->s1 - C->s0);
#ifdef TB__FAST
            const tb__qv r = tb__fslerp(C->r0, C->r1, t);
#else
            const tb__qv r = tb__slerp(&C->r0, &C->r1, &t);
#endif
            tb__lanes_pass(L, n, C, o, r, sc, 0);
        }
    }
}

/* The state back into the links, two runs of 16 words per link (p …
 * bend_old, bend … contact; the overlap is written twice with the same
 * words). Unused lanes are not written. */
TB__VI void tb__scatter(const tb__bucket *b, int n, const tb__lane_link *L)
{
    for (int i = 0; i < n; i++) {
        const tb__lane_link *x = &L[i];
        float *rows[TB__LANES];
        for (int k = 0; k < TB__LANES; k++)
            rows[k] = k < b->count ? (float *)&b->e[k].links[i] + TB__RUN_P : NULL;
        const tb__vf w1[16] = {x->p.x, x->p.y, x->p.z, x->v.x, x->v.y, x->v.z,
                               x->q.x, x->q.y, x->q.z, x->q.w, x->bend_old.x, x->bend_old.y,
                               x->bend_old.z, x->bend_old.w, x->bend_old.x, x->bend_old.y};
        tb__rows_out(w1, rows);
        for (int k = 0; k < b->count; k++)
            rows[k] += TB__RUN_BEND - TB__RUN_P;
        const tb__vf w2[16] = {x->bend_old.x, x->bend_old.y, x->bend_old.z, x->bend_old.w,
                               x->bend_old.x, x->bend_old.y, x->bend_old.z, x->bend_old.w,
                               x->head.x, x->head.y,
                               x->head.z, x->target.x, x->target.y, x->target.z,
                               x->length, (tb__vf)(x->contact & 1)};
        tb__rows_out(w2, rows);
    }
}

/* Gathers a bucket's chains (n links each) into lanes, runs the frame's
 * sub-steps, scatters the state back, writes the outputs. */
static inline __attribute__((always_inline)) void tb__block_body(const tb__bucket *b, int n)
{
    tb__lane_link L[TB__LANE_MAX_LINKS];
    tb__lane_chain C;
    tb__chain_frames(b, &C);
    tb__chain_consts(b, n, &C);
    tb__gather(b, n, L);
    tb__prefetch_outputs(b, n);
    tb__substeps(b, n, L, &C);
    tb__scatter(b, n, L);
    tb__lanes_outputs(b, n, L, &C);
}

/* A crowd's block (tb_spring_crowd_step): the lanes kept between frames,
 * n tb__lane_link then the block's tb__lane_chain (the links gathered
 * first when `gather`, the chains' constants computed first when
 * `consts`), the frame's sub-steps, the outputs; the links are left as
 * they were (tb__scatter writes them back when the crowd syncs). */
static inline __attribute__((always_inline)) void tb__crowd_body(const tb__bucket *b, int n,
                                                                 void *lanes, int gather,
                                                                 int consts)
{
    tb__lane_link *L = lanes;
    tb__lane_chain *C = (tb__lane_chain *)(L + n);
    tb__chain_frames(b, C);
    if (consts)
        tb__chain_consts(b, n, C);
    if (gather)
        tb__gather(b, n, L);
    tb__prefetch_outputs(b, n);
    tb__substeps(b, n, L, C);
    tb__lanes_outputs(b, n, L, C);
}

#ifdef TB__FAST
_Static_assert(sizeof(tb__lane_link) == TB__LANE_LINK_VECS * 4 * TB__LANES,
               "TB__LANE_LINK_VECS: the vectors of a tb__lane_link");
#endif
_Static_assert(sizeof(tb__lane_chain) == TB__LANE_CHAIN_VECS * 4 * TB__LANES,
               "TB__LANE_CHAIN_VECS: the vectors of a tb__lane_chain");

#undef tb__vf
#undef tb__vi
#undef tb__v3v
#undef tb__qv
#undef tb__vs
#undef tb__vsel
#undef tb__v3sel
#undef tb__qsel
#undef tb__any
#undef tb__vsqrt
#undef tb__vmin
#undef tb__vmax
#undef tb__vabs
#undef tb__dot
#undef tb__madd
#undef tb__v3scale
#undef tb__v3norm
#undef tb__qmul
#undef tb__qconj
#undef tb__qrot
#undef tb__qnorm
#undef tb__ortho
#undef tb__swing
#undef tb__slerp
#undef tb__midpoint
#undef tb__lane_link
#undef tb__lane_chain
#undef tb__lanes_pass
#undef tb__block_body
#undef tb__crowd_body
#undef tb__chain_frames
#undef tb__chain_consts
#undef tb__gather
#undef tb__prefetch_outputs
#undef tb__substeps
#undef tb__scatter
#undef tb__lanes_outputs
#undef tb__vrsqrt
#undef tb__fnorm
#undef tb__flen
#undef tb__fsqrt
#undef tb__fswing
#undef tb__fslerp
#undef tb__slerp_series
#undef tb__fslerp_k
#undef tb__fmid
#undef tb__fconj
#undef tb__transpose
#undef tb__rows_in
#undef tb__rows_out
#undef tb__bend
#undef tb__bdir
