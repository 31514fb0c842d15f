"""Word error rate after the usual normalization: lower case, punctuation dropped
(apostrophes inside words kept), hyphens as spaces, numbers written as words
(digits and words score alike). Alignment is the Levenshtein one with equal costs,
as sclite's default scoring counts it (tests/test_wer.py compares with sclite).

  python3 wer.py REF.txt HYP.txt     (one utterance per line, same order)
"""
import re
import sys

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_words(n):
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + ("" if rest == 0 else " " + number_words(rest))
    for div, name in ((10 ** 9, "billion"), (10 ** 6, "million"), (1000, "thousand")):
        if n >= div:
            rest = n % div
            return (number_words(n // div) + " " + name +
                    ("" if rest == 0 else " " + number_words(rest)))
    return str(n)


def normalize(text):
    t = text.lower().replace("-", " ")
    t = re.sub(r"\d+", lambda m: " " + number_words(int(m.group())) + " "
               if len(m.group()) <= 12 else m.group(), t)
    t = re.sub(r"[^a-z0-9' ]+", " ", t)
    words = [w.strip("'") for w in t.split()]
    return [w for w in words if w]


def alignment(ref, hyp):
    """A minimum-edit alignment (equal costs): (substitutions, deletions, insertions,
    pairs), pairs being the (i, j) of equal words it keeps."""
    n, m = len(ref), len(hyp)
    cost = [[i + j if i == 0 or j == 0 else 0 for j in range(m + 1)] for i in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i][j] = min(cost[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]),
                             cost[i - 1][j] + 1, cost[i][j - 1] + 1)
    sub = dele = ins = 0
    pairs, i, j = [], n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and cost[i][j] == cost[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            if ref[i - 1] == hyp[j - 1]:
                pairs.append((i - 1, j - 1))
            else:
                sub += 1
            i, j = i - 1, j - 1
        elif i > 0 and cost[i][j] == cost[i - 1][j] + 1:
            dele += 1
            i -= 1
        else:
            ins += 1
            j -= 1
    return sub, dele, ins, pairs[::-1]


def score(refs, hyps):
    """Totals over utterances: dict with words, sub, del, ins, wer (percent)."""
    tot = {"words": 0, "sub": 0, "del": 0, "ins": 0, "utts": len(refs)}
    for r, h in zip(refs, hyps):
        rw, hw = normalize(r), normalize(h)
        s, d, i, _ = alignment(rw, hw)
        tot["words"] += len(rw)
        tot["sub"] += s
        tot["del"] += d
        tot["ins"] += i
    errs = tot["sub"] + tot["del"] + tot["ins"]
    tot["wer"] = 100.0 * errs / max(1, tot["words"])
    return tot


if __name__ == "__main__":
    refs = open(sys.argv[1]).read().splitlines()
    hyps = open(sys.argv[2]).read().splitlines()
    t = score(refs, hyps)
    print(f"WER {t['wer']:.2f}% ({t['sub']} sub, {t['del']} del, {t['ins']} ins, "
          f"{t['words']} words, {t['utts']} utterances)")
