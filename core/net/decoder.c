/* Decoder: tokens + caches -> logits of the last position.
 *
 * x = token_embedding[token] + positional_embedding[position]; per block
 * x += self_attn(ln(x)) over the self-KV cache, x += cross_attn(ln(x)) over the
 * cross-KV cache, x += mlp(ln(x)); logits = ln(x_last) . token_embedding^T.
 * Several new tokens (a prompt) go through in one batched pass.
 *
 * The per-token matrices are typed (wkv__mat): f32, f16 (as an f16 file stores them, or
 * rounded from f32 by weights.c) or the blocks of a quantized file.  Up to 8 rows at a
 * time (single steps, beams) go through the kernels of gemv_f16.c / gemv_q.c, which
 * read the weights as stored; larger passes (a prompt) widen each matrix into a
 * scratch buffer and use sgemm. */
#include "net/context.h"
#include "base/util.h"
#include "kernels/gemv_f16.h"
#include "kernels/gemv_q.h"
#include "kernels/ops.h"
#include "model/quant.h"

#include <stdlib.h>
#include <string.h>

/* A pass widens one f16/quantized matrix (4d x d at most) into the encoder's MLP
 * buffer, idle while decoding, if it is large enough; else after dec_mlp. */
static int wide_in_enc_mlp(const wkv_context *ctx, size_t d)
{
    return ctx->enc_mlp && ctx->enc_mlp_floats >= 4 * d * d;
}

/* the floats of each of the decoder's arena buffers, in arena order: six of
 * n_text_ctx x d, dec_mlp (+ dec_wide's 4d x d when enc_mlp cannot hold it), dec_scores */
static void dec_sizes(const wkv_context *ctx, size_t n[8])
{
    const wkv_hparams *hp = &ctx->model->hp;
    size_t d = (size_t)hp->n_text_state, rows = (size_t)hp->n_text_ctx;
    size_t kv = (size_t)(hp->n_text_ctx > hp->n_audio_ctx ? hp->n_text_ctx : hp->n_audio_ctx);
    const size_t wide = wide_in_enc_mlp(ctx, d) ? 0 : 4 * d * d;
    for (int i = 0; i < 6; i++)
        n[i] = wkv__arena_round(rows * d);
    n[6] = wkv__arena_round(rows * 4 * d + wide);
    n[7] = wkv__arena_round(rows * kv);
}

size_t wkv__decoder_arena_floats(const wkv_context *ctx)
{
    size_t n[8], sum = 0;
    dec_sizes(ctx, n);
    for (int i = 0; i < 8; i++)
        sum += n[i];
    return sum;
}

int wkv__decoder_alloc(wkv_context *ctx)
{
    const wkv_hparams *hp = &ctx->model->hp;
    size_t d = (size_t)hp->n_text_state, rows = (size_t)hp->n_text_ctx;
    if (wkv__cross_kv_init(&ctx->cross, hp->n_text_layer, hp->n_audio_ctx, (int)d) ||
        wkv__self_kv_init(&ctx->self, hp->n_text_layer, hp->n_text_ctx, (int)d))
        return -1;
    size_t n[8];
    dec_sizes(ctx, n);
    float **bufs[8] = {&ctx->dec_x, &ctx->dec_h, &ctx->dec_q, &ctx->dec_k, &ctx->dec_v,
                       &ctx->dec_att, &ctx->dec_mlp, &ctx->dec_scores};
    float *p = ctx->arena;
    for (int i = 0; i < 8; i++) {
        *bufs[i] = p;
        p += n[i];
    }
    ctx->dec_wide = wide_in_enc_mlp(ctx, d) ? ctx->enc_mlp : ctx->dec_mlp + rows * 4 * d;
    ctx->logits = wkv__alloc_zeroed((size_t)hp->n_vocab * sizeof(float));
    /* a greedy window takes at most n_text_ctx steps (search.c stops past the context) */
    ctx->step_margins = wkv__alloc_zeroed((rows + 1) * sizeof(float));
    ctx->activation_bytes += ((size_t)hp->n_vocab + rows + 1) * sizeof(float);
    return ctx->logits && ctx->step_margins ? 0 : -1;
}

