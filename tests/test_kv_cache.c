/* The KV caches change nothing but speed: cached logits equal uncached logits over
 * many steps, a batched prompt pass equals token-by-token steps, and the cross K/V
 * projections run exactly once per window.  And the arena the encoder's scratch and
 * the decoder's activations share (context.h) carries nothing from one phase to the
 * next: a context that decoded one window, then encoded another, decodes it bit for
 * bit as a context that only saw that one, and an encode forgets the last pass's rows.
 * Usage: test_kv_cache MODEL.bin */
#include "net/context.h"
#include "testutil.h"
#include "whisperkv_debug.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 40

static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* One encode's stage times (wkv_stats' enc_*_ms): every stage timed, and together the
 * whole of encode_ms but for the call into the encoder. */
static void check_stages(const wkv_stats *a, const wkv_stats *b)
{
    const double stages[] = {b->enc_conv_ms - a->enc_conv_ms, b->enc_qkv_ms - a->enc_qkv_ms,
                             b->enc_attention_ms - a->enc_attention_ms,
                             b->enc_out_ms - a->enc_out_ms, b->enc_mlp_ms - a->enc_mlp_ms};
    const double weights = b->enc_weights_ms - a->enc_weights_ms;
    const double encode = b->encode_ms - a->encode_ms;
    double sum = weights;
    for (int i = 0; i < 5; i++) {
        CHECK(stages[i] > 0, "encoder stage %d took %g ms", i, stages[i]);
        sum += stages[i];
    }
    CHECK(weights >= 0, "the weights' stage took %g ms", weights);
    CHECK(sum <= encode + 1e-6 && sum >= 0.99 * encode - 0.05,
          "the encoder's stages sum to %.3f ms of its %.3f ms", sum, encode);
    printf("encoder stages, ms: conv %.2f, weights %.2f, qkv %.2f, attention %.2f, out %.2f, "
           "mlp %.2f; encode %.2f\n", stages[0], weights, stages[1], stages[2], stages[3],
           stages[4], encode);
}

/* A few seconds of tones and noise, so the window is not silence. */
static float *make_audio(size_t n)
{
    float *pcm = malloc(n * sizeof *pcm);
    for (size_t i = 0; i < n; i++)
        pcm[i] = 0.3f * sinf(2 * (float)M_PI * 220.0f * (float)i / 16000) +
                 0.1f * sinf(2 * (float)M_PI * 1250.0f * (float)i / 16000) +
                 0.05f * ((float)(rnd() % 2001) / 1000.0f - 1.0f);
    return pcm;
}

/* Logits of every prefix of seq, one wkv_decode call per token in `mode`. */
static float *step_logits(wkv_context *ctx, const int *seq, int n, wkv_cache_mode mode,
                          int n_vocab)
{
    float *all = malloc((size_t)n * n_vocab * sizeof *all);
    wkv_decode_reset(ctx);
    for (int i = 0; i < n; i++)
        CHECK(wkv_decode_mode(ctx, seq + i, 1, mode, all + (size_t)i * n_vocab) == 0,
              "decode step %d mode %d", i, mode);
    return all;
}

