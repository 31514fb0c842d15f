/* The pads (gstwhisperpads.c): chain, sink events, queries, the text pad's activation,
 * on the streaming thread and the application's. */
#ifndef GST_WHISPER_PADS_H
#define GST_WHISPER_PADS_H

#include "gstwhisper.h"

G_BEGIN_DECLS

void gst_whisper_pads_init(GstWhisper *self);
void gst_whisper_pads_class_init(GstElementClass *element_class, gboolean transcriber);
/* Drops what the filter held for src (PAUSED->READY, FLUSH_STOP). */
void gst_whisper_pads_drop_held(GstWhisper *self);

G_END_DECLS

#endif
