/* Words from aligned tokens (the reference's tokenizer.split_to_word_tokens and
 * timing.merge_punctuations / add_word_timestamps): splitting, punctuation merging,
 * the duration heuristics and the segment-boundary fixes.  Source: openai/whisper's
 * tokenizer.py and timing.py. */
#include "words/words.h"
#include "model/vocab.h"
#include "model/model.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_PUNCTUATION "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
#define DEFAULT_PREPEND "\"'\u201c\u00bf([{-"
#define DEFAULT_APPEND "\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001"
#define SENTENCE_ENDS ".\u3002!\uff01?\uff1f"

void wkv__awords_free(wkv__aword *w, int n)
{
    for (int i = 0; w && i < n; i++) {
        wkv__free(w[i].text);
        wkv__free(w[i].tokens);
    }
    wkv__free(w);
}

int wkv__lang_unicode_split(const char *code)
{
    static const char *const langs[] = {"zh", "ja", "th", "lo", "my", "yue"};
    for (size_t i = 0; code && i < sizeof langs / sizeof *langs; i++)
        if (!strcmp(code, langs[i]))
            return 1;
    return 0;
}

/* Code points of valid UTF-8 text (from wkv_tokens_to_text) into cp; their count. */
static size_t utf8_decode(const char *s, uint32_t *cp)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p) {
        uint32_t c = *p;
        int k = c < 0x80 ? 0 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
        c &= k == 0 ? 0x7f : k == 1 ? 0x1f : k == 2 ? 0x0f : 0x07;
        p++;
        for (int i = 0; i < k && *p; i++)
            c = c << 6 | (*p++ & 0x3f);
        if (cp)
            cp[n] = c;
        n++;
    }
    return n;
}

/* Python's `needle in hay` for text: the empty string is in everything. */
static int substring(const char *needle, const char *hay)
{
    return strstr(hay, needle) != NULL;
}

static int stripped_in(const char *text, const char *set)
{
    char *copy = wkv__strdup(text);
    int in = copy && substring(wkv__text_strip(copy), set);
    wkv__free(copy);
    return in;
}

static int push_word(wkv__aword **w, int *n, int *cap, char *text, const int *toks, int nt)
{
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 16;
        wkv__aword *p = wkv__realloc(*w, (size_t)c * sizeof *p);
        if (!p)
            return -1;
        *w = p;
        *cap = c;
    }
    int *copy = wkv__malloc((size_t)(nt > 0 ? nt : 1) * sizeof *copy);
    if (!copy)
        return -1;
    memcpy(copy, toks, (size_t)nt * sizeof *toks);
    (*w)[*n] = (wkv__aword){.text = text, .tokens = copy, .n_tokens = nt};
    (*n)++;
    return 0;
}

/* Appends text and tokens to word w (both taken from b, which is left empty). */
static int join(wkv__aword *w, char **text, int **toks, int *nt)
{
    size_t a = strlen(w->text), b = strlen(*text);
    char *t = wkv__realloc(w->text, a + b + 1);
    if (!t)
        return -1;
    w->text = t;
    memcpy(t + a, *text, b + 1);
    int *k = wkv__realloc(w->tokens, (size_t)(w->n_tokens + *nt + 1) * sizeof *k);
    if (!k)
        return -1;
    w->tokens = k;
    memcpy(k + w->n_tokens, *toks, (size_t)*nt * sizeof *k);
    w->n_tokens += *nt;
    (*text)[0] = 0;
    *nt = 0;
    return 0;
}

/* split_tokens_on_unicode: pieces that decode without a replacement character, or
 * whose replacement is a real one in the decode of all the tokens. */
