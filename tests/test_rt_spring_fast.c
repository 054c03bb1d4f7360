/* Every test of test_rt_spring.c again, each step going through
 * tb_spring_step_batch_fast() (a batch of one) instead of tb_spring_step():
 * the approximate batch step keeps every SPEC B invariant the scalar
 * reference is held to, with the same thresholds. */
#define TBT_STEP_VIA_BATCH 1
#define TBT_STEP_VIA_FAST 1
#include "test_rt_spring.c"
