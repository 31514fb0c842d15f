#!/bin/sh
# End-to-end test of cli/whisperkv-transcribe on real recordings with a generated
# random-weight micro model: srt, vtt, json and txt outputs, the debug dumps, model
# lookup, live mode (--live, --realtime), the errors (missing file, undecodable
# file, broken model, bad options), and voice activity detection (the --vad-* options).
#
# usage: test_cli.sh CLI GEN_MODEL JSON_CHECK [SHARED_DIR [VAD_CHECK]]
#   SHARED_DIR is the build-time default for the shared data; $WHISPERKV_SHARED wins.
# Prints one line per check; exits 0 when all pass, 1 on any failure, 77 (skip) when
# the shared recordings are missing outside CI.
set -u

CLI=${1:?usage: test_cli.sh CLI GEN_MODEL JSON_CHECK [SHARED_DIR]}
GEN=${2:?missing GEN_MODEL}
JCHECK=${3:?missing JSON_CHECK}
VCHECK=${5:-} # tests/cli_vad_check.c
SHARED=${WHISPERKV_SHARED:-${4:-}}
PROG=whisperkv-transcribe

passed=0
failed=0
ok() {
    passed=$((passed + 1))
    echo "ok   - $1"
}
# bad MESSAGE [FILE...]: a failed check, with the files that explain it
bad() {
    failed=$((failed + 1))
    echo "FAIL - $1"
    shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        echo "       --- $f (first lines):"
        head -n 12 "$f" | sed 's/^/       | /'
    done
}
# check DESCRIPTION COMMAND...: ok when the command succeeds
check() {
    desc=$1
    shift
    if "$@"; then ok "$desc"; else bad "$desc" "$tmp/out" "$tmp/err"; fi
}

skip_or_fail() {
    echo "test_cli: $1"
    case "${CI:-}" in
    "" | false | 0)
        echo "test_cli: skipped (set WHISPERKV_SHARED or put shared/ next to the checkout)"
        exit 77
        ;;
    *)
        echo "test_cli: CI=${CI}: the shared data must be there"
        exit 1
        ;;
    esac
}

[ -x "$CLI" ] || { echo "test_cli: no CLI at $CLI"; exit 1; }
[ -x "$GEN" ] || { echo "test_cli: no model generator at $GEN"; exit 1; }
[ -x "$JCHECK" ] || { echo "test_cli: no JSON checker at $JCHECK"; exit 1; }
{ [ -n "$SHARED" ] && [ -d "$SHARED" ]; } || skip_or_fail "shared data folder '${SHARED:-(unset)}' is missing"
JFK=$SHARED/speech/jfk/jfk.wav
HARVARD=$SHARED/speech/harvard/harvard.wav
for f in "$JFK" "$HARVARD"; do
    [ -f "$f" ] || skip_or_fail "recording $f is missing"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# Paths below are absolute: some checks run in another directory.
