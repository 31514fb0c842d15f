/* Benchmark of the engine on random-weight models of real sizes: log-mel, encoder
 * per 30-s window, decoder per token with both caches, with the cross K/V
 * recomputed every token, and with no cache at all.  Medians of --reps runs.  Also the
 * bandwidth a cached step achieves on the decoder weights, the resident size after
 * decoding and the process's peak RSS (cumulative: run one --size per process for a
 * per-model figure).
 *
 *   whisperkv-bench [--size tiny,base] [--threads N] [--reps N] [--tokens N]
 *                   [--model PATH]
 */
#include "genlib.h"
#include "whisperkv.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int n);

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
    int threads, reps, tokens;
} bench_opts;

/* Peak resident size of the process so far (ru_maxrss), MB. */
static double peak_rss_mb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024.0 : NAN;
}

/* Resident size now (/proc/self/statm), MB. */
static double rss_now_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    int ok = f && fscanf(f, "%ld %ld", &size, &res) == 2;
    if (f)
        fclose(f);
    return ok ? (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0 : NAN;
}

/* Bytes of decoder weights one single-token step reads: per block the self-attention
 * q/k/v/o, cross-attention q/o and MLP matrices (14 d^2) plus the token embedding as
 * the output projection; 2 bytes each where the engine keeps them in f16 (any file
 * that is not f32), else 4.  Vectors (biases, norms) and the KV caches not counted. */
static double step_weight_bytes(const wkv_hparams *hp)
{
    double d = hp->n_text_state;
    double n = hp->n_text_layer * 14.0 * d * d + (double)hp->n_vocab * d;
    return n * (hp->ftype % 1000 == 0 ? 4.0 : 2.0);
}

/* ms per token of `steps` single-token steps after a prompt of n_prompt tokens. */
static double time_steps(wkv_context *ctx, const int *seq, int n_prompt, int steps,
                         wkv_cache_mode mode, float *logits)
{
    wkv_decode_reset(ctx);
    wkv_decode(ctx, seq, n_prompt, WKV_CACHE_FULL, logits);
    double t0 = now_ms();
    for (int i = 0; i < steps; i++)
        if (wkv_decode(ctx, seq + n_prompt + i, 1, mode, logits) != 0)
            return NAN;
    return (now_ms() - t0) / steps;
}

