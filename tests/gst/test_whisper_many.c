/* Many elements, many cycles (issue 33, item 4):
 *  - many_elements: 32 whisper elements in one process sharing one model, half offline
 *    and half live (step), all to EOS; the model is loaded once, given back at the end,
 *    and the threads go back to what they were (LeakSanitizer and valgrind see the rest);
 *  - state_cycles_flat: NULL -> PLAYING (to EOS) -> NULL again and again, with a model
 *    of the element's own (loaded each cycle), with a model held elsewhere, each with
 *    and without VAD: RSS and the thread count at cycle 10 and at the last cycle, growth
 *    bounded;
 *  - shared_decoder: three offline elements on one model, each on its own audio, give
 *    with share-decoder the text each gives with its own decoder, and the model's
 *    decoder group ran passes of several elements' steps;
 *  - concurrent_load: two elements reaching READY -> PAUSED at the same instant on the
 *    same file load it once and share it (run under ThreadSanitizer by
 *    scripts/tsan-element.sh).
 * WHISPER_TEST_CYCLES sets the cycles of each variant (CI: the default, 60; the 1,000
 * of docs/reliability.md with WHISPER_TEST_CYCLES=1000).  WHISPER_TEST_MODEL_TINY: the
 * larger model concurrent_load loads (its load lasts long enough to overlap). */
#include "whisper_check.h"
#include "gstwhispermodel.h"
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static int N_ELEMENTS = 32; /* WHISPER_TEST_ELEMENTS: another count */

static gchar *vad_path; /* shared/models/for-tests-silero-v6.2.0-ggml.bin */

static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    fail_unless(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The threads' names (/proc/self/task/N/comm), for a message: g_free. */
static gchar *thread_names(void)
{
    GString *s = g_string_new(NULL);
    DIR *d = opendir("/proc/self/task");
    fail_unless(d != NULL);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        gchar *path = g_strdup_printf("/proc/self/task/%s/comm", e->d_name);
        gchar *name = NULL;
        if (g_file_get_contents(path, &name, NULL, NULL))
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", g_strstrip(name));
        g_free(name);
        g_free(path);
    }
    closedir(d);
    return g_string_free(s, FALSE);
}

/* Resident set in MB (/proc/self/statm), after giving free heap back to the system
 * where glibc can, so that what malloc keeps in its arenas does not count. */
static double rss_mb(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    FILE *f = fopen("/proc/self/statm", "r");
    fail_unless(f != NULL);
    long size = 0, res = 0;
    fail_unless(fscanf(f, "%ld %ld", &size, &res) == 2);
    fclose(f);
    return res * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

/* What malloc has handed out and not had back, in MB, over every arena (glibc's
 * mallinfo2 sums them; mmapped chunks at their size); 0 where unknown. */
static double heap_mb(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    return (mi.uordblks + mi.hblkhd) / 1048576.0;
#else
    return 0;
#endif
}

/* The threads of GStreamer's task pool that are idle end (GLib keeps up to two
 * unused ones, 15 s each, otherwise; a pool thread waits half a second for another
 * task first): waits until the count is at most `want`, for at most `max_ms`, or, with
 * `stable_ms`, until it has not gone down for that long (a thread that a library
 * starts once stays: OpenBLAS's worker, started again in a check's forked process at
 * its first product, is not in the count before the first cycle). */
static int settle_threads(int want, int max_ms, int stable_ms)
{
    g_thread_pool_set_max_unused_threads(0);
    g_thread_pool_stop_unused_threads();
    int n = thread_count(), since = 0;
    for (int ms = 0; ms < max_ms && n > want && (!stable_ms || since < stable_ms); ms += 10) {
        g_usleep(10000);
        g_thread_pool_stop_unused_threads();
        int m = thread_count();
        since = m < n ? 0 : since + 10;
        n = m;
    }
    return n;
}

static gchar *wait_eos(GstElement *p, GstClockTime timeout)
{
    GstBus *bus = gst_element_get_bus(p);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, timeout, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    gchar *err = NULL;
    if (!m) {
        err = g_strdup("timeout");
    } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        GError *e;
        gchar *dbg;
        gst_message_parse_error(m, &e, &dbg);
        err = g_strdup_printf("%s | %s", e->message, dbg ? dbg : "");
        g_error_free(e);
        g_free(dbg);
    }
    if (m)
        gst_message_unref(m);
    gst_object_unref(bus);
    return err;
}

