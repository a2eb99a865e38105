#pragma once
// Wake-ups for waiting threads (idle workers, long-polling clients): a generation counter that goes
// up whenever the queue may have changed. This process's own commits bump it; with PostgreSQL a
// LISTEN thread bumps it for every NOTIFY from other processes. Waiters always re-check the
// database afterwards and never wait longer than the poll interval, so a lost notification (the
// listener was reconnecting) only costs latency, never a missed job.

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace ptxbench::queue {

class change_feed {
 public:
  [[nodiscard]] uint64_t generation() const;
  void bump();
  /// Returns when the generation differs from `seen` or after timeout_ms, whichever is first.
  void wait(uint64_t seen, int64_t timeout_ms) const;

 private:
  mutable std::mutex m_mutex;
  mutable std::condition_variable m_changed;
  uint64_t m_generation = 0;
};

/// Something that feeds a change_feed in the background until it is destroyed.
class feed_source {
 public:
  virtual ~feed_source() = default;
};

}  // namespace ptxbench::queue
