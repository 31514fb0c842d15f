/* Subtitle cues cut from timed words the way the reference's writers cut them
 * (openai/whisper's utils.py, SubtitlesWriter.iterate_result): line width, lines per
 * cue, words per line.  Shared by the CLI's SRT/VTT writer (cli/subtitles.c) and
 * the element's text-unit=cue (gst-plugin/), so both cut the same cues. */
#ifndef CUE_CUT_H
#define CUE_CUT_H

#include <glib.h>

#include "whisperkv.h"

typedef struct {
    int max_line_width;     /* 0: none */
    int max_line_count;     /* 0: none */
    int max_words_per_line; /* 0: none */
} cue_cut_options;

/* A word as its cue shows it: maybe stripped, maybe with "\n" first (a line break). */
typedef struct {
    char *text;
    double start, end;
} cue_word;

/* A complete cue: its words in order (n >= 1), valid during the call. */
typedef void (*cue_cb)(const cue_word *words, guint n, void *user);

typedef struct cue_cutter cue_cutter;

cue_cutter *cue_cutter_new(const cue_cut_options *opts, cue_cb cb, void *user);
/* The words of the next segment (a segment without words adds nothing); a cue goes to
 * the callback once the next word opens another one. */
void cue_cutter_segment(cue_cutter *c, const wkv_segment *seg);
/* TRUE when words wait for the cue still open, with its first word's start. */
gboolean cue_cutter_pending(const cue_cutter *c, double *start);
/* Gives the open cue to the callback. */
void cue_cutter_finish(cue_cutter *c);
void cue_cutter_free(cue_cutter *c);

/* Python's str.isspace() (the writers strip with it). */
gboolean wkv_py_space(gunichar c);

#endif
