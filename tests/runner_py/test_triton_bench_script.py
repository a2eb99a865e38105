"""bench/triton/triton_examples.sh's plumbing without a GPU (PTXBENCH_GPU_MODEL names an H200), against
a stand-in `ptxbench` (bench_stub/): each
part runs its cases, records them in cases.tsv, checks them with check_triton_examples.py and packs
$OUT/triton.tar.gz; a case that hangs is killed at its limit, later cases past the part's deadline
are skipped loudly, and the results of the cases that ran are kept and packed all the same."""

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
SCRIPT = os.path.join(ROOT, "bench", "triton", "triton_examples.sh")


@unittest.skipUnless(shutil.which("bash") and shutil.which("timeout") and shutil.which("tar"), "bash, timeout, tar")
class TritonBenchScriptTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.results = os.path.join(self.tmp, "h200", "triton")
        self.out = os.path.join(self.tmp, "device-out")

    def run_part(self, part, **env):
        e = dict(os.environ, PTXBENCH_BIN=os.path.join(HERE, "bench_stub"), PTXBENCH_ROOT=ROOT,
                 PTXBENCH_RESULTS_ROOT=self.tmp, PTXBENCH_GPU_MODEL="NVIDIA H200", OUT=self.out,
                 PTXBENCH_CUDNN_DIR="system", **env)
        return subprocess.run(["bash", SCRIPT, part], env=e, capture_output=True, text=True, timeout=300)

    def cases(self, part):
        with open(os.path.join(self.results, part, "cases.tsv")) as f:
            return [line.rstrip("\n").split("\t") for line in f][1:]

    def read(self, part, name):
        with open(os.path.join(self.results, part, name)) as f:
            return f.read()

    def packed(self):
        with tarfile.open(os.path.join(self.out, "triton.tar.gz")) as t:
            return set(t.getnames())

    def test_core_part_runs_every_case_checks_and_packs(self):
        r = self.run_part("core")
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-2000:])
        self.assertEqual([c[0] for c in self.cases("core")],
                         ["diagnose", "gemm_full", "wrong_and_gate", "device_fault", "hidden_torch_compute"])
        summary = self.read("core", "summary.txt")
        self.assertIn("PASS", summary)
        self.assertIn("9/9 verdicts as expected", summary)  # 5 failures, the good GEMM 4 times (once in full)
        with open(os.path.join(self.results, "core", "summary.json")) as f:
            self.assertTrue(json.load(f)["ok"])
        self.assertIn("triton/core/summary.json", self.packed())
        self.assertIn("triton/core/wrong_and_gate.json", self.packed())
        check = self.read("core", "check.txt")
        self.assertIn("fail_torch_matmul.py", check)

    def test_failures_and_replay_parts(self):
        r = self.run_part("failures")
        self.assertEqual(r.returncode, 0, r.stdout[-3000:])
        self.assertEqual([c[0] for c in self.cases("failures")], ["exception", "hang", "output_cache"])
        self.assertIn("6/6 verdicts as expected", self.read("failures", "summary.txt"))
        r = self.run_part("replay")
        self.assertEqual(r.returncode, 0, r.stdout[-3000:])
        self.assertEqual([c[0] for c in self.cases("replay")], ["agent_replay"])
        self.assertIn("trajectory ok", self.read("replay", "summary.txt"))
        # Both parts end up in the one tarball.
        self.assertTrue({"triton/failures/summary.json", "triton/replay/summary.json"} <= self.packed())

    def test_a_hanging_case_is_killed_and_the_rest_is_skipped_loudly_but_kept(self):
        # The first case of the failures part hangs: killed when the 12 s budget runs out;
        # everything after it is skipped.
        r = self.run_part("failures", STUB_HANG="fail_exception.py", BUDGET_S="12", MIN_CASE_S="4")
        self.assertEqual(r.returncode, 1)
        cases = dict((c[0], c[1]) for c in self.cases("failures"))
        self.assertIn(cases["exception"], ("124", "137"))
        self.assertEqual(cases["output_cache"], "skipped")
        self.assertIn("TIMED OUT", r.stdout)
        self.assertIn("SKIPPED", r.stdout)
        summary = self.read("failures", "summary.txt")
        self.assertIn("FAIL", summary)
        self.assertIn("MISSING", summary)
        self.assertIn("triton/failures/cases.tsv", self.packed())  # packed all the same


if __name__ == "__main__":
    unittest.main()
