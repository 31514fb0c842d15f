/* whisper_soak: streams the shared speech recordings, looped, through the `whisperkv`
 * element for a long time and checks that it stays healthy (scripts/soak.sh runs it;
 * it is not a meson test: an hour is too long for CI).
 *
 *   whisper_soak --model M --speech DIR --mode offline|live --duration SECONDS
 *                [--interval SECONDS] [--max-ahead SECONDS] [--step MS] [--latency MS]
 *
 * Every recording under DIR (.wav, .flac, .mp3, any rate and channel count) is decoded
 * once into memory at its own rate, then an appsrc plays them in a loop, caps changing
 * at each file, into audioconvert ! audioresample ! whisper.  Offline the appsrc is not
 * live and pushes as fast as the pipeline takes it; live it is live and pushes each
 * 100-ms buffer when the pipeline clock reaches its end, like a capture device.
 *
 * Every --interval seconds of wall time one table row: minute, VmRSS, final segments so
 * far, audio seconds the element has finished with (its text_src position), audio
 * seconds pushed.  At the end the checks, each PASS or FAIL:
 *   rss:        VmRSS never exceeds the first row's (taken after the first window) by
 *               5 MB or more;
 *   memory:     the peak RSS while streaming stays within the element's decoding
 *               context (its KV caches and activations, untouched until the first
 *               window) plus 48 MB of the RSS before it (model loaded): the element
 *               holds a few windows of audio, not the stream;
 *   timestamps: every text buffer has a PTS and duration, is final, and starts at or
 *               after the previous one's end;
 *   segments:   the text buffers are exactly the final `whisper-segment` messages (same
 *               count, start, end and text, in order), text_src's EOS comes with its
 *               position at or past the end of the audio pushed, text arrived in every
 *               row after the first, no error or warning on the bus.
 * Exit status 0 when everything passes, 1 otherwise, 2 on bad usage. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/audio/audio.h>
#include <gst/gst.h>

#include "gstwhisper.h"
#include "gstwhispermodel.h"

#define CHUNK_DIV 10 /* 100-ms buffers */
#define RSS_LIMIT_KB (5 * 1024)
/* Beyond its decoding context the element keeps at most a few windows of audio
 * (docs/element.md: 4 windows are 7.7 MB); the rest of the margin is the pipeline's
 * queues, per-thread malloc arenas and OpenBLAS's buffer.  48 MB is 12.5 minutes of
 * 16-kHz f32 samples: an element keeping the stream fails an hour's soak. */
#define HOLD_MARGIN_KB (48 * 1024)

typedef struct {
    gchar *path;
    gint rate, channels;
    gint16 *pcm; /* interleaved */
    gsize frames;
} Clip;

typedef struct {
    GstClockTime start, end;
    gchar *text;
} Seg;

typedef struct {
    /* options */
    gchar *model, *speech, *mode;
    gint duration, interval, max_ahead, step, latency;
    gboolean live, no_fallback, verbose;

    GPtrArray *clips;
    GstElement *pipe, *appsrc, *whisper;
    GMainLoop *loop;
    GThread *feeder;

    GMutex lock;
    GCond cond;
    gboolean stop;
    GstClockTime pushed;    /* end of the audio pushed */
    GstClockTime processed; /* text_src position: GAP ends and segment ends */
    gboolean text_eos;
    GArray *bufs, *msgs; /* Seg: text buffers, final segment messages */
    guint partial_msgs;
    guint order_errors, input_jumps;
    GstClockTime next_in;        /* expected PTS of the next buffer into whisper */
    GstClockTime max_lag;        /* live: running time of a final's arrival - its end */
    guint latency_ms, late_finals; /* live: the element's latency, finals later than it */
    guint errors, warnings;

    /* the table */
    gint64 t_start;
    double cpu_start;
    glong rss_before, rss_base, rss_max, rss_last;
    double heap_base, heap_last; /* MB malloc has handed out and not had back */
    glong ctx_kb; /* a decoding context's KV caches + activations for this model */
    guint rows, rows_without_text, segs_at_last_row;
} Soak;

/* A "Vm...:" line of /proc/self/status in kB (VmRSS: now, VmHWM: peak), or -1. */
static glong vm_kb(const gchar *field)
{
    gchar *status = NULL;
    glong kb = -1;
    if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
        return -1;
    const gchar *p = strstr(status, field);
    if (p)
        kb = strtol(p + strlen(field), NULL, 10);
    g_free(status);
    return kb;
}

