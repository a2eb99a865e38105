"""The trusted recompile's reduction of kernel.py (src/gpu/runner_py/triton_recompile.py): only
imports of Triton and math, @triton.jit functions with literal defaults, annotations and decorator
arguments, and literal constants survive, at their own line numbers; everything that could run
Python when the reduced module is executed is blanked. No Triton needed."""
import ast
import json
import os
import shutil
import sys
import tempfile
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
        reduction = tr.reduce_source(SOURCE)
        self.reduced, self.left_out = reduction.text, reduction.left_out
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
        self.assertEqual(self.left_out["kernel_evil"], "a parameter's default is not a constant expression")
        self.assertIn("decorator", self.left_out["kernel_wrapped"])

    def test_the_reduced_module_parses_and_names_no_dropped_module(self):
        compile(self.reduced, "kernel.py", "exec")


HONEST = '''import math
import triton
import triton.language as tl
from triton.language.extra import libdevice
import triton.language.extra.libdevice as libdevice2
from triton.language.extra.cuda import libdevice as cuda_libdevice
import triton.language.extra.cuda.libdevice as cuda_libdevice2
from triton.language import constexpr
BLOCK_M: tl.constexpr = 128
BLOCK_K: tl.constexpr = BLOCK_M // 2
STAGES = tl.constexpr(max(2, BLOCK_K // 32))
LOG2E: tl.constexpr = tl.constexpr(math.log2(math.e))
WIDE = BLOCK_M >= 128 and BLOCK_K > 16
PAD = triton.next_power_of_2(BLOCK_K + 1) if WIDE else -1
DTYPE = tl.float16
ROWS = constexpr(BLOCK_M * 2)
ROWS += 1
SIZES = (64, 128)
FIRST = SIZES[0] + SIZES[-1:][0]


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr = BLOCK_M):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    y = libdevice.tanh(x) + cuda_libdevice.exp2(x * LOG2E) + libdevice2.tanh(x) + cuda_libdevice2.tanh(x)
    tl.store(y_ptr + tl.arange(0, BLOCK), y.to(DTYPE))
'''


class HonestKernelsTest(unittest.TestCase):
    """What honest kernels use survives the reduction (issue: libdevice imports, constants computed
    from constants)."""

    def setUp(self):
        self.reduction = tr.reduce_source(HONEST)

    def test_libdevice_imports_survive_in_each_spelling(self):
        for line in HONEST.splitlines()[:8]:
            self.assertIn(line, self.reduction.text.splitlines())

    def test_constant_expressions_over_constants_survive(self):
        for name in ("BLOCK_M", "BLOCK_K", "STAGES", "LOG2E", "WIDE", "PAD", "DTYPE", "ROWS", "SIZES", "FIRST"):
            self.assertNotIn(name, self.reduction.dropped)
        self.assertIn("ROWS += 1", self.reduction.text)
        self.assertEqual(self.reduction.left_out, {})
        self.assertEqual(self.reduction.hints("softmax_kernel"), "")

    def test_the_reduced_constants_evaluate_without_triton(self):
        # Only the constants that need no Triton (math and builtins) can be run here; they must give
        # the values Python gives the original lines.
        scope = {}
        for line in ("import math", "BLOCK_M = 128", "BLOCK_K = BLOCK_M // 2", "LOG2E = math.log2(math.e)",
                     "WIDE = BLOCK_M >= 128 and BLOCK_K > 16"):
            self.assertIsNone(tr.constant_problem(ast.parse(line.split(" = ")[-1], mode="eval").body, _scope(scope))
                              if " = " in line else None)
            exec(line, scope)  # noqa: S102 (test data)
        self.assertTrue(scope["WIDE"])


def _scope(names):
    s = tr._Scope()
    s.bind_alias("math", "math")
    for n in names:
        if not n.startswith("__") and n != "math":
            s.bind_value(n)
    return s


