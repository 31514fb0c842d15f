/* How late live text is on the element fed in real time (issue 13, item 4): a WAV
 * file played at its own pace (identity sync=true) into `whisper` with a live step;
 * for every text buffer on text_src, delay = running time when it came out − the end
 * of its audio (PTS + duration; the file's segment starts at 0, so PTS is running
 * time).  Prints count, median, p90 (nearest rank) and worst, in seconds.
 *
 *   GST_PLUGIN_PATH=build/gst-plugin whisper-live-latency MODEL FILE.wav STEP_MS
 *       LATENCY_MS THREADS segment|word
 */
#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    GstElement *pipe;
    GArray *delays;
} Run;

static GstFlowReturn on_sample(GstAppSink *sink, gpointer user)
{
    Run *r = user;
    GstSample *s = gst_app_sink_pull_sample(sink);
    if (!s)
        return GST_FLOW_EOS;
    GstBuffer *b = gst_sample_get_buffer(s);
    GstClock *clock = gst_element_get_clock(r->pipe);
    if (clock && GST_BUFFER_PTS_IS_VALID(b)) {
        GstClockTime now = gst_clock_get_time(clock) - gst_element_get_base_time(r->pipe);
        GstClockTime end = GST_BUFFER_PTS(b) + (GST_BUFFER_DURATION_IS_VALID(b)
                                                    ? GST_BUFFER_DURATION(b) : 0);
        double d = ((double)now - (double)end) / GST_SECOND;
        g_array_append_val(r->delays, d);
    }
    if (clock)
        gst_object_unref(clock);
    gst_sample_unref(s);
    return GST_FLOW_OK;
}

static gint cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    gst_init(&argc, &argv);
    if (argc != 7) {
        fprintf(stderr, "usage: %s MODEL FILE.wav STEP_MS LATENCY_MS THREADS segment|word\n",
                argv[0]);
        return 2;
    }
    gboolean words = g_str_equal(argv[6], "word");
    gchar *desc = g_strdup_printf(
        "filesrc location=\"%s\" ! wavparse ! audioconvert ! audioresample ! "
        "audio/x-raw,format=F32LE,rate=16000,channels=1 ! identity sync=true ! "
        "whisperkv name=w model=\"%s\" step=%s latency=%s threads=%s temperature-fallback=false "
        "word-timestamps=%s text-unit=%s "
        "w.src ! fakesink sync=false w.text_src ! appsink name=text sync=false emit-signals=true",
        argv[2], argv[1], argv[3], argv[4], argv[5], words ? "true" : "false", argv[6]);
    GError *err = NULL;
    Run r = {gst_parse_launch(desc, &err), g_array_new(FALSE, FALSE, sizeof(double))};
    g_free(desc);
    if (!r.pipe) {
        fprintf(stderr, "pipeline: %s\n", err->message);
        return 1;
    }
    GstElement *sink = gst_bin_get_by_name(GST_BIN(r.pipe), "text");
    g_signal_connect(sink, "new-sample", G_CALLBACK(on_sample), &r);
    gst_object_unref(sink);
    gst_element_set_state(r.pipe, GST_STATE_PLAYING);
    GstBus *bus = gst_element_get_bus(r.pipe);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    int status = 0;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        gst_message_parse_error(m, &err, NULL);
        fprintf(stderr, "error: %s\n", err->message);
        status = 1;
    }
    gst_message_unref(m);
    gst_object_unref(bus);
    GstElement *w = gst_bin_get_by_name(GST_BIN(r.pipe), "w");
    guint64 late = 0, max_delay = 0;
    g_object_get(w, "late-commits", &late, "max-commit-delay", &max_delay, NULL);
    gst_object_unref(w);
    gst_element_set_state(r.pipe, GST_STATE_NULL);
    gst_object_unref(r.pipe);
    guint n = r.delays->len;
    g_array_sort(r.delays, cmp_double);
    const double *d = (const double *)r.delays->data;
    if (n > 0)
        printf("%s step %s latency %s threads %s: %u buffers, delay median %.2f s, p90 %.2f s, "
               "worst %.2f s; late-commits %" G_GUINT64_FORMAT "\n", argv[6], argv[3], argv[4],
               argv[5], n, n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2,
               d[(guint)ceil(0.9 * n) - 1], d[n - 1], late);
    else
        printf("%s: no text\n", argv[6]);
    g_array_unref(r.delays);
    return status;
}
