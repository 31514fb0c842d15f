/* A core segment as the element's text buffers (gstwhispercollect.c): its times on the
 * stretch's timeline (through VAD's map), its words, and offline its cues. */
#ifndef GST_WHISPER_COLLECT_H
#define GST_WHISPER_COLLECT_H

#include "cue_cut.h"
#include "gstwhisper.h"
#include "gstwhispersegs.h"

G_BEGIN_DECLS

/* What the segments of one decoding run need (gst_whisper_collect_segment): the
 * stretch's text time t0, the limit its text stops at (end of a stretch a
 * discontinuity closed, or NONE), lateness; the text buffers made (WSeg*). */
typedef struct {
    GstWhisper *self;
    GstClockTime t0;
    GstClockTime limit;
    guint lateness;
    GPtrArray *segs;
    gboolean failed; /* an allocation failed (ERROR posted): the window's text stops */
    gchar *language; /* the first segment's language (g_free) */
} GstWhisperCollect;

/* text-unit=cue offline: the current stretch's cues (worker-only). */
typedef struct {
    cue_cutter *cut;     /* NULL: not cutting */
    GPtrArray *out;      /* where complete cues go (WSeg*), while cutting */
    GstClockTime t0, limit; /* as GstWhisperCollect's, for the cues being cut */
    guint lateness;
} GstWhisperCues;

/* The segment callback of a decoding run, `user` a GstWhisperCollect: the segment as
 * text buffers (words, cues) in its `segs`.  Non-zero stops the run (an allocation
 * failed, ERROR posted). */
int gst_whisper_collect_segment(const wkv_segment *seg, void *user);

/* text-unit=cue offline: the stretch's cues start at text time t0 (their limit and
 * lateness are set per window: gst_whisper_cues_window). */
void gst_whisper_cues_begin(GstWhisper *self, GstClockTime t0);
void gst_whisper_cues_window(GstWhisper *self, GstClockTime limit, guint lateness);
/* Text time before which the open cue starts (text may not pass it yet), or NONE. */
GstClockTime gst_whisper_cues_hold(GstWhisper *self);
/* The stretch ended: its last cue, if any, into `out` (WSeg*); the cutter goes. */
void gst_whisper_cues_finish(GstWhisper *self, GPtrArray *out);
/* Drops the cues being cut (a flush, the model is unloaded). */
void gst_whisper_cues_forget(GstWhisper *self);

G_END_DECLS

#endif
