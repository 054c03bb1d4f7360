/* Tail chains a skeleton already has (tailbone/tailchain.h). */
#include <ctype.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tailbone/humanoid.h"
#include "tailbone/tailchain.h"

const char *tb_tail_chain_source_name(tb_tail_chain_source s)
{
    switch (s) {
    case TB_CHAIN_TAILBONE: return "tailbone";
    case TB_CHAIN_NAME: return "name";
    case TB_CHAIN_STRUCTURE: return "structure";
    }
    return "";
}

int tb_tail_word(const char *name)
{
    if (!name)
        return 0;
    const char *c = strrchr(name, ':'); /* "mixamorig:" and similar prefixes */
    const char *s = c ? c + 1 : name;
    for (const char *p = s; *p; p++) {
        if (tolower((unsigned char)p[0]) != 't' || tolower((unsigned char)p[1]) != 'a' ||
            tolower((unsigned char)p[2]) != 'i' || tolower((unsigned char)p[3]) != 'l')
            continue;
        /* before: the start, a separator, or a camel-case boundary ("foxTail") */
        if (p > s && isalpha((unsigned char)p[-1]) && !(p[0] == 'T' && islower((unsigned char)p[-1])))
            continue;
        /* words that end in "tail" but are hair or cloth */
        if (p - s >= 4 && !strncasecmp(p - 4, "pony", 4))
            continue;
        if (p - s >= 3 && !strncasecmp(p - 3, "pig", 3))
            continue;
        /* after: the end, a digit, a separator or a new camel-case word */
        if (islower((unsigned char)p[4]))
            continue;
        return 1;
    }
    return 0;
}

/* Children of each joint: first child and count. */
static void tb__children(const tb_model *m, int *first, int *count)
{
    int n = m->skel.joint_count;
    for (int j = 0; j < n; j++)
        first[j] = -1, count[j] = 0;
    for (int j = 0; j < n; j++) {
        int p = m->skel.parents[j];
        if (p >= 0) {
            if (first[p] < 0)
                first[p] = j;
            count[p]++;
        }
    }
}

static const float *tb__pos(const tb_model *m, int j)
{
    return &m->bind_world_[j][12];
}

/* Per vertex: the skel joint with the largest weight (-1: none). */
static int *tb__top_joints(const tb_model *m)
{
    int *top = malloc((m->vertex_count ? m->vertex_count : 1) * sizeof *top);
    if (!top)
        return NULL;
    for (size_t v = 0; v < m->vertex_count; v++) {
        float best = 0;
        top[v] = -1;
        for (int q = 0; q < m->influences; q++) {
            size_t k = v * (size_t)m->influences + (size_t)q;
            if (m->weights[k] > best) {
                best = m->weights[k];
                top[v] = m->skin_joints[m->joints[k]];
            }
        }
    }
    return top;
}

static int tb__is_skin_joint(const tb_model *m, int j)
{
    return m->skel.has_ibm && m->skel.has_ibm[j];
}

/* Length, vertex count and end helper of a chain whose joints are set. */
static void tb__finish(const tb_model *m, const int *top, const int *first, const int *nchild, tb_tail_chain *c)
{
    c->end_joint = -1;
    int last = c->joints[c->count - 1];
    /* a leaf helper that carries no skin ends the chain, as Tail_End does */
    if (c->count > 1 && nchild[last] == 0 && !tb__is_skin_joint(m, last)) {
        c->end_joint = last;
        c->count--;
    } else if (nchild[last] == 1 && nchild[first[last]] == 0 && !tb__is_skin_joint(m, first[last])) {
        c->end_joint = first[last];
    }
    float len = 0;
    int prev = c->anchor;
    for (int i = 0; i < c->count; i++) {
        const float *a = tb__pos(m, prev), *b = tb__pos(m, c->joints[i]);
        len += sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
        prev = c->joints[i];
    }
    if (c->end_joint >= 0) {
        const float *a = tb__pos(m, prev), *b = tb__pos(m, c->end_joint);
        len += sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
    }
    c->length = len;
    c->vertices = 0;
    for (size_t v = 0; top && v < m->vertex_count; v++)
        for (int i = 0; i < c->count; i++)
            if (top[v] == c->joints[i]) {
                c->vertices++;
                break;
            }
}

