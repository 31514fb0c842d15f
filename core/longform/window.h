/* The long-form loop's state, as the offline transcriber (transcriber.c) reads it;
 * the loop itself is public (whisperkv.h wkv_longform_*).  Not installed. */
#ifndef WKV_WINDOW_H
#define WKV_WINDOW_H

#include "whisperkv.h"
#include "base/ivec.h"
#include "words/word_window.h"

#include <stdint.h>

/* A segment callback asked to stop. */
int wkv__longform_stopped(const wkv_longform *lf);
/* The frames of the whole input, once known (the word steps' last-window rule). */
void wkv__longform_set_content(wkv_longform *lf, int64_t content_frames);
/* The language the windows are decoded in ("auto" until detected). */
const char *wkv__longform_language(const wkv_longform *lf);

/* Reports one segment of window result r (its window at mel frame seek) to cb unless
 * the reference would clear it (start == end or blank text), counting it in *count;
 * its tokens then join `history` (may be NULL).  Returns 1 when cb asks to stop, -1
 * when out of memory, else 0. */
int wkv__emit_segment(const wkv_model *m, const wkv_window_result *r, int64_t seek,
                      const wkv__wseg *g, int with_words, wkv__ivec *history,
                      wkv_segment_cb cb, void *user, int *count);
/* decode_with_fallback's test after the attempt at o->temperature: the result is too
 * repetitive or too unlikely (and not silence), and the next temperature, `next`
 * (o->temperature + temperature_increment as the loop computes it), is still to try. */
int wkv__needs_fallback(const wkv_options *o, const wkv_window_result *r, float next);
/* decode_with_fallback: the window encoded in ctx decoded at the temperatures
 * o->temperature + k * temperature_increment from k = k0 up to 1.0, until the result
 * needs no fallback.  The window's cross-KV cache serves every attempt.  0 or -1. */
int wkv__decode_fallback(wkv_context *ctx, const wkv_options *o, const int *prompt,
                         int n_prompt, int k0, wkv_window_result *r, char **error);

#endif
