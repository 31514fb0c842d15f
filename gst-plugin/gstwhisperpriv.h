/* The whisper element's insides, shared by its source files (not installed).
 *
 * The instance state is split by who may touch it:
 *   props, stats  under the object lock (GST_OBJECT_LOCK): gstwhisper.c owns them; the
 *                 other files read them through the accessors below;
 *   q             under `q.lock`: the queue between the streaming thread and the
 *                 worker (gstwhisperqueue.c; the worker loop waits on its conds);
 *   w, live       the worker's own: touched only by the worker task, or while it is
 *                 stopped or paused (state changes, FLUSH_STOP).
 * No function holds two of these locks at once. */
#ifndef GST_WHISPER_PRIV_H
#define GST_WHISPER_PRIV_H

#include <math.h>

#include <gst/audio/audio.h>
#include <gst/base/gstflowcombiner.h>

#include "cue_cut.h"
#include "gstwhisper.h"

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(gst_whisper_debug);

/* Element-only defaults (the decoding options' come from wkv_options_default). */
#define DEFAULT_THREADS 0
#define DEFAULT_STEP 0
#define DEFAULT_LIVE_STEP 2000 /* ms, when upstream is live and step is 0 */
#define DEFAULT_LATENCY 8000
#define DEFAULT_LATENESS 0
#define DEFAULT_PARTIAL_RESULTS FALSE

/* Offline, before any text went out: no new audio for this long posts a warning that
 * the pipeline may be stuck (gstwhisperworker.c, wait_for_audio). */
#define STALL_WARN_US (10 * G_USEC_PER_SEC)
/* Timestamps as GStreamer's audio elements take them (GstAudioStreamAlign's defaults,
 * audiobasesink's alignment-threshold and discont-wait): a buffer this far from where
 * the samples before it put it is off; once buffers have stayed off for DISCONT_WAIT
 * of their own time the jump is real and closes the stretch (gstwhisperqueue.c). */
#define ALIGN_THRESHOLD (40 * GST_MSECOND)
#define DISCONT_WAIT GST_SECOND
/* Live: at most this much audio is kept uncommitted (one window). */
#define LIVE_MAX_SAMPLES WKV_N_SAMPLES
/* Offline, a source reads faster than inference: the streaming thread waits once the
 * worker holds this much audio not yet transcribed (4 windows, 7.7 MB), so a file of
 * any length costs the same memory.  Always more than one window, which the worker
 * needs to make progress. */
#define OFFLINE_MAX_SAMPLES (4 * (gint64)WKV_N_SAMPLES)
/* batch-size: its largest value (the core's batch limit). */
#define MAX_BATCH_SIZE 64

typedef enum { ITEM_AUDIO, ITEM_EVENT } ItemType;

/* When a buffer's samples arrived in chain (live stretches): samples before stream
 * index `end` came at time `at` of the element's clock (NONE: it had none) or earlier. */
typedef struct {
    gint64 end;
    GstClockTime at;
} WArrival;

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
    GArray *arrivals; /* WArrival, live items only (the latency promise) */
    /* worker-owned */
    gint64 seek;      /* offline: next window's first frame */
} WItem;

/* A word of a segment, for its whisper-segment message. */
typedef struct {
    gchar *word;
    GstClockTime start, end;
    double probability;
} WWord;

/* A segment decoded, to be pushed after the window; or (text-unit word or cue) a word
 * or a cue, which only makes a buffer. */
typedef struct {
    gchar *text;
    GstClockTime pts, duration;
    double avg_logprob, no_speech_prob;
    gboolean final;
    GstClockTime arrived; /* live finals: clock time its first sample came, else NONE */
    gboolean no_buffer;   /* a segment whose text goes out as words or cues */
    gboolean text_only;   /* a word or a cue: a buffer, no message or tags */
    GArray *words;        /* WWord (word timestamps on), else NULL */
} WSeg;

