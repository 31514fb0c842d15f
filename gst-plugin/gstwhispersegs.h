/* What a decoding step returns (gstwhispersegs.c): segments, words and cues as text
 * buffers to be, in pieces that each end with a GAP, and the error that ended the
 * step.  The steps (offline, batch, live) make it; gstwhispertext.c pushes it. */
#ifndef GST_WHISPER_SEGS_H
#define GST_WHISPER_SEGS_H

#include <math.h>

#include <gst/gst.h>

#include "gstwhisper.h"

G_BEGIN_DECLS

/* A word of a segment, for its whisper-segment message. */
typedef struct {
    gchar *word;
    GstClockTime start, end;
    double probability;
} WWord;

/* A segment decoded, to be pushed after the window; or (text-unit word or cue) a word
 * or a cue, which only makes a buffer. */
typedef struct {
    gchar *text;
    GstClockTime pts, duration;
    double avg_logprob, no_speech_prob;
    gboolean final;
    GstClockTime arrived; /* live finals: clock time its first sample came, else NONE */
    gboolean no_buffer;   /* a segment whose text goes out as words or cues */
    gboolean text_only;   /* a word or a cue: a buffer, no message or tags */
    GArray *words;        /* WWord (word timestamps on), else NULL */
} WSeg;

void gst_whisper_seg_free(gpointer seg);

/* Segments (WSeg*) to push in order, then a GAP up to `until` (NONE: none). */
typedef struct {
    GPtrArray *segs;
    GstClockTime until;
} GstWhisperPiece;

/* A step's result: its pieces in order; `error_what` set when the core failed (the
 * ERROR is posted once the pieces went out, `error` the core's message); `failed` when
 * the stream must end after them (that error, or one already posted). */
typedef struct {
    GArray *pieces; /* GstWhisperPiece, NULL until the first */
    gboolean failed;
    const gchar *error_what;
    char *error;
} GstWhisperDecoded;

#define GST_WHISPER_DECODED_INIT {NULL, FALSE, NULL, NULL}

/* Adds a piece, taking `segs` (NULL: a new empty array); returns its segs. */
GPtrArray *gst_whisper_decoded_add(GstWhisperDecoded *d, GPtrArray *segs, GstClockTime until);
/* A new array for WSeg*, freeing them with it. */
GPtrArray *gst_whisper_segs_new(void);
/* The core failed: `what` and its message (taken), posted after the pieces. */
void gst_whisper_decoded_fail(GstWhisperDecoded *d, const gchar *what, char *err);
void gst_whisper_decoded_clear(GstWhisperDecoded *d);

static inline GstClockTime gst_whisper_secs_to_ns(double s)
{
    /* segment times are multiples of 0.01 s computed in double: rounding to the
     * nearest nanosecond gives the exact value */
    return s <= 0 ? 0 : (GstClockTime)llround(s * 1e9);
}

static inline GstClockTime gst_whisper_samples_to_ns(gint64 n)
{
    return gst_util_uint64_scale_int((guint64)n, GST_SECOND, WKV_SAMPLE_RATE);
}

G_END_DECLS

#endif
