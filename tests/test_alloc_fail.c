/* Allocation-failure loops (issue 33, item 1), as SQLite tests itself: for N = 1, 2, …
 * the N-th allocation of the core fails (wkv_debug_alloc_fail) while an operation runs,
 * until the operation runs without reaching its N-th allocation.  Each N must end in an
 * error with a message (or in a success that did without that allocation: counted
 * apart), never a crash; LeakSanitizer (the sanitize stage) finds what an error path
 * leaks; and where the API keeps a context usable after an error, the same operation
 * run right after gives the text it gave before the loop (after every 4th N).
 *
 *   test_alloc_fail MICRO_F16 MICRO_Q8_0 MICRO_SHORT_F16 [OPERATION…]
 *
 * Operations: load-f16, load-q8_0, load-vad, context-f32, context-bf16, context-int8,
 * transcribe (words + VAD, long form), stream (live, words; on MICRO_SHORT_F16, the
 * micro model with short contexts), beam; all by default.
 * Prints each one's failure points. */
#include "testutil.h"
#include "wav.h"
#include "whisperkv.h"
#include "whisperkv_debug.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *f16_path, *q8_path, *short_path, *vad_path;
static wkv_model *model, *short_model;
static wkv_vad_model *vad;
static wkv_context *ctx, *short_ctx; /* short_ctx: the stream's (its model's 300-frame
                                        encoder: the same paths, a fifth of the time) */
static wav_data jfk;

/* ------------------------------------------------------------------ text */

typedef struct {
    char buf[8192];
    size_t len;
} text_acc;

static void acc_add(text_acc *a, const char *s, double t0, double t1, int words)
{
    int n = snprintf(a->buf + a->len, sizeof a->buf - a->len, "[%.2f %.2f %d]%s", t0, t1,
                     words, s);
    if (n > 0 && a->len + (size_t)n < sizeof a->buf)
        a->len += (size_t)n;
}

static int on_segment(const wkv_segment *seg, void *user)
{
    acc_add(user, seg->text, seg->start, seg->end, seg->n_words);
    return 0;
}

static void on_stream(const wkv_stream_segment *seg, void *user)
{
    acc_add(user, seg->text, seg->start, seg->end, seg->n_words);
}

/* ------------------------------------------------------------------ operations */

typedef int (*op_fn)(text_acc *out, char **error);

static int op_load(const char *path, char **error)
{
    wkv_model *m = wkv_model_load(path, error);
    wkv_model_free(m);
    return m ? 0 : -1;
}

static int op_load_f16(text_acc *out, char **error)
{
    (void)out;
    return op_load(f16_path, error);
}

static int op_load_q8(text_acc *out, char **error)
{
    (void)out;
    return op_load(q8_path, error);
}

static int op_load_vad(text_acc *out, char **error)
{
    (void)out;
    wkv_vad_model *m = wkv_vad_model_load(vad_path, error);
    wkv_vad_model_free(m);
    return m ? 0 : -1;
}

static int op_context(wkv_compute_type type, char **error)
{
    wkv_context *c = wkv_context_new(model, 1, error);
    if (!c)
        return -1;
    int r = wkv_context_set_compute_type(c, type, error);
    wkv_context_free(c);
    return r;
}

static int op_context_f32(text_acc *o, char **e)
{
    (void)o;
    return op_context(WKV_COMPUTE_F32, e);
}

static int op_context_bf16(text_acc *o, char **e)
{
    (void)o;
    return op_context(WKV_COMPUTE_BF16, e);
}

static int op_context_int8(text_acc *o, char **e)
{
    (void)o;
    return op_context(WKV_COMPUTE_INT8, e);
}

static void decode_options(wkv_options *o)
{
    wkv_options_default(o);
    o->temperature_increment = 0; /* a random model would fall back every window */
    o->sample_len = 12;
}

/* The CLI's VAD transcription: probabilities, segments, the speech-only audio, the
 * long form on it with words, times mapped back by the segments' start (enough here:
 * the text and the word counts are compared). */