void wkv_decode_reset(wkv_context *ctx)
{
    for (int i = 0; i < ctx->self.n_slots; i++)
        ctx->self.n[i] = 0;
}

int wkv_decode_length(const wkv_context *ctx)
{
    return ctx->self.n[0];
}

/* Row `row` of a typed matrix of `in` columns, as floats. */
static void mat_row(wkv__mat W, int in, int row, float *dst)
{
    const size_t n = (size_t)in;
    const uint8_t *src = (const uint8_t *)W.data + wkv__type_bytes(W.type, (size_t)row * n);
    wkv__row_to_f32(W.type, src, dst, n);
}

/* Adds token embedding and the positional embedding of `pos` into row x. */
static void embed(const wkv__weights *w, int d, int token, int pos, float *x)
{
    const float *pe = w->dec_pos + (size_t)pos * d;
    mat_row(w->tok, d, token, x);
    for (int j = 0; j < d; j++)
        x[j] += pe[j];
}

/* y (rows x out) (+)= x (rows x in) . W^T + bias.  Few rows (steps, beams) and the
 * logits go through the f16 or block kernels, which read the matrix as stored; a
 * prompt's many rows widen it once into dec_wide (4d x d) and use sgemm.  (dec_wide
 * may be enc_mlp, which also holds a half cache's widened layer: a widened matrix is
 * used up before the attention that widens a layer, and the layer before the next
 * dense, so they never overlap.) */
static void dense(wkv_context *ctx, const float *x, int rows, int in, wkv__mat W,
                  const float *bias, int out, float *y, int accumulate)
{
    const size_t d = (size_t)ctx->model->hp.n_text_state;
    const float *w32 = W.data;
    if (W.type != WKV_TYPE_F32 && (rows <= 8 || (size_t)out * (size_t)in > 4 * d * d)) {
        if (W.type == WKV_TYPE_F16)
            wkv__gemv_f16(ctx->pool, x, rows, in, W.data, bias, out, y, accumulate);
        else
            wkv__gemv_q(ctx->pool, W.type, x, rows, in, W.data, bias, out, y, accumulate);
        return;
    }
    if (W.type != WKV_TYPE_F32) { /* many rows: sgemm on the matrix widened once */
        float *wide = ctx->dec_wide;
        wkv__row_to_f32(W.type, W.data, wide, (size_t)out * (size_t)in);
        w32 = wide;
    }
    if (accumulate)
        wkv__linear_add(ctx->pool, x, rows, in, w32, bias, out, y);
    else
        wkv__linear(ctx->pool, x, rows, in, w32, bias, out, y);
}

/* Cross-attention of rows [0, n) (queries in dec_q) over one window's cached K/V,
 * into dec_att's rows. */
static void cross_attend(wkv_context *ctx, const wkv__cross_kv *c, int l, int r0, int n)
{
    const wkv_model *m = ctx->model;
    const int d = m->hp.n_text_state, n_head = m->hp.n_text_head;
    const float *q = ctx->dec_q + (size_t)r0 * d;
    float *att = ctx->dec_att + (size_t)r0 * d;
    if (wkv__cross_half(c) && !ctx->cross_hook && wkv__attention_f16_ok(n, n_head, d)) {
        wkv__attention_f16(ctx->pool, q, wkv__cross_k16(c, l), wkv__cross_v16(c, l), n,
                          c->n_frames, d, n_head, ctx->dec_scores, att);
    } else { /* f32; or a half layer widened once: a pass of many rows, alignment */
        const float *k, *v;
        wkv__cross_layer_f32(c, l, ctx->enc_mlp, ctx->pool, &k, &v);
        if (ctx->cross_hook)
            ctx->cross_hook(ctx->cross_hook_user, l, q, k, n);
        wkv__attention(ctx->pool, q, k, v, n, c->n_frames, d, n_head, -1, ctx->dec_scores, att);
    }
}

/* The block's layers after self-attention's output was added: cross-attention over
 * each row's window (rows: the batch's rows, each with its own window, or NULL: all n
 * rows over the context's) and the MLP, for n rows at once. */
