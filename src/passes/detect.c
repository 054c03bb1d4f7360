/* Detection's run (SPEC A): tb__appendage_detect, the stages in order:
 * appendage.c's prepare (distance, weld, graph, far set), components
 * (pieces), merge (grouping); then, one merged group at a time, tb__analyse,
 * its stages each a function over one job:
 *   gather    the group's pieces: welded vertices, collars, the root and the
 *             attachment joint (A4, A10 for separate shells);
 *   measures  centroid, elongation and radius (A5), the thin and far skin;
 *   geodesic  sources, the geodesic from the root (A9), length, chain
 *             joints and their rings, slenderness, flatness, leave;
 *   classify  tb__classify: a pure function of the measures row and the
 *             desc (A7, A10), applied to the report;
 *   lists     the model vertices to reweight, their pieces, the collar.
 * and last, the body's skinning style. The detector state is in
 * detect_internal.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/detect_internal.h"
#include "gltf/doc_internal.h"

/* Numbers the separate pieces of an appendage's skin: a welded shell all of
 * whose vertices are in the appendage is one piece (a vertebra, a tuft, a
 * ring of a segmented tail); vertices of a shell that also holds other skin
 * (a tail welded into the body) get TB__NO_PIECE. O(n log n) in the
 * appendage's vertices. */
static tb_result tb__number_pieces(const tb__state *st, tb__app_work *aw, tb_error *err)
{
    size_t n = aw->rw_count;
    aw->piece_count = 0;
    uint64_t *key = malloc((n + 1) * sizeof *key); /* shell << 32 | welded id */
    if (!key)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t k = 0; k < n; k++) {
        uint32_t w = st->wid[aw->rw_verts[k]];
        key[k] = (uint64_t)st->shell[w] << 32 | w;
    }
    tb__sort_u64(key, n);
    /* compact: one entry per whole shell, its piece number in the low bits */
    size_t kept = 0;
    for (size_t i = 0; i < n;) {
        uint32_t s = (uint32_t)(key[i] >> 32);
        size_t distinct = 0, j = i;
        for (; j < n && (uint32_t)(key[j] >> 32) == s; j++)
            distinct += j == i || key[j] != key[j - 1];
        if (distinct == st->shell_total[s])
            key[kept++] = (uint64_t)s << 32 | aw->piece_count++;
        i = j;
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t probe = (uint64_t)st->shell[st->wid[aw->rw_verts[k]]] << 32;
        size_t lo = 0, hi = kept; /* first entry >= probe */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (key[mid] < probe)
                lo = mid + 1;
            else
                hi = mid;
        }
        aw->rw_piece[k] = lo < kept && key[lo] >> 32 == probe >> 32 ? (uint32_t)key[lo] : TB__NO_PIECE;
    }
    free(key);
    return TB_OK;
}

/* The trunk's bones (pelvis and spine segments: a joint of the pelvis or
 * spine class to its parent of the same, both with a trunk role of their
 * own, not a role-less child that inherits the class, such as a stripped
 * tail bone under the pelvis), in joint order, each owned by the parent:
 * made once per detection (tb__trunk_nearest is asked per vertex of a
 * group's ends and roots, and finding them costs two role lookups per
 * joint). 0: out of memory. */
static int tb__trunk_segs(tb__state *st)
{
    const tb_model *m = st->m;
    st->ntrunk = 0;
    st->trunk = malloc((size_t)(m->skel.joint_count > 0 ? m->skel.joint_count : 1) * sizeof *st->trunk);
    if (!st->trunk)
        return 0;
    for (int j = 0; j < m->skel.joint_count; j++) {
        int pj = m->skel.parents[j];
        if (pj < 0)
            continue;
        tb_role_class cj = j == st->pelvis ? TB_CLASS_PELVIS : tb_role_class_of(m->roles[j]),
                      cp = pj == st->pelvis ? TB_CLASS_PELVIS : tb_role_class_of(m->roles[pj]);
        if (!m->skel.has_ibm[j] || !m->skel.has_ibm[pj] ||
            (cj != TB_CLASS_SPINE && cj != TB_CLASS_PELVIS) || (cp != TB_CLASS_SPINE && cp != TB_CLASS_PELVIS))
            continue;
        tb__seg_set(&st->trunk[st->ntrunk++], tb__jpos(m, pj), tb__jpos(m, j), pj);
    }
    return 1;
}

/* Distance from p to the trunk's bones (tb__trunk_segs); *joint (when not
 * NULL) gets the joint owning the nearest one, -1 when none. Without trunk
 * bones, the distance to the pelvis. */
static float tb__trunk_nearest(const tb__state *st, const float p[3], int *joint)
{
    const tb_model *m = st->m;
    float dd = INFINITY;
    if (joint)
        *joint = -1;
    for (int i = 0; i < st->ntrunk; i++) {
        float x = tb__seg_dist(&st->trunk[i], p);
        if (x < dd) {
            dd = x;
            if (joint)
                *joint = st->trunk[i].joint;
        }
    }
    if (!isfinite(dd)) { /* no trunk bones known (an unknown layout): the pelvis */
        const float *q = tb__jpos(m, st->pelvis);
        dd = sqrtf((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
    }
    return dd;
}

static float tb__trunk_dist(const tb__state *st, const float p[3])
{
    return tb__trunk_nearest(st, p, NULL);
}

/* A rigid rod (SPEC A7: "a carried object is straight and of nearly constant
 * cross-section"). Along ax, the principal axis of the vertices, cut into
 * TB__ROD_BINS slices: extent = length along the axis; bow = largest distance
 * of a slice's centroid from the axis, / extent; section = largest / smallest
 * mean radius of the inner slices (the two end slices hold the caps). */
enum { TB__ROD_BINS = 8 };
static void tb__rod(const float *wpos, const uint32_t *wv, size_t nv, const double cen[3], const double ax[3],
                    float *extent, float *bow, float *section)
{
    double tmin = INFINITY, tmax = -INFINITY;
    for (size_t k = 0; k < nv; k++) {
        const float *p = wpos + (size_t)wv[k] * 3;
        double t = (p[0] - cen[0]) * ax[0] + (p[1] - cen[1]) * ax[1] + (p[2] - cen[2]) * ax[2];
        tmin = t < tmin ? t : tmin;
        tmax = t > tmax ? t : tmax;
    }
    *extent = nv ? (float)(tmax - tmin) : 0;
    *bow = 1;
    *section = INFINITY;
    if (!(tmax > tmin))
        return;
    double c[TB__ROD_BINS][3] = {{0}}, r[TB__ROD_BINS] = {0};
    size_t n[TB__ROD_BINS] = {0};
    double w = (tmax - tmin) / TB__ROD_BINS;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < nv; k++) {
            const float *p = wpos + (size_t)wv[k] * 3;
            double q[3] = {p[0] - cen[0], p[1] - cen[1], p[2] - cen[2]};
            double t = q[0] * ax[0] + q[1] * ax[1] + q[2] * ax[2];
            int b = (int)((t - tmin) / w);
            b = b < 0 ? 0 : b >= TB__ROD_BINS ? TB__ROD_BINS - 1 : b;
            if (pass == 0) {
                for (int a = 0; a < 3; a++)
                    c[b][a] += q[a];
                n[b]++;
            } else { /* distance from the slice's centroid, across the axis */
                double e[3] = {q[0] - c[b][0], q[1] - c[b][1], q[2] - c[b][2]};
                double te = e[0] * ax[0] + e[1] * ax[1] + e[2] * ax[2];
                for (int a = 0; a < 3; a++)
                    e[a] -= te * ax[a];
                r[b] += sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]) / (double)n[b];
            }
            if (pass == 0 && k + 1 == nv)
                for (int bb = 0; bb < TB__ROD_BINS; bb++)
                    for (int a = 0; a < 3 && n[bb]; a++)
                        c[bb][a] /= (double)n[bb];
        }
    double dev = 0, rmin = INFINITY, rmax = 0;
    for (int b = 0; b < TB__ROD_BINS; b++) {
        if (!n[b])
            return; /* a gap along the axis: pieces, not one rod */
        double tc = c[b][0] * ax[0] + c[b][1] * ax[1] + c[b][2] * ax[2];
        double e[3] = {c[b][0] - tc * ax[0], c[b][1] - tc * ax[1], c[b][2] - tc * ax[2]};
        double dv = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
        dev = dv > dev ? dv : dev;
        if (b > 0 && b < TB__ROD_BINS - 1) {
            rmin = r[b] < rmin ? r[b] : rmin;
            rmax = r[b] > rmax ? r[b] : rmax;
        }
    }
    *bow = (float)(dev / (tmax - tmin));
    *section = rmin > 0 ? (float)(rmax / rmin) : INFINITY;
}

