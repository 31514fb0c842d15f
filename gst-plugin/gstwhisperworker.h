/* The worker (gstwhisperworker.c): the task on the text pad that drives the steps. */
#ifndef GST_WHISPER_WORKER_H
#define GST_WHISPER_WORKER_H

#include "cue_cut.h"
#include "gstwhisper.h"
#include "gstwhisperqueue.h"

G_BEGIN_DECLS

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
    gpointer collect;         /* the window under way's GstWhisperCollect (offline.c) */
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

/* The task's function: one event, one window, one batch or one live run. */
void gst_whisper_worker_loop(gpointer data);
/* Drops the decoding state of the current stretch (a new stretch, a flush, unloading).
 * q.lock held, or the task stopped. */
void gst_whisper_worker_forget_item(GstWhisper *self);

G_END_DECLS

#endif
