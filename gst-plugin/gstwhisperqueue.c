/* whisper: the queue between the streaming thread and the worker, under `q.lock`.
 *
 * The queue holds items in stream order: audio items (one per continuous stretch of
 * samples: a DISCONT, a jump in the timestamps, a GAP or SEGMENT event or EOS closes
 * one) and events for `text_src`.
 *
 * Timestamps are taken as GStreamer's audio elements take them (GstAudioStreamAlign's
 * rules and defaults): a buffer within ALIGN_THRESHOLD (40 ms) of where the stretch's
 * samples put it continues the stretch, its own PTS ignored, so capture and network
 * jitter never splits the text.  A buffer further off is held back (`pend`) with those
 * after it: when one comes back in line they all continue the stretch; when they have
 * stayed off for DISCONT_WAIT (1 s of their own timestamps) the jump is real, and a
 * new stretch starts at the first held buffer's PTS, so text after a real gap is timed
 * from where its audio is (GstAudioStreamAlign itself would time that first second as
 * if there were no gap).  An audio item keeps the samples from the first
 * one the next window needs, so memory stays bounded by one window (offline) or
 * 30 s (live); offline, chain waits here while the worker holds 4 windows.  No pads
 * are touched here. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

void gst_whisper_queue_init(GstWhisper *self)
{
    GstWhisperQueue *q = &self->q;
    g_mutex_init(&q->lock);
    g_cond_init(&q->cond);
    g_cond_init(&q->space);
    g_queue_init(&q->items);
    g_queue_init(&q->src_tags);
    gst_segment_init(&q->segment, GST_FORMAT_UNDEFINED);
    q->audio_end = q->text_end = GST_CLOCK_TIME_NONE;
    q->pend_pts = q->pend_arrived = GST_CLOCK_TIME_NONE;
    q->srcresult = GST_FLOW_OK;
}

void gst_whisper_queue_clear(GstWhisper *self)
{
    g_clear_pointer(&self->q.pend, g_free);
    self->q.pend_cap = self->q.pend_n = 0;
    g_mutex_clear(&self->q.lock);
    g_cond_clear(&self->q.cond);
    g_cond_clear(&self->q.space);
}

void witem_free(WItem *it)
{
    if (!it)
        return;
    if (it->event)
        gst_event_unref(it->event);
    if (it->arrivals)
        g_array_unref(it->arrivals);
    g_free(it->pcm);
    g_free(it);
}

/* The open audio item at the tail, or NULL.  Lock held. */
static WItem *tail_audio(GstWhisper *self)
{
    WItem *it = g_queue_peek_tail(&self->q.items);
    return it && it->type == ITEM_AUDIO && !it->closed ? it : NULL;
}

/* Converts n samples (S16LE or F32) to floats at dst. */
static void store_samples(float *dst, const guint8 *data, gsize n, gboolean s16)
{
    if (s16) {
        const gint16 *src = (const gint16 *)data;
        for (gsize i = 0; i < n; i++)
            dst[i] = (float)GINT16_FROM_LE(src[i]) / 32768.0f;
    } else {
        memcpy(dst, data, n * sizeof(float));
    }
}

/* Room for n more floats in *buf (holding used, capacity *cap).  Returns 0, or the
 * room it could not allocate. */
static gsize grow(float **buf, gsize *cap, gsize used, gsize n)
{
    if (used + n <= *cap)
        return 0;
    gsize want = MAX(used + n, *cap * 2 + WKV_SAMPLE_RATE);
    float *p = gst_whisper_try_renew(*buf, want, sizeof(float));
    if (!p)
        return want;
    *buf = p;
    *cap = want;
    return 0;
}

/* Appends n samples (S16LE or F32) to `it`.  Lock held.  Returns 0, or the samples'
 * room it could not allocate (`it` unchanged). */
static gsize append_samples(WItem *it, const guint8 *data, gsize n, gboolean s16,
                            GstClockTime arrived)
{
    gsize failed = grow(&it->pcm, &it->cap, it->n, n);
    if (failed)
        return failed;
    store_samples(it->pcm + it->n, data, n, s16);
    it->n += n;
    it->len += (gint64)n;
    if (it->arrivals) {
        WArrival a = {it->len, arrived};
        g_array_append_val(it->arrivals, a);
    }
    return 0;
}

