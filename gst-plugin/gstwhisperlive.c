/* whisper: the live driver, worker thread only: glue between the element's queue and
 * the core's live stream (wkv_stream_*, whisperkv.h "live stream"), which holds the
 * algorithm (re-runs, LocalAgreement-2, forced commits, trimming).
 *
 * The element's side: it pushes the stretch's new samples into the stream, calls
 * wkv_stream_finish when the stretch ends (EOS or a discontinuity) so nothing decoded
 * is lost, maps the stream's times to PTS, returns the finals (and partials) of each
 * run to the worker, to go out with a GAP up to the run's first uncommitted sample, and
 * keeps in its queue only the
 * audio from wkv_stream_base on.  One stream per activation (the language is detected
 * once); wkv_stream_reset at each new stretch. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"
#include "cue_text.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

/* The segments of one run and where its uncommitted audio starts (stream index). */
typedef struct {
    GPtrArray *segs; /* WSeg */
    gint64 new_base;
} LiveBatch;

/* What the callbacks need during one call into the stream. */
typedef struct {
    GstWhisper *self;
    gint64 offset;           /* stream index of the stretch's sample 0 */
    GstClockTime t0;         /* text time of the stretch's sample 0 */
    guint lateness;
    const GArray *arrivals;  /* a copy of the stretch's */
    GArray *batches;         /* LiveBatch, one per run */
    gboolean failed;         /* an allocation failed (ERROR posted): the stream ends */
    GstClockTime close_hold; /* at a close: the open cue's start (its buffer goes out in
                              * the last run's batch; the runs before, the finish's
                              * earlier runs, must not GAP past it) */
} LiveCall;

static void batch_clear(gpointer p)
{
    LiveBatch *b = p;
    g_ptr_array_unref(b->segs);
}

static void live_on_run(const wkv_stream_run *run, void *user)
{
    LiveCall *c = *(LiveCall **)user;
    LiveBatch b = {g_ptr_array_new_with_free_func(gst_whisper_seg_free), run->new_base};
    g_array_append_val(c->batches, b);
    gst_whisper_stats_account(c->self, run->busy_ms, 0); /* the audio: per push */
    GST_DEBUG_OBJECT(c->self, "live run on %.2f s (%.2f s waiting) took %.0f ms: %d pieces, "
                     "%d tokens agreed, %scommitting %d", run->n / 16000.0,
                     run->pending / 16000.0, run->busy_ms, run->n_pieces, run->agreed,
                     run->forced ? "forced, " : "", run->n_commit);
}

/* The text time of `secs` after the run's first sample (stream seconds from it). */
static GstClockTime run_time(GstClockTime base_ts, double secs)
{
    return base_ts + gst_whisper_secs_to_ns(secs);
}

/* Clock time when the stream's sample at `secs` after the run's first came in. */
static GstClockTime run_arrival(const LiveCall *c, const wkv_stream_segment *seg, double secs)
{
    return gst_whisper_arrival(c->arrivals, seg->run_base - c->offset +
                                                (gint64)llround(secs * WKV_SAMPLE_RATE));
}

/* One buffer of a live cue.  The cutter's times are text times in seconds (exact back
 * to the nanosecond).  A cue waits for the word that opens the next one, so it is
 * outside the latency promise (its words were final in time). */
static void live_cue_part(const cue_word *q, guint n, double a, double b, int mark,
                          void *user)
{
    GstWhisper *self = user;
    g_return_if_fail(self->live.cue_out != NULL);
    WSeg *s = g_new0(WSeg, 1);
    s->text = cue_text(q, n, self->w.highlight, mark); /* markup: escaped */
    s->text_only = TRUE;
    s->final = TRUE;
    s->pts = gst_whisper_secs_to_ns(a);
    GstClockTime e = gst_whisper_secs_to_ns(b);
    s->duration = e > s->pts ? e - s->pts : 0;
    s->arrived = GST_CLOCK_TIME_NONE;
    g_ptr_array_add(self->live.cue_out, s);
}

/* text-unit=cue live: a cue the cutter completed, or its highlighted sub-cues. */
static void live_cue(const cue_word *words, guint n, void *user)
{
    GstWhisper *self = user;
    cue_parts(words, n, self->w.highlight, live_cue_part, self);
}

/* A final's words (text times) into the cue cutter; complete cues go to `out`.  FALSE
 * when out of memory (ERROR posted). */
