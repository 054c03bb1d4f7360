/* tailbone fix IN -o OUT — the whole job (SPEC A, D): detect → chain →
 * (transfer clips) → bake the tail into every clip → write → report, with
 * the stretch table of the result (SPEC C). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tailbone/appendage.h"
#include "tailbone/bake.h"
#include "tailbone/clip.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"
#include "tailbone/retarget.h"

#define TB__DEG (3.14159265358979f / 180.0f)

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

static json_t *tb__stats_row(const tb_stretch_stats *st)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:I}", "p95", st->p95, "p99", st->p99, "max", st->max, "torn",
                     isnan(st->torn_frac) ? 0.0 : st->torn_frac, "samples", (json_int_t)st->samples);
}

/* Stretch of every baked clip on the repaired file, tail from its Tail_* weights. */
static json_t *tb__measure_result(tb_doc *doc, const tb_bake_report *bake, tb_error *err)
{
    tb_model *m = NULL;
    if (tb_model_load(&m, doc, -1, err) != TB_OK)
        return NULL;
    json_t *rows = json_array();
    for (int c = 0; c < bake->clip_count; c++) {
        const tb_bake_clip *bc = &bake->clips[c];
        if (bc->skipped)
            continue;
        tb_clip *clip = NULL;
        if (tb_clip_load(&clip, doc, m, bc->animation, NULL, err) != TB_OK)
            continue;
        tb_measure_desc d = {0};
        d.loop = bc->looping;
        tb_measure_result r;
        if (tb_measure_clip(&r, m, clip, &d, err) == TB_OK) {
            json_t *row = json_pack("{s:s,s:o,s:o,s:f,s:f,s:f}", "clip", bc->name, "tail", tb__stats_row(&r.tail),
                                    "body", tb__stats_row(&r.body), "tip_travel_h", r.tip_travel_h,
                                    "max_tail_rotation_deg", r.max_bone_rotation_rad / TB__DEG, "bone_distance_h",
                                    r.bone_distance / r.height);
            if (r.seam.edges)
                json_object_set_new(row, "seam", tb__stats_row(&r.seam));
            json_array_append_new(rows, row);
        }
        tb_clip_free(clip);
    }
    tb_model_free(m);
    return rows;
}

/* Torn fraction of a stretch row: the tail's, or its seam to the body's when larger. */
static float tb__row_torn(json_t *row)
{
    double t = json_real_value(json_object_get(json_object_get(row, "tail"), "torn"));
    double sm = json_real_value(json_object_get(json_object_get(row, "seam"), "torn"));
    return (float)(sm > t ? sm : t);
}

