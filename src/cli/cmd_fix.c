/* tailbone fix IN -o OUT — the whole job (SPEC A, D): detect → chain →
 * (transfer clips) → bake the tail into every clip → write → report, with
 * the stretch table of the result (SPEC C). */
#ifdef __linux__
#define _GNU_SOURCE /* syscall (a thread's own nice value) */
#include <sys/resource.h>
#include <sys/syscall.h>
#endif
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/fbx.h"
#include "core/base.h"
#include "passes/pool_internal.h"
#include "tailbone/fix.h"
#include "tailbone/vrm.h"


/* Splits "a,b,c" into a NULL-terminated array of strings inside `buf`. */
static const char **tb__split(char *buf, int *count)
{
    int n = 1;
    for (char *p = buf; *p; p++)
        n += *p == ',';
    const char **list = calloc((size_t)n + 1, sizeof *list);
    int k = 0;
    for (char *tok = strtok(buf, ","); tok && list; tok = strtok(NULL, ","))
        if (*tok)
            list[k++] = tok;
    if (count)
        *count = k;
    return list;
}

/* The value of the option p has just returned, a number in [lo, hi]. */
static int tb__float_arg(const tb_cli_args *p, float lo, float hi, float *out)
{
    char opt[64];
    tb_cli_args_option(p, opt, sizeof opt);
    const char *v = p->value;
    char *end;
    double x = strtod(v, &end);
    if (*end || !(x >= lo && x <= hi))
        return tb_cli_usage_error("fix", "%s needs a number in [%g, %g], not '%s'", opt, lo, hi, v);
    *out = (float)x;
    return 0;
}

static void tb__print_bake(const tb_fix_report *rep)
{
    const tb_bake_report *b = &rep->bake;
    if (b->chain_count == 0) {
        printf(rep->bake_existing ? "bake: the skeleton has no tail chain of its own (tailbone info lists them)\n"
                                  : "bake: no Tail_* chain, nothing to bake\n");
        return;
    }
    if (b->clip_count == 0) {
        printf("bake: %d chain(s), %d bone(s); the file has no clip to bake (the chain is in place for\n"
               "      clips added later: `tailbone fix OUT --clips LIB.glb`, or the runtime solver)\n",
               b->chain_count, b->bone_count);
        return;
    }
    printf("bake: %d chain(s), %d bone(s), ground at y = %.3g, %g scene unit(s) per metre;\n"
           "      result measured at 24 instants per clip\n",
           b->chain_count, b->bone_count, b->ground_y_m, b->world_units_per_m);
    printf("  %-18s %5s %6s %8s %7s | %-27s | %-16s | %s\n", "clip", "keys", "passes", "closure", "swing",
           "tail p95 / p99 / max / torn", "body p99 / max", "tip travel");
    char label[32];
    for (int c = 0; c < b->clip_count; c++) {
        const tb_bake_clip *bc = &b->clips[c];
        tb_cli_clip_label(bc->name, label, sizeof label, 18);
        if (bc->skipped) {
            printf("  %-18s skipped: %s\n", label, bc->reason);
            continue;
        }
        const tb_measure_result *r = NULL;
        for (int k = 0; k < rep->stretch_count; k++)
            if (rep->stretch[k].animation == bc->animation)
                r = &rep->stretch[k].result;
        printf("  %-18s %5d %4d%s %7.2f° %6.1f° |", label, bc->keys, bc->passes,
               bc->wraps ? " W" : bc->looping ? " L" : "  ", bc->closure_rad * TB_DEG_PER_RAD, bc->swing_rad * TB_DEG_PER_RAD);
        if (!r) {
            printf(" (not measured)\n");
            continue;
        }
        printf(" %5.2f / %4.2f / %4.2f / %4.1f%% | %5.2f / %5.2f    | %5.1f%% H\n", r->tail.p95, r->tail.p99, r->tail.max,
               100 * (isnan(r->tail.torn_frac) ? 0 : r->tail.torn_frac), r->body.p99, r->body.max,
               100 * r->tip_travel_h);
        if (r->seam.edges)
            printf("  %-18s %32s %5.2f / %4.2f / %4.2f / %4.1f%% |\n", "", "seam to body |", r->seam.p95, r->seam.p99,
                   r->seam.max, 100 * r->seam.torn_frac);
        if (bc->seam_spread_rad > 0)
            printf("  %-18s the loop start repeats every %d passes: a seam of %.2f° spread over the loop\n", "",
                   bc->period, bc->seam_spread_rad * TB_DEG_PER_RAD);
        for (int k = 0; k < rep->stretch_count; k++) {
            const tb_fix_stretch *s = &rep->stretch[k];
            if (s->animation != bc->animation || !s->bend_count)
                continue;
            printf("  %-18s largest bend per joint:", "");
            float lo = INFINITY, hi = 0;
            for (int q = 0; q < s->bend_count; q++) {
                float carried = s->bend_carried_rad[q];
                printf(" %.0f°%s", s->bend_rad[q] * TB_DEG_PER_RAD, carried > 0 && s->bend_rad[q] > carried ? "!" : "");
                lo = carried > 0 && carried < lo ? carried : lo;
                hi = carried > hi ? carried : hi;
            }
            if (hi > 0 && hi - lo < 0.5f * (float)TB_RAD_PER_DEG)
                printf("  (the weights carry %.0f°; ! past it: %d)", hi * TB_DEG_PER_RAD, s->bends_past_carried);
            else if (hi > 0)
                printf("  (the weights carry %.0f–%.0f°; ! past it: %d)", lo * TB_DEG_PER_RAD, hi * TB_DEG_PER_RAD,
                       s->bends_past_carried);
            printf("\n");
        }
    }
    printf("  (L = looping clip, W = looping clip that stops one frame before its start (the player\n"
           "   wraps); both warmed up until the loop start repeats. closure = largest angle of any tail\n"
           "   bone between its first and last key (L) or its state after the wrap (W); swing = largest\n"
           "   angle from the first key)\n");
    int tearing = 0;
    for (int k = 0; k < rep->stretch_count; k++)
        tearing += tb_fix_torn(&rep->stretch[k]) > 0;
    if (tearing && rep->zone_try_count)
        printf("hint: the tail skin still tears (ratio > 1.5 or < 0.67) in %d clip(s) with the widest blend\n"
               "      zone; --bend-limit lowers the bend per joint (docs/fix.md).\n",
               tearing);
    else if (tearing)
        printf("hint: the tail skin tears (ratio > 1.5 or < 0.67) in %d clip(s). A thick or coarse tail\n"
               "      folds at bent joints with a narrow blend; --blend-zone 0.5 blends across whole\n"
               "      segments (docs/fix.md), --bend-limit lowers the bend per joint.\n",
               tearing);
}

