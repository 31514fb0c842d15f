/* The element in real media pipelines (issue 49): any raw audio in, passed on untouched
 * and heard as `audioconvert ! audioresample` would make it; timestamp jitter taken as
 * GStreamer's audio elements take it; the transcriber conventions (the
 * rstranscribe/final-transcript event, warnings for what an English-only model cannot
 * do, an error naming caps it cannot read). */
#include "gstwhisper.h"
#include "gstwhisperpriv.h" /* the queue's held samples (stuck_timestamps) */
#include "whisper_check.h"

#include <math.h>
#include <string.h>

#include <gst/audio/audio.h>

#define NS(n) gst_util_uint64_scale_int((n), GST_SECOND, 16000)

/* ------------------------------------------------------------------ any raw audio */

typedef struct {
    WhTextSink text;     /* the text sink's buffers */
    GByteArray *audio;   /* the audio sink's bytes (its streaming thread's until EOS) */
    GArray *audio_pts;   /* GstClockTime, one per audio buffer */
    GstCaps *audio_caps; /* the audio sink's caps */
} Sinks;

static void on_audio(GstElement *sink, GstBuffer *buf, GstPad *pad, Sinks *s)
{
    (void)sink;
    GstMapInfo map;
    gst_buffer_map(buf, &map, GST_MAP_READ);
    g_byte_array_append(s->audio, map.data, (guint)map.size);
    GstClockTime pts = GST_BUFFER_PTS(buf);
    g_array_append_val(s->audio_pts, pts);
    if (!s->audio_caps)
        s->audio_caps = gst_pad_get_current_caps(pad);
    gst_buffer_unmap(buf, &map);
}

/* Runs `appsrc name=src caps=CAPS ! <middle> ! ...` where middle ends in an element
 * named w (the filter: its src to fakesink `audio`, its text_src to fakesink `text`),
 * pushing `n_bufs` buffers of `bytes` bytes each from data with PTS i * dur. */
static Sinks *run_input(const gchar *caps, const gchar *middle, const guint8 *data,
                        guint n_bufs, gsize bytes, GstClockTime dur,
                        gboolean (*meta)(GstBuffer *, gpointer), gpointer meta_data)
{
    gchar *desc = g_strdup_printf("appsrc name=src format=time caps=\"%s\" ! %s "
        "! fakesink name=audio signal-handoffs=true sync=false "
        "w.text_src ! fakesink name=text signal-handoffs=true sync=false", caps, middle);
    GError *err = NULL;
    GstElement *p = gst_parse_launch(desc, &err);
    fail_unless(p != NULL, "%s: %s", desc, err ? err->message : "");
    g_free(desc);
    GstElement *w = gst_bin_get_by_name(GST_BIN(p), "w");
    wh_tune(w);
    gst_object_unref(w);
    Sinks *s = g_new0(Sinks, 1);
    s->audio = g_byte_array_new();
    s->audio_pts = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    GstElement *text = gst_bin_get_by_name(GST_BIN(p), "text");
    GstElement *audio = gst_bin_get_by_name(GST_BIN(p), "audio");
    wh_text_sink_attach(&s->text, text);
    g_signal_connect(audio, "handoff", G_CALLBACK(on_audio), s);
    GstElement *src = gst_bin_get_by_name(GST_BIN(p), "src");
    fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    for (guint i = 0; i < n_bufs; i++) {
        GstBuffer *buf = gst_buffer_new_allocate(NULL, bytes, NULL);
        gst_buffer_fill(buf, 0, data + (gsize)i * bytes, bytes);
        GST_BUFFER_PTS(buf) = i * dur;
        GST_BUFFER_DURATION(buf) = dur;
        if (meta)
            meta(buf, meta_data);
        GstFlowReturn ret;
        g_signal_emit_by_name(src, "push-buffer", buf, &ret);
        gst_buffer_unref(buf);
        fail_unless_equals_int(ret, GST_FLOW_OK);
    }
    GstFlowReturn ret;
    g_signal_emit_by_name(src, "end-of-stream", &ret);
    GstBus *bus = gst_element_get_bus(p);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 300 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless(m != NULL, "no EOS");
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        GError *e = NULL;
        gchar *dbg = NULL;
        gst_message_parse_error(m, &e, &dbg);
        fail("error: %s (%s)", e->message, dbg);
    }
    gst_message_unref(m);
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(src);
    gst_object_unref(text);
    gst_object_unref(audio);
    gst_object_unref(p);
    return s;
}

