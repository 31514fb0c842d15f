/* whisperkv-transcribe --live (cli_live.h): simulated real time on a virtual clock, or
 * the wall clock with --realtime. */
#include "cli_live.h"

#include <stdio.h>

#include <glib.h>

#include "cli_common.h"
#include "cli_vad.h"

/* The simulated source delivers audio every 100 ms. */
#define LIVE_CHUNK (WKV_SAMPLE_RATE / 10)

static void on_live_segment(const wkv_stream_segment *s, void *user)
{
    if (!s->final)
        return;
    wkv_segment seg = {
        .seek = s->run_base / WKV_HOP, .start = s->start, .end = s->end,
        .tokens = s->tokens, .n_tokens = s->n_tokens, .text = s->text,
        .avg_logprob = s->avg_logprob, .no_speech_prob = s->no_speech_prob,
        .compression_ratio = s->compression_ratio, .temperature = s->temperature,
        .language = s->language, .words = s->words, .n_words = s->n_words,
    };
    cli_output_live_segment(user, &seg, s->committed_at, s->forced);
}

/* Stream seconds now: the wall clock since t0 (--realtime), or the virtual clock. */
static double live_now(const cli_args *args, double t0_ms, double vnow)
{
    return args->realtime ? (cli_now_ms() - t0_ms) / 1000.0 : vnow;
}

/* --run-ms: the clock the stream measures its runs with.  The stream reads it at a
 * run's start and at its end, so a clock that moves on by run_ms at every reading
 * makes every run take run_ms: its commit times, the forcing and the virtual clock
 * below (which adds the runs' busy time) are then the same on any machine. */
typedef struct {
    double run_ms;
    long readings;
} run_clock;

static double run_clock_ms(void *user)
{
    run_clock *c = user;
    return (double)c->readings++ * c->run_ms;
}

/* On the virtual clock the audio up to `now` has arrived at each push, and a push's
 * compute time (with --run-ms, run_ms a run) moves `now` on; --realtime sleeps until
 * the audio is due instead. */
int cli_run_live(wkv_context *ctx, const float *pcm, size_t n, const wkv_options *opts,
                 const cli_args *args, cli_output *out, char **language, char **err)
{
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.step_ms = args->step_ms;
    so.latency_ms = args->latency_ms;
    so.commit_policy = args->alignatt ? WKV_COMMIT_ALIGNATT : WKV_COMMIT_AGREEMENT;
    if (args->frame_threshold_ms >= 0)
        so.frame_threshold_ms = args->frame_threshold_ms;
    so.max_held_ms = args->max_held_ms;
    run_clock clock = {args->run_ms, 0};
    if (args->run_ms > 0) {
        so.clock_ms = run_clock_ms;
        so.clock_user = &clock;
    }
    if (cli_vad_live(&so, err) != 0)
        return -1;
    wkv_stream *st = wkv_stream_new(ctx, opts, &so, on_live_segment, out, err);
    if (!st)
        return -1;
    wkv_stream_stats ss;
    wkv_stream_get_stats(st, &ss);
    double t0 = cli_now_ms(), vnow = 0;
    size_t pos = 0;
    int rc = 0;
    while (pos < n && rc >= 0) {
        size_t next = MIN(n, pos + LIVE_CHUNK);
        double due = (double)next / WKV_SAMPLE_RATE, now = live_now(args, t0, vnow);
        if (args->realtime && now < due)
            g_usleep((gulong)((due - now) * 1e6));
        vnow = MAX(vnow, due);
        now = live_now(args, t0, vnow);
        /* everything that has arrived by now (more than one chunk after a long run) */
        size_t avail = MIN(n, MAX(next, (size_t)(now * WKV_SAMPLE_RATE)));
        wkv_stream_get_stats(st, &ss);
        double busy = ss.busy_ms;
        rc = wkv_stream_push(st, pcm + pos, avail - pos, now, err);
        pos = avail;
        wkv_stream_get_stats(st, &ss);
        vnow += (ss.busy_ms - busy) / 1000.0;
    }
    double busy = ss.busy_ms;
    if (rc >= 0)
        rc = wkv_stream_finish(st, live_now(args, t0, vnow), err);
    wkv_stream_get_stats(st, &ss);
    vnow += (ss.busy_ms - busy) / 1000.0;
    cli_out_live l = {
        .step_ms = args->step_ms, .latency_ms = args->latency_ms, .run_ms = args->run_ms,
        .realtime = args->realtime,
        .runs = ss.runs, .silent_runs = ss.silent_runs, .forced_runs = ss.forced_runs,
        .finals = ss.finals, .forced_finals = ss.forced_finals, .partials = ss.partials,
        .delay_median = ss.delay_median, .delay_mean = ss.delay_mean,
        .delay_worst = ss.delay_max, .busy_ms = ss.busy_ms, .max_run_ms = ss.max_busy_ms,
        .finished_at = live_now(args, t0, vnow),
    };
    cli_output_set_live(out, &l);
    *language = g_strdup(wkv_stream_language(st));
    wkv_stream_free(st);
    if (rc >= 0)
        fprintf(stderr, "%s: live: %" G_GINT64_FORMAT " runs, %" G_GINT64_FORMAT " finals (%"
                G_GINT64_FORMAT " forced), commit delay median %.2f s, worst %.2f s\n",
                CLI_PROG, ss.runs, ss.finals, ss.forced_finals, ss.delay_median, ss.delay_max);
    return rc < 0 ? -1 : (int)ss.finals;
}
