#!/usr/bin/env python3
"""Checks a GPU run of the Triton track (bench/triton/triton_gpu.sh) against what it must show: the
verdicts of `ptxbench eval --out` against examples/triton/manifest.json and
tests/exploits/triton/manifest.json, the honest kernel after every risky case, the replayed Triton
trajectory, and the service's verdicts against the direct evaluation's.

  check_triton.py --examples examples/triton/manifest.json --exploits tests/exploits/triton/manifest.json
                  [--expect-examples all|none|a.py,b.py] [--expect-exploits all|none|a.py,...]
                  [--trajectory TRAJ.json] [--service DIR] --out summary.json EVAL.json...

It prints one line per expectation, PASS or FAIL, and exits with the number of FAIL lines (at most
100; 2 for a usage error). The expectations:

  * each verdict as its manifest entry says: status (or one of a list), outcome, deciding stage, a
    fragment of the message, the target verdict, the instruction families in the SASS and executed,
    target-correct, a coverage ceiling per family, files the attack would have made (must_not_exist);
    a verdict of a Solution JSON made from an example ("gemm_tl_dot.py.json") is that example's;
  * "honest after X": in each eval output, every case that reached the GPU and is not itself an honest
    kernel is followed by an honest kernel (the exploit suite's control, or an example expected to
    pass) that passed, with the sandbox applied in every runner it started;
  * every example and exploit the run was meant to cover has a verdict (--expect-*, default all);
  * the trajectory: language triton, labels rejected then passed, the last turn target-correct;
  * the service (--service DIR, bench/service/service_gpu_check.py's files): every upstream-format response
    valid and answered again from the cache (upstream_client.json), and every service verdict's status,
    target verdict and deciding stage identical to the direct evaluation's (compare.json).

A verdict whose dynamic check was skipped (the quick runs pass --no-dynamic-check) is not held to the
executed families: its target verdict may be the static one ("executed not checked"). For the first
FAIL it prints what is needed to find the cause from one GPU run: the verdict's message, stages and
log, and the runner logs of that candidate found in the harness's work folder. Standard library only.
"""
import argparse
import glob
import json
import os
import sys

PASSING_STATIC = ("executed", "present_in_sass", "deferred")


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


def coverage(v, family):
    c = ((v.get("target_instructions") or {}).get("coverage") or {}).get(family) or {}
    return c.get("fraction")


class Case:
    """One expectation of either manifest, in one vocabulary."""

    def __init__(self, name, kind, status, outcome=None, stage=None, message="", target_verdict=None, in_sass=(),
                 executed=(), target_correct=None, max_coverage=None, must_not_exist=(), reaches_gpu=True):
        self.name, self.kind = name, kind
        self.statuses = status if isinstance(status, list) else [status]
        self.outcome, self.stage, self.message = outcome, stage, message
        self.target_verdict, self.in_sass, self.executed = target_verdict, list(in_sass), list(executed)
        self.target_correct, self.max_coverage = target_correct, max_coverage or {}
        self.must_not_exist, self.reaches_gpu = list(must_not_exist), reaches_gpu
        self.honest = False

    @property
    def risky(self):
        return self.reaches_gpu and not self.honest


def example_cases(path):
    doc = json.load(open(path))
    cases = {}
    for e in doc["examples"]:
        c = Case(e["file"], "example", e["expected_status"], e.get("expected_outcome"), e.get("expected_stage"),
                 e.get("expected_message", ""), e.get("expected_target_verdict"), e.get("families_in_sass", ()),
                 e.get("families_executed", ()), reaches_gpu=e.get("expected_stage") != "source_gate")
        c.honest = e["expected_status"] == "PASSED"
        cases[c.name] = c
    return cases


def exploit_cases(path):
    doc = json.load(open(path))
    cases = {}
    for name, e in doc["cases"].items():
        x = e.get("expect") or {}
        stage = e.get("expected_deciding_stage", "")
        c = Case(name, "exploit", e["expected_status"], stage=stage or None, message=e.get("message_contains", ""),
                 target_verdict=x.get("target_verdict"), target_correct=x.get("target_correct"),
                 max_coverage=x.get("max_coverage"), must_not_exist=e.get("must_not_exist", ()),
                 reaches_gpu=not e.get("cpu_check", False))
        c.honest = name == doc.get("honest_kernel")
        cases[name] = c
    return cases


