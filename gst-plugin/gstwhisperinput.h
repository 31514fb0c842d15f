/* The input (gstwhisperinput.c, streaming thread): the sink's format and the
 * converters that make what the model hears. */
#ifndef GST_WHISPER_INPUT_H
#define GST_WHISPER_INPUT_H

#include <gst/audio/audio.h>

#include "gstwhisper.h"

G_BEGIN_DECLS

/* The input's format and its converters (gstwhisperinput.c): the streaming thread's. */
typedef struct {
    GstAudioInfo info;
    gboolean have_caps;
    guint direct_width;          /* 2, 4: S16LE, F32LE mono at 16 kHz, read as it is;
                                  * 0: converted */
    GstAudioConverter *mix;      /* to F32 mono at the input's rate (NULL: it is that) */
    GstAudioConverter *resample; /* F32 mono to 16 kHz (NULL: the rate is 16 kHz) */
    gboolean fed;                /* the resampler took samples since its last reset */
    float *mono, *out;           /* the mix's and the resampler's output */
    gsize mono_cap, out_cap;
} GstWhisperInput;

/* A buffer's samples as the queue takes them: n samples at data, S16LE or F32. */
typedef struct {
    const guint8 *data;
    gsize n;
    gboolean s16;
    GstMapInfo map; /* the buffer's, while mapped */
    gboolean mapped;
} GstWhisperSamples;

/* The caps of a CAPS event: FALSE (an ERROR naming them and what the sink takes posted)
 * when they cannot be read.  A change of format drains the old resampler into *tail
 * (valid until the next call here; n 0: nothing owed, or the same format again). */
gboolean gst_whisper_input_set_caps(GstWhisper *self, GstCaps *caps, GstWhisperSamples *tail);
gboolean gst_whisper_input_have_caps(GstWhisper *self);
/* A buffer's samples as the model takes them (16 kHz mono); FALSE: ERROR posted.
 * gst_whisper_input_unmap after use. */
gboolean gst_whisper_input_map(GstWhisper *self, GstBuffer *buf, GstWhisperSamples *s);
void gst_whisper_input_unmap(GstBuffer *buf, GstWhisperSamples *s);
/* What the resampler still owes for its last input (none when it does not resample),
 * before the stretch ends; FALSE: ERROR posted. */
gboolean gst_whisper_input_drain(GstWhisper *self, GstWhisperSamples *s);
/* A flush: the resampler's history forgotten. */
void gst_whisper_input_reset(GstWhisper *self);
/* Frees the converters and buffers (the next stream sends its caps). */
void gst_whisper_input_clear(GstWhisper *self);

G_END_DECLS

#endif
