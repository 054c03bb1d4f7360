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

#define TB__RADIX(T, a, n, bytes, cmp)                                                                            \
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
        for (int shift = 0; shift < 8 * (bytes); shift += 8) {                                                    \
            size_t cnt[256] = {0};                                                                                \
            for (size_t i = 0; i < (n); i++)                                                                      \
                cnt[(src[i] >> shift) & 0xff]++;                                                                  \
            if (cnt[(src[0] >> shift) & 0xff] == (n))                                                             \
                continue; /* every key has this byte */                                                           \
            size_t at = 0;                                                                                        \
            for (int d = 0; d < 256; d++) {                                                                       \
                size_t c = cnt[d];                                                                                \
                cnt[d] = at;                                                                                      \
                at += c;                                                                                          \
            }                                                                                                     \
            for (size_t i = 0; i < (n); i++)                                                                      \
                dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];                                                    \
            T *s = src;                                                                                           \
            src = dst;                                                                                            \
            dst = s;                                                                                              \
        }                                                                                                         \
        if (src != (a))                                                                                           \
            memcpy((a), src, (n) * sizeof *(a));                                                                  \
        free(tmp);                                                                                                \
    } while (0)

void tb__sort_u64(uint64_t *a, size_t n)
{
    TB__RADIX(uint64_t, a, n, 8, tb__cmp64);
}

void tb__sort_u32(uint32_t *a, size_t n)
{
    TB__RADIX(uint32_t, a, n, 4, tb__cmp32);
}
