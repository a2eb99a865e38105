#pragma once
// `ptxbench fixit reason` and `ptxbench kernelgen reason`: a rationale per row of a pairs or kernels
// directory, from any model (the student itself included, as in the paper's s6). Resumable like
// `ptxbench run`: every attempt's outcome is written atomically to OUT/rows/<id>.json as soon as
// it is known, so after a kill the same command continues with nothing lost (finished rows and
// counted attempts stay) and nothing repeated (a finished row is never asked for again; only a call
// that was in flight when the process died is made again). When every row is done or has used its
// attempts, OUT/reasoning.jsonl and OUT/manifest.json are written.

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "adapt/rationale.h"
#include "agent/model_config.h"
#include "agent/provider.h"
#include "core/exit_status.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_reasoning_format = "ptxbench.reasoning/1";

struct reason_source {
  std::string kind;      ///< "fixit" (a pairs directory) or "kernelgen" (a kernels directory)
  std::string dir;       ///< absolute
  std::string sha256;    ///< of pairs.jsonl / kernels.jsonl
  std::vector<reason_item> items;
};

/// Reads a pairs or kernels directory (every file verified) into the teacher's items.
result<reason_source> load_reason_source(const std::filesystem::path& dir);

/// "fixit" (a pairs directory) or "kernelgen" (a kernels directory), from its manifest.
result<std::string> reason_source_kind(const std::filesystem::path& dir);
/// An error naming both kinds when dir is not of `kind` ("" accepts either).
status check_reason_source(const std::filesystem::path& dir, const std::string& kind);

/// Sets the teacher's sampling in the model's request as its API spells it (OpenAI and Anthropic:
/// temperature, top_p; Gemini: generationConfig.temperature, topP; replay: nothing).
void apply_teacher_sampling(agent::model_spec& model, const teacher_sampling& sampling);

struct reason_options {
  std::filesystem::path source_dir, out_dir;
  std::string kind;  ///< "fixit" or "kernelgen": the command's source kind (another kind is refused); "" = either
  rationale_rules rules;
  teacher_sampling sampling;  ///< recorded in the plan; applied to the model by the caller (apply_teacher_sampling)
  int parallel = 4;
  std::vector<std::string> argv;
  bool quiet = false;
};

struct reason_services {
  agent::provider* teacher = nullptr;          ///< thread-safe
  const agent::model_spec* model = nullptr;
  const std::atomic<bool>* interrupt = nullptr;
  std::FILE* log = stderr;
};

struct reason_outcome {
  exit_status status = exit_status::ok;
  std::string message;           ///< one line when the run stopped early
  int done = 0, failed = 0, pending = 0;
  ordered_json manifest;         ///< when complete
};

/// Runs (or resumes) the reasoning. Fails only for bad input (source, an OUT made for another run).
result<reason_outcome> run_reasoning(const reason_options& o, reason_services& s);

struct reasoning_row {
  std::string id, rationale, teacher;
  int attempts = 0;
};

struct reasoning_set {
  std::string kind, source_dir, source_sha256, teacher, dir;
  ordered_json manifest;
  std::map<std::string, reasoning_row> rows;  ///< accepted rationales by row id
  std::vector<std::string> failed;            ///< rows whose attempts were used up
};

/// Reads a finished reasoning directory (manifest.json and reasoning.jsonl, hashes checked).
result<reasoning_set> load_reasoning(const std::filesystem::path& dir);

}  // namespace ptxbench::adapt
