/* whisper: everything that leaves on text_src, from the worker thread: stream-start,
 * caps, segment, GAP events and the time floor, text buffers, the whisper-segment
 * messages, the transcript tags (on text_src, and queued for src), and the latency
 * promise's check.  The worker hands it what a step decoded (gstwhispersegs.h) and
 * the queue's events; it calls nothing above it.  Worker-only state (self->w);
 * text_src's flow is stored in the queue for chain. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <string.h>

#define GST_CAT_DEFAULT gst_whisper_debug

#define DEFAULT_LANGUAGE "en"

GstCaps *gst_whisper_text_caps(GstWhisper *self)
{
    /* highlighted cues are the only text with markup (<u>), escaped then */
    gboolean markup = self->w.highlight && self->w.text_unit == GST_WHISPER_TEXT_UNIT_CUE;
    return gst_caps_new_simple("text/x-raw", "format", G_TYPE_STRING,
                               markup ? "pango-markup" : "utf8", NULL);
}

void gst_whisper_text_reset(GstWhisper *self)
{
    self->text.pos = self->text.floor = GST_CLOCK_TIME_NONE;
    self->text.late = FALSE;
    self->text.stall_warned = FALSE;
}

/* Sends stream-start and caps on text_src if it lacks them. */
void gst_whisper_text_ensure_stream(GstWhisper *self)
{
    GstEvent *ev = gst_pad_get_sticky_event(self->textpad, GST_EVENT_STREAM_START, 0);
    if (ev) {
        gst_event_unref(ev);
    } else {
        gchar *id = gst_pad_create_stream_id(self->textpad, GST_ELEMENT(self), "text");
        ev = gst_event_new_stream_start(id);
        gst_event_set_stream_flags(ev, GST_STREAM_FLAG_SPARSE);
        g_free(id);
        gst_pad_push_event(self->textpad, ev);
    }
    if (!gst_pad_has_current_caps(self->textpad)) {
        GstCaps *caps = gst_whisper_text_caps(self);
        gst_pad_push_event(self->textpad, gst_event_new_caps(caps));
        gst_caps_unref(caps);
    }
}

/* Sends stream-start, caps and segment on text_src if it lacks them. */
static void ensure_text_events(GstWhisper *self)
{
    gst_whisper_text_ensure_stream(self);
    GstEvent *ev = gst_pad_get_sticky_event(self->textpad, GST_EVENT_SEGMENT, 0);
    if (ev) {
        gst_event_unref(ev);
    } else {
        GstSegment seg = gst_whisper_queue_get_segment(self);
        if (seg.format != GST_FORMAT_TIME)
            gst_segment_init(&seg, GST_FORMAT_TIME);
        gst_pad_push_event(self->textpad, gst_event_new_segment(&seg));
    }
}

static void raise_floor(GstWhisper *self, GstClockTime t)
{
    if (!GST_CLOCK_TIME_IS_VALID(self->text.floor) || t > self->text.floor)
        self->text.floor = t;
}

void gst_whisper_text_gap(GstWhisper *self, GstClockTime until)
{
    if (!GST_CLOCK_TIME_IS_VALID(until))
        return;
    if (GST_CLOCK_TIME_IS_VALID(self->text.pos) && until <= self->text.pos)
        return;
    GstClockTime from = GST_CLOCK_TIME_IS_VALID(self->text.pos) ? self->text.pos : until;
    ensure_text_events(self);
    if (until > from) {
        /* said before the push: a sink prerolling on it blocks the push */
        gst_whisper_queue_set_text_flowing(self);
        gst_pad_push_event(self->textpad, gst_event_new_gap(from, until - from));
    }
    self->text.pos = until;
    raise_floor(self, until);
}

void gst_whisper_text_preroll(GstWhisper *self, GstClockTime t0, gboolean gap)
{
    /* a sparse stream: this GAP prerolls the sinks downstream of the text pad while
     * the first window fills.  Not on the filter offline: a sink prerolling on it
     * would block the worker while the audio the worker needs is held (gstwhisperpads.c,
     * Preroll); the first window's text prerolls them there. */
    ensure_text_events(self);
    if (gap)
        gst_pad_push_event(self->textpad, gst_event_new_gap(t0, 0));
    self->text.pos = t0;
    raise_floor(self, t0);
}

