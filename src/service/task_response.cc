#include "service/task_response.h"

#include <ctime>

#include <fmt/format.h>

namespace ptxbench::service {
namespace {

using queue::job;
using queue::job_state;

std::string iso_time(int64_t ms) {
  if (ms <= 0) return "";
  std::time_t s = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms % 1000));
}

ordered_json seconds_between(int64_t from, int64_t to) {
  if (from <= 0 || to <= 0 || to < from) return nullptr;
  return static_cast<double>(to - from) / 1000.0;
}

std::string solution_name(const job& j) {
  auto s = ordered_json::parse(j.spec.solution_json, nullptr, false);
  return s.is_object() && s.contains("name") && s["name"].is_string() ? s["name"].get<std::string>() : std::string();
}

bool is_poison_pill(const job& j) { return j.state == job_state::failed && j.failure == queue::failure_kind::poison_pill; }

/// A trace for a verdict that has none of its own (a poison pill, a verdict from an evaluator that
/// attaches none): its FlashInfer status (RUNTIME_ERROR for a poison pill) with its log.
ordered_json synthetic_trace(const job& j, const task* t, const std::string& solution, const std::string& status,
                             const std::string& log) {
  ordered_json tr;
  tr["definition"] = j.spec.task;
  tr["workload"] = t ? to_json(t->wl) : ordered_json::object();
  tr["solution"] = solution;
  tr["evaluation"] = {{"status", status},
                      {"environment", {{"hardware", ""}, {"libs", ordered_json::object()}}},
                      {"timestamp", iso_time(j.finished_ms)},
                      {"log", log},
                      {"correctness", nullptr},
                      {"performance", nullptr}};
  return tr;
}

/// upstream's RunLog {definition, workload, solution, log} for sanitize and profile tasks.
ordered_json run_log(const job& j, const task* t, const std::string& solution, const ordered_json& verdict) {
  std::string log;
  auto stage_line = [&](const char* name) {
    if (!verdict.contains("stages") || !verdict["stages"].is_array()) return;
    for (const auto& s : verdict["stages"])
      if (s.value("stage", "") == name)
        log += fmt::format("{}: {} ({})\n", name, s.value("outcome", ""), s.value("summary", ""));
  };
  if (j.spec.kind == queue::job_kind::sanitize) {
    stage_line("sanitize");
  } else {
    stage_line("dynamic_check");
    const auto& ti = verdict.value("target_instructions", ordered_json::object());
    if (ti.contains("dynamic_per_kernel") && ti["dynamic_per_kernel"].is_object())
      for (const auto& [kernel, counts] : ti["dynamic_per_kernel"].items())
        log += fmt::format("  {}: {}\n", kernel, counts.dump());
    if (ti.contains("verdict")) log += fmt::format("target instructions: {} ({})\n", ti.value("verdict", ""), ti.value("reason", ""));
  }
  std::string decided = verdict.value("log", "");
  if (decided.empty()) decided = verdict.value("message", "");
  if (!decided.empty()) log += decided + "\n";
  return {{"definition", j.spec.task}, {"workload", t ? to_json(t->wl) : ordered_json::object()}, {"solution", solution}, {"log", log}};
}

}  // namespace

std::string upstream_status(const job& j) {
  switch (j.state) {
    case job_state::queued:
    case job_state::compiled: return "pending";
    case job_state::compiling:
    case job_state::running: return "running";
    case job_state::done: return "completed";
    case job_state::failed: return is_poison_pill(j) ? "completed" : "failed";
  }
  return "failed";
}

