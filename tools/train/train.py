"""Train a small Whisper on synthetic speech (CPU or CUDA), resumable.

  python3 train.py --pool work/pool-train.pkl --out work/run1 --minutes 120

The loss is the reference's (next-token cross-entropy over the decoder sequence, the
previous text not scored) plus a character CTC loss on the encoder output that is
used only in training (it makes the encoder learn the sounds early; the head is not
part of the model file). Checkpoints every few minutes; the same command resumes.
"""
import argparse
import json
import math
import os
import pickle
import time

import numpy as np
import torch
import torch.nn as nn

import corpus
import engine
import network
from loss import losses
import windows as W


def vocabulary(utts):
    ids = {W.EOT, W.SOT, W.PREV, W.NOSPEECH, W.NOTS}
    ids.update(range(W.TS0, W.TS0 + W.N_TS))
    for u in utts:
        ids.update(u["tokens"])
        for p in u["prefix"]:
            ids.update(p)
    return np.array(sorted(ids))


def lr_at(a, step, progress):
    warm = min(1.0, (step + 1) / a.warmup)
    return a.lr * warm * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=120, help="training time budget")
    ap.add_argument("--d", type=int, default=192)
    ap.add_argument("--heads", type=int, default=3)
    ap.add_argument("--enc-layers", type=int, default=4)
    ap.add_argument("--dec-layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--ctc", type=float, default=0.3)
    ap.add_argument("--guide", type=float, default=0.0,
                    help="weight of the attention guidance: the last decoder layer's "
                         "cross-attention, for each text token, on its word's audio")
    ap.add_argument("--bf16", action="store_true", help="autocast matrix products to bf16")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--init", default="",
                    help="start from this checkpoint's weights and optimizer (a new "
                         "schedule: fine-tuning on another pool)")
    ap.add_argument("--top", type=int, default=0,
                    help="the pool's sentences are corpus.split(TOP)'s (pool.py --top)")
    ap.add_argument("--steps", type=int, default=0, help="stop after this many (timing)")
    ap.add_argument("--short-until", type=float, default=0.0,
                    help="curriculum: until this many minutes, windows of 6-12 s "
                         "(--short-batch of them a step); 30-s windows afterwards")
    ap.add_argument("--short-batch", type=int, default=16)
    ap.add_argument("--easy-until", type=float, default=0.0,
                    help="curriculum: until this many minutes, plain voices and little noise")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    os.makedirs(a.out, exist_ok=True)
    ckpt_path = os.path.join(a.out, "ckpt.pt")

    with open(a.pool, "rb") as f:
        utts = pickle.load(f)
    vocab_ids = vocabulary(utts)
    init = None
    if a.init and not os.path.exists(ckpt_path):
        init = torch.load(a.init, map_location=dev)
        vocab_ids = init["vocab_ids"]  # the output rows the weights were trained with
        have = set(np.asarray(vocab_ids).tolist())
        n = len(utts)  # the weights have no input row for an id outside their vocabulary
        utts = [u for u in utts if have.issuperset(vocabulary([u]).tolist())]
        if len(utts) < n:
            print(f"{n - len(utts)} utterances left out: ids not in {a.init}'s vocabulary")
    dims = dict(n_vocab=51864, n_audio_ctx=1500, n_audio_state=a.d, n_audio_head=a.heads,
                n_audio_layer=a.enc_layers, n_text_ctx=448, n_text_state=a.d,
                n_text_head=a.heads, n_text_layer=a.dec_layers, n_mels=80)
    model = network.Whisper(dims, vocab_ids).to(dev)
    ctc_head = nn.Linear(a.d, len(W.CHARS) + 1).to(dev)
    params = list(model.parameters()) + list(ctc_head.parameters())
    opt = torch.optim.AdamW(params, lr=a.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    state = {"step": 0, "seconds": 0.0, "windows": 0}
    if init is not None:
        model.load_state_dict(init["model"])
        ctc_head.load_state_dict(init["ctc_head"])
        opt.load_state_dict(init["opt"])
        state["init"] = {"from": a.init, "step": init["state"]["step"],
                         "seconds": init["state"]["seconds"]}
        print(f"starting from {a.init} (step {init['state']['step']}, "
              f"{init['state']['seconds'] / 60:.1f} min)")
    if os.path.exists(ckpt_path):
        ck = torch.load(ckpt_path, map_location=dev)
        model.load_state_dict(ck["model"])
        ctc_head.load_state_dict(ck["ctc_head"])
        opt.load_state_dict(ck["opt"])
        state = ck["state"]
        print(f"resumed at step {state['step']} ({state['seconds'] / 60:.1f} min)")
    if not network.gelu_grad_ok():
        print("note: this torch computes GELU's gradient wrongly for non-contiguous "
              "gradients; network.py keeps them contiguous", flush=True)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model d={a.d} heads={a.heads} layers={a.enc_layers}+{a.dec_layers}: "
          f"{n_params / 1e6:.2f} M trained parameters, output over {len(vocab_ids)} ids "
          f"+ 1 shared row, device {dev}, threads {a.threads}", flush=True)

    filters = np.load(os.path.join(engine.shared_dir(), "models", "openai-assets",
                                   "mel_filters.npz"))["mel_80"]
    mel = W.Mel(filters)
    train_sents, _ = corpus.split(a.top)
    prev_pool = [u["tokens"] for u in utts[:len(train_sents)]]
    maker = W.WindowMaker(utts, prev_pool, a.seed * 7 + state["step"])
    compact = model.decoder.compact.cpu()
    other = len(vocab_ids)
    budget = a.minutes * 60
    t_last_ck = time.time()
    log = open(os.path.join(a.out, "log.jsonl"), "a")
    acc = {"ce": 0.0, "ctc": 0.0, "n": 0, "t": time.time()}
    while state["seconds"] < budget and (not a.steps or state["step"] < a.steps):
        t0 = time.time()
        maker.set_easy(state["seconds"] < a.easy_until * 60)
        if state["seconds"] < a.short_until * 60:
            length = float(maker.rng.integers(6, 13))
            items = [maker.make(length) for _ in range(a.short_batch)]
        else:
            items = [maker.make() for _ in range(a.batch)]
        mels, tok, lab, ctc_t, ctc_len, frames, span = W.collate(items, mel, compact, other)
        mels, tok, lab = mels.to(dev), tok.to(dev), lab.to(dev)
        lr = lr_at(a, state["step"], state["seconds"] / budget)
        for g in opt.param_groups:
            g["lr"] = lr
        ce, ctc, guide = losses(model, ctc_head, mels, tok, lab, ctc_t.to(dev), frames.to(dev),
                                ctc_len.to(dev), span.to(dev), a.ctc > 0, a.guide > 0,
                                dev, a.bf16)
        loss = ce + a.ctc * ctc + a.guide * guide
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
        if torch.isfinite(loss) and torch.isfinite(norm):
            opt.step()
        else:  # one bad batch must not poison the weights (or the averages below)
            state["skipped"] = state.get("skipped", 0) + 1
            ce, ctc = torch.zeros(()), torch.zeros(())
        state["step"] += 1
        state["windows"] += len(items)
        state["seconds"] += time.time() - t0
        acc["ce"] += float(ce)
        acc["ctc"] += float(ctc)
        acc["guide"] = acc.get("guide", 0.0) + float(guide)
        acc["n"] += 1
        if state["step"] % 20 == 0:
            rec = {"step": state["step"], "min": round(state["seconds"] / 60, 2),
                   "windows": state["windows"], "lr": round(lr, 6),
                   "ce": round(acc["ce"] / acc["n"], 4), "ctc": round(acc["ctc"] / acc["n"], 4),
                   "guide": round(acc.get("guide", 0.0) / acc["n"], 4),
                   "s_per_step": round((time.time() - acc["t"]) / acc["n"], 2),
                   "skipped": state.get("skipped", 0)}
            print(json.dumps(rec), flush=True)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            acc = {"ce": 0.0, "ctc": 0.0, "n": 0, "t": time.time()}
        if time.time() - t_last_ck > 300 or state["seconds"] >= budget:
            save(ckpt_path, model, ctc_head, opt, state, dims, vocab_ids)
            t_last_ck = time.time()
    save(ckpt_path, model, ctc_head, opt, state, dims, vocab_ids)
    print(f"done: {state['step']} steps, {state['windows']} windows, "
          f"{state['seconds'] / 60:.1f} min", flush=True)


def save(path, model, ctc_head, opt, state, dims, vocab_ids):
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "ctc_head": ctc_head.state_dict(),
                "opt": opt.state_dict(), "state": state, "dims": dims,
                "vocab_ids": vocab_ids}, tmp)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
