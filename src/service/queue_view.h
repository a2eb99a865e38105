#pragma once
// The queue as the service reports it (GET /health, GET /metrics, `ptxbench jobs`): workers with their
// liveness, depth per state, throughput, the slowest jobs and service-stage durations, all read from
// the store, so every server and every `ptxbench jobs` sees the same numbers.

#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "queue/job_store.h"

namespace ptxbench::service {

struct worker_view {
  queue::worker_info info;
  bool alive = false;    ///< seen in the last 30 s, or holding a lease that has not expired
  bool healthy = false;  ///< alive and its health is "ok"
  double last_seen_s = 0;
  std::string device;    ///< "cuda:0" for a GPU worker, "cpu" otherwise (upstream's WorkerInfo.device)
  std::optional<queue::run_environment> environment;
};

/// Every registered worker seen in the last `recent_s` seconds or still holding a lease.
result<std::vector<worker_view>> view_workers(queue::job_store& store, int64_t now_ms, double recent_s = 600);

/// Service stages of a finished job, in seconds (nullopt where the stage did not happen).
struct stage_times {
  std::optional<double> queue, compile, gpu_wait, gpu_run, total;
};
stage_times times_of(const queue::job_summary& j);

/// True for a job answered from the result cache (done without ever being leased).
bool answered_from_cache(const queue::job_summary& j);

/// GET /metrics: Prometheus text format (version 0.0.4).
std::string prometheus_metrics(const queue::queue_stats& stats, const std::vector<queue::job_summary>& jobs,
                               const std::vector<worker_view>& workers);

/// `ptxbench jobs`: depth per state, workers, throughput over 1/5/15 minutes and the `slowest`
/// slowest jobs finished in the last hour.
ordered_json queue_report(const queue::queue_stats& stats, const std::vector<queue::job_summary>& jobs,
                          const std::vector<worker_view>& workers, int slowest = 10);
/// The same report as a terminal table.
std::string queue_report_text(const ordered_json& report);

}  // namespace ptxbench::service
