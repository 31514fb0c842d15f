"""Synthesized speech with known text and word times, at 16 kHz.

espeak-ng runs through its C library (ctypes), because only the library reports where
each word starts in the audio (espeakEVENT_WORD); flite runs as a program and gives
utterance times only. Every call is deterministic for its arguments.
"""
import os
import subprocess
import tempfile
import wave

import numpy as np
from scipy.signal import resample_poly

RATE = 16000

from espeak_lib import (ESPEAK_VARIANTS, ESPEAK_VOICES, FLITE_VOICES,  # noqa: F401
                        HELDOUT_ESPEAK, HELDOUT_FLITE)
import espeak_lib


class Espeak(espeak_lib.Espeak):
    """espeak_lib's, with float samples in [-1, 1)."""

    def say(self, text, voice, rate=175, pitch=50, prange=50, gap=0):
        pcm, sr, words = super().say(text, voice, rate, pitch, prange, gap)
        return np.frombuffer(pcm.tobytes(), np.int16).astype(np.float32) / 32768.0, sr, words


def flite_say(text, voice, rate_scale=1.0):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "u.wav")
        args = ["flite", "-voice", voice, "--setf", f"duration_stretch={rate_scale:.3f}",
                "-t", text, "-o", out]
        subprocess.run(args, check=True, capture_output=True)
        with wave.open(out, "rb") as w:
            sr = w.getframerate()
            pcm = np.frombuffer(w.readframes(w.getnframes()), np.int16)
    return pcm.astype(np.float32) / 32768.0, sr, []


def to_16k(pcm, sr):
    if sr == RATE:
        return pcm
    g = np.gcd(sr, RATE)
    return resample_poly(pcm, RATE // g, sr // g).astype(np.float32)


def trim(pcm, thresh=0.01, pad=0.02):
    """Cut leading and trailing silence; returns (pcm, samples cut at the start)."""
    loud = np.nonzero(np.abs(pcm) > thresh)[0]
    if len(loud) == 0:
        return pcm[:0], 0
    a = max(0, loud[0] - int(pad * RATE))
    b = min(len(pcm), loud[-1] + int(pad * RATE))
    return pcm[a:b], a


def utterance(engine, text, spec):
    """Synthesize `text` as `spec` describes; returns 16-kHz float32 PCM (trimmed) and
    words [(char_start, char_end, start_s, end_s)] timed from its first sample (espeak
    only; a word ends where the next starts, the last where the audio does)."""
    if spec["engine"] == "espeak":
        pcm, sr, words = engine.say(text, spec["voice"], spec["rate"], spec["pitch"],
                                    spec["range"], spec["gap"])
    else:
        pcm, sr, words = flite_say(text, spec["voice"], spec["stretch"])
    pcm = to_16k(pcm, sr)
    pcm, cut = trim(pcm)
    t0 = cut / RATE
    dur = len(pcm) / RATE
    timed = []
    for i, (c0, c1, t) in enumerate(words):
        start = min(max(0.0, t - t0), dur)
        end = words[i + 1][2] - t0 if i + 1 < len(words) else dur
        timed.append((c0, c1, start, min(max(end, start), dur)))
    return pcm * spec["gain"], timed


def random_spec(rng, heldout=False):
    """Voice and prosody for one utterance, drawn from `rng` (numpy Generator)."""
    if heldout:
        choice = rng.integers(len(HELDOUT_ESPEAK) + len(HELDOUT_FLITE))
        if choice < len(HELDOUT_ESPEAK):
            v, var = HELDOUT_ESPEAK[choice]
            spec = {"engine": "espeak", "voice": v + var}
        else:
            spec = {"engine": "flite", "voice": HELDOUT_FLITE[choice - len(HELDOUT_ESPEAK)]}
    elif rng.random() < 0.2:
        spec = {"engine": "flite", "voice": FLITE_VOICES[rng.integers(len(FLITE_VOICES))]}
    else:
        v = ESPEAK_VOICES[rng.integers(len(ESPEAK_VOICES))]
        var = ESPEAK_VARIANTS[rng.integers(len(ESPEAK_VARIANTS))]
        spec = {"engine": "espeak", "voice": v + var}
    spec.update(rate=int(rng.integers(130, 230)), pitch=int(rng.integers(25, 80)),
                range=int(rng.integers(20, 90)), gap=int(rng.integers(0, 3)),
                stretch=float(rng.uniform(0.8, 1.25)),
                gain=float(10 ** rng.uniform(-1.0, 0.0)))
    return spec
