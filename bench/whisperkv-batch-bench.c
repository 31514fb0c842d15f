/* Batched decoding (issue 32; docs/performance.md, "Batched decoding").
 *
 *   whisperkv-batch-bench MODEL AUDIO.wav [--threads N] [--compute TYPE] [--kv-cache TYPE]
 *                         [--reps R]
 *                         [--steps S] [--batches 1,2,4,8,16] [--whole] [--no-fallback]
 *
 * Decoder steps: the first 16 chunks of AUDIO (plain 30-s chunks, cycled when fewer)
 * are encoded and their cross-KV caches kept; then for each batch size B, S steps of
 * B windows side by side (wkv__decoder_rows: every weight read once per step for the
 * B rows), R times: median ms per step and tokens per second, against B = 1.
 * --whole: the whole file, the reference's sequential greedy long form
 * (wkv_transcribe, default options) against wkv_transcribe_chunks with each batch
 * size, runs alternating, R each: median wall, segments, tokens decoded.
 * --no-fallback: temperature_increment 0 (a random model's windows fall back at every
 * temperature, 25 sampled candidates of 224 tokens each, which hides the greedy search).
 * The first line names the CPU and the libraries. */
#include "decode/batch.h"
#include "net/context.h"
#include "whisperkv_debug.h"
#include "whisperkv.h"
#include "wav.h"
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXB 16

/* Steps of B windows side by side: median ms per step over reps. */
static double steps_ms(wkv_context *ctx, const wkv__cross_kv *const *cross, int B, int steps,
                       int reps, float *logits)
{
    const wkv_specials *sp = wkv_model_specials(wkv_context_model(ctx));
    double t[64];
    for (int r = 0; r < reps; r++) {
        for (int b = 0; b < B; b++)
            ctx->self.n[b] = 0;
        wkv__dec_row rows[MAXB];
        for (int b = 0; b < B; b++)
            rows[b] = (wkv__dec_row){cross[b], NULL, b, sp->sot};
        wkv__decoder_rows(ctx, rows, B, logits);
        double t0 = now_ms();
        for (int s = 0; s < steps; s++) {
            for (int b = 0; b < B; b++)
                rows[b].token = 220 + (s * 7 + b) % 1000; /* text tokens, any */
            if (wkv__decoder_rows(ctx, rows, B, logits) != 0) {
                fprintf(stderr, "decoder step failed\n");
                exit(1);
            }
        }
        t[r] = (now_ms() - t0) / steps;
    }
    return median(t, reps);
}

typedef struct {
    int segments;
    int64_t tokens;
} whole_out;

static int count_seg(const wkv_segment *s, void *user)
{
    (void)s;
    ((whole_out *)user)->segments++;
    return 0;
}

