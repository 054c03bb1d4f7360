/* tailbone/spring.h — the tail spring-chain solver (SPEC B).
 *
 * What it does. Give it a skeleton once; it finds every tail chain by name
 * (`Tail_1 … Tail_K`, a second tail `TailB_1 …`, any prefix such as
 * `mixamorig:Tail_1`; an optional weightless `Tail_End`/`TailB_End` helper
 * marks the last tip) and, each frame, turns the body's motion into the tail's
 * secondary motion: one damped spring particle per bone tip, in world space,
 * with the rope, bend-coupling, bend-limit, hip-plane and ground constraints
 * of SPEC B. The parent of `Tail_1` (Hips for a pelvis tail, a spine joint
 * for a tail rooted on the back) is the chain's *anchor*.
 *
 * Usage
 *
 *     tb_spring_desc desc = {0};            // all-zero: the SPEC defaults
 *     tb_spring_animator *anim;
 *     if (tb_spring_create(&anim, &skel, &desc, &err) != TB_OK) ...;
 *     every frame:
 *         pose the body into locals[] (clip sampling, IK, ...);
 *         tb_local_to_world(&skel, locals, root, world);
 *         tb_spring_step(anim, dt_s, world, locals, world); // tail locals + world
 *         skin with world[];
 *     tb_spring_destroy(anim);
 *
 * Memory and ownership. Creation is the only allocation. Either
 *   - tb_spring_create() allocates one block (desc.alloc_fn/free_fn/user, or
 *     malloc/free when NULL) and tb_spring_destroy() frees it; or
 *   - tb_spring_memory_size() tells how many bytes a skeleton needs and
 *     tb_spring_init() builds the animator inside caller memory (aligned to
 *     TB_SPRING_ALIGN); the caller frees that memory, there is no destroy.
 * The animator copies what it needs: the skeleton may be freed after
 * creation. tb_spring_step() never allocates, does no I/O, touches no global
 * state; different animators may be stepped on different threads.
 *
 * What step writes. For every joint of a chain (Tail_1 … Tail_K and its
 * Tail_End) step() writes the whole local transform: translation and scale
 * recovered from the bind pose (SPEC B, never the node pose stored in the
 * file) and the solved rotation. No other entry of locals[] is written, ever:
 * the solver only rotates tail bones (SPEC B invariant). When world_out is
 * non-NULL, step() also rewrites the world matrix of every tail joint and of
 * every joint below one (an accessory parented to the tail), so the caller
 * can skin without another pass; every other entry of world_out is left
 * untouched, bit for bit.
 *
 * Time. step() advances by dt_s in equal internal sub-steps no longer than
 * desc.substep_s (1/240 s by default): ceil(dt / substep) of them, the anchor
 * moving linearly (position, scale) and by slerp (rotation) between the
 * previous frame's pose and this one; the state is always exactly at the
 * frame's time (no accumulator, no output lag). The same motion played at
 * 30, 60 or 144 fps therefore integrates with steps of 1/240, 1/240 and
 * 1/288 s, and the tail agrees across frame rates within a stated bound:
 * tail tips within 1 cm of each other on a 0.8 m, 8-bone tail while the hips
 * sweep 0.5 m and yaw ±29° (measured: 2 mm for 30 vs 60 fps, 5 mm for 60 vs
 * 144 fps; tests/test_rt_spring.c). dt_s above desc.max_dt_s simulates only
 * max_dt_s (a hitch does not explode the tail); dt_s ≤ 0, NaN or below 1 µs
 * holds the tail's local rotations and leaves the state alone, so the next
 * real frame sees the whole motion. A jump of the anchor larger than
 * desc.teleport_m or desc.teleport_rad in one step resets the chain to its
 * rest pose instead of whipping the tail. A non-finite, degenerate or
 * mirrored anchor matrix holds the chain; it restarts from rest once sane.
 *
 * Choices beyond the article (SPEC B leaves them open):
 *   - The bone's local rotation is swing(r_i, d̃_i) · q̂_i: the spring's rest
 *     local (bind local turned onto the carried, centred rest arc) swung to
 *     the particle. Child targets are expressed in that frame, so the chain
 *     carries no twist the bind pose would add and sits exactly on its rest
 *     arc at rest.
 *   - Bend coupling moves a tip without touching its velocity; the part of
 *     the velocity that pushes back against that shift is removed, at most
 *     the shift's own rate. Without it a tail at rest keeps a phantom
 *     velocity (0.3 m/s measured) that is released as a snap. Velocity is
 *     only ever removed by a constraint, never added (SPEC B mistake 2).
 *   - Damping acts on the world velocity, as SPEC B writes it
 *     (−2ζω ṗ): with root motion the tail also trails with speed.
 *   - A chain anchored on another chain is refused (TB_ERR_INVALID); chains
 *     hold at most 64 bones.
 *
 * Conventions (glTF 2.0 / SPEC): metres, +Y up, a character faces +Z in bind
 * space and its lateral axis is X; quaternions (x, y, z, w); column-major
 * 4x4 matrices (m[col*4+row]); radians; seconds. Physical parameters
 * (gravity, ground height, clearance, teleport distance) are in WORLD units
 * (metres), even when an armature node scales the skeleton (0.01 for a rig
 * authored in centimetres). The solver treats the anchor and tail frames as
 * similarity transforms (rotation + uniform scale); a non-uniform scale there
 * is approximated by its mean.
 */
