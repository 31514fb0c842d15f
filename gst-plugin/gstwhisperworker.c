/* whisper: the worker, a GstTask on text_src.  It takes the audio off the queue (under
 * `q.lock`, which it drops while it computes), runs the offline windows here or the
 * live driver's runs (gstwhisperlive.c), and hands text and events to
 * gstwhispertext.c in the order they came.
 *
 * Offline, a stretch's samples go to the core's offline transcriber (wkv_transcriber,
 * window normalization: each window runs as soon as its audio is in) as they arrive,
 * and leave the queue then: one copy; the queue's bound on what the worker holds
 * counts the transcriber's samples (q.worker_held).  The element keeps only the glue:
 * times to PTS, cues, GAPs, VAD's time map. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"
#include "cue_text.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

gboolean gst_whisper_worker_error(GstWhisper *self, const gchar *what, char *err)
{
    GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Whisper inference failed"),
                      ("%s: %s", what, err ? err : "unknown error"));
    free(err);
    return FALSE;
}

gboolean gst_whisper_worker_pushed(GstWhisper *self, GstFlowReturn ret)
{
    g_mutex_lock(&self->q.lock);
    /* flushing and EOS downstream end the text quietly; the rest is fatal */
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING && ret != GST_FLOW_EOS) {
        GST_ELEMENT_FLOW_ERROR(self, ret);
        return FALSE;
    }
    return TRUE;
}

float *gst_whisper_worker_scratch(GstWhisper *self, gsize n)
{
    GstWhisperWorker *w = &self->w;
    if (n > w->scratch_cap) {
        float *scratch = gst_whisper_try_renew(w->scratch, n, sizeof(float));
        if (!scratch)
            return NULL;
        w->scratch = scratch;
        w->scratch_cap = n;
    }
    return w->scratch;
}

/* Places `s` at [a, b) seconds of the stretch (t0, limit and lateness as
 * GstWhisperCollect's) and adds it to `out`; frees it instead when it starts past the
 * limit. */
static void place(WSeg *s, double a_s, double b_s, GstClockTime t0, GstClockTime limit,
                  guint lateness, GPtrArray *out)
{
    GstClockTime a = gst_whisper_secs_to_ns(a_s), b = gst_whisper_secs_to_ns(b_s);
    s->pts = t0 + a;
    s->duration = b > a ? b - a : 0;
    s->final = TRUE;
    s->arrived = GST_CLOCK_TIME_NONE; /* offline: no latency promise */
    if (GST_CLOCK_TIME_IS_VALID(limit)) {
        /* the last window of a stretch that a DISCONT or a gap closed: no text past
         * the hole (at EOS the segments stay exactly the long form's); the hole is in
         * the audio's time, before `lateness` */
        if (s->pts >= limit) {
            gst_whisper_seg_free(s);
            return;
        }
        if (s->pts + s->duration > limit)
            s->duration = limit - s->pts;
    }
    s->pts += lateness * GST_MSECOND;
    g_ptr_array_add(out, s);
}

static GstClockTime word_time(const GstWhisperCollect *c, double secs)
{
    return c->t0 + gst_whisper_secs_to_ns(secs) + c->lateness * GST_MSECOND;
}

/* One buffer of a cue: [a, b) seconds, word `mark` underlined (-1: none); the text as
 * the CLI's SRT writes it (cues/cue_text.c), escaped as markup when the caps are
 * pango-markup (highlight-words). */
static void cue_part(const cue_word *q, guint n, double a, double b, int mark, void *user)
{
    GstWhisperWorker *w = user;
    WSeg *s = g_new0(WSeg, 1);
    s->text = cue_text(q, n, w->highlight, mark);
    s->text_only = TRUE;
    place(s, a, b, w->cue_t0, w->cue_limit, w->cue_lateness, w->cue_out);
}

/* text-unit=cue: a complete cue, its words' texts joined (line breaks included), or
 * with highlight-words its highlighted sub-cues. */
static void collect_cue(const cue_word *words, guint n, void *user)
{
    GstWhisperWorker *w = user;
    cue_parts(words, n, w->highlight, cue_part, w);
}

