"""Live transcription against offline on the same held-out audio, through the CLI: one
row per (encoder setting, commit policy, step, clock), over every stream.

  cd tools/train && python3 live_eval.py --model ../../models/whisperkv-synth-en.bin \\
      --policy agreement= --encoder full= --steps 500,1000,2000 --clocks virtual,fixed \\
      --out work/live-eval/agreement
  (later: --policy alignatt=--commit-policy alignatt --encoder auto=--audio-ctx auto)

Streams (live_streams.py, made once in --work, the same for the same seed): --streams
of --seconds each, held-out sentences (corpus.split) in training and held-out espeak-ng
and flite voices, pauses of 0.2-2 s, noise; the truth is the synthesizers' word times.

Per stream, one offline run (`--word-timestamps -o json`, the encoder's arguments and
--args) and one live run per combination (`--live --step S`, plus `--run-ms N` on the
fixed clock).  Runs on the virtual clock measure their own compute time, so they run one
at a time after everything else; offline and fixed-clock runs go --jobs at a time.

Metrics (normalized words, wer.py; aligned with the truth by wer.alignment):
  live WER, offline WER   over all streams' text
  kept                    of the truth words the offline run gets right, the share the
                          live run gets right too (target >= 98 %)
  zero                    live words with end <= start (a zero-duration word buffer)
  delay                   committed_at - the true word end, over the live words that
                          match a truth word with a time: median, p90, worst
  forced                  share of the live words committed by force (latency bound,
                          the 30-s cap, the end), not by the policy
  runs/s, busy ms/s       the stream's runs and their compute (the CLI's live.busy_ms:
                          measured on the virtual clock, runs x run_ms on the fixed one)
                          per second of audio; wall s/s the CLI's whole wall time per
                          second of audio (model load included)

--leads S,...: each stream is also run behind S s of silence (digital zeros, the truth's
times moved): the same audio cut into other 30-s windows offline and other runs live.
Every row is repeated per lead (the table's "lead" column), and a second table gives
each lead's offline run against lead 0's: how far the model agrees with itself when
nothing but the cuts changes, the yardstick of "kept" and of live WER - offline WER.

--check exits 1 when a row misses a threshold given (--min-kept, --max-median-delay,
--max-p90-delay, --max-live-wer, --max-forced, --max-zero).
"""
import argparse
import concurrent.futures as cf
import itertools
import json
import math
import os
import shlex
import subprocess
import sys
import time
import wave
import zlib

import live_streams
import wer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_cli():
    build = os.environ.get("WHISPERKV_BUILD", os.path.join(ROOT, "build"))
    return os.path.join(build, "cli", "whisperkv-transcribe")


def named(spec):
    """'name=ARGS' -> (name, [args]); ARGS split as a shell would."""
    name, eq, args = spec.partition("=")
    if not eq or not name:
        raise argparse.ArgumentTypeError(f"{spec!r}: want NAME=ARGS (ARGS may be empty)")
    return name, shlex.split(args)


def truth_words(truth):
    """[(normalized word, true end or None)] of a stream, in order."""
    out = []
    for u in truth["utterances"]:
        pieces = [(p, w["end"]) for w in u["words"] for p in wer.normalize(w["word"])]
        if [p for p, _ in pieces] != wer.normalize(u["text"]):
            pieces = [(p, None) for p in wer.normalize(u["text"])]
        out += pieces
    return out


def hyp_words(doc):
    """[(normalized word, start, end, committed_at, forced)] of a CLI JSON document; a
    segment without words (a run without --word-timestamps) gives its text's words,
    with no times but its commit time."""
    out = []
    for seg in doc["segments"]:
        words = seg.get("words")
        if words is None:
            words = [{"word": seg["text"], "start": None, "end": None}]
        for w in words:
            for p in wer.normalize(w["word"]):
                out.append((p, w["start"], w["end"], w.get("committed_at", seg.get("committed_at")),
                            seg.get("forced")))
    return out


def right(ref, hyp):
    """{truth index: hyp index} of the words the hypothesis gets right."""
    return dict(wer.alignment([r[0] for r in ref], [h[0] for h in hyp])[3])


