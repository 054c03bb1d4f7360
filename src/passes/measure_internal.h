/* Private pieces of the measure pass (measure.c), for its tests. Not
 * installed. */
#ifndef TB_MEASURE_INTERNAL_H
#define TB_MEASURE_INTERNAL_H

#include "tailbone/measure.h"

/* tb_measure_clip without merging held poses: every instant is skinned and
 * its edges walked, even when its skinning matrices are bit for bit the
 * previous instant's. The same result, field for field (test_measure). */
tb_result tb__measure_clip_each(tb_measure_result *out, const tb_model *m, const tb_clip *clip,
                                const tb_measure_desc *desc, tb_error *err);

#endif
