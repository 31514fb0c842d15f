/* batch: batched decoding (issue 32) gives each sequence what it gets alone.
 *  - decoder rows (net/decoder.c wkv__decoder_rows): W windows, each with its own
 *    cross-KV cache, stepped side by side for STEPS tokens give at every step the
 *    logits each window gives decoded alone, within 1e-4 relative, on each compute type
 *    (f32 and half cross caches);
 *  - greedy over windows (decode/batch.c): each window's tokens, text, sums and
 *    no-speech probability equal wkv_decode_window's on that window alone;
 *  - offline batching (longform/batched.c): wkv_transcribe_chunks with batch sizes 1,
 *    2 and 8 report the same segments (text, times, tokens), and each chunk's text is
 *    what encoding and decoding that chunk alone gives (f32, first model); words too
 *    (bf16, second model);
 *  - chunking: plain 30-s chunks, faster-whisper's merge of speech segments, and bad
 *    chunks or batch sizes refused with a message.
 * Usage: test_batch MODEL.bin [MODEL2.bin ...] */
#include "decode/batch.h"
#include "longform/window.h"
#include "net/context.h"
#include "testutil.h"
#include "whisperkv.h"
#include "whisperkv_debug.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 5      /* windows side by side */
#define STEPS 10

static uint32_t seed = 1234;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
}

/* n samples of noisy tones, different per call */
static float *audio(size_t n)
{
    float *x = malloc(n * sizeof *x);
    double f = 200 + 600 * (frand() + 1);
    for (size_t i = 0; i < n; i++)
        x[i] = 0.3f * (float)sin(2 * M_PI * f * (double)i / 16000) + 0.05f * frand();
    return x;
}

/* A window's log-mel from n samples. */
static float *window_mel(const wkv_model *m, const float *pcm, size_t n)
{
    wkv_mel *mel = wkv_mel_compute(m, pcm, n, 1, NULL);
    float *win = malloc((size_t)wkv_model_hparams(m)->n_mels * WKV_N_FRAMES * sizeof *win);
    int size = mel->content_frames < WKV_N_FRAMES ? (int)mel->content_frames : WKV_N_FRAMES;
    wkv_mel_window(mel, 0, size, WKV_MEL_GLOBAL, win);
    wkv_mel_free(mel);
    return win;
}

/* Decoder rows against single sequences, and greedy over windows against
 * wkv_decode_window, on one compute type. */
