/* A parallel for over independent tasks (clips; detection's rays and
 * stages): the offline layer's only threads. No global state: each call
 * starts its threads (detached) and returns once every task has finished;
 * a thread the system started too late to take a task ends on its own
 * without touching the caller's data. Tasks write only their own slots, so
 * the result does not depend on the number of threads or on which thread
 * ran which task. */
#ifndef TB_OFFLINE_POOL_INTERNAL_H
#define TB_OFFLINE_POOL_INTERNAL_H

/* Runs fn(ctx, task, worker) for every task in [0, n), on at most `threads`
 * threads (the caller's included; < 1 means 1). worker in [0, threads) names
 * the thread, for per-thread scratch. A thread that cannot be started leaves
 * its share to the others (at worst the caller runs everything). */
typedef void (*tb__task_fn)(void *ctx, int task, int worker);
void tb__parallel_for(int n, int threads, tb__task_fn fn, void *ctx);

/* The number of online CPUs (at least 1): what a thread count of 0 means
 * where a caller asks for "all cores". */
int tb__cpu_count(void);

#endif