static int tb__taken(const tb_tail_chain *out, int found, int cap, int j)
{
    for (int k = 0; k < found && k < cap; k++)
        for (int i = 0; i < out[k].count; i++)
            if (out[k].joints[i] == j)
                return 1;
    return 0;
}

/* A quadruped's axes from its shape (m->body: up and forward in bind
 * space; tb_model_axes gives none for a quadruped). 0 without a body. */
static int tb__quad_axes(const tb_model *m, float up[3], float fwd[3])
{
    if (!m->body.found || !m->body.quadruped)
        return 0;
    memcpy(up, m->body.up, 3 * sizeof *up);
    memcpy(fwd, m->body.forward, 3 * sizeof *fwd);
    return 1;
}

/* The structural test: j starts a run of joints with one child each,
 * leaving the trunk backwards near the midline, with a skin behind it. */
static int tb__structural(const tb_model *m, const int *top, const int *first, const int *nchild, int j,
                          tb_tail_chain *c)
{
    int p = m->skel.parents[j];
    if (p < 0 || m->roles[j] || !tb__is_skin_joint(m, j))
        return 0;
    tb_role_class pc = tb_role_class_of(m->roles[p]);
    if (pc != TB_CLASS_PELVIS && pc != TB_CLASS_SPINE)
        return 0;
    memset(c, 0, sizeof *c);
    c->source = TB_CHAIN_STRUCTURE;
    c->anchor = p;
    for (int cur = j; cur >= 0 && c->count < TB_TAIL_CHAIN_MAX_BONES; cur = nchild[cur] == 1 ? first[cur] : -1) {
        if (m->roles[cur] || tb_role_from_name_fuzzy(m->skel.names[cur], NULL))
            return 0;
        c->joints[c->count++] = cur;
        if (nchild[cur] > 1)
            return 0; /* branches: a limb with digits, a wing, not a tail */
    }
    if (c->count < 2)
        return 0;
    float up[3], fwd[3];
    if (!tb_model_axes(m, up, fwd) && !tb__quad_axes(m, up, fwd))
        return 0; /* no sure front and back: names only */
    float lat[3] = {up[1] * fwd[2] - up[2] * fwd[1], up[2] * fwd[0] - up[0] * fwd[2], up[0] * fwd[1] - up[1] * fwd[0]};
    const float *a = tb__pos(m, p), *b = tb__pos(m, c->joints[c->count - 1]);
    float d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (!(len > 0.05f * m->height))
        return 0;
    float back = -(d[0] * fwd[0] + d[1] * fwd[1] + d[2] * fwd[2]) / len;
    float side = fabsf(d[0] * lat[0] + d[1] * lat[1] + d[2] * lat[2]) / len;
    if (back < 0.3f || side > 0.3f)
        return 0;
    /* its skin: vertices mostly on the chain, their centroid behind the root */
    double cen[3] = {0, 0, 0};
    size_t nv = 0;
    for (size_t v = 0; top && v < m->vertex_count; v++)
        for (int i = 0; i < c->count; i++)
            if (top[v] == c->joints[i]) {
                for (int k = 0; k < 3; k++)
                    cen[k] += m->positions[v * 3 + (size_t)k];
                nv++;
                break;
            }
    if (nv < 8)
        return 0;
    float behind = 0;
    for (int k = 0; k < 3; k++)
        behind -= (float)(cen[k] / (double)nv - a[k]) * fwd[k];
    return behind > 0.02f * m->height;
}

/* A named chain from joint j down: each next joint is the first child of the
 * last that the rule takes (by_index: tailbone's Tail_<next index>; else any
 * name with a tail word), up to TB_TAIL_CHAIN_MAX_BONES. */
static void tb__follow(const tb_model *m, tb_tail_chain *c, int j, int by_index)
{
    const char *const *names = m->skel.names;
    int n = m->skel.joint_count, ci, ii;
    for (int cur = j; cur >= 0 && c->count < TB_TAIL_CHAIN_MAX_BONES;) {
        c->joints[c->count++] = cur;
        int next = -1;
        for (int k = cur + 1; k < n && next < 0; k++)
            if (m->skel.parents[k] == cur &&
                (by_index ? tb_tail_name_parse(names[k], &ci, &ii) && ii == c->count + 1 : tb_tail_word(names[k])))
                next = k;
        cur = next;
    }
}

