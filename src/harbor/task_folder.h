#pragma once
// One Harbor task folder for one PTXBench task (docs/coding-agents.md): what a coding agent is given
// (instruction.md, an environment without a GPU) and how its final kernel is scored (tests/test.sh,
// which evaluates /workspace/kernel.cu through a PTXBench service and writes reward.txt). The folder
// is a pure function of its inputs, so an export is the same bytes every time; the prompt comes
// rendered from the caller (the CLI renders it with the rule `ptxbench run` uses), which keeps this
// layer below the prompts.

#include <string>
#include <vector>

#include "core/result.h"
#include "suite/task.h"

namespace ptxbench::harbor {

/// What every exported task shares.
struct export_settings {
  std::string variant;                ///< the resolved prompt variant ("base", "builtin-minimal", ...)
  std::string image;                  ///< the environment's base image (docker/agent.Dockerfile)
  std::string service_url = "http://host.docker.internal:8000";  ///< default of $PTXBENCH_SERVICE_URL
  double agent_timeout_s = 3600;
  double verifier_timeout_s = 1800;
  std::string ptxbench_version;       ///< recorded in task.toml and the scripts (never a commit or a date)
};

/// The model-facing prompt of the task, exactly as `ptxbench prompt TASK --variant V` prints it.
struct task_prompt {
  std::string system, user;
};

struct folder_file {
  std::string path;     ///< relative to the task folder, '/'-separated
  std::string content;
  bool executable = false;
};

/// The files of the task folder, in a fixed order: task.toml, instruction.md,
/// environment/Dockerfile, environment/docker-compose.yaml, tests/test.sh. Fails (one line) when a
/// name that the files embed is not a plain name ([A-Za-z0-9_.-]) or the target is not verified on
/// a GPU (a reward needs a GPU run).
result<std::vector<folder_file>> task_folder_files(const task& t, const target_info& target, const task_prompt& prompt,
                                                   const export_settings& settings);

/// True for a non-empty name of letters, digits, '_', '.', '-' that does not start with '.' or '-':
/// safe to embed in a shell script, TOML and a folder name as it is.
bool is_plain_name(const std::string& name);

}  // namespace ptxbench::harbor
