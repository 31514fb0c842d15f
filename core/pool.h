/* A small pool of worker threads for the element-wise loops between matrix products
 * (softmax rows, GELU, layer norm), owned by one context.  OpenBLAS runs the matrix
 * products with its own threads; the two never run at once. */
#ifndef WKV_POOL_H
#define WKV_POOL_H

typedef struct wkv_pool wkv_pool;
/* fn(arg, part, n_parts) for part = 0 .. n_parts - 1, one part per thread. */
typedef void (*wkv_task_fn)(void *arg, int part, int n_parts);

/* n_threads - 1 workers plus the calling thread; NULL on failure (callers then run
 * everything on the calling thread). */
wkv_pool *wkv_pool_new(int n_threads);
void wkv_pool_free(wkv_pool *pool);
/* Runs fn over all parts and returns when every part is done.  pool may be NULL. */
void wkv_pool_run(wkv_pool *pool, wkv_task_fn fn, void *arg);

#endif
