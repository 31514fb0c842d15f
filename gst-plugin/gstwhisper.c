/* whisperkv and whisperkvtranscriber: Whisper speech to text as GStreamer elements.
 * This file: the GObject types (an abstract base holding everything, and the two
 * element types, which differ in their pads and two property defaults), the
 * statistics (under the object lock), model load and unload, and the state changes.
 *
 * The top of the element's files: it calls the others, none calls it.  The rest, by
 * responsibility, bottom first, in gst-plugin/meson.build (docs/architecture.md draws
 * the data path).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

static gpointer gst_whisper_parent_class;
static void gst_whisper_class_init(GstWhisperClass *klass);
static void gst_whisper_init(GstWhisper *self);

/* Type names of our own ("GstWhisper" is another whisper plugin's: two types of one
 * name cannot live in one process). */
GType gst_whisper_get_type(void)
{
    static gsize type = 0;
    if (g_once_init_enter(&type)) {
        GType t = g_type_register_static_simple(GST_TYPE_ELEMENT,
            g_intern_static_string("GstWhisperKvBase"), sizeof(GstWhisperClass),
            (GClassInitFunc)(void (*)(void))gst_whisper_class_init, sizeof(GstWhisper),
            (GInstanceInitFunc)(void (*)(void))gst_whisper_init, G_TYPE_FLAG_ABSTRACT);
        g_once_init_leave(&type, t);
    }
    return (GType)type;
}

/* ------------------------------------------------------------------ model */

/* vad-model set: the shared VAD model, parameters checked.  FALSE after an error. */
static gboolean load_vad(GstWhisper *self)
{
    GST_OBJECT_LOCK(self);
    gchar *path = gst_whisper_props_snapshot_vad(self);
    GST_OBJECT_UNLOCK(self);
    if (!path)
        return TRUE;
    const char *bad = wkv_vad_params_check(&self->w.vad_params);
    if (bad) {
        GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Bad VAD settings"), ("%s", bad));
        g_free(path);
        return FALSE;
    }
    GError *gerr = NULL;
    self->w.vad = gst_whisper_vad_model_acquire(path, &gerr);
    if (!self->w.vad) {
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                          ("Could not load the VAD model '%s'", path), ("%s", gerr->message));
        g_clear_error(&gerr);
        g_free(path);
        return FALSE;
    }
    GST_INFO_OBJECT(self, "voice activity detection with %s", path);
    g_free(path);
    return TRUE;
}

/* What runs the f32 matrix products is chosen once per process (whisperkv.h), so it
 * is said once per process, not at every start: on the log, and as a WARNING message
 * only when those products run kernels older than the CPU's (a build without oneDNN
 * on a CPU that OpenBLAS does not know), which only the environment the program starts
 * with can change. */
static void say_f32_products(GstWhisper *self)
{
    static gsize said = 0;
    if (!g_once_init_enter(&said))
        return;
    GST_INFO_OBJECT(self, "f32 products on %s (%s kernels)", wkv_f32_gemm_library(),
                    wkv_f32_gemm_kernels());
    if (wkv_f32_gemm_slow())
        GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
                            ("the f32 matrix products run %s's %s kernels, older than this "
                             "CPU's", wkv_f32_gemm_library(), wkv_f32_gemm_kernels()),
                            ("f32 encoding is several times slower than it could be: use a "
                             "whisperkv built with oneDNN, or set OPENBLAS_CORETYPE (e.g. "
                             "SKYLAKEX) in the environment before the program starts"));
    g_once_init_leave(&said, 1);
}