static glong vm_rss_kb(void)
{
    return vm_kb("VmRSS:");
}

static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* ------------------------------------------------------------------ recordings */

static gint by_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

static void find_audio(const gchar *dir, GPtrArray *out)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (!d)
        return;
    const gchar *name;
    while ((name = g_dir_read_name(d))) {
        gchar *p = g_build_filename(dir, name, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_DIR)) {
            find_audio(p, out);
            g_free(p);
        } else if (g_str_has_suffix(name, ".wav") || g_str_has_suffix(name, ".flac") ||
                   g_str_has_suffix(name, ".mp3")) {
            g_ptr_array_add(out, p);
        } else {
            g_free(p);
        }
    }
    g_dir_close(d);
}

/* Decodes a file to interleaved S16LE at its own rate and channel count. */
static Clip *decode_clip(const gchar *path)
{
    GError *err = NULL;
    GstElement *p = gst_parse_launch("filesrc name=f ! decodebin ! audioconvert ! "
                                     "audio/x-raw,format=S16LE,layout=interleaved ! "
                                     "appsink name=s sync=false", &err);
    if (!p) {
        g_printerr("whisper_soak: %s\n", err->message);
        g_error_free(err);
        return NULL;
    }
    GstElement *f = gst_bin_get_by_name(GST_BIN(p), "f");
    GstElement *s = gst_bin_get_by_name(GST_BIN(p), "s");
    g_object_set(f, "location", path, NULL);
    Clip *c = g_new0(Clip, 1);
    c->path = g_strdup(path);
    GByteArray *bytes = g_byte_array_new();
    gst_element_set_state(p, GST_STATE_PLAYING);
    GstSample *smp;
    while ((smp = gst_app_sink_pull_sample(GST_APP_SINK(s)))) {
        GstAudioInfo info;
        if (c->rate == 0 && gst_audio_info_from_caps(&info, gst_sample_get_caps(smp))) {
            c->rate = GST_AUDIO_INFO_RATE(&info);
            c->channels = GST_AUDIO_INFO_CHANNELS(&info);
        }
        GstMapInfo map;
        GstBuffer *b = gst_sample_get_buffer(smp);
        if (gst_buffer_map(b, &map, GST_MAP_READ)) {
            g_byte_array_append(bytes, map.data, (guint)map.size);
            gst_buffer_unmap(b, &map);
        }
        gst_sample_unref(smp);
    }
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(f);
    gst_object_unref(s);
    gst_object_unref(p);
    if (c->rate <= 0 || c->channels <= 0 || bytes->len < (guint)(2 * c->channels)) {
        g_byte_array_free(bytes, TRUE);
        g_free(c->path);
        g_free(c);
        return NULL;
    }
    c->frames = bytes->len / (2 * (gsize)c->channels);
    c->pcm = (gint16 *)g_byte_array_free(bytes, FALSE);
    return c;
}

static void clip_free(gpointer p)
{
    Clip *c = p;
    g_free(c->path);
    g_free(c->pcm);
    g_free(c);
}

/* ------------------------------------------------------------------ feeding */

/* Offline with --max-ahead: waits until the element is at most that far behind. */
static gboolean wait_room(Soak *s, GstClockTime pts)
{
    g_mutex_lock(&s->lock);
    while (!s->stop && s->max_ahead > 0 && GST_CLOCK_TIME_IS_VALID(s->processed) &&
           pts > s->processed + (GstClockTime)s->max_ahead * GST_SECOND)
        g_cond_wait(&s->cond, &s->lock);
    gboolean go = !s->stop;
    g_mutex_unlock(&s->lock);
    return go;
}

