/* The offline pass, detection half (SPEC A1–A7, plus the A9 geodesic and
 * chain joints that the report shows): distance field, far vertices, weld,
 * components, collar and attachment, tests, merge, classification. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GNUC__) && defined(__SSE__)
#include <xmmintrin.h> /* _mm_sqrt_ps: the merge's tube tests four at a time */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define TB__MERGE_AVX2 1 /* and eight at a time for AVX2 (tb__merge_lanes8) */
#endif
#endif
#endif

#include "passes/detect_internal.h"
#include "passes/pool_internal.h"
#include "gltf/doc_internal.h"

tb_appendage_desc tb_appendage_defaults(const tb_appendage_desc *desc)
{
    tb_appendage_desc d;
    tb__desc_or_zero(&d, desc, sizeof d);
#define TB__DEF(field, value) \
    if (!(d.field > 0))       \
    d.field = (value)
    TB__DEF(far_fraction, 0.07f);         /* SPEC A2 */
    TB__DEF(thin_margin, 0.01f);          /* SPEC A10 (choice) */
    TB__DEF(envelope_margin, 0.15f);      /* SPEC A10 (choice) */
    TB__DEF(grow_fraction, 0.8f);
    TB__DEF(sample_fraction, 0.0025f);
    TB__DEF(wrap_min_deg, 270.0f);        /* SPEC A10 (choice) */
    TB__DEF(slender_min, 5.0f);
    TB__DEF(leave_min, 0.25f);
    TB__DEF(flat_max, 2.5f);
    TB__DEF(row_gap, 1.0f);
    TB__DEF(row_reach, 0.08f);
    TB__DEF(extension_fraction, 0.5f);    /* SPEC A1 (choice) */
    TB__DEF(attach_bias, 1.5f);           /* SPEC A4 */
    TB__DEF(centroid_ratio_min, 0.40f);   /* SPEC A5 (1) */
    TB__DEF(elongation_min, 1.8f);        /* SPEC A5 (2) (choice) */
    TB__DEF(merge_overlap, 0.5f);         /* SPEC A6 */
    TB__DEF(length_percentile, 0.99f);    /* SPEC A9 */
    TB__DEF(segment_fraction, 0.1f);      /* SPEC A9 */
    TB__DEF(min_bones, 3);                /* SPEC A9 */
    TB__DEF(max_bones, 8);                /* SPEC A9 */
    TB__DEF(blend_zone, 0.25f);           /* SPEC A9 weights */
    TB__DEF(piece_span_max, 0.5f);        /* segmented tails (choice) */
    TB__DEF(rigid_body_min, 0.9f);
    TB__DEF(collar_band, 0.5f);
    TB__DEF(weld_epsilon, 0.0f);          /* resolved against H at detection */
    TB__DEF(min_vertices, 12);            /* (choice) */
    TB__DEF(touch_fraction, 0.025f);       /* A6 (choice) */
    TB__DEF(tail_length_min, 0.15f);      /* A7 (choice) */
    TB__DEF(tail_taper_max, 0.7f);        /* SPEC A7 beyond the article (choice) */
    TB__DEF(tail_bend_min, 0.08f);
    TB__DEF(tail_reach_min, 0.15f);
    TB__DEF(tail_lateral_max, 0.05f);
#undef TB__DEF
    if (desc && desc->collar_band < 0)
        d.collar_band = 0; /* asked for: none */
    if (d.smoothing_passes == 0)
        d.smoothing_passes = 2;           /* SPEC A9 */
    else if (d.smoothing_passes < 0)
        d.smoothing_passes = 0;
    if (d.blend_zone > 0.5f)
        d.blend_zone = 0.5f;
    if (d.max_bones > TB_TAIL_MAX_BONES)
        d.max_bones = TB_TAIL_MAX_BONES;
    if (d.min_bones > d.max_bones)
        d.min_bones = d.max_bones;
    if (d.skin < 0)
        d.skin = 0;
    return d;
}

const char *tb_appendage_stage_name(int i)
{
    static const char *const n[] = {"distance", "weld", "graph", "components", "merge", "analysis", "thickness"};
    return (i >= 0 && i < 7) ? n[i] : NULL;
}

double tb__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

const char *tb_appendage_kind_name(tb_appendage_kind k)
{
    static const char *const n[] = {"tail", "carried", "wide", "head", "limb", "body", "other", "short"};
    return (k >= 0 && k < TB_KIND_COUNT) ? n[k] : "other";
}

const char *tb_appendage_decision_name(tb_appendage_decision d)
{
    static const char *const n[] = {"untouched", "chain", "rigid"};
    return (d >= 0 && d <= TB_DECIDE_RIGID) ? n[d] : "untouched";
}

void tb_appendage_report_free(tb_appendage_report *rep)
{
    if (!rep)
        return;
    for (int i = 0; i < rep->appendage_count; i++)
        free(rep->appendages[i].vertices);
    free(rep->appendages);
    memset(rep, 0, sizeof *rep);
}

void tb__detect_work_free(tb__detect_work *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->count; i++) {
        free(w->apps[i].rw_verts);
        free(w->apps[i].rw_g);
        free(w->apps[i].rw_piece);
        free(w->apps[i].collar);
    }
    free(w->apps);
    memset(w, 0, sizeof *w);
}

/* ---- SPEC A1: bone segments and the distance field ---------------------- */

float tb__seg_dist(const tb__seg *s, const float p[3])
{
    float ap[3] = {p[0] - s->a[0], p[1] - s->a[1], p[2] - s->a[2]};
    float t = (ap[0] * s->ab[0] + ap[1] * s->ab[1] + ap[2] * s->ab[2]) * s->inv_len2;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    float d[3] = {ap[0] - t * s->ab[0], ap[1] - t * s->ab[1], ap[2] - t * s->ab[2]};
    return sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

void tb__seg_set(tb__seg *s, const float *a, const float *b, int joint)
{
    for (int k = 0; k < 3; k++) {
        s->a[k] = a[k];
        s->ab[k] = b[k] - a[k];
    }
    float l2 = s->ab[0] * s->ab[0] + s->ab[1] * s->ab[1] + s->ab[2] * s->ab[2];
    s->inv_len2 = l2 > 0 ? 1.0f / l2 : 0.0f;
    s->joint = joint;
    s->extension = 0;
}

const float *tb__jpos(const tb_model *m, int j)
{
    return &m->skel.bind_world[j][12];
}

/* Skeleton joints that carry a positive weight somewhere in the mesh. */
static uint8_t *tb__weighted_joints(const tb_model *m)
{
    uint8_t *w = calloc((size_t)m->skel.joint_count + 1, 1);
    if (!w)
        return NULL;
    size_t n = m->vertex_count * (size_t)m->influences;
    for (size_t i = 0; i < n; i++)
        if (m->weights[i] > 0 && m->joints[i] < m->skin_joint_count)
            w[m->skin_joints[m->joints[i]]] = 1;
    return w;
}

/* Segments of the skeleton (SPEC A1). filtered = 1 for detection: a segment
 * a→c needs a weighted joint a, and a weightless subtree under c is skipped
 * when a has weighted children (IK targets, pole targets, stripped helper
 * chains are not body). filtered = 0 (measurement): every skin joint owns a
 * segment to each skin child. In both, a terminal joint gets an extension of
 * ext × its incoming bone; a joint with no segment at all becomes a point.
 * Returns the count; *out is malloc'd. */
static int tb__segments(const tb_model *m, float ext, int filtered, tb__seg **out, uint8_t **is_node_out)
{
    int J = m->skel.joint_count;
    const uint8_t *ibm = m->skel.has_ibm;
    /* Which joints carry weight is read only by the filter and the node
     * flags: measurement (once per appendage) skips that scan of every
     * vertex's weights, which made it O(vertices x appendages). */
    uint8_t *wt = filtered || is_node_out ? tb__weighted_joints(m)
                                          : calloc((size_t)J + 1, 1);
    uint8_t *sub = calloc((size_t)J + 1, 1), *started = calloc((size_t)J + 1, 1);
    int *incoming = malloc(((size_t)J + 1) * sizeof *incoming);
    uint8_t *wchild = calloc((size_t)J + 1, 1);
    tb__seg *s = malloc(((size_t)J * 2 + 1) * sizeof *s);
    int n = 0;
    *out = NULL;
    if (!wt || !sub || !started || !incoming || !wchild || !s)
        goto done;
    for (int j = 0; j < J; j++) {
        sub[j] = wt[j];
        incoming[j] = -1;
    }
    for (int j = J - 1; j > 0; j--)
        if (m->skel.parents[j] >= 0)
            sub[m->skel.parents[j]] |= sub[j];
    for (int j = 0; j < J; j++) {
        int p = m->skel.parents[j];
        if (p >= 0 && ibm[j] && ibm[p] && sub[j])
            wchild[p] = 1;
    }
    for (int c = 0; c < J; c++) {
        int a = m->skel.parents[c];
        if (a < 0 || !ibm[a] || !ibm[c])
            continue;
        if (filtered && (!wt[a] || (!sub[c] && wchild[a])))
            continue;
        tb__seg_set(&s[n++], tb__jpos(m, a), tb__jpos(m, c), a);
        started[a] = 1;
        incoming[c] = a;
    }
    for (int c = 0; c < J; c++) {
        if (!ibm[c] || started[c])
            continue;
        if (incoming[c] >= 0) { /* terminal: extend the incoming bone */
            const float *a = tb__jpos(m, incoming[c]), *b = tb__jpos(m, c);
            float e[3] = {b[0] + ext * (b[0] - a[0]), b[1] + ext * (b[1] - a[1]), b[2] + ext * (b[2] - a[2])};
            tb__seg_set(&s[n], b, e, c);
            s[n++].extension = 1;
        } else if (!filtered || wt[c]) {
            int p = m->skel.parents[c];
            const float *b = tb__jpos(m, c);
            if (p >= 0 && ibm[p]) {
                const float *a = tb__jpos(m, p);
                float e[3] = {b[0] + ext * (b[0] - a[0]), b[1] + ext * (b[1] - a[1]), b[2] + ext * (b[2] - a[2])};
                tb__seg_set(&s[n], b, e, c);
                s[n++].extension = 1;
            } else {
                tb__seg_set(&s[n++], b, b, c);
            }
        }
    }
    if (is_node_out) { /* joints that are ends of real segments: attachment candidates */
        for (int j = 0; j < J; j++)
            sub[j] = 0;
        for (int i = 0; i < n; i++)
            sub[s[i].joint] = 1;
        for (int c = 0; c < J; c++)
            if (incoming[c] >= 0 && (wt[c] || started[c]))
                sub[c] = 1;
        *is_node_out = sub;
        sub = NULL;
    }
    *out = s;
    s = NULL;
done:
    free(wt);
    free(sub);
    free(started);
    free(incoming);
    free(wchild);
    free(s);
    return *out ? n : -1;
}

float tb__skeleton_dist(const tb__seg *s, int n, const float p[3])
{
    return tb__seg_nearest(s, n, p, NULL);
}

float tb_weighted_bone_distance(const tb_model *m, const uint32_t *vertices, size_t count,
                                float extension_fraction)
{
    if (!m || !count)
        return 0.0f;
    return tb__bone_distance(m, vertices, count, extension_fraction, m->joints, m->weights);
}

/* SPEC A9 weighted bone distance with any joints/weights (a variant's, or
 * the model's): vertices without weight are left out of the average. */
float tb__bone_distance(const tb_model *m, const uint32_t *vertices, size_t count, float extension_fraction,
                        const uint16_t *joints, const float *weights)
{
    if (!m || !count)
        return NAN;
    tb__seg *s = NULL;
    int n = tb__segments(m, extension_fraction > 0 ? extension_fraction : 0.5f, 0, &s, NULL);
    if (n < 0)
        return NAN;
    /* CSR of segments per joint (segments are grouped by owner below) */
    int J = m->skel.joint_count;
    int *off = calloc((size_t)J + 2, sizeof *off), *idx = malloc(((size_t)n + 1) * sizeof *idx);
    int *fill = calloc((size_t)J + 1, sizeof *fill);
    double total = 0;
    size_t weighted = 0;
    if (!off || !idx || !fill)
        goto done; /* NaN */
    for (int i = 0; i < n; i++)
        off[s[i].joint + 1]++;
    for (int j = 0; j < J; j++)
        off[j + 1] += off[j];
    for (int i = 0; i < n; i++)
        idx[off[s[i].joint] + fill[s[i].joint]++] = i;
    for (size_t q = 0; q < count; q++) {
        size_t v = vertices[q];
        const float *p = m->positions + v * 3;
        double acc = 0, wsum = 0;
        for (int k = 0; k < m->influences; k++) {
            float w = weights[v * (size_t)m->influences + (size_t)k];
            uint16_t sj = joints[v * (size_t)m->influences + (size_t)k];
            if (!(w > 0) || sj >= m->skin_joint_count)
                continue;
            int j = m->skin_joints[sj];
            float best = INFINITY;
            for (int e = off[j]; e < off[j + 1]; e++) {
                float d = tb__seg_dist(&s[idx[e]], p);
                if (d < best)
                    best = d;
            }
            if (isfinite(best)) {
                acc += (double)w * best;
                wsum += w;
            }
        }
        if (wsum > 0) {
            total += acc / wsum;
            weighted++;
        }
    }
done:
    free(off);
    free(idx);
    free(fill);
    free(s);
    return weighted ? (float)(total / (double)weighted) : NAN;
}

/* ---- small helpers ------------------------------------------------------- */

/* Eigenvalues of a symmetric 3x3 matrix, descending (Jacobi rotations);
 * axis (when not NULL): the unit eigenvector of the largest. */
void tb__eig3(const double c[3][3], double ev[3], double axis[3])
{
    double a[3][3], V[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    memcpy(a, c, sizeof a);
    for (int it = 0; it < 50; it++) {
        double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        if (off < 1e-30)
            break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                if (fabs(a[p][q]) < 1e-300)
                    continue;
                double th = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                double t = (th >= 0 ? 1.0 : -1.0) / (fabs(th) + sqrt(th * th + 1));
                double cs = 1 / sqrt(t * t + 1), sn = t * cs;
                for (int k = 0; k < 3; k++) { /* A ← Jᵀ A J */
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = cs * akp - sn * akq;
                    a[k][q] = sn * akp + cs * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = cs * apk - sn * aqk;
                    a[q][k] = sn * apk + cs * aqk;
                }
                for (int k = 0; k < 3; k++) { /* V ← V J: the eigenvectors, as columns */
                    double vkp = V[k][p], vkq = V[k][q];
                    V[k][p] = cs * vkp - sn * vkq;
                    V[k][q] = sn * vkp + cs * vkq;
                }
            }
    }
    ev[0] = a[0][0], ev[1] = a[1][1], ev[2] = a[2][2];
    if (axis) {
        int top = ev[1] > ev[0] ? (ev[2] > ev[1] ? 2 : 1) : (ev[2] > ev[0] ? 2 : 0);
        for (int k = 0; k < 3; k++)
            axis[k] = V[k][top];
    }
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (ev[j] > ev[i]) {
                double t = ev[i];
                ev[i] = ev[j];
                ev[j] = t;
            }
}

static int tb__cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The k-th smallest of a[0..n) (k < n), a reordered: what a[k] is after
 * qsort with tb__cmp_float. Without a NaN or a negative zero among them
 * (equal floats are then the same number, and the order is total) by the
 * runtime's selection (tb_select_kth), O(n) on average, instead of the
 * sort's O(n log n); with one, by that sort, whose order such values leave
 * to the algorithm. */
float tb__kth_float(float *a, size_t n, size_t k)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != a[i] || (a[i] == 0 && signbit(a[i]))) {
            qsort(a, n, sizeof *a, tb__cmp_float);
            return a[k];
        }
    return tb_select_kth(a, n, k);
}

/* A loop over items [0, n) whose every item reads shared data and writes
 * only its own slots, run as fn(ctx, lo, hi) over blocks on `threads`
 * threads (tb__parallel_for; < 2, or too few items: one call here). The
 * slots get the same values for any thread count. */
typedef void (*tb__range_fn)(void *ctx, size_t lo, size_t hi);
typedef struct tb__range_job {
    tb__range_fn fn;
    void *ctx;
    size_t n, block;
} tb__range_job;

static void tb__range_task(void *c, int task, int worker)
{
    (void)worker;
    const tb__range_job *J = c;
    size_t lo = (size_t)task * J->block, hi = lo + J->block < J->n ? lo + J->block : J->n;
    J->fn(J->ctx, lo, hi);
}

void tb__st_for(const tb__state *st, int threads, int n, tb__task_fn fn, void *ctx)
{
    if (threads <= 0)
        threads = tb__cpu_count();
    if (threads > 1 && st->team)
        tb__team_for(st->team, n, fn, ctx);
    else
        tb__parallel_for(n, threads, fn, ctx);
}

static void tb__ranges(const tb__state *st, size_t n, tb__range_fn fn, void *ctx)
{
    enum { TB__RANGE_MIN = 256, TB__RANGE_BLOCKS = 64 }; /* blocks handed out as threads come free */
    int threads = st->d.threads > 0 ? st->d.threads : tb__cpu_count();
    if (threads < 2 || n < 2 * TB__RANGE_MIN) {
        fn(ctx, 0, n);
        return;
    }
    size_t block = (n + TB__RANGE_BLOCKS - 1) / TB__RANGE_BLOCKS;
    block = block < TB__RANGE_MIN ? TB__RANGE_MIN : block;
    tb__range_job J = {fn, ctx, n, block};
    tb__st_for(st, threads, (int)((n + block - 1) / block), tb__range_task, &J);
}

void tb__copy_name(char *dst, size_t cap, const char *s)
{
    snprintf(dst, cap, "%s", s ? s : "(unnamed)");
}

/* ---- the detector state -------------------------------------------------- */

/* tb__comp, tb__state: passes/detect_internal.h */

void tb__state_free(tb__state *st)
{
    free(st->cls);
    free(st->segs);
    free(st->trunk);
    tb__segsoa_free(&st->segsoa);
    free(st->is_node);
    free(st->wseg);
    free(st->wid);
    free(st->wpos);
    free(st->far);
    tb__graph_free(&st->g);
    free(st->shell);
    free(st->shell_total);
    free(st->warea);
    free(st->shell_area);
    free(st->shell_far);
    free(st->comp_uf);
    for (size_t i = 0; i < st->ncomp; i++) {
        free(st->comps[i].verts);
        free(st->comps[i].collar);
    }
    free(st->comps);
    free(st->shell_off);
    free(st->shell_list);
    free(st->model_off);
    free(st->model_list);
    free(st->wdist);
    free(st->mpos);
    free(st->mrad);
    free(st->thin);
    free(st->shell_total_pre);
    free(st->wrap_bin);
    free(st->wrap_trunk);
    free(st->surf);
    free(st->cut);
}

int tb__joint_by_name(const tb_model *m, const char *name)
{
    for (int j = 0; j < m->skel.joint_count; j++) {
        const char *n = m->skel.names[j];
        if (!n)
            continue;
        if (!strcmp(n, name))
            return j;
        const char *colon = strrchr(n, ':');
        if (colon && !strcmp(colon + 1, name))
            return j;
    }
    return -1;
}

/* SPEC A4: nearest joint to the collar centroid, with the torso/thigh bias.
 * A thigh that wins the bias stands for the body: the pelvis. */
int tb__attach_joint(const tb__state *st, const float p[3])
{
    const tb_model *m = st->m;
    int best = -1;
    float dbest = INFINITY;
    float *d = calloc((size_t)m->skel.joint_count + 1, sizeof *d);
    if (!d)
        return st->pelvis;
    for (int j = 0; j < m->skel.joint_count; j++) {
        d[j] = INFINITY;
        if (!st->is_node[j])
            continue;
        const float *q = tb__jpos(m, j);
        float dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
        d[j] = sqrtf(dx * dx + dy * dy + dz * dz);
        if (d[j] < dbest) {
            dbest = d[j];
            best = j;
        }
    }
    int torso = -1, thigh = -1;
    for (int j = 0; j < m->skel.joint_count; j++) {
        if (!(d[j] <= st->d.attach_bias * dbest))
            continue;
        tb_role_class c = st->cls[j];
        if ((c == TB_CLASS_PELVIS || c == TB_CLASS_SPINE) && (torso < 0 || d[j] < d[torso]))
            torso = j;
        if (c == TB_CLASS_THIGH && (thigh < 0 || d[j] < d[thigh]))
            thigh = j;
    }
    float d_pelvis = d[st->pelvis];
    free(d);
    /* the pelvis first: a root between the hips and the thigh heads, or
     * between the hips and the first spine joint, belongs to the body */
    if (d_pelvis <= st->d.attach_bias * dbest)
        return st->pelvis;
    if (torso >= 0)
        return torso;
    if (thigh >= 0)
        return st->pelvis;
    return best >= 0 ? best : st->pelvis;
}

/* SPEC A10: far against the body's own thickness. A vertex whose local
 * cross-section (the inward ray to where it leaves its solid, tb__thickness)
 * has no bone inside it — its medial point is further from the skeleton
 * than half the thickness, with a margin — is skin of a part that hangs off
 * the skeleton: a tail beside a thigh, a bead on the back. Vertices already
 * far by A2 keep that; A2 stays for open surfaces (capes) that no ray can
 * measure. Rays are cast only where a bone could be outside the section
 * (2 × the distance to the skeleton), so their cost follows the skin's. */
/* A standing humanoid whose skeleton runs through its whole body: spine
 * roles known and not a quadruped (whose body runs on past its pelvis). */
static int tb__upright(const tb_model *m)
{
    return m->role_joint[TB_ROLE_SPINE] >= 0 && !m->body.quadruped;
}

/* The body's own thickness around each bone (SPEC A10): per bone segment,
 * the median distance of the skin that faces away from it (outward normal
 * within 60° of the direction from the bone) and is not off-bone skin
 * itself. A thin vertex (its cross-section holds no bone) is far when it
 * also stands outside that envelope by envelope_margin; far regions then
 * grow through the thin skin they touch, so the side of a tail that faces
 * the thigh, inside the thigh's envelope, stays with the tail. Bones
 * without such skin keep the A2 band. O(V × segments + V log V). */
