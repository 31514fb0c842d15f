/* threads: a context uses exactly the threads it was created with.
 *  - wkv_context_new leaves OpenBLAS single-threaded, even when the application had
 *    set it higher (the pools split the products instead);
 *  - a threads=1 context's encoder uses at most one core: CPU time <= wall time (a
 *    BLAS running its own threads underneath would push CPU time towards 2x wall;
 *    a busy machine only lowers the ratio, so the check cannot fail from noise);
 *  - the encoder output does not depend on the number of threads beyond rounding
 *    (rows and attention blocks are split, never a sum; OpenBLAS's kernels for the
 *    leftover rows of a block round differently): within 1e-5 relative for 1, 2
 *    and 3 threads, and bit-identical for two contexts sharing one model side by
 *    side on two threads each;
 *  - with oneDNN (bf16, int8), the same: a threads=1 context uses one core, and a
 *    context adds its pool's workers to the process and no thread more (oneDNN's
 *    OpenMP team would stay alive after its first product); two threads=2 contexts
 *    encoding side by side run on four threads in all, never more (sampled every
 *    millisecond while they run, and counted after). */
#include "random_model.h"
#include "testutil.h"
#include "whisperkv.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef WKV_TEST_OPENBLAS
void openblas_set_num_threads(int n);
int openblas_get_num_threads(void);
#endif

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

typedef struct {
    const wkv_model *model;
    const float *mel;
    int threads;
    float *out; /* n_audio_ctx x n_audio_state */
    int rc;
} encode_job;

static void *encode(void *arg)
{
    encode_job *j = arg;
    const wkv_hparams *hp = wkv_model_hparams(j->model);
    wkv_context *ctx = wkv_context_new(j->model, j->threads, NULL);
    j->rc = ctx && wkv_encode(ctx, j->mel) == 0 ? 0 : -1;
    if (j->rc == 0)
        memcpy(j->out, wkv_encoder_output(ctx),
               (size_t)hp->n_audio_ctx * hp->n_audio_state * sizeof(float));
    wkv_context_free(ctx);
    return NULL;
}

#ifdef WKV_TEST_DNNL
/* Threads of this process now (/proc/self/status), or -1. */
static int os_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

static void check_dnnl_threads(const wkv_model *model, const float *mel)
{
    const wkv_compute_type types[] = {WKV_COMPUTE_BF16, WKV_COMPUTE_INT8};
    for (int t = 0; t < 2; t++) {
        const char *name = wkv_compute_type_name(types[t]);
        for (int threads = 1; threads <= 2; threads++) {
            int before = os_threads();
            char *err = NULL;
            wkv_context *ctx = wkv_context_new(model, threads, &err);
            CHECK(ctx, "%s: %s", name, err ? err : "");
            free(err);
            if (!ctx || !tu_compute_here(ctx, types[t], "threads")) {
                wkv_context_free(ctx); /* NULL, or a type this CPU lacks (printed) */
                continue;
            }
            wkv_encode(ctx, mel); /* warm up: primitives and buffers */
            double w0 = wall_s(), c0 = cpu_s();
            CHECK(wkv_encode(ctx, mel) == 0, "%s encode", name);
            double wall = wall_s() - w0, cpu = cpu_s() - c0;
            int now = os_threads();
            printf("%s, threads=%d: %.3f s CPU in %.3f s wall, process threads %d -> %d\n",
                   name, threads, cpu, wall, before, now);
            CHECK(now == before + threads - 1, "%s threads=%d: %d threads more", name,
                  threads, now - before);
            if (threads == 1)
                CHECK(cpu <= 1.1 * wall + 0.02, "%s: a threads=1 context used %.2f cores",
                      name, cpu / wall);
            wkv_context_free(ctx);
        }
    }
}

/* One of two side-by-side contexts: created and run on its own thread, kept alive
 * until the main thread has counted the threads. */
typedef struct {
    const wkv_model *model;
    const float *mel;
    wkv_compute_type type;
    int rc;
    pthread_barrier_t *counted;
    volatile int done;
} pair_job;

static void *pair_encode(void *arg)
{
    pair_job *j = arg;
    wkv_context *ctx = wkv_context_new(j->model, 2, NULL);
    j->rc = ctx && wkv_context_set_compute_type(ctx, j->type, NULL) == 0 ? 0 : -1;
    for (int k = 0; k < 2 && j->rc == 0; k++)
        j->rc = wkv_encode(ctx, j->mel);
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    pthread_barrier_wait(j->counted);
    wkv_context_free(ctx);
    return NULL;
}

