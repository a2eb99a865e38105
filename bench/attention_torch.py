#!/usr/bin/env python3
"""PyTorch's cuDNN attention on the four headline workloads, timed the way ptxbench-attention-probe
times ours (median of per-iteration CUDA-event times after warm-up, no L2 flush), and the side-by-side
table: our cuDNN baseline (read from the probe's JSON, one file per libcudnn it was run against) vs
PyTorch's `torch.ops.aten._scaled_dot_product_cudnn_attention` forward and its backward.

Run on the GPU host with its python3 (torch 2.11):
    python3 bench/attention_torch.py --ours probe_system.json --ours probe_torchlib.json --out attention_baseline.json
"""

import argparse
import datetime
import json
import math
import statistics
import sys

HEADLINE = {"B": 4, "H": 48, "S": 4096, "D": 128}
WORKLOADS = [("mha_fwd", False, False), ("mha_fwd_causal", False, True), ("mha_bwd", True, False),
             ("mha_bwd_causal", True, True)]
MAX_RATIO = 1.05


def median_ms(torch, fn, warmup, iterations):
    for _ in range(warmup):
        fn()
    stream = torch.cuda.current_stream()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iterations)]
    for start, end in pairs:
        start.record(stream)
        fn()
        end.record(stream)
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in pairs)


def torch_workload(torch, causal, backward, shape, warmup, iterations, seed):
    """Median ms of PyTorch's cuDNN forward, or of its backward alone; and how the backward was called."""
    b, h, s, d = shape["B"], shape["H"], shape["S"], shape["D"]
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q, k, v, d_o = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(4))
    aten = torch.ops.aten

    def forward():
        return aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False)

    if not backward:
        return median_ms(torch, forward, warmup, iterations), "aten._scaled_dot_product_cudnn_attention"
    fwd = forward()
    try:
        def bwd_op():
            return aten._scaled_dot_product_cudnn_attention_backward(
                d_o, q, k, v, fwd[0], fwd[1], fwd[6], fwd[7], None, fwd[2], fwd[3], fwd[4], fwd[5], 0.0, causal)
        bwd_op()
        return median_ms(torch, bwd_op, warmup, iterations), "aten._scaled_dot_product_cudnn_attention_backward"
    except Exception as error:  # the private op's schema moves between releases; autograd does not
        from torch.nn.attention import SDPBackend, sdpa_kernel
        qr, kr, vr = (t.detach().requires_grad_() for t in (q, k, v))
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = torch.nn.functional.scaled_dot_product_attention(qr, kr, vr, is_causal=causal)

        def bwd_autograd():
            return torch.autograd.grad(out, (qr, kr, vr), d_o, retain_graph=True)
        return (median_ms(torch, bwd_autograd, warmup, iterations),
                f"autograd backward only (direct op failed: {type(error).__name__}: {error})")


def read_ours(path):
    with open(path) as f:
        doc = json.load(f)
    env = doc.get("environment", {})
    runs = {}
    for rec in doc.get("records", []):
        if rec.get("what") != "baseline":
            continue
        runs[rec["workload"]] = rec
    return {"file": path, "cudnn_runtime_version": env.get("cudnn_runtime_version"),
            "libraries_loaded": env.get("libraries_loaded"), "records": runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ours", action="append", default=[], help="probe JSON (repeatable, one per libcudnn)")
    ap.add_argument("--out", required=True, help="where to write the side-by-side JSON")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()

    import torch
    torch_cudnn = torch.backends.cudnn.version()
    torch_cudnn_str = f"{torch_cudnn // 10000}.{torch_cudnn // 100 % 100}.{torch_cudnn % 100}" if torch_cudnn else None
    ours = [read_ours(p) for p in args.ours]
    rows = []
    for name, backward, causal in WORKLOADS:
        torch_ms, method = torch_workload(torch, causal, backward, HEADLINE, args.warmup, args.iterations, args.seed)
        row = {"workload": name, "shape": HEADLINE, "causal": causal, "torch_ms": torch_ms, "torch_call": method,
               "ours": []}
        for run in ours:
            rec = run["records"].get(name)
            entry = {"probe_file": run["file"], "cudnn": run["cudnn_runtime_version"],
                     "libraries": run["libraries_loaded"]}
            if rec and rec.get("median_ms") is not None:
                entry.update(median_ms=rec["median_ms"], ratio_vs_torch=rec["median_ms"] / torch_ms,
                             numerics_pass=rec.get("numerics", {}).get("pass"), description=rec.get("description"))
            else:
                entry["error"] = rec.get("error", "no baseline record") if rec else "no baseline record"
            row["ours"].append(entry)
        rows.append(row)

    # The acceptance comparison is like for like: our binary on the libcudnn PyTorch itself uses.
    same_lib = [e for r in rows for e in r["ours"] if e.get("cudnn") == torch_cudnn_str]
    judged = same_lib if same_lib else [e for r in rows for e in r["ours"]]
    ratios = [e.get("ratio_vs_torch") for e in judged]
    verdict = {"max_ratio_allowed": MAX_RATIO,
               "judged_on": f"our probe with cuDNN {torch_cudnn_str} (PyTorch's)" if same_lib else "all probe runs",
               "max_ratio": max((r for r in ratios if r is not None), default=None),
               "pass": bool(ratios) and all(r is not None and r <= MAX_RATIO for r in ratios)}
    doc = {"format": "ptxbench.attention_baseline/1",
           "meta": {"argv": sys.argv, "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                    "torch": torch.__version__, "torch_cudnn": torch_cudnn_str,
                    "gpu": torch.cuda.get_device_name(), "iterations": args.iterations, "warmup": args.warmup,
                    "seed": args.seed, "timing": "median of per-iteration CUDA events, warm L2, same process "
                                                 "per side; PyTorch and our probe run one after the other"},
           "workloads": rows, "verdict": verdict}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)

    print(f"\nPyTorch {torch.__version__} (cuDNN {torch_cudnn_str}) on {torch.cuda.get_device_name()}")
    print(f"| workload | torch ms | " + " | ".join(f"ours cuDNN {r['cudnn_runtime_version']} ms (ratio)" for r in ours)
          + " |")
    print("|---|---|" + "---|" * len(ours))
    for row in rows:
        cells = []
        for e in row["ours"]:
            cells.append(f"{e['median_ms']:.3f} ({e['ratio_vs_torch']:.3f})" if "median_ms" in e else "FAILED")
        print(f"| {row['workload']} | {row['torch_ms']:.3f} | " + " | ".join(cells) + " |")
    for row in rows:
        if row["torch_call"].startswith("autograd"):
            print(f"note: {row['workload']}: {row['torch_call']}")
    print(f"verdict ({verdict['judged_on']}): max ratio {verdict['max_ratio']} -> "
          f"{'PASS' if verdict['pass'] else 'FAIL'} (limit {MAX_RATIO})")
    print(f"wrote {args.out}")
    return 0 if verdict["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
