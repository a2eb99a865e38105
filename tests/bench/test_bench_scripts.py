"""The bench scripts without a GPU (label cpu): the one GPU-detection rule (bench/lib/gpu_target.sh)
against a fake nvidia-smi on PATH, the results folder and tarball every script gets from
bench/lib/env.sh (also when a time limit stops it), and rules every script under bench/ must keep:
it parses (`bash -n`, python compiles), it is listed in bench/README.md, it names no GPU, and a GPU
script goes through bench_gpu; and the GPU occupancy the service checks compute from lease holds."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
BENCH = os.path.join(ROOT, "bench")
DETECT = os.path.join(BENCH, "lib", "gpu_target.sh")
ENV = os.path.join(BENCH, "lib", "env.sh")
BASH = shutil.which("bash") or "/bin/bash"
PYTHON = shutil.which("python3")

# Scripts left where they were while another branch moves them (none now).
TRANSITIONAL = set()
# Scripts under the GPU areas that run on the CPU (fake workers, rendering a committed run).
CPU_ONLY = {"service/http_bench.sh", "service/queue_bench.sh", "agents/report_agent_run.sh"}


def bench_files(ext):
    out = []
    for path in glob.glob(os.path.join(BENCH, "**", "*." + ext), recursive=True):
        rel = os.path.relpath(path, BENCH)
        if rel.startswith("results" + os.sep):
            continue
        out.append(rel)
    return sorted(out)


def bench_module(rel):
    """A Python helper under bench/ imported as a module, for testing its functions."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(rel))[0], os.path.join(BENCH, rel))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeGpu:
    """A folder for PATH with python3 (the detection reads suite/targets.json with it) and, when a
    model is given, an nvidia-smi that prints it and records its arguments."""

    def __init__(self, tmp, model=None, exit_code=0):
        home = tempfile.mkdtemp(dir=tmp, prefix="gpu-")
        self.dir = os.path.join(home, "bin")
        os.makedirs(self.dir)
        os.symlink(PYTHON, os.path.join(self.dir, "python3"))
        self.args_file = os.path.join(home, "nvidia-smi.args")
        if model is not None:
            smi = os.path.join(self.dir, "nvidia-smi")
            with open(smi, "w") as f:
                f.write("#!%s\necho \"$*\" > %s\n" % (BASH, self.args_file))
                if exit_code:
                    f.write("echo 'No devices were found'\nexit %d\n" % exit_code)
                else:
                    f.write("printf '%%s\\n' %s\n" % shlex_quote(model))
            os.chmod(smi, 0o755)

    def args(self):
        with open(self.args_file) as f:
            return f.read().strip()


def shlex_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


@unittest.skipUnless(PYTHON and os.path.exists(BASH), "needs bash and python3")
class GpuTargetTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def detect(self, gpu, **env):
        e = {"PATH": gpu.dir, "HOME": self.tmp, "PTXBENCH_ROOT": ROOT}
        e.update(env)
        return subprocess.run([BASH, DETECT], env=e, capture_output=True, text=True, timeout=60)

    def assert_target(self, model, target):
        gpu = FakeGpu(self.tmp, model)
        r = self.detect(gpu)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, target), r.stderr)
        self.assertEqual(gpu.args(), "--query-gpu=name --format=csv,noheader -i 0")

    def assert_one_line_error(self, r, *fragments):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "")
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def test_an_h100_sxm_is_h100_by_its_exact_gpu_name(self):
        self.assert_target("NVIDIA H100 80GB HBM3", "h100")

    def test_an_h200_is_h200(self):
        self.assert_target("NVIDIA H200", "h200")

    def test_an_h100_pcie_is_h100_by_the_whole_word(self):
        self.assert_target("NVIDIA H100 PCIe", "h100")

    def test_a_gh200_is_no_target_and_a_clear_error(self):
        gpu = FakeGpu(self.tmp, "NVIDIA GH200 480GB")
        self.assert_one_line_error(self.detect(gpu), "NVIDIA GH200 480GB", "none of the suite's targets")

    def test_no_nvidia_smi_is_a_clear_error(self):
        self.assert_one_line_error(self.detect(FakeGpu(self.tmp)), "no NVIDIA GPU", "nvidia-smi not found")

    def test_nvidia_smi_without_a_gpu_is_a_clear_error(self):
        gpu = FakeGpu(self.tmp, "unused", exit_code=6)
        self.assert_one_line_error(self.detect(gpu), "found no GPU 0", "exit 6", "No devices were found")

    def test_the_device_index_is_asked_about(self):
        gpu = FakeGpu(self.tmp, "NVIDIA H200")
        r = self.detect(gpu, PTXBENCH_DEVICE="3")
        self.assertEqual(r.stdout.strip(), "h200", r.stderr)
        self.assertEqual(gpu.args(), "--query-gpu=name --format=csv,noheader -i 3")

    def test_the_override_names_the_model_without_nvidia_smi(self):
        r = self.detect(FakeGpu(self.tmp), PTXBENCH_GPU_MODEL="NVIDIA H100 80GB HBM3")
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "h100"), r.stderr)
        r = self.detect(FakeGpu(self.tmp), PTXBENCH_GPU_MODEL="NVIDIA GH200 480GB")
        self.assert_one_line_error(r, "GH200")