static void check_dnnl_pair(const wkv_model *model, const float *mel)
{
    const wkv_compute_type types[] = {WKV_COMPUTE_BF16, WKV_COMPUTE_INT8};
    for (int t = 0; t < 2; t++) {
        const char *name = wkv_compute_type_name(types[t]);
        wkv_context *probe = wkv_context_new(model, 1, NULL);
        const int here = probe && tu_compute_here(probe, types[t], "side by side");
        wkv_context_free(probe);
        if (!here)
            continue; /* a type this CPU lacks (printed) */
        pthread_barrier_t counted;
        pthread_barrier_init(&counted, NULL, 3);
        int before = os_threads(), peak = before;
        pair_job jobs[2];
        pthread_t tid[2];
        for (int i = 0; i < 2; i++) {
            jobs[i] = (pair_job){model, mel, types[t], -1, &counted, 0};
            CHECK(pthread_create(&tid[i], NULL, pair_encode, &jobs[i]) == 0, "pthread_create");
        }
        /* the main thread only watches: the two job threads and their pools' workers
         * are the four computing threads */
        while (!__atomic_load_n(&jobs[0].done, __ATOMIC_ACQUIRE) ||
               !__atomic_load_n(&jobs[1].done, __ATOMIC_ACQUIRE)) {
            int n = os_threads();
            peak = n > peak ? n : peak;
            usleep(1000);
        }
        int after = os_threads();
        pthread_barrier_wait(&counted);
        for (int i = 0; i < 2; i++)
            pthread_join(tid[i], NULL);
        pthread_barrier_destroy(&counted);
        printf("%s, two threads=2 contexts side by side: computing threads %d at most while "
               "encoding, %d after\n", name, peak - before, after - before);
        CHECK(jobs[0].rc == 0 && jobs[1].rc == 0, "%s: side-by-side encode failed", name);
        CHECK(peak - before <= 4 && after - before == 4,
              "%s: two threads=2 contexts ran %d threads (at most) and kept %d, not 4", name,
              peak - before, after - before);
    }
}
#endif

int main(void)
{
    /* the tiny size: its products are large enough for OpenBLAS to thread them */
    wkv_model *model = tu_random_model("tiny");
    if (!model)
        return 1;
    const wkv_hparams *hp = wkv_model_hparams(model);
    size_t n_out = (size_t)hp->n_audio_ctx * hp->n_audio_state;
    float *mel = tu_random_mel(hp, 3);
    char *err = NULL;

#ifdef WKV_TEST_OPENBLAS
    openblas_set_num_threads(2); /* what an application may have done */
#endif
    wkv_context *ctx = wkv_context_new(model, 1, &err);
    CHECK(ctx != NULL, "%s", err ? err : "");
#ifdef WKV_TEST_OPENBLAS
    CHECK(openblas_get_num_threads() == 1, "OpenBLAS runs %d threads under a context",
          openblas_get_num_threads());
#endif
    wkv_encode(ctx, mel); /* warm up: first touch of the buffers */
    double w0 = wall_s(), c0 = cpu_s();
    for (int k = 0; k < 2; k++)
        CHECK(wkv_encode(ctx, mel) == 0, "encode");
    double wall = wall_s() - w0, cpu = cpu_s() - c0;
    printf("threads=1 encoder: %.3f s CPU in %.3f s wall (ratio %.2f)\n", cpu, wall, cpu / wall);
    CHECK(cpu <= 1.1 * wall + 0.02, "a threads=1 context used %.2f cores", cpu / wall);
    wkv_context_free(ctx);

    /* the same output for any number of threads, and side by side */
    float *ref = malloc(n_out * sizeof *ref), *out = malloc(n_out * sizeof *out);
    encode_job one = {model, mel, 1, ref, -1};
    encode(&one);
    CHECK(one.rc == 0, "encode, 1 thread");
    for (int t = 2; t <= 3; t++) {
        encode_job j = {model, mel, t, out, -1};
        encode(&j);
        double rel = tu_rel_err(out, ref, n_out);
        printf("%d threads vs 1: relative difference %.3g\n", t, rel);
        CHECK(j.rc == 0 && rel <= 1e-5, "%d threads: relative difference %g", t, rel);
    }
    float *two = malloc(n_out * sizeof *two), *out2 = malloc(n_out * sizeof *out2);
    encode_job solo = {model, mel, 2, two, -1};
    encode(&solo);
    encode_job a = {model, mel, 2, out, -1}, b = {model, mel, 2, out2, -1};
    pthread_t tid;
    CHECK(pthread_create(&tid, NULL, encode, &a) == 0, "pthread_create");
    encode(&b);
    pthread_join(tid, NULL);
    CHECK(solo.rc == 0 && a.rc == 0 && b.rc == 0 && memcmp(out, two, n_out * sizeof *out) == 0 &&
              memcmp(out2, two, n_out * sizeof *out2) == 0,
          "two contexts side by side differ from one alone: %g %g",
          tu_max_abs_err(out, two, n_out), tu_max_abs_err(out2, two, n_out));
    free(two);
#ifdef WKV_TEST_DNNL
    check_dnnl_threads(model, mel);
    check_dnnl_pair(model, mel);
#endif

    free(out2);
    free(out);
    free(ref);
    free(mel);
    wkv_model_free(model);
    printf("%d checks, %d failed\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