#ifndef TAILBONE_SPRING_H
#define TAILBONE_SPRING_H

#include <stddef.h>

#include "tailbone/common.h"
#include "tailbone/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment tb_spring_init() requires of caller memory. */
#define TB_SPRING_ALIGN 16

/* A parameter whose zero is a real setting different from its default (no
 * gravity, no carry, no coupling, ...) is asked for with TB_SPRING_ZERO:
 * since all-zero means "SPEC default", any negative value means "zero" for
 * those fields. Resolved parameters keep TB_SPRING_ZERO, so resolving twice
 * changes nothing and a struct read back with tb_spring_get_params() can be
 * edited and set again. */
#define TB_SPRING_ZERO (-1.0f)

/* Per-chain parameters (SPEC B "Configurable"). All-zero = SPEC defaults. */
typedef struct tb_spring_params {
    float root_hz;          /* 0 → 0.9 Hz: spring frequency of the root link; > 0 */
    float tip_ratio;        /* 0 → 0.5: tip frequency = root_hz * tip_ratio, linear
                               from root to tip; > 0 */
    float damping_ratio;    /* 0 → 0.65 (ζ); TB_SPRING_ZERO → undamped */
    float gravity_mps2;     /* 0 → 1 m/s² along world -Y; TB_SPRING_ZERO → none */
    float carry_rad;        /* 0 → 50° (0.8727): lift of the whole tail, back and up
                               about the anchor's lateral axis; TB_SPRING_ZERO → none */
    float rest_curve;       /* β in [0, 1]; 0 (default) centred rest arc, 1 the
                               authored curve */
    float coupling_per_s;   /* 0 → 12 /s: bend coupling rate k; TB_SPRING_ZERO → off */
    float bend_limit_rad;   /* 0 → 30° (π/6); values ≥ π mean "no limit" */
    float ground_y_m;       /* world height of the ground plane; default 0 */
    int ground_off;         /* 0 → ground plane on (default); 1 → no ground */
    float clearance_m;      /* 0 → 0.025: the tip's centre stays this far above the
                               ground; TB_SPRING_ZERO → none */
    float contact_damping_per_s; /* 0 → 8 /s (γ); TB_SPRING_ZERO → none */
    int contact_keeps_limit; /* 0 (SPEC B): ground contact beats the bend limit;
                                1: a contact pivot that would bend a joint past the
                                limit stops at the limit (the segment may then dip
                                below the clearance), so skin weighted for the
                                limit is never folded further (tailbone fix uses it
                                when contact tears the skin, docs/fix.md) */
    float bind_limit_rad;   /* 0 (SPEC B): none. > 0 (not SPEC B, opt-in): no bone
                               turns further than this from its BIND direction in
                               its parent's frame, i.e. from where the skin was
                               weighted; SPEC B's bend_limit_rad bounds the bend
                               from the spring's rest target, which the carry and
                               the centred arc put off the bind pose (tailbone fix
                               sets it to what the weights carry, docs/fix.md);
                               values >= pi mean none */
} tb_spring_params;

