/* The gstwhisper plugin: the `whisper` element. */
#include <gst/gst.h>

#include "gstwhisper.h"

#ifndef PACKAGE
#define PACKAGE "whisperkv"
#endif

static gboolean plugin_init(GstPlugin *plugin)
{
    return gst_whisper_register(plugin);
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, whisper,
                  "Whisper speech to text (whisperkv)", plugin_init, GST_WHISPER_VERSION,
                  "MIT", "whisperkv", "https://github.com/whisperkv/whisperkv")
