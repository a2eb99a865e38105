#pragma once
// The runner's second channel for counting what a call put on the GPU (issue 20, item 5(b);
// docs/trusted-timing.md): a CUPTI callback subscriber on every runtime API call and on the
// driver's launch calls. The activity records (activity_tracer) say what was recorded; this says
// what was launched. The candidate can switch activity records off with one CUPTI call; to hide a
// launch from this channel as well it must find and disable the runner's subscription, which the
// check after every call (callbacks_enabled, and the marker launch the callbacks must see) notices
// unless it is switched back in time.
//
// One subscriber per process (CUPTI's rule); the runner starts it only for timing, never under
// compute-sanitizer or Nsight Compute (they subscribe themselves).

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/result.h"
#include "gpu/common/launch_audit.h"

namespace ptxbench::gpu {

class launch_counter {
 public:
  /// Subscribes and enables the callbacks. Fails with CUPTI's message (another subscriber, no CUPTI).
  static result<std::unique_ptr<launch_counter>> start();
  ~launch_counter();
  launch_counter(const launch_counter&) = delete;
  launch_counter& operator=(const launch_counter&) = delete;

  /// A call begins: launches from now on belong to it. Before the first call (the candidate's static
  /// constructors) launches are not counted at all.
  void begin_call();
  /// The call ended (after the device synchronised): its launches, and the launches made outside any
  /// call since the previous end_call (markers excepted). The markers and the checks that need
  /// records are filled in by the caller.
  audit_observations end_call();

  /// Runs `launch` (which launches the runner's marker kernel) on this thread, marked as the
  /// runner's own, and returns the correlation ids the callbacks saw for it (empty: not seen).
  std::vector<uint32_t> launch_marker(const std::function<void()>& launch);

  /// Whether every launch callback of the subscription is still enabled (cuptiGetCallbackState).
  [[nodiscard]] bool callbacks_enabled() const;

  /// Called by the CUPTI callback for each completed outermost launch (not for use elsewhere).
  void record(observed_launch launch, bool marker);

 private:
  launch_counter() = default;
  enum class phase { setup, between, in_call };
  void* m_subscriber = nullptr;  // CUpti_SubscriberHandle
  mutable std::mutex m_mutex;
  phase m_phase = phase::setup;
  std::vector<observed_launch> m_call;
  int m_outside = 0;
  std::vector<uint32_t> m_marker_ids;
  std::vector<std::pair<int, uint32_t>> m_watched;  // (domain, callback id) found enabled at start
};

}  // namespace ptxbench::gpu
