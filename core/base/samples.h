/* Samples held from a longer input: [base, base + n) of it, appended at the end and
 * dropped from the front.  The live stream and the offline transcriber both hold their
 * audio this way. */
#ifndef WKV_SAMPLES_H
#define WKV_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    float *v;
    int64_t n, cap, base;
} wkv__samples;

/* Appends k samples; 0, or -1 with a message (out of memory, too long). */
int wkv__samples_push(wkv__samples *s, const float *pcm, size_t k, char **error);
/* Drops the samples before input index `index` (all held at most). */
void wkv__samples_drop(wkv__samples *s, int64_t index);
void wkv__samples_free(wkv__samples *s);

#endif