/* The held buffers continue the open stretch (they came back in line, or the stretch
 * ends before they proved a jump).  Lock held.  Returns 0, or the room it could not
 * allocate. */
static gsize release_pending(GstWhisper *self)
{
    GstWhisperQueue *q = &self->q;
    WItem *it = tail_audio(self);
    gsize failed = 0;
    if (it && q->pend_n)
        failed = append_samples(it, (const guint8 *)q->pend, q->pend_n, FALSE, q->pend_arrived);
    q->pend_n = 0;
    q->pend_pts = q->pend_arrived = GST_CLOCK_TIME_NONE;
    return failed;
}

/* Lock held. */
static void close_tail(GstWhisper *self)
{
    if (release_pending(self))
        GST_WARNING_OBJECT(self, "out of memory: the last held samples are lost");
    WItem *it = tail_audio(self);
    if (it)
        it->closed = TRUE;
}

/* Lock held. */
static void push_event_item(GstWhisper *self, GstEvent *event)
{
    WItem *it = g_new0(WItem, 1);
    it->type = ITEM_EVENT;
    it->event = event;
    g_queue_push_tail(&self->q.items, it);
    g_cond_signal(&self->q.cond);
}

void witem_drop_before(WItem *it, gint64 keep)
{
    if (keep <= it->base)
        return;
    if (keep > it->len)
        keep = it->len;
    gsize drop = (gsize)(keep - it->base);
    memmove(it->pcm, it->pcm + drop, (it->n - drop) * sizeof(float));
    it->n -= drop;
    it->base = keep;
    if (it->arrivals) {
        guint k = 0;
        while (k < it->arrivals->len && g_array_index(it->arrivals, WArrival, k).end <= keep)
            k++;
        if (k)
            g_array_remove_range(it->arrivals, 0, k);
    }
}

GstClockTime gst_whisper_arrival(const GArray *arrivals, gint64 index)
{
    if (!arrivals)
        return GST_CLOCK_TIME_NONE;
    for (guint k = 0; k < arrivals->len; k++) {
        const WArrival *a = &g_array_index(arrivals, WArrival, k);
        if (a->end > index)
            return a->at;
    }
    return GST_CLOCK_TIME_NONE;
}

/* Samples the worker holds: the queued stretches' and its transcriber's.  Lock held. */
static gint64 held_samples(GstWhisper *self)
{
    gint64 n = self->q.worker_held;
    for (GList *l = self->q.items.head; l; l = l->next) {
        const WItem *it = l->data;
        if (it->type == ITEM_AUDIO)
            n += (gint64)it->n;
    }
    return n;
}

/* Lock held. */
static void clear_items(GstWhisper *self)
{
    WItem *it;
    while ((it = g_queue_pop_head(&self->q.items)))
        witem_free(it);
    GstTagList *t;
    while ((t = g_queue_pop_head(&self->q.src_tags)))
        gst_tag_list_unref(t);
    self->q.pend_n = 0;
    self->q.pend_pts = self->q.pend_arrived = GST_CLOCK_TIME_NONE;
    g_cond_broadcast(&self->q.space);
}

/* Forgets where the stream's time has got to (new segment, flush, start).  Lock held. */
static void reset_stream_time(GstWhisper *self)
{
    self->q.audio_end = self->q.text_end = GST_CLOCK_TIME_NONE;
}

/* Starts a stretch at a buffer with PTS `pts` (maybe NONE).  Lock held.
 *
 * A buffer without a timestamp continues where the audio ended (or starts at the
 * segment's start).  Text never goes back in time: when the audio's timestamps jump
 * back by more than the tolerance without a new segment, the stretch's text is timed
 * from the end of the latest earlier stretch instead, and a warning says so. */