/* Properties: under the object lock. */
typedef struct {
    gchar *model_path;
    gchar *language;      /* what the model gets: "en" */
    gchar *language_code; /* as language or language-code was set: "en-US" */
    gboolean translate;
    gint threads;
    gint compute_type;       /* wkv_compute_type */
    gint cache_type;         /* wkv_cache_type */
    gboolean share_decoder;  /* the model's decoder group */
    guint step_ms, latency_ms, lateness_ms;
    gboolean partial_results;
    gchar *initial_prompt;
    gboolean condition;
    gfloat no_speech_threshold;
    gint beam_size, best_of, sample_len;
    gboolean temperature_fallback;
    gfloat compression_ratio_threshold, logprob_threshold;
    guint64 seed;
    gboolean word_timestamps;
    gchar *alignment_heads;
    gint text_unit;          /* GstWhisperTextUnit */
    cue_cut_options cue; /* text-unit=cue */
    gboolean highlight_words;
    /* voice activity: vad-* (the core's wkv_vad_params), post-vad-messages */
    gchar *vad_model_path;
    gfloat vad_threshold, vad_max_speech_s, vad_samples_overlap;
    gint vad_min_speech_ms, vad_min_silence_ms, vad_speech_pad_ms;
    gboolean post_vad_messages;
    gint batch_size;         /* offline batching: chunks per decoder batch (0, 1: off) */
} GstWhisperProps;

#define GST_WHISPER_DELAY_BIN_MS 20
#define GST_WHISPER_DELAY_BINS 1501

/* Statistics since the model was loaded: under the object lock. */
typedef struct {
    guint64 windows, tokens;
    gdouble encode_ms, encoder_runs, busy_ms, audio_s;
    guint64 late_commits;
    guint64 max_commit_delay_ms;
    /* finals' commit delays in 20-ms bins, the last one for 30 s and more (the median) */
    guint32 delay_bins[GST_WHISPER_DELAY_BINS];
} GstWhisperStats;

/* The queue between chain and worker: under `lock`. */
typedef struct {
    GMutex lock;
    GCond cond;             /* items or flushing changed */
    GCond space;            /* the worker released audio, or flushing was set */
    GQueue items;           /* WItem*, stream order */
    gboolean flushing;
    GstFlowReturn srcresult; /* text_src's last flow (OK after a flush or activation) */
    GstSegment segment;     /* the audio's */
    GstClockTime audio_end; /* audio PTS where the last buffer ended, or NONE */
    GstClockTime text_end;  /* latest text time any stretch reached, or NONE */
    guint run_step_ms;      /* `step` as it was at READY->PAUSED */
    gboolean upstream_live, live_known;
    GQueue src_tags;        /* GstTagList* to send on src before the next buffer */
    gboolean text_flowing;  /* the text pad sent text, a GAP with a duration, or EOS
                             * since the stream (re)started: its sinks can preroll */
    gboolean src_eos;       /* EOS went out on src: later tags go on text_src only */
    gint64 worker_held;     /* samples the worker's offline transcriber holds (they left
                             * the items): counted in the offline bound */
    /* Buffers off the open stretch's time by more than ALIGN_THRESHOLD, held until one
     * is back in line (jitter: they continue the stretch) or they stayed off for
     * DISCONT_WAIT (a real jump: a new stretch from pend_pts).  16-kHz samples. */
    float *pend;
    gsize pend_n, pend_cap;
    GstClockTime pend_pts;     /* the first held buffer's PTS; NONE: nothing held */
    GstClockTime pend_arrived; /* when the last of them came (live), or NONE */
} GstWhisperQueue;