/* Live: waits until the pipeline clock is past `end` (running time). */
static gboolean wait_clock(Soak *s, GstClockTime end)
{
    GstClock *clock;
    /* the pipeline has its clock and base time as soon as it starts going to PLAYING;
     * it only gets there once the (synchronised) audio sink has had a buffer, which
     * this thread is to push, so waiting for the state itself would wait forever */
    for (;;) {
        GST_OBJECT_LOCK(s->pipe);
        gboolean playing = GST_STATE_TARGET(s->pipe) == GST_STATE_PLAYING;
        GST_OBJECT_UNLOCK(s->pipe);
        if (playing && (clock = gst_element_get_clock(s->pipe)))
            break;
        g_usleep(10000);
        g_mutex_lock(&s->lock);
        gboolean stop = s->stop;
        g_mutex_unlock(&s->lock);
        if (stop)
            return FALSE;
    }
    GstClockID id = gst_clock_new_single_shot_id(clock, gst_element_get_base_time(s->pipe) + end);
    gst_clock_id_wait(id, NULL);
    gst_clock_id_unref(id);
    gst_object_unref(clock);
    g_mutex_lock(&s->lock);
    gboolean go = !s->stop;
    g_mutex_unlock(&s->lock);
    return go;
}

static gpointer feed(gpointer data)
{
    Soak *s = data;
    GstClockTime t = 0, total = (GstClockTime)s->duration * GST_SECOND;
    for (guint i = 0; t < total; i = (i + 1) % s->clips->len) {
        const Clip *c = g_ptr_array_index(s->clips, i);
        GstCaps *caps = gst_caps_new_simple("audio/x-raw", "format", G_TYPE_STRING, "S16LE",
            "layout", G_TYPE_STRING, "interleaved", "rate", G_TYPE_INT, c->rate,
            "channels", G_TYPE_INT, c->channels, NULL);
        if (c->channels > 2) /* audioconvert wants a mask then; take none */
            gst_caps_set_simple(caps, "channel-mask", GST_TYPE_BITMASK, (guint64)0, NULL);
        if (s->verbose)
            g_printerr("%" GST_TIME_FORMAT " %s (%d Hz, %d ch)\n", GST_TIME_ARGS(t), c->path,
                       c->rate, c->channels);
        gst_app_src_set_caps(GST_APP_SRC(s->appsrc), caps);
        gst_caps_unref(caps);
        gsize chunk = (gsize)c->rate / CHUNK_DIV;
        for (gsize off = 0; off < c->frames; off += chunk) {
            gsize n = MIN(chunk, c->frames - off);
            /* times from the clip's start: no rounding drift over an hour */
            GstClockTime pts = t + gst_util_uint64_scale_int(off, GST_SECOND, c->rate);
            if (pts >= total)
                goto done;
            GstClockTime end = t + gst_util_uint64_scale_int(off + n, GST_SECOND, c->rate);
            if (!(s->live ? wait_clock(s, end) : wait_room(s, pts)))
                goto done;
            gsize bytes = n * (gsize)c->channels * 2;
            GstBuffer *b = gst_buffer_new_memdup(c->pcm + off * (gsize)c->channels, bytes);
            GST_BUFFER_PTS(b) = pts;
            GST_BUFFER_DURATION(b) = end - pts;
            if (gst_app_src_push_buffer(GST_APP_SRC(s->appsrc), b) != GST_FLOW_OK)
                goto done;
            g_mutex_lock(&s->lock);
            s->pushed = end;
            g_mutex_unlock(&s->lock);
        }
        t += gst_util_uint64_scale_int(c->frames, GST_SECOND, c->rate);
    }
done:
    gst_app_src_end_of_stream(GST_APP_SRC(s->appsrc));
    return NULL;
}

/* ------------------------------------------------------------------ watching */

static GstPadProbeReturn on_input(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Soak *s = data;
    (void)pad;
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
    GstClockTime pts = GST_BUFFER_PTS(b), dur = GST_BUFFER_DURATION(b);
    g_mutex_lock(&s->lock);
    /* the element closes its window at a DISCONT or a jump of more than 10 ms */
    if (GST_CLOCK_TIME_IS_VALID(s->next_in) && GST_CLOCK_TIME_IS_VALID(pts) &&
        (GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT) ||
         pts > s->next_in + 10 * GST_MSECOND || pts + 10 * GST_MSECOND < s->next_in)) {
        s->input_jumps++;
        if (s->verbose)
            g_printerr("input discontinuity at %" GST_TIME_FORMAT ": expected %" GST_TIME_FORMAT
                       "%s\n", GST_TIME_ARGS(pts), GST_TIME_ARGS(s->next_in),
                       GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DISCONT) ? ", DISCONT" : "");
    }
    s->next_in = GST_CLOCK_TIME_IS_VALID(pts) && GST_CLOCK_TIME_IS_VALID(dur) ? pts + dur
                                                                             : GST_CLOCK_TIME_NONE;
    g_mutex_unlock(&s->lock);
    return GST_PAD_PROBE_OK;
}

