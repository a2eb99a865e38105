"""bench/triton/triton_gpu.sh's plumbing without a GPU, against a stand-in `ptxbench` (bench_stub/):
the chunks of the examples, exploits and agent parts spread over the lanes, each recorded in
cases.tsv, the verdicts checked by bench/triton/check_triton.py (one PASS/FAIL line per expectation,
exit status = FAIL lines) and packed into $OUT/triton.tar.gz; a chunk that hangs is killed at the
budget, later chunks are skipped loudly and their cases FAIL as not evaluated, and what ran is kept
and packed all the same. (The service part needs `ptxbench serve`; its comparison is tested in
test_check_triton.py.)"""

import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
SCRIPT = os.path.join(ROOT, "bench", "triton", "triton_gpu.sh")


@unittest.skipUnless(shutil.which("bash") and shutil.which("timeout") and shutil.which("tar"), "bash, timeout, tar")
class TritonBenchScriptTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.out = os.path.join(self.tmp, "device-out")
        self.results = None  # the run's folder: <results root>/h100/triton/<run>

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_parts(self, *parts, **env):
        e = dict(os.environ, PTXBENCH_BIN=os.path.join(HERE, "bench_stub"), PTXBENCH_ROOT=ROOT,
                 PTXBENCH_GPU_MODEL="NVIDIA H100 80GB HBM3", PTXBENCH_RESULTS_ROOT=os.path.join(self.tmp, "results"),
                 OUT=self.out, PTXBENCH_CUDNN_DIR="system")
        e.pop("PTXBENCH_DEVICE", None)
        e.update({"LANES": "3", **env})
        run = "-".join(parts) if parts and len(parts) < 4 else "all"
        self.results = os.path.join(self.tmp, "results", "h100", "triton", run)
        return subprocess.run(["bash", SCRIPT, *parts], env=e, capture_output=True, text=True, timeout=300)

    def cases(self):
        with open(os.path.join(self.results, "cases.tsv")) as f:
            return {row[0]: row for row in (line.rstrip("\n").split("\t") for line in list(f)[1:])}

    def read(self, name):
        with open(os.path.join(self.results, name)) as f:
            return f.read()

    def packed(self):
        with tarfile.open(os.path.join(self.out, "triton.tar.gz")) as t:
            return set(t.getnames())

    def test_examples_exploits_and_agent_run_check_and_pack(self):
        r = self.run_parts("examples", "exploits", "agent")
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-2000:])
        self.assertEqual(set(self.cases()), {"ex_full_gemm", "ex_full_attention", "ex_gate", "ex_quick_a", "ex_quick_b",
                                             "x_gate", "x_vendor", "x_forge_a", "x_forge_b", "x_switch", "x_work",
                                             "x_sandbox", "x_instr", "agent_replay"})
        summary = self.read("summary.txt")
        self.assertTrue(summary.endswith("FAILS: 0\n"), summary[-300:])
        self.assertNotIn("FAIL ", summary)
        # Every example and exploit has its line, and every risky case its honest follower.
        with open(os.path.join(ROOT, "tests", "exploits", "triton", "manifest.json")) as f:
            exploits = json.load(f)["cases"]
        for name, case in exploits.items():
            self.assertIn(f"PASS exploit  {name}", summary)
            if not case["cpu_check"] and name != "control_tl_dot_gemm.py":
                self.assertIn(f"PASS honest after {name}: control_tl_dot_gemm.py PASSED", summary)
        self.assertIn("PASS honest after fail_hang.py: gemm_tl_dot.py PASSED", summary)
        self.assertIn("PASS trajectory ['rejected', 'passed']", summary)
        # The full examples were evaluated as the Solutions the service also gets.
        sols = os.listdir(os.path.join(self.results, "examples", "solutions"))
        self.assertIn("gemm_tl_dot.py.json", sols)
        with open(os.path.join(self.results, "examples", "solutions", "attention_fwd.py.json")) as f:
            sol = json.load(f)
        self.assertEqual((sol["definition"], sol["spec"]["language"], sol["spec"]["target_hardware"]),
                         ("mha_with_lse_d128", "triton", ["H100"]))
        with open(os.path.join(self.results, "summary.json")) as f:
            self.assertTrue(json.load(f)["ok"])
        self.assertTrue({"triton/examples-exploits-agent/summary.txt", "triton/examples-exploits-agent/exploits/x_sandbox.json",
                         "triton/examples-exploits-agent/cases.tsv", "triton/examples-exploits-agent/run.log"}
                        <= self.packed())

    def test_one_part_alone(self):
        r = self.run_parts("agent")
        self.assertEqual(r.returncode, 0, r.stdout[-3000:])
        self.assertEqual(set(self.cases()), {"agent_replay"})
        self.assertEqual(self.read("summary.txt"), "PASS trajectory ['rejected', 'passed'] "
                         "(gemm_n7168_k5120__h100__base__t0.json)\nFAILS: 0\n")
        agent_only = self.results
        r = self.run_parts("exploits")  # another run's folder: the agent's results stay
        self.assertTrue(os.path.exists(os.path.join(agent_only, "summary.txt")))
        r = self.run_parts("nonsense")
        self.assertEqual(r.returncode, 2)
        r = self.run_parts("agent", PTXBENCH_GPU_MODEL="NVIDIA GH200 480GB")
        self.assertEqual(r.returncode, 2)
        self.assertIn("GH200", r.stderr)

    def test_a_hanging_chunk_is_killed_and_the_rest_is_skipped_loudly_but_kept(self):
        # One lane: the agent runs first, then ex_quick_a hangs until the budget is gone; what follows
        # is skipped, its cases FAIL as not evaluated, and the results so far are checked and packed.
        r = self.run_parts("examples", "agent", STUB_HANG="fail_exception.py", BUDGET_S="10", MIN_CHUNK_S="4",
                           LANES="1")
        cases = self.cases()
        self.assertIn(cases["ex_quick_a"][2], ("124", "137"), r.stdout[-3000:])
        self.assertIn("skipped", {row[2] for row in cases.values()})
        self.assertIn("TIMED OUT", r.stdout)
        self.assertIn("SKIPPED", r.stdout)
        summary = self.read("summary.txt")
        self.assertIn("FAIL example  fail_exception.py", summary)
        self.assertIn("was not evaluated", summary)
        self.assertGreater(r.returncode, 0)
        self.assertEqual(r.returncode, summary.count("FAIL "))
        self.assertIn("triton/examples-agent/cases.tsv", self.packed())


if __name__ == "__main__":
    unittest.main()
