/* uridecodebin -> audioconvert -> audioresample -> appsink(F32LE, 16 kHz, mono),
 * pulled into one growing float buffer. */
#include "audio_load.h"

#include <errno.h>
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#define SAMPLE_RATE_HZ 16000
#define AUDIO_ERROR (g_quark_from_static_string("wkv-audio-error"))

typedef struct {
    GstElement *convert;       /* where the first audio pad is linked */
    gint audio_linked;         /* set from the streaming thread */
    gint no_more_pads;
} link_state;

static void on_pad_added(GstElement *src, GstPad *pad, gpointer user)
{
    (void)src;
    link_state *st = user;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (!caps)
        caps = gst_pad_query_caps(pad, NULL);
    gboolean audio = FALSE;
    if (caps && gst_caps_get_size(caps) > 0) {
        const char *name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
        audio = g_str_has_prefix(name, "audio/");
    }
    if (caps)
        gst_caps_unref(caps);
    if (!audio || g_atomic_int_get(&st->audio_linked))
        return; /* other streams stay unlinked; uridecodebin drops them */
    GstPad *sink = gst_element_get_static_pad(st->convert, "sink");
    if (!gst_pad_is_linked(sink) && GST_PAD_LINK_SUCCESSFUL(gst_pad_link(pad, sink)))
        g_atomic_int_set(&st->audio_linked, 1);
    gst_object_unref(sink);
}

static void on_no_more_pads(GstElement *src, gpointer user)
{
    (void)src;
    link_state *st = user;
    g_atomic_int_set(&st->no_more_pads, 1);
}

static GstElement *make(const char *factory, GError **error)
{
    GstElement *e = gst_element_factory_make(factory, NULL);
    if (!e)
        g_set_error(error, AUDIO_ERROR, 1,
                    "GStreamer element '%s' is missing (install gstreamer1.0-plugins-base)",
                    factory);
    return e;
}

/* The bus error as one line: "cannot decode 'x': <message>". */
static void set_bus_error(GstMessage *msg, const char *location, GError **error)
{
    GError *gerr = NULL;
    gchar *debug = NULL;
    gst_message_parse_error(msg, &gerr, &debug);
    char *text = g_strdup(gerr && gerr->message ? gerr->message : "unknown error");
    g_strdelimit(text, "\r\n", ' ');
    g_set_error(error, AUDIO_ERROR, 2, "cannot decode '%s': %s", location, text);
    g_free(text);
    g_free(debug);
    g_clear_error(&gerr);
}

/* Appends one sample's floats to the growing buffer. */
static void append_sample(GstSample *sample, float **data, gsize *n, gsize *cap)
{
    GstBuffer *buf = gst_sample_get_buffer(sample);
    GstMapInfo map;
    if (!buf || !gst_buffer_map(buf, &map, GST_MAP_READ))
        return;
    gsize add = map.size / sizeof(float);
    if (*n + add > *cap) {
        *cap = MAX(MAX(*cap * 2, *n + add), (gsize)SAMPLE_RATE_HZ * 32);
        *data = g_realloc_n(*data, *cap, sizeof(float));
    }
    memcpy(*data + *n, map.data, add * sizeof(float));
    *n += add;
    gst_buffer_unmap(buf, &map);
}