static void advance(Soak *s, GstClockTime t)
{
    if (!GST_CLOCK_TIME_IS_VALID(s->processed) || t > s->processed) {
        s->processed = t;
        g_cond_broadcast(&s->cond);
    }
}

static GstPadProbeReturn on_text(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Soak *s = data;
    (void)pad;
    g_mutex_lock(&s->lock);
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        Seg g = {GST_BUFFER_PTS(b), GST_BUFFER_PTS(b) + GST_BUFFER_DURATION(b), NULL};
        GstMapInfo map;
        if (gst_buffer_map(b, &map, GST_MAP_READ)) {
            g.text = g_strndup((const gchar *)map.data, map.size);
            gst_buffer_unmap(b, &map);
        }
        if (!GST_BUFFER_PTS_IS_VALID(b) || !GST_BUFFER_DURATION_IS_VALID(b) ||
            GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT))
            s->order_errors++;
        else if (s->bufs->len > 0 && g.start < g_array_index(s->bufs, Seg, s->bufs->len - 1).end)
            s->order_errors++;
        g_array_append_val(s->bufs, g);
        advance(s, g.end);
        if (s->live) {
            GstClockTime now = gst_clock_get_time(GST_ELEMENT_CLOCK(s->pipe)) -
                               gst_element_get_base_time(s->pipe);
            if (now > g.end && (!GST_CLOCK_TIME_IS_VALID(s->max_lag) || now - g.end > s->max_lag))
                s->max_lag = now - g.end;
            if (now > g.end + (GstClockTime)s->latency_ms * GST_MSECOND)
                s->late_finals++;
        }
    } else {
        GstEvent *e = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(e) == GST_EVENT_GAP) {
            GstClockTime ts, dur;
            gst_event_parse_gap(e, &ts, &dur);
            if (GST_CLOCK_TIME_IS_VALID(ts))
                advance(s, ts + (GST_CLOCK_TIME_IS_VALID(dur) ? dur : 0));
        } else if (GST_EVENT_TYPE(e) == GST_EVENT_EOS) {
            s->text_eos = TRUE;
        }
    }
    g_mutex_unlock(&s->lock);
    return GST_PAD_PROBE_OK;
}

/* Runs in the posting thread, so the messages keep the order they were posted in. */
static GstBusSyncReply on_bus_sync(GstBus *bus, GstMessage *m, gpointer data)
{
    Soak *s = data;
    (void)bus;
    const GstStructure *st = gst_message_get_structure(m);
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ELEMENT && st &&
        gst_structure_has_name(st, "whisper-segment")) {
        gboolean final = FALSE;
        guint64 a = 0, b = 0;
        gst_structure_get_boolean(st, "final", &final);
        gst_structure_get_uint64(st, "start", &a);
        gst_structure_get_uint64(st, "end", &b);
        g_mutex_lock(&s->lock);
        if (final) {
            Seg g = {a, b, g_strdup(gst_structure_get_string(st, "text"))};
            g_array_append_val(s->msgs, g);
        } else {
            s->partial_msgs++;
        }
        g_mutex_unlock(&s->lock);
    }
    return GST_BUS_PASS;
}

static gboolean on_bus(GstBus *bus, GstMessage *m, gpointer data)
{
    Soak *s = data;
    (void)bus;
    GError *err = NULL;
    gchar *dbg = NULL;
    switch (GST_MESSAGE_TYPE(m)) {
    case GST_MESSAGE_ERROR:
        gst_message_parse_error(m, &err, &dbg);
        g_printerr("ERROR from %s: %s (%s)\n", GST_OBJECT_NAME(m->src), err->message,
                   dbg ? dbg : "");
        s->errors++;
        g_main_loop_quit(s->loop);
        break;
    case GST_MESSAGE_WARNING:
        gst_message_parse_warning(m, &err, &dbg);
        g_printerr("WARNING from %s: %s (%s)\n", GST_OBJECT_NAME(m->src), err->message,
                   dbg ? dbg : "");
        s->warnings++;
        break;
    case GST_MESSAGE_EOS:
        g_main_loop_quit(s->loop);
        break;
    default:
        break;
    }
    if (err)
        g_error_free(err);
    g_free(dbg);
    return TRUE;
}

