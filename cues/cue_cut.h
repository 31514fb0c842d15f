/* Subtitle cues cut from timed words the way the reference's writers cut them
 * (openai/whisper's utils.py, SubtitlesWriter.iterate_result): line width, lines per
 * cue, words per line.  Shared by the CLI's SRT/VTT writer (examples/subtitles.c) and
 * the element's text-unit=cue (gst-plugin/), so both cut the same cues. */
#ifndef WKV_CUE_CUT_H
#define WKV_CUE_CUT_H

#include <glib.h>

#include "whisperkv.h"

typedef struct {
    int max_line_width;     /* 0: none */
    int max_line_count;     /* 0: none */
    int max_words_per_line; /* 0: none */
} wkv_cue_cut_options;

/* A word as its cue shows it: maybe stripped, maybe with "\n" first (a line break). */
typedef struct {
    char *text;
    double start, end;
} wkv_cue_word;

/* A complete cue: its words in order (n >= 1), valid during the call. */
typedef void (*wkv_cue_cb)(const wkv_cue_word *words, guint n, void *user);

typedef struct wkv_cue_cutter wkv_cue_cutter;

wkv_cue_cutter *wkv_cue_cutter_new(const wkv_cue_cut_options *opts, wkv_cue_cb cb, void *user);
/* The words of the next segment (a segment without words adds nothing); a cue goes to
 * the callback once the next word opens another one. */
void wkv_cue_cutter_segment(wkv_cue_cutter *c, const wkv_segment *seg);
/* TRUE when words wait for the cue still open, with its first word's start. */
gboolean wkv_cue_cutter_pending(const wkv_cue_cutter *c, double *start);
/* Gives the open cue to the callback. */
void wkv_cue_cutter_finish(wkv_cue_cutter *c);
void wkv_cue_cutter_free(wkv_cue_cutter *c);

/* Python's str.isspace() (the writers strip with it). */
gboolean wkv_py_space(gunichar c);

#endif
