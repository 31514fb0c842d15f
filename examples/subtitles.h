/* SubRip and WebVTT cues cut from words the way the reference's writers cut them
 * (openai/whisper's utils.py, SubtitlesWriter.iterate_result): line width, lines per
 * cue, words per line, highlighted words. */
#ifndef WKV_SUBTITLES_H
#define WKV_SUBTITLES_H

#include <stdio.h>

#include <glib.h>

#include "cue_cut.h"
#include "whisperkv.h"

typedef struct {
    wkv_cue_cut_options cut; /* where cues break (cues/cue_cut.h) */
    gboolean highlight_words;
} wkv_cue_options;

typedef struct wkv_cues wkv_cues;

/* Cues go to `out` as they are complete; vtt: WebVTT cues ('&', '<', '>' escaped),
 * else SubRip.  Control characters other than '\n' are dropped from the text. */
wkv_cues *wkv_cues_new(const wkv_cue_options *opts, gboolean vtt, FILE *out);
/* The words of the next segment (a segment without words adds nothing). */
void wkv_cues_segment(wkv_cues *c, const wkv_segment *seg);
/* Writes the last cue. */
void wkv_cues_finish(wkv_cues *c);
void wkv_cues_free(wkv_cues *c);

#endif
