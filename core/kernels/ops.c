/* Layer norm, GELU, softmax (and its bf16 form), bf16 rounding, linear layers on sgemm.
 * Attention: attention.c.  The vocabulary's log-sum-exp and sampling: logits.c.  f16
 * conversion: base/f16.c. */
#include "kernels/ops.h"
#include "base/cpu.h"
#include "model/model.h"
#include "base/sgemm.h"

#include <math.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(WKV_NO_CLONES)
#define WKV_OPS_X86 1
#include <immintrin.h>
#endif

/* Mean and variance in double over eight lanes so that the loops vectorize (one
 * chain of double adds was 6 cycles an element): a sum of a row's floats in double is
 * exact but for spreads beyond 2^29, so the lanes change no result that matters. */
WKV_CLONES
static void layer_norm_clones(const float *x, float *y, int rows, int n, const float *w,
                              const float *b)
{
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * n;
        float *yr = y + (size_t)r * n;
        double s8[8] = {0}, v8[8] = {0};
        int i = 0;
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++)
                s8[k] += xr[i + k];
        double mean = 0, var = 0;
        for (; i < n; i++)
            mean += xr[i];
        for (int k = 0; k < 8; k++)
            mean += s8[k];
        mean /= n;
        for (i = 0; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) {
                double d = xr[i + k] - mean;
                v8[k] += d * d;
            }
        for (; i < n; i++) {
            double d = xr[i] - mean;
            var += d * d;
        }
        for (int k = 0; k < 8; k++)
            var += v8[k];
        var /= n;
        float inv = (float)(1.0 / sqrt(var + 1e-5));
        float fm = (float)mean;
        for (int i = 0; i < n; i++)
            yr[i] = (xr[i] - fm) * inv * w[i] + b[i];
    }
}

void wkv__layer_norm(const float *x, float *y, int rows, int n, const float *w,
                    const float *b)
{
    layer_norm_clones(x, y, rows, n, w, b);
}

/* e^x for x <= 0 (softmax after the maximum is subtracted), to ~1 ulp: Cephes'
 * expf polynomial on x - n ln2, written so the compiler vectorizes the loop. */
static inline float exp_nonpos(float x)
{
    x = x < -87.0f ? -87.0f : x; /* below: ~1e-38, nothing to a softmax sum */
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float n = (x * 1.44269504088896341f + magic) - magic;
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    union {
        int32_t i;
        float f;
    } scale = {.i = ((int32_t)n + 127) << 23};
    return p * scale.f;
}

/* GELU with erf from Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7, below f32's
 * resolution of 1 + erf), branch-free so the loop vectorizes; libm's erff does not. */
WKV_CLONES
static void gelu_clones(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float z = x[i] * (float)M_SQRT1_2, a = fabsf(z);
        float t = 1.0f / (1.0f + 0.3275911f * a);
        float p = 1.061405429f;
        p = p * t - 1.453152027f;
        p = p * t + 1.421413741f;
        p = p * t - 0.284496736f;
        p = p * t + 0.254829592f;
        float e = 1.0f - p * t * exp_nonpos(-a * a); /* erf(|z|) */
        e = z < 0.0f ? -e : e;
        x[i] = 0.5f * x[i] * (1.0f + e);
    }
}

/* The clones stay static behind these wrappers: GCC 12 exports a target_clones
 * function's ifunc and resolver from a shared library whatever its visibility. */
void wkv__gelu(float *x, size_t n)
{
    gelu_clones(x, n);
}

/* Sixteen lanes at a time so the compiler vectorizes; built for AVX-512, AVX2 and
 * the baseline, chosen at run time. */
