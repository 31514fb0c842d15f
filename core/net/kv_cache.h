/* The two attention caches of the decoder.
 *
 * Cross-KV cache: for each decoder layer, K = enc · Wk^T and V = enc · Wv^T + bv over
 * the n_audio_ctx encoder frames.  They depend only on the encoder output, so they
 * are computed once per window (the encoder backend's fill, right after its run) and read
 * by every decoding step of that window.  Invariant: `valid` is set exactly when the
 * cache holds the projections of the current encoder output; a new window refills them.
 * Element type (wkv_context_set_cache_type; AUTO's rule in context.c): f32 (k, v) for
 * f32/f16 files on the f32 compute type, whose results are the reference's; IEEE half
 * (k16, v16, as whisper.cpp keeps its cross cache) on bf16/int8 and for quantized
 * files, which are approximate anyway: a decoder step streams every layer's K and V,
 * so half the bytes is most of what a quantized file's step can still save (values
 * beyond half's range, +-65504, become +-inf there, as in whisper.cpp's cache).  Steps read the halves
 * directly (attn_f16.c); passes of more rows, the alignment pass and CPUs without those
 * kernels read a layer widened to f32 (wkv__cross_layer_f32).
 *
 * Self-KV cache: for each decoder layer, the K and V rows of every position decoded
 * so far.  Past positions never change, so a step appends one row per new token and
 * attends over rows [0, n).  Preallocated for n_text_ctx positions: no allocation
 * per token.  Invariant: rows [0, n) of every layer hold the keys/values of the
 * tokens tokens[0..n) at positions 0..n-1; rows >= n are garbage.
 * Element type: the cross cache's (whisper.cpp keeps both in half), except on a model
 * whose text context is longer than its audio context (context.c); each half value
 * the f32 projection rounded (wkv__self_kv_put).  A single row attends over the halves directly (attn_f16.c); a
 * pass of several rows, which needs the causal mask, or a CPU without those kernels
 * reads the slot's layer widened to f32 (wkv__self_layer_f32).
 */
#ifndef WKV_KV_CACHE_H
#define WKV_KV_CACHE_H

#include "base/pool.h"
#include "compute/backend.h" /* wkv__cross_kv: an encoder backend's fill writes it */
#include "model/model.h"

#include <stdint.h>

/* Self-KV cache slots: one per sequence decoded side by side (beams, best-of
 * candidates); slot 0 is the plain single-sequence path. */
typedef struct {
    int n_layer, n_ctx, n_state, n_slots;
    float *k, *v;        /* [slot][n_layer][n_ctx][n_state], f32; NULL when half */
    uint16_t *k16, *v16; /* the same layout in IEEE half; NULL when f32 */
    int *n;              /* positions filled, per slot */
    int *tokens;         /* [slot][n_ctx]: the tokens at those positions */
} wkv__self_kv;

int wkv__cross_kv_init(wkv__cross_kv *c, int n_layer, int n_ctx, int n_state);
/* Rows [from, n_ctx) of every layer's K and V from src, a cache of the same shape and
 * element type. */
void wkv__cross_kv_copy_rows(wkv__cross_kv *dst, const wkv__cross_kv *src, int from);
void wkv__cross_kv_free(wkv__cross_kv *c);
/* Switches the element type (f16: 1 = half, 0 = f32), reallocating; the cache becomes
 * invalid.  0, or -1 with the old type kept when memory runs out. */
int wkv__cross_kv_set_f16(wkv__cross_kv *c, int f16);
/* A layer's K and V as f32: the cache itself, or a half cache widened into `wide`
 * (2 n_ctx x d floats) over the pool. */
void wkv__cross_layer_f32(const wkv__cross_kv *c, int layer, float *wide, wkv__pool *pool,
                         const float **k, const float **v);

int wkv__self_kv_init(wkv__self_kv *s, int n_layer, int n_ctx, int n_state);
void wkv__self_kv_free(wkv__self_kv *s);
/* Makes room for n_slots sequences (grows once; never per token).  0 or -1. */
int wkv__self_kv_reserve(wkv__self_kv *s, int n_slots);
/* Switches the element type (f16: 1 = half, 0 = f32) for the slots reserved so far,
 * reallocating; every slot becomes empty.  0, or -1 with the old type kept. */
int wkv__self_kv_set_f16(wkv__self_kv *s, int f16);
/* Stores rows [p, p + n) of a slot's layer from f32 K and V rows (n x n_state each),
 * rounded to half in a half cache. */
void wkv__self_kv_put(wkv__self_kv *s, int slot, int layer, int p, int n, const float *k,
                     const float *v);
/* Rows [0, n) of a slot's layer as f32: the cache itself, or a half cache widened into
 * `wide` (2 n x n_state floats: K, then V). */
void wkv__self_layer_f32(const wkv__self_kv *s, int slot, int layer, int n, float *wide,
                        const float **k, const float **v);
/* Slot dst becomes a copy of slot src; rows below `shared` are known to be equal
 * already (a common prompt) and are not copied. */
void wkv__self_kv_copy(wkv__self_kv *s, int dst, int src, int shared);
static inline size_t wkv__self_offset(const wkv__self_kv *s, int slot, int layer)
{
    return ((size_t)slot * s->n_layer + (size_t)layer) * s->n_ctx * s->n_state;
}
/* Whether the self cache is kept in half. */
static inline int wkv__self_half(const wkv__self_kv *s)
{
    return s->k16 != NULL;
}

static inline uint16_t *wkv__self_k16(const wkv__self_kv *s, int slot, int layer)
{
    return s->k16 + wkv__self_offset(s, slot, layer);
}

static inline uint16_t *wkv__self_v16(const wkv__self_kv *s, int slot, int layer)
{
    return s->v16 + wkv__self_offset(s, slot, layer);
}

/* f32 caches only (wkv__self_half false). */
static inline float *wkv__self_k(const wkv__self_kv *s, int slot, int layer)
{
    return s->k + wkv__self_offset(s, slot, layer);
}
static inline float *wkv__self_v(const wkv__self_kv *s, int slot, int layer)
{
    return s->v + wkv__self_offset(s, slot, layer);
}

#endif
