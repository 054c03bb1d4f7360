/* The ground floor: what every layer of the library needs and nothing of
 * ours below it (runtime, offline and the CLI include it; it includes only
 * the public common.h). Errors here, units here; the quaternion and matrix
 * layer over cglm is core/tbmath.h. */
#ifndef TB_BASE_H
#define TB_BASE_H

#include <stdlib.h>
#include <string.h>

#include "tailbone/common.h"

/* Fills err (when not NULL) with code, where (NULL: "") and the message
 * (fmt NULL: the code's message from the one table); returns code. The
 * one error helper of the library (result.c). */
tb_result tb__fail(tb_error *err, tb_result code, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Units: the library works in radians and metres (glTF's). Degrees only at
 * the edges (options, printed tables): angle_deg = angle_rad * TB_DEG_PER_RAD. */
#define TB_PI 3.14159265358979323846
#define TB_PI_F ((float)TB_PI) /* the same float as the literal 3.14159265358979323846f */
#define TB_DEG_PER_RAD (180.0 / TB_PI)
#define TB_RAD_PER_DEG (TB_PI / 180.0)

/* Union–find over uint32 ids (uf[x] == x: a root): the root of x, halving
 * the path on the way; unite makes the smaller of two roots the root of
 * both, so the labels do not depend on the order of the unions. */
static inline uint32_t tb__find(uint32_t *uf, uint32_t x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

static inline void tb__unite(uint32_t *uf, uint32_t a, uint32_t b)
{
    a = tb__find(uf, a);
    b = tb__find(uf, b);
    if (a < b)
        uf[b] = a;
    else if (b < a)
        uf[a] = b;
}

/* Options structs (tb_*_desc): all-zero means the documented defaults,
 * resolved in one *_defaults function that starts from a copy of the
 * caller's desc, or from zeros when it gave none (size bytes) ... */
static inline void tb__desc_or_zero(void *dst, const void *desc, size_t size)
{
    if (desc)
        memcpy(dst, desc, size);
    else
        memset(dst, 0, size);
}
/* ... and gives a field left 0 its default. */
#define TB__DEFAULT(field, value) \
    do {                          \
        if ((field) == 0)         \
            (field) = (value);    \
    } while (0)

/* Frees what p points to and forgets it (p: an lvalue), so a second free
 * of its owner finds NULL. */
#define TB__FREE_NULL(p) \
    do {                 \
        free(p);         \
        (p) = NULL;      \
    } while (0)

#endif
