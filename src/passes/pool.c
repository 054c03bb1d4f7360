/* A parallel for over independent tasks (passes/pool_internal.h). */
#define _GNU_SOURCE /* sched_getcpu, the affinity calls (Linux) */
#include "passes/pool_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* What a thread tb__thread_start starts runs first: its own affinity
 * back to the whole set it was started away from. */
typedef struct tb__start {
    void *(*fn)(void *);
    void *arg;
#ifdef CPU_SET
    int restore;
    cpu_set_t all;
#endif
} tb__start;

static void *tb__started(void *p)
{
    tb__start s = *(tb__start *)p;
    free(p);
#ifdef CPU_SET
    if (s.restore)
        pthread_setaffinity_np(pthread_self(), sizeof s.all, &s.all);
#endif
    return s.fn(s.arg);
}

int tb__thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    tb__start *s = malloc(sizeof *s);
    if (!s)
        return 0;
    if (pthread_attr_init(&attr) != 0) {
        free(s);
        return 0;
    }
    s->fn = fn;
    s->arg = arg;
#ifdef CPU_SET
    s->restore = 0;
    int cpu = sched_getcpu();
    if (cpu >= 0 && cpu < CPU_SETSIZE && pthread_getaffinity_np(pthread_self(), sizeof s->all, &s->all) == 0 &&
        CPU_ISSET(cpu, &s->all) && CPU_COUNT(&s->all) > 1) {
        cpu_set_t away = s->all;
        CPU_CLR(cpu, &away);
        s->restore = pthread_attr_setaffinity_np(&attr, sizeof away, &away) == 0;
    }
#endif
    int started = pthread_create(tid, &attr, tb__started, s) == 0;
    pthread_attr_destroy(&attr);
    if (!started)
        free(s);
    return started;
}

/* Starts fn(arg) on a detached thread (tb__thread_start). 0: it could not
 * be started. */
static int tb__start_detached(void *(*fn)(void *), void *arg)
{
    pthread_t tid;
    if (!tb__thread_start(&tid, fn, arg))
        return 0;
    pthread_detach(tid);
    return 1;
}

/* Every task by this thread, in order (one thread, or no memory for more). */
static void tb__serial(int n, tb__task_fn fn, void *ctx)
{
    for (int t = 0; t < n; t++)
        fn(ctx, t, 0);
}

/* One call's team: the caller waits for the tasks, not for threads the
 * system has not started yet (on a busy machine it may run every task
 * itself before they do); a late worker claims nothing and the last to
 * let go of the team frees it. */
void tb__parallel_for(int n, int threads, tb__task_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    tb__team *T = tb__team_start(threads < n ? threads : n);
    tb__team_for(T, n, fn, ctx);
    tb__team_stop(T);
}

int tb__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}

/* ---- a team of workers kept for a run of loops -------------------------- */

/* The job in hand is named by its generation: `next` holds gen << 32 | the
 * next task, so a worker that wakes late, holding an older job's fn and
 * ctx, claims nothing of the new one (its compare-and-swap sees another
 * generation) and the caller never waits for it. */
struct tb__team {
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* a new job, or stop */
    pthread_cond_t all_done; /* done == n */
    tb__task_fn fn;          /* the job: set under lock before gen moves on */
    void *ctx;
    int n;
    uint32_t gen;            /* under lock */
    int stop;                /* under lock */
    atomic_uint pub;         /* gen, readable without the lock (the workers' spin) */
    _Atomic uint64_t next;
    atomic_int done;
    atomic_int refs;
};

typedef struct tb__member {
    tb__team *team;
    int id;
} tb__member;

static void tb__team_release(tb__team *T)
{
    if (atomic_fetch_sub(&T->refs, 1) == 1) {
        pthread_cond_destroy(&T->all_done);
        pthread_cond_destroy(&T->wake);
        pthread_mutex_destroy(&T->lock);
        free(T);
    }
}

/* The tasks of job gen this thread claims, run in claim order. */
static void tb__team_drain(tb__team *T, uint32_t gen, tb__task_fn fn, void *ctx, int n, int worker)
{
    for (;;) {
        uint64_t v = atomic_load(&T->next);
        do {
            if ((uint32_t)(v >> 32) != gen || (int)(uint32_t)v >= n)
                return;
        } while (!atomic_compare_exchange_weak(&T->next, &v, v + 1));
        fn(ctx, (int)(uint32_t)v, worker);
        if (atomic_fetch_add(&T->done, 1) + 1 == n) {
            pthread_mutex_lock(&T->lock);
            pthread_cond_signal(&T->all_done);
            pthread_mutex_unlock(&T->lock);
        }
    }
}

