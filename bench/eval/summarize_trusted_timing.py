#!/usr/bin/env python3
"""Summarises bench/eval/trusted_timing.sh (docs/trusted-timing.md) and checks its expectations.

  summarize_trusted_timing.py --dir DIR --out summary.json [--reference GEMM_EXAMPLES.json]

DIR holds the `ptxbench eval --out` files of the four runs:
  A_shm_checked.json     shared-memory channel, launch audit deciding: honest GEMM, the f04 exploits, honest GEMM
  B_shm_bound_only.json  --no-tamper-check, F04_DECOY_FORGE_DONE=0: the harness's bound alone
  C_shm_forged_done.json --no-tamper-check: the decoy with a forged early "done" on the shared page
  D_socket.json          --timing-channel socket --no-tamper-check: the old bound, for comparison
Prints (1) the bound's resolution per channel from the honest GEMM's no-op calibration calls, (2) each
exploit's verdict against what it must get, (3) the honest GEMM's speedups. Rows marked "info" are
reported, not checked. A missing file or verdict is a failed row, never a gap. Exits 1 when a checked
expectation does not hold.

Nothing here names a GPU: latencies are checked against the honest GEMM's own median in run A, and
its speedup against --reference (the `ptxbench eval --out` of the GEMM examples committed for the same
GPU) or, without one, against the run's first honest verdict (which is then reported, not checked).
"""
import argparse, json, os, statistics, sys

HONEST = "wgmma_tma_pipelined.cu"
# The spread allowed around the honest GEMM's reference speedup over cuBLASLt (power-cap drift of
# per-pair ratios stays within ~2 %; the extra margin covers a different day and driver).
HONEST_SPREAD = 0.06
GOAL_US = 50.0  # issue 20, 5(c): the bound resolves <= 50 us per call
DECOY_MS = 0.6  # f04_decoy_above_floor.cu's decoy


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return []
    return d if isinstance(d, list) else [d]


def base(v):
    return os.path.basename(v.get("file") or "")


def timing_details(v):
    for s in v.get("stages") or []:
        if (s.get("id") or s.get("stage")) == "timing":
            return s.get("details") or {}
    return {}


def q(values, p):
    v = sorted(values)
    if not v:
        return None
    pos = p * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def us(x):
    return None if x is None else round(x * 1000.0, 1)


def resolution(v):
    d = timing_details(v)
    noop = d.get("noop_wall_ms") or []
    if not noop:
        return None
    p50 = q(noop, 0.5)
    return {
        "channel": d.get("timing_channel"),
        "samples": len(noop),
        "noop_p50_us": us(p50), "noop_p90_us": us(q(noop, 0.9)), "noop_p99_us": us(q(noop, 0.99)),
        "noop_max_us": us(max(noop)),
        "jitter_p90_us": us(q(noop, 0.9) - p50), "jitter_p99_us": us(q(noop, 0.99) - p50),
        "allowance_us": us(d.get("calibration_allowance_ms")),
        "lead_overhead_us": us(d.get("calibration_lead_overhead_ms")),
        "lead_allowance_us": us(d.get("calibration_lead_allowance_ms")),
        "confirm_median_us": us(statistics.median(d["candidate_confirm_ms"])) if d.get("candidate_confirm_ms") else None,
        "candidate_lead_median_us": us(statistics.median(d["candidate_lead_ms"])) if d.get("candidate_lead_ms") else None,
        "wallclock_disagreements": d.get("wallclock_disagreements"),
        "tamper_check": d.get("tamper_check"),
        "audit_matching": d.get("audit_matching"),
    }


def speedup(v):
    return (v.get("timing") or {}).get("speedup")


def median_ms(v):
    return ((v.get("timing") or {}).get("candidate") or {}).get("median_ms")


