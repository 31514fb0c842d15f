"""The reference's English tokenizer in plain Python, for machines without the engine
(a GPU machine that trains): the GPT-2 pre-tokenizer pattern, then byte-level BPE by
rank, ranks read from openai/whisper's gpt2.tiktoken (rank = token id). ASCII text
only (the training corpus is ASCII), where the pattern's \\p{L} and \\p{N} are the
ASCII letters and digits. check_bpe.py compares it with the engine's tokenizer."""
import base64
import re

_PAT = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


class BPE:
    def __init__(self, tiktoken_path):
        self.rank = {}
        with open(tiktoken_path, "rb") as f:
            for line in f:
                if line.strip():
                    tok, r = line.split()
                    self.rank[base64.b64decode(tok)] = int(r)
        self._cache = {}

    def _piece(self, b):
        if b in self.rank:
            return [self.rank[b]]
        parts = [b[i:i + 1] for i in range(len(b))]
        while len(parts) > 1:
            best, at = None, -1
            for i in range(len(parts) - 1):
                r = self.rank.get(parts[i] + parts[i + 1])
                if r is not None and (best is None or r < best):
                    best, at = r, i
            if best is None:
                break
            parts[at:at + 2] = [parts[at] + parts[at + 1]]
        return [self.rank[p] for p in parts]

    def tokens(self, text):
        if not text.isascii():
            raise ValueError(f"bpe.py tokenizes ASCII text only: {text!r}")
        out = []
        for m in _PAT.finditer(text):
            piece = m.group(0)
            ids = self._cache.get(piece)
            if ids is None:
                ids = self._cache[piece] = self._piece(piece.encode())
            out += ids
        return out


def text_vocabulary(sentences, tok):
    """The ids of every sentence's tokens and of every word prefix's (what a window
    cut after a word says): the output rows a model trained on them has."""
    ids = set()
    for s in sentences:
        ids.update(tok.tokens(" " + s))
        for i in range(1, len(s)):
            if s[i] == " " or (not s[i].isalnum() and s[i - 1].isalnum()):
                ids.update(tok.tokens(" " + s[:i]))
    return ids
