/* Benchmark of the engine on random-weight models of real sizes (the work depends
 * on the shapes only), against rooflines measured in the same run:
 *  - the machine: its CPU; the f32 peak on --threads threads (2048^3) of the library
 *    that runs the f32 products (wkv_f32_gemm_library: oneDNN's matmul or OpenBLAS's
 *    sgemm), OpenBLAS's and oneDNN's single-threaded rate on one encoder part's
 *    product side by side, and the bandwidth of a streamed read of 512 MB;
 *  - per model: log-mel, encoder per 30-s window (GFLOP/s and the fraction of the
 *    f32 peak; and by stage, from wkv_stats' enc_*_ms, against each stage's
 *    multiply-adds at that peak), decoder per token with both caches (tokens/s, GB/s
 *    of weights and cross K/V read, fraction of the streamed bandwidth), with the cross K/V
 *    recomputed every token and with no cache (the caches' gains); memory: resident
 *    size after decoding against weights in the file + KV caches + activations;
 *  - --file: a whole recording through the long-form loop, real-time factor;
 *  - --compute-type f32,bf16,int8: the encoder per 30-s window on each compute type
 *    (one context each, runs alternating between them), ms, GFLOP/s, the fraction of
 *    the type's own peak (f32: the f32 peak above; bf16, int8: oneDNN's matmul peak on
 *    2048^3, measured with the rooflines when built with oneDNN) and the speed-up
 *    over f32 measured in the same rounds;
 *  - --audio-ctx 320,576: with it, the same on the first N encoder frames too
 *    (wkv_encode_frames, a live run's wkv_options.audio_ctx): its multiply-adds, ms
 *    and time against the whole window's, each type.
 * The main measurement's context runs on --type (default auto, what the CLI and the
 * element default to: f32 for f32/f16 files, int8 for quantized ones when built with
 * oneDNN); the table's label names the type.
 * Medians of --reps runs.  The decoder's steps follow a prompt of --prompt tokens
 * (default 225, the longest the reference sends; 4 is a window's start without
 * previous text, what scripts/whispercpp-bench.sh times for whisper.cpp).
 *
 *   whisperkv-bench [--size tiny,base | --model PATH] [--threads N] [--reps N]
 *                   [--tokens N] [--prompt N] [--file WAV] [--compute-type LIST]
 *                   [--audio-ctx LIST]
 *                   [--type TYPE] [--smaps] [--logits PATH]
 * --smaps prints where the resident memory after decoding sits, per mapping.
 * --logits writes the decoder's logits (prompt, then each step) to PATH.<model>, raw f32.
 */
#include "dnnl_peak.h"
#include "bench_util.h"
#include "genlib.h"
#include "wav.h"
#include "whisperkv_debug.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void openblas_set_num_threads(int n);

typedef struct {
    int threads, reps, tokens;
    int prompt; /* decoder prompt tokens; 0: n_text_ctx / 2 + 1 (225), the longest */
    const char *file;
    const char *compute_types; /* comma-separated wkv_compute_type names, or NULL */
    const char *audio_ctx;     /* comma-separated encoder frame counts, or NULL */
    int smaps;                 /* --smaps: print the resident memory by mapping */
    const char *logits_out;    /* --logits: raw f32 logits written here (per model) */
    wkv_compute_type type;     /* the main measurement's context (--type; default auto) */
    double sgemm_gflops, stream_gbs; /* the rooflines, measured first */
    double type_peak[4];             /* per wkv_compute_type: the peak its encoder is
                                        measured against (f32: sgemm; bf16, int8:
                                        oneDNN's matmul); NAN when unknown */
} bench_opts;

/* Times in ms[0 .. reps) of OpenBLAS's sgemm of m x n x k (A . B^T) on `threads` of
 * its own threads, after one warm-up; -1 when out of memory. */
static int openblas_times(int m, int n, int k, int threads, int reps, double *ms)
{
    float *a = malloc(sizeof(float) * (size_t)m * k), *b = malloc(sizeof(float) * (size_t)n * k);
    float *c = malloc(sizeof(float) * (size_t)m * n);
    int rc = a && b && c ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < (size_t)m * k; i++)
        a[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; rc == 0 && i < (size_t)n * k; i++)
        b[i] = (float)(i % 5) * 0.1f;
    openblas_set_num_threads(threads);
    for (int r = -1; rc == 0 && r < reps; r++) { /* one warm-up */
        double t0 = now_ms();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f,
                    c, n);
        if (r >= 0)
            ms[r] = now_ms() - t0;
    }
    free(a);
    free(b);
    free(c);
    return rc;
}

/* An m x n x k product's rate from the times of `reps` runs (ok: they were measured):
 * GFLOP/s of the median, NAN otherwise. */
static double rate_gflops(int ok, int m, int n, int k, double *t, int reps)
{
    double res = ok ? 2.0 * m * n * k / (median(t, reps) * 1e-3) / 1e9 : NAN;
    free(t);
    return res;
}

