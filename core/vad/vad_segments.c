/* Speech probabilities -> speech segments as whisper.cpp 1.9.3's
 * whisper_vad_segments_from_probs computes them: a hysteresis pass (speech at
 * p >= threshold, silence below threshold - 0.15) with whisper.cpp's max-speech
 * splits, then its own 200-ms merge, a second min-speech filter and the padding,
 * boundaries in centiseconds.  Sample counts are int64 here where whisper.cpp uses
 * int: the same numbers wherever its int does not overflow.  Deliberately not the
 * Python silero-vad's rules (docs/architecture.md, "Voice activity"). */
#include "base/util.h"
#include "whisperkv.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#define SR WKV_SAMPLE_RATE
#define SPLIT_SILENCE (SR * 98 / 1000) /* a pause where max_speech may split */
#define MERGE_GAP (SR * 200 / 1000)    /* fixed in whisper.cpp, not a parameter */
#define MAX_MS (3600 * 1000)

void wkv_vad_params_default(wkv_vad_params *p)
{
    p->threshold = 0.5f;
    p->min_speech_duration_ms = 250;
    p->min_silence_duration_ms = 100;
    p->max_speech_duration_s = FLT_MAX;
    p->speech_pad_ms = 30;
    p->samples_overlap = 0.1f;
}

const char *wkv_vad_params_check(const wkv_vad_params *p)
{
    if (!(p->threshold >= 0.0f && p->threshold <= 1.0f))
        return "the VAD threshold must be between 0 and 1";
    if (p->min_speech_duration_ms < 0 || p->min_speech_duration_ms > MAX_MS)
        return "the minimum speech duration must be 0 to 3600000 ms";
    if (p->min_silence_duration_ms < 0 || p->min_silence_duration_ms > MAX_MS)
        return "the minimum silence duration must be 0 to 3600000 ms";
    if (p->speech_pad_ms < 0 || p->speech_pad_ms > MAX_MS)
        return "the speech padding must be 0 to 3600000 ms";
    if (!(p->max_speech_duration_s > 0.0f)) /* +inf is "no limit" like FLT_MAX */
        return "the maximum speech duration must be above 0 s";
    if (!(p->samples_overlap >= 0.0f && p->samples_overlap <= 10.0f))
        return "the samples overlap must be 0 to 10 s";
    return NULL;
}

typedef struct {
    int64_t (*v)[2]; /* start, end in samples */
    int n, cap;
} seg_list;

static int push(seg_list *l, int64_t start, int64_t end)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        void *v = wkv__realloc(l->v, (size_t)cap * sizeof *l->v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n][0] = start;
    l->v[l->n][1] = end;
    l->n++;
    return 0;
}

static void erase(seg_list *l, int i)
{
    for (int k = i; k + 1 < l->n; k++) {
        l->v[k][0] = l->v[k + 1][0];
        l->v[k][1] = l->v[k + 1][1];
    }
    l->n--;
}

typedef struct {
    float threshold, neg_threshold;
    int64_t min_silence, min_speech, max_speech, audio_len;
} limits;

/* The hysteresis pass over the probabilities; emits raw segments in samples. */
static int detect(const float *probs, int64_t n_probs, const limits *k, seg_list *out)
{
    int triggered = 0, has_speech = 0;
    int64_t start = 0, temp_end = 0, prev_end = 0, next_start = 0;
    for (int64_t i = 0; i < n_probs; i++) {
        const float p = probs[i];
        const int64_t s = WKV_VAD_CHUNK * i;
        const int speech = p >= k->threshold;
        if (speech && temp_end) {
            temp_end = 0;
            if (next_start < prev_end)
                next_start = s;
        }
        if (speech && !triggered) {
            triggered = has_speech = 1;
            start = s;
            continue;
        }
        if (triggered && s - start > k->max_speech) {
            if (prev_end) {
                if (push(out, start, prev_end))
                    return -1;
                if (next_start < prev_end) /* still in the silence: not speech */
                    triggered = has_speech = 0;
                else
                    start = next_start;
                prev_end = next_start = temp_end = 0;
            } else { /* no pause to split at: a hard cut */
                if (push(out, start, s))
                    return -1;
                prev_end = next_start = temp_end = 0;
                triggered = has_speech = 0;
                continue;
            }
        }
        if (p < k->neg_threshold && triggered) {
            if (!temp_end)
                temp_end = s;
            if (s - temp_end > SPLIT_SILENCE)
                prev_end = temp_end;
            if (s - temp_end < k->min_silence)
                continue;
            if (temp_end - start > k->min_speech && push(out, start, temp_end))
                return -1;
            prev_end = next_start = temp_end = 0;
            triggered = has_speech = 0;
        }
    }
    if (has_speech && k->audio_len - start > k->min_speech && push(out, start, k->audio_len))
        return -1;
    return 0;
}

