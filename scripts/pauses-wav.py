#!/usr/bin/env python3
"""Writes the recording with long pauses that docs/element.md's VAD figures use:
jfk.wav, 15 s of zeros, LDC93S1.wav, 15 s of zeros, jfk.wav (16 kHz mono s16, 55 s).

    scripts/pauses-wav.py [SHARED_DIR] [OUT]   (defaults: ../shared, pauses.wav)
"""
import sys
import wave

shared = sys.argv[1] if len(sys.argv) > 1 else "../shared"
out = sys.argv[2] if len(sys.argv) > 2 else "pauses.wav"


def frames(rel):
    with wave.open(f"{shared}/speech/{rel}") as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (16000, 1, 2):
            sys.exit(f"{rel}: not 16 kHz mono s16")
        return w.readframes(w.getnframes())


jfk, ldc, pause = frames("jfk/jfk.wav"), frames("ldc93s1/LDC93S1.wav"), bytes(2 * 16000 * 15)
with wave.open(out, "wb") as w:
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(16000)
    w.writeframes(jfk + pause + ldc + pause + jfk)
