/* Words and cues on the whisper element, offline (issue 13, item 3): with
 * word-timestamps on, text-unit=word gives one buffer per word equal to the core's
 * words (what `whisperkv-transcribe --mel-norm window --word-timestamps -o json`
 * prints) and text-unit=cue the cues the CLI's cutter (cues/cue_cut.c) makes of those
 * words; word buffers never go back in time; whisper-segment messages carry the words;
 * word or cue without word-timestamps fails to start.  On shared/speech/gb0 with the
 * micro-en test-vector model (skipped, 77, without the shared data). */
#include "cue_cut.h"
#include "cue_text.h"
#include "gstwhisper.h"
#include "testutil.h"
#include "wav.h"
#include "whisper_check.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static wav_data gb0;
static gchar *micro_en; /* shared/testvectors/micro-en/model.bin */
#define N_SAMPLES (16000 * 40) /* two windows of gb0 keep the checks short */

static GstClockTime secs_ns(double s)
{
    return s <= 0 ? 0 : (GstClockTime)llround(s * 1e9);
}

typedef struct {
    GPtrArray *words; /* TextSeg: the core's words */
    GPtrArray *cues;  /* TextSeg: the cutter's cues */
    cue_cutter *cut;
    guint n_segments;
} CoreWords;

static void core_cue(const cue_word *w, guint n, void *user)
{
    CoreWords *c = user;
    gchar *text = cue_text(w, n, FALSE, -1);
    GstClockTime a = secs_ns(w[0].start), b = secs_ns(w[n - 1].end);
    textseg_add(c->cues, a, b > a ? b - a : 0, text);
    g_free(text);
}

static int core_words_cb(const wkv_segment *seg, void *user)
{
    CoreWords *c = user;
    c->n_segments++;
    for (int k = 0; k < seg->n_words; k++) {
        GstClockTime a = secs_ns(seg->words[k].start), b = secs_ns(seg->words[k].end);
        textseg_add(c->words, a, b > a ? b - a : 0, seg->words[k].word);
    }
    cue_cutter_segment(c->cut, seg);
    return 0;
}

/* The core's words and cues on the first N_SAMPLES of gb0. */
static CoreWords core_words(const cue_cut_options *cue)
{
    CoreWords c = {textseg_array_new(), textseg_array_new(), NULL, 0};
    c.cut = cue_cutter_new(cue, core_cue, &c);
    wkv_options o;
    wkv_options_default(&o);
    o.word_timestamps = 1;
    core_run(micro_en, gb0.samples, N_SAMPLES, &o, core_words_cb, &c);
    cue_cutter_finish(c.cut);
    cue_cutter_free(c.cut);
    return c;
}

static void core_words_free(CoreWords *c)
{
    g_ptr_array_unref(c->words);
    g_ptr_array_unref(c->cues);
}

/* Every buffer starts at or after the one before it. */
static void assert_forward(GPtrArray *got, const gchar *what)
{
    for (guint i = 1; i < got->len; i++) {
        const TextSeg *a = g_ptr_array_index(got, i - 1), *b = g_ptr_array_index(got, i);
        fail_unless(b->pts >= a->pts, "%s: buffer %u ('%s') starts at %" GST_TIME_FORMAT
                    " before buffer %u ('%s') at %" GST_TIME_FORMAT, what, i, b->text,
                    GST_TIME_ARGS(b->pts), i - 1, a->text, GST_TIME_ARGS(a->pts));
    }
}

