/* Humanoid roles from joint names (SPEC A: recognise bones by name). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailbone/humanoid.h"

static const char *const tb__role_names[TB_ROLE_COUNT] = {
    "", "Hips", "Spine", "Spine1", "Spine2", "Neck", "Head",
    "LeftShoulder", "LeftArm", "LeftForeArm", "LeftHand",
    "RightShoulder", "RightArm", "RightForeArm", "RightHand",
    "LeftUpLeg", "LeftLeg", "LeftFoot", "LeftToeBase",
    "RightUpLeg", "RightLeg", "RightFoot", "RightToeBase"};

/* Other layouts, compared after lower-casing and dropping '_', '.', '-', ' '. */
static const struct {
    const char *alias;
    tb_role role;
} tb__aliases[] = {
    {"pelvis", TB_ROLE_HIPS}, {"hip", TB_ROLE_HIPS}, {"root_hips", TB_ROLE_HIPS},
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
    for (int r = 1; r < TB_ROLE_COUNT; r++) {
        char want[64];
        tb__squash(tb__role_names[r], want, sizeof want);
        if (!strcmp(sq, want))
            return (tb_role)r;
    }
    for (size_t i = 0; i < sizeof tb__aliases / sizeof tb__aliases[0]; i++) {
        char want[64];
        tb__squash(tb__aliases[i].alias, want, sizeof want);
        if (!strcmp(sq, want))
            return tb__aliases[i].role;
    }
    /* "Spine" variants written with a separator: "Spine_1" squashes to spine1. */
    return TB_ROLE_NONE;
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

int tb_tail_name_parse(const char *name, int *chain, int *index)
{
    if (!name)
        return 0;
    const char *colon = strrchr(name, ':');
    const char *s = colon ? colon + 1 : name;
    if (strncmp(s, "Tail", 4) != 0)
        return 0;
    s += 4;
    int ch = 0;
    if (*s >= 'B' && *s <= 'Z' && s[1] == '_') {
        ch = *s - 'A';
        s++;
    }
    if (*s != '_')
        return 0;
    s++;
    int idx;
    if (!strcmp(s, "End")) {
        idx = 0;
    } else {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || *end || v < 1 || v > 64)
            return 0;
        idx = (int)v;
    }
    if (chain)
        *chain = ch;
    if (index)
        *index = idx;
    return 1;
}