static void tb__print_bake(const tb_bake_report *b, json_t *stretch, int searched)
{
    if (b->chain_count == 0) {
        printf("bake: no Tail_* chain, nothing to bake\n");
        return;
    }
    printf("bake: %d chain(s), %d bone(s), ground at y = %.3g, %g scene unit(s) per metre;\n"
           "      result measured at 24 instants per clip (SPEC C)\n",
           b->chain_count, b->bone_count, b->ground_y_m, b->world_units_per_m);
    printf("  %-18s %5s %6s %8s %7s | %-27s | %-16s | %s\n", "clip", "keys", "passes", "closure", "swing",
           "tail p95 / p99 / max / torn", "body p99 / max", "tip travel");
    char label[32];
    for (int c = 0; c < b->clip_count; c++) {
        const tb_bake_clip *bc = &b->clips[c];
        if (bc->skipped) {
            printf("  %-18s skipped: %s\n", tb_cli_clip_label(bc->name, label, sizeof label, 18), bc->reason);
            continue;
        }
        json_t *row = NULL;
        size_t i;
        json_t *r;
        json_array_foreach(stretch, i, r) if (!strcmp(json_string_value(json_object_get(r, "clip")), bc->name)) row = r;
        printf("  %-18s %5d %4d%s %7.2f° %6.1f° |", tb_cli_clip_label(bc->name, label, sizeof label, 18), bc->keys, bc->passes, bc->wraps ? " W" : bc->looping ? " L" : "  ",
               bc->closure_rad / TB__DEG, bc->swing_rad / TB__DEG);
        if (row) {
            json_t *t = json_object_get(row, "tail"), *bd = json_object_get(row, "body");
            printf(" %5.2f / %4.2f / %4.2f / %4.1f%% | %5.2f / %5.2f    | %5.1f%% H\n",
                   json_real_value(json_object_get(t, "p95")), json_real_value(json_object_get(t, "p99")),
                   json_real_value(json_object_get(t, "max")), 100 * json_real_value(json_object_get(t, "torn")),
                   json_real_value(json_object_get(bd, "p99")), json_real_value(json_object_get(bd, "max")),
                   100 * json_real_value(json_object_get(row, "tip_travel_h")));
            json_t *sm = json_object_get(row, "seam");
            if (sm)
                printf("  %-18s %32s %5.2f / %4.2f / %4.2f / %4.1f%% |\n", "", "seam to body |",
                       json_real_value(json_object_get(sm, "p95")), json_real_value(json_object_get(sm, "p99")),
                       json_real_value(json_object_get(sm, "max")), 100 * json_real_value(json_object_get(sm, "torn")));
        } else {
            printf(" (not measured)\n");
        }
    }
    printf("  (L = looping clip, W = looping clip that stops one frame before its start (the player\n"
           "   wraps); both warmed up until the loop start repeats. closure = largest angle of any tail\n"
           "   bone between its first and last key (L) or its state after the wrap (W); swing = largest\n"
           "   angle from the first key)\n");
    int tearing = 0;
    size_t i;
    json_t *r;
    json_array_foreach(stretch, i, r) tearing += tb__row_torn(r) > 0;
    if (tearing && searched)
        printf("hint: the tail skin still tears (ratio > 1.5 or < 0.67) in %d clip(s) with the widest blend\n"
               "      zone; --bend-limit lowers the bend per joint (docs/fix.md).\n",
               tearing);
    else if (tearing)
        printf("hint: the tail skin tears (ratio > 1.5 or < 0.67) in %d clip(s). A thick or coarse tail\n"
               "      folds at bent joints with a narrow blend; --blend-zone 0.5 blends across whole\n"
               "      segments (docs/fix.md), --bend-limit lowers the bend per joint.\n",
               tearing);
}

static json_t *tb__bake_json(const tb_bake_report *b)
{
    json_t *clips = json_array();
    for (int c = 0; c < b->clip_count; c++) {
        const tb_bake_clip *bc = &b->clips[c];
        json_t *o = json_pack("{s:s,s:i,s:b}", "clip", bc->name, "animation", bc->animation, "baked", !bc->skipped);
        if (bc->skipped)
            json_object_set_new(o, "reason", json_string(bc->reason));
        else {
            json_t *facts = json_pack("{s:b,s:b,s:i,s:i,s:f,s:f,s:f}", "looping", bc->looping, "wraps", bc->wraps,
                                      "passes", bc->passes, "keys",
                                      bc->keys, "duration_s", bc->duration_s, "loop_closure_deg",
                                      bc->closure_rad / TB__DEG, "swing_deg", bc->swing_rad / TB__DEG);
            json_object_update(o, facts);
            json_decref(facts);
        }
        json_array_append_new(clips, o);
    }
    return json_pack("{s:i,s:i,s:f,s:f,s:o}", "chains", b->chain_count, "bones", b->bone_count, "ground_y",
                     b->ground_y_m, "units_per_metre", b->world_units_per_m, "clips", clips);
}

