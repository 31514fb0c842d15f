/* cross_half: the half caches (bf16/int8 contexts, kv_cache.h) change nothing but the
 * rounding of their values to half.
 *  - decoder: a context whose cache is half and one whose f32 cache holds the same
 *    values rounded through half give bit-identical logits for single steps (the
 *    half rows widened as they stream by), a batch of 8 sequences, and a prompt pass
 *    of more than 8 rows (the layer widened once), and the same word-alignment matrix
 *    and token probabilities (the alignment pass reads widened layers through its
 *    hook);
 *  - the half cache's values are the f32 projections rounded to nearest (2^-11
 *    relative each, 2^-25 absolute below half's normal range), and it takes half the
 *    bytes (wkv_context_memory);
 *  - wkv__attention_f16 with 20 heads (rows split into groups of the step path) equals
 *    wkv__attention on the widened K and V within 1e-5 relative, and exactly where the
 *    two take the same path;
 *  - the half self cache (check_self_half): half the bytes, its values the f32 rows
 *    rounded, steps close to a pass and to the f32 cache, slot copies exact.
 * Usage: test_cross_half MODEL.bin [SHORT_MODEL.bin]: under qemu (WHISPERKV_TEST_EMULATED,
 * the isa setups) the decoder checks run on SHORT_MODEL (tests/gen_short_model.c: the
 * encoder on 300 frames) and check_attention on 300 keys: 117 -> 73 s under qemu's max. */
#include "words/word_window.h"
#include "encode_once.h"
#include "net/context.h"
#include "base/cpu.h"
#include "base/f16.h"
#include "kernels/ops.h"
#include "testutil.h"
#include "whisperkv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 12
#define BATCH 8

static uint32_t seed = 99;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
}

/* Everything one context decodes: steps, then a batch, then a pass of STEPS rows. */
typedef struct {
    float *steps, *batch, *pass;
} run;

static run decode_all(wkv_context *ctx, const int *seq, int n_vocab)
{
    run r = {malloc((size_t)STEPS * n_vocab * sizeof(float)),
             malloc((size_t)BATCH * n_vocab * sizeof(float)),
             malloc((size_t)n_vocab * sizeof(float))};
    wkv_decode_reset(ctx);
    for (int i = 0; i < STEPS; i++)
        CHECK(wkv_decode(ctx, seq + i, 1, r.steps + (size_t)i * n_vocab) == 0, "step %d", i);
    /* BATCH sequences continuing the same prefix with different tokens */
    CHECK(wkv__self_kv_reserve(&ctx->self, BATCH) == 0, "reserve");
    int slots[BATCH], toks[BATCH];
    for (int s = 0; s < BATCH; s++) {
        slots[s] = s;
        toks[s] = seq[s + 2];
        wkv__self_kv_copy(&ctx->self, s, 0, 0);
    }
    CHECK(wkv__decoder_batch(ctx, slots, toks, BATCH, r.batch) == 0, "batch");
    wkv_decode_reset(ctx);
    CHECK(wkv_decode(ctx, seq, STEPS, r.pass) == 0, "pass");
    return r;
}

static void run_free(run *r)
{
    free(r->steps);
    free(r->batch);
    free(r->pass);
}

/* What both decoder checks start from: the model, a random mel, sot and random text
 * tokens, and two contexts of 2 threads (a stays f32; b's cache is switched to half). */
typedef struct {
    wkv_model *model;
    const wkv_hparams *hp;
    const wkv_specials *sp;
    float *mel;
    int seq[STEPS];
    wkv_context *a, *b;
    size_t cache_f32; /* a's cache bytes */
} fixture;

static int fixture_open(fixture *f, const char *path)
{
    char *err = NULL;
    memset(f, 0, sizeof *f);
    f->model = wkv_model_load(path, &err);
    CHECK(f->model != NULL, "%s", err ? err : "");
    free(err);
    if (!f->model)
        return -1;
    f->hp = wkv_model_hparams(f->model);
    f->sp = wkv_model_specials(f->model);
    const size_t n_mel = (size_t)f->hp->n_mels * WKV_N_FRAMES;
    f->mel = malloc(n_mel * sizeof *f->mel);
    for (size_t i = 0; i < n_mel; i++)
        f->mel[i] = frand();
    f->seq[0] = f->sp->sot;
    for (int i = 1; i < STEPS; i++)
        f->seq[i] = (int)((uint32_t)(frand() * 1e6f + 1e6f) % (uint32_t)f->sp->eot);
    f->a = wkv_context_new(f->model, 2, NULL);
    f->b = wkv_context_new(f->model, 2, NULL);
    wkv_context_memory(f->a, &f->cache_f32, NULL);
    return 0;
}

