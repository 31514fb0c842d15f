/* The live stream's state, shared by the files of the stream module: stream.c (the
 * API, the loop of runs, the gate's answers carried out), stream_run.c (one run),
 * stream_info.c (what the caller is told).  The
 * voice-activity gate (stream_gate.h) is an object of its own.  Not installed. */
#ifndef WKV_STREAM_PRIV_H
#define WKV_STREAM_PRIV_H

#include "net/context.h"
#include "base/ivec.h"
#include "decode/pieces.h"
#include "stream/stream_gate.h"
#include "base/samples.h"
#include "stream/stream_words.h"

#define DELAY_BINS 6000           /* commit delays in 10-ms bins up to 60 s */
#define MAX_SAMPLES WKV_N_SAMPLES /* one window: what a run can decode */
#define PROMPT_KEEP 1000          /* committed tokens kept (the decoder uses 223) */

struct wkv_stream {
    wkv_context *ctx;
    const wkv_model *m;
    wkv_options opts;
    wkv_stream_options so;
    wkv_stream_cb cb;
    void *user;
    char *language;      /* owned: opts.language */
    int detect;          /* "auto" on a multilingual model, not detected yet */
    /* the audio held: samples [audio.base, audio.base + audio.n) of the stream.  Why a
     * copy of what the element also queues: a run decodes up to 30 s of it and runs
     * decide over the same samples while their text waits for agreement, so the stream
     * needs them contiguous and its own; the element's queue is the hand-off between its
     * threads, and its live backlog bound counts what is queued (gstwhisperlive.c) */
    wkv__samples audio;
    int64_t last_run;    /* stream length at the last run */
    wkv__ivec committed;  /* the prompt: tokens committed so far */
    wkv__ivec prev_hyp;   /* text tokens of the previous run not committed */
    wkv__ivec draft;      /* the previous run's tokens (timestamps too): the next run's
                           * draft while the audio held starts where it did, draft_base */
    int64_t draft_base;
    int *seed;           /* the initial prompt's tokens */
    int n_seed;
    float *win;          /* n_mels x 3000 */
    wkv_stream_stats stats;
    double delay_sum, delay_min;
    int64_t delay_hist[DELAY_BINS + 1];
    wkv__gate gate;       /* voice activity gating, when so.vad_model is set (gate.vs) */
    struct stream_kept *kept; /* with the gate: the last run, while it committed nothing */
    /* word mode (opts.word_timestamps; stream_words.c) */
    wkv__words_state words; /* alignment heads, punctuation (owned copies) */
    char **prev_words;   /* texts of the previous run's uncommitted words */
    int n_prev_words;
    double word_floor;   /* stream seconds where the last committed word ended */
    int no_prompt;       /* the next run decodes without the committed text (finish_runs) */
    /* alignatt (stream_alignatt.c): the committed tokens whose audio is still held, the
     * next run's forced prefix (committed holds the text before it), and their words */
    wkv__ivec prefix;
    struct wkv__held_word *held;
    int n_held, cap_held;
};

/* A committed word whose audio alignatt still holds: stream seconds, its tokens. */
struct wkv__held_word {
    double start, end;
    int n_tokens;
};

/* One run's pieces with their texts, and what the run decided. */
typedef struct {
    wkv_window_result r;
    wkv__piece *pc;
    wkv_stream_segment *seg; /* one per piece */
    int np, n_commit, agreed, forced, silent, at_end;
    int drop_all;        /* the commit drops all the run's audio (a kept run at a speech end) */
    int text_committed;  /* text tokens (word mode: words) the commit took */
    int64_t base, n, pending;
    double duration, busy_ms, done_at;
    /* word mode: the words, how many agreed and were committed, the finals */
    wkv__run_words rw;
    int nw_agreed, nw_commit, n_wfin;
    wkv_stream_segment *wfin;
    int nw_align; /* alignatt: the words before the stop (0 after a rewind) */
} wkv__run_state;

/* Whether runs are decided over words: word mode, and always with alignatt (which
 * commits and trims at words; without word_timestamps its finals carry no words). */
static inline int wkv__stream_wordy(const wkv_stream *st)
{
    return st->opts.word_timestamps || st->so.commit_policy == WKV_COMMIT_ALIGNATT;
}

/* Whether the run commits anything: words in word mode, else pieces. */
static inline int wkv__run_committed(const wkv_stream *st, const wkv__run_state *rs)
{
    return (wkv__stream_wordy(st) ? rs->nw_commit : rs->n_commit) > 0;
}

/* stream_run.c: one run's steps.  _decode: the log-mel of the first rs->n samples
 * held, the language (once), the decoding, the pieces and (word mode) their words;
 * fills rs->r, rs->seg and the run's compute time (0 or -1).  _split: what to commit
 * (agreement with the previous run, forcing).  _commit: commits the decided pieces or
 * words, keeps the rest as the next run's comparison and one partial, trims the audio
 * held (0 or -1).  _report: the hook, statistics and callback.  _clear frees a run's
 * results; _forget_words the previous run's uncommitted words. */
int wkv__run_decode(wkv_stream *st, wkv__run_state *rs, char **error);
void wkv__run_split(wkv_stream *st, wkv__run_state *rs);
int wkv__stream_commit_run(wkv_stream *st, wkv__run_state *rs);
void wkv__stream_report_run(wkv_stream *st, wkv__run_state *rs, double now, int64_t base);
void wkv__run_state_clear(wkv__run_state *rs);
void wkv__run_forget_words(wkv_stream *st);

/* stream_alignatt.c: alignatt's commit: words [0, n) of rw join the prefix (0 or -1);
 * where to trim the audio held (a stream index; audio.base when it is kept), the text
 * of the words dropped moving to the prompt; flush: all of the prefix to the prompt
 * (its audio is gone).  step_s: the audio the next run adds. */
int wkv__aa_commit(wkv_stream *st, const wkv__run_words *rw, int n);
int64_t wkv__aa_cut(wkv_stream *st, double step_s);
void wkv__aa_flush(wkv_stream *st);

/* Counts a final's commit delay (seconds) in the stream's statistics (stream_info.c);
 * stats.finals already counts it. */
void wkv__stream_count_delay(wkv_stream *st, double delay);

#endif
