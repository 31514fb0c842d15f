"""Alignment heads for a trained model, found the way the reference's tables were:
the decoder cross-attention heads whose attention, with the true text forced,
falls on the audio of the word each token belongs to. Score of a head = the mean,
over text tokens, of its attention mass inside that word's true time span
(espeak-ng's word boundaries, held-out utterances).

  python3 heads.py work/run1/ckpt.pt --pool work/pool-heldout.pkl
"""
import argparse
import os
import pickle

import numpy as np
import torch

import engine
import export_ggml
import windows as W


def cross_weights(model, mel, tokens):
    dec = model.decoder
    xa = model.encoder(mel)
    x = dec.token_embedding(dec.compact[tokens]) + dec.positional_embedding[:tokens.shape[1]]
    out = []
    for blk in dec.blocks:
        x = x + blk.attn(blk.attn_ln(x), causal=True)
        o, w = blk.cross_attn(blk.cross_attn_ln(x), xa, return_weights=True)
        x = x + o
        x = x + blk.mlp(blk.mlp_ln(x))
        out.append(w[0])  # [heads, T, 1500]
    return torch.stack(out)  # [layers, heads, T, 1500]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ckpt")
    ap.add_argument("--pool", required=True)
    ap.add_argument("--n", type=int, default=120)
    a = ap.parse_args()
    torch.set_num_threads(os.cpu_count())
    model, _ = export_ggml.load(a.ckpt)
    with open(a.pool, "rb") as f:
        utts = [u for u in pickle.load(f) if u["words"]][:a.n]
    filters = np.load(os.path.join(engine.shared_dir(), "models", "openai-assets",
                                   "mel_filters.npz"))["mel_80"]
    mel = W.Mel(filters)
    score, count = None, 0
    for u in utts:
        off = 0.5
        audio = np.zeros(W.N_SAMPLES, np.float32)
        a0 = int(off * W.RATE)
        audio[a0:a0 + len(u["pcm"])] = u["pcm"] / 32768.0
        n = a0 + len(u["pcm"]) + int(0.5 * W.RATE)
        toks = [W.SOT, W.NOTS] + list(u["tokens"])
        if (model.decoder.compact[torch.tensor(toks)] < 0).any():
            continue  # a token the model never trained on: it has no embedding of its own
        dur = len(u["pcm"]) / W.RATE
        # (position of the token, its word's first frame, end frame)
        spans = [(2 + k, f0, f1) for k, (f0, f1) in
                 enumerate(W.token_spans(u, off, off + dur, u["tokens"]))]
        with torch.no_grad():
            w = cross_weights(model, mel(audio[None], [n]), torch.tensor([toks]))
        # the attention that predicts token i comes from position i - 1
        s = torch.zeros(w.shape[0], w.shape[1])
        for pos, f0, f1 in spans:
            s += w[:, :, pos - 1, f0:f1].sum(-1)
        s /= max(1, len(spans))
        score = s if score is None else score + s
        count += 1
    score /= count
    order = sorted(((float(score[l, h]), l, h) for l in range(score.shape[0])
                    for h in range(score.shape[1])), reverse=True)
    print(f"attention mass on the right word, {count} held-out utterances:")
    for v, l, h in order:
        print(f"  {l}.{h}: {v:.3f}")


if __name__ == "__main__":
    main()
