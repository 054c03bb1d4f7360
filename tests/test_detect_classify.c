/* Detection's classify stage (src/passes/detect.c, SPEC A7 and A10): a pure
 * function of one appendage's measures and the desc. Tables of rows: a
 * measures row made from a base by one or two changes, and the decision the
 * rules give for it (kind, decision, the joint the weight goes to, bones). */
#include "support.h"

#include <math.h>
#include <string.h>

#include "passes/detect_internal.h"

enum { PELVIS = 1, CHEST = 3, TRUNK = 2 };

/* A tail on the pelvis, well clear of the bones: every test passes. H 1.8. */
static tb__app_measures base(void)
{
    tb__app_measures m;
    memset(&m, 0, sizeof m);
    m.H = 1.8f;
    m.cls = TB_CLASS_PELVIS;
    m.attach = PELVIS;
    strcpy(m.attach_name, "Hips");
    m.pelvis = PELVIS;
    m.trunk_joint = TRUNK;
    strcpy(m.trunk_name, "Spine");
    m.shell_count = 1;
    m.vertex_count = 100;
    m.far_area = 1, m.area_total = 10;
    m.elongation = 4, m.slenderness = 8, m.flatness = 1.2f;
    m.length = 0.6f, m.leave = 0.6f, m.lateral = 0.01f;
    m.centroid_ratio = 0.8f, m.standoff_ratio = 0.9f;
    m.rod_extent = 0, m.rod_bow = 1, m.rod_section = INFINITY;
    m.taper = 0.5f, m.bend = 0.2f, m.reach = 0.3f;
    m.K = 4;
    return m;
}

typedef struct row {
    const char *what;
    void (*change)(tb__app_measures *m, tb_appendage_desc *d);
    tb_appendage_kind kind;
    tb_appendage_decision decision;
    int parent;      /* -1: none */
    int attach;      /* the attachment joint reported */
    int bones;
    const char *says; /* a piece of the reason */
} row;

static void none(tb__app_measures *m, tb_appendage_desc *d) { (void)m, (void)d; }
static void mostly_far(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->far_area = 6; }
static void mostly_far_on_head(tb__app_measures *m, tb_appendage_desc *d) { mostly_far(m, d), m->cls = TB_CLASS_HEAD; }
static void wraps(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->wraps = 1; }
static void on_bone(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->centroid_ratio = 0.2f, m->standoff_ratio = 0.3f; }
static void on_bone_thin(tb__app_measures *m, tb_appendage_desc *d) { on_bone(m, d), m->thin_count = 60; }
static void on_bone_half_thin(tb__app_measures *m, tb_appendage_desc *d) { on_bone(m, d), m->thin_count = 50; }
static void on_bone_under_half_thin(tb__app_measures *m, tb_appendage_desc *d) { on_bone(m, d), m->thin_count = 49; }
static void on_bone_separate(tb__app_measures *m, tb_appendage_desc *d) { on_bone(m, d), m->separate_shell = 1; }
static void curled(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->centroid_ratio = 0.2f, m->standoff_ratio = 0.5f; }
static void on_head(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->cls = TB_CLASS_HEAD; }
static void on_thigh(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->cls = TB_CLASS_THIGH; }
static void on_arm(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->cls = TB_CLASS_ARM; }
static void on_shin(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->cls = TB_CLASS_LOWER_LIMB; }
static void unknown_joint(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->cls = TB_CLASS_OTHER; }
static void on_chest(tb__app_measures *m, tb_appendage_desc *d)
{
    (void)d;
    m->cls = TB_CLASS_SPINE, m->attach = CHEST;
    strcpy(m->attach_name, "Chest");
}
static void rod(tb__app_measures *m, tb_appendage_desc *d)
{
    on_chest(m, d);
    m->separate_shell = 1, m->leave = 0.1f;
    m->rod_extent = 0.5f, m->rod_bow = 0.02f, m->rod_section = 1.2f;
}
static void rod_no_trunk(tb__app_measures *m, tb_appendage_desc *d) { rod(m, d), m->trunk_joint = -1; }
static void rod_leaving(tb__app_measures *m, tb_appendage_desc *d) { rod(m, d), m->leave = 0.6f; }
static void rod_bowed(tb__app_measures *m, tb_appendage_desc *d) { rod(m, d), m->rod_bow = 0.2f; }
static void rod_tapered(tb__app_measures *m, tb_appendage_desc *d) { rod(m, d), m->rod_section = 1.6f; }
static void rod_two_shells(tb__app_measures *m, tb_appendage_desc *d) { rod(m, d), m->shell_count = 2; }
static void rod_short(tb__app_measures *m, tb_appendage_desc *d) { rod(m, d), m->rod_extent = 0.2f; }
static void short_(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->length = 0.2f; }
static void stubby(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->elongation = 1.2f, m->slenderness = 3; }
static void stubby_rigid(tb__app_measures *m, tb_appendage_desc *d) { stubby(m, d), d->rigid_wide = 1; }
static void sheet(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->flatness = 3, m->slenderness = 3; }
static void slender_round(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->elongation = 1.2f; }
static void worn(tb__app_measures *m, tb_appendage_desc *d) { (void)d, m->leave = 0.1f; }
static void rigid_mode(tb__app_measures *m, tb_appendage_desc *d) { (void)m, d->mode = TB_FIX_RIGID; }
static void spine_tail(tb__app_measures *m, tb_appendage_desc *d) { on_chest(m, d); }
static void spine_wing(tb__app_measures *m, tb_appendage_desc *d) { on_chest(m, d), m->lateral = 0.2f; }
static void spine_one_sign(tb__app_measures *m, tb_appendage_desc *d)
{
    on_chest(m, d);
    m->bend = 0.01f, m->reach = 0.05f, m->leave = 0.4f; /* one sign: the taper (0.5 < 0.7) */
}
static void spine_two_signs(tb__app_measures *m, tb_appendage_desc *d) { spine_one_sign(m, d), m->reach = 0.3f; }
static void spine_leaves_far(tb__app_measures *m, tb_appendage_desc *d)
{
    spine_one_sign(m, d), m->leave = 0.6f; /* leave > 2 leave_min: the fourth sign */
}