static gboolean live_cut(GstWhisper *self, const GArray *words, GPtrArray *out)
{
    wkv_word *ws = gst_whisper_try_new(wkv_word, words->len + 1);
    if (!ws) {
        gst_whisper_alloc_error(self, "a segment's words", words->len + 1, sizeof(wkv_word));
        return FALSE;
    }
    for (guint k = 0; k < words->len; k++) {
        const WWord *w = &g_array_index(words, WWord, k);
        ws[k] = (wkv_word){w->word, (double)w->start / 1e9, (double)w->end / 1e9, w->probability};
    }
    wkv_segment seg = {0};
    seg.words = ws;
    seg.n_words = (int)words->len;
    self->live.cue_out = out;
    cue_cutter_segment(self->live.cut, &seg);
    self->live.cue_out = NULL;
    g_free(ws);
    return TRUE;
}

static void live_cut_finish(GstWhisper *self, GPtrArray *out)
{
    self->live.cue_out = out;
    cue_cutter_finish(self->live.cut);
    self->live.cue_out = NULL;
}

/* Word timestamps: the segment's words for its message and, text-unit=word and a
 * final, one buffer per word (the segment itself makes none); text-unit=cue and a
 * final, its words go to the cue cutter. */
static void live_words(LiveCall *c, const wkv_stream_segment *seg, GstClockTime base_ts,
                       WSeg *w, GPtrArray *out)
{
    GstWhisperWorker *wk = &c->self->w;
    const double base_s = (double)seg->run_base / WKV_SAMPLE_RATE;
    gboolean buffers = seg->final && wk->text_unit == GST_WHISPER_TEXT_UNIT_WORD;
    gboolean cues = seg->final && c->self->live.cut;
    w->no_buffer = buffers || cues;
    w->words = g_array_sized_new(FALSE, FALSE, sizeof(WWord), (guint)seg->n_words);
    for (int k = 0; k < seg->n_words; k++) {
        const wkv_word *wd = &seg->words[k];
        WWord ww = {g_strdup(wd->word), run_time(base_ts, wd->start - base_s),
                    run_time(base_ts, wd->end - base_s), wd->probability};
        g_array_append_val(w->words, ww);
        if (!buffers)
            continue;
        WSeg *ws = g_new0(WSeg, 1);
        ws->text = g_strdup(wd->word);
        ws->text_only = TRUE;
        ws->final = TRUE;
        ws->pts = ww.start;
        ws->duration = ww.end > ww.start ? ww.end - ww.start : 0;
        /* the latency promise, word by word: from the word's first sample */
        ws->arrived = run_arrival(c, seg, wd->start - base_s);
        g_ptr_array_add(out, ws);
    }
    if (cues && !c->failed && !live_cut(c->self, w->words, out))
        c->failed = TRUE;
}

static void live_on_segment(const wkv_stream_segment *seg, void *user)
{
    LiveCall *c = *(LiveCall **)user;
    g_return_if_fail(c->batches->len > 0);
    LiveBatch *b = &g_array_index(c->batches, LiveBatch, c->batches->len - 1);
    /* exact to the nanosecond: the run's first sample, then the segment's times */
    GstClockTime base_ts = c->t0 + gst_whisper_samples_to_ns(seg->run_base - c->offset) +
                           c->lateness * GST_MSECOND;
    GstClockTime a = run_time(base_ts, seg->rel_start), e = run_time(base_ts, seg->rel_end);
    WSeg *w = g_new0(WSeg, 1);
    w->text = g_strdup(seg->text);
    w->pts = a;
    w->duration = e > a ? e - a : 0;
    w->avg_logprob = seg->avg_logprob;
    w->no_speech_prob = seg->no_speech_prob;
    w->final = seg->final;
    w->arrived = GST_CLOCK_TIME_NONE;
    if (seg->final) /* the latency promise is about the segment's first sample */
        w->arrived = run_arrival(c, seg, seg->rel_start);
    g_ptr_array_add(b->segs, w);
    if (c->self->w.opts.word_timestamps)
        live_words(c, seg, base_ts, w, b->segs);
}

/* vad-model: a speech start or end (post-vad-messages). */
static void live_on_vad(int speech, int64_t index, void *user)
{
    LiveCall *c = *(LiveCall **)user;
    GstClockTime ts = c->t0 + gst_whisper_samples_to_ns(MAX(0, index - c->offset));
    gst_whisper_vad_post(c->self, speech, ts);
}

