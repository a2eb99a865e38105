#include "service/task_response.h"

#include <algorithm>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "core/text.h"
#include "service/submission.h"
#include "verdict/verdict_json.h"

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

/// The job's solution as submitted, parsed once per response; null when it cannot be read.
ordered_json stored_solution(const job& j) {
  auto doc = ordered_json::parse(j.spec.solution_json, nullptr, false);
  return doc.is_discarded() ? ordered_json(nullptr) : doc;
}

std::optional<solution> typed_solution(const ordered_json& stored) {
  if (stored.is_null()) return std::nullopt;
  auto parsed = solution_from_json(stored, "solution");
  return parsed ? std::optional<solution>(std::move(*parsed)) : std::nullopt;
}

std::string solution_name(const ordered_json& stored) {
  return stored.is_object() && stored.contains("name") && stored["name"].is_string() ? stored["name"].get<std::string>()
                                                                                      : std::string();
}

bool is_poison_pill(const job& j) { return j.state == job_state::failed && j.failure == queue::failure_kind::poison_pill; }

/// The stored verdict as the worker wrote it, parsed once per response; null when there is none or
/// it cannot be read.
ordered_json stored_verdict(const job& j) {
  if (j.verdict_json.empty()) return nullptr;
  auto doc = ordered_json::parse(j.verdict_json, nullptr, false);
  return doc.is_discarded() ? ordered_json(nullptr) : doc;
}

/// The job's verdict, typed: the pipeline's verdict (from `stored`), or for a poison pill the one
/// made from the queue's account. nullopt when there is none (or it cannot be read).
std::optional<verdict> job_verdict(const job& j, const ordered_json& stored) {
  if (is_poison_pill(j)) return poison_pill_verdict(j);
  if (stored.is_null()) return std::nullopt;
  auto v = verdict_from_json(stored);
  return v ? std::optional<verdict>(std::move(*v)) : std::nullopt;
}

/// What the evaluation ran on, for a trace: the GPU it ran on, or (a verdict decided on a CPU
/// worker, which names no GPU) the GPU the job was for. Upstream's Trace requires a non-empty name.
std::string hardware_for(const job& j, const suite& tasks) {
  const target_info* target = tasks.find_target(j.spec.target);
  return target && !target->gpu_name.empty() ? target->gpu_name : j.spec.target;
}

/// A trace for a verdict that has none of its own (a poison pill, a verdict from an evaluator that
/// attaches none): its FlashInfer status with its log. Only statuses that need no correctness or
/// performance block are made this way.
ordered_json synthetic_trace(const job& j, const task* t, const std::string& solution, eval_status status,
                             const std::string& log, const std::string& hardware) {
  ordered_json tr;
  tr["definition"] = j.spec.task;
  tr["workload"] = t ? to_json(t->wl) : ordered_json::object();
  tr["solution"] = solution;
  tr["evaluation"] = {{"status", std::string(status_name(status))},
                      {"environment", {{"hardware", hardware}, {"libs", ordered_json::object()}}},
                      {"timestamp", iso_time(j.finished_ms)},
                      {"log", log},
                      {"correctness", nullptr},
                      {"performance", nullptr}};
  return tr;
}

/// The trace of an evaluate task, as upstream's client reads it.
std::optional<ordered_json> evaluate_trace(const job& j, const task* t, const std::string& solution,
                                           const std::optional<verdict>& v, const suite& tasks) {
  if (!v) return std::nullopt;
  const std::string hardware = hardware_for(j, tasks);
  if (v->flashinfer_trace) {
    ordered_json tr = to_json(*v->flashinfer_trace);
    tr["solution"] = solution;  // a joined or cached job reports under this submission's name
    auto& e = tr["evaluation"];
    if (!e["environment"].is_object()) e["environment"] = {{"hardware", hardware}, {"libs", ordered_json::object()}};
    if (e["environment"].value("hardware", "").empty()) e["environment"]["hardware"] = hardware;
    // profile_baseline: false asks upstream not to time the reference: it reports 0 for its latency
    // (and so for the speedup). PTXBench times it anyway (interleaved with the candidate); the full
    // numbers stay in the verdict.
    auto protocol = read_protocol(j.spec.protocol_json);
    if (protocol && !protocol->profile_baseline && e.contains("performance") && e["performance"].is_object()) {
      e["performance"]["reference_latency_ms"] = 0.0;
      e["performance"]["speedup_factor"] = 0.0;
    }
    return tr;
  }
  auto status = v->status();
  // Correctness and performance blocks exist only in a pipeline trace; statuses that need them
  // always come with one, so a synthetic trace is never PASSED or INCORRECT_NUMERICAL.
  if (!status || *status == eval_status::PASSED || *status == eval_status::INCORRECT_NUMERICAL) return std::nullopt;
  std::string log = v->decided.log.empty() ? v->decided.message : v->decided.log;
  return synthetic_trace(j, t, solution, *status, log, hardware);
}

