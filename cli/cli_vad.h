/* whisperkv-transcribe's voice activity detection (Silero VAD, as whisper.cpp's
 * --vad): its options, --vad-only, and transcribing the speech only with every time
 * mapped back onto the input (whisperkv.h, "voice activity"). */
#ifndef CLI_VAD_H
#define CLI_VAD_H

#include <glib.h>

#include "output.h"
#include "whisperkv.h"

/* The --vad-* options and --dump-vad-probs, for the main option group. */
extern GOptionEntry cli_vad_entries[];

/* After parsing: NULL, or why the VAD options are unusable (g_free it; exit 2). */
char *cli_vad_check(void);
/* A VAD model is given (--vad-model or $WHISPERKV_VAD_MODEL). */
gboolean cli_vad_enabled(void);
gboolean cli_vad_only(void);
/* --vad-only: loads, detects and prints the speech segments of `file`.  Returns 0,
 * or the exit status (1) with a one-line message in *msg (g_free it). */
int cli_vad_only_run(const char *file, const cli_format *fmt, const char *output_file,
                     char **msg);
/* Replaces *pcm (g_malloc'd) by the audio whisper.cpp transcribes with VAD (the
 * speech only; possibly none: *n = 0) and keeps the mapping.  Returns 0, or 1 with a
 * message in *msg (g_free it). */
int cli_vad_filter(float **pcm, gsize *n, char **msg);
/* --batch-size with VAD: the chunks of the input (wkv_chunks_from_speech on its speech
 * segments, detected with max_speech_duration_s at most 30) into a new *chunks
 * (free()).  Returns their number, or -1 with a message in *msg. */
int cli_vad_chunks(const float *pcm, gsize n, wkv_chunk **chunks, char **msg);
/* The segment as on the input's timeline (wkv_vad_map_result into *mapped, its words
 * into a new *words to g_free), or seg itself without VAD (*words NULL). */
const wkv_segment *cli_vad_map(const wkv_segment *seg, wkv_segment *mapped,
                               wkv_word **words);
/* --live: the stream gates itself (whisperkv.h, wkv_stream_options.vad_model); loads
 * the model into so (nothing without VAD).  Returns 0, or 1 with a message in *msg. */
int cli_vad_live(wkv_stream_options *so, char **msg);
/* Frees what cli_vad_filter and cli_vad_live kept. */
void cli_vad_cleanup(void);

#endif
