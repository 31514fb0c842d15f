/* The offline transcriber (whisperkv.h): the long-form loop fed with PCM, the
 * counterpart of the live stream.  The element's offline path, the CLI and
 * wkv_transcribe all go through it; wkv_transcribe_mel too, on a log-mel it is given.
 *
 * Two ways to get each window's log-mel, chosen once at creation:
 *  - whole: the reference's global normalization (one maximum over the whole input)
 *    or clip_timestamps need all of the input, so the windows wait for the close; the
 *    log-mel of everything is computed once then (or given: wkv_transcribe_mel) and
 *    the samples are freed.
 *  - piecewise: with window normalization, a window runs as soon as its samples and the
 *    FFT's 200-sample lookahead are held (wkv_mel_compute_range gives the frames the
 *    whole input's log-mel would have), and the samples before the next window's first
 *    frame are dropped, so a caller holds about 30 s at a time. */
#include "longform/window.h"
#include "longform/language.h"
#include "base/samples.h"
#include "base/util.h"
#include "net/context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wkv_transcriber {
    wkv_context *ctx;
    wkv_longform *lf;
    wkv_mel_norm norm;
    wkv_segment_cb cb;
    void *user;
    int whole;          /* windows wait for the close (see above) */
    int begun;          /* whole: the log-mel is there, the language known */
    int closed;         /* no more samples will come */
    int detect;         /* the language is still to be detected */
    float *probs;       /* the detection's probabilities (n_langs), once detected */
    wkv__samples in;    /* the input's samples held */
    int64_t seek;       /* the next window's first frame */
    float *win;         /* n_mels x 3000 */
    /* whole: the log-mel (owned unless given), the clips and the one under way */
    wkv_mel *mel;
    const wkv_mel *given;
    int64_t *clips;
    int n_clips, clip;
};

/* Clip timestamps "start,end,..." (seconds) as frame pairs (Python's round), the last
 * end -1 (the content's end) when the count is odd; none: one clip over everything.
 * As transcribe.py, empty items are skipped.  A malloc'd array, or NULL with a
 * message. */
