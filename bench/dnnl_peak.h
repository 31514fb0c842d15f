/* oneDNN's matmul peak per compute type (bench only; dnnl_peak.c). */
#ifndef WKV_BENCH_DNNL_PEAK_H
#define WKV_BENCH_DNNL_PEAK_H

#include "whisperkv.h"

#define DNNL_PEAK_N 2048

/* Times in ms[0 .. reps) (by now_ms) of a DNNL_PEAK_N^3 oneDNN matmul of `type` (F32,
 * BF16, INT8) on `threads` OpenMP threads, after one warm-up run.  Returns 0, or -1
 * without oneDNN or on error.  Sets the process's OpenMP thread count: call it in a
 * child process. */
int dnnl_peak_times(wkv_compute_type type, int threads, int reps, double (*now_ms)(void),
                    double *ms);

/* Times in ms[0 .. reps) of one single-threaded dnnl_sgemm of m x n x k, A . B^T (the
 * shape of one pool part's linear layer), after one warm-up; -1 without oneDNN. */
int dnnl_sgemm_times(int m, int n, int k, int reps, double (*now_ms)(void), double *ms);

#endif