static void tb__help(void)
{
    printf("usage: tailbone fix IN -o OUT [options]\n"
           "       tailbone fix DIR_OR_FILE... -o OUTDIR [-j N] [--force] [options]   (batch)\n\n"
           "IN and OUT are .glb or .gltf, or .fbx (converted with Blender in background mode,\n"
           "$TAILBONE_BLENDER or `blender` on PATH; docs/blender.md).\n\n"
           "The whole job, from a broken rig to a file that plays right everywhere:\n"
           "  1. detect the appendages (as `tailbone detect`) and repair them:\n"
           "     a tail gets a bone chain Tail_1..Tail_K + Tail_End (a second tail TailB_*, ...)\n"
           "     and skin weights along it; a carried object on the spine is bound rigidly;\n"
           "     capes, skirts, ears and hair are left as rigged;\n"
           "  2. with --clips, transfer a clip library onto the character first (as `tailbone\n"
           "     retarget`);\n"
           "  3. bake the simulated tail into every clip as ordinary rotation keys:\n"
           "     looping clips are warmed up until the loop closes, others settle first;\n"
           "  4. write OUT and report: appendages, chain, bake, and the stretch table\n"
           "     (`tailbone measure`: tail, body, and the seam where a welded tail meets the body).\n"
           "Everything else in the file is kept; IN is never modified. When nothing needs\n"
           "changing, OUT is a lossless copy identical to `tailbone copy IN OUT`.\n\n"
           "IN may be - (stdin) and OUT - (stdout; the report then goes to stderr).\n\n"
           "  -o, --output OUT      the repaired GLB (required)\n"
           "  --report FILE.json    write the whole report as JSON\n"
           "  --preview PAGE.html   also write the preview page of IN and OUT side by side\n"
           "                        (as `tailbone preview IN OUT -o PAGE.html`)\n"
           "  --json                print the report as JSON instead of tables\n"
           "  -q, --quiet           print only errors\n"
           "  --progress            name each stage on stderr (the default on a terminal)\n"
           "  --in-place            allow -o to be IN itself (refused by default)\n"
           "  --allow-uri-outside   let a .gltf's external uri name a file outside its folder\n"
           "  -j, --jobs N          clips baked and measured at once, one thread each, and\n"
           "                        detection's rays on N threads (default and 0: one per\n"
           "                        CPU); the output is the same for any N\n"
           "batch (several inputs or a folder; docs/batch.md):\n"
           "  -o OUTDIR             each IN is written to OUTDIR under its own name (a folder's\n"
           "                        files, .glb/.gltf/.vrm at any depth, keep their relative path)\n"
           "  -j, --jobs N          files fixed at once, each in its own process (default 1; 0:\n"
           "                        one per CPU), each file's clips on its share of the cores\n"
           "  --force               redo files whose output is already newer than the input\n"
           "                        (skipped by default, so an interrupted batch resumes)\n"
           "  One line of JSON per file on stdout (status, tail found, figures, time), progress\n"
           "  and a summary table on stderr; a failing file never stops the others; exit status\n"
           "  0 only when every file succeeded or was already done.\n"
           "repair:\n"
           "  --mode chain|rigid    chain (default) or rigid: every tail vertex 1.0 on Hips\n"
           "  --rigid-wide          bind capes and skirts rigidly to their bone (never a default)\n"
           "  --pelvis NAME         the pelvis joint when no Hips role is recognised\n"
           "  --role ROLE=JOINT     give a role by hand (repeatable); Hips=NAME is --pelvis\n"
           "  --skin N              the skin to repair (default: the one with most vertices)\n"
           "  --blend-zone Z        blend half-width around each tail joint, in segments, from\n"
           "                        0.05 to 0.5 (whole segments). Default: 0.25, raised\n"
           "                        where the tail's ring spacing and radius need it; when a baked\n"
           "                        clip tears or passes p99 1.18 / max 1.30, 0.375, 0.5 and the\n"
           "                        plain 0.25 weights are tried on the same baked file (weights\n"
           "                        only) and the best kept (reported); a value pins it\n"
           "  --collar-band S       a tail welded into the body blends from the body's weights at\n"
           "                        its collar to the chain's over S segments. Default 0.5 (at least\n"
           "                        two rings), and 1 then 2 when the seam still tears; a value\n"
           "                        pins it (0: none)\n"
           "  --smooth-pieces       smooth chain weights on a segmented tail too; by default a tail\n"
           "                        made of separate pieces on a body of rigid pieces gets one\n"
           "                        bone per piece, like the body (docs/fix.md)\n"
           "clips:\n"
           "  --clips A.glb[,B.glb] transfer these files' clips onto the character first\n"
           "  --only NAME[,NAME]    only these clips (transfer and bake)\n"
           "  --foot-contact        transfer with foot contact (as `tailbone retarget`)\n"
           "  --no-bake             repair only; leave the clips as they are\n"
           "  --fps N               key rate of the baked tail (default 30)\n"
           "  --no-warmup-jump      warm loops up pass after pass only (by default, when the loop\n"
           "                        start approaches one state geometrically, the warm-up jumps to\n"
           "                        where that sequence ends: fewer passes, the same closing test)\n"
           "vrm (docs/vrm.md):\n"
           "  --vrm-springs         write the tail as VRM spring bones (VRMC_springBone for VRM 1.0 or\n"
           "                        a file without VRM, secondaryAnimation for VRM 0.x) that a VRM\n"
           "                        runtime animates, parameters mapped from the spring's, instead\n"
           "                        of baking it; every other extension is kept\n"
           "existing tail bones (an artist's Tail1…, b_Tail01…, *_tail_*; `tailbone info` lists them):\n"
           "  --bake-existing       no repair: drive the skeleton's own tail chains with the spring\n"
           "                        and bake them into every clip, the artist's weights kept; their\n"
           "                        rest pose is the artist's (carry 0, rest curve 1 unless given)\n"
           "  --keep-artist-keys W  blend: each key keeps share W (0..1) of the artist's keyed\n"
           "                        rotation; default 0 replaces the artist's tail keys\n"
           "spring (lengths in metres, scaled to the scene's unit — cm and mm scenes are\n"
           "recognised from the character's height; --ground-y is in scene units):\n"
           "  --root-hz F [0.9]  --tip-ratio R [0.5]  --damping Z [0.65]  --gravity G [1 m/s²]\n"
           "  --carry DEG [50]   --rest-curve B [0]   --coupling K [12 /s] --bend-limit DEG [30]\n"
           "  --ground-y Y [the soles: 0 for a model standing at the origin]   --no-ground\n"
           "  --bind-limit DEG      no joint bends further than DEG from its bind pose (--bend-limit\n"
           "                        counts from the spring's rest target; the fit sets this to what\n"
           "                        the weights carry)\n"
           "  --contact-keeps-limit ground contact never bends a joint past the bend limit (by\n"
           "                        default contact beats it; the fit turns it on when contact\n"
           "                        folds the skin past what the weights carry)\n"
           "  --no-solver-fit       never refit the bend limit / rest curve to what the weights carry\n"
           "                        (by default, when the best weights still tear, the job is baked\n"
           "                        once more with them fitted, and the better result kept)\n"
           "  --no-weight-fit       never fit the band's weights to the baked poses (by default,\n"
           "                        when the skin the repair touched still tears after that, the\n"
           "                        weights there are fitted to the clips' poses, kept if they tear less)\n");
}

