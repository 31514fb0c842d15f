"""Held-out live streams with the synthesizers' word boundaries, in the standard library
only (CI has espeak-ng, GStreamer and python3, not numpy): live_eval.py's input.

A stream: held-out sentences (corpus.split, or a list given) in turn, each in a voice
drawn by the stream's seed (speech.py's voices: training and held-out espeak-ng voices
and flite voices), pauses of 0.2-2 s between them, white noise over all of it; 16 kHz
mono WAV plus a truth JSON ({"seconds", "utterances": [{text, start, end, voice,
engine, words: [{word, start, end}]}]}: every word of the text, start and end null
where the synthesizer's times are not to be had).  The same seed gives the same files.

Word times.  espeak-ng (its C library through ctypes: espeak_lib.py, as speech.py): each word starts
where espeakEVENT_WORD says and ends where the next starts, the last where the audio
does (trimmed).  flite prints no word times, but prints its segments with their end
times (-psdur); each word's segments are counted by asking flite for the word's phones
alone (-ps), and the utterance's segments, pauses left out, are cut into words by those
counts.  An utterance whose counts do not add up (flite's post-lexical rules changed
one) keeps its text for WER and no word times.
"""
import json
import os
import random
import subprocess
import tempfile
import wave
from array import array

import espeak_lib

RATE = 16000
HERE = os.path.dirname(os.path.abspath(__file__))


def random_spec(rng, heldout, flite=True):
    """speech.random_spec's draw on a random.Random: a held-out voice (espeak-ng's
    HELDOUT_ESPEAK, flite's HELDOUT_FLITE) or a training one (flite a fifth of them)."""
    v = espeak_lib  # the voice lists speech.py trains with
    if heldout:
        pool = [("espeak", a + b) for a, b in v.HELDOUT_ESPEAK]
        pool += [("flite", x) for x in v.HELDOUT_FLITE] if flite else []
        engine, voice = pool[rng.randrange(len(pool))]
    elif flite and rng.random() < 0.2:
        engine, voice = "flite", v.FLITE_VOICES[rng.randrange(len(v.FLITE_VOICES))]
    else:
        engine = "espeak"
        voice = (v.ESPEAK_VOICES[rng.randrange(len(v.ESPEAK_VOICES))] +
                 v.ESPEAK_VARIANTS[rng.randrange(len(v.ESPEAK_VARIANTS))])
    return {"engine": engine, "voice": voice, "rate": rng.randint(130, 229),
            "pitch": rng.randint(25, 79), "range": rng.randint(20, 89), "gap": rng.randint(0, 2),
            "stretch": rng.uniform(0.8, 1.25), "gain": 10 ** rng.uniform(-1.0, 0.0)}


