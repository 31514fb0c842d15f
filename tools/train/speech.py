"""Synthesized speech with known text and word times, at 16 kHz.

espeak-ng runs through its C library (ctypes), because only the library reports where
each word starts in the audio (espeakEVENT_WORD); flite runs as a program and gives
utterance times only. Every call is deterministic for its arguments.
"""
import ctypes
import os
import subprocess
import tempfile
import wave

import numpy as np
from scipy.signal import resample_poly

RATE = 16000

# espeak-ng's voices and variants (voice+variant). Training draws from TRAIN_*; the
# held-out set adds voices never used in training (HELDOUT_*).
ESPEAK_VOICES = ["en-us", "en", "en-us-nyc", "en-gb-x-rp", "en-gb-scotland", "en-029", "en-gb-x-gbclan"]
ESPEAK_VARIANTS = ["", "+m1", "+m2", "+m3", "+m4", "+m5", "+m7", "+f1", "+f2", "+f3", "+f5",
                   "+klatt", "+Andy", "+Annie", "+david", "+linda"]
FLITE_VOICES = ["kal16", "slt", "awb"]
HELDOUT_ESPEAK = [("en-gb-x-gbcwmd", "+m6"), ("en-us", "+f4")]
HELDOUT_FLITE = ["rms"]


class _Event(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint),
                ("text_position", ctypes.c_int), ("length", ctypes.c_int),
                ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", ctypes.c_char * 8)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                             ctypes.POINTER(_Event))
_EVENT_WORD, _EVENT_END_LIST = 1, 0
_RATE_PARAM, _VOLUME_PARAM, _PITCH_PARAM, _RANGE_PARAM, _WORDGAP_PARAM = 1, 2, 3, 4, 7


class Espeak:
    """One espeak-ng instance per process (the library keeps global state)."""

    def __init__(self):
        self.lib = ctypes.CDLL("libespeak-ng.so.1")
        self.rate = self.lib.espeak_Initialize(2, 0, None, 0)  # AUDIO_OUTPUT_SYNCHRONOUS
        if self.rate <= 0:
            raise RuntimeError("espeak-ng failed to initialize")
        self._chunks, self._words = [], []
        self._cb = _CALLBACK(self._callback)  # kept alive: the library holds the pointer
        self.lib.espeak_SetSynthCallback(self._cb)
        self.lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint,
                                          ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                          ctypes.c_void_p, ctypes.c_void_p]

    def _callback(self, wav, n, events):
        if n > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        i = 0
        while events[i].type != _EVENT_END_LIST:
            e = events[i]
            if e.type == _EVENT_WORD:
                # text_position is 1-based in characters; audio_position in ms
                self._words.append((e.text_position - 1, e.length, e.audio_position / 1000.0))
            i += 1
        return 0

    def say(self, text, voice, rate=175, pitch=50, prange=50, gap=0):
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise RuntimeError(f"espeak-ng has no voice {voice}")
        for p, v in ((_RATE_PARAM, rate), (_PITCH_PARAM, pitch), (_RANGE_PARAM, prange),
                     (_WORDGAP_PARAM, gap), (_VOLUME_PARAM, 100)):
            self.lib.espeak_SetParameter(p, int(v), 0)
        self._chunks, self._words = [], []
        data = text.encode()
        if self.lib.espeak_Synth(data, len(data) + 1, 0, 1, 0, 1, None, None) != 0:
            raise RuntimeError("espeak_Synth failed")
        self.lib.espeak_Synchronize()
        pcm = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)
        # (first character, character after the word, start in s)
        words = [(pos, pos + length, t) for pos, length, t in self._words]
        return pcm.astype(np.float32) / 32768.0, self.rate, words


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