static GstPadProbeReturn count_text(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    (void)info;
    g_atomic_int_inc((gint *)data);
    return GST_PAD_PROBE_OK;
}

/* 32 elements on one tee, the even ones offline, the odd ones live (step=1000): each
 * its own context and worker, one model for all.  The audio sinks do not preroll: a
 * live element holds the audio until its first run (1 s), which a queue's default
 * 1-s limit would hold up before the tee, and the whole pipeline with it. */
static void many_round(int round, int threads0, double rss0, double *rss_out)
{
    GString *desc = g_string_new("audiotestsrc num-buffers=40 samplesperbuffer=1600 "
        "wave=pink-noise ! audio/x-raw,rate=16000,channels=1,format=F32LE ! tee name=t ");
    for (int i = 0; i < N_ELEMENTS; i++)
        g_string_append_printf(desc, "t. ! queue ! whisperkv name=w%d model=%s threads=1 "
            "temperature-fallback=false step=%d ! fakesink async=false w%d.text_src ! "
            "fakesink async=false ", i, test_model, i % 2 ? 1000 : 0, i);
    GError *e = NULL;
    GstElement *p = gst_parse_launch(desc->str, &e);
    fail_unless(p && !e, "%s", e ? e->message : "");
    g_string_free(desc, TRUE);
    gint *texts = g_new0(gint, N_ELEMENTS);
    for (int i = 0; i < N_ELEMENTS; i++) {
        gchar *name = g_strdup_printf("w%d", i);
        GstElement *w = gst_bin_get_by_name(GST_BIN(p), name);
        GstPad *pad = gst_element_get_static_pad(w, "text_src");
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, count_text, &texts[i], NULL);
        gst_object_unref(pad);
        gst_object_unref(w);
        g_free(name);
    }
    fail_unless(gst_element_set_state(p, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
    fail_unless_equals_int(gst_whisper_model_cache_size(), 1);
    fail_unless_equals_int(gst_whisper_model_users(test_model), N_ELEMENTS);
    gint64 t = g_get_monotonic_time();
    fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    int threads_peak = thread_count();
    gchar *err = wait_eos(p, 300 * GST_SECOND);
    fail_unless(err == NULL, "%s", err);
    double rss_peak = rss_mb();
    double secs = (g_get_monotonic_time() - t) / 1e6;
    int with_text = 0;
    for (int i = 0; i < N_ELEMENTS; i++)
        with_text += g_atomic_int_get(&texts[i]) > 0;
    fail_unless(gst_element_set_state(p, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    gst_object_unref(p);
    g_free(texts);
    fail_unless_equals_int(gst_whisper_model_cache_size(), 0);
    int threads1 = settle_threads(threads0, 2000, 0);
    double rss1 = rss_mb();
    g_print("round %d: %d elements (%d offline, %d live) to EOS in %.1f s, %d with text: "
            "threads %d -> %d at EOS -> %d; RSS %.1f MB -> %.1f at EOS -> %.1f MB (%+.1f)\n",
            round, N_ELEMENTS, (N_ELEMENTS + 1) / 2, N_ELEMENTS / 2, secs, with_text,
            threads0, threads_peak, threads1, rss0, rss_peak, rss1, rss1 - rss0);
    /* random weights: every element writes text (a live one at least its finals at EOS) */
    fail_unless_equals_int(with_text, N_ELEMENTS);
    /* the first round starts what a process starts once (GLib's and GStreamer's own
     * threads): later rounds end where it did */
    fail_unless(round == 1 || threads1 <= threads0, "threads %d -> %d: a thread was not ended",
                threads0, threads1);
    *rss_out = rss1;
}

/* Two rounds (WHISPER_TEST_ROUNDS: more): the first pays what a process pays once
 * (GStreamer's types, oneDNN's kernels, the heap's arenas for 67 threads); after each
 * later one the heap in use must be where the first left it: one context (1.5 MB at
 * the short model's size) or the model kept by any element would show; LeakSanitizer
 * and valgrind check the rest byte by byte.  RSS is reported, not asserted: after 67
 * threads went, malloc's arenas hold freed memory of their own (round 2 to 5: RSS
 * within 47 - 52 MB, the heap in use 2.8 - 3.0 MB). */
GST_START_TEST(test_many_elements)
{
    int threads0 = settle_threads(0, 2000, 0);
    double rss0 = rss_mb(), rss1, rss2;
    many_round(1, threads0, rss0, &rss1);
    double heap1 = heap_mb();
    threads0 = settle_threads(threads0, 2000, 0);
    const gchar *env = g_getenv("WHISPER_TEST_ROUNDS");
    int rounds = env ? atoi(env) : 2;
    for (int r = 2; r <= rounds; r++) {
        many_round(r, threads0, rss1, &rss2);
        double heap = heap_mb();
        g_print("heap in use after round 1 %.2f MB, after round %d %.2f MB\n", heap1, r,
                heap);
        fail_unless(heap - heap1 < 1.0, "heap in use %.2f MB after round 1, %.2f after %d",
                    heap1, heap, r);
        rss1 = rss2;
    }
}
GST_END_TEST

typedef struct {
    const char *name;
    gboolean hold; /* the model held elsewhere (shared): the cycle only makes a context */
    gboolean vad;
} CycleKind;

static void cycles(const CycleKind *k, int n)
{
    GstWhisperModel *held = NULL;
    if (k->hold) {
        GError *e = NULL;
        held = gst_whisper_model_acquire(test_model, &e);
        fail_unless(held != NULL);
    }
    gchar *vad = k->vad ? g_strdup_printf("vad-model=%s vad-threshold=0.01 ", vad_path) : g_strdup("");
    gchar *desc = g_strdup_printf("audiotestsrc wave=pink-noise samplesperbuffer=1600 "
        "num-buffers=10 ! audio/x-raw,format=F32LE,rate=16000,channels=1 ! whisperkv "
        "model=%s %sthreads=2 temperature-fallback=false ! fakesink", test_model, vad);
    GstElement *p = gst_parse_launch(desc, NULL);
    fail_unless(p != NULL);
    double rss10 = 0, heap10 = 0;
    int threads0 = thread_count(); /* before the first cycle */
    int threads10 = 0, threads_max = 0;
    gint64 t = g_get_monotonic_time();
    for (int i = 1; i <= n; i++) {
        fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
        gchar *err = wait_eos(p, 60 * GST_SECOND);
        fail_unless(err == NULL, "%s cycle %d: %s", k->name, i, err);
        fail_unless(gst_element_set_state(p, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
        fail_unless_equals_int(gst_whisper_model_users(test_model), k->hold ? 1 : 0);
        if (i == 10) {
            threads10 = settle_threads(threads0, 5000, 1000);
            rss10 = rss_mb();
            heap10 = heap_mb();
        }
        if (i >= 10)
            threads_max = MAX(threads_max, thread_count());
    }
    double secs = (g_get_monotonic_time() - t) / 1e6;
    /* not one thread more than at cycle 10: a thread still ending gets 10 s */
    int threads_n = settle_threads(threads10, 10000, 0);
    gchar *names = thread_names();
    double rss_n = rss_mb(), heap_n = heap_mb();
    gst_object_unref(p);
    gst_whisper_model_release(held);
    fail_unless_equals_int(gst_whisper_model_cache_size(), 0);
    g_print("%-12s %4d cycles in %5.1f s: RSS %.2f MB at cycle 10, %.2f at %d (%+.2f MB, "
            "%+.1f KB a cycle); heap in use %+.3f MB; threads %d before, %d at cycle 10, %d at "
            "%d, at most %d\n", k->name, n, secs, rss10, rss_n, n, rss_n - rss10,
            (rss_n - rss10) * 1024 / (n - 10), heap_n - heap10, threads0, threads10,
            threads_n, n, threads_max);
    /* flat: the heap in use grows less than 2 KB a cycle after cycle 10 (a leak of a
     * window's log-mel, 1.9 MB, of a context, or of a 1-KB string each cycle is
     * above; RSS is reported: it moves with what the heap's arenas keep, by up to 2 MB
     * over 50 cycles after the 32 elements ran in the same process), and not one thread more once the task pool's idle threads have ended (one may
     * still be ending when a cycle ends) */
    fail_unless((heap_n - heap10) * 1024 < 2.0 * (n - 10) + 64,
                "%s: the heap in use grew %.3f MB from cycle 10 to %d", k->name,
                heap_n - heap10, n);
    fail_unless(threads_n <= threads10,
                "%s: threads %d at cycle 10, %d at %d (at most %d): %s", k->name, threads10,
                threads_n, n, threads_max, names);
    g_free(names);
    g_free(desc);
    g_free(vad);
}

GST_START_TEST(test_state_cycles_flat)
{
    const gchar *env = g_getenv("WHISPER_TEST_CYCLES");
    int n = env ? atoi(env) : 60;
    fail_unless(n > 10);
    /* idle task-pool threads end at once, so that a count is the threads in use */
    g_thread_pool_set_max_unused_threads(0);
    static const CycleKind kinds[] = {
        {"own model", FALSE, FALSE},
        {"shared", TRUE, FALSE},
        {"shared + VAD", TRUE, TRUE},
        {"own + VAD", FALSE, TRUE},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++)
        cycles(&kinds[i], n);
}
GST_END_TEST

typedef struct {
    GstElement *pipe;
    gint *ready; /* threads at the start line */
    GstStateChangeReturn ret;
} Loader;

static gpointer load_now(gpointer data)
{
    Loader *l = data;
    g_atomic_int_inc(l->ready);
    while (g_atomic_int_get(l->ready) < 2)
        ; /* both start together */
    l->ret = gst_element_set_state(l->pipe, GST_STATE_PAUSED);
    return NULL;
}

/* Two elements reach READY -> PAUSED, where each acquires its model, at the same
 * instant: one load, two users, one model given back when both are gone. */
GST_START_TEST(test_concurrent_load)
{
    const gchar *model = g_getenv("WHISPER_TEST_MODEL_TINY");
    if (!model)
        model = test_model;
    const gchar *env = g_getenv("WHISPER_TEST_ROUNDS");
    int rounds = env ? atoi(env) : 8;
    for (int r = 0; r < rounds; r++) {
        Loader l[2];
        gint ready = 0;
        for (int i = 0; i < 2; i++) {
            gchar *desc = g_strdup_printf("appsrc format=time ! audio/x-raw,format=F32LE,"
                "rate=16000,channels=1 ! whisperkv model=%s threads=1 ! fakesink async=false",
                model);
            l[i] = (Loader){gst_parse_launch(desc, NULL), &ready, GST_STATE_CHANGE_FAILURE};
            fail_unless(l[i].pipe != NULL);
            fail_unless(gst_element_set_state(l[i].pipe, GST_STATE_READY) ==
                        GST_STATE_CHANGE_SUCCESS);
            g_free(desc);
        }
        fail_unless_equals_int(gst_whisper_model_cache_size(), 0);
        GThread *th[2];
        for (int i = 0; i < 2; i++)
            th[i] = g_thread_new("load", load_now, &l[i]);
        for (int i = 0; i < 2; i++)
            g_thread_join(th[i]);
        for (int i = 0; i < 2; i++)
            fail_unless(l[i].ret != GST_STATE_CHANGE_FAILURE, "round %d: element %d failed",
                        r, i);
        fail_unless_equals_int(gst_whisper_model_cache_size(), 1);
        fail_unless_equals_int(gst_whisper_model_users(model), 2);
        fail_unless(gst_element_set_state(l[0].pipe, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
        fail_unless_equals_int(gst_whisper_model_users(model), 1);
        fail_unless(gst_element_set_state(l[1].pipe, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
        fail_unless_equals_int(gst_whisper_model_cache_size(), 0);
        for (int i = 0; i < 2; i++)
            gst_object_unref(l[i].pipe);
    }
}
GST_END_TEST

static GstPadProbeReturn keep_text(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
    GstMapInfo map;
    if (gst_buffer_map(b, &map, GST_MAP_READ)) {
        g_string_append_printf(data, "%" GST_TIME_FORMAT " %" GST_TIME_FORMAT " %.*s\n",
                               GST_TIME_ARGS(GST_BUFFER_PTS(b)),
                               GST_TIME_ARGS(GST_BUFFER_DURATION(b)), (int)map.size,
                               (const char *)map.data);
        gst_buffer_unmap(b, &map);
    }
    return GST_PAD_PROBE_OK;
}

/* Three offline elements at once, each on its own tone, share-decoder on or off: their
 * text into texts[3]; with it on, the group's statistics into *gs (at EOS, while the
 * model is loaded). */
static void three_elements(gboolean share, GString **texts, wkv_decoder_group_stats *gs)
{
    GString *desc = g_string_new(NULL);
    for (int i = 0; i < 3; i++)
        g_string_append_printf(desc, "audiotestsrc num-buffers=450 samplesperbuffer=1600 "
            "freq=%d ! audio/x-raw,rate=16000,channels=1,format=F32LE ! whisperkv name=w%d "
            "model=%s threads=1 temperature-fallback=false share-decoder=%s ! fakesink "
            "async=false w%d.text_src ! fakesink async=false ", 300 + 170 * i, i, test_model,
            share ? "true" : "false", i);
    GError *e = NULL;
    GstElement *p = gst_parse_launch(desc->str, &e);
    fail_unless(p && !e, "%s", e ? e->message : "");
    g_string_free(desc, TRUE);
    for (int i = 0; i < 3; i++) {
        gchar *name = g_strdup_printf("w%d", i);
        GstElement *w = gst_bin_get_by_name(GST_BIN(p), name);
        GstPad *pad = gst_element_get_static_pad(w, "text_src");
        texts[i] = g_string_new(NULL);
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, keep_text, texts[i], NULL);
        gst_object_unref(pad);
        gst_object_unref(w);
        g_free(name);
    }
    fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    gchar *err = wait_eos(p, 300 * GST_SECOND);
    fail_unless(err == NULL, "%s", err);
    GstWhisperModel *m = gst_whisper_model_acquire(test_model, NULL);
    gst_whisper_model_decoder_group_stats(m, gs);
    gst_whisper_model_release(m);
    fail_unless(gst_element_set_state(p, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    gst_object_unref(p);
}

GST_START_TEST(test_shared_decoder)
{
    GString *own[3], *shared[3];
    wkv_decoder_group_stats gs_own, gs;
    three_elements(FALSE, own, &gs_own);
    /* the steps meet by chance: up to 20 tries (a third of the passes of one try met, one in three tries none) */
    for (int attempt = 0; attempt < 20; attempt++) {
        three_elements(TRUE, shared, &gs);
        for (int i = 0; i < 3; i++) {
            fail_unless(own[i]->len > 0, "element %d wrote no text", i);
            fail_unless(!strcmp(own[i]->str, shared[i]->str),
                        "element %d with a shared decoder:\n%s---\nalone:\n%s", i,
                        shared[i]->str, own[i]->str);
            g_string_free(shared[i], TRUE);
        }
        g_print("shared decoder: %" G_GINT64_FORMAT " steps in %" G_GINT64_FORMAT
                " passes (%" G_GINT64_FORMAT " shared, up to %d)\n", gs.steps, gs.passes,
                gs.shared_passes, gs.max_rows);
        if (gs.shared_passes > 0)
            break;
    }
    fail_unless(gs_own.steps == 0, "share-decoder=false went through the group");
    fail_unless(gs.steps > 0 && gs.shared_passes > 0, "no pass shared the decoder");
    for (int i = 0; i < 3; i++)
        g_string_free(own[i], TRUE);
}
GST_END_TEST

static Suite *many_suite(void)
{
    Suite *s = suite_create("whisper-many");
    TCase *tc = tcase_create("many");
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_many_elements);
    tcase_add_test(tc, test_state_cycles_flat);
    tcase_add_test(tc, test_concurrent_load);
    tcase_add_test(tc, test_shared_decoder);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    const gchar *env = g_getenv("WHISPER_TEST_ELEMENTS");
    if (env)
        N_ELEMENTS = atoi(env);
    if (!tu_require_shared("the VAD model of the state cycles (models/)"))
        return TU_SKIP;
    vad_path = g_build_filename(tu_shared_dir(), "models", "for-tests-silero-v6.2.0-ggml.bin",
                                NULL);
    int r = wh_run_suite(many_suite(), "whisper-many");
    g_free(vad_path);
    return r;
}
