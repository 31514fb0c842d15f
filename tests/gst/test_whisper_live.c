/* The element's live text against the core's live stream: the element driven live
 * through a harness, one step of audio at a time, must commit exactly what
 * wkv_stream commits on the same samples (text, PTS, end, order), and its finals and
 * GAPs must cover the stretch without holes or overlaps.  With word-timestamps and
 * text-unit=word the same for the words of wkv_stream's word mode, one buffer each,
 * never starting before the one before. */
#include "cue_cut.h"
#include "cue_text.h"
#include "gstwhisper.h"
#include "whisper_check.h"

#include <math.h>
#include <string.h>

#define STEP_MS 2000
#define STEP_SAMPLES (16000 * STEP_MS / 1000)
/* Longer than any run can wait (30 s held plus a step plus the run): only the 30-s cap
 * and EOS force commits, so the result does not depend on compute time. */
#define LONG_LATENCY 600000

typedef struct {
    GstClockTime t0;
    GPtrArray *finals; /* TextSeg: segments, or (words) words */
    gboolean words;
} StreamOracle;

static GstClockTime after_ns(double secs)
{
    return secs <= 0 ? 0 : (GstClockTime)llround(secs * 1e9);
}

static void oracle_segment(const wkv_stream_segment *seg, void *user)
{
    StreamOracle *o = user;
    if (!seg->final)
        return;
    /* the exact mapping: the run's first sample, then the times from it */
    GstClockTime base = o->t0 + gst_util_uint64_scale_int((guint64)seg->run_base, GST_SECOND,
                                                          16000);
    if (!o->words) {
        GstClockTime a = after_ns(seg->rel_start), e = after_ns(seg->rel_end);
        textseg_add(o->finals, base + a, e - a, seg->text);
        return;
    }
    const double base_s = (double)seg->run_base / 16000;
    for (int k = 0; k < seg->n_words; k++) {
        GstClockTime a = after_ns(seg->words[k].start - base_s);
        GstClockTime e = after_ns(seg->words[k].end - base_s);
        textseg_add(o->finals, base + a, e > a ? e - a : 0, seg->words[k].word);
    }
}

/* The commit policy of the element and the oracle (test_live_alignatt_equals_stream). */
static gint live_policy = WKV_COMMIT_AGREEMENT;
static guint live_threshold = 500;
static guint live_max_held = 0; /* max-held / wkv_stream_options.max_held_ms */

/* A clock that stands still: runs take no time. */
static double still_clock(void *user)
{
    (void)user;
    return 0.0;
}

/* What wkv_stream commits on pcm[0..n) pushed one step at a time, then finished:
 * its finals, or (words) their words. */
static GPtrArray *stream_finals(const float *pcm, gsize n, GstClockTime t0, gboolean words)
{
    char *err = NULL;
    wkv_model *m = wkv_model_load(test_model, &err);
    fail_unless(m != NULL, "core: %s", err ? err : "");
    wkv_context *ctx = wkv_context_new(m, 1, &err);
    fail_unless(ctx != NULL, "core: %s", err ? err : "");
    wkv_options o; /* the element's defaults are the core's */
    wkv_options_default(&o);
    o.mel_norm = WKV_MEL_WINDOW;
    o.word_timestamps = words;
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.step_ms = STEP_MS;
    so.latency_ms = LONG_LATENCY;
    so.clock_ms = still_clock;
    so.commit_policy = live_policy;
    so.frame_threshold_ms = (int)live_threshold;
    so.max_held_ms = (int)live_max_held;
    StreamOracle or = {t0, textseg_array_new(), words};
    wkv_stream *st = wkv_stream_new(ctx, &o, &so, oracle_segment, &or, &err);
    fail_unless(st != NULL, "core: %s", err ? err : "");
    for (gsize off = 0; off < n; off += STEP_SAMPLES) {
        gsize k = MIN((gsize)STEP_SAMPLES, n - off);
        fail_unless(wkv_stream_push(st, pcm + off, k, (double)(off + k) / 16000, &err) >= 0,
                    "core: %s", err ? err : "");
    }
    fail_unless(wkv_stream_finish(st, (double)n / 16000, &err) >= 0, "core: %s", err ? err : "");
    wkv_stream_free(st);
    wkv_context_free(ctx);
    wkv_model_free(m);
    return or.finals;
}

