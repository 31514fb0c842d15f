/* gemv_f16: the f16-weight kernels (core/kernels/gemv_f16.c) against a double product.
 *
 * Every kernel this CPU can run (portable, AVX2 + F16C, AVX-512), the decoder's shapes
 * (tiny and base: d x d, 4d x d, d x 4d, the vocabulary projection) and odd ones (rows
 * of 1, 3, 5 and 7 vectors, so that each kernel's vectors left over after its
 * accumulators' turns are taken, and widths past the last whole vector), with 1 ... 9
 * input rows (a greedy step, beams, a batch, more than one pass of 8), with and without
 * bias, overwriting and accumulating, on 1 and 2 threads: max |y - ref| / max |ref| <=
 * 1e-5, ref the double product of the weights widened by wkv__f16_to_f32.  Weights are
 * random halves of both signs (normal numbers, 1 in 64 subnormal).
 *
 * WHISPERKV_TEST_EMULATED (the isa setups, under qemu-user): every kernel below the
 * CPU's best one already ran natively on the AVX-512 machine (each kernel is called by
 * its level), so only the emulated CPU's own choice runs there, on every shape but the
 * vocabulary's (its rows are the 384 x 384 shape's, 135 times more of them).  Both:
 * 231 -> 32 s under qemu's max on CI's Intel Xeon. */
#include "kernels/gemv_f16.h"
#include "base/cpu.h"
#include "base/f16.h"
#include "base/pool.h"
#include "testutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 20261128; /* tu_frand's: uniform in [-1, 1) */

typedef struct {
    int out, in;
    int max_rows; /* the rows tried: 1 ... max_rows */
} shape;

static const shape SHAPES[] = {
    {384, 384, 9},  {1536, 384, 5}, {384, 1536, 5}, {512, 512, 9}, {2048, 512, 3},
    {512, 2048, 3}, {51865, 384, 2}, /* tiny's logits */
    {1, 8, 9},      {7, 24, 9},     {37, 40, 9},    {5, 56, 9},    {9, 389, 9},
    {3, 5, 9},      {64, 96, 9},
};

static void check_shape(const shape *s, wkv__pool *pool2)
{
    const size_t n_w = (size_t)s->out * (size_t)s->in;
    const int R = s->max_rows;
    const size_t ny_max = (size_t)R * s->out;
    uint16_t *w = malloc(n_w * sizeof *w);
    float *x = malloc((size_t)R * s->in * sizeof *x);
    float *bias = malloc((size_t)s->out * sizeof *bias);
    float *y0 = malloc(ny_max * sizeof *y0); /* accumulate's starting values */
    float *y = malloc(ny_max * sizeof *y);
    double *ref = malloc(ny_max * sizeof *ref);
    float *want = malloc(ny_max * sizeof *want);
    if (!w || !x || !bias || !y0 || !y || !ref || !want) {
        CHECK(0, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_w; i++) /* 1 in 64 subnormal (below 2^-14) */
        w[i] = wkv__f32_to_f16((tu_frand(&seed) < 31.0f / 32 ? 0.2f : 4e-5f) * tu_frand(&seed));
    for (size_t i = 0; i < (size_t)R * s->in; i++)
        x[i] = tu_frand(&seed);
    for (int j = 0; j < s->out; j++)
        bias[j] = tu_frand(&seed);
    for (size_t i = 0; i < ny_max; i++)
        y0[i] = tu_frand(&seed);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < s->out; j++) {
            double acc = 0;
            const float *xr = x + (size_t)r * s->in;
            const uint16_t *wr = w + (size_t)j * s->in;
            for (int k = 0; k < s->in; k++)
                acc += (double)xr[k] * wkv__f16_to_f32(wr[k]);
            ref[(size_t)r * s->out + j] = acc;
        }
    double worst = 0;
    char worst_at[96] = "";
    const int top = wkv__gemv_isa();
    for (int isa = tu_emulated() ? top : WKV_ISA_SCALAR; isa <= top; isa++) {
        for (int rows = 1; rows <= R; rows++)
            for (int mode = 0; mode < 3; mode++) { /* plain, + bias, accumulate + bias */
                wkv__pool *pool = (rows + mode) % 2 ? pool2 : NULL;
                const size_t ny = (size_t)rows * s->out;
                memcpy(y, y0, ny * sizeof *y);
                wkv__gemv_f16_isa(isa, pool, x, rows, s->in, w, mode ? bias : NULL, s->out, y,
                                  mode == 2);
                for (int r = 0; r < rows; r++)
                    for (int j = 0; j < s->out; j++) {
                        const size_t i = (size_t)r * s->out + j;
                        want[i] = (float)(ref[i] + (mode ? bias[j] : 0) + (mode == 2 ? y0[i] : 0));
                    }
                const double e = tu_rel_err(y, want, ny);
                if (e > worst) {
                    worst = e;
                    snprintf(worst_at, sizeof worst_at, "isa %d, %d rows, mode %d", isa, rows,
                             mode);
                }
                CHECK(e <= 1e-5, "%dx%d, isa %d, %d rows, mode %d: relative error %.3g", s->out,
                      s->in, isa, rows, mode, e);
            }
    }
    printf("  %6d x %-5d rows 1..%d: worst %.2e (%s)\n", s->out, s->in, R, worst, worst_at);
done:
    free(w);
    free(x);
    free(bias);
    free(y0);
    free(y);
    free(ref);
    free(want);
}

int main(void)
{
    printf("kernels up to isa %d (0 portable, 1 AVX2, 2 AVX-512); in use: %s\n",
           wkv__gemv_isa(), wkv__gemv_f16_kernel());
    wkv__pool *pool2 = wkv__pool_new(2);
    CHECK(pool2 != NULL, "a pool of 2 threads");
    for (size_t s = 0; pool2 && s < sizeof SHAPES / sizeof *SHAPES; s++)
        if (!tu_emulated() || SHAPES[s].out < 10000) /* not the vocabulary's */
            check_shape(&SHAPES[s], pool2);
    wkv__pool_free(pool2);
    return tu_finish("gemv_f16");
}
