/* whisper: the live driver (reference doc section 7), worker thread only.
 *
 * Every `step` ms the audio buffered since the last commit (at most 30 s) is decoded
 * again with a fresh cross-KV cache and the committed text as the prompt.
 * LocalAgreement-2: the text tokens two consecutive runs agree on are committed, a
 * whole segment at a time, and the audio up to the end of the last committed segment
 * is dropped.  When the oldest uncommitted audio would be older than `latency` at the
 * next run (or the buffer reaches 30 s, or the stream ends), the latest hypothesis's
 * complete segments are committed without waiting for agreement.
 *
 * Kept behind the narrow interface in gstwhisperpriv.h (begin, ready, run): the
 * algorithm is moving into the core as wkv_stream_*, and this file will then become
 * a thin call into it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

typedef struct {
    int tok0, tok1;       /* tokens [tok0, tok1) of the run, timestamps included */
    double start, end;    /* seconds from the buffer's start */
    gboolean complete;    /* closed by a timestamp */
} LiveSeg;

/* What a run decided, for building its segments. */
typedef struct {
    const wkv_window_result *r;
    GArray *segs;      /* LiveSeg */
    GArray *hyp;       /* the run's text tokens */
    guint n_commit;
    gboolean force, silent;
    double duration;   /* seconds of audio in the run */
    gint64 base;       /* stream index of the run's first sample */
    GstClockTime base_ts;
    const GArray *arrivals;
} LiveDecision;

void gst_whisper_live_init(GstWhisper *self)
{
    self->live.committed = g_array_new(FALSE, FALSE, sizeof(int));
    self->live.prev_hyp = g_array_new(FALSE, FALSE, sizeof(int));
}

void gst_whisper_live_free(GstWhisper *self)
{
    g_clear_pointer(&self->live.committed, g_array_unref);
    g_clear_pointer(&self->live.prev_hyp, g_array_unref);
}

/* Initial prompt: the reference encodes " " + prompt.strip() as previous text. */
static void live_seed_prompt(GstWhisper *self)
{
    /* the snapshot taken at READY->PAUSED, like every other decoding setting */
    if (!self->w.opt_prompt || !self->w.model)
        return;
    gchar *prompt = g_strdup(self->w.opt_prompt);
    const wkv_model *m = gst_whisper_model_get(self->w.model);
    gchar *text = g_strdup_printf(" %s", g_strstrip(prompt));
    int n = wkv_text_to_tokens(m, text, NULL, 0);
    if (n > 0) {
        int *ids = g_new(int, n);
        if (wkv_text_to_tokens(m, text, ids, n) == n)
            g_array_append_vals(self->live.committed, ids, (guint)n);
        g_free(ids);
    }
    g_free(text);
    g_free(prompt);
}

void gst_whisper_live_begin(GstWhisper *self)
{
    g_array_set_size(self->live.committed, 0);
    g_array_set_size(self->live.prev_hyp, 0);
    live_seed_prompt(self);
}

/* Lock held. */
static guint live_step_ms(GstWhisper *self)
{
    return self->q.run_step_ms ? self->q.run_step_ms : DEFAULT_LIVE_STEP;
}

gboolean gst_whisper_live_ready(GstWhisper *self, WItem *it)
{
    if (it->closed)
        return it->len > it->base;
    gint64 step = (gint64)live_step_ms(self) * WKV_SAMPLE_RATE / 1000;
    return it->len - it->last_run >= step && it->len > it->base;
}

/* Cuts a run's tokens into segments at timestamp pairs, like the long form. */
static GArray *live_split(const wkv_model *m, const wkv_window_result *r, double duration)
{
    const int tb = wkv_model_specials(m)->timestamp_begin;
    const int *t = r->tokens;
    const int n = r->n_tokens;
    GArray *segs = g_array_new(FALSE, TRUE, sizeof(LiveSeg));
    int last = 0;
    for (int i = 1; i < n; i++) {
        if (t[i - 1] >= tb && t[i] >= tb) {
            LiveSeg s = {last, i, (t[last] - tb) * 0.02, (t[i - 1] - tb) * 0.02, TRUE};
            g_array_append_val(segs, s);
            last = i;
        }
    }
    if (last < n) {
        /* text after the last pair: complete when it ends with a timestamp */
        gboolean closed = n - last >= 2 && t[n - 1] >= tb;
        double start = t[last] >= tb ? (t[last] - tb) * 0.02 : 0.0;
        LiveSeg s = {last, n, start, closed ? (t[n - 1] - tb) * 0.02 : duration, closed};
        g_array_append_val(segs, s);
    }
    return segs;
}

