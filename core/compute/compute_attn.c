/* Attention's two products on a compute type (compute.h): the layer's keys and values
 * per head in the products' layouts, q . K^T (bf16, or s8 on int8) and P . V (bf16;
 * left to the caller's f32 on int8 without bf16 instructions) on each pool part's
 * oneDNN stream, the softmax between them rounded to bf16 as it is made. */
#include "compute/compute.h"
#include "kernels/ops.h"

#include <stdlib.h>
#include <string.h>

#include "compute/compute_priv.h"


void wkv__compute_kv_rows(wkv__compute *c, const float *k, const float *v, int r0, int r1, int d)
{
    const int T = c->T, hd = c->hd;
    uint16_t row[d];
    for (int t = r0; t < r1; t++) {
        if (c->k8)
            for (int h = 0; h < d / hd; h++)
                c->k_scale[(size_t)h * T + t] = wkv__compute_quantize_row(
                    k + (size_t)t * d + h * hd, hd, c->k8 + ((size_t)h * T + t) * hd);
        else {
            wkv__to_bf16(k + (size_t)t * d, (size_t)d, 1.0f, row);
            for (int i = 0; i < d; i++) /* column i = h * hd + j of K is row i of K^T */
                c->k16[(size_t)i * T + t] = row[i];
        }
        for (int h = 0; !c->pv_f32 && h < d / hd; h++)
            wkv__to_bf16(v + (size_t)t * d + h * hd, (size_t)hd, 1.0f,
                    c->v16 + ((size_t)h * T + t) * hd);
    }
}

static int scores_run(wkv__compute *c, cpart *pt, const float *q, int nq, int d, int hd, int h,
                      int T, float scale, float *scores)
{
    size_t need = (size_t)nq * (T > hd ? T : hd) * sizeof(uint16_t);
    if (wkv__compute_grow((void **)&pt->att16, &pt->att16_bytes, need) != 0)
        return -1;
    if (!c->k8) {
        for (int i = 0; i < nq; i++)
            wkv__to_bf16(q + (size_t)i * d, (size_t)hd, scale, pt->att16 + (size_t)i * hd);
        cshape sh = {nq, hd, T, 0, 0, 0, T, 1, T};
        return wkv__compute_exec(c, pt, &sh, pt->att16, c->k16 + (size_t)h * hd * T, NULL, scores);
    }
    /* int8: each query's head slice with its own scale, as each key's; the s32 dots
     * are written into the scores themselves and scaled there (oneDNN 2.6's brgemm
     * takes no scales given at run time: its gemm, which does, was slower than bf16) */
    if (wkv__compute_grow_floats(&pt->row_scale, &pt->rows_n, (size_t)nq) != 0)
        return -1;
    pt->qx_rows = 0; /* row_scale no longer describes qx */
    int8_t *q8 = (int8_t *)pt->att16;
    for (int i = 0; i < nq; i++)
        pt->row_scale[i] = scale * wkv__compute_quantize_row(q + (size_t)i * d, hd, q8 + (size_t)i * hd);
    cshape sh = {nq, hd, T, 0, 0, 1, 1, hd, T};
    if (wkv__compute_exec(c, pt, &sh, q8, c->k8 + (size_t)h * T * hd, NULL, scores) != 0)
        return -1;
    for (int i = 0; i < nq; i++)
        wkv__compute_dequant_in_place(scores + (size_t)i * T, T, pt->row_scale[i],
                             c->k_scale + (size_t)h * T, NULL);
    return 0;
}

int wkv__compute_scores(wkv__compute *c, int part, const float *q, int nq, int d, int hd, int h,
                       int T, float scale, float *scores)
{
    if (part < 0 || part >= c->n_parts)
        return -1;
    if (scores_run(c, &c->parts[part], q, nq, d, hd, h, T, scale, scores) == 0)
        return 0;
    c->parts[part].fallbacks++;
    return -1;
}

static int context_run(wkv__compute *c, cpart *pt, const float *p, int nq, int T, int d, int hd,
                       int h, float *inv, float *out)
{
    /* att16 holds nq x max(T, hd) since the scores */
    if (wkv__compute_grow((void **)&pt->att16, &pt->att16_bytes, (size_t)nq * T * sizeof(uint16_t)) != 0)
        return -1;
    /* each row converted right after its softmax, while it is in L1 (a block's
     * probabilities are 1.5 MB: written and read back from L2/L3 otherwise) */
    for (int i = 0; i < nq; i++) {
        float sum = wkv__softmax_exp_bf16(p + (size_t)i * T, T, pt->att16 + (size_t)i * T);
        inv[i] = sum > 0.0f ? 1.0f / sum : 0.0f;
    }
    /* into a dense block, then copied to out's stride: into out's stride d itself
     * oneDNN took its slower gemm (84.7 against 67.4 ms of thread time a base window) */
    cshape sh = {nq, T, hd, 0, 0, 0, hd, 1, hd};
    if (wkv__compute_grow_floats(&pt->dense, &pt->dense_n, (size_t)nq * hd) != 0 ||
        wkv__compute_exec(c, pt, &sh, pt->att16, c->v16 + (size_t)h * T * hd, NULL, pt->dense) != 0)
        return -1;
    for (int i = 0; i < nq; i++)
        memcpy(out + (size_t)i * d, pt->dense + (size_t)i * hd, (size_t)hd * sizeof(float));
    return 0;
}

void wkv__compute_set_frames(wkv__compute *c, int T)
{
    c->T = T; /* the buffers hold n_audio_ctx keys: fewer pack at a smaller stride */
}

void wkv__compute_set_pv_f32(wkv__compute *c, int on)
{
    if (c && c->type == WKV_COMPUTE_INT8)
        c->pv_f32 = on != 0;
}

int wkv__compute_pv_f32(const wkv__compute *c)
{
    return c && c->pv_f32;
}

int wkv__compute_context(wkv__compute *c, int part, const float *p, int nq, int T, int d, int hd,
                        int h, float *inv, float *out)
{
    if (part < 0 || part >= c->n_parts || c->pv_f32)
        return -1; /* pv_f32: the caller's f32 path by choice, not a failure */
    if (context_run(c, &c->parts[part], p, nq, T, d, hd, h, inv, out) == 0)
        return 0;
    c->parts[part].fallbacks++; /* p is untouched: the caller's f32 softmax and product run */
    return -1;
}
