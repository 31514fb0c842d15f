"""espeak-ng through its C library (ctypes), in the standard library only: only the
library reports where each word starts in the audio (espeakEVENT_WORD).  speech.py
(numpy, for training) and live_streams.py (CI, no numpy) both speak through it; the
voice lists are here so that both draw from the same ones.
"""
import ctypes
from array import array

# espeak-ng's voices and variants (voice+variant). Training draws from these; the
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
        try:
            self.lib = ctypes.CDLL("libespeak-ng.so.1")
        except OSError as e:
            raise SystemExit(f"espeak-ng's library is missing ({e}): apt-get install espeak-ng")
        self.rate = self.lib.espeak_Initialize(2, 0, None, 0)  # AUDIO_OUTPUT_SYNCHRONOUS
        if self.rate <= 0:
            raise RuntimeError("espeak-ng failed to initialize")
        self._pcm, self._words = array("h"), []
        self._cb = _CALLBACK(self._callback)  # kept alive: the library holds the pointer
        self.lib.espeak_SetSynthCallback(self._cb)
        self.lib.espeak_Synth.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint,
                                          ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                          ctypes.c_void_p, ctypes.c_void_p]

    def _callback(self, wav, n, events):
        if n > 0:
            self._pcm.frombytes(ctypes.string_at(wav, 2 * n))
        i = 0
        while events[i].type != _EVENT_END_LIST:
            e = events[i]
            if e.type == _EVENT_WORD:
                # text_position is 1-based in characters; audio_position in ms
                self._words.append((e.text_position - 1, e.text_position - 1 + e.length,
                                    e.audio_position / 1000.0))
            i += 1
        return 0

    def say(self, text, voice, rate=175, pitch=50, prange=50, gap=0):
        """(int16 samples as an array('h'), sample rate, [(first character, character
        after the word, start in s)])."""
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise RuntimeError(f"espeak-ng has no voice {voice}")
        for p, v in ((_RATE_PARAM, rate), (_PITCH_PARAM, pitch), (_RANGE_PARAM, prange),
                     (_WORDGAP_PARAM, gap), (_VOLUME_PARAM, 100)):
            self.lib.espeak_SetParameter(p, int(v), 0)
        self._pcm, self._words = array("h"), []
        data = text.encode()
        if self.lib.espeak_Synth(data, len(data) + 1, 0, 1, 0, 1, None, None) != 0:
            raise RuntimeError("espeak_Synth failed")
        self.lib.espeak_Synchronize()
        return self._pcm, self.rate, list(self._words)
