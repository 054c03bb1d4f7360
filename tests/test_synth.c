/* Synthetic characters (tailbone/synth.h): every variant is a valid 1.9 m
 * humanoid, byte-identical per seed, and its ground truth agrees with its
 * geometry and weights. */
#include "synth/synth_json.h"
#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/model.h"
#include "tailbone/runtime.h"
#include "tailbone/synth.h"

/* Builds, saves to a tmp file and reloads through tb_doc_load, so what is
 * checked is what a user's file holds. */
static tb_doc *build_and_reload(const char *variant, const tb_synth_desc *desc, json_t **truth)
{
    tb_doc *doc = NULL;
    tb_error err = {0};
    tb_result r = tb_synth_build_json(&doc, variant, desc, truth, &err);
    if (r != TB_OK)
        fail_msg("%s: build failed: %s %s", variant, err.where, err.message);
    char name[128];
    snprintf(name, sizeof name, "%s.glb", variant);
    const char *path = tbt_tmp_path(name);
    assert_int_equal(tb_doc_save(doc, path, &err), TB_OK);
    tb_doc_free(doc);
    tb_doc *back = NULL;
    r = tb_doc_load(&back, path, NULL, &err);
    if (r != TB_OK)
        fail_msg("%s: reload failed: %s %s", variant, err.where, err.message);
    assert_int_equal(tb_doc_warning_count(back), 0);
    return back;
}

static double jnum(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        fail_msg("truth: '%s' missing", key);
    return json_number_value(v);
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s)
        fail_msg("truth: '%s' missing", key);
    return s;
}

/* Skeleton segments in bind space (SPEC A1: terminal joints get half their
 * incoming bone as an extension). */
typedef struct segs {
    int n;
    float a[64][3], b[64][3];
} segs;

static void bind_pos(const tb_model *m, int j, float out[3])
{
    out[0] = m->skel.bind_world[j][12];
    out[1] = m->skel.bind_world[j][13];
    out[2] = m->skel.bind_world[j][14];
}

static void skeleton_segments(const tb_model *m, segs *s)
{
    s->n = 0;
    for (int j = 0; j < m->skel.joint_count; j++) {
        if (!m->skel.has_ibm[j])
            continue;
        int p = m->skel.parents[j], children = 0;
        if (p >= 0 && m->skel.has_ibm[p]) {
            bind_pos(m, p, s->a[s->n]);
            bind_pos(m, j, s->b[s->n]);
            s->n++;
        }
        for (int c = 0; c < m->skel.joint_count; c++)
            children += m->skel.parents[c] == j;
        if (!children && p >= 0) {
            float pj[3], pp[3];
            bind_pos(m, j, pj);
            bind_pos(m, p, pp);
            for (int k = 0; k < 3; k++) {
                s->a[s->n][k] = pj[k];
                s->b[s->n][k] = pj[k] + 0.5f * (pj[k] - pp[k]);
            }
            s->n++;
        }
    }
}

static float seg_dist(const float p[3], const float a[3], const float b[3])
{
    float ab[3], ap[3], d = 0, l = 0;
    for (int k = 0; k < 3; k++) {
        ab[k] = b[k] - a[k];
        ap[k] = p[k] - a[k];
        d += ab[k] * ap[k];
        l += ab[k] * ab[k];
    }
    float t = l > 0 ? d / l : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float e = 0;
    for (int k = 0; k < 3; k++)
        e += (ap[k] - t * ab[k]) * (ap[k] - t * ab[k]);
    return sqrtf(e);
}

static float skel_dist(const segs *s, const float p[3])
{
    float best = INFINITY;
    for (int i = 0; i < s->n; i++) {
        float d = seg_dist(p, s->a[i], s->b[i]);
        best = d < best ? d : best;
    }
    return best;
}

/* Skin joint index of a role, via the model's tables. */
static int skin_joint_of_role(const tb_model *m, tb_role role)
{
    int j = m->role_joint[role];
    for (int k = 0; k < m->skin_joint_count; k++)
        if (m->skin_joints[k] == j)
            return k;
    return -1;
}

