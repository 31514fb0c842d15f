"""Training windows as the reference's training data looks: 30 s of audio (or less,
then padded with 0.0 as the engine pads the end of a file or a live stream), several
utterances with pauses, noise, and the decoder sequence with timestamp tokens at the
utterance boundaries (0.02-s grid).

Token ids are the English-only ones (openai/whisper's tokenizer.py with n_vocab
51864: eot 50256, sot 50257, timestamps from 50363)."""
import numpy as np
import torch

RATE = 16000
N_SAMPLES = 480000
N_FRAMES = 3000
EOT, SOT, PREV, NOSPEECH, NOTS, TS0 = 50256, 50257, 50360, 50361, 50362, 50363
N_TS = 1501
MAX_CONTENT_TOKENS = 200
CHARS = "abcdefghijklmnopqrstuvwxyz' "


def ts_token(t):
    return TS0 + int(min(N_TS - 1, max(0, round(t / 0.02))))


def ctc_text(text):
    out = []
    for c in text.lower():
        if c in CHARS:
            out.append(CHARS.index(c) + 1)  # 0 is the CTC blank
        elif c == "-":
            out.append(CHARS.index(" ") + 1)
    return out


def _lowpass(x, a):
    # y[n] = a*y[n-1] + (1-a)*x[n]: a convolution with the kernel truncated at 1e-3
    k = (1 - a) * a ** np.arange(int(np.log(1e-3) / np.log(a)) + 1)
    return np.convolve(x, k.astype(np.float32), mode="full")[:len(x)].astype(np.float32)


def easy(u):
    """A plain utterance for the start of a curriculum: espeak-ng's formant voices
    (no klatt variant, no flite), ordinary rate, not quiet."""
    s = u["spec"]
    return (s["engine"] == "espeak" and "klatt" not in s["voice"] and
            140 <= s["rate"] <= 210 and s["gain"] >= 0.25)


def token_spans(u, s, e, toks):
    """Where each token's audio is, in encoder frames (0.02 s): its word's span when
    espeak-ng gave word times (tokens of word k = prefix k minus prefix k-1), else the
    utterance's. For the attention guidance (training only)."""
    whole = (int(s / 0.02), max(int(s / 0.02) + 1, int(e / 0.02)))
    out = [whole] * len(toks)
    if not u["words"]:
        return out
    i, prev = 0, []
    for k, (_, _, ws, we) in enumerate(u["words"]):
        p = u["prefix"][k]
        if p[:len(prev)] != prev or len(p) > len(toks) or list(toks[:len(p)]) != p:
            return out
        f0 = int((s + ws) / 0.02)
        span = (f0, max(f0 + 1, int((s + we) / 0.02)))
        for j in range(len(prev), len(p)):
            out[j] = span
        prev = p
        i = len(p)
    for j in range(i, len(toks)):  # the final punctuation: the last word's span
        out[j] = out[i - 1] if i else whole
    return out


