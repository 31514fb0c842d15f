/* Decoding contexts: creation (every buffer sized once from the model), the
 * encoder entry point that also refills the cross-KV cache, and accessors. */
#include "base/blas.h"
#include "base/util.h"
#include "net/context.h"
#include "base/cpu.h"
#include "whisperkv_debug.h"
#include "model/quant.h"

#include <stdlib.h>
#include <string.h>

void wkv_context_free(wkv_context *ctx)
{
    if (!ctx)
        return;
    wkv__free(ctx->arena_raw);
    float *bufs[] = {ctx->enc_out, ctx->enc_mlp, ctx->logits, ctx->step_margins};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        wkv__free(bufs[i]);
    wkv__cross_kv_free(&ctx->cross);
    wkv__cross_kv_free(&ctx->pad);
    wkv__self_kv_free(&ctx->self);
    wkv__pool_free(ctx->pool);
    wkv__backend_free(ctx->encoder);
    wkv__free(ctx);
}

/* Whether the caches are half for a context on bf16/int8 (approx) or f32 with a cache
 * type asked: AUTO is half where approximation was chosen (the compute type, or a
 * quantized file: ftype beyond f32/f16). */
static int caches_half(const wkv_context *ctx, int approx, wkv_cache_type type)
{
    const int ft = ctx->model->hp.ftype % 1000;
    if (type == WKV_CACHE_AUTO)
        return approx || (ft != 0 && ft != 1);
    return type == WKV_CACHE_F16;
}

/* Puts both caches in the type that caches_half gives; the self cache's pass widens a
 * layer into enc_mlp (2 n_audio_ctx x d floats at least), so it is half only while
 * n_text_ctx <= n_audio_ctx (every Whisper model: 448 and 1500).  0, or -1 with the
 * old types kept (as far as memory allows). */
static int set_caches(wkv_context *ctx, int approx, wkv_cache_type type)
{
    const wkv_hparams *hp = &ctx->model->hp;
    const int half = caches_half(ctx, approx, type);
    const int was = wkv__cross_half(&ctx->cross);
    if (wkv__cross_kv_set_f16(&ctx->cross, half) != 0 ||
        wkv__self_kv_set_f16(&ctx->self, half && hp->n_text_ctx <= hp->n_audio_ctx) != 0) {
        wkv__cross_kv_set_f16(&ctx->cross, was); /* back, if it can */
        return -1;
    }
    ctx->pad.valid = 0; /* made again, in the new type, when next needed */
    return 0;
}

