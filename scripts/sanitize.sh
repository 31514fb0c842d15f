#!/usr/bin/env bash
# The sanitizer suite: the whole test suite built with AddressSanitizer (with
# LeakSanitizer) and UndefinedBehaviorSanitizer, run through the `asan` test setup of
# meson.build (fatal UBSan findings, leak checks at exit with tests/lsan.supp).  Ends
# with the line "N passed, N failed" like scripts/test.sh; exits non-zero on any
# failure.
#
#   scripts/sanitize.sh [fresh|keep]    fresh: configure an empty build folder
#                                       (default keep: reuse it, reconfigured if needed)
# WKV_ASAN_BUILD_DIR chooses the build folder (default: build-asan), WKV_JOBS the
# compile jobs (default 2).  The numeric kernels run uninstrumented except in the kernel
# tests (core/meson.build says why), and suites valgrind, valgrind-full, trained and
# native-only are left out (meson.build's asan setup).  About 11 minutes on 2 cores
# (docs/testing.md has the stage times).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/setup.sh
source "$here/setup.sh"

build=${WKV_ASAN_BUILD_DIR:-build-asan}
mode=${1:-keep}
if [[ "$mode" != fresh && "$mode" != keep ]]; then
    echo "usage: $0 [fresh|keep]" >&2
    exit 2
fi

# b_lundef=false: clang's shared objects (the plugin) leave the sanitizer runtime's
# symbols to the executable.  float-cast-overflow is not in gcc's -fsanitize=undefined;
# our timestamps and sizes go through float -> integer casts.
options=("-Db_sanitize=address,undefined" -Db_lundef=false -Dexamples=enabled
    "-Dc_args=-fno-sanitize-recover=undefined,float-cast-overflow -fsanitize=float-cast-overflow")

# shellcheck disable=SC2119 # no extra packages: gcc brings libasan and libubsan
if ! wkv_install_packages; then
    echo "0 passed, 0 failed"
    exit 1
fi
configured=0
if [[ "$mode" == keep && -f "$WKV_ROOT/$build/build.ninja" ]]; then
    # an existing folder may have been configured without the sanitizers
    (cd "$WKV_ROOT" && meson configure "$build" "${options[@]}") && configured=1
else
    wkv_configure "$build" fresh "${options[@]}" && configured=1
fi
if ((configured == 0)) || ! wkv_build "$build" -j "${WKV_JOBS:-2}"; then
    wkv_log "the sanitizer build failed"
    echo "0 passed, 0 failed"
    exit 1
fi
start=$SECONDS
rc=0
wkv_run_tests "$build" || rc=$?
wkv_log "sanitizer suite: $((SECONDS - start)) s of tests"
exit "$rc"
