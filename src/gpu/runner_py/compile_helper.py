"""Runs ptxas (and the C compiler for Triton's launcher) for Triton while the runner itself may start no program.

Triton compiles a kernel on its first launch: Python to PTX in-process, then PTX to a cubin by
starting NVIDIA's `ptxas` (subprocess). The runner process is sandboxed before the candidate is
imported (docs/sandbox.md), and that sandbox ends the process on execve, fork and vfork. So the
runner forks this helper first, while it is still single-threaded and before any candidate code
exists, and hands Triton a stand-in for the `subprocess` module (SubprocessProxy) that sends each
command to the helper instead of starting it:

  * the helper runs only the programs the trusted bootstrap named before the sandbox went on
    (Triton's ptxas, resolved to real paths), with no shell;
  * every argument must be an option (no path in its value) or a path inside the runner's scratch
    folder (where Triton writes its .ptx and .cubin files);
  * the C compiler (Triton 3.x builds a small launcher module for each kernel signature the first
    time it launches one) runs only Triton's own command shape: one source file and the output in
    the scratch folder, the options -O3 -shared -fPIC -Wno-psabi -std=c++17 -o, libraries by name
    (-lNAME), and include/library folders (-I, -L) among the read-only folders the bootstrap named
    (Triton's package, Python's headers, libcuda's folder) or in scratch. Every other option — a
    plugin, a wrapper, a response file, another driver — is refused, so nothing the candidate
    writes can make the compiler run code outside the sandbox;
  * it serves the warm-up only: after the runner's first call the bootstrap closes the socket
    ("seals" it), the helper exits, and a later compile attempt fails with a message that says
    compilation must happen in the warm-up.

The helper is trusted code outside the sandbox (it is the runner's child, in the runner's process
group: the harness kills both). What it accepts is this module's pure function validate_command,
tested in tests/runner_py without torch or Triton.
"""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import subprocess as _real_subprocess
import sys
import types

MAX_MESSAGE = 64 << 20
RUN_TIMEOUT_S = 600
MAX_OUTPUT = 16 << 20
_OPTION = re.compile(r"^--?[A-Za-z][A-Za-z0-9_-]*(=[A-Za-z0-9_.,:+-]*)?$")
_PLAIN = re.compile(r"^[A-Za-z0-9_.,:+-]+$")


class CompileHelperError(OSError):
    """A command the helper refused, or a helper that is gone (sealed after the warm-up)."""


C_COMPILER_FLAGS = {"-O3", "-shared", "-fPIC", "-Wno-psabi", "-std=c++17"}
_LIBRARY = re.compile(r"^-l:?[A-Za-z0-9_.+-]+$")  # -lcuda, or by file name as Triton 3.6 asks: -l:libcuda.so.1


def _inside(path, folder):
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return real == root or real.startswith(root + os.sep)


def validate_c_compile(argv, scratch, read_dirs):
    """None when argv is Triton's launcher build (see the module's docstring), else the reason."""
    sources, expect_output = 0, False
    for arg in argv[1:]:
        if expect_output:
            if not os.path.isabs(arg) or not _inside(arg, scratch):
                return f"the compiler's output {arg!r} must be inside the scratch folder"
            expect_output = False
            continue
        if arg == "-o":
            expect_output = True
            continue
        if arg in C_COMPILER_FLAGS or _LIBRARY.match(arg):
            continue
        if arg.startswith(("-I", "-L")) and len(arg) > 2:
            folder = arg[2:]
            if os.path.isabs(folder) and (_inside(folder, scratch) or any(_inside(folder, d) for d in read_dirs)):
                continue
            return f"folder option {arg!r} names a folder the compiler may not use"
        if arg.startswith("-"):
            return f"compiler option {arg!r} is not Triton's launcher build"
        if os.path.isabs(arg) and _inside(arg, scratch) and arg.endswith((".c", ".cpp", ".cc")):
            sources += 1
            continue
        return f"argument {arg!r} must be a source file inside the scratch folder"
    if expect_output or sources != 1:
        return "the compiler builds exactly one source file from the scratch folder into it"
    return None


