/* Matrix-vector products on weights in ggml quantized blocks (the block types of
 * quant.h's table), for the decoder's per-token matrices of quantized files: AVX-512,
 * AVX2 and portable kernels, chosen at run time. */
#ifndef WKV_GEMV_Q_H
#define WKV_GEMV_Q_H

#include "base/pool.h"

#include <stdint.h>

/* y[r][j] (+)= bias[j] + sum_k x[r][k] * W[j][k] for r < rows, j < out.  W is out x in,
 * row j being in / 32 consecutive blocks of `type` (in a multiple of 32, else nothing is
 * written; any alignment).  A type that is not a block type of the table aborts.  Any
 * rows, any out; bias may be NULL; accumulate: add to y instead of
 * overwriting it.  Each product is the dequantized weight times x, accumulated in f32
 * (so it equals dequantize-then-f32 up to summation order).  Output rows are split
 * over the pool's threads (pool may be NULL). */
void wkv__gemv_q(wkv__pool *pool, int type, const float *x, int rows, int in,
                const uint8_t *w, const float *bias, int out, float *y, int accumulate);
/* The same on a given kernel (WKV_ISA_*, at most the one the CPU has: tests run every
 * kernel the machine can). */
void wkv__gemv_q_isa(int isa, wkv__pool *pool, int type, const float *x, int rows, int in,
                    const uint8_t *w, const float *bias, int out, float *y, int accumulate);

#endif
