/* whisper: what a decoding step returns to the worker (gstwhispersegs.h): the
 * segments, words and cues it made, in pieces, and its error.  No pad is touched
 * here: the worker hands the result to gstwhispertext.c. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhispersegs.h"

#include <stdlib.h>

void gst_whisper_seg_free(gpointer p)
{
    WSeg *s = p;
    g_free(s->text);
    if (s->words) {
        for (guint i = 0; i < s->words->len; i++)
            g_free(g_array_index(s->words, WWord, i).word);
        g_array_free(s->words, TRUE);
    }
    g_free(s);
}

static void piece_clear(gpointer p)
{
    GstWhisperPiece *piece = p;
    g_ptr_array_unref(piece->segs);
}

GPtrArray *gst_whisper_segs_new(void)
{
    return g_ptr_array_new_with_free_func(gst_whisper_seg_free);
}

GPtrArray *gst_whisper_decoded_add(GstWhisperDecoded *d, GPtrArray *segs, GstClockTime until)
{
    GstWhisperPiece piece = {segs ? segs : gst_whisper_segs_new(), until};
    if (!d->pieces) { /* most waits of the worker decode nothing: no array for them */
        d->pieces = g_array_new(FALSE, FALSE, sizeof(GstWhisperPiece));
        g_array_set_clear_func(d->pieces, piece_clear);
    }
    g_array_append_val(d->pieces, piece);
    return piece.segs;
}

void gst_whisper_decoded_fail(GstWhisperDecoded *d, const gchar *what, char *err)
{
    d->failed = TRUE;
    d->error_what = what;
    free(d->error);
    d->error = err;
}

void gst_whisper_decoded_clear(GstWhisperDecoded *d)
{
    if (d->pieces)
        g_array_unref(d->pieces);
    d->pieces = NULL;
    free(d->error);
    d->error = NULL;
}
