/* tailbone detect IN [--json] — find appendages and say what fix would do
 * (SPEC A1–A7). Also holds the report table that `fix` prints. */
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "tailbone/appendage.h"
#include "tailbone/humanoid.h"

void tb_cli_print_appendages(FILE *f, const tb_appendage_report *rep, int after)
{
    fprintf(f, "skin %d, H %.4g, pelvis %s: %zu vertices (%zu welded), %zu far (off the body), %d appendage(s)%s\n",
            rep->skin, rep->height, rep->pelvis_name, rep->vertex_count, rep->welded_count, rep->far_count,
            rep->appendage_count, "");
    if (rep->ignored_islands)
        fprintf(f, "  (%zu far island(s) too small to be an appendage ignored)\n", rep->ignored_islands);
    if (rep->body_single_bone >= 0.9f)
        fprintf(f, "  body skinned in rigid pieces: %.0f%% of its vertices on one bone\n",
                100.0 * (double)rep->body_single_bone);
    if (rep->existing_chains)
        fprintf(f, "  existing Tail_* chains: %d\n", rep->existing_chains);
    {
        /* how the roles were found, counted by source */
        int by[8] = {0};
        for (int i = 0; i < rep->role_count; i++)
            if ((int)rep->roles[i].source >= 0 && (int)rep->roles[i].source < 8)
                by[rep->roles[i].source]++;
        fprintf(f, "  roles: %d", rep->role_count);
        const char *sep = " (";
        for (int k = 1; k < 8; k++)
            if (by[k]) {
                fprintf(f, "%sfrom %s %d", sep, tb_role_source_name((tb_role_source)k), by[k]);
                sep = ", ";
            }
        fprintf(f, "%s\n", rep->role_count ? ")" : "");
    }
    if (!rep->appendage_count)
        return;
    fprintf(f, "  %-2s %-8s %-9s %6s %-14s %5s %5s %7s %2s %9s %9s\n", "#", "kind", "decision", "verts", "attachment",
            "elong", "c.rat", "L", "K", "dist", after ? "after" : "");
    for (int i = 0; i < rep->appendage_count; i++) {
        const tb_appendage *a = &rep->appendages[i];
        char after_s[32] = "";
        if (after)
            snprintf(after_s, sizeof after_s, "%.4g", a->distance_after);
        /* the column shows the bone name without any "mixamorig:" prefix */
        const char *colon = strrchr(a->attach_name, ':');
        fprintf(f, "  %-2d %-8s %-9s %6zu %-14.14s %5.2f %5.2f %7.4g %2d %9.4g %9s\n", i,
                tb_appendage_kind_name(a->kind), tb_appendage_decision_name(a->decision), a->vertex_count,
                colon ? colon + 1 : a->attach_name, a->elongation, a->centroid_ratio, a->length, a->bone_count, a->distance_before,
                after_s);
        fprintf(f, "     %s\n", a->reason);
    }
}

int tb_cli_appendage_option(const char *cmd, int key, const char *v, tb_appendage_desc *d)
{
    if (key == TB_CLI_OPT_PELVIS) {
        d->pelvis_joint = v;
        return 0;
    }
    if (key == TB_CLI_OPT_SKIN) {
        char *end;
        long s = strtol(v, &end, 10);
        if (!*v || *end || s < 0 || s > 100000)
            return tb_cli_usage_error(cmd, "--skin needs a skin index");
        d->skin = (int)s + 1;
        return 0;
    }
    if (key == TB_CLI_OPT_ROLE) {
        /* the caller points d->roles at an array of TB_CLI_MAX_ROLES */
        if (!strchr(v, '=') || v[0] == '=')
            return tb_cli_usage_error(cmd, "--role needs ROLE=JOINT (e.g. Hips=Bone.003)");
        if (!d->roles || d->role_count >= TB_CLI_MAX_ROLES)
            return tb_cli_usage_error(cmd, "too many --role options");
        ((const char **)d->roles)[d->role_count++] = v;
        /* the pelvis by hand reaches every step, as --pelvis does */
        if (!strncmp(v, "Hips=", 5) || !strncmp(v, "hips=", 5))
            d->pelvis_joint = v + 5;
        return 0;
    }
    if (key == TB_CLI_OPT_RIGID_WIDE) {
        d->rigid_wide = 1;
        return 0;
    }
    return -1;
}