/* Timestamp jitter of the pushed buffers (test_live_jitter): +-this, 0 for none. */
static GstClockTime jitter;

/* One step of audio: one buffer, or with `jitter` 0.1-s buffers whose PTS (but the
 * stream's first) are each moved by up to +-jitter, as a capture device's. */
static void push_step(WhisperHarness *wh, const float *pcm, gsize n, GstClockTime pts,
                      gboolean discont)
{
    static GRand *r;
    if (!r)
        r = g_rand_new_with_seed(68);
    gsize piece = jitter ? 1600 : n;
    for (gsize off = 0; off < n; off += piece) {
        gsize k = MIN(piece, n - off);
        GstBuffer *buf = gst_buffer_new_allocate(NULL, k * 4, NULL);
        gst_buffer_fill(buf, 0, pcm + off, k * 4);
        gint64 d = discont && off == 0 ? 0
                 : (gint64)g_rand_double_range(r, -(double)jitter, (double)jitter);
        GST_BUFFER_PTS(buf) = pts + gst_util_uint64_scale_int(off, GST_SECOND, 16000) + d;
        GST_BUFFER_DURATION(buf) = gst_util_uint64_scale_int(k, GST_SECOND, 16000);
        if (discont && off == 0)
            GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DISCONT);
        fail_unless_equals_int(gst_harness_push(wh->h, buf), GST_FLOW_OK);
        gst_buffer_unref(gst_harness_pull(wh->h));
    }
}

/* Pushes one step and waits (up to 20 s) for the run it starts, like a capture
 * device the worker keeps up with: the runs then see the same audio as the oracle's. */
static void push_step_paced(WhisperHarness *wh, const float *pcm, gsize n, GstClockTime pts,
                            gboolean discont)
{
    guint64 before = 0, now = 0;
    g_object_get(wh->element, "windows", &before, NULL);
    push_step(wh, pcm, n, pts, discont);
    for (int i = 0; i < 4000 && now <= before; i++) {
        g_usleep(5000);
        g_object_get(wh->element, "windows", &now, NULL);
    }
    fail_unless(now > before, "no run after a step of audio");
}

typedef struct {
    GstClockTime start, end;
} Span;

static gint span_cmp(gconstpointer a, gconstpointer b)
{
    const Span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* EOS, then text_src's GAPs (into `spans`) and text buffers (returned, finals only:
 * partial-results is off). */
static GPtrArray *collect_text(WhisperHarness *wh, GArray *spans)
{
    fail_unless(gst_harness_push_event(wh->h, gst_event_new_eos()));
    for (;;) {
        GstEvent *ev = gst_harness_pull_event(wh->text);
        fail_unless(ev != NULL, "no EOS on text_src");
        GstEventType t = GST_EVENT_TYPE(ev);
        if (t == GST_EVENT_GAP) {
            GstClockTime ts, dur;
            gst_event_parse_gap(ev, &ts, &dur);
            fail_unless(GST_CLOCK_TIME_IS_VALID(dur));
            if (dur > 0) {
                Span s = {ts, ts + dur};
                g_array_append_val(spans, s);
            }
        }
        gst_event_unref(ev);
        if (t == GST_EVENT_EOS)
            break;
    }
    GPtrArray *got = textseg_array_new();
    GstBuffer *b;
    while ((b = gst_harness_try_pull(wh->text))) {
        fail_if(GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT), "a partial buffer");
        GstMapInfo map;
        gst_buffer_map(b, &map, GST_MAP_READ);
        gchar *text = g_strndup((const gchar *)map.data, map.size);
        gst_buffer_unmap(b, &map);
        textseg_add(got, GST_BUFFER_PTS(b), GST_BUFFER_DURATION(b), text);
        g_free(text);
        gst_buffer_unref(b);
    }
    return got;
}

/* Finals in order without overlaps; finals and GAPs together cover [from, to) with no
 * hole and nothing in it twice. */
