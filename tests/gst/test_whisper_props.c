/* Checks of the whisper element's properties (their defaults are the core's, the docs
 * list them all), of text_src's flow reaching chain, and of the latency promise. */
#include "whisper_check.h"
#include "gstwhisper.h"

#include <string.h>

/* ------------------------------------------------------------------ defaults */

static GParamSpec *find_pspec(GstElement *e, const gchar *name)
{
    GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(e), name);
    fail_unless(ps != NULL, "no property '%s'", name);
    return ps;
}

/* The property's param spec default and the new element's value, as `type`. */
static void default_and_value(GstElement *e, const gchar *name, GValue *def, GValue *val)
{
    GParamSpec *ps = find_pspec(e, name);
    g_value_init(def, G_PARAM_SPEC_VALUE_TYPE(ps));
    g_param_value_set_default(ps, def);
    g_value_init(val, G_PARAM_SPEC_VALUE_TYPE(ps));
    g_object_get_property(G_OBJECT(e), name, val);
}

static void check_bool(GstElement *e, const gchar *name, gboolean want)
{
    GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
    default_and_value(e, name, &def, &val);
    fail_unless_equals_int(g_value_get_boolean(&def), want);
    fail_unless_equals_int(g_value_get_boolean(&val), want);
}

static void check_int(GstElement *e, const gchar *name, gint want)
{
    GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
    default_and_value(e, name, &def, &val);
    fail_unless_equals_int(g_value_get_int(&def), want);
    fail_unless_equals_int(g_value_get_int(&val), want);
}

static void check_float(GstElement *e, const gchar *name, gfloat want)
{
    GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
    default_and_value(e, name, &def, &val);
    fail_unless(g_value_get_float(&def) == want, "%s: default %g, core %g", name,
                g_value_get_float(&def), want);
    fail_unless(g_value_get_float(&val) == want, "%s: value %g, core %g", name,
                g_value_get_float(&val), want);
}

static void check_uint64(GstElement *e, const gchar *name, guint64 want)
{
    GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
    default_and_value(e, name, &def, &val);
    fail_unless_equals_uint64(g_value_get_uint64(&def), want);
    fail_unless_equals_uint64(g_value_get_uint64(&val), want);
}

static void check_string(GstElement *e, const gchar *name, const gchar *want)
{
    GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
    default_and_value(e, name, &def, &val);
    fail_unless_equals_string(g_value_get_string(&def), want);
    fail_unless_equals_string(g_value_get_string(&val), want);
    g_value_unset(&def);
    g_value_unset(&val);
}

/* Every property that is a core option defaults (param spec and new element) to the
 * core's wkv_options_default(); every other one starts at its param spec's default. */
GST_START_TEST(test_defaults_from_core)
{
    g_unsetenv("WHISPERKV_MODEL");
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    fail_unless(e != NULL);
    wkv_options d;
    wkv_options_default(&d);
    check_string(e, "language", d.language);
    check_string(e, "language-code", d.language);
    check_bool(e, "translate", d.translate != 0);
    check_string(e, "initial-prompt", d.initial_prompt);
    check_bool(e, "condition-on-previous-text", d.condition_on_previous_text != 0);
    check_float(e, "no-speech-threshold", d.no_speech_threshold);
    check_int(e, "beam-size", d.beam_size);
    check_int(e, "best-of", d.best_of);
    check_int(e, "sample-len", d.sample_len);
    check_bool(e, "temperature-fallback", d.temperature_increment > 0);
    check_float(e, "compression-ratio-threshold", d.compression_ratio_threshold);
    check_float(e, "logprob-threshold", d.logprob_threshold);
    check_uint64(e, "seed", d.seed);

    gst_object_unref(e);

    /* both elements: every property starts at its own class's param spec default
     * (the transcriber's text-unit and word-timestamps differ from the filter's) */
    const gchar *factories[] = {"whisperkv", "whisperkvtranscriber"};
    for (guint f = 0; f < G_N_ELEMENTS(factories); f++) {
        e = gst_element_factory_make(factories[f], NULL);
        fail_unless(e != NULL, "no %s", factories[f]);
        guint n;
        GParamSpec **all = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &n);
        guint checked = 0;
        for (guint i = 0; i < n; i++) {
            GParamSpec *ps = all[i];
            if (ps->owner_type != G_OBJECT_TYPE(e) || !(ps->flags & G_PARAM_READABLE))
                continue;
            GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
            default_and_value(e, ps->name, &def, &val);
            fail_unless(g_param_values_cmp(ps, &def, &val) == 0, "%s: '%s' starts at %s, not "
                        "at its default %s", factories[f], ps->name,
                        g_strdup_value_contents(&val), g_strdup_value_contents(&def));
            g_value_unset(&def);
            g_value_unset(&val);
            checked++;
        }
        fail_unless(checked >= 20, "%s: only %u properties", factories[f], checked);
        g_free(all);
        gst_object_unref(e);
    }
}
GST_END_TEST