case "$CLI" in /*) ;; *) CLI=$(pwd)/$CLI ;; esac
MODEL=$tmp/micro.bin
MULTI=$tmp/micro-multi.bin
# Temperature fallback retries each window at up to 5 more temperatures with several
# samples: off except in one run, to keep the test quick.
NF=--no-fallback

# run ARGS...: the CLI with stdout in $tmp/out, stderr in $tmp/err, status in $rc
run() {
    "$CLI" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

lines() { wc -l <"$1" | tr -d ' '; }
# size_is DESCRIPTION FILE BYTES
size_is() {
    got=$(wc -c <"$2" 2>/dev/null | tr -d ' ')
    if [ "${got:-0}" = "$3" ]; then ok "$1 = $3 bytes"; else bad "$1: ${got:-no file}, not $3 bytes"; fi
}
bytes() { wc -c <"$1" | tr -d ' '; }

# srt_cues FILE: the number of cues when FILE is well-formed SubRip (1-based
# consecutive numbers, "HH:MM:SS,mmm --> HH:MM:SS,mmm", start <= end, starts never
# going back, at least one text line, a blank line after each cue); else fails.
srt_cues() {
    awk '
    function ms(t) { return ((substr(t,1,2)*60 + substr(t,4,2))*60 + substr(t,7,2))*1000 + substr(t,10,3) }
    function err(m) { printf "srt line %d: %s: %s\n", NR, m, $0 > "/dev/stderr"; bad = 1; exit 1 }
    BEGIN { state = "index"; n = 0; prev = -1 }
    {
        sub(/\r$/, "")
        if (state == "index") {
            if ($0 == "") err("blank line where a cue number belongs")
            if ($0 != n + 1) err("cue number is not " (n + 1))
            n++; state = "time"; next
        }
        if (state == "time") {
            if ($0 !~ /^[0-9][0-9]:[0-5][0-9]:[0-5][0-9],[0-9][0-9][0-9] --> [0-9][0-9]:[0-5][0-9]:[0-5][0-9],[0-9][0-9][0-9]$/)
                err("malformed timing line")
            a = ms(substr($0, 1, 12)); b = ms(substr($0, 18, 12))
            if (b < a) err("end before start")
            if (a < prev) err("start goes back")
            prev = a; state = "text1"; next
        }
        if (state == "text1") {
            if ($0 == "") err("cue without text")
            state = "text"; next
        }
        if (state == "text") { if ($0 == "") state = "index"; next }
    }
    END {
        if (bad) exit 1
        if (state != "index") { print "srt: the last cue is not closed by a blank line" > "/dev/stderr"; exit 1 }
        print n
    }' "$1"
}

# vtt_cues FILE: the same for WebVTT ("WEBVTT" first, "HH:MM:SS.mmm --> ...").
vtt_cues() {
    awk '
    function ms(t) { return ((substr(t,1,2)*60 + substr(t,4,2))*60 + substr(t,7,2))*1000 + substr(t,10,3) }
    function err(m) { printf "vtt line %d: %s: %s\n", NR, m, $0 > "/dev/stderr"; bad = 1; exit 1 }
    BEGIN { n = 0; prev = -1; state = "header" }
    {
        sub(/\r$/, "")
        if (state == "header") {
            if ($0 !~ /^WEBVTT([ \t].*)?$/) err("does not start with WEBVTT")
            state = "headerend"; next
        }
        if (state == "headerend") { if ($0 == "") state = "cue"; next }
        if (state == "cue") {
            if ($0 == "") next
            if ($0 !~ /^[0-9][0-9]:[0-5][0-9]:[0-5][0-9]\.[0-9][0-9][0-9] --> [0-9][0-9]:[0-5][0-9]:[0-5][0-9]\.[0-9][0-9][0-9]$/)
                err("malformed timing line")
            a = ms(substr($0, 1, 12)); b = ms(substr($0, 18, 12))
            if (b < a) err("end before start")
            if (a < prev) err("start goes back")
            prev = a; n++; state = "text1"; next
        }
        if (state == "text1") {
            if ($0 == "") err("cue without text")
            if (index($0, "-->")) err("cue text contains -->")
            state = "text"; next
        }
        if (state == "text") {
            if (index($0, "-->")) err("cue text contains -->")
            if ($0 == "") state = "cue"; next
        }
    }
    END {
        if (bad) exit 1
        if (state == "header") { print "vtt: empty file" > "/dev/stderr"; exit 1 }
        print n
    }' "$1"
}

# one_error_line STATUS: the run failed with that status (or any non-zero one when
# STATUS is "nonzero"), printed nothing on stdout and one "whisperkv-transcribe: "
# line on stderr.
one_error_line() {
    if [ "$1" = nonzero ]; then [ "$rc" -ne 0 ] || return 1; else [ "$rc" -eq "$1" ] || return 1; fi
    [ ! -s "$tmp/out" ] && [ "$(lines "$tmp/err")" -eq 1 ] && grep -q "^$PROG: ." "$tmp/err"
}

# ------------------------------------------------------------------ the model
if "$GEN" --out "$MODEL" --size micro --ftype f16 --seed 11 >"$tmp/gen.log" 2>&1 && [ -s "$MODEL" ]; then
    ok "generated a micro f16 model ($(bytes "$MODEL") bytes)"
else
    bad "gen_model --size micro --ftype f16" "$tmp/gen.log"
    echo "test_cli: $passed passed, $failed failed"
    exit 1
fi

# ------------------------------------------------------------------ jfk.wav, 16 kHz mono
run -m "$MODEL" "$JFK" -o json $NF
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && "$JCHECK" "$tmp/out" >"$tmp/facts" 2>"$tmp/err"; then
    ok "jfk.wav -o json parses and has model, language, segments, timings ($(cat "$tmp/facts"))"
else
    bad "jfk.wav -o json (status $rc)" "$tmp/err" "$tmp/out"
    echo "n_mels=0 n_vocab=0 n_audio_ctx=0 n_audio_state=0 segments=0 duration=0" >"$tmp/facts"
fi
cp "$tmp/out" "$tmp/jfk.json"
fact() { tr ' ' '\n' <"$tmp/facts" | sed -n "s/^$1=//p"; }
N_MELS=$(fact n_mels)
N_VOCAB=$(fact n_vocab)
N_AUDIO_CTX=$(fact n_audio_ctx)
N_AUDIO_STATE=$(fact n_audio_state)
N_SEGMENTS=$(fact segments)
check "jfk.wav decodes to 11.0 s of 16 kHz audio" \
    awk -v d="$(fact duration)" 'BEGIN { exit !(d > 10.9 && d < 11.1) }'
check "jfk.wav: json language is \"en\"" grep -q '"language" *: *"en"' "$tmp/jfk.json"

# --sample-len: no window decodes more tokens (without it the micro model's windows
# hold more, so the bound is seen to bite)
per_window() { tr ' ' '\n' <"$1" | awk -F= '$1=="tokens"{t=$2} $1=="windows"{w=$2} END{printf "%.1f", w ? t / w : 0}'; }
PER_WINDOW=$(per_window "$tmp/facts")
run -m "$MODEL" "$JFK" -o json $NF --sample-len 4
if [ "$rc" -eq 0 ] && "$JCHECK" "$tmp/out" >"$tmp/facts4" 2>"$tmp/err"; then
    p4=$(per_window "$tmp/facts4")
    if awk -v a="$PER_WINDOW" -v b="$p4" 'BEGIN { exit !(a > 4 && b > 0 && b <= 4) }'; then
        ok "--sample-len 4: at most 4 tokens a window ($p4; $PER_WINDOW without)"
    else
        bad "--sample-len 4: $p4 tokens a window, $PER_WINDOW without" "$tmp/out"
    fi
else
    bad "--sample-len 4 -o json (status $rc)" "$tmp/err" "$tmp/out"
fi

# srt through --output-file: nothing on stdout, a valid file
run -m "$MODEL" "$JFK" -o srt --output-file "$tmp/jfk.srt" $NF
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ] &&
    n=$(srt_cues "$tmp/jfk.srt" 2>"$tmp/err"); then
    ok "jfk.wav -o srt --output-file: valid SubRip ($n cues), nothing on stdout"
    SRT_CUES=$n
    # every segment is one cue: the same count, and the micro model does write text here
    if [ "$n" -eq "$N_SEGMENTS" ] && [ "$n" -gt 0 ]; then
        ok "srt cues ($n) agree with json segments ($N_SEGMENTS)"
    else
        bad "srt has $n cues, json $N_SEGMENTS segments"
    fi
else
    bad "jfk.wav -o srt --output-file (status $rc)" "$tmp/err" "$tmp/out" "$tmp/jfk.srt"
    SRT_CUES=-1
fi

run -m "$MODEL" "$JFK" $NF
cp "$tmp/out" "$tmp/jfk.txt"
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(lines "$tmp/out")" -eq "$SRT_CUES" ]; then
    ok "jfk.wav default txt: one line per segment ($SRT_CUES), nothing on stderr"
else
    bad "jfk.wav txt (status $rc, $(lines "$tmp/out") lines, srt had $SRT_CUES cues)" "$tmp/err" "$tmp/out"
fi
if [ -s "$tmp/out" ] && grep -q '^[[:space:]]' "$tmp/out"; then
    bad "txt lines are not trimmed" "$tmp/out"
else
    ok "txt lines are trimmed"
fi

# ------------------------------------------------------------------ harvard.wav, 44.1 kHz stereo
run -m "$MODEL" "$HARVARD" -o vtt $NF
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && n=$(vtt_cues "$tmp/out" 2>"$tmp/err"); then
    ok "harvard.wav (44.1 kHz stereo) -o vtt is valid WebVTT ($n cues)"
else
    bad "harvard.wav -o vtt (status $rc)" "$tmp/err" "$tmp/out"
fi
# temperature fallback on (the default) here only: it is the slow path (24 tokens a
# window: the random model falls back at every temperature anyway; 43 s without)
run -m "$MODEL" "$HARVARD" -o json --mel-norm window --no-condition \
    --no-speech-threshold 1 -t 1 -l en --best-of 2 --sample-len 24
if [ "$rc" -eq 0 ] && "$JCHECK" "$tmp/out" >"$tmp/facts2" 2>"$tmp/err"; then
    ok "fallback on, --mel-norm window --no-condition --no-speech-threshold 1 -t 1 -l en --best-of 2 -o json"
    d=$(tr ' ' '\n' <"$tmp/facts2" | sed -n 's/^duration=//p')
    if awk -v d="$d" 'BEGIN { exit !(d > 18.2 && d < 18.5) }'; then
        ok "harvard.wav resampled to 16 kHz mono: $d s"
    else
        bad "harvard.wav decoded to $d s, expected about 18.36 s"
    fi
else
    bad "harvard.wav -o json with decoding options (status $rc)" "$tmp/err" "$tmp/out"
fi

# ------------------------------------------------------------------ multilingual model
if "$GEN" --out "$MULTI" --size micro --ftype f16 --n-vocab 51865 --seed 12 \
    >"$tmp/gen.log" 2>&1; then
    run -m "$MULTI" "$JFK" -o json -l auto --translate --beam-size 2 --prompt "Good evening." $NF
    cp "$tmp/err" "$tmp/cli-err"
    if [ "$rc" -eq 0 ] && "$JCHECK" "$tmp/out" >/dev/null 2>"$tmp/err" &&
        lang=$(sed -n 's/^  "language" *: *"\([a-z]*\)",*$/\1/p' "$tmp/out") &&
        [ -n "$lang" ] && [ "$lang" != auto ] &&
        grep -q '"language_probs"' "$tmp/out" && grep -q "^detected language: $lang " "$tmp/cli-err"; then
        ok "multilingual model, -l auto --translate --beam-size 2 --prompt: valid json, language $lang, language_probs"
    else
        bad "multilingual -l auto --translate --beam-size 2 --prompt (status $rc)" "$tmp/err" "$tmp/out"
    fi
else
    bad "gen_model --n-vocab 51865" "$tmp/gen.log"
fi

# ------------------------------------------------------------------ live mode
# --live on the virtual clock: json with committed_at on every segment and a `live`
# summary that agrees with them (cli_json_check), txt finals one per line as they come.
run -m "$MODEL" "$JFK" --live --step 2000 --latency 5000 -o json $NF
if [ "$rc" -eq 0 ] && "$JCHECK" "$tmp/out" >"$tmp/facts3" 2>"$tmp/jerr" &&
    grep -q ' live=1 ' "$tmp/facts3" && grep -q '"committed_at"' "$tmp/out" &&
    grep -q '"clock" *: *"virtual"' "$tmp/out" && grep -q "^$PROG: live: [0-9]* runs" "$tmp/err"; then
    LIVE_SEGS=$(tr ' ' '\n' <"$tmp/facts3" | sed -n 's/^segments=//p')
    ok "--live --step 2000 --latency 5000 -o json: committed_at >= end, finals in order, live summary consistent ($LIVE_SEGS finals; $(cat "$tmp/err"))"
else
    bad "--live -o json (status $rc)" "$tmp/jerr" "$tmp/err" "$tmp/out"
    LIVE_SEGS=-1
fi
# --live --word-timestamps: every final's words with committed_at, and the per-word
# commit delays (median, p90, worst) in the summary
run -m "$MODEL" "$JFK" --live --step 1000 --latency 4000 --word-timestamps -o json $NF
if [ "$rc" -eq 0 ] && "$JCHECK" "$tmp/out" >/dev/null 2>"$tmp/jerr" &&
    grep -q '"word_delay"' "$tmp/out" && grep -q '"probability"' "$tmp/out"; then
    ok "--live --word-timestamps -o json: words committed with their finals, word_delay consistent"
else
    bad "--live --word-timestamps -o json (status $rc)" "$tmp/jerr" "$tmp/err" "$tmp/out"
fi
# The virtual clock moves on by each run's measured compute time, so how much audio a
# run sees, and so the finals, can differ from the json run above on a busy machine:
# the txt run is checked against its own summary (one line per final; a final whose
# text is only white space writes none).
run -m "$MODEL" "$JFK" --live --step 2000 --latency 5000 $NF
TXT_FINALS=$(sed -n "s/^$PROG: live: [0-9]* runs, \([0-9]*\) finals.*/\1/p" "$tmp/err")
if [ "$rc" -eq 0 ] && [ "$(lines "$tmp/out")" -gt 0 ] &&
    [ "$(lines "$tmp/out")" -le "${TXT_FINALS:-0}" ]; then
    ok "--live txt: $(lines "$tmp/out") final lines for the summary's $TXT_FINALS finals (json run had $LIVE_SEGS)"
