/* The whisper element (gst-plugin/) with a generated micro model and synthetic audio:
 * passthrough, offline text == the core's window-normalized long form, EOS drain,
 * DISCONT and timestamp gaps, flushing mid-window, messages and tags, model errors,
 * state cycles, model sharing, negotiation with textoverlay and matroskamux, live. */
#include "gstwhisper.h"
#include "gstwhispermodel.h"
#include "whisper_check.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#define F32_CAPS "audio/x-raw, format=F32LE, rate=16000, channels=1, layout=interleaved"

/* s16 round trip of the samples: what the element sees when fed S16LE */
static float *quantize(const float *pcm, gsize n)
{
    float *q = g_new(float, n);
    for (gsize i = 0; i < n; i++)
        q[i] = (float)(gint16)CLAMP(lrintf(pcm[i] * 32768.0f), -32768, 32767) / 32768.0f;
    return q;
}

static void check_offline(gsize n, GstClockTime t0, gboolean s16, gsize chunk, guint32 seed)
{
    float *pcm = synth_audio(n, seed);
    if (s16) {
        float *q = quantize(pcm, n);
        g_free(pcm);
        pcm = q;
    }
    GThread *core = core_segments_async(test_model, pcm, n, t0, 0.6f);
    WhisperHarness wh;
    wh_setup(&wh, test_model, s16, NULL);
    wh_push_pcm(&wh, pcm, n, chunk, t0, s16, FALSE);
    GPtrArray *got = wh_finish(&wh);
    GPtrArray *want = g_thread_join(core);
    gchar *what = g_strdup_printf("%.1f s at %" GST_TIME_FORMAT " %s", n / 16000.0,
                                  GST_TIME_ARGS(t0), s16 ? "S16LE" : "F32LE");
    GST_INFO("%s: %u segments", what, got->len);
    fail_unless(want->len > 0, "%s: the core gives no text (pick other audio)", what);
    assert_same_segments(got, want, what);
    guint64 windows = 0;
    g_object_get(wh.element, "windows", &windows, NULL);
    fail_unless(windows > 0);
    g_free(what);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}

GST_START_TEST(test_offline_f32)
{
    /* two full windows and a partial one, starting at 10 s */
    check_offline(16000 * 33, 10 * GST_SECOND, FALSE, 1600, 1);
}
GST_END_TEST

GST_START_TEST(test_offline_s16)
{
    check_offline(16000 * 8 + 123, 0, TRUE, 4096, 2);
}
GST_END_TEST

GST_START_TEST(test_eos_drains_short)
{
    /* shorter than a window: all the text comes at EOS */
    check_offline(16000 * 2 + 77, 2 * GST_SECOND, FALSE, 999, 3);
}
GST_END_TEST

GST_START_TEST(test_passthrough)
{
    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, NULL);
    float *pcm = synth_audio(16000, 4);
    /* wh_push_pcm checks pointer identity buffer by buffer */
    wh_push_pcm(&wh, pcm, 16000, 160, 0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    g_ptr_array_unref(got);
    /* the src caps are the sink's */
    GstCaps *caps = gst_pad_get_current_caps(wh.h->sinkpad);
    GstCaps *want = gst_caps_from_string(F32_CAPS);
    fail_unless(gst_caps_is_equal(caps, want));
    gst_caps_unref(want);
    gst_caps_unref(caps);
    caps = gst_pad_get_current_caps(wh.text->sinkpad);
    fail_unless(caps && gst_structure_has_name(gst_caps_get_structure(caps, 0), "text/x-raw"));
    gst_caps_unref(caps);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* A DISCONT (or a jump in the timestamps) closes the window: the text is the core's on
 * each stretch separately, and nothing spans the hole. */
static void check_split(gboolean flag, GstClockTime t1)
{
    gsize na = 16000 * 2 + 500, nb = 16000 * 2;
    float *a = synth_audio(na, 5), *b = synth_audio(nb, 6);
    GThread *ca = core_segments_async(test_model, a, na, 0, 0.6f);
    GPtrArray *wb = core_segments(test_model, b, nb, t1, 0.6f);
    GPtrArray *want = g_thread_join(ca);
    /* the first stretch's text stops at the hole */
    GstClockTime end_a = gst_util_uint64_scale_int(na, GST_SECOND, 16000);
    for (guint i = 0; i < want->len;) {
        TextSeg *s = g_ptr_array_index(want, i);
        if (s->pts >= end_a) {
            g_ptr_array_remove_index(want, i);
            continue;
        }
        s->duration = MIN(s->duration, end_a - s->pts);
        i++;
    }
    for (guint i = 0; i < wb->len; i++) {
        TextSeg *s = g_ptr_array_index(wb, i);
        textseg_add(want, s->pts, s->duration, s->text);
    }
    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, NULL);
    wh_push_pcm(&wh, a, na, 1600, 0, FALSE, FALSE);
    wh_push_pcm(&wh, b, nb, 1600, t1, FALSE, flag);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, flag ? "DISCONT" : "timestamp gap");
    for (guint i = 0; i < got->len; i++) {
        TextSeg *s = g_ptr_array_index(got, i);
        fail_if(s->pts < end_a && s->pts + s->duration > t1, "a segment spans the hole");
    }
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    g_ptr_array_unref(wb);
    wh_teardown(&wh);
    g_free(a);
    g_free(b);
}

GST_START_TEST(test_discont)
{
    /* DISCONT flag with timestamps that go on without a hole */
    check_split(TRUE, gst_util_uint64_scale_int(16000 * 2 + 500, GST_SECOND, 16000));
}
GST_END_TEST

GST_START_TEST(test_timestamp_gap)
{
    check_split(FALSE, 20 * GST_SECOND);
}
GST_END_TEST

/* A real hole of 1 s without DISCONT: still a gap (the timestamps stay off for longer
 * than the element waits before it believes a jump), its text timed after it. */
GST_START_TEST(test_timestamp_gap_1s)
{
    check_split(FALSE, gst_util_uint64_scale_int(16000 * 2 + 500, GST_SECOND, 16000) +
                           GST_SECOND);
}
GST_END_TEST