static void check_cover(GPtrArray *finals, GArray *spans, GstClockTime from, GstClockTime to)
{
    for (guint i = 0; i < finals->len; i++) {
        TextSeg *s = g_ptr_array_index(finals, i);
        if (i > 0) {
            TextSeg *p = g_ptr_array_index(finals, i - 1);
            fail_unless(s->pts >= p->pts + p->duration, "final %u at %" GST_TIME_FORMAT
                        " overlaps the one before (ends %" GST_TIME_FORMAT ")", i,
                        GST_TIME_ARGS(s->pts), GST_TIME_ARGS(p->pts + p->duration));
        }
        if (s->duration > 0) {
            Span sp = {s->pts, s->pts + s->duration};
            g_array_append_val(spans, sp);
        }
    }
    g_array_sort(spans, span_cmp);
    GstClockTime pos = from;
    for (guint i = 0; i < spans->len; i++) {
        const Span *s = &g_array_index(spans, Span, i);
        fail_unless(s->start == pos, "text_src %s at %" GST_TIME_FORMAT " (%" GST_TIME_FORMAT
                    " to %" GST_TIME_FORMAT ")", s->start > pos ? "has a hole" : "overlaps",
                    GST_TIME_ARGS(pos), GST_TIME_ARGS(s->start), GST_TIME_ARGS(s->end));
        pos = s->end;
    }
    fail_unless(pos == to, "text_src covers up to %" GST_TIME_FORMAT ", the stretch ends at %"
                GST_TIME_FORMAT, GST_TIME_ARGS(pos), GST_TIME_ARGS(to));
}

/* The element's text for pcm[0..n) from PTS t0, pushed one step at a time (each run
 * waited for), then EOS; text_src's GAPs into `spans`.  unit word or cue: with
 * word-timestamps (cue: max-line-width 42, max-line-count 2). */
static GPtrArray *element_text(const float *pcm, gsize n, GstClockTime t0,
                               GstWhisperTextUnit unit, GArray *spans)
{
    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, "step", STEP_MS, "latency", LONG_LATENCY,
             "word-timestamps", unit != GST_WHISPER_TEXT_UNIT_SEGMENT, "text-unit", unit,
             "max-line-width", 42, "max-line-count", 2, "commit-policy", live_policy,
             "frame-threshold", live_threshold, "max-held", live_max_held, NULL);
    for (gsize off = 0; off < n; off += STEP_SAMPLES)
        push_step_paced(&wh, pcm + off, MIN((gsize)STEP_SAMPLES, n - off),
                        t0 + gst_util_uint64_scale_int(off, GST_SECOND, 16000), off == 0);
    GPtrArray *got = collect_text(&wh, spans);
    wh_teardown(&wh);
    return got;
}

/* n samples of seed's audio from PTS t0, pushed a step at a time (0.1-s buffers whose
 * PTS jitter by +-jit with jit > 0): the element's finals are wkv_stream's on the same
 * samples, and with its GAPs they cover the stretch. */
static void check_equals_stream(gsize n, GstClockTime t0, guint32 seed, GstClockTime jit)
{
    float *pcm = synth_audio(n, seed);
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(Span));
    jitter = jit;
    GPtrArray *got = element_text(pcm, n, t0, GST_WHISPER_TEXT_UNIT_SEGMENT, spans);
    jitter = 0;
    GPtrArray *want = stream_finals(pcm, n, t0, FALSE);
    g_print("live oracle: %u finals from the element, %u from wkv_stream\n", got->len,
            want->len);
    fail_unless(want->len >= 2, "the oracle needs at least two finals, got %u", want->len);
    assert_same_segments(got, want, jit ? "live element with jitter vs wkv_stream"
                                        : "live element vs wkv_stream");
    check_cover(got, spans, t0, t0 + gst_util_uint64_scale_int(n, GST_SECOND, 16000));
    g_array_unref(spans);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    g_free(pcm);
}

/* 40 s (the 30-s cap forces a commit mid-stream, EOS the rest) from PTS 1 s. */
GST_START_TEST(test_live_equals_stream)
{
    check_equals_stream(16000 * 40, GST_SECOND, 23, 0);
}
GST_END_TEST

