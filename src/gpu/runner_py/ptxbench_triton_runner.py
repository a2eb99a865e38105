#!/usr/bin/env python3
"""The Triton candidate runner: the untrusted side of the trust boundary for Triton candidates
(docs/gpu-evaluation.md, "Triton candidates"). ptxbench-harness starts it as

    python3 -B ptxbench_triton_runner.py --connect SOCKET --token TOKEN [--sync-fd FD]

exactly where it would start ptxbench-runner, and speaks the same protocol over the same socket
(runner_protocol.py). What runs here, in order:

  1. (trusted, one thread) fork the compile helper, which alone may start ptxas (compile_helper.py);
  2. (trusted) import torch and Triton: their libraries are mapped now, before "hello", so the
     harness's vendor-library check counts only what the candidate maps later;
  3. (trusted, on "setup") create the CUDA context, load libptxbench_runner_py.so (ctypes), start
     CUPTI, build Triton's driver module and ask ptxas its version (both start programs, so before
     the sandbox), point TRITON_CACHE_DIR at the scratch folder, hand Triton the subprocess proxy,
     apply the sandbox (the C++ runner's policy, plus read access to the Python installation);
  4. import kernel.py: from here on the candidate's code runs, confined;
  5. on the first "prepare": the warm-up — one call on the harness's buffers, where Triton
     compiles (and autotunes); then the outputs are poisoned again and the compile helper sealed;
  6. on each "go": the measured call on the current stream inside a CUPTI window (the Nsight
     Compute profiler window for the dynamic check), a device-wide synchronisation, "done" with
     the span and the launched kernels' names (the harness checks their provenance). With the
     shared go/done page (--sync-fd, core/sync_channel.h, mapped through the helper library) "go"
     and the end of the call travel on the page, as for ptxbench-runner; "done" follows on the
     socket. No launch audit: "ready" says so (audit false), and kernel provenance checks what ran.

Nothing this process reports decides correctness: the harness compares the outputs itself.
`--diagnose` prints versions and what the runner would use, without a harness (bench scripts).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import capture  # noqa: E402  (beside this file)
import compile_helper  # noqa: E402
import runner_protocol as rp  # noqa: E402

EXIT_RUN_ERROR = 3      # the C++ runner's codes: 3 run/CUDA error, 4 the candidate cannot be loaded,
EXIT_LOAD_ERROR = 4     # 5 the sandbox could not be applied
EXIT_SANDBOX_ERROR = 5
ERR_CAP = 1 << 16
HELPER_ABI = 3          # runner_py_capi.cc's ptxbench_rp_abi_version
# Why "ready" says audit false: the C++ runner's launch audit (CUPTI callbacks and marker kernels,
# docs/trusted-timing.md) has no Python counterpart; the harness records this in the timing details.
NO_AUDIT = ("the Triton runner does not audit launches (no CUPTI callback counter); kernel provenance "
            "checks the kernels each call ran")


class Helper:
    """libptxbench_runner_py.so through ctypes (runner_py_capi.cc)."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L, u64, c, sz = self.lib, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t
        sig = {
            "ptxbench_rp_abi_version": ([], ctypes.c_int),
            "ptxbench_rp_set_device": ([ctypes.c_int, c, sz], ctypes.c_int),
            "ptxbench_rp_apply_sandbox": ([c, c, sz], ctypes.c_int),
            "ptxbench_rp_tracer_start": ([c, sz], ctypes.c_int),
            "ptxbench_rp_tracer_now": ([], u64),
            "ptxbench_rp_tracer_collect": ([u64, u64, c, sz], ctypes.c_int),
            "ptxbench_rp_ipc_open": ([c, ctypes.POINTER(u64), c, sz], ctypes.c_int),
            "ptxbench_rp_ipc_close": ([u64], ctypes.c_int),
            "ptxbench_rp_malloc": ([u64, ctypes.POINTER(u64), c, sz], ctypes.c_int),
            "ptxbench_rp_free": ([u64], ctypes.c_int),
            "ptxbench_rp_memcpy": ([u64, u64, u64, c, sz], ctypes.c_int),
            "ptxbench_rp_memset": ([u64, ctypes.c_int, u64, u64, c, sz], ctypes.c_int),
            "ptxbench_rp_synchronize": ([c, sz], ctypes.c_int),
            "ptxbench_rp_reset_persisting_l2": ([], None),
            "ptxbench_rp_profiler_start": ([], ctypes.c_int),
            "ptxbench_rp_profiler_stop": ([], ctypes.c_int),
            "ptxbench_rp_sync_attach": ([ctypes.c_int, c, sz], ctypes.c_int),
            "ptxbench_rp_sync_wait_go": ([ctypes.c_uint32, ctypes.c_int], ctypes.c_int),
            "ptxbench_rp_sync_signal_done": ([ctypes.c_uint32], None),
            "ptxbench_rp_capture_begin": ([u64, c, sz], ctypes.c_int),
            "ptxbench_rp_capture_end": ([u64, c, sz], ctypes.c_int),
        }
        for name, (args, res) in sig.items():
            f = getattr(L, name)
            f.argtypes, f.restype = args, res
        if L.ptxbench_rp_abi_version() != HELPER_ABI:
            raise RuntimeError(f"{path}: helper C ABI version {L.ptxbench_rp_abi_version()}, this runner needs {HELPER_ABI}")

    @staticmethod
    def _buf(n=ERR_CAP):
        return ctypes.create_string_buffer(n)

    def _check(self, rc, buf):
        if rc != 0:
            raise RuntimeError(buf.value.decode("utf-8", "replace"))

    def set_device(self, device):
        b = self._buf()
        self._check(self.lib.ptxbench_rp_set_device(device, b, len(b)), b)

    def apply_sandbox(self, policy):
        """The sandbox report (dict). Raises with the reason when it could not be applied."""
        b = self._buf(1 << 20)
        rc = self.lib.ptxbench_rp_apply_sandbox(json.dumps({"sandbox": policy}).encode(), b, len(b))
        text = b.value.decode("utf-8", "replace")
        if rc == 1:
            raise RuntimeError(text)
        return json.loads(text) if rc == 0 else {"applied": True, "note": "report truncated"}

    def tracer_start(self):
        b = self._buf()
        rc = self.lib.ptxbench_rp_tracer_start(b, len(b))
        return None if rc == 0 else b.value.decode("utf-8", "replace")

    def now(self):
        return self.lib.ptxbench_rp_tracer_now()

    def collect(self, t0, t1):
        size = 1 << 20
        while True:
            b = self._buf(size)
            rc = self.lib.ptxbench_rp_tracer_collect(t0, t1, b, len(b))
            if rc == 0:
                return json.loads(b.value.decode("utf-8", "replace"))
            if size >= 64 << 20:
                return {"span_ns": 0, "records": 0, "kernels": ["<kernel list too long>"]}
            size *= 4

    def ipc_open(self, handle_hex):
        b, p = self._buf(), ctypes.c_uint64(0)
        self._check(self.lib.ptxbench_rp_ipc_open(handle_hex.encode(), ctypes.byref(p), b, len(b)), b)
        return p.value

    def ipc_close(self, ptr):
        self.lib.ptxbench_rp_ipc_close(ptr)

    def malloc(self, nbytes):
        b, p = self._buf(), ctypes.c_uint64(0)
        self._check(self.lib.ptxbench_rp_malloc(nbytes, ctypes.byref(p), b, len(b)), b)
        return p.value

    def free(self, ptr):
        self.lib.ptxbench_rp_free(ptr)

    def memcpy(self, dst, src, nbytes):
        b = self._buf()
        self._check(self.lib.ptxbench_rp_memcpy(dst, src, nbytes, b, len(b)), b)

    def memset(self, ptr, value, nbytes, stream=0):
        b = self._buf()
        self._check(self.lib.ptxbench_rp_memset(ptr, value, nbytes, stream, b, len(b)), b)

    def synchronize(self):
        """None, or the CUDA error text (the context is then unusable)."""
        b = self._buf()
        return None if self.lib.ptxbench_rp_synchronize(b, len(b)) == 0 else b.value.decode("utf-8", "replace")

    def reset_persisting_l2(self):
        self.lib.ptxbench_rp_reset_persisting_l2()

    def profiler_start(self):
        """0, or the CUDA error code of cudaProfilerStart."""
        return self.lib.ptxbench_rp_profiler_start()

    def profiler_stop(self):
        return self.lib.ptxbench_rp_profiler_stop()

    def sync_attach(self, fd):
        """Maps the shared go/done page; raises with the reason when fd is not one."""
        b = self._buf()
        self._check(self.lib.ptxbench_rp_sync_attach(fd, b, len(b)), b)

    def sync_wait_go(self, seq, liveness_fd):
        """0 when the harness wrote go = seq; 2 when it went away (ctypes drops the GIL meanwhile)."""
        return self.lib.ptxbench_rp_sync_wait_go(seq & 0xFFFFFFFF, liveness_fd)

    def sync_signal_done(self, seq):
        self.lib.ptxbench_rp_sync_signal_done(seq & 0xFFFFFFFF)

    def capture_begin(self, stream):
        b = self._buf()
        self._check(self.lib.ptxbench_rp_capture_begin(stream, b, len(b)), b)

    def capture_end(self, stream):
        """The captured graph's description (dict); raises with the reason the capture broke."""
        b = self._buf(64 << 20)
        rc = self.lib.ptxbench_rp_capture_end(stream, b, len(b))
        text = b.value.decode("utf-8", "replace")
        if rc == 1:
            raise RuntimeError(text)
        if rc == 2:
            raise RuntimeError("the captured graph's description is larger than 64 MiB")
        return json.loads(text)


