#pragma once
// `ptxbench run`'s supervision options (docs/supervision.md): --guidance FILE, --repair-notes FILE
// with --retrieval notes|notes+kernel and the BM25 settings, --allow-same-trajectory-notes. Kept
// apart from cmd_run.cc so the run command only forwards them.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "agent/sweep.h"
#include "core/result.h"
#include "suite/task.h"
#include "supervision/run_supervision.h"

namespace ptxbench::cli {

struct supervision_args {
  std::string guidance, notes, retrieval;
  double k1 = 1.5, b = 0.75;
  int top_groups = 3, max_notes = 8;
  bool allow_same_trajectory = false;
  std::vector<CLI::Option*> retrieval_options;  ///< given only with --repair-notes
};

void add_supervision_options(CLI::App* cmd, supervision_args& a);

/// The options as given, for the canonical command recorded in plan.json.
std::vector<std::string> supervision_argv(const supervision_args& a);

/// Reads the guidance and notes files and checks the settings; every failure is bad input (one line).
result<supervision::run_supervision> load_supervision(const supervision_args& a, const suite& s);

/// Hands the supervision to the sweep: plan.json's record, the guided prompts, the per-trajectory hook.
/// Fails when a guidance document names none of the run's tasks (every trajectory would be base).
status apply_supervision(std::shared_ptr<const supervision::run_supervision> sup, const suite* tasks,
                       agent::sweep_options& o, agent::sweep_services& s);

}  // namespace ptxbench::cli
