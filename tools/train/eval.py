"""Held-out WER through the CLI (whisperkv-transcribe), one utterance per run, for
each (file type, compute type, decoding) asked; a markdown table on stdout and the
details in --json.

  python3 eval.py --model-dir work/models --pool work/pool-heldout.pkl \
      --files f16,q8_0 --compute f32,int8 --decode greedy,beam5 --n 200

The held-out set: sentences never spoken in training, each twice (--copies) in a training voice
and twice in a voice never used in training (pool.py --split heldout); --n takes the
first n utterances, so both halves stay equal.
"""
import argparse
import concurrent.futures as cf
import json
import os
import pickle
import subprocess
import sys
import wave

import engine
import wer


def write_wavs(utts, d):
    os.makedirs(d, exist_ok=True)
    paths = []
    for i, u in enumerate(utts):
        p = os.path.join(d, f"{i:04d}.wav")
        if not os.path.exists(p):
            with wave.open(p, "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(16000)
                w.writeframes(u["pcm"].tobytes())
        paths.append(p)
    return paths


def cli():
    return os.path.join(engine.build_dir(), "cli", "whisperkv-transcribe")


def transcribe(model, wav, compute, decode, extra=()):
    args = [cli(), "-m", model, "-t", "1", "--compute-type", compute, wav, *extra]
    if decode.startswith("beam"):
        args += ["--beam-size", decode[4:]]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return " ".join(r.stdout.split())


def run_config(model, wavs, compute, decode, jobs):
    with cf.ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(lambda w: transcribe(model, w, compute, decode), wavs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True, help="holds synth-<ftype>.bin files")
    ap.add_argument("--pool", required=True)
    ap.add_argument("--files", default="f16")
    ap.add_argument("--compute", default="f32")
    ap.add_argument("--decode", default="greedy")
    ap.add_argument("--n", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    with open(a.pool, "rb") as f:
        utts = pickle.load(f)
    if a.n:
        utts = utts[:a.n]
    wavs = write_wavs(utts, os.path.join(os.path.dirname(a.pool), "heldout-wav"))
    refs = [u["text"] for u in utts]
    seen = [i for i, u in enumerate(utts) if not u["heldout_voice"]]
    unseen = [i for i, u in enumerate(utts) if u["heldout_voice"]]
    details = []
    print("| file | compute | decoding | WER all | training voices | held-out voices |")
    print("|---|---|---|---|---|---|")
    for ft in a.files.split(","):
        model = os.path.join(a.model_dir, f"synth-{ft}.bin")
        for ct in a.compute.split(","):
            for dec in a.decode.split(","):
                hyps = run_config(model, wavs, ct, dec, a.jobs)
                s_all = wer.score(refs, hyps)
                s_seen = wer.score([refs[i] for i in seen], [hyps[i] for i in seen])
                s_un = wer.score([refs[i] for i in unseen], [hyps[i] for i in unseen])
                print(f"| {ft} | {ct} | {dec} | {s_all['wer']:.2f} | {s_seen['wer']:.2f} | "
                      f"{s_un['wer']:.2f} |", flush=True)
                details.append({"file": ft, "compute": ct, "decode": dec, "all": s_all,
                                "seen": s_seen, "unseen": s_un, "hyps": hyps})
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"refs": refs, "results": details}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
