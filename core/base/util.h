/* Error strings, a clock, the allocation functions: the little every layer needs. */
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
/* The same starting on a 64-byte boundary (a cache line, one AVX-512 vector), from
 * calloc as the above (large blocks: pages zeroed when first touched); *raw is what
 * to free. */
void *wkv__alloc_zeroed_lines(size_t bytes, void **raw);

/* Every allocation of the core goes through these (tools/check_alloc.py fails on a
 * direct malloc, calloc, realloc, strdup or posix_memalign anywhere else in core/), so
 * that a test can make the N-th of them fail (wkv_debug_alloc_fail, whisperkv_debug.h)
 * and see each one end in a clean error.  Memory they return is freed with free(), as
 * the API's strings are (wkv__free is free). */
void *wkv__malloc(size_t bytes);
void *wkv__calloc(size_t count, size_t size);
void *wkv__realloc(void *p, size_t bytes);
char *wkv__strdup(const char *s);
int wkv__memalign(void **p, size_t align, size_t bytes); /* posix_memalign's contract */
void wkv__free(void *p);

#endif