/* OpenBLAS's own multi-threaded sgemm on 2048^3: its compute roofline. */
static double sgemm_peak_gflops(int threads, int reps)
{
    const int n = 2048;
    double *t = calloc((size_t)reps, sizeof *t);
    return rate_gflops(t && openblas_times(n, n, n, threads, reps, t) == 0, n, n, n, t, reps);
}

/* One pool part's product of the tiny encoder's (750 x 384 x 384, A . B^T, one
 * thread) on OpenBLAS (lib 0) or oneDNN (lib 1): GFLOP/s, NAN when it cannot run.  The
 * two libraries side by side on the shape that matters, the facts wkv_f32_gemm_library
 * chose by. */
static double part_gflops(int lib, int reps)
{
    const int m = 750, n = 384, k = 384;
    double *t = calloc((size_t)reps, sizeof *t);
    int ok = t && (lib == 1 ? dnnl_sgemm_times(m, n, k, reps, now_ms, t)
                            : openblas_times(m, n, k, 1, reps, t)) == 0;
    return rate_gflops(ok, m, n, k, t, reps);
}

/* oneDNN's matmul of `type` on DNNL_PEAK_N^3 (dnnl_peak.c): GOP/s, NAN without it. */
static double dnnl_peak_gflops(wkv_compute_type type, int threads, int reps)
{
    double *t = calloc((size_t)reps, sizeof *t), res = NAN;
    const double n = DNNL_PEAK_N;
    if (t && dnnl_peak_times(type, threads, reps, now_ms, t) == 0)
        res = 2.0 * n * n * n / (median(t, reps) * 1e-3) / 1e9;
    free(t);
    return res;
}

typedef struct {
    const uint64_t *p;
    size_t n;
    uint64_t sum;
} stream_part;

static void *stream_read(void *arg)
{
    stream_part *sp = arg;
    uint64_t s = 0;
    for (size_t i = 0; i < sp->n; i++)
        s += sp->p[i];
    sp->sum = s;
    return NULL;
}

/* A streamed read of 512 MB split over `threads` threads: the memory roofline. */
static double stream_gbs(int threads, int reps)
{
    const size_t bytes = (size_t)512 << 20, n = bytes / sizeof(uint64_t);
    uint64_t *buf = malloc(bytes);
    double *t = calloc((size_t)reps, sizeof *t), res = NAN;
    stream_part *parts = calloc((size_t)threads, sizeof *parts);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    if (buf && t && parts && tid) {
        for (size_t i = 0; i < n; i++)
            buf[i] = i;
        for (int k = -1; k < reps; k++) {
            double t0 = now_ms();
            for (int i = 0; i < threads; i++) {
                parts[i] = (stream_part){buf + n * (size_t)i / (size_t)threads,
                                         n * (size_t)(i + 1) / (size_t)threads -
                                             n * (size_t)i / (size_t)threads, 0};
                if (i > 0 && pthread_create(&tid[i], NULL, stream_read, &parts[i]) != 0)
                    stream_read(&parts[i]);
            }
            stream_read(&parts[0]);
            for (int i = 1; i < threads; i++)
                pthread_join(tid[i], NULL);
            if (k >= 0)
                t[k] = now_ms() - t0;
        }
        res = (double)bytes / (median(t, reps) * 1e-3) / 1e9;
    }
    free(buf);
    free(t);
    free(parts);
    free(tid);
    return res;
}

/* The encoder's stages as wkv_stats times them. */
enum { N_STAGES = 6 };
static const char *const STAGE_NAMES[N_STAGES] = {
    "convolutions", "weights widened or converted", "q, k, v", "attention", "o", "MLP"};

static void stage_times(const wkv_stats *st, double out[N_STAGES])
{
    const double v[N_STAGES] = {st->enc_conv_ms, st->enc_weights_ms, st->enc_qkv_ms,
                                st->enc_attention_ms, st->enc_out_ms, st->enc_mlp_ms};
    memcpy(out, v, sizeof v);
}

/* Multiply-adds x 2 of each stage for one window, in GFLOP: the convolutions (im2col
 * products), per block q/k/v (6 T d^2), attention's two products (4 T^2 d), o (2 T d^2)
 * and the MLP (16 T d^2); widening none. */
static void stage_gflop(const wkv_hparams *hp, double out[N_STAGES])
{
    double T = hp->n_audio_ctx, d = hp->n_audio_state, m = hp->n_mels, L = hp->n_audio_layer;
    const double v[N_STAGES] = {2 * (2 * T) * (3 * m) * d + 2 * T * (3 * d) * d, 0,
                                L * 6 * T * d * d, L * 4 * T * T * d, L * 2 * T * d * d,
                                L * 16 * T * d * d};
    for (int i = 0; i < N_STAGES; i++)
        out[i] = v[i] / 1e9;
}

