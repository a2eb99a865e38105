"""The trusted recompile's reduction of kernel.py (src/gpu/runner_py/triton_recompile.py): only
imports of Triton and math, @triton.jit functions with literal defaults, annotations and decorator
arguments, and literal constants survive, at their own line numbers; everything that could run
Python when the reduced module is executed is blanked. No Triton needed."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "src", "gpu", "runner_py"))

import capture  # noqa: E402
import triton_recompile as tr  # noqa: E402

SOURCE = '''"""A candidate."""
import os
import torch
import triton
import triton.language as tl
from triton.language import constexpr
BLOCK = 128
HALF = BLOCK // 2
SCALE = tl.constexpr(3)
PATH = os.getcwd()
HOOK = __import__("os").system("true")


@triton.autotune(configs=[], key=[])
@triton.jit
def kernel_a(x_ptr, n, BLOCK_SIZE: tl.constexpr = 64):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, n)


@triton.jit(do_not_specialize=["n"])
def kernel_b(x_ptr, n):
    tl.store(x_ptr, n)


@triton.jit
def kernel_evil(x_ptr, n=__import__("os").getpid()):
    tl.store(x_ptr, n)


@some_other_decorator
@triton.jit
def kernel_wrapped(x_ptr):
    pass


def helper():
    return os.system("true")


def run(A, B, C):
    kernel_a[(1,)](A, 1)
'''


class ReduceSourceTest(unittest.TestCase):
    def setUp(self):
        self.reduced, self.left_out = tr.reduce_source(SOURCE)
        self.lines = self.reduced.splitlines()

    def test_keeps_line_numbers(self):
        self.assertEqual(len(self.lines), len(SOURCE.splitlines()))
        for i, line in enumerate(self.lines):
            if line:
                self.assertEqual(line, SOURCE.splitlines()[i])

    def test_keeps_triton_imports_literal_constants_and_jit_functions(self):
        text = self.reduced
        for kept in ("import triton\n", "import triton.language as tl", "from triton.language import constexpr",
                     "BLOCK = 128", "HALF = BLOCK // 2", "SCALE = tl.constexpr(3)", "def kernel_a(", "def kernel_b(",
                     "@triton.jit(do_not_specialize=[\"n\"])"):
            self.assertIn(kept, text)

    def test_drops_everything_that_runs_python(self):
        text = self.reduced
        for dropped in ("import os", "import torch", "PATH =", "HOOK =", "def helper", "def run", "@triton.autotune",
                        "def kernel_evil", "def kernel_wrapped"):
            self.assertNotIn(dropped, text)
        self.assertEqual(self.left_out["kernel_evil"], "a parameter's default is not a literal")
        self.assertIn("decorator", self.left_out["kernel_wrapped"])

    def test_the_reduced_module_parses_and_names_no_dropped_module(self):
        compile(self.reduced, "kernel.py", "exec")


class LimitedSpecializationTest(unittest.TestCase):
    def test_keeps_only_options_a_kernel_chooses(self):
        data = {"name": "ptxbench_candidate.k", "signature": {"x": "*fp32"}, "options": {
            "num_warps": 8, "num_stages": 3, "ir_override": "/tmp/evil.ptx", "extern_libs": [["x", "/evil.bc"]],
            "ptx_options": "-O0", "debug": False}}
        limited = json.loads(tr.limited_specialization(json.dumps(data)))
        self.assertEqual(limited["options"], {"num_warps": 8, "num_stages": 3, "debug": False})
        self.assertEqual(limited["signature"], data["signature"])

    def test_a_malformed_record_is_the_candidates_problem(self):
        with self.assertRaises(tr.SourceProblem):
            tr.limited_specialization(json.dumps({"options": "x"}))


class CaptureHelpersTest(unittest.TestCase):
    def test_launch_parameter_types_skip_constexprs(self):
        data = json.dumps({"signature": {"a": "*bf16", "n": "i32", "BLOCK": "constexpr", "s": "fp32"}})
        self.assertEqual(capture.launch_parameter_types(data), ["*bf16", "i32", "fp32"])

    def test_the_recorder_keeps_what_triton_reports(self):
        rec = capture.CompileRecorder()

        class Info:
            jit_function = object()

        rec(key="k1", fn=Info(), compile={"key": "k1", "specialization_data": "{}"})
        rec(key="k2", fn=None, compile={})
        self.assertEqual(len(rec.records), 1)
        self.assertEqual(rec.records[0][1], "k1")

    def test_a_capture_document_lists_tensors_nodes_and_kernels(self):
        doc = capture.capture_document([1024, 2048], {"nodes": [{"kind": "kernel"}]}, [{"name": "k"}])
        self.assertEqual(doc["format"], "ptxbench.triton-capture/1")
        self.assertEqual(doc["tensors"], [{"ptr": 1024}, {"ptr": 2048}])
        self.assertEqual(len(doc["nodes"]), 1)


if __name__ == "__main__":
    unittest.main()