static WItem *open_stretch(GstWhisper *self, GstClockTime pts, gboolean live)
{
    GstWhisperQueue *q = &self->q;
    WItem *it = g_new0(WItem, 1);
    it->type = ITEM_AUDIO;
    it->live = live;
    if (live)
        it->arrivals = g_array_new(FALSE, FALSE, sizeof(WArrival));
    if (GST_CLOCK_TIME_IS_VALID(pts))
        it->pts0 = pts;
    else if (GST_CLOCK_TIME_IS_VALID(q->audio_end))
        it->pts0 = q->audio_end;
    else if (q->segment.format == GST_FORMAT_TIME)
        it->pts0 = q->segment.start;
    it->t0 = it->pts0;
    if (GST_CLOCK_TIME_IS_VALID(q->text_end) && it->t0 + ALIGN_THRESHOLD < q->text_end) {
        GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Audio timestamps went back"),
            ("from %" GST_TIME_FORMAT " to %" GST_TIME_FORMAT " without a new segment: the "
             "text of this stretch is timed from %" GST_TIME_FORMAT,
             GST_TIME_ARGS(q->audio_end), GST_TIME_ARGS(pts), GST_TIME_ARGS(q->text_end)));
        it->t0 = q->text_end;
    }
    g_queue_push_tail(&q->items, it);
    return it;
}

/* Where a buffer of n samples with `pts` (maybe NONE) and `discont` goes: the held
 * buffers (NULL, *hold set), or a stretch, the held samples it takes already in it
 * (NULL, *hold unset: they could not be stored).  Lock held. */
static WItem *stretch_for(GstWhisper *self, GstClockTime pts, gboolean discont, gsize n,
                          gboolean live, gboolean *hold)
{
    GstWhisperQueue *q = &self->q;
    WItem *it = tail_audio(self);
    *hold = FALSE;
    if (it && discont && it->len > 0) {
        GST_DEBUG_OBJECT(self, "DISCONT: closing the window");
        close_tail(self);
        it = NULL;
    }
    if (!it)
        return open_stretch(self, pts, live);
    if (!GST_CLOCK_TIME_IS_VALID(pts)) {
        *hold = q->pend_n > 0; /* goes on after the held samples */
        return *hold ? NULL : it;
    }
    GstClockTime expect = it->pts0 + gst_whisper_samples_to_ns(it->len + (gint64)q->pend_n);
    GstClockTime off = pts > expect ? pts - expect : expect - pts;
    if (off > ALIGN_THRESHOLD) {
        if (!q->pend_n) {
            GST_DEBUG_OBJECT(self, "%" GST_TIME_FORMAT " is %" GST_TIME_FORMAT " off the "
                             "window's time: holding it", GST_TIME_ARGS(pts), GST_TIME_ARGS(off));
            q->pend_pts = pts;
        }
        if (pts + gst_whisper_samples_to_ns((gint64)n) >= q->pend_pts + DISCONT_WAIT) {
            /* off for DISCONT_WAIT of their own time (this buffer's end counted): a real
             * jump; the held samples start the new stretch */
            GST_DEBUG_OBJECT(self, "timestamp jump %" GST_TIME_FORMAT " -> %" GST_TIME_FORMAT
                             ": closing the window", GST_TIME_ARGS(expect),
                             GST_TIME_ARGS(q->pend_pts));
            it->closed = TRUE;
            it = open_stretch(self, q->pend_pts, live);
        } else if (gst_whisper_samples_to_ns((gint64)(q->pend_n + n)) < DISCONT_WAIT) {
            *hold = TRUE;
            return NULL;
        }
        /* else a second of audio held while its timestamps did not advance a second
         * (stuck or slow): never a proven jump, and never held without bound; it
         * continues the stretch, as GstAudioStreamAlign keeps counting samples */
    }
    return release_pending(self) ? NULL : it;
}

/* Holds n samples back (see the top).  Lock held.  Returns 0 or the room it lacked. */
static gsize hold_samples(GstWhisper *self, const guint8 *data, gsize n, gboolean s16,
                          GstClockTime arrived)
{
    GstWhisperQueue *q = &self->q;
    gsize failed = grow(&q->pend, &q->pend_cap, q->pend_n, n);
    if (failed)
        return failed;
    store_samples(q->pend + q->pend_n, data, n, s16);
    q->pend_n += n;
    q->pend_arrived = arrived;
    return 0;
}

