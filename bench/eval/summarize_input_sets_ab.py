#!/usr/bin/env python3
"""Summarises one bench/eval/input_sets_ab.sh run from its verdict lists (<build><sets>_r<round>.json,
gzipped or not, so a committed folder can be summarised again): per example and configuration the
mean over the rounds of the speedup, the candidate's and the reference's median times, the
reference's median GPU-busy time (its kernels' own durations, without the gaps between them) and the
median host-side phases of a timed pair (how long the harness spent between the candidate's call and
the reference's, and on the whole pair); then each effect — the set count within a build, each build
step at equal set counts — in % of the first configuration, with the noise of a difference of two
round means. Effects name each build's commit (from its verdicts), so that runs whose middle builds
differ pool only what they share (bench/eval/pool_input_sets_ab.py).

  summarize_input_sets_ab.py RESULTS ROUNDS "SET COUNTS" BUILD... > ab_summary.txt   (also writes RESULTS/ab_summary.{json,txt})

Exit 0 when every configuration gave every example a speedup in every round, 1 otherwise.
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from verdict_lists import read_verdict_list  # noqa: E402


def median_or_none(xs):
    xs = [x for x in xs or [] if isinstance(x, (int, float))]
    return statistics.median(xs) if xs else None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def fixed(x, width, places):
    """x with `places` decimals in `width` columns, or '-' where the verdicts had no value."""
    return f"{x:{width}.{places}f}" if x is not None else f"{'-':>{width}s}"


def sd(xs):
    return statistics.stdev(xs) if len(xs) > 1 else float("nan")


def pct(a, b):
    return None if a is None or b is None else 100 * (b - a) / a


def main():
    if len(sys.argv) < 5:
        print(__doc__.strip().splitlines()[-3].strip(), file=sys.stderr)
        return 2
    results, rounds, set_counts, builds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
    configs = [b + n for b in builds for n in set_counts]
    rows = {}  # file -> config -> list of per-round records
    commits = {}  # build -> the short commit its verdicts name (effects are labelled with it, so pooled runs match by commit)
    problems = 0  # a round without verdicts, a verdict without a speedup: the check fails, the rest is still summarised
    for c in configs:
        for r in range(1, rounds + 1):
            try:
                verdicts = read_verdict_list(f"{results}/{c}_r{r}.json")
            except (OSError, ValueError) as e:
                print(f"{c} round {r}: no verdicts ({e})")
                problems += 1
                continue
            for v in verdicts:
                t = v.get("timing") or {}
                if v.get("status") != "PASSED" or "speedup" not in t:
                    print(f"{c} round {r}: {v.get('file')} {v.get('status')} (no speedup)")
                    problems += 1
                    continue
                if t.get("input_sets") != int(c[-1]):
                    print(f"{c} round {r}: {v['file']} ran with {t.get('input_sets')} input sets")
                commit = ((v.get("environment") or {}).get("ptxbench") or {}).get("git_commit")
                if commit:
                    commits.setdefault(c[:-1], commit[:7])
                details = next((s.get("details") or {} for s in v.get("stages", []) if s.get("stage") == "timing"), {})
                phases = details.get("pair_phase_median_ms") or {}
                rows.setdefault(v["file"], {}).setdefault(c, []).append({
                    "speedup": t["speedup"], "candidate_ms": t["candidate"]["median_ms"],
                    "reference_ms": t["reference"]["median_ms"],
                    "reference_busy_ms": median_or_none(details.get("reference_busy_ms")),
                    "between_calls_ms": phases.get("audit_and_hygiene"), "pair_ms": phases.get("pair")})
    summary, ok = {}, True
    lines = [f"{'example':28s} {'config':8s} {'speedup mean':>12s} {'sd':>7s} {'cand ms':>8s} {'ref ms':>8s} "
             f"{'ref busy':>8s} {'between':>7s} {'pair':>6s}  rounds",
             "(ref busy: the reference's kernels alone; between: the harness's host time from the candidate's "
             "call to the reference's; pair: a timed pair's host time; ms, round means)"]
    for f, by in rows.items():
        name = f.split("/")[-1]
        summary[name] = {}
        for c in configs:
            xs = by.get(c, [])
            if not xs:
                ok = False
                continue
            s = [x["speedup"] for x in xs]
            m = {"speedups": s, "mean": statistics.fmean(s), "sd": sd(s)}
            for k in ("candidate_ms", "reference_ms", "reference_busy_ms", "between_calls_ms", "pair_ms"):
                m[k] = mean([x[k] for x in xs])
            summary[name][c] = m
            lines.append(f"{name:28s} {c:8s} {m['mean']:12.4f} {m['sd']:7.4f} {m['candidate_ms']:8.5f} {m['reference_ms']:8.5f} "
                         f"{fixed(m['reference_busy_ms'], 8, 5)} {fixed(m['between_calls_ms'], 7, 3)} {fixed(m['pair_ms'], 6, 2)}  "
                         + " ".join(f"{x:.4f}" for x in s))
    lines.append("")
    lines.append("effects in % of the first's mean speedup (candidate, reference, reference busy: % change of their median times):")
    def named(b):
        return f"{b} {commits[b]}" if b in commits else b
    effects = {f"sets ({named(b)}: {m} -> {n})": (b + m, b + n) for b in builds for m, n in zip(set_counts, set_counts[1:])}
    for a, b in zip(builds, builds[1:]):
        for n in set_counts:
            effects[f"build ({n} sets: {named(a)} -> {named(b)})"] = (a + n, b + n)
    if len(builds) > 2:
        for n in set_counts:
            effects[f"build ({n} sets: {named('before')} -> {named('after')})"] = ("before" + n, "after" + n)
    # P3's defaults; skipped without both
    effects[f"both ({named('before')} at 3 -> {named('after')} at 8)"] = ("before3", "after8")
    for f, by in summary.items():
        for label, (a, b) in effects.items():
            if a not in by or b not in by:
                continue
            A, B = by[a], by[b]
            d = pct(A["mean"], B["mean"])
            # the noise of a difference of two round means: each round mean's standard error, combined
            se = 100 * ((A["sd"] ** 2 + B["sd"] ** 2) / rounds) ** 0.5 / A["mean"]
            e = {"speedup_pct": d, "noise_se_pct": se, "candidate_pct": pct(A["candidate_ms"], B["candidate_ms"]),
                 "reference_pct": pct(A["reference_ms"], B["reference_ms"]),
                 "reference_busy_pct": pct(A["reference_busy_ms"], B["reference_busy_ms"])}
            by.setdefault("effects", {})[label] = e
            busy = f"{e['reference_busy_pct']:+6.2f} %" if e["reference_busy_pct"] is not None else "     -  "
            lines.append(f"{f:28s} {label:52s} speedup {d:+6.2f} % (se {se:4.2f})  candidate {e['candidate_pct']:+6.2f} %  "
                         f"reference {e['reference_pct']:+6.2f} %  busy {busy}")
    with open(f"{results}/ab_summary.json", "w") as out:
        json.dump({"rounds": rounds, "set_counts": set_counts, "builds": builds, "commits": commits, "examples": summary},
                  out, indent=1)
    with open(f"{results}/ab_summary.txt", "w") as out:
        out.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok and summary and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