def score_stream(truth, offline, live):
    """The raw counts of one stream (added up over streams by `summarize`)."""
    tw, ow, lw = truth_words(truth), hyp_words(offline), hyp_words(live)
    off_right, live_right = right(tw, ow), right(tw, lw)
    ref = " ".join(u["text"] for u in truth["utterances"])
    stats = live.get("live", {})
    return {
        "seconds": truth["seconds"], "truth_words": len(tw), "live_words": len(lw),
        "offline_right": len(off_right), "kept": len(set(off_right) & set(live_right)),
        "zero": sum(1 for h in lw if h[1] is not None and h[2] <= h[1]),
        "forced": sum(1 for h in lw if h[4]),
        "delays": [round(lw[j][3] - tw[i][1], 3) for i, j in live_right.items()
                   if tw[i][1] is not None and lw[j][3] is not None],
        "ref": ref, "offline_text": " ".join(s["text"] for s in offline["segments"]),
        "live_text": " ".join(s["text"] for s in live["segments"]),
        "runs": stats.get("runs", 0), "busy_ms": stats.get("busy_ms", 0.0),
    }


def quantiles(x):
    """{median, p90, worst} as the CLI's live JSON computes them (output.c)."""
    x = sorted(x)
    n = len(x)
    if not n:
        return {"median": None, "p90": None, "worst": None}
    med = x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2
    return {"median": round(med, 3), "p90": x[math.ceil(0.9 * n) - 1], "worst": x[-1]}


def summarize(raws, wall_s=0.0):
    tot = {k: sum(r[k] for r in raws) for k in ("seconds", "truth_words", "live_words",
                                                "offline_right", "kept", "zero", "forced",
                                                "runs", "busy_ms")}
    refs = [r["ref"] for r in raws]
    sec = tot["seconds"] or 1.0
    share = (lambda n, d: round(n / d, 4) if d else None)
    return {
        "live_wer": round(wer.score(refs, [r["live_text"] for r in raws])["wer"], 2),
        "offline_wer": round(wer.score(refs, [r["offline_text"] for r in raws])["wer"], 2),
        "kept": share(tot["kept"], tot["offline_right"]), "kept_words": tot["kept"],
        "offline_right": tot["offline_right"], "zero": tot["zero"],
        "delay": quantiles([d for r in raws for d in r["delays"]]),
        "delay_words": sum(len(r["delays"]) for r in raws),
        "forced": share(tot["forced"], tot["live_words"]), "forced_words": tot["forced"],
        "live_words": tot["live_words"], "truth_words": tot["truth_words"],
        "seconds": round(tot["seconds"], 3), "runs": tot["runs"], "busy_ms": tot["busy_ms"],
        "runs_per_s": round(tot["runs"] / sec, 3), "busy_ms_per_s": round(tot["busy_ms"] / sec, 1),
        "wall_s": round(wall_s, 2), "wall_per_s": round(wall_s / sec, 4),
    }


def run_cli(cmd, keep=None, fresh=False):
    """(JSON document, wall seconds) of one CLI run; kept in the folder `keep` under a
    hash of the command line and the CLI's and model's files (size, time), so that a
    second call with the same everything reads it back (--fresh runs again)."""
    path = None
    if keep:
        key = [cmd] + [(os.path.getsize(f), os.path.getmtime(f)) for f in (cmd[0], cmd[2])]
        path = os.path.join(keep, f"{zlib.crc32(json.dumps(key).encode()):08x}.json")
        if os.path.exists(path) and not fresh:
            with open(path) as f:
                got = json.load(f)
            if got["cmd"] == cmd:
                return got["doc"], got["wall_s"]
    t = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t
    print(f"  {wall:6.1f} s  {shlex.join(cmd[3:])}", file=sys.stderr, flush=True)
    if r.returncode:
        raise SystemExit(f"{shlex.join(cmd)}\nexited {r.returncode}: {r.stderr.strip()}")
    doc = json.loads(r.stdout)
    if path:
        with open(path + ".tmp", "w") as f:
            json.dump({"cmd": cmd, "doc": doc, "wall_s": wall}, f)
        os.replace(path + ".tmp", path)
    return doc, wall


