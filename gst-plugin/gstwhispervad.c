/* whisper: voice activity (vad-model set).  Offline, a stretch is transcribed as the
 * CLI does with --vad-model: once it has ended, its speech is cut out with the core's
 * wkv_vad_filter and the long form runs on that audio only; every time decoded there
 * goes back onto the stretch's timeline through the filter's map (wkv_vad_map_result).
 * Silence thus costs no encoder or decoder run and leaves text_src as GAP events.
 * Also the whisper-vad messages, offline and live.  Worker thread only. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

void gst_whisper_vad_post(GstWhisper *self, gboolean speech, GstClockTime ts)
{
    if (!self->w.post_vad)
        return;
    GstSegment seg = gst_whisper_queue_get_segment(self);
    guint64 running = gst_segment_to_running_time(&seg, GST_FORMAT_TIME, ts);
    GstStructure *s = gst_structure_new("whisper-vad", "speech", G_TYPE_BOOLEAN, speech,
                                        "timestamp", G_TYPE_UINT64, (guint64)ts,
                                        "running-time", G_TYPE_UINT64, running, NULL);
    gst_element_post_message(GST_ELEMENT(self),
                             gst_message_new_element(GST_OBJECT(self), s));
}

void gst_whisper_vad_post_segments(GstWhisper *self, const wkv_vad_segment *segs, int n_segs,
                                   GstClockTime t0, gint64 n)
{
    GstClockTime end = t0 + gst_whisper_samples_to_ns(n);
    for (int i = 0; i < n_segs; i++) {
        /* the last segment may end in the zero padding of the last chunk */
        gst_whisper_vad_post(self, TRUE, MIN(end, t0 + segs[i].start * 10 * GST_MSECOND));
        gst_whisper_vad_post(self, FALSE, MIN(end, t0 + segs[i].end * 10 * GST_MSECOND));
    }
}

void gst_whisper_vad_forget(GstWhisper *self)
{
    wkv_vad_map_free(self->speech.map);
    self->speech.map = NULL;
    self->speech.filtered = FALSE;
}

/* The speech of pcm[0..n) (a stretch starting at text time t0) as wkv_vad_filter
 * gives it, into *speech and w.vad_map; the messages for its segments.  FALSE with
 * a message in *err. */
static gboolean filter(GstWhisper *self, const float *pcm, gsize n, GstClockTime t0,
                       float **speech, size_t *n_speech, char **err)
{
    GstWhisperWorker *w = &self->w;
    float *probs = NULL;
    wkv_vad_segment *segs = NULL;
    int64_t n_probs = wkv_vad_probs(gst_whisper_vad_model_get(w->vad), pcm, n, &probs, err);
    int n_segs = n_probs < 0 ? -1 : wkv_vad_segments(probs, n_probs, &w->vad_params, &segs,
                                                     err);
    free(probs);
    if (n_segs < 0)
        return FALSE;
    int r = wkv_vad_filter(pcm, n, segs, n_segs, &w->vad_params, speech, n_speech, &self->speech.map,
                           err);
    if (r == 0)
        gst_whisper_vad_post_segments(self, segs, n_segs, t0, (gint64)n);
    GST_DEBUG_OBJECT(self, "VAD: %d speech segments, %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                     " samples transcribed", n_segs, (gsize)*n_speech, n);
    free(segs);
    return r == 0;
}

gboolean gst_whisper_vad_filter(GstWhisper *self, WItem *it)
{
    /* the stretch has ended: nothing appends to it, and the worker takes its samples
     * while it computes (a flush meanwhile frees the item, not them) */
    float *pcm = it->pcm;
    gsize n = it->n;
    GstClockTime t0 = it->t0;
    it->pcm = NULL;
    it->n = it->cap = 0;
    self->speech.len = it->len;
    g_mutex_unlock(&self->q.lock);

    float *speech = NULL;
    size_t n_speech = 0;
    char *err = NULL;
    gboolean ok = filter(self, pcm, n, t0, &speech, &n_speech, &err);
    g_free(pcm);
    g_mutex_lock(&self->q.lock);
    if (!ok) {
        free(speech);
        return gst_whisper_inference_error(self, "voice activity detection", err);
    }
    self->speech.filtered = TRUE;
    if (self->q.flushing) {
        free(speech);
        return TRUE;
    }
    /* the speech becomes the stretch's audio, in the item's own allocator */
    it->pcm = gst_whisper_try_new(float, n_speech + 1);
    if (!it->pcm) {
        free(speech);
        gst_whisper_alloc_error(self, "the speech of a stretch", n_speech + 1, sizeof(float));
        return FALSE;
    }
    if (n_speech)
        memcpy(it->pcm, speech, n_speech * sizeof(float));
    free(speech);
    it->n = it->cap = n_speech;
    it->base = 0;
    it->len = (gint64)n_speech;
    it->seek = 0;
    g_cond_broadcast(&self->q.space);
    return TRUE;
}

gint64 gst_whisper_vad_length(GstWhisper *self, const WItem *it)
{
    return self->speech.filtered ? self->speech.len : it->len;
}

GstClockTime gst_whisper_vad_frame_time(GstWhisper *self, GstClockTime t0, gint64 frame)
{
    if (!self->speech.map)
        return t0 + gst_whisper_samples_to_ns(frame * WKV_HOP);
    int64_t cs, unused;
    wkv_vad_map_segment(self->speech.map, frame, frame, &cs, &unused);
    return t0 + (GstClockTime)cs * 10 * GST_MSECOND;
}