tb_result tb__envelope_far(tb__state *st, const float *normal, tb_error *err)
{
    size_t nw = st->nw;
    int ns = st->nseg;
    int *near = malloc((nw ? nw : 1) * sizeof *near), *seg = malloc((nw ? nw : 1) * sizeof *seg);
    float *env = malloc(((size_t)ns + 1) * sizeof *env);
    uint32_t *cnt = calloc((size_t)ns + 2, sizeof *cnt), *queue = malloc((nw ? nw : 1) * sizeof *queue);
    float *samples = malloc((nw ? nw : 1) * sizeof *samples);
    tb_result r = TB_OK;
    if (!near || !seg || !env || !cnt || !queue || !samples) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    for (size_t w = 0; w < nw; w++) {
        const float *p = st->wpos + w * 3, *n = normal + w * 3;
        float best = st->wdist[w]; /* A1's: the same nearest segment */
        int bi = st->wseg[w];
        near[w] = -1;
        seg[w] = bi; /* the bone segment nearest w, for the far tests below */
        if (bi < 0 || st->thin[w] || !(best > 0))
            continue;
        /* direction from the nearest bone point */
        const tb__seg *sg = &st->segs[bi];
        float ap[3] = {p[0] - sg->a[0], p[1] - sg->a[1], p[2] - sg->a[2]};
        float t = (ap[0] * sg->ab[0] + ap[1] * sg->ab[1] + ap[2] * sg->ab[2]) * sg->inv_len2;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        float u[3] = {ap[0] - t * sg->ab[0], ap[1] - t * sg->ab[1], ap[2] - t * sg->ab[2]};
        if ((u[0] * n[0] + u[1] * n[1] + u[2] * n[2]) > 0.5f * best) {
            near[w] = bi;
            cnt[bi + 1]++;
        }
    }
    for (int i = 0; i < ns; i++)
        cnt[i + 1] += cnt[i];
    for (size_t w = 0; w < nw; w++) /* the fill walks cnt[] forward, then it is shifted back */
        if (near[w] >= 0)
            samples[cnt[near[w]]++] = st->wdist[w];
    memmove(cnt + 1, cnt, (size_t)ns * sizeof *cnt);
    cnt[0] = 0;
    float band = st->d.far_fraction * st->H;
    for (int i = 0; i < ns; i++) {
        uint32_t a = cnt[i], b = cnt[i + 1];
        if (b - a < 8) {
            env[i] = band;
            continue;
        }
        env[i] = tb__kth_float(samples + a, b - a, (b - a) / 2); /* the median */
    }
    /* Only on a humanoid skeleton, whose bones run through every part of
     * the body: on an unknown layout (a quadruped whose tail bones were
     * stripped) the body goes on past the last bone, and its rump would be
     * taken for off-bone skin (the quaternius fox) */
    int humanoid = tb__upright(st->m);
    size_t qn = 0;
    for (size_t w = 0; w < nw; w++) {
        if (!st->thin[w] || st->far[w]) {
            if (st->far[w])
                queue[qn++] = (uint32_t)w;
            continue;
        }
        int bi = seg[w];
        float best = tb__seg_dist(&st->segs[bi], st->wpos + w * 3);
        if (humanoid && best > env[bi] * (1 + st->d.envelope_margin) + st->d.thin_margin * st->H) {
            st->far[w] = 1;
            queue[qn++] = (uint32_t)w;
        }
    }
    /* grow through connected off-bone skin standing at least grow_fraction of
     * the envelope off its bone: the side of a tail facing the thigh, not
     * the body's own surface around a welded root */
    for (size_t h = 0; h < qn; h++) {
        uint32_t w = queue[h];
        for (uint32_t e = st->g.off[w]; e < st->g.off[w + 1]; e++) {
            uint32_t o = st->g.adj[e];
            if (!st->thin[o] || st->far[o] || !humanoid)
                continue;
            int bi = seg[o];
            if (tb__seg_dist(&st->segs[bi], st->wpos + (size_t)o * 3) >= st->d.grow_fraction * env[bi]) {
                st->far[o] = 1;
                queue[qn++] = o;
            }
        }
    }
done:
    free(near);
    free(seg);
    free(env);
    free(cnt);
    free(queue);
    free(samples);
    return r;
}

/* hint: a segment likely near q (its vertex's nearest, A1), tried first:
 * the test stops at a segment within reach, without the nearest's search */
static int tb__off_bone(const tb__state *st, const float q[3], float h, int hint)
{
    return !tb__segsoa_within(&st->segsoa, q, h + st->d.thin_margin * st->H, hint);
}

/* ---- a uniform grid over welded vertices, as a sorted array ------------- */

#define TB__CELL_BITS 21
#define TB__CELL_MAX ((1u << TB__CELL_BITS) - 1)

/* floor(x) clamped to [0, TB__CELL_MAX] without a call into libm: below 0
 * is 0 either way, and the cast truncates, which is floor for the x >= 0
 * left (a NaN, as before, takes the cast's value). */
static void tb__cell_of(const tb__state *st, const float *p, float inv, uint32_t c[3])
{
    for (int a = 0; a < 3; a++) {
        double x = ((double)p[a] - (double)st->m->bbox_min[a]) * inv;
        c[a] = x < 0 ? 0 : x > TB__CELL_MAX ? TB__CELL_MAX : (uint32_t)x;
    }
}

static uint64_t tb__cell_key(const uint32_t c[3])
{
    return ((uint64_t)c[0] << (2 * TB__CELL_BITS)) | ((uint64_t)c[1] << TB__CELL_BITS) | c[2];
}

static size_t tb__lower(const tb__cell_entry *e, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index ranges [lo, hi) of the entries in the 27 cells around cell c, in
 * (dx, dy, dz) order. The three cells along z have consecutive keys: one
 * search per (dx, dy), then a walk over those cells' entries. With cur
 * (9 cursors, zero at first), the caller asks for cells in ascending key
 * order: each (dx, dy) row's first key ascends too, so its search walks on
 * from where that row's last one stopped (O(n) per row over all the
 * questions, not a binary search each); NULL: a binary search. */
static int tb__neighbours_at(const tb__cell_entry *e, size_t n, const uint32_t c[3], size_t lo[27], size_t hi[27],
                             size_t *cur)
{
    int k = 0, row = -1;
    for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++) {
            row++;
            uint32_t q[3] = {c[0] + (uint32_t)dx, c[1] + (uint32_t)dy, c[2] - 1};
            if (q[0] > TB__CELL_MAX || q[1] > TB__CELL_MAX)
                continue; /* wrapped below 0 */
            size_t a = SIZE_MAX;
            for (int dz = -1; dz <= 1; dz++) {
                q[2] = c[2] + (uint32_t)dz;
                if (q[2] > TB__CELL_MAX)
                    continue; /* wrapped below 0 */
                uint64_t key = tb__cell_key(q);
                if (a == SIZE_MAX && cur) {
                    for (a = cur[row]; a < n && e[a].key < key;)
                        a++;
                    cur[row] = a;
                } else if (a == SIZE_MAX) {
                    a = tb__lower(e, n, key);
                }
                while (a < n && e[a].key < key)
                    a++;
                size_t b = a;
                while (b < n && e[b].key == key)
                    b++;
                if (b > a) {
                    lo[k] = a;
                    hi[k++] = b;
                }
                a = b;
            }
        }
    return k;
}

static int tb__neighbours(const tb__cell_entry *e, size_t n, const uint32_t c[3], size_t lo[27], size_t hi[27])
{
    return tb__neighbours_at(e, n, c, lo, hi, NULL);
}

static void tb__key_cell(uint64_t key, uint32_t c[3])
{
    c[0] = (uint32_t)(key >> (2 * TB__CELL_BITS)) & TB__CELL_MAX;
    c[1] = (uint32_t)(key >> TB__CELL_BITS) & TB__CELL_MAX;
    c[2] = (uint32_t)key & TB__CELL_MAX;
}

/* The samples: per (shell, grid cell of sample_fraction H) key, its first
 * welded vertex, in queue (src[w] = w for them, UINT32_MAX for the rest),
 * ordered by key. One pass through a hash of the keys (as many as samples,
 * not vertices), then a sort of the samples. SIZE_MAX: out of memory. */
static size_t tb__first_per_key(const tb__state *st, uint32_t *src, uint32_t *queue)
{
    size_t nw = st->nw, cap = 1024, used = 0;
    float cell = st->d.sample_fraction * st->H, inv = cell > 0 ? 1.0f / cell : 1.0f;
    uint64_t *hk = NULL;
    tb__cell_entry *pair = NULL;
    uint32_t *hv = NULL;
    if (!queue)
        return SIZE_MAX;
    for (;;) { /* (re)built from scratch when the table fills: first-seen order is the vertices' */
        free(hk);
        free(hv);
        hk = malloc(cap * sizeof *hk);
        hv = malloc(cap * sizeof *hv);
        if (!hk || !hv) {
            free(hk);
            free(hv);
            return SIZE_MAX;
        }
        memset(hv, 0xff, cap * sizeof *hv);
        used = 0;
        size_t mask = cap - 1, w = 0;
        for (; w < nw; w++) {
            uint32_t c[3];
            tb__cell_of(st, st->wpos + w * 3, inv, c);
            uint64_t key = tb__cell_key(c) ^ ((uint64_t)st->shell[w] * 0x9E3779B97F4A7C15ull);
            uint64_t h = key * 0x9E3779B97F4A7C15ull;
            size_t at = (size_t)(h ^ (h >> 29)) & mask;
            while (hv[at] != UINT32_MAX && hk[at] != key)
                at = (at + 1) & mask;
            src[w] = UINT32_MAX;
            if (hv[at] == UINT32_MAX) {
                if (2 * (used + 1) > cap)
                    break;
                hk[at] = key;
                hv[at] = (uint32_t)w;
                used++;
            }
        }
        if (w == nw)
            break;
        cap *= 4;
    }
    /* (key, sample) by key: keys are distinct, so the order is that of the
     * sorted (key, index) pairs of every vertex, whose first per key these are */
    pair = malloc((used ? used : 1) * sizeof *pair);
    if (!pair) {
        free(hk);
        free(hv);
        return SIZE_MAX;
    }
    size_t n = 0;
    for (size_t at = 0; at < cap; at++)
        if (hv[at] != UINT32_MAX) {
            pair[n].key = hk[at];
            pair[n].comp = 0;
            pair[n++].v = hv[at];
        }
    free(hk);
    free(hv);
    tb__sort_cells(pair, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t w = pair[i].v;
        src[w] = w;
        queue[i] = w;
    }
    free(pair);
    return n;
}

/* src[w] = the sample vertex w takes its thickness from: one per shell and
 * grid cell of sample_fraction H (the cell's first vertex), the others the
 * nearest sample in hops over the mesh graph (multi-source BFS, O(V)). */
tb_result tb__thickness_samples(const tb__state *st, uint32_t *src, tb_error *err)
{
    size_t nw = st->nw;
    uint32_t *queue = malloc((nw ? nw : 1) * sizeof *queue);
    size_t qn = tb__first_per_key(st, src, queue);
    if (!queue || qn == SIZE_MAX) {
        free(queue);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (size_t h = 0; h < qn; h++) {
        uint32_t w = queue[h];
        for (uint32_t e = st->g.off[w]; e < st->g.off[w + 1]; e++) {
            uint32_t o = st->g.adj[e];
            if (src[o] == UINT32_MAX) {
                src[o] = src[w];
                queue[qn++] = o;
            }
        }
    }
    for (size_t w = 0; w < nw; w++) /* isolated vertices: their own sample */
        if (src[w] == UINT32_MAX)
            src[w] = (uint32_t)w;
    free(queue);
    return TB_OK;
}

/* What tb__far_by_thickness works on: the welded triangles, the medial
 * grid, each vertex's sample (src), the ray lengths (tmax, then -1 marks a
 * sample enclosed by a body shell), off-bone counts per shell and which
 * shells are body. */
typedef struct tb__thick {
    uint32_t *wtri;
    size_t nt;
    float *tmax;
    uint32_t *sh_thin;
    uint8_t *body_shell;
    tb__medial *md;
    uint32_t *src;
} tb__thick;

/* The triangles over welded ids, degenerate ones dropped (written over the
 * caller's lent triangles where there are some: t * 3 is read before it). */
static void tb__thick_triangles(const tb__state *st, tb__thick *K)
{
    const tb_model *m = st->m;
    K->nt = 0;
    for (size_t t = 0; t < m->triangle_count; t++) {
        uint32_t a = st->wid[m->triangles[t * 3]], b = st->wid[m->triangles[t * 3 + 1]],
                 c = st->wid[m->triangles[t * 3 + 2]];
        if (a == b || b == c || a == c)
            continue;
        K->wtri[K->nt * 3] = a, K->wtri[K->nt * 3 + 1] = b, K->wtri[K->nt * 3 + 2] = c;
        K->nt++;
    }
}

/* The thickness rays of a range of vertices (tb__ranges). */
typedef struct tb__thick_rays {
    const tb__medial *md;
    const float *tmax;
    float *thick;
} tb__thick_rays;

static void tb__thick_rays_run(void *c, size_t lo, size_t hi)
{
    const tb__thick_rays *R = c;
    tb__medial_thickness(R->md, R->tmax, R->thick, lo, hi);
}

/* The enclosure rays of a range of vertices (tb__ranges): a sample whose
 * off-bone medial point lies inside a body shell gets tmax -1. */
typedef struct tb__encl_rays {
    const tb__state *st;
    tb__thick *K;
} tb__encl_rays;

static void tb__encl_rays_run(void *c, size_t lo, size_t hi)
{
    const tb__encl_rays *E = c;
    const tb__state *st = E->st;
    tb__thick *K = E->K;
    for (size_t w = lo; w < hi; w++)
        if (K->src[w] == w && st->thin[w] && tb__medial_enclosed(K->md, w, st->mpos + w * 3, K->body_shell))
            K->tmax[w] = -1; /* mark */
}

/* The medial points, their radii and the off-bone flags of a range of
 * vertices (tb__ranges), from the thickness in st->mrad. */
typedef struct tb__medial_points {
    tb__state *st;
    const float *normal;
} tb__medial_points;

static void tb__medial_points_run(void *c, size_t lo, size_t hi)
{
    const tb__medial_points *M = c;
    tb__state *st = M->st;
    for (size_t w = lo; w < hi; w++) {
        const float *p = st->wpos + w * 3, *n = M->normal + w * 3;
        float *q = st->mpos + w * 3;
        if (!isfinite(st->mrad[w])) {
            memcpy(q, p, 3 * sizeof *q);
            st->mrad[w] = 0;
            continue;
        }
        float h = 0.5f * st->mrad[w];
        for (int a = 0; a < 3; a++)
            q[a] = p[a] - n[a] * h;
        st->mrad[w] = h;
        st->thin[w] = (uint8_t)tb__off_bone(st, q, h, st->wseg[w]);
    }
}

/* Per vertex: the thickness under it (its sample's ray, K->tmax long:
 * tb__thick_tmax), its medial point half that deep, and whether the bones
 * pass beside that point rather than through it (st->thin; counted per
 * shell in sh_thin). */
static void tb__thick_medial(tb__state *st, tb__thick *K, const float *normal)
{
    size_t nw = st->nw;
    float *thick = st->mrad; /* reused: thickness, then half of it */
    tb__thick_rays rays = {K->md, K->tmax, thick};
    tb__ranges(st, nw, tb__thick_rays_run, &rays);
    for (size_t w = 0; w < nw; w++)
        if (K->src[w] != w)
            thick[w] = thick[K->src[w]];
    tb__medial_points mp = {st, normal};
    tb__ranges(st, nw, tb__medial_points_run, &mp);
    for (size_t w = 0; w < nw; w++) /* thin is 0 where the thickness is not finite */
        K->sh_thin[st->shell[w]] += st->thin[w];
}

/* Body shells: those mostly around bones. Off-bone skin whose medial point
 * lies inside one of them is a strap or plate on a body part, not a part of
 * its own; inside a shell that is itself off the bone (a tail under its
 * fur) it stays off-bone. The enclosure test on the samples; the rest
 * follow their sample. */
static tb_result tb__thick_drop_enclosed(tb__state *st, tb__thick *K, tb_error *err)
{
    size_t nw = st->nw;
    for (size_t w = 0; w < nw; w++)
        if (st->shell[w] == w)
            K->body_shell[w] = 2 * K->sh_thin[w] < st->shell_total_pre[w];
    tb_result r = tb__medial_count_shells(K->md, K->body_shell, err);
    if (r != TB_OK)
        return r;
    tb__encl_rays rays = {st, K};
    tb__ranges(st, nw, tb__encl_rays_run, &rays);
    for (size_t w = 0; w < nw; w++)
        if (K->tmax[K->src[w]] < 0)
            st->thin[w] = 0;
    return TB_OK;
}

/* On a body shell, off-bone skin is a part's surface, never a strand one
 * vertex wide (a seam whose rays slip through a crack of the mesh): an
 * opening of the off-bone set over the mesh graph keeps what has a core of
 * off-bone vertices all of whose neighbours are off-bone, and the skin
 * touching that core. */
typedef struct tb__thick_opening {
    tb__state *st;
    const uint8_t *body_shell;
    uint8_t *core;
} tb__thick_opening;

/* The core of a range of vertices (tb__ranges: each writes its own). The
 * arrays in locals: a byte store may alias any pointer left in memory. */
static void tb__thick_core_run(void *c, size_t lo, size_t hi)
{
    const tb__thick_opening *O = c;
    const uint8_t *thin = O->st->thin;
    const uint32_t *off = O->st->g.off, *adj = O->st->g.adj;
    uint8_t *core = O->core;
    for (size_t w = lo; w < hi; w++) {
        uint8_t k = thin[w];
        for (uint32_t e = off[w]; e < off[w + 1] && k; e++)
            k = thin[adj[e]];
        core[w] = k;
    }
}

/* The opening of a range of vertices (tb__ranges): each reads the cores
 * and writes its own thin[] only. */
static void tb__thick_touch_run(void *c, size_t lo, size_t hi)
{
    const tb__thick_opening *O = c;
    uint8_t *thin = O->st->thin;
    const uint32_t *off = O->st->g.off, *adj = O->st->g.adj, *shell = O->st->shell;
    const uint8_t *core = O->core, *body_shell = O->body_shell;
    for (size_t w = lo; w < hi; w++) {
        if (!thin[w] || core[w] || !body_shell[shell[w]])
            continue;
        int touches = 0;
        for (uint32_t e = off[w]; e < off[w + 1] && !touches; e++)
            touches = core[adj[e]];
        thin[w] = (uint8_t)touches;
    }
}

tb_result tb__thick_open(tb__state *st, const uint8_t *body_shell, tb_error *err)
{
    size_t nw = st->nw;
    tb__thick_opening O = {st, body_shell, calloc(nw ? nw : 1, 1)};
    if (!O.core)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb__ranges(st, nw, tb__thick_core_run, &O);
    tb__ranges(st, nw, tb__thick_touch_run, &O);
    free(O.core);
    return TB_OK;
}

/* Each sample's ray length: twice its distance to the bones, at most H / 2
 * (0: no ray), from the samples (K->src). */
static void tb__thick_tmax(const tb__state *st, tb__thick *K)
{
    float margin = st->d.thin_margin * st->H, cap = 0.5f * st->H;
    for (size_t w = 0; w < st->nw; w++) {
        float d = st->wdist[w];
        K->tmax[w] = K->src[w] == w && d > margin ? (2 * d < cap ? 2 * d : cap) : 0;
    }
}

/* The samples and their ray lengths, the normals and the triangles'
 * records (task 0), the medial grid (task 1), apart (tb__parallel_for; the
 * grid is the longer: the records, which it does not read, go with the
 * samples). r, err: the samples', the grid's, the records'. */
typedef struct tb__thick_prep {
    tb__state *st;
    tb__thick *K;
    tb_result r[3];
    tb_error err[3];
} tb__thick_prep;

static void tb__thick_prep_task(void *c, int task, int worker)
{
    (void)worker;
    tb__thick_prep *P = c;
    tb__state *st = P->st;
    tb__thick *K = P->K;
    if (task == 0) {
        P->r[0] = tb__thickness_samples(st, K->src, &P->err[0]);
        if (P->r[0] == TB_OK)
            tb__thick_tmax(st, K);
        tb__medial_orient(K->md);
        P->r[2] = tb__medial_records(K->md, &P->err[2]);
    } else {
        P->r[1] = tb__medial_grid(K->md, &P->err[1]);
    }
}

/* SPEC A10: which skin is off the bone, by the thickness under it, then
 * what is far (tb__envelope_far). Stages: welded triangles; one sample per
 * shell and cell; the medial grid; medial points and off-bone skin; skin
 * enclosed by body shells dropped; the opening on body shells. */
tb_result tb__far_by_thickness(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    size_t nw = st->nw;
    tb__thick K;
    memset(&K, 0, sizeof K);
    K.wtri = st->spare_tris ? st->spare_tris /* written in place: t * 3 is read before it */
                            : malloc((m->triangle_count ? m->triangle_count : 1) * 3 * sizeof *K.wtri);
    K.tmax = malloc((nw ? nw : 1) * sizeof *K.tmax);
    K.sh_thin = calloc(nw ? nw : 1, sizeof *K.sh_thin);
    K.body_shell = calloc(nw ? nw : 1, 1);
    st->mpos = malloc((nw ? nw : 1) * 3 * sizeof *st->mpos);
    st->mrad = malloc((nw ? nw : 1) * sizeof *st->mrad);
    st->thin = calloc(nw ? nw : 1, 1);
    tb_result r = TB_OK;
    if (!K.wtri || !K.tmax || !K.sh_thin || !K.body_shell || !st->mpos || !st->mrad || !st->thin) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    tb__thick_triangles(st, &K);
    /* rays from one vertex per shell and grid cell of sample_fraction H:
     * thickness varies over a tail's radius, not over a dense mesh's edge,
     * so a million-vertex mesh casts tens of thousands of rays; the other
     * vertices take the nearest sample's over the mesh graph. The samples
     * and the grid read the state and write apart: on two threads at once
     * where there are (the samples' scratch, a queue of welded ids, then
     * lives beside the grid's build) */
    K.src = malloc((nw ? nw : 1) * sizeof *K.src);
    if (!K.src) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    r = tb__medial_create(&K.md, st->wpos, nw, K.wtri, K.nt, st->shell, err);
    if (r != TB_OK)
        goto done;
    tb__thick_prep P;
    memset(&P, 0, sizeof P);
    P.st = st, P.K = &K;
    tb__st_for(st, nw < 2048 ? 1 : st->d.threads, 2, tb__thick_prep_task, &P);
    int bad = P.r[0] != TB_OK ? 0 : P.r[1] != TB_OK ? 1 : 2;
    r = P.r[bad];
    if (r != TB_OK) {
        if (err)
            *err = P.err[bad];
        goto done;
    }
    tb__medial_records_join(K.md);
    const float *normal = tb__medial_normals(K.md);
    tb__thick_medial(st, &K, normal);
    r = tb__thick_drop_enclosed(st, &K, err);
    if (r == TB_OK)
        r = tb__thick_open(st, K.body_shell, err);
    if (r != TB_OK)
        goto done;
    /* only a humanoid skeleton runs through every part of the body: on an
     * unknown layout (a quadruped with its tail bones stripped) the body
     * goes on past the last bone and its rump would read as off-bone skin
     * (the quaternius fox); there A2 alone says what is far */
    if (!tb__upright(m))
        memset(st->thin, 0, nw);
    tb__medial_drop_grid(K.md); /* the rays are done: only the normals are read on */
    r = tb__envelope_far(st, normal, err);
done:
    tb__medial_free(K.md);
    free(K.src);
    if (K.wtri != st->spare_tris)
        free(K.wtri);
    free(K.tmax);
    free(K.sh_thin);
    free(K.body_shell);
    return r;
}


static tb_result tb__prep_surf_tris(tb__state *st, tb_error *err);
static tb_result tb__prep_surfaces(tb__state *st, tb_error *err);
static tb_result tb__prep_shell_lists(tb__state *st, tb_error *err);

/* A CSR's lists from its counts: on entry off[k + 1] holds how many of the
 * n items have key k (off[0] = 0, nb keys); on return off[] holds the
 * offsets and list[off[k] .. off[k + 1]) the items i with key[i] == k, in
 * increasing order. keep (NULL: every item) picks the items counted. The
 * fill walks off[] itself forward and shifts it back: no scratch. */
static void tb__csr_lists(uint32_t *off, size_t nb, const uint32_t *key, const uint8_t *keep, size_t n,
                          uint32_t *list)
{
    for (size_t k = 0; k < nb; k++)
        off[k + 1] += off[k];
    for (size_t i = 0; i < n; i++)
        if (!keep || keep[i])
            list[off[key[i]]++] = (uint32_t)i;
    memmove(off + 1, off, nb * sizeof *off);
    off[0] = 0;
}

/* Prepare: each joint's class and the bone segments (A1). */
static tb_result tb__prep_classes(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    int J = m->skel.joint_count;
    st->cls = malloc(((size_t)J + 1) * sizeof *st->cls);
    if (!st->cls)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* a joint without a role (finger, eye, end helper) takes its parent's
     * class; the caller-named pelvis of an unknown layout passes nothing on */
    for (int j = 0; j < J; j++) {
        int p = m->skel.parents[j];
        st->cls[j] = tb_role_class_of(m->roles[j]);
        if (m->roles[j] == TB_ROLE_NONE && p >= 0)
            st->cls[j] = st->cls[p];
    }
    st->cls[st->pelvis] = TB_CLASS_PELVIS;
    st->nseg = tb__segments(m, st->d.extension_fraction, 1, &st->segs, &st->is_node);
    if (st->nseg < 0)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    if (st->nseg == 0)
        return tb__fail(err, TB_ERR_INVALID, NULL, "the skeleton has no weighted bone");
    if (!tb__segsoa_init(&st->segsoa, st->segs, st->nseg))
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    return TB_OK;
}

/* Prepare (SPEC A3): weld across every primitive of the skin;
 * the welded ids, their positions and each one's model vertices (CSR). */
static tb_result tb__prep_weld(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    size_t V = m->vertex_count;
    st->wid = malloc((V ? V : 1) * sizeof *st->wid);
    if (!st->wid)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    float eps = st->d.weld_epsilon > 0 ? st->d.weld_epsilon : 1e-5f * st->H;
    if (!(eps > 0))
        eps = 1e-7f;
    tb_weld_positions(st->wid, m->positions, V, 3, eps);
    size_t nw = 0;
    for (size_t v = 0; v < V; v++)
        st->wid[v] = st->wid[v] == v ? (uint32_t)nw++ : st->wid[st->wid[v]];
    st->nw = nw;
    st->wpos = malloc((nw ? nw : 1) * 3 * sizeof *st->wpos);
    st->far = calloc(nw ? nw : 1, 1);
    st->model_off = calloc(nw + 1, sizeof *st->model_off);
    st->model_list = malloc((V ? V : 1) * sizeof *st->model_list);
    if (!st->wpos || !st->far || !st->model_off || !st->model_list)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    st->wdist = malloc((nw ? nw : 1) * sizeof *st->wdist);
    st->wseg = malloc((nw ? nw : 1) * sizeof *st->wseg);
    if (!st->wdist || !st->wseg)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t v = 0; v < V; v++) { /* a welded id's position: its first model vertex's */
        uint32_t w = st->wid[v];
        if (++st->model_off[w + 1] == 1)
            memcpy(st->wpos + (size_t)w * 3, m->positions + v * 3, 3 * sizeof(float));
    }
    tb__csr_lists(st->model_off, nw, st->wid, NULL, V, st->model_list);
    return TB_OK;
}

