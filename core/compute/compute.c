/* Compute types (whisperkv.h): the encoder's linear layers through oneDNN matmul on
 * bf16 or int8 (the attention's products: compute_attn.c), the rest of the encoder
 * unchanged.  Each pool part quantizes its own rows and runs one single-threaded
 * matmul on them (OpenMP told one thread in that part's thread), so a context still
 * uses exactly `threads` threads and the row-wise work around the products keeps its
 * rows in cache, as on the f32 path. */
#include "compute/compute.h"
#include "base/util.h"
#include "base/cpu.h"
#include "model/model.h"
#include "model/quant.h"
#include "kernels/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute/compute_priv.h"

#include <omp.h>

/* q[i] = round(x[i] / s) with s = max|x| / 127 (0 for an all-zero row); returns s.
 * Sixteen lanes for the maximum and rounding by the 1.5 * 2^23 trick (to nearest even,
 * as lrintf, for |v| <= 127) so that both loops vectorize. */
WKV_CLONES
static float quantize_row_clones(const float *x, int n, int8_t *q)
{
    const float amax = wkv__absmax_lanes(x, n);
    float s = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    const float magic = 12582912.0f;
    for (int i = 0; i < n; i++)
        q[i] = (int8_t)(int32_t)((x[i] * inv + magic) - magic);
    return s;
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(WKV_NO_CLONES)
#include <immintrin.h>
/* The same on AVX-512F by hand: the clone's narrowing to bytes goes through ymm packs
 * (GCC 12 uses vpmovdb only with AVX-512BW), and every encoder weight is quantized
 * again at each window.  cvtps2dq rounds by MXCSR, to nearest even as the 1.5 * 2^23
 * trick; NaN becomes 0x80000000 in both, narrowed to 0. */
__attribute__((target("avx512f"))) static float quantize_row_512(const float *x, int n,
                                                                 int8_t *q)
{
    const float amax = wkv__absmax_lanes(x, n);
    const float s = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    const __m512 vi = _mm512_set1_ps(inv);
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm_storeu_si128((__m128i *)(void *)(q + i),
                         _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(
                             _mm512_mul_ps(_mm512_loadu_ps(x + i), vi))));
    if (i < n) {
        const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_cvtepi32_storeu_epi8(
            q + i, k, _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), vi)));
    }
    return s;
}

float wkv__compute_quantize_row(const float *x, int n, int8_t *q)
{
    if (wkv__gemv_isa() >= WKV_ISA_AVX512)
        return quantize_row_512(x, n, q);
    return quantize_row_clones(x, n, q);
}
#else
float wkv__compute_quantize_row(const float *x, int n, int8_t *q)
{
    return quantize_row_clones(x, n, q);
}
#endif

/* One row of an int8 product added back in f32: o += a * sr * scale + b (b may be NULL). */
WKV_CLONES
static void dequant_row_add(const int32_t *a, int n, float sr, const float *scale,
                            const float *b, float *o)
{
    if (b)
        for (int j = 0; j < n; j++)
            o[j] += (float)a[j] * sr * scale[j] + b[j];
    else
        for (int j = 0; j < n; j++)
            o[j] += (float)a[j] * sr * scale[j];
}

/* o = a * sr * scale + b over s32 products that oneDNN wrote into the f32 output row
 * itself (each value read through memcpy, then overwritten with its float): no s32
 * buffer as large as the output. */
WKV_CLONES
static void dequant_in_place_clones(float *o, int n, float sr, const float *scale, const float *b)
{
    for (int j = 0; j < n; j++) {
        int32_t a;
        memcpy(&a, o + j, sizeof a);
        o[j] = (float)a * sr * scale[j] + (b ? b[j] : 0.0f);
    }
}

void wkv__compute_dequant_in_place(float *o, int n, float sr, const float *scale, const float *b)
{
    dequant_in_place_clones(o, n, sr, scale, b);
}