/* The test's one encoder run (encode_once.h): what this test checks starts after it;
 * four encoder runs were most of its time natively, by perf, and under qemu. */
static float *enc_saved;

static int encode(wkv_context *ctx, const float *mel)
{
    return encode_once(ctx, mel, &enc_saved);
}

/* After b's cache went half: b's cache bytes are n half elements fewer than a's. */
static void check_bytes_saved(const fixture *f, size_t n, const char *what)
{
    size_t cache_half = 0;
    wkv_context_memory(f->b, &cache_half, NULL);
    CHECK(f->cache_f32 - cache_half == n * 2 * sizeof(uint16_t),
          "%s cache bytes %zu (f32) and %zu (half) differ by %zu, want %zu", what, f->cache_f32,
          cache_half, f->cache_f32 - cache_half, n * 2 * sizeof(uint16_t));
}

static void fixture_close(fixture *f)
{
    wkv_context_free(f->a);
    wkv_context_free(f->b);
    wkv_model_free(f->model);
    free(f->mel);
}

static void check_decoder(const char *path)
{
    fixture f;
    if (fixture_open(&f, path) != 0)
        return;
    const wkv_hparams *hp = f.hp;
    const wkv_specials *sp = f.sp;
    wkv_model *model = f.model;
    wkv_context *a = f.a, *b = f.b;
    const int *seq = f.seq;
    const float *mel = f.mel;
    CHECK(wkv__cross_kv_set_f16(&b->cross, 1) == 0 && wkv__cross_half(&b->cross) && !b->cross.k,
          "a half cache");
    const size_t n = (size_t)a->cross.n_layer * a->cross.n_ctx * a->cross.n_state;
    check_bytes_saved(&f, n, "cross");

    CHECK(encode(a, mel) == 0 && encode(b, mel) == 0, "encode");
    /* a's f32 cache rounded through half in place: b's values, if b rounded right */
    double worst = 0.0;
    int differ = 0;
    for (int kv = 0; kv < 2; kv++) {
        float *f = kv ? a->cross.v : a->cross.k;
        const uint16_t *h = kv ? b->cross.v16 : b->cross.k16;
        for (size_t i = 0; i < n; i++) {
            const float r = wkv__f16_to_f32(wkv__f32_to_f16(f[i]));
            /* half's normal range: 2^-11 relative; below it, 2^-25 absolute */
            const float e = fabsf(f[i]) >= 0x1p-14f ? fabsf((r - f[i]) / f[i])
                                                    : fabsf(r - f[i]) * 0x1p14f;
            worst = e > worst ? e : worst;
            differ += wkv__f16_to_f32(h[i]) != r;
            f[i] = r;
        }
    }
    printf("half cross cache: %d of %zu values not the f32 ones rounded; worst rounding %.3g"
           " (bound 2^-11 = 4.88e-4)\n",
           differ, 2 * n, worst);
    CHECK(differ == 0, "%d half values are not the f32 projections rounded", differ);
    CHECK(worst > 0.0 && worst <= 0x1p-11, "rounding to half: worst %g", worst);

    run ra = decode_all(a, seq, hp->n_vocab), rb = decode_all(b, seq, hp->n_vocab);
    const char *what[] = {"single steps", "a batch of 8", "a pass of 12 rows"};
    const float *x[] = {ra.steps, ra.batch, ra.pass}, *y[] = {rb.steps, rb.batch, rb.pass};
    const size_t len[] = {(size_t)STEPS * hp->n_vocab, (size_t)BATCH * hp->n_vocab,
                          (size_t)hp->n_vocab};
    for (int i = 0; i < 3; i++) {
        int same = memcmp(x[i], y[i], len[i] * sizeof(float)) == 0;
        printf("%s: half cache %s (relative %.3g)\n", what[i], same ? "bit-identical" : "DIFFERS",
               tu_rel_err(y[i], x[i], len[i]));
        CHECK(same, "%s: the half cache's logits differ from the rounded f32 cache's", what[i]);
    }
    run_free(&ra);
    run_free(&rb);

    /* the alignment pass: sot, notimestamps, 8 text tokens, eot over 100 frames */
    int *pairs = NULL, n_pairs = 0, al[11];
    char *herr = NULL;
    CHECK(wkv__heads_resolve(model, "default", &pairs, &n_pairs, NULL, &herr) == 0, "heads: %s",
          herr ? herr : "");
    al[0] = sp->sot;
    al[1] = sp->notimestamps;
    for (int i = 0; i < 8; i++)
        al[2 + i] = seq[2 + i];
    al[10] = sp->eot;
    const int F = 100, rows = 11 - 1 - 1;
    float *ma = malloc((size_t)rows * F * sizeof *ma), *mb = malloc((size_t)rows * F * sizeof *mb);
    float pa[16], pb[16];
    CHECK(wkv__align_matrix(a, pairs, n_pairs, al, 11, 1, F, ma, pa) == 0 &&
              wkv__align_matrix(b, pairs, n_pairs, al, 11, 1, F, mb, pb) == 0,
          "alignment pass");
    int finite = 1, varied = 0;
    for (int i = 0; i < rows * F; i++) {
        finite &= isfinite(ma[i]);
        varied |= ma[i] != ma[0];
    }
    CHECK(finite && varied, "the alignment matrix is not finite and varied");
    int same = memcmp(ma, mb, (size_t)rows * F * sizeof *ma) == 0 &&
               memcmp(pa, pb, 8 * sizeof *pa) == 0;
    printf("alignment matrix and probabilities: half cache %s\n",
           same ? "bit-identical" : "DIFFERS");
    CHECK(same, "the alignment pass differs on the half cache");
    free(ma);
    free(mb);
    free(pairs);
    free(herr);
    fixture_close(&f);
}

