/* quant_logits: a quantized model's decoder computing on its blocks (gemv_q.c) gives
 * the logits of dequantize-then-f32 within 1e-5 relative.
 *
 * For q8_0, q5_0 and q4_0 a micro model is generated (tests/genlib.c) and loaded: its
 * decoder matrices stay in their blocks.  A twin of it shares every tensor except
 * those, which it gets as f32 arrays dequantized by wkv__row_to_f32 (the path before
 * the block kernels: the typed views say f32, so the decoder runs sgemm on them).
 * The first model encodes the reference mel of micro-en once; every other context
 * (each type's model and twin) takes that encoder output and projects its own cross
 * K/V from it (the encoder is not what this test is about: its six runs were most of
 * the test's time natively, by perf, and under qemu).
 * Each decodes each token sequence of its expected.json ("sequences", the reference test's): token by token (one row through
 * the block kernels), in one pass (a prompt: the rows of the sequence, > 8 of them
 * widened to f32 by the decoder, up to 8 through the kernels) and as beams
 * (wkv__decoder_batch: every sequence's next token at once); the logits of every step
 * are compared as max |l - l'| / max |l'|.  WHISPERKV_TEST_EMULATED (the isa setups
 * under qemu): the first two sequences only, their passes of 1, 8 and all rows, and the
 * models given as arguments (Q8_0 Q5_0 Q4_0 files: meson's, the encoder on 300 frames)
 * instead of generated in the test. */
#include "genlib.h"
#include "encode_once.h"
#include "net/context.h"
#include "model/model.h"
#include "model/quant.h"
#include "testutil.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-5

typedef struct {
    int *toks;
    int n;
    const char *name;
} sequence;

/* The sequences of micro-en's expected.json; returns how many (at most cap). */
static int read_sequences(sequence *s, int cap, JsonParser **parser)
{
    GError *err = NULL;
    *parser = json_parser_new();
    if (!json_parser_load_from_file(*parser, tu_shared_path("testvectors/micro-en/expected.json"),
                                    &err)) {
        CHECK(0, "expected.json: %s", err->message);
        g_error_free(err);
        return 0;
    }
    JsonObject *seqs = json_object_get_object_member(
        json_node_get_object(json_parser_get_root(*parser)), "sequences");
    GList *names = json_object_get_members(seqs);
    int n = 0;
    for (GList *l = names; l && n < cap; l = l->next, n++) {
        JsonArray *a = json_object_get_array_member(seqs, l->data);
        s[n].name = l->data;
        s[n].n = (int)json_array_get_length(a);
        s[n].toks = malloc((size_t)(s[n].n ? s[n].n : 1) * sizeof *s[n].toks);
        for (int i = 0; i < s[n].n; i++)
            s[n].toks[i] = (int)json_array_get_int_element(a, (guint)i);
    }
    g_list_free(names);
    return n;
}

/* The twin's own copies: the decoder blocks and the dequantized matrices. */
typedef struct {
    wkv_model m;
    float *bufs[1 + 8 * 64];
    int n_bufs;
} twin;

static int dequantized_view(twin *t, wkv__mat *v, size_t count)
{
    if (!wkv__quant_block_bytes(v->type))
        return 0; /* not kept in blocks: nothing to widen */
    float *f = malloc(count * sizeof *f);
    if (!f || t->n_bufs == (int)(sizeof t->bufs / sizeof *t->bufs)) {
        free(f);
        return -1;
    }
    wkv__row_to_f32(v->type, v->data, f, count);
    t->bufs[t->n_bufs++] = f;
    *v = (wkv__mat){WKV_TYPE_F32, f};
    return 0;
}

static int make_twin(const wkv_model *q, twin *t)
{
    memset(t, 0, sizeof *t);
    t->m = *q;
    const size_t d = (size_t)q->hp.n_text_state;
    wkv__layer *dec = malloc((size_t)q->hp.n_text_layer * sizeof *dec);
    if (!dec || q->hp.n_text_layer > 64)
        return -1;
    memcpy(dec, q->w.dec, (size_t)q->hp.n_text_layer * sizeof *dec);
    t->m.w.dec = dec;
    int rc = dequantized_view(t, &t->m.w.tok, (size_t)q->hp.n_vocab * d);
    for (int l = 0; l < q->hp.n_text_layer; l++) {
        wkv__layer *L = &dec[l];
        wkv__mat *sq[] = {&L->attn_q, &L->attn_k, &L->attn_v, &L->attn_o, &L->cross_q,
                         &L->cross_o};
        for (int i = 0; i < 6; i++)
            rc |= dequantized_view(t, sq[i], d * d);
        rc |= dequantized_view(t, &L->mlp0, 4 * d * d);
        rc |= dequantized_view(t, &L->mlp2, 4 * d * d);
    }
    return rc;
}

static void free_twin(twin *t)
{
    for (int i = 0; i < t->n_bufs; i++)
        free(t->bufs[i]);
    free(t->m.w.dec);
}

/* Logits of every position of every sequence, three ways (see the top); *n_out gets
 * the number of floats.  The same calls on both models. */
