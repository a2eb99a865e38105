#!/usr/bin/env python3
"""The trusted recompile of a Triton candidate's kernels (docs/trusted-timing.md, "Triton
candidates"). The harness starts it after the candidate's capture, in a fresh process that never
imports kernel.py:

    python3 -I -B triton_recompile.py --source kernel.py --kernels kernels.json --out DIR \
        --helper libptxbench_runner_py.so --sandbox policy.json      (or --no-sandbox, diagnosis only)

It reads kernel.py as text and keeps only what cannot run Python when executed (reduce_source) —
imports of Triton's modules and math, top-level @triton.jit functions whose defaults, annotations
and decorator arguments are constant, and top-level constants whose values are constant expressions
— at the same line numbers, and loads that as the module the capture imported
(`ptxbench_candidate`). Then, for each kernel the capture says Triton compiled, it compiles that
@triton.jit function again with Triton's own record of the compilation (`specialization_data`:
signature, constants, attributes), but with compile options limited to the ones a kernel
legitimately chooses (warps, stages, CTAs, registers, fusion, ...): anything else (IR or PTX
overrides, extern libraries, ptxas options) stays at Triton's default, so a cubin that depends on it
will not be reproduced. The harness compares each cubin's sha256 with the captured one: only an
identical cubin is replayed.

Triton's compiler still runs on candidate-written kernel source, and evaluates parts of it in
Python while it compiles, so the process is confined like the capture (docs/sandbox.md, "The
Triton runner"): before the reduced source is loaded it forks the runner's compile helper (the only
way to start ptxas afterwards), starts Triton and compiles one trivial kernel (LLVM's signal
handlers), then applies the harness's policy through libptxbench_runner_py.so — writes only in DIR,
CPU-time and memory limits. A sandbox that cannot be applied is an infrastructure failure, never a
run without it.

kernels.json: {"kernels": [{"id": ..., "jit": "<function name>", "specialization_data": "<Triton's JSON>"}]}
policy.json: {"sandbox": <the policy, sandbox/sandbox_policy.h's JSON>}
DIR/result.json: {"format": "ptxbench.triton-recompile/1", "triton": "<version>", "sandbox": <report>,
                  "kernels": [{"id", "name", "sha256", "cubin": "<file in DIR>"}]}  or {"error": "...", ...}
Exit code: 0 done; 2 the candidate's source does not recompile (its problem: the verdict says why);
3 anything else (infrastructure, a sandbox that could not be applied included).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import compile_helper  # noqa: E402  (beside this file: the runner's helper, which alone starts ptxas)
import runner_protocol as rp  # noqa: E402  (the one Triton environment rule)

FORMAT = "ptxbench.triton-recompile/1"
MODULE_NAME = "ptxbench_candidate"  # the name the capture imported kernel.py under (it is in the cubin's hash)
# Compile options a kernel chooses for itself; everything else takes Triton's default.
ALLOWED_OPTIONS = {"num_warps", "num_ctas", "num_stages", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                   "launch_pdl", "debug", "sanitize_overflow", "default_dot_input_precision",
                   "max_num_imprecise_acc_default", "num_buffers_warp_spec", "num_consumer_groups",
                   "reg_dec_producer", "reg_inc_consumer", "cluster_dims"}
DROPPED_DECORATORS = {"autotune", "heuristics"}  # choose configurations at launch; the capture recorded the choice


class SourceProblem(Exception):
    """The candidate's source cannot be recompiled as captured (exit code 2)."""


# ---- the source, reduced to what cannot run Python ----------------------------------------------
#
# Executing the reduced module runs imports of Triton's own modules (an explicit list), `def`s of
# @triton.jit functions (whose bodies Triton compiles, never runs as Python) and constant
# expressions: literals, operators, names bound by earlier kept statements, attributes without a
# leading underscore, and calls of a few functions that only compute (CONSTANT_CALLS, math's).
# Every value is built from literals by trusted code, so no candidate Python can run. Everything
# else is blanked, and a kernel that needs it fails to recompile with a message naming what was
# left out and why.

