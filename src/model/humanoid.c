/* Humanoid roles from joint names (SPEC A: recognise bones by name), and
 * from the skeleton's shape when the names do not say (docs/detection.md,
 * "Roles"). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tbmath.h" /* tb__dot, tb__cross */
#include "tailbone/humanoid.h"

static const char *const tb__role_names[TB_ROLE_COUNT] = {
    "", "Hips", "Spine", "Spine1", "Spine2", "Neck", "Head",
    "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
    "RightShoulder", "RightArm", "RightForeArm", "RightHand",
    "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
    "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"};

/* The same names squashed (tb__squash: lower case, no separators), the
 * form every comparison below takes: one strcmp each instead of a squash
 * per candidate (test_humanoid checks each against tb__role_names). */
static const char *const tb__role_squashed[TB_ROLE_COUNT] = {
    "", "hips", "spine", "spine1", "spine2", "neck", "head",
    "leftshoulder", "leftarm", "leftforearm", "lefthand",
    "rightshoulder", "rightarm", "rightforearm", "righthand",
    "leftupleg", "leftleg", "leftfoot", "lefttoebase",
    "rightupleg", "rightleg", "rightfoot", "righttoebase"};

/* Other layouts, compared after lower-casing and dropping '_', '.', '-', ' '. */
static const struct {
    const char *alias;
    tb_role role;
} tb__aliases[] = {
    {"pelvis", TB_ROLE_HIPS}, {"hip", TB_ROLE_HIPS}, {"roothips", TB_ROLE_HIPS},
    {"spine01", TB_ROLE_SPINE}, {"spine02", TB_ROLE_SPINE1}, {"spine03", TB_ROLE_SPINE2},
    {"chest", TB_ROLE_SPINE1}, {"upperchest", TB_ROLE_SPINE2},
    {"neck01", TB_ROLE_NECK},
    {"clavicle" "l", TB_ROLE_LEFT_SHOULDER}, {"clavicle" "r", TB_ROLE_RIGHT_SHOULDER},
    {"shoulderl", TB_ROLE_LEFT_SHOULDER}, {"shoulderr", TB_ROLE_RIGHT_SHOULDER},
    {"upperarml", TB_ROLE_LEFT_ARM}, {"upperarmr", TB_ROLE_RIGHT_ARM},
    {"lowerarml", TB_ROLE_LEFT_FOREARM}, {"lowerarmr", TB_ROLE_RIGHT_FOREARM},
    {"forearml", TB_ROLE_LEFT_FOREARM}, {"forearmr", TB_ROLE_RIGHT_FOREARM},
    {"handl", TB_ROLE_LEFT_HAND}, {"handr", TB_ROLE_RIGHT_HAND},
    {"thighl", TB_ROLE_LEFT_UPLEG}, {"thighr", TB_ROLE_RIGHT_UPLEG},
    {"upperlegl", TB_ROLE_LEFT_UPLEG}, {"upperlegr", TB_ROLE_RIGHT_UPLEG},
    {"calfl", TB_ROLE_LEFT_LEG}, {"calfr", TB_ROLE_RIGHT_LEG},
    {"shinl", TB_ROLE_LEFT_LEG}, {"shinr", TB_ROLE_RIGHT_LEG},
    {"lowerlegl", TB_ROLE_LEFT_LEG}, {"lowerlegr", TB_ROLE_RIGHT_LEG},
    {"footl", TB_ROLE_LEFT_FOOT}, {"footr", TB_ROLE_RIGHT_FOOT},
    {"balll", TB_ROLE_LEFT_TOE}, {"ballr", TB_ROLE_RIGHT_TOE},
    {"toel", TB_ROLE_LEFT_TOE}, {"toer", TB_ROLE_RIGHT_TOE},
    {"toesl", TB_ROLE_LEFT_TOE}, {"toesr", TB_ROLE_RIGHT_TOE},
    /* VRM / Unity humanoid ("leftUpperLeg") and VRM's J_Bip_L_* joints */
    {"leftupperleg", TB_ROLE_LEFT_UPLEG}, {"rightupperleg", TB_ROLE_RIGHT_UPLEG},
    {"leftlowerleg", TB_ROLE_LEFT_LEG}, {"rightlowerleg", TB_ROLE_RIGHT_LEG},
    {"lefttoes", TB_ROLE_LEFT_TOE}, {"righttoes", TB_ROLE_RIGHT_TOE},
    {"lefttoebase", TB_ROLE_LEFT_TOE}, {"righttoebase", TB_ROLE_RIGHT_TOE},
    {"leftupperarm", TB_ROLE_LEFT_ARM}, {"rightupperarm", TB_ROLE_RIGHT_ARM},
    {"leftlowerarm", TB_ROLE_LEFT_FOREARM}, {"rightlowerarm", TB_ROLE_RIGHT_FOREARM},
    /* 3ds Max Biped ("Bip01 L Thigh", after the "Bip01 " prefix) and
     * Character Creator ("CC_Base_L_Thigh", after "CC_Base_") */
    {"lthigh", TB_ROLE_LEFT_UPLEG}, {"rthigh", TB_ROLE_RIGHT_UPLEG},
    {"lcalf", TB_ROLE_LEFT_LEG}, {"rcalf", TB_ROLE_RIGHT_LEG},
    {"lfoot", TB_ROLE_LEFT_FOOT}, {"rfoot", TB_ROLE_RIGHT_FOOT},
    {"ltoe0", TB_ROLE_LEFT_TOE}, {"rtoe0", TB_ROLE_RIGHT_TOE},
    {"ltoebase", TB_ROLE_LEFT_TOE}, {"rtoebase", TB_ROLE_RIGHT_TOE},
    {"lclavicle", TB_ROLE_LEFT_SHOULDER}, {"rclavicle", TB_ROLE_RIGHT_SHOULDER},
    {"lupperarm", TB_ROLE_LEFT_ARM}, {"rupperarm", TB_ROLE_RIGHT_ARM},
    {"lforearm", TB_ROLE_LEFT_FOREARM}, {"rforearm", TB_ROLE_RIGHT_FOREARM},
    {"lhand", TB_ROLE_LEFT_HAND}, {"rhand", TB_ROLE_RIGHT_HAND},
    {"lupperleg", TB_ROLE_LEFT_UPLEG}, {"rupperleg", TB_ROLE_RIGHT_UPLEG},
    {"llowerleg", TB_ROLE_LEFT_LEG}, {"rlowerleg", TB_ROLE_RIGHT_LEG},
    {"lshoulder", TB_ROLE_LEFT_SHOULDER}, {"rshoulder", TB_ROLE_RIGHT_SHOULDER},
    {"llowerarm", TB_ROLE_LEFT_FOREARM}, {"rlowerarm", TB_ROLE_RIGHT_FOREARM},
    {"waist", TB_ROLE_SPINE}, {"necktwist01", TB_ROLE_NECK},
};

/* Drops any "prefix:", a colon-less "mixamorig<digits>" prefix, and the
 * rig prefixes of other layouts: "Bip01 "/"Bip001 " (3ds Max Biped),
 * "CC_Base_" (Character Creator), "J_Bip_C_"/"J_Bip_" (VRM). */
