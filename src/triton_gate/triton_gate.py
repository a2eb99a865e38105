#!/usr/bin/env python3
"""Source gate for Triton candidates (one file, `kernel.py`, entry `run(...)`).

Reads the candidate with Python's own `ast` — it never imports or runs it — and prints a JSON list
of findings `{rule, line, col, excerpt, message}`. Exit status: 0 clean, 1 findings, 2 the file
cannot be read or parsed (then stdout holds one JSON object `{error, line, col, message}` and
stderr one line for a person).

Why an allowlist: a Triton candidate is Python, so anything torch can do is one attribute away
(`torch.matmul`, `F.scaled_dot_product_attention`, `x.softmax`, `torch.ops.aten.mm`, ...). Naming
what is forbidden can never be complete; naming what is allowed can. Host code outside
`@triton.jit` functions may only allocate (`torch.empty*`, `torch.zeros*`), take views and copies,
and ask about tensors, devices and streams; everything on `torch` outside that list is rejected,
and so is every compute method of `torch.Tensor` (the list below) on any object. Imports are an
allowlist too (torch, triton, math, typing). Dynamic access (`getattr` with a computed name,
`vars`, `__dict__`, `eval`, `importlib`, ...) is rejected because it would defeat the name checks.

This gate is the first line, not the guarantee: a candidate that hides compute behind data flow
this gate cannot follow (a tensor passed through a container, a method added to torch after the
list below was made) is caught at run time by the runner's kernel-provenance check (only kernels
compiled from the candidate's Triton code may run during the call) and the mapped-library check.

Standard library only, Python >= 3.10.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys

# --------------------------------------------------------------------------------------------
# Rules: the name a finding carries and what it means (printed by --rules, used in docs/tests).
# --------------------------------------------------------------------------------------------
RULES = {
    "size": "the file is larger than the gate accepts",
    "import-not-allowed": "an import outside the allowlist (torch, triton, math, typing)",
    "star-import": "`from X import *` hides which names are used",
    "vendor-library": "a vendor or third-party kernel library (cuBLAS, cuDNN, FlashAttention, triton.ops, ...)",
    "native-code": "loading native code (ctypes, cffi, CUDA Python, torch C++ extensions)",
    "process-spawn": "starting processes or touching the OS (subprocess, os, multiprocessing)",
    "network": "network access",
    "dynamic-code": "running code built at run time (eval, exec, compile, importlib, __import__)",
    "file-access": "opening files",
    "introspection": "reaching objects by name at run time (globals, vars, sys, builtins, inspect)",
    "dynamic-attribute": "attribute access with a computed name (getattr with a non-constant name, setattr, delattr)",
    "dunder-access": "double-underscore attributes or names (__dict__, __matmul__, __builtins__, ...)",
    "module-as-value": "a module used as a value (passed, stored or rebound), which hides what is called on it",
    "torch-compute": "torch compute outside allocation, views, copies and queries (torch.matmul, @, F.*, x.sum(), ...)",
    "tensor-arithmetic": "arithmetic or comparison on torch tensors in host code (runs torch kernels, not Triton)",
    "triton-not-allowed": "a Triton API outside the host-side allowlist (triton.runtime, triton.compile, ...)",
    "missing-entry": "the file defines no top-level entry function",
    "entry-signature": "the entry function cannot take the harness's call (every input, then every output, positionally)",
    "no-triton-kernel": "the file defines no @triton.jit function",
}

MAX_BYTES_DEFAULT = 512 * 1024  # the same bound as the CUDA source gate

# Paths a candidate may use. "module": only the children listed are allowed; "leaf": nothing below
# it; "subtree": everything below it.
ALLOWED_PATHS = {
    "torch": "module",
    # allocation (scratch buffers, descriptor workspaces); outputs are given (destination passing)
    "torch.empty": "leaf", "torch.empty_like": "leaf", "torch.empty_strided": "leaf",
    "torch.zeros": "leaf", "torch.zeros_like": "leaf",
    # types and dtypes
    "torch.Tensor": "leaf", "torch.dtype": "leaf", "torch.device": "leaf", "torch.Size": "leaf",
    "torch.finfo": "leaf", "torch.iinfo": "leaf",
    "torch.no_grad": "leaf", "torch.inference_mode": "leaf",
    # device and stream queries
    "torch.cuda": "module",
    "torch.cuda.current_stream": "leaf", "torch.cuda.current_device": "leaf",
    "torch.cuda.get_device_properties": "leaf", "torch.cuda.get_device_capability": "leaf",
    "torch.cuda.device": "leaf", "torch.cuda.is_available": "leaf", "torch.cuda.synchronize": "leaf",
    # Triton host API
    "triton": "module",
    "triton.jit": "leaf", "triton.cdiv": "leaf", "triton.next_power_of_2": "leaf",
    "triton.autotune": "leaf", "triton.Config": "leaf", "triton.heuristics": "leaf",
    "triton.set_allocator": "leaf",
    "triton.language": "subtree",
    "triton.tools": "module",
    "triton.tools.tensor_descriptor": "subtree",
    "math": "subtree",
    # Not all of typing: typing.get_type_hints evaluates annotation strings.
    "typing": "module",
    "__future__": "subtree",
}
for _name in ("Any Callable Dict Iterable List Literal Mapping NamedTuple Optional Sequence Tuple Type "
              "TypeVar Union Final TYPE_CHECKING cast overload").split():
    ALLOWED_PATHS["typing." + _name] = "leaf"
for _dtype in ("float16 half bfloat16 float32 float float64 double float8_e4m3fn float8_e5m2 "
               "float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn_x2 int8 int16 short "
               "int32 int int64 long uint8 uint16 uint32 uint64 bool").split():
    ALLOWED_PATHS["torch." + _dtype] = "leaf"

# Paths that are modules (using one as a value is rejected); import targets are added at run time.
KNOWN_MODULES = {"torch", "torch.cuda", "triton", "triton.language", "triton.language.extra",
                 "triton.language.math", "triton.tools", "triton.tools.tensor_descriptor", "math",
                 "typing"}

INFO_CALLS = {"torch.finfo", "torch.iinfo", "torch.cuda.get_device_properties", "torch.cuda.current_stream",
              "torch.cuda.get_device_capability"}
TORCH_ALLOC = {"torch.empty", "torch.empty_like", "torch.empty_strided", "torch.zeros", "torch.zeros_like"}
JIT_PATH = "triton.jit"

# Rules for import roots and forbidden path prefixes, most specific first.
PATH_CATEGORIES = [
    ("torch.backends", "vendor-library"),
    ("torch.utils.cpp_extension", "native-code"),
    ("triton.ops", "vendor-library"),
]
IMPORT_CATEGORIES = {
    "vendor-library": "cublas cublaslt cudnn cutlass cuda_cccl nvidia flash_attn flash_attn_interface "
                      "flashinfer xformers apex transformer_engine deepspeed vllm sgl_kernel sglang "
                      "liger_kernel thunderkittens tilelang cupy tensorrt torchao bitsandbytes "
                      "deep_gemm quack".split(),
    "native-code": "ctypes _ctypes cffi cuda pycuda numba mmap cython".split(),
    "process-spawn": "subprocess multiprocessing os posix pty signal concurrent threading _thread".split(),
    "network": "socket ssl http urllib urllib3 requests asyncio ftplib smtplib xmlrpc".split(),
    "dynamic-code": "importlib imp runpy pickle marshal dill cloudpickle code codeop types".split(),
    "file-access": "io pathlib shutil tempfile glob fileinput".split(),
    "introspection": "sys builtins inspect gc".split(),
}
IMPORT_CATEGORY_OF = {mod: rule for rule, mods in IMPORT_CATEGORIES.items() for mod in mods}

FORBIDDEN_BUILTINS = {
    "eval": "dynamic-code", "exec": "dynamic-code", "compile": "dynamic-code", "__import__": "dynamic-code",
    "globals": "introspection", "locals": "introspection", "vars": "introspection",
    "breakpoint": "introspection", "input": "introspection",
    "open": "file-access",
    "setattr": "dynamic-attribute", "delattr": "dynamic-attribute",
}
# Builtins that compute on, or read the values of, a tensor given to them on the host.
TENSOR_BUILTINS = {"sum", "abs", "pow", "round", "divmod", "max", "min", "sorted", "float", "int",
                   "bool", "complex", "list", "tuple", "iter", "map", "reversed"}
ALLOWED_DUNDER_ATTRS = {"__init__", "__name__", "__qualname__", "__doc__"}
ALLOWED_DUNDER_NAMES = {"__name__"}

# torch.Tensor attributes a candidate may use: views, copies, fills and queries.
TENSOR_VIEW_STRONG = set(
    "view view_as reshape reshape_as permute transpose contiguous unsqueeze squeeze flatten "
    "unflatten expand expand_as narrow as_strided movedim moveaxis clone".split())
TENSOR_VIEW_WEAK = set("to t split chunk unbind select detach copy_ zero_ fill_ new_empty new_zeros "
                       "new_empty_strided".split())  # tensor-valued only on a known tensor
TENSOR_VIEW_ATTRS = {"T", "mT", "mH", "H", "data", "real", "imag"}
# Seeing one of these on a name is evidence that the name holds a tensor.
TENSOR_EVIDENCE = set("data_ptr stride is_contiguous view reshape permute transpose contiguous shape "
                      "dtype numel element_size size copy_ zero_ fill_ storage_offset unsqueeze "
                      "squeeze ndim dim expand narrow as_strided clone chunk unbind t".split())

# Every other public name of torch.Tensor (from torch's own `dir(torch.Tensor)`, less the allowed
# views/copies/queries above and plain non-computing properties such as `.name` or `.grad`). Any of
# these as an attribute, on any object other than a literal, is rejected outside @triton.jit.
TENSOR_COMPUTE_METHODS = set("""
    _addmm_activation _autocast_to_full_precision _autocast_to_reduced_precision _coalesced_
    _conj _conj_physical _dimI _dimV _fix_weakref _has_symbolic_sizes_strides _indices _is_view
    _is_zerotensor _make_subclass _make_wrapper_subclass _neg_view _nested_tensor_layer_norm
    _nested_tensor_size _nnz _python_dispatch _reduce_ex_internal _storage _to_dense
    _update_names _values abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ addbmm
    addbmm_ addcdiv addcdiv_ addcmul addcmul_ addmm addmm_ addmv addmv_ addr addr_ adjoint
    align_as align_to all allclose amax amin aminmax angle any apply_ arccos arccos_ arccosh
    arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 arctan2_ arctan_ arctanh arctanh_
    argmax argmin argsort argwhere as_strided_ as_strided_scatter as_subclass asin asin_ asinh
    asinh_ atan atan2 atan2_ atan_ atanh atanh_ backward baddbmm baddbmm_ bernoulli bernoulli_
    bfloat16 bincount bitwise_and bitwise_and_ bitwise_left_shift bitwise_left_shift_
    bitwise_not bitwise_not_ bitwise_or bitwise_or_ bitwise_right_shift bitwise_right_shift_
    bitwise_xor bitwise_xor_ bmm bool broadcast_to byte cauchy_ ccol_indices cdouble ceil ceil_
    cfloat chalf char cholesky cholesky_inverse cholesky_solve clamp clamp_ clamp_max clamp_max_
    clamp_min clamp_min_ clip clip_ coalesce col_indices conj conj_physical conj_physical_
    copysign copysign_ corrcoef cos cos_ cosh cosh_ count_nonzero cov cpu cross crow_indices
    cuda cummax cummin cumprod cumprod_ cumsum cumsum_ deg2rad deg2rad_ dense_dim dequantize det
    detach_ diag diag_embed diagflat diagonal diagonal_scatter diff digamma digamma_ dist div
    div_ divide divide_ dot double dsplit eig eq eq_ equal erf erf_ erfc erfc_ erfinv erfinv_
    exp exp2 exp2_ exp_ expm1 expm1_ exponential_ fill_diagonal_ fix fix_ flip fliplr flipud
    float float_power float_power_ floor floor_ floor_divide floor_divide_ fmax fmin fmod fmod_
    frac frac_ frexp gather gcd gcd_ ge ge_ geometric_ geqrf ger greater greater_ greater_equal
    greater_equal_ gt gt_ half hardshrink heaviside heaviside_ histc histogram hsplit hypot
    hypot_ i0 i0_ igamma igamma_ igammac igammac_ index_add index_add_ index_copy index_copy_
    index_fill index_fill_ index_put index_put_ index_reduce index_reduce_ index_select inner
    int int_repr inverse ipu is_nonzero isclose isfinite isinf isnan isneginf isposinf isreal
    istft item kron kthvalue lcm lcm_ ldexp ldexp_ le le_ lerp lerp_ less less_ less_equal
    less_equal_ lgamma lgamma_ log log10 log10_ log1p log1p_ log2 log2_ log_ log_normal_
    log_softmax logaddexp logaddexp2 logcumsumexp logdet logical_and logical_and_ logical_not
    logical_not_ logical_or logical_or_ logical_xor logical_xor_ logit logit_ logsumexp long
    lstsq lt lt_ lu lu_solve map2_ map_ masked_fill masked_fill_ masked_scatter masked_scatter_
    masked_select matmul matrix_exp matrix_power max maximum mean median min minimum mm mode
    msort mul mul_ multinomial multiply multiply_ mv mvlgamma mvlgamma_ nan_to_num nan_to_num_
    nanmean nanmedian nanquantile nansum narrow_copy ne ne_ neg neg_ negative negative_ new
    new_full new_ones new_tensor nextafter nextafter_ nonzero norm normal_ not_equal not_equal_
    numpy orgqr ormqr outer pin_memory pinverse polygamma polygamma_ positive pow pow_ prelu
    prod put put_ q_per_channel_axis q_per_channel_scales q_per_channel_zero_points q_scale
    q_zero_point qr qscheme quantile rad2deg rad2deg_ random_ ravel reciprocal reciprocal_
    record_stream refine_names register_hook reinforce relu relu_ remainder remainder_ rename
    rename_ renorm renorm_ repeat repeat_interleave requires_grad_ resize resize_ resize_as
    resize_as_ resize_as_sparse_ resolve_conj resolve_neg retain_grad roll rot90 round round_
    row_indices rsqrt rsqrt_ scatter scatter_ scatter_add scatter_add_ scatter_reduce
    scatter_reduce_ select_scatter set_ sgn sgn_ share_memory_ short sigmoid sigmoid_ sign sign_
    signbit sin sin_ sinc sinc_ sinh sinh_ slice_scatter slogdet smm softmax solve sort
    sparse_dim sparse_mask sparse_resize_ sparse_resize_and_clear_ split_with_sizes sqrt sqrt_
    square square_ squeeze_ sspaddmm std stft storage storage_type sub sub_ subtract subtract_
    sum sum_to_size svd swapaxes swapaxes_ swapdims swapdims_ symeig t_ take take_along_dim tan
    tan_ tanh tanh_ tensor_split tile to_dense to_mkldnn to_padded_tensor to_sparse
    to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr tolist topk trace
    transpose_ triangular_solve tril tril_ triu triu_ true_divide true_divide_ trunc trunc_ type
    type_as unfold uniform_ unique unique_consecutive unsafe_chunk unsafe_split
    unsafe_split_with_sizes unsqueeze_ var vdot vsplit where xlogy xlogy_ xpu
    untyped_storage dim_order module_load nan_to_num positive float_power
