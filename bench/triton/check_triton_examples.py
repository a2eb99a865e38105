#!/usr/bin/env python3
"""Checks `ptxbench eval --out` verdicts of the Triton examples against examples/triton/manifest.json
(bench/triton/triton_examples.sh, at the end of each part) and, when asked, the replayed Triton
trajectory.

  check_triton_examples.py --manifest examples/triton/manifest.json --out summary.json
                           [--expect a.py,b.py] [--trajectory TRAJ.json] EVAL.json [...]

--expect names the examples this run must have evaluated (default: every example in the manifest;
"none": no eval, only the trajectory); bench/triton/triton_examples.sh runs them in parts. A verdict
whose dynamic check was skipped (the failure pairs run with --no-dynamic-check) is not held to the manifest's executed families: its target
verdict may be the static one, and the line says "executed not checked".

Per verdict it prints one line (file, outcome, deciding stage, target verdict, families in SASS and
executed, speedup) and what differs from the manifest. For the FIRST mismatch it prints everything
needed to find the cause from one GPU run: the verdict's message and full log, its stages, and the
Triton runner's own logs for that candidate (interpreter, torch and Triton versions, ptxas, the
warm-up, Python tracebacks), found in the harness's work folder by the candidate's stored path.
Exit status 0 when everything matches, 1 otherwise. Standard library only.
"""
import argparse, glob, json, os, sys


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        return [{"file": path, "error": f"cannot read {path}: {e}"}]
    return d if isinstance(d, list) else [d]


def families(counts):
    return sorted(k for k, v in (counts or {}).items() if v and v > 0)


def dynamic_skipped(v):
    return any(s.get("stage") == "dynamic_check" and s.get("outcome") == "skipped" for s in v.get("stages", []))


def check(v, e):
    """What differs between a verdict and its manifest entry (a list of strings)."""
    problems = []
    if "error" in v:
        return [v["error"]]
    no_dynamic = dynamic_skipped(v) and v.get("outcome") == "passed"
    if v.get("outcome") != e["expected_outcome"]:
        problems.append(f"outcome {v.get('outcome')} (expected {e['expected_outcome']})")
    if v.get("status") != e["expected_status"]:
        problems.append(f"status {v.get('status')} (expected {e['expected_status']})")
    if "expected_stage" in e and v.get("deciding_stage") != e["expected_stage"]:
        problems.append(f"decided at {v.get('deciding_stage') or '-'} (expected {e['expected_stage']})")
    if "expected_message" in e and e["expected_message"] not in (v.get("message") or ""):
        problems.append(f"message lacks {e['expected_message']!r}")
    ti = v.get("target_instructions") or {}
    static_ok = {"executed": ("executed", "present_in_sass", "deferred")}.get(e.get("expected_target_verdict"), ())
    if no_dynamic and ti.get("verdict") in static_ok:
        pass  # executed not checked in this run (no Nsight Compute); the static families still are
    elif "expected_target_verdict" in e and ti.get("verdict") != e["expected_target_verdict"]:
        problems.append(f"target verdict {ti.get('verdict')} (expected {e['expected_target_verdict']}): {ti.get('reason', '')}")
    for fam in e.get("families_in_sass", []):
        if fam not in families(ti.get("static_counts")):
            problems.append(f"{fam} not in the static SASS of Triton's cubins")
    for fam in [] if no_dynamic else e.get("families_executed", []):
        if fam not in families(ti.get("dynamic_counts")):
            problems.append(f"{fam} not executed (ncu)")
    return problems


def runner_logs(v):
    """The Triton runner logs of this candidate (their first line names its stored kernel.py)."""
    work = (v.get("environment") or {}).get("harness_work_dir")
    artifact = (v.get("build") or {}).get("artifact", "")
    if not work or not artifact:
        return []
    found = []
    for log in sorted(glob.glob(os.path.join(work, "c*-*", "runner-*.log"))):
        try:
            text = open(log, errors="replace").read()
        except OSError:
            continue
        if artifact in text:
            found.append((log, text))
    return found


def describe(v):
    ti = v.get("target_instructions") or {}
    timing = v.get("timing") or {}
    speed = f"{timing['speedup']:.3f}x" if isinstance(timing.get("speedup"), (int, float)) and v.get("outcome") == "passed" else "-"
    ran = "executed not checked" if dynamic_skipped(v) else f"ran {families(ti.get('dynamic_counts'))}"
    return (f"{os.path.basename(v.get('file', '?')):30} {v.get('task', '?'):26} {v.get('outcome', '?'):20} "
            f"{v.get('deciding_stage') or '-':12} target {str(ti.get('verdict', '?')):15} sass {families(ti.get('static_counts'))} "
            f"{ran} speedup {speed}")