static float weight_on(const tb_model *m, size_t v, int skin_joint)
{
    float w = 0;
    for (int q = 0; q < m->influences; q++)
        if (m->weights[v * (size_t)m->influences + (size_t)q] > 0 &&
            m->joints[v * (size_t)m->influences + (size_t)q] == skin_joint)
            w += m->weights[v * (size_t)m->influences + (size_t)q];
    return w;
}

static void variant_names_are_listed_and_found(void **state)
{
    (void)state;
    int n = tb_synth_variant_count();
    assert_true(n >= 15);
    for (int i = 0; i < n; i++) {
        const char *name = tb_synth_variant_name(i);
        assert_non_null(name);
        assert_non_null(tb_synth_variant_summary(i));
        assert_int_equal(tb_synth_variant_find(name), i);
    }
    assert_null(tb_synth_variant_name(n));
    assert_null(tb_synth_variant_name(-1));
    assert_int_equal(tb_synth_variant_find("no_such_variant"), -1);
    const char *must[] = {"plain", "tail_leg", "tail_hips", "tail_spine2", "tail_fur", "tail_hanging",
                          "tail_curled", "tail_short", "tail_long", "cape", "skirt", "scabbard", "ears", "hair"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        assert_true(tb_synth_variant_find(must[i]) >= 0);
}

static void build_rejects_bad_arguments(void **state)
{
    (void)state;
    tb_doc *doc = (tb_doc *)1;
    tb_error err = {0};
    assert_int_equal(tb_synth_build(&doc, "nope", NULL, NULL, &err), TB_ERR_ARG);
    assert_null(doc);
    assert_int_equal(err.code, TB_ERR_ARG);
    assert_int_equal(tb_synth_build(&doc, NULL, NULL, NULL, &err), TB_ERR_ARG);
    assert_int_equal(tb_synth_build(NULL, "plain", NULL, NULL, &err), TB_ERR_ARG);
    tb_synth_desc d = {0};
    d.units = (tb_synth_units)7;
    assert_int_equal(tb_synth_build(&doc, "plain", &d, NULL, &err), TB_ERR_ARG);
    d.units = 0;
    d.names = (tb_synth_names)9;
    assert_int_equal(tb_synth_build(&doc, "plain", &d, NULL, &err), TB_ERR_ARG);
}

/* Every variant: reloads cleanly, all 22 roles, H = 1.9 m in world space
 * whatever the units, the truth's counts match the file. */
static void every_variant_reloads_as_a_1_9m_humanoid(void **state)
{
    (void)state;
    for (int i = 0; i < tb_synth_variant_count(); i++) {
        const char *name = tb_synth_variant_name(i);
        json_t *truth = NULL;
        tb_doc *doc = build_and_reload(name, NULL, &truth);
        tb_model *m = NULL;
        tb_error err = {0};
        assert_int_equal(tb_model_load(&m, doc, -1, &err), TB_OK);
        for (int r = 1; r < TB_ROLE_COUNT; r++)
            if (m->role_joint[r] < 0)
                fail_msg("%s: role %s missing", name, tb_role_name((tb_role)r));
        assert_int_equal(m->skin_joint_count, 22);
        float h_m = m->height * m->armature_scale;
        if (fabsf(h_m - 1.9f) > 0.01f)
            fail_msg("%s: height %.4f m", name, (double)h_m);
        assert_float_equal(m->height, jnum(truth, "height"), 1e-3 * m->height);
        assert_float_equal(jnum(truth, "armature_scale"), m->armature_scale, 1e-6);
        assert_int_equal((size_t)jnum(truth, "vertex_count"), m->vertex_count);
        assert_string_equal(jstr(truth, "variant"), name);
        assert_true(m->vertex_count > 3000 && m->vertex_count < 20000);
        /* exporter realism: several primitives, NORMAL and TEXCOORD_0, u16 indices */
        const tb_gltf *g = tb_doc_gltf(doc);
        assert_int_equal(g->animation_count, 6);
        for (int me = 0; me < g->mesh_count; me++)
            for (int p = 0; p < g->meshes[me].primitive_count; p++) {
                const tb_gltf_primitive *pr = &g->meshes[me].primitives[p];
                assert_true(pr->normal >= 0 && pr->texcoord[0] >= 0 && pr->material >= 0);
                assert_int_equal(g->accessors[pr->indices].component_type, TB_COMPONENT_UNSIGNED_SHORT);
            }
        if (json_array_size(json_object_get(truth, "appendages")))
            assert_true(m->prim_count >= 2);
        /* closed shells wound outwards: every primitive encloses positive volume */
        for (int p = 0; p < m->prim_count; p++) {
            double vol = 0;
            for (size_t t = m->prims[p].triangle_offset;
                 t < m->prims[p].triangle_offset + m->prims[p].triangle_count; t++) {
                const float *a = m->positions + m->triangles[t * 3] * 3, *b = m->positions + m->triangles[t * 3 + 1] * 3,
                            *c = m->positions + m->triangles[t * 3 + 2] * 3;
                vol += (double)a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) -
                       (double)a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
                       (double)a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0]);
            }
            if (!(vol > 0))
                fail_msg("%s: primitive %d encloses volume %g", name, p, vol);
        }
        /* weights: 1–4 influences, normalised */
        for (size_t v = 0; v < m->vertex_count; v++) {
            float sum = 0;
            int used = 0;
            for (int q = 0; q < m->influences; q++) {
                float w = m->weights[v * (size_t)m->influences + (size_t)q];
                sum += w;
                used += w > 0;
            }
            if (fabsf(sum - 1) > 1e-5f || used < 1 || used > 4)
                fail_msg("%s: vertex %zu weights sum %g over %d", name, v, (double)sum, used);
        }
        tb_model_free(m);
        tb_doc_free(doc);
        json_decref(truth);
    }
}