/* Multiply-adds x 2 of what wkv_encode computes for one window: the stages', then the
 * cross-attention K and V of every decoder block (4 T d^2 each; whisper.cpp's encoder
 * graph computes them too). */
static double encoder_flops(const wkv_hparams *hp)
{
    double g[N_STAGES], sum = 0;
    stage_gflop(hp, g);
    for (int i = 0; i < N_STAGES; i++)
        sum += g[i] * 1e9;
    return sum + hp->n_text_layer * 4.0 * hp->n_audio_ctx * hp->n_audio_state * hp->n_text_state;
}

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

/* The resident size's two kinds now (/proc/self/status), MB: anonymous (the heap,
 * the model as loaded, caches, activations, the bench's own buffers) and file-backed
 * (the executable's and the shared libraries' pages, shared with other processes that
 * map them).  NAN when the kernel does not say. */
static void rss_kinds_mb(double *anon, double *file)
{
    *anon = *file = NAN;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return;
    char line[256];
    long kb;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "RssAnon: %ld kB", &kb) == 1)
            *anon = (double)kb / 1024.0;
        else if (sscanf(line, "RssFile: %ld kB", &kb) == 1)
            *file = (double)kb / 1024.0;
    }
    fclose(f);
}

/* --smaps: the process's resident memory by mapping (/proc/self/smaps), summed per
 * file name, [heap], [stack] and anonymous, largest first, on stderr: what the RSS
 * that the memory table compares with the budget is made of. */
static void print_smaps(const char *label)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return;
    enum { MAXN = 256 };
    char names[MAXN][128];
    double kb[MAXN];
    int n = 0, cur = -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        char perms[8], path[400] = "";
        long rss;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %399[^\n]", &a, &b, perms, path) >= 3) {
            const char *name = path[0] ? path : "[anonymous]";
            const char *slash = strrchr(name, '/');
            name = slash ? slash + 1 : name;
            for (cur = 0; cur < n && strcmp(names[cur], name); cur++)
                ;
            if (cur == n && n < MAXN) {
                snprintf(names[n], sizeof names[n], "%s", name);
                kb[n++] = 0;
            }
            if (cur >= n)
                cur = -1;
        } else if (cur >= 0 && sscanf(line, "Rss: %ld kB", &rss) == 1) {
            kb[cur] += (double)rss;
        }
    }
    fclose(f);
    fprintf(stderr, "resident memory of %s by mapping (MB):\n", label);
    for (int k = 0; k < 12; k++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (kb[i] > 0 && (best < 0 || kb[i] > kb[best]))
                best = i;
        if (best < 0 || kb[best] < 512)
            break;
        fprintf(stderr, "  %8.1f  %s\n", kb[best] / 1024.0, names[best]);
        kb[best] = -1;
    }
}

/* Bytes per weight of a file's matrices as the engine keeps them (as stored): f32,
 * f16, or the ggml block's bytes over its 32 weights (ftype codes as whisper.cpp's
 * quantize writes them; the low three digits, the high ones are its version), from
 * the generator's table of types (the core's is internal). */
static double stored_bytes_per_weight(int ftype)
{
    int type = gen_quant_type(ftype % 1000);
    if (type >= 0)
        return (double)gen_quant_block_bytes(type) / 32;
    return ftype % 1000 == 0 ? 4.0 : 2.0; /* f32, else f16 */
}

/* Bytes of decoder weights one single-token step reads: per block the self-attention
 * q/k/v/o, cross-attention q/o and MLP matrices (14 d^2) plus the token embedding as
 * the output projection, at the bytes the file stores them in (the decoder runs on
 * them as stored).  Vectors (biases, norms) not counted. */
static double step_weight_bytes(const wkv_hparams *hp)
{
    double d = hp->n_text_state;
    double n = hp->n_text_layer * 14.0 * d * d + (double)hp->n_vocab * d;
    return n * stored_bytes_per_weight(hp->ftype);
}

/* Plus the cross K/V of the window every block reads (f32, or half on bf16/int8):
 * what a step streams. */
static double step_bytes(const wkv_hparams *hp, wkv_compute_type type)
{
    return step_weight_bytes(hp) + hp->n_text_layer * 2.0 * hp->n_audio_ctx * hp->n_text_state *
                                       (type == WKV_COMPUTE_F32 ? 4.0 : 2.0);
}

/* ms per token of `steps` single-token steps after a prompt of n_prompt tokens. */
static double time_steps(wkv_context *ctx, const int *seq, int n_prompt, int steps,
                         wkv_cache_mode mode, float *logits)
{
    wkv_decode_reset(ctx);
    wkv_decode(ctx, seq, n_prompt, logits);
    double t0 = now_ms();
    for (int i = 0; i < steps; i++)
        if (wkv_decode_mode(ctx, seq + n_prompt + i, 1, mode, logits) != 0)
            return NAN;
    return (now_ms() - t0) / steps;
}