/* whisper.cpp's post-processing: merge gaps under 200 ms, drop short ones, pad. */
static void post_process(seg_list *l, const limits *k, int64_t pad)
{
    for (int i = 0; i + 1 < l->n;) {
        if (l->v[i + 1][0] - l->v[i][1] < MERGE_GAP) {
            l->v[i][1] = l->v[i + 1][1];
            erase(l, i + 1);
        } else {
            i++;
        }
    }
    for (int i = 0; i < l->n;) {
        if (l->v[i][1] - l->v[i][0] < k->min_speech)
            erase(l, i);
        else
            i++;
    }
    for (int i = 0; i < l->n; i++) {
        int64_t *cur = l->v[i];
        if (i == 0)
            cur[0] = cur[0] > pad ? cur[0] - pad : 0;
        if (i + 1 < l->n) {
            int64_t *next = l->v[i + 1];
            int64_t gap = next[0] - cur[1];
            if (gap < 2 * pad) { /* close: split the gap between them */
                cur[1] += gap / 2;
                next[0] = next[0] > gap / 2 ? next[0] - gap / 2 : 0;
            } else {
                cur[1] = cur[1] + pad < k->audio_len ? cur[1] + pad : k->audio_len;
                next[0] = next[0] > pad ? next[0] - pad : 0;
            }
        } else {
            cur[1] = cur[1] + pad < k->audio_len ? cur[1] + pad : k->audio_len;
        }
    }
}

static int64_t samples_to_cs(int64_t samples)
{
    return (int64_t)((double)samples / SR * 100.0 + 0.5);
}

int wkv_vad_segments(const float *probs, int64_t n_probs, const wkv_vad_params *p,
                     wkv_vad_segment **segs, char **error)
{
    *segs = NULL;
    const char *bad = wkv_vad_params_check(p);
    if (bad) {
        wkv__set_error(error, "%s", bad);
        return -1;
    }
    if (n_probs < 0 || (n_probs > 0 && !probs) || n_probs > INT64_MAX / WKV_VAD_CHUNK / 2) {
        wkv__set_error(error, "bad probabilities: %lld of them", (long long)n_probs);
        return -1;
    }
    limits k;
    k.threshold = p->threshold;
    k.neg_threshold = p->threshold - 0.15f;
    if (k.neg_threshold < 0.01f)
        k.neg_threshold = 0.01f;
    k.min_silence = (int64_t)SR * p->min_silence_duration_ms / 1000;
    k.min_speech = (int64_t)SR * p->min_speech_duration_ms / 1000;
    const int64_t pad = (int64_t)SR * p->speech_pad_ms / 1000;
    k.audio_len = n_probs * WKV_VAD_CHUNK;
    /* whisper.cpp truncates the seconds to an integer first: 2.5 s counts as 2 s */
    k.max_speech = INT_MAX / 2;
    if (p->max_speech_duration_s <= 100000.0f) {
        int64_t m = (int64_t)SR * (int64_t)p->max_speech_duration_s - WKV_VAD_CHUNK - 2 * pad;
        k.max_speech = m < 0 || m > INT_MAX ? INT_MAX / 2 : m;
    }
    seg_list l = {NULL, 0, 0};
    if (detect(probs, n_probs, &k, &l)) {
        wkv__free(l.v);
        wkv__set_error(error, "out of memory for the speech segments");
        return -1;
    }
    post_process(&l, &k, pad);
    if (l.n > 0) {
        *segs = wkv__malloc((size_t)l.n * sizeof **segs);
        if (!*segs) {
            wkv__free(l.v);
            wkv__set_error(error, "out of memory for the speech segments");
            return -1;
        }
        for (int i = 0; i < l.n; i++) {
            (*segs)[i].start = samples_to_cs(l.v[i][0]);
            (*segs)[i].end = samples_to_cs(l.v[i][1]);
        }
    }
    int n = l.n;
    wkv__free(l.v);
    return n;
}
