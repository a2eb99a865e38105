#pragma once
// Times a stage and makes its record.

#include <chrono>

#include "verdict/stage_record.h"

namespace ptxbench {

class stage_timer {
 public:
  explicit stage_timer(stage_id id) : m_id(id), m_start(std::chrono::steady_clock::now()) {}

  /// The stage's record, with the time elapsed since construction.
  [[nodiscard]] stage_record finish(stage_outcome outcome, std::string summary, ordered_json details = nullptr) const {
    return {m_id, outcome, seconds(), std::move(summary), std::move(details)};
  }
  /// Seconds since construction.
  [[nodiscard]] double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  }

 private:
  stage_id m_id;
  std::chrono::steady_clock::time_point m_start;
};

}  // namespace ptxbench
