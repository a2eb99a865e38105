#!/usr/bin/env python3
"""Sums the CPU seconds bench/cpu/cpu_time_launcher.sh logged for a build, per kind of step, per
target and per area, and estimates the wall time of the same build on an idle 2-core machine.

    bench/cpu/cpu_report.py BUILD_DIR CPU_LOG [--total-cpu S] [--json OUT.json] [--jobs 2]

Why an estimate and not a clock: the development machine is shared, so wall times measured on it
mean nothing; CPU seconds do not depend on how many other builds run beside this one (to a few per
cent: caches). The estimate replays the build's own dependency graph (`ninja -t graph`) with each
step lasting its CPU seconds on JOBS workers: ninja 1.11 starts ready steps in the order they
become ready, which the replay imitates (FIFO); a critical-path-first order gives the lower bound.
Steps the launcher does not see (static-library archiving, gtest discovery after a link, ninja
itself) are the difference between --total-cpu (the CPU time of the whole `cmake --build`) and the
logged sum; the report states that difference and adds it to the estimate as serial time, which
overstates rather than understates the wall time.
"""

import argparse
import collections
import heapq
import json
import os
import re
import subprocess
import sys


def read_log(path):
    """{output: cpu seconds}; a step that ran twice (a rebuild) counts its last run."""
    steps = {}
    with open(path) as f:
        for line in f:
            parts = line.split(None, 3)
            if len(parts) < 4:
                continue
            try:
                user, sys_, _wall = float(parts[0]), float(parts[1]), float(parts[2])
            except ValueError:
                continue
            steps[parts[3].strip()] = user + sys_
    return steps


def kind_of(output):
    if output.endswith(".gch"):
        return "pch"
    if output.endswith(".cu.o"):
        return "cuda"
    if output.endswith(".o"):
        return "c++"
    return "link"


def target_of(output):
    m = re.search(r"CMakeFiles/([^/]+)\.dir/", output)
    if m:
        return m.group(1)
    name = os.path.basename(output)
    name = re.sub(r"^lib", "", name)
    name = re.sub(r"\.(so|a)$", "", name)
    return name


def area_of(output):
    """src/<area> or tests/<area> from the object's folder; links go to their target's side."""
    m = re.match(r"(src|tests)/([^/]+)(?:/([^/]+))?/CMakeFiles/", output)
    if m:
        if m.group(1) == "src" and m.group(2) == "gpu" and m.group(3):
            return "src/gpu/" + m.group(3)
        return m.group(1) + "/" + m.group(2)
    name = target_of(output)
    if name.endswith("_tests") or name.startswith("exploit_") or "fake" in name or "bench" in name:
        return "tests (links)"
    return "src (links)"


def read_graph(build_dir):
    """Build edges of the ninja graph: [(outputs, inputs)] with phony edges folded into their inputs."""
    text = subprocess.run(["ninja", "-C", build_dir, "-t", "graph", "all"], capture_output=True, text=True,
                          check=True).stdout
    label = {}
    is_edge = {}
    ins = collections.defaultdict(list)   # edge node -> input file nodes
    outs = collections.defaultdict(list)  # edge node -> output file nodes
    direct = []                           # (in, out, rule) for one-input one-output edges
    for line in text.splitlines():
        m = re.match(r'"(0x[0-9a-f]+)" \[label="([^"]*)"(, shape=ellipse)?\]', line)
        if m:
            label[m.group(1)] = m.group(2)
            is_edge[m.group(1)] = bool(m.group(3))
            continue
        m = re.match(r'"(0x[0-9a-f]+)" -> "(0x[0-9a-f]+)"(.*)', line)
        if m:
            a, b, rest = m.groups()
            if "arrowhead=none" in rest:
                ins[b].append(a)
            elif 'label="' in rest:
                direct.append((a, b, re.search(r'label="([^"]*)"', rest).group(1)))
            else:
                outs[a].append(b)
    edges = []
    for e, flag in is_edge.items():
        if flag:
            # An output nothing reads (the test list a gtest discovery writes) may have no label.
            edges.append((label[e], [label.get(o, o) for o in outs[e]], [label.get(i, i) for i in ins[e]]))
    for a, b, rule in direct:
        edges.append((rule, [label.get(b, b)], [label.get(a, a)]))
    return edges