/* The bind pose skinned through the file's own matrices lands where the
 * positions say, scaled to metres: IBMs consistent with the units. */
static void bind_pose_skins_to_a_1_9m_body_in_world(void **state)
{
    (void)state;
    const char *vars[] = {"tail_leg", "tail_metres_bare", "plain_metres"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        tb_doc *doc = build_and_reload(vars[i], NULL, NULL);
        tb_model *m = NULL;
        assert_int_equal(tb_model_load(&m, doc, -1, NULL), TB_OK);
        int n = m->skel.joint_count;
        float(*world)[16] = malloc(sizeof(float[16]) * (size_t)n);
        float(*mats)[16] = malloc(sizeof(float[16]) * (size_t)m->skin_joint_count);
        float *out = malloc(m->vertex_count * 3 * sizeof(float));
        tb_local_to_world(&m->skel, m->skel.rest_local, NULL, world);
        tb_skin_matrices(mats, (const float(*)[16])world, m->skin_joints, (const float(*)[16])m->inverse_bind,
                         (size_t)m->skin_joint_count);
        tb_skin_points(out, 3, m->positions, 3, m->vertex_count, m->joints, m->weights, m->influences,
                       (const float(*)[16])mats, 0);
        float lo = INFINITY, hi = -INFINITY;
        for (size_t v = 0; v < m->vertex_count; v++) {
            for (int k = 0; k < 3; k++) /* every vertex is its position scaled to metres */
                assert_float_equal(out[v * 3 + (size_t)k], m->positions[v * 3 + (size_t)k] * m->armature_scale, 1e-4);
            lo = fminf(lo, out[v * 3 + 1]);
            hi = fmaxf(hi, out[v * 3 + 1]);
        }
        assert_float_equal(lo, 0.0f, 0.005);
        assert_float_equal(hi, 1.9f, 0.005);
        free(world);
        free(mats);
        free(out);
        tb_model_free(m);
        tb_doc_free(doc);
    }
}

