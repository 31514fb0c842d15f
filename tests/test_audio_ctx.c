/* audio_ctx: an encoder on the first N frames of a window (wkv_options.audio_ctx,
 * wkv_encode_frames; issue 47 item 2), on random-weight micro models.
 *  - N = 0 and N = n_audio_ctx give wkv_encode's output and logits bit for bit;
 *  - N < n_audio_ctx gives, bit for bit, the encoder output and the decoder's logits
 *    (f32 and half cross caches) of a model with the same weights whose n_audio_ctx is
 *    N (the generator seeds each tensor by its name, and the encoder's positional
 *    embedding rows are sinusoids of their index only): the encoder, the cross K/V and
 *    the decoder all see N frames and nothing past them; the bf16 and int8 encoders
 *    too, where the CPU runs them (after a whole window, whose K/V layouts were wider);
 *  - decoding with timestamps on N frames never gives a time past N x 0.02 s (also
 *    batched), and with words aligns within them;
 *  - WKV_AUDIO_CTX_AUTO: wkv_audio_ctx_auto's rounding; a live stream's runs encode the
 *    frames their audio needs, and offline a short file's single window; the decoder
 *    attends over all n_audio_ctx frames, those past the encoded ones holding, bit for
 *    bit, the cross K/V of a window of padding alone (padding.c; f32 and half caches,
 *    the padding's made again after a cache type change), and the logits are those of
 *    that cache assembled by hand;
 *  - bad values are refused with an error. */
#include "net/context.h"
#include "genlib.h"
#include "testutil.h"
#include "whisperkv.h"
#include "whisperkv_stream.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* frames of the shortened window: at least n_text_ctx (448), or the short model's self
 * cache would stay f32 where the full one's is half (context.c) */
enum { N_SHORT = 500 };

static wkv_model *micro(int n_audio_ctx)
{
    gen_params p;
    gen_params_preset(&p, "micro");
    p.n_audio_ctx = n_audio_ctx;
    p.seed = 7;
    char path[] = "/tmp/wkv-audioctx-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    close(fd);
    char *err = NULL;
    wkv_model *m = gen_model_write(path, &p, &err) == 0 ? wkv_model_load(path, &err) : NULL;
    unlink(path);
    CHECK(m != NULL, "%s", err ? err : "");
    free(err);
    return m;
}

static float *random_mel(const wkv_hparams *hp)
{
    size_t n = (size_t)hp->n_mels * WKV_N_FRAMES;
    float *mel = malloc(n * sizeof *mel);
    uint32_t seed = 11;
    for (size_t i = 0; i < n; i++)
        mel[i] = tu_frand(&seed) * 2.0f - 1.0f;
    return mel;
}

/* The logits after [sot, a few tokens], for ctx's last window. */
static void decode_logits(wkv_context *ctx, float *logits)
{
    const wkv_specials *sp = wkv_model_specials(wkv_context_model(ctx));
    int toks[4] = {sp->sot, 300, 1000, 2000};
    wkv_decode_reset(ctx);
    CHECK(wkv_decode(ctx, toks, 4, logits) == 0, "decode");
}