GST_START_TEST(test_word_buffers_equal_core)
{
    cue_cut_options none = {0, 0, 0};
    CoreWords want = core_words(&none);
    fail_unless(want.words->len > 10, "the core gives %u words", want.words->len);
    WhisperHarness wh;
    wh_setup(&wh, micro_en, TRUE, "word-timestamps", TRUE, "text-unit",
             GST_WHISPER_TEXT_UNIT_WORD, NULL);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(wh.element, bus);
    wh_push_pcm(&wh, gb0.samples, N_SAMPLES, 4000, 0, TRUE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_forward(got, "word buffers");
    assert_same_segments(got, want.words, "text-unit=word");

    /* the messages: one per segment, their words the same words */
    guint n_msg = 0, n_words = 0;
    GstMessage *msg;
    while ((msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT))) {
        const GstStructure *s = gst_message_get_structure(msg);
        if (gst_structure_has_name(s, "whisper-segment")) {
            const GValue *list = gst_structure_get_value(s, "words");
            fail_unless(list != NULL && GST_VALUE_HOLDS_LIST(list), "no words list");
            for (guint i = 0; i < gst_value_list_get_size(list); i++, n_words++) {
                const GstStructure *w = gst_value_get_structure(gst_value_list_get_value(list, i));
                fail_unless(n_words < want.words->len);
                const TextSeg *t = g_ptr_array_index(want.words, n_words);
                guint64 start = 0, end = 0;
                gdouble p = -1;
                fail_unless(gst_structure_get(w, "start", G_TYPE_UINT64, &start, "end",
                                              G_TYPE_UINT64, &end, "probability",
                                              G_TYPE_DOUBLE, &p, NULL));
                fail_unless_equals_string(gst_structure_get_string(w, "word"), t->text);
                fail_unless(start == t->pts && end == t->pts + t->duration,
                            "word %u: message times differ", n_words);
                fail_unless(p >= 0 && p <= 1, "word %u: probability %g", n_words, p);
            }
            n_msg++;
        }
        gst_message_unref(msg);
    }
    fail_unless(n_msg == want.n_segments, "%u messages for %u segments", n_msg,
                want.n_segments);
    fail_unless(n_words == want.words->len, "%u words in messages, %u from the core", n_words,
                want.words->len);
    g_print("text-unit=word: %u word buffers equal the core's (%u segments)\n", got->len,
            n_msg);
    gst_element_set_bus(wh.element, NULL);
    gst_object_unref(bus);
    g_ptr_array_unref(got);
    core_words_free(&want);
    wh_teardown(&wh);
}
GST_END_TEST