static int op_transcribe(text_acc *out, char **error)
{
    float *probs = NULL, *speech = NULL;
    wkv_vad_segment *segs = NULL;
    wkv_vad_map *map = NULL;
    size_t n_speech = 0;
    int r = -1;
    wkv_vad_params p;
    wkv_vad_params_default(&p);
    int64_t n_probs = wkv_vad_probs(vad, jfk.samples, jfk.n, &probs, error);
    if (n_probs < 0)
        goto out;
    int n_segs = wkv_vad_segments(probs, n_probs, &p, &segs, error);
    if (n_segs < 0)
        goto out;
    if (n_segs == 0) { /* jfk.wav is speech: a failure reported as "no speech" */
        free(*error);
        *error = strdup("no speech found in jfk.wav");
        goto out;
    }
    if (wkv_vad_filter(jfk.samples, jfk.n, segs, n_segs, &p, &speech, &n_speech, &map, error))
        goto out;
    wkv_options o;
    decode_options(&o);
    o.word_timestamps = 1;
    r = wkv_transcribe(ctx, speech, n_speech, &o, on_segment, NULL, out, error) < 0 ? -1 : 0;
out:
    free(probs);
    free(segs);
    free(speech);
    wkv_vad_map_free(map);
    return r;
}

static int op_stream(text_acc *out, char **error)
{
    wkv_options o;
    decode_options(&o);
    o.word_timestamps = 1;
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.step_ms = 1000;
    wkv_stream *st = wkv_stream_new(short_ctx, &o, &so, on_stream, out, error);
    if (!st)
        return -1;
    int r = 0;
    /* 2 s: two runs (the second on buffers the first left) and the finish; each run
     * is an encoder run at every N of the loop (3 s, three runs: 343 failure points and
     * the test's longest operation; 2 s: 250) */
    size_t n = jfk.n < 16000 * 2 ? jfk.n : 16000 * 2;
    for (size_t i = 0; i < n && r >= 0; i += 8000) {
        size_t k = n - i < 8000 ? n - i : 8000;
        r = wkv_stream_push(st, jfk.samples + i, k, (double)(i + k) / 16000, error);
    }
    if (r >= 0)
        r = wkv_stream_finish(st, (double)n / 16000, error);
    wkv_stream_free(st);
    return r < 0 ? -1 : 0;
}

static int op_beam(text_acc *out, char **error)
{
    wkv_options o;
    decode_options(&o);
    o.beam_size = 3;
    o.sample_len = 6;
    return wkv_transcribe(ctx, jfk.samples, 16000 * 3, &o, on_segment, NULL, out, error) < 0 ?
           -1 : 0;
}

/* ------------------------------------------------------------------ the loop */

typedef struct {
    const char *name;
    op_fn fn;
    int on_ctx; /* runs on the shared context: it must still work after each error */
} operation;

static int failures;

#define EXPECT(cond, ...) do { if (!(cond)) { fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); failures++; return; } } while (0)

