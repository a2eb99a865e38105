#pragma once
// What the commands that drive a model share (`run`, `fixit repair`, `fixit reason`, `kernelgen
// reason`): resolving --model against the models file and the environment (keys are read here, at
// the edge, and nowhere else), the evaluator (the pipeline, or the test-only fake), the knowledge-pack
// prompts, and Ctrl-C.

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapt/reason.h"
#include "agent/eval_queue.h"
#include "agent/model_config.h"
#include "agent/prompt.h"
#include "agent/sweep.h"
#include "cli/context.h"
#include "core/result.h"
#include "suite/task.h"

namespace ptxbench::cli {

struct model_choice {
  std::string model;        ///< --model
  std::string models_file;  ///< --models-file (empty: <root>/configs/models.json when it exists)
  std::string base_url;     ///< --base-url
  bool stream = false;      ///< --stream: SSE streaming regardless of the models file
};

struct resolved_model {
  agent::model_spec spec;
  std::string key;  ///< never written anywhere
};

/// Resolves the model and reads its key from the environment. Errors are one line.
result<resolved_model> resolve_model_choice(const model_choice& c, const context& ctx);

/// The provider that calls `m` (HTTP, or a replay file); `cancel` (the interrupt flag) stops its
/// retries and transfers.
result<std::unique_ptr<agent::provider>> model_provider(const resolved_model& m, const std::atomic<bool>* cancel);

/// A model-driven stage's model (a teacher, the editor): resolved, with the teacher's sampling applied
/// when given, and the provider that calls it.
struct sampled_model {
  resolved_model resolved;
  std::unique_ptr<agent::provider> provider;
};
result<sampled_model> sampled_model_provider(const model_choice& c, const std::optional<adapt::teacher_sampling>& sampling,
                                             const context& ctx, const std::atomic<bool>* cancel);

/// The evaluator per slot: "pipeline" (slot i evaluates on GPU i), a PTXBench service URL
/// http://HOST:PORT (evaluations queued there; token_file: its bearer token), or "fake" (tests only).
result<agent::evaluator_factory> evaluator_factory_for(const std::string& evaluator, int fake_delay_ms,
                                                       const context& ctx, const std::string& token_file = "");

/// True for an --evaluator value that names a service (http://...).
bool is_service_url(const std::string& evaluator);

/// Prompts from the knowledge packs for candidates in `language` ("cuda": the target's pack;
/// "triton": packs/triton); "builtin-minimal" is the pack-free built-in prompt (CUDA only).
result<std::pair<agent::prompt_builder, agent::variant_resolver>> pack_prompts(const context& ctx, const suite* tasks,
                                                                              const std::string& language = "cuda");

/// Fails when a GPU run of `target` needs a GPU this machine does not have (checked before any call).
status check_gpu_for(const std::string& evaluator, bool run_on_gpu, const target_info* target);

/// Splits comma-separated list options ("a,b" "c" → a, b, c).
std::vector<std::string> split_list(const std::vector<std::string>& items);

/// Reads one environment variable (nullopt when unset or empty).
std::optional<std::string> env_value(const std::string& name);

/// Installs the SIGINT/SIGTERM handler (a second Ctrl-C exits at once) and returns the flag it raises.
const std::atomic<bool>* install_interrupt_handler();

}  // namespace ptxbench::cli
