/* Micro-benchmark of the decoder's weight kernels: one matrix of a decoder shape times
 * 1 (a greedy step) or more input rows, on f16 (gemv_f16.c) and on each quantized
 * block type (gemv_q.c), split over a pool of --threads.  Prints ms per product and
 * the GB/s of weight bytes read (the figure a step is bound by), medians of --reps.
 * The matrix is larger than the caches (base's vocabulary projection, 51865 x 512, by
 * default), so every product streams it from memory.
 *
 *   whisperkv-gemv-bench [--threads N] [--reps N] [--rows N] [--out N] [--in N]
 *                        [--type f16|q8_0|q5_1|q5_0|q4_1|q4_0]
 *
 * --type: that type alone (a profile of one kernel).
 */
#include "kernels/gemv_f16.h"
#include "kernels/gemv_q.h"
#include "base/util.h"
#include "base/pool.h"
#include "model/quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int threads = 2, reps = 21, rows = 1, out = 51865, in = 512;
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--type")) only = argv[i + 1];
        else if (!strcmp(argv[i], "--threads")) threads = v;
        else if (!strcmp(argv[i], "--reps")) reps = v;
        else if (!strcmp(argv[i], "--rows")) rows = v;
        else if (!strcmp(argv[i], "--out")) out = v;
        else if (!strcmp(argv[i], "--in")) in = v;
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (threads < 1 || reps < 1 || rows < 1 || out < 1 || in < 32 || in % 32 || reps > 1000) {
        fprintf(stderr, "bad option value\n");
        return 2;
    }
    static const int types[] = {WKV_TYPE_F16, WKV_TYPE_Q8_0, WKV_TYPE_Q5_1, WKV_TYPE_Q5_0,
                                WKV_TYPE_Q4_1, WKV_TYPE_Q4_0};
    wkv__pool *pool = threads > 1 ? wkv__pool_new(threads) : NULL;
    const size_t n = (size_t)out * (size_t)in;
    uint8_t *w = malloc(n * 2); /* the largest: f16 */
    /* x on a cache line, as the decoder's arena holds it */
    void *x_raw = NULL;
    float *x = wkv__alloc_zeroed_lines((size_t)rows * in * sizeof *x, &x_raw);
    float *y = malloc((size_t)rows * out * sizeof *y);
    double *t = malloc((size_t)reps * sizeof *t);
    if (!w || !x || !y || !t)
        return 1;
    for (size_t i = 0; i < n * 2; i++)
        w[i] = (uint8_t)(i * 2654435761u >> 13);
    for (size_t i = 0; i < (size_t)rows * in; i++)
        x[i] = (float)(i % 17) * 0.01f - 0.08f;
    printf("%d x %d weights, %d row(s), %d thread(s), kernels: %s, medians of %d\n", out, in,
           rows, threads, wkv__gemv_f16_kernel(), reps);
    printf("| type | weight MB | ms per product | GB/s of weights |\n|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        const int type = types[k];
        const char *name = type == WKV_TYPE_F16 ? "f16" : wkv__quant_type_name(type);
        if (only && strcmp(only, name))
            continue;
        size_t bytes = type == WKV_TYPE_F16 ? n * 2 : n / WKV_QK * wkv__quant_block_bytes(type);
        if (type != WKV_TYPE_F16) /* valid blocks: finite f16 scales and minima */
            for (size_t b = 0; b < n / WKV_QK; b++) {
                uint8_t *p = w + b * wkv__quant_block_bytes(type);
                p[0] = 0x00, p[1] = 0x20, p[2] = 0x00, p[3] = 0x20;
            }
        for (int r = -2; r < reps; r++) { /* two warm-up products */
            double t0 = wkv__now_ms();
            if (type == WKV_TYPE_F16)
                wkv__gemv_f16(pool, x, rows, in, (const uint16_t *)(void *)w, NULL, out, y, 0);
            else
                wkv__gemv_q(pool, type, x, rows, in, w, NULL, out, y, 0);
            if (r >= 0)
                t[r] = wkv__now_ms() - t0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        double ms = t[reps / 2];
        printf("| %s | %.1f | %.3f | %.1f |\n", name, (double)bytes / 1e6, ms,
               (double)bytes / 1e6 / ms);
    }
    wkv__pool_free(pool);
    free(w);
    free(x_raw);
    free(y);
    free(t);
    return 0;
}
