/* oneDNN's own matmul peak per compute type (f32, bf16, s8 x s8 -> s32) on 2048^3 with
 * `threads` OpenMP threads and the weights reordered once into the layout the kernel
 * prefers: the roofline each compute type's encoder is measured against, as OpenBLAS's
 * sgemm is for f32.  Runs in the bench's roofline child, so its buffers and OpenMP
 * team do not touch the measured process. */
#include "dnnl_peak.h"

#include <stdlib.h>
#include <string.h>

#ifndef WKV_BENCH_DNNL

int dnnl_peak_times(wkv_compute_type type, int threads, int reps, double (*now_ms)(void),
                    double *ms)
{
    (void)type, (void)threads, (void)reps, (void)now_ms, (void)ms;
    return -1;
}

int dnnl_sgemm_times(int m, int n, int k, int reps, double (*now_ms)(void), double *ms)
{
    (void)m, (void)n, (void)k, (void)reps, (void)now_ms, (void)ms;
    return -1;
}

#else

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

int dnnl_sgemm_times(int m, int n, int k, int reps, double (*now_ms)(void), double *ms)
{
    float *a = malloc(sizeof(float) * (size_t)m * k), *b = malloc(sizeof(float) * (size_t)n * k);
    float *c = malloc(sizeof(float) * (size_t)m * n);
    int rc = a && b && c ? 0 : -1;
    omp_set_num_threads(1);
    for (size_t i = 0; rc == 0 && i < (size_t)m * k; i++)
        a[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; rc == 0 && i < (size_t)n * k; i++)
        b[i] = (float)(i % 5) * 0.1f;
    for (int r = -1; rc == 0 && r < reps; r++) {
        double t0 = now_ms();
        if (dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, k, b, k, 0.0f, c, n) != dnnl_success)
            rc = -1;
        else if (r >= 0)
            ms[r] = now_ms() - t0;
    }
    free(a);
    free(b);
    free(c);
    return rc;
}

int dnnl_peak_times(wkv_compute_type type, int threads, int reps, double (*now_ms)(void),
                    double *ms)
{
    const dnnl_dim_t n = DNNL_PEAK_N;
    const int i8 = type == WKV_COMPUTE_INT8, bf = type == WKV_COMPUTE_BF16;
    const dnnl_data_type_t in_t = i8 ? dnnl_s8 : bf ? dnnl_bf16 : dnnl_f32;
    const dnnl_data_type_t out_t = i8 ? dnnl_s32 : dnnl_f32;
    const size_t in_b = i8 ? 1 : bf ? 2 : 4;
    omp_set_num_threads(threads);
    dnnl_engine_t eng = NULL;
    dnnl_stream_t st = NULL;
    dnnl_primitive_desc_t pd = NULL, rpd = NULL;
    dnnl_primitive_t mm = NULL, re = NULL;
    dnnl_memory_t src = NULL, wplain = NULL, wbest = NULL, dst = NULL;
    dnnl_memory_desc_t src_md, wany_md, wplain_md, dst_md;
    dnnl_matmul_desc_t desc;
    dnnl_dims_t d = {n, n};
    void *a = calloc((size_t)(n * n), in_b), *b = calloc((size_t)(n * n), in_b);
    void *c = calloc((size_t)(n * n), 4);
    /* small non-zero values: a denormal-free, overflow-free product */
    for (size_t i = 0; a && b && i < (size_t)(n * n); i++) {
        if (i8) {
            ((int8_t *)a)[i] = (int8_t)(i % 7);
            ((int8_t *)b)[i] = (int8_t)(i % 5);
        } else if (bf) {
            ((uint16_t *)a)[i] = 0x3dcd; /* 0.1 */
            ((uint16_t *)b)[i] = 0x3e4d; /* 0.2 */
        } else {
            ((float *)a)[i] = 0.1f;
            ((float *)b)[i] = 0.2f;
        }
    }
    int ok = a && b && c &&
             dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success &&
             dnnl_stream_create(&st, eng, dnnl_stream_default_flags) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&src_md, 2, d, in_t, dnnl_ab) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&wany_md, 2, d, in_t, dnnl_format_tag_any) ==
                 dnnl_success &&
             dnnl_memory_desc_init_by_tag(&wplain_md, 2, d, in_t, dnnl_ab) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&dst_md, 2, d, out_t, dnnl_ab) == dnnl_success &&
             dnnl_matmul_desc_init(&desc, &src_md, &wany_md, NULL, &dst_md) == dnnl_success &&
             dnnl_primitive_desc_create(&pd, &desc, NULL, eng, NULL) == dnnl_success &&
             dnnl_primitive_create(&mm, pd) == dnnl_success;
    const dnnl_memory_desc_t *wbest_md =
        ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0) : NULL;
    ok = ok && wbest_md &&
         dnnl_memory_create(&src, &src_md, eng, a) == dnnl_success &&
         dnnl_memory_create(&wplain, &wplain_md, eng, b) == dnnl_success &&
         dnnl_memory_create(&wbest, wbest_md, eng, DNNL_MEMORY_ALLOCATE) == dnnl_success &&
         dnnl_memory_create(&dst, &dst_md, eng, c) == dnnl_success &&
         dnnl_reorder_primitive_desc_create(&rpd, &wplain_md, eng, wbest_md, eng, NULL) ==
             dnnl_success &&
         dnnl_primitive_create(&re, rpd) == dnnl_success;
    if (ok) {
        dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, wplain}, {DNNL_ARG_TO, wbest}};
        ok = dnnl_primitive_execute(re, st, 2, rargs) == dnnl_success &&
             dnnl_stream_wait(st) == dnnl_success;
    }
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wbest}, {DNNL_ARG_DST, dst}};
    for (int k = -1; ok && k < reps; k++) { /* one warm-up: the JIT kernel */
        double t0 = now_ms();
        ok = dnnl_primitive_execute(mm, st, 3, args) == dnnl_success &&
             dnnl_stream_wait(st) == dnnl_success;
        if (k >= 0)
            ms[k] = now_ms() - t0;
    }
    dnnl_memory_t mems[] = {src, wplain, wbest, dst};
    for (int i = 0; i < 4; i++)
        if (mems[i])
            dnnl_memory_destroy(mems[i]);
    if (re)
        dnnl_primitive_destroy(re);
    if (mm)
        dnnl_primitive_destroy(mm);
    if (rpd)
        dnnl_primitive_desc_destroy(rpd);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (st)
        dnnl_stream_destroy(st);
    if (eng)
        dnnl_engine_destroy(eng);
    free(a);
    free(b);
    free(c);
    return ok ? 0 : -1;
}

#endif
