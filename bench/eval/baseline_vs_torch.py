#!/usr/bin/env python3
"""Our vendor baseline (through libptxbench_baseline.so) and PyTorch side by side, in one process, on
the same tensors: calls alternate (ours, torch, ours, torch ... with the order swapped every round),
each after an L2 flush of twice the L2 size, timed with CUDA events; medians and the ratio
ours/torch are printed and written as JSON. Usage:

  baseline_vs_torch.py --lib build/bin/libptxbench_baseline.so --root . --tasks gemm_n7168_k5120 --out f.json

GQA tasks (gqa_*): the inputs come from the suite (the workload's axes, its sequence layout and
sm_scale through ptxb_task_input, kv_indices drawn once), and PyTorch's closest path to the same
paged/ragged inputs is timed: variable-length FlashAttention-2 (torch.ops.aten._flash_attention_forward
with cu_seqlens, native grouped KV heads, causal = bottom-right), after gathering the pages into
packed K/V for the paged tasks ("torch" = gather + attention, the whole path from the task's inputs;
"torch_attention_only" = the attention call on pre-gathered K/V). Where that op is missing or refuses,
a loop of F.scaled_dot_product_attention(enable_gqa=True) per sequence is timed instead; the JSON
says which path ran and why.

GQA tasks are also cross-checked on the same inputs (row "crosscheck"; exit status 1 when any pair
disagrees at the task's tolerance): our baseline (cuDNN, or the fallback its description names)
against the independent fp32 GPU reference (ptxb_reference_create), and that reference against two
PyTorch computations that share no code with ours: the definition's own `reference` (fp32 einsum and
logsumexp, output and LSE) and F.scaled_dot_product_attention(enable_gqa=True) on the math backend in
fp32 with an explicit bottom-right causal mask (output).
"""
import argparse, ctypes, json, math, os, statistics, sys, time

import torch
import torch.nn.functional as F

TORCH_DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32, "int32": torch.int32}


def load_task(root, name):
    """The task entry, its definition and its evaluated workload, read from the suite folder."""
    with open(os.path.join(root, "tasks.json")) as f:
        entry = next(t for t in json.load(f)["tasks"] if t["name"] == name)
    with open(os.path.join(root, entry["definition"])) as f:
        definition = json.load(f)
    with open(os.path.join(root, entry["workload"])) as f:
        for line in f:
            if line.strip() and json.loads(line)["workload"]["uuid"] == entry["workload_uuid"]:
                workload = json.loads(line)["workload"]
    return entry, definition, workload