/* --logits: the encoder's output is not public, so what reaches the user is written: the
 * logits after the prompt and after each full-cache step, raw f32, to PATH.LABEL.  Two
 * builds whose files `cmp` equal computed the same numbers (a refactor's check). */
static int dump_logits(const char *path, const char *label, wkv_context *ctx,
                       const wkv_hparams *hp, const float *window, const int *seq, int n_prompt,
                       int steps, float *logits)
{
    char name[1024];
    snprintf(name, sizeof name, "%s.%s", path, label);
    FILE *f = fopen(name, "wb");
    if (!f)
        return -1;
    wkv_encode(ctx, window);
    wkv_decode_reset(ctx);
    int rc = wkv_decode(ctx, seq, n_prompt, logits);
    for (int i = 0; rc == 0 && i <= steps; i++) {
        if (fwrite(logits, sizeof *logits, (size_t)hp->n_vocab, f) != (size_t)hp->n_vocab)
            rc = -1;
        else if (i < steps)
            rc = wkv_decode_mode(ctx, seq + n_prompt + i, 1, WKV_CACHE_FULL, logits);
    }
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

typedef struct {
    char label[96];
    double load_ms, mel, enc, enc_gflops, prompt, full, nocross, none, step_gbs;
    double rss, rss_anon, rss_file, peak, pre_load, load_peak, file_mb, cache_mb, act_mb;
    double stage[N_STAGES]; /* encoder ms by stage (wkv_stats' enc_*_ms), medians */
    double stage_gflop[N_STAGES];
} model_result;

static double file_mb(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1048576.0 : NAN;
}

/* The encoder on each of bo->compute_types (f32 added first for the ratio) and each of
 * bo->audio_ctx's frame counts (wkv_encode_frames; default the model's n_audio_ctx
 * only): one context per type, the types and frame counts alternating within each
 * round so load on the machine falls on all alike.  Prints a table; -1 when a type
 * cannot be used. */
static int bench_compute_types(const char *label, const wkv_model *model, const float *window,
                               const bench_opts *bo)
{
    enum { MAX_TYPES = 4, MAX_CTX = 8 };
    wkv_compute_type types[MAX_TYPES] = {WKV_COMPUTE_F32};
    wkv_context *ctx[MAX_TYPES] = {NULL};
    double *t[MAX_TYPES][MAX_CTX] = {{NULL}};
    const wkv_hparams *hp = wkv_model_hparams(model);
    int n = 1, rc = 0, frames[MAX_CTX] = {hp->n_audio_ctx}, n_ctx = 1;
    char *list = strdup(bo->compute_types ? bo->compute_types : "f32");
    for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        int ty = wkv_compute_type_parse(s);
        if (ty < 0) {
            fprintf(stderr, "unknown compute type '%s'\n", s);
            rc = -1;
        } else if (ty != WKV_COMPUTE_F32 && n < MAX_TYPES) {
            types[n++] = (wkv_compute_type)ty;
        }
    }
    free(list);
    list = strdup(bo->audio_ctx ? bo->audio_ctx : "");
    for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        int f = atoi(s);
        if (f < 1 || f > hp->n_audio_ctx) {
            fprintf(stderr, "--audio-ctx: '%s' is not 1 .. %d frames\n", s, hp->n_audio_ctx);
            rc = -1;
        } else if (f != hp->n_audio_ctx && n_ctx < MAX_CTX) {
            frames[n_ctx++] = f;
        }
    }
    free(list);
    for (int i = 0; rc == 0 && i < n; i++) {
        char *err = NULL;
        ctx[i] = wkv_context_new(model, bo->threads, &err);
        for (int c = 0; c < n_ctx; c++)
            t[i][c] = calloc((size_t)bo->reps, sizeof(double));
        if (!ctx[i] || !t[i][n_ctx - 1] || wkv_context_set_compute_type(ctx[i], types[i], &err) != 0) {
            fprintf(stderr, "%s: %s\n", wkv_compute_type_name(types[i]), err ? err : "no memory");
            rc = -1;
        } else {
            wkv_encode(ctx[i], window); /* warm-up: buffers, oneDNN primitives */
        }
        free(err);
    }
    for (int k = 0; rc == 0 && k < bo->reps; k++)
        for (int c = 0; c < n_ctx; c++)
            for (int i = 0; i < n; i++) {
                double a = now_ms();
                wkv_encode_frames(ctx[i], window, frames[c]);
                t[i][c][k] = now_ms() - a;
            }
    if (rc == 0) {
        printf("\n#### Encoder per compute type: %s, %d threads, medians of %d alternating "
               "runs\n\n| compute type | frames | GFLOP | encoder ms | GFLOP/s | peak of the "
               "type | of its peak | speed-up over f32 | ms ÷ %d frames' |\n"
               "|---|---|---|---|---|---|---|---|---|\n", label, bo->threads, bo->reps,
               hp->n_audio_ctx);
        for (int c = 0; c < n_ctx; c++) {
            wkv_hparams h = *hp; /* the encoder (and cross K/V) on frames[c] frames */
            h.n_audio_ctx = frames[c];
            const double flops = encoder_flops(&h), f32_ms = median(t[0][c], bo->reps);
            for (int i = 0; i < n; i++) {
                double ms = i ? median(t[i][c], bo->reps) : f32_ms, gf = flops / (ms * 1e-3) / 1e9;
                double peak = bo->type_peak[types[i]];
                printf("| %s | %d | %.2f | %.1f | %.1f | %.0f | %.0f %% | %.2fx | %.3f |\n",
                       wkv_compute_type_name(types[i]), frames[c], flops / 1e9, ms, gf, peak,
                       100 * gf / peak, f32_ms / ms, ms / median(t[i][0], bo->reps));
            }
        }
        fflush(stdout);
    }
    for (int i = 0; i < n; i++) {
        wkv_context_free(ctx[i]);
        for (int c = 0; c < n_ctx; c++)
            free(t[i][c]);
    }
    return rc;
}

