/* The live stream (whisperkv.h "live stream"; after ufal/whisper_streaming): re-runs
 * over the audio since the last commit, LocalAgreement-2 between consecutive runs,
 * forced commits at the latency bound, trimming at the last committed segment. */
#include "stream/stream_priv.h"
#include "base/ivec.h"
#include "longform/language.h"
#include "model/vocab.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static void kept_forget(wkv_stream *st);
static int finish_runs(wkv_stream *st, double now, char **error);

static double monotonic_ms(void *user)
{
    (void)user;
    return wkv__now_ms();
}

void wkv_stream_options_default(wkv_stream_options *o)
{
    memset(o, 0, sizeof *o);
    o->step_ms = 2000;
    o->latency_ms = 8000;
    o->frame_threshold_ms = 500;
    o->commit_policy = WKV_COMMIT_ALIGNATT; /* measured: docs/trained-model.md */
    wkv_vad_params_default(&o->vad_params);
}

static char *copy_or_null(const char *s, int *failed)
{
    char *c = s ? wkv__strdup(s) : NULL;
    *failed |= s && !c;
    return c;
}

/* Word mode: the alignment heads and punctuation the long form would use.  0 or -1. */
static int words_begin(wkv_stream *st, const wkv_options *opts, char **error)
{
    int failed = 0;
    st->words.prepend = copy_or_null(opts->prepend_punctuations, &failed);
    st->words.append = copy_or_null(opts->append_punctuations, &failed);
    st->words.content_frames = -1;
    if (failed) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    return wkv__heads_resolve(st->m, opts->alignment_heads, &st->words.pairs,
                             &st->words.n_pairs, NULL, error);
}

wkv_stream *wkv_stream_new(wkv_context *ctx, const wkv_options *opts,
                           const wkv_stream_options *sopts, wkv_stream_cb cb, void *user,
                           char **error)
{
    wkv_stream *st = wkv__calloc(1, sizeof *st);
    if (!st) {
        wkv__set_error(error, "out of memory");
        return NULL;
    }
    st->ctx = ctx;
    st->m = ctx->model;
    st->opts = *opts;
    st->opts.initial_prompt = NULL; /* its tokens are kept */
    if (sopts)
        st->so = *sopts;
    else
        wkv_stream_options_default(&st->so);
    if (st->so.audio_ctx != 0)
        st->opts.audio_ctx = st->so.audio_ctx;
    if (!st->so.clock_ms)
        st->so.clock_ms = monotonic_ms;
    st->cb = cb;
    st->user = user;
    st->detect = wkv__wants_detection(st->m, opts->language);
    st->win = wkv__malloc((size_t)st->m->hp.n_mels * WKV_N_FRAMES * sizeof *st->win);
    st->n_seed = wkv__initial_prompt_tokens(st->m, opts->initial_prompt, &st->seed, error);
    if (st->n_seed < 0 || !st->win ||
        wkv__own_language(&st->language, &st->opts,
                         opts->language ? opts->language : (st->detect ? "auto" : "en")) ||
        wkv__ivec_push(&st->committed, st->seed, st->n_seed) != 0) {
        if (st->n_seed >= 0)
            wkv__set_error(error, "out of memory");
        wkv_stream_free(st);
        return NULL;
    }
    if (wkv_model_is_multilingual(st->m) && !st->detect &&
        wkv_lang_token(st->m, st->language) < 0) {
        wkv__set_error(error, "unknown language '%s'", st->language);
        wkv_stream_free(st);
        return NULL;
    }
    if (st->so.step_ms <= 0 || st->so.latency_ms < 0) {
        wkv__set_error(error, "bad stream options: step %d ms, latency %d ms", st->so.step_ms,
                      st->so.latency_ms);
        wkv_stream_free(st);
        return NULL;
    }
    if (wkv__audio_ctx_check(st->opts.audio_ctx, error) != 0) {
        wkv_stream_free(st);
        return NULL;
    }
    if (st->so.max_held_ms != 0 && (st->so.max_held_ms < 1000 || st->so.max_held_ms > 30000)) {
        wkv__set_error(error, "bad stream options: max_held_ms %d: 0, or 1000 .. 30000",
                      st->so.max_held_ms);
        wkv_stream_free(st);
        return NULL;
    }
    if (st->so.commit_policy != WKV_COMMIT_AGREEMENT &&
        (st->so.commit_policy != WKV_COMMIT_ALIGNATT || st->so.frame_threshold_ms < 0 ||
         st->so.frame_threshold_ms > 30000)) {
        wkv__set_error(error, "bad stream options: commit policy %d, frame threshold %d ms",
                      st->so.commit_policy, st->so.frame_threshold_ms);
        wkv_stream_free(st);
        return NULL;
    }
    if (wkv__stream_wordy(st) && words_begin(st, opts, error) != 0) {
        wkv_stream_free(st);
        return NULL;
    }
    if (!wkv__stream_wordy(st) && words_begin(st, opts, NULL) != 0) {
        /* segment mode aligns only to find where a forced piece's text ends
         * (stream_run.c); without heads it trims as before, at the run's end */
        wkv__free(st->words.pairs);
        st->words.pairs = NULL;
    }
    st->opts.alignment_heads = NULL;
    st->opts.prepend_punctuations = st->opts.append_punctuations = NULL;
    st->word_floor = -INFINITY;
    if (wkv__gate_open(&st->gate, st->so.vad_model, &st->so.vad_params, error) != 0) {
        wkv_stream_free(st);
        return NULL;
    }
    return st;
}

