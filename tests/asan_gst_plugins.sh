#!/bin/sh
# The GStreamer plugins the sanitizer suite loads (meson.build's asan setup points
# GST_PLUGIN_SYSTEM_PATH_1_0 at OUTDIR; it says why): OUTDIR gets a symbolic link to
# every plugin of PLUGINSDIR except gst-plugins-bad's, the files dpkg lists for
# gstreamer1.0-plugins-bad (without dpkg every plugin is linked).  Remade at every
# build of a sanitizer build folder, so that plugins installed or removed since are
# seen; STAMP gets a line saying what was linked.
#   tests/asan_gst_plugins.sh PLUGINSDIR OUTDIR STAMP
set -eu
src=$1 out=$2 stamp=$3
bad=
if command -v dpkg-query >/dev/null 2>&1; then
    bad=$(dpkg-query -L gstreamer1.0-plugins-bad 2>/dev/null |
        sed -n 's|.*/gstreamer-1\.0/\([^/]*\.so\)$|\1|p')
fi
rm -rf "$out"
mkdir -p "$out"
linked=0 left=0
for f in "$src"/*.so; do
    [ -e "$f" ] || continue
    name=${f##*/}
    if printf '%s\n' "$bad" | grep -qxF "$name"; then
        left=$((left + 1))
    else
        ln -s "$f" "$out/$name"
        linked=$((linked + 1))
    fi
done
echo "$linked plugins of $src linked, $left of gst-plugins-bad left out" >"$stamp"