/* The input's format and its converters (gstwhisperinput.c): the streaming thread's. */
typedef struct {
    GstAudioInfo info;
    gboolean have_caps;
    guint direct_width;          /* 2, 4: S16LE, F32LE mono at 16 kHz, read as it is;
                                  * 0: converted */
    GstAudioConverter *mix;      /* to F32 mono at the input's rate (NULL: it is that) */
    GstAudioConverter *resample; /* F32 mono to 16 kHz (NULL: the rate is 16 kHz) */
    gboolean fed;                /* the resampler took samples since its last reset */
    float *mono, *out;           /* the mix's and the resampler's output */
    gsize mono_cap, out_cap;
} GstWhisperInput;

/* A buffer's samples as the queue takes them: n samples at data, S16LE or F32. */
typedef struct {
    const guint8 *data;
    gsize n;
    gboolean s16;
    GstMapInfo map; /* the buffer's, while mapped */
    gboolean mapped;
} GstWhisperSamples;

/* The worker's: model, context and decoding state (set up at READY->PAUSED). */
typedef struct {
    GstWhisperModel *model;
    wkv_context *ctx;
    wkv_options opts;         /* snapshot of the properties */
    gchar *opt_language;
    gchar *opt_prompt;        /* opts.initial_prompt */
    gboolean detect_language; /* language "auto" on a multilingual model */
    gboolean detect_pending;  /* not detected yet for the current stretch */
    gint run_threads;
    wkv_compute_type run_compute; /* `compute-type` as it was at READY->PAUSED */
    wkv_cache_type run_cache;     /* `kv-cache` as it was at READY->PAUSED */
    gboolean run_share_decoder;   /* `share-decoder` as it was at READY->PAUSED */
    /* offline: the core's transcriber of the current stretch (tr_item), the samples
     * of that stretch handed to it (the queue drops them then) and whether it closed */
    wkv_transcriber *tr;
    WItem *tr_item;
    gint64 tr_pushed;
    gboolean tr_closed;
    gpointer collect;         /* the window under way's GstWhisperCollect (worker.c) */
    float *scratch;
    gsize scratch_cap;
    GstClockTime text_pos;    /* where text_src's time has got to */
    GstClockTime text_floor;  /* no text may start before: the last text buffer's PTS or
                               * the end of the last GAP sent, or NONE */
    gboolean late;            /* a late-commit episode is going on (warned once) */
    gboolean stall_warned;    /* the "waiting for audio" warning went out (once) */
    /* words and cues (offline) */
    gchar *opt_heads;         /* opts.alignment_heads */
    gint text_unit;           /* GstWhisperTextUnit */
    cue_cut_options cue_opts;
    gboolean highlight;       /* highlight-words: a cue as its highlighted sub-cues */
    cue_cutter *cut;      /* text-unit=cue: the current stretch's cues */
    GPtrArray *cue_out;       /* where complete cues go (WSeg*), while cutting */
    GstClockTime cue_t0, cue_limit; /* as GstWhisperCollect's, for the cues being cut */
    guint cue_lateness;
    /* voice activity (vad-model set): the shared model and the parameters */
    GstWhisperModel *vad;
    wkv_vad_params vad_params;
    gboolean post_vad;
    /* offline VAD, for tr_item: its audio was replaced by its speech (vad_filtered),
     * vad_len samples long before; the speech's times map back through vad_map */
    gboolean vad_filtered;
    gint64 vad_len;
    wkv_vad_map *vad_map;
    /* offline batching (batch-size > 1; gstwhisperbatch.c): the samples taken from
     * tr_item (bt_pcm: bt_n of them, from stream index bt_base; they left the queue),
     * cut into bt_n_chunks chunks of which bt_next is the next to decode; bt_speech:
     * the stretch's speech was cut into chunks (VAD, once it ended) */
    gint batch_size;          /* `batch-size` as it was at READY->PAUSED */
    float *bt_pcm;
    gsize bt_n;
    gint64 bt_base;
    wkv_chunk *bt_chunks;
    gint bt_n_chunks, bt_next;
    gboolean bt_speech;
    gboolean bt_live_warned;  /* live stretches ignore batch-size: said once */
} GstWhisperWorker;

