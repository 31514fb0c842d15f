/* The whisper element's properties: the table of where each lives in
 * GstWhisperProps, their param specs (decoding defaults from the core's
 * wkv_options_default(), VAD defaults from wkv_vad_params_default()), get/set under
 * the object lock, and the snapshot of them the element runs with from READY to
 * PAUSED on. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

enum {
    PROP_0,
    PROP_MODEL,
    PROP_LANGUAGE,
    PROP_LANGUAGE_CODE,
    PROP_TRANSLATE,
    PROP_THREADS,
    PROP_COMPUTE_TYPE,
    PROP_KV_CACHE,
    PROP_SHARE_DECODER,
    PROP_STEP,
    PROP_LATENCY,
    PROP_LATENESS,
    PROP_PARTIAL_RESULTS,
    PROP_INITIAL_PROMPT,
    PROP_CONDITION,
    PROP_NO_SPEECH_THRESHOLD,
    PROP_BEAM_SIZE,
    PROP_BEST_OF,
    PROP_SAMPLE_LEN,
    PROP_TEMPERATURE_FALLBACK,
    PROP_COMPRESSION_RATIO_THRESHOLD,
    PROP_LOGPROB_THRESHOLD,
    PROP_SEED,
    PROP_WORD_TIMESTAMPS,
    PROP_ALIGNMENT_HEADS,
    PROP_TEXT_UNIT,
    PROP_MAX_LINE_WIDTH,
    PROP_MAX_LINE_COUNT,
    PROP_MAX_WORDS_PER_LINE,
    PROP_HIGHLIGHT_WORDS,
    PROP_VAD_MODEL,
    PROP_VAD_THRESHOLD,
    PROP_VAD_MIN_SPEECH,
    PROP_VAD_MIN_SILENCE,
    PROP_VAD_SPEECH_PAD,
    PROP_VAD_MAX_SPEECH,
    PROP_VAD_SAMPLES_OVERLAP,
    PROP_POST_VAD_MESSAGES,
    PROP_BATCH_SIZE,
    PROP_WINDOWS,
    PROP_TOKENS,
    PROP_ENCODER_MS,
    PROP_RTF,
    PROP_LATE_COMMITS,
    PROP_MAX_COMMIT_DELAY,
    PROP_MEDIAN_COMMIT_DELAY,
    PROP_MAX_OBSERVED_DELAY,
    PROP_COMMIT_POLICY,
    PROP_FRAME_THRESHOLD,
    PROP_AUDIO_CTX,
    PROP_MAX_HELD,
    N_PROPS
};

/* Where each plain read-write property lives in GstWhisperProps (0: handled apart). */
#define FIELD(f) (G_STRUCT_OFFSET(GstWhisperProps, f) + 1)
static const gsize prop_field[N_PROPS] = {
    [PROP_MODEL] = FIELD(model_path),
    [PROP_TRANSLATE] = FIELD(translate),
    [PROP_THREADS] = FIELD(threads),
    [PROP_COMPUTE_TYPE] = FIELD(compute_type),
    [PROP_KV_CACHE] = FIELD(cache_type),
    [PROP_SHARE_DECODER] = FIELD(share_decoder),
    [PROP_STEP] = FIELD(step_ms),
    [PROP_LATENCY] = FIELD(latency_ms),
    [PROP_LATENESS] = FIELD(lateness_ms),
    [PROP_PARTIAL_RESULTS] = FIELD(partial_results),
    [PROP_INITIAL_PROMPT] = FIELD(initial_prompt),
    [PROP_CONDITION] = FIELD(condition),
    [PROP_NO_SPEECH_THRESHOLD] = FIELD(no_speech_threshold),
    [PROP_BEAM_SIZE] = FIELD(beam_size),
    [PROP_BEST_OF] = FIELD(best_of),
    [PROP_SAMPLE_LEN] = FIELD(sample_len),
    [PROP_TEMPERATURE_FALLBACK] = FIELD(temperature_fallback),
    [PROP_COMPRESSION_RATIO_THRESHOLD] = FIELD(compression_ratio_threshold),
    [PROP_LOGPROB_THRESHOLD] = FIELD(logprob_threshold),
    [PROP_SEED] = FIELD(seed),
    [PROP_WORD_TIMESTAMPS] = FIELD(word_timestamps),
    [PROP_ALIGNMENT_HEADS] = FIELD(alignment_heads),
    [PROP_TEXT_UNIT] = FIELD(text_unit),
    [PROP_MAX_LINE_WIDTH] = FIELD(cue.max_line_width),
    [PROP_MAX_LINE_COUNT] = FIELD(cue.max_line_count),
    [PROP_MAX_WORDS_PER_LINE] = FIELD(cue.max_words_per_line),
    [PROP_HIGHLIGHT_WORDS] = FIELD(highlight_words),
    [PROP_VAD_MODEL] = FIELD(vad_model_path),
    [PROP_VAD_THRESHOLD] = FIELD(vad_threshold),
    [PROP_VAD_MIN_SPEECH] = FIELD(vad_min_speech_ms),
    [PROP_VAD_MIN_SILENCE] = FIELD(vad_min_silence_ms),
    [PROP_VAD_SPEECH_PAD] = FIELD(vad_speech_pad_ms),
    [PROP_VAD_MAX_SPEECH] = FIELD(vad_max_speech_s),
    [PROP_VAD_SAMPLES_OVERLAP] = FIELD(vad_samples_overlap),
    [PROP_POST_VAD_MESSAGES] = FIELD(post_vad_messages),
    [PROP_BATCH_SIZE] = FIELD(batch_size),
    [PROP_COMMIT_POLICY] = FIELD(commit_policy),
    [PROP_FRAME_THRESHOLD] = FIELD(frame_threshold_ms),
    [PROP_AUDIO_CTX] = FIELD(audio_ctx),
    [PROP_MAX_HELD] = FIELD(max_held_ms),
};