static void cross_and_mlp(wkv_context *ctx, const wkv__layer *L, int l, int n,
                          const wkv__dec_row *rows)
{
    const wkv_model *m = ctx->model;
    const int d = m->hp.n_text_state;
    float *x = ctx->dec_x, *h = ctx->dec_h;
    wkv__layer_norm(x, h, n, d, L->cross_ln_w, L->cross_ln_b);
    dense(ctx, h, n, d, L->cross_q, L->cross_q_b, d, ctx->dec_q, 0);
    /* runs of rows on one window attend together (beams: all of them) */
    for (int r0 = 0, r1; r0 < n; r0 = r1) {
        const wkv__cross_kv *c = rows && rows[r0].cross ? rows[r0].cross : &ctx->cross;
        for (r1 = r0 + 1; r1 < n; r1++)
            if (rows && (rows[r1].cross ? rows[r1].cross : &ctx->cross) != c)
                break;
        cross_attend(ctx, c, l, r0, r1 - r0);
    }
    dense(ctx, ctx->dec_att, n, d, L->cross_o, L->cross_o_b, d, x, 1);

    wkv__layer_norm(x, h, n, d, L->mlp_ln_w, L->mlp_ln_b);
    dense(ctx, h, n, d, L->mlp0, L->mlp0_b, 4 * d, ctx->dec_mlp, 0);
    wkv__gelu(ctx->dec_mlp, (size_t)n * 4 * d);
    dense(ctx, ctx->dec_mlp, n, 4 * d, L->mlp2, L->mlp2_b, d, x, 1);
}

/* Query rows for positions [p0, p0 + n) (q: n x d) attend over the slot's layer rows
 * [0, p0 + n), row i seeing keys up to p0 + i (wkv__attention's causal_offset: p0, or
 * -1 for one row, which sees them all), into out (n x d). */
static void self_attend(wkv_context *ctx, const wkv__self_kv *kv, wkv__pool *pool, int slot,
                        int l, const float *q, int p0, int n, int causal, float *out)
{
    const int d = ctx->model->hp.n_text_state, n_head = ctx->model->hp.n_text_head;
    if (n == 1 && wkv__self_half(kv) && wkv__attention_f16_ok(1, n_head, d)) {
        /* one row sees every key: no mask, the halves widened as they stream by */
        wkv__attention_f16(pool, q, wkv__self_k16(kv, slot, l), wkv__self_v16(kv, slot, l), 1,
                          p0 + 1, d, n_head, ctx->dec_scores, out);
        return;
    }
    const float *K, *V; /* a half cache widened into the encoder's idle MLP buffer */
    wkv__self_layer_f32(kv, slot, l, p0 + n, ctx->enc_mlp, &K, &V);
    wkv__attention(pool, q, K, V, n, p0 + n, d, n_head, causal, ctx->dec_scores, out);
}

/* Self-attention of a pass's n new rows (h: their layer-normed input; q in dec_q):
 * their K and V go into the cache (straight there when it is f32), then attention. */
static void self_attention(wkv_context *ctx, int slot, int l, const float *h, int p0, int n)
{
    wkv__self_kv *kv = &ctx->self;
    const wkv__layer *L = &ctx->model->w.dec[l];
    const int d = ctx->model->hp.n_text_state;
    if (wkv__self_half(kv)) {
        dense(ctx, h, n, d, L->attn_k, NULL, d, ctx->dec_k, 0);
        dense(ctx, h, n, d, L->attn_v, L->attn_v_b, d, ctx->dec_v, 0);
        wkv__self_kv_put(kv, slot, l, p0, n, ctx->dec_k, ctx->dec_v);
    } else {
        dense(ctx, h, n, d, L->attn_k, NULL, d, wkv__self_k(kv, slot, l) + (size_t)p0 * d, 0);
        dense(ctx, h, n, d, L->attn_v, L->attn_v_b, d, wkv__self_v(kv, slot, l) + (size_t)p0 * d,
              0);
    }
    self_attend(ctx, kv, ctx->pool, slot, l, ctx->dec_q, p0, n, p0, ctx->dec_att);
}

/* One pass over n new tokens of one sequence (slot) at positions [p0, p0 + n),
 * appending to its self-KV cache; the last row's logits go to `logits` if not NULL. */