/* The half self cache (bf16/int8 contexts; here switched on directly in an f32
 * context, so that nothing else differs): it takes half the bytes; layer 0's rows,
 * whose inputs do not depend on the cache, are a's f32 rows rounded, bit for bit;
 * steps (the halves read in registers) stay within 1e-4 of the same sequence decoded
 * as one pass (the layer widened, the causal mask) and within 2e-3 of the f32 cache
 * (half's 2^-11 rounding through every layer), but not equal to it; slots copied in
 * half continue identically. */
static void check_self_half(const char *path)
{
    fixture f;
    if (fixture_open(&f, path) != 0)
        return;
    const int V = f.hp->n_vocab, d = f.hp->n_text_state;
    wkv_context *a = f.a, *b = f.b;
    const int *seq = f.seq;
    const float *mel = f.mel;
    CHECK(wkv__self_kv_set_f16(&b->self, 1) == 0 && wkv__self_half(&b->self) && !b->self.k,
          "a half self cache");
    check_bytes_saved(&f, (size_t)b->self.n_slots * b->self.n_layer * b->self.n_ctx * d,
                      "self");
    CHECK(encode(a, mel) == 0 && encode(b, mel) == 0, "encode");

    float *la = malloc((size_t)STEPS * V * sizeof *la), *lb = malloc((size_t)STEPS * V * sizeof *lb);
    float *pass = malloc((size_t)V * sizeof *pass);
    wkv_decode_reset(a);
    wkv_decode_reset(b);
    for (int i = 0; i < STEPS; i++)
        CHECK(wkv_decode(a, seq + i, 1, la + (size_t)i * V) == 0 &&
                  wkv_decode(b, seq + i, 1, lb + (size_t)i * V) == 0,
              "step %d", i);
    int differ = 0;
    for (int kv = 0; kv < 2; kv++) {
        const float *f = kv ? wkv__self_v(&a->self, 0, 0) : wkv__self_k(&a->self, 0, 0);
        const uint16_t *h = kv ? wkv__self_v16(&b->self, 0, 0) : wkv__self_k16(&b->self, 0, 0);
        for (size_t i = 0; i < (size_t)STEPS * d; i++)
            differ += h[i] != wkv__f32_to_f16(f[i]);
    }
    printf("half self cache: %d of %d layer-0 values not the f32 ones rounded\n", differ,
           2 * STEPS * d);
    CHECK(differ == 0, "%d half self-cache values are not the f32 rows rounded", differ);
    double e_f32 = tu_rel_err(lb, la, (size_t)STEPS * V);
    CHECK(e_f32 > 0.0 && e_f32 <= 2e-3, "half self cache against f32: relative %.3g", e_f32);
    /* the same sequence as one pass: every layer widened, the causal mask (the rows
     * first overwritten by another sequence, so that the pass must store its own) */
    int other[STEPS];
    for (int i = 0; i < STEPS; i++)
        other[i] = seq[STEPS - 1 - i];
    wkv_decode_reset(b);
    for (int i = 0; i < STEPS; i++)
        CHECK(wkv_decode(b, other + i, 1, NULL) == 0, "another sequence");
    wkv_decode_reset(b);
    CHECK(wkv_decode(b, seq, STEPS, pass) == 0, "pass");
    double e_pass = tu_rel_err(pass, lb + (size_t)(STEPS - 1) * V, (size_t)V);
    CHECK(e_pass <= 1e-4, "half self cache: a pass against steps: relative %.3g", e_pass);
    printf("half self cache: steps against f32 %.3g, a pass against steps %.3g (relative)\n",
           e_f32, e_pass);
    /* slots copied in half (all, then above a shared prefix) continue alike */
    CHECK(wkv__self_kv_reserve(&b->self, BATCH) == 0 && wkv__self_half(&b->self), "reserve");
    int slots[BATCH], toks[BATCH];
    for (int s = 0; s < BATCH; s++) {
        slots[s] = s;
        toks[s] = seq[3];
        wkv__self_kv_copy(&b->self, s, 0, 0);
    }
    for (int j = 0; j < 3; j++) /* slot 2 goes its own way, then takes slot 0's end back */
        CHECK(wkv__decoder_batch(b, (int[]){2}, seq + 4 + j, 1, NULL) == 0, "slot 2 alone");
    wkv__self_kv_copy(&b->self, 2, 0, STEPS - 2);
    float *batch = malloc((size_t)BATCH * V * sizeof *batch);
    CHECK(wkv__decoder_batch(b, slots, toks, BATCH, batch) == 0, "batch");
    int same = 1;
    for (int s = 1; s < BATCH; s++)
        same &= memcmp(batch, batch + (size_t)s * V, (size_t)V * sizeof *batch) == 0;
    CHECK(same, "copied half slots give different logits for the same token");
    free(batch);
    free(la);
    free(lb);
    free(pass);
    fixture_close(&f);
}

