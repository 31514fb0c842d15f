/* The decoder's per-token matrices in f16, and every decoder matrix's typed view.
 *
 * A decoder step streams every decoder weight once per token, so its speed is the
 * memory bandwidth divided by the bytes of those weights.  In an f16 or quantized file
 * the loader keeps every matrix the file stores as f16 or in blocks as stored (not in
 * the f32 arena); a matrix such a file stores as f32 is in the f32 arena, and this
 * pass moves it to f16 in its own arena (m->arena16; rounded to nearest, the loader
 * checked that it does not overflow f16), sets its f32 pointer to NULL, and repacks
 * the remaining f32 tensors into a smaller arena, so the memory really drops.  These
 * are the token embedding (also the output projection), each block's attention and
 * MLP matrices and the convolutions.  f32 files are left alone.
 *
 * The encoder's block matrices and the cross-attention K/V projections (used once per
 * window) are not multiplied as stored: the context widens one layer's at a time into
 * its scratch (wkv__mat_f32; a compute type converts them instead) just before its
 * matrix products. */
#include "base/util.h"
#include "base/f16.h"
#include "model/model.h"
#include "model/quant.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct {
    float **slot;
    wkv__mat *mat;           /* where its f16 copy goes, or NULL: stays f32 */
    float *at;              /* its place in the old arena */
    size_t count;
} tensor;

static int by_address(const void *a, const void *b)
{
    const tensor *x = a, *y = b;
    return (x->at > y->at) - (x->at < y->at);
}

#define LAYER_FIELDS 24
static const size_t layer_f32[LAYER_FIELDS] = {
    offsetof(wkv__layer, attn_ln_w),  offsetof(wkv__layer, attn_ln_b),
    offsetof(wkv__layer, attn_q_w),   offsetof(wkv__layer, attn_q_b),
    offsetof(wkv__layer, attn_k_w),   offsetof(wkv__layer, attn_v_w),
    offsetof(wkv__layer, attn_v_b),   offsetof(wkv__layer, attn_o_w),
    offsetof(wkv__layer, attn_o_b),   offsetof(wkv__layer, cross_ln_w),
    offsetof(wkv__layer, cross_ln_b), offsetof(wkv__layer, cross_q_w),
    offsetof(wkv__layer, cross_q_b),  offsetof(wkv__layer, cross_k_w),
    offsetof(wkv__layer, cross_v_w),  offsetof(wkv__layer, cross_v_b),
    offsetof(wkv__layer, cross_o_w),  offsetof(wkv__layer, cross_o_b),
    offsetof(wkv__layer, mlp_ln_w),   offsetof(wkv__layer, mlp_ln_b),
    offsetof(wkv__layer, mlp0_w),     offsetof(wkv__layer, mlp0_b),
    offsetof(wkv__layer, mlp2_w),     offsetof(wkv__layer, mlp2_b),
};

/* the decoder matrices kept in f16: f32 field -> typed view */
static const size_t dec_f16[][2] = {
    {offsetof(wkv__layer, attn_q_w), offsetof(wkv__layer, attn_q)},
    {offsetof(wkv__layer, attn_k_w), offsetof(wkv__layer, attn_k)},
    {offsetof(wkv__layer, attn_v_w), offsetof(wkv__layer, attn_v)},
    {offsetof(wkv__layer, attn_o_w), offsetof(wkv__layer, attn_o)},
    {offsetof(wkv__layer, cross_q_w), offsetof(wkv__layer, cross_q)},
    {offsetof(wkv__layer, cross_k_w), offsetof(wkv__layer, cross_k)},
    {offsetof(wkv__layer, cross_v_w), offsetof(wkv__layer, cross_v)},
    {offsetof(wkv__layer, cross_o_w), offsetof(wkv__layer, cross_o)},
    {offsetof(wkv__layer, mlp0_w), offsetof(wkv__layer, mlp0)},
    {offsetof(wkv__layer, mlp2_w), offsetof(wkv__layer, mlp2)},
};
#define N_DEC_F16 ((int)(sizeof dec_f16 / sizeof *dec_f16))

static const size_t global_f32[] = {
    offsetof(wkv__weights, conv1_w),  offsetof(wkv__weights, conv1_b),
    offsetof(wkv__weights, conv2_w),  offsetof(wkv__weights, conv2_b),
    offsetof(wkv__weights, enc_pos),  offsetof(wkv__weights, enc_ln_w),
    offsetof(wkv__weights, enc_ln_b), offsetof(wkv__weights, tok_emb),
    offsetof(wkv__weights, dec_pos),  offsetof(wkv__weights, dec_ln_w),
    offsetof(wkv__weights, dec_ln_b),
};
#define N_GLOBAL ((int)(sizeof global_f32 / sizeof *global_f32))

static void add(tensor *t, int *n, float **slot, wkv__mat *mat)
{
    if (!*slot) /* kept in its blocks by the loader */
        return;
    t[*n] = (tensor){slot, mat, *slot, 0};
    ++*n;
}