static void forward(wkv_context *ctx, int slot, const int *tokens, int n, float *logits)
{
    const wkv_model *m = ctx->model;
    const wkv__weights *w = &m->w;
    const int d = m->hp.n_text_state;
    wkv__self_kv *kv = &ctx->self;
    const int p0 = kv->n[slot];
    float *x = ctx->dec_x, *h = ctx->dec_h;

    for (int i = 0; i < n; i++)
        embed(w, d, tokens[i], p0 + i, x + (size_t)i * d);
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        const wkv__layer *L = &w->dec[l];
        wkv__layer_norm(x, h, n, d, L->attn_ln_w, L->attn_ln_b);
        dense(ctx, h, n, d, L->attn_q, L->attn_q_b, d, ctx->dec_q, 0);
        self_attention(ctx, slot, l, h, p0, n);
        dense(ctx, ctx->dec_att, n, d, L->attn_o, L->attn_o_b, d, x, 1);
        cross_and_mlp(ctx, L, l, n, NULL);
    }
    int *toks = kv->tokens + (size_t)slot * kv->n_ctx;
    memmove(toks + p0, tokens, (size_t)n * sizeof *tokens); /* may alias */
    kv->n[slot] = p0 + n;
    ctx->pass_p0 = p0;
    ctx->pass_n = n;
    ctx->stats.decoder_passes++;
    ctx->stats.tokens_decoded += n;
    if (logits)
        wkv__decoder_logits_at(ctx, p0 + n - 1, logits);
}

int wkv__decoder_logits_at(wkv_context *ctx, int pos, float *logits)
{
    return wkv__decoder_logits_rows(ctx, pos, 1, logits);
}

int wkv__decoder_logits_rows(wkv_context *ctx, int pos, int n, float *logits)
{
    const wkv_model *m = ctx->model;
    const int d = m->hp.n_text_state;
    if (n < 1 || n > 8 || pos < ctx->pass_p0 || pos + n > ctx->pass_p0 + ctx->pass_n)
        return -1;
    const float *rows = ctx->dec_x + (size_t)(pos - ctx->pass_p0) * d;
    float *h = ctx->dec_h; /* scratch once a pass is over */
    wkv__layer_norm(rows, h, n, d, m->w.dec_ln_w, m->w.dec_ln_b);
    dense(ctx, h, n, d, m->w.tok, NULL, m->hp.n_vocab, logits, 0);
    return 0;
}

int wkv__decoder_pass(wkv_context *ctx, const int *tokens, int n)
{
    const wkv_hparams *hp = &ctx->model->hp;
    if (n <= 0 || n > hp->n_text_ctx || !ctx->cross.valid)
        return -1;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return -1;
    ctx->self.n[0] = 0;
    forward(ctx, 0, tokens, n, NULL);
    return 0;
}

