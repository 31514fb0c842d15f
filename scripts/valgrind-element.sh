#!/bin/sh
# The whisper element's tests under valgrind memcheck (docs/reliability.md, "valgrind"):
# the `valgrind` suite of tests/gst through the `valgrind` test setup, which fails a
# test on any invalid read or write or any definitely lost byte (GLib's glib.supp and
# tests/gst/gst.supp suppress one-time allocations of the system libraries only).
#
#   scripts/valgrind-element.sh [BUILD_DIR]     (default: build; configured if missing)
#
# About 8 minutes on 2 cores.  Needs the valgrind package.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
command -v valgrind >/dev/null || { echo "valgrind-element.sh: valgrind is not installed" >&2; exit 1; }
[ -f "$build/build.ninja" ] || meson setup "$build"
meson compile -C "$build"
unset GST_DEBUG G_SLICE
exec meson test -C "$build" --setup valgrind --suite valgrind --num-processes 2 --print-errorlogs