/* docs/element.md's property table names every property of the element. */
GST_START_TEST(test_docs_list_every_property)
{
    const gchar *path = g_getenv("WHISPER_ELEMENT_DOC");
    fail_unless(path != NULL, "WHISPER_ELEMENT_DOC is not set");
    gchar *doc = NULL;
    fail_unless(g_file_get_contents(path, &doc, NULL, NULL), "cannot read %s", path);
    /* the names in backticks in the first cell of the table under "## Properties" */
    const gchar *sec = strstr(doc, "\n## Properties");
    fail_unless(sec != NULL, "no Properties section in %s", path);
    const gchar *end = strstr(sec + 1, "\n## ");
    gchar *section = g_strndup(sec, end ? (gsize)(end - sec) : strlen(sec));
    GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gchar **lines = g_strsplit(section, "\n", -1);
    for (gchar **l = lines; *l; l++) {
        if ((*l)[0] != '|')
            continue;
        const gchar *cell_end = strchr(*l + 1, '|');
        gchar *cell = g_strndup(*l + 1, cell_end ? (gsize)(cell_end - *l - 1) : 0);
        gchar **parts = g_strsplit(cell, "`", -1);
        for (guint k = 1; parts[k]; k += 2)
            g_hash_table_add(names, g_strdup(parts[k]));
        g_strfreev(parts);
        g_free(cell);
    }
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    guint n;
    GParamSpec **all = g_object_class_list_properties(G_OBJECT_GET_CLASS(e), &n);
    GString *missing = g_string_new(NULL);
    for (guint i = 0; i < n; i++)
        if (all[i]->owner_type == G_OBJECT_TYPE(e) && !g_hash_table_contains(names, all[i]->name))
            g_string_append_printf(missing, " %s", all[i]->name);
    fail_unless(missing->len == 0, "docs/element.md's property table lacks:%s", missing->str);
    g_string_free(missing, TRUE);
    g_free(all);
    gst_object_unref(e);
    g_strfreev(lines);
    g_hash_table_unref(names);
    g_free(section);
    g_free(doc);
}
GST_END_TEST

/* ------------------------------------------------------------------ compute type */

/* Takes a whisper element with property `prop` set to `value` to PAUSED and back;
 * returns the state change's result and the COMPLETE progress text or the ERROR's
 * debug text (g_free) in *said. */
static GstStateChangeReturn start_with(const gchar *prop, const gchar *value, gchar **said)
{
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    fail_unless(e != NULL);
    gst_util_set_object_arg(G_OBJECT(e), prop, value);
    g_object_set(e, "model", test_model, "threads", 1, NULL);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    GstStateChangeReturn ret = gst_element_set_state(e, GST_STATE_PAUSED);
    *said = NULL;
    GstMessage *m;
    while (!*said && (m = gst_bus_pop(bus))) {
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_PROGRESS) {
            GstProgressType pt;
            gchar *code = NULL, *text = NULL;
            gst_message_parse_progress(m, &pt, &code, &text);
            if (pt == GST_PROGRESS_TYPE_COMPLETE)
                *said = g_strdup(text);
            g_free(code);
            g_free(text);
        } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
            GError *err = NULL;
            gst_message_parse_error(m, &err, said);
            g_error_free(err);
        }
        gst_message_unref(m);
    }
    gst_element_set_state(e, GST_STATE_NULL);
    gst_element_set_bus(e, NULL);
    gst_object_unref(bus);
    gst_object_unref(e);
    return ret;
}

/* compute-type defaults to auto (f32 on the f16 test model) and reaches the context:
 * the type in effect is said on the load's COMPLETE message; without oneDNN bf16 and
 * int8 fail READY->PAUSED with the core's error naming it. */
