/* The vocabulary: token bytes, special token ids and spellings, language codes,
 * byte-level BPE by rank, the reference's suppress list, and decoding tokens to text
 * the way the reference tokenizer does (Python's UTF-8 errors="replace"). */
#include "base/util.h"
#include "model/model.h"
#include "model/vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference's language order (tokenizer.LANGUAGES); large-v3 adds "yue". */
static const char *const LANG_CODES[100] = {
    "en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar",
    "sv", "it", "id", "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu",
    "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk", "te", "fa",
    "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn",
    "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc",
    "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn",
    "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw",
    "su", "yue",
};

wkv_specials wkv__specials_for(int n_vocab)
{
    wkv_specials s;
    int multilingual = n_vocab >= 51865;
    s.eot = 50256 + multilingual;
    s.sot = s.eot + 1;
    s.lang_begin = s.sot + 1;
    s.n_langs = n_vocab == 51866 ? 100 : 99;
    s.translate = s.lang_begin + s.n_langs;
    s.transcribe = s.translate + 1;
    s.startoflm = s.transcribe + 1;
    s.startofprev = s.startoflm + 1;
    s.nospeech = s.startofprev + 1;
    s.notimestamps = s.nospeech + 1;
    s.timestamp_begin = s.notimestamps + 1;
    return s;
}

/* ---------------------------------------------------------------- lookup table */

static uint32_t hash_bytes(const char *p, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 16777619u;
    return h;
}

int wkv__vocab_find(const wkv_model *m, const char *bytes, size_t len)
{
    if (!m->bpe_table || len == 0)
        return -1;
    for (uint32_t i = hash_bytes(bytes, len) & m->bpe_mask;; i = (i + 1) & m->bpe_mask) {
        int32_t id = m->bpe_table[i];
        if (id < 0)
            return -1;
        if (m->tok_len[id] == len && memcmp(m->tok_bytes + m->tok_off[id], bytes, len) == 0)
            return id;
    }
}

static int build_table(wkv_model *m)
{
    uint32_t size = 1;
    while (size < 2u * (uint32_t)m->n_tokens + 2)
        size <<= 1;
    m->bpe_table = wkv__malloc(size * sizeof *m->bpe_table);
    if (!m->bpe_table)
        return -1;
    memset(m->bpe_table, 0xff, size * sizeof *m->bpe_table);
    m->bpe_mask = size - 1;
    int n = m->n_tokens < m->sp.eot ? m->n_tokens : m->sp.eot;
    for (int id = 0; id < n; id++) {
        const char *p = m->tok_bytes + m->tok_off[id];
        uint32_t len = m->tok_len[id];
        if (len == 0 || wkv__vocab_find(m, p, len) >= 0)
            continue; /* the lowest id wins */
        uint32_t i = hash_bytes(p, len) & m->bpe_mask;
        while (m->bpe_table[i] >= 0)
            i = (i + 1) & m->bpe_mask;
        m->bpe_table[i] = id;
    }
    return 0;
}

/* ---------------------------------------------------------------- BPE */

/* Byte-level BPE by rank: the text's bytes are the first parts, and the adjacent pair
 * whose concatenation is the token of lowest rank (= id) is merged, leftmost first on
 * ties, until no pair is a token.  Rescanning every pair after each merge is quadratic
 * (a 256-KB word took two minutes), so the candidate pairs wait in a min-heap ordered
 * by (rank, position); a merge only creates the two pairs around the new part, and an
 * entry whose parts have changed since it was pushed is dropped when it comes up. */

typedef struct {
    int rank;
    size_t left, right, end; /* the parts [left, right) and [right, end) */
} bpe_pair;

