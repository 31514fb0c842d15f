/* The reference's long-form loop (transcribe.py): slide a 30-s window over the
 * log-mel, decode it with the previous text as prompt, cut the tokens into segments
 * at timestamp pairs and seek to where the last complete segment ended. */
#include "longform/window.h"
#include "net/context.h"
#include "words/word_window.h"
#include "base/util.h"
#include "base/ivec.h"
#include "decode/pieces.h"
#include "longform/language.h"
#include "model/vocab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int wkv__emit_segment(const wkv_model *m, const wkv_window_result *r, int64_t seek,
                      const wkv__wseg *g, int with_words, wkv__ivec *history,
                      wkv_segment_cb cb, void *user, int *count)
{
    const double start = g->start, end = g->end;
    const int *toks = g->tokens;
    const int n = g->n_tokens;
    char *text = wkv_tokens_to_text(m, toks, n, 1);
    if (!text)
        return -1;
    int stop = 0;
    if (start != end && !wkv__text_is_blank(text)) {
        wkv_segment seg = {
            .seek = seek, .start = start, .end = end, .tokens = toks, .n_tokens = n,
            .text = text, .avg_logprob = r->avg_logprob, .no_speech_prob = r->no_speech_prob,
            .compression_ratio = r->compression_ratio, .temperature = r->temperature,
            .language = r->language >= 0 ? wkv_lang_code(m, r->language) : "en",
        };
        wkv_word *words = NULL;
        if (with_words && g->n_words > 0) {
            if (!(words = wkv__malloc((size_t)g->n_words * sizeof *words))) {
                wkv__free(text);
                return -1;
            }
            for (int i = 0; i < g->n_words; i++)
                words[i] = (wkv_word){g->words[i].text, g->words[i].start, g->words[i].end,
                                      g->words[i].probability};
        }
        seg.words = words;
        seg.n_words = with_words ? g->n_words : 0;
        (*count)++;
        if (history && wkv__ivec_push(history, toks, n) != 0)
            stop = -1;
        else if (cb && cb(&seg, user) != 0)
            stop = 1;
        wkv__free(words);
    }
    wkv__free(text);
    return stop;
}

struct wkv_longform {
    wkv_context *ctx;
    wkv_options opts;
    char *language;    /* owned copy of opts.language */
    wkv__ivec history;  /* tokens of every reported segment */
    int prompt_reset;  /* history[prompt_reset..] is the prompt */
    int count;         /* segments reported */
    int stopped;       /* a callback asked to stop */
    wkv__words_state words; /* opts.word_timestamps */
};

