#!/usr/bin/env python3
"""Summarise bench/eval/pacing_probe's samples: per kernel, gap kind and gap, the median time (or,
for the clock probe, the SM clock in its first windows and its last ten) with a distribution-free
95 % interval of the median, and the change from the same kind's zero gap; then the two gaps the
harnesses left before the reference's flush (0.3 ms now, 1.5 ms before the speed work) side by side,
and each kind against an idle GPU at the same gap.

    summarize_pacing_probe.py SAMPLES.tsv[.gz] OUT_DIR     # writes OUT_DIR/probe_summary.{txt,json}
"""
import csv
import gzip
import json
import math
import sys
from collections import defaultdict

NOW_GAP, BEFORE_GAP = 0.3, 1.5  # ms: the harness's gaps now and before the speed work (issue 26)


def median_interval(values):
    """The median and the order statistics around it that cover it with ~95 % (binomial, normal
    approximation): no assumption about the distribution's shape."""
    v = sorted(values)
    n = len(v)
    mid = (v[(n - 1) // 2] + v[n // 2]) / 2
    half = 1.96 * math.sqrt(n) / 2
    lo = max(0, int(math.floor(n / 2 - half)))
    hi = min(n - 1, int(math.ceil(n / 2 + half)) - 1)
    return mid, v[lo], v[hi]


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: summarize_pacing_probe.py SAMPLES.tsv[.gz] OUT_DIR")
    try:
        rows = read(sys.argv[1])
    except (OSError, ValueError, csv.Error) as e:
        sys.exit(f"summarize_pacing_probe.py: cannot read {sys.argv[1]}: {e}")
    if not rows:
        sys.exit("summarize_pacing_probe.py: no samples in " + sys.argv[1])
    groups = defaultdict(list)
    for r in rows:
        key = (r["kernel"], r["gap_kind"], float(r["gap_ms"]))
        if r["kernel"] == "clock_probe":
            windows = [float(r[f"mhz_w{w}"]) for w in range(20)]
            groups[key].append(windows)
        else:
            groups[key].append(float(r["kernel_ms"]))
    cells = []
    for (kernel, kind, gap), values in sorted(groups.items()):
        cell = {"kernel": kernel, "gap_kind": kind, "gap_ms": gap, "n": len(values)}
        if kernel == "clock_probe":
            for name, pick in (("mhz_first_10us", lambda w: w[0]), ("mhz_10_20us", lambda w: w[1]),
                               ("mhz_100_200us", lambda w: sum(w[10:]) / 10)):
                m, lo, hi = median_interval([pick(w) for w in values])
                cell[name] = {"median": m, "low": lo, "high": hi}
        else:
            m, lo, hi = median_interval(values)
            cell["ms"] = {"median": m, "low": lo, "high": hi}
        cells.append(cell)
    by_key = {(c["kernel"], c["gap_kind"], c["gap_ms"]): c for c in cells}

    def value(c):
        return c["ms"]["median"] if "ms" in c else c["mhz_first_10us"]["median"]

    lines = [f"pacing probe: {len(rows)} samples; medians with a 95 % interval; change from the same kind's zero gap",
             ""]
    for c in cells:
        base = by_key.get((c["kernel"], c["gap_kind"], 0.0))
        change = 100 * (value(c) / value(base) - 1) if base else float("nan")
        c["change_from_zero_gap_pct"] = change
        if "ms" in c:
            s = c["ms"]
            lines.append(f"{c['kernel']:14} {c['gap_kind']:9} gap {c['gap_ms']:5.2f} ms  n {c['n']:4}  "
                         f"{s['median']:.4f} ms [{s['low']:.4f}, {s['high']:.4f}]  {change:+.2f} %")
        else:
            a, b, z = c["mhz_first_10us"], c["mhz_10_20us"], c["mhz_100_200us"]
            lines.append(f"{c['kernel']:14} {c['gap_kind']:9} gap {c['gap_ms']:5.2f} ms  n {c['n']:4}  "
                         f"SM MHz first 10 us {a['median']:.0f} [{a['low']:.0f}, {a['high']:.0f}], "
                         f"10-20 us {b['median']:.0f}, 100-200 us {z['median']:.0f}  {change:+.2f} %")
    lines.append("")
    comparisons = []
    for kernel in sorted({c["kernel"] for c in cells}):
        for kind in sorted({c["gap_kind"] for c in cells}):
            now, before = by_key.get((kernel, kind, NOW_GAP)), by_key.get((kernel, kind, BEFORE_GAP))
            if not now or not before:
                continue
            pct = 100 * (value(before) / value(now) - 1)
            comparisons.append({"kernel": kernel, "gap_kind": kind, "now_gap_ms": NOW_GAP,
                                "before_gap_ms": BEFORE_GAP, "change_pct": pct})
            what = "time" if kernel != "clock_probe" else "first-10-us SM clock"
            lines.append(f"{kernel:14} {kind:9}  {what} at a {BEFORE_GAP} ms gap vs {NOW_GAP} ms: {pct:+.2f} %")
    lines.append("")
    against_idle = []
    for c in cells:
        idle = by_key.get((c["kernel"], "idle", c["gap_ms"]))
        if c["gap_kind"] == "idle" or not idle:
            continue
        pct = 100 * (value(c) / value(idle) - 1)
        against_idle.append({"kernel": c["kernel"], "gap_kind": c["gap_kind"], "gap_ms": c["gap_ms"], "change_pct": pct})
        what = "time" if c["kernel"] != "clock_probe" else "first-10-us SM clock"
        lines.append(f"{c['kernel']:14} {c['gap_kind']:9} gap {c['gap_ms']:4.2f} ms  {what} against idle: {pct:+.2f} %")
    text = "\n".join(lines) + "\n"
    with open(f"{sys.argv[2]}/probe_summary.txt", "w") as f:
        f.write(text)
    with open(f"{sys.argv[2]}/probe_summary.json", "w") as f:
        json.dump({"cells": cells, "now_vs_before_gap": comparisons, "against_idle": against_idle}, f, indent=1)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