static void check_arena(wkv_model *model, const float *win_a, const float *win_b,
                        const int *seq, int n_vocab)
{
    wkv_context *used = wkv_context_new(model, 2, NULL), *fresh = wkv_context_new(model, 2, NULL);
    float *lu = malloc((size_t)n_vocab * sizeof *lu), *lf = malloc((size_t)n_vocab * sizeof *lf);
    CHECK(wkv_encode(used, win_a) == 0 && wkv_decode(used, seq, 12, lu) == 0, "window A");
    CHECK(wkv__decoder_logits_at(used, 11, lu) == 0, "the pass's last row, right after it");
    CHECK(wkv_encode(used, win_b) == 0 && wkv_encode(fresh, win_b) == 0, "window B");
    CHECK(wkv__decoder_logits_at(used, 11, lu) != 0,
          "after an encode the last pass's rows (overwritten) are still served");
    int differ = 0;
    for (int i = 0; i < STEPS; i++) {
        CHECK(wkv_decode(used, seq + i, 1, lu) == 0 && wkv_decode(fresh, seq + i, 1, lf) == 0,
              "step %d", i);
        differ += memcmp(lu, lf, (size_t)n_vocab * sizeof *lu) != 0;
    }
    wkv_decode_reset(used);
    wkv_decode_reset(fresh);
    CHECK(wkv_decode(used, seq, 12, lu) == 0 && wkv_decode(fresh, seq, 12, lf) == 0, "pass");
    differ += memcmp(lu, lf, (size_t)n_vocab * sizeof *lu) != 0;
    CHECK(differ == 0, "%d of %d logit rows differ between a context that decoded another "
          "window first and a fresh one", differ, STEPS + 1);
    printf("arena: window B after window A's decoding, %d steps and a pass: %d rows differ\n",
           STEPS, differ);
    free(lu);
    free(lf);
    wkv_context_free(used);
    wkv_context_free(fresh);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_kv_cache MODEL\n");
        return 2;
    }
    char *err = NULL;
    wkv_model *model = wkv_model_load(argv[1], &err);
    if (!model) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const wkv_hparams *hp = wkv_model_hparams(model);
    const wkv_specials *sp = wkv_model_specials(model);
    const int n_vocab = hp->n_vocab;
    wkv_context *ctx = wkv_context_new(model, 2, NULL);
    const wkv_stats *st = wkv_context_stats(ctx);
    /* the activations' arena on a cache line (context.h): rows loaded whole */
    CHECK((uintptr_t)ctx->arena % 64 == 0 && (uintptr_t)ctx->dec_x % 64 == 0,
          "arena at %p, decoder rows at %p: not 64-byte aligned", (void *)ctx->arena,
          (void *)ctx->dec_x);

    size_t n_pcm = 16000 * 7;
    float *pcm = make_audio(n_pcm);
    wkv_mel *mel = wkv_mel_compute(model, pcm, n_pcm, 1, NULL);
    float *window = malloc((size_t)hp->n_mels * WKV_N_FRAMES * sizeof *window);
    wkv_mel_window(mel, 0, (int)mel->content_frames, WKV_MEL_GLOBAL, window);

    /* a sequence: sot, a timestamp, random text tokens */
    int seq[STEPS];
    seq[0] = sp->sot;
    seq[1] = sp->timestamp_begin;
    for (int i = 2; i < STEPS; i++)
        seq[i] = (int)(rnd() % (uint32_t)sp->eot);

    int64_t before = st->cross_kv_computes;
    CHECK(wkv_encode(ctx, window) == 0, "encode");
    CHECK(st->cross_kv_computes == before + 1, "encode computes cross K/V once (%lld)",
          (long long)(st->cross_kv_computes - before));

    float *full = step_logits(ctx, seq, STEPS, WKV_CACHE_FULL, n_vocab);
    CHECK(st->cross_kv_computes == before + 1,
          "%d cached steps computed cross K/V again (%lld times)", STEPS,
          (long long)(st->cross_kv_computes - before - 1));
    float *nocross = step_logits(ctx, seq, STEPS, WKV_CACHE_NO_CROSS, n_vocab);
    CHECK(st->cross_kv_computes == before + 1 + STEPS, "NO_CROSS recomputes every step");
    float *none = step_logits(ctx, seq, STEPS, WKV_CACHE_NONE, n_vocab);
    double worst_nc = 0, worst_none = 0;
    for (int i = 0; i < STEPS; i++) {
        size_t o = (size_t)i * n_vocab;
        double e1 = tu_rel_err(full + o, nocross + o, (size_t)n_vocab);
        double e2 = tu_rel_err(full + o, none + o, (size_t)n_vocab);
        worst_nc = e1 > worst_nc ? e1 : worst_nc;
        worst_none = e2 > worst_none ? e2 : worst_none;
    }
    CHECK(worst_nc <= 1e-4, "cached vs cross recomputed: %g", worst_nc);
    CHECK(worst_none <= 1e-4, "cached vs no cache: %g", worst_none);
    printf("%d steps: cached vs cross-recomputed %.2e, cached vs uncached %.2e (relative)\n",
           STEPS, worst_nc, worst_none);

    /* a batched pass of the first 12 tokens, then steps, equals steps all along */
    float *logits = malloc((size_t)n_vocab * sizeof *logits);
    wkv_decode_reset(ctx);
    CHECK(wkv_decode(ctx, seq, 12, logits) == 0, "batched pass");
    CHECK(wkv_decode_length(ctx) == 12, "length after batch %d", wkv_decode_length(ctx));
    double e = tu_rel_err(logits, full + (size_t)11 * n_vocab, (size_t)n_vocab);
    CHECK(e <= 1e-4, "batched prompt vs steps: %g", e);
    for (int i = 12; i < STEPS; i++)
        wkv_decode(ctx, seq + i, 1, logits);
    e = tu_rel_err(logits, full + (size_t)(STEPS - 1) * n_vocab, (size_t)n_vocab);
    CHECK(e <= 1e-4, "steps after a batch: %g", e);

    /* the cache is bounded by n_text_ctx: overflowing is an error, not a write */
    wkv_decode_reset(ctx);
    int *many = malloc((size_t)(hp->n_text_ctx + 1) * sizeof *many);
    for (int i = 0; i <= hp->n_text_ctx; i++)
        many[i] = seq[i % STEPS];
    CHECK(wkv_decode(ctx, many, hp->n_text_ctx, NULL) == 0, "fill to n_ctx");
    CHECK(wkv_decode(ctx, many, 1, NULL) != 0, "decode past n_text_ctx fails");
    CHECK(wkv_decode(ctx, (int[]){n_vocab}, 1, NULL) != 0, "bad token fails");
    free(many);

    /* a whole window decode: still one cross K/V per window */
    wkv_options o;
    wkv_options_default(&o);
    o.no_speech_threshold = 1.0f;
    int64_t c0 = st->cross_kv_computes, w0 = st->encoder_runs;
    const wkv_stats stats0 = *st;
    CHECK(wkv_encode(ctx, window) == 0, "encode");
    check_stages(&stats0, st);
    wkv_window_result r;
    CHECK(wkv_decode_window(ctx, NULL, 0, &o, &r, NULL) == 0, "decode window");
    CHECK(r.n_tokens >= 1, "window decoded %d tokens", r.n_tokens);
    CHECK(st->cross_kv_computes - c0 == 1, "window of %d tokens: cross K/V computed %lld times",
          r.n_tokens, (long long)(st->cross_kv_computes - c0));
    wkv_window_result_clear(&r);

    /* the long-form loop over 70 s: exactly one cross K/V per encoded window */
    size_t n_long = 16000 * 70;
    float *long_pcm = make_audio(n_long);
    wkv_mel *long_mel = wkv_mel_compute(model, long_pcm, n_long, 1, NULL);
    c0 = st->cross_kv_computes;
    w0 = st->encoder_runs;
    int64_t d0 = st->windows;
    o.beam_size = 3; /* beams and fallback samples share each window's cross K/V */
    o.best_of = 2;
    int segs = wkv_transcribe_mel(ctx, long_mel, &o, NULL, NULL, NULL, NULL);
    int64_t windows = st->encoder_runs - w0;
    CHECK(segs >= 0, "long-form loop");
    CHECK(windows >= 3, "70 s needs at least 3 windows, ran %lld", (long long)windows);
    CHECK(st->cross_kv_computes - c0 == windows, "%lld windows, %lld cross K/V computations",
          (long long)windows, (long long)(st->cross_kv_computes - c0));
    printf("long form: %lld decodes (temperature fallback included) on %lld windows\n",
           (long long)(st->windows - d0), (long long)windows);
    printf("long form: %lld windows, %lld cross K/V computations, %d segments\n",
           (long long)windows, (long long)(st->cross_kv_computes - c0), segs);

    /* window B: the long recording's second window */
    float *window_b = malloc((size_t)hp->n_mels * WKV_N_FRAMES * sizeof *window_b);
    wkv_mel_window(long_mel, WKV_N_FRAMES, WKV_N_FRAMES, WKV_MEL_GLOBAL, window_b);
    check_arena(model, window, window_b, seq, n_vocab);
    free(window_b);

    wkv_mel_free(long_mel);
    free(long_pcm);
    free(logits);
    free(full);
    free(nocross);
    free(none);
    free(window);
    wkv_mel_free(mel);
    free(pcm);
    wkv_context_free(ctx);
    wkv_model_free(model);
    return tu_finish("kv_cache");
}
