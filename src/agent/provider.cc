#include "agent/provider.h"

namespace ptxbench::agent {

std::string failure_kind_name(failure_kind k) {
  switch (k) {
    case failure_kind::auth: return "auth";
    case failure_kind::context_overflow: return "context_overflow";
    case failure_kind::bad_request: return "bad_request";
    case failure_kind::retries_exhausted: return "retries_exhausted";
    case failure_kind::cancelled: return "cancelled";
    case failure_kind::replay_exhausted: return "replay_exhausted";
  }
  return "bad_request";
}

ordered_json to_json(const token_usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"reasoning_tokens", u.reasoning_tokens ? ordered_json(*u.reasoning_tokens) : ordered_json(nullptr)},
          {"cached_prompt_tokens", u.cached_prompt_tokens}};
}

ordered_json to_json(const attempt_record& a) {
  ordered_json j = {{"attempt", a.attempt}, {"http_status", a.http_status}, {"elapsed_s", a.elapsed_s},
                    {"wait_s", a.wait_s},   {"timestamp", a.timestamp}};
  j["error"] = a.error.empty() ? ordered_json(nullptr) : ordered_json(a.error);
  if (!a.retry_after.empty()) j["retry_after"] = a.retry_after;
  return j;
}

}  // namespace ptxbench::agent