static const char *tb__strip_prefix(const char *name)
{
    const char *colon = strrchr(name, ':');
    if (colon)
        return colon + 1;
    static const char *const prefixes[] = {"Bip01 ", "Bip001 ", "Bip01_", "Bip001_", "CC_Base_", "J_Bip_C_",
                                           "J_Bip_", NULL};
    for (const char *const *p = prefixes; *p; p++)
        if (strncmp(name, *p, strlen(*p)) == 0)
            return name + strlen(*p);
    if (strncmp(name, "mixamorig", 9) == 0) {
        const char *p = name + 9;
        while (isdigit((unsigned char)*p))
            p++;
        if (*p == '_')
            p++;
        return p;
    }
    return name;
}

static void tb__squash(const char *s, char *out, size_t cap)
{
    size_t j = 0;
    for (; *s && j + 1 < cap; s++) {
        if (*s == '_' || *s == '.' || *s == '-' || *s == ' ')
            continue;
        out[j++] = (char)tolower((unsigned char)*s);
    }
    out[j] = 0;
}

/* Rigify's deform bones: the spine chain is numbered from the hips
 * (DEF-spine = hips … DEF-spine.006 = head); limbs are "DEF-thigh.L" etc. */
static tb_role tb__rigify(const char *name)
{
    static const tb_role spine[] = {TB_ROLE_HIPS, TB_ROLE_SPINE, TB_ROLE_SPINE1, TB_ROLE_SPINE2,
                                    TB_ROLE_NECK, TB_ROLE_NONE, TB_ROLE_HEAD};
    if (strncmp(name, "DEF-spine", 9) != 0)
        return tb_role_from_name(name + 4);
    if (name[9] == 0)
        return TB_ROLE_HIPS;
    int k = name[9] == '.' ? atoi(name + 10) : -1;
    return k >= 1 && k <= 6 ? spine[k] : TB_ROLE_NONE;
}

tb_role tb_role_from_name(const char *name)
{
    if (!name)
        return TB_ROLE_NONE;
    if (strncmp(name, "DEF-", 4) == 0)
        return tb__rigify(name);
    const char *base = tb__strip_prefix(name);
    char sq[128];
    tb__squash(base, sq, sizeof sq);
    for (int r = 1; r < TB_ROLE_COUNT; r++)
        if (!strcmp(sq, tb__role_squashed[r]))
            return (tb_role)r;
    for (size_t i = 0; i < sizeof tb__aliases / sizeof tb__aliases[0]; i++) /* written squashed */
        if (!strcmp(sq, tb__aliases[i].alias))
            return tb__aliases[i].role;
    /* "Spine" variants written with a separator: "Spine_1" squashes to spine1. */
    return TB_ROLE_NONE;
}

const char *tb_role_source_name(tb_role_source s)
{
    static const char *const n[] = {"", "name", "fuzzy-name", "vrm", "shape", "shape-over-name", "override", "tail-root"};
    return (s >= 0 && s <= TB_ROLE_SRC_TAIL_ROOT) ? n[s] : "";
}

tb_role tb_role_parse(const char *s)
{
    if (!s)
        return TB_ROLE_NONE;
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        const char *a = tb__role_names[r], *b = s;
        while (*a && tolower((unsigned char)*a) == tolower((unsigned char)*b))
            a++, b++;
        if (!*a && !*b)
            return (tb_role)r;
    }
    return tb_role_from_name(s);
}

tb_role tb_role_mirror(tb_role r)
{
    if (r >= TB_ROLE_LEFT_SHOULDER && r <= TB_ROLE_LEFT_HAND)
        return (tb_role)(r + 4);
    if (r >= TB_ROLE_RIGHT_SHOULDER && r <= TB_ROLE_RIGHT_HAND)
        return (tb_role)(r - 4);
    if (r >= TB_ROLE_LEFT_UPLEG && r <= TB_ROLE_LEFT_TOE)
        return (tb_role)(r + 4);
    if (r >= TB_ROLE_RIGHT_UPLEG && r <= TB_ROLE_RIGHT_TOE)
        return (tb_role)(r - 4);
    return r;
}

/* ---- loose names ------------------------------------------------------ */

/* Body words, side-less; sided = 1 for limb words (they need a side). */
static const struct {
    const char *word;
    tb_role role; /* the left one for sided words */
    int sided;
} tb__words[] = {
    {"hips", TB_ROLE_HIPS, 0}, {"hip", TB_ROLE_HIPS, 0}, {"pelvis", TB_ROLE_HIPS, 0},
    {"spine", TB_ROLE_SPINE, 0}, {"chest", TB_ROLE_SPINE1, 0}, {"upperchest", TB_ROLE_SPINE2, 0},
    {"neck", TB_ROLE_NECK, 0}, {"head", TB_ROLE_HEAD, 0},
    {"shoulder", TB_ROLE_LEFT_SHOULDER, 1}, {"clavicle", TB_ROLE_LEFT_SHOULDER, 1},
    {"arm", TB_ROLE_LEFT_ARM, 1}, {"upperarm", TB_ROLE_LEFT_ARM, 1},
    {"forearm", TB_ROLE_LEFT_FOREARM, 1}, {"lowerarm", TB_ROLE_LEFT_FOREARM, 1},
    {"hand", TB_ROLE_LEFT_HAND, 1}, {"wrist", TB_ROLE_LEFT_HAND, 1},
    {"upleg", TB_ROLE_LEFT_UPLEG, 1}, {"upperleg", TB_ROLE_LEFT_UPLEG, 1}, {"thigh", TB_ROLE_LEFT_UPLEG, 1},
    {"leg", TB_ROLE_LEFT_LEG, 1}, {"lowerleg", TB_ROLE_LEFT_LEG, 1}, {"shin", TB_ROLE_LEFT_LEG, 1},
    {"calf", TB_ROLE_LEFT_LEG, 1}, {"knee", TB_ROLE_LEFT_LEG, 1},
    {"foot", TB_ROLE_LEFT_FOOT, 1}, {"ankle", TB_ROLE_LEFT_FOOT, 1},
    {"toe", TB_ROLE_LEFT_TOE, 1}, {"toes", TB_ROLE_LEFT_TOE, 1}, {"toebase", TB_ROLE_LEFT_TOE, 1},
    {"ball", TB_ROLE_LEFT_TOE, 1},
};

/* Levenshtein distance, capped: returns cap + 1 when larger. */
static int tb__edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63 || (la > lb ? la - lb : lb - la) > (size_t)cap)
        return cap + 1;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0], best = row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best)
                best = v;
        }
        if (best > cap)
            return cap + 1;
    }
    return row[lb];
}

/* Splits a squashed name into letters and digits ("spine01" → "spine", "01");
 * 0 when digits are not all at the end. */
static int tb__split_digits(const char *sq, char *letters, char *digits, size_t cap)
{
    size_t n = strlen(sq), k = n;
    while (k > 0 && isdigit((unsigned char)sq[k - 1]))
        k--;
    for (size_t i = 0; i < k; i++)
        if (isdigit((unsigned char)sq[i]))
            return 0;
    if (k >= cap || n - k >= cap)
        return 0;
    memcpy(letters, sq, k);
    letters[k] = 0;
    memcpy(digits, sq + k, n - k + 1);
    return 1;
}

static int tb__ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && !strncmp(s + n - k, suf, k);
}