static void check_exact(const wkv_model *full, const wkv_model *shrt, const float *mel)
{
    const wkv_hparams *hp = wkv_model_hparams(full);
    const size_t d = (size_t)hp->n_audio_state, V = (size_t)hp->n_vocab;
    wkv_context *a = wkv_context_new(full, 2, NULL), *b = wkv_context_new(shrt, 2, NULL);
    float *la = malloc(V * sizeof *la), *lb = malloc(V * sizeof *lb);
    float *ref = malloc((size_t)hp->n_audio_ctx * d * sizeof *ref);
    float *ref_logits = malloc(V * sizeof *ref_logits);

    /* 0 and n_audio_ctx: today's wkv_encode */
    CHECK(wkv_encode(a, mel) == 0, "encode");
    memcpy(ref, wkv_encoder_output(a), (size_t)hp->n_audio_ctx * d * sizeof *ref);
    decode_logits(a, ref_logits);
    const int same[2] = {0, hp->n_audio_ctx};
    for (int i = 0; i < 2; i++) {
        CHECK(wkv_encode_frames(a, mel, same[i]) == 0, "encode %d", same[i]);
        CHECK(memcmp(ref, wkv_encoder_output(a), (size_t)hp->n_audio_ctx * d * sizeof *ref) == 0,
              "audio_ctx %d: not wkv_encode's output", same[i]);
        decode_logits(a, la);
        CHECK(memcmp(ref_logits, la, V * sizeof *la) == 0, "audio_ctx %d: other logits", same[i]);
    }

    /* N: the N-frame model's numbers, on either cache type */
    for (int half = 0; half < 2; half++) {
        wkv_cache_type t = half ? WKV_CACHE_F16 : WKV_CACHE_F32;
        CHECK(wkv_context_set_cache_type(a, t, NULL) == 0 &&
              wkv_context_set_cache_type(b, t, NULL) == 0, "cache type");
        CHECK(wkv_encode_frames(a, mel, N_SHORT) == 0, "encode %d", N_SHORT);
        CHECK(a->cross.n_frames == N_SHORT, "cross frames %d", a->cross.n_frames);
        CHECK(wkv_encode(b, mel) == 0, "encode the short model");
        CHECK(memcmp(wkv_encoder_output(a), wkv_encoder_output(b), N_SHORT * d * sizeof(float)) == 0,
              "encoder rows differ from the %d-frame model's (max %g)", N_SHORT,
              tu_max_abs_err(wkv_encoder_output(a), wkv_encoder_output(b), N_SHORT * d));
        decode_logits(a, la);
        decode_logits(b, lb);
        CHECK(memcmp(la, lb, V * sizeof *la) == 0,
              "half %d: logits differ from the %d-frame model's (max %g)", half, N_SHORT,
              tu_max_abs_err(la, lb, V));
    }
    /* bf16 and int8 (where this CPU runs them): their K/V layouts for N keys */
    for (int ty = WKV_COMPUTE_BF16; ty <= WKV_COMPUTE_INT8; ty++) {
        if (!tu_compute_here(a, (wkv_compute_type)ty, "audio_ctx") ||
            !tu_compute_here(b, (wkv_compute_type)ty, "audio_ctx"))
            continue;
        CHECK(wkv_encode(a, mel) == 0 && wkv_encode_frames(a, mel, N_SHORT) == 0 &&
              wkv_encode(b, mel) == 0, "encode");
        CHECK(memcmp(wkv_encoder_output(a), wkv_encoder_output(b), N_SHORT * d * sizeof(float)) == 0,
              "%s: encoder rows differ from the %d-frame model's (max %g)",
              wkv_compute_type_name((wkv_compute_type)ty), N_SHORT,
              tu_max_abs_err(wkv_encoder_output(a), wkv_encoder_output(b), N_SHORT * d));
    }
    CHECK(wkv_encode_frames(a, mel, -2) == -1, "negative frames accepted");
    free(la), free(lb), free(ref), free(ref_logits);
    wkv_context_free(a);
    wkv_context_free(b);
}

/* The bytes of rows [r0, r1) of every layer's cross K and V, in the cache's type. */
static size_t cross_rows(const wkv__cross_kv *c, int r0, int r1, unsigned char *out)
{
    const size_t es = wkv__cross_half(c) ? 2 : 4, row = (size_t)c->n_state * es;
    size_t at = 0;
    for (int l = 0; l < c->n_layer; l++) {
        const unsigned char *k = wkv__cross_half(c) ? (const void *)wkv__cross_k16(c, l)
                                                    : (const void *)wkv__cross_k(c, l);
        const unsigned char *v = wkv__cross_half(c) ? (const void *)wkv__cross_v16(c, l)
                                                    : (const void *)wkv__cross_v(c, l);
        memcpy(out + at, k + (size_t)r0 * row, (size_t)(r1 - r0) * row);
        at += (size_t)(r1 - r0) * row;
        memcpy(out + at, v + (size_t)r0 * row, (size_t)(r1 - r0) * row);
        at += (size_t)(r1 - r0) * row;
    }
    return at;
}

