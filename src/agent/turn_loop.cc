#include "agent/turn_loop.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "agent/code_extract.h"
#include "agent/feedback.h"
#include "agent/trajectory.h"
#include "agent/turn_messages.h"
#include "agent/turn_setup.h"
#include "suite/trace.h"

namespace ptxbench::agent {
namespace {

const ordered_json& ptxbench_extra(const ordered_json& feedback) {
  static const ordered_json empty = ordered_json::object();
  if (!feedback.contains("extra") || !feedback["extra"].is_object()) return empty;
  const auto& extra = feedback["extra"];
  return extra.contains("ptxbench") && extra["ptxbench"].is_object() ? extra["ptxbench"] : empty;
}

class loop {
 public:
  loop(const trajectory_spec& spec, loop_services& svc) : m_spec(spec), m_svc(svc) {
    if (!m_svc.sleep)
      m_svc.sleep = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  }

  trajectory_result run() {
    if (auto r = open(); r) return *r;
    conversation conv = m_traj->to_conversation();
    token_estimator estimator;
    for (int k = m_traj->completed_turns(); k < m_spec.turn_limit; ++k) {
      if (m_svc.stop && m_svc.stop->load()) return interrupt(trajectory_end::stopped, exit_names::interrupted, "stopped", {});
      ordered_json assistant;
      if (m_pending) {
        // A reply saved before a kill or an infrastructure failure cut its evaluation short: it is
        // evaluated again, and the model is not asked (and paid) twice.
        assistant = std::move(*m_pending);
        m_pending.reset();
      } else {
        auto got = ask(conv, estimator, k, assistant);
        if (got) return *got;
      }
      // The reply is on disk before its evaluation starts (the call already is, see ask()).
      m_traj->append_reply(assistant);
      if (auto saved = m_traj->save(m_spec.file); !saved) return fail_setup(saved.err().message);
      std::string content = assistant.value("content", "");
      auto [feedback, assessment, submission] = evaluate(content, k);
      if (assessment.event == turn_event::infra_error) {
        m_traj->append_feedback(std::move(feedback));
        return interrupt(trajectory_end::infra_error, exit_names::infra_error, m_infra_message, {});
      }
      conv.pairs.emplace_back(message_from_json(assistant), message_from_json(feedback));
      report(k, assessment, false);
      m_traj->append_feedback(std::move(feedback));
      ++m_run_now;
      if (assessment.target_met) {
        ordered_json exit = {{"role", "exit"},
                             {"content", "Target speedup achieved."},
                             {"extra", {{"exit_status", exit_names::submitted}, {"submission", submission},
                                        {"min_speedup", m_last_speedup ? ordered_json(*m_last_speedup) : ordered_json(nullptr)}}}};
        m_traj->set_exit(exit_names::submitted, submission, exit);
        return finish(trajectory_end::submitted, fmt::format("target met at turn {}", k));
      }
      if (auto saved = m_traj->save(m_spec.file); !saved) return fail_setup(saved.err().message);
    }
    ordered_json exit = {{"role", "exit"},
                         {"content", "LimitsExceeded"},
                         {"extra", {{"exit_status", exit_names::limits_exceeded}, {"submission", ""}}}};
    m_traj->set_exit(exit_names::limits_exceeded, "", exit);
    return finish(trajectory_end::limits_exceeded, fmt::format("{} turns used", m_spec.turn_limit));
  }

 private:
  // Loads and trims an existing file, or starts a new one. Returns a result when nothing is left to do.
  std::optional<trajectory_result> open() {
    std::error_code ec;
    if (std::filesystem::exists(m_spec.file, ec)) {
      auto loaded = trajectory::load(m_spec.file);
      if (!loaded) return fail_setup(loaded.err().message);
      if (auto m = meta_mismatch(loaded->meta(), m_spec); !m.empty())
        return fail_setup(fmt::format("{}: {}; use the same options as the first run or a new --out", m_spec.file.string(), m));
      if (auto m = supervision_mismatch(loaded->supervision(), m_spec.supervision.trajectory_record); !m.empty())
        return fail_setup(fmt::format("{}: {}; use the same options as the first run or a new --out", m_spec.file.string(), m));
      m_traj = std::move(*loaded);
      const auto& msgs = m_traj->json()["messages"];
      for (int k = 0; k < m_traj->completed_turns(); ++k) report(k, assessment_on_disk(msgs[3 + 2 * k]), true);
      if (m_traj->finished(m_spec.turn_limit)) {
        trajectory_result r;
        r.end = m_traj->exit_status() == exit_names::submitted          ? trajectory_end::submitted
                : m_traj->exit_status() == exit_names::context_exceeded ? trajectory_end::context_exceeded
                                                                        : trajectory_end::limits_exceeded;
        r.message = "already finished";
        r.turns_completed = m_traj->completed_turns();
        r.skipped = true;
        return r;
      }
      m_traj->settle_lost_call(utc_timestamp());
      m_pending = m_traj->trim_to_completed();
      m_traj->set_turn_limit(m_spec.turn_limit);
      m_traj->set_exit(exit_names::running, "", std::nullopt);
      return std::nullopt;
    }
    auto prompts = m_svc.prompts(*m_spec.t, *m_spec.target, m_spec.variant);
    if (!prompts) return fail_setup(prompts.err().message);
    trajectory_meta meta{m_spec.model_name, m_spec.t->name, m_spec.target->name, m_spec.target->arch, m_spec.variant,
                         m_spec.index, m_spec.turn_limit, m_spec.target_speedup, history_policy_name(m_spec.policy),
                         m_spec.seed, m_spec.language};
    m_traj = trajectory::start(meta, agent_config(m_spec), *prompts);
    if (m_spec.supervision.active()) m_traj->set_supervision(m_spec.supervision.trajectory_record);
    if (auto saved = m_traj->save(m_spec.file); !saved) return fail_setup(saved.err().message);
    return std::nullopt;
  }

