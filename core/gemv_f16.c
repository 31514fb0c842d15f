/* f16-weight matrix-vector products for the decoder's single-token steps.
 *
 * A decoder step reads every weight once for one (or a few beams') rows: it is bound
 * by memory bandwidth, so the weights stay f16 in memory (half the bytes of f32) and
 * are widened in registers (F16C / AVX-512 vcvtph2ps) right before the FMAs.  Each
 * output element is one f32 dot product (16 or 8 lanes, then a horizontal sum), so
 * results differ from sgemm's only by summation order.
 *
 * Blocking: rows of x are taken up to 8 at a time, with 4 (1-2 rows), 2 (3-4 rows) or
 * 1 (5-8 rows) weight rows per inner loop, so each weight vector loaded feeds several
 * independent FMA chains.  Output rows are split over the pool's threads. */
#include "gemv_f16.h"
#include "internal.h"

#include <pthread.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WKV_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

typedef struct {
    const float *x;
    const uint16_t *w;
    const float *bias;
    float *y;
    int rows, in, out, acc;
} gemv_task;

static inline void put(const gemv_task *t, int r, int j, float s)
{
    float *p = t->y + (size_t)r * t->out + j;
    if (t->bias)
        s += t->bias[j];
    *p = t->acc ? *p + s : s;
}

/* the columns past the last whole vector */
static inline float tail(const gemv_task *t, int r, int j, int k0)
{
    const float *x = t->x + (size_t)r * t->in;
    const uint16_t *w = t->w + (size_t)j * t->in;
    float s = 0;
    for (int k = k0; k < t->in; k++)
        s += x[k] * wkv_f16_to_f32(w[k]);
    return s;
}

/* ---------------------------------------------------------------- portable */

static void part_scalar(const gemv_task *t, int j0, int j1)
{
    for (int r = 0; r < t->rows; r++)
        for (int j = j0; j < j1; j++)
            put(t, r, j, tail(t, r, j, 0));
}

#ifdef WKV_X86
/* ---------------------------------------------------------------- AVX-512 */

#define T512 __attribute__((target("avx512f,avx2,f16c,fma")))
#define INL static inline __attribute__((always_inline))

INL T512 void blk512(const gemv_task *t, int r0, int R, int j, int JB)
{
    const int in = t->in, n16 = in & ~15;
    __m512 acc[4][8];
    for (int b = 0; b < JB; b++)
        for (int r = 0; r < R; r++)
            acc[b][r] = _mm512_setzero_ps();
    const uint16_t *w = t->w + (size_t)j * in;
    const float *x = t->x + (size_t)r0 * in;
    for (int k = 0; k < n16; k += 16) {
        __m512 wv[4];
        for (int b = 0; b < JB; b++)
            wv[b] = _mm512_cvtph_ps(
                _mm256_loadu_si256((const __m256i *)(const void *)(w + (size_t)b * in + k)));
        for (int r = 0; r < R; r++) {
            __m512 xv = _mm512_loadu_ps(x + (size_t)r * in + k);
            for (int b = 0; b < JB; b++)
                acc[b][r] = _mm512_fmadd_ps(wv[b], xv, acc[b][r]);
        }
    }
    for (int b = 0; b < JB; b++)
        for (int r = 0; r < R; r++) {
            float s = _mm512_reduce_add_ps(acc[b][r]);
            if (n16 < in)
                s += tail(t, r0 + r, j + b, n16);
            put(t, r0 + r, j + b, s);
        }
}

INL T512 void run512(const gemv_task *t, int r0, int R, int j0, int j1)
{
    int j = j0;
    if (R <= 2)
        for (; j + 4 <= j1; j += 4)
            blk512(t, r0, R, j, 4);
    if (R <= 4)
        for (; j + 2 <= j1; j += 2)
            blk512(t, r0, R, j, 2);
    for (; j < j1; j++)
        blk512(t, r0, R, j, 1);
}