void wkv_stream_free(wkv_stream *st)
{
    if (!st)
        return;
    wkv__free(st->language);
    wkv__samples_free(&st->audio);
    wkv__free(st->committed.v);
    wkv__free(st->prev_hyp.v);
    wkv__free(st->draft.v);
    wkv__free(st->seed);
    wkv__free(st->win);
    wkv__gate_free(&st->gate);
    kept_forget(st);
    wkv__free(st->words.pairs);
    wkv__free((char *)st->words.prepend);
    wkv__free((char *)st->words.append);
    wkv__run_forget_words(st);
    wkv__free(st->prefix.v);
    wkv__free(st->held);
    wkv__free(st);
}

/* ------------------------------------------------------------------ the gate's answers */

/* The last run, kept while it committed nothing: a speech end that its audio already
 * covers commits its hypothesis as it is, without another run on the same words. */
struct stream_kept {
    wkv__run_state rs;
    int64_t base;
};

static void kept_forget(wkv_stream *st)
{
    if (st->kept)
        wkv__run_state_clear(&st->kept->rs);
    wkv__free(st->kept);
    st->kept = NULL;
}

/* After a run (with the gate): keeps it (returns 1, the caller must not clear it) when
 * it committed nothing and left its audio where it started; forgets the one before. */
static int kept_keep(wkv_stream *st, wkv__run_state *rs, int64_t base)
{
    kept_forget(st);
    if (!st->gate.vs || wkv__run_committed(st, rs) || rs->at_end || rs->silent ||
        rs->np == 0 || st->audio.base != base || !(st->kept = wkv__malloc(sizeof *st->kept)))
        return 0;
    st->kept->rs = *rs;
    st->kept->base = base;
    return 1;
}

/* At a speech end (the silence from `quiet`): when the kept run decoded every sample
 * held up to `quiet` and nothing changed since, commits its whole hypothesis as the
 * last run of wkv_stream_finish would.  Returns 1 when it did, 0 or -1. */
static int kept_replay(wkv_stream *st, int64_t quiet, double now)
{
    struct stream_kept *l = st->kept;
    if (!l || l->base != st->audio.base || l->base + l->rs.n < quiet || st->prev_hyp.n == 0)
        return 0;
    wkv__run_state *rs = &l->rs;
    rs->at_end = rs->forced = 1;
    rs->n_commit = rs->np; /* every piece, and in word mode every word */
    rs->nw_commit = rs->rw.n;
    rs->drop_all = 1; /* its hypothesis covers the audio up to the quiet, dropped after */
    rs->busy_ms = 0; /* no compute */
    rs->pending = st->audio.n;
    wkv__free((char *)rs->seg[rs->np].text); /* its partial went out already */
    memset(&rs->seg[rs->np], 0, sizeof rs->seg[rs->np]);
    for (int i = 0; i < rs->np; i++) {
        rs->seg[i].forced = 1;
        rs->seg[i].committed_at = now;
    }
    int64_t base = st->audio.base;
    if (wkv__stream_commit_run(st, rs) != 0) {
        kept_forget(st);
        return -1;
    }
    wkv__stream_report_run(st, rs, now, base);
    kept_forget(st);
    return 1;
}

/* Commits everything held before stream index `end` as wkv_stream_finish does and
 * keeps the samples after it (set aside meanwhile: the runs take all that is held);
 * the speech went quiet at `quiet`.  0 or -1. */
