/* The CPU encoder backend's table (compute/backend.h): its instances, their buffers
 * and the types it takes.  The run is encoder.c's, the fill cross.c's. */
#include "cpu/cpu.h"
#include "base/util.h"
#include "model/quant.h"

#include <stdlib.h>

/* A buffer's floats rounded up to 64 bytes, so that every buffer carved from the
 * arena starts as aligned as the arena itself. */
static size_t round64(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* The scratch it carves from the arena, in this order (sizes: cpu.h). */
static void arena_parts(const wkv_hparams *hp, int n_parts, size_t n[7])
{
    const size_t d = (size_t)hp->n_audio_state, T = (size_t)hp->n_audio_ctx;
    n[0] = (size_t)n_parts * WKV_ENC_CONV_ROWS * wkv__enc_cols_width(hp);
    for (int i = 1; i <= 5; i++) /* x, h, q, k, v */
        n[i] = T * d;
    n[6] = (size_t)n_parts * WKV_ENC_QBLOCK * T;
}

static int takes(wkv_compute_type type)
{
    /* bf16/int8 without oneDNN or the instructions: create says so (compute.h) */
    return type == WKV_COMPUTE_F32 || type == WKV_COMPUTE_BF16 || type == WKV_COMPUTE_INT8;
}

static void sizes(const wkv_model *m, int n_parts, size_t *arena_floats, size_t *work_floats)
{
    const wkv_hparams *hp = &m->hp;
    size_t n[7];
    arena_parts(hp, n_parts, n);
    *arena_floats = 0;
    for (int i = 0; i < 7; i++)
        *arena_floats += round64(n[i]);
    /* the MLP's blocks, or conv1's output (the half cross cache's stage: the context
     * gives the 2 T x d it needs anyway) */
    *work_floats = (size_t)n_parts * 4 * (size_t)hp->n_audio_state *
                   (size_t)wkv__enc_mlp_rows(hp->n_audio_ctx, n_parts);
}

/* Whether a product of the encoder or the cross projections reads stored matrices that
 * are not f32 (they are widened into enc_wl, one group at a time, just before use). */
static int needs_widening(const wkv_model *m)
{
    int widen = 0;
    for (int l = 0; l < m->hp.n_audio_layer; l++) {
        const wkv__layer *L = &m->w.enc[l];
        const wkv__mat *v[] = {&L->attn_q, &L->attn_k, &L->attn_v, &L->attn_o, &L->mlp0, &L->mlp2};
        for (int i = 0; i < 6; i++)
            widen |= v[i]->type != WKV_TYPE_F32;
    }
    for (int l = 0; l < m->hp.n_text_layer; l++)
        widen |= m->w.dec[l].cross_k.type != WKV_TYPE_F32 ||
                 m->w.dec[l].cross_v.type != WKV_TYPE_F32;
    return widen || m->w.conv1.type != WKV_TYPE_F32 || m->w.conv2.type != WKV_TYPE_F32;
}

static void cpu_free(wkv__encoder *e)
{
    wkv__cpu *c = (wkv__cpu *)e;
    if (!c)
        return;
    wkv__compute_free(c->compute);
    wkv__free(c->enc_wl);
    pthread_mutex_destroy(&c->widen_lock);
    wkv__free(c);
}

extern const wkv__backend wkv__backend_cpu;

static wkv__encoder *create(const wkv__backend_lend *lend, wkv_compute_type type,
                            char **error)
{
    const wkv_model *m = lend->model;
    const int n_parts = wkv__pool_parts(lend->pool);
    wkv__cpu *c = wkv__calloc(1, sizeof *c);
    if (!c) {
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&c->widen_lock, NULL);
    c->base.backend = &wkv__backend_cpu;
    c->model = m;
    c->pool = lend->pool;
    c->enc_mlp = lend->work;
    float **bufs[7] = {&c->enc_cols, &c->enc_x, &c->enc_h, &c->enc_q, &c->enc_k, &c->enc_v,
                       &c->enc_scores};
    size_t n[7];
    arena_parts(&m->hp, n_parts, n);
    float *p = lend->arena;
    for (int i = 0; i < 7; i++) {
        *bufs[i] = p;
        p += round64(n[i]);
    }
    /* not written here: the f32 path widens into all of it every window (the first
     * makes it resident); a compute type touches it only if a product falls back */
    if (needs_widening(m) && !(c->enc_wl = wkv__malloc(wkv__enc_wl_floats(&m->hp) * sizeof(float)))) {
        cpu_free(&c->base);
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    if (type != WKV_COMPUTE_F32 && !(c->compute = wkv__compute_new(m, type, n_parts, error))) {
        cpu_free(&c->base);
        return NULL;
    }
    return &c->base;
}

static size_t bytes(const wkv__encoder *e)
{
    const wkv__cpu *c = (const wkv__cpu *)e;
    /* the widening scratch counts while f32 products widen into it every window; a
     * compute type's products use their own copies and widen only if one fails, so
     * its pages stay untouched (out of RSS) until then */
    if (c->compute)
        return wkv__compute_scratch_bytes(c->compute);
    return c->enc_wl ? wkv__enc_wl_floats(&c->model->hp) * sizeof(float) : 0;
}

wkv__compute *wkv__cpu_compute(const wkv__encoder *e)
{
    return e && e->backend == &wkv__backend_cpu ? ((const wkv__cpu *)e)->compute : NULL;
}

const wkv__backend wkv__backend_cpu = {
    .name = "cpu",
    .takes = takes,
    .sizes = sizes,
    .create = create,
    .run = wkv__cpu_run,
    .fill = wkv__cpu_fill,
    .bytes = bytes,
    .free = cpu_free,
};
