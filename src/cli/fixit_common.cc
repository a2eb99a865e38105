#include "cli/option_checks.h"
#include "cli/fixit_common.h"

#include <cstdio>

#include <fmt/format.h>

#include "agent/provider_factory.h"

namespace ptxbench::cli {

void add_cap_options(CLI::App& cmd, cap_args& a, const std::string& cap_help, bool underfilled) {
  cmd.add_option("--cap-per-definition", a.cap, cap_help)->check(whole_number(0, 1'000'000'000))->default_str("off");
  cmd.add_option("--cap-rule", a.rule,
                 "upstream (largest remainder in proportion to the strata's sizes) or every-stratum (one row per "
                 "stratum first, the rest in proportion)")
      ->check(one_of({"upstream", "every-stratum"}))
      ->capture_default_str();
  cmd.add_option("--seed", a.seed,
                 "keep the rows of a stratum in the order of sha256(seed, id) instead of upstream's stable order "
                 "(turn, trajectory, run)")
      ->check(seed_value())
      ->default_str("off");
  if (underfilled)
    cmd.add_flag("--allow-underfilled-definitions", a.allow_underfilled,
                 "keep every row of a task that has fewer than the cap (upstream stops with an error)");
}

adapt::cap_options to_cap_options(const cap_args& a) {
  adapt::cap_options o;
  o.cap = a.cap;
  o.rule = adapt::parse_cap_rule(a.rule).value_or(adapt::cap_rule::upstream);
  if (!a.seed.empty()) o.seed = std::stoull(a.seed);
  o.allow_underfilled = a.allow_underfilled;
  return o;
}

void add_model_options(CLI::App& cmd, model_args& a) {
  cmd.add_option("--model", a.model, "model name from the models file, replay:FILE, openai:ID, anthropic:ID or gemini:ID")
      ->required();
  cmd.add_option("--models-file", a.models_file, "models file (default: <root>/configs/models.json)");
  cmd.add_option("--base-url", a.base_url, "override the model's API base URL");
  cmd.add_flag("--stream", a.stream, "stream replies (server-sent events), as the models file's \"stream\": true");
}

void add_evaluator_options(CLI::App& cmd, evaluator_args& a) {
  cmd.add_option("--gpus", a.gpus, "evaluation slots (GPUs)")->check(whole_number(1, 256));
  cmd.add_flag("--cpu-only", a.cpu_only, "evaluate only the CPU stages (nothing can be correct then)");
  cmd.add_option("--eval-retries", a.eval_retries, "extra attempts after an infrastructure failure")->check(whole_number(0, 100));
  cmd.add_option("--evaluator", a.evaluator, "pipeline, or fake (tests only)")->group("");
  cmd.add_option("--fake-eval-delay-ms", a.fake_delay_ms, "fake evaluator: milliseconds per evaluation")
      ->check(whole_number(0, 3'600'000))
      ->group("");
}

void append_model_argv(const model_args& a, std::vector<std::string>& argv) {
  if (!a.models_file.empty()) argv.insert(argv.end(), {"--models-file", a.models_file});
  if (!a.base_url.empty()) argv.insert(argv.end(), {"--base-url", a.base_url});
  if (a.stream) argv.push_back("--stream");
}

void append_evaluator_argv(const evaluator_args& a, std::vector<std::string>& argv) {
  if (a.cpu_only) argv.push_back("--cpu-only");
  if (a.evaluator != "pipeline") argv.insert(argv.end(), {"--evaluator", a.evaluator});
}

status clamp_turns_to_replay(const agent::model_spec& m, int& turns) {
  if (m.api != agent::api_kind::replay) return ok();
  int replies = agent::replay_reply_count(m.replay_file);
  if (replies == 0) {
    auto check = agent::make_replay_provider(m.replay_file);
    return make_error(check ? "replay file has no replies" : check.err().message);
  }
  if (replies < turns) {
    std::fprintf(stderr, "ptxbench: replay: %s holds %d replies; running %d turns per trajectory\n",
                 m.replay_file.c_str(), replies, replies);
    turns = replies;
  }
  return ok();
}

std::vector<std::string> command_line(const CLI::App& cmd, std::vector<std::string> prefix) {
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->count() == 0 || opt->get_name() == "--help") continue;
    if (!opt->get_positional()) prefix.push_back(opt->get_name());
    if (opt->get_expected_min() > 0 || opt->get_positional())
      for (const auto& v : opt->results()) prefix.push_back(v);
  }
  return prefix;
}

void print_strata(const ordered_json& per_stratum) {
  for (const auto& [task, strata] : per_stratum.items()) {
    fmt::print("  {}\n", task);
    for (const auto& [name, c] : strata.items())
      fmt::print("    {:<22} {:>5} of {:>5}\n", name, c["selected"].get<int>(), c["candidates"].get<int>());
  }
}

}  // namespace ptxbench::cli
