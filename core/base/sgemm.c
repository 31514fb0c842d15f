/* The f32 matrix products on OpenBLAS or oneDNN, whichever runs this CPU's best
 * kernels.
 *
 * Why a choice: OpenBLAS picks its kernels once, when it is loaded, from the CPU's
 * model number, and Debian's 0.3.21 does not know recent ones: on an Intel Xeon of
 * family 6 model 207 (AVX-512 with BF16/VNNI/FP16) it runs its Prescott (SSE3) kernels,
 * 5x slower than its SkylakeX ones, and only OPENBLAS_CORETYPE, read before main(),
 * changes that.  oneDNN picks by the CPU's feature bits, so it finds AVX-512 on any
 * CPU that has it; its sgemm was also 1.05 - 1.3x faster than OpenBLAS's SkylakeX
 * kernels on every shape the encoder runs (one thread, that CPU; docs/performance.md).
 * So: oneDNN whenever the build has it and its kernels are not of an older ISA than
 * OpenBLAS's, else OpenBLAS.  The choice is made once per process (pthread_once) and
 * is constant afterwards, so every product of a process, and so its results, come
 * from one library.  WHISPERKV_GEMM=openblas|onednn overrides it (diagnostics, and the
 * tests that run the reference vectors through OpenBLAS too).
 *
 * Threads: a product runs on its calling thread, a pool part (blas.h).  oneDNN under
 * OpenMP runs omp_get_max_threads() threads of the caller, so that is set to one
 * around each call and given back after, leaving the caller's own OpenMP setting as it
 * was. */
#include "base/sgemm.h"
#include "base/cpu.h"
#include "whisperkv_debug.h"

#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#ifdef WKV_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>
#endif

/* declared by OpenBLAS's cblas.h, but not by every CBLAS */
char *openblas_get_corename(void);

int wkv__openblas_core_level(const char *name)
{
    static const struct {
        const char *core;
        int level;
    } table[] = {
        {"SkylakeX", 3}, {"Cooperlake", 3}, {"SapphireRapids", 3},
        {"Haswell", 2}, {"Zen", 2},
        {"Sandybridge", 1}, {"Bulldozer", 1}, {"Piledriver", 1}, {"Steamroller", 1},
        {"Excavator", 1},
    };
    for (size_t i = 0; name && i < sizeof table / sizeof *table; i++)
        if (!strcasecmp(name, table[i].core))
            return table[i].level;
    return 0; /* Prescott, Nehalem, Core2, ... or unknown: SSE */
}

wkv__gemm_lib wkv__gemm_pick(const char *openblas_core, int onednn_level, const char *override)
{
    if (override && !strcasecmp(override, "openblas"))
        return WKV_GEMM_OPENBLAS;
    if (onednn_level < 0)
        return WKV_GEMM_OPENBLAS;
    if (override && !strcasecmp(override, "onednn"))
        return WKV_GEMM_ONEDNN;
    return onednn_level >= wkv__openblas_core_level(openblas_core) ? WKV_GEMM_ONEDNN
                                                                   : WKV_GEMM_OPENBLAS;
}

#ifdef WKV_HAVE_DNNL
/* oneDNN's ISA on the same scale.  Its values are bit sets: each level's bits contain
 * the one below (avx2_vnni is avx2 plus a bit, avx512_mic is not avx512_core). */
