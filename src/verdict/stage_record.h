#pragma once
// The pipeline's stages and what each one recorded. The stage names are the same in code, JSON,
// logs and docs.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_check.h"

namespace ptxbench {

/// Pipeline stages, in order.
enum class stage_id { source_gate, build, link_gate, static_sass, sanitize, correctness, timing, dynamic_check };
std::string_view stage_name(stage_id s);
std::optional<stage_id> parse_stage(std::string_view name);

enum class stage_outcome {
  passed,    ///< the stage ran and the candidate passed it
  failed,    ///< the stage ran and the candidate failed it (the verdict's deciding stage)
  skipped,   ///< not run because an earlier stage failed, or not requested
  deferred,  ///< could not run here (tool or GPU missing); says where it would run
  error,     ///< the stage itself broke (infrastructure), nothing is known about the candidate
};
std::string_view stage_outcome_name(stage_outcome o);
std::optional<stage_outcome> parse_stage_outcome(std::string_view name);

struct stage_record {
  stage_id id = stage_id::source_gate;
  stage_outcome outcome = stage_outcome::skipped;
  double seconds = 0;
  std::string summary;    ///< one line: why it passed or failed ("no GMMA/TMA in kernel gemm_kernel")
  ordered_json details;   ///< stage-specific data (object or null)
};

/// The record of stage `id`, or nullptr when it has none.
const stage_record* find_stage(const std::vector<stage_record>& stages, stage_id id);

/// Appends a "skipped" record for every stage after `decided`, up to and including `last`, that has
/// no record yet: the stages an earlier decision kept from running.
void mark_skipped_after(std::vector<stage_record>& stages, stage_id decided, stage_id last);

}  // namespace ptxbench