@unittest.skipUnless(PYTHON and os.path.exists(BASH) and shutil.which("tar") and shutil.which("timeout"),
                     "needs bash, python3, tar and timeout")
class BenchEnvTest(unittest.TestCase):
    """bench_gpu, bench_check, bench_done and the packing at exit, as a bench script uses them."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.results = os.path.join(self.tmp, "results")
        self.out = os.path.join(self.tmp, "out")

    def script(self, body, model="NVIDIA H100 80GB HBM3", limit=None):
        path = os.path.join(self.tmp, "demo.sh")
        with open(path, "w") as f:
            f.write("set -uo pipefail\nsource %s\n%s\n" % (shlex_quote(ENV), body))
        env = dict(os.environ, PTXBENCH_RESULTS_ROOT=self.results, OUT=self.out, PTXBENCH_CUDNN_DIR="system",
                   PTXBENCH_ROOT=ROOT, PTXBENCH_BIN=os.path.join(self.tmp, "no-bin"))
        env.pop("PTXBENCH_DEVICE", None)
        if model is None:
            env.pop("PTXBENCH_GPU_MODEL", None)
            env["PATH"] = FakeGpu(self.tmp).dir + os.pathsep + "/usr/bin" + os.pathsep + "/bin"
        else:
            env["PATH"] = FakeGpu(self.tmp).dir + os.pathsep + os.environ.get("PATH", "")
            env["PTXBENCH_GPU_MODEL"] = model
        cmd = [BASH, path] if limit is None else ["timeout", str(limit), BASH, path]
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)

    def packed(self, name):
        with tarfile.open(os.path.join(self.out, name + ".tar.gz")) as t:
            return {m.name: m for m in t.getmembers()}, t

    def test_results_go_to_the_targets_folder_and_are_packed_with_the_log(self):
        r = self.script('bench_gpu demo/part\necho "results=$RESULTS target=$PTXBENCH_TARGET"\n'
                        'echo data > "$RESULTS/file.txt"\nbench_check "one holds" 0\nbench_check "two holds" 1\n'
                        'bench_check "three holds" 1\nbench_done')
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)  # the number of FAILs
        folder = os.path.join(self.results, "h100", "demo", "part")
        self.assertIn("results=%s target=h100" % folder, r.stdout)
        with open(os.path.join(folder, "summary.txt")) as f:
            self.assertEqual(f.read().splitlines(), ["PASS one holds", "FAIL two holds", "FAIL three holds", "FAILS: 2"])
        with open(os.path.join(folder, "run.log")) as f:
            log = f.read()
        self.assertRegex(log, r"# gpu 0: NVIDIA H100 80GB HBM3 .*target h100")
        names, _ = self.packed("demo")
        self.assertTrue({"demo/part/run.log", "demo/part/file.txt", "demo/part/summary.txt"} <= set(names), names)

    def test_a_time_limit_still_leaves_the_results_packed(self):
        r = self.script('bench_gpu slow\necho started > "$RESULTS/progress.txt"\necho started\nsleep 60', limit=4)
        self.assertEqual(r.returncode, 124)
        names, _ = self.packed("slow")
        self.assertIn("slow/progress.txt", names)
        self.assertIn("slow/run.log", names)

    def test_without_a_gpu_nothing_is_created_and_the_error_is_one_line(self):
        r = self.script("bench_gpu demo\necho should-not-run", model=None)
        self.assertEqual(r.returncode, 2)
        self.assertNotIn("should-not-run", r.stdout)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(self.results))
        self.assertFalse(os.path.exists(self.out))

    def test_a_bad_folder_name_is_refused(self):
        for name in ("../escape", "/abs", "a b"):
            r = self.script("bench_gpu %s" % shlex_quote(name))
            self.assertEqual(r.returncode, 2, name)
            self.assertIn("results folder name", r.stderr)


@unittest.skipUnless(os.path.exists(BASH), "needs bash")
class BenchScriptsTest(unittest.TestCase):
    def test_every_shell_script_parses(self):
        scripts = bench_files("sh")
        self.assertGreater(len(scripts), 30)
        for rel in scripts:
            r = subprocess.run([BASH, "-n", os.path.join(BENCH, rel)], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, "%s: %s" % (rel, r.stderr))

    def test_every_python_helper_compiles(self):
        for rel in bench_files("py"):
            with open(os.path.join(BENCH, rel)) as f:
                compile(f.read(), rel, "exec")  # raises SyntaxError with the file and line

    def test_shellcheck_finds_no_errors_where_it_is_installed(self):
        shellcheck = shutil.which("shellcheck")
        if not shellcheck:
            self.skipTest("shellcheck is not installed")
        scripts = [os.path.join(BENCH, rel) for rel in bench_files("sh")]
        r = subprocess.run([shellcheck, "-x", "-S", "error", *scripts], capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stdout[-4000:])

    def test_the_readme_lists_every_script(self):
        with open(os.path.join(BENCH, "README.md")) as f:
            readme = f.read()
        for rel in bench_files("sh") + bench_files("py"):
            if os.path.basename(rel) in TRANSITIONAL and os.sep not in rel:
                continue
            self.assertTrue("`%s`" % rel in readme, "bench/README.md does not list bench/%s" % rel)

    def test_no_script_names_a_gpu(self):
        # --target h200, bench/results/h200, gemm__h200__base, *_h200.sh, h200_evidence: a GPU's name
        # where the detected target belongs.
        named = re.compile(r"--target[ =]+[a-z]\d{3}\b|results/[a-z]\d{3}\b|(?<![A-Za-z0-9])h\d00_|_h\d00(?![0-9])")
        for rel in bench_files("sh") + bench_files("py"):
            if os.path.basename(rel) in TRANSITIONAL and os.sep not in rel:
                continue
            with open(os.path.join(BENCH, rel)) as f:
                for n, line in enumerate(f, 1):
                    self.assertIsNone(named.search(line), "bench/%s:%d names a GPU: %s" % (rel, n, line.strip()))

    def test_every_gpu_script_detects_the_gpu(self):
        for rel in bench_files("sh"):
            area = rel.split(os.sep)[0]
            if area not in ("eval", "service", "triton", "agents", "adapt") or rel in CPU_ONLY:
                continue
            with open(os.path.join(BENCH, rel)) as f:
                text = f.read()
            self.assertIn("lib/env.sh", text, "bench/%s does not source bench/lib/env.sh" % rel)
            # bench_gpu (target, results folder, tarball), or bench_gpu_target where a script keeps its own
            # results folder (the adaptation scripts): either way the one detection rule.
            self.assertRegex(text, r"(?m)(^\s*bench_gpu \S|\$\(bench_gpu_target\))",
                             "bench/%s never calls bench_gpu or bench_gpu_target" % rel)



class LeaseOccupancy(unittest.TestCase):
    """service_gpu_check.py's GPU occupancy from the verdicts' lease holds (speed.sh P6's "GPU busy")."""

    @classmethod
    def setUpClass(cls):
        cls.m = bench_module("service/service_gpu_check.py")

    @staticmethod
    def response(*holds):
        return {"ptxbench": {"verdict": {"measurement": {"holds": list(holds)}}}}

    def test_overlapping_holds_count_once_and_gaps_not_at_all(self):
        self.assertAlmostEqual(self.m.union_seconds([(3, 4), (0, 1), (0.5, 2)]), 3.0)
        self.assertAlmostEqual(self.m.union_seconds([]), 0.0)

    def test_the_fractions_are_of_the_time_from_the_first_grant_to_the_last_release(self):
        # Two evaluations: exclusive 1-2 s and 3-4 s, a shared hold 1.5-2.5 s; the GPU idles 2.5-3 s.
        occ = self.m.lease_occupancy([
            self.response({"stage": "timing", "exclusive": True, "granted_unix_ms": 1000, "held_ms": 1000},
                          {"stage": "sanitize", "exclusive": False, "granted_unix_ms": 1500, "held_ms": 1000}),
            self.response({"stage": "timing", "exclusive": True, "granted_unix_ms": 3000, "held_ms": 1000})])
        self.assertEqual(occ["lease_window_seconds"], 3.0)
        self.assertAlmostEqual(occ["gpu_held_fraction"], 2.5 / 3, places=3)
        self.assertAlmostEqual(occ["gpu_exclusive_fraction"], 2 / 3, places=3)

    def test_holds_without_a_grant_time_give_no_fraction_rather_than_a_wrong_one(self):
        occ = self.m.lease_occupancy([self.response({"stage": "timing", "exclusive": True, "held_ms": 5}), {}])
        self.assertIsNone(occ["gpu_held_fraction"])
        self.assertIsNone(occ["gpu_exclusive_fraction"])


class BeforeAfterSpeedups(unittest.TestCase):
    """verdicts_unchanged.py (speed.sh P3-verdicts): status, target verdict and deciding stage the same for
    both builds (in every run, or in every round where both builds ran on the round's seed); a speedup
    effect, the builds' difference within each round, judged against those differences' own spread."""

    EXAMPLES = ["a.cu", "b.cu", "c.cu", "d.cu"]

    def write_runs(self, tmp, name, speedups_per_round, status=None, seeds=None):
        paths = []
        for r, speedups in enumerate(speedups_per_round):
            path = os.path.join(tmp, "%s_r%d.json" % (name, r + 1))
            verdicts = []
            for f, s in zip(self.EXAMPLES, speedups):
                st = (status or {}).get((f, r), "PASSED")
                verdicts.append({"file": f, "status": st, "deciding_stage": "" if st == "PASSED" else "correctness",
                                 "target_instructions": {"verdict": "executed"},
                                 "environment": {"seed": seeds[r]} if seeds else {},
                                 "timing": {"speedup": s, "speedup_ci": {"low": s * 0.9975, "high": s * 1.0025}}})
            with open(path, "w") as fh:
                json.dump(verdicts, fh)
            paths.append(path)
        return paths

    def judge(self, before, after, **kw):
        tmp = tempfile.mkdtemp()
        try:
            b = self.write_runs(tmp, "before", before, kw.get("before_status"), kw.get("seeds"))
            a = self.write_runs(tmp, "after", after, kw.get("after_status"), kw.get("after_seeds", kw.get("seeds")))
            return subprocess.run([PYTHON, os.path.join(BENCH, "eval", "verdicts_unchanged.py"), "--before", *b,
                                   "--after", *a], capture_output=True, text=True)
        finally:
            shutil.rmtree(tmp)

    # Four rounds of four examples, each run within about 0.1 % of its build's mean; the two builds'
    # deviations differ, so the differences within a round spread about 0.1 %.
    NOISE = {"before": [(1.000, 0.999, 1.001), (1.001, 1.000, 0.999), (0.999, 1.001, 1.000), (1.000, 1.000, 1.001)],
             "after": [(0.999, 1.000, 1.001), (1.000, 1.001, 0.999), (1.001, 0.999, 1.000), (1.000, 1.001, 1.000)]}
    SEEDS = [101, 202, 303, 404]
    BASES = [0.88, 0.40, 0.30, 0.97]

    def rounds(self, bases, side, shift=None):
        shift = shift or {}
        return [[bases[i] * noise[i % 3] * shift.get(i, 1.0) for i in range(len(bases))] for noise in self.NOISE[side]]

    def judge_steady(self, after_shift=None, rounds=4, **kw):
        """The four examples of BASES, each build within its NOISE, the after build shifted by after_shift."""
        return self.judge(self.rounds(self.BASES, "before")[:rounds],
                          self.rounds(self.BASES, "after", after_shift)[:rounds], **kw)

    def test_speedups_that_move_by_their_own_spread_pass(self):
        r = self.judge_steady({0: 1.001})
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("verdicts unchanged", r.stdout)

    def test_a_shift_well_beyond_the_spread_is_a_difference(self):
        r = self.judge_steady({1: 0.99})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertRegex(r.stdout, r"b\.cu .*speedup moved -(0\.9|1\.0)")

    def test_a_status_that_differs_in_one_run_is_a_difference(self):
        r = self.judge_steady(before_status={("c.cu", 2): "INCORRECT_NUMERICAL"})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("status differs between runs", r.stdout)

    def test_a_status_that_follows_the_inputs_in_both_builds_is_not_a_difference(self):
        # Both builds on each round's seed; c.cu fails round 3's inputs in both: the kernel's, not the change's.
        failing = {("c.cu", 2): "INCORRECT_NUMERICAL"}
        r = self.judge_steady(seeds=self.SEEDS, before_status=failing, after_status=failing)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("status depends on the inputs", r.stdout)

    def test_a_status_that_differs_between_the_builds_on_the_same_inputs_is_a_difference(self):
        r = self.judge_steady(seeds=self.SEEDS, before_status={("c.cu", 2): "INCORRECT_NUMERICAL"})
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("status differs between the builds on the same inputs in round(s) 3", r.stdout)

    def test_builds_on_different_seeds_must_agree_in_every_run(self):
        # The same failure in both builds, but on different inputs: nothing says it is the inputs'.
        failing = {("c.cu", 2): "INCORRECT_NUMERICAL"}
        r = self.judge_steady(seeds=self.SEEDS, after_seeds=[s + 1 for s in self.SEEDS],
                              before_status=failing, after_status=failing)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("status differs between runs", r.stdout)

    def test_runs_too_noisy_to_catch_half_a_percent_are_inconclusive_not_a_pass(self):
        noisy = [[b * (1 + 0.01 * ((r + i) % 3 - 1)) for i, b in enumerate(self.BASES)] for r in range(4)]
        r = self.judge(noisy, noisy[::-1])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("INCONCLUSIVE", r.stdout)

    def test_too_few_rounds_and_examples_to_judge_are_inconclusive(self):
        r = self.judge_steady(rounds=2)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("degrees of freedom are too few", r.stdout)

    def test_the_t_quantile_matches_tabulated_values(self):
        sys.path.insert(0, os.path.join(BENCH, "eval"))
        from verdicts_unchanged import t_quantile
        # Student's t tables: t(0.975; 10) = 2.228, t(0.995; 20) = 2.845, t(0.9995; 30) = 3.646.
        for p, dof, table in ((0.975, 10, 2.228), (0.995, 20, 2.845), (0.9995, 30, 3.646)):
            self.assertAlmostEqual(t_quantile(p, dof), table, delta=0.001 * table)

    def test_runs_without_verdicts_are_a_difference_not_a_pass(self):
        r = self.judge([[], []], [[], []])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("no verdicts", r.stdout)

    def test_one_round_is_refused(self):
        r = self.judge([[0.88, 0.40, 0.30, 0.97]], [[0.88, 0.40, 0.30, 0.97]])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("at least 2", r.stderr)

    def test_merged_verdicts_keep_every_readable_file_and_name_the_rest(self):
        tmp = tempfile.mkdtemp()
        try:
            a, b, out = (os.path.join(tmp, n) for n in ("a.json", "b.json", "out.json"))
            with open(a, "w") as f:
                f.write('[{"file": "x.cu"}, {"file": "y.cu"}]')
            with open(b, "w") as f:
                f.write('{"file": "z.cu"}')
            r = subprocess.run([PYTHON, os.path.join(BENCH, "lib", "merge_verdicts.py"), out, a, os.path.join(tmp, "gone.json"), b],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("3 verdicts from 2 files", r.stdout)
            self.assertIn("gone.json", r.stderr)
            with open(out) as f:
                self.assertEqual([v["file"] for v in json.load(f)], ["x.cu", "y.cu", "z.cu"])
        finally:
            shutil.rmtree(tmp)

    def test_pooled_input_set_runs_average_each_effect_over_the_runs(self):
        tmp = tempfile.mkdtemp()
        try:
            dirs = []
            for name, d in (("gpu-a", -0.4), ("gpu-b", -0.2)):
                os.makedirs(os.path.join(tmp, name))
                dirs.append(os.path.join(tmp, name))
                effect = {"speedup_pct": d, "noise_se_pct": 0.1, "candidate_pct": 0.0, "reference_pct": d}
                with open(os.path.join(tmp, name, "ab_summary.json"), "w") as f:
                    json.dump({"rounds": 3, "examples": {"k.cu": {"effects": {"build (3 sets: before -> after)": effect}}}}, f)
            out = os.path.join(tmp, "pooled.json")
            r = subprocess.run([PYTHON, os.path.join(BENCH, "eval", "pool_input_sets_ab.py"), *dirs, "--out", out],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                row = json.load(f)["examples"]["k.cu"]["build (3 sets: before -> after)"]
            self.assertAlmostEqual(row["speedup_pct_mean"], -0.3)
            self.assertEqual((row["speedup_pct_min"], row["speedup_pct_max"], row["runs"]), (-0.4, -0.2, 2))
            r = subprocess.run([PYTHON, os.path.join(BENCH, "eval", "pool_input_sets_ab.py"), os.path.join(tmp, "none")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("cannot read", r.stderr)
        finally:
            shutil.rmtree(tmp)

    def test_an_input_set_run_is_summarised_per_build_step_from_gzipped_verdicts(self):
        import gzip
        tmp = tempfile.mkdtemp()
        try:
            def verdict(speedup, ref_ms, busy, between):
                return {"file": "examples/gemm/k.cu", "status": "PASSED",
                        "timing": {"speedup": speedup, "input_sets": 3, "candidate": {"median_ms": ref_ms / speedup},
                                   "reference": {"median_ms": ref_ms}, "speedup_ci": {"half_width": 0.001}},
                        "stages": [{"stage": "timing", "details": {"reference_busy_ms": [busy, busy],
                                                                    "pair_phase_median_ms": {"audit_and_hygiene": between, "pair": 7.0}}}]}
            for r, (b, a) in enumerate([(0.890, 0.886), (0.888, 0.884)], start=1):
                with gzip.open(os.path.join(tmp, f"before3_r{r}.json.gz"), "wt") as f:
                    json.dump([verdict(b, 0.750, 0.740, 1.5)], f)
                with open(os.path.join(tmp, f"after3_r{r}.json"), "w") as f:
                    json.dump([verdict(a, 0.747, 0.738, 0.3)], f)
            script = os.path.join(BENCH, "eval", "summarize_input_sets_ab.py")
            r = subprocess.run([PYTHON, script, tmp, "2", "3", "before", "after"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(tmp, "ab_summary.json")) as f:
                k = json.load(f)["examples"]["k.cu"]
            effect = k["effects"]["build (3 sets: before -> after)"]
            self.assertAlmostEqual(effect["speedup_pct"], 100 * (0.885 - 0.889) / 0.889)
            self.assertAlmostEqual(effect["reference_busy_pct"], 100 * (0.738 - 0.740) / 0.740)
            self.assertAlmostEqual(k["before3"]["between_calls_ms"], 1.5)
            os.remove(os.path.join(tmp, "after3_r2.json"))  # a round without verdicts fails the check
            r = subprocess.run([PYTHON, script, tmp, "2", "3", "before", "after"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("after3 round 2: no verdicts", r.stdout)
        finally:
            shutil.rmtree(tmp)

    def test_the_shared_example_list_names_files_that_exist(self):
        r = subprocess.run([BASH, "-c", 'source bench/lib/examples.sh; for t in "${EXAMPLE_TASKS[@]}"; do examples_of "$t"; done'],
                           capture_output=True, text=True, cwd=ROOT)
        self.assertEqual(r.returncode, 0, r.stderr)
        files = r.stdout.split()
        self.assertEqual(len(files), 15)
        for f in files:
            self.assertTrue(os.path.exists(os.path.join(ROOT, f)), f)


if __name__ == "__main__":
    unittest.main()
