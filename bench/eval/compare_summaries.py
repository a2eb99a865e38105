#!/usr/bin/env python3
"""Checks that a new evidence run behaves like a committed one: for every example (matched by file,
in order of appearance), the same status, target-instruction verdict and deciding stage, and a
speedup within the known spread (relative difference at most --tolerance; the committed 12-run spread
of the wgmma GEMM example is 1.5 %). Inputs are `ptxbench eval --out` verdict lists or
bench/eval/summarize_evals.py summaries (deciding stages are read from verdicts when summaries lack them).

  compare_summaries.py OLD.json NEW.json [--tolerance 0.05]
  compare_summaries.py OLD.json NEW.json --interval --control NEW2.json

--interval (issue 26's P3 clause, "speedups within the new interval"; verdict lists only): instead of a
relative tolerance, OLD's speedup must lie inside NEW's 95 % interval, or be no further from NEW's speedup
than NEW2's is: NEW2 evaluates the same files with the same binaries as NEW in the same run (a control),
so a difference that re-evaluating the same binary also shows is not one the change made.

Prints one line per example and a last line "behaviour unchanged" (exit 0) or "DIFFERENCES" (exit 1).
"""
import argparse
import json
import sys


def rows_of(path):
    doc = json.load(open(path))
    if isinstance(doc, dict) and "rows" in doc:
        return [r for r in doc["rows"] if "error" not in r]
    items = doc if isinstance(doc, list) else [doc]
    rows = []
    for v in items:
        if "error" in v:
            continue
        t = v.get("timing") or {}
        rows.append({"file": v.get("file"), "status": v.get("status"), "outcome": v.get("outcome"),
                     "deciding_stage": v.get("deciding_stage", ""),
                     "target_verdict": (v.get("target_instructions") or {}).get("verdict"),
                     "speedup": t.get("speedup") if v.get("status") == "PASSED" else None,
                     "interval": t.get("speedup_ci") if v.get("status") == "PASSED" else None})
    return rows


def interval_check(so, sn, interval, control):
    """(problem or None, note) for --interval: OLD's speedup so against NEW's sn, its interval and the control row."""
    if not interval or interval.get("low") is None or interval.get("high") is None:
        return "the new verdict has no speedup interval", ""
    low, high = interval["low"], interval["high"]
    if low <= so <= high:
        return None, f" (inside {low:.4f}-{high:.4f})"
    sc = (control or {}).get("speedup")
    if sc:
        if abs(so - sn) <= abs(sc - sn):
            return None, f" (outside {low:.4f}-{high:.4f}, but the control moved as far: {sc:.4f})"
        return (f"speedup {so:.4f} outside the new interval {low:.4f}-{high:.4f} and further from {sn:.4f} "
                f"than the control's {sc:.4f}"), ""
    return f"speedup {so:.4f} outside the new interval {low:.4f}-{high:.4f} (no control)", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--interval", action="store_true", help="OLD's speedup inside NEW's 95 %% interval (see above)")
    ap.add_argument("--control", help="with --interval: a second evaluation of NEW's files by NEW's binaries")
    a = ap.parse_args()
    if a.control and not a.interval:
        ap.error("--control goes with --interval")
    old, new = rows_of(a.old), rows_of(a.new)
    control = {}
    if a.control:
        control = {r.get("file"): r for r in rows_of(a.control)}
    ok = True
    if len(old) != len(new):
        print(f"row counts differ: {len(old)} committed, {len(new)} now")
        ok = False
    for o, n in zip(old, new):
        problems = []
        if o.get("file") != n.get("file"):
            problems.append(f"file {o.get('file')} vs {n.get('file')}")
        for key in ("status", "target_verdict"):
            if o.get(key) != n.get(key):
                problems.append(f"{key} {o.get(key)} -> {n.get(key)}")
        if o.get("deciding_stage") is not None and n.get("deciding_stage") is not None and \
                "deciding_stage" in o and o.get("deciding_stage") != n.get("deciding_stage"):
            problems.append(f"deciding_stage {o.get('deciding_stage')!r} -> {n.get('deciding_stage')!r}")
        so, sn = o.get("speedup"), n.get("speedup")
        rel = None
        note = ""
        if so and sn:
            rel = abs(sn - so) / so
            if a.interval:
                problem, note = interval_check(so, sn, n.get("interval"), control.get(n.get("file")))
                if problem:
                    problems.append(problem)
            elif rel > a.tolerance:
                problems.append(f"speedup {so:.3f} -> {sn:.3f} ({100 * rel:.1f} %)")
        elif bool(so) != bool(sn):
            problems.append(f"speedup {so} -> {sn}")
        ok = ok and not problems
        sp = f"{so:.4f} -> {sn:.4f} ({100 * (sn - so) / so:+.2f} %)" if rel is not None else "-"
        print(f"{(n.get('file') or '?'):<45} {n.get('status') or '?':<20} {n.get('target_verdict') or '?':<15} "
              f"{sp:<30} {('ok' + note) if not problems else '; '.join(problems)}")
    print("behaviour unchanged" if ok else "DIFFERENCES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
