/* The encoder sized to the audio a window holds (wkv_options.audio_ctx AUTO), with the
 * decoder still attending over a whole window.
 *
 * A window shorter than 30 s is its audio and then log-mel frames of 0.0 (the
 * padding, wkv_mel_window).  The encoder runs on the frames the audio needs
 * (wkv_audio_ctx_auto's); the cross K/V of the frames after them are those of the
 * padding, from a whole window of padding encoded once per context.  Cutting the
 * decoder's attention to the frames encoded (whisper.cpp's audio_ctx,
 * wkv_encode_frames) takes away the padding a model trained on 30-s windows attends to
 * once it has read the audio: the trained model then read a run's sentence twice
 * ("Lived that a fast pace. Makeed that a fast pace."), live WER 82.5 % against 54.9 %
 * with the padding's K/V kept; encoding the whole window but cutting the decoder's
 * attention gave 79.9 %, so the loss is the decoder's (docs/trained-model.md, "The
 * padding's K/V"). */
#include "base/util.h"
#include "net/context.h"

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
    double t0 = wkv__now_ms();
    int rc = wkv__encoder_run(ctx, zeros, hp->n_audio_ctx);
    wkv__free(zeros);
    ctx->stats.encode_ms += wkv__now_ms() - t0;
    if (rc != 0)
        return -1;
    p->n_frames = hp->n_audio_ctx;
    ctx->encoder->backend->fill(ctx->encoder, ctx->enc_out, p);
    p->valid = 1;
    ctx->stats.encoder_runs++;
    return 0;
}

int wkv__encode_window(wkv_context *ctx, const float *mel, int audio_ctx, int mel_frames)
{
    const int n = wkv__audio_ctx_frames(ctx->model, audio_ctx, mel_frames);
    /* a fixed audio_ctx is whisper.cpp's: the decoder sees those frames alone */
    if (audio_ctx != WKV_AUDIO_CTX_AUTO || n >= ctx->model->hp.n_audio_ctx)
        return wkv_encode_frames(ctx, mel, n);
    /* made again after a compute or cache type change (context.c); out of memory: the
     * whole window */
    if (!ctx->pad.valid && pad_fill(ctx) != 0)
        return wkv_encode_frames(ctx, mel, 0);
    return wkv__encode_padded(ctx, mel, n, &ctx->pad);
}