# Modules whose import runs only Triton's or Python's own code.
ALLOWED_IMPORTS = {"math", "triton", "triton.language", "triton.language.math", "triton.language.extra",
                   "triton.language.extra.libdevice", "triton.language.extra.cuda",
                   "triton.language.extra.cuda.libdevice"}
# Functions a constant expression may call (fully qualified; any function of `math` too): they
# compute a value from their arguments and nothing else.
CONSTANT_CALLS = {"triton.language.constexpr", "triton.cdiv", "triton.next_power_of_2"}
CONSTANT_BUILTINS = {"min", "max", "abs", "int", "float", "bool", "round"}
JIT_DECORATORS = {"triton.jit"}
# triton.jit's arguments that are data (`repr` and `launch_metadata` are functions Triton would call).
JIT_KEYWORDS = {"do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline", "version"}
CONSTEXPR_FUNCTION_DECORATORS = {"triton.constexpr_function", "triton.language.constexpr_function",
                                 "triton.language.core.constexpr_function"}
CONSTEXPR_FUNCTION_WHY = ("a triton.constexpr_function: its body is Python that runs while Triton compiles, and the "
                          "recompile runs none of kernel.py's Python (compute the value in a @triton.jit function, "
                          "or pass it as a tl.constexpr argument)")


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Scope:
    """What the kept statements so far bind: module aliases (name → qualified module or module
    attribute, from imports) and values (constants and @triton.jit functions)."""

    def __init__(self):
        self.aliases = {}
        self.values = set()

    def qualified(self, node):
        """The fully qualified name a dotted expression refers to through an import ("tl.constexpr"
        → "triton.language.constexpr"), a bare builtin's own name, or None."""
        name = _dotted(node)
        if name is None:
            return None
        first, _, rest = name.partition(".")
        if first in self.aliases:
            return self.aliases[first] + ("." + rest if rest else "")
        if first in self.values:
            return None
        return name if not rest and name in CONSTANT_BUILTINS else None

    def bind_value(self, name):
        self.aliases.pop(name, None)
        self.values.add(name)

    def bind_alias(self, name, qualified):
        self.values.discard(name)
        self.aliases[name] = qualified


def constant_problem(node, scope):
    """None when `node` is a constant expression over what `scope` binds, else why not (a few words)."""
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, (ast.Tuple, ast.List)):
        return next((p for p in (constant_problem(e, scope) for e in node.elts) if p), None)
    if isinstance(node, ast.UnaryOp):
        return constant_problem(node.operand, scope)
    if isinstance(node, ast.BinOp):
        return constant_problem(node.left, scope) or constant_problem(node.right, scope)
    if isinstance(node, ast.BoolOp):
        return next((p for p in (constant_problem(v, scope) for v in node.values) if p), None)
    if isinstance(node, ast.Compare):
        return next((p for p in (constant_problem(v, scope) for v in [node.left, *node.comparators]) if p), None)
    if isinstance(node, ast.IfExp):
        return next((p for p in (constant_problem(v, scope) for v in (node.test, node.body, node.orelse)) if p), None)
    if isinstance(node, ast.Name):
        if node.id in scope.values or node.id in scope.aliases:
            return None
        return f"it reads {node.id}, which is not a constant or import the recompile keeps"
    if isinstance(node, ast.Subscript):  # SIZES[0]
        return constant_problem(node.value, scope) or constant_problem(node.slice, scope)
    if isinstance(node, ast.Slice):
        return next((p for p in (constant_problem(v, scope) for v in (node.lower, node.upper, node.step) if v) if p),
                    None)
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("_"):
            return f"it reads the attribute {node.attr}"
        return constant_problem(node.value, scope)
    if isinstance(node, ast.Call):
        target = scope.qualified(node.func)
        allowed = target is not None and (target in CONSTANT_CALLS or target in CONSTANT_BUILTINS
                                          or (target.startswith("math.") and target.count(".") == 1))
        if not allowed:
            return f"it calls {_dotted(node.func) or 'an expression'}"
        # No keywords: min/max would call a `key=` function, the one way a value could be called here.
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return f"it passes {_dotted(node.func)} keyword or unpacked arguments"
        return next((p for p in (constant_problem(a, scope) for a in node.args) if p), None)
    return f"it is a {type(node).__name__} expression"


