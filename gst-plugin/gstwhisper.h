/* whisper: speech to text with whisperkv.  Audio in on `sink`, the same buffers out
 * on `src`, timed text (one buffer per segment, word or cue: text-unit) on `text_src`.  See docs/element.md. */
#ifndef GST_WHISPER_H
#define GST_WHISPER_H

#include <gst/gst.h>

#include "gstwhispermodel.h"
#include "whisperkv.h"

G_BEGIN_DECLS

#define GST_TYPE_WHISPER (gst_whisper_get_type())
G_DECLARE_FINAL_TYPE(GstWhisper, gst_whisper, GST, WHISPER, GstElement)

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

/* The string tag each final segment's text is sent with. */
#define GST_WHISPER_TAG_TRANSCRIPT "transcript"

/* Registers the `transcript` tag (idempotent). */
void gst_whisper_register_tags(void);
/* Registers the element with `plugin` (NULL: statically, for tests and apps). */
gboolean gst_whisper_register(GstPlugin *plugin);

G_END_DECLS

#endif
