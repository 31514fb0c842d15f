#!/usr/bin/env bash
# Side-by-side benchmark of whisper.cpp 1.9.3 on this machine (not part of CI): the
# same kind of figures bench/whisperkv-bench.c gives for us (encoder ms per 30-s
# window, decoder ms per token with the KV cache) measured for whisper.cpp in one run.
#
#   scripts/whispercpp-bench.sh [--threads N] [--reps R] [--tokens T] [--file WAV] MODEL...
#
# --file WAV (16-kHz mono 16-bit PCM) times the whole recording through whisper_full
# instead (greedy, no fallback, previous text as prompt), as whisperkv-bench --file does
# ours.
#
# 1. Fetches whisper.rn@0.7.4 from the npm registry with `npm pack` (the package bundles
#    whisper.cpp 1.9.3's sources under cpp/: whisper_version() returns "1.9.3") into the
#    work folder (WKV_WCPP_DIR, default build-whispercpp/ under the repo root, ignored
#    by git through .gitignore's /build*/), and checks the tarball against the sha512
#    integrity the registry gave for it (`npm view whisper.rn@0.7.4 dist.integrity`),
#    hard-coded below: a different tarball stops the script.
# 2. Builds whisper.cpp's CPU backend from cpp/ with gcc/g++ directly (no cmake; the
#    package has no CMake files for a desktop build) as upstream's default CMake build
#    (Release, BUILD_SHARED_LIBS=ON, GGML_NATIVE=ON, GGML_OPENMP=ON, GGML_CPU_REPACK=ON,
#    GGML_LLAMAFILE=OFF, GGML_BLAS=OFF; ggml/CMakeLists.txt, ggml/src/CMakeLists.txt,
#    ggml/src/ggml-cpu/CMakeLists.txt, src/CMakeLists.txt) compiles it on x86-64 Linux:
#      libggml-base.so  ggml.c ggml.cpp ggml-alloc.c ggml-backend.cpp
#                       ggml-backend-meta.cpp ggml-opt.cpp ggml-threading.cpp
#                       ggml-quants.c gguf.cpp                       (GGML_USE_OPENMP)
#      libggml-cpu.so   ggml-cpu/*.c *.cpp, amx/amx.cpp amx/mmq.cpp and the x86 files
#                       arch/x86/quants.c arch/x86/repack.cpp        (-march=native,
#                       GGML_USE_OPENMP, GGML_USE_CPU_REPACK, OpenMP: -fopenmp / libgomp)
#      libggml.so       ggml-backend-reg.cpp ggml-backend-dl.cpp     (GGML_USE_CPU)
#      libwhisper.so    whisper.cpp
#    all with -O3 -DNDEBUG -fPIC -pthread, C as -std=gnu11, C++ as -std=gnu++17,
#    -D_XOPEN_SOURCE=600 -D_GNU_SOURCE -DGGML_SCHED_MAX_COPIES=4 and the GGML_BUILD /
#    GGML_SHARED / GGML_BACKEND_BUILD / GGML_BACKEND_SHARED / WHISPER_BUILD /
#    WHISPER_SHARED visibility defines upstream sets per library.  whisper.rn renames
#    ggml's symbols and macros (ggml_ -> wsp_ggml_, GGML_ -> WSP_GGML_, gguf_ ->
#    wsp_gguf_, ...), so every define above is passed with the WSP_ prefix.  Left out:
#    Metal, Core ML, JSI/React-Native glue (rn-whisper*, jsi/), parakeet.cpp, the ARM
#    arch files and arch/x86/cpu-feats.cpp (only built with GGML_BACKEND_DL).
#    What differs from upstream's default build:
#      - whisper.rn's own edits of the bundled sources (its repository's scripts/
#        *.patch and bootstrap: the WSP_ renaming, arch guards around the arch files,
#        Core ML behind use_coreml, Metal guards, whisper_version() hard-coded to
#        "1.9.3"; none of them touches the CPU compute paths — read from those patch
#        files, not diffed against an upstream 1.9.3 checkout, which has no source
#        reachable from this machine);
#      - GGML_VERSION / GGML_COMMIT: upstream takes them from ggml/CMakeLists.txt and
#        git; here WSP_GGML_VERSION="whisper.rn-0.7.4", WSP_GGML_COMMIT="unknown" (only
#        ggml_version()/ggml_commit() strings);
#      - warnings off (-w) instead of upstream's -Wall -Wextra ... list; no ccache.
#    The llamafile sgemm (GGML_LLAMAFILE) is off in whisper.cpp's default build (it is
#    llama.cpp that turns it on) and is not in the package; neither is BLAS.
# 3. Builds bench/whispercpp_bench.c (whisper.h's public C API only) against those
#    libraries and runs it on each MODEL (whisper.cpp ggml .bin files, e.g. the
#    random-weight ones tests/gen_model writes): encoder median ms, decoder median ms
#    per token, prompt-batch ms; it ends with one line per model
#    "whispercpp 1.9.3 model=... threads=... encoder_ms_median=...
#     decode_ms_per_token_median=... prompt_ms=...".  `uptime` before each model shows
#    how loaded the machine was.  Run it on an idle machine and look at the per-rep
#    lines: the decoder's per-token time (some 200 OpenMP barriers per token) is very
#    sensitive to other load — with two nice-10 jobs busy on both cores the tiny model's
#    per-token median went from 2.1 ms to over 700 ms in some reps.
#
# Compiles with `nice` and WKV_JOBS jobs (default 2); the benchmark itself runs at
# normal priority.  The libraries are rebuilt only when the compile flags change
# (delete the work folder to start over); the driver is rebuilt every run.
# Needs: npm (and node), gcc, g++ with libgomp, tar.
set -euo pipefail

