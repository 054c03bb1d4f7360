/* The one rule for tailbone's tail bone names (tailbone/common.h), used by
 * the runtime's spring (chains found by name) and by every offline pass. */
#include <stdio.h>
#include <string.h>

#include "tailbone/common.h"

int tb_tail_name_split(const char *name, size_t *prefix_len, int *chain, int *index)
{
    if (!name)
        return 0;
    const char *us = strrchr(name, '_');
    if (!us || us - name < 4)
        return 0;
    const char *suf = us + 1;
    int n = 0;
    if (!strcmp(suf, "End")) {
        n = 0;
    } else {
        if (*suf < '1' || *suf > '9') /* no sign, no leading zero, not empty */
            return 0;
        for (const char *c = suf; *c; c++) {
            if (*c < '0' || *c > '9' || c - suf >= 6)
                return 0;
            n = n * 10 + (*c - '0');
        }
    }
    const char *stem;
    int ch = 0;
    if (!memcmp(us - 4, "Tail", 4)) {
        stem = us - 4;
    } else if (us - name >= 5 && !memcmp(us - 5, "Tail", 4) && us[-1] >= 'B' && us[-1] <= 'Z') {
        stem = us - 5;
        ch = us[-1] - 'A';
    } else {
        return 0;
    }
    if (stem > name) {
        char b = stem[-1];
        if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z'))
            return 0; /* "Ponytail_1", "CocktailB_2" */
    }
    if (prefix_len)
        *prefix_len = (size_t)(us - name) + 1;
    if (chain)
        *chain = ch;
    if (index)
        *index = n;
    return 1;
}

int tb_tail_name_parse(const char *name, int *chain, int *index)
{
    return tb_tail_name_split(name, NULL, chain, index);
}

int tb_tail_name_format(char *out, size_t size, int chain, int index)
{
    char stem[8] = "Tail";
    if (chain > 0)
        stem[4] = (char)('A' + chain), stem[5] = 0;
    if (index > 0)
        return snprintf(out, size, "%s_%d", stem, index);
    return snprintf(out, size, index == 0 ? "%s_End" : "%s_", stem);
}