""".split())


class Finding:
    __slots__ = ("rule", "line", "col", "excerpt", "message")

    def __init__(self, rule, line, col, excerpt, message):
        self.rule, self.line, self.col, self.excerpt, self.message = rule, line, col, excerpt, message

    def to_json(self):
        return {"rule": self.rule, "line": self.line, "col": self.col, "excerpt": self.excerpt,
                "message": self.message}


def fold_string(node):
    """Returns the string a constant expression evaluates to ("mat" + "mul", f"{'mat'}mul"), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fold_string(node.left), fold_string(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        text = fold_string(node.left)
        count = node.right.value if isinstance(node.right, ast.Constant) else None
        if text is not None and isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= 64:
            return text * count
        return None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if value.conversion not in (-1, None) or value.format_spec is not None:
                    return None
                part = fold_string(value.value)
            else:
                part = fold_string(value)
            if part is None:
                return None
            parts.append(part)
        return "".join(parts)
    return None


def is_literal(node):
    return isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr,
                             ast.ListComp, ast.DictComp, ast.SetComp))


def path_verdict(path):
    """Returns (rule, offending_prefix) for a dotted path outside the allowlist, or None if allowed."""
    parts = path.split(".")
    root = parts[0]
    if root not in ("torch", "triton", "math", "typing", "__future__"):
        return import_rule(root), root
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        kind = ALLOWED_PATHS.get(prefix)
        if kind is None:
            return category_of_path(path), prefix
        if kind == "subtree":
            return subtree_verdict(parts, i)
    return None