WKV_CLONES
static float softmax_exp_clones(float *x, int n, float *max)
{
    const float m = wkv__max_lanes(x, n);
    if (max)
        *max = m;
    if (m == -INFINITY)
        return 0.0f;
    float s[16] = {0};
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++) {
            x[i + k] = exp_nonpos(x[i + k] - m);
            s[k] += x[i + k];
        }
    double sum = 0;
    for (; i < n; i++) {
        x[i] = exp_nonpos(x[i] - m);
        sum += x[i];
    }
    for (int k = 0; k < 16; k++)
        sum += s[k];
    return (float)sum;
}

/* The portable path: wkv__softmax_exp's values and lanes (lane k sums x[k], x[k + 16],
 * ...), so the sum is the same float.  The exponentials go through a block on the
 * stack and are rounded in a second loop: GCC 12 vectorizes neither half when they
 * are one loop (nor the rounding's narrowing on AVX-512F without AVX-512BW). */
WKV_CLONES
static float softmax_exp_bf16_clones(const float *x, int n, uint16_t *q)
{
    const float m = wkv__max_lanes(x, n);
    if (m == -INFINITY) {
        memset(q, 0, (size_t)n * sizeof *q);
        return 0.0f;
    }
    float s[16] = {0}, e[256];
    int i = 0;
    while (i + 16 <= n) {
        const int len = n - i >= 256 ? 256 : (n - i) / 16 * 16;
        for (int j = 0; j < len; j += 16)
            for (int k = 0; k < 16; k++) {
                e[j + k] = exp_nonpos(x[i + j + k] - m);
                s[k] += e[j + k];
            }
        for (int k = 0; k < len; k++)
            q[i + k] = wkv__bf16(e[k]);
        i += len;
    }
    double sum = 0;
    for (; i < n; i++) {
        float v = exp_nonpos(x[i] - m);
        q[i] = wkv__bf16(v);
        sum += v;
    }
    for (int k = 0; k < 16; k++)
        sum += s[k];
    return (float)sum;
}

/* branch-free so that it vectorizes: the activations are converted at every product,
 * a scalar loop was a tenth of an encoder run */
WKV_CLONES
static void to_bf16_clones(const float *x, size_t n, float scale, uint16_t *q)
{
    for (size_t i = 0; i < n; i++)
        q[i] = wkv__bf16(scale * x[i]);
}

#ifdef WKV_OPS_X86
#define T512 __attribute__((target("avx512f")))

/* e^t for t <= 0 on sixteen lanes, for probabilities that are rounded to bf16 next
 * (8 significant bits): t = n ln2 + r with |r| <= ln2 / 2, e^r by the Taylor
 * polynomial to degree 5 (relative error below 2.5e-6 on that interval, 1/800 of a bf16
 * rounding step), 2^n by scalef.  With FMA this is about half the instructions of
 * exp_nonpos; t is clamped at -104 (e^t then 0 or subnormal, as expf gives) so that
 * -inf makes 0, not NaN; NaN stays NaN. */
static inline __attribute__((always_inline)) T512 __m512 exp_bf16_512(__m512 t)
{
    t = _mm512_max_ps(_mm512_set1_ps(-104.0f), t); /* max returns t when t is NaN */
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), t);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 120.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* wkv__bf16 on sixteen lanes, each in the low half of a 32-bit lane (the stores narrow
 * them; AVX-512F: GCC 12 vectorizes the plain loop's narrowing only with AVX-512BW,
 * which target_clones cannot ask for by name). */
static inline __attribute__((always_inline)) T512 __m512i bf16_512(__m512 f)
{
    const __m512i u = _mm512_castps_si512(f), hi = _mm512_srli_epi32(u, 16);
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)),
                                 _mm512_and_si512(hi, _mm512_set1_epi32(1)));
    r = _mm512_srli_epi32(r, 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40));
}

/* The loop of both AVX-512 versions; STORE(p, e) and STORE_MASK(p, k, e) write the
 * lanes of e rounded to bf16. */