/* What the segments of one decoding run need (gstwhisperworker.c, collect): the
 * stretch's text time t0, the limit its text stops at (end of a stretch a
 * discontinuity closed, or NONE), lateness; the text buffers made (WSeg*). */
typedef struct {
    GstWhisper *self;
    GstClockTime t0;
    GstClockTime limit;
    guint lateness;
    GPtrArray *segs;
    gboolean failed; /* an allocation failed (ERROR posted): the window's text stops */
    gchar *language; /* the first segment's language (g_free) */
} GstWhisperCollect;

/* The live driver's (worker-only): the core's live stream, one per activation. */
typedef struct {
    wkv_stream *stream;
    gint64 offset;  /* stream index of the current stretch's sample 0 */
    gint64 pushed;  /* the stretch's samples before this index are in the stream */
    void *call;     /* what the stream's callbacks need during a call (gstwhisperlive.c) */
    cue_cutter *cut; /* text-unit=cue: the stretch's committed words cut into cues */
    GPtrArray *cue_out;  /* where complete cues go (WSeg*), while cutting */
} GstWhisperLive;

struct _GstWhisper {
    GstElement parent;
    gboolean transcriber; /* the class's: no audio out, the text pad is `src` */
    GstPad *sinkpad;
    GstPad *srcpad;  /* the filter's audio out; NULL on the transcriber */
    GstPad *textpad; /* the filter's text_src, the transcriber's src */
    /* the streaming thread's: the input's format from its CAPS event and its
     * converters (gstwhisperinput.c), the flows chain combines (gstwhisperpads.c) */
    GstWhisperInput in;
    GstFlowCombiner *flows;
    /* the streaming thread's: the filter's audio buffers and events for src held while
     * the pipeline prerolls offline and the text pad has not flowed yet (see
     * gstwhisperpads.c, "Preroll") */
    GQueue held;
    GstWhisperProps props;
    GstWhisperStats stats;
    GstWhisperQueue q;
    GstWhisperWorker w;
    GstWhisperLive live;
};

/* The text pad's caps: text/x-raw, format utf8 (pango-markup: see text_caps). */
GstCaps *gst_whisper_text_caps(GstWhisper *self);

static inline GstClockTime gst_whisper_secs_to_ns(double s)
{
    /* segment times are multiples of 0.01 s computed in double: rounding to the
     * nearest nanosecond gives the exact value */
    return s <= 0 ? 0 : (GstClockTime)llround(s * 1e9);
}

static inline GstClockTime gst_whisper_samples_to_ns(gint64 n)
{
    return gst_util_uint64_scale_int((guint64)n, GST_SECOND, WKV_SAMPLE_RATE);
}

void gst_whisper_seg_free(gpointer seg);

/* gstwhisperalloc.c: the element's allocations sized by data, which fail instead of
 * aborting.  gst_whisper_try_renew: `mem` (NULL: none yet) resized to n elements of
 * `size` bytes, or NULL with `mem` untouched when the memory is not there or n * size
 * overflows (g_free frees it); counted in the core's allocation-failure hook.
 * gst_whisper_alloc_error: the ERROR message for such an allocation, `what` saying
 * what it was for. */
gpointer gst_whisper_try_renew(gpointer mem, gsize n, gsize size);
#define gst_whisper_try_new(T, n) ((T *)gst_whisper_try_renew(NULL, (n), sizeof(T)))
void gst_whisper_alloc_error(GstWhisper *self, const gchar *what, gsize n, gsize size);

/* gstwhisperprops.c: installs the properties and get/set (class_init); every
 * property at its default (instance init); frees their strings (finalize). */
void gst_whisper_props_class_init(GObjectClass *gobject_class, gboolean transcriber);
void gst_whisper_props_init(GstWhisper *self);
void gst_whisper_props_clear(GstWhisper *self);
/* The settings one run uses, read once at READY to PAUSED (object lock held): the
 * decoding ones into w.opts (and text unit, cue options, compute type), returning
 * the model path, language and prompt (g_free) and the threads and step; the VAD ones
 * into w.vad_params, returning the VAD model's path (g_free; NULL: VAD off). */
