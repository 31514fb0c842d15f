/* The live stream's voice-activity gate (wkv_stream_options.vad_model): Silero
 * probabilities on the audio as it is pushed, silence dropped unheard, a speech end
 * committing at once (with the last run's hypothesis when it already covers it). */
#include "stream/stream_priv.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static int64_t ms_samples(int ms)
{
    return (int64_t)ms * WKV_SAMPLE_RATE / 1000;
}

/* The last run, kept while it committed nothing: a speech end that its audio already
 * covers commits its hypothesis as it is, without another run on the same words. */
struct vad_last {
    wkv_run_state rs;
    int64_t base;
};

static void vad_forget(wkv_stream *st)
{
    if (st->vad.last)
        wkv_run_state_clear(&st->vad.last->rs);
    free(st->vad.last);
    st->vad.last = NULL;
}

/* After a run (with VAD): keeps it (returns 1, the caller must not clear it) when it
 * committed nothing and left its audio where it started; forgets the one before. */
int wkv_stream_vad_keep(wkv_stream *st, wkv_run_state *rs, int64_t base)
{
    vad_forget(st);
    if (!st->vad.vs || wkv_run_committed(st, rs) || rs->at_end ||
        rs->silent || rs->np == 0 || st->base != base ||
        !(st->vad.last = malloc(sizeof *st->vad.last)))
        return 0;
    st->vad.last->rs = *rs;
    st->vad.last->base = base;
    return 1;
}

/* At a speech end (the silence from `quiet`): when the kept run decoded every sample
 * held up to `quiet` and nothing changed since, commits its whole hypothesis as the
 * last run of wkv_stream_finish would and drops the audio held (the first `head`
 * samples are up to the speech end).  Returns 1 when it did. */
static int vad_replay(wkv_stream *st, int64_t quiet, double now)
{
    struct vad_last *l = st->vad.last;
    if (!l || l->base != st->base || l->base + l->rs.n < quiet || st->prev_hyp.n == 0)
        return 0;
    wkv_run_state *rs = &l->rs;
    rs->at_end = rs->forced = 1;
    rs->n_commit = rs->np; /* every piece, and in word mode every word */
    rs->nw_commit = rs->rw.n;
    rs->busy_ms = 0; /* no compute */
    rs->pending = st->n;
    free((char *)rs->seg[rs->np].text); /* its partial went out already */
    memset(&rs->seg[rs->np], 0, sizeof rs->seg[rs->np]);
    for (int i = 0; i < rs->np; i++) {
        rs->seg[i].forced = 1;
        rs->seg[i].committed_at = now;
    }
    int64_t base = st->base;
    if (wkv_stream_commit_run(st, rs) != 0) {
        vad_forget(st);
        return -1;
    }
    wkv_stream_report_run(st, rs, now, base);
    vad_forget(st);
    return 1;
}

/* Commits everything held before stream index `end` as wkv_stream_finish does and
 * keeps the samples after it; the speech went quiet at `quiet`.  0 or -1. */
static int vad_commit(wkv_stream *st, int64_t quiet, int64_t end, double now, char **error)
{
    int64_t head = end - st->base < st->n ? end - st->base : st->n;
    if (head <= 0)
        return 0;
    int64_t tail = st->n - head;
    float *rest = tail ? malloc((size_t)tail * sizeof *rest) : NULL;
    if (tail && !rest) {
        wkv_set_error(error, "out of memory");
        return -1;
    }
    if (tail)
        memcpy(rest, st->buf + head, (size_t)tail * sizeof *rest);
    st->n = head;
    int replayed = vad_replay(st, quiet, now);
    if (replayed < 0)
        wkv_set_error(error, "out of memory");
    int rc = replayed < 0 || (!replayed && wkv_stream_finish_runs(st, now, error) < 0) ? -1 : 0;
    wkv_stream_drop(st, end); /* finish keeps nothing; after an error, neither do we */
    if (tail)
        memcpy(st->buf + st->n, rest, (size_t)tail * sizeof *rest);
    st->n += tail;
    st->last_run = st->base; /* the runs ended there: what follows is unheard */
    free(rest);
    return rc;
}

/* Tells the caller that speech starts or ends at stream index `index`. */
static void vad_event(wkv_stream *st, int speech, int64_t index)
{
    if (st->so.on_vad)
        st->so.on_vad(speech, index > 0 ? index : 0, st->so.vad_user);
}

/* One chunk's probability on the hysteresis whisper.cpp's segmenter uses (speech at
 * p >= threshold, silence below threshold - 0.15 for min_silence): a speech end
 * commits at once, padded like a segment end; a short burst no run saw is dropped. */