def print_failure(v, problems):
    print("\n==== first mismatch:", os.path.basename(v.get("file", "?")))
    for p in problems:
        print("  -", p)
    print("message:", v.get("message"))
    for s in v.get("stages", []):
        print(f"  stage {s.get('stage'):14} {s.get('outcome'):9} {s.get('seconds', 0):7.2f}s  {s.get('summary', '')}")
    print("log:\n" + (v.get("log") or "(empty)"))
    env = v.get("environment") or {}
    print("sandbox:", json.dumps(env.get("sandbox"), indent=1)[:3000])
    logs = runner_logs(v)
    if not logs:
        print("(no runner log found for it under", env.get("harness_work_dir"), ")")
    for path, text in logs:
        print(f"---- {path}\n{text[-20000:]}")


def check_trajectory(path):
    try:
        t = json.load(open(path))
    except (OSError, ValueError) as e:
        return [f"trajectory {path}: {e}"], None
    fb = [m for m in t["messages"][3::2] if m.get("role") == "user" and "ptxbench" in (m.get("extra") or {})]
    labels = [m["extra"]["ptxbench"]["label"] for m in fb]
    problems = []
    if t["info"]["ptxbench"].get("language") != "triton":
        problems.append("trajectory language is not triton")
    if labels[:2] != ["rejected", "passed"]:
        problems.append(f"labels {labels} (expected ['rejected', 'passed'])")
    last = fb[-1]["extra"]["ptxbench"] if fb else {}
    if not last.get("target_correct"):
        problems.append(f"last turn not target-correct (target verdict {last.get('target_verdict')})")
    return problems, {"labels": labels, "exit_status": t["info"].get("exit_status"),
                      "last": {k: last.get(k) for k in ("label", "target_correct", "target_verdict", "speedup",
                                                        "dynamic_counts")},
                      "feedback": fb[-1]["content"] if fb else ""}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--trajectory")
    ap.add_argument("--expect", default="", help="comma-separated example files this run must cover")
    ap.add_argument("evals", nargs="*")
    a = ap.parse_args()
    if not a.evals and not a.trajectory:
        ap.error("nothing to check: give eval JSON files, --trajectory or both")
    manifest = {e["file"]: e for e in json.load(open(a.manifest))["examples"]}
    rows, first_bad, seen, verdicts = [], None, set(), []
    for path in a.evals:
        for v in load(path):
            verdicts.append(v)
            name = os.path.basename(v.get("file", path))
            e = manifest.get(name)
            if "error" in v:  # the eval wrote no readable verdicts (killed at its time limit?)
                problems = [v["error"]]
            else:
                problems = check(v, e) if e else [f"{name} is not in the manifest"]
            seen.add(name)
            print(("OK       " if not problems else "MISMATCH ") + describe(v))
            for p in problems:
                print("           -", p)
            rows.append({"file": name, "eval": path, "ok": not problems, "problems": problems,
                         "outcome": v.get("outcome"), "status": v.get("status"), "stage": v.get("deciding_stage"),
                         "message": v.get("message"),
                         "target_verdict": (v.get("target_instructions") or {}).get("verdict"),
                         "static_counts": (v.get("target_instructions") or {}).get("static_counts"),
                         "dynamic_counts": (v.get("target_instructions") or {}).get("dynamic_counts"),
                         "speedup": (v.get("timing") or {}).get("speedup"),
                         "stage_seconds": {s.get("stage"): s.get("seconds") for s in v.get("stages", [])}})
            if problems and first_bad is None:
                first_bad = (v, problems)
    expected = set() if a.expect == "none" else set(x for x in a.expect.split(",") if x) or set(manifest)
    unknown = sorted(expected - set(manifest))
    if unknown:
        print("--expect names files that are not in the manifest:", ", ".join(unknown))
        return 2
    missing = sorted(expected - seen)
    for m in missing:
        print("MISSING  ", m, "was not evaluated")
    traj = None
    if a.trajectory:
        problems, traj = check_trajectory(a.trajectory)
        print(("OK       " if not problems else "MISMATCH ") + f"replayed trajectory: {traj and traj['labels']}")
        for p in problems:
            print("           -", p)
        if traj:
            traj["problems"] = problems
    ok = all(r["ok"] for r in rows) and not missing and not (traj and traj["problems"]) and not (a.trajectory and traj is None)
    with open(a.out, "w") as f:
        json.dump({"ok": ok, "rows": rows, "missing": missing, "trajectory": traj}, f, indent=2)
    print(f"\n{sum(r['ok'] for r in rows)}/{len(rows)} verdicts as expected; missing {len(missing)}; "
          f"trajectory {'ok' if traj and not traj['problems'] else 'NOT ok' if a.trajectory else 'not checked'}")
    if first_bad:
        print_failure(*first_bad)
    else:
        # Everything matched: still show the head of one runner log, for the versions it records.
        for v in verdicts:
            logs = runner_logs(v)
            if logs:
                print(f"\n---- {logs[0][0]} (head)\n" + "\n".join(logs[0][1].splitlines()[:12]))
                break
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