int tb_tail_chains_find(const tb_model *m, tb_tail_chain *out, int cap)
{
    int n = m->skel.joint_count, found = 0;
    int *first = malloc((size_t)(n ? n : 1) * sizeof *first), *nchild = malloc((size_t)(n ? n : 1) * sizeof *nchild);
    int *top = tb__top_joints(m);
    if (!first || !nchild || !top)
        goto done; /* none found */
    tb__children(m, first, nchild);
    const char *const *names = m->skel.names;
    for (int pass = 0; pass < 3; pass++) {
        for (int j = 0; j < n; j++) {
            int p = m->skel.parents[j];
            tb_tail_chain c;
            memset(&c, 0, sizeof c);
            int ci, ii;
            if (pass == 0) {
                if (!names || !tb_tail_name_parse(names[j], &ci, &ii) || ii != 1)
                    continue;
                /* tailbone's: Tail_1, Tail_2, … by index, Tail_End last */
                c.source = TB_CHAIN_TAILBONE;
                c.anchor = p;
                tb__follow(m, &c, j, 1);
            } else if (pass == 1) {
                if (!names || !tb_tail_word(names[j]) || tb_tail_name_parse(names[j], &ci, &ii) ||
                    (p >= 0 && tb_tail_word(names[p])) || p < 0 || tb__taken(out, found, cap, j))
                    continue;
                c.source = TB_CHAIN_NAME;
                c.anchor = p;
                tb__follow(m, &c, j, 0);
            } else {
                if (tb__taken(out, found, cap, j) || (p >= 0 && tb__taken(out, found, cap, p)) ||
                    !tb__structural(m, top, first, nchild, j, &c))
                    continue;
            }
            if (c.count == 0 || c.anchor < 0)
                continue;
            tb__finish(m, top, first, nchild, &c);
            if (c.count == 0)
                continue;
            if (found < cap)
                out[found] = c;
            found++;
        }
    }
done:
    free(first);
    free(nchild);
    free(top);
    return found;
}

int tb_tail_chains_pelvis(const tb_model *m)
{
    tb_tail_chain c[8];
    int k = tb_tail_chains_find(m, c, 8);
    for (int i = 0; i < k && i < 8; i++)
        if (c[i].source != TB_CHAIN_STRUCTURE && tb__is_skin_joint(m, c[i].anchor))
            return c[i].anchor;
    return -1;
}

void tb_tail_chain_axes(const tb_model *m, const tb_tail_chain *c, float up[3], float forward[3])
{
    if (tb_model_axes(m, up, forward) || tb__quad_axes(m, up, forward))
        return;
    for (int k = 0; k < 3; k++)
        up[k] = k == m->up_axis ? 1.0f : 0.0f;
    forward[0] = forward[1] = forward[2] = 0;
    forward[m->up_axis == 2 ? 1 : 2] = 1; /* glTF: +Z; a Z-up model: +Y */
    if (!c || c->count == 0)
        return;
    int last = c->end_joint >= 0 ? c->end_joint : c->joints[c->count - 1];
    const float *a = tb__pos(m, c->anchor), *b = tb__pos(m, last);
    float d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    float du = d[0] * up[0] + d[1] * up[1] + d[2] * up[2];
    for (int k = 0; k < 3; k++)
        d[k] = -(d[k] - du * up[k]);
    float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (len > 0.02f * c->length) /* a tail hanging straight down says nothing */
        for (int k = 0; k < 3; k++)
            forward[k] = d[k] / len;
}

void tb_tail_chains_spring_desc(const tb_tail_chain *chains, int count, int *joints, int *lengths, int *ends,
                                tb_spring_desc *d)
{
    int o = 0;
    for (int c = 0; c < count; c++) {
        memcpy(joints + o, chains[c].joints, (size_t)chains[c].count * sizeof *joints);
        o += chains[c].count;
        lengths[c] = chains[c].count;
        ends[c] = chains[c].end_joint;
    }
    d->chain_joints = joints;
    d->chain_lengths = lengths;
    d->chain_ends = ends;
    d->chain_count = count;
}