/* Animator description. All-zero = SPEC defaults. */
typedef struct tb_spring_desc {
    tb_spring_params params; /* initial parameters of every chain */
    float substep_s;         /* 0 → 1/240 s: longest internal step */
    float max_dt_s;          /* 0 → 0.1 s: a longer frame simulates only this long */
    float teleport_m;        /* 0 → 1 m (world): an anchor jump beyond this in one
                                step resets the chain; INFINITY disables */
    float teleport_rad;      /* 0 → 60°: same for the anchor's rotation */
    /* The character's axes in bind space (skin space): all-zero → glTF's
     * convention, +Y up and facing +Z. Carry lifts the tail back (against
     * forward) and up; the hip plane faces forward. A model authored facing
     * −Z, or Z-up under a rotated armature, names its own (the offline bake
     * takes them from the leg and spine joints). forward is made
     * perpendicular to up. */
    float bind_up[3];
    float bind_forward[3];
    /* Chains given by joint index instead of by name: artist tail bones
     * under any names (Tail1…Tail8, b_Tail01_012…; tailbone/tailchain.h finds
     * them offline). chain_count chains; chain i is chain_lengths[i]
     * consecutive entries of chain_joints, root first, each the child of the
     * one before; its anchor is the root's parent. chain_ends (may be NULL)
     * gives each chain's weightless end helper, or -1 for none (the last
     * bone's length is then inferred as for a chain without Tail_End). NULL
     * chain_joints: chains by name (the default). Only tb_spring_init and
     * tb_spring_create read them: size such an animator with
     * tb_spring_memory_size_desc. The arrays are copied at creation. */
    const int *chain_joints;
    const int *chain_lengths;
    const int *chain_ends;
    int chain_count;
    /* tb_spring_create() only; NULL → malloc/free. */
    void *(*alloc_fn)(size_t size, void *user);
    void (*free_fn)(void *ptr, void *user);
    void *user;
} tb_spring_desc;

typedef struct tb_spring_animator tb_spring_animator;

/* Read-out of one chain. */
typedef struct tb_spring_chain_info {
    int anchor_joint;  /* parent of Tail_1 (Hips, or a spine joint) */
    int first_joint;   /* Tail_1 */
    int end_joint;     /* Tail_End, or -1 when the rig has none */
    int link_count;    /* K: Tail_1 … Tail_K */
} tb_spring_chain_info;

/* Read-out of one link (one bone and the particle at its tip), as left by
 * the last sub-step. World units. */
typedef struct tb_spring_link_state {
    int joint;          /* skeleton index of the bone */
    float head[3];      /* bone head (the parent's tip or the tail root) */
    float tip[3];       /* particle position */
    float velocity[3];  /* particle velocity, m/s */
    float target[3];    /* rest target T the spring pulls towards */
    float length_m;     /* bone length in world units */
    float bend[4];      /* that bend as a quaternion in the anchor's hips frame
                           (bind-space axes carried by the anchor), SPEC B q_i */
    float bend_rad;     /* its angle: how far the bone is from the spring's rest
                           direction (after coupling, limit and contact) */
    int contact;        /* 1 while the particle rests on the ground */
} tb_spring_link_state;

/* Resolved copies with every zero replaced by its SPEC default (p/d may be
 * NULL: all defaults). Idempotent. */
tb_spring_params tb_spring_params_defaults(const tb_spring_params *p);
tb_spring_desc tb_spring_desc_defaults(const tb_spring_desc *d);

/* Bytes tb_spring_init() needs for this skeleton; *chain_count (may be NULL)
 * receives the number of tail chains found. A skeleton without tail bones is
 * valid: the animator then has no chain and step() writes nothing. Errors:
 * TB_ERR_ARG (NULL skeleton, parents not parent-first) and TB_ERR_INVALID
 * (a chain that cannot be simulated: zero-length bone, no length for the last
 * bone, a chain anchored on another chain); err->where names the joint. */
tb_result tb_spring_memory_size(const tb_skeleton *skel, size_t *size, int *chain_count,
                                tb_error *err);

/* The same for an animator whose chains desc names (desc->chain_joints);
 * with desc NULL or without chain_joints it is tb_spring_memory_size.
 * TB_ERR_ARG (err->where "tb_spring_desc.chain_joints[i]") for an index out
 * of range, a joint that is not the child of the one before, or a chain
 * longer than 64 bones. */