static void tb__help(void)
{
    printf("usage: tailbone fix IN -o OUT [options]\n\n"
           "The whole job, from a broken rig to a file that plays right everywhere:\n"
           "  1. detect the appendages (as `tailbone detect`) and repair them (SPEC A8/A9):\n"
           "     a tail gets a bone chain Tail_1..Tail_K + Tail_End (a second tail TailB_*, ...)\n"
           "     and skin weights along it; a carried object on the spine is bound rigidly;\n"
           "     capes, skirts, ears and hair are left as rigged;\n"
           "  2. with --clips, transfer a clip library onto the character first (as `tailbone\n"
           "     retarget`);\n"
           "  3. bake the simulated tail into every clip as ordinary rotation keys (SPEC D):\n"
           "     looping clips are warmed up until the loop closes, others settle first;\n"
           "  4. write OUT and report: appendages, chain, bake, and the stretch table (SPEC C).\n"
           "Everything else in the file is kept; IN is never modified. When nothing needs\n"
           "changing, OUT is a lossless copy identical to `tailbone copy IN OUT`.\n\n"
           "  -o, --output OUT      the repaired GLB (required)\n"
           "  --report FILE.json    write the whole report as JSON\n"
           "  --json                print the report as JSON instead of tables\n"
           "  -q, --quiet           print only errors\n"
           "repair:\n"
           "  --mode chain|rigid    chain (default) or rigid: tail vertices 1.0 on Hips (A8)\n"
           "  --rigid-wide          bind capes and skirts rigidly to their bone (never a default)\n"
           "  --pelvis NAME         the pelvis joint when no Hips role is recognised\n"
           "  --skin N              the skin to repair (default: the one with most vertices)\n"
           "  --blend-zone Z        blend half-width around each tail joint, in segments: 0.25\n"
           "                        (SPEC A9, default) to 0.5 (whole segment: for thick or coarse\n"
           "                        tails whose skin folds at bent joints)\n"
           "  --collar-band S       a tail welded into the body blends from the body's weights at\n"
           "                        its collar to the chain's over S segments (default 0.5; 0: none)\n"
           "  --smooth-pieces       smooth chain weights on a segmented tail too; by default a tail\n"
           "                        made of separate pieces on a body of rigid pieces gets one\n"
           "                        bone per piece, like the body (docs/fix.md)\n"
           "clips:\n"
           "  --clips A.glb[,B.glb] transfer these files' clips onto the character first\n"
           "  --only NAME[,NAME]    only these clips (transfer and bake)\n"
           "  --no-bake             repair only; leave the clips as they are\n"
           "  --fps N               key rate of the baked tail (default 30)\n"
           "spring (SPEC B; lengths in metres, scaled to the scene's unit — cm and mm scenes are\n"
           "recognised from the character's height; --ground-y is in scene units):\n"
           "  --root-hz F [0.9]  --tip-ratio R [0.5]  --damping Z [0.65]  --gravity G [1 m/s²]\n"
           "  --carry DEG [50]   --rest-curve B [0]   --coupling K [12 /s] --bend-limit DEG [30]\n"
           "  --ground-y Y [the soles: 0 for a model standing at the origin]   --no-ground\n");
}

/* One run of the job on a fresh copy of IN: repair, transfer, bake, measure. */
typedef struct tb__job {
    const char *in, *clips_arg;
    tb_doc **libs;
    int lib_count;
    const char **only;
    int only_count, no_bake;
    const tb_bake_desc *bd;
} tb__job;

typedef struct tb__result {
    tb_doc *doc;
    tb_appendage_report rep;
    tb_bake_report brep;
    json_t *retarget, *stretch;
} tb__result;

static void tb__result_free(tb__result *r)
{
    tb_doc_free(r->doc);
    tb_appendage_report_free(&r->rep);
    tb_bake_report_free(&r->brep);
    json_decref(r->retarget);
    json_decref(r->stretch);
    memset(r, 0, sizeof *r);
}

