#!/usr/bin/env python3
"""TEST-ONLY stand-in for ptxbench-harness --serve-fds (tests/eval/harness_session_test.cc): speaks the
session protocol without a GPU. What it does with a candidate depends on its symbol: "run" passes,
"wrong" fails correctness, "infra" reports an infrastructure failure (an error line, then exit), "die" exits, "hang" never
answers, "slow_exit" passes and makes the harness take 2 s to exit once its input ends (a GPU context's teardown). The task name "setup_fails" makes the setup fail. Its verdicts are made up."""
import json, os, sys, time

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
ENV = {"gpu": "FAKE H200", "libs": {"cuda_runtime": "13.0", "nvidia_driver": "0.0"}}
if "--environment" in args:  # the GPU probe a worker runs before it registers
    json.dump(ENV, open(args["--environment"], "w"))
    sys.exit(0)
job = json.load(open(args["--job"]))
fd_in, fd_out = (int(x) for x in args["--serve-fds"].split(","))
inp, out = os.fdopen(fd_in, "r"), os.fdopen(fd_out, "w")

def send(msg):
    out.write(json.dumps(msg) + "\n")
    out.flush()

if job["task"]["name"] == "setup_fails":
    send({"error": "setting up the task on the GPU: no CUDA device (fake)"})
    sys.exit(1)
print("fake harness ready, pid", os.getpid(), file=sys.stderr, flush=True)
send({"ready": {"environment": ENV, "baseline": "fake"}})
slow_exit = False
for line in inp:
    c = json.loads(line)["candidate"]
    sym = c["symbol"]
    if sym == "slow_exit":
        slow_exit, sym = True, "run"
    if not os.path.exists(c["shared_object"]) and not c["shared_object"].startswith("/nonexistent"):
        sym = "die"  # the worker must have put the object where it says
    if sym == "die":
        print("fake harness: dying on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    if sym == "hang":
        time.sleep(3600)
    if sym == "infra":  # the harness's own failure: an error line, never a result, and the harness exits
        send({"error": "fake infra_error"})
        sys.exit(1)
    outcome = {"run": "passed", "wrong": "incorrect_numerical"}[sym]
    stages = [{"stage": "sanitize", "outcome": "passed", "seconds": 0.1, "summary": "clean"}]
    if outcome == "incorrect_numerical":
        stages.append({"stage": "correctness", "outcome": "failed", "seconds": 0.2, "summary": "wrong"})
    result = {"format": "ptxbench.gpu-stage-result/1", "id": c["id"], "outcome": outcome,
              "message": "fake " + outcome + " (" + c.get("language", "cuda") + ")", "log": "", "stages": stages,
              "measurement": {"device": "GPU-fake", "lease_dir": "/tmp/fake",
                              "holds": [{"stage": "timing", "exclusive": True, "waited_ms": 1.5, "held_ms": 900.0}]}}
    if outcome == "incorrect_numerical":
        result["deciding_stage"] = "correctness"
    if outcome in ("passed", "incorrect_numerical"):
        result["correctness"] = {"rule": "allclose", "trials": 1, "seeds": [7], "max_absolute_error": 0.001,
                                 "max_relative_error": 0.002 if outcome == "passed" else 5.0}
    if outcome == "passed":
        result["timing"] = {"method": "fake", "warmup": 1, "iterations": 1, "candidate": {"median_ms": 2.0},
                            "reference": {"median_ms": 1.0}, "speedup": 0.5}
    send({"result": result})
if slow_exit:
    time.sleep(2)
