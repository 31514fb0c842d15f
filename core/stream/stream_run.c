/* One run of the live stream (stream_priv.h): the log-mel of the audio held, the
 * language once, the decoding and (word mode) the words; what to commit, by agreement
 * with the previous run (LocalAgreement-2) or forced by the latency bound; the commit,
 * which trims the audio held; and the report to the caller. */
#include "stream/stream_priv.h"
#include "stream/stream_alignatt.h"
#include "decode/search.h"
#include "model/vocab.h"
#include "base/ivec.h"
#include "decode/pieces.h"
#include "longform/language.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A piece closed within this of the run's end (seconds) was closed where the audio
 * was cut: its words may go on after it. */
#define EDGE_S 0.1

void wkv__run_forget_words(wkv_stream *st)
{
    for (int i = 0; i < st->n_prev_words; i++)
        wkv__free(st->prev_words[i]);
    wkv__free(st->prev_words);
    st->prev_words = NULL;
    st->n_prev_words = 0;
}

static int count_text(const wkv_model *m, const int *t, int a, int b)
{
    int k = 0;
    for (int i = a; i < b; i++)
        k += t[i] < m->sp.eot;
    return k;
}

/* The run's pieces with their times and (segment mode) texts; no pieces for a silent
 * run.  0 or -1. */
static int cut_pieces(wkv_stream *st, wkv__run_state *rs)
{
    const int tb = st->m->sp.timestamp_begin;
    const int *t = rs->r.tokens;
    rs->np = rs->silent ? 0 : wkv__split_pieces(t, rs->r.n_tokens, tb, &rs->pc);
    if (rs->np < 0 || !(rs->seg = wkv__calloc((size_t)rs->np + 1, sizeof *rs->seg)))
        return -1;
    for (int i = 0; i < rs->np; i++) {
        const wkv__piece *p = &rs->pc[i];
        wkv_stream_segment *s = &rs->seg[i];
        s->rel_start = t[p->tok0] >= tb ? wkv__ts_seconds(t[p->tok0], tb) : 0.0;
        s->rel_end = p->closed ? wkv__ts_seconds(t[p->tok1 - 1], tb) : rs->duration;
        s->tokens = t + p->tok0;
        s->n_tokens = p->tok1 - p->tok0;
        if (wkv__stream_wordy(st))
            continue; /* the words carry the text of word mode's finals and partial */
        s->text = wkv_tokens_to_text(st->m, s->tokens, s->n_tokens, 1);
        if (!s->text)
            return -1;
    }
    return 0;
}

/* Word mode: the words of the run's pieces, from the alignment pass on the cross-KV
 * the decoding left in the context.  0 or -1. */
static int run_words(wkv_stream *st, wkv__run_state *rs, int size, char **error)
{
    if (rs->np == 0)
        return 0;
    int sot[3], unicode;
    int n_sot = wkv__words_sot(st->m, st->language, st->opts.translate, sot, &unicode);
    if (st->so.commit_policy == WKV_COMMIT_ALIGNATT)
        return wkv__run_words_build_after(st->ctx, &st->words, sot, n_sot, unicode, st->prefix.v,
                                          st->prefix.n, &rs->seg[0], size,
                                          (double)rs->base / WKV_SAMPLE_RATE, rs->duration,
                                          st->word_floor, &rs->rw, error);
    return wkv__run_words_build(st->ctx, &st->words, sot, n_sot, unicode, rs->seg, rs->np, size,
                               (double)rs->base / WKV_SAMPLE_RATE, rs->duration, st->word_floor,
                               &rs->rw, error);
}

/* AlignAtt: the words before the first token that looks within the threshold of the
 * end of the audio held (rs->nw_align; the word holding that token waits, but at the
 * end, where the threshold is 4 frames and that word goes too; with no stop, the last
 * word waits until the previous run ended on the same words), from the matrix the
 * word pass left (run_words: prefix and run aligned in one pass; the stop looks at the
 * run's tokens).  No matrix (more tokens than one pass holds): nothing stops. */
