"""Joins the parts a device machine sent back (train_gpu.py's OUT/ckpt.NNN) into a
checkpoint of train.py's form (export_ggml.py, check_logits.py, heads.py read it).

  python3 join_ckpt.py DIR work/gpu1/ckpt.pt"""
import glob
import io
import os
import sys

import numpy as np
import torch

import network

# a checkpoint pickled by numpy 2 (the GPU machine's) names numpy._core, which the
# numpy 1 of Debian 12 calls numpy.core
if not hasattr(np, "_core"):
    import numpy.core.multiarray
    sys.modules.setdefault("numpy._core", np.core)
    sys.modules.setdefault("numpy._core.multiarray", np.core.multiarray)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    parts = sorted(glob.glob(os.path.join(src, "ckpt.[0-9][0-9][0-9]")))
    if not parts:
        raise SystemExit(f"no ckpt.NNN parts in {src}")
    data = b"".join(open(p, "rb").read() for p in parts)
    ck = torch.load(io.BytesIO(data), map_location="cpu")
    model = network.Whisper(ck["dims"], ck["vocab_ids"])
    missing, unexpected = model.load_state_dict(ck["model"], strict=False)
    buffers = {"encoder.positional_embedding", "decoder.vocab_ids", "decoder.compact"}
    if unexpected or set(missing) - buffers:
        raise SystemExit(f"checkpoint does not fit the network: {missing} {unexpected}")
    os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
    torch.save({"model": model.state_dict(), "ctc_head": ck["ctc_head"], "opt": None,
                "state": ck["state"], "dims": ck["dims"],
                "vocab_ids": np.asarray(ck["vocab_ids"]).astype(np.int64)}, dst)
    print(f"{dst}: {len(parts)} parts, step {ck['state']['step']}, "
          f"{ck['state']['windows']} windows, {ck['state']['seconds']:.0f} s")


if __name__ == "__main__":
    main()
