/* The vocabulary: special tokens, BPE lookup, the reference's token lists. */
#ifndef WKV_VOCAB_H
#define WKV_VOCAB_H

#include "model/model.h"

#include <stddef.h>

/* vocab.c: fills sp, the special spellings, the BPE table and the suppress list.
 * Called by the loader once the vocabulary is read.  Returns 0 or -1. */
int wkv__vocab_init(wkv_model *m, char **error);
void wkv__vocab_free(wkv_model *m);
wkv_specials wkv__specials_for(int n_vocab);
/* BPE encoding by rank (token id) of one pre-tokenized piece.  Writes at most
 * max_out ids, returns how many the piece needs, or -1. */
int wkv__bpe_encode(const wkv_model *m, const char *bytes, size_t len, int *out,
                   int max_out);
/* The reference's non-speech token ids for this vocabulary (vocab.c). */
const int *wkv__non_speech_tokens(const wkv_model *m, int *n);
/* Token id of exactly these bytes, or -1. */
int wkv__vocab_find(const wkv_model *m, const char *bytes, size_t len);

/* The reference's initial prompt: the tokens of " " + prompt.strip().  *out gets a
 * malloc'd array (NULL for no prompt: NULL or ""); returns their number or -1 with
 * *error set. */
int wkv__initial_prompt_tokens(const wkv_model *m, const char *prompt, int **out,
                              char **error);

/* Python's str.strip() on UTF-8 text, in place; returns s. */
char *wkv__text_strip(char *s);

/* Whether text is empty once Python's str.strip() has run over it. */
int wkv__text_is_blank(const char *text);

#endif
