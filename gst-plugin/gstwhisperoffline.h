/* The offline step (gstwhisperoffline.c): a stretch through the core's long-form
 * transcriber, window by window, worker thread only. */
#ifndef GST_WHISPER_OFFLINE_H
#define GST_WHISPER_OFFLINE_H

#include "gstwhisper.h"
#include "gstwhisperqueue.h"
#include "gstwhispersegs.h"

G_BEGIN_DECLS

/* The offline step's (worker-only): the core's transcriber of the current stretch,
 * the samples of that stretch handed to it (the queue drops them then) and whether it
 * closed. */
typedef struct {
    wkv_transcriber *tr;
    gint64 pushed;
    gboolean closed;
    gpointer collect; /* the window under way's GstWhisperCollect */
} GstWhisperOffline;

/* A new stretch: its transcriber.  FALSE on an error (posted). */
gboolean gst_whisper_offline_begin(GstWhisper *self);
/* Hands the stretch's new samples to the transcriber (the queue's copy goes) and
 * closes it when the stretch has ended.  Lock held.  FALSE on an error (posted). */
gboolean gst_whisper_offline_feed(GstWhisper *self, WItem *it);
/* The next window's size in frames: 0 while it waits for audio, -1 when done. */
int gst_whisper_offline_next(GstWhisper *self);
/* Decodes the next window (`size` frames) of `it` into *out: one piece, its segments
 * and a GAP up to where the next window starts.  Lock held on entry and exit, dropped
 * while it computes; a flush meanwhile leaves *out empty.  FALSE on a fatal error
 * (out->failed; the pieces before it still go out). */
gboolean gst_whisper_offline_window(GstWhisper *self, WItem *it, int size,
                                    GstWhisperDecoded *out);
/* Drops the stretch's transcriber.  q.lock held, or the task stopped. */
void gst_whisper_offline_forget(GstWhisper *self);

G_END_DECLS

#endif
