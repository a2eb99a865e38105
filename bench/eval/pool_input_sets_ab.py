#!/usr/bin/env python3
"""Pools several bench/eval/input_sets_ab.sh runs (each on its own GPU, or the same GPU at another
time): for every example and effect, each run's effect on the speedup and on the reference's and the
candidate's median times, their mean over the runs and the range. One run's effect is the difference
of two configurations' round means; the runs are the replicates here, since a GPU's own offset (one
H100's reference a few tenths of a percent slower than another's) is what a single run cannot show.

  pool_input_sets_ab.py DIR [DIR...] [--out pooled.json] > pooled.txt

DIR: an input-sets-ab folder with ab_summary.json.
"""
import argparse
import json
import os
import statistics
import sys


def mean_of_present(values):
    """The mean of the values that are not None, or None when none is."""
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--out")
    a = ap.parse_args()
    runs = []
    for d in a.dirs:
        path = os.path.join(d, "ab_summary.json")
        try:
            runs.append((os.path.basename(os.path.normpath(d)), json.load(open(path))))
        except (OSError, ValueError) as e:
            print(f"pool_input_sets_ab.py: cannot read {path}: {e}", file=sys.stderr)
            return 2
    pooled = {}
    for name, run in runs:
        for example, by in run["examples"].items():
            for effect, e in by.get("effects", {}).items():
                pooled.setdefault(example, {}).setdefault(effect, []).append(dict(e, run=name, rounds=run["rounds"]))
    lines = [f"{len(runs)} runs: " + ", ".join(f"{n} ({r['rounds']} rounds)" for n, r in runs),
             "effect on the speedup in % (mean over the runs, then each run's); reference, candidate and the "
             "reference's kernels alone (busy): % change of their median times, mean over the runs", ""]
    out = {"runs": [n for n, _ in runs], "examples": {}}
    for example, effects in pooled.items():
        for effect, es in effects.items():
            s = [e["speedup_pct"] for e in es]
            row = {"runs": len(es), "speedup_pct_mean": statistics.fmean(s), "speedup_pct_min": min(s),
                   "speedup_pct_max": max(s),
                   "reference_pct_mean": statistics.fmean(e["reference_pct"] for e in es),
                   "candidate_pct_mean": statistics.fmean(e["candidate_pct"] for e in es),
                   # the reference's kernels alone (summaries from before this field have none)
                   "reference_busy_pct_mean": mean_of_present(e.get("reference_busy_pct") for e in es),
                   "per_run": es}
            out["examples"].setdefault(example, {})[effect] = row
            lines.append(f"{example:24s} {effect:52s} speedup {row['speedup_pct_mean']:+6.2f} % "
                         f"[{' '.join(f'{x:+.2f}' for x in s)}]  reference {row['reference_pct_mean']:+6.2f} %  "
                         f"candidate {row['candidate_pct_mean']:+6.2f} %"
                         + (f"  reference busy {row['reference_busy_pct_mean']:+6.2f} %" if row["reference_busy_pct_mean"] is not None else ""))
        lines.append("")
    if a.out:
        json.dump(out, open(a.out, "w"), indent=1)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
