/* A layer's stored matrices (f16 or quantized blocks) as the f32 values an f32
 * product needs, in slots of a per-context scratch.  Two ways, one per compute type:
 * - f32 products: every matrix widened before the layer's products, split over the
 *   pool (wkv__widen_all), so no core waits while one widens a whole layer;
 * - bf16/int8 products: the compute type holds its own copies, so nothing is widened
 *   unless a product falls back to f32 (oneDNN failed): that matrix is widened then,
 *   once, under the lock (wkv__widen_get).
 * Stored f32 matrices are used in place either way. */
#ifndef WKV_WIDEN_H
#define WKV_WIDEN_H

#include "model/model.h"
#include "base/pool.h"

#include <pthread.h>

#define WKV_WIDEN_MAX 8

typedef struct {
    int n;
    const wkv__mat *mat[WKV_WIDEN_MAX];
    size_t count[WKV_WIDEN_MAX];
    float *slot[WKV_WIDEN_MAX];       /* where a widened matrix goes (count floats) */
    const float *f32[WKV_WIDEN_MAX];  /* its f32 values once known, else NULL */
    pthread_mutex_t *lock;            /* taken by wkv__widen_get */
} wkv__widen;

/* No matrices yet (n entries, at most WKV_WIDEN_MAX). */
void wkv__widen_init(wkv__widen *w, int n, pthread_mutex_t *lock);
/* Entry i is `mat` (count values); a non-f32 one is widened into slot (count floats). */
void wkv__widen_set(wkv__widen *w, int i, const wkv__mat *mat, size_t count, float *slot);
/* Entry i unset: its slot now belongs to another entry (wkv__widen_all skips it; it
 * must not be asked for). */
void wkv__widen_clear(wkv__widen *w, int i);
/* Widens every matrix not yet known, over the pool's parts. */
void wkv__widen_all(wkv__widen *w, wkv__pool *pool);
/* Matrix i's f32 values, widened now if needed (safe from any pool part). */
const float *wkv__widen_get(wkv__widen *w, int i);

#endif