def gqa_inputs(task, gen, lib, root):
    entry, definition, workload = load_task(root, task)
    axes = {k: a["value"] for k, a in definition["axes"].items() if a["type"] == "const"}
    axes.update(workload["axes"])
    err = ctypes.create_string_buffer(1024)
    ins = {}
    for name, spec in definition["inputs"].items():
        shape = [axes[a] for a in spec["shape"]] if spec["shape"] is not None else []
        dtype = TORCH_DTYPES[spec["dtype"]]
        if spec["dtype"] == "bfloat16":
            ins[name] = torch.randn(shape, dtype=dtype, device="cuda", generator=gen)
            continue
        host = torch.empty(shape, dtype=dtype)
        if lib.ptxb_task_input(root.encode(), task.encode(), name.encode(), 1, ctypes.c_void_p(host.data_ptr()),
                               host.numel() * host.element_size(), err, 1024) != 0:
            raise RuntimeError(f"{task}: input {name}: {err.value.decode()}")
        ins[name] = host.cuda()
    outs = {name: torch.empty([axes[a] for a in spec["shape"]], dtype=TORCH_DTYPES[spec["dtype"]], device="cuda")
            for name, spec in definition["outputs"].items()}
    causal = entry["baseline_options"]["causal"]
    scale = float(ins["sm_scale"].item())
    paged = "kv_indices" in ins
    kv_indptr = ins["kv_indptr"]
    qo_indptr = ins.get("qo_indptr")
    if qo_indptr is None:  # decode: one query per sequence
        qo_indptr = torch.arange(kv_indptr.numel(), dtype=torch.int32, device="cuda")
    q_starts, kv_starts = qo_indptr.tolist(), kv_indptr.tolist()  # host copies: no sync inside timed calls
    q_lens = [b - a for a, b in zip(q_starts, q_starts[1:])]
    kv_lens = [b - a for a, b in zip(kv_starts, kv_starts[1:])]  # page size 1: pages = keys
    max_q, max_kv = max(q_lens), max(kv_lens)
    q = ins["q"]
    if paged:
        idx = ins["kv_indices"].long()
        gather = lambda: (ins["k_cache"].index_select(0, idx).flatten(0, 1), ins["v_cache"].index_select(0, idx).flatten(0, 1))
    else:
        gather = lambda: (ins["k"], ins["v"])

    def flash(k, v):
        return torch.ops.aten._flash_attention_forward(q, k, v, qo_indptr, kv_indptr, max_q, max_kv, 0.0, causal, False,
                                                       scale=scale)[0]

    def per_sequence(k, v):
        out = torch.empty_like(q)
        for b in range(len(q_lens)):
            q0, k0 = q_starts[b], kv_starts[b]
            qb = q[q0:q0 + q_lens[b]].transpose(0, 1).unsqueeze(0)
            kb = k[k0:k0 + kv_lens[b]].transpose(0, 1).unsqueeze(0)
            vb = v[k0:k0 + kv_lens[b]].transpose(0, 1).unsqueeze(0)
            # q_len == kv_len in these workloads, so top-left causal equals the definitions' bottom-right one
            ob = F.scaled_dot_product_attention(qb, kb, vb, is_causal=causal and q_lens[b] > 1, scale=scale, enable_gqa=True)
            out[q0:q0 + q_lens[b]] = ob.squeeze(0).transpose(0, 1)
        return out

    k_pre, v_pre = gather()
    path, why = "varlen flash attention (aten._flash_attention_forward, cu_seqlens, grouped KV heads)", None
    try:
        flash(k_pre, v_pre)
        torch.cuda.synchronize()
        attend = flash
    except Exception as e:  # noqa: BLE001 - any refusal falls back, and is recorded
        path, why, attend = "per-sequence F.scaled_dot_product_attention(enable_gqa=True)", repr(e)[:300], per_sequence
    info = {"torch_path": ("gather pages + " if paged else "") + path,
            "torch_attention_only": lambda: attend(k_pre, v_pre),
            "crosscheck_inputs": (entry, definition, ins, q_starts, kv_starts)}
    if why:
        info["torch_path_fallback_reason"] = why
    order = list(definition["inputs"])
    return [ins[n] for n in order], [outs[n] for n in definition["outputs"]], lambda: attend(*gather()), info


def compare(got, ref, atol, rtol):
    """|got - ref| <= atol + rtol |ref| elementwise (ref the reference); non-finite values fail."""
    g, r = got.float(), ref.float()
    diff = (g - r).abs()
    outside = int((diff > atol + rtol * r.abs()).sum())
    nonfinite = int((~torch.isfinite(g)).sum()) + int((~torch.isfinite(r)).sum())
    return {"max_abs_diff": float(diff.nan_to_num(float("inf")).max()), "outside_tolerance": outside,
            "nonfinite": nonfinite, "elements": g.numel(), "ok": outside == 0 and nonfinite == 0}


