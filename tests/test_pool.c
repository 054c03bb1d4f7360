/* The offline layer's threads (src/passes/pool.c, pool_internal.h): a
 * parallel for, a team kept for a run of loops, and the thread start both
 * use (on Linux a new thread starts on another core than its caller's, then
 * takes back the caller's whole affinity set before it runs anything). */
#define _GNU_SOURCE /* the affinity calls (Linux) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "passes/pool_internal.h"

#include "support.h"

typedef struct started {
    int arg;
    int affinity_read;
#ifdef CPU_SET
    cpu_set_t set;
#endif
} started;

static void *record(void *p)
{
    started *s = p;
    s->arg++;
#ifdef CPU_SET
    s->affinity_read = pthread_getaffinity_np(pthread_self(), sizeof s->set, &s->set) == 0;
#endif
    return s;
}

/* The function runs once with its argument on a thread the caller can
 * join, and by then the thread may run on every core its caller may (the
 * core it was started away from included). */
static void thread_start_runs_the_function_with_the_callers_whole_affinity(void **state)
{
    (void)state;
    for (int round = 0; round < 8; round++) {
        started s;
        memset(&s, 0, sizeof s);
        s.arg = round;
        pthread_t t;
        assert_true(tb__thread_start(&t, record, &s));
        void *back = NULL;
        assert_int_equal(pthread_join(t, &back), 0);
        assert_ptr_equal(back, &s);
        assert_int_equal(s.arg, round + 1);
#ifdef CPU_SET
        cpu_set_t mine;
        assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof mine, &mine), 0);
        assert_true(s.affinity_read);
        assert_true(CPU_EQUAL(&mine, &s.set));
#endif
    }
}

typedef struct tasks {
    atomic_int *runs;
    int threads;
    atomic_int bad_worker;
} tasks;

static void count_task(void *ctx, int task, int worker)
{
    tasks *t = ctx;
    atomic_fetch_add(&t->runs[task], 1);
    if (worker < 0 || worker >= t->threads)
        atomic_store(&t->bad_worker, 1);
}

/* Every task runs exactly once, on a worker numbered below the thread
 * count, whatever the count (1 runs them all on the caller). */
static void parallel_for_runs_every_task_once(void **state)
{
    (void)state;
    enum { N = 257 };
    atomic_int runs[N];
    for (int threads = 1; threads <= 4; threads++) {
        for (int k = 0; k < N; k++)
            atomic_init(&runs[k], 0);
        tasks t = {runs, threads, 0};
        tb__parallel_for(N, threads, count_task, &t);
        for (int k = 0; k < N; k++)
            assert_int_equal(atomic_load(&runs[k]), 1);
        assert_int_equal(atomic_load(&t.bad_worker), 0);
    }
}

/* A team runs loop after loop, each task of each loop once, every loop
 * ended when tb__team_for returns. */
static void team_runs_each_loop_whole_before_the_next(void **state)
{
    (void)state;
    enum { N = 64, LOOPS = 12 };
    atomic_int runs[N];
    tb__team *team = tb__team_start(3);
    for (int loop = 0; loop < LOOPS; loop++) {
        int n = 1 + loop * 5;
        for (int k = 0; k < N; k++)
            atomic_init(&runs[k], 0);
        tasks t = {runs, 3, 0};
        tb__team_for(team, n, count_task, &t);
        for (int k = 0; k < N; k++)
            assert_int_equal(atomic_load(&runs[k]), k < n ? 1 : 0);
        assert_int_equal(atomic_load(&t.bad_worker), 0);
    }
    tb__team_stop(team);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thread_start_runs_the_function_with_the_callers_whole_affinity),
        cmocka_unit_test(parallel_for_runs_every_task_once),
        cmocka_unit_test(team_runs_each_loop_whole_before_the_next),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