/* Flushing mid-window: the audio before the flush leaves no text; after it the new
 * segment's audio is transcribed from scratch. */
GST_START_TEST(test_flush_mid_window)
{
    gsize na = 16000 * 12, nb = 16000 * 3;
    float *a = synth_audio(na, 7), *b = synth_audio(nb, 8);
    GstClockTime t1 = 100 * GST_SECOND;
    GThread *core = core_segments_async(test_model, b, nb, t1, 0.6f);
    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, NULL);
    wh_push_pcm(&wh, a, na, 1600, 0, FALSE, FALSE);
    fail_unless(gst_harness_push_event(wh.h, gst_event_new_flush_start()));
    fail_unless(gst_harness_push_event(wh.h, gst_event_new_flush_stop(TRUE)));
    GstSegment seg;
    gst_segment_init(&seg, GST_FORMAT_TIME);
    seg.start = seg.time = t1;
    fail_unless(gst_harness_push_event(wh.h, gst_event_new_segment(&seg)));
    /* drop what text_src got before the flush */
    GstBuffer *old;
    while ((old = gst_harness_try_pull(wh.text)))
        gst_buffer_unref(old);
    GstEvent *ev;
    while ((ev = gst_harness_try_pull_event(wh.text)))
        gst_event_unref(ev);
    wh_push_pcm(&wh, b, nb, 1600, t1, FALSE, TRUE);
    GPtrArray *got = wh_finish(&wh);
    GPtrArray *want = g_thread_join(core);
    assert_same_segments(got, want, "after flush");
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(a);
    g_free(b);
}
GST_END_TEST

/* The decoding options as properties (issue 4): language=auto on a multilingual
 * model, beam search, no fallback; the text equals the core's with the same options,
 * and the messages carry the detected language. */
GST_START_TEST(test_decoding_properties)
{
    const gchar *multi = g_getenv("WHISPER_TEST_MODEL_MULTI");
    fail_unless(multi != NULL, "WHISPER_TEST_MODEL_MULTI is not set");
    gsize n = 16000 * 6;
    float *pcm = synth_audio(n, 21);
    wkv_options o;
    wkv_options_default(&o);
    o.language = "auto";
    o.beam_size = 2;
    o.temperature_increment = 0.0f;
    GPtrArray *want = core_segments_opts(multi, pcm, n, 0, &o);
    WhisperHarness wh;
    wh_setup(&wh, multi, FALSE, "language", "auto", "beam-size", 2, "temperature-fallback",
             FALSE, NULL);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(wh.element, bus);
    wh_push_pcm(&wh, pcm, n, 1600, 0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "language=auto beam-size=2");
    fail_unless(want->len > 0);
    /* the language the core detects on the same frames */
    wkv_model *m = wkv_model_load(multi, NULL);
    wkv_context *ctx = wkv_context_new(m, 1, NULL);
    wkv_mel *mel = wkv_mel_compute(m, pcm, n, 1, NULL);
    float *win = g_new(float, (gsize)wkv_model_hparams(m)->n_mels * WKV_N_FRAMES);
    wkv_mel_window(mel, 0, WKV_N_FRAMES, WKV_MEL_WINDOW, win);
    const char *code = wkv_lang_code(m, wkv_detect_language(ctx, win, NULL, NULL));
    fail_unless(code != NULL);
    guint n_msg = 0;
    GstMessage *msg;
    while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT))) {
        const GstStructure *s = gst_message_get_structure(msg);
        if (gst_structure_has_name(s, "whisper-segment")) {
            fail_unless_equals_string(gst_structure_get_string(s, "language"), code);
            n_msg++;
        }
        gst_message_unref(msg);
    }
    fail_unless(n_msg == want->len, "%u messages for %u segments", n_msg, want->len);
    g_free(win);
    wkv_mel_free(mel);
    wkv_context_free(ctx);
    wkv_model_free(m);
    gst_element_set_bus(wh.element, NULL);
    gst_object_unref(bus);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* Bus messages and tags of the final segments. */
GST_START_TEST(test_messages_and_tags)
{
    gsize n = 16000 * 2;
    float *pcm = synth_audio(n, 9);
    GPtrArray *want = core_segments(test_model, pcm, n, 0, 0.6f);
    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, NULL);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(wh.element, bus);
    wh_push_pcm(&wh, pcm, n, 1600, 0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "messages run");
    guint n_msg = 0;
    GstMessage *msg;
    while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT))) {
        const GstStructure *s = gst_message_get_structure(msg);
        if (gst_structure_has_name(s, "whisper-segment")) {
            fail_unless(n_msg < want->len);
            TextSeg *w = g_ptr_array_index(want, n_msg);
            GstClockTime start, end;
            gboolean final;
            fail_unless(gst_structure_get_clock_time(s, "start", &start));
            fail_unless(gst_structure_get_clock_time(s, "end", &end));
            fail_unless(gst_structure_get_boolean(s, "final", &final) && final);
            fail_unless_equals_string(gst_structure_get_string(s, "text"), w->text);
            fail_unless_equals_string(gst_structure_get_string(s, "language"), "en");
            fail_unless(gst_structure_has_field_typed(s, "avg-logprob", G_TYPE_DOUBLE));
            fail_unless(gst_structure_has_field_typed(s, "no-speech-prob", G_TYPE_DOUBLE));
            fail_unless(start == w->pts && end == w->pts + w->duration);
            n_msg++;
        }
        gst_message_unref(msg);
    }
    fail_unless_equals_int(n_msg, want->len);
    /* a transcript tag on text_src before each text buffer, with its text */
    fail_unless(want->len > 0, "the test audio gave no segment to check");
    fail_unless_equals_int(wh.tags->len, want->len);
    for (guint i = 0; i < want->len; i++)
        fail_unless_equals_string(g_ptr_array_index(wh.tags, i),
                                  ((TextSeg *)g_ptr_array_index(want, i))->text);
    gst_element_set_bus(wh.element, NULL);
    gst_object_unref(bus);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* ------------------------------------------------------------------ pipelines */

