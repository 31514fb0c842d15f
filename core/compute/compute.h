/* The encoder's linear layers on another compute type than f32 (oneDNN bf16/int8).
 * A context that uses one holds a wkv__compute: a scratch for one layer's weights in
 * that type (converted from the file's storage just before the layer runs, so no
 * second copy of the model exists), the two convolutions' small matrices converted
 * once, and per pool part a oneDNN stream, primitives and buffers, so the parts run
 * their rows' products side by side like the f32 path's single-threaded sgemm. */
#ifndef WKV_COMPUTE_H
#define WKV_COMPUTE_H

#include "model/model.h"
#include "base/pool.h"

typedef struct wkv__compute wkv__compute;

/* For BF16 or INT8 (NULL with *error set otherwise, or when oneDNN is missing). */
wkv__compute *wkv__compute_new(const wkv_model *m, wkv_compute_type type, int n_parts,
                             char **error);
void wkv__compute_free(wkv__compute *c);
/* A weight matrix in the compute type's form (bf16, or int8 with per-row scales). */
typedef struct wkv__cweight wkv__cweight;
/* The convolution matrix stored at `key` (wkv__mat.data), n outputs x in inputs, in
 * the type's form, or NULL when the compute type has none (the caller runs that
 * product in f32). */
const wkv__cweight *wkv__compute_weight(const wkv__compute *c, const void *key, int n, int in);
/* How many matrices one wkv__compute_convert can hold: an encoder layer's six. */
#define WKV_COMPUTE_SLOTS 6
/* Converts count (<= WKV_COMPUTE_SLOTS) stored matrices, src[i] of n[i] outputs x
 * in[i] inputs, into the scratch, over the pool's parts (each a share of every
 * matrix's rows); cw[i] is the converted copy, or NULL when it does not fit the
 * slot (the caller runs that product in f32).  The copies are valid until the next
 * call: one layer's products at a time.  The same values as a conversion of the
 * whole model once, so results do not depend on when the weights were converted. */
void wkv__compute_convert(wkv__compute *c, wkv__pool *pool, int count, const wkv__mat *const *src,
                         const int *n, const int *in, const wkv__cweight **cw);
/* Bytes the compute type keeps besides the model: the layer scratch, the
 * convolutions' copies, attention's bf16 keys and values, the parts' buffers. */
size_t wkv__compute_scratch_bytes(const wkv__compute *c);
/* wkv__compute_linear's flags. */
enum {
    /* x's rows are the ones this part's previous call converted (WKV_LIN_KEEP, or the
     * x of a call on the same rows), unchanged since: their bf16/int8 copy is reused
     * (attention's k and v after q, the MLP's second product after its first) */
    WKV_LIN_SAME_X = 1,
    /* GELU on each output row as it is finished, while it is in cache */
    WKV_LIN_GELU = 2,
    /* each finished output row is also converted as the next call's x (SAME_X) */
    WKV_LIN_KEEP = 4,
};
/* out[r][0..n) (+)= x[r] . w^T + b for rows r0 .. r1 of x (in columns), like
 * wkv__linear_rows, on w's converted copy, then the flags' row work; run by pool part
 * `part` only.  0, or -1 when oneDNN failed and the caller must compute these rows in
 * f32 (wkv__linear_rows, and the GELU it asked for) itself: the f32 values need not
 * exist until then.  The f32 output rows are always written (GELU included), so a
 * later call's fallback has them. */
int wkv__compute_linear(wkv__compute *c, int part, const float *x, int r0, int r1, int in,
                       const wkv__cweight *w, const float *b, int n, float *out, int accumulate,
                       int flags);

/* Attention's two products: q . K^T in bf16, or on int8 in s8 with one scale per head
 * slice of each query and each key (8-bit activations like the linear layers'); P . V
 * in bf16 on both (a row's small probabilities would not survive one 8-bit scale), or
 * in f32 on int8 (wkv__compute_set_pv_f32, below).
 * kv_rows keeps rows r0 .. r1 of the layer's keys (bf16 or s8) and values (bf16);
 * scores (nq x T) = scale * q (nq rows of stride d, head h's hd columns) . K_h^T;
 * context: the softmax of each row of the scores p (nq x T, left as they are: the
 * exponentials go to bf16; 1 / sum in inv[i]), then out (nq x hd, row stride d) =
 * exp(p) . V_h, unnormalized.  Both return 0, or -1 (counted, wkv__compute_fallbacks)
 * when the caller must compute in f32 instead, from its unchanged inputs. */
/* The encoder frames T of the next run (1 .. n_audio_ctx; new: n_audio_ctx): kv_rows
 * lays K and V out for T keys, which scores and context must then be given. */
void wkv__compute_set_frames(wkv__compute *c, int T);
void wkv__compute_kv_rows(wkv__compute *c, const float *k, const float *v, int r0, int r1, int d);
int wkv__compute_scores(wkv__compute *c, int part, const float *q, int nq, int d, int hd, int h,
                       int T, float scale, float *scores);
int wkv__compute_context(wkv__compute *c, int part, const float *p, int nq, int T, int d, int hd,
                        int h, float *inv, float *out);
/* Where P . V runs on int8: on = in f32 (context returns -1 for it, uncounted, and the
 * caller's f32 softmax and product run; kv_rows then skips the bf16 values).  The
 * default is on where the CPU has no AVX512_BF16: oneDNN emulates bf16 there, and
 * the int8 attention took twice f32's time (Intel Xeon family 6 model 85: tiny 404
 * against 218 ms a window, docs/performance.md).  Ignored on bf16.  Tests set both. */
void wkv__compute_set_pv_f32(wkv__compute *c, int on);
int wkv__compute_pv_f32(const wkv__compute *c);
/* How many products the parts have left to f32 since c was made (oneDNN failed): 0
 * in a healthy run, which tests hold it to, since the f32 fallback's results would
 * pass any accuracy check on their own. */
int wkv__compute_fallbacks(const wkv__compute *c);
/* Tests: with on, every product of c fails as if oneDNN had, so each caller runs its
 * f32 fallback (which must then give the f32 path's values). */
void wkv__compute_force_fallback(wkv__compute *c, int on);

#endif
