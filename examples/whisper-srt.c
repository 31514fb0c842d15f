/* whisper-srt: plays an audio or video file through the `whisperkv` element and writes
 * the text it gets from text_src (through an appsink) as an SRT file.
 *
 *   whisper-srt MODEL INPUT OUTPUT.srt
 *
 * The element is registered from this program (linked in), so it works without the
 * plugin installed; an installed plugin is used when there is one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include "gstwhisper.h"

/* uridecodebin's audio pad -> audioconvert */
static void on_pad_added(GstElement *src, GstPad *pad, gpointer conv)
{
    (void)src;
    GstPad *sink = gst_element_get_static_pad(conv, "sink");
    if (!gst_pad_is_linked(sink))
        gst_pad_link(pad, sink);
    gst_object_unref(sink);
}

static void srt_time(FILE *f, GstClockTime t)
{
    guint64 ms = t / GST_MSECOND;
    fprintf(f, "%02u:%02u:%02u,%03u", (unsigned)(ms / 3600000), (unsigned)(ms / 60000 % 60),
            (unsigned)(ms / 1000 % 60), (unsigned)(ms % 1000));
}

int main(int argc, char **argv)
{
    gst_init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODEL INPUT OUTPUT.srt\n", argv[0]);
        return 2;
    }
    GstElementFactory *f = gst_element_factory_find("whisperkv");
    if (f)
        gst_object_unref(f);
    else
        gst_whisper_register(NULL);

    gchar *uri = gst_uri_is_valid(argv[2]) ? g_strdup(argv[2])
                                           : gst_filename_to_uri(argv[2], NULL);
    if (!uri) {
        fprintf(stderr, "whisper-srt: bad input '%s'\n", argv[2]);
        return 1;
    }
    /* offline: the audio goes into fakesink as fast as it decodes; the text comes
     * once each 30-s window is complete */
    GstElement *pipe = gst_pipeline_new("whisper-srt");
    GstElement *src = gst_element_factory_make("uridecodebin", NULL);
    GstElement *conv = gst_element_factory_make("audioconvert", NULL);
    GstElement *res = gst_element_factory_make("audioresample", NULL);
    GstElement *w = gst_element_factory_make("whisperkv", NULL);
    GstElement *asink = gst_element_factory_make("fakesink", NULL);
    GstElement *tsink = gst_element_factory_make("appsink", NULL);
    if (!src || !conv || !res || !w || !asink || !tsink) {
        fprintf(stderr, "whisper-srt: missing GStreamer elements\n");
        return 1;
    }
    GstCaps *audio = gst_caps_from_string("audio/x-raw");
    g_object_set(src, "uri", uri, "caps", audio, NULL);
    gst_caps_unref(audio);
    g_object_set(w, "model", argv[1], NULL);
    g_object_set(tsink, "sync", FALSE, NULL);
    g_object_set(asink, "sync", FALSE, NULL);
    gst_bin_add_many(GST_BIN(pipe), src, conv, res, w, asink, tsink, NULL);
    gst_element_link_many(conv, res, w, asink, NULL);
    gst_element_link_pads(w, "text_src", tsink, "sink");
    g_signal_connect(src, "pad-added", G_CALLBACK(on_pad_added), conv);

    FILE *out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        return 1;
    }
    int status = 0;
    if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        status = 1;
    GstBus *bus = gst_element_get_bus(pipe);
    guint n = 0;
    while (status == 0) {
        /* text first; the bus tells about errors */
        GstSample *sample =
            gst_app_sink_try_pull_sample(GST_APP_SINK(tsink), 100 * GST_MSECOND);
        if (sample) {
            GstBuffer *b = gst_sample_get_buffer(sample);
            GstMapInfo map;
            /* no partial is ever a buffer (they are messages); DELTA_UNIT skipped anyway */
            if (gst_buffer_get_size(b) > 0 &&
                !GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT) &&
                gst_buffer_map(b, &map, GST_MAP_READ)) {
                gchar *text = g_strstrip(g_strndup((const gchar *)map.data, map.size));
                fprintf(out, "%u\n", ++n);
                srt_time(out, GST_BUFFER_PTS(b));
                fputs(" --> ", out);
                srt_time(out, GST_BUFFER_PTS(b) + GST_BUFFER_DURATION(b));
                fprintf(out, "\n%s\n\n", text);
                g_free(text);
                gst_buffer_unmap(b, &map);
            }
            gst_sample_unref(sample);
            continue;
        }
        if (gst_app_sink_is_eos(GST_APP_SINK(tsink)))
            break;
        GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        if (m) {
            GError *e;
            gchar *dbg;
            gst_message_parse_error(m, &e, &dbg);
            fprintf(stderr, "whisper-srt: %s\n%s\n", e->message, dbg ? dbg : "");
            g_error_free(e);
            g_free(dbg);
            gst_message_unref(m);
            status = 1;
        }
    }
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(pipe);
    if (fclose(out) != 0)
        status = 1;
    g_free(uri);
    if (status == 0)
        fprintf(stderr, "whisper-srt: %u subtitles written to %s\n", n, argv[3]);
    return status;
}
