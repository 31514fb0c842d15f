"""The engine's forward pass against PyTorch's on the same model file: encoder output
and the logits of every decoder position, on a few windows; relative error
max|engine - torch| / max|torch| must stay within --tol (1e-4) with f32 compute.

  python3 check_logits.py work/run1/ckpt.pt --pool work/pool-heldout.pkl
"""
import argparse
import ctypes
import os
import pickle
import sys
import tempfile

import numpy as np
import torch

import engine
import export_ggml
import windows as W


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1e-30, np.max(np.abs(b))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ckpt")
    ap.add_argument("--pool", required=True)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(os.cpu_count())
    model, ck = export_ggml.load(a.ckpt)
    with open(a.pool, "rb") as f:
        utts = pickle.load(f)
    filters = np.load(os.path.join(engine.shared_dir(), "models", "openai-assets",
                                   "mel_filters.npz"))["mel_80"]
    mel = W.Mel(filters)
    maker = W.WindowMaker(utts, [u["tokens"] for u in utts], a.seed)
    worst = 0.0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m-f32.bin")
        vocab = os.path.join(engine.shared_dir(), "models", "for-tests-ggml-tiny.en.bin")
        export_ggml.write(model, ck["dims"], path, 0, vocab)
        eng = engine.Engine(path)
        ct = eng.lib.wkv_compute_type_parse
        ct.restype, ct.argtypes = ctypes.c_int, [ctypes.c_char_p]
        eng.context(threads=os.cpu_count(), compute_type=ct(b"f32"))
        for w in range(a.windows):
            audio, n, seq = maker.make()[:3]
            while len(seq) < 20:  # a window with speech, not a silent one
                audio, n, seq = maker.make()[:3]
            m = mel(audio[None], [n])
            seq = seq[:60]
            with torch.no_grad():
                xa = model.encoder(m)
                ref_logits = model.decoder(torch.tensor([seq]), xa)[0].numpy()
            enc = eng.encode(m[0].numpy())
            e_enc = rel(enc, xa[0].numpy())
            e_log = 0.0
            for k in (1, len(seq) // 2, len(seq)):
                e_log = max(e_log, rel(eng.decode(seq[:k]), ref_logits[k - 1]))
            print(f"window {w}: {len(seq)} tokens, encoder rel {e_enc:.2e}, "
                  f"logits rel {e_log:.2e}")
            worst = max(worst, e_enc, e_log)
    ok = worst <= a.tol
    print(f"worst relative error {worst:.2e} ({'within' if ok else 'ABOVE'} {a.tol:g})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