def sdpa_math_fp32(ins, q_starts, kv_starts, causal, scale):
    """F.scaled_dot_product_attention(enable_gqa=True), math backend, fp32, one call per sequence,
    with an explicit bottom-right causal mask (query i sees key j iff j <= i + nk - nq)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = ins["q"].float()
    if "kv_indices" in ins:  # gather the pages in sequence order; rows of a page stay together
        idx = ins["kv_indices"].long()
        k, v = (ins[n].index_select(0, idx).flatten(0, 1).float() for n in ("k_cache", "v_cache"))
        page = ins["k_cache"].shape[1]
        kv_starts = [x * page for x in kv_starts]
    else:
        k, v = ins["k"].float(), ins["v"].float()
    out = torch.empty_like(q)
    with sdpa_kernel(SDPBackend.MATH):
        for b in range(len(kv_starts) - 1):
            q0, q1, k0, k1 = q_starts[b], q_starts[b + 1], kv_starts[b], kv_starts[b + 1]
            nq, nk = q1 - q0, k1 - k0
            mask = None
            if causal:
                mask = (torch.arange(nk, device=q.device)[None, :]
                        <= torch.arange(nq, device=q.device)[:, None] + (nk - nq))
            qb, kb, vb = (x.transpose(0, 1).unsqueeze(0) for x in (q[q0:q1], k[k0:k1], v[k0:k1]))
            ob = F.scaled_dot_product_attention(qb, kb, vb, attn_mask=mask, scale=scale, enable_gqa=True)
            out[q0:q1] = ob.squeeze(0).transpose(0, 1)
    return out


def gqa_crosscheck(lib, root, task, ins_list, ours_outs, ptrs, cross):
    """Our baseline's outputs (already computed on ins_list) against the independent fp32 reference,
    and that reference against the definition's PyTorch reference and PyTorch's SDPA."""
    entry, definition, ins, q_starts, kv_starts = cross
    atol, rtol = entry["tolerance"]["atol"], entry["tolerance"]["rtol"]
    causal = entry["baseline_options"]["causal"]
    scale = float(ins["sm_scale"].item())
    err = ctypes.create_string_buffer(1024)
    ref_outs = [torch.full_like(o, float("nan")) for o in ours_outs]
    h = lib.ptxb_reference_create(root.encode(), task.encode(), ptrs(ins_list), ptrs(ref_outs), err, 1024)
    if not h:
        return {"error": "fp32 reference: " + err.value.decode(), "ok": False}
    stream = torch.cuda.current_stream()
    if lib.ptxb_baseline_run(h, ptrs(ins_list), ptrs(ref_outs), ctypes.c_void_p(stream.cuda_stream), err, 1024) != 0:
        return {"error": "fp32 reference: " + err.value.decode(), "ok": False}
    torch.cuda.synchronize()
    lib.ptxb_baseline_destroy(h)
    ns = {}
    exec(definition["reference"], ns)  # the suite's own definition: trusted text of this checkout
    def_out, def_lse = ns["run"](**ins)
    sdpa = sdpa_math_fp32(ins, q_starts, kv_starts, causal, scale)
    torch.cuda.synchronize()
    (o, lse), (ro, rlse) = ours_outs, ref_outs
    pairs = {
        "ours_vs_fp32_reference": {"output": compare(o, ro, atol, rtol), "lse": compare(lse, rlse, atol, rtol)},
        "fp32_reference_vs_definition_reference": {"output": compare(ro, def_out, atol, rtol),
                                                   "lse": compare(rlse, def_lse, atol, rtol)},
        "fp32_reference_vs_torch_sdpa_math_fp32": {"output": compare(ro, sdpa, atol, rtol)},
        "ours_vs_torch_sdpa_math_fp32": {"output": compare(o, sdpa, atol, rtol)},
    }
    ok = all(c["ok"] for pair in pairs.values() for c in pair.values())
    return {"tolerance": {"atol": atol, "rtol": rtol}, "torch_sdpa": "F.scaled_dot_product_attention(enable_gqa=True), "
            "SDPBackend.MATH, fp32 inputs, explicit bottom-right causal mask" if causal else
            "F.scaled_dot_product_attention(enable_gqa=True), SDPBackend.MATH, fp32 inputs",
            "pairs": pairs, "ok": ok}


def crosscheck_line(task, c):
    if "error" in c:
        return f"{task:42s} crosscheck FAILED: {c['error']}"
    parts = []
    for name, pair in c["pairs"].items():
        parts.append(name + " " + ", ".join(f"{k} max|d| {v['max_abs_diff']:.2e} ({v['outside_tolerance']} of "
                                            f"{v['elements']} outside, {v['nonfinite']} non-finite)"
                                            for k, v in pair.items()))
    return f"{task:42s} crosscheck {'agree' if c['ok'] else 'DISAGREE'}: " + "; ".join(parts)


def make_inputs(task, gen, lib, root):
    t = task
    if t.startswith("gqa"):
        return gqa_inputs(task, gen, lib, root)
    if t.startswith("gemm"):
        M, N, K = 8192, 7168, 5120
        A = torch.randn(M, K, dtype=torch.bfloat16, device="cuda", generator=gen)
        B = torch.randn(N, K, dtype=torch.bfloat16, device="cuda", generator=gen)
        C = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
        return [A, B], [C], lambda: torch.matmul(A, B.T), {}
    D = int(t.split("_d")[1].split("_")[0])
    causal = t.endswith("_causal")
    B, H, S = 4, 48, 4096
    q, k, v = (torch.randn(B, H, S, D, dtype=torch.bfloat16, device="cuda", generator=gen) for _ in range(3))
    if t.startswith("mha_with_lse"):
        O = torch.empty(B, H, S, D, dtype=torch.bfloat16, device="cuda")
        L = torch.empty(B, H, S, dtype=torch.float32, device="cuda")
        fn = lambda: torch.ops.aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False)
        return [q, k, v], [O, L], fn, {}
    # backward: O and L from the forward on the same q, k, v; time the backward only
    qg, kg, vg = (x.clone().requires_grad_(True) for x in (q, k, v))
    out = torch.ops.aten._scaled_dot_product_cudnn_attention(qg, kg, vg, None, True, 0.0, causal, False)
    O, L = out[0].detach(), out[1].detach().reshape(B, H, S).float().contiguous()
    dO = torch.randn(B, H, S, D, dtype=torch.bfloat16, device="cuda", generator=gen)
    dq, dk, dv = (torch.empty(B, H, S, D, dtype=torch.bfloat16, device="cuda") for _ in range(3))
    out0 = out[0]
    fn = lambda: torch.autograd.grad(out0, (qg, kg, vg), dO, retain_graph=True)
    return [q, k, v, O, dO, L], [dq, dk, dv], fn, {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--tasks", nargs="+", required=True)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    lib = ctypes.CDLL(args.lib)
    lib.ptxb_baseline_create.restype = ctypes.c_void_p
    lib.ptxb_baseline_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int]
    lib.ptxb_baseline_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_char_p, ctypes.c_int]
    lib.ptxb_baseline_describe.restype = ctypes.c_char_p
    lib.ptxb_baseline_describe.argtypes = [ctypes.c_void_p]
    lib.ptxb_baseline_destroy.argtypes = [ctypes.c_void_p]
    if hasattr(lib, "ptxb_reference_create"):
        lib.ptxb_reference_create.restype = ctypes.c_void_p
        lib.ptxb_reference_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                                              ctypes.c_char_p, ctypes.c_int]
    lib.ptxb_task_input.restype = ctypes.c_int
    lib.ptxb_task_input.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_void_p,
                                    ctypes.c_int64, ctypes.c_char_p, ctypes.c_int]

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    results = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "cudnn": torch.backends.cudnn.version(), "l2_flush_bytes": 2 * l2,
               "method": "CUDA events around one call, L2 flushed before each call, calls alternate", "tasks": []}
    failures = 0
    for task in args.tasks:
        try:
            row = run_task(task, lib, args, flush)
        except Exception as e:  # noqa: BLE001 - one task's failure is recorded, the others still run
            row = {"task": task, "error": repr(e)[:500]}
            print(f"{task}: FAILED: {e!r}"[:600], file=sys.stderr)
        failures += 1 if "error" in row or not row.get("crosscheck", {"ok": True})["ok"] else 0
        results["tasks"].append(row)
        with open(args.out, "w") as f:  # after every task: a run cut short keeps what it measured
            json.dump(results, f, indent=2)
    return 1 if failures else 0


def run_task(task, lib, args, flush):
    """One task: our baseline and PyTorch on the same inputs; for GQA the cross-check first."""
    stream = torch.cuda.current_stream()
    gen = torch.Generator(device="cuda").manual_seed(1234)
    try:
        ins, outs, torch_fn, info = make_inputs(task, gen, lib, args.root)
    except Exception as e:  # noqa: BLE001
        raise RuntimeError(f"inputs: {e!r}") from e
    ptrs = lambda ts: (ctypes.c_void_p * len(ts))(*[t.data_ptr() for t in ts])
    err = ctypes.create_string_buffer(1024)
    h = lib.ptxb_baseline_create(args.root.encode(), task.encode(), ptrs(ins), ptrs(outs),
                                 ctypes.c_void_p(stream.cuda_stream), b"", err, 1024)
    if not h:
        raise RuntimeError("our baseline: " + err.value.decode())
    in_ptrs, out_ptrs = ptrs(ins), ptrs(outs)

    def ours():
        if lib.ptxb_baseline_run(h, in_ptrs, out_ptrs, ctypes.c_void_p(stream.cuda_stream), err, 1024) != 0:
            raise RuntimeError(err.value.decode())

    row = {"task": task, "ours": lib.ptxb_baseline_describe(h).decode()}
    if "crosscheck_inputs" in info:
        ours()
        torch.cuda.synchronize()
        try:
            row["crosscheck"] = gqa_crosscheck(lib, args.root, task, ins, outs, ptrs, info["crosscheck_inputs"])
        except Exception as e:  # noqa: BLE001 - recorded as a failed cross-check; the timing still runs
            row["crosscheck"] = {"error": repr(e)[:500], "ok": False}
        print(crosscheck_line(task, row["crosscheck"]), flush=True)

    fns = {"ours": ours, "torch": torch_fn}
    if "torch_attention_only" in info:
        fns["torch_attention_only"] = info["torch_attention_only"]
    times = {name: [] for name in fns}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(args.warmup + args.iterations):
        order = tuple(fns) if i % 2 == 0 else tuple(reversed(fns))
        for name in order:
            flush.zero_()
            torch.cuda.synchronize()
            start.record()
            fns[name]()
            end.record()
            end.synchronize()
            if i >= args.warmup:
                times[name].append(start.elapsed_time(end))
    # the same inputs must give the same answer (forward/GEMM outputs are comparable directly)
    ours()
    torch.cuda.synchronize()
    check = None
    if not task.startswith("mha_bwd"):
        ref = torch_fn()
        ref0 = ref if isinstance(ref, torch.Tensor) else ref[0]
        check = float((outs[0].float() - ref0.float()).abs().max())
    med = {k: statistics.median(v) for k, v in times.items()}
    ratios = [o / t for o, t in zip(times["ours"], times["torch"])]
    row.update({"ours_median_ms": med["ours"], "torch_median_ms": med["torch"],
                "ratio_of_medians": med["ours"] / med["torch"], "median_of_pair_ratios": statistics.median(ratios),
                "ours_p10_ms": sorted(times["ours"])[len(times["ours"]) // 10],
                "torch_p10_ms": sorted(times["torch"])[len(times["torch"]) // 10],
                "max_abs_diff_vs_torch": check, "samples": len(ratios)})
    for name in fns:
        if name not in ("ours", "torch"):
            row[f"{name}_median_ms"] = statistics.median(times[name])
    row.update({k: v for k, v in info.items() if isinstance(v, str)})
    print(f"{task:28s} ours {med['ours']:.4f} ms  torch {med['torch']:.4f} ms  ours/torch {row['ratio_of_medians']:.3f}"
          f" (median pair ratio {row['median_of_pair_ratios']:.3f})", flush=True)
    lib.ptxb_baseline_destroy(h)
    return row


if __name__ == "__main__":
    sys.exit(main())