/* Whether a shell's skin inside the body's band (not far) goes round a
 * bone: then that shell is a body part (a robot's pelvis piece a tail is
 * welded into, however small against the tail), not a tail's own shell
 * whose root is sunk into the body. */
static int tb__shell_band_wraps(const tb__state *st, uint32_t shell)
{
    size_t n = 0;
    for (uint32_t e = st->shell_off[shell]; e < st->shell_off[shell + 1]; e++)
        n += !st->far[st->shell_list[e]];
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return 0;
    n = 0;
    for (uint32_t e = st->shell_off[shell]; e < st->shell_off[shell + 1]; e++)
        if (!st->far[st->shell_list[e]])
            v[n++] = st->shell_list[e];
    int w = tb__wraps(st, v, n);
    free(v);
    return w;
}

/* The attachment joint of a list of vertices' centroid. */
static int tb__list_attach(const tb__state *st, const uint32_t *v, size_t n)
{
    float c[3] = {0, 0, 0};
    for (size_t k = 0; k < n; k++)
        for (int a = 0; a < 3; a++)
            c[a] += st->wpos[(size_t)v[k] * 3 + (size_t)a] / (float)n;
    return tb__attach_joint(st, c);
}

/* The bridges between the pieces of a group of several shells
 * (tb__bridges over j->wv, j->piece), made once into j->bridges: the root
 * search and the walk both cross them; freed with the job. */
static tb_result tb__an_bridges(tb__an_job *j, tb_error *err)
{
    if (j->ap->shell_count < 2 || j->bridged)
        return TB_OK;
    j->bridged = 1;
    return tb__bridges(j->st, j->wv, j->piece, j->nv, &j->bridges, err);
}

/* The root of a floating group is one of its ends. Its vertices nearest
 * the trunk stand in for a root (wc[0..*nc)), but a tail hanging against a
 * thigh of a body whose pelvis bone sits low (a robot's hips at crotch
 * height) is nearest the trunk halfway down. Geodesic double sweep over the
 * group (from the patch to the farthest vertex e1, from e1 to the farthest
 * e2: the two ends of a tube, bridges joining the shells of a group): each
 * end's root band is its vertices within 2% H of geodesic. When the patch
 * reaches neither band (it is not at an end, however near one), and the
 * end nearer the trunk is about as near it (within 1.5× `near`, the patch's
 * trunk distance: a tube hangs by an end), that end's band becomes the
 * root — when the patch lies mid-tube (more than 15% of the length from
 * both ends), or the band's centroid has the patch's attachment joint (a
 * patch near an end moves along the tube, not onto another body part) —
 * and *moved is set (rule 7's leave is then read from the patch, the
 * nearest the tube comes to the trunk). A carried object touching the hip
 * halfway along (a scabbard: its ends 3× farther from the trunk than its
 * middle) keeps its patch, as do groups the sweep does not reach whole.
 * g and allowed are scratch (allowed is left zero on wv). */
static tb_result tb__root_at_an_end(tb__an_job *j, float near, uint32_t *wc, size_t *nc, int *moved, tb_error *err)
{
    tb__state *st = j->st;
    const uint32_t *wv = j->wv;
    size_t nv = j->nv;
    float *g = j->g;
    uint8_t *allowed = j->allowed;
    *moved = 0;
    if (!*nc || nv < 8)
        return TB_OK;
    float *dp = malloc(nv * sizeof *dp);
    if (!dp)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* between the shells of a group (fur over a tail, pieces in a row):
     * kept in the job for the walk (tb__an_walk), over the same wv */
    tb_result r = tb__an_bridges(j, err);
    const tb__graph *extra = j->ap->shell_count > 1 ? &j->bridges : NULL;
    for (size_t k = 0; k < nv; k++)
        allowed[wv[k]] = 1, g[wv[k]] = INFINITY;
    for (size_t k = 0; k < *nc; k++)
        g[wc[k]] = 0;
    if (r == TB_OK)
        r = tb__dijkstra(g, &st->g, extra, st->wpos, wc, *nc, allowed, err);
    size_t e1 = 0, e2 = 0;
    int whole = r == TB_OK;
    for (size_t k = 0; whole && k < nv; k++) {
        dp[k] = g[wv[k]];
        whole = isfinite(dp[k]);
        e1 = dp[k] > dp[e1] ? k : e1;
    }
    if (whole) {
        for (size_t k = 0; k < nv; k++)
            g[wv[k]] = INFINITY;
        g[wv[e1]] = 0;
        r = tb__dijkstra(g, &st->g, extra, st->wpos, &wv[e1], 1, allowed, err);
        for (size_t k = 0; r == TB_OK && k < nv; k++)
            e2 = g[wv[k]] > g[wv[e2]] ? k : e2;
    }
    float L = whole && r == TB_OK ? g[wv[e2]] : 0;
    /* each end's trunk distance: its nearest vertex within the root band
     * (fur cards flare at an end: its extreme vertex stands off) */
    float band = 0.02f * st->H, t1 = INFINITY, t2 = INFINITY;
    for (size_t k = 0; L > 0 && k < nv; k++) {
        float gk = g[wv[k]]; /* geodesic from e1 */
        if (gk > band && gk < L - band)
            continue;
        float t = tb__trunk_dist(st, st->wpos + (size_t)wv[k] * 3);
        if (gk <= band)
            t1 = t < t1 ? t : t1;
        else
            t2 = t < t2 ? t : t2;
    }
    /* the patch at an end: it reaches that end's root band */
    float pmin = INFINITY, pmax = 0;
    for (size_t k = 0; L > 0 && k < *nc; k++) {
        pmin = g[wc[k]] < pmin ? g[wc[k]] : pmin;
        pmax = g[wc[k]] > pmax ? g[wc[k]] : pmax;
    }
    *moved = L > 0 && pmin > band && pmax < L - band && (t1 < t2 ? t1 : t2) <= 1.5f * near;
    int mid = L > 0 && dp[e1] > 0.15f * L && dp[e2] > 0.15f * L; /* mid-tube: moved whatever it meets */
    if (*moved) {
        /* along the tube to its end, never onto another body part: the
         * patch says what the tube hangs from (a horn's patch is on the
         * head; its far end may be nearer the neck) */
        int from = tb__list_attach(st, wc, *nc);
        size_t n = 0;
        uint32_t *end = malloc(nv * sizeof *end);
        for (size_t k = 0; end && k < nv; k++) /* g: geodesic from e1 */
            if (t1 <= t2 ? g[wv[k]] <= band : g[wv[k]] >= L - band)
                end[n++] = wv[k];
        if (!end)
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        *moved = end && n && (mid || tb__list_attach(st, end, n) == from);
        if (*moved)
            memcpy(wc, end, n * sizeof *wc), *nc = n;
        free(end);
    }
    for (size_t k = 0; k < nv; k++)
        allowed[wv[k]] = 0;
    free(dp);
    return r;
}

