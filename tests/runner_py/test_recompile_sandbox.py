"""The trusted recompile (src/gpu/runner_py/triton_recompile.py) confined for real, without a GPU:
a child python3 runs the script against stand-ins for torch and Triton written to a temporary
folder — a Triton whose "compile" hands its PTX to a fake ptxas through `subprocess` and, like LLVM,
installs a SIGSYS handler the first time it compiles — with the real libptxbench_runner_py.so. Shown:
  * the kernels recompile under the sandbox (the report says applied; ptxas ran through the compile
    helper, the process itself could not have started it), so the LLVM set-up came before it;
  * a compile that starts a program itself is ended by the sandbox ("ptxbench-sandbox: attempted ...");
  * the CPU-time limit ends a compile that spins (SIGXCPU), the memory limit fails one that hoards;
  * a file the sandbox keeps from the compiler is infrastructure (exit 3), not the candidate's;
  * no policy and no --no-sandbox, or a policy that cannot be applied: exit 3 (infrastructure),
    never an unconfined run; --no-sandbox runs unconfined and says so.
Skipped (visibly) where the helper library was not built: PTXBENCH_RUNNER_PY_LIB names it."""

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_DIR = os.path.realpath(os.path.join(HERE, "..", "..", "src", "gpu", "runner_py"))
SCRIPT = os.path.join(RUNNER_DIR, "triton_recompile.py")
LIB = os.environ.get("PTXBENCH_RUNNER_PY_LIB", "")
VIOLATION_EXIT = 86  # src/sandbox/violation_reporter.h

# The stand-ins, file by file (TEST-ONLY: just enough of torch and Triton 3.6 for the recompile).
FAKES = {
    "torch/__init__.py": """
        __version__ = "2.11.0+fake"
        class cuda:
            @staticmethod
            def init():
                pass
    """,
    "triton/__init__.py": """
        __version__ = "3.6.0+fake"
        from . import runtime, language, compiler, backends  # noqa: F401
        from .runtime.jit import jit, JITFunction  # noqa: F401
        from .compiler.compiler import compile  # noqa: F401
        def cdiv(a, b):
            return (a + b - 1) // b
        def next_power_of_2(n):
            return 1 << (n - 1).bit_length()
        def constexpr_function(fn):
            return fn
    """,
    "triton/runtime/__init__.py": """
        import types
        class _Driver:
            def get_current_target(self):
                return ("cuda", 90, 32)
            @property
            def utils(self):
                return object()
        driver = types.SimpleNamespace(active=_Driver())
    """,
    "triton/runtime/jit.py": """
        import inspect
        import json
        class JITFunction:
            def __init__(self, fn, **options):
                self.fn, self.__name__, self.options = fn, fn.__name__, options
                self.src = inspect.getsource(fn)
            def preload(self, specialization_data):
                from triton.compiler.compiler import ASTSource, compile
                data = json.loads(specialization_data)
                return compile(ASTSource(self, data.get("signature", {}), {}, {}), options=data.get("options"))
        def jit(fn=None, **options):
            return JITFunction(fn) if fn is not None else (lambda f: JITFunction(f, **options))
    """,
    "triton/compiler/__init__.py": """
        from .compiler import ASTSource, compile, make_backend  # noqa: F401
    """,
    "triton/compiler/compiler.py": """
        import json
        import os
        import signal
        import subprocess
        import tempfile
        import types
        from triton.backends.nvidia import PTXAS
        _llvm = []
        class ASTSource:
            def __init__(self, fn, signature, constexprs=None, attrs=None):
                self.fn, self.signature = fn, signature
        class _Backend:
            def __init__(self, target):
                self.target = target
            def hash(self):
                return subprocess.check_output([PTXAS, "--version"]).decode()
        def make_backend(target):
            return _Backend(target)
        def compile(src, target=None, options=None):
            if not _llvm:  # LLVM's one-time set-up: its signal handlers, SIGSYS among them
                signal.signal(signal.SIGSYS, lambda *a: None)
                _llvm.append(True)
            text = src.fn.src
            if "ESCAPE" in text:  # the compiler reaching a program of its own
                os.execv("/bin/true", ["/bin/true"])
            if "SPIN" in text:
                while True:
                    pass
            if "DENIED" in text:  # a file the sandbox keeps from Triton
                raise PermissionError(13, "Permission denied", "/root/.triton/cache")
            if "HOARD" in text:
                hoard = bytearray(1 << 30)
                hoard[-1] = 1
            ptx = f"{src.fn.__name__}\\n{text}\\n{json.dumps(src.signature, sort_keys=True)}"
            with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
                f.write(ptx)
            subprocess.run([PTXAS, "-v", "--gpu-name=sm_90a", f.name, "-o", f.name + ".o"], check=True,
                           capture_output=True)
            with open(f.name + ".o", "rb") as f:
                cubin = f.read()
            return types.SimpleNamespace(asm={"cubin": cubin}, metadata=types.SimpleNamespace(name=src.fn.__name__))
    """,
    "triton/language/__init__.py": """
        from . import extra  # noqa: F401
        class constexpr:
            def __init__(self, value):
                self.value = value
        float16 = "fp16"
        def program_id(axis):
            raise RuntimeError("only inside a kernel")
        load = store = program_id
    """,
    "triton/language/extra/__init__.py": "from . import libdevice, cuda  # noqa: F401\n",
    "triton/language/extra/libdevice.py": "def tanh(x):\n    raise RuntimeError('only inside a kernel')\n",
    "triton/language/extra/cuda/__init__.py": "from . import libdevice  # noqa: F401\n",
    "triton/language/extra/cuda/libdevice.py": "def tanh(x):\n    raise RuntimeError('only inside a kernel')\n",
    "triton/backends/__init__.py": "from . import nvidia  # noqa: F401\n",
    "triton/backends/nvidia/__init__.py": """
        import os
        PTXAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "ptxas")
    """,
    "triton/backends/nvidia/bin/ptxas": """
        #!/bin/sh
        if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0"; exit 0; fi
        while [ $# -gt 0 ]; do
          case "$1" in -o) out=$2; shift ;; -*) ;; *) src=$1 ;; esac
          shift
        done
        { printf 'CUBIN:'; cat "$src"; } > "$out"
    """,
}

