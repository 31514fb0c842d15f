/* The live stream's alignatt commit policy (whisperkv_stream.h commit_policy;
 * core/stream/stream_alignatt.c): the stop rule and the words it commits white-box, then
 * a stream over a real recording with the generated micro model: one run decides
 * (commits unforced, exactly the words before the stop), the committed words' audio
 * stays held (their tokens the next run's forced prefix: no text is said twice), finish
 * commits everything; segment mode commits the same text; agreement, the default, is
 * untouched by the new options; bad options are refused.  Usage: test_stream_alignatt
 * MODEL.bin (the generated micro model); the recording comes from shared/. */
#include "decode/search.h"
#include "stream/stream_alignatt.h"
#include "testutil.h"
#include "wav.h"
#include "whisperkv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ white-box */

/* n rows of F frames, row i peaking at peak[i] (a gentle slope elsewhere) */
static float *peaks(const int *peak, int n, int F)
{
    float *a = calloc((size_t)(n + 1) * F, sizeof *a);
    for (int i = 0; i < n; i++)
        for (int f = 0; f < F; f++)
            a[(size_t)i * F + f] = f == peak[i] ? 5.0f : -0.001f * (float)abs(f - peak[i]);
    return a;
}

static void test_scan(void)
{
    static const struct {
        int peak[5], n, F, skip, threshold, stop, rewind;
        const char *what;
    } cases[] = {
        {{10, 30, 50, 96, 99}, 5, 100, 0, 5, 3, 0, "the first token within 5 frames"},
        {{10, 30, 50, 96, 99}, 5, 100, 0, 4, 3, 0, "exactly the threshold stops"},
        {{10, 30, 50, 96, 99}, 5, 100, 0, 3, 4, 0, "a smaller threshold: a later token"},
        {{10, 30, 50, 96, 98}, 5, 100, 0, 1, 5, 0, "nothing that close: no stop"},
        {{10, 98, 50, 60, 99}, 5, 100, 2, 5, 4, 0, "the prefix is not looked at"},
        {{10, 300, 99, 350, 399}, 5, 400, 0, 5, 0, 1, "a rewind of 201 frames"},
        {{10, 300, 100, 350, 399}, 5, 400, 0, 5, 4, 0, "200 frames back is no rewind"},
        {{10, 300, 99, 350, 399}, 5, 400, 2, 5, 4, 0, "no rewind from a prefix token"},
        {{398, 20, 0, 0, 0}, 2, 400, 0, 5, 0, 0, "the stop comes before a rewind"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        float *a = peaks(cases[c].peak, cases[c].n, cases[c].F);
        wkv__alignatt aa;
        wkv__alignatt_scan(a, cases[c].n, cases[c].F, cases[c].skip, cases[c].threshold, &aa);
        CHECK(aa.stop == cases[c].stop && aa.rewind == cases[c].rewind,
              "scan, %s: stop %d rewind %d, expected %d %d", cases[c].what, aa.stop, aa.rewind,
              cases[c].stop, cases[c].rewind);
        free(a);
    }
}

static void test_words(void)
{
    /* 4 words: tokens [0,1) [1,3) [3,4) [4,6) */
    static const int off[5] = {0, 1, 3, 4, 6};
    static const struct {
        int stop, rewind, at_end, seen, want;
        const char *what;
    } cases[] = {
        {3, 0, 0, 0, 2, "a stop on a word's first token: the words before it"},
        {2, 0, 0, 0, 1, "a stop inside a word: that word waits"},
        {5, 0, 0, 0, 3, "a stop inside the last word"},
        {5, 0, 0, 1, 3, "a stop inside the last word, seen before: it waits"},
        {0, 0, 0, 0, 0, "a stop on the first token: nothing"},
        {6, 0, 0, 0, 3, "no stop: every word but the last, not seen before"},
        {6, 0, 0, 1, 4, "no stop, the previous run ended on the same words: every word"},
        {6, 0, 1, 0, 4, "no stop, at the end: every word"},
        {2, 0, 1, 0, 2, "at the end the stop's word goes too"},
        {0, 0, 1, 0, 0, "at the end, a stop on the first token: nothing"},
        {0, 1, 0, 1, 0, "a rewind: nothing"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        wkv__alignatt aa = {cases[c].stop, cases[c].rewind};
        int got = wkv__alignatt_words(off, 4, &aa, cases[c].at_end, cases[c].seen);
        CHECK(got == cases[c].want, "words, %s: %d, expected %d", cases[c].what, got,
              cases[c].want);
    }
}

/* The decoder's forced prefix (search.c wkv__decode_window_prefix): greedy after a
 * prefix of a window's own tokens gives the rest of them; a prefix that does not fit,
 * or a bad token, is an error. */
static void test_prefix(wkv_context *ctx, const wav_data *w)
{
    const wkv_model *m = wkv_context_model(ctx);
    float *win = malloc((size_t)wkv_model_hparams(m)->n_mels * WKV_N_FRAMES * sizeof *win);
    wkv_mel *mel = wkv_mel_compute(m, w->samples, w->n, 1, NULL);
    wkv_mel_window(mel, 0, (int)mel->content_frames, WKV_MEL_GLOBAL, win);
    wkv_mel_free(mel);
    CHECK(wkv_encode(ctx, win) == 0, "encode");
    free(win);
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 16;
    o.timestamps = 0;
    wkv_window_result a, b;
    CHECK(wkv_decode_window(ctx, NULL, 0, &o, &a, NULL) == 0 && a.n_tokens > 8, "decode");
    for (int k = 1; k <= 5; k += 4) {
        CHECK(wkv__decode_window_prefix(ctx, NULL, 0, a.tokens, k, NULL, 0, &o, &b, NULL) == 0,
              "decode after a prefix of %d", k);
        int same = b.n_tokens >= a.n_tokens - k;
        for (int i = 0; same && i < a.n_tokens - k; i++)
            same = b.tokens[i] == a.tokens[k + i];
        CHECK(same, "after a prefix of %d tokens: %d tokens, not the window's rest", k,
              b.n_tokens);
        wkv_window_result_clear(&b);
    }
    int bad = -3;
    char *err = NULL;
    CHECK(wkv__decode_window_prefix(ctx, NULL, 0, &bad, 1, NULL, 0, &o, &b, &err) != 0 && err,
          "a bad prefix token was taken");
    free(err);
    err = NULL;
    int *many = calloc(1000, sizeof *many);
    CHECK(wkv__decode_window_prefix(ctx, NULL, 0, many, 1000, NULL, 0, &o, &b, &err) != 0 && err,
          "a prefix longer than the context was taken");
    free(err);
    free(many);
    wkv_window_result_clear(&a);
}

/* ------------------------------------------------------------------ a stream */

typedef struct {
    char text[8192];
    int finals, forced, words, runs, bad_runs, trimmed_runs, end_all, unordered, at_end;
    int64_t max_held; /* the most audio a run held (samples) */
    double last_end;
    int ftok[4096], n_ftok; /* the finals' tokens */
    /* the last run on audio from the start after a commit: its samples, the tokens
     * committed before it (its forced prefix), its hypothesis */
    int64_t probe_n;
    int probe_prefix, probe_tok[64], probe_ntok;
} log_t;

static void on_run(const wkv_stream_run *r, void *user)
{
    log_t *l = user;
    l->runs++;
    if (r->base == 0 && !r->at_end && l->n_ftok > 0 && r->n_pieces == 1 &&
        r->pieces[0].n_tokens <= 64) {
        l->probe_n = r->n;
        l->probe_prefix = l->n_ftok;
        l->probe_ntok = r->pieces[0].n_tokens;
        memcpy(l->probe_tok, r->pieces[0].tokens, (size_t)l->probe_ntok * sizeof(int));
    }
    if (r->at_end) {
        l->at_end = 1;
        /* the words up to the stop (4 frames; its word too), unforced; the rest dropped */
        l->end_all = r->n_words_committed == r->n_words_agreed && r->forced;
        return;
    }
    l->max_held = r->n > l->max_held ? r->n : l->max_held;
    /* one run decides: the words before the stop, all of them unforced (no forcing here) */
    if (r->forced || r->n_words_committed != r->n_words_agreed ||
        r->n_words_committed > r->n_words)
        l->bad_runs++;
    /* the committed words' audio stays: nothing is trimmed under 24 s */
    if (r->new_base != 0 && r->base + r->pending < 20 * WKV_SAMPLE_RATE)
        l->trimmed_runs++;
}

static void on_seg(const wkv_stream_segment *s, void *user)
{
    log_t *l = user;
    if (!s->final)
        return;
    l->finals++;
    l->forced += s->forced;
    l->words += s->n_words;
    if (s->start < l->last_end - 1e-9)
        l->unordered++;
    l->last_end = s->end;
    strncat(l->text, s->text, sizeof l->text - strlen(l->text) - 1);
    for (int i = 0; i < s->n_tokens && l->n_ftok < 4096; i++)
        l->ftok[l->n_ftok++] = s->tokens[i];
}

static int max_held_ms; /* wkv_stream_options.max_held_ms of the next open_stream */

static wkv_stream *open_stream(wkv_context *ctx, const wkv_options *o, int policy, int thr,
                               log_t *l, char **err)
{
    memset(l, 0, sizeof *l);
    l->last_end = -INFINITY;
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.step_ms = 1000;
    so.latency_ms = 30000; /* no forcing before the end */
    so.clock_ms = tu_still_clock;
    so.on_run = on_run;
    so.run_user = l;
    so.commit_policy = policy;
    if (thr != -1) /* -1: the default */
        so.frame_threshold_ms = thr;
    so.max_held_ms = max_held_ms;
    return wkv_stream_new(ctx, o, &so, on_seg, l, err);
}

static void run_clip(wkv_context *ctx, const wkv_options *o, int policy, int thr,
                     const wav_data *w, log_t *l)
{
    char *err = NULL;
    wkv_stream *st = open_stream(ctx, o, policy, thr, l, &err);
    CHECK(st != NULL, "wkv_stream_new: %s", err ? err : "?");
    free(err);
    if (!st)
        return;
    const size_t chunk = WKV_SAMPLE_RATE / 4;
    for (size_t i = 0; i < w->n; i += chunk) {
        size_t c = w->n - i < chunk ? w->n - i : chunk;
        err = NULL;
        CHECK(wkv_stream_push(st, w->samples + i, c, (double)(i + c) / WKV_SAMPLE_RATE, &err) >= 0,
              "push: %s", err ? err : "?");
        free(err);
    }
    err = NULL;
    CHECK(wkv_stream_finish(st, (double)w->n / WKV_SAMPLE_RATE, &err) >= 0, "finish: %s",
          err ? err : "?");
    free(err);
    CHECK(wkv_stream_base(st) == wkv_stream_length(st), "finish left audio held: %lld of %lld",
          (long long)wkv_stream_base(st), (long long)wkv_stream_length(st));
    wkv_stream_free(st);
}

static void test_stream(wkv_context *ctx, wkv_options o, const wav_data *w)
{
    log_t a, s, g1, g2;
    o.word_timestamps = 1;
    const int64_t passes0 = wkv_context_stats(ctx)->align_passes;
    run_clip(ctx, &o, WKV_COMMIT_ALIGNATT, -1, w, &a);
    /* the stop rule reads the word pass's matrix: one alignment pass a run at most */
    const int64_t passes = wkv_context_stats(ctx)->align_passes - passes0;
    CHECK(passes > 0 && passes <= a.runs, "%lld alignment passes for %d runs",
          (long long)passes, a.runs);
    CHECK(a.finals > 1 && a.words > 5, "alignatt committed %d finals, %d words", a.finals,
          a.words);
    CHECK(a.bad_runs == 0, "%d runs committed other than the words before the stop, or forced",
          a.bad_runs);
    CHECK(a.forced == 0, "%d forced finals without a forced run", a.forced);
    CHECK(a.trimmed_runs == 0, "%d runs trimmed the audio held under 20 s", a.trimmed_runs);
    CHECK(a.unordered == 0, "%d finals start before the one before ends (text said twice?)",
          a.unordered);
    CHECK(a.end_all, "the last run at finish committed other than the words up to its stop");
    /* the run decoded after the committed tokens: the same decoding by hand */
    CHECK(a.probe_prefix > 0, "no run after a commit on audio from the start");
    if (a.probe_prefix > 0) {
        const wkv_model *m = wkv_context_model(ctx);
        int size = (int)(a.probe_n / WKV_HOP);
        float *win = malloc((size_t)wkv_model_hparams(m)->n_mels * WKV_N_FRAMES * sizeof *win);
        wkv_mel *mel = wkv_mel_compute_range(m, w->samples, (size_t)a.probe_n, 0, a.probe_n, 0,
                                             size, 1, NULL);
        wkv_mel_window(mel, 0, size, WKV_MEL_WINDOW, win);
        wkv_mel_free(mel);
        wkv_options p = o;
        p.timestamps = 0;
        wkv_window_result r;
        CHECK(wkv_encode(ctx, win) == 0 &&
                  wkv__decode_window_prefix(ctx, NULL, 0, a.ftok, a.probe_prefix, NULL, 0, &p,
                                            &r, NULL) == 0,
              "decode by hand");
        int same = r.n_tokens == a.probe_ntok;
        for (int i = 0; same && i < r.n_tokens; i++)
            same = r.tokens[i] == a.probe_tok[i];
        CHECK(same, "the run's %d tokens are not the decoding after its %d committed tokens "
              "(%d tokens)", a.probe_ntok, a.probe_prefix, r.n_tokens);
        wkv_window_result_clear(&r);
        free(win);
    }
    /* max_held_ms: the committed words' audio goes once the held audio and the next
     * step would pass it, long before 20 s; the runs still decide alone, in order */
    log_t h;
    max_held_ms = 4000;
    run_clip(ctx, &o, WKV_COMMIT_ALIGNATT, -1, w, &h);
    max_held_ms = 0;
    CHECK(h.trimmed_runs > 0 && h.max_held <= 4 * WKV_SAMPLE_RATE + 2 * WKV_SAMPLE_RATE,
          "max_held_ms 4000: %d runs trimmed under 20 s, a run held %.2f s", h.trimmed_runs,
          (double)h.max_held / WKV_SAMPLE_RATE);
    CHECK(h.bad_runs == 0 && h.forced == 0 && h.unordered == 0 && h.end_all,
          "max_held_ms 4000: %d bad runs, %d forced, %d unordered", h.bad_runs, h.forced,
          h.unordered);
    CHECK(a.max_held > 6 * WKV_SAMPLE_RATE, "by default a run held only %.2f s",
          (double)a.max_held / WKV_SAMPLE_RATE);
    /* segment mode: the same decisions, finals without words */
    o.word_timestamps = 0;
    run_clip(ctx, &o, WKV_COMMIT_ALIGNATT, -1, w, &s);
    CHECK(!strcmp(s.text, a.text) && s.words == 0 && s.finals == a.finals,
          "segment mode: %d finals, %d words, '%s' against '%s'", s.finals, s.words, s.text,
          a.text);
    /* agreement: the alignatt options change nothing */
    run_clip(ctx, &o, WKV_COMMIT_AGREEMENT, -1, w, &g1);
    run_clip(ctx, &o, WKV_COMMIT_AGREEMENT, 40, w, &g2);
    CHECK(!strcmp(g1.text, g2.text) && g1.finals == g2.finals && g1.runs == g2.runs,
          "agreement changed with frame_threshold_ms");
}

static void test_bad_options(wkv_context *ctx, const wkv_options *o)
{
    static const int bad[][2] = {{2, 500}, {-1, 500}, {WKV_COMMIT_ALIGNATT, -5},
                                 {WKV_COMMIT_ALIGNATT, 30001}};
    for (size_t c = 0; c < sizeof bad / sizeof *bad; c++) {
        log_t l;
        char *err = NULL;
        wkv_stream *st = open_stream(ctx, o, bad[c][0], bad[c][1], &l, &err);
        CHECK(!st && err && strstr(err, "commit policy"),
              "policy %d threshold %d accepted (%s)", bad[c][0], bad[c][1], err ? err : "");
        wkv_stream_free(st);
        free(err);
    }
    static const int bad_held[] = {-1, 999, 30001};
    for (size_t c = 0; c < sizeof bad_held / sizeof *bad_held; c++) {
        log_t l;
        char *err = NULL;
        max_held_ms = bad_held[c];
        wkv_stream *st = open_stream(ctx, o, WKV_COMMIT_ALIGNATT, -1, &l, &err);
        CHECK(!st && err && strstr(err, "max_held_ms"), "max_held_ms %d accepted (%s)",
              bad_held[c], err ? err : "");
        wkv_stream_free(st);
        free(err);
    }
    max_held_ms = 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_stream_alignatt MODEL\n");
        return 2;
    }
    test_scan();
    test_words();
    wav_data w;
    wkv_model *model;
    wkv_context *ctx;
    if (tu_open_clip_model("speech/jfk/jfk.wav", argv[1], 1, &w, &model, &ctx) != 0)
        return 1;
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 32; /* the generated model never says end-of-text */
    test_prefix(ctx, &w);
    test_bad_options(ctx, &o);
    test_stream(ctx, o, &w);
    wav_free(&w);
    wkv_context_free(ctx);
    wkv_model_free(model);
    return tu_finish("stream-alignatt");
}