/* Writes rows [r0, r1) of every layer back from cross_rows' bytes. */
static void cross_put(wkv__cross_kv *c, int r0, int r1, const unsigned char *in)
{
    const size_t es = wkv__cross_half(c) ? 2 : 4, row = (size_t)c->n_state * es;
    size_t at = 0;
    for (int l = 0; l < c->n_layer; l++) {
        unsigned char *k = wkv__cross_half(c) ? (void *)wkv__cross_k16(c, l) : (void *)wkv__cross_k(c, l);
        unsigned char *v = wkv__cross_half(c) ? (void *)wkv__cross_v16(c, l) : (void *)wkv__cross_v(c, l);
        memcpy(k + (size_t)r0 * row, in + at, (size_t)(r1 - r0) * row);
        at += (size_t)(r1 - r0) * row;
        memcpy(v + (size_t)r0 * row, in + at, (size_t)(r1 - r0) * row);
        at += (size_t)(r1 - r0) * row;
    }
}

/* AUTO: the encoder on the audio's frames, the padding's K/V after them. */
static void check_padded(const wkv_model *m, const float *random)
{
    const wkv_hparams *hp = wkv_model_hparams(m);
    const int full = hp->n_audio_ctx, mel_frames = 300; /* 3 s of audio */
    const int n = wkv_audio_ctx_auto(m, mel_frames / 2);
    const size_t V = (size_t)hp->n_vocab, nm = (size_t)hp->n_mels * WKV_N_FRAMES;
    float *mel = calloc(nm, sizeof *mel), *zeros = calloc(nm, sizeof *zeros);
    for (int b = 0; b < hp->n_mels; b++)
        memcpy(mel + (size_t)b * WKV_N_FRAMES, random + (size_t)b * WKV_N_FRAMES,
               mel_frames * sizeof *mel);
    const size_t bytes = 2 * (size_t)hp->n_text_layer * full * hp->n_text_state * sizeof(float);
    unsigned char *got = malloc(bytes), *want = malloc(bytes), *pad = malloc(bytes);
    float *la = malloc(V * sizeof *la), *lb = malloc(V * sizeof *lb);
    wkv_context *a = wkv_context_new(m, 2, NULL), *b = wkv_context_new(m, 2, NULL);
    for (int half = 0; half < 2; half++) {
        wkv_cache_type t = half ? WKV_CACHE_F16 : WKV_CACHE_F32;
        /* a's padding was made in the other type on the first pass: made again */
        CHECK(wkv_context_set_cache_type(a, t, NULL) == 0 &&
              wkv_context_set_cache_type(b, t, NULL) == 0, "cache type");
        CHECK(wkv__encode_window(a, mel, WKV_AUDIO_CTX_AUTO, mel_frames) == 0, "padded encode");
        CHECK(a->enc_frames == n && a->cross.n_frames == full,
              "half %d: encoded %d frames (want %d), attends over %d (want %d)", half,
              a->enc_frames, n, a->cross.n_frames, full);
        decode_logits(a, la);
        /* by hand: the padding alone, then the audio's n frames */
        CHECK(wkv_encode_frames(b, zeros, full) == 0, "encode the padding");
        size_t np = cross_rows(&b->cross, n, full, pad);
        CHECK(wkv_encode_frames(b, mel, n) == 0, "encode %d", n);
        size_t na = cross_rows(&b->cross, 0, n, want);
        cross_rows(&a->cross, 0, n, got);
        CHECK(memcmp(got, want, na) == 0, "half %d: the audio's K/V differ from %d frames'", half, n);
        cross_rows(&a->cross, n, full, got);
        CHECK(memcmp(got, pad, np) == 0, "half %d: rows past %d are not the padding's K/V", half, n);
        cross_put(&b->cross, n, full, pad);
        b->cross.n_frames = full;
        decode_logits(b, lb);
        CHECK(memcmp(la, lb, V * sizeof *la) == 0,
              "half %d: logits differ from the cache made by hand (max %g)", half,
              tu_max_abs_err(la, lb, V));
        /* whisper.cpp's audio_ctx (the decoder on n frames alone) decodes otherwise */
        CHECK(wkv_encode_frames(b, mel, n) == 0, "encode %d", n);
        decode_logits(b, lb);
        CHECK(memcmp(la, lb, V * sizeof *la) != 0, "half %d: the padding changed nothing", half);
    }
    free(mel), free(zeros), free(got), free(want), free(pad), free(la), free(lb);
    wkv_context_free(a);
    wkv_context_free(b);
}

