"""A growing utterance pool for a fast trainer (train_gpu.py): the training sentences
spoken round after round (each round every sentence once, a new seeded voice and
prosody each time), written as numbered shards while the trainer reads them:
shard-NNNNN.npy (the utterances' 16-kHz int16 samples end to end) and then
shard-NNNNN.pkl (each utterance's offset, length, text, tokens, word-prefix tokens and
word times), the .pkl renamed into place last so that a reader never sees half a shard.

  python3 shards.py --sentences work/train-sentences.txt --tiktoken .../gpt2.tiktoken \\
      --out work/shards --workers 14 --rounds 20
"""
import argparse
import multiprocessing as mp
import os
import pickle
import time

import numpy as np

import bpe
import pool
import speech


def _job(args):
    text, seed = args
    return pool._synth((text, seed, False))


_END = ",.?!;:"


def new_text(rng, sents, vocab, tok):
    """A word sequence no training sentence says, so that the decoder must listen
    rather than recall (the corpus has 15,000 sentences, and a run speaks each hundreds
    of times): half the time the start of one sentence and the end of another, else
    words drawn from random sentences. Only texts whose tokens the model has rows for."""
    while True:
        if rng.random() < 0.5:
            a = sents[rng.integers(len(sents))].split()
            b = sents[rng.integers(len(sents))].split()
            if len(a) < 2 or len(b) < 2:
                continue
            words = a[:rng.integers(1, len(a))] + b[len(b) - rng.integers(1, len(b)):]
        else:
            words = []
            for _ in range(int(rng.integers(4, 15))):
                s = sents[rng.integers(len(sents))].split()
                i = int(rng.integers(len(s)))
                w = s[i].rstrip(_END)
                words.append(w.lower() if i == 0 and w != "I" else w)
            words[-1] += "."
        if not words or not words[0]:
            continue
        text = " ".join(words)
        text = text[0].upper() + text[1:]
        if set(tok.tokens(" " + text)) <= vocab:
            return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", required=True, help="one training sentence a line")
    ap.add_argument("--tiktoken", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--shard", type=int, default=1500, help="utterances a shard")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mix", type=float, default=1.0,
                    help="share of training sentences; the rest new_text()'s sequences")
    a = ap.parse_args()
    with open(a.sentences) as f:
        sents = [s.strip() for s in f if s.strip()]
    tok = bpe.BPE(a.tiktoken)
    vocab = bpe.text_vocabulary(sents, tok) if a.mix < 1 else None
    os.makedirs(a.out, exist_ok=True)
    k, t0, total = 0, time.time(), 0.0
    with mp.Pool(a.workers) as p:
        for r in range(a.rounds):
            order = np.random.default_rng(a.seed * 1009 + r).permutation(len(sents))
            for c in range(0, len(order), a.shard):
                jobs = []
                for i in order[c:c + a.shard]:
                    seed = (a.seed * 1000003 + r * 100003 + int(i)) & 0x7fffffff
                    g = np.random.default_rng(seed)
                    text = sents[i] if g.random() < a.mix else new_text(g, sents, vocab, tok)
                    jobs.append((text, seed))
                pcm, meta, off = [], [], 0
                for text, spec, x, words in p.imap(_job, jobs, chunksize=8):
                    if len(x) < 1600:
                        continue
                    prefix = [tok.tokens(" " + text[:c1]) for (_, c1, _, _) in words]
                    if vocab is not None and not all(set(p) <= vocab for p in prefix):
                        words, prefix = [], []  # a cut there would say an id without a row
                    meta.append({"offset": off, "length": len(x), "text": text,
                                 "tokens": tok.tokens(" " + text), "prefix": prefix,
                                 "words": words, "engine": spec["engine"]})
                    pcm.append(x)
                    off += len(x)
                base = os.path.join(a.out, f"shard-{k:05d}")
                np.save(base + ".npy.tmp.npy", np.concatenate(pcm))
                os.replace(base + ".npy.tmp.npy", base + ".npy")
                with open(base + ".pkl.tmp", "wb") as f:
                    pickle.dump(meta, f, protocol=4)
                os.replace(base + ".pkl.tmp", base + ".pkl")
                total += off / speech.RATE / 3600
                print(f"shard {k}: round {r}, {len(meta)} utterances, {total:.2f} h in all, "
                      f"{time.time() - t0:.0f} s", flush=True)
                k += 1


if __name__ == "__main__":
    main()
