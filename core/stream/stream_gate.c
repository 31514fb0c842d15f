/* The live stream's voice-activity gate (stream_gate.h): whisper.cpp's segmenter
 * hysteresis (speech at p >= threshold, silence below threshold - 0.15 for
 * min_silence) applied chunk by chunk as the audio arrives.  A speech end asks for a
 * commit at once, padded like a segment end; a burst shorter than min_speech that no
 * run heard is dropped, as the segmenter drops it. */
#include "stream/stream_gate.h"
#include "base/util.h"

static int64_t ms_samples(int ms)
{
    return (int64_t)ms * WKV_SAMPLE_RATE / 1000;
}

static const wkv__gate_step NOTHING = {.drop = -1, .event = -1};

int wkv__gate_open(wkv__gate *g, const wkv_vad_model *vad_model, const wkv_vad_params *p, char **error)
{
    g->quiet = -1;
    g->p = *p;
    if (!vad_model)
        return 0;
    const char *why = wkv_vad_params_check(p);
    if (why)
        wkv__set_error(error, "%s", why);
    if (why || !(g->vs = wkv_vad_stream_new(vad_model, error)))
        return -1;
    return 0;
}

void wkv__gate_free(wkv__gate *g)
{
    wkv_vad_stream_free(g->vs);
    g->vs = NULL;
}

void wkv__gate_reset(wkv__gate *g, int64_t at)
{
    if (g->vs)
        wkv_vad_stream_reset(g->vs);
    g->next = at;
    g->speaking = 0;
    g->quiet = -1;
}

size_t wkv__gate_score(wkv__gate *g, const float *pcm, size_t n, float *probs)
{
    return wkv_vad_push(g->vs, pcm, n, probs);
}

void wkv__gate_chunk(wkv__gate *g, float p, int has_hyp, int64_t last_run, wkv__gate_step *s)
{
    const wkv_vad_params *vp = &g->p;
    const int64_t c = g->next, pad = ms_samples(vp->speech_pad_ms);
    *s = NOTHING;
    g->next += WKV_VAD_CHUNK;
    if (p >= vp->threshold) {
        g->quiet = -1;
        if (!g->speaking) {
            /* the silence before it (within one push) is not decoded either */
            if (!has_hyp)
                s->drop = c - pad;
            g->speaking = 1;
            g->start = c;
            s->event = 1;
            s->at = c - pad;
        }
        return;
    }
    if (!g->speaking || p >= vp->threshold - 0.15f)
        return;
    if (g->quiet < 0)
        g->quiet = c;
    if (c - g->quiet < ms_samples(vp->min_silence_duration_ms))
        return;
    g->speaking = 0;
    const int64_t quiet = g->quiet, end = quiet + pad;
    g->quiet = -1;
    s->event = 0;
    s->at = end;
    const int unheard = last_run <= g->start && !has_hyp;
    if (unheard && end - g->start < ms_samples(vp->min_speech_duration_ms)) {
        s->drop = end;
        return;
    }
    s->commit = 1;
    s->quiet = quiet;
    s->end = end;
}

int64_t wkv__gate_idle_drop(const wkv__gate *g)
{
    return g->speaking ? -1 : g->next - ms_samples(g->p.speech_pad_ms);
}

void wkv__gate_close(wkv__gate *g, int64_t end, int has_hyp, wkv__gate_step *s)
{
    *s = NOTHING;
    if (g->next < end) {
        /* the partial chunk's score is not needed: what follows is a new grid */
        float p;
        wkv_vad_finish(g->vs, &p);
        g->next = end;
    }
    if (!g->speaking && !has_hyp)
        s->drop = end; /* silence: nothing to run on */
    if (g->speaking) {
        s->event = 0;
        s->at = end;
        /* a burst too short for a segment (whisper.cpp's segmenter drops it at the end
         * too) with nothing uncommitted: dropped, as at a speech end */
        if (!has_hyp && end - g->start < ms_samples(g->p.min_speech_duration_ms))
            s->drop = end;
    }
    g->speaking = 0;
    g->quiet = -1;
}