#define SOFTMAX_EXP_BF16_512(STORE, STORE_MASK)                                       \
    const float m = wkv__max_lanes(x, n);                                                  \
    if (m == -INFINITY) {                                                             \
        memset(q, 0, (size_t)n * sizeof *q);                                          \
        return 0.0f;                                                                  \
    }                                                                                 \
    const __m512 vm = _mm512_set1_ps(m);                                              \
    __m512 sum = _mm512_setzero_ps();                                                 \
    int i = 0;                                                                        \
    for (; i + 16 <= n; i += 16) {                                                    \
        __m512 e = exp_bf16_512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));           \
        sum = _mm512_add_ps(sum, e);                                                  \
        STORE(q + i, e);                                                              \
    }                                                                                 \
    if (i < n) { /* the last 1 - 15: masked lanes load -inf and add 0 */              \
        const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);                         \
        __m512 e = exp_bf16_512(                                                      \
            _mm512_sub_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i), vm)); \
        sum = _mm512_add_ps(sum, e);                                                  \
        STORE_MASK(q + i, k, e);                                                      \
    }                                                                                 \
    return _mm512_reduce_add_ps(sum)

#define STORE_ROUNDED(p, e)                                                           \
    _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtepi32_epi16(bf16_512(e)))
#define STORE_ROUNDED_MASK(p, k, e) _mm512_mask_cvtepi32_storeu_epi16(p, k, bf16_512(e))

static T512 float softmax_exp_bf16_512(const float *x, int n, uint16_t *q)
{
    SOFTMAX_EXP_BF16_512(STORE_ROUNDED, STORE_ROUNDED_MASK);
}

/* With AVX512_BF16 the CPU rounds (vcvtneps2bf16: to nearest even as wkv__bf16, but
 * subnormal results flushed to 0: probabilities below e^-87, "nothing" next to the
 * row's 1): one instruction for bf16_512's seven and the narrowing. */
#define T512BF __attribute__((target("avx512f,avx512bf16")))
#define STORE_NATIVE(p, e)                                                            \
    _mm256_storeu_si256((__m256i *)(void *)(p), (__m256i)_mm512_cvtneps_pbh(e))
#define STORE_NATIVE_MASK(p, k, e)                                                    \
    _mm512_mask_cvtepi32_storeu_epi16(p, k, _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(e)))

static T512BF float softmax_exp_bf16_512bf(const float *x, int n, uint16_t *q)
{
    SOFTMAX_EXP_BF16_512(STORE_NATIVE, STORE_NATIVE_MASK);
}

static T512BF void to_bf16_512bf(const float *x, size_t n, float scale, uint16_t *q)
{
    const __m512 s = _mm512_set1_ps(scale);
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        STORE_NATIVE(q + i, _mm512_mul_ps(s, _mm512_loadu_ps(x + i)));
    if (i < n) {
        const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
        STORE_NATIVE_MASK(q + i, k, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(k, x + i)));
    }
}
#endif

float wkv__softmax_exp_bf16_isa(int isa, const float *x, int n, uint16_t *q)
{
#ifdef WKV_OPS_X86
    if (isa > wkv__bf16_isa())
        isa = wkv__bf16_isa();
    if (isa == WKV_ISA_AVX512_BF16)
        return softmax_exp_bf16_512bf(x, n, q);
    if (isa == WKV_ISA_AVX512)
        return softmax_exp_bf16_512(x, n, q);
#endif
    (void)isa;
    return softmax_exp_bf16_clones(x, n, q);
}

float wkv__softmax_exp_bf16(const float *x, int n, uint16_t *q)
{
    return wkv__softmax_exp_bf16_isa(wkv__bf16_isa(), x, n, q);
}

void wkv__to_bf16_isa(int isa, const float *x, size_t n, float scale, uint16_t *q)
{
#ifdef WKV_OPS_X86
    if (isa >= WKV_ISA_AVX512_BF16 && wkv__bf16_isa() == WKV_ISA_AVX512_BF16) {
        to_bf16_512bf(x, n, scale, q);
        return;
    }
#endif
    (void)isa;
    to_bf16_clones(x, n, scale, q);
}