def subtree_verdict(parts, start):
    """Below an allowed subtree (triton.language, ...) every public name is allowed, but not a
    private one or a module the subtree happens to import (`tl.core.builtins`)."""
    for j in range(start, len(parts)):
        name, prefix = parts[j], ".".join(parts[:j + 1])
        if name.startswith("__") and name.endswith("__"):
            return "dunder-access", prefix
        if name.startswith("_"):
            return category_of_path(parts[0]), prefix
        if name in IMPORT_CATEGORY_OF and name != "cuda":  # tl.extra.cuda is Triton's own
            return IMPORT_CATEGORY_OF[name], prefix
        if name in FORBIDDEN_BUILTINS:
            return FORBIDDEN_BUILTINS[name], prefix
        if name in ("getattr", "torch", "triton"):
            return "introspection", prefix
    return None


def category_of_path(path):
    """The rule for a forbidden dotted path: the most specific category, else by its root."""
    for start, rule in PATH_CATEGORIES:
        if path == start or path.startswith(start + "."):
            return rule
    root = path.split(".")[0]
    return {"torch": "torch-compute", "triton": "triton-not-allowed"}.get(root, "import-not-allowed")


def import_rule(root):
    return IMPORT_CATEGORY_OF.get(root, "import-not-allowed")


class Collector(ast.NodeVisitor):
    """Pass 1: import aliases, @triton.jit functions, and which names hold tensors in each scope."""

    def __init__(self):
        self.aliases = {}        # name -> dotted path bound by an import
        self.import_modules = set()

    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
                self.import_modules.add(alias.name)
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root
                self.import_modules.add(root)

    def visit_ImportFrom(self, node):
        if node.level or not node.module:
            return
        for alias in node.names:
            if alias.name != "*":
                self.aliases[alias.asname or alias.name] = node.module + "." + alias.name


