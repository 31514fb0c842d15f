/* whisper: Whisper speech to text as a GStreamer element.
 *
 * Threads.  The streaming thread (chain) copies each buffer's samples into the
 * element's queue under `lock`, signals the worker and pushes the very same buffer
 * on `src`; it never waits for inference.  The worker is a GstTask on `text_src`: it
 * takes the audio off the queue, runs the windows (offline) or the re-runs (live),
 * and pushes text buffers, GAP events and the text pad's serialized events in the
 * order they came.
 *
 * The queue holds items in stream order: audio items (one per continuous stretch of
 * samples: a DISCONT, a gap in the timestamps, a GAP or SEGMENT event or EOS closes
 * one) and events for `text_src`.  An audio item keeps the samples from the first
 * one the next window needs, so memory stays bounded by one window (offline) or
 * 30 s (live).
 *
 * Offline windows are exactly the core's long form with window normalization on the
 * same samples: the stream's log-mel frames are computed piecewise with
 * wkv_mel_compute_range, each window is normalized on its own, and
 * wkv_longform_window returns the next seek.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstwhisper.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gst/audio/audio.h>

GST_DEBUG_CATEGORY_STATIC(gst_whisper_debug);
#define GST_CAT_DEFAULT gst_whisper_debug

#define DEFAULT_LANGUAGE "en"
#define DEFAULT_TRANSLATE FALSE
#define DEFAULT_THREADS 0
#define DEFAULT_STEP 0
#define DEFAULT_LIVE_STEP 2000 /* ms, when upstream is live and step is 0 */
#define DEFAULT_LATENCY 8000
#define DEFAULT_LATENESS 0
#define DEFAULT_PARTIAL_RESULTS FALSE
#define DEFAULT_CONDITION TRUE
#define DEFAULT_NO_SPEECH 0.6f

/* A jump in the timestamps larger than this closes the window. */
#define GAP_TOLERANCE (10 * GST_MSECOND)
/* Live: at most this much audio is kept uncommitted (one window). */
#define LIVE_MAX_SAMPLES WKV_N_SAMPLES
/* Offline, a source reads faster than inference: the streaming thread waits once the
 * worker holds this much audio not yet transcribed (4 windows, 7.7 MB), so a file of
 * any length costs the same memory.  Always more than one window, which the worker
 * needs to make progress. */
#define OFFLINE_MAX_SAMPLES (4 * (gint64)WKV_N_SAMPLES)

enum {
    PROP_0,
    PROP_MODEL,
    PROP_LANGUAGE,
    PROP_LANGUAGE_CODE,
    PROP_TRANSLATE,
    PROP_THREADS,
    PROP_STEP,
    PROP_LATENCY,
    PROP_LATENESS,
    PROP_PARTIAL_RESULTS,
    PROP_INITIAL_PROMPT,
    PROP_CONDITION,
    PROP_NO_SPEECH_THRESHOLD,
    PROP_BEAM_SIZE,
    PROP_BEST_OF,
    PROP_TEMPERATURE_FALLBACK,
    PROP_COMPRESSION_RATIO_THRESHOLD,
    PROP_LOGPROB_THRESHOLD,
    PROP_SEED,
    PROP_WINDOWS,
    PROP_TOKENS,
    PROP_ENCODER_MS,
    PROP_RTF,
};

typedef enum { ITEM_AUDIO, ITEM_EVENT } ItemType;

typedef struct {
    ItemType type;
    GstEvent *event; /* ITEM_EVENT: to push on text_src as it is */
    /* ITEM_AUDIO */
    float *pcm;       /* samples [base, base + n) of this stretch */
    gsize n, cap;
    gint64 base;      /* stream index of pcm[0] */
    gint64 len;       /* samples received: base + n */
    gboolean closed;  /* no more samples will come */
    gboolean eos;     /* closed by EOS (not by a discontinuity) */
    GstClockTime pts0; /* audio PTS of stream sample 0 */
    GstClockTime t0;  /* text time of stream sample 0: pts0, or later when the audio's
                       * timestamps went back (text never goes back) */
    gboolean live;    /* decided when the item starts */
    /* worker-owned */
    gint64 seek;      /* offline: next window's first frame */
    gint64 last_run;  /* live: len at the last run */
} WItem;

/* A segment collected from the core, to be pushed after the window. */
typedef struct {
    gchar *text;
    GstClockTime pts, duration;
    double avg_logprob, no_speech_prob;
    gboolean final;
} WSeg;

struct _GstWhisper {
    GstElement parent;
    GstPad *sinkpad, *srcpad, *textpad;

    /* properties: under the object lock */
    gchar *model_path;
    gchar *language;
    gboolean translate;
    gint threads;
    guint step_ms, latency_ms, lateness_ms;
    gboolean partial_results;
    gchar *initial_prompt;
    gboolean condition;
    gfloat no_speech_threshold;
    gint beam_size, best_of;
    gboolean temperature_fallback;
    gfloat compression_ratio_threshold, logprob_threshold;
    guint64 seed;

    /* statistics: under the object lock */
    guint64 stat_windows, stat_tokens;
    gdouble stat_encode_ms, stat_encoder_runs, stat_busy_ms, stat_audio_s;

    /* model and context: set in READY->PAUSED, freed in PAUSED->READY */
    GstWhisperModel *model;
    wkv_context *ctx;
    wkv_options opts; /* snapshot of the properties */
    gchar *opt_language;
    gchar *opt_prompt; /* opts.initial_prompt */
    gboolean detect_language; /* language "auto" on a multilingual model */
    gboolean detect_pending;  /* not detected yet for the current stretch */
    gint run_threads;

    /* shared with the worker: under `lock` */
    GMutex lock;
    GCond cond;
    GCond space;            /* the worker released audio, or flushing was set */
    GQueue items;           /* WItem*, stream order */
    gboolean flushing;
    GstSegment segment;     /* the audio's */
    GstClockTime next_pts;  /* expected PTS of the next buffer, or NONE */
    GstClockTime audio_end; /* audio PTS where the last buffer ended, or NONE */
    GstClockTime text_end;  /* latest text time any stretch reached, or NONE */
    guint run_step_ms;      /* `step` as it was at READY->PAUSED */
    gboolean upstream_live, live_known;
    GQueue src_tags;        /* GstTagList* to send on src before the next buffer */
    gboolean src_eos;       /* EOS went out on src: later tags go on text_src only */

    /* worker only */
    wkv_longform *lf;
    WItem *lf_item;
    float *win;
    float *scratch;
    gsize scratch_cap;
    GstClockTime text_pos;  /* where text_src's time has got to */
    GstClockTime text_floor; /* no text may start before: the last text buffer's PTS or
                              * the end of the last GAP sent, or NONE */
    GArray *committed;      /* live: prompt tokens committed so far */
    GArray *prev_hyp;       /* live: text tokens of the previous run */
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS("audio/x-raw, format = (string) { F32LE, S16LE }, rate = (int) 16000, "
                    "channels = (int) 1, layout = (string) interleaved"));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS("audio/x-raw, format = (string) { F32LE, S16LE }, rate = (int) 16000, "
                    "channels = (int) 1, layout = (string) interleaved"));

static GstStaticPadTemplate text_template = GST_STATIC_PAD_TEMPLATE("text_src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS("text/x-raw, format = (string) utf8"));

G_DEFINE_TYPE(GstWhisper, gst_whisper, GST_TYPE_ELEMENT)

static void gst_whisper_loop(gpointer data);

/* ------------------------------------------------------------------ items */

static void witem_free(WItem *it)
{
    if (!it)
        return;
    if (it->event)
        gst_event_unref(it->event);
    g_free(it->pcm);
    g_free(it);
}

static void wseg_free(gpointer p)
{
    WSeg *s = p;
    g_free(s->text);
    g_free(s);
}

/* The open audio item at the tail, or NULL.  Called with the lock. */
static WItem *tail_audio(GstWhisper *self)
{
    WItem *it = g_queue_peek_tail(&self->items);
    return it && it->type == ITEM_AUDIO && !it->closed ? it : NULL;
}

static void close_tail(GstWhisper *self)
{
    WItem *it = tail_audio(self);
    if (it)
        it->closed = TRUE;
    self->next_pts = GST_CLOCK_TIME_NONE;
}

static void queue_event(GstWhisper *self, GstEvent *event)
{
    WItem *it = g_new0(WItem, 1);
    it->type = ITEM_EVENT;
    it->event = event;
    g_queue_push_tail(&self->items, it);
    g_cond_signal(&self->cond);
}

/* Drops the item's samples before stream index `keep`. */
static void witem_drop_before(WItem *it, gint64 keep)
{
    if (keep <= it->base)
        return;
    if (keep > it->len)
        keep = it->len;
    gsize drop = (gsize)(keep - it->base);
    memmove(it->pcm, it->pcm + drop, (it->n - drop) * sizeof(float));
    it->n -= drop;
    it->base = keep;
}

/* Samples the worker holds, over all queued stretches.  Called with the lock. */
static gint64 held_samples(GstWhisper *self)
{
    gint64 n = 0;
    for (GList *l = self->items.head; l; l = l->next) {
        const WItem *it = l->data;
        if (it->type == ITEM_AUDIO)
            n += (gint64)it->n;
    }
    return n;
}

static void clear_items(GstWhisper *self)
{
    WItem *it;
    while ((it = g_queue_pop_head(&self->items)))
        witem_free(it);
    GstTagList *t;
    while ((t = g_queue_pop_head(&self->src_tags)))
        gst_tag_list_unref(t);
    g_cond_broadcast(&self->space);
}

/* ------------------------------------------------------------------ time */

static GstClockTime secs_to_ns(double s)
{
    /* segment times are multiples of 0.01 s computed in double: rounding to the
     * nearest nanosecond gives the exact value */
    return s <= 0 ? 0 : (GstClockTime)llround(s * 1e9);
}

static GstClockTime samples_to_ns(gint64 n)
{
    return gst_util_uint64_scale_int((guint64)n, GST_SECOND, WKV_SAMPLE_RATE);
}

/* ------------------------------------------------------------------ text pad */

/* Sends stream-start and caps on text_src if it lacks them. */
static void ensure_text_stream(GstWhisper *self)
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
    if (!gst_pad_has_current_caps(self->textpad))
        gst_pad_push_event(self->textpad,
                           gst_event_new_caps(gst_static_pad_template_get_caps(&text_template)));
}