/* Row r (of `in` values) of a stored matrix as f32: in place, or widened into buf. */
static const float *stored_row(const wkv__mat *m, int r, int in, float *buf)
{
    if (m->type == WKV_TYPE_F32)
        return (const float *)m->data + (size_t)r * in;
    const size_t n = (size_t)in;
    const uint8_t *src = (const uint8_t *)m->data + wkv__type_bytes(m->type, (size_t)r * n);
    wkv__row_to_f32(m->type, src, buf, n);
    return buf;
}

/* Rows r0 .. r1 of cw's stored matrix into its copy (cw->q, cw->scale allocated):
 * widened to f32 a row at a time into `row`, then rounded to bf16 or quantized with
 * one scale per row. */
static void convert_rows(cweight *cw, wkv_compute_type type, int r0, int r1, float *row)
{
    for (int r = r0; r < r1; r++) {
        const float *f = stored_row(&cw->src, r, cw->in, row);
        if (type == WKV_COMPUTE_BF16)
            wkv__to_bf16(f, (size_t)cw->in, 1.0f, (uint16_t *)cw->q + (size_t)r * cw->in);
        else
            cw->scale[r] = wkv__compute_quantize_row(f, cw->in, (int8_t *)cw->q + (size_t)r * cw->in);
    }
}

/* Room for n rows of `in` weights in the type's form. */
static int cweight_alloc(cweight *cw, wkv_compute_type type, size_t count, size_t rows)
{
    cw->q = wkv__malloc(count * (type == WKV_COMPUTE_BF16 ? sizeof(uint16_t) : 1));
    cw->scale = type == WKV_COMPUTE_BF16 ? NULL : wkv__malloc(rows * sizeof(float));
    return cw->q && (type == WKV_COMPUTE_BF16 || cw->scale) ? 0 : -1;
}

static void prim_free(cprim *p)
{
    dnnl_memory_t mems[] = {p->src, p->wei, p->bia, p->dst, p->scr};
    for (int i = 0; i < 5; i++)
        if (mems[i])
            dnnl_memory_destroy(mems[i]);
    if (p->prim)
        dnnl_primitive_destroy(p->prim);
    memset(p, 0, sizeof *p);
}

static int prim_init(const wkv__compute *c, cprim *p, const cshape *sh)
{
    const dnnl_data_type_t in_t = sh->i8 ? dnnl_s8 : dnnl_bf16, out_t = sh->i8 ? dnnl_s32 : dnnl_f32;
    dnnl_memory_desc_t src_md, wei_md, bia_md, dst_md;
    dnnl_dims_t sd = {sh->m, sh->k}, wd = {sh->k, sh->n}, bd = {1, sh->n}, dd = {sh->m, sh->n};
    dnnl_dims_t ws = {sh->bs0, sh->bs1}, ds = {sh->ldd, 1};
    memset(p, 0, sizeof *p);
    p->sh = *sh;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_matmul_desc_t desc;
    const dnnl_memory_desc_t *scr_md = NULL;
    int ok = dnnl_memory_desc_init_by_tag(&src_md, 2, sd, in_t, dnnl_ab) == dnnl_success &&
             dnnl_memory_desc_init_by_strides(&wei_md, 2, wd, in_t, ws) == dnnl_success &&
             dnnl_memory_desc_init_by_tag(&bia_md, 2, bd, dnnl_f32, dnnl_ab) == dnnl_success &&
             dnnl_memory_desc_init_by_strides(&dst_md, 2, dd, out_t, ds) == dnnl_success &&
             dnnl_matmul_desc_init(&desc, &src_md, &wei_md, sh->bias ? &bia_md : NULL,
                                   &dst_md) == dnnl_success &&
             dnnl_primitive_attr_create(&attr) == dnnl_success &&
             /* the scratchpad is the part's, counted with the compute scratch */
             dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) ==
                 dnnl_success;
    if (ok && sh->acc)
        ok = dnnl_post_ops_create(&po) == dnnl_success &&
             dnnl_post_ops_append_sum(po, 1.0f) == dnnl_success &&
             dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
    ok = ok && dnnl_primitive_desc_create(&pd, &desc, attr, c->engine, NULL) == dnnl_success &&
         (scr_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)) != NULL &&
         dnnl_memory_create(&p->scr, scr_md, c->engine, DNNL_MEMORY_NONE) == dnnl_success &&
         dnnl_primitive_create(&p->prim, pd) == dnnl_success &&
         dnnl_memory_create(&p->src, &src_md, c->engine, DNNL_MEMORY_NONE) == dnnl_success &&
         dnnl_memory_create(&p->wei, &wei_md, c->engine, DNNL_MEMORY_NONE) == dnnl_success &&
         dnnl_memory_create(&p->dst, &dst_md, c->engine, DNNL_MEMORY_NONE) == dnnl_success &&
         (!sh->bias ||
          dnnl_memory_create(&p->bia, &bia_md, c->engine, DNNL_MEMORY_NONE) == dnnl_success);
    if (ok)
        p->scr_bytes = dnnl_memory_desc_get_size(scr_md);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (po)
        dnnl_post_ops_destroy(po);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    if (!ok)
        prim_free(p);
    return ok ? 0 : -1;
}