void wkv__to_bf16(const float *x, size_t n, float scale, uint16_t *q)
{
    wkv__to_bf16_isa(wkv__bf16_isa(), x, n, scale, q);
}

float wkv__softmax_exp(float *x, int n, float *max)
{
    return softmax_exp_clones(x, n, max);
}

void wkv__softmax(float *x, int n)
{
    float sum = wkv__softmax_exp(x, n, NULL);
    if (sum <= 0.0f)
        return;
    float inv = 1.0f / sum;
    for (int i = 0; i < n; i++)
        x[i] *= inv;
}

typedef struct {
    const float *x, *w, *bias;
    float *y;
    int rows, in, out;
    float beta;
} linear_job;

/* Rows [part/n_parts] of y = x . W^T (+ beta y) (+ bias): one sgemm per part, on
 * OpenBLAS's calling thread (blas.c keeps it single-threaded). */
static void linear_part(void *arg, int part, int n_parts)
{
    const linear_job *j = arg;
    int r0 = (int)((long)j->rows * part / n_parts), r1 = (int)((long)j->rows * (part + 1) / n_parts);
    if (r1 <= r0)
        return;
    const float *x = j->x + (size_t)r0 * j->in;
    float *y = j->y + (size_t)r0 * j->out;
    if (r1 - r0 == 1)
        wkv__sgemv(j->out, j->in, 1.0f, j->w, j->in, x, j->beta, y);
    else
        wkv__sgemm(1, r1 - r0, j->out, j->in, 1.0f, x,
                    j->in, j->w, j->in, j->beta, y, j->out);
    if (j->bias)
        for (int r = r0; r < r1; r++) {
            float *yr = j->y + (size_t)r * j->out;
            for (int i = 0; i < j->out; i++)
                yr[i] += j->bias[i];
        }
}

static void linear(wkv__pool *pool, const float *x, int rows, int in, const float *w,
                   const float *bias, int out, float *y, float beta)
{
    linear_job job = {x, w, bias, y, rows, in, out, beta};
    /* below ~32 rows a part, waking the pool costs more than the split gains */
    if (rows >= 32 * wkv__pool_parts(pool))
        wkv__pool_run(pool, linear_part, &job);
    else
        linear_part(&job, 0, 1);
}

void wkv__linear(wkv__pool *pool, const float *x, int rows, int in, const float *w,
                const float *bias, int out, float *y)
{
    linear(pool, x, rows, in, w, bias, out, y, 0.0f);
}

void wkv__linear_add(wkv__pool *pool, const float *x, int rows, int in, const float *w,
                    const float *bias, int out, float *y)
{
    linear(pool, x, rows, in, w, bias, out, y, 1.0f);
}

/* Rows [r0, r1) of a linear layer on the calling thread: the encoder's fused loops. */
void wkv__linear_rows(const float *x, int r0, int r1, int in, const float *w,
                     const float *bias, int out, float *y, int accumulate)
{
    linear_job job = {x + (size_t)r0 * in, w, bias, y + (size_t)r0 * out, r1 - r0, in, out,
                      accumulate ? 1.0f : 0.0f};
    linear_part(&job, 0, 1);
}

typedef struct {
    float *x;
    size_t n;
} gelu_job;

static void gelu_part(void *arg, int part, int n_parts)
{
    gelu_job *j = arg;
    size_t a = j->n * (size_t)part / (size_t)n_parts, b = j->n * (size_t)(part + 1) / (size_t)n_parts;
    wkv__gelu(j->x + a, b - a);
}

void wkv__gelu_pool(wkv__pool *pool, float *x, size_t n)
{
    gelu_job job = {x, n};
    if (n >= 65536)
        wkv__pool_run(pool, gelu_part, &job);
    else
        wkv__gelu(x, n);
}
