/* tailbone retarget CHARACTER --clips LIB.glb[,LIB2.glb] [--only A,B] -o OUT.glb
 * Clip transfer by humanoid roles with tail-free grounding (SPEC D). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "tailbone/retarget.h"

#define TB__MAX_LIST 64

/* Splits a comma list in place into at most max entries. */
static int tb__split(char *s, char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
        if (*tok)
            out[n++] = tok;
    return n;
}

static void tb__print_report(const tb_retarget_report *rep, const char *out)
{
    const tb_placement *pl = &rep->placement;
    printf("character: %s (H %.3f, %lld roles, leg %.3f)\n", rep->file, (double)rep->height, (long long)rep->roles,
           (double)rep->leg_length);
    printf("support points: %lld body, %lld tail (excluded; %lld hanging torso vertices), %lld foot; f_body %.4f\n",
           (long long)rep->supports_body, (long long)rep->supports_tail, (long long)rep->supports_hanging_vertices,
           (long long)rep->supports_foot, (double)rep->supports_f_body);
    printf("placement: ground offset %+.4f (body lowest %.4f; whole mesh lowest %.4f; %lld tail vertices ignored)\n",
           (double)pl->ground_offset_y, (double)pl->body_min_y, (double)pl->all_min_y,
           (long long)pl->tail_vertex_count);
    printf("%-34s %6s %5s %5s %7s %8s %8s %8s\n", "clip", "dur s", "keys", "roles", "legs x", "lift max", "feet min",
           "feet err");
    for (int i = 0; i < rep->clip_count; i++) {
        const tb_retarget_clip_report *c = &rep->clips[i];
        char ferr[16] = "     n/a"; /* a library without a skin has no feet to compare with */
        if (isfinite(c->foot_vs_source_mean))
            snprintf(ferr, sizeof ferr, "%8.4f", c->foot_vs_source_mean);
        printf("%-34s %6.3f %5lld %5lld %7.3f %8.4f %8.4f %s\n", c->name, (double)c->duration_s,
               (long long)c->frame_count, (long long)c->roles_matched, (double)c->leg_ratio, (double)c->lift_max,
               (double)c->foot_min_y_low, ferr);
    }
    printf("wrote %s\n", out);
}

typedef struct tb__opts {
    const char *in, *out, *report_path;
    char *clips_arg, *only_arg;
    tb_retarget_desc d;
    int quiet;
} tb__opts;

static void tb__help(void)
{
    printf("usage: tailbone retarget CHARACTER --clips LIB.glb[,LIB2.glb] [--only NAME,NAME]\n"
           "                          -o OUT.glb [--report FILE.json] [--fps N] [--no-ground]\n\n"
           "Transfers clips onto a character by humanoid bone roles (Mixamo names with any\n"
           "mixamorig*: prefix, bare names, common other layouts). Each role bone's world rotation\n"
           "relative to its own bind pose is carried over (facing and limb bind directions\n"
           "aligned); the hips' displacement is scaled by the legs' length ratio. Bones without a\n"
           "role hold their bind pose (from the inverse bind matrices). A grounding pass lifts the\n"
           "pelvis only when body skin would go below the floor more than the source's does; skin\n"
           "mostly on Tail_* bones (or on a tail that detection finds) and the feet never count\n"
           "Clips are resampled at 30 keys/s (LINEAR), keep their names, and are\n"
           "appended to the character's animations.\n"
           "  --clips LIST      comma-separated GLB/glTF files holding the clips\n"
           "  --only LIST       clip names to take (exact, or the part after the last '|')\n"
           "  -o, --out FILE    output GLB (required; - for stdout, the report then on stderr)\n"
           "  CHARACTER may be - (stdin)\n"
           "  --report FILE     JSON report: placement, per-clip lift and foot heights\n"
           "  --fps N           key rate (default 30)\n"
           "  --no-ground       skip the grounding pass\n"
           "  --no-detect       don't look for tails on a character without Tail_*\n"
           "                    bones; their skin then counts as body for grounding\n"
           "  --raw-delta       pure world-delta transfer (no limb bind-direction alignment)\n"
           "  --foot-contact    raise a foot whose skin dips below the floor with a two-bone\n"
           "                    leg IK (the legs then differ from the source's; docs/retarget.md)\n"
           "  -q, --quiet       print nothing on success\n"
           "  --in-place        allow -o to be CHARACTER itself (refused by default)\n"
           "  --allow-uri-outside  let a .gltf's external uri name a file outside its folder\n");
}