int main(int argc, char **argv)
{
    cpu_ticks t0;
    cpu_ticks_now(&t0);
    const char *model_path = NULL, *audio = NULL, *compute = "auto", *kv = "auto", *batches = "1,2,4,8,16";
    int threads = 2, reps = 3, steps = 32, whole = 0, fallback = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--compute") && i + 1 < argc)
            compute = argv[++i];
        else if (!strcmp(argv[i], "--kv-cache") && i + 1 < argc)
            kv = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
            batches = argv[++i];
        else if (!strcmp(argv[i], "--whole"))
            whole = 1;
        else if (!strcmp(argv[i], "--no-fallback"))
            fallback = 0;
        else if (!model_path)
            model_path = argv[i];
        else if (!audio)
            audio = argv[i];
        else
            model_path = NULL, i = argc;
    }
    if (!model_path || !audio || reps < 1 || reps > 64 || steps < 1 || threads < 1) {
        fprintf(stderr, "usage: whisperkv-batch-bench MODEL AUDIO.wav [--threads N] "
                        "[--compute TYPE] [--kv-cache TYPE] [--reps R] [--steps S] [--batches 1,2,4] [--whole] "
                        "[--no-fallback]\n");
        return 2;
    }
    int bs[16], n_bs = 0;
    for (const char *p = batches; *p && n_bs < 16;) {
        int b = atoi(p);
        if (b < 1 || b > MAXB) {
            fprintf(stderr, "batch sizes 1..%d\n", MAXB);
            return 2;
        }
        bs[n_bs++] = b;
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    char *err = NULL, cpu[128], werr[256];
    wkv_model *m = wkv_model_load(model_path, &err);
    wav_data wav;
    if (!m || wav_read(audio, &wav, werr, sizeof werr) != 0 || wav.rate != 16000) {
        fprintf(stderr, "cannot load: %s\n", m ? "the audio (16 kHz wav)" : err);
        return 1;
    }
    wkv_context *ctx = wkv_context_new(m, threads, &err);
    int ct = wkv_compute_type_parse(compute), kt = wkv_cache_type_parse(kv);
    if (!ctx || ct < 0 || kt < 0 ||
        wkv_context_set_compute_type(ctx, (wkv_compute_type)ct, &err) != 0 ||
        wkv_context_set_cache_type(ctx, (wkv_cache_type)kt, &err) != 0) {
        fprintf(stderr, "context: %s\n", err ? err : "bad --compute or --kv-cache");
        return 1;
    }
    cpu_name(cpu, sizeof cpu);
    const wkv_hparams *hp = wkv_model_hparams(m);
    printf("machine: %s, %d threads; f32 products on %s (%s kernels; OpenBLAS's: %s)\n", cpu,
           threads, wkv_f32_gemm_library(), wkv_f32_gemm_kernels(), wkv_blas_corename());
    printf("model: %s (d %d, %d decoder layers, ftype %d), compute %s, %s caches; audio %s, "
           "%.1f s\n",
           model_path, hp->n_text_state, hp->n_text_layer, hp->ftype,
           wkv_compute_type_name(wkv_context_compute_type(ctx)),
           wkv_cache_type_name(wkv_context_cache_type(ctx)), audio,
           (double)wav.n / 16000);

    /* the windows: the first 16 chunks, cycled */
    wkv_chunk *ch = NULL;
    int nc = wkv_chunks_plain(wav.n, &ch, &err);
    int maxb = 1;
    for (int i = 0; i < n_bs; i++)
        maxb = bs[i] > maxb ? bs[i] : maxb;
    wkv__cross_kv cross[MAXB];
    const wkv__cross_kv *cp[MAXB];
    float *win = malloc((size_t)hp->n_mels * WKV_N_FRAMES * sizeof *win);
    for (int b = 0; b < maxb; b++) {
        wkv_chunk c = ch[b % nc];
        wkv_mel *mel = wkv_mel_compute(m, wav.samples + c.start, (size_t)(c.end - c.start),
                                       threads, NULL);
        wkv_mel_window(mel, 0, (int)(mel->content_frames < 3000 ? mel->content_frames : 3000),
                       WKV_MEL_GLOBAL, win);
        wkv_mel_free(mel);
        wkv_encode(ctx, win);
        cross[b] = ctx->cross;
        cp[b] = &cross[b];
        if (wkv__cross_kv_init(&ctx->cross, cross[b].n_layer, cross[b].n_ctx, cross[b].n_state) ||
            wkv__cross_kv_set_f16(&ctx->cross, cross[b].k16 != NULL)) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
    }
    wkv__self_kv_reserve(&ctx->self, maxb);
    float *logits = malloc((size_t)maxb * hp->n_vocab * sizeof *logits);
    printf("\ndecoder steps (%d steps from position 1, median of %d):\n", steps, reps);
    printf("| batch | ms / step | tokens / s | x batch 1 |\n|---|---|---|---|\n");
    double base = 0;
    for (int i = 0; i < n_bs; i++) {
        double ms = steps_ms(ctx, cp, bs[i], steps, reps, logits);
        double tps = bs[i] * 1000.0 / ms;
        if (bs[i] == 1 || base == 0)
            base = bs[i] == 1 ? tps : base;
        printf("| %d | %.2f | %.1f | %.2f |\n", bs[i], ms, tps, base > 0 ? tps / base : NAN);
        fflush(stdout);
    }
    for (int b = 0; b < maxb; b++)
        wkv__cross_kv_free(&cross[b]);

    if (whole) {
        wkv_options o;
        wkv_options_default(&o);
        if (!fallback)
            o.temperature_increment = 0;
        printf("\nwhole file (median of %d, runs alternating; temperature fallback %s):\n",
               reps, fallback ? "on" : "off");
        printf("| run | wall s | x sequential | segments | tokens decoded |\n|---|---|---|---|---|\n");
        int n_runs = n_bs + 1;
        double t[17][64];
        whole_out out[17];
        memset(out, 0, sizeof out);
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < n_runs; k++) {
                whole_out w = {0, 0};
                const wkv_stats *st = wkv_context_stats(ctx);
                int64_t tok0 = st->tokens_decoded;
                double t0 = now_ms();
                int rc = k == 0 ? wkv_transcribe(ctx, wav.samples, wav.n, &o, count_seg, NULL,
                                                 &w, &err)
                                : wkv_transcribe_chunks(ctx, wav.samples, wav.n, ch, nc,
                                                        bs[k - 1], &o, count_seg, NULL, &w,
                                                        &err);
                t[k][r] = (now_ms() - t0) / 1e3;
                if (rc < 0) {
                    fprintf(stderr, "transcription failed: %s\n", err);
                    return 1;
                }
                w.tokens = st->tokens_decoded - tok0;
                out[k] = w;
            }
        double seq = median(t[0], reps);
        for (int k = 0; k < n_runs; k++) {
            double s = k == 0 ? seq : median(t[k], reps);
            char name[32];
            if (k == 0)
                snprintf(name, sizeof name, "sequential long form");
            else
                snprintf(name, sizeof name, "chunks, batch %d", bs[k - 1]);
            printf("| %s | %.2f | %.2f | %d | %lld |\n", name, s, seq / s, out[k].segments,
                   (long long)out[k].tokens);
        }
    }
    free(logits);
    free(win);
    free(ch);
    wav_free(&wav);
    wkv_context_free(ctx);
    wkv_model_free(m);
    print_steal(&t0);
    return 0;
}
