/* libFuzzer target: the hand-written text paths of the vocabulary on any bytes.
 *
 * The input is a prompt text up to its first NUL (core/model/tokenize.c: the pre-tokenizer's
 * UTF-8 decoding and classes, then BPE in vocab.c), and after the NUL token ids as
 * little-endian u16 minus 1024, so negative ids, every id and ids past the vocabulary
 * (vocab.c: token bytes joined and repaired to UTF-8 the way
 * Python's errors="replace" does, then str.strip()).
 *
 * Oracles: byte-level BPE is lossless, so the tokens' bytes joined are the text; a
 * smaller output buffer gives the same count and a prefix of the ids; decoding gives
 * valid UTF-8, the text itself when the text was valid UTF-8.
 *
 * The vocabulary is a vocabulary-only (or full) ggml file: $WKV_FUZZ_VOCAB, else the
 * build-time default (a shared vocabulary, read where it is, not copied). */
#include "base/util.h"
#include "model/vocab.h"
#include "model/model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef WKV_FUZZ_VOCAB_DEFAULT
#define WKV_FUZZ_VOCAB_DEFAULT ""
#endif

static wkv_model *g_vocab;

/* Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF), written
 * independently of vocab.c's. */
static int valid_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = s[i];
        size_t len;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            len = 2;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            len = 3;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += len;
    }
    return 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("WKV_FUZZ_VOCAB");
    if (!path || !*path)
        path = WKV_FUZZ_VOCAB_DEFAULT;
    char *err = NULL;
    g_vocab = wkv__model_load_vocab_only(path, &err);
    if (!g_vocab) {
        fprintf(stderr, "fuzz_tokenize: no vocabulary (set WKV_FUZZ_VOCAB): %s\n",
                err ? err : path);
        exit(1);
    }
    return 0;
}

static void check_text(const char *text, size_t n)
{
    int k = wkv_text_to_tokens(g_vocab, text, NULL, 0);
    if (k < 0) /* every byte is a token, so only running out of memory may fail */
        abort();
    int *ids = malloc(((size_t)k + 1) * sizeof *ids);
    int *half = malloc(((size_t)k / 2 + 1) * sizeof *half);
    if (!ids || !half)
        abort();
    if (wkv_text_to_tokens(g_vocab, text, ids, k) != k ||
        wkv_text_to_tokens(g_vocab, text, half, k / 2) != k ||
        memcmp(ids, half, (size_t)(k / 2) * sizeof *ids) != 0) {
        fprintf(stderr, "the count or the ids depend on the output buffer\n");
        abort();
    }
    size_t at = 0;
    for (int i = 0; i < k; i++) {
        size_t len;
        const char *b = wkv_token_bytes(g_vocab, ids[i], &len);
        if (!b || ids[i] >= wkv_model_specials(g_vocab)->eot || at + len > n ||
            memcmp(text + at, b, len) != 0) {
            fprintf(stderr, "token %d (id %d) is not the text's bytes at %zu\n", i, ids[i], at);
            abort();
        }
        at += len;
    }
    if (at != n) {
        fprintf(stderr, "the tokens hold %zu of the text's %zu bytes\n", at, n);
        abort();
    }
    char *back = wkv_tokens_to_text(g_vocab, ids, k, 1);
    if (!back || !valid_utf8((const uint8_t *)back, strlen(back)) ||
        (valid_utf8((const uint8_t *)text, n) && strcmp(back, text) != 0)) {
        fprintf(stderr, "decoding the tokens does not give the text back\n");
        abort();
    }
    free(back);
    free(ids);
    free(half);
}

static void check_ids(const uint8_t *p, size_t n)
{
    size_t k = n / 2;
    int *ids = malloc((k + 1) * sizeof *ids);
    if (!ids)
        abort();
    for (size_t i = 0; i < k; i++)
        ids[i] = (p[2 * i] | p[2 * i + 1] << 8) - 1024;
    for (int text_only = 0; text_only < 2; text_only++) {
        char *t = wkv_tokens_to_text(g_vocab, ids, (int)k, text_only);
        if (!t || !valid_utf8((const uint8_t *)t, strlen(t)))
            abort();
        size_t before = strlen(t);
        wkv__text_strip(t);
        if (strlen(t) > before || !valid_utf8((const uint8_t *)t, strlen(t)))
            abort();
        free(t);
    }
    free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = 0;
    while (n < size && data[n])
        n++;
    char *text = malloc(n + 1);
    if (!text)
        abort();
    memcpy(text, data, n);
    text[n] = 0;
    check_text(text, n);
    free(text);
    if (n < size)
        check_ids(data + n + 1, size - n - 1);
    return 0;
}
