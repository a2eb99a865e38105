#pragma once
// `ptxbench kernelgen collect`: the direct-solution baseline's raw material (upstream's
// collect_correct_kernels, upstream-ptxbench.md §9 "KernelGen"): every correct kernel of a teacher's
// runs on the original prompts, with the reply that held it, its verdict and the trajectory's first
// prompts. By default as upstream collected them: the turn passed, a required instruction family was
// verified as executed (upstream's dynamic SASS tag), and its speedup is strictly above 0. Options:
// not target-correct kernels too, another speedup bound, the first or fastest turn per trajectory,
// de-duplication by content, a per-task cap (not upstream's). The SFT row pairs the first task
// prompt with that reply (upstream: "the first prompt and the selected answer").

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adapt/pairs.h"
#include "adapt/stratified_cap.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_kernelgen_format = "ptxbench.kernelgen/1";

struct kernelgen_options {
  std::vector<std::filesystem::path> run_dirs;
  bool require_target = true;                 ///< upstream's dynamic SASS tag
  std::optional<double> speedup_above = 0.0;  ///< keep speedups strictly above this (upstream: 0); nullopt: any
  pair_select select = pair_select::all;      ///< all correct turns, or the first / fastest per trajectory
  std::vector<std::string> variants, tasks;
  bool dedupe = false;                        ///< one kernel per (task, kernel text)
  cap_options cap;                            ///< per task, stratified by turn (not upstream's)
  std::vector<std::string> argv;
};

/// Collects the kernels and writes OUT (staged). Returns the manifest. Fails when none is left.
result<ordered_json> collect_kernels(const kernelgen_options& o, const std::filesystem::path& out);

struct kernel_row {
  std::string id, task, target, arch, variant, model, trajectory;
  int turn = 0;
  std::string kernel, reply, system_prompt, task_prompt;
  ordered_json verdict;
  bool target_correct = false;
  std::optional<double> speedup;
  ordered_json json;  ///< the line of kernels.jsonl
};

/// Reads KERNELS/kernels.jsonl and every file it names (sha256 checked).
result<std::vector<kernel_row>> load_kernels(const std::filesystem::path& dir);

}  // namespace ptxbench::adapt