/* The linear layer's shape: the model's n x k rows are B column-major. */
static cshape linear_shape(const wkv__compute *c, int m, int k, int n, int bias, int acc)
{
    int i8 = c->type == WKV_COMPUTE_INT8;
    return (cshape){m, k, n, i8 ? 0 : bias, i8 ? 0 : acc, i8, 1, k, n};
}

static cprim *prim_get(const wkv__compute *c, cpart *pt, const cshape *sh)
{
    for (int i = 0; i < pt->n_prims; i++)
        if (!memcmp(&pt->prims[i].sh, sh, sizeof *sh))
            return &pt->prims[i];
    if (pt->n_prims == WKV_MAX_PRIMS) /* a shape mix the encoder never makes */
        prim_free(&pt->prims[--pt->n_prims]);
    cprim *p = &pt->prims[pt->n_prims];
    if (prim_init(c, p, sh) != 0)
        return NULL;
    pt->n_prims++;
    return p;
}

int wkv__compute_grow(void **buf, size_t *have, size_t need)
{
    if (need <= *have)
        return 0;
    void *nb = wkv__realloc(*buf, need);
    if (!nb)
        return -1;
    *buf = nb;
    *have = need;
    return 0;
}

int wkv__compute_grow_elems(void **buf, size_t *have, size_t n, size_t elt)
{
    size_t bytes = *have * elt;
    if (wkv__compute_grow(buf, &bytes, n * elt) != 0)
        return -1;
    *have = bytes / elt;
    return 0;
}

int wkv__compute_grow_floats(float **buf, size_t *have, size_t n)
{
    return wkv__compute_grow_elems((void **)buf, have, n, sizeof(float));
}

/* Runs one matmul of shape sh on this part's stream (bias may be NULL). */
int wkv__compute_exec(const wkv__compute *c, cpart *pt, const cshape *sh, const void *src,
                const void *wei, const float *bias, void *dst)
{
    if (c->force_fallback)
        return -1;
    /* oneDNN under OpenMP runs on omp_get_max_threads() of the calling thread: one,
     * since this part is one of the context's `threads` */
    omp_set_num_threads(1);
    cprim *p = prim_get(c, pt, sh);
    if (p && p->scr_bytes > pt->scratch_bytes) {
        /* oneDNN's kernels want it cache-line aligned; its contents need not survive */
        wkv__free(pt->scratch);
        pt->scratch_bytes = 0;
        if (wkv__memalign(&pt->scratch, 64, p->scr_bytes) != 0)
            pt->scratch = NULL;
        else
            pt->scratch_bytes = p->scr_bytes;
    }
    if (!p || (p->scr_bytes && !pt->scratch) ||
        dnnl_memory_set_data_handle(p->scr, pt->scratch) != dnnl_success ||
        dnnl_memory_set_data_handle(p->src, (void *)src) != dnnl_success ||
        dnnl_memory_set_data_handle(p->wei, (void *)wei) != dnnl_success ||
        dnnl_memory_set_data_handle(p->dst, dst) != dnnl_success ||
        (p->bia && dnnl_memory_set_data_handle(p->bia, (void *)bias) != dnnl_success))
        return -1;
    dnnl_exec_arg_t args[5] = {
        {DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->wei}, {DNNL_ARG_DST, p->dst},
        {DNNL_ARG_SCRATCHPAD, p->scr}, {DNNL_ARG_BIAS, p->bia}};
    if (dnnl_primitive_execute(p->prim, pt->stream, p->bia ? 5 : 4, args) != dnnl_success ||
        dnnl_stream_wait(pt->stream) != dnnl_success)
        return -1;
    return 0;
}

