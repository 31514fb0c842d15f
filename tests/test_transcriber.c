/* transcriber: the offline transcriber (core/longform/transcriber.c), the long form fed
 * with PCM, on a random-weight model and a shared recording (gb0.wav, 127 s: five
 * windows).  What it must show:
 *  - pushed piecewise (odd sizes, windows run as soon as wkv_transcriber_next allows),
 *    window normalization gives exactly the segments of wkv_transcribe_mel on the
 *    whole input's log-mel, while holding at most one window (+ lookahead + a piece);
 *  - global normalization (the reference's) waits for the close, then equals
 *    wkv_transcribe_mel with global normalization;
 *  - misuse is an error, not a crash: run with no window ready, push after the close;
 *  - a callback that asks to stop stops the loop.
 * usage: test_transcriber MODEL (the generated micro model) */
#include "testutil.h"
#include "wav.h"
#include "whisperkv.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    char *text; /* every segment: "start end text\n" */
    size_t len, cap;
    int n, stop_after;
} collect;

static void add(collect *c, const char *s)
{
    size_t k = strlen(s);
    if (c->len + k + 1 > c->cap) {
        c->cap = (c->len + k + 1) * 2;
        c->text = realloc(c->text, c->cap);
    }
    memcpy(c->text + c->len, s, k + 1);
    c->len += k;
}

static int on_segment(const wkv_segment *seg, void *user)
{
    collect *c = user;
    char line[2048];
    snprintf(line, sizeof line, "%.2f %.2f %s\n", seg->start, seg->end, seg->text);
    add(c, line);
    c->n++;
    return c->stop_after > 0 && c->n >= c->stop_after;
}

static wkv_options options(wkv_mel_norm norm)
{
    wkv_options o;
    wkv_options_default(&o);
    o.mel_norm = norm;
    o.temperature_increment = 0; /* random weights would fall back on every window */
    o.language = "en";
    return o;
}

/* The reference result: wkv_transcribe_mel on the whole input's log-mel. */
static collect whole(wkv_context *ctx, const wkv_model *m, const wav_data *w, wkv_mel_norm norm)
{
    collect c = {0};
    add(&c, "");
    wkv_options o = options(norm);
    char *err = NULL;
    wkv_mel *mel = wkv_mel_compute(m, w->samples, w->n, 2, &err);
    CHECK(mel, "mel: %s", err ? err : "?");
    int n = mel ? wkv_transcribe_mel(ctx, mel, &o, on_segment, NULL, &c, &err) : -1;
    CHECK(n == c.n && n > 0, "wkv_transcribe_mel: %d segments (%s)", n, err ? err : "");
    wkv_mel_free(mel);
    free(err);
    return c;
}

/* Pushed in pieces of `piece` samples, each window run once it is ready. */
static collect piecewise(wkv_context *ctx, const wav_data *w, wkv_mel_norm norm, size_t piece,
                         int64_t *max_held, int *windows_before_close)
{
    collect c = {0};
    add(&c, "");
    wkv_options o = options(norm);
    char *err = NULL;
    wkv_transcriber *t = wkv_transcriber_new(ctx, &o, on_segment, &c, &err);
    CHECK(t, "new: %s", err ? err : "?");
    if (!t)
        return c;
    *max_held = 0;
    *windows_before_close = 0;
    for (size_t at = 0; at < w->n; at += piece) {
        size_t k = w->n - at < piece ? w->n - at : piece;
        CHECK(wkv_transcriber_push(t, w->samples + at, k, &err) == 0, "push: %s", err);
        while (wkv_transcriber_next(t) > 0) {
            CHECK(wkv_transcriber_run(t, &err) > 0, "run: %s", err ? err : "?");
            (*windows_before_close)++;
        }
        int64_t held = wkv_transcriber_held(t);
        *max_held = held > *max_held ? held : *max_held;
    }
    wkv_transcriber_close(t);
    CHECK(wkv_transcriber_push(t, w->samples, 1, &err) == -1 && err,
          "a push after the close is an error");
    free(err);
    err = NULL;
    while (wkv_transcriber_next(t) > 0)
        CHECK(wkv_transcriber_run(t, &err) > 0, "run: %s", err ? err : "?");
    CHECK(wkv_transcriber_next(t) == -1, "done after the last window");
    CHECK(wkv_transcriber_run(t, &err) == -1 && err, "a run with no window ready is an error");
    CHECK(wkv_transcriber_segments(t) == c.n, "segments counted: %d, reported %d",
          wkv_transcriber_segments(t), c.n);
    CHECK(!strcmp(wkv_transcriber_language(t, NULL), "en"), "language kept");
    free(err);
    wkv_transcriber_free(t);
    return c;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_transcriber MODEL\n");
        return 2;
    }
    if (!tu_require_shared("test_transcriber: needs ../shared/speech/gb0/gb0.wav"))
        return TU_SKIP;
    wav_data w;
    char werr[256];
    if (wav_read(tu_shared_path("speech/gb0/gb0.wav"), &w, werr, sizeof werr) != 0) {
        fprintf(stderr, "%s\n", werr);
        return 1;
    }
    char *err = NULL;
    wkv_model *m = wkv_model_load(argv[1], &err);
    wkv_context *ctx = m ? wkv_context_new(m, 2, &err) : NULL;
    if (!ctx) {
        fprintf(stderr, "%s\n", err ? err : "?");
        return 1;
    }

    /* window normalization: piecewise equals the whole log-mel's, in bounded memory */
    collect ref = whole(ctx, m, &w, WKV_MEL_WINDOW);
    const size_t pieces[] = {16000, 4321, 480000 + 7};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++) {
        int64_t max_held;
        int early;
        collect got = piecewise(ctx, &w, WKV_MEL_WINDOW, pieces[i], &max_held, &early);
        CHECK(got.text && !strcmp(got.text, ref.text),
              "pieces of %zu: segments differ from wkv_transcribe_mel's:\n%s---\n%s",
              pieces[i], got.text ? got.text : "", ref.text);
        CHECK(early >= 3, "pieces of %zu: %d windows ran before the close", pieces[i], early);
        CHECK(max_held <= WKV_N_SAMPLES + WKV_N_FFT + (int64_t)pieces[i],
              "pieces of %zu: held %lld samples", pieces[i], (long long)max_held);
        free(got.text);
    }
    free(ref.text);

    /* global normalization: every window waits for the close */
    ref = whole(ctx, m, &w, WKV_MEL_GLOBAL);
    int64_t max_held;
    int early;
    collect got = piecewise(ctx, &w, WKV_MEL_GLOBAL, 16000, &max_held, &early);
    CHECK(early == 0, "global: %d windows ran before the close", early);
    CHECK(max_held == (int64_t)w.n, "global: holds the whole input (%lld of %zu)",
          (long long)max_held, w.n);
    CHECK(got.text && !strcmp(got.text, ref.text), "global: segments differ:\n%s---\n%s",
          got.text ? got.text : "", ref.text);
    free(got.text);
    free(ref.text);

    /* a callback asking to stop ends the loop */
    collect c = {0};
    add(&c, "");
    c.stop_after = 1;
    wkv_options o = options(WKV_MEL_WINDOW);
    int n = wkv_transcribe(ctx, w.samples, w.n, &o, on_segment, NULL, &c, &err);
    CHECK(n == 1 && c.n == 1, "stop after one segment: %d reported, %d returned", c.n, n);
    free(c.text);

    wkv_context_free(ctx);
    wkv_model_free(m);
    wav_free(&w);
    free(err);
    return tu_finish("transcriber");
}
