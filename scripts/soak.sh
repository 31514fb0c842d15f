#!/usr/bin/env bash
# Soak test of the `whisperkv` element (not in CI: it takes over 15 minutes).  Streams
# the shared recordings (../shared/speech, or $WHISPERKV_SHARED/speech), looped, through
# appsrc ! audioconvert ! audioresample ! whisperkv with tests/soak/whisper_soak:
#   offline  one hour of audio, not live, as fast as the element goes;
#   live     ten minutes at real time from a live source.
# Each prints a row a minute of wall time (RSS, heap in use, final segments so far,
# audio seconds the element is done with, audio seconds pushed) and PASS/FAIL for RSS
# growth (< 5 MB after the first row), timestamps (ordered, not overlapping) and
# segments (text buffers == final whisper-segment messages, text covering all the
# audio, no errors).
#
#   scripts/soak.sh [offline|live|all]          default: all
#
# The model is a generated random-weight tiny f16 model unless WKV_SOAK_MODEL names
# one.  Random models never end a window early (224 tokens each, the worst case) and
# fail the fallback thresholds on every window, so the soak decodes with
# temperature-fallback=false: with it each window costs ~25 decoder runs and an hour of
# audio takes over an hour.
#
# Environment: WKV_SOAK_BUILD_DIR (default build-soak), WKV_SOAK_OFFLINE_S (3600),
# WKV_SOAK_LIVE_S (600), WKV_SOAK_INTERVAL_S (60: seconds of wall time between rows;
# an hour of audio offline takes under 3 minutes on 2 cores, so 10 gives more rows),
# WKV_SOAK_MAX_AHEAD (offline: seconds the source may run ahead of the element's text, 0 or ≥ 60;
# default 0, no limit, like a file source).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/setup.sh
source "$here/setup.sh"

what=${1:-all}
case "$what" in
offline | live | all) ;;
*)
    echo "usage: $0 [offline|live|all]" >&2
    exit 2
    ;;
esac
build=${WKV_SOAK_BUILD_DIR:-build-soak}
shared=${WHISPERKV_SHARED:-$WKV_ROOT/../shared}
if [[ ! -d "$shared/speech" ]]; then
    wkv_log "no recordings in $shared/speech (set WHISPERKV_SHARED)"
    exit 1
fi

# shellcheck disable=SC2119 # no extra packages
wkv_install_packages
wkv_configure "$build" keep -Dexamples=enabled
wkv_build "$build" tests/gen_model tests/soak/whisper_soak

out=$WKV_ROOT/$build/soak
mkdir -p "$out"
model=${WKV_SOAK_MODEL:-$out/tiny-f16.bin}
if [[ ! -f "$model" ]]; then
    "$WKV_ROOT/$build/tests/gen_model" --out "$model" --size tiny --ftype f16 --seed 11
fi

soak=$WKV_ROOT/$build/tests/soak/whisper_soak
rc=0
run() { # MODE SECONDS [OPTION...]
    local mode=$1 secs=$2 log=$out/$1.log
    shift 2
    wkv_log "soak $mode: $secs s of audio (log: $log)"
    nice -n 10 "$soak" --model "$model" --speech "$shared/speech" --mode "$mode" \
        --duration "$secs" --interval "${WKV_SOAK_INTERVAL_S:-60}" --no-fallback "$@" 2>&1 |
        tee "$log" || rc=1
}
if [[ "$what" != live ]]; then
    run offline "${WKV_SOAK_OFFLINE_S:-3600}" --max-ahead "${WKV_SOAK_MAX_AHEAD:-0}"
fi
if [[ "$what" != offline ]]; then
    run live "${WKV_SOAK_LIVE_S:-600}"
fi
if ((rc == 0)); then
    wkv_log "soak: PASS"
else
    wkv_log "soak: FAIL"
fi
exit "$rc"
