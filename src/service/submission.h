#pragma once
// What a client submits to POST /evaluate, /sanitize or /profile, read strictly: upstream
// FlashInfer-Bench's request fields (solution, workload_uuids, and per endpoint the protocol
// options) plus PTXBench's own (target, check_only, cache, request_id). Every problem is one line
// naming the field, answered with HTTP 400; nothing in a request is ever used as a path.

#include <string>
#include <string_view>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "queue/job.h"
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
};

/// Upstream's Solution.hash(): SHA-1 over the definition name, language, entry point, binding ("" when
/// none), each dependency, and each source's path and content, in order, with no separators.
std::string upstream_solution_hash(const solution& s);

/// name + "_" + the first 8 hex digits of upstream_solution_hash (upstream's with_unique_name).
std::string normalized_solution_name(const solution& s);

/// Reads a submission for `kind` from a request body. `default_target` is the server's target when
/// the request names none. Errors are the one-line 400 message (an unknown definition reads
/// "Definition not found: NAME", as upstream's).
result<submission> parse_submission(std::string_view body, queue::job_kind kind, const suite& tasks,
                                    const std::string& default_target, const submission_limits& limits = {});

/// The protocol options the service honours, read back from a job's protocol JSON.
struct protocol_options {
  std::optional<double> atol, rtol;
  std::optional<double> timeout_s;              ///< per call (evaluate), per sanitizer run, per profile
  std::vector<std::string> sanitizer_types;     ///< sanitize: memcheck, racecheck, synccheck, initcheck
  bool check_only = false;                      ///< PTXBench: only the CPU stages (gate, build, SASS)
};
result<protocol_options> read_protocol(const std::string& protocol_json);

}  // namespace ptxbench::service