static void same_seed_gives_identical_bytes(void **state)
{
    (void)state;
    for (int i = 0; i < tb_synth_variant_count(); i++) {
        const char *name = tb_synth_variant_name(i);
        uint8_t *bytes[3];
        size_t size[3];
        char *truth_text[3];
        for (int k = 0; k < 3; k++) {
            tb_synth_desc d = {0};
            d.seed = k == 2 ? 12345u : 0u; /* 0 = the default seed */
            tb_doc *doc = NULL;
            json_t *truth = NULL;
            assert_int_equal(tb_synth_build_json(&doc, name, &d, &truth, NULL), TB_OK);
            assert_int_equal(tb_doc_write_memory(doc, &bytes[k], &size[k], NULL), TB_OK);
            json_object_del(truth, "seed");
            truth_text[k] = json_dumps(truth, JSON_COMPACT);
            tb_doc_free(doc);
            json_decref(truth);
        }
        assert_int_equal(size[0], size[1]);
        if (memcmp(bytes[0], bytes[1], size[0]) != 0)
            fail_msg("%s: same seed, different bytes", name);
        assert_string_equal(truth_text[0], truth_text[1]);
        /* another seed varies the clips (and fur), not the truth's indices */
        assert_true(size[0] != size[2] || memcmp(bytes[0], bytes[2], size[0]) != 0);
        json_t *a = json_loads(truth_text[0], 0, NULL), *c = json_loads(truth_text[2], 0, NULL);
        json_t *aa = json_object_get(a, "appendages"), *ca = json_object_get(c, "appendages");
        for (size_t q = 0; q < json_array_size(aa); q++)
            assert_true(json_equal(json_object_get(json_array_get(aa, q), "vertices"),
                                   json_object_get(json_array_get(ca, q), "vertices")));
        json_decref(a);
        json_decref(c);
        for (int k = 0; k < 3; k++) {
            free(bytes[k]);
            free(truth_text[k]);
        }
    }
}

/* The truth agrees with the geometry: tails stick out (most vertices beyond
 * 7% H), their root ring sits against the body, their length is what the
 * centre line says and what the vertices span, K covers 3..8, and their
 * weights are the wrong ones the variant asks for. */