class Gate:
    def __init__(self, source, tree, entry, scalar_positions=None, arity=None):
        self.lines = source.splitlines()
        self.tree = tree
        self.entry = entry
        # None: which parameters of the entry are tensors is inferred from their use. A set: the
        # task definition says which positions are scalars, so every other parameter is a tensor.
        self.scalar_positions = scalar_positions
        # None: not checked. An int: the harness calls the entry with this many positional arguments
        # (the definition's inputs, then its outputs), as upstream binds them before it runs anything.
        self.arity = arity
        self.findings = {}
        collector = Collector()
        collector.visit(tree)
        self.aliases = collector.aliases
        self.modules = KNOWN_MODULES | collector.import_modules
        self.jit_functions = set()
        self.scope_tensors = {}  # id(scope node) -> set of names holding tensors

    # ---- findings -------------------------------------------------------------------------
    def report(self, rule, node, message):
        """Records a finding at node (None: about the whole file, line 0)."""
        line = getattr(node, "lineno", 0) or 0
        col = self.char_col(line, getattr(node, "col_offset", 0) or 0) + 1 if line else 0
        key = (rule, line, col)
        if key not in self.findings:
            excerpt = self.lines[line - 1].strip()[:200] if 0 < line <= len(self.lines) else ""
            self.findings[key] = Finding(rule, line, col, excerpt, message)

    def char_col(self, line, byte_col):
        # ast columns count UTF-8 bytes; people count characters.
        if not 0 < line <= len(self.lines):
            return byte_col
        return len(self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    # ---- name resolution ------------------------------------------------------------------
    def resolve(self, node):
        """Dotted path of an expression built from an imported name (`T.nn.functional`), or None."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return base + "." + node.attr if base else None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) >= 2):
            base = self.resolve(node.args[0])
            name = fold_string(node.args[1])
            return base + "." + name if base and name is not None else None
        return None

    def is_jit_decorator(self, node):
        target = node.func if isinstance(node, ast.Call) else node
        return self.resolve(target) == JIT_PATH

    def find_jit_functions(self):
        jit_names = set()
        for node in ast.walk(self.tree):
            # kernel = triton.jit(fn)
            if isinstance(node, ast.Call) and self.resolve(node.func) == JIT_PATH:
                jit_names.update(a.id for a in node.args if isinstance(a, ast.Name))
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(self.is_jit_decorator(d) for d in node.decorator_list) or node.name in jit_names:
                    self.jit_functions.add(node)

    # ---- tensor inference -----------------------------------------------------------------
    def is_tensor(self, node, tensors):
        if isinstance(node, ast.Name):
            return node.id in tensors
        if isinstance(node, ast.Subscript):
            return self.is_tensor(node.value, tensors)
        if isinstance(node, ast.Attribute):
            return node.attr in TENSOR_VIEW_ATTRS and self.is_tensor(node.value, tensors)
        if isinstance(node, ast.Call):
            if self.resolve(node.func) in TORCH_ALLOC:
                return True
            if isinstance(node.func, ast.Attribute) and not is_literal(node.func.value):
                method = node.func.attr
                if method in TENSOR_VIEW_STRONG:
                    return True
                if method in TENSOR_VIEW_WEAK or method in TENSOR_COMPUTE_METHODS:
                    return self.is_tensor(node.func.value, tensors)
            return False
        if isinstance(node, ast.BinOp):
            return self.is_tensor(node.left, tensors) or self.is_tensor(node.right, tensors)
        if isinstance(node, ast.UnaryOp):
            return self.is_tensor(node.operand, tensors)
        if isinstance(node, ast.IfExp):
            return self.is_tensor(node.body, tensors) or self.is_tensor(node.orelse, tensors)
        if isinstance(node, (ast.NamedExpr, ast.Starred)):
            return self.is_tensor(node.value, tensors)
        return False

    @staticmethod
    def scope_nodes(scope):
        """The nodes of one scope: its body without nested function bodies (lambdas and class
        bodies fold in; a nested function's decorators run in this scope)."""
        stack = list(scope.body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.extend(node.decorator_list)
                continue
            yield node
            stack.extend(ast.iter_child_nodes(node))

    def entry_tensor_params(self, scope):
        if (self.scalar_positions is None or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef))
                or scope.name != self.entry or scope not in self.tree.body):
            return []
        positional = scope.args.posonlyargs + scope.args.args
        names = [a.arg for i, a in enumerate(positional) if i not in self.scalar_positions]
        if scope.args.vararg is not None:
            names.append(scope.args.vararg.arg)  # run(*tensors): a subscript of it is a tensor
        return names

    @staticmethod
    def target_names(target):
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                yield from Gate.target_names(element)
        elif isinstance(target, ast.Starred):
            yield from Gate.target_names(target.value)

    def infer_tensors(self, scope, inherited):
        """Names of one scope that hold tensors: flow-insensitive, to a fixed point."""
        nodes = list(self.scope_nodes(scope))
        tensors = set(self.entry_tensor_params(scope))
        for node in nodes:
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.attr in TENSOR_EVIDENCE):
                tensors.add(node.value.id)
        for _ in range(32):
            known = tensors | inherited
            before = len(tensors)
            for node in nodes:
                pairs = []
                if isinstance(node, ast.Assign):
                    pairs = [(t, node.value) for t in node.targets]
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    pairs = [(node.target, node.value)]
                elif isinstance(node, ast.NamedExpr):
                    pairs = [(node.target, node.value)]
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                    pairs = [(node.target, node.iter)]
                for target, value in pairs:
                    if self.is_tensor(value, known):
                        tensors.update(self.target_names(target))
            if len(tensors) == before:
                break
        return tensors

    # ---- pass 2 ---------------------------------------------------------------------------
    def run(self):
        self.find_jit_functions()
        self.check_entry_points()
        module_tensors = self.infer_tensors(self.tree, set())
        Checker(self, module_tensors).visit(self.tree)
        return sorted(self.findings.values(), key=lambda f: (f.line, f.col, f.rule))

    def check_entry_points(self):
        entries = [n for n in self.tree.body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == self.entry]
        if not entries:
            self.report("missing-entry", None,
                        f"no top-level function `{self.entry}`: the harness calls {self.entry}(inputs..., outputs...)")
        elif self.arity is not None:
            why = self.signature_problem(entries[-1].args, self.arity)
            if why:
                self.report("entry-signature", entries[-1],
                            f"`{self.entry}` {why}: the harness calls it with {self.arity} positional arguments "
                            f"(the definition's inputs, then its outputs)")
        if not self.jit_functions:
            self.report("no-triton-kernel", None,
                        "no @triton.jit function: the work must be done by Triton kernels in this file")


    @staticmethod
    def signature_problem(args, n):
        """Why a function with these parameters cannot be called with n positional arguments, or ""."""
        positional = args.posonlyargs + args.args
        required = len(positional) - len(args.defaults)
        if len(positional) < n and args.vararg is None:
            return f"takes {len(positional)} positional parameter{'s' if len(positional) != 1 else ''}"
        if required > n:
            return f"needs {required} positional arguments"
        missing_kw = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
        if missing_kw:
            return f"needs the keyword-only argument{'s' if len(missing_kw) > 1 else ''} {', '.join(missing_kw)}"
        return ""