def recipe(rng, utts, vocab=None, prev_pool=None, file_end=0.0, length=30.0):
    """One window of `length` seconds as a recipe, without its samples: runs (dst
    sample, utterance, samples) of utterances (each with "length" in samples), the
    noise (kind 0 none / 1 white / 2 low-passed, a, amplitude) and tones ([4, 4]:
    frequency, first sample, end sample, amplitude), and the token sequence, labels,
    CTC characters and attention spans. WindowMaker.make makes the samples on the
    CPU, train_gpu.py on a GPU. The previous-text prompt comes from `prev_pool` (token
    lists) or the utterances; None when a token of the sequence is not in `vocab`.
    With probability `file_end` a window that is not full ends as a file ends: after
    its last whole utterance and a short pause, not inside an utterance (always
    cutting there taught a model to drop a file's last word)."""
    full = rng.random() < 0.6
    content = length if full else float(rng.uniform(min(1.5, length / 2), length - 1.0))
    n = int(content * RATE)
    timestamps = rng.random() < 0.8
    segs, ctc, runs = [], [], []
    speech = rng.random() >= 0.06
    if speech:
        t = float(rng.uniform(0.0, 1.0))
        n_tok = 0
        while True:
            u = utts[rng.integers(len(utts))]
            dur = u["length"] / RATE
            if n_tok + len(u["tokens"]) + 2 > MAX_CONTENT_TOKENS:
                break
            a = int(t * RATE)
            if t + dur <= content:
                runs.append((a, u, u["length"]))
                segs.append((t, t + dur, u["tokens"], False, u))
                last_end = t + dur
                ctc += ctc_text(" " + u["text"])
                n_tok += len(u["tokens"]) + 2
            else:
                left = content - t
                if not full and segs and rng.random() < file_end:
                    n = min(n, int((last_end + float(rng.uniform(0.02, 0.6))) * RATE))
                elif u["words"] and left > 0.3 and rng.random() < 0.8:
                    runs.append((a, u, min(n - a, u["length"])))
                    k = sum(1 for w in u["words"] if w[3] <= left)
                    if k:
                        ctc += ctc_text(" " + u["text"][:u["words"][k - 1][1]])
                    if full and timestamps:
                        segs.append((t, None, None, True, u))
                    elif k:
                        segs.append((t, t + u["words"][k - 1][3], u["prefix"][k - 1], False, u))
                break
            pause = float(rng.uniform(0.15, 1.2)) if rng.random() < 0.8 else float(
                rng.uniform(1.2, 4.0))
            t += dur + pause
            if not full and rng.random() < 0.15:
                break
    kind = rng.random()
    noise = (0 if kind < 0.1 else 2 if kind < 0.5 else 1, float(rng.uniform(0.9, 0.99)),
             float(10 ** rng.uniform(-4.0, -1.8)))
    tones = np.zeros((4, 4), np.float32)  # frequency, first sample, end sample, amplitude
    if not speech and rng.random() < 0.5:
        for j in range(int(rng.integers(1, 5))):
            seg = rng.integers(0, n, 2)
            tones[j] = (rng.uniform(80, 3000), seg.min(), seg.max(), rng.uniform(0.02, 0.3))

    seq, labels, spans = [], [], []
    if rng.random() < 0.5:
        prev = []
        while len(prev) < 64:
            prev += (prev_pool[rng.integers(len(prev_pool))] if prev_pool else
                     utts[rng.integers(len(utts))]["tokens"])
        prev = prev[-int(rng.integers(4, 65)):]
        seq += [PREV] + prev
        labels += [-100] * (1 + len(prev))
    seq.append(SOT)
    if not speech:
        seq += [TS0 if timestamps else NOTS]
        labels += [NOSPEECH, EOT]
    else:
        body, bspans = [], []
        for (s, e, toks, cut, u) in segs:
            if cut:
                body.append(ts_token(s))
                bspans.append(None)
                continue
            if timestamps:
                body.append(ts_token(s))
                bspans.append(None)
            body += list(toks)
            bspans += token_spans(u, s, e, toks)
            if timestamps:
                body.append(ts_token(e))
                bspans.append(None)
        if not timestamps:
            body = [NOTS] + body
            bspans = [None] + bspans
        seq += body
        labels += body + [EOT]
        spans = [None] * (len(labels) - len(body) - 1) + bspans + [None]
    if vocab is not None and any(x not in vocab for x in seq):
        return None  # an input token without a trained row: make another window
    return n, runs, noise, tones, seq, labels, ctc, spans or [None] * len(labels)


