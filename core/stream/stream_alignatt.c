/* The live stream's AlignAtt stop rule (whisperkv_stream.h commit_policy; after
 * Simul-Whisper, arXiv 2406.10052): where each token of a run's hypothesis looks in
 * the audio, from the same alignment-heads attention the word timestamps use
 * (align.c's matrix: standardized along tokens, median filter 7, heads averaged). */
#include "stream/stream_alignatt.h"
#include "stream/stream_priv.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REWIND_FRAMES 200 /* 4 s: attention jumping back this far is a rewind */

void wkv__alignatt_scan(const float *a, int n_text, int frames, int skip, int threshold,
                        wkv__alignatt *out)
{
    out->stop = n_text;
    out->rewind = 0;
    /* row i is the attention of the step that chose text[i] */
    int prev = -1;
    for (int i = skip; i < n_text; i++) {
        const float *row = a + (size_t)i * frames;
        int best = 0;
        for (int f = 1; f < frames; f++)
            if (row[f] > row[best])
                best = f;
        if (prev >= 0 && best < prev - REWIND_FRAMES) {
            out->rewind = 1;
            out->stop = skip;
            return;
        }
        if (frames - best <= threshold) {
            out->stop = i;
            return;
        }
        prev = best;
    }
}

int wkv__alignatt_words(const int *tok_off, int n_words, const wkv__alignatt *aa, int at_end,
                        int last_seen)
{
    if (aa->rewind)
        return 0;
    int n = 0;
    /* the word holding the stop token may go on in the audio still to come: it waits
     * (at the end, nothing more comes) */
    while (n < n_words && (tok_off[n + 1] <= aa->stop || (at_end && tok_off[n] < aa->stop)))
        n++;
    /* no stop before the end of the text: its last word may still go on too, or be a
     * guess at a pause (the trained model's "F" after a sentence).  SimulStreaming
     * holds it always; here it goes once a second run ends on it (measured:
     * docs/trained-model.md, "The last word") */
    if (n == n_words && n > 0 && !at_end && !last_seen)
        n--;
    return n;
}

/* ------------------------------------------------------------ the forced prefix */

int wkv__aa_commit(wkv_stream *st, const wkv__run_words *rw, int n)
{
    if (n <= 0)
        return 0;
    if (st->n_held + n > st->cap_held) {
        int cap = st->cap_held * 2 > st->n_held + n ? st->cap_held * 2 : st->n_held + n + 16;
        struct wkv__held_word *h = wkv__realloc(st->held, (size_t)cap * sizeof *h);
        if (!h)
            return -1;
        st->held = h;
        st->cap_held = cap;
    }
    if (wkv__ivec_push(&st->prefix, rw->tok, rw->tok_off[n]) != 0)
        return -1;
    for (int k = 0; k < n; k++)
        st->held[st->n_held++] = (struct wkv__held_word){
            rw->w[k].start, rw->w[k].end, rw->tok_off[k + 1] - rw->tok_off[k]};
    return 0;
}

/* Moves the first n held words' tokens from the prefix to the prompt. */
static void release(wkv_stream *st, int n)
{
    int t = 0;
    for (int k = 0; k < n; k++)
        t += st->held[k].n_tokens;
    t = t < st->prefix.n ? t : st->prefix.n;
    /* fits or not, the prompt only keeps its last PROMPT_KEEP tokens */
    if (wkv__ivec_push(&st->committed, st->prefix.v, t) == 0)
        wkv__ivec_keep_last(&st->committed, PROMPT_KEEP);
    wkv__ivec_keep_last(&st->prefix, st->prefix.n - t);
    /* nothing held (never allocated: NULL) moves nothing; memmove wants a pointer even
     * for 0 bytes */
    if (n > 0 && st->n_held > n)
        memmove(st->held, st->held + n, (size_t)(st->n_held - n) * sizeof *st->held);
    st->n_held -= n;
}

void wkv__aa_flush(wkv_stream *st)
{
    release(st, st->n_held);
    st->prefix.n = 0;
}

int64_t wkv__aa_cut(wkv_stream *st, double step_s)
{
    const double base_s = (double)st->audio.base / WKV_SAMPLE_RATE;
    const double end_s = base_s + (double)st->audio.n / WKV_SAMPLE_RATE;
    const int max_prefix = st->m->hp.n_text_ctx / 4;
    /* at most max_held_ms with the next step's audio, by default 4/5 of the model's
     * window (n_audio_ctx frames of 20 ms: 24 s of 30), never more than the window.
     * The committed words stay in it (SimulStreaming keeps them: a cut right before
     * uncommitted words loses or garbles the first of them) */
    const double window_s = st->m->hp.n_audio_ctx / 50.0;
    const double asked_s = st->so.max_held_ms / 1000.0;
    const double hold_s = asked_s <= 0 ? 0.8 * window_s : asked_s < window_s ? asked_s : window_s;
    if (st->n_held == 0 || (end_s - base_s + step_s <= hold_s && st->prefix.n <= max_prefix))
        return st->audio.base;
    /* at a pause between committed words: the widest among the cuts that are enough
     * (the last committed word's end when none is) */
    int best = st->n_held - 1, tok = 0;
    double best_gap = -1, best_cut = st->held[best].end;
    for (int j = 0; j < st->n_held; j++) {
        tok += st->held[j].n_tokens;
        const int last = j + 1 == st->n_held;
        double cut = last ? st->held[j].end : (st->held[j].end + st->held[j + 1].start) / 2;
        double gap = last ? 0 : st->held[j + 1].start - st->held[j].end;
        if (end_s - cut + step_s <= hold_s && st->prefix.n - tok <= max_prefix &&
            gap > best_gap) {
            best = j;
            best_gap = gap;
            best_cut = cut;
        }
    }
    const double cut = best_cut;
    release(st, best + 1);
    int64_t at = (int64_t)llround(cut * WKV_SAMPLE_RATE);
    return at > st->audio.base ? at : st->audio.base;
}