int wkv__decoder_rows(wkv_context *ctx, const wkv__dec_row *rows, int n_seq, float *logits)
{
    const wkv_model *m = ctx->model;
    const wkv__weights *w = &m->w;
    const int d = m->hp.n_text_state;
    float *x = ctx->dec_x, *h = ctx->dec_h;
    if (n_seq <= 0 || n_seq > m->hp.n_text_ctx)
        return -1;
    for (int b = 0; b < n_seq; b++) {
        const wkv__self_kv *kv = rows[b].self ? rows[b].self : &ctx->self;
        const wkv__cross_kv *c = rows[b].cross ? rows[b].cross : &ctx->cross;
        const int s = rows[b].slot, tok = rows[b].token;
        if (!c->valid || c->n_layer != m->hp.n_text_layer || kv->n_layer != m->hp.n_text_layer ||
            s < 0 || s >= kv->n_slots || kv->n[s] >= kv->n_ctx || tok < 0 ||
            tok >= m->hp.n_vocab)
            return -1;
        for (int a = 0; a < b; a++) /* two rows appending to one slot would collide */
            if (rows[a].slot == s && (rows[a].self ? rows[a].self : &ctx->self) == kv)
                return -1;
        embed(w, d, tok, kv->n[s], x + (size_t)b * d);
    }
    double t0 = wkv__now_ms();
    for (int l = 0; l < m->hp.n_text_layer; l++) {
        const wkv__layer *L = &w->dec[l];
        wkv__layer_norm(x, h, n_seq, d, L->attn_ln_w, L->attn_ln_b);
        dense(ctx, h, n_seq, d, L->attn_q, L->attn_q_b, d, ctx->dec_q, 0);
        dense(ctx, h, n_seq, d, L->attn_k, NULL, d, ctx->dec_k, 0);
        dense(ctx, h, n_seq, d, L->attn_v, L->attn_v_b, d, ctx->dec_v, 0);
        for (int b = 0; b < n_seq; b++) {
            /* each sequence appends its row and attends over its own history */
            wkv__self_kv *kv = rows[b].self ? rows[b].self : &ctx->self;
            const int s = rows[b].slot, p = kv->n[s];
            wkv__self_kv_put(kv, s, l, p, 1, ctx->dec_k + (size_t)b * d,
                            ctx->dec_v + (size_t)b * d);
            /* heads split over the pool once the history outweighs waking it */
            self_attend(ctx, kv, p >= 128 ? ctx->pool : NULL, s, l, ctx->dec_q + (size_t)b * d,
                        p, 1, -1, ctx->dec_att + (size_t)b * d);
        }
        dense(ctx, ctx->dec_att, n_seq, d, L->attn_o, L->attn_o_b, d, x, 1);
        cross_and_mlp(ctx, L, l, n_seq, rows);
    }
    for (int b = 0; b < n_seq; b++) {
        wkv__self_kv *kv = rows[b].self ? rows[b].self : &ctx->self;
        const int s = rows[b].slot;
        kv->tokens[(size_t)s * kv->n_ctx + kv->n[s]] = rows[b].token;
        kv->n[s]++;
    }
    ctx->pass_n = 0; /* rows are sequences, not positions */
    ctx->stats.decoder_passes++;
    ctx->stats.tokens_decoded += n_seq;
    if (logits) {
        wkv__layer_norm(x, h, n_seq, d, w->dec_ln_w, w->dec_ln_b);
        dense(ctx, h, n_seq, d, w->tok, NULL, m->hp.n_vocab, logits, 0);
    }
    ctx->stats.decode_ms += wkv__now_ms() - t0;
    return 0;
}

int wkv__decoder_batch(wkv_context *ctx, const int *slots, const int *tokens, int n_seq,
                      float *logits)
{
    wkv__dec_row rows[64]; /* beams and best-of candidates: 32 at most (search.c) */
    if (n_seq <= 0 || n_seq > 64)
        return -1;
    for (int b = 0; b < n_seq; b++)
        rows[b] = (wkv__dec_row){NULL, NULL, slots[b], tokens[b]};
    return wkv__decoder_rows(ctx, rows, n_seq, logits);
}

int wkv_decode_mode(wkv_context *ctx, const int *tokens, int n, wkv_cache_mode mode,
                    float *logits)
{
    const wkv_hparams *hp = &ctx->model->hp;
    wkv__self_kv *kv = &ctx->self;
    if (n <= 0 || kv->n[0] + n > hp->n_text_ctx || !ctx->cross.valid)
        return -1;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return -1;
    double t0 = wkv__now_ms();
    if (mode != WKV_CACHE_FULL) {
        /* the slow paths: cross K/V projected again for this pass */
        wkv__context_fill_cross(ctx);
    }
    if (mode == WKV_CACHE_NONE && kv->n[0] > 0) {
        /* recompute the whole sequence: old tokens then the new ones */
        int total = kv->n[0] + n;
        int *all = kv->tokens; /* slot 0's tokens; rewritten in place */
        memcpy(all + kv->n[0], tokens, (size_t)n * sizeof *tokens);
        kv->n[0] = 0;
        forward(ctx, 0, all, total, logits);
    } else {
        forward(ctx, 0, tokens, n, logits);
    }
    ctx->stats.decode_ms += wkv__now_ms() - t0;
    return 0;
}

int wkv_decode(wkv_context *ctx, const int *tokens, int n, float *logits)
{
    return wkv_decode_mode(ctx, tokens, n, WKV_CACHE_FULL, logits);
}
