/* The long-form loop's state, as the offline transcriber (transcriber.c) reads it;
 * the loop itself is public (whisperkv.h wkv_longform_*).  Not installed. */
#ifndef WKV_WINDOW_H
#define WKV_WINDOW_H

#include "whisperkv.h"

#include <stdint.h>

/* A segment callback asked to stop. */
int wkv__longform_stopped(const wkv_longform *lf);
/* The frames of the whole input, once known (the word steps' last-window rule). */
void wkv__longform_set_content(wkv_longform *lf, int64_t content_frames);
/* The language the windows are decoded in ("auto" until detected). */
const char *wkv__longform_language(const wkv_longform *lf);

#endif