/* Prepare (SPEC A1, A2): distance to the skeleton, O(welded
 * vertices × segments), and the far set by it. */
static void tb__prep_distance_run(void *c, size_t lo, size_t hi)
{
    tb__state *st = c;
    float thr = st->d.far_fraction * st->H; /* SPEC A2 */
    for (size_t w = lo; w < hi; w++) {
        st->wdist[w] = tb__segsoa_nearest(&st->segsoa, st->wpos + w * 3, &st->wseg[w]);
        st->far[w] = st->wdist[w] > thr;
    }
}

void tb__prep_distance(tb__state *st)
{
    tb__ranges(st, st->nw, tb__prep_distance_run, st);
}

/* Prepare: the mesh graph and its shells (all edges, union-find;
 * far components start as singletons) */
static tb_result tb__prep_shells(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    size_t nw = st->nw;
    tb_result r = tb__graph_build(&st->g, nw, m->triangles, m->triangle_count, st->wid, err);
    if (r != TB_OK)
        return r;
    st->shell = malloc((nw ? nw : 1) * sizeof *st->shell);
    st->comp_uf = malloc((nw ? nw : 1) * sizeof *st->comp_uf);
    st->shell_total = calloc(nw ? nw : 1, sizeof *st->shell_total);
    st->shell_far = calloc(nw ? nw : 1, sizeof *st->shell_far);
    st->shell_total_pre = calloc(nw ? nw : 1, sizeof *st->shell_total_pre);
    if (!st->shell || !st->comp_uf || !st->shell_total || !st->shell_far || !st->shell_total_pre)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* a triangle's corners: one shell, labelled by its least welded id (as
     * a union-find rooted at the least index gave): the graph's components,
     * each flooded once from its least vertex (comp_uf the queue) */
    uint32_t *queue = st->comp_uf;
    for (size_t w = 0; w < nw; w++)
        st->shell[w] = UINT32_MAX;
    for (size_t w = 0; w < nw; w++) {
        if (st->shell[w] != UINT32_MAX)
            continue;
        size_t qh = 0, qn = 0;
        st->shell[w] = (uint32_t)w;
        queue[qn++] = (uint32_t)w;
        while (qh < qn) {
            uint32_t v = queue[qh++];
            for (uint32_t e = st->g.off[v]; e < st->g.off[v + 1]; e++) {
                uint32_t o = st->g.adj[e];
                if (st->shell[o] == UINT32_MAX) {
                    st->shell[o] = (uint32_t)w;
                    queue[qn++] = o;
                }
            }
        }
    }
    for (size_t w = 0; w < nw; w++) {
        st->comp_uf[w] = (uint32_t)w;
        st->shell_total_pre[st->shell[w]]++;
    }
    return TB_OK;
}

/* Prepare: areas: how much of the skin a part is does not depend
 * on how finely it is meshed (a dense tail on a low-poly body) */
static tb_result tb__prep_areas(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    size_t nw = st->nw;
    st->warea = calloc(nw ? nw : 1, sizeof *st->warea);
    st->shell_area = calloc(nw ? nw : 1, sizeof *st->shell_area);
    if (!st->warea || !st->shell_area)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t t = 0; t < m->triangle_count; t++) {
        uint32_t a = st->wid[m->triangles[t * 3]], b = st->wid[m->triangles[t * 3 + 1]],
                 c = st->wid[m->triangles[t * 3 + 2]];
        if (a == b || b == c || a == c)
            continue;
        const float *pa = st->wpos + (size_t)a * 3, *pb = st->wpos + (size_t)b * 3, *pc = st->wpos + (size_t)c * 3;
        float u[3] = {pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]}, v[3] = {pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]};
        float x[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        float third = sqrtf(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) / 6.0f;
        if (!isfinite(third))
            continue;
        st->warea[a] += third, st->warea[b] += third, st->warea[c] += third;
    }
    for (size_t w = 0; w < nw; w++) {
        st->shell_area[st->shell[w]] += st->warea[w];
        st->area_total += st->warea[w];
    }
    return TB_OK;
}

/* Prepare: holes. The pole of a tail's tip, whose ray runs along the tail,
 * reads as skin round a bone and is left near while the tail round it is
 * far. A patch of non-far skin (joined by non-far edges) has only far skin
 * round it: every neighbour outside it is far, by construction. The pole
 * of a tip is surrounded by the tail's off-bone skin, so a patch of fewer
 * than min_vertices vertices is a hole when more than half of its edges
 * into far skin reach off-bone skin; every vertex of it becomes far and off
 * the bone. A patch in far skin round a bone (the body's own far skin,
 * clothing, armour) is no pole and stays as it is: body skin, which the
 * merge's layer rule measures gaps to (docs/detection.md, *Holes: every
 * vertex of a pole, and only a pole*); a patch that is a whole shell has
 * no edge into far skin and is no hole either. A patch of any size whose
 * every vertex but one is off the bone (a tip's cap hanging beside a foot,
 * inside that limb's envelope so not far: its cross-section holds no bone,
 * only its pole's ray ran along the tail) is a hole too, in the same
 * off-bone far skin. */
tb_result tb__prep_holes(tb__state *st, tb_error *err)
{
    const uint32_t *goff = st->g.off, *gadj = st->g.adj; /* in locals: byte stores below */
    uint8_t *far = st->far, *thin = st->thin;
    size_t nw = st->nw;
    uint32_t *uf = malloc((nw ? nw : 1) * sizeof *uf), *cnt = calloc(nw ? nw : 1, sizeof *cnt);
    uint32_t *rim = calloc(nw ? nw : 1, sizeof *rim), *rim_off = calloc(nw ? nw : 1, sizeof *rim_off);
    uint32_t *pthin = calloc(nw ? nw : 1, sizeof *pthin);
    tb_result r = TB_OK;
    if (!uf || !cnt || !rim || !rim_off || !pthin) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    for (size_t w = 0; w < nw; w++)
        uf[w] = (uint32_t)w;
    for (size_t w = 0; w < nw; w++)
        for (uint32_t e = goff[w]; e < goff[w + 1]; e++)
            if (!far[w] && !far[gadj[e]])
                tb__unite(uf, (uint32_t)w, gadj[e]);
    /* per patch (at its root): its size, its edges into far skin and how
     * many of those reach off-bone skin */
    for (size_t w = 0; w < nw; w++) {
        if (far[w])
            continue;
        uint32_t root = tb__find(uf, (uint32_t)w);
        cnt[root]++;
        for (uint32_t e = goff[w]; e < goff[w + 1]; e++) {
            uint32_t o = gadj[e];
            rim[root] += far[o];
            rim_off[root] += far[o] && thin[o];
        }
        pthin[root] += thin[w];
    }
    /* far[] changes below only for patch vertices, each read once: the
     * counts above are per root and fixed */
    for (size_t w = 0; w < nw; w++) {
        if (far[w])
            continue;
        uint32_t root = tb__find(uf, (uint32_t)w);
        if ((cnt[root] < (uint32_t)st->d.min_vertices || pthin[root] + 1 >= cnt[root]) &&
            2 * (uint64_t)rim_off[root] > rim[root])
            far[w] = thin[w] = 1;
    }
done:
    free(uf);
    free(cnt);
    free(rim);
    free(rim_off);
    free(pthin);
    return r;
}

/* Prepare: the far set's parts (far-far edges, union-find), each
 * root compressed for the tube cut */
tb_result tb__prep_far_parts(tb__state *st, tb_error *err)
{
    const uint32_t *goff = st->g.off, *gadj = st->g.adj; /* in locals (a byte store may alias) */
    const uint8_t *far = st->far, *thin = st->thin;
    uint32_t *comp_uf = st->comp_uf;
    size_t nw = st->nw;
    /* on a body shell (mostly skin round bones), off-bone skin and far skin
     * round a bone are different parts even where they touch: a tail welded
     * into the buttocks is not the buttocks (SPEC A10) */
    uint32_t *sthin = calloc(nw ? nw : 1, sizeof *sthin);
    if (!sthin)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t w = 0; w < nw; w++)
        sthin[st->shell[w]] += thin[w];
    /* each edge once (from its lesser end: the graph lists it at both, and
     * the test is the same either way round: one shell, so one body flag);
     * the parts and their roots, the least index, do not depend on the order */
    for (size_t w = 0; w < nw; w++) {
        if (!far[w])
            continue;
        int body = 2 * sthin[st->shell[w]] < st->shell_total_pre[st->shell[w]];
        for (uint32_t e = goff[w]; e < goff[w + 1]; e++) {
            uint32_t o = gadj[e];
            if (o > w && far[o] && (!body || thin[w] == thin[o]))
                tb__unite(comp_uf, (uint32_t)w, o);
        }
    }
    free(sthin);
    /* a scrap of far skin split off that way (the pole of a tail's tip,
     * whose ray runs along the tail: not off-bone by itself) goes with the
     * far part it touches rather than being dropped as too small */
    uint32_t *size = calloc(nw ? nw : 1, sizeof *size);
    if (!size)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t w = 0; w < nw; w++)
        if (far[w])
            size[tb__find(comp_uf, (uint32_t)w)]++;
    for (size_t w = 0; w < nw; w++) {
        if (!far[w])
            continue;
        uint32_t rw = tb__find(comp_uf, (uint32_t)w);
        if (size[rw] >= (uint32_t)st->d.min_vertices)
            continue;
        for (uint32_t e = goff[w]; e < goff[w + 1]; e++) {
            uint32_t o = gadj[e], ro;
            if (far[o] && (ro = tb__find(comp_uf, o)) != rw) {
                uint32_t total = size[rw] + size[ro];
                tb__unite(comp_uf, rw, ro);
                rw = tb__find(comp_uf, (uint32_t)w);
                size[rw] = total;
                break;
            }
        }
    }
    free(size);
    for (size_t w = 0; w < nw; w++) /* roots first: the cut lists parts by root */
        if (far[w])
            comp_uf[w] = tb__find(comp_uf, (uint32_t)w);
    return TB_OK;
}

/* Prepare: each shell's size and vertices (CSR). shell[w] is its
 * shell's root from tb__prep_shells on (a flood's label, its least
 * vertex), written by nothing after: read only here, in the distances'
 * loop (tb__prep_pair_task), beside the distances. */
static tb_result tb__prep_shell_lists(tb__state *st, tb_error *err)
{
    size_t nw = st->nw;
    st->shell_off = calloc(nw + 1, sizeof *st->shell_off);
    st->shell_list = malloc((nw ? nw : 1) * sizeof *st->shell_list);
    if (!st->shell_off || !st->shell_list)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t w = 0; w < nw; w++) {
        uint32_t s = st->shell[w];
        st->shell_total[s]++;
        st->shell_off[s + 1]++;
    }
    tb__csr_lists(st->shell_off, nw, st->shell, NULL, nw, st->shell_list);
    return TB_OK;
}

/* The tasks after the weld (tb__parallel_for): the graph, shells, areas,
 * shells' lists and surfaces (0), whose result and error go in r, err; then the
 * distances in blocks of `block` welded vertices (task 1 + b: block b, its
 * time in ms[b]), taken by whichever thread is free: the distances fill
 * the time the chain of task 0 leaves. */
enum { TB__PAIR_BLOCKS = 64 };
typedef struct tb__prep_pair {
    tb__state *st;
    size_t block;
    tb_result r;
    tb_error err;
    double ms[TB__PAIR_BLOCKS];
} tb__prep_pair;

static void tb__prep_pair_task(void *c, int task, int worker)
{
    (void)worker;
    tb__prep_pair *P = c;
    tb__state *st = P->st;
    double t = tb__now_ms();
    if (task > 0) {
        int b = task - 1;
        size_t lo = (size_t)b * P->block, hi = lo + P->block < st->nw ? lo + P->block : st->nw;
        tb__prep_distance_run(st, lo, hi);
        P->ms[b] = tb__now_ms() - t;
        return;
    }
    P->r = tb__prep_shells(st, &P->err);
    if (P->r == TB_OK)
        P->r = tb__prep_areas(st, &P->err);
    if (P->r == TB_OK)
        P->r = tb__prep_shell_lists(st, &P->err);
    st->ms[2] = tb__now_ms() - t;
    if (P->r == TB_OK)
        P->r = tb__prep_surfaces(st, &P->err);
}

/* The tasks before the weld's readers (tb__st_for): the weld (0, its time
 * in st->ms[1]); the caller's side task (1, where there is one: it reads
 * the model's triangles, which the thickness writes over later); the
 * joints' classes and bone segments, then the model's triangles joined
 * into surfaces (last). Each writes its own fields of the state (the side
 * task its caller's) and reads only the model: the same state in any
 * order. Longest first: a thread that comes free takes the shorter last. */
typedef struct tb__prep_first {
    tb__state *st;
    tb_result r[2];
    tb_error err[2];
} tb__prep_first;

static void tb__prep_first_task(void *c, int task, int worker)
{
    (void)worker;
    tb__prep_first *F = c;
    tb__state *st = F->st;
    if (task == 0) {
        double t = tb__now_ms();
        F->r[0] = tb__prep_weld(st, &F->err[0]);
        st->ms[1] = tb__now_ms() - t;
        return;
    }
    if (task == 1 && st->side) {
        st->side->fn(st->side->ctx);
        return;
    }
    F->r[1] = tb__prep_classes(st, &F->err[1]);
    if (F->r[1] == TB_OK)
        F->r[1] = tb__prep_surf_tris(st, &F->err[1]);
}

/* Detection's first stages: the weld, beside the caller's side task and
 * classes and segments → surfaces' triangles (tb__prep_first_task) →
 * distance, beside shells → areas → shells' lists → surfaces
 * (tb__prep_pair_task) → far by thickness →
 * holes → far parts → tube cut → own surfaces → the shells' far counts;
 * st->ms[] gets the weld (1),
 * distance (0), graph and parts (2) and thickness (6) times (the distance's
 * and the graph's each its own task's, which may overlap). */
tb_result tb__detect_prepare(tb__state *st, tb_error *err)
{
    /* the side task, classes and segments, and the surfaces' triangles,
     * beside the weld: a failure of the classes (no weighted bone) is the
     * one reported, as when they ran first */
    tb__prep_first F;
    memset(&F, 0, sizeof F);
    F.st = st;
    tb__st_for(st, st->m->vertex_count < 2048 ? 1 : st->d.threads, 2 + (st->side != NULL), tb__prep_first_task, &F);
    int bad = F.r[1] != TB_OK ? 1 : 0;
    tb_result r = F.r[bad];
    if (r != TB_OK) {
        if (err)
            *err = F.err[bad];
        return r;
    }
    /* the distances and the mesh's graph, shells, areas and surfaces read
     * the weld and write apart: tasks on two threads where there are (each
     * stage's time is its own tasks', the distances' summed over blocks) */
    tb__prep_pair P;
    memset(&P, 0, sizeof P);
    P.st = st;
    P.block = (st->nw + TB__PAIR_BLOCKS - 1) / TB__PAIR_BLOCKS;
    P.block = P.block < 256 ? 256 : P.block;
    int nb = (int)((st->nw + P.block - 1) / P.block);
    tb__st_for(st, st->nw < 2048 ? 1 : st->d.threads, 1 + nb, tb__prep_pair_task, &P);
    st->ms[0] = 0;
    for (int b = 0; b < nb; b++)
        st->ms[0] += P.ms[b];
    if (P.r != TB_OK) {
        if (err)
            *err = P.err;
        return P.r;
    }
    double t2 = tb__now_ms();
    r = tb__far_by_thickness(st, err);
    st->ms[6] = tb__now_ms() - t2;
    if (r != TB_OK)
        return r;
    t2 = tb__now_ms();
    r = tb__prep_holes(st, err);
    if (r == TB_OK)
        r = tb__prep_far_parts(st, err);
    if (r == TB_OK)
        r = tb__tube_cut(st, err);
    if (r == TB_OK)
        r = tb__own_surfaces(st, err);
    if (r != TB_OK)
        return r;
    for (size_t w = 0; w < st->nw; w++) /* each shell's far count, on the far set as it stands now */
        st->shell_far[st->shell[w]] += st->far[w];
    st->ms[2] += tb__now_ms() - t2;
    return TB_OK;
}

/* The surfaces the model was made of, before the weld joined them: model
 * vertices joined by the model's own triangles (a tail modelled apart and
 * welded onto the body by position is one surface, the body another).
 * Read before the thickness pass, which may write welded triangles over
 * the model's. */
static tb_result tb__prep_surf_tris(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    size_t V = m->vertex_count;
    st->surf = malloc((V ? V : 1) * sizeof *st->surf);
    if (!st->surf)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t v = 0; v < V; v++)
        st->surf[v] = (uint32_t)v;
    for (size_t t = 0; t < m->triangle_count; t++) {
        tb__unite(st->surf, m->triangles[t * 3], m->triangles[t * 3 + 1]);
        tb__unite(st->surf, m->triangles[t * 3 + 1], m->triangles[t * 3 + 2]);
    }
    return TB_OK;
}

/* ... then (tb__prep_surfaces, after the weld) vertices of one primitive
 * at one place joined. */
static tb_result tb__prep_surfaces(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    size_t V = m->vertex_count;
    /* inside one primitive, vertices at one place are one surface: an
     * exporter splits them at UV seams and hard edges (a flat-shaded body's
     * every face), not where two modelled parts meet */
    uint32_t *first = malloc((st->nw ? st->nw : 1) * sizeof *first);
    if (!first)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    memset(first, 0xff, (st->nw ? st->nw : 1) * sizeof *first);
    for (int p = 0; p < m->prim_count; p++) {
        size_t off = m->prims[p].vertex_offset, end = off + m->prims[p].vertex_count;
        for (size_t v = off; v < end && v < V; v++) {
            uint32_t w = st->wid[v];
            if (first[w] != UINT32_MAX && first[w] >= off)
                tb__unite(st->surf, first[w], (uint32_t)v);
            else
                first[w] = (uint32_t)v;
        }
    }
    free(first);
    for (size_t v = 0; v < V; v++)
        st->surf[v] = tb__find(st->surf, (uint32_t)v);
    return TB_OK;
}

/* Whether far part p (npart far vertices, nown of them on surfaces of its
 * own; w one of them) gives up skin on no surface of its own: it is welded
 * into a larger shell and its own surfaces make up at least half of it. */