/* wkv__attention_f16 against wkv__attention on the same values, 20 heads. */
static void check_attention(void)
{
    /* under qemu (the isa setups) 300 keys: the same tail past the last 16 as 1500 */
    const int d = 640, n_head = 20, n_kv = tu_emulated() ? 300 : 1500;
    const size_t nd = (size_t)n_kv * d;
    uint16_t *k16 = malloc(nd * sizeof *k16), *v16 = malloc(nd * sizeof *v16);
    float *k = malloc(nd * sizeof *k), *v = malloc(nd * sizeof *v);
    float *q = malloc(8 * (size_t)d * sizeof *q), *scores = malloc(64 * (size_t)n_kv * 4 * sizeof *scores);
    float *o1 = malloc(8 * (size_t)d * sizeof *o1), *o2 = malloc(8 * (size_t)d * sizeof *o2);
    for (size_t i = 0; i < nd; i++) {
        k16[i] = wkv__f32_to_f16(frand());
        v16[i] = wkv__f32_to_f16(frand());
        k[i] = wkv__f16_to_f32(k16[i]);
        v[i] = wkv__f16_to_f32(v16[i]);
    }
    for (int i = 0; i < 8 * d; i++)
        q[i] = 4.0f * frand();
    wkv__pool *pool = wkv__pool_new(2);
    for (int threads = 1; threads <= 2; threads++)
        for (int n_q = 1; n_q <= 8; n_q++) {
            wkv__pool *p = threads == 2 ? pool : NULL;
            /* taken exactly where the vector kernels run; elsewhere the decoder widens
             * rows, and wkv__attention_f16 may not be called (the AVX2 kernel would be) */
            const int ok = wkv__attention_f16_ok(n_q, n_head, d);
            CHECK(ok == (wkv__gemv_isa() != WKV_ISA_SCALAR), "n_q %d: taken %d on isa %d", n_q,
                  ok, wkv__gemv_isa());
            if (!ok)
                continue;
            wkv__attention(p, q, k, v, n_q, n_kv, d, n_head, -1, scores, o1);
            wkv__attention_f16(p, q, k16, v16, n_q, n_kv, d, n_head, scores, o2);
            double e = tu_rel_err(o2, o1, (size_t)n_q * d);
            int same_path = n_q * n_head <= 64;
            if (threads == 2 && (n_q == 1 || n_q == 8))
                printf("attention, 20 heads, %d rows, %d threads: relative %.3g\n", n_q, threads, e);
            CHECK(same_path ? e == 0.0 : e <= 1e-5, "%d rows, %d threads: relative %g", n_q,
                  threads, e);
        }
    CHECK(!wkv__attention_f16_ok(9, n_head, d) && !wkv__attention_f16_ok(1, 65, 65 * 64) &&
              !wkv__attention_f16_ok(1, 8, 8 * 24), "limits (9 rows, 65 heads, head size 24)");
    wkv__pool_free(pool);
    free(k16);
    free(v16);
    free(k);
    free(v);
    free(q);
    free(scores);
    free(o1);
    free(o2);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_cross_half MODEL [SHORT_MODEL]\n");
        return 2;
    }
    const char *model = argc > 2 && tu_emulated() ? argv[2] : argv[1];
    check_attention();
    check_decoder(model);
    check_self_half(model);
    free(enc_saved);
    return tu_finish("cross_half");
}
