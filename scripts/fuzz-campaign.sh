#!/usr/bin/env bash
# A long fuzzing campaign (not CI's smoke): each target runs RUNS executions in all
# with the unsanitized build (fuzz/meson.build: fuzz_*_fast, several times faster),
# split over JOBS processes sharing one corpus, then every input the campaign kept,
# and any crash, is replayed through the ASan+UBSan build.  Ends with a line per
# target: executions, corpus size, findings; exits non-zero on any finding.
#
#   scripts/fuzz-campaign.sh [model|tokenize|vad|all] [RUNS] [JOBS]
#                              default: all 10000000 2
#
# Needs clang and libclang-rt (scripts/setup.sh installs the rest).  The corpus and the
# job logs stay in build-fuzz/campaign/TARGET/ and grow from run to run; reproducers of
# findings land in build-fuzz/campaign/TARGET/artifacts/.  docs/reliability.md has the
# figures of the runs made so far.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/setup.sh
source "$here/setup.sh"

what=${1:-all} runs=${2:-10000000} jobs=${3:-2}
case "$what" in
model | tokenize | vad | all) ;;
*)
    echo "usage: $0 [model|tokenize|vad|all] [RUNS] [JOBS]" >&2
    exit 2
    ;;
esac
build=build-fuzz
wkv_install_packages clang libclang-rt-14-dev llvm
if [[ ! -f "$WKV_ROOT/$build/build.ninja" ]]; then
    (cd "$WKV_ROOT" && CC=clang meson setup "$build" -Dfuzz=enabled -Dexamples=disabled)
fi
wkv_build "$build"

fz=$WKV_ROOT/$build/fuzz
shared=${WHISPERKV_SHARED:-$WKV_ROOT/../shared}
vocab=$shared/models/for-tests-ggml-tiny.bin
[[ -f "$vocab" ]] || vocab=$fz/vocab-synth.bin
export WKV_FUZZ_VOCAB=$vocab
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
rc=0

# campaign NAME TARGET SEEDS MAX_LEN
campaign() {
    local name=$1 target=$2 seeds=$3 max_len=$4
    local dir=$WKV_ROOT/$build/campaign/$name
    mkdir -p "$dir/corpus" "$dir/artifacts"
    rm -f "$dir"/fuzz-*.log
    wkv_log "fuzz $name: $runs executions over $jobs jobs (corpus $dir/corpus)"
    local start=$SECONDS status=0
    # -jobs runs the jobs in $PWD and writes fuzz-N.log there
    (cd "$dir" && "$fz/${target}_fast" -jobs="$jobs" -workers="$jobs" \
        -runs=$((runs / jobs)) -max_len="$max_len" -timeout=30 -rss_limit_mb=3072 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/" corpus "$seeds" \
        >/dev/null 2>&1) || status=$?
    local execs
    execs=$(cat "$dir"/fuzz-*.log | sed -n 's/^stat::number_of_executed_units: *//p' |
        awk '{s += $1} END {print s + 0}')
    local secs=$((SECONDS - start))
    # every kept input and every finding, once, through ASan + UBSan
    local replay=0 replay_status=0
    replay=$(find "$dir/corpus" "$dir/artifacts" -type f | wc -l)
    "$fz/$target" -runs=0 -max_len="$max_len" -timeout=30 -rss_limit_mb=3072 \
        "$dir/corpus" "$dir/artifacts" >"$dir/replay.log" 2>&1 || replay_status=$?
    local findings
    findings=$(find "$dir/artifacts" -type f | wc -l)
    echo "fuzz $name: $execs executions in $secs s ($jobs jobs, unsanitized), corpus" \
        "$(find "$dir/corpus" -type f | wc -l) inputs; replay of $replay inputs under" \
        "ASan+UBSan: $( ((replay_status == 0)) && echo clean || echo "FAILED ($dir/replay.log)")" \
        "; findings: $findings"
    if ((status != 0 || replay_status != 0 || findings != 0 || execs < runs)); then
        grep -h -A20 -E "ERROR|==[0-9]+==|deadly signal|abort" "$dir"/fuzz-*.log | head -40 || true
        rc=1
    fi
}

if [[ "$what" == model || "$what" == all ]]; then
    campaign model fuzz_model_load "$fz/corpus-model" 2000000
fi
if [[ "$what" == tokenize || "$what" == all ]]; then
    campaign tokenize fuzz_tokenize "$fz/corpus-text" 4096
fi
if [[ "$what" == vad || "$what" == all ]]; then
    campaign vad fuzz_vad_load "$fz/corpus-vad" 1000000
fi
exit "$rc"
