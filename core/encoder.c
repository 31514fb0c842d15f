/* Encoder: mel (n_mels x 2*n_ctx) -> conv1 -> GELU -> conv2 (stride 2) -> GELU
 * -> + positional embedding -> pre-norm attention/MLP blocks -> ln_post.
 * Activations are row-major [frame][channel]; convolutions are im2col + sgemm. */
#include "context.h"
#include "ops.h"

#include <string.h>

/* cols[t][c*3 + k] = in(channel c, frame stride*t + k - 1), zero outside.
 * `in` is read through (frame, channel) strides so one routine serves both the
 * channel-major mel and the frame-major conv1 output. */
static void im2col(const float *in, int n_in_frames, size_t frame_stride,
                   size_t chan_stride, int n_chan, int stride, int n_out, float *cols)
{
    for (int t = 0; t < n_out; t++) {
        float *row = cols + (size_t)t * n_chan * 3;
        for (int k = 0; k < 3; k++) {
            int f = stride * t + k - 1;
            if (f < 0 || f >= n_in_frames) {
                for (int c = 0; c < n_chan; c++)
                    row[c * 3 + k] = 0.0f;
                continue;
            }
            const float *src = in + (size_t)f * frame_stride;
            for (int c = 0; c < n_chan; c++)
                row[c * 3 + k] = src[(size_t)c * chan_stride];
        }
    }
}

int wkv_encoder_run(wkv_context *ctx, const float *mel)
{
    const wkv_model *m = ctx->model;
    const wkv_weights *w = &m->w;
    const int d = m->hp.n_audio_state, n_mels = m->hp.n_mels;
    const int T = m->hp.n_audio_ctx, T2 = 2 * T;
    float *x = ctx->enc_x, *h = ctx->enc_h;

    /* conv1: mel is [n_mels][WKV_N_FRAMES]; read its first 2*T frames */
    im2col(mel, T2, 1, WKV_N_FRAMES, n_mels, 1, T2, ctx->enc_cols);
    wkv_linear(ctx->enc_cols, T2, n_mels * 3, w->conv1_w, w->conv1_b, d, x);
    wkv_gelu_pool(ctx->pool, x, (size_t)T2 * d);

    /* conv2, stride 2: input x is [2T][d] */
    im2col(x, T2, d, 1, d, 2, T, ctx->enc_cols);
    wkv_linear(ctx->enc_cols, T, d * 3, w->conv2_w, w->conv2_b, d, x);
    wkv_gelu_pool(ctx->pool, x, (size_t)T * d);
    for (size_t i = 0; i < (size_t)T * d; i++)
        x[i] += w->enc_pos[i];

    for (int l = 0; l < m->hp.n_audio_layer; l++) {
        const wkv_layer *L = &w->enc[l];
        wkv_layer_norm(x, h, T, d, L->attn_ln_w, L->attn_ln_b);
        wkv_linear(h, T, d, L->attn_q_w, L->attn_q_b, d, ctx->enc_q);
        wkv_linear(h, T, d, L->attn_k_w, NULL, d, ctx->enc_k);
        wkv_linear(h, T, d, L->attn_v_w, L->attn_v_b, d, ctx->enc_v);
        wkv_attention(ctx->pool, ctx->enc_q, ctx->enc_k, ctx->enc_v, T, T, d, m->hp.n_audio_head, -1,
                      ctx->enc_scores, ctx->enc_att);
        wkv_linear_add(ctx->enc_att, T, d, L->attn_o_w, L->attn_o_b, d, x);

        wkv_layer_norm(x, h, T, d, L->mlp_ln_w, L->mlp_ln_b);
        wkv_linear(h, T, d, L->mlp0_w, L->mlp0_b, 4 * d, ctx->enc_mlp);
        wkv_gelu_pool(ctx->pool, ctx->enc_mlp, (size_t)T * 4 * d);
        wkv_linear_add(ctx->enc_mlp, T, 4 * d, L->mlp2_w, L->mlp2_b, d, x);
    }
    wkv_layer_norm(x, ctx->enc_out, T, d, w->enc_ln_w, w->enc_ln_b);
    return 0;
}
