#!/bin/sh
# The picture in docs/element.md: a recording's captions drawn over a test video by
# textoverlay, one frame kept as PNG.
#   examples/caption-picture.sh MODEL IN.wav OUT.png
# Renders every frame (10 a second, 480x270) to a temporary folder and keeps the one
# with the most ink that differs from the plain video, i.e. a frame with a caption.
# Without the plugin installed: GST_PLUGIN_PATH=build/gst-plugin.
set -eu
MODEL=${1:?usage: caption-picture.sh MODEL IN.wav OUT.png}
IN=${2:?usage: caption-picture.sh MODEL IN.wav OUT.png}
OUT=${3:?usage: caption-picture.sh MODEL IN.wav OUT.png}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/caption-picture.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
gst-launch-1.0 -q filesrc location="$IN" ! decodebin ! \
  whisperkv model="$MODEL" name=w ! fakesink \
  videotestsrc pattern=smpte num-buffers=110 ! \
  video/x-raw,width=480,height=270,framerate=10/1 ! \
  textoverlay name=o font-desc="Sans 16" valignment=bottom ! videoconvert ! \
  pngenc ! multifilesink location="$tmp/f%03d.png" w.text_src ! o.text_sink
gst-launch-1.0 -q videotestsrc pattern=smpte num-buffers=1 ! \
  video/x-raw,width=480,height=270,framerate=10/1 ! videoconvert ! pngenc ! \
  filesink location="$tmp/plain.png"
# the frame whose PNG differs most in size from the plain one: text adds detail
plain=$(wc -c <"$tmp/plain.png")
best=$(for f in "$tmp"/f*.png; do
    echo "$(($(wc -c <"$f") - plain)) $f"
done | sort -n | tail -n 1 | cut -d' ' -f2)
cp "$best" "$OUT"
echo "caption-picture: $(basename "$best") -> $OUT"
