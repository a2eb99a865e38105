#pragma once
// Trace and Evaluation: the outcome of running a Solution on a Workload. Field names and the status
// enum follow FlashInfer-Bench's flashinfer_bench/data/trace.py (github.com/flashinfer-ai/flashinfer-bench), including its rule for which status carries which block.

#include <map>
#include <optional>
#include <string>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/workload.h"

namespace ptxbench {

enum class eval_status {
  PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, INCORRECT_DTYPE, RUNTIME_ERROR, COMPILE_ERROR, TIMEOUT,
};

std::string_view status_name(eval_status s);
std::optional<eval_status> parse_status(std::string_view name);

struct correctness_info {
  double max_relative_error = 0;  ///< NaN/Inf are written as the strings "NaN", "Infinity"
  double max_absolute_error = 0;
  ordered_json extra;             ///< null or an object (worst index, per-output stats, seeds ...)
};

struct performance_info {
  double latency_ms = 0;
  double reference_latency_ms = 0;
  double speedup_factor = 0;  ///< reference / candidate
};

struct environment_info {
  std::string hardware;
  std::map<std::string, std::string> libs;
};

struct evaluation {
  eval_status status = eval_status::RUNTIME_ERROR;
  environment_info environment;
  std::string timestamp;  ///< ISO 8601
  std::string log;
  std::optional<correctness_info> correctness;  ///< required for PASSED and INCORRECT_NUMERICAL
  std::optional<performance_info> performance;  ///< required for PASSED, forbidden otherwise
};

struct trace {
  std::string definition;
  workload workload_;
  std::optional<std::string> solution;
  std::optional<evaluation> eval;
};

/// Checks the status rule: PASSED needs correctness and performance; INCORRECT_NUMERICAL needs
/// correctness and forbids performance; every other status forbids both.
status check_evaluation_blocks(const evaluation& e, const std::string& path = "evaluation");

result<evaluation> evaluation_from_json(const ordered_json& j, const std::string& path = "evaluation");
ordered_json to_json(const evaluation& e);
result<trace> trace_from_json(const ordered_json& j, const std::string& path = "trace");
ordered_json to_json(const trace& t);

/// JSON for a float that may be NaN or infinite (as strings, like upstream).
ordered_json finite_or_string(double v);

/// Returns the current UTC time as "2026-11-29T07:46:51Z".
std::string utc_timestamp();

}  // namespace ptxbench