/// upstream's RunLog {definition, workload, solution, log} for sanitize and profile tasks.
ordered_json run_log(const job& j, const task* t, const std::string& solution, const std::optional<verdict>& v) {
  std::string log;
  auto stage_line = [&](stage_id id) {
    if (!v) return;
    if (const auto* s = v->stage(id))
      log += fmt::format("{}: {} ({})\n", stage_name(id), stage_outcome_name(s->outcome), s->summary);
  };
  if (j.spec.kind == queue::job_kind::sanitize) {
    stage_line(stage_id::sanitize);
  } else if (v) {
    stage_line(stage_id::dynamic_check);
    for (const auto& [kernel, counts] : v->targets.dynamic.per_kernel) log += fmt::format("  {}: {}\n", kernel, ordered_json(counts).dump());
    log += fmt::format("target instructions: {} ({})\n", target_verdict_name(v->targets.verdict), v->targets.reason);
  }
  if (v) {
    std::string decided = v->decided.log.empty() ? v->decided.message : v->decided.log;
    if (!decided.empty()) log += decided + "\n";
  }
  return {{"definition", j.spec.task}, {"workload", t ? to_json(t->wl) : ordered_json::object()}, {"solution", solution}, {"log", log}};
}

ordered_json section(bool exist, const std::string& msg) { return {{"exist", exist}, {"msg", msg}}; }

}  // namespace

verdict poison_pill_verdict(const job& j) {
  verdict v;
  v.mode = eval_mode::eval;
  v.task = j.spec.task;
  v.target = j.spec.target;
  v.decided = {eval_outcome::runtime_error, std::nullopt,
               j.error.empty() ? std::string("the candidate took down the workers that ran it") : j.error, ""};
  return v;
}

ordered_json debug_metadata(const verdict& v, const solution& candidate, int context_lines) {
  ordered_json m = ordered_json::object();
  const std::string entry = candidate.entry_file();
  m["FlashInfer CUDA debug report"] = section(
      true, fmt::format("PTXBench debug report for {} on {}: {}", candidate.name, v.target, v.decided.message));
  const stage_record* san = v.stage(stage_id::sanitize);
  m["Sanitizer"] = section(san != nullptr, san ? fmt::format("{}: {}", stage_outcome_name(san->outcome), san->summary) : "");
  const bool fault = v.outcome() == eval_outcome::runtime_error || v.outcome() == eval_outcome::timeout;
  std::string fault_text = v.decided.log.empty() ? v.decided.message : v.decided.log;
  m["Most precise CUDA fault"] = section(fault, fault ? std::string(trim(fault_text)) : "");
  // Every line of the entry file the report names ("kernel.cu:42"), with its neighbours.
  std::string quoted;
  const source_file* src = candidate.find_source(entry);
  if (fault && src && context_lines >= 0) {
    auto lines = split_lines(src->content);
    std::set<int> named;
    for (std::size_t at = fault_text.find(entry + ":"); at != std::string::npos; at = fault_text.find(entry + ":", at + 1)) {
      std::size_t p = at + entry.size() + 1, q = p;
      while (q < fault_text.size() && fault_text[q] >= '0' && fault_text[q] <= '9' && q - p < 9) ++q;
      if (q > p) named.insert(std::stoi(fault_text.substr(p, q - p)));
    }
    for (int line : named) {
      if (line < 1 || line > static_cast<int>(lines.size())) continue;
      quoted += fmt::format("{}:{}\n", entry, line);
      for (int k = std::max(1, line - context_lines); k <= std::min<int>(static_cast<int>(lines.size()), line + context_lines); ++k)
        quoted += fmt::format("{} {:>5} | {}\n", k == line ? ">" : " ", k, lines[static_cast<std::size_t>(k - 1)]);
    }
  }
  m["Source lines"] = section(!quoted.empty(), std::string(trim(quoted)));
  return m;
}

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

ordered_json task_response(const job& j, const std::vector<queue::job_event>& history, const suite& tasks) {
  const task* t = tasks.find_task(j.spec.task);
  ordered_json out;
  const ordered_json submitted = stored_solution(j);
  const std::string solution = solution_name(submitted);
  out["task_id"] = j.id;
  out["kind"] = std::string(queue::to_string(j.spec.kind));
  out["status"] = upstream_status(j);
  out["definition"] = j.spec.task;
  out["solution"] = solution;
  ordered_json stored = stored_verdict(j);
  const std::optional<verdict> v = job_verdict(j, stored);
  if (out["status"] == "completed") {
    switch (j.spec.kind) {
      case queue::job_kind::evaluate: {
        ordered_json traces = ordered_json::array();
        if (auto tr = evaluate_trace(j, t, solution, v, tasks)) traces.push_back(std::move(*tr));
        out["traces"] = traces;
        break;
      }
      case queue::job_kind::sanitize:
      case queue::job_kind::profile: out["logs"] = ordered_json::array({run_log(j, t, solution, v)}); break;
      case queue::job_kind::debug: {
        auto protocol = read_protocol(j.spec.protocol_json);
        auto candidate = typed_solution(submitted);
        ordered_json metadata = v && candidate ? debug_metadata(*v, *candidate, protocol ? protocol->source_context_lines : 4)
                                               : ordered_json{{"FlashInfer CUDA debug report",
                                                               section(false, "no verdict to report on")}};
        out["logs"] = ordered_json::array({{{"definition", j.spec.task},
                                            {"workload", t ? to_json(t->wl) : ordered_json::object()},
                                            {"solution", solution},
                                            {"metadata", metadata}}});
        break;
      }
    }
  }
  if (out["status"] == "failed") out["error"] = j.error.empty() ? std::string("the evaluation failed") : j.error;
  ordered_json extra = job_record(j, history);
  // The stored verdict as the worker wrote it (a poison pill's is made here from the queue's account).
  extra["verdict"] = is_poison_pill(j) ? to_json(*v) : std::move(stored);
  out["ptxbench"] = std::move(extra);
  return out;
}

}  // namespace ptxbench::service
