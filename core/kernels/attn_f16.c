/* The decoder's step attention over a half K/V cache (kv_cache.h), the halves widened
 * in registers (F16C) instead of through a buffer.  Bit for bit what attention.c's f32
 * loops give on the widened values: each score keeps dot_lanes' sixteen lanes, its
 * reduction tree and separate multiply and add (the core is built as ISO C: no
 * contraction into FMA); the value update is elementwise, key after key.  A row of K or
 * V is read once, in order, every query row and head of it at a time, which the
 * hardware's stream prefetchers follow.  AVX-512 and AVX2 (run-time choice,
 * base/cpu.c's detection); elsewhere, or with a head size not a multiple of 16, the
 * caller widens rows itself. */
#include "kernels/attn_f16.h"
#include "base/cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

#define T512 __attribute__((target("avx512f,avx2,f16c")))
#define T256 __attribute__((target("avx2,f16c")))
#define INL static inline __attribute__((always_inline))

/* The last three steps of dot_lanes' tree on lanes 0-7 (already s[k] + s[k + 8]):
 * k += k + 4, then + 2, then + 1. */
INL T256 float tree8(__m256 a)
{
    __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    b = _mm_add_ps(b, _mm_movehl_ps(b, b));
    b = _mm_add_ss(b, _mm_shuffle_ps(b, b, 1));
    return _mm_cvtss_f32(b);
}

static T512 void dot512(const float *q, const uint16_t *k, int nh, int hd, float scale,
                        float *out, size_t stride)
{
    for (int h = 0; h < nh; h++, q += hd, k += hd) {
        __m512 s = _mm512_setzero_ps();
        for (int i = 0; i < hd; i += 16)
            s = _mm512_add_ps(s, _mm512_mul_ps(_mm512_loadu_ps(q + i),
                                               _mm512_cvtph_ps(_mm256_loadu_si256(
                                                   (const __m256i *)(const void *)(k + i)))));
        /* dot_lanes' tree: lanes k += k + 8, then the rest */
        const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1));
        out[(size_t)h * stride] = scale * tree8(_mm256_add_ps(_mm512_castps512_ps256(s), hi));
    }
}

static T512 void axpy512(const float *p, size_t stride, const uint16_t *v, int nh, int hd,
                         float *o)
{
    for (int h = 0; h < nh; h++, v += hd, o += hd) {
        const __m512 a = _mm512_set1_ps(p[(size_t)h * stride]);
        for (int i = 0; i < hd; i += 16)
            _mm512_storeu_ps(o + i, _mm512_add_ps(_mm512_loadu_ps(o + i),
                                                  _mm512_mul_ps(a, _mm512_cvtph_ps(_mm256_loadu_si256(
                                                      (const __m256i *)(const void *)(v + i))))));
    }
}

INL T256 __m256 cvt8(const uint16_t *x)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)x));
}

static T256 void dot256(const float *q, const uint16_t *k, int nh, int hd, float scale,
                        float *out, size_t stride)
{
    for (int h = 0; h < nh; h++, q += hd, k += hd) {
        __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps(); /* lanes 0-7, 8-15 */
        for (int i = 0; i < hd; i += 16) {
            lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(q + i), cvt8(k + i)));
            hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_loadu_ps(q + i + 8), cvt8(k + i + 8)));
        }
        out[(size_t)h * stride] = scale * tree8(_mm256_add_ps(lo, hi));
    }
}

static T256 void axpy256(const float *p, size_t stride, const uint16_t *v, int nh, int hd,
                         float *o)
{
    for (int h = 0; h < nh; h++, v += hd, o += hd) {
        const __m256 a = _mm256_set1_ps(p[(size_t)h * stride]);
        for (int i = 0; i < hd; i += 8)
            _mm256_storeu_ps(o + i, _mm256_add_ps(_mm256_loadu_ps(o + i),
                                                  _mm256_mul_ps(a, cvt8(v + i))));
    }
}

/* A stretch, key after key, every row of each, through one of the row kernels above
 * (inlined into each ISA's caller).  (Sixteen keys of a head at a time, their sixteen
 * reduction trees as one transposed tree and the head's output kept in registers, did
 * fewer operations but read sixteen rows' slices at a time: a base layer's attention
 * 1.8x as slow from memory, and not faster from L3.) */
typedef void (*dot_fn)(const float *, const uint16_t *, int, int, float, float *, size_t);
typedef void (*axpy_fn)(const float *, size_t, const uint16_t *, int, int, float *);

INL void scores_by_key(const wkv__attn_f16_span *sp, const float *q, const uint16_t *k,
                       float scale, float *s, dot_fn dot)
{
    for (int t = 0; t < sp->n; t++)
        for (int r = 0; r < sp->n_q; r++)
            dot(q + (size_t)r * sp->qs, k + (size_t)t * sp->ks, sp->nh, sp->hd, scale,
                s + (size_t)r * sp->s_row + t, sp->s_head);
}

INL void values_by_key(const wkv__attn_f16_span *sp, const float *s, const uint16_t *v,
                       float *o, axpy_fn axpy)
{
    for (int t = 0; t < sp->n; t++)
        for (int r = 0; r < sp->n_q; r++)
            axpy(s + (size_t)r * sp->s_row + t, sp->s_head, v + (size_t)t * sp->ks, sp->nh,
                 sp->hd, o + (size_t)r * sp->qs);
}

static T512 void scores512(const wkv__attn_f16_span *sp, const float *q, const uint16_t *k,
                           float scale, float *s)
{
    scores_by_key(sp, q, k, scale, s, dot512);
}

static T512 void values512(const wkv__attn_f16_span *sp, const float *s, const uint16_t *v,
                           float *o)
{
    values_by_key(sp, s, v, o, axpy512);
}

static T256 void scores256(const wkv__attn_f16_span *sp, const float *q, const uint16_t *k,
                           float scale, float *s)
{
    scores_by_key(sp, q, k, scale, s, dot256);
}

static T256 void values256(const wkv__attn_f16_span *sp, const float *s, const uint16_t *v,
                           float *o)
{
    values_by_key(sp, s, v, o, axpy256);
}

int wkv__attn_f16_ok(int hd)
{
    return hd > 0 && hd % 16 == 0 && wkv__gemv_isa() != WKV_ISA_SCALAR;
}

void wkv__attn_f16_scores(const wkv__attn_f16_span *sp, const float *q, const uint16_t *k,
                         float scale, float *s)
{
    if (wkv__gemv_isa() == WKV_ISA_AVX512)
        scores512(sp, q, k, scale, s);
    else
        scores256(sp, q, k, scale, s);
}

void wkv__attn_f16_values(const wkv__attn_f16_span *sp, const float *s, const uint16_t *v,
                         float *o)
{
    if (wkv__gemv_isa() == WKV_ISA_AVX512)
        values512(sp, s, v, o);
    else
        values256(sp, s, v, o);
}

#else /* no x86 kernels: the caller widens rows (wkv__attn_f16_ok says so) */

int wkv__attn_f16_ok(int hd)
{
    (void)hd;
    return 0;
}

void wkv__attn_f16_scores(const wkv__attn_f16_span *sp, const float *q, const uint16_t *k,
                         float scale, float *s)
{
    (void)sp, (void)q, (void)k, (void)scale, (void)s;
}

void wkv__attn_f16_values(const wkv__attn_f16_span *sp, const float *s, const uint16_t *v,
                         float *o)
{
    (void)sp, (void)s, (void)v, (void)o;
}
#endif
