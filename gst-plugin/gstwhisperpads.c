/* The pads, on the streaming thread and the application's: chain (copies the samples
 * into the queue, then, on the filter, pushes the very same buffer on src; it never
 * waits for inference), sink events (queued for the text pad in order), queries, and
 * the text pad's activation, which starts and stops the worker task.
 *
 * The filter (whisperkv) has sink, src (audio) and text_src; the transcriber
 * (whisperkvtranscriber) has sink and src (text): self->srcpad is NULL there and the
 * audio ends here.
 *
 * Preroll (the filter, offline): the text of a stretch comes once its 30-s window is
 * in, but a sink on the audio branch prerolls on the first buffer and then blocks the
 * streaming thread; without a queue that holds a window, the worker would never get
 * the audio it needs, the text branch never preroll, and the pipeline hang in PAUSED.
 * So while the element is PAUSED and its text pad has not flowed yet (text, a GAP with
 * a duration, or EOS went out), the audio buffers and the events after them are held
 * here instead of pushed (the worker already has the samples; the worker's bound,
 * OFFLINE_MAX_SAMPLES, bounds them too) and go out in order once the text flowed, at
 * EOS, or at the first buffer in PLAYING.  Live, nothing is held.
 *
 * Flow: the filter's src flow and its text flow (stored by the worker) go through a
 * GstFlowCombiner, as a demuxer's pads do: a fatal flow or FLUSHING on either pad is
 * returned, NOT_LINKED or EOS only when both pads say so (so an unlinked text_src does
 * not stop the audio, and an unlinked src does not stop the transcript). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisperpriv.h"

#include <gst/audio/audio.h>
#include <gst/base/gstflowcombiner.h>

#define GST_CAT_DEFAULT gst_whisper_debug

/* Any raw audio audioconvert makes: the filter passes it on untouched, the model hears
 * it converted (gstwhisperinput.c). */
#define AUDIO_CAPS                                                                        \
    GST_AUDIO_CAPS_MAKE(GST_AUDIO_FORMATS_ALL) ", layout = (string) { interleaved, "      \
    "non-interleaved }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS(AUDIO_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS(AUDIO_CAPS));

