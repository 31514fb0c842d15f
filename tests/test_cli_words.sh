#!/bin/sh
# whisperkv-transcribe --word-timestamps against testvectors/*/words.json: for every
# run (alignment heads, language) the JSON words, and the srt and vtt bytes for every
# cue option set the vectors hold (tests/cli_words_check.c compares), written from the
# run's JSON with --from-json; one option set of each vector set also straight from a
# transcription (the same bytes).  One transcription a run: 9 instead of 45.
#
# usage: test_cli_words.sh CLI WORDS_CHECK [SHARED_DIR]   ($WHISPERKV_SHARED wins)
# Exits 0 when all pass, 1 on any failure, 77 (skip) when the vectors are missing
# outside CI.
set -u
CLI=${1:?usage: test_cli_words.sh CLI WORDS_CHECK [SHARED_DIR]}
WCHECK=${2:?missing WORDS_CHECK}
SHARED=${WHISPERKV_SHARED:-${3:-}}

passed=0
failed=0
# verdict STATUS DESCRIPTION: one line per check; a failure shows $tmp/err
verdict() {
    if [ "$1" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok   - $2"
    else
        failed=$((failed + 1))
        echo "FAIL - $2"
        sed 's/^/       | /' "$tmp/err" 2>/dev/null | head -n 8
    fi
}

if [ -z "$SHARED" ] || [ ! -f "$SHARED/testvectors/micro-en/words.json" ]; then
    echo "test_cli_words: the word-timestamp vectors are missing under '${SHARED:-(unset)}'"
    case "${CI:-}" in "" | false | 0) exit 77 ;; *) exit 1 ;; esac
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_cli_words.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

for set in micro-en micro-multi; do
    W=$SHARED/testvectors/$set/words.json
    case $set in micro-en) wav=$SHARED/speech/gb0/gb0.wav ;; *) wav=$SHARED/speech/jfk/jfk.wav ;; esac
    # the vectors' options: temperature 0 only, no thresholds
    base="-m $SHARED/testvectors/$set/model.bin -t 2 --no-fallback --no-speech-threshold 1 --word-timestamps"
    "$WCHECK" list "$W" >"$tmp/list" 2>"$tmp/err" || { verdict 1 "$set: cannot list the runs"; continue; }
    cut -f1-3 "$tmp/list" | sort -u >"$tmp/runs"
    # one transcription a run: its json words, and its document for the cues below
    while IFS='	' read -r run heads lang; do
        # shellcheck disable=SC2086 # $base is split on purpose
        "$CLI" $base -l "$lang" --alignment-heads "$heads" -o json "$wav" >"$tmp/$run.json" 2>"$tmp/err"
        [ $? -eq 0 ] && "$WCHECK" json "$W" "$run" "$tmp/$run.json" >"$tmp/n" 2>"$tmp/err"
        verdict $? "$set/$run: json words equal the reference's ($(cat "$tmp/n" 2>/dev/null))"
    done <"$tmp/runs"
    # every cue option set from the run's document (--from-json: the same writers on the
    # same numbers), and the first one of the set also from a transcription writing srt
    # and vtt itself, which must give the same bytes
    direct=1
    while IFS='	' read -r run heads lang writer flags; do
        for fmt in srt vtt; do
            # shellcheck disable=SC2086 # $flags is split on purpose
            "$CLI" --from-json --word-timestamps $flags -o "$fmt" "$tmp/$run.json" \
                >"$tmp/out.$fmt" 2>"$tmp/err"
            [ $? -eq 0 ] && "$WCHECK" cues "$W" "$run" "$writer" "$fmt" "$tmp/out.$fmt" 2>"$tmp/err"
            verdict $? "$set/$run: $fmt with '$writer' (--from-json) equals the reference writer's bytes"
            [ "$direct" -eq 1 ] || continue
            # shellcheck disable=SC2086 # $base and $flags are split on purpose
            "$CLI" $base -l "$lang" --alignment-heads "$heads" -o "$fmt" $flags "$wav" \
                >"$tmp/direct.$fmt" 2>"$tmp/err"
            [ $? -eq 0 ] && cmp "$tmp/direct.$fmt" "$tmp/out.$fmt" >"$tmp/err" 2>&1
            verdict $? "$set/$run: $fmt with '$writer' written by the transcription equals --from-json's"
        done
        direct=0
    done <"$tmp/list"
done

echo "test_cli_words: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
