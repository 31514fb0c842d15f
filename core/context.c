/* Decoding contexts: creation (every buffer sized once from the model), the
 * encoder entry point that also refills the cross-KV cache, and accessors. */
#include "context.h"

#include <stdlib.h>
#include <string.h>

void wkv_context_free(wkv_context *ctx)
{
    if (!ctx)
        return;
    float *bufs[] = {ctx->enc_out, ctx->enc_cols, ctx->enc_x, ctx->enc_h, ctx->enc_q,
                     ctx->enc_k, ctx->enc_v, ctx->enc_att, ctx->enc_mlp, ctx->enc_scores,
                     ctx->dec_x, ctx->dec_h, ctx->dec_q, ctx->dec_k, ctx->dec_v,
                     ctx->dec_att, ctx->dec_mlp, ctx->dec_scores, ctx->logits};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        free(bufs[i]);
    wkv_cross_kv_free(&ctx->cross);
    wkv_self_kv_free(&ctx->self);
    wkv_pool_free(ctx->pool);
    free(ctx);
}

wkv_context *wkv_context_new(const wkv_model *model, int threads, char **error)
{
    if (!model) {
        wkv_set_error(error, "no model");
        return NULL;
    }
    wkv_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        wkv_set_error(error, "out of memory");
        return NULL;
    }
    ctx->model = model;
    ctx->threads = threads > 0 ? threads : 1;
    ctx->pool = wkv_pool_new(ctx->threads); /* NULL: everything on this thread */
    const wkv_hparams *hp = &model->hp;
    size_t d = (size_t)hp->n_audio_state, T = (size_t)hp->n_audio_ctx;
    size_t cols_chan = (size_t)(hp->n_mels > hp->n_audio_state ? hp->n_mels : hp->n_audio_state);
    int ok = (ctx->enc_out = malloc(T * d * sizeof(float))) &&
             (ctx->enc_cols = malloc(2 * T * 3 * cols_chan * sizeof(float))) &&
             (ctx->enc_x = malloc(2 * T * d * sizeof(float))) &&
             (ctx->enc_h = malloc(T * d * sizeof(float))) &&
             (ctx->enc_q = malloc(T * d * sizeof(float))) &&
             (ctx->enc_k = malloc(T * d * sizeof(float))) &&
             (ctx->enc_v = malloc(T * d * sizeof(float))) &&
             (ctx->enc_att = malloc(T * d * sizeof(float))) &&
             (ctx->enc_mlp = malloc(T * 4 * d * sizeof(float))) &&
             (ctx->enc_scores = malloc(T * T * sizeof(float))) && wkv_decoder_alloc(ctx) == 0;
    if (!ok) {
        wkv_context_free(ctx);
        wkv_set_error(error, "out of memory allocating a decoding context");
        return NULL;
    }
    return ctx;
}

const wkv_model *wkv_context_model(const wkv_context *ctx)
{
    return ctx->model;
}

const wkv_stats *wkv_context_stats(const wkv_context *ctx)
{
    return &ctx->stats;
}

int wkv_encode(wkv_context *ctx, const float *mel)
{
    double t0 = wkv_now_ms();
    if (wkv_encoder_run(ctx, mel) != 0)
        return -1;
    double t1 = wkv_now_ms();
    ctx->stats.encoder_runs++;
    ctx->stats.encode_ms += t1 - t0;
    /* a new window: its cross K/V once, and an empty sequence */
    wkv_cross_kv_fill(&ctx->cross, ctx->model, ctx->enc_out);
    ctx->stats.cross_kv_computes++;
    ctx->stats.decode_ms += wkv_now_ms() - t1;
    wkv_decode_reset(ctx);
    return 0;
}

const float *wkv_encoder_output(const wkv_context *ctx)
{
    return ctx->enc_out;
}