/* Offline, the text of a stretch of audio comes once its 30-s window is complete (or at
 * EOS): anything that waits for the text (an overlay, a muxer, a prerolling sink)
 * needs the audio to flow meanwhile. */
#define UNLIMITED_QUEUE "queue max-size-time=0 max-size-bytes=0 max-size-buffers=0"

static void count_handoff(GstElement *sink, GstBuffer *buf, GstPad *pad, guint *n)
{
    (void)sink;
    (void)pad;
    if (gst_buffer_get_size(buf) > 0)
        (*n)++;
}

/* What srtenc would write from the text pad: a cue per buffer, start PTS, end PTS +
 * duration.  Counts the cues, and the ones of zero length or partial (DELTA_UNIT). */
typedef struct {
    guint cues, zero, partial;
} CueCount;

static void count_cue(GstElement *sink, GstBuffer *buf, GstPad *pad, CueCount *c)
{
    (void)sink;
    (void)pad;
    if (gst_buffer_get_size(buf) == 0)
        return;
    c->cues++;
    if (!GST_BUFFER_DURATION_IS_VALID(buf) || GST_BUFFER_DURATION(buf) == 0)
        c->zero++;
    if (GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT))
        c->partial++;
}

/* A buffer probe that adds each non-empty text buffer to a TextSeg array. */
static GstPadProbeReturn collect_text(GstPad *pad, GstPadProbeInfo *info, gpointer user)
{
    (void)pad;
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMapInfo map;
    if (gst_buffer_get_size(b) > 0 && gst_buffer_map(b, &map, GST_MAP_READ)) {
        gchar *t = g_strndup((const gchar *)map.data, map.size);
        textseg_add(user, GST_BUFFER_PTS(b), GST_BUFFER_DURATION(b), t);
        g_free(t);
        gst_buffer_unmap(b, &map);
    }
    return GST_PAD_PROBE_OK;
}

/* Collects what passes the pad `pad` of the element `name` in `pipe`. */
static GPtrArray *probe_text(GstElement *pipe, const gchar *name, const gchar *pad)
{
    GstElement *e = gst_bin_get_by_name(GST_BIN(pipe), name);
    fail_unless(e != NULL, "no element %s", name);
    GstPad *p = gst_element_get_static_pad(e, pad);
    fail_unless(p != NULL, "no pad %s.%s", name, pad);
    GPtrArray *a = textseg_array_new();
    gst_pad_add_probe(p, GST_PAD_PROBE_TYPE_BUFFER, collect_text, a, NULL);
    gst_object_unref(p);
    gst_object_unref(e);
    return a;
}

/* The final segments a pipeline's whisper elements announce on the bus
 * (whisper-segment messages), collected as they are posted. */
typedef struct {
    GMutex lock;
    GPtrArray *segs;
} Announced;

static GstBusSyncReply announce_sync(GstBus *bus, GstMessage *m, gpointer data)
{
    (void)bus;
    Announced *a = data;
    const GstStructure *st = gst_message_get_structure(m);
    gboolean final = FALSE;
    guint64 start = 0, end = 0;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ELEMENT && gst_structure_has_name(st, "whisper-segment") &&
        gst_structure_get_boolean(st, "final", &final) && final &&
        gst_structure_get_uint64(st, "start", &start) && gst_structure_get_uint64(st, "end", &end)) {
        g_mutex_lock(&a->lock);
        textseg_add(a->segs, start, end - start, gst_structure_get_string(st, "text"));
        g_mutex_unlock(&a->lock);
    }
    return GST_BUS_PASS;
}

static Announced *announce_watch(GstElement *pipe)
{
    Announced *a = g_new0(Announced, 1);
    g_mutex_init(&a->lock);
    a->segs = textseg_array_new();
    GstBus *bus = gst_element_get_bus(pipe);
    gst_bus_set_sync_handler(bus, announce_sync, a, NULL);
    gst_object_unref(bus);
    return a;
}

static void announce_free(GstElement *pipe, Announced *a)
{
    GstBus *bus = gst_element_get_bus(pipe);
    gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
    gst_object_unref(bus);
    g_ptr_array_unref(a->segs);
    g_mutex_clear(&a->lock);
    g_free(a);
}

/* Runs a pipeline to EOS (or error); returns the error message or NULL. */
static gchar *run_pipeline(GstElement *pipe, GstClockTime timeout, GList **tags_out)
{
    GstBus *bus = gst_element_get_bus(pipe);
    gchar *error = NULL;
    if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        if (m) {
            GError *e;
            gchar *dbg;
            gst_message_parse_error(m, &e, &dbg);
            error = g_strdup_printf("%s | %s", e->message, dbg ? dbg : "");
            g_error_free(e);
            g_free(dbg);
            gst_message_unref(m);
        } else {
            error = g_strdup("state change failed");
        }
    }
    while (!error) {
        GstMessage *m = gst_bus_timed_pop_filtered(bus, timeout,
            GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_TAG);
        if (!m) {
            error = g_strdup("timeout");
            break;
        }
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
            GError *e;
            gchar *dbg;
            gst_message_parse_error(m, &e, &dbg);
            error = g_strdup_printf("%s | %s", e->message, dbg ? dbg : "");
            g_error_free(e);
            g_free(dbg);
        } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_TAG) {
            GstTagList *tl;
            gst_message_parse_tag(m, &tl);
            if (tags_out)
                *tags_out = g_list_append(*tags_out, tl);
            else
                gst_tag_list_unref(tl);
        } else {
            gst_message_unref(m);
            break;
        }
        gst_message_unref(m);
    }
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(bus);
    return error;
}

GST_START_TEST(test_missing_model)
{
    GstElement *p = gst_parse_launch("audiotestsrc num-buffers=2 ! audio/x-raw,rate=16000,"
        "channels=1 ! whisperkv model=/nonexistent/ggml-x.bin ! fakesink", NULL);
    gchar *err = run_pipeline(p, 10 * GST_SECOND, NULL);
    fail_unless(err != NULL);
    fail_unless(strstr(err, "/nonexistent/ggml-x.bin") != NULL, "error: %s", err);
    GST_INFO("missing model: %s", err);
    g_free(err);
    gst_object_unref(p);
}
GST_END_TEST

