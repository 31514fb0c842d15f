/* The live stream (core/stream/stream.c) without GStreamer, on a virtual clock: agreement,
 * forced commits at the latency bound and at 30 s, finish mid-stream, language
 * detection once, reset; and an oracle for lost or duplicated text run over real
 * recordings (see `oracle`), in segment and in word mode (`oracle_words`; the word
 * agreement itself white-box in test_word_agreement).  Usage: test_stream MODEL.bin
 * (the generated micro model); the recordings and the multilingual test-vector model
 * come from shared/. */
#include "stream/stream_words.h"
#include "testutil.h"
#include "wav.h"
#include "whisperkv.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ recording */

typedef struct {
    char *text;
    double start, end;
} word_rec;

typedef struct {
    char *text;
    int *tokens;
    int n_tokens;
    double start, end, rel_start, rel_end, committed_at;
    int64_t run_base;
    int final, forced;
    char language[8];
    word_rec *words; /* word mode */
    int n_words;
} seg_rec;

typedef struct {
    int64_t base, n, pending, new_base;
    int silent, forced, at_end, agreed, n_pieces, n_commit;
    word_rec *words; /* word mode: the hypothesis's words */
    int n_words, n_words_agreed, n_words_committed;
    seg_rec *pieces;
    int partial;       /* index into rec.partials, or -1 */
    int first_final;   /* finals reported after this run: [first_final, n_finals) */
} run_rec;

typedef struct {
    run_rec *runs;
    int n_runs;
    seg_rec *finals;
    int *final_run; /* the run each final came from */
    int n_finals;
    seg_rec *partials;
    int n_partials;
    double clock, busy; /* the fake clock: each reading advances it by busy */
} rec;

static word_rec *words_copy(const wkv_word *w, int n)
{
    word_rec *d = calloc((size_t)n + 1, sizeof *d);
    for (int i = 0; i < n; i++)
        d[i] = (word_rec){strdup(w[i].word), w[i].start, w[i].end};
    return d;
}

static void words_free(word_rec *w, int n)
{
    for (int i = 0; i < n; i++)
        free(w[i].text);
    free(w);
}

static void seg_copy(seg_rec *d, const wkv_stream_segment *s)
{
    d->text = strdup(s->text ? s->text : "");
    d->n_tokens = s->n_tokens;
    d->tokens = malloc(((size_t)s->n_tokens + 1) * sizeof *d->tokens);
    memcpy(d->tokens, s->tokens, (size_t)s->n_tokens * sizeof *d->tokens);
    d->start = s->start;
    d->end = s->end;
    d->rel_start = s->rel_start;
    d->rel_end = s->rel_end;
    d->committed_at = s->committed_at;
    d->run_base = s->run_base;
    d->final = s->final;
    d->forced = s->forced;
    snprintf(d->language, sizeof d->language, "%s", s->language ? s->language : "");
    d->words = words_copy(s->words, s->n_words);
    d->n_words = s->n_words;
}

static void seg_free(seg_rec *s)
{
    free(s->text);
    free(s->tokens);
    words_free(s->words, s->n_words);
}

static void rec_free(rec *r)
{
    for (int i = 0; i < r->n_runs; i++) {
        for (int k = 0; k < r->runs[i].n_pieces; k++)
            seg_free(&r->runs[i].pieces[k]);
        free(r->runs[i].pieces);
        words_free(r->runs[i].words, r->runs[i].n_words);
    }
    for (int i = 0; i < r->n_finals; i++)
        seg_free(&r->finals[i]);
    for (int i = 0; i < r->n_partials; i++)
        seg_free(&r->partials[i]);
    free(r->runs);
    free(r->finals);
    free(r->final_run);
    free(r->partials);
    memset(r, 0, sizeof *r);
}

static double fake_clock(void *user)
{
    rec *r = user;
    r->clock += r->busy; /* a run reads it before and after: busy apart */
    return r->clock;
}

static void on_run(const wkv_stream_run *run, void *user)
{
    rec *r = user;
    r->runs = realloc(r->runs, (size_t)(r->n_runs + 1) * sizeof *r->runs);
    run_rec *d = &r->runs[r->n_runs++];
    *d = (run_rec){run->base, run->n, run->pending, run->new_base, run->silent, run->forced,
                   run->at_end, run->agreed, run->n_pieces, run->n_commit,
                   words_copy(run->words, run->n_words), run->n_words, run->n_words_agreed,
                   run->n_words_committed, NULL, -1, r->n_finals};
    d->pieces = calloc((size_t)run->n_pieces + 1, sizeof *d->pieces);
    for (int i = 0; i < run->n_pieces; i++)
        seg_copy(&d->pieces[i], &run->pieces[i]);
}

static void on_segment(const wkv_stream_segment *s, void *user)
{
    rec *r = user;
    if (s->final) {
        r->finals = realloc(r->finals, (size_t)(r->n_finals + 1) * sizeof *r->finals);
        r->final_run = realloc(r->final_run, (size_t)(r->n_finals + 1) * sizeof(int));
        r->final_run[r->n_finals] = r->n_runs - 1;
        seg_copy(&r->finals[r->n_finals++], s);
    } else {
        r->partials = realloc(r->partials, (size_t)(r->n_partials + 1) * sizeof *r->partials);
        seg_copy(&r->partials[r->n_partials], s);
        if (r->n_runs > 0)
            r->runs[r->n_runs - 1].partial = r->n_partials;
        r->n_partials++;
    }
}

/* Stream options that record every run into r on its fake clock. */
static void recording_options(wkv_stream_options *so, int step, int latency, rec *r)
{
    wkv_stream_options_default(so);
    so->commit_policy = WKV_COMMIT_AGREEMENT; /* what this test holds (stream-alignatt: the other) */
    so->step_ms = step;
    so->latency_ms = latency;
    so->clock_ms = fake_clock;
    so->clock_user = r;
    so->on_run = on_run;
    so->run_user = r;
}

static wkv_stream *open_stream(wkv_context *ctx, const wkv_options *o, int step, int latency,
                               double busy_ms, rec *r)
{
    memset(r, 0, sizeof *r);
    r->busy = busy_ms;
    wkv_stream_options so;
    recording_options(&so, step, latency, r);
    char *err = NULL;
    wkv_stream *st = wkv_stream_new(ctx, o, &so, on_segment, r, &err);
    CHECK(st != NULL, "wkv_stream_new: %s", err ? err : "?");
    free(err);
    return st;
}

/* Pushes pcm in chunks as a live source would: each chunk when its last sample has
 * arrived (now = stream time of that sample, the runs themselves take no time). */
static void feed(wkv_stream *st, const float *pcm, size_t n, size_t chunk)
{
    for (size_t i = 0; i < n; i += chunk) {
        size_t c = n - i < chunk ? n - i : chunk;
        double now = (double)(wkv_stream_length(st) + (int64_t)c) / WKV_SAMPLE_RATE;
        char *err = NULL;
        CHECK(wkv_stream_push(st, pcm + i, c, now, &err) >= 0, "push: %s", err ? err : "?");
        free(err);
    }
}

static void finish(wkv_stream *st)
{
    char *err = NULL;
    CHECK(wkv_stream_finish(st, (double)wkv_stream_length(st) / WKV_SAMPLE_RATE, &err) >= 0,
          "finish: %s", err ? err : "?");
    free(err);
}

/* ------------------------------------------------------------------ the oracle */

static int blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return 0;
    return 1;
}

static int same_seg(const seg_rec *a, const seg_rec *b)
{
    return !strcmp(a->text, b->text) && a->n_tokens == b->n_tokens &&
           !memcmp(a->tokens, b->tokens, (size_t)a->n_tokens * sizeof *a->tokens) &&
           a->start == b->start && a->end == b->end;
}

static int64_t at(double s)
{
    return llround(s * WKV_SAMPLE_RATE);
}