class Runner:
    """One candidate in one runner process. `helper_type` loads the helper library and `exit` ends
    the process; the tests substitute both (tests/runner_py)."""

    def __init__(self, channel, helper_client, torch, triton, helper_type=None, exit=None, install_proxy=None,
                 sync_fd=-1):
        self.channel, self.compile_helper, self.torch, self.triton = channel, helper_client, torch, triton
        self.sync_fd = sync_fd  # the harness's shared go/done page, as an inherited descriptor (-1: none)
        self.sync = False       # the page is mapped
        self.sync_call = False  # this call's go/done travel on the page
        self.helper_type = helper_type or Helper
        self.exit = exit or os._exit
        self.install_proxy = install_proxy or compile_helper.install_proxy
        self.nonce = -1
        self.sandbox_report = None
        self.lib = None
        self.cupti = False
        self.mode = "plain"
        self.timing = False
        self.profile_window = False
        self.device = 0
        self.stream = None
        self.entry = None
        self.candidate_file = ""
        self.kernel_cache = ""
        self.mapped = []        # (base pointer from IPC, private copy or 0, TensorDesc)
        self.args = []
        self.noop = False
        self.noop_buffer = 0
        self.warmed_up = False
        self.wrap_method = None  # how raw pointers become tensors (decided on the first buffer)
        self.scratch = ""
        self.recorder = capture.CompileRecorder()
        self.captures = 0        # capture mode: calls captured so far

    # ---- messages -----------------------------------------------------------------------
    def fail(self, message, code=EXIT_RUN_ERROR, kind=None):
        phase = {EXIT_LOAD_ERROR: "load", EXIT_SANDBOX_ERROR: "sandbox"}.get(code, "run")
        m = {"type": "error", "nonce": self.nonce, "error": message, "phase": phase}
        if kind:
            m["error_kind"] = kind
        if self.sandbox_report is not None:
            m["sandbox"] = self.sandbox_report
        try:
            self.channel.send(m)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            self.exit(code)

    def log(self, text):
        sys.stderr.write(f"ptxbench-triton-runner: {text}\n")
        sys.stderr.flush()

    # ---- setup --------------------------------------------------------------------------
    def setup(self, m):
        torch, triton = self.torch, self.triton
        self.mode = m.get("mode", "plain")
        self.timing = bool(m.get("timing", False))
        self.profile_window = bool(m.get("profile_window", False))
        self.device = int(m.get("device", 0))
        self.candidate_file = m.get("so", "")
        symbol = m.get("symbol", "run")
        scratch = m.get("scratch") or os.environ.get("TMPDIR", "")
        if not scratch or not os.path.isdir(scratch):
            self.fail(f"no scratch folder ({scratch!r})")
        self.scratch = scratch
        self.kernel_cache = os.path.join(scratch, m.get("kernel_cache", rp.KERNEL_CACHE_FOLDER))

        # The CUDA context (torch's, the device's primary context) and the helper library.
        try:
            torch.cuda.set_device(self.device)
            torch.cuda.init()
            torch.empty(1, device=f"cuda:{self.device}")
            self.lib = self.helper_type(m["helper"])
            self.lib.set_device(self.device)
            self.stream = torch.cuda.Stream(device=self.device)
        except Exception as e:  # the harness's problem (no GPU, wrong library), not the candidate's
            self.fail(f"CUDA or the helper library could not be set up: {rp.exception_summary(e, '')}")
        if self.sync_fd >= 0:
            # Without the page the harness falls back to go/done over the socket ("sync": false).
            try:
                self.lib.sync_attach(self.sync_fd)
                self.sync = True
            except Exception as e:
                self.log(f"{rp.exception_summary(e, '')}; go/done use the socket")
        if self.timing:
            problem = self.lib.tracer_start()
            self.cupti = problem is None
            if problem:
                self.log(f"CUPTI unavailable ({problem}); the harness's wall clock is the only measure")

        # Triton's own start-up, which starts programs (the C compiler for its driver module, ptxas
        # for its version): done now, before the sandbox and before any candidate code.
        try:
            prepare_compiler(triton, scratch, self.kernel_cache)
        except Exception as e:
            self.fail(f"Triton could not be initialised: {rp.exception_summary(e, '')}")
        programs = find_ptxas(triton)
        if not programs:
            self.fail("Triton's ptxas was not found (triton/backends/nvidia/bin/ptxas or TRITON_PTXAS_PATH)")
        compilers, read_dirs = find_c_compiler(), launcher_read_dirs(triton)
        try:
            self.compile_helper.configure(programs, compilers, read_dirs)
        except Exception as e:
            self.fail(f"the compile helper could not be configured: {e}")
        patched = self.install_proxy(compile_helper.make_subprocess_proxy(self.compile_helper))
        if self.mode == "capture":
            # Compile one trivial kernel now, before the sandbox: Triton's LLVM installs its signal
            # handlers (SIGSYS among them) the first time it compiles. Done here, the sandbox installs
            # its own SIGSYS handler after LLVM's and owns it; done later, under the sandbox, LLVM's
            # rt_sigaction(SIGSYS) is a violation (the sandbox refuses new SIGSYS actions).
            try:
                warm_compile(triton)
            except Exception as e:
                self.fail(f"Triton could not compile a trivial kernel: {rp.exception_summary(e, '')}")
            self.log(f"LLVM's signal handlers before the sandbox: SIGSYS {'caught' if sigsys_caught() else 'not caught'}")
            try:
                self.recorder.install(triton)
            except Exception as e:
                self.fail(f"the compile recorder could not be installed: {rp.exception_summary(e, '')}")
        self.log(f"candidate {self.candidate_file}")
        self.log(f"python {sys.version.split()[0]}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
                 f"triton {getattr(triton, '__version__', '?')}, ptxas {programs}, subprocess proxied in "
                 f"{len(patched)} module(s), CUPTI {'on' if self.cupti else 'off'}, mode {self.mode}")

        # The sandbox: the C++ runner's policy, plus read access to the interpreter and its packages.
        try:
            policy = rp.extend_policy(m.get("sandbox"), rp.python_read_paths([torch, triton]) + [HERE])
            self.sandbox_report = self.lib.apply_sandbox(policy)
        except Exception as e:
            self.fail(f"{e}", EXIT_SANDBOX_ERROR)

        # The candidate: its top-level code runs now, confined.
        try:
            spec = importlib.util.spec_from_file_location("ptxbench_candidate", self.candidate_file)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {self.candidate_file}")
            module = importlib.util.module_from_spec(spec)
            sys.modules["ptxbench_candidate"] = module
            spec.loader.exec_module(module)
        except BaseException as e:  # noqa: B902 (SystemExit from the candidate's top level included)
            sys.stderr.write(rp.traceback_text(e, self.candidate_file))
            self.fail(f"the candidate could not be imported: {rp.exception_summary(e, self.candidate_file)}",
                      EXIT_LOAD_ERROR)
        self.entry = getattr(module, symbol, None)
        if not callable(self.entry):
            self.fail(f"kernel.py defines no function {symbol}(inputs..., outputs...)", EXIT_LOAD_ERROR)
        self.channel.send({"type": "ready", "pid": os.getpid(), "cupti": self.cupti, "sandbox": self.sandbox_report,
                           "sync": self.sync, "audit": False, "audit_error": NO_AUDIT,
                           "runtime": {"python": sys.version.split()[0], "torch": torch.__version__,
                                       "torch_cuda": torch.version.cuda,
                                       "triton": getattr(triton, "__version__", "?")}})

    # ---- buffers ------------------------------------------------------------------------
    def release(self):
        self.args = []
        for base, private, _desc in self.mapped:
            if private:
                self.lib.free(private)
            if base:
                self.lib.ipc_close(base)
        self.mapped = []

    def wrap(self, ptr, desc):
        """A torch tensor over the raw device pointer, without a copy: __cuda_array_interface__ with
        a same-size carrier type viewed as the real dtype, or a DLPack capsule when torch cannot read
        the interface (it parses type strings with numpy)."""
        torch = self.torch
        dtype = getattr(torch, rp.DTYPES[desc.dtype][0])
        if self.wrap_method != "dlpack":
            try:
                carrier = torch.as_tensor(rp.CudaArray(ptr, desc.shape, desc.dtype), device=f"cuda:{self.device}")
                tensor = carrier if carrier.dtype == dtype else carrier.view(dtype)
                if (desc.bytes and tensor.data_ptr() != ptr) or list(tensor.shape) != desc.shape:
                    raise RuntimeError("the wrapped tensor does not alias the buffer")
                self.wrap_method = "cuda_array_interface"
                return tensor
            except Exception as e:
                if self.wrap_method == "cuda_array_interface":
                    raise
                self.log(f"__cuda_array_interface__ unusable ({rp.exception_summary(e, '')}); using DLPack")
        from torch.utils.dlpack import from_dlpack
        tensor = from_dlpack(rp.dlpack_capsule(ptr, desc.shape, desc.dtype, self.device))
        self.wrap_method = "dlpack"
        return tensor

    def prepare(self, m):
        self.release()
        self.nonce = int(m.get("nonce", -1))
        self.noop = bool(m.get("noop", False))
        self.sync_call = bool(m.get("sync", False)) and self.sync
        try:
            descs = [rp.TensorDesc.from_json(t) for t in m.get("tensors", [])]
        except rp.ProtocolError as e:
            self.fail(str(e))
        for d in descs:
            try:
                base = self.lib.ipc_open(d.handle)
            except RuntimeError as e:
                self.fail(str(e))
            data, private = base + d.offset, 0
            if self.mode == "private":
                # Exact-size private buffers (the memory checker's padding, a profiler's replay).
                private = self.lib.malloc(d.bytes)
                if d.is_output:
                    self.lib.memset(private, 0xFF, d.bytes)
                else:
                    self.lib.memcpy(private, data, d.bytes)
                data = private
            self.mapped.append((base, private, d))
            try:
                self.args.append(self.wrap(data, d))
            except Exception as e:
                self.fail(f"tensor {d.name} could not be wrapped for torch: {rp.exception_summary(e, '')}")
        if not self.noop and not self.warmed_up:
            self.warm_up()
        self.lib.reset_persisting_l2()
        err = self.lib.synchronize()
        if err:
            self.fail(f"synchronising before the call: {err}")
        self.channel.send({"type": "prepared", "nonce": self.nonce})

    def call_entry(self):
        """Runs the candidate on the current stream. None, or (message, kind)."""
        try:
            with self.torch.cuda.stream(self.stream):
                self.entry(*self.args)
        except BaseException as e:  # noqa: B902 (SystemExit and KeyboardInterrupt are the candidate's too)
            sys.stderr.write(rp.traceback_text(e, self.candidate_file))
            summary = rp.exception_summary(e, self.candidate_file)
            if rp.is_compile_error(e) or isinstance(e, compile_helper.CompileHelperError) and not self.warmed_up:
                return f"Triton could not compile the kernel: {summary}", "compile"
            if isinstance(e, compile_helper.CompileHelperError):
                return (f"Triton tried to compile a kernel after the warm-up ({summary}); compile every kernel in "
                        f"the first call (no new specialisations or autotuning afterwards)"), "exception"
            return f"the candidate raised {summary}", "exception"
        return None

    def warm_up(self):
        """The first call, untimed: Triton compiles (and autotunes) here. Then the outputs are
        poisoned again and no program may be started any more."""
        problem = rp.entry_arity_problem(self.entry, len(self.args))
        if problem:
            self.fail(problem, EXIT_RUN_ERROR, kind="argument_count")
        failure = self.call_entry()
        err = self.lib.synchronize()
        self.warmed_up = True
        self.compile_helper.seal("the runner starts no programs after the warm-up call")
        names = rp.compiled_kernels(self.kernel_cache)
        self.log(f"warm-up done; Triton compiled {len(names)} kernel(s): {', '.join(names) or '-'}; tensors via "
                 f"{self.wrap_method}")
        if failure:
            self.fail(f"during the warm-up call: {failure[0]}", EXIT_RUN_ERROR, kind=failure[1])
        if err:
            self.fail(f"CUDA error after the warm-up call: {err}")
        for (base, private, d), tensor in zip(self.mapped, self.args):
            if d.is_output and d.bytes:
                self.lib.memset(tensor.data_ptr(), 0xFF, d.bytes)

    # ---- the call -----------------------------------------------------------------------
    def capture_call(self):
        """Capture mode: run() once under stream capture (nothing executes), then the capture
        document in scratch/capture-<n>.json for the harness. done says ok or why not."""
        self.captures += 1
        done = {"type": "done", "nonce": self.nonce, "method": "none"}
        failure, graph = None, None
        stream = self.stream.cuda_stream
        try:
            self.lib.capture_begin(stream)
        except RuntimeError as e:
            failure = (f"the call could not be captured: {e}", "exception")
        if failure is None:
            failure = self.call_entry()
            try:
                graph = self.lib.capture_end(stream)
            except RuntimeError as e:
                # The graph holds a launch the plan cannot replay (a vendor kernel's 'extra'
                # parameters, a host callback...): the harness rejects the plan at the link gate.
                failure = failure or (str(e), "unreplayable")
        err = self.lib.synchronize()
        if self.sync_call:
            self.lib.sync_signal_done(self.nonce)  # nothing is timed in capture mode; the page must still be answered
        if failure is None and err is None:
            try:
                kernels = capture.compiled_kernels(self.recorder, self.scratch)
                capture.write_capture(self.scratch, self.captures,
                                      capture.capture_document([t.data_ptr() for t in self.args], graph, kernels))
            except Exception as e:
                failure = (f"the capture could not be written: {rp.exception_summary(e, '')}", "exception")
        if failure:
            done.update({"ok": False, "error": failure[0], "error_kind": failure[1]})
        elif err:
            done.update({"ok": False, "error": f"CUDA error after the candidate's call: {err}"})
        else:
            done["ok"] = True
        sys.stdout.flush()
        sys.stderr.flush()
        self.release()
        self.channel.send(done)
        if err:
            self.exit(EXIT_RUN_ERROR)

    def go(self):
        if self.mode == "capture" and not self.noop:
            return self.capture_call()
        t0 = self.lib.now() if self.cupti else 0
        failure = None
        if self.profile_window:
            self.lib.profiler_start()
        if not self.noop:
            failure = self.call_entry()
        else:
            if not self.noop_buffer:
                self.noop_buffer = self.lib.malloc(256)
            self.lib.memset(self.noop_buffer, 0, 4, self.stream.cuda_stream)
        err = self.lib.synchronize()  # every stream of this process
        if self.profile_window:
            self.lib.profiler_stop()
        t1 = self.lib.now() if self.cupti else 0
        # The harness's clock stops here (the shared page); everything below is outside its bound.
        if self.sync_call:
            self.lib.sync_signal_done(self.nonce)
        done = {"type": "done", "nonce": self.nonce}
        if self.cupti:
            span = self.lib.collect(t0, t1)
            done.update({"method": "cupti", "span_ns": span.get("span_ns", 0), "records": span.get("records", 0),
                         "kernels": span.get("kernels", [])})
        else:
            done["method"] = "none"
        if failure:
            done.update({"ok": False, "error": failure[0], "error_kind": failure[1]})
        elif err:
            done.update({"ok": False, "error": f"CUDA error after the candidate's call: {err}"})
        else:
            done["ok"] = True
            if self.mode == "private":
                for base, private, d in self.mapped:
                    if d.is_output and private:
                        self.lib.memcpy(base + d.offset, private, d.bytes)
        sys.stdout.flush()
        sys.stderr.flush()
        self.release()
        self.channel.send(done)
        if err:
            self.exit(EXIT_RUN_ERROR)  # the context is unusable after a sticky error

    def await_go(self):
        """After "prepared" on a shared-page call: wait for go = nonce on the page, then call."""
        if self.lib.sync_wait_go(self.nonce, self.channel.fileno()) != 0:
            self.exit(0)  # the harness went away
            return
        self.go()

    def serve(self):
        while True:
            m = self.channel.receive()
            if m is None:
                return
            kind = m.get("type")
            if kind == "setup":
                self.setup(m)
            elif kind == "prepare":
                self.prepare(m)
                if self.sync_call:
                    self.await_go()
            elif kind == "go":
                self.go()
            elif kind == "shutdown":
                return