def _plain_annotation(node):
    return node is None or isinstance(node, ast.Constant) or _dotted(node) is not None


def _decorator_kind(node, scope):
    """'jit', 'jit_arguments' (triton.jit with arguments other than constant data), 'dropped'
    (autotune/heuristics), 'constexpr_function', or None for anything else."""
    target = node.func if isinstance(node, ast.Call) else node
    name = scope.qualified(target) or ""
    if name in JIT_DECORATORS:
        if isinstance(node, ast.Call):
            if node.args or any(k.arg not in JIT_KEYWORDS or constant_problem(k.value, scope) for k in node.keywords):
                return "jit_arguments"
        return "jit"
    if name in {f"triton.{d}" for d in DROPPED_DECORATORS}:
        return "dropped"
    if name in CONSTEXPR_FUNCTION_DECORATORS:
        return "constexpr_function"
    return None


def _global_reads(fn):
    """The names a function's body reads that it does not bind itself (parameters, assignments,
    loop variables): the module-level names it needs."""
    args = fn.args
    local = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    local.update(a.arg for a in (args.vararg, args.kwarg) if a)
    reads = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else local).add(node.id)
    return reads - local


class Reduction:
    """kernel.py reduced: `text` (line for line, every line that is not kept blank), `left_out`
    ({@triton.jit function: why it cannot be recompiled}), `dropped` ({module-level name: why its
    definition was left out}) and `reads` ({@triton.jit function: module-level names it reads})."""

    def __init__(self, text, left_out, dropped, reads):
        self.text, self.left_out, self.dropped, self.reads = text, left_out, dropped, reads

    def hints(self, kernel):
        """Why names a kernel reads (directly or through the @triton.jit functions it calls) are
        missing from the reduced module, as one phrase; "" when none is."""
        seen, todo, found = set(), [kernel], []
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for read in sorted(self.reads.get(name, ())):
                if read in self.reads:
                    todo.append(read)
                elif read in self.dropped:
                    found.append(f"{read} is {self.dropped[read]}")
        return "; ".join(dict.fromkeys(found))