static void sinks_free(Sinks *s)
{
    wh_text_sink_clear(&s->text);
    g_byte_array_unref(s->audio);
    g_array_unref(s->audio_pts);
    if (s->audio_caps)
        gst_caps_unref(s->audio_caps);
    g_free(s);
}

/* `caps` in, straight into the filter and through audioconvert ! audioresample to F32LE
 * 16-kHz mono (the quality settings at their defaults on both): the same bytes, caps
 * and timestamps come out of the filter as went in, and the text is that pipeline's. */
static void check_any_audio(const gchar *caps, const guint8 *data, guint n_bufs, gsize bytes,
                            GstClockTime dur, gboolean (*meta)(GstBuffer *, gpointer),
                            gpointer meta_data)
{
    gchar *w = g_strdup_printf("whisperkv name=w model=%s threads=1", test_model);
    gchar *conv = g_strdup_printf("audioconvert ! audioresample ! "
                                  "audio/x-raw,format=F32LE,rate=16000,channels=1 ! %s", w);
    Sinks *direct = run_input(caps, w, data, n_bufs, bytes, dur, meta, meta_data);
    Sinks *ref = run_input(caps, conv, data, n_bufs, bytes, dur, meta, meta_data);
    /* audio through untouched */
    fail_unless_equals_int(direct->audio->len, (guint)(n_bufs * bytes));
    fail_unless(memcmp(direct->audio->data, data, n_bufs * bytes) == 0,
                "%s: the audio out is not the audio in", caps);
    GstCaps *want = gst_caps_from_string(caps);
    fail_unless(direct->audio_caps && gst_caps_is_equal(direct->audio_caps, want),
                "%s: caps out %" GST_PTR_FORMAT, caps, direct->audio_caps);
    gst_caps_unref(want);
    fail_unless_equals_int(direct->audio_pts->len, n_bufs);
    for (guint i = 0; i < n_bufs; i++)
        fail_unless(g_array_index(direct->audio_pts, GstClockTime, i) == i * dur);
    /* heard as the converting pipeline hears it */
    GST_INFO("%s: %u segments", caps, direct->text.texts->len);
    fail_unless(ref->text.texts->len > 0, "%s: no text to compare", caps);
    assert_same_segments(direct->text.texts, ref->text.texts, caps);
    sinks_free(direct);
    sinks_free(ref);
    g_free(conv);
    g_free(w);
}

/* A film's audio: 48-kHz stereo F32, 7 s in 0.1-s buffers. */
GST_START_TEST(test_stereo_48k_passes_untouched)
{
    const gsize frames = 48000 * 7, per = 4800;
    float *l = synth_audio(frames, 61), *r = synth_audio(frames, 62);
    float *lr = g_new(float, frames * 2);
    for (gsize i = 0; i < frames; i++) {
        lr[2 * i] = l[i];
        lr[2 * i + 1] = 0.5f * r[i];
    }
    check_any_audio("audio/x-raw, format=(string)F32LE, rate=(int)48000, channels=(int)2, "
                    "channel-mask=(bitmask)0x3, layout=(string)interleaved",
                    (const guint8 *)lr, frames / per, per * 8, GST_SECOND / 10, NULL, NULL);
    g_free(lr);
    g_free(l);
    g_free(r);
}
GST_END_TEST

static gboolean add_planar_meta(GstBuffer *buf, gpointer data)
{
    GstAudioInfo *info = data;
    gsize frames = gst_buffer_get_size(buf) / GST_AUDIO_INFO_BPF(info);
    return gst_buffer_add_audio_meta(buf, info, frames, NULL) != NULL;
}

/* S16 at 22.05 kHz, two channels one after the other (non-interleaved). */
GST_START_TEST(test_planar_s16_22k)
{
    const gsize frames = 22050 * 5, per = 2205;
    float *a = synth_audio(frames, 63), *b = synth_audio(frames, 64);
    gint16 *pl = g_new(gint16, frames * 2);
    for (gsize k = 0; k < frames / per; k++) /* each buffer: its L samples, then its R */
        for (gsize i = 0; i < per; i++) {
            pl[k * per * 2 + i] = (gint16)lrintf(a[k * per + i] * 32767.0f);
            pl[k * per * 2 + per + i] = (gint16)lrintf(b[k * per + i] * 16000.0f);
        }
    const gchar *caps = "audio/x-raw, format=(string)S16LE, rate=(int)22050, channels=(int)2, "
                        "channel-mask=(bitmask)0x3, layout=(string)non-interleaved";
    GstAudioInfo info;
    GstCaps *c = gst_caps_from_string(caps);
    fail_unless(gst_audio_info_from_caps(&info, c));
    gst_caps_unref(c);
    check_any_audio(caps, (const guint8 *)pl, frames / per, per * 4, GST_SECOND / 10,
                    add_planar_meta, &info);
    g_free(pl);
    g_free(a);
    g_free(b);
}
GST_END_TEST

