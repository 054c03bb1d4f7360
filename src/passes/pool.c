/* A parallel for over independent tasks (passes/pool_internal.h). */
#include "passes/pool_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct tb__pool {
    tb__task_fn fn;
    void *ctx;
    int n;
    atomic_int next;
} tb__pool;

typedef struct tb__worker {
    tb__pool *pool;
    int id;
} tb__worker;

static void tb__drain(tb__pool *p, int worker)
{
    for (;;) {
        int t = atomic_fetch_add(&p->next, 1);
        if (t >= p->n)
            return;
        p->fn(p->ctx, t, worker);
    }
}

static void *tb__worker_main(void *arg)
{
    tb__worker *w = arg;
    tb__drain(w->pool, w->id);
    return NULL;
}

void tb__parallel_for(int n, int threads, tb__task_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (threads > n)
        threads = n;
    tb__pool p = {fn, ctx, n, 0};
    atomic_init(&p.next, 0);
    pthread_t *tid = threads > 1 ? malloc((size_t)(threads - 1) * sizeof *tid) : NULL;
    tb__worker *w = threads > 1 ? malloc((size_t)(threads - 1) * sizeof *w) : NULL;
    int started = 0;
    for (int i = 0; tid && w && i < threads - 1; i++) {
        w[i].pool = &p;
        w[i].id = i + 1;
        if (pthread_create(&tid[i], NULL, tb__worker_main, &w[i]) != 0)
            break;
        started++;
    }
    tb__drain(&p, 0);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    free(w);
}

int tb__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}