  // Calls the model, dropping old pairs when the context overflows. Returns a result when the
  // trajectory must stop; otherwise fills `assistant`.
  std::optional<trajectory_result> ask(const conversation& conv, token_estimator& estimator, int k, ordered_json& assistant) {
    for (int forced = 0;; ++forced) {
      context_view view = build_context(conv, m_spec.policy, m_spec.budget_tokens, estimator, forced);
      completion_request req{view.messages, k, m_spec.seed + static_cast<uint64_t>(k)};
      // Counted on disk before it is made: a kill during the call cannot hide what it cost.
      m_traj->begin_call({{"turn", k}, {"started", utc_timestamp()}});
      if (auto saved = m_traj->save(m_spec.file); !saved) return fail_setup(saved.err().message);
      call_result r = m_svc.model->complete(req);
      if (r.ok()) {
        m_traj->end_call(r.reply->cost_usd, true);
        estimator.calibrate(r.reply->usage.prompt_tokens, view.chars);
        if (!view.dropped_turns.empty())
          m_traj->record_dropped_pairs({{"turn", k},
                                        {"dropped_turns", view.dropped_turns},
                                        {"reason", forced > 0 ? "context_overflow" : "budget"},
                                        {"estimated_prompt_tokens", view.estimated_prompt_tokens},
                                        {"budget_tokens", m_spec.budget_tokens ? ordered_json(*m_spec.budget_tokens) : ordered_json(nullptr)},
                                        {"timestamp", utc_timestamp()}});
        assistant = assistant_message_json(*r.reply, view, k);
        return std::nullopt;
      }
      const auto& f = r.failure;
      m_traj->end_call(std::nullopt, f.http_status != 0 || !f.attempts.empty());
      if (f.kind == failure_kind::context_overflow) {
        if (!view.sent_turns.empty()) continue;  // leave out one more old pair and ask again
        ordered_json exit = {{"role", "exit"},
                             {"content", "ContextWindowExceeded: " + f.message},
                             {"extra", {{"exit_status", exit_names::context_exceeded}, {"submission", ""}}}};
        m_traj->record_dropped_pairs({{"turn", k}, {"dropped_turns", view.dropped_turns}, {"reason", "context_overflow"},
                                      {"provider_message", f.message}, {"timestamp", utc_timestamp()}});
        m_traj->set_exit(exit_names::context_exceeded, "", exit);
        return finish(trajectory_end::context_exceeded, f.message);
      }
      ordered_json attempts = ordered_json::array();
      for (const auto& a : f.attempts) attempts.push_back(to_json(a));
      ordered_json record = {{"turn", k}, {"kind", "api"}, {"failure", failure_kind_name(f.kind)},
                             {"http_status", f.http_status}, {"message", f.message}, {"attempts", attempts},
                             {"timestamp", utc_timestamp()}};
      if (f.kind == failure_kind::cancelled) return interrupt(trajectory_end::stopped, exit_names::interrupted, "interrupted", record);
      if (f.kind == failure_kind::auth) return interrupt(trajectory_end::auth_error, exit_names::auth_error, f.message, record);
      return interrupt(trajectory_end::api_error, exit_names::api_error, f.message, record);
    }
  }

  struct evaluated {
    ordered_json feedback;
    turn_assessment assessment;
    std::string submission;
  };