#define STEREO_48K "audio/x-raw, format=F32LE, rate=48000, channels=2, " \
                   "channel-mask=(bitmask)0x3, layout=interleaved"

/* The 16-kHz samples the element's input (gstwhisperinput.c) makes of lr, 48-kHz
 * stereo in 0.1-s buffers, drained at the end; before buffer `again` (if < the count)
 * the caps are set again to `again_caps`, their tail (what the old resampler owed) in
 * *tail_n. */
static GArray *converted(const float *lr, gsize frames, guint again, const gchar *again_caps,
                         gsize *tail_n)
{
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    GstWhisper *self = (GstWhisper *)e;
    GArray *out = g_array_new(FALSE, FALSE, sizeof(float));
    GstWhisperSamples s;
    GstCaps *c = gst_caps_from_string(STEREO_48K);
    fail_unless(gst_whisper_input_set_caps(self, c, &s) && s.n == 0);
    gst_caps_unref(c);
    for (gsize off = 0, i = 0; off < frames; off += 4800, i++) {
        if (i == again) {
            c = gst_caps_from_string(again_caps);
            fail_unless(gst_whisper_input_set_caps(self, c, &s));
            gst_caps_unref(c);
            *tail_n = s.n;
            g_array_append_vals(out, s.data, (guint)s.n);
        }
        GstBuffer *buf = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY,
            (gpointer)(lr + 2 * off), 4800 * 8, 0, 4800 * 8, NULL, NULL);
        fail_unless(gst_whisper_input_map(self, buf, &s));
        g_array_append_vals(out, s.data, (guint)s.n);
        gst_whisper_input_unmap(buf, &s);
        gst_buffer_unref(buf);
    }
    fail_unless(gst_whisper_input_drain(self, &s));
    g_array_append_vals(out, s.data, (guint)s.n);
    gst_whisper_input_clear(self);
    gst_object_unref(e);
    return out;
}

/* The same caps again mid-stream (a renegotiation that ends where it began) leave the
 * resampler alone: nothing drained, the very samples of one CAPS event.  A real change
 * of format drains what the old resampler owed. */
GST_START_TEST(test_same_caps_again)
{
    const gsize frames = 48000 * 7;
    float *l = synth_audio(frames, 61), *lr = g_new(float, frames * 2);
    for (gsize i = 0; i < frames; i++)
        lr[2 * i] = lr[2 * i + 1] = l[i];
    gsize tail = 1;
    GArray *once = converted(lr, frames, G_MAXUINT, NULL, &tail);
    GArray *twice = converted(lr, frames, 35, STEREO_48K, &tail);
    /* 7 s in: 7 s at 16 kHz out, once drained at the end */
    fail_unless_equals_int(once->len, 16000 * 7);
    fail_unless_equals_int(tail, 0);
    fail_unless(twice->len == once->len &&
                memcmp(twice->data, once->data, once->len * sizeof(float)) == 0,
                "the same caps again changed the samples (%u of them)", twice->len);
    GArray *other = converted(lr, frames, 35, "audio/x-raw, format=F32LE, rate=44100, "
                              "channels=2, channel-mask=(bitmask)0x3, layout=interleaved",
                              &tail);
    fail_unless(tail > 0, "a new rate: nothing drained from the old resampler");
    g_array_unref(once);
    g_array_unref(twice);
    g_array_unref(other);
    g_free(lr);
    g_free(l);
}
GST_END_TEST

/* ------------------------------------------------------------------ timestamps */

/* Pushes pcm[0..n) in 0.1-s buffers from t0, each PTS moved by up to +-jitter (a fixed
 * pseudo-random draw); buffer `outlier` (if < n / 1600) 200 ms late instead. */
