#pragma once
// What a client submits to POST /evaluate, /sanitize, /profile or /debug, read strictly: upstream
// FlashInfer-Bench's request fields (solution, workload_uuids, and per endpoint its options) plus
// PTXBench's own (target, check_only, cache, request_id). A request that does not match the schema
// is refused with upstream's 422 field list, one that cannot be served with a one-line 400
// (service/request_problem.h); nothing in a request is ever used as a path.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "queue/job.h"
#include "service/request_problem.h"
#include "suite/solution.h"
#include "suite/task.h"

namespace ptxbench::service {

struct submission_limits {
  std::size_t max_source_bytes = 512u << 10;  ///< all sources together (the source gate's limit)
  std::size_t max_sources = 64;
};

struct submission {
  queue::job_spec spec;                ///< kind, task, target, the renamed Solution JSON, workloads, protocol
  solution candidate;                    ///< parsed, with the normalized name
  std::string normalized_solution_name;  ///< <name>_<first 8 hex of upstream's SHA-1 content hash>
  std::string request_id;                ///< PTXBench: idempotency key ("" = none)
  bool bypass_cache = false;             ///< cache: "bypass" or upstream's baseline_cache_mode: "bypass"
  /// Set when workload_uuids names no workload of the definition: upstream accepts such a request
  /// and fails the task with this error, so the service does the same (a failed job, at once).
  std::string no_workloads;
};

/// parse_submission's answer: the submission, or why it is refused.
struct parsed_submission {
  std::optional<submission> value;
  request_refusal refusal;  ///< when there is no value
  explicit operator bool() const { return value.has_value(); }
  submission* operator->() { return &*value; }
  const submission* operator->() const { return &*value; }
  submission& operator*() { return *value; }
};

/// Upstream's Solution.hash(): SHA-1 over the definition name, language, entry point, binding ("" when
/// none), each dependency, and each source's path and content, in order, with no separators.
std::string upstream_solution_hash(const solution& s);

/// name + "_" + the first 8 hex digits of upstream_solution_hash (upstream's with_unique_name).
std::string normalized_solution_name(const solution& s);

/// The target a request that names none is evaluated for, asked only when needed; an error is the
/// one-line 400 ("no GPU worker serves this queue yet ...").
using default_target_fn = std::function<result<std::string>()>;

/// Reads a submission for `kind` from a request body. An unknown definition is 400 "Definition not
/// found: NAME", as upstream's.
parsed_submission parse_submission(std::string_view body, queue::job_kind kind, const suite& tasks,
                                   const default_target_fn& default_target, const submission_limits& limits = {});
parsed_submission parse_submission(std::string_view body, queue::job_kind kind, const suite& tasks,
                                   const std::string& default_target, const submission_limits& limits = {});

/// The protocol options the service honours, read back from a job's protocol JSON.
struct protocol_options {
  std::optional<double> atol, rtol;
  std::optional<double> timeout_s;              ///< per call (evaluate), per sanitizer run (sanitize, debug), per profile
  std::optional<double> call_timeout_s;         ///< debug: upstream's evaluation_timeout (per call)
  std::vector<std::string> sanitizer_types;     ///< sanitize, debug: memcheck, racecheck, synccheck, initcheck
  bool check_only = false;                      ///< PTXBench: only the CPU stages (gate, build, SASS)
  bool profile_baseline = true;                 ///< false: the trace reports no reference latency (upstream's 0)
  int source_context_lines = 4;                 ///< debug: source lines quoted around a fault
};
result<protocol_options> read_protocol(const std::string& protocol_json);

}  // namespace ptxbench::service