/* The decoding context on the loaded model; NULL with a message (g_free) in *err. */
static wkv_context *open_context(GstWhisper *self, const gchar *language, gint threads,
                                 gchar **err)
{
    const wkv_model *m = gst_whisper_model_get(self->w.model);
    self->w.detect_language = wkv_model_is_multilingual(m) && !g_strcmp0(language, "auto");
    if (wkv_model_is_multilingual(m) && !self->w.detect_language &&
        wkv_lang_token(m, language) < 0) {
        *err = g_strdup_printf("unknown language code '%s'", language);
        return NULL;
    }
    /* as the CLI warns: an English-only model hears English and cannot translate */
    if (!wkv_model_is_multilingual(m) && g_strcmp0(language, "en") && g_strcmp0(language, "auto"))
        GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
            ("The model is English-only: it transcribes English, not '%s'", language),
            ("%s has no language tokens; the text is decoded as English (en)",
             gst_whisper_model_path(self->w.model)));
    if (!wkv_model_is_multilingual(m) && self->w.opts.translate)
        GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
            ("The model is English-only: it cannot translate"),
            ("%s transcribes English; translate=true is ignored",
             gst_whisper_model_path(self->w.model)));
    char *cerr = NULL;
    wkv_context *ctx = wkv_context_new(m, threads, &cerr);
    /* bf16/int8 without oneDNN (or without the CPU's instructions) fail the state change
     * with the core's message rather than quietly running f32 */
    if (ctx && (wkv_context_set_compute_type(ctx, self->w.run_compute, &cerr) != 0 ||
                wkv_context_set_cache_type(ctx, self->w.run_cache, &cerr) != 0)) {
        wkv_context_free(ctx);
        ctx = NULL;
    }
    wkv_decoder_group *group = NULL;
    if (ctx && self->w.run_share_decoder &&
        (!(group = gst_whisper_model_decoder_group(self->w.model, &cerr)) ||
         wkv_context_set_decoder_group(ctx, group, &cerr) != 0)) {
        wkv_context_free(ctx);
        ctx = NULL;
    }
    if (ctx)
        say_f32_products(self);
    if (!ctx) {
        *err = g_strdup(cerr ? cerr : "cannot create a decoding context");
        free(cerr);
    }
    return ctx;
}

/* The alignment heads the words will use, said on the log; FALSE with a message (g_free)
 * when the spec does not fit the model. */
static gboolean check_heads(GstWhisper *self, gchar **err)
{
    char *cerr = NULL;
    char *name = wkv_alignment_heads_name(gst_whisper_model_get(self->w.model),
                                          self->w.opts.alignment_heads, &cerr);
    if (!name) {
        *err = g_strdup_printf("alignment-heads '%s': %s", self->w.opts.alignment_heads,
                               cerr ? cerr : "not usable with this model");
        free(cerr);
        return FALSE;
    }
    GST_INFO_OBJECT(self, "word timestamps with alignment heads %s (alignment-heads=%s)", name,
                    self->w.opts.alignment_heads);
    free(name);
    return TRUE;
}

static void post_load_progress(GstWhisper *self, GstProgressType type, const gchar *text)
{
    gst_element_post_message(GST_ELEMENT(self),
        gst_message_new_progress(GST_OBJECT(self), type, "load-model", text));
}

/* Samples the worker may hold offline before chain waits: OFFLINE_MAX_SAMPLES, or two
 * batches of batch-size windows (one decoding, the next filling); no bound with VAD,
 * which needs the whole stretch before its first window. */
static gint64 offline_max_held(GstWhisper *self)
{
    gint batch = self->w.batch_size;
    if (self->w.vad)
        return G_MAXINT64;
    return batch > 1 ? MAX(OFFLINE_MAX_SAMPLES, 2 * (gint64)batch * WKV_N_SAMPLES)
                     : OFFLINE_MAX_SAMPLES;
}

