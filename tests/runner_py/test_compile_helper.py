"""The compile helper (src/gpu/runner_py/compile_helper.py): what it lets Triton start, and the
subprocess stand-in Triton gets, end to end with a fake ptxas (a shell script): the helper is a
real forked process and the proxy really sends commands to it. No torch, Triton or GPU."""

import os
import stat
import subprocess
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "gpu", "runner_py"))
import compile_helper as ch  # noqa: E402

FAKE_PTXAS = """#!/bin/sh
# A stand-in for ptxas: --version, or "-o OUT IN": copies IN to OUT and logs to stderr like ptxas -v.
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 12.8, V12.8.93"; exit 0; fi
out=""; src=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2 ;;
    -*) shift ;;
    *) src="$1"; shift ;;
  esac
done
[ -f "$src" ] || { echo "ptxas fatal   : Input file '$src' could not be opened" >&2; exit 255; }
cp "$src" "$out" && echo "ptxas info    : Compiling entry function 'gemm_kernel' for 'sm_90a'" >&2
"""


class ValidateTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.scratch = os.path.realpath(self.dir)
        self.ptxas = os.path.join(self.scratch, "ptxas")
        open(self.ptxas, "w").close()
        self.programs = {self.ptxas}

    def check(self, argv):
        return ch.validate_command(argv, self.programs, self.scratch)

    def test_tritons_command_line_is_accepted(self):
        src, out = os.path.join(self.scratch, "tmpab.ptx"), os.path.join(self.scratch, "tmpab.ptx.o")
        self.assertIsNone(self.check([self.ptxas, "-lineinfo", "-v", "--opt-level", "0", "--regAllocOptLevel=2",
                                      "--fmad=false", "--gpu-name=sm_90a", src, "-o", out]))
        self.assertIsNone(self.check([self.ptxas, "--version"]))
        self.assertIsNone(self.check([self.ptxas, "relative.ptx"]))

    def test_refusals(self):
        cases = [
            ([], "non-empty list"),
            ("ptxas -v", "non-empty list"),
            (["/bin/sh", "-c", "id"], "only ptxas may run"),
            ([self.ptxas, "/etc/passwd"], "outside the runner's scratch folder"),
            ([self.ptxas, os.path.join(self.scratch, "..", "x.ptx")], "outside"),
            ([self.ptxas, "--output-file=/etc/x"], "options may not carry paths"),
            ([self.ptxas, "-o", "../x"], "plain word"),
            ([self.ptxas, "a\0b"], "NUL"),
            ([self.ptxas, "$(id)"], "plain word"),
        ]
        for argv, why in cases:
            problem = self.check(argv)
            self.assertIsNotNone(problem, argv)
            self.assertIn(why, problem, argv)

    def test_a_link_to_another_program_is_not_ptxas(self):
        link = os.path.join(self.scratch, "link")
        os.symlink("/bin/sh", link)
        self.assertIn("only ptxas may run", self.check([link]))


class HelperEndToEndTest(unittest.TestCase):
    def setUp(self):
        self.dir = os.path.realpath(tempfile.mkdtemp())
        self.ptxas = os.path.join(self.dir, "bin", "ptxas")
        os.makedirs(os.path.dirname(self.ptxas))
        with open(self.ptxas, "w") as f:
            f.write(FAKE_PTXAS)
        os.chmod(self.ptxas, stat.S_IRWXU)
        self.scratch = os.path.join(self.dir, "scratch")
        os.makedirs(self.scratch)
        self.client = ch.HelperClient.start(self.scratch)
        self.client.configure([self.ptxas])
        self.proxy = ch.make_subprocess_proxy(self.client)

    def tearDown(self):
        self.client.seal("test over")

    def test_tritons_make_cubin_call(self):
        # What Triton's make_cubin does: a temporary .ptx and a log file opened read-only in Python.
        src = os.path.join(self.scratch, "k.ptx")
        with open(src, "w") as f:
            f.write(".version 8.4\n")
        out = src + ".o"
        with tempfile.NamedTemporaryFile(mode="r", suffix=".log", dir=self.scratch) as flog:
            done = self.proxy.run([self.ptxas, "-lineinfo", "-v", "--gpu-name=sm_90a", src, "-o", out], check=True,
                                  close_fds=False, stderr=flog)
            self.assertEqual(done.returncode, 0)
            with open(flog.name) as log:
                self.assertIn("Compiling entry function 'gemm_kernel'", log.read())
        with open(out) as f:
            self.assertEqual(f.read(), ".version 8.4\n")

    def test_failure_raises_like_subprocess(self):
        with self.assertRaises(subprocess.CalledProcessError) as e:
            self.proxy.run([self.ptxas, os.path.join(self.scratch, "missing.ptx"), "-o",
                            os.path.join(self.scratch, "x.o")], check=True, capture_output=True)
        self.assertEqual(e.exception.returncode, 255)
        self.assertIn(b"could not be opened", e.exception.stderr)
        self.assertEqual(self.proxy.call([self.ptxas, "missing.ptx"], stderr=self.proxy.DEVNULL), 255)

    def test_version_query(self):
        out = self.proxy.check_output([self.ptxas, "--version"], stderr=self.proxy.STDOUT)
        self.assertIn(b"release 12.8", out)
        self.assertIn("release 12.8", self.proxy.run([self.ptxas, "--version"], capture_output=True, text=True).stdout)
        self.assertEqual(self.proxy.check_call([self.ptxas, "--version"], stdout=self.proxy.DEVNULL), 0)

    def test_other_programs_shells_and_popen_are_refused(self):
        with self.assertRaises(ch.CompileHelperError) as e:
            self.proxy.run(["/bin/sh", "-c", "touch /tmp/pwned"])
        self.assertIn("only ptxas may run", str(e.exception))
        with self.assertRaises(ch.CompileHelperError):
            self.proxy.run(f"{self.ptxas} --version", shell=True)
        with self.assertRaises(ch.CompileHelperError):
            self.proxy.Popen([self.ptxas, "--version"])
        with self.assertRaises(ch.CompileHelperError):
            self.proxy.run([self.ptxas, "--version"], input=b"x")
        # Still serving after refusals.
        self.assertIn(b"release", self.proxy.check_output([self.ptxas, "--version"]))

    def test_sealed_after_the_warm_up(self):
        self.client.seal("the runner starts no programs after the warm-up call")
        with self.assertRaises(ch.CompileHelperError) as e:
            self.proxy.run([self.ptxas, "--version"])
        self.assertIn("after the warm-up", str(e.exception))
        with self.assertRaises(ChildProcessError):
            os.waitpid(self.client.pid, os.WNOHANG)  # reaped: the helper is gone

    def test_configure_only_once(self):
        # A second configuration (say, from candidate code) is refused by the helper itself.
        with self.assertRaises(ch.CompileHelperError):
            self.client.configure(["/bin/sh"])
        self.assertIn(b"release", self.proxy.check_output([self.ptxas, "--version"]))