static int gate_commit(wkv_stream *st, int64_t quiet, int64_t end, double now, char **error)
{
    int64_t head = end - st->audio.base < st->audio.n ? end - st->audio.base : st->audio.n;
    if (head <= 0)
        return 0;
    int64_t tail = st->audio.n - head;
    float *rest = tail ? wkv__malloc((size_t)tail * sizeof *rest) : NULL;
    if (tail && !rest) {
        wkv__set_error(error, "out of memory");
        return -1;
    }
    if (tail)
        memcpy(rest, st->audio.v + head, (size_t)tail * sizeof *rest);
    st->audio.n = head;
    int replayed = kept_replay(st, quiet, now);
    if (replayed < 0)
        wkv__set_error(error, "out of memory");
    int rc = replayed < 0 || (!replayed && finish_runs(st, now, error) < 0) ? -1 : 0;
    wkv_stream_drop(st, end); /* finish keeps nothing; after an error, neither do we */
    if (tail)
        memcpy(st->audio.v + st->audio.n, rest, (size_t)tail * sizeof *rest);
    st->audio.n += tail;
    st->last_run = st->audio.base; /* the runs ended there: what follows is unheard */
    wkv__free(rest);
    return rc;
}

/* Carries out one gate step: a speech start's drop before its event, a speech end's
 * event before its drop or commit.  0 or -1. */
static int gate_apply(wkv_stream *st, const wkv__gate_step *g, double now, char **error)
{
    if (g->event == 1 && g->drop >= 0)
        wkv_stream_drop(st, g->drop);
    if (g->event >= 0 && st->so.on_vad)
        st->so.on_vad(g->event, g->at > 0 ? g->at : 0, st->so.vad_user);
    if (g->event != 1 && g->drop >= 0)
        wkv_stream_drop(st, g->drop);
    return g->commit ? gate_commit(st, g->quiet, g->end, now, error) : 0;
}

/* Scores the n samples just appended (the last n held); 0 or -1. */
static int gate_feed(wkv_stream *st, const float *pcm, size_t n, double now, char **error)
{
    enum { PIECE = 16 * WKV_VAD_CHUNK };
    float probs[WKV_VAD_MAX_PROBS(PIECE)];
    for (size_t i = 0; i < n; i += PIECE) {
        size_t k = n - i < PIECE ? n - i : PIECE;
        size_t np = wkv__gate_score(&st->gate, pcm + i, k, probs);
        for (size_t j = 0; j < np; j++) {
            wkv__gate_step g;
            wkv__gate_chunk(&st->gate, probs[j], st->prev_hyp.n > 0, st->last_run, &g);
            if (gate_apply(st, &g, now, error) != 0)
                return -1;
        }
    }
    return 0;
}

/* Silence with nothing uncommitted: dropped unheard but for the padding a speech
 * start takes from before it, and the step counts from the speech.  1 when it did
 * (no run is due). */
static int gate_idle(wkv_stream *st)
{
    int64_t drop = wkv__gate_idle_drop(&st->gate);
    if (drop < 0 || st->prev_hyp.n > 0)
        return 0;
    wkv_stream_drop(st, drop);
    st->last_run = st->audio.base + st->audio.n;
    return 1;
}

/* One run on the audio held; `closing`: no more audio will come before it is all
 * committed.  *committed, *silent (when not NULL): whether it committed any text,
 * whether its audio was silent.  0 or -1. */
