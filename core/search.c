/* Decoding one window: the initial tokens, then greedy sampling at temperature 0
 * through the KV caches with the reference's filters and scores. */
#include "context.h"
#include "rules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void wkv_options_default(wkv_options *o)
{
    memset(o, 0, sizeof *o);
    o->language = "en";
    o->timestamps = 1;
    o->condition_on_previous_text = 1;
    o->no_speech_threshold = 0.6f;
    o->logprob_threshold = -1.0f;
    o->mel_norm = WKV_MEL_GLOBAL;
    o->max_initial_timestamp = 1.0f;
    o->sample_len = 0; /* n_text_ctx / 2 */
    o->cache_mode = WKV_CACHE_FULL;
}

void wkv_window_result_clear(wkv_window_result *res)
{
    free(res->tokens);
    free(res->text);
    free(res->step_margins);
    memset(res, 0, sizeof *res);
}

/* [startofprev, last n_ctx/2 - 1 prompt tokens,] sot [, language, task]
 * [, notimestamps]; *sot_index gets the position of sot. */
static int initial_tokens(const wkv_model *m, const int *prompt, int n_prompt,
                          const wkv_options *o, int *out, int *sot_index, char **error)
{
    const wkv_specials *sp = &m->sp;
    int n = 0;
    if (n_prompt > 0) {
        int keep = m->hp.n_text_ctx / 2 - 1;
        if (n_prompt > keep) {
            prompt += n_prompt - keep;
            n_prompt = keep;
        }
        out[n++] = sp->startofprev;
        for (int i = 0; i < n_prompt; i++) {
            if (prompt[i] < 0 || prompt[i] >= m->hp.n_vocab) {
                wkv_set_error(error, "prompt token %d out of range", prompt[i]);
                return -1;
            }
            out[n++] = prompt[i];
        }
    }
    *sot_index = n;
    out[n++] = sp->sot;
    if (wkv_model_is_multilingual(m)) {
        const char *lang = o->language ? o->language : "en";
        int lt = wkv_lang_token(m, lang);
        if (lt < 0) {
            wkv_set_error(error, "unknown language '%s'%s", lang,
                          strcmp(lang, "auto") == 0
                              ? " (detect it first: wkv_detect_language)"
                              : "");
            return -1;
        }
        out[n++] = lt;
        out[n++] = o->translate ? sp->translate : sp->transcribe;
    }
    if (!o->timestamps)
        out[n++] = sp->notimestamps;
    return n;
}

/* The two largest values of logits. */
static int argmax2(const float *x, int n, float *margin)
{
    int best = 0;
    float b1 = -INFINITY, b2 = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (x[i] > b1) {
            b2 = b1;
            b1 = x[i];
            best = i;
        } else if (x[i] > b2) {
            b2 = x[i];
        }
    }
    *margin = b1 - b2;
    return best;
}

int wkv_decode_window(wkv_context *ctx, const int *prompt, int n_prompt,
                      const wkv_options *o, wkv_window_result *res, char **error)
{
    const wkv_model *m = ctx->model;
    const int n_vocab = m->hp.n_vocab, n_ctx = m->hp.n_text_ctx;
    memset(res, 0, sizeof *res);
    if (!ctx->cross.valid) {
        wkv_set_error(error, "wkv_decode_window: no window encoded");
        return -1;
    }
    int *init = malloc((size_t)n_ctx * sizeof *init);
    int sot_index;
    int n_init = init ? initial_tokens(m, prompt, n_prompt, o, init, &sot_index, error) : -1;
    int sample_len = o->sample_len > 0 ? o->sample_len : n_ctx / 2;
    res->tokens = malloc((size_t)(sample_len + 1) * sizeof *res->tokens);
    res->step_margins = malloc((size_t)(sample_len + 1) * sizeof *res->step_margins);
    if (n_init < 0 || !res->tokens || !res->step_margins) {
        if (init && n_init >= 0)
            wkv_set_error(error, "out of memory");
        free(init);
        wkv_window_result_clear(res);
        return -1;
    }
    res->language = wkv_model_is_multilingual(m) ? init[sot_index + 1] : -1;

    wkv_rules rules = {
        .sample_begin = n_init,
        .timestamps = o->timestamps,
        .max_initial_ts_index = (int)lround(o->max_initial_timestamp / 0.02),
        .suppress_blank = 1,
    };
    float *logits = ctx->logits;
    wkv_decode_reset(ctx);
    if (wkv_decode(ctx, init, n_init, o->cache_mode, logits) != 0) {
        wkv_set_error(error, "decoder failed on the initial tokens");
        free(init);
        wkv_window_result_clear(res);
        return -1;
    }
    /* no_speech_prob: raw logits at the sot position of the first pass */
    float *sot_logits = malloc((size_t)n_vocab * sizeof *sot_logits);
    if (sot_logits && wkv_decoder_logits_at(ctx, sot_index, sot_logits) == 0)
        res->no_speech_prob = wkv_prob(sot_logits, n_vocab, m->sp.nospeech);
    free(sot_logits);

    double sum_lp = 0;
    int n = 0, length = n_init;
    for (int step = 0; step < sample_len; step++) {
        wkv_rules_apply(m, &rules, res->tokens, n, logits);
        float margin;
        int tok = argmax2(logits, n_vocab, &margin);
        res->step_margins[step] = margin;
        res->n_steps = step + 1;
        sum_lp += wkv_logprob(logits, n_vocab, tok);
        if (tok == m->sp.eot)
            break;
        res->tokens[n++] = tok;
        length++;
        /* the reference stops once the sequence outgrows the text context */
        if (length > n_ctx || step + 1 == sample_len)
            break;
        if (wkv_decode(ctx, &tok, 1, o->cache_mode, logits) != 0) {
            wkv_set_error(error, "decoder failed at step %d", step);
            free(init);
            wkv_window_result_clear(res);
            return -1;
        }
    }
    free(init);
    res->n_tokens = n;
    res->sum_logprob = sum_lp;
    res->avg_logprob = sum_lp / (n + 1);
    res->temperature = 0.0;
    res->text = wkv_tokens_to_text(m, res->tokens, n, 0);
    if (!res->text) {
        wkv_set_error(error, "out of memory");
        wkv_window_result_clear(res);
        return -1;
    }
    wkv_text_strip(res->text);
    res->compression_ratio = wkv_compression_ratio(res->text);
    ctx->stats.windows++;
    return 0;
}

int wkv_detect_language(wkv_context *ctx, const float *mel, float *probs, char **error)
{
    const wkv_model *m = ctx->model;
    const wkv_specials *sp = &m->sp;
    if (!wkv_model_is_multilingual(m)) {
        wkv_set_error(error, "language detection needs a multilingual model");
        return -1;
    }
    int sot = sp->sot;
    if (wkv_encode(ctx, mel) != 0 || wkv_decode(ctx, &sot, 1, WKV_CACHE_FULL, ctx->logits) != 0) {
        wkv_set_error(error, "language detection: decoder failed");
        return -1;
    }
    /* softmax over the language tokens only */
    const float *lg = ctx->logits + sp->lang_begin;
    float mx = -INFINITY;
    int best = 0;
    for (int i = 0; i < sp->n_langs; i++)
        if (lg[i] > mx) {
            mx = lg[i];
            best = i;
        }
    double sum = 0;
    for (int i = 0; i < sp->n_langs; i++)
        sum += exp((double)lg[i] - mx);
    for (int i = 0; probs && i < sp->n_langs; i++)
        probs[i] = (float)(exp((double)lg[i] - mx) / sum);
    wkv_decode_reset(ctx);
    return sp->lang_begin + best;
}
