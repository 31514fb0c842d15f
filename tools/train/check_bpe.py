"""bpe.py against the engine's tokenizer: every corpus sentence and every word prefix
(what a window cut after a word says), training and held out.

  WHISPERKV_BUILD=build python3 check_bpe.py"""
import os
import sys

import bpe
import corpus
import engine


def main():
    tok = bpe.BPE(os.path.join(engine.shared_dir(), "models", "openai-assets", "gpt2.tiktoken"))
    eng = engine.vocab_engine("work")
    train, held = corpus.split()
    n = bad = 0
    for s in train + held:
        texts = [" " + s] + [" " + s[:i] for i in range(1, len(s)) if s[i] == " " or
                             (not s[i].isalnum() and s[i - 1].isalnum())]
        for t in texts:
            n += 1
            if tok.tokens(t) != eng.tokens(t):
                bad += 1
                if bad <= 5:
                    print(f"differs: {t!r}: {tok.tokens(t)} vs {eng.tokens(t)}")
    print(f"{n} texts, {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
