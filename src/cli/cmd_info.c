/* tailbone info FILE [--json] — what a rigged file holds.
 * The facts are gathered once into a JSON object; the text view prints it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "tailbone/humanoid.h"
#include "tailbone/model.h"
#include "tailbone/tailchain.h"

typedef struct tb__info_opts {
    const char *roles[64]; /* --role ROLE=JOINT */
    int role_count;
} tb__info_opts;

static tb_model_desc tb__model_desc(const tb__info_opts *o, int skin)
{
    tb_model_desc d;
    memset(&d, 0, sizeof d);
    d.skin = skin + 1;
    d.roles = o->roles;
    d.role_count = o->role_count;
    return d;
}

static json_t *tb__vec3(const float v[3])
{
    json_t *a = json_array();
    for (int k = 0; k < 3; k++)
        json_array_append_new(a, json_real(roundf(v[k] * 1e4f) / 1e4f));
    return a;
}

static json_t *tb__skin_info(const tb_doc *doc, int skin, const tb__info_opts *opts)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(skin));
    if (g->skins[skin].name)
        json_object_set_new(o, "name", json_string(g->skins[skin].name));
    json_object_set_new(o, "joint_count", json_integer(g->skins[skin].joint_count));
    tb_model *m = NULL;
    tb_error err = {0};
    tb_model_desc md = tb__model_desc(opts, skin);
    if (tb_model_load_desc(&m, doc, &md, &err) != TB_OK) {
        json_object_set_new(o, "error", json_string(err.message));
        return o;
    }
    json_object_set_new(o, "vertex_count", json_integer((json_int_t)m->vertex_count));
    json_object_set_new(o, "height", json_real(m->height));
    json_object_set_new(o, "armature_scale", json_real(m->armature_scale));
    json_t *joints = json_array();
    for (int j = 0; j < m->skel.joint_count; j++) {
        json_t *e = json_object();
        const char *name = m->skel.names[j];
        json_object_set_new(e, "name", name ? json_string(name) : json_null());
        json_object_set_new(e, "node", json_integer(m->node_of_joint[j]));
        json_object_set_new(e, "parent", json_integer(m->skel.parents[j]));
        json_object_set_new(e, "in_skin", json_boolean(m->skel.has_ibm[j]));
        if (m->roles[j]) {
            json_object_set_new(e, "role", json_string(tb_role_name(m->roles[j])));
            json_object_set_new(e, "role_source", json_string(tb_role_source_name(m->role_source[j])));
        }
        if (m->name_roles[j] && m->name_roles[j] != m->roles[j])
            json_object_set_new(e, "name_says", json_string(tb_role_name(m->name_roles[j])));
        json_array_append_new(joints, e);
    }
    json_object_set_new(o, "joints", joints);
    json_t *found = json_object(), *missing = json_array(), *sources = json_object();
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        int j = m->role_joint[r];
        if (j >= 0) {
            json_object_set_new(found, tb_role_name((tb_role)r), json_string(m->skel.names[j] ? m->skel.names[j] : ""));
            json_object_set_new(sources, tb_role_name((tb_role)r), json_string(tb_role_source_name(m->role_source[j])));
        } else {
            json_array_append_new(missing, json_string(tb_role_name((tb_role)r)));
        }
    }
    json_object_set_new(o, "roles", found);
    json_object_set_new(o, "role_sources", sources);
    json_object_set_new(o, "roles_missing", missing);
    json_t *body = json_object();
    json_object_set_new(body, "found", json_boolean(m->body.found));
    if (m->body.found) {
        const char *pn = m->skel.names[m->body.pelvis];
        json_object_set_new(body, "pelvis", pn ? json_string(pn) : json_null());
        json_object_set_new(body, "quadruped", json_boolean(m->body.quadruped));
        json_object_set_new(body, "up", tb__vec3(m->body.up));
        json_object_set_new(body, "forward", tb__vec3(m->body.forward));
        json_object_set_new(body, "forward_confidence", json_real(roundf(m->body.forward_confidence * 1e4f) / 1e4f));
    }
    json_object_set_new(o, "shape", body);
    /* existing tail chains: tailbone's, the artist's by name or by structure */
    json_t *tails = json_array();
    tb_tail_chain tcs[16];
    int nf = tb_tail_chains_find(m, tcs, 16);
    for (int c = 0; c < nf && c < 16; c++) {
        const tb_tail_chain *tc = &tcs[c];
        json_t *bones = json_array();
        for (int i = 0; i < tc->count; i++)
            json_array_append_new(bones, json_string(m->skel.names[tc->joints[i]] ? m->skel.names[tc->joints[i]] : ""));
        json_t *t = json_object();
        json_object_set_new(t, "bones", bones);
        json_object_set_new(t, "has_end", json_boolean(tc->end_joint >= 0));
        json_object_set_new(t, "parent", m->skel.names[tc->anchor] ? json_string(m->skel.names[tc->anchor]) : json_null());
        json_object_set_new(t, "source", json_string(tb_tail_chain_source_name(tc->source)));
        json_object_set_new(t, "vertices", json_integer((json_int_t)tc->vertices));
        json_array_append_new(tails, t);
    }
    json_object_set_new(o, "tails", tails);
    tb_model_free(m);
    return o;
}