/* ---- gather: the group's pieces, its collar or root, the attachment ------ */

/* No piece touches the body: its vertices nearest the trunk (the pelvis and
 * spine bones) stand in for the collar — what hangs off the body hangs from
 * the trunk, even when its tip passes closer to a knee (SPEC A10); without
 * trunk bones, the vertices nearest the skeleton. */
static tb_result tb__an_floating_root(tb__an_job *j, tb_error *err)
{
    const tb__state *st = j->st;
    const uint32_t *wv = j->wv;
    size_t nv = j->nv, nc = j->nc;
    float *dt = malloc((nv ? nv : 1) * sizeof *dt);
    if (!dt)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    /* a separate shell sunk into the body: its part inside the body's
     * band (not far) nearest the trunk is its root — when that part is
     * at the end nearest the trunk; a shell that only passes through a
     * limb's band (a tail hanging against a thigh) is not sunk there */
    float dmin = INFINITY, dmin_in = INFINITY;
    for (size_t k = 0; k < nv; k++) {
        float dd = tb__trunk_dist(st, st->wpos + (size_t)wv[k] * 3);
        dt[k] = isfinite(dd) ? dd : st->wdist[wv[k]];
        dmin = dt[k] < dmin ? dt[k] : dmin;
        if (!st->far[wv[k]])
            dmin_in = dt[k] < dmin_in ? dt[k] : dmin_in;
    }
    int sunk = dmin_in <= dmin + 0.03f * st->H;
    if (sunk)
        dmin = dmin_in;
    float band = sunk ? 0.03f * st->H : 0.01f * st->H;
    for (size_t k = 0; k < nv; k++)
        if ((!sunk || !st->far[wv[k]]) && dt[k] <= dmin + band)
            j->wc[nc++] = wv[k];
    free(dt);
    tb_result r = tb__root_at_an_end(j, dmin, j->wc, &nc, &j->root_moved, err);
    j->near = dmin;
    j->nc = nc;
    return r;
}

tb_result tb__an_gather(tb__an_job *j, tb_error *err)
{
    tb__state *st = j->st;
    tb_appendage *ap = j->ap;
    int group = j->group;
    uint8_t *allowed = j->allowed;
    size_t nv = 0, nc = 0, nx = 0;
    for (size_t i = 0; i < st->ncomp; i++)
        if (st->comps[i].group == group) {
            nv += st->comps[i].nverts;
            nc += st->comps[i].ncollar;
            ap->shell_count++;
            if (st->comps[i].ncollar)
                nx += st->shell_total[st->comps[i].shell];
        }
    /* a group made only of detached, off-bone pieces (separate shells) is
     * taken whole: each piece's shell, its part inside the body's band too
     * (SPEC A10: a tail built as its own shell is all tail) */
    int detached = 1;
    for (size_t i = 0; i < st->ncomp; i++)
        if (st->comps[i].group == group)
            detached &= st->shell_total[st->comps[i].shell] - st->shell_far[st->comps[i].shell] <
                            st->comps[i].nverts &&
                        !tb__shell_band_wraps(st, st->comps[i].shell);
    if (detached)
        nv += nx;
    j->wv = malloc((nv ? nv : 1) * sizeof *j->wv);
    j->wc = malloc((nc + nv + 1) * sizeof *j->wc);
    j->src = malloc((nc + nx + nv + 1) * sizeof *j->src);
    j->piece = malloc((nv ? nv : 1) * sizeof *j->piece);
    if (!j->wv || !j->wc || !j->src || !j->piece)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    uint32_t *wv = j->wv, *wc = j->wc, *piece = j->piece;
    nv = nc = 0;
    for (size_t i = 0; i < st->ncomp; i++) {
        const tb__comp *c = &st->comps[i];
        if (c->group != group)
            continue;
        for (size_t k = 0; k < c->nverts; k++) {
            piece[nv] = (uint32_t)i;
            wv[nv++] = c->verts[k];
        }
        if (c->ncollar)
            memcpy(wc + nc, c->collar, c->ncollar * sizeof *wc);
        nc += c->ncollar;
        if (detached && c->ncollar)
            for (uint32_t e = st->shell_off[c->shell]; e < st->shell_off[c->shell + 1]; e++) {
                uint32_t w = st->shell_list[e];
                if (!st->far[w] && !allowed[w]) {
                    allowed[w] = 3; /* once; cleared below */
                    piece[nv] = (uint32_t)i;
                    wv[nv++] = w;
                }
            }
    }
    j->nv = nv;
    for (size_t k = 0; k < nv; k++)
        if (allowed[wv[k]] == 3)
            allowed[wv[k]] = 0;
    if (detached)
        nc = 0; /* its root: where it is nearest the trunk (below) */
    /* collars of merged parts may share vertices: count each once */
    nc = tb__sort_unique_ids(wc, nc);
    j->nc = nc;
    j->floating = nc == 0;
    if (j->floating) {
        tb_result r = tb__an_floating_root(j, err);
        if (r != TB_OK)
            return r;
    }
    nc = j->nc;
    ap->welded_count = nv;
    for (size_t k = 0; k < nc; k++)
        for (int a = 0; a < 3; a++)
            ap->attach_point[a] += st->wpos[(size_t)wc[k] * 3 + (size_t)a] / (float)nc;
    int attach = tb__attach_joint(st, ap->attach_point);
    ap->attach_joint = attach;
    tb__copy_name(ap->attach_name, sizeof ap->attach_name, st->m->skel.names[attach]);
    return TB_OK;
}

/* ---- measures: SPEC A5's centroid ratio and elongation -------------------- */

static void tb__an_measures(tb__an_job *j)
{
    const tb__state *st = j->st;
    tb_appendage *ap = j->ap;
    size_t nv = j->nv;
    const uint32_t *wv = j->wv;
    double *cen = j->cen;
    cen[0] = cen[1] = cen[2] = 0;
    for (size_t k = 0; k < nv; k++)
        for (int a = 0; a < 3; a++)
            cen[a] += st->wpos[(size_t)wv[k] * 3 + (size_t)a];
    for (int a = 0; a < 3; a++)
        cen[a] /= (double)nv;
    double cov[3][3] = {{0}}, rad = 0;
    for (size_t k = 0; k < nv; k++) {
        const float *p = st->wpos + (size_t)wv[k] * 3;
        double q[3] = {p[0] - cen[0], p[1] - cen[1], p[2] - cen[2]};
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                cov[a][b] += q[a] * q[b] / (double)nv;
        double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
        if (l > rad)
            rad = l;
    }
    double ev[3];
    tb__eig3(cov, ev, j->axis);
    ap->elongation = ev[1] > 0 ? (float)sqrt(ev[0] / ev[1]) : 1e3f;
    float *cf = j->cf;
    cf[0] = (float)cen[0], cf[1] = (float)cen[1], cf[2] = (float)cen[2];
    j->rad = rad;
    ap->radius = (float)rad;
    ap->centroid_ratio = rad > 0 ? tb__skeleton_dist(st->segs, st->nseg, cf) / (float)rad : 0;
}

/* The measures stage alone, on a job of the given welded vertices
 * (detect_internal.h; test_detect_stages). */
void tb__detect_measures(tb__state *st, const uint32_t *wv, size_t nv, tb_appendage *ap, double axis[3])
{
    tb__an_job j;
    memset(&j, 0, sizeof j);
    j.st = st;
    j.ap = ap;
    j.wv = (uint32_t *)wv; /* read only here */
    j.nv = nv;
    tb__an_measures(&j);
    memcpy(axis, j.axis, sizeof j.axis);
}

/* ---- geodesic: SPEC A9, the length, the chain joints and their rings ------ */

