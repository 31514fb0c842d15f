/* Greedy decoding of several windows in one batch (batch.c). */
#ifndef WKV_DECODE_BATCH_H
#define WKV_DECODE_BATCH_H

#include "net/context.h"

/* Windows one batch decodes at most (self-KV slots, rows of a decoder step). */
#define WKV_BATCH_MAX 64

/* Decodes n windows (cross[b]: each one's cross-KV cache, valid) greedily at
 * temperature 0 without a prompt, side by side: res[b] is what wkv_decode_window
 * gives window b alone with these options (up to the summation order of the
 * products).  Uses the context's self-KV slots 0..n-1.  0, or -1 with a message (every
 * result cleared). */
int wkv__decode_windows(wkv_context *ctx, const wkv__cross_kv *const *cross, int n,
                        const wkv_options *o, wkv_window_result *res, char **error);

#endif
