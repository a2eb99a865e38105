#include "service/queue_view.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "service/environment.h"

namespace ptxbench::service {
namespace {

using queue::job_state;

std::optional<double> between(int64_t from, int64_t to) {
  if (from <= 0 || to <= 0 || to < from) return std::nullopt;
  return static_cast<double>(to - from) / 1000.0;
}

std::string label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

constexpr double k_buckets[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600};

}  // namespace

result<std::vector<worker_view>> view_workers(queue::job_store& store, int64_t now_ms, double recent_s) {
  auto workers = store.workers();
  if (!workers) return workers.err();
  std::vector<worker_view> out;
  for (auto& w : *workers) {
    worker_view v;
    v.last_seen_s = static_cast<double>(now_ms - w.last_seen_ms) / 1000.0;
    bool holds_lease = false;
    if (!w.current_job.empty()) {
      auto j = store.get(w.current_job);
      holds_lease = j && *j && (*j)->worker == w.id && is_leased((*j)->state) && (*j)->lease_expires_ms > now_ms;
    }
    if (v.last_seen_s > recent_s && !holds_lease) continue;
    v.alive = v.last_seen_s < 30 || holds_lease;
    v.healthy = v.alive && w.health == "ok";
    auto info = ordered_json::parse(w.info_json, nullptr, false);
    if (info.is_object()) {
      v.device = info.value("device", "");
      if (info.contains("environment")) v.environment = environment_from_json(info["environment"]);
    }
    if (v.device.empty()) v.device = w.role == queue::worker_role::gpu ? "gpu" : "cpu";
    v.info = std::move(w);
    out.push_back(std::move(v));
  }
  return out;
}

stage_times times_of(const queue::job_summary& j) {
  stage_times t;
  t.total = between(j.submitted_ms, j.finished_ms);
  if (answered_from_cache(j)) return t;
  t.queue = between(j.queued_ms, j.compiling_ms);
  t.compile = between(j.compiling_ms, j.compiled_ms > 0 ? j.compiled_ms : j.finished_ms);
  if (j.running_ms > 0) {
    t.gpu_wait = between(j.compiled_ms, j.running_ms);
    t.gpu_run = between(j.running_ms, j.finished_ms);
  }
  return t;
}

bool answered_from_cache(const queue::job_summary& j) { return j.state == job_state::done && j.attempts == 0; }

std::string prometheus_metrics(const queue::queue_stats& stats, const std::vector<queue::job_summary>& jobs,
                               const std::vector<worker_view>& workers) {
  std::string out;
  out += "# HELP ptxbench_queue_jobs Jobs in each state now.\n# TYPE ptxbench_queue_jobs gauge\n";
  for (const auto& [state, n] : stats.depth)
    out += fmt::format("ptxbench_queue_jobs{{state=\"{}\"}} {}\n", queue::to_string(state), n);
  out += "# HELP ptxbench_oldest_waiting_seconds How long the oldest waiting job has waited.\n"
         "# TYPE ptxbench_oldest_waiting_seconds gauge\n";
  out += fmt::format("ptxbench_oldest_waiting_seconds {:.3f}\n",
                     stats.oldest_waiting_id.empty() ? 0.0 : (stats.now_ms - stats.oldest_waiting_since_ms) / 1000.0);

  // Finished jobs per kind and result: done (a verdict), cached (answered from the result cache),
  // failed (infrastructure, past the retries), poison_pill.
  std::map<std::pair<std::string, std::string>, int64_t> finished;
  for (const char* kind : {"evaluate", "sanitize", "profile"})
    for (const char* r : {"done", "cached", "failed", "poison_pill"}) finished[{kind, r}] = 0;
  std::map<std::string, std::vector<double>> durations;
  std::map<std::string, double> busy;
  for (const auto& j : jobs) {
    std::string kind(queue::to_string(j.kind));
    if (j.state == job_state::done) ++finished[{kind, answered_from_cache(j) ? "cached" : "done"}];
    if (j.state == job_state::failed)
      ++finished[{kind, j.failure == queue::failure_kind::poison_pill ? "poison_pill" : "failed"}];
    if (is_terminal(j.state)) {
      auto t = times_of(j);
      if (t.queue) durations["queue"].push_back(*t.queue);
      if (t.compile) durations["compile"].push_back(*t.compile);
      if (t.gpu_wait) durations["gpu_wait"].push_back(*t.gpu_wait);
      if (t.gpu_run) {
        durations["gpu_run"].push_back(*t.gpu_run);
        busy[j.worker] += *t.gpu_run;
      }
    } else if (j.state == job_state::running && j.running_ms > 0) {
      busy[j.worker] += std::max(0.0, (stats.now_ms - j.running_ms) / 1000.0);
    }
  }
  out += "# HELP ptxbench_jobs_finished_total Finished jobs by kind and result.\n# TYPE ptxbench_jobs_finished_total counter\n";
  for (const auto& [key, n] : finished)
    out += fmt::format("ptxbench_jobs_finished_total{{kind=\"{}\",result=\"{}\"}} {}\n", key.first, key.second, n);

  out += "# HELP ptxbench_stage_duration_seconds Time finished jobs spent in each service stage (queue: waiting for a "
         "CPU worker; compile: the CPU stages; gpu_wait: built, waiting for a GPU; gpu_run: the GPU stages).\n"
         "# TYPE ptxbench_stage_duration_seconds histogram\n";
  for (const char* stage : {"queue", "compile", "gpu_wait", "gpu_run"}) {
    const auto& d = durations[stage];
    double sum = 0;
    for (double x : d) sum += x;
    for (double b : k_buckets) {
      auto n = std::count_if(d.begin(), d.end(), [&](double x) { return x <= b; });
      out += fmt::format("ptxbench_stage_duration_seconds_bucket{{stage=\"{}\",le=\"{}\"}} {}\n", stage, b, n);
    }
    out += fmt::format("ptxbench_stage_duration_seconds_bucket{{stage=\"{}\",le=\"+Inf\"}} {}\n", stage, d.size());
    out += fmt::format("ptxbench_stage_duration_seconds_sum{{stage=\"{}\"}} {:.3f}\n", stage, sum);
    out += fmt::format("ptxbench_stage_duration_seconds_count{{stage=\"{}\"}} {}\n", stage, d.size());
  }
  out += "# HELP ptxbench_worker_gpu_busy_seconds_total GPU-stage time of the jobs each worker ran (the attempt that "
         "finished, and the one running now).\n# TYPE ptxbench_worker_gpu_busy_seconds_total counter\n";
  for (const auto& w : workers)
    if (w.info.role == queue::worker_role::gpu) busy.try_emplace(w.info.id, 0.0);
  for (const auto& [worker, s] : busy)
    out += fmt::format("ptxbench_worker_gpu_busy_seconds_total{{worker=\"{}\"}} {:.3f}\n", label(worker), s);
  out += "# HELP ptxbench_worker_up Registered workers: 1 when alive and healthy.\n# TYPE ptxbench_worker_up gauge\n";
  for (const auto& w : workers)
    out += fmt::format("ptxbench_worker_up{{worker=\"{}\",role=\"{}\",device=\"{}\"}} {}\n", label(w.info.id),
                       queue::to_string(w.info.role), label(w.device), w.healthy ? 1 : 0);
  return out;
}

ordered_json queue_report(const queue::queue_stats& stats, const std::vector<queue::job_summary>& jobs,
                          const std::vector<worker_view>& workers, int slowest) {
  ordered_json r;
  ordered_json depth = ordered_json::object();
  for (const auto& [state, n] : stats.depth) depth[std::string(queue::to_string(state))] = n;
  r["depth"] = depth;
  r["oldest_waiting"] = stats.oldest_waiting_id.empty()
                            ? ordered_json(nullptr)
                            : ordered_json{{"job_id", stats.oldest_waiting_id},
                                           {"waiting_s", (stats.now_ms - stats.oldest_waiting_since_ms) / 1000.0}};
  ordered_json ws = ordered_json::array();
  for (const auto& w : workers)
    ws.push_back({{"id", w.info.id},
                  {"role", std::string(queue::to_string(w.info.role))},
                  {"host", w.info.host},
                  {"device", w.device},
                  {"targets", w.info.targets},
                  {"alive", w.alive},
                  {"health", w.info.health},
                  {"current_job", w.info.current_job},
                  {"last_seen_s", w.last_seen_s}});
  r["workers"] = ws;
  ordered_json throughput = ordered_json::object();
  for (int minutes : {1, 5, 15}) {
    int64_t since = stats.now_ms - minutes * 60000;
    int64_t n = std::count_if(jobs.begin(), jobs.end(), [&](const auto& j) { return is_terminal(j.state) && j.finished_ms >= since; });
    throughput[fmt::format("last_{}_min", minutes)] = {{"finished", n}, {"per_minute", static_cast<double>(n) / minutes}};
  }
  r["throughput"] = throughput;
  std::vector<const queue::job_summary*> done;
  for (const auto& j : jobs)
    if (is_terminal(j.state) && j.finished_ms >= stats.now_ms - 3600000 && times_of(j).total) done.push_back(&j);
  std::sort(done.begin(), done.end(), [](auto* a, auto* b) { return *times_of(*a).total > *times_of(*b).total; });
  ordered_json slow = ordered_json::array();
  auto opt = [](const std::optional<double>& x) { return x ? ordered_json(*x) : ordered_json(nullptr); };
  for (std::size_t i = 0; i < done.size() && static_cast<int>(i) < slowest; ++i) {
    const auto& j = *done[i];
    auto t = times_of(j);
    slow.push_back({{"job_id", j.id},
                    {"kind", std::string(queue::to_string(j.kind))},
                    {"task", j.task},
                    {"state", std::string(queue::to_string(j.state))},
                    {"worker", j.worker},
                    {"attempts", j.attempts},
                    {"total_s", opt(t.total)},
                    {"queue_s", opt(t.queue)},
                    {"compile_s", opt(t.compile)},
                    {"gpu_wait_s", opt(t.gpu_wait)},
                    {"gpu_run_s", opt(t.gpu_run)}});
  }
  r["slowest"] = slow;
  return r;
}

std::string queue_report_text(const ordered_json& r) {
  std::string out = "queue:";
  for (const auto& [state, n] : r["depth"].items()) out += fmt::format("  {} {}", state, n.get<int64_t>());
  out += "\n";
  if (r["oldest_waiting"].is_object())
    out += fmt::format("oldest waiting: {} ({:.1f} s)\n", r["oldest_waiting"]["job_id"].get<std::string>(),
                       r["oldest_waiting"]["waiting_s"].get<double>());
  const auto& t = r["throughput"];
  out += fmt::format("throughput: {:.1f}/min over 1 min, {:.1f}/min over 5 min, {:.1f}/min over 15 min\n",
                     t["last_1_min"]["per_minute"].get<double>(), t["last_5_min"]["per_minute"].get<double>(),
                     t["last_15_min"]["per_minute"].get<double>());
  out += fmt::format("\nworkers ({}):\n", r["workers"].size());
  out += fmt::format("  {:<28} {:<4} {:<8} {:<6} {:<9} {:<34} {}\n", "id", "role", "device", "alive", "seen", "job", "health");
  for (const auto& w : r["workers"])
    out += fmt::format("  {:<28} {:<4} {:<8} {:<6} {:<9} {:<34} {}\n", w["id"].get<std::string>(), w["role"].get<std::string>(),
                       w["device"].get<std::string>(), w["alive"].get<bool>() ? "yes" : "no",
                       fmt::format("{:.0f} s ago", w["last_seen_s"].get<double>()), w["current_job"].get<std::string>(),
                       w["health"].get<std::string>());
  out += fmt::format("\nslowest jobs of the last hour ({}):\n", r["slowest"].size());
  out += fmt::format("  {:<34} {:<9} {:<26} {:<7} {:>8} {:>8} {:>8} {:>8} {:>8}\n", "job", "kind", "task", "state", "total",
                     "queue", "compile", "gpu wait", "gpu run");
  auto secs = [](const ordered_json& x) { return x.is_number() ? fmt::format("{:.2f}", x.get<double>()) : std::string("-"); };
  for (const auto& j : r["slowest"])
    out += fmt::format("  {:<34} {:<9} {:<26} {:<7} {:>8} {:>8} {:>8} {:>8} {:>8}\n", j["job_id"].get<std::string>(),
                       j["kind"].get<std::string>(), j["task"].get<std::string>(), j["state"].get<std::string>(),
                       secs(j["total_s"]), secs(j["queue_s"]), secs(j["compile_s"]), secs(j["gpu_wait_s"]),
                       secs(j["gpu_run_s"]));
  return out;
}

}  // namespace ptxbench::service
