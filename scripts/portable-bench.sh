#!/usr/bin/env bash
# Packs the benches of one or more builds, with every shared library they load and the
# dynamic loader itself, into one tarball that runs on another x86-64 Linux machine
# with nothing installed there (not part of CI).  Made to measure a CPU that is only
# reachable for minutes (a lent machine's host: how the Intel Xeon of family 6 model
# 207 was measured on 2026-11-28, docs/performance.md), side by side for two commits.
#
#   scripts/portable-bench.sh OUT.tar.xz NAME=BUILD_DIR [NAME=BUILD_DIR ...]
#
# Each NAME/ holds BUILD_DIR's whisperkv-bench, whisperkv-batch-bench,
# whisperkv-gemv-bench, gen_model, and test_gemv_q and test_gemv_f16 where the build has
# them, with that build's libwhisperkv.so.0; lib/ holds the system libraries (glibc, OpenBLAS, oneDNN, ...) and
# the loader.  On the other machine:
#
#   mkdir p && tar xJf OUT.tar.xz -C p && cd p
#   ./run NAME gen_model --size base --ftype q8_0 --seed 919 --out base-q8_0.bin
#   ./run NAME whisperkv-batch-bench base-q8_0.bin AUDIO.wav --batches 1,8
#
# `run` starts the program through the carried loader with NAME/ then lib/ as the
# library path, so neither the other machine's glibc nor a build's RUNPATH is used.
# gen_model writes the same files everywhere (same seed, same md5).  The CLI and the
# element are left out: they need GStreamer and its plugins.
set -euo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
out=$(realpath -m "$1")
shift
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
progs="bench/whisperkv-bench bench/whisperkv-batch-bench bench/whisperkv-gemv-bench
       tests/gen_model tests/test_gemv_q tests/test_gemv_f16"
optional="tests/test_gemv_q tests/test_gemv_f16" # an older commit may lack a test

for spec in "$@"; do
    name=${spec%%=*}
    build=${spec#*=}
    if [ -z "$name" ] || [ "$name" = "$spec" ] || [ ! -d "$build" ]; then
        echo "portable-bench: '$spec' is not NAME=BUILD_DIR" >&2
        exit 2
    fi
    case $name in lib | run | */*) echo "portable-bench: NAME '$name' is taken" >&2; exit 2 ;; esac
    mkdir -p "$stage/$name"
    for p in $progs; do
        if [ ! -x "$build/$p" ] && [[ " $optional " == *" $p "* ]]; then
            echo "portable-bench: $name: no $p (skipped)" >&2
            continue
        fi
        if [ ! -x "$build/$p" ]; then
            echo "portable-bench: $build/$p is missing (configure with -Dexamples=enabled and build)" >&2
            exit 1
        fi
        cp "$build/$p" "$stage/$name/"
        # every library the program loads, as this machine resolves it
        ldd "$build/$p" | awk '/=> \//{print $3}' | while read -r l; do
            case $(basename "$l") in
            libwhisperkv.so*) cp -L "$l" "$stage/$name/" ;;
            *) [ -e "$stage/lib/$(basename "$l")" ] || cp -L "$l" "$stage/lib/" ;;
            esac
        done
    done
done
loader=$(ldd "$stage"/*/gen_model | awk '/ld-linux/{print $1; exit}')
cp -L "$loader" "$stage/lib/ld-linux-x86-64.so.2"
cat > "$stage/run" <<'EOF'
#!/bin/sh
# ./run NAME PROGRAM ARGS...: PROGRAM of build NAME through the carried loader
here=$(dirname "$(realpath "$0")")
name=$1 prog=$2
shift 2
exec "$here/lib/ld-linux-x86-64.so.2" --library-path "$here/$name:$here/lib" "$here/$name/$prog" "$@"
EOF
chmod +x "$stage/run"
tar cJf "$out" -C "$stage" .
names=""
for spec in "$@"; do names="$names ${spec%%=*}"; done
echo "portable-bench: $out ($(du -h "$out" | cut -f1)):$names"
