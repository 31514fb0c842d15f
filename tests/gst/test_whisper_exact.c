/* Offline exactness of the whisper element on a real recording (shared/speech/gb0):
 * its text buffers are the core's window-normalized long-form segments on the same
 * PCM (text, start = PTS, end = PTS + duration), with the micro-en test-vector model
 * they are the reference's long_form_window_norm segments, and a flushing seek
 * (wavparse) restarts the transcription exactly at the new position.
 * Needs the shared data: skipped (77) without it, failed under CI=true. */
#include "gstwhisper.h"
#include "testutil.h"
#include "wav.h"
#include "whisper_check.h"

#include <gst/app/gstappsink.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

static wav_data gb0;
static gchar *micro_en; /* shared/testvectors/micro-en/model.bin */

/* Element vs core on `n` samples of gb0 with `model`. */
static void check_vs_core(const gchar *model, gsize n, gboolean s16, float nst)
{
    GThread *core = core_segments_async(model, gb0.samples, n, 0, nst);
    WhisperHarness wh;
    wh_setup(&wh, model, s16, "no-speech-threshold", nst, NULL);
    wh_push_pcm(&wh, gb0.samples, n, 4000, 0, s16, FALSE);
    GPtrArray *got = wh_finish(&wh);
    GPtrArray *want = g_thread_join(core);
    gchar *what = g_strdup_printf("gb0 (%.1f s) with %s", n / 16000.0, model);
    fail_unless(want->len > 1, "%s: the core gives %u segments", what, want->len);
    assert_same_segments(got, want, what);
    gdouble rtf = 0;
    guint64 windows = 0;
    g_object_get(wh.element, "real-time-factor", &rtf, "windows", &windows, NULL);
    g_print("%s: %u segments equal the core's; %" G_GUINT64_FORMAT " windows, real-time "
            "factor %.3f\n", what, got->len, windows, rtf);
    g_free(what);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
}

GST_START_TEST(test_gb0_generated_model)
{
    /* the generated model never says eot (224 tokens a window): the first 40 s, a
     * full window and a partial one, keep the test short */
    check_vs_core(test_model, 16000 * 40, FALSE, 0.6f);
}
GST_END_TEST

GST_START_TEST(test_gb0_micro_en_core)
{
    check_vs_core(micro_en, gb0.n, TRUE, 0.6f);
}
GST_END_TEST

/* The reference's long_form_window_norm segments (no thresholds). */
GST_START_TEST(test_gb0_micro_en_reference)
{
    gchar *json = g_build_filename(tu_shared_dir(), "testvectors", "micro-en", "expected.json",
                                   NULL);
    JsonParser *parser = json_parser_new();
    GError *e = NULL;
    fail_unless(json_parser_load_from_file(parser, json, &e), "%s", e ? e->message : "");
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonObject *lf = json_object_get_object_member(root, "long_form_window_norm");
    JsonArray *segs = json_object_get_array_member(lf, "segments");
    GPtrArray *want = textseg_array_new();
    for (guint i = 0; i < json_array_get_length(segs); i++) {
        JsonObject *s = json_array_get_object_element(segs, i);
        /* the reference lists cleared segments (no tokens); the element leaves them out */
        if (json_array_get_length(json_object_get_array_member(s, "tokens")) == 0)
            continue;
        GstClockTime a = (GstClockTime)llround(json_object_get_double_member(s, "start") * 1e9);
        GstClockTime b = (GstClockTime)llround(json_object_get_double_member(s, "end") * 1e9);
        textseg_add(want, a, b - a, json_object_get_string_member(s, "text"));
    }
    WhisperHarness wh;
    wh_setup(&wh, micro_en, TRUE, "no-speech-threshold", 1.0f, NULL);
    wh_push_pcm(&wh, gb0.samples, gb0.n, 3200, 0, TRUE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "long_form_window_norm");
    g_print("gb0 with micro-en: %u segments equal the reference's long_form_window_norm\n",
            got->len);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_object_unref(parser);
    g_free(json);
}
GST_END_TEST