void gst_whisper_text_event(GstWhisper *self, GstEvent *ev)
{
    if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
        GstClockTime ts, dur;
        gst_event_parse_gap(ev, &ts, &dur);
        ensure_text_events(self);
        GstClockTime end = GST_CLOCK_TIME_IS_VALID(dur) ? ts + dur : ts;
        if (GST_CLOCK_TIME_IS_VALID(self->text.floor) && ts < self->text.floor) {
            /* text already went past its start (lateness, timestamps that went back):
             * only the part after the floor, if any */
            GstClockTime from = self->text.floor;
            gst_event_unref(ev);
            if (end <= from)
                return;
            ev = gst_event_new_gap(from, end - from);
        }
        if (!GST_CLOCK_TIME_IS_VALID(self->text.pos) || end > self->text.pos)
            self->text.pos = end;
        raise_floor(self, end);
        if (end > ts)
            gst_whisper_queue_set_text_flowing(self);
    } else if (GST_EVENT_TYPE(ev) == GST_EVENT_SEGMENT) {
        gst_whisper_text_ensure_stream(self);
        self->text.pos = self->text.floor = GST_CLOCK_TIME_NONE;
    } else if (GST_EVENT_TYPE(ev) == GST_EVENT_EOS) {
        ensure_text_events(self);
        gst_whisper_queue_set_text_flowing(self);
    }
    gst_pad_push_event(self->textpad, ev);
}

static const gchar *segment_language(GstWhisper *self)
{
    const wkv_model *m = gst_whisper_model_get(self->w.model);
    if (m && !wkv_model_is_multilingual(m))
        return "en";
    return self->w.opt_language ? self->w.opt_language : DEFAULT_LANGUAGE;
}

/* The latency promise (live): a final pushed more than `latency` after its first
 * sample came in chain is counted, and the first of an episode of such finals (it
 * ends with a final on time) posts a warning, with the details gst-plugins-rs's
 * transcribers give theirs.  A new longest delay notifies max-observed-delay.
 * Measured on the element's clock, the one the sinks wait on. */
static void check_commit_delay(GstWhisper *self, const WSeg *s)
{
    if (!s->final || !GST_CLOCK_TIME_IS_VALID(s->arrived))
        return;
    GstClockTime now = gst_whisper_clock_now(self);
    if (!GST_CLOCK_TIME_IS_VALID(now) || now < s->arrived)
        return; /* no clock now, or another one */
    guint64 delay_ms = (now - s->arrived) / GST_MSECOND;
    guint latency = 0;
    gboolean grew = FALSE;
    gboolean late = gst_whisper_stats_commit(self, delay_ms, &latency, &grew);
    if (grew)
        g_object_notify(G_OBJECT(self), "max-observed-delay");
    if (!late) {
        self->text.late = FALSE;
        return;
    }
    GST_DEBUG_OBJECT(self, "final at %" GST_TIME_FORMAT " out %" G_GUINT64_FORMAT " ms after "
                     "its audio (latency %u)", GST_TIME_ARGS(s->pts), delay_ms, latency);
    if (self->text.late)
        return;
    self->text.late = TRUE;
    GST_ELEMENT_WARNING_WITH_DETAILS(self, CORE, CLOCK,
        ("Whisper text is later than its latency"),
        ("a final segment went out %" G_GUINT64_FORMAT " ms after its audio arrived, %"
         G_GUINT64_FORMAT " ms more than latency=%u; inference is slower than the audio "
         "(see the late-commits and max-observed-delay properties)",
         delay_ms, delay_ms - latency, latency),
        ("new-observed-max-delay", G_TYPE_UINT64, (guint64)(now - s->arrived), NULL));
}

/* Moves a final or pushed partial that would start before the floor to the floor:
 * text_src never goes back in time within a segment, whatever the input did (e.g.
 * `lateness` lowered while playing).  Keeps the end. */
