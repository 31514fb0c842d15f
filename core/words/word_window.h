/* The long-form loop's word steps (word_window.c): align a window's segments, seek
 * after the last word, skip silence around likely hallucinations; shared by the live
 * stream's word mode. */
#ifndef WKV_WORD_WINDOW_H
#define WKV_WORD_WINDOW_H

#include "words/align.h"

/* What the long-form loop keeps for words between windows. */
typedef struct {
    int *pairs; /* alignment heads (malloc'd) */
    int n_pairs;
    const char *prepend, *append; /* NULL: the reference's defaults */
    float hallucination_threshold; /* seconds, <= 0: off */
    double last_speech;            /* last_speech_timestamp */
    int64_t content_frames;        /* of the whole input, or -1 when unknown (a stream) */
} wkv__words_state;

/* word_window.c: the long-form loop's word steps on one window's segments (what
 * transcribe.py does with word_timestamps after cutting a window into segments):
 * words, the seek after the last word, hallucination skips.  May shorten *n_segs;
 * *drop set: the whole window is skipped (to *next_seek).  0, or -1 with a message. */
int wkv__words_window(wkv_context *ctx, wkv__words_state *st, const int *sot_seq, int n_sot,
                     int unicode_split, wkv__wseg *segs, int *n_segs, int64_t seek, int size,
                     int single_ending, int64_t *next_seek, int *drop, char **error);
void wkv__wsegs_clear(wkv__wseg *segs, int n);
/* word_window.c: the first steps alone (timing.py's add_word_timestamps on one
 * window): the segments' text tokens aligned over `size` frames, words handed to the
 * segments (times rounded from `offset` seconds, st->last_speech as before the
 * window).  The long form and the live stream share it.  0, or -1 with a message. */
int wkv__words_align(wkv_context *ctx, const wkv__words_state *st, const int *sot_seq, int n_sot,
                    int unicode_split, wkv__wseg *segs, int n, double offset, int size,
                    char **error);
/* word_window.c: the alignment pass's sot sequence for a language code (ignored by
 * English-only models) and task into sot (3 ints); returns its length and sets
 * *unicode_split (the language splits words by unicode units). */
int wkv__words_sot(const wkv_model *m, const char *language, int translate, int sot[3],
                  int *unicode_split);
/* word_window.c: the hallucination_silence_threshold step alone (st->last_speech as
 * before the window): may shorten *n_segs and move *next_seek; 1 when the whole window
 * is dropped. */
int wkv__skip_hallucinations(const wkv__words_state *st, wkv__wseg *segs, int *n_segs,
                            int64_t seek, int size, int single_ending, int64_t *next_seek);

#endif
