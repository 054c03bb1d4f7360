/* Private pieces of the spring solver (SPEC B), shared by spring.c (the
 * scalar reference step) and spring_batch.c (the lane-parallel batch step).
 * Not installed. */
#ifndef TB_SPRING_INTERNAL_H
#define TB_SPRING_INTERNAL_H

#include <cglm/cglm.h>

#include "tailbone/spring.h"

/* Frames shorter than this hold the pose: nothing meaningful to integrate. */
#define TB__MIN_DT_S 1e-6f

typedef struct tb__frame {
    float o[3];  /* origin, world */
    versor r;    /* rotation, local → world */
    float s;     /* uniform scale */
} tb__frame;

typedef struct tb__link {
    int joint;
    /* Rest local from the bind pose (SPEC B: L_i^0 = (W_parent^0)^-1 W_i^0). */
    float t[3];
    versor q0;
    float sc[3];
    float sigma;         /* mean of sc: the bone's uniform scale */
    float lambda;        /* bone length in parent units */
    float e_hat[3];      /* unit direction head→tip in the bone's own frame */
    float bind_dir[3];   /* q0 * e_hat: the mesh's rest direction, parent frame */
    float authored[3];   /* a_i: bind direction in hips space (SPEC B rest arc) */
    /* Spring rest pose, from the chain's parameters (tb__chain_prepare). */
    float r[3];          /* r_i: rest direction in the corrected parent frame */
    versor A;            /* A_i: corrected parent rest frame → hips */
    versor qhat;         /* corrected rest local rotation */
    float omega2;        /* ω² with ω = 2π f_i */
    float damp;          /* 2ζω */
    /* State. */
    float p[3], v[3];
    versor q;            /* solved local rotation (what step writes) */
    versor bend, bend_old; /* hips-frame bend; bend_old = last sub-step's snapshot */
    float head[3], target[3];
    float length;        /* world length at the last sub-step */
    int contact;
} tb__link;

typedef struct tb__chain {
    int anchor, first_joint, end_joint;
    int first_link, link_count;
    float end_t[3], end_sc[3];
    versor end_q;
    versor b_a;               /* anchor's bind rotation: anchor-local → hips */
    tb_spring_params params;  /* resolved */
    /* Parameters as the solver uses them (TB_SPRING_ZERO → 0). */
    float zeta, gravity, coupling, ground_y, clearance, gamma;
    float cos_half_max, sin_half_max; /* of the bend limit; cos = -1: none */
    int ground_on;
    int contact_keeps_limit;  /* params.contact_keeps_limit, 0 or 1 */
    float cos_bind_max, sin_bind_max; /* of params.bind_limit_rad; cos = -2: none */
    /* The batch step may write this chain's outputs in lanes: its anchor is
     * outside every chain's subtree and its end helper (if any) is the last
     * link's child. */
    int lane_out_ok;
    /* State. */
    int warm;                 /* 0: the next step snaps to rest */
    int lane_out;             /* the batch step wrote its outputs this call */
    tb__frame prev;           /* anchor at the previous step */
} tb__chain;

typedef struct tb__affected {
    int joint, parent;
    int parent_affected; /* the parent's world comes from world_out */
    int chain;           /* the chain this joint is a link or the end of, else -1 */
} tb__affected;

struct tb_spring_animator {
    int chain_count, link_count, affected_count;
    float substep, max_dt, teleport_m, teleport_rad;
    void (*free_fn)(void *ptr, void *user);
    void *user;
    tb__chain *chains;
    tb__link *links;
    tb__affected *affected;
    /* The batch step: every chain lane_out_ok and every affected joint a
     * link or end joint of a chain (set at creation); lanes_all: in this
     * batch call every chain went to a block, which wrote all of the
     * outputs (tb__write_outputs_rest has nothing to do). */
    int lane_out_all, lanes_all;
};

/* Similarity frame of a matrix; 0 for a non-finite, degenerate or mirrored one. */
int tb__frame_from_matrix(const float m[16], tb__frame *f);
/* Did the anchor jump past the animator's teleport thresholds? */
int tb__teleported(const tb_spring_animator *a, const tb__frame *from, const tb__frame *to);
/* One sub-step of one chain (the scalar reference); snap puts it at rest. */
void tb__chain_pass(tb_spring_animator *a, tb__chain *c, const tb__frame *anchor, float h,
                    int snap);
/* One frame of one chain whose anchor is sane, as tb_spring_step() runs it:
 * a snap to rest after a cold start or a teleport, else `steps` sub-steps of
 * h with the anchor moving from c->prev to cur; then c->prev = cur. */
void tb__chain_frame(tb_spring_animator *a, tb__chain *c, const tb__frame *cur, int steps,
                     float h);
/* Tail locals, and world matrices of the tails and below when world_out. */
void tb__write_outputs(const tb_spring_animator *a, const float (*world)[16],
                       tb_transform *locals, float (*world_out)[16]);

/* The batch step's code paths: the compiler's baseline vectors (8 lanes),
 * AVX2+FMA (8 lanes), AVX-512 (16 lanes; 8 for a block of at most 8). */
#define TB__PATH_BASE 0
#define TB__PATH_AVX2 1
#define TB__PATH_AVX512 2
/* The best path this CPU runs (TB__PATH_BASE without vector extensions). */
int tb__spring_batch_best_path(void);
/* tb__write_outputs for a batch: skips the chains (and their joints' world
 * matrices) the batch already wrote in lanes (lane_out; the batch driver
 * clears it as it takes each chain), and the whole animator when lanes_all. */
void tb__write_outputs_rest(tb_spring_animator *a, const float (*world)[16],
                            tb_transform *locals, float (*world_out)[16]);

/* tb_spring_step_batch() on a chosen path, or the best below it that the CPU
 * runs: tests run every path the CPU has. */
void tb__spring_step_batch_on(const tb_spring_batch_item *items, int count, float dt_s,
                              int path);
/* tb_spring_step_batch_fast() on a chosen path (the same rule). */
void tb__spring_step_batch_fast_on(const tb_spring_batch_item *items, int count, float dt_s,
                                   int path);
/* tb_spring_crowd_memory_size and tb_spring_crowd_init on a chosen path (the
 * best below it that the CPU runs). */
size_t tb__crowd_memory_size_on(tb_spring_animator *const *anims, int count, int path);
tb_result tb__crowd_init_on(tb_spring_crowd **out, void *memory, size_t size,
                            tb_spring_animator *const *anims, int count, int path, tb_error *err);

#endif