static int split_unicode(const wkv_model *m, const int *tokens, int n, wkv__aword **out,
                         int *n_out, int *cap)
{
    char *full_text = wkv_tokens_to_text(m, tokens, n, 0);
    uint32_t *full = full_text ? wkv__malloc((strlen(full_text) + 1) * sizeof *full) : NULL;
    uint32_t *cp = full_text ? wkv__malloc((strlen(full_text) + 1) * sizeof *cp) : NULL;
    int rc = full && cp ? 0 : -1;
    size_t n_full = rc == 0 ? utf8_decode(full_text, full) : 0, o = 0;
    int start = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        char *d = wkv_tokens_to_text(m, tokens + start, i + 1 - start, 0);
        if (!d) {
            rc = -1;
            break;
        }
        uint32_t *dc = wkv__realloc(cp, (strlen(d) + 1) * sizeof *dc);
        if (!dc) {
            wkv__free(d);
            rc = -1;
            break;
        }
        cp = dc;
        size_t nd = utf8_decode(d, cp), r = 0;
        while (r < nd && cp[r] != 0xfffd)
            r++;
        if (r == nd || (o + r < n_full && full[o + r] == 0xfffd)) {
            rc = push_word(out, n_out, cap, d, tokens + start, i + 1 - start);
            if (rc != 0)
                wkv__free(d);
            o += nd;
            start = i + 1;
        } else {
            wkv__free(d);
        }
    }
    wkv__free(full_text);
    wkv__free(full);
    wkv__free(cp);
    return rc;
}

int wkv__split_words(const wkv_model *m, const int *tokens, int n, int unicode_split,
                    wkv__aword **words, int *n_words)
{
    wkv__aword *p = NULL;
    int np = 0, cap = 0;
    *words = NULL;
    *n_words = 0;
    if (split_unicode(m, tokens, n, &p, &np, &cap) != 0) {
        wkv__awords_free(p, np);
        return -1;
    }
    if (unicode_split) {
        *words = p;
        *n_words = np;
        return 0;
    }
    /* split_tokens_on_spaces: a piece joins the word before it unless it is special,
     * starts with a space or is punctuation (or whitespace) once stripped */
    int nw = 0;
    for (int i = 0; i < np; i++) {
        if (nw == 0 || p[i].tokens[0] >= m->sp.eot || p[i].text[0] == ' ' ||
            stripped_in(p[i].text, PY_PUNCTUATION)) {
            p[nw++] = p[i];
            continue;
        }
        int rc = join(&p[nw - 1], &p[i].text, &p[i].tokens, &p[i].n_tokens);
        wkv__free(p[i].text);
        wkv__free(p[i].tokens);
        if (rc != 0) { /* the pieces not reached, then the words (and the array) */
            for (int k = i + 1; k < np; k++) {
                wkv__free(p[k].text);
                wkv__free(p[k].tokens);
            }
            wkv__awords_free(p, nw);
            return -1;
        }
    }
    *words = p;
    *n_words = nw;
    return 0;
}

static int starts_with_space(const char *s)
{
    return s[0] == ' ';
}

static int ends_with_space(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && s[n - 1] == ' ';
}

/* merge_punctuations: prepended marks join the following word (right to left),
 * appended ones the preceding word (left to right); donors are left empty. */
static int merge_punctuations(wkv__aword *w, int n, const char *prepend, const char *append)
{
    int j = n - 1;
    for (int i = n - 2; i >= 0; i--) {
        if (starts_with_space(w[i].text) && stripped_in(w[i].text, prepend)) {
            /* word j becomes word i + word j */
            if (join(&w[i], &w[j].text, &w[j].tokens, &w[j].n_tokens) != 0)
                return -1;
            /* the receiver keeps its times: only text and tokens change places */
            char *t = w[i].text;
            int *k = w[i].tokens, nt = w[i].n_tokens;
            w[i].text = w[j].text;
            w[i].tokens = w[j].tokens;
            w[i].n_tokens = w[j].n_tokens;
            w[j].text = t;
            w[j].tokens = k;
            w[j].n_tokens = nt;
        } else {
            j = i;
        }
    }
    int i = 0;
    for (j = 1; j < n; j++) {
        if (!ends_with_space(w[i].text) && substring(w[j].text, append)) {
            if (join(&w[i], &w[j].text, &w[j].tokens, &w[j].n_tokens) != 0)
                return -1;
        } else {
            i = j;
        }
    }
    return 0;
}

