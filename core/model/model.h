/* A loaded model: hyperparameters, mel filters, vocabulary and the weights as the
 * layers above read them.  Immutable once loaded (shared between threads). */
#ifndef WKV_MODEL_H
#define WKV_MODEL_H

#include "whisperkv_debug.h"

#include <stddef.h>
#include <stdint.h>

/* A weight matrix as the decoder reads it: type WKV_TYPE_F32 (float), WKV_TYPE_F16
 * (IEEE half) or a quantized block type (quant.h: each row in / 32 blocks as the file
 * stores them); out x in, row-major. */
typedef struct {
    int type;
    const void *data;
} wkv__mat;

/* One transformer block's weights, f32, PyTorch layout (out x in, row-major).
 * Encoder blocks leave the cross_* pointers NULL.  Every block's matrices
 * (attention q/k/v/o, cross-attention q/k/v/o, MLP) are also given typed (attn_q ...
 * mlp2; an encoder block's cross_* stay empty): in an f32 file f32, the same data as
 * *_w; in an f16 or quantized file as the file stores them (model.c), or f16 when it
 * stores them f32 (weights.c), their *_w pointer then NULL. */
typedef struct {
    float *attn_ln_w, *attn_ln_b;
    float *attn_q_w, *attn_q_b, *attn_k_w, *attn_v_w, *attn_v_b, *attn_o_w, *attn_o_b;
    float *cross_ln_w, *cross_ln_b;
    float *cross_q_w, *cross_q_b, *cross_k_w, *cross_v_w, *cross_v_b, *cross_o_w,
        *cross_o_b;
    float *mlp_ln_w, *mlp_ln_b;
    float *mlp0_w, *mlp0_b; /* [4d, d], [4d] */
    float *mlp2_w, *mlp2_b; /* [d, 4d], [d] */
    wkv__mat attn_q, attn_k, attn_v, attn_o, cross_q, cross_k, cross_v, cross_o, mlp0, mlp2;
} wkv__layer;

/* All weights as f32 pointers into one arena (f16 files are widened at load), except
 * the matrices of non-f32 files: f16 in arena16 or as stored (f16, quantized blocks)
 * in arenaq, their f32 pointer NULL (see wkv__layer; the token embedding likewise in
 * tok, the convolutions in conv1, conv2). */
typedef struct {
    float *conv1_w, *conv1_b; /* [d, n_mels, 3], [d] */
    float *conv2_w, *conv2_b; /* [d, d, 3], [d] */
    wkv__mat conv1, conv2;     /* the convolutions typed: d rows of 3 n_mels, 3 d */
    float *enc_pos;           /* [n_audio_ctx, d] */
    wkv__layer *enc;           /* n_audio_layer */
    float *enc_ln_w, *enc_ln_b;
    float *tok_emb;           /* [n_vocab, d], also the output projection; or NULL */
    wkv__mat tok;              /* the same, typed */
    float *dec_pos;           /* [n_text_ctx, d] */
    wkv__layer *dec;           /* n_text_layer */
    float *dec_ln_w, *dec_ln_b;
} wkv__weights;

struct wkv_model {
    char *path;
    wkv_hparams hp;
    wkv_specials sp;
    float *mel_filters;      /* n_mels x 201 */
    /* vocabulary: token i is tok_bytes[tok_off[i] .. tok_off[i] + tok_len[i]) */
    int n_tokens;            /* tokens stored in the file */
    uint32_t *tok_off, *tok_len;
    char *tok_bytes;
    /* special token spellings for ids >= n_tokens ("<|en|>", "<|0.02|>", ...) */
    uint32_t *sp_off, *sp_len;
    char *sp_bytes;
    /* BPE lookup: open-addressing table from token bytes to id (vocab.c) */
    int32_t *bpe_table;
    uint32_t bpe_mask;
    /* the reference's suppress_tokens list for this vocabulary (vocab.c) */
    int *suppress;
    int n_suppress;
    float *arena;            /* every f32 weight */
    size_t arena_floats;
    uint16_t *arena16;       /* a non-f32 file's f32-stored matrices in f16, or NULL */
    size_t arena16_halves;
    uint8_t *arenaq;         /* the f16 and quantized matrices as stored, or NULL */
    size_t arenaq_bytes;
    wkv__weights w;
};

/* model.c: reads the header, mel filters and vocabulary only (no tensors needed;
 * m->w and m->arena stay empty).  For tools and tests on vocabulary-only files. */
wkv_model *wkv__model_load_vocab_only(const char *path, char **error);

/* weights.c: after a full load of a non-f32 file, moves the matrices the file stores
 * as f32 (token embedding, the blocks' attention and MLP matrices, convolutions) to
 * f16 in m->arena16 (rounded to nearest) and repacks the rest into a smaller f32
 * arena; the matrices the file stores f16 or quantized are kept as stored by the
 * loader.  0, or -1 (out of memory) with *error set. */
int wkv__weights_keep_f16(wkv_model *m, char **error);
/* weights.c: a stored matrix of `count` values as f32: an f32 one in place, the others
 * widened (f16) or dequantized into scratch (count floats).  Exact: the values the
 * loader used to widen at load. */
const float *wkv__mat_f32(const wkv__mat *v, size_t count, float *scratch);
/* weights.c: sets every decoder matrix's typed view (wkv__layer, tok) not set by the
 * loader or wkv__weights_keep_f16 to its f32 data. */
void wkv__weights_bind(wkv_model *m);

#endif
