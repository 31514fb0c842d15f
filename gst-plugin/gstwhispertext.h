/* Everything that leaves on text_src (gstwhispertext.c; worker thread): events, text
 * buffers, messages, tags. */
#ifndef GST_WHISPER_TEXT_H
#define GST_WHISPER_TEXT_H

#include "gstwhisper.h"
#include "gstwhispersegs.h"

G_BEGIN_DECLS

/* Where the text pad's time has got to (worker-only). */
typedef struct {
    GstClockTime pos;   /* where text_src's time has got to */
    GstClockTime floor; /* no text may start before: the last text buffer's PTS or the
                         * end of the last GAP sent, or NONE */
    gboolean late;      /* a late-commit episode is going on (warned once) */
    gboolean stall_warned; /* the worker's "waiting for audio" warning went out (once) */
} GstWhisperText;

/* The text pad's caps: text/x-raw, format utf8, or pango-markup for highlighted cues. */
GstCaps *gst_whisper_text_caps(GstWhisper *self);
void gst_whisper_text_reset(GstWhisper *self);
void gst_whisper_text_ensure_stream(GstWhisper *self);
/* GAP on text_src from where its time is up to `until`. */
void gst_whisper_text_gap(GstWhisper *self, GstClockTime until);
/* A stretch's text starts at t0: with `gap`, a GAP there (no duration), which
 * prerolls the sinks on the text pad. */
void gst_whisper_text_preroll(GstWhisper *self, GstClockTime t0, gboolean gap);
/* Pushes a serialized event that came through the queue. */
void gst_whisper_text_event(GstWhisper *self, GstEvent *ev);
/* Pushes segments then a GAP up to `until` (if valid); returns the flow, which it also
 * stores for chain. */
GstFlowReturn gst_whisper_text_push_segments(GstWhisper *self, GPtrArray *segs,
                                             GstClockTime until);
/* Pushes what a step decoded, piece by piece, until a flow is not OK. */
GstFlowReturn gst_whisper_text_push_decoded(GstWhisper *self, const GstWhisperDecoded *d);
/* A fatal error: EOS on text_src, as it is. */
void gst_whisper_text_end(GstWhisper *self);

G_END_DECLS

#endif
