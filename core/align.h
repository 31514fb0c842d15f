/* Word timestamps (docs/architecture.md): the alignment pass and DTW (align.c), the
 * word rules (words.c) and the long-form loop's word steps (word_window.c), following
 * the reference's timing.py as described in shared/docs/word-timestamps.md. */
#ifndef WKV_ALIGN_H
#define WKV_ALIGN_H

#include "context.h"

/* One word: text (malloc'd, may be "" once punctuation merging emptied it), its
 * tokens (malloc'd), times in seconds and the mean probability of its tokens. */
typedef struct {
    char *text;
    int *tokens;
    int n_tokens;
    double start, end;
    float probability;
} wkv_aword;

void wkv_awords_free(wkv_aword *w, int n);

/* align.c: the (layer, head) pairs of an alignment-heads spec (wkv_options), malloc'd
 * in *pairs (2 ints each) and, when name is not NULL, the spec's name (malloc'd).
 * 0, or -1 with a message. */
int wkv_heads_resolve(const wkv_model *m, const char *spec, int **pairs, int *n_pairs,
                      char **name, char **error);

/* align.c: one window's alignment (find_alignment): the forward pass over
 * sot_seq + <|notimestamps|> + text + eot with the window's cross K/V, DTW, and the
 * words of text with times relative to the window.  unicode_split: the language
 * splits words by unicode units.  No words (*n_words 0) for fewer than two pieces.
 * 0, or -1 (out of memory, bad tokens) with a message. */
int wkv_align_window(wkv_context *ctx, const int *pairs, int n_pairs, const int *sot_seq,
                     int n_sot, const int *text, int n_text, int num_frames,
                     int unicode_split, wkv_aword **words, int *n_words, char **error);

/* align.c: the pass and the matrix alone: seq (L tokens: n_sot, notimestamps, text,
 * eot) through the decoder; matrix gets the (L - n_sot - 1) x F DTW input before
 * negation (text rows after softmax over F frames, standardization, median filter,
 * mean over heads), probs the L - n_sot - 2 text tokens' probabilities.  0 or -1. */
int wkv_align_matrix(wkv_context *ctx, const int *pairs, int n_pairs, const int *seq, int L,
                     int n_sot, int F, float *matrix, float *probs);

/* words.c: split_to_word_tokens.  0 or -1 (out of memory). */
int wkv_split_words(const wkv_model *m, const int *tokens, int n, int unicode_split,
                    wkv_aword **words, int *n_words);
/* words.c: does the language split words by unicode units (zh, ja, th, lo, my, yue)? */
int wkv_lang_unicode_split(const char *code);

/* A window's segment while its words are worked out (word_window.c). */
typedef struct {
    double start, end;
    const int *tokens; /* into the window's tokens, timestamps included */
    int n_tokens, n_text; /* n_text: those < eot */
    wkv_aword *words;  /* owned: listed words (text non-empty), times absolute */
    int n_words;
} wkv_wseg;

/* words.c: add_word_timestamps on the segments of one window from the aligned words
 * (consumed: their texts and tokens move to the segments or are freed).
 * last_speech: the value before this window.  0 or -1 (out of memory). */
int wkv_add_word_timestamps(wkv_wseg *segs, int n_segs, wkv_aword *words, int n_words,
                            double offset, double last_speech, const char *prepend,
                            const char *append);

/* What the long-form loop keeps for words between windows. */
typedef struct {
    int *pairs; /* alignment heads (malloc'd) */
    int n_pairs;
    const char *prepend, *append; /* NULL: the reference's defaults */
    float hallucination_threshold; /* seconds, <= 0: off */
    double last_speech;            /* last_speech_timestamp */
    int64_t content_frames;        /* of the whole input, or -1 when unknown (a stream) */
} wkv_words_state;

/* word_window.c: the long-form loop's word steps on one window's segments (ref doc
 * §6 steps 1-4): words, the seek after the last word, hallucination skips.  May
 * shorten *n_segs; *drop set: the whole window is skipped (to *next_seek).
 * 0, or -1 with a message. */
int wkv_words_window(wkv_context *ctx, wkv_words_state *st, const int *sot_seq, int n_sot,
                     int unicode_split, wkv_wseg *segs, int *n_segs, int64_t seek, int size,
                     int single_ending, int64_t *next_seek, int *drop, char **error);
void wkv_wsegs_clear(wkv_wseg *segs, int n);
/* word_window.c: the first steps alone (ref doc §5 on one window): the segments' text
 * tokens aligned over `size` frames, words handed to the segments (times rounded from
 * `offset` seconds, st->last_speech as before the window).  The long form and the
 * live stream share it.  0, or -1 with a message. */
int wkv_words_align(wkv_context *ctx, const wkv_words_state *st, const int *sot_seq, int n_sot,
                    int unicode_split, wkv_wseg *segs, int n, double offset, int size,
                    char **error);
/* word_window.c: the alignment pass's sot sequence for a language code (ignored by
 * English-only models) and task into sot (3 ints); returns its length and sets
 * *unicode_split (the language splits words by unicode units). */
int wkv_words_sot(const wkv_model *m, const char *language, int translate, int sot[3],
                  int *unicode_split);
/* word_window.c: the hallucination_silence_threshold step alone (st->last_speech as
 * before the window): may shorten *n_segs and move *next_seek; 1 when the whole window
 * is dropped. */
int wkv_skip_hallucinations(const wkv_words_state *st, wkv_wseg *segs, int *n_segs,
                            int64_t seek, int size, int single_ending, int64_t *next_seek);

#endif