static float *run(const wkv_model *m, const float *mel, float **enc, const sequence *s,
                  int n_seq, size_t *n_out)
{
    const int nv = m->hp.n_vocab;
    const int emulated = tu_emulated();
    size_t total = 0;
    for (int k = 0; k < n_seq; k++)
        total += (size_t)(2 * s[k].n + 1) * nv;
    float *out = calloc(total, sizeof *out), *o = out;
    wkv_context *ctx = wkv_context_new(m, 2, NULL);
    /* f32 caches on both models (a quantized file's default is half): the block
     * kernels are what is compared */
    if (ctx && wkv_context_set_cache_type(ctx, WKV_CACHE_F32, NULL) != 0) {
        wkv_context_free(ctx);
        ctx = NULL;
    }
    /* one encoder run for all contexts (encode_once.h): each projects its own cross
     * K/V from that output with its model's cross-attention weights */
    int rc = out && ctx ? encode_once(ctx, mel, enc) : -1;
    for (int k = 0; rc == 0 && k < n_seq; k++) {
        wkv_decode_reset(ctx);
        for (int i = 0; rc == 0 && i < s[k].n; i++, o += nv)
            rc = wkv_decode(ctx, &s[k].toks[i], 1, o);
        wkv_decode_reset(ctx);
        for (int len = 1; rc == 0 && len <= s[k].n; len++, o += nv) {
            /* under qemu, passes of 1, 8 (the most through the kernels) and all the
             * rows (more than 8: widened) only; the others' logits stay 0 in both runs */
            if (emulated && len != 1 && len != 8 && len != s[k].n)
                continue;
            wkv_decode_reset(ctx); /* the first len tokens in one pass */
            rc = wkv_decode(ctx, s[k].toks, len, o);
        }
    }
    /* beams: every sequence in its own slot, their first tokens as one batch */
    int slots[8], toks[8], nb = n_seq < 8 ? n_seq : 8;
    for (int k = 0; k < nb; k++) {
        slots[k] = k;
        toks[k] = s[k].toks[0];
    }
    wkv_decode_reset(ctx);
    float *beam = malloc((size_t)nb * nv * sizeof *beam);
    int brc = rc == 0 && beam && wkv__self_kv_reserve(&ctx->self, nb) == 0
                  ? wkv__decoder_batch(ctx, slots, toks, nb, beam) : -1;
    CHECK(brc == 0, "batched decoding failed");
    if (brc == 0)
        for (int k = 0; k < n_seq; k++, o += nv)
            memcpy(o, beam + (size_t)(k < nb ? k : 0) * nv, (size_t)nv * sizeof *o);
    free(beam);
    wkv_context_free(ctx);
    CHECK(rc == 0, "decoding failed");
    *n_out = total;
    return out;
}

int main(int argc, char **argv)
{
    /* under qemu (the isa setups) the models meson generated natively (the same
     * generator, micro, seed 7, with the encoder on 300 frames: n_audio_ctx 150): made
     * under qemu, each took 30 s; the shorter encoder saved another 42 s of 213 */
    const char *const *files = NULL;
    if (tu_emulated() && argc == 4)
        files = (const char *const *)argv + 1;
    if (!tu_require_shared("the micro-en test vectors"))
        return TU_SKIP;
    size_t n_mel = 0;
    float *mel = tu_read_f32(tu_shared_path("testvectors/micro-en/mel.f32"), &n_mel);
    JsonParser *parser = NULL;
    sequence seq[8];
    /* under qemu (the isa setups) two sequences reach every kernel branch the eight do
     * (steps, passes of up to 8 rows and of more, beams of 2); all eight took 13 minutes */
    int n_seq = read_sequences(seq, tu_emulated() ? 2 : 8, &parser);
    CHECK(mel && n_mel == 80 * 3000 && n_seq > 0, "mel.f32 (%zu floats) or sequences (%d)",
          n_mel, n_seq);
    static const char *const types[] = {"q8_0", "q5_0", "q4_0"};
    float *enc = NULL;
    for (int ti = 0; mel && n_seq > 0 && ti < 3; ti++) {
        gen_params p;
        gen_params_preset(&p, "micro");
        p.seed = 7;
        p.ftype = gen_ftype_parse(types[ti]);
        uint8_t *data = NULL;
        size_t size = 0;
        gen_layout lay;
        char *err = NULL;
        memset(&lay, 0, sizeof lay);
        wkv_model *q = NULL;
        if (files)
            q = wkv_model_load(files[ti], &err);
        else if (gen_model_build(&p, &data, &size, &lay, &err) == 0)
            q = wkv_model_load_memory(data, size, &err);
        CHECK(q != NULL, "%s: %s", types[ti], err ? err : "?");
        twin t;
        if (q && make_twin(q, &t) == 0) {
            CHECK(wkv__quant_block_bytes(q->w.tok.type) && wkv__quant_block_bytes(q->w.dec[0].mlp2.type),
                  "%s: the decoder's matrices are not kept in blocks", types[ti]);
            size_t n1 = 0, n2 = 0;
            float *a = run(q, mel, &enc, seq, n_seq, &n1);
            float *b = run(&t.m, mel, &enc, seq, n_seq, &n2);
            double e = a && b && n1 == n2 ? tu_rel_err(a, b, n1) : 1;
            printf("%s: %d sequences, %zu logits: relative error %.2e (bound %g)\n",
                   types[ti], n_seq, n1, e, TOL);
            CHECK(e <= TOL, "%s: block kernels vs dequantize-then-f32: %.3g", types[ti], e);
            free(a);
            free(b);
            free_twin(&t);
        }
        wkv_model_free(q);
        free(data);
        free(err);
        gen_layout_free(&lay);
    }
    free(enc);
    for (int k = 0; k < n_seq; k++)
        free(seq[k].toks);
    if (parser)
        g_object_unref(parser);
    free(mel);
    return tu_finish("quant_logits");
}