else
    bad "--live txt (status $rc, $(lines "$tmp/out") lines, summary ${TXT_FINALS:-none} finals)" "$tmp/err" "$tmp/out"
fi
# --run-ms: each run moves the virtual clock by that much, not by its measured time, so
# two runs see the same audio at each step: the same finals and run count, whatever
# the machine's load (32 tokens a run keep these four runs short)
run -m "$MODEL" "$JFK" --live --step 1000 --latency 4000 --run-ms 700 -o json $NF --sample-len 32
cp "$tmp/out" "$tmp/run1.json"
run -m "$MODEL" "$JFK" --live --step 1000 --latency 4000 --run-ms 700 -o json $NF --sample-len 32
fin() { grep -o '"text" *: *"[^"]*"\|"runs" *: *[0-9]*\|"run_ms" *: *[0-9]*\|"committed_at" *: *[0-9.]*' "$1"; }
if [ "$rc" -eq 0 ] && "$JCHECK" "$tmp/out" >/dev/null 2>"$tmp/jerr" &&
    grep -q '"run_ms" *: *700' "$tmp/out" && [ -n "$(fin "$tmp/out")" ] &&
    [ "$(fin "$tmp/out")" = "$(fin "$tmp/run1.json")" ]; then
    ok "--live --run-ms 700: two runs give the same finals, commit times and run count"