/* The same (24 s) with the buffers' timestamps jittering by +-30 ms: the element takes
 * them as GStreamer's audio elements do (within 40 ms the samples decide), so its
 * finals are wkv_stream's on the same samples, one stretch. */
GST_START_TEST(test_live_jitter)
{
    check_equals_stream(16000 * 24, GST_SECOND, 23, 30 * GST_MSECOND);
}
GST_END_TEST

/* text-unit=word live: one buffer per committed word, equal to wkv_stream's words in
 * word mode on the same samples, each starting at or after the one before.  20 s
 * from PTS 0.5 s, one step at a time, EOS committing the rest. */
GST_START_TEST(test_live_words_equal_stream)
{
    const gsize n = 16000 * 20;
    const GstClockTime t0 = GST_SECOND / 2;
    float *pcm = synth_audio(n, 29);
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(Span));
    GPtrArray *got = element_text(pcm, n, t0, GST_WHISPER_TEXT_UNIT_WORD, spans);
    GPtrArray *want = stream_finals(pcm, n, t0, TRUE);
    g_print("live words: %u word buffers from the element, %u words from wkv_stream\n",
            got->len, want->len);
    fail_unless(want->len >= 10, "the oracle needs words, got %u", want->len);
    for (guint i = 1; i < got->len; i++) {
        const TextSeg *a = g_ptr_array_index(got, i - 1), *b = g_ptr_array_index(got, i);
        fail_unless(b->pts >= a->pts, "word buffer %u ('%s') at %" GST_TIME_FORMAT
                    " starts before word %u at %" GST_TIME_FORMAT, i, b->text,
                    GST_TIME_ARGS(b->pts), i - 1, GST_TIME_ARGS(a->pts));
    }
    assert_same_segments(got, want, "live text-unit=word vs wkv_stream's words");
    g_array_unref(spans);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    g_free(pcm);
}
GST_END_TEST

static gboolean same_words(GPtrArray *a, GPtrArray *b)
{
    if (a->len != b->len)
        return FALSE;
    for (guint i = 0; i < a->len; i++) {
        const TextSeg *x = g_ptr_array_index(a, i), *y = g_ptr_array_index(b, i);
        if (x->pts != y->pts || x->duration != y->duration || strcmp(x->text, y->text) != 0)
            return FALSE;
    }
    return TRUE;
}

/* commit-policy=alignatt and frame-threshold reach the stream: the element's words are
 * wkv_stream's with the same policy and threshold (100 ms); the oracle's words at the
 * default 500 ms and with agreement differ (checked), so that the comparison shows both
 * were taken.  The random model's attention stops most runs early: few words. */
GST_START_TEST(test_live_alignatt_equals_stream)
{
    const gsize n = 16000 * 8;
    float *pcm = synth_audio(n, 29);
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(Span));
    live_policy = WKV_COMMIT_ALIGNATT;
    live_threshold = 100;
    GPtrArray *got = element_text(pcm, n, 0, GST_WHISPER_TEXT_UNIT_WORD, spans);
    GPtrArray *want = stream_finals(pcm, n, 0, TRUE);
    live_threshold = 500; /* the default */
    GPtrArray *other = stream_finals(pcm, n, 0, TRUE);
    live_policy = WKV_COMMIT_AGREEMENT;
    GPtrArray *agree = stream_finals(pcm, n, 0, TRUE);
    g_print("live alignatt: %u word buffers from the element, %u words from wkv_stream\n",
            got->len, want->len);
    fail_unless(want->len >= 3, "the oracle needs words, got %u", want->len);
    fail_unless(!same_words(want, agree) && !same_words(want, other), "alignatt at 100 ms "
                "commits the same words as %s: the comparison cannot tell them apart",
                same_words(want, agree) ? "agreement" : "alignatt at 500 ms");
    assert_same_segments(got, want, "live commit-policy=alignatt vs wkv_stream's words");
    /* max-held reaches the stream too: 2 s (the committed words' audio cut early) */
    live_policy = WKV_COMMIT_ALIGNATT;
    live_threshold = 100;
    live_max_held = 2000;
    GPtrArray *got2 = element_text(pcm, n, 0, GST_WHISPER_TEXT_UNIT_WORD, spans);
    GPtrArray *want2 = stream_finals(pcm, n, 0, TRUE);
    live_max_held = 0;
    live_threshold = 500;
    live_policy = WKV_COMMIT_AGREEMENT;
    fail_unless(!same_words(want2, want), "max_held_ms 2000 commits the same words as the "
                "default: the comparison cannot tell them apart");
    assert_same_segments(got2, want2, "live max-held=2000 vs wkv_stream's words");
    g_ptr_array_unref(got2);
    g_ptr_array_unref(want2);
    g_array_unref(spans);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    g_ptr_array_unref(other);
    g_ptr_array_unref(agree);
    g_free(pcm);
}
GST_END_TEST