static int64_t *parse_clips(const char *spec, int *n_clips, char **error)
{
    size_t len = spec ? strlen(spec) : 0;
    int64_t *pts = wkv__malloc((len + 2) * sizeof *pts);
    int n = 0;
    if (!pts) {
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    for (const char *p = spec ? spec : ""; *p;) {
        if (*p == ',') {
            p++;
            continue;
        }
        char *e;
        double ts = strtod(p, &e);
        if (e == p || (*e && *e != ',') || !(ts >= 0) || ts > 1e9) {
            wkv__set_error(error, "bad clip timestamps '%s': seconds start,end,...", spec);
            wkv__free(pts);
            return NULL;
        }
        pts[n++] = (int64_t)nearbyint(ts * 100);
        p = e;
    }
    if (n == 0)
        pts[n++] = 0;
    if (n % 2)
        pts[n++] = -1;
    *n_clips = n / 2;
    return pts;
}

static wkv_transcriber *transcriber_new(wkv_context *ctx, const wkv_options *opts, int whole,
                                        wkv_segment_cb on_segment, void *user, char **error)
{
    const wkv_model *m = wkv_context_model(ctx);
    wkv_transcriber *t = wkv__calloc(1, sizeof *t);
    if (t)
        t->win = wkv__malloc((size_t)m->hp.n_mels * WKV_N_FRAMES * sizeof *t->win);
    if (!t || !t->win) {
        wkv_transcriber_free(t);
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    t->ctx = ctx;
    t->norm = opts->mel_norm;
    t->cb = on_segment;
    t->user = user;
    t->whole = whole;
    t->detect = wkv__wants_detection(m, opts->language);
    if (!(t->lf = wkv_longform_new(ctx, opts, error)) ||
        (whole && !(t->clips = parse_clips(opts->clip_timestamps, &t->n_clips, error)))) {
        wkv_transcriber_free(t);
        return NULL;
    }
    return t;
}

wkv_transcriber *wkv_transcriber_new(wkv_context *ctx, const wkv_options *opts,
                                     wkv_segment_cb on_segment, void *user, char **error)
{
    const int whole = opts->mel_norm != WKV_MEL_WINDOW ||
                      (opts->clip_timestamps && *opts->clip_timestamps);
    return transcriber_new(ctx, opts, whole, on_segment, user, error);
}

void wkv_transcriber_free(wkv_transcriber *t)
{
    if (!t)
        return;
    wkv_longform_free(t->lf);
    wkv_mel_free(t->mel);
    wkv__free(t->clips);
    wkv__free(t->probs);
    wkv__samples_free(&t->in);
    wkv__free(t->win);
    wkv__free(t);
}

int wkv_transcriber_push(wkv_transcriber *t, const float *pcm, size_t n, char **error)
{
    if (t->closed) {
        wkv__set_error(error, "transcriber: samples pushed after the close");
        return -1;
    }
    return wkv__samples_push(&t->in, pcm, n, error);
}

void wkv_transcriber_close(wkv_transcriber *t)
{
    t->closed = 1;
}

static const wkv_mel *whole_mel(const wkv_transcriber *t)
{
    return t->given ? t->given : t->mel;
}

/* Whole: the next window (its size, its seek into *seek, its clip into *clip), or -1
 * when none is left.  Clips are pairs of frames; a window never crosses a clip's end. */
static int whole_next(const wkv_transcriber *t, int64_t content, int64_t *seek, int *clip)
{
    int64_t s = t->seek;
    int c = t->clip;
    while (c < t->n_clips && !wkv__longform_stopped(t->lf)) {
        const int64_t start = t->clips[2 * c];
        const int64_t end = t->clips[2 * c + 1] < 0 ? content : t->clips[2 * c + 1];
        if (s < start)
            s = start;
        if (s >= end || s >= content) {
            if (++c < t->n_clips)
                s = t->clips[2 * c]; /* as transcribe.py: even when that goes back */
            continue;
        }
        int64_t size = content - s < WKV_N_FRAMES ? content - s : WKV_N_FRAMES;
        if (end - s < size)
            size = end - s;
        *seek = s;
        *clip = c;
        return (int)size;
    }
    return -1;
}

int wkv_transcriber_next(const wkv_transcriber *t)
{
    const int64_t len = t->in.base + t->in.n; /* samples of the input so far */
    if (t->whole) {
        if (!t->closed)
            return 0;
        int64_t seek;
        int clip;
        const wkv_mel *mel = whole_mel(t);
        return whole_next(t, mel ? mel->content_frames : len / WKV_HOP, &seek, &clip);
    }
    if (wkv__longform_stopped(t->lf))
        return -1;
    if (t->closed) {
        const int64_t content = len / WKV_HOP;
        return t->seek >= content ? -1
               : (int)(content - t->seek < WKV_N_FRAMES ? content - t->seek : WKV_N_FRAMES);
    }
    return len >= (t->seek + WKV_N_FRAMES - 1) * WKV_HOP + WKV_N_FFT / 2 ? WKV_N_FRAMES : 0;
}

/* The language rule, once, on the first window's 3000 frames (in `frames`, normalized
 * as the windows are).  0 or -1. */
static int language_once(wkv_transcriber *t, const float *frames, char **error)
{
    if (!t->detect)
        return 0;
    const wkv_specials *sp = wkv_model_specials(wkv_context_model(t->ctx));
    if (!t->probs && !(t->probs = wkv__malloc((size_t)(sp->n_langs > 0 ? sp->n_langs : 1) *
                                         sizeof *t->probs))) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    const char *code = wkv__language_first_window(t->ctx, frames, t->probs, error);
    if (!code || wkv_longform_set_language(t->lf, code) != 0) {
        if (error && !*error)
            wkv__set_error(error, "out of memory");
        return -1;
    }
    t->detect = 0;
    return 0;
}

/* Whole: the log-mel of everything, once the input is closed; the samples go. */
static int whole_begin(wkv_transcriber *t, char **error)
{
    t->begun = 1;
    if (!whole_mel(t)) {
        double t0 = wkv__now_ms();
        static const float none[1]; /* no input: the log-mel of the padding alone */
        t->mel = wkv_mel_compute(wkv_context_model(t->ctx), t->in.v ? t->in.v : none,
                                 (size_t)t->in.n, t->ctx->threads, error);
        if (!t->mel)
            return -1;
        t->ctx->stats.mel_ms += wkv__now_ms() - t0;
        wkv__samples_free(&t->in);
    }
    const wkv_mel *mel = whole_mel(t);
    wkv__longform_set_content(t->lf, mel->content_frames);
    if (t->detect) {
        /* the reference detects on the first 3000 frames as computed (zero-sample
         * frames, not 0.0 padding) */
        wkv_mel_window(mel, 0, WKV_N_FRAMES, t->norm, t->win);
        if (language_once(t, t->win, error) != 0)
            return -1;
    }
    return 0;
}

static int64_t whole_run(wkv_transcriber *t, char **error)
{
    if (!t->begun && whole_begin(t, error) != 0)
        return -1;
    const wkv_mel *mel = whole_mel(t);
    int64_t seek;
    int clip;
    int size = whole_next(t, mel->content_frames, &seek, &clip);
    if (size <= 0) {
        wkv__set_error(error, "transcriber: no window is ready");
        return -1;
    }
    t->clip = clip;
    wkv_mel_window(mel, seek, size, t->norm, t->win);
    int64_t next = wkv_longform_window(t->lf, seek, size, t->win, t->cb, t->user, error);
    if (next < 0)
        return -1;
    t->seek = next;
    return next;
}

/* Piecewise: the frames of the window at t->seek from the samples held (3000 when the
 * language is still to be detected: the zeros after a short input included, as
 * transcribe.py detects on the first 3000 frames of its padded log-mel). */
static int64_t piece_run(wkv_transcriber *t, int size, char **error)
{
    const int64_t seek = t->seek, len = t->in.base + t->in.n;
    const int64_t lo = seek * WKV_HOP - WKV_N_FFT / 2 > 0 ? seek * WKV_HOP - WKV_N_FFT / 2 : 0;
    int64_t hi = t->closed ? len : (seek + size - 1) * WKV_HOP + WKV_N_FFT / 2;
    hi = hi < len ? hi : len;
    hi = hi > lo ? hi : lo;
    double t0 = wkv__now_ms();
    wkv_mel *mel = wkv_mel_compute_range(wkv_context_model(t->ctx), t->in.v + (lo - t->in.base),
                                         (size_t)(hi - lo), lo, t->closed ? len : -1, seek,
                                         t->detect ? WKV_N_FRAMES : size, t->ctx->threads,
                                         error);
    if (!mel)
        return -1;
    t->ctx->stats.mel_ms += wkv__now_ms() - t0;
    if (t->detect) {
        wkv_mel_window(mel, 0, WKV_N_FRAMES, WKV_MEL_WINDOW, t->win);
        if (language_once(t, t->win, error) != 0) {
            wkv_mel_free(mel);
            return -1;
        }
    }
    wkv_mel_window(mel, 0, size, WKV_MEL_WINDOW, t->win);
    wkv_mel_free(mel);
    int64_t next = wkv_longform_window(t->lf, seek, size, t->win, t->cb, t->user, error);
    if (next < 0)
        return -1;
    t->seek = next;
    /* the next window's first frame reads from 200 samples before it: its lo */
    wkv__samples_drop(&t->in, next * WKV_HOP - WKV_N_FFT / 2);
    return next;
}

int64_t wkv_transcriber_run(wkv_transcriber *t, char **error)
{
    int size = wkv_transcriber_next(t);
    if (size <= 0) {
        wkv__set_error(error, "transcriber: no window is ready");
        return -1;
    }
    return t->whole ? whole_run(t, error) : piece_run(t, size, error);
}

int64_t wkv_transcriber_held(const wkv_transcriber *t)
{
    return t->in.n;
}

const char *wkv_transcriber_language(const wkv_transcriber *t, float *probs)
{
    if (probs && t->probs && !t->detect) {
        const wkv_specials *sp = wkv_model_specials(wkv_context_model(t->ctx));
        memcpy(probs, t->probs, (size_t)sp->n_langs * sizeof *probs);
    }
    return wkv__longform_language(t->lf);
}

int wkv_transcriber_segments(const wkv_transcriber *t)
{
    return wkv_longform_segments(t->lf);
}

int64_t wkv_transcriber_content(const wkv_transcriber *t)
{
    const wkv_mel *mel = whole_mel(t);
    return mel ? mel->content_frames : (t->in.base + t->in.n) / WKV_HOP;
}

/* ------------------------------------------------------------------ whole inputs */

static int run_all(wkv_transcriber *t, wkv_progress_cb on_progress, void *user, char **error)
{
    /* the language is detected even when no window runs (as the reference's loop) */
    if (t->whole && !t->begun && whole_begin(t, error) != 0)
        return -1;
    while (wkv_transcriber_next(t) > 0) {
        int64_t seek = wkv_transcriber_run(t, error);
        if (seek < 0)
            return -1;
        if (on_progress)
            on_progress(seek, wkv_transcriber_content(t), user);
    }
    return wkv_transcriber_segments(t);
}

int wkv_transcribe_mel(wkv_context *ctx, const wkv_mel *mel, const wkv_options *o,
                       wkv_segment_cb on_segment, wkv_progress_cb on_progress, void *user,
                       char **error)
{
    wkv_transcriber *t = transcriber_new(ctx, o, 1, on_segment, user, error);
    if (!t)
        return -1;
    t->given = mel;
    t->closed = 1;
    int rc = run_all(t, on_progress, user, error);
    wkv_transcriber_free(t);
    return rc;
}

int wkv_transcribe(wkv_context *ctx, const float *pcm, size_t n, const wkv_options *o,
                   wkv_segment_cb on_segment, wkv_progress_cb on_progress, void *user,
                   char **error)
{
    wkv_transcriber *t = wkv_transcriber_new(ctx, o, on_segment, user, error);
    if (!t)
        return -1;
    int rc = -1;
    if (t->whole) {
        /* the log-mel straight from the caller's samples: no copy of the input */
        double t0 = wkv__now_ms();
        t->mel = wkv_mel_compute(wkv_context_model(ctx), pcm, n, ctx->threads, error);
        ctx->stats.mel_ms += wkv__now_ms() - t0;
        t->closed = 1;
        rc = t->mel ? run_all(t, on_progress, user, error) : -1;
    } else {
        /* a window's worth at a time, each window run once it is in: the transcriber
         * holds about one window, never the whole input */
        int64_t seek = 0, content = (int64_t)n / WKV_HOP;
        rc = 0;
        for (size_t at = 0; rc == 0 && at < n; at += WKV_N_SAMPLES) {
            size_t k = n - at < WKV_N_SAMPLES ? n - at : WKV_N_SAMPLES;
            rc = wkv_transcriber_push(t, pcm + at, k, error);
            while (rc == 0 && wkv_transcriber_next(t) > 0) {
                if ((seek = wkv_transcriber_run(t, error)) < 0)
                    rc = -1;
                else if (on_progress)
                    on_progress(seek, content, user);
            }
        }
        wkv_transcriber_close(t);
        if (rc == 0)
            rc = run_all(t, on_progress, user, error);
    }
    wkv_transcriber_free(t);
    return rc;
}
