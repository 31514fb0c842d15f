/* A decoder shared by contexts on one model (group.c): their greedy steps go
 * through it and the steps that meet are run as one batched pass. */
#ifndef WKV_DECODE_GROUP_H
#define WKV_DECODE_GROUP_H

#include "net/context.h"

/* One greedy step of slot 0 of ctx: token at the next position, logits (n_vocab) of
 * it.  Through ctx's decoder group when it has one, else (and whenever the step
 * cannot be shared) wkv_decode.  0 or -1. */
int wkv__decoder_step(wkv_context *ctx, int token, float *logits);

#endif
