#!/usr/bin/env python3
"""Summarises `ptxbench eval --out` JSON files: per candidate the status, target-instruction verdict,
speedup and stage times, checked against examples/manifest.json where the file is listed there.

  summarize_evals.py --manifest examples/manifest.json --out summary.json [--merged-out all.json] EVAL.json [...]

--merged-out also writes every verdict of the inputs, in order, as one JSON list. An input that is
missing or unreadable (an eval that crashed before writing) becomes an error row, never a silent gap.
Exit status 1 when a row is an error or differs from the manifest, else 0. The manifests hold no GPU
name: the same expectations hold on every Hopper target.
"""
import argparse, json, os, statistics, sys


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        return [{"file": path, "error": str(e)}]
    return d if isinstance(d, list) else [d]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest")
    ap.add_argument("--out", required=True)
    ap.add_argument("--merged-out")
    ap.add_argument("evals", nargs="+")
    a = ap.parse_args()
    verdicts = [v for path in a.evals for v in load(path)]
    if a.merged_out:
        with open(a.merged_out, "w") as f:
            json.dump(verdicts, f, indent=2)
    expected = {}
    if a.manifest:
        with open(a.manifest) as f:
            for e in json.load(f)["examples"]:
                expected[(os.path.basename(e["file"]), e["task"])] = e
    rows, ok_all = [], True
    for v in verdicts:
        if "error" in v:
            rows.append({"file": v.get("file"), "error": v["error"], "as_expected": False})
            ok_all = False
            continue
        t = v.get("target_instructions", {})
        timing = v.get("timing") or {}
        exp = expected.get((os.path.basename(v["file"]), v["task"]))
        row = {"file": v["file"], "task": v["task"], "status": v.get("status"), "outcome": v.get("outcome"),
               "deciding_stage": v.get("deciding_stage", ""),
               "target_verdict": t.get("verdict"), "target_correct": v.get("target_correct"),
               "speedup": timing.get("speedup"), "candidate_ms": (timing.get("candidate") or {}).get("median_ms"),
               "reference_ms": (timing.get("reference") or {}).get("median_ms"),
               "static_counts": t.get("static_counts"), "dynamic_counts": t.get("dynamic_counts"),
               "message": v.get("message"),
               "stage_seconds": {s["stage"]: round(s["seconds"], 3) for s in v.get("stages", [])}}
        dyn = next((s for s in v.get("stages", []) if s["stage"] == "dynamic_check"), None)
        row["dynamic_check_requested"] = not (dyn and dyn["outcome"] == "skipped" and "not requested" in dyn["summary"])
        if exp:
            row["expected_status"] = exp["expected_status"]
            row["expected_target_verdict"] = exp["expected_target_verdict"]
            # A run with --no-dynamic-check cannot establish "executed"/"not_executed"; only its
            # status is compared then.
            verdict_ok = row["target_verdict"] == exp["expected_target_verdict"] or (
                not row["dynamic_check_requested"] and row["target_verdict"] == "deferred")
            row["as_expected"] = row["status"] == exp["expected_status"] and verdict_ok
            ok_all = ok_all and row["as_expected"]
        rows.append(row)
    if not rows:  # an eval that wrote an empty list evaluated nothing: never "all as expected"
        ok_all = False
    out = {"rows": rows, "all_as_expected": ok_all}
    speedups = [r["speedup"] for r in rows if r.get("speedup")]
    by_file = {}
    for r in rows:
        if r.get("speedup"):
            by_file.setdefault((r["file"], r["task"]), []).append(r["speedup"])
    out["repeats"] = [{"file": f, "task": t, "n": len(s), "min": min(s), "max": max(s), "median": statistics.median(s),
                       "spread_max_over_min_minus_1": max(s) / min(s) - 1}
                      for (f, t), s in by_file.items() if len(s) > 1]
    with open(a.out, "w") as f:
        json.dump(out, f, indent=2)
    print(f"{'file':42s} {'status':20s} {'target':15s} {'speedup':>8s}  expected")
    for r in rows:
        if "error" in r:
            print(f"{str(r['file']):42s} ERROR {r['error'][:80]}")
            continue
        exp = f"{r.get('expected_status', '-')}/{r.get('expected_target_verdict', '-')}"
        mark = "" if "as_expected" not in r else ("ok" if r["as_expected"] else "UNEXPECTED")
        sp = f"{r['speedup']:.3f}" if r.get("speedup") else "-"
        print(f"{os.path.basename(r['file']):42s} {str(r['status']):20s} {str(r['target_verdict']):15s} {sp:>8s}  {exp} {mark}")
    for rep in out["repeats"]:
        print(f"repeats of {os.path.basename(rep['file'])}: n={rep['n']} speedup min {rep['min']:.4f} max {rep['max']:.4f}"
              f" spread {100 * rep['spread_max_over_min_minus_1']:.2f}%")
    print("all as expected" if ok_all else ("NO VERDICTS" if not rows else "SOME RESULTS DIFFER FROM THE MANIFEST"))
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
