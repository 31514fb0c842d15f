/* Helpers the long-form loop (window.c) and the live stream (stream.c) share: the
 * cutting of a window's tokens at timestamp pairs, the silence test, the initial
 * prompt's tokens and language detection.  Not installed. */
#ifndef WKV_SEGMENTS_H
#define WKV_SEGMENTS_H

#include "whisperkv_debug.h"

/* A growable array of token ids. */
typedef struct {
    int *v;
    int n, cap;
} wkv__ivec;

/* Appends n ids; 0 or -1 (out of memory, the array unchanged). */
int wkv__ivec_push(wkv__ivec *a, const int *x, int n);
/* Keeps the last `keep` ids. */
void wkv__ivec_keep_last(wkv__ivec *a, int keep);

/* One piece of a window's tokens, as openai/whisper's transcribe.py cuts a window into
 * segments: the pieces closed by a pair of consecutive timestamps come first, in order;
 * the tail after the last pair (if any token follows it) last. */
typedef struct {
    int tok0, tok1; /* tokens [tok0, tok1), timestamps included */
    int pair;       /* closed by a timestamp pair; 0: the tail */
    int closed;     /* a pair, or a tail of two or more tokens ending with a timestamp */
} wkv__piece;

/* Cuts t[0..n) after every pair of timestamps (ids >= tb).  *out gets a malloc'd array
 * (NULL when n == 0); returns the number of pieces, or -1 when out of memory. */
int wkv__split_pieces(const int *t, int n, int tb, wkv__piece **out);

/* Seconds of a timestamp token. */
static inline double wkv__ts_seconds(int token, int tb)
{
    return (token - tb) * 0.02;
}

/* The reference's silence test after decoding: no-speech probability above the
 * threshold and the text not confidently likely (avg_logprob not above
 * logprob_threshold).  A threshold >= 1 never says silent. */
int wkv__result_is_silent(const wkv_options *o, const wkv_window_result *r);

/* Whether text is empty once Python's str.strip() has run over it. */
int wkv__text_is_blank(const char *text);

/* The reference's initial prompt: the tokens of " " + prompt.strip().  *out gets a
 * malloc'd array (NULL for no prompt: NULL or ""); returns their number or -1 with
 * *error set. */
int wkv__initial_prompt_tokens(const wkv_model *m, const char *prompt, int **out,
                              char **error);

/* Replaces the owned copy of a language code and points opts->language at it; 0 or
 * -1 (out of memory: both unchanged). */
int wkv__own_language(char **owned, wkv_options *opts, const char *code);
/* Whether `language` asks for detection on this model ("auto" or NULL, multilingual). */
int wkv__wants_detection(const wkv_model *m, const char *language);
/* The language rule of transcribe.py, one function for the long form, the offline
 * transcriber and the live stream: a language of "auto" (or none) on a multilingual
 * model (wkv__wants_detection) is detected once, on the first window's 3000 frames
 * (mel: normalized as the windows are).  Returns the code (static) and, when probs
 * is not NULL, every language's probability there (wkv_detect_language's); NULL with
 * a message. */
const char *wkv__language_first_window(wkv_context *ctx, const float *mel, float *probs,
                                      char **error);

#endif
