/* tailbone fix IN -o OUT — the whole job (SPEC A, D): detect → chain →
 * (transfer clips) → bake the tail into every clip → write → report, with
 * the stretch table of the result (SPEC C). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/fbx.h"
#include "core/base.h"
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

static int tb__float_arg(const char *opt, const char *v, float lo, float hi, float *out)
{
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
        for (int k = 0; k < rep->stretch_count; k++) {
            const tb_fix_stretch *s = &rep->stretch[k];
            if (s->animation != bc->animation || !s->bend_count)
                continue;
            printf("  %-18s largest bend per joint:", "");
            for (int q = 0; q < s->bend_count; q++)
                printf(" %.0f°", s->bend_rad[q] * TB_DEG_PER_RAD);
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
           "  -j, --jobs N          clips baked and measured at once, one thread each (default\n"
           "                        and 0: one per CPU); the output is the same for any N\n"
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
           "  --mode chain|rigid    chain (default) or rigid: tail vertices 1.0 on Hips (A8)\n"
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
           "                        once more with them fitted, and the better result kept)\n");
}

static void tb__print_zones(const tb_fix_report *rep)
{
    printf("blend zone:");
    for (int i = 0; i < rep->zone_try_count; i++) {
        const tb_fix_zone_try *z = &rep->zone_tries[i];
        printf("%s %.3g", i ? ";" : "", z->blend_zone);
        if (z->collar_band > 0)
            printf(" (collar band %.3g%s)", z->collar_band, z->collar_ring ? ", collar ring halfway" : "");
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

/* What the command line asks of fix, filled by tb__fix_options. */
typedef struct tb__fix_opts {
    const char *in, *out, *report, *preview;
    char *clips_arg, *only_arg;
    int as_json, quiet, no_bake, progress;
    int foot_contact, rest_curve_given, no_solver_fit, vrm_springs;
    int jobs, jobs_given, force, inputs_given; /* batch: files at once; one file: threads */
    tb_appendage_desc d;
    const char *roles[TB_CLI_MAX_ROLES];
    tb_bake_desc bd;
} tb__fix_opts;

/* Parses argv into o; mark[i] is what argv[i] is to a batch (batch.c),
 * hidden[i] whether the preview page's command line leaves it out. Returns
 * -1 to go on, else the exit code (help printed, or a usage error). */