/* retarget's command line; -1 to go on, else the exit status. */
static int tb__args(int argc, char **argv, tb__opts *o)
{
    const char *in = NULL, *out = NULL, *report_path = NULL;
    char *clips_arg = NULL, *only_arg = NULL;
    tb_retarget_desc d = {0};
    int quiet = 0;
    enum { CLIPS = TB_CLI_LONG, ONLY, REPORT, FPS, NO_GROUND, NO_DETECT, RAW_DELTA, FOOT_CONTACT };
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"clips", required_argument, NULL, CLIPS},
                                         {"only", required_argument, NULL, ONLY},
                                         {"out", required_argument, NULL, 'o'},
                                         {"report", required_argument, NULL, REPORT},
                                         {"fps", required_argument, NULL, FPS},
                                         {"no-ground", no_argument, NULL, NO_GROUND},
                                         {"no-detect", no_argument, NULL, NO_DETECT},
                                         {"raw-delta", no_argument, NULL, RAW_DELTA},
                                         {"foot-contact", no_argument, NULL, FOOT_CONTACT},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {0}};
    tb_cli_args p;
    tb_cli_args_init(&p, "retarget", argc, argv, "ho:q", opts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        const char *a = p.value;
        if (c == TB_CLI_BAD) {
            return TB_EXIT_USAGE;
        } else if (c == 'h') {
            tb__help();
            return TB_EXIT_OK;
        } else if (c == CLIPS) {
            clips_arg = (char *)a;
        } else if (c == ONLY) {
            only_arg = (char *)a;
        } else if (c == 'o') {
            out = a;
        } else if (c == REPORT) {
            report_path = a;
        } else if (c == FPS) {
            char *end = NULL;
            if ((d.fps = strtof(a, &end), !*a || *end || !(d.fps > 0) || d.fps > 1000))
                return tb_cli_usage_error("retarget", "--fps needs a number in (0, 1000]");
        } else if (c == NO_GROUND) {
            d.no_ground = 1;
        } else if (c == NO_DETECT) {
            d.no_detect = 1;
        } else if (c == RAW_DELTA) {
            d.raw_delta = 1;
        } else if (c == FOOT_CONTACT) {
            d.foot_contact = 1;
        } else if (c == 'q') {
            quiet = 1;
        } else if (!in) {
            in = a;
        } else {
            return tb_cli_usage_error("retarget", "too many arguments");
        }
    }
    if (!in)
        return tb_cli_usage_error("retarget", "needs a CHARACTER file");
    if (!clips_arg)
        return tb_cli_usage_error("retarget", "needs --clips LIB.glb[,LIB2.glb]");
    if (!out)
        return tb_cli_usage_error("retarget", "needs -o OUT.glb");
    *o = (tb__opts){in, out, report_path, clips_arg, only_arg, d, quiet};
    return -1;
}

/* Whose fault a failed retarget is, for the one line: the library file the
 * error's place names, --clips' list, or the character. */
static const char *tb__whose(const tb_error *err, const char *in, const char *clips_arg, char *const *lib_paths,
                             int lib_count)
{
    const char *whose = !strcmp(err->where, "--clips") ? clips_arg : err->where[0] == '/' || !err->where[0] ? in : err->where;
    for (int l = 0; l < lib_count; l++) {
        size_t n = strlen(lib_paths[l]);
        if (!strncmp(err->where, lib_paths[l], n) && (err->where[n] == 0 || err->where[n] == ':'))
            whose = err->where; /* the library's fault (an absolute path starts with '/' too) */
    }
    return whose;
}

int tb_cmd_retarget(int argc, char **argv)
{
    tb__opts o = {0};
    int exit_now = tb__args(argc, argv, &o);
    if (exit_now >= 0)
        return exit_now;
    const char *in = o.in, *out = o.out, *report_path = o.report_path;
    char *clips_arg = o.clips_arg, *only_arg = o.only_arg;
    tb_retarget_desc d = o.d;
    int quiet = o.quiet;
    if (tb_cli_is_stdio(out))
        tb_cli_stdout_reserve(); /* the GLB on stdout, the report on stderr */
    char *clips_buf = strdup(clips_arg), *only_buf = only_arg ? strdup(only_arg) : NULL;
    char *lib_paths[TB__MAX_LIST], *only[TB__MAX_LIST];
    int lib_count = clips_buf ? tb__split(clips_buf, lib_paths, TB__MAX_LIST) : 0;
    int only_count = only_buf ? tb__split(only_buf, only, TB__MAX_LIST) : 0;
    int rc = TB_EXIT_FAIL;
    tb_doc *libs[TB__MAX_LIST] = {0};
    tb_doc *doc = NULL;
    tb_retarget_report report = {0};
    if (lib_count == 0) {
        rc = tb_cli_usage_error("retarget", "--clips lists no file");
        goto done;
    }
    if (only_arg && only_count == 0) {
        rc = tb_cli_usage_error("retarget", "--only lists no name");
        goto done;
    }
    {
        const char *inputs[TB__MAX_LIST + 1] = {in};
        for (int l = 0; l < lib_count; l++)
            inputs[l + 1] = lib_paths[l];
        if (tb_cli_check_output(out, inputs, lib_count + 1) != TB_EXIT_OK ||
            (report_path && tb_cli_check_output(report_path, inputs, lib_count + 1) != TB_EXIT_OK))
            goto done;
    }
    if (!(doc = tb_cli_load(in, quiet)))
        goto done;
    for (int l = 0; l < lib_count; l++)
        if (!(libs[l] = tb_cli_load(lib_paths[l], quiet)))
            goto done;
    d.only = only_buf ? (const char *const *)only : NULL;
    d.only_count = only_count;
    tb_error err = {0};
    if (tb_retarget_docs(doc, libs, lib_count, &d, &report, &err) != TB_OK) {
        tb_cli_error(tb__whose(&err, in, clips_arg, lib_paths, lib_count), &err);
        goto done;
    }
    if (tb_cli_save_doc(doc, out) != TB_EXIT_OK)
        goto done;
    if (report_path) {
        json_t *j = tb_retarget_report_json(&report);
        int saved = tb_cli_save_json(report_path, j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        json_decref(j);
        if (saved != TB_EXIT_OK)
            goto done;
    }
    if (!quiet)
        tb__print_report(&report, out);
    rc = TB_EXIT_OK;
done:
    tb_retarget_report_free(&report);
    tb_doc_free(doc);
    for (int l = 0; l < lib_count; l++)
        tb_doc_free(libs[l]);
    free(clips_buf);
    free(only_buf);
    return rc;
}
