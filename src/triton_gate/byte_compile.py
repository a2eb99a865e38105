#!/usr/bin/env python3
"""The "build" of a Triton candidate: byte-compile kernel.py without importing or running it.

A Triton candidate has no native build: Triton compiles its kernels on the GPU host at run time.
What can be established before that is that the file is a valid Python module for this
interpreter: `compile()` turns it into bytecode (the step `py_compile` performs), which also finds
what `ast.parse` accepts but the compiler refuses (`return` outside a function, a `nonlocal`
without a binding, `await` outside `async`, too many nested blocks). `compile()` never imports
modules and never executes the code.

Confinement: the limits below are set before the candidate's file is read, so even a pathological
file cannot take the machine's memory, CPU or disk: address space 4 GiB, 30 s of CPU, files of at
most 1 MiB (the answer fits when stdout is a file; compile() writes none), 32 descriptors, no core
dump. The caller runs this with `python3 -I -B` (isolated mode, no bytecode files written), an
empty working folder and a wall-clock timeout.

Prints one JSON object: {"ok": true, "python": "3.12.3", "code_objects": N} or
{"ok": false, "line", "col", "kind", "message"}. Exit status: 0 compiled, 1 the candidate does not
compile, 2 bad invocation or unreadable file. Standard library only.
"""

from __future__ import annotations

import json
import platform
import sys

MAX_BYTES_DEFAULT = 512 * 1024  # the gates' bound


def confine():
    """Resource limits for this process (best effort where the platform has no `resource`)."""
    try:
        import resource
    except ImportError:  # not Linux: nothing to set; the caller's timeout still applies
        return
    limits = [("RLIMIT_AS", 4 << 30), ("RLIMIT_CPU", 30), ("RLIMIT_FSIZE", 1 << 20), ("RLIMIT_NOFILE", 32),
              ("RLIMIT_CORE", 0)]
    for name, value in limits:
        which = getattr(resource, name, None)
        if which is None:
            continue
        soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


def count_code_objects(code):
    """The module and every function, class body and comprehension compiled from it."""
    total = 1
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            total += count_code_objects(const)
    return total


def byte_compile(source: bytes, filename: str = "kernel.py"):
    """Returns (True, info) or (False, error) for the candidate's bytes; never raises."""
    try:
        code = compile(source, filename, "exec", dont_inherit=True, optimize=0)
    except SyntaxError as e:  # IndentationError and TabError are SyntaxErrors
        return False, {"ok": False, "line": e.lineno or 0, "col": e.offset or 0, "kind": type(e).__name__,
                       "message": str(e.msg)}
    except (ValueError, RecursionError, MemoryError, OverflowError) as e:
        message = "nesting too deep" if isinstance(e, RecursionError) else (str(e).splitlines() or [""])[0]
        return False, {"ok": False, "line": 0, "col": 0, "kind": type(e).__name__, "message": message}
    return True, {"ok": True, "python": platform.python_version(), "code_objects": count_code_objects(code)}


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    max_bytes = MAX_BYTES_DEFAULT
    if len(args) == 3 and args[0] == "--max-bytes":
        try:
            max_bytes = int(args[1])
        except ValueError:
            args = []
        args = args[2:]
    if len(args) != 1:
        print("usage: byte_compile.py [--max-bytes N] kernel.py", file=sys.stderr)
        return 2
    confine()
    try:
        with open(args[0], "rb") as f:
            source = f.read(max_bytes + 1)
    except OSError as e:
        print(f"byte_compile: cannot read {args[0]}: {e.strerror or e}", file=sys.stderr)
        return 2
    if len(source) > max_bytes:
        print(json.dumps({"ok": False, "line": 0, "col": 0, "kind": "size",
                          "message": f"the file is larger than {max_bytes} bytes"}))
        return 1
    ok, info = byte_compile(source)
    print(json.dumps(info))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
