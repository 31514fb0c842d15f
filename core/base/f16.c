/* IEEE half <-> float (f16.h): the scalar conversions, exact to the bit, and rows on
 * F16C / AVX-512's conversion instructions, which give the same bits. */
#include "base/f16.h"
#include "base/cpu.h"

#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WKV_X86 1
#include <immintrin.h>
#endif

float wkv__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: renormalize */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | man << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t wkv__f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000;
    uint32_t absx = x & 0x7fffffff;
    if (absx > 0x7f800000u) /* NaN */
        return (uint16_t)(sign | 0x7e00);
    if (absx >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00);
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or 0 */
        if (absx < 0x33000000u)
            return (uint16_t)sign;
        uint32_t man = (absx & 0x7fffff) | 0x800000;
        int shift = 126 - (int)(absx >> 23); /* 14..24 */
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            half++;
        return (uint16_t)(sign | half);
    }
    /* normal: round to nearest even on the 13 dropped bits */
    uint32_t r = absx + 0xfff + ((absx >> 13) & 1);
    r -= (127 - 15) << 23;
    return (uint16_t)(sign | (r >> 13));
}

#ifdef WKV_X86
#define T512 __attribute__((target("avx512f,avx2,f16c,fma")))
#define T256 __attribute__((target("avx2,f16c,fma")))

static T512 void f16_to_f32_512(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(
                                      (const __m256i *)(const void *)(src + i))));
    for (; i < n; i++)
        dst[i] = wkv__f16_to_f32(src[i]);
}

static T512 void f32_to_f16_512(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(dst + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(src + i),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++)
        dst[i] = wkv__f32_to_f16(src[i]);
}

static T256 void f16_to_f32_256(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                      (const __m128i *)(const void *)(src + i))));
    for (; i < n; i++)
        dst[i] = wkv__f16_to_f32(src[i]);
}

static T256 void f32_to_f16_256(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++)
        dst[i] = wkv__f32_to_f16(src[i]);
}
#endif /* WKV_X86 */

void wkv__f16_to_f32_row(const uint16_t *src, float *dst, size_t n)
{
    switch (wkv__gemv_isa()) {
#ifdef WKV_X86
    case WKV_ISA_AVX512: f16_to_f32_512(src, dst, n); return;
    case WKV_ISA_AVX2: f16_to_f32_256(src, dst, n); return;
#endif
    default:
        for (size_t i = 0; i < n; i++)
            dst[i] = wkv__f16_to_f32(src[i]);
    }
}

void wkv__f32_to_f16_row(const float *src, uint16_t *dst, size_t n)
{
    switch (wkv__gemv_isa()) {
#ifdef WKV_X86
    case WKV_ISA_AVX512: f32_to_f16_512(src, dst, n); return;
    case WKV_ISA_AVX2: f32_to_f16_256(src, dst, n); return;
#endif
    default:
        for (size_t i = 0; i < n; i++)
            dst[i] = wkv__f32_to_f16(src[i]);
    }
}
