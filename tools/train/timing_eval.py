"""What a user of captions feels, measured through the CLI on a held-out recording
(recordings.py): word times against the synthesizer's word boundaries, and live word
commits (share committed by agreement, delay after the word's true end).

  python3 timing_eval.py words --model M --rec work/stream [--heads L.H,...]
  python3 timing_eval.py live  --model M --rec work/stream --step 1000
"""
import argparse
import json
import subprocess

import numpy as np

import eval as ev
import wer


def truth_words(rec):
    with open(rec + ".json") as f:
        t = json.load(f)
    out = []
    for u in t["utterances"]:
        for w in u["words"]:
            for piece in wer.normalize(w["word"]):
                out.append((piece, w["start"], w["end"]))
    return t, out


def hyp_words(doc):
    out = []
    for seg in doc["segments"]:
        for w in seg.get("words", []):
            for piece in wer.normalize(w["word"]):
                out.append((piece, w["start"], w["end"], seg.get("committed_at"),
                            seg.get("forced", w.get("forced"))))
    return out


def run(model, wav, extra):
    args = [ev.cli(), "-m", model, "-o", "json", "--word-timestamps", wav, *extra]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout)


def stats(x):
    x = np.sort(np.asarray(x))
    if len(x) == 0:
        return {"n": 0}
    return {"n": int(len(x)), "median": round(float(np.median(x)), 3),
            "p90": round(float(x[int(np.ceil(0.9 * len(x))) - 1]), 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["words", "live"])
    ap.add_argument("--model", required=True)
    ap.add_argument("--rec", required=True)
    ap.add_argument("--heads", default="")
    ap.add_argument("--step", type=int, default=1000)
    ap.add_argument("--latency", type=int, default=8000)
    ap.add_argument("--extra", default="")
    a = ap.parse_args()
    truth, tw = truth_words(a.rec)
    extra = a.extra.split() if a.extra else []
    if a.heads:
        extra += ["--alignment-heads", a.heads]
    if a.what == "live":
        extra += ["--live", "--step", str(a.step), "--latency", str(a.latency)]
    doc = run(a.model, a.rec + ".wav", extra)
    hw = hyp_words(doc)
    pairs = wer.alignment([w[0] for w in tw], [w[0] for w in hw])[3]
    refs = [u["text"] for u in truth["utterances"]]
    hyp_text = " ".join(s["text"] for s in doc["segments"])
    score = wer.score([" ".join(refs)], [hyp_text])
    res = {"wer": round(score["wer"], 2), "ref_words": len(tw), "hyp_words": len(hw),
           "matched": len(pairs)}
    if a.what == "words":
        res["start_error"] = stats([abs(hw[j][1] - tw[i][1]) for i, j in pairs])
        res["end_error"] = stats([abs(hw[j][2] - tw[i][2]) for i, j in pairs])
    else:
        live = doc.get("live", {})
        res["live"] = {k: live.get(k) for k in ("runs", "finals", "forced_finals",
                                                "word_delay", "final_delay")}
        fin = live.get("finals") or 0
        res["agreement_share"] = round(1 - (live.get("forced_finals") or 0) / fin, 3) if fin else None
        res["words_by_agreement"] = (round(sum(1 for w in hw if w[4] is False) / len(hw), 3)
                                     if hw else None)
        res["delay_after_true_end"] = stats([hw[j][3] - tw[i][2] for i, j in pairs
                                             if hw[j][3] is not None])
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
