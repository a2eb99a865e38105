#pragma once
// Times a stage and appends its record to a verdict.

#include <chrono>

#include "eval/verdict.h"

namespace ptxbench::eval {

class stage_timer {
 public:
  explicit stage_timer(stage_id id) : m_id(id), m_start(std::chrono::steady_clock::now()) {}
  /// Appends the stage's record (with the elapsed time) and returns a reference to it.
  stage_record& finish(verdict& v, stage_outcome outcome, std::string summary, ordered_json details = nullptr) {
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
    v.stages.push_back({m_id, outcome, s, std::move(summary), std::move(details)});
    return v.stages.back();
  }

 private:
  stage_id m_id;
  std::chrono::steady_clock::time_point m_start;
};

/// Marks `v` as decided by `stage`: sets status, outcome, deciding stage and message, and appends
/// "skipped" records for the stages that will not run.
void decide(verdict& v, stage_id stage, std::optional<eval_status> status, std::string outcome, std::string message,
            bool gpu_mode);

}  // namespace ptxbench::eval