def simulate(edges, cost, jobs, critical_first):
    """Replays the graph on `jobs` workers; returns the makespan and the critical path length."""
    producer = {}
    for idx, (_rule, outputs, _inputs) in enumerate(edges):
        for o in outputs:
            producer[o] = idx
    deps = [set() for _ in edges]
    users = [set() for _ in edges]
    for idx, (_rule, _outputs, inputs) in enumerate(edges):
        for i in inputs:
            p = producer.get(i)
            if p is not None and p != idx:
                deps[idx].add(p)
                users[p].add(idx)
    dur = [sum(cost(o) for o in outs) if rule != "phony" else 0.0 for rule, outs, _ in edges]
    # Longest path from each edge to the end (memoised, iterative over a topological order).
    order, pending = [], [len(d) for d in deps]
    ready = [i for i, n in enumerate(pending) if n == 0]
    while ready:
        i = ready.pop()
        order.append(i)
        for u in users[i]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    tail = [0.0] * len(edges)
    for i in reversed(order):
        tail[i] = dur[i] + max((tail[u] for u in users[i]), default=0.0)
    critical = max(tail, default=0.0)

    pending = [len(d) for d in deps]
    seq = 0
    ready = []
    for i, n in enumerate(pending):
        if n == 0:
            heapq.heappush(ready, ((-tail[i] if critical_first else seq), i))
            seq += 1
    running = []  # (finish time, edge)
    now = 0.0
    while ready or running:
        while ready and len(running) < jobs:
            _, i = heapq.heappop(ready)
            heapq.heappush(running, (now + dur[i], i))
        now, i = heapq.heappop(running)
        for u in users[i]:
            pending[u] -= 1
            if pending[u] == 0:
                heapq.heappush(ready, ((-tail[u] if critical_first else seq), u))
                seq += 1
    return now, critical


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir")
    ap.add_argument("cpu_log")
    ap.add_argument("--total-cpu", type=float, help="CPU seconds of the whole `cmake --build` (/usr/bin/time)")
    ap.add_argument("--configure-cpu", type=float, default=0.0, help="CPU seconds of the configure step")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json")
    args = ap.parse_args()

    steps = read_log(args.cpu_log)
    logged = sum(steps.values())
    by_kind = collections.Counter()
    by_target = collections.Counter()
    by_area = collections.Counter()
    count_kind = collections.Counter()
    for out, s in steps.items():
        by_kind[kind_of(out)] += s
        count_kind[kind_of(out)] += 1
        by_target[target_of(out)] += s
        by_area[area_of(out)] += s
    product = sum(s for o, s in steps.items() if area_of(o).startswith("src"))

    edges = read_graph(args.build_dir)
    unlogged = max(0.0, (args.total_cpu or logged) - logged)
    fifo, critical = simulate(edges, lambda o: steps.get(o, 0.0), args.jobs, critical_first=False)
    best, _ = simulate(edges, lambda o: steps.get(o, 0.0), args.jobs, critical_first=True)
    estimate = fifo + unlogged + args.configure_cpu

    lines = []
    lines.append(f"logged build steps: {len(steps)}, {logged:.0f} CPU s "
                 f"({', '.join(f'{k} {by_kind[k]:.0f} s in {count_kind[k]}' for k in sorted(by_kind))})")
    lines.append(f"  product (src/ and its links): {product:.0f} s; tests: {logged - product:.0f} s")
    if args.total_cpu:
        lines.append(f"whole `cmake --build`: {args.total_cpu:.0f} CPU s; not seen by the launcher "
                     f"(archiving, test discovery, ninja): {unlogged:.0f} s")
    if args.configure_cpu:
        lines.append(f"configure: {args.configure_cpu:.0f} CPU s")
    lines.append(f"estimated wall on an idle {args.jobs}-core machine: {estimate:.0f} s = {estimate / 60:.1f} min "
                 f"(replay {fifo:.0f} s in ninja's order, {best:.0f} s critical-path first; critical path "
                 f"{critical:.0f} s; + {unlogged:.0f} s unlogged + {args.configure_cpu:.0f} s configure, as serial)")
    lines.append("")
    lines.append("by area (CPU s):")
    for a, s in by_area.most_common():
        lines.append(f"  {s:8.1f}  {a}")
    lines.append("")
    lines.append(f"top {args.top} targets (CPU s):")
    for t, s in by_target.most_common(args.top):
        lines.append(f"  {s:8.1f}  {t}")
    lines.append("")
    lines.append(f"top {args.top} steps (CPU s):")
    for o, s in sorted(steps.items(), key=lambda kv: -kv[1])[:args.top]:
        lines.append(f"  {s:8.1f}  {o}")
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"logged_cpu_s": round(logged, 1), "total_build_cpu_s": args.total_cpu,
                       "configure_cpu_s": args.configure_cpu, "unlogged_cpu_s": round(unlogged, 1),
                       "product_cpu_s": round(product, 1), "by_kind": {k: round(v, 1) for k, v in by_kind.items()},
                       "steps_by_kind": dict(count_kind),
                       "by_area": {k: round(v, 1) for k, v in by_area.most_common()},
                       "by_target": {k: round(v, 1) for k, v in by_target.most_common()},
                       "jobs": args.jobs, "replay_fifo_s": round(fifo, 1), "replay_critical_first_s": round(best, 1),
                       "critical_path_s": round(critical, 1), "estimated_wall_s": round(estimate, 1)}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
