"""Tests of the Triton source gate (src/triton_gate/triton_gate.py). Standard library only:

    python3 -m unittest discover -s tests/triton_gate -t tests/triton_gate

Every file in accepted/ must give no finding; every file in rejected/ must give exactly the
(rule, line) pairs its `# gate-expect: RULE...` markers name (`# gate-expect-file: RULE` for
findings about the whole file, line 0); every file in unparsable/ must exit 2.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GATE = os.path.join(HERE, "..", "..", "src", "triton_gate", "triton_gate.py")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(GATE))
import triton_gate  # noqa: E402  (the module under test, by path)


def expected_findings(path):
    expected = set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f.read().splitlines(), 1):
            marker = re.search(r"#\s*gate-expect:\s*(.+)$", line)
            if marker:
                expected |= {(rule, number) for rule in marker.group(1).split()}
            marker = re.search(r"#\s*gate-expect-file:\s*(.+)$", line)
            if marker:
                expected |= {(rule, 0) for rule in marker.group(1).split()}
    return expected


def run_gate(*args):
    return subprocess.run([sys.executable, GATE, *args], capture_output=True, text=True, timeout=60)


def fixtures(folder):
    directory = os.path.join(HERE, folder)
    return sorted(os.path.join(directory, name) for name in os.listdir(directory) if name.endswith(".py"))


class Fixtures(unittest.TestCase):
    def test_accepted_files_have_no_finding(self):
        paths = fixtures("accepted")
        self.assertGreaterEqual(len(paths), 5)
        for path in paths:
            with self.subTest(file=os.path.basename(path)):
                result = run_gate(path)
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
                self.assertEqual(json.loads(result.stdout), [])

    def test_rejected_files_give_exactly_the_marked_rules_and_lines(self):
        paths = fixtures("rejected")
        self.assertGreaterEqual(len(paths), 50)
        for path in paths:
            with self.subTest(file=os.path.basename(path)):
                expected = expected_findings(path)
                self.assertTrue(expected, "a rejected fixture must mark what it expects")
                result = run_gate(path)
                self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
                findings = json.loads(result.stdout)
                self.assertEqual({(f["rule"], f["line"]) for f in findings}, expected)
                for finding in findings:
                    self.assertEqual(set(finding), {"rule", "line", "col", "excerpt", "message"})
                    self.assertIn(finding["rule"], triton_gate.RULES)
                    self.assertTrue(finding["message"])
                    if finding["line"]:
                        self.assertGreaterEqual(finding["col"], 1)
                        self.assertTrue(finding["excerpt"])

    def test_every_rule_has_a_rejected_fixture(self):
        marked = set()
        for path in fixtures("rejected"):
            marked |= {rule for rule, _ in expected_findings(path)}
        # size: see Cli.test_size_limit; entry-signature needs --arity: see Rules.test_arity_*
        self.assertEqual(set(triton_gate.RULES) - marked, {"size", "entry-signature"})

    def test_unparsable_files_exit_2_with_one_line_and_a_json_object(self):
        paths = fixtures("unparsable")
        self.assertGreaterEqual(len(paths), 3)
        for path in paths:
            with self.subTest(file=os.path.basename(path)):
                result = run_gate(path)
                self.assertEqual(result.returncode, 2)
                error = json.loads(result.stdout)
                self.assertEqual(error["error"], "cannot parse")
                self.assertGreaterEqual(error["line"], 1)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1)
                self.assertIn("cannot parse", result.stderr)

    def test_syntax_error_names_its_line(self):
        result = run_gate(os.path.join(HERE, "unparsable", "missing_colon.py"))
        self.assertEqual(json.loads(result.stdout)["line"], 3)


class Folding(unittest.TestCase):
    def fold(self, expression):
        return triton_gate.fold_string(triton_gate.ast.parse(expression, mode="eval").body)

    def test_constant_expressions_fold(self):
        self.assertEqual(self.fold('"mat" + "mul"'), "matmul")
        self.assertEqual(self.fold('"mat" "mul"'), "matmul")
        self.assertEqual(self.fold("f\"{'mat'}mul\""), "matmul")
        self.assertEqual(self.fold('("ma" + "t") + "mul"'), "matmul")
        self.assertEqual(self.fold('"ab" * 2'), "abab")

    def test_run_time_expressions_do_not_fold(self):
        self.assertIsNone(self.fold('"".join(["mat", "mul"])'))
        self.assertIsNone(self.fold('name + "mul"'))
        self.assertIsNone(self.fold('f"{name}mul"'))
        self.assertIsNone(self.fold("f\"{'mat'!r}\""))
        self.assertIsNone(self.fold('"a" * 1000'))


PRELUDE = "import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n\n"


class Rules(unittest.TestCase):
    def findings(self, body, **kwargs):
        found, error = triton_gate.check_source(PRELUDE + body, **kwargs)
        self.assertIsNone(error)
        offset = PRELUDE.count("\n")
        return {(f.rule, f.line - offset) for f in found}

    def test_scalar_positions_make_every_other_entry_parameter_a_tensor(self):
        body = "def run(Q, K, V, sm_scale, O):\n    s = sm_scale * 1.44\n    t = -Q\n"
        self.assertEqual(self.findings(body), set())  # Q is never used as a tensor: unknown
        self.assertEqual(self.findings(body, scalar_positions={3}), {("tensor-arithmetic", 3)})

    def test_arity_the_entry_cannot_take_is_a_finding(self):
        # Issue 27 (new-user probe 6): a three-tensor task's harness calls run(A, B, C).
        jit = "@triton.jit\ndef k2(a):\n    pass\n\n"
        for entry in ("def run(A, B):\n    k2[(1,)](A)\n", "def run():\n    pass\n",
                      "def run(A, B, C, D):\n    k2[(1,)](A)\n", "def run(A, B, C, *, stream):\n    k2[(1,)](A)\n"):
            with self.subTest(entry=entry.splitlines()[0]):
                self.assertEqual(self.findings(jit + entry, arity=3), {("entry-signature", 5)})
                self.assertEqual(self.findings(jit + entry), set())  # without the definition: not checked

    def test_arity_accepts_what_binds_positionally(self):
        jit = "@triton.jit\ndef k2(a):\n    pass\n\n"
        for entry in ("def run(A, B, C):\n    k2[(1,)](A)\n", "def run(A, B, C, D=None):\n    k2[(1,)](A)\n",
                      "def run(*tensors):\n    k2[(1,)](tensors[0])\n", "def run(A, B, C, *, s=1):\n    k2[(1,)](A)\n"):
            with self.subTest(entry=entry.splitlines()[0]):
                self.assertEqual(self.findings(jit + entry, arity=3), set())

    def test_tensors_are_followed_through_assignments_and_views(self):
        body = ("def run(A, B, C):\n    n = A.numel()\n    x = A.view(-1)\n    y = x[0:4]\n"
                "    z = y * 2\n    w = A.shape[0] * 2\n")
        self.assertEqual(self.findings(body), {("tensor-arithmetic", 5)})

    def test_jit_functions_may_compute(self):
        body = ("@triton.jit\ndef k2(a, b):\n    x = tl.load(a)\n    y = x @ x\n    z = x.sum(0)\n"
                "    tl.store(b, y + z)\n\ndef run(A, B, C):\n    k2[(1,)](A, B)\n")
        self.assertEqual(self.findings(body), set())

    def test_torch_is_checked_inside_jit_functions_too(self):
        body = "@triton.jit\ndef k2(a):\n    x = torch.matmul(a, a)\n\ndef run(A, B, C):\n    pass\n"
        self.assertEqual(self.findings(body), {("torch-compute", 3)})

    def test_info_objects_are_not_tensors(self):
        body = ("def run(A, B, C):\n    m = torch.finfo(A.dtype).max\n"
                "    p = torch.cuda.get_device_properties(A.device).name\n")
        self.assertEqual(self.findings(body), set())

    def test_module_as_value_and_annotations(self):
        self.assertEqual(self.findings("def run(A, B, C):\n    c = torch.cuda\n"), {("module-as-value", 2)})
        self.assertEqual(self.findings("def run(A: torch.nn.Module, B, C):\n    pass\n"), {("torch-compute", 1)})

    def test_allowed_subtrees_do_not_reach_private_names_or_other_modules(self):
        self.assertIsNone(triton_gate.path_verdict("triton.language.extra.cuda.libdevice.exp"))
        self.assertIsNone(triton_gate.path_verdict("triton.tools.tensor_descriptor.TensorDescriptor.from_tensor"))
        self.assertEqual(triton_gate.path_verdict("triton.language.core.builtins.eval"),
                         ("introspection", "triton.language.core.builtins"))
        self.assertEqual(triton_gate.path_verdict("triton.language.core._unwrap_if_constexpr")[0],
                         "triton-not-allowed")
        self.assertEqual(triton_gate.path_verdict("triton.language.os")[0], "process-spawn")
        self.assertEqual(triton_gate.path_verdict("typing.get_type_hints")[0], "import-not-allowed")
        body = "def run(A, B, C):\n    tl.core.builtins.exec('x')\n"
        self.assertEqual(self.findings(body), {("introspection", 2)})

    def test_columns_count_characters(self):
        found, _ = triton_gate.check_source(PRELUDE + "def run(A, B, C):\n    é = 1; C.copy_(torch.mm(A, B))\n")
        self.assertEqual([(f.rule, f.col) for f in found], [("torch-compute", 20)])


class Cli(unittest.TestCase):
    def write(self, text, suffix=".py"):
        handle, path = tempfile.mkstemp(suffix=suffix)
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        self.addCleanup(os.remove, path)
        return path

    def test_size_limit(self):
        path = self.write(PRELUDE + "def run(A, B, C):\n    pass\n" + "# padding\n" * 100)
        result = run_gate("--max-bytes", "200", path)
        self.assertEqual(result.returncode, 1)
        self.assertEqual([f["rule"] for f in json.loads(result.stdout)], ["size"])

    def test_the_candidate_is_never_executed(self):
        marker = os.path.join(tempfile.gettempdir(), f"triton_gate_marker_{os.getpid()}")
        path = self.write(f"import os\nos.makedirs({marker!r})\nraise SystemExit(7)\n")
        result = run_gate(path)
        self.assertEqual(result.returncode, 1)
        self.assertFalse(os.path.exists(marker))

    def test_bad_invocations_exit_2(self):
        self.assertEqual(run_gate().returncode, 2)
        self.assertEqual(run_gate("/nonexistent/kernel.py").returncode, 2)
        path = self.write(PRELUDE + "def run(A, B, C):\n    pass\n")
        self.assertEqual(run_gate("--scalar-positions", "x", path).returncode, 2)
        self.assertEqual(run_gate("--scalar-positions", "", path).returncode, 0)

    def test_deep_nesting_is_a_parse_error_not_a_crash(self):
        path = self.write("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
        result = run_gate(path)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_rules_are_listed(self):
        result = run_gate("--rules")
        self.assertEqual(result.returncode, 0)
        self.assertEqual(json.loads(result.stdout), triton_gate.RULES)


if __name__ == "__main__":
    unittest.main()
