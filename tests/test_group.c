/* group: contexts sharing a decoder group (issue 32, item 3; decode/group.c) get the
 * tokens each gets alone.
 *  - windows: four contexts, one thread each, decode four different windows at once
 *    through a group that runs one pass at a time (so their steps queue and meet),
 *    three times over; each window's tokens, text and no-speech probability equal
 *    (the sum of log-probabilities within 1e-6 relative) decoding it alone on a context without a group; the group ran passes of
 *    more than one step;
 *  - streams: three live streams on different audio, each on its own thread and
 *    context, all in one group, give the finals and partials each gives alone;
 *  - a context alone in a group counts its decoder time once;
 *  - a context on another model is refused, and so are bad sizes.
 * Usage: test_group MODEL.bin [MODEL2.bin ...] */
#include "testutil.h"
#include "whisperkv.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define K 4 /* contexts decoding at once */

static uint32_t seed = 777;

static float *audio(size_t n)
{
    return tu_wandering_tone(&seed, n);
}

/* the tokens, text and no-speech probability of decoding alone; the sum of
 * log-probabilities within 1e-6 relative (a shared pass's products and attention sum
 * in another order than a lone step's: 1e-8 seen) */
static int same(const wkv_window_result *a, const wkv_window_result *b)
{
    return a->n_tokens == b->n_tokens &&
           !memcmp(a->tokens, b->tokens, (size_t)a->n_tokens * sizeof(int)) &&
           !strcmp(a->text, b->text) && a->no_speech_prob == b->no_speech_prob &&
           fabs(a->sum_logprob - b->sum_logprob) <= 1e-6 * fabs(b->sum_logprob);
}

typedef struct {
    wkv_context *ctx;
    const wkv_options *o;
    const wkv_window_result *want;
    pthread_barrier_t *start;
    int rounds, bad, failed;
} window_job;

static void *decode_rounds(void *arg)
{
    window_job *j = arg;
    int prompt[2] = {1500, 2500};
    pthread_barrier_wait(j->start);
    for (int r = 0; r < j->rounds; r++) {
        wkv_window_result got;
        if (wkv_decode_window(j->ctx, prompt, 2, j->o, &got, NULL) != 0) {
            j->failed++;
            continue;
        }
        if (!same(&got, j->want) && !j->bad++)
            fprintf(stderr, "  %d tokens against %d, sum %.9g against %.9g, no-speech %.9g "
                            "against %.9g\n  %s\n  %s\n",
                    got.n_tokens, j->want->n_tokens, got.sum_logprob, j->want->sum_logprob,
                    got.no_speech_prob, j->want->no_speech_prob, got.text, j->want->text);
        wkv_window_result_clear(&got);
    }
    return NULL;
}

