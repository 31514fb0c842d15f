"""Signals that are not speech, through the CLI with and without Silero VAD: what text
comes out (a model that hears should write none; VAD should keep it from trying).

  python3 signals_eval.py --model M [--vad ../shared/models/for-tests-silero-v6.2.0-ggml.bin]
"""
import argparse
import json
import os
import tempfile
import wave

import numpy as np

import eval as ev

RATE = 16000


def signals(seconds=30.0, seed=3):
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    out = {"digital silence": np.zeros(n, np.float32),
           "white noise -40 dBFS": rng.standard_normal(n) * 0.01,
           "white noise -20 dBFS": rng.standard_normal(n) * 0.1,
           "hum 50 Hz + harmonics": sum(0.05 / k * np.sin(2 * np.pi * 50 * k * t)
                                        for k in range(1, 6)),
           "tone 440 Hz": 0.2 * np.sin(2 * np.pi * 440 * t)}
    # music-like: random notes of a pentatonic scale with harmonics and decay, 4 a second
    music = np.zeros(n)
    scale = [261.6, 293.7, 329.6, 392.0, 440.0, 523.3]
    for start in np.arange(0, seconds, 0.25):
        f = scale[rng.integers(len(scale))] * (2.0 ** rng.integers(-1, 2))
        a, b = int(start * RATE), min(n, int((start + 0.6) * RATE))
        tt = np.arange(b - a) / RATE
        note = sum(0.3 / k * np.sin(2 * np.pi * f * k * tt) for k in range(1, 5))
        music[a:b] += note * np.exp(-tt * 5)
    out["music-like notes"] = 0.3 * music / np.abs(music).max()
    return {k: np.asarray(v, np.float32) for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--vad", default="")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for name, x in signals().items():
            p = os.path.join(d, "s.wav")
            with wave.open(p, "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(RATE)
                w.writeframes((np.clip(x, -1, 1) * 32767).astype(np.int16).tobytes())
            plain = ev.transcribe(a.model, p, "f32", "greedy")
            vad = ev.transcribe(a.model, p, "f32", "greedy", ["--vad-model", a.vad]) if a.vad else ""
            rows.append({"signal": name, "text": plain, "text_with_vad": vad})
            print(f"| {name} | {len(plain.split())} words: {plain[:80]!r} | "
                  f"{len(vad.split())} words{': ' + repr(vad[:60]) if vad else ''} |", flush=True)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