/* Sends stream-start, caps and segment on text_src if it lacks them. */
static void ensure_text_events(GstWhisper *self)
{
    ensure_text_stream(self);
    GstEvent *ev = gst_pad_get_sticky_event(self->textpad, GST_EVENT_SEGMENT, 0);
    if (ev) {
        gst_event_unref(ev);
    } else {
        GstSegment seg;
        g_mutex_lock(&self->lock);
        seg = self->segment;
        g_mutex_unlock(&self->lock);
        if (seg.format != GST_FORMAT_TIME)
            gst_segment_init(&seg, GST_FORMAT_TIME);
        gst_pad_push_event(self->textpad, gst_event_new_segment(&seg));
    }
}

static void raise_floor(GstWhisper *self, GstClockTime t)
{
    if (!GST_CLOCK_TIME_IS_VALID(self->text_floor) || t > self->text_floor)
        self->text_floor = t;
}

/* GAP on text_src from where its time is up to `until`. */
static void push_gap(GstWhisper *self, GstClockTime until)
{
    if (!GST_CLOCK_TIME_IS_VALID(until))
        return;
    if (GST_CLOCK_TIME_IS_VALID(self->text_pos) && until <= self->text_pos)
        return;
    GstClockTime from = GST_CLOCK_TIME_IS_VALID(self->text_pos) ? self->text_pos : until;
    ensure_text_events(self);
    if (until > from)
        gst_pad_push_event(self->textpad, gst_event_new_gap(from, until - from));
    self->text_pos = until;
    raise_floor(self, until);
}

static const gchar *segment_language(GstWhisper *self)
{
    const wkv_model *m = gst_whisper_model_get(self->model);
    if (m && !wkv_model_is_multilingual(m))
        return "en";
    return self->opt_language ? self->opt_language : DEFAULT_LANGUAGE;
}

/* Pushes one segment: bus message, tags, and (finals, or partials when asked) a
 * text buffer.  Returns the flow of the push. */
static GstFlowReturn push_segment(GstWhisper *self, const WSeg *seg)
{
    const gchar *lang = segment_language(self);
    gboolean partial_buffers;
    GST_OBJECT_LOCK(self);
    partial_buffers = self->partial_results;
    GST_OBJECT_UNLOCK(self);
    WSeg guarded = *seg;
    const WSeg *s = &guarded;
    if ((s->final || partial_buffers) && GST_CLOCK_TIME_IS_VALID(self->text_floor) &&
        s->pts < self->text_floor) {
        /* text_src never goes back in time within a segment, whatever the input did
         * (e.g. `lateness` lowered while playing): start no earlier than the last text
         * or GAP, keep the end */
        GstClockTime end = s->pts + s->duration;
        GST_DEBUG_OBJECT(self, "segment at %" GST_TIME_FORMAT " moved to %" GST_TIME_FORMAT,
                         GST_TIME_ARGS(s->pts), GST_TIME_ARGS(self->text_floor));
        guarded.pts = self->text_floor;
        guarded.duration = end > guarded.pts ? end - guarded.pts : 0;
    }
    GstStructure *st = gst_structure_new("whisper-segment",
        "text", G_TYPE_STRING, s->text,
        "start", G_TYPE_UINT64, (guint64)s->pts,
        "end", G_TYPE_UINT64, (guint64)(s->pts + s->duration),
        "language", G_TYPE_STRING, lang,
        "avg-logprob", G_TYPE_DOUBLE, s->avg_logprob,
        "no-speech-prob", G_TYPE_DOUBLE, s->no_speech_prob,
        "final", G_TYPE_BOOLEAN, s->final, NULL);
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), st));

    ensure_text_events(self);
    if (s->final) {
        GstTagList *tags = gst_tag_list_new(GST_WHISPER_TAG_TRANSCRIPT, s->text,
                                            GST_TAG_LANGUAGE_CODE, lang, NULL);
        gst_tag_list_set_scope(tags, GST_TAG_SCOPE_STREAM);
        g_mutex_lock(&self->lock);
        if (!self->src_eos && !self->flushing)
            g_queue_push_tail(&self->src_tags, gst_tag_list_copy(tags));
        g_mutex_unlock(&self->lock);
        gst_pad_push_event(self->textpad, gst_event_new_tag(tags));
    } else if (!partial_buffers) {
        return GST_FLOW_OK;
    }

    /* a gap before the text keeps the time moving */
    if (!GST_CLOCK_TIME_IS_VALID(self->text_pos) || s->pts > self->text_pos)
        push_gap(self, s->pts);
    gsize len = strlen(s->text);
    GstBuffer *buf = gst_buffer_new_allocate(NULL, len, NULL);
    gst_buffer_fill(buf, 0, s->text, len);
    GST_BUFFER_PTS(buf) = s->pts;
    GST_BUFFER_DURATION(buf) = s->duration;
    if (!s->final)
        GST_BUFFER_FLAG_SET(buf, GST_BUFFER_FLAG_DELTA_UNIT);
    if (s->final && (!GST_CLOCK_TIME_IS_VALID(self->text_pos) ||
                     s->pts + s->duration > self->text_pos))
        self->text_pos = s->pts + s->duration;
    raise_floor(self, s->pts);
    GstFlowReturn ret = gst_pad_push(self->textpad, buf);
    if (ret == GST_FLOW_NOT_LINKED)
        ret = GST_FLOW_OK;
    return ret;
}

/* ------------------------------------------------------------------ core glue */

typedef struct {
    GstWhisper *self;
    GstClockTime t0;
    GstClockTime limit; /* end of a stretch a discontinuity closed, or NONE */
    GPtrArray *segs;
} CollectCtx;

static int collect_segment(const wkv_segment *seg, void *user)
{
    CollectCtx *c = user;
    WSeg *s = g_new0(WSeg, 1);
    guint lateness;
    GST_OBJECT_LOCK(c->self);
    lateness = c->self->lateness_ms;
    GST_OBJECT_UNLOCK(c->self);
    GstClockTime a = secs_to_ns(seg->start), b = secs_to_ns(seg->end);
    s->text = g_strdup(seg->text);
    s->pts = c->t0 + a;
    s->duration = b > a ? b - a : 0;
    s->avg_logprob = seg->avg_logprob;
    s->no_speech_prob = seg->no_speech_prob;
    s->final = TRUE;
    if (GST_CLOCK_TIME_IS_VALID(c->limit)) {
        /* the last window of a stretch that a DISCONT or a gap closed: no text past
         * the hole (at EOS the segments stay exactly the long form's); the hole is in
         * the audio's time, before `lateness` */
        if (s->pts >= c->limit) {
            wseg_free(s);
            return 0;
        }
        if (s->pts + s->duration > c->limit)
            s->duration = c->limit - s->pts;
    }
    s->pts += lateness * GST_MSECOND;
    g_ptr_array_add(c->segs, s);
    return 0;
}

static void account(GstWhisper *self, double busy_ms, double audio_s)
{
    const wkv_stats *st = wkv_context_stats(self->ctx);
    GST_OBJECT_LOCK(self);
    self->stat_windows = (guint64)st->windows;
    self->stat_tokens = (guint64)st->tokens_decoded;
    self->stat_encode_ms = st->encode_ms;
    self->stat_encoder_runs = (double)st->encoder_runs;
    self->stat_busy_ms += busy_ms;
    self->stat_audio_s += audio_s;
    GST_OBJECT_UNLOCK(self);
}

static float *scratch_reserve(GstWhisper *self, gsize n)
{
    if (n > self->scratch_cap) {
        self->scratch = g_renew(float, self->scratch, n);
        self->scratch_cap = n;
    }
    return self->scratch;
}

/* ------------------------------------------------------------------ live */

static gboolean worker_error(GstWhisper *self, const gchar *what, char *err)
{
    GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("Whisper inference failed"),
                      ("%s: %s", what, err ? err : "unknown error"));
    free(err);
    return FALSE;
}

/* Live mode (reference doc section 7): every `step` ms the audio buffered since the
 * last commit (at most 30 s) is decoded again with a fresh cross-KV cache and the
 * committed text as the prompt.  LocalAgreement-2: the text tokens two consecutive
 * runs agree on are committed, a whole segment at a time, and the audio up to the
 * end of the last committed segment is dropped.  When the oldest uncommitted audio
 * would be older than `latency` at the next run (or the buffer reaches 30 s, or the
 * stream ends), the latest hypothesis's complete segments are committed without
 * waiting for agreement. */

typedef struct {
    int tok0, tok1;       /* tokens [tok0, tok1) of the run, timestamps included */
    double start, end;    /* seconds from the buffer's start */
    gboolean complete;    /* closed by a timestamp */
} LiveSeg;

/* Initial prompt: the reference encodes " " + prompt.strip() as previous text. */
static void live_seed_prompt(GstWhisper *self)
{
    /* the snapshot taken at READY->PAUSED, like every other decoding setting */
    if (!self->opt_prompt || !self->model)
        return;
    gchar *prompt = g_strdup(self->opt_prompt);
    const wkv_model *m = gst_whisper_model_get(self->model);
    gchar *text = g_strdup_printf(" %s", g_strstrip(prompt));
    int n = wkv_text_to_tokens(m, text, NULL, 0);
    if (n > 0) {
        int *ids = g_new(int, n);
        if (wkv_text_to_tokens(m, text, ids, n) == n)
            g_array_append_vals(self->committed, ids, (guint)n);
        g_free(ids);
    }
    g_free(text);
    g_free(prompt);
}

/* Lock held. */
static guint live_step_ms(GstWhisper *self)
{
    return self->run_step_ms ? self->run_step_ms : DEFAULT_LIVE_STEP;
}

/* Lock held. */
static gboolean live_ready(GstWhisper *self, WItem *it)
{
    if (it->closed)
        return it->len > it->base;
    gint64 step = (gint64)live_step_ms(self) * WKV_SAMPLE_RATE / 1000;
    return it->len - it->last_run >= step && it->len > it->base;
}