static void align_stop(const wkv_stream *st, wkv__run_state *rs)
{
    const wkv__run_words *rw = &rs->rw;
    rs->nw_align = 0;
    if (rs->silent || rw->n == 0)
        return;
    const int np = st->prefix.n, nt = rw->tok_off[rw->n];
    wkv__alignatt aa = {.stop = np + nt};
    if (rw->attn)
        wkv__alignatt_scan(rw->attn, np + nt, rw->attn_frames, np,
                           rs->at_end ? 4 : (st->so.frame_threshold_ms + 10) / 20, &aa);
    aa.stop -= np;
    const int seen = wkv__words_agree(st->prev_words, st->n_prev_words, rw->w, rw->n) == rw->n;
    rs->nw_align = wkv__alignatt_words(rw->tok_off, rw->n, &aa, rs->at_end, seen);
}

/* Log-mel of the first n samples held, the language (once), the decoding, the pieces
 * and (word mode) their words; fills rs->r, rs->seg and the run's compute time.
 * 0 or -1. */
int wkv__run_decode(wkv_stream *st, wkv__run_state *rs, char **error)
{
    double t0 = st->so.clock_ms(st->so.clock_user);
    /* only the frames of the audio held (at most one window): wkv_mel_compute would
     * also transform the 30 s of zero padding after them, every run */
    int size = (int)(rs->n / WKV_HOP < WKV_N_FRAMES ? rs->n / WKV_HOP : WKV_N_FRAMES);
    wkv_mel *mel = wkv_mel_compute_range(st->m, st->audio.v, (size_t)rs->n, 0, rs->n, 0, size,
                                         st->ctx->threads, error);
    if (!mel)
        return -1;
    wkv_mel_window(mel, 0, size, WKV_MEL_WINDOW, st->win);
    wkv_mel_free(mel);
    if (size > 0 && st->detect) {
        /* language "auto": once, on the first run's window */
        const char *code = wkv__language_first_window(st->ctx, st->win, NULL, error);
        if (!code || wkv__own_language(&st->language, &st->opts, code) != 0)
            return -1;
        st->detect = 0;
    }
    /* the prompt: the committed text (condition_on_previous_text), or the initial
     * prompt alone (a model that never learned long prompts decodes better without:
     * docs/trained-model.md) */
    const int cond = st->opts.condition_on_previous_text;
    const int *prompt = cond ? st->committed.v : st->seed;
    int n_prompt = cond ? st->committed.n : st->n_seed;
    if (st->no_prompt)
        n_prompt = 0; /* finish_runs' retry (stream.c) */
    /* what the previous run left uncommitted, as this window's tokens (set_draft):
     * runs mostly repeat it, and a draft is checked in one pass (search.c greedy()) */
    const int draft = st->draft.n > 0 && st->draft_base == st->audio.base;
    /* alignatt: the committed tokens whose audio is held are forced after the start
     * sequence, without timestamps (times come from the attention) */
    const int aa = st->so.commit_policy == WKV_COMMIT_ALIGNATT;
    wkv_options o = st->opts;
    o.timestamps = aa ? 0 : o.timestamps;
    /* audio_ctx: the encoder on the frames the audio held needs (AUTO), or fixed */
    if (size > 0 && (wkv__encode_window(st->ctx, st->win, st->opts.audio_ctx, size) != 0 ||
                     wkv__decode_window_prefix(st->ctx, prompt, n_prompt, st->prefix.v,
                                               aa ? st->prefix.n : 0,
                                               draft ? st->draft.v : NULL,
                                               draft ? st->draft.n : 0, &o, &rs->r,
                                               error) != 0)) {
        if (error && !*error)
            wkv__set_error(error, "the encoder failed");
        return -1;
    }

    rs->silent = size <= 0 || wkv__result_is_silent(&st->opts, &rs->r);
    if (cut_pieces(st, rs) != 0) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    if (wkv__stream_wordy(st) && run_words(st, rs, size, error) != 0)
        return -1;
    if (st->so.commit_policy == WKV_COMMIT_ALIGNATT)
        align_stop(st, rs);
    rs->busy_ms = st->so.clock_ms(st->so.clock_user) - t0;
    return 0;
}

