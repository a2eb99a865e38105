#pragma once
// The sweep's progress: a redrawn bar on a terminal; otherwise (a log file, a cluster job) one line
// per finished turn and one per finished trajectory, so a log shows progress as it happens.
// Counts trajectories with a correct turn, with a target-correct turn, and interrupted ones.

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/turn_loop.h"

namespace ptxbench::agent {

class progress_display {
 public:
  /// `bar`: redraw a bar in place (for a terminal); `quiet`: print nothing.
  progress_display(std::FILE* out, bool bar, bool quiet, int trajectories, int turns_max);
  ~progress_display();
  progress_display(const progress_display&) = delete;
  progress_display& operator=(const progress_display&) = delete;

  /// Without the bar, prints "<task> <variant> t<k> turn 3/8: passed, speedup 0.912x, target-correct"
  /// (turns read back from disk on resume are counted, not printed).
  void turn_done(int item, const turn_report& r);
  /// `label` names the trajectory in the per-turn lines ("gemm_n7168_k5120 base t0").
  void trajectory_started(int item, const std::string& label);
  void trajectory_done(int item, const std::string& name, const trajectory_result& r);

  /// "[######----] 5/12 done, 2 running | turns 23/96 | correct 3 | target-correct 1 | failed 0".
  [[nodiscard]] std::string line() const;

 private:
  void redraw_loop();

  std::FILE* m_out;
  bool m_bar, m_quiet;
  int m_turns_max;
  std::vector<bool> m_correct, m_target_correct, m_failed, m_done, m_running;
  std::vector<std::string> m_labels;
  int m_turns = 0;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::thread m_thread;
};

}  // namespace ptxbench::agent
