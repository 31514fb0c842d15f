/* Helpers shared by the whisper element's GStreamer check tests: running the element
 * in a GstHarness on PCM, running the core on the same PCM, comparing segments. */
#ifndef WHISPER_CHECK_H
#define WHISPER_CHECK_H

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

#include "whisperkv.h"

typedef struct {
    GstClockTime pts, duration;
    gchar *text;
    gboolean partial;
} TextSeg;

/* GPtrArray of TextSeg* (frees them). */
GPtrArray *textseg_array_new(void);
void textseg_add(GPtrArray *a, GstClockTime pts, GstClockTime dur, const gchar *text);

/* The core's window-normalized long form on pcm[0..n), times shifted by t0, with
 * the element's defaults (no_speech_threshold as given). */
GPtrArray *core_segments(const gchar *model_path, const float *pcm, gsize n, GstClockTime t0,
                         float no_speech_threshold);

/* The same with any options (mel_norm is forced to WKV_MEL_WINDOW). */
GPtrArray *core_segments_opts(const gchar *model_path, const float *pcm, gsize n,
                              GstClockTime t0, const wkv_options *opts);

/* The core's window-normalized long form on pcm[0..n) with `opts` (mel_norm forced to
 * WKV_MEL_WINDOW), every segment to `cb`. */
void core_run(const gchar *model_path, const float *pcm, gsize n, const wkv_options *opts,
              wkv_segment_cb cb, void *user);
/* The same, returning the windows it decoded (the context's statistics). */
gint64 core_run_windows(const gchar *model_path, const float *pcm, gsize n,
                        const wkv_options *opts, wkv_segment_cb cb, void *user);

/* The same on a thread of its own (g_thread_join returns the GPtrArray*); pcm must
 * stay alive until then. */
GThread *core_segments_async(const gchar *model_path, const float *pcm, gsize n,
                             GstClockTime t0, float no_speech_threshold);

/* A harness on a new whisper element (model set) with a second harness on text_src. */
typedef struct {
    GstElement *element;
    GstHarness *h;    /* sink -> src */
    GstHarness *text; /* text_src */
    GPtrArray *tags;  /* transcript tags seen on text_src by wh_finish (gchar*) */
} WhisperHarness;

void wh_setup(WhisperHarness *wh, const gchar *model_path, gboolean s16,
              const gchar *first_prop, ...);
void wh_teardown(WhisperHarness *wh);
/* Pushes pcm[0..n) in buffers of `chunk` samples, PTS from t0 (DISCONT on the first
 * when `discont`). */
void wh_push_pcm(WhisperHarness *wh, const float *pcm, gsize n, gsize chunk,
                 GstClockTime t0, gboolean s16, gboolean discont);
/* Pushes EOS, waits for EOS on text_src and returns the text buffers (and checks the
 * GAPs and buffers go forward in time); the transcript tags go to wh->tags. */
GPtrArray *wh_finish(WhisperHarness *wh);

/* The non-empty text buffers a fakesink (signal-handoffs=true) gets, on its streaming
 * thread: wh_text_sink_attach connects it; read `texts` (TextSeg) once the pipeline
 * stopped. */
typedef struct {
    GMutex lock;
    GPtrArray *texts;
} WhTextSink;
void wh_text_sink_attach(WhTextSink *ts, GstElement *fakesink);
void wh_text_sink_clear(WhTextSink *ts);

/* fail_unless the two lists are the same segments (text, PTS, duration exact). */
void assert_same_segments(GPtrArray *got, GPtrArray *want, const gchar *what);

/* Deterministic test audio: noise bursts shaped like syllables, seed-dependent. */
float *synth_audio(gsize n, guint32 seed);

/* WHISPER_TEST_NO_FALLBACK set, and neither empty nor "0" (tests/gst/meson.build sets
 * it for every check but a few): the element and the core decode without temperature
 * fallback, which a random-weight model takes at every window (a 33-s check: 62 s with
 * it, 3 s without).  wh_tune applies it to a whisper element or to every one in a bin. */
gboolean wh_no_fallback(void);
void wh_tune(GstElement *element_or_bin);

/* Runs the suite's checks (those GST_CHECKS names, or all) like gst_check_run_suite,
 * and fails when no check ran: a name that matches no check is a mistake, not a pass.
 * Returns the process's exit status. */
int wh_run_suite(Suite *suite, const gchar *name);

/* A check binary's start: gst_check_init, test_model from argv[1] or
 * $WHISPER_TEST_MODEL, the element registered.  FALSE (usage printed) without a model. */
gboolean wh_init(int *argc, char ***argv);

/* The model given on the command line (argv[1]) or $WHISPER_TEST_MODEL. */
extern const gchar *test_model;

/* Pango markup's escapes (&amp; &lt; &gt;) undone; tags stay.  g_free. */
gchar *wh_markup_unescape(const gchar *s);

#endif