class Checker(ast.NodeVisitor):
    def __init__(self, gate, module_tensors):
        self.gate = gate
        self.tensors = module_tensors
        self.in_jit = False

    # ---- scopes ---------------------------------------------------------------------------
    def visit_FunctionDef(self, node):
        for decorator in node.decorator_list:
            self.visit(decorator)
        # Defaults and annotations are evaluated when the function is defined, in this scope.
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        arguments = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        arguments += [a for a in (node.args.vararg, node.args.kwarg) if a is not None]
        for annotation in [a.annotation for a in arguments] + [node.returns]:
            if annotation is not None:
                self.visit(annotation)
        saved = (self.tensors, self.in_jit)
        self.in_jit = self.in_jit or node in self.gate.jit_functions
        self.tensors = self.tensors | (set() if self.in_jit else self.gate.infer_tensors(node, self.tensors))
        for statement in node.body:
            self.visit(statement)
        self.tensors, self.in_jit = saved

    visit_AsyncFunctionDef = visit_FunctionDef

    # ---- imports --------------------------------------------------------------------------
    def visit_Import(self, node):
        for alias in node.names:
            self.check_import(alias.name, node)

    def visit_ImportFrom(self, node):
        if node.level:
            self.gate.report("import-not-allowed", node, "relative imports are not allowed: the candidate is one file")
            return
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                self.gate.report("star-import", node, f"`from {module} import *` hides which names are used; import them by name")
                continue
            if not self.check_import(module, node):
                continue
            self.check_import(module + "." + alias.name, node)

    def check_import(self, path, node):
        verdict = path_verdict(path)
        if verdict is None:
            return True
        rule, prefix = verdict
        self.gate.report(rule, node, f"import of `{prefix}` is not allowed ({RULES[rule]})")
        return False

    # ---- names and attributes -------------------------------------------------------------
    def visit_Name(self, node):
        name = node.id
        if name in FORBIDDEN_BUILTINS:
            rule = FORBIDDEN_BUILTINS[name]
            self.gate.report(rule, node, f"`{name}` is not allowed ({RULES[rule]})")
            return
        if name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDER_NAMES:
            self.gate.report("dunder-access", node, f"`{name}` reaches interpreter internals")
            return
        if name == "getattr":  # a call with a constant name is handled in visit_Call
            self.gate.report("dynamic-attribute", node, "`getattr` used as a value")
            return
        path = self.gate.aliases.get(name)
        if path is None:
            return
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self.gate.report("module-as-value", node, f"`{name}` is an imported name; rebinding it hides what it refers to")
            return
        self.check_path(path, node, as_value=True)

    def check_path(self, path, node, as_value):
        dunder = [p for p in path.split(".")[1:] if p.startswith("__") and p.endswith("__")]
        if dunder:
            self.gate.report("dunder-access", node, f"`.{dunder[0]}` reaches interpreter internals")
            return
        verdict = path_verdict(path)
        if verdict is not None:
            rule, prefix = verdict
            self.gate.report(rule, node, f"`{prefix}` is not allowed ({RULES[rule]})")
        elif as_value and path in self.gate.modules:
            self.gate.report("module-as-value", node,
                             f"module `{path}` used as a value; use its attributes directly (e.g. `{path}.empty`)")

    def visit_Attribute(self, node):
        path = self.gate.resolve(node)
        if path is not None:
            # The whole chain is one name; checking it once reports the first forbidden prefix.
            self.check_path(path, node, as_value=True)
            return
        self.check_attribute_name(node.attr, node, node.value)
        self.visit(node.value)

    def check_attribute_name(self, attr, node, receiver):
        if attr.startswith("__") and attr.endswith("__") and attr not in ALLOWED_DUNDER_ATTRS:
            self.gate.report("dunder-access", node, f"`.{attr}` reaches interpreter internals")
        elif (attr in TENSOR_COMPUTE_METHODS and not self.in_jit and not is_literal(receiver)
              and not self.is_info_object(receiver)):
            self.gate.report("torch-compute", node,
                             f"`.{attr}` is torch compute; outside @triton.jit only views, copies and queries are allowed")

    def is_info_object(self, node):
        """`torch.finfo(t).max`, `torch.cuda.get_device_properties(d).name`: not tensors."""
        return isinstance(node, ast.Call) and self.gate.resolve(node.func) in INFO_CALLS

    # ---- calls ----------------------------------------------------------------------------
    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Name) and func.id == "getattr":
            self.visit_getattr(node)
            return
        if isinstance(func, ast.Name) and func.id in TENSOR_BUILTINS and not self.in_jit:
            if any(self.gate.is_tensor(a, self.tensors) for a in node.args):
                self.gate.report("torch-compute", node,
                                 f"builtin `{func.id}` on a tensor computes or reads tensor values on the host")
        self.generic_visit(node)

    def visit_getattr(self, node):
        if len(node.args) < 2:
            self.gate.report("dynamic-attribute", node, "`getattr` without a constant attribute name")
            return
        name = fold_string(node.args[1])
        if name is None:
            self.gate.report("dynamic-attribute", node,
                             "`getattr` with a computed attribute name; write the attribute directly")
            for arg in node.args:
                if self.gate.resolve(arg) is None:  # a module here is already the finding above
                    self.visit(arg)
            return
        base = self.gate.resolve(node.args[0])
        if base is not None:
            self.check_path(base + "." + name, node, as_value=False)
        else:
            self.check_attribute_name(name, node, node.args[0])
            self.visit(node.args[0])
        for extra in node.args[2:] + [k.value for k in node.keywords]:
            self.visit(extra)

    # ---- operators ------------------------------------------------------------------------
    def visit_BinOp(self, node):
        if not self.in_jit:
            if isinstance(node.op, ast.MatMult):
                self.gate.report("torch-compute", node, "the `@` operator is torch matrix multiplication on the host")
            elif self.gate.is_tensor(node.left, self.tensors) or self.gate.is_tensor(node.right, self.tensors):
                self.gate.report("tensor-arithmetic", node,
                                 "arithmetic on tensors in host code runs torch kernels; do the math in a Triton kernel")
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if not self.in_jit:
            if isinstance(node.op, ast.MatMult):
                self.gate.report("torch-compute", node, "the `@=` operator is torch matrix multiplication on the host")
            elif self.gate.is_tensor(node.target, self.tensors) or self.gate.is_tensor(node.value, self.tensors):
                self.gate.report("tensor-arithmetic", node,
                                 "in-place arithmetic on tensors in host code runs torch kernels")
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if not self.in_jit and not isinstance(node.op, ast.Not) and self.gate.is_tensor(node.operand, self.tensors):
            self.gate.report("tensor-arithmetic", node, "arithmetic on tensors in host code runs torch kernels")
        self.generic_visit(node)

    def visit_Compare(self, node):
        if not self.in_jit:
            elementwise = [op for op in node.ops if not isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))]
            operands = [node.left] + node.comparators
            if elementwise and any(self.gate.is_tensor(o, self.tensors) for o in operands):
                self.gate.report("tensor-arithmetic", node, "comparing tensors in host code runs torch kernels")
        self.generic_visit(node)


