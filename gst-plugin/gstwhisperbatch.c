/* whisper: offline batching (batch-size > 1), glue to the core's wkv_transcribe_chunks
 * (which holds the algorithm), as the CLI's --batch-size.  Worker thread only.
 *
 * Without VAD, a stretch's samples leave the queue batch_size x 30 s at a time, as
 * soon as that much is in (the rest once the stretch ended), and are cut into plain
 * 30-s chunks: every batch starts on a multiple of 30 s, so the chunks are those of
 * wkv_chunks_plain over the whole stretch and the text is what wkv_transcribe_chunks
 * gives on it.  With vad-model, the whole stretch is needed first (as the sequential
 * VAD path): once it ended its speech segments (vad-max-speech-s at most 30, as the
 * CLI's cli_vad_chunks) are merged into chunks by wkv_chunks_from_speech, then one
 * worker iteration decodes batch_size of them.  Chunk times are the stretch's own, no
 * map is needed.  The samples taken are the worker's (q.worker_held counts them)
 * while it computes without the lock; a flush meanwhile drops the batch's text. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

void gst_whisper_batch_forget(GstWhisper *self)
{
    g_clear_pointer(&self->batch.pcm, g_free);
    self->batch.n = 0;
    self->batch.base = 0;
    free(self->batch.chunks); /* the core's */
    self->batch.chunks = NULL;
    self->batch.n_chunks = self->batch.next = 0;
    self->batch.speech = FALSE;
}

/* The samples and chunks taken are all decoded: they go (bt_speech stays).  Lock
 * held. */
static void release_taken(GstWhisper *self)
{
    gboolean speech = self->batch.speech;
    gst_whisper_batch_forget(self);
    self->batch.speech = speech;
    self->q.worker_held = 0;
    g_cond_broadcast(&self->q.space);
}

/* No VAD: the next batch_size x 30 s of `it` (the rest once it ended) into bt_pcm, cut
 * into plain chunks.  Lock held. */
static GstWhisperBatchStep take_plain(GstWhisper *self, WItem *it)
{
    GstWhisperWorker *w = &self->w;
    const gsize batch = (gsize)w->batch_size * WKV_N_SAMPLES;
    if (it->n == 0)
        return it->closed ? GST_WHISPER_BATCH_DONE : GST_WHISPER_BATCH_WAIT;
    if (it->n < batch && !it->closed)
        return GST_WHISPER_BATCH_WAIT;
    gsize n = MIN(it->n, batch);
    float *pcm = gst_whisper_try_new(float, n);
    if (!pcm) {
        gst_whisper_alloc_error(self, "a batch's audio", n, sizeof(float));
        return GST_WHISPER_BATCH_ERROR;
    }
    char *err = NULL;
    wkv_chunk *chunks = NULL;
    int nc = wkv_chunks_plain(n, &chunks, &err);
    if (nc < 0) {
        g_free(pcm);
        gst_whisper_inference_error(self, "batch-size: the chunks", err);
        return GST_WHISPER_BATCH_ERROR;
    }
    memcpy(pcm, it->pcm, n * sizeof(float));
    self->batch.pcm = pcm;
    self->batch.n = n;
    self->batch.base = it->base;
    self->batch.chunks = chunks;
    self->batch.n_chunks = nc;
    self->batch.next = 0;
    witem_drop_before(it, it->base + (gint64)n);
    self->q.worker_held = (gint64)n;
    return GST_WHISPER_BATCH_RAN;
}

/* The speech of pcm[0..n) (text time t0) as chunks into bt_chunks, with the whisper-vad
 * messages.  -1 with a message in *err. */