/* Cuts a run's tokens into segments at timestamp pairs, like the long form. */
static GArray *live_split(const wkv_model *m, const wkv_window_result *r, double duration)
{
    const int tb = wkv_model_specials(m)->timestamp_begin;
    const int *t = r->tokens;
    const int n = r->n_tokens;
    GArray *segs = g_array_new(FALSE, TRUE, sizeof(LiveSeg));
    int last = 0;
    for (int i = 1; i < n; i++) {
        if (t[i - 1] >= tb && t[i] >= tb) {
            LiveSeg s = {last, i, (t[last] - tb) * 0.02, (t[i - 1] - tb) * 0.02, TRUE};
            g_array_append_val(segs, s);
            last = i;
        }
    }
    if (last < n) {
        /* text after the last pair: complete when it ends with a timestamp */
        gboolean closed = n - last >= 2 && t[n - 1] >= tb;
        double start = t[last] >= tb ? (t[last] - tb) * 0.02 : 0.0;
        LiveSeg s = {last, n, start, closed ? (t[n - 1] - tb) * 0.02 : duration, closed};
        g_array_append_val(segs, s);
    }
    return segs;
}

/* Appends a segment of a live run unless its text is blank; takes `text`. */
static void add_live_seg(GPtrArray *out, gchar *text, GstClockTime base_ts, double start,
                         double end, const wkv_window_result *r, gboolean final)
{
    gchar *stripped = g_strstrip(g_strdup(text));
    if (!*stripped) {
        g_free(stripped);
        g_free(text);
        return;
    }
    g_free(stripped);
    WSeg *w = g_new0(WSeg, 1);
    w->text = text;
    w->pts = base_ts + secs_to_ns(start);
    w->duration = secs_to_ns(end) - secs_to_ns(start);
    w->avg_logprob = r->avg_logprob;
    w->no_speech_prob = r->no_speech_prob;
    w->final = final;
    g_ptr_array_add(out, w);
}

static gchar *live_text(const wkv_model *m, const int *toks, int n)
{
    char *t = wkv_tokens_to_text(m, toks, n, 1);
    gchar *g = g_strdup(t ? t : "");
    free(t);
    return g;
}

/* Text tokens (below eot) of tokens [a, b). */
static void text_tokens(const wkv_model *m, const int *t, int a, int b, GArray *out)
{
    const int eot = wkv_model_specials(m)->eot;
    for (int i = a; i < b; i++)
        if (t[i] < eot)
            g_array_append_val(out, t[i]);
}

/* One live run on `it`; the lock is held on entry and exit. */
static gboolean live_run(GstWhisper *self, WItem *it)
{
    const wkv_model *m = gst_whisper_model_get(self->model);
    gint64 base = it->base;
    gint64 n = MIN(it->len - base, (gint64)LIVE_MAX_SAMPLES);
    gboolean at_end = it->closed && base + n == it->len;
    GstClockTime t0 = it->t0;
    float *pcm = scratch_reserve(self, (gsize)n + 1);
    memcpy(pcm, it->pcm, (gsize)n * sizeof(float));
    it->last_run = it->len;
    gint64 pending = it->len - base; /* audio waiting for text, in samples */
    guint latency, step = live_step_ms(self), lateness;
    GST_OBJECT_LOCK(self);
    latency = self->latency_ms;
    lateness = self->lateness_ms;
    GST_OBJECT_UNLOCK(self);
    g_mutex_unlock(&self->lock);

    gint64 t_start = g_get_monotonic_time();
    char *err = NULL;
    wkv_mel *mel = wkv_mel_compute(m, pcm, (size_t)n, self->run_threads, &err);
    if (!mel) {
        g_mutex_lock(&self->lock);
        return worker_error(self, "log-mel", err);
    }
    int size = (int)MIN((gint64)WKV_N_FRAMES, mel->content_frames);
    wkv_mel_window(mel, 0, size, WKV_MEL_WINDOW, self->win);
    wkv_mel_free(mel);
    wkv_window_result r;
    memset(&r, 0, sizeof r);
    const int *prompt = NULL;
    int n_prompt = 0;
    if (self->opts.condition_on_previous_text || self->committed->len) {
        prompt = (const int *)(void *)self->committed->data;
        n_prompt = (int)self->committed->len;
    }
    if (size > 0 && self->detect_language) {
        /* live language=auto: detect once, on the first run's audio */
        int lang = wkv_detect_language(self->ctx, self->win, NULL, &err);
        if (lang < 0) {
            g_mutex_lock(&self->lock);
            return worker_error(self, "language detection", err);
        }
        g_free(self->opt_language);
        self->opt_language = g_strdup(wkv_lang_code(m, lang));
        self->opts.language = self->opt_language;
        self->detect_language = self->detect_pending = FALSE;
        GST_INFO_OBJECT(self, "detected language %s (live)", self->opt_language);
    }
    if (size > 0 && (wkv_encode(self->ctx, self->win) != 0 ||
                     wkv_decode_window(self->ctx, prompt, n_prompt, &self->opts, &r, &err) != 0)) {
        g_mutex_lock(&self->lock);
        return worker_error(self, "live run", err ? err : strdup("the encoder failed"));
    }
    double busy_ms = (g_get_monotonic_time() - t_start) / 1000.0;
    gboolean silent = size <= 0 || (self->opts.no_speech_threshold < 1.0f &&
                                    r.no_speech_prob > self->opts.no_speech_threshold &&
                                    !(r.avg_logprob > self->opts.logprob_threshold));
    double duration = (double)n / WKV_SAMPLE_RATE;
    GArray *segs = silent ? g_array_new(FALSE, TRUE, sizeof(LiveSeg))
                          : live_split(m, &r, duration);

    /* agreement with the previous run, in text tokens */
    GArray *hyp = g_array_new(FALSE, FALSE, sizeof(int));
    text_tokens(m, r.tokens, 0, silent ? 0 : r.n_tokens, hyp);
    guint agree = 0;
    while (agree < hyp->len && agree < self->prev_hyp->len &&
           g_array_index(hyp, int, agree) == g_array_index(self->prev_hyp, int, agree))
        agree++;
    /* Would the oldest waiting audio be older than `latency` once the next run is
     * done?  That run starts after max(step, this run) and takes about as long as
     * this one (with a margin). */
    gboolean force = at_end || n >= LIVE_MAX_SAMPLES ||
                     (double)pending * 1000.0 / WKV_SAMPLE_RATE + MAX((double)step, busy_ms) +
                             busy_ms * 1.25 >= latency;

    guint n_commit = 0, text_seen = 0;
    for (guint i = 0; i < segs->len; i++) {
        LiveSeg *s = &g_array_index(segs, LiveSeg, i);
        GArray *tt = g_array_new(FALSE, FALSE, sizeof(int));
        text_tokens(m, r.tokens, s->tok0, s->tok1, tt);
        text_seen += tt->len;
        g_array_unref(tt);
        gboolean ok = (s->complete || at_end) && (force || text_seen <= agree);
        if (!ok)
            break;
        n_commit = i + 1;
    }
    if (force && n_commit == 0 && segs->len > 0 && !at_end) {
        /* no complete segment yet: the whole hypothesis becomes final so that the
         * promise holds */
        n_commit = segs->len;
    }

    GST_DEBUG_OBJECT(self, "live run on %.2f s (%.2f s waiting) took %.0f ms: %u segments, "
                     "%u/%u tokens agreed, %scommitting %u", n / 16000.0, pending / 16000.0,
                     busy_ms, segs->len, agree, hyp->len, force ? "forced, " : "", n_commit);
    GPtrArray *out = g_ptr_array_new_with_free_func(wseg_free);
    double trim = 0; /* seconds of the buffer done with */
    guint committed_text = 0;
    GstClockTime base_ts = t0 + samples_to_ns(base) + lateness * GST_MSECOND;
    for (guint i = 0; i < n_commit; i++) {
        LiveSeg *s = &g_array_index(segs, LiveSeg, i);
        double end = MIN(s->end, duration);
        double start = MIN(s->start, end);
        gchar *text = live_text(m, r.tokens + s->tok0, s->tok1 - s->tok0);
        GArray *tt = g_array_new(FALSE, FALSE, sizeof(int));
        text_tokens(m, r.tokens, s->tok0, s->tok1, tt);
        committed_text += tt->len;
        g_array_unref(tt);
        g_array_append_vals(self->committed, r.tokens + s->tok0, (guint)(s->tok1 - s->tok0));
        if (end > start)
            add_live_seg(out, text, base_ts, start, end, &r, TRUE);
        else
            g_free(text);
        trim = MAX(trim, end);
    }
    if (force && (n_commit == segs->len || silent))
        trim = duration; /* nothing left worth waiting for */
    if (self->committed->len > 1000) /* the decoder uses the last 223 */
        g_array_remove_range(self->committed, 0, self->committed->len - 1000);
    /* the uncommitted rest: one partial */
    if (n_commit < segs->len) {
        LiveSeg *first = &g_array_index(segs, LiveSeg, n_commit);
        LiveSeg *last = &g_array_index(segs, LiveSeg, segs->len - 1);
        gchar *text = live_text(m, r.tokens + first->tok0, last->tok1 - first->tok0);
        /* a partial covers all the audio since the last final: the next run starts
         * there, so the buffer that supersedes it never starts earlier */
        add_live_seg(out, text, base_ts, trim, duration, &r, FALSE);
    }
    /* the next run is compared with what is left of this one */
    g_array_set_size(self->prev_hyp, 0);
    if (committed_text < hyp->len)
        g_array_append_vals(self->prev_hyp, &g_array_index(hyp, int, committed_text),
                            hyp->len - committed_text);
    g_array_unref(hyp);
    g_array_unref(segs);
    wkv_window_result_clear(&r);
    account(self, busy_ms, 0);
    GST_OBJECT_LOCK(self);
    self->stat_audio_s += (double)step / 1000.0;
    GST_OBJECT_UNLOCK(self);

    gint64 trim_samples = base + (gint64)llround(trim * WKV_SAMPLE_RATE);
    g_mutex_lock(&self->lock);
    if (self->flushing) {
        g_ptr_array_unref(out);
        return TRUE;
    }
    if (trim_samples > it->base)
        witem_drop_before(it, trim_samples);
    if (at_end)
        witem_drop_before(it, it->len);
    gint64 new_base = it->base;
    g_mutex_unlock(&self->lock);

    GstFlowReturn ret = GST_FLOW_OK;
    for (guint i = 0; i < out->len && ret == GST_FLOW_OK; i++)
        ret = push_segment(self, g_ptr_array_index(out, i));
    g_ptr_array_unref(out);
    if (ret == GST_FLOW_OK)
        push_gap(self, t0 + samples_to_ns(new_base) + lateness * GST_MSECOND);
    g_mutex_lock(&self->lock);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING && ret != GST_FLOW_EOS) {
        GST_ELEMENT_FLOW_ERROR(self, ret);
        return FALSE;
    }
    return TRUE;
}