static void take_src_tags(GstWhisper *self, GQueue *tags)
{
    GstTagList *t;
    while ((t = g_queue_pop_head(&self->q.src_tags)))
        g_queue_push_tail(tags, t);
}

gboolean gst_whisper_queue_samples(GstWhisper *self, GstClockTime pts, gboolean discont,
                                   const GstWhisperSamples *s, gboolean live,
                                   GstClockTime arrived, GQueue *tags)
{
    GstWhisperQueue *q = &self->q;
    gsize failed = 0, n = s->n;
    g_mutex_lock(&q->lock);
    /* A buffer without samples carries nothing to transcribe: its flags and timestamp
     * are ignored (the next buffer's timestamp shows any hole). */
    WItem *it = NULL;
    if (!q->flushing && n > 0) {
        gboolean hold;
        it = stretch_for(self, pts, discont, n, live, &hold);
        if (hold)
            failed = hold_samples(self, s->data, n, s->s16, arrived);
        else if (!it)
            failed = n; /* the held samples could not be stored */
        else
            failed = append_samples(it, s->data, n, s->s16, arrived);
    }
    if (failed) {
        /* the stretch ends where its audio does (no hole inside it): what it holds is
         * still transcribed if the stream goes on to EOS */
        close_tail(self);
        g_cond_signal(&q->cond);
    } else if (it) {
        if (it->live && it->n > LIVE_MAX_SAMPLES * 2) {
            /* the worker is far behind: never queue audio without bound */
            gint64 drop_to = it->len - LIVE_MAX_SAMPLES;
            witem_drop_before(it, drop_to);
            GST_ELEMENT_WARNING(self, CORE, CLOCK, ("Whisper inference is falling behind"),
                                ("skipped audio up to %" GST_TIME_FORMAT,
                                 GST_TIME_ARGS(it->pts0 + gst_whisper_samples_to_ns(drop_to))));
        }
        q->audio_end = it->pts0 + gst_whisper_samples_to_ns(it->len);
        GstClockTime text_end = it->t0 + gst_whisper_samples_to_ns(it->len);
        if (!GST_CLOCK_TIME_IS_VALID(q->text_end) || text_end > q->text_end)
            q->text_end = text_end;
        g_cond_signal(&q->cond);
        /* offline: wait while the worker holds enough audio (the bound set at the
         * start: see OFFLINE_MAX_SAMPLES); `it` may be freed meanwhile (a flush) */
        gboolean item_live = it->live;
        while (!item_live && !q->flushing && held_samples(self) > q->max_held)
            g_cond_wait(&q->space, &q->lock);
    }
    take_src_tags(self, tags);
    g_mutex_unlock(&q->lock);
    if (failed)
        gst_whisper_alloc_error(self, "the queued audio", failed, sizeof(float));
    return !failed;
}

void gst_whisper_queue_event(GstWhisper *self, GstEvent *event, GQueue *tags)
{
    g_mutex_lock(&self->q.lock);
    if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
        WItem *it = tail_audio(self);
        if (it)
            it->eos = TRUE;
        self->q.src_eos = TRUE;
    }
    close_tail(self);
    push_event_item(self, event);
    if (tags)
        take_src_tags(self, tags);
    g_mutex_unlock(&self->q.lock);
}

void gst_whisper_queue_segment(GstWhisper *self, const GstSegment *seg, GstEvent *event)
{
    g_mutex_lock(&self->q.lock);
    close_tail(self);
    reset_stream_time(self);
    self->q.segment = *seg;
    if (seg->format == GST_FORMAT_TIME) {
        push_event_item(self, gst_event_ref(event));
    } else {
        /* text is timed: a TIME segment from 0 for any other format */
        GstSegment t;
        gst_segment_init(&t, GST_FORMAT_TIME);
        push_event_item(self, gst_event_new_segment(&t));
    }
    g_mutex_unlock(&self->q.lock);
}