static int bench_model(const char *label, const char *path, const bench_opts *bo)
{
    char *err = NULL;
    double t0 = now_ms();
    wkv_model *model = wkv_model_load(path, &err);
    if (!model) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return -1;
    }
    double load_ms = now_ms() - t0;
    const wkv_hparams *hp = wkv_model_hparams(model);
    const wkv_specials *sp = wkv_model_specials(model);
    wkv_context *ctx = wkv_context_new(model, bo->threads, NULL);

    size_t n_pcm = WKV_N_SAMPLES;
    float *pcm = malloc(n_pcm * sizeof *pcm);
    for (size_t i = 0; i < n_pcm; i++)
        pcm[i] = 0.3f * sinf(2 * (float)M_PI * 220.0f * (float)i / 16000) *
                 (0.5f + 0.5f * sinf((float)i / 8000.0f));
    float *window = malloc((size_t)hp->n_mels * WKV_N_FRAMES * sizeof *window);
    float *logits = malloc((size_t)hp->n_vocab * sizeof *logits);
    int reps = bo->reps, steps = bo->tokens;
    double *mel_t = calloc((size_t)reps, sizeof(double)), *enc_t = calloc((size_t)reps, sizeof(double));
    double *prompt_t = calloc((size_t)reps, sizeof(double));
    double *full_t = calloc((size_t)reps, sizeof(double)), *nocross_t = calloc((size_t)reps, sizeof(double));
    double *none_t = calloc((size_t)reps, sizeof(double));

    /* a prompt as long as the reference ever sends (startofprev + 223 + sot), then
     * `steps` tokens: inside n_text_ctx */
    int n_prompt = hp->n_text_ctx / 2 + 1;
    if (n_prompt + steps > hp->n_text_ctx)
        steps = hp->n_text_ctx - n_prompt;
    int *seq = malloc((size_t)(n_prompt + steps) * sizeof *seq);
    uint32_t r = 1;
    seq[0] = sp->startofprev;
    for (int i = 1; i < n_prompt + steps; i++) {
        r = r * 1664525u + 1013904223u;
        seq[i] = (int)(r % (uint32_t)sp->eot);
    }
    seq[n_prompt - 1] = sp->sot;

    for (int k = 0; k < reps; k++) {
        double a = now_ms();
        wkv_mel *mel = wkv_mel_compute(model, pcm, n_pcm, bo->threads, NULL);
        mel_t[k] = now_ms() - a;
        wkv_mel_window(mel, 0, WKV_N_FRAMES, WKV_MEL_GLOBAL, window);
        wkv_mel_free(mel);
        a = now_ms();
        wkv_encode(ctx, window);
        enc_t[k] = now_ms() - a;
        wkv_decode_reset(ctx);
        a = now_ms();
        wkv_decode(ctx, seq, n_prompt, WKV_CACHE_FULL, logits);
        prompt_t[k] = (now_ms() - a) / n_prompt;
        full_t[k] = time_steps(ctx, seq, n_prompt, steps, WKV_CACHE_FULL, logits);
        nocross_t[k] = time_steps(ctx, seq, n_prompt, steps, WKV_CACHE_NO_CROSS, logits);
        none_t[k] = time_steps(ctx, seq, n_prompt, steps, WKV_CACHE_NONE, logits);
    }
    double mel = median(mel_t, reps), enc = median(enc_t, reps), pr = median(prompt_t, reps);
    double full = median(full_t, reps), nocross = median(nocross_t, reps);
    double none = median(none_t, reps);
    double gbs = step_weight_bytes(hp) / (full * 1e-3) / 1e9;
    printf("| %s | %d | %.0f | %.1f | %.0f | %.2f | %.2f | %.1f | %.1f | %.1f× | %.1f× "
           "| %.1f | %.0f | %.0f |\n",
           label, bo->threads, load_ms, mel, enc, pr, full, nocross, none, nocross / full,
           none / full, gbs, rss_now_mb(), peak_rss_mb());
    fflush(stdout);

    free(seq);
    free(mel_t);
    free(enc_t);
    free(prompt_t);
    free(full_t);
    free(nocross_t);
    free(none_t);
    free(logits);
    free(window);
    free(pcm);
    wkv_context_free(ctx);
    wkv_model_free(model);
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts bo = {.threads = (int)sysconf(_SC_NPROCESSORS_ONLN), .reps = 5, .tokens = 100};
    const char *sizes = "tiny,base", *model_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            sizes = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            bo.threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            bo.reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
            bo.tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model_path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--size tiny,base] [--threads N] [--reps N] "
                            "[--tokens N] [--model PATH]\n", argv[0]);
            return 2;
        }
    }
    if (bo.threads < 1 || bo.reps < 1 || bo.tokens < 1) {
        fprintf(stderr, "threads, reps and tokens must be >= 1\n");
        return 2;
    }
    openblas_set_num_threads(bo.threads);
    printf("decoder steps: %d tokens after a %d-token prompt; medians of %d runs\n\n",
           bo.tokens, 225, bo.reps);
    printf("| model | threads | load ms | mel ms/30 s | encoder ms/window | prompt ms/token "
           "| step ms/token, both caches | step ms/token, cross K/V per token "
           "| step ms/token, no cache | cross-KV gain | full-cache gain "
           "| step GB/s of decoder weights | RSS MB after decoding | peak RSS MB |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    if (model_path)
        return bench_model(model_path, model_path, &bo) ? 1 : 0;

    char *list = strdup(sizes);
    int rc = 0;
    for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        gen_params p;
        if (gen_params_preset(&p, s) != 0) {
            fprintf(stderr, "unknown size '%s'\n", s);
            rc = 2;
            break;
        }
        char path[] = "/tmp/whisperkv-bench-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0) {
            perror("mkstemp");
            rc = 1;
            break;
        }
        close(fd);
        char *err = NULL;
        if (gen_model_write(path, &p, &err) != 0) {
            fprintf(stderr, "%s\n", err);
            free(err);
            unlink(path);
            rc = 1;
            break;
        }
        char label[64];
        snprintf(label, sizeof label, "%s (f16, random)", s);
        if (bench_model(label, path, &bo) != 0)
            rc = 1;
        unlink(path);
    }
    free(list);
    return rc;
}