/* Text: utf8, or pango-markup when the text carries markup (highlight-words). */
#define TEXT_CAPS "text/x-raw, format = (string) { utf8, pango-markup }"
static GstStaticPadTemplate text_template = GST_STATIC_PAD_TEMPLATE("text_src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(TEXT_CAPS));
static GstStaticPadTemplate transcriber_src_template = GST_STATIC_PAD_TEMPLATE("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(TEXT_CAPS));

static gboolean flow_stops(GstFlowReturn ret)
{
    return ret == GST_FLOW_FLUSHING || ret < GST_FLOW_EOS;
}

/* Whether chain holds the audio now (see Preroll above). */
static gboolean should_hold(GstWhisper *self, gboolean live)
{
    if (!self->srcpad || live)
        return FALSE;
    GST_OBJECT_LOCK(self);
    GstState state = GST_STATE(self);
    GST_OBJECT_UNLOCK(self);
    return state == GST_STATE_PAUSED && !gst_whisper_queue_text_flowing(self);
}

/* Pushes what was held on src, in order; the flow of the last buffer pushed (after a
 * flow that stops, the rest is dropped). */
static GstFlowReturn release_held(GstWhisper *self)
{
    GstFlowReturn ret = GST_FLOW_OK;
    GstMiniObject *o;
    if (!g_queue_is_empty(&self->held))
        GST_DEBUG_OBJECT(self, "releasing %u held buffers and events", self->held.length);
    while ((o = g_queue_pop_head(&self->held))) {
        if (flow_stops(ret))
            gst_mini_object_unref(o);
        else if (GST_IS_BUFFER(o))
            ret = gst_pad_push(self->srcpad, GST_BUFFER_CAST(o));
        else
            gst_pad_push_event(self->srcpad, GST_EVENT_CAST(o));
    }
    return ret;
}

void gst_whisper_pads_drop_held(GstWhisper *self)
{
    g_queue_clear_full(&self->held, (GDestroyNotify)gst_mini_object_unref);
}

/* A serialized or sticky event from upstream: on the filter, on to src with the audio
 * (after what is held: behind it while the text has not flowed, else after releasing
 * it); on the transcriber the audio's events end here. */
static gboolean forward_audio_event(GstWhisper *self, GstEvent *event)
{
    if (!self->srcpad) {
        gst_event_unref(event);
        return TRUE;
    }
    if (!g_queue_is_empty(&self->held)) {
        if (GST_EVENT_TYPE(event) != GST_EVENT_EOS && should_hold(self, FALSE)) {
            g_queue_push_tail(&self->held, event);
            return TRUE;
        }
        release_held(self);
    }
    return gst_pad_push_event(self->srcpad, event);
}

/* Whether upstream is live (asked once per activation). */
static gboolean upstream_is_live(GstWhisper *self)
{
    gboolean live = FALSE;
    if (gst_whisper_queue_upstream_live(self, &live))
        return live;
    GstQuery *q = gst_query_new_latency();
    if (gst_pad_peer_query(self->sinkpad, q))
        gst_query_parse_latency(q, &live, NULL, NULL);
    gst_query_unref(q);
    gst_whisper_queue_set_upstream_live(self, live);
    GST_INFO_OBJECT(self, "upstream is %slive", live ? "" : "not ");
    return live;
}

/* The flow chain returns: the text pad's (stored by the worker; OK while nothing was
 * pushed, then NOT_LINKED if the pad is not linked), combined with src's `audio` on
 * the filter (see the top).  Streaming thread only: the combiner is its. */
static GstFlowReturn combine_flows(GstWhisper *self, GstFlowReturn audio)
{
    GstFlowReturn text = gst_whisper_queue_srcresult(self);
    if (text == GST_FLOW_OK && !gst_pad_is_linked(self->textpad))
        text = GST_FLOW_NOT_LINKED;
    GstFlowReturn ret = gst_flow_combiner_update_pad_flow(self->flows, self->textpad, text);
    if (self->srcpad)
        ret = gst_flow_combiner_update_pad_flow(self->flows, self->srcpad, audio);
    return ret;
}

static void push_src_tags(GstWhisper *self, GQueue *tags)
{
    GstTagList *t;
    while ((t = g_queue_pop_head(tags)))
        forward_audio_event(self, gst_event_new_tag(t));
}

/* Whether the stream is live now (the step property, or upstream). */
static gboolean stream_live(GstWhisper *self)
{
    return gst_whisper_queue_step(self) > 0 || upstream_is_live(self);
}

/* Queues samples the resampler owed for the audio before (a stretch is about to end,
 * or the format changes).  FALSE: out of memory (ERROR posted). */
static gboolean queue_tail(GstWhisper *self, const GstWhisperSamples *s)
{
    if (s->n == 0) /* the usual case: no resampler, or nothing fed since its reset */
        return TRUE;
    gboolean live = stream_live(self);
    GQueue tags = G_QUEUE_INIT;
    GstClockTime arrived = live ? gst_whisper_clock_now(self) : GST_CLOCK_TIME_NONE;
    gboolean ok = gst_whisper_queue_samples(self, GST_CLOCK_TIME_NONE, FALSE, s, live, arrived,
                                            &tags);
    push_src_tags(self, &tags);
    return ok;
}

/* The resampler's tail queued before its stretch ends (DISCONT, GAP, SEGMENT, EOS). */
static gboolean queue_drain(GstWhisper *self)
{
    GstWhisperSamples s;
    return gst_whisper_input_drain(self, &s) && queue_tail(self, &s);
}

static GstFlowReturn gst_whisper_chain(GstPad *pad, GstObject *parent, GstBuffer *buf)
{
    GstWhisper *self = GST_WHISPER_CAST(parent);
    (void)pad;
    /* text_src failed or is flushing: upstream hears it, as from any element */
    GstFlowReturn text = gst_whisper_queue_srcresult(self);
    if (flow_stops(text)) {
        GST_DEBUG_OBJECT(self, "text_src: %s", gst_flow_get_name(text));
        gst_buffer_unref(buf);
        return text;
    }
    if (!gst_whisper_input_have_caps(self)) { /* no CAPS event yet */
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("No audio format was set"),
                          ("a buffer came before any CAPS event"));
        gst_buffer_unref(buf);
        return GST_FLOW_NOT_NEGOTIATED;
    }
    gboolean live = stream_live(self);
    gboolean discont = GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT);
    /* the resampler's tail belongs to the stretch a DISCONT ends */
    if (discont && !queue_drain(self)) {
        gst_buffer_unref(buf);
        return GST_FLOW_ERROR;
    }

    /* The samples go to the worker before the buffer goes downstream: an element
     * there that waits for text (a muxer, an overlay) must not keep the worker from
     * the audio it needs.  Copying them is short and never waits for inference. */
    GstWhisperSamples s;
    if (!gst_whisper_input_map(self, buf, &s)) { /* ERROR posted */
        gst_buffer_unref(buf);
        return GST_FLOW_ERROR;
    }
    GQueue tags = G_QUEUE_INIT;
    GstClockTime arrived = live ? gst_whisper_clock_now(self) : GST_CLOCK_TIME_NONE;
    gboolean queued = gst_whisper_queue_samples(self, GST_BUFFER_PTS(buf), discont, &s, live,
                                                arrived, &tags);
    gst_whisper_input_unmap(buf, &s);
    push_src_tags(self, &tags);
    if (!queued) { /* out of memory: the ERROR is posted */
        gst_buffer_unref(buf);
        return GST_FLOW_ERROR;
    }
    if (!self->srcpad) { /* the transcriber: the audio ends here */
        gst_buffer_unref(buf);
        return combine_flows(self, GST_FLOW_OK);
    }
    if (should_hold(self, live)) {
        g_queue_push_tail(&self->held, buf);
        return combine_flows(self, GST_FLOW_OK);
    }
    GstFlowReturn held = release_held(self);
    if (flow_stops(held)) {
        gst_buffer_unref(buf);
        return combine_flows(self, held);
    }
    return combine_flows(self, gst_pad_push(self->srcpad, buf));
}

