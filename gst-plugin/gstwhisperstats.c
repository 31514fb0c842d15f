/* whisper: the statistics the properties report (windows, tokens, encoder time,
 * real-time factor, live commit delays), under the object lock, and the clock the
 * latency promise is measured on. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

GstClockTime gst_whisper_clock_now(GstWhisper *self)
{
    GstClock *clock = gst_element_get_clock(GST_ELEMENT(self));
    if (!clock)
        return GST_CLOCK_TIME_NONE;
    GstClockTime now = gst_clock_get_time(clock);
    gst_object_unref(clock);
    return now;
}

void gst_whisper_stats_account(GstWhisper *self, double busy_ms, double audio_s)
{
    const wkv_stats *st = wkv_context_stats(self->w.ctx);
    GST_OBJECT_LOCK(self);
    self->stats.windows = (guint64)st->windows;
    self->stats.tokens = (guint64)st->tokens_decoded;
    self->stats.encode_ms = st->encode_ms;
    self->stats.encoder_runs = (double)st->encoder_runs;
    self->stats.busy_ms += busy_ms;
    self->stats.audio_s += audio_s;
    GST_OBJECT_UNLOCK(self);
}

gboolean gst_whisper_stats_commit(GstWhisper *self, guint64 delay_ms, guint *latency_ms,
                                  gboolean *grew)
{
    GST_OBJECT_LOCK(self);
    guint latency = self->props.latency_ms;
    gboolean late = delay_ms > latency;
    *grew = delay_ms > self->stats.max_commit_delay_ms;
    if (*grew)
        self->stats.max_commit_delay_ms = delay_ms;
    if (late)
        self->stats.late_commits++;
    guint64 bin = delay_ms / GST_WHISPER_DELAY_BIN_MS;
    self->stats.delay_bins[MIN(bin, GST_WHISPER_DELAY_BINS - 1)]++;
    GST_OBJECT_UNLOCK(self);
    *latency_ms = latency;
    return late;
}