static const row rows[] = {
    {"a tail on the pelvis", none, TB_KIND_TAIL, TB_DECIDE_CHAIN, PELVIS, PELVIS, 4,
     "elongation 4.00 >= 1.80, centroid ratio 0.80 >= 0.40, on the pelvis (Hips): tail"},
    {"far skin over half the skin", mostly_far, TB_KIND_BODY, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "more than half"},
    {"the far-area rule comes before the head", mostly_far_on_head, TB_KIND_BODY, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0,
     "the body itself"},
    {"wraps a bone", wraps, TB_KIND_BODY, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "around a bone"},
    {"both ratios under the minimum", on_bone, TB_KIND_BODY, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0,
     "centroid ratio 0.20 and chain standoff 0.30 < 0.40"},
    {"on the bone but mostly thin skin", on_bone_thin, TB_KIND_TAIL, TB_DECIDE_CHAIN, PELVIS, PELVIS, 4,
     "a separate shell (centroid ratio 0.20)"},
    {"on the bone, half of it thin", on_bone_half_thin, TB_KIND_TAIL, TB_DECIDE_CHAIN, PELVIS, PELVIS, 4, "tail"},
    {"on the bone, under half of it thin", on_bone_under_half_thin, TB_KIND_BODY, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0,
     "(body)"},
    {"on the bone but a separate shell", on_bone_separate, TB_KIND_TAIL, TB_DECIDE_CHAIN, PELVIS, PELVIS, 4, "tail"},
    {"curled: the standoff passes", curled, TB_KIND_TAIL, TB_DECIDE_CHAIN, PELVIS, PELVIS, 4,
     "chain standoff 0.50 >= 0.40"},
    {"on the head", on_head, TB_KIND_HEAD, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "ears and hair"},
    {"on a thigh", on_thigh, TB_KIND_LIMB, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "on a limb (Hips, thigh"},
    {"on an arm", on_arm, TB_KIND_LIMB, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "left as rigged"},
    {"on a shin", on_shin, TB_KIND_LIMB, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "left as rigged"},
    {"on a joint of no class", unknown_joint, TB_KIND_OTHER, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "no known class"},
    {"a straight rod along the trunk", rod, TB_KIND_CARRIED, TB_DECIDE_RIGID, TRUNK, TRUNK, 0,
     "carried, rigid on Spine"},
    {"a rod with no trunk bone", rod_no_trunk, TB_KIND_CARRIED, TB_DECIDE_RIGID, CHEST, CHEST, 0,
     "carried, rigid on Chest"},
    {"a rod leaving the trunk is read by the spine signs", rod_leaving, TB_KIND_TAIL, TB_DECIDE_CHAIN, CHEST, CHEST, 4,
     "4 of 4 tail signs: tail"},
    {"a bowed rod lying along the trunk is worn", rod_bowed, TB_KIND_WIDE, TB_DECIDE_UNTOUCHED, -1, CHEST, 0,
     "worn along the body"},
    {"a tapering rod lying along the trunk is worn", rod_tapered, TB_KIND_WIDE, TB_DECIDE_UNTOUCHED, -1, CHEST, 0,
     "worn along the body"},
    {"two shells are not one rod", rod_two_shells, TB_KIND_WIDE, TB_DECIDE_UNTOUCHED, -1, CHEST, 0, "worn"},
    {"a rod shorter than the tail minimum", rod_short, TB_KIND_WIDE, TB_DECIDE_UNTOUCHED, -1, CHEST, 0, "worn"},
    {"too short for bones", short_, TB_KIND_SHORT, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "too short for bones"},
    {"not long", stubby, TB_KIND_WIDE, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "not long (elongation 1.20"},
    {"not long, wide bound rigidly on request", stubby_rigid, TB_KIND_WIDE, TB_DECIDE_RIGID, PELVIS, PELVIS, 0,
     "bound rigidly on request"},
    {"a sheet", sheet, TB_KIND_WIDE, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "a sheet"},
    {"slender though round in covariance (curled)", slender_round, TB_KIND_TAIL, TB_DECIDE_CHAIN, PELVIS, PELVIS, 4,
     "slenderness 8.0 >= 5.0 (elongation 1.20), centroid ratio 0.80 >= 0.40, on the pelvis (Hips): tail"},
    {"worn along the body", worn, TB_KIND_WIDE, TB_DECIDE_UNTOUCHED, -1, PELVIS, 0, "0.10 L further"},
    {"rigid mode", rigid_mode, TB_KIND_TAIL, TB_DECIDE_RIGID, PELVIS, PELVIS, 0, "tail"},
    {"a tail on the spine", spine_tail, TB_KIND_TAIL, TB_DECIDE_CHAIN, CHEST, CHEST, 4,
     "taper 0.50, bend 0.20, reach 0.30, leave 0.60: 4 of 4"},
    {"off the midline: a wing", spine_wing, TB_KIND_CARRIED, TB_DECIDE_RIGID, CHEST, CHEST, 0, ", off the midline"},
    {"one tail sign on the spine", spine_one_sign, TB_KIND_CARRIED, TB_DECIDE_RIGID, CHEST, CHEST, 0,
     "1 of 4 tail signs: carried, rigid on Chest"},
    {"two tail signs on the spine", spine_two_signs, TB_KIND_TAIL, TB_DECIDE_CHAIN, CHEST, CHEST, 4, "2 of 4"},
    {"leaving far is the fourth sign", spine_leaves_far, TB_KIND_TAIL, TB_DECIDE_CHAIN, CHEST, CHEST, 4, "2 of 4"},
};

