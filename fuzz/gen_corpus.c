/* gen_corpus: the fuzzers' seed corpora, made at build time with the test generator.
 *
 *   gen_corpus model DIR   valid micro models of every weight type (4 or 32 state, one
 *                          layer each side, one audio and one text position) and broken
 *                          ones: truncated, wrong magic, out-of-range and huge
 *                          hyper-parameters, bad tensor headers, NaN / infinite weights
 *   gen_corpus text DIR    prompt texts (ASCII, contractions, numbers, white space,
 *                          multi-byte and broken UTF-8), some followed by a NUL and
 *                          token ids (little-endian u16, id + 1024) for the decoding half
 *   gen_corpus vocab FILE  a vocabulary-only ggml file (synthetic vocabulary) for
 *                          fuzz_tokenize when the shared vocabularies are missing
 */
#include "genlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *g_dir;
static int g_failed;

static void put(const char *name, const void *data, size_t size)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    if (gen_write_file(path, data, size)) {
        fprintf(stderr, "gen_corpus: cannot write %s\n", path);
        g_failed = 1;
    }
}

static void put_i32(uint8_t *b, uint64_t off, int32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + (uint64_t)i] = (uint8_t)((uint32_t)v >> (8 * i));
}

/* A copy of base with the i32 at off set to v, written as name. */
static void put_patched(const char *name, const uint8_t *base, size_t size, uint64_t off,
                        int32_t v)
{
    uint8_t *b = malloc(size);
    if (!b) {
        g_failed = 1;
        return;
    }
    memcpy(b, base, size);
    put_i32(b, off, v);
    put(name, b, size);
    free(b);
}

static int build(int ftype, int n_state, int n_vocab, int n_mels, int conv1d, uint8_t **data,
                 size_t *size, gen_layout *lay)
{
    gen_params p;
    memset(&p, 0, sizeof p);
    p.n_state = n_state;
    p.n_head = 1;
    p.n_audio_layer = p.n_text_layer = 1;
    p.n_audio_ctx = p.n_text_ctx = 1;
    p.n_vocab = n_vocab;
    p.n_mels = n_mels;
    p.ftype = ftype;
    p.seed = 3;
    p.n_tokens = 300;
    p.conv_bias_1d = conv1d;
    char *err = NULL;
    if (gen_model_build(&p, data, size, lay, &err)) {
        fprintf(stderr, "gen_corpus: %s\n", err ? err : "generator failed");
        free(err);
        g_failed = 1;
        return -1;
    }
    return 0;
}

static void model_corpus(void)
{
    uint8_t *d;
    size_t n;
    gen_layout lay;
    char name[64];
    for (int ft = 0; ft < 1000; ft++) /* every quantized ftype the generator writes */
        if (gen_quant_type(ft) >= 0 && build(ft, 32, 51864, 80, 0, &d, &n, NULL) == 0) {
            snprintf(name, sizeof name, "valid-%s", gen_ftype_name(ft));
            put(name, d, n);
            if (ft == 7) { /* a q8_0 block scale of 65504: 127 * 65504 overflows f16 */
                gen_layout l2;
                free(d);
                if (build(7, 32, 51864, 80, 0, &d, &n, &l2) == 0) {
                    int t = gen_layout_find(&l2, "decoder.blocks.0.mlp.0.weight");
                    if (t >= 0) {
                        d[l2.tensors[t].data_off] = 0xff;
                        d[l2.tensors[t].data_off + 1] = 0x7b;
                        put("bad-q8-f16-overflow", d, n);
                    }
                    gen_layout_free(&l2);
                }
            }
            free(d);
        }
    if (build(0, 4, 51866, 128, 1, &d, &n, NULL) == 0) {
        put("valid-f32-large-v3", d, n);
        free(d);
    }
    if (build(1, 4, 51865, 80, 0, &d, &n, NULL) == 0) {
        put("valid-f16-multilingual", d, n);
        free(d);
    }
    if (build(0, 4, 51864, 80, 0, &d, &n, &lay) == 0) {
        put("valid-f32", d, n);
        int t = gen_layout_find(&lay, "encoder.blocks.0.attn.query.weight");
        if (t >= 0) {
            put_i32(d, lay.tensors[t].data_off + 4, 0x7fc00000); /* NaN */
            put("bad-nan-weight", d, n);
        }
        gen_layout_free(&lay);
        free(d);
    }
    if (build(1, 4, 51864, 80, 0, &d, &n, &lay) != 0)
        return;
    put("valid-f16", d, n);
    put("vocab-only", d, lay.vocab_end);
    /* truncations at every section */
    const uint64_t cuts[] = {0, 3, 4, 20, lay.mel_off + 4, lay.mel_off + 1000, lay.vocab_off + 2,
                             lay.vocab_off + 700, lay.vocab_end + 5, lay.tensors[0].data_off + 3,
                             n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        snprintf(name, sizeof name, "bad-truncated-%llu", (unsigned long long)cuts[i]);
        put(name, d, cuts[i]);
    }
    const uint64_t hp = lay.hparams_off;
    put_patched("bad-magic", d, n, 0, 0x12345678);
    put_patched("bad-gguf", d, n, 0, 0x46554747);
    put_patched("bad-n-vocab", d, n, hp, 50000);
    put_patched("bad-audio-ctx", d, n, hp + 4, 1501);
    put_patched("bad-heads", d, n, hp + 12, 3);
    put_patched("huge-state", d, n, hp + 8, 8192);
    put_patched("huge-layers", d, n, hp + 16, 64);
    put_patched("bad-ftype", d, n, hp + 40, 1999);
    put_patched("bad-qnt-version", d, n, hp + 40, 1002);
    put_patched("bad-mel-bins", d, n, lay.mel_off + 4, 200);
    put_patched("bad-mel-nan", d, n, lay.mel_off + 8 + 4 * 10, 0x7f800000);
    put_patched("bad-vocab-count", d, n, lay.vocab_off, 51865);
    put_patched("bad-token-length", d, n, lay.vocab_off + 4, -1);
    const gen_tensor_info *t0 = &lay.tensors[0], *t1 = &lay.tensors[1];
    put_patched("bad-n-dims", d, n, t0->hdr_off, 5);
    put_patched("bad-name-len", d, n, t0->hdr_off + 4, 256);
    put_patched("bad-type", d, n, t0->hdr_off + 8, 5);
    put_patched("bad-quantized-1d", d, n, t1->hdr_off + 8, 8);
    put_patched("bad-shape", d, n, t0->ne_off, 5);
    put_patched("bad-negative-dim", d, n, t0->ne_off, -1);
    /* an unknown name, a layer that does not exist, a tensor twice */
    uint8_t *b = malloc(n + t1->end_off - t1->hdr_off);
    if (b) {
        memcpy(b, d, n);
        b[t0->name_off] = 'X';
        put("bad-unknown-name", b, n);
        memcpy(b, d, n);
        int k = gen_layout_find(&lay, "decoder.blocks.0.attn.query.weight");
        if (k >= 0) {
            b[lay.tensors[k].name_off + strlen("decoder.blocks.")] = '7';
            put("bad-layer", b, n);
        }
        memcpy(b, d, n);
        memcpy(b + n, d + t1->hdr_off, t1->end_off - t1->hdr_off);
        put("bad-duplicate", b, n + t1->end_off - t1->hdr_off);
        free(b);
    }
    int k = gen_layout_find(&lay, "decoder.token_embedding.weight");
    if (k >= 0) {
        uint8_t *c = malloc(n);
        if (c) {
            memcpy(c, d, n);
            c[lay.tensors[k].data_off + 6] = 0x00;
            c[lay.tensors[k].data_off + 7] = 0x7c; /* f16 +infinity */
            put("bad-inf-f16", c, n);
            free(c);
        }
    }
    gen_layout_free(&lay);
    free(d);
}