KERNEL = '''"""A candidate."""
import math
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
BLOCK: tl.constexpr = 128
HALF = tl.constexpr(math.floor(BLOCK / 2))


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr = HALF):
    tl.store(y_ptr, libdevice.tanh(tl.load(x_ptr)))


def run(x, y):
    copy_kernel[(1,)](x, y, x.numel())
'''

# The runner's loader: the stand-ins' folder first on sys.path, then the script as __main__.
LAUNCH = "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = sys.argv[1]; " \
         "runpy.run_path(sys.argv.pop(1), run_name='__main__')"


def marked(word):
    """KERNEL with a comment in the kernel's body that tells the stand-in compiler what to do."""
    return KERNEL.replace("    tl.store(y_ptr", f"    # {word}\n    tl.store(y_ptr")


def write_fakes(root):
    for rel, text in FAKES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text).lstrip("\n"))
        if rel.endswith("/ptxas"):
            os.chmod(path, stat.S_IRWXU)


@unittest.skipUnless(LIB and os.path.isfile(LIB), "libptxbench_runner_py.so not built (PTXBENCH_RUNNER_PY_LIB unset)")
class RecompileSandboxTest(unittest.TestCase):
    def setUp(self):
        self.tmp = os.path.realpath(tempfile.mkdtemp())
        self.fakes = os.path.join(self.tmp, "site")
        write_fakes(self.fakes)
        self.out = os.path.join(self.tmp, "out")
        os.makedirs(self.out)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def recompile(self, source=KERNEL, sandbox=True, limits=None, policy=None, extra=()):
        src = os.path.join(self.tmp, "kernel.py")
        with open(src, "w") as f:
            f.write(source)
        kernels = os.path.join(self.tmp, "kernels.json")
        spec = {"name": "ptxbench_candidate.copy_kernel", "signature": {"x_ptr": "*fp32", "y_ptr": "*fp32"},
                "options": {"num_warps": 4, "ptx_options": "-O0"}}
        with open(kernels, "w") as f:
            json.dump({"kernels": [{"id": "cap1", "jit": "copy_kernel", "specialization_data": json.dumps(spec)}]}, f)
        args = ["--source", src, "--kernels", kernels, "--out", self.out]
        if sandbox:
            if policy is None:
                policy = {"mode": "enforce", "tool": "none", "scratch_dir": self.out,
                          "read_paths": ["/usr", "/lib", "/lib64", "/etc", "/proc/self", src],
                          "required": ["no_new_privs", "seccomp", "rlimits"],
                          "limits": {"cpu_seconds": 60, "data_bytes": 2 << 30, **(limits or {})}}
            policy_file = os.path.join(self.tmp, "sandbox.json")
            with open(policy_file, "w") as f:
                json.dump({"sandbox": policy}, f)
            args += ["--helper", LIB, "--sandbox", policy_file]
        else:
            args += ["--no-sandbox"]
        env = dict(os.environ, TMPDIR=self.out)
        run = subprocess.run([sys.executable, "-B", "-c", LAUNCH, self.fakes, SCRIPT, *args, *extra],
                             capture_output=True, text=True, timeout=180, env=env, cwd=self.tmp)
        result = None
        if os.path.isfile(os.path.join(self.out, "result.json")):
            with open(os.path.join(self.out, "result.json")) as f:
                result = json.load(f)
        return run, result

    def test_recompiles_under_the_sandbox_with_ptxas_through_the_helper(self):
        run, result = self.recompile()
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertTrue(result["sandbox"]["applied"], result["sandbox"])
        self.assertIn("CPU time 60 s", json.dumps(result["sandbox"]))
        [kernel] = result["kernels"]
        self.assertEqual(kernel["name"], "copy_kernel")
        with open(os.path.join(self.out, kernel["cubin"]), "rb") as f:
            cubin = f.read()
        self.assertTrue(cubin.startswith(b"CUBIN:copy_kernel\n"), cubin[:40])
        self.assertEqual(kernel["sha256"], hashlib.sha256(cubin).hexdigest())
        self.assertIn(b"libdevice.tanh", cubin, "the libdevice import survived the reduction")

    def test_a_compile_that_starts_a_program_is_ended_by_the_sandbox(self):
        run, _ = self.recompile(marked("ESCAPE"))
        self.assertEqual(run.returncode, VIOLATION_EXIT, run.stderr)
        self.assertIn("ptxbench-sandbox: attempted execve", run.stderr)

    def test_the_cpu_time_limit_ends_a_compile_that_spins(self):
        run, _ = self.recompile(marked("SPIN"), limits={"cpu_seconds": 2})
        self.assertEqual(run.returncode, -signal.SIGXCPU, run.stderr)

    def test_the_memory_limit_fails_a_compile_that_hoards(self):
        run, result = self.recompile(marked("HOARD"),
                                     limits={"data_bytes": 512 << 20})
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn("MemoryError", result["error"])

    def test_a_file_the_sandbox_refuses_is_infrastructure_not_the_candidates(self):
        run, result = self.recompile(marked("DENIED"))
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("the recompile failed: PermissionError", result["error"])

    def test_no_policy_is_refused_not_run_unconfined(self):
        run, result = self.recompile(sandbox=False, extra=())
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(result["sandbox"]["applied"], False)
        self.assertIn("--no-sandbox", result["sandbox"]["reason"])
        neither = subprocess.run([sys.executable, "-B", SCRIPT, "--source", "k.py", "--kernels", "k.json", "--out",
                                  self.out], capture_output=True, text=True, timeout=60)
        self.assertEqual(neither.returncode, 3)
        self.assertIn("usage", neither.stderr)

    def test_a_policy_that_cannot_be_applied_is_an_infrastructure_failure(self):
        policy = {"mode": "enforce", "tool": "none", "scratch_dir": os.path.join(self.tmp, "missing"),
                  "required": ["no_new_privs", "seccomp", "rlimits"]}
        run, result = self.recompile(policy=policy)
        self.assertEqual(run.returncode, 3, run.stderr)
        self.assertIn("the recompile could not be set up", result["error"])
        self.assertNotIn("kernels", result)


if __name__ == "__main__":
    unittest.main()
