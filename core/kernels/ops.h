/* The element-wise and matrix helpers every network stage uses. */
#ifndef WKV_OPS_H
#define WKV_OPS_H

#include "base/pool.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* y[r] = LayerNorm(x[r]) * w + b for `rows` rows of `n` (eps 1e-5). y may be x. */
void wkv__layer_norm(const float *x, float *y, int rows, int n, const float *w,
                    const float *b);
/* erf GELU, in place (erf to 1.5e-7 absolute). */
void wkv__gelu(float *x, size_t n);
/* Numerically stable softmax of one row, in place. */
void wkv__softmax(float *x, int n);
/* Its unnormalized half: x = e^(x - max x), returns the sum (0 when every x is -inf,
 * x untouched) and, when max is not NULL, max x there.  Lets attention scale its
 * output rows instead of the scores, and merge partial softmaxes by their maxima. */
float wkv__softmax_exp(float *x, int n, float *max);
/* e^(x - max x) rounded to bf16 into q (x untouched), for a bf16 product of the
 * probabilities; returns the sum of the exponentials before rounding (0 and q all 0
 * when every x is -inf).  On AVX-512 a shorter exponential with FMA (relative error
 * below 2.5e-6, so a value may round to the other neighbour of a bf16 midpoint);
 * elsewhere wkv__softmax_exp's values, lane for lane the same sum.  With AVX512_BF16
 * the CPU rounds, flushing subnormal results to 0.  _isa: the path of base/cpu.h's
 * level isa (at most wkv__bf16_isa()), for tests. */
float wkv__softmax_exp_bf16(const float *x, int n, uint16_t *q);
float wkv__softmax_exp_bf16_isa(int isa, const float *x, int n, uint16_t *q);
/* q[i] = bf16(scale * x[i]) as wkv__bf16 (the encoder's activations for a bf16
 * product); with AVX512_BF16 by the CPU's rounding, the same but for subnormal results
 * (flushed to 0).  _isa as above. */
void wkv__to_bf16(const float *x, size_t n, float scale, uint16_t *q);
void wkv__to_bf16_isa(int isa, const float *x, size_t n, float scale, uint16_t *q);

/* f to bf16, rounded to nearest even; NaN stays a (quiet) NaN. */
static inline uint16_t wkv__bf16(float f)
{
    uint32_t u;
    __builtin_memcpy(&u, &f, 4);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, quiet = (u >> 16) | 0x40;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}
/* y (rows x out) = x (rows x in) . W^T (W is out x in, PyTorch layout) [+ bias],
 * rows split over the pool's threads (pool may be NULL). */
void wkv__linear(wkv__pool *pool, const float *x, int rows, int in, const float *w,
                const float *bias, int out, float *y);
/* Same, accumulating: y += x . W^T [+ bias]. */
void wkv__linear_add(wkv__pool *pool, const float *x, int rows, int in, const float *w,
                    const float *bias, int out, float *y);
/* Rows [r0, r1) only, on the calling thread; accumulate: y += instead of y =. */
void wkv__linear_rows(const float *x, int r0, int r1, int in, const float *w,
                     const float *bias, int out, float *y, int accumulate);
/* Multi-head attention of q (n_q x d) over k, v (n_kv x d) into out (n_q x d);
 * scores is scratch of max(n_q, 64) x n_kv.  causal_offset >= 0 hides key
 * j > causal_offset + i from query row i (the decoder's mask); -1 sees everything.
 * With the pool (may be NULL): 64+ rows split their softmax rows; up to 8 rows (a
 * decoder step, or its beams) stream K and V once, row by row, split by keys over the
 * pool when there are 64+ keys a thread and merged by their softmax maxima; other
 * row counts split the heads. */
void wkv__attention(wkv__pool *pool, const float *q, const float *k, const float *v, int n_q,
                   int n_kv, int d, int n_head, int causal_offset, float *scores, float *out);
/* Whether wkv__attention_f16 takes n_q rows of n_head heads of d: the step path (up
 * to 8 rows) on a CPU with attn_f16.c's kernels for the head size.  Otherwise the
 * caller widens K and V to f32 (wkv__cross_layer_f32) and calls wkv__attention. */
int wkv__attention_f16_ok(int n_q, int n_head, int d);
/* wkv__attention without a mask over K and V stored in half (a bf16/int8 context's
 * cross cache), each row widened in registers as it streams by: rows in groups of the
 * step path.  Only where wkv__attention_f16_ok says so. */