class WindowMaker:
    def __init__(self, utts, sentences_tokens, seed):
        for u in utts:
            u.setdefault("length", len(u["pcm"]))
        self.all_utts = utts
        self.utts = utts
        self.prev_pool = sentences_tokens
        self.rng = np.random.default_rng(seed)
        self.quiet = False

    def set_easy(self, on):
        """Easy windows: plain voices only and little noise (a curriculum's start)."""
        if on and self.utts is self.all_utts:
            self.utts = [u for u in self.all_utts if easy(u)]
        elif not on:
            self.utts = self.all_utts
        self.quiet = on

    def make(self, length=30.0):
        """One window of `length` seconds (30 for the file; shorter ones are a
        training curriculum: the network is the same, the encoder sees fewer frames):
        recipe() with its samples made here."""
        r = recipe(self.rng, self.utts, prev_pool=self.prev_pool, length=length)
        n, runs, (kind, a, amp), tones, seq, labels, ctc, spans = r
        audio = np.zeros(int(length * RATE), np.float32)
        for dst, u, m in runs:
            audio[dst:dst + m] += u["pcm"][:m] / 32768.0
        if kind:
            x = self.rng.standard_normal(n).astype(np.float32)
            if kind == 2:  # low-passed white noise: hum and rumble rather than hiss
                x = _lowpass(x, a)
                x /= max(1e-6, float(np.std(x)))
            audio[:n] += x * amp * (0.1 if self.quiet else 1.0)
        t = np.arange(n) / RATE
        for f, s0, s1, ta in tones:
            if ta > 0:
                s0, s1 = int(s0), int(s1)
                audio[s0:s1] += (np.sin(2 * np.pi * f * t[s0:s1]) * ta).astype(np.float32)
        audio[n:] = 0
        return audio, n, seq, labels, ctc, spans


class Mel:
    """The reference's log-mel for a batch of 30-s windows (torch, so it batches)."""

    def __init__(self, filters):
        self.filters = torch.as_tensor(filters, dtype=torch.float32)  # [80, 201]
        self.window = torch.hann_window(400, periodic=True)

    def __call__(self, audio, content_samples):
        x = torch.as_tensor(audio)
        n_frames = x.shape[1] // 160
        x = torch.cat([x[:, 1:201].flip(1), x, torch.zeros(x.shape[0], 200)], dim=1)
        spec = torch.stft(x, 400, 160, window=self.window, center=False,
                          return_complex=True)[..., :n_frames]
        mel = self.filters @ spec.abs() ** 2
        logm = torch.clamp(mel, min=1e-10).log10()
        out = torch.zeros_like(logm)
        for i, ns in enumerate(content_samples):
            nf = min(n_frames, (ns + 159) // 160)
            m = logm[i, :, :nf]
            m = torch.maximum(m, m.max() - 8.0)
            out[i, :, :nf] = (m + 4.0) / 4.0
        return out


def collate(items, mel, compact, other):
    audio = np.stack([it[0] for it in items])
    ns = [it[1] for it in items]
    mels = mel(audio, ns)
    T = max(len(it[2]) for it in items)
    tok = torch.full((len(items), T), EOT, dtype=torch.long)
    lab = torch.full((len(items), T), -100, dtype=torch.long)
    for i, it in enumerate(items):
        tok[i, :len(it[2])] = torch.tensor(it[2])
        lab[i, :len(it[3])] = torch.tensor(it[3])
    valid = lab >= 0
    lab_c = torch.full_like(lab, -100)
    c = compact[lab.clamp(min=0)]
    lab_c[valid] = torch.where(c[valid] >= 0, c[valid], torch.full_like(c[valid], other))
    ctc_t = [torch.tensor(it[4], dtype=torch.long) for it in items]
    ctc_len = torch.tensor([len(t) for t in ctc_t])
    frames = torch.tensor([min(mels.shape[-1] // 2, (n + 319) // 320) for n in ns])
    span = torch.full((len(items), T, 2), -1, dtype=torch.long)
    n_enc = mels.shape[-1] // 2
    for i, it in enumerate(items):
        for j, sp in enumerate(it[5]):
            if sp is not None and sp[0] < n_enc:
                span[i, j, 0], span[i, j, 1] = sp[0], min(sp[1], n_enc)
    return (mels, tok, lab_c, torch.cat(ctc_t) if ctc_t else torch.zeros(0), ctc_len,
            frames, span)