int gst_whisper_worker_collect(const wkv_segment *speech_seg, void *user)
{
    GstWhisperCollect *c = user;
    GstWhisperWorker *w = &c->self->w;
    /* with VAD: onto the stretch's timeline, as the CLI reports it */
    wkv_segment mapped;
    const wkv_segment *seg = speech_seg;
    g_autofree wkv_word *mapped_words = NULL;
    if (w->vad_map) {
        gsize n_words = (gsize)MAX(1, speech_seg->n_words);
        mapped_words = gst_whisper_try_new(wkv_word, n_words);
        if (!mapped_words) {
            gst_whisper_alloc_error(c->self, "a segment's words", n_words, sizeof(wkv_word));
            c->failed = TRUE;
            return 1; /* stops the transcriber's loop */
        }
        wkv_vad_map_result(w->vad_map, speech_seg, &mapped, mapped_words);
        seg = &mapped;
    }
    if (!c->language && seg->language)
        c->language = g_strdup(seg->language);
    WSeg *s = g_new0(WSeg, 1);
    s->text = g_strdup(seg->text);
    s->avg_logprob = seg->avg_logprob;
    s->no_speech_prob = seg->no_speech_prob;
    s->no_buffer = w->text_unit != GST_WHISPER_TEXT_UNIT_SEGMENT;
    if (w->opts.word_timestamps) { /* a list, maybe empty, in every message */
        s->words = g_array_sized_new(FALSE, FALSE, sizeof(WWord), (guint)seg->n_words);
        for (int k = 0; k < seg->n_words; k++) {
            const wkv_word *wd = &seg->words[k];
            WWord ww = {g_strdup(wd->word), word_time(c, wd->start), word_time(c, wd->end),
                        wd->probability};
            g_array_append_val(s->words, ww);
        }
    }
    place(s, seg->start, seg->end, c->t0, c->limit, c->lateness, c->segs);
    if (w->text_unit == GST_WHISPER_TEXT_UNIT_WORD) {
        for (int k = 0; k < seg->n_words; k++) {
            WSeg *ws = g_new0(WSeg, 1);
            ws->text = g_strdup(seg->words[k].word);
            ws->text_only = TRUE;
            place(ws, seg->words[k].start, seg->words[k].end, c->t0, c->limit, c->lateness,
                  c->segs);
        }
    } else if (w->text_unit == GST_WHISPER_TEXT_UNIT_CUE && w->cut) {
        w->cue_out = c->segs;
        cue_cutter_segment(w->cut, seg);
        w->cue_out = NULL;
    }
    return 0;
}

/* The transcriber's callback, set once per stretch: the window under way's
 * GstWhisperCollect. */
static int collect_segment_cb(const wkv_segment *seg, void *user)
{
    GstWhisper *self = user;
    return gst_whisper_worker_collect(seg, self->w.collect);
}

/* text-unit=cue: the stretch's cues start (its limit and lateness are set per window);
 * the last one goes out at its end. */
static void cues_begin(GstWhisper *self, GstClockTime t0)
{
    GstWhisperWorker *w = &self->w;
    cue_cutter_free(w->cut);
    w->cut = NULL;
    if (w->text_unit != GST_WHISPER_TEXT_UNIT_CUE)
        return;
    w->cut = cue_cutter_new(&w->cue_opts, collect_cue, w);
    w->cue_t0 = t0;
    w->cue_limit = GST_CLOCK_TIME_NONE;
    w->cue_lateness = gst_whisper_props_lateness(self);
}

GstClockTime gst_whisper_worker_cue_hold(GstWhisper *self)
{
    const GstWhisperWorker *w = &self->w;
    double start;
    if (!w->cut || !cue_cutter_pending(w->cut, &start))
        return GST_CLOCK_TIME_NONE;
    return w->cue_t0 + gst_whisper_secs_to_ns(start) + w->cue_lateness * GST_MSECOND;
}

/* Pushes the stretch's last cue, if any, and forgets the cutter. */
static void cues_finish(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    if (!w->cut)
        return;
    GPtrArray *out = g_ptr_array_new_with_free_func(gst_whisper_seg_free);
    w->cue_out = out;
    cue_cutter_finish(w->cut);
    w->cue_out = NULL;
    cue_cutter_free(w->cut);
    w->cut = NULL;
    gst_whisper_text_push_segments(self, out, GST_CLOCK_TIME_NONE);
    g_ptr_array_unref(out);
}

void gst_whisper_worker_forget_cues(GstWhisper *self)
{
    cue_cutter_free(self->w.cut);
    self->w.cut = NULL;
}

