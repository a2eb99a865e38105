#pragma once
// The model behind one interface: a chat history in, one assistant reply out, with token usage,
// cost, latency and the provider's raw JSON. Failures say what kind they are, because the agent
// treats them differently: a bad key stops the sweep, a context overflow drops old turns, anything
// else interrupts the trajectory so that it can resume later. None of them consumes a turn.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::agent {

struct chat_message {
  std::string role;               ///< "system" | "user" | "assistant"
  std::string content;
  std::string reasoning_content;  ///< assistant only; sent back only where the model config asks for it
};

struct completion_request {
  std::vector<chat_message> messages;
  int turn = 0;                   ///< 0-based turn of the trajectory (the replay model uses it)
  std::optional<uint64_t> seed;   ///< sent where the model config enables it
};

struct token_usage {
  int64_t prompt_tokens = 0;                ///< every input token, cached ones included
  int64_t completion_tokens = 0;            ///< every output token, reasoning included
  std::optional<int64_t> reasoning_tokens;  ///< nullopt: the provider did not report it
  int64_t cached_prompt_tokens = 0;
};

/// One HTTP attempt of a call, kept so retries are visible in the trajectory.
struct attempt_record {
  int attempt = 1;
  long http_status = 0;       ///< 0 when the transport failed
  std::string error;          ///< empty on success
  double elapsed_s = 0;
  double wait_s = 0;          ///< back-off slept after this attempt (0 for the last)
  std::string retry_after;    ///< the header as sent, if any
  std::string timestamp;
};

struct completion {
  std::string content;
  std::string reasoning_content;
  std::string finish_reason;
  token_usage usage;
  std::optional<double> cost_usd;  ///< provider-reported, else from the price table; nullopt = unknown
  double latency_s = 0;            ///< the successful attempt only
  ordered_json response;           ///< the provider's raw JSON
  std::vector<attempt_record> attempts;
};

enum class failure_kind {
  auth,               ///< 401/403: the key is missing, wrong or lacks access
  context_overflow,   ///< the prompt does not fit the model's context window
  bad_request,        ///< any other rejection (unknown model, bad parameter): retrying will not help
  retries_exhausted,  ///< rate limits, server errors or dropped connections outlasted the retry policy
  cancelled,          ///< the run was interrupted (Ctrl-C)
  replay_exhausted,   ///< a replay model has no recorded reply for this turn
};

/// Returns "auth", "context_overflow", ... as used in trajectory files.
std::string failure_kind_name(failure_kind k);

struct provider_failure {
  failure_kind kind = failure_kind::bad_request;
  long http_status = 0;
  std::string message;  ///< one line, including the provider's own error text
  std::vector<attempt_record> attempts;
};

struct call_result {
  std::optional<completion> reply;
  provider_failure failure;  ///< meaningful when !reply
  [[nodiscard]] bool ok() const { return reply.has_value(); }
};

class provider {
 public:
  virtual ~provider() = default;
  /// Asks the model for the next assistant message; never throws.
  virtual call_result complete(const completion_request& request) = 0;
};

ordered_json to_json(const token_usage& u);
ordered_json to_json(const attempt_record& a);

}  // namespace ptxbench::agent
