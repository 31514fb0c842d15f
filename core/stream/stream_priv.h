/* The live stream's state (stream.c), shared with its voice-activity gate
 * (stream_vad.c).  Not installed. */
#ifndef WKV_STREAM_PRIV_H
#define WKV_STREAM_PRIV_H

#include "net/context.h"
#include "longform/segments.h"
#include "stream/stream_words.h"

#define DELAY_BINS 6000 /* commit delays in 10-ms bins up to 60 s */

/* Where the speech is, from the VAD probabilities seen so far (stream indices). */
typedef struct {
    wkv_vad_stream *vs;
    int64_t next;        /* first sample of the next chunk the VAD will score */
    int speaking;
    int64_t start;       /* where the speech began */
    int64_t quiet;       /* where the probabilities fell below threshold - 0.15; -1: not */
    struct vad_last *last; /* the last run, while it committed nothing (vad_keep) */
} vad_gate;

struct wkv_stream {
    wkv_context *ctx;
    const wkv_model *m;
    wkv_options opts;
    wkv_stream_options so;
    wkv_stream_cb cb;
    void *user;
    char *language;      /* owned: opts.language */
    int detect;          /* "auto" on a multilingual model, not detected yet */
    float *buf;          /* samples [base, base + n) */
    int64_t n, cap, base;
    int64_t last_run;    /* stream length at the last run */
    wkv_ivec committed;  /* the prompt: tokens committed so far */
    wkv_ivec prev_hyp;   /* text tokens of the previous run not committed */
    int *seed;           /* the initial prompt's tokens */
    int n_seed;
    float *win;          /* n_mels x 3000 */
    wkv_stream_stats stats;
    double delay_sum, delay_min;
    int64_t delay_hist[DELAY_BINS + 1];
    vad_gate vad;        /* voice activity gating, when so.vad_model is set */
    /* word mode (opts.word_timestamps; stream_words.c) */
    wkv_words_state words; /* alignment heads, punctuation (owned copies) */
    char **prev_words;   /* texts of the previous run's uncommitted words */
    int n_prev_words;
    double word_floor;   /* stream seconds where the last committed word ended */
};

/* One run's pieces with their texts, and what the run decided. */
typedef struct {
    wkv_window_result r;
    wkv_piece *pc;
    wkv_stream_segment *seg; /* one per piece */
    int np, n_commit, agreed, forced, silent, at_end;
    int64_t base, n, pending;
    double duration, busy_ms, done_at;
    /* word mode: the words, how many agreed and were committed, the finals */
    wkv_run_words rw;
    int nw_agreed, nw_commit, n_wfin;
    wkv_stream_segment *wfin;
} wkv_run_state;

/* Whether the run commits anything: words in word mode, else pieces. */
static inline int wkv_run_committed(const wkv_stream *st, const wkv_run_state *rs)
{
    return (st->opts.word_timestamps ? rs->nw_commit : rs->n_commit) > 0;
}

/* stream.c, for the gate: commits a decided run and reports it (0 or -1); frees a
 * run's results; runs until no audio is held, the last run committing all (the number
 * of runs, or -1). */
int wkv_stream_commit_run(wkv_stream *st, wkv_run_state *rs);
void wkv_stream_report_run(wkv_stream *st, wkv_run_state *rs, double now, int64_t base);
void wkv_run_state_clear(wkv_run_state *rs);
int wkv_stream_finish_runs(wkv_stream *st, double now, char **error);

/* stream_vad.c: the gate's side of wkv_stream_new (checks the parameters, loads the
 * VAD stream when so.vad_model is set; 0 or -1), _free, _reset; scoring pushed audio
 * (speech ends commit at once; 0 or -1); dropping silence with nothing uncommitted
 * (1 when it did: no run is due); keeping a run that committed nothing for a speech
 * end to commit without another run (1 when kept: the caller must not clear it); and
 * the gate's part of wkv_stream_finish. */
int wkv_stream_vad_open(wkv_stream *st, char **error);
void wkv_stream_vad_free(wkv_stream *st);
void wkv_stream_vad_reset(wkv_stream *st);
int wkv_stream_vad_feed(wkv_stream *st, const float *pcm, size_t n, double now, char **error);
int wkv_stream_vad_idle(wkv_stream *st);
int wkv_stream_vad_keep(wkv_stream *st, wkv_run_state *rs, int64_t base);
void wkv_stream_vad_close(wkv_stream *st);

/* Counts a final's commit delay (seconds) in the stream's statistics (stream_info.c);
 * stats.finals already counts it. */
void wkv_stream_count_delay(wkv_stream *st, double delay);

#endif
