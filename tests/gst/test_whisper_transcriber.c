/* whisperkvtranscriber driven the way transcriberbin drives its transcriber (issue 30):
 * transcriberbin (gst-plugins-rs; not packaged for this Debian) links the
 * transcriber's `src` to its text branch, sets `latency`, `lateness` and
 * `language-code`, asks the LATENCY of the chain, and feeds it live audio; it expects
 * timed text on `src` (word buffers for roll-up captions) and GAPs where there is no
 * text.  These checks do the same with a harness, so the contract is tested here. */
#include "gstwhisper.h"
#include "whisper_check.h"

#include <string.h>

#define STEP_MS 1000
#define STEP_SAMPLES (16000 * STEP_MS / 1000)

/* Its pads are transcriberbin's contract: `sink` audio, `src` text only. */
GST_START_TEST(test_pads_are_a_transcribers)
{
    GstElement *e = gst_element_factory_make("whisperkvtranscriber", NULL);
    fail_unless(e != NULL, "no whisperkvtranscriber factory");
    GstPad *sink = gst_element_get_static_pad(e, "sink");
    GstPad *src = gst_element_get_static_pad(e, "src");
    fail_unless(sink && src);
    fail_unless(gst_element_get_static_pad(e, "text_src") == NULL, "a text_src pad");
    fail_unless_equals_int(e->numpads, 2);
    /* src offers text, never audio */
    GstCaps *caps = gst_pad_query_caps(src, NULL);
    GstCaps *audio = gst_caps_from_string("audio/x-raw");
    GstCaps *text = gst_caps_from_string("text/x-raw, format=utf8");
    fail_if(gst_caps_can_intersect(caps, audio), "src offers audio: %" GST_PTR_FORMAT, caps);
    fail_unless(gst_caps_can_intersect(caps, text), "src offers no utf8 text");
    gst_caps_unref(caps);
    gst_caps_unref(audio);
    gst_caps_unref(text);
    /* transcriberbin's text branch links to src: a text sink links, an audio one not */
    GstElement *bin = gst_pipeline_new(NULL);
    GstElement *tsink = gst_element_factory_make("fakesink", NULL);
    GstElement *cf = gst_element_factory_make("capsfilter", NULL);
    GstElement *acf = gst_element_factory_make("capsfilter", NULL);
    g_object_set(cf, "caps", gst_caps_from_string("text/x-raw"), NULL);
    g_object_set(acf, "caps", gst_caps_from_string("audio/x-raw"), NULL);
    gst_bin_add_many(GST_BIN(bin), e, cf, acf, tsink, NULL);
    fail_if(gst_element_link(e, acf), "src linked to an audio-only branch");
    fail_unless(gst_element_link_many(e, cf, tsink, NULL), "src does not link to text");
    /* the properties transcriberbin sets */
    g_object_set(e, "latency", 4000, "lateness", 100, "language-code", "en-US", NULL);
    guint latency = 0, lateness = 0;
    gchar *lang = NULL, *model_lang = NULL;
    GstWhisperTextUnit unit;
    gboolean words = FALSE;
    g_object_get(e, "latency", &latency, "lateness", &lateness, "language-code", &lang,
                 "language", &model_lang, "text-unit", &unit, "word-timestamps", &words, NULL);
    fail_unless_equals_int(latency, 4000);
    fail_unless_equals_int(lateness, 100);
    /* language-code reads back as transcriberbin set it; the model gets its language */
    fail_unless_equals_string(lang, "en-US");
    fail_unless_equals_string(model_lang, "en");
    g_free(model_lang);
    fail_unless(unit == GST_WHISPER_TEXT_UNIT_WORD && words, "not word buffers by default");
    g_free(lang);
    gst_object_unref(sink);
    gst_object_unref(src);
    gst_object_unref(bin);
}
GST_END_TEST

/* Both elements, no name shared with the other GStreamer whisper plugins' (all
 * `whisper`, type GstWhisper or Whisper). */