static T512 void part512(const gemv_task *t, int j0, int j1)
{
    for (int r0 = 0; r0 < t->rows; r0 += 8) {
        switch (t->rows - r0 < 8 ? t->rows - r0 : 8) {
        case 1: run512(t, r0, 1, j0, j1); break;
        case 2: run512(t, r0, 2, j0, j1); break;
        case 3: run512(t, r0, 3, j0, j1); break;
        case 4: run512(t, r0, 4, j0, j1); break;
        case 5: run512(t, r0, 5, j0, j1); break;
        case 6: run512(t, r0, 6, j0, j1); break;
        case 7: run512(t, r0, 7, j0, j1); break;
        default: run512(t, r0, 8, j0, j1); break;
        }
    }
}

static T512 void f16_to_f32_512(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                                      (const __m256i *)(const void *)(src + i))));
    for (; i < n; i++)
        dst[i] = wkv_f16_to_f32(src[i]);
}

static T512 void f32_to_f16_512(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(dst + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(src + i),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++)
        dst[i] = wkv_f32_to_f16(src[i]);
}

/* ---------------------------------------------------------------- AVX2 + F16C */

#define T256 __attribute__((target("avx2,f16c,fma")))

INL T256 float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

INL T256 void blk256(const gemv_task *t, int r0, int R, int j, int JB)
{
    const int in = t->in, n8 = in & ~7;
    __m256 acc[4][8];
    for (int b = 0; b < JB; b++)
        for (int r = 0; r < R; r++)
            acc[b][r] = _mm256_setzero_ps();
    const uint16_t *w = t->w + (size_t)j * in;
    const float *x = t->x + (size_t)r0 * in;
    for (int k = 0; k < n8; k += 8) {
        __m256 wv[4];
        for (int b = 0; b < JB; b++)
            wv[b] = _mm256_cvtph_ps(
                _mm_loadu_si128((const __m128i *)(const void *)(w + (size_t)b * in + k)));
        for (int r = 0; r < R; r++) {
            __m256 xv = _mm256_loadu_ps(x + (size_t)r * in + k);
            for (int b = 0; b < JB; b++)
                acc[b][r] = _mm256_fmadd_ps(wv[b], xv, acc[b][r]);
        }
    }
    for (int b = 0; b < JB; b++)
        for (int r = 0; r < R; r++) {
            float s = hsum256(acc[b][r]);
            if (n8 < in)
                s += tail(t, r0 + r, j + b, n8);
            put(t, r0 + r, j + b, s);
        }
}

INL T256 void run256(const gemv_task *t, int r0, int R, int j0, int j1)
{
    int j = j0;
    if (R <= 2)
        for (; j + 4 <= j1; j += 4)
            blk256(t, r0, R, j, 4);
    if (R <= 4)
        for (; j + 2 <= j1; j += 2)
            blk256(t, r0, R, j, 2);
    for (; j < j1; j++)
        blk256(t, r0, R, j, 1);
}

static T256 void part256(const gemv_task *t, int j0, int j1)
{
    for (int r0 = 0; r0 < t->rows; r0 += 8) {
        switch (t->rows - r0 < 8 ? t->rows - r0 : 8) {
        case 1: run256(t, r0, 1, j0, j1); break;
        case 2: run256(t, r0, 2, j0, j1); break;
        case 3: run256(t, r0, 3, j0, j1); break;
        case 4: run256(t, r0, 4, j0, j1); break;
        case 5: run256(t, r0, 5, j0, j1); break;
        case 6: run256(t, r0, 6, j0, j1); break;
        case 7: run256(t, r0, 7, j0, j1); break;
        default: run256(t, r0, 8, j0, j1); break;
        }
    }
}

static T256 void f16_to_f32_256(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                      (const __m128i *)(const void *)(src + i))));
    for (; i < n; i++)
        dst[i] = wkv_f16_to_f32(src[i]);
}