static int tb__run(const tb__job *job, const tb_appendage_desc *d, tb__result *res)
{
    tb_error err = {0};
    if (!(res->doc = tb_cli_load(job->in, 1)))
        return TB_EXIT_FAIL;
    /* 1. detect and repair */
    if (tb_appendage_fix(&res->rep, res->doc, d, &err) != TB_OK)
        return tb_cli_error(job->in, &err);
    /* 2. transfer clips */
    if (job->lib_count) {
        tb_retarget_desc rd;
        memset(&rd, 0, sizeof rd);
        rd.only = job->only;
        rd.only_count = job->only_count;
        if (tb_retarget_docs(res->doc, job->libs, job->lib_count, &rd, &res->retarget, &err) != TB_OK)
            return tb_cli_error(job->clips_arg, &err);
    }
    /* 3. bake, and measure the result */
    if (!job->no_bake) {
        tb_bake_desc bd = *job->bd;
        bd.only = job->lib_count ? NULL : job->only; /* transferred clips are already filtered */
        if (tb_bake(res->doc, &bd, &res->brep, &err) != TB_OK)
            return tb_cli_error(job->in, &err);
        res->stretch = tb__measure_result(res->doc, &res->brep, &err);
    }
    return TB_EXIT_OK;
}

/* Clips whose tail tears, and the largest torn fraction. */
static void tb__tearing(json_t *stretch, int *clips, float *worst)
{
    size_t i;
    json_t *r;
    *clips = 0;
    *worst = 0;
    json_array_foreach(stretch, i, r) {
        float torn = tb__row_torn(r);
        *clips += torn > 0;
        *worst = torn > *worst ? torn : *worst;
    }
}

/* Chains whose weights a blend zone shapes (not one bone per piece). */
static int tb__smooth_chains(const tb_appendage_report *rep)
{
    int n = 0;
    for (int i = 0; i < rep->appendage_count; i++)
        n += rep->appendages[i].decision == TB_DECIDE_CHAIN && !rep->appendages[i].rigid_pieces;
    return n;
}

static float tb__zone_of(const tb_appendage_report *rep)
{
    for (int i = 0; i < rep->appendage_count; i++)
        if (rep->appendages[i].decision == TB_DECIDE_CHAIN && !rep->appendages[i].rigid_pieces)
            return rep->appendages[i].blend_zone;
    return 0;
}

static void tb__print_zones(json_t *zones, float used)
{
    size_t i;
    json_t *z;
    printf("blend zone:");
    json_array_foreach(zones, i, z) {
        int torn = (int)json_integer_value(json_object_get(z, "torn_clips"));
        double zone = json_real_value(json_object_get(z, "blend_zone"));
        if (torn)
            printf("%s %.3g tore in %d clip(s) (worst %.1f%%)", i ? ";" : "", zone, torn,
                   100 * json_real_value(json_object_get(z, "worst_torn")));
        else
            printf("%s %.3g no tear", i ? ";" : "", zone);
    }
    printf(" -> weights use %.3g (SPEC A9: 0.25; wider blends spread a bend over more skin)\n", used);
}