void gst_whisper_live_init(GstWhisper *self)
{
    memset(&self->live, 0, sizeof self->live);
}

void gst_whisper_live_free(GstWhisper *self)
{
    wkv_stream_free(self->live.stream);
    self->live.stream = NULL;
    cue_cutter_free(self->live.cut);
    self->live.cut = NULL;
}

/* Lock held. */
static guint live_step_ms(GstWhisper *self)
{
    return self->q.run_step_ms ? self->q.run_step_ms : DEFAULT_LIVE_STEP;
}

/* The properties are guint, the stream's options int: beyond G_MAXINT ms is forever. */
static int live_ms(guint ms)
{
    return (int)MIN(ms, (guint)G_MAXINT);
}

gboolean gst_whisper_live_begin(GstWhisper *self)
{
    GstWhisperLive *l = &self->live;
    if (!l->stream) {
        /* the decoding options snapshot of READY->PAUSED, initial prompt included */
        wkv_stream_options so;
        wkv_stream_options_default(&so);
        so.step_ms = live_ms(live_step_ms(self));
        so.latency_ms = live_ms(gst_whisper_props_latency(self));
        gst_whisper_props_commit(self, &so.commit_policy, &so.frame_threshold_ms,
                                 &so.max_held_ms);
        so.on_run = live_on_run;
        so.run_user = &l->call;
        so.vad_model = gst_whisper_vad_model_get(self->w.vad); /* NULL: off */
        so.vad_params = self->w.vad_params;
        so.on_vad = live_on_vad;
        so.vad_user = &l->call;
        char *err = NULL;
        l->stream = wkv_stream_new(self->w.ctx, &self->w.opts, &so, live_on_segment,
                                   &l->call, &err);
        if (!l->stream)
            return gst_whisper_inference_error(self, "live stream", err);
    }
    wkv_stream_reset(l->stream);
    /* a new stretch: cues start afresh (a flush dropped the open one's words) */
    cue_cutter_free(l->cut);
    l->cut = NULL;
    if (self->w.text_unit == GST_WHISPER_TEXT_UNIT_CUE && self->w.opts.word_timestamps)
        l->cut = cue_cutter_new(&self->w.cue_opts, live_cue, self);
    l->offset = wkv_stream_length(l->stream);
    l->pushed = 0;
    return TRUE;
}

gboolean gst_whisper_live_ready(GstWhisper *self, WItem *it)
{
    const GstWhisperLive *l = &self->live;
    if (it->closed)
        return it->len > l->pushed ||
               (l->stream && wkv_stream_length(l->stream) > wkv_stream_base(l->stream));
    /* the stream runs once a step of new audio is in (it counts from its last run,
     * which is where the last push ended): waking for less only copies samples */
    return it->len - l->pushed >= (gint64)live_step_ms(self) * WKV_SAMPLE_RATE / 1000;
}

/* The language the stream detected ("auto" on a multilingual model). */
static void live_language(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    const char *code = wkv_stream_language(self->live.stream);
    if (!w->detect_language || !g_strcmp0(code, "auto"))
        return;
    g_free(w->opt_language);
    w->opt_language = g_strdup(code);
    w->opts.language = w->opt_language;
    w->detect_language = FALSE;
    GST_INFO_OBJECT(self, "detected language %s (live)", w->opt_language);
}

/* Each run's segments as a piece, with a GAP up to its first uncommitted sample (or
 * the open cue's start: its words are committed but their buffer is still to come). */
static void live_pieces(GstWhisper *self, LiveCall *c, GstWhisperDecoded *out)
{
    double open_s;
    GstClockTime hold = self->live.cut && cue_cutter_pending(self->live.cut, &open_s)
                            ? gst_whisper_secs_to_ns(open_s) : GST_CLOCK_TIME_NONE;
    for (guint i = 0; i < c->batches->len; i++) {
        LiveBatch *b = &g_array_index(c->batches, LiveBatch, i);
        GstClockTime until = c->t0 + gst_whisper_samples_to_ns(b->new_base - c->offset) +
                             c->lateness * GST_MSECOND;
        if (i + 1 < c->batches->len && GST_CLOCK_TIME_IS_VALID(c->close_hold))
            until = MIN(until, c->close_hold);
        gst_whisper_decoded_add(out, g_ptr_array_ref(b->segs), MIN(until, hold));
    }
}

