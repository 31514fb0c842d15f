/* Linked into whisperkv's executables (CLI, bench, tests), not into the library:
 * OpenBLAS reads OPENBLAS_CORETYPE in its constructor, before any constructor of
 * ours, but an executable's .preinit_array runs before every shared library's.  On
 * an AMD CPU with AVX-512 (Zen 4/5, unknown to OpenBLAS 0.3.21, which then falls
 * back to its AVX2 kernels) and no OPENBLAS_CORETYPE set by the user, select the
 * SkylakeX (AVX-512) kernels: sgemm twice as fast.  Runs before libc's own set-up,
 * so it uses cpuid directly and nothing but getenv/setenv. */
#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <string.h>

static int amd_with_avx512(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    if (strcmp(vendor, "AuthenticAMD") != 0)
        return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
        return 0;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0xe6) != 0xe6)
        return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return 0;
    const unsigned need = bit_AVX512F | bit_AVX512CD | bit_AVX512DQ | bit_AVX512BW |
                          bit_AVX512VL;
    return (b & need) == need;
}

static void wkv_blas_preinit(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    if (!getenv("OPENBLAS_CORETYPE") && !getenv("WHISPERKV_KEEP_BLAS_CORE") &&
        amd_with_avx512())
        setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 0);
}

__attribute__((section(".preinit_array"), used))
static void (*const wkv_blas_preinit_entry)(int, char **, char **) = wkv_blas_preinit;
#endif