/* ------------------------------------------------------------------ worker */

/* One offline window of `it`, which the lock is held for on entry and exit.
 * Returns FALSE on a fatal error. */
static gboolean offline_window(GstWhisper *self, WItem *it, int size)
{
    const wkv_model *model = gst_whisper_model_get(self->model);
    gint64 seek = it->seek;
    gint64 lo = MAX(0, seek * WKV_HOP - WKV_N_FFT / 2);
    gint64 hi = it->closed ? it->len : MIN(it->len, (seek + size - 1) * WKV_HOP + WKV_N_FFT / 2);
    gint64 stream_len = it->closed ? it->len : -1;
    GstClockTime t0 = it->t0;
    GstClockTime limit = it->closed && !it->eos ? t0 + samples_to_ns(it->len) : GST_CLOCK_TIME_NONE;
    if (hi < lo)
        hi = lo;
    float *pcm = scratch_reserve(self, (gsize)(hi - lo) + 1);
    memcpy(pcm, it->pcm + (lo - it->base), (gsize)(hi - lo) * sizeof(float));
    g_mutex_unlock(&self->lock);

    gint64 t_start = g_get_monotonic_time();
    char *err = NULL;
    /* language "auto": detect on the first window's 3000 frames (reference doc §2;
     * a short stream has ended, so its zeros follow) */
    gboolean detect = self->detect_pending;
    wkv_mel *mel = wkv_mel_compute_range(model, pcm, (size_t)(hi - lo), lo, stream_len, seek,
                                         detect ? WKV_N_FRAMES : size, self->run_threads, &err);
    if (!mel) {
        g_mutex_lock(&self->lock);
        return worker_error(self, "log-mel", err);
    }
    if (detect) {
        wkv_mel_window(mel, 0, WKV_N_FRAMES, WKV_MEL_WINDOW, self->win);
        int lang = wkv_detect_language(self->ctx, self->win, NULL, &err);
        if (lang < 0 || wkv_longform_set_language(self->lf, wkv_lang_code(model, lang)) != 0) {
            wkv_mel_free(mel);
            g_mutex_lock(&self->lock);
            return worker_error(self, "language detection", err);
        }
        g_free(self->opt_language);
        self->opt_language = g_strdup(wkv_lang_code(model, lang));
        self->detect_pending = FALSE;
        GST_INFO_OBJECT(self, "detected language %s", self->opt_language);
    }
    wkv_mel_window(mel, 0, size, WKV_MEL_WINDOW, self->win);
    wkv_mel_free(mel);

    CollectCtx c = {self, t0, limit, g_ptr_array_new_with_free_func(wseg_free)};
    gint64 next = wkv_longform_window(self->lf, seek, size, self->win, collect_segment, &c, &err);
    if (next < 0) {
        g_ptr_array_unref(c.segs);
        g_mutex_lock(&self->lock);
        return worker_error(self, "window", err);
    }
    account(self, (g_get_monotonic_time() - t_start) / 1000.0,
            (double)(MIN(next, seek + size) - seek) / 100.0);
    GST_DEBUG_OBJECT(self, "window at frame %" G_GINT64_FORMAT " (%d frames): %u segments, "
                     "next %" G_GINT64_FORMAT, seek, size, c.segs->len, next);

    g_mutex_lock(&self->lock);
    if (self->flushing) { /* cancelled: a flush came in meanwhile */
        g_ptr_array_unref(c.segs);
        return TRUE;
    }
    it->seek = next;
    witem_drop_before(it, MAX(0, next * WKV_HOP - WKV_N_FFT / 2));
    g_cond_broadcast(&self->space);
    g_mutex_unlock(&self->lock);

    GstFlowReturn ret = GST_FLOW_OK;
    for (guint i = 0; i < c.segs->len && ret == GST_FLOW_OK; i++)
        ret = push_segment(self, g_ptr_array_index(c.segs, i));
    g_ptr_array_unref(c.segs);
    /* nothing can start before the next window any more (a seek past the end of a
     * stretch that a discontinuity closed stops at its end: the next one starts there) */
    GstClockTime until = t0 + samples_to_ns(next * WKV_HOP);
    if (ret == GST_FLOW_OK)
        push_gap(self, GST_CLOCK_TIME_IS_VALID(limit) ? MIN(until, limit) : until);

    g_mutex_lock(&self->lock);
    if (ret != GST_FLOW_OK && ret != GST_FLOW_FLUSHING && ret != GST_FLOW_EOS) {
        GST_ELEMENT_FLOW_ERROR(self, ret);
        return FALSE;
    }
    return TRUE;
}

/* Starts or ends the per-item decoding state.  Lock held. */
static gboolean begin_item(GstWhisper *self, WItem *it)
{
    if (self->lf_item == it)
        return TRUE;
    wkv_longform_free(self->lf);
    self->lf = NULL;
    self->lf_item = it;
    if (self->committed)
        g_array_set_size(self->committed, 0);
    if (self->prev_hyp)
        g_array_set_size(self->prev_hyp, 0);
    if (it->live) { /* offline, the long form encodes the prompt itself */
        live_seed_prompt(self);
        return TRUE;
    }
    char *err = NULL;
    self->detect_pending = self->detect_language;
    self->lf = wkv_longform_new(self->ctx, &self->opts, &err);
    if (!self->lf)
        return worker_error(self, "long form", err);
    return TRUE;
}

static void gst_whisper_loop(gpointer data)
{
    GstWhisper *self = data;
    g_mutex_lock(&self->lock);
    for (;;) {
        if (self->flushing)
            goto pause;
        WItem *it = g_queue_peek_head(&self->items);
        if (!it) {
            g_cond_wait(&self->cond, &self->lock);
            continue;
        }
        if (it->type == ITEM_EVENT) {
            g_queue_pop_head(&self->items);
            GstEvent *ev = it->event;
            it->event = NULL;
            witem_free(it);
            g_mutex_unlock(&self->lock);
            if (GST_EVENT_TYPE(ev) == GST_EVENT_GAP) {
                GstClockTime ts, dur;
                gst_event_parse_gap(ev, &ts, &dur);
                ensure_text_events(self);
                GstClockTime end = GST_CLOCK_TIME_IS_VALID(dur) ? ts + dur : ts;
                if (GST_CLOCK_TIME_IS_VALID(self->text_floor) && ts < self->text_floor) {
                    /* text already went past its start (lateness, timestamps that went
                     * back): only the part after the floor, if any */
                    GstClockTime from = self->text_floor;
                    gst_event_unref(ev);
                    if (end <= from)
                        return;
                    ev = gst_event_new_gap(from, end - from);
                }
                if (!GST_CLOCK_TIME_IS_VALID(self->text_pos) || end > self->text_pos)
                    self->text_pos = end;
                raise_floor(self, end);
            } else if (GST_EVENT_TYPE(ev) == GST_EVENT_SEGMENT) {
                ensure_text_stream(self);
                self->text_pos = self->text_floor = GST_CLOCK_TIME_NONE;
            } else if (GST_EVENT_TYPE(ev) == GST_EVENT_EOS) {
                ensure_text_events(self);
            }
            gst_pad_push_event(self->textpad, ev);
            return;
        }
        /* audio */
        if (self->lf_item != it) {
            if (!begin_item(self, it))
                goto error;
            if (!GST_CLOCK_TIME_IS_VALID(self->text_pos)) {
                /* a sparse stream: this GAP prerolls the sinks downstream of text_src
                 * while the first window fills */
                GstClockTime t0 = it->t0;
                g_mutex_unlock(&self->lock);
                ensure_text_events(self);
                gst_pad_push_event(self->textpad, gst_event_new_gap(t0, 0));
                self->text_pos = t0;
                raise_floor(self, t0);
                return;
            }
        }
        gboolean ok = TRUE;
        if (it->live) {
            if (!live_ready(self, it)) {
                if (it->closed)
                    goto item_done;
                g_cond_wait(&self->cond, &self->lock);
                continue;
            }
            ok = live_run(self, it);
        } else {
            gint64 content = it->len / WKV_HOP;
            int size;
            if (it->closed) {
                if (it->seek >= content)
                    goto item_done;
                size = (int)MIN((gint64)WKV_N_FRAMES, content - it->seek);
            } else if (it->len >= (it->seek + WKV_N_FRAMES - 1) * WKV_HOP + WKV_N_FFT / 2) {
                size = WKV_N_FRAMES;
            } else {
                g_cond_wait(&self->cond, &self->lock);
                continue;
            }
            ok = offline_window(self, it, size);
        }
        if (!ok)
            goto error;
        g_mutex_unlock(&self->lock);
        return;

    item_done:
        g_queue_pop_head(&self->items);
        {
            GstClockTime end = it->t0 + samples_to_ns(it->len);
            gboolean live = it->live;
            if (self->lf_item == it) {
                wkv_longform_free(self->lf);
                self->lf = NULL;
                self->lf_item = NULL;
            }
            witem_free(it);
            g_cond_broadcast(&self->space);
            g_mutex_unlock(&self->lock);
            (void)live;
            push_gap(self, end);
        }
        return;
    }
pause:
    g_mutex_unlock(&self->lock);
    GST_DEBUG_OBJECT(self, "pausing the worker");
    gst_pad_pause_task(self->textpad);
    return;
error:
    self->flushing = TRUE;
    g_cond_broadcast(&self->space);
    g_mutex_unlock(&self->lock);
    gst_pad_push_event(self->textpad, gst_event_new_eos());
    gst_pad_pause_task(self->textpad);
}

/* ------------------------------------------------------------------ sink pad */