/* The flags' work on a finished output row r (n values): GELU, then its conversion
 * into row r of qx (the next call's x; qx already has room for it). */
static void finish_row(const wkv__compute *c, cpart *pt, float *o, int n, int r, int flags)
{
    if (flags & WKV_LIN_GELU)
        wkv__gelu(o, (size_t)n);
    if (!(flags & WKV_LIN_KEEP))
        return;
    if (c->type == WKV_COMPUTE_INT8)
        pt->row_scale[r] = wkv__compute_quantize_row(o, n, (int8_t *)pt->qx + (size_t)r * n);
    else
        wkv__to_bf16(o, (size_t)n, 1.0f, (uint16_t *)pt->qx + (size_t)r * n);
}

static int run(const wkv__compute *c, cpart *pt, const cweight *cw, const float *x, int rows,
               const float *b, float *out, int accumulate, int flags)
{
    const int k = cw->in, n = cw->n, i8 = c->type == WKV_COMPUTE_INT8;
    size_t elt = i8 ? 1 : 2;
    if (accumulate && (flags & (WKV_LIN_GELU | WKV_LIN_KEEP)))
        return -1; /* a sum's rows are not finished here; no caller asks */
    if ((flags & WKV_LIN_SAME_X) && pt->qx_rows == rows && pt->qx_k == k)
        goto convert_done;
    pt->qx_rows = 0;
    if (wkv__compute_grow(&pt->qx, &pt->qx_bytes, (size_t)rows * k * elt) != 0)
        return -1;
    if (i8) {
        if (wkv__compute_grow_floats(&pt->row_scale, &pt->rows_n, (size_t)rows) != 0)
            return -1;
        for (int r = 0; r < rows; r++)
            pt->row_scale[r] = wkv__compute_quantize_row(x + (size_t)r * k, k, (int8_t *)pt->qx + (size_t)r * k);
    } else {
        wkv__to_bf16(x, (size_t)rows * k, 1.0f, pt->qx);
    }
    pt->qx_rows = rows, pt->qx_k = k;
convert_done:
    if (i8 && accumulate) {
        /* the s32 products of WKV_ACC_ROWS rows at a time, added to out (else they go
         * into `out` itself, the same size, and are dequantized in place) */
        const int blk = rows < WKV_ACC_ROWS ? rows : WKV_ACC_ROWS;
        if (wkv__compute_grow_elems((void **)&pt->acc, &pt->acc_n, (size_t)blk * n,
                                   sizeof(int32_t)) != 0)
            return -1;
        for (int r0 = 0; r0 < rows; r0 += blk) {
            const int m = rows - r0 < blk ? rows - r0 : blk;
            cshape sh = linear_shape(c, m, k, n, 0, 1);
            if (wkv__compute_exec(c, pt, &sh, (const int8_t *)pt->qx + (size_t)r0 * k, cw->q, NULL,
                     pt->acc) != 0)
                return -1;
            for (int r = 0; r < m; r++)
                dequant_row_add(pt->acc + (size_t)r * n, n, pt->row_scale[r0 + r], cw->scale, b,
                                out + (size_t)(r0 + r) * n);
        }
        return 0;
    }
    cshape sh = linear_shape(c, rows, k, n, b != NULL, accumulate);
    if (wkv__compute_exec(c, pt, &sh, pt->qx, cw->q, b, out) != 0)
        return -1;
    if (flags & WKV_LIN_KEEP) {
        /* x's copy is no longer needed: qx becomes the output rows' */
        pt->qx_rows = 0;
        if (wkv__compute_grow(&pt->qx, &pt->qx_bytes, (size_t)rows * n * elt) != 0)
            return -1;
        if (i8 && wkv__compute_grow_floats(&pt->row_scale, &pt->rows_n, (size_t)rows) != 0)
            return -1;
    }
    for (int r = 0; r < rows; r++) {
        float *o = out + (size_t)r * n;
        if (i8)
            wkv__compute_dequant_in_place(o, n, pt->row_scale[r], cw->scale, b);
        finish_row(c, pt, o, n, r, flags);
    }
    if (flags & WKV_LIN_KEEP)
        pt->qx_rows = rows, pt->qx_k = n;
    return 0;
}