/* Appends a segment of a live run unless its text is blank; takes `text`. */
static void add_live_seg(GPtrArray *out, gchar *text, const LiveDecision *d, double start,
                         double end, gboolean final)
{
    gchar *stripped = g_strstrip(g_strdup(text));
    if (!*stripped) {
        g_free(stripped);
        g_free(text);
        return;
    }
    g_free(stripped);
    WSeg *w = g_new0(WSeg, 1);
    w->text = text;
    w->pts = d->base_ts + gst_whisper_secs_to_ns(start);
    w->duration = gst_whisper_secs_to_ns(end) - gst_whisper_secs_to_ns(start);
    w->avg_logprob = d->r->avg_logprob;
    w->no_speech_prob = d->r->no_speech_prob;
    w->final = final;
    w->arrived = GST_CLOCK_TIME_NONE;
    if (final) /* the latency promise is about the segment's first sample */
        w->arrived = gst_whisper_arrival(d->arrivals,
                                         d->base + (gint64)llround(start * WKV_SAMPLE_RATE));
    g_ptr_array_add(out, w);
}

static gchar *live_text(const wkv_model *m, const int *toks, int n)
{
    char *t = wkv_tokens_to_text(m, toks, n, 1);
    gchar *g = g_strdup(t ? t : "");
    free(t);
    return g;
}

/* Text tokens (below eot) of tokens [a, b). */
static void text_tokens(const wkv_model *m, const int *t, int a, int b, GArray *out)
{
    const int eot = wkv_model_specials(m)->eot;
    for (int i = a; i < b; i++)
        if (t[i] < eot)
            g_array_append_val(out, t[i]);
}

static guint count_text_tokens(const wkv_model *m, const int *t, int a, int b)
{
    GArray *tt = g_array_new(FALSE, FALSE, sizeof(int));
    text_tokens(m, t, a, b, tt);
    guint n = tt->len;
    g_array_unref(tt);
    return n;
}

/* Log-mel, language detection (once), encoder and decoder on pcm[0..n).  *size gets
 * the frames decoded (0: nothing to decode).  FALSE on an error (reported). */
static gboolean live_decode(GstWhisper *self, const float *pcm, gint64 n,
                            wkv_window_result *r, int *size)
{
    GstWhisperWorker *w = &self->w;
    const wkv_model *m = gst_whisper_model_get(w->model);
    char *err = NULL;
    wkv_mel *mel = wkv_mel_compute(m, pcm, (size_t)n, w->run_threads, &err);
    if (!mel)
        return gst_whisper_worker_error(self, "log-mel", err);
    *size = (int)MIN((gint64)WKV_N_FRAMES, mel->content_frames);
    wkv_mel_window(mel, 0, *size, WKV_MEL_WINDOW, w->win);
    wkv_mel_free(mel);
    const int *prompt = NULL;
    int n_prompt = 0;
    if (w->opts.condition_on_previous_text || self->live.committed->len) {
        prompt = (const int *)(void *)self->live.committed->data;
        n_prompt = (int)self->live.committed->len;
    }
    if (*size > 0 && w->detect_language) {
        /* live language=auto: detect once, on the first run's audio */
        int lang = wkv_detect_language(w->ctx, w->win, NULL, &err);
        if (lang < 0)
            return gst_whisper_worker_error(self, "language detection", err);
        g_free(w->opt_language);
        w->opt_language = g_strdup(wkv_lang_code(m, lang));
        w->opts.language = w->opt_language;
        w->detect_language = w->detect_pending = FALSE;
        GST_INFO_OBJECT(self, "detected language %s (live)", w->opt_language);
    }
    if (*size > 0 && (wkv_encode(w->ctx, w->win) != 0 ||
                      wkv_decode_window(w->ctx, prompt, n_prompt, &w->opts, r, &err) != 0))
        return gst_whisper_worker_error(self, "live run",
                                        err ? err : strdup("the encoder failed"));
    return TRUE;
}

