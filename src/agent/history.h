#pragma once
// Which part of the conversation goes to the model each turn. `full` (the paper's setting) sends
// everything, `latest-pair` only the last kernel and its feedback, `budget` the newest pairs that fit
// a token budget. Under every policy, when the prompt would overflow the model's context window the
// oldest kernel/feedback pairs are left out, the model is told, and the trajectory records it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/provider.h"

namespace ptxbench::agent {

enum class history_policy { full, latest_pair, budget };

/// Returns "full", "latest-pair" or "budget".
std::string history_policy_name(history_policy p);
std::optional<history_policy> parse_history_policy(const std::string& name);

/// Estimates prompt tokens from characters, calibrated from the provider's reported prompt tokens.
class token_estimator {
 public:
  /// Learns the ratio from one call: the characters sent and the prompt tokens the provider counted.
  void calibrate(int64_t prompt_tokens, std::size_t chars);
  [[nodiscard]] int64_t estimate(std::size_t chars) const;

 private:
  double m_tokens_per_char = 1.0 / 3.0;  // code and JSON are dense; err on the high side until calibrated
};

struct conversation {
  chat_message system;
  chat_message task;
  std::vector<std::pair<chat_message, chat_message>> pairs;  ///< completed turns: reply, feedback
};

struct context_view {
  std::vector<chat_message> messages;
  std::vector<int> sent_turns;     ///< turns whose pair was sent
  std::vector<int> dropped_turns;  ///< turns left out to fit the context (not those latest-pair omits by design)
  std::size_t chars = 0;
  int64_t estimated_prompt_tokens = 0;
};

/// Builds the messages for the next call. `budget_tokens` (nullopt: unlimited) bounds the estimated
/// prompt; `forced_drops` leaves out that many more of the oldest pairs (after the provider reported
/// an overflow the estimate missed). When pairs are dropped, a note saying how many is appended to
/// the task message.
context_view build_context(const conversation& c, history_policy policy, std::optional<int64_t> budget_tokens,
                           const token_estimator& estimator, int forced_drops);

}  // namespace ptxbench::agent