def read_wav(path):
    with wave.open(path, "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise SystemExit(f"{path}: not 16-bit mono")
        pcm = array("h")
        pcm.frombytes(w.readframes(w.getnframes()))
        return pcm, w.getframerate()


def write_wav(path, pcm, rate=RATE):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


def to_16k(pcm, rate, tmp):
    """GStreamer's audioresample (what the CLI reads files with): the standard library
    has no resampler of speech quality."""
    if rate == RATE:
        return pcm
    a, b = os.path.join(tmp, "in.wav"), os.path.join(tmp, "out.wav")
    write_wav(a, pcm, rate)
    cmd = ["gst-launch-1.0", "-q", "filesrc", f"location={a}", "!", "wavparse", "!",
           "audioconvert", "!", "audioresample", "!",
           f"audio/x-raw,format=S16LE,rate={RATE},channels=1", "!", "wavenc", "!",
           "filesink", f"location={b}"]
    try:
        subprocess.run(cmd, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"resampling with gst-launch-1.0 failed: {e}")
    return read_wav(b)[0]


def _flite(args):
    try:
        return subprocess.run(["flite", *args], check=True, capture_output=True, text=True).stdout
    except OSError:
        raise SystemExit("flite is missing (apt-get install flite), or use --no-flite")


def flite_say(text, spec, tmp, phones_cache):
    """(pcm, rate, [(char0, char1, start_s, end_s)] or [])."""
    out = os.path.join(tmp, "f.wav")
    segs = _flite(["-voice", spec["voice"], "--setf", f"duration_stretch={spec['stretch']:.3f}",
                   "-psdur", "-t", text, "-o", out]).split()
    pcm, rate = read_wav(out)
    timed, t = [], 0.0
    for s in segs:  # "phone:end_time"
        name, _, end = s.rpartition(":")
        if name != "pau":
            timed.append((t, float(end)))
        t = float(end)
    spans, pos = [], 0
    for w in text.split():
        c0 = text.index(w, pos)
        pos = c0 + len(w)
        key = (spec["voice"], w.strip(".,?!;:").lower())
        if key not in phones_cache:
            phones_cache[key] = len([p for p in _flite(["-voice", spec["voice"], "-ps", "-t",
                                                        key[1], "-o", "none"]).split()
                                     if p != "pau"])
        spans.append((c0, pos, phones_cache[key]))
    if sum(n for _, _, n in spans) != len(timed) or any(n == 0 for _, _, n in spans):
        return pcm, rate, []
    words, k = [], 0
    for c0, c1, n in spans:
        words.append((c0, c1, timed[k][0], timed[k + n - 1][1]))
        k += n
    return pcm, rate, words


def espeak_words(text, events, end):
    """[(char0, char1, start, end)] for every word of the text: a word starts at its
    first espeakEVENT_WORD and ends where the next word with an event starts (the last
    where the audio does), as speech.utterance times them.  espeak-ng speaks some short
    words with their neighbour and gives them no event ("at a fast": "at", "fast"):
    those get no time (None), and the word before ends after them."""
    spans, pos = [], 0
    for w in text.split():
        c0 = text.index(w, pos)
        pos = c0 + len(w)
        hits = [t for p, q, t in events if q > p and c0 <= p < pos]
        spans.append([c0, pos, min(hits) if hits else None, None])
    nxt = end
    for sp in reversed(spans):
        if sp[2] is not None:
            sp[3], nxt = nxt, sp[2]
    return [tuple(sp) for sp in spans]


def trim(pcm, thresh=328, pad=RATE // 50):
    """Leading and trailing silence cut (speech.trim's 0.01 and 20 ms): (pcm, cut)."""
    loud = [i for i in range(len(pcm)) if abs(pcm[i]) > thresh]
    if not loud:
        return pcm[:0], 0
    a, b = max(0, loud[0] - pad), min(len(pcm), loud[-1] + pad)
    return pcm[a:b], a


def utterance(esp, text, spec, tmp, phones_cache):
    """16-kHz int16 PCM (trimmed, gain applied) and [(char0, char1, start, end)] from
    its first sample, [] when the word times are not to be had."""
    if spec["engine"] == "espeak":
        pcm, rate, events = esp.say(text, spec["voice"], spec["rate"], spec["pitch"],
                                    spec["range"], spec["gap"])
    else:
        pcm, rate, timed = flite_say(text, spec, tmp, phones_cache)
    pcm = to_16k(pcm, rate, tmp)
    pcm, cut = trim(pcm)
    t0, dur = cut / RATE, len(pcm) / RATE
    if spec["engine"] == "espeak":
        timed = espeak_words(text, events, dur + t0)
    words = []
    for c0, c1, s, e in timed:
        if s is not None:
            s = min(max(0.0, s - t0), dur)
            e = min(max(e - t0, s), dur)
        words.append((c0, c1, s, e))
    g = spec["gain"]
    return array("h", (int(x * g) for x in pcm)), words


def plain_spec(voice):
    """espeak-ng's own defaults in one voice, at full level (tests/trained_model.py's)."""
    return {"engine": "espeak", "voice": voice, "rate": 175, "pitch": 50, "range": 50,
            "gap": 0, "stretch": 1.0, "gain": 1.0}


def build(sentences, seconds, seed, flite=True, noise_db=None, voice=None):
    """Draws utterances until `seconds` of audio: (pcm int16 array, truth dict); every
    utterance in `voice` (plain_spec) when given."""
    rng = random.Random(seed)
    order = list(range(len(sentences)))
    rng.shuffle(order)
    if noise_db is None:
        noise_db = rng.uniform(-70.0, -50.0)
    esp, cache = espeak_lib.Espeak(), {}
    out = array("h", bytes(2 * int(rng.uniform(0.5, 1.0) * RATE)))
    utts = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(10 ** 6):
            text = sentences[order[k % len(order)]]
            spec = random_spec(rng, heldout=rng.random() < 0.5, flite=flite)
            if voice:
                spec = plain_spec(voice)
            pcm, words = utterance(esp, text, spec, tmp, cache)
            t = len(out) / RATE
            out.extend(pcm)
            utts.append({"text": text, "start": round(t, 3), "end": round(len(out) / RATE, 3),
                         "voice": spec["voice"], "engine": spec["engine"],
                         "words": [{"word": text[c0:c1],
                                    "start": None if s is None else round(t + s, 3),
                                    "end": None if s is None else round(t + e, 3)}
                                   for c0, c1, s, e in words]})
            out.extend(bytes(2 * int(rng.uniform(0.2, 2.0) * RATE)))
            if len(out) >= seconds * RATE:
                break
    sigma = 32768 * 10 ** (noise_db / 20)
    g = random.Random(seed * 7919 + 1)
    noisy = array("h", (max(-32768, min(32767, x + round(g.gauss(0.0, sigma)))) for x in out))
    truth = {"seconds": len(noisy) / RATE, "seed": seed, "noise_dbfs": round(noise_db, 1),
             "utterances": utts}
    return noisy, truth


def make(path, sentences, seconds, seed, flite=True, voice=None):
    """path.wav and path.json, made once (kept when both exist: same seed, same files)."""
    if os.path.exists(path + ".wav") and os.path.exists(path + ".json"):
        with open(path + ".json") as f:
            return json.load(f)
    pcm, truth = build(sentences, seconds, seed, flite, voice=voice)
    write_wav(path + ".wav.tmp", pcm)
    with open(path + ".json.tmp", "w") as f:
        json.dump(truth, f, indent=1)
    os.replace(path + ".wav.tmp", path + ".wav")
    os.replace(path + ".json.tmp", path + ".json")
    return truth


def describe(truth):
    u = truth["utterances"]
    timed = sum(1 for x in u for w in x["words"] if w["start"] is not None)
    return (f"{truth['seconds']:.1f} s, {len(u)} utterances ({sum(x['engine'] == 'flite' for x in u)}"
            f" flite), {sum(len(x['text'].split()) for x in u)} words, {timed} of them with "
            f"times, noise {truth['noise_dbfs']} dBFS")


if __name__ == "__main__":  # live_streams.py OUT [SECONDS [SEED]]: one stream of corpus.split's held-out sentences
    import sys
    import corpus
    print(describe(make(sys.argv[1], corpus.split()[1], float(sys.argv[2]) if len(sys.argv) > 2 else 120,
                        int(sys.argv[3]) if len(sys.argv) > 3 else 1)))
