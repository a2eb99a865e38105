"""The Triton runner's parts that need neither torch, Triton nor a GPU (tested by
tests/runner_py with the standard library alone).

The runner speaks the same protocol as the C++ runner (src/gpu/runner/runner_main.cc), one JSON
document per SOCK_SEQPACKET message over the harness's private socket:

    runner -> hello{token, pid}; harness -> setup{so, symbol, mode, device, timing, sandbox, scratch, ...}
    runner -> ready{pid, cupti, sandbox} | error{phase: load | sandbox | run}
    harness -> prepare{nonce, tensors, noop}; runner -> prepared | error
    harness -> go{nonce};                      runner -> done{ok, error, error_kind, span_ns, records, kernels, method}
    harness -> shutdown

so the harness's runner_client has one code path for both.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import traceback

MAX_MESSAGE = 4 << 20  # the harness's limit (src/core/message_channel.cc)

# The folder under the runner's scratch that holds the candidate's Triton kernel cache; the harness
# reads the same folder for the kernel-provenance check (src/gpu/harness/kernel_provenance.h).
KERNEL_CACHE_FOLDER = "triton-cache"
# Triton's own driver module (cuda_utils, built with the C compiler before the candidate loads).
DRIVER_CACHE_FOLDER = "triton-driver"


class ProtocolError(Exception):
    """The harness sent something this runner cannot act on."""


class Channel:
    """One JSON document per message over a connected SOCK_SEQPACKET socket."""

    def __init__(self, sock):
        self.sock = sock

    def fileno(self):
        """The socket's descriptor: it hangs up when the harness goes away (the page wait's liveness)."""
        return self.sock.fileno()

    @classmethod
    def connect(cls, path):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        sock.connect(path)
        return cls(sock)

    def send(self, message):
        data = json.dumps(message, separators=(",", ":")).encode("utf-8")
        if len(data) > MAX_MESSAGE:
            raise ProtocolError(f"message of {len(data)} bytes is over the limit of {MAX_MESSAGE}")
        self.sock.sendall(data)

    def receive(self):
        """The next message, or None when the harness went away."""
        try:
            data = self.sock.recv(MAX_MESSAGE)
        except (ConnectionResetError, BrokenPipeError):
            return None
        if not data:
            return None
        message = json.loads(data.decode("utf-8"))
        if not isinstance(message, dict):
            raise ProtocolError("a message that is not a JSON object")
        return message


def parse_args(argv):
    """--connect SOCKET --token TOKEN [--sync-fd FD] (as the C++ runner), or --diagnose. Returns a dict."""
    out = {"connect": None, "token": "", "diagnose": False, "sync_fd": -1}
    i = 0
    while i < len(argv):
        key = argv[i]
        if key == "--diagnose":
            out["diagnose"] = True
            i += 1
            continue
        if key in ("--connect", "--token") and i + 1 < len(argv):
            out[key[2:]] = argv[i + 1]
            i += 2
            continue
        if key == "--sync-fd" and i + 1 < len(argv):
            try:
                out["sync_fd"] = int(argv[i + 1])
            except ValueError:
                raise ProtocolError(f"--sync-fd needs a descriptor number, not {argv[i + 1]!r}") from None
            if out["sync_fd"] < 0:
                raise ProtocolError(f"--sync-fd needs a descriptor number, not {argv[i + 1]!r}")
            i += 2
            continue
        raise ProtocolError(f"unknown argument {key!r}")
    if not out["diagnose"] and not out["connect"]:
        raise ProtocolError("usage: ptxbench_triton_runner.py --connect SOCKET --token TOKEN (started by ptxbench-harness)")
    return out


# ---------------------------------------------------------------------------------------------
# Tensors: the harness describes each buffer; the runner maps it and wraps it as a torch tensor.
# ---------------------------------------------------------------------------------------------

# schema dtype -> (torch dtype attribute, bits per element, the same-size carrier type for
# __cuda_array_interface__, which speaks numpy's type strings and has no bfloat16 or float8: the
# tensor is made with the carrier and then viewed as the real dtype, without a copy).
DTYPES = {
    "float32": ("float32", 32, "<f4"),
    "float16": ("float16", 16, "<f2"),
    "bfloat16": ("bfloat16", 16, "<i2"),
    "float8_e4m3fn": ("float8_e4m3fn", 8, "|u1"),
    "float8_e5m2": ("float8_e5m2", 8, "|u1"),
    "int64": ("int64", 64, "<i8"),
    "int32": ("int32", 32, "<i4"),
    "int16": ("int16", 16, "<i2"),
    "int8": ("int8", 8, "|i1"),
    "bool": ("bool", 8, "|b1"),
}

# DLPack (dlpack.h) type codes for the fallback wrapping.
DLPACK_CODES = {"float32": (2, 32), "float16": (2, 16), "bfloat16": (4, 16), "int64": (0, 64), "int32": (0, 32),
                "int16": (0, 16), "int8": (0, 8), "bool": (6, 8)}


class TensorDesc:
    """One buffer of the current call, as the harness's prepare message describes it
    (src/gpu/common/ipc_tensor.cc: name, handle, offset, bytes, dtype, shape, output)."""

    __slots__ = ("name", "handle", "offset", "bytes", "dtype", "shape", "is_output")

    def __init__(self, name, handle, offset, nbytes, dtype, shape, is_output):
        self.name, self.handle, self.offset, self.bytes = name, handle, offset, nbytes
        self.dtype, self.shape, self.is_output = dtype, shape, is_output

    @classmethod
    def from_json(cls, j):
        try:
            name = str(j["name"])
            handle = str(j["handle"])
            offset = int(j["offset"])
            nbytes = int(j["bytes"])
            dtype = str(j["dtype"])
            shape = [int(x) for x in j["shape"]]
            is_output = bool(j["output"])
        except (KeyError, TypeError, ValueError) as e:
            raise ProtocolError(f"malformed tensor message: {e}") from None
        if dtype not in DTYPES:
            raise ProtocolError(f"tensor {name}: dtype {dtype} is not supported by the Triton runner")
        if len(handle) != 128 or any(c not in "0123456789abcdef" for c in handle):
            raise ProtocolError(f"tensor {name}: bad IPC handle text")
        if offset < 0 or nbytes < 0 or any(d < 0 for d in shape):
            raise ProtocolError(f"tensor {name}: negative offset, size or extent")
        numel = 1
        for d in shape:
            numel *= d
        if numel * DTYPES[dtype][1] // 8 != nbytes:
            raise ProtocolError(f"tensor {name}: {nbytes} bytes do not hold shape {shape} of {dtype}")
        return cls(name, handle, offset, nbytes, dtype, shape, is_output)

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


def contiguous_strides(shape):
    """Row-major strides in elements."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return list(reversed(strides))


