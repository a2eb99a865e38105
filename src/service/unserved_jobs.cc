#include "service/unserved_jobs.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ptxbench::service {

using queue::job_state;
using queue::worker_role;

std::vector<std::string> served_targets(const std::vector<worker_view>& workers) {
  std::set<std::string> out;
  for (const auto& w : workers)
    if (w.alive && w.info.role == worker_role::gpu) out.insert(w.info.targets.begin(), w.info.targets.end());
  return {out.begin(), out.end()};
}

std::optional<std::string> why_unserved(const queue::job_summary& j, const std::vector<worker_view>& workers) {
  if (j.state == job_state::queued) {
    bool cpu = std::any_of(workers.begin(), workers.end(),
                           [](const worker_view& w) { return w.alive && w.info.role == worker_role::cpu; });
    if (cpu) return std::nullopt;
    return std::string("no live CPU worker builds this queue's jobs (start `ptxbench worker --role cpu`)");
  }
  if (j.state != job_state::compiled) return std::nullopt;
  auto targets = served_targets(workers);
  if (std::find(targets.begin(), targets.end(), j.target) != targets.end()) return std::nullopt;
  if (targets.empty())
    return fmt::format("no live GPU worker serves this queue, so nothing can run target {} (start `ptxbench worker "
                       "--role gpu` on a {} host)",
                       j.target, j.target);
  return fmt::format("no live GPU worker serves target {}: the live GPU workers serve {}; resubmit with \"target\": "
                     "\"{}\" or add a GPU worker for {}",
                     j.target, fmt::join(targets, ", "), targets.front(), j.target);
}

result<int> fail_unserved(queue::job_store& store, int64_t grace_ms) {
  auto stats = store.stats();
  if (!stats) return stats.err();
  if (stats->depth[job_state::queued] + stats->depth[job_state::compiled] == 0) return 0;
  auto workers = view_workers(store, stats->now_ms);
  if (!workers) return workers.err();
  auto jobs = store.summaries(stats->now_ms);  // the unfinished ones
  if (!jobs) return jobs.err();
  int failed = 0;
  for (const auto& s : *jobs) {
    const int64_t since = s.state == job_state::queued ? s.queued_ms : s.compiled_ms;
    if ((s.state != job_state::queued && s.state != job_state::compiled) || stats->now_ms - since < grace_ms) continue;
    auto why = why_unserved(s, *workers);
    if (!why) continue;
    auto done = store.fail_waiting(s.id, s.state, s.version, queue::failure_kind::unserved, *why);
    if (!done) return done.err();
    failed += *done ? 1 : 0;
  }
  return failed;
}

}  // namespace ptxbench::service
