#include "queue/change_feed.h"

#include <chrono>

namespace ptxbench::queue {

uint64_t change_feed::generation() const {
  std::lock_guard lock(m_mutex);
  return m_generation;
}

void change_feed::bump() {
  {
    std::lock_guard lock(m_mutex);
    ++m_generation;
  }
  m_changed.notify_all();
}

void change_feed::wait(uint64_t seen, int64_t timeout_ms) const {
  std::unique_lock lock(m_mutex);
  m_changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return m_generation != seen; });
}

}  // namespace ptxbench::queue
