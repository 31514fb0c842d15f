/* oneDNN's matmul peak per compute type (bench only; dnnl_peak.c). */
#ifndef WKV_BENCH_DNNL_PEAK_H
#define WKV_BENCH_DNNL_PEAK_H

#include "whisperkv.h"

/* GFLOP/s (ops: 2 n^3) of a 2048^3 oneDNN matmul of `type` (F32, BF16, INT8) on
 * `threads` OpenMP threads, median of `reps` runs; NAN without oneDNN or on error.
 * Sets the calling process's OpenMP thread count: call it in a child process. */
double dnnl_peak_gflops(wkv_compute_type type, int threads, int reps);

#endif
