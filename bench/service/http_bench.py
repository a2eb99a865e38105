#!/usr/bin/env python3
"""Throughput of `ptxbench serve` end to end over HTTP (issue 13): JOBS distinct submissions through
upstream's API (tests/service/upstream_client.py: POST /evaluate, then POST /tasks/batch long-polls)
with 1, 2 and 4 fake GPU workers (local workers, the test-only fake evaluator; each GPU half sleeps
GPU_MS, the CPU half is instant and served by 2 CPU workers), SQLite queue. The fake GPU work is a
fixed sleep, so the scaling measures the service (HTTP, queue, leases, artifact hand-off), not this
machine's cores. Goal: >= 3.5x the one-worker throughput with 4 workers."""
import argparse, os, re, signal, subprocess, sys, tempfile, threading, time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))  # bench/service/ -> the checkout
sys.path.insert(0, os.path.join(root, "tests", "service"))
from upstream_client import UpstreamClient  # noqa: E402


def run(ptxbench, gpus, jobs, gpu_ms, tag):
    with tempfile.TemporaryDirectory(prefix="ptxbench-http-bench-") as tmp:
        log = open(os.path.join(tmp, "serve.log"), "w+")
        server = subprocess.Popen([ptxbench, "--root", root, "--cache-dir", os.path.join(tmp, "cache"), "serve",
                                   "--listen", "127.0.0.1:0", "--service-dir", os.path.join(tmp, "service"),
                                   "--evaluator", "fake", "--fake-gpus", str(gpus), "--fake-delay-ms", str(gpu_ms),
                                   "--cpu-workers", "2", "--poll-ms", "10"], stdout=log, stderr=log)
        try:
            url = None
            for _ in range(400):
                log.seek(0)
                m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read())
                if m:
                    url = m.group(1)
                    break
                time.sleep(0.05)
            if not url:
                raise SystemExit("serve did not start")
            c = UpstreamClient(url)
            for _ in range(100):  # every local worker registered
                if len([w for w in c.health()["workers"] if w["healthy"]]) == gpus + 2:
                    break
                time.sleep(0.1)
            sol = lambda i: {"name": f"b{i}", "definition": "gemm_n7168_k5120", "author": "bench",
                             "spec": {"language": "cuda", "target_hardware": ["H200"], "entry_point": "kernel.cu::run"},
                             "sources": [{"path": "kernel.cu", "content": f"// {tag} job {i} wgmma\n"}]}
            t0 = time.time()
            ids = [None] * jobs
            def submit(k):
                for i in range(k, jobs, 8):
                    ids[i] = c.evaluate(sol(i))[0]
            threads = [threading.Thread(target=submit, args=(k,)) for k in range(8)]
            for t in threads: t.start()
            for t in threads: t.join()
            submitted = time.time() - t0
            done = c.batch(ids, timeout=600)
            wall = time.time() - t0
            assert all(d["status"] == "completed" for d in done), [d["status"] for d in done]
            queue_s = sorted(d["ptxbench"]["times"]["gpu_wait_s"] or 0 for d in done)
            return wall, submitted, queue_s[len(queue_s) // 2]
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ptxbench", default=os.path.join(root, "build", "bin", "ptxbench"))
    p.add_argument("--jobs", type=int, default=200)
    p.add_argument("--gpu-ms", type=int, default=100)
    a = p.parse_args()
    print(f"# {a.jobs} jobs through HTTP (POST /evaluate x {a.jobs} from 8 threads, then one POST /tasks/batch), "
          f"fake GPU half {a.gpu_ms} ms, 2 CPU workers, SQLite queue")
    print("| GPU workers | wall s | submit s | jobs/s | vs 1 worker | ideal | median wait for a GPU s |")
    print("|---|---|---|---|---|---|---|")
    base = None
    rows = []
    for gpus in (1, 2, 4):
        wall, submitted, wait = run(a.ptxbench, gpus, a.jobs, a.gpu_ms, f"g{gpus}-{time.time()}")
        rate = a.jobs / wall
        base = base or rate
        rows.append((gpus, rate / base))
        print(f"| {gpus} | {wall:.2f} | {submitted:.2f} | {rate:.1f} | {rate / base:.2f}x | {gpus}x | {wait:.2f} |", flush=True)
    s4 = rows[-1][1]
    print(f"4 GPU workers: {s4:.2f}x the throughput of one (goal >= 3.5x): {'met' if s4 >= 3.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
