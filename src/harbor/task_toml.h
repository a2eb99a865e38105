#pragma once
// task.toml of an exported Harbor task: its name and metadata, the agent's and the verifier's time
// limits, an environment without a GPU, and the PTXBench service the agent and the verifier reach
// ($PTXBENCH_SERVICE_URL and $PTXBENCH_SERVICE_TOKEN, resolved by Harbor from the host's environment).

#include <string>

#include "harbor/task_folder.h"

namespace ptxbench::harbor {

std::string render_task_toml(const task& t, const target_info& target, const export_settings& settings);

/// A TOML basic string ("..." with \\, \" and control characters escaped).
std::string toml_string(const std::string& text);

}  // namespace ptxbench::harbor