/* The next run's draft: this run's tokens from tok0 on (what it did not commit),
 * their timestamps moved to the audio kept from `base` on (the commit's trim, a
 * multiple of 0.02 s when it ends at a timestamp; otherwise, or for a silent run, no
 * draft).  The draft holds while the audio held still starts at `base`. */
static void set_draft(wkv_stream *st, const wkv__run_state *rs, int tok0, int64_t old_base)
{
    const int64_t base = st->audio.base, shift = base - old_base;
    const int tb = st->m->sp.timestamp_begin;
    st->draft.n = 0;
    st->draft_base = base;
    if (rs->silent || shift < 0 || shift % (WKV_HOP * 2))
        return;
    const int steps = (int)(shift / (WKV_HOP * 2));
    for (int i = tok0; i < rs->r.n_tokens; i++) {
        int t = rs->r.tokens[i];
        if (t >= tb && (t -= steps) < tb)
            break; /* a time before the audio kept: the draft ends there */
        if (wkv__ivec_push(&st->draft, &t, 1) != 0) {
            st->draft.n = 0; /* out of memory: the next run steps without one */
            return;
        }
    }
}

/* Word mode: LocalAgreement-2 over words, and a forced commit takes every word
 * whose start would be older than the latency once the next run is done (all of
 * them at the 30-s cap and at the end). */
static void decide_words(const wkv_stream *st, wkv__run_state *rs, double margin_ms)
{
    const wkv__run_words *rw = &rs->rw;
    rs->nw_agreed = st->so.commit_policy == WKV_COMMIT_ALIGNATT
                        ? rs->nw_align
                        : wkv__words_agree(st->prev_words, st->n_prev_words, rw->w, rw->n);
    rs->agreed = rw->n ? rw->tok_off[rs->nw_agreed] : 0;
    int n = rs->nw_agreed;
    if (rs->forced) {
        double horizon = (double)(rs->base + rs->pending) / WKV_SAMPLE_RATE +
                         (margin_ms - st->so.latency_ms) / 1000.0;
        int due = rs->at_end || rs->n >= MAX_SAMPLES ? rw->n
                                                       : wkv__words_due(rw->w, rw->n, horizon);
        /* alignatt's end: what looks at the last 80 ms is no speech (a continuation
         * the model makes up past the audio), dropped as AlignAtt does */
        if (st->so.commit_policy == WKV_COMMIT_ALIGNATT && rs->at_end)
            due = n;
        n = due > n ? due : n;
    }
    rs->nw_commit = n;
    /* the pieces none of whose words is left */
    rs->n_commit = n < rw->n ? rw->piece[n] : rs->np;
}