/* Side marks: returns the name without them in out and sets *side (1 left,
 * 2 right, 0 none). */
static void tb__take_side(const char *s, char *out, size_t cap, int *side)
{
    static const char *const lpre[] = {"Left", "left", "LEFT", "L_", "l_", "L.", "L ", "L-", NULL};
    static const char *const rpre[] = {"Right", "right", "RIGHT", "R_", "r_", "R.", "R ", "R-", NULL};
    static const char *const lsuf[] = {"_Left", "Left", "_left", ".L", "_L", ".l", "_l", " L", "-L", NULL};
    static const char *const rsuf[] = {"_Right", "Right", "_right", ".R", "_R", ".r", "_r", " R", "-R", NULL};
    *side = 0;
    for (int k = 0; lpre[k] && !*side; k++) {
        if (!strncmp(s, lpre[k], strlen(lpre[k])) && s[strlen(lpre[k])]) {
            *side = 1;
            s += strlen(lpre[k]);
        } else if (!strncmp(s, rpre[k], strlen(rpre[k])) && s[strlen(rpre[k])]) {
            *side = 2;
            s += strlen(rpre[k]);
        }
    }
    snprintf(out, cap, "%s", s);
    size_t n = strlen(out);
    for (int k = 0; lsuf[k] && !*side; k++) {
        if (tb__ends_with(out, n, lsuf[k]) && n > strlen(lsuf[k])) {
            *side = 1;
            out[n - strlen(lsuf[k])] = 0;
        } else if (tb__ends_with(out, n, rsuf[k]) && n > strlen(rsuf[k])) {
            *side = 2;
            out[n - strlen(rsuf[k])] = 0;
        }
    }
}

/* A body word with its side and digits → role (Mixamo digits for the spine:
 * "spine1" is Spine1, Unreal's "spine01" is Spine). */
static tb_role tb__word_role(int w, int side, const char *digits)
{
    tb_role r = tb__words[w].role;
    if (tb__words[w].sided) {
        if (!side || *digits)
            return TB_ROLE_NONE;
        return side == 2 ? tb_role_mirror(r) : r;
    }
    if (side)
        return TB_ROLE_NONE; /* "pelvis.L" is a side bone, not the pelvis */
    if (!*digits)
        return r;
    if (r == TB_ROLE_SPINE) {
        static const char *const d[] = {"1", "2", "01", "02", "03"};
        static const tb_role v[] = {TB_ROLE_SPINE1, TB_ROLE_SPINE2, TB_ROLE_SPINE, TB_ROLE_SPINE1, TB_ROLE_SPINE2};
        for (int k = 0; k < 5; k++)
            if (!strcmp(digits, d[k]))
                return v[k];
        return TB_ROLE_NONE;
    }
    if (r == TB_ROLE_NECK && (!strcmp(digits, "1") || !strcmp(digits, "01")))
        return r;
    return TB_ROLE_NONE;
}

/* One reading of a loose name: side marks, then a body word exactly or by a
 * close misspelling. Returns the role, or NONE when nothing or two
 * different roles are as close. */
static tb_role tb__loose(const char *s)
{
    char t[128], sq[128], letters[128], digits[128];
    int side;
    tb__take_side(s, t, sizeof t, &side);
    tb__squash(t, sq, sizeof sq);
    if (!tb__split_digits(sq, letters, digits, sizeof letters) || !*letters)
        return TB_ROLE_NONE;
    int nw = (int)(sizeof tb__words / sizeof tb__words[0]);
    for (int w = 0; w < nw; w++)
        if (!strcmp(letters, tb__words[w].word))
            return tb__word_role(w, side, digits);
    /* misspellings: the side may be misspelt too ("RighUpLeg"), so compare
     * the whole squashed name with every canonical one as well */
    size_t len = strlen(letters);
    int cap = len >= 8 ? 2 : len >= 5 ? 1 : 0;
    if (!cap)
        return TB_ROLE_NONE;
    tb_role best = TB_ROLE_NONE;
    int best_d = cap + 1, tie = 0;
    for (int w = 0; w < nw; w++) {
        if (strlen(tb__words[w].word) < 5)
            continue;
        int d = tb__edit_distance(letters, tb__words[w].word, cap);
        tb_role r = tb__word_role(w, side, digits);
        if (d > cap || !r)
            continue;
        if (d < best_d) {
            best_d = d, best = r, tie = 0;
        } else if (d == best_d && r != best) {
            tie = 1;
        }
    }
    char whole[128], wl[128], wd[128];
    tb__squash(s, whole, sizeof whole);
    if (tb__split_digits(whole, wl, wd, sizeof wl) && strlen(wl) >= 5) {
        int wcap = strlen(wl) >= 8 ? 2 : 1;
        for (int r = 1; r < TB_ROLE_COUNT; r++) {
            char cl[64], cd[64];
            if (!tb__split_digits(tb__role_squashed[r], cl, cd, sizeof cl) || strcmp(cd, wd))
                continue;
            int d = tb__edit_distance(wl, cl, wcap);
            if (d > wcap)
                continue;
            if (d < best_d) {
                best_d = d, best = (tb_role)r, tie = 0;
            } else if (d == best_d && best != (tb_role)r) {
                tie = 1;
            }
        }
    }
    return tie ? TB_ROLE_NONE : best;
}

tb_role tb_role_from_name_fuzzy(const char *name, int *loose)
{
    if (loose)
        *loose = 0;
    tb_role r = tb_role_from_name(name);
    if (r || !name || !*name)
        return r;
    /* Blender's default names carry no meaning: the shape decides */
    if (!strncmp(name, "Bone", 4) && (name[4] == 0 || name[4] == '.' || name[4] == '_'))
        return TB_ROLE_NONE;
    char buf[128];
    const char *s = strrchr(name, ':');
    s = s ? s + 1 : name;
    static const char *const pre[] = {"DEF-", "ORG-", "DEF_", "ORG_", "def_", "CC_Base_", "b_", "B_", "bn_",
                                      "jnt_", "j_", "Bip01_", "Bip01 ", "Bip001 ", "Bip001_", "J_Bip_C_",
                                      "J_Bip_", "Armature_", NULL};
    for (int k = 0; pre[k]; k++)
        if (!strncmp(s, pre[k], strlen(pre[k])) && s[strlen(pre[k])]) {
            s += strlen(pre[k]);
            break;
        }
    snprintf(buf, sizeof buf, "%s", s);
    /* rig suffixes, then a trailing export index ("_01", ".001") */
    static const char *const suf[] = {"_jnt", "_JNT", "_Jnt", "_joint", "_Joint", "_jj", "_bone", "_Bone",
                                      "_bn", "_def", "_DEF", "_skin", "Jnt", "_J", NULL};
    size_t n = strlen(buf);
    for (int k = 0; suf[k]; k++)
        if (tb__ends_with(buf, n, suf[k]) && n > strlen(suf[k])) {
            buf[n - strlen(suf[k])] = 0;
            break;
        }
    /* Rigify's spine is numbered from the hips, with or without DEF-/ORG- */
    if (!strncmp(buf, "spine.", 6) && strlen(buf) == 9 && isdigit((unsigned char)buf[6])) {
        char def[160];
        snprintf(def, sizeof def, "DEF-%s", buf);
        r = tb__rigify(def);
    }
    if (!r)
        r = tb_role_from_name(buf);
    if (!r)
        r = tb__loose(buf);
    if (!r) {
        n = strlen(buf);
        size_t k = n;
        while (k > 0 && isdigit((unsigned char)buf[k - 1]))
            k--;
        if (k < n && k > 1 && (buf[k - 1] == '_' || buf[k - 1] == '.')) {
            buf[k - 1] = 0;
            r = tb_role_from_name(buf);
            if (!r)
                r = tb__loose(buf);
        }
    }
    if (r && loose)
        *loose = 1;
    return r;
}