static int tb__keeps_own(const tb__state *st, uint32_t npart, uint32_t nown, uint32_t w)
{
    return npart < st->shell_total_pre[st->shell[w]] && 2 * nown >= npart && nown >= (uint32_t)st->d.min_vertices;
}

/* Whether a surface (tot vertices, in of them in its part, inner of those
 * off the part's edge) is its part's own: most of it lies in the part, and
 * most of that reaches in from the edge the part meets the body by. */
static int tb__surf_owned(uint32_t in, uint32_t tot, uint32_t inner)
{
    return 2 * in > tot && 2 * inner > in;
}

/* Whether far welded vertex w lies on its part's edge: next to a welded
 * vertex that is not in its part (the body it meets, or other far skin).
 * pf: each welded vertex's part, UINT32_MAX where not far. */
static int tb__part_edge(const tb__state *st, const uint32_t *pf, uint32_t w)
{
    for (uint32_t e = st->g.off[w]; e < st->g.off[w + 1]; e++)
        if (pf[st->g.adj[e]] != pf[w])
            return 1;
    return 0;
}

/* The main own surface of the part holding model vertex v's surface (the
 * own surface with most vertices in its part: the tail modelled apart), or
 * UINT32_MAX when v lies on no part's main surface. */
static uint32_t tb__main_of(const tb__state *st, const uint32_t *part, const uint32_t *mainsurf, uint32_t v)
{
    uint32_t s = st->surf[v];
    return part[s] != UINT32_MAX && mainsurf[part[s]] == s ? s : UINT32_MAX;
}

/* The junctions of the parts' main surfaces (junc[w]: the main surface, or
 * UINT32_MAX): welded vertices where a main surface's model vertex shares
 * its position with another surface's, the seams the surface was welded
 * by. Those of a seam loop that reaches the part's edge, or leaves the part
 * (ring[w] set, flooded along the welded graph through the same surface's
 * junctions), are its root ring: the seam the tail was welded onto the body
 * by, whole — where the piece of the body under it lies wholly inside the
 * part, the ring's vertices on it are off the part's edge, but the ring
 * they belong to meets it. A seam further out (a tip cap) is a loop of its
 * own, away from the edge. stack: room for nw ids. */
static void tb__root_rings(const tb__state *st, const uint32_t *part, const uint32_t *pf, const uint32_t *mainsurf,
                           const uint8_t *edge, uint32_t *junc, uint8_t *ring, uint32_t *stack)
{
    size_t nw = st->nw, top = 0;
    const uint32_t NONE = UINT32_MAX;
    for (size_t w = 0; w < nw; w++) {
        uint32_t M = NONE, other = 0;
        junc[w] = NONE;
        if (st->model_off[w + 1] - st->model_off[w] < 2)
            continue; /* one model vertex: no seam (ring[] starts zero) */
        for (uint32_t k = st->model_off[w]; k < st->model_off[w + 1]; k++) {
            /* on two parts' main surfaces (a piece under a root, a far
             * part of its own): the one of w's own part */
            uint32_t mk = tb__main_of(st, part, mainsurf, st->model_list[k]);
            if (mk != NONE && (M == NONE || (st->far[w] && part[mk] == pf[w])))
                M = mk;
        }
        for (uint32_t k = st->model_off[w]; M != NONE && k < st->model_off[w + 1]; k++)
            other |= st->surf[st->model_list[k]] != M;
        junc[w] = other ? M : NONE;
        ring[w] = other && (edge[w] || !st->far[w] || pf[w] != part[M]);
        if (ring[w])
            stack[top++] = (uint32_t)w;
    }
    while (top) {
        uint32_t w = stack[--top];
        for (uint32_t e = st->g.off[w]; e < st->g.off[w + 1]; e++) {
            uint32_t o = st->g.adj[e];
            if (!ring[o] && junc[o] == junc[w]) {
                ring[o] = 1;
                stack[top++] = o;
            }
        }
    }
}

/* Per part, its main own surface (mainsurf[p], or UINT32_MAX): the own
 * surface with most vertices in it — the tail modelled apart. */
static void tb__main_surfaces(const tb__state *st, const uint32_t *part, const uint32_t *in, const uint32_t *tot,
                              const uint32_t *inner, uint32_t *mainsurf)
{
    size_t V = st->m->vertex_count, nw = st->nw;
    const uint32_t NONE = UINT32_MAX;
    for (size_t w = 0; w < nw; w++)
        mainsurf[w] = NONE;
    for (size_t s = 0; s < V; s++) {
        uint32_t p = part[s];
        if (st->surf[s] == s && p != NONE && tb__surf_owned(in[s], tot[s], inner[s]) &&
            (mainsurf[p] == NONE || in[s] > in[mainsurf[p]]))
            mainsurf[p] = (uint32_t)s;
    }
}

/* A surface modelled apart is its part's whole, up to the seams it was
 * welded by: where the tube cut (reading rings, which the root's first
 * rings hanging by the body's skin can make look open) took welded
 * vertices lying on a part's main own surface alone (no other surface
 * welded there: not the weld ring), they are the part's again, far and as
 * thin as they were. */
static void tb__main_whole(tb__state *st, const uint32_t *part, const uint32_t *mainsurf)
{
    const uint32_t NONE = UINT32_MAX;
    for (size_t w = 0; w < st->nw; w++) {
        uint32_t M = NONE, alone = 1;
        for (uint32_t k = st->model_off[w]; st->cut[w] && k < st->model_off[w + 1]; k++) {
            uint32_t mk = tb__main_of(st, part, mainsurf, st->model_list[k]);
            alone &= mk != NONE && (M == NONE || mk == M);
            M = mk;
        }
        if (!st->cut[w] || M == NONE || !alone)
            continue;
        st->far[w] = 1;
        st->thin[w] = (uint8_t)(st->cut[w] >> 1);
        st->comp_uf[w] = part[M];
    }
}

/* The surfaces a far part was welded onto at its root (in[s] set to 0 for
 * them: none of their vertices count as the part's). A tail modelled apart
 * is its main own surface; its root ring was snapped onto the body's skin,
 * so another surface given to the same part that shares a welded vertex
 * with the main surface's root ring (tb__root_rings) is what the ring was
 * snapped onto — a piece of the body, even one lying wholly inside the part
 * (belt gear under a root, a bolt of a robot's pelvis plate) — not the
 * part's own. A surface welded on further out (a tip, away from the part's
 * edge) stays. Then the skin the tube-end trim took from a main surface
 * with a root ring (a tail modelled apart and welded onto the body) is its
 * part's again (tb__main_whole). in, tot, inner: per surface, its vertices
 * in its part, all of them, those in it off its edge; edge[w]: w lies on
 * its part's edge; pf[w]: far w's part. 0: out of memory. */
static int tb__root_seams(tb__state *st, const uint32_t *part, const uint32_t *pf, uint32_t *in, const uint32_t *tot,
                          const uint32_t *inner, const uint8_t *edge)
{
    size_t V = st->m->vertex_count, nw = st->nw;
    uint32_t *junc = malloc((nw ? nw : 1) * sizeof *junc), *stack = malloc((nw ? nw : 1) * sizeof *stack),
             *mainsurf = malloc((nw ? nw : 1) * sizeof *mainsurf);
    uint8_t *rooted = calloc(V ? V : 1, 1), *ring = calloc(nw ? nw : 1, 1);
    int ok = junc && stack && mainsurf && rooted && ring;
    if (ok) {
        tb__main_surfaces(st, part, in, tot, inner, mainsurf);
        tb__root_rings(st, part, pf, mainsurf, edge, junc, ring, stack);
    }
    for (size_t w = 0; ok && w < nw; w++)
        for (uint32_t k = st->model_off[w]; ring[w] && k < st->model_off[w + 1]; k++) {
            uint32_t s = st->surf[st->model_list[k]];
            rooted[s] |= s != junc[w] && part[s] == part[junc[w]];
        }
    for (size_t s = 0; ok && s < V; s++)
        in[s] = rooted[s] ? 0 : in[s];
    /* mainsurf[p] stays only where the main surface has a root ring */
    for (size_t w = 0; ok && w < nw; w++)
        junc[w] = ring[w] ? part[junc[w]] : UINT32_MAX;
    for (size_t w = 0; ok && w < nw; w++)
        if (junc[w] != UINT32_MAX)
            ring[junc[w]] = 2;
    for (size_t p = 0; ok && p < nw; p++)
        mainsurf[p] = ring[p] == 2 ? mainsurf[p] : UINT32_MAX;
    if (ok)
        tb__main_whole(st, part, mainsurf);
    free(mainsurf);
    free(junc);
    free(stack);
    free(rooted);
    free(ring);
    return ok;
}

/* The weld ring (ring[w] set, welded ids; comp_uf[w] its part, nown[p] the
 * part's own welded vertices) goes back to the body where the part keeps at
 * least min_vertices of its own beyond it. cnt: room for nw counts. */
static void tb__ring_back(tb__state *st, const uint8_t *ring, uint32_t *cnt, const uint32_t *nown)
{
    size_t nw = st->nw;
    memset(cnt, 0, (nw ? nw : 1) * sizeof *cnt);
    for (size_t w = 0; w < nw; w++)
        cnt[st->comp_uf[w]] += ring[w];
    for (size_t w = 0; w < nw; w++) {
        uint32_t p = st->comp_uf[w];
        if (ring[w] && nown[p] - cnt[p] >= (uint32_t)st->d.min_vertices) {
            st->far[w] = 0;
            st->thin[w] = 0;
        }
    }
}

/* Each far part labelled by its first vertex that is still far (comp_uf[w]
 * holds w's part on entry; the body's vertices label themselves). root:
 * room for nw ids. */
static void tb__part_roots(tb__state *st, uint32_t *root)
{
    const uint32_t NONE = UINT32_MAX;
    size_t nw = st->nw;
    for (size_t w = 0; w < nw; w++)
        root[w] = st->far[w] ? (uint32_t)w : NONE;
    for (size_t w = 0; w < nw; w++)
        if (st->far[w] && root[st->comp_uf[w]] == NONE)
            root[st->comp_uf[w]] = (uint32_t)w;
    for (size_t w = 0; w < nw; w++)
        st->comp_uf[w] = st->far[w] ? root[st->comp_uf[w]] : (uint32_t)w;
}

/* A surface belongs to the far part that holds most of it (a tail's own
 * tube: all of it but the weld ring's side in the collar). Where a far part
 * welded into a larger shell holds surfaces of its own that make up at
 * least half of it, its skin on no surface of its own is the body's skin
 * the part was welded onto (buttock skin beside and under a welded root,
 * the skin of a body part the root sinks into): not far. A surface lying
 * on the part's edge (a small piece of the body the root ring was snapped
 * onto) is not the part's own, and where its vertices were welded to the
 * part's own (the weld ring) both stay the body's. A part holding no surface of its own
 * (a tail sculpted in one surface with the body, the body's own far skin)
 * is left whole. O(V + E). */
tb_result tb__own_surfaces(tb__state *st, tb_error *err)
{
    const tb_model *m = st->m;
    size_t V = m->vertex_count, nw = st->nw;
    const uint32_t NONE = UINT32_MAX;
    uint32_t *part = malloc((V ? V : 1) * sizeof *part), *in = calloc(V ? V : 1, sizeof *in),
             *tot = calloc(V ? V : 1, sizeof *tot), *inner = calloc(V ? V : 1, sizeof *inner),
             *nown = calloc(nw ? nw : 1, sizeof *nown), *npart = calloc(nw ? nw : 1, sizeof *npart),
             *pf = malloc((nw ? nw : 1) * sizeof *pf);
    uint8_t *own = calloc(nw ? nw : 1, 1);
    tb_result r = TB_OK;
    if (!part || !in || !tot || !inner || !nown || !npart || !own || !pf) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    /* pf[w]: far w's part (its root), UINT32_MAX where not far, looked up
     * once per welded vertex where the passes below ask per model vertex
     * and per edge. The tube cut leaves every far vertex at most one step
     * from its root, so the finds write nothing: the labels are the finds'
     * at each point they were asked (again after the root seams, which
     * give skin back to parts) */
    for (size_t w = 0; w < nw; w++)
        pf[w] = st->far[w] ? tb__find(st->comp_uf, (uint32_t)w) : NONE;
    /* per surface, the part most of its far vertices are in (a majority vote: the
     * candidate, then its count) */
    for (size_t v = 0; v < V; v++)
        part[v] = NONE;
    for (size_t v = 0; v < V; v++) {
        uint32_t s = st->surf[v], w = st->wid[v];
        if (!st->far[w])
            continue;
        uint32_t p = pf[w];
        if (in[s] == 0)
            part[s] = p;
        in[s] += part[s] == p ? 1u : (uint32_t)-1;
    }
    /* in[], inner[]: per surface, its vertices in its part, and those of them
     * off the part's edge (own[] holds the edge for now) */
    memset(in, 0, (V ? V : 1) * sizeof *in);
    for (size_t w = 0; w < nw; w++)
        own[w] = st->far[w] && tb__part_edge(st, pf, (uint32_t)w);
    for (size_t v = 0; v < V; v++) {
        uint32_t s = st->surf[v], w = st->wid[v];
        int inp = st->far[w] && pf[w] == part[s];
        tot[s]++;
        in[s] += (uint32_t)inp;
        inner[s] += (uint32_t)(inp && !own[w]);
    }
    if (!tb__root_seams(st, part, pf, in, tot, inner, own)) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    for (size_t w = 0; w < nw; w++)
        pf[w] = st->far[w] ? tb__find(st->comp_uf, (uint32_t)w) : NONE;
    memset(own, 0, nw ? nw : 1);
    /* a welded vertex is its part's own where one of its model vertices lies on a
     * surface most of which is in that part and which reaches in from the
     * part's edge: a tail's own surface runs along it, crossed by its rings,
     * while a piece of the body the root ring was snapped onto lies on the
     * edge the part meets the body by */
    for (size_t v = 0; v < V; v++) {
        uint32_t s = st->surf[v], w = st->wid[v];
        own[w] |= (uint8_t)(st->far[w] && tb__surf_owned(in[s], tot[s], inner[s]) &&
                            pf[w] == part[s]);
    }
    for (size_t w = 0; w < nw; w++)
        if (st->far[w]) {
            uint32_t p = pf[w];
            npart[p]++;
            nown[p] += own[w];
        }
    /* comp_uf[] from here: each welded vertex's part (its root), or itself */
    for (size_t w = 0; w < nw; w++) {
        uint32_t p = st->far[w] ? pf[w] : (uint32_t)w;
        st->comp_uf[w] = p;
        if (!st->far[w] || own[w] || !tb__keeps_own(st, npart[p], nown[p], w))
            continue; /* a shell of its own, or no surface of its own to keep */
        st->far[w] = 0;
        st->thin[w] = 0;
    }
    /* the weld ring: where a vertex of the body's skin (on no surface of the
     * part's own) was snapped onto one of the part's own, the two stay
     * together with the body, and the part begins beyond them — where there
     * is a part beyond them: one that is little more than its weld ring (a
     * low-poly ear, a cone welded on by its base) is left whole. own[]
     * marks the ring (free by now). */
    memset(own, 0, nw ? nw : 1);
    for (size_t v = 0; v < V; v++) {
        uint32_t s = st->surf[v], w = st->wid[v], p = st->comp_uf[w];
        own[w] |= (uint8_t)(st->far[w] && !(tb__surf_owned(in[s], tot[s], inner[s]) && p == part[s]) &&
                            tb__keeps_own(st, npart[p], nown[p], w));
    }
    tb__ring_back(st, own, in, nown);
    tb__part_roots(st, nown);
done:
    free(part);
    free(in);
    free(tot);
    free(inner);
    free(nown);
    free(npart);
    free(pf);
    free(own);
    free(st->surf);
    st->surf = NULL;
    free(st->cut);
    st->cut = NULL;
    return r;
}

/* The axis of a tube near where its walk ends (gend): a line through the
 * ring centroids between 3 and 1 reach before the end (reach = the ring
 * radius there, at least two edges), and the mean ring radius there.
 * acc: per band of h, (centroid sum xyz, count, mean radius). 0 when the
 * window holds too few rings. */
static int tb__tube_end_axis(const double *acc, int nb, double h, float gend, float p[3], float d[3], float *rt)
{
    int e = (int)(gend / h) - 1;
    e = e >= nb ? nb - 1 : e;
    double r0 = 0;
    for (int b = e; b >= 0 && !(r0 > 0); b--)
        r0 = acc[(size_t)b * 5 + 3] ? acc[(size_t)b * 5 + 4] : 0;
    double reach = r0 > 2 * h ? r0 : 2 * h;
    double lo = gend - 3 * reach, hi = gend - reach, mid = 0.5 * (lo + hi);
    double c[2][4] = {{0}}, rs = 0;
    int rn = 0;
    for (int b = 0; b < nb; b++) {
        double gb = (b + 0.5) * h, cnt = acc[(size_t)b * 5 + 3];
        if (!cnt || gb < lo || gb > hi)
            continue;
        int half = gb >= mid;
        for (int a = 0; a < 3; a++)
            c[half][a] += acc[(size_t)b * 5 + (size_t)a];
        c[half][3] += cnt;
        rs += acc[(size_t)b * 5 + 4];
        rn++;
    }
    if (rn < 2 || !c[0][3] || !c[1][3])
        return 0;
    double len = 0;
    for (int a = 0; a < 3; a++) {
        double x0 = c[0][a] / c[0][3], x1 = c[1][a] / c[1][3];
        p[a] = (float)x1;
        d[a] = (float)(x1 - x0);
        len += (x1 - x0) * (x1 - x0);
    }
    len = sqrt(len);
    if (!(len > 0))
        return 0;
    for (int a = 0; a < 3; a++)
        d[a] = (float)(d[a] / len);
    *rt = (float)(rs / rn);
    return *rt > 0;
}

/* Whether welded vertex w, walked g from the tube's tip, lies in the tube's
 * reach before gend and further than 1.5 tube radii from its axis (p, d)
 * and, with acc (tb__tube_rings per band of h), from its own ring's centre
 * too: further from the end, where the axis is extrapolated over longer, a
 * ring the tube bends away from it is still the tube. */
static int tb__tube_off_axis(const tb__state *st, const double *acc, double h, uint32_t w, float g, float gend,
                             float reach, const float p[3], const float d[3], float rt)
{
    if (!(g < gend) || g < gend - reach)
        return 0;
    const float *q = st->wpos + (size_t)w * 3;
    const double *b = acc ? acc + (size_t)(int)(g / h) * 5 : NULL;
    for (int pass = 0; pass < 1 + (acc != NULL); pass++) {
        float c[3];
        for (int a = 0; a < 3; a++)
            c[a] = pass ? (float)(b[a] / b[3]) : p[a];
        if (pass && !(b[3] > 0))
            return 1;
        float v[3] = {q[0] - c[0], q[1] - c[1], q[2] - c[2]};
        float t = v[0] * d[0] + v[1] * d[1] + v[2] * d[2];
        float e[3] = {v[0] - t * d[0], v[1] - t * d[1], v[2] - t * d[2]};
        if (!(e[0] * e[0] + e[1] * e[1] + e[2] * e[2] > 2.25f * rt * rt))
            return 0;
    }
    return 1;
}

/* Whether the skin off the tube's axis in its reach before gend is the body
 * it leaves rather than the tube's own flare: it lies to one side (mean
 * offset over 1.5 tube radii) or to one or two sides (a patch below the
 * weld, a belt across it: five octants round the axis or fewer), never all
 * round (a fillet, the first piece of a segmented tail). 0 when there is
 * no such skin. */
static int tb__tube_trim_side(const tb__state *st, const double *acc, double h, const uint32_t *mv, uint32_t n,
                              const float *dist, const uint8_t *in, float gend, float reach, const float p[3],
                              const float d[3], float rt)
{
    double side[3] = {0, 0, 0}, u[3] = {0, 0, 0}, v2[3], ul = 0;
    int ax = fabsf(d[0]) <= fabsf(d[1]) ? (fabsf(d[0]) <= fabsf(d[2]) ? 0 : 2) : (fabsf(d[1]) <= fabsf(d[2]) ? 1 : 2);
    u[ax] = 1;
    for (int a = 0; a < 3; a++)
        u[a] -= d[ax] * d[a];
    for (int a = 0; a < 3; a++)
        ul += u[a] * u[a];
    for (int a = 0; a < 3; a++)
        u[a] /= sqrt(ul);
    v2[0] = d[1] * u[2] - d[2] * u[1];
    v2[1] = d[2] * u[0] - d[0] * u[2];
    v2[2] = d[0] * u[1] - d[1] * u[0];
    size_t ns = 0;
    unsigned octants = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (in[mv[k]] != 1 || !tb__tube_off_axis(st, acc, h, mv[k], dist[mv[k]], gend, reach, p, d, rt))
            continue;
        const float *q = st->wpos + (size_t)mv[k] * 3;
        double v[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]}, e[3];
        double t = v[0] * d[0] + v[1] * d[1] + v[2] * d[2];
        for (int a = 0; a < 3; a++) {
            e[a] = v[a] - t * d[a];
            side[a] += e[a];
        }
        double x = e[0] * u[0] + e[1] * u[1] + e[2] * u[2], y = e[0] * v2[0] + e[1] * v2[1] + e[2] * v2[2];
        int oct = fabs(x) >= fabs(y) ? (x >= 0 ? (y >= 0 ? 0 : 7) : (y >= 0 ? 3 : 4))
                                     : (y >= 0 ? (x >= 0 ? 1 : 2) : (x >= 0 ? 6 : 5));
        octants |= 1u << oct;
        ns++;
    }
    if (!ns)
        return 0;
    int around = 0;
    for (int a = 0; a < 8; a++)
        around += (int)(octants >> a & 1u);
    double so = sqrt(side[0] * side[0] + side[1] * side[1] + side[2] * side[2]) / (double)ns;
    return so > 1.5 * rt || around <= 5;
}

/* Per band of h along the walk dist from a tube's tip: the ring's centroid
 * sum (xyz), its vertex count and its vertices' mean distance to the
 * centroid, over the part's vertices mv not yet trimmed (in[w] == 2). */
