#pragma once
// What a verdict records about one runner's sandbox (docs/sandbox.md, "Reporting"): the harness
// keeps one record per runner process it started for a candidate, under the process's name
// ("plain", "sanitize-memcheck", "profile"), in gpu_stage_result::sandbox, which becomes the
// verdict's environment.sandbox.

#include "core/json_check.h"
#include "gpu/harness/runner_client.h"

namespace ptxbench::gpu {

/// The report the runner sent with "ready" (or with its load error): "applied", then every layer
/// with "active" and, where it is off, the "reason". A runner that sent none (it died while
/// loading the candidate, or predates the sandbox) gets {"applied": null, "reason": why}: unknown,
/// never claimed.
ordered_json sandbox_record(const call_result& started, bool requested = true);

}  // namespace ptxbench::gpu
