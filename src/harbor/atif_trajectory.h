#pragma once
// Reading a coding agent's ATIF trajectory (Harbor's Agent Trajectory Interchange Format,
// <trial>/agent/trajectory.json: schema_version "ATIF-v1.x", agent, steps[] with step_id, source,
// message, tool_calls, observation.results[].content, metrics) for what PTXBench scores: which steps
// evaluated a kernel (a ptxbench verdict in the step's observation) and the step's model usage.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::harbor {

struct atif_step {
  int64_t step_id = 0;
  std::string source;                  ///< "system" | "user" | "agent"
  std::string model_name;              ///< the step's own model, when it names one
  std::vector<ordered_json> verdicts;  ///< ptxbench verdicts in the observation, in order
  std::string observation;             ///< the observation results' text that held them (for the report)
  std::optional<int64_t> prompt_tokens, completion_tokens, reasoning_tokens;
  std::optional<double> cost_usd;
};

struct atif_trajectory {
  std::string schema_version;  ///< "ATIF-v1.4", ...
  std::string session_id;
  std::string agent_name, agent_version, model_name;
  std::vector<atif_step> steps;
};

/// Reads parsed ATIF. Fails with the JSON path of the first problem: not an object, a
/// schema_version that is not "ATIF-v...", no agent name, steps not a list, a step without an
/// integer step_id, step ids that do not increase, a source other than system/user/agent, an
/// observation whose results are not a list. Unknown fields (ATIF's `extra`, newer fields) are
/// ignored; an observation result's content may be text or a list of text parts.
result<atif_trajectory> atif_from_json(const ordered_json& j);

}  // namespace ptxbench::harbor