const char *tb_role_name(tb_role role)
{
    return (role > 0 && role < TB_ROLE_COUNT) ? tb__role_names[role] : "";
}

tb_role_class tb_role_class_of(tb_role r)
{
    switch (r) {
    case TB_ROLE_HIPS: return TB_CLASS_PELVIS;
    case TB_ROLE_SPINE:
    case TB_ROLE_SPINE1:
    case TB_ROLE_SPINE2: return TB_CLASS_SPINE;
    case TB_ROLE_NECK:
    case TB_ROLE_HEAD: return TB_CLASS_HEAD;
    case TB_ROLE_LEFT_UPLEG:
    case TB_ROLE_RIGHT_UPLEG: return TB_CLASS_THIGH;
    case TB_ROLE_LEFT_LEG:
    case TB_ROLE_RIGHT_LEG:
    case TB_ROLE_LEFT_FOOT:
    case TB_ROLE_RIGHT_FOOT:
    case TB_ROLE_LEFT_TOE:
    case TB_ROLE_RIGHT_TOE: return TB_CLASS_LOWER_LIMB;
    case TB_ROLE_LEFT_SHOULDER:
    case TB_ROLE_LEFT_ARM:
    case TB_ROLE_LEFT_FOREARM:
    case TB_ROLE_LEFT_HAND:
    case TB_ROLE_RIGHT_SHOULDER:
    case TB_ROLE_RIGHT_ARM:
    case TB_ROLE_RIGHT_FOREARM:
    case TB_ROLE_RIGHT_HAND: return TB_CLASS_ARM;
    default: return TB_CLASS_OTHER;
    }
}

const char *tb_role_class_name(tb_role_class c)
{
    static const char *const n[] = {"other", "pelvis", "spine", "head", "thigh", "lower-limb", "arm"};
    return (c >= 0 && c <= TB_CLASS_ARM) ? n[c] : "other";
}

/* ---- roles from the shape (docs/detection.md, "Roles") ----------------- */

typedef struct tb__shape {
    const tb_shape_skeleton *in;
    int n;
    int *first, *next;   /* child lists, children in index order */
    int *count;          /* usable joints in the subtree */
    float (*ext)[3];     /* a usable leaf's far end (pos + 2 (centroid - pos)), else pos */
    float *h;            /* height along up */
    float *lo, *hi;      /* lowest/highest height in the subtree (positions and ends) */
    int *lo_j, *hi_j;    /* the joints giving them */
    float up[3];
    float g, top, S;     /* ground, top, S = top - ground */
} tb__shape;

static float tb__norm(const float a[3])
{
    return sqrtf(tb__dot(a, a));
}

static int tb__usable(const tb__shape *s, int j)
{
    return !s->in->usable || s->in->usable[j];
}

static float tb__mass(const tb__shape *s, int j)
{
    return s->in->skin_mass ? s->in->skin_mass[j] : 1.0f;
}

/* a - b with its component along up removed */
static void tb__horiz(const tb__shape *s, const float a[3], const float b[3], float out[3])
{
    float d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    float k = tb__dot(d, s->up);
    for (int i = 0; i < 3; i++)
        out[i] = d[i] - k * s->up[i];
}

static const float *tb__pos(const tb__shape *s, int j)
{
    return s->in->positions[j];
}

/* Heights and subtree extents along s->up. */
static void tb__measure_up(tb__shape *s)
{
    int n = s->n;
    s->g = INFINITY, s->top = -INFINITY;
    for (int j = 0; j < n; j++) {
        s->h[j] = tb__dot(tb__pos(s, j), s->up);
        s->lo[j] = INFINITY, s->hi[j] = -INFINITY;
        s->lo_j[j] = s->hi_j[j] = -1;
        if (!tb__usable(s, j))
            continue;
        float he = tb__dot(s->ext[j], s->up);
        s->lo[j] = fminf(s->h[j], he), s->hi[j] = fmaxf(s->h[j], he);
        s->lo_j[j] = s->hi_j[j] = j;
        s->g = fminf(s->g, s->lo[j]), s->top = fmaxf(s->top, s->hi[j]);
    }
    for (int j = n - 1; j > 0; j--) {
        int p = s->in->parents[j];
        if (p < 0)
            continue;
        if (s->lo[j] < s->lo[p])
            s->lo[p] = s->lo[j], s->lo_j[p] = s->lo_j[j];
        if (s->hi[j] > s->hi[p])
            s->hi[p] = s->hi[j], s->hi_j[p] = s->hi_j[j];
    }
    s->S = s->top - s->g;
}

/* The point of joint j's subtree that gives its low (the end when lower). */
static void tb__lo_point(const tb__shape *s, int c, float out[3])
{
    int j = s->lo_j[c];
    const float *p = tb__dot(s->ext[j], s->up) < s->h[j] ? s->ext[j] : tb__pos(s, j);
    memcpy(out, p, sizeof(float) * 3);
}

/* Two branches leaving joint j mirror each other: their far points (fa, fb)
 * at about the same height and distance, on opposite sides of j. Returns
 * an asymmetry (>= 0, / S) or -1 when they do not. */
static float tb__mirror(const tb__shape *s, int j, const float fa[3], const float fb[3], int a, int b)
{
    float S = s->S, ha = tb__dot(fa, s->up), hb = tb__dot(fb, s->up);
    float da[3], db[3], sum[3], dif[3], ta[3], tb[3], tsum[3], tdif[3];
    tb__horiz(s, fa, tb__pos(s, j), da);
    tb__horiz(s, fb, tb__pos(s, j), db);
    tb__horiz(s, tb__pos(s, a), tb__pos(s, j), ta);
    tb__horiz(s, tb__pos(s, b), tb__pos(s, j), tb);
    for (int i = 0; i < 3; i++) {
        sum[i] = da[i] + db[i], dif[i] = da[i] - db[i];
        tsum[i] = ta[i] + tb[i], tdif[i] = ta[i] - tb[i];
    }
    float w = tb__norm(dif), ra = tb__norm(da), rb = tb__norm(db);
    if (fabsf(ha - hb) > 0.1f * S || w < 0.03f * S)
        return -1;
    /* mirror images about a plane through j: their midpoint lies in it */
    if (fabsf(tb__dot(sum, dif)) / (2 * w) > fmaxf(0.25f * w, 0.05f * S))
        return -1;
    if (fabsf(ra - rb) > 0.25f * fmaxf(ra, rb) + 0.03f * S)
        return -1;
    float tw = tb__norm(tdif);
    if (fabsf(s->h[a] - s->h[b]) > 0.1f * S ||
        (tw > 0.01f * S && fabsf(tb__dot(tsum, tdif)) / (2 * tw) > 0.25f * tw + 0.05f * S))
        return -1;
    return (fabsf(ha - hb) + fabsf(ra - rb) + fabsf(s->h[a] - s->h[b])) / S;
}