static void tb__print_zones(const tb_fix_report *rep)
{
    printf("blend zone:");
    for (int i = 0; i < rep->zone_try_count; i++) {
        const tb_fix_zone_try *z = &rep->zone_tries[i];
        printf("%s %.3g", i ? ";" : "", z->blend_zone);
        if (z->collar_band > 0)
            printf(" (collar band %.3g%s%s%s%s%s)", z->collar_band, z->collar_ring ? ", collar ring halfway" : "",
                   z->spine_folded ? ", spine folded" : "", z->collar_carried ? ", collar carried" : "",
                   z->by_strain ? ", by strain" : "", z->fitted ? ", fitted to the poses" : "");
        else if (z->fitted)
            printf(" (fitted to the poses)");
        if (z->torn_clips)
            printf(" tore in %d clip(s) (worst %.1f%%)", z->torn_clips, 100 * z->worst_torn);
        else
            printf(" no tear");
        printf(", tail max %.2f", z->worst_max);
    }
    printf(" -> weights use %.3g", rep->blend_zone);
    if (rep->collar_band > 0)
        printf(", collar band %.3g", rep->collar_band);
    if (rep->repair.collar_changed)
        printf(", collar ring halfway");
    printf(" (default 0.25; wider blends spread a bend over more skin; each try re-weights the same\n"
           "  baked file: detection, transfer and bake ran once)\n");
}

static void tb__print_weights(const tb_fix_report *rep)
{
    if (rep->solver_fit_tried) {
        printf("solver fitted to the weights (the best weights still tore or passed the chain row):");
        if (rep->fit_bend_limit_rad > 0)
            printf(" bend limit %.0f°", rep->fit_bend_limit_rad * TB_DEG_PER_RAD);
        if (rep->fit_rest_curve >= 0)
            printf(" rest curve %.3g (the authored curve)", rep->fit_rest_curve);
        if (rep->fit_carry_rad >= 0)
            printf(" carry %.0f°", rep->fit_carry_rad * TB_DEG_PER_RAD);
        if (rep->fit_bind_limit_rad > 0)
            printf(" limit from the bind pose %.0f°", rep->fit_bind_limit_rad * TB_DEG_PER_RAD);
        printf(" -> %s (baked again on the same repaired document: detection and transfer ran once)\n",
               rep->solver_fit_kept ? "kept: it tears less" : "not kept: it does not tear less");
    }
    for (int i = 0; i < rep->weight_count; i++) {
        const tb_fix_weights *w = &rep->weights[i];
        if (!w->smooth)
            continue;
        printf("weights of appendage %d: rings every %.2f segment, radius %.2f segment -> blend zone %.3g, "
               "carries a %.0f° bend per joint within the chain row (inner side -18%%)\n",
               w->appendage, w->ring_seg, w->radius_seg, w->zone, w->carry_rad * TB_DEG_PER_RAD);
    }
}

/* --preview PAGE: the page of IN and OUT (cmd_preview.c). The command line it
 * shows is this one without the words hidden[i] marks (the spring options,
 * whose values the page's sliders add, and the options of this run only). */
static int tb__preview(const char *page, const char *in, const char *out, int argc, char **argv,
                       const unsigned char *hidden, const tb_bake_desc *bd, int quiet)
{
    char cmd[2048] = "tailbone fix";
    for (int i = 1; i < argc; i++) {
        if (hidden[i])
            continue;
        const char *a = argv[i];
        int quote = strpbrk(a, " \t'\"$&|;<>()*?") != NULL;
        if (strlen(cmd) + strlen(a) + 4 < sizeof cmd) {
            strcat(cmd, quote ? " '" : " ");
            strcat(cmd, a);
            if (quote)
                strcat(cmd, "'");
        }
    }
    int rc = tb_cli_write_preview(page, in, out, cmd, bd);
    if (rc == TB_EXIT_OK && !quiet)
        fprintf(stderr, "tailbone fix: preview page: %s\n", page);
    return rc;
}

/* Progress on stderr, for a person watching a terminal. */
static void tb__progress(void *user, const char *stage)
{
    fprintf(stderr, "tailbone fix: %s: %s\n", (const char *)user, stage);
}

/* Each stage of the job (tb_fix_desc.progress): glibc's mmap threshold
 * set for it. The repair (detection and the weights) takes each block of
 * 1 MiB or more from a mapping of its own, given back when freed: its
 * large scratch (a 772k-vertex character's grids, graphs and per-vertex
 * arrays, one after the other) then does not stay resident in the heap's
 * freed middle, where the peaks of its steps added up (dense tail_leg:
 * 238.3 -> 223 MiB, docs/fix.md). The later stages, which take and give
 * back the same blocks clip after clip and try after try, keep them in
 * the heap up to 32 MiB (glibc's own ceiling): a fresh mapping would fault
 * every page in again (4 s of system time more at 772k). */
