#pragma once
// instruction.md of an exported Harbor task: how the coding agent works in its container (the file
// it must leave, how it evaluates through the service, where the ABI header is), then the prompt
// PTXBench's own agent gives a model for the task, unchanged, so a coding agent and MiniPTXAgent are
// told the same thing about the task.

#include <string>

#include "harbor/task_folder.h"

namespace ptxbench::harbor {

/// Where the agent's kernel lives in the container, and the folder that holds PTXBench's data there.
inline constexpr const char* k_kernel_path = "/workspace/kernel.cu";
inline constexpr const char* k_ptxbench_root = "/opt/ptxbench";

std::string render_instruction(const task& t, const target_info& target, const task_prompt& prompt,
                               const export_settings& settings);

/// The command that evaluates the agent's kernel through the service (also what tests/test.sh runs).
std::string remote_eval_command(const task& t, const target_info& target, const std::string& subcommand);

}  // namespace ptxbench::harbor
