/* Stored matrices widened to f32 for f32 products (widen.h). */
#include "model/widen.h"
#include "model/quant.h"

#include <string.h>

void wkv__widen_init(wkv__widen *w, int n, pthread_mutex_t *lock)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    w->lock = lock;
}

void wkv__widen_set(wkv__widen *w, int i, const wkv__mat *mat, size_t count, float *slot)
{
    w->mat[i] = mat;
    w->count[i] = count;
    w->slot[i] = slot;
    w->f32[i] = mat->type == WKV_TYPE_F32 ? mat->data : NULL;
}

void wkv__widen_clear(wkv__widen *w, int i)
{
    w->mat[i] = NULL;
    w->count[i] = 0;
    w->slot[i] = NULL;
    w->f32[i] = NULL;
}

/* Part [part] of every unknown matrix: a share of its blocks of 32 values (a
 * quantized block, or as many f16 values; an f16 count need not be whole blocks). */
static void widen_part(void *arg, int part, int n_parts)
{
    const wkv__widen *w = arg;
    for (int i = 0; i < w->n; i++) {
        const wkv__mat *m = w->mat[i];
        if (!m || w->f32[i])
            continue;
        const size_t nb = (w->count[i] + WKV_QK - 1) / WKV_QK;
        const size_t b0 = nb * (size_t)part / (size_t)n_parts;
        const size_t b1 = nb * (size_t)(part + 1) / (size_t)n_parts;
        if (b1 <= b0)
            continue;
        const size_t e0 = b0 * WKV_QK, e1 = b1 * WKV_QK < w->count[i] ? b1 * WKV_QK : w->count[i];
        wkv__row_to_f32(m->type, (const uint8_t *)m->data + wkv__type_bytes(m->type, e0),
                       w->slot[i] + e0, e1 - e0);
    }
}

void wkv__widen_all(wkv__widen *w, wkv__pool *pool)
{
    int todo = 0;
    for (int i = 0; i < w->n; i++)
        todo |= w->mat[i] && !w->f32[i];
    if (!todo)
        return;
    wkv__pool_run(pool, widen_part, w);
    for (int i = 0; i < w->n; i++)
        w->f32[i] = w->f32[i] ? w->f32[i] : w->slot[i];
}

const float *wkv__widen_get(wkv__widen *w, int i)
{
    pthread_mutex_lock(w->lock);
    if (!w->f32[i])
        w->f32[i] = wkv__mat_f32(w->mat[i], w->count[i], w->slot[i]);
    const float *f = w->f32[i];
    pthread_mutex_unlock(w->lock);
    return f;
}
