/* f16-weight matrix-vector products for the decoder's single-token steps.
 *
 * A decoder step reads every weight once for one (or a few beams') rows: it is bound
 * by memory bandwidth, so the weights stay f16 in memory (half the bytes of f32) and
 * are widened in registers (F16C / AVX-512 vcvtph2ps) right before the FMAs.  Each
 * output element is one f32 dot product (16 or 8 lanes, then a horizontal sum), so
 * results differ from sgemm's only by summation order.
 *
 * Blocking: one weight row at a time for up to 8 rows of x (a greedy step, beams, a
 * batch), each with several accumulators along it (F16_KERNELS below).  Output rows
 * are split over the pool's threads. */
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
#define T512 __attribute__((target("avx512f,avx2,f16c,fma")))
#define T256 __attribute__((target("avx2,f16c,fma")))
#define INL static inline __attribute__((always_inline))
/* The loops over a kernel's input rows (R) and accumulators (A), constants in each
 * instance, unrolled whatever the optimization level: their vectors must live in
 * registers.  At -O2 (Debian's packaging flags) GCC 12 kept them in arrays on the
 * stack, and 5 - 8 rows took 2.4 - 3x as long (AMD EPYC Zen 3). */
#define UNROLL _Pragma("GCC unroll 16")

/* Each output row's weights read front to back, one weight row at a time: one
 * sequential stream.  Weight rows read side by side are streams in*2 bytes apart,
 * which the hardware prefetcher followed badly: one input row on 4 weight rows, tiny's
 * step on one core 13 ms against 6.2; 2 - 4 input rows on 2 or 4 weight rows, the
 * vocabulary matrix on 2 threads 1.4 - 1.7x as long (AMD EPYC Zen 3) and 1.25 - 2.0x
 * (Intel Xeon family 6 model 207, two runs).  So each input row keeps A accumulators
 * along the weight row instead, taking its vectors in turn (vector v into
 * accumulator v % A; the last in / N % A into the first), and every weight vector
 * loaded feeds at least 8 independent FMA chains: A = 4 for 1 - 2 rows, 3 for 3, 2 for
 * 4, 1 for 5 - 8.  Written once for both widths: rows##W(t, r0, R, j0, j1) and
 * part##W(t, j0, j1) (rows taken 8 at a time), on vectors V of N floats. */
#define F16_KERNELS(W, TGT, V, N, WIDEN, LOAD, FMA, ADD, ZERO, REDUCE)                     \
    INL TGT void rows##W(const gemv_task *t, int r0, int R, int j0, int j1)               \
    {                                                                                      \
        const int A = R <= 2 ? 4 : R == 3 ? 3 : R == 4 ? 2 : 1;                            \
        const int in = t->in, nv = in / N * N, nA = in / (N * A) * (N * A);                \
        const float *x = t->x + (size_t)r0 * in;                                           \
        for (int j = j0; j < j1; j++) {                                                    \
            const uint16_t *w = t->w + (size_t)j * in;                                     \
            V acc[4][8];                                                                   \
            UNROLL for (int a = 0; a < A; a++) UNROLL for (int r = 0; r < R; r++)          \
                acc[a][r] = ZERO();                                                        \
            int k = 0;                                                                     \
            for (; k < nA; k += N * A)                                                     \
                UNROLL for (int a = 0; a < A; a++)                                         \
                {                                                                          \
                    const V wv = WIDEN(w + k + N * a);                                     \
                    UNROLL for (int r = 0; r < R; r++) acc[a][r] =                         \
                        FMA(wv, LOAD(x + (size_t)r * in + k + N * a), acc[a][r]);          \
                }                                                                          \
            for (; k < nv; k += N) {                                                       \
                const V wv = WIDEN(w + k);                                                 \
                UNROLL for (int r = 0; r < R; r++) acc[0][r] =                             \
                    FMA(wv, LOAD(x + (size_t)r * in + k), acc[0][r]);                      \
            }                                                                              \
            UNROLL for (int r = 0; r < R; r++)                                             \
            {                                                                              \
                V v = acc[0][r];                                                           \
                if (A > 1)                                                                 \
                    v = ADD(v, acc[1][r]);                                                 \
                if (A > 3)                                                                 \
                    v = ADD(v, ADD(acc[2][r], acc[3][r]));                                 \
                else if (A > 2)                                                            \
                    v = ADD(v, acc[2][r]);                                                 \
                float s = REDUCE(v);                                                       \
                if (nv < in)                                                               \
                    s += tail(t, r0 + r, j, nv);                                           \
                put(t, r0 + r, j, s);                                                      \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static TGT void part##W(const gemv_task *t, int j0, int j1)                            \
    {                                                                                      \
        for (int r0 = 0; r0 < t->rows; r0 += 8) {                                          \
            switch (t->rows - r0 < 8 ? t->rows - r0 : 8) {                                 \
            case 1: rows##W(t, r0, 1, j0, j1); break;                                      \
            case 2: rows##W(t, r0, 2, j0, j1); break;                                      \
            case 3: rows##W(t, r0, 3, j0, j1); break;                                      \
            case 4: rows##W(t, r0, 4, j0, j1); break;                                      \
            case 5: rows##W(t, r0, 5, j0, j1); break;                                      \
            case 6: rows##W(t, r0, 6, j0, j1); break;                                      \
            case 7: rows##W(t, r0, 7, j0, j1); break;                                      \
            default: rows##W(t, r0, 8, j0, j1); break;                                     \
            }                                                                              \
        }                                                                                  \
    }

INL T512 __m512 w16x16(const uint16_t *w)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)w));
}

INL T256 __m256 w16x8(const uint16_t *w)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)w));
}

INL T256 float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

F16_KERNELS(512, T512, __m512, 16, w16x16, _mm512_loadu_ps, _mm512_fmadd_ps, _mm512_add_ps,
            _mm512_setzero_ps, _mm512_reduce_add_ps)
F16_KERNELS(256, T256, __m256, 8, w16x8, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_add_ps,
            _mm256_setzero_ps, hsum256)

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
