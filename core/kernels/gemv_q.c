/* Quantized-weight matrix-vector products for the decoder's single-token steps.
 *
 * A step is bound by the bytes of weights it streams; a q8_0 block carries 32 weights
 * in 34 bytes (f16: 64), q4_0 in 18.  So the blocks stay as the file stores them and
 * are widened in registers: each block's 32 codes become signed bytes (nibbles split,
 * the fifth bit spread from its 32-bit word, the type's offset taken off), then f32
 * lanes, then the weights q * d + m by one FMA; those are multiplied into f32
 * accumulators per input row.  The weights are the dequantized values up to the
 * rounding of that FMA (quant.c rounds q * d and + m separately), so the results equal
 * dequantize-then-f32 up to summation order.  On AVX-512 a single input row (a greedy
 * step) on a type without a minimum (q8_0, q5_0, q4_0) takes d out of the block
 * instead: the codes q + off as f32 (exact), their dot with x, times d; one product
 * fewer per block (one thread, the vocabulary's shape: q8_0 7.3 -> 6.0 cycles a block,
 * q5_0 9.1 -> 8.2, q4_0 unchanged), the same sum rounded in another order; and two
 * output rows at a time with d broadcast by the load (one512: q4_0 6.1 -> 5.2).
 * Several rows (beams) share each widened block, so there the scaled weights pay.
 * Output rows are split over the pool's threads. */
#include "kernels/gemv_q.h"
#include "base/cpu.h"
#include "model/model.h"
#include "model/quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WKV_X86 1
#include <immintrin.h>
#endif

typedef struct {
    int type;
    const float *x;
    const uint8_t *w;
    const float *bias;
    float *y;
    int rows, in, out, acc;
    size_t row_bytes; /* bytes of one weight row: in / 32 blocks */
} gemv_task;

static inline void put(const gemv_task *t, int r, int j, float s)
{
    float *p = t->y + (size_t)r * t->out + j;
    if (t->bias)
        s += t->bias[j];
    *p = t->acc ? *p + s : s;
}

/* A type's row of quant.h's table, whose layout fields (qs, qh, m, off, code_bits) the
 * kernels read: with the type a constant (BY_TYPE) they fold.  A type without block
 * codes (f32, f16: their own products) or outside the table aborts: the loader
 * refuses unknown types, so reaching one is a bug, never a silent wrong product. */
static __attribute__((noreturn, cold)) void no_kernel(int type)
{
    const wkv__qtype *q = wkv__qtype_must(type, "wkv__gemv_q");
    fprintf(stderr, "whisperkv: wkv__gemv_q: %s is not a block type (a bug)\n", q->name);
    abort();
}

static inline const wkv__qtype *layout_of(int type)
{
    const wkv__qtype *q = wkv__qtype_of(type);
    if (!q || !q->code_bits)
        no_kernel(type);
    return q;
}

