"""Train on a GPU from a growing pool (shards.py): windows are made as recipes on CPU
workers (which utterance goes where, the noise and tone parameters, the token
sequence), and the audio, the noise and the log-mel are made on the GPU from the pool
held there as int16, so that no 30-s window of samples crosses a process boundary.
The windows are windows.py's (same choices, same token sequences, same log-mel); the
loss is train.py's (cross-entropy over the compact output, character CTC on the
encoder, attention guidance on the last decoder layer).

  python3 train_gpu.py --shards work/shards --sentences work/train-sentences.txt \\
      --tiktoken gpt2.tiktoken --filters mel_filters.npz --out OUT --seconds 420

Writes OUT/ckpt.NNN (the checkpoint in parts of at most 14 MB, joined by
join_ckpt.py; weights only, no optimizer state) and OUT/log.jsonl, every
--save-every seconds and at the end.
"""
import argparse
import io
import json
import math
import multiprocessing as mp
import os
import pickle
import queue
import time

import numpy as np

import bpe
import windows as W

L = W.N_SAMPLES


def vocabulary(sentences, tok):
    ids = {W.EOT, W.SOT, W.PREV, W.NOSPEECH, W.NOTS}
    ids.update(range(W.TS0, W.TS0 + W.N_TS))
    ids.update(bpe.text_vocabulary(sentences, tok))
    return np.array(sorted(ids))


class ShardIndex:
    """The shards' metadata in order, each utterance with its offset in the pool."""

    def __init__(self, d, cap):
        self.d, self.cap = d, cap
        self.utts, self.n, self.total = [], 0, 0

    def refresh(self):
        while True:
            p = os.path.join(self.d, f"shard-{self.n:05d}.pkl")
            if not os.path.exists(p):
                return
            with open(p, "rb") as f:
                meta = pickle.load(f)
            size = sum(m["length"] for m in meta)
            if self.total + size > self.cap:
                return
            for m in meta:
                m["g"] = self.total + m["offset"]
            self.utts += meta
            self.total += size
            self.n += 1


