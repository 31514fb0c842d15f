"""Write a trained checkpoint as a whisper.cpp ggml file (f32 or f16), the layout of
whisper.cpp's models/convert-pt-to-ggml.py: magic, 11 hparams, the mel filters and the
vocabulary copied from a real English vocabulary file, then the tensors (shape
innermost first; matrices f16 in an f16 file, 1-D tensors, conv biases and both
positional embeddings f32, as whisper.cpp's converter writes them).

  python3 export_ggml.py work/run1/ckpt.pt models/whisperkv-synth-en-f16.bin
"""
import argparse
import os
import struct
import sys

import numpy as np
import torch

import engine
import network

F32_ALWAYS = {"encoder.conv1.bias", "encoder.conv2.bias", "encoder.positional_embedding",
              "decoder.positional_embedding"}


def load(ckpt_path):
    ck = torch.load(ckpt_path, map_location="cpu")
    model = network.Whisper(ck["dims"], ck["vocab_ids"])
    model.load_state_dict(ck["model"])
    model.eval()
    return model, ck


def tensors(model):
    """(name, float32 array in the PyTorch shape) in the file's order."""
    out = []
    for name, t in model.state_dict().items():
        if name in ("decoder.vocab_ids", "decoder.compact", "decoder.other_embedding"):
            continue
        if name == "decoder.token_embedding.weight":
            t = model.decoder.full_embedding()
        a = t.detach().float().numpy()
        if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
            a = a.reshape(-1, 1)
        out.append((name, a))
    return out


def write(model, dims, path, ftype, vocab_file):
    with open(vocab_file, "rb") as f:
        head = f.read()
    if struct.unpack("<I", head[:4])[0] != 0x67676D6C:
        raise SystemExit(f"{vocab_file}: not a ggml file")
    tail = head[4 + 44:]  # mel filters and vocabulary, verbatim
    hp = [dims[k] for k in ("n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head",
                            "n_audio_layer", "n_text_ctx", "n_text_state", "n_text_head",
                            "n_text_layer", "n_mels")] + [ftype]
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<I", 0x67676D6C))
        f.write(struct.pack("<11i", *hp))
        f.write(tail)
        for name, a in tensors(model):
            half = ftype == 1 and a.ndim >= 2 and name not in F32_ALWAYS
            data = a.astype(np.float16 if half else np.float32)
            nb = name.encode()
            f.write(struct.pack("<3i", a.ndim, len(nb), 1 if half else 0))
            f.write(struct.pack(f"<{a.ndim}i", *reversed(a.shape)))
            f.write(nb)
            f.write(np.ascontiguousarray(data).tobytes())
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ckpt")
    ap.add_argument("out")
    ap.add_argument("--ftype", choices=["f32", "f16"], default="f16")
    a = ap.parse_args()
    model, ck = load(a.ckpt)
    vocab = os.path.join(engine.shared_dir(), "models", "for-tests-ggml-tiny.en.bin")
    write(model, ck["dims"], a.out, 0 if a.ftype == "f32" else 1, vocab)
    print(f"{a.out}: {os.path.getsize(a.out) / 1e6:.2f} MB, step {ck['state']['step']}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