def cuda_array_interface(ptr, shape, dtype):
    """The __cuda_array_interface__ (version 2) of a contiguous device buffer, typed with the
    carrier of `dtype` (see DTYPES); strides None means C-contiguous."""
    return {"shape": tuple(shape), "typestr": DTYPES[dtype][2], "data": (int(ptr), False), "version": 2,
            "strides": None}


class CudaArray:
    """Exposes a raw device pointer to torch.as_tensor through __cuda_array_interface__."""

    def __init__(self, ptr, shape, dtype):
        self.__cuda_array_interface__ = cuda_array_interface(ptr, shape, dtype)


# ---------------------------------------------------------------------------------------------
# The candidate's entry and its errors.
# ---------------------------------------------------------------------------------------------

def entry_arity_problem(func, nargs):
    """Why func cannot take nargs positional tensors (inputs then outputs), or None."""
    import inspect
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None  # a builtin or something exotic: let the call say
    params = list(sig.parameters.values())
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    required_kw = [p for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    if required_kw:
        return f"run requires keyword-only parameter(s) {', '.join(p.name for p in required_kw)}; it gets {nargs} tensors"
    if nargs < len(required) or nargs > len(positional):
        want = str(len(required)) if len(required) == len(positional) else f"{len(required)} to {len(positional)}"
        return f"run takes {want} positional parameters, but the task has {nargs} tensors (inputs then outputs)"
    return None


def exception_summary(exc, candidate_file, limit=600):
    """One line: the exception's type and message, and the innermost line of the candidate's file
    it passed through ("ValueError: A must be contiguous (kernel.py:41)")."""
    kind = type(exc).__name__
    text = str(exc).strip().replace("\n", " | ")
    where = ""
    tb = exc.__traceback__
    for frame, line in traceback.walk_tb(tb):
        if os.path.abspath(frame.f_code.co_filename) == os.path.abspath(candidate_file):
            where = f" (kernel.py:{line})"
    message = f"{kind}: {text}" if text else kind
    if len(message) > limit:
        message = message[: limit - 3] + "..."
    return message + where


def is_compile_error(exc):
    """True for an error of Triton's compiler (the candidate's @triton.jit code does not compile),
    told apart from other exceptions by the class's module and name, not by message text."""
    for cls in type(exc).__mro__:
        module = getattr(cls, "__module__", "") or ""
        if module.startswith("triton.compiler") and cls.__name__ in ("CompilationError", "CompileTimeAssertionFailure"):
            return True
        if module.startswith("triton") and cls.__name__ in ("PTXASError", "OutOfResources"):
            return True
    return False


def traceback_text(exc, candidate_file, max_frames=12):
    """The traceback for the runner's log (what the feedback shows), keeping the frames in the
    candidate's file and the innermost few of the rest."""
    frames = traceback.extract_tb(exc.__traceback__)
    keep = [f for f in frames if os.path.abspath(f.filename) == os.path.abspath(candidate_file)]
    keep += [f for f in frames[-3:] if f not in keep]
    keep = sorted(keep, key=frames.index)[-max_frames:]
    lines = ["Traceback (most relevant calls):\n"] + traceback.format_list(keep)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


# ---------------------------------------------------------------------------------------------
# Sandbox policy, Triton cache, environment.
# ---------------------------------------------------------------------------------------------

def python_read_paths(extra_modules=()):
    """Folders the interpreter reads after the sandbox is on: its prefixes, site-packages and
    every sys.path entry, and the folders of the given modules (torch, triton)."""
    paths = []
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]:
        if p and os.path.isabs(p) and os.path.exists(p):
            paths.append(os.path.realpath(p))
    for m in extra_modules:
        f = getattr(m, "__file__", None)
        if f:
            paths.append(os.path.realpath(os.path.dirname(f)))
    out = []
    for p in paths:
        if p not in out:
            out.append(p)
    return out


