/* The live stream's word mode (whisperkv.h "live stream"; docs/architecture.md): the
 * words of a run come from the same alignment pass as the long form's (word_window.c,
 * on the cross-KV the run's decoding left in the context), and two runs agree word by
 * word as whisper_streaming's LocalAgreement-2 does. */
#include "stream/stream_words.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_WORD_S 0.01 /* the shortest live word (seconds) */

void wkv__run_words_clear(wkv__run_words *rw)
{
    wkv__wsegs_clear(rw->segs, rw->n_segs);
    wkv__free(rw->segs);
    wkv__free(rw->w);
    wkv__free(rw->piece);
    wkv__free(rw->tok);
    wkv__free(rw->tok_off);
    wkv__free(rw->attn);
    memset(rw, 0, sizeof *rw);
}

/* Words squeezed at the run's end (the forward chain left them less than MIN_WORD_S):
 * from the last word back, each ends by the next one's start and lasts MIN_WORD_S,
 * the words before it moved earlier, when the room after `lo` allows it for all of
 * them (else, a run of a noisy model's many words in no audio, they stay as they are). */
static void min_durations(wkv__run_words *rw, double lo, double end_s)
{
    double limit = end_s;
    int k = rw->n - 1;
    for (; k >= 0; k--) { /* the first pass only finds how far back it reaches */
        const wkv_word *w = &rw->w[k];
        if (w->end <= limit && w->end - w->start >= MIN_WORD_S)
            break; /* this one and all before it are fine */
        double e = w->end < limit ? w->end : limit;
        double st = w->start < e - MIN_WORD_S ? w->start : e - MIN_WORD_S;
        if (st < lo - 1e-9)
            return;
        limit = st;
    }
    limit = end_s;
    for (int j = rw->n - 1; j > k; j--) {
        wkv_word *w = &rw->w[j];
        w->end = w->end < limit ? w->end : limit;
        w->start = w->start < w->end - MIN_WORD_S ? w->start : w->end - MIN_WORD_S;
        limit = w->start;
    }
}

/* The words of every piece, flattened; the times stay relative to the run.  Words
 * ending at or before drop_s are left out. */
static int flatten(wkv__run_words *rw, double base_s, double duration, double floor_s,
                   double drop_s)
{
    int total = 0, n_tok = 0;
    for (int i = 0; i < rw->n_segs; i++)
        for (int k = 0; k < rw->segs[i].n_words; k++) {
            total++;
            n_tok += rw->segs[i].words[k].n_tokens;
        }
    rw->w = wkv__malloc((size_t)(total + 1) * sizeof *rw->w);
    rw->piece = wkv__malloc((size_t)(total + 1) * sizeof *rw->piece);
    rw->tok = wkv__malloc((size_t)(n_tok + 1) * sizeof *rw->tok);
    rw->tok_off = wkv__malloc((size_t)(total + 1) * sizeof *rw->tok_off);
    if (!rw->w || !rw->piece || !rw->tok || !rw->tok_off)
        return -1;
    /* the reference's segment-boundary fixes may stretch a segment's last word past
     * the next one's start: live words go one after the other, from the last
     * committed word's end (the same double, so that finals never overlap) */
    const double end_s = base_s + duration;
    double prev_end = floor_s > base_s ? floor_s : base_s;
    const double prev_floor = prev_end;
    rw->tok_off[0] = 0;
    for (int i = 0; i < rw->n_segs; i++)
        for (int k = 0; k < rw->segs[i].n_words; k++) {
            const wkv__aword *a = &rw->segs[i].words[k];
            /* audio already committed: the word was said before the trim point */
            if (base_s + a->end <= drop_s + 1e-9)
                continue;
            double s = base_s + a->start > prev_end ? base_s + a->start : prev_end;
            double e = base_s + a->end < end_s ? base_s + a->end : end_s;
            s = s < end_s ? s : end_s;
            /* a word said lasts: the chain can squeeze one to nothing (its DTW end
             * before the previous word's, or at the run's end), and a text buffer of
             * 0 s is none (docs/element.md): MIN_WORD_S, here or (at the run's end)
             * in min_durations */
            e = e > s + MIN_WORD_S ? e : s + MIN_WORD_S;
            e = e < end_s ? e : end_s;
            prev_end = e;
            int j = rw->n++;
            rw->w[j] = (wkv_word){a->text, s, e, a->probability};
            rw->piece[j] = i;
            memcpy(rw->tok + rw->tok_off[j], a->tokens, (size_t)a->n_tokens * sizeof *rw->tok);
            rw->tok_off[j + 1] = rw->tok_off[j] + a->n_tokens;
        }
    min_durations(rw, prev_floor, end_s);
    return 0;
}

