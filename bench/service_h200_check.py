#!/usr/bin/env python3
"""Drives bench/service_h200.sh: submits the examples to a running `ptxbench serve` concurrently
through the upstream-format client (tests/service/upstream_client.py), compares every verdict's
FlashInfer status and target-instruction verdict with the examples' manifests, reports evaluations
per minute and the GPU's busy fraction (nvidia-smi utilization sampled every 0.5 s, and the service's
own GPU-stage seconds from /metrics), then submits the same set again and checks that every answer
comes from the result cache, in under a second in total."""
import argparse, json, os, subprocess, sys, threading, time
from concurrent.futures import ThreadPoolExecutor

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "service"))
from upstream_client import UpstreamClient, solution_from_file, check_task_response  # noqa: E402


def examples():
    """(file, definition, expected status, expected target verdict) for the set the brief names."""
    m = json.load(open(os.path.join(root, "examples", "manifest.json")))
    up = json.load(open(os.path.join(root, "examples", "upstream", "manifest.json")))
    want = {"attention/plain_fwd.cu", "attention/wgmma_fwd.cu"}
    out = []
    for e in m["examples"]:
        if e["file"].startswith("gemm/") or e["file"] in want:
            out.append((os.path.join("examples", e["file"]), e["task"], e["expected_status"], e["expected_target_verdict"]))
    for e in up["examples"]:
        if e["file"] == "gemm_tvm_ffi.json":
            out.append((os.path.join("examples", "upstream", e["file"]), e["task"], e["expected_status"],
                        e["expected_target_verdict"]))
    return out


def gpu_busy_sampler(samples, stop):
    while not stop.is_set():
        try:
            r = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", "0"],
                               capture_output=True, text=True, timeout=5)
            samples.append(float(r.stdout.strip().splitlines()[0]))
        except Exception:
            pass
        stop.wait(0.5)


def busy_seconds(url):
    import urllib.request
    text = urllib.request.urlopen(url + "/metrics", timeout=30).read().decode()
    return sum(float(l.rsplit(" ", 1)[1]) for l in text.splitlines() if l.startswith("ptxbench_worker_gpu_busy_seconds_total{"))


def submit_all(client, items, bypass):
    def one(item):
        path, task, _, _ = item
        sol = solution_from_file(os.path.join(root, path), task)
        sol["name"] = os.path.splitext(os.path.basename(path))[0]
        t0 = time.time()
        opts = {"cache": "bypass"} if bypass else {}
        task_id, norm = client.evaluate(sol, None, **opts)
        t = client.wait(task_id, max_wait=900, poll=30)
        return {"file": path, "task_id": task_id, "normalized_solution_name": norm, "seconds": time.time() - t0, "response": t}
    with ThreadPoolExecutor(max_workers=len(items)) as pool:
        return list(pool.map(one, items))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    client = UpstreamClient(a.url)
    items = examples()
    health = client.health()
    samples, stop = [], threading.Event()
    sampler = threading.Thread(target=gpu_busy_sampler, args=(samples, stop), daemon=True)
    busy0 = busy_seconds(a.url)
    sampler.start()
    t0 = time.time()
    first = submit_all(client, items, bypass=True)  # a fresh evaluation even if an earlier run cached them
    wall = time.time() - t0
    stop.set()
    sampler.join()
    busy1 = busy_seconds(a.url)
    t1 = time.time()
    second = submit_all(client, items, bypass=False)
    cached_wall = time.time() - t1

    rows, ok = [], True
    for (path, task, want_status, want_target), r, c in zip(items, first, second):
        t = r["response"]
        check_task_response(t)
        v = (t.get("ptxbench") or {}).get("verdict") or {}
        status = t["traces"][0]["evaluation"]["status"] if t.get("traces") else t["status"]
        target = (v.get("target_instructions") or {}).get("verdict")
        cached = bool((c["response"].get("ptxbench") or {}).get("cached"))
        same = c["response"].get("traces") == t.get("traces") or (
            c["response"].get("traces") and t.get("traces") and
            c["response"]["traces"][0]["evaluation"] == t["traces"][0]["evaluation"])
        match = status == want_status and target == want_target
        ok = ok and match and cached and bool(same)
        session = (v.get("environment") or {}).get("harness_session")
        rows.append({"file": path, "task": task, "status": status, "expected_status": want_status, "target_verdict": target,
                     "expected_target_verdict": want_target, "match": match, "seconds": round(r["seconds"], 2),
                     "service": {k: t["ptxbench"].get(k) for k in ("workers", "times", "attempts")},
                     "harness_session": session, "resubmission_cached": cached, "resubmission_same_trace": bool(same),
                     "resubmission_seconds": round(c["seconds"], 3), "message": v.get("message")})
    summary = {
        "url": a.url, "gpu_workers": [w for w in health["workers"] if w.get("role") == "gpu"],
        "evaluations": len(items), "wall_seconds": round(wall, 1),
        "evaluations_per_minute": round(60 * len(items) / wall, 2),
        "gpu_busy_fraction_nvidia_smi": round(sum(samples) / len(samples) / 100, 3) if samples else None,
        "gpu_busy_fraction_service": round((busy1 - busy0) / wall, 3),
        "nvidia_smi_samples": len(samples),
        "resubmission_wall_seconds": round(cached_wall, 3), "resubmission_under_1s": cached_wall < 1.0,
        "all_match": all(r["match"] for r in rows), "all_cached": all(r["resubmission_cached"] for r in rows),
        "harness_sessions": sorted({(r["harness_session"] or {}).get("pid") for r in rows if r["harness_session"]}),
        "examples": rows,
    }
    ok = ok and cached_wall < 1.0
    with open(os.path.join(a.out, "service_h200.json"), "w") as f:
        json.dump({"summary": summary, "responses": [r["response"] for r in first]}, f, indent=2)
    lines = [f"{r['file']:<42} {r['status']:<20} {str(r['target_verdict']):<15} expected {r['expected_status']}/"
             f"{r['expected_target_verdict']}: {'match' if r['match'] else 'MISMATCH'}  {r['seconds']:.1f} s"
             f"  resubmitted: {'cached' if r['resubmission_cached'] else 'NOT cached'} {r['resubmission_seconds']:.3f} s"
             for r in rows]
    lines += ["", f"{len(items)} evaluations in {wall:.1f} s: {summary['evaluations_per_minute']} per minute",
              f"GPU busy: {summary['gpu_busy_fraction_nvidia_smi']} (nvidia-smi utilization.gpu, mean of "
              f"{len(samples)} samples), {summary['gpu_busy_fraction_service']} (service GPU-stage seconds / wall)",
              f"harness processes that served these candidates: {summary['harness_sessions']}",
              f"resubmitting the same {len(items)}: {cached_wall:.3f} s in total, "
              f"{'all cached' if summary['all_cached'] else 'NOT all cached'} "
              f"({'under' if cached_wall < 1 else 'OVER'} 1 s)",
              f"verdicts match the manifests: {summary['all_match']}"]
    text = "\n".join(lines) + "\n"
    open(os.path.join(a.out, "service_h200.txt"), "w").write(text)
    sys.stdout.write(text)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
