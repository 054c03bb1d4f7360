/* Every test of test_rt_spring.c again, each step going through
 * tb_spring_step_batch() (a batch of one) instead of tb_spring_step(): the
 * batch step keeps every SPEC B invariant the scalar reference is held to. */
#define TBT_STEP_VIA_BATCH 1
#include "test_rt_spring.c"
