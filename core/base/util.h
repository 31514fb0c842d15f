/* Error strings, a clock, zeroed buffers, text stripping: the little every layer needs. */
#ifndef WKV_UTIL_H
#define WKV_UTIL_H

#include <stddef.h>

char *wkv__strdup_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wkv__set_error(char **error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double wkv__now_ms(void);
/* A context's buffers, zeroed.  Their pages become resident when first written, not
 * here: an earlier version wrote them at once to make the resident size final at
 * creation, but GCC compiles malloc + memset(0) into calloc, so it never did; and
 * written at once, the f32 caches and scratch that a bf16/int8 context replaces at
 * setup cost 4 - 7 MB of RSS at base (freed pages the heap keeps).  The first window
 * writes every encoder buffer, and the decoder's activations share their arena
 * (context.h), so a stream's resident size is reached in its first window but for
 * a half self-KV cache's rows (an f32 one is written when its slots are made). */
void *wkv__alloc_zeroed(size_t bytes);

#endif