  evaluated evaluate(const std::string& content, int k) {
    extraction x = extract_kernel(content, 512u << 10, m_spec.language);
    turn_evaluation e;
    e.code = &x;
    if (!x.code) {
      turn_assessment a;
      a.event = turn_event::no_code;
      a.label = eval_outcome::no_code;
      return {supervised(feedback_message_json(k, a, no_code_feedback(x.problem, m_spec.language), e), m_spec.supervision.turn_record), a, ""};
    }
    eval_request req{m_spec.t, m_spec.target, make_turn_solution(m_spec, k, x.code->code), m_spec.run_on_gpu};
    std::string infra;
    for (int attempt = 0; attempt <= m_spec.eval_retries; ++attempt) {
      if (attempt > 0) m_svc.sleep(m_spec.eval_retry_delay_s);
      slot_outcome o = m_svc.evaluators->evaluate(req);
      e.queue_wait_s += o.queue_wait_s;
      e.eval_s += o.eval_s;
      e.eval_attempts = attempt + 1;
      if (!o.verdict) {
        infra = o.verdict.err().message;
        continue;
      }
      if (is_infra_verdict(*o.verdict)) {
        const std::string& why = o.verdict->decided.message;
        infra = why.empty() ? "the evaluator reported an infrastructure error" : why;
        continue;
      }
      verdict v = std::move(*o.verdict);
      e.verdict = &v;
      turn_assessment a = assess_verdict(v, m_spec.target_speedup);
      m_last_speedup = a.speedup;
      std::string text = verdict_feedback(v, a, *m_spec.t, m_spec.target_speedup, m_spec.language);
      ordered_json record = m_spec.supervision.turn_record;
      if (!a.all_passed && a.label != eval_outcome::built && m_spec.supervision.on_failed_turn) {
        failed_turn f{m_spec.t, m_spec.variant, m_spec.index, m_spec.file.stem().string(), k, a.label, &x.code->code, &text};
        if (auto s = m_spec.supervision.on_failed_turn(f)) {
          if (!s->text.empty()) text += "\n\n" + s->text;
          if (record.is_null()) record = ordered_json::object();
          record["retrieval"] = std::move(s->record);
        }
      }
      auto feedback = supervised(feedback_message_json(k, a, text, e), record);
      return {std::move(feedback), a, x.code->code};
    }
    m_infra_message = "evaluation failed (infrastructure, not the kernel): " + infra;
    turn_assessment a;
    a.event = turn_event::infra_error;
    a.label = eval_outcome::infra_error;
    e.infra_message = infra;
    m_traj->record_interruption({{"turn", k}, {"kind", "infra"}, {"message", infra}, {"attempts", e.eval_attempts},
                                 {"timestamp", utc_timestamp()}});
    return {feedback_message_json(k, a, m_infra_message, e), a, ""};
  }

  // Records the turn's supervision (arm, guidance hash, retrieved notes) in its feedback message.
  static ordered_json supervised(ordered_json feedback, const ordered_json& record) {
    if (!record.is_null()) feedback["extra"]["ptxbench"]["supervision"] = record;
    return feedback;
  }

  void report(int k, const turn_assessment& a, bool from_disk) {
    if (!m_svc.on_turn) return;
    turn_report r;
    r.turn = k;
    r.label = a.label;
    r.correct = a.all_passed;
    r.target_correct = a.target_correct;
    r.speedup = a.speedup;
    r.from_disk = from_disk;
    m_svc.on_turn(r);
  }

  // A finished turn read back from the trajectory file on resume (the file is the record then).
  static turn_assessment assessment_on_disk(const ordered_json& feedback) {
    const auto& p = ptxbench_extra(feedback);
    turn_assessment a;
    a.label = parse_outcome(p.value("label", "")).value_or(eval_outcome::other_error);
    a.all_passed = a.label == eval_outcome::passed;
    a.target_correct = p.value("target_correct", false);
    if (p.contains("speedup") && p["speedup"].is_number()) a.speedup = p["speedup"].get<double>();
    return a;
  }

  trajectory_result interrupt(trajectory_end end, const char* status, const std::string& message,
                              std::optional<ordered_json> record) {
    if (record) m_traj->record_interruption(std::move(*record));
    m_traj->set_exit(status, "", std::nullopt);
    return finish(end, message);
  }

  trajectory_result finish(trajectory_end end, const std::string& message) {
    trajectory_result r;
    r.end = end;
    r.message = message;
    r.turns_completed = m_traj->completed_turns();
    r.turns_run_now = m_run_now;
    if (auto saved = m_traj->save(m_spec.file); !saved) {
      r.end = trajectory_end::setup_error;
      r.message = saved.err().message;
    }
    return r;
  }

  static trajectory_result fail_setup(const std::string& message) {
    trajectory_result r;
    r.end = trajectory_end::setup_error;
    r.message = message;
    return r;
  }

  const trajectory_spec& m_spec;
  loop_services& m_svc;
  std::optional<trajectory> m_traj;
  std::optional<ordered_json> m_pending;
  std::optional<double> m_last_speedup;
  std::string m_infra_message;
  int m_run_now = 0;
};

}  // namespace

trajectory_result run_trajectory(const trajectory_spec& spec, loop_services& services) {
  try {
    loop l(spec, services);
    return l.run();
  } catch (const std::exception& e) {
    trajectory_result r;
    r.end = trajectory_end::setup_error;
    r.message = std::string("internal error: ") + e.what();
    return r;
  }
}

}  // namespace ptxbench::agent
