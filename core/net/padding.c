/* The encoder sized to the audio a window holds (wkv_options.audio_ctx AUTO), with the
 * decoder still attending over a whole window.
 *
 * A window shorter than 30 s is its audio and then log-mel frames of 0.0 (the
 * padding, wkv_mel_window).  The encoder runs on the frames the audio needs
 * (wkv_audio_ctx_auto's); the cross K/V of the frames after them are those of the
 * padding, from a whole window of padding encoded once per context.  Cutting the
 * decoder's attention to the frames encoded (whisper.cpp's audio_ctx,
 * wkv_encode_frames) takes away the padding a model trained on 30-s windows attends to
 * when it has read all the audio: the trained model then reads a run's sentence twice
 * ("Lived that a fast pace. Makeed that a fast pace."), live WER 80 % against 53 %
 * with the padding's K/V kept, where encoding the padding with the audio changed
 * little (docs/trained-model.md, "The padding's K/V"). */
#include "base/util.h"
#include "net/context.h"

#include <string.h>

/* ctx->pad: the cross K/V of a window of padding alone, in the cross cache's type.
 * 0 or -1. */
static int pad_fill(wkv_context *ctx)
{
    const wkv_hparams *hp = &ctx->model->hp;
    wkv__cross_kv *p = &ctx->pad;
    if (!p->k && !p->k16 &&
        wkv__cross_kv_init(p, hp->n_text_layer, hp->n_audio_ctx, hp->n_text_state) != 0) {
        wkv__cross_kv_free(p);
        return -1;
    }
    if (wkv__cross_kv_set_f16(p, wkv__cross_half(&ctx->cross)) != 0)
        return -1;
    float *zeros = wkv__alloc_zeroed((size_t)hp->n_mels * WKV_N_FRAMES * sizeof(float));
    if (!zeros)
        return -1;
    int rc = wkv__encoder_run(ctx, zeros, hp->n_audio_ctx);
    wkv__free(zeros);
    if (rc != 0)
        return -1;
    p->n_frames = hp->n_audio_ctx;
    ctx->encoder->backend->fill(ctx->encoder, ctx->enc_out, p);
    p->valid = 1;
    ctx->stats.encoder_runs++;
    return 0;
}

/* Whether mel frames [from, 3000) of every bin are 0.0: the padding the cache holds. */
static int padded_from(const float *mel, int n_mels, int from)
{
    for (int b = 0; b < n_mels; b++)
        for (int f = from; f < WKV_N_FRAMES; f++)
            if (mel[(size_t)b * WKV_N_FRAMES + f] != 0.0f)
                return 0;
    return 1;
}

/* Rows [n, n_ctx) of every layer's K and V from the padding's. */
static void pad_copy(wkv__cross_kv *c, const wkv__cross_kv *p, int n)
{
    const size_t row = (size_t)c->n_state * (wkv__cross_half(c) ? sizeof(uint16_t) : sizeof(float));
    const size_t off = (size_t)n * c->n_state, bytes = (size_t)(c->n_ctx - n) * row;
    for (int l = 0; l < c->n_layer; l++) {
        if (wkv__cross_half(c)) {
            memcpy(wkv__cross_k16(c, l) + off, wkv__cross_k16(p, l) + off, bytes);
            memcpy(wkv__cross_v16(c, l) + off, wkv__cross_v16(p, l) + off, bytes);
        } else {
            memcpy(wkv__cross_k(c, l) + off, wkv__cross_k(p, l) + off, bytes);
            memcpy(wkv__cross_v(c, l) + off, wkv__cross_v(p, l) + off, bytes);
        }
    }
}

int wkv__encode_window(wkv_context *ctx, const float *mel, int audio_ctx, int mel_frames)
{
    const wkv_hparams *hp = &ctx->model->hp;
    const int full = hp->n_audio_ctx;
    const int n = wkv__audio_ctx_frames(ctx->model, audio_ctx, mel_frames);
    /* a fixed audio_ctx is whisper.cpp's: the decoder sees those frames alone */
    if (audio_ctx != WKV_AUDIO_CTX_AUTO || n >= full || !padded_from(mel, hp->n_mels, 2 * n))
        return wkv_encode_frames(ctx, mel, audio_ctx == WKV_AUDIO_CTX_AUTO ? full : n);
    double t0 = wkv__now_ms();
    ctx->pass_n = 0; /* the arena's decoder rows are about to be overwritten */
    const int stale = !ctx->pad.valid || wkv__cross_half(&ctx->pad) != wkv__cross_half(&ctx->cross);
    if (stale && pad_fill(ctx) != 0)
        return wkv_encode_frames(ctx, mel, full); /* out of memory: the whole window */
    if (wkv__encoder_run(ctx, mel, n) != 0)
        return -1;
    double t1 = wkv__now_ms();
    ctx->stats.encoder_runs++;
    ctx->stats.encode_ms += t1 - t0;
    wkv__context_fill_cross(ctx);
    pad_copy(&ctx->cross, &ctx->pad, n);
    ctx->cross.n_frames = full;
    ctx->stats.decode_ms += wkv__now_ms() - t1;
    wkv_decode_reset(ctx);
    return 0;
}
