/* The element's allocations sized by data, which fail instead of aborting
 * (gstwhisperalloc.c). */
#ifndef GST_WHISPER_ALLOC_H
#define GST_WHISPER_ALLOC_H

#include <gst/gst.h>

#include "gstwhisper.h"

G_BEGIN_DECLS

/* gst_whisper_try_renew: `mem` (NULL: none yet) resized to n elements of `size` bytes,
 * or NULL with `mem` untouched when the memory is not there or n * size overflows
 * (g_free frees it); counted in the core's allocation-failure hook.
 * gst_whisper_alloc_error: the ERROR message for such an allocation, `what` saying
 * what it was for. */
gpointer gst_whisper_try_renew(gpointer mem, gsize n, gsize size);
#define gst_whisper_try_new(T, n) ((T *)gst_whisper_try_renew(NULL, (n), sizeof(T)))
void gst_whisper_alloc_error(GstWhisper *self, const gchar *what, gsize n, gsize size);

G_END_DECLS

#endif
