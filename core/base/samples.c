/* Samples held from a longer input (samples.h). */
#include "base/samples.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int wkv__samples_push(wkv__samples *s, const float *pcm, size_t k, char **error)
{
    if (k == 0)
        return 0;
    if (k > (size_t)(INT64_MAX / 8) - (size_t)s->n) {
        wkv__set_error(error, "input too long");
        return -1;
    }
    if (s->n + (int64_t)k > s->cap) {
        int64_t cap = s->cap ? s->cap : 16000; /* a second, then doubled */
        while (cap < s->n + (int64_t)k)
            cap *= 2;
        float *p = wkv__realloc(s->v, (size_t)cap * sizeof *p);
        if (!p) {
            wkv__set_error(error, "out of memory");
            return -1;
        }
        s->v = p;
        s->cap = cap;
    }
    memcpy(s->v + s->n, pcm, k * sizeof *pcm);
    s->n += (int64_t)k;
    return 0;
}

void wkv__samples_drop(wkv__samples *s, int64_t index)
{
    if (index <= s->base)
        return;
    int64_t drop = index - s->base < s->n ? index - s->base : s->n;
    memmove(s->v, s->v + drop, (size_t)(s->n - drop) * sizeof *s->v);
    s->n -= drop;
    s->base += drop;
}

void wkv__samples_free(wkv__samples *s)
{
    wkv__free(s->v);
    memset(s, 0, sizeof *s);
}
