/* What compute.c and compute_attn.c share, with oneDNN only: the converted weights,
 * the products' shapes and primitives, each pool part's stream and buffers, and the
 * helpers both files call. */
#ifndef WKV_COMPUTE_PRIV_H
#define WKV_COMPUTE_PRIV_H

#include "compute/compute.h"

#include <oneapi/dnnl/dnnl.h>
#include <stddef.h>
#include <stdint.h>

/* One encoder weight matrix (n x in, row-major, as the model stores it) as the type
 * needs: bf16, or int8 with one scale per output row (channel). */
typedef struct wkv__cweight {
    wkv__mat src;
    int n, in;
    void *q;       /* uint16_t bf16 or int8_t, n x in */
    float *scale;  /* int8: n */
} cweight;

/* One matmul's shape: dst (m x n, row stride ldd) = src (m x k, dense) . B (k x n,
 * element (i, j) at i * bs0 + j * bs1) [+ bias] [+= dst]; i8: s8 x s8 -> s32 (no bias
 * or sum), else bf16 x bf16 -> f32. */
typedef struct {
    int m, k, n, bias, acc, i8;
    dnnl_dim_t bs0, bs1, ldd;
} cshape;

/* A primitive for one shape, with memory objects whose handles change per call. */
typedef struct {
    cshape sh;
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, bia, dst, scr;
    size_t scr_bytes; /* its scratchpad, which the part provides (cpart.scratch) */
} cprim;

#define WKV_MAX_PRIMS 32
/* rows of an accumulating int8 product per oneDNN call: its s32 buffer stays at this
 * many rows (0.5 MB at base) instead of a part's (1.5 MB); fewer would pack the
 * weights once more per call */
#define WKV_ACC_ROWS 256

typedef struct {
    dnnl_stream_t stream;
    cprim prims[WKV_MAX_PRIMS];
    int n_prims;
    void *qx;         /* quantized rows of x */
    uint16_t *att16;  /* attention: a query block's q or probabilities in bf16 */
    size_t att16_bytes;
    float *row_scale; /* int8: per row */
    float *dense;     /* attention: a query block's context rows, dense */
    size_t dense_n;
    int fallbacks;    /* products this part left to f32 (wkv__compute_fallbacks) */
    void *scratch;    /* the scratchpad of its primitives (the largest they need) */
    size_t scratch_bytes;
    int32_t *acc;     /* int8: s32 products */
    size_t qx_bytes, acc_n, rows_n;
    int qx_rows, qx_k; /* what qx holds (0: nothing valid) */
    float *wrow;       /* a stored weight row widened to f32 (conversion) */
} cpart;

struct wkv__compute {
    wkv_compute_type type;
    dnnl_engine_t engine;
    cweight w[2]; /* the convolutions (stored f16 or f32, small): converted once */
    int n_w;
    /* the layer scratch: slot i holds up to cap[i] weights (and as many rows' scales)
     * of the matrix wkv__compute_convert last put there */
    cweight slot[WKV_COMPUTE_SLOTS];
    size_t cap[WKV_COMPUTE_SLOTS], cap_rows[WKV_COMPUTE_SLOTS];
    int max_in; /* the widest stored row a conversion reads */
    cpart *parts;
    int n_parts;
    /* attention: the layer's keys and values per head and dense, so that the two
     * products' B is a plain matrix oneDNN's brgemm kernels take (K_h strided by d
     * sent them to its slower gemm with a copy of B at every call).
     * k16 (bf16): head h's K_h^T (hd x T) at h * hd * T, bf16's faster layout;
     * k8 (int8): head h's K_h (T x hd) at h * T * hd, int8's faster layout, key t of
     * head h scaled by k_scale[h * T + t];
     * v16: head h's V_h (T x hd) at h * T * hd */
    uint16_t *k16, *v16;
    int8_t *k8;
    float *k_scale;
    size_t kv_elems; /* each: n_audio_ctx x d */
    int T, hd;
    int force_fallback;  /* tests: every product fails (wkv__compute_force_fallback) */
    /* int8 where the CPU has no bf16 instructions: P . V in f32 by the caller, v16
     * unused (wkv__compute_set_pv_f32) */
    int pv_f32;
};

/* *buf with room for need bytes (realloc: contents kept), *have counting them; -1 when
 * out of memory (the buffer unchanged). */
int wkv__compute_grow(void **buf, size_t *have, size_t need);
/* The same in elements of elt bytes (*have counting elements), and in floats. */
int wkv__compute_grow_elems(void **buf, size_t *have, size_t n, size_t elt);
int wkv__compute_grow_floats(float **buf, size_t *have, size_t n);
/* Runs one matmul of shape sh on this part's stream (bias may be NULL); 0 or -1. */
int wkv__compute_exec(const wkv__compute *c, cpart *pt, const cshape *sh, const void *src,
                     const void *wei, const float *bias, void *dst);
/* q = round(x / s), s = max|x| / 127 (0 for an all-zero row), returned. */
float wkv__compute_quantize_row(const float *x, int n, int8_t *q);
/* o = a * sr * scale + b over the s32 products in o itself (b may be NULL). */
void wkv__compute_dequant_in_place(float *o, int n, float sr, const float *scale, const float *b);

#endif