def validate_command(argv, programs, scratch, c_compilers=(), read_dirs=()):
    """None when the helper may run argv, else the reason. programs: allowed real paths of ptxas;
    c_compilers: allowed real paths of the C compiler (Triton's launcher build); read_dirs: the
    folders it may read headers and libraries from; scratch: the runner's scratch folder (real path)."""
    if not isinstance(argv, (list, tuple)) or not argv or not all(isinstance(a, str) for a in argv):
        return "the command must be a non-empty list of strings (no shell)"
    if any("\0" in a for a in argv):
        return "an argument holds a NUL byte"
    program = os.path.realpath(argv[0])
    if program in c_compilers:
        return validate_c_compile(argv, scratch, read_dirs)
    if program not in programs:
        allowed = sorted(os.path.basename(p) for p in set(programs) | set(c_compilers))
        return f"only {', '.join(allowed) or 'nothing'} may run, not {argv[0]}"
    root = os.path.realpath(scratch)
    for arg in argv[1:]:
        if arg.startswith("-"):
            if not _OPTION.match(arg):
                return f"option {arg!r} is not allowed (options may not carry paths)"
            continue
        if _PLAIN.match(arg) and ".." not in arg:
            continue  # a number, or a file name relative to the scratch folder (the working folder)
        if not os.path.isabs(arg):
            return f"argument {arg!r} must be a plain word or an absolute path inside the scratch folder"
        real = os.path.realpath(arg)
        if real != root and not real.startswith(root + os.sep):
            return f"path {arg!r} is outside the runner's scratch folder"
    return None


def _send(sock, obj):
    data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
    sock.sendall(len(data).to_bytes(8, "little") + data)


def _recv(sock):
    head = _recv_exact(sock, 8)
    if head is None:
        return None
    size = int.from_bytes(head, "little")
    if size > MAX_MESSAGE:
        return None
    body = _recv_exact(sock, size)
    return None if body is None else json.loads(body.decode("utf-8"))


def _recv_exact(sock, n):
    chunks, got = [], 0
    while got < n:
        try:
            chunk = sock.recv(min(n - got, 1 << 20))
        except (ConnectionResetError, BrokenPipeError):
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def serve(sock, scratch):
    """The helper's loop: one 'configure' (the allowed programs, from the trusted parent before the
    sandbox), then 'run' requests until the socket closes."""
    programs = None
    c_compilers, read_dirs = set(), []
    while True:
        request = _recv(sock)
        if request is None:
            return 0
        kind = request.get("type")
        if kind == "configure" and programs is None:
            programs = {os.path.realpath(p) for p in request.get("programs", []) if isinstance(p, str)}
            c_compilers = {os.path.realpath(p) for p in request.get("c_compilers", []) if isinstance(p, str)}
            read_dirs = [os.path.realpath(p) for p in request.get("read_dirs", []) if isinstance(p, str)]
            _send(sock, {"ok": True})
            continue
        if kind != "run" or programs is None:
            _send(sock, {"ok": False, "error": "the compile helper expects one configure, then run requests"})
            continue
        argv = request.get("argv")
        problem = validate_command(argv, programs, scratch, c_compilers, read_dirs)
        if problem:
            _send(sock, {"ok": False, "error": problem})
            continue
        try:
            done = _real_subprocess.run(argv, cwd=scratch, stdin=_real_subprocess.DEVNULL, capture_output=True,
                                        timeout=RUN_TIMEOUT_S, close_fds=True)
            _send(sock, {"ok": True, "returncode": done.returncode,
                         "stdout": base64.b64encode(done.stdout[:MAX_OUTPUT]).decode("ascii"),
                         "stderr": base64.b64encode(done.stderr[:MAX_OUTPUT]).decode("ascii")})
        except _real_subprocess.TimeoutExpired:
            _send(sock, {"ok": False, "error": f"{os.path.basename(argv[0])} ran longer than {RUN_TIMEOUT_S} s"})
        except OSError as e:
            _send(sock, {"ok": False, "error": f"{argv[0]}: {e.strerror or e}"})


class HelperClient:
    """The runner's end: start() forks the helper; configure() (trusted, before the sandbox);
    run() (during the warm-up); seal() (after it)."""

    def __init__(self, sock, pid):
        self.sock, self.pid = sock, pid
        self.sealed_reason = None

    @classmethod
    def start(cls, scratch):
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:  # the helper
            parent.close()
            code = 1
            try:
                code = serve(child, scratch)
            finally:
                os._exit(code)
        child.close()
        return cls(parent, pid)

    def configure(self, programs, c_compilers=(), read_dirs=()):
        _send(self.sock, {"type": "configure", "programs": list(programs), "c_compilers": list(c_compilers),
                          "read_dirs": list(read_dirs)})
        answer = _recv(self.sock)
        if not answer or not answer.get("ok"):
            raise CompileHelperError("the compile helper did not accept its configuration")

    def run(self, argv):
        """(returncode, stdout bytes, stderr bytes), or CompileHelperError."""
        if self.sealed_reason:
            raise CompileHelperError(self.sealed_reason)
        try:
            _send(self.sock, {"type": "run", "argv": [str(a) for a in argv]})
            answer = _recv(self.sock)
        except OSError as e:
            raise CompileHelperError(f"the compile helper is gone: {e}") from None
        if answer is None:
            raise CompileHelperError("the compile helper is gone")
        if not answer.get("ok"):
            raise CompileHelperError("the runner refused to start a program: " + str(answer.get("error")))
        return (int(answer["returncode"]), base64.b64decode(answer["stdout"]), base64.b64decode(answer["stderr"]))

    def seal(self, reason):
        """No more programs: closes the socket (the helper exits) and reaps it."""
        if self.sealed_reason:
            return
        self.sealed_reason = reason
        try:
            self.sock.close()
        finally:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass


