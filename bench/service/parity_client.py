#!/usr/bin/env python3
"""Issue 27 on a GPU host: upstream PTXBench's agent client and the cases of its service tests, against a
real `ptxbench serve` whose GPU worker evaluates on the GPU at hand (bench/service/parity_gpu.sh starts
it). The client is tests/service/upstream_client.py (our re-expression of upstream's
template_compile_measure_cuda.txt; standard library only).

  parity_client.py --url URL --target TARGET --other-target OTHER --gpu-name "MODEL (nvidia-smi)" --out DIR

One line per case, `CASE name: ok|FAILED (why)`, each case's answers in DIR/<case>.json, and the last
line `parity: N of M cases as expected`; exit 0 only when every required case is.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "service"))
from upstream_client import (ServiceError, UpstreamClient, agent_turn, check_task_response,  # noqa: E402
                             normalized_name)

DEFINITION = "gemm_n7168_k5120"


def as_template_solution(source, binding):
    """The Solution upstream's agent client builds around kernel.cu (build_solution)."""
    return {"name": "eval_kernel", "definition": DEFINITION, "author": "eval",
            "spec": {"language": "cuda", "binding": binding, "target_hardware": ["H100"],
                     "entry_point": "kernel.cu::run", "dependencies": [], "destination_passing_style": True},
            "sources": [{"path": "kernel.cu", "content": source}]}


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--target", required=True, help="the suite target of the GPU here")
    ap.add_argument("--other-target", required=True, help="a target no GPU here serves")
    ap.add_argument("--gpu-name", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    client = UpstreamClient(a.url, connect_retries=5)
    uuid = client.workloads(DEFINITION)[0]["uuid"]
    results = []

    def case(name, fn, required=True):
        t0 = time.time()
        record = {"case": name, "required": required}
        try:
            detail = fn(record)
            record.update(ok=True, detail=detail or "")
        except (AssertionError, ServiceError, KeyError, IndexError, TypeError, ValueError) as e:
            record.update(ok=False, detail=f"{type(e).__name__}: {e}"[:400])
        record["seconds"] = round(time.time() - t0, 1)
        with open(os.path.join(a.out, f"{name}.json"), "w") as f:
            json.dump(record, f, indent=2, default=str)
        tag = "ok" if record["ok"] else ("FAILED" if required else "not as hoped (informational)")
        print(f"CASE {name}: {tag} ({record['seconds']} s) {record['detail']}", flush=True)
        results.append(record)

    def turn(source, binding, want, record):
        traces, report = agent_turn(client, as_template_solution(source, binding), uuid)
        record["traces"], record["debug_report"] = traces, report
        got = [t["evaluation"]["status"] for t in traces]
        assert got == [want], f"statuses {got}, expected [{want}]"
        for t in traces:  # an evaluate trace names its hardware (a sanitize log turned into a trace has none)
            if "environment" in t["evaluation"]:
                assert t["evaluation"]["environment"]["hardware"], "a trace without hardware"
        return traces

    def upstream_form_kernel(record):
        traces = turn(read("examples/upstream/gemm_tvm_ffi.cu"), "tvm-ffi", "PASSED", record)
        e = traces[0]["evaluation"]
        assert e["environment"]["hardware"] == a.gpu_name, e["environment"]
        assert e["performance"]["latency_ms"] > 0 and e["performance"]["speedup_factor"] > 0, e["performance"]
        return f"PASSED, speedup {e['performance']['speedup_factor']:.3f} on {e['environment']['hardware']}"

    def fault_gets_debug_report(record):
        turn(read("examples/gemm/out_of_bounds.cu"), None, "RUNTIME_ERROR", record)
        assert record["debug_report"], "no debug report replaced the log"
        return f"RUNTIME_ERROR; debug report of {len(record['debug_report'])} characters"

    def wrong_values(record):
        turn(read("examples/gemm/wrong_result.cu"), None, "INCORRECT_NUMERICAL", record)

    def compile_error(record):
        turn("#include <ptxbench/abi.h>\nthis is not C++;\n", None, "COMPILE_ERROR", record)

    def no_default_target_needed(record):
        sol = as_template_solution(read("examples/upstream/gemm_tvm_ffi.cu"), "tvm-ffi")
        task_id, name = client.evaluate(sol, [uuid])  # no "target": the server's GPU decides
        assert name == normalized_name(sol)
        t = client.wait(task_id, max_wait=120)
        check_task_response(t)
        record["response"] = t
        assert t["status"] == "completed" and t["ptxbench"]["target"] == a.target, (t["status"], t["ptxbench"]["target"])
        return f"served as {t['ptxbench']['target']}"

    def unserved_target_answered(record):
        sol = as_template_solution(read("examples/upstream/gemm_tvm_ffi.cu") + "// unserved\n", "tvm-ffi")
        t0 = time.time()
        task_id, _ = client.evaluate(sol, [uuid], target=a.other_target)
        t = client.wait(task_id, max_wait=60, poll=5)
        record["response"] = t
        took = time.time() - t0
        assert t["status"] == "failed" and f"no live GPU worker serves target {a.other_target}" in t["error"], t
        assert took < 45, f"answered after {took:.0f} s"
        return f"failed after {took:.1f} s: {t['error']}"

    def service_test_cases(record):
        good = as_template_solution(read("examples/upstream/gemm_tvm_ffi.cu"), "tvm-ffi")
        statuses = {}

        def status_of(call):
            try:
                call()
                return 200
            except ServiceError as e:
                return e.status
        statuses["bad definition"] = status_of(lambda: client.evaluate(dict(good, definition="nonexistent_definition")))
        statuses["no author"] = status_of(lambda: client.evaluate(dict(good, author=None)))
        statuses["timeout 0"] = status_of(lambda: client.evaluate(good, timeout=0))
        statuses["baseline_cache_mode"] = status_of(lambda: client.evaluate(good, baseline_cache_mode="invalid"))
        statuses["run_baseline false"] = status_of(lambda: client.evaluate(good, run_baseline=False))
        statuses["poll timeout -1"] = status_of(lambda: client.task("0" * 32, timeout=-1))
        statuses["batch unknown id"] = status_of(lambda: client.batch(["nonexistent_task_id"]))
        statuses["batch []"] = status_of(lambda: client.batch([], timeout=-1))
        record["statuses"] = statuses
        want = {"bad definition": 400, "no author": 422, "timeout 0": 422, "baseline_cache_mode": 422,
                "run_baseline false": 400, "poll timeout -1": 422, "batch unknown id": 404, "batch []": 200}
        assert statuses == want, f"{statuses} != {want}"
        t = client.wait(client.evaluate(good, ["nonexistent_uuid"])[0], max_wait=30)
        assert t["status"] == "failed" and "No workloads found" in t["error"], t
        return "status codes as upstream's"

    def triton_solution(record):
        # The Triton track through the service's GPU worker (the same harness session as eval): the
        # tl.dot GEMM must pass, as examples/triton/manifest.json expects of it.
        py = {"name": "triton_gemm", "definition": DEFINITION, "author": "eval",
              "spec": {"language": "triton", "target_hardware": ["H100"], "entry_point": "kernel.py::run",
                       "destination_passing_style": True},
              "sources": [{"path": "kernel.py", "content": read("examples/triton/gemm_tl_dot.py")}]}
        t = client.wait(client.evaluate(py, [uuid])[0], max_wait=120)
        record["response"] = t
        assert t["status"] == "completed", (t["status"], t.get("error"))
        status = t["traces"][0]["evaluation"]["status"] if t.get("traces") else None
        assert status == "PASSED", status
        return status

    case("upstream_form_kernel", upstream_form_kernel)
    case("fault_gets_debug_report", fault_gets_debug_report)
    case("wrong_values", wrong_values)
    case("compile_error", compile_error)
    case("no_target_named", no_default_target_needed)
    case("unserved_target_answered", unserved_target_answered)
    case("service_test_cases", service_test_cases)
    if os.path.exists(os.path.join(ROOT, "examples/triton/gemm_tl_dot.py")):
        case("triton_solution", triton_solution)
    required = [r for r in results if r["required"]]
    good = sum(1 for r in required if r["ok"])
    print(f"parity: {good} of {len(required)} cases as expected")
    return 0 if good == len(required) else 1


if __name__ == "__main__":
    sys.exit(main())