static int speech_chunks(GstWhisper *self, const float *pcm, gsize n, GstClockTime t0,
                         char **err)
{
    GstWhisperWorker *w = &self->w;
    /* a speech segment longer than a chunk is cut where the VAD finds a pause */
    wkv_vad_params p = w->vad_params;
    if (p.max_speech_duration_s > 30.0f)
        p.max_speech_duration_s = 30.0f;
    float *probs = NULL;
    wkv_vad_segment *segs = NULL;
    int64_t n_probs = wkv_vad_probs(gst_whisper_vad_model_get(w->vad), pcm, n, &probs, err);
    int n_segs = n_probs < 0 ? -1 : wkv_vad_segments(probs, n_probs, &p, &segs, err);
    free(probs);
    int nc = n_segs < 0 ? -1 : wkv_chunks_from_speech(segs, n_segs, n, &self->batch.chunks, err);
    if (nc >= 0) {
        gst_whisper_vad_post_segments(self, segs, n_segs, t0, (gint64)n);
        GST_DEBUG_OBJECT(self, "VAD: %d speech segments in %d chunks", n_segs, nc);
    }
    free(segs);
    return nc;
}

/* VAD: once `it` ended, its samples (taken, not copied) and its speech chunks.  Lock
 * held on entry and exit (dropped while it computes). */
static GstWhisperBatchStep take_speech(GstWhisper *self, WItem *it)
{
    if (self->batch.speech)
        return GST_WHISPER_BATCH_DONE;
    if (!it->closed)
        return GST_WHISPER_BATCH_WAIT;
    /* the stretch has ended: nothing appends to it, and a flush meanwhile frees the
     * item, not the samples */
    self->batch.pcm = it->pcm;
    self->batch.n = it->n;
    self->batch.base = it->base;
    self->batch.speech = TRUE;
    GstClockTime t0 = it->t0 + gst_whisper_samples_to_ns(it->base);
    it->pcm = NULL;
    it->n = it->cap = 0;
    self->q.worker_held = (gint64)self->batch.n;
    g_mutex_unlock(&self->q.lock);
    char *err = NULL;
    int nc = speech_chunks(self, self->batch.pcm, self->batch.n, t0, &err);
    g_mutex_lock(&self->q.lock);
    if (nc < 0) {
        gst_whisper_inference_error(self, "voice activity detection", err);
        return GST_WHISPER_BATCH_ERROR;
    }
    self->batch.n_chunks = nc;
    self->batch.next = 0;
    if (nc == 0) /* no speech: the stretch is done at the next step */
        release_taken(self);
    return GST_WHISPER_BATCH_RAN;
}

/* Segments of the batch's samples onto the stretch's times: the collect of the
 * element's other paths, with the times moved by `offset` seconds (the batch's first
 * sample in the stretch). */
typedef struct {
    GstWhisperCollect c;
    double offset;
    gint64 seek;
} BatchCollect;

static int collect_shifted(const wkv_segment *seg, void *user)
{
    BatchCollect *b = user;
    if (b->offset == 0)
        return gst_whisper_collect_segment(seg, &b->c);
    wkv_segment s = *seg;
    s.start += b->offset;
    s.end += b->offset;
    s.seek += b->seek;
    g_autofree wkv_word *words = NULL;
    if (seg->n_words > 0) {
        words = gst_whisper_try_new(wkv_word, (gsize)seg->n_words);
        if (!words) {
            gst_whisper_alloc_error(b->c.self, "a segment's words", (gsize)seg->n_words,
                                    sizeof(wkv_word));
            b->c.failed = TRUE;
            return 1;
        }
        for (int k = 0; k < seg->n_words; k++) {
            words[k] = seg->words[k];
            words[k].start += b->offset;
            words[k].end += b->offset;
        }
        s.words = words;
    }
    return gst_whisper_collect_segment(&s, &b->c);
}

/* The next batch_size chunks taken: decoded, their text into *out.  Lock held on entry
 * and exit (dropped while it computes). */
