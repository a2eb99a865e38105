"""bench/triton/check_triton_examples.py, the checker the GPU runs of bench/triton/triton_examples.sh rely on:
verdicts that match examples/triton/manifest.json pass; a mismatch fails and prints the first
mismatch's message, log and the candidate's runner log; a missing example fails."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
CHECKER = os.path.join(ROOT, "bench", "triton", "check_triton_examples.py")
MANIFEST = os.path.join(ROOT, "examples", "triton", "manifest.json")


def verdict(e, work, artifact):
    executed = {f: 100 for f in e.get("families_executed", [])}
    in_sass = {f: 10 for f in e.get("families_in_sass", [])}
    return {"file": "examples/triton/" + e["file"], "task": e["task"], "outcome": e["expected_outcome"],
            "status": e["expected_status"], "deciding_stage": e.get("expected_stage", ""),
            "message": "prefix " + e.get("expected_message", "correct") + " suffix",
            "log": "the log", "stages": [{"stage": "correctness", "outcome": "failed", "seconds": 1.0, "summary": "s"}],
            "build": {"artifact": artifact},
            "environment": {"harness_work_dir": work},
            "target_instructions": {"verdict": e.get("expected_target_verdict", "deferred"), "reason": "r",
                                    "static_counts": in_sass, "dynamic_counts": executed},
            "timing": {"speedup": 0.9}}


class CheckerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.work = os.path.join(self.tmp, "runs")
        os.makedirs(os.path.join(self.work, "c1-plain"))
        with open(os.path.join(self.work, "c1-plain", "runner-1.log"), "w") as f:
            f.write("ptxbench-triton-runner: candidate /cache/triton/k1/kernel.py\nTraceback: the warm-up failed\n")
        with open(MANIFEST) as f:
            self.examples = json.load(f)["examples"]

    def run_checker(self, verdicts, trajectory=None, expect=None, extra_evals=()):
        evals = os.path.join(self.tmp, "evals.json")
        with open(evals, "w") as f:
            json.dump(verdicts, f)
        args = [sys.executable, "-B", CHECKER, "--manifest", MANIFEST, "--out", os.path.join(self.tmp, "s.json")]
        if trajectory:
            args += ["--trajectory", trajectory]
        if expect is not None:
            args += ["--expect", ",".join(expect)]
        return subprocess.run(args + [evals, *extra_evals], capture_output=True, text=True, timeout=60)

    def by_file(self, name):
        return next(e for e in self.examples if e["file"] == name)

    def test_a_part_is_held_only_to_the_examples_it_names(self):
        names = ["fail_wrong_result.py", "gemm_tl_dot.py"]
        vs = [verdict(self.by_file(n), self.work, f"/c/k{i}/kernel.py") for i, n in enumerate(names)]
        r = self.run_checker(vs, expect=names)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("MISSING", r.stdout)
        r = self.run_checker(vs, expect=names + ["fail_hang.py"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("MISSING   fail_hang.py", r.stdout)
        r = self.run_checker(vs, expect=["no_such_example.py"])
        self.assertEqual(r.returncode, 2)

    def test_without_the_dynamic_check_executed_families_are_not_required(self):
        v = verdict(self.by_file("gemm_tl_dot.py"), self.work, "/c/k/kernel.py")
        v["stages"].append({"stage": "dynamic_check", "outcome": "skipped", "seconds": 0, "summary": ""})
        v["target_instructions"].update({"verdict": "present_in_sass", "dynamic_counts": None})
        r = self.run_checker([v], expect=["gemm_tl_dot.py"])
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("executed not checked", r.stdout)
        # The static families still count.
        v["target_instructions"]["static_counts"] = {"HMMA": 10}
        r = self.run_checker([v], expect=["gemm_tl_dot.py"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("GMMA not in the static SASS", r.stdout)
        # With the dynamic check run, a missing executed family is a mismatch.
        v = verdict(self.by_file("gemm_tl_dot.py"), self.work, "/c/k/kernel.py")
        v["target_instructions"]["dynamic_counts"] = {}
        r = self.run_checker([v], expect=["gemm_tl_dot.py"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("GMMA not executed", r.stdout)

    def test_an_eval_that_wrote_nothing_is_a_named_failure(self):
        v = verdict(self.by_file("gemm_tl_dot.py"), self.work, "/c/k/kernel.py")
        r = self.run_checker([v], expect=["gemm_tl_dot.py"], extra_evals=[os.path.join(self.tmp, "killed.json")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot read", r.stdout)
        self.assertIn("killed.json", r.stdout)

    def test_all_as_expected_passes(self):
        r = self.run_checker([verdict(e, self.work, f"/cache/triton/k{i}/kernel.py") for i, e in enumerate(self.examples)])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("PASS", r.stdout)
        self.assertIn(f"{len(self.examples)}/{len(self.examples)} verdicts as expected", r.stdout)

    def test_first_mismatch_shows_message_log_and_runner_log(self):
        vs = [verdict(e, self.work, f"/cache/triton/k{i}/kernel.py") for i, e in enumerate(self.examples)]
        vs[1]["outcome"] = "runtime_error"
        vs[1]["status"] = "RUNTIME_ERROR"
        vs[1]["message"] = "during the warm-up call: the candidate raised AttributeError"
        r = self.run_checker(vs)
        self.assertEqual(r.returncode, 1)
        self.assertIn("MISMATCH", r.stdout)
        self.assertIn("==== first mismatch: " + self.examples[1]["file"], r.stdout)
        self.assertIn("the candidate raised AttributeError", r.stdout)
        self.assertIn("Traceback: the warm-up failed", r.stdout)  # the runner log, found by the stored path
        self.assertIn("FAIL", r.stdout)

    def test_missing_example_fails(self):
        r = self.run_checker([verdict(self.examples[0], self.work, "/x/kernel.py")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("MISSING", r.stdout)

    def test_trajectory_labels(self):
        traj = {"info": {"ptxbench": {"language": "triton"}, "exit_status": "LimitsExceeded"},
                "messages": [{}, {}, {"role": "assistant"},
                             {"role": "user", "content": "f0", "extra": {"ptxbench": {"label": "rejected"}}},
                             {"role": "assistant"},
                             {"role": "user", "content": "f1", "extra": {"ptxbench": {"label": "passed",
                                                                                       "target_correct": True}}}]}
        path = os.path.join(self.tmp, "t.json")
        with open(path, "w") as f:
            json.dump(traj, f)
        vs = [verdict(e, self.work, f"/c/k{i}/kernel.py") for i, e in enumerate(self.examples)]
        self.assertEqual(self.run_checker(vs, path).returncode, 0)
        traj["messages"][5]["extra"]["ptxbench"]["target_correct"] = False
        with open(path, "w") as f:
            json.dump(traj, f)
        r = self.run_checker(vs, path)
        self.assertEqual(r.returncode, 1)
        self.assertIn("last turn not target-correct", r.stdout)


if __name__ == "__main__":
    unittest.main()