/* Whether upstream is live (asked once per activation). */
static gboolean upstream_is_live(GstWhisper *self)
{
    g_mutex_lock(&self->lock);
    gboolean known = self->live_known, live = self->upstream_live;
    g_mutex_unlock(&self->lock);
    if (known)
        return live;
    GstQuery *q = gst_query_new_latency();
    if (gst_pad_peer_query(self->sinkpad, q))
        gst_query_parse_latency(q, &live, NULL, NULL);
    gst_query_unref(q);
    g_mutex_lock(&self->lock);
    self->upstream_live = live;
    self->live_known = TRUE;
    g_mutex_unlock(&self->lock);
    GST_INFO_OBJECT(self, "upstream is %slive", live ? "" : "not ");
    return live;
}

/* Starts a stretch at a buffer with PTS `pts` (maybe NONE).  Lock held.
 *
 * A buffer without a timestamp continues where the audio ended (or starts at the
 * segment's start).  Text never goes back in time: when the audio's timestamps jump
 * back by more than the tolerance without a new segment, the stretch's text is timed
 * from the end of the latest earlier stretch instead, and a warning says so. */
static WItem *open_stretch(GstWhisper *self, GstClockTime pts, gboolean live)
{
    WItem *it = g_new0(WItem, 1);
    it->type = ITEM_AUDIO;
    it->live = live;
    if (GST_CLOCK_TIME_IS_VALID(pts))
        it->pts0 = pts;
    else if (GST_CLOCK_TIME_IS_VALID(self->audio_end))
        it->pts0 = self->audio_end;
    else if (self->segment.format == GST_FORMAT_TIME)
        it->pts0 = self->segment.start;
    it->t0 = it->pts0;
    if (GST_CLOCK_TIME_IS_VALID(self->text_end) && it->t0 + GAP_TOLERANCE < self->text_end) {
        GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Audio timestamps went back"),
            ("from %" GST_TIME_FORMAT " to %" GST_TIME_FORMAT " without a new segment: the "
             "text of this stretch is timed from %" GST_TIME_FORMAT,
             GST_TIME_ARGS(self->audio_end), GST_TIME_ARGS(pts), GST_TIME_ARGS(self->text_end)));
        it->t0 = self->text_end;
    }
    g_queue_push_tail(&self->items, it);
    return it;
}

/* Forgets where the stream's time has got to (new segment, flush, start).  Lock held. */
static void reset_stream_time(GstWhisper *self)
{
    self->next_pts = self->audio_end = self->text_end = GST_CLOCK_TIME_NONE;
}

static GstFlowReturn gst_whisper_chain(GstPad *pad, GstObject *parent, GstBuffer *buf)
{
    GstWhisper *self = GST_WHISPER(parent);
    (void)pad;
    GstCaps *caps = gst_pad_get_current_caps(self->sinkpad);
    if (!caps) {
        gst_buffer_unref(buf);
        return GST_FLOW_NOT_NEGOTIATED;
    }
    GstAudioInfo info;
    gboolean ok = gst_audio_info_from_caps(&info, caps);
    gst_caps_unref(caps);
    if (!ok) {
        gst_buffer_unref(buf);
        return GST_FLOW_NOT_NEGOTIATED;
    }
    gboolean s16 = GST_AUDIO_INFO_FORMAT(&info) == GST_AUDIO_FORMAT_S16LE;
    g_mutex_lock(&self->lock);
    guint step = self->run_step_ms;
    g_mutex_unlock(&self->lock);
    gboolean live = step > 0 || upstream_is_live(self);

    /* The samples go to the worker before the buffer goes downstream: an element
     * there that waits for text (a muxer, an overlay) must not keep the worker from
     * the audio it needs.  Copying them is short and never waits for inference. */
    GstMapInfo map;
    if (!gst_buffer_map(buf, &map, GST_MAP_READ)) {
        gst_buffer_unref(buf);
        GST_ELEMENT_ERROR(self, RESOURCE, READ, (NULL), ("cannot map a buffer"));
        return GST_FLOW_ERROR;
    }
    const gsize width = s16 ? 2 : 4;
    gsize n = map.size / width;
    if (map.size % width)
        GST_WARNING_OBJECT(self, "a buffer of %" G_GSIZE_FORMAT " bytes: its last partial "
                           "sample is ignored", map.size);
    GstClockTime pts = GST_BUFFER_PTS(buf);

    g_mutex_lock(&self->lock);
    /* A buffer without samples carries nothing to transcribe: its flags and timestamp
     * are ignored (the next buffer's timestamp shows any hole). */
    if (!self->flushing && n > 0) {
        WItem *it = tail_audio(self);
        if (it && GST_BUFFER_FLAG_IS_SET(buf, GST_BUFFER_FLAG_DISCONT) && it->len > 0) {
            GST_DEBUG_OBJECT(self, "DISCONT: closing the window");
            close_tail(self);
            it = NULL;
        }
        if (it && GST_CLOCK_TIME_IS_VALID(pts) && GST_CLOCK_TIME_IS_VALID(self->next_pts) &&
            (pts > self->next_pts + GAP_TOLERANCE || pts + GAP_TOLERANCE < self->next_pts)) {
            GST_DEBUG_OBJECT(self, "timestamp jump %" GST_TIME_FORMAT " -> %" GST_TIME_FORMAT
                             ": closing the window", GST_TIME_ARGS(self->next_pts),
                             GST_TIME_ARGS(pts));
            close_tail(self);
            it = NULL;
        }
        if (!it)
            it = open_stretch(self, pts, live);
        if (it->n + n > it->cap) {
            it->cap = MAX(it->n + n, it->cap * 2 + WKV_SAMPLE_RATE);
            it->pcm = g_renew(float, it->pcm, it->cap);
        }
        float *dst = it->pcm + it->n;
        if (s16) {
            const gint16 *src = (const gint16 *)map.data;
            for (gsize i = 0; i < n; i++)
                dst[i] = (float)GINT16_FROM_LE(src[i]) / 32768.0f;
        } else {
            memcpy(dst, map.data, n * sizeof(float));
        }
        it->n += n;
        it->len += (gint64)n;
        if (it->live && it->n > LIVE_MAX_SAMPLES * 2) {
            /* the worker is far behind: never queue audio without bound */
            gint64 drop_to = it->len - LIVE_MAX_SAMPLES;
            witem_drop_before(it, drop_to);
            GST_ELEMENT_WARNING(self, CORE, CLOCK, ("Whisper inference is falling behind"),
                                ("skipped audio up to %" GST_TIME_FORMAT,
                                 GST_TIME_ARGS(it->pts0 + samples_to_ns(drop_to))));
        }
        self->next_pts = self->audio_end = it->pts0 + samples_to_ns(it->len);
        GstClockTime text_end = it->t0 + samples_to_ns(it->len);
        if (!GST_CLOCK_TIME_IS_VALID(self->text_end) || text_end > self->text_end)
            self->text_end = text_end;
        g_cond_signal(&self->cond);
        /* offline: wait while the worker holds enough audio (see OFFLINE_MAX_SAMPLES);
         * `it` may be freed meanwhile (a flush) */
        gboolean item_live = it->live;
        while (!item_live && !self->flushing && held_samples(self) > OFFLINE_MAX_SAMPLES)
            g_cond_wait(&self->space, &self->lock);
    }
    GQueue tags = G_QUEUE_INIT;
    GstTagList *t;
    while ((t = g_queue_pop_head(&self->src_tags)))
        g_queue_push_tail(&tags, t);
    g_mutex_unlock(&self->lock);
    gst_buffer_unmap(buf, &map);

    while ((t = g_queue_pop_head(&tags)))
        gst_pad_push_event(self->srcpad, gst_event_new_tag(t));
    return gst_pad_push(self->srcpad, buf);
}

static gboolean gst_whisper_sink_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
    GstWhisper *self = GST_WHISPER(parent);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_FLUSH_START: {
        g_mutex_lock(&self->lock);
        self->flushing = TRUE;
        g_cond_broadcast(&self->cond);
        g_cond_broadcast(&self->space);
        g_mutex_unlock(&self->lock);
        gboolean ret = gst_pad_push_event(self->srcpad, gst_event_ref(event));
        gst_pad_push_event(self->textpad, event);
        /* waits for the window in flight to end; its text is discarded */
        gst_pad_pause_task(self->textpad);
        return ret;
    }
    case GST_EVENT_FLUSH_STOP: {
        g_mutex_lock(&self->lock);
        clear_items(self);
        self->flushing = FALSE;
        reset_stream_time(self);
        self->src_eos = FALSE;
        gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
        g_mutex_unlock(&self->lock);
        /* the task is paused: the worker state is ours */
        wkv_longform_free(self->lf);
        self->lf = NULL;
        self->lf_item = NULL;
        self->text_pos = self->text_floor = GST_CLOCK_TIME_NONE;
        gboolean ret = gst_pad_push_event(self->srcpad, gst_event_ref(event));
        gst_pad_push_event(self->textpad, event);
        /* a flush right after the start may have dropped the queued stream-start:
         * text_src must have it before the next segment (the task is paused, so
         * this thread may push) */
        ensure_text_stream(self);
        gst_pad_start_task(self->textpad, gst_whisper_loop, self, NULL);
        return ret;
    }
    case GST_EVENT_STREAM_START: {
        guint group;
        gchar *id = gst_pad_create_stream_id(self->textpad, GST_ELEMENT(self), "text");
        GstEvent *ev = gst_event_new_stream_start(id);
        g_free(id);
        if (gst_event_parse_group_id(event, &group))
            gst_event_set_group_id(ev, group);
        gst_event_set_stream_flags(ev, GST_STREAM_FLAG_SPARSE);
        g_mutex_lock(&self->lock);
        close_tail(self);
        queue_event(self, ev);
        g_mutex_unlock(&self->lock);
        return gst_pad_push_event(self->srcpad, event);
    }
    case GST_EVENT_CAPS:
        /* Not queued for text_src: its caps never change (the worker sends them before
         * anything else), and an event item would end the open stretch's place at the
         * tail of the queue.  A format change (F32LE <-> S16LE) continues the stretch:
         * the chain reads the caps of every buffer. */
        return gst_pad_push_event(self->srcpad, event);
    case GST_EVENT_SEGMENT: {
        const GstSegment *seg;
        gst_event_parse_segment(event, &seg);
        g_mutex_lock(&self->lock);
        close_tail(self);
        reset_stream_time(self);
        self->segment = *seg;
        if (seg->format == GST_FORMAT_TIME) {
            queue_event(self, gst_event_ref(event));
        } else {
            GstSegment t;
            gst_segment_init(&t, GST_FORMAT_TIME);
            queue_event(self, gst_event_new_segment(&t));
        }
        g_mutex_unlock(&self->lock);
        return gst_pad_push_event(self->srcpad, event);
    }
    case GST_EVENT_GAP: {
        g_mutex_lock(&self->lock);
        close_tail(self);
        queue_event(self, gst_event_ref(event));
        g_mutex_unlock(&self->lock);
        return gst_pad_push_event(self->srcpad, event);
    }
    case GST_EVENT_EOS: {
        g_mutex_lock(&self->lock);
        if (tail_audio(self))
            tail_audio(self)->eos = TRUE;
        close_tail(self);
        queue_event(self, gst_event_ref(event));
        self->src_eos = TRUE;
        GQueue tags = G_QUEUE_INIT;
        GstTagList *t;
        while ((t = g_queue_pop_head(&self->src_tags)))
            g_queue_push_tail(&tags, t);
        g_mutex_unlock(&self->lock);
        while ((t = g_queue_pop_head(&tags)))
            gst_pad_push_event(self->srcpad, gst_event_new_tag(t));
        return gst_pad_push_event(self->srcpad, event);
    }
    default:
        if (GST_EVENT_IS_SERIALIZED(event) || GST_EVENT_IS_STICKY(event))
            return gst_pad_push_event(self->srcpad, event);
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