/* Hands the stretch's new samples to the transcriber (the queue's copy goes) and
 * closes it when the stretch has ended.  Lock held.  FALSE on an error (reported). */
static gboolean offline_feed(GstWhisper *self, WItem *it)
{
    GstWhisperWorker *w = &self->w;
    if (it->len > w->tr_pushed) {
        char *err = NULL;
        if (wkv_transcriber_push(w->tr, it->pcm + (w->tr_pushed - it->base),
                                 (size_t)(it->len - w->tr_pushed), &err) != 0)
            return gst_whisper_worker_error(self, "offline transcriber", err);
        w->tr_pushed = it->len;
        witem_drop_before(it, it->len);
    }
    if (it->closed && !w->tr_closed) {
        wkv_transcriber_close(w->tr);
        w->tr_closed = TRUE;
    }
    self->q.worker_held = wkv_transcriber_held(w->tr);
    return TRUE;
}

/* The language the transcriber detected on the stretch's first window. */
static void offline_language(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    const char *code = wkv_transcriber_language(w->tr, NULL);
    if (!w->detect_pending || !g_strcmp0(code, "auto"))
        return;
    g_free(w->opt_language);
    w->opt_language = g_strdup(code);
    w->detect_pending = FALSE;
    GST_INFO_OBJECT(self, "detected language %s", w->opt_language);
}

/* One offline window of `it`, which the lock is held for on entry and exit.
 * Returns FALSE on a fatal error. */
static gboolean offline_window(GstWhisper *self, WItem *it, int size)
{
    gint64 seek = it->seek;
    GstClockTime t0 = it->t0;
    GstClockTime limit = it->closed && !it->eos
                             ? t0 + gst_whisper_samples_to_ns(gst_whisper_vad_length(self, it))
                             : GST_CLOCK_TIME_NONE;
    /* the transcriber's samples are its own: a flush meanwhile frees the item only */
    g_mutex_unlock(&self->q.lock);

    gint64 t_start = g_get_monotonic_time();
    char *err = NULL;
    GstWhisperCollect c = {self, t0, limit, gst_whisper_props_lateness(self),
                           g_ptr_array_new_with_free_func(gst_whisper_seg_free), FALSE, NULL};
    self->w.cue_limit = limit;
    self->w.cue_lateness = c.lateness;
    self->w.collect = &c;
    gint64 next = wkv_transcriber_run(self->w.tr, &err);
    self->w.collect = NULL;
    g_free(c.language); /* the transcriber says which language it detected */
    if (next < 0) {
        g_ptr_array_unref(c.segs);
        gst_whisper_worker_error(self, "window", err);
        g_mutex_lock(&self->q.lock);
        return FALSE;
    }
    if (c.failed) {
        /* the segments before the one that failed still go out, then the error ends
         * the stream */
        gst_whisper_text_push_segments(self, c.segs, GST_CLOCK_TIME_NONE);
        g_ptr_array_unref(c.segs);
        g_mutex_lock(&self->q.lock);
        return FALSE;
    }
    offline_language(self);
    gst_whisper_stats_account(self, (g_get_monotonic_time() - t_start) / 1000.0,
                              (double)(MIN(next, seek + size) - seek) / 100.0);
    GST_DEBUG_OBJECT(self, "window at frame %" G_GINT64_FORMAT " (%d frames): %u segments, "
                     "next %" G_GINT64_FORMAT, seek, size, c.segs->len, next);

    g_mutex_lock(&self->q.lock);
    if (self->q.flushing) { /* cancelled: a flush came in meanwhile */
        g_ptr_array_unref(c.segs);
        return TRUE;
    }
    it->seek = next;
    self->q.worker_held = wkv_transcriber_held(self->w.tr);
    g_cond_broadcast(&self->q.space);
    g_mutex_unlock(&self->q.lock);

    /* nothing can start before the next window any more (a seek past the end of a
     * stretch that a discontinuity closed stops at its end: the next one starts there) */
    GstClockTime until = gst_whisper_vad_frame_time(self, t0, next);
    if (GST_CLOCK_TIME_IS_VALID(limit))
        until = MIN(until, limit);
    /* the open cue's words start there */
    GstClockTime hold = gst_whisper_worker_cue_hold(self);
    if (GST_CLOCK_TIME_IS_VALID(hold))
        until = MIN(until, hold);
    GstFlowReturn ret = gst_whisper_text_push_segments(self, c.segs, until);
    g_ptr_array_unref(c.segs);
    return gst_whisper_worker_pushed(self, ret);
}