/* The input format, once per CAPS event (gstwhisperinput.c reads it and sets up the
 * conversion the model needs; a refusal posts an ERROR naming both caps). */
static gboolean sink_caps(GstWhisper *self, GstEvent *event)
{
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    GstWhisperSamples tail; /* a new format continues the stretch */
    if (!gst_whisper_input_set_caps(self, caps, &tail)) {
        gst_event_unref(event);
        return FALSE;
    }
    queue_tail(self, &tail);
    /* Not queued for the text pad: its caps never change (the worker sends them before
     * anything else), and an event item would end the open stretch's place at the
     * tail of the queue. */
    return forward_audio_event(self, event);
}

static gboolean sink_flush_start(GstWhisper *self, GstEvent *event)
{
    gst_whisper_queue_set_flushing(self, TRUE);
    gboolean ret = self->srcpad ? gst_pad_push_event(self->srcpad, gst_event_ref(event)) : TRUE;
    ret = gst_pad_push_event(self->textpad, event) && ret;
    /* waits for the window in flight to end; its text is discarded */
    gst_pad_pause_task(self->textpad);
    return ret;
}

static gboolean sink_flush_stop(GstWhisper *self, GstEvent *event)
{
    gst_whisper_queue_flush_stop(self);
    gst_whisper_input_reset(self);
    /* the task is paused: the worker state is ours */
    gst_whisper_worker_forget_item(self);
    gst_whisper_cues_forget(self);
    gst_whisper_text_reset(self);
    gst_flow_combiner_reset(self->flows);
    gst_whisper_pads_drop_held(self);
    gboolean ret = self->srcpad ? gst_pad_push_event(self->srcpad, gst_event_ref(event)) : TRUE;
    ret = gst_pad_push_event(self->textpad, event) && ret;
    /* a flush right after the start may have dropped the queued stream-start:
     * text_src must have it before the next segment (the task is paused, so this
     * thread may push) */
    gst_whisper_text_ensure_stream(self);
    gst_pad_start_task(self->textpad, gst_whisper_worker_loop, self, NULL);
    return ret;
}

