/* A small pool of worker threads owned by one context: every parallel loop of the
 * context runs on it, matrix products included (each part calls a single-threaded
 * sgemm on its rows, see blas.h), so a context uses exactly `threads` threads. */
#ifndef WKV_POOL_H
#define WKV_POOL_H

typedef struct wkv__pool wkv__pool;
/* fn(arg, part, n_parts) for part = 0 .. n_parts - 1, one part per thread. */
typedef void (*wkv__task_fn)(void *arg, int part, int n_parts);

/* n_threads - 1 workers plus the calling thread; NULL on failure (callers then run
 * everything on the calling thread). */
wkv__pool *wkv__pool_new(int n_threads);
void wkv__pool_free(wkv__pool *pool);
/* Runs fn over all parts and returns when every part is done.  pool may be NULL. */
void wkv__pool_run(wkv__pool *pool, wkv__task_fn fn, void *arg);
/* How many parts wkv__pool_run splits a job into (1 for NULL). */
int wkv__pool_parts(const wkv__pool *pool);
/* Part `part`'s share [*r0, *r1) of n rows split evenly over n_parts. */
static inline void wkv__pool_share(int n, int part, int n_parts, int *r0, int *r1)
{
    *r0 = (int)((long)n * part / n_parts);
    *r1 = (int)((long)n * (part + 1) / n_parts);
}

#endif
