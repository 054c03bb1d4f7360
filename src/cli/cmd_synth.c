/* tailbone synth — synthetic rigged humanoids with known ground truth. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "tailbone/synth.h"

static void tb__synth_help(void)
{
    printf("usage: tailbone synth --variant NAME -o OUT.glb [--truth OUT.json] [--seed N]\n"
           "                      [--units m|cm] [--names mixamorig|bare]\n"
           "       tailbone synth --onto BODY.glb|synth:VARIANT --fixture NAME -o OUT.glb\n"
           "                      [--truth OUT.json] [--seed N] [--vary]\n"
           "       tailbone synth --list [-v] | --fixtures [-v]\n\n"
           "Writes a ~1.9 m humanoid rigged the way auto-riggers rig it: 22 Mixamo body\n"
           "bones, smooth body weights (tail_segmented: rigid pieces), an appendage (tail,\n"
           "cape, skirt, scabbard, ears, hair) weighted wrongly, and the clips Walk,\n"
           "Sprint, Idle, Crouch, HipSweep and BackFlip. The same arguments always give\n"
           "the same bytes. See docs/synth.md.\n"
           "  --variant NAME   what to build (see --list)\n"
           "  -o, --output F   the GLB to write\n"
           "  --truth F        also write the ground truth (JSON): appendage class, vertex\n"
           "                   indices, attachment bone, root, length, K, height\n"
           "  --seed N         varies clip amplitudes and fur (default %u)\n"
           "  --units m|cm     override the variant's units (cm: armature scaled 0.01)\n"
           "  --names mixamorig|bare  override the variant's joint names\n"
           "  --list           print the variant names, one a line (-v: with a summary)\n"
           "  --onto BODY      add a fixture (tail and/or clothing) to a rigged tail-less\n"
           "                   humanoid: a GLB, or synth:VARIANT for a built-in body\n"
           "  --fixture NAME   which fixture (see --fixtures); needs --onto\n"
           "  --vary           with --onto: the seed also draws the tail's proportions\n"
           "                   (radius, length, gap to the thigh, pieces and their gaps,\n"
           "                   fur width), recorded in the truth\n"
           "  --fixtures       print the fixture names, one a line (-v: with a summary)\n",
           TB_SYNTH_DEFAULT_SEED);
}

/* --onto BODY --fixture NAME: a fixture on a file or a built-in body. */
static int tb__synth_onto(const char *onto, const char *fixture, const char *variant, const char *out,
                          const char *truth_path, const tb_synth_desc *desc)
{
    if (!onto)
        return tb_cli_usage_error("synth", "--fixture needs --onto BODY.glb (or synth:VARIANT)");
    if (!fixture)
        return tb_cli_usage_error("synth", "--onto needs --fixture NAME (tailbone synth --fixtures)");
    if (variant)
        return tb_cli_usage_error("synth", "--variant and --onto do not go together (use --onto synth:VARIANT)");
    if (tb_synth_fixture_find(fixture) < 0)
        return tb_cli_usage_error("synth", "unknown fixture '%s' (tailbone synth --fixtures)", fixture);
    if (!out)
        return tb_cli_usage_error("synth", "needs -o OUT.glb");
    if (truth_path && !strcmp(truth_path, out))
        return tb_cli_usage_error("synth", "--truth and -o name the same file");
    tb_error err = {0};
    tb_doc *body = NULL;
    int from_file = strncmp(onto, "synth:", 6) != 0;
    /* like every command: never over the body, nor the truth over the output */
    const char *inputs[] = {from_file ? onto : NULL, out};
    if (tb_cli_check_output(out, inputs, 1) != TB_EXIT_OK ||
        (truth_path && tb_cli_check_output(truth_path, inputs, 2) != TB_EXIT_OK))
        return TB_EXIT_FAIL;
    if (!from_file) {
        if (tb_synth_variant_find(onto + 6) < 0)
            return tb_cli_usage_error("synth", "unknown synthetic body '%s' (tailbone synth --list)", onto + 6);
        tb_synth_desc bd = {0};
        if (tb_synth_build(&body, onto + 6, &bd, NULL, &err) != TB_OK)
            return tb_cli_error(onto, &err);
    } else if (!(body = tb_cli_load(onto, 1))) {
        return TB_EXIT_FAIL; /* tb_cli_load said why, in one line */
    }
    tb_doc *doc = NULL;
    json_t *truth = NULL;
    int rc = TB_EXIT_OK;
    if (tb_synth_onto_json(&doc, body, fixture, desc, truth_path ? &truth : NULL, &err) != TB_OK) {
        rc = tb_cli_error(onto, &err);
    } else if ((rc = tb_cli_save_doc(doc, out)) != TB_EXIT_OK) {
        /* tb_cli_save_doc said why */
    } else if (truth_path) {
        rc = tb_cli_save_json(truth_path, truth, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    }
    json_decref(truth);
    tb_doc_free(doc);
    tb_doc_free(body);
    return rc;
}

enum { LIST = TB_CLI_LONG, FIXTURES, VARIANT, TRUTH, SEED, UNITS, NAMES, ONTO, FIXTURE, VARY };

/* --seed, --units, --names into desc; -1 when taken, else the exit
 * status of a usage error. */
static int tb__synth_desc_option(int c, const char *val, tb_synth_desc *desc)
{
    if (c == SEED) {
        char *end;
        errno = 0;
        unsigned long s = strtoul(val, &end, 10);
        if (errno || *end || !*val || val[0] == '-' || s > 0xFFFFFFFFul)
            return tb_cli_usage_error("synth", "--seed needs an integer 0..4294967295, not '%s'", val);
        desc->seed = (uint32_t)s;
    } else if (c == UNITS) {
        if (!strcmp(val, "m"))
            desc->units = TB_SYNTH_UNITS_M;
        else if (!strcmp(val, "cm"))
            desc->units = TB_SYNTH_UNITS_CM;
        else
            return tb_cli_usage_error("synth", "--units is m or cm, not '%s'", val);
    } else if (c == NAMES) {
        if (!strcmp(val, "mixamorig"))
            desc->names = TB_SYNTH_NAMES_MIXAMO;
        else if (!strcmp(val, "bare"))
            desc->names = TB_SYNTH_NAMES_BARE;
        else
            return tb_cli_usage_error("synth", "--names is mixamorig or bare, not '%s'", val);
    }
    return -1;
}

/* --list or --fixtures: the names, one a line (-v: with a summary). */
static int tb__synth_print_list(int fixtures, int verbose)
{
    int n = fixtures ? tb_synth_fixture_count() : tb_synth_variant_count();
    for (int i = 0; i < n; i++) {
        const char *name = fixtures ? tb_synth_fixture_name(i) : tb_synth_variant_name(i);
        if (verbose)
            printf("%-*s %s\n", fixtures ? 26 : 18, name,
                   fixtures ? tb_synth_fixture_summary(i) : tb_synth_variant_summary(i));
        else
            printf("%s\n", name);
    }
    return TB_EXIT_OK;
}

int tb_cmd_synth(int argc, char **argv)
{
    const char *variant = NULL, *out = NULL, *truth_path = NULL, *onto = NULL, *fixture = NULL;
    int list = 0, verbose = 0, fixtures = 0;
    tb_synth_desc desc = {0};
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {"list", no_argument, NULL, LIST},
                                         {"fixtures", no_argument, NULL, FIXTURES},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"variant", required_argument, NULL, VARIANT},
                                         {"output", required_argument, NULL, 'o'},
                                         {"truth", required_argument, NULL, TRUTH},
                                         {"seed", required_argument, NULL, SEED},
                                         {"units", required_argument, NULL, UNITS},
                                         {"names", required_argument, NULL, NAMES},
                                         {"onto", required_argument, NULL, ONTO},
                                         {"fixture", required_argument, NULL, FIXTURE},
                                         {"vary", no_argument, NULL, VARY},
                                         {0}};
    tb_cli_args p;
    tb_cli_args_init(&p, "synth", argc, argv, "hvo:", opts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        const char *val = p.value;
        if (c == TB_CLI_BAD) {
            return TB_EXIT_USAGE;
        } else if (c == 'h') {
            tb__synth_help();
            return TB_EXIT_OK;
        } else if (c == LIST) {
            list = 1;
        } else if (c == FIXTURES) {
            fixtures = 1;
        } else if (c == 'v') {
            verbose = 1;
        } else if (c == TB_CLI_OPERAND) {
            return tb_cli_usage_error("synth", "unknown argument '%s'", val);
        } else {
            if (c == VARIANT) {
                variant = val;
            } else if (c == ONTO) {
                onto = val;
            } else if (c == FIXTURE) {
                fixture = val;
            } else if (c == TRUTH) {
                truth_path = val;
            } else if (c == VARY) {
                desc.vary = 1;
            } else if (c == SEED || c == UNITS || c == NAMES) {
                int bad = tb__synth_desc_option(c, val, &desc);
                if (bad >= 0)
                    return bad;
            } else {
                out = val;
            }
        }
    }
    if (list || fixtures) /* --list first when both */
        return tb__synth_print_list(!list, verbose);
    if (onto || fixture)
        return tb__synth_onto(onto, fixture, variant, out, truth_path, &desc);
    if (desc.vary)
        return tb_cli_usage_error("synth", "--vary needs --onto BODY.glb (or synth:VARIANT) and --fixture NAME");
    if (!variant)
        return tb_cli_usage_error("synth", "needs --variant NAME (or --list)");
    if (tb_synth_variant_find(variant) < 0)
        return tb_cli_usage_error("synth", "unknown variant '%s' (tailbone synth --list)", variant);
    if (!out)
        return tb_cli_usage_error("synth", "needs -o OUT.glb");
    tb_doc *doc = NULL;
    json_t *truth = NULL;
    tb_error err = {0};
    if (tb_synth_build_json(&doc, variant, &desc, truth_path ? &truth : NULL, &err) != TB_OK)
        return tb_cli_error(variant, &err);
    int rc = TB_EXIT_OK;
    if ((rc = tb_cli_save_doc(doc, out)) != TB_EXIT_OK) {
        /* the save printed why */
    } else if (truth_path) {
        rc = tb_cli_save_json(truth_path, truth, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    }
    json_decref(truth);
    tb_doc_free(doc);
    return rc;
}