static void check_rows(const wkv_model *m, wkv_compute_type type)
{
    const wkv_hparams *hp = wkv_model_hparams(m);
    const int V = hp->n_vocab;
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    CHECK(ctx, "context");
    if (!ctx || !tu_compute_here(ctx, type, "rows")) {
        wkv_context_free(ctx); /* NULL, or a type this CPU lacks (printed) */
        return;
    }
    float *mels[W];
    wkv__cross_kv cross[W];
    const wkv__cross_kv *cp[W];
    /* each window's tokens: its own greedy path, so the sequences differ */
    int toks[W][STEPS];
    float *alone = malloc((size_t)W * STEPS * V * sizeof *alone);
    for (int w = 0; w < W; w++) {
        float *pcm = audio(16000 * (3 + 5 * w));
        mels[w] = window_mel(m, pcm, 16000 * (3 + 5 * w));
        free(pcm);
        CHECK(wkv_encode(ctx, mels[w]) == 0, "encode %d", w);
        wkv_decode_reset(ctx);
        int tok = wkv_model_specials(m)->sot;
        for (int s = 0; s < STEPS; s++) {
            float *lg = alone + ((size_t)w * STEPS + s) * V;
            CHECK(wkv_decode(ctx, &tok, 1, lg) == 0, "step");
            toks[w][s] = tok;
            int best = 0;
            for (int i = 1; i < V; i++)
                best = lg[i] > lg[best] ? i : best;
            tok = best;
        }
        /* keep this window's cache: move it out, a fresh one in */
        cross[w] = ctx->cross;
        cp[w] = &cross[w];
        CHECK(wkv__cross_kv_init(&ctx->cross, cross[w].n_layer, cross[w].n_ctx,
                                 cross[w].n_state) == 0 &&
                  wkv__cross_kv_set_f16(&ctx->cross, cross[w].k16 != NULL) == 0,
              "a new cache");
    }
    /* side by side: every window one token a step, each its own slot and cache */
    CHECK(wkv__self_kv_reserve(&ctx->self, W) == 0, "reserve");
    for (int w = 0; w < W; w++)
        ctx->self.n[w] = 0;
    float *lg = malloc((size_t)W * V * sizeof *lg);
    double worst = 0;
    for (int s = 0; s < STEPS; s++) {
        wkv__dec_row rows[W];
        for (int w = 0; w < W; w++)
            rows[w] = (wkv__dec_row){cp[w], NULL, w, toks[w][s]};
        CHECK(wkv__decoder_rows(ctx, rows, W, lg) == 0, "rows step %d", s);
        for (int w = 0; w < W; w++) {
            double e = tu_rel_err(lg + (size_t)w * V, alone + ((size_t)w * STEPS + s) * V,
                                  (size_t)V);
            worst = e > worst ? e : worst;
        }
    }
    CHECK(worst < 1e-4, "%s: batched rows differ from single steps by %.3g relative",
          wkv_compute_type_name(type), worst);
    printf("  %s: %d windows x %d steps, logits within %.2g relative of each alone\n",
           wkv_compute_type_name(type), W, STEPS, worst);
    /* two rows on one slot are refused */
    wkv__dec_row dup[2] = {{cp[0], NULL, 0, 1}, {cp[1], NULL, 0, 2}};
    CHECK(wkv__decoder_rows(ctx, dup, 2, lg) == -1, "two rows on one slot refused");

    /* greedy over windows against wkv_decode_window, window by window */
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 40;
    wkv_window_result got[W];
    char *err = NULL;
    CHECK(wkv__decode_windows(ctx, cp, W, &o, got, &err) == 0, "decode windows: %s",
          err ? err : "");
    for (int w = 0; w < W; w++) {
        wkv__cross_kv mine = ctx->cross;
        ctx->cross = cross[w];
        wkv_window_result one;
        CHECK(wkv_decode_window(ctx, NULL, 0, &o, &one, NULL) == 0, "alone %d", w);
        ctx->cross = mine;
        int same = one.n_tokens == got[w].n_tokens &&
                   !memcmp(one.tokens, got[w].tokens, (size_t)one.n_tokens * sizeof(int));
        CHECK(same, "%s window %d: batched tokens (%d) differ from alone (%d)",
              wkv_compute_type_name(type), w, got[w].n_tokens, one.n_tokens);
        CHECK(same && !strcmp(one.text, got[w].text), "text");
        CHECK(fabs(one.sum_logprob - got[w].sum_logprob) < 1e-3 * (1 + fabs(one.sum_logprob)),
              "sum_logprob %f vs %f", got[w].sum_logprob, one.sum_logprob);
        CHECK(fabs(one.no_speech_prob - got[w].no_speech_prob) < 1e-5, "no_speech %g vs %g",
              got[w].no_speech_prob, one.no_speech_prob);
        CHECK(fabs(one.compression_ratio - got[w].compression_ratio) < 1e-9, "ratio");
        wkv_window_result_clear(&one);
        wkv_window_result_clear(&got[w]);
    }
    o.beam_size = 2;
    CHECK(wkv__decode_windows(ctx, cp, W, &o, got, &err) == -1 && err, "beam refused");
    free(err);
    for (int w = 0; w < W; w++) {
        wkv__cross_kv_free(&cross[w]);
        free(mels[w]);
    }
    free(lg);
    free(alone);
    wkv_context_free(ctx);
}

/* Segments of a transcription, as text lines. */
typedef struct {
    char buf[1 << 16];
    size_t len;
    int n;
} seglog;

