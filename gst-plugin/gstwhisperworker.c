/* whisper: the worker, a GstTask on text_src, and the element's one driver.  It takes
 * the audio off the queue (under `q.lock`, which it drops while it computes), calls
 * the step that decodes it (offline windows, gstwhisperoffline.c; batches,
 * gstwhisperbatch.c; live runs, gstwhisperlive.c; VAD's filter, gstwhispervad.c),
 * which returns what it decoded, and hands that and the queue's events to
 * gstwhispertext.c in the order they came.  The steps call nothing here: the data
 * goes queue -> step -> worker -> text. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

/* After text went out with flow `ret`: takes `q.lock` back and reports a fatal flow
 * as an element error (then FALSE). */
static gboolean pushed(GstWhisper *self, GstFlowReturn ret)
{
    g_mutex_lock(&self->q.lock);
    /* flushing and EOS downstream end the text quietly; the rest is fatal */
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING && ret != GST_FLOW_EOS) {
        GST_ELEMENT_FLOW_ERROR(self, ret);
        return FALSE;
    }
    return TRUE;
}

/* What a step returned (`ok`: it did not fail) goes out: its pieces, then its error.
 * Lock held on entry and exit, dropped while pushing; d is cleared.  FALSE when the
 * stream must end (the step failed, or the text pad's flow is fatal). */
static gboolean deliver(GstWhisper *self, GstWhisperDecoded *d, gboolean ok)
{
    if (!d->pieces && !d->error_what) {
        /* nothing decoded: a flush cancelled it, or the step failed before any text */
        gst_whisper_decoded_clear(d);
        return ok;
    }
    g_mutex_unlock(&self->q.lock);
    GstFlowReturn ret = gst_whisper_text_push_decoded(self, d);
    if (d->error_what) {
        gst_whisper_inference_error(self, d->error_what, d->error);
        d->error = NULL;
    }
    gst_whisper_decoded_clear(d);
    if (!ok) {
        /* the text decoded before the failure went out, whatever its flow */
        g_mutex_lock(&self->q.lock);
        return FALSE;
    }
    return pushed(self, ret);
}

void gst_whisper_worker_forget_item(GstWhisper *self)
{
    self->w.item = NULL;
    gst_whisper_offline_forget(self);
    gst_whisper_vad_forget(self);
    gst_whisper_batch_forget(self);
}

/* Starts the per-item decoding state.  Lock held. */
static gboolean begin_item(GstWhisper *self, WItem *it)
{
    GstWhisperWorker *w = &self->w;
    if (self->w.item == it)
        return TRUE;
    gst_whisper_worker_forget_item(self);
    self->w.item = it;
    if (it->live) {
        if (w->batch_size > 1 && !self->w.batch_live_warned) {
            /* as the live-only properties offline: the setting does not apply */
            GST_WARNING_OBJECT(self, "batch-size=%d is for offline transcription: a live "
                               "stretch is decoded run by run", w->batch_size);
            self->w.batch_live_warned = TRUE;
        }
        return gst_whisper_live_begin(self);
    }
    w->detect_pending = w->detect_language;
    /* batch-size: gstwhisperbatch.c decodes it, not a transcriber */
    if (w->batch_size <= 1 && !gst_whisper_offline_begin(self))
        return FALSE;
    gst_whisper_cues_begin(self, it->t0);
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

/* The head stretch is done: frees it, its last cue and a GAP to its end go out.  Lock
 * held on entry, not on return. */
static void item_done(GstWhisper *self, WItem *it)
{
    g_queue_pop_head(&self->q.items);
    GstClockTime end = it->t0 + gst_whisper_samples_to_ns(gst_whisper_vad_length(self, it));
    gst_whisper_cues_window(self, !it->eos ? end : GST_CLOCK_TIME_NONE, self->cues.lateness);
    if (self->w.item == it)
        gst_whisper_worker_forget_item(self);
    witem_free(it);
    g_cond_broadcast(&self->q.space);
    g_mutex_unlock(&self->q.lock);
    GPtrArray *last = gst_whisper_segs_new();
    gst_whisper_cues_finish(self, last);
    if (last->len)
        gst_whisper_text_push_segments(self, last, GST_CLOCK_TIME_NONE);
    g_ptr_array_unref(last);
    gst_whisper_text_gap(self, end);
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
    gst_whisper_text_end(self);
    gst_pad_pause_task(self->textpad);
}

/* Offline, waiting for more audio of `it` (lock held; it may be gone on return).  A
 * pipeline can stop making progress here: the text branch waits for this window's
 * text while something upstream waits for that branch (a demuxer whose video goes to
 * an overlay without a queue), so no audio comes.  Before any text went out, no new
 * audio for STALL_WARN_US says so once with a WARNING instead of a silent hang. */
static void wait_for_audio(GstWhisper *self, WItem *it)
{
    if (self->q.text_flowing || self->text.stall_warned) {
        g_cond_wait(&self->q.cond, &self->q.lock);
        return;
    }
    gint64 len = it->len;
    gint64 deadline = g_get_monotonic_time() + STALL_WARN_US;
    if (g_cond_wait_until(&self->q.cond, &self->q.lock, deadline) || self->q.flushing ||
        g_queue_peek_head(&self->q.items) != it || it->len != len || self->q.text_flowing)
        return;
    self->text.stall_warned = TRUE;
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
        if (self->w.item != it) {
            if (!begin_item(self, it)) {
                worker_fail(self);
                return;
            }
            if (!GST_CLOCK_TIME_IS_VALID(self->text.pos)) {
                GstClockTime t0 = it->t0;
                /* the filter offline holds its audio until text flowed instead */
                gboolean gap = it->live || self->transcriber;
                g_mutex_unlock(&self->q.lock);
                gst_whisper_text_preroll(self, t0, gap);
                return;
            }
        }
        /* the step for this stretch decodes into d; deliver pushes it */
        GstWhisperDecoded d = GST_WHISPER_DECODED_INIT;
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
            ok = deliver(self, &d, gst_whisper_live_run(self, it, &d));
        } else if (self->w.batch_size > 1) {
            /* batch-size: chunks decoded side by side (gstwhisperbatch.c) */
            GstWhisperBatchStep step = gst_whisper_batch_run(self, it, &d);
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
            ok = deliver(self, &d, step == GST_WHISPER_BATCH_RAN);
        } else if (self->w.vad && !self->speech.filtered) {
            /* VAD offline: the speech segments need the whole stretch (as the CLI's) */
            if (!it->closed) {
                g_cond_wait(&self->q.cond, &self->q.lock);
                continue;
            }
            ok = gst_whisper_vad_filter(self, it);
        } else {
            if (!gst_whisper_offline_feed(self, it)) {
                worker_fail(self);
                return;
            }
            int size = gst_whisper_offline_next(self);
            if (size < 0) {
                item_done(self, it);
                return;
            }
            if (size == 0) {
                wait_for_audio(self, it);
                continue;
            }
            ok = deliver(self, &d, gst_whisper_offline_window(self, it, size, &d));
        }
        if (!ok) {
            worker_fail(self);
            return;
        }
        g_mutex_unlock(&self->q.lock);
        return;
    }
}