static void check_windows(const wkv_model *m, wkv_compute_type type)
{
    const int n_mels = wkv_model_hparams(m)->n_mels;
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 48;
    wkv_context *ctx[K];
    wkv_window_result want[K];
    float *win = malloc((size_t)n_mels * WKV_N_FRAMES * sizeof *win);
    wkv_context *lone = wkv_context_new(m, 1, NULL);
    CHECK(lone, "context");
    if (!lone || !tu_compute_here(lone, type, "windows")) {
        wkv_context_free(lone); /* NULL, or a type this CPU lacks (printed) */
        free(win);
        return;
    }
    int prompt[2] = {1500, 2500};
    for (int k = 0; k < K; k++) {
        size_t n = 16000 * (size_t)(5 + 6 * k);
        float *pcm = audio(n);
        wkv_mel *mel = wkv_mel_compute(m, pcm, n, 1, NULL);
        wkv_mel_window(mel, 0, (int)mel->content_frames, WKV_MEL_GLOBAL, win);
        wkv_mel_free(mel);
        free(pcm);
        ctx[k] = wkv_context_new(m, 1, NULL);
        CHECK(ctx[k] && wkv_context_set_compute_type(ctx[k], type, NULL) == 0, "context %d", k);
        /* alone, on a context that never joins the group */
        CHECK(wkv_encode(lone, win) == 0 && wkv_encode(ctx[k], win) == 0, "encode %d", k);
        CHECK(wkv_decode_window(lone, prompt, 2, &o, &want[k], NULL) == 0, "alone %d", k);
    }
    wkv_decoder_group *g = wkv_decoder_group_new(m, 8, 1, NULL);
    CHECK(g, "group");
    for (int k = 0; k < K; k++)
        CHECK(wkv_context_set_decoder_group(ctx[k], g, NULL) == 0, "join %d", k);
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, K);
    pthread_t th[K];
    window_job jobs[K];
    for (int k = 0; k < K; k++) {
        jobs[k] = (window_job){ctx[k], &o, &want[k], &start, 3, 0, 0};
        pthread_create(&th[k], NULL, decode_rounds, &jobs[k]);
    }
    int bad = 0;
    for (int k = 0; k < K; k++) {
        pthread_join(th[k], NULL);
        CHECK(jobs[k].failed == 0, "%s context %d: a decode failed", wkv_compute_type_name(type),
              k);
        bad += jobs[k].bad;
    }
    wkv_decoder_group_stats gs;
    wkv_decoder_group_get_stats(g, &gs);
    CHECK(bad == 0, "%s: %d of %d decodes in the group differ from alone",
          wkv_compute_type_name(type), bad, 3 * K);
    CHECK(gs.steps > 0 && gs.shared_passes > 0 && gs.max_rows > 1,
          "%s: no shared pass (%lld steps, %lld passes, %lld shared)",
          wkv_compute_type_name(type), (long long)gs.steps, (long long)gs.passes,
          (long long)gs.shared_passes);
    printf("  %s: %d contexts x 3 windows, the tokens of decoding alone; %lld steps in %lld "
           "passes (%lld shared, up to %d rows)\n",
           wkv_compute_type_name(type), K, (long long)gs.steps, (long long)gs.passes,
           (long long)gs.shared_passes, gs.max_rows);
    pthread_barrier_destroy(&start);
    for (int k = 0; k < K; k++) {
        wkv_context_free(ctx[k]); /* leaves the group */
        wkv_window_result_clear(&want[k]);
    }
    wkv_decoder_group_free(g);
    wkv_context_free(lone);
    free(win);
}

typedef struct {
    const wkv_model *m;
    wkv_decoder_group *g;
    const float *pcm;
    size_t n;
    tu_seglog log;
    int ok;
} stream_job;

static void *run_stream(void *arg)
{
    stream_job *j = arg;
    wkv_context *ctx = wkv_context_new(j->m, 1, NULL);
    if (!ctx || wkv_context_set_decoder_group(ctx, j->g, NULL) != 0)
        return NULL;
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 40;
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.step_ms = 1000;
    so.latency_ms = 6000;
    so.clock_ms = tu_still_clock;
    memset(&j->log, 0, sizeof j->log);
    wkv_stream *st = wkv_stream_new(ctx, &o, &so, tu_seglog_add, &j->log, NULL);
    int ok = st != NULL;
    for (size_t at = 0; ok && at < j->n; at += 4000) {
        size_t k = j->n - at < 4000 ? j->n - at : 4000;
        ok = wkv_stream_push(st, j->pcm + at, k, (double)(at + k) / 16000, NULL) >= 0;
    }
    ok = ok && wkv_stream_finish(st, (double)j->n / 16000, NULL) >= 0;
    wkv_stream_free(st);
    wkv_context_free(ctx);
    j->ok = ok;
    return NULL;
}