static void tb__tube_rings(const tb__state *st, const uint32_t *mv, uint32_t n, const float *dist, const uint8_t *in,
                           double h, int nb, double *acc)
{
    memset(acc, 0, (size_t)nb * 5 * sizeof *acc);
    for (uint32_t k = 0; k < n; k++) {
        float gv = dist[mv[k]];
        if (!isfinite(gv) || in[mv[k]] == 2)
            continue;
        double *b = acc + (size_t)(int)(gv / h) * 5;
        for (int a = 0; a < 3; a++)
            b[a] += st->wpos[(size_t)mv[k] * 3 + (size_t)a];
        b[3] += 1;
    }
    for (uint32_t k = 0; k < n; k++) {
        float gv = dist[mv[k]];
        if (!isfinite(gv) || in[mv[k]] == 2)
            continue;
        double *b = acc + (size_t)(int)(gv / h) * 5;
        double dd = 0;
        for (int a = 0; a < 3; a++) {
            double x = st->wpos[(size_t)mv[k] * 3 + (size_t)a] - b[a] / b[3];
            dd += x * x;
        }
        b[4] += sqrt(dd) / b[3];
    }
}

/* One far part as tb__tube_cut walks it: its vertices mv[0..n), the walk
 * dist from its tip, and the rings along that walk (acc, nb bands of h). */
typedef struct tb__tube {
    const uint32_t *mv;
    uint32_t n;
    float *dist;
    uint8_t *in;           /* 1: in the part, 2: trimmed off as body, 0: elsewhere */
    uint32_t *src;
    double *acc;
    uint32_t tip;          /* UINT32_MAX: no walk */
    float gmax;
    double h;
    int nb;
} tb__tube;

enum { TB__TUBE_BANDS = 512 };

/* The walk: from the part's border (its vertices next to skin outside it)
 * to its farthest vertex, the tip; then from the tip over the part; the
 * bands one mean edge long (longer where the walk would need more than
 * TB__TUBE_BANDS). Marks the part in in[]. */
static tb_result tb__tube_walk(const tb__state *st, tb__tube *T, tb_error *err)
{
    const uint32_t *mv = T->mv;
    uint32_t n = T->n;
    size_t ns = 0, ne = 0;
    double edge = 0;
    tb_result r = TB_OK;
    for (uint32_t k = 0; k < n; k++)
        T->in[mv[k]] = 1;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t w = mv[k];
        int edge_of = 0;
        for (uint32_t e = st->g.off[w]; e < st->g.off[w + 1]; e++) {
            uint32_t o = st->g.adj[e];
            if (!T->in[o]) {
                edge_of = 1;
                continue;
            }
            const float *a = st->wpos + (size_t)w * 3, *b = st->wpos + (size_t)o * 3;
            edge += sqrt((double)(a[0] - b[0]) * (a[0] - b[0]) + (double)(a[1] - b[1]) * (a[1] - b[1]) +
                         (double)(a[2] - b[2]) * (a[2] - b[2]));
            ne++;
        }
        T->dist[w] = INFINITY;
        if (edge_of) {
            T->src[ns++] = w;
            T->dist[w] = 0;
        }
    }
    T->tip = UINT32_MAX;
    if (ns && ne)
        r = tb__dijkstra(T->dist, &st->g, NULL, st->wpos, T->src, ns, T->in, err);
    float far_g = 0;
    for (uint32_t k = 0; r == TB_OK && ns && ne && k < n; k++)
        if (isfinite(T->dist[mv[k]]) && T->dist[mv[k]] > far_g) {
            far_g = T->dist[mv[k]];
            T->tip = mv[k];
        }
    if (T->tip != UINT32_MAX) {
        for (uint32_t k = 0; k < n; k++)
            T->dist[mv[k]] = INFINITY;
        T->dist[T->tip] = 0;
        r = tb__dijkstra(T->dist, &st->g, NULL, st->wpos, &T->tip, 1, T->in, err);
    }
    T->gmax = 0;
    for (uint32_t k = 0; r == TB_OK && T->tip != UINT32_MAX && k < n; k++)
        if (isfinite(T->dist[mv[k]]) && T->dist[mv[k]] > T->gmax)
            T->gmax = T->dist[mv[k]];
    T->h = edge / (double)(ne ? ne : 1);
    if (T->gmax / T->h > TB__TUBE_BANDS - 1)
        T->h = T->gmax / (TB__TUBE_BANDS - 1);
    return r;
}

/* Whether the tube opens after band b (walk gb, radius rb): one radius
 * further on, the ring has grown by half the walk or more, and it keeps
 * opening to twice its radius. */
static int tb__tube_opens(const tb__tube *T, int b, double gb, double rb)
{
    const double *acc = T->acc;
    double reach = rb > 2 * T->h ? rb : 2 * T->h, rmax = rb;
    int opens = 0;
    for (int c = b + 1; c < T->nb; c++) {
        if (acc[(size_t)c * 5 + 3] == 0)
            continue;
        double gc = (c + 0.5) * T->h, rc = acc[(size_t)c * 5 + 4];
        rmax = rc > rmax ? rc : rmax;
        if (!opens && gc - gb >= reach) {
            if (rc - rb < 0.5 * (gc - gb))
                break;
            opens = 1;
        }
    }
    return opens && rmax >= 2 * rb;
}

/* Whether the tube narrows for good at band b: its next three rings are
 * each under half the widest of the four before. */
static int tb__tube_narrows(const tb__tube *T, int b)
{
    const double *acc = T->acc;
    int prev = 0, narrow = 1, ahead = 0;
    double rref = 0;
    for (int c = b - 1; c >= 0 && prev < 4; c--)
        if (acc[(size_t)c * 5 + 3] != 0) {
            rref = acc[(size_t)c * 5 + 4] > rref ? acc[(size_t)c * 5 + 4] : rref;
            prev++;
        }
    for (int c = b; c < T->nb && ahead < 3 && narrow; c++)
        if (acc[(size_t)c * 5 + 3] != 0) {
            narrow = acc[(size_t)c * 5 + 4] < 0.5 * rref;
            ahead++;
        }
    return narrow && ahead == 3;
}

/* Walked from the tip: a tube once the walk is 2.5 radii long (*tube); the
 * band where it opens out over body skin, or the band before the one where
 * it narrows for good past half the walk (the tube has ended and a strip of
 * skin goes on from its root: a belt it touches). -1: no cut. */
static int tb__tube_find_cut(const tb__tube *T, int *tube)
{
    const double *acc = T->acc;
    int cut = -1;
    *tube = 0;
    for (int b = 0; b < T->nb && cut < 0; b++) {
        if (acc[(size_t)b * 5 + 3] == 0)
            continue;
        double gb = (b + 0.5) * T->h, rb = acc[(size_t)b * 5 + 4];
        if (!*tube) {
            *tube = gb >= 2.5 * rb && rb > 0;
            continue;
        }
        if (tb__tube_opens(T, b, gb, rb))
            cut = b;
        if (cut < 0 && tb__tube_narrows(T, b) && gb >= 0.5 * T->gmax)
            cut = b - 1;
    }
    return cut;
}

/* Where the tube ends (cut or not, at walk gend), its last radius of walk
 * may hold the first skin of the body it leaves (a patch of off-bone
 * buttock below the weld, a belt the root rests on): the tube there is the
 * tube extrapolated, so skin further from its axis than 1.5 tube radii is
 * body, not tail (in[] = 2). Where some is found, the reach before is
 * tested the same way against an axis drawn without it (rings that hold
 * body skin lean the axis towards it), up to three reaches. 1: some skin
 * was trimmed. */
static int tb__tube_trim_end(const tb__state *st, tb__tube *T, float gend)
{
    const uint32_t *mv = T->mv;
    uint32_t n = T->n;
    float gz = gend;
    int trim = 0;
    for (int it = 0; it < 3; it++) {
        float axis_p[3], axis_d[3], rtube;
        if (!tb__tube_end_axis(T->acc, T->nb, T->h, gz, axis_p, axis_d, &rtube))
            break;
        float rfar = rtube > 2 * (float)T->h ? rtube : 2 * (float)T->h;
        if (tb__tube_trim_side(st, it ? T->acc : NULL, T->h, mv, n, T->dist, T->in, gz, rfar, axis_p, axis_d,
                               rtube) == 0)
            break;
        /* a reach before the first where (nearly) all skin is off the
         * axis holds no tube to trim from: the tube ended before it, or
         * the part was never one; that reach is left as it was */
        const double *ring = it ? T->acc : NULL;
        uint32_t zone = 0, off = 0;
        for (uint32_t k = 0; k < n; k++) {
            if (T->in[mv[k]] != 1 || !(T->dist[mv[k]] < gz) || T->dist[mv[k]] < gz - rfar)
                continue;
            zone++;
            off += (uint32_t)tb__tube_off_axis(st, ring, T->h, mv[k], T->dist[mv[k]], gz, rfar, axis_p, axis_d, rtube);
        }
        if (it > 0 && 3 * off > 2 * zone)
            break;
        for (uint32_t k = 0; k < n; k++)
            if (T->in[mv[k]] == 1 &&
                tb__tube_off_axis(st, ring, T->h, mv[k], T->dist[mv[k]], gz, rfar, axis_p, axis_d, rtube))
                T->in[mv[k]] = 2;
        trim = 1;
        gz -= rfar;
        tb__tube_rings(st, mv, n, T->dist, T->in, T->h, T->nb, T->acc);
    }
    return trim;
}

/* The part keeps its skin before gend not trimmed off, as one component
 * rooted at the tip, where that is at least min_vertices; the rest is body
 * (not far, not thin, a component of its own). */
static void tb__tube_keep(tb__state *st, const tb__tube *T, float gend)
{
    size_t keep = 0;
    for (uint32_t k = 0; k < T->n; k++)
        keep += T->dist[T->mv[k]] < gend && T->in[T->mv[k]] != 2;
    if (keep < (size_t)st->d.min_vertices)
        return;
    for (uint32_t k = 0; k < T->n; k++) {
        uint32_t w = T->mv[k];
        st->comp_uf[w] = T->tip;
        if (!(T->dist[w] < gend) || T->in[w] == 2) {
            st->cut[w] = (uint8_t)(T->in[w] == 2 && T->dist[w] < gend ? 1u | (st->thin[w] ? 2u : 0u) : 0u);
            st->far[w] = 0;
            st->thin[w] = 0;
            st->comp_uf[w] = w;
        }
    }
}

/* One far part: walked, cut where its rings open or narrow, its end
 * trimmed of body skin, and kept up to there. */
static tb_result tb__tube_part(tb__state *st, tb__tube *T, tb_error *err)
{
    tb_result r = tb__tube_walk(st, T, err);
    if (r == TB_OK && T->tip != UINT32_MAX && T->h > 0) {
        /* rings: centroid, then mean distance to it, per band of one edge */
        T->nb = (int)(T->gmax / T->h) + 1;
        tb__tube_rings(st, T->mv, T->n, T->dist, T->in, T->h, T->nb, T->acc);
        int tube;
        int cut = tb__tube_find_cut(T, &tube);
        float gend = cut >= 0 ? (float)((cut + 1) * T->h) : T->gmax + (float)T->h;
        int trim = tube && tb__tube_trim_end(st, T, gend);
        if (cut >= 0 || trim)
            tb__tube_keep(st, T, gend);
    }
    for (uint32_t k = 0; k < T->n; k++)
        T->in[T->mv[k]] = 0;
    return r;
}

/* A tail is a tube that leaves the body. Walked from its far end, the
 * geodesic rings of a tube keep about the tube's radius (a tail tapers
 * slowly); where it is welded into skin that reads off-bone as well (the
 * buttocks, the crotch between two thigh bones), the rings open out over
 * that skin and their radius grows about as fast as the walk. A far part
 * that begins as a tube is cut where its rings open: what lies beyond is
 * the body the tube leaves, not the appendage (SPEC A10). Parts that never
 * form a tube (coats, capes, patches) or never open are left whole.
 * One Dijkstra pair per far part: O(n log n) in all. */
tb_result tb__tube_cut(tb__state *st, tb_error *err)
{
    size_t nw = st->nw;
    uint32_t *off = calloc(nw + 1, sizeof *off), *list = malloc((nw ? nw : 1) * sizeof *list);
    tb__tube T;
    memset(&T, 0, sizeof T);
    T.dist = malloc((nw ? nw : 1) * sizeof *T.dist);
    T.in = calloc(nw ? nw : 1, 1);
    T.src = malloc((nw ? nw : 1) * sizeof *T.src);
    T.acc = malloc(TB__TUBE_BANDS * 5 * sizeof *T.acc);
    st->cut = calloc(nw ? nw : 1, 1);
    tb_result r = TB_OK;
    if (!off || !list || !T.dist || !T.in || !T.src || !T.acc || !st->cut) {
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        goto done;
    }
    for (size_t w = 0; w < nw; w++)
        if (st->far[w])
            off[tb__find(st->comp_uf, (uint32_t)w) + 1]++;
    /* comp_uf[]: far roots compressed by the caller's find */
    tb__csr_lists(off, nw, st->comp_uf, st->far, nw, list);
    for (size_t root = 0; root < nw && r == TB_OK; root++) {
        T.n = off[root + 1] - off[root];
        T.mv = list + off[root];
        if (T.n < 4u * (uint32_t)st->d.min_vertices ||
            T.n >= st->shell_total_pre[tb__find(st->shell, (uint32_t)root)])
            continue; /* small, or a shell of its own: nothing to leave */
        r = tb__tube_part(st, &T, err);
    }
done:
    free(off);
    free(list);
    free(T.dist);
    free(T.in);
    free(T.src);
    free(T.acc);
    return r;
}

/* SPEC A3/A4: far components (every island, however small: a small one may
 * be a piece of a segmented tail) and their collars. A component with no
 * non-far neighbour floats: it has no collar and no attachment of its own. */
/* A piece's collar: the non-far welded ids next to it, sorted, each once
 * (gathered with their repeats, then sorted and the repeats dropped: no
 * state shared between pieces). -1 when out of memory. */
static int tb__comp_collar(const tb__state *st, tb__comp *c)
{
    size_t cap = 0;
    for (size_t k = 0; k < c->nverts; k++) {
        uint32_t w = c->verts[k];
        for (uint32_t e = st->g.off[w]; e < st->g.off[w + 1]; e++) {
            uint32_t o = st->g.adj[e];
            if (st->far[o])
                continue;
            if (c->ncollar == cap) {
                cap = cap ? cap * 2 : 16;
                uint32_t *nc = realloc(c->collar, cap * sizeof *nc);
                if (!nc)
                    return -1;
                c->collar = nc;
            }
            c->collar[c->ncollar++] = o;
        }
    }
    c->ncollar = tb__sort_unique_ids(c->collar, c->ncollar); /* sorted, each once */
    return 0;
}

/* A piece's shell, the joint it attaches to (its collar's centroid's) and
 * its bounding box. */
static void tb__comp_place(const tb__state *st, tb__comp *c)
{
    c->shell = st->shell[c->verts[0]];
    c->attach = -1;
    if (c->ncollar) {
        float cp[3] = {0, 0, 0};
        for (size_t k = 0; k < c->ncollar; k++)
            for (int a = 0; a < 3; a++)
                cp[a] += st->wpos[(size_t)c->collar[k] * 3 + (size_t)a] / (float)c->ncollar;
        c->attach = tb__attach_joint(st, cp);
    }
    for (int a = 0; a < 3; a++) {
        c->bmin[a] = INFINITY;
        c->bmax[a] = -INFINITY;
    }
    for (size_t k = 0; k < c->nverts; k++)
        for (int a = 0; a < 3; a++) {
            float x = st->wpos[(size_t)c->verts[k] * 3 + (size_t)a];
            c->bmin[a] = x < c->bmin[a] ? x : c->bmin[a];
            c->bmax[a] = x > c->bmax[a] ? x : c->bmax[a];
        }
}

/* Piece i's collar and place (tb__comp_collar, tb__comp_place): each
 * piece's own, one task each (tb__st_for); oom[i] set when out of memory. */
typedef struct tb__comps_job {
    const tb__state *st;
    uint8_t *oom;
} tb__comps_job;

static void tb__comps_task(void *c, int task, int worker)
{
    (void)worker;
    tb__comps_job *J = c;
    tb__comp *cp = &J->st->comps[task];
    J->oom[task] = tb__comp_collar(J->st, cp) != 0;
    if (!J->oom[task])
        tb__comp_place(J->st, cp);
    cp->group = task;
}

tb_result tb__detect_components(tb__state *st, tb_error *err)
{
    size_t nw = st->nw;
    size_t *count = calloc(nw ? nw : 1, sizeof *count);
    uint32_t *slot = malloc((nw ? nw : 1) * sizeof *slot);
    uint8_t *mark = NULL; /* per piece: out of memory */
    int oom = !count || !slot;
    if (oom)
        goto done;
    for (size_t w = 0; w < nw; w++)
        if (st->far[w])
            count[tb__find(st->comp_uf, (uint32_t)w)]++;
    size_t n = 0;
    for (size_t w = 0; w < nw; w++)
        slot[w] = (st->far[w] && st->comp_uf[w] == w) ? (uint32_t)n++ : UINT32_MAX;
    st->comps = calloc(n ? n : 1, sizeof *st->comps);
    if ((oom = !st->comps) != 0)
        goto done;
    st->ncomp = n;
    for (size_t w = 0; w < nw && !oom; w++)
        if (slot[w] != UINT32_MAX) {
            st->comps[slot[w]].verts = malloc(count[w] * sizeof(uint32_t));
            oom = !st->comps[slot[w]].verts;
        }
    if (oom)
        goto done;
    for (size_t w = 0; w < nw; w++)
        if (st->far[w]) {
            tb__comp *c = &st->comps[slot[tb__find(st->comp_uf, (uint32_t)w)]];
            c->verts[c->nverts++] = (uint32_t)w;
        }
    if ((oom = (mark = calloc(n ? n : 1, 1)) == NULL) != 0)
        goto done;
    tb__comps_job J = {st, mark};
    tb__st_for(st, nw < 2048 ? 1 : st->d.threads, (int)n, tb__comps_task, &J);
    for (size_t i = 0; i < n; i++)
        oom |= mark[i];
done:
    free(count);
    free(slot);
    free(mark);
    return oom ? tb__fail(err, TB_ERR_OOM, NULL, NULL) : TB_OK;
}


/* Shape of one far component for the merge: centroid, principal axis,
 * extent along it, elongation, and whether it wraps a bone (its skin goes
 * more than wrap_min_deg around the bone segment nearest to most of it: a
 * coat, a belt, a plate around the pelvis, a limb's own skin). */
typedef struct tb__shape {
    float c[3], axis[3], extent, elong, flat, rad;
    int wraps;
    size_t thin;      /* vertices whose cross-section holds no bone */
} tb__shape;

/* What tb__wraps counts for welded vertex w: the bone sector (nearest
 * segment × 12 + sector; -1: beside no real bone) and, on an upright body,
 * the trunk sector (-1: none). A pure function of the vertex: kept per
 * vertex in st->wrap_bin once computed (merge, then analysis ask again for
 * the same skin). */
enum { TB__SECT = 12 };

static void tb__wrap_bin(const tb__state *st, uint32_t w, int32_t *bone, int8_t *trunk)
{
    enum { SECT = TB__SECT };
    const float *p = st->wpos + (size_t)w * 3;
    float bt = 0;
    *bone = -1;
    *trunk = -1;
    /* the first segment of least squared distance, and p's projection on it */
    int bi = tb__segsoa_nearest2(&st->segsoa, p, &bt);
    /* beside a real bone only: an extension past a terminal joint (the
     * pelvis of a rig whose tail bones were stripped) is no bone */
    if (!(bi < 0 || bt <= 0.02f || bt >= 0.98f || !(st->segs[bi].inv_len2 > 0) || st->segs[bi].extension)) {
        const tb__seg *g = &st->segs[bi];
        /* a frame around the bone: e1 ⟂ bone, e2 = bone × e1 */
        float L = 1.0f / sqrtf(g->inv_len2), ax[3] = {g->ab[0] / L, g->ab[1] / L, g->ab[2] / L};
        float ref[3] = {st->up[0], st->up[1], st->up[2]};
        if (fabsf(ax[0] * ref[0] + ax[1] * ref[1] + ax[2] * ref[2]) > 0.8f)
            memcpy(ref, st->fwd, sizeof ref);
        float dp = ax[0] * ref[0] + ax[1] * ref[1] + ax[2] * ref[2];
        float e1[3] = {ref[0] - dp * ax[0], ref[1] - dp * ax[1], ref[2] - dp * ax[2]};
        float l1 = sqrtf(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
        for (int a = 0; a < 3; a++)
            e1[a] /= l1;
        float e2[3] = {ax[1] * e1[2] - ax[2] * e1[1], ax[2] * e1[0] - ax[0] * e1[2], ax[0] * e1[1] - ax[1] * e1[0]};
        float ap[3] = {p[0] - g->a[0], p[1] - g->a[1], p[2] - g->a[2]};
        float x = ap[0] * e1[0] + ap[1] * e1[1] + ap[2] * e1[2], y = ap[0] * e2[0] + ap[1] * e2[1] + ap[2] * e2[2];
        int sct = (int)floorf((atan2f(y, x) + 3.14159265f) / 6.2831853f * SECT);
        sct = sct < 0 ? 0 : sct >= SECT ? SECT - 1 : sct;
        *bone = bi * SECT + sct;
    }
    /* around the body's own vertical axis (the line through the pelvis along
     * up): a belt of pouches or a coat is near several torso bones at once */
    if (tb__upright(st->m)) { /* a humanoid trunk: up is meaningful */
        const float *hp = tb__jpos(st->m, st->pelvis);
        float side[3] = {st->up[1] * st->fwd[2] - st->up[2] * st->fwd[1], st->up[2] * st->fwd[0] - st->up[0] * st->fwd[2],
                         st->up[0] * st->fwd[1] - st->up[1] * st->fwd[0]};
        float dv[3] = {p[0] - hp[0], p[1] - hp[1], p[2] - hp[2]};
        float h = dv[0] * st->up[0] + dv[1] * st->up[1] + dv[2] * st->up[2];
        if (h < -0.1f * st->H || h > 0.4f * st->H)
            return; /* the trunk's height only (a quadruped's tail runs along up) */
        float x = dv[0] * st->fwd[0] + dv[1] * st->fwd[1] + dv[2] * st->fwd[2];
        float y = dv[0] * side[0] + dv[1] * side[1] + dv[2] * side[2];
        if (x * x + y * y < 0.0025f * st->H * st->H)
            return; /* at the axis itself (a tail's root on the pelvis joint) */
        int sct = (int)floorf((atan2f(y, x) + 3.14159265f) / 6.2831853f * SECT);
        sct = sct < 0 ? 0 : sct >= SECT ? SECT - 1 : sct;
        *trunk = (int8_t)sct;
    }
}

/* Whether skin goes around a bone: the welded vertices' angular coverage
 * (12 sectors) about the bone segment nearest each, counting only vertices
 * beside a bone (projection strictly inside it); more than wrap_min_deg
 * around one bone is a coat, a belt, a plate round the pelvis, a limb's own
 * skin — never a tail (SPEC A10). O(n × segments), O(n) for skin asked
 * about before. */
int tb__wraps(const tb__state *st, const uint32_t *verts, size_t n)
{
    enum { SECT = TB__SECT };
    int wraps = 0;
    int ns = st->nseg;
    uint16_t *bins = calloc((size_t)ns * SECT + 1, sizeof *bins);
    uint16_t tb[SECT] = {0};
    int lo = ns, hi = -1; /* the bones binned (the others' bins stay empty: no wrap) */
    if (!bins)
        return 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t w = verts[k];
        int32_t bone;
        int8_t trunk;
        if (st->wrap_bin && st->wrap_bin[w] != -2) {
            bone = st->wrap_bin[w];
            trunk = st->wrap_trunk[w];
        } else {
            tb__wrap_bin(st, w, &bone, &trunk);
            if (st->wrap_bin && !st->wrap_frozen) {
                st->wrap_bin[w] = bone;
                st->wrap_trunk[w] = trunk;
            }
        }
        if (bone >= 0 && bins[bone] < 60000)
            bins[bone]++;
        if (bone >= 0) {
            lo = bone / SECT < lo ? bone / SECT : lo;
            hi = bone / SECT > hi ? bone / SECT : hi;
        }
        if (trunk >= 0 && tb[trunk] < 60000)
            tb[trunk]++;
    }
    if (tb__upright(st->m)) {
        int covered = 0;
        for (int k = 0; k < SECT; k++)
            covered += tb[k] >= 2;
        wraps = n >= 24 && covered * 360 >= (int)(st->d.wrap_min_deg * SECT);
    }
    for (int i = lo; i <= hi && !wraps; i++) {
        int covered = 0, total = 0;
        for (int k = 0; k < SECT; k++) {
            covered += bins[(size_t)i * SECT + (size_t)k] >= 2;
            total += bins[(size_t)i * SECT + (size_t)k];
        }
        wraps = total >= 24 && covered * 360 >= (int)(st->d.wrap_min_deg * SECT);
    }
    free(bins);
    return wraps;
}