typedef struct {
    const wkv_model *m;
    int n_frames, bad, segs;
    double end;
} seg_check;

static int on_segment(const wkv_segment *s, void *user)
{
    seg_check *c = user;
    const int tb = wkv_model_specials(c->m)->timestamp_begin;
    for (int i = 0; i < s->n_tokens; i++)
        if (s->tokens[i] > tb + c->n_frames)
            c->bad++;
    /* a word's end past its window's N frames (times from the start of the input) */
    for (int i = 0; i < s->n_words; i++) {
        double over = s->words[i].end - ((double)s->seek * 0.01 + c->n_frames * 0.02);
        c->end = over > c->end ? over : c->end;
    }
    c->segs++;
    return 0;
}

/* Offline decoding on N frames: every timestamp token within them, words too. */
static void check_decoding(const wkv_model *m)
{
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    uint32_t seed = 5;
    const size_t n = 16000 * 20; /* 20 s: times past the 10 s encoded are possible */
    float *pcm = tu_wandering_tone(&seed, n);
    wkv_options o;
    wkv_options_default(&o);
    o.temperature_increment = 0;
    o.no_speech_threshold = 1.0f;
    o.word_timestamps = 1;
    o.alignment_heads = "0.0,1.1";
    o.sample_len = 40;
    o.audio_ctx = N_SHORT;
    seg_check c = {m, N_SHORT, 0, 0, -1.0};
    char *err = NULL;
    CHECK(wkv_transcribe(ctx, pcm, n, &o, on_segment, NULL, &c, &err) >= 0, "%s", err ? err : "");
    CHECK(c.segs > 0, "no segment");
    CHECK(c.bad == 0, "%d timestamp tokens past %d frames", c.bad, N_SHORT);
    CHECK(c.end <= 1e-9, "a word ends %g s past its window's %d frames", c.end, N_SHORT);
    free(err);
    err = NULL;
    /* batched: each window's own rules (batch.c) */
    c.bad = c.segs = 0;
    o.word_timestamps = 0;
    wkv_chunk ch[2] = {{0, 16000 * 12}, {16000 * 12, 16000 * 20}};
    CHECK(wkv_transcribe_chunks(ctx, pcm, n, ch, 2, 2, &o, on_segment, NULL, &c, &err) >= 0,
          "%s", err ? err : "");
    CHECK(c.segs > 0, "no batched segment");
    CHECK(c.bad == 0, "batched: %d timestamp tokens past %d frames", c.bad, N_SHORT);
    free(err);
    err = NULL;
    o.audio_ctx = -7;
    CHECK(wkv_transcribe(ctx, pcm, n, &o, on_segment, NULL, &c, &err) != 0 && err &&
              strstr(err, "audio_ctx"), "audio_ctx -7 accepted");
    free(err);

    /* AUTO offline: a 3-s file's only window (no timestamps: nothing seeks into it)
     * gets wkv_audio_ctx_auto's frames */
    o.audio_ctx = WKV_AUDIO_CTX_AUTO;
    o.word_timestamps = 0;
    o.timestamps = 0;
    CHECK(wkv_transcribe(ctx, pcm, 16000 * 3, &o, on_segment, NULL, &c, NULL) >= 0, "auto");
    CHECK(ctx->enc_frames == wkv_audio_ctx_auto(m, 150) &&
              ctx->cross.n_frames == wkv_model_hparams(m)->n_audio_ctx,
          "auto offline: %d frames, %d attended", ctx->enc_frames, ctx->cross.n_frames);
    free(pcm);
    wkv_context_free(ctx);
}

