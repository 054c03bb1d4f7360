/* The ground floor: what every layer of the library needs and nothing of
 * ours below it (runtime, offline and the CLI include it; it includes only
 * the public common.h). Errors here, units here; the quaternion and matrix
 * layer over cglm is core/tbmath.h. */
#ifndef TB_BASE_H
#define TB_BASE_H

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

#endif
