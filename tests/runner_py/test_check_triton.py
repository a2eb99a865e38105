"""bench/triton/check_triton.py, the checker of a GPU run of the Triton track: verdicts that match
examples/triton/manifest.json and tests/exploits/triton/manifest.json pass; every mismatch, missing
case, missing honest follower, bad trajectory or service difference is one FAIL line; the exit status
is the number of FAIL lines; the first FAIL shows the verdict's message, log and the candidate's
runner log."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
CHECKER = os.path.join(ROOT, "bench", "triton", "check_triton.py")
EXAMPLES = os.path.join(ROOT, "examples", "triton", "manifest.json")
EXPLOITS = os.path.join(ROOT, "tests", "exploits", "triton", "manifest.json")
CONTROL = "control_tl_dot_gemm.py"


def example_verdict(e, work="", artifact=""):
    return {"file": "examples/triton/" + e["file"], "task": e["task"], "outcome": e["expected_outcome"],
            "status": e["expected_status"], "deciding_stage": e.get("expected_stage", ""),
            "message": "prefix " + e.get("expected_message", "correct") + " suffix", "log": "the log",
            "stages": [{"stage": "correctness", "outcome": "failed", "seconds": 1.0, "summary": "s"}],
            "build": {"artifact": artifact}, "environment": {"harness_work_dir": work, "sandbox": {"plain": {"applied": True}}},
            "target_instructions": {"verdict": e.get("expected_target_verdict", "deferred"), "reason": "r",
                                    "static_counts": {f: 10 for f in e.get("families_in_sass", [])},
                                    "dynamic_counts": {f: 100 for f in e.get("families_executed", [])}},
            "timing": {"speedup": 0.9}}


def exploit_verdict(name, e):
    status = e["expected_status"] if isinstance(e["expected_status"], str) else e["expected_status"][-1]
    x = e.get("expect", {})
    v = {"file": "tests/exploits/triton/" + name, "status": status, "outcome": "x",
         "deciding_stage": e.get("expected_deciding_stage", ""), "message": "a " + e.get("message_contains", "") + " b",
         "stages": [], "environment": {"sandbox": {"capture": {"applied": True}, "plain": {"applied": True}}},
         "target_instructions": {"verdict": x.get("target_verdict", "deferred"),
                                 "static_counts": {"GMMA": 4} if x.get("target_verdict") == "executed" else {},
                                 "dynamic_counts": {"GMMA": 9} if x.get("target_verdict") == "executed" else {},
                                 "coverage": {f: {"fraction": c / 2} for f, c in x.get("max_coverage", {}).items()}}}
    if "target_correct" in x:
        v["target_correct"] = x["target_correct"]
    return v


class CheckerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.work = os.path.join(self.tmp, "runs")
        os.makedirs(os.path.join(self.work, "c1-capture"))
        with open(os.path.join(self.work, "c1-capture", "runner-1.log"), "w") as f:
            f.write("ptxbench-triton-runner: candidate /cache/triton/k1/kernel.py\nTraceback: the warm-up failed\n")
        with open(EXAMPLES) as f:
            self.examples = {e["file"]: e for e in json.load(f)["examples"]}
        with open(EXPLOITS) as f:
            self.exploits = json.load(f)["cases"]

    def run_checker(self, *eval_lists, expect_examples="none", expect_exploits="none", extra=()):
        paths = []
        for i, verdicts in enumerate(eval_lists):
            paths.append(os.path.join(self.tmp, f"e{i}.json"))
            with open(paths[-1], "w") as f:
                json.dump(verdicts, f)
        args = [sys.executable, "-B", CHECKER, "--examples", EXAMPLES, "--exploits", EXPLOITS, "--expect-examples",
                expect_examples, "--expect-exploits", expect_exploits, "--out", os.path.join(self.tmp, "s.json"), *extra]
        return subprocess.run(args + paths, capture_output=True, text=True, timeout=60)

    def pair(self, name):
        return [exploit_verdict(name, self.exploits[name]), exploit_verdict(CONTROL, self.exploits[CONTROL])]

    def test_every_exploit_with_its_honest_follower_passes(self):
        verdicts = []
        for name, e in self.exploits.items():
            if name != CONTROL:
                verdicts += self.pair(name) if not e["cpu_check"] else [exploit_verdict(name, e)]
        r = self.run_checker(verdicts, expect_exploits="all")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertNotIn("FAIL", r.stdout.replace("0 FAIL", ""))
        gpu_cases = sum(1 for n, e in self.exploits.items() if n != CONTROL and not e["cpu_check"])
        self.assertEqual(r.stdout.count("PASS honest after"), gpu_cases)
        self.assertEqual(r.stdout.count("PASS exploit"), len(verdicts))

    def test_each_failure_is_one_line_and_the_exit_status_counts_them(self):
        bad = self.pair("forge_cubin_swap.py")
        bad[0].update(status="COMPILE_ERROR", deciding_stage="sanitize", message="cannot load the launch plan")
        nofollow = [exploit_verdict("cache_by_pointer.py", self.exploits["cache_by_pointer.py"])]
        r = self.run_checker(bad, nofollow, expect_exploits="forge_cubin_swap.py,cache_by_pointer.py,sandbox_fork.py")
        self.assertEqual(r.returncode, 3, r.stdout)
        self.assertIn("FAIL exploit  forge_cubin_swap.py", r.stdout)
        self.assertIn("decided at sanitize (expected link_gate)", r.stdout)
        self.assertIn("FAIL honest after cache_by_pointer.py", r.stdout)
        self.assertIn("nothing was evaluated after it", r.stdout)
        self.assertIn("FAIL exploit  sandbox_fork.py", r.stdout)
        self.assertIn("was not evaluated", r.stdout)
        self.assertIn("==== first FAIL: forge_cubin_swap.py", r.stdout)

    def test_an_honest_follower_must_pass_inside_the_sandbox(self):
        pair = self.pair("sandbox_socket.py")
        pair[1]["environment"]["sandbox"]["plain"]["applied"] = False
        r = self.run_checker(pair)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("runner 'plain' reports the sandbox applied=False", r.stdout)
        pair = self.pair("sandbox_socket.py")
        pair[1].update(status="RUNTIME_ERROR", message="the harness lost its GPU")
        r = self.run_checker(pair)
        self.assertEqual(r.returncode, 2, r.stdout)  # the control's own line and the follower line
        self.assertIn("control_tl_dot_gemm.py ended RUNTIME_ERROR", r.stdout)

    def test_a_list_of_statuses_and_the_extra_expectations(self):
        thread = exploit_verdict("work_python_thread.py", self.exploits["work_python_thread.py"])
        for status in ("INCORRECT_NUMERICAL", "RUNTIME_ERROR"):
            thread["status"] = status
            r = self.run_checker([thread, exploit_verdict(CONTROL, self.exploits[CONTROL])])
            self.assertEqual(r.returncode, 0, r.stdout)
        thread["status"] = "PASSED"
        self.assertEqual(self.run_checker([thread, exploit_verdict(CONTROL, self.exploits[CONTROL])]).returncode, 1)
        token = self.pair("token_gmma_side.py")
        token[0]["target_instructions"]["coverage"]["GMMA"]["fraction"] = 0.9
        token[0]["target_correct"] = True
        r = self.run_checker(token)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("GMMA coverage 0.9 (expected at most 0.001)", r.stdout)
        self.assertIn("target_correct True (expected False)", r.stdout)

    def test_files_an_attack_must_not_leave(self):
        home = os.path.join(self.tmp, "home")
        os.makedirs(home)
        pair = self.pair("sandbox_files.py")
        env = dict(os.environ, HOME=home)
        paths = os.path.join(self.tmp, "e.json")
        with open(paths, "w") as f:
            json.dump(pair, f)
        args = [sys.executable, "-B", CHECKER, "--examples", EXAMPLES, "--exploits", EXPLOITS, "--expect-examples",
                "none", "--expect-exploits", "none", "--out", os.path.join(self.tmp, "s.json"), paths]
        self.assertEqual(subprocess.run(args, capture_output=True, text=True, env=env).returncode, 0)
        open(os.path.join(home, "ptxbench-triton-exploit-home-marker"), "w").close()
        r = subprocess.run(args, capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("the attack got through", r.stdout)

    def test_examples_solutions_dynamic_check_and_runner_log(self):
        e = self.examples["gemm_tl_dot.py"]
        v = example_verdict(e)
        v["file"] = "/r/examples/solutions/gemm_tl_dot.py.json"  # a Solution made from the example
        r = self.run_checker([v], expect_examples="gemm_tl_dot.py")
        self.assertEqual(r.returncode, 0, r.stdout)
        # Without the dynamic check the static verdict stands in; the static families still count.
        v["stages"].append({"stage": "dynamic_check", "outcome": "skipped", "seconds": 0, "summary": ""})
        v["target_instructions"].update({"verdict": "present_in_sass", "dynamic_counts": None})
        r = self.run_checker([v])
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("executed not checked", r.stdout)
        v["target_instructions"]["static_counts"] = {"HMMA": 10}
        r = self.run_checker([v])
        self.assertEqual(r.returncode, 1)
        self.assertIn("GMMA not in the static SASS", r.stdout)
        # A failure shows the candidate's runner log, found by its stored kernel.py.
        hang = example_verdict(self.examples["fail_hang.py"], self.work, "/cache/triton/k1/kernel.py")
        hang.update(status="RUNTIME_ERROR", outcome="runtime_error", message="during the warm-up call: raised")
        r = self.run_checker([hang, example_verdict(e)])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("Traceback: the warm-up failed", r.stdout)

    def test_unreadable_eval_and_unknown_files(self):
        r = self.run_checker([{"file": "x/other.py", "status": "PASSED"}])
        self.assertEqual(r.returncode, 1)
        self.assertIn("in no manifest", r.stdout)
        args = [sys.executable, "-B", CHECKER, "--examples", EXAMPLES, "--exploits", EXPLOITS, "--out",
                os.path.join(self.tmp, "s.json"), "--expect-examples", "none", "--expect-exploits", "none",
                os.path.join(self.tmp, "killed.json")]
        r = subprocess.run(args, capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot read", r.stdout)
        r = self.run_checker([], expect_exploits="no_such.py")
        self.assertEqual(r.returncode, 2)

    def test_trajectory_and_service(self):
        traj = {"info": {"ptxbench": {"language": "triton"}, "exit_status": "Submitted"},
                "messages": [{}, {}, {"role": "assistant"},
                             {"role": "user", "content": "f0", "extra": {"ptxbench": {"label": "rejected"}}},
                             {"role": "assistant"},
                             {"role": "user", "content": "f1", "extra": {"ptxbench": {"label": "passed",
                                                                                       "target_correct": True}}}]}
        tpath = os.path.join(self.tmp, "t.json")
        with open(tpath, "w") as f:
            json.dump(traj, f)
        svc = os.path.join(self.tmp, "service")
        os.makedirs(svc)
        key = {"status": "PASSED", "outcome": "passed", "target_verdict": "executed", "deciding_stage": ""}
        with open(os.path.join(svc, "upstream_client.json"), "w") as f:
            json.dump({"summary": {"rows": [{"file": "/s/gemm_tl_dot.py.json", "status": "PASSED", "problems": [],
                                              "resubmission_cached": True}],
                                   "resubmission_wall_seconds": 0.2, "resubmission_under_1s": True}}, f)
        with open(os.path.join(svc, "compare.json"), "w") as f:
            json.dump({"ok": True, "paths": {"upstream": [{"file": "/s/gemm_tl_dot.py.json", "service": key,
                                                           "direct": key, "identical": True}]}}, f)
        extra = ["--trajectory", tpath, "--service", svc]
        r = self.run_checker([], extra=extra)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(r.stdout.count("PASS service"), 3)
        different = dict(key, deciding_stage="correctness", status="INCORRECT_NUMERICAL")
        with open(os.path.join(svc, "compare.json"), "w") as f:
            json.dump({"ok": False, "paths": {"upstream": [{"file": "/s/gemm_tl_dot.py.json", "service": different,
                                                            "direct": key, "identical": False}]}}, f)
        traj["messages"][5]["extra"]["ptxbench"]["target_correct"] = False
        with open(tpath, "w") as f:
            json.dump(traj, f)
        r = self.run_checker([], extra=extra)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("service INCORRECT_NUMERICAL/executed/correctness, direct PASSED/executed/-", r.stdout)
        self.assertIn("last turn not target-correct", r.stdout)
        os.remove(os.path.join(svc, "compare.json"))
        r = self.run_checker([], extra=["--service", svc])
        self.assertEqual(r.returncode, 1)
        self.assertIn("no readable compare.json", r.stdout)


if __name__ == "__main__":
    unittest.main()
