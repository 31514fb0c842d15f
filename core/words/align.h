/* One window's word alignment (align.c): the alignment heads, the decoder pass that
 * records their cross-attention, and DTW (the reference's timing.find_alignment). */
#ifndef WKV_ALIGN_H
#define WKV_ALIGN_H

#include "net/context.h"
#include "words/words.h"

/* align.c: the (layer, head) pairs of an alignment-heads spec (wkv_options), malloc'd
 * in *pairs (2 ints each) and, when name is not NULL, the spec's name (malloc'd).
 * 0, or -1 with a message. */
int wkv__heads_resolve(const wkv_model *m, const char *spec, int **pairs, int *n_pairs,
                      char **name, char **error);

/* align.c: one window's alignment (find_alignment): the forward pass over
 * sot_seq + <|notimestamps|> + text + eot with the window's cross K/V, DTW, and the
 * words of text with times relative to the window.  unicode_split: the language
 * splits words by unicode units.  No words (*n_words 0) for fewer than two pieces.
 * matrix, when not NULL, gets the pass's (n_text + 1) x *n_frames matrix
 * (wkv__align_matrix's; malloc'd, NULL when no pass ran), so that a caller needing
 * where each token looks (the live stream's alignatt) does not run the pass again.
 * 0, or -1 (out of memory, bad tokens) with a message. */
int wkv__align_window(wkv_context *ctx, const int *pairs, int n_pairs, const int *sot_seq,
                     int n_sot, const int *text, int n_text, int num_frames,
                     int unicode_split, wkv__aword **words, int *n_words, float **matrix,
                     int *n_frames, char **error);

/* align.c: the pass and the matrix alone: seq (L tokens: n_sot, notimestamps, text,
 * eot) through the decoder; matrix gets the (L - n_sot - 1) x F DTW input before
 * negation (text rows after softmax over F frames, standardization, median filter,
 * mean over heads), probs the L - n_sot - 2 text tokens' probabilities.  0 or -1. */
int wkv__align_matrix(wkv_context *ctx, const int *pairs, int n_pairs, const int *seq, int L,
                     int n_sot, int F, float *matrix, float *probs);

#endif