static void truth_agrees_with_geometry_and_weights(void **state)
{
    (void)state;
    int k_seen[9] = {0};
    int tails = 0;
    for (int i = 0; i < tb_synth_variant_count(); i++) {
        const char *name = tb_synth_variant_name(i);
        json_t *truth = NULL;
        tb_doc *doc = build_and_reload(name, NULL, &truth);
        tb_model *m = NULL;
        assert_int_equal(tb_model_load(&m, doc, -1, NULL), TB_OK);
        segs sk;
        skeleton_segments(m, &sk);
        const float H = m->height, band = 0.07f * H;
        json_t *apps = json_object_get(truth, "appendages");
        uint8_t *seen = calloc(m->vertex_count, 1);
        size_t idx;
        json_t *app;
        json_array_foreach(apps, idx, app) {
            const char *kind = jstr(app, "kind"), *cls = jstr(app, "class");
            json_t *vs = json_object_get(app, "vertices");
            size_t nv = json_array_size(vs);
            assert_int_equal(nv, (size_t)jnum(app, "vertex_count"));
            assert_true(nv > 50);
            /* expected classes (SPEC A7) */
            if (!strcmp(kind, "tail"))
                assert_string_equal(cls, "chain");
            else if (!strcmp(kind, "scabbard"))
                assert_string_equal(cls, "rigid");
            else
                assert_string_equal(cls, "untouched");
            /* the attachment names a real joint */
            const char *att = jstr(app, "attachment_node");
            int found = 0;
            for (int j = 0; j < m->skel.joint_count; j++)
                found |= m->skel.names[j] && !strcmp(m->skel.names[j], att);
            assert_true(found);
            /* centre line: its length is the truth's length */
            json_t *cl = json_object_get(app, "centerline");
            size_t ncl = json_array_size(cl);
            assert_true(ncl >= 2);
            float (*c)[3] = malloc(ncl * sizeof *c);
            double *cs = malloc(ncl * sizeof *cs);
            for (size_t q = 0; q < ncl; q++) {
                for (int k = 0; k < 3; k++)
                    c[q][k] = (float)json_number_value(json_array_get(json_array_get(cl, q), (size_t)k));
                cs[q] = q ? cs[q - 1] + sqrt(pow(c[q][0] - c[q - 1][0], 2) + pow(c[q][1] - c[q - 1][1], 2) +
                                             pow(c[q][2] - c[q - 1][2], 2))
                          : 0;
            }
            double L = jnum(app, "length");
            assert_float_equal(cs[ncl - 1], L, 1e-3 * L);
            assert_float_equal(L * m->armature_scale, jnum(app, "length_m"), 1e-4);
            size_t far = 0, off_line = 0;
            double reach = 0;
            int wrong = 0;
            for (size_t q = 0; q < nv; q++) {
                json_int_t v = json_integer_value(json_array_get(vs, q));
                assert_true(v >= 0 && (size_t)v < m->vertex_count);
                assert_int_equal(seen[v], 0); /* no vertex in two appendages */
                seen[v] = 1;
                const float *p = m->positions + (size_t)v * 3;
                far += skel_dist(&sk, p) > band;
                /* nearest centre-line sample: how far along, how far off */
                double best = INFINITY, at = 0;
                for (size_t s = 0; s < ncl; s++) {
                    double d = sqrt(pow(p[0] - c[s][0], 2) + pow(p[1] - c[s][1], 2) + pow(p[2] - c[s][2], 2));
                    if (d < best)
                        best = d, at = cs[s];
                }
                reach = at > reach ? at : reach;
                /* a tail is a tube round its centre line (fur: <= 12 cm) */
                off_line += !strcmp(kind, "tail") && best * m->armature_scale > 0.12;
                /* weights as requested */
                const char *w = jstr(app, "weights");
                if (!strcmp(w, "hips"))
                    wrong += fabsf(weight_on(m, (size_t)v, skin_joint_of_role(m, TB_ROLE_HIPS)) - 1) > 1e-6f;
                else if (!strcmp(w, "spine2"))
                    wrong += fabsf(weight_on(m, (size_t)v, skin_joint_of_role(m, TB_ROLE_SPINE2)) - 1) > 1e-6f;
                else if (!strcmp(w, "left_shin_and_thighs")) {
                    float shin = weight_on(m, (size_t)v, skin_joint_of_role(m, TB_ROLE_LEFT_LEG));
                    float lt = weight_on(m, (size_t)v, skin_joint_of_role(m, TB_ROLE_LEFT_UPLEG));
                    float rt = weight_on(m, (size_t)v, skin_joint_of_role(m, TB_ROLE_RIGHT_UPLEG));
                    wrong += !(shin >= 0.45f - 1e-3f && lt > 0 && rt > 0 && fabsf(shin + lt + rt - 1) < 1e-5f);
                }
            }
            if (wrong || off_line)
                fail_msg("%s %s: %d vertices with other weights than '%s', %zu off the centre line", name,
                         kind, wrong, jstr(app, "weights"), off_line);
            if (!strcmp(kind, "tail")) {
                tails++;
                /* most of a tail is far from the skeleton (SPEC A2) */
                if ((double)far < 0.6 * (double)nv)
                    fail_msg("%s: only %zu of %zu tail vertices beyond 7%% H", name, far, nv);
                /* its root ring sits against the body, within the band */
                float root[3];
                for (int k = 0; k < 3; k++)
                    root[k] = (float)json_number_value(json_array_get(json_object_get(app, "root"), (size_t)k));
                assert_true(skel_dist(&sk, root) < band);
                assert_true(skel_dist(&sk, c[1]) < band);
                /* the vertices span the whole length */
                assert_float_equal(reach, L, 0.05 * L);
                long K = (long)jnum(app, "K");
                assert_int_equal(K, lround(fmin(fmax(round(L / (0.1 * H)), 3), 8)));
                /* the same K whether L starts at the root ring or where the
                 * tail leaves the 7% band (a collar-based geodesic) */
                double Lfar = jnum(app, "length_beyond_band");
                assert_true(Lfar < L && Lfar > 0.8 * L);
                if (K != lround(fmin(fmax(round(Lfar / (0.1 * H)), 3), 8)))
                    fail_msg("%s: K %ld from L %.1f but not from the far length %.1f", name, K, L, Lfar);
                k_seen[K] = 1;
                /* separate shell: the root ring is part of the tail's own vertices */
                if (!strcmp(name, "tail_fur"))
                    assert_int_equal((int)jnum(app, "shells"), 2);
            }
            free(c);
            free(cs);
        }
        /* weights of a nearest-bone tail are smeared over several bones */
        if (!strcmp(name, "tail_hanging") || !strcmp(name, "tail_curled")) {
            json_t *vs = json_object_get(json_array_get(apps, 0), "vertices");
            int used[64] = {0}, distinct = 0;
            for (size_t q = 0; q < json_array_size(vs); q++) {
                size_t v = (size_t)json_integer_value(json_array_get(vs, q));
                for (int k = 0; k < m->influences; k++)
                    if (m->weights[v * (size_t)m->influences + (size_t)k] > 0)
                        used[m->joints[v * (size_t)m->influences + (size_t)k]] = 1;
            }
            for (int k = 0; k < 64; k++)
                distinct += used[k];
            assert_true(distinct >= 3);
        }
        free(seen);
        tb_model_free(m);
        tb_doc_free(doc);
        json_decref(truth);
    }
    assert_true(tails >= 8);
    for (int k = 3; k <= 8; k++)
        if (!k_seen[k])
            fail_msg("no tail variant with K = %d", k);
}

