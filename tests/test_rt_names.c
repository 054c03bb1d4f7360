/* The one Tail_ name rule (src/core/names.c, tailbone/common.h): linked
 * against the runtime alone, as the spring uses it; the offline passes call
 * the same function. A table of names and what the rule says of each. */
#include "support.h"

#include <string.h>

#include "tailbone/common.h"

static void tail_names_follow_the_documented_rule(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int is_tail, chain, index;
        size_t prefix;
    } rows[] = {
        {"Tail_1", 1, 0, 1, 5},
        {"Tail_3", 1, 0, 3, 5},
        {"Tail_End", 1, 0, 0, 5},
        {"TailB_2", 1, 1, 2, 6},
        {"TailZ_End", 1, 25, 0, 6},
        {"mixamorig:TailB_2", 1, 1, 2, 16},
        {"Armature_Tail_1", 1, 0, 1, 14}, /* a prefix ending in a non-letter */
        {"rig|Tail_7", 1, 0, 7, 9},
        {"Tail_100", 1, 0, 100, 5},       /* the name is fine; chain length is the spring's limit */
        {"Tail_999999", 1, 0, 999999, 5},
        {"Tail_1000000", 0, 0, 0, 0},     /* at most six digits */
        {"Tail_0", 0, 0, 0, 0},
        {"Tail_01", 0, 0, 0, 0},          /* no leading zero */
        {"Tail_+1", 0, 0, 0, 0},
        {"Tail_ 1", 0, 0, 0, 0},
        {"Tail_", 0, 0, 0, 0},
        {"Tail_x", 0, 0, 0, 0},
        {"Tail1", 0, 0, 0, 0},
        {"TailA_1", 0, 0, 0, 0},          /* A would be chain 0 again */
        {"Tailb_1", 0, 0, 0, 0},
        {"Ponytail_1", 0, 0, 0, 0},
        {"CocktailB_2", 0, 0, 0, 0},
        {"MyTail_1", 0, 0, 0, 0},
        {"Tail_End_1", 0, 0, 0, 0},
        {"", 0, 0, 0, 0},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        int c = -7, i = -7;
        size_t pl = 999;
        int got = tb_tail_name_split(rows[r].name, &pl, &c, &i);
        if (got != rows[r].is_tail)
            fail_msg("'%s': %s a tail bone name", rows[r].name, got ? "taken as" : "not taken as");
        assert_int_equal(tb_tail_name_parse(rows[r].name, NULL, NULL), got);
        if (!got)
            continue;
        if (c != rows[r].chain || i != rows[r].index || pl != rows[r].prefix)
            fail_msg("'%s': chain %d index %d prefix %zu, wanted %d %d %zu", rows[r].name, c, i, pl, rows[r].chain,
                     rows[r].index, rows[r].prefix);
        /* the prefix length ends just after the '_' that precedes the index */
        assert_int_equal(rows[r].name[pl - 1], '_');
    }
    assert_false(tb_tail_name_parse(NULL, NULL, NULL));
}

/* The names tailbone writes are read back by the rule as the same chain and
 * index, for every chain letter and the weightless end. */
static void written_names_parse_back(void **state)
{
    (void)state;
    char name[32], prefix[8];
    for (int chain = 0; chain < 26; chain++) {
        tb_tail_name_format(prefix, sizeof prefix, chain, -1);
        for (int index = 0; index <= 64; index++) {
            tb_tail_name_format(name, sizeof name, chain, index);
            int c = -1, i = -1;
            size_t pl = 0;
            assert_true(tb_tail_name_split(name, &pl, &c, &i));
            assert_int_equal(c, chain);
            assert_int_equal(i, index);
            assert_int_equal(pl, strlen(prefix));
            assert_memory_equal(name, prefix, pl);
        }
    }
    tb_tail_name_format(name, sizeof name, 1, 0);
    assert_string_equal(name, "TailB_End");
    tb_tail_name_format(name, sizeof name, 0, 12);
    assert_string_equal(name, "Tail_12");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tail_names_follow_the_documented_rule),
        cmocka_unit_test(written_names_parse_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
