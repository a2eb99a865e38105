#!/usr/bin/env python3
"""Issue 26, P3's verdict clause over several interleaved rounds: did a change move any example's
verdict? Each round evaluated every example once with the binaries before and once after (separate
harnesses, back to back, the order alternating between rounds), normally both on the round's seed
(speed.sh passes one --seed per round), so both builds see the same correctness trials and timed inputs.

- Status, target-instruction verdict and deciding stage: where both builds of every round ran on the
  same seed, they must agree between the builds in every round; a difference between rounds that both
  builds share is the kernel's dependence on its inputs (e.g. one element near the tolerance on some
  draws), printed, not a difference. Without common seeds they must be the same in every run.
- Speedups: one evaluation's 95 % interval covers the sampling within that evaluation, not what
  changes between evaluations (another harness process: other allocations, another autotuning); the
  same binaries re-evaluated land outside each other's interval now and then (session 14's results
  README). So the change's effect on an example is the mean over the rounds of the builds' difference
  in log speedup within a round (a round is a block: its two runs are back to back, on the same
  inputs), against those differences' own spread, pooled over examples (relative, so examples of any
  speed pool; rounds from several runs or GPUs pool too). An example fails when its effect is
  significant family-wise at 5 % (Holm over the passing examples, Student's t on the pooled degrees
  of freedom, at least 10). A test that could not have caught a 0.5 % shift (P1's repeatability
  bound) proves nothing either way: "inconclusive", and more rounds are the remedy.
- For information, per example: whether the first round's before speedup lies inside the first
  round's after interval (the clause read literally), and whether the second after run does (the
  same reading of the same binaries against themselves).

    verdicts_unchanged.py --before B1.json B2.json ... --after A1.json A2.json ...

Inputs: `ptxbench eval --out` verdict lists (gzipped or not), one per round and build, the same
files in the same order, round k's before and after at the same position. Prints a line per example
and "verdicts unchanged" (exit 0), "DIFFERENCES" (exit 1) or "INCONCLUSIVE" (exit 1: nothing
differs, but a 0.5 % shift would not have been detected).
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
MIN_DOF = 10  # below it the t quantile's expansion (t_quantile) is not trusted
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
                     "seed": (v.get("environment") or {}).get("seed"),
                     "target_verdict": (v.get("target_instructions") or {}).get("verdict"),
                     "deciding_stage": v.get("deciding_stage", ""),
                     "speedup": t.get("speedup") if passed else None,
                     "interval": t.get("speedup_ci") if passed else None})
    return rows


def t_quantile(p, dof):
    """Student's t quantile by the Cornish-Fisher expansion around the normal one (Abramowitz and
    Stegun 26.7.5; within 0.1 % of the exact value from 10 degrees of freedom on): the standard
    library has no t distribution and the GPU host has no SciPy."""
    z = NORMAL.inv_cdf(p)
    terms = [(z ** 3 + z) / 4,
             (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96,
             (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384,
             (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160]
    return z + sum(g / dof ** (k + 1) for k, g in enumerate(terms))


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
    same_inputs = all(b[i].get("seed") is not None and b[i].get("seed") == a[i].get("seed")
                      for b, a in zip(before, after) for i in range(len(files)))
    keys = ("status", "target_verdict", "deciding_stage")
    notes = {f: [] for f in files}
    for i, f in enumerate(files):
        rows = [run[i] for run in before + after]
        for r in rows:
            if "error" in r:
                problems[f].append(f"not evaluated: {r['error']}")
        for key in keys:
            if same_inputs:
                split = [(k + 1, b[i].get(key), a[i].get(key)) for k, (b, a) in enumerate(zip(before, after))
                         if str(b[i].get(key)) != str(a[i].get(key))]
                if split:
                    problems[f].append(f"{key} differs between the builds on the same inputs in round(s) "
                                       f"{', '.join(str(k) for k, _, _ in split)}: "
                                       + ", ".join(f"{vb} -> {va}" for _, vb, va in split))
                    continue
            seen = sorted({str(r.get(key)) for r in rows})
            if len(seen) > 1 and same_inputs:
                notes[f].append(f"{key} depends on the inputs, the same for both builds in each round: " +
                                ", ".join(f"round {k + 1} {a[i].get(key) or '-'}" for k, a in enumerate(after)))
            elif len(seen) > 1:
                problems[f].append(f"{key} differs between runs: {', '.join(seen)}")
    # Each round's difference between the builds, in log speedup, for the rounds where both passed;
    # their spread around each example's mean effect, pooled over examples.
    pairs, diffs = {}, {}
    squares, dof = 0.0, 0
    for i, f in enumerate(files):
        ab = [(b[i]["speedup"], a[i]["speedup"]) for b, a in zip(before, after)
              if b[i].get("speedup") and a[i].get("speedup")]
        if len(ab) >= 2:
            pairs[f] = ab
            diffs[f] = d = [math.log(y) - math.log(x) for x, y in ab]
            m = statistics.fmean(d)
            squares += sum((x - m) ** 2 for x in d)
            dof += len(d) - 1
    sigma = math.sqrt(squares / dof) if dof else float("nan")
    effects = {}
    for f, d in diffs.items():
        se = sigma / math.sqrt(len(d))
        effect = statistics.fmean(d)
        t = effect / se if se > 0 else float("inf") if effect else 0.0
        effects[f] = {"effect": effect, "t": t, "se": se}
    # Holm: the k-th smallest p value against alpha / (m - k) until the first that stands, i.e. the
    # k-th largest |t| against the t quantile of 1 - alpha / (2 (m - k)).
    m = len(effects)
    rejecting = True
    for k, e in enumerate(sorted(effects.values(), key=lambda e: -abs(e["t"]))):
        rejecting = rejecting and dof >= MIN_DOF and abs(e["t"]) > t_quantile(1 - ALPHA / (2 * (m - k)), dof)
        e["significant"] = rejecting
    worst_se = max((e["se"] for e in effects.values()), default=float("nan"))
    detectable = t_quantile(1 - ALPHA / (2 * max(m, 1)), dof) * worst_se if dof else float("inf")
    for f, e in effects.items():
        if e["significant"]:
            problems[f].append(f"speedup moved {100 * e['effect']:+.2f} % (t {e['t']:+.1f}, significant family-wise)")
    print(f"{rounds} rounds, {'both builds on the same inputs in each' if same_inputs else 'the builds on different inputs'}; "
          f"the builds' difference within a round spreads {100 * sigma:.2f} % (pooled over {len(diffs)} passing "
          f"examples, {dof} degrees of freedom); an effect's standard error up to {100 * worst_se:.2f} %, the smallest "
          f"one detectable family-wise {100 * detectable:.2f} %")
    for i, f in enumerate(files):
        r0 = after[0][i]
        line = f"{f or '?':<45} {r0.get('status') or '?':<20} {r0.get('target_verdict') or '?':<15} "
        if f in effects:
            e = effects[f]
            mb = math.exp(statistics.fmean(math.log(x) for x, _ in pairs[f]))
            ma = math.exp(statistics.fmean(math.log(y) for _, y in pairs[f]))
            line += f"{mb:.4f} -> {ma:.4f} ({100 * e['effect']:+.2f} %, t {e['t']:+.1f})  "
            if before[0][i].get("speedup") and after[0][i].get("speedup") and after[1][i].get("speedup"):
                literal = "inside" if inside(before[0][i]["speedup"], after[0][i]["interval"]) else "outside"
                same = "inside" if inside(after[1][i]["speedup"], after[0][i]["interval"]) else "outside"
                line += f"[round 1: before {literal} after's interval; after's 2nd run {same} it]  "
        line += "; ".join(problems[f]) if problems[f] else "ok"
        if notes[f]:
            line += " (" + "; ".join(notes[f]) + ")"
        ok = ok and not problems[f]
        print(line)
    if not ok:
        print("DIFFERENCES")
        return 1
    if effects and dof < MIN_DOF:
        print(f"INCONCLUSIVE: nothing differs, but {dof} degrees of freedom are too few to judge the speedups "
              f"(at least {MIN_DOF}): run more rounds")
        return 1
    if effects and not detectable <= MUST_DETECT:
        print(f"INCONCLUSIVE: nothing differs, but a shift below {100 * detectable:.2f} % would not have been "
              f"detected (at most {100 * MUST_DETECT:.1f} % is asked): run more rounds")
        return 1
    print("verdicts unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