static inline uint16_t u16_at(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* ---------------------------------------------------------------- portable */

static void part_scalar(const gemv_task *t, int j0, int j1)
{
    /* the table's block decoder directly: wkv__row_to_f32's checks once per block would
     * cost more than they guard (the type was checked by wkv__gemv_q_isa) */
    const wkv__qtype *q = layout_of(t->type);
    const int nb = t->in / WKV_QK;
    const size_t bb = (size_t)q->block_bytes;
    float s[8], wb[WKV_QK];
    for (int r0 = 0; r0 < t->rows; r0 += 8) {
        const int R = t->rows - r0 < 8 ? t->rows - r0 : 8;
        for (int j = j0; j < j1; j++) {
            const uint8_t *w = t->w + (size_t)j * t->row_bytes;
            for (int r = 0; r < R; r++)
                s[r] = 0;
            for (int b = 0; b < nb; b++) {
                q->to_f32(w + (size_t)b * bb, wb, WKV_QK);
                for (int r = 0; r < R; r++) {
                    const float *x = t->x + (size_t)(r0 + r) * t->in + (size_t)b * WKV_QK;
                    for (int k = 0; k < WKV_QK; k++)
                        s[r] += x[k] * wb[k];
                }
            }
            for (int r = 0; r < R; r++)
                put(t, r0 + r, j, s[r]);
        }
    }
}

#ifdef WKV_X86
#define INL static inline __attribute__((always_inline))
/* The loops over a kernel's input rows (R) and accumulators (A), constants in each
 * instance, unrolled whatever the optimization level: their vectors must live in
 * registers.  At -O2 (Debian's packaging flags) GCC 12 kept them in arrays on the
 * stack, and 5 - 8 rows took 2.4 - 3x as long (AMD EPYC Zen 3). */
#define UNROLL _Pragma("GCC unroll 16")
#define T256 __attribute__((target("avx2,f16c,fma")))
#define T512 __attribute__((target("avx512f,avx2,f16c,fma")))

/* A block's 32 codes as signed bytes, element j in byte j, the type's offset taken
 * off (q4_0: q - 8, q5_0: q - 16; the _1 types keep q, their minimum goes in m). */
INL T256 __m256i codes(const uint8_t *blk, const wkv__qtype *L)
{
    if (L->code_bits == 8)
        return _mm256_loadu_si256((const __m256i *)(const void *)(blk + L->qs));
    const __m128i q = _mm_loadu_si128((const __m128i *)(const void *)(blk + L->qs));
    const __m128i lo4 = _mm_set1_epi8(0x0f);
    __m256i v = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), lo4),
                                 _mm_and_si128(q, lo4));
    if (L->qh >= 0) {
        /* byte j gets byte j / 8 of the bit word, keeps bit j % 8: 0x10 where set */
        uint32_t qh;
        memcpy(&qh, blk + L->qh, 4);
        const __m256i spread = _mm256_shuffle_epi8(
            _mm256_set1_epi32((int)qh),
            _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0));
        const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
        const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
        v = _mm256_or_si256(v, _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
    }
    if (L->off)
        v = _mm256_sub_epi8(v, _mm256_set1_epi8((char)-L->off));
    return v;
}

/* fn(t, TYPE, j0, j1) with the type a constant, so each instance folds its layout */
#define BY_TYPE(fn, t, j0, j1)                                                     \
    do {                                                                           \
        switch ((t)->type) {                                                       \
        case WKV_TYPE_Q4_0: fn(t, WKV_TYPE_Q4_0, j0, j1); break;                   \
        case WKV_TYPE_Q4_1: fn(t, WKV_TYPE_Q4_1, j0, j1); break;                   \
        case WKV_TYPE_Q5_0: fn(t, WKV_TYPE_Q5_0, j0, j1); break;                   \
        case WKV_TYPE_Q5_1: fn(t, WKV_TYPE_Q5_1, j0, j1); break;                   \
        case WKV_TYPE_Q8_0: fn(t, WKV_TYPE_Q8_0, j0, j1); break;                   \
        default: no_kernel((t)->type);                                             \
        }                                                                          \
    } while (0)

INL T256 float scale_at(const uint8_t *p)
{
    return _cvtsh_ss(u16_at(p));
}

/* ---------------------------------------------------------------- AVX-512 */

/* A 4/5-bit block's 32 weights by table: the 16 (or 32) values (i + off) d + m the
 * codes can stand for are computed once, and each code picks its value with vpermps
 * (which reads the low 4 bits of each lane: the low nibble as is, the high one
 * shifted down; the fifth bit chooses the second table through a mask).  Fewer
 * instructions than converting every code: the kernel, not memory, bounds a step. */
INL T512 void lut512(const uint8_t *w, const wkv__qtype *L, __m512 *w0, __m512 *w1)
{
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 d = _mm512_set1_ps(scale_at(w));
    const __m512 m = L->m >= 0 ? _mm512_set1_ps(scale_at(w + L->m)) : _mm512_setzero_ps();
    const __m512 t0 = _mm512_fmadd_ps(_mm512_add_ps(iota, _mm512_set1_ps((float)L->off)), d, m);
    const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(w + L->qs)));
    const __m512i hi = _mm512_srli_epi32(lo, 4);
    *w0 = _mm512_permutexvar_ps(lo, t0);
    *w1 = _mm512_permutexvar_ps(hi, t0);
    if (L->qh >= 0) {
        const __m512 t1 =
            _mm512_fmadd_ps(_mm512_add_ps(iota, _mm512_set1_ps((float)(L->off + 16))), d, m);
        uint32_t qh;
        memcpy(&qh, w + L->qh, 4);
        *w0 = _mm512_mask_permutexvar_ps(*w0, (__mmask16)(qh & 0xffff), lo, t1);
        *w1 = _mm512_mask_permutexvar_ps(*w1, (__mmask16)(qh >> 16), hi, t1);
    }
}

