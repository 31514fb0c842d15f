/* The whisper element's offline batching (batch-size, issue 32 item 2): its text is
 * the core's wkv_transcribe_chunks over the same chunks decoded one at a time (batch
 * size 1), times included: plain 30-s chunks over a stretch several batches long (a
 * full batch as the audio comes, the rest at EOS), a stretch that ends at EOS before
 * its first batch filled, a batch longer than the sequential path's bound on held audio,
 * a flush while a batch decodes, words (text-unit=word), and with vad-model the speech
 * chunks (wkv_chunks_from_speech, needs the shared Silero model and jfk.wav: that check
 * passes saying so without them, fails under CI=true).  batch-size 0 and 1 keep the
 * sequential long form; the property round-trips.  On the short model (32 tokens a
 * window), no temperature fallback. */
#include "gstwhisper.h"
#include "testutil.h"
#include "wav.h"
#include "whisper_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SR 16000

typedef struct {
    GPtrArray *segs;
    GstClockTime t0;
    gboolean words; /* a TextSeg per word */
} Collect;

static int collect_cb(const wkv_segment *seg, void *user)
{
    Collect *c = user;
    for (int k = 0; c->words && k < seg->n_words; k++) {
        GstClockTime a = (GstClockTime)llround(seg->words[k].start * 1e9);
        GstClockTime b = (GstClockTime)llround(seg->words[k].end * 1e9);
        textseg_add(c->segs, c->t0 + a, b > a ? b - a : 0, seg->words[k].word);
    }
    if (c->words)
        return 0;
    GstClockTime a = (GstClockTime)llround(seg->start * 1e9);
    GstClockTime b = (GstClockTime)llround(seg->end * 1e9);
    textseg_add(c->segs, c->t0 + a, b - a, seg->text);
    return 0;
}

/* The core on pcm[0..n): `chunks` (NULL: plain 30-s ones) decoded one at a time, with
 * the element's options (window normalization, no fallback), times from t0. */
static GPtrArray *core_chunks_words(const gchar *model, const float *pcm, gsize n,
                                    const wkv_chunk *chunks, int nc, GstClockTime t0,
                                    gboolean words);

static GPtrArray *core_chunks(const float *pcm, gsize n, const wkv_chunk *chunks, int nc,
                              GstClockTime t0)
{
    return core_chunks_words(test_model, pcm, n, chunks, nc, t0, FALSE);
}

/* The same on `model`; with `words`, word timestamps on (sample_len 24, as the
 * element's in test_batch_words) and one TextSeg per word instead. */
static GPtrArray *core_chunks_words(const gchar *model, const float *pcm, gsize n,
                                    const wkv_chunk *chunks, int nc, GstClockTime t0,
                                    gboolean words)
{
    char *err = NULL;
    wkv_model *m = wkv_model_load(model, &err);
    fail_unless(m != NULL, "core: %s", err ? err : "");
    wkv_context *ctx = wkv_context_new(m, 1, &err);
    fail_unless(ctx != NULL, "core: %s", err ? err : "");
    wkv_chunk *plain = NULL;
    if (!chunks) {
        nc = wkv_chunks_plain(n, &plain, &err);
        fail_unless(nc > 0, "core: %s", err ? err : "");
        chunks = plain;
    }
    wkv_options o;
    wkv_options_default(&o);
    o.mel_norm = WKV_MEL_WINDOW;
    o.temperature_increment = 0.0f;
    if (words) {
        o.word_timestamps = 1;
        o.sample_len = 24;
    }
    Collect c = {textseg_array_new(), t0, words};
    int r = wkv_transcribe_chunks(ctx, pcm, n, chunks, nc, 1, &o, collect_cb, NULL, &c, &err);
    fail_unless(r >= 0, "core: %s", err ? err : "");
    /* the element's text never goes back (docs/element.md, "Hostile input"): a segment
     * that the model timed past the start of the next chunk (short VAD chunks: up to
     * 30 s of timestamps after theirs) moves the next one's start there, end kept */
    GstClockTime floor = 0;
    for (guint i = 0; i < c.segs->len; i++) {
        TextSeg *t = g_ptr_array_index(c.segs, i);
        if (t->pts < floor) {
            GstClockTime end = t->pts + t->duration;
            t->pts = floor;
            t->duration = end > floor ? end - floor : 0;
        }
        floor = t->pts;
    }
    free(plain);
    wkv_context_free(ctx);
    wkv_model_free(m);
    return c.segs;
}

