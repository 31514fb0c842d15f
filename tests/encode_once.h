/* For tests whose subject starts after the encoder (the cross K/V cache, the decoder's
 * products) and that decode one mel on many contexts: the encoder runs once.  On an
 * internal-API test only (net/context.h). */
#ifndef TESTS_ENCODE_ONCE_H
#define TESTS_ENCODE_ONCE_H

#include <stdlib.h>
#include <string.h>

#include "net/context.h"

/* The first call (*saved NULL) encodes mel on ctx and keeps its output in a new
 * *saved (the caller frees it); every later call gives ctx a copy of that output and
 * what wkv_encode does after its encoder: the cross K/V projected on ctx's own model
 * and compute type, an empty sequence.  0, or -1. */
static inline int encode_once(wkv_context *ctx, const float *mel, float **saved)
{
    const wkv_hparams *hp = &ctx->model->hp;
    const size_t n = (size_t)hp->n_audio_ctx * hp->n_audio_state;
    if (!*saved) {
        if (wkv_encode(ctx, mel) != 0 || !(*saved = malloc(n * sizeof **saved)))
            return -1;
        memcpy(*saved, ctx->enc_out, n * sizeof **saved);
        return 0;
    }
    ctx->pass_n = 0; /* a new window: no rows of an earlier pass */
    memcpy(ctx->enc_out, *saved, n * sizeof **saved);
    wkv__context_fill_cross(ctx);
    wkv_decode_reset(ctx);
    return 0;
}

#endif