int wkv__weights_keep_f16(wkv_model *m, char **error)
{
    if (!m->arena || m->arena16 || m->hp.ftype % 1000 == 0)
        return 0;
    const int n_enc = m->hp.n_audio_layer, n_dec = m->hp.n_text_layer;
    size_t cap = (size_t)N_GLOBAL + (size_t)(n_enc + n_dec) * LAYER_FIELDS;
    tensor *t = wkv__malloc(cap * sizeof *t);
    if (!t)
        goto oom;
    int n = 0;
    wkv__weights *w = &m->w;
    for (int i = 0; i < N_GLOBAL; i++) {
        float **slot = (float **)(void *)((char *)w + global_f32[i]);
        /* matrices go to f16 (stored f32 in a non-f32 file), the rest stays */
        wkv__mat *mat = slot == &w->tok_emb   ? &w->tok
                       : slot == &w->conv1_w ? &w->conv1
                       : slot == &w->conv2_w ? &w->conv2
                                             : NULL;
        add(t, &n, slot, mat);
    }
    for (int l = 0; l < n_enc + n_dec; l++) {
        wkv__layer *L = l < n_enc ? &w->enc[l] : &w->dec[l - n_enc];
        for (int i = 0; i < LAYER_FIELDS; i++) {
            wkv__mat *h = NULL;
            for (int k = 0; k < N_DEC_F16; k++)
                if (dec_f16[k][0] == layer_f32[i])
                    h = (wkv__mat *)(void *)((char *)L + dec_f16[k][1]);
            add(t, &n, (float **)(void *)((char *)L + layer_f32[i]), h);
        }
    }
    /* the loader packs the tensors back to back: each one reaches the next */
    qsort(t, (size_t)n, sizeof *t, by_address);
    size_t n16 = 0;
    for (int i = 0; i < n; i++) {
        float *end = i + 1 < n ? t[i + 1].at : m->arena + m->arena_floats;
        t[i].count = (size_t)(end - t[i].at);
        if (t[i].mat)
            n16 += t[i].count;
    }
    if (n16 == 0) {
        /* nothing to move (every matrix kept as stored by the loader): copying the
         * arena as it is would only raise the load's peak */
        wkv__free(t);
        return 0;
    }
    size_t n32 = m->arena_floats - n16;
    uint16_t *a16 = n16 ? wkv__malloc(n16 * sizeof *a16) : NULL;
    float *a32 = wkv__malloc((n32 ? n32 : 1) * sizeof *a32);
    if ((n16 && !a16) || !a32) {
        wkv__free(a16);
        wkv__free(a32);
        goto oom;
    }
    /* copy in address order, handing the old arena's pages back as they are passed,
     * so the peak stays near one f32 arena */
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t released = ((uintptr_t)m->arena + page - 1) & ~(page - 1);
    uint16_t *d16 = a16;
    float *d32 = a32;
    const size_t chunk = (size_t)1 << 20;
    for (int i = 0; i < n; i++) {
        if (t[i].mat) {
            *t[i].mat = (wkv__mat){WKV_TYPE_F16, d16};
            *t[i].slot = NULL;
        } else {
            *t[i].slot = d32;
        }
        for (size_t k = 0; k < t[i].count; k += chunk) {
            size_t c = t[i].count - k < chunk ? t[i].count - k : chunk;
            if (t[i].mat) {
                wkv__f32_to_f16_row(t[i].at + k, d16, c);
                d16 += c;
            } else {
                memcpy(d32, t[i].at + k, c * sizeof *d32);
                d32 += c;
            }
            uintptr_t done = (uintptr_t)(t[i].at + k + c) & ~(page - 1);
            if (page > 0 && done > released + (4u << 20)) {
                madvise((void *)released, done - released, MADV_DONTNEED);
                released = done;
            }
        }
    }
    wkv__free(t);
    wkv__free(m->arena);
    m->arena = a32;
    m->arena_floats = n32;
    m->arena16 = a16;
    m->arena16_halves = n16;
    return 0;
oom:
    wkv__free(t);
    wkv__set_error(error, "%s: offset 0: out of memory keeping the decoder weights in f16", m->path);
    return -1;
}

const float *wkv__mat_f32(const wkv__mat *v, size_t count, float *scratch)
{
    if (v->type == WKV_TYPE_F32) /* in place: no copy */
        return v->data;
    wkv__row_to_f32(v->type, v->data, scratch, count);
    return scratch;
}

void wkv__weights_bind(wkv_model *m)
{
    wkv__weights *w = &m->w;
    if (!w->tok.data)
        w->tok = (wkv__mat){WKV_TYPE_F32, w->tok_emb};
    if (!w->conv1.data)
        w->conv1 = (wkv__mat){WKV_TYPE_F32, w->conv1_w};
    if (!w->conv2.data)
        w->conv2 = (wkv__mat){WKV_TYPE_F32, w->conv2_w};
    const int n_enc = w->enc ? m->hp.n_audio_layer : 0, n_dec = w->dec ? m->hp.n_text_layer : 0;
    for (int l = 0; l < n_enc + n_dec; l++) {
        wkv__layer *L = l < n_enc ? &w->enc[l] : &w->dec[l - n_enc];
        for (int k = 0; k < N_DEC_F16; k++) {
            wkv__mat *v = (wkv__mat *)(void *)((char *)L + dec_f16[k][1]);
            float *f = *(float **)(void *)((char *)L + dec_f16[k][0]);
            if (!v->data && f) /* encoder blocks have no cross_q/cross_o */
                *v = (wkv__mat){WKV_TYPE_F32, f};
        }
    }
}
