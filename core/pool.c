/* Worker threads woken by a generation counter; the caller takes part 0. */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>

struct wkv_pool {
    int n;                 /* parts = workers + 1 */
    pthread_t *tid;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    unsigned generation;   /* bumped for every job */
    int remaining;         /* worker parts of the current job not finished */
    int quit;
    wkv_task_fn fn;
    void *arg;
};

typedef struct {
    wkv_pool *pool;
    int part;
} worker_arg;

static void *worker(void *p)
{
    worker_arg wa = *(worker_arg *)p;
    free(p);
    wkv_pool *pool = wa.pool;
    unsigned seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (pool->generation == seen && !pool->quit)
            pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->quit)
            break;
        seen = pool->generation;
        wkv_task_fn fn = pool->fn;
        void *arg = pool->arg;
        pthread_mutex_unlock(&pool->lock);
        fn(arg, wa.part, pool->n);
        pthread_mutex_lock(&pool->lock);
        if (--pool->remaining == 0)
            pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

wkv_pool *wkv_pool_new(int n_threads)
{
    wkv_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->n = 1;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    if (n_threads > 1)
        pool->tid = malloc((size_t)(n_threads - 1) * sizeof *pool->tid);
    for (int i = 1; pool->tid && i < n_threads; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa)
            break;
        *wa = (worker_arg){pool, i};
        if (pthread_create(&pool->tid[i - 1], NULL, worker, wa) != 0) {
            free(wa);
            break;
        }
        pool->n = i + 1; /* parts only for threads that started */
    }
    return pool;
}

void wkv_pool_free(wkv_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->n - 1; i++)
        pthread_join(pool->tid[i], NULL);
    free(pool->tid);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    free(pool);
}

void wkv_pool_run(wkv_pool *pool, wkv_task_fn fn, void *arg)
{
    if (!pool || pool->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&pool->lock);
    pool->fn = fn;
    pool->arg = arg;
    pool->remaining = pool->n - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    fn(arg, 0, pool->n);
    pthread_mutex_lock(&pool->lock);
    while (pool->remaining > 0)
        pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

int wkv_pool_parts(const wkv_pool *pool)
{
    return pool ? pool->n : 1;
}
