#pragma once
// Upstream's TaskResponse for a job: {task_id, kind, status (pending|running|completed|failed),
// definition, solution, traces?, logs?, error?} with null fields left out, exactly as FlashInfer-Bench's
// serve API writes it, plus one extra field "ptxbench" with PTXBench's full verdict and the service's
// record of the job (state, cache, times per service stage, the workers that built and ran it).
//
// A candidate's failure is a completed task whose trace says so; "failed" means PTXBench could not
// evaluate it (infrastructure failures past the retry limit, no requested workload, nothing to serve
// it). A candidate that took down its workers (a poison pill) is the candidate's failure: completed,
// with a runtime_error verdict.

#include <string>
#include <vector>

#include "core/json_check.h"
#include "queue/job.h"
#include "suite/solution.h"
#include "suite/task.h"
#include "verdict/verdict.h"

namespace ptxbench::service {

/// pending (queued, compiled), running (compiling, running), completed (done, poison pill), failed.
std::string upstream_status(const queue::job& j);

/// The TaskResponse. `tasks` resolves the job's task (for the workload in traces and logs) and target
/// (the hardware a trace without one names); `history` is the job's event history (who built and
/// ran it, cache hits).
ordered_json task_response(const queue::job& j, const std::vector<queue::job_event>& history, const suite& tasks);

/// The service's record of a job (the "ptxbench" field without the verdict).
ordered_json job_record(const queue::job& j, const std::vector<queue::job_event>& history);

/// The verdict of a poison pill: the candidate's runtime error, with the queue's account of the
/// workers it took down as the message.
verdict poison_pill_verdict(const queue::job& j);

/// Upstream's debug report (a /debug task's logs[].metadata): titled sections {exist, msg} from a
/// sanitizer verdict, the fault with the entry file's source lines around each line it names.
ordered_json debug_metadata(const verdict& v, const solution& candidate, int context_lines);

}  // namespace ptxbench::service
