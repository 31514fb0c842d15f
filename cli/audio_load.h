/* Decoding any audio file GStreamer can read into 16 kHz mono float samples. */
#ifndef CLI_AUDIO_LOAD_H
#define CLI_AUDIO_LOAD_H

#include <glib.h>

/* Decodes `location` (a file name, or a URI such as file:///... or http://...)
 * through uridecodebin -> audioconvert -> audioresample -> appsink
 * (F32LE, 16000 Hz, mono) into one buffer.  gst_init() must have run.
 *
 * Returns the samples (free with g_free; *n_samples gets their number, possibly 0)
 * or NULL with *error set to a one-line message naming the file. */
float *cli_audio_load(const char *location, gsize *n_samples, GError **error);

#endif
