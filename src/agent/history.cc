#include "agent/history.h"

#include <fmt/format.h>

namespace ptxbench::agent {
namespace {

std::size_t chars_of(const chat_message& m) { return m.content.size() + m.reasoning_content.size() + 16; }

}  // namespace

std::string history_policy_name(history_policy p) {
  switch (p) {
    case history_policy::full: return "full";
    case history_policy::latest_pair: return "latest-pair";
    case history_policy::budget: return "budget";
  }
  return "full";
}

std::optional<history_policy> parse_history_policy(const std::string& name) {
  if (name == "full") return history_policy::full;
  if (name == "latest-pair") return history_policy::latest_pair;
  if (name == "budget") return history_policy::budget;
  return std::nullopt;
}

void token_estimator::calibrate(int64_t prompt_tokens, std::size_t chars) {
  if (prompt_tokens > 0 && chars > 0) m_tokens_per_char = static_cast<double>(prompt_tokens) / static_cast<double>(chars);
}

int64_t token_estimator::estimate(std::size_t chars) const {
  return static_cast<int64_t>(static_cast<double>(chars) * m_tokens_per_char) + 1;
}

context_view build_context(const conversation& c, history_policy policy, std::optional<int64_t> budget_tokens,
                           const token_estimator& estimator, int forced_drops) {
  int n = static_cast<int>(c.pairs.size());
  int first = policy == history_policy::latest_pair ? std::max(0, n - 1) : 0;
  std::vector<int> dropped;
  for (int k = first; k < n && forced_drops > 0; ++k, --forced_drops) dropped.push_back(k);
  first += static_cast<int>(dropped.size());
  auto pair_chars = [&](int k) { return chars_of(c.pairs[k].first) + chars_of(c.pairs[k].second); };
  std::size_t base = chars_of(c.system) + chars_of(c.task) + 200;  // the note, when one is added
  std::size_t total = base;
  for (int k = first; k < n; ++k) total += pair_chars(k);
  if (budget_tokens) {
    while (first < n && estimator.estimate(total) > *budget_tokens) {
      total -= pair_chars(first);
      dropped.push_back(first++);
    }
  }
  context_view v;
  v.messages.push_back(c.system);
  chat_message task = c.task;
  if (!dropped.empty())
    task.content += fmt::format(
        "\n\n[Note: your {} earliest attempt(s) and their feedback were left out of this conversation to fit the "
        "context window; the latest ones follow.]",
        dropped.size());
  v.messages.push_back(std::move(task));
  for (int k = first; k < n; ++k) {
    v.messages.push_back(c.pairs[k].first);
    v.messages.push_back(c.pairs[k].second);
    v.sent_turns.push_back(k);
  }
  v.dropped_turns = std::move(dropped);
  v.chars = total;
  v.estimated_prompt_tokens = estimator.estimate(total);
  return v;
}

}  // namespace ptxbench::agent