def reduce_source(text):
    """kernel.py reduced to Triton imports, @triton.jit functions and constant expressions, line for
    line (every other line blank). Returns a Reduction."""
    tree = ast.parse(text)
    lines = text.splitlines()
    keep = [False] * len(lines)
    left_out, dropped, reads = {}, {}, {}
    scope = _Scope()
    python_helpers = {}  # constexpr_function name -> why

    def mark(first, last, value=True):
        for i in range(first - 1, last):
            keep[i] = value

    def drop(names, why):
        for n in names:
            dropped[n] = why
            scope.values.discard(n)
            scope.aliases.pop(n, None)

    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            mark(node.lineno, node.end_lineno)  # a docstring
        elif isinstance(node, ast.Import):
            names = [(a.asname or a.name.split(".")[0], a.asname and a.name or a.name.split(".")[0]) for a in node.names]
            if all(a.name in ALLOWED_IMPORTS for a in node.names):
                mark(node.lineno, node.end_lineno)
                for bound, qualified in names:
                    scope.bind_alias(bound, qualified)
            else:
                module = next(a.name for a in node.names if a.name not in ALLOWED_IMPORTS)
                drop([b for b, _ in names], f"imported from {module}, which the recompile does not import")
        elif isinstance(node, ast.ImportFrom):
            names = [a.asname or a.name for a in node.names]
            if node.module == "__future__":
                mark(node.lineno, node.end_lineno)
            elif node.level == 0 and node.module in ALLOWED_IMPORTS:
                mark(node.lineno, node.end_lineno)
                for a in node.names:
                    if a.name != "*":
                        scope.bind_alias(a.asname or a.name, f"{node.module}.{a.name}")
            else:
                drop(names, f"imported from {'.' * node.level}{node.module or ''}, which the recompile does not import")
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            why = None
            if node.value is None or len(names) != len(targets):
                why = "assigned in a way the recompile does not evaluate"
            elif any(n in scope.aliases or n in CONSTANT_BUILTINS for n in names):
                why = "a name of an import or of a builtin, rebound"
            elif isinstance(node, ast.AnnAssign) and not _plain_annotation(node.annotation):
                why = "annotated with an expression"
            elif isinstance(node, ast.AugAssign) and names[0] not in scope.values:
                why = "updated, but not first assigned a constant"
            else:
                problem = constant_problem(node.value, scope)
                why = f"a module-level value that is not a constant expression ({problem})" if problem else None
            if why:
                drop(names, why)
            else:
                mark(node.lineno, node.end_lineno)
                for n in names:
                    scope.bind_value(n)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kinds = [_decorator_kind(d, scope) for d in node.decorator_list]
            if "constexpr_function" in kinds:
                python_helpers[node.name] = CONSTEXPR_FUNCTION_WHY
                drop([node.name], CONSTEXPR_FUNCTION_WHY)
                continue
            if isinstance(node, ast.ClassDef) or not {"jit", "jit_arguments"} & set(kinds):
                drop([node.name], "Python (a class or a function that is not @triton.jit), which the recompile "
                                  "does not run")
                continue
            why = None
            if None in kinds:
                why = "it has a decorator other than triton.jit, triton.autotune or triton.heuristics"
            if "jit_arguments" in kinds:
                why = f"triton.jit's arguments must be constant data ({', '.join(sorted(JIT_KEYWORDS))})"
            args = node.args
            defaults = args.defaults + [d for d in args.kw_defaults if d is not None]
            if any(constant_problem(d, scope) for d in defaults):
                why = "a parameter's default is not a constant expression"
            every = args.posonlyargs + args.args + args.kwonlyargs + ([args.vararg] if args.vararg else []) + (
                [args.kwarg] if args.kwarg else [])
            if not all(_plain_annotation(a.annotation) for a in every) or not _plain_annotation(node.returns):
                why = "an annotation is not a name"
            if isinstance(node, ast.AsyncFunctionDef):
                why = "it is an async function"
            if why:
                left_out[node.name] = why
                drop([node.name], f"a @triton.jit function left out ({why})")
                continue
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            mark(first, node.end_lineno)
            for d, kind in zip(node.decorator_list, kinds):
                if kind == "dropped":
                    mark(d.lineno, d.end_lineno, False)
            mark(node.lineno, node.end_lineno)  # the def and its body stay even where a dropped decorator ended
            scope.bind_value(node.name)
            dropped.pop(node.name, None)
            reads[node.name] = _global_reads(node)
        else:
            bound = [t.id for t in ast.walk(node) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)]
            drop(bound, f"bound by a {type(node).__name__} statement, which the recompile does not run")
    # A kernel that calls a constexpr_function, itself or through the @triton.jit functions it calls,
    # would run Python while compiling: refused by name, before anything is compiled.
    for name in list(reads):
        path = _path_to_python_helper(reads, name, python_helpers)
        if path:
            through = f" (through {', '.join(path[:-1])})" if len(path) > 1 else ""
            left_out[name] = f"it calls {path[-1]}{through}, {python_helpers[path[-1]]}"
    text = "\n".join(line if keep[i] else "" for i, line in enumerate(lines)) + "\n"
    return Reduction(text, left_out, dropped, reads)


def _path_to_python_helper(reads, kernel, python_helpers):
    """The @triton.jit functions from `kernel` to a constexpr_function it calls (the helper last),
    breadth first; [] when it calls none."""
    seen, queue = {kernel}, [(kernel, [])]
    while queue:
        name, path = queue.pop(0)
        for read in sorted(reads.get(name, ())):
            if read in python_helpers:
                return path + [read]
            if read in reads and read not in seen:
                seen.add(read)
                queue.append((read, path + [read]))
    return []


