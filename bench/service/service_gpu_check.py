#!/usr/bin/env python3
"""The checks of bench/service/service_gpu.sh, one subcommand per case, each writing its own JSON under --out
and printing one line per example; exit 0 only when every expectation of the case held.

  upstream --url URL --out DIR --target T FILE[@TASK]...
                                           the files (each of the GEMM task unless @TASK names
                                           another) through the upstream-format client
                                           (tests/service/upstream_client.py), all at once with the
                                           cache bypassed, then again: every answer from the result
                                           cache, in under a second in total
  kill --url URL --out DIR --file F --client-out J
                                           waits until a GPU worker holds the job of F (submitted by
                                           `ptxbench eval --remote` in the background), SIGKILLs
                                           that worker, and records who held it
  kill-after --url URL --out DIR           after the client returned: the job finished once, after a
                                           lost lease, by the other GPU worker
  ready --url URL [--gpu N]                 exit 0 once /health lists N healthy GPU workers and a CPU one
  fetch --url URL PATH FILE                GET PATH into FILE
  compare --out DIR --direct D.json [--speedup-tolerance X] NAME=FILE...
                                           every service result against the direct `ptxbench eval`
                                           of the same files: status, target-instruction verdict and
                                           deciding stage identical; with --speedup-tolerance (when
                                           the direct run had the GPU to itself), each passing
                                           speedup within that share of the direct one
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/service/ -> the checkout
sys.path.insert(0, os.path.join(root, "tests", "service"))
from upstream_client import UpstreamClient, check_task_response, solution_from_file  # noqa: E402

TASK = "gemm_n7168_k5120"


def get(url, path):
    with urllib.request.urlopen(url + path, timeout=30) as r:
        return json.loads(r.read())


def key_of(v):
    """What must be identical between two verdicts of the same candidate."""
    return {"status": v.get("status"), "outcome": v.get("outcome"),
            "target_verdict": (v.get("target_instructions") or {}).get("verdict"),
            "deciding_stage": v.get("deciding_stage", "")}


def speedup_of(v):
    return (v.get("timing") or {}).get("speedup") if v.get("status") == "PASSED" else None


def medians_of(v):
    """The candidate's and the reference's median ms of a passing verdict: which side moved when two
    evaluations of one candidate disagree."""
    t = (v.get("timing") or {}) if v.get("status") == "PASSED" else {}
    c, r = (t.get("candidate") or {}).get("median_ms"), (t.get("reference") or {}).get("median_ms")
    return (c, r) if c and r else None


def write(out, name, doc):
    with open(os.path.join(out, name), "w") as f:
        json.dump(doc, f, indent=2)


# --- upstream: the upstream-format client, fresh then cached -----------------------------------------
def cmd_upstream(a):
    client = UpstreamClient(a.url)
    sols = []
    for spec in a.files:
        path, _, task = spec.partition("@")
        sol = solution_from_file(os.path.join(root, path), task or TASK)
        if not path.endswith(".json"):
            # Wrapped as `ptxbench eval` wraps a .cu file (docs/service.md, known limits: the content
            # key covers the whole spec), so step 3's `eval --remote` of the same files is answered
            # from the cache these evaluations fill.
            sol["name"] = os.path.splitext(os.path.basename(path))[0]
            sol["spec"]["target_hardware"] = [a.target]
            sol["spec"]["binding"] = "ptxbench"
        sols.append((path, sol))

    def submit(bypass):
        def one(item):
            path, sol = item
            t0 = time.time()
            task_id, norm = client.evaluate(sol, None, **({"cache": "bypass"} if bypass else {}))
            t = client.wait(task_id, max_wait=a.max_wait, poll=20)
            # One line as each job ends (or is given up on), so a run cut short still says how far it got.
            print(f"  {'resubmitted' if not bypass else 'evaluated'} {path}: {t.get('status')} after "
                  f"{time.time() - t0:.1f} s", flush=True)
            return {"file": path, "task_id": task_id, "normalized_solution_name": norm,
                    "seconds": round(time.time() - t0, 3), "response": t}
        with ThreadPoolExecutor(max_workers=len(sols)) as pool:
            return list(pool.map(one, sols))

    samples, stop = [], threading.Event()
    sampler = threading.Thread(target=gpu_utilization_sampler, args=(samples, stop), daemon=True)
    busy0 = gpu_busy_seconds(a.url)
    sampler.start()
    t0 = time.time()
    first = submit(bypass=True)
    wall = time.time() - t0
    stop.set()
    sampler.join()
    busy1 = gpu_busy_seconds(a.url)
    t1 = time.time()
    unfinished = [r["file"] for r in first if r["response"].get("status") not in ("completed", "failed")]
    if unfinished:
        # Resubmitting would only wait as long again for the same jobs.
        print(f"not resubmitted: {len(unfinished)} job(s) unfinished after {a.max_wait:g} s", flush=True)
        second = [{"response": {}, "seconds": 0.0} for _ in first]
    else:
        second = submit(bypass=False)
    cached_wall = time.time() - t1

    ok, rows = True, []
    for r, c in zip(first, second):
        t = r["response"]
        problems = []
        try:
            check_task_response(t)
        except AssertionError as e:
            problems.append(f"not upstream's TaskResponse: {e}")
        v = (t.get("ptxbench") or {}).get("verdict") or {}
        if t.get("status") != "completed" or not v:
            problems.append(f"task {t.get('status')}: {t.get('error')}")
        trace_status = t["traces"][0]["evaluation"]["status"] if t.get("traces") else None
        if v and trace_status != v.get("status"):
            problems.append(f"trace status {trace_status} but verdict {v.get('status')}")
        cached = bool((c["response"].get("ptxbench") or {}).get("cached"))
        if not cached:
            problems.append("resubmission not answered from the cache")
        cv = (c["response"].get("ptxbench") or {}).get("verdict") or {}
        if cv and key_of(cv) != key_of(v):
            problems.append("cached verdict differs from the evaluated one")
        ok = ok and not problems
        rows.append({"file": r["file"], **key_of(v), "speedup": speedup_of(v), "seconds": r["seconds"],
                     "workers": (t.get("ptxbench") or {}).get("workers"), "times": (t.get("ptxbench") or {}).get("times"),
                     "harness_session": (v.get("environment") or {}).get("harness_session"),
                     "resubmission_cached": cached, "resubmission_seconds": c["seconds"], "problems": problems})
        print(f"{r['file']:<40} {str(v.get('status')):<20} {str(key_of(v)['target_verdict']):<15} "
              f"{r['seconds']:6.1f} s  resubmitted: {'cached' if cached else 'NOT CACHED'} {c['seconds']:.3f} s"
              + (f"  PROBLEMS: {'; '.join(problems)}" if problems else ""))
    if cached_wall >= 1.0:
        ok = False
    summary = {"evaluations": len(sols), "wall_seconds": round(wall, 1),
               "evaluations_per_minute": round(60 * len(sols) / wall, 2) if wall > 0 else None,
               "gpu_stage_seconds_per_wall_second": round((busy1 - busy0) / wall, 3) if wall > 0 else None,
               # nvidia-smi's utilization.gpu while the service evaluated; the direct evaluation of
               # bench/service/service_gpu.sh shares the GPU, so this is the GPU's busy fraction, not the service's.
               "gpu_busy_fraction_nvidia_smi": round(sum(samples) / len(samples) / 100, 3) if samples else None,
               "nvidia_smi_samples": len(samples),
               # From the verdicts' lease holds (granted_unix_ms, held_ms): the part of the time from the
               # first grant to the last release in which some harness held the GPU for a stage (shared or
               # exclusive), and in which one measured with it to itself.
               **lease_occupancy([r["response"] for r in first]),
               "resubmission_wall_seconds": round(cached_wall, 3), "resubmission_under_1s": cached_wall < 1.0,
               "ok": ok, "rows": rows}
    write(a.out, "upstream_client.json", {"summary": summary, "responses": [r["response"] for r in first],
                                          "resubmissions": [c["response"] for c in second]})
    print(f"{len(sols)} evaluations in {wall:.1f} s ({summary['evaluations_per_minute']} per minute, "
          f"GPU-stage seconds per second {summary['gpu_stage_seconds_per_wall_second']}, GPU busy "
          f"{summary['gpu_busy_fraction_nvidia_smi']} by nvidia-smi, shared with the direct eval; GPU held by a stage "
          f"{summary['gpu_held_fraction']}, exclusively {summary['gpu_exclusive_fraction']} of the "
          f"{summary['lease_window_seconds']} s from the first grant to the last release); "
          f"resubmitting all: {cached_wall:.3f} s ({'under' if cached_wall < 1 else 'OVER'} 1 s)")
    print("upstream client: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


def union_seconds(intervals):
    """The length of the union of [start, end) intervals (seconds)."""
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def lease_occupancy(responses):
    """GPU occupancy from the verdicts' lease holds (docs/gpu-evaluation.md): every stage that used the
    GPU held its lease, so the union of the holds is when the GPU was in use by the evaluations, and
    the union of the exclusive ones when it measured. None when the holds carry no grant time."""
    held, exclusive = [], []
    for t in responses:
        m = (((t or {}).get("ptxbench") or {}).get("verdict") or {}).get("measurement") or {}
        for h in m.get("holds") or []:
            start = (h.get("granted_unix_ms") or 0) / 1000.0
            if start <= 0:
                continue
            span = (start, start + (h.get("held_ms") or 0) / 1000.0)
            held.append(span)
            if h.get("exclusive"):
                exclusive.append(span)
    if not held:
        return {"gpu_held_fraction": None, "gpu_exclusive_fraction": None, "lease_window_seconds": None}
    window = max(b for _, b in held) - min(a for a, _ in held)
    frac = lambda spans: round(union_seconds(spans) / window, 3) if window > 0 else None
    return {"gpu_held_fraction": frac(held), "gpu_exclusive_fraction": frac(exclusive),
            "lease_window_seconds": round(window, 1)}


def gpu_utilization_sampler(samples, stop):
    import subprocess
    while not stop.is_set():
        try:
            r = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", "0"],
                               capture_output=True, text=True, timeout=5)
            samples.append(float(r.stdout.strip().splitlines()[0]))
        except Exception:
            pass  # no nvidia-smi (a dry run): no samples, reported as null
        stop.wait(0.5)


def gpu_busy_seconds(url):
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=30) as r:
            text = r.read().decode()
    except Exception:
        return 0.0
    return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines()
               if l.startswith("ptxbench_worker_gpu_busy_seconds_total{"))


# --- kill: SIGKILL the GPU worker that holds a job mid-run ------------------------------------------
def cmd_kill(a):
    deadline = time.time() + a.wait
    seen = None
    while time.time() < deadline:
        h = get(a.url, "/health")
        for w in h["workers"]:
            if w.get("role") == "gpu" and w.get("current_job"):
                t = get(a.url, f"/tasks/{w['current_job']}?timeout=0")
                if (t.get("ptxbench") or {}).get("state") == "running":
                    seen = (w, t)
                    break
        if seen:
            break
        time.sleep(0.1)
    if not seen:
        write(a.out, "kill.json", {"ok": False, "error": "no GPU worker held a running job in time"})
        print("kill: FAILED (no GPU worker held a running job in time)")
        return 1
    w, t = seen
    time.sleep(a.delay)  # into the GPU stages, not at their very start
    before = get(a.url, f"/tasks/{w['current_job']}?timeout=0")
    os.kill(int(w["pid"]), signal.SIGKILL)
    killed_at = time.time()
    record = {"job_id": w["current_job"], "killed_worker": w["id"], "killed_pid": w["pid"],
              "state_when_killed": (before.get("ptxbench") or {}).get("state"),
              "attempts_when_killed": (before.get("ptxbench") or {}).get("attempts"), "killed_at": killed_at,
              "other_gpu_workers": [{"id": x["id"], "pid": x["pid"]} for x in get(a.url, "/health")["workers"]
                                    if x.get("role") == "gpu" and x["id"] != w["id"]]}
    write(a.out, "kill.json", record)
    print(f"kill: SIGKILL to {w['id']} (pid {w['pid']}) holding job {w['current_job']} in state "
          f"{record['state_when_killed']}")
    return 0


def cmd_kill_after(a):
    rec = json.load(open(os.path.join(a.out, "kill.json")))
    if "job_id" not in rec:
        print("kill-after: FAILED (nothing was killed)")
        return 1
    t = get(a.url, f"/tasks/{rec['job_id']}?timeout=30")
    p = t.get("ptxbench") or {}
    h = get(a.url, "/health")
    completed_by = (p.get("workers") or {}).get("completed_by")
    pid_now = {w["id"]: w["pid"] for w in h["workers"]}.get(completed_by)
    elsewhere_id = completed_by is not None and completed_by != rec["killed_worker"]
    elsewhere_process = elsewhere_id or (pid_now is not None and pid_now != rec["killed_pid"])
    session = ((p.get("verdict") or {}).get("environment") or {}).get("harness_session") or {}
    problems = []
    if t.get("status") != "completed" or p.get("state") != "done":
        problems.append(f"job {t.get('status')}/{p.get('state')}: {t.get('error')}")
    if (p.get("lost_leases") or 0) < 1:
        problems.append("no lost lease recorded")
    if not elsewhere_id:  # serve restarts the killed worker only after --worker-restart-ms (20 s)
        problems.append(f"finished by {completed_by}, not by another worker")
    rec.update({"after": {"status": t.get("status"), "state": p.get("state"), "attempts": p.get("attempts"),
                          "lost_leases": p.get("lost_leases"), "completed_by": completed_by,
                          "completed_by_pid_now": pid_now, "finished_by_another_worker_id": elsewhere_id,
                          "finished_by_another_process": elsewhere_process, "harness_session": session,
                          "times": p.get("times"), "verdict": key_of(p.get("verdict") or {})},
                "problems": problems, "ok": not problems})
    write(a.out, "kill.json", rec)
    print(f"kill: job {rec['job_id']} {p.get('state')} after {p.get('attempts')} attempts, "
          f"{p.get('lost_leases')} lost lease(s), completed by {completed_by} (pid {pid_now}; killed: "
          f"{rec['killed_worker']} pid {rec['killed_pid']}) -> {'OK' if not problems else 'FAILED: ' + '; '.join(problems)}")
    return 0 if not problems else 1


# --- compare: every service path against the direct evaluation --------------------------------------
def verdicts_by_file(path):
    """file -> verdict, from `ptxbench eval --out` (a list with "file") or upstream_client.json."""
    doc = json.load(open(path))
    out = {}
    if isinstance(doc, dict) and "responses" in doc:
        for row, resp in zip(doc["summary"]["rows"], doc["responses"]):
            out[os.path.normpath(row["file"])] = (resp.get("ptxbench") or {}).get("verdict") or {"error": resp.get("error")}
    else:
        for v in (doc if isinstance(doc, list) else [doc]):
            out[os.path.normpath(v.get("file", ""))] = v
    return out


def cmd_compare(a):
    try:
        direct = verdicts_by_file(a.direct)
    except (OSError, ValueError) as e:
        print(f"compare: FAILED (the direct evaluation wrote nothing readable: {e})")
        write(a.out, "compare.json", {"ok": False, "error": str(e)})
        return 1
    ok, report = True, {}
    for spec in a.paths:
        name, path = spec.split("=", 1)
        rows = []
        try:
            service = verdicts_by_file(path)
        except (OSError, ValueError) as e:
            print(f"{name}: FAILED (unreadable: {e})")
            report[name] = {"error": str(e)}
            ok = False
            continue
        for f, v in service.items():
            d = direct.get(f)
            if d is None:
                rows.append({"file": f, "problem": "not in the direct evaluation"})
                ok = False
                continue
            same = "error" not in v and "error" not in d and key_of(v) == key_of(d)
            s_v, s_d = speedup_of(v), speedup_of(d)
            close = None
            if a.speedup_tolerance is not None and s_v and s_d:
                close = abs(s_v / s_d - 1) <= a.speedup_tolerance
                same = same and close
            ok = ok and same
            m_v, m_d = medians_of(v), medians_of(d)
            moved = ""
            if m_v and m_d:
                moved = (f"  candidate {100 * (m_v[0] / m_d[0] - 1):+.2f}%, reference {100 * (m_v[1] / m_d[1] - 1):+.2f}%")
            rows.append({"file": f, "service": key_of(v), "direct": key_of(d), "identical": same,
                         "speedup_service": s_v, "speedup_direct": s_d, "speedup_within_tolerance": close,
                         "medians_ms_service": m_v, "medians_ms_direct": m_d,
                         "measurement_service": v.get("measurement"), "measurement_direct": d.get("measurement")})
            print(f"{name:<10} {f:<40} service {key_of(v)['status']}/{key_of(v)['target_verdict']}/"
                  f"{key_of(v)['deciding_stage'] or '-'}  direct {key_of(d)['status']}/{key_of(d)['target_verdict']}/"
                  f"{key_of(d)['deciding_stage'] or '-'}"
                  + (f"  speedup {s_v:.4f} vs {s_d:.4f} ({100 * (s_v / s_d - 1):+.2f}%)" if s_v and s_d else "")
                  + moved
                  + f"  {'identical' if same else 'DIFFERENT'}")
        report[name] = rows
    write(a.out, "compare.json", {"ok": ok, "paths": report})
    print("service verdicts identical to the direct evaluation: " + ("yes" if ok else "NO"))
    return 0 if ok else 1


def cmd_ready(a):
    """Exit 0 once the service answers /health with at least --gpu healthy GPU workers and a CPU worker."""
    try:
        h = get(a.url, "/health")
    except Exception:
        return 1
    gpus = sum(1 for w in h["workers"] if w.get("role") == "gpu" and w.get("healthy"))
    return 0 if gpus >= a.gpu and any(w.get("role") == "cpu" for w in h["workers"]) else 1


def cmd_fetch(a):
    """GET a path and write the body to a file (no curl needed on the GPU host)."""
    try:
        with urllib.request.urlopen(a.url + a.path, timeout=30) as r:
            body = r.read()
    except Exception as e:
        body = f"GET {a.path} failed: {e}\n".encode()
    with open(a.to, "wb") as f:
        f.write(body)
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("ready")
    r.add_argument("--url", required=True)
    r.add_argument("--gpu", type=int, default=2)
    f = sub.add_parser("fetch")
    f.add_argument("--url", required=True)
    f.add_argument("path")
    f.add_argument("to")
    u = sub.add_parser("upstream")
    u.add_argument("--url", required=True)
    u.add_argument("--out", required=True)
    u.add_argument("--max-wait", type=float, default=150)
    u.add_argument("--target", required=True, help="the suite target `eval --remote` names (its cache key)")
    u.add_argument("files", nargs="+")
    k = sub.add_parser("kill")
    k.add_argument("--url", required=True)
    k.add_argument("--out", required=True)
    k.add_argument("--wait", type=float, default=40)
    k.add_argument("--delay", type=float, default=1.0)
    ka = sub.add_parser("kill-after")
    ka.add_argument("--url", required=True)
    ka.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("--out", required=True)
    c.add_argument("--direct", required=True)
    c.add_argument("--speedup-tolerance", type=float, default=None,
                   help="also require each passing speedup within this share of the direct one (e.g. 0.01)")
    c.add_argument("paths", nargs="+", help="NAME=FILE: a service result to compare")
    a = p.parse_args()
    sys.exit({"ready": cmd_ready, "fetch": cmd_fetch, "upstream": cmd_upstream, "kill": cmd_kill, "kill-after": cmd_kill_after,
              "compare": cmd_compare}[a.cmd](a))


if __name__ == "__main__":
    main()
