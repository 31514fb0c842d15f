#!/usr/bin/env bash
# From a training checkpoint to the files the evaluation and the repository use:
#   tools/train/make_model.sh work/run1/ckpt.pt [SHIP_TYPE]
# writes work/models/synth-{f32,f16,q8_0,q5_0,q4_0}.bin (f16 by export_ggml.py, the
# quantized copies by tests/quantize_model from the f16 file), checks the engine's
# logits against PyTorch's on the f32 file, and copies the SHIP_TYPE file (default
# q5_0) to models/whisperkv-synth-en.bin.  Needs a build (WHISPERKV_BUILD, default
# build/) with tests/quantize_model and the shared data (../shared or WHISPERKV_SHARED).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ckpt=$1 ship=${2:-q5_0}
build=${WHISPERKV_BUILD:-$root/build}
# Debian's python3 carries python3-torch; a python3 earlier on PATH may not
py=${PYTHON:-/usr/bin/python3}
out=$here/work/models
mkdir -p "$out"
cd "$here"
"$py" export_ggml.py "$ckpt" "$out/synth-f32.bin" --ftype f32
"$py" export_ggml.py "$ckpt" "$out/synth-f16.bin" --ftype f16
for q in q8_0 q5_0 q4_0; do
    "$build/tests/quantize_model" "$out/synth-f16.bin" "$out/synth-$q.bin" "$q"
done
"$py" check_logits.py "$ckpt" --pool work/pool-heldout.pkl
cp "$out/synth-$ship.bin" "$root/models/whisperkv-synth-en.bin"
ls -l "$out" "$root/models/whisperkv-synth-en.bin"
