#!/bin/sh
# Writes what a build computes into OUT, for a refactor's check that two builds compute
# the same numbers:  tools/outputs.sh BUILD OUT; then `cmp` each file (or diff -r) against
# another build's OUT.  Deterministic by construction: no live mode (its virtual clock
# follows measured compute time), fixed seeds, fixed threads.
#   - bench --logits: decoder logits on random tiny and base models, f32 and int8 encoders
#   - the CLI on the reference's micro models: log-mel, encoder output, JSON with words,
#     greedy and beam, every quantization type, VAD in front
# Needs ../shared (or WHISPERKV_SHARED) for the micro models, speech and VAD model.
set -eu
B=$1 OUT=$2
S=${WHISPERKV_SHARED:-$(dirname "$0")/../../shared}
mkdir -p "$OUT"
CLI=$B/cli/whisperkv-transcribe
"$B"/bench/whisperkv-bench --size tiny,base --reps 1 --tokens 8 --threads 2 \
    --logits "$OUT/bench-f32" >/dev/null
"$B"/bench/whisperkv-bench --size tiny --reps 1 --tokens 8 --threads 2 --type int8 \
    --logits "$OUT/bench-int8" >/dev/null 2>&1 || echo "no int8 (built without oneDNN)"
W=$S/speech/jfk/jfk.wav
for m in micro-en micro-multi; do
    M=$S/testvectors/$m/model.bin
    "$CLI" -m "$M" -t 2 --dump-mel "$OUT/$m.mel" --dump-encoder "$OUT/$m.enc" \
        --logits 50257,50258 "$OUT/$m.logits" -o json --output-file "$OUT/$m.json" \
        --word-timestamps "$W" 2>/dev/null
    "$CLI" -m "$M" -t 2 --beam-size 3 -o json --output-file "$OUT/$m.beam.json" "$W" 2>/dev/null
    "$CLI" -m "$M" -t 2 --mel-norm window -o json --output-file "$OUT/$m.window.json" \
        "$S/speech/gb0/gb0.wav" 2>/dev/null
    "$CLI" -m "$M" -t 2 -l auto -o json --output-file "$OUT/$m.auto.json" "$W" 2>/dev/null
    # the element offline: the text buffers as the text pad gives them
    GST_PLUGIN_PATH=$B/gst-plugin gst-launch-1.0 -q filesrc location="$S/speech/gb0/gb0.wav" \
        ! decodebin ! audioconvert ! audioresample ! whisperkv name=w model="$M" threads=2 \
        ! fakesink w.text_src ! filesink location="$OUT/$m.element.txt" >/dev/null 2>&1
    GST_PLUGIN_PATH=$B/gst-plugin gst-launch-1.0 -q filesrc location="$W" ! decodebin \
        ! audioconvert ! audioresample ! whisperkvtranscriber model="$M" threads=2 \
        language-code=auto ! filesink location="$OUT/$m.transcriber.txt" >/dev/null 2>&1
    for q in q8_0 q5_0 q5_1 q4_0 q4_1; do
        "$B"/tests/quantize_model "$M" "$OUT/$m.$q.bin" "$q" >/dev/null 2>&1
        "$CLI" -m "$OUT/$m.$q.bin" -t 2 -o json --output-file "$OUT/$m.$q.json" "$W" 2>/dev/null
        rm -f "$OUT/$m.$q.bin"
    done
    "$CLI" -m "$M" -t 2 --vad-model "$S/models/for-tests-silero-v6.2.0-ggml.bin" \
        -o json --output-file "$OUT/$m.vad.json" "$S/speech/gb0/gb0.wav" 2>/dev/null
done
# the JSON's timings are measured times: everything else must match
for j in "$OUT"/*.json; do
    sed -i -E '/^    "(load|mel|encode|decode|align)" : /d' "$j"
done
ls "$OUT" | wc -l
