/* The whisperkv plugin's two elements, one code (see docs/element.md):
 *   whisperkv             a filter: audio in on `sink`, the same buffers out on `src`,
 *                         timed text (one buffer per segment, word or cue: text-unit) on
 *                         `text_src`;
 *   whisperkvtranscriber  a transcriber as GStreamer's others are (transcriberbin's
 *                         `transcriber`): audio in on `sink`, timed text on `src`, word
 *                         buffers by default.
 * Both are GstWhisper (abstract, "GstWhisperKvBase"): its class says which one. */
#ifndef GST_WHISPER_H
#define GST_WHISPER_H

#include <gst/gst.h>

#include "gstwhispermodel.h"
#include "whisperkv.h"

G_BEGIN_DECLS

typedef struct _GstWhisper GstWhisper;
typedef struct _GstWhisperClass {
    GstElementClass parent_class;
    gboolean transcriber; /* text on `src`, no audio out */
} GstWhisperClass;

#define GST_TYPE_WHISPER (gst_whisper_get_type())
#define GST_WHISPER(obj) (G_TYPE_CHECK_INSTANCE_CAST((obj), GST_TYPE_WHISPER, GstWhisper))
#define GST_IS_WHISPER(obj) (G_TYPE_CHECK_INSTANCE_TYPE((obj), GST_TYPE_WHISPER))
#define GST_WHISPER_GET_CLASS(obj) \
    (G_TYPE_INSTANCE_GET_CLASS((obj), GST_TYPE_WHISPER, GstWhisperClass))
GType gst_whisper_get_type(void);

/* The element factories' types: "whisperkv" and "whisperkvtranscriber". */
#define GST_TYPE_WHISPER_FILTER (gst_whisper_filter_get_type())
#define GST_TYPE_WHISPER_TRANSCRIBER (gst_whisper_transcriber_get_type())
GType gst_whisper_filter_get_type(void);
GType gst_whisper_transcriber_get_type(void);

/* What one text buffer holds (the text-unit property). */
typedef enum {
    GST_WHISPER_TEXT_UNIT_SEGMENT,
    GST_WHISPER_TEXT_UNIT_WORD,
    GST_WHISPER_TEXT_UNIT_CUE,
} GstWhisperTextUnit;

#define GST_TYPE_WHISPER_TEXT_UNIT (gst_whisper_text_unit_get_type())
GType gst_whisper_text_unit_get_type(void);

/* The encoder's compute type (the compute-type property): the core's wkv_compute_type
 * values, named as the CLI's --compute-type. */
#define GST_TYPE_WHISPER_COMPUTE_TYPE (gst_whisper_compute_type_get_type())
GType gst_whisper_compute_type_get_type(void);

/* The decoder's attention caches (the kv-cache property): the core's wkv_cache_type
 * values, named as the CLI's --kv-cache. */
#define GST_TYPE_WHISPER_CACHE_TYPE (gst_whisper_cache_type_get_type())
GType gst_whisper_cache_type_get_type(void);

/* The string tag each final segment's text is sent with. */
#define GST_WHISPER_TAG_TRANSCRIPT "transcript"

/* Registers the `transcript` tag (idempotent). */
void gst_whisper_register_tags(void);
/* Registers both elements with `plugin` (NULL: statically, for tests and apps). */
gboolean gst_whisper_register(GstPlugin *plugin);

G_END_DECLS

#endif
