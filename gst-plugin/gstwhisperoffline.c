/* whisper: the offline step, worker thread only.  A stretch's samples go to the
 * core's offline transcriber (wkv_transcriber, window normalization: each window runs
 * as soon as its audio is in) as they arrive, and leave the queue then: one copy; the
 * queue's bound on what the worker holds counts the transcriber's samples
 * (q.worker_held).  A window's segments come back to the worker as text buffers to be
 * (gstwhispercollect.c); the element keeps only the glue: times to PTS, cues, GAPs,
 * VAD's time map. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

/* The transcriber's callback, set once per stretch: the window under way's
 * GstWhisperCollect. */
static int collect_segment_cb(const wkv_segment *seg, void *user)
{
    GstWhisper *self = user;
    return gst_whisper_collect_segment(seg, self->off.collect);
}

gboolean gst_whisper_offline_begin(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    char *err = NULL;
    self->off.tr = wkv_transcriber_new(w->ctx, &w->opts, collect_segment_cb, self, &err);
    if (!self->off.tr)
        return gst_whisper_inference_error(self, "offline transcriber", err);
    return TRUE;
}

gboolean gst_whisper_offline_feed(GstWhisper *self, WItem *it)
{
    if (it->len > self->off.pushed) {
        char *err = NULL;
        if (wkv_transcriber_push(self->off.tr, it->pcm + (self->off.pushed - it->base),
                                 (size_t)(it->len - self->off.pushed), &err) != 0)
            return gst_whisper_inference_error(self, "offline transcriber", err);
        self->off.pushed = it->len;
        witem_drop_before(it, it->len);
    }
    if (it->closed && !self->off.closed) {
        wkv_transcriber_close(self->off.tr);
        self->off.closed = TRUE;
    }
    self->q.worker_held = wkv_transcriber_held(self->off.tr);
    return TRUE;
}

int gst_whisper_offline_next(GstWhisper *self)
{
    return wkv_transcriber_next(self->off.tr);
}

/* The language the transcriber detected on the stretch's first window. */
static void offline_language(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    const char *code = wkv_transcriber_language(self->off.tr, NULL);
    if (!w->detect_pending || !g_strcmp0(code, "auto"))
        return;
    g_free(w->opt_language);
    w->opt_language = g_strdup(code);
    w->detect_pending = FALSE;
    GST_INFO_OBJECT(self, "detected language %s", w->opt_language);
}

gboolean gst_whisper_offline_window(GstWhisper *self, WItem *it, int size,
                                    GstWhisperDecoded *out)
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
                           gst_whisper_segs_new(), FALSE, NULL};
    gst_whisper_cues_window(self, limit, c.lateness);
    self->off.collect = &c;
    gint64 next = wkv_transcriber_run(self->off.tr, &err);
    self->off.collect = NULL;
    g_free(c.language); /* the transcriber says which language it detected */
    if (next < 0) {
        g_ptr_array_unref(c.segs);
        gst_whisper_decoded_fail(out, "window", err);
        g_mutex_lock(&self->q.lock);
        return FALSE;
    }
    if (c.failed) {
        /* the segments before the one that failed still go out, then the error (posted)
         * ends the stream */
        gst_whisper_decoded_add(out, c.segs, GST_CLOCK_TIME_NONE);
        out->failed = TRUE;
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
    self->q.worker_held = wkv_transcriber_held(self->off.tr);
    g_cond_broadcast(&self->q.space);

    /* nothing can start before the next window any more (a seek past the end of a
     * stretch that a discontinuity closed stops at its end: the next one starts there) */
    GstClockTime until = gst_whisper_vad_frame_time(self, t0, next);
    if (GST_CLOCK_TIME_IS_VALID(limit))
        until = MIN(until, limit);
    /* the open cue's words start there */
    GstClockTime hold = gst_whisper_cues_hold(self);
    if (GST_CLOCK_TIME_IS_VALID(hold))
        until = MIN(until, hold);
    gst_whisper_decoded_add(out, c.segs, until);
    return TRUE;
}

void gst_whisper_offline_forget(GstWhisper *self)
{
    wkv_transcriber_free(self->off.tr);
    self->off.tr = NULL;
    self->off.pushed = 0;
    self->off.closed = FALSE;
    self->q.worker_held = 0;
}
