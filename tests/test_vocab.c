/* The vocabulary against the real vocab-only ggml files: special token ids of each
 * layout, BPE by rank, the reference's non-speech suppress list, and decoding tokens
 * to text the way the reference's tokenizer does. */
#include "base/util.h"
#include "model/model.h"
#include "model/vocab.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static void check_specials(void)
{
    /* the ids of openai/whisper's tokenizer.py for each vocabulary size */
    wkv_specials en = wkv__specials_for(51864), mu = wkv__specials_for(51865),
                 v3 = wkv__specials_for(51866);
    CHECK(en.eot == 50256 && en.sot == 50257 && en.lang_begin == 50258 && en.n_langs == 99 &&
              en.translate == 50357 && en.transcribe == 50358 && en.startoflm == 50359 &&
              en.startofprev == 50360 && en.nospeech == 50361 && en.notimestamps == 50362 &&
              en.timestamp_begin == 50363,
          "English-only special ids");
    CHECK(mu.eot == 50257 && mu.sot == 50258 && mu.lang_begin == 50259 &&
              mu.translate == 50358 && mu.transcribe == 50359 && mu.startofprev == 50361 &&
              mu.nospeech == 50362 && mu.notimestamps == 50363 && mu.timestamp_begin == 50364,
          "multilingual special ids");
    CHECK(v3.n_langs == 100 && v3.translate == 50359 && v3.timestamp_begin == 50365,
          "large-v3 special ids");
    CHECK(en.timestamp_begin + WKV_N_TIMESTAMPS == 51864 &&
              mu.timestamp_begin + WKV_N_TIMESTAMPS == 51865 &&
              v3.timestamp_begin + WKV_N_TIMESTAMPS == 51866,
          "1501 timestamps end the vocabulary");
}

static void check_text(const wkv_model *m)
{
    int ids[8];
    /* "Hello world" and " hello" in the GPT-2 ranks */
    int n = wkv__bpe_encode(m, "Hello", 5, ids, 8);
    CHECK(n == 1 && ids[0] == 15496, "BPE 'Hello' -> %d tokens, first %d", n, ids[0]);
    n = wkv__bpe_encode(m, " world", 6, ids, 8);
    CHECK(n == 1 && ids[0] == 995, "BPE ' world' -> %d, %d", n, ids[0]);
    n = wkv__bpe_encode(m, " hello", 6, ids, 8);
    CHECK(n == 1 && ids[0] == 23748, "BPE ' hello' -> %d, %d", n, ids[0]);

    /* the pre-tokenizer: contractions, " ?letters", " ?numbers", " ?other", and white
     * space that leaves its last character to the next word (ids from tiktoken gpt2) */
    static const int want[] = {15496, 995, 11, 340, 338, 48609, 0, 220, 24429, 13, 628, 2124};
    int got[32];
    n = wkv_text_to_tokens(m, "Hello world, it's 2024!  Done.\n\n x", got, 32);
    CHECK(n == 12 && !memcmp(got, want, sizeof want), "text_to_tokens: %d tokens", n);
    static const int want2[] = {1770, 13, 2264, 346, 353, 318, 262, 46329, 286, 262, 3504, 6097};
    n = wkv_text_to_tokens(m, " Mr. Quilter is the apostle of the middle classes", got, 32);
    CHECK(n == 12 && !memcmp(got, want2, sizeof want2), "text_to_tokens 2: %d tokens", n);
    CHECK(wkv_text_to_tokens(m, "", got, 32) == 0, "empty text");

    const wkv_specials *sp = wkv_model_specials(m);
    int toks[] = {15496, 995, sp->sot, sp->lang_begin + 2, sp->timestamp_begin + 5, sp->eot};
    char *t = wkv_tokens_to_text(m, toks, 6, 0);
    CHECK(strcmp(t, "Hello world<|startoftranscript|><|de|><|endoftext|>") == 0,
          "decode with specials: '%s'", t);
    free(t);
    t = wkv_tokens_to_text(m, toks, 6, 1);
    CHECK(strcmp(t, "Hello world") == 0, "decode text only: '%s'", t);
    free(t);
    size_t len;
    const char *b = wkv_token_bytes(m, sp->timestamp_begin + 150, &len);
    CHECK(b && len == 8 && memcmp(b, "<|3.00|>", 8) == 0, "timestamp spelling");
    CHECK(wkv_token_bytes(m, m->hp.n_vocab, &len) == NULL, "out of range token");
}

