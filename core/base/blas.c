/* OpenBLAS configuration.
 *
 * Threads: OpenBLAS has one process-wide thread count.  If it ran its own threads
 * under ours, two elements with threads=2 would start 2 x (2 + OpenBLAS's count)
 * busy threads, and OpenBLAS's workers spin (sched_yield) for a while after each
 * call, stealing the cores our pool needs for the loops between products.  So the
 * core sets OpenBLAS to one thread and splits every product over its pool.
 *
 * Kernels: OpenBLAS picks them once, when it is loaded, from the CPU's model number or
 * from OPENBLAS_CORETYPE.  Its AVX2 (Haswell) kernels run sgemm at half the speed of
 * its AVX-512 ones (SkylakeX, Cooperlake) on a CPU that has AVX-512, its SSE3
 * (Prescott) ones, which it runs on models it does not know, at a fifth; so the f32
 * products go to oneDNN where the build has it (sgemm.c), and wkv_blas_misses_avx512
 * says what OpenBLAS itself chose. */
#include "base/blas.h"
#include "whisperkv_debug.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#ifdef WKV_HAVE_OPENBLAS
#include <string.h>

void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
char *openblas_get_corename(void);
#endif

void wkv__blas_single_threaded(void)
{
#ifdef WKV_HAVE_OPENBLAS
    if (openblas_get_num_threads() != 1)
        openblas_set_num_threads(1);
#endif
}

const char *wkv_blas_corename(void)
{
#ifdef WKV_HAVE_OPENBLAS
    const char *name = openblas_get_corename();
    return name ? name : "unknown";
#else
    return "cblas";
#endif
}

int wkv_cpu_has_avx512(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return 0;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0xe6) != 0xe6) /* the OS saves the SSE, AVX and AVX-512 state */
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    /* what OpenBLAS's SkylakeX kernels use: F, CD, DQ, BW, VL */
    const unsigned need = bit_AVX512F | bit_AVX512CD | bit_AVX512DQ | bit_AVX512BW |
                          bit_AVX512VL;
    return (b & need) == need;
#else
    return 0;
#endif
}

int wkv_blas_misses_avx512(void)
{
#ifdef WKV_HAVE_OPENBLAS
    if (!wkv_cpu_has_avx512())
        return 0;
    const char *name = wkv_blas_corename();
    static const char *const avx512[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
    for (size_t i = 0; i < sizeof avx512 / sizeof *avx512; i++)
        if (strcmp(name, avx512[i]) == 0)
            return 0;
    return 1;
#else
    return 0;
#endif
}
