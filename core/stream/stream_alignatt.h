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

#endif
