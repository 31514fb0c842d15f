/* What one window's decoding is cut into and judged by, as openai/whisper's
 * transcribe.py does: pieces at timestamp pairs, a timestamp's seconds, the silence
 * test.  The long form and the live stream both use them. */
#ifndef WKV_PIECES_H
#define WKV_PIECES_H

#include "whisperkv.h"

/* One piece of a window's tokens, as openai/whisper's transcribe.py cuts a window into
 * segments: the pieces closed by a pair of consecutive timestamps come first, in order;
 * the tail after the last pair (if any token follows it) last. */
typedef struct {
    int tok0, tok1; /* tokens [tok0, tok1), timestamps included */
    int pair;       /* closed by a timestamp pair; 0: the tail */
    int closed;     /* a pair, or a tail of two or more tokens ending with a timestamp */
} wkv__piece;

/* Cuts t[0..n) after every pair of timestamps (ids >= tb).  *out gets a malloc'd array
 * (NULL when n == 0); returns the number of pieces, or -1 when out of memory. */
int wkv__split_pieces(const int *t, int n, int tb, wkv__piece **out);

/* Seconds of a timestamp token. */
static inline double wkv__ts_seconds(int token, int tb)
{
    return (token - tb) * 0.02;
}

/* The reference's silence test after decoding: no-speech probability above the
 * threshold and the text not confidently likely (avg_logprob not above
 * logprob_threshold).  A threshold >= 1 never says silent. */
int wkv__result_is_silent(const wkv_options *o, const wkv_window_result *r);

#endif
