/* web/preview_core.h — what the preview page computes each frame, in C.
 *
 * The page (`tailbone preview`) runs this file compiled to WebAssembly with
 * the runtime (src/runtime: clip sampling, local-to-world, the SPEC B spring,
 * skinning); tests/preview_ref.c runs the very same file natively on the same
 * character to check the page against the C runtime. It uses only the public
 * runtime API (tailbone/runtime.h, tailbone/spring.h): no I/O, no JSON.
 *
 * Every argument is a flat array so JavaScript can pass heap pointers:
 *
 *     tb_pv *c = tb_pv_new(...skeleton, skin, triangles, tail mask...);
 *     tb_pv_add_clip(c, ...) per clip;
 *     tb_pv_spring(c, desc24);               // the solver `fix` bakes with
 *     each frame: tb_pv_frame(c, clip, t_s, live, dt_s);
 *                 read tb_pv_positions / _normals / _colors / _world / _stats
 *     tb_pv_free(c);
 *
 * Stretch (SPEC C) is measured exactly as tailbone measure does it: every
 * unique triangle edge, skinned length / world scale / bind length; edges
 * shorter than 1e-6 H skipped; tail edges have both vertices in the tail
 * mask, body edges neither; torn means > 1.5 or < 0.67; percentiles by
 * nearest rank. tb_pv_clip_stats plays measure's 24 instants.
 *
 * All state lives in the tb_pv object (no globals); creation allocates,
 * tb_pv_frame does not.
 */
#ifndef TB_PREVIEW_CORE_H
#define TB_PREVIEW_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_pv tb_pv;

/* Per-frame and per-clip figures, as floats (indices into tb_pv_stats). */
enum {
    TB_PV_TAIL_P99 = 0, TB_PV_TAIL_MAX, TB_PV_TAIL_TORN, TB_PV_TAIL_EDGES,
    TB_PV_BODY_P99, TB_PV_BODY_MAX, TB_PV_BODY_TORN, TB_PV_BODY_EDGES,
    TB_PV_TAIL_P95, TB_PV_BODY_P95, TB_PV_TAIL_MIN, TB_PV_BODY_MIN,
    TB_PV_STAT_COUNT
};

/* Number of floats in a spring description (tb_pv_spring): the 12 fields of
 * tb_spring_params in header order (ground_off as 0/1), then substep_s,
 * max_dt_s, teleport_m, teleport_rad, bind_up[3], bind_forward[3]. */
#define TB_PV_DESC_FLOATS 24

/* names: joint_count NUL-terminated strings one after the other.
 * rest: 10 floats per joint (t3, r4 xyzw, s3). bind_world, ibm: 16 floats
 * (column-major) per joint / per skin joint. joints/weights: `influences`
 * per vertex (skin joint indices). tail_mask: one byte per vertex (may be
 * NULL: no tail). height: H in bind units. Returns NULL when out of memory
 * or when an index is out of range. */
tb_pv *tb_pv_new(int joint_count, const int *parents, const char *names, const float *rest,
                 const float *bind_world, const uint8_t *has_ibm, int skin_joint_count,
                 const int *skin_joints, const float *ibm, int vertex_count, const float *positions,
                 const float *normals, int influences, const uint16_t *joints, const float *weights,
                 int triangle_count, const uint32_t *triangles, const uint8_t *tail_mask, float height);
void tb_pv_free(tb_pv *c);

/* Adds a clip; returns its index, -1 on a bad channel or out of memory.
 * Channel k: joint, path (0 T, 1 R, 2 S), interp (0 linear, 1 step, 2
 * cubic), key count. times: every channel's key times one after the other;
 * values: every channel's values one after the other (3 or 4 floats per key,
 * times 3 for cubic). Arrays are copied. */
int tb_pv_add_clip(tb_pv *c, float duration_s, int channel_count, const int *ch_joint, const int *ch_path,
                   const int *ch_interp, const int *ch_keys, const float *times, const float *values);

/* Creates the spring animator from TB_PV_DESC_FLOATS floats (see above);
 * returns the number of tail chains (0: none), -1 on failure. */
int tb_pv_spring(tb_pv *c, const float *desc);
/* Sets the 12 parameters (same layout as the desc's first 12) on every
 * chain; returns 0, or -1 when the solver refuses a value. */
int tb_pv_set_params(tb_pv *c, const float *params);
/* Next live frame starts the tail from rest. */
void tb_pv_reset(tb_pv *c);

/* Poses the character at clip time t_s (clamped to the clip), with the
 * spring stepped by dt_s when live != 0 (keys otherwise), skins it and
 * measures and colours the stretch of every edge. */
void tb_pv_frame(tb_pv *c, int clip, float t_s, int live, float dt_s);

float *tb_pv_positions(tb_pv *c);  /* 3 per vertex, world */
float *tb_pv_normals(tb_pv *c);    /* 3 per vertex */
float *tb_pv_colors(tb_pv *c);     /* 3 per vertex, linear RGB: the worst edge at that vertex */
float *tb_pv_world(tb_pv *c);      /* 16 per joint */
float *tb_pv_stats(tb_pv *c);      /* TB_PV_STAT_COUNT floats of the last frame */
float tb_pv_world_scale(tb_pv *c);
int tb_pv_vertex_count(tb_pv *c);
int tb_pv_joint_count(tb_pv *c);
float tb_pv_clip_duration(tb_pv *c, int clip);

/* The clip's figures as `tailbone measure` computes them: `instants` evenly
 * spaced poses (0: 24) including both ends, baked keys, no spring. Writes
 * TB_PV_STAT_COUNT floats to out (torn entries as fractions 0..1). Returns 0,
 * -1 when out of memory. */
int tb_pv_clip_stats(tb_pv *c, int clip, int instants, float *out);

/* The live spring from rest over `frames` frames of clip at fps (t_k = k/fps
 * wrapped into the clip, every step dt = 1/fps): writes 3
 * floats per tail link (all chains, in order) per frame to out. Returns the
 * floats per frame, or -1. tb_pv_tail_length gives the summed link length of
 * all chains (world units), known once the spring has stepped (after
 * tb_pv_tips or a live frame; 0 before). */
int tb_pv_tips(tb_pv *c, int clip, float fps, int frames, float *out);
float tb_pv_tail_length(tb_pv *c);
int tb_pv_link_count(tb_pv *c);

/* Stretch colour of one ratio (3 floats): neutral grey at 1.0, warm when
 * stretched, cold when compressed, bright yellow / cyan when torn. */
void tb_pv_color(float ratio, float rgb[3]);

#ifdef __cplusplus
}
#endif
#endif