def extend_policy(policy, read_paths):
    """A copy of the harness's sandbox policy with read-only paths added (never write paths: the
    candidate still writes only in its scratch folder). None stays None (no sandbox asked)."""
    if policy is None:
        return None
    if not isinstance(policy, dict):
        raise ProtocolError("the sandbox policy is not an object")
    out = dict(policy)
    have = list(out.get("read_paths", []))
    for p in read_paths:
        if p not in have:
            have.append(p)
    out["read_paths"] = have
    return out


def compiled_kernels(cache_dir):
    """Names of the kernels Triton compiled into cache_dir: <key>/<name>.json with a "name" and a
    <key>/<name>.cubin beside it (the harness reads the same, src/gpu/harness/kernel_provenance.cc)."""
    names = []
    try:
        keys = sorted(os.listdir(cache_dir))
    except OSError:
        return names
    for key in keys:
        folder = os.path.join(cache_dir, key)
        if not os.path.isdir(folder):
            continue
        for entry in sorted(os.listdir(folder)):
            if not entry.endswith(".json") or entry.startswith("__grp__"):
                continue
            if not os.path.isfile(os.path.join(folder, entry[:-5] + ".cubin")):
                continue
            try:
                with open(os.path.join(folder, entry), encoding="utf-8") as f:
                    name = json.load(f).get("name")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(name, str) and name and name not in names:
                names.append(name)
    return names


# Triton settings that would let the candidate's run reach outside its scratch folder or the
# network, replace compiled code, or run kernels on the CPU (TRITON_INTERPRET): removed before
# Triton is configured.
UNSAFE_TRITON_ENV = ("TRITON_INTERPRET", "TRITON_REMOTE_CACHE_BACKEND", "TRITON_CACHE_MANAGER",
                     "TRITON_KERNEL_OVERRIDE", "TRITON_OVERRIDE_DIR", "TRITON_KERNEL_DUMP", "TRITON_DUMP_DIR",
                     "MLIR_ENABLE_DUMP", "LLVM_IR_ENABLE_DUMP", "TRITON_ALWAYS_COMPILE")