/* text_src's own stream-start, in the audio's group. */
static GstEvent *text_stream_start(GstWhisper *self, GstEvent *event)
{
    guint group;
    gchar *id = gst_pad_create_stream_id(self->textpad, GST_ELEMENT(self), "text");
    GstEvent *ev = gst_event_new_stream_start(id);
    g_free(id);
    if (gst_event_parse_group_id(event, &group))
        gst_event_set_group_id(ev, group);
    gst_event_set_stream_flags(ev, GST_STREAM_FLAG_SPARSE);
    return ev;
}

static gboolean gst_whisper_sink_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
    GstWhisper *self = GST_WHISPER_CAST(parent);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_START:
        return sink_flush_start(self, event);
    case GST_EVENT_FLUSH_STOP:
        return sink_flush_stop(self, event);
    case GST_EVENT_STREAM_START:
        gst_whisper_queue_event(self, text_stream_start(self, event), NULL);
        return forward_audio_event(self, event);
    case GST_EVENT_CAPS:
        return sink_caps(self, event);
    case GST_EVENT_SEGMENT: {
        const GstSegment *seg;
        gst_event_parse_segment(event, &seg);
        queue_drain(self);
        gst_whisper_queue_segment(self, seg, event);
        return forward_audio_event(self, event);
    }
    case GST_EVENT_GAP:
        queue_drain(self);
        gst_whisper_queue_event(self, gst_event_ref(event), NULL);
        return forward_audio_event(self, event);
    case GST_EVENT_EOS: {
        GQueue tags = G_QUEUE_INIT;
        queue_drain(self);
        gst_whisper_queue_event(self, gst_event_ref(event), &tags);
        push_src_tags(self, &tags);
        return forward_audio_event(self, event);
    }
    default:
        if (GST_EVENT_IS_SERIALIZED(event) || GST_EVENT_IS_STICKY(event))
            return forward_audio_event(self, event);
        return gst_pad_event_default(pad, parent, event);
    }
}

/* Answers a CAPS query on `pad` with its template intersected with what the peer of
 * `other` (the audio pad across the element) allows: audio passes through. */
static gboolean proxy_caps_query(GstPad *pad, GstPad *other, GstQuery *query)
{
    GstCaps *filter, *tmpl = gst_pad_get_pad_template_caps(pad);
    gst_query_parse_caps(query, &filter);
    GstCaps *f = filter ? gst_caps_intersect(filter, tmpl) : gst_caps_ref(tmpl);
    GstCaps *peer = gst_pad_peer_query_caps(other, f);
    GstCaps *res = gst_caps_intersect(peer, tmpl);
    gst_query_set_caps_result(query, res);
    gst_caps_unref(res);
    gst_caps_unref(peer);
    gst_caps_unref(f);
    gst_caps_unref(tmpl);
    return TRUE;
}

/* A CAPS query answered by the pad's template (with the query's filter). */
static gboolean template_caps_query(GstPad *pad, GstQuery *query)
{
    GstCaps *filter, *tmpl = gst_pad_get_pad_template_caps(pad);
    gst_query_parse_caps(query, &filter);
    GstCaps *res = filter ? gst_caps_intersect_full(filter, tmpl, GST_CAPS_INTERSECT_FIRST)
                          : gst_caps_ref(tmpl);
    gst_query_set_caps_result(query, res);
    gst_caps_unref(res);
    gst_caps_unref(tmpl);
    return TRUE;
}

/* `intersect`: caps that can intersect the template are taken (the sink, as the
 * filter's sink takes them: caps missing a field, raw audio without a layout say, reach
 * the CAPS event, which names them in an ERROR); else they must be a subset. */
