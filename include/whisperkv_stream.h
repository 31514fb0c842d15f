/* whisperkv's live streams: transcription of audio as it arrives, over a context
 * (whisperkv.h), which includes this header; include either. */
#ifndef WHISPERKV_STREAM_H
#define WHISPERKV_STREAM_H

#include "whisperkv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- live stream */

/* Live transcription (ufal/whisper_streaming's scheme: re-decode, LocalAgreement-2),
 * for audio that arrives as it is spoken.  The caller pushes 16 kHz mono PCM with
 * the current time; every `step_ms` of new audio the stream decodes again all the
 * audio it holds since the last commit (at most 30 s, window-normalized, a fresh
 * cross-KV cache, the committed text as prompt) and cuts the tokens at timestamp
 * pairs (wkv_stream_options.commit_policy: or AlignAtt, where one run decides; see
 * there).  LocalAgreement-2: the leading complete segments whose text tokens this run
 * and the previous one agree on become final; the rest is one partial.  A commit is
 * forced (the latest hypothesis's complete segments, or all of it when none is
 * complete) when the oldest waiting audio would be older than `latency_ms` at the
 * end of the next run (estimated from this run's compute time), when 30 s are
 * buffered, and at wkv_stream_finish (a segment closed within 0.1 s of the run's end,
 * where the audio was cut, counts as complete only when none other is).  The audio is
 * then dropped up to the end of the committed text and no further: a committed
 * segment's closing timestamp, or, for one unclosed or closed at the cut, its last
 * word's end by the alignment heads (the final ends there); all of it only when the
 * run was silent and forced.  wkv_stream_finish runs again on what its last run left
 * while runs commit text (a bounded number of times; once without the prompt when a
 * run over speech gives no text), then drops the rest.
 *
 * Word mode (wkv_options.word_timestamps given to wkv_stream_new): each run also
 * times its hypothesis's words with the long form's alignment pass (on the cross-KV
 * of its window; alignment_heads and the punctuation options apply), drops the words
 * that end at or before the end of the last committed word, and commits the longest
 * prefix of words whose texts equal, byte for byte, those the previous run left
 * uncommitted (LocalAgreement-2 over words, as whisper_streaming).  A forced commit
 * takes, beyond the agreed words, every word up to the last one whose start would
 * be older than `latency_ms` once the next run is done (every word at the 30-s cap
 * and at wkv_stream_finish).  The audio is dropped up to the end of the last
 * committed word (all of it only after a forced run that was silent; at the end
 * wkv_stream_finish runs again as above); the committed words' tokens join the
 * prompt.  Live word times are the run's offline words except that they never go
 * back: a word starts no earlier than the one before it ends (nor than the last
 * committed word's end) and ends within the run, and lasts at least 10 ms (words
 * squeezed at the run's end are moved back into the room before them).  Tokens that make no word (an incomplete UTF-8 character at the end, which the
 * alignment leaves out) are never committed.
 *
 * Times are seconds of stream time: sample i of the stream (counted from the first
 * sample pushed, over resets) is at i / 16000 s.  `now` is the caller's clock in the
 * same time base (0 = when the first sample was captured): a live source passes the
 * time the pushed audio's last sample arrived, or later. */

typedef struct wkv_stream wkv_stream;

/* One segment the stream reports: final (committed; never reported again) or partial
 * (the uncommitted rest of the latest run, superseded by the next report). */
typedef struct {
    const char *text;        /* the tokens' text (never blank) */
    const int *tokens;       /* timestamps included */
    int n_tokens;
    double start, end;       /* stream seconds; a partial covers all audio since the
                                last final: start = where the run's audio begins after
                                the commit, end = the end of the audio decoded */
    int64_t run_base;        /* stream index of the first sample of the run that
                                decoded it; start = run_base / 16000 + rel_start */
    double rel_start, rel_end; /* the times from run_base (multiples of 0.02 s, or the
                                  run's duration) */
    double avg_logprob, no_speech_prob, compression_ratio, temperature; /* the run's */
    const char *language;    /* code ("en" on English-only models) */
    int final;               /* committed */
    int forced;              /* final without two runs agreeing on it (latency, the
                                30-s cap or finish) */
    double committed_at;     /* `now` of the push plus the run's compute time: when the
                                text became available, in stream seconds */
    /* Word mode (wkv_options.word_timestamps): a final is a stretch of words one run
     * committed from one piece of its hypothesis, all agreed or all forced; its text
     * is their texts, its tokens theirs (no timestamps), start and end the first
     * word's start and the last word's end.  A partial holds the uncommitted words.
     * Stream seconds; valid during the callback.  NULL and 0 otherwise. */
    const wkv_word *words;
    int n_words;
} wkv_stream_segment;

