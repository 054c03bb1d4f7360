/* Ascending sorts of unsigned integers: the same array qsort with a
 * three-way comparison gives (equal integers are indistinguishable), without
 * an indirect call per comparison. Short arrays by insertion, longer ones by
 * an LSD radix sort on bytes, skipping the bytes all keys share; qsort when
 * the scratch buffer cannot be had. */
#include <stdlib.h>
#include <string.h>

#include "passes/appendage_internal.h"

enum { TB__INSERTION_MAX = 48 };

static int tb__cmp64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int tb__cmp32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* One stable counting pass of src into dst by one byte (at shift) of a key
 * (KEY(record): the integer itself, or a record's key, comp or v); 0 when
 * every record has the same byte there (nothing moved). The integer sorts
 * and tb__sort_cells share it. */
#define TB__COUNT_PASS(name, T, KEY)                                                                 \
    static int name(const T *src, T *dst, size_t n, int shift)                                       \
    {                                                                                                \
        size_t cnt[256] = {0};                                                                       \
        for (size_t i = 0; i < n; i++)                                                               \
            cnt[(KEY(src[i]) >> shift) & 0xff]++;                                                    \
        if (cnt[(KEY(src[0]) >> shift) & 0xff] == n)                                                 \
            return 0;                                                                                \
        size_t at = 0;                                                                               \
        for (int d = 0; d < 256; d++) {                                                              \
            size_t c = cnt[d];                                                                       \
            cnt[d] = at;                                                                             \
            at += c;                                                                                 \
        }                                                                                            \
        for (size_t i = 0; i < n; i++)                                                               \
            dst[cnt[(KEY(src[i]) >> shift) & 0xff]++] = src[i];                                      \
        return 1;                                                                                    \
    }
#define TB__SELF(x) (x)
#define TB__F_KEY(r) ((r).key)
#define TB__F_COMP(r) ((r).comp)
#define TB__F_V(r) ((r).v)
TB__COUNT_PASS(tb__pass_u64, uint64_t, TB__SELF)
TB__COUNT_PASS(tb__pass_u32, uint32_t, TB__SELF)
TB__COUNT_PASS(tb__pass_key, tb__cell_entry, TB__F_KEY)
TB__COUNT_PASS(tb__pass_comp, tb__cell_entry, TB__F_COMP)
TB__COUNT_PASS(tb__pass_v, tb__cell_entry, TB__F_V)

#define TB__RADIX(T, a, n, bytes, cmp, pass)                                                                      \
    do {                                                                                                          \
        if ((n) < TB__INSERTION_MAX) {                                                                            \
            for (size_t i = 1; i < (n); i++) {                                                                    \
                T x = (a)[i];                                                                                     \
                size_t j = i;                                                                                     \
                for (; j > 0 && (a)[j - 1] > x; j--)                                                              \
                    (a)[j] = (a)[j - 1];                                                                          \
                (a)[j] = x;                                                                                       \
            }                                                                                                     \
            return;                                                                                               \
        }                                                                                                         \
        T *tmp = malloc((n) * sizeof *tmp), *src = (a), *dst = tmp;                                               \
        if (!tmp) {                                                                                               \
            qsort((a), (n), sizeof *(a), cmp);                                                                    \
            return;                                                                                               \
        }                                                                                                         \
        T diff = 0; /* the bits that differ from the first key's somewhere: a byte of none moves nothing */      \
        for (size_t i = 1; i < (n); i++)                                                                          \
            diff |= (a)[i] ^ (a)[0];                                                                              \
        for (int shift = 0; shift < 8 * (bytes); shift += 8)                                                      \
            if ((diff >> shift) & 0xff && pass(src, dst, (n), shift)) {                                           \
                T *s = src;                                                                                       \
                src = dst;                                                                                        \
                dst = s;                                                                                          \
            }                                                                                                     \
        if (src != (a))                                                                                           \
            memcpy((a), src, (n) * sizeof *(a));                                                                  \
        free(tmp);                                                                                                \
    } while (0)

void tb__sort_u64(uint64_t *a, size_t n)
{
    TB__RADIX(uint64_t, a, n, 8, tb__cmp64, tb__pass_u64);
}

void tb__sort_u32(uint32_t *a, size_t n)
{
    TB__RADIX(uint32_t, a, n, 4, tb__cmp32, tb__pass_u32);
}

size_t tb__sort_unique_ids(uint32_t *a, size_t n)
{
    tb__sort_u32(a, n);
    size_t u = 0;
    for (size_t k = 0; k < n; k++)
        if (!u || a[u - 1] != a[k])
            a[u++] = a[k];
    return u;
}

static int tb__cmp_cells(const void *a, const void *b)
{
    const tb__cell_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    if (x->comp != y->comp)
        return x->comp < y->comp ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

void tb__sort_cells(tb__cell_entry *e, size_t n)
{
    if (n < TB__INSERTION_MAX) {
        for (size_t i = 1; i < n; i++) {
            tb__cell_entry x = e[i];
            size_t j = i;
            for (; j > 0 && tb__cmp_cells(&e[j - 1], &x) > 0; j--)
                e[j] = e[j - 1];
            e[j] = x;
        }
        return;
    }
    tb__cell_entry *tmp = malloc(n * sizeof *tmp), *src = e, *dst = tmp;
    if (!tmp) {
        qsort(e, n, sizeof *e, tb__cmp_cells);
        return;
    }
    /* least significant first: v, then comp, then key; records already in
     * (comp, v) order (as most callers build them) skip those passes */
    int ordered = 1;
    for (size_t i = 1; i < n && ordered; i++)
        ordered = e[i - 1].comp < e[i].comp || (e[i - 1].comp == e[i].comp && e[i - 1].v < e[i].v);
    /* per field, the bits that differ from the first record's somewhere: a
     * byte of none is the same in every record, and its pass moves nothing */
    uint64_t dkey = 0;
    uint32_t dcomp = 0, dv = 0;
    for (size_t i = 1; i < n; i++) {
        dkey |= e[i].key ^ e[0].key;
        dcomp |= e[i].comp ^ e[0].comp;
        dv |= e[i].v ^ e[0].v;
    }
    for (int field = ordered ? 0 : 2; field >= 0; field--)
        for (int shift = 0; shift < (field == 0 ? 64 : 32); shift += 8) {
            if (!(((field == 2 ? dv : field == 1 ? dcomp : dkey) >> shift) & 0xff))
                continue;
            int moved = field == 2 ? tb__pass_v(src, dst, n, shift)
                        : field == 1 ? tb__pass_comp(src, dst, n, shift)
                                     : tb__pass_key(src, dst, n, shift);
            if (moved) {
                tb__cell_entry *t = src;
                src = dst;
                dst = t;
            }
        }
    if (src != e)
        memcpy(e, src, n * sizeof *e);
    free(tmp);
}
