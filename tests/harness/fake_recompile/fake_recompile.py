#!/usr/bin/env python3
"""TEST-ONLY stand-in for src/gpu/runner_py/triton_recompile.py (tests/harness/triton_recompile_test.cc):
speaks its interface without Triton. The source decides what happens: "SOURCE_PROBLEM" → exit 2 with
an error; "CRASH" → exit 3; "WRONG_NAME" → a cubin outside the folder; "VIOLATION" → the sandbox's
report line and its exit code; "SPIN" → ended by SIGXCPU, as the CPU-time limit would;
"UNCONFINED" → reports its sandbox as not applied although asked; "ENTRY=<name>" → every cubin's
entry is <name>; otherwise each kernel's cubin is the bytes of its "jit" name, its entry that name.
Every run appends a line to runs.log beside the output folder, and the arguments it got (the
sandbox policy read from its file) to args.json in the output folder."""
import json
import os
import signal
import sys

args, i = {}, 1
while i < len(sys.argv):
    if sys.argv[i] == "--no-sandbox":
        args["--no-sandbox"] = True
        i += 1
    else:
        args[sys.argv[i]] = sys.argv[i + 1]
        i += 2
out = args["--out"]
os.makedirs(out, exist_ok=True)
with open(os.path.join(os.path.dirname(out.rstrip("/")), "runs.log"), "a") as log:
    log.write("run\n")
policy = json.load(open(args["--sandbox"]))["sandbox"] if "--sandbox" in args else None
json.dump({"args": args, "policy": policy, "tmpdir": os.environ.get("TMPDIR")}, open(os.path.join(out, "args.json"), "w"))
src = open(args["--source"]).read()
kernels = json.load(open(args["--kernels"]))["kernels"]
report = {"applied": policy is not None and "UNCONFINED" not in src}


def result(doc):
    doc["sandbox"] = report
    json.dump(doc, open(os.path.join(out, "result.json"), "w"))


if "SOURCE_PROBLEM" in src:
    result({"error": "kernel k does not compile from kernel.py alone: NameError"})
    sys.exit(2)
if "CRASH" in src:
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(3)
if "VIOLATION" in src:
    print("ptxbench-sandbox: attempted execve", file=sys.stderr, flush=True)
    os._exit(86)
if "SPIN" in src:
    os.kill(os.getpid(), signal.SIGXCPU)
entry = next((w[len("ENTRY="):] for w in src.split() if w.startswith("ENTRY=")), None)
done = []
for i, k in enumerate(kernels):
    name = f"r{i}.cubin" if "WRONG_NAME" not in src else "../escape.cubin"
    if "WRONG_NAME" not in src:
        open(os.path.join(out, name), "wb").write(k["jit"].encode())
    done.append({"id": k["id"], "name": entry or k["jit"], "sha256": "claimed-not-trusted", "cubin": name})
result({"triton": "9.9-fake", "kernels": done})
