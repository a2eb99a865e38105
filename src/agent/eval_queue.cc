#include "agent/eval_queue.h"

#include <chrono>
#include <exception>

#include <fmt/format.h>

namespace ptxbench::agent {

eval_slots::eval_slots(std::vector<std::unique_ptr<evaluator>> evaluators)
    : m_evaluators(std::move(evaluators)), m_busy(m_evaluators.size(), false) {}

result<std::unique_ptr<eval_slots>> eval_slots::create(int count, const evaluator_factory& factory) {
  if (count < 1) return make_error(fmt::format("need at least one evaluation slot, got {}", count));
  std::vector<std::unique_ptr<evaluator>> evaluators;
  for (int i = 0; i < count; ++i) {
    auto e = factory(i);
    if (!e) return e.err().with_context(fmt::format("evaluator for slot {}", i));
    evaluators.push_back(std::move(*e));
  }
  return std::unique_ptr<eval_slots>(new eval_slots(std::move(evaluators)));
}

slot_outcome eval_slots::evaluate(const eval_request& request) {
  using clock = std::chrono::steady_clock;
  slot_outcome out;
  auto queued = clock::now();
  {
    std::unique_lock lock(m_mutex);
    m_free.wait(lock, [&] {
      for (std::size_t i = 0; i < m_busy.size(); ++i)
        if (!m_busy[i]) {
          out.slot = static_cast<int>(i);
          return true;
        }
      return false;
    });
    m_busy[out.slot] = true;
  }
  auto started = clock::now();
  out.queue_wait_s = std::chrono::duration<double>(started - queued).count();
  try {
    out.verdict = m_evaluators[out.slot]->evaluate(request);
  } catch (const std::exception& e) {
    out.verdict = make_error(std::string("evaluator threw: ") + e.what());
  } catch (...) {
    out.verdict = make_error("evaluator threw a non-standard exception");
  }
  out.eval_s = std::chrono::duration<double>(clock::now() - started).count();
  {
    std::lock_guard lock(m_mutex);
    m_busy[out.slot] = false;
  }
  m_free.notify_one();
  return out;
}

}  // namespace ptxbench::agent
