"""Stand-ins for torch, Triton and the helper library, just rich enough to drive the Triton runner's
message flow (tests/runner_py/test_runner_flow.py) on a machine without them. Device memory is a
dict of bytearrays; a "kernel" is the candidate copying bytes between fake tensors."""

import contextlib
import os
import stat
import sys
import threading
import types

REGION = 1 << 32


class Memory:
    def __init__(self):
        self.regions = {}  # base -> bytearray
        self.next = REGION

    def allocate(self, size):
        base = self.next
        self.next += REGION
        self.regions[base] = bytearray(size)
        return base

    def locate(self, ptr, size):
        for base, buf in self.regions.items():
            if base <= ptr and ptr + size <= base + len(buf):
                return buf, ptr - base
        raise AssertionError(f"fake device: {size} bytes at {ptr:#x} are not allocated")

    def write(self, ptr, data):
        buf, off = self.locate(ptr, len(data))
        buf[off:off + len(data)] = data

    def read(self, ptr, size):
        buf, off = self.locate(ptr, size)
        return bytes(buf[off:off + size])


class Dtype:
    def __init__(self, name, size):
        self.name, self.size = name, size

    def __repr__(self):
        return f"torch.{self.name}"


CARRIERS = {"<f4": "float32", "<f2": "float16", "<i2": "int16", "|u1": "uint8", "<i8": "int64", "<i4": "int32",
            "|i1": "int8", "|b1": "bool"}


def make_torch(memory):
    torch = types.ModuleType("torch")
    torch.__version__ = "2.11.0+fake"
    torch.version = types.SimpleNamespace(cuda="13.0")
    for name, size in [("float32", 4), ("float16", 2), ("bfloat16", 2), ("int16", 2), ("uint8", 1), ("int64", 8),
                       ("int32", 4), ("int8", 1), ("bool", 1), ("float8_e4m3fn", 1), ("float8_e5m2", 1)]:
        setattr(torch, name, Dtype(name, size))

    class Tensor:
        def __init__(self, ptr, shape, dtype):
            self.ptr, self.shape, self.dtype = ptr, list(shape), dtype

        def data_ptr(self):
            return self.ptr

        def numel(self):
            n = 1
            for d in self.shape:
                n *= d
            return n

        def view(self, dtype):
            assert dtype.size == self.dtype.size
            return Tensor(self.ptr, self.shape, dtype)

        def copy_(self, other):
            nbytes = self.numel() * self.dtype.size
            memory.write(self.ptr, memory.read(other.ptr, nbytes))
            torch.launched.append("copy_kernel")
            return self

    torch.Tensor = Tensor
    torch.launched = []

    def as_tensor(obj, device=None):
        cai = obj.__cuda_array_interface__
        return Tensor(cai["data"][0], cai["shape"], getattr(torch, CARRIERS[cai["typestr"]]))

    def empty(*shape, device=None, dtype=None):
        shape = list(shape[0]) if shape and isinstance(shape[0], (list, tuple)) else list(shape)
        dtype = dtype or torch.float32
        n = dtype.size
        for d in shape:
            n *= d
        return Tensor(memory.allocate(max(n, 1)), shape, dtype)

    torch.as_tensor, torch.empty = as_tensor, empty

    class Stream:
        def __init__(self, device=None):
            self.cuda_stream = 0x5000 + (device or 0)

    cuda = types.ModuleType("torch.cuda")
    cuda.Stream = Stream
    cuda.set_device = lambda device: None
    cuda.init = lambda: None
    cuda.current = []

    @contextlib.contextmanager
    def stream(s):
        cuda.current.append(s)
        try:
            yield
        finally:
            cuda.current.pop()

    cuda.stream = stream
    torch.cuda = cuda
    return torch