static gboolean gst_whisper_sink_query(GstPad *pad, GstObject *parent, GstQuery *query)
{
    GstWhisper *self = GST_WHISPER(parent);
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

/* ------------------------------------------------------------------ source pads */

static gboolean gst_whisper_src_event(GstPad *pad, GstObject *parent, GstEvent *event)
{
    GstWhisper *self = GST_WHISPER(parent);
    (void)pad;
    return gst_pad_push_event(self->sinkpad, event);
}

static gboolean gst_whisper_src_query(GstPad *pad, GstObject *parent, GstQuery *query)
{
    GstWhisper *self = GST_WHISPER(parent);
    if (pad == self->srcpad) {
        switch (GST_QUERY_TYPE(query)) {
        case GST_QUERY_CAPS:
            return proxy_caps_query(pad, self->sinkpad, query);
        default:
            return gst_pad_peer_query(self->sinkpad, query);
        }
    }
    /* text_src */
    switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
        GstCaps *filter, *tmpl = gst_pad_get_pad_template_caps(pad);
        gst_query_parse_caps(query, &filter);
        GstCaps *res = filter ? gst_caps_intersect_full(filter, tmpl, GST_CAPS_INTERSECT_FIRST)
                              : gst_caps_ref(tmpl);
        gst_query_set_caps_result(query, res);
        gst_caps_unref(res);
        gst_caps_unref(tmpl);
        return TRUE;
    }
    case GST_QUERY_ACCEPT_CAPS: {
        GstCaps *caps, *tmpl = gst_pad_get_pad_template_caps(pad);
        gst_query_parse_accept_caps(query, &caps);
        gst_query_set_accept_caps_result(query, gst_caps_is_subset(caps, tmpl));
        gst_caps_unref(tmpl);
        return TRUE;
    }
    case GST_QUERY_LATENCY: {
        if (!gst_pad_peer_query(self->sinkpad, query))
            return FALSE;
        gboolean live;
        GstClockTime min, max;
        gst_query_parse_latency(query, &live, &min, &max);
        guint step, latency;
        GST_OBJECT_LOCK(self);
        step = self->step_ms;
        latency = self->latency_ms;
        GST_OBJECT_UNLOCK(self);
        if (live || step > 0) {
            /* text for a stretch of audio is final at most `latency` after it came */
            GstClockTime ours = latency * GST_MSECOND;
            min += ours;
            if (GST_CLOCK_TIME_IS_VALID(max))
                max += ours;
        }
        gst_query_set_latency(query, live, min, max);
        return TRUE;
    }
    default:
        return gst_pad_peer_query(self->sinkpad, query);
    }
}

static gboolean gst_whisper_text_activate_mode(GstPad *pad, GstObject *parent,
                                               GstPadMode mode, gboolean active)
{
    GstWhisper *self = GST_WHISPER(parent);
    if (mode != GST_PAD_MODE_PUSH)
        return FALSE;
    if (active) {
        g_mutex_lock(&self->lock);
        self->flushing = FALSE;
        self->src_eos = FALSE;
        g_mutex_unlock(&self->lock);
        self->text_pos = self->text_floor = GST_CLOCK_TIME_NONE;
        return gst_pad_start_task(pad, gst_whisper_loop, self, NULL);
    }
    g_mutex_lock(&self->lock);
    self->flushing = TRUE;
    g_cond_broadcast(&self->cond);
    g_cond_broadcast(&self->space);
    g_mutex_unlock(&self->lock);
    return gst_pad_stop_task(pad);
}

static GstIterator *gst_whisper_iterate_internal_links(GstPad *pad, GstObject *parent)
{
    GstWhisper *self = GST_WHISPER(parent);
    GstPad *other = pad == self->sinkpad ? self->srcpad : self->sinkpad;
    GValue v = G_VALUE_INIT;
    g_value_init(&v, GST_TYPE_PAD);
    g_value_set_object(&v, other);
    GstIterator *it = gst_iterator_new_single(GST_TYPE_PAD, &v);
    g_value_unset(&v);
    return it;
}

/* ------------------------------------------------------------------ states */

static gboolean load_model(GstWhisper *self)
{
    gchar *path, *language, *prompt;
    gint threads;
    GST_OBJECT_LOCK(self);
    path = g_strdup(self->model_path);
    if (!path || !*path) {
        g_free(path);
        path = g_strdup(g_getenv("WHISPERKV_MODEL"));
    }
    language = g_strdup(self->language);
    prompt = g_strdup(self->initial_prompt);
    threads = self->threads > 0 ? self->threads : (gint)g_get_num_processors();
    guint step = self->step_ms;
    wkv_options_default(&self->opts);
    self->opts.translate = self->translate;
    self->opts.condition_on_previous_text = self->condition;
    self->opts.no_speech_threshold = self->no_speech_threshold;
    self->opts.mel_norm = WKV_MEL_WINDOW;
    self->opts.beam_size = self->beam_size;
    self->opts.best_of = self->best_of;
    if (!self->temperature_fallback)
        self->opts.temperature_increment = 0.0f;
    self->opts.compression_ratio_threshold = self->compression_ratio_threshold;
    self->opts.logprob_threshold = self->logprob_threshold;
    self->opts.seed = self->seed;
    self->stat_windows = self->stat_tokens = 0;
    self->stat_encode_ms = self->stat_encoder_runs = self->stat_busy_ms = 0;
    self->stat_audio_s = 0;
    GST_OBJECT_UNLOCK(self);
    g_free(self->opt_prompt);
    self->opt_prompt = prompt && *prompt ? prompt : NULL;
    if (!self->opt_prompt)
        g_free(prompt);
    self->opts.initial_prompt = self->opt_prompt; /* the long form encodes it */

    gst_element_post_message(GST_ELEMENT(self),
        gst_message_new_progress(GST_OBJECT(self), GST_PROGRESS_TYPE_START, "load-model",
                                 path ? path : "(no model)"));
    GError *gerr = NULL;
    self->model = gst_whisper_model_acquire(path, &gerr);
    char *err = NULL;
    if (self->model) {
        const wkv_model *m = gst_whisper_model_get(self->model);
        self->detect_language = wkv_model_is_multilingual(m) && !g_strcmp0(language, "auto");
        if (wkv_model_is_multilingual(m) && !self->detect_language &&
            wkv_lang_token(m, language) < 0) {
            err = g_strdup_printf("unknown language code '%s'", language);
        } else {
            char *cerr = NULL;
            self->ctx = wkv_context_new(m, threads, &cerr);
            GST_INFO_OBJECT(self, "OpenBLAS kernels: %s", wkv_blas_corename());
            /* OpenBLAS chose its kernels when the process loaded it: only the user
             * can change them, and only one who has not chosen already is told */
            if (self->ctx && wkv_blas_misses_avx512() && !g_getenv("OPENBLAS_CORETYPE"))
                GST_ELEMENT_INFO(self, RESOURCE, SETTINGS,
                                 ("OpenBLAS runs without AVX-512 on this CPU"),
                                 ("OpenBLAS chose its '%s' kernels; the encoder runs about "
                                  "twice as fast with OPENBLAS_CORETYPE=SKYLAKEX set in the "
                                  "environment before the program starts",
                                  wkv_blas_corename()));
            if (!self->ctx) {
                err = g_strdup(cerr ? cerr : "cannot create a decoding context");
                free(cerr);
            }
        }
    }
    if (!self->model || err) {
        gst_element_post_message(GST_ELEMENT(self),
            gst_message_new_progress(GST_OBJECT(self), GST_PROGRESS_TYPE_ERROR, "load-model",
                                     "failed"));
        if (!self->model)
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ,
                              ("Could not load the Whisper model '%s'", path ? path : ""),
                              ("%s", gerr->message));
        else
            GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
                              ("Could not use the Whisper model '%s'", path), ("%s", err));
        g_clear_error(&gerr);
        g_free(err);
        gst_whisper_model_release(self->model);
        self->model = NULL;
        g_free(path);
        g_free(language);
        return FALSE;
    }
    g_free(self->opt_language);
    self->opt_language = language;
    /* with "auto" opt_language becomes the detected code; opts keeps "auto" */
    self->opts.language = self->detect_language ? "auto" : self->opt_language;
    self->run_threads = threads;
    g_mutex_lock(&self->lock);
    self->run_step_ms = step;
    g_mutex_unlock(&self->lock);
    const wkv_hparams *hp = wkv_model_hparams(gst_whisper_model_get(self->model));
    self->win = g_new0(float, (gsize)hp->n_mels * WKV_N_FRAMES);
    gst_element_post_message(GST_ELEMENT(self),
        gst_message_new_progress(GST_OBJECT(self), GST_PROGRESS_TYPE_COMPLETE, "load-model",
                                 path));
    GST_INFO_OBJECT(self, "model %s, %d threads", path, threads);
    g_free(path);
    return TRUE;
}

