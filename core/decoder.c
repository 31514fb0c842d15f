/* Decoder: tokens + caches -> logits of the last position.
 *
 * x = token_embedding[token] + positional_embedding[position]; per block
 * x += self_attn(ln(x)) over the self-KV cache, x += cross_attn(ln(x)) over the
 * cross-KV cache, x += mlp(ln(x)); logits = ln(x_last) . token_embedding^T.
 * Several new tokens (a prompt) go through in one batched pass. */
#include "context.h"
#include "ops.h"

#include <stdlib.h>
#include <string.h>

int wkv_decoder_alloc(wkv_context *ctx)
{
    const wkv_hparams *hp = &ctx->model->hp;
    size_t d = (size_t)hp->n_text_state, rows = (size_t)hp->n_text_ctx;
    size_t kv = (size_t)(hp->n_text_ctx > hp->n_audio_ctx ? hp->n_text_ctx : hp->n_audio_ctx);
    if (wkv_cross_kv_init(&ctx->cross, hp->n_text_layer, hp->n_audio_ctx, (int)d) ||
        wkv_self_kv_init(&ctx->self, hp->n_text_layer, hp->n_text_ctx, (int)d))
        return -1;
    float **bufs[] = {&ctx->dec_x, &ctx->dec_h, &ctx->dec_q, &ctx->dec_k, &ctx->dec_v,
                      &ctx->dec_att};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (!(*bufs[i] = malloc(rows * d * sizeof(float))))
            return -1;
    ctx->dec_mlp = malloc(rows * 4 * d * sizeof(float));
    ctx->dec_scores = malloc(rows * kv * sizeof(float));
    ctx->logits = malloc((size_t)hp->n_vocab * sizeof(float));
    return ctx->dec_mlp && ctx->dec_scores && ctx->logits ? 0 : -1;
}

void wkv_decode_reset(wkv_context *ctx)
{
    ctx->self.n = 0;
}

int wkv_decode_length(const wkv_context *ctx)
{
    return ctx->self.n;
}

/* One pass over n new tokens at positions [p0, p0 + n), appending to the self-KV
 * cache; the last row's logits go to `logits` when not NULL. */
static void forward(wkv_context *ctx, const int *tokens, int n, float *logits)
{
    const wkv_model *m = ctx->model;
    const wkv_weights *w = &m->w;
    const int d = m->hp.n_text_state, n_head = m->hp.n_text_head;
    const int p0 = ctx->self.n, n_audio = ctx->cross.n_ctx;
    float *x = ctx->dec_x, *h = ctx->dec_h;

    for (int i = 0; i < n; i++) {
        const float *te = w->tok_emb + (size_t)tokens[i] * d;
        const float *pe = w->dec_pos + (size_t)(p0 + i) * d;
        for (int j = 0; j < d; j++)
            x[(size_t)i * d + j] = te[j] + pe[j];
    }
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        const wkv_layer *L = &w->dec[l];
        float *kc = wkv_self_k(&ctx->self, l) + (size_t)p0 * d;
        float *vc = wkv_self_v(&ctx->self, l) + (size_t)p0 * d;

        /* self-attention: the new rows' K and V go straight into the cache */
        wkv_layer_norm(x, h, n, d, L->attn_ln_w, L->attn_ln_b);
        wkv_linear(h, n, d, L->attn_q_w, L->attn_q_b, d, ctx->dec_q);
        wkv_linear(h, n, d, L->attn_k_w, NULL, d, kc);
        wkv_linear(h, n, d, L->attn_v_w, L->attn_v_b, d, vc);
        wkv_attention(ctx->dec_q, wkv_self_k(&ctx->self, l), wkv_self_v(&ctx->self, l), n,
                      p0 + n, d, n_head, p0, ctx->dec_scores, ctx->dec_att);
        wkv_linear_add(ctx->dec_att, n, d, L->attn_o_w, L->attn_o_b, d, x);

        /* cross-attention over the window's cached K and V */
        wkv_layer_norm(x, h, n, d, L->cross_ln_w, L->cross_ln_b);
        wkv_linear(h, n, d, L->cross_q_w, L->cross_q_b, d, ctx->dec_q);
        wkv_attention(ctx->dec_q, wkv_cross_k(&ctx->cross, l), wkv_cross_v(&ctx->cross, l), n,
                      n_audio, d, n_head, -1, ctx->dec_scores, ctx->dec_att);
        wkv_linear_add(ctx->dec_att, n, d, L->cross_o_w, L->cross_o_b, d, x);

        wkv_layer_norm(x, h, n, d, L->mlp_ln_w, L->mlp_ln_b);
        wkv_linear(h, n, d, L->mlp0_w, L->mlp0_b, 4 * d, ctx->dec_mlp);
        wkv_gelu(ctx->dec_mlp, (size_t)n * 4 * d);
        wkv_linear_add(ctx->dec_mlp, n, 4 * d, L->mlp2_w, L->mlp2_b, d, x);
    }
    memmove(ctx->self.tokens + p0, tokens, (size_t)n * sizeof *tokens); /* may alias */
    ctx->self.n = p0 + n;
    ctx->pass_p0 = p0;
    ctx->pass_n = n;
    ctx->stats.decoder_passes++;
    ctx->stats.tokens_decoded += n;
    if (logits)
        wkv_decoder_logits_at(ctx, p0 + n - 1, logits);
}

int wkv_decoder_logits_at(wkv_context *ctx, int pos, float *logits)
{
    const wkv_model *m = ctx->model;
    const int d = m->hp.n_text_state;
    if (pos < ctx->pass_p0 || pos >= ctx->pass_p0 + ctx->pass_n)
        return -1;
    const float *row = ctx->dec_x + (size_t)(pos - ctx->pass_p0) * d;
    float *h = ctx->dec_h; /* scratch once a pass is over */
    wkv_layer_norm(row, h, 1, d, m->w.dec_ln_w, m->w.dec_ln_b);
    wkv_linear(h, 1, d, m->w.tok_emb, NULL, m->hp.n_vocab, logits);
    return 0;
}

int wkv_decode(wkv_context *ctx, const int *tokens, int n, wkv_cache_mode mode,
               float *logits)
{
    const wkv_hparams *hp = &ctx->model->hp;
    if (n <= 0 || ctx->self.n + n > hp->n_text_ctx || !ctx->cross.valid)
        return -1;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return -1;
    double t0 = wkv_now_ms();
    if (mode != WKV_CACHE_FULL) {
        /* the slow paths: cross K/V projected again for this pass */
        wkv_cross_kv_fill(&ctx->cross, ctx->model, ctx->enc_out);
        ctx->stats.cross_kv_computes++;
    }
    if (mode == WKV_CACHE_NONE && ctx->self.n > 0) {
        /* recompute the whole sequence: old tokens then the new ones */
        int total = ctx->self.n + n;
        int *all = ctx->self.tokens; /* rows [0, n) are rewritten in place */
        memcpy(all + ctx->self.n, tokens, (size_t)n * sizeof *tokens);
        ctx->self.n = 0;
        forward(ctx, all, total, logits);
    } else {
        forward(ctx, tokens, n, logits);
    }
    ctx->stats.decode_ms += wkv_now_ms() - t0;
    return 0;
}
