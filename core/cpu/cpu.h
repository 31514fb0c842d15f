/* The CPU encoder backend (compute/backend.h): f32 products on oneDNN or OpenBLAS
 * (base/sgemm.h), bf16/int8 on oneDNN through compute/compute.h; every stage split
 * over the context's pool by frames.  What its three files share. */
#ifndef WKV_CPU_H_BACKEND
#define WKV_CPU_H_BACKEND

#include "compute/backend.h"
#include "compute/compute.h"

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

/* An instance (the field names are the context's before the seam: encoder.c reads as
 * it did). */
typedef struct {
    wkv__encoder base;
    const wkv_model *model;
    wkv__pool *pool;
    wkv__compute *compute; /* the products on bf16/int8 (compute.c); NULL: f32 */
    float *enc_out;        /* the run's output (run's argument) */
    /* in the lent arena: im2col blocks, per pool part: WKV_ENC_CONV_ROWS x max(3
     * n_mels, 3d); x, h, k, v: n_audio_ctx x d; q: the same, then attention's output
     * in its place (each (head, block) task writes the slice of q it has consumed);
     * scores: per pool part WKV_ENC_QBLOCK x n_audio_ctx */
    float *enc_cols, *enc_x, *enc_h, *enc_q, *enc_k, *enc_v, *enc_scores;
    /* the lent work buffer: the MLP's hidden rows, per pool part wkv__enc_mlp_rows x
     * 4d; conv1's 2 n_audio_ctx frames; a half cross cache's f32 stage (a layer's K
     * and V before they are rounded, kv_cache.h) */
    float *enc_mlp;
    /* an encoder layer's q, k, v, then its o and MLP (encoder.c), or one decoder
     * layer's cross-K/V projections, or the convolutions, widened to f32
     * (wkv__enc_wl_floats); NULL when all of those are stored f32; on bf16/int8
     * touched only when a product falls back */
    float *enc_wl;
    pthread_mutex_t widen_lock; /* a compute type's fallback widening (widen.h) */
} wkv__cpu;

/* encoder.c: the backend's run (backend.h). */
int wkv__cpu_run(wkv__encoder *e, const float *mel, float *out, wkv_stats *st);
/* cross.c: the backend's fill (backend.h). */
void wkv__cpu_fill(wkv__encoder *e, const float *enc, wkv__cross_kv *c);
/* Tests: the instance's bf16/int8 products (NULL on f32 or another backend). */
wkv__compute *wkv__cpu_compute(const wkv__encoder *e);

#endif