static int tb__fix_options(tb__fix_opts *o, int argc, char **argv, unsigned char *mark, unsigned char *hidden)
{
    memset(o, 0, sizeof *o);
    o->progress = isatty(2); /* stages on stderr when a person watches */
    o->jobs = 1;
    o->d.roles = o->roles;
    tb_spring_params *sp = &o->bd.spring.params;
    enum {
        JSON = TB_CLI_LONG, FORCE, PROGRESS, NO_BAKE, NO_SOLVER_FIT, VRM_SPRINGS, BAKE_EXISTING, NO_GROUND,
        FOOT_CONTACT, SMOOTH_PIECES, CONTACT_KEEPS_LIMIT, REPORT, MODE, CLIPS, ONLY, FPS, PREVIEW, ROOT_HZ, TIP_RATIO, DAMPING,
        GRAVITY, CARRY, REST_CURVE, COUPLING, BEND_LIMIT, BIND_LIMIT, GROUND_Y, BLEND_ZONE, COLLAR_BAND, KEEP_ARTIST_KEYS
    };
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"json", no_argument, NULL, JSON},
                                         {"force", no_argument, NULL, FORCE},
                                         {"progress", no_argument, NULL, PROGRESS},
                                         {"no-bake", no_argument, NULL, NO_BAKE},
                                         {"no-solver-fit", no_argument, NULL, NO_SOLVER_FIT},
                                         {"vrm-springs", no_argument, NULL, VRM_SPRINGS},
                                         {"bake-existing", no_argument, NULL, BAKE_EXISTING},
                                         {"no-ground", no_argument, NULL, NO_GROUND},
                                         {"contact-keeps-limit", no_argument, NULL, CONTACT_KEEPS_LIMIT},
                                         {"foot-contact", no_argument, NULL, FOOT_CONTACT},
                                         {"smooth-pieces", no_argument, NULL, SMOOTH_PIECES},
                                         {"report", required_argument, NULL, REPORT},
                                         {"mode", required_argument, NULL, MODE},
                                         {"clips", required_argument, NULL, CLIPS},
                                         {"only", required_argument, NULL, ONLY},
                                         {"fps", required_argument, NULL, FPS},
                                         {"preview", required_argument, NULL, PREVIEW},
                                         {"root-hz", required_argument, NULL, ROOT_HZ},
                                         {"tip-ratio", required_argument, NULL, TIP_RATIO},
                                         {"damping", required_argument, NULL, DAMPING},
                                         {"gravity", required_argument, NULL, GRAVITY},
                                         {"carry", required_argument, NULL, CARRY},
                                         {"rest-curve", required_argument, NULL, REST_CURVE},
                                         {"coupling", required_argument, NULL, COUPLING},
                                         {"bend-limit", required_argument, NULL, BEND_LIMIT},
                                         {"bind-limit", required_argument, NULL, BIND_LIMIT},
                                         {"ground-y", required_argument, NULL, GROUND_Y},
                                         {"blend-zone", required_argument, NULL, BLEND_ZONE},
                                         {"collar-band", required_argument, NULL, COLLAR_BAND},
                                         {"keep-artist-keys", required_argument, NULL, KEEP_ARTIST_KEYS},
                                         TB_CLI_APPENDAGE_OPTIONS,
                                         {0}};
    tb_cli_args p;
    tb_cli_args_init(&p, "fix", argc, argv, "ho:qj:", opts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        const char *v = p.value;
        char opt[64];
        tb_cli_args_option(&p, opt, sizeof opt);
        float f = 0;
        int e = 0;
        /* what a batch keeps for itself, and what the preview page's command line leaves out */
        int batch = c == 'q' || c == 'o' || c == 'j' || c == FORCE || c == PROGRESS;
        int hide = c == 'q' || c == 'j' || c == FORCE || c == PROGRESS || c == JSON || c == NO_GROUND || c == CONTACT_KEEPS_LIMIT ||
                   c == PREVIEW || c == REPORT || c == ROOT_HZ || c == TIP_RATIO || c == DAMPING || c == GRAVITY ||
                   c == CARRY || c == REST_CURVE || c == COUPLING || c == BEND_LIMIT || c == BIND_LIMIT ||
                   c == GROUND_Y;
        for (int k = p.first; k < p.next; k++) {
            mark[k] = c == TB_CLI_OPERAND ? TB_CLI_ARG_INPUT : batch ? TB_CLI_ARG_BATCH : TB_CLI_ARG_PASS;
            hidden[k] = (unsigned char)hide;
        }
        switch (c) {
        case TB_CLI_BAD:
            e = TB_EXIT_USAGE;
            break;
        case 'h':
            tb__help();
            return TB_EXIT_OK;
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
            e = tb__float_arg(opt, v, 0, 4096, &f);
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
        case NO_BAKE:
            o->no_bake = 1;
            break;
        case NO_SOLVER_FIT:
            o->no_solver_fit = 1;
            break;
        case VRM_SPRINGS:
            o->vrm_springs = 1;
            break;
        case BAKE_EXISTING:
            o->bd.existing = 1;
            break;
        case NO_GROUND:
            sp->ground_off = 1;
            break;
        case CONTACT_KEEPS_LIMIT:
            sp->contact_keeps_limit = 1;
            break;
        case FOOT_CONTACT:
            o->foot_contact = 1;
            break;
        case SMOOTH_PIECES:
            o->d.smooth_pieces = 1;
            break;
        case REPORT:
            o->report = v;
            break;
        case PREVIEW:
            o->preview = v;
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
            e = tb__float_arg(opt, v, 0, 2, &f);
            o->d.collar_band = f > 0 ? f : -1;
            break;
        case BLEND_ZONE:
            e = tb__float_arg(opt, v, 0.05f, 0.5f, &o->d.blend_zone);
            break;
        case FPS:
            e = tb__float_arg(opt, v, 1, 1000, &o->bd.fps);
            break;
        case ROOT_HZ:
            e = tb__float_arg(opt, v, 0.01f, 100, &sp->root_hz);
            break;
        case TIP_RATIO:
            e = tb__float_arg(opt, v, 0.01f, 10, &sp->tip_ratio);
            break;
        case DAMPING:
            e = tb__float_arg(opt, v, 0, 10, &f);
            sp->damping_ratio = f > 0 ? f : TB_SPRING_ZERO;
            break;
        case GRAVITY:
            e = tb__float_arg(opt, v, 0, 100, &f);
            sp->gravity_mps2 = f > 0 ? f : TB_SPRING_ZERO;
            break;
        case CARRY:
            e = tb__float_arg(opt, v, 0, 180, &f);
            sp->carry_rad = f > 0 ? (float)(f * TB_RAD_PER_DEG) : TB_SPRING_ZERO;
            break;
        case REST_CURVE:
            e = tb__float_arg(opt, v, 0, 1, &sp->rest_curve);
            o->rest_curve_given = 1;
            break;
        case COUPLING:
            e = tb__float_arg(opt, v, 0, 1000, &f);
            sp->coupling_per_s = f > 0 ? f : TB_SPRING_ZERO;
            break;
        case BEND_LIMIT:
            e = tb__float_arg(opt, v, 1, 180, &f);
            sp->bend_limit_rad = (float)(f * TB_RAD_PER_DEG);
            break;
        case BIND_LIMIT:
            e = tb__float_arg(opt, v, 1, 180, &f);
            sp->bind_limit_rad = (float)(f * TB_RAD_PER_DEG);
            break;
        case KEEP_ARTIST_KEYS:
            e = tb__float_arg(opt, v, 0, 1, &o->bd.existing_keep);
            break;
        case GROUND_Y:
            e = tb__float_arg(opt, v, -1e6f, 1e6f, &sp->ground_y_m);
            o->bd.ground_as_given = 1;
            break;
        default:
            e = tb_cli_appendage_option("fix", c, v, &o->d);
            break;
        }
        if (e)
            return e;
    }
    return -1;
}