int tb_cmd_fix(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *report = NULL;
    char *clips_arg = NULL, *only_arg = NULL;
    int as_json = 0, quiet = 0, no_bake = 0, rc = TB_EXIT_OK;
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    tb_bake_desc bd;
    memset(&bd, 0, sizeof bd);
    tb_spring_params *sp = &bd.spring.params;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int o;
        if (tb_cli_is(a, "-h", "--help")) {
            tb__help();
            return TB_EXIT_OK;
        } else if (!strcmp(a, "--json")) {
            as_json = 1;
        } else if (tb_cli_is(a, "-q", "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--no-bake")) {
            no_bake = 1;
        } else if (!strcmp(a, "--no-ground")) {
            sp->ground_off = 1;
        } else if (!strcmp(a, "--smooth-pieces")) {
            d.smooth_pieces = 1;
        } else if ((o = tb_cli_appendage_options("fix", argc, argv, &i, &d)) >= 0) {
            if (o)
                return o;
        } else if (a[0] == '-' && a[1]) {
            static const char *const valued[] = {"-o", "--output", "--report", "--mode", "--clips", "--only", "--fps",
                                                 "--root-hz", "--tip-ratio", "--damping", "--gravity", "--carry",
                                                 "--rest-curve", "--coupling", "--bend-limit", "--ground-y", "--blend-zone", "--collar-band",
                                                 NULL};
            int known = 0;
            for (int k = 0; valued[k]; k++)
                known |= !strcmp(a, valued[k]);
            if (!known)
                return tb_cli_usage_error("fix", "unknown option '%s'", a);
            if (i + 1 >= argc)
                return tb_cli_usage_error("fix", "%s needs a value", a);
            const char *v = argv[++i];
            float f = 0;
            int e = 0;
            if (tb_cli_is(a, "-o", "--output"))
                out = v;
            else if (!strcmp(a, "--report"))
                report = v;
            else if (!strcmp(a, "--clips"))
                clips_arg = (char *)v;
            else if (!strcmp(a, "--only"))
                only_arg = (char *)v;
            else if (!strcmp(a, "--mode")) {
                if (!strcmp(v, "chain"))
                    d.mode = TB_FIX_CHAIN;
                else if (!strcmp(v, "rigid"))
                    d.mode = TB_FIX_RIGID;
                else
                    return tb_cli_usage_error("fix", "--mode is chain or rigid, not '%s'", v);
            } else if (!strcmp(a, "--collar-band")) {
                e = tb__float_arg(a, v, 0, 2, &f);
                d.collar_band = f > 0 ? f : -1;
            } else if (!strcmp(a, "--blend-zone"))
                e = tb__float_arg(a, v, 0.05f, 0.5f, &d.blend_zone);
            else if (!strcmp(a, "--fps"))
                e = tb__float_arg(a, v, 1, 1000, &bd.fps);
            else if (!strcmp(a, "--root-hz"))
                e = tb__float_arg(a, v, 0.01f, 100, &sp->root_hz);
            else if (!strcmp(a, "--tip-ratio"))
                e = tb__float_arg(a, v, 0.01f, 10, &sp->tip_ratio);
            else if (!strcmp(a, "--damping")) {
                e = tb__float_arg(a, v, 0, 10, &f);
                sp->damping_ratio = f > 0 ? f : TB_SPRING_ZERO;
            } else if (!strcmp(a, "--gravity")) {
                e = tb__float_arg(a, v, 0, 100, &f);
                sp->gravity_mps2 = f > 0 ? f : TB_SPRING_ZERO;
            } else if (!strcmp(a, "--carry")) {
                e = tb__float_arg(a, v, 0, 180, &f);
                sp->carry_rad = f > 0 ? f * TB__DEG : TB_SPRING_ZERO;
            } else if (!strcmp(a, "--rest-curve")) {
                e = tb__float_arg(a, v, 0, 1, &sp->rest_curve);
            } else if (!strcmp(a, "--coupling")) {
                e = tb__float_arg(a, v, 0, 1000, &f);
                sp->coupling_per_s = f > 0 ? f : TB_SPRING_ZERO;
            } else if (!strcmp(a, "--bend-limit")) {
                e = tb__float_arg(a, v, 1, 180, &f);
                sp->bend_limit_rad = f * TB__DEG;
            } else if (!strcmp(a, "--ground-y")) {
                e = tb__float_arg(a, v, -1e6f, 1e6f, &sp->ground_y_m);
                bd.ground_as_given = 1;
            }
            if (e)
                return e;
        } else if (!in) {
            in = a;
        } else {
            return tb_cli_usage_error("fix", "too many arguments");
        }
    }
    if (!in || !out)
        return tb_cli_usage_error("fix", "needs IN and -o OUT");
    char *only_buf = only_arg ? strdup(only_arg) : NULL, *clips_buf = clips_arg ? strdup(clips_arg) : NULL;
    int only_count = 0, lib_count = 0;
    const char **only = only_buf ? tb__split(only_buf, &only_count) : NULL;
    const char **lib_paths = clips_buf ? tb__split(clips_buf, &lib_count) : NULL;
    tb_doc **libs = calloc((size_t)lib_count + 1, sizeof *libs);
    tb_error err = {0};
    tb_doc *doc = NULL;
    tb_appendage_report rep;
    memset(&rep, 0, sizeof rep);
    tb_bake_report brep;
    memset(&brep, 0, sizeof brep);
    json_t *j = NULL, *retarget_json = NULL, *stretch = NULL, *zones_json = NULL;
    for (int k = 0; k < lib_count; k++)
        if (!(libs[k] = tb_cli_load(lib_paths[k], 1))) {
            rc = TB_EXIT_FAIL;
            goto done;
        }
    tb__job job = {in, clips_arg, libs, lib_count, only, only_count, no_bake, &bd};
    /* The SPEC's blend zone first; when the baked clips tear and the user
     * did not choose a zone, the whole job again with wider zones (docs/fix.md). */
    static const float widen[] = {0.375f, 0.5f};
    int attempts = d.blend_zone > 0 || no_bake ? 1 : 3;
    float best_worst = INFINITY;
    for (int t = 0; t < attempts; t++) {
        tb_appendage_desc dt = d;
        if (t > 0)
            dt.blend_zone = widen[t - 1];
        tb__result res;
        memset(&res, 0, sizeof res);
        if ((rc = tb__run(&job, &dt, &res)) != TB_EXIT_OK) {
            tb__result_free(&res);
            goto done;
        }
        int torn_clips = 0;
        float worst = 0;
        tb__tearing(res.stretch, &torn_clips, &worst);
        int smooth = tb__smooth_chains(&res.rep);
        if (attempts > 1 && smooth && (torn_clips || zones_json)) {
            if (!zones_json)
                zones_json = json_array();
            json_array_append_new(zones_json, json_pack("{s:f,s:i,s:f}", "blend_zone", (double)tb__zone_of(&res.rep),
                                                        "torn_clips", torn_clips, "worst_torn", (double)worst));
        }
        if (t == 0 || worst < best_worst) { /* keep the best so far */
            best_worst = worst;
            tb__result_free(&(tb__result){doc, rep, brep, retarget_json, stretch});
            doc = res.doc, rep = res.rep, brep = res.brep, retarget_json = res.retarget, stretch = res.stretch;
        } else {
            tb__result_free(&res);
        }
        if (!torn_clips || !smooth)
            break; /* no tear, or nothing a blend zone changes */
    }
    int changed = rep.changed || retarget_json;
    for (int c = 0; c < brep.clip_count; c++)
        changed |= !brep.clips[c].skipped;
    /* 4. report and write */
    j = tb_appendage_report_json(&rep);
    json_object_set_new(j, "file", json_string(in));
    json_object_set_new(j, "output", json_string(out));
    json_object_set_new(j, "changed", json_boolean(changed));
    if (retarget_json)
        json_object_set(j, "retarget", retarget_json);
    if (zones_json)
        json_object_set(j, "blend_zone_search", zones_json);
    if (!no_bake) {
        json_object_set_new(j, "bake", tb__bake_json(&brep));
        json_object_set_new(j, "stretch", stretch ? json_incref(stretch) : json_array());
    }
    if (report && json_dump_file(j, report, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) != 0) {
        fprintf(stderr, "tailbone: %s: cannot write the report\n", report);
        rc = TB_EXIT_FAIL;
        goto done;
    }
    if (tb_doc_save(doc, out, &err) != TB_OK) {
        rc = tb_cli_error(out, &err);
        goto done;
    }
    if (!quiet) {
        if (as_json) {
            char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            puts(s);
            free(s);
        } else {
            printf("file: %s\n", in);
            tb_cli_print_appendages(stdout, &rep, rep.changed);
            printf("%s\n", rep.message);
            if (retarget_json)
                printf("clips transferred from %s\n", clips_arg);
            if (zones_json)
                tb__print_zones(zones_json, tb__zone_of(&rep));
            if (!no_bake)
                tb__print_bake(&brep, stretch, zones_json != NULL);
            printf("%s %s\n", changed ? "wrote" : "nothing to change; wrote a lossless copy to", out);
        }
    }
done:
    json_decref(j);
    json_decref(zones_json);
    json_decref(retarget_json);
    json_decref(stretch);
    tb_bake_report_free(&brep);
    tb_appendage_report_free(&rep);
    tb_doc_free(doc);
    for (int k = 0; k < lib_count; k++)
        tb_doc_free(libs[k]);
    free(libs);
    free(only);
    free(lib_paths);
    free(only_buf);
    free(clips_buf);
    return rc;
}