/* The size="N" of the first `<tag type="TYPE" ...>` in xml, or -1. */
static double xml_size(const char *xml, const char *tag, const char *type)
{
    gchar *key = g_strdup_printf("<%s type=\"%s\"", tag, type);
    const char *at = strstr(xml, key), *size = at ? strstr(at, "size=\"") : NULL;
    g_free(key);
    return size ? g_ascii_strtod(size + 6, NULL) : -1.0;
}

/* MB malloc has handed out and not had back, over every arena (threads allocate in
 * arenas of their own, which mallinfo2 leaves out) and mmapped chunks: malloc_info's
 * totals after its last heap, system memory - free chunks + mmapped.  A leak grows
 * this; RSS can also grow while it stays flat (pages touched for the first time,
 * fragmentation), which is not a leak.  -1 when it cannot be read. */
static double heap_in_use_mb(void)
{
    char *xml = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&xml, &len);
    if (!f)
        return -1.0;
    int rc = malloc_info(0, f);
    fclose(f);
    const char *end = xml ? g_strrstr(xml, "</heap>") : NULL;
    double mb = -1.0;
    if (rc == 0 && end) {
        double sys = xml_size(end, "system", "current"), fast = xml_size(end, "total", "fast"),
               rest = xml_size(end, "total", "rest"), mm = xml_size(end, "total", "mmap");
        if (sys >= 0 && fast >= 0 && rest >= 0 && mm >= 0)
            mb = (sys - fast - rest + mm) / (1024.0 * 1024.0);
    }
    free(xml);
    return mb;
}

static void print_row(Soak *s)
{
    glong rss = vm_rss_kb();
    double heap = heap_in_use_mb();
    g_mutex_lock(&s->lock);
    guint segs = s->bufs->len;
    double done = GST_CLOCK_TIME_IS_VALID(s->processed) ? (double)s->processed / GST_SECOND : 0;
    double pushed = (double)s->pushed / GST_SECOND;
    g_mutex_unlock(&s->lock);
    double minute = (double)(g_get_monotonic_time() - s->t_start) / 60e6;
    s->rows++;
    if (s->rows == 1) {
        s->rss_base = rss;
        s->heap_base = heap;
    } else {
        if (segs == s->segs_at_last_row)
            s->rows_without_text++;
    }
    s->rss_max = MAX(s->rss_max, rss);
    s->rss_last = rss;
    s->heap_last = heap;
    s->segs_at_last_row = segs;
    g_print("| %6.2f | %8.1f | %8.1f | %8u | %9.1f | %9.1f |\n", minute, rss / 1024.0, heap,
            segs, done, pushed);
}

static gboolean on_tick(gpointer data)
{
    print_row(data);
    return G_SOURCE_CONTINUE;
}

/* ------------------------------------------------------------------ verdict */

static gboolean check(const gchar *what, gboolean ok, const gchar *detail)
{
    g_print("%s %s: %s\n", ok ? "PASS" : "FAIL", what, detail);
    return ok;
}

/* The memory a decoding context for `path` holds once used (what the element's context
 * adds to the RSS at its first window), from a context of our own on the element's
 * shared model, with the element's default threads; its buffers are never touched. */
static glong context_kb(const gchar *path)
{
    GError *err = NULL;
    GstWhisperModel *gm = gst_whisper_model_acquire(path, &err);
    if (!gm) {
        g_printerr("whisper_soak: %s\n", err->message);
        g_clear_error(&err);
        return 0;
    }
    char *cerr = NULL;
    wkv_context *ctx =
        wkv_context_new(gst_whisper_model_get(gm), (int)g_get_num_processors(), &cerr);
    size_t cache = 0, act = 0;
    if (ctx)
        wkv_context_memory(ctx, &cache, &act);
    else
        g_printerr("whisper_soak: %s\n", cerr ? cerr : "no decoding context");
    wkv_context_free(ctx);
    free(cerr);
    gst_whisper_model_release(gm);
    return (glong)((cache + act) / 1024);
}