/* Starts the per-item decoding state.  Lock held. */
static gboolean begin_item(GstWhisper *self, WItem *it)
{
    GstWhisperWorker *w = &self->w;
    if (w->tr_item == it)
        return TRUE;
    gst_whisper_worker_forget_item(self);
    w->tr_item = it;
    if (it->live) {
        if (w->batch_size > 1 && !w->bt_live_warned) {
            /* as the live-only properties offline: the setting does not apply */
            GST_WARNING_OBJECT(self, "batch-size=%d is for offline transcription: a live "
                               "stretch is decoded run by run", w->batch_size);
            w->bt_live_warned = TRUE;
        }
        return gst_whisper_live_begin(self);
    }
    char *err = NULL;
    w->detect_pending = w->detect_language;
    if (w->batch_size > 1) { /* gstwhisperbatch.c decodes it, not a transcriber */
        cues_begin(self, it->t0);
        return TRUE;
    }
    w->tr = wkv_transcriber_new(w->ctx, &w->opts, collect_segment_cb, self, &err);
    if (!w->tr)
        return gst_whisper_worker_error(self, "offline transcriber", err);
    cues_begin(self, it->t0);
    return TRUE;
}

/* Pops and pushes an event item.  Lock held on entry, not on return. */
static void pass_event(GstWhisper *self, WItem *it)
{
    g_queue_pop_head(&self->q.items);
    GstEvent *ev = it->event;
    it->event = NULL;
    witem_free(it);
    g_mutex_unlock(&self->q.lock);
    gst_whisper_text_event(self, ev);
}

/* The head stretch is done: frees it, GAP to its end.  Lock held on entry, not on
 * return. */
static void item_done(GstWhisper *self, WItem *it)
{
    GstWhisperWorker *w = &self->w;
    g_queue_pop_head(&self->q.items);
    GstClockTime end = it->t0 + gst_whisper_samples_to_ns(gst_whisper_vad_length(self, it));
    w->cue_limit = !it->eos ? end : GST_CLOCK_TIME_NONE;
    if (w->tr_item == it)
        gst_whisper_worker_forget_item(self);
    witem_free(it);
    g_cond_broadcast(&self->q.space);
    g_mutex_unlock(&self->q.lock);
    cues_finish(self);
    gst_whisper_text_gap(self, end);
}

void gst_whisper_worker_forget_item(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    wkv_transcriber_free(w->tr);
    w->tr = NULL;
    w->tr_item = NULL;
    w->tr_pushed = 0;
    w->tr_closed = FALSE;
    self->q.worker_held = 0;
    gst_whisper_vad_forget(self);
    gst_whisper_batch_forget(self);
}

gint64 gst_whisper_worker_max_held(GstWhisper *self)
{
    gint batch = self->w.batch_size;
    return batch > 1 ? MAX(OFFLINE_MAX_SAMPLES, 2 * (gint64)batch * WKV_N_SAMPLES)
                     : OFFLINE_MAX_SAMPLES;
}

static void worker_pause(GstWhisper *self)
{
    g_mutex_unlock(&self->q.lock);
    GST_DEBUG_OBJECT(self, "pausing the worker");
    gst_pad_pause_task(self->textpad);
}

/* A fatal error: the stream ends on text_src and chain returns ERROR from now on. */
static void worker_fail(GstWhisper *self)
{
    self->q.flushing = TRUE;
    /* keep text_src's own fatal flow; an inference error is an ERROR */
    if (self->q.srcresult == GST_FLOW_OK || self->q.srcresult == GST_FLOW_NOT_LINKED)
        self->q.srcresult = GST_FLOW_ERROR;
    g_cond_broadcast(&self->q.space);
    g_mutex_unlock(&self->q.lock);
    gst_pad_push_event(self->textpad, gst_event_new_eos());
    gst_pad_pause_task(self->textpad);
}

/* Offline, waiting for more audio of `it` (lock held; it may be gone on return).  A
 * pipeline can stop making progress here: the text branch waits for this window's
 * text while something upstream waits for that branch (a demuxer whose video goes to
 * an overlay without a queue), so no audio comes.  Before any text went out, no new
 * audio for STALL_WARN_US says so once with a WARNING instead of a silent hang. */
