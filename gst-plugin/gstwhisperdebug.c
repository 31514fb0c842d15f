/* whisper: the debug category every file of the element logs to, and the ERROR an
 * inference step posts when the core fails.  Bottom of the element's files. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperdebug.h"

#include <stdlib.h>

GST_DEBUG_CATEGORY(gst_whisper_debug);
#define GST_CAT_DEFAULT gst_whisper_debug

gboolean gst_whisper_inference_error(GstWhisper *self, const gchar *what, char *err)
{
    GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Whisper inference failed"),
                      ("%s: %s", what, err ? err : "unknown error"));
    free(err);
    return FALSE;
}