static void fail_loop(const operation *op)
{
    text_acc want = {0};
    char *err = NULL;
    int r0 = op->fn(&want, &err);
    if (r0 != 0 && strstr(err ? err : "", "oneDNN")) {
        printf("%-14s not in this build: %s\n", op->name, err);
        free(err);
        return;
    }
    EXPECT(r0 == 0, "%s: fails without any allocation failing: %s", op->name, err);
    free(err);
    long points = 0, errors = 0, recovered = 0;
    double t = now_s();
    /* WKV_ALLOC_FAIL_AT=N: that N only (to look at one under a debugger) */
    const char *only = getenv("WKV_ALLOC_FAIL_AT");
    for (long n = only ? atol(only) : 1;; n++) {
        text_acc got = {0};
        err = NULL;
        wkv_debug_alloc_fail(n);
        int r = op->fn(&got, &err);
        int fired = wkv_debug_alloc_failed();
        long count = wkv_debug_alloc_count();
        wkv_debug_alloc_fail(0);
        if (!fired) { /* the operation needs fewer than n allocations: done */
            EXPECT(r == 0, "%s: n = %ld (past its %ld allocations): %s", op->name, n, count,
                  err);
            EXPECT(strcmp(got.buf, want.buf) == 0, "%s: a run without failures differs",
                  op->name);
            free(err);
            break;
        }
        points++;
        if (r != 0) {
            EXPECT(err && *err, "%s: allocation %ld failed: an error without a message",
                  op->name, n);
            errors++;
        } else {
            recovered++; /* did without it (a cache, a size hint): must still be right */
            EXPECT(strcmp(got.buf, want.buf) == 0, "%s: allocation %ld failed and the run "
                  "succeeded with other text:\n%s\nagainst\n%s", op->name, n, got.buf,
                  want.buf);
        }
        free(err);
        if (only)
            break;
        /* the context is usable again, with the same result: checked after every 4th
         * N (every N doubles the loop's time; CI's sanitizer stage runs it too) */
        if (op->on_ctx && n % 4 == 1) {
            text_acc again = {0};
            err = NULL;
            r = op->fn(&again, &err);
            EXPECT(r == 0 && strcmp(again.buf, want.buf) == 0, "%s: after allocation %ld "
                  "failed, the context gives %s", op->name, n, r ? err : "other text");
            free(err);
        }
    }
    printf("%-14s %5ld failure points: %ld clean errors, %ld succeeded without the "
           "allocation (%.1f s)\n", op->name, points, errors, recovered,
           now_s() - t);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s MICRO_F16 MICRO_Q8_0 MICRO_SHORT_F16 [OPERATION...]\n",
                argv[0]);
        return 2;
    }
    f16_path = argv[1];
    q8_path = argv[2];
    short_path = argv[3];
    if (!tu_require_shared("the VAD model and jfk.wav"))
        return TU_SKIP;
    static char vad_buf[4096];
    snprintf(vad_buf, sizeof vad_buf, "%s", tu_shared_path("models/for-tests-silero-v6.2.0-ggml.bin"));
    vad_path = vad_buf;
    char werr[256], *err = NULL;
    if (wav_read(tu_shared_path("speech/jfk/jfk.wav"), &jfk, werr, sizeof werr) != 0) {
        fprintf(stderr, "jfk.wav: %s\n", werr);
        return 1;
    }
    model = wkv_model_load(f16_path, &err);
    vad = model ? wkv_vad_model_load(vad_path, &err) : NULL;
    ctx = vad ? wkv_context_new(model, 1, &err) : NULL;
    short_model = ctx ? wkv_model_load(short_path, &err) : NULL;
    short_ctx = short_model ? wkv_context_new(short_model, 1, &err) : NULL;
    if (!short_ctx) {
        fprintf(stderr, "setup: %s\n", err);
        return 1;
    }
    static const operation ops[] = {
        {"load-f16", op_load_f16, 0},
        {"load-q8_0", op_load_q8, 0},
        {"load-vad", op_load_vad, 0},
        {"context-f32", op_context_f32, 0},
        {"context-bf16", op_context_bf16, 0},
        {"context-int8", op_context_int8, 0},
        {"transcribe", op_transcribe, 1},
        {"stream", op_stream, 1},
        {"beam", op_beam, 1},
    };
    int ran = 0;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        int wanted = argc == 4;
        for (int a = 4; a < argc; a++)
            wanted |= strcmp(argv[a], ops[i].name) == 0;
        if (wanted) {
            fail_loop(&ops[i]);
            ran++;
        }
    }
    wkv_context_free(short_ctx);
    wkv_context_free(ctx);
    wkv_vad_model_free(vad);
    wkv_model_free(short_model);
    wkv_model_free(model);
    wav_free(&jfk);
    if (!ran) {
        fprintf(stderr, "no operation of that name\n");
        return 1;
    }
    printf("%s\n", failures ? "FAIL" : "all clean");
    return failures ? 1 : 0;
}