def make_triton(root):
    """triton with a driver, make_backend and a backends/nvidia/bin/ptxas (a shell script)."""
    triton = types.ModuleType("triton")
    triton.__version__ = "3.6.0+fake"
    triton.calls = []

    class Driver:
        def get_current_target(self):
            triton.calls.append("target")
            return ("cuda", 90, 32)

        @property
        def utils(self):
            triton.calls.append("utils")
            return object()

    runtime = types.ModuleType("triton.runtime")
    runtime.driver = types.SimpleNamespace(active=Driver())
    triton.runtime = runtime
    compiler_pkg = types.ModuleType("triton.compiler")
    compiler = types.ModuleType("triton.compiler.compiler")

    class Backend:
        def __init__(self, target):
            self.target = target

        def hash(self):
            triton.calls.append("hash")
            return "ptxas-12.8-90"

    compiler.make_backend = Backend
    # What the capture mode's bootstrap uses: a decorator, a compile of a trivial kernel before the
    # sandbox (recorded in triton.calls), and the knobs holding the compile hook.
    triton.jit = lambda fn: fn
    language = types.ModuleType("triton.language")
    triton.language = language
    compiler_pkg.ASTSource = lambda fn, signature, constexprs, attrs: ("ASTSource", fn.__name__, signature)
    triton.compile = lambda src, target=None, options=None: triton.calls.append(("compile", src[1]))
    triton.knobs = types.SimpleNamespace(runtime=types.SimpleNamespace(jit_post_compile_hook=None))
    errors = types.ModuleType("triton.compiler.errors")

    class CompilationError(Exception):
        pass
    CompilationError.__module__ = "triton.compiler.errors"
    errors.CompilationError = CompilationError
    compiler_pkg.compiler, compiler_pkg.errors = compiler, errors
    triton.compiler = compiler_pkg
    backends = types.ModuleType("triton.backends")
    nvidia = types.ModuleType("triton.backends.nvidia")
    nvdir = os.path.join(root, "triton", "backends", "nvidia")
    os.makedirs(os.path.join(nvdir, "bin"), exist_ok=True)
    nvidia.__file__ = os.path.join(nvdir, "__init__.py")
    ptxas = os.path.join(nvdir, "bin", "ptxas")
    with open(ptxas, "w") as f:
        f.write("#!/bin/sh\necho 'Cuda compilation tools, release 12.8'\n")
    os.chmod(ptxas, stat.S_IRWXU)
    backends.nvidia = nvidia
    triton.backends = backends
    modules = {"triton": triton, "triton.runtime": runtime, "triton.compiler": compiler_pkg, "triton.language": language,
               "triton.compiler.compiler": compiler, "triton.compiler.errors": errors, "triton.backends": backends,
               "triton.backends.nvidia": nvidia}
    return triton, modules


class Page:
    """The shared go/done page (core/sync_channel.h) as two words under a condition variable."""

    def __init__(self):
        self.go = self.done = 0
        self.cond = threading.Condition()

    def write(self, word, value):
        with self.cond:
            setattr(self, word, value)
            self.cond.notify_all()

    def wait(self, word, value, timeout=10):
        with self.cond:
            return self.cond.wait_for(lambda: getattr(self, word) == value, timeout)


class Helper:
    """libptxbench_runner_py.so: IPC handles name fake regions, CUPTI lists torch.launched."""
    handles = {}       # handle hex -> base
    instances = []
    sandbox_error = None
    sync_error = None
    page = None             # the Page sync_attach maps
    attach_error = None     # sync_attach raises this

    def __init__(self, path, memory=None, torch=None):
        self.path = path
        self.memory, self.torch = Helper.memory, Helper.torch
        self.calls = []
        self.policy = None
        self.open = set()
        Helper.instances.append(self)

    def set_device(self, device):
        self.calls.append(("set_device", device))

    def apply_sandbox(self, policy):
        if Helper.sandbox_error:
            raise RuntimeError(Helper.sandbox_error)
        self.policy = policy
        return {"applied": True, "mode": "enforce", "fake": True}

    def tracer_start(self):
        return None

    def now(self):
        return len(self.torch.launched)

    def collect(self, t0, t1):
        kernels = self.torch.launched[t0:t1]
        return {"span_ns": 1000 * len(kernels), "records": len(kernels), "kernels": kernels}

    def ipc_open(self, handle):
        base = Helper.handles[handle]
        self.open.add(base)
        return base

    def ipc_close(self, base):
        self.open.discard(base)

    def malloc(self, n):
        return self.memory.allocate(n)

    def free(self, ptr):
        self.calls.append(("free", ptr))

    def memcpy(self, dst, src, n):
        self.memory.write(dst, self.memory.read(src, n))

    def memset(self, ptr, value, n, stream=0):
        self.memory.write(ptr, bytes([value]) * n)
        self.calls.append(("memset", ptr, value, n))

    def synchronize(self):
        return Helper.sync_error

    def reset_persisting_l2(self):
        pass

    def profiler_start(self):
        self.calls.append(("profiler_start", len(self.torch.launched)))

    def profiler_stop(self):
        self.calls.append(("profiler_stop", len(self.torch.launched)))

    def sync_attach(self, fd):
        if Helper.attach_error:
            raise RuntimeError(Helper.attach_error)
        self.calls.append(("sync_attach", fd))

    def sync_wait_go(self, seq, liveness_fd):
        self.calls.append(("sync_wait_go", seq, liveness_fd))
        return 0 if Helper.page.wait("go", seq) else 2

    def capture_begin(self, stream):
        """Stream capture: from here the fake device records launches instead of running them."""
        self.calls.append(("capture_begin", stream, len(self.torch.launched)))
        self.capture_from = len(self.torch.launched)

    def capture_end(self, stream):
        self.calls.append(("capture_end", stream))
        if getattr(self, "refuse_capture", None):
            raise RuntimeError(self.refuse_capture)  # as the C helper does for a launch it cannot replay
        kernels = self.torch.launched[self.capture_from:]
        return {"nodes": [{"kind": "kernel", "function": "1", "name": k, "grid": [1, 1, 1], "block": [128, 1, 1],
                           "shared_bytes": 0, "cluster": [1, 1, 1], "cooperative": False, "params": []} for k in kernels]}

    def sync_signal_done(self, seq):
        # What had launched when the harness's clock stopped: the call's kernels must be among them.
        self.calls.append(("sync_done", seq, len(self.torch.launched)))
        Helper.page.write("done", seq)
