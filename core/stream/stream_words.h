/* The live stream's word mode (stream_words.c): the words of one run's hypothesis,
 * LocalAgreement-2 over them, the words a forced commit must take, and the finals and
 * partial made of words.  Not installed. */
#ifndef WKV_STREAM_WORDS_H
#define WKV_STREAM_WORDS_H

#include "words/word_window.h"

/* The words of one run, flattened over its pieces, in stream seconds. */
typedef struct {
    wkv__wseg *segs;  /* one per piece; they own the words' texts and tokens */
    int n_segs;
    wkv_word *w;     /* the words kept, in order */
    int *piece;      /* the piece of each */
    int *tok;        /* all their tokens, word after word */
    int *tok_off;    /* word k's tokens: tok[tok_off[k] .. tok_off[k + 1]) */
    int n;
    /* wkv__run_words_build_after: the alignment pass's matrix, a row per token of
     * prefix + piece (align.c), attn_frames columns; NULL when no pass ran */
    float *attn;
    int attn_frames;
} wkv__run_words;

/* Aligns the run's pieces (tokens, n_tokens, rel_start, rel_end of pieces[0..np)) over
 * `size` frames with the window's cross-KV still in ctx, then keeps the words that end
 * after `floor_s` (the last committed word's end, stream seconds) with times made
 * monotonic: a word starts no earlier than the one before it ends (nor than floor_s
 * or the run's start) and ends within the run, yet lasts at least 10 ms (which may end
 * a word squeezed at the run's end 10 ms past it).  base_s: the run's first sample;
 * duration: its length.  0, or -1 with a message. */
int wkv__run_words_build(wkv_context *ctx, const wkv__words_state *ws, const int *sot, int n_sot,
                        int unicode, const wkv_stream_segment *pieces, int np, int size,
                        double base_s, double duration, double floor_s, wkv__run_words *rw,
                        char **error);
/* The same for alignatt's one piece (no timestamps) decoded after the forced prefix
 * (n_prefix committed tokens, whole words, whose audio is held from the run's start):
 * prefix and piece aligned together, the prefix's words left out, no word dropped
 * by time; the pass's matrix kept in rw->attn for alignatt's stop rule.  0, or -1
 * with a message. */
int wkv__run_words_build_after(wkv_context *ctx, const wkv__words_state *ws, const int *sot,
                               int n_sot, int unicode, const int *prefix, int n_prefix,
                               const wkv_stream_segment *piece, int size, double base_s,
                               double duration, double floor_s, wkv__run_words *rw,
                               char **error);
void wkv__run_words_clear(wkv__run_words *rw);

/* LocalAgreement-2 over words: the number of leading words of cur whose texts are
 * exactly prev[0], prev[1], ... (byte-equal: a word whose punctuation or case
 * changed is not agreed). */
int wkv__words_agree(char *const *prev, int n_prev, const wkv_word *cur, int n_cur);

/* The words a forced commit takes: every word up to the last one that starts at or
 * before `horizon` (stream seconds); 0 when none does. */
int wkv__words_due(const wkv_word *w, int n, double horizon);

/* Words [a, b) as one segment: fields from proto (the run's), text their texts
 * (malloc'd), tokens theirs, words theirs, start/end from the first start to the
 * last end.  0 or -1 (out of memory). */
int wkv__run_words_segment(const wkv__run_words *rw, int a, int b, double base_s,
                          const wkv_stream_segment *proto, wkv_stream_segment *out);

/* The finals of a commit of words [0, n_commit), [0, n_agreed) by agreement: one per
 * stretch of words of one piece with the same agreement (forced set on the others),
 * into out (n_commit entries at most).  Returns their number or -1 (out of memory;
 * the texts written so far are out's to free). */
int wkv__run_words_finals(const wkv__run_words *rw, int n_agreed, int n_commit, double base_s,
                         const wkv_stream_segment *proto, wkv_stream_segment *out);

#endif