/* What the finals of one run must be: exactly its committed pieces that have text and
 * a length, in order, as that run decoded them. */
static void oracle_commits(const rec *r, int k, const char *what)
{
    const run_rec *run = &r->runs[k];
    int end = k + 1 < r->n_runs ? r->runs[k + 1].first_final : r->n_finals;
    int f = run->first_final;
    for (int i = 0; i < run->n_commit; i++) {
        const seg_rec *p = &run->pieces[i];
        if (!(p->end > p->start) || blank(p->text))
            continue;
        CHECK(f < end && same_seg(&r->finals[f], p),
              "%s: run %d committed piece %d (%.2f-%.2f '%s') is not final %d", what, k, i,
              p->start, p->end, p->text, f);
        f++;
    }
    CHECK(f == end, "%s: run %d reported %d finals it did not commit", what, k, end - f);
}

/* Lost or duplicated text: asserted on every run of every stream.
 *  - finals are in time order and never overlap;
 *  - each run starts where the previous one left the audio (nothing dropped unheard);
 *  - what a run drops is exactly what it committed: up to the end of its last
 *    committed piece (which ends where its text does), or all it decoded when it was
 *    silent and forced; never audio of an uncommitted piece, nor the audio after the
 *    text of a forced or last run (wkv_stream_finish runs again on it, and drops what
 *    is left only after a last run);
 *  - its finals are its committed pieces with text, as it decoded them;
 *  - its partial (if it left text) starts where it left the audio.
 * The finals thus cover the audio from the first sample to the last committed one,
 * except where the committing run decoded no text (declared silent). */
static void oracle(const rec *r, int64_t length, const char *what)
{
    for (int i = 0; i < r->n_finals; i++) {
        const seg_rec *s = &r->finals[i];
        CHECK(s->start < s->end, "%s: final %d %.2f-%.2f", what, i, s->start, s->end);
        if (i > 0)
            CHECK(s->start >= r->finals[i - 1].end, "%s: final %d (%.2f) overlaps %d (%.2f)",
                  what, i, s->start, i - 1, r->finals[i - 1].end);
        CHECK(s->committed_at >= s->end - 1e-9, "%s: final %d final before its audio", what, i);
    }
    int64_t expect_base = 0;
    for (int k = 0; k < r->n_runs; k++) {
        const run_rec *run = &r->runs[k];
        /* after a finish, its last run's leftover was dropped */
        CHECK(run->base == expect_base ||
                  (k > 0 && r->runs[k - 1].at_end && run->base > expect_base),
              "%s: run %d starts at %lld, not %lld", what, k, (long long)run->base,
              (long long)expect_base);
        int64_t keep = run->base;
        for (int i = 0; i < run->n_commit; i++)
            if (at(run->pieces[i].end) > keep)
                keep = at(run->pieces[i].end);
        if (run->forced && run->silent)
            keep = run->base + run->n;
        CHECK(run->new_base == keep, "%s: run %d kept audio from %lld, committed up to %lld",
              what, k, (long long)run->new_base, (long long)keep);
        if (run->n_commit < run->n_pieces)
            CHECK(run->new_base <= at(run->pieces[run->n_commit].start),
                  "%s: run %d dropped uncommitted audio", what, k);
        oracle_commits(r, k, what);
        int left_text = 0;
        for (int i = run->n_commit; i < run->n_pieces; i++)
            left_text |= !blank(run->pieces[i].text);
        if (left_text)
            CHECK(run->partial >= 0 && fabs(r->partials[run->partial].start -
                                                (double)run->new_base / WKV_SAMPLE_RATE) < 1e-6,
                  "%s: run %d left text but no partial from its new start (%.6f)", what, k,
                  run->partial >= 0 ? r->partials[run->partial].start : -1.0);
        expect_base = run->new_base;
    }
    /* finish drops what its last run left (it committed no text, or the reruns ran out) */
    CHECK(expect_base == length || (r->n_runs > 0 && r->runs[r->n_runs - 1].at_end),
          "%s: the stream ended at %lld of %lld samples", what, (long long)expect_base,
          (long long)length);
}

/* ------------------------------------------------------------------ word mode */

static int words_blank(const word_rec *w, int a, int b)
{
    for (int j = a; j < b; j++)
        if (!blank(w[j].text))
            return 0;
    return 1;
}

/* Words one after the other: each within [from, to], starting no earlier than the one
 * before it ends. */
static void check_word_times(const word_rec *w, int n, double from, double to,
                             const char *what, const char *where, int k)
{
    double prev = from;
    for (int j = 0; j < n; j++) {
        CHECK(w[j].start >= prev - 1e-9 && w[j].start <= w[j].end && w[j].end <= to + 1e-9,
              "%s: %s %d word %d '%s' %.3f-%.3f (after %.3f, within %.3f)", what, where, k, j,
              w[j].text, w[j].start, w[j].end, prev, to);
        prev = w[j].end;
    }
}

/* A final or partial is its words: their texts, from the first start to the last end. */
static void check_word_segment(const seg_rec *s, const word_rec *w, int n, const char *what,
                               int i)
{
    size_t len = 0;
    for (int j = 0; j < n; j++)
        len += strlen(w[j].text);
    char *text = calloc(len + 1, 1);
    for (int j = 0; j < n; j++)
        strcat(text, w[j].text);
    int same = s->n_words == n && n > 0 && !strcmp(s->text, text) &&
               s->start == w[0].start && s->end == w[n - 1].end;
    for (int j = 0; same && j < n; j++)
        same = !strcmp(s->words[j].text, w[j].text) && s->words[j].start == w[j].start &&
               s->words[j].end == w[j].end;
    CHECK(same, "%s: segment %d ('%s' %.2f-%.2f, %d words) is not its %d words ('%s')", what,
          i, s->text, s->start, s->end, s->n_words, n, text);
    free(text);
}

/* Word mode's oracle for lost or duplicated text, on every run of a stream:
 *  - finals are in time order and never overlap (a word final never starts before
 *    the previous final ends), each no earlier than its audio;
 *  - a run's words lie in its audio one after the other, and none ends at or before
 *    the end of the last word committed before it (the drop);
 *  - each run starts where the run before it left the audio: the end of its last
 *    committed word (all it decoded at the end, or after a forced run that had no
 *    word or was silent); never inside an uncommitted word;
 *  - its finals are its committed words in order, each a stretch of them (forced
 *    exactly when its words come after the agreed ones), skipping only blank ones;
 *  - its partial (when it left words with text) holds those words and starts where
 *    it left the audio. */
