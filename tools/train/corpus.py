"""English sentences of ordinary vocabulary: the example sentences of WordNet 3.0
(Debian package wordnet-base), kept when every word is used at least 3 times in the
collection. A sentence is held out when its CRC-32 says so; held-out sentences are
never spoken in training (they may share words, not sentences)."""
import collections
import re
import zlib

WORDNET = "/usr/share/wordnet/data.{}"
_OK = re.compile(r"^[A-Za-z][A-Za-z ,'.?!-]*$")


def words(s):
    return re.findall(r"[a-z']+", s.lower())


def _tidy(s):
    s = re.sub(r"\s+", " ", s.strip())
    s = s[0].upper() + s[1:]
    return s if s[-1] in ".?!" else s + "."


def sentences(min_count=3):
    raw = []
    for pos in ("noun", "verb", "adj", "adv"):
        with open(WORDNET.format(pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue
                raw += [s.strip() for s in re.findall(r'"([^"]+)"', line.split("|", 1)[1])]
    raw = [s for s in raw if _OK.match(s) and 4 <= len(s.split()) <= 20 and "--" not in s]
    raw = list(dict.fromkeys(raw))
    count = collections.Counter(w for s in raw for w in words(s))
    keep = [s for s in raw if all(count[w] >= min_count for w in words(s))]
    return list(dict.fromkeys(_tidy(s) for s in keep))


def is_heldout(s):
    return zlib.crc32(s.encode()) % 100 < 3


def narrow(all_, top):
    """Only the sentences whose every word is among the `top` most used words: a
    narrower first task (a vocabulary of about `top` words) for a short training run."""
    count = collections.Counter(w for s in all_ for w in words(s))
    keep = {w for w, _ in count.most_common(top)}
    return [s for s in all_ if all(w in keep for w in words(s))]


def split(top=0):
    all_ = sentences()
    if top:
        all_ = narrow(all_, top)
    train = [s for s in all_ if not is_heldout(s)]
    held = [s for s in all_ if is_heldout(s)]
    return train, held


if __name__ == "__main__":
    import sys
    tr, he = split(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    vt = {w for s in tr for w in words(s)}
    vh = {w for s in he for w in words(s)}
    print(f"train {len(tr)} sentences, {len(vt)} words; held out {len(he)} sentences, "
          f"{len(vh)} words, {len(vh - vt)} of them never in training; "
          f"{len(set(tr) & set(he))} sentences shared")