static void push_jittered(WhisperHarness *wh, const float *pcm, gsize n, GstClockTime t0,
                          GstClockTime jitter, guint outlier, guint32 seed)
{
    GRand *r = g_rand_new_with_seed(seed);
    for (gsize off = 0, i = 0; off < n; off += 1600, i++) {
        gsize k = MIN((gsize)1600, n - off);
        GstBuffer *buf = gst_buffer_new_allocate(NULL, k * 4, NULL);
        gst_buffer_fill(buf, 0, pcm + off, k * 4);
        gint64 d = (gint64)g_rand_double_range(r, -(double)jitter, (double)jitter);
        if (i == outlier)
            d = 200 * GST_MSECOND;
        if (i == 0) /* the stretch is timed from its first buffer */
            d = 0;
        GstClockTime pts = t0 + NS(off);
        GST_BUFFER_PTS(buf) = d < 0 && (GstClockTime)-d > pts ? 0 : (GstClockTime)(pts + d);
        GST_BUFFER_DURATION(buf) = NS(k);
        fail_unless_equals_int(gst_harness_push(wh->h, buf), GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(wh->h));
    }
    g_rand_free(r);
}

/* Capture devices and network sources jitter by tens of milliseconds; GStreamer's audio
 * elements take up to 40 ms and wait a second before they believe a jump.  The text of
 * jittered timestamps (and one buffer 200 ms off) is the text of exact ones: one
 * stretch, timed by its samples. */
static void check_jitter(GstClockTime jitter, guint outlier)
{
    const gsize n = 16000 * 12 + 700;
    const GstClockTime t0 = 3 * GST_SECOND;
    float *pcm = synth_audio(n, 65);
    GThread *core = core_segments_async(test_model, pcm, n, t0, 0.6f);
    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, NULL);
    push_jittered(&wh, pcm, n, t0, jitter, outlier, 66);
    GPtrArray *got = wh_finish(&wh);
    GPtrArray *want = g_thread_join(core);
    gchar *what = g_strdup_printf("+-%" G_GUINT64_FORMAT " ms jitter%s",
                                  jitter / GST_MSECOND, outlier < n / 1600 ? ", an outlier" : "");
    fail_unless(want->len > 0);
    assert_same_segments(got, want, what);
    g_free(what);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}

GST_START_TEST(test_jitter_15ms)
{
    check_jitter(15 * GST_MSECOND, G_MAXUINT);
}
GST_END_TEST

GST_START_TEST(test_jitter_30ms_and_outlier)
{
    check_jitter(30 * GST_MSECOND, 37);
}
GST_END_TEST

/* Timestamps that stop advancing (a broken source: every buffer with the first one's
 * PTS) never prove a jump: the samples decide, one stretch, the core's text; and the
 * audio held back while they are off is let go after a second of it, never held
 * without bound (checked after every buffer: at most 1 s and one buffer). */
GST_START_TEST(test_stuck_timestamps)
{
    const gsize n = 16000 * 12;
    const GstClockTime t0 = 2 * GST_SECOND;
    float *pcm = synth_audio(n, 69);
    GThread *core = core_segments_async(test_model, pcm, n, t0, 0.6f);
    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, NULL);
    GstWhisper *self = (GstWhisper *)wh.element;
    gsize most = 0;
    for (gsize off = 0; off < n; off += 1600) {
        GstBuffer *buf = gst_buffer_new_allocate(NULL, 1600 * 4, NULL);
        gst_buffer_fill(buf, 0, pcm + off, 1600 * 4);
        GST_BUFFER_PTS(buf) = t0;
        GST_BUFFER_DURATION(buf) = NS(1600);
        fail_unless_equals_int(gst_harness_push(wh.h, buf), GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(wh.h));
        g_mutex_lock(&self->q.lock);
        most = MAX(most, self->q.pend_n);
        g_mutex_unlock(&self->q.lock);
    }
    GST_INFO("at most %" G_GSIZE_FORMAT " samples held", most);
    fail_unless(most <= 16000 + 1600, "%" G_GSIZE_FORMAT " samples held back", most);
    GPtrArray *got = wh_finish(&wh);
    GPtrArray *want = g_thread_join(core);
    fail_unless(want->len > 0);
    assert_same_segments(got, want, "stuck timestamps");
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* ------------------------------------------------------------------ conventions */

typedef struct {
    GString *seq; /* B: a text buffer, M: a final-transcript event */
} Seq;

static GstPadProbeReturn seq_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    Seq *s = data;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        g_string_append_c(s->seq, 'B');
    } else {
        GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
        const GstStructure *st = gst_event_get_structure(ev);
        if (GST_EVENT_TYPE(ev) == GST_EVENT_CUSTOM_DOWNSTREAM && st &&
            gst_structure_has_name(st, "rstranscribe/final-transcript"))
            g_string_append_c(s->seq, 'M');
    }
    return GST_PAD_PROBE_OK;
}

