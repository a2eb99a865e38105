#pragma once
// `ptxbench kernelgen collect`: the direct-solution baseline's raw material (upstream's
// collect_correct_kernels, upstream-ptxbench.md §9 "KernelGen"): every correct kernel of a teacher's
// runs on the original prompts — optionally only target-correct ones and only above a speedup — with
// the reply that held it, its verdict and the trajectory's first prompts. The SFT row pairs the first
// task prompt with that reply (upstream: "the first prompt and the selected answer").

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adapt/pairs.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_kernelgen_format = "ptxbench.kernelgen/1";

struct kernelgen_options {
  std::vector<std::filesystem::path> run_dirs;
  bool require_target = false;
  std::optional<double> min_speedup;
  pair_select select = pair_select::all;  ///< all correct turns, or the first / fastest per trajectory
  std::vector<std::string> variants, tasks;
  int cap_per_definition = -1;
  uint64_t seed = 0;
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
