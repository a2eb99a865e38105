#include "cli/agent_setup.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "agent/provider_factory.h"
#include "eval/fake_evaluator.h"
#include "cli/gpu_presence.h"
#include "cli/prompt_source.h"
#include "cli/service_options.h"
#include "eval/pipeline.h"
#include "prompts/prompt_renderer.h"
#include "prompts/variant_manifest.h"
#include "service/remote_evaluator.h"

namespace ptxbench::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int) {
  if (g_interrupted.exchange(true)) std::_Exit(130);  // a second Ctrl-C does not wait
}

}  // namespace

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::optional<std::string> env_value(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v && *v ? std::optional<std::string>(v) : std::nullopt;
}

const std::atomic<bool>* install_interrupt_handler() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  return &g_interrupted;
}

result<resolved_model> resolve_model_choice(const model_choice& c, const context& ctx) {
  agent::model_catalog catalog;
  auto models_path = c.models_file.empty() ? ctx.root / "configs" / "models.json" : std::filesystem::path(c.models_file);
  if (std::filesystem::exists(models_path) || !c.models_file.empty()) {
    auto loaded = agent::load_model_catalog(models_path);
    if (!loaded) return loaded.err();
    catalog = std::move(*loaded);
  }
  auto model = agent::resolve_model(c.model, catalog, c.base_url);
  if (!model) return model.err();
  auto key = agent::resolve_environment(*model, env_value, !c.base_url.empty());
  if (!key) return key.err();
  if (c.stream) model->stream = true;
  return resolved_model{std::move(*model), std::move(*key)};
}

result<std::unique_ptr<agent::provider>> model_provider(const resolved_model& m, const std::atomic<bool>* cancel) {
  agent::provider_options popts;
  popts.cancel = cancel;
  return agent::make_provider(m.spec, m.key, popts);
}

result<sampled_model> sampled_model_provider(const model_choice& c, const std::optional<adapt::teacher_sampling>& sampling,
                                             const context& ctx, const std::atomic<bool>* cancel) {
  auto resolved = resolve_model_choice(c, ctx);
  if (!resolved) return resolved.err();
  if (sampling) adapt::apply_teacher_sampling(resolved->spec, *sampling);
  auto llm = model_provider(*resolved, cancel);
  if (!llm) return llm.err();
  return sampled_model{std::move(*resolved), std::move(*llm)};
}

bool is_service_url(const std::string& evaluator) { return evaluator.rfind("http://", 0) == 0; }

result<agent::evaluator_factory> evaluator_factory_for(const std::string& evaluator, int fake_delay_ms,
                                                       const context& ctx, const std::string& token_file) {
  if (evaluator == "fake") {
    return agent::evaluator_factory([fake_delay_ms](int) -> result<std::unique_ptr<ptxbench::evaluator>> {
      return eval::make_fake_evaluator(fake_delay_ms);
    });
  }
  if (evaluator == "pipeline") {
    eval::pipeline_config base;
    base.root = ctx.root;
    base.cache_dir = ctx.cache_dir;
    base.cuda_root = ctx.cuda_root;
    return agent::evaluator_factory([base](int slot) -> result<std::unique_ptr<ptxbench::evaluator>> {
      eval::pipeline_config config = base;
      config.gpu.device = slot;
      return eval::make_pipeline_evaluator(config);
    });
  }
  if (is_service_url(evaluator)) {
    // A PTXBench service: evaluations are queued there; this machine needs no GPU.
    service::client_settings cs;
    cs.url = evaluator;
    auto token = client_token(token_file);
    if (!token) return token.err();
    cs.token = *token;
    if (auto probe = service::service_client::create(cs); !probe) return probe.err();
    cs.cancel = &g_interrupted;
    cs.on_retry = [](const std::string& line) { std::fprintf(stderr, "ptxbench: evaluator: %s\n", line.c_str()); };
    return agent::evaluator_factory([cs](int) -> result<std::unique_ptr<ptxbench::evaluator>> {
      return service::make_remote_evaluator(cs, {});
    });
  }
  return make_error(fmt::format(
      "--evaluator {}: expected 'pipeline', a service URL http://HOST:PORT (or 'fake', for tests)", evaluator));
}

result<std::pair<agent::prompt_builder, agent::variant_resolver>> pack_prompts(const context& ctx, const suite* tasks,
                                                                              const std::string& language) {
  auto manifest = prompts::load_variant_manifest(ctx.packs_dir());
  if (!manifest) return manifest.err();
  auto shared = std::make_shared<prompts::variant_manifest>(std::move(*manifest));
  std::filesystem::path packs_dir = ctx.packs_dir();
  // The one rule `ptxbench prompt` uses too (cli/prompt_source.h), so it prints what is sent.
  agent::prompt_builder build = [tasks, packs_dir, language](const task& t, const target_info& target,
                                                             const std::string& variant) -> result<agent::prompt_pair> {
    auto r = render_task_prompt(*tasks, t, variant, target, packs_dir, language);
    if (!r) return r.err();
    return agent::prompt_pair{r->system, r->user};
  };
  agent::variant_resolver resolve = [shared, language](const task& t, const target_info& target,
                                                       const std::string& spec) -> result<std::string> {
    return resolve_variant_name(*shared, t, target, spec, language);
  };
  return std::make_pair(build, resolve);
}

status check_gpu_for(const std::string& evaluator, bool run_on_gpu, const target_info* target) {
  if (evaluator != "pipeline" || !run_on_gpu || !target || target->verification != "runtime") return ok();
  if (auto why = missing_gpu())
    return make_error(fmt::format("{} to evaluate {} kernels on; pass --cpu-only to evaluate only the CPU stages "
                                  "(gates, build, static SASS)",
                                  *why, target->name));
  return ok();
}

}  // namespace ptxbench::cli
