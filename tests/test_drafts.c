/* drafts: a live run checks the previous run's tokens in one decoder pass (issue 32,
 * item 4; decode/search.c greedy()); the tokens must be those of stepping alone.
 *  - search: for several windows of a random model, wkv__decode_window_draft with the
 *    window's own greedy tokens as the draft (all accepted), a prefix of them, the
 *    tokens with one changed in the middle, the tokens and more, and unrelated tokens
 *    gives exactly wkv_decode_window's tokens, text and no-speech probability; the
 *    full draft is accepted token for token (wkv_stats.draft_accepted), so the pass
 *    was used;
 *  - stream: a live stream over 40 s of audio gives the same finals and partials with
 *    drafts on and off (wkv_debug_set_drafts), on a clock that does not move (forcing
 *    then depends on the audio alone), and checks drafts only when on.
 * Usage: test_drafts MODEL.bin [MODEL2.bin ...] */
#include "decode/search.h"
#include "testutil.h"
#include "whisperkv.h"
#include "whisperkv_debug.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t seed = 4321;

static float *audio(size_t n)
{
    return tu_wandering_tone(&seed, n);
}

static int same(const wkv_window_result *a, const wkv_window_result *b)
{
    return a->n_tokens == b->n_tokens &&
           !memcmp(a->tokens, b->tokens, (size_t)a->n_tokens * sizeof(int)) &&
           !strcmp(a->text, b->text) && a->no_speech_prob == b->no_speech_prob;
}

static void check_search(const wkv_model *m, wkv_compute_type type)
{
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    CHECK(ctx, "context");
    if (!ctx || !tu_compute_here(ctx, type, "search")) {
        wkv_context_free(ctx); /* NULL, or a type this CPU lacks (printed) */
        return;
    }
    const int n_mels = wkv_model_hparams(m)->n_mels;
    float *win = malloc((size_t)n_mels * WKV_N_FRAMES * sizeof *win);
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 60;
    int windows = 0, accepted_all = 0;
    for (int w = 0; w < 4; w++) {
        size_t n = 16000 * (size_t)(4 + 6 * w);
        float *pcm = audio(n);
        wkv_mel *mel = wkv_mel_compute(m, pcm, n, 1, NULL);
        wkv_mel_window(mel, 0, (int)mel->content_frames, WKV_MEL_GLOBAL, win);
        wkv_mel_free(mel);
        free(pcm);
        CHECK(wkv_encode(ctx, win) == 0, "encode");
        /* a short prompt, as a live run's committed text */
        int prompt[3] = {1000 + w, 2000, 3000};
        wkv_window_result plain, got;
        CHECK(wkv_decode_window(ctx, prompt, 3, &o, &plain, NULL) == 0, "plain");
        const int k = plain.n_tokens;
        int *d = malloc((size_t)(k + 20) * sizeof *d);
        for (int variant = 0; variant < 5; variant++) {
            int nd = k;
            memcpy(d, plain.tokens, (size_t)k * sizeof *d);
            if (variant == 1)
                nd = k / 2; /* a prefix */
            else if (variant == 2 && k > 2)
                d[k / 2] = d[k / 2] == 500 ? 501 : 500; /* one differs */
            else if (variant == 3)
                for (int i = 0; i < 20; i++) /* more than the window gives */
                    d[nd++] = 300 + i;
            else if (variant == 4)
                for (int i = 0; i < k; i++) /* unrelated */
                    d[i] = 700 + 13 * i;
            const wkv_stats *st = wkv_context_stats(ctx);
            int64_t acc0 = st->draft_accepted, tok0 = st->draft_tokens;
            CHECK(wkv__decode_window_draft(ctx, prompt, 3, d, nd, &o, &got, NULL) == 0, "draft");
            CHECK(same(&plain, &got), "%s window %d, draft variant %d: %d tokens against %d",
                  wkv_compute_type_name(type), w, variant, got.n_tokens, plain.n_tokens);
            if (variant == 0 && k > 0) {
                CHECK(st->draft_tokens - tok0 > 0, "the draft went through a pass");
                accepted_all += st->draft_accepted - acc0 >= (k < o.sample_len ? k : k - 1);
            }
            wkv_window_result_clear(&got);
        }
        windows++;
        free(d);
        wkv_window_result_clear(&plain);
    }
    CHECK(accepted_all == windows, "every full draft accepted (%d of %d)", accepted_all,
          windows);
    printf("  %s: %d windows x 5 drafts, the tokens of stepping alone\n",
           wkv_compute_type_name(type), windows);
    free(win);
    wkv_context_free(ctx);
}

static void run_stream(const wkv_model *m, const float *pcm, size_t n, int drafts, tu_seglog *log,
                       int64_t *draft_tokens)
{
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    wkv_debug_set_drafts(ctx, drafts);
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 40;
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.commit_policy = WKV_COMMIT_AGREEMENT; /* drafts are agreement's (alignatt forces a prefix) */
    so.step_ms = 1000;
    so.latency_ms = 6000;
    so.clock_ms = tu_still_clock;
    memset(log, 0, sizeof *log);
    wkv_stream *st = wkv_stream_new(ctx, &o, &so, tu_seglog_add, log, NULL);
    CHECK(st, "stream");
    for (size_t at = 0; st && at < n; at += 4000) {
        size_t k = n - at < 4000 ? n - at : 4000;
        CHECK(wkv_stream_push(st, pcm + at, k, (double)(at + k) / 16000, NULL) >= 0, "push");
    }
    CHECK(st && wkv_stream_finish(st, (double)n / 16000, NULL) >= 0, "finish");
    *draft_tokens = wkv_context_stats(ctx)->draft_tokens;
    wkv_stream_free(st);
    wkv_context_free(ctx);
}

static void check_stream(const wkv_model *m)
{
    const size_t n = 40 * 16000;
    float *pcm = malloc(n * sizeof *pcm);
    for (size_t at = 0; at < n; at += 80000) {
        float *a = audio(80000);
        memcpy(pcm + at, a, 80000 * sizeof *a);
        free(a);
    }
    tu_seglog *on = malloc(sizeof *on), *off = malloc(sizeof *off);
    int64_t t_on, t_off;
    run_stream(m, pcm, n, 1, on, &t_on);
    run_stream(m, pcm, n, 0, off, &t_off);
    CHECK(on->len > 0 && !strcmp(on->buf, off->buf), "stream with drafts differs:\n%s---\n%s",
          on->buf, off->buf);
    CHECK(t_on > 0 && t_off == 0, "draft tokens checked: %lld on, %lld off", (long long)t_on,
          (long long)t_off);
    printf("  stream: 40 s, the same segments with and without drafts (%lld draft tokens)\n",
           (long long)t_on);
    free(on);
    free(off);
    free(pcm);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_drafts MODEL.bin [MODEL2.bin ...]\n");
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        wkv_model *m = wkv_model_load(argv[a], NULL);
        CHECK(m, "load %s", argv[a]);
        if (!m)
            continue;
        printf("%s\n", argv[a]);
        check_search(m, WKV_COMPUTE_F32);
        check_search(m, WKV_COMPUTE_INT8);
        if (a == 1) /* the stream once (CI's sanitize stage runs this too) */
            check_stream(m);
        wkv_model_free(m);
    }
    return tu_finish("drafts");
}