static int max_frames;
static void on_run(const wkv_stream_run *run, void *user)
{
    wkv_context *ctx = user;
    /* the frames this run's audio needs, as the stream computed them */
    int mel_frames = (int)(run->n / WKV_HOP < WKV_N_FRAMES ? run->n / WKV_HOP : WKV_N_FRAMES);
    int want = wkv_audio_ctx_auto(ctx->model, (mel_frames + 1) / 2);
    if (!run->silent || run->n > 0)
        CHECK(ctx->enc_frames == want && ctx->cross.n_frames == ctx->model->hp.n_audio_ctx,
              "run on %lld samples: %d frames, not %d (%d attended)", (long long)run->n,
              ctx->enc_frames, want, ctx->cross.n_frames);
    max_frames = ctx->enc_frames > max_frames ? ctx->enc_frames : max_frames;
}

static void on_seg(const wkv_stream_segment *s, void *user)
{
    (void)s, (void)user;
}

static void check_stream(const wkv_model *m)
{
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    wkv_options o;
    wkv_options_default(&o);
    o.no_speech_threshold = 1.0f;
    o.sample_len = 20;
    wkv_stream_options so;
    wkv_stream_options_default(&so);
    so.step_ms = 1000;
    so.latency_ms = 4000;
    so.audio_ctx = WKV_AUDIO_CTX_AUTO;
    so.on_run = on_run;
    so.run_user = ctx;
    char *err = NULL;
    wkv_stream *st = wkv_stream_new(ctx, &o, &so, on_seg, NULL, &err);
    CHECK(st != NULL, "%s", err ? err : "");
    uint32_t seed = 9;
    const size_t n = 16000 * 6;
    float *pcm = tu_wandering_tone(&seed, n);
    for (size_t i = 0; st && i < n; i += 1600)
        CHECK(wkv_stream_push(st, pcm + i, 1600, (double)(i + 1600) / 16000, NULL) >= 0, "push");
    if (st)
        CHECK(wkv_stream_finish(st, 6.0, NULL) >= 0, "finish");
    CHECK(max_frames > 0 && max_frames < wkv_model_hparams(m)->n_audio_ctx,
          "the runs encoded %d frames", max_frames);
    wkv_stream_free(st);
    free(err);
    err = NULL;
    so.audio_ctx = -3;
    CHECK(wkv_stream_new(ctx, &o, &so, on_seg, NULL, &err) == NULL && err &&
              strstr(err, "audio_ctx"), "stream audio_ctx -3 accepted");
    free(err);
    free(pcm);
    wkv_context_free(ctx);
}

int main(void)
{
    wkv_model *full = micro(1500), *shrt = micro(N_SHORT);
    if (!full || !shrt)
        return tu_finish("audio_ctx");
    CHECK(wkv_audio_ctx_auto(full, 0) == WKV_AUDIO_CTX_MIN, "auto(0)");
    CHECK(wkv_audio_ctx_auto(full, 100) == WKV_AUDIO_CTX_MIN, "auto(100)");
    CHECK(wkv_audio_ctx_auto(full, 250) == 320, "auto(250) %d", wkv_audio_ctx_auto(full, 250));
    CHECK(wkv_audio_ctx_auto(full, 500) == 576, "auto(500) %d", wkv_audio_ctx_auto(full, 500));
    CHECK(wkv_audio_ctx_auto(full, 1490) == 1500, "auto(1490)");
    CHECK(wkv_audio_ctx_auto(shrt, 480) == N_SHORT, "auto on a short model");
    float *mel = random_mel(wkv_model_hparams(full));
    check_exact(full, shrt, mel);
    check_padded(full, mel);
    check_decoding(full);
    check_stream(full);
    free(mel);
    wkv_model_free(shrt);
    wkv_model_free(full);
    return tu_finish("audio_ctx");
}