GST_START_TEST(test_compute_type)
{
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
    default_and_value(e, "compute-type", &def, &val);
    fail_unless_equals_int(g_value_get_enum(&def), WKV_COMPUTE_AUTO);
    fail_unless_equals_int(g_value_get_enum(&val), WKV_COMPUTE_AUTO);
    gst_object_unref(e);

    gchar *said;
    fail_unless_equals_int(start_with("compute-type", "auto", &said), GST_STATE_CHANGE_SUCCESS);
    fail_unless(said && g_str_has_suffix(said, "compute type f32, f32 caches"), "auto: %s", said);
    g_free(said);
    const gchar *other[] = {"bf16", "int8"};
    for (guint i = 0; i < G_N_ELEMENTS(other); i++) {
        GstStateChangeReturn ret = start_with("compute-type", other[i], &said);
        /* bf16/int8 keep the caches in half */
        gchar *want = g_strdup_printf("compute type %s, f16 caches", other[i]);
#ifdef WKV_TEST_DNNL
        if (ret == GST_STATE_CHANGE_FAILURE && said && strstr(said, "on this CPU")) {
            /* a CPU without the type's instructions: refused with the core's reason */
            g_print("compute-type %s left out: %s\n", other[i], said);
        } else {
            fail_unless_equals_int(ret, GST_STATE_CHANGE_SUCCESS);
            fail_unless(said && g_str_has_suffix(said, want), "%s: %s", other[i], said);
        }
#else
        fail_unless_equals_int(ret, GST_STATE_CHANGE_FAILURE);
        fail_unless(said && strstr(said, "oneDNN"), "%s: %s", other[i], said);
#endif
        g_free(want);
        g_free(said);
    }
}
GST_END_TEST

/* kv-cache defaults to auto (f32 on the f16 test model, on f32) and reaches the
 * context: the caches in effect are said on the load's COMPLETE message. */
GST_START_TEST(test_kv_cache)
{
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    GValue def = G_VALUE_INIT, val = G_VALUE_INIT;
    default_and_value(e, "kv-cache", &def, &val);
    fail_unless_equals_int(g_value_get_enum(&def), WKV_CACHE_AUTO);
    fail_unless_equals_int(g_value_get_enum(&val), WKV_CACHE_AUTO);
    gst_object_unref(e);
    const gchar *set[] = {"auto", "f32", "f16"}, *want[] = {"f32", "f32", "f16"};
    for (guint i = 0; i < G_N_ELEMENTS(set); i++) {
        gchar *said = NULL, *end = g_strdup_printf("compute type f32, %s caches", want[i]);
        fail_unless_equals_int(start_with("kv-cache", set[i], &said), GST_STATE_CHANGE_SUCCESS);
        fail_unless(said && g_str_has_suffix(said, end), "kv-cache %s: %s", set[i], said);
        g_free(end);
        g_free(said);
    }
}
GST_END_TEST

/* What runs the f32 products is fixed for the process, so the element says it once, on
 * the log, and posts a WARNING only when those products run kernels older than the
 * CPU's (wkv_f32_gemm_slow): three starts post no INFO or WARNING message where they
 * run the CPU's own kernels, and at most one WARNING where they do not.  (The element
 * used to post an INFO message at every start on a CPU OpenBLAS did not know.) */
GST_START_TEST(test_f32_products_said_once)
{
    guint infos = 0, warnings = 0;
    for (int i = 0; i < 3; i++) {
        GstElement *e = gst_element_factory_make("whisperkv", NULL);
        fail_unless(e != NULL);
        g_object_set(e, "model", test_model, "threads", 1, NULL);
        GstBus *bus = gst_bus_new();
        gst_element_set_bus(e, bus);
        fail_unless_equals_int(gst_element_set_state(e, GST_STATE_PAUSED),
                               GST_STATE_CHANGE_SUCCESS);
        GstMessage *m;
        while ((m = gst_bus_pop(bus))) {
            if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_INFO)
                infos++;
            else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING)
                warnings++;
            gst_message_unref(m);
        }
        gst_element_set_state(e, GST_STATE_NULL);
        gst_element_set_bus(e, NULL);
        gst_object_unref(bus);
        gst_object_unref(e);
    }
    g_print("f32 products on %s (%s kernels), slow %d: %u INFO, %u WARNING messages in 3 "
            "starts\n", wkv_f32_gemm_library(), wkv_f32_gemm_kernels(), wkv_f32_gemm_slow(),
            infos, warnings);
    fail_unless_equals_int(infos, 0);
    fail_unless(warnings <= (wkv_f32_gemm_slow() ? 1u : 0u), "%u WARNING messages", warnings);
}
GST_END_TEST

/* Blurbs that say what happens, against what happens: the statistics blurbs say they
 * count since the last READY to PAUSED, and they do (a window counted, then 0 after
 * PAUSED -> READY -> PAUSED); partial-results says partials are messages, never
 * buffers (gst-live checks the buffers). */
