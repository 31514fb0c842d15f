#!/bin/sh
# examples/transcribe-wav.c as built here: on jfk.wav with a generated micro model it
# prints timed segments ("[  0.54 -->  11.44] text") and exits 0; a file that is not a
# 16-kHz mono WAV, a missing model and wrong arguments fail with a message.
#
# usage: test_example.sh EXAMPLE MODEL [SHARED_DIR]
#   SHARED_DIR is the build-time default for the shared data; $WHISPERKV_SHARED wins.
# Exits 0 when all pass, 1 on any failure, 77 (skip) when the shared recordings are
# missing outside CI.
set -u

EXAMPLE=${1:?usage: test_example.sh EXAMPLE MODEL [SHARED_DIR]}
MODEL=${2:?missing MODEL}
SHARED=${WHISPERKV_SHARED:-${3:-}}
JFK=$SHARED/speech/jfk/jfk.wav

if [ ! -f "$JFK" ]; then
    echo "test_example: no $JFK"
    case "${CI:-}" in
    "" | false | 0)
        echo "test_example: skipped (set WHISPERKV_SHARED or put shared/ next to the checkout)"
        exit 77 ;;
    *)
        echo "test_example: CI=${CI}: the shared data must be there"
        exit 1 ;;
    esac
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok   - $1"; }
bad() {
    failed=1
    echo "FAIL - $1"
    for f in "$tmp/out" "$tmp/err"; do
        [ -s "$f" ] && head -n 12 "$f" | sed "s|^|       $(basename "$f"): |"
    done
}

# A timed segment: "[  s.ss -->   s.ss] text", the end not before the start.
TIMED='^\[ *[0-9][0-9]*\.[0-9][0-9] --> *[0-9][0-9]*\.[0-9][0-9]\] '

"$EXAMPLE" "$MODEL" "$JFK" >"$tmp/out" 2>"$tmp/err"
rc=$?
n=$(grep -c "$TIMED" "$tmp/out")
if [ $rc -eq 0 ] && [ "$n" -ge 1 ] && [ "$n" -eq "$(wc -l <"$tmp/out")" ] &&
    awk -F'[][]|-->' '{ if ($2 + 0 > $3 + 0) exit 1 }' "$tmp/out"; then
    ok "jfk.wav: $n timed segments, status 0 (first: $(head -n 1 "$tmp/out"))"
else
    bad "jfk.wav: status $rc, $n timed segments of $(wc -l <"$tmp/out") lines"
fi

# fails WHAT PATTERN ARGS...: the example exits 1, says PATTERN on stderr, prints nothing.
fails() {
    what=$1 pattern=$2
    shift 2
    "$EXAMPLE" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "$pattern" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        ok "$what: status 1 and why"
    else
        bad "$what: status $rc"
    fi
}

printf 'not a wav file\n' >"$tmp/bad.wav"
fails "a file that is not a WAV" 'not a 16-kHz mono 16-bit WAV file' "$MODEL" "$tmp/bad.wav"
fails "a missing model" '^error: .*no-model.bin' "$tmp/no-model.bin" "$JFK"

"$EXAMPLE" "$MODEL" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q '^usage: ' "$tmp/err"; then
    ok "one argument: usage, status 2"
else
    bad "one argument: status $rc"
fi

exit $failed