/* The geodesic's sources: the collar, and the whole non-far band of a
 * separate shell (choice: a shell whose non-far part is smaller than the
 * appendage is the tail's own, not the body). Marks the group's separate
 * pieces; sets j->ns. */
static void tb__an_sources(tb__an_job *j)
{
    tb__state *st = j->st;
    tb_appendage *ap = j->ap;
    size_t ns = 0;
    for (size_t k = 0; k < j->nc; k++)
        j->src[ns++] = j->wc[k];
    /* a floating group is made of whole shells: separate by construction */
    if (j->floating)
        ap->separate_shell = 1;
    for (size_t i = 0; i < st->ncomp && !j->floating; i++) {
        tb__comp *c = &st->comps[i];
        if (c->group != j->group) /* another group's (analysed at the same time, tb__analyse_all) */
            continue;
        c->separate = 0;
        if (!c->ncollar)
            continue;
        size_t nonfar = st->shell_total[c->shell] - st->shell_far[c->shell];
        if (nonfar >= j->nv || 2 * (double)st->shell_area[c->shell] > st->area_total ||
            tb__shell_band_wraps(st, c->shell))
            continue; /* the body's own shell (choice: never more than half the skin; a band round a bone) */
        int dup = 0; /* two pieces of one shell: its band once */
        for (size_t q = 0; q < i; q++)
            dup |= st->comps[q].group == j->group && st->comps[q].separate && st->comps[q].shell == c->shell;
        c->separate = 1;
        ap->separate_shell = 1;
        if (dup)
            continue;
        for (uint32_t e = st->shell_off[c->shell]; e < st->shell_off[c->shell + 1]; e++)
            if (!st->far[st->shell_list[e]])
                j->src[ns++] = st->shell_list[e];
    }
    j->ns = ns;
}

/* The walk g from the sources over the appendage (across bridges between
 * its pieces); pieces nothing reaches: straight-line distance from J_0.
 * Sorts wv. */
static tb_result tb__an_walk(tb__an_job *j, tb_error *err)
{
    tb__state *st = j->st;
    tb_appendage *ap = j->ap;
    size_t nv = j->nv, ns = j->ns;
    uint32_t *wv = j->wv, *src = j->src;
    float *g = j->g;
    for (size_t k = 0; k < nv; k++) {
        j->allowed[wv[k]] = 1;
        g[wv[k]] = INFINITY;
    }
    for (size_t k = 0; k < ns; k++) {
        j->allowed[src[k]] = 1;
        g[src[k]] = 0;
    }
    tb_result r = tb__an_bridges(j, err); /* wv and piece as the root search had them: not sorted yet */
    if (r == TB_OK)
        r = tb__dijkstra(g, &st->g, ap->shell_count > 1 ? &j->bridges : NULL, st->wpos, src, ns, j->allowed, err);
    tb__sort_u32(wv, nv);
    if (r != TB_OK)
        return r;
    for (size_t k = 0; k < nv; k++)
        if (!isfinite(g[wv[k]])) {
            const float *p = st->wpos + (size_t)wv[k] * 3;
            float dx = p[0] - ap->attach_point[0], dy = p[1] - ap->attach_point[1], dz = p[2] - ap->attach_point[2];
            g[wv[k]] = sqrtf(dx * dx + dy * dy + dz * dz);
        }
    return TB_OK;
}

/* SPEC A9's length: the length_percentile of the walk over the appendage. */
static tb_result tb__an_length(tb__an_job *j, tb_error *err)
{
    size_t nv = j->nv;
    float *gs = malloc((nv ? nv : 1) * sizeof *gs);
    if (!gs)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t k = 0; k < nv; k++)
        gs[k] = j->g[j->wv[k]];
    size_t at = (size_t)floor((double)j->st->d.length_percentile * (double)(nv - 1) + 0.5);
    j->ap->length = nv ? tb__kth_float(gs, nv, at < nv ? at : nv - 1) : 0; /* none: a group has vertices */
    free(gs);
    return TB_OK;
}

/* SPEC A9's K and chain joints with their rings; A10's slenderness and
 * flatness, and how far the chain leaves the trunk. */
static void tb__an_chain(tb__an_job *j)
{
    tb__state *st = j->st;
    const tb_appendage_desc *d = &st->d;
    tb_appendage *ap = j->ap;
    int K = (int)lroundf(ap->length / (d->segment_fraction * st->H));
    K = K < d->min_bones ? d->min_bones : K > d->max_bones ? d->max_bones : K;
    j->K = K;
    float *radius = j->radius;
    memset(j->radius, 0, sizeof j->radius);
    j->flat = 1;
    if (ap->length > 0)
        tb__chain_joints(st, j->wv, j->nv, j->g, ap->length, K, ap->attach_point, ap->chain_joints, radius, &j->flat);
    /* SPEC A10: long = a tube much longer than it is thick, however it curls
     * (a curled tail's covariance is round); a sheet (cape) is never a tube */
    double rsum = 0;
    int rn = 0;
    for (int i = 1; i <= K; i++)
        if (radius[i] > 0)
            rsum += radius[i], rn++;
    ap->slenderness = rn && rsum > 0 ? (float)(ap->length / (2 * rsum / rn)) : 0;
    ap->flatness = j->flat;
    /* how far the chain leaves the trunk, root to tip, per unit length:
     * from where the root leaves the body (its vertex nearest the trunk:
     * fur flaring at a root stands off) to the tip joint; a floating tube
     * whose root was moved to its end: from its patch nearest the trunk,
     * where it comes nearest (a robot's low hips bone: along the tail) */
    float d0 = tb__trunk_dist(st, ap->chain_joints[0]), dk = tb__trunk_dist(st, ap->chain_joints[K]);
    for (size_t k = 0; k < j->ns; k++) {
        float t = tb__trunk_dist(st, st->wpos + (size_t)j->src[k] * 3);
        d0 = t < d0 ? t : d0;
    }
    if (j->root_moved)
        d0 = j->near < d0 ? j->near : d0;
    ap->leave = ap->length > 0 && isfinite(d0) && isfinite(dk) ? (dk - d0) / ap->length : 0;
}

/* Stages: the sources; the walk; the length; the chain. */
tb_result tb__an_geodesic(tb__an_job *j, tb_error *err)
{
    tb__an_sources(j);
    tb_result r = tb__an_walk(j, err);
    if (r == TB_OK)
        r = tb__an_length(j, err);
    if (r == TB_OK)
        tb__an_chain(j);
    return r;
}

/* A sheet (cape, plate): its section is flat and it is not much longer than
 * that section is wide. Long: elongated or slender, and not a sheet. */
static int tb__an_long(const tb__app_measures *ms, const tb_appendage_desc *d, int *sheet)
{
    *sheet = ms->flatness >= d->flat_max && ms->slenderness < d->slender_min;
    return (ms->elongation >= d->elongation_min || ms->slenderness >= d->slender_min) && !*sheet;
}

/* ---- the measures row that classify reads ---------------------------------- */