float *cli_audio_load(const char *location, gsize *n_samples, GError **error)
{
    *n_samples = 0;
    char *uri = NULL;
    if (gst_uri_is_valid(location) && strstr(location, "://")) {
        uri = g_strdup(location);
    } else {
        if (!g_file_test(location, G_FILE_TEST_EXISTS)) {
            g_set_error(error, AUDIO_ERROR, 3, "cannot open '%s': %s", location,
                        g_strerror(ENOENT));
            return NULL;
        }
        if (g_file_test(location, G_FILE_TEST_IS_DIR)) {
            g_set_error(error, AUDIO_ERROR, 3, "cannot open '%s': %s", location,
                        g_strerror(EISDIR));
            return NULL;
        }
        GError *uerr = NULL;
        uri = gst_filename_to_uri(location, &uerr);
        if (!uri) {
            g_set_error(error, AUDIO_ERROR, 3, "cannot open '%s': %s", location,
                        uerr ? uerr->message : "bad file name");
            g_clear_error(&uerr);
            return NULL;
        }
    }

    GstElement *pipeline = gst_pipeline_new("wkv-audio");
    GstElement *src = make("uridecodebin", error);
    GstElement *convert = src ? make("audioconvert", error) : NULL;
    GstElement *resample = convert ? make("audioresample", error) : NULL;
    GstElement *sink = resample ? make("appsink", error) : NULL;
    if (!sink) {
        /* elements not yet in a bin are floating: sink them before unref */
        GstElement *made[] = {src, convert, resample};
        for (size_t i = 0; i < G_N_ELEMENTS(made); i++)
            if (made[i])
                gst_object_unref(gst_object_ref_sink(made[i]));
        gst_object_unref(pipeline);
        g_free(uri);
        return NULL;
    }

    link_state st = {.convert = convert};
    g_object_set(src, "uri", uri, NULL);
    GstCaps *caps = gst_caps_new_simple("audio/x-raw", "format", G_TYPE_STRING, "F32LE",
                                        "rate", G_TYPE_INT, SAMPLE_RATE_HZ, "channels", G_TYPE_INT, 1,
                                        "layout", G_TYPE_STRING, "interleaved", NULL);
    /* sync=false: decode as fast as possible, not in real time */
    g_object_set(sink, "caps", caps, "sync", FALSE, NULL);
    gst_caps_unref(caps);

    gst_bin_add_many(GST_BIN(pipeline), src, convert, resample, sink, NULL);
    float *data = NULL;
    gsize n = 0, cap = 0;
    gboolean ok = FALSE;
    GstBus *bus = gst_element_get_bus(pipeline);

    if (!gst_element_link_many(convert, resample, sink, NULL)) {
        g_set_error(error, AUDIO_ERROR, 1, "cannot link the audio conversion elements");
        goto out;
    }
    g_signal_connect(src, "pad-added", G_CALLBACK(on_pad_added), &st);
    g_signal_connect(src, "no-more-pads", G_CALLBACK(on_no_more_pads), &st);

    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        if (msg) {
            set_bus_error(msg, location, error);
            gst_message_unref(msg);
        } else {
            g_set_error(error, AUDIO_ERROR, 2, "cannot decode '%s'", location);
        }
        goto out;
    }

    GstAppSink *appsink = GST_APP_SINK(sink);
    for (;;) {
        GstSample *sample = gst_app_sink_try_pull_sample(appsink, 50 * GST_MSECOND);
        if (sample) {
            append_sample(sample, &data, &n, &cap);
            gst_sample_unref(sample);
            continue;
        }
        if (gst_app_sink_is_eos(appsink)) {
            ok = TRUE;
            break;
        }
        GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
        if (msg) {
            if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
                if (g_atomic_int_get(&st.no_more_pads) && !g_atomic_int_get(&st.audio_linked))
                    g_set_error(error, AUDIO_ERROR, 2, "'%s' has no audio stream",
                                location);
                else
                    set_bus_error(msg, location, error);
                gst_message_unref(msg);
                break;
            }
            gst_message_unref(msg);
            ok = TRUE; /* EOS on the bus: every sink is done */
            /* drain whatever the appsink still holds */
            while ((sample = gst_app_sink_try_pull_sample(appsink, 0))) {
                append_sample(sample, &data, &n, &cap);
                gst_sample_unref(sample);
            }
            break;
        }
        if (g_atomic_int_get(&st.no_more_pads) && !g_atomic_int_get(&st.audio_linked)) {
            g_set_error(error, AUDIO_ERROR, 2, "'%s' has no audio stream", location);
            break;
        }
    }

out:
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(pipeline);
    g_free(uri);
    if (!ok) {
        g_free(data);
        return NULL;
    }
    *n_samples = n;
    if (!data)
        data = g_new0(float, 1); /* an empty file is not an error */
    return data;
}
