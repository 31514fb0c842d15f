/* Matrix-vector products on f16 weights (the decoder's per-token matrices), with
 * AVX-512 / AVX2+F16C kernels chosen at run time and a portable fallback. */
#ifndef WKV_GEMV_F16_H
#define WKV_GEMV_F16_H

#include "pool.h"

#include <stddef.h>
#include <stdint.h>

/* y[r][j] (+)= bias[j] + sum_k x[r][k] * W[j][k] for r < rows, j < out; W is out x in,
 * row-major, IEEE half.  Any rows (taken 8 at a time), any in.  bias may be NULL;
 * accumulate: add to y instead of overwriting it.  Output rows are split over the
 * pool's threads (pool may be NULL). */
void wkv_gemv_f16(wkv_pool *pool, const float *x, int rows, int in, const uint16_t *w,
                  const float *bias, int out, float *y, int accumulate);
/* n halves to floats (exact). */
void wkv_f16_to_f32_row(const uint16_t *src, float *dst, size_t n);
/* n floats to halves, round to nearest even. */
void wkv_f32_to_f16_row(const float *src, uint16_t *dst, size_t n);
/* The kernel in use: "avx512", "avx2" or "scalar". */
const char *wkv_gemv_f16_isa(void);
/* The best kernel set this CPU and OS support (detected once), shared by the f16 and
 * quantized kernels (gemv_q.c). */
enum { WKV_ISA_SCALAR, WKV_ISA_AVX2, WKV_ISA_AVX512, WKV_ISA_AVX512_BF16 };
int wkv_gemv_isa(void);
/* WKV_ISA_AVX512_BF16 when the CPU also converts f32 to bf16 itself (AVX512_BF16's
 * vcvtneps2bf16: ops.c's and compute.c's roundings), else wkv_gemv_isa(); the gemv
 * kernels never use it. */
int wkv_bf16_isa(void);

#endif
