/* Side-by-side driver for whisper.cpp (built by scripts/whispercpp-bench.sh, not by
 * meson): times whisper.cpp's encoder and its cached decoder on a model file through
 * whisper.h's public C API only, the way bench/whisperkv-bench.c times ours.
 *
 *   whispercpp_bench MODEL [--threads N] [--reps R] [--tokens T] [--file WAV]
 *
 *  - encoder: a deterministic 30-s log-mel (whisper_set_mel), whisper_encode once to
 *    warm up, then R times; the median ms.  whisper_encode includes the cross-attention
 *    K/V of the window (whisper.cpp computes them with the encoder);
 *  - decoder, per rep: the start-of-transcript sequence as whisper.cpp builds it with
 *    no timestamps (multilingual: sot, <|en|>, transcribe, notimestamps; English-only:
 *    sot, notimestamps) as one whisper_decode batch with n_past 0 (this resets the
 *    self-attention cache), then T single-token whisper_decode calls with n_past
 *    growing; each token is the argmax of the previous call's logits (taken outside the
 *    timed call: the cost does not depend on the id).  Reported: the median ms per
 *    token over all R*T calls and the median prompt-batch ms.  One warm-up rep first.
 *  - --file WAV (16-kHz 16-bit PCM, read by tests/wav.c; channels averaged): the whole recording through whisper_full, as
 *    whisperkv-bench --file runs ours: greedy, temperature 0 only (temperature_inc 0:
 *    no fallback), English, timestamps on, previous text as the prompt (no_context
 *    false: the reference's condition_on_previous_text), nothing printed; the median
 *    wall time of R runs (after none: the first run is timed too, as ours is), the
 *    segments and the text tokens of the last run, and whisper.cpp's own timings of
 *    the last run on stderr (its encoder runs are the windows it decoded).
 * Model loading: whisper_context_default_params() with use_gpu = false; flash_attn
 * keeps its default (true), which is also whisper-cli's default (-nfa turns it off).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "wav.h" /* tests/wav.c: the project's WAV reader */
#include "whisper.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

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

static whisper_token argmax(const float *logits, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best])
            best = i;
    return best;
}

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s MODEL [--threads N] [--reps R] [--tokens T] [--file WAV]\n",
            argv0);
    return 2;
}