/* One set per element type: [0] the filter's, [1] the transcriber's (a param spec
 * belongs to one class, and their defaults differ: text-unit, word-timestamps). */
static GParamSpec *pspecs[2][N_PROPS];

GType gst_whisper_text_unit_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GST_WHISPER_TEXT_UNIT_SEGMENT, "One buffer per segment", "segment"},
        {GST_WHISPER_TEXT_UNIT_WORD, "One buffer per word (needs word-timestamps)", "word"},
        {GST_WHISPER_TEXT_UNIT_CUE, "One buffer per subtitle cue (needs word-timestamps)",
         "cue"},
        {0, NULL, NULL},
    };
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, g_enum_register_static("GstWhisperKvTextUnit", values));
    return (GType)type;
}

GType gst_whisper_compute_type_get_type(void)
{
    static gsize type = 0;
    /* one value a line of the core's list of types (whisperkv.h) */
#define GST_TYPE_VALUE(suffix, name, description) {WKV_COMPUTE_##suffix, description, name},
    static const GEnumValue values[] = {WKV_COMPUTE_TYPES(GST_TYPE_VALUE) {0, NULL, NULL}};
#undef GST_TYPE_VALUE
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, g_enum_register_static("GstWhisperKvComputeType", values));
    return (GType)type;
}

GType gst_whisper_cache_type_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {WKV_CACHE_AUTO, "half for quantized files and bf16/int8, f32 for f32/f16 files on f32",
         "auto"},
        {WKV_CACHE_F32, "float32: the reference-exact path", "f32"},
        {WKV_CACHE_F16, "IEEE half: faster decoder steps, a smaller context", "f16"},
        {0, NULL, NULL},
    };
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, g_enum_register_static("GstWhisperKvCacheType", values));
    return (GType)type;
}

GType gst_whisper_commit_policy_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {WKV_COMMIT_AGREEMENT, "Final when two consecutive runs agree (LocalAgreement-2)",
         "agreement"},
        {WKV_COMMIT_ALIGNATT, "Final when one run's attention has not reached the last "
         "frame-threshold ms of the audio (AlignAtt)", "alignatt"},
        {0, NULL, NULL},
    };
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, g_enum_register_static("GstWhisperKvCommitPolicy", values));
    return (GType)type;
}

/* ------------------------------------------------------------------ accessors */

void gst_whisper_props_commit(GstWhisper *self, int *policy, int *threshold_ms,
                              int *max_held_ms)
{
    GST_OBJECT_LOCK(self);
    *policy = self->props.commit_policy;
    *threshold_ms = (int)MIN(self->props.frame_threshold_ms, (guint)G_MAXINT);
    /* 1 .. 999 count as 1000, the core's least (the param spec has one range) */
    guint held = self->props.max_held_ms;
    *max_held_ms = held == 0 ? 0 : (int)MAX(held, 1000u);
    GST_OBJECT_UNLOCK(self);
}

guint gst_whisper_props_lateness(GstWhisper *self)
{
    GST_OBJECT_LOCK(self);
    guint v = self->props.lateness_ms;
    GST_OBJECT_UNLOCK(self);
    return v;
}

guint gst_whisper_props_latency(GstWhisper *self)
{
    GST_OBJECT_LOCK(self);
    guint v = self->props.latency_ms;
    GST_OBJECT_UNLOCK(self);
    return v;
}

guint gst_whisper_props_step(GstWhisper *self)
{
    GST_OBJECT_LOCK(self);
    guint v = self->props.step_ms;
    GST_OBJECT_UNLOCK(self);
    return v;
}

gboolean gst_whisper_props_partial_results(GstWhisper *self)
{
    GST_OBJECT_LOCK(self);
    gboolean v = self->props.partial_results;
    GST_OBJECT_UNLOCK(self);
    return v;
}

/* ------------------------------------------------------------------ snapshot */

/* Snapshot of the decoding properties into w.opts; returns the model path, language
 * and prompt (g_free) and the threads and step.  Object lock held. */