/* tail_fur: two shells that overlap in space and share no vertex (different
 * primitives, one in its own mesh node), as the seed's fox. */
static void fur_tail_is_two_unwelded_overlapping_shells(void **state)
{
    (void)state;
    json_t *truth = NULL;
    tb_doc *doc = build_and_reload("tail_fur", NULL, &truth);
    tb_model *m = NULL;
    assert_int_equal(tb_model_load(&m, doc, -1, NULL), TB_OK);
    assert_int_equal(m->prim_count, 3);
    assert_true(m->prims[2].node != m->prims[0].node);
    json_t *vs = json_object_get(json_array_get(json_object_get(truth, "appendages"), 0), "vertices");
    size_t in1 = 0, in2 = 0;
    for (size_t q = 0; q < json_array_size(vs); q++) {
        size_t v = (size_t)json_integer_value(json_array_get(vs, q));
        in1 += v >= m->prims[1].vertex_offset && v < m->prims[1].vertex_offset + m->prims[1].vertex_count;
        in2 += v >= m->prims[2].vertex_offset;
    }
    assert_int_equal(in1, m->prims[1].vertex_count);
    assert_int_equal(in2, m->prims[2].vertex_count);
    /* fur encloses skin: the fur's bounding box contains the skin's */
    float lo[2][3], hi[2][3];
    for (int s = 0; s < 2; s++) {
        const tb_model_prim *p = &m->prims[1 + s];
        for (int k = 0; k < 3; k++)
            lo[s][k] = INFINITY, hi[s][k] = -INFINITY;
        for (size_t v = p->vertex_offset; v < p->vertex_offset + p->vertex_count; v++)
            for (int k = 0; k < 3; k++) {
                lo[s][k] = fminf(lo[s][k], m->positions[v * 3 + (size_t)k]);
                hi[s][k] = fmaxf(hi[s][k], m->positions[v * 3 + (size_t)k]);
            }
    }
    for (int k = 0; k < 3; k++)
        assert_true(lo[1][k] <= lo[0][k] + 1e-3f && hi[1][k] >= hi[0][k] - 1e-3f);
    tb_model_free(m);
    tb_doc_free(doc);
    json_decref(truth);
}

static void units_and_names_are_options(void **state)
{
    (void)state;
    tb_synth_desc d = {0};
    d.units = TB_SYNTH_UNITS_M;
    d.names = TB_SYNTH_NAMES_BARE;
    json_t *truth = NULL;
    tb_doc *doc = build_and_reload("tail_leg", &d, &truth);
    tb_model *m = NULL;
    assert_int_equal(tb_model_load(&m, doc, -1, NULL), TB_OK);
    assert_float_equal(m->armature_scale, 1.0f, 1e-6);
    assert_float_equal(m->height, 1.9f, 0.01);
    assert_string_equal(m->skel.names[m->role_joint[TB_ROLE_HIPS]], "Hips");
    assert_string_equal(jstr(truth, "units"), "m");
    tb_model_free(m);
    tb_doc_free(doc);
    json_decref(truth);
    d.units = TB_SYNTH_UNITS_CM;
    d.names = TB_SYNTH_NAMES_MIXAMO;
    doc = build_and_reload("plain_bare_names", &d, NULL);
    assert_int_equal(tb_model_load(&m, doc, -1, NULL), TB_OK);
    assert_float_equal(m->armature_scale, 0.01f, 1e-6);
    assert_float_equal(m->height, 190.0f, 1.0);
    assert_string_equal(m->skel.names[m->role_joint[TB_ROLE_LEFT_UPLEG]], "mixamorig:LeftUpLeg");
    tb_model_free(m);
    tb_doc_free(doc);
}

