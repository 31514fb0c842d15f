# shellcheck shell=bash
# Shared set-up for .ci/run, scripts/test.sh and scripts/transcribe.sh: installs the
# Debian/Ubuntu packages that are missing, configures and builds with meson, runs the
# tests and sums up their results.  Source it from bash; it defines functions only.

WKV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# What the build and the tests use: compiler and build tools, the core's libraries
# (OpenBLAS, zlib), and the CLI's (GLib, json-glib, GStreamer with the decoders of
# plugins-base and -good: wav, flac, mp3, ogg...).  textoverlay, which the element's
# tests and the burnt-in subtitle example use, is plugins-base's pango plugin: Debian
# ships it in gstreamer1.0-x, which --no-install-recommends does not bring.  The element's
# recipes (test gst-recipes) use Python through GObject introspection (python3-gi,
# gir1.2-gstreamer-1.0) and gst-launch-1.0 (gstreamer1.0-tools, which the GStreamer
# packages above do not pull in on a bare Debian).  gst-plugins-bad brings srtenc and
# webvttenc, which the SRT recipe runs (gst-recipes).  Its 144 plugins' caps in the
# registry push GLib's quark table past its first block, which GLib drops on purpose
# and LeakSanitizer reports: the sanitizer suite loads every plugin but plugins-bad's
# (meson.build's asan setup); tests/gst/gst.supp names that block for valgrind.
WKV_PACKAGES=(
    gcc libc6-dev meson ninja-build pkg-config
    libopenblas-dev zlib1g-dev libdnnl-dev
    libglib2.0-dev libjson-glib-dev
    libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
    gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-x
    python3-gi gir1.2-gstreamer-1.0 gstreamer1.0-tools gstreamer1.0-plugins-bad
)

wkv_log() {
    echo "[whisperkv] $*" >&2
}