tb_result tb_spring_memory_size_desc(const tb_skeleton *skel, const tb_spring_desc *desc,
                                     size_t *size, int *chain_count, tb_error *err);

/* Builds an animator inside `memory` (size bytes from tb_spring_memory_size,
 * aligned to TB_SPRING_ALIGN). desc may be NULL (defaults); its allocator
 * fields are ignored. The caller owns and frees memory. */
tb_result tb_spring_init(tb_spring_animator **out, void *memory, size_t size,
                         const tb_skeleton *skel, const tb_spring_desc *desc, tb_error *err);

/* Same, in one block from desc's allocator (malloc when none). */
tb_result tb_spring_create(tb_spring_animator **out, const tb_skeleton *skel,
                           const tb_spring_desc *desc, tb_error *err);
/* Frees an animator made by tb_spring_create(). NULL is a no-op. */
void tb_spring_destroy(tb_spring_animator *anim);

/* Advances every chain by dt_s after the application has posed the body.
 * world: world matrices of all joints, as tb_local_to_world() computes them
 * (only the anchors' and the non-tail descendants' entries are read).
 * locals: the current locals; tail joints' entries are overwritten (see the
 * top of this file). world_out: NULL, or where to write the tail joints' (and
 * their descendants') world matrices; it may be the same array as world. */
void tb_spring_step(tb_spring_animator *anim, float dt_s, const float (*world)[16],
                    tb_transform *locals, float (*world_out)[16]);

/* One animator of a batch and the arrays its step reads and writes, as
 * tb_spring_step() takes them. */
typedef struct tb_spring_batch_item {
    tb_spring_animator *anim;
    const float (*world)[16];
    tb_transform *locals;
    float (*world_out)[16]; /* may be NULL, or the same array as world */
} tb_spring_batch_item;

/* Advances every animator of a batch (the chains of one character, or a
 * crowd) by dt_s, as tb_spring_step() would advance each, in one call: the
 * chains of all items are solved together, tb_spring_batch_vector_width()
 * of them at a time in SIMD lanes (16 with AVX-512, 8 with AVX2 or the
 * baseline, chosen at run time). The results, state and outputs alike, are
 * tb_spring_step()'s, bit for bit (same operations in the same order;
 * tests/test_rt_spring.c); the animators keep the same state, so the two
 * steps may be mixed. Items must not share an
 * animator or output arrays. Never allocates (up to about 85 KB of stack), no I/O,
 * no global state. Without GCC/Clang vector extensions it is a loop over
 * tb_spring_step(). */
void tb_spring_step_batch(const tb_spring_batch_item *items, int count, float dt_s);
/* tb_spring_step_batch() with a step of its own for each item: items[i]
 * advances by dt_s[i], as tb_spring_step(items[i].anim, dt_s[i], ...) would,
 * bit for bit (a block's chains share their sub-step count, each its own
 * sub-step length). For independent simulations stepped together whose
 * frame times differ in their last bits (the bake's clips). Same rules as
 * tb_spring_step_batch(). */
void tb_spring_step_batch_each(const tb_spring_batch_item *items, int count, const float *dt_s);
/* The same batch, approximately: tb_spring_step_batch()'s blocks and
 * branches (every SPEC B rule, the same state, so the steps may be mixed)
 * with cheaper arithmetic: no trigonometry (slerp is a normalised lerp
 * within 2.6°, a series beyond), reciprocal square roots instead of square
 * roots and divisions, FMA. Not bit-identical to tb_spring_step(): from the
 * same state, one sub-step's tips agree within 1e-4 of the tail length
 * (measured, with one exception in 10^7 link-steps: docs/spring.md); under
 * violent motion the solver is chaotic, so two runs that differ in any
 * rounding drift apart over many frames, as the reference does from itself
 * when its input moves by a micrometre. Same stack, allocation and
 * threading rules as tb_spring_step_batch(). */