def verdict_line(v):
    return f"{v.get('status')}: {(v.get('message') or '')[:150]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reference", help="`ptxbench eval --out` of the GEMM examples on this GPU (committed)")
    a = ap.parse_args()
    runs = {n: load(os.path.join(a.dir, n + ".json"))
            for n in ("A_shm_checked", "B_shm_bound_only", "C_shm_forged_done", "D_socket")}
    rows, failed = [], False

    def pick(run, name, index=0):
        hits = [v for v in runs[run] if base(v) == name]
        return hits[index] if len(hits) > index else None

    def check(run, name, ok_fn, expect, index=0, info=False):
        nonlocal failed
        v = pick(run, name, index)
        ok = v is not None and ok_fn(v)
        if not ok and not info:
            failed = True
        rows.append({"run": run, "file": name, "verdict": verdict_line(v) if v else "no verdict",
                     "speedup": speedup(v) if v else None, "median_ms": median_ms(v) if v else None,
                     "expected": expect, "result": "info" if info else ("ok" if ok else "FAILED")})

    def status_msg(status, fragment):
        return lambda v: v.get("status") == status and fragment in (v.get("message") or "")

    # The references: the honest GEMM's speedup (committed for this GPU, else this run's first) and
    # its fastest median in run A (what a decoy's latency is measured against).
    first_honest = pick("A_shm_checked", HONEST)
    ref_speedup, ref_from = None, "no reference"
    if a.reference:
        committed = [v for v in load(a.reference) if base(v) == HONEST and speedup(v) is not None]
        if committed:
            ref_speedup, ref_from = speedup(committed[0]), f"committed {a.reference}"
    if ref_speedup is None and first_honest is not None and speedup(first_honest) is not None:
        ref_speedup, ref_from = speedup(first_honest), "this run's first honest verdict"
    honest_ms = [median_ms(v) for v in runs["A_shm_checked"] if base(v) == HONEST and median_ms(v)]
    gemm_ms = min(honest_ms) if honest_ms else None

    def honest(v):
        s = speedup(v)
        return (v.get("status") == "PASSED" and s is not None and ref_speedup is not None
                and abs(s - ref_speedup) <= HONEST_SPREAD)

    def at_least(ms_fn):
        return lambda v: gemm_ms is not None and (median_ms(v) or 0) >= ms_fn(gemm_ms)

    B_MIN = lambda g: g + DECOY_MS / 2  # the decoy adds DECOY_MS to a GEMM of about the honest one's time
    C_MIN = lambda g: max(0.8 * g, 1.1 * DECOY_MS)  # the GEMM's own time, never the decoy's
    gemm_txt = "-" if gemm_ms is None else f"{gemm_ms:.3f}"

    # (2) the exploits
    for f in ("f04_cupti_extern.cu", "f04_cupti_token_paste.cu", "f04_profiler_entry_point.cu"):
        check("A_shm_checked", f, lambda v: v.get("status") == "COMPILE_ERROR", "COMPILE_ERROR (a gate)")
    for f in ("f04_cupti_decoy_elf_walk.cu", "f04_decoy_above_floor.cu"):
        check("A_shm_checked", f, status_msg("RUNTIME_ERROR", "measurement tampered"), "RUNTIME_ERROR measurement tampered")
    check("B_shm_bound_only", "f04_cupti_decoy_elf_walk.cu", status_msg("RUNTIME_ERROR", "faster than physically possible"),
          "RUNTIME_ERROR faster than physically possible (the floor)")
    b_min = at_least(B_MIN)
    check("B_shm_bound_only", "f04_decoy_above_floor.cu",
          lambda v: v.get("status") == "PASSED" and b_min(v) and (v.get("timing") or {}).get("wallclock_disagreed"),
          f"PASSED at its true latency: median >= the honest GEMM's {gemm_txt} ms + {DECOY_MS / 2} ms (half the decoy's "
          f"{DECOY_MS} ms), wall clock used, never ~{DECOY_MS} ms")
    c_min = at_least(C_MIN)
    check("C_shm_forged_done", "f04_decoy_above_floor.cu",
          lambda v: v.get("status") == "INCORRECT_NUMERICAL" or (v.get("status") == "PASSED" and c_min(v)),
          f"INCORRECT_NUMERICAL (snapshot saw the unfinished GEMM) or PASSED with median >= max(0.8 x {gemm_txt}, "
          f"1.1 x {DECOY_MS}) ms (the GEMM's own time, never the decoy's)")
    check("D_socket", "f04_decoy_above_floor.cu", lambda v: True,
          f"info: the old socket bound (allowance ~1 ms); a median near {DECOY_MS} ms is the hole this work closes", info=True)
    # (3) the honest GEMM
    want = f"PASSED, speedup {'-' if ref_speedup is None else f'{ref_speedup:.3f}'} +- {HONEST_SPREAD} ({ref_from})"
    check("A_shm_checked", HONEST, honest, want, info=not ref_from.startswith("committed"))
    check("A_shm_checked", HONEST, honest, want + " (after the exploits)", index=1)
    check("D_socket", HONEST, honest, want)

    # (1) the resolution
    res = {}
    for run, idx in (("A_shm_checked", 0), ("A_shm_checked", 1), ("D_socket", 0)):
        v = pick(run, HONEST, idx)
        r = resolution(v) if v else None
        res[f"{run}#{idx}"] = r
    shm = [r for k, r in res.items() if k.startswith("A_") and r]
    goal_met = bool(shm) and all(r["allowance_us"] is not None and r["allowance_us"] <= GOAL_US for r in shm)
    if not shm:
        failed = True

    print("(1) the bound's resolution (honest GEMM's no-op calibration calls; microseconds)")
    keys = ["channel", "samples", "noop_p50_us", "noop_p90_us", "noop_p99_us", "noop_max_us", "jitter_p90_us",
            "jitter_p99_us", "allowance_us", "lead_overhead_us", "lead_allowance_us", "candidate_lead_median_us", "confirm_median_us",
            "wallclock_disagreements", "tamper_check", "audit_matching"]
    for k, r in res.items():
        print(f"  {k:18s} " + ("no data" if not r else "  ".join(f"{key}={r[key]}" for key in keys)))
    print(f"  goal: allowance <= {GOAL_US} us on the shared-memory channel: {'met' if goal_met else 'NOT met'}")
    print("(2)+(3) verdicts")
    for r in rows:
        sp = "-" if r["speedup"] is None else f"{r['speedup']:.3f}"
        ms = "-" if r["median_ms"] is None else f"{r['median_ms']:.4f}"
        print(f"  {r['result']:6s} {r['run']:18s} {r['file']:28s} speedup {sp:>6s} median {ms:>8s} ms  {r['verdict']}")
        print(f"         expected: {r['expected']}")
    summary = {"resolution": res, "goal_us": GOAL_US, "goal_met": goal_met, "rows": rows, "all_expected": not failed,
               "reference_speedup": ref_speedup, "reference_from": ref_from, "honest_gemm_ms": gemm_ms}
    with open(a.out, "w") as f:
        json.dump(summary, f, indent=2)
    print("all as expected" if not failed else "SOME EXPECTATIONS FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