/* Reads one channel's keys of a clip. */
static float *channel_keys(const tb_doc *doc, const tb_gltf_animation *a, int node, tb_gltf_path path,
                           size_t *count, float **times)
{
    for (int c = 0; c < a->channel_count; c++) {
        if (a->channels[c].node != node || a->channels[c].path != path)
            continue;
        const tb_gltf *g = tb_doc_gltf(doc);
        const tb_gltf_sampler *s = &a->samplers[a->channels[c].sampler];
        assert_int_equal(s->interp, TB_INTERP_LINEAR);
        size_t n = g->accessors[s->input].count;
        int comps = g->accessors[s->output].components;
        float *v = malloc(n * (size_t)comps * sizeof(float));
        *times = malloc(n * sizeof(float));
        assert_int_equal(tb_accessor_read_floats(doc, s->output, v, n * (size_t)comps, NULL), TB_OK);
        assert_int_equal(tb_accessor_read_floats(doc, s->input, *times, n, NULL), TB_OK);
        *count = n;
        return v;
    }
    fail_msg("no channel on node %d", node);
    return NULL;
}

/* Clips look like their names: 30 fps keys, loops close, the crouch drops
 * the pelvis enough for a hanging tail to reach the ground, the hip sweep
 * moves 0.5 m in 2/3 s, the back flip turns a full circle about X. */
static void clips_do_what_their_names_say(void **state)
{
    (void)state;
    tb_doc *doc = build_and_reload("tail_hanging", NULL, NULL);
    tb_model *m = NULL;
    assert_int_equal(tb_model_load(&m, doc, -1, NULL), TB_OK);
    const tb_gltf *g = tb_doc_gltf(doc);
    int hips = m->node_of_joint[m->role_joint[TB_ROLE_HIPS]];
    int lleg = m->node_of_joint[m->role_joint[TB_ROLE_LEFT_UPLEG]];
    const float unit = 1.0f / m->armature_scale;
    const char *names[] = {"Walk", "Sprint", "Idle", "Crouch", "HipSweep", "BackFlip"};
    for (int i = 0; i < 6; i++) {
        const tb_gltf_animation *a = &g->animations[i];
        assert_string_equal(a->name, names[i]);
        assert_int_equal(a->channel_count, 23);
        size_t n;
        float *t, *tr = channel_keys(doc, a, hips, TB_GLTF_PATH_TRANSLATION, &n, &t);
        assert_int_equal(n, (size_t)lroundf(a->duration_s * 30) + 1);
        assert_float_equal(t[1] - t[0], 1.0f / 30, 1e-5);
        float *tl, *rot = channel_keys(doc, a, lleg, TB_GLTF_PATH_ROTATION, &n, &tl);
        float ymin = INFINITY, xmax = -INFINITY, swing = 0;
        for (size_t k = 0; k < n; k++) {
            ymin = fminf(ymin, tr[k * 3 + 1] / unit);
            xmax = fmaxf(xmax, tr[k * 3] / unit);
            swing = fmaxf(swing, 2 * acosf(fminf(1, fabsf(rot[k * 4 + 3]))));
        }
        if (i != 5) /* loops end on their first key */
            for (int c = 0; c < 3; c++)
                assert_float_equal(tr[c], tr[(n - 1) * 3 + (size_t)c], 1e-4 * unit);
        if (i == 0) {
            assert_float_equal(a->duration_s, 1.0f, 0.1);
            assert_true(swing > 0.3f); /* legs swing */
        }
        if (i == 1)
            assert_true(swing > 0.6f && a->duration_s < 0.8f);
        if (i == 2)
            assert_true(swing < 0.1f && 1.0f - ymin < 0.01f);
        if (i == 3)
            assert_true(ymin < 0.6f); /* pelvis from 1.0 m to below 0.6 m */
        if (i == 4) {
            assert_float_equal(xmax, 0.5f, 0.01);
            for (size_t k = 0; k < n; k++)
                if (fabsf(t[k] - 2.0f / 3) < 1e-4f)
                    assert_float_equal(tr[k * 3] / unit, 0.5f, 0.01);
        }
        if (i == 5) {
            float *th, *hr = channel_keys(doc, a, hips, TB_GLTF_PATH_ROTATION, &n, &th);
            float wmin = 1, ymax = -INFINITY;
            for (size_t k = 0; k < n; k++) {
                wmin = fminf(wmin, hr[k * 4 + 3]);
                ymax = fmaxf(ymax, tr[k * 3 + 1] / unit);
                if (k)
                    assert_true(hr[k * 4 + 3] * hr[(k - 1) * 4 + 3] + hr[k * 4] * hr[(k - 1) * 4] > 0.9f);
            }
            assert_true(wmin < -0.99f); /* passes a full turn: q = -identity at 360° */
            assert_true(ymin < 0.8f && ymax > 1.6f);
            free(hr);
            free(th);
        }
        free(tr);
        free(t);
        free(rot);
        free(tl);
    }
    tb_model_free(m);
    tb_doc_free(doc);
}

