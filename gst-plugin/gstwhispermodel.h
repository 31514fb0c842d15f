/* The process-wide cache of loaded models: elements whose `model` property names the
 * same file share one immutable wkv_model (refcounted); each keeps its own
 * wkv_context.  Silero VAD models (vad-model) are shared the same way. */
#ifndef GST_WHISPER_MODEL_H
#define GST_WHISPER_MODEL_H

#include <glib.h>

#include "whisperkv.h"

G_BEGIN_DECLS

typedef struct _GstWhisperModel GstWhisperModel;

/* Returns the shared model for `path` (loading it on first use), or NULL with *error
 * set to a message naming the path and the reason.  (Threads belong to each element's
 * decoding context: the core keeps OpenBLAS single-threaded.) */
GstWhisperModel *gst_whisper_model_acquire(const gchar *path, GError **error);
/* The same for a Silero VAD model (vad-model): shared apart from Whisper models. */
GstWhisperModel *gst_whisper_vad_model_acquire(const gchar *path, GError **error);
/* Drops one reference; the last one frees the model. */
void gst_whisper_model_release(GstWhisperModel *model);
const wkv_model *gst_whisper_model_get(const GstWhisperModel *model);
const wkv_vad_model *gst_whisper_vad_model_get(const GstWhisperModel *model);
const gchar *gst_whisper_model_path(const GstWhisperModel *model);
/* The decoder group of a Whisper model's elements (share-decoder), made on first use;
 * it lives as long as the model (an element frees its context before releasing the
 * model).  NULL with a message (free()) in *error. */
wkv_decoder_group *gst_whisper_model_decoder_group(GstWhisperModel *model, char **error);
/* Its statistics (all zero before any element asked for it); tests and benches. */
void gst_whisper_model_decoder_group_stats(GstWhisperModel *model,
                                           wkv_decoder_group_stats *out);
/* How many elements hold this model (tests). */
guint gst_whisper_model_refcount(const GstWhisperModel *model);
/* How many elements hold the model loaded from `path` now, 0 if none (tests). */
guint gst_whisper_model_users(const gchar *path);
/* Number of distinct models loaded now (tests). */
guint gst_whisper_model_cache_size(void);

G_END_DECLS

#endif
