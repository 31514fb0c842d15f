/* The live stream's voice-activity gate (stream_gate.c): Silero probabilities on the
 * audio as it is pushed, turned by whisper.cpp's segmenter hysteresis into what the
 * stream should do.  It holds no audio and knows nothing of runs: the stream tells it
 * the two facts it needs (is a hypothesis uncommitted, where the last run ended) and
 * carries out what it answers (stream.c). */
#ifndef WKV_STREAM_GATE_H
#define WKV_STREAM_GATE_H

#include "whisperkv.h"

#include <stdint.h>

typedef struct {
    wkv_vad_stream *vs;
    wkv_vad_params p;
    int64_t next;  /* stream index of the first sample of the next chunk to score */
    int speaking;
    int64_t start; /* where the speech began */
    int64_t quiet; /* where the probabilities fell below threshold - 0.15; -1: not */
} wkv__gate;

/* What one chunk (or the close) asks of the stream, in this order: drop the audio
 * before `drop` (-1: nothing); tell the caller speech starts (event 1) or ends
 * (event 0) at `at` (event -1: nothing); commit everything before `end` (commit 1;
 * the speech went quiet at `quiet`). */
typedef struct {
    int64_t drop;
    int event;
    int64_t at;
    int commit;
    int64_t quiet, end;
} wkv__gate_step;

/* Checks the parameters and loads the VAD; 0, or -1 with a message. */
int wkv__gate_open(wkv__gate *g, const wkv_vad_model *vad_model, const wkv_vad_params *p, char **error);
void wkv__gate_free(wkv__gate *g);
/* A new grid of chunks from stream index `at`. */
void wkv__gate_reset(wkv__gate *g, int64_t at);
/* The probabilities of the chunks these samples complete (at most
 * WKV_VAD_MAX_PROBS(n)). */
size_t wkv__gate_score(wkv__gate *g, const float *pcm, size_t n, float *probs);
/* The step for the next chunk's probability p.  has_hyp: a hypothesis waits
 * uncommitted; last_run: the stream index where the last run's audio ended. */
void wkv__gate_chunk(wkv__gate *g, float p, int has_hyp, int64_t last_run, wkv__gate_step *s);
/* Where silence may be dropped unheard while nothing is uncommitted: before the
 * padding a speech start takes from the audio before it; -1 while speaking. */
int64_t wkv__gate_idle_drop(const wkv__gate *g);
/* The end of the audio, at stream index `end`: the partial chunk is not scored (what
 * follows is a new grid), speech still going ends there. */
void wkv__gate_close(wkv__gate *g, int64_t end, int has_hyp, wkv__gate_step *s);

#endif
