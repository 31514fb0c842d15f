/* Worker threads woken by a generation counter; the caller takes part 0.
 *
 * A decoder step hands the pool dozens of small jobs a few microseconds apart, so a
 * waiting thread first spins on the counter for up to SPIN_MS before it sleeps on a
 * condition variable (waking a sleeping thread costs tens of microseconds, as much as
 * a small matrix takes on one core).  Spinning is bounded in time, so an idle pool
 * sleeps and a pool on fewer cores than threads (valgrind, a busy machine) only wastes
 * that bound per job.
 *
 * Invariants: fn/arg are written before `generation` is bumped (release) and read
 * after it is seen (acquire); the caller starts no job before `remaining` is 0, i.e.
 * before every worker has finished the last one; `generation` and `quit` change under
 * `lock`, and a thread sleeps only after checking them under `lock`, so no wake-up is
 * lost (likewise `remaining` reaching 0 and `done`). */
#include "base/pool.h"
#include "base/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SPIN_MS 0.2 /* longer than the gaps inside a step and between steps */

struct wkv__pool {
    int n;                    /* parts = workers + 1 */
    pthread_t *tid;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    atomic_uint generation;   /* bumped for every job */
    atomic_int remaining;     /* worker parts of the current job not finished */
    atomic_int quit;
    wkv__task_fn fn;
    void *arg;
};

typedef struct {
    wkv__pool *pool;
    int part;
} worker_arg;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Spins for at most SPIN_MS until, with gen, *gen != not or *quit is set, or, without,
 * *count is 0; returns 1 when that happened, 0 when the time ran out. */
static int spin_until(atomic_uint *gen, unsigned not, atomic_int *count, atomic_int *quit)
{
    double t0 = 0;
    for (unsigned i = 1;; i++) {
        if (gen ? atomic_load_explicit(gen, memory_order_acquire) != not ||
                      atomic_load_explicit(quit, memory_order_relaxed)
                : atomic_load_explicit(count, memory_order_acquire) == 0)
            return 1;
        cpu_relax();
        if ((i & 63) == 0) { /* the clock every 64 pauses: a few microseconds */
            double t = wkv__now_ms();
            if (!t0)
                t0 = t;
            else if (t - t0 > SPIN_MS)
                return 0;
        }
    }
}

static void *worker(void *p)
{
    worker_arg wa = *(worker_arg *)p;
    wkv__free(p);
    wkv__pool *pool = wa.pool;
    unsigned seen = 0;
    for (;;) {
        if (!spin_until(&pool->generation, seen, NULL, &pool->quit)) {
            pthread_mutex_lock(&pool->lock);
            while (atomic_load(&pool->generation) == seen && !atomic_load(&pool->quit))
                pthread_cond_wait(&pool->wake, &pool->lock);
            pthread_mutex_unlock(&pool->lock);
        }
        if (atomic_load(&pool->quit))
            break;
        seen = atomic_load_explicit(&pool->generation, memory_order_acquire);
        pool->fn(pool->arg, wa.part, pool->n);
        if (atomic_fetch_sub_explicit(&pool->remaining, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool->lock); /* the caller may be asleep */
            pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->lock);
        }
    }
    return NULL;
}

wkv__pool *wkv__pool_new(int n_threads)
{
    wkv__pool *pool = wkv__calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->n = 1;
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->remaining, 0);
    atomic_init(&pool->quit, 0);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    if (n_threads > 1)
        pool->tid = wkv__malloc((size_t)(n_threads - 1) * sizeof *pool->tid);
    for (int i = 1; pool->tid && i < n_threads; i++) {
        worker_arg *wa = wkv__malloc(sizeof *wa);
        if (!wa)
            break;
        *wa = (worker_arg){pool, i};
        pool->n = i + 1; /* before the thread starts: it reads n for every job */
        if (pthread_create(&pool->tid[i - 1], NULL, worker, wa) != 0) {
            wkv__free(wa);
            pool->n = i; /* parts only for threads that started */
            break;
        }
    }
    return pool;
}

void wkv__pool_free(wkv__pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->quit, 1);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n - 1; i++)
        pthread_join(pool->tid[i], NULL);
    wkv__free(pool->tid);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    wkv__free(pool);
}

void wkv__pool_run(wkv__pool *pool, wkv__task_fn fn, void *arg)
{
    if (!pool || pool->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    pool->fn = fn;
    pool->arg = arg;
    atomic_store_explicit(&pool->remaining, pool->n - 1, memory_order_relaxed);
    pthread_mutex_lock(&pool->lock);
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool->wake); /* no system call when nobody sleeps */
    pthread_mutex_unlock(&pool->lock);
    fn(arg, 0, pool->n);
    if (!spin_until(NULL, 0, &pool->remaining, NULL)) {
        pthread_mutex_lock(&pool->lock);
        while (atomic_load(&pool->remaining) > 0)
            pthread_cond_wait(&pool->done, &pool->lock);
        pthread_mutex_unlock(&pool->lock);
    }
}

int wkv__pool_parts(const wkv__pool *pool)
{
    return pool ? pool->n : 1;
}