void gst_whisper_props_snapshot(GstWhisper *self, gchar **path, gchar **language,
                                gchar **prompt, gint *threads, guint *step);
gchar *gst_whisper_props_snapshot_vad(GstWhisper *self);
/* Settings the running element reads again (each takes the object lock). */
guint gst_whisper_props_lateness(GstWhisper *self);
guint gst_whisper_props_latency(GstWhisper *self);
guint gst_whisper_props_step(GstWhisper *self);
gboolean gst_whisper_props_partial_results(GstWhisper *self);

/* gstwhisper.c: statistics (each takes the object lock). */
/* The element's clock's time now, NONE without a clock: the latency promise is kept
 * on the pipeline's clock (a test harness's clock stands still). */
GstClockTime gst_whisper_clock_now(GstWhisper *self);
/* Takes the context's counters and adds busy time and audio time. */
void gst_whisper_stats_account(GstWhisper *self, double busy_ms, double audio_s);
/* Counts a live final that went out `delay_ms` after its audio; TRUE when it broke
 * the promise (`latency`), with the latency then in *latency_ms. */
gboolean gst_whisper_stats_commit(GstWhisper *self, guint64 delay_ms, guint *latency_ms);

/* gstwhisperpads.c */
void gst_whisper_pads_init(GstWhisper *self);
void gst_whisper_pads_class_init(GstElementClass *element_class, gboolean transcriber);
/* Drops what the filter held for src (PAUSED->READY, FLUSH_STOP). */
void gst_whisper_pads_drop_held(GstWhisper *self);

/* gstwhisperqueue.c: the queue (each takes `q.lock` unless it says the lock is held). */
void gst_whisper_queue_init(GstWhisper *self);
void gst_whisper_queue_clear(GstWhisper *self);
void witem_free(WItem *it);
/* Drops the item's samples before stream index `keep`.  Lock held. */
void witem_drop_before(WItem *it, gint64 keep);
/* When the sample at stream index `index` arrived (clock time) by a live item's
 * `arrivals` (or a copy), NONE if not known. */
GstClockTime gst_whisper_arrival(const GArray *arrivals, gint64 index);
/* Copies a buffer's samples (16 kHz, F32 or S16LE; PTS `pts`, maybe NONE: they go on
 * where the audio was) into the open stretch, starting one when needed (`discont`, a
 * jump in the timestamps); offline, waits while the worker holds too much audio.  Then
 * moves the tags waiting for `src` to *tags.  FALSE when the samples could not be
 * stored (ERROR posted; the stretch is closed, its audio so far still transcribed). */
gboolean gst_whisper_queue_samples(GstWhisper *self, GstClockTime pts, gboolean discont,
                                   const GstWhisperSamples *s, gboolean live,
                                   GstClockTime arrived, GQueue *tags);
/* Closes the open stretch and queues `event` (taken) for text_src; EOS also marks the
 * stretch as ended by EOS and moves the waiting tags to *tags (may be NULL else). */
void gst_whisper_queue_event(GstWhisper *self, GstEvent *event, GQueue *tags);
/* A new segment: closes the stretch, forgets the stream time, queues the text
 * segment. */