static void tb__fix_stage(void *user, const char *stage)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, strcmp(stage, "repair") ? 32 << 20 : 1 << 20);
#endif
    const char *in = user;
    if (in) /* --progress */
        tb__progress(user, stage);
}

/* What the command line asks of fix, filled by tb__fix_options. */
typedef struct tb__fix_opts {
    const char *in, *out, *report, *preview;
    char *clips_arg, *only_arg;
    int as_json, quiet, no_bake, progress;
    int foot_contact, rest_curve_given, no_solver_fit, no_weight_fit, vrm_springs;
    int jobs, jobs_given, force, inputs_given; /* batch: files at once; one file: threads */
    tb_appendage_desc d;
    const char *roles[TB_CLI_MAX_ROLES];
    tb_bake_desc bd;
} tb__fix_opts;

/* fix's long-only options (the letters: -h -o -q -j) */
enum {
    JSON = TB_CLI_LONG, FORCE, PROGRESS, NO_BAKE, NO_SOLVER_FIT, NO_WEIGHT_FIT, NO_WARMUP_JUMP, VRM_SPRINGS, BAKE_EXISTING, NO_GROUND,
    FOOT_CONTACT, SMOOTH_PIECES, CONTACT_KEEPS_LIMIT, REPORT, MODE, CLIPS, ONLY, FPS, PREVIEW, ROOT_HZ, TIP_RATIO, DAMPING,
    GRAVITY, CARRY, REST_CURVE, COUPLING, BEND_LIMIT, BIND_LIMIT, GROUND_Y, BLEND_ZONE, COLLAR_BAND, KEEP_ARTIST_KEYS
};

/* What an option is beyond its value: BATCH, one a batch takes for itself
 * (batch.c passes the others on to every file's fix); HIDE, one the preview
 * page's command line leaves out (the spring options, whose values its
 * sliders add, and the options of this run only). */
enum { BATCH = 1, HIDE = 2 };

/* fix's options, the one list of them (--pelvis/--role/--skin/--rigid-wide
 * follow, from TB_CLI_APPENDAGE_OPTIONS). */
static const struct tb__fix_row {
    const char *name;
    int has_arg, key;
    unsigned char marks;
} tb__fix_rows[] = {
    {"help", no_argument, 'h', 0},
    {"output", required_argument, 'o', BATCH},
    {"quiet", no_argument, 'q', BATCH | HIDE},
    {"jobs", required_argument, 'j', BATCH | HIDE},
    {"json", no_argument, JSON, HIDE},
    {"force", no_argument, FORCE, BATCH | HIDE},
    {"progress", no_argument, PROGRESS, BATCH | HIDE},
    {"no-bake", no_argument, NO_BAKE, 0},
    {"no-solver-fit", no_argument, NO_SOLVER_FIT, 0},
    {"no-weight-fit", no_argument, NO_WEIGHT_FIT, 0},
    {"no-warmup-jump", no_argument, NO_WARMUP_JUMP, 0},
    {"vrm-springs", no_argument, VRM_SPRINGS, 0},
    {"bake-existing", no_argument, BAKE_EXISTING, 0},
    {"no-ground", no_argument, NO_GROUND, HIDE},
    {"contact-keeps-limit", no_argument, CONTACT_KEEPS_LIMIT, HIDE},
    {"foot-contact", no_argument, FOOT_CONTACT, 0},
    {"smooth-pieces", no_argument, SMOOTH_PIECES, 0},
    {"report", required_argument, REPORT, HIDE},
    {"mode", required_argument, MODE, 0},
    {"clips", required_argument, CLIPS, 0},
    {"only", required_argument, ONLY, 0},
    {"fps", required_argument, FPS, 0},
    {"preview", required_argument, PREVIEW, HIDE},
    {"root-hz", required_argument, ROOT_HZ, HIDE},
    {"tip-ratio", required_argument, TIP_RATIO, HIDE},
    {"damping", required_argument, DAMPING, HIDE},
    {"gravity", required_argument, GRAVITY, HIDE},
    {"carry", required_argument, CARRY, HIDE},
    {"rest-curve", required_argument, REST_CURVE, HIDE},
    {"coupling", required_argument, COUPLING, HIDE},
    {"bend-limit", required_argument, BEND_LIMIT, HIDE},
    {"bind-limit", required_argument, BIND_LIMIT, HIDE},
    {"ground-y", required_argument, GROUND_Y, HIDE},
    {"blend-zone", required_argument, BLEND_ZONE, 0},
    {"collar-band", required_argument, COLLAR_BAND, 0},
    {"keep-artist-keys", required_argument, KEEP_ARTIST_KEYS, 0},
};
#define TB__FIX_ROWS ((int)(sizeof tb__fix_rows / sizeof *tb__fix_rows))

static unsigned char tb__fix_marks(int key)
{
    for (int i = 0; i < TB__FIX_ROWS; i++)
        if (tb__fix_rows[i].key == key)
            return tb__fix_rows[i].marks;
    return 0;
}

/* The run's own options: files, output, threads. Each tb__fix_take_*
 * returns -1 when the key is not its group's, else 0 or a usage exit code. */
static int tb__fix_take_run(tb__fix_opts *o, int c, const tb_cli_args *p)
{
    const char *v = p->value;
    float f = 0;
    int e = 0;
    switch (c) {
    case TB_CLI_OPERAND:
        o->inputs_given++;
        if (!o->in)
            o->in = v;
        break;
    case 'o':
        o->out = v;
        break;
    case 'q':
        o->quiet = 1;
        break;
    case 'j':
        e = tb__float_arg(p, 0, 4096, &f);
        o->jobs = (int)f;
        o->jobs_given = 1;
        break;
    case JSON:
        o->as_json = 1;
        break;
    case FORCE:
        o->force = 1;
        break;
    case PROGRESS:
        o->progress = 1;
        break;
    case REPORT:
        o->report = v;
        break;
    case PREVIEW:
        o->preview = v;
        break;
    default:
        return -1;
    }
    return e;
}