GST_START_TEST(test_blurbs_match_behaviour)
{
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    GObjectClass *k = G_OBJECT_GET_CLASS(e);
    const gchar *stats[] = {"windows", "tokens", "late-commits"};
    for (guint i = 0; i < G_N_ELEMENTS(stats); i++)
        fail_unless(strstr(g_param_spec_get_blurb(g_object_class_find_property(k, stats[i])),
                           "since the last READY to PAUSED") != NULL, "%s", stats[i]);
    fail_unless(strstr(g_param_spec_get_blurb(g_object_class_find_property(k,
                "partial-results")), "never go out as buffers") != NULL);
    gst_object_unref(e);

    WhisperHarness wh;
    wh_setup(&wh, test_model, FALSE, NULL);
    gsize n = 16000 * 4;
    float *pcm = synth_audio(n, 5);
    wh_push_pcm(&wh, pcm, n, 8000, 0, FALSE, TRUE);
    g_ptr_array_unref(wh_finish(&wh));
    guint64 windows = 0, tokens = 0;
    g_object_get(wh.element, "windows", &windows, "tokens", &tokens, NULL);
    fail_unless(windows > 0 && tokens > 0, "nothing counted");
    fail_unless(gst_element_set_state(wh.element, GST_STATE_READY) == GST_STATE_CHANGE_SUCCESS);
    g_object_get(wh.element, "windows", &windows, NULL);
    fail_unless(windows > 0, "reset before READY to PAUSED");
    fail_unless(gst_element_set_state(wh.element, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
    g_object_get(wh.element, "windows", &windows, "tokens", &tokens, NULL);
    fail_unless(windows == 0 && tokens == 0, "not reset at READY to PAUSED: %" G_GUINT64_FORMAT
                " windows", windows);
    wh_teardown(&wh);
    g_free(pcm);
}
GST_END_TEST

/* sample-len reaches the decoder: capped at 4, no window runs more than its start
 * sequence (at most 4 tokens here) and 4 sampled tokens through the decoder; uncapped,
 * the micro model's windows run more (so the check can fail). */
GST_START_TEST(test_sample_len)
{
    const gsize n = 16000 * 12;
    float *pcm = synth_audio(n, 7);
    double per_window[2];
    for (int capped = 0; capped < 2; capped++) {
        WhisperHarness wh;
        wh_setup(&wh, test_model, FALSE, "sample-len", capped ? 4 : 0,
                 "condition-on-previous-text", FALSE, "temperature-fallback", FALSE,
                 "no-speech-threshold", 1.0f, NULL);
        guint64 w0, t0, w1, t1;
        g_object_get(wh.element, "windows", &w0, "tokens", &t0, NULL);
        wh_push_pcm(&wh, pcm, n, 1600, 0, FALSE, FALSE);
        g_ptr_array_unref(wh_finish(&wh));
        g_object_get(wh.element, "windows", &w1, "tokens", &t1, NULL);
        fail_unless(w1 > w0, "no window decoded");
        per_window[capped] = (double)(t1 - t0) / (double)(w1 - w0);
        wh_teardown(&wh);
    }
    g_print("decoder positions a window: %.1f, with sample-len 4: %.1f\n", per_window[0],
            per_window[1]);
    fail_unless(per_window[1] <= 8.0, "sample-len 4: %.1f positions a window", per_window[1]);
    fail_unless(per_window[0] > 8.0, "uncapped: %.1f positions a window: the check is void",
                per_window[0]);
    g_free(pcm);
}
GST_END_TEST

/* ------------------------------------------------------------------ flow */

#define SAMPLES_NS(n) gst_util_uint64_scale_int((n), GST_SECOND, 16000)

static GstBuffer *pcm_buffer(const float *pcm, gsize n, gsize off)
{
    GstBuffer *b = gst_buffer_new_allocate(NULL, n * sizeof(float), NULL);
    gst_buffer_fill(b, 0, pcm + off, n * sizeof(float));
    GST_BUFFER_PTS(b) = SAMPLES_NS(off);
    GST_BUFFER_DURATION(b) = SAMPLES_NS(n);
    return b;
}

/* An element with a harness on its audio pads only (the harness's upstream is live:
 * the element runs live, committing within `latency` 1 s). */
static GstHarness *audio_only(GstElement **element)
{
    *element = gst_element_factory_make("whisperkv", NULL);
    fail_unless(*element != NULL);
    g_object_set(*element, "model", test_model, "threads", 1, "step", 1000, "latency", 1000,
                 NULL);
    wh_tune(*element);
    GstHarness *h = gst_harness_new_with_element(*element, "sink", "src");
    gst_harness_set_src_caps_str(h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                    "layout=interleaved");
    return h;
}

/* Waits for a final whisper-segment message: its buffer is pushed right after. */
static gboolean wait_final(GstBus *bus)
{
    GstMessage *m;
    while ((m = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND, GST_MESSAGE_ELEMENT))) {
        gboolean final = FALSE;
        const GstStructure *s = gst_message_get_structure(m);
        if (gst_structure_has_name(s, "whisper-segment"))
            gst_structure_get_boolean(s, "final", &final);
        gst_message_unref(m);
        if (final)
            return TRUE;
    }
    return FALSE;
}

/* text_src not linked: once text went nowhere (not-linked), the audio still flows. */
GST_START_TEST(test_text_unlinked_audio_flows)
{
    GstElement *e;
    GstHarness *h = audio_only(&e);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    gsize n = 16000 * 10, chunk = 16000;
    float *pcm = synth_audio(n + chunk, 61);
    for (gsize off = 0; off < n; off += chunk)
        fail_unless_equals_int(gst_harness_push(h, pcm_buffer(pcm, chunk, off)), GST_FLOW_OK);
    fail_unless(wait_final(bus), "no final text");
    g_usleep(200000); /* its buffer went to the unlinked pad meanwhile */
    fail_unless_equals_int(gst_harness_push(h, pcm_buffer(pcm, chunk, n)), GST_FLOW_OK);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    gst_harness_teardown(h);
    gst_element_set_bus(e, NULL);
    gst_object_unref(bus);
    gst_object_unref(e);
    g_free(pcm);
}
GST_END_TEST

/* src not linked, text_src linked: chain returns OK (not-linked only when both pads
 * are), so the transcript goes on. */
GST_START_TEST(test_src_unlinked_text_flows)
{
    GstElement *e = gst_element_factory_make("whisperkv", NULL);
    fail_unless(e != NULL);
    g_object_set(e, "model", test_model, "threads", 1, NULL);
    GstHarness *h = gst_harness_new_with_element(e, "sink", NULL);
    GstHarness *text = gst_harness_new_with_element(e, NULL, "text_src");
    gst_harness_set_src_caps_str(h, "audio/x-raw, format=F32LE, rate=16000, channels=1, "
                                    "layout=interleaved");
    gsize n = 16000 * 3, chunk = 16000;
    float *pcm = synth_audio(n, 63);
    for (gsize off = 0; off < n; off += chunk)
        fail_unless_equals_int(gst_harness_push(h, pcm_buffer(pcm, chunk, off)), GST_FLOW_OK);
    gst_harness_teardown(text);
    gst_harness_teardown(h);
    gst_object_unref(e);
    g_free(pcm);
}
GST_END_TEST

static GstFlowReturn refuse_chain(GstPad *pad, GstObject *parent, GstBuffer *buf)
{
    (void)pad;
    (void)parent;
    gst_buffer_unref(buf);
    return GST_FLOW_ERROR;
}

/* text_src's consumer fails: the audio's chain returns the error (as a demuxer's does
 * when one of its pads fails), so upstream stops. */
GST_START_TEST(test_text_error_reaches_chain)
{
    GstElement *e;
    GstHarness *h = audio_only(&e);
    GstPad *sink = gst_pad_new("refuse", GST_PAD_SINK);
    gst_pad_set_chain_function(sink, refuse_chain);
    gst_pad_set_active(sink, TRUE);
    GstPad *tp = gst_element_get_static_pad(e, "text_src");
    fail_unless_equals_int(gst_pad_link(tp, sink), GST_PAD_LINK_OK);
    gsize n = 16000 * 120, chunk = 16000;
    float *pcm = synth_audio(n, 62);
    GstFlowReturn ret = GST_FLOW_OK;
    /* the first final fails downstream; chain hears it by the next buffers */
    for (gsize off = 0; off < n && ret == GST_FLOW_OK; off += chunk) {
        ret = gst_harness_push(h, pcm_buffer(pcm, chunk, off));
        g_usleep(50000);
    }
    fail_unless_equals_int(ret, GST_FLOW_ERROR);
    gst_harness_teardown(h);
    gst_pad_unlink(tp, sink);
    gst_object_unref(tp);
    gst_object_unref(sink);
    gst_object_unref(e);
    g_free(pcm);
}
GST_END_TEST

typedef struct {
    gint buffers, refused;
} Refuser;

static GstFlowReturn count_chain(GstPad *pad, GstObject *parent, GstBuffer *buf)
{
    (void)parent;
    g_atomic_int_inc(&((Refuser *)g_object_get_data(G_OBJECT(pad), "r"))->buffers);
    gst_buffer_unref(buf);
    return GST_FLOW_OK;
}

/* Refuses TAG events (as textoverlay's text pad does once its video is at EOS). */
static gboolean refuse_tags(GstPad *pad, GstObject *parent, GstEvent *event)
{
    (void)parent;
    gboolean tag = GST_EVENT_TYPE(event) == GST_EVENT_TAG;
    if (tag)
        g_atomic_int_inc(&((Refuser *)g_object_get_data(G_OBJECT(pad), "r"))->refused);
    gst_event_unref(event);
    return !tag;
}

/* text_src's consumer refuses the text's tag events: gst_pad_push then fails with
 * ERROR before the buffer leaves, though no one posted an error.  The text ends as at
 * EOS downstream, with a warning and no error, and the audio flows on (the filter's
 * chain combines an ended text pad with src's OK). */
GST_START_TEST(test_text_refused_tags_end_text)
{
    GstElement *e;
    GstHarness *h = audio_only(&e);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    Refuser r = { 0, 0 };
    GstPad *sink = gst_pad_new("refuse-tags", GST_PAD_SINK);
    g_object_set_data(G_OBJECT(sink), "r", &r);
    gst_pad_set_chain_function(sink, count_chain);
    gst_pad_set_event_function(sink, refuse_tags);
    gst_pad_set_active(sink, TRUE);
    GstPad *tp = gst_element_get_static_pad(e, "text_src");
    fail_unless_equals_int(gst_pad_link(tp, sink), GST_PAD_LINK_OK);
    gsize n = 16000 * 30, chunk = 16000;
    float *pcm = synth_audio(n, 62);
    guint warnings = 0, errors = 0;
    for (gsize off = 0; off < n; off += chunk) {
        fail_unless_equals_int(gst_harness_push(h, pcm_buffer(pcm, chunk, off)), GST_FLOW_OK);
        GstMessage *m;
        /* the first final's warning (or error) before the audio ends */
        while (!warnings && !errors &&
               (m = gst_bus_timed_pop_filtered(bus, 100 * GST_MSECOND,
                                               GST_MESSAGE_WARNING | GST_MESSAGE_ERROR))) {
            if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
                errors++;
            } else {
                GError *err = NULL;
                gst_message_parse_warning(m, &err, NULL);
                warnings += strstr(err->message, "no more text") != NULL;
                g_error_free(err);
            }
            gst_message_unref(m);
        }
    }
    /* later finals are refused too (each final's tag, then again before its buffer),
     * and said no more */
    for (gint64 end = g_get_monotonic_time() + 60 * G_TIME_SPAN_SECOND;
         g_atomic_int_get(&r.refused) < 6 && g_get_monotonic_time() < end;)
        g_usleep(20000);
    GstMessage *m;
    while ((m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING | GST_MESSAGE_ERROR))) {
        errors += GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR;
        warnings += GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING;
        gst_message_unref(m);
    }
    fail_unless_equals_int(errors, 0);
    fail_unless_equals_int(warnings, 1);
    fail_unless(g_atomic_int_get(&r.refused) >= 6, "%d tags refused: too few finals",
                g_atomic_int_get(&r.refused));
    fail_unless_equals_int(g_atomic_int_get(&r.buffers), 0);
    gst_harness_teardown(h);
    gst_pad_unlink(tp, sink);
    gst_object_unref(tp);
    gst_object_unref(sink);
    gst_element_set_bus(e, NULL);
    gst_object_unref(bus);
    gst_object_unref(e);
    g_free(pcm);
}
GST_END_TEST

