/* The whisperkv plugin: the whisperkv and whisperkvtranscriber elements. */
#include <gst/gst.h>

#include "gstwhisper.h"

#ifndef PACKAGE
#define PACKAGE "whisperkv"
#endif

static gboolean plugin_init(GstPlugin *plugin)
{
    return gst_whisper_register(plugin);
}

/* "MIT/X11" is how GStreamer's list of licenses names the MIT license. */
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, whisperkv,
                  "Whisper speech to text (whisperkv)", plugin_init, GST_WHISPER_VERSION,
                  "MIT/X11", "whisperkv", "https://github.com/whisperkv/whisperkv")