/* Decides what to commit: agreement with the previous run, forcing. */
void wkv__run_split(wkv_stream *st, wkv__run_state *rs)
{
    const int *t = rs->r.tokens;
    /* Would the oldest waiting audio be older than `latency` once the next run is
     * done?  That run starts after max(step, this run) and takes about as long as
     * this one (with a margin). */
    double step = st->so.step_ms, busy = rs->busy_ms;
    double margin = (step > busy ? step : busy) + busy * 1.25;
    /* the audio waiting: alignatt holds committed words' audio too */
    int64_t waiting = rs->pending;
    if (st->so.commit_policy == WKV_COMMIT_ALIGNATT && isfinite(st->word_floor)) {
        /* (no word committed since a reset: -inf, nothing to take off) */
        int64_t floor = (int64_t)llround(st->word_floor * WKV_SAMPLE_RATE) - rs->base;
        waiting -= floor > 0 ? (floor < waiting ? floor : waiting) : 0;
    }
    rs->forced = rs->at_end || rs->n >= MAX_SAMPLES ||
                 (double)waiting * 1000.0 / WKV_SAMPLE_RATE + margin >= st->so.latency_ms;
    if (wkv__stream_wordy(st)) {
        decide_words(st, rs, margin);
        return;
    }
    /* agreement with the previous run, in text tokens */
    int agree = 0, k = 0;
    for (int i = 0; i < rs->r.n_tokens && !rs->silent; i++) {
        if (t[i] >= st->m->sp.eot)
            continue;
        if (k < st->prev_hyp.n && agree == k && t[i] == st->prev_hyp.v[k])
            agree++;
        k++;
    }
    rs->agreed = agree;
    int seen = 0;
    for (int i = 0; i < rs->np; i++) {
        seen += count_text(st->m, t, rs->pc[i].tok0, rs->pc[i].tok1);
        int agreed = seen <= agree;
        /* forcing takes complete pieces; one the decoder closed where the audio was cut
         * may go on after it (its next words unheard yet): it waits for the next run
         * unless nothing else is complete (below) */
        int edge = rs->pc[i].closed && !rs->at_end && rs->seg[i].rel_end >= rs->duration - EDGE_S;
        if (!((rs->pc[i].closed || rs->at_end) && (agreed || (rs->forced && !edge))))
            break;
        rs->seg[i].forced = !(agreed && rs->pc[i].closed);
        rs->n_commit = i + 1;
    }
    if (rs->forced && rs->n_commit == 0 && rs->np > 0 && !rs->at_end) {
        /* no complete piece but those closed at the cut: they are taken but the last
         * (the one that may go on after the cut, as an unclosed one would); with none
         * before it, the whole hypothesis becomes final so that the latency promise
         * holds */
        int closed = 0;
        while (closed + 1 < rs->np && rs->pc[closed].closed)
            closed++;
        rs->n_commit = closed > 0 ? closed : rs->np;
        for (int i = 0; i < rs->n_commit; i++)
            rs->seg[i].forced = 1;
    }
}

static void clear_word_finals(wkv__run_state *rs)
{
    for (int i = 0; rs->wfin && i < rs->n_wfin; i++)
        wkv__free((char *)rs->wfin[i].text);
    wkv__free(rs->wfin);
    rs->wfin = NULL;
    rs->n_wfin = 0;
}

/* Word mode: commits words [0, nw_commit) as finals, keeps the rest (texts and
 * tokens) as the next run's comparison and as one partial, and trims the audio at the
 * last committed word's end (all of it after a forced silent or wordless run, or at
 * the end).  0 or -1. */