wkv_longform *wkv_longform_new(wkv_context *ctx, const wkv_options *opts, char **error)
{
    if (wkv__audio_ctx_check(opts->audio_ctx, error) != 0)
        return NULL;
    wkv_longform *lf = wkv__calloc(1, sizeof *lf);
    if (lf) {
        lf->ctx = ctx;
        lf->opts = *opts;
        lf->language = wkv__strdup(opts->language ? opts->language : "en");
        lf->opts.language = lf->language;
    }
    if (!lf || !lf->language) {
        wkv_longform_free(lf);
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    lf->opts.initial_prompt = NULL; /* not kept: its tokens are */
    lf->opts.clip_timestamps = NULL; /* wkv_transcribe_mel's */
    lf->opts.alignment_heads = NULL;
    lf->words.content_frames = -1;
    lf->words.prepend = opts->prepend_punctuations;
    lf->words.append = opts->append_punctuations;
    lf->words.hallucination_threshold = opts->hallucination_silence_threshold;
    if (opts->word_timestamps &&
        wkv__heads_resolve(ctx->model, opts->alignment_heads, &lf->words.pairs,
                          &lf->words.n_pairs, NULL, error) != 0) {
        wkv_longform_free(lf);
        return NULL;
    }
    int *toks = NULL;
    int n = wkv__initial_prompt_tokens(ctx->model, opts->initial_prompt, &toks, error);
    if (n < 0 || wkv__ivec_push(&lf->history, toks, n) != 0) {
        wkv__free(toks);
        wkv_longform_free(lf);
        if (n >= 0)
            wkv__set_error(error, "out of memory");
        return NULL;
    }
    wkv__free(toks);
    return lf;
}

void wkv_longform_free(wkv_longform *lf)
{
    if (!lf)
        return;
    wkv__free(lf->language);
    wkv__free(lf->history.v);
    wkv__free(lf->words.pairs);
    wkv__free(lf);
}

int wkv_longform_set_language(wkv_longform *lf, const char *code)
{
    return wkv__own_language(&lf->language, &lf->opts, code);
}

void wkv_longform_reset_prompt(wkv_longform *lf)
{
    lf->prompt_reset = lf->history.n;
}

int wkv_longform_segments(const wkv_longform *lf)
{
    return lf->count;
}

int wkv__needs_fallback(const wkv_options *o, const wkv_window_result *r, float next)
{
    int needs = (o->compression_ratio_threshold > 0 &&
                 r->compression_ratio > o->compression_ratio_threshold) ||
                r->avg_logprob < o->logprob_threshold;
    if (o->no_speech_threshold < 1.0f && r->no_speech_prob > o->no_speech_threshold &&
        r->avg_logprob < o->logprob_threshold)
        needs = 0; /* silence: no temperature will help */
    return needs && o->temperature_increment > 0 && next <= 1.0f + 1e-6f;
}

int wkv__decode_fallback(wkv_context *ctx, const wkv_options *opts, const int *prompt,
                         int n_prompt, int k0, wkv_window_result *r, char **error)
{
    wkv_options o = *opts;
    const float t0 = o.temperature, inc = o.temperature_increment;
    for (int k = k0;; k++) {
        o.temperature = t0 + k * inc; /* like np.arange: no accumulated error */
        if (wkv_decode_window(ctx, prompt, n_prompt, &o, r, error) != 0)
            return -1;
        if (!wkv__needs_fallback(&o, r, t0 + (k + 1) * inc))
            return 0;
        wkv_window_result_clear(r);
    }
}

int64_t wkv_longform_window(wkv_longform *lf, int64_t seek, int size, const float *mel,
                            wkv_segment_cb on_segment, void *user, char **error)
{
    wkv_context *ctx = lf->ctx;
    const wkv_model *m = ctx->model;
    const wkv_options *o = &lf->opts;
    const int tb = m->sp.timestamp_begin;
    if (size <= 0 || size > WKV_N_FRAMES || seek < 0) {
        wkv__set_error(error, "window of %d frames at %lld", size, (long long)seek);
        return -1;
    }
    double offset = (double)seek * WKV_HOP / WKV_SAMPLE_RATE;
    double duration = (double)size * WKV_HOP / WKV_SAMPLE_RATE;
    wkv__ivec *history = &lf->history;
    wkv_window_result r;
    int use_prompt = o->condition_on_previous_text;
    if (wkv__encode_window(ctx, mel, o->audio_ctx, size) != 0 ||
        wkv__decode_fallback(ctx, o, use_prompt ? history->v + lf->prompt_reset : NULL,
                             use_prompt ? history->n - lf->prompt_reset : 0, 0, &r,
                             error) != 0) {
        if (error && !*error)
            wkv__set_error(error, "window at frame %lld failed", (long long)seek);
        return -1;
    }
    /* silence: skip the window unless the text is confidently likely */
    if (wkv__result_is_silent(o, &r)) {
        wkv_window_result_clear(&r);
        return seek + size;
    }

    const int *t = r.tokens;
    const int n = r.n_tokens;
    int single_ending = n >= 2 && t[n - 2] < tb && t[n - 1] >= tb;
    int rc = 0, ns = 0, drop = 0;
    int64_t next_seek = seek + size;
    wkv__piece *pc = NULL;
    int np = wkv__split_pieces(t, n, tb, &pc);
    wkv__wseg *segs = np >= 0 ? wkv__calloc((size_t)n + 1, sizeof *segs) : NULL;
    if (!segs) {
        wkv__free(pc);
        wkv_window_result_clear(&r);
        wkv__set_error(error, "out of memory");
        return -1;
    }
    int n_pair = 0;
    while (n_pair < np && pc[n_pair].pair)
        n_pair++;
    const wkv__piece *tail = n_pair < np ? &pc[n_pair] : NULL;
    for (int k = 0; k < n_pair; k++)
        segs[ns++] = (wkv__wseg){.start = offset + wkv__ts_seconds(t[pc[k].tok0], tb),
                                .end = offset + wkv__ts_seconds(t[pc[k].tok1 - 1], tb),
                                .tokens = t + pc[k].tok0, .n_tokens = pc[k].tok1 - pc[k].tok0};
    if (n_pair) {
        if (tail && tail->closed) /* text then a single timestamp: a segment too */
            segs[ns++] = (wkv__wseg){.start = offset + wkv__ts_seconds(t[tail->tok0], tb),
                                    .end = offset + wkv__ts_seconds(t[n - 1], tb),
                                    .tokens = t + tail->tok0, .n_tokens = n - tail->tok0};
        else /* drop the unfinished tail; decode it again from the last pair's time */
            next_seek = seek + (int64_t)(t[(tail ? tail->tok0 : n) - 1] - tb) * 2;
    } else {
        double end = duration;
        for (int i = n - 1; i >= 0; i--)
            if (t[i] >= tb) {
                if (t[i] != tb)
                    end = (t[i] - tb) * 0.02;
                break;
            }
        segs[ns++] = (wkv__wseg){.start = offset, .end = offset + end, .tokens = t,
                                .n_tokens = n};
    }
    if (o->word_timestamps) {
        int sot[3], unicode;
        int n_sot = wkv__words_sot(m, lf->language, o->translate, sot, &unicode);
        if (wkv__words_window(ctx, &lf->words, sot, n_sot, unicode, segs, &ns, seek, size,
                             single_ending, &next_seek, &drop, error) != 0) {
            wkv__wsegs_clear(segs, ns);
            wkv__free(segs);
            wkv__free(pc);
            wkv_window_result_clear(&r);
            return -1;
        }
    }
    for (int i = 0; i < ns && rc == 0 && !drop; i++)
        rc = wkv__emit_segment(m, &r, seek, &segs[i], o->word_timestamps, history, on_segment,
                               user, &lf->count);
    wkv__wsegs_clear(segs, ns);
    wkv__free(segs);
    wkv__free(pc);
    if (!drop && (!o->condition_on_previous_text || r.temperature > 0.5))
        lf->prompt_reset = history->n;
    wkv_window_result_clear(&r);
    if (rc < 0) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    lf->stopped |= rc > 0;
    /* the rules make every pair advance; guard against a model that does not */
    return next_seek > seek ? next_seek : seek + size;
}

int wkv__longform_stopped(const wkv_longform *lf)
{
    return lf->stopped;
}

void wkv__longform_set_content(wkv_longform *lf, int64_t content_frames)
{
    lf->words.content_frames = content_frames;
}

const char *wkv__longform_language(const wkv_longform *lf)
{
    return lf->language;
}
