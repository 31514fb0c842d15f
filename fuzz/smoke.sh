#!/bin/sh
# smoke.sh FUZZER SEED_DIR SECONDS [libFuzzer options...]
# Runs FUZZER for SECONDS on a scratch copy of the seeds (libFuzzer adds what it
# finds to its first corpus folder; the seeds stay as generated).  Exits non-zero
# on any crash, leak, sanitizer report, timeout or oracle failure; the reproducer
# is left in the build folder's fuzz/artifacts/.
set -eu
fuzzer=$1 seeds=$2 secs=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/wkv-fuzz-XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=$(dirname "$fuzzer")/artifacts
mkdir -p "$artifacts"
# fuzz_tokenize: a shared vocabulary when it exists, else the generated one
if [ -z "${WKV_FUZZ_VOCAB:-}" ] && [ -n "${WKV_FUZZ_VOCAB_FALLBACK:-}" ]; then
    if [ -f "${WKV_FUZZ_VOCAB_SHARED:-}" ]; then
        WKV_FUZZ_VOCAB=$WKV_FUZZ_VOCAB_SHARED
    else
        WKV_FUZZ_VOCAB=$WKV_FUZZ_VOCAB_FALLBACK
    fi
    export WKV_FUZZ_VOCAB
    echo "vocabulary: $WKV_FUZZ_VOCAB"
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
# f32 products on OpenBLAS: once (CI of 2026-11-28) ASan reported libFuzzer's own -timeout
# alarm handler writing its frame on a heap stack, while it had interrupted oneDNN's
# JIT code (an unknown module, sp next to a libdnnl allocation).  The targets fuzz
# loaders; which library multiplies is not what they check.
export WHISPERKV_GEMM=openblas
# libFuzzer exits 77 on a leak or an oracle's abort() by default, which meson counts as
# a skip: every finding must be a failure (-error_exitcode, -timeout_exitcode), and any
# other non-zero status too.
rc=0
"$fuzzer" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$artifacts/" \
    -error_exitcode=1 -timeout_exitcode=1 "$@" "$work" "$seeds" || rc=$?
if [ "$rc" -ne 0 ]; then
    echo "smoke: $(basename "$fuzzer") exited with status $rc: a finding (see above)" >&2
    exit 1
fi
