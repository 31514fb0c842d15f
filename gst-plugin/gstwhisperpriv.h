/* The whisper element's instance (not installed): each part's state side by side.
 * Each part's functions are in its own header; a file includes this one for the
 * instance and calls only the parts below it (gst-plugin/meson.build's order,
 * checked by tools/check_element.py).
 *
 * The instance state is split by who may touch it:
 *   props, stats  under the object lock (GST_OBJECT_LOCK): gstwhisperprops.c and
 *                 gstwhisperstats.c own them;
 *   q             under `q.lock`: the queue between the streaming thread and the
 *                 worker (gstwhisperqueue.c; the worker loop waits on its conds);
 *   w             the run's settings (READY->PAUSED) and the worker's own; with
 *   text, off, batch, speech, cues, live  each step's state: touched only by the
 *                 worker task, or while it is stopped or paused (state changes,
 *                 FLUSH_STOP).
 * No function holds two of these locks at once. */
#ifndef GST_WHISPER_PRIV_H
#define GST_WHISPER_PRIV_H

#include <gst/audio/audio.h>
#include <gst/base/gstflowcombiner.h>

#include "gstwhisper.h"
#include "gstwhisperdebug.h"
#include "gstwhisperalloc.h"
#include "gstwhisperprops.h"
#include "gstwhisperstats.h"
#include "gstwhisperinput.h"
#include "gstwhisperqueue.h"
#include "gstwhispersegs.h"
#include "gstwhispervad.h"
#include "gstwhispercollect.h"
#include "gstwhisperoffline.h"
#include "gstwhisperbatch.h"
#include "gstwhisperlive.h"
#include "gstwhispertext.h"
#include "gstwhisperworker.h"
#include "gstwhisperpads.h"

G_BEGIN_DECLS

/* Offline, before any text went out: no new audio for this long posts a warning that
 * the pipeline may be stuck (gstwhisperworker.c, wait_for_audio). */
#define STALL_WARN_US (10 * G_USEC_PER_SEC)

/* A plain cast for the pad and property functions, which are only installed on
 * GstWhisper instances: GST_WHISPER's type check would call up into gstwhisper.c. */
#define GST_WHISPER_CAST(obj) ((GstWhisper *)(obj))

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
    /* the worker's, by the part that keeps it */
    GstWhisperText text;
    GstWhisperOffline off;
    GstWhisperBatch batch;
    GstWhisperSpeech speech;
    GstWhisperCues cues;
    GstWhisperLive live;
};

G_END_DECLS

#endif