const wkv__cweight *wkv__compute_weight(const wkv__compute *c, const void *key, int n, int in)
{
    for (int i = 0; c && i < c->n_w; i++)
        if (c->w[i].src.data == key && c->w[i].n == n && c->w[i].in == in)
            return &c->w[i];
    return NULL;
}

typedef struct {
    wkv__compute *c;
    int count;
} convert_job;

static void convert_part(void *arg, int part, int n_parts)
{
    convert_job *j = arg;
    wkv__compute *c = j->c;
    for (int i = 0; i < j->count; i++) {
        cweight *cw = &c->slot[i];
        int r0, r1;
        wkv__pool_share(cw->n, part, n_parts, &r0, &r1);
        if (cw->src.data)
            convert_rows(cw, c->type, r0, r1, c->parts[part].wrow);
    }
}

void wkv__compute_convert(wkv__compute *c, wkv__pool *pool, int count, const wkv__mat *const *src,
                         const int *n, const int *in, const wkv__cweight **cw)
{
    if (count > WKV_COMPUTE_SLOTS)
        count = WKV_COMPUTE_SLOTS;
    for (int i = 0; i < count; i++) {
        cweight *s = &c->slot[i];
        size_t need = (size_t)n[i] * (size_t)in[i];
        int fits = src[i]->data && n[i] > 0 && in[i] > 0 && in[i] <= c->max_in &&
                   need <= c->cap[i] && (size_t)n[i] <= c->cap_rows[i] &&
                   in[i] % wkv__qtype_must(src[i]->type, "wkv__compute_convert")->block_elems == 0;
        s->src = fits ? *src[i] : (wkv__mat){0};
        s->n = fits ? n[i] : 0;
        s->in = fits ? in[i] : 0;
        cw[i] = fits ? s : NULL;
    }
    /* one row buffer per part: the pool may not have more parts than were made */
    convert_job j = {c, count};
    if (wkv__pool_parts(pool) <= c->n_parts)
        wkv__pool_run(pool, convert_part, &j);
    else
        convert_part(&j, 0, 1);
}

size_t wkv__compute_scratch_bytes(const wkv__compute *c)
{
    if (!c)
        return 0;
    const size_t elt = c->type == WKV_COMPUTE_BF16 ? sizeof(uint16_t) : 1;
    size_t bytes = 0;
    for (int i = 0; i < WKV_COMPUTE_SLOTS; i++)
        bytes += c->cap[i] * elt + (c->type == WKV_COMPUTE_BF16 ? 0 : c->cap_rows[i] * sizeof(float));
    for (int i = 0; i < c->n_w; i++)
        bytes += (size_t)c->w[i].n * c->w[i].in * elt +
                 (c->w[i].scale ? (size_t)c->w[i].n * sizeof(float) : 0);
    bytes += c->kv_elems * sizeof(uint16_t) * (c->k16 ? 2 : 1);
    if (c->k8)
        bytes += c->kv_elems + c->kv_elems / c->hd * sizeof(float); /* T x n_head scales */
    for (int p = 0; p < c->n_parts; p++) {
        const cpart *pt = &c->parts[p];
        bytes += pt->qx_bytes + pt->att16_bytes + (pt->rows_n + pt->dense_n) * sizeof(float) +
                 pt->scratch_bytes +
                 pt->acc_n * sizeof(int32_t) + (size_t)c->max_in * sizeof(float);
    }
    return bytes;
}