void gst_whisper_props_snapshot(GstWhisper *self, gchar **path, gchar **language,
                                gchar **prompt, gint *threads, guint *step)
{
    const GstWhisperProps *p = &self->props;
    wkv_options *o = &self->w.opts;
    *path = g_strdup(p->model_path);
    if (!*path || !**path) {
        g_free(*path);
        *path = g_strdup(g_getenv("WHISPERKV_MODEL"));
    }
    *language = g_strdup(p->language);
    *prompt = g_strdup(p->initial_prompt);
    *threads = p->threads > 0 ? p->threads : (gint)g_get_num_processors();
    *step = p->step_ms;
    self->w.run_compute = (wkv_compute_type)p->compute_type;
    self->w.run_cache = (wkv_cache_type)p->cache_type;
    self->w.run_share_decoder = p->share_decoder;
    wkv_options_default(o);
    o->translate = p->translate;
    o->condition_on_previous_text = p->condition;
    o->no_speech_threshold = p->no_speech_threshold;
    o->mel_norm = WKV_MEL_WINDOW;
    o->beam_size = p->beam_size;
    o->best_of = p->best_of;
    o->sample_len = p->sample_len;
    o->audio_ctx = p->audio_ctx;
    if (!p->temperature_fallback)
        o->temperature_increment = 0.0f;
    o->compression_ratio_threshold = p->compression_ratio_threshold;
    o->logprob_threshold = p->logprob_threshold;
    o->seed = p->seed;
    o->word_timestamps = p->word_timestamps;
    g_free(self->w.opt_heads);
    self->w.opt_heads = g_strdup(p->alignment_heads && *p->alignment_heads ? p->alignment_heads
                                                                           : "auto");
    o->alignment_heads = self->w.opt_heads;
    self->w.batch_size = p->batch_size;
    self->w.batch_live_warned = FALSE;
    self->w.text_unit = p->text_unit;
    self->w.cue_opts = p->cue;
    self->w.highlight = p->highlight_words;
    memset(&self->stats, 0, sizeof self->stats);
}

/* The VAD settings into w.vad_params; returns the model path (g_free; NULL: VAD off).
 * Object lock held. */
gchar *gst_whisper_props_snapshot_vad(GstWhisper *self)
{
    const GstWhisperProps *p = &self->props;
    wkv_vad_params *v = &self->w.vad_params;
    wkv_vad_params_default(v);
    v->threshold = p->vad_threshold;
    v->min_speech_duration_ms = p->vad_min_speech_ms;
    v->min_silence_duration_ms = p->vad_min_silence_ms;
    v->speech_pad_ms = p->vad_speech_pad_ms;
    v->max_speech_duration_s = p->vad_max_speech_s;
    v->samples_overlap = p->vad_samples_overlap;
    self->w.post_vad = p->post_vad_messages;
    return p->vad_model_path && *p->vad_model_path ? g_strdup(p->vad_model_path) : NULL;
}

/* The median of the finals' commit delays: the middle of the bin holding it. */
static guint64 median_delay(const GstWhisperStats *st)
{
    guint64 n = 0, seen = 0;
    for (guint b = 0; b < GST_WHISPER_DELAY_BINS; b++)
        n += st->delay_bins[b];
    for (guint b = 0; b < GST_WHISPER_DELAY_BINS && n > 0; b++) {
        seen += st->delay_bins[b];
        if (2 * seen >= n)
            return (guint64)b * GST_WHISPER_DELAY_BIN_MS + GST_WHISPER_DELAY_BIN_MS / 2;
    }
    return 0;
}

/* ------------------------------------------------------------------ properties */

/* A setting that is read at READY->PAUSED, changed later: the running stream keeps
 * the old value (the worker's model and context are never swapped under it) and the
 * element says so on the bus. */
static void warn_deferred(GstWhisper *self, GParamSpec *pspec)
{
    GST_OBJECT_LOCK(self);
    GstState state = GST_STATE(self);
    GST_OBJECT_UNLOCK(self);
    if (state < GST_STATE_PAUSED)
        return;
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
        ("The '%s' property was changed in the %s state: it takes effect at the next "
         "READY to PAUSED transition", pspec->name, gst_element_state_get_name(state)),
        ("the running stream keeps the value it started with"));
}

/* "en-US" -> "en"; empty -> the default. */
static gchar *language_code(const gchar *v)
{
    wkv_options d;
    wkv_options_default(&d);
    gchar *code = g_strdup(v && *v ? v : d.language);
    gchar *dash = strpbrk(code, "-_");
    if (dash)
        *dash = 0;
    gchar *lower = g_ascii_strdown(code, -1);
    g_free(code);
    return lower;
}

/* Stores `value` in the props field at `field`, by the property's type.  Object lock
 * held. */