static gboolean verdict(Soak *s, double wall_s)
{
    gboolean ok = TRUE;
    gchar *d;

    d = g_strdup_printf("first row %.1f MB, max after it %.1f MB (+%.2f MB), last %.1f MB; "
                        "heap in use first row %.1f MB, last %.1f MB (%+.2f MB)",
                        s->rss_base / 1024.0, s->rss_max / 1024.0,
                        (s->rss_max - s->rss_base) / 1024.0, s->rss_last / 1024.0,
                        s->heap_base, s->heap_last, s->heap_last - s->heap_base);
    ok &= check("rss", s->rows >= 2 && s->rss_max - s->rss_base < RSS_LIMIT_KB, d);
    g_free(d);

    glong peak = vm_kb("VmHWM:");
    d = g_strdup_printf("before streaming %.1f MB, peak while streaming %.1f MB (+%.1f MB; "
                        "limit +%.1f MB: decoding context %.1f MB + %d MB)",
                        s->rss_before / 1024.0, peak / 1024.0, (peak - s->rss_before) / 1024.0,
                        (s->ctx_kb + HOLD_MARGIN_KB) / 1024.0, s->ctx_kb / 1024.0,
                        HOLD_MARGIN_KB / 1024);
    ok &= check("memory", peak > 0 && s->ctx_kb > 0 &&
                              peak - s->rss_before < s->ctx_kb + HOLD_MARGIN_KB, d);
    g_free(d);

    d = g_strdup_printf("%u text buffers, %u out of order, overlapping, untimed or partial",
                        s->bufs->len, s->order_errors);
    ok &= check("timestamps", s->bufs->len > 0 && s->order_errors == 0, d);
    g_free(d);

    guint mismatched = 0;
    for (guint i = 0; i < MIN(s->bufs->len, s->msgs->len); i++) {
        const Seg *a = &g_array_index(s->bufs, Seg, i), *b = &g_array_index(s->msgs, Seg, i);
        if (a->start != b->start || a->end != b->end || g_strcmp0(a->text, b->text) != 0)
            mismatched++;
    }
    double pushed = (double)s->pushed / GST_SECOND;
    double done = GST_CLOCK_TIME_IS_VALID(s->processed) ? (double)s->processed / GST_SECOND : 0;
    /* live text is final within `latency` of its audio; at EOS the element commits the
     * rest, so the whole stream must be covered either way */
    gboolean covered = s->text_eos && done + 0.01 >= pushed;
    d = g_strdup_printf("%u final messages (%u partial), %u text buffers, %u differ; text "
                        "covers %.1f of %.1f s pushed%s; %u rows without new text; "
                        "%u errors, %u warnings; %u input discontinuities",
                        s->msgs->len, s->partial_msgs, s->bufs->len, mismatched, done, pushed,
                        s->text_eos ? "" : " (no EOS on text_src)", s->rows_without_text,
                        s->errors, s->warnings, s->input_jumps);
    ok &= check("segments", s->msgs->len == s->bufs->len && mismatched == 0 && covered &&
                                s->rows_without_text == 0 && s->errors == 0 &&
                                s->warnings == 0 && pushed >= s->duration - 0.5,
                d);
    g_free(d);

    guint64 windows = 0;
    gdouble rtf = 0;
    g_object_get(s->whisper, "windows", &windows, "real-time-factor", &rtf, NULL);
    g_print("info: %.0f s of audio in %.0f s of wall time (x%.1f) and %.0f s of CPU, "
            "element windows/runs %" G_GUINT64_FORMAT ", real-time factor %.3f",
            pushed, wall_s, wall_s > 0 ? pushed / wall_s : 0, cpu_seconds() - s->cpu_start,
            windows, rtf);
    if (s->live && GST_CLOCK_TIME_IS_VALID(s->max_lag))
        g_print(", latest final %.1f s after its audio ended (%u of %u finals later than the "
                "element's latency, %u ms)", (double)s->max_lag / GST_SECOND, s->late_finals,
                s->bufs->len, s->latency_ms);
    g_print("\n");
    return ok;
}

/* ------------------------------------------------------------------ main */