static json_t *tb__gather(tb_doc *doc, const char *path, const tb__info_opts *opts)
{
    const tb_gltf *g = tb_doc_gltf(doc);
    json_t *info = json_object();
    json_object_set_new(info, "file", json_string(path));
    json_t *gen = json_object_get(json_object_get(tb_doc_json(doc), "asset"), "generator");
    if (json_is_string(gen))
        json_object_set_new(info, "generator", json_copy(gen));
    json_t *skins = json_array();
    int *class_of = malloc(((size_t)g->skin_count + 1) * sizeof *class_of);
    if (!class_of || tb_skin_classes(doc, class_of, NULL) != TB_OK) {
        for (int s = 0; class_of && s < g->skin_count; s++)
            class_of[s] = s;
    }
    for (int s = 0; s < g->skin_count; s++) {
        if (class_of && class_of[s] != s) {
            /* a copy of an earlier skin (one per mesh, as some exporters
             * write them): described once */
            json_t *o = json_object();
            json_object_set_new(o, "index", json_integer(s));
            json_object_set_new(o, "joint_count", json_integer(g->skins[s].joint_count));
            json_object_set_new(o, "same_as", json_integer(class_of[s]));
            json_array_append_new(skins, o);
            continue;
        }
        json_array_append_new(skins, tb__skin_info(doc, s, opts));
    }
    free(class_of);
    json_object_set_new(info, "skins", skins);
    /* main skin (most vertices) gives H */
    tb_model *m = NULL;
    tb_model_desc md = tb__model_desc(opts, -1);
    if (tb_model_load_desc(&m, doc, &md, NULL) == TB_OK) {
        json_object_set_new(info, "main_skin", json_integer(m->skin));
        json_object_set_new(info, "height", json_real(m->height));
        json_object_set_new(info, "up_axis", json_string(m->up_axis == 0 ? "x" : m->up_axis == 2 ? "z" : "y"));
        json_object_set_new(info, "armature_scale", json_real(m->armature_scale));
        tb_model_free(m);
    }
    json_t *meshes = json_array();
    for (int i = 0; i < g->mesh_count; i++) {
        json_t *me = json_object();
        if (g->meshes[i].name)
            json_object_set_new(me, "name", json_string(g->meshes[i].name));
        int skin = -1, nodes = 0;
        for (int n = 0; n < g->node_count; n++)
            if (g->nodes[n].mesh == i) {
                nodes++;
                if (g->nodes[n].skin >= 0)
                    skin = g->nodes[n].skin;
            }
        json_object_set_new(me, "skin", skin >= 0 ? json_integer(skin) : json_null());
        json_object_set_new(me, "instances", json_integer(nodes));
        json_t *prims = json_array();
        for (int k = 0; k < g->meshes[i].primitive_count; k++) {
            const tb_gltf_primitive *p = &g->meshes[i].primitives[k];
            json_t *po = json_object();
            size_t vc = p->position >= 0 ? g->accessors[p->position].count : 0;
            size_t ic = p->indices >= 0 ? g->accessors[p->indices].count : vc;
            size_t tc = p->mode == TB_MODE_TRIANGLES ? ic / 3 : (p->mode >= TB_MODE_TRIANGLE_STRIP && ic >= 3) ? ic - 2 : 0;
            json_object_set_new(po, "vertices", json_integer((json_int_t)vc));
            json_object_set_new(po, "triangles", json_integer((json_int_t)tc));
            json_object_set_new(po, "mode", json_integer(p->mode));
            json_object_set_new(po, "weight_sets", json_integer(p->set_count));
            json_object_set_new(po, "material", p->material >= 0 ? json_integer(p->material) : json_null());
            json_array_append_new(prims, po);
        }
        json_object_set_new(me, "primitives", prims);
        json_array_append_new(meshes, me);
    }
    json_object_set_new(info, "meshes", meshes);
    json_t *clips = json_array();
    for (int a = 0; a < g->animation_count; a++) {
        json_t *c = json_object();
        const tb_gltf_animation *an = &g->animations[a];
        json_object_set_new(c, "name", an->name ? json_string(an->name) : json_null());
        json_object_set_new(c, "duration_s", json_real(an->duration_s));
        json_object_set_new(c, "channels", json_integer(an->channel_count));
        json_array_append_new(clips, c);
    }
    json_object_set_new(info, "clips", clips);
    json_t *warn = json_array();
    for (int w = 0; w < tb_doc_warning_count(doc); w++)
        json_array_append_new(warn, json_string(tb_doc_warning(doc, w)));
    json_object_set_new(info, "warnings", warn);
    return info;
}

