/* sgemm: the f32 products' library (core/base/sgemm.c).
 *  - the choice: oneDNN whenever the build has it and its ISA is not older than
 *    OpenBLAS's kernels, the override, and that this process made it so (with oneDNN
 *    built in, the f32 products never run kernels older than the CPU's);
 *  - both libraries' products against a double-precision sum on the shapes the core
 *    runs (the encoder's parts, attention both ways, single rows, accumulation,
 *    strides wider than the rows);
 *  - oneDNN on the caller's thread: the caller's OpenMP thread count is given back,
 *    and two threads multiply at once. */
#include "base/sgemm.h"
#include "testutil.h"
#include "whisperkv_debug.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WKV_HAVE_DNNL
#include <omp.h>
#endif

static void check_pick(void)
{
    static const struct {
        const char *core;
        int dnnl;
        const char *override;
        wkv__gemm_lib want;
    } cases[] = {
        /* the case that motivated it: OpenBLAS's SSE3 kernels on an AVX-512 CPU */
        {"Prescott", 3, NULL, WKV_GEMM_ONEDNN},
        /* oneDNN measured faster than OpenBLAS's own AVX-512 kernels too */
        {"SkylakeX", 3, NULL, WKV_GEMM_ONEDNN},
        {"COOPERLAKE", 3, NULL, WKV_GEMM_ONEDNN},
        {"Haswell", 2, NULL, WKV_GEMM_ONEDNN},
        {"Zen", 2, NULL, WKV_GEMM_ONEDNN},
        /* OpenBLAS newer than oneDNN's kernels (oneDNN capped, say) */
        {"SkylakeX", 2, NULL, WKV_GEMM_OPENBLAS},
        {"Haswell", 1, NULL, WKV_GEMM_OPENBLAS},
        {"Sandybridge", 0, NULL, WKV_GEMM_OPENBLAS},
        /* no oneDNN in the build */
        {"Prescott", -1, NULL, WKV_GEMM_OPENBLAS},
        {NULL, -1, NULL, WKV_GEMM_OPENBLAS},
        /* the override, and what it cannot do */
        {"Prescott", 3, "openblas", WKV_GEMM_OPENBLAS},
        {"SkylakeX", 1, "oneDNN", WKV_GEMM_ONEDNN},
        {"Prescott", -1, "onednn", WKV_GEMM_OPENBLAS},
        {"Prescott", 3, "mkl", WKV_GEMM_ONEDNN},
        {"SkylakeX", 2, "", WKV_GEMM_OPENBLAS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wkv__gemm_lib got = wkv__gemm_pick(cases[i].core, cases[i].dnnl, cases[i].override);
        CHECK(got == cases[i].want, "pick(%s, %d, %s) = %d, want %d",
              cases[i].core ? cases[i].core : "NULL", cases[i].dnnl,
              cases[i].override ? cases[i].override : "NULL", (int)got, (int)cases[i].want);
    }
    static const struct {
        const char *core;
        int level;
    } levels[] = {{"SkylakeX", 3}, {"SapphireRapids", 3}, {"Haswell", 2}, {"ZEN", 2},
                  {"Sandybridge", 1}, {"Prescott", 0}, {"Nehalem", 0}, {"Core2", 0},
                  {"unknown", 0}, {NULL, 0}};
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        CHECK(wkv__openblas_core_level(levels[i].core) == levels[i].level, "level of %s: %d",
              levels[i].core ? levels[i].core : "NULL", wkv__openblas_core_level(levels[i].core));
}

/* The CPU's level on wkv__openblas_core_level's scale, from its own feature bits (an
 * emulated CPU's under qemu-user). */
static int cpu_level(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    if (wkv_cpu_has_avx512()) /* what OpenBLAS's SkylakeX kernels use */
        return 3;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return 2;
    if (__builtin_cpu_supports("avx"))
        return 1;
    return 0;
#else
    return 3; /* not x86: OpenBLAS's names above do not apply */
#endif
}

/* OpenBLAS's kernels are ones this CPU runs.  OpenBLAS reads OPENBLAS_CORETYPE before
 * main(); a host that sets it (some do, for older OpenBLAS builds that misdetect their
 * CPUs) hands its choice to every process it starts, an emulated CPU's too, which then
 * dies of SIGILL at its first product.  Checked first, so that such a run says why. */
static void check_kernels_fit_cpu(void)
{
    const char *core = wkv_blas_corename();
    const int need = wkv__openblas_core_level(core), have = cpu_level();
    const char *env = getenv("OPENBLAS_CORETYPE");
    printf("OpenBLAS's kernels: %s (level %d), on a CPU of level %d; OPENBLAS_CORETYPE=%s\n",
           core, need, have, env ? env : "(unset)");
    if (need > have) {
        CHECK(0, "OpenBLAS runs its %s kernels (level %d) on a CPU of level %d: "
              "OPENBLAS_CORETYPE=%s chose them for another CPU", core, need, have,
              env ? env : "(unset)");
        exit(tu_finish("sgemm"));
    }
}

/* What this process chose, against the rule on this machine's facts. */
static void check_chosen(void)
{
    const char *override = getenv("WHISPERKV_GEMM");
    const wkv__gemm_lib want = wkv__gemm_pick(wkv_blas_corename(), wkv__onednn_level(), override);
    CHECK(wkv__gemm_chosen() == want, "chose %d, the rule says %d", (int)wkv__gemm_chosen(),
          (int)want);
    const char *lib = wkv_f32_gemm_library(), *kern = wkv_f32_gemm_kernels();
    CHECK(!strcmp(lib, want == WKV_GEMM_ONEDNN ? "oneDNN" : "OpenBLAS") ||
              (want == WKV_GEMM_OPENBLAS && !strcmp(lib, "CBLAS")),
          "library %s", lib);
    CHECK(kern && *kern && strcmp(kern, "unknown"), "kernels '%s'", kern ? kern : "NULL");
#ifdef WKV_HAVE_DNNL
    /* the point of the choice: with oneDNN built in and no override, the f32 products
     * run kernels of the CPU's own ISA whatever OpenBLAS picked */
    if (!override)
        CHECK(!wkv_f32_gemm_slow(), "f32 products on %s %s, older than the CPU", lib, kern);
#endif
    printf("f32 products: %s (%s); OpenBLAS's kernels %s, oneDNN's level %d\n", lib, kern,
           wkv_blas_corename(), wkv__onednn_level());
}

static float rnd(uint32_t *rng)
{
    *rng = *rng * 1664525u + 1013904223u;
    return (float)(*rng >> 8) / 16777216.0f - 0.5f;
}

typedef struct {
    int trans_b, m, n, k;
    float alpha, beta;
    int pad; /* extra columns in every stride */
} shape;

/* The row checked after row i of m: i + step, the last row, then m (done). */
static int next_row(int i, int m, int step)
{
    return i == m - 1 ? m : i + step < m ? i + step : m - 1;
}

/* c = alpha a op(b) + beta c0 in double; max |got - want| / (max |want| + 1). */
static double product_err(wkv__gemm_lib lib, const shape *s)
{
    uint32_t rng = (uint32_t)(s->m * 7919 + s->n * 104729 + s->k);
    const int lda = s->k + s->pad, ldb = (s->trans_b ? s->k : s->n) + s->pad,
              ldc = s->n + s->pad, brows = s->trans_b ? s->n : s->k;
    float *a = malloc(sizeof(float) * (size_t)s->m * lda);
    float *b = malloc(sizeof(float) * (size_t)brows * ldb);
    float *c = malloc(sizeof(float) * (size_t)s->m * ldc);
    double *want = malloc(sizeof(double) * (size_t)s->m * s->n);
    double err = INFINITY;
    if (!a || !b || !c || !want)
        goto out;
    for (size_t i = 0; i < (size_t)s->m * lda; i++)
        a[i] = rnd(&rng);
    for (size_t i = 0; i < (size_t)brows * ldb; i++)
        b[i] = rnd(&rng);
    for (size_t i = 0; i < (size_t)s->m * ldc; i++)
        c[i] = rnd(&rng);
    /* every row on small products; on large ones every fifth and the last (the sum in
     * double is the slow part under qemu, in the isa suite) */
    const int step = s->m > 64 ? 5 : 1;
    double scale = 0.0;
    for (int i = 0; i < s->m; i = next_row(i, s->m, step))
        for (int j = 0; j < s->n; j++) {
            double sum = 0.0;
            for (int p = 0; p < s->k; p++)
                sum += (double)a[(size_t)i * lda + p] *
                       b[s->trans_b ? (size_t)j * ldb + p : (size_t)p * ldb + j];
            double w = s->alpha * sum + s->beta * c[(size_t)i * ldc + j];
            want[(size_t)i * s->n + j] = w;
            scale = fmax(scale, fabs(w));
        }
    float *pad_before = malloc(sizeof(float) * (size_t)s->m * ldc);
    if (!pad_before)
        goto out;
    memcpy(pad_before, c, sizeof(float) * (size_t)s->m * ldc);
    if (s->m == 1 && s->trans_b && lib == wkv__gemm_chosen())
        wkv__sgemv(s->n, s->k, s->alpha, b, ldb, a, s->beta, c); /* y = alpha W x + beta y */
    else
        wkv__sgemm_lib(lib, s->trans_b, s->m, s->n, s->k, s->alpha, a, lda, b, ldb, s->beta, c,
                      ldc);
    err = 0.0;
    for (int i = 0; i < s->m; i = next_row(i, s->m, step)) {
        for (int j = 0; j < s->n; j++)
            err = fmax(err, fabs(c[(size_t)i * ldc + j] - want[(size_t)i * s->n + j]));
        /* the columns past n are the caller's: untouched */
        for (int j = s->n; j < ldc; j++)
            if (memcmp(&c[(size_t)i * ldc + j], &pad_before[(size_t)i * ldc + j], sizeof(float)))
                err = INFINITY;
    }
    err /= scale + 1.0;
    free(pad_before);
out:
    free(a);
    free(b);
    free(c);
    free(want);
    return err;
}

static void check_products(void)
{
    static const shape shapes[] = {
        /* the encoder's linear parts (tiny: d 384; base: 512), the MLP's, a convolution */
        {1, 750, 384, 384, 1.0f, 0.0f, 0},
        {1, 375, 1536, 384, 1.0f, 0.0f, 0},
        {1, 375, 384, 1536, 1.0f, 1.0f, 0}, /* accumulating into the residual */
        {1, 128, 384, 240, 1.0f, 0.0f, 0},
        /* attention: q k^T scaled, then p v, both on strided heads */
        {1, 125, 1500, 64, 0.125f, 0.0f, 448},
        {0, 125, 64, 1500, 1.0f, 0.0f, 448},
        /* prompts and odd sizes: few rows, tails of every blocking */
        {1, 3, 384, 384, 1.0f, 0.0f, 0},
        {1, 17, 61, 33, -0.5f, 1.0f, 5},
        {0, 9, 70, 130, 2.0f, 0.5f, 3},
        /* one row: the decoder's single-token products and the VAD's LSTM (sgemv) */
        {1, 1, 512, 128, 1.0f, 0.0f, 0},
        {1, 1, 1536, 384, 1.0f, 1.0f, 0},
        {1, 1, 7, 5, 1.0f, 0.0f, 2},
    };
    const wkv__gemm_lib libs[] = {WKV_GEMM_OPENBLAS, WKV_GEMM_ONEDNN};
    const int emulated = tu_emulated();
    for (int l = 0; l < 2; l++) {
#ifndef WKV_HAVE_DNNL
        if (libs[l] == WKV_GEMM_ONEDNN)
            continue;
#endif
        for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
            shape emu = shapes[i];
            /* under qemu-user (the isa setups) the encoder's shapes with 47 rows
             * instead of 125 - 750: the same widths and depths through each library's
             * blocking, an odd tail of rows (with check_threads' 47 rows the test
             * took 59 s under qemu's max on CI's Intel Xeon, 190 s before) */
            if (emulated && emu.m > 64)
                emu.m = 47;
            const shape *s = &emu;
            double err = product_err(libs[l], s);
            /* f32 sums of k products of values below 0.5: a few ulp of the result's
             * scale per sqrt(k) terms, far below a wrong index or transposition (~1) */
            double tol = 2e-6 * sqrt((double)s->k) + 1e-6;
            CHECK(err <= tol, "%s: %s %d x %d x %d (pad %d): error %.3g > %.3g",
                  libs[l] == WKV_GEMM_ONEDNN ? "oneDNN" : "OpenBLAS", s->trans_b ? "NT" : "NN",
                  s->m, s->n, s->k, s->pad, err, tol);
        }
    }
}

