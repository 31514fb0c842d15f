/* Allocation and filling of the cross- and self-attention KV caches (invariants in
 * kv_cache.h). */
#include "net/kv_cache.h"
#include "base/util.h"
#include "base/f16.h"

#include <stdlib.h>
#include <string.h>

int wkv__cross_kv_init(wkv__cross_kv *c, int n_layer, int n_ctx, int n_state)
{
    size_t n = (size_t)n_layer * n_ctx * n_state;
    c->n_layer = n_layer;
    c->n_ctx = n_ctx;
    c->n_frames = n_ctx;
    c->n_state = n_state;
    c->k16 = c->v16 = NULL;
    c->k = wkv__alloc_zeroed(n * sizeof(float));
    c->v = wkv__alloc_zeroed(n * sizeof(float));
    c->valid = 0;
    return c->k && c->v ? 0 : -1;
}

void wkv__cross_kv_copy_rows(wkv__cross_kv *dst, const wkv__cross_kv *src, int from)
{
    /* [n_layer][n_ctx][n_state] in either element type: one run of bytes a layer */
    const int half = wkv__cross_half(dst);
    const size_t row = (size_t)dst->n_state * (half ? sizeof(uint16_t) : sizeof(float));
    const size_t layer = (size_t)dst->n_ctx * row, off = (size_t)from * row;
    char *dk = half ? (char *)dst->k16 : (char *)dst->k;
    char *dv = half ? (char *)dst->v16 : (char *)dst->v;
    const char *sk = half ? (const char *)src->k16 : (const char *)src->k;
    const char *sv = half ? (const char *)src->v16 : (const char *)src->v;
    for (int l = 0; l < dst->n_layer; l++) {
        memcpy(dk + l * layer + off, sk + l * layer + off, layer - off);
        memcpy(dv + l * layer + off, sv + l * layer + off, layer - off);
    }
}

void wkv__cross_kv_free(wkv__cross_kv *c)
{
    wkv__free(c->k);
    wkv__free(c->v);
    wkv__free(c->k16);
    wkv__free(c->v16);
    c->k = c->v = NULL;
    c->k16 = c->v16 = NULL;
    c->valid = 0;
}

/* Replaces a cache's K and V (n elements each, f32 in *k, *v or half in *k16, *v16)
 * by zeroed buffers of the other type; -1 with nothing changed when memory
 * runs out.  Both caches switch type through this. */
static int retype(size_t n, int f16, float **k, float **v, uint16_t **k16, uint16_t **v16)
{
    const size_t bytes = n * (f16 ? sizeof(uint16_t) : sizeof(float));
    void *nk = wkv__alloc_zeroed(bytes), *nv = wkv__alloc_zeroed(bytes);
    if (!nk || !nv) {
        wkv__free(nk);
        wkv__free(nv);
        return -1;
    }
    wkv__free(*k);
    wkv__free(*v);
    wkv__free(*k16);
    wkv__free(*v16);
    *k = f16 ? NULL : nk;
    *v = f16 ? NULL : nv;
    *k16 = f16 ? nk : NULL;
    *v16 = f16 ? nv : NULL;
    return 0;
}

int wkv__cross_kv_set_f16(wkv__cross_kv *c, int f16)
{
    f16 = !!f16;
    if (f16 == wkv__cross_half(c))
        return 0;
    if (retype((size_t)c->n_layer * c->n_ctx * c->n_state, f16, &c->k, &c->v, &c->k16,
               &c->v16) != 0)
        return -1;
    c->valid = 0;
    return 0;
}

typedef struct {
    const uint16_t *src[2];
    float *dst[2];
    size_t n;
} widen_job;

static void widen_part(void *arg, int part, int n_parts)
{
    const widen_job *j = arg;
    size_t a = j->n * (size_t)part / (size_t)n_parts, b = j->n * (size_t)(part + 1) / (size_t)n_parts;
    for (int i = 0; i < 2; i++)
        wkv__f16_to_f32_row(j->src[i] + a, j->dst[i] + a, b - a);
}

void wkv__cross_layer_f32(const wkv__cross_kv *c, int layer, float *wide, wkv__pool *pool,
                         const float **k, const float **v)
{
    if (!wkv__cross_half(c)) {
        *k = wkv__cross_k(c, layer);
        *v = wkv__cross_v(c, layer);
        return;
    }
    size_t nd = (size_t)c->n_frames * (size_t)c->n_state; /* the rows the fill wrote */
    widen_job j = {{wkv__cross_k16(c, layer), wkv__cross_v16(c, layer)}, {wide, wide + nd}, nd};
    wkv__pool_run(pool, widen_part, &j);
    *k = wide;
    *v = wide + nd;
}

int wkv__self_kv_init(wkv__self_kv *s, int n_layer, int n_ctx, int n_state)
{
    s->n_layer = n_layer;
    s->n_ctx = n_ctx;
    s->n_state = n_state;
    s->n_slots = 0;
    s->k = s->v = NULL;
    s->k16 = s->v16 = NULL;
    s->n = s->tokens = NULL;
    return wkv__self_kv_reserve(s, 1);
}