static void clamp_to_floor(GstWhisper *self, WSeg *s)
{
    GstClockTime end = s->pts + s->duration;
    GST_DEBUG_OBJECT(self, "segment at %" GST_TIME_FORMAT " moved to %" GST_TIME_FORMAT,
                     GST_TIME_ARGS(s->pts), GST_TIME_ARGS(self->text.floor));
    s->pts = self->text.floor;
    s->duration = end > s->pts ? end - s->pts : 0;
}

static void post_segment_message(GstWhisper *self, const WSeg *s, const gchar *lang)
{
    GstStructure *st = gst_structure_new("whisper-segment",
        "text", G_TYPE_STRING, s->text,
        "start", G_TYPE_UINT64, (guint64)s->pts,
        "end", G_TYPE_UINT64, (guint64)(s->pts + s->duration),
        "language", G_TYPE_STRING, lang,
        "avg-logprob", G_TYPE_DOUBLE, s->avg_logprob,
        "no-speech-prob", G_TYPE_DOUBLE, s->no_speech_prob,
        "final", G_TYPE_BOOLEAN, s->final, NULL);
    if (s->words) {
        GValue list = G_VALUE_INIT, item = G_VALUE_INIT;
        g_value_init(&list, GST_TYPE_LIST);
        for (guint i = 0; i < s->words->len; i++) {
            const WWord *w = &g_array_index(s->words, WWord, i);
            g_value_init(&item, GST_TYPE_STRUCTURE);
            g_value_take_boxed(&item, gst_structure_new("whisper-word",
                "word", G_TYPE_STRING, w->word,
                "start", G_TYPE_UINT64, (guint64)w->start,
                "end", G_TYPE_UINT64, (guint64)w->end,
                "probability", G_TYPE_DOUBLE, w->probability, NULL));
            gst_value_list_append_and_take_value(&list, &item);
        }
        gst_structure_take_value(st, "words", &list);
    }
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), st));
}

/* Pushes one segment: bus message, tags, and (finals) a text buffer, unless its words
 * or cues make the buffers; a word or a cue: only its buffer.  A partial is a message
 * only, when partial-results asks for them: as a buffer, a subtitle encoder or muxer
 * would write it as a cue of its own.  Returns the flow of the push, *pushed whether
 * there was one. */
static GstFlowReturn push_segment(GstWhisper *self, const WSeg *seg, gboolean *pushed)
{
    const gchar *lang = segment_language(self);
    *pushed = FALSE;
    if (!seg->final) {
        if (gst_whisper_props_partial_results(self) && !seg->text_only)
            post_segment_message(self, seg, lang);
        return GST_FLOW_OK;
    }
    WSeg guarded = *seg;
    const WSeg *s = &guarded;
    if (GST_CLOCK_TIME_IS_VALID(self->text.floor) && s->pts < self->text.floor)
        clamp_to_floor(self, &guarded);
    if (!s->text_only)
        post_segment_message(self, s, lang);

    ensure_text_events(self);
    if (!s->text_only) { /* a word or a cue: its segment sent the message and tags */
        GstTagList *tags = gst_tag_list_new(GST_WHISPER_TAG_TRANSCRIPT, s->text,
                                            GST_TAG_LANGUAGE_CODE, lang, NULL);
        gst_tag_list_set_scope(tags, GST_TAG_SCOPE_STREAM);
        if (self->srcpad) /* the filter's audio carries them too */
            gst_whisper_queue_src_tags(self, tags);
        gst_pad_push_event(self->textpad, gst_event_new_tag(tags));
    }
    if (s->no_buffer) /* its words or cues are the buffers */
        return GST_FLOW_OK;

    /* a gap before the text keeps the time moving */
    if (!GST_CLOCK_TIME_IS_VALID(self->text.pos) || s->pts > self->text.pos)
        gst_whisper_text_gap(self, s->pts);
    gsize len = strlen(s->text);
    GstBuffer *buf = gst_buffer_new_allocate(NULL, len, NULL);
    gst_buffer_fill(buf, 0, s->text, len);
    GST_BUFFER_PTS(buf) = s->pts;
    GST_BUFFER_DURATION(buf) = s->duration;
    if (!GST_CLOCK_TIME_IS_VALID(self->text.pos) || s->pts + s->duration > self->text.pos)
        self->text.pos = s->pts + s->duration;
    raise_floor(self, s->pts);
    gst_whisper_queue_set_text_flowing(self); /* before: a prerolling sink blocks it */
    GstFlowReturn ret = gst_pad_push(self->textpad, buf);
    *pushed = TRUE;
    if (ret == GST_FLOW_ERROR && GST_PAD_HAS_PENDING_EVENTS(self->textpad)) {
        /* The buffer never left: downstream refused a sticky event before it, and
         * refused events are not errors that anyone posted.  textoverlay does this
         * once its video is at EOS (it forwards the text pad's tags to its video
         * src); the refused event is sent again before every buffer, so no text gets
         * through any more: downstream is done with text, as at EOS.  Said once: the
         * later windows' text fails the same way until a flush or READY. */
        if (gst_whisper_queue_srcresult(self) != GST_FLOW_EOS)
            GST_ELEMENT_WARNING(self, STREAM, FAILED, ("Downstream takes no more text"),
                                ("text_src: an event before the text at %" GST_TIME_FORMAT
                                 " was refused; the text from there on is dropped",
                                 GST_TIME_ARGS(s->pts)));
        ret = GST_FLOW_EOS;
    }
    check_commit_delay(self, s);
    return ret;
}

