/* whisperkv's knobs for tests, benchmarks and diagnostics, apart from the API
 * (whisperkv.h): the decoder's slow paths, the greedy search's per-step margins and
 * what OpenBLAS chose on this CPU.  Exported like the API, but with no promise to
 * stay: they follow what the tests and the benchmark need. */
#ifndef WHISPERKV_DEBUG_H
#define WHISPERKV_DEBUG_H

#include "whisperkv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- decoder */

/* How wkv_decode_mode computes: the normal cached path (wkv_decode's), or the slow
 * paths kept to check it and to measure what the caches save. */
typedef enum {
    WKV_CACHE_FULL = 0,       /* self-KV cache + cross-KV cache */
    WKV_CACHE_NO_CROSS = 1,   /* self-KV cache, cross K/V recomputed every pass */
    WKV_CACHE_NONE = 2,       /* the whole sequence recomputed every pass */
} wkv_cache_mode;

/* wkv_decode in the given mode.  In WKV_CACHE_NONE mode the whole sequence so far is
 * recomputed.  Returns 0, or -1 when the sequence would exceed n_text_ctx. */
WKV_API int wkv_decode_mode(wkv_context *ctx, const int *tokens, int n, wkv_cache_mode mode,
                            float *logits);

/* Per step of the last greedy wkv_decode_window on this context (sampled tokens, plus
 * eot if met): the gap between the two best filtered logits, i.e. how close the
 * choice was.  *n gets the number of steps (0 after a beam search or sampling, whose
 * steps have no single choice).  Valid until the context decodes another window. */
WKV_API const float *wkv_context_step_margins(const wkv_context *ctx, int *n);

/* ---------------------------------------------------------------- BLAS */

/* The core runs OpenBLAS single-threaded (wkv_context_new sets its process-wide
 * thread count to 1), and oneDNN on one OpenMP thread per call, and splits matrix
 * products over each context's own threads, so every context uses exactly the
 * threads it was created with.  Which of the two runs the f32 products:
 * wkv_f32_gemm_library (whisperkv.h). */

/* The kernel set OpenBLAS chose at load ("Haswell", "SkylakeX", ...; "cblas" when
 * built against another CBLAS). */
WKV_API const char *wkv_blas_corename(void);
/* 1 when this CPU (and OS) support AVX-512 F/CD/DQ/BW/VL. */
WKV_API int wkv_cpu_has_avx512(void);
/* 1 when the CPU has AVX-512 but OpenBLAS runs kernels without it (its detection
 * missed the CPU, or OPENBLAS_CORETYPE chose older ones): its sgemm is then 2 - 5x
 * slower, which matters where OpenBLAS runs the f32 products (wkv_f32_gemm_slow).
 * OpenBLAS reads OPENBLAS_CORETYPE (e.g. SKYLAKEX) when it is loaded, so only the
 * environment the program starts with can change it. */
WKV_API int wkv_blas_misses_avx512(void);

/* ---------------------------------------------------------------- allocation */

/* Allocation-failure injection for tests (docs/reliability.md, "Allocation failure"):
 * after wkv_debug_alloc_fail(n), the n-th allocation of the core from then on fails
 * (returns NULL) and the others succeed; 0 turns it off.  Counted over the whole
 * process, every thread.  wkv_debug_alloc_count: the core's allocations since the
 * call; wkv_debug_alloc_failed: 1 once the n-th has failed. */
WKV_API void wkv_debug_alloc_fail(long n);
WKV_API long wkv_debug_alloc_count(void);
WKV_API int wkv_debug_alloc_failed(void);
/* For allocators outside the core that are to be failed in the same count (the
 * GStreamer element's, gst-plugin/gstwhisperalloc.c): counts one allocation and
 * returns 1 when it is the one wkv_debug_alloc_fail chose, which the caller then
 * fails; 0 otherwise (always 0 when disarmed). */
WKV_API int wkv_debug_alloc_fails(void);

/* ---------------------------------------------------------------- drafts */

/* Live runs check the previous run's tokens as a draft in one decoder pass (greedy
 * only; whisperkv.h, wkv_stats.draft_tokens): on by default; 0 makes every greedy
 * search step token by token, for comparisons (the tokens are the same). */
WKV_API void wkv_debug_set_drafts(wkv_context *ctx, int on);

#ifdef __cplusplus
}
#endif
#endif