GST_START_TEST(test_bad_model)
{
    gchar *path = g_build_filename(g_get_tmp_dir(), "whisper-bad-model.bin", NULL);
    fail_unless(g_file_set_contents(path, "this is not a model", -1, NULL));
    GstElement *p = gst_parse_launch("audiotestsrc num-buffers=2 ! audio/x-raw,rate=16000,"
        "channels=1 ! whisperkv name=w ! fakesink", NULL);
    GstElement *w = gst_bin_get_by_name(GST_BIN(p), "w");
    g_object_set(w, "model", path, NULL);
    gchar *err = run_pipeline(p, 10 * GST_SECOND, NULL);
    fail_unless(err != NULL);
    fail_unless(strstr(err, path) != NULL, "error: %s", err);
    GST_INFO("bad model: %s", err);
    g_free(err);
    gst_object_unref(w);
    gst_object_unref(p);
    g_unlink(path);
    g_free(path);
}
GST_END_TEST

static GstElement *make_pipeline(const gchar *desc)
{
    gchar *full = g_strdup_printf(desc, test_model, test_model);
    GError *e = NULL;
    GstElement *p = gst_parse_launch(full, &e);
    fail_unless(p != NULL && e == NULL, "%s: %s", full, e ? e->message : "");
    g_free(full);
    wh_tune(p);
    return p;
}

/* Offline pipelines without a queue on either branch reach EOS (issue 30): the audio
 * sink prerolls on the first buffer and would block the streaming thread before the
 * first window's text, so the filter holds the audio until its text pad flowed.  35 s
 * of audio: one whole window, then a short one at EOS. */
GST_START_TEST(test_no_queue_pipelines)
{
    /* no temperature fallback: what is checked is the flow, and with the random
     * model's fallbacks four of these pipelines took 120 s on a busy AMD EPYC (the
     * five without them: 30 s) */
#define NQ_AUDIO(secs) "audiotestsrc num-buffers=" secs " samplesperbuffer=16000 " \
    "wave=pink-noise ! audio/x-raw,rate=16000,channels=1,format=F32LE ! " \
    "whisperkv name=w model=%s threads=1 temperature-fallback=false ! "
    /* the overlays take 8 s (one window, whole at EOS) against a video played at its
     * own pace, 12 s long: an unsynchronized video, or one that ends with the audio,
     * could reach EOS before any text (the subtitleoverlay pipeline had none there) */
#define NQ_VIDEO "videotestsrc num-buffers=120 ! video/x-raw,width=160,height=120," \
    "framerate=10/1 ! "
    const gchar *pipelines[] = {
        /* the README's: text to a sink */
        NQ_AUDIO("35") "fakesink w.text_src ! fakesink",
        /* text rendered to pictures */
        NQ_AUDIO("35") "fakesink w.text_src ! textrender ! videoconvert ! pngenc ! fakesink",
        /* both into a muxer */
        NQ_AUDIO("35") "audioconvert ! vorbisenc ! matroskamux name=m ! fakesink w.text_src ! m.",
        /* over a video */
        NQ_AUDIO("8") "fakesink " NQ_VIDEO "textoverlay name=o ! fakesink sync=true "
        "w.text_src ! o.text_sink",
        NQ_AUDIO("8") "fakesink " NQ_VIDEO "subtitleoverlay name=o ! fakesink sync=true "
        "w.text_src ! o.subtitle_sink",
    };
    for (guint i = 0; i < G_N_ELEMENTS(pipelines); i++) {
        GstElement *p = make_pipeline(pipelines[i]);
        Announced *said = announce_watch(p);
        gchar *err = run_pipeline(p, 90 * GST_SECOND, NULL);
        fail_unless(err == NULL, "pipeline %u (%s): %s", i, pipelines[i], err);
        fail_unless(said->segs->len > 0, "pipeline %u: no text", i);
        g_print("no queue, pipeline %u: EOS, %u segments\n", i, said->segs->len);
        gst_element_set_state(p, GST_STATE_NULL);
        announce_free(p, said);
        gst_object_unref(p);
    }
#undef NQ_AUDIO
#undef NQ_VIDEO
}
GST_END_TEST

/* A pipeline that cannot make progress says why: one thread feeds the element and a
 * video (monoscope, from the same audio) into a textoverlay that waits for the text,
 * which needs 30 s of that audio.  Within STALL_WARN_US + slack a WARNING names the
 * cause; then the pipeline shuts down cleanly. */