static int bench_model(const char *label, const char *path, const bench_opts *bo,
                       model_result *res)
{
    char *err = NULL;
    double pre_load = rss_now_mb(), t0 = now_ms();
    wkv_model *model = wkv_model_load(path, &err);
    if (!model) {
        fprintf(stderr, "%s\n", err);
        free(err);
        return -1;
    }
    double load_ms = now_ms() - t0;
    /* the process's peak so far: the load's own peak when this is the first model */
    double load_peak = peak_rss_mb();
    const wkv_hparams *hp = wkv_model_hparams(model);
    const wkv_specials *sp = wkv_model_specials(model);
    wkv_context *ctx = wkv_context_new(model, bo->threads, &err);
    if (!ctx || wkv_context_set_compute_type(ctx, bo->type, &err) != 0) {
        fprintf(stderr, "%s\n", err ? err : "no memory");
        free(err);
        wkv_context_free(ctx);
        wkv_model_free(model);
        return -1;
    }
    const wkv_compute_type type = wkv_context_compute_type(ctx);

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
    double *stage_t = calloc((size_t)reps * N_STAGES, sizeof(double));

    /* by default a prompt as long as the reference ever sends (startofprev + 223 +
     * sot); --prompt 4 is a window's start without previous text (sot, language,
     * task, notimestamps), as whisper.cpp's side-by-side driver decodes.  Then `steps`
     * tokens: inside n_text_ctx */
    int n_prompt = bo->prompt > 0 ? bo->prompt : hp->n_text_ctx / 2 + 1;
    if (n_prompt > hp->n_text_ctx - 1)
        n_prompt = hp->n_text_ctx - 1;
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
        double s0[N_STAGES], s1[N_STAGES];
        stage_times(wkv_context_stats(ctx), s0);
        a = now_ms();
        wkv_encode(ctx, window);
        enc_t[k] = now_ms() - a;
        stage_times(wkv_context_stats(ctx), s1);
        for (int i = 0; i < N_STAGES; i++)
            stage_t[(size_t)i * reps + k] = s1[i] - s0[i];
        wkv_decode_reset(ctx);
        a = now_ms();
        wkv_decode(ctx, seq, n_prompt, logits);
        prompt_t[k] = (now_ms() - a) / n_prompt;
        full_t[k] = time_steps(ctx, seq, n_prompt, steps, WKV_CACHE_FULL, logits);
        nocross_t[k] = time_steps(ctx, seq, n_prompt, steps, WKV_CACHE_NO_CROSS, logits);
        none_t[k] = time_steps(ctx, seq, n_prompt, steps, WKV_CACHE_NONE, logits);
    }
    if (bo->logits_out && dump_logits(bo->logits_out, label, ctx, hp, window, seq, n_prompt,
                                      steps, logits) != 0)
        fprintf(stderr, "--logits: cannot write %s.%s\n", bo->logits_out, label);
    size_t cache_b = 0, act_b = 0;
    wkv_context_memory(ctx, &cache_b, &act_b);
    if (bo->smaps)
        print_smaps(label);
    *res = (model_result){
        .load_ms = load_ms,
        .mel = median(mel_t, reps),
        .enc = median(enc_t, reps),
        .prompt = median(prompt_t, reps),
        .full = median(full_t, reps),
        .nocross = median(nocross_t, reps),
        .none = median(none_t, reps),
        .rss = rss_now_mb(),
        .peak = peak_rss_mb(),
        .pre_load = pre_load,
        .load_peak = load_peak,
        .file_mb = file_mb(path),
        .cache_mb = (double)cache_b / 1048576.0,
        .act_mb = (double)act_b / 1048576.0,
    };
    rss_kinds_mb(&res->rss_anon, &res->rss_file);
    for (int i = 0; i < N_STAGES; i++)
        res->stage[i] = median(stage_t + (size_t)i * reps, reps);
    stage_gflop(hp, res->stage_gflop);
    snprintf(res->label, sizeof res->label, "%s (%s)", label, wkv_compute_type_name(type));
    res->enc_gflops = encoder_flops(hp) / (res->enc * 1e-3) / 1e9;
    res->step_gbs = step_bytes(hp, type) / (res->full * 1e-3) / 1e9;
    wkv_context_free(ctx);
    ctx = NULL;
    int rc = bo->compute_types || bo->audio_ctx ? bench_compute_types(label, model, window, bo) : 0;

    free(seq);
    free(mel_t);
    free(enc_t);
    free(stage_t);
    free(prompt_t);
    free(full_t);
    free(nocross_t);
    free(none_t);
    free(logits);
    free(window);
    free(pcm);
    wkv_model_free(model);
    return rc;
}

