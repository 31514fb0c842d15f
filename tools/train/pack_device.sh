#!/usr/bin/env bash
# Packs what a GPU machine without these Debian packages needs to train there
# (device_train.sh): espeak-ng's and flite's libraries and programs with every
# library they load (they need glibc >= 2.34, nothing else from the host), espeak-ng's
# English data, the reference's gpt2.tiktoken and mel filters, and the training
# sentences (WordNet is not there); with a checkpoint as $2, its weights in f16 as
# init.pt (a fine-tuning run: INIT=init.pt device_train.sh). Into $1 (default .carry at
# the repository root); the programs and libraries compressed (synth.tar.xz), since a
# device call carries at most 64 MiB.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/.carry}
init=${2:-}
shared=${WHISPERKV_SHARED:-$(dirname "$root")/shared}
stage=$(mktemp -d)
rm -rf "$out" && mkdir -p "$out" "$stage/lib" "$stage/bin" "$stage/espeak-ng-data"
out=$(cd "$out" && pwd)
[ -z "$init" ] || init=$(realpath "$init")
libs=$( (ldd /usr/lib/x86_64-linux-gnu/libespeak-ng.so.1; ldd /usr/bin/flite) |
        awk '/=>/ {print $3}' | grep -v -E '/(libc|libm|libpthread|libdl)\.so' | sort -u)
for l in $libs /usr/lib/x86_64-linux-gnu/libespeak-ng.so.1; do
    cp -L "$l" "$stage/lib/$(basename "$l")"
done
cp /usr/bin/flite "$stage/bin/"
d=/usr/lib/x86_64-linux-gnu/espeak-ng-data
cp -r $d/phondata $d/phondata-manifest $d/phonindex $d/phontab $d/intonations \
      $d/en_dict $d/lang $d/voices "$stage/espeak-ng-data/"
tar -C "$stage" -cJf "$out/synth.tar.xz" lib bin espeak-ng-data
rm -rf "$stage"
cp "$shared/models/openai-assets/gpt2.tiktoken" "$shared/models/openai-assets/mel_filters.npz" "$out/"
(cd "$here" && /usr/bin/python3 -c "
import corpus
tr, _ = corpus.split()
open('$out/train-sentences.txt', 'w').write('\n'.join(tr) + '\n')")
if [ -n "$init" ]; then
    (cd "$here" && /usr/bin/python3 -c "
import sys, torch
ck = torch.load('$init', map_location='cpu')
half = lambda d: {k: v.half() if v.is_floating_point() else v for k, v in d.items()}
torch.save({'model': half(ck['model']), 'ctc_head': half(ck['ctc_head']), 'dims': ck['dims'],
            'vocab_ids': torch.as_tensor(ck['vocab_ids']), 'state': ck['state']}, '$out/init.pt')")
fi
du -sh "$out"/*