static int stream_run(wkv_stream *st, double now, int closing, int *committed, int *silent,
                      char **error)
{
    wkv__run_state rs;
    memset(&rs, 0, sizeof rs);
    int64_t base = st->audio.base;
    rs.pending = st->audio.n;
    rs.n = st->audio.n < MAX_SAMPLES ? st->audio.n : MAX_SAMPLES;
    rs.at_end = closing && rs.n == st->audio.n;
    rs.duration = (double)rs.n / WKV_SAMPLE_RATE;
    st->last_run = st->audio.base + st->audio.n;
    rs.base = base;
    int rc = wkv__run_decode(st, &rs, error);
    if (rc == 0) {
        wkv__run_split(st, &rs);
        rs.done_at = now + rs.busy_ms / 1000.0;
        const char *lang = rs.r.language >= 0 ? wkv_lang_code(st->m, rs.r.language) : "en";
        for (int i = 0; i < rs.np; i++) {
            wkv_stream_segment *s = &rs.seg[i];
            s->run_base = base;
            s->avg_logprob = rs.r.avg_logprob;
            s->no_speech_prob = rs.r.no_speech_prob;
            s->compression_ratio = rs.r.compression_ratio;
            s->temperature = rs.r.temperature;
            s->language = lang ? lang : "en";
            s->committed_at = rs.done_at;
        }
        if (rs.seg)
            rs.seg[0].run_base = base; /* for wkv__stream_commit_run when there are no pieces */
        if (wkv__stream_commit_run(st, &rs) != 0) {
            wkv__set_error(error, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0 && committed)
        *committed = rs.text_committed > 0;
    if (rc == 0 && silent)
        *silent = rs.silent;
    if (rc == 0 && rs.n >= MAX_SAMPLES && st->audio.base == base) {
        /* a full window that committed nothing must make room (never hang): the
         * oldest audio goes, the latest half window stays for the next run to hear */
        wkv_stream_drop(st, st->audio.base + st->audio.n - MAX_SAMPLES / 2);
    }
    if (rc == 0)
        wkv__stream_report_run(st, &rs, now, base);
    if (!(rc == 0 && kept_keep(st, &rs, base)))
        wkv__run_state_clear(&rs);
    return rc;
}

/* Runs until no audio is held (wkv_stream_finish).  A closing run commits all its
 * text but keeps the audio after it: a text that stops early (a word cut at the run's
 * start skipped, the decoder ending before the audio does) leaves words there, so the
 * rest runs again, while runs commit text, FINISH_RERUNS more at most; then what is
 * left goes unheard.  A run over speech (not silent) that gives no text is tried once
 * more without the prompt: a decoder can stop at once after a long prompt (the
 * trained model, docs/trained-model.md; the reference drops the prompt after a
 * failed window too), and this is the audio's last chance. */
#define FINISH_RERUNS 4
static int finish_runs(wkv_stream *st, double now, char **error)
{
    int runs = 0, again = 0, bare = 0;
    while (st->audio.n > 0) {
        int64_t before = st->audio.base + st->audio.n, from = st->audio.base;
        int committed = 0, silent = 0;
        st->no_prompt = bare == 1;
        int rc = stream_run(st, now, 1, &committed, &silent, error);
        st->no_prompt = 0;
        if (rc != 0)
            return -1;
        runs++;
        if (st->audio.n == 0)
            break;
        if (!committed && !silent && !bare) {
            bare = 1; /* the retry without the prompt */
            continue;
        }
        bare += bare == 1;
        /* a run that committed nothing but dropped a quiet start (commit_words) made
         * room: the rest runs again */
        if ((!committed && st->audio.base == from) || ++again > FINISH_RERUNS)
            wkv_stream_drop(st, before);
    }
    return runs;
}

/* ------------------------------------------------------------------ the caller's side */

int wkv_stream_push(wkv_stream *st, const float *pcm, size_t n, double now, char **error)
{
    if (n > 0) {
        if (wkv__samples_push(&st->audio, pcm, n, error) != 0)
            return -1;
        st->stats.audio_s += (double)n / WKV_SAMPLE_RATE;
    }
    int64_t runs0 = st->stats.runs;
    if (st->gate.vs && gate_feed(st, pcm, n, now, error) != 0)
        return -1;
    int64_t step = (int64_t)st->so.step_ms * WKV_SAMPLE_RATE / 1000;
    if ((st->gate.vs && gate_idle(st)) || st->audio.n == 0 ||
        st->audio.base + st->audio.n - st->last_run < step)
        return (int)(st->stats.runs - runs0);
    return stream_run(st, now, 0, NULL, NULL, error) == 0 ? (int)(st->stats.runs - runs0) : -1;
}

int wkv_stream_finish(wkv_stream *st, double now, char **error)
{
    if (st->gate.vs) {
        wkv__gate_step g;
        wkv__gate_close(&st->gate, st->audio.base + st->audio.n, st->prev_hyp.n > 0, &g);
        gate_apply(st, &g, now, error); /* no commit at the close: it never fails */
    }
    return finish_runs(st, now, error);
}

void wkv_stream_reset(wkv_stream *st)
{
    st->audio.base += st->audio.n;
    st->audio.n = 0;
    st->last_run = st->audio.base;
    st->committed.n = 0;
    wkv__ivec_push(&st->committed, st->seed, st->n_seed); /* fits: it held them before */
    st->prev_hyp.n = 0;
    st->draft.n = 0;
    wkv__run_forget_words(st);
    st->word_floor = -INFINITY;
    st->prefix.n = st->n_held = 0;
    wkv__gate_reset(&st->gate, st->audio.base);
}

void wkv_stream_drop(wkv_stream *st, int64_t index)
{
    if (index > st->audio.base)
        wkv__aa_flush(st); /* alignatt's prefix no longer has its audio */
    wkv__samples_drop(&st->audio, index);
}