GST_START_TEST(test_stall_warns)
{
    GstElement *p = make_pipeline(
        "audiotestsrc num-buffers=40 samplesperbuffer=16000 wave=pink-noise ! "
        "audio/x-raw,rate=16000,channels=1,format=F32LE ! tee name=t ! "
        "whisperkv name=w model=%s threads=1 ! fakesink "
        "t. ! audioconvert ! monoscope ! videoconvert ! textoverlay name=o ! fakesink "
        "w.text_src ! o.text_sink");
    GstBus *bus = gst_element_get_bus(p);
    gst_element_set_state(p, GST_STATE_PLAYING);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 30 * GST_SECOND,
        GST_MESSAGE_WARNING | GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    fail_unless(m != NULL, "no message in 30 s: a silent hang");
    fail_unless(GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING, "%s, not a warning",
                GST_MESSAGE_TYPE_NAME(m));
    GError *e = NULL;
    gchar *dbg = NULL;
    gst_message_parse_warning(m, &e, &dbg);
    g_print("stalled pipeline: %s | %s\n", e->message, dbg);
    fail_unless(strstr(e->message, "No audio has come") && strstr(dbg, "queue"), "%s",
                e->message);
    g_error_free(e);
    g_free(dbg);
    gst_message_unref(m);
    fail_unless(gst_element_set_state(p, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    gst_object_unref(bus);
    gst_object_unref(p);
}
GST_END_TEST

/* Ink extent of a rendered ARGB frame: the first and last columns with any pixel not
 * fully transparent; FALSE when nothing is drawn. */
static gboolean ink_extent(GstBuffer *frame, gint width, gint height, gint *x0, gint *x1)
{
    GstMapInfo map;
    gst_buffer_map(frame, &map, GST_MAP_READ);
    *x0 = width;
    *x1 = -1;
    for (gint y = 0; y < height; y++)
        for (gint x = 0; x < width; x++)
            if (map.data[((gsize)y * width + x) * 4] != 0) {
                *x0 = MIN(*x0, x);
                *x1 = MAX(*x1, x);
            }
    gst_buffer_unmap(frame, &map);
    return *x1 >= 0;
}

#define RENDER_CAPS "video/x-raw,format=ARGB,width=800,height=100"

static void keep_frame(GstElement *sink, GstBuffer *buf, GstPad *pad, GPtrArray *frames)
{
    (void)sink;
    (void)pad;
    g_ptr_array_add(frames, gst_buffer_ref(buf));
}

/* textrender's frame for `text` with caps format `format` (a file through filesrc). */
static GstBuffer *render_text(const gchar *text, const gchar *format)
{
    gchar *path = NULL;
    gint fd = g_file_open_tmp("whisper-render-XXXXXX.txt", &path, NULL);
    fail_unless(fd >= 0 && write(fd, text, strlen(text)) == (gssize)strlen(text));
    close(fd);
    gchar *desc = g_strdup_printf("filesrc location=%s ! text/x-raw,format=%s ! textrender ! "
                                  RENDER_CAPS " ! fakesink name=v signal-handoffs=true",
                                  path, format);
    GstElement *p = gst_parse_launch(desc, NULL);
    fail_unless(p != NULL);
    GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
    GstElement *v = gst_bin_get_by_name(GST_BIN(p), "v");
    g_signal_connect(v, "handoff", G_CALLBACK(keep_frame), frames);
    gchar *err = run_pipeline(p, 30 * GST_SECOND, NULL);
    fail_unless(err == NULL, "%s", err);
    gst_element_set_state(p, GST_STATE_NULL);
    fail_unless(frames->len >= 1, "textrender drew nothing for '%s'", text);
    GstBuffer *f = gst_buffer_ref(g_ptr_array_index(frames, 0));
    g_ptr_array_unref(frames);
    gst_object_unref(v);
    gst_object_unref(p);
    g_unlink(path);
    g_free(path);
    g_free(desc);
    return f;
}

/* The text of the element's markup: its only tags, <u> and </u>, dropped and the
 * escapes (&amp; &lt; &gt;) undone. */
static gchar *markup_plain(const gchar *m)
{
    static const struct {
        const gchar *from, *to;
    } subs[] = {{"<u>", ""}, {"</u>", ""}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}};
    GString *o = g_string_new(NULL);
    while (*m) {
        guint k = 0;
        while (k < G_N_ELEMENTS(subs) && !g_str_has_prefix(m, subs[k].from))
            k++;
        if (k < G_N_ELEMENTS(subs)) {
            g_string_append(o, subs[k].to);
            m += strlen(subs[k].from);
        } else {
            fail_if(*m == '<' || *m == '>', "an unescaped '%c' in markup", *m);
            g_string_append_c(o, *m++);
        }
    }
    return g_string_free(o, FALSE);
}

/* Keeps the format of the last CAPS event through a pad (gchar **). */
static GstPadProbeReturn caps_format_probe(GstPad *pad, GstPadProbeInfo *info, gpointer user)
{
    (void)pad;
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS) {
        GstCaps *caps;
        gst_event_parse_caps(ev, &caps);
        gchar **format = user;
        g_free(*format);
        *format = g_strdup(gst_structure_get_string(gst_caps_get_structure(caps, 0), "format"));
    }
    return GST_PAD_PROBE_OK;
}

/* A highlighted cue drawn by textrender shows no tag characters: the element's
 * highlight-words buffers (caps pango-markup) are drawn exactly as wide as their text
 * without the tags, while the same bytes taken as plain utf8 (what the element sent
 * before) are drawn wider, "<u>" and "</u>" included. */
GST_START_TEST(test_highlight_renders_no_tags)
{
    GstElement *p = make_pipeline(
        "audiotestsrc num-buffers=8 samplesperbuffer=16000 wave=pink-noise ! "
        "audio/x-raw,rate=16000,channels=1,format=F32LE ! whisperkv name=w model=%s "
        "threads=1 word-timestamps=true text-unit=cue highlight-words=true "
        "max-line-width=30 max-line-count=1 ! fakesink w.text_src ! textrender name=r ! "
        RENDER_CAPS " ! fakesink name=v signal-handoffs=true");
    GPtrArray *texts = probe_text(p, "r", "sink");
    GPtrArray *frames = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
    GstElement *v = gst_bin_get_by_name(GST_BIN(p), "v");
    g_signal_connect(v, "handoff", G_CALLBACK(keep_frame), frames);
    gchar *format = NULL;
    GstElement *r = gst_bin_get_by_name(GST_BIN(p), "r");
    GstPad *rp = gst_element_get_static_pad(r, "sink");
    gst_pad_add_probe(rp, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, caps_format_probe, &format,
                      NULL);
    gchar *err = run_pipeline(p, 60 * GST_SECOND, NULL);
    fail_unless(err == NULL, "%s", err);
    gst_element_set_state(p, GST_STATE_NULL);
    fail_unless_equals_string(format, "pango-markup");
    g_free(format);
    gst_object_unref(rp);
    gst_object_unref(r);
    fail_unless(texts->len > 0 && texts->len == frames->len, "%u texts, %u frames",
                texts->len, frames->len);
    guint marked = 0;
    for (guint i = 0; i < texts->len && marked < 4; i++) {
        const gchar *t = ((TextSeg *)g_ptr_array_index(texts, i))->text;
        if (!strstr(t, "<u>"))
            continue;
        marked++;
        gchar *plain = markup_plain(t);
        gint a0, a1, b0, b1, c0, c1;
        fail_unless(ink_extent(g_ptr_array_index(frames, i), 800, 100, &a0, &a1));
        GstBuffer *ref = render_text(plain, "utf8"), *lit = render_text(t, "utf8");
        fail_unless(ink_extent(ref, 800, 100, &b0, &b1) && ink_extent(lit, 800, 100, &c0, &c1));
        g_print("'%s': drawn %d px wide, its text %d px, the tags as text %d px\n", t,
                a1 - a0, b1 - b0, c1 - c0);
        fail_unless(ABS((a1 - a0) - (b1 - b0)) <= 3, "'%s' drawn %d px wide, its text alone "
                    "%d px: tag characters drawn?", t, a1 - a0, b1 - b0);
        fail_unless((c1 - c0) > (b1 - b0) + 10, "the literal tags would not show");
        gst_buffer_unref(ref);
        gst_buffer_unref(lit);
        g_free(plain);
    }
    fail_unless(marked > 0, "no highlighted cue");
    g_ptr_array_unref(texts);
    g_ptr_array_unref(frames);
    gst_object_unref(v);
    gst_object_unref(p);
}
GST_END_TEST