static gboolean load_model(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    gchar *path, *language, *prompt;
    gint threads;
    guint step;
    GST_OBJECT_LOCK(self);
    gst_whisper_props_snapshot(self, &path, &language, &prompt, &threads, &step);
    GST_OBJECT_UNLOCK(self);
    g_free(w->opt_prompt);
    w->opt_prompt = prompt && *prompt ? prompt : NULL;
    if (!w->opt_prompt)
        g_free(prompt);
    w->opts.initial_prompt = w->opt_prompt; /* the long form encodes it */
    if (w->text_unit != GST_WHISPER_TEXT_UNIT_SEGMENT && !w->opts.word_timestamps) {
        /* as the CLI's exit 2: words and cues cannot be made without the words */
        GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
            ("text-unit=%s needs word-timestamps=true",
             w->text_unit == GST_WHISPER_TEXT_UNIT_WORD ? "word" : "cue"),
            ("set word-timestamps=true, or text-unit=segment"));
        g_free(path);
        g_free(language);
        return FALSE;
    }

    if (!load_vad(self)) {
        g_free(path);
        g_free(language);
        return FALSE;
    }
    if (w->batch_size > 1 && w->opt_prompt)
        GST_WARNING_OBJECT(self, "batch-size=%d decodes each chunk without previous text: "
                           "initial-prompt is not used offline", w->batch_size);
    post_load_progress(self, GST_PROGRESS_TYPE_START, path ? path : "(no model)");
    GError *gerr = NULL;
    gchar *err = NULL;
    w->model = gst_whisper_model_acquire(path, &gerr);
    if (w->model)
        w->ctx = open_context(self, language, threads, &err);
    if (w->ctx && w->opts.word_timestamps && !check_heads(self, &err)) {
        wkv_context_free(w->ctx);
        w->ctx = NULL;
    }
    if (!w->model || err) {
        post_load_progress(self, GST_PROGRESS_TYPE_ERROR, "failed");
        if (!w->model)
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                              ("Could not load the Whisper model '%s'", path ? path : ""),
                              ("%s", gerr->message));
        else
            GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
                              ("Could not use the Whisper model '%s'", path), ("%s", err));
        g_clear_error(&gerr);
        g_free(err);
        gst_whisper_model_release(w->model);
        w->model = NULL;
        g_free(path);
        g_free(language);
        return FALSE;
    }
    g_free(w->opt_language);
    w->opt_language = language;
    /* with "auto" opt_language becomes the detected code; opts keeps "auto" */
    w->opts.language = w->detect_language ? "auto" : w->opt_language;
    w->run_threads = threads;
    gst_whisper_queue_start(self, step, offline_max_held(self));
    /* the type in effect ("auto" resolved), for the application and the tests */
    const gchar *ctype = wkv_compute_type_name(wkv_context_compute_type(w->ctx));
    const gchar *kvtype = wkv_cache_type_name(wkv_context_cache_type(w->ctx));
    gchar *done = g_strdup_printf("%s, compute type %s, %s caches", path, ctype, kvtype);
    post_load_progress(self, GST_PROGRESS_TYPE_COMPLETE, done);
    g_free(done);
    GST_INFO_OBJECT(self, "model %s, %d threads, compute type %s, %s caches", path, threads,
                    ctype, kvtype);
    g_free(path);
    return TRUE;
}

static void unload_model(GstWhisper *self)
{
    GstWhisperWorker *w = &self->w;
    gst_whisper_queue_start(self, 0, 0); /* drops what is queued */
    gst_whisper_worker_forget_item(self);
    gst_whisper_cues_forget(self);
    gst_whisper_live_free(self); /* runs on the context */
    wkv_context_free(w->ctx);
    w->ctx = NULL;
    gst_whisper_model_release(w->model);
    w->model = NULL;
    gst_whisper_model_release(w->vad);
    w->vad = NULL;
    g_clear_pointer(&self->live.scratch, g_free);
    self->live.scratch_cap = 0;
}

static GstStateChangeReturn gst_whisper_change_state(GstElement *element,
                                                     GstStateChange transition)
{
    GstWhisper *self = GST_WHISPER(element);
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED && !load_model(self)) {
        /* what the load took before it failed (the VAD model when the Whisper model or
         * its context failed): else the next start acquires it again over it */
        unload_model(self);
        return GST_STATE_CHANGE_FAILURE;
    }
    GstStateChangeReturn ret =
        GST_ELEMENT_CLASS(gst_whisper_parent_class)->change_state(element, transition);
    if ((transition == GST_STATE_CHANGE_READY_TO_PAUSED && ret == GST_STATE_CHANGE_FAILURE) ||
        transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
        unload_model(self);
        gst_whisper_input_clear(self); /* the pads are inactive: the next stream sends its caps */
        gst_flow_combiner_reset(self->flows);
        gst_whisper_pads_drop_held(self);
    }
    return ret;
}



/* ------------------------------------------------------------------ object */

