#!/usr/bin/env python3
"""Issue 26, P3's verdict clause over several interleaved rounds: did a change move any example's
verdict? Each round evaluated every example once with the binaries before and once after (separate
harnesses, the order alternating between rounds).

- Status, target-instruction verdict and deciding stage must be the same in every run of both builds.
- Speedups: one evaluation's 95 % interval covers the sampling within that evaluation, not what
  changes between evaluations (another harness process: other allocations, another autotuning); the
  same binaries re-evaluated land outside each other's interval now and then (session 14's results
  README). So the change's effect on an example is the difference of the two builds'
  mean log speedups over the rounds, against the runs' own spread within a build, pooled over
  examples and builds (relative, so examples of any speed pool). An example fails when its effect
  is significant family-wise at 5 % (Holm over the passing examples, normal quantiles). A test that
  could not have caught a 0.5 % shift (P1's repeatability bound) — the runs too noisy for their
  number — proves nothing either way: "inconclusive", and more rounds are the remedy.
- For information, per example: whether the first round's before speedup lies inside the first
  round's after interval (the clause read literally), and whether the second after run does (the
  same reading of the same binaries against themselves).

    verdicts_unchanged.py --before B1.json B2.json ... --after A1.json A2.json ...

Inputs: `ptxbench eval --out` verdict lists (gzipped or not), one per round and build, the same
files in the same order. Prints a line per example and "verdicts unchanged" (exit 0), "DIFFERENCES" (exit 1) or
"INCONCLUSIVE" (exit 1: nothing differs, but a 0.5 % shift would not have been detected).
"""
import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from verdict_lists import read_verdict_list  # noqa: E402

MUST_DETECT = 0.005  # P1's bound on the spread of repeated evaluations, as a fraction
ALPHA = 0.05
NORMAL = statistics.NormalDist()


def runs_of(path):
    rows = []
    for v in read_verdict_list(path):
        if not isinstance(v, dict):
            raise ValueError(f"{path}: a verdict list holds objects, not {type(v).__name__}")
        if "error" in v:
            rows.append({"file": v.get("file"), "error": v["error"]})
            continue
        t = v.get("timing") or {}
        passed = v.get("status") == "PASSED"
        rows.append({"file": v.get("file"), "status": v.get("status"),
                     "target_verdict": (v.get("target_instructions") or {}).get("verdict"),
                     "deciding_stage": v.get("deciding_stage", ""),
                     "speedup": t.get("speedup") if passed else None,
                     "interval": t.get("speedup_ci") if passed else None})
    return rows


def inside(value, interval):
    return bool(interval) and interval.get("low") is not None and interval["low"] <= value <= interval["high"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", nargs="+", required=True)
    ap.add_argument("--after", nargs="+", required=True)
    a = ap.parse_args()
    if len(a.before) != len(a.after) or len(a.before) < 2:
        ap.error("as many --before as --after runs, at least 2 of each")
    rounds = len(a.before)
    try:
        before = [runs_of(p) for p in a.before]
        after = [runs_of(p) for p in a.after]
    except (OSError, ValueError) as e:  # a missing, unreadable or malformed verdict list
        print(f"verdicts_unchanged.py: cannot read the verdicts: {e}", file=sys.stderr)
        return 2
    files = [r["file"] for r in after[0]]
    if not files:
        print("no verdicts to compare (the first after run has none)")
        print("DIFFERENCES")
        return 1
    ok = True
    problems = {f: [] for f in files}
    for run in before + after:
        if [r["file"] for r in run] != files:
            print("the runs do not list the same files in the same order")
            print("DIFFERENCES")
            return 1
    for i, f in enumerate(files):
        rows = [run[i] for run in before + after]
        for r in rows:
            if "error" in r:
                problems[f].append(f"not evaluated: {r['error']}")
        for key in ("status", "target_verdict", "deciding_stage"):
            seen = sorted({str(r.get(key)) for r in rows})
            if len(seen) > 1:
                problems[f].append(f"{key} differs between runs: {', '.join(seen)}")
    # The runs' spread within a build, pooled: log speedups around their build's mean.
    logs = {}
    squares, dof = 0.0, 0
    for i, f in enumerate(files):
        b = [run[i].get("speedup") for run in before]
        s = [run[i].get("speedup") for run in after]
        if all(b) and all(s):
            lb, la = [math.log(x) for x in b], [math.log(x) for x in s]
            logs[f] = (lb, la)
            for side in (lb, la):
                m = statistics.fmean(side)
                squares += sum((x - m) ** 2 for x in side)
                dof += len(side) - 1
    sigma = math.sqrt(squares / dof) if dof else float("nan")
    se = sigma * math.sqrt(2 / rounds)
    effects = {}
    for f, (lb, la) in logs.items():
        d = statistics.fmean(la) - statistics.fmean(lb)
        z = d / se if se > 0 else float("inf") if d else 0.0
        p = 2 * (1 - NORMAL.cdf(abs(z)))
        effects[f] = {"effect": d, "z": z, "p": p}
    # Holm: the k-th smallest p value against alpha / (m - k), until the first that stands.
    m = len(effects)
    rejecting = True
    for k, e in enumerate(sorted(effects.values(), key=lambda e: e["p"])):
        rejecting = rejecting and e["p"] < ALPHA / (m - k)
        e["significant"] = rejecting
    detectable = NORMAL.inv_cdf(1 - ALPHA / (2 * max(m, 1))) * se
    for f, e in effects.items():
        if e["significant"]:
            problems[f].append(f"speedup moved {100 * e['effect']:+.2f} % (z {e['z']:+.1f}, significant family-wise)")
    print(f"{rounds} rounds; runs' spread within a build {100 * sigma:.2f} % (pooled over {len(logs)} passing "
          f"examples, {dof} degrees of freedom); an effect's standard error {100 * se:.2f} %, the smallest "
          f"one detectable family-wise {100 * detectable:.2f} %")
    for i, f in enumerate(files):
        r0 = after[0][i]
        line = f"{f or '?':<45} {r0.get('status') or '?':<20} {r0.get('target_verdict') or '?':<15} "
        if f in effects:
            e = effects[f]
            mb = math.exp(statistics.fmean(logs[f][0]))
            ma = math.exp(statistics.fmean(logs[f][1]))
            literal = "inside" if inside(before[0][i]["speedup"], after[0][i]["interval"]) else "outside"
            same = "inside" if inside(after[1][i]["speedup"], after[0][i]["interval"]) else "outside"
            line += (f"{mb:.4f} -> {ma:.4f} ({100 * e['effect']:+.2f} %, z {e['z']:+.1f})  "
                     f"[round 1: before {literal} after's interval; after's 2nd run {same} it]  ")
        line += "; ".join(problems[f]) if problems[f] else "ok"
        ok = ok and not problems[f]
        print(line)
    if not ok:
        print("DIFFERENCES")
        return 1
    if effects and not detectable <= MUST_DETECT:
        print(f"INCONCLUSIVE: nothing differs, but a shift below {100 * detectable:.2f} % would not have been "
              f"detected (at most {100 * MUST_DETECT:.1f} % is asked): run more rounds")
        return 1
    print("verdicts unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