static void cli_lists_builds_and_rejects(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(tbt_run_cli(&out, "synth --list"), 0);
    int lines = 0;
    for (char *p = out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, tb_synth_variant_count());
    assert_memory_equal(out, "plain\n", 6);
    free(out);
    assert_int_equal(tbt_run_cli(&out, "synth --variant no_such -o '%s'", tbt_tmp_path("x.glb")), 2);
    assert_non_null(strstr(out, "no_such"));
    free(out);
    assert_int_equal(tbt_run_cli(NULL, "synth -o '%s'", tbt_tmp_path("x.glb")), 2);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant plain"), 2);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant plain -o x --seed abc"), 2);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant plain -o x --units inch"), 2);
    assert_int_equal(tbt_run_cli(NULL, "synth --bogus"), 2);
    assert_int_equal(tbt_run_cli(NULL, "synth --help"), 0);
    char a[4096], b[4096], t[4096];
    snprintf(a, sizeof a, "%s", tbt_tmp_path("cli_a.glb"));
    snprintf(b, sizeof b, "%s", tbt_tmp_path("cli_b.glb"));
    snprintf(t, sizeof t, "%s", tbt_tmp_path("cli_a.json"));
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg -o '%s' --truth '%s' --seed 7", a, t), 0);
    assert_int_equal(tbt_run_cli(NULL, "synth --variant tail_leg -o '%s' --seed 7", b), 0);
    size_t na, nb;
    uint8_t *ba = tbt_read_file(a, &na), *bb = tbt_read_file(b, &nb);
    assert_non_null(ba);
    assert_non_null(bb);
    assert_int_equal(na, nb);
    assert_memory_equal(ba, bb, na);
    free(ba);
    free(bb);
    json_t *truth = json_load_file(t, 0, NULL);
    assert_non_null(truth);
    assert_int_equal((int)jnum(truth, "seed"), 7);
    assert_string_equal(jstr(json_array_get(json_object_get(truth, "appendages"), 0), "class"), "chain");
    json_decref(truth);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(variant_names_are_listed_and_found),
        cmocka_unit_test(build_rejects_bad_arguments),
        cmocka_unit_test(every_variant_reloads_as_a_1_9m_humanoid),
        cmocka_unit_test(bind_pose_skins_to_a_1_9m_body_in_world),
        cmocka_unit_test(same_seed_gives_identical_bytes),
        cmocka_unit_test(truth_agrees_with_geometry_and_weights),
        cmocka_unit_test(fur_tail_is_two_unwelded_overlapping_shells),
        cmocka_unit_test(units_and_names_are_options),
        cmocka_unit_test(clips_do_what_their_names_say),
        cmocka_unit_test(cli_lists_builds_and_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
