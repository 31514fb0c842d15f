#!/usr/bin/env bash
# Transcribes an audio file, setting everything up first:
#   ./scripts/transcribe.sh FILE [whisperkv-transcribe options, e.g. -o srt]
#   ./scripts/transcribe.sh --demo    (no network, no model needed: see run_demo)
# Installs what is missing (Debian/Ubuntu), builds in build/ ($WKV_BUILD_DIR), and when no model is
# given (-m, $WHISPERKV_MODEL) or present in models/, downloads ggml-base.en.bin
# from the public whisper.cpp model repository into models/.
set -euo pipefail
# shellcheck source=scripts/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

MODEL_NAME=ggml-base.en.bin
MODEL_URL=https://huggingface.co/ggerganov/whisper.cpp/resolve/main/$MODEL_NAME

# --demo: a first run on a machine without network.  espeak-ng speaks a sentence that
# the project's own small model (models/whisperkv-synth-en.bin, trained here on
# synthesized English: models/README.md) never heard in training, then the CLI and a
# gst-launch-1.0 pipeline with the element transcribe it.
run_demo() {
    local text="He took a shower after the game." model=$WKV_ROOT/models/whisperkv-synth-en.bin
    local build=${WKV_BUILD_DIR:-build} wav
    if [[ ! -f "$model" ]]; then
        wkv_log "the demo model $model is not in this checkout (tools/train/README.md makes it)"
        return 1
    fi
    {
        wkv_install_packages espeak-ng gstreamer1.0-tools
        wkv_configure "$build"
        wkv_build "$build" cli/whisperkv-transcribe gst-plugin/gstwhisperkv
    } >&2
    wav=$(mktemp --suffix .wav)
    # expanded now: the trap runs after this function's locals are gone
    trap "rm -f '$wav'" EXIT
    espeak-ng -v en-us -w "$wav" "$text"
    echo "Demo model: $model, trained here on speech synthesized by espeak-ng and flite."
    echo "It understands synthesized English only, not human speech: for real speech use"
    echo "a real Whisper model (whisper.cpp's ggml-base.en.bin; '$0 FILE' fetches it)."
    echo
    echo "espeak-ng said:  $text"
    echo -n "CLI heard:      "
    "$WKV_ROOT/$build/cli/whisperkv-transcribe" -m "$model" "$wav" | tr -s ' \n' ' '
    echo
    echo -n "element heard:  "
    GST_PLUGIN_PATH="$WKV_ROOT/$build/gst-plugin${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}" \
        gst-launch-1.0 -q filesrc location="$wav" ! decodebin ! audioconvert ! \
        audioresample ! whisperkv model="$model" name=w ! fakesink w.text_src ! fdsink
    echo
    echo "(the pipeline: gst-launch-1.0 filesrc location=FILE ! decodebin ! audioconvert !"
    echo " audioresample ! whisperkv model=$model name=w ! fakesink w.text_src ! fdsink)"
}

if [[ "${1:-}" == --demo ]]; then
    run_demo
    exit $?
fi

if (($# == 0)) || [[ "$1" == -h || "$1" == --help ]]; then
    echo "usage: $0 FILE [whisperkv-transcribe options]" >&2
    echo "       $0 --demo   (speaks a sentence and transcribes it with the demo model)" >&2
    echo "(after the first run, build/cli/whisperkv-transcribe --help lists them)" >&2
    exit 2
fi

# The first models/ggml-*.bin of the checkout, base.en preferred.
find_local_model() {
    local f
    if [[ -f "$WKV_ROOT/models/$MODEL_NAME" ]]; then
        echo "$WKV_ROOT/models/$MODEL_NAME"
        return 0
    fi
    for f in "$WKV_ROOT"/models/ggml-*.bin; do
        if [[ -f "$f" ]]; then
            echo "$f"
            return 0
        fi
    done
    return 1
}

# A whisper.cpp model file starts with the u32 0x67676d6c, "lmgg" on disk.
is_ggml() {
    [[ "$(head -c 4 "$1" 2>/dev/null)" == lmgg ]]
}

download_model() {
    local dest=$WKV_ROOT/models/$MODEL_NAME part
    part=$WKV_ROOT/models/partial-$MODEL_NAME # ignored by git and by the model lookup
    mkdir -p "$WKV_ROOT/models"
    wkv_log "no model configured: downloading $MODEL_NAME (about 150 MB) from $MODEL_URL"
    rm -f "$part"
    if command -v curl >/dev/null 2>&1; then
        curl -fL --connect-timeout 20 --retry 2 -o "$part" "$MODEL_URL" || true
    elif command -v wget >/dev/null 2>&1; then
        wget -q --show-progress --timeout=20 -O "$part" "$MODEL_URL" || true
    fi
    if [[ -s "$part" ]] && is_ggml "$part"; then
        mv "$part" "$dest"
        echo "$dest"
        return 0
    fi
    rm -f "$part"
    rmdir "$WKV_ROOT/models" 2>/dev/null || true # only if we made it and it is empty
    wkv_log "could not download $MODEL_URL (no network?)."
    wkv_log "Put a whisper.cpp ggml model file at $dest (get $MODEL_NAME from that address" \
        "on a machine with network), or pass -m PATH, or set WHISPERKV_MODEL=PATH."
    return 1
}

has_model_option=0
for a in "$@"; do
    case "$a" in
    -m | --model | --model=* | -m?*) has_model_option=1 ;;
    --) break ;;
    esac
done

# Set-up messages go to stderr: stdout is the transcription's.
build=${WKV_BUILD_DIR:-build}
{
    wkv_install_packages curl ca-certificates
    wkv_configure "$build"
    wkv_build "$build" cli/whisperkv-transcribe
} >&2

model_args=()
if ((has_model_option == 0)) && [[ -z "${WHISPERKV_MODEL:-}" ]]; then
    model=$(find_local_model) || model=$(download_model) || exit 1
    model_args=(-m "$model")
fi
exec "$WKV_ROOT/$build/cli/whisperkv-transcribe" "${model_args[@]}" "$@"
