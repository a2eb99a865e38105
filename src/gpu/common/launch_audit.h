#pragma once
// The pure part of the runner's launch audit (issue 20, item 5(b); docs/trusted-timing.md): how the
// CUPTI callbacks of one thread group into launches, which launches left no activity record, and
// the "audit" object the runner reports (eval::call_audit_from_json reads it). No CUDA or CUPTI
// calls here, so the CPU tests check it; the callback plumbing is src/gpu/runner/launch_counter.cc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/json_check.h"

namespace ptxbench::gpu {

/// True for the runner's marker kernel (gpu/runner/marker_kernel.cu) as an activity record or a
/// profiler spells its name: the runner's own launch, never a candidate's.
bool is_marker_kernel_name(std::string_view name);

/// One launch as the callback channel saw it: the outermost launch call of a thread and the
/// correlation ids of every API call nested inside it (the runtime may call the driver, and an
/// activity record carries the id of one of them).
struct observed_launch {
  std::string api;                      ///< e.g. "cudaLaunchKernel_v7000", "cuLaunchKernelEx"
  bool graph = false;                   ///< a graph launch (one record per kernel node, at least one)
  /// Captured into a graph (stream capture), not executed: it needs no record now (the graph's
  /// launch does). Set when CUPTI reported a graph node created inside the launch call, or when a
  /// stream capture was active in the process (the coarser signal; see docs/trusted-timing.md).
  bool captured = false;
  std::vector<uint32_t> correlation_ids;
};

/// Groups one thread's API callbacks into launches. The runner enables every runtime API callback
/// and the driver's launch callbacks: a launch nested in a non-launch runtime call (the runtime's
/// own internal work, if the driver reports it) is not the candidate's and is ignored; calls nested
/// in a launch add their correlation ids to it.
class launch_grouper {
 public:
  /// An API call begins on this thread.
  void enter(bool is_launch, std::string_view api, bool graph, uint32_t correlation_id);
  /// The innermost open call returns; when that closes an outermost launch that succeeded, it is
  /// returned. An exit without an enter (callbacks enabled mid-call) is ignored.
  std::optional<observed_launch> exit(bool succeeded);
  /// A graph node was created on this thread: the open launch, if any, was captured, not executed.
  void mark_captured();
  [[nodiscard]] int depth() const { return m_depth; }

 private:
  int m_depth = 0;
  bool m_outer_is_launch = false;
  observed_launch m_current;
};

/// The launches that were executed (not captured) and none of whose correlation ids appears among
/// `recorded` (the correlation ids of the activity records that arrived: kernels, copies, memsets).
std::vector<observed_launch> unrecorded_launches(const std::vector<observed_launch>& launches,
                                                 const std::unordered_set<uint32_t>& recorded);

/// True when one of the launch's correlation ids appears among `recorded`.
bool was_recorded(const observed_launch& launch, const std::unordered_set<uint32_t>& recorded);

/// What the runner checked around one call.
struct audit_observations {
  std::vector<observed_launch> launches;  ///< during the call (captured ones included)
  int launches_outside_calls = 0;         ///< since the previous call, while no call ran
  bool marker_before = false;             ///< the marker before the call left a record
  bool marker_after = false;              ///< the marker after the call left a record
  bool marker_after_counted = false;      ///< the callbacks saw the marker after the call
  bool callbacks_enabled = false;         ///< cuptiGetCallbackState said every launch callback is on
  /// Kernel records (markers excluded) inside the call's window on the CUPTI clock: the count the
  /// matching falls back to when no launch of the call matches a record by correlation id at all.
  int kernel_records_in_call = 0;
};

/// The "audit" object of a call's "done" message (eval/measurement_audit.h reads it). Launches are
/// matched to records by correlation id ("matching": "correlation"). Should not one executed launch
/// of the call match, while at least as many kernel records as launches arrived in the call's window,
/// the ids are taken to follow a scheme this runner does not know (a driver change, not tampering:
/// tampering leaves the decoy's own launch matched) and the launches are matched by count instead
/// ("matching": "count").
ordered_json audit_json(const audit_observations& seen, const std::unordered_set<uint32_t>& recorded);

}  // namespace ptxbench::gpu
