/* Error strings, a clock and the allocation functions: the little every stage needs. */
#include "base/util.h"
#include "whisperkv.h"
#include "whisperkv_debug.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *wkv__strdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = wkv__malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void wkv__set_error(char **error, const char *fmt, ...)
{
    if (!error)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? wkv__malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    wkv__free(*error);
    *error = s;
}

double wkv__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void *wkv__alloc_zeroed(size_t bytes)
{
    return wkv__calloc(1, bytes ? bytes : 1);
}

void *wkv__alloc_zeroed_lines(size_t bytes, void **raw)
{
    *raw = bytes <= SIZE_MAX - 64 ? wkv__calloc(1, bytes + 64) : NULL;
    if (!*raw)
        return NULL;
    return (char *)*raw + (64 - (uintptr_t)*raw % 64) % 64;
}

/* The allocation-failure hook (wkv_debug_alloc_fail): the one piece of global mutable
 * state in the core, and a test-only one.  It is compiled in every build, so the
 * allocation-failure tests run on the very library users get (CI's main, valgrind
 * and sanitizer stages) instead of a second build made for them; atomic, because an
 * element's or a context's threads allocate beside the test's; process-wide, not
 * thread-local, because the element's worker thread allocates for it.  Disarmed
 * (fail_at 0) it costs each allocation one relaxed load. */
static _Atomic long alloc_fail_at;
static _Atomic long alloc_count;
static atomic_int alloc_failed;

void wkv_debug_alloc_fail(long n)
{
    atomic_store(&alloc_count, 0);
    atomic_store(&alloc_failed, 0);
    atomic_store(&alloc_fail_at, n > 0 ? n : 0);
}

long wkv_debug_alloc_count(void)
{
    return atomic_load(&alloc_count);
}

int wkv_debug_alloc_failed(void)
{
    return atomic_load(&alloc_failed);
}

static int alloc_fails(void)
{
    long at = atomic_load_explicit(&alloc_fail_at, memory_order_relaxed);
    if (!at)
        return 0;
    if (atomic_fetch_add(&alloc_count, 1) + 1 != at)
        return 0;
    atomic_store(&alloc_failed, 1);
    return 1;
}

int wkv_debug_alloc_fails(void)
{
    return alloc_fails();
}

void *wkv__malloc(size_t bytes)
{
    return alloc_fails() ? NULL : malloc(bytes);
}

void *wkv__calloc(size_t count, size_t size)
{
    return alloc_fails() ? NULL : calloc(count, size);
}

void *wkv__realloc(void *p, size_t bytes)
{
    return alloc_fails() ? NULL : realloc(p, bytes);
}

char *wkv__strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = wkv__malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int wkv__memalign(void **p, size_t align, size_t bytes)
{
    if (alloc_fails()) {
        *p = NULL;
        return ENOMEM;
    }
    return posix_memalign(p, align, bytes);
}

void wkv__free(void *p)
{
    free(p);
}

const char *wkv_version(void)
{
    return WKV_VERSION_STRING;
}
