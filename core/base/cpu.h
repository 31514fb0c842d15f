/* What this CPU runs: the instruction-set level the hand-written kernels pick (detected
 * once, with the OS's register saving checked), and how functions are built for
 * several levels at once. */
#ifndef WKV_CPU_H
#define WKV_CPU_H

/* Functions built for AVX-512, AVX2 and the baseline, picked at load time by an ifunc
 * resolver.  Baseline only under ThreadSanitizer (its runtime is not up yet when
 * resolvers run) and with clang before 16 (it names the ifunc "f.ifunc", leaving calls
 * from other files to "f" undefined). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WKV_NO_CLONES 1
#endif
#endif
#if defined(__clang__) && __clang_major__ < 16
#define WKV_NO_CLONES 1
#endif
#if defined(__SANITIZE_THREAD__) || defined(WKV_NO_CLONES)
#define WKV_CLONES
#else
#define WKV_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

/* The best kernel set this CPU and OS support (detected once), shared by the f16 and
 * quantized kernels and the f16 conversions. */
enum { WKV_ISA_SCALAR, WKV_ISA_AVX2, WKV_ISA_AVX512, WKV_ISA_AVX512_BF16 };
int wkv__gemv_isa(void);
/* WKV_ISA_AVX512_BF16 when the CPU also converts f32 to bf16 itself (AVX512_BF16's
 * vcvtneps2bf16: ops.c's and compute.c's roundings), else wkv__gemv_isa(); the gemv
 * kernels never use it. */
int wkv__bf16_isa(void);
/* Whether the CPU has VNNI's int8 dot product (AVX512_VNNI or AVX-VNNI; detected with
 * the level above).  Without it oneDNN's int8 kernels use vpmaddubsw, whose 16-bit
 * pair sums can saturate; compute.c refuses int8 there. */
int wkv__cpu_vnni(void);

#endif
