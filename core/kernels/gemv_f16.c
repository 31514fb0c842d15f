/* f16-weight matrix-vector products for the decoder's single-token steps.
 *
 * A decoder step reads every weight once for one (or a few beams') rows: it is bound
 * by memory bandwidth, so the weights stay f16 in memory (half the bytes of f32) and
 * are widened in registers (F16C / AVX-512 vcvtph2ps) right before the FMAs.  Each
 * output element is one f32 dot product (16 or 8 lanes, then a horizontal sum), so
 * results differ from sgemm's only by summation order.
 *
 * Blocking: a single row of x (a greedy step) reads each weight row front to back
 * with four accumulators: one sequential stream.  Several rows (beams, a batch) are
 * taken up to 8 at a time, also against one weight row at a time, with 4 (2 rows), 3
 * (3 rows), 2 (4 rows) or 1 (5-8 rows) accumulators per input row taking the row's
 * vectors in turn, so each weight vector loaded feeds at least 8 independent FMA
 * chains.  Output rows are split over the pool's threads. */
#include "kernels/gemv_f16.h"
#include "base/cpu.h"
#include "base/f16.h"
#include "model/model.h"

#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WKV_X86 1
#include <immintrin.h>
#endif

typedef struct {
    const float *x;
    const uint16_t *w;
    const float *bias;
    float *y;
    int rows, in, out, acc;
    int isa; /* the kernel: WKV_ISA_*, at most wkv__gemv_isa() */
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
        s += x[k] * wkv__f16_to_f32(w[k]);
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
/* The loops over a kernel's input rows (R) and accumulators (A), constants in each
 * instance, unrolled whatever the optimization level: their vectors must live in
 * registers.  At -O2 (Debian's packaging flags) GCC 12 kept them in arrays on the
 * stack, and 5 - 8 rows took 2.7 - 3x as long (AMD EPYC Zen 3). */
#define UNROLL _Pragma("GCC unroll 16")

INL T512 __m512 w16x16(const uint16_t *w)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)w));
}

/* One input row (a greedy step): output rows in turn, each read front to back with
 * four accumulators, so the weights are one sequential stream.  Blocks of 4 output
 * rows read 4 streams 2*in bytes apart, which the hardware prefetcher followed
 * badly: tiny's step on one core went from 13 to 6.2 ms with this loop. */
INL T512 void single512(const gemv_task *t, int r0, int j0, int j1)
{
    const int in = t->in, n64 = in & ~63, n16 = in & ~15;
    const float *x = t->x + (size_t)r0 * in;
    for (int j = j0; j < j1; j++) {
        const uint16_t *w = t->w + (size_t)j * in;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        int k = 0;
        for (; k < n64; k += 64) {
            a0 = _mm512_fmadd_ps(w16x16(w + k), _mm512_loadu_ps(x + k), a0);
            a1 = _mm512_fmadd_ps(w16x16(w + k + 16), _mm512_loadu_ps(x + k + 16), a1);
            a2 = _mm512_fmadd_ps(w16x16(w + k + 32), _mm512_loadu_ps(x + k + 32), a2);
            a3 = _mm512_fmadd_ps(w16x16(w + k + 48), _mm512_loadu_ps(x + k + 48), a3);
        }
        for (; k < n16; k += 16)
            a0 = _mm512_fmadd_ps(w16x16(w + k), _mm512_loadu_ps(x + k), a0);
        float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
        if (n16 < in)
            s += tail(t, r0, j, n16);
        put(t, r0, j, s);
    }
}

/* As rows256 with 16 lanes (R input rows against one weight row at a time, A
 * accumulators per input row).  Two or four weight rows interleaved in one loop took
 * 1.25 - 2.0x as long for 2 - 4 input rows (the vocabulary matrix, 2 threads, Intel
 * Xeon family 6 model 207, two runs). */