static void check_streams(const wkv_model *m)
{
    enum { S = 3 };
    const size_t n = 20 * 16000;
    float *pcm[S];
    stream_job *alone = calloc(S, sizeof *alone), *shared = calloc(S, sizeof *shared);
    for (int s = 0; s < S; s++) {
        pcm[s] = audio(n);
        alone[s] = (stream_job){m, NULL, pcm[s], n, {{0}, 0}, 0};
        run_stream(&alone[s]);
        CHECK(alone[s].ok && alone[s].log.len > 0, "stream %d alone", s);
    }
    wkv_decoder_group *g = wkv_decoder_group_new(m, 0, 1, NULL);
    pthread_t th[S];
    for (int s = 0; s < S; s++) {
        shared[s] = (stream_job){m, g, pcm[s], n, {{0}, 0}, 0};
        pthread_create(&th[s], NULL, run_stream, &shared[s]);
    }
    for (int s = 0; s < S; s++) {
        pthread_join(th[s], NULL);
        CHECK(shared[s].ok, "stream %d in the group", s);
        CHECK(!strcmp(alone[s].log.buf, shared[s].log.buf),
              "stream %d differs in the group:\n%s---\n%s", s, shared[s].log.buf,
              alone[s].log.buf);
    }
    wkv_decoder_group_stats gs;
    wkv_decoder_group_get_stats(g, &gs);
    CHECK(gs.steps > 0, "the streams' steps went through the group");
    printf("  streams: %d x 20 s in one group, the segments of each alone; %lld steps in %lld "
           "passes (%lld shared)\n",
           S, (long long)gs.steps, (long long)gs.passes, (long long)gs.shared_passes);
    wkv_decoder_group_free(g);
    for (int s = 0; s < S; s++)
        free(pcm[s]);
    free(alone);
    free(shared);
}

/* A context alone in a group: its decode time is counted once (the step's wall time),
 * so it cannot exceed the wall time of the decodes. */
static void check_stats(const wkv_model *m)
{
    wkv_context *ctx = wkv_context_new(m, 1, NULL);
    wkv_decoder_group *g = wkv_decoder_group_new(m, 0, 1, NULL);
    CHECK(ctx && g && wkv_context_set_decoder_group(ctx, g, NULL) == 0, "context in a group");
    const int n_mels = wkv_model_hparams(m)->n_mels;
    float *win = calloc((size_t)n_mels * WKV_N_FRAMES, sizeof *win);
    wkv_options o;
    wkv_options_default(&o);
    o.sample_len = 48;
    CHECK(wkv_encode(ctx, win) == 0, "encode");
    const double ms0 = wkv_context_stats(ctx)->decode_ms;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int r = 0; r < 5; r++) {
        wkv_window_result res;
        CHECK(wkv_decode_window(ctx, NULL, 0, &o, &res, NULL) == 0, "decode");
        wkv_window_result_clear(&res);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double wall = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    const double counted = wkv_context_stats(ctx)->decode_ms - ms0;
    CHECK(counted > 0 && counted <= wall, "decode time %.2f ms counted in %.2f ms of decoding",
          counted, wall);
    printf("  stats: %.2f ms of decoder time counted in %.2f ms of decoding\n", counted, wall);
    free(win);
    wkv_context_free(ctx);
    wkv_decoder_group_free(g);
}

static void check_refusals(const wkv_model *m, const char *path)
{
    char *err = NULL;
    CHECK(!wkv_decoder_group_new(m, 9, 1, &err) && err, "9 rows refused");
    free(err);
    err = NULL;
    CHECK(!wkv_decoder_group_new(NULL, 0, 0, &err) && err, "no model refused");
    free(err);
    err = NULL;
    wkv_model *other = wkv_model_load(path, NULL); /* the same file, another model */
    wkv_context *ctx = other ? wkv_context_new(other, 1, NULL) : NULL;
    wkv_decoder_group *g = wkv_decoder_group_new(m, 0, 0, NULL);
    CHECK(ctx && g && wkv_context_set_decoder_group(ctx, g, &err) == -1 && err,
          "a context on another model refused");
    if (err)
        printf("  refused: %s\n", err);
    free(err);
    wkv_context_free(ctx);
    wkv_decoder_group_free(g);
    wkv_model_free(other);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_group MODEL.bin [MODEL2.bin ...]\n");
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        wkv_model *m = wkv_model_load(argv[a], NULL);
        CHECK(m, "load %s", argv[a]);
        if (!m)
            continue;
        printf("%s\n", argv[a]);
        check_windows(m, WKV_COMPUTE_F32);
        check_windows(m, WKV_COMPUTE_INT8);
        if (a == 1) {
            check_streams(m);
            check_stats(m);
            check_refusals(m, argv[a]);
        }
        wkv_model_free(m);
    }
    return tu_finish("group");
}
