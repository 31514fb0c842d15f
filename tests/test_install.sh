#!/bin/sh
# `meson install --destdir` of this build folder, and the library used from there as a
# user would (issue 49, part 5):
#   - every installed file lies under DESTDIR/<prefix> (no system folder, no root);
#   - the header, the shared library, whisperkv.pc and (when built) the GStreamer
#     plugin, in <prefix>/<libdir>/gstreamer-1.0, are there;
#   - whisperkv.pc's Libs and Libs.private hold -L/-l flags only (no absolute paths of
#     the build machine, no compiler flags), its Requires.private modules pkg-config
#     knows;
#   - examples/transcribe-wav.c compiled with `cc $(pkg-config --cflags --libs
#     whisperkv)` against the installed files (PKG_CONFIG_SYSROOT_DIR=DESTDIR), warning
#     free, runs on the installed libwhisperkv and prints timed segments of jfk.wav;
#   - GStreamer finds the plugin with GST_PLUGIN_PATH=<prefix>/<libdir>/gstreamer-1.0.
#
# usage: test_install.sh MESON BUILD_DIR PREFIX LIBDIR EXAMPLE_C MODEL PLUGIN(0|1) [SHARED_DIR]
# Exits 0 when all pass, 1 on any failure, 77 (skip) when all else passed but the
# shared recordings are missing outside CI.
set -u

MESON=${1:?usage: test_install.sh MESON BUILD_DIR PREFIX LIBDIR EXAMPLE_C MODEL PLUGIN [SHARED]}
BUILD=${2:?missing BUILD_DIR}
PREFIX=${3:?missing PREFIX}
LIBDIR=${4:?missing LIBDIR}
EXAMPLE_C=${5:?missing EXAMPLE_C}
MODEL=${6:?missing MODEL}
PLUGIN=${7:?missing PLUGIN}
SHARED=${WHISPERKV_SHARED:-${8:-}}
JFK=$SHARED/speech/jfk/jfk.wav
CC=${CC:-cc}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

case $LIBDIR in /*) ;; *) LIBDIR=$PREFIX/$LIBDIR ;; esac

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
D=$tmp/destdir
ROOT=$D$PREFIX   # the prefix inside DESTDIR
LIB=$D$LIBDIR

failed=0
ok() { echo "ok   - $1"; }
# bad MESSAGE [FILE...]: a failed check, with the files that explain it
bad() {
    failed=1
    echo "FAIL - $1"
    shift
    for f in "$@"; do
        [ -s "$f" ] && head -n 15 "$f" | sed "s|^|       $(basename "$f"): |"
    done
}

# ------------------------------------------------------------------ meson install
if ! "$MESON" install -C "$BUILD" --destdir "$D" --no-rebuild >"$tmp/install.log" 2>&1; then
    bad "meson install -C $BUILD --destdir DESTDIR --no-rebuild" "$tmp/install.log"
    exit 1
fi
(cd "$D" && find . ! -type d) | sed 's|^\.||' | sort >"$tmp/files"
ok "meson install --destdir: $(wc -l <"$tmp/files") files"

grep -v "^$PREFIX/" "$tmp/files" >"$tmp/outside"
if [ -s "$tmp/outside" ]; then
    bad "installed outside the prefix $PREFIX:" "$tmp/outside"
else
    ok "every installed file lies under the prefix $PREFIX"
fi

for f in "$ROOT/include/whisperkv.h" "$ROOT/include/whisperkv_stream.h" \
    "$LIB/libwhisperkv.so" "$LIB/pkgconfig/whisperkv.pc"; do
    [ -e "$f" ] || bad "missing: ${f#"$D"}"
done
if [ "$PLUGIN" = 1 ]; then
    if [ -f "$LIB/gstreamer-1.0/libgstwhisperkv.so" ]; then
        ok "the GStreamer plugin is at $LIBDIR/gstreamer-1.0/libgstwhisperkv.so"
    else
        bad "the GStreamer plugin is not at $LIBDIR/gstreamer-1.0/libgstwhisperkv.so" \
            "$tmp/files"
    fi
fi

# ------------------------------------------------------------------ whisperkv.pc
PC=$LIB/pkgconfig/whisperkv.pc
if [ -f "$PC" ]; then
    sed -n 's/^Libs\(\.private\)\{0,1\}: *//p' "$PC" | tr ' ' '\n' | grep -v '^$' >"$tmp/libs"
    grep -v -e '^-l[A-Za-z0-9_.+-]*$' -e '^-L\${libdir}$' "$tmp/libs" >"$tmp/badlibs"
    if [ -s "$tmp/badlibs" ]; then
        bad "whisperkv.pc: Libs and Libs.private must be -l flags (and -L\${libdir}):" \
            "$tmp/badlibs" "$PC"
    else
        ok "whisperkv.pc: Libs and Libs.private are -l flags: $(tr '\n' ' ' <"$tmp/libs")"
    fi
    if PKG_CONFIG_PATH=$LIB/pkgconfig "$PKG_CONFIG" --static --libs whisperkv \
        >"$tmp/static" 2>&1; then
        ok "whisperkv.pc: pkg-config --static --libs: $(cat "$tmp/static")"
    else
        bad "whisperkv.pc: pkg-config --static cannot resolve it" "$tmp/static" "$PC"
    fi