else
    bad "--live --run-ms 700 (status $rc): the two runs differ" "$tmp/jerr" "$tmp/err" "$tmp/run1.json" "$tmp/out"
fi
# and a run of 20 s on the virtual clock lets all of jfk.wav's 11 s arrive during the
# first run: far fewer runs than at 1 ms a run (one per 1-s step)
runs_of() { sed -n 's/.*"runs" *: *\([0-9]*\).*/\1/p' "$1" | head -n 1; }
run -m "$MODEL" "$JFK" --live --step 1000 --run-ms 20000 -o json $NF --sample-len 32
cp "$tmp/out" "$tmp/slow.json"
run -m "$MODEL" "$JFK" --live --step 1000 --run-ms 1 -o json $NF --sample-len 32
if [ "$rc" -eq 0 ] && [ "$(runs_of "$tmp/slow.json")" -le 3 ] && [ "$(runs_of "$tmp/out")" -ge 10 ]; then
    ok "--run-ms 20000: $(runs_of "$tmp/slow.json") runs, --run-ms 1: $(runs_of "$tmp/out") runs"
else
    bad "--run-ms 20000 / 1: $(runs_of "$tmp/slow.json") / $(runs_of "$tmp/out") runs (status $rc)" "$tmp/err"
fi
# runs of 1.5 s on the fixed clock (a busy machine's): every run forced, and this
# model's pieces hold no word the alignment can time; their finals once ended at their
# start and, of no duration, were never reported: 0 finals from 6 runs
run -m "$MODEL" "$JFK" --live --step 2000 --latency 5000 --run-ms 1500 $NF
SLOW_FINALS=$(sed -n "s/^$PROG: live: [0-9]* runs, \([0-9]*\) finals.*/\1/p" "$tmp/err")
if [ "$rc" -eq 0 ] && [ "${SLOW_FINALS:-0}" -gt 0 ] && [ "$(lines "$tmp/out")" -eq "$SLOW_FINALS" ]; then
    ok "--live --run-ms 1500: $SLOW_FINALS finals, each a line"
else
    bad "--live --run-ms 1500 (status $rc, ${SLOW_FINALS:-no} finals, $(lines "$tmp/out") lines)" "$tmp/err" "$tmp/out"
fi
LDC=$SHARED/speech/ldc93s1/LDC93S1.wav
if [ -f "$LDC" ]; then
    # paced by the wall clock: the 2.9-s recording takes about as long
    run -m "$MODEL" "$LDC" --realtime --step 1000 --latency 3000 -o json $NF
    if [ "$rc" -eq 0 ] && "$JCHECK" "$tmp/out" >/dev/null 2>"$tmp/jerr" &&
        grep -q '"clock" *: *"wall"' "$tmp/out"; then
        ok "--realtime --step 1000 --latency 3000 -o json: consistent live summary, wall clock"
    else
        bad "--realtime -o json (status $rc)" "$tmp/jerr" "$tmp/err" "$tmp/out"
    fi
fi

# ------------------------------------------------------------------ debug outputs
run -m "$MODEL" "$JFK" --dump-mel "$tmp/mel.f32" --dump-encoder "$tmp/enc.f32" \
    --logits 1,2,3 "$tmp/logits.f32" -o srt --no-timestamps $NF
if [ "$rc" -eq 0 ] && [ "$N_MELS" -gt 0 ]; then
    size_is "--dump-mel writes n_mels*3000*4" "$tmp/mel.f32" $((N_MELS * 3000 * 4))
    size_is "--dump-encoder writes n_audio_ctx*n_audio_state*4" "$tmp/enc.f32" \
        $((N_AUDIO_CTX * N_AUDIO_STATE * 4))
    size_is "--logits 1,2,3 writes n_vocab*4" "$tmp/logits.f32" $((N_VOCAB * 4))
    if srt_cues "$tmp/out" >/dev/null 2>"$tmp/err"; then
        ok "--no-timestamps -o srt is valid SubRip"
    else
        bad "--no-timestamps -o srt" "$tmp/err" "$tmp/out"
    fi
    # the dump is the chosen compute type's encoder, not always f32's (nor bf16's for int8)
    for T in bf16 int8; do
        run -m "$MODEL" "$JFK" --compute-type=$T --dump-encoder "$tmp/enc-$T.f32" -o txt $NF
        if [ "$rc" -eq 0 ]; then
            if [ -s "$tmp/enc-$T.f32" ] && ! cmp -s "$tmp/enc.f32" "$tmp/enc-$T.f32" &&
                { [ "$T" = bf16 ] || ! cmp -s "$tmp/enc-bf16.f32" "$tmp/enc-$T.f32"; }; then
                ok "--compute-type=$T --dump-encoder writes the $T encoder's output"
            else
                bad "--compute-type=$T --dump-encoder wrote another type's output (or nothing)" "$tmp/err"
            fi
        elif grep -q oneDNN "$tmp/err"; then
            ok "--compute-type=$T refused (no oneDNN, or not on this CPU): an error naming oneDNN"
        else
            bad "--compute-type=$T --dump-encoder (status $rc)" "$tmp/err"
        fi
    done
else
    bad "debug outputs (status $rc, n_mels $N_MELS)" "$tmp/err"
fi

# ------------------------------------------------------------------ cache type
# --kv-cache: the JSON names the type in effect (auto: f32 on this f16 file)
run -m "$MODEL" "$JFK" -o json $NF --sample-len 16
if [ "$rc" -eq 0 ] && grep -q '"kv_cache" *: *"f32"' "$tmp/out"; then
    ok "auto caches on an f16 file: \"kv_cache\": \"f32\" in the JSON"
else
    bad "auto caches on an f16 file (status $rc)" "$tmp/err" "$tmp/out"
fi
run -m "$MODEL" "$JFK" --kv-cache f16 -o json $NF --sample-len 16
if [ "$rc" -eq 0 ] && grep -q '"kv_cache" *: *"f16"' "$tmp/out" &&
    "$JCHECK" "$tmp/out" >/dev/null 2>"$tmp/jerr"; then
    ok "--kv-cache f16: \"kv_cache\": \"f16\", a consistent document"
else
    bad "--kv-cache f16 (status $rc)" "$tmp/err" "$tmp/jerr" "$tmp/out"
fi
run -m "$MODEL" "$JFK" --kv-cache bf16 -o txt
if [ "$rc" -eq 2 ] && grep -q -- "--kv-cache must be" "$tmp/err"; then
    ok "--kv-cache bf16: status 2 naming the choices"