def problems_of(v, c):
    """What differs between a verdict and its case (a list of strings)."""
    if "error" in v:
        return [v["error"]]
    p = []
    if v.get("status") not in c.statuses:
        p.append(f"status {v.get('status')} (expected {' or '.join(c.statuses)})")
    if c.outcome and v.get("outcome") != c.outcome:
        p.append(f"outcome {v.get('outcome')} (expected {c.outcome})")
    if c.stage and v.get("deciding_stage") != c.stage:
        p.append(f"decided at {v.get('deciding_stage') or '-'} (expected {c.stage})")
    if c.message and c.message not in (v.get("message") or ""):
        p.append(f"message lacks {c.message!r}")
    ti = v.get("target_instructions") or {}
    no_dynamic = dynamic_skipped(v) and v.get("outcome") == "passed"
    if c.target_verdict:
        static_ok = no_dynamic and c.target_verdict == "executed" and ti.get("verdict") in PASSING_STATIC
        if ti.get("verdict") != c.target_verdict and not static_ok:
            p.append(f"target verdict {ti.get('verdict')} (expected {c.target_verdict}): {ti.get('reason', '')}")
    for fam in c.in_sass:
        if fam not in families(ti.get("static_counts")):
            p.append(f"{fam} not in the static SASS of the plan's cubins")
    for fam in [] if no_dynamic else c.executed:
        if fam not in families(ti.get("dynamic_counts")):
            p.append(f"{fam} not executed (ncu)")
    if c.target_correct is not None and v.get("target_correct") != c.target_correct:
        p.append(f"target_correct {v.get('target_correct')} (expected {c.target_correct})")
    for fam, ceiling in c.max_coverage.items():
        f = coverage(v, fam)
        if f is None or f > ceiling:
            p.append(f"{fam} coverage {f} (expected at most {ceiling})")
    for path in c.must_not_exist:
        real = path.replace("$HOME", os.environ.get("HOME", "/root"))
        if os.path.exists(real):
            p.append(f"{real} exists: the attack got through")
    return p


def sandbox_problems(v):
    records = (v.get("environment") or {}).get("sandbox") or {}
    if not records:
        return ["no sandbox record"]
    return [f"runner '{proc}' reports the sandbox applied={rec.get('applied')}" for proc, rec in records.items()
            if rec.get("applied") is not True]


def describe(v):
    ti = v.get("target_instructions") or {}
    timing = v.get("timing") or {}
    speed = (f"{timing['speedup']:.3f}x" if isinstance(timing.get("speedup"), (int, float)) and v.get("outcome") == "passed"
             else "-")
    ran = "executed not checked" if dynamic_skipped(v) else f"ran {families(ti.get('dynamic_counts'))}"
    return (f"{v.get('status', '?')}/{v.get('deciding_stage') or '-'} target {ti.get('verdict', '?')} "
            f"sass {families(ti.get('static_counts'))} {ran} speedup {speed}")


def case_name(v, path):
    name = os.path.basename(v.get("file", path))
    return name[:-5] if name.endswith(".py.json") else name  # a Solution made from an example


def runner_logs(v):
    """The runner logs of this candidate (the Triton runner's name the candidate's stored kernel.py)."""
    work = (v.get("environment") or {}).get("harness_work_dir")
    artifact = (v.get("build") or {}).get("artifact", "")
    found = []
    if not work or not artifact:
        return found
    for log in sorted(glob.glob(os.path.join(work, "c*-*", "runner-*.log"))):
        try:
            text = open(log, errors="replace").read()
        except OSError:
            continue
        if artifact in text:
            found.append((log, text))
    return found


def print_failure(v, problems):
    print("\n==== first FAIL:", os.path.basename(v.get("file", "?")))
    for p in problems:
        print("  -", p)
    print("message:", v.get("message"))
    for s in v.get("stages", []):
        print(f"  stage {s.get('stage', '?'):14} {s.get('outcome', '?'):9} {s.get('seconds', 0) or 0:7.2f}s  {s.get('summary', '')}")
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


def service_lines(folder):
    """(ok, line) per service expectation, from bench/service/service_gpu_check.py's upstream_client.json and
    compare.json."""
    out = []
    try:
        up = json.load(open(os.path.join(folder, "upstream_client.json")))["summary"]
        for r in up["rows"]:
            out.append((not r["problems"], f"service   upstream response for {os.path.basename(r['file'])}: "
                        f"{r.get('status')}, resubmission {'cached' if r.get('resubmission_cached') else 'NOT cached'}"
                        + (f" — {'; '.join(r['problems'])}" if r["problems"] else "")))
        out.append((up.get("resubmission_under_1s", False),
                    f"service   resubmitting all took {up.get('resubmission_wall_seconds')} s (under 1 s)"))
    except (OSError, ValueError, KeyError, TypeError) as e:
        out.append((False, f"service   no readable upstream_client.json in {folder}: {e}"))
    try:
        cmp = json.load(open(os.path.join(folder, "compare.json")))
        if "error" in cmp:
            out.append((False, f"service   comparison failed: {cmp['error']}"))
        for name, rows in (cmp.get("paths") or {}).items():
            if isinstance(rows, dict):  # the service's file was unreadable
                out.append((False, f"service   {name}: {rows.get('error')}"))
                continue
            for r in rows:
                if "problem" in r:
                    out.append((False, f"service   {name} {os.path.basename(r['file'])}: {r['problem']}"))
                    continue
                key = lambda k: f"{k['status']}/{k['target_verdict']}/{k['deciding_stage'] or '-'}"
                out.append((r["identical"], f"service   {name} {os.path.basename(r['file'])}: service {key(r['service'])}, "
                            f"direct {key(r['direct'])}"))
    except (OSError, ValueError, KeyError, TypeError) as e:
        out.append((False, f"service   no readable compare.json in {folder}: {e}"))
    return out