INL T512 void rows512(const gemv_task *t, int r0, int R, int A, int j0, int j1)
{
    const int in = t->in, n16 = in & ~15, nA = in / (16 * A) * (16 * A);
    const float *x = t->x + (size_t)r0 * in;
    for (int j = j0; j < j1; j++) {
        const uint16_t *w = t->w + (size_t)j * in;
        __m512 acc[4][8];
        UNROLL
        for (int a = 0; a < A; a++)
            UNROLL
            for (int r = 0; r < R; r++)
                acc[a][r] = _mm512_setzero_ps();
        int k = 0;
        for (; k < nA; k += 16 * A)
            UNROLL
            for (int a = 0; a < A; a++) {
                const __m512 wv = w16x16(w + k + 16 * a);
                UNROLL
                for (int r = 0; r < R; r++)
                    acc[a][r] = _mm512_fmadd_ps(
                        wv, _mm512_loadu_ps(x + (size_t)r * in + k + 16 * a), acc[a][r]);
            }
        for (; k < n16; k += 16) { /* fewer than A vectors left */
            const __m512 wv = w16x16(w + k);
            UNROLL
            for (int r = 0; r < R; r++)
                acc[0][r] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + (size_t)r * in + k),
                                            acc[0][r]);
        }
        UNROLL
        for (int r = 0; r < R; r++) {
            __m512 v = acc[0][r];
            if (A == 2)
                v = _mm512_add_ps(v, acc[1][r]);
            else if (A == 3)
                v = _mm512_add_ps(_mm512_add_ps(v, acc[1][r]), acc[2][r]);
            else if (A == 4)
                v = _mm512_add_ps(_mm512_add_ps(v, acc[1][r]),
                                  _mm512_add_ps(acc[2][r], acc[3][r]));
            float s = _mm512_reduce_add_ps(v);
            if (n16 < in)
                s += tail(t, r0 + r, j, n16);
            put(t, r0 + r, j, s);
        }
    }
}

INL T512 void run512(const gemv_task *t, int r0, int R, int j0, int j1)
{
    if (R == 1)
        single512(t, r0, j0, j1);
    else
        rows512(t, r0, R, R == 2 ? 4 : R == 3 ? 3 : R == 4 ? 2 : 1, j0, j1);
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

/* ---------------------------------------------------------------- AVX2 + F16C */

#define T256 __attribute__((target("avx2,f16c,fma")))

INL T256 float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

INL T256 __m256 w16x8(const uint16_t *w)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)w));
}

