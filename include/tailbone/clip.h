/* tailbone/clip.h — glTF animations as runtime clips (offline layer).
 *
 *   tb_clip *clip;
 *   if (tb_clip_load(&clip, doc, model, anim_index, NULL, &err) == TB_OK) {
 *       tb_clip_sample(clip, &model->skel, t_s, locals);   // runtime.h
 *       tb_clip_free(clip);
 *   }
 *
 * The adapter decodes every sampler's key times and values once (normalised
 * integer rotations become floats, sparse accessors are applied) and maps
 * each channel's target node to its joint in the model's skeleton
 * (tb_model.joint_of_node). Channels are dropped, and counted in
 * tb_clip_info.ignored_channels, when they target a node outside the
 * skeleton (a prop, a camera, another skin), morph-target `weights`, or an
 * extension's path: none of them moves this skin (SPEC C measures skin).
 *
 * Ownership: tb_clip_load returns ONE malloc'd block holding the tb_clip,
 * its channels, times and values; tb_clip_free frees it. The clip's name is
 * borrowed from the doc (valid until the doc is freed or refreshed). The
 * clip does not reference the model: it stays valid after tb_model_free, but
 * its joint indices only make sense for that model's skeleton.
 */
#ifndef TAILBONE_CLIP_H
#define TAILBONE_CLIP_H

#include "tailbone/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest clip tb_clip_load accepts, in seconds (1 hour): baking and
 * simulating cost time in proportion to a clip's length. */
#define TB_MAX_CLIP_S 3600.0f

typedef struct tb_clip_info {
    int kept_channels;
    int ignored_channels;  /* outside the skeleton, `weights`, extension paths */
    int reordered_keys;    /* key times that decreased and were clamped (see below) */
} tb_clip_info;

/* Builds the runtime clip of doc animation `animation` for model m (loaded
 * from the same doc). Key times that decrease (invalid glTF, which the loader
 * only warns about) are raised to the previous time so sampling stays
 * well defined; they are counted in info->reordered_keys. info may be NULL.
 * duration_s is the animation's largest key time over ALL its channels (as
 * glTF and three.js define it), kept or not. Errors: TB_ERR_ARG (animation
 * out of range), TB_ERR_INVALID (an output accessor whose element count does
 * not match its keys; where = "/animations/a/samplers/s"), TB_ERR_OOM. */
tb_result tb_clip_load(tb_clip **out, const tb_doc *doc, const tb_model *m, int animation,
                       tb_clip_info *info, tb_error *err);
/* NULL is a no-op. */
void tb_clip_free(tb_clip *clip);

/* Index of the animation named `name`, or -1: an exact match first, then a
 * case-insensitive one, then one whose part after the last '|' matches
 * case-insensitively ("Gallop" finds "AnimalArmature|Gallop"), then the only
 * animation whose name contains `name` case-insensitively ("walk" finds
 * Blender's "Armature|walk_Armature"; -1 when several do). */
int tb_clip_find(const tb_doc *doc, const char *name);

#ifdef __cplusplus
}
#endif
#endif