static const char *tb__s(json_t *o, const char *k, const char *def)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : def;
}

/* The joints are in depth-first order, every parent before its children
 * (tb_model's skeleton), so the tree prints in array order, no recursion:
 * a million-deep chain costs a million lines, not a million stack frames. */
static void tb__print_tree(json_t *joints)
{
    size_t n = json_array_size(joints), i;
    int *depth = malloc((n ? n : 1) * sizeof *depth);
    if (!depth)
        return;
    json_t *j;
    json_array_foreach(joints, i, j) {
        json_int_t parent = json_integer_value(json_object_get(j, "parent"));
        depth[i] = parent >= 0 && (size_t)parent < i ? depth[parent] + 1 : 0;
        const char *role = tb__s(j, "role", NULL), *src = tb__s(j, "role_source", "");
        const char *said = tb__s(j, "name_says", NULL);
        char how[96] = "";
        if (role && strcmp(src, "name"))
            snprintf(how, sizeof how, " from %s%s%s", src, said ? ", name says " : "", said ? said : "");
        int d = depth[i] < 40 ? depth[i] : 40; /* deeper chains print flush at 40 levels */
        printf("    %*s%s%s%s%s%s%s\n", d * 2, "", tb__s(j, "name", "(unnamed)"), role ? "  [" : "",
               role ? role : "", how, role ? "]" : "",
               json_is_true(json_object_get(j, "in_skin")) ? "" : "  (not a skin joint)");
    }
    free(depth);
}

/* A skin's humanoid roles: how many, which are missing, where they came
 * from, and the body shape found. */
static void tb__print_roles(json_t *sk)
{
    json_t *roles = json_object_get(sk, "roles"), *missing = json_object_get(sk, "roles_missing");
    printf("    humanoid roles: %zu of %d recognised", json_object_size(roles), TB_ROLE_COUNT - 1);
    if (json_array_size(missing)) {
        printf(" (missing:");
        size_t k;
        json_t *mname;
        json_array_foreach(missing, k, mname) printf(" %s", json_string_value(mname));
        printf(")");
    }
    printf("\n");
    json_t *src = json_object_get(sk, "role_sources");
    const char *kinds[] = {"name", "fuzzy-name", "vrm", "shape", "shape-over-name", "override", "tail-root"};
    printf("    roles from:");
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int count = 0;
        const char *key;
        json_t *v;
        json_object_foreach(src, key, v) count += !strcmp(json_string_value(v), kinds[k]);
        if (count)
            printf(" %s %d", kinds[k], count);
    }
    json_t *body = json_object_get(sk, "shape");
    if (json_is_true(json_object_get(body, "found")))
        printf("; shape: %s with pelvis %s\n", json_is_true(json_object_get(body, "quadruped")) ? "quadruped" : "biped",
               tb__s(body, "pelvis", "?"));
    else
        printf("; shape: no body found\n");
}