wkv_context *wkv_context_new(const wkv_model *model, int threads, char **error)
{
    if (!model) {
        wkv__set_error(error, "no model");
        return NULL;
    }
    wkv_context *ctx = wkv__calloc(1, sizeof *ctx);
    if (!ctx) {
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    ctx->model = model;
    ctx->threads = threads > 0 ? threads : 1;
    ctx->drafts = 1;
    ctx->enc_frames = model->hp.n_audio_ctx;
    ctx->compute_type = WKV_COMPUTE_F32;
    ctx->pool = wkv__pool_new(ctx->threads); /* NULL: everything on this thread */
    wkv__blas_single_threaded();
    const wkv_hparams *hp = &model->hp;
    size_t d = (size_t)hp->n_audio_state, T = (size_t)hp->n_audio_ctx;
    /* the backends' scratch: the arena's encoder phase, and the work buffer, which is
     * also the half cross cache's stage (K and V of a layer) */
    size_t enc_floats, mlp;
    wkv__backend_sizes(model, wkv__pool_parts(ctx->pool), &enc_floats, &mlp);
    if (mlp < 2 * T * d)
        mlp = 2 * T * d;
    ctx->enc_mlp_floats = mlp;
    int ok = (ctx->enc_out = wkv__alloc_zeroed(T * d * sizeof(float))) != NULL &&
             (ctx->enc_mlp = wkv__alloc_zeroed(mlp * sizeof(float))) != NULL;
    ctx->activation_bytes += (T * d + mlp) * sizeof(float);
    /* the encoder's scratch in the arena (context.h), then the decoder's over it */
    size_t dec_floats = wkv__decoder_arena_floats(ctx);
    size_t arena = enc_floats > dec_floats ? enc_floats : dec_floats;
    ok = ok && (ctx->arena = wkv__alloc_zeroed_lines(arena * sizeof(float), &ctx->arena_raw)) != NULL;
    ctx->activation_bytes += arena * sizeof(float);
    ok = ok && (ctx->encoder = wkv__backend_new(&(wkv__backend_lend){model, ctx->pool, ctx->arena,
                                                                      ctx->enc_mlp, mlp},
                                                WKV_COMPUTE_F32, NULL)) != NULL;
    ok = ok && wkv__decoder_alloc(ctx) == 0;
    ok = ok && set_caches(ctx, 0, WKV_CACHE_AUTO) == 0; /* half for a quantized file */
    if (!ok) {
        wkv_context_free(ctx);
        wkv__set_error(error, "out of memory allocating a decoding context");
        return NULL;
    }
    return ctx;
}

int wkv_context_set_compute_type(wkv_context *ctx, wkv_compute_type type, char **error)
{
    if (type == WKV_COMPUTE_AUTO) {
        /* exact for f32/f16 files; the user of a quantized file chose approximation,
         * where this CPU computes int8 accurately (else f32) */
        int ft = ctx->model->hp.ftype % 1000;
#ifdef WKV_HAVE_DNNL
        type = ft == 0 || ft == 1 || !wkv__cpu_vnni() ? WKV_COMPUTE_F32 : WKV_COMPUTE_INT8;
#else
        (void)ft;
        type = WKV_COMPUTE_F32;
#endif
    }
    if (type == WKV_COMPUTE_AUTO || (unsigned)type >= (unsigned)wkv_compute_type_count()) {
        wkv__set_error(error, "unknown compute type %d", (int)type);
        return -1;
    }
    if (type == ctx->compute_type)
        return 0;
    const wkv__backend_lend lend = {ctx->model, ctx->pool, ctx->arena, ctx->enc_mlp,
                                    ctx->enc_mlp_floats};
    wkv__encoder *e = wkv__backend_new(&lend, type, error);
    if (!e)
        return -1;
    if (set_caches(ctx, type != WKV_COMPUTE_F32, ctx->cache_type) != 0) {
        wkv__backend_free(e);
        wkv__set_error(error, "out of memory");
        return -1;
    }
    wkv__backend_free(ctx->encoder);
    ctx->encoder = e;
    ctx->compute_type = type;
    ctx->pad.valid = 0; /* the padding's K/V on the new type, when next needed */
    return 0;
}

wkv_compute_type wkv_context_compute_type(const wkv_context *ctx)
{
    return ctx->compute_type;
}

int wkv_context_set_cache_type(wkv_context *ctx, wkv_cache_type type, char **error)
{
    if (type != WKV_CACHE_AUTO && type != WKV_CACHE_F32 && type != WKV_CACHE_F16) {
        wkv__set_error(error, "unknown cache type %d", (int)type);
        return -1;
    }
    if (set_caches(ctx, ctx->compute_type != WKV_COMPUTE_F32, type) != 0) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    ctx->cache_type = type;
    return 0;
}

wkv_cache_type wkv_context_cache_type(const wkv_context *ctx)
{
    return wkv__cross_half(&ctx->cross) ? WKV_CACHE_F16 : WKV_CACHE_F32;
}

const wkv_model *wkv_context_model(const wkv_context *ctx)
{
    return ctx->model;
}

void wkv_context_memory(const wkv_context *ctx, size_t *cache_bytes, size_t *activation_bytes)
{
    const wkv__cross_kv *c = &ctx->cross;
    const wkv__self_kv *sk = &ctx->self;
    size_t cross = 2 * (size_t)c->n_layer * c->n_ctx * c->n_state *
                   (wkv__cross_half(c) ? sizeof(uint16_t) : sizeof(float));
    const wkv__cross_kv *p = &ctx->pad;
    if (p->k || p->k16) /* audio_ctx AUTO's padding (padding.c) */
        cross += 2 * (size_t)p->n_layer * p->n_ctx * p->n_state *
                 (wkv__cross_half(p) ? sizeof(uint16_t) : sizeof(float));
    size_t self = (size_t)sk->n_slots *
                  (2 * wkv__self_offset(sk, 1, 0) * (wkv__self_half(sk) ? sizeof(uint16_t) : sizeof(float)) +
                   ((size_t)sk->n_ctx + 1) * sizeof(int));
    if (cache_bytes)
        *cache_bytes = cross + self;
    if (activation_bytes)
        *activation_bytes = ctx->activation_bytes + wkv__backend_bytes(ctx->encoder);
}

const wkv_stats *wkv_context_stats(const wkv_context *ctx)
{
    return &ctx->stats;
}

const float *wkv_context_step_margins(const wkv_context *ctx, int *n)
{
    *n = ctx->n_steps;
    return ctx->step_margins;
}

void wkv_debug_set_drafts(wkv_context *ctx, int on)
{
    ctx->drafts = on != 0;
}

/* AUTO's margin past the audio: the last word's frames see a little padding after
 * them, as in a 30-s window (without it the trained model cut a run's last word). */
#define AUDIO_CTX_MARGIN 32

int wkv_audio_ctx_auto(const wkv_model *model, int frames)
{
    const int full = model->hp.n_audio_ctx;
    if (frames < 0 || frames > full)
        return full;
    int n = (frames + AUDIO_CTX_MARGIN + 63) / 64 * 64;
    n = n < WKV_AUDIO_CTX_MIN ? WKV_AUDIO_CTX_MIN : n;
    return n < full ? n : full;
}

int wkv__audio_ctx_frames(const wkv_model *m, int audio_ctx, int mel_frames)
{
    const int full = m->hp.n_audio_ctx;
    if (audio_ctx == WKV_AUDIO_CTX_AUTO)
        return wkv_audio_ctx_auto(m, (mel_frames + 1) / 2);
    return audio_ctx <= 0 || audio_ctx > full ? full : audio_ctx;
}

int wkv__audio_ctx_check(int audio_ctx, char **error)
{
    if (audio_ctx >= 0 || audio_ctx == WKV_AUDIO_CTX_AUTO)
        return 0;
    wkv__set_error(error, "audio_ctx %d: 0 (all), a number of encoder frames, or "
                  "WKV_AUDIO_CTX_AUTO", audio_ctx);
    return -1;
}

int wkv_encode(wkv_context *ctx, const float *mel)
{
    return wkv_encode_frames(ctx, mel, 0);
}

int wkv_encode_frames(wkv_context *ctx, const float *mel, int n_frames)
{
    return wkv__encode_padded(ctx, mel, n_frames, NULL);
}

int wkv__encode_padded(wkv_context *ctx, const float *mel, int n_frames,
                       const wkv__cross_kv *pad)
{
    const int full = ctx->model->hp.n_audio_ctx;
    if (n_frames < 0)
        return -1;
    n_frames = n_frames == 0 || n_frames > full ? full : n_frames;
    double t0 = wkv__now_ms();
    ctx->pass_n = 0; /* the arena's decoder rows are about to be overwritten */
    if (wkv__encoder_run(ctx, mel, n_frames) != 0)
        return -1;
    double t1 = wkv__now_ms();
    ctx->stats.encoder_runs++;
    ctx->stats.encode_ms += t1 - t0;
    /* a new window: its cross K/V once (the padding's past n_frames, when given: the
     * decoder then attends over the whole window), and an empty sequence */
    wkv__context_fill_cross(ctx);
    if (pad && n_frames < full) {
        wkv__cross_kv_copy_rows(&ctx->cross, pad, n_frames);
        ctx->cross.n_frames = full;
    }
    ctx->stats.decode_ms += wkv__now_ms() - t1;
    wkv_decode_reset(ctx);
    return 0;
}

const float *wkv_encoder_output(const wkv_context *ctx)
{
    return ctx->enc_out;
}
