#pragma once
// Scoring coding agents like MiniPTXAgent runs (docs/coding-agents.md): a Harbor job directory of
// exported PTXBench tasks is read as one run, each trial as one trajectory. Its turns are the
// kernels it had evaluated — one per ATIF step whose observation holds a `ptxbench eval` verdict
// (the step's last, when it holds several) — followed by the verifier's evaluation of the kernel the
// agent left (verifier/ptxbench.json and verdict.json). Labels, target verdicts and speedups come
// from the verdicts' JSON, never from text, so Table 1 and Fast_p mean what they mean for our runs.

#include <filesystem>

#include "core/result.h"
#include "metrics/trajectory_reader.h"

namespace ptxbench::metrics {

/// True when `dir` is a Harbor job directory (trial folders inside) or one trial folder, and not a
/// `ptxbench run` directory (no trajectories/ inside).
bool is_harbor_run(const std::filesystem::path& dir);

/// Reads the trials of a Harbor job (or one trial folder) as a run. Missing data becomes a warning
/// (a trial the verifier did not finish, an unreadable file, an infrastructure failure of the
/// verifier, an evaluation of another task); wrong data fails the read, naming the file: a verdict
/// that does not parse, a reward that contradicts the verdict, a malformed ATIF trajectory. Only
/// full evaluations (`ptxbench eval`) are turns; `ptxbench check` results in a trajectory are not.
result<run_data> read_harbor_run(const std::filesystem::path& dir);

}  // namespace ptxbench::metrics
