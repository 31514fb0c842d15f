#!/usr/bin/env python3
"""Checks only a model that hears can fail: the trained model (models/whisperkv-synth-en.bin)
on speech that espeak-ng synthesizes here from sentences held out of its training.

  trained_model.py CLI MODEL TOOLS_TRAIN_DIR CHECK
  CHECK: wer    - 20 held-out sentences (half in a voice never used in training):
                  WER <= the model card's held-out figure + 5 points
         live   - a stream of sentences with pauses through --live --word-timestamps:
                  >= 80 % of the words commit, >= 80 % of those because two runs
                  agreed, not by force (the issue's target share)
         audioctx - the same 20 with --audio-ctx auto (each file's encoder on 512
                  frames, not 1500): WER <= AUDIOCTX_BOUND
         times  - word times: each utterance's first word starts and last word ends
                  within 1.0 s / 0.5 s of where the audio was placed

Needs espeak-ng (CI installs it); without it the check fails, saying so, rather than
passing unseen. Exit 0 pass, 1 fail.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import wave

# Held-out sentences (tools/train/corpus.py: never spoken in training) made of common
# words (the held-out part of corpus.split(1000)).
SENTENCES = [
    "There was too much for one person to do.",
    "He always bought his clothes at the same store.",
    "The teacher knew how to keep the class in line.",
    "She played all her money on the dark horse.",
    "He enjoyed the society of his friends.",
    "Running a restaurant is quite an operation.",
    "The phone was tied up for almost an hour.",
    "We never saw eye to eye on this question.",
    "It is certain that they were on the bus.",
    "They rolled their eyes at his words.",
    "I asked about their special today.",
    "Get the children ready for school!",
    "Modern music is just noise to me.",
    "I talked to him on the telephone.",
    "I see the lights of a town ahead.",
    "Details are yet to be worked out.",
    "The market was up at the finish.",
    "He was still some distance away.",
    "I have known him all his life.",
    "He had a change of heart.",
]
START_BOUND, END_BOUND = 1.0, 0.5
# The 20 sentences' WER with --audio-ctx auto at most (measured 2026-11-29: all 1500
# frames 31.6 %, 512 (auto) 30.9, 256 33.6, 192 37.5, 128 53.9): fewer frames than auto's
# minimum fail it.
AUDIOCTX_BOUND = 35.0
# A training voice and a voice + variant never used in training (tools/train/speech.py).
VOICES = ["en-us", "en-gb-x-gbcwmd+m6"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def speak(text, voice, path):
    try:
        subprocess.run(["espeak-ng", "-v", voice, "-w", path, text], check=True,
                       capture_output=True)
    except FileNotFoundError:
        fail("espeak-ng is not installed (apt-get install espeak-ng): this check needs it")


def read_wav(path):
    with wave.open(path, "rb") as w:
        return w.getframerate(), w.readframes(w.getnframes())


def trim(rate, pcm):
    """Cut leading/trailing near-silence (16-bit mono): the times the test places."""
    n = len(pcm) // 2
    vals = memoryview(pcm).cast("h")
    loud = [i for i in range(n) if abs(vals[i]) > 300]
    if not loud:
        return pcm
    return pcm[2 * loud[0]:2 * (loud[-1] + 1)]


def concat(parts, rate, path, gaps):
    """parts: PCM byte strings; gaps[i] seconds of silence before part i. Returns the
    (start, end) of each part in seconds."""
    out, spans, t = bytearray(), [], 0.0
    for pcm, gap in zip(parts, gaps):
        out += b"\0\0" * int(gap * rate)
        t = len(out) / 2 / rate
        out += pcm
        spans.append((t, len(out) / 2 / rate))
    out += b"\0\0" * int(1.0 * rate)
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(out))
    return spans


def transcribe(cli, model, wav, *extra):
    r = subprocess.run([cli, "-m", model, wav, *extra], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{cli} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def card_wer(model):
    """The held-out greedy f16/f32 WER the card states (models/README.md)."""
    card = os.path.join(os.path.dirname(model), "README.md")
    with open(card) as f:
        m = re.search(r"held-out WER[^0-9]*([0-9.]+) %", f.read())
    if not m:
        fail(f"{card} states no 'held-out WER ... N %' figure")
    return float(m.group(1))


def check_wer(cli, model, tools, tmp, *extra):
    sys.path.insert(0, tools)
    import wer  # tools/train/wer.py
    refs, hyps = [], []
    for i, s in enumerate(SENTENCES):
        p = os.path.join(tmp, f"u{i}.wav")
        speak(s, VOICES[i % 2], p)
        hyps.append(" ".join(transcribe(cli, model, p, "-t", "2", *extra).split()))
        refs.append(s)
        print(f"  ref: {s}\n  hyp: {hyps[-1]}")
    score = wer.score(refs, hyps)
    bound = AUDIOCTX_BOUND if extra else card_wer(model) + 5.0
    print(f"WER {score['wer']:.1f} % on {score['words']} words (bound {bound:.1f} %)")
    if score["wer"] > bound:
        fail(f"WER {score['wer']:.1f} % above {bound:.1f} % (" +
             (" ".join(extra) if extra else "the card's figure + 5 points") + ")")


def stream(tmp, n, path):
    parts, rate = [], None
    for i, s in enumerate(SENTENCES[:n]):
        p = os.path.join(tmp, f"s{i}.wav")
        speak(s, "en-us", p)
        rate, pcm = read_wav(p)
        parts.append(trim(rate, pcm))
    gaps = [0.6] + [0.8 + 0.1 * (i % 4) for i in range(1, n)]
    return concat(parts, rate, path, gaps)


def check_live(cli, model, tmp):
    wav = os.path.join(tmp, "stream.wav")
    stream(tmp, 10, wav)
    # --run-ms 500: the virtual clock advances 500 ms per run, not by each run's
    # measured compute time, so the check sees the same runs on any machine and under
    # any load (measured: 76 % by agreement on a busy AMD EPYC, 55 % under ASan, against
    # 90-100 % idle); --latency 25000: the check is about agreement, and the 10-s
    # stream's words then commit by it or at its end
    doc = json.loads(transcribe(cli, model, wav, "-t", "2", "--live", "--step", "1000",
                                "--latency", "25000", "--run-ms", "500", "--word-timestamps",
                                "-o", "json"))
    spoken = sum(len(s.split()) for s in SENTENCES[:10])
    # a final is a stretch of words one run committed, all agreed or all forced
    words = [seg.get("forced") for seg in doc["segments"] for _ in seg.get("words", [])]
    agreed = sum(1 for f in words if f is False)
    share = agreed / len(words) if words else 0.0
    print(f"{len(words)} words committed of {spoken} spoken, {agreed} by agreement "
          f"({100 * share:.0f} %); word delay {doc['live'].get('word_delay')}")
    if len(words) < 0.8 * spoken:
        fail(f"only {len(words)} words committed of the {spoken} in 10 sentences")
    if share < 0.8:
        fail(f"only {100 * share:.0f} % of the words committed by agreement (want >= 80 %)")


def check_times(cli, model, tmp):
    """One segment for each utterance (the timestamp tokens split them); the first
    word's start and the last word's end of each segment must fall within
    START_BOUND / END_BOUND of where the audio was placed (the model's errors measured
    on this stream: starts up to 0.81 s early after a pause, ends within 0.30 s;
    docs/trained-model.md has the held-out figures)."""
    wav = os.path.join(tmp, "times.wav")
    spans = stream(tmp, 4, wav)
    doc = json.loads(transcribe(cli, model, wav, "-t", "2", "--word-timestamps", "-o", "json"))
    per = [seg.get("words", []) for seg in doc["segments"]]
    if len(per) != len(spans):
        fail(f"{len(per)} segments for {len(spans)} utterances")
    bad = 0
    for (a, b), ws in zip(spans, per):
        if not ws:
            print(f"  no words for the utterance at {a:.2f}-{b:.2f} s")
            bad += 1
            continue
        e0, e1 = ws[0]["start"] - a, ws[-1]["end"] - b
        print(f"  utterance {a:.2f}-{b:.2f} s: {len(ws)} words {ws[0]['start']:.2f}-"
              f"{ws[-1]['end']:.2f} s (start {e0:+.2f}, end {e1:+.2f})")
        if abs(e0) > START_BOUND or abs(e1) > END_BOUND:
            bad += 1
    if bad:
        fail(f"{bad} of {len(spans)} utterances' word times off by more than "
             f"{START_BOUND}/{END_BOUND} s")


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    cli, model, tools, check = sys.argv[1:]
    if not os.path.exists(model):
        fail(f"{model} is missing")
    with tempfile.TemporaryDirectory() as tmp:
        {"wer": lambda: check_wer(cli, model, tools, tmp),
         "live": lambda: check_live(cli, model, tmp),
         "times": lambda: check_times(cli, model, tmp),
         "audioctx": lambda: check_wer(cli, model, tools, tmp, "--audio-ctx", "auto")}[check]()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
