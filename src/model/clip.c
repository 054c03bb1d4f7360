/* glTF animation → runtime tb_clip (SPEC C: the clips whose playback is
 * measured; SPEC B/D sample the same clips). Offline: decodes accessors and
 * allocates once; the runtime then samples without allocating. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "tailbone/clip.h"

void tb_clip_free(tb_clip *clip)
{
    free(clip);
}

/* Components per key of a sampler's output (VEC3 or VEC4 here). */
static int tb__path_components(tb_gltf_path p)
{
    return p == TB_GLTF_PATH_ROTATION ? 4 : 3;
}

static int tb__kept(const tb_gltf_channel *ch, const tb_model *m, int node_count)
{
    return ch->node >= 0 && ch->node < node_count && ch->path <= TB_GLTF_PATH_SCALE &&
           m->joint_of_node[ch->node] >= 0;
}

/* A kept channel's sampler (NULL: the channel is not kept), its key count,
 * values per key (3 for a cubic spline: in-tangent, value, out-tangent) and
 * floats per value: what both passes of tb_clip_load read (tb__next_kept). */
static const tb_gltf_sampler *tb__channel_sizes(const tb_gltf *g, const tb_gltf_animation *an, const tb_model *m,
                                                const tb_gltf_channel *ch, size_t *keys, size_t *per, size_t *comp)
{
    if (!tb__kept(ch, m, g->node_count))
        return NULL;
    const tb_gltf_sampler *s = &an->samplers[ch->sampler];
    *keys = g->accessors[s->input].count;
    *per = s->interp == TB_INTERP_CUBICSPLINE ? 3 : 1;
    *comp = (size_t)tb__path_components(ch->path);
    return s;
}

/* Floats rounded up so every array in the block stays 16-byte aligned. */
static size_t tb__align16(size_t bytes)
{
    return (bytes + 15u) & ~(size_t)15u;
}

/* The next kept channel from *c on (*c moves past it): its sampler and
 * sizes (tb__channel_sizes), *ch the channel; NULL when none is left. */
static const tb_gltf_sampler *tb__next_kept(const tb_gltf *g, const tb_gltf_animation *an, const tb_model *m, int *c,
                                            const tb_gltf_channel **ch, size_t *keys, size_t *per, size_t *comp)
{
    while (*c < an->channel_count) {
        *ch = &an->channels[(*c)++];
        const tb_gltf_sampler *s = tb__channel_sizes(g, an, m, *ch, keys, per, comp);
        if (s)
            return s;
    }
    return NULL;
}

/* Work scales with a clip's length (baked keys, simulated steps): a clip
 * lasting longer than TB_MAX_CLIP_S, or a non-finite key time, is refused
 * naming the input accessor that holds it. */
static tb_result tb__clip_too_long(const tb_doc *doc, const tb_gltf_animation *an, int animation, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    for (int q = 0; q < an->sampler_count; q++) {
        int in = an->samplers[q].input;
        size_t n = g->accessors[in].count;
        float *t = malloc((n ? n : 1) * sizeof *t);
        if (!t)
            return tb__fail(err, TB_ERR_OOM, NULL, NULL);
        tb_result r = tb_accessor_read_floats(doc, in, t, n, err);
        for (size_t i = 0; r == TB_OK && i < n; i++)
            if (!(t[i] <= TB_MAX_CLIP_S) || !(t[i] >= -TB_MAX_CLIP_S)) {
                char where[64];
                snprintf(where, sizeof where, "/accessors/%d", in);
                r = tb__fail(err, TB_ERR_UNSUPPORTED, where,
                             "key %zu of clip %s is at %g s (input of /animations/%d/samplers/%d); clips "
                             "longer than %g s are refused",
                             i, an->name ? an->name : "(unnamed)", (double)t[i], animation, q, (double)TB_MAX_CLIP_S);
            }
        free(t);
        if (r != TB_OK)
            return r;
    }
    return tb__fail(err, TB_ERR_UNSUPPORTED, NULL, "clip %s lasts %g s; clips longer than %g s are refused",
                    an->name ? an->name : "(unnamed)", (double)an->duration_s, (double)TB_MAX_CLIP_S);
}

/* Pass 1: the size of one block for the clip, its channels and every kept
 * channel's times and values (each channel gets its own copy: samplers
 * shared by several channels are rare and small); *chan_off where the
 * channels start, *kept how many. */
static tb_result tb__clip_size(const tb_gltf *g, const tb_gltf_animation *an, const tb_model *m, int animation,
                               int *kept, size_t *chan_off, size_t *bytes, tb_error *err)
{
    const tb_gltf_channel *ch;
    const tb_gltf_sampler *s;
    size_t keys, per, comp;
    *kept = 0;
    *bytes = tb__align16(sizeof(tb_clip));
    for (int c = 0; (s = tb__next_kept(g, an, m, &c, &ch, &keys, &per, &comp));) {
        if (g->accessors[s->output].count != keys * per || keys == 0 || keys > (size_t)INT32_MAX) {
            char where[96];
            snprintf(where, sizeof where, "/animations/%d/samplers/%d", animation, ch->sampler);
            return tb__fail(err, TB_ERR_INVALID, where, "output has %zu elements for %zu keys",
                            g->accessors[s->output].count, keys);
        }
        *bytes += tb__align16(keys * sizeof(float)) + tb__align16(keys * per * comp * sizeof(float));
        ++*kept;
    }
    *chan_off = *bytes;
    *bytes += tb__align16((size_t)*kept * sizeof(tb_channel));
    return TB_OK;
}

