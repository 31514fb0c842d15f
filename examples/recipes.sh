#!/bin/sh
# Runs the pipelines of docs/element.md's "Recipes" as printed there, on MODEL and a
# recording IN, so that the docs cannot drift from what works:
#   examples/recipes.sh MODEL IN.wav OUTDIR [GST_LAUNCH]
# The recipes name devices (autoaudiosrc, autovideosink); here they become a live
# test source (80 buffers of 0.1 s at its default 44.1 kHz: 8 s, as long as the
# recipe's video) and fakesink, the only substitutions made.  Each recipe's block in
# the docs is between "<!-- recipe NAME -->" and the closing ``` and is run as a shell
# command with $MODEL and $IN set.  Prints one line per recipe and a summary; exits 1
# when any fails, 2 on bad usage.  Run by the `recipes` test (tests/meson.build).
set -u
MODEL=${1:?usage: recipes.sh MODEL IN.wav OUTDIR [GST_LAUNCH]}
IN=${2:?usage: recipes.sh MODEL IN.wav OUTDIR [GST_LAUNCH]}
OUT=${3:?usage: recipes.sh MODEL IN.wav OUTDIR [GST_LAUNCH]}
HERE=$(cd "$(dirname "$0")" && pwd)
DOC=$HERE/../docs/element.md
case "$MODEL" in /*) ;; *) MODEL=$(pwd)/$MODEL ;; esac
case "$IN" in /*) ;; *) IN=$(pwd)/$IN ;; esac
if [ ! -f "$IN" ]; then
    echo "recipes: the recording $IN is missing"
    case "${CI:-}" in "" | false | 0) exit 77 ;; *) exit 1 ;; esac
fi
export MODEL IN
# Debian's tools first (python3 with python3-gi, gst-launch-1.0)
PATH=/usr/bin:$PATH
mkdir -p "$OUT" || exit 2
cd "$OUT" || exit 2
rm -f talk.mkv talk.srt
# the recipes name examples/ from the checkout's root
ln -sfn "$HERE" examples

passed=0
failed=0
# the recipe names in the docs, in order
names=$(sed -n 's/^<!-- recipe \([a-z0-9-]*\) -->$/\1/p' "$DOC")
[ -n "$names" ] || { echo "recipes: no recipe in $DOC"; exit 1; }
for name in $names; do
    # the fenced block after the marker, lines joined (a trailing \ continues a line)
    cmd=$(awk -v n="$name" '
        $0 == "<!-- recipe " n " -->" { want = 1; next }
        want && /^```/ { if (inside) exit; inside = 1; next }
        want && inside { print }' "$DOC")
    cmd=$(printf '%s\n' "$cmd" |
        sed -e 's/autoaudiosrc/audiotestsrc is-live=true num-buffers=80 samplesperbuffer=4410 wave=pink-noise/' \
            -e 's/autovideosink/fakesink sync=true/')
    if timeout 180 sh -c "$cmd" >"$name.log" 2>&1; then
        ok=1
        # what each recipe must have made
        case $name in
        mkv) [ -s talk.mkv ] || ok=0 ;;
        srt) grep -q -- '-->' talk.srt 2>/dev/null || ok=0 ;;
        python) grep -q '^[0-9.]* - [0-9.]* ' "$name.log" || ok=0 ;;
        esac
    else
        ok=0
    fi
    if [ $ok = 1 ]; then
        passed=$((passed + 1))
        echo "ok   - recipe $name"
    else
        failed=$((failed + 1))
        echo "FAIL - recipe $name:"
        printf '%s\n' "$cmd" | sed 's/^/       $ /'
        tail -n 8 "$name.log" | sed 's/^/       | /'
    fi
done
echo "recipes: $passed passed, $failed failed"
[ $failed -eq 0 ]
