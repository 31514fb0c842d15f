/* Voice activity (gstwhispervad.c; worker thread only): offline, a stretch's speech
 * cut out before the long form; the whisper-vad messages. */
#ifndef GST_WHISPER_VAD_H
#define GST_WHISPER_VAD_H

#include "gstwhisper.h"
#include "gstwhisperqueue.h"

G_BEGIN_DECLS

/* Offline VAD, for the current stretch (worker-only): its audio was replaced by its
 * speech (filtered), `len` samples long before; the speech's times map back through
 * `map`. */
typedef struct {
    gboolean filtered;
    gint64 len;
    wkv_vad_map *map;
} GstWhisperSpeech;

/* A whisper-vad message (post-vad-messages on): speech starts or ends at text time ts. */
void gst_whisper_vad_post(GstWhisper *self, gboolean speech, GstClockTime ts);
/* The messages of a stretch's speech segments (n samples from text time t0). */
void gst_whisper_vad_post_segments(GstWhisper *self, const wkv_vad_segment *segs, int n_segs,
                                   GstClockTime t0, gint64 n);
/* Offline, `it` has ended: replaces its audio by the speech the CLI would transcribe
 * (wkv_vad_filter) and keeps the map.  Lock held on entry and exit (dropped while it
 * computes).  FALSE on an error (posted). */
gboolean gst_whisper_vad_filter(GstWhisper *self, WItem *it);
/* Forgets the current stretch's map. */
void gst_whisper_vad_forget(GstWhisper *self);
/* The stretch's length in samples as it came (before the filter). */
gint64 gst_whisper_vad_length(GstWhisper *self, const WItem *it);
/* Text time of mel frame `frame` of the audio transcribed (through the map, if any). */
GstClockTime gst_whisper_vad_frame_time(GstWhisper *self, GstClockTime t0, gint64 frame);

G_END_DECLS

#endif