static void check_cues(int width, int count, int per_line)
{
    cue_cut_options o = {width, count, per_line};
    CoreWords want = core_words(&o);
    fail_unless(want.cues->len > 1, "the cutter gives %u cues", want.cues->len);
    WhisperHarness wh;
    wh_setup(&wh, micro_en, TRUE, "word-timestamps", TRUE, "text-unit",
             GST_WHISPER_TEXT_UNIT_CUE, "max-line-width", width, "max-line-count", count,
             "max-words-per-line", per_line, NULL);
    wh_push_pcm(&wh, gb0.samples, N_SAMPLES, 4000, 0, TRUE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    gchar *what = g_strdup_printf("text-unit=cue max-line-width=%d max-line-count=%d "
                                  "max-words-per-line=%d", width, count, per_line);
    assert_forward(got, what);
    assert_same_segments(got, want.cues, what);
    g_print("%s: %u cues equal the CLI cutter's\n", what, got->len);
    g_free(what);
    g_ptr_array_unref(got);
    core_words_free(&want);
    wh_teardown(&wh);
}

GST_START_TEST(test_cue_buffers_equal_cli_cutter)
{
    check_cues(42, 2, 0);
    check_cues(0, 0, 3);
}
GST_END_TEST

/* The element's cue buffers as SubRip, numbered from 1, times at whole ms as the
 * CLI rounds them (the buffers start at 0 here: PTS is the cue's start). */
static gchar *buffers_srt(GPtrArray *got)
{
    GString *srt = g_string_new(NULL);
    for (guint i = 0; i < got->len; i++) {
        const TextSeg *t = g_ptr_array_index(got, i);
        guint64 ms[2] = {(t->pts + 500000) / 1000000, (t->pts + t->duration + 500000) / 1000000};
        g_string_append_printf(srt, "%u\n", i + 1);
        for (int k = 0; k < 2; k++)
            g_string_append_printf(srt, "%02" G_GUINT64_FORMAT ":%02" G_GUINT64_FORMAT
                                   ":%02" G_GUINT64_FORMAT ",%03" G_GUINT64_FORMAT "%s",
                                   ms[k] / 3600000, ms[k] / 60000 % 60, ms[k] / 1000 % 60,
                                   ms[k] % 1000, k ? "\n" : " --> ");
        g_string_append_printf(srt, "%s\n\n", t->text);
    }
    return g_string_free(srt, FALSE);
}

/* The test's samples as a 16-bit WAV (exact: they were read from one). */
static gchar *write_samples_wav(void)
{
    gchar *path = NULL;
    gint fd = g_file_open_tmp("whisper-words-XXXXXX.wav", &path, NULL);
    fail_unless(fd >= 0, "no temporary file");
    guint32 data = N_SAMPLES * 2;
    guint8 h[44] = "RIFF....WAVEfmt ";
    guint32 v32[] = {36 + data, 16, 1 | (1u << 16), 16000, 32000, 2 | (16u << 16)};
    memcpy(h + 4, &v32[0], 4);
    memcpy(h + 16, &v32[1], 20);
    memcpy(h + 36, "data", 4);
    memcpy(h + 40, &data, 4);
    gint16 *pcm = g_new(gint16, N_SAMPLES);
    for (gsize i = 0; i < N_SAMPLES; i++)
        pcm[i] = (gint16)lrintf(gb0.samples[i] * 32768.0f);
    FILE *f = fdopen(fd, "wb");
    fail_unless(f && fwrite(h, 1, 44, f) == 44 && fwrite(pcm, 2, N_SAMPLES, f) == N_SAMPLES &&
                fclose(f) == 0, "cannot write %s", path);
    g_free(pcm);
    return path;
}

/* The element's cue buffers written as SubRip equal, byte for byte, what the CLI
 * (WHISPER_TEST_CLI) writes with -o srt for the same samples and cue options, with
 * and without highlight-words. */
static void check_cli_srt(const gchar *wav, int width, int count, int per_line, gboolean hl)
{
    gchar *w = g_strdup_printf("%d", width), *c = g_strdup_printf("%d", count);
    gchar *p = g_strdup_printf("%d", per_line);
    const gchar *argv[] = {g_getenv("WHISPER_TEST_CLI"), "-m", micro_en, "--mel-norm", "window",
                           "--word-timestamps", "-o", "srt", "--max-line-width", w,
                           "--max-line-count", c, "--max-words-per-line", p,
                           hl ? "--highlight-words" : wav, hl ? wav : NULL, NULL};
    gchar *out = NULL, *err = NULL;
    gint status = -1;
    fail_unless(g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                             &status, NULL) && g_spawn_check_wait_status(status, NULL),
                "the CLI failed: %s", err ? err : "?");
    WhisperHarness wh;
    wh_setup(&wh, micro_en, TRUE, "word-timestamps", TRUE, "text-unit",
             GST_WHISPER_TEXT_UNIT_CUE, "max-line-width", width, "max-line-count", count,
             "max-words-per-line", per_line, "highlight-words", hl, NULL);
    wh_push_pcm(&wh, gb0.samples, N_SAMPLES, 4000, 0, TRUE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    /* highlighted cues carry markup: caps pango-markup, text escaped (the CLI's SRT is
     * not: unescaped for the comparison); plain cues utf8 */
    GstPad *tp = gst_element_get_static_pad(wh.element, "text_src");
    GstCaps *caps = gst_pad_get_current_caps(tp);
    fail_unless(caps != NULL);
    fail_unless_equals_string(gst_structure_get_string(gst_caps_get_structure(caps, 0), "format"),
                              hl ? "pango-markup" : "utf8");
    gst_caps_unref(caps);
    gst_object_unref(tp);
    for (guint i = 0; hl && i < got->len; i++) {
        TextSeg *t = g_ptr_array_index(got, i);
        gchar *plain = wh_markup_unescape(t->text);
        g_free(t->text);
        t->text = plain;
    }
    gchar *mine = buffers_srt(got);
    gsize at = 0;
    while (mine[at] && mine[at] == out[at])
        at++;
    fail_unless(got->len > 1 && mine[at] == out[at],
                "width %d count %d per line %d highlight %d: %u buffers; the element's SRT "
                "differs from the CLI's at byte %" G_GSIZE_FORMAT ": '%.40s' vs '%.40s'", width,
                count, per_line, hl, got->len, at, mine + at, out + at);
    g_print("max-line-width %d max-line-count %d max-words-per-line %d highlight-words %d: "
            "%u buffers, SRT byte-equal to the CLI's (%" G_GSIZE_FORMAT " bytes)\n", width, count,
            per_line, hl, got->len, strlen(out));
    g_free(mine);
    g_ptr_array_unref(got);
    wh_teardown(&wh);
    g_free(out);
    g_free(err);
    g_free(w);
    g_free(c);
    g_free(p);
}

GST_START_TEST(test_cue_buffers_equal_cli_srt)
{
    if (!g_getenv("WHISPER_TEST_CLI")) {
        fail_if(g_getenv("CI") && strcmp(g_getenv("CI"), "false"), "CI without the CLI");
        g_print("skipped: WHISPER_TEST_CLI unset (meson -Dexamples=disabled)\n");
        return;
    }
    gchar *wav = write_samples_wav();
    check_cli_srt(wav, 42, 2, 0, FALSE);
    check_cli_srt(wav, 0, 0, 3, FALSE);
    check_cli_srt(wav, 42, 2, 0, TRUE);
    g_unlink(wav);
    g_free(wav);
}
GST_END_TEST

/* text-unit=word or cue without word-timestamps: the element does not start, and
 * its error names what to set. */
GST_START_TEST(test_unit_needs_word_timestamps)
{
    for (gint unit = GST_WHISPER_TEXT_UNIT_WORD; unit <= GST_WHISPER_TEXT_UNIT_CUE; unit++) {
        GstElement *e = gst_element_factory_make("whisperkv", NULL);
        g_object_set(e, "model", micro_en, "text-unit", unit, NULL);
        GstBus *bus = gst_bus_new();
        gst_element_set_bus(e, bus);
        fail_unless(gst_element_set_state(e, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE);
        GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        fail_unless(msg != NULL, "no error message");
        GError *err = NULL;
        gst_message_parse_error(msg, &err, NULL);
        fail_unless(strstr(err->message, "word-timestamps") != NULL, "error: %s", err->message);
        g_error_free(err);
        gst_message_unref(msg);
        gst_element_set_state(e, GST_STATE_NULL);
        gst_element_set_bus(e, NULL);
        gst_object_unref(bus);
        gst_object_unref(e);
    }
}
GST_END_TEST

static Suite *words_suite(void)
{
    Suite *s = suite_create("whisper-words");
    TCase *tc = tcase_create("words");
    tcase_set_timeout(tc, 150);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_word_buffers_equal_core);
    tcase_add_test(tc, test_cue_buffers_equal_cli_cutter);
    tcase_add_test(tc, test_cue_buffers_equal_cli_srt);
    tcase_add_test(tc, test_unit_needs_word_timestamps);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    tu_require_shared("the whisper element's word checks (speech/gb0, testvectors/micro-en)");
    char err[256];
    if (wav_read(tu_shared_path("speech/gb0/gb0.wav"), &gb0, err, sizeof err) != 0 ||
        gb0.rate != 16000 || gb0.n < N_SAMPLES) {
        g_printerr("gb0.wav: %s\n", err);
        return 1;
    }
    micro_en = g_build_filename(tu_shared_dir(), "testvectors", "micro-en", "model.bin", NULL);
    int r = wh_run_suite(words_suite(), "whisper-words");
    wav_free(&gb0);
    g_free(micro_en);
    return r;
}
