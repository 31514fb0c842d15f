/* What the live stream tells its caller (whisperkv.h "live stream"): its positions,
 * language and latency, and the commit delays of its finals (a 10-ms histogram for
 * the median, with the sum, minimum and maximum). */
#include "stream/stream_priv.h"

#include <math.h>

void wkv__stream_count_delay(wkv_stream *st, double delay)
{
    st->delay_sum += delay;
    if (delay > st->stats.delay_max || st->stats.finals == 1)
        st->stats.delay_max = delay;
    if (delay < st->delay_min || st->stats.finals == 1)
        st->delay_min = delay;
    long bin = (long)floor(delay * 100);
    st->delay_hist[bin < 0 ? 0 : bin > DELAY_BINS ? DELAY_BINS : bin]++;
}

int64_t wkv_stream_base(const wkv_stream *st)
{
    return st->audio.base;
}

int64_t wkv_stream_length(const wkv_stream *st)
{
    return st->audio.base + st->audio.n;
}

const char *wkv_stream_language(const wkv_stream *st)
{
    return wkv_model_is_multilingual(st->m) ? st->language : "en";
}

void wkv_stream_set_latency(wkv_stream *st, int latency_ms)
{
    st->so.latency_ms = latency_ms < 0 ? 0 : latency_ms;
}

void wkv_stream_get_stats(const wkv_stream *st, wkv_stream_stats *out)
{
    *out = st->stats;
    if (st->stats.finals <= 0)
        return;
    out->delay_mean = st->delay_sum / (double)st->stats.finals;
    int64_t half = (st->stats.finals + 1) / 2, seen = 0;
    for (int b = 0; b <= DELAY_BINS; b++) {
        seen += st->delay_hist[b];
        if (seen >= half) {
            /* the middle of its bin, within the delays seen */
            double m = b < DELAY_BINS ? b / 100.0 + 0.005 : st->stats.delay_max;
            m = m < st->delay_min ? st->delay_min : m;
            out->delay_median = m > st->stats.delay_max ? st->stats.delay_max : m;
            break;
        }
    }
}
