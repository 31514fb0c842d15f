/* The language rule (transcribe.py's): "auto" on a multilingual model is detected
 * once, on the first window; for the offline transcriber and the live stream. */
#ifndef WKV_LANGUAGE_H
#define WKV_LANGUAGE_H

#include "whisperkv.h"

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