def check_source(source, entry="run", max_bytes=MAX_BYTES_DEFAULT, scalar_positions=None, arity=None):
    """Returns (findings, None) or (None, parse_error_dict) for the candidate's text.

    scalar_positions: positions of the entry's parameters that are scalars in the task definition
    (every other parameter is then a tensor), or None to infer tensors from their use.
    arity: how many positional arguments the harness passes the entry (inputs + outputs), or None.
    """
    size = len(source.encode("utf-8"))
    if size > max_bytes:
        finding = Finding("size", 0, 0, "", f"the file has {size} bytes; the limit is {max_bytes}")
        return [finding], None
    if "\0" in source:
        return None, {"error": "cannot parse", "line": source[:source.index("\0")].count("\n") + 1,
                      "col": 0, "message": "the file contains a NUL byte"}
    try:
        tree = ast.parse(source, filename="kernel.py", type_comments=False)
    except SyntaxError as e:
        return None, {"error": "cannot parse", "line": e.lineno or 0, "col": e.offset or 0,
                      "message": f"{e.msg}"}
    except (ValueError, RecursionError, MemoryError) as e:
        return None, {"error": "cannot parse", "line": 0, "col": 0,
                      "message": "nesting too deep" if isinstance(e, RecursionError) else str(e).splitlines()[0]}
    try:
        return Gate(source, tree, entry, scalar_positions, arity).run(), None
    except RecursionError:
        return None, {"error": "cannot parse", "line": 0, "col": 0, "message": "nesting too deep to check"}


