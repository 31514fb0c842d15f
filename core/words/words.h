/* Words from tokens (words.c): the reference's split_to_word_tokens, punctuation
 * merging and add_word_timestamps (timing.py and tokenizer.py). */
#ifndef WKV_WORDS_H
#define WKV_WORDS_H

#include "whisperkv_debug.h"

/* One word: text (malloc'd, may be "" once punctuation merging emptied it), its
 * tokens (malloc'd), times in seconds and the mean probability of its tokens. */
typedef struct {
    char *text;
    int *tokens;
    int n_tokens;
    double start, end;
    float probability;
} wkv__aword;

void wkv__awords_free(wkv__aword *w, int n);

/* words.c: split_to_word_tokens.  0 or -1 (out of memory). */
int wkv__split_words(const wkv_model *m, const int *tokens, int n, int unicode_split,
                    wkv__aword **words, int *n_words);
/* words.c: does the language split words by unicode units (zh, ja, th, lo, my, yue)? */
int wkv__lang_unicode_split(const char *code);

/* A window's segment while its words are worked out (word_window.c). */
typedef struct {
    double start, end;
    const int *tokens; /* into the window's tokens, timestamps included */
    int n_tokens, n_text; /* n_text: those < eot */
    wkv__aword *words;  /* owned: listed words (text non-empty), times absolute */
    int n_words;
} wkv__wseg;

/* words.c: add_word_timestamps on the segments of one window from the aligned words
 * (consumed: their texts and tokens move to the segments or are freed).
 * last_speech: the value before this window.  0 or -1 (out of memory). */
int wkv__add_word_timestamps(wkv__wseg *segs, int n_segs, wkv__aword *words, int n_words,
                            double offset, double last_speech, const char *prepend,
                            const char *append);

#endif
