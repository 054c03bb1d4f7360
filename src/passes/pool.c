/* A parallel for over independent tasks (passes/pool_internal.h). */
#include "passes/pool_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* One call's pool, on the heap: a worker the system starts late (a busy
 * machine) may find every task taken and the caller gone; the last of the
 * caller and the workers to let go of it frees it. */
typedef struct tb__pool {
    tb__task_fn fn;
    void *ctx;
    int n;
    atomic_int next;
    atomic_int refs;
    int done;                /* tasks finished (under lock) */
    pthread_mutex_t lock;
    pthread_cond_t all_done; /* done == n */
} tb__pool;

typedef struct tb__worker {
    tb__pool *pool;
    int id;
} tb__worker;

static void tb__pool_release(tb__pool *p)
{
    if (atomic_fetch_sub(&p->refs, 1) == 1) {
        pthread_cond_destroy(&p->all_done);
        pthread_mutex_destroy(&p->lock);
        free(p);
    }
}

static void tb__drain(tb__pool *p, int worker)
{
    for (;;) {
        int t = atomic_fetch_add(&p->next, 1);
        if (t >= p->n)
            return;
        p->fn(p->ctx, t, worker);
        pthread_mutex_lock(&p->lock);
        if (++p->done == p->n)
            pthread_cond_signal(&p->all_done);
        pthread_mutex_unlock(&p->lock);
    }
}

static void *tb__worker_main(void *arg)
{
    tb__worker w = *(tb__worker *)arg;
    free(arg);
    tb__drain(w.pool, w.id);
    tb__pool_release(w.pool);
    return NULL;
}

/* Every task by this thread, in order (one thread, or no memory for more). */
static void tb__serial(int n, tb__task_fn fn, void *ctx)
{
    for (int t = 0; t < n; t++)
        fn(ctx, t, 0);
}

void tb__parallel_for(int n, int threads, tb__task_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (threads > n)
        threads = n;
    tb__pool *p = threads > 1 ? malloc(sizeof *p) : NULL;
    if (!p) {
        tb__serial(n, fn, ctx);
        return;
    }
    p->fn = fn, p->ctx = ctx, p->n = n, p->done = 0;
    atomic_init(&p->next, 0);
    atomic_init(&p->refs, 1);
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        tb__serial(n, fn, ctx);
        return;
    }
    if (pthread_cond_init(&p->all_done, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        tb__serial(n, fn, ctx);
        return;
    }
    /* workers detached: the caller waits for the tasks, not for threads
     * the system has not started yet (on a busy machine it may run every
     * task itself before they do) */
    for (int i = 0; i < threads - 1; i++) {
        tb__worker *w = malloc(sizeof *w);
        if (!w)
            break;
        w->pool = p;
        w->id = i + 1;
        atomic_fetch_add(&p->refs, 1);
        pthread_t tid;
        pthread_attr_t attr;
        int started = pthread_attr_init(&attr) == 0;
        if (started) {
            started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                      pthread_create(&tid, &attr, tb__worker_main, w) == 0;
            pthread_attr_destroy(&attr);
        }
        if (!started) {
            atomic_fetch_sub(&p->refs, 1);
            free(w);
            break;
        }
    }
    tb__drain(p, 0);
    pthread_mutex_lock(&p->lock);
    while (p->done < p->n)
        pthread_cond_wait(&p->all_done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    tb__pool_release(p);
}

int tb__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}