/* A skin's tail chains: first and last bone, count, parent, whose. */
static void tb__print_tails(json_t *sk)
{
    json_t *tails = json_object_get(sk, "tails");
    if (json_array_size(tails) == 0)
        printf("    tail chains: none\n");
    size_t t;
    json_t *tail;
    json_array_foreach(tails, t, tail) {
        json_t *bones = json_object_get(tail, "bones");
        const char *how = tb__s(tail, "source", "");
        printf("    tail chain: %s … %s (%zu bones%s) under %s%s%s\n",
               json_string_value(json_array_get(bones, 0)),
               json_string_value(json_array_get(bones, json_array_size(bones) - 1)), json_array_size(bones),
               json_is_true(json_object_get(tail, "has_end")) ? " + end" : "", tb__s(tail, "parent", "(root)"),
               !strcmp(how, "name") ? "; the artist's, by name (fix --bake-existing drives it)"
               : !strcmp(how, "structure") ? "; the artist's, by its place and skin (fix --bake-existing drives it)"
                                           : "",
               "");
    }
}

/* The meshes: skinned or not, and each primitive's counts. */
static void tb__print_meshes(json_t *info)
{
    json_t *meshes = json_object_get(info, "meshes");
    printf("meshes: %zu\n", json_array_size(meshes));
    json_t *me;
    size_t i;
    json_array_foreach(meshes, i, me) {
        json_t *skin = json_object_get(me, "skin");
        printf("  mesh %zu%s%s: ", i, json_object_get(me, "name") ? " " : "", tb__s(me, "name", ""));
        if (json_is_integer(skin))
            printf("skinned (skin %lld)\n", json_integer_value(skin));
        else
            printf("not skinned\n");
        size_t k;
        json_t *p;
        json_array_foreach(json_object_get(me, "primitives"), k, p) {
            printf("    primitive %zu: %lld vertices, %lld triangles, %lld weight set(s)\n", k,
                   json_integer_value(json_object_get(p, "vertices")), json_integer_value(json_object_get(p, "triangles")),
                   json_integer_value(json_object_get(p, "weight_sets")));
        }
    }
}

static void tb__print_text(json_t *info, int show_tree)
{
    printf("file: %s\n", tb__s(info, "file", ""));
    json_t *h = json_object_get(info, "height");
    if (h) {
        double s = json_real_value(json_object_get(info, "armature_scale"));
        const char *ax = tb__s(info, "up_axis", "y");
        printf("height H: %.4g (bind space, along %s%s)\nnode scale above the skeleton: %.4g%s\n", json_real_value(h),
               ax, strcmp(ax, "y") ? ": a mesh stored lying down under a rotated root" : "", s,
               fabs(s - 0.01) < 1e-4 ? " (Mixamo-style centimetre armature)" : "");
    }
    json_t *skins = json_object_get(info, "skins");
    printf("skins: %zu\n", json_array_size(skins));
    size_t i;
    json_t *sk;
    size_t same = 0;
    json_array_foreach(skins, i, sk) {
        if (json_object_get(sk, "same_as")) {
            if (same++ < 8)
                printf("  skin %zu: same joints and inverse bind matrices as skin %lld\n", i,
                       json_integer_value(json_object_get(sk, "same_as")));
            else if (same == 9)
                printf("  (more skins that repeat an earlier one not listed)\n");
            continue;
        }
        printf("  skin %zu%s%s: %lld joints, %lld skinned vertices\n", i, json_object_get(sk, "name") ? " " : "",
               tb__s(sk, "name", ""), json_integer_value(json_object_get(sk, "joint_count")),
               json_integer_value(json_object_get(sk, "vertex_count")));
        if (json_object_get(sk, "error")) {
            printf("    (%s)\n", tb__s(sk, "error", ""));
            continue;
        }
        tb__print_roles(sk);
        tb__print_tails(sk);
        if (show_tree) {
            printf("    joints:\n");
            tb__print_tree(json_object_get(sk, "joints"));
        }
    }
    tb__print_meshes(info);
    json_t *clips = json_object_get(info, "clips");
    printf("clips: %zu\n", json_array_size(clips));
    json_t *c;
    json_array_foreach(clips, i, c) {
        printf("  %-24s %7.3f s  %lld channels\n", tb__s(c, "name", "(unnamed)"),
               json_real_value(json_object_get(c, "duration_s")), json_integer_value(json_object_get(c, "channels")));
    }
    json_t *warn = json_object_get(info, "warnings");
    json_t *w;
    json_array_foreach(warn, i, w) printf("warning: %s\n", json_string_value(w));
}

