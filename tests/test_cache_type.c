/* cache_type: wkv_context_set_cache_type and its AUTO rule (whisperkv.h).
 *  - names: "auto", "f32", "f16" parse and print back; anything else is -1;
 *  - an f32/f16 file's context starts with f32 caches, a quantized file's with half
 *    (AUTO: approximation chosen), and the f32 compute type keeps that;
 *  - F16 and F32 switch both caches (the bytes wkv_context_memory reports), AUTO goes
 *    back to the file's rule, an unknown type is refused with the caches kept;
 *  - decoding on half caches stays within half's rounding of f32 caches (logits of
 *    every step), and differs from them (so the type took effect);
 *  - the first switch of an empty context is free of side effects: the same steps on
 *    F32 after F16 give the logits of a context that was never half, bit for bit.
 * Usage: test_cache_type F16_MODEL.bin Q8_0_MODEL.bin */
#include "testutil.h"
#include "whisperkv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 10

static size_t cache_bytes(const wkv_context *ctx)
{
    size_t b = 0;
    wkv_context_memory(ctx, &b, NULL);
    return b;
}

static void check_names(void)
{
    const char *names[] = {"auto", "f32", "f16"};
    for (int i = 0; i < 3; i++) {
        CHECK(wkv_cache_type_parse(names[i]) == i, "parse %s", names[i]);
        CHECK(!strcmp(wkv_cache_type_name((wkv_cache_type)i), names[i]), "name %d", i);
    }
    CHECK(wkv_cache_type_parse("bf16") == -1 && wkv_cache_type_parse(NULL) == -1 &&
              wkv_cache_type_parse("F16") == -1,
          "other names refused");
}

/* STEPS greedy-free steps (a fixed token sequence) from one encoder run; the logits
 * of every step in `out` (STEPS x n_vocab). */
static int run_steps(wkv_context *ctx, const float *mel, const int *seq, int n_vocab,
                     float *out)
{
    if (wkv_encode(ctx, mel) != 0)
        return -1;
    wkv_decode_reset(ctx);
    for (int i = 0; i < STEPS; i++)
        if (wkv_decode(ctx, seq + i, 1, out + (size_t)i * n_vocab) != 0)
            return -1;
    return 0;
}

/* The model at path, or NULL after a failed check. */
static wkv_model *load(const char *path)
{
    char *err = NULL;
    wkv_model *m = wkv_model_load(path, &err);
    CHECK(m != NULL, "load %s: %s", path, err ? err : "");
    free(err);
    return m;
}