static void wait_for_audio(GstWhisper *self, WItem *it)
{
    if (self->q.text_flowing || self->w.stall_warned) {
        g_cond_wait(&self->q.cond, &self->q.lock);
        return;
    }
    gint64 len = it->len;
    gint64 deadline = g_get_monotonic_time() + STALL_WARN_US;
    if (g_cond_wait_until(&self->q.cond, &self->q.lock, deadline) || self->q.flushing ||
        g_queue_peek_head(&self->q.items) != it || it->len != len || self->q.text_flowing)
        return;
    self->w.stall_warned = TRUE;
    double held = (double)it->len / WKV_SAMPLE_RATE;
    /* with batch-size N, the first text needs N windows */
    int first_s = 30 * MAX(1, self->w.batch_size);
    g_mutex_unlock(&self->q.lock);
    GST_ELEMENT_WARNING(self, STREAM, FAILED,
        ("No audio has come for %d s while the first window's text is pending",
         (int)(STALL_WARN_US / G_USEC_PER_SEC)),
        ("%.1f s of this stretch are in; its text comes once %d s (or EOS) are in. "
         "If a branch downstream waits for that text while holding back the audio (a "
         "demuxer that also feeds a video overlay), give that branch a queue of %d s "
         "(queue max-size-time=0 max-size-bytes=0 max-size-buffers=0): docs/element.md",
         held, first_s, first_s));
    g_mutex_lock(&self->q.lock);
}

/* One iteration of the task: one event, one window or one live run. */
void gst_whisper_worker_loop(gpointer data)
{
    GstWhisper *self = data;
    g_mutex_lock(&self->q.lock);
    for (;;) {
        if (self->q.flushing) {
            worker_pause(self);
            return;
        }
        WItem *it = g_queue_peek_head(&self->q.items);
        if (!it) {
            g_cond_wait(&self->q.cond, &self->q.lock);
            continue;
        }
        if (it->type == ITEM_EVENT) {
            pass_event(self, it);
            return;
        }
        /* audio */
        if (self->w.tr_item != it) {
            if (!begin_item(self, it)) {
                worker_fail(self);
                return;
            }
            if (!GST_CLOCK_TIME_IS_VALID(self->w.text_pos)) {
                GstClockTime t0 = it->t0;
                /* the filter offline holds its audio until text flowed instead */
                gboolean gap = it->live || self->transcriber;
                g_mutex_unlock(&self->q.lock);
                gst_whisper_text_preroll(self, t0, gap);
                return;
            }
        }
        gboolean ok;
        if (it->live) {
            if (!gst_whisper_live_ready(self, it)) {
                if (it->closed) {
                    item_done(self, it);
                    return;
                }
                g_cond_wait(&self->q.cond, &self->q.lock);
                continue;
            }
            ok = gst_whisper_live_run(self, it);
        } else if (self->w.batch_size > 1) {
            /* batch-size: chunks decoded side by side (gstwhisperbatch.c) */
            GstWhisperBatchStep step = gst_whisper_batch_run(self, it);
            if (step == GST_WHISPER_BATCH_DONE) {
                item_done(self, it);
                return;
            }
            if (step == GST_WHISPER_BATCH_WAIT) {
                if (self->w.vad) /* VAD needs the whole stretch: no stall to warn of */
                    g_cond_wait(&self->q.cond, &self->q.lock);
                else
                    wait_for_audio(self, it);
                continue;
            }
            ok = step == GST_WHISPER_BATCH_RAN;
        } else if (self->w.vad && !self->w.vad_filtered) {
            /* VAD offline: the speech segments need the whole stretch (as the CLI's) */
            if (!it->closed) {
                g_cond_wait(&self->q.cond, &self->q.lock);
                continue;
            }
            ok = gst_whisper_vad_filter(self, it);
        } else {
            if (!offline_feed(self, it)) {
                worker_fail(self);
                return;
            }
            int size = wkv_transcriber_next(self->w.tr);
            if (size < 0) {
                item_done(self, it);
                return;
            }
            if (size == 0) {
                wait_for_audio(self, it);
                continue;
            }
            ok = offline_window(self, it, size);
        }
        if (!ok) {
            worker_fail(self);
            return;
        }
        g_mutex_unlock(&self->q.lock);
        return;
    }
}
