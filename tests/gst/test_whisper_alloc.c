/* The element under allocation failure (issue 33, item 1), as tests/test_alloc_fail.c
 * does for the core: for N = 1, 2, … the N-th allocation fails (wkv_debug_alloc_fail
 * counts the core's allocations and the element's sized ones, gstwhisperalloc.c) while
 * the pipeline goes NULL -> PLAYING, gets a buffer of audio and EOS, and goes back to
 * NULL; until a cycle no longer reaches its N-th allocation.  Each N must end in an
 * ERROR message from the element that says what failed (out of memory), or in EOS with
 * the very text of a cycle without failures (an allocation the code did without);
 * never a crash or a hang; LeakSanitizer (the sanitize stage) finds what an error path
 * leaks.  After every 4th N the same pipeline runs a cycle without failures, which must
 * give that text again: the element is usable after the error.
 *
 * Variants, one check each: offline with the element's own model (loaded at each
 * READY -> PAUSED, so the load's failures are in the loop), offline with VAD and word
 * timestamps on a model held elsewhere (the speech filter and the words' time map),
 * live (step) with cues on a model held elsewhere (the live run's copy of its audio,
 * the cue cutter's words).  Each prints its failure points. */
#include "whisper_check.h"
#include "gstwhispermodel.h"
#include "testutil.h"
#include "whisperkv_debug.h"

#include <gst/app/gstappsrc.h>
#include <string.h>

static gchar *vad_path; /* shared/models/for-tests-silero-v6.2.0-ggml.bin */

#define N_SAMPLES (2 * WKV_SAMPLE_RATE) /* 2 s: two live runs at step=1000 */

typedef struct {
    GstElement *pipe, *src;
    GMutex lock;
    GString *text; /* the text buffers of the cycle under way: "[pts +dur]text" */
    float *pcm;
} Rig;

typedef struct {
    const gchar *name;
    gboolean hold;      /* the model is held elsewhere: the cycle only makes a context */
    gboolean vad;
    const gchar *props; /* more of the element's properties */
} Variant;

static GstPadProbeReturn on_text(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Rig *r = data;
    GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMapInfo map;
    (void)pad;
    if (!gst_buffer_map(buf, &map, GST_MAP_READ))
        return GST_PAD_PROBE_OK;
    g_mutex_lock(&r->lock);
    g_string_append_printf(r->text, "[%" G_GUINT64_FORMAT " +%" G_GUINT64_FORMAT "]%.*s\n",
                           GST_BUFFER_PTS(buf), GST_BUFFER_DURATION(buf), (int)map.size,
                           (const gchar *)map.data);
    g_mutex_unlock(&r->lock);
    gst_buffer_unmap(buf, &map);
    return GST_PAD_PROBE_OK;
}

static void rig_init(Rig *r, const Variant *v)
{
    gchar *vad = v->vad ? g_strdup_printf("vad-model=%s vad-threshold=0.01 ", vad_path)
                        : g_strdup("");
    /* one thread: the core's allocations come in one order (no pool threads) */
    gchar *desc = g_strdup_printf("appsrc name=src format=time caps=audio/x-raw,"
        "format=F32LE,rate=16000,channels=1,layout=interleaved ! whisperkv name=w model=%s "
        "threads=1 temperature-fallback=false %s%s ! fakesink async=false "
        "w.text_src ! fakesink async=false", test_model, vad, v->props);
    GError *e = NULL;
    r->pipe = gst_parse_launch(desc, &e);
    fail_unless(r->pipe && !e, "%s: %s", desc, e ? e->message : "");
    r->src = gst_bin_get_by_name(GST_BIN(r->pipe), "src");
    GstElement *w = gst_bin_get_by_name(GST_BIN(r->pipe), "w");
    GstPad *pad = gst_element_get_static_pad(w, "text_src");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, on_text, r, NULL);
    gst_object_unref(pad);
    gst_object_unref(w);
    g_mutex_init(&r->lock);
    r->text = g_string_new(NULL);
    r->pcm = synth_audio(N_SAMPLES, 7);
    g_free(desc);
    g_free(vad);
}