static gboolean build_pipeline(Soak *s)
{
    GError *err = NULL;
    gchar *desc = g_strdup_printf(
        "appsrc name=in format=time is-live=%s min-latency=%" G_GUINT64_FORMAT
        " ! audioconvert ! audioresample ! whisperkv name=w ! queue max-size-time=0 "
        "max-size-bytes=0 max-size-buffers=0 ! fakesink sync=%s "
        "w.text_src ! queue max-size-time=0 max-size-bytes=0 max-size-buffers=0 ! "
        "fakesink sync=false async=false",
        s->live ? "true" : "false", (guint64)(GST_SECOND / CHUNK_DIV), s->live ? "true" : "false");
    s->pipe = gst_parse_launch(desc, &err);
    g_free(desc);
    if (!s->pipe) {
        g_printerr("whisper_soak: %s\n", err->message);
        g_error_free(err);
        return FALSE;
    }
    s->appsrc = gst_bin_get_by_name(GST_BIN(s->pipe), "in");
    s->whisper = gst_bin_get_by_name(GST_BIN(s->pipe), "w");
    g_object_set(s->whisper, "model", s->model, NULL);
    if (s->step > 0)
        g_object_set(s->whisper, "step", (guint)s->step, NULL);
    if (s->latency > 0)
        g_object_set(s->whisper, "latency", (guint)s->latency, NULL);
    if (s->no_fallback)
        g_object_set(s->whisper, "temperature-fallback", FALSE, NULL);
    /* offline: bounded, the feeder blocks while the pipeline is busy */
    g_object_set(s->appsrc, "block", TRUE, "max-bytes", (guint64)(1 << 20), NULL);

    g_object_get(s->whisper, "latency", &s->latency_ms, NULL);
    GstPad *sink = gst_element_get_static_pad(s->whisper, "sink");
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, on_input, s, NULL);
    gst_object_unref(sink);
    GstPad *text = gst_element_get_static_pad(s->whisper, "text_src");
    gst_pad_add_probe(text, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                      on_text, s, NULL);
    gst_object_unref(text);
    GstBus *bus = gst_element_get_bus(s->pipe);
    gst_bus_set_sync_handler(bus, on_bus_sync, s, NULL);
    gst_bus_add_watch(bus, on_bus, s);
    gst_object_unref(bus);
    return TRUE;
}

static void seg_clear(gpointer p)
{
    g_free(((Seg *)p)->text);
}