/* Repair, clips, VRM and existing tail bones. */
static int tb__fix_take_job(tb__fix_opts *o, int c, const tb_cli_args *p)
{
    const char *v = p->value;
    float f = 0;
    int e = 0;
    switch (c) {
    case NO_BAKE:
        o->no_bake = 1;
        break;
    case NO_SOLVER_FIT:
        o->no_solver_fit = 1;
        break;
    case NO_WEIGHT_FIT:
        o->no_weight_fit = 1;
        break;
    case NO_WARMUP_JUMP:
        o->bd.no_warmup_jump = 1;
        break;
    case VRM_SPRINGS:
        o->vrm_springs = 1;
        break;
    case BAKE_EXISTING:
        o->bd.existing = 1;
        break;
    case FOOT_CONTACT:
        o->foot_contact = 1;
        break;
    case SMOOTH_PIECES:
        o->d.smooth_pieces = 1;
        break;
    case CLIPS:
        o->clips_arg = (char *)v;
        break;
    case ONLY:
        o->only_arg = (char *)v;
        break;
    case MODE:
        if (!strcmp(v, "chain"))
            o->d.mode = TB_FIX_CHAIN;
        else if (!strcmp(v, "rigid"))
            o->d.mode = TB_FIX_RIGID;
        else
            e = tb_cli_usage_error("fix", "--mode is chain or rigid, not '%s'", v);
        break;
    case COLLAR_BAND:
        e = tb__float_arg(p, 0, 2, &f);
        o->d.collar_band = f > 0 ? f : -1;
        break;
    case BLEND_ZONE:
        e = tb__float_arg(p, 0.05f, 0.5f, &o->d.blend_zone);
        break;
    case FPS:
        e = tb__float_arg(p, 1, 1000, &o->bd.fps);
        break;
    case KEEP_ARTIST_KEYS:
        e = tb__float_arg(p, 0, 1, &o->bd.existing_keep);
        break;
    default:
        return -1;
    }
    return e;
}

/* The spring: a value of 0 that means "none" is TB_SPRING_ZERO, degrees
 * become radians. */
static int tb__fix_take_spring(tb__fix_opts *o, int c, const tb_cli_args *p)
{
    tb_spring_params *sp = &o->bd.spring.params;
    float f = 0;
    int e = 0;
    switch (c) {
    case NO_GROUND:
        sp->ground_off = 1;
        break;
    case CONTACT_KEEPS_LIMIT:
        sp->contact_keeps_limit = 1;
        break;
    case ROOT_HZ:
        e = tb__float_arg(p, 0.01f, 100, &sp->root_hz);
        break;
    case TIP_RATIO:
        e = tb__float_arg(p, 0.01f, 10, &sp->tip_ratio);
        break;
    case DAMPING:
        e = tb__float_arg(p, 0, 10, &f);
        sp->damping_ratio = f > 0 ? f : TB_SPRING_ZERO;
        break;
    case GRAVITY:
        e = tb__float_arg(p, 0, 100, &f);
        sp->gravity_mps2 = f > 0 ? f : TB_SPRING_ZERO;
        break;
    case CARRY:
        e = tb__float_arg(p, 0, 180, &f);
        sp->carry_rad = f > 0 ? (float)(f * TB_RAD_PER_DEG) : TB_SPRING_ZERO;
        break;
    case REST_CURVE:
        e = tb__float_arg(p, 0, 1, &sp->rest_curve);
        o->rest_curve_given = 1;
        break;
    case COUPLING:
        e = tb__float_arg(p, 0, 1000, &f);
        sp->coupling_per_s = f > 0 ? f : TB_SPRING_ZERO;
        break;
    case BEND_LIMIT:
        e = tb__float_arg(p, 1, 180, &f);
        sp->bend_limit_rad = (float)(f * TB_RAD_PER_DEG);
        break;
    case BIND_LIMIT:
        e = tb__float_arg(p, 1, 180, &f);
        sp->bind_limit_rad = (float)(f * TB_RAD_PER_DEG);
        break;
    case GROUND_Y:
        e = tb__float_arg(p, -1e6f, 1e6f, &sp->ground_y_m);
        o->bd.ground_as_given = 1;
        break;
    default:
        return -1;
    }
    return e;
}

/* Parses argv into o; mark[i] is what argv[i] is to a batch (batch.c),
 * hidden[i] whether the preview page's command line leaves it out. Returns
 * -1 to go on, else the exit code (help printed, or a usage error). */
static int tb__fix_options(tb__fix_opts *o, int argc, char **argv, unsigned char *mark, unsigned char *hidden)
{
    memset(o, 0, sizeof *o);
    o->progress = isatty(2); /* stages on stderr when a person watches */
    o->jobs = 1;
    o->d.roles = o->roles;
    static const struct option appendage[] = {TB_CLI_APPENDAGE_OPTIONS, {0}};
    struct option opts[TB__FIX_ROWS + sizeof appendage / sizeof *appendage];
    for (int i = 0; i < TB__FIX_ROWS; i++)
        opts[i] = (struct option){tb__fix_rows[i].name, tb__fix_rows[i].has_arg, NULL, tb__fix_rows[i].key};
    memcpy(opts + TB__FIX_ROWS, appendage, sizeof appendage);
    tb_cli_args p;
    tb_cli_args_init(&p, "fix", argc, argv, "ho:qj:", opts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        unsigned char marks = tb__fix_marks(c); /* none for an operand or a usage error */
        for (int k = p.first; k < p.next; k++) {
            mark[k] = c == TB_CLI_OPERAND ? TB_CLI_ARG_INPUT : marks & BATCH ? TB_CLI_ARG_BATCH : TB_CLI_ARG_PASS;
            hidden[k] = (marks & HIDE) != 0;
        }
        if (c == TB_CLI_BAD)
            return TB_EXIT_USAGE;
        if (c == 'h') {
            tb__help();
            return TB_EXIT_OK;
        }
        int e = tb__fix_take_run(o, c, &p);
        if (e < 0)
            e = tb__fix_take_job(o, c, &p);
        if (e < 0)
            e = tb__fix_take_spring(o, c, &p);
        if (e < 0)
            e = tb_cli_appendage_option("fix", c, p.value, &o->d);
        if (e)
            return e;
    }
    return -1;
}

/* The combinations fix refuses, before anything is read. Returns -1 to go
 * on, else the usage exit code. */