class InstallTest(unittest.TestCase):
    def test_patches_loaded_modules_and_later_imports(self):
        holder = types.ModuleType("triton.backends.nvidia.compiler")
        holder.subprocess = subprocess
        other = types.ModuleType("unrelated")
        other.subprocess = "not the module"
        modules = {"triton.backends.nvidia.compiler": holder, "unrelated": other, "subprocess": subprocess,
                   "empty": None}
        proxy = types.ModuleType("subprocess")
        patched = ch.install_proxy(proxy, modules)
        self.assertEqual(patched, ["triton.backends.nvidia.compiler"])
        self.assertIs(holder.subprocess, proxy)
        self.assertEqual(other.subprocess, "not the module")
        self.assertIs(modules["subprocess"], proxy)


if __name__ == "__main__":
    unittest.main()


class LauncherBuildTest(unittest.TestCase):
    """The C compiler runs only Triton's launcher build (compile_helper.validate_c_compile)."""

    def setUp(self):
        self.scratch = os.path.realpath(tempfile.mkdtemp())
        self.cc = "/usr/bin/gcc"
        self.triton_dir = "/opt/venv/lib/python3.12/site-packages/triton"
        self.read = [self.triton_dir, "/usr/include/python3.12", "/usr/lib/x86_64-linux-gnu"]

    def check(self, argv):
        return ch.validate_command(argv, {"/ptxas"}, self.scratch, {os.path.realpath(self.cc)}, self.read)

    def tritons(self):
        tmp = os.path.join(self.scratch, "tmpabc")
        return [self.cc, os.path.join(tmp, "main.c"), "-O3", "-shared", "-fPIC", "-Wno-psabi", "-o",
                os.path.join(tmp, "cuda_launcher.cpython-312-x86_64-linux-gnu.so"), "-lcuda",
                f"-L{self.triton_dir}/backends/nvidia/lib", "-L/usr/lib/x86_64-linux-gnu",
                f"-I{self.triton_dir}/backends/nvidia/include", f"-I{tmp}", "-I/usr/include/python3.12"]

    def test_tritons_launcher_build_is_accepted(self):
        self.assertIsNone(self.check(self.tritons()))
        # Triton 3.6 names the driver library by file (seen on an H100 host); a path is still refused.
        by_file = [a if a != "-lcuda" else "-l:libcuda.so.1" for a in self.tritons()]
        self.assertIsNone(self.check(by_file))
        self.assertIsNotNone(self.check(self.tritons() + ["-l:/tmp/evil.so"]))

    def test_anything_that_could_run_code_outside_the_sandbox_is_refused(self):
        for extra in ("-fplugin=evil.so", "-fplugin=./evil.so", "-B/tmp", "-wrapper", "-specs=x", "@args",
                      "-Wl,-plugin,evil.so", "-fdump-tree-all", "-I/etc", "-L/home", "-xc"):
            argv = self.tritons() + [extra]
            self.assertIsNotNone(self.check(argv), extra)
        two_sources = self.tritons() + [os.path.join(self.scratch, "b.c")]
        self.assertIsNotNone(self.check(two_sources))
        out_elsewhere = self.tritons()
        out_elsewhere[7] = "/tmp/evil.so"
        self.assertIsNotNone(self.check(out_elsewhere))
        self.assertIsNotNone(self.check(["/usr/bin/ld", "x"]), "another program")