#ifdef WKV_HAVE_DNNL
typedef struct {
    double err;
} thread_result;

static void *multiply(void *arg)
{
    thread_result *r = arg;
    /* 47 rows under qemu-user (the isa setups), as check_products' large shapes */
    shape s = {1, tu_emulated() ? 47 : 200, 384, 384, 1.0f, 0.0f, 0};
    r->err = 0.0;
    for (int i = 0; i < 4; i++)
        r->err = fmax(r->err, product_err(WKV_GEMM_ONEDNN, &s));
    return NULL;
}

static void check_threads(void)
{
    /* the caller's OpenMP setting survives a product */
    omp_set_num_threads(3);
    shape s = {1, 64, 64, 64, 1.0f, 0.0f, 0};
    double err = product_err(WKV_GEMM_ONEDNN, &s);
    CHECK(err < 1e-4, "error %.3g", err);
    CHECK(omp_get_max_threads() == 3, "the caller's OpenMP threads: %d, set 3",
          omp_get_max_threads());
    omp_set_num_threads(1);
    /* two pool-like threads at once */
    pthread_t t[2];
    thread_result r[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, multiply, &r[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(r[i].err < 1e-4, "thread %d: error %.3g", i, r[i].err);
    }
}
#endif

int main(void)
{
    check_kernels_fit_cpu();
    check_pick();
    check_chosen();
    check_products();
#ifdef WKV_HAVE_DNNL
    check_threads();
#endif
    return tu_finish("sgemm");
}
