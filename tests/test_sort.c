/* The detector's sorts (src/passes/sort.c): tb__sort_u64, tb__sort_u32 and
 * tb__sort_cells give the order qsort with a three-way comparison gives, on
 * short arrays (insertion) and long ones (radix passes, which skip a byte
 * every key shares), with keys that differ in every byte, in few bytes, or
 * not at all, and cells already in (comp, v) order or not. */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "passes/appendage_internal.h"

/* A small deterministic generator (xorshift64*), so a failure repeats. */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Keys of one kind: 0 all bits random, 1 only the low 12 bits, 2 only
 * bits 40..47 (the low bytes shared), 3 every key the same. */
static uint64_t key(uint64_t *s, int kind)
{
    uint64_t r = next(s);
    return kind == 0 ? r : kind == 1 ? r & 0xfff : kind == 2 ? (r & 0xff0000000000ull) | 0x1234 : 0xabcdef;
}

static int cmp64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_cells(const void *a, const void *b)
{
    const tb__cell_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->comp != y->comp)
        return x->comp < y->comp ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

static const size_t sizes[] = {0, 1, 2, 47, 48, 49, 300, 5000};

/* Sorted and each value once: against a count of which values occur, on
 * lists with many repeats (short ones sorted by insertion, long ones by
 * the radix passes) and on an empty list. */
static void ids_sort_and_keep_each_once(void **state)
{
    (void)state;
    const size_t sizes[4] = {0, 7, 300, 5000};
    uint32_t *a = malloc(5000 * sizeof *a);
    uint8_t *seen = calloc(64, 1);
    assert_non_null(a);
    assert_non_null(seen);
    uint32_t x = 12345;
    for (int s = 0; s < 4; s++) {
        size_t n = sizes[s], distinct = 0;
        memset(seen, 0, 64);
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            a[i] = (x >> 16) % 64u * 1000003u; /* 64 values, spread over the high bits too */
            distinct += !seen[a[i] / 1000003u];
            seen[a[i] / 1000003u] = 1;
        }
        size_t u = tb__sort_unique_ids(a, n);
        assert_int_equal(u, distinct);
        for (size_t i = 1; i < u; i++)
            assert_true(a[i - 1] < a[i]);
        for (size_t i = 0; i < u; i++)
            assert_true(seen[a[i] / 1000003u]);
    }
    free(a);
    free(seen);
}

static void integers_sort_as_qsort_does(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int kind = 0; kind < 4; kind++) {
            size_t n = sizes[si];
            uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
            uint32_t *c = malloc((n + 1) * sizeof *c), *d = malloc((n + 1) * sizeof *d);
            assert_non_null(a), assert_non_null(b), assert_non_null(c), assert_non_null(d);
            for (size_t i = 0; i < n; i++) {
                a[i] = b[i] = key(&s, kind);
                c[i] = d[i] = (uint32_t)(a[i] ^ (a[i] >> 32));
            }
            tb__sort_u64(a, n);
            qsort(b, n, sizeof *b, cmp64);
            if (n)
                assert_memory_equal(a, b, n * sizeof *a);
            tb__sort_u32(c, n);
            qsort(d, n, sizeof *d, cmp32);
            if (n)
                assert_memory_equal(c, d, n * sizeof *c);
            free(a), free(b), free(c), free(d);
        }
}

static void cells_sort_as_qsort_does(void **state)
{
    (void)state;
    uint64_t s = 0x243f6a8885a308d3ull;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int kind = 0; kind < 4; kind++)
            for (int ordered = 0; ordered < 2; ordered++) {
                size_t n = sizes[si];
                tb__cell_entry *a = calloc(n + 1, sizeof *a), *b = calloc(n + 1, sizeof *b);
                assert_non_null(a), assert_non_null(b);
                for (size_t i = 0; i < n; i++) {
                    a[i].key = key(&s, kind);
                    /* ordered: (comp, v) ascending as most callers build them;
                     * else few components, vertices repeated across them */
                    a[i].comp = ordered ? (uint32_t)(i / 7) : (uint32_t)(next(&s) % 5);
                    a[i].v = ordered ? (uint32_t)i : (uint32_t)(next(&s) % (n + 3)) + (uint32_t)(i << 20);
                }
                memcpy(b, a, n * sizeof *a);
                tb__sort_cells(a, n);
                qsort(b, n, sizeof *b, cmp_cells);
                for (size_t i = 0; i < n; i++) {
                    assert_true(a[i].key == b[i].key);
                    assert_int_equal(a[i].comp, b[i].comp);
                    assert_int_equal(a[i].v, b[i].v);
                }
                free(a), free(b);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(integers_sort_as_qsort_does),
        cmocka_unit_test(cells_sort_as_qsort_does),
        cmocka_unit_test(ids_sort_and_keep_each_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
