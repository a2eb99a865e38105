#pragma once
// The task as a model (and a person) sees it: the definition without its bookkeeping tags, plus the
// concrete workload axes and tensor shapes. Upstream hid var-axis values such as M and S from the
// model; we state them, since the evaluated workload is fixed.

#include "core/json_check.h"
#include "suite/task.h"

namespace ptxbench {

/// Returns the model-facing JSON of a task: name, op_type, description, axes, constraints, inputs,
/// outputs, reference, and "workload": {uuid, axes (all resolved), shapes (per tensor)}.
ordered_json task_view_json(const task& t);

/// One task's entry in `ptxbench tasks --json` (and the MCP list_tasks tool): name, problem, op_type,
/// workload uuid and axes, baseline, tolerance, trials, targets (with GPU, arch, required families,
/// verification), status, held_out, and the definition file relative to the suite's parent.
ordered_json task_summary_json(const task& t, const suite& s);

}  // namespace ptxbench