int tb_cmd_fix(int argc, char **argv)
{
    int rc = TB_EXIT_OK;
    /* mark[i]: what argv[i] is to a batch (batch.c); hidden[i]: left out of
     * the command line the preview page shows */
    unsigned char *mark = calloc(2 * ((size_t)argc + 1), 1);
    if (!mark)
        return TB_EXIT_FAIL;
    unsigned char *hidden = mark + argc + 1;
    tb__fix_opts opts;
    if ((rc = tb__fix_options(&opts, argc, argv, mark, hidden)) >= 0) {
        free(mark);
        return rc;
    }
    rc = TB_EXIT_OK;
    const char *in = opts.in, *out = opts.out, *report = opts.report, *preview = opts.preview;
    char *clips_arg = opts.clips_arg, *only_arg = opts.only_arg;
    int as_json = opts.as_json, quiet = opts.quiet, no_bake = opts.no_bake, progress = opts.progress;
    int foot_contact = opts.foot_contact, rest_curve_given = opts.rest_curve_given;
    int no_solver_fit = opts.no_solver_fit, vrm_springs = opts.vrm_springs;
    int jobs = opts.jobs, jobs_given = opts.jobs_given, force = opts.force, inputs_given = opts.inputs_given;
    tb_appendage_desc d = opts.d; /* d.roles points into opts, which lives as long */
    tb_bake_desc bd = opts.bd;
    if (!in || !out) {
        free(mark);
        return tb_cli_usage_error("fix", "needs IN and -o OUT");
    }
    if (bd.existing_keep > 0 && !bd.existing) {
        free(mark);
        return tb_cli_usage_error("fix", "--keep-artist-keys goes with --bake-existing");
    }
    if (vrm_springs && (no_bake || bd.existing)) {
        free(mark);
        return tb_cli_usage_error("fix", "--vrm-springs excludes --no-bake and --bake-existing");
    }
    if (bd.existing && no_bake) {
        free(mark);
        return tb_cli_usage_error("fix", "--bake-existing and --no-bake exclude each other");
    }
    /* batch mode (batch.c): several inputs, a folder in, or a folder out (one
     * that exists, or a name ending in '/') */
    if (inputs_given > 1 || tb_cli_is_dir(in) || tb_cli_is_dir(out) || (out[0] && out[strlen(out) - 1] == '/')) {
        if (report || preview || tb_cli_is_stdio(out) || tb_cli_is_stdio(in)) {
            free(mark);
            return tb_cli_usage_error("fix", "batch mode (several inputs or a folder) takes no --report, no --preview "
                                             "and no -: each file's report is its JSON line");
        }
        rc = tb_cli_fix_batch(argc, argv, mark, out, jobs, force, quiet);
        free(mark);
        return rc;
    }
    /* one file: its clips baked and measured on -j threads (default, and 0:
     * one per CPU); the output is the same bytes for any count */
    if (!jobs_given || jobs <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cores > 0 ? (int)(cores < 1024 ? cores : 1024) : 1;
    }
    bd.threads = jobs;
    if (preview && (tb_cli_is_stdio(in) || tb_cli_is_stdio(out))) {
        free(mark);
        return tb_cli_usage_error("fix", "--preview reads IN and OUT back: they must be files, not -");
    }
    if (tb_cli_is_stdio(out))
        tb_cli_stdout_reserve();
    char *only_buf = only_arg ? strdup(only_arg) : NULL, *clips_buf = clips_arg ? strdup(clips_arg) : NULL;
    int only_count = 0, lib_count = 0;
    const char **only = only_buf ? tb__split(only_buf, &only_count) : NULL;
    const char **lib_paths = clips_buf ? tb__split(clips_buf, &lib_count) : NULL;
    tb_doc **libs = calloc((size_t)lib_count + 1, sizeof *libs);
    tb_error err = {0};
    tb_fix_report rep;
    memset(&rep, 0, sizeof rep);
    tb_doc *in_doc = NULL, *doc = NULL;
    json_t *j = NULL;
    tb_cli_fbx fbx; /* IN or OUT in .fbx: converted through Blender (cli/fbx.c) */
    memset(&fbx, 0, sizeof fbx);
    const char *load_in = in, *save_out = out;
    {
        const char **inputs = calloc((size_t)lib_count + 1, sizeof *inputs);
        if (!inputs || !libs) {
            free(inputs);
            fprintf(stderr, "tailbone: out of memory [oom]\n");
            rc = TB_EXIT_FAIL;
            goto done;
        }
        inputs[0] = in;
        for (int k = 0; k < lib_count; k++)
            inputs[k + 1] = lib_paths[k];
        rc = tb_cli_check_output(out, inputs, lib_count + 1);
        if (rc == TB_EXIT_OK && report)
            rc = tb_cli_check_output(report, inputs, lib_count + 1);
        if (rc == TB_EXIT_OK && preview)
            rc = tb_cli_check_output(preview, inputs, lib_count + 1);
        if (rc == TB_EXIT_OK && preview)
            rc = tb_cli_preview_check(preview); /* before any work */
        free(inputs);
        if (rc != TB_EXIT_OK)
            goto done;
    }
    if ((rc = tb_cli_fbx_open(&fbx, in, out, &load_in, &save_out)) != TB_EXIT_OK)
        goto done;
    for (int k = 0; k < lib_count; k++)
        if (!(libs[k] = tb_cli_load(lib_paths[k], quiet))) {
            rc = TB_EXIT_FAIL;
            goto done;
        }
    if (!(in_doc = tb_cli_load(load_in, quiet))) { /* its warnings matter: shown unless -q */
        rc = TB_EXIT_FAIL;
        goto done;
    }
    tb_fix_desc fd;
    memset(&fd, 0, sizeof fd);
    fd.repair = d;
    fd.bake = bd;
    fd.no_bake = no_bake || vrm_springs; /* a VRM runtime moves the tail itself */
    fd.libraries = libs;
    fd.library_count = lib_count;
    fd.only = only;
    fd.foot_contact = foot_contact;
    fd.rest_curve_given = rest_curve_given;
    fd.no_solver_fit = no_solver_fit;
    if (progress && !quiet) {
        fd.progress = tb__progress;
        fd.progress_user = (void *)in;
    }
    if (tb_fix_run(&doc, in_doc, &fd, &rep, &err) != TB_OK) {
        /* a bad clip name is the library's or the user's, not IN's */
        const char *whose = err.code == TB_ERR_ARG && clips_arg ? clips_arg : in;
        if (!strcmp(err.where, "--clips") && clips_arg)
            whose = clips_arg;
        for (int k = 0; k < lib_count; k++) {
            size_t n = strlen(lib_paths[k]);
            if (!strncmp(err.where, lib_paths[k], n) && (err.where[n] == 0 || err.where[n] == ':'))
                whose = err.where; /* a clip library's fault: printed as its file */
        }
        rc = tb_cli_error(whose, &err);
        goto done;
    }
    tb_vrm_report vrep;
    memset(&vrep, 0, sizeof vrep);
    if (vrm_springs && tb_vrm_springs(doc, &bd, 60.0f, &vrep, &err) != TB_OK) {
        rc = tb_cli_error(in, &err);
        goto done;
    }
    /* report and write */
    j = tb_fix_report_json(&rep);
    if (vrm_springs)
        json_object_set_new(j, "vrm_springs",
                            json_pack("{s:i,s:i,s:i,s:f,s:{s:i,s:f,s:f,s:f,s:f}}", "version", vrep.version, "chains",
                                      vrep.chains, "joints", vrep.joints, "runtime_hz", (double)vrep.hz, "fit",
                                      "clips", vrep.fit_clips, "tips_before_m", (double)vrep.fit_before_m,
                                      "tips_after_m", (double)vrep.fit_after_m, "tip_before_m",
                                      (double)vrep.fit_tip_before_m, "tip_after_m", (double)vrep.fit_tip_after_m));
    if (vrm_springs) {
        json_t *fj = json_object_get(json_object_get(j, "vrm_springs"), "fit");
        json_object_set_new(fj, "swing_before_m", json_real(vrep.fit_swing_before_m));
        json_object_set_new(fj, "swing_after_m", json_real(vrep.fit_swing_after_m));
        json_object_set_new(fj, "swing_baked_m", json_real(vrep.fit_swing_baked_m));
        json_object_set_new(fj, "evaluations", json_integer(vrep.fit_evaluations));
    }
    json_object_set_new(j, "file", json_string(in));
    json_object_set_new(j, "output", json_string(out));
    if (report && (rc = tb_cli_save_json(report, j, JSON_INDENT(2) | JSON_REAL_PRECISION(6))) != TB_EXIT_OK)
        goto done;
    if ((rc = tb_cli_save_doc(doc, save_out)) != TB_EXIT_OK || (rc = tb_cli_fbx_finish(&fbx, out)) != TB_EXIT_OK)
        goto done;
    if (preview && (rc = tb__preview(preview, in, out, argc, argv, hidden, &bd, quiet)) != TB_EXIT_OK)
        goto done;
    if (!quiet) {
        if (as_json) {
            char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            puts(s);
            free(s);
        } else {
            printf("file: %s\n", in);
            if (!rep.bake_existing)
                tb_cli_print_appendages(stdout, &rep.repair, rep.repair.changed);
            printf("%s\n", rep.repair.message);
            if (rep.repair.changed)
                printf("weights changed outside the repaired appendages: %zu vertices%s\n", rep.repair.changed_outside,
                       rep.repair.changed_outside ? " (unexpected: please report)" : " (the body is untouched)");
            if (rep.repair.collar_changed)
                printf("welded collar: %zu vertices of the ring where the tail joins the body go halfway to the "
                       "chain's root weights\n",
                       rep.repair.collar_changed);
            if (rep.retarget)
                printf("clips transferred from %s\n", clips_arg);
            tb__print_weights(&rep);
            if (rep.zone_try_count)
                tb__print_zones(&rep);
            if (rep.baked)
                tb__print_bake(&rep);
            if (vrm_springs)
                printf("vrm: %d tail chain(s), %d bone(s) written as %s (a runtime at %g Hz; not baked)\n",
                       vrep.chains, vrep.joints,
                       vrep.version ? "VRMC_springBone springs" : "VRM 0.x secondaryAnimation bone groups", vrep.hz);
            if (vrm_springs && vrep.fit_clips)
                printf("vrm: settings fitted on %d clip(s): tail tip %.3f m -> %.3f m from the baked motion "
                       "(mean, a model of the runtime)\n",
                       vrep.fit_clips, (double)vrep.fit_tip_before_m, (double)vrep.fit_tip_after_m);
            printf("%s %s\n", rep.changed ? "wrote" : "nothing to change; wrote a lossless copy to", out);
        }
    }
done:
    free(mark);
    tb_cli_fbx_close(&fbx);
    json_decref(j);
    tb_fix_report_free(&rep);
    tb_doc_free(doc);
    tb_doc_free(in_doc);
    for (int k = 0; k < lib_count; k++)
        tb_doc_free(libs[k]);
    free(libs);
    free(only);
    free(lib_paths);
    free(only_buf);
    free(clips_buf);
    return rc;
}