static void oracle_words(const rec *r, int64_t length, const char *what)
{
    for (int i = 0; i < r->n_finals; i++) {
        const seg_rec *s = &r->finals[i];
        CHECK(s->start <= s->end, "%s: final %d %.2f-%.2f", what, i, s->start, s->end);
        if (i > 0)
            CHECK(s->start >= r->finals[i - 1].end, "%s: final %d (%.2f) overlaps %d (%.2f)",
                  what, i, s->start, i - 1, r->finals[i - 1].end);
        CHECK(s->committed_at >= s->end - 1e-9, "%s: final %d final before its audio", what, i);
        check_word_times(s->words, s->n_words, s->start, s->end, what, "final", i);
    }
    int64_t expect_base = 0;
    double floor = -INFINITY; /* end of the last committed word */
    for (int k = 0; k < r->n_runs; k++) {
        const run_rec *run = &r->runs[k];
        const int nc = run->n_words_committed, n = run->n_words;
        /* after a finish, its last run's leftover was dropped */
        CHECK(run->base == expect_base ||
                  (k > 0 && r->runs[k - 1].at_end && run->base > expect_base),
              "%s: run %d starts at %lld, not %lld", what, k, (long long)run->base,
              (long long)expect_base);
        CHECK(0 <= run->n_words_agreed && run->n_words_agreed <= nc && nc <= n,
              "%s: run %d: %d words, %d agreed, %d committed", what, k, n,
              run->n_words_agreed, nc);
        check_word_times(run->words, n, (double)run->base / WKV_SAMPLE_RATE,
                         (double)(run->base + run->n) / WKV_SAMPLE_RATE, what, "run", k);
        for (int j = 0; j < n; j++)
            CHECK(run->words[j].end > floor + 1e-9, "%s: run %d word %d ends at %.3f, in "
                  "audio committed up to %.3f", what, k, j, run->words[j].end, floor);
        int64_t keep = nc > 0 ? at(run->words[nc - 1].end) : run->base;
        if (run->forced && run->silent)
            keep = run->base + run->n;
        CHECK(run->new_base == keep, "%s: run %d kept audio from %lld, committed up to %lld",
              what, k, (long long)run->new_base, (long long)keep);
        if (nc < n)
            CHECK(run->new_base <= at(run->words[nc].start),
                  "%s: run %d dropped uncommitted audio", what, k);
        if (nc > 0)
            floor = run->words[nc - 1].end;
        /* the run's finals: stretches of its committed words, in order */
        int end = k + 1 < r->n_runs ? r->runs[k + 1].first_final : r->n_finals, j = 0;
        for (int f = run->first_final; f < end; f++) {
            const seg_rec *s = &r->finals[f];
            int a = j;
            while (a < nc && !(s->n_words > 0 && !strcmp(run->words[a].text, s->words[0].text) &&
                               run->words[a].start == s->words[0].start))
                a++;
            CHECK(a + s->n_words <= nc && words_blank(run->words, j, a),
                  "%s: run %d: final %d ('%s') is not its next committed words", what, k, f,
                  s->text);
            if (a + s->n_words > nc)
                break;
            check_word_segment(s, run->words + a, s->n_words, what, f);
            int past = a >= run->n_words_agreed;
            CHECK(s->forced == past && (past || a + s->n_words <= run->n_words_agreed),
                  "%s: run %d final %d (words %d-%d, %d agreed) forced %d", what, k, f, a,
                  a + s->n_words, run->n_words_agreed, s->forced);
            j = a + s->n_words;
        }
        CHECK(words_blank(run->words, j, nc), "%s: run %d committed words %d-%d reported as "
              "no final", what, k, j, nc);
        if (!words_blank(run->words, nc, n)) {
            CHECK(run->partial >= 0, "%s: run %d left words but no partial", what, k);
            if (run->partial >= 0) {
                const seg_rec *p = &r->partials[run->partial];
                CHECK(fabs(p->start - (double)run->new_base / WKV_SAMPLE_RATE) < 1e-6,
                      "%s: run %d partial starts at %.6f, not where it left the audio", what,
                      k, p->start);
                CHECK(p->n_words == n - nc, "%s: run %d partial has %d words, %d left", what,
                      k, p->n_words, n - nc);
            }
        }
        expect_base = run->new_base;
    }
    /* finish drops what its last run left (it committed no text, or the reruns ran out) */
    CHECK(expect_base == length || (r->n_runs > 0 && r->runs[r->n_runs - 1].at_end),
          "%s: the stream ended at %lld of %lld samples", what, (long long)expect_base,
          (long long)length);
}

/* LocalAgreement-2 over words: a run's agreed words are the longest common prefix of
 * its words' texts and the words the run before it left uncommitted, and without a
 * forced commit exactly those are committed.  Returns the finals committed by
 * agreement. */
static int check_word_agreement(const rec *r, const char *what)
{
    int agreed = 0;
    for (int k = 0; k < r->n_runs; k++) {
        const run_rec *run = &r->runs[k], *prev = k > 0 ? &r->runs[k - 1] : NULL;
        const word_rec *left = prev ? prev->words + prev->n_words_committed : NULL;
        int n_left = prev ? prev->n_words - prev->n_words_committed : 0;
        int a = run->n_words_agreed, same = a <= n_left && a <= run->n_words;
        for (int j = 0; same && j < a; j++)
            same = !strcmp(left[j].text, run->words[j].text);
        int longest = a == n_left || a == run->n_words || strcmp(left[a].text, run->words[a].text);
        CHECK(same && longest, "%s: run %d agreed on %d words of %d left (%d words)", what, k,
              a, n_left, run->n_words);
        CHECK(run->forced || run->n_words_committed == a,
              "%s: run %d committed %d words, %d agreed, without forcing", what, k,
              run->n_words_committed, a);
        for (int f = run->first_final; f < r->n_finals && r->final_run[f] == k; f++)
            agreed += !r->finals[f].forced;
    }
    return agreed;
}

/* A forced commit keeps the latency promise word by word: after a forced run no word
 * is left whose start would be older than `latency` once the next run is done (its
 * now: the audio held; then max(step, busy) + 1.25 busy), and no later word is
 * committed without agreement; the last run and one on 30 s commit every word. */
static void check_word_force(const rec *r, int step, int latency, const char *what)
{
    for (int k = 0; k < r->n_runs; k++) {
        const run_rec *run = &r->runs[k];
        if (!run->forced)
            continue;
        int due = 0;
        if (run->at_end || run->n >= WKV_N_SAMPLES) {
            due = run->n_words;
        } else {
            double busy = r->busy;
            double horizon = (double)(run->base + run->pending) / WKV_SAMPLE_RATE +
                             ((step > busy ? step : busy) + 1.25 * busy - latency) / 1000.0;
            for (int j = 0; j < run->n_words; j++)
                if (run->words[j].start <= horizon)
                    due = j + 1;
        }
        int want = due > run->n_words_agreed ? due : run->n_words_agreed;
        CHECK(run->n_words_committed == want, "%s: forced run %d committed %d words, %d due, "
              "%d agreed", what, k, run->n_words_committed, due, run->n_words_agreed);
    }
}

