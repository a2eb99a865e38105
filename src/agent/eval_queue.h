#pragma once
// GPU evaluations through a bounded queue: one evaluator per GPU slot, trajectories wait for a free
// slot while their model calls run freely in parallel.

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/result.h"
#include "verdict/evaluator.h"

namespace ptxbench::agent {

/// Makes the evaluator for one slot (slot i evaluates on GPU i). Injected so tests use a fake.
using evaluator_factory = std::function<result<std::unique_ptr<evaluator>>(int slot)>;

struct slot_outcome {
  result<ptxbench::verdict> verdict = make_error("not evaluated");
  double queue_wait_s = 0;  ///< time spent waiting for a free slot
  double eval_s = 0;        ///< time the evaluator took
  int slot = -1;
};

class eval_slots {
 public:
  /// Builds `count` evaluators with the factory; fails with the first factory error.
  static result<std::unique_ptr<eval_slots>> create(int count, const evaluator_factory& factory);

  /// Waits for a free slot, evaluates, frees the slot. Thread-safe; never throws (an evaluator that
  /// throws becomes an infrastructure error).
  slot_outcome evaluate(const eval_request& request);

  [[nodiscard]] int size() const { return static_cast<int>(m_evaluators.size()); }

 private:
  explicit eval_slots(std::vector<std::unique_ptr<evaluator>> evaluators);

  std::vector<std::unique_ptr<evaluator>> m_evaluators;
  std::vector<bool> m_busy;
  std::mutex m_mutex;
  std::condition_variable m_free;
};

}  // namespace ptxbench::agent
