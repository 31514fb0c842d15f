#!/bin/sh
# Live captions from the microphone, printed to the terminal.
#   examples/whisper-live-captions.sh MODEL [words]
# Every 2 s the audio held is transcribed once; the words before the first one the
# model hears at the very end of the audio are final (commit-policy=alignatt, the
# default; one line each), the rest shows as partial messages.
# With `words`, the element commits word by word (word-timestamps, text-unit=word):
# each word is printed as soon as it is final (or the latency forces it), one buffer
# per word as the gst-plugins-rs transcribers push them.
# The queues keep the audio and the text flowing while the sinks wait out the
# element's latency (the pipeline's latency is the `latency` property).
# Without the plugin installed: GST_PLUGIN_PATH=build/gst-plugin.
set -e
MODEL=${1:-${WHISPERKV_MODEL:?give a model: $0 MODEL [words]}}
UNIT=
[ "${2:-}" = words ] && UNIT="word-timestamps=true text-unit=word"
exec gst-launch-1.0 -q autoaudiosrc ! \
  whisperkv model="$MODEL" step=2000 latency=6000 $UNIT name=w ! \
  queue max-size-time=10000000000 max-size-buffers=0 max-size-bytes=0 ! fakesink sync=true \
  w.text_src ! queue max-size-time=10000000000 max-size-buffers=0 max-size-bytes=0 ! \
  fdsink fd=1 sync=false
