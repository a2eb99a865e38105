#!/usr/bin/env python3
"""TEST-ONLY stand-in for src/gpu/runner_py/triton_recompile.py (tests/harness/triton_recompile_test.cc):
speaks its interface without Triton. The source decides what happens: "SOURCE_PROBLEM" → exit 2 with
an error; "CRASH" → exit 3; "WRONG_NAME" → a cubin outside the folder; otherwise each kernel's
cubin is the bytes of its "jit" name. Every run appends a line to runs.log beside the output folder."""
import json
import os
import sys

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
out = args["--out"]
os.makedirs(out, exist_ok=True)
with open(os.path.join(os.path.dirname(out.rstrip("/")), "runs.log"), "a") as log:
    log.write("run\n")
src = open(args["--source"]).read()
kernels = json.load(open(args["--kernels"]))["kernels"]


def result(doc):
    json.dump(doc, open(os.path.join(out, "result.json"), "w"))


if "SOURCE_PROBLEM" in src:
    result({"error": "kernel k does not compile from kernel.py alone: NameError"})
    sys.exit(2)
if "CRASH" in src:
    print("Traceback: something broke", file=sys.stderr)
    sys.exit(3)
done = []
for i, k in enumerate(kernels):
    name = f"r{i}.cubin" if "WRONG_NAME" not in src else "../escape.cubin"
    if "WRONG_NAME" not in src:
        open(os.path.join(out, name), "wb").write(k["jit"].encode())
    done.append({"id": k["id"], "name": k["jit"], "sha256": "claimed-not-trusted", "cubin": name})
result({"triton": "9.9-fake", "kernels": done})
