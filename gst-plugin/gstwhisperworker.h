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
    WItem *item;              /* the stretch being decoded (its steps' state is theirs) */
    /* words and cues */
    gchar *opt_heads;         /* opts.alignment_heads */
    gint text_unit;           /* GstWhisperTextUnit */
    cue_cut_options cue_opts;
    gboolean highlight;       /* highlight-words: a cue as its highlighted sub-cues */
    /* voice activity (vad-model set): the shared model and the parameters */
    GstWhisperModel *vad;
    wkv_vad_params vad_params;
    gboolean post_vad;
    gint batch_size;          /* `batch-size` as it was at READY->PAUSED */
    gboolean batch_live_warned; /* live stretches ignore batch-size: said once */
} GstWhisperWorker;

/* The task's function: one event, one window, one batch or one live run. */
void gst_whisper_worker_loop(gpointer data);
/* Drops the decoding state of the current stretch (a new stretch, a flush, unloading).
 * q.lock held, or the task stopped. */
void gst_whisper_worker_forget_item(GstWhisper *self);

G_END_DECLS

#endif