static void check_f16_file(const char *path)
{
    wkv_model *m = load(path);
    if (!m)
        return;
    char *err = NULL;
    const wkv_hparams *hp = wkv_model_hparams(m);
    const wkv_specials *sp = wkv_model_specials(m);
    uint32_t seed = 5;
    const size_t n_mel = (size_t)hp->n_mels * WKV_N_FRAMES, nv = (size_t)hp->n_vocab;
    float *mel = malloc(n_mel * sizeof *mel);
    for (size_t i = 0; i < n_mel; i++)
        mel[i] = tu_frand(&seed);
    int seq[STEPS] = {sp->sot};
    for (int i = 1; i < STEPS; i++)
        seq[i] = (int)((uint32_t)(tu_frand(&seed) * 1e6f + 1e6f) % (uint32_t)sp->eot);
    float *l32 = malloc(STEPS * nv * sizeof *l32), *l16 = malloc(STEPS * nv * sizeof *l16),
          *lback = malloc(STEPS * nv * sizeof *lback);

    wkv_context *a = wkv_context_new(m, 2, NULL), *b = wkv_context_new(m, 2, NULL);
    CHECK(a && b, "contexts");
    if (!a || !b)
        goto out;
    CHECK(wkv_context_cache_type(a) == WKV_CACHE_F32, "an f16 file starts with f32 caches");
    CHECK(wkv_context_set_compute_type(a, WKV_COMPUTE_F32, NULL) == 0 &&
              wkv_context_cache_type(a) == WKV_CACHE_F32,
          "f32 compute keeps them");
    const size_t bytes32 = cache_bytes(a);
    CHECK(wkv_context_set_cache_type(b, WKV_CACHE_F16, NULL) == 0 &&
              wkv_context_cache_type(b) == WKV_CACHE_F16,
          "F16 on an f16 file");
    /* both caches: cross (2 x layers x audio ctx x d) and self (2 x layers x text ctx x
     * d per slot) at 2 bytes instead of 4 */
    const size_t elems = 2 * (size_t)hp->n_text_layer * hp->n_text_state *
                         ((size_t)hp->n_audio_ctx + (size_t)hp->n_text_ctx);
    CHECK(bytes32 - cache_bytes(b) == elems * 2, "half caches save %zu bytes, want %zu",
          bytes32 - cache_bytes(b), elems * 2);
    CHECK(wkv_context_set_cache_type(b, (wkv_cache_type)7, &err) == -1 && err &&
              wkv_context_cache_type(b) == WKV_CACHE_F16,
          "an unknown type refused, the caches kept (%s)", err ? err : "no message");
    free(err);

    CHECK(run_steps(a, mel, seq, (int)nv, l32) == 0 && run_steps(b, mel, seq, (int)nv, l16) == 0,
          "decode");
    const double e = tu_rel_err(l16, l32, STEPS * nv);
    printf("%s: logits of %d steps on half caches against f32: relative error %.2e "
           "(bound 1e-2)\n", path, STEPS, e);
    CHECK(e > 0.0 && e <= 1e-2, "half caches' logits off by %.2e", e);

    /* F32 again on b: bit for bit a's */
    CHECK(wkv_context_set_cache_type(b, WKV_CACHE_F32, NULL) == 0 &&
              wkv_context_cache_type(b) == WKV_CACHE_F32 && cache_bytes(b) == bytes32,
          "back to F32");
    CHECK(run_steps(b, mel, seq, (int)nv, lback) == 0 &&
              !memcmp(lback, l32, STEPS * nv * sizeof *l32),
          "F32 after F16 gives the f32 logits");
    CHECK(wkv_context_set_cache_type(b, WKV_CACHE_AUTO, NULL) == 0 &&
              wkv_context_cache_type(b) == WKV_CACHE_F32,
          "AUTO on an f16 file at f32 compute: f32");
out:
    wkv_context_free(a);
    wkv_context_free(b);
    wkv_model_free(m);
    free(mel);
    free(l32);
    free(l16);
    free(lback);
}

static void check_quantized_file(const char *path)
{
    wkv_model *m = load(path);
    if (!m)
        return;
    wkv_context *c = wkv_context_new(m, 1, NULL);
    CHECK(c != NULL, "context");
    if (c) {
        CHECK(wkv_context_cache_type(c) == WKV_CACHE_F16, "a quantized file starts with half");
        CHECK(wkv_context_set_compute_type(c, WKV_COMPUTE_F32, NULL) == 0 &&
                  wkv_context_cache_type(c) == WKV_CACHE_F16,
              "AUTO keeps half on the f32 compute type");
        CHECK(wkv_context_set_cache_type(c, WKV_CACHE_F32, NULL) == 0 &&
                  wkv_context_cache_type(c) == WKV_CACHE_F32,
              "F32 on a quantized file");
        CHECK(wkv_context_set_cache_type(c, WKV_CACHE_AUTO, NULL) == 0 &&
                  wkv_context_cache_type(c) == WKV_CACHE_F16,
              "AUTO on a quantized file: half");
    }
    wkv_context_free(c);
    wkv_model_free(m);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_cache_type F16_MODEL Q8_0_MODEL\n");
        return 2;
    }
    check_names();
    check_f16_file(argv[1]);
    check_quantized_file(argv[2]);
    return tu_finish("cache_type");
}