def prepare_compiler(triton, scratch, kernel_cache):
    """Triton's own start-up, which starts programs (the C compiler for its driver module, ptxas for
    its version), with CUDA already initialised in this process: its environment under `scratch`
    (rp.triton_environment), the driver module built, ptxas asked, then TRITON_CACHE_DIR pointed at
    `kernel_cache`. Before the sandbox and before any candidate code (the runner's setup and the
    trusted recompile both)."""
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
        libcuda = rp.libcuda_dir_from_maps(f.read())
    to_set, to_unset = rp.triton_environment(scratch, libcuda)
    for k in to_unset:
        os.environ.pop(k, None)
    os.environ.update(to_set)
    driver = triton.runtime.driver.active
    target = driver.get_current_target()
    _ = driver.utils  # builds (gcc) and loads Triton's cuda_utils module
    from triton.compiler.compiler import make_backend
    make_backend(target).hash()  # runs `ptxas --version` once (cached by Triton)
    os.environ["TRITON_CACHE_DIR"] = kernel_cache
    os.makedirs(kernel_cache, exist_ok=True)
    return target


def warm_compile(triton):
    """Compiles one trivial kernel (no launch, no device memory): LLVM's one-time set-up happens now."""
    import triton.language as tl
    from triton.compiler import ASTSource

    @triton.jit
    def _ptxbench_warm(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr) + 1)

    target = triton.runtime.driver.active.get_current_target()
    triton.compile(ASTSource(_ptxbench_warm, {"x_ptr": "*fp32"}, {}, {}), target=target)


