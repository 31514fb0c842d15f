#!/usr/bin/env bash
# The whisper element's tests (suite `gst`: worker thread, flushes, seeks, state
# cycles, two elements sharing a model, live mode, hostile streams) built with
# ThreadSanitizer and run through the `tsan` test setup of meson.build (any report
# fails the test).  Not in CI: about 20 minutes on 2 cores.  docs/reliability.md,
# "ThreadSanitizer".
#
#   scripts/tsan-element.sh [fresh|keep]     build folder: $WKV_TSAN_BUILD_DIR or build-tsan
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/setup.sh
source "$here/setup.sh"

build=${WKV_TSAN_BUILD_DIR:-build-tsan}
mode=${1:-keep}
# shellcheck disable=SC2119 # gcc brings libtsan
wkv_install_packages
if [[ "$mode" == fresh || ! -f "$WKV_ROOT/$build/build.ninja" ]]; then
    # b_lundef=false: the plugin leaves the TSan runtime's symbols to the executable
    wkv_configure "$build" fresh -Db_sanitize=thread -Db_lundef=false -Dexamples=disabled
fi
wkv_build "$build"
rm -f "$WKV_ROOT/$build/meson-logs/testlog-tsan.json"
rc=0
# every test of the suite but gst-textoverlay: pango and fontconfig (uninstrumented)
# share their font caches between the video and text threads under locks TSan cannot
# follow, and the test checks linking to textoverlay, not our threads
mapfile -t tests < <(cd "$WKV_ROOT" && meson test -C "$build" --setup tsan --suite gst --list 2>/dev/null |
    sed -n 's|^whisperkv:gst / ||p' | grep -vx 'gst-textoverlay')
(cd "$WKV_ROOT" && meson test -C "$build" --setup tsan --num-processes 2 --print-errorlogs \
    "${tests[@]}") || rc=$?
wkv_test_summary "$build" testlog-tsan.json || rc=1
exit "$rc"