static void setup_batch(WhisperHarness *wh, gint batch_size)
{
    wh_setup(wh, test_model, FALSE, "batch-size", batch_size, "temperature-fallback", FALSE,
             NULL);
}

/* How many segments start before and at or after `t`. */
static void count_around(GPtrArray *segs, GstClockTime t, guint *before, guint *after)
{
    *before = *after = 0;
    for (guint i = 0; i < segs->len; i++) {
        const TextSeg *s = g_ptr_array_index(segs, i);
        if (s->pts < t)
            (*before)++;
        else
            (*after)++;
    }
}

/* 130 s in one stretch from PTS 7 s, batch-size 4: the first 120 s decode as one batch
 * of four chunks once they are in, the last 10 s at EOS; the text (PTS, end, order)
 * is the core's chunks decoded one by one. */
GST_START_TEST(test_batch_matches_chunks)
{
    const gsize n = SR * 130;
    const GstClockTime t0 = 7 * GST_SECOND;
    float *pcm = synth_audio(n, 11);
    GPtrArray *want = core_chunks(pcm, n, NULL, 0, t0);
    WhisperHarness wh;
    setup_batch(&wh, 4);
    wh_push_pcm(&wh, pcm, n, SR / 2, t0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    guint before, after;
    count_around(want, t0 + 120 * GST_SECOND, &before, &after);
    fail_unless(before > 0 && after > 0, "the core gave %u segments in the first batch and "
                "%u after it: the check needs both", before, after);
    assert_same_segments(got, want, "batch-size 4");
    /* the tags carry the same text */
    fail_unless_equals_int(wh.tags->len, want->len);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* A batch longer than the sequential path's bound on held audio (4 windows): 160 s,
 * batch-size 5 (150 s a batch).  Chain must not wait for space the worker only frees
 * once the batch is in. */
GST_START_TEST(test_batch_above_queue_bound)
{
    const gsize n = SR * 160;
    float *pcm = synth_audio(n, 16);
    GPtrArray *want = core_chunks(pcm, n, NULL, 0, 0);
    WhisperHarness wh;
    setup_batch(&wh, 5);
    wh_push_pcm(&wh, pcm, n, SR, 0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "batch-size 5");
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* EOS before the first batch filled (70 s, batch-size 4: 120 s a batch): every chunk's
 * text still goes out, before EOS. */
GST_START_TEST(test_batch_eos_mid_batch)
{
    const gsize n = SR * 70;
    float *pcm = synth_audio(n, 12);
    GPtrArray *want = core_chunks(pcm, n, NULL, 0, 0);
    fail_unless(want->len > 0);
    WhisperHarness wh;
    setup_batch(&wh, 4);
    wh_push_pcm(&wh, pcm, n, SR, 0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "EOS mid-batch");
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* A flush while the first batch decodes (or just before): that audio leaves no text,
 * the stretch after the new segment is transcribed from scratch. */
GST_START_TEST(test_batch_flush_mid_batch)
{
    const gsize na = SR * 65, nb = SR * 70;
    float *a = synth_audio(na, 13), *b = synth_audio(nb, 14);
    const GstClockTime t1 = 100 * GST_SECOND;
    GPtrArray *want = core_chunks(b, nb, NULL, 0, t1);
    WhisperHarness wh;
    setup_batch(&wh, 2);
    wh_push_pcm(&wh, a, na, SR, 0, FALSE, FALSE);
    fail_unless(gst_harness_push_event(wh.h, gst_event_new_flush_start()));
    fail_unless(gst_harness_push_event(wh.h, gst_event_new_flush_stop(TRUE)));
    GstSegment seg;
    gst_segment_init(&seg, GST_FORMAT_TIME);
    seg.start = seg.time = t1;
    fail_unless(gst_harness_push_event(wh.h, gst_event_new_segment(&seg)));
    GstBuffer *old;
    while ((old = gst_harness_try_pull(wh.text)))
        gst_buffer_unref(old);
    GstEvent *ev;
    while ((ev = gst_harness_try_pull_event(wh.text)))
        gst_event_unref(ev);
    wh_push_pcm(&wh, b, nb, SR, t1, FALSE, TRUE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "after the flush");
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(a);
    g_free(b);
}
GST_END_TEST

/* batch-size 0 and 1 are the sequential long form (the core's wkv_transcribe). */
GST_START_TEST(test_batch_one_is_sequential)
{
    const gsize n = SR * 40;
    float *pcm = synth_audio(n, 15);
    wkv_options o;
    wkv_options_default(&o);
    o.temperature_increment = 0.0f;
    GPtrArray *want = core_segments_opts(test_model, pcm, n, 0, &o);
    for (gint bs = 0; bs <= 1; bs++) {
        WhisperHarness wh;
        setup_batch(&wh, bs);
        wh_push_pcm(&wh, pcm, n, SR, 0, FALSE, FALSE);
        GPtrArray *got = wh_finish(&wh);
        assert_same_segments(got, want, bs ? "batch-size 1" : "batch-size 0");
        g_ptr_array_unref(got);
        wh_teardown(&wh);
    }
    g_ptr_array_unref(want);
    g_free(pcm);
}
GST_END_TEST

/* Word timestamps (text-unit=word): each word's buffer is the core's word of the same
 * chunk, its times moved onto the stretch as the segments' are: 70 s from PTS 2 s,
 * batch-size 2 (a batch of two chunks, then one at EOS).  On the full micro model
 * (the short one's 300 frames cannot time words), 24 tokens a window at most. */
GST_START_TEST(test_batch_words)
{
    const gchar *micro = g_getenv("WHISPER_TEST_MODEL_MICRO");
    fail_unless(micro != NULL, "WHISPER_TEST_MODEL_MICRO is not set");
    const gsize n = SR * 70;
    const GstClockTime t0 = 2 * GST_SECOND;
    float *pcm = synth_audio(n, 17);
    GPtrArray *want = core_chunks_words(micro, pcm, n, NULL, 0, t0, TRUE);
    guint before, after;
    count_around(want, t0 + 60 * GST_SECOND, &before, &after);
    fail_unless(before > 0 && after > 0, "the core gave %u words in the first batch and %u "
                "after it: the check needs both", before, after);
    WhisperHarness wh;
    wh_setup(&wh, micro, FALSE, "batch-size", 2, "temperature-fallback", FALSE,
             "word-timestamps", TRUE, "text-unit", 1 /* word */, "sample-len", 24, NULL);
    wh_push_pcm(&wh, pcm, n, SR, t0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "words, batch-size 2");
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* The property: 0 by default, 0 .. 64, read back as set, on both elements. */
GST_START_TEST(test_batch_property)
{
    const gchar *names[] = {"whisperkv", "whisperkvtranscriber"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        GstElement *e = gst_element_factory_make(names[i], NULL);
        fail_unless(e != NULL);
        GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "batch-size");
        fail_unless(ps != NULL && G_IS_PARAM_SPEC_INT(ps), "%s: no batch-size", names[i]);
        fail_unless_equals_int(G_PARAM_SPEC_INT(ps)->default_value, 0);
        fail_unless_equals_int(G_PARAM_SPEC_INT(ps)->minimum, 0);
        fail_unless_equals_int(G_PARAM_SPEC_INT(ps)->maximum, 64);
        fail_unless(ps->flags & GST_PARAM_MUTABLE_READY);
        gint v = -1;
        g_object_get(e, "batch-size", &v, NULL);
        fail_unless_equals_int(v, 0);
        g_object_set(e, "batch-size", 8, NULL);
        g_object_get(e, "batch-size", &v, NULL);
        fail_unless_equals_int(v, 8);
        g_object_set(e, "batch-size", 64, NULL);
        g_object_get(e, "batch-size", &v, NULL);
        fail_unless_equals_int(v, 64);
        gst_object_unref(e);
    }
}
GST_END_TEST

/* With vad-model the chunks are the speech merged up to 30 s (max speech 30 s), as the
 * CLI's --batch-size with --vad-model: jfk four times with 15 s of zeros between, from
 * PTS 3 s, batch-size 2. */
GST_START_TEST(test_batch_vad_chunks)
{
    if (!tu_require_shared("test_batch_vad_chunks (models/, speech/jfk)"))
        return;
    gchar *vad_path = g_build_filename(tu_shared_dir(), "models",
                                       "for-tests-silero-v6.2.0-ggml.bin", NULL);
    char msg[256];
    wav_data jfk;
    fail_unless(wav_read(tu_shared_path("speech/jfk/jfk.wav"), &jfk, msg, sizeof msg) == 0,
                "jfk.wav: %s", msg);
    const gsize gap = SR * 15, n = 4 * jfk.n + 3 * gap;
    float *pcm = g_new0(float, n);
    for (int i = 0; i < 4; i++)
        memcpy(pcm + i * (jfk.n + gap), jfk.samples, jfk.n * sizeof(float));
    const GstClockTime t0 = 3 * GST_SECOND;

    char *err = NULL;
    wkv_vad_model *vm = wkv_vad_model_load(vad_path, &err);
    fail_unless(vm != NULL, "%s", err ? err : "");
    wkv_vad_params p;
    wkv_vad_params_default(&p);
    p.max_speech_duration_s = 30.0f;
    float *probs = NULL;
    wkv_vad_segment *segs = NULL;
    wkv_chunk *chunks = NULL;
    int64_t np = wkv_vad_probs(vm, pcm, n, &probs, &err);
    int ns = np < 0 ? -1 : wkv_vad_segments(probs, np, &p, &segs, &err);
    int nc = ns < 0 ? -1 : wkv_chunks_from_speech(segs, ns, n, &chunks, &err);
    fail_unless(nc >= 4, "%d chunks: %s", nc, err ? err : "");
    GPtrArray *want = core_chunks(pcm, n, chunks, nc, t0);
    fail_unless(want->len > 0);

    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, "batch-size", 2, "temperature-fallback", FALSE,
             "vad-model", vad_path, NULL);
    wh_push_pcm(&wh, pcm, n, SR, t0, FALSE, FALSE);
    GPtrArray *got = wh_finish(&wh);
    assert_same_segments(got, want, "batch-size 2 with VAD");
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    wh_teardown(&wh);
    free(probs);
    free(segs);
    free(chunks);
    wkv_vad_model_free(vm);
    wav_free(&jfk);
    g_free(pcm);
    g_free(vad_path);
}
GST_END_TEST

static Suite *batch_suite(void)
{
    Suite *s = suite_create("whisper-batch");
    TCase *tc = tcase_create("general");
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_batch_matches_chunks);
    tcase_add_test(tc, test_batch_above_queue_bound);
    tcase_add_test(tc, test_batch_eos_mid_batch);
    tcase_add_test(tc, test_batch_flush_mid_batch);
    tcase_add_test(tc, test_batch_words);
    tcase_add_test(tc, test_batch_one_is_sequential);
    tcase_add_test(tc, test_batch_property);
    tcase_add_test(tc, test_batch_vad_chunks);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    return wh_run_suite(batch_suite(), "whisper-batch");
}