fi

# ------------------------------------------------------------------ the example, installed
export PKG_CONFIG_PATH="$LIB/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_SYSROOT_DIR=$D
built=0
if flags=$("$PKG_CONFIG" --cflags --libs whisperkv 2>"$tmp/pc.err"); then
    # shellcheck disable=SC2086 # the flags are words
    if "$CC" -std=c11 -Wall -Wextra -Werror "$EXAMPLE_C" -o "$tmp/transcribe-wav" $flags \
        >"$tmp/cc.log" 2>&1; then
        ok "cc transcribe-wav.c \$(pkg-config --cflags --libs whisperkv): $flags"
        built=1
    else
        bad "cc transcribe-wav.c $flags" "$tmp/cc.log"
    fi
else
    bad "pkg-config --cflags --libs whisperkv (PKG_CONFIG_PATH=$LIB/pkgconfig)" "$tmp/pc.err"
fi

if [ $built = 1 ]; then
    LD_LIBRARY_PATH=$LIB ldd "$tmp/transcribe-wav" >"$tmp/ldd" 2>&1
    if grep -q "libwhisperkv\.so.* => $LIB/libwhisperkv\.so" "$tmp/ldd"; then
        ok "with LD_LIBRARY_PATH it loads the installed libwhisperkv"
    else
        bad "it does not load the installed libwhisperkv" "$tmp/ldd"
    fi
fi

# ------------------------------------------------------------------ GST_PLUGIN_PATH
if [ "$PLUGIN" = 1 ] && command -v gst-inspect-1.0 >/dev/null 2>&1; then
    # a registry of its own, so nothing outside the temp folder is read or written
    GST_REGISTRY=$tmp/registry.bin GST_PLUGIN_PATH=$LIB/gstreamer-1.0 \
        LD_LIBRARY_PATH=$LIB gst-inspect-1.0 whisperkv >"$tmp/inspect" 2>&1
    if grep -q "Filename *$LIB/gstreamer-1.0/libgstwhisperkv.so" "$tmp/inspect"; then
        ok "GST_PLUGIN_PATH=$LIBDIR/gstreamer-1.0: gst-inspect-1.0 finds the installed plugin"
    else
        bad "gst-inspect-1.0 whisperkv with GST_PLUGIN_PATH=DESTDIR$LIBDIR/gstreamer-1.0" \
            "$tmp/inspect"
    fi
fi

# ------------------------------------------------------------------ a transcription
if [ ! -f "$JFK" ]; then
    [ $failed = 0 ] || exit 1
    echo "test_install: no $JFK"
    case "${CI:-}" in
    "" | false | 0)
        echo "test_install: transcription skipped (set WHISPERKV_SHARED or put shared/ next to the checkout)"
        exit 77 ;;
    *)
        echo "test_install: CI=${CI}: the shared data must be there"
        exit 1 ;;
    esac
fi
if [ $built = 1 ]; then
    TIMED='^\[ *[0-9][0-9]*\.[0-9][0-9] --> *[0-9][0-9]*\.[0-9][0-9]\] '
    LD_LIBRARY_PATH=$LIB "$tmp/transcribe-wav" "$MODEL" "$JFK" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    n=$(grep -c "$TIMED" "$tmp/out")
    if [ $rc -eq 0 ] && [ "$n" -ge 1 ]; then
        ok "the installed example on jfk.wav: $n timed segments (first: $(head -n 1 "$tmp/out"))"
    else
        bad "the installed example on jfk.wav: status $rc, $n timed segments" "$tmp/out" "$tmp/err"
    fi
fi
exit $failed
