/* The CPU backend's encoder run (cpu.h): mel (n_mels x 2*n_ctx) -> conv1 -> GELU
 * -> conv2 (stride 2) -> GELU -> + positional embedding -> pre-norm attention/MLP
 * blocks -> ln_post.
 * Activations are row-major [frame][channel]; convolutions are im2col + sgemm.
 *
 * Threads: every stage is split over the context's pool by rows (frames), and each
 * part runs single-threaded sgemm on its rows, so the row-wise work between matrix
 * products (bias, GELU, layer norm, residual) happens while the part's rows are
 * still in its core's cache, and no BLAS threads spin while ours work.  Attention is
 * split by (head, block of queries): a part's scores for one block fit in L2. */
#include "cpu/cpu.h"
#include "model/quant.h"
#include "model/widen.h"
#include "kernels/ops.h"
#include "base/sgemm.h"
#include "base/util.h"

#include <math.h>
#include <string.h>

/* cols[t - t0][c*3 + k] = in(channel c, frame stride*t + k - 1), zero outside, for
 * output frames t in [t0, t1).  `in` is read through (frame, channel) strides so one
 * routine serves both the channel-major mel and the frame-major conv1 output. */
static void im2col(const float *in, int n_in_frames, size_t frame_stride, size_t chan_stride,
                   int n_chan, int stride, int t0, int t1, float *cols)
{
    for (int t = t0; t < t1; t++) {
        float *row = cols + (size_t)(t - t0) * n_chan * 3;
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

/* The matrices a job's products use: the layer's six (q, k, v, then o, mlp0, mlp2, each
 * group in that order from the start of ctx->enc_wl), then the two convolutions (as
 * stored: f32, or f16 widened into enc_wl before the first layer). */
enum { M_Q, M_K, M_V, M_O, M_MLP0, M_MLP2, M_CONV1, M_CONV2, N_MATS };

typedef struct {
    wkv__cpu *ctx;
    const float *mel;
    const wkv__layer *L;
    int n_out[N_MATS], n_in[N_MATS];
    wkv__widen wide;                /* the matrices' f32 values (widen.h) */
    const wkv__cweight *cw[N_MATS]; /* the compute type's copies, or NULL: f32 */
} enc_job;

static void job_set(enc_job *j, int i, const wkv__mat *v, int n_out, int n_in, float *slot)
{
    j->n_out[i] = n_out;
    j->n_in[i] = n_in;
    wkv__widen_set(&j->wide, i, v, (size_t)n_out * n_in, slot);
}

static void job_init(enc_job *j, wkv__cpu *ctx, const float *mel)
{
    const wkv_model *m = ctx->model;
    const int d = m->hp.n_audio_state;
    memset(j, 0, sizeof *j);
    j->ctx = ctx;
    j->mel = mel;
    wkv__widen_init(&j->wide, N_MATS, &ctx->widen_lock);
    float *slot = ctx->enc_wl; /* NULL when both are stored f32 */
    job_set(j, M_CONV1, &m->w.conv1, d, m->hp.n_mels * 3, slot);
    job_set(j, M_CONV2, &m->w.conv2, d, d * 3, slot ? slot + (size_t)d * 3 * m->hp.n_mels : NULL);
    j->cw[M_CONV1] = wkv__compute_weight(ctx->compute, m->w.conv1.data, d, j->n_in[M_CONV1]);
    j->cw[M_CONV2] = wkv__compute_weight(ctx->compute, m->w.conv2.data, d, j->n_in[M_CONV2]);
    if (!ctx->compute)
        wkv__widen_all(&j->wide, ctx->pool);
}

/* layer L's six matrices in M_ order, with their shapes */
static void layer_mats(const wkv__layer *L, int d, const wkv__mat *v[6], int n_out[6], int n_in[6])
{
    const wkv__mat *m[6] = {&L->attn_q, &L->attn_k, &L->attn_v, &L->attn_o, &L->mlp0, &L->mlp2};
    for (int i = 0; i < 6; i++) {
        v[i] = m[i];
        n_out[i] = i == M_MLP0 ? 4 * d : d;
        n_in[i] = i == M_MLP2 ? 4 * d : d;
    }
}

/* Matrices [first, last) of layer L's six into the job, one after the other from the
 * start of enc_wl, and the others' entries cleared (their slots are reused); f32
 * products need them widened now, over the pool.  Three groups take turns in enc_wl:
 * q, k, v before the attention, o after it, then the MLP's two (3, 1 and 8 d x d
 * instead of 12 at once). */
static void job_group(enc_job *j, int first, int last)
{
    wkv__cpu *ctx = j->ctx;
    const wkv__mat *v[6];
    int n_out[6], n_in[6];
    layer_mats(j->L, ctx->model->hp.n_audio_state, v, n_out, n_in);
    float *slot = ctx->enc_wl;
    for (int i = 0; i < 6; i++) {
        if (i < first || i >= last) {
            wkv__widen_clear(&j->wide, i);
            continue;
        }
        job_set(j, i, v[i], n_out[i], n_in[i], slot);
        if (slot)
            slot += (size_t)n_out[i] * n_in[i];
    }
    if (!ctx->compute)
        wkv__widen_all(&j->wide, ctx->pool);
}

/* Layer L into the job, before its attention: q, k, v widened (f32 products), or the
 * whole layer converted into the compute type's scratch (the only copy of the weights
 * in that type; widening is then left to a product that falls back). */
static void job_layer(enc_job *j, const wkv__layer *L)
{
    wkv__cpu *ctx = j->ctx;
    j->L = L;
    /* the convolutions are done: enc_wl is the layers' now */
    wkv__widen_clear(&j->wide, M_CONV1);
    wkv__widen_clear(&j->wide, M_CONV2);
    job_group(j, M_Q, M_O);
    if (ctx->compute) {
        const wkv__mat *v[6];
        int n_out[6], n_in[6];
        layer_mats(L, ctx->model->hp.n_audio_state, v, n_out, n_in);
        wkv__compute_convert(ctx->compute, ctx->pool, 6, v, n_out, n_in, j->cw);
    }
}

/* Rows r0 .. r1 of a linear layer on the compute type's copy of matrix i, else in f32;
 * flags as wkv__compute_linear's (the f32 path honors GELU only). */
static void enc_linear(enc_job *j, int i, int part, const float *x, int r0, int r1,
                       const float *b, float *out, int accumulate, int flags)
{
    if (j->cw[i] && wkv__compute_linear(j->ctx->compute, part, x, r0, r1, j->n_in[i], j->cw[i], b,
                                       j->n_out[i], out, accumulate, flags) == 0)
        return;
    wkv__linear_rows(x, r0, r1, j->n_in[i], wkv__widen_get(&j->wide, i), b, j->n_out[i], out,
                    accumulate);
    if (flags & WKV_LIN_GELU)
        wkv__gelu(out + (size_t)r0 * j->n_out[i], (size_t)(r1 - r0) * j->n_out[i]);
}

/* This part's im2col block (context.c sizes it for either convolution). */
static float *conv_block(const wkv__cpu *ctx, int part)
{
    return ctx->enc_cols + (size_t)part * WKV_ENC_CONV_ROWS * wkv__enc_cols_width(&ctx->model->hp);
}

/* conv1 + GELU for frames of [part]: mel -> enc_mlp (2T x d, idle until the first
 * block's MLP), a block at a time. */
static void conv1_part(void *arg, int part, int n_parts)
{
    enc_job *j = arg;
    wkv__cpu *ctx = j->ctx;
    const wkv_model *m = ctx->model;
    const int d = m->hp.n_audio_state, n_mels = m->hp.n_mels, T2 = 2 * m->hp.n_audio_ctx;
    int r0, r1;
    wkv__pool_share(T2, part, n_parts, &r0, &r1);
    float *cols = conv_block(ctx, part);
    for (int b0 = r0; b0 < r1; b0 += WKV_ENC_CONV_ROWS) {
        int b1 = r1 - b0 < WKV_ENC_CONV_ROWS ? r1 : b0 + WKV_ENC_CONV_ROWS;
        float *out = ctx->enc_mlp + (size_t)b0 * d;
        im2col(j->mel, T2, 1, WKV_N_FRAMES, n_mels, 1, b0, b1, cols);
        enc_linear(j, M_CONV1, part, cols, 0, b1 - b0, m->w.conv1_b, out, 0, WKV_LIN_GELU);
    }
}

/* conv2 (stride 2) + GELU + positional embedding for frames of [part]: enc_mlp (2T
 * frames) -> enc_h -> enc_x (T frames).  The output goes through enc_h because other
 * parts still read the conv1 frames it would overwrite. */
static void conv2_part(void *arg, int part, int n_parts)
{
    enc_job *j = arg;
    wkv__cpu *ctx = j->ctx;
    const wkv_model *m = ctx->model;
    const int d = m->hp.n_audio_state, T = m->hp.n_audio_ctx;
    int r0, r1;
    wkv__pool_share(T, part, n_parts, &r0, &r1);
    float *cols = conv_block(ctx, part);
    for (int b0 = r0; b0 < r1; b0 += WKV_ENC_CONV_ROWS) {
        int b1 = r1 - b0 < WKV_ENC_CONV_ROWS ? r1 : b0 + WKV_ENC_CONV_ROWS;
        float *out = ctx->enc_h + (size_t)b0 * d;
        im2col(ctx->enc_mlp, 2 * T, d, 1, d, 2, b0, b1, cols);
        enc_linear(j, M_CONV2, part, cols, 0, b1 - b0, m->w.conv2_b, out, 0, WKV_LIN_GELU);
    }
}

/* x = h + positional embedding (after every part's conv2 read the conv1 frames). */
static void pos_part(void *arg, int part, int n_parts)
{
    enc_job *j = arg;
    wkv__cpu *ctx = j->ctx;
    const wkv_model *m = ctx->model;
    const size_t n = (size_t)m->hp.n_audio_ctx * (size_t)m->hp.n_audio_state;
    size_t a = n * (size_t)part / (size_t)n_parts, b = n * (size_t)(part + 1) / (size_t)n_parts;
    for (size_t i = a; i < b; i++)
        ctx->enc_x[i] = ctx->enc_h[i] + m->w.enc_pos[i];
}

/* The frames [*r0, *r1) of pool part `part`; 0 when it has none. */
static int frame_rows(const wkv__cpu *ctx, int part, int n_parts, int *r0, int *r1)
{
    wkv__pool_share(ctx->model->hp.n_audio_ctx, part, n_parts, r0, r1);
    return *r1 > *r0;
}

/* dst rows r0 .. r1 = LN(enc_x rows) with weights w, b. */
static void ln_rows(const wkv__cpu *ctx, float *dst, int r0, int r1, const float *w,
                    const float *b)
{
    const int d = ctx->model->hp.n_audio_state;
    wkv__layer_norm(ctx->enc_x + (size_t)r0 * d, dst + (size_t)r0 * d, r1 - r0, d, w, b);
}

/* Attention's input side for rows of [part]: h = LN(x); q, k, v = h . W^T + b. */
static void qkv_part(void *arg, int part, int n_parts)
{
    enc_job *j = arg;
    wkv__cpu *ctx = j->ctx;
    const wkv__layer *L = j->L;
    int r0, r1;
    if (!frame_rows(ctx, part, n_parts, &r0, &r1))
        return;
    ln_rows(ctx, ctx->enc_h, r0, r1, L->attn_ln_w, L->attn_ln_b);
    enc_linear(j, M_Q, part, ctx->enc_h, r0, r1, L->attn_q_b, ctx->enc_q, 0, 0);
    /* k and v read the rows q just converted */
    enc_linear(j, M_K, part, ctx->enc_h, r0, r1, NULL, ctx->enc_k, 0, WKV_LIN_SAME_X);
    enc_linear(j, M_V, part, ctx->enc_h, r0, r1, L->attn_v_b, ctx->enc_v, 0, WKV_LIN_SAME_X);
    if (ctx->compute)
        wkv__compute_kv_rows(ctx->compute, ctx->enc_k, ctx->enc_v, r0, r1,
                            ctx->model->hp.n_audio_state);
}

/* Self-attention over the whole window for the (head, query block) tasks of [part]:
 * scores = q_blk k^T / sqrt(hd) -> softmax -> att_blk = scores v. */
static void attention_part(void *arg, int part, int n_parts)
{
    enc_job *j = arg;
    wkv__cpu *ctx = j->ctx;
    const wkv_hparams *hp = &ctx->model->hp;
    const int d = hp->n_audio_state, T = hp->n_audio_ctx, n_head = hp->n_audio_head;
    const int hd = d / n_head, n_blk = (T + WKV_ENC_QBLOCK - 1) / WKV_ENC_QBLOCK;
    const int blk = (T + n_blk - 1) / n_blk; /* equal blocks: 6 x 250 rather than 5 x 256 + 220 */
    /* the reference scales q and k by hd^-1/4 each: the same as scores by hd^-1/2 */
    const float scale = 1.0f / sqrtf((float)hd);
    float *scores = ctx->enc_scores + (size_t)part * WKV_ENC_QBLOCK * T;
    int t0, t1;
    wkv__pool_share(n_head * n_blk, part, n_parts, &t0, &t1);
    for (int t = t0; t < t1; t++) {
        int h = t / n_blk, q0 = (t % n_blk) * blk;
        int nq = T - q0 < blk ? T - q0 : blk;
        if (nq <= 0) /* ceil-sized blocks run out early only past 65536 frames */
            continue;
        const float *qh = ctx->enc_q + (size_t)q0 * d + h * hd;
        if (!ctx->compute ||
            wkv__compute_scores(ctx->compute, part, qh, nq, d, hd, h, T, scale, scores) != 0)
            wkv__sgemm(1, nq, T, hd, scale, qh, d,
                        ctx->enc_k + h * hd, d, 0.0f, scores, T);
        float inv[WKV_ENC_QBLOCK];
        float *out = ctx->enc_q + (size_t)q0 * d + h * hd; /* over the q just read */
        if (!ctx->compute ||
            wkv__compute_context(ctx->compute, part, scores, nq, T, d, hd, h, inv, out) != 0) {
            for (int i = 0; i < nq; i++) {
                float sum = wkv__softmax_exp(scores + (size_t)i * T, T, NULL);
                inv[i] = sum > 0.0f ? 1.0f / sum : 0.0f;
            }
            wkv__sgemm(0, nq, hd, T, 1.0f, scores, T,
                        ctx->enc_v + h * hd, d, 0.0f, out, d);
        }
        /* softmax's normalization on the hd outputs of a row instead of its T scores */
        for (int i = 0; i < nq; i++)
            for (int c = 0; c < hd; c++)
                out[(size_t)i * d + c] *= inv[i];
    }
}

/* The attention's output projection for rows of [part]: x += att . Wo^T + bo, then
 * h = LN(x) for the MLP while the rows are in cache. */
static void out_part(void *arg, int part, int n_parts)
{
    enc_job *j = arg;
    wkv__cpu *ctx = j->ctx;
    const wkv__layer *L = j->L;
    int r0, r1;
    if (!frame_rows(ctx, part, n_parts, &r0, &r1))
        return;
    enc_linear(j, M_O, part, ctx->enc_q, r0, r1, L->attn_o_b, ctx->enc_x, 1, 0);
    ln_rows(ctx, ctx->enc_h, r0, r1, L->mlp_ln_w, L->mlp_ln_b);
}

/* x += MLP(h) for rows of [part], in two blocks of rows (wkv__enc_mlp_rows) through
 * this part's share of enc_mlp, with the MLP's GELU applied while the rows are in
 * cache. */
static void mlp_part(void *arg, int part, int n_parts)
{
    enc_job *j = arg;
    wkv__cpu *ctx = j->ctx;
    const wkv__layer *L = j->L;
    const int d = ctx->model->hp.n_audio_state;
    int r0, r1;
    if (!frame_rows(ctx, part, n_parts, &r0, &r1))
        return;
    const int blk = wkv__enc_mlp_rows(ctx->model->hp.n_audio_ctx, n_parts);
    float *mlp = ctx->enc_mlp + (size_t)part * blk * 4 * d;
    for (int b0 = r0; b0 < r1; b0 += blk) {
        int n = r1 - b0 < blk ? r1 - b0 : blk;
        /* the GELU, and on a compute type its rows' conversion for the second
         * product, row by row as the first product's rows are finished */
        enc_linear(j, M_MLP0, part, ctx->enc_h + (size_t)b0 * d, 0, n, L->mlp0_b, mlp, 0,
                   WKV_LIN_GELU | WKV_LIN_KEEP);
        enc_linear(j, M_MLP2, part, mlp, 0, n, L->mlp2_b, ctx->enc_x + (size_t)b0 * d, 1,
                   WKV_LIN_SAME_X);
    }
}

static void ln_post_part(void *arg, int part, int n_parts)
{
    const wkv__cpu *ctx = ((enc_job *)arg)->ctx;
    int r0, r1;
    if (frame_rows(ctx, part, n_parts, &r0, &r1))
        ln_rows(ctx, ctx->enc_out, r0, r1, ctx->model->w.enc_ln_w, ctx->model->w.enc_ln_b);
}

/* A stage over the pool, its time added to *ms (wkv_stats' enc_*_ms); NULL fn: none. */
static double stage(enc_job *j, wkv__task_fn fn, double t0, double *ms)
{
    if (fn)
        wkv__pool_run(j->ctx->pool, fn, j);
    double t1 = wkv__now_ms();
    *ms += t1 - t0;
    return t1;
}

int wkv__cpu_run(wkv__encoder *e, const float *mel, float *out, wkv_stats *st)
{
    wkv__cpu *ctx = (wkv__cpu *)e;
    const wkv_model *m = ctx->model;
    enc_job job;
    double t = wkv__now_ms();
    ctx->enc_out = out;
    job_init(&job, ctx, mel);
    t = stage(&job, NULL, t, &st->enc_weights_ms);
    wkv__pool_run(ctx->pool, conv1_part, &job);
    wkv__pool_run(ctx->pool, conv2_part, &job);
    t = stage(&job, pos_part, t, &st->enc_conv_ms);
    for (int l = 0; l < m->hp.n_audio_layer; l++) {
        job_layer(&job, &m->w.enc[l]);
        t = stage(&job, NULL, t, &st->enc_weights_ms);
        t = stage(&job, qkv_part, t, &st->enc_qkv_ms);
        t = stage(&job, attention_part, t, &st->enc_attention_ms);
        /* o over q, k, v in enc_wl, then mlp0 and mlp2 over it: in turns on a compute
         * type too, whose products widen only when one falls back, into the same
         * slots (8 d x d would not hold o, mlp0 and mlp2 at once) */
        job_group(&job, M_O, M_MLP0);
        t = stage(&job, NULL, t, &st->enc_weights_ms);
        t = stage(&job, out_part, t, &st->enc_out_ms);
        job_group(&job, M_MLP0, M_CONV1);
        t = stage(&job, NULL, t, &st->enc_weights_ms);
        t = stage(&job, mlp_part, t, &st->enc_mlp_ms);
    }
    stage(&job, ln_post_part, t, &st->enc_mlp_ms);
    return 0;
}