/* ------------------------------------------------------------------ latency */

typedef struct {
    guint warnings, finals, errors;
    guint64 late_commits, max_delay;
    guint observed;          /* max-observed-delay at EOS */
    guint notifies;          /* its notifications, each a larger value */
    guint last_notified;
    gboolean notify_not_growing;
    guint64 warned_delay;    /* the warning's new-observed-max-delay (ns), 0: none */
} LiveRun;

/* notify::max-observed-delay: each one says the longest delay grew. */
static void observed_notify(GObject *w, GParamSpec *pspec, gpointer user)
{
    LiveRun *out = user;
    guint v = 0;
    (void)pspec;
    g_object_get(w, "max-observed-delay", &v, NULL);
    if (out->notifies > 0 && v <= out->last_notified)
        out->notify_not_growing = TRUE;
    out->last_notified = v;
    out->notifies++;
}

/* A live source (5 s, real time) into whisper with `step` and `latency`: counts the
 * latency warnings and the finals, reads the statistics at EOS. */
static void run_live(guint step, guint latency, LiveRun *out)
{
    gchar *desc = g_strdup_printf(
        "audiotestsrc is-live=true samplesperbuffer=1600 wave=pink-noise volume=0.3 "
        "num-buffers=50 ! audio/x-raw,rate=16000,channels=1,format=F32LE ! "
        "whisperkv name=w model=%s threads=1 step=%u latency=%u ! fakesink sync=false "
        "w.text_src ! fakesink sync=false async=false", test_model, step, latency);
    GstElement *p = gst_parse_launch(desc, NULL);
    fail_unless(p != NULL);
    wh_tune(p);
    memset(out, 0, sizeof *out);
    GstBus *bus = gst_element_get_bus(p);
    GstElement *w = gst_bin_get_by_name(GST_BIN(p), "w");
    g_signal_connect(w, "notify::max-observed-delay", G_CALLBACK(observed_notify), out);
    fail_unless(gst_element_set_state(p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    for (;;) {
        GstMessage *m = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
            GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_WARNING | GST_MESSAGE_ELEMENT);
        fail_unless(m != NULL, "no EOS");
        GstMessageType type = GST_MESSAGE_TYPE(m);
        if (type == GST_MESSAGE_WARNING) {
            GError *err = NULL;
            gst_message_parse_warning(m, &err, NULL);
            if (err->domain == GST_CORE_ERROR && err->code == GST_CORE_ERROR_CLOCK &&
                strstr(err->message, "latency")) {
                out->warnings++;
                const GstStructure *d = NULL;
                gst_message_parse_warning_details(m, &d);
                fail_unless(d && gst_structure_get_uint64(d, "new-observed-max-delay",
                                                          &out->warned_delay),
                            "the latency warning has no new-observed-max-delay");
            }
            g_error_free(err);
        } else if (type == GST_MESSAGE_ELEMENT) {
            const GstStructure *s = gst_message_get_structure(m);
            gboolean final = FALSE;
            if (gst_structure_has_name(s, "whisper-segment") &&
                gst_structure_get_boolean(s, "final", &final) && final)
                out->finals++;
        } else if (type == GST_MESSAGE_ERROR) {
            out->errors++;
        }
        gst_message_unref(m);
        if (type == GST_MESSAGE_EOS || type == GST_MESSAGE_ERROR)
            break;
    }
    g_object_get(w, "late-commits", &out->late_commits, "max-commit-delay", &out->max_delay,
                 "max-observed-delay", &out->observed, NULL);
    g_print("step %u latency %u: %u finals, %u latency warnings, late-commits %" G_GUINT64_FORMAT
            ", max-commit-delay %" G_GUINT64_FORMAT " ms\n", step, latency, out->finals,
            out->warnings, out->late_commits, out->max_delay);
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(w);
    gst_object_unref(bus);
    gst_object_unref(p);
    g_free(desc);
}

/* A live run that must give final text without errors; max-observed-delay is
 * max-commit-delay, notified each time it grew (the last notification its value). */
static void run_live_finals(guint latency, LiveRun *r)
{
    run_live(500, latency, r);
    fail_unless_equals_int(r->errors, 0);
    fail_unless(r->finals > 0, "no final text to check");
    fail_unless_equals_uint64(r->observed, r->max_delay);
    fail_unless(r->notifies > 0 && !r->notify_not_growing, "%u notifications of "
                "max-observed-delay%s", r->notifies,
                r->notify_not_growing ? ", one without growth" : "");
    fail_unless_equals_int(r->last_notified, r->observed);
}

/* latency 1 ms: no run is that quick, every final is late.  One warning (a single
 * episode), every final counted, the longest delay above the promise. */
GST_START_TEST(test_late_commits_warn)
{
    LiveRun r;
    run_live_finals(1, &r);
    fail_unless_equals_int(r.warnings, 1);
    fail_unless_equals_uint64(r.late_commits, r.finals);
    fail_unless(r.max_delay > 1);
    /* the warning's delay is the first late final's, above the promise */
    fail_unless(r.warned_delay > 1 * GST_MSECOND && r.warned_delay <= r.max_delay * GST_MSECOND +
                GST_MSECOND, "new-observed-max-delay %" G_GUINT64_FORMAT " ns",
                r.warned_delay);
}
GST_END_TEST

/* A latency the element keeps easily: no warning, nothing late, the delays measured. */
GST_START_TEST(test_on_time_no_warning)
{
    LiveRun r;
    run_live_finals(60000, &r);
    fail_unless_equals_int(r.warnings, 0);
    fail_unless_equals_uint64(r.late_commits, 0);
    fail_unless(r.max_delay > 0 && r.max_delay <= 60000, "max-commit-delay %" G_GUINT64_FORMAT,
                r.max_delay);
}
GST_END_TEST

/* commit-policy (an enum, alignatt by default, as the core's) and frame-threshold (the
 * core's default) on both elements; agreement set by its nick reads back, an unknown
 * nick changes nothing. */
GST_START_TEST(test_commit_policy)
{
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    const gchar *factories[] = {"whisperkv", "whisperkvtranscriber"};
    for (guint f = 0; f < G_N_ELEMENTS(factories); f++) {
        GstElement *e = gst_element_factory_make(factories[f], NULL);
        fail_unless(e != NULL);
        GParamSpec *ps = find_pspec(e, "commit-policy");
        fail_unless(G_IS_PARAM_SPEC_ENUM(ps), "commit-policy is not an enum");
        GParamSpecEnum *pe = G_PARAM_SPEC_ENUM(ps);
        fail_unless_equals_int(pe->default_value, so.commit_policy);
        fail_unless_equals_int(so.commit_policy, WKV_COMMIT_ALIGNATT);
        fail_unless_equals_string(g_enum_get_value(pe->enum_class, WKV_COMMIT_AGREEMENT)->value_nick,
                                  "agreement");
        fail_unless_equals_string(g_enum_get_value(pe->enum_class, WKV_COMMIT_ALIGNATT)->value_nick,
                                  "alignatt");
        gint policy = -1;
        guint thr = 0;
        g_object_get(e, "commit-policy", &policy, "frame-threshold", &thr, NULL);
        fail_unless_equals_int(policy, WKV_COMMIT_ALIGNATT);
        fail_unless_equals_int(thr, so.frame_threshold_ms);
        fail_unless_equals_int(G_PARAM_SPEC_UINT(find_pspec(e, "frame-threshold"))->default_value,
                               so.frame_threshold_ms);
        gst_util_set_object_arg(G_OBJECT(e), "commit-policy", "agreement");
        g_object_set(e, "frame-threshold", 250, NULL);
        g_object_get(e, "commit-policy", &policy, "frame-threshold", &thr, NULL);
        fail_unless_equals_int(policy, WKV_COMMIT_AGREEMENT);
        fail_unless_equals_int(thr, 250);
        gst_object_unref(e);
    }
}
GST_END_TEST

/* audio-ctx reaches the core on both paths of a window: 1500 (all the micro model's
 * frames) gives the default's segments exactly; 200 encodes each window's first 4 s
 * only, so its text is another (the core's test audio_ctx checks the numbers). */
GST_START_TEST(test_audio_ctx)
{
    const gsize n = 16000 * 12;
    float *pcm = synth_audio(n, 7);
    const gint frames[3] = {0, 1500, 200};
    GPtrArray *segs[3];
    for (int i = 0; i < 3; i++) {
        WhisperHarness wh;
        wh_setup(&wh, test_model, FALSE, "audio-ctx", frames[i], "temperature-fallback", FALSE,
                 "no-speech-threshold", 1.0f, NULL);
        gint got = -2;
        g_object_get(wh.element, "audio-ctx", &got, NULL);
        fail_unless_equals_int(got, frames[i]);
        wh_push_pcm(&wh, pcm, n, 1600, 0, FALSE, FALSE);
        segs[i] = wh_finish(&wh);
        wh_teardown(&wh);
    }
    assert_same_segments(segs[1], segs[0], "audio-ctx 1500 against the default");
    gboolean same = segs[2]->len == segs[0]->len;
    for (guint i = 0; same && i < segs[0]->len; i++) {
        const TextSeg *a = g_ptr_array_index(segs[0], i), *b = g_ptr_array_index(segs[2], i);
        same = g_strcmp0(a->text, b->text) == 0;
    }
    fail_if(same, "audio-ctx 200 gave the default's text: the property does not reach the core");
    for (int i = 0; i < 3; i++)
        g_ptr_array_unref(segs[i]);
    g_free(pcm);
}
GST_END_TEST

static Suite *props_suite(void)
{
    Suite *s = suite_create("whisper-props");
    TCase *tc = tcase_create("general");
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tcase_add_test(tc, test_defaults_from_core);
    tcase_add_test(tc, test_docs_list_every_property);
    tcase_add_test(tc, test_compute_type);
    tcase_add_test(tc, test_kv_cache);
    tcase_add_test(tc, test_f32_products_said_once);
    tcase_add_test(tc, test_blurbs_match_behaviour);
    tcase_add_test(tc, test_sample_len);
    tcase_add_test(tc, test_text_unlinked_audio_flows);
    tcase_add_test(tc, test_src_unlinked_text_flows);
    tcase_add_test(tc, test_text_error_reaches_chain);
    tcase_add_test(tc, test_text_refused_tags_end_text);
    tcase_add_test(tc, test_late_commits_warn);
    tcase_add_test(tc, test_on_time_no_warning);
    tcase_add_test(tc, test_commit_policy);
    tcase_add_test(tc, test_audio_ctx);
    return s;
}

int main(int argc, char **argv)
{
    if (!wh_init(&argc, &argv))
        return 1;
    return wh_run_suite(props_suite(), "whisper-props");
}
