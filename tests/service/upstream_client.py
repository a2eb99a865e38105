#!/usr/bin/env python3
"""A client for upstream PTXBench's profiling-service API (FlashInfer-Bench's `serve` app), written
for PTXBench's `ptxbench serve`, standard library only (urllib). It speaks upstream's API exactly:
POST /evaluate, /sanitize, /profile, /debug -> {task_id, normalized_solution_name}; GET /tasks/{id}?timeout=S
(long-poll); POST /tasks/batch {task_ids, timeout}; GET /health, /definitions, /definitions/{name},
/definitions/{name}/workloads, /workloads/{uuid}. Field names are upstream's; PTXBench's extra
"ptxbench" field in a TaskResponse is read only where a caller asks for it.

`agent_turn` does what upstream's agent client does with one candidate each turn (the test.py its
template_compile_measure_cuda.txt renders, re-expressed here): memcheck up to twice, stopping at the
first real fault; then /evaluate; after a RUNTIME_ERROR or TIMEOUT, /debug, whose report
(logs[0].metadata) replaces the failing traces' logs.

  upstream_client.py --url URL self-test                 # the CI check (a server with the fake evaluator)
  upstream_client.py --url URL submit FILE... [--definition NAME] [--kind evaluate|sanitize|profile]
                     [--target h200] [--concurrency N] [--out results.json]
A FILE is a Solution JSON, or a .cu kernel (wrapped as a Solution for --definition, entry "FILE::run").
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import sys
import time
import urllib.error
import urllib.request

STATUSES = {"PASSED", "INCORRECT_SHAPE", "INCORRECT_NUMERICAL", "INCORRECT_DTYPE", "RUNTIME_ERROR", "COMPILE_ERROR", "TIMEOUT"}
TASK_FIELDS = {"task_id", "kind", "status", "definition", "solution", "traces", "logs", "error"}


class ServiceError(Exception):
    def __init__(self, status, detail):
        super().__init__(f"HTTP {status}: {detail}")
        self.status, self.detail = status, detail


class UpstreamClient:
    def __init__(self, url, token=None, connect_retries=60):
        self.url, self.token, self.connect_retries = url.rstrip("/"), token, connect_retries

    def _request(self, method, path, body=None, read_timeout=40):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        for attempt in range(self.connect_retries + 1):
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=read_timeout) as r:
                    return json.loads(r.read())
            except urllib.error.HTTPError as e:
                text = e.read().decode(errors="replace")
                try:
                    detail = json.loads(text).get("detail", text)
                except ValueError:
                    detail = text
                if e.code == 503 and attempt < self.connect_retries:
                    time.sleep(1)
                    continue
                raise ServiceError(e.code, detail) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if attempt >= self.connect_retries:
                    raise
                time.sleep(1)

    # upstream's endpoints
    def health(self):
        return self._request("GET", "/health")

    def definitions(self):
        return self._request("GET", "/definitions")

    def definition(self, name):
        return self._request("GET", "/definitions/" + name)

    def workloads(self, name):
        return self._request("GET", f"/definitions/{name}/workloads")

    def workload(self, uuid):
        return self._request("GET", "/workloads/" + uuid)

    def submit(self, kind, solution, workload_uuids=None, **options):
        body = {"solution": solution, "workload_uuids": workload_uuids}
        body.update(options)
        r = self._request("POST", "/" + kind, body)
        return r["task_id"], r["normalized_solution_name"]

    def evaluate(self, solution, workload_uuids=None, **options):
        return self.submit("evaluate", solution, workload_uuids, **options)

    def sanitize(self, solution, workload_uuids=None, **options):
        return self.submit("sanitize", solution, workload_uuids, **options)

    def profile(self, solution, workload_uuids=None, **options):
        return self.submit("profile", solution, workload_uuids, **options)

    def debug(self, solution, workload_uuids=None, **options):
        return self.submit("debug", solution, workload_uuids, **options)

    def task(self, task_id, timeout=30):
        return self._request("GET", f"/tasks/{task_id}?timeout={timeout}", read_timeout=timeout + 30)

    def batch(self, task_ids, timeout=0):
        return self._request("POST", "/tasks/batch", {"task_ids": task_ids, "timeout": timeout}, read_timeout=timeout + 30)

    def wait(self, task_id, max_wait=3600, poll=30):
        """Long-polls until the task is completed or failed (upstream's client loop)."""
        deadline = time.time() + max_wait
        while True:
            t = self.task(task_id, timeout=poll)
            if t["status"] in ("completed", "failed") or time.time() > deadline:
                return t


def solution_hash(sol):
    """Upstream's Solution.hash(): SHA-1 over definition, language, entry point, binding, dependencies,
    then each source's path and content, in order, without separators."""
    h = hashlib.sha1()
    spec = sol["spec"]
    parts = [sol["definition"], spec["language"], spec["entry_point"], spec.get("binding") or ""]
    parts += list(spec.get("dependencies") or [])
    for src in sol["sources"]:
        parts += [src["path"], src["content"]]
    for p in parts:
        h.update(p.encode())
    return h.hexdigest()


def normalized_name(sol):
    return f"{sol['name']}_{solution_hash(sol)[:8]}"


def solution_from_file(path, definition=None):
    if path.endswith(".json"):
        with open(path) as f:
            return json.load(f)
    if not definition:
        raise SystemExit(f"{path}: a .cu kernel needs --definition")
    base = os.path.basename(path)
    with open(path) as f:
        content = f.read()
    return {"name": os.path.splitext(base)[0], "definition": definition, "author": "upstream_client",
            "spec": {"language": "cuda", "target_hardware": ["H200"], "entry_point": base + "::run",
                     "dependencies": [], "destination_passing_style": True, "binding": None},
            "sources": [{"path": base, "content": content}], "description": None}


def check_task_response(t):
    """Upstream's TaskResponse and Trace rules (null fields left out; the status blocks rule)."""
    extra = set(t) - TASK_FIELDS - {"ptxbench"}
    assert not extra, f"fields upstream does not have: {extra}"
    for k in ("task_id", "kind", "status", "definition", "solution"):
        assert k in t, f"TaskResponse without {k}"
    assert all(v is not None for v in t.values()), "null fields must be left out"
    assert t["status"] in ("pending", "running", "completed", "failed"), t["status"]
    for tr in t.get("traces", []):
        assert set(tr) >= {"definition", "workload", "solution", "evaluation"}, tr.keys()
        e = tr["evaluation"]
        assert e["status"] in STATUSES, e["status"]
        assert set(e) >= {"status", "environment", "timestamp", "log"}, e.keys()
        has_c, has_p = e.get("correctness") is not None, e.get("performance") is not None
        assert has_c == (e["status"] in ("PASSED", "INCORRECT_NUMERICAL")), e
        assert has_p == (e["status"] == "PASSED"), e
        if has_p:
            assert set(e["performance"]) >= {"latency_ms", "reference_latency_ms", "speedup_factor"}
        if has_c:
            assert set(e["correctness"]) >= {"max_relative_error", "max_absolute_error"}
    for log in t.get("logs", []):
        assert set(log) >= {"definition", "workload", "solution"}, log.keys()


def sanitizer_fault(logs):
    """TIMEOUT or RUNTIME_ERROR when a sanitize task's logs report a real fault, else None (upstream's
    rule: driver-probe blocks about cuGetProcAddress_v2 are noise; "Program hit" is a fault)."""
    for entry in logs or []:
        kept, skipping = [], False
        for line in (entry.get("log") or "").split("\n"):
            if "Program hit" in line and "cuGetProcAddress_v2" in line:
                skipping = True
            elif skipping:
                skipping = line.strip() != "========="
            else:
                kept.append(line)
        text = "\n".join(kept)
        if "timed out after" in text.lower():
            return "TIMEOUT"
        if "Program hit" in text:
            return "RUNTIME_ERROR"
    return None


def render_debug_report(metadata):
    """The text upstream's client puts in place of a failing trace's log: every section that exists,
    titled, except the report's own header section."""
    parts = []
    for title, section in metadata.items():
        if title == "FlashInfer CUDA debug report" or (isinstance(section, dict) and not section.get("exist")):
            continue
        parts += [str(title), "-" * 80]
        if isinstance(section, dict) and section.get("msg"):
            parts.append(str(section["msg"]))
        parts.append("")
    text = "\n".join(parts).rstrip()
    return text + "\n" if text else ""


def agent_turn(client, solution, uuid, sanitize_runs=2):
    """One turn of upstream's agent client against the service; returns (traces, debug_report)."""
    def debug_report(status):
        task_id, _ = client.debug(solution, [uuid], sanitizer_types=["memcheck"], timeout=120, max_lines=None,
                                  print_limit=100, source_context_lines=4, enable_coredump=status == "TIMEOUT",
                                  coredump_grace_seconds=30)
        d = client.wait(task_id, max_wait=360)
        check_task_response(d)
        assert d["status"] == "completed" and d["kind"] == "debug", d
        metadata = (d.get("logs") or [{}])[0].get("metadata")
        assert isinstance(metadata, dict), "a debug task answers with logs[0].metadata"
        return render_debug_report(metadata)

    for _ in range(sanitize_runs):
        task_id, _ = client.sanitize(solution, [uuid], sanitizer_types=["memcheck"], print_limit=1, max_lines=None,
                                     timeout=120)
        s = client.wait(task_id, max_wait=360)
        check_task_response(s)
        assert s["status"] == "completed", s
        fault = sanitizer_fault(s.get("logs"))
        if fault:
            report = debug_report(fault)
            traces = []
            for entry in s["logs"]:
                entry["evaluation"] = {"status": fault, "log": report or entry.get("log", "")}
                traces.append(entry)
            return traces, report
    task_id, _ = client.evaluate(solution, [uuid])
    e = client.wait(task_id, max_wait=240)
    check_task_response(e)
    assert e["status"] == "completed", e
    traces = e.get("traces") or []
    statuses = {t["evaluation"]["status"] for t in traces}
    report = ""
    if statuses & {"RUNTIME_ERROR", "TIMEOUT"}:
        report = debug_report("TIMEOUT" if "TIMEOUT" in statuses else "RUNTIME_ERROR")
        for t in traces:
            if report and t["evaluation"]["status"] in ("RUNTIME_ERROR", "TIMEOUT"):
                t["evaluation"]["log"] = report
    return traces, report


def expect_refusal(call, status, check=None):
    try:
        call()
    except ServiceError as e:
        assert e.status == status, (e.status, e.detail)
        if check:
            check(e.detail)
        return e.detail
    raise AssertionError(f"expected HTTP {status}")


def self_test(client):
    """Against a server whose workers use the fake evaluator (its verdicts come from markers)."""
    h = client.health()
    assert h["status"] == "ok" and isinstance(h["queue_size"], int), h
    assert all(set(w) >= {"device", "healthy"} for w in h["workers"]), h["workers"]
    defs = client.definitions()
    assert all(set(d) == {"name", "description"} for d in defs), defs[0]
    name = "gemm_n7168_k5120"
    d = client.definition(name)
    assert d["name"] == name and "axes" in d and "inputs" in d and "outputs" in d
    wls = client.workloads(name)
    assert len(wls) >= 1 and client.workload(wls[0]["uuid"])["uuid"] == wls[0]["uuid"]
    uuid = wls[0]["uuid"]

    def sol(code, n):
        return {"name": n, "definition": name, "author": "upstream_client",
                "spec": {"language": "cuda", "target_hardware": ["H100"], "entry_point": "kernel.cu::run",
                         "dependencies": [], "destination_passing_style": True, "binding": None},
                "sources": [{"path": "kernel.cu", "content": code}], "description": None}

    good = sol("// wgmma FAKE_SPEEDUP=1.25\n", "good")
    task_id, norm = client.evaluate(good, [uuid])
    assert norm == normalized_name(good), (norm, normalized_name(good))
    assert len(task_id) == 32
    t = client.wait(task_id)
    check_task_response(t)
    assert t["status"] == "completed" and t["kind"] == "evaluate" and t["solution"] == norm, t
    assert t["traces"][0]["evaluation"]["status"] == "PASSED"
    assert abs(t["traces"][0]["evaluation"]["performance"]["speedup_factor"] - 1.25) < 1e-9

    ids = [client.evaluate(sol(f"// FAKE_WRONG {i}\n" if i % 2 else f"#error {i}\n", f"c{i}"))[0] for i in range(4)]
    results = client.batch(ids, timeout=30)
    assert [r["task_id"] for r in results] == ids, "input order"
    for i, r in enumerate(results):
        check_task_response(r)
        assert r["status"] == "completed", r
        assert r["traces"][0]["evaluation"]["status"] == ("INCORRECT_NUMERICAL" if i % 2 else "COMPILE_ERROR")

    san_id, _ = client.sanitize(sol("// wgmma sanitize me\n", "s"), None, sanitizer_types=["memcheck"], timeout=120,
                                max_lines=None, print_limit=1)
    s = client.wait(san_id)
    check_task_response(s)
    assert s["kind"] == "sanitize" and "traces" not in s and len(s["logs"]) == 1 and "log" in s["logs"][0], s

    again, _ = client.evaluate(dict(good, name="again"), [uuid])
    a = client.task(again, timeout=0)
    assert a["status"] == "completed" and a["ptxbench"]["cached"] is True, a.get("ptxbench")

    for call, status in ((lambda: client.evaluate(dict(good, definition="no_such_def")), 400),
                         (lambda: client.task("0" * 32, timeout=0), 404),
                         (lambda: client.batch(ids + ["f" * 32]), 404)):
        try:
            call()
            raise AssertionError(f"expected HTTP {status}")
        except ServiceError as e:
            assert e.status == status and isinstance(e.detail, str) and e.detail, (e.status, e.detail)
    # Upstream's agent client, one turn per candidate: a passing kernel, one that faults on the GPU
    # (its debug report replaces the log), one that does not compile.
    passing, _ = agent_turn(client, sol("// wgmma FAKE_SPEEDUP=1.1 turn\n", "turn_ok"), uuid)
    assert [t["evaluation"]["status"] for t in passing] == ["PASSED"], passing
    faulty_code = "".join("// FAKE_RUNTIME_ERROR\n" if i == 1 else ("  C[i] = acc;\n" if i == 42 else "//\n") for i in range(1, 50))
    faulty, report = agent_turn(client, sol(faulty_code, "turn_fault"), uuid)
    assert [t["evaluation"]["status"] for t in faulty] == ["RUNTIME_ERROR"], faulty
    assert "Most precise CUDA fault" in report and "kernel.cu:42" in report, report
    assert faulty[0]["evaluation"]["log"] == report, "the debug report replaces the failing trace's log"
    broken, _ = agent_turn(client, sol("#error turn\n", "turn_broken"), uuid)
    assert [t["evaluation"]["status"] for t in broken] == ["COMPILE_ERROR"], broken
    assert broken[0]["evaluation"]["environment"]["hardware"], "upstream's Trace requires a hardware name"

    # What upstream's service tests expect of the API.
    expect_refusal(lambda: client._request("POST", "/evaluate", []), 422, lambda d: isinstance(d, list) and d[0]["loc"] == ["body"])
    expect_refusal(lambda: client.evaluate(dict(good, author=None)), 422,
                   lambda d: d[0]["loc"] == ["body", "solution", "author"] and d[0]["type"] == "missing")
    expect_refusal(lambda: client.evaluate(good, baseline_cache_mode="invalid"), 422)
    expect_refusal(lambda: client.evaluate(good, timeout=0), 422)
    expect_refusal(lambda: client.task("0" * 32, timeout=-1), 422, lambda d: d[0]["loc"] == ["query", "timeout"])
    expect_refusal(lambda: client._request("POST", "/tasks/batch", {"task_ids": [123]}), 422)
    expect_refusal(lambda: client.evaluate(good, run_baseline=False), 400, lambda d: "no `outputs`" in d)
    assert client.batch([], timeout=-1) == []
    t = client.wait(client.evaluate(good, ["nonexistent_uuid"])[0])
    assert t["status"] == "failed" and "No workloads found" in t["error"], t
    py = {"name": "correct", "definition": name, "author": "test",
          "spec": {"language": "python", "target_hardware": ["cuda"], "entry_point": "pkg/main.py::kernel",
                   "destination_passing_style": False},
          "sources": [{"path": "pkg/main.py", "content": "import torch\n\ndef kernel(X):\n    return X * 2  # FAKE_SPEEDUP=1.0\n"}]}
    p = client.wait(client.evaluate(py)[0])
    check_task_response(p)
    assert p["status"] == "completed", p
    root = client._request("GET", "/")
    assert {"name", "version", "commit", "upstream", "docs", "endpoints"} <= set(root), root.keys()
    assert any(e["path"] == "/debug" for e in root["endpoints"])
    print(f"upstream client self-test: OK ({len(ids) + 3} tasks, batch, long-poll, sanitize, cache, errors; "
          "three agent turns with /debug; upstream's status codes)")


def submit_files(client, args):
    sols = [solution_from_file(f, args.definition) for f in args.files]

    def one(sol_file):
        sol, path = sol_file
        t0 = time.time()
        options = {"target": args.target} if args.target else {}
        task_id, norm = client.submit(args.kind, sol, None, **options)
        t = client.wait(task_id, max_wait=args.max_wait)
        return {"file": path, "task_id": task_id, "normalized_solution_name": norm, "seconds": time.time() - t0, "response": t}

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.concurrency) as pool:
        out = list(pool.map(one, zip(sols, args.files)))
    for r in out:
        t = r["response"]
        st = t["traces"][0]["evaluation"]["status"] if t.get("traces") else t["status"]
        print(f"{r['file']}: {st} ({r['seconds']:.1f} s){' cached' if t.get('ptxbench', {}).get('cached') else ''}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=2)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", required=True)
    p.add_argument("--token-file")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("self-test")
    s = sub.add_parser("submit")
    s.add_argument("files", nargs="+")
    s.add_argument("--definition")
    s.add_argument("--kind", default="evaluate", choices=["evaluate", "sanitize", "profile"])
    s.add_argument("--target")
    s.add_argument("--concurrency", type=int, default=8)
    s.add_argument("--max-wait", type=float, default=3600)
    s.add_argument("--out")
    args = p.parse_args()
    token = open(args.token_file).read().strip() if args.token_file else None
    client = UpstreamClient(args.url, token)
    if args.command == "self-test":
        self_test(client)
    else:
        submit_files(client, args)


if __name__ == "__main__":
    main()