else
    bad "--kv-cache bf16 (status $rc, want 2)" "$tmp/err"
fi

# ------------------------------------------------------------------ model lookup
# Truncated models make the choice visible cheaply: the loader's message names the
# file the CLI picked.
mkdir -p "$tmp/cwd/models" "$tmp/empty"
head -c 1000 "$MODEL" >"$tmp/cwd/models/ggml-a.bin"
head -c 1000 "$MODEL" >"$tmp/cwd/models/ggml-b.bin"
head -c 1000 "$MODEL" >"$tmp/env-model.bin"
head -c 1000 "$MODEL" >"$tmp/m-model.bin"
# lookup NAME DIR EXPECTED [ENV=VALUE] [ARGS...]: which file the CLI loads
lookup() {
    desc=$1 dir=$2 want=$3
    shift 3
    (cd "$dir" && env -u WHISPERKV_MODEL "$@" "$JFK" >"$tmp/out" 2>"$tmp/err")
    rc=$?
    if one_error_line 1 && grep -q "$want" "$tmp/err"; then
        ok "$desc: $want"
    else
        bad "$desc: expected $want (status $rc)" "$tmp/err"
    fi
}
lookup "no -m: the first models/ggml-*.bin" "$tmp/cwd" "models/ggml-a.bin" "$CLI"
head -c 1000 "$MODEL" >"$tmp/cwd/models/ggml-base.en.bin"
lookup "no -m: models/ggml-base.en.bin first" "$tmp/cwd" "models/ggml-base.en.bin" "$CLI"
lookup "no -m: \$WHISPERKV_MODEL before models/" "$tmp/cwd" "env-model.bin" \
    WHISPERKV_MODEL="$tmp/env-model.bin" "$CLI"
lookup "-m before \$WHISPERKV_MODEL" "$tmp/cwd" "m-model.bin" \
    WHISPERKV_MODEL="$tmp/env-model.bin" "$CLI" -m "$tmp/m-model.bin"
# the demo model the repository ships (models/README.md) is never taken by default
mkdir -p "$tmp/empty/models"
head -c 1000 "$MODEL" >"$tmp/empty/models/whisperkv-synth-en.bin"
(cd "$tmp/empty" && env -u WHISPERKV_MODEL "$CLI" "$JFK" >"$tmp/out" 2>"$tmp/err")
rc=$?
if one_error_line 2; then
    ok "no model anywhere (models/whisperkv-synth-en.bin is not one): status 2 and one line: $(cat "$tmp/err")"
else
    bad "no model anywhere (status $rc)" "$tmp/err"
fi

# ------------------------------------------------------------------ errors
run -m "$MODEL" "$tmp/no-such-file.wav"
if one_error_line 1 && grep -q 'no-such-file.wav' "$tmp/err"; then
    ok "missing audio file: status 1 and one line: $(cat "$tmp/err")"
else
    bad "missing audio file (status $rc)" "$tmp/err" "$tmp/out"
fi

printf 'this is not audio\n' >"$tmp/not-audio.wav"
run -m "$MODEL" "$tmp/not-audio.wav"
if one_error_line 1 && grep -q 'not-audio.wav' "$tmp/err"; then
    ok "undecodable file: status 1 and one line: $(cat "$tmp/err")"
else
    bad "undecodable file (status $rc)" "$tmp/err" "$tmp/out"
fi

size=$(bytes "$MODEL")
for cut in 3 30 $((size / 2)) $((size - 1)); do
    head -c "$cut" "$MODEL" >"$tmp/truncated.bin"
    run -m "$tmp/truncated.bin" "$JFK"
    if one_error_line 1 && grep -q 'truncated.bin' "$tmp/err"; then
        ok "model truncated to $cut bytes: status 1, the loader's message: $(cat "$tmp/err")"
    else
        bad "model truncated to $cut bytes (status $rc)" "$tmp/err" "$tmp/out"
    fi
done
run -m "$tmp/no-such-model.bin" "$JFK"
if one_error_line 1; then
    ok "missing model file: status 1 and one line"
else
    bad "missing model file (status $rc)" "$tmp/err"
fi

for args in "--no-such-option" "-o xml" "--mel-norm local" "-t 0" "-t -1" "--beam-size -1" \
    "--best-of 0" "--sample-len 449" "--sample-len -1" "--logits 1,2" "--logits 1,x PATH" "--live --step 0" \
    "--realtime --latency -1" "--run-ms 500" "--live --run-ms -1" "--realtime --run-ms 500" "--batch-size 65" "--batch-size -1" "--live --batch-size 2" \
    "--commit-policy alignatt" "--live --commit-policy agree" "--live --commit-policy agreement --frame-threshold 300" \
    "--live --commit-policy alignatt --frame-threshold 30001" \
    "--live --commit-policy alignatt --frame-threshold -5" \
    "--audio-ctx -1" "--audio-ctx 1501" "--audio-ctx 12x" "--audio-ctx" ""; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    run -m "$MODEL" $args ${args:+"$JFK"}
    if one_error_line 2; then
        ok "bad usage '${args:-(no file)}': status 2"
    else
        bad "bad usage '${args:-(no file)}' (status $rc)" "$tmp/err" "$tmp/out"
    fi
done