int wkv__compute_linear(wkv__compute *c, int part, const float *x, int r0, int r1, int in,
                       const wkv__cweight *w, const float *b, int n, float *out, int accumulate,
                       int flags)
{
    if (r1 <= r0)
        return 0;
    if (part < 0 || part >= c->n_parts)
        return -1;
    if (w && run(c, &c->parts[part], w, x + (size_t)r0 * in, r1 - r0, b, out + (size_t)r0 * n,
                 accumulate, flags) == 0)
        return 0;
    c->parts[part].qx_rows = 0; /* its rows were not converted: no reuse */
    c->parts[part].fallbacks++;
    return -1;
}

int wkv__compute_fallbacks(const wkv__compute *c)
{
    int n = 0;
    for (int p = 0; c && p < c->n_parts; p++)
        n += c->parts[p].fallbacks;
    return n;
}

void wkv__compute_force_fallback(wkv__compute *c, int on)
{
    if (c)
        c->force_fallback = on;
}

void wkv__compute_free(wkv__compute *c)
{
    if (!c)
        return;
    wkv__free(c->k16);
    wkv__free(c->k8);
    wkv__free(c->k_scale);
    wkv__free(c->v16);
    for (int i = 0; i < 2; i++) {
        wkv__free(c->w[i].q);
        wkv__free(c->w[i].scale);
    }
    for (int i = 0; i < WKV_COMPUTE_SLOTS; i++) {
        wkv__free(c->slot[i].q);
        wkv__free(c->slot[i].scale);
    }
    for (int p = 0; c->parts && p < c->n_parts; p++) {
        cpart *pt = &c->parts[p];
        for (int i = 0; i < pt->n_prims; i++)
            prim_free(&pt->prims[i]);
        if (pt->stream)
            dnnl_stream_destroy(pt->stream);
        wkv__free(pt->qx);
        wkv__free(pt->att16);
        wkv__free(pt->row_scale);
        wkv__free(pt->dense);
        wkv__free(pt->scratch);
        wkv__free(pt->acc);
        wkv__free(pt->wrow);
    }
    wkv__free(c->parts);
    if (c->engine)
        dnnl_engine_destroy(c->engine);
    wkv__free(c);
}