static void unload_model(GstWhisper *self)
{
    g_mutex_lock(&self->lock);
    clear_items(self);
    g_mutex_unlock(&self->lock);
    wkv_longform_free(self->lf);
    self->lf = NULL;
    self->lf_item = NULL;
    wkv_context_free(self->ctx);
    self->ctx = NULL;
    gst_whisper_model_release(self->model);
    self->model = NULL;
    g_clear_pointer(&self->win, g_free);
    g_clear_pointer(&self->scratch, g_free);
    self->scratch_cap = 0;
}

static GstStateChangeReturn gst_whisper_change_state(GstElement *element,
                                                     GstStateChange transition)
{
    GstWhisper *self = GST_WHISPER(element);
    switch (transition) {
    case GST_STATE_CHANGE_READY_TO_PAUSED:
        if (!load_model(self))
            return GST_STATE_CHANGE_FAILURE;
        g_mutex_lock(&self->lock);
        gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
        reset_stream_time(self);
        self->live_known = FALSE;
        self->upstream_live = FALSE;
        g_mutex_unlock(&self->lock);
        break;
    default:
        break;
    }
    GstStateChangeReturn ret =
        GST_ELEMENT_CLASS(gst_whisper_parent_class)->change_state(element, transition);
    switch (transition) {
    case GST_STATE_CHANGE_READY_TO_PAUSED:
        if (ret == GST_STATE_CHANGE_FAILURE)
            unload_model(self);
        break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
        unload_model(self);
        break;
    default:
        break;
    }
    return ret;
}

/* ------------------------------------------------------------------ properties */

static void set_string(GstWhisper *self, gchar **dst, const GValue *value)
{
    GST_OBJECT_LOCK(self);
    g_free(*dst);
    *dst = g_value_dup_string(value);
    GST_OBJECT_UNLOCK(self);
}

/* A setting that is read at READY->PAUSED, changed later: the running stream keeps
 * the old value (the worker's model and context are never swapped under it) and the
 * element says so on the bus. */
static void warn_deferred(GstWhisper *self, GParamSpec *pspec)
{
    GST_OBJECT_LOCK(self);
    GstState state = GST_STATE(self);
    GST_OBJECT_UNLOCK(self);
    if (state < GST_STATE_PAUSED)
        return;
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
        ("The '%s' property was changed in the %s state: it takes effect at the next "
         "READY to PAUSED transition", pspec->name, gst_element_state_get_name(state)),
        ("the running stream keeps the value it started with"));
}