static void tb__comp_shape(const tb__state *st, const tb__comp *c, tb__shape *sh)
{
    double cen[3] = {0, 0, 0}, cov[3][3] = {{0}};
    size_t n = c->nverts;
    for (size_t k = 0; k < n; k++)
        for (int a = 0; a < 3; a++)
            cen[a] += st->wpos[(size_t)c->verts[k] * 3 + (size_t)a] / (double)n;
    for (size_t k = 0; k < n; k++) {
        const float *p = st->wpos + (size_t)c->verts[k] * 3;
        double q[3] = {p[0] - cen[0], p[1] - cen[1], p[2] - cen[2]};
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                cov[a][b] += q[a] * q[b] / (double)n;
    }
    double v[3] = {1, 0.7, 0.4}; /* power iteration: the principal axis */
    for (int it = 0; it < 40; it++) {
        double w[3] = {0, 0, 0}, l = 0;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                w[a] += cov[a][b] * v[b];
        for (int a = 0; a < 3; a++)
            l += w[a] * w[a];
        l = sqrt(l);
        if (!(l > 0))
            break;
        for (int a = 0; a < 3; a++)
            v[a] = w[a] / l;
    }
    double ev[3];
    tb__eig3(cov, ev, NULL);
    sh->elong = ev[1] > 0 ? (float)sqrt(ev[0] / ev[1]) : 1e3f;
    sh->flat = ev[2] > 0 ? (float)sqrt(ev[1] / ev[2]) : 1e3f;
    float lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        const float *p = st->wpos + (size_t)c->verts[k] * 3;
        float t = (float)((p[0] - cen[0]) * v[0] + (p[1] - cen[1]) * v[1] + (p[2] - cen[2]) * v[2]);
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    sh->extent = n ? hi - lo : 0;
    for (int a = 0; a < 3; a++) {
        sh->c[a] = (float)cen[a];
        sh->axis[a] = (float)v[a];
    }
    sh->wraps = tb__wraps(st, c->verts, n);
    sh->thin = 0;
    for (size_t k = 0; k < n; k++)
        sh->thin += st->thin[c->verts[k]];
    /* its typical half-thickness (median of the hits): the tube's radius is
     * capped by it, as a cap's ray runs along the axis */
    float *r = malloc((n ? n : 1) * sizeof *r);
    size_t m = 0;
    for (size_t k = 0; r && k < n; k++)
        if (st->mrad[c->verts[k]] > 0)
            r[m++] = st->mrad[c->verts[k]];
    sh->rad = r && m ? tb__kth_float(r, m, m / 2) : 0;
    free(r);
}


/* One pair of components' records of the merge (one per run of either
 * near the other: its nearest distance and its vertices estimated in the
 * other's tube), summed in the order they were made. */
struct tb__near {
    uint32_t a, b;    /* a < b */
    float gap;
    float b_in_a;     /* b's vertices (estimated) lying in a's tube */
    float a_in_b;
    float b_dir[3];   /* the sum of their directions from a's medial points (as b_in_a: estimated) */
    float a_dir[3];
};

/* A pair's records summed: b's vertices in a's tube and a's in b's, the
 * gap, and how one-sided each lies over the other (the length of the mean
 * of their directions from the other's medial points: 0 all round it, 1 on
 * one side). */
typedef struct tb__pair_near {
    float bin, ain, gap, bside, aside;
} tb__pair_near;

static float tb__vlen(const float v[3])
{
    return sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* SPEC A6/A10: which far components form one appendage. Never by bounding
 * boxes (a coat's box holds a tail's) and never what wraps a bone. Two
 * rules, both about the tail's own shape:
 *  - along: a detached, off-bone component whose vertices lie (>= 90%)
 *    over the other's off-bone surface — 0.8 to 1.6 local radii from the
 *    medial point of a nearby vertex of it — is part of it (fur over skin);
 *  - in a row: pieces whose gap is small against their own length
 *    (row_gap × the shorter), alike in size (within 3×), and that line up (the gap runs along the
 *    principal axis of each elongated piece, within ~45°) are one tail made
 *    of pieces (vertebrae, scales, beads).
 * Candidate pairs come from a grid of row_reach H cells: O(F log F). */
/* The body's skin (welded vertices not far) in the merge's grid, sorted by
 * cell; NULL when out of memory. */
static tb__cell_entry *tb__body_grid(const tb__state *st, float inv, size_t *count)
{
    size_t nb = 0;
    for (size_t w = 0; w < st->nw; w++)
        nb += !st->far[w];
    tb__cell_entry *b = malloc((nb ? nb : 1) * sizeof *b);
    if (!b)
        return NULL;
    nb = 0;
    for (size_t w = 0; w < st->nw; w++) {
        if (st->far[w])
            continue;
        uint32_t c[3];
        tb__cell_of(st, st->wpos + w * 3, inv, c);
        b[nb].key = tb__cell_key(c);
        b[nb].comp = 0;
        b[nb++].v = (uint32_t)w;
    }
    tb__sort_cells(b, nb);
    *count = nb;
    return b;
}

/* Mean distance from component C's skin to the nearest body skin, over up to
 * 64 of its vertices, each capped at one grid cell (the reach of the 27
 * cells searched). */
static float tb__body_gap(const tb__state *st, const tb__cell_entry *body, size_t nbody, float inv, float cell,
                          const tb__comp *C)
{
    size_t step = C->nverts > 64 ? C->nverts / 64 : 1, cnt = 0;
    double sum = 0;
    for (size_t k = 0; k < C->nverts; k += step) {
        const float *p = st->wpos + (size_t)C->verts[k] * 3;
        uint32_t c[3];
        size_t lo[27], hi[27];
        tb__cell_of(st, p, inv, c);
        int nr = tb__neighbours(body, nbody, c, lo, hi);
        float best = cell * cell;
        for (int r = 0; r < nr; r++)
            for (size_t t = lo[r]; t < hi[r]; t++) {
                const float *o = st->wpos + (size_t)body[t].v * 3;
                float d = (o[0] - p[0]) * (o[0] - p[0]) + (o[1] - p[1]) * (o[1] - p[1]) + (o[2] - p[2]) * (o[2] - p[2]);
                best = d < best ? d : best;
            }
        sum += sqrtf(best);
        cnt++;
    }
    return cnt ? (float)(sum / (double)cnt) : 0;
}

/* The merge as stages over one state (tb__detect_merge drives them): the
 * components' shapes; their skin on a grid of row_reach H, in runs of one
 * component per cell; per run and other component near it, a record of the
 * gap and of the run's skin lying in the other's tube; the records by pair;
 * per pair, the layer rule and the row rule. */
typedef struct tb__merge {
    tb__state *st;
    size_t n;              /* components */
    uint32_t *uf;          /* union-find over the components */
    tb__shape *sh;         /* per component */
    tb__cell_entry *e;     /* the components' skin by (cell, component), q entries */
    size_t q;
    size_t *run, nrun;     /* start index of each run in e[], then q */
    tb__cell_entry *re;    /* one per run: its cell and component, v = the run's index */
    size_t *soff;          /* per run: its first sample in sp / sthin, then the samples' count */
    float *sp;             /* per sample (TB__MSF floats): position, tube centre, tube band (tb__merge_sample_runs) */
    float *rbox;           /* per run (TB__MRB floats): its samples' box, its tube centres' box, the widest band's top squared */
    uint32_t *sv;          /* per sample: its vertex */
    struct tb__near *rec;  /* nrec pairs' sums, room for rcap */
    size_t nrec, rcap;
    uint64_t *hkey;        /* open hash of the pairs (a << 32 | b) to their place in rec, hcap slots */
    uint32_t *hat;
    size_t hcap;
    tb__cell_entry *body;  /* grid of the body's skin, built when a layer asks */
    size_t nbody;
    float cell, inv, tol;
    int cells_ok;          /* tb__merge_cells' result (a task of the setup) */
} tb__merge;

/* runs of one component in one cell, each with up to SAMPLES of its
 * vertices spread over the run: the pair tests look at samples, so a dense
 * mesh costs (cells × neighbours × SAMPLES²), not (vertices × vertices in
 * the 27 cells around) */
enum { TB__MERGE_SAMPLES = 16, TB__MSF = 8 /* floats per sample */, TB__MRB = 16 /* per run's boxes */ };

static void tb__merge_free(tb__merge *M)
{
    free(M->soff);
    free(M->sp);
    free(M->rbox);
    free(M->sv);
    free(M->body);
    free(M->rec);
    free(M->hkey);
    free(M->hat);
    free(M->run);
    free(M->re);
    free(M->uf);
    free(M->e);
    free(M->sh);
}

static int tb__merge_cells(tb__merge *M);
static int tb__merge_sample_runs(tb__merge *M);

/* Task 0: the skin's cells and runs (tb__merge_cells, its result in
 * cells_ok); task 1 + i: component i's shape, and the wrap_bin of its own
 * vertices (the components share none). */
static void tb__merge_prep_task(void *c, int task, int worker)
{
    (void)worker;
    tb__merge *M = c;
    if (task == 0)
        M->cells_ok = tb__merge_cells(M);
    else
        tb__comp_shape(M->st, &M->st->comps[task - 1], &M->sh[task - 1]);
}

/* Setup: each component its own group and its shape; the grid's cell;
 * tb__wraps' per-vertex answers, kept from here to the end of the analysis;
 * the skin's runs (beside the shapes) and their samples (which read the
 * shapes). 0: out of memory. */
static int tb__merge_setup(tb__merge *M, tb__state *st)
{
    memset(M, 0, sizeof *M);
    M->st = st;
    size_t n = st->ncomp, F = 0;
    for (size_t i = 0; i < n; i++)
        F += st->comps[i].nverts;
    M->n = n;
    M->uf = malloc((n ? n : 1) * sizeof *M->uf);
    M->e = malloc((F ? F : 1) * sizeof *M->e);
    M->sh = malloc((n ? n : 1) * sizeof *M->sh);
    if (!st->wrap_bin) {
        st->wrap_bin = malloc((st->nw ? st->nw : 1) * sizeof *st->wrap_bin);
        st->wrap_trunk = malloc(st->nw ? st->nw : 1);
        if (!st->wrap_bin || !st->wrap_trunk)
            return 0;
        for (size_t w = 0; w < st->nw; w++)
            st->wrap_bin[w] = -2;
    }
    if (!M->uf || !M->e || !M->sh)
        return 0;
    for (size_t i = 0; i < n; i++)
        M->uf[i] = (uint32_t)i;
    M->cell = st->d.row_reach * st->H;
    M->inv = M->cell > 0 ? 1.0f / M->cell : 1.0f;
    M->tol = 0.01f * st->H;
    tb__st_for(st, st->nw < 2048 ? 1 : st->d.threads, 1 + (int)n, tb__merge_prep_task, M);
    return M->cells_ok && tb__merge_sample_runs(M);
}

/* Run r's boxes (tb__merge_lanes skips a run by them): the box of its
 * samples' positions, the box of the tube centres of its samples with a
 * band (thin skin; the others lie in no tube) and the largest band top
 * squared (-1 when none has a band). NaN coordinates are left out (a NaN
 * sample is never nearest, nor in a tube). */
static void tb__merge_run_box(tb__merge *M, size_t r)
{
    float *b = M->rbox + r * TB__MRB;
    for (int a = 0; a < 3; a++) {
        b[a] = b[6 + a] = INFINITY;
        b[3 + a] = b[9 + a] = -INFINITY;
    }
    float top = -INFINITY;
    for (size_t k = M->soff[r]; k < M->soff[r + 1]; k++) {
        const float *f = M->sp + k * TB__MSF;
        int tube = f[7] >= 0;
        for (int a = 0; a < 3; a++) {
            b[a] = f[a] < b[a] ? f[a] : b[a];
            b[3 + a] = f[a] > b[3 + a] ? f[a] : b[3 + a];
            b[6 + a] = tube && f[3 + a] < b[6 + a] ? f[3 + a] : b[6 + a];
            b[9 + a] = tube && f[3 + a] > b[9 + a] ? f[3 + a] : b[9 + a];
        }
        top = tube && f[7] > top ? f[7] : top;
    }
    b[12] = top >= 0 ? top * top : -1;
}

/* Each run's samples (every step-th of its vertices, step = its size /
 * TB__MERGE_SAMPLES, at least 1) side by side: what the pair tests read,
 * in the order they read it, instead of through the vertex indices. Per
 * sample: its position, then the tube test's centre and band [lo, hi]: a
 * point lies in the other's tube when its distance to the centre is in the
 * band. Off the bone the band is empty (hi = -inf): the tube is the other's
 * free part (its off-bone skin), a root sunk into the body is no tube to lie
 * along. With a medial radius rm (capped at twice its component's): the
 * medial point, [0.8 rm, 1.6 rm] (a layer lies over the other's surface,
 * fur over skin, not through its inside: an accessory the root of a tail is
 * sunk through); without one: the sample itself, [-inf, 2 tol].
 * 0: out of memory. */
static int tb__merge_sample_runs(tb__merge *M)
{
    const tb__state *st = M->st;
    size_t ns = 0;
    M->soff = malloc((M->nrun + 1) * sizeof *M->soff);
    if (!M->soff)
        return 0;
    for (size_t r = 0; r < M->nrun; r++) {
        size_t n = M->run[r + 1] - M->run[r], step = n > TB__MERGE_SAMPLES ? n / TB__MERGE_SAMPLES : 1;
        M->soff[r] = ns;
        ns += (n + step - 1) / step;
    }
    M->soff[M->nrun] = ns;
    M->sp = malloc((ns ? ns : 1) * TB__MSF * sizeof *M->sp);
    M->sv = malloc((ns ? ns : 1) * sizeof *M->sv);
    M->rbox = malloc((M->nrun ? M->nrun : 1) * TB__MRB * sizeof *M->rbox);
    if (!M->sp || !M->sv || !M->rbox)
        return 0;
    for (size_t r = 0; r < M->nrun; r++) {
        size_t n = M->run[r + 1] - M->run[r], step = n > TB__MERGE_SAMPLES ? n / TB__MERGE_SAMPLES : 1;
        float cap = 2 * M->sh[M->re[r].comp].rad;
        for (size_t j = 0, k = M->soff[r]; j < n; j += step, k++) {
            uint32_t v = M->e[M->run[r] + j].v;
            float *f = M->sp + k * TB__MSF, rm = st->mrad[v];
            rm = rm < cap ? rm : cap;
            int medial = st->thin[v] && rm > 0;
            memcpy(f, st->wpos + (size_t)v * 3, 3 * sizeof *f);
            memcpy(f + 3, (medial ? st->mpos : st->wpos) + (size_t)v * 3, 3 * sizeof *f);
            f[6] = medial ? 0.8f * rm : -INFINITY;
            f[7] = !st->thin[v] ? -INFINITY : medial ? 1.6f * rm : 2 * M->tol;
            M->sv[k] = v;
        }
        tb__merge_run_box(M, r);
    }
    return 1;
}

/* The components' skin by (cell, component) and its runs; room for the
 * records (one per run and other component near it, the nearest distance
 * and the run's vertices estimated in the other's tube, sorted by pair and
 * reduced: O(R log R)). 0: out of memory. */
static int tb__merge_cells(tb__merge *M)
{
    const tb__state *st = M->st;
    tb__cell_entry *e = M->e;
    size_t q = 0;
    for (size_t i = 0; i < M->n; i++)
        for (size_t k = 0; k < st->comps[i].nverts; k++) {
            uint32_t c[3];
            tb__cell_of(st, st->wpos + (size_t)st->comps[i].verts[k] * 3, M->inv, c);
            e[q].key = tb__cell_key(c);
            e[q].comp = (uint32_t)i;
            e[q].v = st->comps[i].verts[k];
            q++;
        }
    tb__sort_cells(e, q);
    M->q = q;
    size_t nrun = 0;
    for (size_t k = 0; k < q; k++)
        nrun += !k || e[k].key != e[k - 1].key || e[k].comp != e[k - 1].comp;
    M->run = malloc((nrun + 1) * sizeof *M->run);
    M->re = malloc((nrun ? nrun : 1) * sizeof *M->re);
    M->rcap = 256;
    M->rec = malloc(M->rcap * sizeof *M->rec);
    if (!M->rec || !M->run || !M->re)
        return 0;
    nrun = 0;
    for (size_t k = 0; k < q; k++)
        if (!k || e[k].key != e[k - 1].key || e[k].comp != e[k - 1].comp) {
            M->re[nrun] = e[k];
            M->re[nrun].v = (uint32_t)nrun; /* the run's index */
            M->run[nrun++] = k;
        }
    M->run[nrun] = q;
    M->nrun = nrun;
    return 1;
}

/* The runs of every component in the 27 cells around run x's cell, as
 * comp << 32 | its run, sorted into *nb (grown as needed): the same list
 * for each run of that cell (they are consecutive), each skipping its own
 * component's. 0: out of memory. */
static int tb__merge_around(const tb__merge *M, size_t x, uint64_t **nb, size_t *ncap, size_t *count, size_t cur[9])
{
    uint32_t c[3];
    size_t lo[27], hi[27], nn = 0;
    tb__key_cell(M->re[x].key, c);
    int nr = tb__neighbours_at(M->re, M->nrun, c, lo, hi, cur); /* runs in key order */
    for (int r = 0; r < nr; r++)
        for (size_t t = lo[r]; t < hi[r]; t++) {
            if (nn == *ncap) {
                void *n2 = realloc(*nb, 2 * *ncap * sizeof **nb);
                if (!n2)
                    return 0;
                *nb = n2;
                *ncap *= 2;
            }
            (*nb)[nn++] = (uint64_t)M->re[t].comp << 32 | M->re[t].v;
        }
    tb__sort_u64(*nb, nn);
    *count = nn;
    return 1;
}

/* Adds to dir the outward normal of the skin at welded vertex o, the
 * other's sample nearest to p: from its medial point to it, or where it has
 * none, from it to p. */
static void tb__merge_normal(const tb__state *st, const float *p, uint32_t o, float dir[3])
{
    const float *q = st->wpos + (size_t)o * 3, *m = st->mpos + (size_t)o * 3;
    const float *from = st->thin[o] && st->mrad[o] > 0 ? m : q, *to = from == m ? q : p;
    float len = sqrtf((to[0] - from[0]) * (to[0] - from[0]) + (to[1] - from[1]) * (to[1] - from[1]) +
                      (to[2] - from[2]) * (to[2] - from[2]));
    for (int k = 0; len > 0 && k < 3; k++)
        dir[k] += (to[k] - from[k]) / len;
}

#if defined(__GNUC__)
typedef float tb__m4f __attribute__((vector_size(16)));
typedef int tb__m4i __attribute__((vector_size(16)));

static tb__m4f tb__m4_sqrt(tb__m4f x)
{
#if defined(__SSE__)
    return (tb__m4f)_mm_sqrt_ps((__m128)x);
#else
    for (int k = 0; k < 4; k++)
        x[k] = sqrtf(x[k]);
    return x;
#endif
}

/* The squared distance between box q (q[0..3) its least corner, q[3..6)
 * its greatest) and box b (likewise), in the operations of a squared
 * distance between points in them: each coordinate's gap is at most those
 * points' difference and rounding is monotone, so it is at most the squared
 * distance computed between any two such points. */
static inline float tb__box_gap2(const float *q, const float *b)
{
    float s = 0;
    for (int a = 0; a < 3; a++) {
        float d = b[a] - q[3 + a], e = q[a] - b[3 + a];
        d = d > e ? d : e;
        d = d > 0 ? d : 0;
        s += d * d;
    }
    return s;
}

static inline int tb__m4_all(tb__m4i m)
{
    return m[0] && m[1] && m[2] && m[3];
}

static inline float tb__m4_min(tb__m4f v)
{
    float a = v[0] < v[1] ? v[0] : v[1], b = v[2] < v[3] ? v[2] : v[3];
    return a < b ? a : b;
}

/* Each lane's least squared distance so far (g) to run y's samples and the
 * first sample at it (nr), written once for the four lanes
 * (tb__merge_lanes) and the eight (tb__merge_lanes8), so that both do the
 * same operations in the same order: VF and VI the float and int vectors;
 * M, y, px, py, pz, g and nr in scope. */
#define TB__MERGE_NEAREST(VF, VI)                                                                           \
    for (size_t j = M->soff[y]; j < M->soff[y + 1]; j++) {                                                  \
        const float *o = M->sp + j * TB__MSF;                                                               \
        VF dx = o[0] - px, dy = o[1] - py, dz = o[2] - pz;                                                  \
        VF d2 = dx * dx + dy * dy + dz * dz;                                                                \
        VI lt = d2 < g; /* the least so far, and the first sample at it */                                  \
        g = (VF)(((VI)d2 & lt) | ((VI)g & ~lt));                                                            \
        nr = ((int)j & lt) | (nr & ~lt);                                                                    \
    }

/* Samples [i, i + 4) of a run (the lanes past its end copies of its last)
 * against the samples of the other component's runs nb[g0..g1), in the
 * scalar order: per lane the least squared distance (NaN ones skipped),
 * the first sample at it, and whether any lies in the other's tube. The
 * same IEEE single operations as one sample at a time (no FMA contraction
 * without an FMA target), so every value is the scalar one bit for bit.
 * A run is passed over for the tube test when every lane is in a tube
 * already or its centres' box is farther from the lanes' box than its
 * widest band (none of its samples' tubes holds a lane; the 0.999 keeps a
 * margin): most are. Lanes with a NaN coordinate pass over none. */
static inline __attribute__((always_inline)) void tb__merge_lanes(const tb__merge *M, size_t i, size_t end,
                                                                  const uint64_t *nb, size_t g0, size_t g1,
                                                                  tb__m4f *gap2, tb__m4i *near, tb__m4i *inside)
{
    tb__m4f px, py, pz;
    for (int k = 0; k < 4; k++) {
        const float *p = M->sp + (i + (size_t)k < end ? i + (size_t)k : end - 1) * TB__MSF;
        px[k] = p[0], py[k] = p[1], pz[k] = p[2];
    }
    float q[6] = {tb__m4_min(px), tb__m4_min(py), tb__m4_min(pz), -tb__m4_min(-px), -tb__m4_min(-py),
                  -tb__m4_min(-pz)}; /* the lanes' box */
    tb__m4i nn = (px != px) | (py != py) | (pz != pz);
    int nan = nn[0] | nn[1] | nn[2] | nn[3];
    tb__m4f g = {INFINITY, INFINITY, INFINITY, INFINITY};
    tb__m4i nr = {-1, -1, -1, -1}, in = {0, 0, 0, 0};
    for (size_t gi = g0; gi < g1; gi++) {
        size_t y = (size_t)(uint32_t)nb[gi];
        const float *b = M->rbox + y * TB__MRB;
        TB__MERGE_NEAREST(tb__m4f, tb__m4i);
        if ((nan || !(tb__box_gap2(q, b + 6) * 0.999f > b[12])) && !tb__m4_all(in))
            for (size_t j = M->soff[y]; j < M->soff[y + 1]; j++) {
                const float *o = M->sp + j * TB__MSF;
                tb__m4f mx = o[3] - px, my = o[4] - py, mz = o[5] - pz;
                tb__m4f dm = tb__m4_sqrt(mx * mx + my * my + mz * mz);
                in |= (dm >= o[6]) & (dm <= o[7]);
            }
    }
    *gap2 = g, *near = nr, *inside = in;
}

#ifdef TB__MERGE_AVX2
typedef float tb__m8f __attribute__((vector_size(32)));
typedef int tb__m8i __attribute__((vector_size(32)));
#define TB__M8(x) {(x), (x), (x), (x), (x), (x), (x), (x)}

/* Lane by lane: a where m is set, else b. */
static inline tb__m4f tb__m4_pick(tb__m4i m, tb__m4f a, tb__m4f b)
{
    return (tb__m4f)(((tb__m4i)a & m) | ((tb__m4i)b & ~m));
}

/* Floats [0, 4) of samples s[0..8) (a sample's position and its centre's
 * x), transposed: lane k sample s[k]'s, two fours side by side. */
static inline __attribute__((always_inline)) void tb__m8_rows(const float *const s[8], tb__m8f *x, tb__m8f *y,
                                                              tb__m8f *z)
{
    tb__m4f q0, q1, q2, q3, q4, q5, q6, q7;
    memcpy(&q0, s[0], sizeof q0), memcpy(&q1, s[1], sizeof q1), memcpy(&q2, s[2], sizeof q2);
    memcpy(&q3, s[3], sizeof q3), memcpy(&q4, s[4], sizeof q4), memcpy(&q5, s[5], sizeof q5);
    memcpy(&q6, s[6], sizeof q6), memcpy(&q7, s[7], sizeof q7);
    tb__m8f a = __builtin_shufflevector(q0, q4, 0, 1, 2, 3, 4, 5, 6, 7),
            b = __builtin_shufflevector(q1, q5, 0, 1, 2, 3, 4, 5, 6, 7),
            c = __builtin_shufflevector(q2, q6, 0, 1, 2, 3, 4, 5, 6, 7),
            d = __builtin_shufflevector(q3, q7, 0, 1, 2, 3, 4, 5, 6, 7);
    tb__m8f t0 = __builtin_shufflevector(a, b, 0, 8, 1, 9, 4, 12, 5, 13),
            t1 = __builtin_shufflevector(a, b, 2, 10, 3, 11, 6, 14, 7, 15),
            t2 = __builtin_shufflevector(c, d, 0, 8, 1, 9, 4, 12, 5, 13),
            t3 = __builtin_shufflevector(c, d, 2, 10, 3, 11, 6, 14, 7, 15);
    *x = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);
    *y = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15);
    *z = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);
}