/* A flushing seek in a real pipeline, while the first window is still filling (the
 * pipeline is only prerolled): the text is the core's on the audio from the seek
 * position on, timed from there. */
GST_START_TEST(test_flushing_seek)
{
    const gint64 from = 60; /* s */
    gchar *desc = g_strdup_printf(
        "filesrc location=%s ! wavparse ! audioconvert ! audioresample ! "
        "whisperkv name=w model=%s no-speech-threshold=1.0 ! "
        "queue max-size-time=0 max-size-bytes=0 max-size-buffers=0 ! fakesink "
        "w.text_src ! appsink name=text sync=false",
        tu_shared_path("speech/gb0/gb0.wav"), micro_en);
    GstElement *p = gst_parse_launch(desc, NULL);
    fail_unless(p != NULL);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(p), "text");
    fail_unless(gst_element_set_state(p, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
    fail_unless(gst_element_get_state(p, NULL, NULL, 30 * GST_SECOND) ==
                GST_STATE_CHANGE_SUCCESS);
    fail_unless(gst_element_seek_simple(p, GST_FORMAT_TIME,
                                        GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE,
                                        from * GST_SECOND));
    fail_unless(gst_element_get_state(p, NULL, NULL, 30 * GST_SECOND) ==
                GST_STATE_CHANGE_SUCCESS);
    fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    GPtrArray *got = textseg_array_new();
    for (;;) {
        GstSample *s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 60 * GST_SECOND);
        if (!s)
            break;
        GstBuffer *b = gst_sample_get_buffer(s);
        if (gst_buffer_get_size(b) > 0) {
            GstMapInfo map;
            gst_buffer_map(b, &map, GST_MAP_READ);
            gchar *t = g_strndup((const gchar *)map.data, map.size);
            textseg_add(got, GST_BUFFER_PTS(b), GST_BUFFER_DURATION(b), t);
            g_free(t);
            gst_buffer_unmap(b, &map);
        }
        gst_sample_unref(s);
    }
    fail_unless(gst_app_sink_is_eos(GST_APP_SINK(sink)));
    gst_element_set_state(p, GST_STATE_NULL);
    gsize off = (gsize)from * 16000;
    GPtrArray *want = core_segments(micro_en, gb0.samples + off, gb0.n - off, from * GST_SECOND,
                                    1.0f);
    assert_same_segments(got, want, "after a flushing seek to 60 s");
    g_print("flushing seek to %" G_GINT64_FORMAT " s: %u segments equal the core's on the "
            "rest\n", from, got->len);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    gst_object_unref(sink);
    gst_object_unref(p);
    g_free(desc);
}
GST_END_TEST

static Suite *exact_suite(void)
{
    Suite *s = suite_create("whisper-exact");
    TCase *tc = tcase_create("gb0");
    tcase_set_timeout(tc, 150);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_gb0_micro_en_reference);
    tcase_add_test(tc, test_gb0_micro_en_core);
    tcase_add_test(tc, test_flushing_seek);
    tcase_add_test(tc, test_gb0_generated_model);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    tu_require_shared("the whisper element's exactness tests (speech/gb0, testvectors/micro-en)");
    char err[256];
    if (wav_read(tu_shared_path("speech/gb0/gb0.wav"), &gb0, err, sizeof err) != 0) {
        g_printerr("gb0.wav: %s\n", err);
        return 1;
    }
    if (gb0.rate != 16000) {
        g_printerr("gb0.wav: %d Hz, want 16000\n", gb0.rate);
        return 1;
    }
    micro_en = g_build_filename(tu_shared_dir(), "testvectors", "micro-en", "model.bin", NULL);
    int r = wh_run_suite(exact_suite(), "whisper-exact");
    wav_free(&gb0);
    g_free(micro_en);
    return r;
}
