"""Utterance pools: every sentence spoken (seeded voice and prosody), trimmed, at
16 kHz, with its tokens and word times, stored in one file per pool so that training
packs windows from it without running a synthesizer.

  python3 pool.py --split train --copies 2 --out work/pool-train.pkl
  python3 pool.py --split heldout --out work/pool-heldout.pkl
  python3 pool.py --split train --top 1000 --copies 12 --out work/pool-train-1k.pkl
  python3 pool.py --split heldout --top 1000 --copies 3 --out work/pool-heldout-1k.pkl
"""
import argparse
import multiprocessing as mp
import os
import pickle
import time

import numpy as np

import corpus
import engine
import speech

_ESPEAK = None


def _synth(job):
    global _ESPEAK
    if _ESPEAK is None:
        _ESPEAK = speech.Espeak()
    text, seed, heldout_voice = job
    rng = np.random.default_rng(seed)
    spec = speech.random_spec(rng, heldout=heldout_voice)
    pcm, words = speech.utterance(_ESPEAK, text, spec)
    if spec["engine"] == "espeak" and len(words) != len(text.split()):
        words = []  # espeak split the text otherwise: no word times for this one
    return text, spec, (np.clip(pcm, -1, 1) * 32767).astype(np.int16), words


def build(split, copies, seed, workers, cache, top=0):
    train, held = corpus.split(top)
    jobs = []
    if split == "train":
        for c in range(copies):
            jobs += [(s, seed * 1000003 + c * 100003 + i, False) for i, s in enumerate(train)]
    else:  # each held-out sentence `copies` times in training voices, as often in held-out ones
        for c in range(copies):
            base = seed * 7919 + c * 100003
            for i, s in enumerate(held):
                jobs += [(s, base + 2 * i, False), (s, base + 2 * i + 1, True)]
    eng = engine.vocab_engine(cache)
    t = time.time()
    with mp.Pool(workers) as p:
        res = p.map(_synth, jobs, chunksize=64)
    utts = []
    for text, spec, pcm, words in res:
        if len(pcm) < 1600:
            continue
        toks = eng.tokens(" " + text)
        # tokens of every word prefix: what a window cut after word k says
        prefix = [eng.tokens(" " + text[:c1]) for (_, c1, _, _) in words]
        utts.append({"text": text, "spec": spec, "pcm": pcm, "words": words,
                     "tokens": toks, "prefix": prefix, "heldout_voice": spec.get("voice") in
                     [v + var for v, var in speech.HELDOUT_ESPEAK] + speech.HELDOUT_FLITE})
    hours = sum(len(u["pcm"]) for u in utts) / speech.RATE / 3600
    print(f"{split}: {len(utts)} utterances, {hours:.2f} h of speech, {time.time() - t:.0f} s")
    return utts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", choices=["train", "heldout"], required=True)
    ap.add_argument("--copies", type=int, default=2,
                    help="renditions of each sentence (held out: in each kind of voice)")
    ap.add_argument("--top", type=int, default=0,
                    help="only sentences of the TOP most used words (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--cache", default="work")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    utts = build(a.split, a.copies, a.seed, a.workers, a.cache, a.top)
    with open(a.out, "wb") as f:
        pickle.dump(utts, f, protocol=4)


if __name__ == "__main__":
    main()