void wkv__attention_f16(wkv__pool *pool, const float *q, const uint16_t *k, const uint16_t *v,
                       int n_q, int n_kv, int d, int n_head, float *scores, float *out);
/* log(sum_i e^x[i]) (the log-softmax's normalizer) in double, vectorized; -inf when
 * every x is -inf. */
double wkv__log_sum_exp(const float *x, int n);
/* The token i where the running sum of softmax(x / temperature) first exceeds u (in
 * [0, 1)) times the total: a draw from that distribution for a uniform u.  Weights in
 * double to ~2 ulp (wkv__log_sum_exp's exp), vectorized; a token of weight 0 (-inf, or
 * far below the best) is never returned; 0 when every x is -inf. */
int wkv__sample_softmax(const float *x, int n, double temperature, double u);
/* wkv__gelu split over the pool's threads (pool may be NULL). */
void wkv__gelu_pool(wkv__pool *pool, float *x, size_t n);

typedef float wkv__v8f __attribute__((vector_size(32)));
typedef int32_t wkv__v8i __attribute__((vector_size(32)));

/* m = the lane-wise max of m and v that skips NaN in v (v > m is false for NaN). */
#define WKV_V8_MAX(m, v)                                                                  \
    do {                                                                                  \
        const wkv__v8i gt_ = (v) > (m);                                                    \
        (m) = (wkv__v8f)(((wkv__v8i)(v) & gt_) | ((wkv__v8i)(m) & ~gt_));                   \
    } while (0)

/* The maximum of x[0..n) (|x| when absolute; `init` for none; NaN is skipped), inlined
 * into each caller's clone so that it compiles for that target.  In GCC's vector
 * extension: as a loop over floats, `x > m ? x : m` stayed scalar (no max without
 * -ffinite-math-only), half of a bf16 softmax's time.  Eight lanes, not sixteen: GCC
 * compiles a compare wider than the target's vectors one float at a time with cmov,
 * so 64-byte vectors were scalar in the AVX2 clone (half of the encoder's softmax on
 * an AMD Zen 3); the baseline clone stays scalar.  Four accumulators, since one is a
 * chain of compare and blend at ~5 cycles a vector.  Max is exact: the order of the
 * lanes changes nothing. */
static inline __attribute__((always_inline)) float wkv__max_row(const float *x, int n,
                                                                float init, int absolute)
{
    wkv__v8f m0, m1, m2, m3;
    for (int k = 0; k < 8; k++)
        m0[k] = init;
    m1 = m2 = m3 = m0;
    const wkv__v8i mask = (wkv__v8i){0} + (absolute ? 0x7fffffff : -1);
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        wkv__v8f v0, v1, v2, v3;
        memcpy(&v0, x + i, sizeof v0);
        memcpy(&v1, x + i + 8, sizeof v1);
        memcpy(&v2, x + i + 16, sizeof v2);
        memcpy(&v3, x + i + 24, sizeof v3);
        v0 = (wkv__v8f)((wkv__v8i)v0 & mask);
        v1 = (wkv__v8f)((wkv__v8i)v1 & mask);
        v2 = (wkv__v8f)((wkv__v8i)v2 & mask);
        v3 = (wkv__v8f)((wkv__v8i)v3 & mask);
        WKV_V8_MAX(m0, v0);
        WKV_V8_MAX(m1, v1);
        WKV_V8_MAX(m2, v2);
        WKV_V8_MAX(m3, v3);
    }
    for (; i + 8 <= n; i += 8) {
        wkv__v8f v;
        memcpy(&v, x + i, sizeof v);
        v = (wkv__v8f)((wkv__v8i)v & mask);
        WKV_V8_MAX(m0, v);
    }
    WKV_V8_MAX(m0, m1);
    WKV_V8_MAX(m2, m3);
    WKV_V8_MAX(m0, m2);
    float m = init;
    for (int k = 0; k < 8; k++)
        m = m0[k] > m ? m0[k] : m;
    for (; i < n; i++) {
        float a = absolute ? fabsf(x[i]) : x[i];
        m = a > m ? a : m;
    }
    return m;
}

/* The maximum of x[0..n) (-inf for none; NaN is skipped). */
static inline __attribute__((always_inline)) float wkv__max_lanes(const float *x, int n)
{
    return wkv__max_row(x, n, -INFINITY, 0);
}

/* The maximum of |x[0..n)| (0 for none; NaN is skipped). */
static inline __attribute__((always_inline)) float wkv__absmax_lanes(const float *x, int n)
{
    return wkv__max_row(x, n, 0.0f, 1);
}

#endif