typedef void (*wkv_stream_cb)(const wkv_stream_segment *seg, void *user);

/* What one run did, for tests and debugging (wkv_stream_options.on_run). */
typedef struct {
    int64_t base, n;         /* the samples decoded: [base, base + n) */
    int64_t pending;         /* samples held when it started (>= n) */
    double busy_ms;          /* its compute time, on the stream's clock */
    double now;              /* the push's `now` */
    int silent;              /* no-speech test or no audio frame: nothing to say */
    int forced, at_end;      /* a forced run; the last run of wkv_stream_finish */
    int agreed;              /* leading text tokens equal to the previous run's rest */
    const wkv_stream_segment *pieces; /* the whole hypothesis cut at timestamp pairs,
                                         blank and empty pieces included (word mode:
                                         text NULL, the words have it) */
    int n_pieces, n_commit;  /* pieces[0..n_commit) were committed */
    int64_t new_base;        /* the first sample kept after the run */
    /* word mode: the hypothesis's words (stream seconds) less those ending at or
     * before the last committed word's end; words[0..n_words_agreed) have the texts
     * the previous run left uncommitted, words[0..n_words_committed) were committed
     * (pieces[0..n_commit) are the pieces all of whose words were) */
    const wkv_word *words;
    int n_words, n_words_agreed, n_words_committed;
} wkv_stream_run;

typedef struct {
    int step_ms;             /* new audio between runs, default 2000 */
    int latency_ms;          /* the force bound, default 8000 */
    /* the clock that measures a run's compute time (ms, any origin); NULL: monotonic */
    double (*clock_ms)(void *user);
    void *clock_user;
    /* called after every run, before its segments are reported; may be NULL */
    void (*on_run)(const wkv_stream_run *run, void *user);
    void *run_user;
    /* Voice activity gating; vad_model NULL: off (the model is used, not owned).  With
     * it, runs happen only while speech is present or text is uncommitted: silence
     * costs only VAD chunks and is dropped unheard (all but speech_pad_ms before a
     * speech start).  A speech end (probabilities below threshold - 0.15 for
     * min_silence_duration_ms, plus speech_pad_ms) commits everything before it at
     * once, as wkv_stream_finish does, and drops that audio (when the last run decoded
     * the audio up to where the speech went quiet and committed nothing, its hypothesis
     * is committed as it is, without a run); a burst shorter than
     * min_speech_duration_ms that no run has seen, or that ends the stream at
     * wkv_stream_finish with nothing uncommitted, is dropped unheard.
     * max_speech_duration_s and samples_overlap are offline-only. */
    const wkv_vad_model *vad_model;
    wkv_vad_params vad_params; /* wkv_vad_params_default's by default */
    /* With VAD, called at each speech start (speech 1; index: the stream index of its
     * first chunk less speech_pad_ms, at least 0) and end (speech 0; index: where the
     * silence began plus speech_pad_ms, or the end of the audio at wkv_stream_finish),
     * before any run or commit the change causes; starts and ends alternate.  May be
     * NULL. */
    void (*on_vad)(int speech, int64_t index, void *user);
    void *vad_user;
    /* The commit policy (wkv_commit_policy), WKV_COMMIT_ALIGNATT by default (0, what a
     * zeroed struct holds, is WKV_COMMIT_AGREEMENT).
     * WKV_COMMIT_ALIGNATT (AlignAtt, Simul-Whisper / SimulStreaming): one run decides.
     * It decodes the audio held once, without timestamps, the words committed since
     * that audio begins forced after the start sequence as a decoder prefix (the text
     * committed before it is the prompt); finds each new token's most attended frame
     * (the alignment heads' cross-attention over the held audio's frames, as the word
     * timestamps compute it: standardized along the tokens, median filter 7, heads
     * averaged) and stops at the first token whose frame is within frame_threshold_ms
     * of the end of the audio held; the word holding that token is held back and every
     * word before it is committed at once, as agreed (not forced), in word mode as
     * words with their times (segment mode: the same finals, without words); when no
     * token stops the run, its last word waits until a second run ends on it.  A run
     * whose attention jumps back more than 4 s from one token to the next commits
     * nothing.  The committed words' audio stays held until the held audio and the
     * next step would pass max_held_ms (default 24 s, 4/5 of the model's window; or
     * their tokens a quarter of the text context): it is
     * then cut at the widest pause between committed words, their text moving to the
     * prompt.  Latency forcing stays as the safety net (counting only the audio after
     * the last committed word).  At wkv_stream_finish the threshold is 80 ms, the word
     * holding the stop token is committed too and the tokens after it are dropped
     * (what looks at the last 80 ms of the audio is a continuation past it); all audio
     * is consumed.  The stream times words itself in this mode (the alignment heads
     * and punctuation options of wkv_options apply). */
    int commit_policy;
    int frame_threshold_ms;  /* alignatt's threshold (ms, >= 0), default 500 */
    /* The encoder's frames per run, overriding wkv_options.audio_ctx when not 0:
     * WKV_AUDIO_CTX_AUTO sizes each run's encoder to the audio it holds (a run on up to
     * 4.4 s encodes 256 frames, on 15 s 832, not 1500: wkv_audio_ctx_auto), N > 0
     * fixes it at N.  0
     * (default): wkv_options.audio_ctx's (0 there: all n_audio_ctx, as before). */
    int audio_ctx;
    /* Alignatt: the most audio (ms) a run holds with the next step's, the committed
     * words' included (SimulStreaming's audio_max_len); 0 (default): 4/5 of the
     * model's window (24 s), else 1000 .. 30000.  With audio_ctx AUTO it bounds the
     * encoder's frames: 6000 keeps every run at 256 - 384 of 1500 (docs/trained-model.md,
     * "The padding's K/V"). */
    int max_held_ms;
} wkv_stream_options;

