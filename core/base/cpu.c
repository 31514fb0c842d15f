/* CPU detection (cpu.h): the instruction-set level for the hand-written kernels. */
#include "base/cpu.h"

#include <pthread.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WKV_X86 1
#include <cpuid.h>
#endif

#define ISA_SCALAR WKV_ISA_SCALAR
#define ISA_AVX2 WKV_ISA_AVX2
#define ISA_AVX512 WKV_ISA_AVX512

#ifdef WKV_X86
/* cpuid directly (clang 14's __builtin_cpu_supports does not know "f16c"), checking
 * that the OS saves the AVX / AVX-512 registers too. */
static int isa_detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return ISA_SCALAR;
    const unsigned need1 = bit_FMA | bit_F16C | bit_OSXSAVE | bit_AVX;
    if ((c & need1) != need1)
        return ISA_SCALAR;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0x6) != 0x6 || !__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX2))
        return ISA_SCALAR;
    if (!(b & bit_AVX512F) || (lo & 0xe0) != 0xe0)
        return ISA_AVX2;
    /* leaf 7 subleaf 1, EAX bit 5: AVX512_BF16 */
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)))
        return WKV_ISA_AVX512_BF16;
    return ISA_AVX512;
}

/* Detected once: cpuid is slow (a VM exit under a hypervisor) and a step calls the
 * kernels a hundred times.  Written once under pthread_once, constant afterwards. */
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;
static int isa_value, vnni_value;

/* AVX512_VNNI (leaf 7.0, ECX bit 11; AVX-512 level, so the ZMM state is saved) or
 * AVX-VNNI (leaf 7.1, EAX bit 4; AVX2 level at least) */
static int vnni_detect(int level)
{
    unsigned a, b, c, d;
    if (level >= ISA_AVX512 && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 11)))
        return 1;
    return level >= ISA_AVX2 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4));
}

static void isa_init(void)
{
    isa_value = isa_detect();
    vnni_value = vnni_detect(isa_value);
}
#endif

/* the detected level, AVX512_BF16 included */
static int isa_full(void)
{
#ifdef WKV_X86
    pthread_once(&isa_once, isa_init);
    return isa_value;
#else
    return ISA_SCALAR;
#endif
}

static int isa(void)
{
    const int v = isa_full();
    return v > ISA_AVX512 ? ISA_AVX512 : v;
}

int wkv__cpu_vnni(void)
{
#ifdef WKV_X86
    pthread_once(&isa_once, isa_init);
    return vnni_value;
#else
    return 0;
#endif
}

int wkv__bf16_isa(void)
{
    return isa_full();
}

int wkv__gemv_isa(void)
{
    return isa();
}
