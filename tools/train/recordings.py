"""Held-out recordings longer than one utterance, with the truth: a live stream of
sentences with pauses (for commit delays and word times) and a long recording (for
the long-form loop). Held-out sentences only; each utterance keeps its voice.

  python3 recordings.py --pool work/pool-heldout.pkl --minutes 2.5 --out work/stream
  -> work/stream.wav, work/stream.json ({"utterances": [{text, start, end, words}]})
"""
import argparse
import json
import wave

import numpy as np

RATE = 16000


def build(utts, minutes, seed, need_words=False, noise=0.0003):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(utts))
    pcm, truth, t = [], [], float(rng.uniform(0.5, 1.0))
    pcm.append(np.zeros(int(t * RATE), np.float32))
    for i in order:
        u = utts[i]
        if need_words and not u["words"]:
            continue
        x = u["pcm"].astype(np.float32) / 32768.0
        dur = len(x) / RATE
        truth.append({"text": u["text"], "start": round(t, 3), "end": round(t + dur, 3),
                      "voice": u["spec"]["voice"],
                      "words": [{"word": u["text"][c0:c1], "start": round(t + s, 3),
                                 "end": round(t + e, 3)} for c0, c1, s, e in u["words"]]})
        gap = float(rng.uniform(0.4, 1.5))
        pcm += [x, np.zeros(int(gap * RATE), np.float32)]
        t += dur + int(gap * RATE) / RATE
        if t >= minutes * 60:
            break
    audio = np.concatenate(pcm)
    audio += (rng.standard_normal(len(audio)) * noise).astype(np.float32)
    return audio, truth


def write(path, audio, truth):
    with wave.open(path + ".wav", "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes((np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes())
    with open(path + ".json", "w") as f:
        json.dump({"seconds": len(audio) / RATE, "utterances": truth}, f, indent=1)


def main():
    import pickle
    ap = argparse.ArgumentParser()
    ap.add_argument("--pool", required=True)
    ap.add_argument("--minutes", type=float, default=2.5)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--words", action="store_true", help="only utterances with word times")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.pool, "rb") as f:
        utts = pickle.load(f)
    audio, truth = build(utts, a.minutes, a.seed, a.words)
    write(a.out, audio, truth)
    print(f"{a.out}.wav: {len(audio) / RATE:.1f} s, {len(truth)} utterances, "
          f"{sum(len(u['text'].split()) for u in truth)} words")


if __name__ == "__main__":
    main()