def _write_stream(target, data, merged_into=None):
    """Delivers captured output the way subprocess would have: to a file object's descriptor
    (Triton passes a temporary file opened read-only in Python but read-write underneath), to our
    own stdout/stderr for None, nowhere for DEVNULL."""
    if target is None:
        stream = sys.stderr if merged_into == "stderr" else sys.stdout
        stream.flush()
        os.write(stream.fileno(), data)
    elif target == _real_subprocess.DEVNULL:
        return
    elif isinstance(target, int) and target >= 0:
        os.write(target, data)
    elif hasattr(target, "fileno"):
        if hasattr(target, "flush"):
            target.flush()
        os.write(target.fileno(), data)


def make_subprocess_proxy(client):
    """A stand-in for the subprocess module whose run/check_output/check_call/call send the command
    to the compile helper; Popen and the rest of process creation are refused. Constants, exception
    classes and CompletedProcess are the real module's."""
    proxy = types.ModuleType("subprocess", "ptxbench: process creation through the Triton runner's compile helper")
    for name in ("PIPE", "STDOUT", "DEVNULL", "CalledProcessError", "TimeoutExpired", "SubprocessError",
                 "CompletedProcess", "list2cmdline"):
        setattr(proxy, name, getattr(_real_subprocess, name))

    def run(args, *, stdin=None, input=None, stdout=None, stderr=None, capture_output=False, check=False,
            timeout=None, shell=False, text=None, universal_newlines=None, encoding=None, errors=None, **_ignored):
        if shell or isinstance(args, (str, bytes)):
            raise CompileHelperError("the runner runs no shell commands (a list of arguments is required)")
        if input is not None or stdin not in (None, _real_subprocess.DEVNULL):
            raise CompileHelperError("the compile helper gives programs no input")
        code, out, err = client.run([os.fspath(a) for a in args])
        if capture_output:
            stdout = stderr = _real_subprocess.PIPE
        as_text = bool(text or universal_newlines or encoding or errors)
        decode = (lambda b: b.decode(encoding or "utf-8", errors or "replace")) if as_text else (lambda b: b)
        got_out = got_err = None
        if stderr == _real_subprocess.STDOUT:
            out, err = out + err, b""
        if stdout == _real_subprocess.PIPE:
            got_out = decode(out)
        else:
            _write_stream(stdout, out, "stdout")
        if stderr == _real_subprocess.PIPE:
            got_err = decode(err)
        elif stderr != _real_subprocess.STDOUT:
            _write_stream(stderr, err, "stderr")
        done = _real_subprocess.CompletedProcess(list(args), code, got_out, got_err)
        if check:
            done.check_returncode()
        return done

    def check_output(args, **kwargs):
        kwargs.setdefault("stdout", _real_subprocess.PIPE)
        return run(args, check=True, **kwargs).stdout

    def check_call(args, **kwargs):
        run(args, check=True, **kwargs)
        return 0

    def call(args, **kwargs):
        return run(args, **kwargs).returncode

    def refused(*_args, **_kwargs):
        raise CompileHelperError("the runner starts no processes (only ptxas, through run/check_output)")

    proxy.run, proxy.check_output, proxy.check_call, proxy.call = run, check_output, check_call, call
    proxy.Popen = proxy.getoutput = proxy.getstatusoutput = refused
    proxy.__ptxbench_proxy__ = True
    return proxy


def install_proxy(proxy, modules=None):
    """Replaces the subprocess module for everything loaded (every module holding the real one as
    `subprocess`) and for later imports (sys.modules). Returns the names of the modules patched."""
    modules = sys.modules if modules is None else modules
    patched = []
    for name, module in list(modules.items()):
        if module is None or name == "subprocess" or name == __name__:
            continue
        try:
            if getattr(module, "subprocess", None) is _real_subprocess:
                module.subprocess = proxy
                patched.append(name)
        except Exception:  # an exotic module object that refuses attribute access
            continue
    modules["subprocess"] = proxy
    return patched