static void rig_clear(Rig *r)
{
    gst_object_unref(r->src);
    gst_object_unref(r->pipe);
    g_string_free(r->text, TRUE);
    g_mutex_clear(&r->lock);
    g_free(r->pcm);
}

/* The first ERROR or EOS on the bus: NULL at EOS, else "MESSAGE | DEBUG" (g_free), and
 * in *from the name of the element that posted it. */
static gchar *wait_end(Rig *r, gchar **from)
{
    GstBus *bus = gst_element_get_bus(r->pipe);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
                                               GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    gst_object_unref(bus);
    *from = NULL;
    if (!m)
        return g_strdup("timeout: neither EOS nor an ERROR in 60 s");
    gchar *what = NULL;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        GError *e;
        gchar *dbg;
        gst_message_parse_error(m, &e, &dbg);
        /* the debug text without its source location (the line before) */
        const gchar *d = dbg && strchr(dbg, '\n') ? strchr(dbg, '\n') + 1 : dbg;
        what = g_strdup_printf("%s | %s", e->message, d ? d : "");
        *from = gst_object_get_name(GST_MESSAGE_SRC(m));
        g_error_free(e);
        g_free(dbg);
    }
    gst_message_unref(m);
    return what;
}

/* One NULL -> PLAYING (a buffer of 2 s, EOS) -> NULL.  Returns the text, and the
 * ERROR's text in *err (NULL at EOS) and who posted it in *from. */