static int commit_words(wkv_stream *st, wkv__run_state *rs)
{
    const wkv__run_words *rw = &rs->rw;
    const double base_s = (double)rs->base / WKV_SAMPLE_RATE;
    const int nc = rs->nw_commit;
    clear_word_finals(rs); /* a kept run committed again (stream.c, at a speech end) made some */
    rs->wfin = wkv__calloc((size_t)nc + 1, sizeof *rs->wfin);
    if (!rs->wfin)
        return -1;
    rs->n_wfin = wkv__run_words_finals(rw, rs->nw_agreed, nc, base_s, &rs->seg[0], rs->wfin);
    if (rs->n_wfin < 0) {
        rs->n_wfin = nc; /* wkv__run_state_clear frees what was written */
        return -1;
    }
    /* the audio is done with up to the last committed word's end and no further, even
     * when forced or at the end: a run without words over speech (cut mid-word, or
     * stopped early) leaves it for the next run, which hears more of it; at the end
     * finish_runs (stream.c) runs again on what is left.  Alignatt's end drops what
     * lies past its stop (decide_words) */
    const int aa = st->so.commit_policy == WKV_COMMIT_ALIGNATT;
    int64_t keep = nc > 0 ? (int64_t)llround(rw->w[nc - 1].end * WKV_SAMPLE_RATE) : rs->base;
    const int all = (rs->forced && rs->silent) || rs->drop_all || (aa && rs->at_end);
    if (all)
        keep = rs->base + rs->n; /* no speech in it: nothing left worth waiting for */
    else if (!aa && rs->forced && rw->n == 0 && rs->n > WKV_SAMPLE_RATE)
        /* forced, and not one word in audio that is not silent: a decoder can hear
         * nothing in a window that opens on a long quiet (the trained model after 3.4 s
         * of it, though it hears the speech from 1.7 s later), so keeping it all would
         * leave every later run, and the finish, the same window: its older half goes */
        keep = rs->base + rs->n / 2;
    double trim = (double)(keep - rs->base) / WKV_SAMPLE_RATE;
    rs->text_committed = nc;
    if (aa) {
        /* the committed words' audio stays (their tokens the next run's prefix) until
         * the window needs room */
        if (wkv__aa_commit(st, rw, nc) != 0)
            return -1;
        if (nc > 0)
            st->word_floor = rw->w[nc - 1].end;
        if (all)
            wkv__aa_flush(st);
        else
            keep = wkv__aa_cut(st, st->so.step_ms / 1000.0);
        trim = st->word_floor - base_s;
        trim = trim > 0 ? (trim < rs->duration ? trim : rs->duration) : 0;
    } else if (nc > 0) {
        if (wkv__ivec_push(&st->committed, rw->tok, rw->tok_off[nc]) != 0)
            return -1;
        wkv__ivec_keep_last(&st->committed, PROMPT_KEEP);
        st->word_floor = rw->w[nc - 1].end;
    }
    /* the words left for the next run: none when all the audio goes (alignatt's end
     * drops what lies past its stop; kept, they were text uncommitted over no audio,
     * and the VAD gate ran on through the silence after a speech end) */
    const int rest = all ? nc : rw->n;
    wkv__run_forget_words(st);
    st->prev_hyp.n = 0;
    if (rest > nc && !(st->prev_words = wkv__calloc((size_t)(rest - nc), sizeof(char *))))
        return -1;
    for (int k = nc; k < rest; k++)
        if (!(st->prev_words[st->n_prev_words++] = wkv__strdup(rw->w[k].word)))
            return -1;
    if (rest > nc && wkv__ivec_push(&st->prev_hyp, rw->tok + rw->tok_off[nc],
                                    rw->tok_off[rest] - rw->tok_off[nc]) != 0)
        return -1;
    const int64_t old_base = st->audio.base;
    wkv__samples_drop(&st->audio, keep);
    /* words commit at a word's end, not at a timestamp: a draft only when none did */
    set_draft(st, rs, nc > 0 || aa ? rs->r.n_tokens : 0, old_base);
    for (int i = 0; i < rs->np; i++) {
        rs->seg[i].start = base_s + rs->seg[i].rel_start;
        rs->seg[i].end = base_s + rs->seg[i].rel_end;
    }
    if (rest > nc) {
        /* the uncommitted words: one partial over all the audio since the last final */
        wkv_stream_segment *p = &rs->seg[rs->np];
        if (wkv__run_words_segment(rw, nc, rw->n, base_s, &rs->seg[0], p) != 0)
            return -1;
        p->final = p->forced = 0;
        p->rel_start = trim;
        p->rel_end = rs->duration;
        p->start = base_s + trim;
        p->end = base_s + rs->duration;
    }
    return 0;
}

/* Segment mode: where the text of unclosed piece i ends (seconds into the run): the
 * last word's end by the alignment pass on the cross-KV the run's decoding left in
 * the context (a kept run's is gone: it commits with drop_all); the piece's start
 * when it has no text; the run's end when the words cannot be had (the old trim);
 * its own end when no word is timed after its start (ending a piece with text at its
 * start made a final of no duration, which is not reported: its text was lost). */
