/* The queue between the streaming thread and the worker (gstwhisperqueue.c): stretches
 * of audio and the events for the text pad, in stream order, under `q.lock`.  A data
 * structure: it knows samples, timestamps and bounds, not text. */
#ifndef GST_WHISPER_QUEUE_H
#define GST_WHISPER_QUEUE_H

#include <gst/gst.h>

#include "gstwhisper.h"
#include "gstwhisperinput.h"

G_BEGIN_DECLS

/* Timestamps as GStreamer's audio elements take them (GstAudioStreamAlign's defaults,
 * audiobasesink's alignment-threshold and discont-wait): a buffer this far from where
 * the samples before it put it is off; once buffers have stayed off for DISCONT_WAIT
 * of their own time the jump is real and closes the stretch. */
#define ALIGN_THRESHOLD (40 * GST_MSECOND)
#define DISCONT_WAIT GST_SECOND
/* Live: at most this much audio is kept uncommitted (one window). */
#define LIVE_MAX_SAMPLES WKV_N_SAMPLES
/* Offline, a source reads faster than inference: the streaming thread waits once the
 * worker holds this much audio not yet transcribed (4 windows, 7.7 MB), so a file of
 * any length costs the same memory.  Always more than one window, which the worker
 * needs to make progress. */
#define OFFLINE_MAX_SAMPLES (4 * (gint64)WKV_N_SAMPLES)

typedef enum { ITEM_AUDIO, ITEM_EVENT } ItemType;

/* When a buffer's samples arrived in chain (live stretches): samples before stream
 * index `end` came at time `at` of the element's clock (NONE: it had none) or earlier. */
typedef struct {
    gint64 end;
    GstClockTime at;
} WArrival;

typedef struct {
    ItemType type;
    GstEvent *event; /* ITEM_EVENT: to push on text_src as it is */
    /* ITEM_AUDIO */
    float *pcm;       /* samples [base, base + n) of this stretch */
    gsize n, cap;
    gint64 base;      /* stream index of pcm[0] */
    gint64 len;       /* samples received: base + n */
    gboolean closed;  /* no more samples will come */
    gboolean eos;     /* closed by EOS (not by a discontinuity) */
    GstClockTime pts0; /* audio PTS of stream sample 0 */
    GstClockTime t0;  /* text time of stream sample 0: pts0, or later when the audio's
                       * timestamps went back (text never goes back) */
    gboolean live;    /* decided when the item starts */
    GArray *arrivals; /* WArrival, live items only (the latency promise) */
    /* worker-owned */
    gint64 seek;      /* offline: next window's first frame */
} WItem;

/* The queue between chain and worker: under `lock`. */
typedef struct {
    GMutex lock;
    GCond cond;             /* items or flushing changed */
    GCond space;            /* the worker released audio, or flushing was set */
    GQueue items;           /* WItem*, stream order */
    gboolean flushing;
    GstFlowReturn srcresult; /* text_src's last flow (OK after a flush or activation) */
    GstSegment segment;     /* the audio's */
    GstClockTime audio_end; /* audio PTS where the last buffer ended, or NONE */
    GstClockTime text_end;  /* latest text time any stretch reached, or NONE */
    guint run_step_ms;      /* `step` as it was at READY->PAUSED */
    gboolean upstream_live, live_known;
    GQueue src_tags;        /* GstTagList* to send on src before the next buffer */
    gboolean text_flowing;  /* the text pad sent text, a GAP with a duration, or EOS
                             * since the stream (re)started: its sinks can preroll */
    gboolean src_eos;       /* EOS went out on src: later tags go on text_src only */
    gint64 max_held;        /* offline: chain waits while more samples are held */
    gint64 worker_held;     /* samples the worker's offline transcriber holds (they left
                             * the items): counted in the offline bound */
    /* Buffers off the open stretch's time by more than ALIGN_THRESHOLD, held until one
     * is back in line (jitter: they continue the stretch) or they stayed off for
     * DISCONT_WAIT (a real jump: a new stretch from pend_pts).  16-kHz samples. */
    float *pend;
    gsize pend_n, pend_cap;
    GstClockTime pend_pts;     /* the first held buffer's PTS; NONE: nothing held */
    GstClockTime pend_arrived; /* when the last of them came (live), or NONE */
} GstWhisperQueue;

void gst_whisper_queue_init(GstWhisper *self);
void gst_whisper_queue_clear(GstWhisper *self);
void witem_free(WItem *it);
/* Drops the item's samples before stream index `keep`.  Lock held. */
void witem_drop_before(WItem *it, gint64 keep);
/* When the sample at stream index `index` arrived (clock time) by a live item's
 * `arrivals` (or a copy), NONE if not known. */
GstClockTime gst_whisper_arrival(const GArray *arrivals, gint64 index);
/* Copies a buffer's samples (16 kHz, F32 or S16LE; PTS `pts`, maybe NONE: they go on
 * where the audio was) into the open stretch, starting one when needed (`discont`, a
 * jump in the timestamps); offline, waits while the worker holds more than the bound
 * set at the start.  Then moves the tags waiting for `src` to *tags.  FALSE when the
 * samples could not be stored (ERROR posted; the stretch is closed, its audio so far
 * still transcribed). */
gboolean gst_whisper_queue_samples(GstWhisper *self, GstClockTime pts, gboolean discont,
                                   const GstWhisperSamples *s, gboolean live,
                                   GstClockTime arrived, GQueue *tags);
/* Closes the open stretch and queues `event` (taken) for text_src; EOS also marks the
 * stretch as ended by EOS and moves the waiting tags to *tags (may be NULL else). */
void gst_whisper_queue_event(GstWhisper *self, GstEvent *event, GQueue *tags);
/* A new segment: closes the stretch, forgets the stream time, queues the text
 * segment. */
void gst_whisper_queue_segment(GstWhisper *self, const GstSegment *seg, GstEvent *event);
void gst_whisper_queue_set_flushing(GstWhisper *self, gboolean flushing);
/* FLUSH_STOP: drops everything queued and resets the stream. */
void gst_whisper_queue_flush_stop(GstWhisper *self);
/* READY->PAUSED: a new stream with `step` as the live step; offline, chain waits while
 * the worker holds more than `max_held` samples. */
void gst_whisper_queue_start(GstWhisper *self, guint step_ms, gint64 max_held);
/* A final segment's tags, for src before its next buffer (unless src is done). */
void gst_whisper_queue_src_tags(GstWhisper *self, const GstTagList *tags);
GstSegment gst_whisper_queue_get_segment(GstWhisper *self);
/* Whether upstream's liveness is known (then in *live), asked once per activation. */
gboolean gst_whisper_queue_upstream_live(GstWhisper *self, gboolean *live);
void gst_whisper_queue_set_upstream_live(GstWhisper *self, gboolean live);
guint gst_whisper_queue_step(GstWhisper *self);
/* text_src's flow: the worker stores it, chain combines it with src's. */
void gst_whisper_queue_set_srcresult(GstWhisper *self, GstFlowReturn ret);
/* The worker: text (or a GAP with a duration, or EOS) went out on the text pad. */
void gst_whisper_queue_set_text_flowing(GstWhisper *self);
gboolean gst_whisper_queue_text_flowing(GstWhisper *self);
GstFlowReturn gst_whisper_queue_srcresult(GstWhisper *self);

G_END_DECLS

#endif