/* Crafted hypotheses through the agreement (white-box, stream_words.c). */
static void test_word_agreement(void)
{
    static const char *const prev_text[] = {" the", " cat", " sat", " down."};
    char *prev[4];
    for (int i = 0; i < 4; i++)
        prev[i] = (char *)prev_text[i];
    static const struct {
        const char *cur[5];
        int want;
        const char *what;
    } cases[] = {
        {{" the", " cat", " sat", " down.", " Then"}, 4, "all agreed, one more word"},
        {{" the", " cat", " sits", " down."}, 2, "a prefix agreed"},
        {{" a", " cat", " sat", " down."}, 0, "the first word differs: nothing, even though "
                                              "the rest agrees"},
        {{" the", " cat,", " sat", " down."}, 1, "a punctuation-only difference"},
        {{" the", " cat", " sat", " down"}, 3, "the last word loses its full stop"},
        {{" The", " cat"}, 0, "a case-only difference"},
        {{" the"}, 1, "a shorter hypothesis"},
        {{NULL}, 0, "no words"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        wkv_word cur[5];
        int n = 0;
        while (n < 5 && cases[c].cur[n]) {
            cur[n] = (wkv_word){cases[c].cur[n], n * 0.5, n * 0.5 + 0.4, 0.5f};
            n++;
        }
        int got = wkv__words_agree(prev, 4, cur, n);
        CHECK(got == cases[c].want, "agreement, %s: %d words, expected %d", cases[c].what, got,
              cases[c].want);
    }
    wkv_word one = {" the", 0, 0.4, 0.5f};
    CHECK(wkv__words_agree(prev, 0, &one, 1) == 0, "agreement with no previous words");
    /* forced: every word up to the last one starting at or before the horizon */
    wkv_word w[4] = {{" a", 0.0, 0.3, 1}, {" b", 0.3, 0.6, 1}, {" c", 0.6, 0.6, 1},
                     {" d", 1.2, 1.5, 1}};
    static const struct {
        double horizon;
        int want;
    } due[] = {{-0.1, 0}, {0.0, 1}, {0.59, 2}, {0.6, 3}, {1.19, 3}, {5.0, 4}};
    for (size_t c = 0; c < sizeof due / sizeof *due; c++)
        CHECK(wkv__words_due(w, 4, due[c].horizon) == due[c].want,
              "words due at %.2f: %d, expected %d", due[c].horizon,
              wkv__words_due(w, 4, due[c].horizon), due[c].want);
    /* finals: a commit of 4 words, 2 agreed, over pieces 0 0 0 1 is three finals:
     * " a b" agreed, " c" forced (same piece), " d" forced (next piece) */
    int piece[4] = {0, 0, 0, 1}, tok[8] = {10, 11, 12, 13, 14, 15, 16, 17},
        off[5] = {0, 2, 3, 5, 8};
    wkv__run_words rw = {.w = w, .piece = piece, .tok = tok, .tok_off = off, .n = 4};
    wkv_stream_segment proto = {.run_base = 16000, .committed_at = 9.0}, fin[4];
    int nf = wkv__run_words_finals(&rw, 2, 4, 1.0, &proto, fin);
    static const struct {
        const char *text;
        int forced, w0, nw;
    } want[3] = {{" a b", 0, 0, 2}, {" c", 1, 2, 1}, {" d", 1, 3, 1}};
    CHECK(nf == 3, "%d finals of 4 words, expected 3", nf);
    for (int i = 0; i < nf && i < 3; i++) {
        const wkv_stream_segment *f = &fin[i];
        int a = want[i].w0, b = a + want[i].nw;
        CHECK(!strcmp(f->text, want[i].text) && f->forced == want[i].forced && f->final &&
                  f->words == w + a && f->n_words == b - a && f->tokens == tok + off[a] &&
                  f->n_tokens == off[b] - off[a] && f->start == w[a].start &&
                  f->end == w[b - 1].end && f->rel_start == w[a].start - 1.0 &&
                  f->run_base == 16000 && f->committed_at == 9.0,
              "final %d: '%s' forced %d, %d words, %d tokens, %.2f-%.2f", i, f->text, f->forced,
              f->n_words, f->n_tokens, f->start, f->end);
    }
    for (int i = 0; i < nf; i++)
        free((char *)fin[i].text);
}

/* ------------------------------------------------------------------ the tests */

typedef struct {
    const wkv_model *model;
    wkv_context *ctx;
    wkv_options opts;
    wav_data clip[3];
    const char *clip_name[3];
} fixture;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The oracle of the fixture's mode. */
static void check_oracle(const fixture *fx, const rec *r, int64_t length, const char *what)
{
    if (fx->opts.word_timestamps)
        oracle_words(r, length, what);
    else
        oracle(r, length, what);
}

/* The statistics agree with what was reported: counts, and the commit delays
 * (committed_at - end) of the finals, the median to 5 ms. */
static void check_stats(const wkv_stream *st, const rec *r, const char *what)
{
    wkv_stream_stats ss;
    wkv_stream_get_stats(st, &ss);
    int forced = 0;
    double *d = malloc(((size_t)r->n_finals + 1) * sizeof *d), sum = 0;
    for (int i = 0; i < r->n_finals; i++) {
        d[i] = r->finals[i].committed_at - r->finals[i].end;
        sum += d[i];
        forced += r->finals[i].forced;
    }
    qsort(d, (size_t)r->n_finals, sizeof *d, cmp_double);
    CHECK(ss.runs == r->n_runs && ss.finals == r->n_finals && ss.partials == r->n_partials &&
              ss.forced_finals == forced,
          "%s: stats %lld runs %lld finals %lld partials %lld forced; seen %d %d %d %d", what,
          (long long)ss.runs, (long long)ss.finals, (long long)ss.partials,
          (long long)ss.forced_finals, r->n_runs, r->n_finals, r->n_partials, forced);
    if (r->n_finals > 0) {
        double median = d[(r->n_finals - 1) / 2];
        CHECK(fabs(ss.delay_max - d[r->n_finals - 1]) < 1e-9 &&
                  fabs(ss.delay_mean - sum / r->n_finals) < 1e-9 &&
                  fabs(ss.delay_median - median) <= 0.005 + 1e-9,
              "%s: delays max %.3f mean %.3f median %.3f, seen %.3f %.3f %.3f", what,
              ss.delay_max, ss.delay_mean, ss.delay_median, d[r->n_finals - 1],
              sum / r->n_finals, median);
    }
    free(d);
}

/* A whole recording at step 1 s, latency 4 s, through the oracle; returns the record. */
static void run_clip(fixture *fx, const wav_data *w, size_t n, int step, int latency,
                     double busy, rec *r, const char *what)
{
    wkv_stream *st = open_stream(fx->ctx, &fx->opts, step, latency, busy, r);
    if (!st)
        return;
    feed(st, w->samples, n, 4000);
    finish(st);
    check_oracle(fx, r, (int64_t)n, what);
    check_stats(st, r, what);
    wkv_stream_free(st);
}

/* Text tokens (ids below eot) of pieces [a, b) of a run. */
static int text_of(const run_rec *run, int a, int b, int eot, int *out)
{
    int n = 0;
    for (int i = a; i < b; i++)
        for (int k = 0; k < run->pieces[i].n_tokens; k++)
            if (run->pieces[i].tokens[k] < eot)
                out[n++] = run->pieces[i].tokens[k];
    return n;
}

/* LocalAgreement-2: what a run commits without force is a prefix of the text the run
 * before it left uncommitted.  Returns the finals committed by agreement. */
static int check_agreement(const rec *r, int eot, const char *what)
{
    int agreed = 0;
    int *prev = malloc(4096 * sizeof *prev), *cur = malloc(4096 * sizeof *cur);
    for (int k = 0; k < r->n_runs; k++) {
        const run_rec *run = &r->runs[k];
        int n_agreed = 0;
        while (n_agreed < run->n_commit && !run->pieces[n_agreed].forced)
            n_agreed++;
        for (int i = n_agreed + 1; i < run->n_commit; i++)
            CHECK(run->pieces[i].forced, "%s: run %d: an agreed piece after a forced one",
                  what, k);
        CHECK(run->forced || n_agreed == run->n_commit,
              "%s: run %d commits forced pieces without forcing", what, k);
        int nc = text_of(run, 0, n_agreed, eot, cur);
        int np = k > 0 ? text_of(&r->runs[k - 1], r->runs[k - 1].n_commit,
                                 r->runs[k - 1].n_pieces, eot, prev) : 0;
        CHECK(nc <= np && !memcmp(cur, prev, (size_t)nc * sizeof *cur),
              "%s: run %d committed %d text tokens the previous run did not say (%d left)",
              what, k, nc, np);
        for (int f = run->first_final; f < r->n_finals && r->final_run[f] == k; f++)
            agreed += !r->finals[f].forced;
    }
    free(prev);
    free(cur);
    return agreed;
}

/* Forced commits follow the latency rule: a run forces exactly when the audio waiting
 * plus max(step, its time) plus 1.25 times its time reaches the latency, or it holds
 * 30 s, or it is the last. */
static void check_force_rule(const rec *r, int step, int latency, const char *what)
{
    for (int k = 0; k < r->n_runs; k++) {
        const run_rec *run = &r->runs[k];
        double busy = r->busy;
        int want = run->at_end || run->n >= WKV_N_SAMPLES ||
                   run->pending * 1000.0 / WKV_SAMPLE_RATE + (step > busy ? step : busy) +
                           1.25 * busy >= latency;
        CHECK(run->forced == want, "%s: run %d (%.2f s waiting) forced %d, expected %d", what,
              k, run->pending / 16000.0, run->forced, want);
        CHECK(run->n <= WKV_N_SAMPLES, "%s: run %d decodes %lld samples", what, k,
              (long long)run->n);
    }
}

/* A long latency commits only by agreement (and at the end), so until the short
 * latency first forces, both streams make the same runs: the finals committed before
 * that run are the same, and with no forced run at all the whole transcripts are. */
static void check_vs_long(const rec *s, const rec *l, const char *what)
{
    int k = 0;
    while (k < s->n_runs && k < l->n_runs && s->runs[k].forced == l->runs[k].forced) {
        const run_rec *a = &s->runs[k], *b = &l->runs[k];
        int same = a->base == b->base && a->n == b->n && a->n_pieces == b->n_pieces &&
                   a->n_commit == b->n_commit;
        for (int i = 0; same && i < a->n_pieces; i++)
            same = same_seg(&a->pieces[i], &b->pieces[i]);
        CHECK(same, "%s: run %d differs before any difference in forcing", what, k);
        if (!same)
            return;
        k++;
    }
    int until = k < s->n_runs ? s->runs[k].first_final : s->n_finals;
    int until_l = k < l->n_runs ? l->runs[k].first_final : l->n_finals;
    CHECK(until == until_l, "%s: %d finals before run %d, long latency %d", what, until, k,
          until_l);
    for (int i = 0; i < until && i < until_l; i++)
        CHECK(same_seg(&s->finals[i], &l->finals[i]), "%s: final %d differs", what, i);
    if (k == s->n_runs && k == l->n_runs)
        CHECK(s->n_finals == l->n_finals, "%s: no forcing apart, yet %d vs %d finals", what,
              s->n_finals, l->n_finals);
    printf("%s: %d of %d runs the same as with a long latency, %d finals equal\n", what, k,
           s->n_runs, until);
}

/* Clip c at step 1 s with latency 4 s (runs taking `busy` ms) into s and 1000 s into
 * l, both through the oracle and the force rule; their names into what_s, what_l. */
static void clip_pair(fixture *fx, int c, double busy, const char *mode, rec *s, rec *l,
                      char what_s[96], char what_l[96])
{
    const wav_data *w = &fx->clip[c];
    snprintf(what_s, 96, "%s%s step 1 s latency 4 s", fx->clip_name[c], mode);
    run_clip(fx, w, w->n, 1000, 4000, busy, s, what_s);
    check_force_rule(s, 1000, 4000, what_s);
    snprintf(what_l, 96, "%s%s step 1 s latency 1000 s", fx->clip_name[c], mode);
    run_clip(fx, w, w->n, 1000, 1000000, 0, l, what_l);
    check_force_rule(l, 1000, 1000000, what_l);
}

static void test_clips(fixture *fx, int eot)
{
    int agreed = 0, forced = 0;
    for (int c = 0; c < 3; c++) {
        rec s, l;
        char what[96], what_l[96];
        clip_pair(fx, c, 0, "", &s, &l, what, what_l);
        agreed += check_agreement(&s, eot, what);
        int clip_forced = 0;
        for (int i = 0; i < s.n_finals; i++)
            clip_forced += s.finals[i].forced;
        forced += clip_forced;
        agreed += check_agreement(&l, eot, what_l);
        check_vs_long(&s, &l, fx->clip_name[c]);
        printf("%s: %d runs, %d finals (%d forced), %d partials; long latency %d runs, %d "
               "finals\n", fx->clip_name[c], s.n_runs, s.n_finals, clip_forced, s.n_partials,
               l.n_runs, l.n_finals);
        rec_free(&s);
        rec_free(&l);
    }
    /* the checks above are empty unless both kinds of commit happen */
    CHECK(agreed > 0, "no final was committed by agreement");
    CHECK(forced > 0, "no final was committed by force");
}

/* Word mode on the recordings: the word oracle, agreement and force rules, at latency
 * 4 s with runs taking 250 ms and at 1000 s; and what the words' commit delay is. */
static void test_clips_words(fixture *fx)
{
    int agreed = 0, forced = 0;
    for (int c = 0; c < 3; c++) {
        rec s, l;
        char what[96], what_l[96];
        clip_pair(fx, c, 250, " words", &s, &l, what, what_l);
        check_word_force(&s, 1000, 4000, what);
        agreed += check_word_agreement(&s, what);
        check_word_force(&l, 1000, 1000000, what_l);
        agreed += check_word_agreement(&l, what_l);
        int n_words = 0, clip_forced = 0;
        double worst = 0;
        for (int i = 0; i < s.n_finals; i++) {
            clip_forced += s.finals[i].forced;
            for (int j = 0; j < s.finals[i].n_words; j++, n_words++) {
                double d = s.finals[i].committed_at - s.finals[i].words[j].end;
                worst = d > worst ? d : worst;
            }
        }
        forced += clip_forced;
        printf("%s words: %d runs, %d finals (%d forced) of %d words, worst word delay %.2f s; "
               "long latency %d finals\n", fx->clip_name[c], s.n_runs, s.n_finals, clip_forced,
               n_words, worst, l.n_finals);
        rec_free(&s);
        rec_free(&l);
    }
    CHECK(agreed > 0, "no word final was committed by agreement");
    CHECK(forced > 0, "no word final was committed by force");
}

/* The compute time enters the force rule through the stream's clock: the same first
 * run is forced when runs take 3 s and not when they take none. */
static void test_clock(fixture *fx)
{
    const wav_data *w = &fx->clip[0];
    for (int busy = 0; busy <= 3000; busy += 3000) {
        rec r;
        wkv_stream *st = open_stream(fx->ctx, &fx->opts, 2000, 8000, busy, &r);
        feed(st, w->samples, 2 * WKV_SAMPLE_RATE, 4000);
        CHECK(r.n_runs == 1 && r.runs[0].forced == (busy > 0),
              "busy %d ms: %d runs, forced %d", busy, r.n_runs, r.n_runs ? r.runs[0].forced : -1);
        CHECK(r.n_finals == 0 || busy > 0, "a final after one run without force");
        wkv_stream_stats stats;
        wkv_stream_get_stats(st, &stats);
        CHECK(fabs(stats.busy_ms - busy) < 1e-9, "busy %d ms measured as %.3f", busy,
              stats.busy_ms);
        wkv_stream_free(st);
        rec_free(&r);
    }
}

/* 30 s at most: 45 s pushed at once make one run on the first 30 s, forced; the rest
 * is committed by finish. */
static void test_cap(fixture *fx)
{
    const wav_data *w = &fx->clip[2];
    size_t n = 45 * WKV_SAMPLE_RATE < w->n ? 45 * WKV_SAMPLE_RATE : w->n;
    rec r;
    wkv_stream *st = open_stream(fx->ctx, &fx->opts, 40000, 1000000, 0, &r);
    feed(st, w->samples, n, n);
    CHECK(r.n_runs == 1 && r.runs[0].n == WKV_N_SAMPLES && r.runs[0].forced &&
              r.runs[0].new_base > 0,
          "45 s at once: %d runs, the first on %lld samples, forced %d", r.n_runs,
          r.n_runs ? (long long)r.runs[0].n : -1LL, r.n_runs ? r.runs[0].forced : -1);
    finish(st);
    check_oracle(fx, &r, (int64_t)n, "45 s at once");
    CHECK(wkv_stream_base(st) == (int64_t)n, "finish left audio");
    wkv_stream_free(st);
    rec_free(&r);
}

/* finish mid-stream commits everything decoded (its last run's every piece), and the
 * stream goes on from there with times that go on. */
static void test_finish_mid_stream(fixture *fx)
{
    const wav_data *w = &fx->clip[0];
    rec r;
    wkv_stream *st = open_stream(fx->ctx, &fx->opts, 1000, 1000000, 0, &r);
    size_t half = 13 * WKV_SAMPLE_RATE / 2; /* runs at 1, 2, ... 6 s, then 0.5 s held */
    feed(st, w->samples, half, 4000);
    int before = r.n_runs;
    int64_t held = wkv_stream_length(st) - wkv_stream_base(st);
    finish(st);
    CHECK(held > 0 && r.n_runs > before && r.runs[r.n_runs - 1].at_end,
          "finish made no last run on %lld samples", (long long)held);
    printf("finish after 6.5 s: %lld samples held, %d runs\n", (long long)held, r.n_runs - before);
    for (int k = before; k < r.n_runs; k++)
        CHECK(r.runs[k].n_commit == r.runs[k].n_pieces,
              "finish run %d left %d pieces uncommitted", k,
              r.runs[k].n_pieces - r.runs[k].n_commit);
    CHECK(wkv_stream_base(st) == (int64_t)half, "finish left audio");
    feed(st, w->samples + half, w->n - half, 4000);
    finish(st);
    check_oracle(fx, &r, (int64_t)w->n, "finish after 6.5 s, then the rest");
    wkv_stream_free(st);
    rec_free(&r);
}

/* reset forgets audio, prompt and hypothesis: the same audio after a reset runs
 * exactly as in a fresh stream, only later in stream time. */
static void test_reset(fixture *fx)
{
    const wav_data *w = &fx->clip[0];
    size_t n = 5 * WKV_SAMPLE_RATE;
    rec r;
    wkv_stream *st = open_stream(fx->ctx, &fx->opts, 1000, 1000000, 0, &r);
    feed(st, w->samples, n, 4000);
    int runs = r.n_runs, finals = r.n_finals, partials = r.n_partials;
    wkv_stream_reset(st);
    CHECK(r.n_finals == finals && r.n_partials == partials, "reset reported segments");
    CHECK(wkv_stream_base(st) == (int64_t)n && wkv_stream_length(st) == (int64_t)n,
          "reset kept audio");
    feed(st, w->samples, n, 4000);
    CHECK(r.n_runs == 2 * runs && runs > 1, "%d runs before the reset, %d after", runs,
          r.n_runs - runs);
    for (int k = 0; k < runs && runs + k < r.n_runs; k++) {
        const run_rec *a = &r.runs[k], *b = &r.runs[runs + k];
        int same = b->base == a->base + (int64_t)n && a->n == b->n &&
                   a->n_pieces == b->n_pieces && a->n_commit == b->n_commit;
        for (int i = 0; same && i < a->n_pieces; i++)
            same = !strcmp(a->pieces[i].text, b->pieces[i].text) &&
                   a->pieces[i].rel_start == b->pieces[i].rel_start &&
                   a->pieces[i].rel_end == b->pieces[i].rel_end;
        CHECK(same, "run %d after the reset differs from run %d of the fresh stream", runs + k,
              k);
    }
    wkv_stream_free(st);
    rec_free(&r);
}

/* Odd input: a lone sample finished alone (no frame: a silent run), NaN and infinite
 * samples, zeros, empty pushes and finishes: nothing crashes, the oracle holds. */
static void test_odd_input(fixture *fx)
{
    rec r;
    wkv_stream *st = open_stream(fx->ctx, &fx->opts, 500, 2000, 0, &r);
    size_t n = 3 * WKV_SAMPLE_RATE;
    float *odd = malloc(n * sizeof *odd);
    for (size_t i = 0; i < n; i++)
        odd[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -1e30f;
    char *err = NULL;
    CHECK(wkv_stream_finish(st, 0, &err) == 0, "finish with nothing held ran");
    feed(st, fx->clip[0].samples, 1, 1);
    finish(st);
    CHECK(r.n_runs == 1 && r.runs[0].silent && wkv_stream_base(st) == 1,
          "one sample: %d runs", r.n_runs);
    CHECK(wkv_stream_push(st, odd, 0, 0, &err) == 0, "an empty push ran");
    feed(st, odd, n, 1000);
    memset(odd, 0, n * sizeof *odd);
    feed(st, odd, n, 7000);
    finish(st);
    check_oracle(fx, &r, 1 + 2 * (int64_t)n, "odd input");
    free(err);
    free(odd);
    wkv_stream_free(st);
    rec_free(&r);
}

/* language "auto" on a multilingual model: detected once, on the first run. */
static void test_language(const char *model_path, const wav_data *w)
{
    char *err = NULL;
    wkv_model *m = wkv_model_load(model_path, &err);
    CHECK(m != NULL, "%s: %s", model_path, err ? err : "?");
    wkv_context *ctx = m ? wkv_context_new(m, 1, &err) : NULL;
    free(err);
    if (!ctx) {
        wkv_model_free(m);
        return;
    }
    wkv_options o;
    wkv_options_default(&o);
    o.language = "xx";
    wkv_stream *bad = wkv_stream_new(ctx, &o, NULL, NULL, NULL, &err);
    CHECK(!bad && err && strstr(err, "xx"), "language xx: %s", err ? err : "accepted");
    free(err);
    err = NULL;
    wkv_stream_free(bad);
    o.language = "auto";
    rec r;
    wkv_stream *st = open_stream(ctx, &o, 1000, 4000, 0, &r);
    CHECK(!strcmp(wkv_stream_language(st), "auto"), "language before the first run");
    int64_t enc0 = wkv_context_stats(ctx)->encoder_runs;
    feed(st, w->samples, w->n, 4000);
    finish(st);
    const char *lang = wkv_stream_language(st);
    int64_t encodes = wkv_context_stats(ctx)->encoder_runs - enc0;
    CHECK(strcmp(lang, "auto") != 0, "no language detected");
    CHECK(encodes == r.n_runs + 1, "%lld encoder runs for %d runs: detection not once",
          (long long)encodes, r.n_runs);
    for (int i = 0; i < r.n_finals; i++)
        CHECK(!strcmp(r.finals[i].language, lang), "final %d in %s, detected %s", i,
              r.finals[i].language, lang);
    oracle(&r, (int64_t)w->n, "multilingual, language auto");
    printf("language auto: detected %s, %d runs, %lld encoder runs\n", lang, r.n_runs,
           (long long)encodes);
    wkv_stream_free(st);
    rec_free(&r);
    wkv_context_free(ctx);
    wkv_model_free(m);
}

/* ------------------------------------------------------------------ voice activity */

static wkv_stream *open_vad_stream(fixture *fx, const wkv_vad_model *vad, rec *r)
{
    memset(r, 0, sizeof *r);
    wkv_stream_options so;
    recording_options(&so, 1000, 8000, r);
    so.vad_model = vad;
    char *err = NULL;
    wkv_stream *st = wkv_stream_new(fx->ctx, &fx->opts, &so, on_segment, r, &err);
    CHECK(st != NULL, "wkv_stream_new with VAD: %s", err ? err : "?");
    free(err);
    return st;
}

/* 20 s of silence, low noise and a steady tone: with VAD no run and no text, and the
 * audio is dropped; without it the random model runs and writes text there. */
static void test_vad_quiet(fixture *fx, const wkv_vad_model *vad)
{
    size_t n = 20 * WKV_SAMPLE_RATE;
    float *pcm = malloc(n * sizeof *pcm);
    static const char *const kinds[3] = {"silence", "noise", "tone"};
    for (int k = 0; k < 3; k++) {
        uint32_t x = 12345;
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            pcm[i] = k == 0   ? 0.0f
                     : k == 1 ? 0.003f * ((float)(x >> 8) / (float)(1 << 24) - 0.5f)
                              : 0.3f * (float)sin(2 * M_PI * 440.0 * (double)i / WKV_SAMPLE_RATE);
        }
        for (int on = 0; on <= 1; on++) {
            rec r;
            wkv_stream *st = open_vad_stream(fx, on ? vad : NULL, &r);
            if (!st)
                break;
            feed(st, pcm, n, 4000);
            finish(st);
            if (on)
                CHECK(r.n_runs == 0 && r.n_finals == 0 && r.n_partials == 0 &&
                          wkv_stream_base(st) == (int64_t)n,
                      "VAD on %s: %d runs, %d finals, %d partials, base %lld", kinds[k],
                      r.n_runs, r.n_finals, r.n_partials, (long long)wkv_stream_base(st));
            else
                CHECK(r.n_runs > 0, "without VAD %s made no run: the check above is void",
                      kinds[k]);
            wkv_stream_free(st);
            rec_free(&r);
        }
    }
    free(pcm);
}

/* The whole input's speech segments (wkv_vad_probs, wkv_vad_segments with the
 * default parameters, in *vp) into *segs; their number, or -1. */
static int whole_segments(const wkv_vad_model *vad, const float *pcm, size_t n,
                          wkv_vad_params *vp, wkv_vad_segment **segs)
{
    wkv_vad_params_default(vp);
    float *probs = NULL;
    char *err = NULL;
    *segs = NULL;
    int64_t np = wkv_vad_probs(vad, pcm, n, &probs, &err);
    int ns = np > 0 ? wkv_vad_segments(probs, np, vp, segs, &err) : -1;
    if (ns < 0)
        fprintf(stderr, "VAD: %s\n", err ? err : "?");
    free(err);
    free(probs);
    return ns;
}

/* Silence, jfk, silence: the leading silence is never decoded; the end of the last
 * speech segment (as wkv_vad_segments finds it on the whole input) commits everything
 * at once, within the minimum silence, padding and a push of the speech's end; the
 * trailing silence costs no run.  Pushed `push` samples at a time. */
static void test_vad_speech_end(fixture *fx, const wkv_vad_model *vad, size_t push)
{
    const wav_data *w = &fx->clip[0];
    const size_t lead = 3 * WKV_SAMPLE_RATE, trail = 5 * WKV_SAMPLE_RATE;
    size_t n = lead + w->n + trail;
    float *pcm = calloc(n, sizeof *pcm);
    memcpy(pcm + lead, w->samples, w->n * sizeof *pcm);
    wkv_vad_params vp;
    wkv_vad_segment *segs = NULL;
    int ns = whole_segments(vad, pcm, n, &vp, &segs);
    CHECK(ns > 0, "no speech found in jfk");
    rec r;
    wkv_stream *st = ns > 0 ? open_vad_stream(fx, vad, &r) : NULL;
    if (st) {
        push = push < n ? push : n;
        feed(st, pcm, n, push);
        int before_finish = r.n_runs;
        finish(st);
        int64_t first = segs[0].start * WKV_SAMPLE_RATE / 100;
        int64_t last = segs[ns - 1].end * WKV_SAMPLE_RATE / 100;
        int64_t pad = (int64_t)vp.speech_pad_ms * WKV_SAMPLE_RATE / 1000;
        /* silence is dropped at the speech start, all but the padding */
        CHECK(r.n_runs > 0 && r.runs[0].base >= first - pad - WKV_VAD_CHUNK,
              "the first run starts at %lld, the speech at %lld",
              (long long)(r.n_runs ? r.runs[0].base : -1), (long long)first);
        CHECK(before_finish == r.n_runs, "finish ran %d times on silence",
              r.n_runs - before_finish);
        const run_rec *c = r.n_runs ? &r.runs[r.n_runs - 1] : NULL;
        int64_t end = c ? c->base + c->n : -1;
        CHECK(c && c->at_end && llabs(end - last) <= WKV_VAD_CHUNK + WKV_SAMPLE_RATE / 100,
              "the last commit ends at %lld, the speech at %lld", (long long)end,
              (long long)last);
        double slack = (vp.min_silence_duration_ms + 2.0 * 32) / 1000 +
                       (double)push / WKV_SAMPLE_RATE;
        for (int i = 0; c && i < r.n_finals; i++)
            CHECK(r.finals[i].committed_at <= (double)last / WKV_SAMPLE_RATE + slack,
                  "final %d committed at %.3f s, the speech ended at %.3f s", i,
                  r.finals[i].committed_at, (double)last / WKV_SAMPLE_RATE);
        CHECK(r.n_finals > 0, "no text for jfk with VAD");
        wkv_stream_free(st);
        rec_free(&r);
    }
    free(segs);
    free(pcm);
}

typedef struct {
    int n, speech[64];
    int64_t index[64];
} vad_events;

static void on_vad(int speech, int64_t index, void *user)
{
    vad_events *e = user;
    if (e->n < 64) {
        e->speech[e->n] = speech;
        e->index[e->n] = index;
    }
    e->n++;
}

/* Whether stream index i lies inside [a, b) by more than `slack` either side. */
static int inside(int64_t i, int64_t a, int64_t b, int64_t slack)
{
    return i > a + slack && i < b - slack;
}

/* A speech end whose audio the run before it decoded (up to where the speech went
 * quiet) commits that run's hypothesis without decoding again: such a commit is an
 * at_end run on the same samples with the same pieces, and the context decoded one
 * window fewer than the runs reported for each.  Returns how many there were. */
static int check_replays(const rec *r, const vad_events *ev, int64_t windows, int64_t pad)
{
    int replays = 0;
    for (int i = 1; i < r->n_runs; i++) {
        const run_rec *a = &r->runs[i - 1], *b = &r->runs[i];
        if (!b->at_end || a->at_end || a->n_commit > 0 || a->base != b->base || a->n != b->n)
            continue;
        replays++;
        int same = a->n_pieces == b->n_pieces && b->n_commit == b->n_pieces;
        for (int k = 0; same && k < a->n_pieces; k++)
            same = !strcmp(a->pieces[k].text, b->pieces[k].text);
        CHECK(same, "run %d commits other pieces than run %d decoded", i, i - 1);
        /* the speech end that caused it: the first end event after the run's audio */
        int covered = 0;
        for (int k = 0; k < ev->n && k < 64; k++)
            if (!ev->speech[k] && ev->index[k] > a->base) {
                covered = a->base + a->n >= ev->index[k] - pad;
                break;
            }
        CHECK(covered, "run %d committed run %d's hypothesis, which ends before the speech",
              i, i - 1);
    }
    CHECK(windows == r->n_runs - replays, "%lld windows decoded for %d runs, %d of them "
          "commits without decoding", (long long)windows, r->n_runs, replays);
    return replays;
}

/* 3 s of zeros, the clip, `pause` of zeros, the clip, 3 s of zeros (n samples). */
static float *pauses_input(const wav_data *w, size_t lead, size_t pause, size_t *n)
{
    *n = lead + 2 * w->n + pause + lead;
    float *pcm = calloc(*n, sizeof *pcm);
    if (pcm) {
        memcpy(pcm + lead, w->samples, w->n * sizeof *pcm);
        memcpy(pcm + lead + w->n + pause, w->samples, w->n * sizeof *pcm);
    }
    return pcm;
}

/* on_vad on silence, jfk, 6 s of silence, jfk, silence: starts and ends alternate, the
 * first start is the whole input's first segment's (wkv_vad_segments), the last end
 * no earlier than its last one's (the live gate also reports bursts too short for a
 * segment), no event falls in the zero stretches, and the pause is an end then a
 * start.  Then check_replays. */
static void test_vad_events(fixture *fx, const wkv_vad_model *vad)
{
    const wav_data *w = &fx->clip[0];
    const size_t lead = 3 * WKV_SAMPLE_RATE, pause = 6 * WKV_SAMPLE_RATE;
    size_t n;
    float *pcm = pauses_input(w, lead, pause, &n);
    wkv_vad_params vp;
    wkv_vad_segment *segs = NULL;
    int ns = whole_segments(vad, pcm, n, &vp, &segs);
    CHECK(ns > 1, "speech segments: %d", ns);
    rec r;
    vad_events ev = {0};
    memset(&r, 0, sizeof r);
    wkv_stream_options so;
    recording_options(&so, 1000, 8000, &r);
    so.vad_model = vad;
    so.on_vad = on_vad;
    so.vad_user = &ev;
    wkv_stream *st = ns > 1 ? wkv_stream_new(fx->ctx, &fx->opts, &so, on_segment, &r, NULL)
                            : NULL;
    if (st) {
        int64_t windows0 = wkv_context_stats(fx->ctx)->windows;
        feed(st, pcm, n, 4000);
        finish(st);
        int64_t windows = wkv_context_stats(fx->ctx)->windows - windows0;
        int replays = check_replays(&r, &ev, windows, (int64_t)vp.speech_pad_ms * 16);
        CHECK(replays > 0, "no speech end committed without decoding: the check is void");
        int64_t chunk = WKV_VAD_CHUNK + WKV_SAMPLE_RATE / 100;
        int64_t slack = chunk + (vp.min_silence_duration_ms + vp.speech_pad_ms) *
                                    (int64_t)WKV_SAMPLE_RATE / 1000;
        CHECK(ev.n >= 4 && ev.n <= 64 && ev.n % 2 == 0, "%d VAD events", ev.n);
        int alternate = 1, in_zeros = 0, pause_end = 0, pause_start = 0;
        int64_t j = (int64_t)w->n, a = (int64_t)lead, p = (int64_t)pause;
        int64_t mid = a + j + p / 2;
        for (int i = 0; i < ev.n && i < 64; i++) {
            alternate &= ev.speech[i] == !(i % 2);
            in_zeros += inside(ev.index[i], -slack, a, slack) ||
                        inside(ev.index[i], a + j, a + j + p, slack) ||
                        inside(ev.index[i], a + 2 * j + p, (int64_t)n + slack, slack);
            if (i + 1 < ev.n && !ev.speech[i] && ev.index[i] < mid && ev.index[i + 1] > mid)
                pause_end = pause_start = 1;
        }
        CHECK(alternate, "VAD events do not alternate start, end");
        CHECK(in_zeros == 0, "%d VAD events in the zero stretches", in_zeros);
        CHECK(pause_end && pause_start, "no end then start around the pause");
        int64_t first = segs[0].start * WKV_SAMPLE_RATE / 100;
        int64_t last = segs[ns - 1].end * WKV_SAMPLE_RATE / 100;
        CHECK(ev.n > 0 && llabs(ev.index[0] - first) <= chunk, "first start %lld, want %lld",
              (long long)(ev.n ? ev.index[0] : -1), (long long)first);
        int k = ev.n < 64 ? ev.n - 1 : 63;
        CHECK(ev.n > 0 && ev.index[k] >= last - chunk, "last end %lld, want %lld or later",
              (long long)(ev.n ? ev.index[k] : -1), (long long)last);
        printf("VAD events: %d (%d segments on the whole input); %d runs, %d of them "
               "commits without decoding\n", ev.n, ns, r.n_runs, replays);
        wkv_stream_free(st);
    }
    rec_free(&r);
    free(segs);
    free(pcm);
}

/* Word mode with VAD on silence, jfk, 6 s of silence, jfk, silence: every speech end
 * (an at_end run) commits all the words its run holds (none left behind when the
 * audio is dropped), words reach the finals, and a speech end the last run already
 * covers commits that run's words without decoding again (check_replays). */
static void test_vad_words(fixture *fx, const wkv_vad_model *vad)
{
    const wav_data *w = &fx->clip[0];
    const size_t lead = 3 * WKV_SAMPLE_RATE, pause = 6 * WKV_SAMPLE_RATE;
    size_t n;
    float *pcm = pauses_input(w, lead, pause, &n);
    rec r;
    wkv_options o = fx->opts;
    o.word_timestamps = 1;
    memset(&r, 0, sizeof r);
    wkv_stream_options so;
    recording_options(&so, 1000, 8000, &r);
    vad_events ev = {0};
    so.vad_model = vad;
    so.on_vad = on_vad;
    so.vad_user = &ev;
    char *err = NULL;
    wkv_stream *st = wkv_stream_new(fx->ctx, &o, &so, on_segment, &r, &err);
    CHECK(st != NULL, "wkv_stream_new, words and VAD: %s", err ? err : "?");
    free(err);
    if (st) {
        int64_t windows0 = wkv_context_stats(fx->ctx)->windows;
        feed(st, pcm, n, 4000);
        finish(st);
        int64_t windows = wkv_context_stats(fx->ctx)->windows - windows0;
        int replays = check_replays(&r, &ev, windows, (int64_t)so.vad_params.speech_pad_ms * 16);
        CHECK(replays > 0, "words and VAD: no speech end committed without decoding");
        int ends = 0, words = 0;
        for (int k = 0; k < r.n_runs; k++) {
            const run_rec *run = &r.runs[k];
            if (!run->at_end)
                continue;
            ends++;
            CHECK(run->n_words_committed == run->n_words,
                  "words and VAD: speech end run %d committed %d of its %d words", k,
                  run->n_words_committed, run->n_words);
        }
        for (int i = 0; i < r.n_finals; i++)
            words += r.finals[i].n_words;
        CHECK(ends >= 2, "words and VAD: %d speech ends committed, want one per jfk", ends);
        CHECK(words > 0, "words and VAD: no word committed");
        wkv_stream_free(st);
    }
    rec_free(&r);
    free(pcm);
}

static void test_vad(fixture *fx)
{
    char *err = NULL;
    wkv_vad_model *vad =
        wkv_vad_model_load(tu_shared_path("models/for-tests-silero-v6.2.0-ggml.bin"), &err);
    CHECK(vad != NULL, "VAD model: %s", err ? err : "?");
    free(err);
    if (!vad)
        return;
    test_vad_quiet(fx, vad);
    test_vad_speech_end(fx, vad, 4000);
    test_vad_speech_end(fx, vad, SIZE_MAX); /* all at once: silence within one push */
    test_vad_events(fx, vad);
    test_vad_words(fx, vad);
    wkv_vad_model_free(vad);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_stream MODEL\n");
        return 2;
    }
    tu_require_shared("recordings for the live stream");
    fixture fx;
    memset(&fx, 0, sizeof fx);
    static const char *const clips[3] = {"speech/jfk/jfk.wav", "speech/ldc93s1/LDC93S1.wav",
                                         "speech/gb0/gb0.wav"};
    for (int c = 0; c < 3; c++) {
        char err[256];
        fx.clip_name[c] = strrchr(clips[c], '/') + 1;
        if (wav_read(tu_shared_path(clips[c]), &fx.clip[c], err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", clips[c], err);
            return 1;
        }
    }
    /* gb0's first 40 s are plenty for the oracle */
    if (fx.clip[2].n > 40 * WKV_SAMPLE_RATE)
        fx.clip[2].n = 40 * WKV_SAMPLE_RATE;
    char *err = NULL;
    wkv_model *model = wkv_model_load(argv[1], &err);
    /* one thread: the stream's rules are what this tests, not the pool (test threads);
     * CI runs two tests at once on 2 cores, where a second thread mostly spins: 158 s
     * against 223 s, the same output, with CI running beside (AMD EPYC) */
    fx.ctx = model ? wkv_context_new(model, 1, &err) : NULL;
    if (!fx.ctx) {
        fprintf(stderr, "%s\n", err ? err : "cannot load the model");
        return 1;
    }
    wkv_options_default(&fx.opts);
    /* the generated model never says end-of-text: 64 tokens a run keep the test quick */
    fx.opts.sample_len = 64;
    test_clips(&fx, wkv_model_specials(model)->eot);
    test_clock(&fx);
    test_cap(&fx);
    test_finish_mid_stream(&fx);
    test_reset(&fx);
    test_odd_input(&fx);
    test_word_agreement();
    fx.opts.word_timestamps = 1;
    test_clips_words(&fx);
    test_cap(&fx);
    test_finish_mid_stream(&fx);
    test_odd_input(&fx);
    fx.opts.word_timestamps = 0;
    test_vad(&fx);
    test_language(tu_shared_path("testvectors/micro-multi/model.bin"), &fx.clip[0]);
    for (int c = 0; c < 3; c++)
        wav_free(&fx.clip[c]);
    wkv_context_free(fx.ctx);
    wkv_model_free(model);
    return tu_finish("stream");
}