/* A block's codes plus the type's offset, q + off, as f32 (exact: |q + off| <= 128), for
 * the types without a minimum; the 4/5-bit ones by vpermps on the constant table
 * i + off, as lut512 does with its scaled one. */
INL T512 void codes512(const uint8_t *w, const wkv__qtype *L, __m512 *w0, __m512 *w1)
{
    if (L->code_bits == 8) {
        const __m128i *q = (const __m128i *)(const void *)(w + L->qs);
        *w0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(q)));
        *w1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(q + 1)));
        return;
    }
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 t0 = _mm512_add_ps(iota, _mm512_set1_ps((float)L->off));
    const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(w + L->qs)));
    const __m512i hi = _mm512_srli_epi32(lo, 4);
    *w0 = _mm512_permutexvar_ps(lo, t0);
    *w1 = _mm512_permutexvar_ps(hi, t0);
    if (L->qh >= 0) {
        const __m512 t1 = _mm512_add_ps(iota, _mm512_set1_ps((float)(L->off + 16)));
        uint32_t qh;
        memcpy(&qh, w + L->qh, 4);
        *w0 = _mm512_mask_permutexvar_ps(*w0, (__mmask16)(qh & 0xffff), lo, t1);
        *w1 = _mm512_mask_permutexvar_ps(*w1, (__mmask16)(qh >> 16), hi, t1);
    }
}

/* a += p * (*d), *d broadcast by the load itself ({1to16} from memory) rather than by
 * vbroadcastss: on Zen 4 that shuffle competes with the codes' vpermps, and a greedy
 * step's kernel is bound by those pipes.  The compiler turns _mm512_set1_ps of a
 * register into the shuffle, hence the asm; "x" (registers 0-15), because with "v"
 * GCC copied both accumulators around every statement. */
#define FMA_BCAST(a, p, d) __asm__("vfmadd231ps %2%{1to16%}, %1, %0" : "+x"(a) : "x"(p), "m"(*(d)))

/* The codes' dot with x over one block: sum (q + off) x, exact codes. */
INL T512 __m512 codes_dot(const uint8_t *w, const wkv__qtype *L, const float *xb)
{
    __m512 w0, w1;
    codes512(w, L, &w0, &w1);
    return _mm512_fmadd_ps(w1, _mm512_loadu_ps(xb + 16), _mm512_mul_ps(w0, _mm512_loadu_ps(xb)));
}

/* One input row (a greedy step) on a type without a minimum: per block the codes' dot
 * with x, times d, into one accumulator per output row.  Rows j and j + h (h: half the
 * range, rounded up) go together, sharing x's loads and one vcvtph2ps for both scales,
 * which reach FMA_BCAST through the stack (one thread, q4_0 2048 x 512: 6.1 -> 5.2
 * cycles a block); an odd range's middle row pairs with itself.  Not rows j and j + 1:
 * their two interleaved streams a row apart in the same pages stopped the prefetcher
 * (q8_0's 28 MB vocabulary matrix: 7 -> 18-20 cycles a block); two rows half the range
 * apart are two plain streams.  Each row's sum is the one a row alone would give. */
