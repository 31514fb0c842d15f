#!/bin/sh
# A video file subtitled by `whisperkv`:
#   examples/whisper-subtitle-video.sh MODEL INPUT OUT.mkv [BURNT.mkv]
# OUT.mkv: the original video and audio re-encoded, plus the transcript as a subtitle
# track.  BURNT.mkv (optional): the text burnt into the picture with textoverlay.
# Offline, text for a stretch of audio exists once its 30-s window is complete (or
# at the end): the unlimited queues let audio and video run ahead meanwhile.
# Without the plugin installed: GST_PLUGIN_PATH=build/gst-plugin.
set -e
MODEL=$1; IN=$2; OUT=$3; BURNT=$4
[ -n "$MODEL" ] && [ -n "$IN" ] && [ -n "$OUT" ] || {
  echo "usage: $0 MODEL INPUT OUT.mkv [BURNT.mkv]" >&2; exit 2; }
VENC=${VENC:-vp8enc deadline=1}   # any video encoder matroskamux takes
Q="queue max-size-time=0 max-size-buffers=0 max-size-bytes=0"

# the subtitle track
gst-launch-1.0 -q filesrc location="$IN" ! decodebin name=d \
  d. ! $Q ! videoconvert ! $VENC ! $Q ! matroskamux name=m ! filesink location="$OUT" \
  d. ! $Q ! whisperkv model="$MODEL" name=w ! $Q ! audioconvert ! vorbisenc ! $Q ! m. \
  w.text_src ! $Q ! m.

# burnt in
if [ -n "$BURNT" ]; then
  gst-launch-1.0 -q filesrc location="$IN" ! decodebin name=d \
    d. ! $Q ! videoconvert ! textoverlay name=o valignment=bottom ! videoconvert ! \
      $VENC ! $Q ! matroskamux name=m ! filesink location="$BURNT" \
    d. ! $Q ! whisperkv model="$MODEL" name=w ! $Q ! audioconvert ! vorbisenc ! $Q ! m. \
    w.text_src ! $Q ! o.text_sink
fi
