#pragma once
// Options and printing shared by the adaptation commands (fixit, kernelgen, sft).

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "adapt/stratified_cap.h"
#include "agent/model_config.h"
#include "cli/agent_setup.h"
#include "core/json_check.h"

namespace ptxbench::cli {

struct model_args {
  std::string model, models_file, base_url;
  bool stream = false;
  [[nodiscard]] model_choice choice() const { return {model, models_file, base_url, stream}; }
};

struct evaluator_args {
  std::string evaluator = "pipeline";
  int fake_delay_ms = 0, gpus = 1, eval_retries = 1;
  bool cpu_only = false;
};

/// The per-definition cap's options (mine, pairs, kernelgen collect).
struct cap_args {
  int cap = -1;
  std::string rule = "upstream";
  std::string seed;               ///< empty: upstream's stable order inside a stratum
  bool allow_underfilled = false;
};

/// --cap-per-definition, --cap-rule, --seed and, where `underfilled` is set, --allow-underfilled-definitions.
void add_cap_options(CLI::App& cmd, cap_args& a, const std::string& cap_help, bool underfilled);
/// The options as the adaptation stages take them (the values were checked by the validators).
adapt::cap_options to_cap_options(const cap_args& a);

/// --model (required), --models-file, --base-url, --stream.
void add_model_options(CLI::App& cmd, model_args& a);
/// --gpus, --cpu-only, --eval-retries and the hidden test-only --evaluator, --fake-eval-delay-ms.
void add_evaluator_options(CLI::App& cmd, evaluator_args& a);
void append_model_argv(const model_args& a, std::vector<std::string>& argv);
void append_evaluator_argv(const evaluator_args& a, std::vector<std::string>& argv);

/// A replay model holds a fixed number of replies: fewer turns than asked are run (as `ptxbench run`
/// does), saying so; a file without replies is an error.
status clamp_turns_to_replay(const agent::model_spec& m, int& turns);

/// The command as parsed (prefix, then every given option with its values), for manifests.
std::vector<std::string> command_line(const CLI::App& cmd, std::vector<std::string> prefix);

/// Prints a per-stratum table ({task: {stratum: {candidates, selected}}}) on stdout.
void print_strata(const ordered_json& per_stratum);

}  // namespace ptxbench::cli
