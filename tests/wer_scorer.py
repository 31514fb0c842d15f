#!/usr/bin/env python3
"""tools/train/wer.py against NIST sclite (Debian sctk): on 300 random utterance
pairs (edits of random word strings, normalized first), the total errors and the
reference word count must equal sclite's; and normalization itself on fixed cases.

  wer_scorer.py TOOLS_TRAIN_DIR      (needs `sctk`; exit 0 pass, 1 fail)
"""
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
import wer  # noqa: E402

CASES = [
    ("He said: 21 dogs-and cats!", ["he", "said", "twenty", "one", "dogs", "and", "cats"]),
    ("Don't STOP.", ["don't", "stop"]),
    ("'Quoted' words, 1999", ["quoted", "words", "one", "thousand", "nine", "hundred",
                             "ninety", "nine"]),
    ("  spaces   ,  ", ["spaces"]),
]


def main():
    bad = 0
    for text, want in CASES:
        got = wer.normalize(text)
        if got != want:
            print(f"normalize({text!r}) = {got}, want {want}")
            bad += 1
    rng = random.Random(7)
    vocab = "the a cat dog sat on mat red blue ran far near house tree".split()
    refs, hyps = [], []
    for _ in range(300):
        r = [rng.choice(vocab) for _ in range(rng.randint(0, 12))]
        h = list(r)
        for _ in range(rng.randint(0, 5)):
            op = rng.random()
            if op < 0.33 and h:
                h[rng.randrange(len(h))] = rng.choice(vocab)
            elif op < 0.66 and h:
                del h[rng.randrange(len(h))]
            else:
                h.insert(rng.randint(0, len(h)), rng.choice(vocab))
        refs.append(" ".join(r))
        hyps.append(" ".join(h))
    ours = wer.score(refs, hyps)
    with tempfile.TemporaryDirectory() as d:
        for name, lines in (("ref.trn", refs), ("hyp.trn", hyps)):
            with open(os.path.join(d, name), "w") as f:
                for i, s in enumerate(lines):
                    f.write(f"{' '.join(wer.normalize(s))} (u_{i:04d})\n")
        try:
            out = subprocess.run(["sctk", "sclite", "-r", os.path.join(d, "ref.trn"), "trn",
                                  "-h", os.path.join(d, "hyp.trn"), "trn", "-i", "rm",
                                  "-o", "dtl", "stdout"], capture_output=True, text=True,
                                 check=True).stdout
        except FileNotFoundError:
            print("FAIL: sctk (sclite) is not installed: apt-get install sctk")
            return 1
    err = int(re.search(r"Percent Total Error\s*=\s*[0-9.]+%\s*\(\s*(\d+)\)", out).group(1))
    words = int(re.search(r"Ref\. words\s*=\s*\(\s*(\d+)\)", out).group(1))
    mine = ours["sub"] + ours["del"] + ours["ins"]
    print(f"sclite: {err} errors / {words} words; wer.py: {mine} / {ours['words']}")
    if err != mine or words != ours["words"]:
        bad += 1
    print("PASS" if not bad else "FAIL")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
