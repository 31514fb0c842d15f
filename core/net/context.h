/* The decoding context: everything mutable one decoding thread needs, sized once
 * from the model (llama2.c's RunState). */
#ifndef WKV_CONTEXT_H
#define WKV_CONTEXT_H

#include "compute/backend.h"
#include "net/kv_cache.h"
#include "base/pool.h"

#include <pthread.h>

struct wkv_context {
    const wkv_model *model;
    int threads;
    wkv__pool *pool; /* threads - 1 workers for our own loops */
    wkv_stats stats;
    size_t activation_bytes; /* every buffer below except the caches */
    wkv_compute_type compute_type; /* never AUTO */
    wkv__encoder *encoder;          /* the backend the compute type picked (backend.c) */
    wkv_cache_type cache_type;      /* as asked (AUTO: by compute type and file) */

    /* One buffer for two phases that never overlap: while encoding, the encoder
     * backend's scratch; while decoding, the decoder's activations (dec_x … dec_att,
     * dec_mlp, dec_scores).  Nothing in it outlives its phase: an encode overwrites a
     * pass's rows, so it forgets the pass (pass_n = 0); a pass never reads the
     * encoder's scratch (the cross fill reads enc_out and the backend's own buffers
     * and enc_mlp, outside it).  Its size is the larger phase's (context.c; every
     * backend's).  It starts on a 64-byte boundary, so every row the kernels load
     * whole vectors from is as aligned as its width allows (calloc's large blocks
     * start 16 bytes past one: with each AVX-512 load of x split over two cache
     * lines, 8 rows of a q8_0 product took 1.13 - 1.18x as long, AMD EPYC Zen 3 and
     * Intel Xeon). */
    float *arena;
    void *arena_raw; /* what to free */

    float *enc_out;   /* n_audio_ctx x d: the last encoder output (kept while decoding) */
    int enc_frames;   /* its rows: the frames the encoder last ran on (audio_ctx) */
    float *enc_mlp;   /* the backend's work buffer (backend.h) during a run and a fill,
                       * at least 2 n_audio_ctx x d: between encoder runs a half cross
                       * cache's f32 stage (kv_cache.h); while decoding, a half cache's
                       * layer widened */
    size_t enc_mlp_floats;

    /* the caches */
    wkv__cross_kv cross;
    /* the cross K/V of a window of padding alone (padding.c), made at the first window
     * encoded under audio_ctx AUTO; stale (valid 0) when the compute or cache type
     * changes */
    wkv__cross_kv pad;
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

/* A buffer's floats rounded up to 64 bytes, so that every buffer carved from the
 * arena starts as aligned as the arena itself. */
static inline size_t wkv__arena_round(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* backend.c: the seam (compute/backend.h) */
/* The arena and work floats the build's largest backends need for model m. */
void wkv__backend_sizes(const wkv_model *m, int n_parts, size_t *arena_floats,
                       size_t *work_floats);
/* The first backend of the build's list that takes `type` (never AUTO), on the lent
 * buffers; NULL with *error set (none takes it, or its create failed). */
wkv__encoder *wkv__backend_new(const wkv__backend_lend *lend, wkv_compute_type type,
                              char **error);
void wkv__backend_free(wkv__encoder *e);
/* Bytes it holds besides the context's buffers. */
size_t wkv__backend_bytes(const wkv__encoder *e);
/* The encoder frames a window of mel_frames frames of audio (<= 3000) gets under
 * wkv_options.audio_ctx (1 .. n_audio_ctx; AUTO: wkv_audio_ctx_auto). */
int wkv__audio_ctx_frames(const wkv_model *m, int audio_ctx, int mel_frames);
/* 0 when audio_ctx is valid (>= 0 or AUTO), else -1 with *error set. */
int wkv__audio_ctx_check(int audio_ctx, char **error);
/* padding.c: the encoder on one window's mel (n_mels x 3000, frames from mel_frames
 * on 0.0, as wkv_mel_window writes them) under wkv_options.audio_ctx, then the cross
 * K/V (and a reset sequence), as wkv_encode_frames.  AUTO: the encoder on
 * wkv_audio_ctx_auto's frames, the cross K/V past them the padding's, and the decoder
 * attends over all n_audio_ctx.  0 or -1. */
int wkv__encode_window(wkv_context *ctx, const float *mel, int audio_ctx, int mel_frames);
/* wkv_encode_frames, and with `pad` (a cross cache of the context's shape and type)
 * the cross K/V rows from n_frames on copied from it, the decoder attending over all
 * n_audio_ctx.  0 or -1. */
int wkv__encode_padded(wkv_context *ctx, const float *mel, int n_frames,
                       const wkv__cross_kv *pad);
/* The encoder on the context's backend on the first n_frames (1 .. n_audio_ctx)
 * encoder frames: mel -> ctx->enc_out's first n_frames rows.  0 or -1. */
int wkv__encoder_run(wkv_context *ctx, const float *mel, int n_frames);
/* The cross K/V cache projected from ctx->enc_out (valid afterwards), on the context's
 * backend, as wkv_encode does after the encoder.  Here and not in context.c: the
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
