"""The Triton runner's capture mode (docs/trusted-timing.md, "Triton candidates"): what a candidate's
run() puts on the GPU, recorded as data for the trusted side, which believes none of it unchecked.

Three pieces, all running in the candidate's own sandboxed process:

  CompileRecorder  a Triton jit_post_compile_hook installed before kernel.py is imported: for every
                   kernel Triton compiles, the @triton.jit function and Triton's own serialisation of
                   what it compiled (`specialization_data`: signature, constants, attributes, options)
                   — what the trusted recompile (src/gpu/harness/triton_recompile.py) needs to compile
                   the same kernel from the source itself;
  compiled_kernels the recorded kernels after the warm-up: each one's CUfunction handle, entry name,
                   cubin (written into the scratch folder) and the types of its launch parameters;
  capture_document one captured call: where the call's tensors were mapped, the graph nodes the
                   driver recorded (the helper library's stream capture), and the compiled kernels.

A candidate can remove the hook, launch kernels some other way or rewrite any of this: then its
capture names kernels the recompile cannot reproduce, or launches the recompile does not know, and
the harness refuses it (gpu/harness/triton_plan.h). Nothing here decides anything.
"""

from __future__ import annotations

import json
import os

CAPTURE_FORMAT = "ptxbench.triton-capture/1"
KERNELS_FOLDER = "captured-kernels"


class CompileRecorder:
    """Records every kernel Triton compiles in this process (knobs.runtime.jit_post_compile_hook)."""

    def __init__(self):
        self.records = []  # (JITFunction, cache key, specialization_data JSON text)

    def __call__(self, *args, **kwargs):
        fn = kwargs.get("fn")
        compile_info = kwargs.get("compile") or {}
        key = kwargs.get("key", compile_info.get("key"))
        data = compile_info.get("specialization_data")
        jit = getattr(fn, "jit_function", None)
        if jit is not None and data is not None:
            self.records.append((jit, key, data))
        return None  # never skip compiling

    def install(self, triton):
        knobs = getattr(triton, "knobs", None)
        runtime = getattr(knobs, "runtime", None)
        if runtime is None or not hasattr(runtime, "jit_post_compile_hook"):
            raise RuntimeError("this Triton has no knobs.runtime.jit_post_compile_hook (Triton >= 3.4 is needed)")
        previous = runtime.jit_post_compile_hook
        if previous is not None:
            raise RuntimeError("a jit_post_compile_hook is already installed")
        runtime.jit_post_compile_hook = self


def find_compiled(jit, key):
    """The CompiledKernel a JITFunction cached under `key` (its device caches hold a dict of them)."""
    caches = getattr(jit, "device_caches", {})
    for value in list(caches.values()):
        parts = value if isinstance(value, tuple) else (value,)
        for part in parts:
            if isinstance(part, dict) and key in part:
                kernel = part[key]
                return kernel.result() if hasattr(kernel, "result") and not hasattr(kernel, "asm") else kernel
    return None


def launch_parameter_types(specialization_data):
    """The Triton types of a kernel's launch parameters, in order: the non-constexpr entries of its
    signature ("*bf16", "i32", "fp32", ...). Triton's hidden scratch pointers follow them; the harness
    counts those from the captured node."""
    data = json.loads(specialization_data)
    types = []
    for ty in data.get("signature", {}).values():
        if isinstance(ty, (list, tuple)):
            types.append("tuple")  # not replayable; the harness says so
        elif ty != "constexpr":
            types.append(str(ty))
    return types


def compiled_kernels(recorder, scratch):
    """Every recorded kernel that exists now, with its cubin written under scratch/KERNELS_FOLDER.
    Returns a list of dicts for the capture document."""
    folder = os.path.join(scratch, KERNELS_FOLDER)
    os.makedirs(folder, exist_ok=True)
    out = []
    for i, (jit, key, data) in enumerate(recorder.records):
        kernel = find_compiled(jit, key)
        if kernel is None:
            continue
        if getattr(kernel, "function", None) is None and hasattr(kernel, "_init_handles"):
            kernel._init_handles()
        cubin = kernel.asm.get("cubin") if hasattr(kernel, "asm") else None
        if not isinstance(cubin, (bytes, bytearray)):
            continue
        name = f"k{i:03d}.cubin"
        with open(os.path.join(folder, name), "wb") as f:
            f.write(bytes(cubin))
        out.append({"function": str(int(kernel.function)),
                    "name": str(kernel.metadata.name),
                    "jit": getattr(jit, "__name__", "?"),
                    "cubin": os.path.join(KERNELS_FOLDER, name),
                    "param_types": launch_parameter_types(data),
                    "hints": {"specialization_data": data}})
    return out


def capture_document(tensor_ptrs, graph, kernels):
    return {"format": CAPTURE_FORMAT,
            "tensors": [{"ptr": int(p)} for p in tensor_ptrs],
            "nodes": graph.get("nodes", []),
            "kernels": kernels}


def write_capture(scratch, number, document):
    """scratch/capture-<number>.json, where the harness reads it."""
    path = os.path.join(scratch, f"capture-{number}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f)
    return path
