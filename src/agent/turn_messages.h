#pragma once
// The JSON of one turn's two messages: the assistant reply (usage, cost, latency, raw response) and
// the feedback (observation text plus the structured evaluation in `extra`).

#include <optional>
#include <string>

#include "agent/code_extract.h"
#include "agent/eval_queue.h"
#include "agent/feedback.h"
#include "agent/history.h"
#include "agent/provider.h"

namespace ptxbench::agent {

/// The assistant message for a completion sent with context view `v`.
ordered_json assistant_message_json(const completion& c, const context_view& v, int turn);

/// Evaluation facts of one turn, gathered by the loop.
struct turn_evaluation {
  const ptxbench::verdict* verdict = nullptr;  ///< null for no_code and infra_error
  const extraction* code = nullptr;        ///< null when there was no reply text to search
  double queue_wait_s = 0;
  double eval_s = 0;
  int eval_attempts = 0;
  std::string infra_message;               ///< for infra_error
};

/// The feedback message for turn `turn`: content is observation_message(rc, text).
ordered_json feedback_message_json(int turn, const turn_assessment& a, const std::string& text,
                                   const turn_evaluation& e);

}  // namespace ptxbench::agent