PKG=whisper.rn@0.7.4
TGZ=whisper.rn-0.7.4.tgz
# `npm view whisper.rn@0.7.4 dist.integrity`, 2026-11-22
INTEGRITY='sha512-9MyWFoRmUWHDHLhjm4dZgZzxG2fFNuClOPE/Ne5KXlm0vSi4It5oS2xZi9WfPEfUGHcgPMiVviv9t18zC4BSNw=='

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${WKV_WCPP_DIR:-$root/build-whispercpp}
jobs=${WKV_JOBS:-2}

usage() {
    echo "usage: $0 [--threads N] [--reps R] [--tokens T] [--file WAV] MODEL..." >&2
    exit 2
}
bench_args=()
models=()
while (($#)); do
    case "$1" in
        --threads | --reps | --tokens | --file)
            (($# >= 2)) || usage
            bench_args+=("$1" "$2")
            shift 2
            ;;
        -h | --help) usage ;;
        -*) usage ;;
        *)
            models+=("$1")
            shift
            ;;
    esac
done
((${#models[@]})) || usage
for m in "${models[@]}"; do
    [[ -r "$m" ]] || { echo "cannot read model $m" >&2; exit 1; }
done
for tool in npm node gcc g++ tar; do
    command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 1; }
done

mkdir -p "$work"
work=$(cd "$work" && pwd)

# --- 1. fetch and verify -------------------------------------------------------------
integrity_of() { # sha512 in npm's "integrity" form
    node -e 'const c = require("crypto"), fs = require("fs");
        process.stdout.write("sha512-" + c.createHash("sha512")
            .update(fs.readFileSync(process.argv[1])).digest("base64"));' "$1"
}
if [[ ! -f "$work/$TGZ" ]]; then
    echo "== npm pack $PKG"
    (cd "$work" && npm pack "$PKG" --ignore-scripts --silent >/dev/null)
fi
got=$(integrity_of "$work/$TGZ")
if [[ "$got" != "$INTEGRITY" ]]; then
    echo "integrity mismatch for $work/$TGZ:" >&2
    echo "  expected $INTEGRITY" >&2
    echo "  got      $got" >&2
    echo "(delete the file to fetch it again)" >&2
    exit 1
fi
echo "== $TGZ: integrity ok ($INTEGRITY)"

src=$work/package/cpp
if [[ "$(cat "$work/package/.unpacked" 2>/dev/null)" != "$INTEGRITY" ]]; then
    rm -rf "$work/package"
    tar -xzf "$work/$TGZ" -C "$work"
    echo "$INTEGRITY" >"$work/package/.unpacked"
fi

# --- 2. build the libraries ------------------------------------------------------------
common=(-O3 -DNDEBUG -fPIC -pthread -w -D_XOPEN_SOURCE=600 -D_GNU_SOURCE
    -DWSP_GGML_SCHED_MAX_COPIES=4 -I"$src" -I"$src/ggml-cpu")
cflags=(-std=gnu11)
cxxflags=(-std=gnu++17)
# shellcheck disable=SC2034  # the *_defs arrays are read through compile_cmd's nameref
base_defs=(-DWSP_GGML_BUILD -DWSP_GGML_SHARED -DWSP_GGML_USE_OPENMP -fopenmp
    '-DWSP_GGML_VERSION="whisper.rn-0.7.4"' '-DWSP_GGML_COMMIT="unknown"')
# shellcheck disable=SC2034
cpu_defs=(-march=native -fopenmp -DWSP_GGML_USE_OPENMP -DWSP_GGML_USE_CPU_REPACK
    -DWSP_GGML_BACKEND_BUILD -DWSP_GGML_BACKEND_SHARED -DWSP_GGML_SHARED)
# shellcheck disable=SC2034
ggml_defs=(-DWSP_GGML_USE_CPU -DWSP_GGML_BUILD -DWSP_GGML_SHARED -DWSP_GGML_BACKEND_SHARED)
# shellcheck disable=SC2034
whisper_defs=(-DWHISPER_BUILD -DWHISPER_SHARED -DWSP_GGML_USE_CPU -DWSP_GGML_SHARED
    -DWSP_GGML_BACKEND_SHARED)
base_src=(ggml.c ggml.cpp ggml-alloc.c ggml-backend.cpp ggml-backend-meta.cpp ggml-opt.cpp
    ggml-threading.cpp ggml-quants.c gguf.cpp)
cpu_src=(ggml-cpu/ggml-cpu.c ggml-cpu/ggml-cpu.cpp ggml-cpu/repack.cpp ggml-cpu/quants.c
    ggml-cpu/traits.cpp ggml-cpu/amx/amx.cpp ggml-cpu/amx/mmq.cpp ggml-cpu/binary-ops.cpp
    ggml-cpu/unary-ops.cpp ggml-cpu/vec.cpp ggml-cpu/ops.cpp
    ggml-cpu/arch/x86/quants.c ggml-cpu/arch/x86/repack.cpp)
ggml_src=(ggml-backend-reg.cpp ggml-backend-dl.cpp)
whisper_src=(whisper.cpp)

obj=$work/obj
lib=$work/lib
compile_cmd() { # LIB-DEFS-ARRAY-NAME FILE -> one shell command line
    local -n defs=$1
    local f=$2 o="$obj/${2//\//_}.o" cc=(gcc "${cflags[@]}")
    [[ "$f" == *.cpp ]] && cc=(g++ "${cxxflags[@]}")
    printf '%q ' "${cc[@]}" "${common[@]}" "${defs[@]}" -c "$src/$f" -o "$o"
}
cmds=()
for f in "${base_src[@]}"; do cmds+=("$(compile_cmd base_defs "$f")"); done
for f in "${cpu_src[@]}"; do cmds+=("$(compile_cmd cpu_defs "$f")"); done
for f in "${ggml_src[@]}"; do cmds+=("$(compile_cmd ggml_defs "$f")"); done
for f in "${whisper_src[@]}"; do cmds+=("$(compile_cmd whisper_defs "$f")"); done
stamp=$(printf '%s\n' "$INTEGRITY" "${cmds[@]}" | sha256sum | cut -c1-16)
objs() { local f; for f in "$@"; do printf '%s ' "$obj/${f//\//_}.o"; done; }

if [[ ! -f "$lib/.built-$stamp" ]]; then
    echo "== building whisper.cpp (CPU backend) in $work with $jobs jobs"
    rm -rf "$obj" "$lib"
    mkdir -p "$obj" "$lib"
    printf '%s\0' "${cmds[@]}" | nice xargs -0 -n1 -P "$jobs" bash -c
    # shellcheck disable=SC2054  # -Wl,-rpath,DIR is one argument
    link=(nice g++ -shared -pthread -Wl,-rpath,"$lib" -L"$lib")
    # shellcheck disable=SC2046
    {
        "${link[@]}" -o "$lib/libggml-base.so" $(objs "${base_src[@]}") -fopenmp -lm
        "${link[@]}" -o "$lib/libggml-cpu.so" $(objs "${cpu_src[@]}") -lggml-base -fopenmp
        "${link[@]}" -o "$lib/libggml.so" $(objs "${ggml_src[@]}") -lggml-cpu -lggml-base -ldl
        "${link[@]}" -o "$lib/libwhisper.so" $(objs "${whisper_src[@]}") -lggml -lggml-cpu \
            -lggml-base
    }
    touch "$lib/.built-$stamp"
fi

# --- 3. the driver, then the runs --------------------------------------------------------
# examples are built like the libraries (Release: -O3 -DNDEBUG); the defines are the
# public ones the libraries export to their users
nice gcc -std=gnu11 -O3 -DNDEBUG -pthread -Wall -Wextra -DWHISPER_SHARED -DWSP_GGML_SHARED \
    -DWSP_GGML_BACKEND_SHARED -DWSP_GGML_USE_CPU -I"$src" -I"$root/tests" "$root/bench/whispercpp_bench.c" "$root/tests/wav.c" \
    -o "$work/whispercpp_bench" -L"$lib" -Wl,-rpath,"$lib" -lwhisper -lggml -lggml-cpu \
    -lggml-base

echo "== $(gcc --version | head -n1); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for m in "${models[@]}"; do
    echo "== $m: uptime before: $(uptime)"
    "$work/whispercpp_bench" "$m" "${bench_args[@]}"
done
echo "== uptime after: $(uptime)"
