/* The CPU backend's fill (backend.h): the cross-attention K/V of every decoder layer
 * from the encoder output, on the instance's compute type like the encoder's linear
 * layers, or in f32 (exact): enc . Wk^T and enc . Wv^T + bv.
 * Scratch: enc_wl (2 d x d floats) where stored f16/quantized projections are widened
 * for f32 products (with a compute type: only if one of its products fails, under
 * lock); enc_mlp, 2 n_ctx x d floats, used only by a half cache (a layer's f32 results
 * before they are rounded). */
#include "cpu/cpu.h"
#include "base/f16.h"
#include "kernels/ops.h"
#include "model/widen.h"

typedef struct {
    wkv__compute *compute;
    const float *enc, *bv;
    const wkv__cweight *cw[2]; /* the compute type's K and V projections */
    wkv__widen *wide;          /* their f32 values, widened only for a fallback */
    float *out[2];            /* f32 results: the cache, or the stage of a half cache */
    uint16_t *out16[2];       /* a half cache's layer, or NULL */
    int n_ctx, d;
} fill_job;

static void fill_one(const fill_job *j, int i, int part, int r0, int r1)
{
    const float *b = i ? j->bv : NULL;
    if (!j->cw[i] || wkv__compute_linear(j->compute, part, j->enc, r0, r1, j->d, j->cw[i], b,
                                        j->d, j->out[i], 0, i ? WKV_LIN_SAME_X : 0) != 0)
        wkv__linear_rows(j->enc, r0, r1, j->d, wkv__widen_get(j->wide, i), b, j->d, j->out[i], 0);
    if (j->out16[i]) /* this part's rows rounded into the half cache */
        wkv__f32_to_f16_row(j->out[i] + (size_t)r0 * j->d, j->out16[i] + (size_t)r0 * j->d,
                           (size_t)(r1 - r0) * j->d);
}

/* One part's rows of a layer's K and V on the context's compute type (V reuses the
 * rows K converted). */
static void fill_part(void *arg, int part, int n_parts)
{
    const fill_job *j = arg;
    int r0, r1;
    wkv__pool_share(j->n_ctx, part, n_parts, &r0, &r1);
    fill_one(j, 0, part, r0, r1);
    fill_one(j, 1, part, r0, r1);
}

void wkv__cpu_fill(wkv__encoder *e, const float *enc, wkv__cross_kv *c)
{
    wkv__cpu *cpu = (wkv__cpu *)e;
    const wkv_model *m = cpu->model;
    wkv__pool *pool = cpu->pool;
    wkv__compute *compute = cpu->compute;
    float *scratch = cpu->enc_wl, *stage = cpu->enc_mlp;
    int d = c->n_state;
    size_t dd = (size_t)d * (size_t)d, nd = (size_t)c->n_ctx * (size_t)d;
    for (int l = 0; l < c->n_layer; l++) {
        const wkv__layer *L = &m->w.dec[l];
        wkv__widen wide;
        wkv__widen_init(&wide, 2, &cpu->widen_lock);
        wkv__widen_set(&wide, 0, &L->cross_k, dd, scratch);
        wkv__widen_set(&wide, 1, &L->cross_v, dd, scratch + dd);
        fill_job j = {compute, enc, L->cross_v_b, {NULL, NULL}, &wide, {NULL, NULL},
                      {NULL, NULL}, c->n_ctx, d};
        if (wkv__cross_half(c)) {
            j.out[0] = stage;
            j.out[1] = stage + nd;
            j.out16[0] = wkv__cross_k16(c, l);
            j.out16[1] = wkv__cross_v16(c, l);
        } else {
            j.out[0] = wkv__cross_k(c, l);
            j.out[1] = wkv__cross_v(c, l);
        }
        if (compute) {
            /* the projections run once per window on the encoder's output: part of a
             * window's cost like the encoder, so on its type, converted per layer */
            const wkv__mat *src[2] = {&L->cross_k, &L->cross_v};
            const int n[2] = {d, d};
            wkv__compute_convert(compute, pool, 2, src, n, n, j.cw);
            wkv__pool_run(pool, fill_part, &j);
            continue;
        }
        /* f32: the exact path, both matrices widened first, over the pool */
        wkv__widen_all(&wide, pool);
        wkv__linear(pool, enc, c->n_ctx, d, wide.f32[0], NULL, d, j.out[0]);
        wkv__linear(pool, enc, c->n_ctx, d, wide.f32[1], L->cross_v_b, d, j.out[1]);
        if (wkv__cross_half(c)) {
            wkv__f32_to_f16_row(j.out[0], j.out16[0], nd);
            wkv__f32_to_f16_row(j.out[1], j.out16[1], nd);
        }
    }
}
