/* The two attention caches of the decoder.
 *
 * Cross-KV cache: for each decoder layer, K = enc · Wk^T and V = enc · Wv^T + bv over
 * the n_audio_ctx encoder frames.  They depend only on the encoder output, so they
 * are computed once per window (wkv_cross_kv_fill, right after the encoder) and read
 * by every decoding step of that window.  Invariant: `valid` is set exactly when k/v
 * hold the projections of the current encoder output; a new window refills them.
 *
 * Self-KV cache: for each decoder layer, the K and V rows of every position decoded
 * so far.  Past positions never change, so a step appends one row per new token and
 * attends over rows [0, n).  Preallocated for n_text_ctx positions: no allocation
 * per token.  Invariant: rows [0, n) of every layer hold the keys/values of the
 * tokens tokens[0..n) at positions 0..n-1; rows >= n are garbage.
 */
#ifndef WKV_KV_CACHE_H
#define WKV_KV_CACHE_H

#include "internal.h"
#include "pool.h"

#include <pthread.h>

struct wkv_compute;

typedef struct {
    int n_layer, n_ctx, n_state;
    float *k, *v; /* [n_layer][n_ctx][n_state] */
    int valid;
} wkv_cross_kv;

/* Self-KV cache slots: one per sequence decoded side by side (beams, best-of
 * candidates); slot 0 is the plain single-sequence path. */
typedef struct {
    int n_layer, n_ctx, n_state, n_slots;
    float *k, *v; /* [slot][n_layer][n_ctx][n_state] */
    int *n;       /* positions filled, per slot */
    int *tokens;  /* [slot][n_ctx]: the tokens at those positions */
} wkv_self_kv;

int wkv_cross_kv_init(wkv_cross_kv *c, int n_layer, int n_ctx, int n_state);
void wkv_cross_kv_free(wkv_cross_kv *c);
/* Projects the encoder output (n_ctx x n_state) through every decoder layer's
 * cross-attention key and value weights: in f32 (exact) without `compute`, else on
 * the context's bf16/int8 compute type like the encoder's linear layers.  The cache
 * stays f32 either way. */
/* scratch: 2 d x d floats where stored f16/quantized projections are widened for f32
 * products (with a compute type: only if one of its products fails, under lock). */
void wkv_cross_kv_fill(wkv_cross_kv *c, const wkv_model *m, const float *enc,
                       wkv_pool *pool, float *scratch, pthread_mutex_t *lock,
                       struct wkv_compute *compute);

int wkv_self_kv_init(wkv_self_kv *s, int n_layer, int n_ctx, int n_state);
void wkv_self_kv_free(wkv_self_kv *s);
/* Makes room for n_slots sequences (grows once; never per token).  0 or -1. */
int wkv_self_kv_reserve(wkv_self_kv *s, int n_slots);
/* Slot dst becomes a copy of slot src; rows below `shared` are known to be equal
 * already (a common prompt) and are not copied. */
void wkv_self_kv_copy(wkv_self_kv *s, int dst, int src, int shared);
static inline size_t wkv_self_offset(const wkv_self_kv *s, int slot, int layer)
{
    return ((size_t)slot * s->n_layer + (size_t)layer) * s->n_ctx * s->n_state;
}
static inline float *wkv_self_k(const wkv_self_kv *s, int slot, int layer)
{
    return s->k + wkv_self_offset(s, slot, layer);
}
static inline float *wkv_self_v(const wkv_self_kv *s, int slot, int layer)
{
    return s->v + wkv_self_offset(s, slot, layer);
}
static inline float *wkv_cross_k(const wkv_cross_kv *c, int layer)
{
    return c->k + (size_t)layer * c->n_ctx * c->n_state;
}
static inline float *wkv_cross_v(const wkv_cross_kv *c, int layer)
{
    return c->v + (size_t)layer * c->n_ctx * c->n_state;
}

#endif