/* A branch that could be a leg from j: goes well down, to the ground. */
static int tb__leg_like(const tb__shape *s, int j, int c)
{
    float S = s->S;
    return s->count[c] > 0 && s->h[j] - s->lo[c] >= 0.15f * S && s->lo[c] - s->g <= 0.12f * S &&
           s->hi[c] - s->lo[c] >= 0.12f * S;
}

typedef struct tb__pelvis {
    int j, a, b, spine, depth;
    float score;
} tb__pelvis;

/* The best pelvis for the current up: nearest the root, then best score. */
static tb__pelvis tb__find_pelvis(const tb__shape *s, const int *depth)
{
    tb__pelvis best = {-1, -1, -1, -1, 0, 0};
    if (!(s->S > 0) || !isfinite(s->S))
        return best;
    for (int j = 0; j < s->n; j++) {
        if (!tb__usable(s, j))
            continue;
        for (int a = s->first[j]; a >= 0; a = s->next[a]) {
            if (!tb__leg_like(s, j, a))
                continue;
            for (int b = s->next[a]; b >= 0; b = s->next[b]) {
                if (!tb__leg_like(s, j, b))
                    continue;
                float fa[3], fb[3];
                tb__lo_point(s, a, fa);
                tb__lo_point(s, b, fb);
                float asym = tb__mirror(s, j, fa, fb, a, b);
                if (asym < 0)
                    continue;
                int spine = -1;
                for (int c = s->first[j]; c >= 0; c = s->next[c])
                    if (c != a && c != b && s->count[c] > 0 && (spine < 0 || s->hi[c] > s->hi[spine]))
                        spine = c;
                if (spine < 0 || s->hi[spine] - s->h[j] < 0.15f * s->S)
                    continue;
                /* in lengths, not fractions of S: the true up is the long way */
                float score = 2 * s->h[j] - s->lo[a] - s->lo[b] + s->hi[spine] - s->h[j] - 2 * asym * s->S;
                if (best.j < 0 || depth[j] < best.depth || (depth[j] == best.depth && score > best.score)) {
                    best.j = j, best.a = a, best.b = b, best.spine = spine;
                    best.depth = depth[j], best.score = score;
                }
            }
        }
    }
    return best;
}

/* The subtree point of c farthest from joint j (positions; the skin's end
 * too for a one-joint branch). */
static float tb__far_point(const tb__shape *s, int j, int c, int *stack, float out[3])
{
    float best = -1;
    int sp = 0;
    stack[sp++] = c;
    while (sp) {
        int q = stack[--sp];
        for (int k = s->first[q]; k >= 0; k = s->next[k])
            stack[sp++] = k;
        if (!tb__usable(s, q))
            continue;
        /* a leaf's skin end only for a one-joint branch: an appendage
         * wrongly weighted to a hand must not bend the arm */
        for (int e = 0; e < (s->count[c] == 1 ? 2 : 1); e++) {
            const float *p = e ? s->ext[q] : tb__pos(s, q);
            float d[3] = {p[0] - tb__pos(s, j)[0], p[1] - tb__pos(s, j)[1], p[2] - tb__pos(s, j)[2]};
            float l = tb__norm(d);
            if (l > best) {
                best = l;
                memcpy(out, p, sizeof(float) * 3);
            }
        }
    }
    return best;
}

/* A limb chain from c: down the child with the largest subtree, stopping at
 * a leaf or where alike children fan out (fingers, toes). Returns its
 * length; *fan is 1 when it stopped at a fan. */
static int tb__limb(const tb__shape *s, int c, int *chain, int cap, int *fan)
{
    int len = 0;
    *fan = 0;
    for (int cur = c; cur >= 0 && len < cap;) {
        if (tb__usable(s, cur))
            chain[len++] = cur;
        int big = -1, second = 0, kids = 0;
        for (int k = s->first[cur]; k >= 0; k = s->next[k]) {
            if (s->count[k] == 0)
                continue;
            kids++;
            if (big < 0 || s->count[k] > s->count[big]) {
                if (big >= 0)
                    second = s->count[big];
                big = k;
            } else if (s->count[k] > second) {
                second = s->count[k];
            }
        }
        if (kids >= 2 && s->count[big] <= 2 * second + 1 && len > 0) {
            *fan = 1;
            break;
        }
        cur = big;
    }
    /* an end helper: a weightless leaf */
    if (len >= 2 && !*fan && s->in->skin_mass && s->first[chain[len - 1]] < 0 && tb__mass(s, chain[len - 1]) <= 0)
        len--;
    return len;
}

static void tb__assign_arm(const tb__shape *s, tb_role *roles, const int *ch, int len, int fan, int right)
{
    static const tb_role from_end[] = {TB_ROLE_LEFT_HAND, TB_ROLE_LEFT_FOREARM, TB_ROLE_LEFT_ARM,
                                       TB_ROLE_LEFT_SHOULDER};
    tb_role r[4] = {0};
    int k = 0;
    if ((fan && len >= 2) || len >= 4) {
        for (k = 0; k < 4 && k < len; k++)
            r[k] = from_end[k];
        for (k = 0; k < 4 && k < len; k++)
            roles[ch[len - 1 - k]] = right ? tb_role_mirror(r[k]) : r[k];
        return;
    }
    if (len == 3) {
        int clavicle = tb__dist3(tb__pos(s, ch[0]), tb__pos(s, ch[1])) <
                       0.6f * tb__dist3(tb__pos(s, ch[1]), tb__pos(s, ch[2]));
        tb_role a[3] = {TB_ROLE_LEFT_ARM, TB_ROLE_LEFT_FOREARM, TB_ROLE_LEFT_HAND};
        tb_role b[3] = {TB_ROLE_LEFT_SHOULDER, TB_ROLE_LEFT_ARM, TB_ROLE_LEFT_FOREARM};
        for (k = 0; k < 3; k++)
            r[k] = clavicle ? b[k] : a[k];
    } else {
        r[0] = TB_ROLE_LEFT_ARM, r[1] = TB_ROLE_LEFT_FOREARM;
    }
    for (k = 0; k < len && k < 3; k++)
        roles[ch[k]] = right ? tb_role_mirror(r[k]) : r[k];
}

/* Legs from the top: a short level hip bone first is skipped. Returns the
 * index in ch of the thigh. */
static int tb__assign_leg(const tb__shape *s, tb_role *roles, const int *ch, int len, int right)
{
    static const tb_role order[] = {TB_ROLE_LEFT_UPLEG, TB_ROLE_LEFT_LEG, TB_ROLE_LEFT_FOOT, TB_ROLE_LEFT_TOE};
    int k0 = 0;
    while (len - k0 > 2) {
        float d = tb__dist3(tb__pos(s, ch[k0]), tb__pos(s, ch[k0 + 1]));
        float drop = s->h[ch[k0]] - s->h[ch[k0 + 1]];
        if (!(d > 0) || drop >= 0.5f * d)
            break;
        k0++;
    }
    for (int k = 0; k < 4 && k0 + k < len; k++)
        roles[ch[k0 + k]] = right ? tb_role_mirror(order[k]) : order[k];
    return k0;
}

