#!/usr/bin/env python3
"""Checks that a new evidence run behaves like a committed one: for every example (matched by file,
in order of appearance), the same status, target-instruction verdict and deciding stage, and a
speedup within the known spread (relative difference at most --tolerance; the committed 12-run spread
of the wgmma GEMM example is 1.5 %). Inputs are `ptxbench eval --out` verdict lists or
bench/eval/summarize_evals.py summaries (deciding stages are read from verdicts when summaries lack them).

  compare_summaries.py OLD.json NEW.json [--tolerance 0.05]

(Issue 26's before/after comparison over interleaved rounds is bench/eval/verdicts_unchanged.py.)

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
                     "speedup": t.get("speedup") if v.get("status") == "PASSED" else None})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--tolerance", type=float, default=0.05)
    a = ap.parse_args()
    old, new = rows_of(a.old), rows_of(a.new)
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
        if so and sn:
            rel = abs(sn - so) / so
            if rel > a.tolerance:
                problems.append(f"speedup {so:.3f} -> {sn:.3f} ({100 * rel:.1f} %)")
        elif bool(so) != bool(sn):
            problems.append(f"speedup {so} -> {sn}")
        ok = ok and not problems
        sp = f"{so:.4f} -> {sn:.4f} ({100 * (sn - so) / so:+.2f} %)" if rel is not None else "-"
        print(f"{(n.get('file') or '?'):<45} {n.get('status') or '?':<20} {n.get('target_verdict') or '?':<15} "
              f"{sp:<30} {'ok' if not problems else '; '.join(problems)}")
    print("behaviour unchanged" if ok else "DIFFERENCES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