static gboolean template_accept_caps_query(GstPad *pad, GstQuery *query, gboolean intersect)
{
    GstCaps *caps, *tmpl = gst_pad_get_pad_template_caps(pad);
    gst_query_parse_accept_caps(query, &caps);
    gst_query_set_accept_caps_result(query, intersect ? gst_caps_can_intersect(caps, tmpl)
                                                      : gst_caps_is_subset(caps, tmpl));
    gst_caps_unref(tmpl);
    return TRUE;
}

static gboolean gst_whisper_sink_query(GstPad *pad, GstObject *parent, GstQuery *query)
{
    GstWhisper *self = GST_WHISPER_CAST(parent);
    if (!self->srcpad) { /* the transcriber: the audio ends here, the template answers */
        if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS)
            return template_caps_query(pad, query);
        if (GST_QUERY_TYPE(query) == GST_QUERY_ACCEPT_CAPS)
            return template_accept_caps_query(pad, query, TRUE);
        if (GST_QUERY_TYPE(query) == GST_QUERY_ALLOCATION)
            return FALSE;
        return gst_pad_query_default(pad, parent, query);
    }
    switch (GST_QUERY_TYPE(query)) {
    /* audio questions are answered downstream of src */
    case GST_QUERY_CAPS:
        return proxy_caps_query(pad, self->srcpad, query);
    case GST_QUERY_ACCEPT_CAPS: {
        GstCaps *caps, *tmpl = gst_pad_get_pad_template_caps(pad);
        gst_query_parse_accept_caps(query, &caps);
        gboolean ok = gst_caps_can_intersect(caps, tmpl);
        gst_caps_unref(tmpl);
        if (ok && gst_pad_is_linked(self->srcpad))
            ok = gst_pad_peer_query_accept_caps(self->srcpad, caps);
        gst_query_set_accept_caps_result(query, ok);
        return TRUE;
    }
    case GST_QUERY_ALLOCATION:
        return gst_pad_peer_query(self->srcpad, query);
    default:
        return gst_pad_query_default(pad, parent, query);
    }
}

static gboolean gst_whisper_src_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
    GstWhisper *self = GST_WHISPER_CAST(parent);
    (void)pad;
    return gst_pad_push_event(self->sinkpad, event);
}

/* Upstream's latency plus `latency` when the element runs live: text for a stretch of
 * audio is final at most `latency` after it came. */
static gboolean text_latency_query(GstWhisper *self, GstQuery *query)
{
    if (!gst_pad_peer_query(self->sinkpad, query))
        return FALSE;
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency(query, &live, &min, &max);
    if (live || gst_whisper_props_step(self) > 0) {
        GstClockTime ours = gst_whisper_props_latency(self) * GST_MSECOND;
        min += ours;
        if (GST_CLOCK_TIME_IS_VALID(max))
            max += ours;
    }
    gst_query_set_latency(query, live, min, max);
    return TRUE;
}

static gboolean text_query(GstWhisper *self, GstPad *pad, GstQuery *query)
{
    switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS:
        return template_caps_query(pad, query);
    case GST_QUERY_ACCEPT_CAPS:
        return template_accept_caps_query(pad, query, FALSE);
    case GST_QUERY_LATENCY:
        return text_latency_query(self, query);
    default:
        return gst_pad_peer_query(self->sinkpad, query);
    }
}

static gboolean gst_whisper_src_query(GstPad *pad, GstObject *parent, GstQuery *query)
{
    GstWhisper *self = GST_WHISPER_CAST(parent);
    if (pad == self->textpad)
        return text_query(self, pad, query);
    if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS)
        return proxy_caps_query(pad, self->sinkpad, query);
    return gst_pad_peer_query(self->sinkpad, query);
}