def main(argv=None):
    parser = argparse.ArgumentParser(description="Source gate for Triton candidates (ast only; never imports the file).")
    parser.add_argument("file", nargs="?", help="the candidate, e.g. kernel.py")
    parser.add_argument("--entry", default="run", help="entry function name (default: run)")
    parser.add_argument("--max-bytes", type=int, default=MAX_BYTES_DEFAULT, help="size limit in bytes")
    parser.add_argument("--scalar-positions", metavar="LIST",
                        help="comma-separated 0-based positions of the entry's scalar parameters (from the "
                             "task definition); every other parameter is then a tensor. Without it, "
                             "tensors are inferred from their use")
    parser.add_argument("--arity", type=int, metavar="N",
                        help="the entry is called with N positional arguments (the definition's inputs, then outputs)")
    parser.add_argument("--rules", action="store_true", help="print the rules as JSON and exit")
    args = parser.parse_args(argv)
    if args.rules:
        print(json.dumps(RULES, indent=2))
        return 0
    if not args.file:
        parser.print_usage(sys.stderr)
        print("triton_gate: error: a file is required", file=sys.stderr)
        return 2
    scalar_positions = None
    if args.scalar_positions is not None:
        try:
            scalar_positions = {int(p) for p in args.scalar_positions.split(",") if p.strip()}
        except ValueError:
            print(f"triton_gate: error: --scalar-positions wants integers, got {args.scalar_positions!r}",
                  file=sys.stderr)
            return 2
    try:
        with open(args.file, "rb") as f:  # the gate itself reads the candidate; the candidate may not
            raw = f.read(args.max_bytes + 1)
    except OSError as e:
        print(f"triton_gate: cannot read {args.file}: {e.strerror or e}", file=sys.stderr)
        return 2
    if len(raw) > args.max_bytes:  # not decoded or parsed: the size alone rejects it
        finding = Finding("size", 0, 0, "", f"the file is larger than the limit of {args.max_bytes} bytes")
        print(json.dumps([finding.to_json()], indent=2))
        return 1
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        error = {"error": "cannot parse", "line": raw[:e.start].count(b"\n") + 1, "col": 0,
                 "message": "the file is not UTF-8"}
        print(json.dumps(error))
        print(f"{args.file}:{error['line']}: cannot parse: {error['message']}", file=sys.stderr)
        return 2
    findings, error = check_source(source, args.entry, args.max_bytes, scalar_positions, args.arity)
    if error is not None:
        print(json.dumps(error))
        print(f"{args.file}:{error['line']}:{error['col']}: cannot parse: {error['message']}", file=sys.stderr)
        return 2
    print(json.dumps([f.to_json() for f in findings], indent=2))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