INL T512 void one512(const gemv_task *t, int type, int r0, int j0, int j1)
{
    const wkv__qtype *L = layout_of(type);
    const size_t bb = (size_t)L->block_bytes;
    const int nb = t->in / WKV_QK;
    const float *x = t->x + (size_t)r0 * t->in;
    const int h = (j1 - j0 + 1) / 2;
    for (int j = j0; j < j0 + h; j++) {
        const int k = j + h < j1 ? j + h : j;
        const uint8_t *w = t->w + (size_t)j * t->row_bytes, *v = t->w + (size_t)k * t->row_bytes;
        __m512 a = _mm512_setzero_ps(), c = _mm512_setzero_ps();
        for (int b = 0; b < nb; b++, w += bb, v += bb) {
            const float *xb = x + (size_t)b * WKV_QK;
            const __m512 p = codes_dot(w, L, xb), q = codes_dot(v, L, xb);
            float d[4];
            _mm_storeu_ps(d, _mm_cvtph_ps(_mm_cvtsi32_si128((int)(u16_at(w) | (uint32_t)u16_at(v) << 16))));
            FMA_BCAST(a, p, &d[0]);
            FMA_BCAST(c, q, &d[1]);
        }
        put(t, r0, j, _mm512_reduce_add_ps(a));
        if (k != j)
            put(t, r0, k, _mm512_reduce_add_ps(c));
    }
}

/* Output rows j0..j1 for R input rows from r0: each block widened once, both halves
 * fed to R pairs of accumulators. */
INL T512 void run512(const gemv_task *t, int type, int r0, int R, int j0, int j1)
{
    const wkv__qtype *L = layout_of(type);
    if (L->m < 0 && R == 1) {
        one512(t, type, r0, j0, j1);
        return;
    }
    const size_t bb = (size_t)L->block_bytes;
    const int nb = t->in / WKV_QK;
    const float *x = t->x + (size_t)r0 * t->in;
    for (int j = j0; j < j1; j++) {
        const uint8_t *w = t->w + (size_t)j * t->row_bytes;
        __m512 a0[8], a1[8];
        UNROLL
        for (int r = 0; r < R; r++)
            a0[r] = a1[r] = _mm512_setzero_ps();
        for (int b = 0; b < nb; b++, w += bb) {
            const float *xb = x + (size_t)b * WKV_QK;
            __m512 w0, w1;
            if (L->code_bits == 8) {
                const __m512 d = _mm512_set1_ps(scale_at(w));
                codes512(w, L, &w0, &w1);
                w0 = _mm512_mul_ps(w0, d);
                w1 = _mm512_mul_ps(w1, d);
            } else {
                lut512(w, L, &w0, &w1);
            }
            UNROLL
            for (int r = 0; r < R; r++) {
                a0[r] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xb + (size_t)r * t->in), a0[r]);
                a1[r] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xb + (size_t)r * t->in + 16), a1[r]);
            }
        }
        UNROLL
        for (int r = 0; r < R; r++)
            put(t, r0 + r, j, _mm512_reduce_add_ps(_mm512_add_ps(a0[r], a1[r])));
    }
}

INL T512 void rows512(const gemv_task *t, int type, int j0, int j1)
{
    for (int r0 = 0; r0 < t->rows; r0 += 8) {
        switch (t->rows - r0 < 8 ? t->rows - r0 : 8) {
        case 1: run512(t, type, r0, 1, j0, j1); break;
        case 2: run512(t, type, r0, 2, j0, j1); break;
        case 3: run512(t, type, r0, 3, j0, j1); break;
        case 4: run512(t, type, r0, 4, j0, j1); break;
        case 5: run512(t, type, r0, 5, j0, j1); break;
        case 6: run512(t, type, r0, 6, j0, j1); break;
        case 7: run512(t, type, r0, 7, j0, j1); break;
        default: run512(t, type, r0, 8, j0, j1); break;
        }
    }
}

static T512 void part512(const gemv_task *t, int j0, int j1)
{
    BY_TYPE(rows512, t, j0, j1);
}

/* ---------------------------------------------------------------- AVX2 */

INL T256 __m256 wide256(__m128i b8, __m256 d, __m256 m)
{
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b8)), d, m);
}

INL T256 float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Block w's 32 codes as two halves of 16 (*lo: codes 0-15, *hi: 16-31), its scale and
 * its minimum (0 for a type without one) broadcast: what wide256 widens a quarter from. */
INL T256 void block256(const uint8_t *w, const wkv__qtype *L, __m128i *lo, __m128i *hi,
                       __m256 *d, __m256 *m)
{
    const __m256i q = codes(w, L);
    *lo = _mm256_castsi256_si128(q);
    *hi = _mm256_extracti128_si256(q, 1);
    *d = _mm256_set1_ps(scale_at(w));
    *m = L->m >= 0 ? _mm256_set1_ps(scale_at(w + L->m)) : _mm256_setzero_ps();
}