static void text_corpus(void)
{
    static const char *const texts[] = {
        "Hello world.",
        " And so, my fellow Americans: ask not what your country can do for you.",
        "don't we'll I'm you're they've she'd it's 'S 'T",
        "12345 67.89 3rd 1st $100 50% #hashtag @user",
        "   leading and trailing spaces   ",
        "tabs\tand\nnew\r\nlines\n\n\n  x",
        "Grüße aus Köln, naïve café, ÆØÅ æøå",
        "日本語のテキスト、中文文本，한국어 텍스트",
        "emoji 😀👍🏽 and flags 🇩🇪 and ZWJ 👩‍💻",
        "Ελληνικά Русский עברית العربية हिन्दी",
        "\xff\xfe broken \xc3 utf-8 \xe2\x82 here \xed\xa0\x80 surrogate \xc0\xaf overlong",
        "\xf4\x90\x80\x80 beyond U+10FFFF, \xf8\x88\x80\x80\x80 five bytes",
        "<|endoftext|><|startoftranscript|><|en|> specials spelled out",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "\xe3\x80\x80\xc2\xa0\xe2\x80\x83 unicode spaces \xe2\x80\xa8\xe2\x80\xa9",
        "",
    };
    char name[32];
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        snprintf(name, sizeof name, "text-%02zu", i);
        put(name, texts[i], strlen(texts[i]));
    }
    /* text, NUL, then token ids (+ 1024, as u16): bytes, words, eot/sot, languages,
     * timestamps, past the vocabulary, negative */
    static const int ids[] = {0, 1, 255, 256, 1000, 50256, 50257, 50258, 50259, 50358, 50359,
                              50362, 50363, 50364, 51864, 51865, 30000, -1, -1024, 64511, 220,
                              198};
    uint8_t buf[256];
    const char *t = "with ids";
    size_t o = strlen(t) + 1;
    memcpy(buf, t, o);
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        buf[o++] = (uint8_t)((ids[i] + 1024) & 0xff);
        buf[o++] = (uint8_t)((ids[i] + 1024) >> 8);
    }
    put("ids-mixed", buf, o);
    /* an empty text, then byte-token ids only (163, 153, 64) */
    const uint8_t partial[] = {0, 0xa3, 0x04, 0x99, 0x04, 0x40, 0x04};
    put("ids-partial-utf8", partial, sizeof partial);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_corpus model|text DIR | gen_corpus vocab FILE\n");
        return 2;
    }
    if (strcmp(argv[1], "vocab") == 0) {
        uint8_t *d;
        size_t n;
        gen_layout lay;
        if (build(1, 4, 51864, 80, 0, &d, &n, &lay))
            return 1;
        int rc = gen_write_file(argv[2], d, lay.vocab_end) ? 1 : 0;
        gen_layout_free(&lay);
        free(d);
        return rc;
    }
    g_dir = argv[2];
    if (mkdir(g_dir, 0755) != 0 && errno != EEXIST) {
        perror(g_dir);
        return 1;
    }
    if (strcmp(argv[1], "model") == 0)
        model_corpus();
    else if (strcmp(argv[1], "text") == 0)
        text_corpus();
    else {
        fprintf(stderr, "gen_corpus: unknown corpus '%s'\n", argv[1]);
        return 2;
    }
    return g_failed;
}
