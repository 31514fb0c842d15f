#!/usr/bin/env bash
# Trains on a GPU machine lent by the tool `device` (one call, at most 10 minutes):
#   tools/train/pack_device.sh                  # here, once: .carry/ (ignored)
#   run(command="bash tools/train/device_train.sh 540", carry=[".carry"], timeout_s=600)
# The machine has no espeak-ng, flite or WordNet and no network: .carry holds them.
# shards.py speaks the training sentences round after round on the CPU cores while
# train_gpu.py trains from the pool so far; both stop inside BUDGET seconds (default
# 540), and $OUT gets the checkpoint in parts (join_ckpt.py) and the logs.
set -uo pipefail
budget=${1:-540}
t0=$(date +%s)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
C=${CARRY:-$here/../../.carry}
C=$(cd "$C" && pwd)
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
S=$C
if [ -f "$C/synth.tar.xz" ]; then
    S=/tmp/synth && mkdir -p $S && tar -C $S -xJf "$C/synth.tar.xz" || exit 1
fi
# the carried libraries for the synthesizers only: torch keeps the host's
synth="env LD_LIBRARY_PATH=$S/lib PATH=$S/bin:$PATH ESPEAK_DATA_PATH=$S/espeak-ng-data"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
cores=$(nproc)
cd "$here"
log=$OUT/train.log
{
    echo "== $(date -u) $(uname -m) cores=$cores"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    $py -c "import torch, numpy, scipy; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'numpy', numpy.__version__, 'scipy', scipy.__version__)"
    # the synthesizers, before anything depends on them
    $synth $py -c "import speech; e = speech.Espeak(); p, sr, w = e.say('hello there world', 'en-us+m3'); print('espeak-ng', len(p), sr, w)" || exit 1
    $synth flite -voice slt -t "hello there" -o /tmp/flite-check.wav && echo "flite ok" || exit 1
} 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "preflight failed"; exit 1; }
shards=${SHARDS:-/tmp/shards}
mkdir -p "$shards"
gen=$(( cores > 6 ? cores - 5 : 1 ))
$synth $py shards.py --sentences "$C/train-sentences.txt" --tiktoken "$C/gpt2.tiktoken" \
    --out "$shards" --workers $gen --rounds ${ROUNDS:-14} ${SHARD_ARGS:-} > "$OUT/shards.log" 2>&1 &
gen_pid=$!
left=$(( budget - ($(date +%s) - t0) - 35 ))
echo "== training for $left s (synthesis on $gen cores)" | tee -a "$log"
$py train_gpu.py --shards "$shards" --sentences "$C/train-sentences.txt" \
    --tiktoken "$C/gpt2.tiktoken" --filters "$C/mel_filters.npz" --out "$OUT" \
    --seconds $left ${INIT:+--init "$C/$INIT"} ${TRAIN_ARGS:-} 2>&1 | tee -a "$log"
rc=${PIPESTATUS[0]}
kill $gen_pid 2>/dev/null
tail -2 "$OUT/shards.log" | tee -a "$log"
echo "== done rc=$rc after $(( $(date +%s) - t0 )) s" | tee -a "$log"
exit $rc
