#pragma once
// Upstream's TaskResponse for a job: {task_id, kind, status (pending|running|completed|failed),
// definition, solution, traces?, logs?, error?} with null fields left out, exactly as FlashInfer-Bench's
// serve API writes it, plus one extra field "ptxbench" with PTXBench's full verdict and the service's
// record of the job (state, cache, times per service stage, the workers that built and ran it).
//
// A candidate's failure is a completed task whose trace says so; "failed" means PTXBench could not
// evaluate it (infrastructure failures past the retry limit). A candidate that took down its workers
// (a poison pill) is the candidate's failure: completed, RUNTIME_ERROR.

#include <string>
#include <vector>

#include "core/json_check.h"
#include "queue/job.h"
#include "suite/task.h"

namespace ptxbench::service {

/// pending (queued, compiled), running (compiling, running), completed (done, poison pill), failed.
std::string upstream_status(const queue::job& j);

/// The TaskResponse. `t` is the job's task (for the workload in traces; may be null when the suite no
/// longer has it); `history` is the job's event history (who built and ran it, cache hits).
ordered_json task_response(const queue::job& j, const std::vector<queue::job_event>& history, const task* t);

/// The service's record of a job (the "ptxbench" field without the verdict).
ordered_json job_record(const queue::job& j, const std::vector<queue::job_event>& history);

}  // namespace ptxbench::service
