/* The element's debug category and the ERROR a failed inference posts
 * (gstwhisperdebug.c): the bottom of the element's files, which all log. */
#ifndef GST_WHISPER_DEBUG_H
#define GST_WHISPER_DEBUG_H

#include <gst/gst.h>

#include "gstwhisper.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(gst_whisper_debug);

/* Posts "Whisper inference failed" with `what` and the core's message `err` (freed);
 * returns FALSE, for the callers' returns. */
gboolean gst_whisper_inference_error(GstWhisper *self, const gchar *what, char *err);

G_END_DECLS

#endif