/* Spine roles over the path joints p[0..len): Spine, Spine1, …, the last
 * (where the arms leave) Spine2 when there are three or more. */
static void tb__assign_spine(tb_role *roles, const int *p, int len)
{
    if (len <= 0)
        return;
    roles[p[0]] = TB_ROLE_SPINE;
    if (len == 2)
        roles[p[1]] = TB_ROLE_SPINE1;
    if (len >= 3) {
        roles[p[1]] = TB_ROLE_SPINE1;
        roles[p[len - 1]] = TB_ROLE_SPINE2;
    }
}

/* The forward evidence of one leg: toe ahead of the foot, or the foot's
 * (or the last joint's) skin ahead of its joint. */
static void tb__leg_forward(const tb__shape *s, const tb_role *roles, const int *ch, int len, float acc[3])
{
    int foot = -1, toe = -1;
    for (int k = 0; k < len; k++) {
        tb_role r = roles[ch[k]];
        if (r == TB_ROLE_LEFT_FOOT || r == TB_ROLE_RIGHT_FOOT)
            foot = ch[k];
        if (r == TB_ROLE_LEFT_TOE || r == TB_ROLE_RIGHT_TOE)
            toe = ch[k];
    }
    float d[3] = {0, 0, 0};
    if (foot >= 0 && toe >= 0) {
        tb__horiz(s, tb__pos(s, toe), tb__pos(s, foot), d);
    } else if (s->in->skin_centroid && len > 0) {
        int j = foot >= 0 ? foot : ch[len - 1];
        if (tb__mass(s, j) > 0)
            tb__horiz(s, s->in->skin_centroid[j], tb__pos(s, j), d);
        if (foot < 0)
            for (int i = 0; i < 3; i++)
                d[i] *= 0.5f;
    }
    for (int i = 0; i < 3; i++)
        acc[i] += d[i];
}

/* One run of tb_roles_from_shape: the shape, the scratch, and what each
 * stage hands the next (tree → up and pelvis → spine → arms → neck and head
 * → limbs → forward → arm sides). */
typedef struct tb__rs_job {
    tb__shape s;
    tb_role *roles;
    tb_body_shape *body;
    int *depth, *stack, *path, *chain; /* scratch, n each */
    tb__pelvis best;                   /* the pelvis, its legs a/b and spine */
    int m;                             /* the spine path: path[0..m) */
    int arm_at, arm_a, arm_b;          /* path index the arms leave at, their roots */
    int nlen;                          /* neck to head: chain[0..nlen) */
    int leg_len[2], leg_ch[2][16];     /* a and b as if a were left */
    int arm_len[2], arm_ch[2][16], arm_fan[2];
} tb__rs_job;

static int tb__rs_alloc(tb__rs_job *J, int n)
{
    tb__shape *s = &J->s;
    s->first = malloc((size_t)n * sizeof *s->first);
    s->next = malloc((size_t)n * sizeof *s->next);
    s->count = calloc((size_t)n, sizeof *s->count);
    s->ext = malloc((size_t)n * sizeof *s->ext);
    s->h = malloc((size_t)n * sizeof *s->h);
    s->lo = malloc((size_t)n * sizeof *s->lo);
    s->hi = malloc((size_t)n * sizeof *s->hi);
    s->lo_j = malloc((size_t)n * sizeof *s->lo_j);
    s->hi_j = malloc((size_t)n * sizeof *s->hi_j);
    J->depth = malloc((size_t)n * sizeof *J->depth);
    J->stack = malloc((size_t)n * sizeof *J->stack);
    J->path = malloc((size_t)n * sizeof *J->path);
    J->chain = malloc((size_t)n * sizeof *J->chain);
    return s->first && s->next && s->count && s->ext && s->h && s->lo && s->hi && s->lo_j && s->hi_j && J->depth &&
           J->stack && J->path && J->chain;
}

static void tb__rs_free(tb__rs_job *J)
{
    tb__shape *s = &J->s;
    free(s->first);
    free(s->next);
    free(s->count);
    free(s->ext);
    free(s->h);
    free(s->lo);
    free(s->hi);
    free(s->lo_j);
    free(s->hi_j);
    free(J->depth);
    free(J->stack);
    free(J->path);
    free(J->chain);
}

/* Child lists, depths, usable joints per subtree, a usable leaf's far end. */
static void tb__rs_tree(tb__rs_job *J)
{
    tb__shape *s = &J->s;
    const tb_shape_skeleton *in = s->in;
    int n = s->n;
    for (int j = 0; j < n; j++)
        s->first[j] = s->next[j] = -1;
    for (int j = n - 1; j >= 0; j--) {
        int p = in->parents[j];
        if (p >= 0 && p < j) {
            s->next[j] = s->first[p];
            s->first[p] = j;
        }
    }
    for (int j = 0; j < n; j++) {
        int p = in->parents[j];
        J->depth[j] = p >= 0 && p < j ? J->depth[p] + 1 : 0;
        memcpy(s->ext[j], in->positions[j], sizeof s->ext[j]);
    }
    for (int j = n - 1; j >= 0; j--) {
        s->count[j] += tb__usable(s, j);
        if (in->parents[j] >= 0 && in->parents[j] < j)
            s->count[in->parents[j]] += s->count[j];
    }
    for (int j = 0; j < n; j++) {
        int leaf = 1;
        for (int k = s->first[j]; k >= 0 && leaf; k = s->next[k])
            leaf = s->count[k] == 0;
        if (leaf && tb__usable(s, j) && in->skin_centroid && tb__mass(s, j) > 0)
            for (int i = 0; i < 3; i++)
                s->ext[j][i] = 2 * in->skin_centroid[j][i] - in->positions[j][i];
    }
}

/* The up axis: the one of six whose best pelvis scores highest; 0 when no
 * axis has one. Leaves s.up and its heights measured. */
static int tb__rs_up(tb__rs_job *J)
{
    tb__shape *s = &J->s;
    tb__pelvis best = {-1, -1, -1, -1, 0, 0};
    int best_axis = -1;
    for (int ax = 0; ax < 6; ax++) {
        memset(s->up, 0, sizeof s->up);
        s->up[ax / 2] = ax % 2 ? -1.0f : 1.0f;
        tb__measure_up(s);
        tb__pelvis p = tb__find_pelvis(s, J->depth);
        if (p.j >= 0 && (best.j < 0 || p.score > best.score + 1e-6f)) {
            best = p;
            best_axis = ax;
        }
    }
    J->best = best;
    if (best.j < 0)
        return 0;
    memset(s->up, 0, sizeof s->up);
    s->up[best_axis / 2] = best_axis % 2 ? -1.0f : 1.0f;
    tb__measure_up(s);
    return 1;
}

/* The spine: from the pelvis to the top of its branch. */
static void tb__rs_spine(tb__rs_job *J)
{
    const tb__shape *s = &J->s;
    int j = J->best.j, m = 0, *path = J->path;
    for (int q = s->hi_j[J->best.spine]; q >= 0 && q != j; q = s->in->parents[q])
        path[m++] = q;
    for (int a = 0, b = m - 1; a < b; a++, b--) {
        int t = path[a];
        path[a] = path[b], path[b] = t;
    }
    J->m = m;
}