static int tb__fix_check(const tb__fix_opts *o)
{
    if (!o->in || !o->out)
        return tb_cli_usage_error("fix", "needs IN and -o OUT");
    if (o->bd.existing_keep > 0 && !o->bd.existing)
        return tb_cli_usage_error("fix", "--keep-artist-keys goes with --bake-existing");
    if (o->vrm_springs && (o->no_bake || o->bd.existing))
        return tb_cli_usage_error("fix", "--vrm-springs excludes --no-bake and --bake-existing");
    if (o->bd.existing && o->no_bake)
        return tb_cli_usage_error("fix", "--bake-existing and --no-bake exclude each other");
    return -1;
}

/* Batch mode (batch.c): several inputs, a folder in, or a folder out (one
 * that exists, or a name ending in '/'). */
static int tb__fix_is_batch(const tb__fix_opts *o)
{
    const char *out = o->out;
    return o->inputs_given > 1 || tb_cli_is_dir(o->in) || tb_cli_is_dir(out) || (out[0] && out[strlen(out) - 1] == '/');
}

/* One file's job: what it holds from the first read to the exit. */
typedef struct tb__fix_job {
    const tb__fix_opts *o;
    char *only_buf, *clips_buf;
    const char **only, **lib_paths;
    int only_count, lib_count;
    tb_doc **libs, *in_doc, *doc;
    tb_fix_report rep;
    tb_vrm_report vrep;
    json_t *j;
    tb_cli_fbx fbx; /* IN or OUT in .fbx: converted through Blender (cli/fbx.c) */
    const char *load_in, *save_out;
    /* The libraries loaded on a thread of their own while IN loads and is
     * repaired (tb__fix_load): their errors and warnings, and IN's, are
     * printed when the job waits for them (tb__fix_libs_wait), in the order
     * a load one file after the other prints them. */
    pthread_t lib_thread;
    int lib_pending;        /* the thread runs or has not been joined */
    int libs_told;          /* the libraries' and IN's messages printed */
    int libs_failed;        /* a library did not load (its error printed) */
    tb_error *lib_errs;     /* one per library */
    tb_error in_err;        /* IN's load error (in_doc NULL) */
} tb__fix_job;

/* The libraries' thread: each in turn, as tb__fix_load would, stopping at
 * the first that fails; prints nothing. It has until the clips' transfer,
 * after the repair, while the repair's own threads are the job's longest
 * path: on Linux it takes a lower priority (nice 5, about a third of a
 * shared core), so that on 2 cores it fills what the repair leaves
 * (Wolf + Soldier at -j 2, 60 interleaved rounds: 37.2 -> 35.5 ms median;
 * in 7 of 8 timed runs the libraries were in before the repair ended, the
 * eighth waited 0.7 ms for them). */
static void *tb__fix_libs_thread(void *arg)
{
    tb__fix_job *job = arg;
#ifdef __linux__
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 5); /* on Linux a thread id: this thread alone */
#endif
    for (int k = 0; k < job->lib_count; k++)
        if (!(job->libs[k] = tb_cli_load_silent(job->lib_paths[k], &job->lib_errs[k])))
            break;
    return NULL;
}

/* Waits for the libraries' thread (once) and prints what a load one file
 * after the other would have: each library's warnings up to the first that
 * failed and its error; then, when they all loaded, IN's warnings or
 * error. Returns TB_EXIT_FAIL when a library failed. */
static int tb__fix_libs_wait(tb__fix_job *job)
{
    if (job->lib_pending) {
        pthread_join(job->lib_thread, NULL);
        job->lib_pending = 0;
    }
    if (job->libs_told)
        return job->libs_failed ? TB_EXIT_FAIL : TB_EXIT_OK;
    job->libs_told = 1;
    int quiet = job->o->quiet;
    for (int k = 0; k < job->lib_count; k++)
        if (!tb_cli_load_tell(job->lib_paths[k], job->libs[k], &job->lib_errs[k], quiet)) {
            job->libs_failed = 1;
            return TB_EXIT_FAIL;
        }
    tb_cli_load_tell(job->load_in, job->in_doc, &job->in_err, quiet);
    return TB_EXIT_OK;
}

/* tb_fix_desc.libraries_ready: the job is about to transfer the clips. */
static tb_result tb__fix_libs_ready(void *user, tb_error *err)
{
    tb__fix_job *job = user;
    if (tb__fix_libs_wait(job) == TB_EXIT_OK)
        return TB_OK;
    return tb__fail(err, TB_ERR_IO, "--clips", "a clip library did not load (its error printed)");
}

/* Builds that check for leaks (AddressSanitizer's) free the job's memory
 * before the process exits; the others leave it to the system, which takes
 * it back at once: freeing the documents' JSON trees node by node is the
 * last millisecond or two of a fix (the Wolf with the Soldier's clips:
 * ~6M instructions). A fix is always the last job of its process: a batch
 * runs each file in a process of its own (batch.c). */
#if defined(__SANITIZE_ADDRESS__)
#define TB__FREE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TB__FREE_AT_EXIT 1
#endif
#endif
#ifndef TB__FREE_AT_EXIT
#define TB__FREE_AT_EXIT 0
#endif

/* The job's end: its threads joined and its temporary files removed, then
 * (TB__FREE_AT_EXIT) its memory freed. */
static void tb__fix_job_free(tb__fix_job *job)
{
    if (job->lib_pending)
        pthread_join(job->lib_thread, NULL);
    tb_cli_fbx_close(&job->fbx);
    if (!TB__FREE_AT_EXIT)
        return;
    free(job->lib_errs);
    json_decref(job->j);
    tb_fix_report_free(&job->rep);
    tb_doc_free(job->doc);
    tb_doc_free(job->in_doc);
    for (int k = 0; k < job->lib_count; k++)
        tb_doc_free(job->libs[k]);
    free(job->libs);
    free(job->only);
    free(job->lib_paths);
    free(job->only_buf);
    free(job->clips_buf);
}

/* Stage 1: the --only and --clips lists, and every output checked against
 * every input before any work. */
