#pragma once
// The hot path of a timed call between the trusted harness and a candidate runner: one shared page
// (a sealed memfd the harness creates and the runner inherits) holding two sequence numbers, "go"
// written by the harness and "done" written by the runner, each on its own cache line. Both sides
// poll the other's word — the harness spins, the runner spins for a while and then sleeps on a
// shared futex — so the harness's clock brackets a call to within microseconds instead of a socket
// round trip carrying JSON. Everything else (setup, prepare, results, errors) stays on the
// message_channel.
//
// Nothing on the page is trusted: the candidate runs in the runner's process and can read and write
// it. A value on the page decides only when the harness stops its clock; the harness then confirms
// the end of the work itself (docs/trusted-timing.md). The page is sealed against resizing, so the
// runner cannot truncate it under the harness's mapping (which would raise SIGBUS in the harness).
//
// Layout (fixed; offsets in bytes): 0 magic (uint64), 64 go (uint32), 128 runner_sleeping (uint32),
// 192 done (uint32).

#include <cstdint>

#include "core/result.h"

namespace ptxbench {

class sync_channel {
 public:
  enum class wait_result {
    signalled,  ///< the other side wrote the awaited sequence number
    timed_out,  ///< not within the timeout
    peer_gone,  ///< the liveness descriptor reported hang-up or an error (the peer process ended)
  };
  struct wait_options {
    double timeout_s = -1;  ///< negative: no limit
    int liveness_fd = -1;   ///< a socket to the peer, polled for hang-up while waiting; -1: none
    /// How long to spin before falling back: the runner then sleeps on the futex, the harness polls
    /// every 20 µs (a call that long is long enough that 20 µs do not matter).
    double spin_s = 0.02;
  };

  sync_channel() = default;
  ~sync_channel();
  sync_channel(sync_channel&& other) noexcept;
  sync_channel& operator=(sync_channel&& other) noexcept;
  sync_channel(const sync_channel&) = delete;
  sync_channel& operator=(const sync_channel&) = delete;

  /// Harness: creates the page (a memfd with close-on-exec, sealed at one page) and maps it.
  static result<sync_channel> create();
  /// Runner: maps an inherited descriptor; checks its size and magic, and sets close-on-exec on it.
  static result<sync_channel> attach(int fd);

  [[nodiscard]] int fd() const { return m_fd; }
  [[nodiscard]] bool valid() const { return m_page != nullptr; }
  void close();

  /// Harness: publishes go = seq (a sequentially consistent store) and wakes a sleeping runner.
  void signal_go(uint32_t seq);
  /// Harness: waits until done == seq. Other values (stale, or written by the candidate) are ignored.
  wait_result wait_done(uint32_t seq, const wait_options& options);

  /// Runner: waits until go == seq (spin, then a shared futex).
  wait_result wait_go(uint32_t seq, const wait_options& options);
  /// Runner: publishes done = seq (a release store).
  void signal_done(uint32_t seq);

  /// The current done word, for diagnosis and tests.
  [[nodiscard]] uint32_t done_value() const;

 private:
  struct page;
  sync_channel(int fd, page* p) : m_fd(fd), m_page(p) {}
  int m_fd = -1;
  page* m_page = nullptr;
};

}  // namespace ptxbench
