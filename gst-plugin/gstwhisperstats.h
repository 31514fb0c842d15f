/* The statistics (gstwhisperstats.c), under the object lock, and the clock the
 * latency promise is measured on. */
#ifndef GST_WHISPER_STATS_H
#define GST_WHISPER_STATS_H

#include <gst/gst.h>

#include "gstwhisper.h"

G_BEGIN_DECLS

#define GST_WHISPER_DELAY_BIN_MS 20
#define GST_WHISPER_DELAY_BINS 1501

/* Statistics since the model was loaded: under the object lock. */
typedef struct {
    guint64 windows, tokens;
    gdouble encode_ms, encoder_runs, busy_ms, audio_s;
    guint64 late_commits;
    guint64 max_commit_delay_ms;
    /* finals' commit delays in 20-ms bins, the last one for 30 s and more (the median) */
    guint32 delay_bins[GST_WHISPER_DELAY_BINS];
} GstWhisperStats;

/* The element's clock's time now, NONE without a clock: the latency promise is kept
 * on the pipeline's clock (a test harness's clock stands still). */
GstClockTime gst_whisper_clock_now(GstWhisper *self);
/* Takes the context's counters and adds busy time and audio time. */
void gst_whisper_stats_account(GstWhisper *self, double busy_ms, double audio_s);
/* Counts a live final that went out `delay_ms` after its audio; TRUE when it broke
 * the promise (`latency`), with the latency then in *latency_ms; *grew: it is the
 * longest delay so far (max-observed-delay changed). */
gboolean gst_whisper_stats_commit(GstWhisper *self, guint64 delay_ms, guint *latency_ms,
                                  gboolean *grew);

G_END_DECLS

#endif