class RefusedSourceTest(unittest.TestCase):
    """What would run candidate Python stays out, and a kernel that needs it is refused by name."""

    def reduce(self, text):
        return tr.reduce_source("import os\nimport triton\nimport triton.language as tl\nBLOCK = 64\n" + text)

    def test_constants_that_call_or_read_anything_else_are_dropped(self):
        cases = {
            "A = os.getcwd()": "it calls os.getcwd",
            "A = max(1, 2, key=print)": "keyword or unpacked arguments",
            "A = triton._C": "it reads the attribute _C",
            "A = (lambda: 1)()": "it calls an expression",
            "A = [i for i in range(3)]": "ListComp",
            "A = open('/etc/passwd')": "it calls open",
            "A = tl.constexpr(BLOCK).__class__": "it reads the attribute __class__",
            "A = UNKNOWN * 2": "it reads UNKNOWN",
        }
        for line, why in cases.items():
            with self.subTest(line):
                r = self.reduce(line + "\n")
                self.assertNotIn(line, r.text)
                self.assertIn(why, r.dropped["A"])

    def test_rebinding_a_builtin_or_an_import_is_dropped(self):
        r = self.reduce("max = 3\ntl = 4\nA = max(BLOCK, 2)\n")
        self.assertIn("rebound", r.dropped["max"])
        self.assertIn("rebound", r.dropped["tl"])
        self.assertIn("A = max(BLOCK, 2)", r.text)  # still the builtin: the rebinding is not in the module

    def test_other_modules_are_not_imported(self):
        r = self.reduce("import numpy as np\nfrom triton.runtime import driver\nfrom . import helpers\n")
        for name in ("np", "driver", "helpers"):
            self.assertIn("which the recompile does not import", r.dropped[name])
        self.assertNotIn("numpy", r.text)
        self.assertNotIn("driver", r.text)

    def test_a_constexpr_function_is_refused_with_its_reason_directly_and_through_a_helper(self):
        r = self.reduce(
            "@triton.constexpr_function\ndef twice(x):\n    return x * 2\n\n"
            "@triton.jit\ndef inner(x):\n    return x * twice(2)\n\n"
            "@triton.jit\ndef outer(x_ptr):\n    tl.store(x_ptr, inner(1))\n\n"
            "@triton.jit\ndef clean(x_ptr):\n    tl.store(x_ptr, 1)\n")
        self.assertNotIn("return x * 2", r.text)
        self.assertIn("it calls twice, a triton.constexpr_function: its body is Python", r.left_out["inner"])
        self.assertIn("recompile runs none of kernel.py's Python", r.left_out["inner"])
        self.assertIn("it calls twice (through inner)", r.left_out["outer"])
        self.assertNotIn("clean", r.left_out)

    def test_jit_arguments_that_are_functions_are_refused(self):
        r = self.reduce("@triton.jit(repr=print)\ndef k(x_ptr):\n    pass\n\n"
                        "@triton.jit(launch_metadata=lambda *a: {})\ndef m(x_ptr):\n    pass\n\n"
                        "@triton.jit(do_not_specialize=[\"n\"], debug=False)\ndef ok(x_ptr, n):\n    pass\n")
        self.assertIn("triton.jit's arguments must be constant data", r.left_out["k"])
        self.assertIn("triton.jit's arguments must be constant data", r.left_out["m"])
        self.assertNotIn("ok", r.left_out)

    def test_a_kernel_reading_a_dropped_name_gets_a_hint(self):
        r = self.reduce("ENV = int(os.environ['B'])\n\n@triton.jit\ndef helper(x):\n    return x * ENV\n\n"
                        "@triton.jit\ndef k(x_ptr):\n    local = 1\n    tl.store(x_ptr, helper(local))\n")
        self.assertEqual(r.left_out, {})
        self.assertIn("ENV is a module-level value that is not a constant expression (it reads os, which is not a "
                      "constant or import the recompile keeps)", r.hints("k"))

    def test_a_constant_that_raises_is_the_sources_problem(self):
        folder = tempfile.mkdtemp()
        try:
            with self.assertRaises(tr.SourceProblem) as e:
                tr.load_reduced("A = 1 // 0\n", folder)
            self.assertIn("ZeroDivisionError", str(e.exception))
        finally:
            shutil.rmtree(folder)


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