static int pair_before(const bpe_pair *a, const bpe_pair *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static void heap_push(bpe_pair *h, size_t *n, bpe_pair p)
{
    size_t i = (*n)++;
    while (i > 0 && pair_before(&p, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = p;
}

static bpe_pair heap_pop(bpe_pair *h, size_t *n)
{
    bpe_pair top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && pair_before(&h[c + 1], &h[c]))
            c++;
        if (!pair_before(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

/* Pushes the pair [left, right) + [right, end) when its bytes are a token. */
static void push_pair(const wkv_model *m, const char *bytes, bpe_pair *h, size_t *n,
                      size_t left, size_t right, size_t end)
{
    int id = wkv__vocab_find(m, bytes + left, end - left);
    if (id >= 0)
        heap_push(h, n, (bpe_pair){id, left, right, end});
}

int wkv__bpe_encode(const wkv_model *m, const char *bytes, size_t len, int *out,
                   int max_out)
{
    if (len == 0)
        return 0;
    if (len > SIZE_MAX / 4 / sizeof(bpe_pair))
        return -1;
    /* a part starting at s (alive[s]) ends at end[s]; prev[s] is the part before it.
     * Pushes: len - 1 first pairs, then at most two per merge (at most len - 1). */
    size_t *end = wkv__malloc(len * sizeof *end), *prev = wkv__malloc(len * sizeof *prev);
    char *alive = wkv__malloc(len);
    bpe_pair *heap = wkv__malloc(3 * len * sizeof *heap);
    int count = -1;
    if (!end || !prev || !alive || !heap)
        goto done;
    const size_t none = SIZE_MAX;
    size_t nh = 0;
    for (size_t i = 0; i < len; i++) {
        end[i] = i + 1;
        prev[i] = i ? i - 1 : none;
        alive[i] = 1;
    }
    for (size_t i = 0; i + 1 < len; i++)
        push_pair(m, bytes, heap, &nh, i, i + 1, i + 2);
    while (nh > 0) {
        bpe_pair p = heap_pop(heap, &nh);
        if (!alive[p.left] || end[p.left] != p.right || !alive[p.right] ||
            end[p.right] != p.end)
            continue; /* a part of it was merged with another since */
        alive[p.right] = 0;
        end[p.left] = p.end;
        if (p.end < len)
            prev[p.end] = p.left;
        if (prev[p.left] != none)
            push_pair(m, bytes, heap, &nh, prev[p.left], p.left, p.end);
        if (p.end < len)
            push_pair(m, bytes, heap, &nh, p.left, p.end, end[p.end]);
    }
    count = 0;
    for (size_t s = 0; s < len; s = end[s]) {
        int id = wkv__vocab_find(m, bytes + s, end[s] - s);
        if (id < 0) {
            count = -1; /* a byte missing from the vocabulary */
            break;
        }
        if (out && count < max_out)
            out[count] = id;
        if (count == INT32_MAX) {
            count = -1;
            break;
        }
        count++;
    }
done:
    wkv__free(end);
    wkv__free(prev);
    wkv__free(alive);
    wkv__free(heap);
    return count;
}

/* ---------------------------------------------------------------- suppress list */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* tokenizer.non_speech_tokens as the reference computes them from its rank files
 * (symbols whose encoding, alone or after a space, is one token; the first token of
 * the music symbols; " -" and " '").  Published ggml vocabularies store every token
 * that is not valid UTF-8 on its own as U+FFFD, so the partial-character tokens this
 * list needs cannot be derived from them: the ids are embedded, and test_vocab checks
 * them against the vocabulary. */
static const int NON_SPEECH_GPT2[84] = {
    1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93,
    357, 366, 438, 532, 685, 705, 796, 930, 1058, 1220, 1267, 1279, 1303, 1343, 1377, 1391,
    1635, 1782, 1875, 2162, 2361, 2488, 3467, 4008, 4211, 4600, 4808, 5299, 5855, 6329,
    7203, 9609, 9959, 10563, 10786, 11420, 11709, 11907, 13163, 13697, 13700, 14808, 15306,
    16410, 16791, 17992, 19203, 19510, 20724, 22305, 22935, 27007, 30109, 30420, 33409,
    34949, 40283, 40493, 40549, 47282, 49146,
};
static const int NON_SPEECH_MULTILINGUAL[82] = {
    1, 2, 7, 8, 9, 10, 14, 25, 26, 27, 28, 29, 31, 58, 59, 60, 61, 62, 63, 90, 91, 92, 93,
    359, 503, 522, 542, 873, 893, 902, 918, 922, 931, 1350, 1853, 1982, 2460, 2627, 3246,
    3253, 3268, 3536, 3846, 3961, 4183, 4667, 6585, 6647, 7273, 9061, 9383, 10428, 10929,
    11938, 12033, 12331, 12562, 13793, 14157, 14635, 15265, 15618, 16553, 16604, 18362,
    18956, 20075, 21675, 22520, 26130, 26161, 26435, 28279, 29464, 31650, 32302, 32470,
    36865, 42863, 47425, 49870, 50254,
};

const int *wkv__non_speech_tokens(const wkv_model *m, int *n)
{
    if (wkv_model_is_multilingual(m)) {
        *n = 82;
        return NON_SPEECH_MULTILINGUAL;
    }
    *n = 84;
    return NON_SPEECH_GPT2;
}

/* SuppressTokens("-1"): the non-speech tokens plus the control tokens. */
static int build_suppress(wkv_model *m)
{
    int n_ns;
    const int *ns = wkv__non_speech_tokens(m, &n_ns);
    int *list = wkv__malloc((size_t)(n_ns + 6) * sizeof *list);
    if (!list)
        return -1;
    int n = 0;
    for (int i = 0; i < n_ns; i++)
        list[n++] = ns[i];
    const wkv_specials *sp = &m->sp;
    int extra[6] = {sp->transcribe, sp->translate, sp->sot, sp->startofprev, sp->startoflm,
                    sp->nospeech};
    for (int i = 0; i < 6; i++)
        list[n++] = extra[i];
    qsort(list, (size_t)n, sizeof *list, cmp_int);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || list[u - 1] != list[i])
            list[u++] = list[i];
    m->suppress = list;
    m->n_suppress = u;
    return 0;
}

/* Token i < 256 of the byte-level BPE is the single byte at position i of GPT-2's
 * bytes_to_unicode order (printable '!'..'~', 0xa1..0xac, 0xae..0xff, then the rest
 * ascending).  Files that stored a lone non-UTF-8 byte as U+FFFD get it back. */
static void repair_byte_tokens(wkv_model *m)
{
    int order[256], n = 0;
    for (int b = 33; b <= 126; b++)
        order[n++] = b;
    for (int b = 161; b <= 172; b++)
        order[n++] = b;
    for (int b = 174; b <= 255; b++)
        order[n++] = b;
    for (int b = 0; b < 256; b++)
        if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)))
            order[n++] = b;
    for (int id = 0; id < 256 && id < m->n_tokens; id++) {
        char *p = m->tok_bytes + m->tok_off[id];
        if (m->tok_len[id] == 3 && memcmp(p, "\xef\xbf\xbd", 3) == 0) {
            p[0] = (char)order[id];
            m->tok_len[id] = 1;
        }
    }
}

/* ---------------------------------------------------------------- specials */

/* The first id with a stored special spelling: ids from the file's last token up to
 * eot have none (a short vocabulary need not allocate 50k empty spellings). */
static int first_spelled(const wkv_model *m)
{
    return m->n_tokens > m->sp.eot ? m->n_tokens : m->sp.eot;
}

/* Spellings of every id from first_spelled up to n_vocab (the file stores none). */
static int build_special_spellings(wkv_model *m)
{
    int first = first_spelled(m), n = m->hp.n_vocab - first;
    if (n <= 0)
        return 0;
    m->sp_off = wkv__malloc((size_t)n * sizeof *m->sp_off);
    m->sp_len = wkv__malloc((size_t)n * sizeof *m->sp_len);
    m->sp_bytes = wkv__malloc((size_t)n * 24);
    if (!m->sp_off || !m->sp_len || !m->sp_bytes)
        return -1;
    const wkv_specials *s = &m->sp;
    uint32_t pos = 0;
    for (int id = first; id < m->hp.n_vocab; id++) {
        char buf[24];
        if (id == s->eot)
            snprintf(buf, sizeof buf, "<|endoftext|>");
        else if (id == s->sot)
            snprintf(buf, sizeof buf, "<|startoftranscript|>");
        else if (id >= s->lang_begin && id < s->lang_begin + s->n_langs)
            snprintf(buf, sizeof buf, "<|%s|>", LANG_CODES[id - s->lang_begin]);
        else if (id == s->translate)
            snprintf(buf, sizeof buf, "<|translate|>");
        else if (id == s->transcribe)
            snprintf(buf, sizeof buf, "<|transcribe|>");
        else if (id == s->startoflm)
            snprintf(buf, sizeof buf, "<|startoflm|>");
        else if (id == s->startofprev)
            snprintf(buf, sizeof buf, "<|startofprev|>");
        else if (id == s->nospeech)
            snprintf(buf, sizeof buf, "<|nospeech|>");
        else if (id == s->notimestamps)
            snprintf(buf, sizeof buf, "<|notimestamps|>");
        else /* a timestamp */
            snprintf(buf, sizeof buf, "<|%.2f|>", (id - s->timestamp_begin) * 0.02);
        size_t len = strlen(buf);
        m->sp_off[id - first] = pos;
        m->sp_len[id - first] = (uint32_t)len;
        memcpy(m->sp_bytes + pos, buf, len);
        pos += (uint32_t)len;
    }
    return 0;
}

int wkv__vocab_init(wkv_model *m, char **error)
{
    m->sp = wkv__specials_for(m->hp.n_vocab);
    repair_byte_tokens(m);
    if (build_special_spellings(m) || build_table(m) || build_suppress(m)) {
        wkv__set_error(error, "%s: out of memory building the vocabulary", m->path);
        return -1;
    }
    return 0;
}

void wkv__vocab_free(wkv_model *m)
{
    wkv__free(m->sp_off);
    wkv__free(m->sp_len);
    wkv__free(m->sp_bytes);
    wkv__free(m->bpe_table);
    wkv__free(m->suppress);
    m->sp_off = m->sp_len = NULL;
    m->sp_bytes = NULL;
    m->bpe_table = NULL;
    m->suppress = NULL;
}

/* ---------------------------------------------------------------- public lookups */

const char *wkv_token_bytes(const wkv_model *m, int id, size_t *len)
{
    if (id < 0 || id >= m->hp.n_vocab)
        return NULL;
    if (id < m->n_tokens) {
        *len = m->tok_len[id];
        return m->tok_bytes + m->tok_off[id];
    }
    int first = first_spelled(m);
    if (id < first) { /* between the file's tokens and eot */
        *len = 0;
        return "";
    }
    *len = m->sp_len[id - first];
    return m->sp_bytes + m->sp_off[id - first];
}

int wkv_lang_token(const wkv_model *m, const char *code)
{
    if (!code)
        return -1;
    for (int i = 0; i < m->sp.n_langs; i++)
        if (strcmp(code, LANG_CODES[i]) == 0)
            return m->sp.lang_begin + i;
    return -1;
}

const char *wkv_lang_code(const wkv_model *m, int token)
{
    int i = token - m->sp.lang_begin;
    return i >= 0 && i < m->sp.n_langs ? LANG_CODES[i] : NULL;
}

/* ---------------------------------------------------------------- text */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when p starts an ill-formed
 * one; *bad gets the bytes of its maximal subpart, which Python replaces by one
 * U+FFFD (Unicode's "substitution of maximal subparts"). */
static int utf8_seq(const uint8_t *p, size_t n, size_t *bad)
{
    uint8_t c = p[0];
    int need;
    uint8_t lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else {
        *bad = 1;
        return 0;
    }
    for (int i = 1; i <= need; i++) {
        if ((size_t)i >= n || p[i] < lo || p[i] > hi) {
            *bad = (size_t)i;
            return 0;
        }
        lo = 0x80;
        hi = 0xbf;
    }
    return need + 1;
}

/* Python's str.isspace() for the code point starting a valid sequence. */
static int is_space_cp(const uint8_t *p, int len)
{
    uint32_t cp;
    if (len == 1)
        cp = p[0];
    else if (len == 2)
        cp = (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
    else if (len == 3)
        cp = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
    else
        return 0;
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 ||
           cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
           cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

char *wkv_tokens_to_text(const wkv_model *m, const int *tokens, int n, int text_only)
{
    size_t total = 1;
    int limit = text_only ? m->sp.eot : m->sp.timestamp_begin;
    for (int i = 0; i < n; i++) {
        size_t len;
        if (tokens[i] >= 0 && tokens[i] < limit && wkv_token_bytes(m, tokens[i], &len))
            total += len;
    }
    uint8_t *raw = wkv__malloc(total);
    char *out = wkv__malloc(total * 3 + 1); /* each bad byte may become 3 bytes of U+FFFD */
    if (!raw || !out) {
        wkv__free(raw);
        wkv__free(out);
        return NULL;
    }
    size_t r = 0;
    for (int i = 0; i < n; i++) {
        size_t len;
        const char *b;
        if (tokens[i] >= 0 && tokens[i] < limit && (b = wkv_token_bytes(m, tokens[i], &len))) {
            memcpy(raw + r, b, len);
            r += len;
        }
    }
    size_t o = 0;
    for (size_t i = 0; i < r;) {
        size_t bad = 0;
        int k = utf8_seq(raw + i, r - i, &bad);
        if (k > 0) {
            memcpy(out + o, raw + i, (size_t)k);
            o += (size_t)k;
            i += (size_t)k;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i += bad;
        }
    }
    out[o] = 0;
    wkv__free(raw);
    return out;
}

/* Python's str.strip() on valid UTF-8, in place. */
char *wkv__text_strip(char *s)
{
    size_t n = strlen(s), a = 0, b = n;
    while (a < b) {
        size_t bad;
        int k = utf8_seq((const uint8_t *)s + a, b - a, &bad);
        if (k <= 0 || !is_space_cp((const uint8_t *)s + a, k))
            break;
        a += (size_t)k;
    }
    while (b > a) {
        size_t start = b - 1;
        while (start > a && ((uint8_t)s[start] & 0xc0) == 0x80)
            start--;
        size_t bad;
        int k = utf8_seq((const uint8_t *)s + start, b - start, &bad);
        if (k <= 0 || (size_t)k != b - start || !is_space_cp((const uint8_t *)s + start, k))
            break;
        b = start;
    }
    memmove(s, s + a, b - a);
    s[b - a] = 0;
    return s;
}

/* Whether str.strip() leaves nothing: every code point a space.  Without a copy: a
 * copy whose allocation failed was taken for blank, and the segment was dropped with
 * success returned (found by the alloc_fail test). */
int wkv__text_is_blank(const char *text)
{
    const uint8_t *s = (const uint8_t *)(text ? text : "");
    size_t n = strlen((const char *)s), a = 0;
    while (a < n) {
        size_t bad;
        int k = utf8_seq(s + a, n - a, &bad);
        if (k <= 0 || !is_space_cp(s + a, k))
            return 0;
        a += (size_t)k;
    }
    return 1;
}

/* The multilingual vocabulary is the larger one (51865 tokens and up). */
int wkv_model_is_multilingual(const wkv_model *m)
{
    return m && m->hp.n_vocab >= 51865;
}