# What may stay of the host's Triton settings: where its tools are. Everything else that changes how
# Triton compiles (fusion, precision, line info, overrides, dumps, caches) is removed, and line info
# is off, in the capture and in the trusted recompile alike, so that both compile the same cubins
# from the same source (line info would also carry the file's path into them).
KEPT_TRITON_ENV = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH",
                   "TRITON_LIBCUDA_PATH")


def scrub_triton_environment(env):
    """Removes every TRITON_*, MLIR_* and LLVM_* variable but KEPT_TRITON_ENV from `env` (a mutable
    mapping such as os.environ) and sets TRITON_DISABLE_LINE_INFO=1. Returns what it removed."""
    removed = [k for k in list(env) if (k.startswith(("TRITON_", "MLIR_", "LLVM_")) and k not in KEPT_TRITON_ENV)]
    for k in removed:
        del env[k]
    env["TRITON_DISABLE_LINE_INFO"] = "1"
    return removed


def triton_environment(scratch, libcuda_dir=None):
    """The environment changes for Triton in a runner: (to_set, to_unset). The kernel cache is set
    later (after Triton's own driver module is built in DRIVER_CACHE_FOLDER)."""
    to_set = {"TRITON_HOME": os.path.join(scratch, "triton-home"),
              "TRITON_CACHE_DIR": os.path.join(scratch, DRIVER_CACHE_FOLDER)}
    if libcuda_dir:
        to_set["TRITON_LIBCUDA_PATH"] = libcuda_dir  # otherwise Triton runs /sbin/ldconfig -p
    return to_set, list(UNSAFE_TRITON_ENV)


def libcuda_dir_from_maps(maps_text):
    """The folder of the libcuda.so.1 mapped into this process (after CUDA initialised)."""
    for line in maps_text.splitlines():
        path = line.split()[-1] if line.split() else ""
        base = os.path.basename(path)
        if base.startswith("libcuda.so"):
            return os.path.dirname(path)
    return None


# ---------------------------------------------------------------------------------------------
# DLPack: the second way to hand torch a raw device pointer, used when torch cannot read
# __cuda_array_interface__ (it parses the type string with numpy, which may be missing).
# ---------------------------------------------------------------------------------------------

def _dlpack_types():
    import ctypes

    class DLDevice(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DLDataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                    ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                    ("byte_offset", ctypes.c_uint64)]

    deleter_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

    class DLManagedTensor(ctypes.Structure):
        _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", deleter_type)]

    return DLManagedTensor, deleter_type


_DLPACK_ALIVE = {}  # id -> the ctypes objects torch points into, until its deleter runs
_DLPACK_NAME = b"dltensor"
_DLPACK_CUDA = 2    # kDLCUDA


def dlpack_capsule(ptr, shape, dtype, device):
    """A "dltensor" PyCapsule over a contiguous device buffer (torch.utils.dlpack.from_dlpack takes
    it), kept alive until the consumer calls the deleter. Only dtypes DLPack names (DLPACK_CODES)."""
    import ctypes
    if dtype not in DLPACK_CODES:
        raise ProtocolError(f"dtype {dtype} has no DLPack code")
    managed_type, deleter_type = _dlpack_types()
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*contiguous_strides(shape))
    managed = managed_type()
    t = managed.dl_tensor
    t.data = ctypes.c_void_p(int(ptr))
    t.device.device_type, t.device.device_id = _DLPACK_CUDA, int(device)
    t.ndim = ndim
    t.dtype.code, t.dtype.bits = DLPACK_CODES[dtype]
    t.dtype.lanes = 1
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    key = id(managed)

    def release(_address, key=key):
        _DLPACK_ALIVE.pop(key, None)

    callback = deleter_type(release)
    managed.deleter = callback
    managed.manager_ctx = None
    _DLPACK_ALIVE[key] = (managed, shape_arr, strides_arr, callback)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new_capsule(ctypes.addressof(managed), _DLPACK_NAME, None)