/* Pass 2: every kept channel's times and values decoded into the block
 * after the clip, its tb_channel filled; *reordered counts the key times
 * raised to keep them non-decreasing. */
static tb_result tb__clip_decode(const tb_doc *doc, const tb_gltf_animation *an, const tb_model *m, uint8_t *block,
                                 tb_channel *chans, int *reordered, tb_error *err)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    const tb_gltf_channel *ch;
    const tb_gltf_sampler *s;
    size_t keys, per, comp, at = tb__align16(sizeof(tb_clip));
    int k = 0;
    *reordered = 0;
    for (int c = 0; (s = tb__next_kept(g, an, m, &c, &ch, &keys, &per, &comp));) {
        float *times = (float *)(block + at);
        at += tb__align16(keys * sizeof(float));
        float *values = (float *)(block + at);
        at += tb__align16(keys * per * comp * sizeof(float));
        tb_result r = tb_accessor_read_floats(doc, s->input, times, keys, err);
        if (r == TB_OK)
            r = tb_accessor_read_floats(doc, s->output, values, keys * per * comp, err);
        if (r != TB_OK)
            return r;
        /* The sampler's binary search needs non-decreasing times. */
        for (size_t q = 1; q < keys; q++)
            if (times[q] < times[q - 1]) {
                times[q] = times[q - 1];
                ++*reordered;
            }
        tb_channel *dst = &chans[k++];
        dst->joint = m->joint_of_node[ch->node];
        dst->path = ch->path == TB_GLTF_PATH_TRANSLATION ? TB_PATH_TRANSLATION
                    : ch->path == TB_GLTF_PATH_ROTATION  ? TB_PATH_ROTATION
                                                         : TB_PATH_SCALE;
        dst->interp = s->interp;
        dst->key_count = (int)keys;
        dst->times = times;
        dst->values = values;
    }
    return TB_OK;
}

tb_result tb_clip_load(tb_clip **out, const tb_doc *doc, const tb_model *m, int animation,
                       tb_clip_info *info, tb_error *err)
{
    *out = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    const tb_gltf *g = tb_doc_gltf(doc);
    if (!m || animation < 0 || animation >= g->animation_count)
        return tb__fail(err, TB_ERR_ARG, NULL, "animation %d out of range (the file has %d)", animation,
                        g->animation_count);
    const tb_gltf_animation *an = &g->animations[animation];
    if (!(an->duration_s <= TB_MAX_CLIP_S))
        return tb__clip_too_long(doc, an, animation, err);
    int kept = 0, reordered = 0;
    size_t chan_off = 0, bytes = 0;
    tb_result r = tb__clip_size(g, an, m, animation, &kept, &chan_off, &bytes, err);
    if (r != TB_OK)
        return r;
    uint8_t *block = malloc(bytes);
    if (!block)
        return tb__fail(err, TB_ERR_OOM, NULL, NULL);
    tb_clip *clip = (tb_clip *)block;
    tb_channel *chans = (tb_channel *)(block + chan_off);
    r = tb__clip_decode(doc, an, m, block, chans, &reordered, err);
    if (r != TB_OK) {
        free(block);
        return r;
    }
    clip->name = an->name;
    clip->duration_s = an->duration_s;
    clip->channel_count = kept;
    clip->channels = chans;
    if (info) {
        info->kept_channels = kept;
        info->ignored_channels = an->channel_count - kept;
        info->reordered_keys = reordered;
    }
    *out = clip;
    return TB_OK;
}

static int tb__ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

static int tb__icontains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

int tb_clip_find(const tb_doc *doc, const char *name)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    if (!name)
        return -1;
    for (int a = 0; a < g->animation_count; a++)
        if (g->animations[a].name && !strcmp(g->animations[a].name, name))
            return a;
    for (int a = 0; a < g->animation_count; a++)
        if (g->animations[a].name && tb__ieq(g->animations[a].name, name))
            return a;
    /* Blender/exporters prefix the armature: "AnimalArmature|Gallop". */
    for (int a = 0; a < g->animation_count; a++) {
        const char *bar = g->animations[a].name ? strrchr(g->animations[a].name, '|') : NULL;
        if (bar && tb__ieq(bar + 1, name))
            return a;
    }
    int found = -1;
    for (int a = 0; a < g->animation_count; a++)
        if (g->animations[a].name && tb__icontains(g->animations[a].name, name)) {
            if (found >= 0)
                return -1;
            found = a;
        }
    return found;
}