/* How many of the run's segments to commit. */
static guint live_choose(const wkv_model *m, LiveDecision *d, guint agree, gboolean at_end)
{
    guint n_commit = 0, text_seen = 0;
    for (guint i = 0; i < d->segs->len; i++) {
        LiveSeg *s = &g_array_index(d->segs, LiveSeg, i);
        text_seen += count_text_tokens(m, d->r->tokens, s->tok0, s->tok1);
        gboolean ok = (s->complete || at_end) && (d->force || text_seen <= agree);
        if (!ok)
            break;
        n_commit = i + 1;
    }
    if (d->force && n_commit == 0 && d->segs->len > 0 && !at_end) {
        /* no complete segment yet: the whole hypothesis becomes final so that the
         * promise holds */
        n_commit = d->segs->len;
    }
    return n_commit;
}

/* Builds the finals and the partial of a run into `out`, extends the committed
 * prompt and keeps the rest of the hypothesis; returns the seconds done with. */
static double live_emit(GstWhisper *self, const wkv_model *m, LiveDecision *d, GPtrArray *out)
{
    const wkv_window_result *r = d->r;
    double trim = 0; /* seconds of the buffer done with */
    guint committed_text = 0;
    for (guint i = 0; i < d->n_commit; i++) {
        LiveSeg *s = &g_array_index(d->segs, LiveSeg, i);
        double end = MIN(s->end, d->duration);
        double start = MIN(s->start, end);
        gchar *text = live_text(m, r->tokens + s->tok0, s->tok1 - s->tok0);
        committed_text += count_text_tokens(m, r->tokens, s->tok0, s->tok1);
        g_array_append_vals(self->live.committed, r->tokens + s->tok0, (guint)(s->tok1 - s->tok0));
        if (end > start)
            add_live_seg(out, text, d, start, end, TRUE);
        else
            g_free(text);
        trim = MAX(trim, end);
    }
    if (d->force && (d->n_commit == d->segs->len || d->silent))
        trim = d->duration; /* nothing left worth waiting for */
    if (self->live.committed->len > 1000) /* the decoder uses the last 223 */
        g_array_remove_range(self->live.committed, 0, self->live.committed->len - 1000);
    /* the uncommitted rest: one partial */
    if (d->n_commit < d->segs->len) {
        LiveSeg *first = &g_array_index(d->segs, LiveSeg, d->n_commit);
        LiveSeg *last = &g_array_index(d->segs, LiveSeg, d->segs->len - 1);
        gchar *text = live_text(m, r->tokens + first->tok0, last->tok1 - first->tok0);
        /* a partial covers all the audio since the last final: the next run starts
         * there, so the buffer that supersedes it never starts earlier */
        add_live_seg(out, text, d, trim, d->duration, FALSE);
    }
    /* the next run is compared with what is left of this one */
    GArray *prev = self->live.prev_hyp;
    g_array_set_size(prev, 0);
    if (committed_text < d->hyp->len)
        g_array_append_vals(prev, &g_array_index(d->hyp, int, committed_text),
                            d->hyp->len - committed_text);
    return trim;
}

/* Commits and pushes what run `r` on samples [base, base + n) of `it` gave.  Lock not
 * held on entry, held on exit. */
static gboolean live_finish(GstWhisper *self, WItem *it, LiveDecision *d, double busy_ms,
                            gboolean at_end, guint step, guint lateness)
{
    const wkv_model *m = gst_whisper_model_get(self->w.model);
    GPtrArray *out = g_ptr_array_new_with_free_func(gst_whisper_seg_free);
    double trim = live_emit(self, m, d, out);
    gst_whisper_stats_account(self, busy_ms, (double)step / 1000.0);

    gint64 trim_samples = d->base + (gint64)llround(trim * WKV_SAMPLE_RATE);
    g_mutex_lock(&self->q.lock);
    if (self->q.flushing) {
        g_ptr_array_unref(out);
        return TRUE;
    }
    if (trim_samples > it->base)
        witem_drop_before(it, trim_samples);
    if (at_end)
        witem_drop_before(it, it->len);
    gint64 new_base = it->base;
    GstClockTime t0 = it->t0;
    g_mutex_unlock(&self->q.lock);

    GstFlowReturn ret = gst_whisper_text_push_segments(self, out,
        t0 + gst_whisper_samples_to_ns(new_base) + lateness * GST_MSECOND);
    g_ptr_array_unref(out);
    g_mutex_lock(&self->q.lock);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING && ret != GST_FLOW_EOS) {
        GST_ELEMENT_FLOW_ERROR(self, ret);
        return FALSE;
    }
    return TRUE;
}