static GstWhisperBatchStep decode_batch(GstWhisper *self, WItem *it, GstWhisperDecoded *out)
{
    GstWhisperWorker *w = &self->w;
    const int c0 = self->batch.next, k = MIN(w->batch_size, self->batch.n_chunks - c0);
    const wkv_chunk *chunks = self->batch.chunks + c0;
    GstClockTime t0 = it->t0;
    GstClockTime limit = it->closed && !it->eos ? t0 + gst_whisper_samples_to_ns(it->len)
                                                : GST_CLOCK_TIME_NONE;
    GstClockTime until = t0 + gst_whisper_samples_to_ns(self->batch.base + chunks[k - 1].end);
    gint64 audio = 0;
    for (int i = 0; i < k; i++)
        audio += chunks[i].end - chunks[i].start;
    /* "auto" until a segment said which language the first chunk is in */
    wkv_options o = w->opts;
    o.language = w->detect_pending ? w->opts.language : w->opt_language;
    g_mutex_unlock(&self->q.lock);

    gint64 t_start = g_get_monotonic_time();
    BatchCollect b = {{self, t0, limit, gst_whisper_props_lateness(self),
                       gst_whisper_segs_new(), FALSE, NULL},
                      (double)self->batch.base / WKV_SAMPLE_RATE, self->batch.base / WKV_HOP};
    gst_whisper_cues_window(self, limit, b.c.lateness);
    char *err = NULL;
    int r = wkv_transcribe_chunks(w->ctx, self->batch.pcm, self->batch.n, chunks, k, w->batch_size, &o,
                                  collect_shifted, NULL, &b, &err);
    gst_whisper_stats_account(self, (g_get_monotonic_time() - t_start) / 1000.0,
                              (double)audio / WKV_SAMPLE_RATE);
    if (w->detect_pending && b.c.language) {
        g_free(w->opt_language);
        w->opt_language = g_steal_pointer(&b.c.language);
        w->detect_pending = FALSE;
        GST_INFO_OBJECT(self, "detected language %s", w->opt_language);
    }
    g_free(b.c.language);
    if (r < 0 || b.c.failed) {
        /* the segments reported before the failure still go out, then the error ends
         * the stream */
        gst_whisper_decoded_add(out, b.c.segs, GST_CLOCK_TIME_NONE);
        out->failed = TRUE;
        if (r < 0)
            gst_whisper_decoded_fail(out, "batch", err);
        else
            free(err);
        g_mutex_lock(&self->q.lock);
        return GST_WHISPER_BATCH_ERROR;
    }
    GST_DEBUG_OBJECT(self, "batch of %d chunks from sample %" G_GINT64_FORMAT ": %u segments",
                     k, self->batch.base + chunks[0].start, b.c.segs->len);

    g_mutex_lock(&self->q.lock);
    if (self->q.flushing) { /* cancelled: a flush came in meanwhile */
        g_ptr_array_unref(b.c.segs);
        return GST_WHISPER_BATCH_RAN;
    }
    self->batch.next += k;
    if (self->batch.next >= self->batch.n_chunks)
        release_taken(self);

    /* nothing can start before the next chunk any more */
    if (GST_CLOCK_TIME_IS_VALID(limit))
        until = MIN(until, limit);
    GstClockTime hold = gst_whisper_cues_hold(self);
    if (GST_CLOCK_TIME_IS_VALID(hold))
        until = MIN(until, hold);
    gst_whisper_decoded_add(out, b.c.segs, until);
    return GST_WHISPER_BATCH_RAN;
}

GstWhisperBatchStep gst_whisper_batch_run(GstWhisper *self, WItem *it, GstWhisperDecoded *out)
{
    GstWhisperWorker *w = &self->w;
    if (self->batch.next >= self->batch.n_chunks) {
        GstWhisperBatchStep step = w->vad ? take_speech(self, it) : take_plain(self, it);
        /* a flush while the speech was computed: `it` may be gone */
        if (step != GST_WHISPER_BATCH_RAN || self->q.flushing || self->batch.n_chunks == 0)
            return step;
    }
    return decode_batch(self, it, out);
}