static void print_results(const model_result *r, int n, const bench_opts *bo)
{
    printf("\n### Speed (medians of %d runs; decoder: %d tokens after a %d-token prompt)\n\n",
           bo->reps, bo->tokens, bo->prompt > 0 ? bo->prompt : 225);
    printf("| model | threads | load ms | mel ms / 30 s | encoder ms / window "
           "| encoder GFLOP/s | of f32 peak | prompt ms / token | step ms / token "
           "| tokens/s | step GB/s | of streamed GB/s | step ms, cross K/V per token "
           "| step ms, no cache | cross-KV gain | both caches' gain |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++)
        printf("| %s | %d | %.0f | %.1f | %.0f | %.1f | %.0f %% | %.2f | %.2f | %.0f | %.1f "
               "| %.0f %% | %.1f | %.1f | %.1f× | %.1f× |\n",
               r[i].label, bo->threads, r[i].load_ms, r[i].mel, r[i].enc, r[i].enc_gflops,
               100 * r[i].enc_gflops / bo->sgemm_gflops, r[i].prompt, r[i].full,
               1000 / r[i].full, r[i].step_gbs, 100 * r[i].step_gbs / bo->stream_gbs,
               r[i].nocross, r[i].none, r[i].nocross / r[i].full, r[i].none / r[i].full);
    printf("\n### Encoder by stage (ms per window, medians of %d runs; \"at the peak\": the "
           "stage's multiply-adds at the f32 peak above)\n\n| model | stage | ms | at the peak "
           "| GFLOP/s |\n|---|---|---|---|---|\n", bo->reps);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < N_STAGES; k++) {
            const double g = r[i].stage_gflop[k];
            if (g > 0)
                printf("| %s | %s | %.1f | %.1f | %.1f |\n", r[i].label, STAGE_NAMES[k],
                       r[i].stage[k], 1e3 * g / bo->sgemm_gflops, g / (r[i].stage[k] * 1e-3));
            else
                printf("| %s | %s | %.1f | — | — |\n", r[i].label, STAGE_NAMES[k], r[i].stage[k]);
        }
    printf("\n### Memory (MB; budget = weights as stored in the file + KV caches + "
           "activations)\n\n");
    printf("| model | file | KV caches | activations | budget | RSS after decoding "
           "| RSS / budget | of which anonymous / file-backed | anonymous / budget "
           "| peak RSS of the process | RSS before load | peak RSS at the load's "
           "end | load's peak growth / file |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        double budget = r[i].file_mb + r[i].cache_mb + r[i].act_mb;
        /* the load's peak is the process's peak so far: only the first model's is its own;
         * the ratios to three places, so that one just over a target's 1.15 or 1.10
         * does not print as it */
        printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | %.1f / %.1f | %.3f | %.0f | %.0f "
               "| %.0f%s | %.3f |\n",
               r[i].label, r[i].file_mb, r[i].cache_mb, r[i].act_mb, budget, r[i].rss,
               r[i].rss / budget, r[i].rss_anon, r[i].rss_file, r[i].rss_anon / budget, r[i].peak, r[i].pre_load, r[i].load_peak,
               i ? " (earlier models' peak)" : "",
               (r[i].load_peak - r[i].pre_load) / r[i].file_mb);
    }
    fflush(stdout);
}

typedef struct {
    int segments;
    double last_end;
} file_progress;

static int count_segment(const wkv_segment *seg, void *user)
{
    file_progress *fp = user;
    fp->segments++;
    fp->last_end = seg->end;
    return 0;
}

/* A whole recording through the long-form loop, as the CLI runs it with
 * --no-fallback (random weights would fall back on every window). */