static void classify_follows_the_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        tb__app_measures m = base();
        tb_appendage_desc d = tb_appendage_defaults(NULL);
        r->change(&m, &d);
        tb__app_measures before = m;
        tb__app_class c;
        tb__classify(&m, &d, &c);
        if (c.kind != r->kind || c.decision != r->decision || c.parent_joint != r->parent ||
            c.attach_joint != r->attach || c.bone_count != r->bones || !strstr(c.reason, r->says))
            fail_msg("%s: kind %s decision %s parent %d attach %d bones %d (want %s %s %d %d %d, \"%s\"): %s", r->what,
                     tb_appendage_kind_name(c.kind), tb_appendage_decision_name(c.decision), c.parent_joint,
                     c.attach_joint, c.bone_count, tb_appendage_kind_name(r->kind),
                     tb_appendage_decision_name(r->decision), r->parent, r->attach, r->bones, r->says, c.reason);
        /* the spine signs are reported only where they were read */
        assert_int_equal(c.spine_signs, m.cls == TB_CLASS_SPINE && strstr(c.reason, "tail signs") != NULL);
        /* pure: the row is not written, and the same row gives the same answer */
        assert_memory_equal(&before, &m, sizeof m);
        tb__app_class again;
        tb__classify(&m, &d, &again);
        assert_memory_equal(&c, &again, sizeof c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify_follows_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