void gst_whisper_queue_segment(GstWhisper *self, const GstSegment *seg, GstEvent *event);
void gst_whisper_queue_set_flushing(GstWhisper *self, gboolean flushing);
/* FLUSH_STOP: drops everything queued and resets the stream. */
void gst_whisper_queue_flush_stop(GstWhisper *self);
/* READY->PAUSED: a new stream with `step` as the live step. */
void gst_whisper_queue_start(GstWhisper *self, guint step_ms);
/* A final segment's tags, for src before its next buffer (unless src is done). */
void gst_whisper_queue_src_tags(GstWhisper *self, const GstTagList *tags);
GstSegment gst_whisper_queue_get_segment(GstWhisper *self);
/* Whether upstream's liveness is known (then in *live), asked once per activation. */
gboolean gst_whisper_queue_upstream_live(GstWhisper *self, gboolean *live);
void gst_whisper_queue_set_upstream_live(GstWhisper *self, gboolean live);
guint gst_whisper_queue_step(GstWhisper *self);
/* text_src's flow: the worker stores it, chain combines it with src's. */
void gst_whisper_queue_set_srcresult(GstWhisper *self, GstFlowReturn ret);
/* The worker: text (or a GAP with a duration, or EOS) went out on the text pad. */
void gst_whisper_queue_set_text_flowing(GstWhisper *self);
gboolean gst_whisper_queue_text_flowing(GstWhisper *self);
GstFlowReturn gst_whisper_queue_srcresult(GstWhisper *self);

/* gstwhisperinput.c: the input (streaming thread). */
/* The caps of a CAPS event: FALSE (an ERROR naming them and what the sink takes posted)
 * when they cannot be read.  A change of format drains the old resampler into *tail
 * (valid until the next call here; n 0: nothing owed, or the same format again). */
gboolean gst_whisper_input_set_caps(GstWhisper *self, GstCaps *caps, GstWhisperSamples *tail);
gboolean gst_whisper_input_have_caps(GstWhisper *self);
/* A buffer's samples as the model takes them (16 kHz mono); FALSE: ERROR posted.
 * gst_whisper_input_unmap after use. */
gboolean gst_whisper_input_map(GstWhisper *self, GstBuffer *buf, GstWhisperSamples *s);
void gst_whisper_input_unmap(GstBuffer *buf, GstWhisperSamples *s);
/* What the resampler still owes for its last input (none when it does not resample),
 * before the stretch ends; FALSE: ERROR posted. */
gboolean gst_whisper_input_drain(GstWhisper *self, GstWhisperSamples *s);
/* A flush: the resampler's history forgotten. */
void gst_whisper_input_reset(GstWhisper *self);
/* Frees the converters and buffers (the next stream sends its caps). */
void gst_whisper_input_clear(GstWhisper *self);

/* gstwhispertext.c: everything that leaves on text_src (worker thread). */
void gst_whisper_text_reset(GstWhisper *self);
void gst_whisper_text_ensure_stream(GstWhisper *self);
/* GAP on text_src from where its time is up to `until`. */
void gst_whisper_text_gap(GstWhisper *self, GstClockTime until);
/* A stretch's text starts at t0: with `gap`, a GAP there (no duration), which
 * prerolls the sinks on the text pad. */
void gst_whisper_text_preroll(GstWhisper *self, GstClockTime t0, gboolean gap);
/* Pushes a serialized event that came through the queue. */
void gst_whisper_text_event(GstWhisper *self, GstEvent *ev);
/* Pushes a window's segments then a GAP up to `until` (if valid); returns the flow,
 * which it also stores for chain. */
GstFlowReturn gst_whisper_text_push_segments(GstWhisper *self, GPtrArray *segs,
                                             GstClockTime until);

/* gstwhisperworker.c */
void gst_whisper_worker_loop(gpointer data);
gboolean gst_whisper_worker_error(GstWhisper *self, const gchar *what, char *err);
/* The worker's scratch of at least n floats, NULL when it cannot grow (nothing posted). */
float *gst_whisper_worker_scratch(GstWhisper *self, gsize n);
/* Drops the cues being cut (the model is unloaded). */
void gst_whisper_worker_forget_cues(GstWhisper *self);
/* Drops the offline transcriber of the current stretch and its VAD map (a new stretch,
 * a flush, unloading).  q.lock held, or the task stopped. */
void gst_whisper_worker_forget_item(GstWhisper *self);
/* After text went out with flow `ret`: takes `q.lock` back and reports a fatal flow
 * as an element error (then FALSE). */
