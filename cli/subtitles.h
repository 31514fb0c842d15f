/* SubRip and WebVTT cues cut from words the way the reference's writers cut them
 * (openai/whisper's utils.py, SubtitlesWriter.iterate_result): line width, lines per
 * cue, words per line, highlighted words. */
#ifndef CLI_SUBTITLES_H
#define CLI_SUBTITLES_H

#include <stdio.h>

#include <glib.h>

#include "cue_cut.h"
#include "whisperkv.h"

typedef struct {
    cue_cut_options cut; /* where cues break (cues/cue_cut.h) */
    gboolean highlight_words;
} cue_options;

typedef struct cue_writer cue_writer;

/* Cues go to `out` as they are complete; vtt: WebVTT cues ('&', '<', '>' escaped),
 * else SubRip.  Control characters other than '\n' are dropped from the text. */
/* "HH:MM:SS<sep>mmm" of ms milliseconds (ms >= 0), or "MM:SS<sep>mmm" when !hours and
 * it is under an hour: the one formatter of the CLI's timestamps (the cues' here, the
 * segments' and progress's through cli_format_timestamp); buf needs 32 bytes. */
void cli_timestamp_ms(gint64 ms, gboolean hours, char sep, char *buf, size_t size);

cue_writer *cue_writer_new(const cue_options *opts, gboolean vtt, FILE *out);
/* The words of the next segment (a segment without words adds nothing). */
void cue_writer_segment(cue_writer *c, const wkv_segment *seg);
/* Writes the last cue. */
void cue_writer_finish(cue_writer *c);
void cue_writer_free(cue_writer *c);

#endif
