#include "agent/progress.h"

#include <algorithm>

#include <fmt/format.h>

namespace ptxbench::agent {

progress_display::progress_display(std::FILE* out, bool bar, bool quiet, int trajectories, int turns_max)
    : m_out(out), m_bar(bar && !quiet), m_quiet(quiet), m_turns_max(turns_max),
      m_correct(trajectories), m_target_correct(trajectories), m_failed(trajectories), m_done(trajectories),
      m_running(trajectories), m_labels(trajectories) {
  if (m_bar) m_thread = std::thread([this] { redraw_loop(); });
}

progress_display::~progress_display() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
  // The bar's last state; without the bar, each trajectory's line already ended with it.
  if (m_bar) std::fprintf(m_out, "\r\033[K%s\n", line().c_str());
}

void progress_display::turn_done(int item, const turn_report& r) {
  std::lock_guard lock(m_mutex);
  ++m_turns;
  if (r.correct) m_correct[item] = true;
  if (r.target_correct) m_target_correct[item] = true;
  if (m_quiet || m_bar || r.from_disk) return;
  const int per_trajectory = m_done.empty() ? 0 : m_turns_max / static_cast<int>(m_done.size());
  std::fprintf(m_out, "%s turn %d/%d: %s%s%s\n", m_labels[item].c_str(), r.turn + 1, per_trajectory,
               std::string(outcome_name(r.label)).c_str(),
               r.speedup ? fmt::format(", speedup {:.3f}x", *r.speedup).c_str() : "",
               r.target_correct ? ", target-correct" : "");
  std::fflush(m_out);
}

void progress_display::trajectory_started(int item, const std::string& label) {
  std::lock_guard lock(m_mutex);
  m_running[item] = true;
  m_labels[item] = label;
}

void progress_display::trajectory_done(int item, const std::string& name, const trajectory_result& r) {
  std::lock_guard lock(m_mutex);
  m_running[item] = false;
  bool failed = r.end == trajectory_end::api_error || r.end == trajectory_end::auth_error ||
                r.end == trajectory_end::infra_error || r.end == trajectory_end::setup_error;
  m_failed[item] = failed;
  m_done[item] = !failed && r.end != trajectory_end::stopped;
  if (m_quiet || m_bar) return;
  bool quiet_message = r.skipped || r.end == trajectory_end::limits_exceeded || r.end == trajectory_end::submitted;
  std::string what = fmt::format("{}: {} after {} turns{}{}", name, trajectory_end_name(r.end), r.turns_completed,
                                 r.skipped ? " (already done)" : "", quiet_message ? "" : " — " + r.message);
  std::fprintf(m_out, "%s | %s\n", what.c_str(), line().c_str());
  std::fflush(m_out);
}

std::string progress_display::line() const {
  auto count = [](const std::vector<bool>& v) { return static_cast<int>(std::count(v.begin(), v.end(), true)); };
  int total = static_cast<int>(m_done.size()), done = count(m_done);
  constexpr int width = 20;
  int filled = total ? done * width / total : width;
  return fmt::format("[{}{}] {}/{} done, {} running | turns {}/{} | correct {} | target-correct {} | failed {}",
                     std::string(filled, '#'), std::string(width - filled, '-'), done, total, count(m_running),
                     m_turns, m_turns_max, count(m_correct), count(m_target_correct), count(m_failed));
}

void progress_display::redraw_loop() {
  std::unique_lock lock(m_mutex);
  while (!m_stop) {
    std::fprintf(m_out, "\r\033[K%s", line().c_str());
    std::fflush(m_out);
    m_wake.wait_for(lock, std::chrono::milliseconds(500));
  }
}

}  // namespace ptxbench::agent
