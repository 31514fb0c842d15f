/* Helpers shared by the long-form loop and the live stream; see segments.h. */
#include "longform/segments.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

int wkv__ivec_push(wkv__ivec *a, const int *x, int n)
{
    if (n <= 0)
        return 0;
    if (a->n + n > a->cap) {
        int cap = a->cap ? a->cap : 256;
        while (cap < a->n + n)
            cap *= 2;
        int *p = realloc(a->v, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        a->v = p;
        a->cap = cap;
    }
    memcpy(a->v + a->n, x, (size_t)n * sizeof *x);
    a->n += n;
    return 0;
}

void wkv__ivec_keep_last(wkv__ivec *a, int keep)
{
    if (a->n <= keep)
        return;
    memmove(a->v, a->v + (a->n - keep), (size_t)keep * sizeof *a->v);
    a->n = keep;
}

int wkv__split_pieces(const int *t, int n, int tb, wkv__piece **out)
{
    *out = NULL;
    if (n <= 0)
        return 0;
    /* a piece ends at every two consecutive timestamps, and consecutive pairs overlap
     * (a run of k timestamps makes k - 1 pieces, as the reference's slices do), plus
     * the tail: at most n pieces */
    wkv__piece *p = malloc(((size_t)n + 1) * sizeof *p);
    if (!p)
        return -1;
    int np = 0, last = 0;
    for (int i = 1; i < n; i++)
        if (t[i - 1] >= tb && t[i] >= tb) {
            p[np++] = (wkv__piece){last, i, 1, 1};
            last = i;
        }
    if (last < n) /* a single timestamp after text closes the tail */
        p[np++] = (wkv__piece){last, n, 0, n - last >= 2 && t[n - 1] >= tb};
    *out = p;
    return np;
}

int wkv__result_is_silent(const wkv_options *o, const wkv_window_result *r)
{
    return o->no_speech_threshold < 1.0f && r->no_speech_prob > o->no_speech_threshold &&
           !(r->avg_logprob > o->logprob_threshold);
}

int wkv__text_is_blank(const char *text)
{
    char *copy = strdup(text ? text : "");
    int blank = !copy || wkv__text_strip(copy)[0] == 0;
    free(copy);
    return blank;
}

int wkv__initial_prompt_tokens(const wkv_model *m, const char *prompt, int **out,
                              char **error)
{
    *out = NULL;
    if (!prompt || !*prompt)
        return 0;
    char *stripped = strdup(prompt);
    char *text = stripped ? wkv__strdup_printf(" %s", wkv__text_strip(stripped)) : NULL;
    free(stripped);
    int n = text ? wkv_text_to_tokens(m, text, NULL, 0) : -1;
    int *toks = n > 0 ? malloc((size_t)n * sizeof *toks) : NULL;
    if (n < 0 || (n > 0 && (!toks || wkv_text_to_tokens(m, text, toks, n) != n))) {
        free(text);
        free(toks);
        wkv__set_error(error, "cannot encode the initial prompt");
        return -1;
    }
    free(text);
    *out = toks;
    return n;
}

int wkv__own_language(char **owned, wkv_options *opts, const char *code)
{
    char *copy = strdup(code);
    if (!copy)
        return -1;
    free(*owned);
    *owned = copy;
    opts->language = copy;
    return 0;
}

int wkv__wants_detection(const wkv_model *m, const char *language)
{
    return wkv_model_is_multilingual(m) && (!language || !strcmp(language, "auto"));
}

const char *wkv__language_first_window(wkv_context *ctx, const float *mel, float *probs,
                                      char **error)
{
    const wkv_model *m = wkv_context_model(ctx);
    int lang = wkv_detect_language(ctx, mel, probs, error);
    return lang < 0 ? NULL : wkv_lang_code(m, lang);
}