gboolean gst_whisper_worker_pushed(GstWhisper *self, GstFlowReturn ret);
/* The segment callback of a decoding run, `user` a GstWhisperCollect: the segment as
 * text buffers (words, cues) in its `segs`.  Non-zero stops the run (an allocation
 * failed). */
int gst_whisper_worker_collect(const wkv_segment *seg, void *user);
/* Text time before which the open cue starts (text may not pass it yet), or NONE. */
GstClockTime gst_whisper_worker_cue_hold(GstWhisper *self);
/* Samples the worker may hold offline before chain waits: OFFLINE_MAX_SAMPLES, or two
 * batches of batch-size windows (one decoding, the next filling). */
gint64 gst_whisper_worker_max_held(GstWhisper *self);

/* gstwhisperbatch.c: offline batching, batch-size > 1 (worker-only). */
typedef enum {
    GST_WHISPER_BATCH_RAN,   /* a batch ran (or was cancelled by a flush) */
    GST_WHISPER_BATCH_WAIT,  /* more audio of the stretch is needed first */
    GST_WHISPER_BATCH_DONE,  /* the stretch is transcribed */
    GST_WHISPER_BATCH_ERROR, /* fatal, reported */
} GstWhisperBatchStep;
/* One step of `it`: takes its next batch of audio when none is left (N x 30 s as they
 * come, the rest once it ended; with VAD its speech chunks once it ended) and decodes
 * the next batch_size chunks, pushing their text.  Lock held on entry and exit. */
GstWhisperBatchStep gst_whisper_batch_run(GstWhisper *self, WItem *it);
/* Drops the samples and chunks taken (a new stretch, a flush, unloading). */
void gst_whisper_batch_forget(GstWhisper *self);

/* gstwhispervad.c: voice activity (worker-only). */
/* A whisper-vad message (post-vad-messages on): speech starts or ends at text time ts. */
void gst_whisper_vad_post(GstWhisper *self, gboolean speech, GstClockTime ts);
/* The messages of a stretch's speech segments (n samples from text time t0). */
void gst_whisper_vad_post_segments(GstWhisper *self, const wkv_vad_segment *segs, int n_segs,
                                   GstClockTime t0, gint64 n);
/* Offline, `it` has ended: replaces its audio by the speech the CLI would transcribe
 * (wkv_vad_filter) and keeps the map.  Lock held on entry and exit (dropped while it
 * computes).  FALSE on an error (reported). */
gboolean gst_whisper_vad_filter(GstWhisper *self, WItem *it);
/* Forgets the current stretch's map. */
void gst_whisper_vad_forget(GstWhisper *self);
/* The stretch's length in samples as it came (before the filter). */
gint64 gst_whisper_vad_length(GstWhisper *self, const WItem *it);
/* Text time of mel frame `frame` of the audio transcribed (through the map, if any). */
GstClockTime gst_whisper_vad_frame_time(GstWhisper *self, GstClockTime t0, gint64 frame);

/* gstwhisperlive.c: the live driver, glue to wkv_stream (all worker-only). */
void gst_whisper_live_init(GstWhisper *self);
/* Frees the stream (before the context it runs on). */
void gst_whisper_live_free(GstWhisper *self);
/* A new stretch: creates the stream on first use, else resets it (forgets the audio
 * and the committed text, back to the initial prompt).  FALSE on an error (reported). */
gboolean gst_whisper_live_begin(GstWhisper *self);
/* Whether `it` has samples to push, or has ended with audio still held.  Lock held. */
gboolean gst_whisper_live_ready(GstWhisper *self, WItem *it);
/* Pushes `it`'s new samples into the stream (which runs when a step is due), finishes
 * it when `it` is closed, and pushes the text; the lock is held on entry and exit.
 * FALSE on a fatal error. */
gboolean gst_whisper_live_run(GstWhisper *self, WItem *it);

G_END_DECLS

#endif