/* Arms: the first path joint below the top where a long mirrored pair leaves. */
static void tb__rs_arms(tb__rs_job *J)
{
    const tb__shape *s = &J->s;
    int arm_at = -1, arm_a = -1, arm_b = -1;
    float arm_reach = 0;
    for (int i = 0; i < J->m - 1 && arm_at < 0; i++) {
        int pj = J->path[i];
        for (int a = s->first[pj]; a >= 0; a = s->next[a]) {
            if (s->count[a] == 0) /* the path's own child too: the top may be a hand */
                continue;
            float fa[3], fb[3];
            float ra = tb__far_point(s, pj, a, J->stack, fa);
            if (ra < 0.12f * s->S)
                continue;
            for (int b = s->next[a]; b >= 0; b = s->next[b]) {
                if (s->count[b] == 0)
                    continue;
                float rb = tb__far_point(s, pj, b, J->stack, fb);
                if (rb < 0.12f * s->S || tb__mirror(s, pj, fa, fb, a, b) < 0)
                    continue;
                if (fminf(ra, rb) > arm_reach) {
                    arm_reach = fminf(ra, rb);
                    arm_at = i, arm_a = a, arm_b = b;
                }
            }
        }
    }
    J->arm_at = arm_at, J->arm_a = arm_a, J->arm_b = arm_b;
}

/* Neck and head: from where the arms leave, up the highest other branch
 * and on down its largest subtree to a leaf or a fan (eyes, ears); the
 * head is its end. Without arms the whole spine branch is walked so. Then
 * the hips, spine, neck and head roles. */
static void tb__rs_head(tb__rs_job *J)
{
    const tb__shape *s = &J->s;
    const tb_shape_skeleton *in = s->in;
    int n = s->n, *chain = J->chain, *path = J->path, arm_at = J->arm_at;
    tb_role *roles = J->roles;
    J->body->quadruped =
        arm_at >= 0 && tb__leg_like(s, path[arm_at], J->arm_a) && tb__leg_like(s, path[arm_at], J->arm_b);
    int neck_root = J->best.spine;
    if (arm_at >= 0) {
        neck_root = -1;
        for (int c = s->first[path[arm_at]]; c >= 0; c = s->next[c])
            if (c != J->arm_a && c != J->arm_b && s->count[c] > 0 && (neck_root < 0 || s->hi[c] > s->hi[neck_root]))
                neck_root = c;
    }
    int fan, nlen = neck_root >= 0 ? tb__limb(s, neck_root, chain, n, &fan) : 0;
    /* a weightier leaf right under the end is the head (a "Head" leaf
     * beside the ears) */
    if (nlen > 0 && nlen < n && in->skin_mass) {
        int e = chain[nlen - 1], heavy = -1;
        for (int c = s->first[e]; c >= 0; c = s->next[c])
            if (s->first[c] < 0 && tb__usable(s, c) && tb__mass(s, c) > tb__mass(s, heavy >= 0 ? heavy : e))
                heavy = c;
        if (heavy >= 0)
            chain[nlen++] = heavy;
    }
    J->nlen = nlen;
    roles[J->best.j] = TB_ROLE_HIPS;
    if (arm_at >= 0) {
        tb__assign_spine(roles, path, arm_at + 1);
        if (nlen > 0)
            roles[chain[nlen - 1]] = TB_ROLE_HEAD;
        if (nlen > 1)
            roles[chain[0]] = TB_ROLE_NECK;
    } else if (nlen > 0) {
        tb__assign_spine(roles, chain, nlen - 1);
        roles[chain[nlen - 1]] = TB_ROLE_HEAD;
    }
}

/* Limbs, left/right decided after: a and b as if a were left. */
static void tb__rs_limbs(tb__rs_job *J)
{
    const tb__shape *s = &J->s;
    int fan;
    J->leg_len[0] = tb__limb(s, J->best.a, J->leg_ch[0], 16, &fan);
    J->leg_len[1] = tb__limb(s, J->best.b, J->leg_ch[1], 16, &fan);
    tb__assign_leg(s, J->roles, J->leg_ch[0], J->leg_len[0], 0);
    tb__assign_leg(s, J->roles, J->leg_ch[1], J->leg_len[1], 1);
    J->arm_len[0] = J->arm_len[1] = 0;
    J->arm_fan[0] = J->arm_fan[1] = 0;
    if (J->arm_at >= 0) {
        J->arm_len[0] = tb__limb(s, J->arm_a, J->arm_ch[0], 16, &J->arm_fan[0]);
        J->arm_len[1] = tb__limb(s, J->arm_b, J->arm_ch[1], 16, &J->arm_fan[1]);
    }
}

/* Forward: square to up and to the line between the legs, its sign from
 * the toes and feet (and a quadruped's head); the legs swapped when a is
 * on the right. 0 when the legs give no line. */
static int tb__rs_forward(tb__rs_job *J)
{
    const tb__shape *s = &J->s;
    tb_body_shape *body = J->body;
    tb_role *roles = J->roles;
    int a = J->best.a, b = J->best.b;
    float lat[3], f0[3], ev[3] = {0, 0, 0};
    tb__horiz(s, tb__pos(s, a), tb__pos(s, b), lat);
    if (tb__norm(lat) < 0.02f * s->S) {
        float fa[3], fb[3];
        tb__lo_point(s, a, fa);
        tb__lo_point(s, b, fb);
        tb__horiz(s, fa, fb, lat);
    }
    tb__cross(f0, lat, s->up);
    float lf = tb__norm(f0);
    if (!(lf > 0))
        return 0;
    for (int i = 0; i < 3; i++)
        f0[i] /= lf;
    tb__leg_forward(s, roles, J->leg_ch[0], J->leg_len[0], ev);
    tb__leg_forward(s, roles, J->leg_ch[1], J->leg_len[1], ev);
    if (body->quadruped && J->m > 0) {
        float d[3];
        tb__horiz(s, tb__pos(s, J->nlen > 0 ? J->chain[J->nlen - 1] : J->path[J->m - 1]), tb__pos(s, J->best.j), d);
        for (int i = 0; i < 3; i++)
            ev[i] += d[i];
    }
    float sig = tb__dot(ev, f0), sign = 1;
    body->forward_confidence = fabsf(sig) / s->S;
    if (body->forward_confidence >= 0.01f) {
        sign = sig < 0 ? -1.0f : 1.0f;
    } else {
        /* no evidence: glTF's convention, facing +Z (else -Y, a Z-up file) */
        body->forward_confidence = 0;
        sign = fabsf(f0[2]) > 0.1f ? (f0[2] < 0 ? -1.0f : 1.0f) : (f0[1] > 0 ? -1.0f : 1.0f);
    }
    int a_right = sign < 0;
    if (a_right) /* the legs were assigned with a on the left: swap */
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < J->leg_len[k]; i++)
                roles[J->leg_ch[k][i]] = tb_role_mirror(roles[J->leg_ch[k][i]]);
    for (int i = 0; i < 3; i++) {
        body->up[i] = s->up[i];
        body->forward[i] = sign * f0[i];
    }
    return 1;
}