/* After each final segment's text (its buffer, or its word buffers) the
 * rstranscribe/final-transcript event goes downstream, as from gst-plugins-rs's
 * transcribers (textaccumulate drains on it): offline, segments and words. */
GST_START_TEST(test_final_transcript_events)
{
    const gsize n = 16000 * 9;
    float *pcm = synth_audio(n, 67);
    for (int words = 0; words < 2; words++) {
        WhisperHarness wh;
        wh_setup(&wh, test_model, FALSE, "word-timestamps", words, "text-unit",
                 words ? GST_WHISPER_TEXT_UNIT_WORD : GST_WHISPER_TEXT_UNIT_SEGMENT, NULL);
        GstBus *bus = gst_bus_new();
        gst_element_set_bus(wh.element, bus);
        Seq s = {g_string_new(NULL)};
        GstPad *tp = gst_element_get_static_pad(wh.element, "text_src");
        gst_pad_add_probe(tp, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                          seq_probe, &s, NULL);
        wh_push_pcm(&wh, pcm, n, 1600, 0, FALSE, FALSE);
        GPtrArray *got = wh_finish(&wh);
        /* the final segments, as their whisper-segment messages say */
        guint segments = 0;
        GstMessage *m;
        while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT))) {
            const GstStructure *st = gst_message_get_structure(m);
            gboolean final = FALSE;
            if (gst_structure_has_name(st, "whisper-segment") &&
                gst_structure_get_boolean(st, "final", &final) && final)
                segments++;
            gst_message_unref(m);
        }
        GST_INFO("%s: %u segments, %s", words ? "words" : "segments", segments, s.seq->str);
        fail_unless(segments >= 2, "the check needs two segments, there are %u", segments);
        /* one event per segment whose text went out (a segment may have none: the
         * random model's segments past the audio's end are cut), each after at least
         * one buffer */
        guint marks = 0;
        for (const gchar *c = s.seq->str; *c; c++)
            marks += *c == 'M';
        fail_unless(marks >= 2 && marks <= segments, "%u events for %u segments: %s", marks,
                    segments, s.seq->str);
        fail_unless(s.seq->str[s.seq->len - 1] == 'M', "the last text has no event after "
                    "it: %s", s.seq->str);
        fail_if(strstr(s.seq->str, "MM") || s.seq->str[0] == 'M', "an event without text "
                "before it: %s", s.seq->str);
        if (!words) {
            fail_unless_equals_int(marks, got->len);
            for (gsize i = 0; i < s.seq->len; i += 2)
                fail_unless(s.seq->str[i] == 'B' && s.seq->str[i + 1] == 'M',
                            "segments: not one event after each buffer: %s", s.seq->str);
        }
        g_ptr_array_unref(got);
        gst_object_unref(tp);
        gst_element_set_bus(wh.element, NULL);
        gst_object_unref(bus);
        wh_teardown(&wh);
        g_string_free(s.seq, TRUE);
    }
    g_free(pcm);
}
GST_END_TEST

/* The first WARNING (or ERROR) message on `bus` whose text has `needle`, else NULL
 * (g_free). */
static gchar *find_message(GstBus *bus, GstMessageType type, const gchar *needle)
{
    GstMessage *m;
    gchar *found = NULL;
    while (!found && (m = gst_bus_pop_filtered(bus, type))) {
        GError *e = NULL;
        gchar *dbg = NULL;
        if (type == GST_MESSAGE_WARNING)
            gst_message_parse_warning(m, &e, &dbg);
        else
            gst_message_parse_error(m, &e, &dbg);
        gchar *all = g_strdup_printf("%s | %s", e->message, dbg ? dbg : "");
        if (strstr(all, needle))
            found = all;
        else
            g_free(all);
        g_error_free(e);
        g_free(dbg);
        gst_message_unref(m);
    }
    return found;
}

