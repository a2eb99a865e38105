#!/usr/bin/env python3
"""The trusted recompile of a Triton candidate's kernels (docs/trusted-timing.md, "Triton
candidates"). The harness starts it after the candidate's capture, in a fresh process that never
imports kernel.py:

    python3 -I -B triton_recompile.py --source kernel.py --kernels kernels.json --out DIR

It reads kernel.py as text and keeps only what cannot run Python when executed — imports of Triton
and math, top-level @triton.jit functions whose defaults, annotations and decorator arguments are
literals, and top-level constants whose values are literal expressions — at the same line numbers,
and loads that as the module the capture imported (`ptxbench_candidate`). Then, for each kernel the
capture says Triton compiled, it compiles that @triton.jit function again with Triton's own record of
the compilation (`specialization_data`: signature, constants, attributes), but with compile options
limited to the ones a kernel legitimately chooses (warps, stages, CTAs, registers, fusion, ...):
anything else (IR or PTX overrides, extern libraries, ptxas options) stays at Triton's default, so a
cubin that depends on it will not be reproduced. The harness compares each cubin's sha256 with the
captured one: only an identical cubin is replayed.

kernels.json: {"kernels": [{"id": ..., "jit": "<function name>", "specialization_data": "<Triton's JSON>"}]}
DIR/result.json: {"format": "ptxbench.triton-recompile/1", "triton": "<version>",
                  "kernels": [{"id", "name", "sha256", "cubin": "<file in DIR>"}]}  or {"error": "..."}
Exit code: 0 done; 2 the candidate's source does not recompile (its problem: the verdict says why);
3 anything else (infrastructure).
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

import runner_protocol as rp  # noqa: E402  (beside this file: the one Triton environment rule)

FORMAT = "ptxbench.triton-recompile/1"
MODULE_NAME = "ptxbench_candidate"  # the name the capture imported kernel.py under (it is in the cubin's hash)
ALLOWED_IMPORTS = {"triton", "triton.language", "math"}
# Compile options a kernel chooses for itself; everything else takes Triton's default.
ALLOWED_OPTIONS = {"num_warps", "num_ctas", "num_stages", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
                   "launch_pdl", "debug", "sanitize_overflow", "default_dot_input_precision",
                   "max_num_imprecise_acc_default", "num_buffers_warp_spec", "num_consumer_groups",
                   "reg_dec_producer", "reg_inc_consumer", "cluster_dims"}
DROPPED_DECORATORS = {"autotune", "heuristics"}  # choose configurations at launch; the capture recorded the choice


class SourceProblem(Exception):
    """The candidate's source cannot be recompiled as captured (exit code 2)."""


# ---- the source, reduced to what cannot run Python ----------------------------------------------

def _is_literal(node, known):
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_is_literal(e, known) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand, known)
    if isinstance(node, ast.BinOp):
        return _is_literal(node.left, known) and _is_literal(node.right, known)
    if isinstance(node, ast.Name):
        return node.id in known
    if isinstance(node, ast.Call):  # tl.constexpr(<literal>)
        return (_dotted(node.func) in ("tl.constexpr", "triton.language.constexpr", "constexpr")
                and len(node.args) == 1 and not node.keywords and _is_literal(node.args[0], known))
    return False


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _plain_annotation(node):
    return node is None or isinstance(node, ast.Constant) or _dotted(node) is not None


def _decorator_kind(node):
    """'jit', 'dropped' (autotune/heuristics) or None for anything else."""
    target = node.func if isinstance(node, ast.Call) else node
    name = _dotted(target) or ""
    last = name.split(".")[-1]
    if last == "jit" and name in ("jit", "triton.jit"):
        if isinstance(node, ast.Call):
            if node.args or not all(_is_literal(k.value, set()) for k in node.keywords):
                return None
        return "jit"
    if last in DROPPED_DECORATORS and name in (last, f"triton.{last}"):
        return "dropped"
    return None