static double unclosed_text_end(wkv_stream *st, const wkv__run_state *rs, int i)
{
    const double start = rs->seg[i].rel_start < rs->duration ? rs->seg[i].rel_start : rs->duration;
    if (count_text(st->m, rs->r.tokens, rs->pc[i].tok0, rs->pc[i].tok1) == 0)
        return start;
    if (!st->words.pairs)
        return rs->duration;
    wkv__run_words rw;
    int sot[3], unicode;
    int n_sot = wkv__words_sot(st->m, st->language, st->opts.translate, sot, &unicode);
    int size = (int)(rs->n / WKV_HOP < WKV_N_FRAMES ? rs->n / WKV_HOP : WKV_N_FRAMES);
    double end = rs->duration;
    if (wkv__run_words_build(st->ctx, &st->words, sot, n_sot, unicode, rs->seg, i + 1, size,
                             0.0, rs->duration, -INFINITY, &rw, NULL) == 0) {
        for (int k = 0; k < rw.n; k++)
            if (rw.piece[k] == i)
                end = rw.w[k].end; /* the last word of piece i */
    }
    wkv__run_words_clear(&rw);
    /* none timed after its start: its own end, at most the run's */
    return end > start ? end : rs->seg[i].rel_end < rs->duration ? rs->seg[i].rel_end : rs->duration;
}

/* Commits pieces [0, n_commit), keeps the rest as the next run's comparison, trims
 * the audio and reports.  0 or -1. */
int wkv__stream_commit_run(wkv_stream *st, wkv__run_state *rs)
{
    if (wkv__stream_wordy(st))
        return commit_words(st, rs);
    const int *t = rs->r.tokens;
    const double base_s = (double)rs->seg[0].run_base / WKV_SAMPLE_RATE;
    double trim = 0; /* seconds of the held audio done with */
    int committed_text = 0;
    for (int i = 0; i < rs->n_commit; i++) {
        wkv_stream_segment *s = &rs->seg[i];
        s->rel_end = s->rel_end < rs->duration ? s->rel_end : rs->duration;
        s->rel_start = s->rel_start < s->rel_end ? s->rel_start : s->rel_end;
        s->final = 1;
        committed_text += count_text(st->m, t, rs->pc[i].tok0, rs->pc[i].tok1);
        if (wkv__ivec_push(&st->committed, s->tokens, s->n_tokens) != 0)
            return -1;
        /* an unclosed piece (forced, or at the end), or one the decoder closed at the
         * audio's end (where it was cut), reaches the audio's end, but its
         * text may stop before: the decoder stops early at a cut, or skips a word cut
         * in two.  Only the audio its words cover is done with; the rest is held for
         * the next run, which hears those words whole */
        const int whole = rs->pc[i].closed && s->rel_end < rs->duration - EDGE_S;
        double done = whole ? s->rel_end : unclosed_text_end(st, rs, i);
        if (!rs->drop_all && done < s->rel_end)
            s->rel_end = done; /* the final ends with its text */
        trim = done > trim ? done : trim;
    }
    rs->text_committed = committed_text;
    if (rs->forced && rs->silent)
        trim = rs->duration; /* no speech in it: nothing left worth waiting for */
    if (rs->drop_all)
        trim = rs->duration;
    wkv__ivec_keep_last(&st->committed, PROMPT_KEEP);
    /* the next run is compared with what is left of this one */
    st->prev_hyp.n = 0;
    int k = 0;
    for (int i = 0; i < rs->r.n_tokens && !rs->silent; i++)
        if (t[i] < st->m->sp.eot && k++ >= committed_text &&
            wkv__ivec_push(&st->prev_hyp, &t[i], 1) != 0)
            return -1;
    /* at the end too: what is held after the text is run again (stream.c, finish_runs) */
    int64_t keep = st->audio.base + (int64_t)llround(trim * WKV_SAMPLE_RATE);
    const int64_t old_base = st->audio.base;
    wkv__samples_drop(&st->audio, keep);
    set_draft(st, rs, rs->n_commit < rs->np ? rs->pc[rs->n_commit].tok0 : rs->r.n_tokens,
              old_base);
    for (int i = 0; i < rs->np; i++) {
        rs->seg[i].start = base_s + rs->seg[i].rel_start;
        rs->seg[i].end = base_s + rs->seg[i].rel_end;
    }
    if (rs->n_commit < rs->np) {
        /* the uncommitted rest: one partial over all the audio since the last final
         * (the next run starts there, so what supersedes it never starts earlier) */
        wkv_stream_segment *p = &rs->seg[rs->np];
        *p = rs->seg[rs->n_commit];
        p->n_tokens = rs->pc[rs->np - 1].tok1 - rs->pc[rs->n_commit].tok0;
        p->text = wkv_tokens_to_text(st->m, p->tokens, p->n_tokens, 1);
        if (!p->text)
            return -1;
        p->rel_start = trim;
        p->rel_end = rs->duration;
        p->start = base_s + trim;
        p->end = base_s + rs->duration;
    }
    return 0;
}

