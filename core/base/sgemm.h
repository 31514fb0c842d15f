/* The f32 matrix products (the f32 encoder, every prompt pass, word alignment, VAD)
 * on the library that runs them fastest on this CPU, chosen once per process with no
 * environment variable (sgemm.c says how and why).  Row-major, A never transposed:
 * the shapes the core uses. */
#ifndef WKV_SGEMM_H
#define WKV_SGEMM_H

typedef enum {
    WKV_GEMM_OPENBLAS = 0, /* cblas_sgemm / cblas_sgemv */
    WKV_GEMM_ONEDNN = 1,   /* dnnl_sgemm (only in builds with oneDNN) */
} wkv__gemm_lib;

/* c (m x n, row stride ldc) = alpha a (m x k, stride lda) . op(b) + beta c, where
 * op(b) is b (k x n, stride ldb) or, with trans_b, b^T (b: n x k, stride ldb).  On the
 * calling thread only: the contexts' pools split the work (blas.h). */
void wkv__sgemm(int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc);
/* y (m) = alpha w (m x n, stride ldw) . x (n) + beta y: one row of wkv__sgemm. */
void wkv__sgemv(int m, int n, float alpha, const float *w, int ldw, const float *x, float beta,
               float *y);
/* The same on a named library, for tests and the bench (WKV_GEMM_ONEDNN without
 * oneDNN runs OpenBLAS). */
void wkv__sgemm_lib(wkv__gemm_lib lib, int trans_b, int m, int n, int k, float alpha,
                   const float *a, int lda, const float *b, int ldb, float beta, float *c,
                   int ldc);

/* The library wkv__sgemm runs: chosen at the first call, fixed for the process. */
wkv__gemm_lib wkv__gemm_chosen(void);

/* The choice itself, a pure function for tests: OpenBLAS's kernel set (its corename),
 * oneDNN's ISA level (wkv__isa_level scale; -1: no oneDNN), and an override (NULL,
 * "openblas" or "onednn"; anything else is ignored). */
wkv__gemm_lib wkv__gemm_pick(const char *openblas_core, int onednn_level, const char *override);

/* ISA levels both libraries are ranked on: 0 SSE, 1 AVX, 2 AVX2, 3 AVX-512.  OpenBLAS's
 * by its kernel set's name; oneDNN's by the ISA it runs on this CPU (-1 when the build
 * has no oneDNN). */
int wkv__openblas_core_level(const char *corename);
int wkv__onednn_level(void);

#endif