static int log_seg(const wkv_segment *s, void *user)
{
    seglog *l = user;
    int k = snprintf(l->buf + l->len, sizeof l->buf - l->len, "%lld %.2f %.2f %d|%s|",
                     (long long)s->seek, s->start, s->end, s->n_tokens, s->text);
    for (int i = 0; i < s->n_words && k > 0; i++)
        k += snprintf(l->buf + l->len + k, sizeof l->buf - l->len - k, "%s@%.2f-%.2f;",
                      s->words[i].word, s->words[i].start, s->words[i].end);
    if (k > 0 && l->len + k + 1 < sizeof l->buf) {
        l->len += (size_t)k;
        l->buf[l->len++] = '\n';
        l->buf[l->len] = 0;
    }
    l->n++;
    return 0;
}

static void check_chunks(const wkv_model *m, wkv_compute_type type, int words)
{
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    CHECK(ctx, "context");
    /* a type this CPU lacks (printed): the chunks on f32 instead */
    if (ctx && !tu_compute_here(ctx, type, "chunks"))
        type = wkv_context_compute_type(ctx);
    /* 70 s: three plain chunks, the last 10 s */
    const size_t n = 70 * 16000;
    float *pcm = malloc(n * sizeof *pcm);
    for (size_t at = 0; at < n; at += 80000) {
        float *a = audio(80000);
        memcpy(pcm + at, a, 80000 * sizeof *a);
        free(a);
    }
    wkv_chunk *ch = NULL;
    int nc = wkv_chunks_plain(n, &ch, NULL);
    CHECK(nc == 3 && ch[2].start == 960000 && ch[2].end == (int64_t)n, "plain chunks %d", nc);
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 30;
    o.word_timestamps = words;
    seglog logs[3];
    const int sizes[3] = {1, 2, 8}; /* 2: a full batch and a short one */
    for (int k = 0; k < 3; k++) {
        memset(&logs[k], 0, sizeof logs[k]);
        char *err = NULL;
        int got = wkv_transcribe_chunks(ctx, pcm, n, ch, nc, sizes[k], &o, log_seg, NULL,
                                        &logs[k], &err);
        CHECK(got == logs[k].n && got > 0, "batch %d: %d segments (%s)", sizes[k], got,
              err ? err : "");
        free(err);
    }
    CHECK(!strcmp(logs[0].buf, logs[1].buf) && !strcmp(logs[0].buf, logs[2].buf),
          "%s%s: batch sizes 1, 2, 8 differ:\n%s---\n%s---\n%s",
          wkv_compute_type_name(type), words ? " words" : "", logs[0].buf, logs[1].buf,
          logs[2].buf);
    /* each chunk alone: its text is the concatenation of its segments' */
    if (!words) {
        for (int c = 0; c < nc; c++) {
            float *win = window_mel(m, pcm + ch[c].start, (size_t)(ch[c].end - ch[c].start));
            wkv_window_result r;
            /* the greedy search, then the fallback temperatures if it needs them */
            CHECK(wkv_encode(ctx, win) == 0 && wkv__decode_fallback(ctx, &o, NULL, 0, 0, &r,
                                                                   NULL) == 0,
                  "alone");
            /* the batched segments of this chunk, their texts joined */
            char want[1 << 14] = "", line[1 << 14];
            long long seek = ch[c].start / WKV_HOP;
            for (const char *p = logs[2].buf; *p;) {
                const char *e = strchr(p, '\n');
                size_t len = (size_t)(e - p);
                memcpy(line, p, len);
                line[len] = 0;
                p = e + 1;
                long long s;
                if (sscanf(line, "%lld", &s) == 1 && s == seek) {
                    char *t = strchr(line, '|') + 1;
                    *strchr(t, '|') = 0;
                    strcat(want, t);
                }
            }
            char *alone = wkv_tokens_to_text(m, r.tokens, r.n_tokens, 1);
            CHECK(!strcmp(alone, want), "chunk %d alone '%s', batched '%s'", c, alone, want);
            free(alone);
            wkv_window_result_clear(&r);
            free(win);
        }
    }
    printf("  %s%s: %d chunks, %d segments, the same with batch sizes 1, 2, 8\n",
           wkv_compute_type_name(type), words ? " words" : "", nc, logs[0].n);
    free(ch);
    free(pcm);
    wkv_context_free(ctx);
}

