#pragma once
// The verdict as JSON ("format": "ptxbench.verdict/1"), and its parts, which the harness protocol
// reuses so both sides of the trust boundary serialise each record the same way.

#include "core/json_check.h"
#include "core/result.h"
#include "verdict/verdict.h"

namespace ptxbench {

ordered_json to_json(const verdict& v);
result<verdict> verdict_from_json(const ordered_json& j);

/// The decision's fields, written flat into `j` (outcome, status, deciding_stage, message, log).
void write_decision(const decision& d, ordered_json& j);
/// Reads them back; an unknown outcome name is an error.
result<decision> read_decision(const ordered_json& j);

ordered_json to_json(const std::vector<stage_record>& stages);
std::vector<stage_record> stages_from_json(const ordered_json& j);

ordered_json to_json(const correctness_summary& c);
correctness_summary correctness_from_json(const ordered_json& j);

ordered_json to_json(const timing_summary& t);
timing_summary timing_from_json(const ordered_json& j);

ordered_json to_json(const measurement_lease& m);
measurement_lease measurement_from_json(const ordered_json& j);

/// The runtime counts' fields, written flat into `j` (dynamic_counts, dynamic_per_kernel, ...,
/// dynamic_coverage_evidence).
void write_runtime_counts(const runtime_counts& r, ordered_json& j);
runtime_counts read_runtime_counts(const ordered_json& j);

/// The work-coverage evidence of the runtime check (strict: a malformed record is an error).
ordered_json to_json(const coverage_evidence& e);
result<coverage_evidence> coverage_evidence_from_json(const ordered_json& j);

}  // namespace ptxbench