GST_START_TEST(test_names_are_ours)
{
    fail_unless(gst_element_factory_find("whisperkv") != NULL);
    GstElementFactory *f = gst_element_factory_find("whisper");
    fail_unless(f == NULL, "a `whisper` factory is registered");
    const gchar *types[] = {"GstWhisperKv", "GstWhisperKvTranscriber", "GstWhisperKvBase"};
    for (guint i = 0; i < G_N_ELEMENTS(types); i++)
        fail_unless(g_type_from_name(types[i]) != 0, "no type %s", types[i]);
    fail_unless(g_type_from_name("GstWhisper") == 0, "a type named GstWhisper");
    fail_unless(g_type_from_name("Whisper") == 0, "a type named Whisper");
    GstElement *e = gst_element_factory_make("whisperkvtranscriber", NULL);
    fail_unless(g_str_has_prefix(G_OBJECT_TYPE_NAME(e), "GstWhisperKv"));
    gst_object_unref(e);
}
GST_END_TEST

static GstHarness *transcriber_harness(GstElement **element, guint step, guint latency)
{
    GstElement *e = gst_element_factory_make("whisperkvtranscriber", NULL);
    fail_unless(e != NULL);
    g_object_set(e, "model", test_model, "threads", 1, "step", step, "latency", latency, NULL);
    wh_tune(e);
    GstHarness *h = gst_harness_new_with_element(e, "sink", "src");
    *element = e;
    return h;
}

/* The LATENCY answer on src is upstream's plus `latency` when live (transcriberbin
 * sums the chain's latencies to place its captions). */
GST_START_TEST(test_latency_query)
{
    GstElement *e;
    GstHarness *h = transcriber_harness(&e, STEP_MS, 3000);
    gst_harness_set_upstream_latency(h, 100 * GST_MSECOND);
    gst_harness_play(h);
    GstQuery *q = gst_query_new_latency();
    fail_unless(gst_pad_peer_query(h->sinkpad, q), "no LATENCY answer on src");
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency(q, &live, &min, &max);
    gst_query_unref(q);
    fail_unless(live, "not live");
    fail_unless_equals_uint64(min, 3100 * GST_MSECOND);
    g_object_set(e, "latency", 5000, NULL);
    q = gst_query_new_latency();
    fail_unless(gst_pad_peer_query(h->sinkpad, q));
    gst_query_parse_latency(q, &live, &min, &max);
    gst_query_unref(q);
    fail_unless_equals_uint64(min, 5100 * GST_MSECOND);
    gst_harness_teardown(h);
    gst_object_unref(e);
}
GST_END_TEST

typedef struct {
    GstClockTime start, end;
} Span;

/* Live audio (silence, sound, silence) one step at a time, each run waited for as a
 * capture device's would be: word buffers with PTS and duration, in order, no
 * partials; GAP events; text and GAPs never going back, and reaching the end of the
 * audio at EOS. */