static void tb__an_row(const tb__an_job *j, tb__app_measures *ms)
{
    const tb__state *st = j->st;
    const tb_model *m = st->m;
    const tb_appendage *ap = j->ap;
    const uint32_t *wv = j->wv;
    size_t nv = j->nv;
    int K = j->K;
    /* the appendage's own measures, the rest zero */
    *ms = (tb__app_measures){.H = st->H, .attach = ap->attach_joint, .cls = st->cls[ap->attach_joint],
                             .pelvis = st->pelvis, .separate_shell = ap->separate_shell,
                             .shell_count = ap->shell_count, .vertex_count = nv, .elongation = ap->elongation,
                             .slenderness = ap->slenderness, .flatness = ap->flatness, .length = ap->length,
                             .leave = ap->leave, .centroid_ratio = ap->centroid_ratio, .K = K,
                             .rod_extent = 0, .rod_bow = 1, .rod_section = INFINITY};
    snprintf(ms->attach_name, sizeof ms->attach_name, "%s", ap->attach_name);
    tb__trunk_nearest(st, ap->attach_point, &ms->trunk_joint);
    if (ms->trunk_joint >= 0)
        tb__copy_name(ms->trunk_name, sizeof ms->trunk_name, m->skel.names[ms->trunk_joint]);
    int sheet;
    if (tb__an_long(ms, &st->d, &sheet) && ap->separate_shell)
        tb__rod(st->wpos, wv, nv, j->cen, j->axis, &ms->rod_extent, &ms->rod_bow, &ms->rod_section);
    /* (choice) a curved tail's centroid falls inside its curve, near the
     * legs; its chain joints do not: far skin wrapping a bone has its ring
     * centroids on the bone. The better of the two ratios is tested. */
    if (ap->length > 0) {
        double sd = 0;
        for (int i = 1; i <= K; i++)
            sd += tb__skeleton_dist(st->segs, st->nseg, ap->chain_joints[i]);
        ms->standoff_ratio = j->rad > 0 ? (float)(sd / K / j->rad) : 0;
    }
    const float *hp = tb__jpos(m, st->pelvis);
    {
        /* the character's own axes (a model may face -Z) */
        const float *cf = j->cf;
        float d3[3] = {cf[0] - hp[0], cf[1] - hp[1], cf[2] - hp[2]}, side[3] = {
            st->up[1] * st->fwd[2] - st->up[2] * st->fwd[1], st->up[2] * st->fwd[0] - st->up[0] * st->fwd[2],
            st->up[0] * st->fwd[1] - st->up[1] * st->fwd[0]};
        ms->lateral = fabsf(d3[0] * side[0] + d3[1] * side[1] + d3[2] * side[2]) / st->H;
    }
    /* SPEC A10: skin whose cross-section holds no bone (a tube hanging beside
     * a leg) is an appendage wherever its centroid falls */
    for (size_t k = 0; k < nv; k++)
        ms->thin_count += st->thin[wv[k]];
    for (size_t k = 0; k < nv; k++)
        ms->far_area += st->warea[wv[k]];
    ms->area_total = st->area_total;
    /* asked only where it decides (the far area test comes first) */
    ms->wraps = 2 * ms->far_area > ms->area_total ? 0 : tb__wraps(st, wv, nv);
    /* SPEC A7, beyond the article: the signs of a tail on the spine */
    const float(*Jc)[3] = ap->chain_joints;
    const float *radius = j->radius;
    ms->taper = radius[1] > 0 ? radius[K - 1 > 1 ? K - 1 : 1] / radius[1] : 1;
    float chord[3] = {Jc[K][0] - Jc[0][0], Jc[K][1] - Jc[0][1], Jc[K][2] - Jc[0][2]};
    float cl2 = chord[0] * chord[0] + chord[1] * chord[1] + chord[2] * chord[2];
    float bend = 0;
    for (int i = 1; i < K; i++) {
        float q[3] = {Jc[i][0] - Jc[0][0], Jc[i][1] - Jc[0][1], Jc[i][2] - Jc[0][2]};
        float t = cl2 > 0 ? (q[0] * chord[0] + q[1] * chord[1] + q[2] * chord[2]) / cl2 : 0;
        float e[3] = {q[0] - t * chord[0], q[1] - t * chord[1], q[2] - t * chord[2]};
        float dev = sqrtf(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
        if (dev > bend)
            bend = dev;
    }
    ms->bend = ap->length > 0 ? bend / ap->length : 0;
    float tip[3] = {hp[0] - Jc[K][0], hp[1] - Jc[K][1], hp[2] - Jc[K][2]};
    float below = tip[0] * st->up[0] + tip[1] * st->up[1] + tip[2] * st->up[2];
    float behind = tip[0] * st->fwd[0] + tip[1] * st->fwd[1] + tip[2] * st->fwd[2];
    ms->reach = (below > behind ? below : behind) / st->H;
}

/* ---- classify: SPEC A7 and A10 on the measures row ------------------------- */

/* A long appendage on the pelvis that leaves the body: a tail. */
static void tb__classify_on_pelvis(const tb__app_measures *ms, const tb_appendage_desc *d, tb__app_class *out)
{
    out->kind = TB_KIND_TAIL;
    out->parent_joint = ms->pelvis;
    char off_bone[96]; /* which half of the A5 (1) test passed */
    if (ms->centroid_ratio >= d->centroid_ratio_min)
        snprintf(off_bone, sizeof off_bone, "centroid ratio %.2f >= %.2f", ms->centroid_ratio, d->centroid_ratio_min);
    else if (ms->standoff_ratio >= d->centroid_ratio_min)
        snprintf(off_bone, sizeof off_bone, "chain standoff %.2f >= %.2f", ms->standoff_ratio, d->centroid_ratio_min);
    else
        snprintf(off_bone, sizeof off_bone, "a separate shell (centroid ratio %.2f)", ms->centroid_ratio);
    char long_[64]; /* which half of the long test passed (tb__an_long) */
    if (ms->elongation >= d->elongation_min)
        snprintf(long_, sizeof long_, "elongation %.2f >= %.2f", ms->elongation, d->elongation_min);
    else
        snprintf(long_, sizeof long_, "slenderness %.1f >= %.1f (elongation %.2f)", ms->slenderness, d->slender_min,
                 ms->elongation);
    snprintf(out->reason, sizeof out->reason, "%s, %s, on the pelvis (%s): tail", long_, off_bone, ms->attach_name);
}

/* SPEC A7, beyond the article: a long appendage on the spine, a tail or a
 * carried object, by its signs. (A10) a fourth sign: it hangs free, its tip
 * well away from the trunk (a bead chain leaving the back), where a carried
 * object lies along the body. */
static void tb__classify_on_spine(const tb__app_measures *ms, const tb_appendage_desc *d, tb__app_class *out)
{
    char *why = out->reason;
    size_t wn = sizeof out->reason;
    out->spine_signs = 1;
    int votes = (ms->taper < d->tail_taper_max) + (ms->bend > d->tail_bend_min) + (ms->reach > d->tail_reach_min) +
                (ms->leave > 2 * d->leave_min);
    int midline = ms->lateral <= d->tail_lateral_max; /* wings come off the side */
    out->parent_joint = ms->attach;
    if (votes >= 2 && midline) {
        out->kind = TB_KIND_TAIL;
        snprintf(why, wn,
                 "elongation %.2f on the spine (%s); taper %.2f, bend %.2f, reach %.2f, leave %.2f: %d of 4 tail "
                 "signs: tail",
                 ms->elongation, ms->attach_name, ms->taper, ms->bend, ms->reach, ms->leave, votes);
    } else {
        out->kind = TB_KIND_CARRIED;
        out->decision = TB_DECIDE_RIGID;
        snprintf(why, wn,
                 "elongation %.2f on the spine (%s); taper %.2f, bend %.2f, reach %.2f, leave %.2f: %d of 4 tail "
                 "signs%s: carried, rigid on %s",
                 ms->elongation, ms->attach_name, ms->taper, ms->bend, ms->reach, ms->leave, votes,
                 midline ? "" : ", off the midline", ms->attach_name);
    }
}

/* SPEC A7: a carried object (scabbard, quiver, strap) is one rigid shell,
 * straight, of nearly constant section, lying along the trunk instead of
 * leaving it (A10's leave) (the A7 tail signs taper and bend, read the
 * other way). */
static int tb__is_carried_rod(const tb__app_measures *ms, const tb_appendage_desc *d)
{
    return ms->separate_shell && ms->shell_count == 1 && ms->rod_extent >= d->tail_length_min * ms->H &&
           ms->rod_bow <= d->tail_bend_min && ms->rod_section * d->tail_taper_max <= 1 && ms->leave < d->leave_min;
}

/* A carried rod: rigid on the trunk bone it crosses. */
static void tb__classify_carried_rod(const tb__app_measures *ms, const tb_appendage_desc *d, tb__app_class *out)
{
    const char *attach_name = ms->attach_name;
    if (ms->trunk_joint >= 0) {
        out->attach_joint = ms->trunk_joint;
        attach_name = ms->trunk_name;
    }
    out->kind = TB_KIND_CARRIED;
    out->decision = TB_DECIDE_RIGID;
    out->parent_joint = out->attach_joint;
    snprintf(out->reason, sizeof out->reason,
             "a separate straight rod %.3g long (bow %.2f <= %.2f, section ratio %.2f <= %.2f) lying along the "
             "trunk (leave %.2f): carried, rigid on %s",
             ms->rod_extent, ms->rod_bow, d->tail_bend_min, ms->rod_section, 1 / d->tail_taper_max, ms->leave,
             attach_name);
}

/* Not long (or a sheet) on the trunk: wide (cape, skirt), untouched unless
 * asked to bind it rigidly. */
static void tb__classify_wide(const tb__app_measures *ms, const tb_appendage_desc *d, int sheet, tb__app_class *out)
{
    const char *what = sheet ? "a sheet" : "not long", *cls = tb_role_class_name(ms->cls);
    out->kind = TB_KIND_WIDE;
    if (d->rigid_wide) {
        out->decision = TB_DECIDE_RIGID;
        out->parent_joint = ms->attach;
        snprintf(out->reason, sizeof out->reason,
                 "%s (elongation %.2f, slenderness %.1f) on the %s (%s): wide; bound rigidly on request", what,
                 ms->elongation, ms->slenderness, cls, ms->attach_name);
    } else {
        snprintf(out->reason, sizeof out->reason,
                 "%s (elongation %.2f, slenderness %.1f, section flatness %.1f) on the %s (%s): wide (cape, "
                 "skirt), untouched by default", what, ms->elongation, ms->slenderness, ms->flatness, cls,
                 ms->attach_name);
    }
}

void tb__classify(const tb__app_measures *ms, const tb_appendage_desc *d, tb__app_class *out)
{
    memset(out, 0, sizeof *out);
    out->parent_joint = -1;
    out->attach_joint = ms->attach;
    tb_role_class cls = ms->cls;
    int sheet;
    int long_ = tb__an_long(ms, d, &sheet);
    char *why = out->reason;
    size_t wn = sizeof out->reason;
    const char *attach_name = ms->attach_name;
    float ratio = ms->centroid_ratio > ms->standoff_ratio ? ms->centroid_ratio : ms->standoff_ratio;
    size_t nv = ms->vertex_count;
    if (2 * ms->far_area > ms->area_total) {
        /* (choice) an appendage is never most of the skin (by area, not by
         * vertex count: a dense tail on a low-poly body is still a tail): a
         * body thicker than the far threshold all round (a quadruped's trunk
         * against a height H meant for humanoids) must not be rebound. The
         * test is about far skin of the body's own surface; a separate shell
         * that is mostly far (a garment, a strapped-on object) is not body
         * skin even when it wraps or crosses a bone */
        out->kind = TB_KIND_BODY;
        snprintf(why, wn, "far skin is %.0f%% of the skin's area (more than half): the body itself, "
                 "thicker than %.0f%% of H, not an appendage", 100.0 * ms->far_area / ms->area_total,
                 100.0 * (double)d->far_fraction);
    } else if (ms->wraps) {
        /* SPEC A10: skin that goes around a bone is body or clothing, whatever
         * its shell (a coat, a belt of pouches, a plate round the pelvis) */
        out->kind = TB_KIND_BODY;
        snprintf(why, wn, "goes more than %.0f deg around a bone: body or clothing, not an appendage",
                 (double)d->wrap_min_deg);
    } else if (ratio < d->centroid_ratio_min && !ms->separate_shell && 2 * ms->thin_count < nv) {
        out->kind = TB_KIND_BODY;
        snprintf(why, wn, "centroid ratio %.2f and chain standoff %.2f < %.2f: far skin around a bone (body)",
                 ms->centroid_ratio, ms->standoff_ratio, d->centroid_ratio_min);
    } else if (cls == TB_CLASS_HEAD) {
        out->kind = TB_KIND_HEAD;
        snprintf(why, wn, "on the head (%s): ears and hair stay with the head", attach_name);
    } else if (cls == TB_CLASS_ARM || cls == TB_CLASS_LOWER_LIMB || cls == TB_CLASS_THIGH) {
        out->kind = TB_KIND_LIMB;
        snprintf(why, wn, "on a limb (%s, %s): left as rigged", attach_name, tb_role_class_name(cls));
    } else if (cls != TB_CLASS_PELVIS && cls != TB_CLASS_SPINE) {
        out->kind = TB_KIND_OTHER;
        snprintf(why, wn, "attached to %s, a joint of no known class: left as rigged", attach_name);
    } else if (long_ && tb__is_carried_rod(ms, d)) {
        tb__classify_carried_rod(ms, d, out);
    } else if (long_ && ms->length < d->tail_length_min * ms->H) {
        out->kind = TB_KIND_SHORT;
        snprintf(why, wn, "elongation %.2f but length L %.3g < %.2f H: too short for bones (pouch, spike)",
                 ms->elongation, ms->length, d->tail_length_min);
    } else if (!long_) {
        tb__classify_wide(ms, d, sheet, out);
    } else if (ms->leave < d->leave_min) {
        /* SPEC A10: a tail leaves the body; what runs along it at one
         * distance (a belt of pouches, a strap, a scabbard at the hip) is
         * worn: binding it is a change to the character on a guess (as a
         * cape's, SPEC A7), so it is left as rigged */
        out->kind = TB_KIND_WIDE;
        snprintf(why, wn, "long (elongation %.2f, slenderness %.1f) but its tip is only %.2f L further from the trunk "
                 "than its root (< %.2f): worn along the body, untouched", ms->elongation, ms->slenderness, ms->leave,
                 d->leave_min);
    } else if (cls == TB_CLASS_PELVIS) {
        tb__classify_on_pelvis(ms, d, out);
    } else {
        tb__classify_on_spine(ms, d, out);
    }
    if (out->kind == TB_KIND_TAIL) {
        out->decision = d->mode == TB_FIX_RIGID ? TB_DECIDE_RIGID : TB_DECIDE_CHAIN;
        if (out->decision == TB_DECIDE_CHAIN)
            out->bone_count = ms->K;
    }
}

/* The answer into the report and the work */
static void tb__an_apply(tb__an_job *j, const tb__app_measures *ms, const tb__app_class *c)
{
    const tb_model *m = j->st->m;
    tb_appendage *ap = j->ap;
    ap->standoff_ratio = ms->standoff_ratio;
    ap->lateral = ms->lateral;
    ap->kind = c->kind;
    ap->decision = c->decision;
    ap->bone_count = c->bone_count;
    j->aw->parent_joint = c->parent_joint;
    if (c->attach_joint != ap->attach_joint) {
        ap->attach_joint = c->attach_joint;
        tb__copy_name(ap->attach_name, sizeof ap->attach_name, m->skel.names[c->attach_joint]);
    }
    if (c->spine_signs) {
        ap->taper = ms->taper;
        ap->bend = ms->bend;
        ap->reach = ms->reach;
    }
    memcpy(ap->reason, c->reason, sizeof ap->reason);
    if (ap->kind == TB_KIND_TAIL || ap->decision == TB_DECIDE_RIGID)
        tb__copy_name(ap->chain_parent, sizeof ap->chain_parent, m->skel.names[c->parent_joint]);
    if (ap->decision != TB_DECIDE_CHAIN)
        memset(ap->chain_joints, 0, sizeof ap->chain_joints);
}

/* ---- lists: the model vertices to reweight, their pieces, the collar ------ */

tb_result tb__an_lists(tb__an_job *j, tb_error *err)
{
    tb__state *st = j->st;
    tb_appendage *ap = j->ap;
    tb__app_work *aw = j->aw;
    size_t nv = j->nv, ns = j->ns, nc = j->nc;
    const uint32_t *wv = j->wv, *src = j->src, *wc = j->wc;
    uint8_t *allowed = j->allowed;
    /* the far component, plus the rest of a separate shell */
    size_t cnt = 0;
    for (size_t k = 0; k < nv; k++)
        cnt += st->model_off[wv[k] + 1] - st->model_off[wv[k]];
    size_t extra = 0;
    for (size_t k = 0; k < ns; k++)
        if (!st->far[src[k]] && ap->separate_shell)
            extra += st->model_off[src[k] + 1] - st->model_off[src[k]];
    ap->vertices = malloc((cnt + extra + 1) * sizeof *ap->vertices);
    aw->rw_verts = malloc((cnt + extra + 1) * sizeof *aw->rw_verts);
    aw->rw_g = malloc((cnt + extra + 1) * sizeof *aw->rw_g);
    aw->rw_piece = malloc((cnt + extra + 1) * sizeof *aw->rw_piece);
    if (!ap->vertices || !aw->rw_verts || !aw->rw_g || !aw->rw_piece)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    size_t q = 0;
    for (size_t k = 0; k < nv; k++)
        for (uint32_t e = st->model_off[wv[k]]; e < st->model_off[wv[k] + 1]; e++)
            ap->vertices[q++] = st->model_list[e];
    /* separate shell: its non-far band is reweighted too (g = 0) */
    for (size_t i = 0; i < st->ncomp && ap->separate_shell; i++) {
        const tb__comp *c = &st->comps[i];
        if (c->group != j->group || !c->separate)
            continue;
        for (size_t k = 0; k < ns; k++) {
            uint32_t w = src[k];
            if (st->far[w] || st->shell[w] != c->shell || allowed[w] != 1)
                continue;
            allowed[w] = 2; /* once */
            for (uint32_t e = st->model_off[w]; e < st->model_off[w + 1]; e++)
                ap->vertices[q++] = st->model_list[e];
        }
    }
    tb__sort_u32(ap->vertices, q);
    ap->vertex_count = q;
    aw->rw_count = q;
    for (size_t k = 0; k < q; k++) {
        aw->rw_verts[k] = ap->vertices[k];
        aw->rw_g[k] = j->g[st->wid[ap->vertices[k]]];
        if (!isfinite(aw->rw_g[k]))
            aw->rw_g[k] = 0;
    }
    tb_result r = tb__number_pieces(st, aw, err);
    aw->collar = malloc((nc + 1) * sizeof *aw->collar);
    if (r == TB_OK && !aw->collar)
        r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (size_t k = 0; aw->collar && k < nc; k++)
        aw->collar[aw->collar_count++] = st->model_list[st->model_off[wc[k]]];
    ap->piece_count = aw->piece_count;
    ap->pieces_cover = q > 0;
    for (size_t k = 0; k < q; k++)
        ap->pieces_cover &= aw->rw_piece[k] != TB__NO_PIECE;
    ap->distance_before = tb_weighted_bone_distance(st->m, ap->vertices, q, st->d.extension_fraction);
    ap->distance_after = ap->distance_before;
    return r;
}

/* Everything about one merged appendage, into ap and aw (zeroed, chain and
 * parent joint -1): the stages above, in order. g (per welded id, INFINITY)
 * and allowed (per welded id, 0) are scratch, left as they were found. */
static tb_result tb__analyse(tb__state *st, tb_appendage *ap, tb__app_work *aw, int group, float *g,
                             uint8_t *allowed, tb_error *err)
{
    tb__an_job j;
    memset(&j, 0, sizeof j);
    j.st = st;
    j.group = group;
    j.g = g;
    j.allowed = allowed;
    j.ap = ap;
    j.aw = aw;
    tb_result r = tb__an_gather(&j, err);
    if (r == TB_OK) {
        tb__an_measures(&j);
        r = tb__an_geodesic(&j, err);
    }
    if (r == TB_OK) {
        tb__app_measures ms;
        tb__app_class c;
        tb__an_row(&j, &ms);
        tb__classify(&ms, &st->d, &c);
        tb__an_apply(&j, &ms, &c);
        r = tb__an_lists(&j, err);
    }
    /* restore the scratch arrays for the next group */
    for (size_t k = 0; j.wv && k < j.nv; k++)
        allowed[j.wv[k]] = 0;
    for (size_t k = 0; j.src && k < j.ns; k++)
        allowed[j.src[k]] = 0;
    free(j.wv);
    free(j.wc);
    free(j.src);
    free(j.piece);
    tb__graph_free(&j.bridges);
    return r;
}

/* The groups' analyses as tasks (tb__analyse_all). */
typedef struct tb__an_all {
    tb__state *st;
    tb_appendage_report *out;
    tb__detect_work *work;
    const int *group;  /* per slot: its group */
    const int *order;  /* per task: its slot, the largest groups first */
    float **g;         /* per thread: its scratch, made for its first group */
    uint8_t **allowed;
    tb_result *r;      /* per slot */
    tb_error *err;
} tb__an_all;

static void tb__an_task(void *c, int task, int worker)
{
    tb__an_all *A = c;
    tb__state *st = A->st;
    int s = A->order[task];
    if (!A->g[worker]) {
        float *g = malloc((st->nw ? st->nw : 1) * sizeof *g);
        uint8_t *allowed = calloc(st->nw ? st->nw : 1, 1);
        if (!g || !allowed) {
            free(g);
            free(allowed);
            A->r[s] = tb__fail(&A->err[s], TB_ERR_OOM, NULL, NULL);
            return;
        }
        for (size_t w = 0; w < st->nw; w++)
            g[w] = INFINITY;
        A->g[worker] = g, A->allowed[worker] = allowed;
    }
    tb_appendage *ap = &A->out->appendages[s];
    tb__app_work *aw = &A->work->apps[s];
    ap->chain = -1;
    aw->parent_joint = -1;
    A->r[s] = tb__analyse(st, ap, aw, A->group[s], A->g[worker], A->allowed[worker], &A->err[s]);
}

/* Per merged group of at least min_vertices (the others are ignored
 * islands), in the order of their roots: its appendage, each in its own
 * slot of the report, the groups on the state's threads at once (their
 * scratch per thread; tb__wraps no longer writes what it finds). The same
 * report for any thread count; the first failing group's error. */
static tb_result tb__analyse_all(tb__state *st, tb_appendage_report *out, tb__detect_work *work, tb_error *err)
{
    size_t nc = st->ncomp;
    int threads = st->nw < 2048 ? 1 : st->d.threads > 0 ? st->d.threads : tb__cpu_count();
    size_t *gsize = calloc(nc + 1, sizeof *gsize);
    int *group = malloc((nc + 1) * sizeof *group), *order = malloc((nc + 1) * sizeof *order);
    tb__an_all A = {st, out, work, group, order, calloc((size_t)threads, sizeof(float *)),
                    calloc((size_t)threads, sizeof(uint8_t *)), malloc((nc + 1) * sizeof(tb_result)),
                    calloc(nc + 1, sizeof(tb_error))};
    tb_result r = gsize && group && order && A.g && A.allowed && A.r && A.err ? TB_OK
                                                                               : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    int n = 0;
    for (size_t i = 0; r == TB_OK && i < nc; i++)
        gsize[st->comps[i].group] += st->comps[i].nverts;
    for (size_t i = 0; r == TB_OK && i < nc; i++) {
        if (st->comps[i].group != (int)i)
            continue;
        if (gsize[i] < (size_t)st->d.min_vertices)
            out->ignored_islands++;
        else
            group[n++] = (int)i;
    }
    if (r == TB_OK) {
        out->appendages = calloc((size_t)n + 1, sizeof *out->appendages);
        work->apps = calloc((size_t)n + 1, sizeof *work->apps);
        if (!out->appendages || !work->apps)
            r = tb__fail(err, TB_ERR_OOM, NULL, NULL);
        else
            out->appendage_count = work->count = n;
    }
    /* the largest first (insertion: a few dozen groups), ties in slot order */
    for (int k = 0; r == TB_OK && k < n; k++) {
        int q = k;
        for (; q > 0 && gsize[group[order[q - 1]]] < gsize[group[k]]; q--)
            order[q] = order[q - 1];
        order[q] = k;
    }
    if (r == TB_OK) {
        st->wrap_frozen = 1;
        tb__st_for(st, threads, n, tb__an_task, &A);
    }
    for (int k = 0; r == TB_OK && k < n; k++)
        if (A.r[k] != TB_OK) {
            r = A.r[k];
            if (err)
                *err = A.err[k];
        }
    for (int t = 0; t < threads && A.g; t++)
        free(A.g[t]);
    for (int t = 0; t < threads && A.allowed; t++)
        free(A.allowed[t]);
    free(A.g), free(A.allowed), free(A.r), free(A.err), free(gsize), free(group), free(order);
    return r;
}

/* How the rigger skinned the rest of the body: the fraction of the skin's
 * vertices outside every appendage whose weight is all (>= 0.99) on one
 * joint. Near 1 for characters built from rigid pieces. */
static tb_result tb__body_style(tb_appendage_report *out, const tb_model *m, tb_error *err)
{
    uint8_t *in_app = calloc(m->vertex_count + 1, 1);
    if (!in_app)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    for (int i = 0; i < out->appendage_count; i++)
        for (size_t k = 0; k < out->appendages[i].vertex_count; k++)
            in_app[out->appendages[i].vertices[k]] = 1;
    size_t body = 0, single = 0;
    for (size_t v = 0; v < m->vertex_count; v++) {
        if (in_app[v])
            continue;
        const float *w = m->weights + v * (size_t)m->influences;
        double sum = 0, top = 0;
        for (int k = 0; k < m->influences; k++)
            if (w[k] > 0) {
                sum += w[k];
                top = w[k] > top ? w[k] : top;
            }
        if (!(sum > 0))
            continue;
        body++;
        single += top >= 0.99 * sum;
    }
    out->body_single_bone = body ? (float)((double)single / (double)body) : 0;
    free(in_app);
    return TB_OK;
}

static tb_result tb__detect_run(tb_appendage_report *out, tb__detect_work *work, const tb_model *m,
                                uint32_t *spare_tris, const tb_appendage_desc *resolved,
                                const tb__side_task *side, tb_error *err)
{
    memset(out, 0, sizeof *out);
    memset(work, 0, sizeof *work);
    tb__state st;
    memset(&st, 0, sizeof st);
    st.m = m;
    st.spare_tris = spare_tris;
    st.side = side;
    st.d = *resolved;
    st.H = m->height;
    out->skin = m->skin;
    out->height = m->height;
    out->vertex_count = m->vertex_count;
    st.pelvis = st.d.pelvis_joint ? tb__joint_by_name(m, st.d.pelvis_joint) : m->role_joint[TB_ROLE_HIPS];
    if (st.pelvis < 0 || !m->skel.has_ibm[st.pelvis]) {
        if (st.d.pelvis_joint)
            return tb__fail(err, TB_ERR_NO_HIPS, "tb_appendage_desc.pelvis_joint",
                            "no skin joint named '%s'", st.d.pelvis_joint);
        return tb__fail(err, TB_ERR_NO_HIPS, NULL,
                        "no joint is recognised as the hips: name the pelvis joint (--pelvis NAME)");
    }
    out->pelvis_joint = st.pelvis;
    for (int ro = 1; ro < TB_ROLE_COUNT; ro++) {
        int j = m->role_joint[ro];
        if (j < 0)
            continue;
        out->roles[out->role_count].role = (tb_role)ro;
        tb__copy_name(out->roles[out->role_count].joint, sizeof out->roles[0].joint, m->skel.names[j]);
        out->roles[out->role_count].source = m->role_source ? m->role_source[j] : TB_ROLE_SRC_NAME;
        out->role_count++;
    }
    tb__copy_name(out->pelvis_name, sizeof out->pelvis_name, m->skel.names[st.pelvis]);
    /* the chains (0..25: Tail_, TailB_ .. TailZ_) with a joint of their name */
    uint8_t chain_seen[26] = {0};
    for (int j = 0; j < m->skel.joint_count; j++) {
        int c, i;
        if (tb_tail_name_parse(m->skel.names[j], &c, &i) && c >= 0 && c < 26 && !chain_seen[c]) {
            chain_seen[c] = 1;
            out->existing_chains++;
        }
    }
    st.ms = out->stage_ms;
    /* the workers start now, while the serial setup and the weld run */
    if (m->vertex_count >= 512)
        st.team = tb__team_start(st.d.threads > 0 ? st.d.threads : tb__cpu_count());
    tb_model_axes(m, st.up, st.fwd);
    tb_result r = tb__trunk_segs(&st) ? tb__detect_prepare(&st, err) : tb__fail(err, TB_ERR_OOM, NULL, NULL);
    double t = tb__now_ms();
    if (r == TB_OK) {
        out->welded_count = st.nw;
        for (size_t w = 0; w < st.nw; w++)
            out->far_count += st.far[w];
        r = tb__detect_components(&st, err);
    }
    out->stage_ms[3] = tb__now_ms() - t;
    t = tb__now_ms();
    if (r == TB_OK)
        r = tb__detect_merge(&st, err);
    out->stage_ms[4] = tb__now_ms() - t;
    t = tb__now_ms();
    if (r == TB_OK)
        r = tb__analyse_all(&st, out, work, err);
    out->stage_ms[5] = tb__now_ms() - t;
    if (r == TB_OK)
        r = tb__body_style(out, m, err);
    tb__team_stop(st.team);
    tb__state_free(&st);
    if (r != TB_OK) {
        tb_appendage_report_free(out);
        tb__detect_work_free(work);
    }
    return r;
}

tb_result tb__appendage_detect(tb_appendage_report *out, tb__detect_work *work, const tb_model *m,
                               const tb_appendage_desc *resolved, tb_error *err)
{
    return tb__detect_run(out, work, m, NULL, resolved, NULL, err);
}

tb_result tb__appendage_detect_taking(tb_appendage_report *out, tb__detect_work *work, tb_model *m,
                                      const tb_appendage_desc *resolved, const tb__side_task *side,
                                      tb_error *err)
{
    tb_result r = tb__detect_run(out, work, m, m->triangles, resolved, side, err);
    free(m->triangles); /* written over: given back at once */
    m->triangles = NULL;
    m->triangle_count = 0;
    return r;
}

tb_result tb_appendage_detect(tb_appendage_report *out, const tb_model *m, const tb_appendage_desc *desc,
                              tb_error *err)
{
    if (!out || !m) {
        if (out)
            memset(out, 0, sizeof *out);
        return tb__fail(err, TB_ERR_ARG, NULL, "tb_appendage_detect needs a report and a model");
    }
    tb_appendage_desc d = tb_appendage_defaults(desc);
    tb__detect_work work;
    tb_result r = tb__appendage_detect(out, &work, m, &d, err);
    tb__detect_work_free(&work);
    return r;
}