/* One input row: as single512, one sequential stream of weights. */
INL T256 void single256(const gemv_task *t, int r0, int j0, int j1)
{
    const int in = t->in, n32 = in & ~31, n8 = in & ~7;
    const float *x = t->x + (size_t)r0 * in;
    for (int j = j0; j < j1; j++) {
        const uint16_t *w = t->w + (size_t)j * in;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        int k = 0;
        for (; k < n32; k += 32) {
            a0 = _mm256_fmadd_ps(w16x8(w + k), _mm256_loadu_ps(x + k), a0);
            a1 = _mm256_fmadd_ps(w16x8(w + k + 8), _mm256_loadu_ps(x + k + 8), a1);
            a2 = _mm256_fmadd_ps(w16x8(w + k + 16), _mm256_loadu_ps(x + k + 16), a2);
            a3 = _mm256_fmadd_ps(w16x8(w + k + 24), _mm256_loadu_ps(x + k + 24), a3);
        }
        for (; k < n8; k += 8)
            a0 = _mm256_fmadd_ps(w16x8(w + k), _mm256_loadu_ps(x + k), a0);
        float s = hsum256(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
        if (n8 < in)
            s += tail(t, r0, j, n8);
        put(t, r0, j, s);
    }
}

/* R input rows against one weight row at a time, A accumulators per input row taking
 * the row's 8-wide vectors in turn (vector v into accumulator v % A; the last
 * in / 8 % A into the first), summed at the row's end: one sequential stream of
 * weights.  Two or four weight rows interleaved in one loop (this file's blocking
 * before), with the weights streamed from memory, took 1.4 - 1.6x as long for 2 - 4
 * input rows (the vocabulary matrix, 2 threads, AMD EPYC Zen 3). */
INL T256 void rows256(const gemv_task *t, int r0, int R, int A, int j0, int j1)
{
    const int in = t->in, n8 = in & ~7, nA = in / (8 * A) * (8 * A);
    const float *x = t->x + (size_t)r0 * in;
    for (int j = j0; j < j1; j++) {
        const uint16_t *w = t->w + (size_t)j * in;
        __m256 acc[4][8];
        UNROLL
        for (int a = 0; a < A; a++)
            UNROLL
            for (int r = 0; r < R; r++)
                acc[a][r] = _mm256_setzero_ps();
        int k = 0;
        for (; k < nA; k += 8 * A)
            UNROLL
            for (int a = 0; a < A; a++) {
                const __m256 wv = w16x8(w + k + 8 * a);
                UNROLL
                for (int r = 0; r < R; r++)
                    acc[a][r] = _mm256_fmadd_ps(
                        wv, _mm256_loadu_ps(x + (size_t)r * in + k + 8 * a), acc[a][r]);
            }
        for (; k < n8; k += 8) { /* fewer than A vectors left */
            const __m256 wv = w16x8(w + k);
            UNROLL
            for (int r = 0; r < R; r++)
                acc[0][r] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + (size_t)r * in + k),
                                            acc[0][r]);
        }
        UNROLL
        for (int r = 0; r < R; r++) {
            __m256 v = acc[0][r];
            if (A == 2)
                v = _mm256_add_ps(v, acc[1][r]);
            else if (A == 3)
                v = _mm256_add_ps(_mm256_add_ps(v, acc[1][r]), acc[2][r]);
            else if (A == 4)
                v = _mm256_add_ps(_mm256_add_ps(v, acc[1][r]),
                                  _mm256_add_ps(acc[2][r], acc[3][r]));
            float s = hsum256(v);
            if (n8 < in)
                s += tail(t, r0 + r, j, n8);
            put(t, r0 + r, j, s);
        }
    }
}

INL T256 void run256(const gemv_task *t, int r0, int R, int j0, int j1)
{
    if (R == 1)
        single256(t, r0, j0, j1);
    else
        rows256(t, r0, R, R == 2 ? 4 : R == 3 ? 3 : R == 4 ? 2 : 1, j0, j1);
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

#endif /* WKV_X86 */

/* ---------------------------------------------------------------- dispatch */

#define ISA_SCALAR WKV_ISA_SCALAR
#define ISA_AVX2 WKV_ISA_AVX2
#define ISA_AVX512 WKV_ISA_AVX512


const char *wkv__gemv_f16_kernel(void)
{
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    return names[wkv__gemv_isa()];
}

static void part(const gemv_task *t, int j0, int j1)
{
    switch (t->isa) {
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

/* below this many weights a matrix is done on the calling thread.  With the pool
 * spinning between jobs (pool.c) a hand-off costs about a microsecond, so every
 * matrix of a real model is split: tiny, 2 threads, one machine and run, ms/step with
 * the threshold at 1M 3.9, 128K 3.6, 16K 3.45 (when waking the pool meant condition
 * variables, ~50 us, 1M was best) */
#define POOL_MIN_WEIGHTS (1u << 14)

void wkv__gemv_f16_isa(int isa, wkv__pool *pool, const float *x, int rows, int in,
                      const uint16_t *w, const float *bias, int out, float *y, int accumulate)
{
    if (rows <= 0 || out <= 0)
        return;
    if (isa > wkv__gemv_isa())
        isa = wkv__gemv_isa();
    gemv_task t = {x, w, bias, y, rows, in, out, accumulate, isa};
    if (pool && (size_t)out * (size_t)in >= POOL_MIN_WEIGHTS)
        wkv__pool_run(pool, gemv_part, &t);
    else
        part(&t, 0, out);
}

void wkv__gemv_f16(wkv__pool *pool, const float *x, int rows, int in, const uint16_t *w,
                  const float *bias, int out, float *y, int accumulate)
{
    wkv__gemv_f16_isa(wkv__gemv_isa(), pool, x, rows, in, w, bias, out, y, accumulate);
}