static T256 void f32_to_f16_256(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++)
        dst[i] = wkv_f32_to_f16(src[i]);
}
#endif /* WKV_X86 */

/* ---------------------------------------------------------------- dispatch */

enum { ISA_SCALAR, ISA_AVX2, ISA_AVX512 };

#ifdef WKV_X86
/* cpuid directly (clang 14's __builtin_cpu_supports does not know "f16c"), checking
 * that the OS saves the AVX / AVX-512 registers too. */
static int isa_detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return ISA_SCALAR;
    const unsigned need1 = bit_FMA | bit_F16C | bit_OSXSAVE | bit_AVX;
    if ((c & need1) != need1)
        return ISA_SCALAR;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0x6) != 0x6 || !__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX2))
        return ISA_SCALAR;
    return (b & bit_AVX512F) && (lo & 0xe0) == 0xe0 ? ISA_AVX512 : ISA_AVX2;
}

/* Detected once: cpuid is slow (a VM exit under a hypervisor) and a step calls the
 * kernels a hundred times.  Written once under pthread_once, constant afterwards. */
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static int isa_value;

static void isa_init(void)
{
    isa_value = isa_detect();
}
#endif

static int isa(void)
{
#ifdef WKV_X86
    pthread_once(&isa_once, isa_init);
    return isa_value;
#else
    return ISA_SCALAR;
#endif
}

const char *wkv_gemv_f16_isa(void)
{
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    return names[isa()];
}

static void part(const gemv_task *t, int j0, int j1)
{
    switch (isa()) {
#ifdef WKV_X86
    case ISA_AVX512: part512(t, j0, j1); break;
    case ISA_AVX2: part256(t, j0, j1); break;
#endif
    default: part_scalar(t, j0, j1); break;
    }
}

static void gemv_part(void *arg, int p, int n)
{
    const gemv_task *t = arg;
    /* boundaries on multiples of 4 rows, the last part takes the rest */
    int j0 = (int)((int64_t)t->out * p / n) & ~3;
    int j1 = p == n - 1 ? t->out : (int)((int64_t)t->out * (p + 1) / n) & ~3;
    if (j0 < j1)
        part(t, j0, j1);
}

/* below this many weights a matrix is done on the calling thread: waking the pool
 * (condition variables, ~50 us here) costs more than the second core saves; measured
 * on tiny, 2 threads: 4.1 ms/token with 1M, 4.5 ms with the pool never used, 6.5 ms
 * with 32K (every matrix split) */
#define POOL_MIN_WEIGHTS (1u << 20)

void wkv_gemv_f16(wkv_pool *pool, const float *x, int rows, int in, const uint16_t *w,
                  const float *bias, int out, float *y, int accumulate)
{
    if (rows <= 0 || out <= 0)
        return;
    gemv_task t = {x, w, bias, y, rows, in, out, accumulate};
    if (pool && (size_t)out * (size_t)in >= POOL_MIN_WEIGHTS)
        wkv_pool_run(pool, gemv_part, &t);
    else
        part(&t, 0, out);
}

void wkv_f16_to_f32_row(const uint16_t *src, float *dst, size_t n)
{
    switch (isa()) {
#ifdef WKV_X86
    case ISA_AVX512: f16_to_f32_512(src, dst, n); return;
    case ISA_AVX2: f16_to_f32_256(src, dst, n); return;
#endif
    default:
        for (size_t i = 0; i < n; i++)
            dst[i] = wkv_f16_to_f32(src[i]);
    }
}

void wkv_f32_to_f16_row(const float *src, uint16_t *dst, size_t n)
{
    switch (isa()) {
#ifdef WKV_X86
    case ISA_AVX512: f32_to_f16_512(src, dst, n); return;
    case ISA_AVX2: f32_to_f16_256(src, dst, n); return;
#endif
    default:
        for (size_t i = 0; i < n; i++)
            dst[i] = wkv_f32_to_f16(src[i]);
    }
}