/* Grows *buf from `have` to `want` slots of `per` elements of `elt` bytes, the new
 * ones zeroed, which makes them resident now (wkv__alloc_zeroed says why that
 * matters). */
static int grow_slots(void **buf, int have, int want, size_t per, size_t elt)
{
    char *b = wkv__realloc(*buf, (size_t)want * per * elt);
    if (!b)
        return -1;
    *buf = b;
    memset(b + (size_t)have * per * elt, 0, (size_t)(want - have) * per * elt);
    return 0;
}

int wkv__self_kv_reserve(wkv__self_kv *s, int n_slots)
{
    if (n_slots <= s->n_slots)
        return 0;
    const size_t per = (size_t)s->n_layer * s->n_ctx * s->n_state;
    const int half = wkv__self_half(s), have = s->n_slots;
    int ok = half ? grow_slots((void **)&s->k16, have, n_slots, per, sizeof(uint16_t)) == 0 &&
                        grow_slots((void **)&s->v16, have, n_slots, per, sizeof(uint16_t)) == 0
                  : grow_slots((void **)&s->k, have, n_slots, per, sizeof(float)) == 0 &&
                        grow_slots((void **)&s->v, have, n_slots, per, sizeof(float)) == 0;
    int *n = ok ? wkv__realloc(s->n, (size_t)n_slots * sizeof(int)) : NULL;
    if (n)
        s->n = n;
    int *t = n ? wkv__realloc(s->tokens, (size_t)n_slots * s->n_ctx * sizeof(int)) : NULL;
    if (t)
        s->tokens = t;
    if (!t)
        return -1; /* the buffers that grew keep their size: the next call grows again */
    for (int i = have; i < n_slots; i++)
        s->n[i] = 0;
    s->n_slots = n_slots;
    return 0;
}

int wkv__self_kv_set_f16(wkv__self_kv *s, int f16)
{
    f16 = !!f16;
    if (f16 == wkv__self_half(s))
        return 0;
    if (retype((size_t)s->n_slots * s->n_layer * s->n_ctx * s->n_state, f16, &s->k, &s->v,
               &s->k16, &s->v16) != 0)
        return -1;
    for (int i = 0; i < s->n_slots; i++)
        s->n[i] = 0;
    return 0;
}

void wkv__self_kv_put(wkv__self_kv *s, int slot, int layer, int p, int n, const float *k,
                     const float *v)
{
    const size_t d = (size_t)s->n_state, off = (size_t)p * d, len = (size_t)n * d;
    if (wkv__self_half(s)) {
        wkv__f32_to_f16_row(k, wkv__self_k16(s, slot, layer) + off, len);
        wkv__f32_to_f16_row(v, wkv__self_v16(s, slot, layer) + off, len);
    } else {
        memcpy(wkv__self_k(s, slot, layer) + off, k, len * sizeof(float));
        memcpy(wkv__self_v(s, slot, layer) + off, v, len * sizeof(float));
    }
}

void wkv__self_layer_f32(const wkv__self_kv *s, int slot, int layer, int n, float *wide,
                        const float **k, const float **v)
{
    if (!wkv__self_half(s)) {
        *k = wkv__self_k(s, slot, layer);
        *v = wkv__self_v(s, slot, layer);
        return;
    }
    const size_t len = (size_t)n * s->n_state;
    wkv__f16_to_f32_row(wkv__self_k16(s, slot, layer), wide, len);
    wkv__f16_to_f32_row(wkv__self_v16(s, slot, layer), wide + len, len);
    *k = wide;
    *v = wide + len;
}

void wkv__self_kv_copy(wkv__self_kv *s, int dst, int src, int shared)
{
    if (dst == src)
        return;
    int n = s->n[src];
    if (shared > n)
        shared = n;
    const size_t d = (size_t)s->n_state, from = (size_t)shared * d,
                 len = (size_t)(n - shared) * d;
    for (int l = 0; l < s->n_layer; l++) {
        if (wkv__self_half(s)) {
            memcpy(wkv__self_k16(s, dst, l) + from, wkv__self_k16(s, src, l) + from,
                   len * sizeof(uint16_t));
            memcpy(wkv__self_v16(s, dst, l) + from, wkv__self_v16(s, src, l) + from,
                   len * sizeof(uint16_t));
        } else {
            memcpy(wkv__self_k(s, dst, l) + from, wkv__self_k(s, src, l) + from,
                   len * sizeof(float));
            memcpy(wkv__self_v(s, dst, l) + from, wkv__self_v(s, src, l) + from,
                   len * sizeof(float));
        }
    }
    memcpy(s->tokens + (size_t)dst * s->n_ctx, s->tokens + (size_t)src * s->n_ctx,
           (size_t)n * sizeof(int));
    s->n[dst] = n;
}

void wkv__self_kv_free(wkv__self_kv *s)
{
    wkv__free(s->k);
    wkv__free(s->v);
    wkv__free(s->k16);
    wkv__free(s->v16);
    s->k16 = s->v16 = NULL;
    wkv__free(s->n);
    wkv__free(s->tokens);
    s->k = s->v = NULL;
    s->n = s->tokens = NULL;
    s->n_slots = 0;
}