def fmt(x, spec="{:.2f}"):
    return "–" if x is None else spec.format(x)


def table(rows):
    leads = any(r.get("lead") for r in rows)
    head = ("| encoder | policy | step | clock | " + ("lead | " if leads else "") +
            "live WER | offline WER | kept | zero | "
            "delay median | p90 | worst | forced | runs/s | busy ms/s | wall s/s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        m = r["metrics"]
        d = m["delay"]
        lead = f"{r.get('lead', 0):g} s | " if leads else ""
        lines.append(
            f"| {r['encoder']} | {r['policy']} | {r['step']} | {r['clock']} | {lead}"
            f"{m['live_wer']:.1f} % | {m['offline_wer']:.1f} % | "
            f"{fmt(m['kept'] and 100 * m['kept'], '{:.1f} %')} ({m['kept_words']}/"
            f"{m['offline_right']}) | {m['zero']} | {fmt(d['median'], '{:.2f} s')} | "
            f"{fmt(d['p90'], '{:.2f} s')} | {fmt(d['worst'], '{:.2f} s')} | "
            f"{fmt(m['forced'] and 100 * m['forced'], '{:.1f} %')} | {m['runs_per_s']:.2f} | "
            f"{m['busy_ms_per_s']:.0f} | {m['wall_per_s']:.3f} |")
    return "\n".join(lines)


def self_table(rows):
    """The offline runs behind each lead against lead 0's (self_rows)."""
    lines = ["| encoder | lead | offline WER | kept of lead 0's right words |", "|---|---|---|---|"]
    for r in rows:
        m = r["metrics"]
        lines.append(f"| {r['encoder']} | {r['lead']:g} s | {m['live_wer']:.1f} % | "
                     f"{fmt(m['kept'] and 100 * m['kept'], '{:.1f} %')} ({m['kept_words']}/"
                     f"{m['offline_right']}) |")
    return "\n".join(lines)


def misses(rows, a):
    """'row: what' for every threshold a row misses."""
    out = []
    for r in rows:
        m, name = r["metrics"], f"{r['encoder']}/{r['policy']}/{r['step']}/{r['clock']}"
        name += f"/lead {r['lead']:g} s" if r.get("lead") else ""
        tests = [("kept", m["kept"], a.min_kept, lambda v, t: v >= t),
                 ("delay median", m["delay"]["median"], a.max_median_delay, lambda v, t: v <= t),
                 ("delay p90", m["delay"]["p90"], a.max_p90_delay, lambda v, t: v <= t),
                 ("live WER", m["live_wer"], a.max_live_wer, lambda v, t: v <= t),
                 ("forced", m["forced"], a.max_forced, lambda v, t: v <= t),
                 ("zero-duration words", m["zero"], a.max_zero, lambda v, t: v <= t)]
        for what, v, t, ok in tests:
            if t is not None and (v is None or not ok(v, t)):
                out.append(f"{name}: {what} {v} (want {'>=' if what == 'kept' else '<='} {t})")
    return out


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--cli", default=default_cli())
    ap.add_argument("--policy", action="append", type=named, default=[],
                    help="NAME=ARGS: a commit policy, the live run's extra arguments "
                         "(default agreement=)")
    ap.add_argument("--encoder", action="append", type=named, default=[],
                    help="NAME=ARGS: an encoder setting, extra arguments of both runs "
                         "(default full=)")
    ap.add_argument("--steps", default="500,1000,2000")
    ap.add_argument("--clocks", default="virtual,fixed", help="virtual and/or fixed")
    ap.add_argument("--run-ms", type=int, default=300, help="a run's time on the fixed clock")
    ap.add_argument("--args", default="-t 2", help="extra arguments of every run")
    ap.add_argument("--mode", choices=["words", "segments"], default="words",
                    help="live runs with --word-timestamps (words commit one by one) or "
                         "without (segments commit whole; no zero-duration count)")
    ap.add_argument("--streams", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=120.0, help="each stream at least")
    ap.add_argument("--seed", type=int, default=1, help="stream i's seed is SEED + i")
    ap.add_argument("--sentences", help="one sentence a line (default: corpus.split's held out)")
    ap.add_argument("--no-flite", action="store_true", help="espeak-ng voices only")
    ap.add_argument("--voice", help="every utterance in this espeak-ng voice, its default "
                                    "rate and pitch, at full level (a test's easy stream)")
    ap.add_argument("--leads", default="",
                    help="S,...: also run every stream behind S s of silence (other cuts)")
    ap.add_argument("--work", default="work/live-eval", help="where the streams are kept")
    ap.add_argument("--jobs", type=int, default=2, help="offline and fixed-clock runs at once")
    ap.add_argument("--fresh", action="store_true",
                    help="run every combination again (default: reuse the runs kept in WORK/runs)")
    ap.add_argument("--out", help="write OUT.md and OUT.json")
    ap.add_argument("--check", action="store_true", help="exit 1 when a row misses a threshold")
    for t in ("min-kept", "max-median-delay", "max-p90-delay", "max-live-wer", "max-forced"):
        ap.add_argument("--" + t, type=float)
    ap.add_argument("--max-zero", type=int)
    a = ap.parse_args(argv)
    a.policy = a.policy or [("agreement", ["--commit-policy", "agreement"])]
    a.encoder = a.encoder or [("full", [])]
    try:
        a.steps = [int(s) for s in a.steps.split(",")]
    except ValueError:
        ap.error(f"--steps {a.steps!r}: want comma-separated milliseconds")
    try:
        a.leads = [float(s) for s in a.leads.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--leads {a.leads!r}: want comma-separated seconds")
    if any(not 0 < s <= 30 for s in a.leads):
        ap.error("--leads: each between 0 and 30 s")
    a.clocks = a.clocks.split(",")
    if any(c not in ("virtual", "fixed") for c in a.clocks):
        ap.error("--clocks takes virtual and/or fixed")
    if a.check and all(getattr(a, t) is None for t in ("min_kept", "max_median_delay",
                                                        "max_p90_delay", "max_live_wer",
                                                        "max_forced", "max_zero")):
        ap.error("--check needs a threshold (--min-kept, --max-median-delay, ...)")
    for path, what in ((a.model, "--model"), (a.cli, "--cli")):
        if not os.path.exists(path):
            ap.error(f"{what} {path} does not exist")
    return a


def streams(a):
    if a.sentences:
        with open(a.sentences) as f:
            sents = [s.strip() for s in f if s.strip()]
        tag = f"-{zlib.crc32(chr(10).join(sents).encode()):08x}"
    else:
        import corpus
        sents, tag = corpus.split()[1], ""
    os.makedirs(a.work, exist_ok=True)
    out = []
    for i in range(a.streams):
        seed = a.seed + i
        kind = f"-{a.voice}" if a.voice else "-espeak" if a.no_flite else ""
        path = os.path.join(a.work, f"stream-{seed}-{a.seconds:g}s{kind}{tag}")
        truth = live_streams.make(path, sents, a.seconds, seed, not a.no_flite, a.voice)
        print(f"{path}.wav: {live_streams.describe(truth)}", file=sys.stderr)
        out.append((path, truth))
    return out


def with_lead(path, truth, lead):
    """(path, truth) of the stream behind `lead` s of digital silence, made once."""
    out = f"{path}-lead{lead:g}"
    if not os.path.exists(out + ".wav"):
        with wave.open(path + ".wav") as w:
            params, frames = w.getparams(), w.readframes(w.getnframes())
        zeros = bytes(round(lead * params.framerate) * params.nchannels * params.sampwidth)
        with wave.open(out + ".wav.tmp", "wb") as w:
            w.setparams(params)
            w.writeframes(zeros + frames)
        os.replace(out + ".wav.tmp", out + ".wav")
    moved = (lambda t: None if t is None else round(t + lead, 3))
    t = dict(truth, seconds=truth["seconds"] + lead, utterances=[
        dict(u, start=moved(u.get("start")), end=moved(u.get("end")),
             words=[dict(w, start=moved(w["start"]), end=moved(w["end"])) for w in u["words"]])
        for u in truth["utterances"]])
    with open(out + ".json", "w") as f:
        json.dump(t, f)
    return out, t


def main(argv=None):
    a = parse(argv)
    base, args = [a.cli, "-m", a.model, "-o", "json"], shlex.split(a.args)
    words = ["--word-timestamps"]
    plain = streams(a)
    leads = [0.0] + a.leads
    # the streams behind each lead: strs[lead][si]
    strs = {ld: plain if ld == 0 else [with_lead(p, t, ld) for p, t in plain] for ld in leads}
    jobs = {}  # key -> command
    live_args = words if a.mode == "words" else []
    for ld, (enc, eargs) in itertools.product(leads, a.encoder):
        for si, (path, _) in enumerate(strs[ld]):
            jobs[("offline", enc, si, ld)] = base + words + args + eargs + [path + ".wav"]
            for (pol, pargs), step, clock in itertools.product(a.policy, a.steps, a.clocks):
                live = ["--live", "--step", str(step)]
                live += ["--run-ms", str(a.run_ms)] if clock == "fixed" else []
                jobs[(enc, pol, step, clock, si, ld)] = (
                    base + live_args + args + eargs + pargs + live + [path + ".wav"])
    done, keep = {}, os.path.join(a.work, "runs")
    os.makedirs(keep, exist_ok=True)
    # everything that does not measure its own time first, --jobs at a time
    with cf.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        par = [k for k in jobs if k[0] == "offline" or k[3] == "fixed"]
        for k, res in zip(par, ex.map(lambda k: run_cli(jobs[k], keep, a.fresh), par)):
            done[k] = res
    for k in jobs:  # the virtual clock: one at a time, nothing else of ours running
        if k not in done:
            done[k] = run_cli(jobs[k], keep, a.fresh)
    rows, self_rows = [], []
    label = (lambda pol: pol if a.mode == "words" else f"{pol} (segments)")
    for (enc, _), ld in itertools.product(a.encoder, leads):
        for (pol, _), step, clock in itertools.product(a.policy, a.steps, a.clocks):
            key = (enc, pol, step, clock)
            raws = [score_stream(truth, done[("offline", enc, si, ld)][0],
                                 done[key + (si, ld)][0])
                    for si, (_, truth) in enumerate(strs[ld])]
            wall = sum(done[key + (si, ld)][1] for si in range(len(strs[ld])))
            rows.append({"encoder": enc, "policy": label(pol), "step": step, "clock": clock,
                         "lead": ld, "command": shlex.join(jobs[key + (0, ld)]),
                         "metrics": summarize(raws, wall), "per_stream": [
                             {k: v for k, v in r.items() if k not in ("ref",)} for r in raws]})
        if ld:
            # lead ld's offline run in the place of a live one, against lead 0's
            raws = [score_stream(strs[0][si][1], done[("offline", enc, si, 0)][0],
                                 done[("offline", enc, si, ld)][0])
                    for si in range(len(strs[0]))]
            self_rows.append({"encoder": enc, "lead": ld, "metrics": summarize(raws)})
    md = table(rows)
    if self_rows:
        md += "\n\nThe offline run behind each lead against lead 0's:\n\n" + self_table(self_rows)
    print(md)
    if a.out:
        os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
        with open(a.out + ".md", "w") as f:
            f.write(md + "\n")
        with open(a.out + ".json", "w") as f:
            json.dump({"argv": sys.argv, "streams": [{"path": p, "summary": live_streams.describe(t)}
                                                     for p, t in strs[0]],
                       "leads": leads, "rows": rows, "self_rows": self_rows}, f, indent=1)
    if a.check:
        bad = misses(rows, a)
        for b in bad:
            print("MISS:", b)
        print("check:", "FAIL" if bad else "PASS", f"({len(rows)} rows)")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