static int vad_chunk(wkv_stream *st, float p, double now, char **error)
{
    vad_gate *g = &st->vad;
    const wkv_vad_params *vp = &st->so.vad_params;
    int64_t c = g->next;
    g->next += WKV_VAD_CHUNK;
    if (p >= vp->threshold) {
        g->quiet = -1;
        if (!g->speaking) {
            /* the silence before it (within one push) is not decoded either */
            if (st->prev_hyp.n == 0)
                wkv_stream_drop(st, c - ms_samples(vp->speech_pad_ms));
            g->speaking = 1;
            g->start = c;
            vad_event(st, 1, c - ms_samples(vp->speech_pad_ms));
        }
        return 0;
    }
    if (!g->speaking || p >= vp->threshold - 0.15f)
        return 0;
    if (g->quiet < 0)
        g->quiet = c;
    if (c - g->quiet < ms_samples(vp->min_silence_duration_ms))
        return 0;
    g->speaking = 0;
    int64_t quiet = g->quiet, end = quiet + ms_samples(vp->speech_pad_ms);
    g->quiet = -1;
    vad_event(st, 0, end);
    int unheard = st->last_run <= g->start && st->prev_hyp.n == 0;
    if (unheard && end - g->start < ms_samples(vp->min_speech_duration_ms)) {
        wkv_stream_drop(st, end);
        return 0;
    }
    return vad_commit(st, quiet, end, now, error);
}

/* Scores the n samples just appended (the last n held); 0 or -1. */
int wkv_stream_vad_feed(wkv_stream *st, const float *pcm, size_t n, double now, char **error)
{
    enum { PIECE = 16 * WKV_VAD_CHUNK };
    float probs[WKV_VAD_MAX_PROBS(PIECE)];
    for (size_t i = 0; i < n; i += PIECE) {
        size_t k = n - i < PIECE ? n - i : PIECE;
        size_t np = wkv_vad_push(st->vad.vs, pcm + i, k, probs);
        for (size_t j = 0; j < np; j++)
            if (vad_chunk(st, probs[j], now, error) != 0)
                return -1;
    }
    return 0;
}

/* Silence with nothing uncommitted: dropped unheard but for the padding a speech
 * start takes from before it, and the step counts from the speech. */
int wkv_stream_vad_idle(wkv_stream *st)
{
    if (st->vad.speaking || st->prev_hyp.n > 0)
        return 0;
    wkv_stream_drop(st, st->vad.next - ms_samples(st->so.vad_params.speech_pad_ms));
    st->last_run = st->base + st->n;
    return 1;
}

int wkv_stream_vad_open(wkv_stream *st, char **error)
{
    st->vad.quiet = -1;
    if (!st->so.vad_model)
        return 0;
    const char *why = wkv_vad_params_check(&st->so.vad_params);
    if (why)
        wkv_set_error(error, "%s", why);
    if (why || !(st->vad.vs = wkv_vad_stream_new(st->so.vad_model, error)))
        return -1;
    return 0;
}

void wkv_stream_vad_free(wkv_stream *st)
{
    wkv_vad_stream_free(st->vad.vs);
    vad_forget(st);
}

void wkv_stream_vad_reset(wkv_stream *st)
{
    if (st->vad.vs)
        wkv_vad_stream_reset(st->vad.vs);
    st->vad.next = st->base;
    st->vad.speaking = 0;
    st->vad.quiet = -1;
}

void wkv_stream_vad_close(wkv_stream *st)
{
    if (st->vad.next < st->base + st->n) {
        /* the partial chunk's score is not needed: what follows is a new grid */
        float p;
        wkv_vad_finish(st->vad.vs, &p);
        st->vad.next = st->base + st->n;
    }
    if (!st->vad.speaking && st->prev_hyp.n == 0)
        wkv_stream_drop(st, st->base + st->n); /* silence: nothing to run on */
    if (st->vad.speaking) {
        vad_event(st, 0, st->base + st->n);
        /* a burst too short for a segment (whisper.cpp's segmenter drops it at the end
         * too) with nothing uncommitted: dropped, as at a speech end (vad_chunk) */
        if (st->prev_hyp.n == 0 &&
            st->base + st->n - st->vad.start < ms_samples(st->so.vad_params.min_speech_duration_ms))
            wkv_stream_drop(st, st->base + st->n);
    }
    st->vad.speaking = 0;
    st->vad.quiet = -1;
}
