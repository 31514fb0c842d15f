/* The seam between a decoding context and what runs its encoder: an encoder backend
 * turns a window's log-mel into the encoder output (run) and that output into the
 * cross-attention K/V of every decoder layer (fill), on one compute type.  The build's
 * backends are one list (core/meson.build: backends, each a folder core/<name>/ that
 * defines `const wkv__backend wkv__backend_<name>`); the context takes the first that
 * runs its compute type (net/backend.c), and the decoder and everything above see only
 * the output and the cache, never which backend made them.
 *
 * A backend computes on the context's buffers and threads, lent at create: the pool
 * (whose parts split every stage), the arena (free while the encoder runs; the
 * decoder's activations between runs, so nothing in it outlives run), and the work
 * buffer (the backend's during run and fill; between windows the decoder widens cache
 * layers into it).  It may allocate more of its own (bytes says how much). */
#ifndef WKV_BACKEND_H
#define WKV_BACKEND_H

#include "base/pool.h"
#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

/* The cross-KV cache a fill writes (layout and element types: net/kv_cache.h, which
 * owns it; here because it is the seam's output). */
typedef struct {
    int n_layer, n_ctx, n_state;
    float *k, *v;         /* [n_layer][n_ctx][n_state], f32; NULL when half */
    uint16_t *k16, *v16;  /* the same layout in IEEE half; NULL when f32 */
    int valid;
} wkv__cross_kv;

static inline float *wkv__cross_k(const wkv__cross_kv *c, int layer)
{
    return c->k + (size_t)layer * c->n_ctx * c->n_state;
}
static inline float *wkv__cross_v(const wkv__cross_kv *c, int layer)
{
    return c->v + (size_t)layer * c->n_ctx * c->n_state;
}
/* Whether the cache is kept in half. */
static inline int wkv__cross_half(const wkv__cross_kv *c)
{
    return c->k16 != NULL;
}
static inline uint16_t *wkv__cross_k16(const wkv__cross_kv *c, int layer)
{
    return c->k16 + (size_t)layer * c->n_ctx * c->n_state;
}
static inline uint16_t *wkv__cross_v16(const wkv__cross_kv *c, int layer)
{
    return c->v16 + (size_t)layer * c->n_ctx * c->n_state;
}

/* What a context lends its backend for the backend's life. */
typedef struct {
    const wkv_model *model;
    wkv__pool *pool;
    float *arena;       /* at least the arena_floats `sizes` gave, 64-byte aligned */
    float *work;        /* work_floats of them */
    size_t work_floats; /* at least `sizes`' and 2 n_audio_ctx x n_audio_state */
} wkv__backend_lend;

/* A backend's instance: each backend's own struct starts with this. */
typedef struct wkv__encoder {
    const struct wkv__backend *backend;
} wkv__encoder;

typedef struct wkv__backend {
    const char *name;
    /* Whether it takes `type` (never AUTO).  It may still fail at create, saying why
     * (a library or instruction missing): the context reports that and keeps its type. */
    int (*takes)(wkv_compute_type type);
    /* The floats of the context's arena and work buffer it needs for model m on a
     * pool of n_parts parts (the context sizes both for every backend of the list). */
    void (*sizes)(const wkv_model *m, int n_parts, size_t *arena_floats,
                  size_t *work_floats);
    /* An instance on the lent buffers for `type`, or NULL with *error set. */
    wkv__encoder *(*create)(const wkv__backend_lend *lend, wkv_compute_type type,
                            char **error);
    /* The encoder on mel (n_mels x 2 n_audio_ctx, a row per mel bin) into out
     * (n_audio_ctx x n_audio_state); its stages' times added to st's enc_*_ms.  0 or -1. */
    int (*run)(wkv__encoder *e, const float *mel, float *out, wkv_stats *st);
    /* Every decoder layer's cross K and V from enc (n_audio_ctx x n_audio_state) into c,
     * in c's element type (f32, or half: each value the f32 result rounded). */
    void (*fill)(wkv__encoder *e, const float *enc, wkv__cross_kv *c);
    /* Bytes it holds now besides the lent buffers (wkv_context_memory's activations). */
    size_t (*bytes)(const wkv__encoder *e);
    void (*free)(wkv__encoder *e);
} wkv__backend;

#endif
