/* The properties (gstwhisperprops.c): their values under the object lock, and the
 * settings one run takes from them at READY to PAUSED. */
#ifndef GST_WHISPER_PROPS_H
#define GST_WHISPER_PROPS_H

#include <gst/gst.h>

#include "cue_cut.h"
#include "gstwhisper.h"

G_BEGIN_DECLS

/* Element-only defaults (the decoding options' come from wkv_options_default). */
#define DEFAULT_THREADS 0
#define DEFAULT_STEP 0
#define DEFAULT_LIVE_STEP 2000 /* ms, when upstream is live and step is 0 */
#define DEFAULT_LATENCY 8000
#define DEFAULT_LATENESS 0
#define DEFAULT_PARTIAL_RESULTS FALSE
/* batch-size: its largest value (the core's batch limit). */
#define MAX_BATCH_SIZE 64

/* Properties: under the object lock. */
typedef struct {
    gchar *model_path;
    gchar *language;      /* what the model gets: "en" */
    gchar *language_code; /* as language or language-code was set: "en-US" */
    gboolean translate;
    gint threads;
    gint compute_type;       /* wkv_compute_type */
    gint cache_type;         /* wkv_cache_type */
    gboolean share_decoder;  /* the model's decoder group */
    guint step_ms, latency_ms, lateness_ms;
    gboolean partial_results;
    gchar *initial_prompt;
    gboolean condition;
    gfloat no_speech_threshold;
    gint beam_size, best_of, sample_len;
    gboolean temperature_fallback;
    gfloat compression_ratio_threshold, logprob_threshold;
    guint64 seed;
    gboolean word_timestamps;
    gchar *alignment_heads;
    gint text_unit;          /* GstWhisperTextUnit */
    cue_cut_options cue; /* text-unit=cue */
    gboolean highlight_words;
    /* voice activity: vad-* (the core's wkv_vad_params), post-vad-messages */
    gchar *vad_model_path;
    gfloat vad_threshold, vad_max_speech_s, vad_samples_overlap;
    gint vad_min_speech_ms, vad_min_silence_ms, vad_speech_pad_ms;
    gboolean post_vad_messages;
    gint batch_size;         /* offline batching: chunks per decoder batch (0, 1: off) */
    gint commit_policy;      /* live: wkv_commit_policy */
    guint frame_threshold_ms; /* live, alignatt */
    guint max_held_ms;        /* live, alignatt: wkv_stream_options.max_held_ms */
    gint audio_ctx;          /* wkv_options.audio_ctx */
} GstWhisperProps;

#define GST_TYPE_WHISPER_COMMIT_POLICY (gst_whisper_commit_policy_get_type())
GType gst_whisper_commit_policy_get_type(void);

/* Installs the properties and get/set (class_init); every property at its default
 * (instance init); frees their strings (finalize). */
void gst_whisper_props_class_init(GObjectClass *gobject_class, gboolean transcriber);
void gst_whisper_props_init(GstWhisper *self);
void gst_whisper_props_clear(GstWhisper *self);
/* The settings one run uses, read once at READY to PAUSED (object lock held): the
 * decoding ones into w.opts (and text unit, cue options, compute type), returning
 * the model path, language and prompt (g_free) and the threads and step; the VAD ones
 * into w.vad_params, returning the VAD model's path (g_free; NULL: VAD off). */
void gst_whisper_props_snapshot(GstWhisper *self, gchar **path, gchar **language,
                                gchar **prompt, gint *threads, guint *step);
gchar *gst_whisper_props_snapshot_vad(GstWhisper *self);
/* Settings the running element reads again (each takes the object lock). */
guint gst_whisper_props_lateness(GstWhisper *self);
guint gst_whisper_props_latency(GstWhisper *self);
guint gst_whisper_props_step(GstWhisper *self);
gboolean gst_whisper_props_partial_results(GstWhisper *self);
/* commit-policy and frame-threshold, for the live stream */
void gst_whisper_props_commit(GstWhisper *self, int *policy, int *threshold_ms,
                              int *max_held_ms);

G_END_DECLS

#endif