def expected_names(arg, cases):
    if arg == "none":
        return set()
    if arg in ("", "all"):
        return set(cases)
    return {x for x in arg.split(",") if x}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--exploits", required=True)
    ap.add_argument("--expect-examples", default="all")
    ap.add_argument("--expect-exploits", default="all")
    ap.add_argument("--trajectory")
    ap.add_argument("--service")
    ap.add_argument("--out", required=True)
    ap.add_argument("evals", nargs="*")
    a = ap.parse_args()
    try:
        examples, exploits = example_cases(a.examples), exploit_cases(a.exploits)
    except (OSError, ValueError, KeyError) as e:
        print(f"check_triton: cannot read a manifest: {e}", file=sys.stderr)
        return 2
    both = set(examples) & set(exploits)
    if both:
        print(f"check_triton: {', '.join(sorted(both))} named in both manifests", file=sys.stderr)
        return 2
    cases = {**examples, **exploits}
    want = {"example": expected_names(a.expect_examples, examples), "exploit": expected_names(a.expect_exploits, exploits)}
    unknown = sorted((want["example"] - set(examples)) | (want["exploit"] - set(exploits)))
    if unknown:
        print(f"check_triton: --expect-* names files that are in no manifest: {', '.join(unknown)}", file=sys.stderr)
        return 2

    lines, rows, first_fail, seen = [], [], None, set()

    def line(ok, text, verdict=None, problems=()):
        nonlocal first_fail
        lines.append(ok)
        print(("PASS " if ok else "FAIL ") + text)
        for p in problems:
            print("        -", p)
        if not ok and verdict is not None and first_fail is None:
            first_fail = (verdict, list(problems))

    for path in a.evals:
        verdicts = load(path)
        for i, v in enumerate(verdicts):
            name = case_name(v, path)
            c = cases.get(name)
            if "error" in v:
                line(False, f"{name}: no verdict ({os.path.basename(path)})", v, [v["error"]])
                continue
            if c is None:
                line(False, f"{name}: in no manifest ({os.path.basename(path)})", v)
                continue
            seen.add(name)
            problems = problems_of(v, c)
            line(not problems, f"{c.kind:8} {name:34} {describe(v)}", v, problems)
            rows.append({"file": name, "kind": c.kind, "eval": path, "ok": not problems, "problems": problems,
                         "status": v.get("status"), "outcome": v.get("outcome"), "stage": v.get("deciding_stage"),
                         "message": v.get("message"),
                         "target_verdict": (v.get("target_instructions") or {}).get("verdict"),
                         "target_correct": v.get("target_correct"),
                         "static_counts": (v.get("target_instructions") or {}).get("static_counts"),
                         "dynamic_counts": (v.get("target_instructions") or {}).get("dynamic_counts"),
                         "speedup": (v.get("timing") or {}).get("speedup"),
                         "stage_seconds": {s.get("stage"): s.get("seconds") for s in v.get("stages", [])}})
            if c.risky:
                nxt = verdicts[i + 1] if i + 1 < len(verdicts) else None
                follower = cases.get(case_name(nxt, path)) if nxt else None
                why = []
                if nxt is None:
                    why.append("nothing was evaluated after it in the same harness")
                elif follower is None or not follower.honest:
                    why.append(f"followed by {case_name(nxt, path)}, not an honest kernel")
                elif nxt.get("status") != "PASSED":
                    why.append(f"{case_name(nxt, path)} ended {nxt.get('status')}: {nxt.get('message')}")
                else:
                    why += sandbox_problems(nxt)
                line(not why, f"honest after {name}: "
                     f"{case_name(nxt, path) if nxt else '-'} {nxt.get('status') if nxt else ''}", nxt, why)

    for kind, cs in (("example", examples), ("exploit", exploits)):
        for name in sorted(want[kind] - seen):
            line(False, f"{kind:8} {name:34} was not evaluated")

    traj = None
    if a.trajectory:
        problems, traj = check_trajectory(a.trajectory)
        line(not problems, f"trajectory {traj and traj['labels']} ({os.path.basename(a.trajectory)})", None, problems)
        if traj:
            traj["problems"] = problems
    service = []
    if a.service:
        for ok, text in service_lines(a.service):
            line(ok, text)
            service.append({"ok": ok, "line": text})

    failures = sum(1 for ok in lines if not ok)
    with open(a.out, "w") as f:
        json.dump({"ok": failures == 0, "checks": len(lines), "failures": failures, "rows": rows,
                   "missing": sorted((want["example"] | want["exploit"]) - seen), "trajectory": traj,
                   "service": service}, f, indent=2)
    print(f"\n{len(lines) - failures}/{len(lines)} expectations held; {failures} FAIL")
    if first_fail:
        print_failure(*first_fail)
    return min(failures, 100)


if __name__ == "__main__":
    sys.exit(main())
