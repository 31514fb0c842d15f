/* A growable array of ints (ivec.h). */
#include "base/ivec.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int wkv__ivec_push(wkv__ivec *a, const int *x, int n)
{
    if (n <= 0)
        return 0;
    if (a->n + n > a->cap) {
        int cap = a->cap ? a->cap : 256;
        while (cap < a->n + n)
            cap *= 2;
        int *p = wkv__realloc(a->v, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        a->v = p;
        a->cap = cap;
    }
    memcpy(a->v + a->n, x, (size_t)n * sizeof *x);
    a->n += n;
    return 0;
}

void wkv__ivec_keep_last(wkv__ivec *a, int keep)
{
    if (a->n <= keep)
        return;
    memmove(a->v, a->v + (a->n - keep), (size_t)keep * sizeof *a->v);
    a->n = keep;
}
