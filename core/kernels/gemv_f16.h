/* Matrix-vector products on f16 weights (the decoder's per-token matrices), with
 * AVX-512 / AVX2+F16C kernels chosen at run time and a portable fallback. */
#ifndef WKV_GEMV_F16_H
#define WKV_GEMV_F16_H

#include "base/pool.h"

#include <stddef.h>
#include <stdint.h>

/* y[r][j] (+)= bias[j] + sum_k x[r][k] * W[j][k] for r < rows, j < out; W is out x in,
 * row-major, IEEE half.  Any rows (taken 8 at a time), any in.  bias may be NULL;
 * accumulate: add to y instead of overwriting it.  Output rows are split over the
 * pool's threads (pool may be NULL). */
void wkv__gemv_f16(wkv__pool *pool, const float *x, int rows, int in, const uint16_t *w,
                  const float *bias, int out, float *y, int accumulate);
/* The same on a given kernel (WKV_ISA_*, base/cpu.h; one above the CPU's takes the
 * CPU's): for tests and benches. */
void wkv__gemv_f16_isa(int isa, wkv__pool *pool, const float *x, int rows, int in,
                      const uint16_t *w, const float *bias, int out, float *y, int accumulate);
/* The kernel in use: "avx512", "avx2" or "scalar". */
const char *wkv__gemv_f16_kernel(void);

#endif