def make_batch(rng, utts, vocab, compact, other, B, file_end=0.0):
    items = []
    while len(items) < B:
        r = W.recipe(rng, utts, vocab, file_end=file_end)
        if r is not None:
            items.append(r)
    T = max(len(it[4]) for it in items)
    tok = np.full((B, T), W.EOT, np.int64)
    lab = np.full((B, T), -100, np.int64)
    span = np.full((B, T, 2), -1, np.int64)
    runs = []
    for i, (n, rr, _, _, seq, labels, _, spans) in enumerate(items):
        tok[i, :len(seq)] = seq
        lab[i, :len(labels)] = [x if x < 0 else (compact[x] if compact[x] >= 0 else other)
                                for x in labels]
        for j, sp in enumerate(spans):
            if sp is not None and sp[0] < 1500:
                span[i, j] = (sp[0], min(sp[1], 1500))
        runs += [(i, a, u["g"], m) for a, u, m in rr]
    runs = np.array(runs, np.int64).reshape(-1, 4)
    ctc = [np.array(it[6], np.int64) for it in items]
    ns = np.array([it[0] for it in items], np.int64)
    return {"n": ns, "runs": runs, "noise": np.array([it[2] for it in items], np.float64),
            "tones": np.stack([it[3] for it in items]), "tok": tok, "lab": lab, "span": span,
            "ctc": np.concatenate(ctc) if ctc else np.zeros(0, np.int64),
            "ctc_len": np.array([len(c) for c in ctc], np.int64),
            "frames": np.minimum(1500, (ns + 319) // 320),
            "pool_end": int((runs[:, 2] + runs[:, 3]).max()) if len(runs) else 0}


def worker(wid, shards, cap, vocab_ids, B, seed, file_end, q, stop):
    rng = np.random.default_rng(seed * 7919 + wid)
    vocab = set(int(x) for x in vocab_ids)
    compact = np.full(51864, -1, np.int64)
    compact[vocab_ids] = np.arange(len(vocab_ids))
    idx = ShardIndex(shards, cap)
    last = 0.0
    while not stop.is_set():
        if time.time() - last > 2:
            idx.refresh()
            last = time.time()
        if not idx.utts:
            time.sleep(0.2)
            continue
        b = make_batch(rng, idx.utts, vocab, compact, len(vocab_ids), B, file_end)
        while not stop.is_set():
            try:
                q.put(b, timeout=0.5)
                break
            except queue.Full:
                pass


class GpuWindows:
    """The pool on the device and the windows made there from batch recipes."""

    def __init__(self, shards, cap, filters, dev):
        import torch
        self.torch, self.dev, self.shards = torch, dev, shards
        self.pool = torch.empty(cap, dtype=torch.int16, device=dev)
        self.loaded = {"end": 0, "n": 0}
        self.filters = torch.as_tensor(np.load(filters)["mel_80"], dtype=torch.float32, device=dev)
        self.hann = torch.hann_window(400, periodic=True, device=dev)
        self.t_idx = torch.arange(L, device=dev)
        self.omega = torch.arange(L // 2 + 1, device=dev, dtype=torch.float64) * (2 * math.pi / L)

    def ensure(self, end):
        """Copies the pool's shards in order until `end` samples are on the device."""
        while self.loaded["end"] < end:
            x = np.load(os.path.join(self.shards, f"shard-{self.loaded['n']:05d}.npy"))
            e = self.loaded["end"]
            self.pool[e:e + len(x)] = self.torch.from_numpy(x).to(self.dev)
            self.loaded["end"] += len(x)
            self.loaded["n"] += 1

    def audio(self, b):
        """A batch's samples [B, 480000]: its utterances, noise and tones, zero after
        each window's content (as the engine pads); and the content lengths."""
        torch, dev, t_idx = self.torch, self.dev, self.t_idx
        B = len(b["n"])
        runs = torch.from_numpy(b["runs"]).to(dev)
        lens = runs[:, 3]
        total = int(b["runs"][:, 3].sum())
        rep = torch.repeat_interleave(torch.arange(len(runs), device=dev), lens, output_size=total)
        within = torch.arange(total, device=dev) - (torch.cumsum(lens, 0) - lens)[rep]
        x = torch.zeros(B * L, device=dev)
        x[(runs[:, 0] * L + runs[:, 1])[rep] + within] = (
            self.pool[runs[:, 2][rep] + within].float() / 32768.0)
        x = x.view(B, L)
        nz = torch.from_numpy(b["noise"]).to(dev)
        kind, al, amp = nz[:, 0], nz[:, 1], nz[:, 2].float()
        g = torch.randn(B, L, device=dev)
        # low-passed noise, y[n] = a y[n-1] + (1-a) x[n] (windows._lowpass), in frequency
        H = (1 - al)[:, None] / (1 - al[:, None] * torch.exp(-1j * self.omega)[None, :])
        lp = torch.fft.irfft(torch.fft.rfft(g, dim=1) * H.to(torch.complex64), n=L, dim=1)
        lp = lp / lp.std(dim=1, keepdim=True).clamp(min=1e-6)
        noise = torch.where((kind == 2)[:, None], lp, g) * ((kind > 0).float() * amp)[:, None]
        tn = torch.from_numpy(b["tones"]).to(dev)
        for j in range(4):
            f, s0, s1, ta = (tn[:, j, k][:, None] for k in range(4))
            env = ((t_idx[None, :] >= s0) & (t_idx[None, :] < s1)).float()
            x = x + torch.sin(2 * math.pi * f * t_idx[None, :] / W.RATE) * env * ta
        n = torch.from_numpy(b["n"]).to(dev)
        return (x + noise) * (t_idx[None, :] < n[:, None]).float(), n

    def log_mel(self, x, n):
        """windows.Mel for a batch on the device."""
        torch, dev = self.torch, self.dev
        B = x.shape[0]
        xp = torch.cat([x[:, 1:201].flip(1), x, torch.zeros(B, 200, device=dev)], dim=1)
        spec = torch.stft(xp, 400, 160, window=self.hann, center=False,
                          return_complex=True)[..., :3000]
        logm = torch.clamp(self.filters @ spec.abs() ** 2, min=1e-10).log10()
        nf = torch.clamp((n + 159) // 160, max=3000)
        valid = torch.arange(3000, device=dev)[None, :] < nf[:, None]
        mx = logm.masked_fill(~valid[:, None, :], float("-inf")).amax(dim=(1, 2))
        m = torch.maximum(logm, (mx - 8.0)[:, None, None])
        return (m + 4.0) / 4.0 * valid[:, None, :].float()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shards", required=True)
    ap.add_argument("--sentences", required=True)
    ap.add_argument("--tiktoken", required=True)
    ap.add_argument("--filters", required=True, help="the reference's mel_filters.npz")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=420, help="training time budget")
    ap.add_argument("--save-every", type=float, default=90)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--enc-layers", type=int, default=6)
    ap.add_argument("--dec-layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--lr", type=float, default=1.2e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--ctc", type=float, default=0.5)
    ap.add_argument("--guide", type=float, default=0.5)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--steps", type=int, default=0, help="stop after this many (a smoke run)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--file-end", type=float, default=0.0,
                    help="share of windows that are not full which end as a file ends")
    ap.add_argument("--init", default="", help="start from this checkpoint's weights "
                    "(its vocabulary kept; a new optimizer and schedule)")
    ap.add_argument("--cap-hours", type=float, default=130, help="the pool's size on the device")
    a = ap.parse_args()
    t_start = time.time()
    with open(a.sentences) as f:
        sents = [s.strip() for s in f if s.strip()]
    vocab_ids = vocabulary(sents, bpe.BPE(a.tiktoken))
    init = None
    if a.init:
        import torch
        init = torch.load(a.init, map_location="cpu")
        vocab_ids = np.asarray(init["vocab_ids"]).astype(np.int64)
    cap = int(a.cap_hours * 3600 * W.RATE)
    # the workers are forked before CUDA starts in this process
    ctx = mp.get_context("fork")
    q, stop = ctx.Queue(maxsize=6), ctx.Event()
    procs = [ctx.Process(target=worker, args=(i, a.shards, cap, vocab_ids, a.batch, a.seed,
                                              a.file_end, q, stop), daemon=True)
             for i in range(a.workers)]
    for p in procs:
        p.start()
    try:
        train(a, vocab_ids, q, cap, t_start, init)
    finally:
        stop.set()


def train(a, vocab_ids, q, cap, t_start, init=None):
    import torch
    import torch.nn as nn
    import network
    from loss import losses

    dev = a.device
    torch.manual_seed(a.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    os.makedirs(a.out, exist_ok=True)
    dims = dict(n_vocab=51864, n_audio_ctx=1500, n_audio_state=a.d, n_audio_head=a.heads,
                n_audio_layer=a.enc_layers, n_text_ctx=448, n_text_state=a.d,
                n_text_head=a.heads, n_text_layer=a.dec_layers, n_mels=80)
    model = network.Whisper(dims, vocab_ids).to(dev)
    ctc_head = nn.Linear(a.d, len(W.CHARS) + 1).to(dev)
    if init is not None:
        dims = init["dims"]
        model = network.Whisper(dims, vocab_ids).to(dev)
        missing, unexpected = model.load_state_dict(
            {k: v.float() for k, v in init["model"].items()}, strict=False)
        if unexpected or set(missing) - {"encoder.positional_embedding", "decoder.vocab_ids",
                                         "decoder.compact"}:
            raise SystemExit(f"--init does not fit: {missing} {unexpected}")
        ctc_head.load_state_dict({k: v.float() for k, v in init["ctc_head"].items()})
    params = list(model.parameters()) + list(ctc_head.parameters())
    kw = {"fused": True} if dev == "cuda" else {}
    opt = torch.optim.AdamW(params, lr=a.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01, **kw)
    n_params = sum(p.numel() for p in model.parameters())
    log = open(os.path.join(a.out, "log.jsonl"), "a")

    def say(rec):
        print(json.dumps(rec), flush=True)
        log.write(json.dumps(rec) + "\n")
        log.flush()

    say({"model": dims, "trained_params_M": round(n_params / 1e6, 2), "output_ids": len(vocab_ids),
         "batch": a.batch, "device": torch.cuda.get_device_name() if dev == "cuda" else dev,
         "torch": torch.__version__})
    gw = GpuWindows(a.shards, cap, a.filters, dev)

    state = {"step": 0, "windows": 0, "seconds": 0.0, "skipped": 0}
    acc = {"n": 0, "wait": 0.0, "t": time.time()}
    t0 = time.time()
    last_save = t0
    while True:
        el = time.time() - t0
        if el >= a.seconds or (a.steps and state["step"] >= a.steps):
            break
        tw = time.time()
        b = q.get(timeout=120)  # a worker that died must not hang the run
        acc["wait"] += time.time() - tw
        gw.ensure(b["pool_end"])
        lr = a.lr * min(1.0, (state["step"] + 1) / a.warmup) * (
            0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(1.0, el / a.seconds))))
        for grp in opt.param_groups:
            grp["lr"] = lr
        with torch.no_grad():
            x, n = gw.audio(b)
            mels = gw.log_mel(x, n)
            del x
        tok = torch.from_numpy(b["tok"]).to(dev)
        lab = torch.from_numpy(b["lab"]).to(dev)
        ce, ctc, guide = losses(
            model, ctc_head, mels, tok, lab, torch.from_numpy(b["ctc"]).to(dev),
            torch.from_numpy(b["frames"]).to(dev), torch.from_numpy(b["ctc_len"]).to(dev),
            torch.from_numpy(b["span"]).to(dev), a.ctc > 0, a.guide > 0,
            "cuda" if dev == "cuda" else "cpu")
        loss = ce + a.ctc * ctc + a.guide * guide
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
        if torch.isfinite(loss) and torch.isfinite(norm):
            opt.step()
        else:
            state["skipped"] += 1
        state["step"] += 1
        state["windows"] += len(b["n"])
        acc["n"] += 1
        if state["step"] % 25 == 0:  # the only host syncs of the loop
            now = time.time()
            say({"step": state["step"], "s": round(now - t0, 1), "windows": state["windows"],
                 "lr": round(lr, 6), "ce": round(float(ce), 4), "ctc": round(float(ctc), 4),
                 "guide": round(float(guide), 4), "ms_per_step": round(1000 * (now - acc["t"]) / acc["n"], 1),
                 "wait_ms": round(1000 * acc["wait"] / acc["n"], 1), "pool_h": round(gw.loaded["end"] / 5.76e7, 2),
                 "skipped": state["skipped"]})
            acc = {"n": 0, "wait": 0.0, "t": now}
        if time.time() - last_save > a.save_every:
            state["seconds"] = time.time() - t0
            save(a.out, model, ctc_head, state, dims, vocab_ids, gw.loaded)
            last_save = time.time()
    state["seconds"] = time.time() - t0
    save(a.out, model, ctc_head, state, dims, vocab_ids, gw.loaded)
    say({"done": state, "pool_h": round(gw.loaded["end"] / 5.76e7, 2),
         "wall_s": round(time.time() - t_start, 1)})


def save(out, model, ctc_head, state, dims, vocab_ids, loaded):
    """The weights (no buffers, no optimizer) in parts of at most 14 MB: what a
    device machine can send back (files of at most 16 MB)."""
    import torch
    sd = {k: v.detach().float().cpu() for k, v in model.state_dict().items()
          if k not in ("encoder.positional_embedding", "decoder.vocab_ids", "decoder.compact")}
    buf = io.BytesIO()
    torch.save({"model": sd, "ctc_head": {k: v.cpu() for k, v in ctc_head.state_dict().items()},
                "state": dict(state, pool_hours=loaded["end"] / 5.76e7), "dims": dims,
                "vocab_ids": torch.as_tensor(vocab_ids)}, buf)  # no numpy pickle: numpy 1 reads it
    data = buf.getvalue()
    part = 14 * 1000 * 1000
    n = (len(data) + part - 1) // part
    for i in range(n):
        p = os.path.join(out, f"ckpt.{i:03d}")
        with open(p + ".tmp", "wb") as f:
            f.write(data[i * part:(i + 1) * part])
        os.replace(p + ".tmp", p)
    for i in range(n, 16):  # fewer parts than last time
        if os.path.exists(os.path.join(out, f"ckpt.{i:03d}")):
            os.remove(os.path.join(out, f"ckpt.{i:03d}"))


if __name__ == "__main__":
    main()
