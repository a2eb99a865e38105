#!/usr/bin/env python3
"""Our vendor baseline (through libptxbench_baseline.so) and PyTorch side by side, in one process, on
the same tensors: calls alternate (ours, torch, ours, torch ... with the order swapped every round),
each after an L2 flush of twice the L2 size, timed with CUDA events; medians and the ratio
ours/torch are printed and written as JSON. Usage:

  baseline_vs_torch.py --lib build/bin/libptxbench_baseline.so --root . --tasks gemm_n7168_k5120 --out f.json
"""
import argparse, ctypes, json, math, statistics, sys, time

import torch


def make_inputs(task, gen):
    t = task
    if t.startswith("gemm"):
        M, N, K = 8192, 7168, 5120
        A = torch.randn(M, K, dtype=torch.bfloat16, device="cuda", generator=gen)
        B = torch.randn(N, K, dtype=torch.bfloat16, device="cuda", generator=gen)
        C = torch.empty(M, N, dtype=torch.bfloat16, device="cuda")
        return [A, B], [C], lambda: torch.matmul(A, B.T)
    D = int(t.split("_d")[1].split("_")[0])
    causal = t.endswith("_causal")
    B, H, S = 4, 48, 4096
    q, k, v = (torch.randn(B, H, S, D, dtype=torch.bfloat16, device="cuda", generator=gen) for _ in range(3))
    if t.startswith("mha_with_lse"):
        O = torch.empty(B, H, S, D, dtype=torch.bfloat16, device="cuda")
        L = torch.empty(B, H, S, dtype=torch.float32, device="cuda")
        fn = lambda: torch.ops.aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False)
        return [q, k, v], [O, L], fn
    # backward: O and L from the forward on the same q, k, v; time the backward only
    qg, kg, vg = (x.clone().requires_grad_(True) for x in (q, k, v))
    out = torch.ops.aten._scaled_dot_product_cudnn_attention(qg, kg, vg, None, True, 0.0, causal, False)
    O, L = out[0].detach(), out[1].detach().reshape(B, H, S).float().contiguous()
    dO = torch.randn(B, H, S, D, dtype=torch.bfloat16, device="cuda", generator=gen)
    dq, dk, dv = (torch.empty(B, H, S, D, dtype=torch.bfloat16, device="cuda") for _ in range(3))
    out0 = out[0]
    fn = lambda: torch.autograd.grad(out0, (qg, kg, vg), dO, retain_graph=True)
    return [q, k, v, O, dO, L], [dq, dk, dv], fn


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

    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream()
    results = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "cudnn": torch.backends.cudnn.version(), "l2_flush_bytes": 2 * l2,
               "method": "CUDA events around one call, L2 flushed before each call, calls alternate", "tasks": []}
    for task in args.tasks:
        gen = torch.Generator(device="cuda").manual_seed(1234)
        ins, outs, torch_fn = make_inputs(task, gen)
        ptrs = lambda ts: (ctypes.c_void_p * len(ts))(*[t.data_ptr() for t in ts])
        err = ctypes.create_string_buffer(1024)
        h = lib.ptxb_baseline_create(args.root.encode(), task.encode(), ptrs(ins), ptrs(outs),
                                     ctypes.c_void_p(stream.cuda_stream), b"", err, 1024)
        if not h:
            results["tasks"].append({"task": task, "error": err.value.decode()})
            print(f"{task}: our baseline failed: {err.value.decode()}", file=sys.stderr)
            continue
        in_ptrs, out_ptrs = ptrs(ins), ptrs(outs)

        def ours():
            if lib.ptxb_baseline_run(h, in_ptrs, out_ptrs, ctypes.c_void_p(stream.cuda_stream), err, 1024) != 0:
                raise RuntimeError(err.value.decode())

        times = {"ours": [], "torch": []}
        fns = {"ours": ours, "torch": torch_fn}
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for i in range(args.warmup + args.iterations):
            order = ("ours", "torch") if i % 2 == 0 else ("torch", "ours")
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
        row = {"task": task, "ours": lib.ptxb_baseline_describe(h).decode(),
               "ours_median_ms": med["ours"], "torch_median_ms": med["torch"],
               "ratio_of_medians": med["ours"] / med["torch"], "median_of_pair_ratios": statistics.median(ratios),
               "ours_p10_ms": sorted(times["ours"])[len(times["ours"]) // 10],
               "torch_p10_ms": sorted(times["torch"])[len(times["torch"]) // 10],
               "max_abs_diff_vs_torch": check, "samples": len(ratios)}
        results["tasks"].append(row)
        print(f"{task:28s} ours {med['ours']:.4f} ms  torch {med['torch']:.4f} ms  ours/torch {row['ratio_of_medians']:.3f}"
              f" (median pair ratio {row['median_of_pair_ratios']:.3f})")
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