GST_START_TEST(test_live_words_and_gaps)
{
    GstElement *e;
    GstHarness *h = transcriber_harness(&e, STEP_MS, 600000);
    gst_harness_set_upstream_latency(h, 20 * GST_MSECOND);
    gst_harness_play(h);
    gst_harness_set_src_caps_str(h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                    "layout=interleaved");
    const gsize n = 16000 * 16;
    float *pcm = synth_audio(n, 41);
    memset(pcm, 0, 16000 * 3 * sizeof(float));              /* 3 s of silence first */
    memset(pcm + n - 16000 * 3, 0, 16000 * 3 * sizeof(float)); /* and last */
    const GstClockTime t0 = GST_SECOND;
    for (gsize off = 0; off < n; off += STEP_SAMPLES) {
        gsize k = MIN((gsize)STEP_SAMPLES, n - off);
        guint64 before = 0, now = 0;
        g_object_get(e, "windows", &before, NULL);
        GstBuffer *buf = gst_buffer_new_allocate(NULL, k * 4, NULL);
        gst_buffer_fill(buf, 0, pcm + off, k * 4);
        GST_BUFFER_PTS(buf) = t0 + gst_util_uint64_scale_int(off, GST_SECOND, 16000);
        GST_BUFFER_DURATION(buf) = gst_util_uint64_scale_int(k, GST_SECOND, 16000);
        fail_unless_equals_int(gst_harness_push(h, buf), GST_FLOW_OK);
        for (int i = 0; i < 4000 && now <= before; i++) {
            g_usleep(5000);
            g_object_get(e, "windows", &now, NULL);
        }
        fail_unless(now > before, "no run after a step of audio");
    }
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    /* events and buffers in the order they went out */
    GstClockTime pos = 0, end = t0 + gst_util_uint64_scale_int(n, GST_SECOND, 16000);
    guint gaps = 0, words = 0;
    gboolean eos = FALSE, caps_ok = FALSE;
    while (!eos) {
        GstEvent *ev;
        while ((ev = gst_harness_try_pull_event(h))) {
            if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS) {
                GstCaps *c;
                gst_event_parse_caps(ev, &c);
                caps_ok = gst_structure_has_name(gst_caps_get_structure(c, 0), "text/x-raw");
            } else if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
                GstClockTime ts, dur;
                gst_event_parse_gap(ev, &ts, &dur);
                fail_unless(GST_CLOCK_TIME_IS_VALID(dur));
                fail_unless(ts >= pos || ts + dur <= pos, "a GAP at %" GST_TIME_FORMAT
                            " goes back from %" GST_TIME_FORMAT, GST_TIME_ARGS(ts),
                            GST_TIME_ARGS(pos));
                if (dur > 0)
                    gaps++;
                pos = MAX(pos, ts + dur);
            } else if (GST_EVENT_TYPE(ev) == GST_EVENT_EOS) {
                eos = TRUE;
            }
            gst_event_unref(ev);
        }
        GstBuffer *b;
        while ((b = gst_harness_try_pull(h))) {
            fail_unless(GST_BUFFER_PTS_IS_VALID(b) && GST_BUFFER_DURATION_IS_VALID(b));
            fail_if(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT), "a partial");
            fail_unless(GST_BUFFER_PTS(b) >= pos || words == 0 ||
                        GST_BUFFER_PTS(b) + GST_BUFFER_DURATION(b) <= pos + GST_SECOND,
                        "a word at %" GST_TIME_FORMAT " far before %" GST_TIME_FORMAT,
                        GST_TIME_ARGS(GST_BUFFER_PTS(b)), GST_TIME_ARGS(pos));
            GstMapInfo map;
            gst_buffer_map(b, &map, GST_MAP_READ);
            gchar *w = g_strndup((const gchar *)map.data, map.size);
            gst_buffer_unmap(b, &map);
            gchar *stripped = g_strstrip(g_strdup(w));
            fail_if(strchr(stripped, ' ') != NULL, "'%s': not a word", w);
            g_free(stripped);
            g_free(w);
            words++;
            pos = MAX(pos, GST_BUFFER_PTS(b) + GST_BUFFER_DURATION(b));
            gst_buffer_unref(b);
        }
        if (!eos)
            g_usleep(10000);
    }
    g_print("transcriber: %u word buffers, %u GAPs, text time at %" GST_TIME_FORMAT
            " (audio ends %" GST_TIME_FORMAT ")\n", words, gaps, GST_TIME_ARGS(pos),
            GST_TIME_ARGS(end));
    fail_unless(caps_ok, "no text caps on src");
    fail_unless(words >= 3, "only %u word buffers", words);
    fail_unless(gaps >= 1, "no GAP");
    fail_unless(pos == end, "text time reached %" GST_TIME_FORMAT ", not the end %"
                GST_TIME_FORMAT, GST_TIME_ARGS(pos), GST_TIME_ARGS(end));
    g_free(pcm);
    gst_harness_teardown(h);
    gst_object_unref(e);
}
GST_END_TEST

static Suite *transcriber_suite(void)
{
    Suite *s = suite_create("whisper-transcriber");
    TCase *tc = tcase_create("general");
    tcase_set_timeout(tc, 240);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_pads_are_a_transcribers);
    tcase_add_test(tc, test_names_are_ours);
    tcase_add_test(tc, test_latency_query);
    tcase_add_test(tc, test_live_words_and_gaps);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    return wh_run_suite(transcriber_suite(), "whisper-transcriber");
}