gboolean gst_whisper_live_run(GstWhisper *self, WItem *it)
{
    const wkv_model *m = gst_whisper_model_get(self->w.model);
    gint64 base = it->base;
    gint64 n = MIN(it->len - base, (gint64)LIVE_MAX_SAMPLES);
    gboolean at_end = it->closed && base + n == it->len;
    GstClockTime t0 = it->t0;
    float *pcm = gst_whisper_worker_scratch(self, (gsize)n + 1);
    memcpy(pcm, it->pcm, (gsize)n * sizeof(float));
    GArray *arrivals = it->arrivals ? g_array_copy(it->arrivals) : NULL;
    it->last_run = it->len;
    gint64 pending = it->len - base; /* audio waiting for text, in samples */
    guint step = live_step_ms(self);
    guint latency = gst_whisper_props_latency(self), lateness = gst_whisper_props_lateness(self);
    g_mutex_unlock(&self->q.lock);

    gint64 t_start = g_get_monotonic_time();
    wkv_window_result r;
    memset(&r, 0, sizeof r);
    int size = 0;
    if (!live_decode(self, pcm, n, &r, &size)) {
        if (arrivals)
            g_array_unref(arrivals);
        wkv_window_result_clear(&r);
        g_mutex_lock(&self->q.lock);
        return FALSE;
    }
    double busy_ms = (g_get_monotonic_time() - t_start) / 1000.0;
    const wkv_options *o = &self->w.opts;
    LiveDecision d = {&r, NULL, NULL, 0, FALSE, FALSE, (double)n / WKV_SAMPLE_RATE, base,
                      t0 + gst_whisper_samples_to_ns(base) + lateness * GST_MSECOND, arrivals};
    d.silent = size <= 0 || (o->no_speech_threshold < 1.0f &&
                             r.no_speech_prob > o->no_speech_threshold &&
                             !(r.avg_logprob > o->logprob_threshold));
    d.segs = d.silent ? g_array_new(FALSE, TRUE, sizeof(LiveSeg)) : live_split(m, &r, d.duration);

    /* agreement with the previous run, in text tokens */
    d.hyp = g_array_new(FALSE, FALSE, sizeof(int));
    text_tokens(m, r.tokens, 0, d.silent ? 0 : r.n_tokens, d.hyp);
    GArray *prev = self->live.prev_hyp;
    guint agree = 0;
    while (agree < d.hyp->len && agree < prev->len &&
           g_array_index(d.hyp, int, agree) == g_array_index(prev, int, agree))
        agree++;
    /* Would the oldest waiting audio be older than `latency` once the next run is
     * done?  That run starts after max(step, this run) and takes about as long as
     * this one (with a margin). */
    d.force = at_end || n >= LIVE_MAX_SAMPLES ||
              (double)pending * 1000.0 / WKV_SAMPLE_RATE + MAX((double)step, busy_ms) +
                      busy_ms * 1.25 >= latency;
    d.n_commit = live_choose(m, &d, agree, at_end);
    GST_DEBUG_OBJECT(self, "live run on %.2f s (%.2f s waiting) took %.0f ms: %u segments, "
                     "%u/%u tokens agreed, %scommitting %u", n / 16000.0, pending / 16000.0,
                     busy_ms, d.segs->len, agree, d.hyp->len, d.force ? "forced, " : "",
                     d.n_commit);
    gboolean ok = live_finish(self, it, &d, busy_ms, at_end, step, lateness);
    g_array_unref(d.hyp);
    g_array_unref(d.segs);
    if (arrivals)
        g_array_unref(arrivals);
    wkv_window_result_clear(&r);
    return ok;
}