def reduce_source(text):
    """kernel.py reduced to imports, @triton.jit functions and literal constants, line for line
    (every other line blank). Returns (reduced text, {kernel name: why it was left out})."""
    tree = ast.parse(text)
    lines = text.splitlines()
    keep = [False] * len(lines)
    left_out = {}
    known = set()

    def mark(first, last):
        for i in range(first - 1, last):
            keep[i] = True

    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            mark(node.lineno, node.end_lineno)  # a docstring
        elif isinstance(node, ast.Import):
            if all(a.name in ALLOWED_IMPORTS for a in node.names):
                mark(node.lineno, node.end_lineno)
                known.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.module == "__future__" or (node.level == 0 and node.module in ALLOWED_IMPORTS):
                mark(node.lineno, node.end_lineno)
                known.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if (value is not None and all(isinstance(t, ast.Name) for t in targets) and _is_literal(value, known)
                    and (isinstance(node, ast.Assign) or _plain_annotation(node.annotation))):
                mark(node.lineno, node.end_lineno)
                known.update(t.id for t in targets)
        elif isinstance(node, ast.FunctionDef):
            kinds = [_decorator_kind(d) for d in node.decorator_list]
            if "jit" not in kinds:
                continue
            why = None
            if None in kinds:
                why = "it has a decorator other than triton.jit, triton.autotune or triton.heuristics"
            args = node.args
            defaults = args.defaults + [d for d in args.kw_defaults if d is not None]
            if not all(_is_literal(d, known) for d in defaults):
                why = "a parameter's default is not a literal"
            every = args.posonlyargs + args.args + args.kwonlyargs + ([args.vararg] if args.vararg else []) + (
                [args.kwarg] if args.kwarg else [])
            if not all(_plain_annotation(a.annotation) for a in every) or not _plain_annotation(node.returns):
                why = "an annotation is not a name"
            if why:
                left_out[node.name] = why
                continue
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            mark(first, node.end_lineno)
            for d, kind in zip(node.decorator_list, kinds):
                if kind == "dropped":
                    for i in range(d.lineno - 1, d.end_lineno):
                        keep[i] = False
            # The decorator's own line must stay blank only where it is dropped; `def` and body stay.
            for i in range(node.lineno - 1, node.end_lineno):
                keep[i] = True
            known.add(node.name)
    reduced = "\n".join(line if keep[i] else "" for i, line in enumerate(lines)) + "\n"
    return reduced, left_out


def load_reduced(reduced, folder):
    """The reduced source as module MODULE_NAME, from a real file (Triton reads its functions' source)."""
    path = os.path.join(folder, "kernel.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(reduced)
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module


# ---- the recompile -------------------------------------------------------------------------------

def limited_specialization(data_text):
    """Triton's specialization data with the options limited to ALLOWED_OPTIONS."""
    data = json.loads(data_text)
    if not isinstance(data, dict) or not isinstance(data.get("options"), dict):
        raise SourceProblem("the capture's compile record is malformed")
    data["options"] = {k: v for k, v in data["options"].items() if k in ALLOWED_OPTIONS}
    return json.dumps(data)


def recompile(module, kernel, out_dir, index):
    from triton.runtime.jit import JITFunction

    name = kernel.get("jit", "")
    fn = getattr(module, name, None) if isinstance(name, str) and name.isidentifier() else None
    if not isinstance(fn, JITFunction):
        raise SourceProblem(f"kernel {name!r} is not a top-level @triton.jit function of kernel.py")
    try:
        compiled = fn.preload(limited_specialization(kernel.get("specialization_data", "")))
    except SourceProblem:
        raise
    except Exception as e:  # the source, as reduced, does not compile the way the capture said
        raise SourceProblem(f"kernel {name} does not compile from kernel.py alone: {rp.exception_summary(e, '')}")
    cubin = bytes(compiled.asm["cubin"])
    file = f"r{index:03d}.cubin"
    with open(os.path.join(out_dir, file), "wb") as f:
        f.write(cubin)
    return {"id": kernel.get("id"), "name": str(compiled.metadata.name), "sha256": hashlib.sha256(cubin).hexdigest(),
            "cubin": file}


def write_result(out_dir, result):
    with open(os.path.join(out_dir, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)


def main(argv):
    args = dict(zip(argv[0::2], argv[1::2]))
    source, kernels_file, out_dir = args.get("--source"), args.get("--kernels"), args.get("--out")
    if not (source and kernels_file and out_dir):
        print("usage: triton_recompile.py --source kernel.py --kernels kernels.json --out DIR", file=sys.stderr)
        return 3
    os.makedirs(out_dir, exist_ok=True)
    rp.scrub_triton_environment(os.environ)
    work = tempfile.mkdtemp(prefix="ptxbench-recompile-", dir=out_dir)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(work, "cache")  # empty: nothing compiled earlier is reused
    os.environ["TRITON_HOME"] = os.path.join(work, "home")
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
        with open(kernels_file, encoding="utf-8") as f:
            wanted = json.load(f).get("kernels", [])
    except (OSError, ValueError) as e:
        write_result(out_dir, {"format": FORMAT, "error": f"reading the inputs: {e}"})
        return 3
    try:
        reduced, left_out = reduce_source(text)
        import triton
        module = load_reduced(reduced, work)
        results = []
        for i, k in enumerate(wanted):
            if k.get("jit") in left_out:
                raise SourceProblem(f"kernel {k.get('jit')} cannot be recompiled: {left_out[k.get('jit')]}")
            results.append(recompile(module, k, out_dir, i))
    except SourceProblem as e:
        write_result(out_dir, {"format": FORMAT, "error": str(e)})
        return 2
    except SyntaxError as e:
        write_result(out_dir, {"format": FORMAT, "error": f"kernel.py does not parse: {e}"})
        return 2
    except Exception as e:  # Triton missing, no GPU, ...
        write_result(out_dir, {"format": FORMAT, "error": f"the recompile failed: {rp.exception_summary(e, '')}"})
        return 3
    write_result(out_dir, {"format": FORMAT, "triton": getattr(triton, "__version__", "?"), "kernels": results})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