/* The gst-plugins-rs transcribers' mark after each final transcript (textaccumulate
 * drains on it, roll-up captions start a row): a custom downstream event. */
static void push_final_mark(GstWhisper *self)
{
    GstStructure *st = gst_structure_new_empty("rstranscribe/final-transcript");
    gst_pad_push_event(self->textpad, gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, st));
}

GstFlowReturn gst_whisper_text_push_segments(GstWhisper *self, GPtrArray *segs,
                                             GstClockTime until)
{
    /* not-linked is text_src's own business: decoding goes on (the text may be
     * linked later) and chain decides what it means for the audio */
    GstFlowReturn ret = GST_FLOW_OK, last = GST_FLOW_OK;
    gboolean any = FALSE;
    gboolean unmarked = FALSE; /* a final's text went out, its mark not yet */
    for (guint i = 0; i < segs->len && ret == GST_FLOW_OK; i++) {
        const WSeg *seg = g_ptr_array_index(segs, i);
        /* a new segment: the one before (its buffer, words or cues) is complete */
        if (unmarked && seg->final && !seg->text_only) {
            push_final_mark(self);
            unmarked = FALSE;
        }
        gboolean pushed = FALSE;
        GstFlowReturn r = push_segment(self, seg, &pushed);
        if (pushed) {
            last = r;
            any = TRUE;
            unmarked = unmarked || seg->final;
        }
        ret = r == GST_FLOW_NOT_LINKED ? GST_FLOW_OK : r;
    }
    if (unmarked && ret == GST_FLOW_OK)
        push_final_mark(self);
    if (ret == GST_FLOW_OK)
        gst_whisper_text_gap(self, until);
    if (any) /* the flow of the last buffer that went out */
        gst_whisper_queue_set_srcresult(self, last);
    return ret;
}

GstFlowReturn gst_whisper_text_push_decoded(GstWhisper *self, const GstWhisperDecoded *d)
{
    GstFlowReturn ret = GST_FLOW_OK;
    for (guint i = 0; d->pieces && i < d->pieces->len && ret == GST_FLOW_OK; i++) {
        const GstWhisperPiece *p = &g_array_index(d->pieces, GstWhisperPiece, i);
        ret = gst_whisper_text_push_segments(self, p->segs, p->until);
    }
    return ret;
}

void gst_whisper_text_end(GstWhisper *self)
{
    gst_pad_push_event(self->textpad, gst_event_new_eos());
}