static void set_field(GstWhisper *self, gsize field, const GValue *value)
{
    gpointer p = (guint8 *)&self->props + field - 1;
    switch (G_VALUE_TYPE(value)) {
    case G_TYPE_BOOLEAN: *(gboolean *)p = g_value_get_boolean(value); break;
    case G_TYPE_INT: *(gint *)p = g_value_get_int(value); break;
    case G_TYPE_UINT: *(guint *)p = g_value_get_uint(value); break;
    case G_TYPE_UINT64: *(guint64 *)p = g_value_get_uint64(value); break;
    case G_TYPE_FLOAT: *(gfloat *)p = g_value_get_float(value); break;
    case G_TYPE_STRING:
        g_free(*(gchar **)p);
        *(gchar **)p = g_value_dup_string(value);
        break;
    default:
        g_assert(G_VALUE_HOLDS_ENUM(value));
        *(gint *)p = g_value_get_enum(value);
        break;
    }
}

static void get_field(GstWhisper *self, gsize field, GValue *value)
{
    gconstpointer p = (const guint8 *)&self->props + field - 1;
    switch (G_VALUE_TYPE(value)) {
    case G_TYPE_BOOLEAN: g_value_set_boolean(value, *(const gboolean *)p); break;
    case G_TYPE_INT: g_value_set_int(value, *(const gint *)p); break;
    case G_TYPE_UINT: g_value_set_uint(value, *(const guint *)p); break;
    case G_TYPE_UINT64: g_value_set_uint64(value, *(const guint64 *)p); break;
    case G_TYPE_FLOAT: g_value_set_float(value, *(const gfloat *)p); break;
    case G_TYPE_STRING: g_value_set_string(value, *(gchar *const *)p); break;
    default:
        g_assert(G_VALUE_HOLDS_ENUM(value));
        g_value_set_enum(value, *(const gint *)p);
        break;
    }
}

static void gst_whisper_set_property(GObject *object, guint id, const GValue *value,
                                     GParamSpec *pspec)
{
    GstWhisper *self = GST_WHISPER_CAST(object);
    if (pspec->flags & GST_PARAM_MUTABLE_READY)
        warn_deferred(self, pspec);
    if (id == PROP_LANGUAGE || id == PROP_LANGUAGE_CODE) {
        /* the model gets the language ("en"); language-code reads back as it was set
         * ("en-US"), as the gst-plugins-rs transcribers keep it */
        const gchar *v = g_value_get_string(value);
        gchar *code = language_code(v);
        gchar *as_set = v && *v ? g_strdup(v) : g_strdup(code);
        GST_OBJECT_LOCK(self);
        g_free(self->props.language);
        self->props.language = code;
        g_free(self->props.language_code);
        self->props.language_code = as_set;
        GST_OBJECT_UNLOCK(self);
        return;
    }
    if (id >= N_PROPS || !prop_field[id]) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    GST_OBJECT_LOCK(self);
    set_field(self, prop_field[id], value);
    GST_OBJECT_UNLOCK(self);
    if (id == PROP_LATENCY) /* the pipeline asks again */
        gst_element_post_message(GST_ELEMENT(self), gst_message_new_latency(GST_OBJECT(self)));
}