static int bench_file(const char *label, const char *model_path, const bench_opts *bo)
{
    char msg[256];
    wav_data wav;
    if (wav_read(bo->file, &wav, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: %s\n", bo->file, msg);
        return -1;
    }
    if (wav.rate != WKV_SAMPLE_RATE) {
        fprintf(stderr, "%s: %d Hz; --file takes 16 kHz WAV (convert it first, e.g. "
                        "gst-launch-1.0 filesrc location=IN ! decodebin ! audioconvert ! "
                        "audioresample ! audio/x-raw,rate=16000,channels=1,format=S16LE ! "
                        "wavenc ! filesink location=OUT.wav)\n",
                bo->file, wav.rate);
        wav_free(&wav);
        return -1;
    }
    char *err = NULL;
    wkv_model *model = wkv_model_load(model_path, &err);
    wkv_context *ctx = model ? wkv_context_new(model, bo->threads, &err) : NULL;
    if (!ctx || wkv_context_set_compute_type(ctx, bo->type, &err) != 0) {
        fprintf(stderr, "%s\n", err ? err : "no memory");
        free(err);
        wkv_context_free(ctx);
        wkv_model_free(model);
        wav_free(&wav);
        return -1;
    }
    wkv_options opts;
    wkv_options_default(&opts);
    opts.temperature_increment = 0;
    double audio_s = (double)wav.n / WKV_SAMPLE_RATE;
    double *wall = calloc((size_t)bo->reps, sizeof *wall);
    file_progress fp = {0, 0};
    int rc = 0;
    for (int k = 0; k < bo->reps && rc == 0; k++) {
        fp = (file_progress){0, 0};
        double t0 = now_ms();
        rc = wkv_transcribe(ctx, wav.samples, wav.n, &opts, count_segment, NULL, &fp, &err) < 0
                 ? -1 : 0;
        wall[k] = (now_ms() - t0) / 1e3;
    }
    if (rc != 0) {
        fprintf(stderr, "%s\n", err ? err : "transcription failed");
        free(err);
    } else {
        const wkv_stats *st = wkv_context_stats(ctx);
        double w = median(wall, bo->reps);
        double per_rep = 1.0 / bo->reps;
        printf("\n### Whole file (median of %d runs)\n\n", bo->reps);
        /* tokens: positions through the decoder, prompts (batched) included */
        printf("| model | file | audio s | wall s | real-time factor | windows "
               "| decoder positions | encoder ms / window | decoder ms / position "
               "| segments | peak RSS MB |\n");
        printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
        printf("| %s | %s | %.1f | %.2f | %.3f | %.0f | %.0f | %.0f | %.2f | %d | %.0f |\n",
               label, bo->file, audio_s, w, w / audio_s, (double)st->encoder_runs * per_rep,
               (double)st->tokens_decoded * per_rep, st->encode_ms / (double)st->encoder_runs,
               st->decode_ms / (double)(st->tokens_decoded ? st->tokens_decoded : 1),
               fp.segments, peak_rss_mb());
    }
    free(wall);
    wkv_context_free(ctx);
    wkv_model_free(model);
    wav_free(&wav);
    return rc == 0 ? 0 : -1;
}

/* Writes a random-weight model of a preset size (f16, as published) to a temporary
 * file; returns its path (malloc'd) or NULL. */
static char *generate(const char *size)
{
    gen_params p;
    if (gen_params_preset(&p, size) != 0) {
        fprintf(stderr, "unknown size '%s'\n", size);
        return NULL;
    }
    char *path = strdup("/tmp/whisperkv-bench-XXXXXX");
    int fd = path ? mkstemp(path) : -1;
    if (fd < 0) {
        perror("mkstemp");
        free(path);
        return NULL;
    }
    close(fd);
    char *err = NULL;
    if (gen_model_write(path, &p, &err) != 0) {
        fprintf(stderr, "%s\n", err);
        free(err);
        unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--size tiny,base | --model PATH] [--threads N] [--reps N] "
                    "[--tokens N] [--prompt N] [--file WAV] [--compute-type f32,bf16,int8] "
                    "[--audio-ctx N,N] [--type auto|f32|bf16|int8] [--smaps] [--logits PATH]\n", argv0);
}