/* Python's round(x, 2) */
static double round2(double x)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.2f", x);
    return strtod(buf, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double dmax(double a, double b)
{
    return b > a ? b : a;
}

static double dmin(double a, double b)
{
    return b < a ? b : a;
}

int wkv__add_word_timestamps(wkv__wseg *segs, int n_segs, wkv__aword *w, int nw, double offset,
                            double last_speech, const char *prepend, const char *append)
{
    double *dur = wkv__malloc((size_t)(nw > 0 ? nw : 1) * sizeof *dur);
    int nd = 0, rc = -1;
    if (!dur)
        goto out;
    for (int i = 0; i < nw; i++)
        if (w[i].end - w[i].start != 0.0)
            dur[nd++] = w[i].end - w[i].start;
    qsort(dur, (size_t)nd, sizeof *dur, cmp_double);
    double median = nd == 0 ? 0.0 : nd % 2 ? dur[nd / 2] : (dur[nd / 2 - 1] + dur[nd / 2]) / 2;
    median = dmin(0.7, median);
    const double max_dur = median * 2;
    /* words at sentence ends longer than twice the median are cut to that */
    if (nd > 0)
        for (int i = 1; i < nw; i++)
            if (w[i].end - w[i].start > max_dur) {
                if (substring(w[i].text, SENTENCE_ENDS))
                    w[i].end = w[i].start + max_dur;
                else if (substring(w[i - 1].text, SENTENCE_ENDS))
                    w[i].start = w[i].end - max_dur;
            }
    if (merge_punctuations(w, nw, prepend ? prepend : DEFAULT_PREPEND,
                           append ? append : DEFAULT_APPEND) != 0)
        goto out;
    /* words go to segments by token count, so they drift across segment boundaries */
    int k = 0;
    for (int s = 0; s < n_segs; s++) {
        wkv__wseg *g = &segs[s];
        int saved = 0;
        g->words = wkv__malloc((size_t)(nw > 0 ? nw : 1) * sizeof *g->words);
        g->n_words = 0;
        if (!g->words)
            goto out;
        for (; k < nw && saved < g->n_text; k++) {
            saved += w[k].n_tokens;
            if (!w[k].text[0])
                continue;
            wkv__aword *x = &g->words[g->n_words++];
            *x = w[k];
            x->start = round2(offset + w[k].start);
            x->end = round2(offset + w[k].end);
            w[k].text = NULL;
            w[k].tokens = NULL;
        }
        if (g->n_words == 0)
            continue;
        wkv__aword *a = g->words, *z = &g->words[g->n_words - 1];
        /* the first words after a pause are no longer than twice the median */
        if (a->end - last_speech > median * 4 &&
            (a->end - a->start > max_dur ||
             (g->n_words > 1 && a[1].end - a->start > max_dur * 2))) {
            if (g->n_words > 1 && a[1].end - a[1].start > max_dur)
                a->end = a[1].start = dmax(a[1].end / 2, a[1].end - max_dur);
            a->start = dmax(0, a->end - max_dur);
        }
        /* the segment's own times win over a first or last word that is too long */
        if (g->start < a->end && g->start - 0.5 > a->start)
            a->start = dmax(0, dmin(a->end - median, g->start));
        else
            g->start = a->start;
        if (g->end > z->start && g->end + 0.5 < z->end)
            z->end = dmax(z->start + median, g->end);
        else
            g->end = z->end;
        last_speech = g->end;
    }
    rc = 0;
out:
    wkv__free(dur);
    wkv__awords_free(w, nw);
    return rc;
}
