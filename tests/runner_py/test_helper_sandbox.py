"""The Triton runner's sandbox for real, without a GPU: a child python3 forks the compile helper,
loads libptxbench_runner_py.so (the C++ sandbox behind the C ABI the bootstrap uses), applies the
runner's policy, and then
  * starts (fake) ptxas through the subprocess stand-in: works, the helper is outside the sandbox;
  * starts a program itself: the sandbox ends it ("ptxbench-sandbox: attempted execve", exit 86);
  * forks through the real subprocess module: ended the same way.
Skipped (visibly) where the helper library was not built (no CUDA toolkit): PTXBENCH_RUNNER_PY_LIB
names it (tests/runner_py/CMakeLists.txt)."""

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_DIR = os.path.realpath(os.path.join(HERE, "..", "..", "src", "gpu", "runner_py"))
LIB = os.environ.get("PTXBENCH_RUNNER_PY_LIB", "")
VIOLATION_EXIT = 86  # src/sandbox/violation_reporter.h

CHILD = textwrap.dedent("""
    import json, os, sys
    sys.dont_write_bytecode = True
    runner_dir, lib, scratch, ptxas, action = sys.argv[1:6]
    sys.path.insert(0, runner_dir)
    import compile_helper, runner_protocol as rp
    client = compile_helper.HelperClient.start(scratch)   # one thread, no candidate yet
    client.configure([ptxas])
    import ptxbench_triton_runner as r
    helper = r.Helper(lib)
    policy = {"mode": "enforce", "tool": "none", "scratch_dir": scratch,
              "read_paths": ["/usr", "/lib", "/lib64", "/etc", "/proc/self"] + rp.python_read_paths() + [runner_dir],
              "required": ["no_new_privs", "seccomp", "rlimits"]}
    report = helper.apply_sandbox(policy)
    print(json.dumps({"report": report}), flush=True)
    proxy = compile_helper.make_subprocess_proxy(client)
    if action == "proxy":
        src = os.path.join(scratch, "k.ptx")
        with open(src, "w") as f:
            f.write("ptx")
        out = proxy.check_output([ptxas, "-v", src, "-o", src + ".o"])
        print(json.dumps({"proxy": out.decode(), "cubin": open(src + ".o").read()}), flush=True)
    elif action == "exec":
        os.execv("/bin/true", ["/bin/true"])
    elif action == "fork":
        import subprocess
        subprocess.run(["/bin/true"])
    print(json.dumps({"survived": action}), flush=True)
""")

FAKE_PTXAS = "#!/bin/sh\nwhile [ $# -gt 1 ]; do [ \"$1\" = -o ] && out=$2; src=$1; shift; done\ncp k.ptx \"$out\"; echo compiled\n"


@unittest.skipUnless(LIB and os.path.isfile(LIB), "libptxbench_runner_py.so not built (PTXBENCH_RUNNER_PY_LIB unset)")
class HelperSandboxTest(unittest.TestCase):
    def run_child(self, action):
        tmp = os.path.realpath(tempfile.mkdtemp())
        scratch = os.path.join(tmp, "scratch")
        os.makedirs(scratch)
        ptxas = os.path.join(tmp, "ptxas")
        with open(ptxas, "w") as f:
            f.write(FAKE_PTXAS)
        os.chmod(ptxas, stat.S_IRWXU)
        env = dict(os.environ, TMPDIR=scratch)
        return subprocess.run([sys.executable, "-B", "-c", CHILD, RUNNER_DIR, LIB, scratch, ptxas, action],
                              capture_output=True, text=True, timeout=120, env=env, cwd=scratch)

    def lines(self, out):
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    def test_ptxas_through_the_helper_after_the_sandbox(self):
        r = self.run_child("proxy")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = self.lines(r.stdout)
        report = lines[0]["report"]
        self.assertTrue(report["applied"])
        self.assertTrue(report["seccomp"]["active"], report)
        self.assertEqual(lines[1], {"proxy": "compiled\n", "cubin": "ptx"})
        self.assertEqual(lines[2], {"survived": "proxy"})

    def test_exec_by_the_runner_itself_is_a_violation(self):
        r = self.run_child("exec")
        self.assertEqual(r.returncode, VIOLATION_EXIT, r.stdout + r.stderr)
        self.assertIn("ptxbench-sandbox: attempted execve", r.stderr)
        self.assertNotIn("survived", r.stdout)

    def test_fork_through_the_real_subprocess_is_a_violation(self):
        # Python blocks every signal around its vfork, so the filter's SIGSYS cannot reach the
        # reporting handler and the kernel ends the process with it: the harness reports that as
        # "sandbox: blocked system call (the report was suppressed)" (docs/sandbox.md, "Reporting").
        r = self.run_child("fork")
        self.assertIn(r.returncode, (VIOLATION_EXIT, -signal.SIGSYS), r.stdout + r.stderr)
        if r.returncode == VIOLATION_EXIT:
            self.assertIn("ptxbench-sandbox: attempted", r.stderr)
        self.assertNotIn("survived", r.stdout)


if __name__ == "__main__":
    unittest.main()
