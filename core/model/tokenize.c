/* Text -> tokens the way the reference's tiktoken encodings do: the GPT-2
 * pre-tokenizer pattern
 *   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 * splits the text into pieces, and each piece is BPE-encoded by rank (vocab.c). */
#include "model/vocab.h"
#include "base/util.h"
#include "model/unicode_tables.h"

#include <stdlib.h>
#include <string.h>

static int in_table(const uint32_t (*t)[2], size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cp < t[mid][0])
            hi = mid;
        else if (cp > t[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

#define N_OF(t) (sizeof t / sizeof *t)
enum { C_LETTER, C_NUMBER, C_SPACE, C_OTHER, C_END };

/* Decodes one code point at s[i] (invalid bytes count as one "other" character). */
static int next_cp(const char *s, size_t n, size_t i, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s + i;
    size_t left = n - i;
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    int len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc0 ? 2 : 1;
    if (len == 1 || (size_t)len > left) {
        *cp = 0xfffd;
        return 1;
    }
    uint32_t c = p[0] & (0x7f >> len);
    for (int k = 1; k < len; k++) {
        if ((p[k] & 0xc0) != 0x80) {
            *cp = 0xfffd;
            return 1;
        }
        c = c << 6 | (p[k] & 0x3f);
    }
    *cp = c;
    return len;
}

static int class_at(const char *s, size_t n, size_t i, int *len)
{
    if (i >= n) {
        *len = 0;
        return C_END;
    }
    uint32_t cp;
    *len = next_cp(s, n, i, &cp);
    if (in_table(WKV_UNI_LETTER, N_OF(WKV_UNI_LETTER), cp))
        return C_LETTER;
    if (in_table(WKV_UNI_NUMBER, N_OF(WKV_UNI_NUMBER), cp))
        return C_NUMBER;
    if (in_table(WKV_UNI_SPACE, N_OF(WKV_UNI_SPACE), cp))
        return C_SPACE;
    return C_OTHER;
}

/* Length of the pre-token that starts at s[i]. */
static size_t pretoken(const char *s, size_t n, size_t i)
{
    static const char *const contractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
    for (size_t k = 0; k < 7; k++) {
        size_t len = strlen(contractions[k]);
        if (i + len <= n && memcmp(s + i, contractions[k], len) == 0)
            return len;
    }
    int l0, l1;
    int c0 = class_at(s, n, i, &l0);
    size_t j = i;
    int cls = c0;
    if (s[i] == ' ') { /* " ?" then a letter, number or other run */
        int c1 = class_at(s, n, i + 1, &l1);
        if (c1 == C_LETTER || c1 == C_NUMBER || c1 == C_OTHER) {
            j = i + 1;
            cls = c1;
        }
    }
    if (cls == C_LETTER || cls == C_NUMBER || cls == C_OTHER) {
        int len;
        while (class_at(s, n, j, &len) == cls)
            j += (size_t)len;
        return j - i;
    }
    /* white space: all of it at the end, else all but the last character */
    size_t last = i;
    int len;
    while (class_at(s, n, j, &len) == C_SPACE) {
        last = j;
        j += (size_t)len;
    }
    if (j >= n || last == i)
        return j - i;
    return last - i;
}

int wkv_text_to_tokens(const wkv_model *m, const char *text, int *out, int max_out)
{
    size_t n = strlen(text);
    int count = 0;
    for (size_t i = 0; i < n;) {
        size_t len = pretoken(text, n, i);
        if (len == 0)
            len = 1;
        int room = count < max_out ? max_out - count : 0;
        int k = wkv__bpe_encode(m, text + i, len, out ? out + count : NULL, out ? room : 0);
        if (k < 0 || k > INT32_MAX - count)
            return -1;
        count += k;
        i += len;
    }
    return count;
}

int wkv__initial_prompt_tokens(const wkv_model *m, const char *prompt, int **out,
                              char **error)
{
    *out = NULL;
    if (!prompt || !*prompt)
        return 0;
    char *stripped = wkv__strdup(prompt);
    char *text = stripped ? wkv__strdup_printf(" %s", wkv__text_strip(stripped)) : NULL;
    wkv__free(stripped);
    int n = text ? wkv_text_to_tokens(m, text, NULL, 0) : -1;
    int *toks = n > 0 ? wkv__malloc((size_t)n * sizeof *toks) : NULL;
    if (n < 0 || (n > 0 && (!toks || wkv_text_to_tokens(m, text, toks, n) != n))) {
        wkv__free(text);
        wkv__free(toks);
        wkv__set_error(error, "cannot encode the initial prompt");
        return -1;
    }
    wkv__free(text);
    *out = toks;
    return n;
}
