/* The long-form loop's steps when words are on (the reference's transcribe.py with
 * word_timestamps): align the window's segments, seek after the last word instead of
 * the last timestamp pair, and optionally skip silence around likely hallucinations.
 * Source: openai/whisper's transcribe.py (the word_timestamps and
 * hallucination_silence_threshold branches of its loop). */
#include "words/word_window.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ALL_PUNCTUATION "\"'\u201c\u00bf([{-\"'.\u3002,\uff0c!\uff01?\uff1f:\uff1a\u201d)]}\u3001"

void wkv__wsegs_clear(wkv__wseg *segs, int n)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < segs[i].n_words; k++) {
            wkv__free(segs[i].words[k].text);
            wkv__free(segs[i].words[k].tokens);
        }
        wkv__free(segs[i].words);
        segs[i].words = NULL;
        segs[i].n_words = 0;
    }
}

/* get_end: the end of the last word, else of the last segment; 0 when none. */
static int last_end(const wkv__wseg *segs, int n, double *end)
{
    for (int i = n - 1; i >= 0; i--)
        if (segs[i].n_words > 0) {
            *end = segs[i].words[segs[i].n_words - 1].end;
            return 1;
        }
    if (n > 0)
        *end = segs[n - 1].end;
    return n > 0;
}

/* Python's round() to an integer: nearest, ties to even (the default rounding mode) */
static int64_t round_even(double x)
{
    return (int64_t)nearbyint(x);
}

static int is_anomaly(const wkv__wseg *s)
{
    if (!s || s->n_words == 0)
        return 0;
    double score = 0.0;
    int counted = 0;
    for (int i = 0; i < s->n_words && counted < 8; i++) {
        const wkv__aword *w = &s->words[i];
        if (strstr(ALL_PUNCTUATION, w->text))
            continue;
        counted++;
        double d = w->end - w->start;
        if (w->probability < 0.15f)
            score += 1.0;
        if (d < 0.133)
            score += (0.133 - d) * 15;
        if (d > 2.0)
            score += d - 2.0;
    }
    return score >= 3 || score + 0.01 >= counted;
}

static const wkv__wseg *next_with_words(const wkv__wseg *segs, int from, int n)
{
    for (int i = from; i < n; i++)
        if (segs[i].n_words > 0)
            return &segs[i];
    return NULL;
}

/* hallucination_silence_threshold: returns 1 when the whole window is dropped */
int wkv__skip_hallucinations(const wkv__words_state *st, wkv__wseg *segs, int *n_segs,
                               int64_t seek, int size, int single_ending, int64_t *next_seek)
{
    const double th = st->hallucination_threshold;
    const double offset = (double)seek * WKV_HOP / WKV_SAMPLE_RATE;
    const double window_end = (double)(seek + WKV_N_FRAMES) * WKV_HOP / WKV_SAMPLE_RATE;
    const double seg_duration = (double)size * WKV_HOP / WKV_SAMPLE_RATE;
    const double content_duration = st->content_frames < 0 ? INFINITY
        : (double)st->content_frames * WKV_HOP / WKV_SAMPLE_RATE;
    int n = *n_segs;
    double end;
    if (!single_ending && last_end(segs, n, &end) && end > offset)
        *next_seek = window_end - end > th ? round_even(end * 100) : seek + size;
    const wkv__wseg *first = next_with_words(segs, 0, n);
    if (first && is_anomaly(first) && first->start - offset > th) {
        *next_seek = seek + round_even((first->start - offset) * 100);
        return 1;
    }
    double hal_last_end = st->last_speech;
    for (int i = 0; i < n; i++) {
        const wkv__wseg *s = &segs[i];
        if (s->n_words == 0)
            continue;
        if (is_anomaly(s)) {
            const wkv__wseg *next = next_with_words(segs, i + 1, n);
            double next_start = next ? next->words[0].start : offset + seg_duration;
            int before = s->start - hal_last_end > th || s->start < th || s->start - offset < 2.0;
            int after = next_start - s->end > th || is_anomaly(next) || window_end - s->end < 2.0;
            if (before && after) {
                *next_seek = round_even(fmax(offset + 1, s->start) * 100);
                if (content_duration - s->end < th)
                    *next_seek = st->content_frames;
                wkv__wsegs_clear(segs + i, n - i);
                *n_segs = i;
                return 0;
            }
        }
        hal_last_end = s->end;
    }
    return 0;
}

int wkv__words_sot(const wkv_model *m, const char *language, int translate, int sot[3],
                  int *unicode_split)
{
    sot[0] = m->sp.sot;
    *unicode_split = 0;
    if (!wkv_model_is_multilingual(m))
        return 1;
    sot[1] = wkv_lang_token(m, language);
    sot[2] = translate ? m->sp.translate : m->sp.transcribe;
    *unicode_split = wkv__lang_unicode_split(language);
    return 3;
}

int wkv__words_align(wkv_context *ctx, const wkv__words_state *st, const int *sot_seq, int n_sot,
                    int unicode_split, wkv__wseg *segs, int n, double offset, int size,
                    char **error)
{
    const int eot = ctx->model->sp.eot;
    int n_text = 0;
    if (n == 0)
        return 0;
    for (int i = 0; i < n; i++)
        n_text += segs[i].n_tokens;
    int *text = wkv__malloc((size_t)(n_text + 1) * sizeof *text);
    if (!text) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    n_text = 0;
    for (int i = 0; i < n; i++) {
        segs[i].n_text = 0;
        for (int k = 0; k < segs[i].n_tokens; k++)
            if (segs[i].tokens[k] < eot) {
                text[n_text++] = segs[i].tokens[k];
                segs[i].n_text++;
            }
    }
    wkv__aword *words;
    int n_words;
    double t0 = wkv__now_ms();
    int rc = wkv__align_window(ctx, st->pairs, st->n_pairs, sot_seq, n_sot, text, n_text, size,
                              unicode_split, &words, &n_words, NULL, NULL, error);
    wkv__free(text);
    if (rc != 0)
        return -1;
    if (wkv__add_word_timestamps(segs, n, words, n_words, offset, st->last_speech, st->prepend,
                                st->append) != 0) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    ctx->stats.align_ms += wkv__now_ms() - t0;
    return 0;
}

int wkv__words_window(wkv_context *ctx, wkv__words_state *st, const int *sot_seq, int n_sot,
                     int unicode_split, wkv__wseg *segs, int *n_segs, int64_t seek, int size,
                     int single_ending, int64_t *next_seek, int *drop, char **error)
{
    const double offset = (double)seek * WKV_HOP / WKV_SAMPLE_RATE;
    int n = *n_segs;
    *drop = 0;
    if (n == 0)
        return 0;
    if (wkv__words_align(ctx, st, sot_seq, n_sot, unicode_split, segs, n, offset, size,
                        error) != 0)
        return -1;
    double end;
    if (!single_ending && last_end(segs, n, &end) && end > offset)
        *next_seek = round_even(end * 100);
    if (st->hallucination_threshold > 0 &&
        wkv__skip_hallucinations(st, segs, n_segs, seek, size, single_ending, next_seek)) {
        *drop = 1;
        return 0;
    }
    if (last_end(segs, *n_segs, &end))
        st->last_speech = end;
    return 0;
}