/* As run512 with 8 lanes: four quarters per block, up to 4 input rows (16 registers
 * in all, so two accumulators per row). */
INL T256 void run256(const gemv_task *t, int type, int r0, int R, int j0, int j1)
{
    const wkv__qtype *L = layout_of(type);
    const size_t bb = (size_t)L->block_bytes;
    const int nb = t->in / WKV_QK;
    const float *x = t->x + (size_t)r0 * t->in;
    for (int j = j0; j < j1; j++) {
        const uint8_t *w = t->w + (size_t)j * t->row_bytes;
        __m256 a0[4], a1[4];
        UNROLL
        for (int r = 0; r < R; r++)
            a0[r] = a1[r] = _mm256_setzero_ps();
        for (int b = 0; b < nb; b++, w += bb) {
            __m128i lo, hi;
            __m256 d, m;
            block256(w, L, &lo, &hi, &d, &m);
            const __m256 w0 = wide256(lo, d, m), w1 = wide256(_mm_srli_si128(lo, 8), d, m);
            const __m256 w2 = wide256(hi, d, m), w3 = wide256(_mm_srli_si128(hi, 8), d, m);
            const float *xb = x + (size_t)b * WKV_QK;
            UNROLL
            for (int r = 0; r < R; r++) {
                const float *xr = xb + (size_t)r * t->in;
                a0[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xr), a0[r]);
                a1[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xr + 8), a1[r]);
                a0[r] = _mm256_fmadd_ps(w2, _mm256_loadu_ps(xr + 16), a0[r]);
                a1[r] = _mm256_fmadd_ps(w3, _mm256_loadu_ps(xr + 24), a1[r]);
            }
        }
        UNROLL
        for (int r = 0; r < R; r++)
            put(t, r0 + r, j, hsum256(_mm256_add_ps(a0[r], a1[r])));
    }
}

/* Output rows j0..j1 for 5 to 8 input rows from r0, bit for bit run256's sums: a row's
 * first accumulator takes each block's quarters 0 and 2, its second 1 and 3, so one
 * pass over a weight row's blocks fills the first accumulators of all R rows and a
 * second pass (the row's blocks again, from L1) the second ones.  Each quarter is
 * widened once for all R rows, where groups of 4 and the rest widened every block
 * twice (base q8_0's vocabulary matrix, 2 threads, AMD Zen 3: 4 rows 2.7 - 3.5 ms, 5
 * rows as 4 + 1 4.9 - 5.7 ms, in two passes 3.8 - 4.2 ms). */
INL T256 void run256_halves(const gemv_task *t, int type, int r0, int R, int j0, int j1)
{
    const wkv__qtype *L = layout_of(type);
    const size_t bb = (size_t)L->block_bytes;
    const int nb = t->in / WKV_QK;
    const float *x = t->x + (size_t)r0 * t->in;
    for (int j = j0; j < j1; j++) {
        const uint8_t *row = t->w + (size_t)j * t->row_bytes;
        __m256 first[8];
        for (int half = 0; half < 2; half++) {
            __m256 a[8];
            UNROLL
            for (int r = 0; r < R; r++)
                a[r] = _mm256_setzero_ps();
            const uint8_t *w = row;
            for (int b = 0; b < nb; b++, w += bb) {
                __m128i lo, hi;
                __m256 d, m;
                block256(w, L, &lo, &hi, &d, &m);
                if (half) {
                    lo = _mm_srli_si128(lo, 8);
                    hi = _mm_srli_si128(hi, 8);
                }
                const __m256 wa = wide256(lo, d, m), wb = wide256(hi, d, m);
                const float *xb = x + (size_t)b * WKV_QK + 8 * half;
                UNROLL
                for (int r = 0; r < R; r++) {
                    const float *xr = xb + (size_t)r * t->in;
                    a[r] = _mm256_fmadd_ps(wa, _mm256_loadu_ps(xr), a[r]);
                    a[r] = _mm256_fmadd_ps(wb, _mm256_loadu_ps(xr + 16), a[r]);
                }
            }
            UNROLL
            for (int r = 0; r < R; r++)
                first[r] = half ? _mm256_add_ps(first[r], a[r]) : a[r];
        }
        UNROLL
        for (int r = 0; r < R; r++)
            put(t, r0 + r, j, hsum256(first[r]));
    }
}

