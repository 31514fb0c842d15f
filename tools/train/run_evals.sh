#!/usr/bin/env bash
# Every measurement of docs/trained-model.md on the files make_model.sh wrote
# (work/models/synth-*.bin), results in work/results/:
#   tools/train/run_evals.sh [HEADS]      (HEADS: the alignment heads, L.H,...)
# HELD (default work/pool-heldout.pkl) picks the held-out pool, REC (default work) where
# the 2.5-min stream and the 10-min long recording are made from it.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"
py=${PYTHON:-/usr/bin/python3}
shared=${WHISPERKV_SHARED:-$here/../../../shared}
heads=${1:-}
held=${HELD:-work/pool-heldout.pkl}
rec=${REC:-work}
n=${N:-200}   # utterances of the matrices (half in held-out voices)
beam_files=${BEAM_FILES:-f16,q8_0,q5_0}
out=work/results
mkdir -p "$out"
m=work/models/synth-f16.bin
mkdir -p "$rec"
[[ -f $rec/stream.wav ]] || "$py" recordings.py --pool "$held" --minutes 2.5 --words --out "$rec/stream"
[[ -f $rec/long.wav ]] || "$py" recordings.py --pool "$held" --minutes 10 --seed 12 --out "$rec/long"
# 1. held-out WER: the whole set on f16 and the shipped q4_0, f32 greedy, then the
# matrix on N utterances
[[ -f $out/wer-all.md ]] || "$py" eval.py --model-dir work/models --pool "$held" --files "${ALL_FILES:-f16,q4_0}" \
    --compute f32 --decode greedy --json "$out/wer-all.json" | tee "$out/wer-all.md"
"$py" eval.py --model-dir work/models --pool "$held" --n "$n" \
    --files f16,q8_0,q5_0,q4_0 --compute f32,bf16,int8 --decode greedy \
    --json "$out/wer-matrix.json" | tee "$out/wer-matrix.md"
"$py" eval.py --model-dir work/models --pool "$held" --n "$n" \
    --files "$beam_files" --compute f32 --decode beam5 \
    --json "$out/wer-beam.json" | tee "$out/wer-beam.md"
# 2. word times: default heads, then the chosen ones
"$py" timing_eval.py words --model "$m" --rec "$rec/stream" --heads default | tee "$out/words-default.json"
if [[ -n "$heads" ]]; then
    "$py" timing_eval.py words --model "$m" --rec "$rec/stream" --heads "$heads" | tee "$out/words-heads.json"
    "$py" timing_eval.py words --model "$m" --rec "$rec/stream" | tee "$out/words-auto.json"
fi
# 3. live, word level, step 1000 and 2000
for step in 1000 2000; do
    "$py" timing_eval.py live --model "$m" --rec "$rec/stream" --step "$step" | tee "$out/live-$step.json"
done
# 4. signals that are not speech, with and without VAD
"$py" signals_eval.py --model "$m" --vad "$shared/models/for-tests-silero-v6.2.0-ggml.bin" | tee "$out/signals.md"
# 5. long form: the 10-minute recording through the window loop
"$WHISPERKV_BUILD/cli/whisperkv-transcribe" -m "$m" -t 2 -o json "$rec/long.wav" >"$out/long.json"
"$py" - "$out/long.json" "$rec/long.json" <<'PY' | tee "$out/long.md"
import json, sys, collections
import wer
hyp = json.load(open(sys.argv[1])); ref = json.load(open(sys.argv[2]))
text = " ".join(s["text"] for s in hyp["segments"])
s = wer.score([" ".join(u["text"] for u in ref["utterances"])], [text])
segs = [s_["text"].strip() for s_ in hyp["segments"]]
rep = sum(1 for a, b in zip(segs, segs[1:]) if a and a == b)
words = wer.normalize(text)
grams = collections.Counter(tuple(words[i:i + 4]) for i in range(len(words) - 3))
print(f"long form ({ref['seconds']:.0f} s, {len(ref['utterances'])} utterances): WER {s['wer']:.2f} % "
      f"({s['sub']} sub, {s['del']} del, {s['ins']} ins of {s['words']}); {len(segs)} segments, "
      f"{rep} repeated back to back; most frequent 4-gram x{grams.most_common(1)[0][1] if grams else 0}")
PY
