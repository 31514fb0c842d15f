/* whisper: a segment the core decoded offline (a window of the long form, or a chunk
 * of a batch) as the element's text buffers: its time on the stretch's timeline
 * (VAD's map back from the speech, `lateness`, the stretch's limit), its words
 * (text-unit=word), and its cues (text-unit=cue, cut across the stretch's windows).
 * Returns buffers to be (WSeg) to the step that asked; pushes nothing. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"
#include "cue_text.h"

#include <stdlib.h>
#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

/* Places `s` at [a, b) seconds of the stretch (t0, limit and lateness as
 * GstWhisperCollect's) and adds it to `out`; frees it instead when it starts past the
 * limit. */
static void place(WSeg *s, double a_s, double b_s, GstClockTime t0, GstClockTime limit,
                  guint lateness, GPtrArray *out)
{
    GstClockTime a = gst_whisper_secs_to_ns(a_s), b = gst_whisper_secs_to_ns(b_s);
    s->pts = t0 + a;
    s->duration = b > a ? b - a : 0;
    s->final = TRUE;
    s->arrived = GST_CLOCK_TIME_NONE; /* offline: no latency promise */
    if (GST_CLOCK_TIME_IS_VALID(limit)) {
        /* the last window of a stretch that a DISCONT or a gap closed: no text past
         * the hole (at EOS the segments stay exactly the long form's); the hole is in
         * the audio's time, before `lateness` */
        if (s->pts >= limit) {
            gst_whisper_seg_free(s);
            return;
        }
        if (s->pts + s->duration > limit)
            s->duration = limit - s->pts;
    }
    s->pts += lateness * GST_MSECOND;
    g_ptr_array_add(out, s);
}

static GstClockTime word_time(const GstWhisperCollect *c, double secs)
{
    return c->t0 + gst_whisper_secs_to_ns(secs) + c->lateness * GST_MSECOND;
}

/* One buffer of a cue: [a, b) seconds, word `mark` underlined (-1: none); the text as
 * the CLI's SRT writes it (cues/cue_text.c), escaped as markup when the caps are
 * pango-markup (highlight-words). */
static void cue_part(const cue_word *q, guint n, double a, double b, int mark, void *user)
{
    GstWhisper *self = user;
    WSeg *s = g_new0(WSeg, 1);
    s->text = cue_text(q, n, self->w.highlight, mark);
    s->text_only = TRUE;
    place(s, a, b, self->cues.t0, self->cues.limit, self->cues.lateness, self->cues.out);
}

/* text-unit=cue: a complete cue, its words' texts joined (line breaks included), or
 * with highlight-words its highlighted sub-cues. */
static void collect_cue(const cue_word *words, guint n, void *user)
{
    GstWhisper *self = user;
    cue_parts(words, n, self->w.highlight, cue_part, self);
}

int gst_whisper_collect_segment(const wkv_segment *speech_seg, void *user)
{
    GstWhisperCollect *c = user;
    GstWhisper *self = c->self;
    const GstWhisperWorker *w = &self->w;
    /* with VAD: onto the stretch's timeline, as the CLI reports it */
    wkv_segment mapped;
    const wkv_segment *seg = speech_seg;
    g_autofree wkv_word *mapped_words = NULL;
    if (self->speech.map) {
        gsize n_words = (gsize)MAX(1, speech_seg->n_words);
        mapped_words = gst_whisper_try_new(wkv_word, n_words);
        if (!mapped_words) {
            gst_whisper_alloc_error(c->self, "a segment's words", n_words, sizeof(wkv_word));
            c->failed = TRUE;
            return 1; /* stops the transcriber's loop */
        }
        wkv_vad_map_result(self->speech.map, speech_seg, &mapped, mapped_words);
        seg = &mapped;
    }
    if (!c->language && seg->language)
        c->language = g_strdup(seg->language);
    WSeg *s = g_new0(WSeg, 1);
    s->text = g_strdup(seg->text);
    s->avg_logprob = seg->avg_logprob;
    s->no_speech_prob = seg->no_speech_prob;
    s->no_buffer = w->text_unit != GST_WHISPER_TEXT_UNIT_SEGMENT;
    if (w->opts.word_timestamps) { /* a list, maybe empty, in every message */
        s->words = g_array_sized_new(FALSE, FALSE, sizeof(WWord), (guint)seg->n_words);
        for (int k = 0; k < seg->n_words; k++) {
            const wkv_word *wd = &seg->words[k];
            WWord ww = {g_strdup(wd->word), word_time(c, wd->start), word_time(c, wd->end),
                        wd->probability};
            g_array_append_val(s->words, ww);
        }
    }
    place(s, seg->start, seg->end, c->t0, c->limit, c->lateness, c->segs);
    if (w->text_unit == GST_WHISPER_TEXT_UNIT_WORD) {
        for (int k = 0; k < seg->n_words; k++) {
            WSeg *ws = g_new0(WSeg, 1);
            ws->text = g_strdup(seg->words[k].word);
            ws->text_only = TRUE;
            place(ws, seg->words[k].start, seg->words[k].end, c->t0, c->limit, c->lateness,
                  c->segs);
        }
    } else if (w->text_unit == GST_WHISPER_TEXT_UNIT_CUE && self->cues.cut) {
        self->cues.out = c->segs;
        cue_cutter_segment(self->cues.cut, seg);
        self->cues.out = NULL;
    }
    return 0;
}

void gst_whisper_cues_begin(GstWhisper *self, GstClockTime t0)
{
    GstWhisperWorker *w = &self->w;
    cue_cutter_free(self->cues.cut);
    self->cues.cut = NULL;
    if (w->text_unit != GST_WHISPER_TEXT_UNIT_CUE)
        return;
    self->cues.cut = cue_cutter_new(&w->cue_opts, collect_cue, self);
    self->cues.t0 = t0;
    self->cues.limit = GST_CLOCK_TIME_NONE;
    self->cues.lateness = gst_whisper_props_lateness(self);
}

void gst_whisper_cues_window(GstWhisper *self, GstClockTime limit, guint lateness)
{
    self->cues.limit = limit;
    self->cues.lateness = lateness;
}

GstClockTime gst_whisper_cues_hold(GstWhisper *self)
{
    double start;
    if (!self->cues.cut || !cue_cutter_pending(self->cues.cut, &start))
        return GST_CLOCK_TIME_NONE;
    return self->cues.t0 + gst_whisper_secs_to_ns(start) + self->cues.lateness * GST_MSECOND;
}

void gst_whisper_cues_finish(GstWhisper *self, GPtrArray *out)
{
    if (!self->cues.cut)
        return;
    self->cues.out = out;
    cue_cutter_finish(self->cues.cut);
    self->cues.out = NULL;
    cue_cutter_free(self->cues.cut);
    self->cues.cut = NULL;
}

void gst_whisper_cues_forget(GstWhisper *self)
{
    cue_cutter_free(self->cues.cut);
    self->cues.cut = NULL;
}