static int tb__fix_prepare(tb__fix_job *job)
{
    const tb__fix_opts *o = job->o;
    job->only_buf = o->only_arg ? strdup(o->only_arg) : NULL;
    job->clips_buf = o->clips_arg ? strdup(o->clips_arg) : NULL;
    job->only = job->only_buf ? tb__split(job->only_buf, &job->only_count) : NULL;
    job->lib_paths = job->clips_buf ? tb__split(job->clips_buf, &job->lib_count) : NULL;
    job->libs = calloc((size_t)job->lib_count + 1, sizeof *job->libs);
    job->load_in = o->in;
    job->save_out = o->out;
    int n = job->lib_count + 1, rc;
    const char **inputs = calloc((size_t)n, sizeof *inputs);
    if (!inputs || !job->libs) {
        free(inputs);
        fprintf(stderr, "tailbone: out of memory [oom]\n");
        return TB_EXIT_FAIL;
    }
    inputs[0] = o->in;
    for (int k = 0; k < job->lib_count; k++)
        inputs[k + 1] = job->lib_paths[k];
    rc = tb_cli_check_output(o->out, inputs, n);
    if (rc == TB_EXIT_OK && o->report)
        rc = tb_cli_check_output(o->report, inputs, n);
    if (rc == TB_EXIT_OK && o->preview)
        rc = tb_cli_check_output(o->preview, inputs, n);
    if (rc == TB_EXIT_OK && o->preview)
        rc = tb_cli_preview_check(o->preview); /* before any work */
    free(inputs);
    return rc;
}

/* Stage 2: IN (through Blender when .fbx) and the clip libraries. */
static int tb__fix_load(tb__fix_job *job)
{
    const tb__fix_opts *o = job->o;
    int rc = tb_cli_fbx_open(&job->fbx, o->in, o->out, &job->load_in, &job->save_out);
    if (rc != TB_EXIT_OK)
        return rc;
    /* With more than one thread, the libraries load on a thread of their
     * own while IN loads and is repaired, and the job waits for them just
     * before the transfer; not when a stage line on stderr would come
     * between their messages, nor when one of them is stdin */
    int overlap = o->bd.threads > 1 && job->lib_count > 0 && !(o->progress && !o->quiet);
    for (int k = 0; k < job->lib_count; k++)
        overlap &= !tb_cli_is_stdio(job->lib_paths[k]);
    if (overlap)
        json_object_seed(0); /* jansson's hash seed set before a second thread parses (as its docs ask) */
    if (overlap && (job->lib_errs = calloc((size_t)job->lib_count, sizeof *job->lib_errs)) &&
        tb__thread_start(&job->lib_thread, tb__fix_libs_thread, job)) {
        job->lib_pending = 1;
        job->in_doc = tb_cli_load_silent(job->load_in, &job->in_err);
        if (!job->in_doc) {
            tb__fix_libs_wait(job); /* a library's error, else IN's */
            return TB_EXIT_FAIL;
        }
        return TB_EXIT_OK;
    }
    job->libs_told = 1;
    for (int k = 0; k < job->lib_count; k++)
        if (!(job->libs[k] = tb_cli_load(job->lib_paths[k], o->quiet)))
            return TB_EXIT_FAIL;
    if (!(job->in_doc = tb_cli_load(job->load_in, o->quiet))) /* its warnings matter: shown unless -q */
        return TB_EXIT_FAIL;
    return TB_EXIT_OK;
}

/* The file a failed run's error is printed as: a bad clip name is the
 * library's or the user's, not IN's. */
static const char *tb__fix_whose(const tb__fix_job *job, const tb_error *err)
{
    const char *clips_arg = job->o->clips_arg;
    const char *whose = err->code == TB_ERR_ARG && clips_arg ? clips_arg : job->o->in;
    if (!strcmp(err->where, "--clips") && clips_arg)
        whose = clips_arg;
    for (int k = 0; k < job->lib_count; k++) {
        size_t n = strlen(job->lib_paths[k]);
        if (!strncmp(err->where, job->lib_paths[k], n) && (err->where[n] == 0 || err->where[n] == ':'))
            whose = err->where; /* a clip library's fault: printed as its file */
    }
    return whose;
}

/* Stage 3: the job itself (tb_fix_run), then the VRM springs if asked. */
static int tb__fix_work(tb__fix_job *job)
{
    const tb__fix_opts *o = job->o;
    tb_error err = {0};
    tb_fix_desc fd;
    memset(&fd, 0, sizeof fd);
    fd.repair = o->d;
    fd.bake = o->bd;
    fd.no_bake = o->no_bake || o->vrm_springs; /* a VRM runtime moves the tail itself */
    fd.libraries = job->libs;
    fd.library_count = job->lib_count;
    fd.only = job->only;
    fd.foot_contact = o->foot_contact;
    fd.rest_curve_given = o->rest_curve_given;
    fd.no_solver_fit = o->no_solver_fit;
    fd.no_weight_fit = o->no_weight_fit;
    fd.progress = tb__fix_stage;
    fd.progress_user = o->progress && !o->quiet ? (void *)o->in : NULL;
    if (job->lib_pending) {
        fd.libraries_ready = tb__fix_libs_ready;
        fd.libraries_user = job;
    }
    tb_result r = tb_fix_run(&job->doc, job->in_doc, &fd, &job->rep, &err);
    if (!job->libs_told && tb__fix_libs_wait(job) != TB_EXIT_OK) /* the job ended before the transfer */
        return TB_EXIT_FAIL;
    if (job->libs_failed)
        return TB_EXIT_FAIL; /* the library's error is printed */
    if (r != TB_OK)
        return tb_cli_error(tb__fix_whose(job, &err), &err);
    if (o->vrm_springs && tb_vrm_springs(job->doc, &o->bd, 60.0f, &job->vrep, &err) != TB_OK)
        return tb_cli_error(o->in, &err);
    return TB_EXIT_OK;
}

/* The report as JSON: the library's, the VRM springs, and the files. */
static json_t *tb__fix_json(const tb__fix_job *job)
{
    const tb__fix_opts *o = job->o;
    const tb_vrm_report *vrep = &job->vrep;
    json_t *j = tb_fix_report_json(&job->rep);
    if (o->vrm_springs)
        json_object_set_new(j, "vrm_springs",
                            json_pack("{s:i,s:i,s:i,s:f,s:{s:i,s:f,s:f,s:f,s:f}}", "version", vrep->version, "chains",
                                      vrep->chains, "joints", vrep->joints, "runtime_hz", (double)vrep->hz, "fit",
                                      "clips", vrep->fit_clips, "tips_before_m", (double)vrep->fit_before_m,
                                      "tips_after_m", (double)vrep->fit_after_m, "tip_before_m",
                                      (double)vrep->fit_tip_before_m, "tip_after_m", (double)vrep->fit_tip_after_m));
    if (o->vrm_springs) {
        json_t *fj = json_object_get(json_object_get(j, "vrm_springs"), "fit");
        json_object_set_new(fj, "swing_before_m", json_real(vrep->fit_swing_before_m));
        json_object_set_new(fj, "swing_after_m", json_real(vrep->fit_swing_after_m));
        json_object_set_new(fj, "swing_baked_m", json_real(vrep->fit_swing_baked_m));
        json_object_set_new(fj, "evaluations", json_integer(vrep->fit_evaluations));
    }
    json_object_set_new(j, "file", json_string(o->in));
    json_object_set_new(j, "output", json_string(o->out));
    return j;
}

