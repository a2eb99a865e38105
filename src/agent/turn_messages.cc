#include "agent/turn_messages.h"

#include "verdict/verdict_json.h"

#include "core/sha256.h"
#include "suite/trace.h"

namespace ptxbench::agent {
namespace {

ordered_json counts_or_null(const std::optional<family_counts>& c) {
  if (!c) return nullptr;
  ordered_json j = ordered_json::object();
  for (const auto& [k, v] : *c) j[k] = v;
  return j;
}

ordered_json optional_number(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

}  // namespace

ordered_json assistant_message_json(const completion& c, const context_view& v, int turn) {
  ordered_json m;
  m["role"] = "assistant";
  m["content"] = c.content;
  if (!c.reasoning_content.empty()) m["reasoning_content"] = c.reasoning_content;
  ordered_json attempts = ordered_json::array();
  for (const auto& a : c.attempts) attempts.push_back(to_json(a));
  m["extra"] = {{"actions", ordered_json::array()},
                {"turn", turn},
                {"usage", to_json(c.usage)},
                {"latency_s", c.latency_s},
                {"cost", optional_number(c.cost_usd)},
                {"timestamp", utc_timestamp()},
                {"finish_reason", c.finish_reason},
                {"attempts", attempts},
                {"context", {{"sent_turns", v.sent_turns},
                             {"dropped_turns", v.dropped_turns},
                             {"estimated_prompt_tokens", v.estimated_prompt_tokens}}},
                {"response", c.response}};
  return m;
}

ordered_json feedback_message_json(int turn, const turn_assessment& a, const std::string& text,
                                   const turn_evaluation& e) {
  ordered_json traces = ordered_json::array();
  ordered_json p;
  p["label"] = std::string(outcome_name(a.label));
  p["verdict"] = e.verdict ? to_json(*e.verdict) : ordered_json(nullptr);
  p["target_correct"] = a.target_correct;
  p["target_verdict"] = e.verdict ? ordered_json(std::string(target_verdict_name(e.verdict->targets.verdict)))
                                  : ordered_json(nullptr);
  p["speedup"] = optional_number(a.speedup);
  p["static_counts"] = e.verdict ? counts_or_null(e.verdict->targets.static_counts) : ordered_json(nullptr);
  p["dynamic_counts"] = e.verdict ? counts_or_null(e.verdict->targets.dynamic.counts) : ordered_json(nullptr);
  p["seeds"] = e.verdict && e.verdict->correctness ? ordered_json(e.verdict->correctness->seeds) : ordered_json::array();
  if (e.verdict && e.verdict->flashinfer_trace) traces.push_back(to_json(*e.verdict->flashinfer_trace));
  if (e.code && e.code->code) {
    const auto& c = *e.code->code;
    p["kernel_source"] = c.code;
    p["kernel_sha256"] = sha256_hex(c.code);
    p["code_block"] = {{"fence_tag", c.fence_tag}, {"block_index", c.block_index}, {"blocks_found", c.blocks_found},
                       {"valid", c.valid}, {"unterminated", c.unterminated}};
  } else {
    p["kernel_source"] = nullptr;
    p["kernel_sha256"] = nullptr;
    p["code_block"] = nullptr;
    if (e.code) p["extraction_problem"] = e.code->problem;
  }
  p["queue_wait_s"] = e.queue_wait_s;
  p["eval_s"] = e.eval_s;
  p["eval_attempts"] = e.eval_attempts;
  if (!e.infra_message.empty()) p["infra_message"] = e.infra_message;
  ordered_json extra = {{"turn", turn},
                        {"event", event_name(a.event)},
                        {"returncode", a.returncode},
                        {"timestamp", utc_timestamp()},
                        {"raw_output", text},
                        {"exception_info", ""},
                        {"traces", traces},
                        {"all_passed", a.all_passed},
                        {"min_speedup", optional_number(a.speedup)},
                        {"target_met", a.target_met},
                        {"ptxbench", p}};
  return {{"role", "user"}, {"content", observation_message(a.returncode, text)}, {"extra", extra}};
}

}  // namespace ptxbench::agent