# --audio-ctx (issue 47 item 2): 0 is the default's text; auto (jfk's 11 s: 640
# frames) and a small N decode, offline and live; offline the first window's first
# segment ends within its frames
run -m "$MODEL" --sample-len 24 --no-fallback "$JFK"
cp "$tmp/out" "$tmp/ac_default.txt"
run -m "$MODEL" --sample-len 24 --no-fallback --audio-ctx 0 "$JFK"
if [ "$rc" = 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/ac_default.txt"; then
    ok "--audio-ctx 0: the default's text"
else
    bad "--audio-ctx 0 against the default (status $rc)" "$tmp/out" "$tmp/ac_default.txt" "$tmp/err"
fi
# alignatt's stop rule reads the word pass's matrix: on its own pass over more frames
# than the 200 encoded (jfk.wav holds 550) it failed every run ("alignatt: the
# alignment pass failed")
for args in "--audio-ctx auto" "--audio-ctx 200" "--live --audio-ctx auto" "--live --audio-ctx 200" \
    "--live --commit-policy alignatt --audio-ctx 200"; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    run -m "$MODEL" --sample-len 24 --no-fallback -o json $args "$JFK"
    if [ "$rc" = 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = int(sys.argv[2]) if sys.argv[2] != "auto" else 640
assert d["segments"], "no segments"
assert "live" in d or d["segments"][0]["end"] <= n * 0.02 + 1e-6, d["segments"][0]
' "$tmp/out" "${args##* }" 2>"$tmp/py"; then
        ok "$args: decodes, times within the frames"
    else
        bad "$args (status $rc)" "$tmp/out" "$tmp/err" "$tmp/py"
    fi
done

# --batch-size (offline batching, issue 32): gb0's five 30-s chunks give the same text
# one at a time and four side by side, and json that the checker accepts
GB0=$SHARED/speech/gb0/gb0.wav
if [ -f "$GB0" ]; then
    run -m "$MODEL" --batch-size 1 --sample-len 24 --no-fallback "$GB0"
    cp "$tmp/out" "$tmp/batch1.txt"
    rc1=$rc
    run -m "$MODEL" --batch-size 4 --sample-len 24 --no-fallback "$GB0"
    if [ "$rc1" = 0 ] && [ "$rc" = 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/batch1.txt"; then
        ok "--batch-size 4: the text of --batch-size 1 ($(wc -l <"$tmp/out") lines)"
    else
        bad "--batch-size 4 against 1 (status $rc1 / $rc)" "$tmp/out" "$tmp/batch1.txt" "$tmp/err"
    fi
    run -m "$MODEL" --batch-size 3 --sample-len 24 -o json "$GB0"
    if [ "$rc" = 0 ] && "$JCHECK" "$tmp/out" >/dev/null 2>&1; then
        ok "--batch-size 3 -o json: valid"
    else
        bad "--batch-size 3 -o json (status $rc)" "$tmp/out" "$tmp/err"
    fi
else
    skip_or_fail "recording $GB0 is missing"
fi

# ------------------------------------------------------------------ voice activity (VAD)
# whisper.cpp's Silero VAD (cli/cli_vad.c): --vad-only against the vectors of
# every parameter set, --dump-vad-probs, transcription of the speech only with times
# on the input's timeline, silence that yields no text, and the bad values.
VAD_MODEL=$SHARED/models/for-tests-silero-v6.2.0-ggml.bin
VADV=$SHARED/testvectors/vad
[ -f "$VAD_MODEL" ] || skip_or_fail "VAD model $VAD_MODEL is missing"
[ -x "$VCHECK" ] || { bad "no VAD checker (5th argument)"; VCHECK=false; }
for name in jfk synth-gaps; do
    case $name in jfk) wav=$JFK ;; *) wav=$VADV/$name.wav ;; esac
    n_probs=$(sed -n 's/.*"n_probs": *\([0-9]*\).*/\1/p' "$VADV/$name.json" | head -n 1)
    "$VCHECK" runs "$VADV/$name.json" >"$tmp/runs" || bad "cannot read $name.json"
    while IFS='|' read -r args want; do
        # shellcheck disable=SC2086 # the arguments are split on purpose
        run --vad-model "$VAD_MODEL" --vad-only -o json $args "$wav"
        got=$("$VCHECK" speech "$tmp/out" 2>>"$tmp/err")
        if [ "$rc" -eq 0 ] && [ "$got" = "$want|$n_probs" ]; then
            ok "$name --vad-only ${args:-(defaults)}: whisper.cpp's segments, $n_probs probabilities"
        else
            bad "$name --vad-only ${args:-(defaults)} (status $rc): got '$got', expected '$want|$n_probs'" \
                "$tmp/err" "$tmp/out"
        fi
    done <"$tmp/runs"
done
"$VCHECK" runs "$VADV/jfk.json" | head -n 1 | cut -d'|' -f2 >"$tmp/jfk.speech"
N_SPEECH=$(wc -w <"$tmp/jfk.speech" | tr -d ' ')

# txt, srt and vtt list the segments; WHISPERKV_VAD_MODEL turns VAD on
WHISPERKV_VAD_MODEL=$VAD_MODEL run --vad-only "$JFK"
if [ "$rc" -eq 0 ] && [ "$(lines "$tmp/out")" -eq "$N_SPEECH" ] && [ "$N_SPEECH" -gt 0 ] &&
    grep -q '^00:00:00.320 --> 00:00:02.270$' "$tmp/out"; then
    ok "WHISPERKV_VAD_MODEL --vad-only txt: one line per segment ($N_SPEECH)"
else
    bad "WHISPERKV_VAD_MODEL --vad-only txt (status $rc)" "$tmp/err" "$tmp/out"
fi
run --vad-model "$VAD_MODEL" --vad-only -o srt "$JFK"
if [ "$rc" -eq 0 ] && [ "$(srt_cues "$tmp/out" 2>/dev/null)" = "$N_SPEECH" ]; then
    ok "--vad-only -o srt: $N_SPEECH cues"
else
    bad "--vad-only -o srt (status $rc)" "$tmp/err" "$tmp/out"
fi
run --vad-model "$VAD_MODEL" --vad-only -o vtt "$JFK"
if [ "$rc" -eq 0 ] && [ "$(vtt_cues "$tmp/out" 2>/dev/null)" = "$N_SPEECH" ]; then
    ok "--vad-only -o vtt: $N_SPEECH cues"
else
    bad "--vad-only -o vtt (status $rc)" "$tmp/err" "$tmp/out"
fi
run --vad-model "$VAD_MODEL" --vad-only --dump-vad-probs "$tmp/probs.f32" "$VADV/synth-gaps.wav"
if [ "$rc" -eq 0 ] && "$VCHECK" probs "$tmp/probs.f32" "$VADV/synth-gaps.probs.f32" >"$tmp/pr" 2>&1; then
    ok "--dump-vad-probs: $(cat "$tmp/pr")"
else
    bad "--dump-vad-probs (status $rc)" "$tmp/pr" "$tmp/err"
fi

# transcribing with VAD: only the speech (8.45 s of 11), every time inside it
run -m "$MODEL" --vad-model "$VAD_MODEL" "$JFK" -o json $NF
if [ "$rc" -eq 0 ] && grep -q "VAD: $N_SPEECH speech segments, 8.45 s of 11.00 s" "$tmp/err" &&
    "$JCHECK" "$tmp/out" >/dev/null 2>>"$tmp/err" &&
    "$VCHECK" within "$tmp/out" "$VADV/jfk.json" 2>>"$tmp/err"; then
    ok "jfk.wav with VAD: 8.45 s transcribed, every segment on the input's timeline in the speech"
else
    bad "jfk.wav with VAD (status $rc)" "$tmp/err" "$tmp/out"
fi
run -m "$MODEL" --vad-model "$VAD_MODEL" --word-timestamps "$JFK" -o json $NF
if [ "$rc" -eq 0 ] && grep -q '"words"' "$tmp/out" &&
    "$VCHECK" within "$tmp/out" "$VADV/jfk.json" 2>>"$tmp/err"; then
    ok "jfk.wav with VAD and --word-timestamps: every word on the input's timeline in the speech"
else
    bad "jfk.wav with VAD and --word-timestamps (status $rc)" "$tmp/err" "$tmp/out"
fi
# one second of digital silence: the micro model writes text without VAD, none with it
{ printf 'RIFF\044\175\000\000WAVEfmt \020\000\000\000\001\000\001\000\200\076\000\000'
  printf '\000\175\000\000\002\000\020\000data\000\175\000\000'
  head -c 32000 /dev/zero; } >"$tmp/silence.wav"
run -m "$MODEL" "$tmp/silence.wav" $NF
if [ "$rc" -eq 0 ] && [ -s "$tmp/out" ]; then
    ok "1 s of silence without VAD: the random model writes text"
else
    bad "1 s of silence without VAD: no text (status $rc), the next check proves nothing" "$tmp/err"
fi
run -m "$MODEL" --vad-model "$VAD_MODEL" "$tmp/silence.wav" $NF
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && grep -q "VAD: 0 speech segments" "$tmp/err"; then
    ok "1 s of silence with VAD: no text"
else
    bad "silence with VAD (status $rc)" "$tmp/err" "$tmp/out"
fi

# --live with VAD on the pauses recording (scripts/pauses-wav.py's): no final inside
# the 15-s zero stretches (the random model writes text there without VAD) and the
# JSON live summary
if spans=$("$VCHECK" pauses "$JFK" "$LDC" "$tmp/pauses.wav" 2>"$tmp/err"); then
    # shellcheck disable=SC2086 # the stretches are split on purpose
    run -m "$MODEL" -t 1 --live --mel-norm window -o json $NF "$tmp/pauses.wav"
    if [ "$rc" -eq 0 ] && ! "$VCHECK" quiet "$tmp/out" $spans 2>/dev/null; then
        ok "--live without VAD writes text in the zero stretches ($spans)"
    else
        bad "--live pauses.wav without VAD: no text in the zeros (status $rc), the next check proves nothing" "$tmp/err"
    fi
    # both policies: alignatt's end (a speech end) once left its dropped words as text
    # uncommitted, and the gate ran on through the silence, timing words in it
    for policy in alignatt agreement; do
        run -m "$MODEL" -t 1 --live --mel-norm window -o json $NF --commit-policy $policy \
            --vad-model "$VAD_MODEL" "$tmp/pauses.wav"
        # shellcheck disable=SC2086
        if [ "$rc" -eq 0 ] && "$VCHECK" quiet "$tmp/out" $spans 2>>"$tmp/err"; then
            ok "--live --vad-model --commit-policy $policy on pauses.wav: no final in the zero stretches, live summary ($(grep "live:" "$tmp/err"))"
        else
            bad "--live --vad-model --commit-policy $policy pauses.wav (status $rc)" "$tmp/err" "$tmp/out"
        fi
    done
else
    bad "cannot make pauses.wav" "$tmp/err"
fi

run --vad-model "$MODEL" --vad-only "$JFK"
if one_error_line 1 && grep -q "micro.bin.*Whisper model" "$tmp/err"; then
    ok "a Whisper model as VAD model: status 1, $(cat "$tmp/err")"
else
    bad "a Whisper model as VAD model (status $rc)" "$tmp/err" "$tmp/out"
fi
head -c 5000 "$VAD_MODEL" >"$tmp/vad-cut.bin"
run --vad-model "$tmp/vad-cut.bin" --vad-only "$JFK"
if one_error_line 1 && grep -q "vad-cut.bin: offset" "$tmp/err"; then
    ok "truncated VAD model: status 1, $(cat "$tmp/err")"
else
    bad "truncated VAD model (status $rc)" "$tmp/err" "$tmp/out"
fi
for args in "--vad-threshold 1.5" "--vad-threshold nan" "--vad-threshold x" \
    "--vad-min-speech-ms -1" "--vad-min-silence-ms -5" "--vad-speech-pad-ms -1" \
    "--vad-max-speech-s 0" "--vad-max-speech-s -2" "--vad-samples-overlap -1" \
    "--vad-samples-overlap inf" "--vad-min-silence-ms 9999999999"; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    run -m "$MODEL" --vad-model "$VAD_MODEL" $args "$JFK"
    if one_error_line 2; then
        ok "bad VAD value '$args': status 2, one line"
    else
        bad "bad VAD value '$args' (status $rc)" "$tmp/err" "$tmp/out"
    fi
done
run -m "$MODEL" --vad-only "$JFK"
if one_error_line 2 && grep -q "vad-model" "$tmp/err"; then
    ok "--vad-only without a VAD model: status 2"
else
    bad "--vad-only without a VAD model (status $rc)" "$tmp/err"
fi

# word timestamps on the generated model: json words and the heads auto picked, srt
# cues cut from words, a clip starting at 2 s.  (Times may go back here, as the
# reference's do: the next window starts after the last word, which a random model
# often puts before its segment's end; test_cli_words.sh checks the exact values.)
run -m "$MODEL" "$JFK" -o json --word-timestamps $NF
if [ "$rc" -eq 0 ] && grep -q '"words" : \[' "$tmp/out" && grep -q '"probability"' "$tmp/out" &&
    grep -q '"alignment_heads" : "default"' "$tmp/out" &&
    grep -q 'alignment heads: default (auto)' "$tmp/err"; then
    ok "--word-timestamps: json has words and alignment_heads \"default\" (auto, logged)"
else
    bad "--word-timestamps -o json (status $rc)" "$tmp/out" "$tmp/err"
fi
cp "$tmp/out" "$tmp/words.json"
run -m "$MODEL" "$JFK" -o srt --word-timestamps --max-line-width 16 --max-line-count 2 $NF
n=$(grep -c -- ' --> ' "$tmp/out")
if [ "$rc" -eq 0 ] && [ "${n:-0}" -gt 0 ] &&
    ! awk 'length($0) > 16 && index($0, " ") && $0 !~ /-->/ { found = 1 } END { exit !found }' "$tmp/out"; then
    ok "--word-timestamps -o srt --max-line-width 16: $n cues, no line of several words over 16"
else
    bad "--word-timestamps -o srt --max-line-width 16 (status $rc)" "$tmp/out" "$tmp/err"
fi
cp "$tmp/out" "$tmp/words16.srt"

# --from-json: the JSON written again with the same writers (test_cli_words.sh checks
# every cue option set against the reference's bytes this way); bad documents and
# options fail with one line
run --from-json --word-timestamps -o srt --max-line-width 16 --max-line-count 2 "$tmp/words.json"
if [ "$rc" -eq 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/words16.srt"; then
    ok "--from-json --word-timestamps -o srt --max-line-width 16: the transcription's bytes"
else
    bad "--from-json -o srt (status $rc): not the transcription's bytes" "$tmp/err" "$tmp/out"
fi
# without words: txt and segment cues, the bytes of the runs above with jfk.json's options
for fmt in txt srt; do
    run --from-json -o $fmt "$tmp/jfk.json"
    if [ "$rc" -eq 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/jfk.$fmt"; then
        ok "--from-json -o $fmt: the transcription's bytes ($(lines "$tmp/out") lines)"
    else
        bad "--from-json -o $fmt (status $rc): not the transcription's bytes" "$tmp/err" "$tmp/out"
    fi
done
head -c 300 "$tmp/words.json" >"$tmp/cut.json"
printf '{"segments":[{"start":0,"end":1,"text":"x","words":[{"word":"x","start":"a","end":1,"probability":1}]}]}' >"$tmp/badword.json"
printf '{"segments":[{"start":0,"end":1e999,"text":"x"}]}' >"$tmp/badnum.json"
for c in "1|no words|--word-timestamps -o srt $tmp/jfk.json" "1|No such file|$tmp/none.json" \
    "1|cut.json|$tmp/cut.json" "1|words\[0\]|--word-timestamps -o vtt $tmp/badword.json" \
    "1|segments\[0\]|$tmp/badnum.json" "1|/dev/full|-o srt --output-file /dev/full $tmp/words.json" \
    "2|--from-json|-o json $tmp/words.json" "2|--from-json|--live $tmp/words.json"; do
    st=${c%%|*}
    rest=${c#*|}
    want=${rest%%|*}
    # shellcheck disable=SC2086 # the arguments are split on purpose
    run --from-json ${rest#*|}
    if one_error_line "$st" && grep -q -- "$want" "$tmp/err"; then
        ok "--from-json ${rest#*|}: status $st, one line: $(cat "$tmp/err")"
    else
        bad "--from-json ${rest#*|} (status $rc, want $st and '$want')" "$tmp/err" "$tmp/out"
    fi
done
run -m "$MODEL" "$JFK" -o json --clip-timestamps 2,5 $NF
if [ "$rc" -eq 0 ] && grep -q '"seek" : 200' "$tmp/out" && ! grep -q '"seek" : [01],' "$tmp/out"; then
    ok "--clip-timestamps 2,5: decoding starts at frame 200"
else
    bad "--clip-timestamps 2,5 (status $rc)" "$tmp/out" "$tmp/err"
fi

# word-timestamp options (cli/word_options.c): the ones acting on words need
# --word-timestamps, as the reference CLI's cue options do; bad values exit 2 too
for args in "--max-line-width 20" "--max-line-count 2" "--max-words-per-line 3" \
    "--highlight-words" "--alignment-heads default" "--prepend-punctuations x" \
    "--append-punctuations x" "--hallucination-silence-threshold 2"; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    run -m "$MODEL" $args "$JFK"
    if one_error_line 2 && grep -q "requires --word-timestamps" "$tmp/err"; then
        ok "'$args' without --word-timestamps: status 2, one line"
    else
        bad "'$args' without --word-timestamps (status $rc)" "$tmp/err" "$tmp/out"
    fi
done
for args in "--word-timestamps --alignment-heads 9.0" "--word-timestamps --alignment-heads tiny" \
    "--word-timestamps --max-line-width -1" "--clip-timestamps 1,x"; do
    # shellcheck disable=SC2086 # the arguments are split on purpose
    run -m "$MODEL" $args "$JFK"
    if one_error_line 2; then
        ok "bad word option '$args': status 2, one line"
    else
        bad "bad word option '$args' (status $rc)" "$tmp/err" "$tmp/out"
    fi
done

# ------------------------------------------------------------------ writes that fail
# A full disk (/dev/full) for --output-file and for standard output: status 1 and one
# "cannot write" line, never success with a short file; standard output into a pipe
# whose reader has gone: ended by SIGPIPE (status 141 in sh) or status 1, never a hang.
for fmt in txt srt json; do
    run -m "$MODEL" "$JFK" -o $fmt $NF --output-file /dev/full
    if one_error_line 1 && grep -q "cannot write '/dev/full'" "$tmp/err"; then
        ok "-o $fmt --output-file /dev/full: status 1, one line"
    else
        bad "-o $fmt --output-file /dev/full (status $rc)" "$tmp/err" "$tmp/out"
    fi
done
"$CLI" -m "$MODEL" "$JFK" -o srt $NF >/dev/full 2>"$tmp/err"
rc=$?
: >"$tmp/out"
if one_error_line 1 && grep -q "cannot write 'stdout'" "$tmp/err"; then
    ok "-o srt > /dev/full: status 1, one line"
else
    bad "-o srt > /dev/full (status $rc)" "$tmp/err"
fi
# the reader (true) exits at once, so every write meets a closed pipe
{ timeout 120 "$CLI" -m "$MODEL" "$JFK" -o json $NF 2>"$tmp/err"; echo $? >"$tmp/pipe_rc"; } | true
rc=$(cat "$tmp/pipe_rc")
if [ "$rc" -eq 141 ] || { [ "$rc" -eq 1 ] && [ "$(lines "$tmp/err")" -eq 1 ]; }; then
    ok "-o json into a closed pipe: ended (status $rc)"
else
    bad "-o json into a closed pipe: status $rc (124: hung)" "$tmp/err"
fi

echo "test_cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
