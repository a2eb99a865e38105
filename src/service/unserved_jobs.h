#pragma once
// Jobs nothing can serve are answered, not left waiting: a job queued while no live CPU worker
// builds for the queue, or built for a target no live GPU worker serves (a b200 job on a host of
// H100s, an h200 job after `serve` chose its default from the hardware), is failed with failure
// kind `unserved` and a one-line error naming what is missing, after it has waited `grace` in that
// state. `serve` runs this beside its lease reaper; the error reaches upstream's clients as a failed
// task and `ptxbench eval --remote` as one line.
//
// The grace covers workers that are starting (a GPU worker probes its GPU before it registers) or
// restarting; `serve` itself waits one grace after it starts before it fails anything, so a restart
// of the whole service does not fail the jobs its own workers are about to take.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "queue/job_store.h"
#include "service/queue_view.h"

namespace ptxbench::service {

/// Why no live worker can take this waiting job now, or nullopt when one can (or it is not waiting).
std::optional<std::string> why_unserved(const queue::job_summary& j, const std::vector<worker_view>& workers);

/// The targets the live GPU workers serve, sorted, each once.
std::vector<std::string> served_targets(const std::vector<worker_view>& workers);

/// Fails every job that has waited at least grace_ms in queued or compiled with nothing to serve it;
/// returns how many. A job a worker takes meanwhile is left alone.
result<int> fail_unserved(queue::job_store& store, int64_t grace_ms);

}  // namespace ptxbench::service