/* tb__merge_lanes on samples [i, i + 8) (in tb__merge_samples_avx2 only:
 * 256-bit vectors, AVX2 for the integer lanes): lane for lane the same
 * operations in the same order, so each lane's least distance, its first
 * sample and its tube flag are the four lanes' bit for bit. The lanes' box
 * is the box of eight, within which both fours' boxes lie (its gap to a run
 * is at most theirs: a run the fours would test is tested); a run it passes
 * over has no tube that holds a lane either way. Results into gap2, near,
 * inside (8 each). */
static inline __attribute__((always_inline)) void tb__merge_lanes8(const tb__merge *M, size_t i, size_t end,
                                                                   const uint64_t *nb, size_t g0, size_t g1,
                                                                   float gap2[8], int near[8], int inside[8])
{
#define TB__S(k) (M->sp + (i + (k) < end ? i + (k) : end - 1) * TB__MSF)
    const float *const sp[8] = {TB__S(0), TB__S(1), TB__S(2), TB__S(3), TB__S(4), TB__S(5), TB__S(6), TB__S(7)};
#undef TB__S
    tb__m8f px, py, pz;
    tb__m8_rows(sp, &px, &py, &pz);
    tb__m4f xl = __builtin_shufflevector(px, px, 0, 1, 2, 3), xh = __builtin_shufflevector(px, px, 4, 5, 6, 7),
            yl = __builtin_shufflevector(py, py, 0, 1, 2, 3), yh = __builtin_shufflevector(py, py, 4, 5, 6, 7),
            zl = __builtin_shufflevector(pz, pz, 0, 1, 2, 3), zh = __builtin_shufflevector(pz, pz, 4, 5, 6, 7);
    tb__m4f bx = tb__m4_pick(xl < xh, xl, xh), by = tb__m4_pick(yl < yh, yl, yh), bz = tb__m4_pick(zl < zh, zl, zh),
            cx = tb__m4_pick(xl > xh, xl, xh), cy = tb__m4_pick(yl > yh, yl, yh), cz = tb__m4_pick(zl > zh, zl, zh);
    float q[6] = {tb__m4_min(bx), tb__m4_min(by), tb__m4_min(bz), -tb__m4_min(-cx), -tb__m4_min(-cy),
                  -tb__m4_min(-cz)}; /* the lanes' box (a NaN lane: nan below) */
    tb__m8i nn = (px != px) | (py != py) | (pz != pz);
    int nan = 0;
    for (int k = 0; k < 8; k++)
        nan |= nn[k];
    tb__m8f g = TB__M8(INFINITY);
    tb__m8i nr = TB__M8(-1), in = TB__M8(0);
    for (size_t gi = g0; gi < g1; gi++) {
        size_t y = (size_t)(uint32_t)nb[gi];
        const float *b = M->rbox + y * TB__MRB;
        TB__MERGE_NEAREST(tb__m8f, tb__m8i);
        int all = (_mm_movemask_ps((__m128)__builtin_shufflevector(in, in, 0, 1, 2, 3)) &
                   _mm_movemask_ps((__m128)__builtin_shufflevector(in, in, 4, 5, 6, 7))) == 15; /* all-ones lanes */
        if ((nan || !(tb__box_gap2(q, b + 6) * 0.999f > b[12])) && !all)
            for (size_t j = M->soff[y]; j < M->soff[y + 1]; j++) {
                const float *o = M->sp + j * TB__MSF;
                tb__m8f mx = o[3] - px, my = o[4] - py, mz = o[5] - pz;
                tb__m8f s2 = mx * mx + my * my + mz * mz;
                tb__m4f rl = tb__m4_sqrt(__builtin_shufflevector(s2, s2, 0, 1, 2, 3)),
                        rh = tb__m4_sqrt(__builtin_shufflevector(s2, s2, 4, 5, 6, 7));
                tb__m8f dm = __builtin_shufflevector(rl, rh, 0, 1, 2, 3, 4, 5, 6, 7);
                in |= (dm >= o[6]) & (dm <= o[7]);
            }
    }
    memcpy(gap2, &g, sizeof g);
    memcpy(near, &nr, sizeof nr);
    memcpy(inside, &in, sizeof in);
}
#undef TB__M8
#endif
#undef TB__MERGE_NEAREST

/* Run x's samples against the samples of one other component's runs
 * nb[g0..g1): the least squared distance, in *in how many of the *tried
 * samples lie in that component's tube, and in dir the sum, over those,
 * of the other's outward normal at its sample nearest to each (round a tube
 * they cancel, on one side of it they add up). Four of x's samples at a
 * time (tb__merge_lanes; lanes = 8: eight, tb__merge_lanes8), taken in
 * their order either way. */
static inline __attribute__((always_inline)) float tb__merge_samples_in(const tb__merge *M, size_t x,
                                                                        const uint64_t *nb, size_t g0, size_t g1,
                                                                        size_t *tried, size_t *in, float dir[3],
                                                                        const int lanes)
{
    float gap2 = INFINITY;
    size_t end = M->soff[x + 1];
    *tried = end - M->soff[x];
    *in = 0;
    dir[0] = dir[1] = dir[2] = 0;
    for (size_t i = M->soff[x], l = (size_t)lanes; i < end; i += l) {
        float g[8];
        int near[8], inside[8];
        l = lanes == 8 && end - i <= 4 ? 4 : (size_t)lanes; /* four lanes hold the rest */
#ifdef TB__MERGE_AVX2
        if (l == 8)
            tb__merge_lanes8(M, i, end, nb, g0, g1, g, near, inside);
        else
#endif
        {
            tb__m4f g4;
            tb__m4i near4, inside4;
            tb__merge_lanes(M, i, end, nb, g0, g1, &g4, &near4, &inside4);
            memcpy(g, &g4, sizeof g4);
            memcpy(near, &near4, sizeof near4);
            memcpy(inside, &inside4, sizeof inside4);
        }
        for (int k = 0; (size_t)k < l && i + (size_t)k < end; k++) {
            gap2 = g[k] < gap2 ? g[k] : gap2;
            if (inside[k])
                tb__merge_normal(M->st, M->sp + (i + (size_t)k) * TB__MSF,
                                 near[k] < 0 ? UINT32_MAX : M->sv[near[k]], dir);
            *in += inside[k] != 0;
        }
    }
    return gap2;
}

static float tb__merge_samples(const tb__merge *M, size_t x, const uint64_t *nb, size_t g0, size_t g1,
                               size_t *tried, size_t *in, float dir[3])
{
    return tb__merge_samples_in(M, x, nb, g0, g1, tried, in, dir, 4);
}

#if defined(__x86_64__) || defined(__i386__)
#define TB__MERGE_AVX 1
/* The same compiled for AVX (chosen at run time): the same operations on
 * the same four lanes (AVX has no FMA: nothing is contracted), in
 * three-operand instructions that need no register copies. */
__attribute__((target("avx"))) static float tb__merge_samples_avx(const tb__merge *M, size_t x, const uint64_t *nb,
                                                                  size_t g0, size_t g1, size_t *tried, size_t *in,
                                                                  float dir[3])
{
    return tb__merge_samples_in(M, x, nb, g0, g1, tried, in, dir, 4);
}
#endif
#ifdef TB__MERGE_AVX2
/* Eight lanes (tb__merge_lanes8), compiled for AVX2 (no FMA: nothing is
 * contracted); chosen at run time. */
__attribute__((target("avx2"))) static float tb__merge_samples_avx2(const tb__merge *M, size_t x, const uint64_t *nb,
                                                                    size_t g0, size_t g1, size_t *tried, size_t *in,
                                                                    float dir[3])
{
    return tb__merge_samples_in(M, x, nb, g0, g1, tried, in, dir, 8);
}
#endif
#else
/* Run x's samples against the samples of one other component's runs
 * nb[g0..g1): the least squared distance, in *in how many of the *tried
 * samples lie in that component's tube, and in dir the sum, over those,
 * of the other's outward normal at its sample nearest to each (round a tube
 * they cancel, on one side of it they add up). */
static float tb__merge_samples(const tb__merge *M, size_t x, const uint64_t *nb, size_t g0, size_t g1,
                               size_t *tried, size_t *in, float dir[3])
{
    float gap2 = INFINITY;
    *tried = *in = 0;
    dir[0] = dir[1] = dir[2] = 0;
    for (size_t i = M->soff[x]; i < M->soff[x + 1]; i++) {
        const float *p = M->sp + i * TB__MSF;
        int inside = 0;
        uint32_t near = UINT32_MAX;
        float near2 = INFINITY;
        for (size_t gi = g0; gi < g1; gi++) {
            size_t y = (size_t)(uint32_t)nb[gi];
            for (size_t j = M->soff[y]; j < M->soff[y + 1]; j++) {
                const float *o = M->sp + j * TB__MSF, *m = o + 3;
                /* squared: sqrtf is monotone, the root of the least is the least root */
                float d2 = (o[0] - p[0]) * (o[0] - p[0]) + (o[1] - p[1]) * (o[1] - p[1]) +
                           (o[2] - p[2]) * (o[2] - p[2]);
                gap2 = d2 < gap2 ? d2 : gap2;
                if (d2 < near2)
                    near2 = d2, near = M->sv[j];
                if (inside)
                    continue;
                float dm = sqrtf((m[0] - p[0]) * (m[0] - p[0]) + (m[1] - p[1]) * (m[1] - p[1]) +
                                 (m[2] - p[2]) * (m[2] - p[2]));
                inside = dm >= o[6] && dm <= o[7];
            }
        }
        if (inside)
            tb__merge_normal(M->st, p, near, dir);
        (*tried)++;
        *in += (size_t)inside;
    }
    return gap2;
}
#endif

/* (Re)builds the pairs' hash with hcap slots from rec. 0: out of memory. */
static int tb__merge_rehash(tb__merge *M, size_t hcap)
{
    free(M->hkey);
    free(M->hat);
    M->hkey = malloc(hcap * sizeof *M->hkey);
    M->hat = malloc(hcap * sizeof *M->hat);
    M->hcap = hcap;
    if (!M->hkey || !M->hat)
        return 0;
    memset(M->hat, 0xff, hcap * sizeof *M->hat);
    for (size_t i = 0; i < M->nrec; i++) {
        uint64_t key = (uint64_t)M->rec[i].a << 32 | M->rec[i].b;
        size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (hcap - 1);
        while (M->hat[h] != UINT32_MAX)
            h = (h + 1) & (hcap - 1);
        M->hkey[h] = key;
        M->hat[h] = (uint32_t)i;
    }
    return 1;
}

/* The sums of pair (a, b), a new one (nothing summed yet) the first time.
 * NULL: out of memory. */
static struct tb__near *tb__merge_pair(tb__merge *M, uint32_t a, uint32_t b)
{
    if (2 * (M->nrec + 1) > M->hcap && !tb__merge_rehash(M, M->hcap ? 2 * M->hcap : 512))
        return NULL;
    uint64_t key = (uint64_t)a << 32 | b;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (M->hcap - 1);
    while (M->hat[h] != UINT32_MAX && M->hkey[h] != key)
        h = (h + 1) & (M->hcap - 1);
    if (M->hat[h] != UINT32_MAX)
        return &M->rec[M->hat[h]];
    if (M->nrec == M->rcap) {
        void *nr2 = realloc(M->rec, 2 * M->rcap * sizeof *M->rec);
        if (!nr2)
            return NULL;
        M->rec = nr2;
        M->rcap *= 2;
    }
    struct tb__near *z = &M->rec[M->nrec];
    memset(z, 0, sizeof *z);
    z->a = a, z->b = b, z->gap = INFINITY;
    M->hkey[h] = key;
    M->hat[h] = (uint32_t)M->nrec++;
    return z;
}

/* One run's test against one other component (tb__merge_samples), kept
 * for its record, its terms as the record adds them: the run's component
 * (me), the gap, the run's vertices estimated in the other's tube (est)
 * and the run's share of the direction (sdir). */
typedef struct tb__merge_test {
    uint32_t me, other;
    float gap, est, sdir[3];
} tb__merge_test;

/* Run x's test against component other (tb__merge_samples' gap2, tried,
 * in, dir) as its record's terms: computed with the test, on its thread. */
static void tb__merge_terms(const tb__merge *M, size_t x, float gap2, size_t tried, size_t in, const float dir[3],
                            tb__merge_test *t)
{
    size_t xn = M->run[x + 1] - M->run[x];
    t->me = M->re[x].comp;
    t->est = tried ? (float)xn * (float)in / (float)tried : 0;
    t->gap = sqrtf(gap2);
    float scale = tried ? (float)xn / (float)tried : 0;
    for (int k = 0; k < 3; k++)
        t->sdir[k] = dir[k] * scale;
}

/* One record (tb__merge_terms) added to its pair's sums (in the order the
 * records are made: the sums' order the sorted records gave). 0: out of
 * memory. */
static int tb__merge_record(tb__merge *M, const tb__merge_test *t)
{
    uint32_t me = t->me, other = t->other;
    struct tb__near *z = tb__merge_pair(M, me < other ? me : other, me < other ? other : me);
    if (!z)
        return 0;
    z->gap = t->gap < z->gap ? t->gap : z->gap;
    z->b_in_a += me == z->b ? t->est : 0;
    z->a_in_b += me == z->a ? t->est : 0;
    for (int k = 0; k < 3; k++) {
        z->b_dir[k] += me == z->b ? t->sdir[k] : 0;
        z->a_dir[k] += me == z->a ? t->sdir[k] : 0;
    }
    return 1;
}

/* The tests of a block of consecutive runs, in run order. */
typedef struct tb__merge_block {
    tb__merge_test *t;
    size_t n, cap;
    int ok;
} tb__merge_block;

typedef struct tb__merge_near_job {
    const tb__merge *M;
    size_t per; /* runs per block */
    tb__merge_block *b;
    int avx; /* 1: tb__merge_samples_avx, 2: tb__merge_samples_avx2 */
} tb__merge_near_job;

/* Block `task`'s runs, per other component around each: its test. The
 * neighbour cursors start afresh per block (they walk on from any start). */
static void tb__merge_near_task(void *c, int task, int worker)
{
    (void)worker;
    tb__merge_near_job *J = c;
    const tb__merge *M = J->M;
    tb__merge_block *B = &J->b[task];
    size_t x0 = (size_t)task * J->per, x1 = x0 + J->per < M->nrun ? x0 + J->per : M->nrun;
    size_t ncap = 64, nn = 0, cur[9] = {0};
    uint64_t *nb = malloc(ncap * sizeof *nb); /* other comp << 32 | its run, around run x */
    B->ok = nb != NULL;
    for (size_t x = x0; B->ok && x < x1; x++) {
        if (x == x0 || M->re[x].key != M->re[x - 1].key) /* a new cell */
            B->ok = tb__merge_around(M, x, &nb, &ncap, &nn, cur);
        for (size_t g0 = 0; B->ok && g0 < nn;) {
            uint32_t other = (uint32_t)(nb[g0] >> 32);
            size_t g1 = g0;
            while (g1 < nn && (uint32_t)(nb[g1] >> 32) == other)
                g1++;
            if (other == M->re[x].comp) { /* its own component */
                g0 = g1;
                continue;
            }
            if (B->n == B->cap) {
                size_t cap = B->cap ? 2 * B->cap : 64;
                void *t2 = realloc(B->t, cap * sizeof *B->t);
                if (!t2) {
                    B->ok = 0;
                    break;
                }
                B->t = t2, B->cap = cap;
            }
            tb__merge_test *t = &B->t[B->n++];
            t->other = other;
            size_t tried, in;
            float dir[3], gap2;
#if defined(TB__MERGE_AVX2)
            gap2 = J->avx == 2 ? tb__merge_samples_avx2(M, x, nb, g0, g1, &tried, &in, dir)
                   : J->avx    ? tb__merge_samples_avx(M, x, nb, g0, g1, &tried, &in, dir)
                               : tb__merge_samples(M, x, nb, g0, g1, &tried, &in, dir);
#elif defined(TB__MERGE_AVX)
            gap2 = J->avx ? tb__merge_samples_avx(M, x, nb, g0, g1, &tried, &in, dir)
                          : tb__merge_samples(M, x, nb, g0, g1, &tried, &in, dir);
#else
            gap2 = tb__merge_samples(M, x, nb, g0, g1, &tried, &in, dir);
#endif
            tb__merge_terms(M, x, gap2, tried, in, dir, t);
            g0 = g1;
        }
    }
    free(nb);
}

/* Per run, per other component around it: its record. The tests run in
 * blocks of runs on the state's threads; their records are then summed in
 * run order, as one thread would (the same sums for any thread count).
 * 0: out of memory. */
static int tb__merge_near(tb__merge *M)
{
    enum { TB__NEAR_BLOCKS = 32 };
    tb__merge_near_job J = {M, (M->nrun + TB__NEAR_BLOCKS - 1) / TB__NEAR_BLOCKS, NULL, 0};
#ifdef TB__MERGE_AVX
    J.avx = __builtin_cpu_supports("avx") ? 1 : 0;
#endif
#ifdef TB__MERGE_AVX2
    J.avx = J.avx && __builtin_cpu_supports("avx2") ? 2 : J.avx;
#endif
    J.per = J.per < 16 ? 16 : J.per;
    int nb = (int)((M->nrun + J.per - 1) / J.per);
    J.b = calloc((size_t)nb + 1, sizeof *J.b);
    int ok = J.b != NULL;
    if (ok)
        tb__st_for(M->st, M->st->nw < 2048 ? 1 : M->st->d.threads, nb, tb__merge_near_task, &J);
    for (int b = 0; ok && b < nb; b++) {
        ok = J.b[b].ok;
        for (size_t k = 0; ok && k < J.b[b].n; k++) {
            ok = tb__merge_record(M, &J.b[b].t[k]);
        }
    }
    for (int b = 0; J.b && b < nb; b++)
        free(J.b[b].t);
    free(J.b);
    return ok;
}