def sigsys_caught():
    """Whether this process has a handler for SIGSYS (SigCgt bit 31 of /proc/self/status)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) & (1 << (31 - 1)))
    except OSError:
        pass
    return False


def find_c_compiler():
    """The C compiler Triton builds its launcher modules with ($CC, else gcc, else clang), real path."""
    import shutil
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang")
    return [os.path.realpath(cc)] if cc and os.path.isfile(os.path.realpath(cc)) else []


def launcher_read_dirs(triton):
    """The read-only folders Triton's launcher build names (-I, -L): Triton's package, Python's
    headers, and the folder of the libcuda it uses."""
    import sysconfig
    where = getattr(triton, "__file__", None)
    dirs = [os.path.dirname(os.path.realpath(where))] if where else []
    for scheme in sysconfig.get_scheme_names():
        for key in ("include", "platinclude"):
            try:
                dirs.append(sysconfig.get_paths(scheme=scheme)[key])
            except (KeyError, ValueError):
                pass
    if os.environ.get("TRITON_LIBCUDA_PATH"):
        dirs.append(os.environ["TRITON_LIBCUDA_PATH"])
    return sorted({os.path.realpath(d) for d in dirs if d})


def find_ptxas(triton):
    """The ptxas programs Triton may start (real paths): what its NVIDIA backend resolves, or the
    binaries it ships, or TRITON_PTXAS_PATH."""
    found = []
    for env in ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH"):
        if os.environ.get(env):
            found.append(os.environ[env])
    try:
        import triton.backends.nvidia as nv
        bindir = os.path.join(os.path.dirname(nv.__file__), "bin")
        for name in sorted(os.listdir(bindir)):
            if name.startswith("ptxas"):
                found.append(os.path.join(bindir, name))
    except Exception:
        pass
    out = []
    for p in found:
        real = os.path.realpath(p)
        if os.path.isfile(real) and real not in out:
            out.append(real)
    return out


def diagnose():
    """Versions and the pieces the runner would use; no harness, no candidate (bench scripts)."""
    info = {"python": sys.version.split()[0], "executable": sys.executable}
    try:
        import torch
        info.update({"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                     "cuda_available": torch.cuda.is_available(),
                     "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None})
    except Exception as e:
        info["torch_error"] = rp.exception_summary(e, "")
    try:
        import triton
        info["triton"] = getattr(triton, "__version__", "?")
        info["ptxas"] = find_ptxas(triton)
    except Exception as e:
        info["triton_error"] = rp.exception_summary(e, "")
    print(json.dumps(info, indent=2))
    return 0


def main(argv=None):
    try:
        args = rp.parse_args(sys.argv[1:] if argv is None else argv)
    except rp.ProtocolError as e:
        print(f"ptxbench-triton-runner: {e}", file=sys.stderr)
        return 2
    if args["diagnose"]:
        return diagnose()
    # 0. Triton's environment: nothing inherited may change how it compiles (the trusted recompile
    #    compiles under the same settings and must produce the same cubins).
    rp.scrub_triton_environment(os.environ)
    # 1. The compile helper, while this process has a single thread and no candidate code.
    scratch = os.environ.get("TMPDIR") or "/tmp"
    helper_client = compile_helper.HelperClient.start(os.path.realpath(scratch))
    # 2. torch and Triton: mapped before "hello" (the harness's vendor-library baseline).
    try:
        import torch
        import triton
        import triton.language  # noqa: F401
    except Exception as e:
        print(f"ptxbench-triton-runner: cannot import torch and Triton: {rp.exception_summary(e, '')}", file=sys.stderr)
        return 3
    try:
        channel = rp.Channel.connect(args["connect"])
    except OSError as e:
        print(f"ptxbench-triton-runner: connect {args['connect']}: {e}", file=sys.stderr)
        return 3
    channel.send({"type": "hello", "token": args["token"], "pid": os.getpid(), "language": "triton"})
    runner = Runner(channel, helper_client, torch, triton, sync_fd=args["sync_fd"])
    try:
        runner.serve()
        runner.release()
    except SystemExit:
        raise
    except BaseException as e:  # a runner bug must end the process, not leave the harness waiting
        runner.fail(f"the runner failed: {rp.exception_summary(e, '')}")
        os._exit(EXIT_RUN_ERROR)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # the candidate's objects and Triton's atexit hooks are not our concern


if __name__ == "__main__":
    sys.exit(main())
