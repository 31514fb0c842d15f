/* The decoding context: everything mutable one decoding thread needs, sized once
 * from the model (llama2.c's RunState). */
#ifndef WKV_CONTEXT_H
#define WKV_CONTEXT_H

#include "compute/compute.h"
#include "net/kv_cache.h"
#include "base/pool.h"

#include <pthread.h>

/* Queries per attention block in the encoder, at most.  Each block's two sgemm calls
 * pack the head's K and V again, so fewer, larger blocks pack less: 256 rows (a block's
 * scores 1.5 MB, past a 1-MB L2) measured 5 - 7 % faster on base's encoder than 64
 * (375 KiB, in L2), 128 in between (docs/performance.md). */
#define WKV_ENC_QBLOCK 128
/* Frames per im2col block of the convolutions: each part fills and multiplies its
 * frames a block at a time, so the im2col buffer is parts x this many rows instead of
 * every frame's (9 MB at base: 3 MB with two parts).  Not fewer rows: each block's
 * product packs the convolution's weights again. */
#define WKV_ENC_CONV_ROWS 256
/* The im2col block's row width: conv1 reads 3 mel frames, conv2 3 frames of d. */
static inline size_t wkv__enc_cols_width(const wkv_hparams *hp)
{
    size_t w1 = 3 * (size_t)hp->n_mels, w2 = 3 * (size_t)hp->n_audio_state;
    return w1 > w2 ? w1 : w2;
}
/* Rows per MLP block: each part runs the MLP on its rows in two halves, so the hidden
 * layer (4d wide) of all parts' blocks is about 2 T x d floats, the size the half
 * cross cache's stage needs anyway, instead of T x 4d (12 MB at base).  Two halves,
 * not more: every block's product packs the layer's weights again (blocks of 256
 * rows, three per part at base, looked about 2 % slower on f32, within the noise). */
static inline int wkv__enc_mlp_rows(int n_ctx, int n_parts)
{
    int per_part = (n_ctx + n_parts - 1) / n_parts;
    return (per_part + 1) / 2;
}

struct wkv_context {
    const wkv_model *model;
    int threads;
    wkv__pool *pool; /* threads - 1 workers for our own loops */
    wkv_stats stats;
    size_t activation_bytes; /* every buffer below except the caches */
    wkv_compute_type compute_type; /* never AUTO; F32: compute is NULL */
    wkv__compute *compute;          /* the encoder's products on bf16/int8 (compute.c) */
    wkv_cache_type cache_type;      /* as asked (AUTO: by compute type and file) */

    /* One buffer for two phases that never overlap: while encoding, the encoder's
     * scratch (enc_cols, enc_x, enc_h, enc_q, enc_k, enc_v, enc_scores); while
     * decoding, the decoder's activations (dec_x … dec_att, dec_mlp, dec_scores).
     * Nothing in it outlives its phase: an encode overwrites a pass's rows, so it
     * forgets the pass (pass_n = 0); a pass never reads the encoder's scratch (the
     * cross fill reads enc_out, enc_wl and enc_mlp, outside it).  Its size is the
     * larger phase's (context.c).  It starts on a 64-byte boundary, so every row the
     * kernels load whole vectors from is as aligned as its width allows (calloc's
     * large blocks start 16 bytes past one: with each AVX-512 load of x split over
     * two cache lines, 8 rows of a q8_0 product took 1.13 - 1.18x as long, AMD EPYC
     * Zen 3 and Intel Xeon). */
    float *arena;
    void *arena_raw; /* what to free */

    /* encoder activations for one window */
    float *enc_out;   /* n_audio_ctx x d: the last encoder output (kept while decoding) */
    float *enc_cols;  /* im2col blocks, per pool part: WKV_ENC_CONV_ROWS x max(3 n_mels, 3d) */
    float *enc_x, *enc_h, *enc_k, *enc_v; /* n_audio_ctx x d */
    float *enc_q;     /* n_audio_ctx x d: q, then attention's output in its place (each
                       * (head, block) task writes the slice of q it has consumed) */
    float *enc_mlp;   /* the MLP's hidden rows, per pool part wkv__enc_mlp_rows x 4d; at
                       * least 2 n_audio_ctx x d: conv1's 2 n_audio_ctx frames; between
                       * encoder runs a half cross cache's f32 stage (kv_cache.h); while
                       * decoding, a half cache's layer widened */
    size_t enc_mlp_floats;
    float *enc_scores; /* per pool part: WKV_ENC_QBLOCK x n_audio_ctx */
    float *enc_wl;    /* an encoder layer's q, k, v, then its o and MLP (encoder.c), or
                       * one decoder layer's cross-K/V projections, or the convolutions,
                       * widened to f32 (wkv__enc_wl_floats); NULL when all of
                       * those are stored f32; not resident with a compute type */
    pthread_mutex_t widen_lock; /* a compute type's fallback widening (widen.h) */