int tb_cmd_info(int argc, char **argv)
{
    const char *in = NULL;
    int as_json = 0, tree = 1;
    tb__info_opts opts;
    memset(&opts, 0, sizeof opts);
    enum { JSON = TB_CLI_LONG, NO_TREE, ROLE };
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                              {"json", no_argument, NULL, JSON},
                                              {"no-tree", no_argument, NULL, NO_TREE},
                                              {"role", required_argument, NULL, ROLE},
                                              {0}};
    tb_cli_args p;
    tb_cli_args_init(&p, "info", argc, argv, "h", longopts);
    for (int c; (c = tb_cli_args_next(&p)) != TB_CLI_END;) {
        if (c == TB_CLI_BAD) {
            return TB_EXIT_USAGE;
        } else if (c == 'h') {
            printf("usage: tailbone info FILE [--json] [--no-tree] [--role ROLE=JOINT]...\n\n"
                   "Describes a rigged glTF/GLB: skins and their joint hierarchy with humanoid roles\n"
                   "(Mixamo names with any mixamorig*: prefix, plain names, common other layouts,\n"
                   "loose or misspelt names, a VRM map, else the skeleton's shape; each says where\n"
                   "it came from),\n"
                   "tail chains it already has (tailbone's Tail_*, an artist's Tail1…, b_Tail01…,\n"
                   "*_tail_*, or found by place and skin), meshes and primitives, clips, the model height H in bind\n"
                   "space and the node scale above the skeleton.\n"
                   "FILE may be - (stdin).\n"
                   "  --json      machine-readable output\n"
                   "  --no-tree   omit the joint hierarchy in the text view\n"
                   "  --role ROLE=JOINT  give a role by hand (e.g. Hips=Bone.003); repeatable\n");
            return TB_EXIT_OK;
        } else if (c == JSON) {
            as_json = 1;
        } else if (c == NO_TREE) {
            tree = 0;
        } else if (c == ROLE) {
            if (!strchr(p.value, '='))
                return tb_cli_usage_error("info", "--role needs ROLE=JOINT");
            if (opts.role_count >= 64)
                return tb_cli_usage_error("info", "too many --role options");
            opts.roles[opts.role_count++] = p.value;
        } else if (!in) {
            in = p.value;
        } else {
            return tb_cli_usage_error("info", "too many arguments");
        }
    }
    if (!in)
        return tb_cli_usage_error("info", "needs a FILE");
    tb_doc *doc = tb_cli_load(in, 1);
    if (!doc)
        return TB_EXIT_FAIL;
    json_t *info = tb__gather(doc, in, &opts);
    if (as_json) {
        char *s = json_dumps(info, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        puts(s);
        free(s);
    } else {
        tb__print_text(info, tree);
    }
    json_decref(info);
    tb_doc_free(doc);
    return TB_EXIT_OK;
}
