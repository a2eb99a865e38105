#pragma once
// What the model is told after each turn, and how the turn is labelled. The text keeps upstream's
// layout (header, per-workload status line, errors, compiler log, footer) so trajectories move
// between the two systems, and adds what upstream never said: whether the required instruction
// families actually executed, with their counts. Labels come from the structured verdict, never
// from text.

#include <optional>
#include <string>

#include "verdict/verdict.h"
#include "suite/task.h"

namespace ptxbench::agent {

enum class turn_event { evaluation, no_code, gate_rejected, infra_error };

/// Returns "evaluation", "no_code", "gate_rejected" or "infra_error".
std::string event_name(turn_event e);

struct turn_assessment {
  turn_event event = turn_event::evaluation;
  eval_outcome label = eval_outcome::no_code;  ///< how the turn ended
  int returncode = 1;             ///< upstream's: 0 when every workload passed (or the build did, in check mode)
  bool all_passed = false;
  std::optional<double> speedup;  ///< min over workloads, PASSED only
  bool target_correct = false;    ///< passed and a required family verified as executed
  bool target_met = false;        ///< target_correct and speedup >= target speedup
};

/// True when the verdict is an infrastructure failure in disguise (outcome "infra_error" or a
/// stage that errored before anything was decided): such a turn must not count.
bool is_infra_verdict(const verdict& v);

/// Labels a verdict and decides whether the target is met.
turn_assessment assess_verdict(const verdict& v, double target_speedup);

/// The <output> text for an evaluated candidate.
std::string verdict_feedback(const verdict& v, const turn_assessment& a, const task& t, double target_speedup,
                             const std::string& language = "cuda");

/// The <output> text when no kernel could be taken from the reply; `problem` says why.
std::string no_code_feedback(const std::string& problem, const std::string& language = "cuda");

/// The observation message: "<returncode>RC</returncode>\n<output>\nTEXT</output>" (upstream's template).
std::string observation_message(int returncode, const std::string& text);

}  // namespace ptxbench::agent
