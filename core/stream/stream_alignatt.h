/* The live stream's AlignAtt stop rule (stream_alignatt.c).  Not installed. */
#ifndef WKV_STREAM_ALIGNATT_H
#define WKV_STREAM_ALIGNATT_H

#include "words/align.h"

typedef struct {
    int stop;       /* the first text token at the threshold (n_text: none) */
    int rewind;     /* the attention jumped back more than 4 s: stop is skip */
    int last_frame; /* the most attended frame of the last token looked at (-1: none) */
} wkv__alignatt;

/* Runs the alignment pass over sot + <|notimestamps|> + text + eot with the window's
 * cross K/V (`frames` encoder frames of real audio, 0.02 s each) and scans the text
 * tokens in order: the first whose most attended frame is within `threshold` frames
 * of the end stops; the first `skip` tokens (the forced prefix) are not looked at.  0, or -1 (out of memory, bad tokens). */
int wkv__alignatt_stop(wkv_context *ctx, const int *pairs, int n_pairs, const int *sot, int n_sot,
                       const int *text, int n_text, int skip, int frames, int threshold,
                       wkv__alignatt *out);

/* The scan alone, over a (n_text + 1) x frames matrix (align.c's, row i the attention
 * of the step that chose text token i): the first token from `skip` on whose most
 * attended frame f has frames - f <= threshold stops; a frame more than 200 (4 s)
 * before the previous token's is a rewind. */
void wkv__alignatt_scan(const float *a, int n_text, int frames, int skip, int threshold,
                        wkv__alignatt *out);

/* The words to commit: those before the word holding the stop token (words k's tokens
 * are [tok_off[k], tok_off[k + 1]), counted from the first token after the prefix; at
 * the end the stop's word too; none after a rewind. */
int wkv__alignatt_words(const int *tok_off, int n_words, const wkv__alignatt *aa, int at_end);

#endif