/* --file: the whole recording through whisper_full, R times; 0 or 1. */
static int bench_file(struct whisper_context *ctx, const char *path, int threads, int reps)
{
    wav_data wav;
    char msg[256];
    if (wav_read(path, &wav, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s: %s\n", path, msg);
        return 1;
    }
    if (wav.rate != 16000 || wav.n > 1u << 30) {
        fprintf(stderr, "%s: %d Hz; --file takes 16-kHz audio\n", path, wav.rate);
        wav_free(&wav);
        return 1;
    }
    const float *pcm = wav.samples;
    const int n = (int)wav.n;
    double *wall = malloc((size_t)reps * sizeof *wall);
    if (!wall) {
        wav_free(&wav);
        return 1;
    }
    struct whisper_full_params p = whisper_full_default_params(WHISPER_SAMPLING_GREEDY);
    p.n_threads = threads;
    p.language = "en";
    p.temperature_inc = 0.0f;
    p.no_context = false;
    p.print_progress = p.print_realtime = p.print_timestamps = p.print_special = false;
    int segments = 0, text_tokens = 0;
    for (int k = 0; k < reps; k++) {
        whisper_reset_timings(ctx); /* the last run's counts below: its windows, tokens */
        double t0 = now_ms();
        if (whisper_full(ctx, p, pcm, n) != 0) {
            fprintf(stderr, "whisper_full failed\n");
            wav_free(&wav);
            free(wall);
            return 1;
        }
        wall[k] = (now_ms() - t0) / 1e3;
        segments = whisper_full_n_segments(ctx);
        text_tokens = 0;
        for (int i = 0; i < segments; i++)
            for (int j = 0; j < whisper_full_n_tokens(ctx, i); j++)
                text_tokens += whisper_full_get_token_id(ctx, i, j) < whisper_token_eot(ctx);
    }
    whisper_print_timings(ctx); /* stderr: encoder runs (windows), decoder runs */
    printf("file ms per rep:");
    for (int k = 0; k < reps; k++)
        printf(" %.0f", wall[k] * 1e3);
    double audio_s = n / 16000.0, w = median(wall, reps);
    printf("\nwhispercpp %s file=%s audio_s=%.1f threads=%d reps=%d wall_s_median=%.2f "
           "rtf=%.3f segments=%d text_tokens=%d\n", whisper_version(), path, audio_s, threads,
           reps, w, w / audio_s, segments, text_tokens);
    wav_free(&wav);
    free(wall);
    return 0;
}

/* Resident size now (/proc/self/statm) and the process's peak (ru_maxrss), MB: the
 * same two figures whisperkv-bench reports after decoding. */
static void rss_mb(double *now, double *peak)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    int ok = f && fscanf(f, "%ld %ld", &size, &res) == 2;
    if (f)
        fclose(f);
    *now = ok ? (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0 : -1;
    struct rusage ru;
    *peak = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss / 1024.0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-')
        return usage(argv[0]);
    const char *model = argv[1];
    int threads = 2, reps = 5, tokens = 128;
    const char *file = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
            tokens = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--file") && i + 1 < argc)
            file = argv[++i];
        else
            return usage(argv[0]);
    }
    if (threads < 1 || reps < 1 || tokens < 1) {
        fprintf(stderr, "threads, reps and tokens must be >= 1\n");
        return 2;
    }

    printf("whisper.cpp %s, system info: %s\n", whisper_version(), whisper_print_system_info());

    struct whisper_context_params cp = whisper_context_default_params();
    cp.use_gpu = false;
    struct whisper_context *ctx = whisper_init_from_file_with_params(model, cp);
    if (!ctx) {
        fprintf(stderr, "cannot load %s\n", model);
        return 1;
    }
    printf("model %s: type %s, n_mels %d, n_vocab %d, multilingual %d, flash_attn %d\n", model,
           whisper_model_type_readable(ctx), whisper_model_n_mels(ctx), whisper_n_vocab(ctx),
           whisper_is_multilingual(ctx), (int)cp.flash_attn);

    if (file) {
        int rc = bench_file(ctx, file, threads, reps);
        whisper_free(ctx);
        return rc;
    }

    /* 30 s = 3000 frames of 10 ms; a smooth deterministic pattern in the range of
     * whisper's normalized log-mel (about -1.5 .. 1.5), layout [n_mel][n_len] */
    const int n_mel = whisper_model_n_mels(ctx), n_len = 3000;
    float *mel = malloc((size_t)n_mel * n_len * sizeof *mel);
    double *enc_t = malloc((size_t)reps * sizeof *enc_t);
    double *prompt_t = malloc((size_t)reps * sizeof *prompt_t);
    double *tok_t = malloc((size_t)reps * tokens * sizeof *tok_t);
    if (!mel || !enc_t || !prompt_t || !tok_t) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int j = 0; j < n_mel; j++)
        for (int i = 0; i < n_len; i++)
            mel[(size_t)j * n_len + i] =
                0.8f * (float)((i * 7 + j * 13) % 97) / 97.0f - 0.6f + 0.01f * (float)(j % 5);
    if (whisper_set_mel(ctx, mel, n_len, n_mel) != 0) {
        fprintf(stderr, "whisper_set_mel failed\n");
        return 1;
    }

    for (int k = -1; k < reps; k++) { /* k = -1: warm-up */
        double t0 = now_ms();
        if (whisper_encode(ctx, 0, threads) != 0) {
            fprintf(stderr, "whisper_encode failed\n");
            return 1;
        }
        if (k >= 0)
            enc_t[k] = now_ms() - t0;
    }

    whisper_token prompt[4];
    int n_prompt = 0;
    prompt[n_prompt++] = whisper_token_sot(ctx);
    if (whisper_is_multilingual(ctx)) {
        prompt[n_prompt++] = whisper_token_lang(ctx, whisper_lang_id("en"));
        prompt[n_prompt++] = whisper_token_transcribe(ctx);
    }
    prompt[n_prompt++] = whisper_token_not(ctx);
    if (n_prompt + tokens > whisper_n_text_ctx(ctx)) {
        fprintf(stderr, "--tokens: at most %d\n", whisper_n_text_ctx(ctx) - n_prompt);
        return 2;
    }

    const int n_vocab = whisper_n_vocab(ctx);
    for (int k = -1; k < reps; k++) { /* k = -1: warm-up */
        double t0 = now_ms();
        if (whisper_decode(ctx, prompt, n_prompt, 0, threads) != 0) {
            fprintf(stderr, "whisper_decode (prompt) failed\n");
            return 1;
        }
        double t1 = now_ms();
        /* the logits of the last prompt row */
        whisper_token tok = argmax(whisper_get_logits(ctx) + (size_t)(n_prompt - 1) * n_vocab,
                                   n_vocab);
        for (int i = 0; i < tokens; i++) {
            double a = now_ms();
            if (whisper_decode(ctx, &tok, 1, n_prompt + i, threads) != 0) {
                fprintf(stderr, "whisper_decode (token %d) failed\n", i);
                return 1;
            }
            double b = now_ms();
            if (k >= 0)
                tok_t[(size_t)k * tokens + i] = b - a;
            tok = argmax(whisper_get_logits(ctx), n_vocab);
        }
        if (k >= 0)
            prompt_t[k] = t1 - t0;
    }

    printf("encoder ms per rep:");
    for (int k = 0; k < reps; k++)
        printf(" %.1f", enc_t[k]);
    printf("\nprompt ms per rep:");
    for (int k = 0; k < reps; k++)
        printf(" %.2f", prompt_t[k]);
    printf("\ndecode ms per token, median of each rep:");
    for (int k = 0; k < reps; k++) /* sorts each rep's slice: the overall median is the same */
        printf(" %.2f", median(tok_t + (size_t)k * tokens, tokens));
    printf("\n");
    double enc = median(enc_t, reps), prompt_ms = median(prompt_t, reps);
    double tok = median(tok_t, reps * tokens), rss, peak;
    rss_mb(&rss, &peak);
    printf("whispercpp %s model=%s threads=%d reps=%d tokens=%d prompt_tokens=%d "
           "encoder_ms_median=%.1f decode_ms_per_token_median=%.2f prompt_ms=%.2f "
           "rss_after_decoding_mb=%.0f peak_rss_mb=%.0f\n",
           whisper_version(), model, threads, reps, tokens, n_prompt, enc, tok, prompt_ms, rss,
           peak);

    whisper_free(ctx);
    free(mel);
    free(enc_t);
    free(prompt_t);
    free(tok_t);
    return 0;
}
