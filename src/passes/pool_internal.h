/* A parallel for over independent tasks (clips; detection's rays and
 * stages): the offline layer's only threads (and where the CLI starts its
 * own, tb__thread_start). No global state: each
 * tb__parallel_for call starts a team of its own (detached threads, below)
 * and returns once every task has finished; a thread the system started too late to take a
 * task ends on its own without touching the caller's data. A team
 * (tb__team_start) keeps its workers for a run of such loops (detection's
 * eight). Tasks write only their own slots, so the result does not depend
 * on the number of threads or on which thread ran which task. */
#ifndef TB_OFFLINE_POOL_INTERNAL_H
#define TB_OFFLINE_POOL_INTERNAL_H

#include <pthread.h>

/* Runs fn(ctx, task, worker) for every task in [0, n), on at most `threads`
 * threads (the caller's included; < 1 means 1). worker in [0, threads) names
 * the thread, for per-thread scratch. A thread that cannot be started leaves
 * its share to the others (at worst the caller runs everything). */
typedef void (*tb__task_fn)(void *ctx, int task, int worker);
void tb__parallel_for(int n, int threads, tb__task_fn fn, void *ctx);

/* A team: threads - 1 workers started once and kept for a run of
 * parallel loops (detection's five to seven: a thread the system starts
 * costs ~0.2 ms on a busy 2-core machine, waking a waiting one a fraction
 * of that). One caller at a time, no nesting (a task must not call
 * tb__team_for on its own team). tb__team_start gives NULL (threads < 2,
 * or no thread could be started): tb__team_for then runs every task on the
 * caller. The same tasks and slots as tb__parallel_for: the result does not
 * depend on the thread count. tb__team_stop returns at once; the workers
 * end on their own and the last to leave frees the team. */
typedef struct tb__team tb__team;
tb__team *tb__team_start(int threads);
void tb__team_for(tb__team *team, int n, tb__task_fn fn, void *ctx);
void tb__team_stop(tb__team *team);

/* Starts fn(arg) on a new (joinable) thread; 0: it could not be started.
 * On Linux the thread starts on another core than the caller's, then may
 * run anywhere: the scheduler otherwise often queues a new thread on its
 * creator's core when the others look busy, behind the caller that is
 * about to work too (the detection's and the bake's second thread started
 * 1.5-5 ms late, timers on the Wolf at -j 2). Every thread of the offline
 * layer and of the CLI starts here. */
int tb__thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

/* The number of online CPUs (at least 1): what a thread count of 0 means
 * where a caller asks for "all cores". */
int tb__cpu_count(void);

#endif