def load_reduced(reduced, folder):
    """The reduced source as module MODULE_NAME, from a real file (Triton reads its functions' source)."""
    path = os.path.join(folder, "kernel.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(reduced)
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # a constant expression that raises (1 // 0): the source's problem
        raise SourceProblem(f"kernel.py, reduced to what the recompile keeps, does not load: "
                            f"{rp.exception_summary(e, path)}") from None
    return module


# ---- the recompile -------------------------------------------------------------------------------

def limited_specialization(data_text):
    """Triton's specialization data with the options limited to ALLOWED_OPTIONS."""
    data = json.loads(data_text)
    if not isinstance(data, dict) or not isinstance(data.get("options"), dict):
        raise SourceProblem("the capture's compile record is malformed")
    data["options"] = {k: v for k, v in data["options"].items() if k in ALLOWED_OPTIONS}
    return json.dumps(data)


def recompile(module, kernel, out_dir, index, reduction=None):
    from triton.runtime.jit import JITFunction

    name = kernel.get("jit", "")
    fn = getattr(module, name, None) if isinstance(name, str) and name.isidentifier() else None
    if not isinstance(fn, JITFunction):
        raise SourceProblem(f"kernel {name!r} is not a top-level @triton.jit function of kernel.py")
    try:
        compiled = fn.preload(limited_specialization(kernel.get("specialization_data", "")))
    except (SourceProblem, OSError):
        # OSError: a file the sandbox does not let Triton read or write, the compile helper gone or
        # refusing Triton's own ptxas command — the recompile's environment, not the candidate's source.
        raise
    except Exception as e:  # the source, as reduced, does not compile the way the capture said
        hints = reduction.hints(name) if reduction else ""
        raise SourceProblem(f"kernel {name} does not compile from kernel.py alone: {rp.exception_summary(e, '')}"
                            + (f" (left out of the recompile: {hints})" if hints else ""))
    cubin = bytes(compiled.asm["cubin"])
    file = f"r{index:03d}.cubin"
    with open(os.path.join(out_dir, file), "wb") as f:
        f.write(cubin)
    return {"id": kernel.get("id"), "name": str(compiled.metadata.name), "sha256": hashlib.sha256(cubin).hexdigest(),
            "cubin": file}


def write_result(out_dir, result):
    with open(os.path.join(out_dir, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)


# ---- the process: confined like the capture ------------------------------------------------------

USAGE = ("usage: triton_recompile.py --source kernel.py --kernels kernels.json --out DIR "
         "(--helper libptxbench_runner_py.so --sandbox policy.json | --no-sandbox)")


def parse_args(argv):
    """The options as a dict ("--no-sandbox": True when given), or None when they are malformed or
    say neither how to confine the process nor that it must not be."""
    args, i = {}, 0
    while i < len(argv):
        if argv[i] == "--no-sandbox":
            args["--no-sandbox"] = True
            i += 1
        elif argv[i] in ("--source", "--kernels", "--out", "--helper", "--sandbox") and i + 1 < len(argv):
            args[argv[i]] = argv[i + 1]
            i += 2
        else:
            return None
    if not all(args.get(k) for k in ("--source", "--kernels", "--out")):
        return None
    confined = bool(args.get("--sandbox")) and bool(args.get("--helper"))
    if confined == bool(args.get("--no-sandbox")) or (args.get("--sandbox") and not args.get("--helper")):
        return None  # exactly one of: a policy and the helper library, or --no-sandbox
    return args


def read_policy(path):
    """The harness's policy file: {"sandbox": <policy object>} (sandbox/sandbox_policy.h's JSON)."""
    with open(path, encoding="utf-8") as f:
        policy = json.load(f).get("sandbox")
    if not isinstance(policy, dict):
        raise ValueError(f"{path} holds no sandbox policy object")
    return policy


def set_up(work, policy, helper_path, helper_client):
    """Everything that starts a program or installs a signal handler, then the sandbox — the Triton
    runner's own steps in its order (ptxbench_triton_runner.py), before any candidate-derived source
    is loaded. Returns (sandbox report, triton module). Raises when any step fails."""
    import ptxbench_triton_runner as runner  # its pieces: the compiler's start-up, the helper library
    import torch
    import triton
    import triton.language  # noqa: F401

    torch.cuda.init()  # Triton asks the device for its target; nothing is allocated or launched
    runner.prepare_compiler(triton, work, os.path.join(work, "cache"))  # an empty kernel cache
    if policy is None:
        runner.warm_compile(triton)
        return {"applied": False, "reason": "the harness asked for no sandbox (--no-sandbox)"}, triton
    programs = runner.find_ptxas(triton)
    if not programs:
        raise RuntimeError("Triton's ptxas was not found (triton/backends/nvidia/bin/ptxas or TRITON_PTXAS_PATH)")
    helper_client.configure(programs)  # ptxas only: the recompile launches nothing, so no launcher build
    compile_helper.install_proxy(compile_helper.make_subprocess_proxy(helper_client))
    runner.warm_compile(triton)  # LLVM's one-time set-up (its SIGSYS handler) before the sandbox's own
    report = runner.Helper(helper_path).apply_sandbox(
        rp.extend_policy(policy, rp.python_read_paths([torch, triton]) + [HERE]))
    return report, triton


def main(argv):
    args = parse_args(argv)
    if args is None:
        print(USAGE, file=sys.stderr)
        return 3
    out_dir = os.path.realpath(args["--out"])
    os.makedirs(out_dir, exist_ok=True)
    rp.scrub_triton_environment(os.environ)
    work = tempfile.mkdtemp(prefix="ptxbench-recompile-", dir=out_dir)
    tempfile.tempdir = work  # Triton's .ptx/.cubin files: inside the only folder ptxas may use
    try:
        with open(args["--source"], encoding="utf-8") as f:
            text = f.read()
        with open(args["--kernels"], encoding="utf-8") as f:
            wanted = json.load(f).get("kernels", [])
        policy = None if args.get("--no-sandbox") else read_policy(args["--sandbox"])
    except (OSError, ValueError, AttributeError) as e:
        write_result(out_dir, {"format": FORMAT, "error": f"reading the inputs: {e}"})
        return 3
    # The compile helper first, while this process has one thread and nothing is imported: after the
    # sandbox it is the only way to start ptxas.
    helper_client = compile_helper.HelperClient.start(out_dir) if policy is not None else None
    try:
        report, triton = set_up(work, policy, args.get("--helper"), helper_client)
    except Exception as e:  # Triton or CUDA missing, the sandbox unavailable: never run unconfined instead
        write_result(out_dir, {"format": FORMAT, "error": f"the recompile could not be set up: "
                                                          f"{rp.exception_summary(e, '')}"})
        return 3
    status = 0
    try:
        reduction = reduce_source(text)
        module = load_reduced(reduction.text, work)
        results = []
        for i, k in enumerate(wanted):
            if k.get("jit") in reduction.left_out:
                raise SourceProblem(f"kernel {k.get('jit')} cannot be recompiled: {reduction.left_out[k.get('jit')]}")
            results.append(recompile(module, k, out_dir, i, reduction))
        result = {"format": FORMAT, "triton": getattr(triton, "__version__", "?"), "kernels": results}
    except SourceProblem as e:
        result, status = {"format": FORMAT, "error": str(e)}, 2
    except SyntaxError as e:
        result, status = {"format": FORMAT, "error": f"kernel.py does not parse: {e}"}, 2
    except Exception as e:  # no GPU, a file the sandbox refused, a Triton failure outside the kernel's compile
        result, status = {"format": FORMAT, "error": f"the recompile failed: {rp.exception_summary(e, '')}"}, 3
    result["sandbox"] = report
    write_result(out_dir, result)
    if helper_client is not None:
        helper_client.seal("the recompile is done")
    return status


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Nothing to tear down: the interpreter's finalisation and torch's and Triton's exit hooks would
    # run under the sandbox (restoring signal handlers, for one, is a violation there).
    os._exit(code)