int main(int argc, char **argv)
{
    Soak s = {.duration = 3600, .interval = 60, .mode = NULL};
    GOptionEntry entries[] = {
        {"model", 0, 0, G_OPTION_ARG_FILENAME, &s.model, "ggml model", "FILE"},
        {"speech", 0, 0, G_OPTION_ARG_FILENAME, &s.speech, "folder of recordings", "DIR"},
        {"mode", 0, 0, G_OPTION_ARG_STRING, &s.mode, "offline or live", "MODE"},
        {"duration", 0, 0, G_OPTION_ARG_INT, &s.duration, "seconds of audio (3600)", "S"},
        {"interval", 0, 0, G_OPTION_ARG_INT, &s.interval, "seconds between rows (60)", "S"},
        {"max-ahead", 0, 0, G_OPTION_ARG_INT, &s.max_ahead,
         "offline: push at most S s past the element's text position (0: no limit; else "
         "at least 60: the element needs a whole 30-s window past its text to go on, "
         "and 30 stalled)",
         "S"},
        {"step", 0, 0, G_OPTION_ARG_INT, &s.step, "live: the element's step (ms)", "MS"},
        {"latency", 0, 0, G_OPTION_ARG_INT, &s.latency, "live: the element's latency (ms)",
         "MS"},
        {"no-fallback", 0, 0, G_OPTION_ARG_NONE, &s.no_fallback,
         "temperature-fallback=false (random models fall back on every window)", NULL},
        {"verbose", 0, 0, G_OPTION_ARG_NONE, &s.verbose,
         "print each recording as it starts and each input discontinuity", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    GOptionContext *oc = g_option_context_new("- soak the whisper element");
    g_option_context_add_main_entries(oc, entries, NULL);
    g_option_context_add_group(oc, gst_init_get_option_group());
    GError *err = NULL;
    if (!g_option_context_parse(oc, &argc, &argv, &err) || !s.model || !s.speech || !s.mode ||
        (strcmp(s.mode, "offline") != 0 && strcmp(s.mode, "live") != 0) || s.duration <= 0 ||
        s.interval <= 0 || s.max_ahead < 0 || (s.max_ahead > 0 && s.max_ahead < 60)) {
        g_printerr("whisper_soak: %s\n%s", err ? err->message : "bad or missing options",
                   g_option_context_get_help(oc, TRUE, NULL));
        return 2;
    }
    g_option_context_free(oc);
    s.live = strcmp(s.mode, "live") == 0;
    gst_init(&argc, &argv);
    gst_whisper_register(NULL);

    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    find_audio(s.speech, paths);
    g_ptr_array_sort(paths, by_name);
    s.clips = g_ptr_array_new_with_free_func(clip_free);
    double total = 0;
    guint skipped = 0;
    for (guint i = 0; i < paths->len; i++) {
        Clip *c = decode_clip(g_ptr_array_index(paths, i));
        if (!c) {
            skipped++;
            continue;
        }
        total += (double)c->frames / c->rate;
        g_ptr_array_add(s.clips, c);
    }
    g_print("%u recordings (%.1f s; %u not decodable) under %s, looped to %d s, %s\n",
            s.clips->len, total, skipped, s.speech, s.duration, s.mode);
    g_ptr_array_unref(paths);
    if (s.clips->len == 0) {
        g_printerr("whisper_soak: no decodable recordings under %s\n", s.speech);
        return 1;
    }

    g_mutex_init(&s.lock);
    g_cond_init(&s.cond);
    s.processed = GST_CLOCK_TIME_NONE;
    s.next_in = GST_CLOCK_TIME_NONE;
    s.max_lag = GST_CLOCK_TIME_NONE;
    s.bufs = g_array_new(FALSE, TRUE, sizeof(Seg));
    s.msgs = g_array_new(FALSE, TRUE, sizeof(Seg));
    g_array_set_clear_func(s.bufs, seg_clear);
    g_array_set_clear_func(s.msgs, seg_clear);
    s.loop = g_main_loop_new(NULL, FALSE);
    if (!build_pipeline(&s))
        return 1;

    /* the model loads at READY -> PAUSED: RSS before streaming includes it */
    gst_element_set_state(s.pipe, GST_STATE_PAUSED);
    gst_element_get_state(s.pipe, NULL, NULL, 30 * GST_SECOND);
    /* "5" resets VmHWM to the current RSS: the peak is then the streaming's */
    FILE *refs = fopen("/proc/self/clear_refs", "w");
    if (refs) {
        fputs("5", refs);
        fclose(refs);
    }
    s.rss_before = vm_rss_kb();
    s.ctx_kb = context_kb(s.model);
    g_print("| minute | RSS (MB) | heap (MB) | segments | done (s) | pushed (s) |\n"
            "|-------:|---------:|----------:|---------:|----------:|-----------:|\n");
    s.t_start = g_get_monotonic_time();
    s.cpu_start = cpu_seconds();
    if (gst_element_set_state(s.pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        g_printerr("whisper_soak: the pipeline does not start\n");
        return 1;
    }
    s.feeder = g_thread_new("feeder", feed, &s);
    guint tick = g_timeout_add_seconds((guint)s.interval, on_tick, &s);
    g_main_loop_run(s.loop);
    g_source_remove(tick);
    double wall = (double)(g_get_monotonic_time() - s.t_start) / 1e6;
    print_row(&s);

    g_mutex_lock(&s.lock);
    s.stop = TRUE;
    g_cond_broadcast(&s.cond);
    g_mutex_unlock(&s.lock);
    gst_element_set_state(s.pipe, GST_STATE_NULL);
    g_thread_join(s.feeder);
    gboolean ok = verdict(&s, wall);

    gst_object_unref(s.appsrc);
    gst_object_unref(s.whisper);
    gst_object_unref(s.pipe);
    g_main_loop_unref(s.loop);
    g_array_unref(s.bufs);
    g_array_unref(s.msgs);
    g_ptr_array_unref(s.clips);
    g_mutex_clear(&s.lock);
    g_cond_clear(&s.cond);
    g_free(s.model);
    g_free(s.speech);
    g_free(s.mode);
    g_print("%s\n", ok ? "soak: PASS" : "soak: FAIL");
    return ok ? 0 : 1;
}
