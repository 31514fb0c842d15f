/* The live step (gstwhisperlive.c; worker thread only): glue to the core's live
 * stream. */
#ifndef GST_WHISPER_LIVE_H
#define GST_WHISPER_LIVE_H

#include "cue_cut.h"
#include "gstwhisper.h"
#include "gstwhisperqueue.h"
#include "gstwhispersegs.h"

G_BEGIN_DECLS

/* The live driver's (worker-only): the core's live stream, one per activation. */
typedef struct {
    wkv_stream *stream;
    gint64 offset;  /* stream index of the current stretch's sample 0 */
    gint64 pushed;  /* the stretch's samples before this index are in the stream */
    void *call;     /* what the stream's callbacks need during a call (gstwhisperlive.c) */
    cue_cutter *cut; /* text-unit=cue: the stretch's committed words cut into cues */
    GPtrArray *cue_out;  /* where complete cues go (WSeg*), while cutting */
    float *scratch;      /* a run's copy of its audio */
    gsize scratch_cap;
} GstWhisperLive;

void gst_whisper_live_init(GstWhisper *self);
/* Frees the stream (before the context it runs on). */
void gst_whisper_live_free(GstWhisper *self);
/* A new stretch: creates the stream on first use, else resets it (forgets the audio
 * and the committed text, back to the initial prompt).  FALSE on an error (posted). */
gboolean gst_whisper_live_begin(GstWhisper *self);
/* Whether `it` has samples to push, or has ended with audio still held.  Lock held. */
gboolean gst_whisper_live_ready(GstWhisper *self, WItem *it);
/* Pushes `it`'s new samples into the stream (which runs when a step is due) and
 * finishes it when `it` is closed; each run's text comes back in *out, one piece a
 * run.  The lock is held on entry and exit, dropped while it computes; a flush
 * meanwhile leaves *out empty.  FALSE on a fatal error (out->failed). */
gboolean gst_whisper_live_run(GstWhisper *self, WItem *it, GstWhisperDecoded *out);

G_END_DECLS

#endif