GST_START_TEST(test_state_cycles)
{
    GstElement *p = make_pipeline(
        "audiotestsrc is-live=true samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 "
        "! whisperkv name=w model=%s threads=1 step=100 ! fakesink async=false w.text_src ! "
        "fakesink async=false");
    for (int i = 0; i < 100; i++) {
        fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
        if (i % 25 == 0) /* sometimes let a live run start */
            g_usleep(150000);
        fail_unless(gst_element_set_state(p, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
        fail_unless_equals_int(gst_whisper_model_cache_size(), 0);
    }
    gst_object_unref(p);
}
GST_END_TEST

GST_START_TEST(test_two_elements_share_model)
{
    GstElement *p = make_pipeline(
        "audiotestsrc num-buffers=10 samplesperbuffer=1600 wave=pink-noise ! "
        "audio/x-raw,rate=16000,channels=1,format=F32LE ! tee name=t "
        "t. ! queue ! whisperkv name=w1 model=%s threads=1 ! fakesink "
        "w1.text_src ! fakesink name=a1 "
        "t. ! queue ! whisperkv name=w2 model=%s threads=1 ! fakesink "
        "w2.text_src ! fakesink name=a2");
    GPtrArray *t1 = probe_text(p, "a1", "sink"), *t2 = probe_text(p, "a2", "sink");
    fail_unless(gst_element_set_state(p, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
    fail_unless_equals_int(gst_whisper_model_cache_size(), 1);
    fail_unless_equals_int(gst_whisper_model_users(test_model), 2);
    gchar *err = run_pipeline(p, 100 * GST_SECOND, NULL);
    fail_unless(err == NULL, "%s", err);
    fail_unless_equals_int(gst_whisper_model_cache_size(), 0);
    /* same audio, same model, separate contexts: the same text at the same times */
    fail_unless(t1->len > 0, "no text");
    assert_same_segments(t2, t1, "the second element against the first");
    g_ptr_array_unref(t1);
    g_ptr_array_unref(t2);
    gst_object_unref(p);
}
GST_END_TEST

typedef struct {
    GstClockTime pts;
    gchar *sum;
} Frame;

static void frame_clear(gpointer p)
{
    g_free(((Frame *)p)->sum);
}

static void frame_handoff(GstElement *sink, GstBuffer *buf, GstPad *pad, GArray *frames)
{
    (void)sink;
    (void)pad;
    GstMapInfo map;
    fail_unless(gst_buffer_map(buf, &map, GST_MAP_READ));
    Frame f = {GST_BUFFER_PTS(buf), g_compute_checksum_for_data(G_CHECKSUM_MD5, map.data,
                                                                 map.size)};
    gst_buffer_unmap(buf, &map);
    g_array_append_val(frames, f);
}

static GArray *probe_frames(GstElement *pipe, const gchar *name)
{
    GArray *a = g_array_new(FALSE, TRUE, sizeof(Frame));
    g_array_set_clear_func(a, frame_clear);
    GstElement *e = gst_bin_get_by_name(GST_BIN(pipe), name);
    g_signal_connect(e, "handoff", G_CALLBACK(frame_handoff), a);
    gst_object_unref(e);
    return a;
}

/* The text reaches textoverlay as whisper announced it on the bus, and is drawn on
 * every video frame that starts inside it and on none it does not touch: each frame
 * is compared with the same frame not overlaid. */
GST_START_TEST(test_textoverlay)
{
    GstElement *p = make_pipeline(
        "audiotestsrc num-buffers=15 samplesperbuffer=1600 wave=pink-noise ! "
        "audio/x-raw,rate=16000,channels=1 ! whisperkv name=w model=%s ! " UNLIMITED_QUEUE
        " ! fakesink videotestsrc num-buffers=15 ! "
        "video/x-raw,width=160,height=120,framerate=10/1 ! tee name=vt ! queue ! "
        "textoverlay name=o ! fakesink name=v signal-handoffs=true "
        "vt. ! queue ! fakesink name=v0 signal-handoffs=true w.text_src ! o.text_sink");
    Announced *said = announce_watch(p);
    GPtrArray *seen = probe_text(p, "o", "text_sink");
    GArray *drawn = probe_frames(p, "v"), *plain = probe_frames(p, "v0");
    gchar *err = run_pipeline(p, 60 * GST_SECOND, NULL);
    fail_unless(err == NULL, "%s", err);
    GPtrArray *pushed = said->segs;
    fail_unless(pushed->len > 0, "no text");
    assert_same_segments(seen, pushed, "textoverlay's text_sink against the bus messages");
    fail_unless_equals_int(drawn->len, 15);
    fail_unless_equals_int(plain->len, 15);
    guint covered = 0, changed = 0;
    for (guint i = 0; i < drawn->len; i++) {
        Frame *d = &g_array_index(drawn, Frame, i), *o = &g_array_index(plain, Frame, i);
        fail_unless(d->pts == o->pts);
        /* under: the frame starts inside some text, which must be drawn on it; a frame
         * the text only begins inside may go either way (a GAP up to the text's start
         * can let textoverlay render it before the text arrives); no overlap: plain */
        gboolean under = FALSE, touch = FALSE;
        for (guint k = 0; k < pushed->len; k++) {
            TextSeg *t = g_ptr_array_index(pushed, k);
            gchar *stripped = g_strstrip(g_strdup(t->text));
            if (*stripped && d->pts < t->pts + t->duration) {
                under |= t->pts <= d->pts;
                touch |= t->pts < d->pts + 100 * GST_MSECOND;
            }
            g_free(stripped);
        }
        gboolean drew = strcmp(d->sum, o->sum) != 0;
        covered += under;
        changed += drew;
        fail_unless(under ? drew : (touch || !drew), "frame at %" GST_TIME_FORMAT ": %s text, %s",
                    GST_TIME_ARGS(d->pts), under ? "under" : "outside",
                    under ? "not drawn" : "drawn");
    }
    GST_INFO("%u text buffers, %u frames of 15 with text", pushed->len, changed);
    fail_unless(covered > 0, "no frame under the text");
    announce_free(p, said);
    g_ptr_array_unref(seen);
    g_array_unref(drawn);
    g_array_unref(plain);
    gst_object_unref(p);
}
GST_END_TEST

/* The subtitle track read back from the file holds the text whisper announced on the
 * bus at its times (to Matroska's millisecond), next to the audio.  A whole window of audio: a random
 * model's text runs to the window's 30 s, and matroskademux does not give back
 * subtitles that start after the file's last audio block. */
GST_START_TEST(test_matroskamux)
{
    gchar *path = g_build_filename(g_get_tmp_dir(), "whisper-test.mkv", NULL);
    gchar *desc = g_strdup_printf(
        "audiotestsrc num-buffers=300 samplesperbuffer=1600 wave=pink-noise ! "
        "audio/x-raw,rate=16000,channels=1,format=S16LE ! whisperkv name=w model=%%s "
        "temperature-fallback=false ! "
        UNLIMITED_QUEUE " ! matroskamux name=m ! filesink location=%s w.text_src ! queue ! m.",
        path);
    GstElement *p = make_pipeline(desc);
    Announced *said = announce_watch(p);
    GList *tags = NULL;
    gchar *err = run_pipeline(p, 120 * GST_SECOND, &tags);
    fail_unless(err == NULL, "%s", err);
    g_list_free_full(tags, (GDestroyNotify)gst_tag_list_unref);
    GPtrArray *pushed = g_ptr_array_ref(said->segs);
    announce_free(p, said);
    gst_object_unref(p);
    fail_unless(pushed->len > 0, "no text");
    gchar *d2 = g_strdup_printf("filesrc location=%s ! matroskademux name=d "
                                "d.audio_0 ! queue ! fakesink name=a sync=false "
                                "d.subtitle_0 ! queue ! fakesink name=s sync=false", path);
    p = gst_parse_launch(d2, NULL);
    GPtrArray *read = probe_text(p, "s", "sink");
    guint audio = 0;
    GstElement *a = gst_bin_get_by_name(GST_BIN(p), "a");
    g_object_set(a, "signal-handoffs", TRUE, NULL);
    g_signal_connect(a, "handoff", G_CALLBACK(count_handoff), &audio);
    gst_object_unref(a);
    err = run_pipeline(p, 30 * GST_SECOND, NULL);
    fail_unless(err == NULL, "mkv read back: %s", err);
    fail_unless(audio > 0, "no audio in the file");
    fail_unless(read->len == pushed->len, "%u subtitles in the file, %u announced", read->len,
                pushed->len);
    for (guint i = 0; i < read->len; i++) {
        TextSeg *r = g_ptr_array_index(read, i), *w = g_ptr_array_index(pushed, i);
        fail_unless(g_strcmp0(r->text, w->text) == 0, "subtitle %u '%s', announced '%s'", i,
                    r->text, w->text);
        GstClockTimeDiff dt = GST_CLOCK_DIFF(w->pts, r->pts);
        fail_unless(ABS(dt) <= GST_MSECOND, "subtitle %u at %" GST_TIME_FORMAT ", announced %"
                    GST_TIME_FORMAT, i, GST_TIME_ARGS(r->pts), GST_TIME_ARGS(w->pts));
    }
    g_ptr_array_unref(pushed);
    g_ptr_array_unref(read);
    gst_object_unref(p);
    g_free(d2);
    g_free(desc);
    g_unlink(path);
    g_free(path);
}
GST_END_TEST


/* ------------------------------------------------------------------ live */

typedef struct {
    GstElement *pipe;
    guint finals, partials, late;
    GstClockTimeDiff worst; /* latest final: running time at the message - segment start */
    guint latency_ms;
} LiveStats;

static GstBusSyncReply live_sync(GstBus *bus, GstMessage *m, gpointer data)
{
    (void)bus;
    LiveStats *ls = data;
    const GstStructure *s = gst_message_get_structure(m);
    if (GST_MESSAGE_TYPE(m) != GST_MESSAGE_ELEMENT || !gst_structure_has_name(s, "whisper-segment"))
        return GST_BUS_PASS;
    gboolean final = FALSE;
    GstClockTime start, end;
    gst_structure_get_boolean(s, "final", &final);
    gst_structure_get_clock_time(s, "start", &start);
    gst_structure_get_clock_time(s, "end", &end);
    if (!final) {
        ls->partials++;
        return GST_BUS_PASS;
    }
    ls->finals++;
    GstClock *clock = gst_element_get_clock(ls->pipe);
    if (clock) {
        GstClockTime now = gst_clock_get_time(clock) - gst_element_get_base_time(ls->pipe);
        /* the segment's first audio arrived at `start` (the audio flows in real time) */
        GstClockTimeDiff late = GST_CLOCK_DIFF(start, now);
        ls->worst = MAX(ls->worst, late);
        GST_INFO("final %" GST_TIME_FORMAT " - %" GST_TIME_FORMAT " at %" GST_TIME_FORMAT, GST_TIME_ARGS(start), GST_TIME_ARGS(end), GST_TIME_ARGS(now));
        gst_object_unref(clock);
    }
    return GST_BUS_PASS;
}

/* A live source: partials and finals come, and a final segment is out at most
 * `latency` after the end of its audio (plus the time of one run, which the element
 * estimates from the previous one). */
GST_START_TEST(test_live)
{
    const guint latency = 6000, step = 1000;
    gchar *desc = g_strdup_printf(
        "audiotestsrc is-live=true samplesperbuffer=800 wave=pink-noise volume=0.3 "
        "num-buffers=240 ! audio/x-raw,rate=16000,channels=1,format=F32LE ! "
        "whisperkv name=w model=%s threads=2 step=%u latency=%u partial-results=true ! "
        /* the sinks wait `latency` (the pipeline's latency) before they render: a queue
         * that long keeps the audio flowing into whisper in real time */
        "queue max-size-time=10000000000 max-size-buffers=0 max-size-bytes=0 ! "
        "fakesink sync=true w.text_src ! queue max-size-time=10000000000 max-size-buffers=0 "
        "max-size-bytes=0 ! fakesink name=text sync=true signal-handoffs=true",
        test_model, step, latency);
    GstElement *p = gst_parse_launch(desc, NULL);
    fail_unless(p != NULL);
    LiveStats ls = {p, 0, 0, 0, 0, latency};
    GstBus *bus = gst_element_get_bus(p);
    gst_bus_set_sync_handler(bus, live_sync, &ls, NULL);
    CueCount cc = {0, 0, 0};
    GstElement *text = gst_bin_get_by_name(GST_BIN(p), "text");
    g_signal_connect(text, "handoff", G_CALLBACK(count_cue), &cc);
    fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    /* the LATENCY query on text_src adds `latency` */
    GstElement *w = gst_bin_get_by_name(GST_BIN(p), "w");
    GstPad *tp = gst_element_get_static_pad(w, "text_src");
    g_usleep(200000);
    GstQuery *q = gst_query_new_latency();
    fail_unless(gst_pad_query(tp, q));
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency(q, &live, &min, &max);
    fail_unless(live && min >= latency * GST_MSECOND, "latency %" GST_TIME_FORMAT,
                GST_TIME_ARGS(min));
    gst_query_unref(q);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 90 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless(m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS);
    gst_message_unref(m);
    gst_element_set_state(p, GST_STATE_NULL);
    guint n_text = cc.cues;
    g_print("live: %u finals, %u partial messages, %u text buffers (%u of zero length, %u "
            "partial), latest final %.2f s after the start of its audio (latency %u ms)\n",
            ls.finals, ls.partials, n_text, cc.zero, cc.partial, ls.worst / 1e9, latency);
    fail_unless(ls.finals > 0 && ls.partials > 0);
    fail_unless(n_text >= ls.finals);
    /* partial-results on: partials are messages; the text pad, as srtenc or a muxer
     * would write it, holds no cue of zero length and no partial one */
    fail_unless(cc.zero == 0 && cc.partial == 0, "%u zero-length and %u partial text buffers",
                cc.zero, cc.partial);
    /* a final may follow its audio by `latency` (plus a run overrunning the element's
     * estimate on a loaded machine: AddressSanitizer's runs are 2-3x longer and vary
     * more), and whenever it came later the element must have said so */
    guint64 late_commits = 0;
    g_object_get(w, "late-commits", &late_commits, NULL);
    if (ls.worst > (GstClockTimeDiff)(latency + 200) * GST_MSECOND)
        fail_unless(late_commits > 0, "a final came %.2f s after its audio, late-commits 0",
                    ls.worst / 1e9);
#if defined(__SANITIZE_ADDRESS__)
    const GstClockTimeDiff slack = 3000;
#else
    const GstClockTimeDiff slack = 500;
#endif
#ifndef __SANITIZE_THREAD__
    fail_unless(ls.worst <= ((GstClockTimeDiff)latency + slack) * GST_MSECOND,
                "a final came %.2f s after its audio", ls.worst / 1e9);
#else
    /* inference under ThreadSanitizer runs 5-15x slower than real time allows */
    g_print("live: the latency bound is not checked under ThreadSanitizer\n");
#endif
    gst_object_unref(tp);
    gst_object_unref(w);
    gst_object_unref(text);
    gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
    gst_object_unref(bus);
    gst_object_unref(p);
    g_free(desc);
}
GST_END_TEST

static Suite *whisper_suite(void)
{
    Suite *s = suite_create("whisper");
    TCase *tc = tcase_create("general");
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_passthrough);
    tcase_add_test(tc, test_offline_f32);
    tcase_add_test(tc, test_offline_s16);
    tcase_add_test(tc, test_eos_drains_short);
    tcase_add_test(tc, test_discont);
    tcase_add_test(tc, test_timestamp_gap);
    tcase_add_test(tc, test_timestamp_gap_1s);
    tcase_add_test(tc, test_flush_mid_window);
    tcase_add_test(tc, test_messages_and_tags);
    tcase_add_test(tc, test_decoding_properties);
    tcase_add_test(tc, test_missing_model);
    tcase_add_test(tc, test_bad_model);
    tcase_add_test(tc, test_state_cycles);
    tcase_add_test(tc, test_two_elements_share_model);
    tcase_add_test(tc, test_stall_warns);
    tcase_add_test(tc, test_highlight_renders_no_tags);
    tcase_add_test(tc, test_textoverlay);
    tcase_add_test(tc, test_matroskamux);
    tcase_add_test(tc, test_live);
    /* five pipelines, three of them 35 s of audio at threads=1: 120 s was too short on
     * a busy AMD EPYC without AVX-512 (four done in 120 s) */
    TCase *tp = tcase_create("pipelines");
    tcase_set_timeout(tp, 280);
    suite_add_tcase(s, tp);
    tcase_add_test(tp, test_no_queue_pipelines);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    return wh_run_suite(whisper_suite(), "whisper");
}
