/* whisper: the element's allocations sized by data (the queued audio, a stretch's
 * speech, the live run's copy of its audio, a segment's words).
 *
 * GLib's g_malloc and g_renew abort the application when memory is short; these
 * allocations grow with the input, so they fail instead and the element posts an
 * ERROR that says what could not be allocated (docs/reliability.md, "Allocation
 * failure").  They count in the core's allocation-failure hook (wkv_debug_alloc_fail,
 * whisperkv_debug.h), so the tests fail the element's allocations and the core's in one
 * count.  tools/check_alloc.py keeps every sized allocation of gst-plugin/ here. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperalloc.h"
#include "gstwhisperdebug.h"
#include "whisperkv_debug.h"

#define GST_CAT_DEFAULT gst_whisper_debug

gpointer gst_whisper_try_renew(gpointer mem, gsize n, gsize size)
{
    if (wkv_debug_alloc_fails())
        return NULL;
    /* never 0 bytes: g_try_realloc would free `mem` and return NULL, a failure */
    return g_try_realloc_n(mem, MAX(n, 1), MAX(size, 1));
}

void gst_whisper_alloc_error(GstWhisper *self, const gchar *what, gsize n, gsize size)
{
    if (size && n > G_MAXSIZE / size)
        GST_ELEMENT_ERROR(self, CORE, FAILED,
                          ("Could not allocate %s: %" G_GSIZE_FORMAT " x %" G_GSIZE_FORMAT
                           " bytes is too large", what, n, size),
                          ("out of memory"));
    else
        GST_ELEMENT_ERROR(self, CORE, FAILED,
                          ("Could not allocate %" G_GSIZE_FORMAT " bytes for %s", n * size,
                           what),
                          ("out of memory"));
}