/* Each arm's side from where it reaches: left = up x forward. */
static void tb__rs_arm_sides(tb__rs_job *J)
{
    const tb__shape *s = &J->s;
    const tb_body_shape *body = J->body;
    if (J->arm_at < 0)
        return;
    float left[3], d[3];
    tb__cross(left, body->up, body->forward);
    tb__horiz(s, tb__pos(s, J->arm_ch[0][0]), tb__pos(s, J->arm_ch[1][0]), d);
    if (tb__norm(d) < 0.02f * s->S) {
        float fa[3], fb[3];
        tb__far_point(s, J->path[J->arm_at], J->arm_a, J->stack, fa);
        tb__far_point(s, J->path[J->arm_at], J->arm_b, J->stack, fb);
        tb__horiz(s, fa, fb, d);
    }
    int a_left = tb__dot(d, left) >= 0;
    tb__assign_arm(s, J->roles, J->arm_ch[0], J->arm_len[0], J->arm_fan[0], !a_left);
    tb__assign_arm(s, J->roles, J->arm_ch[1], J->arm_len[1], J->arm_fan[1], a_left);
}

int tb_roles_from_shape(tb_role *roles, tb_body_shape *body, const tb_shape_skeleton *in)
{
    int n = in->joint_count;
    memset(body, 0, sizeof *body);
    body->pelvis = -1;
    body->up[1] = 1, body->forward[2] = 1;
    for (int j = 0; j < n; j++)
        roles[j] = TB_ROLE_NONE;
    if (n < 3)
        return 0;
    tb__rs_job J;
    memset(&J, 0, sizeof J);
    J.s.in = in;
    J.s.n = n;
    J.roles = roles;
    J.body = body;
    int assigned = 0;
    if (tb__rs_alloc(&J, n)) {
        tb__rs_tree(&J);
        if (tb__rs_up(&J)) {
            tb__rs_spine(&J);
            tb__rs_arms(&J);
            tb__rs_head(&J);
            tb__rs_limbs(&J);
            if (tb__rs_forward(&J)) {
                tb__rs_arm_sides(&J);
                body->found = 1;
                body->pelvis = J.best.j;
                for (int q = 0; q < n; q++)
                    assigned += roles[q] != TB_ROLE_NONE;
            }
        }
    }
    tb__rs_free(&J);
    if (!body->found)
        for (int j = 0; j < n; j++)
            roles[j] = TB_ROLE_NONE;
    return assigned;
}

/* The lowest common ancestor of a and b (-1: none). */
static int tb__fork(const int *parents, int n, int a, int b)
{
    for (int x = a, i = 0; x >= 0 && i <= n; x = parents[x], i++)
        for (int y = b, k = 0; y >= 0 && k <= n; y = parents[y], k++)
            if (x == y)
                return x;
    return -1;
}

int tb_roles_fill_spine(tb_role *roles, tb_role_source *src, int n, const int *parents)
{
    int at[TB_ROLE_COUNT];
    for (int q = 0; q < TB_ROLE_COUNT; q++)
        at[q] = -1;
    for (int j = 0; j < n; j++) {
        if (roles[j] == TB_ROLE_SPINE || roles[j] == TB_ROLE_SPINE1 || roles[j] == TB_ROLE_SPINE2)
            return 0;
        if (roles[j] && at[roles[j]] < 0)
            at[roles[j]] = j;
    }
    int hips = at[TB_ROLE_HIPS], last = -1; /* the top spine joint */
    if (hips < 0)
        return 0;
    if (at[TB_ROLE_NECK] >= 0)
        last = parents[at[TB_ROLE_NECK]];
    else if (at[TB_ROLE_HEAD] >= 0)
        last = parents[at[TB_ROLE_HEAD]];
    else if (at[TB_ROLE_LEFT_SHOULDER] >= 0 && at[TB_ROLE_RIGHT_SHOULDER] >= 0)
        last = tb__fork(parents, n, at[TB_ROLE_LEFT_SHOULDER], at[TB_ROLE_RIGHT_SHOULDER]);
    else if (at[TB_ROLE_LEFT_ARM] >= 0 && at[TB_ROLE_RIGHT_ARM] >= 0)
        last = tb__fork(parents, n, at[TB_ROLE_LEFT_ARM], at[TB_ROLE_RIGHT_ARM]);
    int path[64], len = 0, x = last;
    for (int i = 0; x >= 0 && x != hips && i <= n; x = parents[x], i++) {
        if (len == (int)(sizeof path / sizeof path[0]) || roles[x])
            return 0; /* a joint with a role of its own is not the spine */
        path[len++] = x;
    }
    if (x != hips || len == 0)
        return 0;
    for (int i = 0; i < len / 2; i++) { /* from the hips up */
        int t = path[i];
        path[i] = path[len - 1 - i];
        path[len - 1 - i] = t;
    }
    tb__assign_spine(roles, path, len);
    int given = 0;
    for (int i = 0; i < len; i++)
        if (roles[path[i]]) {
            src[path[i]] = TB_ROLE_SRC_SHAPE;
            given++;
        }
    return given;
}

static int tb__sided(tb_role r)
{
    return tb_role_mirror(r) != r;
}

int tb_roles_resolve(tb_role *roles, tb_role_source *src, int n, const tb_role *name_roles,
                     const tb_role_source *name_src, const tb_role *shape_roles, const tb_body_shape *body)
{
    int name_hips = -1, overruled = 0;
    for (int j = 0; j < n; j++) {
        roles[j] = name_roles[j];
        src[j] = name_roles[j] ? name_src[j] : TB_ROLE_SRC_NONE;
        if (name_roles[j] == TB_ROLE_HIPS && name_hips < 0)
            name_hips = j;
    }
    if (!body || !body->found)
        return 0;
    if (name_hips < 0) {
        /* names do not find the body: the shape does; names keep the joints
         * it leaves when their role is still free */
        unsigned char used[TB_ROLE_COUNT] = {0};
        for (int j = 0; j < n; j++)
            used[shape_roles[j]] = 1;
        for (int j = 0; j < n; j++) {
            if (shape_roles[j]) {
                if (name_roles[j] && name_roles[j] != shape_roles[j])
                    overruled++;
                src[j] = !name_roles[j] ? TB_ROLE_SRC_SHAPE
                         : name_roles[j] == shape_roles[j] ? name_src[j]
                                                           : TB_ROLE_SRC_SHAPE_OVER_NAME;
                roles[j] = shape_roles[j];
            } else if (name_roles[j] && !used[name_roles[j]]) {
                used[name_roles[j]] = 1;
            } else {
                roles[j] = TB_ROLE_NONE, src[j] = TB_ROLE_SRC_NONE;
            }
        }
        return overruled;
    }
    if (name_hips != body->pelvis || body->forward_confidence < 0.05f)
        return 0; /* names that find the hips stand */
    /* left/right: the shape, when it sees most sided names mirrored */
    int mirrored = 0, agree = 0;
    for (int j = 0; j < n; j++) {
        if (!tb__sided(name_roles[j]) || !shape_roles[j])
            continue;
        mirrored += shape_roles[j] == tb_role_mirror(name_roles[j]);
        agree += shape_roles[j] == name_roles[j];
    }
    if (mirrored < 2 || mirrored <= 2 * agree)
        return 0;
    for (int j = 0; j < n; j++)
        if (tb__sided(name_roles[j])) {
            roles[j] = tb_role_mirror(name_roles[j]);
            src[j] = TB_ROLE_SRC_SHAPE_OVER_NAME;
            overruled++;
        }
    return overruled;
}