/* READY -> PAUSED of a filter on `model` with `prop` = value: the messages on its bus. */
static GstBus *start_with(const gchar *model, const gchar *prop, const GValue *value)
{
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    g_object_set(e, "model", model, "threads", 1, NULL);
    g_object_set_property(G_OBJECT(e), prop, value);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    fail_unless(gst_element_set_state(e, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
    fail_unless(gst_element_set_state(e, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    gst_element_set_bus(e, NULL);
    gst_object_unref(e);
    return bus;
}

/* Asked to translate, or to hear German, an English-only model says it cannot (as the
 * CLI does) instead of staying silent; a multilingual model says nothing of it. */
GST_START_TEST(test_english_only_warns)
{
    const gchar *multi = g_getenv("WHISPER_TEST_MODEL_MULTI");
    fail_unless(multi != NULL, "WHISPER_TEST_MODEL_MULTI is not set");
    GValue de = G_VALUE_INIT, yes = G_VALUE_INIT;
    g_value_init(&de, G_TYPE_STRING);
    g_value_set_string(&de, "de");
    g_value_init(&yes, G_TYPE_BOOLEAN);
    g_value_set_boolean(&yes, TRUE);
    struct {
        const gchar *model, *prop;
        const GValue *v;
        gboolean warns;
        const gchar *needle;
    } cases[] = {
        {test_model, "language", &de, TRUE, "transcribes English, not 'de'"},
        {test_model, "language-code", &de, TRUE, "transcribes English, not 'de'"},
        {test_model, "translate", &yes, TRUE, "cannot translate"},
        {multi, "language", &de, FALSE, "English-only"},
        {multi, "translate", &yes, FALSE, "English-only"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        GstBus *bus = start_with(cases[i].model, cases[i].prop, cases[i].v);
        gchar *m = find_message(bus, GST_MESSAGE_WARNING, cases[i].needle);
        if (cases[i].warns)
            fail_unless(m != NULL, "%s on %s: no warning with '%s'", cases[i].prop,
                        cases[i].model, cases[i].needle);
        else
            fail_if(m != NULL, "%s on the multilingual model: %s", cases[i].prop, m);
        GST_INFO("%s: %s", cases[i].prop, m ? m : "(none)");
        g_free(m);
        gst_object_unref(bus);
    }
    g_value_unset(&de);
    g_value_unset(&yes);
}
GST_END_TEST

/* Caps the sink's template admits but that are not audio it can read (no layout, as
 * hand-written caps often lack): an ERROR that names them and what it takes, not a bare
 * not-negotiated; on both elements. */
GST_START_TEST(test_caps_error_names_caps)
{
    const gchar *names[] = {"whisperkv", "whisperkvtranscriber"};
    for (guint k = 0; k < G_N_ELEMENTS(names); k++) {
        GstElement *e = gst_element_factory_make(names[k], NULL);
        g_object_set(e, "model", test_model, "threads", 1, NULL);
        GstHarness *h = gst_harness_new_with_element(e, "sink", "src");
        GstBus *bus = gst_bus_new();
        gst_element_set_bus(e, bus);
        gst_harness_play(h);
        gst_harness_set_src_caps_str(h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                        "layout=interleaved");
        GstCaps *bad = gst_caps_from_string("audio/x-raw, format=F32LE, rate=16000, channels=1");
        gst_pad_push_event(h->srcpad, gst_event_new_caps(bad));
        gst_caps_unref(bad);
        GstBuffer *buf = gst_buffer_new_allocate(NULL, 3200, NULL);
        gst_buffer_memset(buf, 0, 0, 3200);
        fail_unless_equals_int(gst_harness_push(h, buf), GST_FLOW_NOT_NEGOTIATED);
        gchar *m = find_message(bus, GST_MESSAGE_ERROR,
                                "offered: audio/x-raw, format=(string)F32LE, rate=(int)16000, "
                                "channels=(int)1;");
        fail_unless(m != NULL, "%s: no ERROR naming the caps offered", names[k]);
        GST_INFO("%s: %s", names[k], m);
        fail_unless(strstr(m, "takes: audio/x-raw") != NULL, "%s: the ERROR does not say "
                    "what it takes: %s", names[k], m);
        g_free(m);
        gst_element_set_bus(e, NULL);
        gst_object_unref(bus);
        gst_harness_teardown(h);
        gst_object_unref(e);
    }
}
GST_END_TEST

static Suite *media_suite(void)
{
    Suite *s = suite_create("whisper-media");
    TCase *tc = tcase_create("media");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_stereo_48k_passes_untouched);
    tcase_add_test(tc, test_planar_s16_22k);
    tcase_add_test(tc, test_same_caps_again);
    tcase_add_test(tc, test_jitter_15ms);
    tcase_add_test(tc, test_jitter_30ms_and_outlier);
    tcase_add_test(tc, test_stuck_timestamps);
    tcase_add_test(tc, test_final_transcript_events);
    tcase_add_test(tc, test_english_only_warns);
    tcase_add_test(tc, test_caps_error_names_caps);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 2;
    return wh_run_suite(media_suite(), "whisper-media");
}