typedef enum { WKV_COMMIT_AGREEMENT = 0, WKV_COMMIT_ALIGNATT = 1 } wkv_commit_policy;

WKV_API void wkv_stream_options_default(wkv_stream_options *o);

/* Per-stream figures since creation. */
typedef struct {
    int64_t runs, silent_runs, forced_runs; /* forced_runs: runs that forced a commit */
    int64_t finals, forced_finals, partials; /* segments reported */
    double audio_s;          /* audio pushed */
    double busy_ms, max_busy_ms; /* compute time of the runs */
    /* commit delay of the finals, committed_at - end, in seconds (0 without finals);
     * the median to 5 ms (10-ms bins), within the smallest and largest */
    double delay_mean, delay_median, delay_max;
} wkv_stream_stats;

/* A stream on `ctx` (which it uses, not owns, until freed).  From `opts` it takes
 * language ("auto"/NULL: detected once, on the first run's window, on multilingual
 * models), translate, timestamps, initial_prompt (the first prompt), the no-speech and
 * log-prob thresholds (the silence test), beam_size/patience/length_penalty and the
 * first temperature (each run is decoded once: no temperature fallback), sample_len.
 * condition_on_previous_text (the committed text is each run's prompt; off: the
 * initial prompt alone, every run); word_timestamps (word mode, above) with
 * alignment_heads, prepend_punctuations and append_punctuations (copied);
 * hallucination_silence_threshold and clip_timestamps are offline-only.  `cb` gets
 * every segment.  NULL on error (a bad alignment-heads spec among them). */
WKV_API wkv_stream *wkv_stream_new(wkv_context *ctx, const wkv_options *opts,
                           const wkv_stream_options *sopts, wkv_stream_cb cb, void *user,
                           char **error);
WKV_API void wkv_stream_free(wkv_stream *st);
/* Appends n samples and, when step_ms of audio has come since the last run, runs
 * once on everything held (segments go to the callback before it returns).  Returns
 * the runs done (0 or 1), or -1 with a message (the audio is kept). */
WKV_API int wkv_stream_push(wkv_stream *st, const float *pcm, size_t n, double now, char **error);
/* Commits everything held (end of stream, or before a discontinuity): runs until no
 * audio is left, every segment of the last run final.  The committed text stays the
 * prompt of later audio.  Returns the runs done, or -1. */
WKV_API int wkv_stream_finish(wkv_stream *st, double now, char **error);
/* Forgets the audio held, the committed prompt (back to the initial prompt) and the
 * previous hypothesis, without reporting anything (after a flush or a seek).  Stream
 * time goes on; the detected language and the statistics stay. */
WKV_API void wkv_stream_reset(wkv_stream *st);
/* Drops the samples before stream index `index` unheard (a caller falling behind). */
WKV_API void wkv_stream_drop(wkv_stream *st, int64_t index);
/* Stream index of the first sample not yet committed: a caller keeping its own copy
 * of the audio may drop every sample before it. */
WKV_API int64_t wkv_stream_base(const wkv_stream *st);
/* Samples pushed so far. */
WKV_API int64_t wkv_stream_length(const wkv_stream *st);
/* The language used: the code given, the detected one, or "auto" before detection. */
WKV_API const char *wkv_stream_language(const wkv_stream *st);
/* Changes the force bound for the following runs (the element's latency may change
 * while playing). */
WKV_API void wkv_stream_set_latency(wkv_stream *st, int latency_ms);
WKV_API void wkv_stream_get_stats(const wkv_stream *st, wkv_stream_stats *out);

#ifdef __cplusplus
}
#endif
#endif