/* The pairs in (a, b) order, as the records sorted by pair gave them (the
 * hash's places are stale after). 0: out of memory. */
static int tb__merge_by_pair(tb__merge *M)
{
    size_t nrec = M->nrec;
    tb__cell_entry *ix = malloc((nrec ? nrec : 1) * sizeof *ix);
    struct tb__near *sorted = malloc((nrec ? nrec : 1) * sizeof *sorted);
    if (!ix || !sorted) {
        free(ix);
        free(sorted);
        return 0;
    }
    for (size_t i = 0; i < nrec; i++) {
        ix[i].key = (uint64_t)M->rec[i].a << 32 | M->rec[i].b;
        ix[i].comp = 0;
        ix[i].v = (uint32_t)i;
    }
    tb__sort_cells(ix, nrec);
    for (size_t i = 0; i < nrec; i++)
        sorted[i] = M->rec[ix[i].v];
    free(ix);
    free(M->rec);
    M->rec = sorted;
    return 1;
}

/* detached: a piece of its own shell, not far skin of a shell that is
 * mostly body; only a detached piece joins another component */
static int tb__merge_detached(const tb__state *st, const tb__comp *C)
{
    return st->shell_total[C->shell] - st->shell_far[C->shell] < C->nverts;
}

/* The layer rule: a detached layer over another off-bone part (fur on a
 * tail) that goes round it, and no nearer the body than the part it
 * covers. A layer wraps what it covers as skin wraps its bone (by more than
 * wrap_min_deg: directions spread evenly over an arc of θ average to a
 * vector sin(θ/2)/(θ/2) long, less when spread wider); a plate, buckle or
 * strap lying on one side of a tail is no layer of it. A layer of a tail
 * lies over its free length; a buckle on the belt where a tail's root sinks
 * into the body rests on the body, nearer to it than the tail is (at least
 * twice as near, by the mean distance). ta, tb: each part is off the bone.
 * 1: they join, 0: not, -1: out of memory. */
static int tb__merge_layer_along(tb__merge *M, uint32_t pa, uint32_t pb, int ta, int tb, const tb__pair_near *pn)
{
    float bin = pn->bin, ain = pn->ain;
    const tb__state *st = M->st;
    const tb__comp *A = &st->comps[pa], *B = &st->comps[pb];
    int da = tb__merge_detached(st, A), db = tb__merge_detached(st, B);
    int along_b = (ta && tb) && db && bin >= 0.9 * (double)B->nverts,
        along_a = (ta && tb) && da && ain >= 0.9 * (double)A->nverts;
    if ((along_a || along_b) && !M->body) {
        M->body = tb__body_grid(st, M->inv, &M->nbody);
        if (!M->body)
            return -1;
    }
    /* how much nearer the body than the part it covers a layer may lie:
     * half as near going round it, no nearer on one side of it */
    float half = 0.5f * st->d.wrap_min_deg * (float)TB_RAD_PER_DEG, round_max = sinf(half) / half;
    float kb = pn->bside <= round_max ? 2.0f : 1.0f, ka = pn->aside <= round_max ? 2.0f : 1.0f;
    if (along_b)
        along_b = kb * tb__body_gap(st, M->body, M->nbody, M->inv, M->cell, B) >=
                  tb__body_gap(st, M->body, M->nbody, M->inv, M->cell, A);
    if (along_a)
        along_a = ka * tb__body_gap(st, M->body, M->nbody, M->inv, M->cell, A) >=
                  tb__body_gap(st, M->body, M->nbody, M->inv, M->cell, B);
    return along_a || along_b;
}

/* Alike in size, as pieces of one row are (a pouch is no vertebra of a
 * tail, nor a bolt's head a bead): the longer extent within 3× the
 * shorter and, where both pieces are round in section (flatness < 2: a
 * tube, a bead, a rod), the thicker one's typical half-thickness (its
 * median local radius, tb__comp_shape) within 3× the thinner's: as alike
 * across as along; neighbours along a tapering tail differ by far less.
 * A flat piece's half-thickness is its plate's, not its size across (a
 * spiny vertebra, a scale), and a piece with none (no ray hit its far
 * side: an open card) is not compared by it. */
int tb__row_alike(float extent_a, float extent_b, float rad_a, float rad_b, float flat_a, float flat_b)
{
    float shorter = extent_a < extent_b ? extent_a : extent_b, longer = extent_a < extent_b ? extent_b : extent_a;
    float thin = rad_a < rad_b ? rad_a : rad_b, thick = rad_a < rad_b ? rad_b : rad_a;
    int sections = flat_a < 2 && flat_b < 2 && thin > 0;
    return longer <= 3 * shorter && (!sections || thick <= 3 * thin);
}

/* The row rule: pieces of one row are alike in size (tb__row_alike), their
 * gap is small against the shorter, and they lie end to end: the gap runs
 * along the axis of each elongated piece. */
static int tb__merge_in_row(const tb__merge *M, uint32_t pa, uint32_t pb, float gap)
{
    const tb__shape *sa = &M->sh[pa], *sb = &M->sh[pb];
    float shorter = sa->extent < sb->extent ? sa->extent : sb->extent;
    if (!(gap <= M->st->d.row_gap * shorter) ||
        !tb__row_alike(sa->extent, sb->extent, sa->rad, sb->rad, sa->flat, sb->flat))
        return 0;
    float dcv[3] = {sb->c[0] - sa->c[0], sb->c[1] - sa->c[1], sb->c[2] - sa->c[2]};
    float dl = sqrtf(dcv[0] * dcv[0] + dcv[1] * dcv[1] + dcv[2] * dcv[2]);
    float ca = dl > 0 ? fabsf(dcv[0] * sa->axis[0] + dcv[1] * sa->axis[1] + dcv[2] * sa->axis[2]) / dl : 1;
    float cb = dl > 0 ? fabsf(dcv[0] * sb->axis[0] + dcv[1] * sb->axis[1] + dcv[2] * sb->axis[2]) / dl : 1;
    /* a round piece (a bead) has no direction of its own; a flat one
     * (a plate) is no bead */
    int ra = sa->elong < 1.4f && sa->flat < 2, rb = sb->elong < 1.4f && sb->flat < 2;
    return (ra || ca >= 0.7f) && (rb || cb >= 0.7f);
}

/* Whether components pa and pb join, from their reduced record: nothing
 * that wraps a bone; a layer along the other, or (not a layer: one over
 * the other's surface joins only as a layer) detached off-bone pieces in a
 * row. -1: out of memory. */
static int tb__merge_join(tb__merge *M, uint32_t pa, uint32_t pb, const tb__pair_near *pn)
{
    float bin = pn->bin, ain = pn->ain, gap = pn->gap;
    const tb__state *st = M->st;
    const tb__comp *A = &st->comps[pa], *B = &st->comps[pb];
    if (M->sh[pa].wraps || M->sh[pb].wraps)
        return 0;
    /* only skin off the bone can be part of a tail: a joint ball or an
     * armour piece round a bone is body */
    int ta = 2 * M->sh[pa].thin >= A->nverts, tb = 2 * M->sh[pb].thin >= B->nverts;
    int along = tb__merge_layer_along(M, pa, pb, ta, tb, pn);
    if (along)
        return along;
    int layer = bin >= 0.9 * (double)B->nverts || ain >= 0.9 * (double)A->nverts;
    int da = tb__merge_detached(st, A) && ta, db = tb__merge_detached(st, B) && tb;
    return !layer && da && db && tb__merge_in_row(M, pa, pb, gap);
}

/* Per pair (its records summed in order, tb__merge_record): joined or not. 0: out of memory. */
static int tb__merge_pairs(tb__merge *M)
{
    for (size_t i = 0; i < M->nrec; i++) {
        const struct tb__near *r = &M->rec[i];
        tb__pair_near pn = {r->b_in_a, r->a_in_b, r->gap, r->b_in_a > 0 ? tb__vlen(r->b_dir) / r->b_in_a : 0,
                            r->a_in_b > 0 ? tb__vlen(r->a_dir) / r->a_in_b : 0};
        int join = tb__merge_join(M, r->a, r->b, &pn);
        if (join < 0)
            return 0;
        if (join)
            tb__unite(M->uf, r->a, r->b);
    }
    return 1;
}

tb_result tb__detect_merge(tb__state *st, tb_error *err)
{
    tb__merge M;
    int ok = tb__merge_setup(&M, st) && tb__merge_near(&M) && tb__merge_by_pair(&M) && tb__merge_pairs(&M);
    if (ok)
        for (size_t i = 0; i < M.n; i++)
            st->comps[i].group = (int)tb__find(M.uf, (uint32_t)i);
    tb__merge_free(&M);
    return ok ? TB_OK : tb__fail(err, TB_ERR_OOM, NULL, NULL);
}

/* Bridges between the pieces of a merged group (A6 choice), so the
 * geodesic crosses from one closed segment to the next. Per grid cell and
 * piece, its first vertex is linked to the nearest vertex of each other
 * piece in the 27 cells around: O(F) on a grid of touch_fraction H. */
tb_result tb__bridges(const tb__state *st, const uint32_t *wv, const uint32_t *piece, size_t nv,
                      tb__graph *out, tb_error *err)
{
    float cell = st->d.touch_fraction * st->H;
    float inv = cell > 0 ? 1.0f / cell : 1.0f;
    tb__cell_entry *e = malloc((nv ? nv : 1) * sizeof *e);
    size_t cap = 256, ne = 0;
    uint32_t *edges = malloc(cap * 2 * sizeof *edges);
    if (!e || !edges) {
        free(e);
        free(edges);
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    }
    for (size_t k = 0; k < nv; k++) {
        uint32_t c[3];
        tb__cell_of(st, st->wpos + (size_t)wv[k] * 3, inv, c);
        e[k].key = tb__cell_key(c);
        e[k].comp = piece[k];
        e[k].v = wv[k];
    }
    tb__sort_cells(e, nv);
    size_t cur[9] = {0};
    for (size_t k = 0; k < nv; k++) {
        if (k && e[k - 1].key == e[k].key && e[k - 1].comp == e[k].comp)
            continue; /* first vertex of its (cell, piece) only */
        uint32_t c[3];
        size_t lo[27], hi[27];
        tb__key_cell(e[k].key, c);
        const float *p = st->wpos + (size_t)e[k].v * 3;
        int nr = tb__neighbours_at(e, nv, c, lo, hi, cur); /* cells in key order */
        /* the nearest vertex of every other piece around (runs are per piece) */
        for (int r = 0; r < nr; r++)
            for (size_t t = lo[r]; t < hi[r];) {
                uint32_t other = e[t].comp;
                size_t end = t;
                while (end < hi[r] && e[end].comp == other)
                    end++;
                if (other != e[k].comp) {
                    uint32_t best = UINT32_MAX;
                    float bd = INFINITY;
                    for (size_t q = t; q < end; q++) {
                        const float *o = st->wpos + (size_t)e[q].v * 3;
                        float d = (o[0] - p[0]) * (o[0] - p[0]) + (o[1] - p[1]) * (o[1] - p[1]) +
                                  (o[2] - p[2]) * (o[2] - p[2]);
                        if (d < bd) {
                            bd = d;
                            best = e[q].v;
                        }
                    }
                    if (ne == cap) {
                        cap *= 2;
                        uint32_t *n2 = realloc(edges, cap * 2 * sizeof *edges);
                        if (!n2) {
                            free(e);
                            free(edges);
                            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
                        }
                        edges = n2;
                    }
                    edges[ne * 2] = e[k].v;
                    edges[ne * 2 + 1] = best;
                    ne++;
                }
                t = end;
            }
    }
    free(e);
    tb_result r = tb__graph_from_edges(out, st->nw, edges, ne, err);
    free(edges);
    return r;
}

/* Chain joints from g (SPEC A9). wv: welded far vertices with geodesic g[]. */
/* The chain station (1..K) whose half-segment band geodesic coordinate g
 * falls in: |g - iL/K| <= L/2K; -1 outside every band or for no g (A9). */
static int tb__station(float g, float L, int K)
{
    if (!isfinite(g))
        return -1;
    int i = (int)floorf(g / (L / (float)K) + 0.5f);
    return i < 1 || i > K || fabsf(g - (float)i * L / (float)K) > L / (2.0f * (float)K) ? -1 : i;
}

int tb__chain_joints(const tb__state *st, const uint32_t *wv, size_t n, const float *g, float L, int K,
                     const float j0[3], float (*J)[3], float *radius, float *flatness)
{
    double acc[TB_TAIL_MAX_BONES + 1][4];
    memset(acc, 0, sizeof acc);
    for (size_t k = 0; k < n; k++) {
        int i = tb__station(g[wv[k]], L, K);
        if (i < 0)
            continue;
        const float *p = st->wpos + (size_t)wv[k] * 3;
        acc[i][0] += p[0], acc[i][1] += p[1], acc[i][2] += p[2], acc[i][3] += 1;
    }
    memcpy(J[0], j0, sizeof J[0]);
    int have[TB_TAIL_MAX_BONES + 1] = {1};
    for (int i = 1; i <= K; i++)
        if (acc[i][3] > 0) {
            for (int a = 0; a < 3; a++)
                J[i][a] = (float)(acc[i][a] / acc[i][3]);
            have[i] = 1;
        }
    /* empty stations (a very thin or cut tail): interpolate the neighbours */
    for (int i = 1; i <= K; i++) {
        if (have[i])
            continue;
        int lo = i - 1, hi = i + 1;
        while (hi <= K && !have[hi])
            hi++;
        for (int a = 0; a < 3; a++)
            J[i][a] = hi <= K ? J[lo][a] + (J[hi][a] - J[lo][a]) / (float)(hi - lo) : J[lo][a];
        have[i] = 1;
    }
    /* cross-section radius per station (for the A7 taper measure) */
    double rs[TB_TAIL_MAX_BONES + 1] = {0}, rc[TB_TAIL_MAX_BONES + 1] = {0};
    for (size_t k = 0; k < n; k++) {
        int i = tb__station(g[wv[k]], L, K);
        if (i < 0)
            continue;
        const float *p = st->wpos + (size_t)wv[k] * 3;
        float dx = p[0] - J[i][0], dy = p[1] - J[i][1], dz = p[2] - J[i][2];
        rs[i] += sqrt(dx * dx + dy * dy + dz * dz);
        rc[i] += 1;
    }
    for (int i = 0; i <= K; i++)
        radius[i] = rc[i] > 0 ? (float)(rs[i] / rc[i]) : 0;
    /* cross-section shape per station: the spread of its skin across the
     * chain, largest over smallest principal axis (a tube's ring ~1, a
     * cape's or a plate's section a line) */
    {
        double cs[TB_TAIL_MAX_BONES + 1][6];
        memset(cs, 0, sizeof cs);
        float tan_[TB_TAIL_MAX_BONES + 1][3];
        for (int i = 1; i <= K; i++) {
            const float *a = J[i - 1], *b = J[i < K ? i + 1 : K];
            float t[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            float l = sqrtf(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
            for (int x = 0; x < 3; x++)
                tan_[i][x] = l > 0 ? t[x] / l : 0;
        }
        for (size_t k = 0; k < n; k++) {
            int i = tb__station(g[wv[k]], L, K);
            if (i < 0)
                continue;
            const float *p = st->wpos + (size_t)wv[k] * 3;
            float q[3] = {p[0] - J[i][0], p[1] - J[i][1], p[2] - J[i][2]};
            float dt = q[0] * tan_[i][0] + q[1] * tan_[i][1] + q[2] * tan_[i][2];
            for (int x = 0; x < 3; x++)
                q[x] -= dt * tan_[i][x];
            cs[i][0] += q[0] * q[0], cs[i][1] += q[1] * q[1], cs[i][2] += q[2] * q[2];
            cs[i][3] += q[0] * q[1], cs[i][4] += q[0] * q[2], cs[i][5] += q[1] * q[2];
        }
        float fl[TB_TAIL_MAX_BONES + 1];
        int nf = 0;
        for (int i = 1; i <= K; i++) {
            double c3[3][3] = {{cs[i][0], cs[i][3], cs[i][4]}, {cs[i][3], cs[i][1], cs[i][5]}, {cs[i][4], cs[i][5], cs[i][2]}}, ev[3];
            tb__eig3(c3, ev, NULL);
            if (rc[i] >= 3 && ev[0] > 0)
                fl[nf++] = ev[1] > 0 ? (float)sqrt(ev[0] / ev[1]) : 1e3f;
        }
        qsort(fl, (size_t)nf, sizeof *fl, tb__cmp_float);
        *flatness = nf ? fl[nf / 2] : 1;
    }
    /* two smoothing passes on the interior joints (SPEC A9) */
    for (int pass = 0; pass < st->d.smoothing_passes; pass++) {
        float prev[TB_TAIL_MAX_BONES + 1][3];
        memcpy(prev, J, sizeof(float) * 3 * (size_t)(K + 1));
        for (int i = 1; i < K; i++)
            for (int a = 0; a < 3; a++)
                J[i][a] = 0.5f * prev[i][a] + 0.25f * (prev[i - 1][a] + prev[i + 1][a]);
    }
    return K;
}

/* ---- report --------------------------------------------------------------- */

static json_t *tb__jreal(float x)
{
    return isfinite(x) ? json_real((double)x) : json_null();
}

json_t *tb_appendage_report_json(const tb_appendage_report *rep)
{
    json_t *o = json_object();
    json_object_set_new(o, "skin", json_integer(rep->skin));
    json_object_set_new(o, "height", tb__jreal(rep->height));
    json_object_set_new(o, "pelvis", json_string(rep->pelvis_name));
    json_object_set_new(o, "vertex_count", json_integer((json_int_t)rep->vertex_count));
    json_object_set_new(o, "welded_count", json_integer((json_int_t)rep->welded_count));
    json_object_set_new(o, "far_count", json_integer((json_int_t)rep->far_count));
    json_object_set_new(o, "ignored_islands", json_integer((json_int_t)rep->ignored_islands));
    json_object_set_new(o, "body_single_bone", tb__jreal(rep->body_single_bone));
    json_t *roles = json_array();
    for (int i = 0; i < rep->role_count; i++)
        json_array_append_new(roles, json_pack("{s:s,s:s,s:s}", "role", tb_role_name(rep->roles[i].role), "joint",
                                               rep->roles[i].joint, "source",
                                               tb_role_source_name(rep->roles[i].source)));
    json_object_set_new(o, "roles", roles);
    if (rep->changed)
        json_object_set_new(o, "changed_outside", json_integer((json_int_t)rep->changed_outside));
    json_object_set_new(o, "existing_chains", json_integer(rep->existing_chains));
    json_object_set_new(o, "changed", json_boolean(rep->changed));
    if (rep->message[0])
        json_object_set_new(o, "message", json_string(rep->message));
    json_t *arr = json_array();
    for (int i = 0; i < rep->appendage_count; i++) {
        const tb_appendage *a = &rep->appendages[i];
        json_t *e = json_object();
        json_object_set_new(e, "kind", json_string(tb_appendage_kind_name(a->kind)));
        json_object_set_new(e, "decision", json_string(tb_appendage_decision_name(a->decision)));
        json_object_set_new(e, "reason", json_string(a->reason));
        json_object_set_new(e, "vertex_count", json_integer((json_int_t)a->vertex_count));
        json_object_set_new(e, "welded_count", json_integer((json_int_t)a->welded_count));
        json_object_set_new(e, "shells", json_integer((json_int_t)a->shell_count));
        json_object_set_new(e, "separate_shell", json_boolean(a->separate_shell));
        json_object_set_new(e, "pieces", json_integer((json_int_t)a->piece_count));
        json_object_set_new(e, "pieces_cover", json_boolean(a->pieces_cover));
        if (a->decision == TB_DECIDE_CHAIN && rep->changed) {
            if (a->pieces_cover)
                json_object_set_new(e, "piece_span", tb__jreal(a->piece_span));
            json_object_set_new(e, "rigid_pieces", json_boolean(a->rigid_pieces));
            if (!a->rigid_pieces)
                json_object_set_new(e, "blend_zone", tb__jreal(a->blend_zone));
            json_object_set_new(e, "welded_collar", json_integer((json_int_t)a->welded_collar));
            if (a->welded_collar)
                json_object_set_new(e, "collar_band", tb__jreal(a->collar_band));
        }
        json_object_set_new(e, "attachment", json_string(a->attach_name));
        json_t *ap = json_array();
        for (int k = 0; k < 3; k++)
            json_array_append_new(ap, tb__jreal(a->attach_point[k]));
        json_object_set_new(e, "attachment_point", ap);
        json_object_set_new(e, "elongation", tb__jreal(a->elongation));
        json_object_set_new(e, "centroid_ratio", tb__jreal(a->centroid_ratio));
        json_object_set_new(e, "standoff_ratio", tb__jreal(a->standoff_ratio));
        json_object_set_new(e, "lateral", tb__jreal(a->lateral));
        json_object_set_new(e, "radius", tb__jreal(a->radius));
        json_object_set_new(e, "slenderness", tb__jreal(a->slenderness));
        json_object_set_new(e, "flatness", tb__jreal(a->flatness));
        json_object_set_new(e, "leave", tb__jreal(a->leave));
        if (a->kind == TB_KIND_TAIL || a->kind == TB_KIND_CARRIED) {
            json_object_set_new(e, "taper", tb__jreal(a->taper));
            json_object_set_new(e, "bend", tb__jreal(a->bend));
            json_object_set_new(e, "reach", tb__jreal(a->reach));
        }
        json_object_set_new(e, "length", tb__jreal(a->length));
        json_object_set_new(e, "bones", json_integer(a->bone_count));
        if (a->decision != TB_DECIDE_UNTOUCHED)
            json_object_set_new(e, "parent", json_string(a->chain_parent));
        if (a->chain >= 0) {
            char prefix[8];
            tb_tail_name_format(prefix, sizeof prefix, a->chain, -1);
            json_object_set_new(e, "chain", json_string(prefix));
        }
        if (a->decision == TB_DECIDE_CHAIN) {
            json_t *js = json_array();
            for (int k = 0; k <= a->bone_count; k++) {
                json_t *p = json_array();
                for (int c = 0; c < 3; c++)
                    json_array_append_new(p, tb__jreal(a->chain_joints[k][c]));
                json_array_append_new(js, p);
            }
            json_object_set_new(e, "joints", js);
        }
        json_object_set_new(e, "distance_before", tb__jreal(a->distance_before));
        json_object_set_new(e, "distance_after", tb__jreal(a->distance_after));
        json_array_append_new(arr, e);
    }
    json_object_set_new(o, "appendages", arr);
    return o;
}