void tb_spring_step_batch_fast(const tb_spring_batch_item *items, int count, float dt_s);
/* A crowd: animators stepped together by tb_spring_step_batch_fast()'s
 * blocks and arithmetic, their chains' state kept in the blocks' SIMD lanes
 * between frames instead of copied out of the animators and back every
 * call. The blocks are fixed at tb_spring_crowd_init (the animators' chains
 * grouped by link count, as tb_spring_step_batch_fast() groups a batch in
 * the same order, so the results are its own bit for bit); an animator
 * whose chains cannot go in lanes (longer than 16 links,
 * contact_keeps_limit, bind_limit_rad, an anchor inside a tail) is stepped
 * by tb_spring_step_batch_fast() each frame. A frame in which a chain
 * starts cold or teleports, an anchor is not a sane frame, dt_s holds the
 * pose, or a block's animators cut dt_s into different sub-steps runs the
 * whole crowd through tb_spring_step_batch_fast() (the lanes synced first,
 * gathered again at the next frame).
 *
 * While an animator is in a crowd its link state lives in the lanes: call
 * tb_spring_crowd_sync() before reading it (tb_spring_get_link_state), and
 * before and after tb_spring_reset(), tb_spring_set_params() or stepping it
 * by any other call. The crowd lives in caller memory
 * (tb_spring_crowd_memory_size bytes, aligned to TB_SPRING_ALIGN), refers
 * to the animators (it does not own them) and never allocates; no I/O, no
 * global state; one crowd per thread at a time. */
typedef struct tb_spring_crowd tb_spring_crowd;
size_t tb_spring_crowd_memory_size(tb_spring_animator *const *anims, int count);
/* TB_ERR_ARG: NULL anims or memory, count < 0, size too small, a NULL or
 * repeated animator. */
tb_result tb_spring_crowd_init(tb_spring_crowd **out, void *memory, size_t size,
                               tb_spring_animator *const *anims, int count, tb_error *err);
/* One frame of every animator, as tb_spring_step_batch_fast(items, count,
 * dt_s) would step them: items[i].anim must be the crowd's animator i, in
 * the order given at init, and count the crowd's count. */
void tb_spring_crowd_step(tb_spring_crowd *crowd, const tb_spring_batch_item *items, int count,
                          float dt_s);
/* Writes the lanes' state back into the animators; the next step gathers
 * it (and the chains' parameters) again. */
void tb_spring_crowd_sync(tb_spring_crowd *crowd);

/* Chains solved at once by tb_spring_step_batch() (1: the scalar loop), and
 * which code it runs: "avx512", "avx2", "vector" (the compiler's baseline
 * vectors) or "scalar". */
int tb_spring_batch_vector_width(void);
const char *tb_spring_batch_path(void);

/* Forgets the motion: the next step() puts every chain at its rest pose. */
void tb_spring_reset(tb_spring_animator *anim);

/* Parameters of one chain, at any time; takes effect at the next step.
 * Errors: TB_ERR_ARG with err->where naming the field
 * ("tb_spring_params.rest_curve") when a value is out of range. */
tb_result tb_spring_set_params(tb_spring_animator *anim, int chain, const tb_spring_params *p,
                               tb_error *err);
/* Resolved parameters of one chain. */
void tb_spring_get_params(const tb_spring_animator *anim, int chain, tb_spring_params *out);

int tb_spring_chain_count(const tb_spring_animator *anim);
void tb_spring_get_chain_info(const tb_spring_animator *anim, int chain, tb_spring_chain_info *out);
void tb_spring_get_link_state(const tb_spring_animator *anim, int chain, int link,
                          tb_spring_link_state *out);

/* The motion every link carries from one sub-step to the next (its
 * particle, its velocity and its bend), TB_SPRING_STATE_FLOATS floats a
 * link, chains and links in order (tb_spring_state_count floats in all):
 * for a caller that saves the motion and puts it back (a replay, a
 * rollback, the bake's warm-up, which extrapolates it). tb_spring_state_set
 * takes such a vector back, each bend normalised (the identity when it
 * vanishes or is not finite, and a non-finite particle or velocity is
 * taken as the link at rest on its last target); the chains' anchors and
 * whether they are warm stay as they are, so the vector should be this
 * animator's at the same anchor pose. The outputs (local rotations, link
 * states) follow at the next step. */
#define TB_SPRING_STATE_FLOATS 10
int tb_spring_state_count(const tb_spring_animator *anim);
void tb_spring_state_get(const tb_spring_animator *anim, float *out);
void tb_spring_state_set(tb_spring_animator *anim, const float *in);

#ifdef __cplusplus
}
#endif
#endif