static gchar *cycle(Rig *r, gchar **err, gchar **from)
{
    g_mutex_lock(&r->lock);
    g_string_truncate(r->text, 0);
    g_mutex_unlock(&r->lock);
    if (gst_element_set_state(r->pipe, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE) {
        GstBuffer *buf = gst_buffer_new_memdup(r->pcm, N_SAMPLES * sizeof(float));
        GST_BUFFER_PTS(buf) = 0;
        GST_BUFFER_DURATION(buf) = gst_util_uint64_scale_int(N_SAMPLES, GST_SECOND, WKV_SAMPLE_RATE);
        gst_app_src_push_buffer(GST_APP_SRC(r->src), buf);
        gst_app_src_end_of_stream(GST_APP_SRC(r->src));
    }
    /* a failed state change (the model's load) posted its ERROR before it returned */
    *err = wait_end(r, from);
    fail_unless(gst_element_set_state(r->pipe, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    g_mutex_lock(&r->lock);
    gchar *text = g_strdup(r->text->str);
    g_mutex_unlock(&r->lock);
    return text;
}

static void run_variant(const Variant *v)
{
    GstWhisperModel *held = NULL, *held_vad = NULL;
    GError *e = NULL;
    if (v->hold) {
        held = gst_whisper_model_acquire(test_model, &e);
        fail_unless(held != NULL, "%s", e ? e->message : "");
        if (v->vad) {
            held_vad = gst_whisper_vad_model_acquire(vad_path, &e);
            fail_unless(held_vad != NULL, "%s", e ? e->message : "");
        }
    }
    Rig r;
    rig_init(&r, v);
    gchar *err, *from;
    gchar *clean = cycle(&r, &err, &from);
    fail_unless(err == NULL, "%s: the cycle without failures: %s (from %s)", v->name, err,
                from);
    fail_unless(clean[0] != '\0', "%s: no text without failures", v->name);
    gchar *again = cycle(&r, &err, &from);
    fail_unless(err == NULL && !strcmp(again, clean),
                "%s: two cycles without failures differ:\n%s\n---\n%s", v->name, clean,
                again);
    g_free(again);

    long n, errors = 0, did_without = 0, total = 0;
    /* the ERRORs seen, numbers as N, and how often */
    GHashTable *kinds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GRegex *digits = g_regex_new("[0-9]+", 0, 0, NULL);
    gint64 t = g_get_monotonic_time();
    for (n = 1;; n++) {
        wkv_debug_alloc_fail(n);
        gchar *text = cycle(&r, &err, &from);
        gboolean reached = wkv_debug_alloc_failed();
        long count = wkv_debug_alloc_count();
        wkv_debug_alloc_fail(0);
        if (err) {
            fail_unless(reached, "%s: allocation %ld never failed, yet: %s", v->name, n, err);
            /* the element's ERROR, first on the bus, naming what failed: its message
             * and a detail (the core's message, or "out of memory" after the
             * element's "Could not allocate N bytes for ...") */
            fail_unless(!g_strcmp0(from, "w"),
                        "%s: allocation %ld: the ERROR came from %s, not the element: %s",
                        v->name, n, from, err);
            const gchar *detail = strstr(err, " | ");
            fail_unless(err[0] != ' ' && detail && detail[3] != '\0',
                        "%s: allocation %ld: the ERROR does not say what failed: %s", v->name,
                        n, err);
            errors++;
            gchar *key = g_regex_replace(digits, err, -1, 0, "N", 0, NULL);
            g_hash_table_insert(kinds, key,
                GINT_TO_POINTER(GPOINTER_TO_INT(g_hash_table_lookup(kinds, key)) + 1));
            if (g_getenv("WHISPER_TEST_VERBOSE"))
                g_print("%s: allocation %ld: %s\n", v->name, n, err);
        } else {
            fail_unless(!strcmp(text, clean),
                        "%s: allocation %ld failed without an ERROR, and the text changed:"
                        "\n%s\n--- without failures:\n%s", v->name, n, text, clean);
            did_without += reached;
        }
        g_free(err);
        g_free(from);
        g_free(text);
        if (!reached) { /* the cycle made fewer than n allocations: done */
            total = count;
            break;
        }
        /* usable again: a cycle without failures gives the text of before; after every
         * 4th N, as tests/test_alloc_fail.c does (this doubled the loop's time, the
         * sanitize stage's longest test: 333 s under ASan) */
        if (n % 4 != 1)
            continue;
        gchar *after = cycle(&r, &err, &from);
        fail_unless(err == NULL, "%s: after allocation %ld failed, a clean cycle: %s",
                    v->name, n, err);
        fail_unless(!strcmp(after, clean), "%s: after allocation %ld failed, the text "
                    "changed:\n%s\n--- before:\n%s", v->name, n, after, clean);
        g_free(after);
    }
    g_print("%-18s %4ld failure points (%ld allocations in the last cycle): %ld ERROR "
            "messages, %ld did without; %.1f s\n", v->name, n - 1, total, errors,
            did_without, (g_get_monotonic_time() - t) / 1e6);
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, kinds);
    while (g_hash_table_iter_next(&iter, &key, &value))
        g_print("  %4d x %s\n", GPOINTER_TO_INT(value), (const gchar *)key);
    g_hash_table_unref(kinds);
    g_regex_unref(digits);
    fail_unless(errors > 0, "%s: no allocation failure gave an error", v->name);
    g_free(clean);
    rig_clear(&r);
    gst_whisper_model_release(held_vad);
    gst_whisper_model_release(held);
    fail_unless_equals_int(gst_whisper_model_cache_size(), 0);
}

GST_START_TEST(test_offline_own_model)
{
    static const Variant v = {"offline, own model", FALSE, FALSE, ""};
    run_variant(&v);
}
GST_END_TEST

GST_START_TEST(test_offline_vad_words)
{
    static const Variant v = {"offline, VAD+words", TRUE, TRUE, "word-timestamps=true"};
    run_variant(&v);
}
GST_END_TEST

GST_START_TEST(test_live_cues)
{
    /* agreement: alignatt's words and times follow how much audio each run found
     * waiting (the worker's timing), so two clean cycles may differ */
    static const Variant v = {"live, cues", TRUE, FALSE,
                              "step=1000 word-timestamps=true text-unit=cue "
                              "commit-policy=agreement"};
    run_variant(&v);
}
GST_END_TEST

static Suite *alloc_suite(void)
{
    Suite *s = suite_create("whisper-alloc");
    TCase *tc = tcase_create("alloc");
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_offline_own_model);
    tcase_add_test(tc, test_offline_vad_words);
    tcase_add_test(tc, test_live_cues);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    if (!tu_require_shared("the VAD model (models/)"))
        return TU_SKIP;
    vad_path = g_build_filename(tu_shared_dir(), "models", "for-tests-silero-v6.2.0-ggml.bin",
                                NULL);
    int r = wh_run_suite(alloc_suite(), "whisper-alloc");
    g_free(vad_path);
    return r;
}
