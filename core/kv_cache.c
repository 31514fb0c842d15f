/* Allocation and filling of the cross- and self-attention KV caches (invariants in
 * kv_cache.h). */
#include "kv_cache.h"
#include "ops.h"

#include <stdlib.h>

int wkv_cross_kv_init(wkv_cross_kv *c, int n_layer, int n_ctx, int n_state)
{
    size_t n = (size_t)n_layer * n_ctx * n_state;
    c->n_layer = n_layer;
    c->n_ctx = n_ctx;
    c->n_state = n_state;
    c->k = malloc(n * sizeof(float));
    c->v = malloc(n * sizeof(float));
    c->valid = 0;
    return c->k && c->v ? 0 : -1;
}

void wkv_cross_kv_free(wkv_cross_kv *c)
{
    free(c->k);
    free(c->v);
    c->k = c->v = NULL;
    c->valid = 0;
}

void wkv_cross_kv_fill(wkv_cross_kv *c, const wkv_model *m, const float *enc)
{
    int d = c->n_state;
    for (int l = 0; l < c->n_layer; l++) {
        const wkv_layer *L = &m->w.dec[l];
        wkv_linear(enc, c->n_ctx, d, L->cross_k_w, NULL, d, wkv_cross_k(c, l));
        wkv_linear(enc, c->n_ctx, d, L->cross_v_w, L->cross_v_b, d, wkv_cross_v(c, l));
    }
    c->valid = 1;
}

int wkv_self_kv_init(wkv_self_kv *s, int n_layer, int n_ctx, int n_state)
{
    size_t n = (size_t)n_layer * n_ctx * n_state;
    s->n_layer = n_layer;
    s->n_ctx = n_ctx;
    s->n_state = n_state;
    s->n = 0;
    s->k = malloc(n * sizeof(float));
    s->v = malloc(n * sizeof(float));
    s->tokens = malloc((size_t)n_ctx * sizeof(int));
    return s->k && s->v && s->tokens ? 0 : -1;
}

void wkv_self_kv_free(wkv_self_kv *s)
{
    free(s->k);
    free(s->v);
    free(s->tokens);
    s->k = s->v = NULL;
    s->tokens = NULL;
    s->n = 0;
}