ordered_json job_record(const job& j, const std::vector<queue::job_event>& history) {
  std::string built_by, completed_by, measured_by;
  int64_t evaluated_ms = j.finished_ms;
  bool cached = false;
  for (const auto& e : history) {
    if (e.event == "compiled") built_by = e.worker;
    if (e.event == "completed") completed_by = e.worker;
    if (e.event == "cache_hit") {
      cached = true;
      auto d = ordered_json::parse(e.detail, nullptr, false);
      if (d.is_object()) {
        measured_by = d.value("job_id", "");
        evaluated_ms = d.value("evaluated_ms", int64_t{0});
      }
    }
  }
  ordered_json r;
  r["job_id"] = j.id;
  r["content_key"] = j.content_key;
  r["state"] = std::string(queue::to_string(j.state));
  r["target"] = j.spec.target;
  r["cached"] = cached;
  if (cached) r["measured_by_job"] = measured_by;
  r["evaluated_at"] = is_terminal(j.state) ? ordered_json(iso_time(evaluated_ms)) : ordered_json(nullptr);
  r["attempts"] = j.attempts;
  r["infra_failures"] = j.infra_failures;
  r["lost_leases"] = j.lost_leases;
  if (j.failure != queue::failure_kind::none) r["failure"] = std::string(queue::to_string(j.failure));
  // Which workers did it: the CPU worker that built it (absent when a CPU stage decided, then the
  // completing worker is a CPU worker) and the worker that reported the verdict.
  r["workers"] = {{"built_by", built_by.empty() ? ordered_json(nullptr) : ordered_json(built_by)},
                  {"completed_by", completed_by.empty() ? ordered_json(nullptr) : ordered_json(completed_by)}};
  // Service stages of the attempt that finished (each verdict's own stages carry their run times).
  const int64_t compile_end = j.compiled_ms > 0 ? j.compiled_ms : j.finished_ms;
  r["times"] = {{"submitted_at", iso_time(j.submitted_ms)},
                {"queue_s", cached ? ordered_json(nullptr) : seconds_between(j.queued_ms, j.compiling_ms)},
                {"compile_s", cached ? ordered_json(nullptr) : seconds_between(j.compiling_ms, compile_end)},
                {"gpu_wait_s", j.running_ms > 0 ? seconds_between(j.compiled_ms, j.running_ms) : ordered_json(nullptr)},
                {"gpu_run_s", j.running_ms > 0 ? seconds_between(j.running_ms, j.finished_ms) : ordered_json(nullptr)},
                {"total_s", seconds_between(j.submitted_ms, j.finished_ms)}};
  return r;
}

ordered_json task_response(const job& j, const std::vector<queue::job_event>& history, const task* t) {
  ordered_json out;
  const std::string solution = solution_name(j);
  out["task_id"] = j.id;
  out["kind"] = std::string(queue::to_string(j.spec.kind));
  out["status"] = upstream_status(j);
  out["definition"] = j.spec.task;
  out["solution"] = solution;
  ordered_json verdict = nullptr;
  if (!j.verdict_json.empty()) verdict = ordered_json::parse(j.verdict_json, nullptr, false);
  if (verdict.is_discarded()) verdict = nullptr;
  if (out["status"] == "completed") {
    ordered_json traces = ordered_json::array();
    if (verdict.is_object() && verdict.contains("trace") && verdict["trace"].is_object()) {
      ordered_json tr = verdict["trace"];
      tr["solution"] = solution;  // a joined or cached job reports under this submission's name
      traces.push_back(std::move(tr));
    } else if (is_poison_pill(j)) {
      traces.push_back(synthetic_trace(j, t, solution, "RUNTIME_ERROR",
                                       verdict.is_object() ? verdict.value("message", j.error) : j.error));
    } else if (verdict.is_object() && verdict.contains("status") && verdict["status"].is_string()) {
      // Correctness and performance blocks exist only in a pipeline trace; statuses that need them
      // always come with one, so a synthetic trace is never PASSED or INCORRECT_NUMERICAL.
      std::string st = verdict["status"].get<std::string>();
      if (st != "PASSED" && st != "INCORRECT_NUMERICAL") {
        std::string log = verdict.value("log", "");
        if (log.empty()) log = verdict.value("message", "");
        traces.push_back(synthetic_trace(j, t, solution, st, log));
      }
    }
    if (j.spec.kind == queue::job_kind::evaluate) out["traces"] = traces;
    else out["logs"] = ordered_json::array({run_log(j, t, solution, verdict.is_object() ? verdict : ordered_json::object())});
  }
  if (out["status"] == "failed") out["error"] = j.error.empty() ? std::string("the evaluation failed") : j.error;
  ordered_json extra = job_record(j, history);
  extra["verdict"] = verdict;
  out["ptxbench"] = std::move(extra);
  return out;
}

}  // namespace ptxbench::service