/* Stage 4: the report file, OUT (back to .fbx if asked), the preview page. */
static int tb__fix_write(tb__fix_job *job, int argc, char **argv, const unsigned char *hidden)
{
    const tb__fix_opts *o = job->o;
    int rc = TB_EXIT_OK;
    if (o->report || (o->as_json && !o->quiet)) /* built only where it is written */
        job->j = tb__fix_json(job);
    if (o->report && (rc = tb_cli_save_json(o->report, job->j, JSON_INDENT(2) | JSON_REAL_PRECISION(6))) != TB_EXIT_OK)
        return rc;
    if ((rc = tb_cli_save_doc(job->doc, job->save_out)) != TB_EXIT_OK ||
        (rc = tb_cli_fbx_finish(&job->fbx, o->out)) != TB_EXIT_OK)
        return rc;
    if (o->preview)
        rc = tb__preview(o->preview, o->in, o->out, argc, argv, hidden, &o->bd, o->quiet);
    return rc;
}

/* Stage 5: the report as tables on stdout. */
static void tb__fix_print(const tb__fix_job *job)
{
    const tb__fix_opts *o = job->o;
    const tb_fix_report *rep = &job->rep;
    const tb_vrm_report *vrep = &job->vrep;
    printf("file: %s\n", o->in);
    if (!rep->bake_existing)
        tb_cli_print_appendages(stdout, &rep->repair, rep->repair.changed);
    printf("%s\n", rep->repair.message);
    if (rep->repair.changed)
        printf("weights changed outside the repaired appendages: %zu vertices%s\n", rep->repair.changed_outside,
               rep->repair.changed_outside ? " (unexpected: please report)" : " (the body is untouched)");
    if (rep->repair.collar_changed)
        printf("welded collar: %zu vertices of the ring where the tail joins the body go halfway to the "
               "chain's root weights\n",
               rep->repair.collar_changed);
    if (rep->retarget)
        printf("clips transferred from %s\n", o->clips_arg);
    tb__print_weights(rep);
    if (rep->zone_try_count)
        tb__print_zones(rep);
    if (rep->baked)
        tb__print_bake(rep);
    if (o->vrm_springs)
        printf("vrm: %d tail chain(s), %d bone(s) written as %s (a runtime at %g Hz; not baked)\n", vrep->chains,
               vrep->joints, vrep->version ? "VRMC_springBone springs" : "VRM 0.x secondaryAnimation bone groups",
               vrep->hz);
    if (o->vrm_springs && vrep->fit_clips)
        printf("vrm: settings fitted on %d clip(s): tail tip %.3f m -> %.3f m from the baked motion "
               "(mean, a model of the runtime)\n",
               vrep->fit_clips, (double)vrep->fit_tip_before_m, (double)vrep->fit_tip_after_m);
    printf("%s %s\n", rep->changed ? "wrote" : "nothing to change; wrote a lossless copy to", o->out);
}

/* One file: prepare → load → work → write → print. */
static int tb__fix_one(tb__fix_opts *o, int argc, char **argv, const unsigned char *hidden)
{
    /* its clips baked and measured on -j threads (default, and 0: one per
     * CPU); the output is the same bytes for any count */
    int jobs = o->jobs;
    if (!o->jobs_given || jobs <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cores > 0 ? (int)(cores < 1024 ? cores : 1024) : 1;
    }
    o->bd.threads = jobs;
    o->d.threads = jobs; /* and detection's rays (the same report for any count) */
    if (o->preview && (tb_cli_is_stdio(o->in) || tb_cli_is_stdio(o->out)))
        return tb_cli_usage_error("fix", "--preview reads IN and OUT back: they must be files, not -");
    if (tb_cli_is_stdio(o->out))
        tb_cli_stdout_reserve();
    tb__fix_job job;
    memset(&job, 0, sizeof job);
    job.o = o;
    int rc = tb__fix_prepare(&job);
    if (rc == TB_EXIT_OK)
        rc = tb__fix_load(&job);
    if (rc == TB_EXIT_OK)
        rc = tb__fix_work(&job);
    if (rc == TB_EXIT_OK)
        rc = tb__fix_write(&job, argc, argv, hidden);
    if (rc == TB_EXIT_OK && !o->quiet) {
        if (o->as_json) {
            char *s = json_dumps(job.j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            puts(s);
            free(s);
        } else {
            tb__fix_print(&job);
        }
    }
    tb__fix_job_free(&job);
    return rc;
}

int tb_cmd_fix(int argc, char **argv)
{
    /* mark[i]: what argv[i] is to a batch (batch.c); hidden[i]: left out of
     * the command line the preview page shows */
    unsigned char *mark = calloc(2 * ((size_t)argc + 1), 1);
    if (!mark)
        return TB_EXIT_FAIL;
    unsigned char *hidden = mark + argc + 1;
    tb__fix_opts opts;
    int rc = tb__fix_options(&opts, argc, argv, mark, hidden);
    if (rc < 0)
        rc = tb__fix_check(&opts);
    if (rc >= 0) {
        free(mark);
        return rc;
    }
    if (tb__fix_is_batch(&opts)) {
        if (opts.report || opts.preview || tb_cli_is_stdio(opts.out) || tb_cli_is_stdio(opts.in))
            rc = tb_cli_usage_error("fix", "batch mode (several inputs or a folder) takes no --report, no --preview "
                                           "and no -: each file's report is its JSON line");
        else
            rc = tb_cli_fix_batch(argc, argv, mark, opts.out, opts.jobs, opts.force, opts.quiet);
    } else {
        rc = tb__fix_one(&opts, argc, argv, hidden);
    }
    free(mark);
    return rc;
}