    /* the caches */
    wkv__cross_kv cross;
    wkv__self_kv self;

    /* decoder activations for up to n_text_ctx rows */
    float *dec_x, *dec_h, *dec_q, *dec_k, *dec_v, *dec_att; /* n_text_ctx x d */
    float *dec_mlp;    /* n_text_ctx x 4d (+ 4d x d: dec_wide, when enc_mlp is too small) */
    float *dec_wide;   /* a pass's f16/quantized matrix widened (4d x d at most): enc_mlp
                        * when it holds that (base and below), else dec_mlp's tail */
    float *dec_scores; /* n_text_ctx x max(n_text_ctx, n_audio_ctx) */
    float *logits;     /* n_vocab */
    float *step_margins; /* n_text_ctx + 1: the last greedy window's (whisperkv_debug.h) */
    int n_steps;
    int pass_p0, pass_n; /* positions covered by the last decoder pass (rows of dec_x) */
    int drafts;          /* greedy searches check a draft when given one (default 1) */
    wkv_decoder_group *group; /* greedy steps shared with other contexts (group.c) */
    /* set only during a word-alignment pass (align.c): sees every layer's
     * cross-attention queries and keys (f32); NULL otherwise, so decoding pays one
     * test per layer */
    void (*cross_hook)(void *user, int layer, const float *q, const float *k, int n);
    void *cross_hook_user;
};

/* d x d matrices enc_wl holds: the largest of an encoder layer's three groups, mlp0 +
 * mlp2 (4 + 4; q, k, v before them take 3, o 1) */
#define WKV_ENC_WL_MATS 8

/* enc_wl's floats: a layer's group, or the two convolutions widened before the first
 * layer (d x 3 n_mels + d x 3 d: less than 8 d x d but for n_mels > 5 d / 3, which
 * only a hand-made file has) */
static inline size_t wkv__enc_wl_floats(const wkv_hparams *hp)
{
    const size_t d = (size_t)hp->n_audio_state, conv = d * 3 * (size_t)hp->n_mels + d * 3 * d;
    return conv > WKV_ENC_WL_MATS * d * d ? conv : WKV_ENC_WL_MATS * d * d;
}

/* A buffer's floats rounded up to 64 bytes, so that every buffer carved from the
 * arena starts as aligned as the arena itself. */
static inline size_t wkv__arena_round(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* encoder.c */
int wkv__encoder_run(wkv_context *ctx, const float *mel);
/* The cross K/V cache projected from ctx->enc_out (valid afterwards), on the context's
 * compute type, as wkv_encode does after the encoder.  Here and not in context.c: the
 * decoder's slow paths call it, and context.c calls the decoder (check_layers.py: no
 * two files call each other). */
void wkv__context_fill_cross(wkv_context *ctx);
/* decoder.c */
/* The floats of ctx->arena the decoder's activations take. */
size_t wkv__decoder_arena_floats(const wkv_context *ctx);
/* The decoder's activations carved from ctx->arena (which must hold
 * wkv__decoder_arena_floats), its caches and small buffers allocated. */
int wkv__decoder_alloc(wkv_context *ctx);
/* Logits of position `pos` when the last pass covered it (its residual row is still
 * in dec_x); -1 otherwise. */
int wkv__decoder_logits_at(wkv_context *ctx, int pos, float *logits);
/* A fresh pass of n tokens (n <= n_text_ctx) from position 0 in slot 0, no logits
 * (the cross K/V of the current window must be valid).  0 or -1. */
int wkv__decoder_pass(wkv_context *ctx, const int *tokens, int n);
/* Logits of n <= 8 consecutive positions from pos of the last pass (n x n_vocab). */
int wkv__decoder_logits_rows(wkv_context *ctx, int pos, int n, float *logits);
/* One row of a batched decoder step: a sequence's next token, the self-KV slot it
 * appends to and the window it attends over.  Rows of one step may belong to
 * different windows (offline batching: batch.c) and different self caches (contexts
 * of streams sharing a model); NULL means the context's own. */
typedef struct {
    const wkv__cross_kv *cross;
    wkv__self_kv *self;
    int slot, token;
} wkv__dec_row;
/* One decoder step for n rows in one pass: every weight is read once for all of them
 * (the products are over n rows), each row attends over its own caches; ctx's buffers
 * and pool do the work.  Two rows may not share a slot of one cache.  logits: n x
 * n_vocab (may be NULL).  0 or -1. */
int wkv__decoder_rows(wkv_context *ctx, const wkv__dec_row *rows, int n, float *logits);
/* One token for each of n_seq sequences (self-KV slots, each at its own position),
 * in one pass: the weights are read once for all of them.  logits: n_seq x n_vocab
 * (may be NULL).  0 or -1. */
int wkv__decoder_batch(wkv_context *ctx, const int *slots, const int *tokens, int n_seq,
                      float *logits);

#endif
