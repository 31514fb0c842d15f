/* A window's tokens cut into pieces, and the silence test (pieces.h). */
#include "decode/pieces.h"
#include "base/util.h"

#include <stdlib.h>

int wkv__split_pieces(const int *t, int n, int tb, wkv__piece **out)
{
    *out = NULL;
    if (n <= 0)
        return 0;
    /* a piece ends at every two consecutive timestamps, and consecutive pairs overlap
     * (a run of k timestamps makes k - 1 pieces, as the reference's slices do), plus
     * the tail: at most n pieces */
    wkv__piece *p = wkv__malloc(((size_t)n + 1) * sizeof *p);
    if (!p)
        return -1;
    int np = 0, last = 0;
    for (int i = 1; i < n; i++)
        if (t[i - 1] >= tb && t[i] >= tb) {
            p[np++] = (wkv__piece){last, i, 1, 1};
            last = i;
        }
    if (last < n) /* a single timestamp after text closes the tail */
        p[np++] = (wkv__piece){last, n, 0, n - last >= 2 && t[n - 1] >= tb};
    *out = p;
    return np;
}

int wkv__result_is_silent(const wkv_options *o, const wkv_window_result *r)
{
    return o->no_speech_threshold < 1.0f && r->no_speech_prob > o->no_speech_threshold &&
           !(r->avg_logprob > o->logprob_threshold);
}
