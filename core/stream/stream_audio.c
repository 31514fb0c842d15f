/* The audio the live stream holds (stream_priv.h): samples [base, base + n) of the
 * stream, appended as pushed and dropped from the front as runs commit.
 *
 * Why the stream copies what is pushed (the element holds the same audio in its own
 * queue until the worker takes it): a run decodes up to 30 s of the audio held, and
 * keeps deciding over the same samples while their text waits for agreement, so the
 * stream needs them contiguous and its own; the element's queue is the hand-off
 * between the streaming thread and the worker, and frees each buffer once pushed. */
#include "stream/stream_priv.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int wkv__stream_hold(wkv_stream *st, const float *pcm, size_t n, char **error)
{
    if (st->n + (int64_t)n > st->cap) {
        int64_t cap = st->cap ? st->cap : WKV_SAMPLE_RATE;
        while (cap < st->n + (int64_t)n)
            cap *= 2;
        float *p = realloc(st->buf, (size_t)cap * sizeof *p);
        if (!p) {
            wkv__set_error(error, "out of memory");
            return -1;
        }
        st->buf = p;
        st->cap = cap;
    }
    memcpy(st->buf + st->n, pcm, n * sizeof *pcm);
    st->n += (int64_t)n;
    return 0;
}

void wkv_stream_drop(wkv_stream *st, int64_t index)
{
    if (index <= st->base)
        return;
    int64_t drop = index - st->base < st->n ? index - st->base : st->n;
    memmove(st->buf, st->buf + drop, (size_t)(st->n - drop) * sizeof *st->buf);
    st->n -= drop;
    st->base += drop;
}