void gst_whisper_queue_set_flushing(GstWhisper *self, gboolean flushing)
{
    g_mutex_lock(&self->q.lock);
    self->q.flushing = flushing;
    if (flushing) {
        g_cond_broadcast(&self->q.cond);
        g_cond_broadcast(&self->q.space);
    } else {
        self->q.src_eos = FALSE;
        self->q.srcresult = GST_FLOW_OK;
    }
    g_mutex_unlock(&self->q.lock);
}

void gst_whisper_queue_flush_stop(GstWhisper *self)
{
    g_mutex_lock(&self->q.lock);
    clear_items(self);
    self->q.flushing = FALSE;
    self->q.srcresult = GST_FLOW_OK;
    self->q.text_flowing = FALSE; /* the sinks preroll again */
    reset_stream_time(self);
    self->q.src_eos = FALSE;
    gst_segment_init(&self->q.segment, GST_FORMAT_UNDEFINED);
    g_mutex_unlock(&self->q.lock);
}

void gst_whisper_queue_start(GstWhisper *self, guint step_ms, gint64 max_held)
{
    g_mutex_lock(&self->q.lock);
    self->q.max_held = max_held;
    clear_items(self);
    gst_segment_init(&self->q.segment, GST_FORMAT_UNDEFINED);
    reset_stream_time(self);
    self->q.text_flowing = FALSE;
    self->q.run_step_ms = step_ms;
    self->q.live_known = FALSE;
    self->q.upstream_live = FALSE;
    g_mutex_unlock(&self->q.lock);
}

void gst_whisper_queue_src_tags(GstWhisper *self, const GstTagList *tags)
{
    g_mutex_lock(&self->q.lock);
    if (!self->q.src_eos && !self->q.flushing)
        g_queue_push_tail(&self->q.src_tags, gst_tag_list_copy(tags));
    g_mutex_unlock(&self->q.lock);
}

GstSegment gst_whisper_queue_get_segment(GstWhisper *self)
{
    g_mutex_lock(&self->q.lock);
    GstSegment seg = self->q.segment;
    g_mutex_unlock(&self->q.lock);
    return seg;
}

gboolean gst_whisper_queue_upstream_live(GstWhisper *self, gboolean *live)
{
    g_mutex_lock(&self->q.lock);
    gboolean known = self->q.live_known;
    *live = self->q.upstream_live;
    g_mutex_unlock(&self->q.lock);
    return known;
}

void gst_whisper_queue_set_upstream_live(GstWhisper *self, gboolean live)
{
    g_mutex_lock(&self->q.lock);
    self->q.upstream_live = live;
    self->q.live_known = TRUE;
    g_mutex_unlock(&self->q.lock);
}

guint gst_whisper_queue_step(GstWhisper *self)
{
    g_mutex_lock(&self->q.lock);
    guint step = self->q.run_step_ms;
    g_mutex_unlock(&self->q.lock);
    return step;
}

void gst_whisper_queue_set_srcresult(GstWhisper *self, GstFlowReturn ret)
{
    g_mutex_lock(&self->q.lock);
    /* a flush resets it at FLUSH_STOP: what a flushing pad said then is stale */
    if (!self->q.flushing || ret != GST_FLOW_FLUSHING)
        self->q.srcresult = ret;
    g_mutex_unlock(&self->q.lock);
}

void gst_whisper_queue_set_text_flowing(GstWhisper *self)
{
    g_mutex_lock(&self->q.lock);
    self->q.text_flowing = TRUE;
    g_mutex_unlock(&self->q.lock);
}

gboolean gst_whisper_queue_text_flowing(GstWhisper *self)
{
    g_mutex_lock(&self->q.lock);
    gboolean v = self->q.text_flowing;
    g_mutex_unlock(&self->q.lock);
    return v;
}

GstFlowReturn gst_whisper_queue_srcresult(GstWhisper *self)
{
    g_mutex_lock(&self->q.lock);
    GstFlowReturn ret = self->q.srcresult;
    g_mutex_unlock(&self->q.lock);
    return ret;
}