int main(int argc, char **argv)
{
    cpu_ticks t0;
    cpu_ticks_now(&t0);
    bench_opts bo = {.threads = (int)sysconf(_SC_NPROCESSORS_ONLN), .reps = 5, .tokens = 100,
                     .type = WKV_COMPUTE_AUTO};
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
        else if (!strcmp(argv[i], "--prompt") && i + 1 < argc)
            bo.prompt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model_path = argv[++i];
        else if (!strcmp(argv[i], "--file") && i + 1 < argc)
            bo.file = argv[++i];
        else if (!strcmp(argv[i], "--smaps"))
            bo.smaps = 1;
        else if (!strcmp(argv[i], "--logits") && i + 1 < argc)
            bo.logits_out = argv[++i];
        else if (!strcmp(argv[i], "--compute-type") && i + 1 < argc)
            bo.compute_types = argv[++i];
        else if (!strcmp(argv[i], "--audio-ctx") && i + 1 < argc)
            bo.audio_ctx = argv[++i];
        else if (!strcmp(argv[i], "--type") && i + 1 < argc) {
            int t = wkv_compute_type_parse(argv[++i]);
            if (t < 0) {
                fprintf(stderr, "--type must be auto, f32, bf16 or int8\n");
                return 2;
            }
            bo.type = (wkv_compute_type)t;
        }
        else {
            usage(argv[0]);
            return 2;
        }
    }
    if (bo.threads < 1 || bo.reps < 1 || bo.tokens < 1 || bo.prompt < 0) {
        fprintf(stderr, "threads, reps and tokens must be >= 1, prompt >= 0\n");
        return 2;
    }
    /* in a child process, so that their buffers do not count in our peak RSS */
    double roof[7] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    int fds[2];
    if (pipe(fds) == 0) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            const int part_reps = 10 * bo.reps;
            double v[7] = {sgemm_peak_gflops(bo.threads, bo.reps), stream_gbs(bo.threads, bo.reps),
                           dnnl_peak_gflops(WKV_COMPUTE_F32, bo.threads, bo.reps),
                           dnnl_peak_gflops(WKV_COMPUTE_BF16, bo.threads, bo.reps),
                           dnnl_peak_gflops(WKV_COMPUTE_INT8, bo.threads, bo.reps),
                           part_gflops(0, part_reps), part_gflops(1, part_reps)};
            _exit(write(fds[1], v, sizeof v) == (ssize_t)sizeof v ? 0 : 1);
        }
        close(fds[1]);
        if (pid > 0 && read(fds[0], roof, sizeof roof) != (ssize_t)sizeof roof)
            for (int i = 0; i < 7; i++)
                roof[i] = NAN;
        close(fds[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }
    /* the f32 roofline is the peak of the library that runs the f32 products */
    const int f32_dnnl = !strcmp(wkv_f32_gemm_library(), "oneDNN");
    bo.sgemm_gflops = f32_dnnl ? roof[2] : roof[0];
    bo.stream_gbs = roof[1];
    bo.type_peak[WKV_COMPUTE_AUTO] = NAN;
    bo.type_peak[WKV_COMPUTE_F32] = bo.sgemm_gflops;
    bo.type_peak[WKV_COMPUTE_BF16] = roof[3];
    bo.type_peak[WKV_COMPUTE_INT8] = roof[4];
    char cpu[128];
    cpu_name(cpu, sizeof cpu);
    printf("machine: %s, %d threads; f32 products on %s (%s kernels; OpenBLAS's: %s%s); "
           "f32 peak %.1f GFLOP/s (2048^3, %s on %d threads), streamed read %.1f GB/s "
           "(512 MB, %d threads)\n",
           cpu, bo.threads, wkv_f32_gemm_library(), wkv_f32_gemm_kernels(), wkv_blas_corename(),
           wkv_blas_misses_avx512() ? ", without the CPU's AVX-512" : "", bo.sgemm_gflops,
           f32_dnnl ? "oneDNN matmul" : "OpenBLAS sgemm", bo.threads, bo.stream_gbs, bo.threads);
    printf("f32 libraries side by side: OpenBLAS sgemm %.1f GFLOP/s on %d threads (2048^3); "
           "one encoder part (750 x 384 x 384, one thread): OpenBLAS %.1f, oneDNN %.1f "
           "GFLOP/s\n", roof[0], bo.threads, roof[5], roof[6]);
    if (!isnan(roof[2]))
        printf("oneDNN matmul peaks (2048^3, %d OpenMP threads, weights in its own layout): "
               "f32 %.1f, bf16 %.1f, s8xs8->s32 %.1f GOP/s\n", bo.threads, roof[2], roof[3],
               roof[4]);
    fflush(stdout);

    model_result results[8];
    int n = 0, rc = 0;
    char *list = strdup(model_path ? "" : sizes);
    if (model_path) {
        if (bench_model(model_path, model_path, &bo, &results[n]) == 0)
            n++;
        else
            rc = 1;
        if (rc == 0 && bo.file && bench_file(model_path, model_path, &bo) != 0)
            rc = 1;
    }
    for (char *save = NULL, *s = strtok_r(list, ",", &save); s && n < 8;
         s = strtok_r(NULL, ",", &save)) {
        char *path = generate(s);
        if (!path) {
            rc = 1;
            break;
        }
        char label[64];
        snprintf(label, sizeof label, "%s (f16, random)", s);
        if (bench_model(label, path, &bo, &results[n]) == 0)
            n++;
        else
            rc = 1;
        if (bo.file && bench_file(label, path, &bo) != 0)
            rc = 1;
        unlink(path);
        free(path);
    }
    free(list);
    print_results(results, n, &bo);
    print_steal(&t0);
    return rc;
}