int wkv__onednn_level(void)
{
    const unsigned isa = (unsigned)dnnl_get_effective_cpu_isa();
    if ((isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core)
        return 3;
    if ((isa & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2)
        return 2;
    if ((isa & dnnl_cpu_isa_avx) == dnnl_cpu_isa_avx)
        return 1;
    return 0;
}
#else
int wkv__onednn_level(void)
{
    return -1;
}
#endif

static const char *openblas_core(void)
{
#ifdef WKV_HAVE_OPENBLAS
    return openblas_get_corename();
#else
    return NULL;
#endif
}

static pthread_once_t choice_once = PTHREAD_ONCE_INIT;
static wkv__gemm_lib choice; /* written once under choice_once, constant afterwards */

static void choose(void)
{
    choice = wkv__gemm_pick(openblas_core(), wkv__onednn_level(), getenv("WHISPERKV_GEMM"));
}

wkv__gemm_lib wkv__gemm_chosen(void)
{
    pthread_once(&choice_once, choose);
    return choice;
}

void wkv__sgemm_lib(wkv__gemm_lib lib, int trans_b, int m, int n, int k, float alpha,
                   const float *a, int lda, const float *b, int ldb, float beta, float *c,
                   int ldc)
{
#ifdef WKV_HAVE_DNNL
    if (lib == WKV_GEMM_ONEDNN) {
        const int prev = omp_get_max_threads();
        if (prev != 1)
            omp_set_num_threads(1);
        dnnl_status_t st = dnnl_sgemm('N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb,
                                      beta, c, ldc);
        if (prev != 1)
            omp_set_num_threads(prev);
        if (st == dnnl_success)
            return;
        /* only invalid arguments fail, which OpenBLAS would reject too: it reports */
    }
#else
    (void)lib;
#endif
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k,
                alpha, a, lda, b, ldb, beta, c, ldc);
}

void wkv__sgemm(int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc)
{
    wkv__sgemm_lib(wkv__gemm_chosen(), trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void wkv__sgemv(int m, int n, float alpha, const float *w, int ldw, const float *x, float beta,
               float *y)
{
    /* oneDNN has no gemv: a one-row product with w transposed, 1.1 - 5x faster than
     * OpenBLAS's Prescott sgemv on the decoder's shapes; on OpenBLAS its own sgemv */
    if (wkv__gemm_chosen() == WKV_GEMM_ONEDNN)
        wkv__sgemm_lib(WKV_GEMM_ONEDNN, 1, 1, m, n, alpha, x, n, w, ldw, beta, y, m);
    else
        cblas_sgemv(CblasRowMajor, CblasNoTrans, m, n, alpha, w, ldw, x, 1, beta, y, 1);
}

/* ---------------------------------------------------------------- what ran */

const char *wkv_f32_gemm_library(void)
{
    if (wkv__gemm_chosen() == WKV_GEMM_ONEDNN)
        return "oneDNN";
#ifdef WKV_HAVE_OPENBLAS
    return "OpenBLAS";
#else
    return "CBLAS";
#endif
}

#ifdef WKV_HAVE_DNNL
static const char *onednn_isa_name(void)
{
    static const struct {
        dnnl_cpu_isa_t isa;
        const char *name;
    } names[] = {
        {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"},
        {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
        {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
        {dnnl_cpu_isa_avx512_core, "avx512_core"},
        {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
        {dnnl_cpu_isa_avx2, "avx2"},
        {dnnl_cpu_isa_avx, "avx"},
        {dnnl_cpu_isa_sse41, "sse41"},
    };
    const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (isa == names[i].isa)
            return names[i].name;
    return "unknown";
}
#endif

const char *wkv_f32_gemm_kernels(void)
{
#ifdef WKV_HAVE_DNNL
    if (wkv__gemm_chosen() == WKV_GEMM_ONEDNN)
        return onednn_isa_name();
#endif
    const char *core = openblas_core();
    return core ? core : "unknown";
}

/* The CPU's own level on that scale (AVX alone counts as SSE: no kernel set here
 * needs telling apart from it). */
static int cpu_level(void)
{
    if (wkv_cpu_has_avx512())
        return 3;
    return wkv__gemv_isa() >= WKV_ISA_AVX2 ? 2 : 0;
}

int wkv_f32_gemm_slow(void)
{
    /* the chosen library runs kernels of an older ISA than the CPU has */
    if (wkv__gemm_chosen() == WKV_GEMM_ONEDNN)
        return 0;
#ifdef WKV_HAVE_OPENBLAS
    return wkv__openblas_core_level(openblas_core()) < cpu_level();
#else
    return 0;
#endif
}