/* The live run's copy of its audio: at least n floats, NULL when it cannot grow. */
static float *scratch(GstWhisper *self, gsize n)
{
    if (n > self->live.scratch_cap) {
        float *p = gst_whisper_try_renew(self->live.scratch, n, sizeof(float));
        if (!p)
            return NULL;
        self->live.scratch = p;
        self->live.scratch_cap = n;
    }
    return self->live.scratch;
}

gboolean gst_whisper_live_run(GstWhisper *self, WItem *it, GstWhisperDecoded *out)
{
    GstWhisperLive *l = &self->live;
    wkv_stream *st = l->stream;
    if (it->base > l->pushed) {
        /* the queue skipped audio never pushed (falling behind): the stream drops what
         * it holds and goes on from the stretch's first sample kept */
        wkv_stream_drop(st, wkv_stream_length(st));
        l->offset = wkv_stream_length(st) - it->base;
        l->pushed = it->base;
    } else if (l->offset + it->base > wkv_stream_base(st)) {
        wkv_stream_drop(st, l->offset + it->base); /* skipped audio already pushed */
    }
    gint64 from = l->pushed, n = it->len - from;
    gboolean closed = it->closed;
    float *pcm = scratch(self, (gsize)n + 1);
    if (!pcm) {
        gst_whisper_alloc_error(self, "the audio of a live run", (gsize)n + 1, sizeof(float));
        return FALSE;
    }
    memcpy(pcm, it->pcm + (from - it->base), (gsize)n * sizeof(float));
    LiveCall c = {self, l->offset, it->t0, gst_whisper_props_lateness(self),
                  it->arrivals ? g_array_copy(it->arrivals) : NULL,
                  g_array_new(FALSE, FALSE, sizeof(LiveBatch)), FALSE, GST_CLOCK_TIME_NONE};
    g_array_set_clear_func(c.batches, batch_clear);
    l->pushed = it->len;
    g_mutex_unlock(&self->q.lock);

    l->call = &c;
    wkv_stream_set_latency(st, live_ms(gst_whisper_props_latency(self)));
    /* the stream's clock: the time of the last sample pushed (only the commit-delay
     * figures of wkv_stream_get_stats use it; the element measures on its clock) */
    double now = (double)(l->offset + from + n) / WKV_SAMPLE_RATE;
    char *err = NULL;
    int rc = wkv_stream_push(st, pcm, (size_t)n, now, &err);
    if (rc >= 0 && closed)
        rc = wkv_stream_finish(st, now, &err);
    if (rc >= 0 && closed && l->cut) {
        /* the stretch's last cue, after its last run's segments */
        if (c.batches->len == 0) {
            LiveBatch b = {g_ptr_array_new_with_free_func(gst_whisper_seg_free),
                           wkv_stream_length(st)};
            g_array_append_val(c.batches, b);
        }
        double open_s;
        if (cue_cutter_pending(l->cut, &open_s))
            c.close_hold = gst_whisper_secs_to_ns(open_s);
        live_cut_finish(self, g_array_index(c.batches, LiveBatch, c.batches->len - 1).segs);
    }
    l->call = NULL;
    if (c.arrivals)
        g_array_unref((GArray *)c.arrivals);
    if (rc < 0) {
        g_array_unref(c.batches);
        gst_whisper_decoded_fail(out, "live run", err);
        g_mutex_lock(&self->q.lock);
        return FALSE;
    }
    live_language(self);
    gst_whisper_stats_account(self, 0, (double)n / WKV_SAMPLE_RATE);

    g_mutex_lock(&self->q.lock);
    if (self->q.flushing) {
        g_array_unref(c.batches);
        return TRUE;
    }
    /* the queue keeps only what the stream still needs.  Why two copies of that audio
     * (the stream holds it too, stream_priv.h): the queue's bound on a live backlog
     * (LIVE_MAX_SAMPLES, gstwhisperqueue.c) counts what is queued, so what the stream
     * has not committed must still count there, or a worker that falls behind would
     * hold up to 30 s more than the bound says before any audio is skipped */
    witem_drop_before(it, MIN(wkv_stream_base(st) - l->offset, l->pushed));
    g_cond_broadcast(&self->q.space);

    live_pieces(self, &c, out);
    g_array_unref(c.batches);
    if (c.failed) { /* the runs' text goes out; a final's cue is missing: the end */
        out->failed = TRUE;
        return FALSE;
    }
    return TRUE;
}
