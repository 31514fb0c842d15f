/* A layer's stored matrices (f16 or quantized blocks) as the f32 values an f32
 * product needs, in slots of a per-context scratch.  Two ways, one per compute type:
 * - f32 products: every matrix widened before the layer's products, split over the
 *   pool (wkv_widen_all), so no core waits while one widens a whole layer;
 * - bf16/int8 products: the compute type holds its own copies, so nothing is widened
 *   unless a product falls back to f32 (oneDNN failed): that matrix is widened then,
 *   once, under the lock (wkv_widen_get).
 * Stored f32 matrices are used in place either way. */
#ifndef WKV_WIDEN_H
#define WKV_WIDEN_H

#include "model/model.h"
#include "base/pool.h"

#include <pthread.h>

#define WKV_WIDEN_MAX 8

typedef struct {
    int n;
    const wkv_mat *mat[WKV_WIDEN_MAX];
    size_t count[WKV_WIDEN_MAX];
    float *slot[WKV_WIDEN_MAX];       /* where a widened matrix goes (count floats) */
    const float *f32[WKV_WIDEN_MAX];  /* its f32 values once known, else NULL */
    pthread_mutex_t *lock;            /* taken by wkv_widen_get */
} wkv_widen;

/* No matrices yet (n entries, at most WKV_WIDEN_MAX). */
void wkv_widen_init(wkv_widen *w, int n, pthread_mutex_t *lock);
/* Entry i is `mat` (count values); a non-f32 one is widened into slot (count floats). */
void wkv_widen_set(wkv_widen *w, int i, const wkv_mat *mat, size_t count, float *slot);
/* Entry i unset: its slot now belongs to another entry (wkv_widen_all skips it; it
 * must not be asked for). */
void wkv_widen_clear(wkv_widen *w, int i);
/* Widens every matrix not yet known, over the pool's parts. */
void wkv_widen_all(wkv_widen *w, wkv_pool *pool);
/* Matrix i's f32 values, widened now if needed (safe from any pool part). */
const float *wkv_widen_get(wkv_widen *w, int i);

#endif