/* Python's bytes.decode("utf-8", errors="replace") and str.strip() */
static void check_utf8(const wkv_model *m)
{
    /* find single-byte tokens for the raw bytes we need */
    struct {
        const char *in;
        size_t n;
        const char *want;
    } cases[] = {
        {"a\xe2\x82\xac", 4, "a\xe2\x82\xac"},                      /* valid euro sign */
        {"\xe2\x82", 2, "\xef\xbf\xbd"},                           /* truncated: one U+FFFD */
        {"\xe2\x82" "a", 3, "\xef\xbf\xbd" "a"},
        {"\xff\xfe", 2, "\xef\xbf\xbd\xef\xbf\xbd"},               /* each invalid byte */
        {"\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* surrogate: 3 */
        {"\xf0\x9f\x98", 3, "\xef\xbf\xbd"},                       /* truncated 4-byte */
        {"\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"},               /* overlong */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int toks[8], n = 0;
        for (size_t i = 0; i < cases[c].n; i++) {
            int id = wkv__vocab_find(m, cases[c].in + i, 1);
            CHECK(id >= 0, "byte %02x has a token", (unsigned char)cases[c].in[i]);
            toks[n++] = id;
        }
        char *t = wkv_tokens_to_text(m, toks, n, 1);
        CHECK(strcmp(t, cases[c].want) == 0, "utf-8 case %zu", c);
        free(t);
    }
    char s1[] = " \t\xc2\xa0 text \xe3\x80\x80\n";
    CHECK(strcmp(wkv__text_strip(s1), "text") == 0, "strip unicode spaces: '%s'", s1);
    char s2[] = "   ";
    CHECK(strcmp(wkv__text_strip(s2), "") == 0, "strip all");
}

/* The strings the reference's non_speech_tokens looks at; the last seven are the
 * music symbols, whose first token counts even when they take several. */
static const char *const SYMBOLS[] = {
    "\"", "#", "(", ")", "*", "+", "/", ":", ";", "<", "=", ">", "@", "[", "\\",
    "]", "^", "_", "`", "{", "|", "}", "~", "\xe3\x80\x8c", "\xe3\x80\x8d",
    "\xe3\x80\x8e", "\xe3\x80\x8f", "<<", ">>", "<<<", ">>>", "--", "---", "-(",
    "-[", "('", "(\"", "((", "))", "(((", ")))", "[[", "]]", "{{", "}}",
    "\xe2\x99\xaa\xe2\x99\xaa", "\xe2\x99\xaa\xe2\x99\xaa\xe2\x99\xaa",
    "\xe2\x99\xa9", "\xe2\x99\xaa", "\xe2\x99\xab", "\xe2\x99\xac",
    "\xe2\x99\xad", "\xe2\x99\xae", "\xe2\x99\xaf",
};
#define N_SYMBOLS ((int)(sizeof SYMBOLS / sizeof *SYMBOLS))
#define FIRST_MUSIC (N_SYMBOLS - 7)

/* Does the token spell a symbol (alone or after a space), or, for the music symbols,
 * the start of one? */
static int spells_symbol(const char *b, size_t len)
{
    if ((len == 2 && (!memcmp(b, " -", 2) || !memcmp(b, " '", 2))))
        return 1;
    for (int s = 0; s < N_SYMBOLS; s++)
        for (int space = 0; space < 2; space++) {
            char buf[32];
            size_t n = (size_t)snprintf(buf, sizeof buf, "%s%s", space ? " " : "", SYMBOLS[s]);
            if (len == n && !memcmp(b, buf, n))
                return 1;
            if (s >= FIRST_MUSIC && len < n && len > 0 && !memcmp(b, buf, len))
                return 1;
        }
    return 0;
}

static int contains(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

static void check_suppress(const char *file, int n_non_speech, long sum, int multilingual)
{
    char *err = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_shared_path(file));
    wkv_model *m = wkv__model_load_vocab_only(path, &err);
    CHECK(m != NULL, "%s: %s", file, err ? err : "");
    free(err);
    if (!m)
        return;
    CHECK(wkv_model_is_multilingual(m) == multilingual, "%s multilingual flag", file);
    const wkv_specials *sp = wkv_model_specials(m);
    int n_ns;
    const int *ns = wkv__non_speech_tokens(m, &n_ns);
    long s = 0;
    for (int i = 0; i < n_ns; i++)
        s += ns[i];
    /* count and sum computed with the reference's algorithm (tokenizer.py
     * non_speech_tokens) over openai-assets/{gpt2,multilingual}.tiktoken */
    CHECK(n_ns == n_non_speech, "%s: %d non-speech tokens, want %d", file, n_ns, n_non_speech);
    CHECK(s == sum, "%s: non-speech ids sum to %ld, want %ld", file, s, sum);

    /* the embedded ids against the vocabulary: every symbol the file holds as one
     * token is listed, and every listed id spells a symbol or is a token the file
     * stores lossily as U+FFFD (then only the reference's rank files could say) */
    int spelled = 0, lossy_n = 0;
    for (int sidx = 0; sidx < N_SYMBOLS; sidx++)
        for (int space = 0; space < 2; space++) {
            char buf[32];
            int len = snprintf(buf, sizeof buf, "%s%s", space ? " " : "", SYMBOLS[sidx]);
            int id = wkv__vocab_find(m, buf, (size_t)len);
            CHECK(id < 0 || contains(ns, n_ns, id), "%s: '%s' is token %d, not listed", file,
                  buf, id);
        }
    for (int i = 0; i < n_ns; i++) {
        size_t len;
        const char *b = wkv_token_bytes(m, ns[i], &len);
        int lossy = b && memmem(b, len, "\xef\xbf\xbd", 3) != NULL;
        int ok = b && spells_symbol(b, len);
        spelled += ok;
        lossy_n += !ok && lossy;
        CHECK(ok || lossy, "%s: listed id %d ('%.*s') spells no symbol", file, ns[i],
              (int)len, b ? b : "");
    }
    printf("%s: %d non-speech ids: %d spell their symbol, %d are stored as U+FFFD\n", file,
           n_ns, spelled, lossy_n);

    /* the suppress list: those plus the six control tokens, sorted and unique */
    CHECK(m->n_suppress == n_ns + 6, "%s: suppress list has %d ids", file, m->n_suppress);
    int extra[6] = {sp->transcribe, sp->translate, sp->sot, sp->startofprev, sp->startoflm,
                    sp->nospeech};
    for (int k = 0; k < 6; k++)
        CHECK(contains(m->suppress, m->n_suppress, extra[k]), "control token %d suppressed",
              extra[k]);
    for (int i = 1; i < m->n_suppress; i++)
        CHECK(m->suppress[i] > m->suppress[i - 1], "suppress list sorted, unique");

    if (!multilingual) {
        check_text(m);
        check_utf8(m);
    }
    CHECK(wkv_lang_token(m, "en") == sp->lang_begin &&
              wkv_lang_token(m, "de") == sp->lang_begin + 2 && wkv_lang_token(m, "auto") == -1 &&
              wkv_lang_token(m, "xx") == -1,
          "language codes");
    CHECK(wkv_lang_code(m, sp->lang_begin + 98) &&
              strcmp(wkv_lang_code(m, sp->lang_begin + 98), "su") == 0,
          "last language of 99 is su");
    wkv_model_free(m);
}

int main(void)
{
    check_specials();
    tu_require_shared("the vocab-only model files (models/for-tests-ggml-*.bin)");
    check_suppress("models/for-tests-ggml-tiny.en.bin", 84, 750220, 0);
    check_suppress("models/for-tests-ggml-tiny.bin", 82, 826094, 1);
    return tu_finish("vocab");
}
