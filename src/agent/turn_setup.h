#pragma once
// Internal to the turn loop: the pieces of a trajectory's setup that do not need the loop's state.

#include <string>

#include "agent/trajectory.h"
#include "agent/turn_loop.h"

namespace ptxbench::agent {

/// info.config of a new trajectory: agent settings, agent type, model and environment.
ordered_json agent_config(const trajectory_spec& s);

/// Why an existing trajectory file cannot be resumed under `want` (model, task, variant ... differ,
/// or it already has more turns than asked), or "" when it can.
std::string meta_mismatch(const trajectory_meta& have, const trajectory_spec& want);

}  // namespace ptxbench::agent
