#!/bin/sh
# Subtitle cues of readable size into Matroska with `whisperkv`:
#   examples/whisper-subtitle-cues.sh MODEL INPUT OUT.mkv [WIDTH [LINES]]
# The element times every word (word-timestamps) and cuts the words into cues of at
# most WIDTH characters a line (42) and LINES lines (2), as the CLI's
# `--word-timestamps --max-line-width --max-line-count` SRT; each cue is one buffer on
# text_src, muxed as a subtitle track next to the video (if any) and the audio.
# Offline: a cue exists once the word after it is decoded; the unlimited queues let
# audio and video run ahead meanwhile.
# Without the plugin installed: GST_PLUGIN_PATH=build/gst-plugin.
set -e
MODEL=$1; IN=$2; OUT=$3; WIDTH=${4:-42}; LINES=${5:-2}
[ -n "$MODEL" ] && [ -n "$IN" ] && [ -n "$OUT" ] || {
  echo "usage: $0 MODEL INPUT OUT.mkv [WIDTH [LINES]]" >&2; exit 2; }
VENC=${VENC:-vp8enc deadline=1}   # any video encoder matroskamux takes
Q="queue max-size-time=0 max-size-buffers=0 max-size-bytes=0"
W="whisperkv model=$MODEL name=w word-timestamps=true text-unit=cue \
max-line-width=$WIDTH max-line-count=$LINES"

# a video stream or not (HAS_VIDEO=1/0, else gst-discoverer-1.0 if installed, else
# audio only): audio-only input gets an audio-and-subtitles file
if [ -z "$HAS_VIDEO" ] && command -v gst-discoverer-1.0 >/dev/null; then
  gst-discoverer-1.0 "$IN" 2>/dev/null | grep -q "video:" && HAS_VIDEO=1
fi
if [ "$HAS_VIDEO" = 1 ]; then
  VIDEO="d. ! $Q ! videoconvert ! $VENC ! $Q ! m."
else
  VIDEO=""
fi
gst-launch-1.0 -q filesrc location="$IN" ! decodebin name=d \
  $VIDEO \
  d. ! $Q ! $W ! $Q ! audioconvert ! vorbisenc ! $Q ! matroskamux name=m ! filesink location="$OUT" \
  w.text_src ! $Q ! m.
