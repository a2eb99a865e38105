#pragma once
// tests/test.sh of an exported Harbor task: Harbor runs it in the agent's container after the agent
// has finished. It evaluates /workspace/kernel.cu through the PTXBench service
// (`ptxbench eval --remote URL --json`) and writes /logs/verifier/reward.txt — 1 when the kernel is
// correct and target-correct, 0 otherwise — with the verdict, the speedup and a summary beside it
// (ptxbench.json, which `ptxbench metrics` reads back). An infrastructure failure writes no reward,
// so Harbor reports the trial as failed rather than scoring the agent 0.

#include <string>

#include "harbor/task_folder.h"

namespace ptxbench::harbor {

/// The files the verifier writes into /logs/verifier (Harbor copies them to <trial>/verifier/).
inline constexpr const char* k_verdict_file = "verdict.json";
inline constexpr const char* k_summary_file = "ptxbench.json";
inline constexpr const char* k_summary_format = "ptxbench.harbor-verifier/1";

std::string render_test_script(const task& t, const target_info& target, const export_settings& settings);

}  // namespace ptxbench::harbor
