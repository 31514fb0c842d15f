/* The offline batching step, batch-size > 1 (gstwhisperbatch.c; worker thread only). */
#ifndef GST_WHISPER_BATCH_H
#define GST_WHISPER_BATCH_H

#include "gstwhisper.h"
#include "gstwhisperqueue.h"
#include "gstwhispersegs.h"

G_BEGIN_DECLS

/* The batch step's (worker-only): the samples taken from the stretch (pcm: n of them,
 * from stream index base; they left the queue), cut into n_chunks chunks of which
 * `next` is the next to decode; speech: the stretch's speech was cut into chunks (VAD,
 * once it ended). */
typedef struct {
    float *pcm;
    gsize n;
    gint64 base;
    wkv_chunk *chunks;
    gint n_chunks, next;
    gboolean speech;
} GstWhisperBatch;

typedef enum {
    GST_WHISPER_BATCH_RAN,   /* a batch ran (or was cancelled by a flush) */
    GST_WHISPER_BATCH_WAIT,  /* more audio of the stretch is needed first */
    GST_WHISPER_BATCH_DONE,  /* the stretch is transcribed */
    GST_WHISPER_BATCH_ERROR, /* fatal: posted, or in out's error */
} GstWhisperBatchStep;
/* One step of `it`: takes its next batch of audio when none is left (N x 30 s as they
 * come, the rest once it ended; with VAD its speech chunks once it ended) and decodes
 * the next batch_size chunks, their text into *out (one piece).  Lock held on entry
 * and exit. */
GstWhisperBatchStep gst_whisper_batch_run(GstWhisper *self, WItem *it, GstWhisperDecoded *out);
/* Drops the samples and chunks taken (a new stretch, a flush, unloading). */
void gst_whisper_batch_forget(GstWhisper *self);

G_END_DECLS

#endif