int wkv__run_words_build(wkv_context *ctx, const wkv__words_state *ws, const int *sot, int n_sot,
                        int unicode, const wkv_stream_segment *pieces, int np, int size,
                        double base_s, double duration, double floor_s, wkv__run_words *rw,
                        char **error)
{
    memset(rw, 0, sizeof *rw);
    if (np <= 0)
        return 0;
    rw->segs = wkv__calloc((size_t)np, sizeof *rw->segs);
    if (!rw->segs) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    rw->n_segs = np;
    for (int i = 0; i < np; i++)
        rw->segs[i] = (wkv__wseg){.start = pieces[i].rel_start, .end = pieces[i].rel_end,
                                 .tokens = pieces[i].tokens, .n_tokens = pieces[i].n_tokens};
    /* times relative to the run (offset 0): its audio starts at the last trim point */
    if (wkv__words_align(ctx, ws, sot, n_sot, unicode, rw->segs, np, 0.0, size, error) != 0)
        return -1;
    if (flatten(rw, base_s, duration, floor_s, floor_s) != 0) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    return 0;
}

int wkv__run_words_build_after(wkv_context *ctx, const wkv__words_state *ws, const int *sot,
                               int n_sot, int unicode, const int *prefix, int n_prefix,
                               const wkv_stream_segment *piece, int size, double base_s,
                               double duration, double floor_s, wkv__run_words *rw,
                               char **error)
{
    const int eot = ctx->model->sp.eot;
    memset(rw, 0, sizeof *rw);
    int *text = wkv__malloc((size_t)(n_prefix + piece->n_tokens + 1) * sizeof *text);
    rw->segs = wkv__calloc(1, sizeof *rw->segs);
    if (!text || !rw->segs) {
        wkv__free(text);
        wkv__set_error(error, "out of memory");
        return -1;
    }
    rw->n_segs = 1;
    if (n_prefix > 0) /* an empty prefix may be NULL */
        memcpy(text, prefix, (size_t)n_prefix * sizeof *text);
    int n_text = n_prefix;
    for (int k = 0; k < piece->n_tokens; k++)
        if (piece->tokens[k] < eot)
            text[n_text++] = piece->tokens[k];
    rw->segs[0] = (wkv__wseg){.start = 0, .end = duration, .tokens = piece->tokens,
                              .n_tokens = piece->n_tokens, .n_text = n_text - n_prefix};
    wkv__aword *aw = NULL;
    int naw = 0, skip = 0;
    /* the committed words are aligned with the new ones (their audio is still held),
     * then left out: whole words, by token count */
    int rc = n_text > n_prefix
                 ? wkv__align_window(ctx, ws->pairs, ws->n_pairs, sot, n_sot, text, n_text, size,
                                     unicode, &aw, &naw, &rw->attn, &rw->attn_frames, error)
                 : 0;
    wkv__free(text);
    if (rc != 0)
        return -1;
    for (int done = 0; skip < naw && done < n_prefix; skip++)
        done += aw[skip].n_tokens;
    for (int k = 0; k < skip; k++) {
        wkv__free(aw[k].text);
        wkv__free(aw[k].tokens);
    }
    if (aw)
        memmove(aw, aw + skip, (size_t)(naw - skip) * sizeof *aw);
    /* it takes the words (and frees the array) */
    if (wkv__add_word_timestamps(rw->segs, 1, aw, naw - skip, 0.0, ws->last_speech, ws->prepend,
                                 ws->append) != 0 ||
        flatten(rw, base_s, duration, floor_s, -INFINITY) != 0) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    return 0;
}

int wkv__words_agree(char *const *prev, int n_prev, const wkv_word *cur, int n_cur)
{
    int k = 0;
    while (k < n_prev && k < n_cur && !strcmp(prev[k], cur[k].word))
        k++;
    return k;
}

int wkv__words_due(const wkv_word *w, int n, double horizon)
{
    int due = 0;
    for (int k = 0; k < n; k++)
        if (w[k].start <= horizon)
            due = k + 1;
    return due;
}

int wkv__run_words_segment(const wkv__run_words *rw, int a, int b, double base_s,
                          const wkv_stream_segment *proto, wkv_stream_segment *out)
{
    size_t len = 0;
    for (int k = a; k < b; k++)
        len += strlen(rw->w[k].word);
    char *text = wkv__malloc(len + 1);
    if (!text)
        return -1;
    text[0] = 0;
    for (int k = a, at = 0; k < b; k++) {
        size_t l = strlen(rw->w[k].word);
        memcpy(text + at, rw->w[k].word, l + 1);
        at += (int)l;
    }
    *out = *proto;
    out->text = text;
    out->tokens = rw->tok + rw->tok_off[a];
    out->n_tokens = rw->tok_off[b] - rw->tok_off[a];
    out->words = rw->w + a;
    out->n_words = b - a;
    if (b > a) {
        out->start = rw->w[a].start;
        out->end = rw->w[b - 1].end;
        out->rel_start = out->start - base_s;
        out->rel_end = out->end - base_s;
    }
    return 0;
}

int wkv__run_words_finals(const wkv__run_words *rw, int n_agreed, int n_commit, double base_s,
                         const wkv_stream_segment *proto, wkv_stream_segment *out)
{
    int n = 0;
    for (int a = 0; a < n_commit;) {
        int agreed = a < n_agreed, b = a + 1;
        while (b < n_commit && rw->piece[b] == rw->piece[a] && (b < n_agreed) == agreed)
            b++;
        if (wkv__run_words_segment(rw, a, b, base_s, proto, &out[n]) != 0)
            return -1;
        out[n].final = 1;
        out[n].forced = !agreed;
        n++;
        a = b;
    }
    return n;
}