/* A worker waits for the next job awake for TB__SPIN_US first, yielding
 * its core to whatever else is ready: a waiting thread the caller wakes is
 * queued on the caller's own core (the scheduler's wake-up affinity) and
 * runs only once the caller waits in turn, after the job. */
enum { TB__SPIN_US = 300 };

static void tb__member_spin(tb__team *T, uint32_t seen)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 1;; i++) {
        if (atomic_load(&T->pub) != seen)
            return;
        sched_yield();
        if (i % 16 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 > TB__SPIN_US)
                return;
        }
    }
}

static void *tb__member_main(void *arg)
{
    tb__member w = *(tb__member *)arg;
    free(arg);
    tb__team *T = w.team;
    uint32_t seen = 0;
    tb__member_spin(T, seen);
    pthread_mutex_lock(&T->lock);
    for (;;) {
        while (T->gen == seen && !T->stop)
            pthread_cond_wait(&T->wake, &T->lock);
        if (T->stop)
            break;
        seen = T->gen;
        tb__task_fn fn = T->fn;
        void *ctx = T->ctx;
        int n = T->n;
        pthread_mutex_unlock(&T->lock);
        tb__team_drain(T, seen, fn, ctx, n, w.id);
        tb__member_spin(T, seen);
        pthread_mutex_lock(&T->lock);
    }
    pthread_mutex_unlock(&T->lock);
    tb__team_release(T);
    return NULL;
}

/* Starts worker id of T (detached). 0: it could not be started. */
static int tb__team_spawn(tb__team *T, int id)
{
    tb__member *w = malloc(sizeof *w);
    if (!w)
        return 0;
    w->team = T;
    w->id = id;
    atomic_fetch_add(&T->refs, 1);
    int started = tb__start_detached(tb__member_main, w);
    if (!started) {
        atomic_fetch_sub(&T->refs, 1);
        free(w);
    }
    return started;
}

tb__team *tb__team_start(int threads)
{
    if (threads < 2)
        return NULL;
    tb__team *T = calloc(1, sizeof *T);
    if (!T)
        return NULL;
    int made = pthread_mutex_init(&T->lock, NULL) == 0;
    made += made == 1 && pthread_cond_init(&T->wake, NULL) == 0;
    made += made == 2 && pthread_cond_init(&T->all_done, NULL) == 0;
    if (made < 3) {
        if (made > 1)
            pthread_cond_destroy(&T->wake);
        if (made > 0)
            pthread_mutex_destroy(&T->lock);
        free(T);
        return NULL;
    }
    atomic_init(&T->next, 0);
    atomic_init(&T->done, 0);
    atomic_init(&T->pub, 0);
    atomic_init(&T->refs, 1);
    int started = 0;
    for (int i = 1; i < threads && tb__team_spawn(T, i); i++)
        started++;
    if (!started) {
        tb__team_release(T);
        return NULL;
    }
    return T;
}

void tb__team_for(tb__team *T, int n, tb__task_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (!T || n == 1) {
        tb__serial(n, fn, ctx);
        return;
    }
    pthread_mutex_lock(&T->lock);
    T->fn = fn, T->ctx = ctx, T->n = n;
    uint32_t gen = ++T->gen;
    atomic_store(&T->done, 0);
    atomic_store(&T->next, (uint64_t)gen << 32);
    atomic_store(&T->pub, gen);
    pthread_cond_broadcast(&T->wake);
    pthread_mutex_unlock(&T->lock);
    tb__team_drain(T, gen, fn, ctx, n, 0);
    pthread_mutex_lock(&T->lock);
    while (atomic_load(&T->done) < n)
        pthread_cond_wait(&T->all_done, &T->lock);
    pthread_mutex_unlock(&T->lock);
}

void tb__team_stop(tb__team *T)
{
    if (!T)
        return;
    pthread_mutex_lock(&T->lock);
    T->stop = 1;
    atomic_store(&T->pub, T->gen + 1); /* ends a spin */
    pthread_cond_broadcast(&T->wake);
    pthread_mutex_unlock(&T->lock);
    tb__team_release(T);
}