static gboolean gst_whisper_text_activate_mode(GstPad *pad, GstObject *parent,
                                               GstPadMode mode, gboolean active)
{
    GstWhisper *self = GST_WHISPER_CAST(parent);
    if (mode != GST_PAD_MODE_PUSH)
        return FALSE;
    if (active) {
        gst_whisper_queue_set_flushing(self, FALSE);
        gst_whisper_text_reset(self);
        return gst_pad_start_task(pad, gst_whisper_worker_loop, self, NULL);
    }
    gst_whisper_queue_set_flushing(self, TRUE);
    return gst_pad_stop_task(pad);
}

static GstIterator *gst_whisper_iterate_internal_links(GstPad *pad, GstObject *parent)
{
    GstWhisper *self = GST_WHISPER_CAST(parent);
    /* the audio's way through; the transcriber's audio becomes its text */
    GstPad *out = self->srcpad ? self->srcpad : self->textpad;
    GstPad *other = pad == self->sinkpad ? out : self->sinkpad;
    GValue v = G_VALUE_INIT;
    g_value_init(&v, GST_TYPE_PAD);
    g_value_set_object(&v, other);
    GstIterator *it = gst_iterator_new_single(GST_TYPE_PAD, &v);
    g_value_unset(&v);
    return it;
}

void gst_whisper_pads_class_init(GstElementClass *element_class, gboolean transcriber)
{
    gst_element_class_add_static_pad_template(element_class, &sink_template);
    if (transcriber) {
        gst_element_class_add_static_pad_template(element_class, &transcriber_src_template);
    } else {
        gst_element_class_add_static_pad_template(element_class, &src_template);
        gst_element_class_add_static_pad_template(element_class, &text_template);
    }
}

void gst_whisper_pads_init(GstWhisper *self)
{
    self->sinkpad = gst_pad_new_from_static_template(&sink_template, "sink");
    gst_pad_set_chain_function(self->sinkpad, GST_DEBUG_FUNCPTR(gst_whisper_chain));
    gst_pad_set_event_function(self->sinkpad, GST_DEBUG_FUNCPTR(gst_whisper_sink_event));
    gst_pad_set_query_function(self->sinkpad, GST_DEBUG_FUNCPTR(gst_whisper_sink_query));
    gst_pad_set_iterate_internal_links_function(self->sinkpad,
        GST_DEBUG_FUNCPTR(gst_whisper_iterate_internal_links));
    gst_element_add_pad(GST_ELEMENT(self), self->sinkpad);

    if (!self->transcriber) {
        self->srcpad = gst_pad_new_from_static_template(&src_template, "src");
        gst_pad_set_event_function(self->srcpad, GST_DEBUG_FUNCPTR(gst_whisper_src_event));
        gst_pad_set_query_function(self->srcpad, GST_DEBUG_FUNCPTR(gst_whisper_src_query));
        gst_pad_set_iterate_internal_links_function(self->srcpad,
            GST_DEBUG_FUNCPTR(gst_whisper_iterate_internal_links));
        gst_pad_use_fixed_caps(self->srcpad);
        gst_element_add_pad(GST_ELEMENT(self), self->srcpad);
    }

    self->textpad = self->transcriber
        ? gst_pad_new_from_static_template(&transcriber_src_template, "src")
        : gst_pad_new_from_static_template(&text_template, "text_src");
    gst_pad_set_event_function(self->textpad, GST_DEBUG_FUNCPTR(gst_whisper_src_event));
    gst_pad_set_query_function(self->textpad, GST_DEBUG_FUNCPTR(gst_whisper_src_query));
    gst_pad_set_activatemode_function(self->textpad,
        GST_DEBUG_FUNCPTR(gst_whisper_text_activate_mode));
    gst_pad_set_iterate_internal_links_function(self->textpad,
        GST_DEBUG_FUNCPTR(gst_whisper_iterate_internal_links));
    gst_pad_use_fixed_caps(self->textpad);
    gst_element_add_pad(GST_ELEMENT(self), self->textpad);

    self->flows = gst_flow_combiner_new();
    gst_flow_combiner_add_pad(self->flows, self->textpad);
    if (self->srcpad)
        gst_flow_combiner_add_pad(self->flows, self->srcpad);
}