/* Two passes read the input rows twice per output row: while 8 of them fit in L1
 * with room for the weights (base's d x 4d at 8 rows, 64 KB, ran at 0.45x four rows at a
 * time), else groups of 4. */
#define HALVES_MAX_BYTES (24u << 10)

/* Groups of up to 8 input rows, 5 to 8 in two passes (run256_halves), where 8 rows'
 * floats fit HALVES_MAX_BYTES; else groups of up to 4. */
INL T256 void rows256(const gemv_task *t, int type, int j0, int j1)
{
    const int group = (size_t)8 * (size_t)t->in * sizeof(float) > HALVES_MAX_BYTES ? 4 : 8;
    for (int r0 = 0; r0 < t->rows; r0 += group) {
        switch (t->rows - r0 < group ? t->rows - r0 : group) {
        case 1: run256(t, type, r0, 1, j0, j1); break;
        case 2: run256(t, type, r0, 2, j0, j1); break;
        case 3: run256(t, type, r0, 3, j0, j1); break;
        case 4: run256(t, type, r0, 4, j0, j1); break;
        case 5: run256_halves(t, type, r0, 5, j0, j1); break;
        case 6: run256_halves(t, type, r0, 6, j0, j1); break;
        case 7: run256_halves(t, type, r0, 7, j0, j1); break;
        default: run256_halves(t, type, r0, 8, j0, j1); break;
        }
    }
}

static T256 void part256(const gemv_task *t, int j0, int j1)
{
    BY_TYPE(rows256, t, j0, j1);
}
#endif /* WKV_X86 */

/* ---------------------------------------------------------------- dispatch */

typedef struct {
    const gemv_task *t;
    int isa;
} job;

static void part(const gemv_task *t, int isa, int j0, int j1)
{
    switch (isa) {
#ifdef WKV_X86
    case WKV_ISA_AVX512: part512(t, j0, j1); break;
    case WKV_ISA_AVX2: part256(t, j0, j1); break;
#endif
    default: part_scalar(t, j0, j1); break;
    }
}

static void gemv_part(void *arg, int p, int n)
{
    const job *jb = arg;
    const int out = jb->t->out;
    /* boundaries on multiples of 4 rows, the last part takes the rest */
    int j0 = (int)((int64_t)out * p / n) & ~3;
    int j1 = p == n - 1 ? out : (int)((int64_t)out * (p + 1) / n) & ~3;
    if (j0 < j1)
        part(jb->t, jb->isa, j0, j1);
}

/* as gemv_f16.c: below this many weights the hand-off to the pool costs more */
#define POOL_MIN_WEIGHTS (1u << 14)

void wkv__gemv_q_isa(int isa, wkv__pool *pool, int type, const float *x, int rows, int in,
                    const uint8_t *w, const float *bias, int out, float *y, int accumulate)
{
    const size_t bb = (size_t)layout_of(type)->block_bytes; /* aborts on a wrong type */
    if (rows <= 0 || out <= 0 || in <= 0 || in % WKV_QK)
        return;
    if (isa > wkv__gemv_isa())
        isa = wkv__gemv_isa();
    gemv_task t = {type, x, w, bias, y, rows, in, out, accumulate, (size_t)(in / WKV_QK) * bb};
    job jb = {&t, isa};
    if (pool && (size_t)out * (size_t)in >= POOL_MIN_WEIGHTS)
        wkv__pool_run(pool, gemv_part, &jb);
    else
        part(&t, isa, 0, out);
}

void wkv__gemv_q(wkv__pool *pool, int type, const float *x, int rows, int in,
                const uint8_t *w, const float *bias, int out, float *y, int accumulate)
{
    wkv__gemv_q_isa(wkv__gemv_isa(), pool, type, x, rows, in, w, bias, out, y, accumulate);
}