# The packages among "$@" that are not installed, one per line.
wkv_missing_packages() {
    local p
    for p in "$@"; do
        if [[ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" != installed ]]; then
            echo "$p"
        fi
    done
}

# Installs WKV_PACKAGES plus "$@" when missing (apt-get update first), as root or
# through sudo.  Returns non-zero when something is missing and cannot be installed.
wkv_install_packages() {
    local -a want=("${WKV_PACKAGES[@]}" "$@") missing=() sudo=()
    if ! command -v dpkg-query >/dev/null 2>&1; then
        wkv_log "not a Debian/Ubuntu system: make sure these (or your distribution's" \
            "equivalents) are installed: ${want[*]}"
        return 0
    fi
    mapfile -t missing < <(wkv_missing_packages "${want[@]}")
    if ((${#missing[@]} == 0)); then
        return 0
    fi
    wkv_log "installing missing packages: ${missing[*]}"
    if ((EUID != 0)); then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            wkv_log "not root and no sudo: run as root:" \
                "apt-get update && apt-get install -y ${missing[*]}"
            return 1
        fi
    fi
    "${sudo[@]}" apt-get update -q || { wkv_log "apt-get update failed"; return 1; }
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
        "${missing[@]}" || { wkv_log "apt-get install failed for: ${missing[*]}"; return 1; }
}

# meson >= 0.63 is required (Ubuntu 22.04's apt meson is older).
wkv_check_meson() {
    local v
    v=$(meson --version 2>/dev/null) || { wkv_log "meson is not installed"; return 1; }
    if [[ "$(printf '%s\n%s\n' 0.63.0 "$v" | sort -V | head -n1)" != 0.63.0 ]]; then
        wkv_log "meson $v is too old (0.63 or newer needed); install a newer one, e.g." \
            "'pipx install meson' or 'pip install --user meson', and put it first in PATH"
        return 1
    fi
}

# wkv_configure BUILD_DIR [fresh|keep] [MESON_OPTION...]: configures BUILD_DIR
# (relative to the checkout) unless it already is configured; "fresh" starts from an
# empty one.
wkv_configure() {
    local dir=$1 fresh=${2:-keep}
    shift $(($# < 2 ? $# : 2))
    wkv_check_meson || return 1
    cd "$WKV_ROOT" || return 1
    if [[ "$fresh" == fresh && -e "$dir" ]]; then
        if [[ ! -d "$dir/meson-private" && -n "$(ls -A "$dir" 2>/dev/null)" ]]; then
            wkv_log "$dir exists and is not a meson build folder; not removing it"
            return 1
        fi
        rm -rf "$dir"
    fi
    if [[ -f "$dir/build.ninja" ]]; then
        return 0 # ninja re-runs meson by itself when a meson.build changed
    fi
    # CI: a test whose optional dependency is missing must not leave the suite quietly
    if wkv_is_ci; then
        set -- "$@" -Dall_tests=enabled
    fi
    meson setup "$dir" "$@"
}

# True when running under CI (CI set to anything but "" or "false").
wkv_is_ci() {
    [[ -n "${CI:-}" && "${CI:-}" != false ]]
}

# wkv_build BUILD_DIR [TARGET...]: builds everything, or only the targets named
# (meson's [PATH/]NAME, e.g. cli/whisperkv-transcribe).
wkv_build() {
    (cd "$WKV_ROOT" && meson compile -C "$@")
}

# wkv_test_summary BUILD_DIR [LOG]: prints "N passed, N failed" (and ", N skipped" when
# tests were skipped) from the test log (LOG, default testlog.json; a test setup's is
# testlog-SETUP.json); returns non-zero on any failure or when no test ran.
wkv_test_summary() {
    local log=$WKV_ROOT/$1/meson-logs/${2:-testlog.json}
    local passed=0 failed=0 skipped=0 r
    if [[ -f "$log" ]]; then
        while read -r r; do
            case "$r" in
            OK | EXPECTEDFAIL) passed=$((passed + 1)) ;;
            SKIP) skipped=$((skipped + 1)) ;;
            *) failed=$((failed + 1)) ;; # FAIL TIMEOUT UNEXPECTEDPASS ERROR
            esac
        done < <(grep -o '"result": *"[A-Z]*"' "$log" | sed 's/.*"\([A-Z]*\)"$/\1/')
    fi
    if ((failed > 0)); then
        wkv_failed_tests "$log"
    fi
    if ((skipped > 0)); then
        echo "$passed passed, $failed failed, $skipped skipped"
    else
        echo "$passed passed, $failed failed"
    fi
    if ((failed > 0)); then
        return 1
    fi
    if ((passed == 0)); then
        wkv_log "no test ran"
        return 1
    fi
}

# wkv_failed_tests LOG: one line "wkv-failed: NAME RESULT SECONDS" per test of the meson
# test log LOG that did not pass, each followed by the last lines of its output (as
# "wkv-failed:   | ..."), so that a CI log's tail names what failed even when only its
# end is kept (.ci/run repeats these lines last).  python3 is there: meson runs on it.
wkv_failed_tests() {
    python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("result") in ("OK", "EXPECTEDFAIL", "SKIP"):
        continue
    print("wkv-failed: %s %s %.0f s" % (r.get("name"), r.get("result"), r.get("duration", 0)))
    out = (r.get("stdout") or "").rstrip("\n").split("\n")
    for l in out[-25:]:
        print("wkv-failed:   | " + l[:300])
PY
}

# wkv_check_count BUILD_DIR LOG [MESON-TEST-ARGS...]: fails unless LOG (in meson-logs)
# holds a result for every test `meson test --list MESON-TEST-ARGS` promises: a run
# that stopped early, or a test left out, is noticed.
wkv_check_count() {
    local dir=$1 log=$WKV_ROOT/$1/meson-logs/$2 promised ran
    shift 2
    promised=$(cd "$WKV_ROOT" && meson test -C "$dir" --list "$@" 2>/dev/null | grep -c ' / ' || true)
    ran=0
    if [[ -f "$log" ]]; then
        ran=$(grep -c '"result": *"' "$log" || true)
    fi
    if ((ran != promised)); then
        wkv_log "$dir: $ran test results for the $promised tests meson lists"
        return 1
    fi
}

# wkv_run_tests BUILD_DIR: the README's test command, then the summary line.
wkv_run_tests() {
    local dir=$1 rc=0
    rm -f "$WKV_ROOT/$dir/meson-logs/testlog.json"
    (cd "$WKV_ROOT" && meson test -C "$dir" --print-errorlogs) || rc=$?
    wkv_check_count "$dir" testlog.json || rc=1
    wkv_test_summary "$dir" || rc=1
    return "$rc"
}