wkv__compute *wkv__compute_new(const wkv_model *m, wkv_compute_type type, int n_parts,
                             char **error)
{
    if (type != WKV_COMPUTE_BF16 && type != WKV_COMPUTE_INT8) {
        wkv__set_error(error, "compute type %s runs without oneDNN", wkv_compute_type_name(type));
        return NULL;
    }
    if (type == WKV_COMPUTE_INT8 && !wkv__cpu_vnni()) {
        /* measured on an AMD EPYC (Zen 3, AVX2, no VNNI): the encoder's output 7 % off
         * f32 (test compute's bound: 3 %), and some products falling back to f32 */
        const dnnl_version_t *v = dnnl_version();
        wkv__set_error(error, "oneDNN %d.%d has no accurate int8 matmul on this CPU (no "
                      "VNNI)", v->major, v->minor);
        return NULL;
    }
    const int native_bf16 = wkv__bf16_isa() >= WKV_ISA_AVX512_BF16;
    if (type == WKV_COMPUTE_BF16 && !native_bf16) {
        /* oneDNN 2.6 emulates bf16 on AVX-512 without it: on an Intel Xeon of family
         * 6 model 85 its bf16 matmul peak was 25.6 GOP/s a thread against f32's 121.3,
         * so bf16 would be slower and less accurate than f32 */
        const dnnl_version_t *v = dnnl_version();
        wkv__set_error(error, "oneDNN %d.%d has no native bf16 matmul on this CPU (no "
                      "AVX512_BF16: it would emulate it, slower than f32)", v->major, v->minor);
        return NULL;
    }
    const wkv_hparams *hp = &m->hp;
    const int d = hp->n_audio_state;
    wkv__compute *c = wkv__calloc(1, sizeof *c);
    if (!c)
        goto oom;
    c->type = type;
    c->n_parts = n_parts > 0 ? n_parts : 1;
    c->parts = wkv__calloc((size_t)c->n_parts, sizeof *c->parts);
    c->T = hp->n_audio_ctx;
    c->hd = d / hp->n_audio_head;
    c->kv_elems = (size_t)hp->n_audio_ctx * d;
    c->pv_f32 = type == WKV_COMPUTE_INT8 && !native_bf16;
    if (type == WKV_COMPUTE_INT8) {
        c->k8 = wkv__malloc(c->kv_elems);
        c->k_scale = wkv__malloc((size_t)hp->n_audio_ctx * hp->n_audio_head * sizeof(float));
    } else
        c->k16 = wkv__malloc(c->kv_elems * sizeof(uint16_t));
    c->v16 = wkv__malloc(c->kv_elems * sizeof(uint16_t));
    if (!c->parts || !(c->k16 || (c->k8 && c->k_scale)) || !c->v16)
        goto oom;
    /* the layer scratch, shaped for an encoder layer (q, k, v, o: d x d; mlp0: 4d x d;
     * mlp2: d x 4d), which also holds a decoder layer's cross K/V projections (d x d)
     * when the text state is as wide; pages are touched by the first conversion */
    const size_t dd = (size_t)d * d;
    const size_t cap[WKV_COMPUTE_SLOTS] = {dd, dd, dd, dd, 4 * dd, 4 * dd};
    const size_t rows[WKV_COMPUTE_SLOTS] = {d, d, d, d, 4 * (size_t)d, d};
    for (int i = 0; i < WKV_COMPUTE_SLOTS; i++) {
        if (cweight_alloc(&c->slot[i], type, cap[i], rows[i]) != 0)
            goto oom;
        c->cap[i] = cap[i];
        c->cap_rows[i] = rows[i];
    }
    c->max_in = 4 * d > 3 * hp->n_mels ? 4 * d : 3 * hp->n_mels;
    for (int p = 0; p < c->n_parts; p++)
        if (!(c->parts[p].wrow = wkv__malloc((size_t)c->max_in * sizeof(float))))
            goto oom;
    /* the convolutions (1 % of the weights at base, f16 or f32): converted once */
    c->w[0] = (cweight){m->w.conv1, d, hp->n_mels * 3, NULL, NULL};
    c->w[1] = (cweight){m->w.conv2, d, d * 3, NULL, NULL};
    c->n_w = 2;
    for (int i = 0; i < c->n_w; i++) {
        if (!c->w[i].src.data ||
            cweight_alloc(&c->w[i], type, (size_t)c->w[i].n * c->w[i].in, (size_t)c->w[i].n) != 0)
            goto oom;
        convert_rows(&c->w[i], type, 0, c->w[i].n, c->parts[0].wrow);
    }
    if (dnnl_engine_create(&c->engine, dnnl_cpu, 0) != dnnl_success) {
        wkv__set_error(error, "oneDNN: no CPU engine");
        goto fail;
    }
    for (int p = 0; p < c->n_parts; p++)
        if (dnnl_stream_create(&c->parts[p].stream, c->engine, dnnl_stream_default_flags) !=
            dnnl_success) {
            wkv__set_error(error, "oneDNN: cannot create a stream");
            goto fail;
        }
    /* a primitive of the encoder's shape now: a CPU without the instructions the type
     * needs is an error here rather than a silent f32 fallback at every product */
    cprim probe;
    cshape sh = linear_shape(c, 16, d, d, 1, 1);
    if (prim_init(c, &probe, &sh) != 0) {
        const dnnl_version_t *v = dnnl_version();
        wkv__set_error(error, "oneDNN %d.%d has no %s matmul on this CPU",
                      v->major, v->minor, wkv_compute_type_name(type));
        goto fail;
    }
    prim_free(&probe);
    return c;
oom:
    wkv__set_error(error, "out of memory converting the encoder weights to %s",
                  wkv_compute_type_name(type));
fail:
    wkv__compute_free(c);
    return NULL;
}