/* The hook, the statistics and the callback, once the state is updated. */
void wkv__stream_report_run(wkv_stream *st, wkv__run_state *rs, double now, int64_t base)
{
    wkv_stream_stats *s = &st->stats;
    s->runs++;
    s->silent_runs += rs->silent;
    s->forced_runs += rs->forced && wkv__run_committed(st, rs);
    s->busy_ms += rs->busy_ms;
    if (rs->busy_ms > s->max_busy_ms)
        s->max_busy_ms = rs->busy_ms;
    if (st->so.on_run) {
        wkv_stream_run run = {
            .base = base, .n = rs->n, .pending = rs->pending, .busy_ms = rs->busy_ms,
            .now = now, .silent = rs->silent, .forced = rs->forced, .at_end = rs->at_end,
            .agreed = rs->agreed, .pieces = rs->seg, .n_pieces = rs->np,
            .n_commit = rs->n_commit, .new_base = st->audio.base, .words = rs->rw.w,
            .n_words = rs->rw.n, .n_words_agreed = rs->nw_agreed,
            .n_words_committed = rs->nw_commit,
        };
        st->so.on_run(&run, st->so.run_user);
    }
    /* word mode: the finals are the word stretches (every word lasts 10 ms or more), then the
     * partial; else the committed pieces that last, then the partial */
    const int words = wkv__stream_wordy(st);
    const int n_fin = words ? rs->n_wfin : rs->n_commit;
    for (int i = 0; i <= n_fin; i++) {
        int partial = i == n_fin;
        const wkv_stream_segment *seg = partial ? &rs->seg[rs->np] : words ? &rs->wfin[i]
                                                                             : &rs->seg[i];
        if (!partial && !words && !(seg->rel_end > seg->rel_start))
            continue;
        if (!seg->text || wkv__text_is_blank(seg->text))
            continue;
        if (partial) {
            s->partials++;
        } else {
            s->finals++;
            s->forced_finals += seg->forced;
            wkv__stream_count_delay(st, seg->committed_at - seg->end);
        }
        if (st->cb && words && !st->opts.word_timestamps) {
            wkv_stream_segment plain = *seg; /* alignatt without word timestamps */
            plain.words = NULL;
            plain.n_words = 0;
            st->cb(&plain, st->user);
        } else if (st->cb) {
            st->cb(seg, st->user);
        }
    }
}

void wkv__run_state_clear(wkv__run_state *rs)
{
    clear_word_finals(rs);
    wkv__run_words_clear(&rs->rw);
    for (int i = 0; rs->seg && i <= rs->np; i++)
        wkv__free((char *)rs->seg[i].text);
    wkv__free(rs->seg);
    wkv__free(rs->pc);
    wkv_window_result_clear(&rs->r);
}