static void gst_whisper_get_property(GObject *object, guint id, GValue *value,
                                     GParamSpec *pspec)
{
    GstWhisper *self = GST_WHISPER_CAST(object);
    const GstWhisperStats *st = &self->stats;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_LANGUAGE:
        g_value_set_string(value, self->props.language);
        break;
    case PROP_LANGUAGE_CODE:
        g_value_set_string(value, self->props.language_code);
        break;
    case PROP_WINDOWS:
        g_value_set_uint64(value, st->windows);
        break;
    case PROP_TOKENS:
        g_value_set_uint64(value, st->tokens);
        break;
    case PROP_ENCODER_MS:
        g_value_set_double(value, st->encoder_runs > 0 ? st->encode_ms / st->encoder_runs : 0.0);
        break;
    case PROP_RTF:
        g_value_set_double(value, st->audio_s > 0 ? st->busy_ms / 1000.0 / st->audio_s : 0.0);
        break;
    case PROP_LATE_COMMITS:
        g_value_set_uint64(value, st->late_commits);
        break;
    case PROP_MAX_COMMIT_DELAY:
        g_value_set_uint64(value, st->max_commit_delay_ms);
        break;
    case PROP_MEDIAN_COMMIT_DELAY:
        g_value_set_uint64(value, median_delay(st));
        break;
    case PROP_MAX_OBSERVED_DELAY:
        g_value_set_uint(value, (guint)MIN(st->max_commit_delay_ms, G_MAXUINT));
        break;
    default:
        if (id < N_PROPS && prop_field[id])
            get_field(self, prop_field[id], value);
        else
            G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

/* The element's own settings. */
static void make_stream_props(GParamSpec **properties)
{
    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    const GParamFlags rw_ready = rw | GST_PARAM_MUTABLE_READY;
    const GParamFlags rw_playing = rw | GST_PARAM_MUTABLE_PLAYING;
    properties[PROP_MODEL] = g_param_spec_string("model", "Model",
        "Path of a whisper.cpp ggml model file (f32, f16, or quantized q4_0, q4_1, q5_0, "
        "q5_1, q8_0); default: $WHISPERKV_MODEL. Elements naming the same file share one "
        "loaded copy", NULL, rw_ready);
    properties[PROP_THREADS] = g_param_spec_int("threads", "Threads",
        "Threads of this element's decoding context (log-mel, encoder, decoder); 0: the "
        "number of cores. The core keeps OpenBLAS single-threaded, so each element uses "
        "only its own threads", 0, 1024, DEFAULT_THREADS, rw_ready);
    properties[PROP_COMPUTE_TYPE] = g_param_spec_enum("compute-type", "Compute type",
#define GST_TYPE_BLURB(suffix, name, description) name " (" description "); "
        "How the encoder's matrix products run: " WKV_COMPUTE_TYPES(GST_TYPE_BLURB)
        "a type this build or CPU cannot run fails READY to PAUSED saying so",
#undef GST_TYPE_BLURB
        GST_TYPE_WHISPER_COMPUTE_TYPE, WKV_COMPUTE_AUTO, rw_ready);
    properties[PROP_KV_CACHE] = g_param_spec_enum("kv-cache", "KV cache type",
        "The decoder's attention caches (cross-attention K/V of each window, self-attention "
        "K/V of the tokens): auto (half for quantized files and on bf16/int8, f32 for "
        "f32/f16 files on f32), f32 (reference-exact) or f16 (half the bytes each decoder "
        "step reads: faster steps, above all with batch-size, and a smaller context; logits "
        "within half's rounding)",
        GST_TYPE_WHISPER_CACHE_TYPE, WKV_CACHE_AUTO, rw_ready);
    properties[PROP_SHARE_DECODER] = g_param_spec_boolean("share-decoder", "Share decoder",
        "Elements naming the same model file (and not the same element's other runs) put "
        "their greedy decoder steps through one shared decoder: steps that meet run as "
        "one pass that reads the weights once for all of them. Each element's text is "
        "what it gives alone. Off by default: on 2-core machines it did not pay "
        "(docs/performance.md, \"Live streams sharing a decoder\")", FALSE, rw_ready);
    properties[PROP_STEP] = g_param_spec_uint("step", "Step",
        "Live re-run interval in ms: every step ms the buffered audio is transcribed "
        "again (0: offline 30-s windows, or 2000 when upstream is live)",
        0, 30000, DEFAULT_STEP, rw_ready);
    properties[PROP_LATENCY] = g_param_spec_uint("latency", "Latency",
        "Live: text for a stretch of audio is final at most this many ms after the audio "
        "arrived; reported in the LATENCY query. A final later than that is counted in "
        "late-commits and posts a CORE/CLOCK warning", 0, G_MAXUINT, DEFAULT_LATENCY,
        rw_playing);
    properties[PROP_LATENESS] = g_param_spec_uint("lateness", "Lateness",
        "Amount of ms to add to the text buffers' timestamps",
        0, G_MAXUINT, DEFAULT_LATENESS, rw_playing);
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    properties[PROP_COMMIT_POLICY] = g_param_spec_enum("commit-policy", "Commit policy",
        "Live: when text becomes final: alignatt (one run decides: the words before the "
        "first token whose attention reaches the last frame-threshold ms of the audio; "
        "the committed words' audio stays as the next runs' forced prefix) or agreement "
        "(two consecutive runs agree on it; text final about two steps after it is "
        "spoken)", GST_TYPE_WHISPER_COMMIT_POLICY, so.commit_policy, rw_ready);
    properties[PROP_FRAME_THRESHOLD] = g_param_spec_uint("frame-threshold", "Frame threshold",
        "Live, commit-policy=alignatt: a run stops at the first token whose most attended "
        "audio is within this many ms of the end of the audio received",
        0, 30000, (guint)so.frame_threshold_ms, rw_ready);
    properties[PROP_AUDIO_CTX] = g_param_spec_int("audio-ctx", "Audio context",
        "Encoder frames (20 ms each) a window is encoded on, as the CLI's --audio-ctx and "
        "whisper.cpp's audio_ctx: 0 all the model's (1500: 30 s), N the window's first N, "
        "-1 (auto) each window's encoder sized to the audio it holds (its frames + 32, "
        "up to a multiple of 64, at least 256; the decoder still attends over a whole "
        "window, the frames past them the padding's, computed once): every live run, and "
        "offline windows under 30 s. Live with max-held=6000, auto needed 8x less encoder "
        "time per second of audio on the trained model (docs/trained-model.md)",
        WKV_AUDIO_CTX_AUTO, 1500, 0, rw_ready);
    properties[PROP_MAX_HELD] = g_param_spec_uint("max-held", "Most audio held",
        "Live, commit-policy=alignatt: the most audio (ms) a run holds, the committed "
        "words' included (they stay as the next runs' forced prefix until then); 0: 4/5 "
        "of the model's window (24 s); 1 - 999 count as 1000. With audio-ctx=-1 it bounds "
        "the encoder's work a run (6000: 256 - 384 frames of 1500)",
        0, 30000, 0, rw_ready);
    properties[PROP_PARTIAL_RESULTS] = g_param_spec_boolean("partial-results",
        "Partial results", "Live: post each run's partial hypothesis as a whisper-segment "
        "message with final=false (a later partial or the final replaces it). Partials "
        "never go out as buffers: the text pad carries final text only, so subtitle "
        "encoders and muxers write no cue that another replaces", DEFAULT_PARTIAL_RESULTS,
        rw_playing);
}

/* The decoding options: defaults from the core's wkv_options_default(). */
static void make_decoding_props(GParamSpec **properties, const wkv_options *d)
{
    const GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                 GST_PARAM_MUTABLE_READY;
    properties[PROP_LANGUAGE] = g_param_spec_string("language", "Language",
        "Spoken language code such as en or de, or auto to detect it (English-only models "
        "always use en)", d->language, rw_ready);
    properties[PROP_LANGUAGE_CODE] = g_param_spec_string("language-code", "Language code",
        "The language as the gst-plugins-rs transcribers name it: reads back as set "
        "(en-US), the model gets its language (en); the same setting as 'language'",
        d->language, rw_ready);
    properties[PROP_TRANSLATE] = g_param_spec_boolean("translate", "Translate",
        "Translate the speech into English (multilingual models)", d->translate != 0,
        rw_ready);
    properties[PROP_INITIAL_PROMPT] = g_param_spec_string("initial-prompt", "Initial prompt",
        "Text given to the decoder as previous text before the first window (offline and "
        "live)", d->initial_prompt, rw_ready);
    properties[PROP_CONDITION] = g_param_spec_boolean("condition-on-previous-text",
        "Condition on previous text", "Give the text decoded so far as the prompt of the "
        "next window (live: of the next run; off, initial-prompt stays the prompt of every "
        "run)", d->condition_on_previous_text != 0, rw_ready);
    properties[PROP_NO_SPEECH_THRESHOLD] = g_param_spec_float("no-speech-threshold",
        "No-speech threshold", "Skip a window as silence above this no-speech probability "
        "(when the text is also unlikely); 1 never skips", 0.0f, 1.0f,
        d->no_speech_threshold, rw_ready);
    properties[PROP_BEAM_SIZE] = g_param_spec_int("beam-size", "Beam size",
        "Beam search with this many beams at temperature 0; 0 decodes greedily (the "
        "reference's command line uses 5)", 0, 32, d->beam_size, rw_ready);
    properties[PROP_BEST_OF] = g_param_spec_int("best-of", "Best of",
        "Candidates sampled at each fallback temperature above 0", 1, 32, d->best_of,
        rw_ready);
    properties[PROP_SAMPLE_LEN] = g_param_spec_int("sample-len", "Sample length",
        "Tokens decoded per window at most (the reference's sample_len); 0: half the "
        "model's text context (224); a run that runs away into a repetition loop stops "
        "here", 0, 448, d->sample_len, rw_ready);
    properties[PROP_TEMPERATURE_FALLBACK] = g_param_spec_boolean("temperature-fallback",
        "Temperature fallback", "Decode a window again at temperatures 0.2, 0.4, ... 1.0 "
        "when its text is too repetitive or improbable (the reference's behaviour); costs "
        "time on 2 cores", d->temperature_increment > 0, rw_ready);
    properties[PROP_COMPRESSION_RATIO_THRESHOLD] = g_param_spec_float(
        "compression-ratio-threshold", "Compression ratio threshold",
        "Fall back when the text's gzip compression ratio exceeds this; 0 never",
        0.0f, G_MAXFLOAT, d->compression_ratio_threshold, rw_ready);
    properties[PROP_LOGPROB_THRESHOLD] = g_param_spec_float("logprob-threshold",
        "Log-probability threshold", "Fall back when the average token log-probability is "
        "below this; with no-speech-threshold also the silence test",
        -G_MAXFLOAT, 0.0f, d->logprob_threshold, rw_ready);
    properties[PROP_SEED] = g_param_spec_uint64("seed", "Seed",
        "Seed of the sampling at temperatures above 0: the same seed gives the same text",
        0, G_MAXUINT64, d->seed, rw_ready);
    properties[PROP_BATCH_SIZE] = g_param_spec_int("batch-size", "Batch size",
        "Offline batching, as the CLI's --batch-size and faster-whisper's batched "
        "pipeline: each stretch is cut into chunks of up to 30 s (plain 30-s ones, or with "
        "vad-model its speech merged up to 30 s), each decoded without the previous text, "
        "this many side by side in one decoder pass per token; the text of every "
        "batch-size x 30 s goes out once that audio is in (with vad-model, once the "
        "stretch ended). condition-on-previous-text and initial-prompt do not apply; "
        "beam search decodes the chunks one by one. 0 or 1: the sequential long form; "
        "live stretches ignore it", 0, MAX_BATCH_SIZE, 0, rw_ready);
}

/* Words and cues: defaults from the core's (word_timestamps, alignment_heads) and the
 * CLI's (the cue options: 0, none). */
static void make_word_props(GParamSpec **properties, const wkv_options *d,
                            gboolean transcriber)
{
    const GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                 GST_PARAM_MUTABLE_READY;
    properties[PROP_WORD_TIMESTAMPS] = g_param_spec_boolean("word-timestamps",
        "Word timestamps", "Offline: time every word as the reference does (alignment "
        "heads' cross-attention, DTW); whisper-segment messages then carry a 'words' list, "
        "and text-unit can be word or cue. Live: the stream commits word by word "
        "(LocalAgreement-2 over words). Default: off on whisperkv, on on "
        "whisperkvtranscriber", transcriber || d->word_timestamps != 0, rw_ready);
    properties[PROP_ALIGNMENT_HEADS] = g_param_spec_string("alignment-heads",
        "Alignment heads", "Heads whose cross-attention times the words: auto (the "
        "checkpoint's table when the model matches one, else default), default (every head "
        "of the last half of the decoder layers), a checkpoint name (tiny.en ... "
        "large-v3-turbo) or L.H,L.H,...", d->alignment_heads ? d->alignment_heads : "auto",
        rw_ready);
    properties[PROP_TEXT_UNIT] = g_param_spec_enum("text-unit", "Text unit",
        "What one text buffer holds: a segment, a word (its own PTS and duration, as the "
        "gst-plugins-rs transcribers), or a subtitle cue cut by max-line-width, "
        "max-line-count and max-words-per-line ('\\n' between lines). word and cue need "
        "word-timestamps (else the element fails to start). Live: word pushes each "
        "committed word, segment the committed stretches of words, cue the committed "
        "words cut into cues (each once the next word opens another). Default: segment on "
        "whisperkv, word on whisperkvtranscriber (roll-up captions take words)",
        GST_TYPE_WHISPER_TEXT_UNIT,
        transcriber ? GST_WHISPER_TEXT_UNIT_WORD : GST_WHISPER_TEXT_UNIT_SEGMENT, rw_ready);
    properties[PROP_MAX_LINE_WIDTH] = g_param_spec_int("max-line-width", "Maximum line width",
        "text-unit=cue: characters per line before a line break (0: none; as the "
        "reference's max_line_width)", 0, 100000, 0, rw_ready);
    properties[PROP_MAX_LINE_COUNT] = g_param_spec_int("max-line-count", "Maximum line count",
        "text-unit=cue: lines per cue (0: none; with max-line-width, as the reference's "
        "max_line_count)", 0, 100000, 0, rw_ready);
    properties[PROP_MAX_WORDS_PER_LINE] = g_param_spec_int("max-words-per-line",
        "Maximum words per line", "text-unit=cue: words per line (0: none; as the "
        "reference's max_words_per_line)", 0, 100000, 0, rw_ready);
    properties[PROP_HIGHLIGHT_WORDS] = g_param_spec_boolean("highlight-words",
        "Highlight words", "text-unit=cue: each cue as the reference's highlight_words "
        "writes it, one buffer per word with that word in <u></u> over the word's time, "
        "and the plain cue over the gaps between words; the text caps are then "
        "format=pango-markup, the text escaped", FALSE, rw_ready);
}

/* Voice activity: defaults from the core's wkv_vad_params_default (whisper.cpp's). */
static void make_vad_props(GParamSpec **properties)
{
    const GParamFlags rw_ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                 GST_PARAM_MUTABLE_READY;
    wkv_vad_params d;
    wkv_vad_params_default(&d);
    properties[PROP_VAD_MODEL] = g_param_spec_string("vad-model", "VAD model",
        "Voice activity detection with this Silero VAD model (whisper.cpp's "
        "ggml-silero-v6.2.0.bin): only speech is transcribed, silence goes out as GAP "
        "events. Elements naming the same file share one loaded copy; NULL: off",
        NULL, rw_ready);
    properties[PROP_VAD_THRESHOLD] = g_param_spec_float("vad-threshold", "VAD threshold",
        "VAD: speech probability threshold", 0.0f, 1.0f, d.threshold, rw_ready);
    properties[PROP_VAD_MIN_SPEECH] = g_param_spec_int("vad-min-speech-ms",
        "VAD minimum speech", "VAD: shortest speech segment kept, ms", 0, 3600000,
        d.min_speech_duration_ms, rw_ready);
    properties[PROP_VAD_MIN_SILENCE] = g_param_spec_int("vad-min-silence-ms",
        "VAD minimum silence", "VAD: silence that ends a segment, ms", 0, 3600000,
        d.min_silence_duration_ms, rw_ready);
    properties[PROP_VAD_SPEECH_PAD] = g_param_spec_int("vad-speech-pad-ms", "VAD speech pad",
        "VAD: padding added around each speech segment, ms", 0, 3600000, d.speech_pad_ms,
        rw_ready);
    properties[PROP_VAD_MAX_SPEECH] = g_param_spec_float("vad-max-speech-s",
        "VAD maximum speech", "VAD, offline: split speech segments longer than this, s "
        "(the maximum: no limit)", 0.0f, G_MAXFLOAT, d.max_speech_duration_s, rw_ready);
    properties[PROP_VAD_SAMPLES_OVERLAP] = g_param_spec_float("vad-samples-overlap",
        "VAD samples overlap", "VAD, offline: seconds of audio kept after each speech "
        "segment when transcribing", 0.0f, 10.0f, d.samples_overlap, rw_ready);
    properties[PROP_POST_VAD_MESSAGES] = g_param_spec_boolean("post-vad-messages",
        "Post VAD messages", "VAD: post a whisper-vad element message at each start and "
        "end of speech", FALSE, rw_ready);
}

static void make_stats_props(GParamSpec **properties)
{
    const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;
    properties[PROP_WINDOWS] = g_param_spec_uint64("windows", "Windows",
        "Statistics: windows (or live runs) decoded since the last READY to PAUSED",
        0, G_MAXUINT64, 0, ro);
    properties[PROP_TOKENS] = g_param_spec_uint64("tokens", "Tokens",
        "Statistics: positions run through the decoder since the last READY to PAUSED",
        0, G_MAXUINT64, 0, ro);
    properties[PROP_ENCODER_MS] = g_param_spec_double("mean-encoder-ms", "Mean encoder time",
        "Statistics: mean time of one encoder run in ms", 0, G_MAXDOUBLE, 0, ro);
    properties[PROP_RTF] = g_param_spec_double("real-time-factor", "Real-time factor",
        "Statistics: processing time / audio time transcribed (below 1 is faster than "
        "real time)", 0, G_MAXDOUBLE, 0, ro);
    properties[PROP_LATE_COMMITS] = g_param_spec_uint64("late-commits", "Late commits",
        "Statistics (live): final segments pushed more than 'latency' ms after their audio "
        "arrived, since the last READY to PAUSED", 0, G_MAXUINT64, 0, ro);
    properties[PROP_MAX_COMMIT_DELAY] = g_param_spec_uint64("max-commit-delay",
        "Maximum commit delay", "Statistics (live): the longest time in ms from a final "
        "segment's first audio arriving to the segment being pushed", 0, G_MAXUINT64, 0, ro);
    properties[PROP_MEDIAN_COMMIT_DELAY] = g_param_spec_uint64("median-commit-delay",
        "Median commit delay", "Statistics (live): the median of the finals' commit delays "
        "(as max-commit-delay) in ms, to 20 ms (the middle of its bin; 0 without finals)",
        0, G_MAXUINT64, 0, ro);
    /* gst-plugins-rs's transcribers' name for it, notified as it grows, so that an
     * application can watch how late the text is and tune `latency` */
    properties[PROP_MAX_OBSERVED_DELAY] = g_param_spec_uint("max-observed-delay",
        "Maximum observed delay", "Statistics (live): the longest time in ms from a final's "
        "first audio arriving to its text being pushed (max-commit-delay), notified when it "
        "grows; above 'latency' the element also posts a CORE/CLOCK warning", 0, G_MAXUINT, 0,
        ro);
}

/* ------------------------------------------------------------------ class, instance */

void gst_whisper_props_class_init(GObjectClass *gobject_class, gboolean transcriber)
{
    GParamSpec **properties = pspecs[transcriber != FALSE];
    gobject_class->set_property = gst_whisper_set_property;
    gobject_class->get_property = gst_whisper_get_property;
    wkv_options d;
    wkv_options_default(&d);
    make_stream_props(properties);
    make_decoding_props(properties, &d);
    make_word_props(properties, &d, transcriber);
    make_vad_props(properties);
    make_stats_props(properties);
    g_object_class_install_properties(gobject_class, N_PROPS, properties);
}

void gst_whisper_props_init(GstWhisper *self)
{
    GParamSpec **properties = pspecs[self->transcriber != FALSE];
    /* every property starts at its param spec's default: one source for both */
    for (guint id = 1; id < N_PROPS; id++) {
        if (!prop_field[id] || id == PROP_MODEL)
            continue;
        GValue v = G_VALUE_INIT;
        g_value_init(&v, G_PARAM_SPEC_VALUE_TYPE(properties[id]));
        g_param_value_set_default(properties[id], &v);
        set_field(self, prop_field[id], &v);
        g_value_unset(&v);
    }
    self->props.language = g_strdup(G_PARAM_SPEC_STRING(properties[PROP_LANGUAGE])->default_value);
    self->props.language_code = g_strdup(self->props.language);
    self->props.model_path = g_strdup(g_getenv("WHISPERKV_MODEL"));
}

void gst_whisper_props_clear(GstWhisper *self)
{
    g_free(self->props.model_path);
    g_free(self->props.language);
    g_free(self->props.language_code);
    g_free(self->props.initial_prompt);
    g_free(self->props.alignment_heads);
    g_free(self->props.vad_model_path);
}