static void oracle_cue(const cue_word *w, guint n, void *user)
{
    gchar *text = cue_text(w, n, FALSE, -1);
    GstClockTime a = after_ns(w[0].start), e = after_ns(w[n - 1].end);
    textseg_add(user, a, e > a ? e - a : 0, text);
    g_free(text);
}

/* text-unit=cue live: the cues equal the CLI's cutter (max-line-width 42,
 * max-line-count 2) applied to wkv_stream's committed words on the same samples, in
 * time order without overlaps; the open cue goes out at EOS. */
GST_START_TEST(test_live_cues_equal_stream)
{
    const gsize n = 16000 * 20;
    const GstClockTime t0 = GST_SECOND / 2;
    float *pcm = synth_audio(n, 29);
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(Span));
    GPtrArray *got = element_text(pcm, n, t0, GST_WHISPER_TEXT_UNIT_CUE, spans);
    GPtrArray *words = stream_finals(pcm, n, t0, TRUE);
    /* the committed words as one segment (with width and count set the cutter keeps
     * no segment breaks), times in text seconds as the element feeds its cutter */
    wkv_word *ws = g_new(wkv_word, words->len + 1);
    for (guint i = 0; i < words->len; i++) {
        const TextSeg *t = g_ptr_array_index(words, i);
        ws[i] = (wkv_word){t->text, (double)t->pts / 1e9, (double)(t->pts + t->duration) / 1e9,
                           0.5};
    }
    wkv_segment seg = {0};
    seg.words = ws;
    seg.n_words = (int)words->len;
    GPtrArray *want = textseg_array_new();
    cue_cut_options co = {42, 2, 0};
    cue_cutter *cut = cue_cutter_new(&co, oracle_cue, want);
    cue_cutter_segment(cut, &seg);
    cue_cutter_finish(cut);
    cue_cutter_free(cut);
    g_print("live cues: %u cue buffers from the element, %u cues of %u committed words\n",
            got->len, want->len, words->len);
    fail_unless(want->len >= 3, "the oracle needs cues, got %u", want->len);
    for (guint i = 1; i < got->len; i++) {
        const TextSeg *a = g_ptr_array_index(got, i - 1), *b = g_ptr_array_index(got, i);
        fail_unless(b->pts >= a->pts + a->duration, "cue %u at %" GST_TIME_FORMAT
                    " overlaps cue %u ending at %" GST_TIME_FORMAT, i, GST_TIME_ARGS(b->pts),
                    i - 1, GST_TIME_ARGS(a->pts + a->duration));
    }
    assert_same_segments(got, want, "live text-unit=cue vs the cutter on wkv_stream's words");
    g_free(ws);
    g_array_unref(spans);
    g_ptr_array_unref(got);
    g_ptr_array_unref(want);
    g_ptr_array_unref(words);
    g_free(pcm);
}
GST_END_TEST

static Suite *live_suite(void)
{
    Suite *s = suite_create("whisper-live");
    TCase *tc = tcase_create("live");
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_live_equals_stream);
    tcase_add_test(tc, test_live_jitter);
    tcase_add_test(tc, test_live_words_equal_stream);
    tcase_add_test(tc, test_live_alignatt_equals_stream);
    tcase_add_test(tc, test_live_cues_equal_stream);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    return wh_run_suite(live_suite(), "whisper-live");
}
