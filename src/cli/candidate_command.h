#pragma once
// What `check` and `eval` share: reading candidates (a .cu file or a Solution JSON), running the
// pipeline evaluator on each, printing verdicts and mapping them to an exit status.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.h"
#include "verdict/gpu_options.h"

namespace ptxbench::cli {

struct candidate_options {
  std::vector<std::string> files;  ///< .cu kernels or Solution .json files
  std::string task;
  std::string target;              ///< "" = the local GPU's target (cli/target_choice.h)
  bool json = false;
  std::string out;                 ///< also write the JSON here
  bool out_given = false;          ///< --out was on the command line (an empty --out is refused)
  double compile_timeout_s = 180;
  gpu_options gpu;
  std::string remote;      ///< evaluate through a service at this URL instead of locally
  std::string token_file;  ///< its bearer token
  bool bypass_cache = false;
};

/// Adds the options shared by check and eval to a subcommand.
void add_candidate_options(CLI::App& cmd, candidate_options& opts);

/// Evaluates every candidate in opts (GPU stages when run_on_gpu) and prints the verdicts.
exit_status run_candidates(const context& ctx, const candidate_options& opts, bool run_on_gpu);

}  // namespace ptxbench::cli