static void check_chunking(const wkv_model *m)
{
    wkv_chunk *ch = NULL;
    char *err = NULL;
    CHECK(wkv_chunks_plain(0, &ch, NULL) == 0 && !ch, "no samples, no chunks");
    /* speech in centiseconds: merged while within 30 s; a long one cut */
    wkv_vad_segment segs[] = {{100, 500}, {800, 2500}, {2600, 3200}, {3300, 3500},
                              {4000, 11000}, {11100, 11200}};
    int nc = wkv_chunks_from_speech(segs, 6, 200 * 16000, &ch, NULL);
    const wkv_chunk want[] = {{16000, 400000}, {416000, 560000}, {640000, 1120000},
                              {1120000, 1600000}, {1600000, 1792000}};
    CHECK(nc == 5, "speech chunks: %d", nc);
    for (int i = 0; i < nc && nc == 5; i++)
        CHECK(ch[i].start == want[i].start && ch[i].end == want[i].end,
              "chunk %d [%lld, %lld) want [%lld, %lld)", i, (long long)ch[i].start,
              (long long)ch[i].end, (long long)want[i].start, (long long)want[i].end);
    free(ch);
    /* clamped to the input */
    nc = wkv_chunks_from_speech(segs, 2, 300000, &ch, NULL);
    CHECK(nc == 1 && ch[0].start == 16000 && ch[0].end == 300000, "clamped: %d", nc);
    free(ch);
    /* bad requests */
    wkv_context *ctx = wkv_context_new(m, 1, NULL);
    wkv_options o;
    wkv_options_default(&o);
    float pcm[32000] = {0};
    wkv_chunk bad[] = {{0, 16000}, {8000, 20000}};
    CHECK(wkv_transcribe_chunks(ctx, pcm, 32000, bad, 2, 2, &o, NULL, NULL, NULL, &err) == -1 &&
              err && strstr(err, "overlap"),
          "overlapping chunks refused: %s", err ? err : "");
    free(err);
    err = NULL;
    CHECK(wkv_transcribe_chunks(ctx, pcm, 32000, bad, 1, 65, &o, NULL, NULL, NULL, &err) == -1 &&
              err,
          "batch size 65 refused");
    free(err);
    err = NULL;
    wkv_chunk past[] = {{0, 40000}};
    CHECK(wkv_transcribe_chunks(ctx, pcm, 32000, past, 1, 1, &o, NULL, NULL, NULL, &err) == -1,
          "a chunk past the input refused");
    free(err);
    err = NULL;
    /* no chunks (VAD found no speech): 0 segments, and nothing allocated for them */
    wkv_debug_alloc_fail(1);
    int none = wkv_transcribe_chunks(ctx, pcm, 32000, NULL, 0, 4, &o, NULL, NULL, NULL, &err);
    int allocated = wkv_debug_alloc_failed();
    wkv_debug_alloc_fail(0);
    CHECK(none == 0 && !allocated, "no chunks: %d segments (%s), %s", none, err ? err : "",
          allocated ? "an allocation" : "no allocation");
    free(err);
    wkv_context_free(ctx);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_batch MODEL.bin [MODEL2.bin ...]\n");
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        char *err = NULL;
        wkv_model *m = wkv_model_load(argv[a], &err);
        CHECK(m, "load %s: %s", argv[a], err ? err : "");
        free(err);
        if (!m)
            continue;
        printf("%s\n", argv[a]);
        check_rows(m, WKV_COMPUTE_F32);
        check_rows(m, WKV_COMPUTE_INT8);
        /* the chunks on one compute type per model (CI's sanitize stage runs this too) */
        if (a == 1) {
            check_chunks(m, WKV_COMPUTE_F32, 0);
            check_chunking(m);
        } else {
            check_chunks(m, WKV_COMPUTE_BF16, 1);
        }
        wkv_model_free(m);
    }
    return tu_finish("batch");
}