int tb_cmd_detect(int argc, char **argv)
{
    const char *in = NULL;
    int as_json = 0;
    tb_appendage_desc d;
    memset(&d, 0, sizeof d);
    const char *roles[TB_CLI_MAX_ROLES];
    d.roles = roles;
    enum { JSON = TB_CLI_LONG };
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {"json", no_argument, NULL, JSON},
                                         TB_CLI_APPENDAGE_OPTIONS, {0}};
    tb_cli_args p;
    tb_cli_args_init(&p, "detect", argc, argv, "h", opts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        int o;
        if (c == TB_CLI_BAD) {
            return TB_EXIT_USAGE;
        } else if (c == 'h') {
            printf("usage: tailbone detect IN [--json] [--pelvis NAME] [--role ROLE=JOINT]... [--skin N]\n"
                   "                      [--rigid-wide]\n\n"
                   "Finds the appendages of a rigged character: skin that stands off the body\n"
                   "(outside the body's own thickness round its bones, or farther than 7%% of\n"
                   "the height from every bone where no thickness can be measured), welded by\n"
                   "position and grouped into parts (separate pieces join when they lie along\n"
                   "one another), each with its collar, attachment joint and shape measures,\n"
                   "then classified: tail (chain), carried object (rigid), cape/skirt\n"
                   "(untouched), ears and hair (untouched), body and clothing (untouched).\n"
                   "Prints what `tailbone fix` would do; changes nothing.\n"
                   "  --json          the report as JSON\n"
                   "  --pelvis NAME   the pelvis joint when no Hips role is recognised\n"
                   "  --role ROLE=JOINT  give a role by hand (Hips=Bone.003, LeftUpLeg=thigh_1);\n"
                   "                  repeatable; see `tailbone info` for the roles found\n"
                   "  --skin N        the skin to use (default: the one with most vertices)\n"
                   "  --rigid-wide    report wide garments as bound rigidly (as fix would)\n");
            return TB_EXIT_OK;
        } else if (c == JSON) {
            as_json = 1;
        } else if (c != TB_CLI_OPERAND && (o = tb_cli_appendage_option("detect", c, p.value, &d)) >= 0) {
            if (o)
                return o;
        } else if (!in) {
            in = p.value;
        } else {
            return tb_cli_usage_error("detect", "too many arguments");
        }
    }
    if (!in)
        return tb_cli_usage_error("detect", "needs a FILE");
    tb_doc *doc = tb_cli_load(in, 1);
    if (!doc)
        return TB_EXIT_FAIL;
    tb_error err = {0};
    tb_model *m = NULL;
    tb_appendage_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = TB_EXIT_OK;
    tb_model_desc md;
    memset(&md, 0, sizeof md);
    md.skin = d.skin;
    md.roles = d.roles;
    md.role_count = d.role_count;
    if (tb_model_load_desc(&m, doc, &md, &err) != TB_OK ||
        tb_appendage_detect(&rep, m, &d, &err) != TB_OK) {
        rc = tb_cli_error(in, &err);
    } else if (as_json) {
        json_t *j = tb_appendage_report_json(&rep);
        json_object_set_new(j, "file", json_string(in));
        char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        puts(s);
        free(s);
        json_decref(j);
    } else {
        printf("file: %s\n", in);
        tb_cli_print_appendages(stdout, &rep, 0);
    }
    tb_appendage_report_free(&rep);
    tb_model_free(m);
    tb_doc_free(doc);
    return rc;
}