static void gst_whisper_set_property(GObject *object, guint id, const GValue *value,
                                     GParamSpec *pspec)
{
    GstWhisper *self = GST_WHISPER(object);
    if (pspec->flags & GST_PARAM_MUTABLE_READY)
        warn_deferred(self, pspec);
    switch (id) {
    case PROP_MODEL:
        set_string(self, &self->model_path, value);
        break;
    case PROP_LANGUAGE:
    case PROP_LANGUAGE_CODE: {
        /* "en-US" -> "en" */
        const gchar *v = g_value_get_string(value);
        gchar *code = g_strdup(v && *v ? v : DEFAULT_LANGUAGE);
        gchar *dash = strpbrk(code, "-_");
        if (dash)
            *dash = 0;
        gchar *lower = g_ascii_strdown(code, -1);
        g_free(code);
        GST_OBJECT_LOCK(self);
        g_free(self->language);
        self->language = lower;
        GST_OBJECT_UNLOCK(self);
        break;
    }
    case PROP_TRANSLATE:
        GST_OBJECT_LOCK(self);
        self->translate = g_value_get_boolean(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_THREADS:
        GST_OBJECT_LOCK(self);
        self->threads = g_value_get_int(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_STEP:
        GST_OBJECT_LOCK(self);
        self->step_ms = g_value_get_uint(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_LATENCY:
        GST_OBJECT_LOCK(self);
        self->latency_ms = g_value_get_uint(value);
        GST_OBJECT_UNLOCK(self);
        gst_element_post_message(GST_ELEMENT(self),
                                 gst_message_new_latency(GST_OBJECT(self)));
        break;
    case PROP_LATENESS:
        GST_OBJECT_LOCK(self);
        self->lateness_ms = g_value_get_uint(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_PARTIAL_RESULTS:
        GST_OBJECT_LOCK(self);
        self->partial_results = g_value_get_boolean(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_INITIAL_PROMPT:
        set_string(self, &self->initial_prompt, value);
        break;
    case PROP_CONDITION:
        GST_OBJECT_LOCK(self);
        self->condition = g_value_get_boolean(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_NO_SPEECH_THRESHOLD:
        GST_OBJECT_LOCK(self);
        self->no_speech_threshold = g_value_get_float(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_BEAM_SIZE:
        GST_OBJECT_LOCK(self);
        self->beam_size = g_value_get_int(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_BEST_OF:
        GST_OBJECT_LOCK(self);
        self->best_of = g_value_get_int(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_TEMPERATURE_FALLBACK:
        GST_OBJECT_LOCK(self);
        self->temperature_fallback = g_value_get_boolean(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_COMPRESSION_RATIO_THRESHOLD:
        GST_OBJECT_LOCK(self);
        self->compression_ratio_threshold = g_value_get_float(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_LOGPROB_THRESHOLD:
        GST_OBJECT_LOCK(self);
        self->logprob_threshold = g_value_get_float(value);
        GST_OBJECT_UNLOCK(self);
        break;
    case PROP_SEED:
        GST_OBJECT_LOCK(self);
        self->seed = g_value_get_uint64(value);
        GST_OBJECT_UNLOCK(self);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
}

static void gst_whisper_get_property(GObject *object, guint id, GValue *value,
                                     GParamSpec *pspec)
{
    GstWhisper *self = GST_WHISPER(object);
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_MODEL:
        g_value_set_string(value, self->model_path);
        break;
    case PROP_LANGUAGE:
    case PROP_LANGUAGE_CODE:
        g_value_set_string(value, self->language);
        break;
    case PROP_TRANSLATE:
        g_value_set_boolean(value, self->translate);
        break;
    case PROP_THREADS:
        g_value_set_int(value, self->threads);
        break;
    case PROP_STEP:
        g_value_set_uint(value, self->step_ms);
        break;
    case PROP_LATENCY:
        g_value_set_uint(value, self->latency_ms);
        break;
    case PROP_LATENESS:
        g_value_set_uint(value, self->lateness_ms);
        break;
    case PROP_PARTIAL_RESULTS:
        g_value_set_boolean(value, self->partial_results);
        break;
    case PROP_INITIAL_PROMPT:
        g_value_set_string(value, self->initial_prompt);
        break;
    case PROP_CONDITION:
        g_value_set_boolean(value, self->condition);
        break;
    case PROP_NO_SPEECH_THRESHOLD:
        g_value_set_float(value, self->no_speech_threshold);
        break;
    case PROP_BEAM_SIZE:
        g_value_set_int(value, self->beam_size);
        break;
    case PROP_BEST_OF:
        g_value_set_int(value, self->best_of);
        break;
    case PROP_TEMPERATURE_FALLBACK:
        g_value_set_boolean(value, self->temperature_fallback);
        break;
    case PROP_COMPRESSION_RATIO_THRESHOLD:
        g_value_set_float(value, self->compression_ratio_threshold);
        break;
    case PROP_LOGPROB_THRESHOLD:
        g_value_set_float(value, self->logprob_threshold);
        break;
    case PROP_SEED:
        g_value_set_uint64(value, self->seed);
        break;
    case PROP_WINDOWS:
        g_value_set_uint64(value, self->stat_windows);
        break;
    case PROP_TOKENS:
        g_value_set_uint64(value, self->stat_tokens);
        break;
    case PROP_ENCODER_MS:
        g_value_set_double(value, self->stat_encoder_runs > 0
                                      ? self->stat_encode_ms / self->stat_encoder_runs : 0.0);
        break;
    case PROP_RTF:
        g_value_set_double(value, self->stat_audio_s > 0
                                      ? self->stat_busy_ms / 1000.0 / self->stat_audio_s : 0.0);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

/* ------------------------------------------------------------------ object */

static void gst_whisper_finalize(GObject *object)
{
    GstWhisper *self = GST_WHISPER(object);
    unload_model(self);
    g_free(self->model_path);
    g_free(self->language);
    g_free(self->initial_prompt);
    g_free(self->opt_language);
    g_free(self->opt_prompt);
    if (self->committed)
        g_array_unref(self->committed);
    if (self->prev_hyp)
        g_array_unref(self->prev_hyp);
    g_mutex_clear(&self->lock);
    g_cond_clear(&self->cond);
    g_cond_clear(&self->space);
    G_OBJECT_CLASS(gst_whisper_parent_class)->finalize(object);
}

static void gst_whisper_init(GstWhisper *self)
{
    self->sinkpad = gst_pad_new_from_static_template(&sink_template, "sink");
    gst_pad_set_chain_function(self->sinkpad, GST_DEBUG_FUNCPTR(gst_whisper_chain));
    gst_pad_set_event_function(self->sinkpad, GST_DEBUG_FUNCPTR(gst_whisper_sink_event));
    gst_pad_set_query_function(self->sinkpad, GST_DEBUG_FUNCPTR(gst_whisper_sink_query));
    gst_pad_set_iterate_internal_links_function(self->sinkpad,
        GST_DEBUG_FUNCPTR(gst_whisper_iterate_internal_links));
    gst_element_add_pad(GST_ELEMENT(self), self->sinkpad);

    self->srcpad = gst_pad_new_from_static_template(&src_template, "src");
    gst_pad_set_event_function(self->srcpad, GST_DEBUG_FUNCPTR(gst_whisper_src_event));
    gst_pad_set_query_function(self->srcpad, GST_DEBUG_FUNCPTR(gst_whisper_src_query));
    gst_pad_set_iterate_internal_links_function(self->srcpad,
        GST_DEBUG_FUNCPTR(gst_whisper_iterate_internal_links));
    gst_pad_use_fixed_caps(self->srcpad);
    gst_element_add_pad(GST_ELEMENT(self), self->srcpad);

    self->textpad = gst_pad_new_from_static_template(&text_template, "text_src");
    gst_pad_set_event_function(self->textpad, GST_DEBUG_FUNCPTR(gst_whisper_src_event));
    gst_pad_set_query_function(self->textpad, GST_DEBUG_FUNCPTR(gst_whisper_src_query));
    gst_pad_set_activatemode_function(self->textpad,
        GST_DEBUG_FUNCPTR(gst_whisper_text_activate_mode));
    gst_pad_set_iterate_internal_links_function(self->textpad,
        GST_DEBUG_FUNCPTR(gst_whisper_iterate_internal_links));
    gst_pad_use_fixed_caps(self->textpad);
    gst_element_add_pad(GST_ELEMENT(self), self->textpad);

    g_mutex_init(&self->lock);
    g_cond_init(&self->cond);
    g_cond_init(&self->space);
    g_queue_init(&self->items);
    g_queue_init(&self->src_tags);
    gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
    self->next_pts = self->audio_end = self->text_end = GST_CLOCK_TIME_NONE;
    self->text_pos = self->text_floor = GST_CLOCK_TIME_NONE;
    self->committed = g_array_new(FALSE, FALSE, sizeof(int));
    self->prev_hyp = g_array_new(FALSE, FALSE, sizeof(int));

    self->model_path = g_strdup(g_getenv("WHISPERKV_MODEL"));
    self->language = g_strdup(DEFAULT_LANGUAGE);
    self->translate = DEFAULT_TRANSLATE;
    self->threads = DEFAULT_THREADS;
    self->step_ms = DEFAULT_STEP;
    self->latency_ms = DEFAULT_LATENCY;
    self->lateness_ms = DEFAULT_LATENESS;
    self->partial_results = DEFAULT_PARTIAL_RESULTS;
    self->condition = DEFAULT_CONDITION;
    self->no_speech_threshold = DEFAULT_NO_SPEECH;
    {
        /* the core's (the reference's) defaults */
        wkv_options d;
        wkv_options_default(&d);
        self->beam_size = d.beam_size;
        self->best_of = d.best_of;
        self->temperature_fallback = d.temperature_increment > 0;
        self->compression_ratio_threshold = d.compression_ratio_threshold;
        self->logprob_threshold = d.logprob_threshold;
        self->seed = d.seed;
    }
}

void gst_whisper_register_tags(void)
{
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        gst_tag_register(GST_WHISPER_TAG_TRANSCRIPT, GST_TAG_FLAG_META, G_TYPE_STRING,
                         "transcript", "text transcribed from the audio (one segment)",
                         gst_tag_merge_strings_with_comma);
        g_once_init_leave(&once, 1);
    }
}

static void gst_whisper_class_init(GstWhisperClass *klass)
{
    GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);

    GST_DEBUG_CATEGORY_INIT(gst_whisper_debug, "whisper", 0, "Whisper speech to text");
    gst_whisper_register_tags();

    gobject_class->set_property = gst_whisper_set_property;
    gobject_class->get_property = gst_whisper_get_property;
    gobject_class->finalize = gst_whisper_finalize;

    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    const GParamFlags rw_ready = rw | GST_PARAM_MUTABLE_READY;
    const GParamFlags rw_playing = rw | GST_PARAM_MUTABLE_PLAYING;
    const GParamFlags ro = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS;

    g_object_class_install_property(gobject_class, PROP_MODEL,
        g_param_spec_string("model", "Model",
            "Path of a whisper.cpp ggml model file (f32 or f16); default: $WHISPERKV_MODEL. "
            "Elements naming the same file share one loaded copy",
            NULL, rw_ready));
    g_object_class_install_property(gobject_class, PROP_LANGUAGE,
        g_param_spec_string("language", "Language",
            "Spoken language code such as en or de (English-only models always use en)",
            DEFAULT_LANGUAGE, rw_ready));
    g_object_class_install_property(gobject_class, PROP_LANGUAGE_CODE,
        g_param_spec_string("language-code", "Language code",
            "The language as the gst-plugins-rs transcribers name it (en-US is taken as en); "
            "the same setting as 'language'",
            DEFAULT_LANGUAGE, rw_ready));
    g_object_class_install_property(gobject_class, PROP_TRANSLATE,
        g_param_spec_boolean("translate", "Translate",
            "Translate the speech into English (multilingual models)", DEFAULT_TRANSLATE,
            rw_ready));
    g_object_class_install_property(gobject_class, PROP_THREADS,
        g_param_spec_int("threads", "Threads",
            "Threads for the log-mel and OpenBLAS (0: the number of cores). OpenBLAS's "
            "count is process-wide: the last model loaded sets it",
            0, 1024, DEFAULT_THREADS, rw_ready));
    g_object_class_install_property(gobject_class, PROP_STEP,
        g_param_spec_uint("step", "Step",
            "Live re-run interval in ms: every step ms the buffered audio is transcribed "
            "again (0: offline 30-s windows, or 2000 when upstream is live)",
            0, 30000, DEFAULT_STEP, rw_ready));
    g_object_class_install_property(gobject_class, PROP_LATENCY,
        g_param_spec_uint("latency", "Latency",
            "Live: text for a stretch of audio is final at most this many ms after the "
            "audio arrived; reported in the LATENCY query",
            0, G_MAXUINT, DEFAULT_LATENCY, rw_playing));
    g_object_class_install_property(gobject_class, PROP_LATENESS,
        g_param_spec_uint("lateness", "Lateness",
            "Amount of ms to add to the text buffers' timestamps",
            0, G_MAXUINT, DEFAULT_LATENESS, rw_playing));
    g_object_class_install_property(gobject_class, PROP_PARTIAL_RESULTS,
        g_param_spec_boolean("partial-results", "Partial results",
            "Live: also push partial hypotheses as text buffers flagged DELTA_UNIT (a final "
            "buffer with the same start supersedes them); whisper-segment messages with "
            "final=false are posted either way",
            DEFAULT_PARTIAL_RESULTS, rw_playing));
    g_object_class_install_property(gobject_class, PROP_INITIAL_PROMPT,
        g_param_spec_string("initial-prompt", "Initial prompt",
            "Text given to the decoder as previous text before the first window (live mode; "
            "offline mode does not support it yet)",
            NULL, rw_ready));
    g_object_class_install_property(gobject_class, PROP_CONDITION,
        g_param_spec_boolean("condition-on-previous-text", "Condition on previous text",
            "Give the text decoded so far as the prompt of the next window",
            DEFAULT_CONDITION, rw_ready));
    g_object_class_install_property(gobject_class, PROP_NO_SPEECH_THRESHOLD,
        g_param_spec_float("no-speech-threshold", "No-speech threshold",
            "Skip a window as silence above this no-speech probability (when the text is "
            "also unlikely); 1 never skips",
            0.0f, 1.0f, DEFAULT_NO_SPEECH, rw_ready));
    g_object_class_install_property(gobject_class, PROP_BEAM_SIZE,
        g_param_spec_int("beam-size", "Beam size",
            "Beam search with this many beams at temperature 0; 0 decodes greedily "
            "(the reference's command line uses 5)",
            0, 32, 0, rw_ready));
    g_object_class_install_property(gobject_class, PROP_BEST_OF,
        g_param_spec_int("best-of", "Best of",
            "Candidates sampled at each fallback temperature above 0",
            1, 32, 5, rw_ready));
    g_object_class_install_property(gobject_class, PROP_TEMPERATURE_FALLBACK,
        g_param_spec_boolean("temperature-fallback", "Temperature fallback",
            "Decode a window again at temperatures 0.2, 0.4, ... 1.0 when its text is too "
            "repetitive or improbable (the reference's behaviour); costs time on 2 cores",
            TRUE, rw_ready));
    g_object_class_install_property(gobject_class, PROP_COMPRESSION_RATIO_THRESHOLD,
        g_param_spec_float("compression-ratio-threshold", "Compression ratio threshold",
            "Fall back when the text's gzip compression ratio exceeds this; 0 never",
            0.0f, G_MAXFLOAT, 2.4f, rw_ready));
    g_object_class_install_property(gobject_class, PROP_LOGPROB_THRESHOLD,
        g_param_spec_float("logprob-threshold", "Log-probability threshold",
            "Fall back when the average token log-probability is below this; with "
            "no-speech-threshold also the silence test",
            -G_MAXFLOAT, 0.0f, -1.0f, rw_ready));
    g_object_class_install_property(gobject_class, PROP_SEED,
        g_param_spec_uint64("seed", "Seed",
            "Seed of the sampling at temperatures above 0: the same seed gives the same text",
            0, G_MAXUINT64, 0, rw_ready));
    g_object_class_install_property(gobject_class, PROP_WINDOWS,
        g_param_spec_uint64("windows", "Windows",
            "Statistics: windows (or live runs) decoded since the model was loaded",
            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(gobject_class, PROP_TOKENS,
        g_param_spec_uint64("tokens", "Tokens",
            "Statistics: positions run through the decoder since the model was loaded",
            0, G_MAXUINT64, 0, ro));
    g_object_class_install_property(gobject_class, PROP_ENCODER_MS,
        g_param_spec_double("mean-encoder-ms", "Mean encoder time",
            "Statistics: mean time of one encoder run in ms", 0, G_MAXDOUBLE, 0, ro));
    g_object_class_install_property(gobject_class, PROP_RTF,
        g_param_spec_double("real-time-factor", "Real-time factor",
            "Statistics: processing time / audio time transcribed (below 1 is faster than "
            "real time)", 0, G_MAXDOUBLE, 0, ro));

    gst_element_class_add_static_pad_template(element_class, &sink_template);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_add_static_pad_template(element_class, &text_template);
    gst_element_class_set_static_metadata(element_class, "Whisper speech to text",
        "Filter/Audio/Text",
        "Transcribes 16 kHz mono speech with an OpenAI Whisper model: the audio passes "
        "through on src, timed text comes out on text_src (put audioconvert ! audioresample "
        "before it)",
        "whisperkv developers");
    element_class->change_state = GST_DEBUG_FUNCPTR(gst_whisper_change_state);
}

gboolean gst_whisper_register(GstPlugin *plugin)
{
    gst_whisper_register_tags();
    return gst_element_register(plugin, "whisper", GST_RANK_NONE, GST_TYPE_WHISPER);
}
