"""The Triton runner's message flow (src/gpu/runner_py/ptxbench_triton_runner.py) against fake
torch, Triton and helper library (fakes.py), driven from the harness's side of a real
SOCK_SEQPACKET pair: setup → ready (sandbox applied before the candidate is imported, Triton
initialised before the sandbox), the warm-up in the first prepare (then outputs poisoned again and
the compile helper sealed), measured calls, noop calls, private copies, and every failure path
with the status fields the harness classifies."""

import os
import socket
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "gpu", "runner_py"))
import compile_helper  # noqa: E402
import fakes  # noqa: E402
import ptxbench_triton_runner as runner_module  # noqa: E402
import runner_protocol as rp  # noqa: E402

COPY_KERNEL = """import torch
calls = [0]


def run(A, C):
    calls[0] += 1
    C.copy_(A)
"""


class Exited(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


class RunnerFlowTest(unittest.TestCase):
    def setUp(self):
        self.tmp = os.path.realpath(tempfile.mkdtemp())
        self.scratch = os.path.join(self.tmp, "scratch")
        os.makedirs(self.scratch)
        self.memory = fakes.Memory()
        self.torch = fakes.make_torch(self.memory)
        self.triton, modules = fakes.make_triton(self.tmp)
        fakes.Helper.memory, fakes.Helper.torch = self.memory, self.torch
        fakes.Helper.handles, fakes.Helper.instances = {}, []
        fakes.Helper.sandbox_error = fakes.Helper.sync_error = fakes.Helper.attach_error = None
        fakes.Helper.page = fakes.Page()
        self.saved_modules = {k: sys.modules.get(k) for k in list(modules) + ["torch", "ptxbench_candidate"]}
        sys.modules.update(modules)
        sys.modules["torch"] = self.torch
        self.saved_env = dict(os.environ)
        self.client = compile_helper.HelperClient.start(self.scratch)
        self.harness_end, runner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.harness = rp.Channel(self.harness_end)
        self.installed = []
        self.runner = runner_module.Runner(rp.Channel(runner_end), self.client, self.torch, self.triton,
                                           helper_type=fakes.Helper, exit=self.exit,
                                           install_proxy=lambda proxy: self.installed.append(proxy) or ["triton.x"])
        self.exit_code = None
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def tearDown(self):
        self.harness_end.close()
        self.thread.join(10)
        self.client.seal("test over")
        os.environ.clear()
        os.environ.update(self.saved_env)
        for k, v in self.saved_modules.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    def exit(self, code):
        raise Exited(code)

    def serve(self):
        try:
            self.runner.serve()
        except Exited as e:
            self.exit_code = e.code

    def candidate(self, text=COPY_KERNEL):
        path = os.path.join(self.tmp, "kernel.py")
        with open(path, "w") as f:
            f.write(text)
        return path

    def setup_runner(self, text=COPY_KERNEL, mode="plain", **extra):
        m = {"type": "setup", "so": self.candidate(text), "symbol": "run", "mode": mode, "timing": True, "device": 0,
             "sandbox": {"scratch_dir": self.scratch, "read_paths": ["/usr"]}, "scratch": self.scratch,
             "helper": "/fake/libptxbench_runner_py.so", "language": "triton", "kernel_cache": "triton-cache"}
        m.update(extra)
        self.harness.send(m)
        return self.harness.receive()

    def buffers(self, a_bytes=b"\x01\x02" * 8):
        """Input A and output C ([2, 4] bfloat16) owned by the "harness", C poisoned."""
        descs = []
        for name, content, output in (("A", a_bytes, False), ("C", b"\xff" * 16, True)):
            base = self.memory.allocate(4096)
            handle = f"{len(fakes.Helper.handles):02x}" * 64
            fakes.Helper.handles[handle] = base
            self.memory.write(base + 256, content)
            descs.append({"name": name, "handle": handle, "offset": 256, "bytes": 16, "dtype": "bfloat16",
                          "shape": [2, 4], "output": output})
        return descs

    def call(self, tensors, noop=False, nonce=1):
        self.harness.send({"type": "prepare", "nonce": nonce, "tensors": tensors, "noop": noop})
        prepared = self.harness.receive()
        if prepared is None or prepared.get("type") != "prepared":
            return prepared, None
        self.harness.send({"type": "go", "nonce": nonce})
        return prepared, self.harness.receive()

    def output(self, tensors):
        base = fakes.Helper.handles[tensors[1]["handle"]]
        return self.memory.read(base + 256, 16)

    def test_go_and_done_travel_on_the_shared_page_when_the_harness_passed_one(self):
        self.runner.sync_fd = 7  # before setup: main() hands --sync-fd to the Runner
        ready = self.setup_runner()
        self.assertEqual(ready["type"], "ready", ready)
        self.assertTrue(ready["sync"])
        self.assertFalse(ready["audit"])  # no launch audit in the Python runner, said plainly
        self.assertIn("kernel provenance", ready["audit_error"])
        helper = fakes.Helper.instances[0]
        self.assertIn(("sync_attach", 7), helper.calls)
        page = fakes.Helper.page
        tensors = self.buffers()
        out_base = fakes.Helper.handles[tensors[1]["handle"]] + 256
        for nonce, poison in ((1, b"\xff" * 16), (2, b"\xee" * 16)):
            self.memory.write(out_base, poison)  # the harness poisons the outputs before each call
            self.harness.send({"type": "prepare", "nonce": nonce, "tensors": tensors, "noop": False, "sync": True})
            self.assertEqual(self.harness.receive(), {"type": "prepared", "nonce": nonce})
            # Nothing measured runs before go is on the page (the warm-up ran in the first prepare
            # and the runner poisoned the outputs again).
            self.assertNotEqual(page.done, nonce)
            self.assertEqual(self.output(tensors), poison)
            page.write("go", nonce)
            self.assertTrue(page.wait("done", nonce), "the runner never wrote done on the page")
            done = self.harness.receive()
            self.assertEqual(done["type"], "done")
            self.assertEqual(done["nonce"], nonce)
            self.assertTrue(done["ok"], done)
            self.assertEqual(self.output(tensors), b"\x01\x02" * 8)
        waits = [c for c in helper.calls if c[0] == "sync_wait_go"]
        self.assertEqual([w[1] for w in waits], [1, 2])
        dones = [c for c in helper.calls if c[0] == "sync_done"]
        # done was written after the call's kernel launched: warm-up copy + one copy per call.
        self.assertEqual([(d[1], d[2]) for d in dones], [(1, 2), (2, 3)])

    def test_a_page_that_cannot_be_mapped_leaves_go_and_done_on_the_socket(self):
        self.runner.sync_fd = 7
        fakes.Helper.attach_error = "descriptor 7 is not a sync page (wrong magic)"
        ready = self.setup_runner()
        self.assertEqual(ready["type"], "ready", ready)
        self.assertFalse(ready["sync"])
        # The harness then never asks for the page; even if a prepare did, the socket is used.
        tensors = self.buffers()
        self.harness.send({"type": "prepare", "nonce": 1, "tensors": tensors, "noop": False, "sync": True})
        self.assertEqual(self.harness.receive()["type"], "prepared")
        self.harness.send({"type": "go", "nonce": 1})
        done = self.harness.receive()
        self.assertTrue(done["ok"], done)
        self.assertFalse([c for c in fakes.Helper.instances[0].calls if c[0].startswith("sync_")])

    def test_ready_after_triton_is_initialised_and_the_sandbox_is_on(self):
        ready = self.setup_runner()
        self.assertEqual(ready["type"], "ready", ready)
        self.assertTrue(ready["cupti"])
        self.assertEqual(ready["sandbox"], {"applied": True, "mode": "enforce", "fake": True})
        self.assertEqual(ready["runtime"]["triton"], "3.6.0+fake")
        helper = fakes.Helper.instances[0]
        # Triton's driver module and ptxas version before the sandbox; the policy keeps the
        # harness's fields and only gains read paths.
        self.assertEqual(self.triton.calls, ["target", "utils", "hash"])
        self.assertEqual(helper.policy["scratch_dir"], self.scratch)
        self.assertEqual(helper.policy["read_paths"][0], "/usr")
        self.assertGreater(len(helper.policy["read_paths"]), 1)
        self.assertEqual(os.environ["TRITON_CACHE_DIR"], os.path.join(self.scratch, "triton-cache"))
        self.assertNotIn("TRITON_INTERPRET", os.environ)
        self.assertEqual(len(self.installed), 1)
        self.assertTrue(getattr(self.installed[0], "__ptxbench_proxy__", False))

    def test_unsafe_triton_settings_are_removed(self):
        os.environ["TRITON_INTERPRET"] = "1"
        os.environ["TRITON_REMOTE_CACHE_BACKEND"] = "x:y"
        self.assertEqual(self.setup_runner()["type"], "ready")
        self.assertNotIn("TRITON_INTERPRET", os.environ)
        self.assertNotIn("TRITON_REMOTE_CACHE_BACKEND", os.environ)

    def test_warm_up_then_measured_calls(self):
        self.assertEqual(self.setup_runner()["type"], "ready")
        module = sys.modules["ptxbench_candidate"]
        tensors = self.buffers()
        prepared, done = self.call(tensors)
        self.assertEqual(prepared, {"type": "prepared", "nonce": 1})
        self.assertEqual(module.calls[0], 2)  # the warm-up and the measured call
        self.assertEqual(done["ok"], True, done)
        self.assertEqual(done["method"], "cupti")
        self.assertEqual(done["kernels"], ["copy_kernel"])  # the measured call's launches only
        self.assertEqual(self.output(tensors), b"\x01\x02" * 8)
        helper = fakes.Helper.instances[0]
        # After the warm-up the output was poisoned again (NaN) before the measured call.
        c_ptr = fakes.Helper.handles[tensors[1]["handle"]] + 256
        self.assertIn(("memset", c_ptr, 0xFF, 16), helper.calls)
        self.assertEqual(helper.open, set())  # every IPC handle closed after the call
        # The compile helper is sealed: no program can be started any more.
        with self.assertRaises(compile_helper.CompileHelperError):
            self.client.run(["/bin/true"])
        # A second call: no warm-up.
        tensors = self.buffers(b"\x07" * 16)
        _, done = self.call(tensors, nonce=2)
        self.assertEqual((done["ok"], done["nonce"]), (True, 2))
        self.assertEqual(module.calls[0], 3)
        self.assertEqual(self.output(tensors), b"\x07" * 16)

    def test_noop_calls_do_not_call_the_candidate(self):
        self.setup_runner()
        module = sys.modules["ptxbench_candidate"]
        _, done = self.call(self.buffers(), noop=True)
        self.assertTrue(done["ok"])
        self.assertEqual(module.calls[0], 0)
        self.assertEqual(done["kernels"], [])
        # The next real call is the first one: it warms up.
        self.call(self.buffers(), nonce=2)
        self.assertEqual(module.calls[0], 2)

    def test_private_copies_are_copied_back(self):
        self.setup_runner(mode="private")
        tensors = self.buffers()
        _, done = self.call(tensors)
        self.assertTrue(done["ok"], done)
        self.assertEqual(self.output(tensors), b"\x01\x02" * 8)
        helper = fakes.Helper.instances[0]
        self.assertEqual(len([c for c in helper.calls if c[0] == "free"]), 2)

    def test_profile_window_brackets_only_the_measured_call(self):
        self.setup_runner(profile_window=True)
        self.call(self.buffers())
        helper = fakes.Helper.instances[0]
        window = [c for c in helper.calls if c[0].startswith("profiler")]
        # The warm-up launched one copy before the window opened; the measured call one inside it.
        self.assertEqual(window, [("profiler_start", 1), ("profiler_stop", 2)])

    def test_exception_in_the_warm_up(self):
        self.setup_runner("import torch\n\n\ndef run(A, C):\n    raise ValueError('A must be contiguous')\n")
        prepared, _ = self.call(self.buffers())
        self.assertEqual(prepared["type"], "error")
        self.assertEqual(prepared["error_kind"], "exception")
        self.assertEqual(prepared["error"],
                         "during the warm-up call: the candidate raised ValueError: A must be contiguous (kernel.py:5)")
        self.thread.join(10)
        self.assertEqual(self.exit_code, runner_module.EXIT_RUN_ERROR)

    def test_exception_in_a_measured_call(self):
        self.setup_runner("import torch\nn = [0]\n\n\ndef run(A, C):\n    n[0] += 1\n    if n[0] > 1:\n"
                          "        raise RuntimeError('second call')\n    C.copy_(A)\n")
        _, done = self.call(self.buffers())
        self.assertEqual((done["ok"], done["error_kind"]), (False, "exception"))
        self.assertIn("RuntimeError: second call (kernel.py:8)", done["error"])
        self.assertIsNone(self.exit_code)  # the runner lives on; the harness decides

    def test_triton_compile_error_is_a_compile_error(self):
        self.setup_runner("import torch\nimport triton.compiler.errors as e\n\n\ndef run(A, C):\n"
                          "    raise e.CompilationError('at 3:4: unsupported')\n")
        prepared, _ = self.call(self.buffers())
        self.assertEqual(prepared["error_kind"], "compile")
        self.assertIn("Triton could not compile the kernel: CompilationError: at 3:4: unsupported", prepared["error"])

    def test_wrong_number_of_parameters(self):
        self.setup_runner("def run(A, B, C):\n    pass\n")
        prepared, _ = self.call(self.buffers())
        self.assertEqual(prepared["error_kind"], "argument_count")
        self.assertIn("run takes 3 positional parameters, but the task has 2 tensors", prepared["error"])

    def test_import_error_is_a_load_error(self):
        answer = self.setup_runner("import torch\nraise ImportError('no module named flash_attn')\n")
        self.assertEqual((answer["type"], answer["phase"]), ("error", "load"))
        self.assertIn("the candidate could not be imported: ImportError: no module named flash_attn (kernel.py:2)",
                      answer["error"])
        self.assertEqual(answer["sandbox"]["applied"], True)  # a load error's verdict records the sandbox too
        self.thread.join(10)
        self.assertEqual(self.exit_code, runner_module.EXIT_LOAD_ERROR)

    def test_missing_entry_is_a_load_error(self):
        answer = self.setup_runner("def main(A, C):\n    pass\n")
        self.assertEqual(answer["phase"], "load")
        self.assertIn("defines no function run", answer["error"])

    def test_sandbox_failure_stops_before_the_candidate(self):
        fakes.Helper.sandbox_error = "seccomp is required but unavailable"
        answer = self.setup_runner("raise SystemExit('must not run')\n")
        self.assertEqual((answer["phase"], answer["error"]), ("sandbox", "seccomp is required but unavailable"))
        self.thread.join(10)
        self.assertEqual(self.exit_code, runner_module.EXIT_SANDBOX_ERROR)
        self.assertNotIn("ptxbench_candidate", sys.modules)

    def test_cuda_error_after_the_call_ends_the_runner(self):
        self.setup_runner()
        self.call(self.buffers())
        fakes.Helper.sync_error = "the call failed: cudaErrorIllegalAddress: an illegal memory access was encountered"
        self.harness.send({"type": "prepare", "nonce": 2, "tensors": self.buffers(), "noop": False})
        prepared = self.harness.receive()
        # Synchronising before the call already sees the sticky error: the runner says so and exits.
        self.assertEqual(prepared["type"], "error")
        self.assertIn("cudaErrorIllegalAddress", prepared["error"])
        self.thread.join(10)
        self.assertEqual(self.exit_code, runner_module.EXIT_RUN_ERROR)

    def test_malformed_tensor_is_refused(self):
        self.setup_runner()
        bad = self.buffers()
        bad[0]["bytes"] = 15
        prepared, _ = self.call(bad)
        self.assertEqual(prepared["type"], "error")
        self.assertIn("do not hold shape", prepared["error"])


    def test_capture_mode_compiles_before_the_sandbox_and_writes_what_run_launched(self):
        ready = self.setup_runner(mode="capture", timing=False)
        self.assertEqual(ready.get("type"), "ready", ready)
        helper = fakes.Helper.instances[-1]
        self.assertIn(("compile", "_ptxbench_warm"), self.triton.calls, "LLVM's one-time set-up before the sandbox")
        self.assertIsNotNone(helper.policy, "the sandbox is on when the candidate is imported")
        self.assertIsInstance(self.triton.knobs.runtime.jit_post_compile_hook, runner_module.capture.CompileRecorder)
        tensors = self.buffers()
        prepared, done = self.call(tensors)  # the warm-up runs the candidate for real, then the call is captured
        self.assertEqual(done.get("ok"), True, done)
        self.assertTrue(any(c[0] == "capture_begin" for c in helper.calls))
        self.assertTrue(any(c[0] == "capture_end" for c in helper.calls))
        import json
        with open(os.path.join(self.scratch, "capture-1.json")) as f:
            doc = json.load(f)
        self.assertEqual(doc["format"], "ptxbench.triton-capture/1")
        bases = [fakes.Helper.handles[t["handle"]] + 256 for t in tensors]
        self.assertEqual([t["ptr"] for t in doc["tensors"]], bases)
        self.assertEqual([n["name"] for n in doc["nodes"]], ["copy_kernel"], "only the captured call's launch")
        self.assertEqual(doc["kernels"], [], "the fake compiles nothing through Triton's JIT")
        prepared, done = self.call(tensors, nonce=2)
        self.assertTrue(os.path.exists(os.path.join(self.scratch, "capture-2.json")))

    def test_a_graph_the_plan_cannot_replay_is_reported_as_unreplayable(self):
        # cuBLAS reached by reflection launches with 'extra' parameters: the harness must reject the
        # plan at the link gate, which it does for the error kind "unreplayable" (an H100 run reported
        # it as an exception and the verdict became RUNTIME_ERROR at correctness).
        ready = self.setup_runner(mode="capture", timing=False)
        self.assertEqual(ready.get("type"), "ready", ready)
        helper = fakes.Helper.instances[-1]
        helper.refuse_capture = "kernel nvjet_sm90 was launched with 'extra' parameters (not replayable)"
        prepared, done = self.call(self.buffers())
        self.assertEqual((done.get("ok"), done.get("error_kind")), (False, "unreplayable"), done)
        self.assertEqual(done.get("error"), helper.refuse_capture)
        self.assertFalse(os.path.exists(os.path.join(self.scratch, "capture-1.json")))


if __name__ == "__main__":
    unittest.main()