static void gst_whisper_finalize(GObject *object)
{
    GstWhisper *self = GST_WHISPER(object);
    unload_model(self);
    gst_whisper_props_clear(self);
    g_free(self->w.opt_heads);
    g_free(self->w.opt_language);
    g_free(self->w.opt_prompt);
    gst_whisper_live_free(self);
    gst_whisper_queue_clear(self);
    gst_whisper_input_clear(self);
    if (self->flows)
        gst_flow_combiner_free(self->flows);
    gst_whisper_pads_drop_held(self);
    G_OBJECT_CLASS(gst_whisper_parent_class)->finalize(object);
}

static void gst_whisper_init(GstWhisper *self)
{
    gst_whisper_queue_init(self);
    gst_whisper_text_reset(self);
    gst_whisper_live_init(self);
    g_queue_init(&self->held);
}

void gst_whisper_register_tags(void)
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        gst_tag_register(GST_WHISPER_TAG_TRANSCRIPT, GST_TAG_FLAG_META, G_TYPE_STRING,
                         "transcript", "text transcribed from the audio (one segment)",
                         gst_tag_merge_strings_with_comma);
        g_once_init_leave(&once, 1);
    }
}

static void gst_whisper_class_init(GstWhisperClass *klass)
{
    GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);

    gst_whisper_parent_class = g_type_class_peek_parent(klass);
    GST_DEBUG_CATEGORY_INIT(gst_whisper_debug, "whisperkv", 0, "Whisper speech to text");
    gst_whisper_register_tags();
    gobject_class->finalize = gst_whisper_finalize;
    element_class->change_state = GST_DEBUG_FUNCPTR(gst_whisper_change_state);
}

/* ------------------------------------------------------------------ the two elements */

/* class_data: GINT_TO_POINTER(transcriber) */
static void element_class_init(gpointer g_class, gpointer class_data)
{
    GstWhisperClass *klass = g_class;
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
    klass->transcriber = GPOINTER_TO_INT(class_data);
    gst_whisper_props_class_init(G_OBJECT_CLASS(klass), klass->transcriber);
    gst_whisper_pads_class_init(element_class, klass->transcriber);
    if (klass->transcriber)
        gst_element_class_set_static_metadata(element_class, "Whisper transcriber",
            "Audio/Text/Filter",
            "Transcribes speech (any raw audio) with an OpenAI Whisper model into timed text "
            "on src (a word a buffer by default), as GStreamer's other transcribers do: "
            "transcriberbin's transcriber",
            "whisperkv developers");
    else
        gst_element_class_set_static_metadata(element_class, "Whisper speech to text",
            "Filter/Audio/Text",
            "Transcribes speech with an OpenAI Whisper model: the audio (any raw audio) "
            "passes through on src untouched, timed text comes out on text_src",
            "whisperkv developers");
}

/* g_class: the instance's own class, so the pads and defaults are its type's */
static void element_init(GTypeInstance *instance, gpointer g_class)
{
    GstWhisper *self = (GstWhisper *)instance;
    self->transcriber = ((GstWhisperClass *)g_class)->transcriber;
    gst_whisper_pads_init(self);
    gst_whisper_props_init(self);
}

static GType register_element_type(const gchar *name, gboolean transcriber)
{
    const GTypeInfo info = {
        .class_size = sizeof(GstWhisperClass),
        .class_init = element_class_init,
        .class_data = GINT_TO_POINTER(transcriber),
        .instance_size = sizeof(GstWhisper),
        .instance_init = element_init,
    };
    return g_type_register_static(GST_TYPE_WHISPER, g_intern_static_string(name), &info, 0);
}

GType gst_whisper_filter_get_type(void)
{
    static gsize type = 0;
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, register_element_type("GstWhisperKv", FALSE));
    return (GType)type;
}

GType gst_whisper_transcriber_get_type(void)
{
    static gsize type = 0;
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, register_element_type("GstWhisperKvTranscriber", TRUE));
    return (GType)type;
}

gboolean gst_whisper_register(GstPlugin *plugin)
{
    gst_whisper_register_tags();
    return gst_element_register(plugin, "whisperkv", GST_RANK_NONE, GST_TYPE_WHISPER_FILTER) &&
           gst_element_register(plugin, "whisperkvtranscriber", GST_RANK_NONE,
                                GST_TYPE_WHISPER_TRANSCRIBER);
}
